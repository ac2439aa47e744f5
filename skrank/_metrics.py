"""The public metric functions: real signatures, a one-line body each, and
docstrings whose Parameters come from their declarations in
:mod:`skrank._declare.table`; and :func:`per_query_scores`.
"""

from typing import NamedTuple

import numpy as np

from ._core.checks import InvalidParameterError, _describe
from ._declare.table import METRICS, bind_functions
from ._declare import params as P
from ._plan import MetricCall, mean, _parse_item, per_query
from ._declare.names import NAMES_LISTED, did_you_mean_hint


class QueryScores(NamedTuple):
    """Per-query values of a metric.

    Attributes
    ----------
    qid : ndarray of shape (n_queries,)
        Query ids (sorted when orderable); 2-D input gets row numbers.
    score : ndarray of shape (n_queries,)
        The metric for each query after the ``no_relevant`` policy
        (queries skipped by ``no_relevant="skip"`` are left out).

    With PyTorch, CuPy or other array-API input, ``score`` is an array of that
    namespace on the input's device, and ``qid`` too when the ids were given as
    one (see ``docs/array_api.md``).
    """

    qid: np.ndarray
    score: np.ndarray


def score(name, arguments):
    """The score of the public function of metric ``name`` called with ``arguments``
    (its locals): the arrays, its declared extra ``inputs``, and its options as
    declared.  Its call is planned and executed (see :mod:`skrank._plan`)."""

    spec = METRICS[name]
    func = spec.function_name
    options = {key: value for key, value in arguments.items() if key not in P.ARRAY_ARGUMENTS}
    return mean(func, MetricCall.of(spec, options, func=func), arguments["y_true"],
                arguments["y_score"], arguments["qid"], arguments.get("retrieved"),
                arguments.get("exclude"), arguments["sample_weight"],
                inputs={input_name: arguments[input_name] for input_name in spec.inputs})


def cg_score(y_true, y_score, *, qid=None, k=None, gain="linear", ties="average",
             retrieved=None, exclude=None, sample_weight=None):
    """Cumulative gain: the sum of the gains of the top ``k`` documents.

    ``CG@k = sum_{{i <= k}} gain(rel_i)``, averaged over queries.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import cg_score
    >>> cg_score([3, 2, 0, 1], [0.1, 0.9, 0.5, 0.3], qid=[1, 1, 1, 1], k=2)
    2.0
    """
    return score("cg", locals())


def dcg_score(y_true, y_score, *, qid=None, k=None, gain="linear", log_base=2,
              ties="average", retrieved=None, exclude=None, sample_weight=None):
    """Discounted cumulative gain.

    ``DCG@k = sum_{{i <= k}} gain(rel_i) / log_b(i + 1)`` with ranks ``i`` from 1,
    averaged over queries.  With 2-D input, ``gain="linear"`` and
    ``ties="average"`` it equals :func:`sklearn.metrics.dcg_score`.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    See Also
    --------
    ndcg_score : DCG divided by the DCG of the ideal ranking.

    Examples
    --------
    >>> from skrank import dcg_score
    >>> y_true = [3, 2, 3, 0, 1, 2]
    >>> y_score = [6, 5, 4, 3, 2, 1]          # already in ranked order
    >>> round(dcg_score(y_true, y_score, qid=[0] * 6), 3)
    6.861
    >>> round(dcg_score(y_true, y_score, qid=[0] * 6, gain="exponential"), 3)
    13.848
    """
    return score("dcg", locals())


