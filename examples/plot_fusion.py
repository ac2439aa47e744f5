"""
Hybrid retrieval: fusing a lexical and a dense run
==================================================

A lexical run (BM25) and a dense-retrieval run find different relevant
documents: fusing them is the usual hybrid setup of search and RAG systems.
:func:`skrank.fuse` fuses runs with the methods and normalisations of ranx
(``rrf``, ``wsum``, ``comb_mnz``, ``dbsf``, ...), and
:class:`skrank.fusion.FusionSearch` chooses a weighted method's weights on
training queries only, with an honest held-out estimate.  The guide is
``docs/fusion.md``.
"""

# %%
# Two runs of the same queries
# ----------------------------
# 120 queries over 1,000 documents, 10 relevant documents per query (grades 1
# and 2).  Each system sees a different random part of the relevant documents:
# "bm25" scores them higher 60% of the time, "dense" 70% of the time, on scores
# of different scales.  Each run keeps its top 50 documents per query.
import matplotlib.pyplot as plt
import numpy as np

import skrank
from skrank.fusion import FusionSearch
from skrank.io import Qrels, Run
from skrank.model_selection import QueryKFold
from skrank.plot import MetricDistributionDisplay

rng = np.random.default_rng(0)
n_queries, n_docs, depth = 120, 1000, 50
qid = np.array([f"q{i:03d}" for i in range(n_queries)])
docno = np.array([f"doc{j}" for j in range(n_docs)])

grade = np.zeros((n_queries, n_docs), dtype=int)
relevant = rng.random((n_queries, n_docs)).argsort(axis=1)[:, :10]
np.put_along_axis(grade, relevant, rng.integers(1, 3, relevant.shape), axis=1)
rows, cols = np.nonzero(grade)
qrels = Qrels(qid=qid[rows], docno=docno[cols], rel=grade[rows, cols])

lexical = grade * (rng.random(grade.shape) < 0.6)
semantic = grade * (rng.random(grade.shape) < 0.7)
bm25_scores = 12 + 3 * rng.standard_normal(grade.shape) + 4 * lexical
dense_scores = 0.4 + 0.08 * rng.standard_normal(grade.shape) + 0.12 * semantic


def top_run(scores, tag):
    """Each query's top ``depth`` documents as a :class:`skrank.io.Run`."""
    top = np.argsort(-scores, axis=1)[:, :depth]
    return Run(qid=np.repeat(qid, depth), docno=docno[top].ravel(),
               score=np.take_along_axis(scores, top, axis=1).ravel(), tag=tag)


runs = {"bm25": top_run(bm25_scores, "bm25"), "dense": top_run(dense_scores, "dense")}

# %%
# Fusion methods
# --------------
# Reciprocal rank fusion needs no score normalisation and no weights; the
# score-based methods normalise each run's scores first (``norm=``).
metrics = ["ndcg@10", "recall@50"]
fused = {
    "rrf": skrank.fuse(runs, method="rrf"),
    "wsum (min-max, 0.5/0.5)": skrank.fuse(runs, method="wsum", norm="min-max"),
    "comb_mnz (zmuv)": skrank.fuse(runs, method="comb_mnz", norm="zmuv"),
    "dbsf": skrank.fuse(runs, method="dbsf"),
}
results = {name: skrank.evaluate(qrels=qrels, run=run, metrics=metrics)
           for name, run in {**runs, **fused}.items()}
for name, res in results.items():
    print(f"{name:24} nDCG@10 {res.mean['ndcg@10']:.3f}   recall@50 {res.mean['recall@50']:.3f}")

# %%
# Choosing the weights without looking at the test queries
# --------------------------------------------------------
# ``FusionSearch`` scores every weight vector of :func:`skrank.fusion.weight_grid`
# (steps of 0.1 summing to 1) on the held-out queries of each fold.
# ``best_params_`` is the best mean over folds; ``heldout_run_`` fuses each test
# fold with the weights chosen on that fold's *training* queries: its score is
# the estimate to report, not ``best_score_``.
search = FusionSearch(method="wsum", metric="ndcg@10",
                      cv=QueryKFold(5, shuffle=True, random_state=0))
search.fit(runs, qrels)
print("best weights (bm25, dense):", search.best_params_["weights"],
      " mean held-out nDCG@10:", round(search.best_score_, 3))
print("weights chosen per fold:", [p["weights"] for p in search.chosen_params_])
results["wsum (CV)"] = skrank.evaluate(
    qrels=qrels, run=search.heldout_run_, metrics=metrics)

weights_bm25 = [p["weights"][0] for p in search.cv_results_["params"]]
mean = search.cv_results_["mean_test_score"]
std = search.cv_results_["std_test_score"]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.errorbar(weights_bm25, mean, yerr=std, marker="o", capsize=3)
ax.axvline(search.best_params_["weights"][0], color="grey", linestyle=":")
ax.set_xlabel("weight of bm25 (dense: 1 - weight)")
ax.set_ylabel("nDCG@10, mean over folds (± std)")
ax.set_title("wsum: the cross-validated weight grid")
fig.tight_layout()

# %%
# Per-query distribution
# ----------------------
# Fusion helps on most queries, not only on average: the per-query nDCG@10 of
# the single runs and of two fused runs.
shown = ["bm25", "dense", "rrf", "wsum (CV)"]
display = MetricDistributionDisplay(
    values={name: results[name].per_query["ndcg@10"] for name in shown}, metric="ndcg@10")
display.plot(title="Per-query nDCG@10 of single and fused runs")

# %%
# Is the gain significant?
# ------------------------
# :func:`skrank.compare` runs a paired randomization test over the queries,
# each other run against the fused one with weights chosen per fold ("wsum (CV)"),
# with the multiple-comparison correction.
comparison = skrank.compare({name: results[name] for name in shown}, metrics="ndcg@10",
                            baseline="wsum (CV)", random_state=0)
for pair in comparison.pairs:
    print(f"{pair.system_b:6} vs wsum: {pair.verdict}, p = {pair.p_adjusted:.3g}")
