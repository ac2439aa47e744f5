"""Beyond-accuracy metrics of top-k recommendation lists (issue 29).

Coverage, concentration (entropy, Gini index), popularity (novelty, average
recommendation popularity, long-tail share), intra-list diversity and
serendipity, with the definitions of microsoft/recommenders'
``python_evaluation`` where it has the metric and of RecBole where it does not.

The lists are a 2-D integer array ``recommended`` of shape ``(n_users, k)``:
row ``u`` holds user ``u``'s recommended item indices (``0 .. n_items - 1``),
best first, ``-1`` padding a shorter list (RecBole's ``rec.items``;
:func:`top_k_items` makes it from a score matrix).  The catalog and the
popularity are arguments (``n_items=``, ``item_popularity=``, ``item_features=``),
never guessed from the lists.  Memory is ``O(n_users * k)`` (plus the item
arrays): no ``n_users x n_items`` array is built.

Per-user metrics (novelty, ARP, long-tail share, intra-list similarity and
diversity, serendipity) return the mean over users; :func:`per_user_scores`
gives the values of each user.  Collection-level ones (coverage, entropy, Gini,
user coverage) return one number.
"""

from numbers import Integral
from typing import NamedTuple

import numpy as np

from ._beyond_kernels import (
    _check_n_items,
    _exposure,
    _lists,
    _mean_over_users,
    _per_user_ils,
    _per_user_novelty,
    _per_user_popularity,
    _per_user_serendipity,
    _per_user_tail,
)
from ._core.checks import InvalidParameterError, _describe
from ._metrics import QueryScores


__all__ = [
    "BEYOND_METRICS",
    "BeyondEvaluation",
    "average_popularity",
    "catalog_coverage",
    "distributional_coverage",
    "evaluate",
    "gini_index",
    "intra_list_diversity",
    "intra_list_similarity",
    "long_tail_share",
    "novelty",
    "per_user_scores",
    "serendipity",
    "top_k_items",
    "user_coverage",
]


def catalog_coverage(recommended, *, n_items):
    """Catalog coverage: distinct recommended items over the catalog's ``n_items``.

    microsoft/recommenders' ``catalog_coverage`` divides by the distinct items of
    the training data and RecBole's ``ItemCoverage`` by the dataset's items: pass
    that number as ``n_items``.

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list;
        every index is below ``n_items``.
    n_items : int
        The catalog's size (items of the training data, or of the dataset).

    Returns
    -------
    score : float
        Distinct recommended items over ``n_items``, in [0, 1].

    Examples
    --------
    >>> from skrank.beyond import catalog_coverage
    >>> catalog_coverage([[0, 1], [1, 2]], n_items=10)
    0.3
    """
    func = "catalog_coverage"
    n_items = _check_n_items(func, n_items)
    items, valid = _lists(func, recommended, n_items)
    return np.unique(items[valid]).shape[0] / n_items


def distributional_coverage(recommended, *, convention="recommenders"):
    """Entropy of the items' share of all recommendations.

    ``convention="recommenders"``: ``-sum_i p_i log2 p_i`` with ``p_i`` the share
    of the recommendations that are item ``i`` (microsoft/recommenders'
    ``distributional_coverage``); ``"recbole"``: the natural-log entropy divided
    by the number of distinct recommended items (RecBole's ``ShannonEntropy``).

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    convention : {"recommenders", "recbole"}, default="recommenders"
        Base-2 entropy (microsoft/recommenders), or natural-log entropy over the
        number of distinct recommended items (RecBole).

    Returns
    -------
    score : float
        The entropy.

    Examples
    --------
    >>> from skrank.beyond import distributional_coverage
    >>> distributional_coverage([[0, 1], [0, 2]])   # shares 1/2, 1/4, 1/4: 1.5 bits
    1.5
    """
    func = "distributional_coverage"
    if convention not in ("recommenders", "recbole"):
        raise InvalidParameterError(f"{func}: convention must be 'recommenders' or 'recbole'. "
                                    f"Got {_describe(convention)} instead.")
    items, valid = _lists(func, recommended)
    counts = _exposure(items, valid)
    if counts.size == 0:
        raise ValueError(f"{func}: recommended must hold at least one item. Got only padding "
                         f"instead.")
    p = counts / counts.sum()
    if convention == "recommenders":
        return float(-(p * np.log2(p)).sum())
    return float(-(p * np.log(p)).sum() / counts.size)