def ndcg_score(y_true, y_score, *, qid=None, k=None, gain="linear", ties="average",
               no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Normalized discounted cumulative gain.

    ``nDCG@k = DCG@k / IDCG@k`` where ``IDCG@k`` is the DCG@k of the query's
    own labels sorted in decreasing order of gain (including judged documents
    that were not retrieved, see ``retrieved``): the best DCG@k any ordering
    reaches.  Averaged over queries.  With 2-D
    input and the defaults it equals :func:`sklearn.metrics.ndcg_score`.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import ndcg_score
    >>> y_true = [3, 2, 0, 1, 0, 1]
    >>> y_score = [0.1, 0.9, 0.5, 0.8, 0.3, 0.2]
    >>> qid = ["a", "a", "a", "b", "b", "b"]
    >>> round(ndcg_score(y_true, y_score, qid=qid), 4)
    0.8705
    >>> round(ndcg_score(y_true, y_score, qid=qid, k=1, gain="exponential"), 4)
    0.7143

    The same two queries as rows of 2-D arrays:

    >>> round(ndcg_score([[3, 2, 0], [1, 0, 1]], [[.1, .9, .5], [.8, .3, .2]]), 4)
    0.8705
    """
    return score("ndcg", locals())


def precision_at_k_score(y_true, y_score, *, qid=None, k, threshold=1, denominator="k",
                         ties="average", retrieved=None, exclude=None, sample_weight=None):
    """Precision at k: the fraction of the top ``k`` ranks holding a relevant document.

    ``P@k = #{{relevant in top k}} / k`` (trec_eval ``P_k``), also when a query
    has fewer than ``k`` documents.  Averaged over queries.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import precision_at_k_score
    >>> y_true, y_score = [1, 0, 0], [0.9, 0.5, 0.1]
    >>> precision_at_k_score(y_true, y_score, qid=[0, 0, 0], k=5)
    0.2
    >>> round(precision_at_k_score(y_true, y_score, qid=[0, 0, 0], k=5, denominator="min"), 4)
    0.3333
    """
    return score("precision", locals())


def recall_at_k_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties="average",
                      no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Recall at k: the fraction of a query's relevant documents in the top ``k``.

    ``recall@k = #{{relevant in top k}} / R`` with ``R`` the number of relevant
    documents of the query, retrieved or not (trec_eval ``recall_k``).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import recall_at_k_score
    >>> recall_at_k_score([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.1], qid=[0] * 4, k=2)
    0.3333333333333333
    """
    return score("recall", locals())


def hit_rate_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties="average",
                   no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Hit rate (success) at k: 1 if a relevant document is in the top ``k``, else 0.

    trec_eval's ``success_k``.  With ``ties="average"`` a query whose cutoff
    falls inside a tie group gets the probability of a hit.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import hit_rate_score
    >>> hit_rate_score([0, 1, 0, 0], [0.9, 0.8, 0.7, 0.1], qid=[0] * 4, k=1)
    0.0
    >>> hit_rate_score([0, 1, 0, 0], [0.9, 0.9, 0.7, 0.1], qid=[0] * 4, k=1)
    0.5
    """
    return score("hit_rate", locals())


def r_precision_score(y_true, y_score, *, qid=None, threshold=1, ties="average",
                      no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """R-precision: precision at rank ``R``, the number of relevant documents of the query.

    trec_eval's ``Rprec``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import r_precision_score
    >>> r_precision_score([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], qid=[0] * 4)
    0.5
    """
    return score("r_precision", locals())


def map_score(y_true, y_score, *, qid=None, k=None, threshold=1, denominator="R",
              ties="average", no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Mean average precision.

    ``AP@k = (1 / D) * sum_{{i <= k, rel_i relevant}} P@i`` where ``D = R``,
    the number of relevant documents of the query (trec_eval ``map`` and
    ``map_cut_k``, ranx), or ``min(R, k)`` (LightGBM, XGBoost, Kaggle's MAP@k).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import map_score
    >>> y_true = [1, 0, 1, 1]                 # relevant at ranks 1, 3 and 4
    >>> y_score = [0.9, 0.8, 0.7, 0.6]
    >>> round(map_score(y_true, y_score, qid=[0] * 4), 4)   # (1 + 2/3 + 3/4) / 3
    0.8056
    >>> round(map_score(y_true, y_score, qid=[0] * 4, k=2), 4)   # 1 / 3
    0.3333
    >>> map_score(y_true, y_score, qid=[0] * 4, k=2, denominator="min")   # 1 / 2
    0.5
    """
    return score("map", locals())


def mrr_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties="average",
              no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Mean reciprocal rank of the first relevant document.

    ``RR@k = 1 / rank`` of the first relevant document, 0 when there is none
    in the top ``k`` (trec_eval ``recip_rank`` without a cutoff).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import mrr_score
    >>> mrr_score([0, 0, 1, 1, 0, 0], [3, 2, 1, 3, 2, 1], qid=[0, 0, 0, 1, 1, 1])   # (1/3 + 1) / 2
    0.6666666666666666
    """
    return score("mrr", locals())


def err_score(y_true, y_score, *, qid=None, k=None, max_grade, ties="pessimistic",
              retrieved=None, exclude=None, sample_weight=None):
    """Expected reciprocal rank (Chapelle et al., 2009).

    ``ERR@k = sum_{{i <= k}} (1 / i) R_i prod_{{j < i}} (1 - R_j)`` with stopping
    probabilities ``R_i = (2**rel_i - 1) / 2**max_grade``.

    ERR has no closed-form average over the orderings of tied documents, so
    ``ties="average"`` is rejected; the default is the deterministic,
    conservative ``"pessimistic"``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import err_score
    >>> round(err_score([3, 2, 0], [0.1, 0.9, 0.5], qid=[0] * 3, k=3, max_grade=4), 5)
    0.30599
    """
    return score("err", locals())


def rbp_score(y_true, y_score, *, qid=None, k=None, p=0.8, threshold=1, gain="binary",
              ties="average", retrieved=None, exclude=None, sample_weight=None):
    """Rank-biased precision (Moffat & Zobel, 2008).

    ``RBP = (1 - p) * sum_{{i <= k}} gain_i * p**(i - 1)``: the expected
    rate of relevance seen by a user who moves on from each rank with
    probability ``p``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import rbp_score
    >>> round(rbp_score([1, 0, 1], [3, 2, 1], qid=[0] * 3, p=0.5), 4)   # 0.5 * (1 + 0.25)
    0.625
    >>> round(rbp_score([2, 0, 4], [3, 2, 1], qid=[0] * 3, p=0.5, gain="trec"), 4)
    0.375
    """
    return score("rbp", locals())


def bpref_score(y_true, y_score, *, qid=None, judged=None, threshold=1, ties="pessimistic",
                retrieved=None, sample_weight=None):
    """Binary preference (Buckley & Voorhees, 2004), as trec_eval's ``bpref``.

    For each relevant document ranked, the share of the first R judged
    non-relevant documents ranked above it is a loss:
    ``bpref = 1/R * sum_r (1 - min(n_r, R) / min(N, R))``, with R the relevant
    documents, N the judged non-relevant ones and ``n_r`` the judged
    non-relevant documents ranked above ``r``.  Unjudged documents are ignored.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import bpref_score
    >>> # relevant, unjudged, non-relevant, relevant: the second relevant loses 1/min(1, 2)
    >>> bpref_score([1, 0, 0, 1], [4, 3, 2, 1], qid=[0] * 4,
    ...             judged=[True, False, True, True])
    0.5
    """
    return score("bpref", locals())


def infap_score(y_true, y_score, *, qid=None, judged=None, threshold=1, ties="pessimistic",
                retrieved=None, sample_weight=None):
    """Inferred average precision (Yilmaz & Aslam, 2006), as trec_eval's ``infAP``.

    Average precision estimated from a sample of judged documents: documents
    outside the pool (``judged=False``) count as non-relevant, those in the
    pool but not judged (negative labels) are assumed relevant in the same
    proportion as the judged ones above them.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import infap_score
    >>> round(infap_score([1, 0, 1], [3, 2, 1], qid=[0] * 3), 4)    # = AP when all judged
    0.8333
    """
    return score("infap", locals())


def judged_at_k_score(y_true, y_score, *, qid=None, judged=None, k, ties="pessimistic",
                      convention="trec_eval", sample_weight=None):
    """Share of the top k documents that were judged.

    By default (``convention="trec_eval"``) ``judged@k = #judged in the top k
    / k``: a ranking shorter than k is filled with unjudged documents, a
    negative label (trec_eval's -1) is not judged, and ``1 - judged@k`` is
    trec_eval's ``unj_k``.  ``convention="ir_measures"`` is ir_measures'
    ``Judged@k``: any document of the qrels (-1 included) counts as judged, and
    the share is of ``min(k, number of ranked documents)`` (on a ranking of 2
    judged documents, judged@5 is 0.4 by default and 1.0 in ir_measures'
    convention).  RAG and dense-retrieval evaluations watch it: a low value
    means the other numbers rest on guesses.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import judged_at_k_score
    >>> judged_at_k_score([1, 0, 0], [3, 2, 1], qid=[0] * 3, k=2,
    ...                   judged=[True, False, True])
    0.5
    >>> judged_at_k_score([1, 0], [2, 1], qid=[0] * 2, k=5)        # 2 judged of 5 places
    0.4
    >>> judged_at_k_score([1, 0], [2, 1], qid=[0] * 2, k=5, convention="ir_measures")
    1.0
    """
    return score("judged", locals())


def gauc_score(y_true, y_score, *, qid=None, threshold=1, weighting="uniform",
               ties="average", no_relevant="zero", retrieved=None, exclude=None,
               sample_weight=None):
    """Group AUC: the ROC AUC of each query's ranking, averaged over queries.

    Per query, ``AUC = #{{(positive, negative): positive scored higher}} / (P * N)``
    with a tied pair counted one half (the Mann-Whitney statistic), where the
    positives are the ranked documents with label ``>= threshold``.  With the
    defaults each query's value equals :func:`sklearn.metrics.roc_auc_score`
    of its rows, and the mean is torchmetrics' ``RetrievalAUROC``; recommender
    papers (GAUC, Zhu et al. 2017) weigh each user by impressions or clicks
    (``weighting``).  Judged documents that were not retrieved have no score and
    take no part.  A query with one class only (no positive or no negative) is
    undefined and follows ``no_relevant``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import gauc_score
    >>> y_true = [1, 0, 1, 0, 0, 1, 0, 0]
    >>> y_score = [0.9, 0.8, 0.6, 0.5, 0.4, 0.4, 0.2, 0.1]
    >>> qid = [1, 1, 1, 1, 2, 2, 2, 2]
    >>> # query 1: 0.9 beats 0.8 and 0.5, 0.6 beats 0.5 only -> 3/4;
    >>> # query 2: the positive ties one negative and beats two -> (2 + 1/2) / 3
    >>> round(gauc_score(y_true, y_score, qid=qid), 6)   # (3/4 + 5/6) / 2
    0.791667
    >>> round(gauc_score(y_true, y_score, qid=qid, weighting="positives"), 6)   # (2*3/4 + 5/6) / 3
    0.777778
    """
    return score("gauc", locals())


bind_functions([spec for spec in METRICS.values() if spec.module == "skrank"], globals())


def per_query_scores(metric, y_true, y_score, *, qid=None, retrieved=None, exclude=None,
                     **params):
    """Per-query values of a metric, with their query ids.

    Parameters
    ----------
    {metric}
    y_true, y_score, qid, retrieved, exclude
        As in the metric's function.
    **params
        The metric's options (``k``, ``gain``, ``ties``, ``no_relevant``, ...);
        ``judged=`` for ``"bpref"``, ``"infap"`` and ``"judged"`` (judged@k).

    Returns
    -------
    result : QueryScores
        Named tuple ``(qid, score)`` of arrays over queries.  Queries skipped by
        ``no_relevant="skip"`` are left out; the mean of ``score`` is the value
        the metric function returns.

    Examples
    --------
    >>> from skrank import per_query_scores
    >>> res = per_query_scores("ndcg", [1, 0, 0, 0], [0.9, 0.1, 0.5, 0.4],
    ...                        qid=["q1", "q1", "q2", "q2"])
    >>> res.qid.tolist(), res.score.tolist()
    (['q1', 'q2'], [1.0, 0.0])
    """

    inputs = {name: params.pop(name, None) for name in _INPUTS}
    if not isinstance(metric, str):
        raise InvalidParameterError(
            f"per_query_scores: metric must be one of {', '.join(map(repr, METRICS))}. "
            f"Got {_describe(metric)} instead."
        )
    try:
        # A plain stem is the function's call (ERR's max_grade stays required); any
        # other name is read by the grammar every entry point shares.
        if metric in METRICS:
            spec = METRICS[metric]
        else:
            spec, fixed = _parse_item(metric, "per_query_scores", False, _INPUTS,
                                      cutoff_given=params.get("k") is not None)
            overlap = sorted(set(fixed) & set(params) - {"max_grade"})
            if overlap:
                raise InvalidParameterError(
                    f"per_query_scores: {metric!r} already sets {', '.join(overlap)}; pass the "
                    f"plain metric name ({spec.name!r}) with the options instead.")
            params = {**fixed, **params}
    except InvalidParameterError as exc:
        if not str(exc).startswith("per_query_scores: unknown metric name"):
            raise

        raise InvalidParameterError(
            f"per_query_scores: metric must be one of {', '.join(map(repr, METRICS))}. "
            f"Got {_describe(metric)} instead.{did_you_mean_hint(metric, inputs=_INPUTS)} "
            f"Names with a cutoff and options work too, e.g. 'ndcg_exp@10' or "
            f"'map(denominator=min)@10' ({NAMES_LISTED})."
        ) from None
    func = spec.function_name if spec.scorer and spec.module == "skrank" else "per_query_scores"
    if spec.aggregate == "collection":   # issue 29: coverage, Gini index
        raise InvalidParameterError(
            f"per_query_scores: {spec.name} is one value of the whole collection, not one per "
            f"query. Got {metric!r} instead: read it from skrank.evaluate(...).mean.")
    call = MetricCall.of(spec, params, func=func)
    column = per_query(func, call, y_true, y_score, qid, retrieved, exclude,
                       inputs={name: inputs[name] for name in (*spec.inputs,
                                                               *spec.optional_inputs)})
    return QueryScores(column.qid, column.values)


per_query_scores.__doc__ = P.fill_options(per_query_scores.__doc__, [P.METRIC])


#: The extra inputs some metrics declare (``judged``): per_query_scores takes them.
_INPUTS = tuple(dict.fromkeys(name for spec in METRICS.values()
                              for name in (*spec.inputs, *spec.optional_inputs)))
