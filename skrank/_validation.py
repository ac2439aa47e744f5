"""Every array and parameter check of skrank, with one wording.

Messages follow ``<function>: <what> must be <expected>. Got <actual> instead.``
plus the likely fix, so that a user never meets a bare numpy traceback.
"""

import contextlib
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from numbers import Integral, Real

import numpy as np

# 2**1000 is about 1e301: room for sums over a billion documents below float64's 1.8e308.
MAX_EXPONENTIAL_LABEL = 1000
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
    package = os.path.dirname(os.path.abspath(__file__))
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


def as_qid_array(qid):
    """Query ids as a 1-D array; tuples stay whole ids instead of becoming a 2-D array."""
    if isinstance(qid, np.ndarray):
        return qid
    if type(qid).__module__.partition(".")[0] == "pandas":
        arr = _pandas_string_ids(qid)
        if arr is not None:
            return arr
    ragged_warning = getattr(np, "exceptions", np).VisibleDeprecationWarning
    try:
        # numpy < 1.24 only warns about ragged sequences; make it the same error
        with filtered_on_numpy_1("error", ragged_warning):
            arr = np.asarray(qid)
    except (ValueError, ragged_warning):  # a list mixing tuples and scalars
        arr = np.empty(len(qid), dtype=object)
        arr[:] = list(qid)
        return arr
    if isinstance(qid, np.ndarray) or getattr(qid, "dtype", None) is not None:
        return arr
    # A Python sequence: keep tuples whole and mixed types as they are (numpy would
    # turn [(1, 2)] into a 2-D array and [1, "a"] into the strings ['1', 'a']).
    items = list(qid)
    mixed = arr.dtype.kind in "US" and not all(isinstance(item, str) for item in items)
    if (arr.ndim > 1 and all(isinstance(item, tuple) for item in items)) or mixed:
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
    return arr


def _pandas_string_ids(qid):
    """A pandas column of string ids (object, string or categorical dtype) as its
    integer codes into the sorted distinct ids (a ``CodedIds``: the per-row id objects
    are never formed), or None for anything else, missing ids included (they get
    numpy's path and its error).  A categorical column holds such codes
    already; a string column stored by Arrow is read from its buffers (or factorised
    by pandas' hash table when not ASCII); numpy's conversion of those alone costs
    more.  Columns of Python objects (object dtype, or strings stored as Python
    objects) are left to numpy: None."""
    from ._grouping import CodedIds

    if getattr(qid, "ndim", 1) != 1 or str(getattr(qid, "dtype", "")) not in (
            "object", "category", "string", "str"):
        return None
    storage = getattr(qid.dtype, "storage", None)
    if str(qid.dtype) == "object" or storage == "python":
        # Python objects already: numpy's array of them (the column's own, for an object
        # column) goes to the grouping's object paths, cheaper than a hash table.
        return None
    found = None
    if str(qid.dtype) == "category":
        found = _categorical_codes(qid)
    elif storage in ("pyarrow", "pyarrow_numpy"):
        found = _arrow_string_codes(qid)
    if found is None:
        found = _factorized_codes(qid)
    if found is None:
        return None
    return CodedIds(*found)


def _sorted_string_categories(codes, categories):
    """``(codes, categories)`` with the categories (distinct ``str``) sorted and the codes
    renumbered alike, or None when a code is missing (-1) or a category is not a str."""
    if codes.size == 0 or codes.min() < 0:
        return None
    categories = np.asarray(categories, dtype=object)
    if set(map(type, categories.tolist())) != {str}:
        return None
    if not bool(np.all(categories[1:] > categories[:-1])):  # distinct: any sort is the order
        order = np.argsort(categories)
        rank = np.empty(order.shape[0], dtype=codes.dtype)
        rank[order] = np.arange(order.shape[0], dtype=codes.dtype)
        return rank[codes], categories[order]
    return codes, categories


def _categorical_codes(qid):
    """A categorical column's own codes and categories (unused ones included: the
    grouping keeps only the codes present)."""
    cat = qid.cat if hasattr(qid, "cat") else qid  # a Series, or a Categorical / CategoricalIndex
    codes = np.array(cat.codes, copy=True)  # ours: the column may change after the call
    return _sorted_string_categories(codes, cat.categories)


def _factorized_codes(qid):
    import pandas as pd  # already imported: qid is a pandas object

    try:
        codes, uniques = pd.factorize(qid)
    except TypeError:
        return None
    return _sorted_string_categories(codes, uniques)


def _arrow_string_codes(qid):
    """Codes of a string column stored by Arrow, read from its offsets and UTF-8 bytes
    when every character is ASCII: the bytes become a fixed-width ``S`` array (a view
    when every id has one length) whose character keys (see ``_string_character_keys``)
    are the codes.  None otherwise (missing ids, other characters, other storage)."""
    from ._grouping import _string_character_keys, factorize_qid, fixed_width_cells

    try:
        import pyarrow as pa

        chunks = pa.chunked_array(qid.array.__arrow_array__())
        chunks = chunks.chunk(0) if chunks.num_chunks == 1 else chunks.combine_chunks()
    except Exception:  # not pyarrow-backed after all, or an old pyarrow
        return None
    if chunks.null_count or not pa.types.is_string(chunks.type) and not pa.types.is_large_string(chunks.type):
        return None
    n = len(chunks)
    if n == 0:
        return None
    offset_type = np.int64 if pa.types.is_large_string(chunks.type) else np.int32
    _, offset_buffer, data_buffer = chunks.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=offset_type)[chunks.offset:chunks.offset + n + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None \
        else np.zeros(0, dtype=np.uint8)
    data = data[int(offsets[0]):int(offsets[-1])]
    offsets = offsets - offsets[0]
    if data.size and (int(data.max()) >= 128 or not bool(np.all(data))):  # non-ASCII, or "\0"
        return None
    lengths = np.diff(offsets)
    width = int(lengths.max())
    if width == 0:
        fixed = np.zeros(n, dtype="S1")
    elif int(lengths.min()) == width:
        fixed = data.view(f"S{width}")
    else:
        fixed = fixed_width_cells(data, offsets[:-1], lengths, width).view(f"S{width}")
    found = _string_character_keys(fixed, with_strings=True)
    if found is None:  # too many combinations of characters: factorised
        codes, uniques, _ = factorize_qid("pandas", fixed)
        return codes, uniques.astype(f"U{uniques.dtype.itemsize}").astype(object)
    # The keys are the codes, in the ids' order: the ids indexed by key (the keys no
    # row holds are never looked up), no renumbering pass.
    keys, strings = found
    if strings is None:  # keys spread wider than the rows: a row of each key held
        row = np.full(int(keys.max()) + 1, -1, dtype=np.intp)
        row[keys] = np.arange(n)
        present = np.flatnonzero(row >= 0)
        uniques = np.empty(row.shape[0], dtype=object)
        uniques[present] = fixed[row[present]].astype(f"U{fixed.dtype.itemsize}").astype(object)
        return keys, uniques
    return keys, strings.astype(f"U{fixed.dtype.itemsize}").astype(object)


def check_ranking_arrays(func, y_true, y_score, qid, retrieved=None):
    """Validate the input arrays and return them flat.

    Returns
    -------
    y_true, y_score : float64 arrays of shape (n_samples,)
    qid : 1-D array or None; None means 2-D input with uniform rows.
    shape : (n_queries, n_documents) for 2-D input, else None.
    retrieved : bool array or None.
    """
    from ._array_api import check_ranking_arrays as check_device_arrays

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
    from ._array_api import namespace

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
    from ._array_api import is_device_array, to_numpy, value_range

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
