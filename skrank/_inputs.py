"""Data in the shapes users hold it, turned into what the engine takes.

Two families:

* ground truth and predictions as tables or dicts (pandas/polars DataFrames,
  pytrec_eval/ranx dicts of dicts, ranked lists, sets of relevant documents)
  become a :class:`~skrank.io.Qrels` and a :class:`~skrank.io.Run`, joined
  as TREC files are;
* the 2-D form with a sparse relevance matrix and/or an ``exclude`` mask
  (a recommender's ``(n_users, n_items)`` score matrix) becomes flat
  ``y_true, y_score, qid, retrieved`` arrays holding only what the metrics
  read: each user's leading ranks and its test items, never a dense copy of
  a sparse matrix.

Ids are compared as strings: ``7`` and ``"7"`` are the same id on either
side, a float id column is read as integers when every value is integral
(pandas turns an int column with a missing value into floats), and a missing
id (NaN, None, pandas NA) is an error.
"""

import sys
import warnings
from collections.abc import Hashable, Mapping
from itertools import chain

import numpy as np

from ._grouping import _kth_largest_by_row, factorize_qid
from ._validation import InvalidParameterError, _as_numeric, _describe, caller_stacklevel

_QRELS_FORMS = ("a Qrels, a path to a TREC qrels file, a DataFrame with columns "
                "query_id, doc_id, relevance (other names: skrank.io.Qrels.from_frame), "
                "a dict {query: {doc: grade}}, or a dict {query: {doc, ...}} of relevant sets")
_RUN_FORMS = ("a Run, a path to a TREC run file, a DataFrame with columns query_id, doc_id, "
              "score (other names: skrank.io.Run.from_frame), a dict {query: {doc: score}}, "
              "or a dict {query: [doc, ...]} of ranked lists (best first)")
_SHOWN = 5


def _shown(values, total=None):
    """The first ``_SHOWN`` values, then "..." when there are more (``total`` of them,
    when ``values`` holds only the first few)."""
    values = list(values)
    text = ", ".join(repr(v) for v in values[:_SHOWN])
    return text + (", ..." if (len(values) if total is None else total) > _SHOWN else "")


# --------------------------------------------------------------------------
# Ids
# --------------------------------------------------------------------------


def _missing_mask(arr):
    """True where an object array holds None, NaN or pandas NA."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        return np.fromiter((v is None or (isinstance(v, float) and v != v) for v in arr.tolist()),
                           dtype=bool, count=arr.shape[0])
    return np.asarray(pd.isna(arr), dtype=bool)


def ids_as_str(func, what, values):
    """Ids as a 1-D str array (the form :class:`~skrank.io.Qrels` holds), vectorised.

    ``what`` names the ids in messages, e.g. ``"qrels column 'user_id'"``.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{func}: {what} must be a 1-D sequence of ids. "
                         f"Got {_describe(arr)} instead.")
    kind = arr.dtype.kind
    if kind == "U":
        return arr
    if kind == "S":  # bytes that are not UTF-8 become lone surrogates, as in files
        return np.char.decode(arr, "utf-8", "surrogateescape")
    if arr.size == 0:
        return np.zeros(0, dtype="U1")
    if kind == "f":
        bad = np.isnan(arr)
        if bad.any():
            _missing_id_error(func, what, bad)
        if not np.all(arr == np.round(arr)):
            i = int(np.flatnonzero(arr != np.round(arr))[0])
            raise ValueError(
                f"{func}: {what} must hold ids (ints or strings). Got the float {float(arr[i])!r} "
                f"at row {i} instead. Convert the column to int or str first.")
        arr = arr.astype(np.int64)
        kind = "i"
    if kind in "iu":
        return _int_strings(arr)
    if kind == "b":
        return arr.astype(str)
    if kind == "O":
        bad = _missing_mask(arr)
        if bad.any():
            _missing_id_error(func, what, bad)
        try:
            return arr.astype(str)
        except UnicodeDecodeError:  # bytes ids beyond ASCII: decoded as file ids are
            return np.array([v.decode("utf-8", "surrogateescape") if isinstance(v, bytes)
                             else str(v) for v in arr.tolist()])
    raise TypeError(f"{func}: {what} must hold ids (ints or strings). Got {_describe(arr)} instead.")


