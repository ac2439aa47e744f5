"""The checks of the metric arrays (``y_true``, ``y_score``, ``qid``, ``retrieved``)
with the house wording, and the gain of the labels.
"""

import numpy as np

from .._core.checks import (
    InvalidParameterError,
    _FORMS,
    _as_numeric,
    _check_finite,
    _check_length,
    check_grade_range,
    check_retrieved,
    orderable_scores,
)
from .ids import as_qid_array
from .device import check_ranking_arrays as check_device_arrays
from .xp import namespace, is_device_array, to_numpy, value_range


# 2**1000 is about 1e301: room for sums over a billion documents below float64's 1.8e308.
MAX_EXPONENTIAL_LABEL = 1000


def check_ranking_arrays(func, y_true, y_score, qid, retrieved=None):
    """Validate the input arrays and return them flat.

    Returns
    -------
    y_true, y_score : float64 arrays of shape (n_samples,)
    qid : 1-D array or None; None means 2-D input with uniform rows.
    shape : (n_queries, n_documents) for 2-D input, else None.
    retrieved : bool array or None.
    """

    on_device = check_device_arrays(func, y_true, y_score, qid, retrieved, check_ranking_arrays)
    if on_device is not None:  # PyTorch, CuPy, ...: validated on their device
        return on_device
    y_true = _as_numeric(func, "y_true", y_true)
    y_score = _as_numeric(func, "y_score", y_score)
    if y_true.ndim != y_score.ndim or y_true.ndim not in (1, 2):
        raise ValueError(
            f"{func}: y_true and y_score must both be 1-D (with qid) or both 2-D. "
            f"Got shapes {y_true.shape} and {y_score.shape}. {_FORMS}"
        )
    if y_true.ndim == 2:
        if qid is not None:
            raise ValueError(
                f"{func}: qid must be None when y_true and y_score are 2-D "
                f"(each row is a query). Got qid of type {type(qid).__name__}. {_FORMS}"
            )
        if retrieved is not None:
            raise ValueError(
                f"{func}: retrieved is only supported with 1-D input and qid. {_FORMS}"
            )
        if y_true.shape != y_score.shape:
            raise ValueError(
                f"{func}: y_true and y_score must have the same shape. "
                f"Got {y_true.shape} and {y_score.shape}."
            )
        if y_true.size == 0:
            raise ValueError(
                f"{func}: y_true must hold at least one query with one document. "
                f"Got shape {y_true.shape} instead."
            )
        _check_finite(func, "y_true", y_true)
        check_grade_range(func, "y_true", y_true)
        y_score = orderable_scores(func, "y_score", y_score)
        return y_true.ravel(), y_score.ravel(), None, y_true.shape, None

    if qid is None:
        raise ValueError(
            f"{func}: qid is required with 1-D y_true and y_score: it says which query each "
            f"row belongs to. {_FORMS} (For one single query, pass qid=np.zeros(len(y_true)).)"
        )
    qid = as_qid_array(qid)
    if qid.ndim != 1:
        raise ValueError(
            f"{func}: qid must be a 1-D array with one query id per row. "
            f"Got an array of shape {qid.shape} instead."
        )
    _check_length(func, [("y_true", y_true), ("y_score", y_score)])
    _check_length(func, [("y_true", y_true), ("qid", qid)])
    if y_true.shape[0] == 0:
        raise ValueError(
            f"{func}: y_true must hold at least one document. Got an empty array instead."
        )
    retrieved = check_retrieved(func, retrieved, y_true.shape[0])
    _check_finite(func, "y_true", y_true)
    check_grade_range(func, "y_true", y_true)
    y_score = orderable_scores(func, "y_score", y_score, where=retrieved)
    return y_true, y_score, qid, None, retrieved


def check_labels(func, y_true, *, nonnegative, reason, low=None):
    """Labels must be >= 0 where the metric's gain or bounds need it (``low``: their
    minimum, when already known)."""
    if nonnegative and y_true.size:
        low = y_true.min() if low is None else low
        if low < 0:
            raise ValueError(
                f"{func}: y_true must be non-negative {reason}. Got min(y_true) = "
                f"{low:g} instead."
            )


def apply_gain(func, gain, labels):

    if gain == "linear":
        return labels
    xp = namespace(labels)
    if xp is not None:
        return _apply_gain_on_device(func, gain, labels, xp)
    if gain == "exponential":
        if labels.size and labels.max() > MAX_EXPONENTIAL_LABEL:
            raise ValueError(
                f"{func}: y_true must be <= {MAX_EXPONENTIAL_LABEL} for gain='exponential': "
                f"the gain 2**label - 1 of larger labels overflows float64 (and sums of "
                f"gains near it would too). Got max(y_true) = {labels.max():g} instead. Use "
                f"gain='linear', or map the labels to a smaller scale."
            )
        return np.expm1(labels * np.log(2.0))
    try:
        gains = np.asarray(gain(labels.copy()), dtype=np.float64)
    except Exception as exc:
        raise InvalidParameterError(
            f"{func}: the gain callable failed on the labels array: {exc!r}. It must map "
            f"an array of relevance labels to an array of gains of the same shape."
        ) from exc
    if gains.shape != labels.shape:
        raise InvalidParameterError(
            f"{func}: the gain callable must return one gain per label (shape "
            f"{labels.shape}). Got shape {gains.shape} instead."
        )
    if not np.isfinite(gains).all():
        raise InvalidParameterError(f"{func}: the gain callable returned non-finite gains.")
    return gains


def _apply_gain_on_device(func, gain, labels, xp):
    """:func:`apply_gain` for device labels: the exponential gain in their namespace; a
    callable gain must accept and return arrays of that namespace."""

    if gain == "exponential":
        if value_range(labels)[1] > MAX_EXPONENTIAL_LABEL:
            return apply_gain(func, gain, to_numpy(labels))  # raises the house error
        return xp.expm1(labels * float(np.log(2.0)))
    try:
        gains = gain(labels)
    except Exception as exc:
        raise InvalidParameterError(
            f"{func}: the gain callable failed on the labels array: {exc!r}. It must map "
            f"an array of relevance labels to an array of gains of the same shape (with "
            f"{type(labels).__module__} arrays, an array of that namespace)."
        ) from exc
    if not is_device_array(gains):
        raise InvalidParameterError(
            f"{func}: the gain callable must return an array of the labels' namespace "
            f"({type(labels).__module__.partition('.')[0]}) when y_true is one. Got "
            f"{type(gains).__name__} instead. Write it with the array's own operations "
            f"(e.g. `lambda labels: labels ** 0.5`) rather than NumPy functions."
        )
    if tuple(gains.shape) != tuple(labels.shape) or not bool(xp.all(xp.isfinite(gains))):
        return apply_gain(func, gain, to_numpy(labels))  # raises the house error
    return xp.astype(gains, labels.dtype)
