"""
Retrieval for RAG: ranked lists of chunks
=========================================

A retriever returns, for each question, an ordered list of chunk ids; the
evaluation set says which chunks answer it.  ``skrank.evaluate`` takes both as
dicts: ``qrels={question: relevant chunks}`` and ``run={question: ranked
list}``.  The order of a list is the ranking (no scores, no ties); a relevant
chunk that was not retrieved still counts in recall and in the ideal DCG.
"""

# %%
# Two retrievers on 200 questions
# -------------------------------
# Each question has 1 to 4 relevant chunks among 5,000.  The "dense" retriever
# puts a relevant chunk in its top 20 more often and higher than the "sparse"
# one; both retrieve 20 chunks per question.
import numpy as np

import skrank
from skrank.plot import MetricAtKDisplay, PerQueryDisplay

rng = np.random.default_rng(0)
n_chunks, depth = 5000, 20


def retrieve(relevant, skill):
    """A ranked list of `depth` chunk ids: each relevant chunk is retrieved with
    probability `skill`, at a rank that is better when `skill` is higher."""
    found = [c for c in relevant if rng.random() < skill]
    others = [f"c{i}" for i in rng.choice(n_chunks, size=depth, replace=False)]
    ranked = [c for c in others if c not in relevant][:depth - len(found)]
    for chunk in found:
        position = min(int(rng.exponential(1 / skill ** 2)), len(ranked))
        ranked.insert(position, chunk)
    return ranked


qrels = {}
for q in range(200):
    n_relevant = rng.integers(1, 5)
    qrels[f"question {q}"] = {f"c{i}" for i in rng.choice(n_chunks, n_relevant, replace=False)}
runs = {"dense": {q: retrieve(rel, 0.8) for q, rel in qrels.items()},
        "sparse": {q: retrieve(rel, 0.6) for q, rel in qrels.items()}}

# %%
# The usual RAG metrics
# ---------------------
# ``Recall@k`` (did the chunks reach the prompt?), ``hit rate@k`` (did at least one?),
# MRR and ``nDCG@10``.
metrics = ["recall@5", "recall@20", "hit_rate@1", "hit_rate@5", "mrr", "ndcg@10"]
results = {name: skrank.evaluate(qrels=qrels, run=run, metrics=metrics)
           for name, run in runs.items()}
for name, res in results.items():
    print(name, {m: round(v, 3) for m, v in res.mean.items()})
print(skrank.compare(results, metrics=["recall@5", "mrr"], random_state=0).to_markdown())

# %%
# ``Recall@k`` for k = 1..20
# --------------------------
# The values come from :func:`skrank.evaluate` on the dicts; the display is
# built from them directly (scikit-learn's Display convention).
ks = np.arange(1, depth + 1)
names = [f"recall@{k}" for k in ks]
values = {}
for name, run in runs.items():
    mean = skrank.evaluate(qrels=qrels, run=run, metrics=names).mean
    values[name] = np.array([mean[n] for n in names])
MetricAtKDisplay(k=ks, values=values, metric="recall").plot(title="Recall@k of two retrievers")

# %%
# Question by question
# --------------------
# The same ranked lists as flat rows: each retrieved chunk gets the score
# ``-rank`` and its label from the qrels.  (A relevant chunk that was not
# retrieved is not a row here, so this plots ``nDCG@10`` over the retrieved lists;
# ``skrank.evaluate(qrels=..., run=...)`` above counts it.)
def flat(run):
    qid, y, score = [], [], []
    for q, ranked in run.items():
        qid += [q] * len(ranked)
        y += [float(c in qrels[q]) for c in ranked]
        score += [-float(r) for r in range(len(ranked))]
    return np.array(qid), np.array(y), np.array(score)


qid_d, y_d, s_d = flat(runs["dense"])
PerQueryDisplay.from_predictions(y_d, s_d, qid=qid_d, metric="ndcg@10", name="dense")