def gini_index(recommended, *, n_items):
    """Gini index of the items' exposure over the whole catalog (RecBole's ``GiniIndex``).

    ``G = sum_i (2 i - n - 1) P_(i) / (n sum_i P_(i))`` with ``P_(1) <= ... <= P_(n)``
    the number of times each of the ``n = n_items`` items is recommended (items
    never recommended count 0): 0 when every item is recommended equally often,
    near 1 when a few items take every slot.

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list;
        every index is below ``n_items``.
    n_items : int
        The catalog's size; items never recommended count 0 times.

    Returns
    -------
    score : float
        The Gini index, in [0, 1).

    Examples
    --------
    >>> from skrank.beyond import gini_index
    >>> gini_index([[0, 1], [0, 1]], n_items=2)
    0.0
    >>> gini_index([[0], [0]], n_items=4)   # (2*4 - 5) * 2 / (4 * 2)
    0.75
    """
    func = "gini_index"
    n_items = _check_n_items(func, n_items)
    items, valid = _lists(func, recommended, n_items)
    counts = np.sort(_exposure(items, valid))
    if counts.size == 0:
        raise ValueError(f"{func}: recommended must hold at least one item. Got only padding "
                         f"instead.")
    index = np.arange(n_items - counts.size + 1, n_items + 1, dtype=np.float64)
    return float(np.sum((2 * index - n_items - 1) * counts) / counts.sum() / n_items)


def user_coverage(recommended, *, n_users=None):
    """Users who get at least one recommendation, over ``n_users`` (default: the rows).

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    n_users : int, default=None
        The number of users, at least the rows of ``recommended``; None: the rows.

    Returns
    -------
    score : float
        Users with at least one recommended item over ``n_users``.

    Examples
    --------
    >>> from skrank.beyond import user_coverage
    >>> user_coverage([[3, 1], [-1, -1], [2, -1]])
    0.6666666666666666
    """
    func = "user_coverage"
    items, valid = _lists(func, recommended)
    n = items.shape[0] if n_users is None else n_users
    if (isinstance(n, (bool, np.bool_)) or not isinstance(n, Integral)
            or n < max(items.shape[0], 1)):
        raise InvalidParameterError(f"{func}: n_users must be an int >= the rows of recommended "
                                    f"({items.shape[0]}). Got {_describe(n_users)} instead.")
    return float(valid.any(axis=1).sum() / n)


def novelty(recommended, *, item_popularity, n_interactions=None):
    """Mean self-information ``-log2(popularity_i / total)`` of the recommended items.

    ``item_popularity[i]`` is item ``i``'s number of training interactions and
    ``total`` their sum (or ``n_interactions``), as microsoft/recommenders'
    ``novelty`` takes them (Castells et al., 2011).  Per user, the mean over the
    user's list; the result is the mean over users (recommenders' value when all
    lists have the same length).

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    item_popularity : array-like of shape (n_items,)
        Each item's number of training interactions (counts >= 0), indexed by item.
    n_interactions : float, default=None
        The total of the popularity; None: ``sum(item_popularity)``.

    Returns
    -------
    score : float
        The mean over the users where the metric is defined.

    Examples
    --------
    >>> from skrank.beyond import novelty
    >>> novelty([[0, 1]], item_popularity=[2, 1, 1])   # (-log2(2/4) - log2(1/4)) / 2
    1.5
    """
    func = "novelty"
    items, valid = _lists(func, recommended)
    return _mean_over_users(*_per_user_novelty(func, items, valid, item_popularity,
                                               n_interactions), func=func)


def average_popularity(recommended, *, item_popularity):
    """Average recommendation popularity (ARP; RecBole's ``AveragePopularity``): the
    mean training popularity of each user's list, averaged over users.

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    item_popularity : array-like of shape (n_items,)
        Each item's number of training interactions (counts >= 0), indexed by item.

    Returns
    -------
    score : float
        The mean over the users where the metric is defined.

    Examples
    --------
    >>> from skrank.beyond import average_popularity
    >>> average_popularity([[0, 1], [2, -1]], item_popularity=[10, 2, 4])   # (6 + 4) / 2
    5.0
    """
    func = "average_popularity"
    items, valid = _lists(func, recommended)
    values, defined = _per_user_popularity(func, items, valid, item_popularity)
    return _mean_over_users(values, defined, func)