def _int_strings(arr):
    """Decimal strings of integers, ``arr.astype(str)`` at a fraction of its cost.

    numpy formats integers one at a time through Python objects; here the
    digits of every id are computed column by column and written as the code
    points of a ``U`` array of the narrowest width (int64 -> U21 would take 84
    bytes a row), then the ids with fewer digits are moved to the left.
    """
    if arr.dtype.kind == "i" and arr.min() < 0:
        width = max(len(str(int(arr.min()))), len(str(int(arr.max()))))
        return arr.astype(f"U{width}")  # negative ids are rare: the plain way
    top = int(arr.max())
    if top >= 2 ** 63:
        return arr.astype(f"U{len(str(top))}")
    # Division by a scalar is fast for 32-bit and signed 64-bit integers (not uint64).
    rest = arr.astype(np.uint32 if top < 2 ** 32 else np.int64)
    width = len(str(top))
    ten = rest.dtype.type(10)
    # Digits column by column into a (width, n) array: contiguous writes.
    columns = np.empty((width, arr.shape[0]), dtype=np.uint32)
    n_digits = np.ones(arr.shape[0], dtype=np.int8)
    # Buffers reused across columns: fresh arrays would be page-faulted in every time.
    quotient, product = np.empty_like(rest), np.empty_like(rest)
    for column in range(width - 1, -1, -1):
        np.floor_divide(rest, ten, out=quotient)
        np.multiply(quotient, ten, out=product)
        np.subtract(rest, product, out=columns[column], casting="unsafe")
        rest, quotient = quotient, rest
        if column:
            n_digits += (rest > 0).view(np.int8)
    columns += ord("0")
    chars = np.ascontiguousarray(columns.T)
    for digits in range(1, width):  # left-align the shorter ids (zero padding on the right)
        rows = np.flatnonzero(n_digits == digits)
        if rows.size:
            shifted = np.zeros((rows.size, width), dtype=np.uint32)
            shifted[:, :digits] = chars[rows, width - digits:]
            chars[rows] = shifted
    return chars.view(f"U{width}").reshape(-1)


def _missing_id_error(func, what, bad):
    rows = np.flatnonzero(bad)
    raise ValueError(
        f"{func}: {what} must not hold missing ids (NaN, None or NA). Got {rows.size} missing "
        f"id(s), the first at row {int(rows[0])}, instead. Drop or fill those rows first.")


# --------------------------------------------------------------------------
# Tables (pandas, polars) and dicts -> Qrels / Run
# --------------------------------------------------------------------------


def is_frame(value):
    """A DataFrame-like table: named columns, each convertible to numpy."""
    return hasattr(value, "columns") and not isinstance(value, (Mapping, np.ndarray))


def is_dask_frame(value):
    """Whether ``value`` is a Dask DataFrame; never imports Dask (none exists unless loaded)."""
    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(value, module.DataFrame)


