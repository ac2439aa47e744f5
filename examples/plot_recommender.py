"""
A recommender: leave the training items out with ``exclude``
============================================================

A recommender scores every item for every user; the items a user interacted
with in training are not recommendations and must take no rank in the test
evaluation.  With the users as rows of a score matrix, ``exclude=`` takes the
training interactions (a scipy sparse matrix or a boolean mask): an excluded
item is left out as if its column were not there for that user.
"""

# %%
# Interactions from a low-rank preference model
# ---------------------------------------------
# 400 users, 300 items; each user's interactions are drawn from a logistic
# model of a few latent factors, then split 80/20 into training and test.
import numpy as np
import scipy.sparse as sp

import skrank
from skrank.plot import MetricAtKDisplay

rng = np.random.default_rng(0)
n_users, n_items, n_factors = 400, 300, 5
users = rng.normal(size=(n_users, n_factors))
items = rng.normal(size=(n_items, n_factors))
popularity = rng.normal(scale=1.5, size=n_items)
logits = users @ items.T / np.sqrt(n_factors) + popularity - 4.0
interacted = rng.random((n_users, n_items)) < 1 / (1 + np.exp(-logits))
in_test = interacted & (rng.random((n_users, n_items)) < 0.2)
Y_train = sp.csr_array(interacted & ~in_test)
Y_test = sp.csr_array(in_test)
print(f"{Y_train.nnz} training and {Y_test.nnz} test interactions")

# %%
# Two recommenders
# ----------------
# Popularity (the number of training interactions of each item, the same list
# for everyone) and a rank-5 truncated SVD of the training matrix.
counts = np.asarray(Y_train.sum(axis=0)).ravel()
S_pop = np.tile(counts.astype(float), (n_users, 1)) + rng.random((n_users, n_items)) * 1e-6
u, s, vt = np.linalg.svd(Y_train.toarray().astype(float), full_matrices=False)
S_svd = (u[:, :n_factors] * s[:n_factors]) @ vt[:n_factors]

# %%
# With and without ``exclude``
# ----------------------------
# Without it, the items each user already has fill the top of the SVD's list
# (it reconstructs the training matrix) and ``nDCG@10`` says little about new
# recommendations.
for name, S in {"popularity": S_pop, "svd": S_svd}.items():
    with_exclude = skrank.ndcg_score(Y_test, S, k=10, exclude=Y_train)
    without = skrank.ndcg_score(Y_test, S, k=10)
    print(f"{name:10} nDCG@10 = {with_exclude:.4f} with exclude, {without:.4f} without")

result = skrank.evaluate(Y_test, S_svd, exclude=Y_train,
                         metrics=["ndcg@10", "recall@20", "precision@10", "map@10"])
print({name: round(value, 4) for name, value in result.mean.items()})

# %%
# ``Recall@k`` against k, on the items left to recommend
# ------------------------------------------------------
# :class:`~skrank.plot.MetricAtKDisplay` takes flat rows with query ids: here
# every (user, item) pair not excluded, which is what ``exclude`` evaluates.
keep = ~Y_train.toarray()
user_id = np.broadcast_to(np.arange(n_users)[:, None], keep.shape)[keep]
y_flat = Y_test.toarray()[keep].astype(float)
scores = {"svd": S_svd[keep], "popularity": S_pop[keep]}
MetricAtKDisplay.from_predictions(y_flat, scores, qid=user_id, metric="recall", max_k=30)
