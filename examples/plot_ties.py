"""
Tied scores: the tie policies
=============================

Rankers often give equal scores (a classifier's few distinct probabilities, a
rating rounded to stars, BM25 on short texts).  The order of tied documents
then decides the metric, and libraries choose it differently: scikit-learn
averages over the orderings, LightGBM and XGBoost keep the input order,
trec_eval orders by document id.  skrank names the choice: ``ties=``.
"""

# %%
# One query by hand
# -----------------
# ``y_true = [0, 1, 0]``, ``y_score = [.5, .5, .1]``: the relevant document is
# tied with an irrelevant one at the top, so ``nDCG@1`` is 1 if it goes first and
# 0 otherwise.  ``"average"`` is the expectation over both orders, 1/2;
# ``"stable"`` keeps the input order (the irrelevant document is first: 0);
# ``"pessimistic"`` and ``"optimistic"`` are the two bounds.
import numpy as np

import skrank
from skrank.datasets import make_ranking
from skrank.plot import MetricAtKDisplay

POLICIES = ["optimistic", "average", "stable", "pessimistic"]
for ties in POLICIES:
    value = skrank.ndcg_score([0, 1, 0], [.5, .5, .1], qid=[0, 0, 0], k=1, ties=ties)
    print(f"ties={ties!r:14} nDCG@1 = {value}")

# %%
# Coarse scores on many queries
# -----------------------------
# Scores rounded to one decimal tie often.  The gap between ``"optimistic"``
# and ``"pessimistic"`` is how much of the metric the ties leave undecided;
# ``"average"`` lies between them, and ``"stable"`` depends on the order in
# which the rows happen to come (here the generator's, unrelated to relevance).
X, y, qid = make_ranking(n_queries=100, n_docs=(10, 30), random_state=2)
coarse = np.round(X[:, 0] + 0.5 * X[:, 1], 1)
ks = np.arange(1, 21)
names = [f"ndcg@{k}" for k in ks]
values = {}
for ties in POLICIES:
    mean = skrank.evaluate(y, coarse, qid=qid, metrics=names, ties=ties).mean
    values[ties] = np.array([mean[name] for name in names])

# %%
# The display is built from the computed values directly (scikit-learn's
# Display convention: the constructor takes the numbers, ``plot`` draws them).
display = MetricAtKDisplay(k=ks, values=values, metric="ndcg").plot(
    title="nDCG@k of rounded scores under each tie policy")
gap = values["optimistic"] - values["pessimistic"]
print(f"undecided by ties at k=10: {gap[9]:.3f}")
