"""Per-query vector -> one number, with the policy for undefined queries."""

import warnings

import numpy as np
from .xp import is_device_array, namespace, to_numpy, device_of
from .codes import factorize_qid
from .device import query_weights as query_weights_on_device, factorize


def no_relevant_error(func, qids):
    """The ``no_relevant="raise"`` error naming the queries ``qids``; a plain ValueError
    that keeps the ids in ``no_relevant_qids`` so that a caller holding query codes
    can name the queries (:func:`renamed_no_relevant_error`)."""
    shown = ", ".join(repr(q) for q in qids[:5].tolist()) + (", ..." if qids.size > 5 else "")
    error = ValueError(
        f"{func}: {qids.size} quer{'y has' if qids.size == 1 else 'ies have'} no relevant "
        f"document, so the metric is undefined for them (qid {shown}). Choose what they "
        f"count as with no_relevant='zero' (trec_eval, scikit-learn), 'one' (LightGBM, "
        f"XGBoost), 'skip' or 'nan'."
    )
    error.no_relevant_qids, error.func = qids, func
    return error


def renamed_no_relevant_error(error, qid_labels):
    """``error`` with its query codes replaced by ``qid_labels[code]``, when it is the
    ``no_relevant="raise"`` error; else None."""
    qids = getattr(error, "no_relevant_qids", None)
    return None if qids is None else no_relevant_error(error.func, qid_labels[qids])


def apply_no_relevant(func, qids, values, undefined, no_relevant, weights=None):
    """Apply the ``no_relevant`` policy to a per-query vector.

    Returns ``(qids, values, weights)``; with ``"skip"`` the undefined queries
    are left out of all three (``weights``, the query weights or None).
    """
    if not isinstance(values, np.ndarray):  # PyTorch, CuPy, ... per-query values
        return _apply_no_relevant_on_device(func, qids, values, undefined, no_relevant, weights)
    if undefined is None or not undefined.any():
        return qids, values, weights
    if no_relevant == "raise":
        raise no_relevant_error(func, qids[undefined])
    if no_relevant == "skip":
        kept = ~undefined
        return qids[kept], values[kept], None if weights is None else weights[kept]
    values = values.copy()
    values[undefined] = {"zero": 0.0, "one": 1.0, "nan": np.nan}[no_relevant]
    return qids, values, weights


def _apply_no_relevant_on_device(func, qids, values, undefined, no_relevant, weights):
    """:func:`apply_no_relevant` for device values; host query ids are filtered with a
    host copy of the mask."""

    xp = namespace(values)
    weights = _like(weights, values, xp)
    if undefined is None or not bool(xp.any(undefined)):
        return qids, values, weights
    if no_relevant == "raise":
        apply_no_relevant(func, to_numpy(qids), to_numpy(values), to_numpy(undefined), "raise")
    if no_relevant == "skip":
        kept = xp.nonzero(~undefined)[0]
        kept_qids = (xp.take(qids, kept) if is_device_array(qids)
                     else qids[to_numpy(~undefined)])
        return kept_qids, xp.take(values, kept), None if weights is None else \
            xp.take(weights, kept)
    fill = {"zero": 0.0, "one": 1.0, "nan": float("nan")}[no_relevant]
    return qids, xp.where(undefined, xp.full_like(values, fill), values), weights


def mean_over_queries(func, values, weights=None):
    """Mean over queries, weighted by ``weights`` (one per query) when given:
    ``sum(w_q * v_q) / sum(w_q)``.  NaN with a warning when no query is left."""
    if not isinstance(values, np.ndarray):

        xp = namespace(values)
        if values.shape[0] and weights is None:
            return float(xp.mean(values))
        if values.shape[0]:
            weights = xp.astype(_like(weights, values, xp), values.dtype)
            total = float(xp.sum(weights))
            if total > 0:
                return float(xp.sum(weights * values)) / total
        values = np.zeros(values.shape[0])  # the messages below
        weights = None if weights is None else np.zeros(values.shape[0])
    if values.size == 0:
        from sklearn.exceptions import UndefinedMetricWarning  # scikit-learn's, so its filters apply

        warnings.warn(
            f"{func}: every query was skipped (no query has a relevant document), "
            f"so the mean is undefined; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return float("nan")
    if weights is None:
        return float(np.mean(values))
    total = weights.sum()
    if total <= 0:
        raise ValueError(
            f"{func}: the queries left after no_relevant='skip' have a total sample_weight of "
            f"0, so the weighted mean is undefined. Give some of them a positive weight, or "
            f"use no_relevant='zero'."
        )
    return float(np.dot(weights, values) / total)


def query_weights(func, sample_weight, qid=None, n_queries=None):
    """Check ``sample_weight``; return one weight per query, in the order of the
    ranking's ``qids`` (``factorize_qid``'s order), or None.

    1-D form (``qid`` given): one weight per row, constant within each query,
    as scikit-learn and LightGBM take them.  2-D form (``n_queries`` given):
    one weight per row of the matrices, i.e. per query.
    """
    if sample_weight is None:
        return None

    if is_device_array(sample_weight) or is_device_array(qid):

        def codes_of(ids):

            xp = namespace(sample_weight, ids)
            device = _device(sample_weight if is_device_array(sample_weight) else ids)
            return factorize(func, ids, device, xp)

        return query_weights_on_device(func, sample_weight, qid, n_queries, codes_of,
                                       query_weights)
    weights = np.asarray(sample_weight)
    expected = (n_queries,) if qid is None else (qid.shape[0],)
    form = ("(n_queries,) = one per row of the 2-D y_true" if qid is None
            else "(n_samples,) = one per row of y_true")
    if weights.shape != expected:
        raise ValueError(f"{func}: sample_weight must be None or of shape {form}, "
                         f"{expected}. Got shape {weights.shape} instead.")
    if weights.dtype.kind not in "iufb":
        raise TypeError(f"{func}: sample_weight must be numeric. Got dtype {weights.dtype} "
                        f"instead.")
    weights = weights.astype(np.float64)
    if not np.isfinite(weights).all() or (weights < 0).any():
        bad = float(weights[~(np.isfinite(weights) & (weights >= 0))][0])
        raise ValueError(f"{func}: sample_weight must be finite and non-negative. Got "
                         f"{bad!r} instead.")
    if weights.sum() <= 0:
        raise ValueError(f"{func}: sample_weight must have a positive total (a weighted mean "
                         f"over no weight is undefined). Got a total of 0 instead.")
    if qid is None:
        return weights

    codes, qids, _ = factorize_qid(func, qid)
    per_query = np.empty(qids.shape[0])
    per_query[codes] = weights
    varying = weights != per_query[codes]
    if varying.any():
        row = int(np.argmax(varying))
        query = qid[row:row + 1].tolist()[0]
        raise ValueError(
            f"{func}: sample_weight must be constant within each query (one weight per query, "
            f"repeated on its rows, as scikit-learn and LightGBM take it). Got different "
            f"weights in query {query!r} instead ({weights[row]:g} and "
            f"{per_query[codes[row]]:g})."
        )
    return per_query


def _device(x):

    return device_of(x)


def _like(weights, values, xp):
    """Query weights in the namespace and on the device of the per-query values."""
    if weights is None or not isinstance(weights, np.ndarray):
        return weights
    return xp.asarray(weights, device=_device(values))
