"""
Judging: pools, an LLM judge, and whether the judgements rank systems alike
===========================================================================

Relevance labels are expensive.  A common setup: people judged the top of
one system; new systems retrieve documents nobody judged; an LLM judges the
rest.  :mod:`skrank.judging` covers the steps: :func:`skrank.pool` lists the
unjudged (query, document) pairs the runs retrieve, :meth:`Pool.judge
<skrank.judging.Pool.judge>` grades them with a function (a form, an LLM
prompt), :func:`~skrank.judging.merge_qrels` merges the sources with their
provenance, :func:`~skrank.judging.agreement` measures how well the LLM agrees
with people, and :func:`~skrank.judging.ranking_agreement` whether two sets of
judgements rank the systems in the same order.  The guide is
``docs/judging.md``.
"""

# %%
# Systems and a hidden truth
# --------------------------
# 30 queries, 60 candidate documents each, true grades 0, 1 or 2 that we only
# use to simulate the judges.  Five systems score the documents: the true grade
# plus noise, less noise for a better system.
import matplotlib.pyplot as plt
import numpy as np

import skrank
from skrank.judging import agreement, merge_qrels, ranking_agreement

rng = np.random.default_rng(0)
queries = [f"q{i:02d}" for i in range(30)]
docs = [f"d{k:02d}" for k in range(60)]
truth = {q: {d: int(g) for d, g in zip(docs, rng.choice(3, len(docs), p=[0.8, 0.12, 0.08]))}
         for q in queries}


def system(noise):
    return {q: {d: truth[q][d] + noise * float(rng.normal()) for d in docs} for q in queries}


noise = {"bm25": 1.6, "splade": 1.3, "dense": 1.1, "hybrid": 0.9, "reranker": 0.7}
runs = {name: system(level) for name, level in noise.items()}

# %%
# People judged the top 5 of bm25
# -------------------------------
# Judgements of one system's top documents are biased towards that system:
# the documents the other systems find are unjudged, and count as not relevant.
human = {}
for q in queries:
    top5 = sorted(runs["bm25"][q], key=runs["bm25"][q].get, reverse=True)[:5]
    human[q] = {d: truth[q][d] for d in top5}

# %%
# The pool: what every system retrieves and nobody judged
# -------------------------------------------------------
# ``skrank.pool`` takes each run's top 10 of each query and leaves out the
# pairs the qrels already judge.
pool = skrank.pool(runs, depth=10, qrels=human)
print(pool)
print("pairs to judge per query:", round(len(pool.qid) / len(queries), 1))


# %%
# An LLM as the judge
# -------------------
# A simulated LLM: right most of the time, with a systematic mistake (it
# over-grades one document in four by one grade) and some random errors.
random_error = rng.random((len(queries), len(docs))) < 0.1   # 10% of pairs ...
random_grade = rng.integers(0, 3, (len(queries), len(docs)))  # ... get a random grade


def llm_judge(query_id, doc_id):
    i, k = int(query_id[1:]), int(doc_id[1:])
    grade = truth[query_id][doc_id]
    if k % 4 == 0:
        grade = min(grade + 1, 2)
    if random_error[i, k]:
        grade = int(random_grade[i, k])
    return grade


judged = pool.judge(llm_judge)
llm_pool = judged.to_qrels()

# %%
# How well does the LLM agree with people?
# ----------------------------------------
# Before trusting it, the LLM also grades the pairs people judged; Cohen's
# kappa (quadratic weights: a grade off by two is a worse error) and the
# confusion matrix compare the two.
llm_on_human = {q: {d: llm_judge(q, d) for d in human[q]} for q in queries}
agree = agreement(human, llm_on_human, weights="quadratic")
print(f"weighted kappa {agree.kappa:.3f} on {agree.n_common} pairs")

fig, ax = plt.subplots(figsize=(4, 3.5))
image = ax.imshow(agree.confusion, cmap="Blues")
for (i, j), count in np.ndenumerate(agree.confusion):
    ax.text(j, i, int(count), ha="center", va="center",
            color="white" if count > agree.confusion.max() / 2 else "black")
ax.set_xticks(range(len(agree.labels)), agree.labels)
ax.set_yticks(range(len(agree.labels)), agree.labels)
ax.set_xlabel("LLM's grade")
ax.set_ylabel("people's grade")
ax.set_title(f"People vs LLM (weighted kappa {agree.kappa:.2f})")
fig.colorbar(image, ax=ax)
fig.tight_layout()

# %%
# People's judgements and the LLM's, merged
# -----------------------------------------
# :func:`~skrank.judging.merge_qrels` keeps each grade's source; here the two
# sources judged different pairs, so no pair is in conflict.
sources = merge_qrels({"human": human, "llm": llm_pool})
print(sources.conflicts(), "pairs graded differently")
combined = sources.to_qrels()

# %%
# Do the judgements rank the systems as the truth does?
# -----------------------------------------------------
# Each system's nDCG@10 under the true grades against its nDCG@10 under the
# judgements: with people's shallow judgements of bm25 alone, bm25 looks better
# than it is; with the pool judged by the LLM, the order of the systems is the
# true one again (Kendall's tau and tau-AP, and the pairs of systems that swap).
fig, ax = plt.subplots(figsize=(5.5, 4))
for label, qrels, marker in (("people, bm25's top 5", human, "o"),
                             ("people + LLM on the pool", combined, "s")):
    ra = ranking_agreement(runs, truth, qrels, metric="ndcg@10")
    print(f"{label:26} tau {ra.kendall_tau:.2f}  tau-AP {ra.tau_ap:.2f}  swapped {ra.swapped}")
    x = [ra.mean_a[s] for s in ra.systems]
    y = [ra.mean_b[s] for s in ra.systems]
    ax.scatter(x, y, marker=marker, label=f"{label} (tau {ra.kendall_tau:.2f})")
    for s, xs, ys in zip(ra.systems, x, y):
        ax.annotate(s, (xs, ys), textcoords="offset points", xytext=(4, 3), fontsize=8)
ax.set_xlabel("nDCG@10 under the true grades")
ax.set_ylabel("nDCG@10 under the judgements")
ax.set_title("Each system's score under two sets of judgements")
ax.legend(fontsize=8)
fig.tight_layout()
