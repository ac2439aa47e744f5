"""
Comparing rankers with paired tests
===================================

Is ranker B better than ranker A, or did it win on a few queries by chance?
:func:`skrank.compare` pairs the per-query values of the systems by query id
and reports the mean difference, its confidence interval, wins/ties/losses and
a paired test with a correction over every comparison of the call.
"""

# %%
# Three rankers on the same held-out queries
# ------------------------------------------
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge

import skrank
from skrank.datasets import make_ranking
from skrank.plot import MetricDistributionDisplay, PerQueryDisplay

X, y, qid = make_ranking(n_queries=150, n_docs=(10, 30), n_features=10, random_state=1)
train = qid < 90
X_train, y_train = X[train], y[train]
X_test, y_test, qid_test = X[~train], y[~train], qid[~train]

rng = np.random.default_rng(0)
scores = {
    "random": rng.random(X_test.shape[0]),
    "ridge": Ridge().fit(X_train, y_train).predict(X_test),
    "boosting": HistGradientBoostingRegressor(max_iter=60, random_state=0)
    .fit(X_train, y_train).predict(X_test),
}
results = {name: skrank.evaluate(y_test, s, qid=qid_test, metrics=["ndcg@10", "map"])
           for name, s in scores.items()}

# %%
# Every pair, Holm-corrected randomization tests
# ----------------------------------------------
comparison = skrank.compare(results, metrics="ndcg@10", random_state=0)
print(comparison.to_markdown())

# %%
# The distribution of the per-query values
# ----------------------------------------
# :class:`~skrank.plot.MetricDistributionDisplay` draws one box per system;
# the white diamonds are the means.
MetricDistributionDisplay.from_predictions(y_test, scores, qid=qid_test, metric="ndcg@10")

# %%
# Query by query: boosting minus ridge
# ------------------------------------
# :class:`~skrank.plot.PerQueryDisplay` sorts the per-query differences (the
# topic-by-topic plot of IR papers) and gives the paired test in its title.
PerQueryDisplay.from_predictions(y_test, scores["boosting"], baseline_score=scores["ridge"],
                                 qid=qid_test, metric="ndcg@10", name="boosting",
                                 baseline_name="ridge", random_state=0)
