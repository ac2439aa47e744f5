"""Metrics for incomplete judgements: bpref, infAP and judged@k.

These need to know which documents were judged, which ``y_true`` alone cannot
say (an unjudged document is not a non-relevant one).  A ``judged`` boolean
mask says it, as ``retrieved`` says which judged documents the system did not
retrieve.  The values are trec_eval's (``bpref``, ``infAP``; ``1 - unj`` on long rankings):
the arrays are turned into trec_eval's relevance codes and the kernels of
:mod:`skrank._trec_measures` compute them.
"""

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ._grouping import rank_queries
from ._trec_data import NONPOOL, UNJUDGED, TrecRanking
from ._trec_measures import _bpref, _k_infap
from ._validation import InvalidParameterError, _describe, check_choice, check_k, check_real

JUDGED_TIES = ("pessimistic", "optimistic", "stable")


@dataclass(frozen=True)
class JudgedSpec:
    """Declaration of a metric that takes ``judged=`` (its options and their checks), so
    that :class:`skrank._plan.MetricCall` and the plan treat it as any other metric."""

    name: str
    parameters: MappingProxyType
    k: str = "none"

    @property
    def variants(self):
        return {self.name: {}}

    def check_params(self, func, params):
        """Validate options; return them complete (defaults filled in)."""
        unknown = set(params) - set(self.parameters)
        if unknown:
            raise InvalidParameterError(f"{func}: got unexpected option(s) "
                                        f"{', '.join(map(repr, sorted(unknown)))} for {self.name}.")
        out = {**self.parameters, **params}
        for name, value in out.items():
            if name == "ties":
                check_choice(func, "ties", value, JUDGED_TIES)
            elif name == "threshold":
                out[name] = check_real(func, "threshold", value)
            elif name == "k":
                out[name] = check_k(func, value, required=True)
        return out


JUDGED_SPECS = MappingProxyType({spec.name: spec for spec in (
    JudgedSpec("bpref", MappingProxyType({"threshold": 1, "ties": "pessimistic"})),
    JudgedSpec("infap", MappingProxyType({"threshold": 1, "ties": "pessimistic"})),
    JudgedSpec("judged", MappingProxyType({"k": None, "ties": "pessimistic"}), k="required"),
)})


def _check_judged(func, judged, n):
    if judged is None:
        return np.ones(n, dtype=bool)
    arr = np.asarray(judged)
    if arr.ndim != 1 or arr.dtype.kind != "b":
        raise TypeError(
            f"{func}: judged must be None or a 1-D boolean mask of length n_samples (False "
            f"marks a retrieved document nobody judged). Got {_describe(arr)} instead.")
    if arr.shape[0] != n:
        raise ValueError(f"{func}: y_true and judged must have the same length. Got {n} and "
                         f"{arr.shape[0]}.")
    return arr


def _codes_ranking(func, arrays, judged, threshold, ties):
    """trec_eval's view of checked arrays: the relevance code of each ranked document."""
    y_true, y_score, qid, shape, retrieved = arrays
    # A negative label is "in the pool but unjudged", judged=False "not in the pool".
    codes = np.where(judged, np.where(y_true < 0, UNJUDGED, y_true), NONPOOL).astype(np.float64)
    ranking = rank_queries(func, codes, y_score, qid, shape, retrieved, ties)
    n_q = ranking.n_queries
    query = ranking.query
    all_query = ranking.all_query
    labels = ranking.all_labels
    r = TrecRanking(qids=ranking.qids, rel=ranking.labels, query=query,
                    num_ret=ranking.n_kept.astype(np.int64), rel_levels=np.zeros((n_q, 1)),
                    level=threshold, placeholder=np.zeros(n_q, dtype=bool), runid="",
                    all_qrels_rel=labels)
    counted = labels >= 0
    r.num_rel = np.bincount(all_query[counted & (labels >= threshold)],
                            minlength=n_q).astype(np.int64)
    r.num_nonrel = np.bincount(all_query[counted & (labels < threshold)],
                               minlength=n_q).astype(np.int64)
    return r


def judged_columns(func, calls, prepared):
    """``(qids, [values of each call])`` of judged metric calls on prepared arrays: one
    trec_eval ranking per (tie policy, threshold), shared by the calls that read it."""
    arrays = prepared.arrays
    judged = prepared.judged
    judged = _check_judged(func, None if judged is None else np.ravel(judged),
                           arrays[0].shape[0])
    rankings, out = {}, []
    for call in calls:
        params = call.options
        threshold = params.get("threshold", 1)
        key = (params["ties"], threshold)
        if key not in rankings:
            rankings[key] = _codes_ranking(func, arrays, judged, threshold, params["ties"])
        r = rankings[key]
        if call.metric == "bpref":
            out.append(_bpref(r))
        elif call.metric == "infap":
            out.append(_k_infap(r, ()))
        else:
            k = params["k"]
            out.append(r.count(r.rel >= 0, k) / float(k))
    qids = next(iter(rankings.values())).qids
    return qids, out


