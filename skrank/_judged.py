"""Metrics for incomplete judgements: bpref, infAP and judged@k.

These need to know which documents were judged, which ``y_true`` alone cannot
say (an unjudged document is not a non-relevant one).  A ``judged`` boolean
mask says it, as ``retrieved`` says which judged documents the system did not
retrieve.  The values are trec_eval's (``bpref``, ``infAP``; ``1 - unj`` on long rankings):
the arrays are turned into trec_eval's relevance codes and the kernels of
:mod:`skrank._trec_measures` compute them.
"""

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable

import numpy as np

from ._grouping import rank_queries
from ._trec_data import NONPOOL, UNJUDGED, TrecRanking
from ._trec_measures import _bpref, _k_infap
from . import _params as P
from ._metrics import Declared
from ._validation import _describe

#: trec_eval's kernels rank one order of the tied documents: no tie average.
_TIES = P.TIES.replace(
    default="pessimistic", supported=("pessimistic", "optimistic", "stable"),
    unsupported="the judged metrics rank one order of tied documents (trec_eval's kernels) "
                "and have no average over their orderings.",
    description="Order of documents with equal scores: least relevant first, most\n"
                "relevant first, or input order.  (trec_eval orders them by docno.)",
    valid=("pessimistic", "optimistic", "stable"), invalid=("average", "bogus", None))

_RETRIEVED = P.RETRIEVED.replace(
    description="False marks a judged document the system did not retrieve: it counts\n"
                "in R and N but takes no rank.  None means every row was retrieved.")

@dataclass(frozen=True)
class JudgedSpec(Declared):
    """Declaration of a metric that takes ``judged=`` (bpref, infap, judged@k): its
    options as :class:`~skrank._params.Param` and its public function, as a
    :class:`~skrank._metrics.MetricSpec` declares them, so that the checks, the
    signature and docstring tests, :class:`skrank._plan.MetricCall` and the plan
    treat it as any other metric.  Not in :data:`skrank.METRICS`: these are no
    scorer names (a scorer cannot be given ``judged=``); ``evaluate`` and
    ``per_query_scores`` take them."""

    name: str
    function: Callable
    summary: str
    params: tuple = ()
    after_options: tuple = (_RETRIEVED, P.SAMPLE_WEIGHT)
    trec_names: MappingProxyType = field(default_factory=dict)
    aggregate: str = "mean"
    bounds: tuple = (0.0, 1.0)
    y_true_note: str = ("A negative label marks a document in the pool but not judged\n"
                        "(trec_eval's -1).")
    before_options = (P.QID, P.JUDGED)

    @property
    def variants(self):
        return {self.name: {}}

    @property
    def stems(self):
        """Every name of the metric that evaluate() reads (its own, its trec_eval ones)."""
        return (self.name, *[n for n in self.trec_names if n != self.name])


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
    from ._array_api import namespace

    if namespace(arrays[0], arrays[1]) is not None:
        raise TypeError(
            f"{func}: bpref, infAP and judged@k run on NumPy arrays only; the array-API "
            f"(device) path covers the metrics of skrank.METRICS. Got "
            f"{type(arrays[1]).__module__.partition('.')[0]} arrays. Pass host arrays, e.g. "
            f"tensor.cpu().numpy()."
        )
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
        elif params.get("convention", "trec_eval") == "ir_measures":
            k = params["k"]
            depth = np.minimum(r.num_ret, k).astype(np.float64)
            in_qrels = r.count(r.rel != NONPOOL, k).astype(np.float64)
            out.append(np.divide(in_qrels, depth, out=np.zeros_like(depth), where=depth > 0))
        else:
            k = params["k"]
            out.append(r.count(r.rel >= 0, k) / float(k))
    qids = next(iter(rankings.values())).qids
    return qids, out


def _score(metric, arguments):
    """The score of a public judged metric function called with ``arguments`` (its locals)."""
    from ._plan import MetricCall, mean

    spec = JUDGED_SPECS[metric]
    func = spec.function.__name__
    options = {key: value for key, value in arguments.items() if key not in P.ARRAY_ARGUMENTS}
    call = MetricCall.of(spec, options, func=func)
    return mean(func, call, arguments["y_true"], arguments["y_score"], arguments["qid"],
                arguments.get("retrieved"), None, arguments["sample_weight"],
                judged=arguments["judged"])


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
    return _score("bpref", locals())


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
    return _score("infap", locals())


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
    return _score("judged", locals())


#: The metrics that take ``judged=``: the sibling of :data:`skrank.METRICS` (see
#: :class:`JudgedSpec`).  Order here is the order of every list shown to users.
JUDGED_SPECS = MappingProxyType({spec.name: spec for spec in (
    JudgedSpec("bpref", bpref_score, "binary preference", params=(P.THRESHOLD, _TIES),
               trec_names={"bpref": {}}),
    JudgedSpec("infap", infap_score, "inferred average precision",
               params=(P.THRESHOLD, _TIES), trec_names={"infAP": {}}),
    JudgedSpec("judged", judged_at_k_score, "share of the top k that was judged",
               params=(P.K_REQUIRED, _TIES, P.JUDGED_CONVENTION),
               after_options=(P.SAMPLE_WEIGHT,)),
)})

for _spec in JUDGED_SPECS.values():
    _spec.fill_docstring()
del _spec

JUDGED_METRICS = {name: spec.function for name, spec in JUDGED_SPECS.items()}
