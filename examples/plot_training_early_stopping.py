"""
Early stopping a LightGBM ranker on skrank's metrics
====================================================

A ranker is chosen by the metric it is early-stopped on.  LightGBM's and
XGBoost's built-in ``ndcg``/``map`` have their own conventions (exponential
gain, ties in input order, 1.0 for a query without a relevant document);
:mod:`skrank.gbdt` turns skrank's metric names into the evaluation functions
the libraries take, so that the number that stops training is the number
reported in the paper.  The guide is ``docs/training.md``; XGBoost and
CatBoost work the same way (:func:`skrank.gbdt.xgboost_metric`,
:class:`skrank.gbdt.XGBRanker`, :func:`skrank.gbdt.catboost_metric`).
"""

# %%
# Training, validation and test queries
# -------------------------------------
# :func:`skrank.datasets.make_ranking` makes queries of documents with graded
# labels; whole queries go to each split.
import lightgbm as lgb
import matplotlib.pyplot as plt
import numpy as np

import skrank
import skrank.gbdt
from skrank.datasets import make_ranking
from skrank.plot import MetricAtKDisplay

X, y, qid = make_ranking(n_queries=400, n_docs=(10, 40), n_features=20, noise=2.0,
                         random_state=0)
split = np.where(qid < 200, "train", np.where(qid < 300, "valid", "test"))
data = {name: (X[split == name], y[split == name], qid[split == name])
        for name in ("train", "valid", "test")}


def dataset(name, reference=None):
    X_part, y_part, qid_part = data[name]
    # LightGBM takes the sizes of consecutive query groups
    _, sizes = np.unique(qid_part, return_counts=True)
    return lgb.Dataset(X_part, y_part, group=sizes, reference=reference)


dtrain = dataset("train")
dvalid = dataset("valid", reference=dtrain)

# %%
# skrank's metrics as LightGBM's ``feval``
# ----------------------------------------
# ``"metric": "None"`` leaves only skrank's metrics in the log; the early
# stopping callback stops on the first of them (nDCG@10) when it has not
# improved for 20 rounds.
metric = skrank.gbdt.lightgbm_metric(["ndcg@10", "mrr@10"])
params = {"objective": "lambdarank", "metric": "None", "learning_rate": 0.1,
          "num_leaves": 31, "min_data_in_leaf": 5, "verbose": -1, "num_threads": 1}
log = {}
booster = lgb.train(params, dtrain, num_boost_round=300, valid_sets=[dtrain, dvalid],
                    valid_names=["train", "valid"], feval=metric,
                    callbacks=[lgb.early_stopping(20, first_metric_only=True, verbose=False),
                               lgb.record_evaluation(log)])
best = booster.best_iteration   # LightGBM counts iterations from 1
print(f"stopped after {len(log['valid']['ndcg@10'])} rounds; best round {best}, "
      f"valid nDCG@10 {log['valid']['ndcg@10'][best - 1]:.4f}")

# %%
# The logged value is exactly :func:`skrank.evaluate`'s
# ------------------------------------------------------
# The metric LightGBM logged at the best round is what ``skrank.evaluate``
# gives on that round's predictions of the validation queries.
X_valid, y_valid, qid_valid = data["valid"]
staged = booster.predict(X_valid, num_iteration=best, raw_score=True)
exact = skrank.evaluate(y_valid, staged, qid=qid_valid, metrics=["ndcg@10"]).mean["ndcg@10"]
assert abs(log["valid"]["ndcg@10"][best - 1] - exact) <= 1e-12
print(f"skrank.evaluate on the same predictions: {exact:.4f}")

# %%
# The learning curves
# -------------------
# The training queries keep improving; the validation queries stop improving,
# and the round that was best on them is the model kept.
rounds = np.arange(1, len(log["valid"]["ndcg@10"]) + 1)
fig, ax = plt.subplots(figsize=(6, 3.5))
for name, style in (("train", "--"), ("valid", "-")):
    ax.plot(rounds, log[name]["ndcg@10"], style, label=f"{name} nDCG@10")
ax.axvline(best, color="grey", linestyle=":", label=f"best round ({best})")
ax.set_xlabel("boosting round")
ax.set_ylabel("nDCG@10 (skrank)")
ax.set_title("LightGBM lambdarank, early-stopped on skrank's nDCG@10")
ax.legend()
fig.tight_layout()

# %%
# On the test queries
# -------------------
# The early-stopped model against a model trained for 300 rounds without
# early stopping, and against the single best feature, at every cutoff.
X_test, y_test, qid_test = data["test"]
full = lgb.train(params, dtrain, num_boost_round=300)
scores = {
    "early-stopped": booster.predict(X_test, num_iteration=best),
    "300 rounds": full.predict(X_test),
    "first feature": X_test[:, 0],
}
display = MetricAtKDisplay.from_predictions(y_test, scores, qid=qid_test, metric="ndcg",
                                            max_k=20, title="nDCG@k on the test queries")
for name, values in display.values.items():
    print(f"{name:14} test nDCG@10 {values[9]:.4f}")
