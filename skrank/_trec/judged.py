"""bpref, infAP and judged@k on arrays: the ``judged`` mask and the labels turned into
trec_eval's relevance codes, ranked once per (tie policy, threshold) and handed to
the kernels of :mod:`skrank._trec.measures` (the executor their declarations name).
"""

import numpy as np

from .._core.checks import _describe
from .._engine.ranking import rank_queries
from .data import NONPOOL, TrecRanking, UNJUDGED
from .measures import _bpref, _k_infap
from .._engine.xp import namespace


def bpref_kernel(r):
    return _bpref(r)


def infap_kernel(r):
    return _k_infap(r, ())


def judged_at_k_kernel(r, *, k, convention="trec_eval"):
    if convention == "ir_measures":  # any qrels entry (-1 too), over the ranked depth
        depth = np.minimum(r.num_ret, k).astype(np.float64)
        in_qrels = r.count(r.rel != NONPOOL, k).astype(np.float64)
        return np.divide(in_qrels, depth, out=np.zeros_like(depth), where=depth > 0)
    return r.count(r.rel >= 0, k) / float(k)   # trec_eval's 1 - unj_k


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


#: Options that shape trec_eval's ranking of :func:`judged_columns` (the others go to
#: the kernel).
RANKING_OPTIONS = ("ties", "threshold")


def judged_columns(func, calls, prepared):
    """``(qids, [values of each call])`` of calls of metrics that declare
    ``executor=judged_columns`` on prepared arrays: one trec_eval ranking per (tie
    policy, threshold), shared by the calls that read it; each call's declared
    kernel computes its values on it.  A :class:`~skrank._trec.data.TrecRanking`
    given as the input ``trec_ranking`` (trec_eval mode) is read instead."""
    given = prepared.inputs.get("trec_ranking")   # trec_eval mode: its ranking, at its -l
    arrays = prepared.arrays
    if given is None and namespace(arrays[0], arrays[1]) is not None:
        raise TypeError(
            f"{func}: bpref, infAP and judged@k run on NumPy arrays only; the array-API "
            f"(device) path covers the metrics of skrank.METRICS. Got "
            f"{type(arrays[1]).__module__.partition('.')[0]} arrays. Pass host arrays, e.g. "
            f"tensor.cpu().numpy()."
        )
    if given is None:
        judged = prepared.inputs.get("judged")
        judged = _check_judged(func, None if judged is None else np.ravel(judged),
                               arrays[0].shape[0])
    rankings, out = {}, []
    for call in calls:
        params = call.options
        threshold = params.get("threshold", 1)   # judged@k reads no level
        key = (params["ties"], threshold)
        if key not in rankings:
            rankings[key] = given if given is not None else _codes_ranking(
                func, arrays, judged, threshold, params["ties"])
        kernel_options = {name: value for name, value in params.items()
                          if name not in RANKING_OPTIONS}
        out.append(call.spec.kernel(rankings[key], **kernel_options))
    qids = next(iter(rankings.values())).qids
    return qids, out