def long_tail_share(recommended, *, item_popularity, tail=0.1):
    """Share of each user's list in the long tail, averaged over users (RecBole's
    ``TailPercentage``; the tail as :func:`tail_items` chooses it, by default the 10%
    least popular items seen in training).

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    item_popularity : array-like of shape (n_items,)
        Each item's number of training interactions (counts >= 0), indexed by item.
    tail : float, default=0.1
        The long tail: with ``tail <= 1``, that share of the items seen in
        training (the least popular); with ``tail > 1``, the items seen at most
        ``tail`` times.

    Returns
    -------
    score : float
        The mean over the users where the metric is defined.

    Examples
    --------
    >>> from skrank.beyond import long_tail_share
    >>> pop = [50, 40, 30, 20, 10, 9, 8, 7, 6, 1]     # the tail: item 9
    >>> long_tail_share([[0, 9], [1, 2]], item_popularity=pop)   # (1/2 + 0) / 2
    0.25
    """
    func = "long_tail_share"
    items, valid = _lists(func, recommended)
    values, defined = _per_user_tail(func, items, valid, item_popularity, tail)
    return _mean_over_users(values, defined, func)


def intra_list_similarity(recommended, *, item_features=None, similarity=None):
    """Mean similarity of the distinct pairs of items of each list (Ziegler et al.,
    2005), averaged over the users whose list holds two items or more.

    ``item_features`` (dense, or scipy.sparse) gives cosine similarities; the
    items x users matrix of training interactions gives microsoft/recommenders'
    default ``item_cooccurrence_count`` similarity.  A zero vector has similarity
    0 to every item.  ``similarity(items_a, items_b)`` (arrays of item indices)
    may give any other similarity, one value per pair.

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    item_features : array-like or scipy.sparse matrix of shape (n_items, n_features), default=None
        One feature vector per item, compared by cosine similarity (the items x
        users matrix of training interactions gives co-occurrence similarity).
        Exactly one of ``item_features`` and ``similarity`` is given.
    similarity : callable, default=None
        ``similarity(items_a, items_b)``: one similarity per pair of item index
        arrays, instead of ``item_features``.

    Returns
    -------
    score : float
        The mean over the users with two items or more.

    Examples
    --------
    >>> from skrank.beyond import intra_list_similarity
    >>> features = [[1, 0], [1, 1], [0, 1]]
    >>> round(intra_list_similarity([[0, 1, 2]], item_features=features), 6)   # (2 cos45 + 0) / 3
    0.471405
    """
    func = "intra_list_similarity"
    items, valid = _lists(func, recommended)
    values, defined = _per_user_ils(func, items, valid, item_features, similarity)
    return _mean_over_users(values, defined, func)


def intra_list_diversity(recommended, *, item_features=None, similarity=None):
    """``1 - intra_list_similarity`` per user (microsoft/recommenders' ``diversity``).

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    item_features : array-like or scipy.sparse matrix of shape (n_items, n_features), default=None
        One feature vector per item, compared by cosine similarity (the items x
        users matrix of training interactions gives co-occurrence similarity).
        Exactly one of ``item_features`` and ``similarity`` is given.
    similarity : callable, default=None
        ``similarity(items_a, items_b)``: one similarity per pair of item index
        arrays, instead of ``item_features``.

    Returns
    -------
    score : float
        The mean over the users with two items or more.

    Examples
    --------
    >>> from skrank.beyond import intra_list_diversity
    >>> intra_list_diversity([[0, 2]], item_features=[[1, 0], [1, 1], [0, 1]])
    1.0
    """
    func = "intra_list_diversity"
    items, valid = _lists(func, recommended)
    values, defined = _per_user_ils(func, items, valid, item_features, similarity)
    return _mean_over_users(1.0 - values, defined, func)


def serendipity(recommended, *, history, item_features, relevance=None):
    """Serendipity as microsoft/recommenders defines it (Zhang et al., 2012).

    Per recommended item, ``(1 - mean similarity to the user's history) * relevance``
    (``relevance`` 1 by default, or an array of the shape of ``recommended``);
    per user, the mean over the list; then the mean over the users with a
    history.  ``history`` is a list matrix like ``recommended`` or a
    users x items scipy.sparse matrix of training interactions;
    ``item_features`` as in :func:`intra_list_similarity`.

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    history : array-like of int of shape (n_users, n_history) or scipy.sparse matrix
        Each user's training items: a list matrix like ``recommended`` (``-1``
        padding), or a users x items matrix of interactions.
    item_features : array-like or scipy.sparse matrix of shape (n_items, n_features)
        One feature vector per item, compared by cosine similarity.
    relevance : array-like of shape (n_users, k), default=None
        The relevance of each recommended item; None: 1 for every item.

    Returns
    -------
    score : float
        The mean over the users with a history.

    Examples
    --------
    >>> from skrank.beyond import serendipity
    >>> features = [[1, 0], [0, 1], [1, 1]]
    >>> # user 0 saw item 0; items 1 (cosine 0) and 2 (cosine 0.7071) are recommended
    >>> round(serendipity([[1, 2]], history=[[0]], item_features=features), 6)
    0.646447
    """
    func = "serendipity"
    items, valid = _lists(func, recommended)
    return _mean_over_users(*_per_user_serendipity(func, items, valid, history, item_features,
                                                   relevance), func=func)