def _column(func, what, frame, column, role):
    if not hasattr(frame, "columns"):
        raise TypeError(f"{func}: {what} must be a pandas or polars DataFrame. Got "
                        f"{_describe(frame)} instead.")
    if column is None or not isinstance(column, Hashable):
        raise InvalidParameterError(f"{func}: {role} must be the name of a column of {what}. "
                                    f"Got {_describe(column)} instead.")
    columns = [str(c) for c in frame.columns]
    if column not in frame.columns:
        if func.endswith("from_frame"):
            hint = (f" Name the column with {role}=..., e.g. {role}={columns[0]!r}."
                    if columns else "")
            if role == "relevance":
                hint += " Pass relevance=None when every row is a relevant document (grade 1)."
        else:  # a frame passed to evaluate as it is: the mapping lives in from_frame
            cls, value = ("Qrels", "relevance") if what == "qrels" else ("Run", "score")
            hint = (f" Rename the columns, or pass skrank.io.{cls}.from_frame({what}, "
                    f"query_id=..., doc_id=..., {value}=...) naming yours.")
        raise ValueError(f"{func}: {what} must have a column {column!r} ({role}). Got columns "
                         f"{columns} instead.{hint}")
    series = frame[column]
    if len(getattr(series, "shape", ())) > 1:  # a pandas frame with the name twice
        raise ValueError(f"{func}: {what} must have one column named {column!r} ({role}). "
                         f"Got {series.shape[1]} columns of that name instead.")
    dtype = getattr(series, "dtype", None)
    if dtype is not None and str(dtype) == "category" and hasattr(series, "cat"):
        codes = series.cat.codes.to_numpy()
        if (codes < 0).any():
            _missing_id_error(func, f"{what} column {column!r}", codes < 0)
        categories = ids_as_str(func, f"{what} column {column!r}",
                                series.cat.categories.to_numpy())
        return categories[codes]
    return series.to_numpy() if hasattr(series, "to_numpy") else np.asarray(series)


def _numbers(func, what, values, *, integers, qid, docno):
    """Relevance grades (integers) or scores as numbers; errors name the row's ids."""
    try:
        arr = _as_numeric(func, what, values)
    except TypeError:
        raise TypeError(f"{func}: {what} must hold numbers. Got "
                        f"{_describe(np.asarray(values))} instead.") from None
    bad = np.isnan(arr)
    if integers:
        bad |= ~np.isfinite(arr)
        bad |= arr != np.round(np.where(bad, 0, arr))
        bad |= np.abs(np.where(bad, 0, arr)) >= 2.0 ** 63  # beyond int64: wrapped around
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        expected = "integer relevance grades" if integers else "numbers, not NaN"
        if integers and np.isfinite(arr[i]) and arr[i] == np.round(arr[i]):
            expected += " between -2**63 and 2**63 - 1"
        raise ValueError(
            f"{func}: {what} must hold {expected}. Got {float(arr[i])!r} for query {str(qid[i])!r}, "
            f"document {str(docno[i])!r} (row {i}) instead."
            + (" Round or threshold graded labels to integers first." if integers else ""))
    return arr


def qrels_columns(frame, *, query_id="query_id", doc_id="doc_id", relevance="relevance",
                  func="Qrels.from_frame", name="frame"):
    """``(qid, docno, rel)`` of a DataFrame of judgements (see ``Qrels.from_frame``)."""
    from .io._external import arrow_view

    frame = arrow_view(frame)   # pyarrow and Hugging Face tables, without pandas

    qid = ids_as_str(func, f"{name} column {query_id!r}",
                     _column(func, name, frame, query_id, "query_id"))
    docno = ids_as_str(func, f"{name} column {doc_id!r}",
                       _column(func, name, frame, doc_id, "doc_id"))
    if relevance is None:
        rel = np.ones(qid.shape[0], dtype=np.int64)
    else:
        rel = _numbers(func, f"{name} column {relevance!r}",
                       _column(func, name, frame, relevance, "relevance"),
                       integers=True, qid=qid, docno=docno)
    return qid, docno, rel


def run_columns(frame, *, query_id="query_id", doc_id="doc_id", score="score",
                func="Run.from_frame", name="frame"):
    """``(qid, docno, score)`` of a DataFrame of predictions (see ``Run.from_frame``)."""
    from .io._external import arrow_view

    frame = arrow_view(frame)

    qid = ids_as_str(func, f"{name} column {query_id!r}",
                     _column(func, name, frame, query_id, "query_id"))
    docno = ids_as_str(func, f"{name} column {doc_id!r}",
                       _column(func, name, frame, doc_id, "doc_id"))
    if score is None:
        # Row order within each query is the ranking: scores n, n-1, ..., 1 per query.
        values = _scores_from_positions(qid)
    else:
        values = _numbers(func, f"{name} column {score!r}",
                          _column(func, name, frame, score, "score"),
                          integers=False, qid=qid, docno=docno)
    return qid, docno, values


