"""Ground truth and predictions as tables or dicts (pandas/polars DataFrames,
pytrec_eval/ranx dicts of dicts, ranked lists, sets of relevant documents) turned
into id and value columns, from which :class:`~skrank.io.Qrels` and
:class:`~skrank.io.Run` are built.

Ids are compared as strings: ``7`` and ``"7"`` are the same id on either
side, a float id column is read as integers when every value is integral
(pandas turns an int column with a missing value into floats), and a missing
id (NaN, None, pandas NA) is an error.
"""

import sys
from collections.abc import Hashable, Mapping
from itertools import chain

import numpy as np

from .._core.checks import InvalidParameterError, _as_numeric, _describe
from .._engine.codes import factorize_qid
from .._engine.scan import positions_in_runs
from ._external import arrow_view
from ._fields import str_array


_QRELS_FORMS = ("a Qrels, a path to a TREC qrels file, a DataFrame with columns "
                "query_id, doc_id, relevance (other names: skrank.io.Qrels.from_frame), "
                "a dict {query: {doc: grade}}, or a dict {query: {doc, ...}} of relevant sets")


_RUN_FORMS = ("a Run, a path to a TREC run file, a DataFrame with columns query_id, doc_id, "
              "score (other names: skrank.io.Run.from_frame), a dict {query: {doc: score}}, "
              "or a dict {query: [doc, ...]} of ranked lists (best first)")


# How many offending ids a message lists (not a timing).
_SHOWN = 5


def _shown(values, total=None):
    """The first ``_SHOWN`` values, then "..." when there are more (``total`` of them,
    when ``values`` holds only the first few)."""
    values = list(values)
    text = ", ".join(repr(v) for v in values[:_SHOWN])
    return text + (", ..." if (len(values) if total is None else total) > _SHOWN else "")


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
        # one str per id (bytes decoded as file ids are); long ids stay objects
        return str_array([v if isinstance(v, str) else v.decode("utf-8", "surrogateescape")
                          if isinstance(v, bytes) else str(v) for v in arr.tolist()])
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
    rank = np.empty(n, dtype=np.int64)
    rank[order] = positions_in_runs(codes[order]) + 1
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
