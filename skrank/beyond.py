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
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from ._engine.beyond import (
    _lists,
    _mean_over_users,
    _per_user_ils,
    _per_user_novelty,
    _per_user_popularity,
    _per_user_serendipity,
    _per_user_tail,
    catalog_coverage_kernel,
    cut_lists,
    distributional_coverage_kernel,
    gini_kernel,
    top_k_lists,
    user_coverage_kernel,
)
from ._core.checks import InvalidParameterError, _describe
from ._metrics import QueryScores
from ._declare.table import METRICS, bind_functions


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


def catalog_coverage(recommended, *, n_items, k=None):
    """Catalog coverage: distinct recommended items over the catalog's ``n_items``.

    microsoft/recommenders' ``catalog_coverage`` divides by the distinct items of
    the training data and RecBole's ``ItemCoverage`` by the dataset's items: pass
    that number as ``n_items``.

    Parameters
    ----------
    {parameters}

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
    k = _checked(func, k=k)["k"]
    return catalog_coverage_kernel(func, *cut_lists(func, recommended, k), n_items=n_items)


def distributional_coverage(recommended, *, k=None, convention="recommenders"):
    """Entropy of the items' share of all recommendations.

    ``convention="recommenders"``: ``-sum_i p_i log2 p_i`` with ``p_i`` the share
    of the recommendations that are item ``i`` (microsoft/recommenders'
    ``distributional_coverage``); ``"recbole"``: the natural-log entropy divided
    by the number of distinct recommended items (RecBole's ``ShannonEntropy``).

    Parameters
    ----------
    {parameters}

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
    k, convention = _checked(func, k=k, convention=convention).values()
    return distributional_coverage_kernel(func, *cut_lists(func, recommended, k),
                                          convention=convention)


def gini_index(recommended, *, n_items, k=None):
    """Gini index of the items' exposure over the whole catalog (RecBole's ``GiniIndex``).

    ``G = sum_i (2 i - n - 1) P_(i) / (n sum_i P_(i))`` with ``P_(1) <= ... <= P_(n)``
    the number of times each of the ``n = n_items`` items is recommended (items
    never recommended count 0): 0 when every item is recommended equally often,
    near 1 when a few items take every slot.

    Parameters
    ----------
    {parameters}

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
    k = _checked(func, k=k)["k"]
    return gini_kernel(func, *cut_lists(func, recommended, k), n_items=n_items)


def user_coverage(recommended, *, k=None, n_users=None):
    """Users who get at least one recommendation, over ``n_users`` (default: the rows).

    Parameters
    ----------
    {parameters}

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
    k = _checked(func, k=k)["k"]
    return user_coverage_kernel(func, *cut_lists(func, recommended, k), n_users=n_users)


def novelty(recommended, *, item_popularity, k=None, n_interactions=None):
    """Mean self-information ``-log2(popularity_i / total)`` of the recommended items.

    ``item_popularity[i]`` is item ``i``'s number of training interactions and
    ``total`` their sum (or ``n_interactions``), as microsoft/recommenders'
    ``novelty`` takes them (Castells et al., 2011).  Per user, the mean over the
    user's list; the result is the mean over users (recommenders' value when all
    lists have the same length).

    Parameters
    ----------
    {parameters}

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
    k, n_interactions = _checked(func, k=k, n_interactions=n_interactions).values()
    items, valid = cut_lists(func, recommended, k)
    return _mean_over_users(*_per_user_novelty(func, items, valid, item_popularity,
                                               n_interactions), func=func)


def average_popularity(recommended, *, item_popularity, k=None):
    """Average recommendation popularity (ARP; RecBole's ``AveragePopularity``): the
    mean training popularity of each user's list, averaged over users.

    Parameters
    ----------
    {parameters}

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
    k = _checked(func, k=k)["k"]
    items, valid = cut_lists(func, recommended, k)
    values, defined = _per_user_popularity(func, items, valid, item_popularity)
    return _mean_over_users(values, defined, func)


def long_tail_share(recommended, *, item_popularity, k=None, tail=0.1):
    """Share of each user's list in the long tail, averaged over users (RecBole's
    ``TailPercentage``; the tail as :func:`tail_items` chooses it, by default the 10%
    least popular items seen in training).

    Parameters
    ----------
    {parameters}

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
    k, tail = _checked(func, k=k, tail=tail).values()
    items, valid = cut_lists(func, recommended, k)
    values, defined = _per_user_tail(func, items, valid, item_popularity, tail)
    return _mean_over_users(values, defined, func)


def intra_list_similarity(recommended, *, item_features=None, k=None, similarity=None):
    """Mean similarity of the distinct pairs of items of each list (Ziegler et al.,
    2005), averaged over the users whose list holds two items or more.

    ``item_features`` (dense, or scipy.sparse) gives cosine similarities; the
    items x users matrix of training interactions gives microsoft/recommenders'
    default ``item_cooccurrence_count`` similarity.  A zero vector has similarity
    0 to every item.  ``similarity(items_a, items_b)`` (arrays of item indices)
    may give any other similarity, one value per pair.

    Parameters
    ----------
    {parameters}

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
    k = _checked(func, k=k)["k"]
    items, valid = cut_lists(func, recommended, k)
    values, defined = _per_user_ils(func, items, valid, item_features, similarity)
    return _mean_over_users(values, defined, func)


def intra_list_diversity(recommended, *, item_features=None, k=None, similarity=None):
    """``1 - intra_list_similarity`` per user (microsoft/recommenders' ``diversity``).

    Parameters
    ----------
    {parameters}

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
    k = _checked(func, k=k)["k"]
    items, valid = cut_lists(func, recommended, k)
    values, defined = _per_user_ils(func, items, valid, item_features, similarity)
    return _mean_over_users(1.0 - values, defined, func)


def serendipity(recommended, *, history, item_features, k=None, relevance=None):
    """Serendipity as microsoft/recommenders defines it (Zhang et al., 2012).

    Per recommended item, ``(1 - mean similarity to the user's history) * relevance``
    (``relevance`` 1 by default, or an array of the shape of ``recommended``);
    per user, the mean over the list; then the mean over the users with a
    history.  ``history`` is a list matrix like ``recommended`` or a
    users x items scipy.sparse matrix of training interactions;
    ``item_features`` as in :func:`intra_list_similarity`.

    Parameters
    ----------
    {parameters}

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
    k = _checked(func, k=k)["k"]
    items, valid = cut_lists(func, recommended, k)
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
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or k < 1:
        raise InvalidParameterError(f"{func}: k must be an int >= 1. Got {_describe(k)} instead.")
    return top_k_lists(func, scores, k, exclude)


#: The beyond-accuracy declarations of the one metric table (:data:`skrank.METRICS`), by
#: name: a view of it, not a table of its own.
BEYOND_METRICS = MappingProxyType({name: spec for name, spec in METRICS.items()
                                   if spec.family == "beyond"})


#: Optional inputs of which a metric that declares both needs one (intra-list metrics).
_ALTERNATIVES = ("item_features", "similarity")


def _checked(func, **options):
    """The options of the function ``func`` checked by its declaration, in its order."""
    return BEYOND_METRICS[func].check_params(func, options)


def _inputs_and_options(func, spec, inputs):
    """The keyword arguments of ``spec``'s kernel from ``inputs`` (its declared inputs,
    optional inputs and options), checked: a required input that is missing, or an
    argument it does not take, is an error."""
    options = {p.name for p in spec.params}
    takes = [p.name for p in spec.signature_params()[1:] if p.name not in options]
    missing = [name for name in spec.inputs if name != "recommendations"
               and inputs.get(name) is None]
    if missing:
        raise InvalidParameterError(f"{func}: {spec.name} needs {' and '.join(missing)}. Got "
                                    f"none instead (never guessed from the lists).")
    kwargs = {name: inputs[name] for name in takes if inputs.get(name) is not None}
    return kwargs, spec.check_params(func, {name: value for name, value in inputs.items()
                                            if name in options})


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
    recommended : array-like of int of shape (n_users, n_positions)
        Each user's list of item indices, best first, ``-1`` padding a shorter list.
    **inputs
        The metric's keyword arguments (``item_popularity``, ``item_features``,
        ``history``, ``k``, ``tail``, ...), as its function takes them.

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
    spec = BEYOND_METRICS.get(metric) if isinstance(metric, str) else None
    if spec is None or spec.aggregate != "mean":
        per_user = [name for name, s in BEYOND_METRICS.items() if s.aggregate == "mean"]
        raise InvalidParameterError(f"{func}: metric must be one of "
                                    f"{', '.join(map(repr, per_user))}. Got {_describe(metric)} "
                                    f"instead.")
    kwargs, options = _inputs_and_options(func, spec, inputs)
    items, valid = cut_lists(func, recommended, options.pop("k"))
    values, defined = spec.kernel(func, items, valid, **kwargs, **options)
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


def evaluate(recommended, metrics=None, **inputs):
    """Several beyond-accuracy metrics of the same lists at once.

    Parameters
    ----------
    recommended : array-like of int of shape (n_users, n_positions)
        Each user's list of item indices, best first, ``-1`` padding.
    metrics : list of str, default=None
        Names from :data:`BEYOND_METRICS`; None: every metric whose inputs are given.
    **inputs
        ``n_items``, ``item_popularity``, ``item_features``, ``history`` and the
        metrics' options (``k``, ``tail``, ``n_interactions``, ``relevance``, ...).

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
    if metrics is None:   # those whose inputs are given (item_features or similarity: one)
        metrics = [name for name, spec in BEYOND_METRICS.items()
                   if all(inputs.get(r) is not None for r in spec.inputs
                          if r != "recommendations")
                   and (not set(_ALTERNATIVES) <= set(spec.optional_inputs)
                        or any(inputs.get(r) is not None for r in _ALTERNATIVES))]
    elif isinstance(metrics, str):
        metrics = [metrics]
    unknown = [m for m in metrics if m not in BEYOND_METRICS]
    if unknown:
        raise InvalidParameterError(f"{func}: metrics must be names from "
                                    f"{', '.join(map(repr, BEYOND_METRICS))}. Got "
                                    f"{unknown[0]!r} instead.")
    known = {p.name for spec in BEYOND_METRICS.values() for p in spec.signature_params()[1:]}
    extra = sorted(set(inputs) - known)
    if extra:
        raise InvalidParameterError(f"{func}: got unexpected input(s) {', '.join(extra)}. Valid: "
                                    f"{', '.join(sorted(known))}.")
    items, valid = _lists(func, recommended)
    users = np.arange(items.shape[0])
    per_user, mean = {}, {}
    for name in metrics:
        spec = BEYOND_METRICS[name]
        kwargs, options = _inputs_and_options(func, spec, {k: v for k, v in inputs.items()
                                                          if k in {p.name for p in
                                                                   spec.signature_params()}})
        k = options.pop("k")
        cut = (items, valid) if k is None else (items[:, :k], valid[:, :k])
        result = spec.kernel(func, *cut, **kwargs, **options)
        if spec.aggregate == "collection":
            mean[name] = result
            continue
        values, defined = result
        per_user[name] = np.where(defined, values, np.nan)
        mean[name] = _mean_over_users(values, defined, name)
    return BeyondEvaluation(users, per_user, mean)


# The functions bind to their declarations (their Parameters sections are generated).
bind_functions(BEYOND_METRICS.values(), globals())
