"""
Diversity: rewarding rankings that cover every intent
=====================================================

An ambiguous query (*jaguar*: the animal, the car, the operating system) has
several intents, or subtopics.  A ranking that repeats the most common intent
can score well on nDCG and still fail every user with another intent.  The
metrics of :mod:`skrank.diversity` (alpha-nDCG, ERR-IA, NRBP, intent-aware
precision, subtopic recall) reward covering new subtopics early, with the
conventions of TREC's ``ndeval``.  The guide is ``docs/diversity.md``.
"""

# %%
# Documents that cover subtopics
# ------------------------------
# 100 queries with 4 subtopics each and 40 candidate documents.  Each document
# covers one subtopic (sometimes two, or none); subtopic 0 is the most common
# intent.  The labels are a matrix of shape ``(n_rows, n_subtopics)``: one row
# per document, one column per subtopic.
import numpy as np

import skrank
from skrank import diversity
from skrank.plot import MetricAtKDisplay

rng = np.random.default_rng(0)
n_queries, n_docs, n_subtopics = 100, 40, 4
qid = np.repeat(np.arange(n_queries), n_docs)
main = rng.choice(n_subtopics, size=qid.shape[0], p=[0.55, 0.2, 0.15, 0.1])
y_true = np.zeros((qid.shape[0], n_subtopics), dtype=int)
y_true[np.arange(qid.shape[0]), main] = 1
second = rng.integers(0, n_subtopics, qid.shape[0])
y_true[np.arange(qid.shape[0]), second] |= rng.random(qid.shape[0]) < 0.15
y_true[rng.random(qid.shape[0]) < 0.7] = 0          # off-topic documents

# %%
# Two rankers
# -----------
# "popular first" finds the relevant documents well but prefers the dominant
# intent; "diversified" is as good at finding relevant documents, and gives
# each document a bonus for each rarer subtopic it covers.
relevant = y_true.any(axis=1)
noise = rng.normal(scale=1.0, size=qid.shape[0])
popular_first = 2.0 * relevant + 1.0 * y_true[:, 0] + noise
diversified = 2.0 * relevant + 0.8 * y_true[:, 1:].sum(axis=1) + noise
systems = {"popular first": popular_first, "diversified": diversified}

# %%
# Relevance alone does not tell them apart
# ----------------------------------------
# On binary relevance (a document is relevant if it covers any subtopic), the two
# rankers are close, "popular first" even slightly ahead on nDCG@10.  The
# diversity metrics see that it keeps answering the same intent.
for name, score in systems.items():
    ndcg = skrank.ndcg_score(relevant.astype(int), score, qid=qid, k=10)
    a_ndcg = diversity.alpha_ndcg_score(y_true, score, qid=qid, k=10)
    err_ia = diversity.err_ia_score(y_true, score, qid=qid, k=10)
    s_recall = diversity.subtopic_recall_score(y_true, score, qid=qid, k=10)
    print(f"{name:14} nDCG@10 {ndcg:.3f}  alpha-nDCG@10 {a_ndcg:.3f}  "
          f"ERR-IA@10 {err_ia:.3f}  S-recall@10 {s_recall:.3f}")

# %%
# alpha-nDCG@k and subtopic recall at every cutoff
# ------------------------------------------------
# :func:`skrank.diversity.per_query_scores` gives any metric by name, one value
# per query; the means at k = 1..20 are drawn with :class:`skrank.plot.MetricAtKDisplay`
# (its constructor takes precomputed values).
ks = np.arange(1, 21)


def at_each_k(metric, score):
    return np.array([diversity.per_query_scores(f"{metric}@{k}", y_true, score,
                                                qid=qid).score.mean() for k in ks])


MetricAtKDisplay(k=ks, values={name: at_each_k("alpha_ndcg", score)
                               for name, score in systems.items()},
                 metric="alpha_ndcg").plot(title="alpha-nDCG@k (alpha = 0.5)")

# %%
MetricAtKDisplay(k=ks, values={name: at_each_k("strec", score)
                               for name, score in systems.items()},
                 metric="strec").plot(title="Subtopic recall@k")

# %%
# How much redundancy costs: alpha
# --------------------------------
# ``alpha`` is the penalty for covering a subtopic again: a document's gain for
# a subtopic already covered ``c`` times is ``(1 - alpha) ** c``.  At
# ``alpha = 0`` a repeated subtopic gains as much as a new one; the larger
# ``alpha``, the more the diversified ranking is ahead.
for alpha in (0.0, 0.5, 0.9):
    values = {name: diversity.alpha_ndcg_score(y_true, score, qid=qid, k=10, alpha=alpha)
              for name, score in systems.items()}
    print(f"alpha = {alpha}: " + ", ".join(f"{n} {v:.3f}" for n, v in values.items()))