def _scores_from_positions(qid):
    """Strictly decreasing scores in input order within each query (rank 1 highest)."""
    return -rank_in_query(qid).astype(np.float64)


def rank_in_query(qid):
    """1-based position of each row among the rows of its query, in input order."""
    n = qid.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    codes = factorize_qid("Run", qid)[0]
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    new = np.ones(n, dtype=bool)
    new[1:] = sorted_codes[1:] != sorted_codes[:-1]
    starts = np.flatnonzero(new)
    position = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = position + 1
    return rank


def _flatten(func, name, mapping, *, side):
    """One pass over a dict of queries: (query ids, doc ids, values, kind of values).

    Each query's inner value is a dict (doc -> grade or score), a set (relevant
    documents, qrels only) or a list/tuple/array (qrels: relevant documents;
    run: documents best first).
    """
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{func}: {name} must be a dict {{query: {{doc: value}}}}. Got "
                        f"{_describe(mapping)} instead.")
    keys, sizes, docs, values = [], [], [], []
    for query, inner in mapping.items():
        if isinstance(inner, Mapping):
            docs.append(inner.keys())
            values.append(inner.values())
        elif isinstance(inner, (set, frozenset)) and side == "qrels":
            docs.append(inner)
            values.append((1,) * len(inner))
        elif isinstance(inner, (list, tuple, np.ndarray)) and not isinstance(inner, str):
            docs.append(inner)
            if side == "qrels":
                values.append((1,) * len(inner))
            else:
                values.append(range(len(inner), 0, -1))
        else:
            expected = ("a dict {doc: grade} or a set of relevant docs" if side == "qrels"
                        else "a dict {doc: score} or a list of docs, best first")
            extra = (" A set has no order: pass a list in rank order or a dict of scores."
                     if isinstance(inner, (set, frozenset)) else "")
            raise TypeError(f"{func}: {name}[{query!r}] must be {expected}. Got "
                            f"{_describe(inner)} instead.{extra}")
        keys.append(query)
        sizes.append(len(inner))
    n = sum(sizes)
    qid = np.repeat(ids_as_str(func, f"{name} query ids", _objects(keys, len(keys))), sizes)
    docno = ids_as_str(func, f"{name} document ids", _objects(chain.from_iterable(docs), n))
    raw = np.fromiter(chain.from_iterable(values), dtype=object, count=n)
    return qid, docno, raw


def _objects(items, n):
    """A 1-D object array of ``n`` items (tuples stay whole ids)."""
    return np.fromiter(items, dtype=object, count=n)


def qrels_columns_from_mapping(mapping, *, func="Qrels.from_dict", name="qrels"):
    """``(qid, docno, rel)`` of ``{query: {doc: grade}}`` or ``{query: {doc, ...}}``."""
    qid, docno, raw = _flatten(func, name, mapping, side="qrels")
    rel = _numbers(func, f"{name} grades", raw, integers=True, qid=qid, docno=docno)
    return qid, docno, rel


def run_columns_from_mapping(mapping, *, func="Run.from_dict", name="run"):
    """``(qid, docno, score)`` of ``{query: {doc: score}}`` or ``{query: [doc, ...]}``."""
    qid, docno, raw = _flatten(func, name, mapping, side="run")
    score = _numbers(func, f"{name} scores", raw, integers=False, qid=qid, docno=docno)
    return qid, docno, score


# --------------------------------------------------------------------------
# The 2-D form with sparse relevance and exclusions
# --------------------------------------------------------------------------

# Rows of the score matrix are processed in blocks of about this many cells,
# so the temporary copies stay small whatever the matrix size.
# Not measured: a memory bound (2**21 cells, 16 MiB per float64 temporary).
_BLOCK_CELLS = 1 << 21


