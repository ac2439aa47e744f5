"""The house wording of errors, and the checks of single values.

Messages follow ``<function>: <what> must be <expected>. Got <actual> instead.``
plus the likely fix, so that a user never meets a bare numpy traceback.  A bad
parameter raises :class:`InvalidParameterError`, both a ValueError and a
TypeError, as scikit-learn's does.  The checks of whole arrays are the engine's
(:mod:`skrank._engine.arrays`).
"""

import contextlib
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from numbers import Integral, Real

import numpy as np


# Grades lie in int64's range, as qrels files give them: larger values wrapped
# around when stored, and sums of float64 gains near 1e308 overflow to NaN values.
GRADE_LIMIT = 2.0 ** 63


class InvalidParameterError(ValueError, TypeError):
    """A parameter of a skrank function has a bad type or value.

    Both a :class:`ValueError` and a :class:`TypeError`, as scikit-learn's
    ``InvalidParameterError``: code that catches either around
    :func:`sklearn.metrics.ndcg_score` keeps working with skrank.
    """


InvalidParameterError.__module__ = "skrank"  # its public home, in tracebacks and pickles


_FORMS = (
    "Pass either flat 1-D arrays with qid, e.g. "
    "f(y_true, y_score, qid=qid) with three arrays of length n_samples, "
    "or 2-D arrays of shape (n_queries, n_documents) without qid, one query per row, "
    "as sklearn.metrics.ndcg_score takes them."
)


def _describe(value):
    """Short description of a received value for error messages."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} (type {type(value).__name__})"


def check_choice(func, name, value, choices):
    """Validate a string option against its allowed values."""
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(repr(c) for c in choices)
    raise InvalidParameterError(
        f"{func}: {name} must be one of {listed}. Got {_describe(value)} instead."
    )


def check_k(func, k, *, required=False, name="k", high=None):
    """Validate a cutoff: None (no cutoff, unless required) or an int >= 1 (and at
    most ``high`` when given)."""
    expected = "an int >= 1" if required else "None (no cutoff) or an int >= 1"
    if high is not None and isinstance(k, Integral) and k > high:
        expected += f" and at most {high:,}"
    if k is None:
        if required:
            raise InvalidParameterError(
                f"{func}: {name} is required and must be an int >= 1. Got None instead."
            )
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral):
        raise InvalidParameterError(f"{func}: {name} must be {expected}. Got {_describe(k)} instead.")
    if k < 1 or (high is not None and k > high):
        raise InvalidParameterError(f"{func}: {name} must be {expected}. Got {int(k)} instead.")
    return int(k)


def check_real(func, name, value, *, low=None, high=None, low_open=False, high_open=False):
    """Validate a real scalar in an interval; bounds are closed unless *_open."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise InvalidParameterError(f"{func}: {name} must be a real number. Got {_describe(value)} instead.")
    value = float(value)
    bad = not np.isfinite(value)
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        left = "(" if low_open or low is None else "["
        right = ")" if high_open or high is None else "]"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise InvalidParameterError(
            f"{func}: {name} must be a finite number in {left}{lo}, {hi}{right}. "
            f"Got {value!r} instead."
        )
    return value


def _is_sparse(values):
    """scipy.sparse matrices and arrays, and other sparse containers (pydata sparse)."""
    if isinstance(values, np.ndarray):  # the common case, without importing scipy (0.5 s)
        return False
    import scipy.sparse

    return scipy.sparse.issparse(values) or (hasattr(values, "nnz") and hasattr(values, "todense"))


def _as_numeric(func, name, values):
    if _is_sparse(values):
        raise TypeError(
            f"{func}: {name} must be a dense array of numbers (every document needs a "
            f"score). Got a sparse {type(values).__name__} of shape "
            f"{getattr(values, 'shape', '?')} instead: pass {name}.toarray(), or "
            f"{name}.toarray().ravel() for a single column. (Only y_true, the relevance "
            f"matrix of the 2-D form, may be sparse: absent entries mean relevance 0.)"
        )
    if isinstance(values, Iterable) and not isinstance(values, (Sequence, np.ndarray)) \
            and not hasattr(values, "__array__") and not hasattr(values, "__array_interface__"):
        # generators, map objects, sets, dicts: numpy would make a 0-d object array of them
        raise TypeError(
            f"{func}: {name} must be an array-like of numbers (a list, tuple, numpy array "
            f"or pandas Series). Got a {type(values).__name__} instead, which numpy does "
            f"not read as an array; pass list({name}) or np.fromiter({name}, float)."
        )
    try:
        arr = np.asarray(values)
    except Exception as exc:  # ragged nested lists, exotic objects
        raise TypeError(f"{func}: {name} must be an array of numbers. Got {_describe(values)} "
                        f"instead ({exc}).") from None
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"{func}: {name} must be an array of real numbers. "
                f"Got {_describe(arr)} with non-numeric entries instead."
            ) from None
    if arr.dtype.kind == "b":
        arr = arr.astype(np.float64)
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{func}: {name} must be an array of real numbers. Got {_describe(arr)} instead."
        )
    return arr.astype(np.float64, copy=False)


