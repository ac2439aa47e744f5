"""
Tuning a ranker with ``scoring="ndcg_exp@10"`` and ``QueryKFold``
=================================================================

A grid search over a gradient-boosting model, scored by ``nDCG@10`` with
exponential gain on whole queries: :class:`~skrank.model_selection.QueryKFold`
keeps every query in one fold, and the scorer string ``"ndcg_exp@10"`` is a
valid ``scoring=`` after ``import skrank``.  The query ids reach the splitter
and the scorer through scikit-learn's metadata routing.
"""

# %%
# Data: learnable queries of 10 to 30 documents, graded 0-4
# ---------------------------------------------------------
# :func:`skrank.datasets.make_ranking` makes the data.  The last 50 queries are
# kept aside to compare the tuned model with the default one at the end.
import numpy as np
import sklearn
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import GridSearchCV

import skrank
from skrank.datasets import make_ranking
from skrank.model_selection import QueryKFold
from skrank.plot import MetricAtKDisplay

X, y, qid = make_ranking(n_queries=160, n_docs=(10, 30), n_features=10, random_state=0)
train = qid < 110
X_train, y_train, qid_train = X[train], y[train], qid[train]
X_test, y_test, qid_test = X[~train], y[~train], qid[~train]
print(f"{X_train.shape[0]} training rows in {np.unique(qid_train).size} queries, "
      f"{X_test.shape[0]} test rows in {np.unique(qid_test).size} queries")

# %%
# The search
# ----------
# Each candidate is fitted on two folds of whole queries and scored on the
# third by the mean ``nDCG@10`` (gain ``2**rel - 1``) over its queries.
grid = {"max_depth": [2, 4], "learning_rate": [0.05, 0.2]}
search = GridSearchCV(HistGradientBoostingRegressor(max_iter=30, random_state=0), grid,
                      scoring="ndcg_exp@10", cv=QueryKFold(3))
with sklearn.config_context(enable_metadata_routing=True):
    search.fit(X_train, y_train, qid=qid_train)

for params, mean, std in zip(search.cv_results_["params"],
                             search.cv_results_["mean_test_score"],
                             search.cv_results_["std_test_score"]):
    print(f"{params}: nDCG_exp@10 = {mean:.3f} +/- {std:.3f}")
print("best:", search.best_params_)

# %%
# Held-out queries: the metric against its cutoff
# -----------------------------------------------
# :class:`~skrank.plot.MetricAtKDisplay` draws ``nDCG@k`` for k = 1..20 with
# bootstrap confidence bands over the held-out queries.
default = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X_train, y_train)
systems = {"tuned": search.predict(X_test), "default": default.predict(X_test)}
display = MetricAtKDisplay.from_predictions(y_test, systems, qid=qid_test, metric="ndcg_exp",
                                            max_k=20, confidence=0.9, random_state=0)
print(skrank.evaluate(y_test, systems["tuned"], qid=qid_test, metrics=["ndcg_exp@10"]).mean)