def _issparse(value):
    if "scipy.sparse" not in sys.modules:  # no sparse matrix exists: skip the import
        return False
    try:
        from scipy import sparse
    except ImportError:  # pragma: no cover - scipy is a dependency
        return False
    return sparse.issparse(value)


def is_matrix_form(y_true, exclude):
    """Whether the input goes through :func:`matrix_arrays` (sparse labels or exclusions)."""
    return exclude is not None or _issparse(y_true)


def _canonical_csr(matrix):
    """A CSR copy with sorted indices, no duplicates and no explicit zeros (input untouched)."""
    from scipy import sparse

    csr = sparse.csr_array(matrix, copy=True)
    csr.sum_duplicates()
    csr.eliminate_zeros()
    csr.sort_indices()
    return csr


def _cell_keys(rows, cols, n_cols):
    return rows.astype(np.int64) * np.int64(n_cols) + cols.astype(np.int64)


def _labels_matrix(func, y_true, shape):
    """(test rows, test cols, test values, label lookup) from sparse or dense ``y_true``."""
    if _issparse(y_true):
        csr = _canonical_csr(y_true)
        if csr.shape != shape:
            raise ValueError(f"{func}: y_true and y_score must have the same shape. Got "
                             f"{csr.shape} and {shape}.")
        data = _as_numeric(func, "y_true", csr.data)
        if data.size and not np.isfinite(data).all():
            raise ValueError(f"{func}: y_true must contain only finite numbers. Got "
                             f"{float(data[~np.isfinite(data)][0])!r} instead.")
        if data.size and data.min() < 0:
            i = int(np.argmin(data))
            row = int(np.searchsorted(csr.indptr, i, side="right") - 1)
            raise ValueError(
                f"{func}: a sparse y_true must be non-negative (absent entries mean "
                f"relevance 0). Got {data[i]:g} at row {row}, column {int(csr.indices[i])} "
                f"instead. Shift the labels, or pass a dense array.")
        rows = np.repeat(np.arange(shape[0]), np.diff(csr.indptr))
        cols = csr.indices.astype(np.intp)
        keys = _cell_keys(rows, cols, shape[1])

        def lookup(r, c):
            found = np.zeros(r.shape[0], dtype=np.float64)
            if keys.size == 0:
                return found, np.full(r.shape[0], -1)
            want = _cell_keys(r, c, shape[1])
            pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
            hit = keys[pos] == want
            found[hit] = data[pos[hit]]
            return found, np.where(hit, pos, -1)

        return rows, cols, data, lookup
    dense = _as_numeric(func, "y_true", y_true)
    if dense.ndim != 2 or dense.shape != shape:
        raise ValueError(f"{func}: y_true and y_score must have the same shape. Got "
                         f"{dense.shape} and {shape}.")
    if not np.isfinite(dense).all():
        raise ValueError(f"{func}: y_true must contain only finite numbers.")
    rows, cols = np.nonzero(dense)
    data = dense[rows, cols]
    keys = _cell_keys(rows, cols, shape[1])

    def lookup_dense(r, c):
        want = _cell_keys(r, c, shape[1])
        pos = np.searchsorted(keys, want)
        pos = np.minimum(pos, max(keys.size - 1, 0))
        hit = (keys[pos] == want) if keys.size else np.zeros(r.shape[0], dtype=bool)
        return dense[r, c], np.where(hit, pos, -1)

    return rows, cols, data, lookup_dense