def _check_finite(func, name, arr, where=None):
    values = arr if where is None else arr[where]
    finite = np.isfinite(values)
    if not finite.all():
        bad = values[~finite]
        raise ValueError(
            f"{func}: {name} must contain only finite numbers. Got {bad.size} non-finite "
            f"value(s), the first being {bad[0]!r}, instead."
        )


def check_grade_range(func, name, arr):
    """Grades (finite floats) must lie strictly between -2**63 and 2**63."""
    if arr.size and (arr.max() >= GRADE_LIMIT or arr.min() <= -GRADE_LIMIT):
        value = arr.max() if arr.max() >= GRADE_LIMIT else arr.min()
        raise ValueError(
            f"{func}: {name} must lie between -2**63 and 2**63 (the range of 64-bit integer "
            f"grades). Got {float(value):g} instead. Map the labels to a smaller scale."
        )


def orderable_scores(func, name, arr, where=None):
    """``arr`` with its infinite scores replaced by dense ranks (every order and tie kept:
    ``-inf`` below every finite score, ``+inf`` above, equal infinities tied), a new array
    when there are any; NaN (among the rows ``where`` selects) is an error, as it has no
    place in an order.  Recommender code masks seen items with ``-np.inf``; trec_eval ranks
    infinite scores too."""
    values = arr if where is None else arr[where]
    nan = np.isnan(values)
    if nan.any():
        raise ValueError(
            f"{func}: {name} must not contain NaN (a score must have a place in the "
            f"order; infinite scores are ranked). Got {int(nan.sum())} NaN value(s), the "
            f"first at position {int(np.flatnonzero(nan)[0])}, instead. Give those documents "
            f"a score, e.g. -np.inf to rank them last, or leave them out.")
    if np.isfinite(values).all():
        return arr
    out = np.array(arr, dtype=np.float64)
    if where is None:
        out.reshape(-1)[:] = np.unique(out, return_inverse=True)[1].reshape(-1)
    else:
        out[where] = np.unique(values, return_inverse=True)[1].reshape(-1)
        out[~where] = 0.0  # ignored (not retrieved)
    return out


def _check_length(func, names_arrays):
    lengths = [(name, arr.shape[0]) for name, arr in names_arrays if arr is not None]
    if len({n for _, n in lengths}) > 1:
        names = " and ".join(name for name, _ in lengths)
        got = " and ".join(str(n) for _, n in lengths)
        raise ValueError(f"{func}: {names} must have the same length. Got {got}.")


def check_retrieved(func, retrieved, n):
    if retrieved is None:
        return None
    arr = np.asarray(retrieved)
    if arr.ndim != 1 or arr.dtype.kind != "b":
        raise TypeError(
            f"{func}: retrieved must be None or a 1-D boolean mask of length n_samples "
            f"(False marks a judged document the system did not retrieve). "
            f"Got {_describe(arr)} instead."
        )
    if arr.shape[0] != n:
        raise ValueError(
            f"{func}: y_true and retrieved must have the same length. Got {n} and {arr.shape[0]}."
        )
    return arr


def caller_stacklevel():
    """The ``stacklevel`` of the first frame outside skrank, for a warning issued by the
    function calling this one (the depth of skrank's calls varies with the entry)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # skrank/
    frame, level = sys._getframe(2), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


@contextlib.contextmanager
def filtered_on_numpy_1(action, category):
    """``warnings.catch_warnings()`` with ``simplefilter(action, category)`` where NumPy 1.x
    needs it, and nothing on NumPy 2.  The context manager swaps the process's warning
    filters: entered by several threads at once (Dask, joblib), it can leave them changed
    for every thread, so skrank enters it only where an old NumPy leaves no other way."""
    if not _NUMPY_1:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter(action, category)
        yield


_NUMPY_1 = np.lib.NumpyVersion(np.__version__) < "2.0.0"