def top_k_items(scores, k, *, exclude=None):
    """Each user's ``k`` best items (indices, best first) from a score matrix, without
    the items ``exclude`` marks (a boolean matrix or scipy.sparse, e.g. training
    interactions); ``-1`` pads a row with fewer than ``k`` candidates.

    Parameters
    ----------
    scores : array-like of shape (n_users, n_items)
        Each user's score for each item.
    k : int
        The length of each list.
    exclude : array-like of bool or scipy.sparse matrix of shape (n_users, n_items), default=None
        True (non-zero) marks items a user must not get (e.g. training interactions).

    Returns
    -------
    recommended : ndarray of int of shape (n_users, k)
        Each user's best items, best first, ``-1`` padding.

    Examples
    --------
    >>> from skrank.beyond import top_k_items
    >>> top_k_items([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1]], 2, exclude=[[False, True, False],
    ...                                                          [False, False, False]]).tolist()
    [[2, 0], [0, 1]]
    """
    func = "top_k_items"
    scores = np.array(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(f"{func}: scores must be 2-D (users x items). Got shape {scores.shape} "
                         f"instead.")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or k < 1:
        raise InvalidParameterError(f"{func}: k must be an int >= 1. Got {_describe(k)} instead.")
    if exclude is not None:
        mask = exclude.toarray() if hasattr(exclude, "toarray") else np.asarray(exclude)
        if mask.shape != scores.shape:
            raise ValueError(f"{func}: exclude must have the shape of scores {scores.shape}. Got "
                             f"{mask.shape} instead.")
        scores[mask.astype(bool)] = -np.inf
    k_eff = min(k, scores.shape[1])
    part = np.argpartition(-scores, k_eff - 1, axis=1)[:, :k_eff]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    top = np.take_along_axis(part, order, axis=1)
    top = np.where(np.isneginf(np.take_along_axis(scores, top, axis=1)), -1, top)
    if k_eff < k:
        top = np.hstack([top, np.full((top.shape[0], k - k_eff), -1)])
    return top


#: The declarations (issue 29): name -> (function, level, what it reads).  The lead may
#: move them into the one metric table.
BEYOND_METRICS = {
    "catalog_coverage": (catalog_coverage, "collection", ("n_items",)),
    "distributional_coverage": (distributional_coverage, "collection", ()),
    "gini_index": (gini_index, "collection", ("n_items",)),
    "user_coverage": (user_coverage, "collection", ()),
    "novelty": (novelty, "user", ("item_popularity",)),
    "average_popularity": (average_popularity, "user", ("item_popularity",)),
    "long_tail_share": (long_tail_share, "user", ("item_popularity",)),
    "intra_list_similarity": (intra_list_similarity, "user", ("item_features",)),
    "intra_list_diversity": (intra_list_diversity, "user", ("item_features",)),
    "serendipity": (serendipity, "user", ("history", "item_features")),
}


_PER_USER = {
    "novelty": lambda f, i, v, kw: _per_user_novelty(f, i, v, **kw),
    "average_popularity": lambda f, i, v, kw: _per_user_popularity(f, i, v, **kw),
    "long_tail_share": lambda f, i, v, kw: _per_user_tail(f, i, v, kw["item_popularity"],
                                                          kw.get("tail", 0.1)),
    "intra_list_similarity": lambda f, i, v, kw: _per_user_ils(f, i, v, **kw),
    "intra_list_diversity": lambda f, i, v, kw: (lambda r: (1.0 - r[0], r[1]))(
        _per_user_ils(f, i, v, **kw)),
    "serendipity": lambda f, i, v, kw: _per_user_serendipity(f, i, v, **kw),
}


def per_user_scores(metric, recommended, **inputs):
    """Per-user values of a per-user metric, with the users (row numbers) where it is
    defined (a list of two items or more for intra-list metrics, a history for
    serendipity, a non-empty list otherwise).

    Parameters
    ----------
    metric : str
        A per-user metric: ``"novelty"``, ``"average_popularity"``,
        ``"long_tail_share"``, ``"intra_list_similarity"``,
        ``"intra_list_diversity"`` or ``"serendipity"``.
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    **inputs
        The metric's keyword arguments (``item_popularity``, ``item_features``,
        ``history``, ``tail``, ...), as its function takes them.

    Returns
    -------
    scores : QueryScores
        ``qid``: the users (row numbers) where the metric is defined; ``score``:
        their values.

    Examples
    --------
    >>> from skrank.beyond import per_user_scores
    >>> res = per_user_scores("average_popularity", [[0, 1], [-1, -1], [2, -1]],
    ...                       item_popularity=[10, 2, 4])
    >>> res.qid.tolist(), res.score.tolist()
    ([0, 2], [6.0, 4.0])
    """
    func = "per_user_scores"
    if metric not in _PER_USER:
        raise InvalidParameterError(f"{func}: metric must be one of "
                                    f"{', '.join(map(repr, _PER_USER))}. Got {_describe(metric)} "
                                    f"instead.")
    items, valid = _lists(func, recommended)
    values, defined = _PER_USER[metric](func, items, valid, inputs)
    users = np.flatnonzero(defined)
    return QueryScores(users, values[users])


class BeyondEvaluation(NamedTuple):
    """Result of :func:`evaluate`: per-user values (NaN where a metric is undefined for
    the user) of the per-user metrics, and one value per metric in ``mean`` (the mean over
    the users where defined, or the collection-level value).

    Attributes
    ----------
    users : ndarray of int of shape (n_users,)
        The users (row numbers of ``recommended``).
    per_user : dict of str -> ndarray of shape (n_users,)
        Each per-user metric's values, NaN where it is undefined for the user.
    mean : dict of str -> float
        Each metric's value: the mean over the users where defined, or the
        collection-level value.
    """

    users: np.ndarray
    per_user: dict
    mean: dict


#: Which inputs each metric reads, by keyword.
_READS = {name: reads for name, (_, _, reads) in BEYOND_METRICS.items()}


_OPTIONAL = {"novelty": ("n_interactions",), "long_tail_share": ("tail",),
             "intra_list_similarity": ("similarity",), "intra_list_diversity": ("similarity",),
             "serendipity": ("relevance",), "user_coverage": ("n_users",),
             "distributional_coverage": ("convention",)}


def evaluate(recommended, metrics=None, **inputs):
    """Several beyond-accuracy metrics of the same lists at once.

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, k)
        Each user's list of item indices, best first, ``-1`` padding.
    metrics : list of str, default=None
        Names from :data:`BEYOND_METRICS`; None: every metric whose inputs are given.
    **inputs
        ``n_items``, ``item_popularity``, ``item_features``, ``history`` and the
        metrics' options (``tail``, ``n_interactions``, ``relevance``, ...).

    Returns
    -------
    result : BeyondEvaluation

    Examples
    --------
    >>> from skrank.beyond import evaluate
    >>> res = evaluate([[0, 1], [1, 2]], n_items=4, item_popularity=[3, 2, 1, 0])
    >>> sorted(res.mean)[:3], res.mean["catalog_coverage"], res.per_user["average_popularity"]
    (['average_popularity', 'catalog_coverage', 'distributional_coverage'], 0.75, array([2.5, 1.5]))
    """
    func = "beyond.evaluate"
    if metrics is None:
        metrics = [name for name, reads in _READS.items()
                   if all(inputs.get(r) is not None for r in reads)]
    elif isinstance(metrics, str):
        metrics = [metrics]
    unknown = [m for m in metrics if m not in BEYOND_METRICS]
    if unknown:
        raise InvalidParameterError(f"{func}: metrics must be names from "
                                    f"{', '.join(map(repr, BEYOND_METRICS))}. Got "
                                    f"{unknown[0]!r} instead.")
    known = {r for reads in _READS.values() for r in reads} | {
        o for opts in _OPTIONAL.values() for o in opts}
    extra = sorted(set(inputs) - known)
    if extra:
        raise InvalidParameterError(f"{func}: got unexpected input(s) {', '.join(extra)}. Valid: "
                                    f"{', '.join(sorted(known))}.")
    items, valid = _lists(func, recommended)
    users = np.arange(items.shape[0])
    per_user, mean = {}, {}
    for name in metrics:
        function, level, reads = BEYOND_METRICS[name]
        missing = [r for r in reads if inputs.get(r) is None]
        if missing:
            raise InvalidParameterError(f"{func}: {name} needs {', '.join(missing)}. Got none "
                                        f"instead.")
        kwargs = {k: inputs[k] for k in (*reads, *_OPTIONAL.get(name, ())) if k in inputs}
        if level == "collection":
            mean[name] = function(items, **kwargs)
            continue
        values, defined = _PER_USER[name](func, items, valid, kwargs)
        per_user[name] = np.where(defined, values, np.nan)
        mean[name] = _mean_over_users(values, defined, name)
    return BeyondEvaluation(users, per_user, mean)