class _Exclusions:
    """The ``exclude`` argument, sparse or a dense boolean mask, read block by block."""

    def __init__(self, func, exclude, shape):
        self.shape = shape
        self.sparse = None
        self.dense = None
        if exclude is None:
            self.per_row = np.zeros(shape[0], dtype=np.intp)
            return
        if _issparse(exclude):
            csr = _canonical_csr(exclude)
            if csr.shape != shape:
                raise ValueError(f"{func}: exclude and y_score must have the same shape. Got "
                                 f"{csr.shape} and {shape}.")
            self.sparse = csr
            self.per_row = np.diff(csr.indptr).astype(np.intp)
            self.keys = _cell_keys(np.repeat(np.arange(shape[0]), self.per_row),
                                   csr.indices, shape[1])
            return
        arr = np.asarray(exclude)
        if arr.dtype.kind != "b":
            raise InvalidParameterError(
                f"{func}: exclude must be a scipy sparse matrix (its stored nonzero entries "
                f"are excluded) or a boolean array of the shape of y_score. Got "
                f"{_describe(arr)} instead.")
        if arr.shape != shape:
            raise ValueError(f"{func}: exclude and y_score must have the same shape. Got "
                             f"{arr.shape} and {shape}.")
        self.dense = arr
        self.per_row = arr.sum(axis=1, dtype=np.intp)
        rows, cols = np.nonzero(arr)
        self.keys = _cell_keys(rows, cols, shape[1])

    def mask_block(self, block, r0, r1):
        """Set the excluded cells of rows r0:r1 (``block``) to -inf, in place."""
        if self.dense is not None:
            block[self.dense[r0:r1]] = -np.inf
        elif self.sparse is not None:
            lo, hi = self.sparse.indptr[r0], self.sparse.indptr[r1]
            rows = np.repeat(np.arange(r1 - r0), np.diff(self.sparse.indptr[r0:r1 + 1]))
            block[rows, self.sparse.indices[lo:hi]] = -np.inf

    def contains(self, rows, cols):
        if self.sparse is None and self.dense is None:
            return np.zeros(rows.shape[0], dtype=bool)
        if self.dense is not None:
            return self.dense[rows, cols]
        if self.keys.size == 0:
            return np.zeros(rows.shape[0], dtype=bool)
        want = _cell_keys(rows, cols, self.shape[1])
        pos = np.minimum(np.searchsorted(self.keys, want), self.keys.size - 1)
        return self.keys[pos] == want