def _mean(func, metric, y_true, y_score, qid, judged, retrieved, sample_weight, **params):
    from ._plan import MetricCall, mean

    call = MetricCall.of(JUDGED_SPECS[metric], params, func=func)
    return mean(func, call, y_true, y_score, qid, retrieved, None, sample_weight, judged=judged)


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
    y_true : array-like of shape (n_samples,) or (n_queries, n_documents)
        Relevance labels of the judged documents; a negative label marks a
        document in the pool but not judged (trec_eval's -1).
    y_score : array-like of the same shape
        Scores; each query is ranked by decreasing score.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, required with 1-D input.
    judged : array-like of bool of shape (n_samples,), default=None
        False marks a retrieved document without any judgement (its label is
        ignored).  None means every document was judged.
    threshold : float, default=1
        A judged document is relevant when its label is ``>= threshold``.
    ties : {"pessimistic", "optimistic", "stable"}, default="pessimistic"
        Order of documents with equal scores: least relevant first, most
        relevant first, or input order.  (trec_eval orders them by docno.)
    retrieved : array-like of bool of shape (n_samples,), default=None
        False marks a judged document the system did not retrieve: it counts
        in R and N but takes no rank.
    sample_weight : array-like of shape (n_samples,) or (n_queries,), default=None
        Query weights for a weighted mean (see :func:`skrank.ndcg_score`).

    Returns
    -------
    score : float
        Mean over queries (a query without relevant document scores 0).
        :func:`skrank.per_query_scores` with ``"bpref"`` gives the per-query values.

    Examples
    --------
    >>> from skrank import bpref_score
    >>> # relevant, unjudged, non-relevant, relevant: the second relevant loses 1/min(1, 2)
    >>> bpref_score([1, 0, 0, 1], [4, 3, 2, 1], qid=[0] * 4,
    ...             judged=[True, False, True, True])
    0.5
    """
    return _mean("bpref_score", "bpref", y_true, y_score, qid, judged, retrieved, sample_weight,
                 threshold=threshold, ties=ties)


def infap_score(y_true, y_score, *, qid=None, judged=None, threshold=1, ties="pessimistic",
                retrieved=None, sample_weight=None):
    """Inferred average precision (Yilmaz & Aslam, 2006), as trec_eval's ``infAP``.

    Average precision estimated from a sample of judged documents: documents
    outside the pool (``judged=False``) count as non-relevant, those in the
    pool but not judged (negative labels) are assumed relevant in the same
    proportion as the judged ones above them.

    Parameters
    ----------
    y_true, y_score, qid, judged, threshold, ties, retrieved, sample_weight
        As in :func:`bpref_score`.

    Returns
    -------
    score : float
        Mean over queries (a query without relevant document scores 0).

    Examples
    --------
    >>> from skrank import infap_score
    >>> round(infap_score([1, 0, 1], [3, 2, 1], qid=[0] * 3), 4)    # = AP when all judged
    0.8333
    """
    return _mean("infap_score", "infap", y_true, y_score, qid, judged, retrieved, sample_weight,
                 threshold=threshold, ties=ties)


def judged_at_k_score(y_true, y_score, *, qid=None, k, judged=None, ties="pessimistic",
                      sample_weight=None):
    """Share of the top k documents that were judged (ir_measures' ``Judged@k``).

    ``judged@k = #judged in the top k / k`` (a ranking shorter than k is
    filled with unjudged documents); on rankings of at least k documents,
    ``1 - judged@k`` is trec_eval's ``unj_k``.  RAG and dense-retrieval
    evaluations watch it: a low value means the other numbers rest on guesses.

    Parameters
    ----------
    y_true, y_score, qid, judged, ties, sample_weight
        As in :func:`bpref_score` (a negative label counts as unjudged, as in
        trec_eval).
    k : int >= 1
        Cutoff.

    Returns
    -------
    score : float
        Mean over queries.

    Examples
    --------
    >>> from skrank import judged_at_k_score
    >>> judged_at_k_score([1, 0, 0], [3, 2, 1], qid=[0] * 3, k=2,
    ...                   judged=[True, False, True])
    0.5
    """
    return _mean("judged_at_k_score", "judged", y_true, y_score, qid, judged, None,
                 sample_weight, k=k, ties=ties)


JUDGED_METRICS = {"bpref": bpref_score, "infap": infap_score, "judged": judged_at_k_score}
