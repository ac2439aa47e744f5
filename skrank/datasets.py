"""Synthetic ranking data, in the spirit of :mod:`sklearn.datasets`."""

import os
from numbers import Integral

import numpy as np

from ._core.checks import InvalidParameterError, _describe, check_real

__all__ = ["make_ranking"]

# Share of the latent relevance's variance that comes from pairwise interactions
# of the informative features (the rest is linear): a linear model learns part
# of the ranking, a model of interactions (trees) learns more.
_INTERACTION_SHARE = 0.4
# Standard deviation of a per-query shift of the relevance ("query difficulty"):
# queries differ in how many relevant documents they have, and some have none.
_QUERY_SHIFT = 0.5


def _check_int(func, name, value, low, high=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or value < low \
            or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise InvalidParameterError(
            f"{func}: {name} must be an int {bound}. Got {_describe(value)} instead."
        )
    return int(value)


def _check_n_docs(func, n_docs):
    if isinstance(n_docs, Integral) and not isinstance(n_docs, (bool, np.bool_)):
        low = high = _check_int(func, "n_docs", n_docs, 1)
    else:
        try:
            low, high = n_docs
            ok = all(isinstance(v, Integral) and not isinstance(v, (bool, np.bool_))
                     for v in (low, high)) and 1 <= low <= high
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InvalidParameterError(
                f"{func}: n_docs must be an int >= 1 or a pair (low, high) of ints with "
                f"1 <= low <= high. Got {_describe(n_docs)} instead."
            )
    return int(low), int(high)


def _rng(func, random_state):
    if random_state is None or (isinstance(random_state, Integral)
                                and not isinstance(random_state, (bool, np.bool_))
                                and random_state >= 0):  # numpy refuses negative seeds
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    raise InvalidParameterError(
        f"{func}: random_state must be None, an int >= 0, a numpy Generator or a RandomState. "
        f"Got {_describe(random_state)} instead."
    )


def _physical_memory():
    """This machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - e.g. Windows
        return None


def _check_size(func, n_queries, low, n_features):
    """Refuse, before allocating, a data set whose smallest possible size (every query
    at ``low`` documents: the features, grades and ids in float64/int64) exceeds this
    machine's memory (or 2**63 bytes where it is not known)."""
    needed = n_queries * 8 + n_queries * low * (n_features + 2) * 8
    limit = _physical_memory() or 2 ** 63
    if needed > limit:
        raise InvalidParameterError(
            f"{func}: n_queries={n_queries} with n_docs >= {low} and n_features={n_features} "
            f"needs at least {needed / 2 ** 30:,.0f} GiB, more than this machine's "
            f"{limit / 2 ** 30:,.0f} GiB of memory. Ask for fewer queries, documents or "
            f"features.")


def make_ranking(n_queries=100, n_docs=(5, 100), *, n_features=20, n_informative=5,
                 n_grades=5, noise=1.0, ties=0.0, as_frame=False, random_state=None):
    """Generate a learning-to-rank data set: queries of documents with graded labels.

    Each query gets a number of documents drawn uniformly from ``n_docs``.
    Every document has ``n_features`` standard normal features; the first
    ``n_informative`` drive a latent relevance of unit variance, a linear part
    (60% of the variance) plus products of consecutive informative features
    (40%), so that a linear model learns part of the ranking and a model of
    interactions learns more.  The relevance gets a per-query shift
    (standard deviation 0.5: queries differ in how many relevant documents
    they hold, and a few hold none) and Gaussian noise of standard deviation
    ``noise``, and is cut into ``n_grades`` grades at quantiles such that each
    grade is about half as frequent as the one below (with five grades about
    52%, 26%, 13%, 6% and 3% of the documents).  Rows come grouped by query, in
    increasing query id (the layout XGBoost needs).

    Parameters
    ----------
    n_queries : int >= 1, default=100
        Number of queries; their ids are ``0 .. n_queries - 1``.
    n_docs : int or (int, int), default=(5, 100)
        Documents per query: a fixed number, or inclusive bounds of a uniform
        draw for each query.
    n_features : int >= 1, default=20
        Number of features.
    n_informative : int, default=5
        Number of informative features, the first columns of ``X``
        (1 <= n_informative <= n_features); the others are noise.
    n_grades : int >= 2, default=5
        Number of relevance grades; labels are ``0 .. n_grades - 1``.
    noise : float >= 0, default=1.0
        Standard deviation of the noise added to the unit-variance latent
        relevance before grading.  0 makes the grades a function of the
        features (up to the per-query shift).
    ties : float in [0, 1), default=0.0
        Share of documents that duplicate the features of another document of
        the same query: every model gives them the same score, so rankings of
        them hold tied scores.  Their labels are drawn with their own noise, so
        tied documents may differ in grade.
    as_frame : bool, default=False
        Return pandas objects: ``X`` as a DataFrame with a ``qid`` column
        followed by feature columns ``f0, f1, ...``, ``y`` and ``qid`` as Series
        (needs pandas).  skrank's scorers, splitters and XGBoost read the query
        ids from that column; other models would take it as a feature.
    random_state : int, numpy Generator, RandomState or None, default=None
        Seed: the same seed gives the same data set.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), or DataFrame
        Features.
    y : ndarray of shape (n_samples,), or Series
        Relevance grades (float).
    qid : ndarray of shape (n_samples,), or Series
        Query id of each row (int64), sorted.

    Examples
    --------
    >>> import numpy as np
    >>> import skrank
    >>> from skrank.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=200, n_docs=(10, 30), random_state=0)
    >>> X.shape, np.unique(qid).size, np.unique(y).tolist()
    ((4139, 20), 200, [0.0, 1.0, 2.0, 3.0, 4.0])

    A model learns the ranking: trained on the first 150 queries, a linear
    model ranks the other 50 far better than chance.

    >>> from sklearn.linear_model import LinearRegression
    >>> train, test = qid < 150, qid >= 150
    >>> model = LinearRegression().fit(X[train], y[train])
    >>> chance = np.random.default_rng(0).random(test.sum())
    >>> for scores in (model.predict(X[test]), chance):
    ...     print(round(skrank.ndcg_score(y[test], scores, qid=qid[test], k=10), 2))
    0.65
    0.42
    """
    func = "make_ranking"
    n_queries = _check_int(func, "n_queries", n_queries, 1)
    low, high = _check_n_docs(func, n_docs)
    n_features = _check_int(func, "n_features", n_features, 1)
    n_informative = _check_int(func, "n_informative", n_informative, 1, n_features)
    n_grades = _check_int(func, "n_grades", n_grades, 2)
    noise = check_real(func, "noise", noise, low=0)
    ties = check_real(func, "ties", ties, low=0, high=1, high_open=True)
    if not isinstance(as_frame, (bool, np.bool_)):
        raise InvalidParameterError(f"{func}: as_frame must be True or False. "
                                    f"Got {_describe(as_frame)} instead.")
    rng = _rng(func, random_state)
    _check_size(func, n_queries, low, n_features)

    try:
        sizes = rng.integers(low, high + 1, size=n_queries)
    except (MemoryError, ValueError) as exc:  # n_queries beyond this machine's memory
        raise MemoryError(f"{func}: n_queries={n_queries} asks for more memory than is "
                          f"available ({exc}). Ask for fewer queries.") from None
    n = int(sizes.sum())
    codes = np.repeat(np.arange(n_queries), sizes)
    X = rng.standard_normal((n, n_features))
    if ties > 0:
        # A duplicate copies the last original row before it in its query; the
        # first row of each query is always an original.
        first = np.zeros(n, dtype=bool)
        first[np.cumsum(sizes)[:-1]] = True
        first[0] = True
        duplicate = (rng.random(n) < ties) & ~first
        source = np.maximum.accumulate(np.where(duplicate, 0, np.arange(n)))
        X = X[source]

    informative = X[:, :n_informative]
    weights = rng.uniform(0.5, 1.5, size=n_informative) * rng.choice([-1.0, 1.0], n_informative)
    linear = informative @ (weights / np.sqrt(weights @ weights))
    if n_informative > 1:
        products = informative[:, :-1] * informative[:, 1:]
        signs = rng.choice([-1.0, 1.0], size=n_informative - 1)
        interaction = products @ (signs / np.sqrt(n_informative - 1))
        relevance = (np.sqrt(1 - _INTERACTION_SHARE) * linear
                     + np.sqrt(_INTERACTION_SHARE) * interaction)
    else:
        relevance = linear
    relevance += _QUERY_SHIFT * rng.standard_normal(n_queries)[codes]
    relevance += noise * rng.standard_normal(n)

    # Grade g is about half as frequent as grade g - 1.
    share = 0.5 ** np.arange(n_grades)
    thresholds = np.quantile(relevance, np.cumsum(share / share.sum())[:-1])
    y = np.searchsorted(thresholds, relevance, side="right").astype(np.float64)
    qid = codes.astype(np.int64)

    if as_frame:
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised without pandas only
            raise ImportError(f"{func}(as_frame=True) needs pandas: pip install pandas") from exc
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(n_features)])
        frame.insert(0, "qid", qid)
        return frame, pd.Series(y, name="relevance"), pd.Series(qid, name="qid")
    return X, y, qid