def matrix_arrays(func, y_true, y_score, qid, retrieved, exclude, depth):
    """The 2-D form with sparse ``y_true`` and/or ``exclude`` as flat engine arrays.

    Equivalent to the flat form with one row per (user, item) that is not
    excluded (``qid`` the row number), but holding only what metrics reading
    ``depth`` (a :class:`~skrank._grouping.Depth`, or None for the whole
    ranking) need: each user's items scoring at least its floor (its ``k``-th
    largest score, or its first relevant item's score; whole tie groups),
    ranked, then its other test items unranked (``retrieved=False``: they
    count in R and the ideal DCG only).  A user left without any row gets one
    unranked row of label 0, so that every user is a query.

    Returns ``(y_true, y_score, qid, retrieved, n_ranked)`` with ``n_ranked``
    the number of items each user ranks (those not excluded).
    """
    from ._array_api import namespace

    if namespace(y_true, y_score, exclude) is not None and qid is None and retrieved is None:
        from ._array_api import matrix_arrays as matrix_arrays_on_device

        return matrix_arrays_on_device(func, y_true, y_score, exclude)
    if qid is not None:
        raise ValueError(f"{func}: qid must be None when exclude or a sparse y_true is given: "
                         f"they belong to the 2-D form, one row per query. Got qid of type "
                         f"{type(qid).__name__}. With 1-D arrays and qid, drop the excluded "
                         f"rows instead.")
    if retrieved is not None:
        raise ValueError(f"{func}: retrieved is only supported with 1-D input and qid; with "
                         f"2-D input pass exclude (items that take no rank) instead.")
    if _issparse(y_score):
        raise TypeError(f"{func}: y_score must be a dense 2-D array of scores (every item has "
                        f"a score). Got a sparse {type(y_score).__name__} instead; only y_true "
                        f"and exclude may be sparse.")
    scores = np.asarray(y_score)
    if scores.ndim != 2:
        raise ValueError(f"{func}: y_score must be 2-D of shape (n_users, n_items) when y_true "
                         f"is sparse or exclude is given. Got {_describe(scores)} instead.")
    if scores.dtype.kind not in "iufb":
        scores = _as_numeric(func, "y_score", scores)
    shape = scores.shape
    if scores.size and np.isinf([scores.min(), scores.max()]).any():  # NaN: below
        from ._validation import orderable_scores

        scores = orderable_scores(func, "y_score", scores)  # ranks keep the order
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"{func}: y_score must hold at least one query with one document. "
                         f"Got shape {shape} instead.")
    t_rows, t_cols, t_data, lookup = _labels_matrix(func, y_true, shape)
    excl = _Exclusions(func, exclude, shape)
    n_users, n_items = shape
    n_ranked = n_items - excl.per_row

    # Test items that are not excluded: they are the only ones that can be relevant.
    live = ~excl.contains(t_rows, t_cols)
    t_rows, t_cols, t_data = t_rows[live], t_cols[live], t_data[live]

    # Each user's floor: the lowest score its ranking must be held to.
    floor = np.full(n_users, -np.inf)
    if depth is not None:
        floor[:] = np.inf
        for threshold in depth.first_relevant:
            rel = t_data >= threshold
            best = np.full(n_users, -np.inf)
            np.maximum.at(best, t_rows[rel], scores[t_rows[rel], t_cols[rel]].astype(np.float64))
            best[best == -np.inf] = np.inf
            np.minimum(floor, best, out=floor)
    k = None if depth is None else depth.k

    cand_rows, cand_cols, cand_scores = [], [], []
    step = max(1, _BLOCK_CELLS // n_items)
    for r0 in range(0, n_users, step):
        r1 = min(r0 + step, n_users)
        block = scores[r0:r1].astype(np.float64, copy=True)
        finite = ~np.isnan(block)
        if not finite.all():
            bad = np.flatnonzero(~finite)[0]
            raise ValueError(
                f"{func}: y_score must not contain NaN (a score must have a place in the "
                f"order; infinite scores are ranked). Got {float(block.flat[bad])!r} "
                f"at row {r0 + bad // n_items}, column {bad % n_items} instead.")
        excl.mask_block(block, r0, r1)
        low = floor[r0:r1].copy()
        if k is not None:
            # Users with more than k candidates: their k-th largest score bounds the floor.
            long = n_ranked[r0:r1] > k
            kth = np.full(r1 - r0, -np.inf)
            if long.any():
                kth[long] = _kth_largest_by_row(block[long], k)
            np.minimum(low, kth, out=low)
        keep = block >= low[:, None]
        keep &= block > -np.inf
        cells = np.flatnonzero(keep)
        rows, cols = np.divmod(cells, n_items)
        cand_rows.append(rows + r0)
        cand_cols.append(cols)
        cand_scores.append(block.reshape(-1)[cells])
    c_rows = np.concatenate(cand_rows)
    c_cols = np.concatenate(cand_cols)
    c_scores = np.concatenate(cand_scores)
    c_labels, where = lookup(c_rows, c_cols)

    # Test items not among the ranked candidates: unranked rows.
    live_pos = np.flatnonzero(live)
    taken = np.zeros(live.shape[0], dtype=bool)
    taken[where[where >= 0]] = True
    rest = ~taken[live_pos] if live_pos.size else np.zeros(0, dtype=bool)
    u_rows, u_labels = t_rows[rest], t_data[rest]

    # Users with no row at all still count as queries.
    present = np.zeros(n_users, dtype=bool)
    present[c_rows] = True
    present[u_rows] = True
    empty = np.flatnonzero(~present)

    qid_flat = np.concatenate([c_rows, u_rows, empty]).astype(np.intp)
    labels = np.concatenate([c_labels, u_labels, np.zeros(empty.size)])
    score = np.concatenate([c_scores, np.full(u_rows.size + empty.size, np.nan)])
    ranked = np.zeros(qid_flat.shape[0], dtype=bool)
    ranked[:c_rows.size] = True
    order = np.argsort(qid_flat, kind="stable")
    retrieved_flat = None if ranked.all() else ranked[order]
    return labels[order], score[order], qid_flat[order], retrieved_flat, n_ranked
