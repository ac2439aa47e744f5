"""Read TREC qrels and run files, and join them into skrank's flat arrays.

The readers follow trec_eval 10 (``get_qrels.c`` and ``get_trec_results.c``):

* fields are separated by any whitespace;
* a line whose first non-blank character is ``#`` is a comment, and blank
  lines are skipped; a ``#`` *inside* a field (``CR#93E-1860``) is part of it;
* in a run, the ``Q0`` and ``rank`` columns are read but trec_eval ignores
  them, and tokens after the run tag are ignored;
* a qrels line has exactly four fields ``qid iter docno rel`` (``iter`` is
  ignored) and ``rel`` is an integer; ``rel < 0`` means "in the pool but
  unjudged" and is kept as it is.

Unlike trec_eval, a non-numeric ``rel``, ``score`` or ``rank`` is an error
(trec_eval reads it as 0 with ``atof``/``atol``), as is a NaN score and a
duplicate ``(qid, docno)`` pair.

Both readers accept plain or gzip-compressed files (detected from the magic
bytes, not the file name) and parse without a Python loop per line, so a
10-million-line run takes seconds.

:func:`join_qrels_run` turns a :class:`Qrels` and a :class:`Run` into the
``y_true, y_score, qid, retrieved`` arrays the skrank metrics take, in
trec_eval's ranking order.
"""

import gzip
import os
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Qrels",
    "Run",
    "TrecArrays",
    "join_qrels_run",
    "read_qrels",
    "read_run",
]

_QRELS_FORMAT = "qid iter docno rel"
_RUN_FORMAT = "qid Q0 docno rank score tag"
_GZIP_MAGIC = b"\x1f\x8b"
# Files are tokenized in pieces of about this many bytes (cut at a newline)
# to bound the temporary per-byte arrays (small ones are reused by the allocator
# instead of being page-faulted afresh for every chunk).
_CHUNK_BYTES = 1 << 23
_NEWLINE = 10
_HASH = ord("#")
_MAX_SHOWN = 200


# --------------------------------------------------------------------------
# Containers
# --------------------------------------------------------------------------


def _str_array(cls, name, value):
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(
            f"{cls}: {name} must be a 1-D array. Got an array of shape {arr.shape} instead."
        )
    if arr.dtype.kind == "U":
        return arr
    if arr.dtype.kind == "S":
        return _decode(arr)
    if arr.size == 0:
        return np.zeros(0, dtype="U1")
    return arr.astype(str)


def _num_array(cls, name, value, dtype):
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(
            f"{cls}: {name} must be a 1-D array. Got an array of shape {arr.shape} instead."
        )
    if arr.size == 0:
        return np.zeros(0, dtype=dtype)
    if np.dtype(dtype).kind == "i":
        if arr.dtype.kind not in "iub":
            if arr.dtype.kind != "f" or not np.all(np.isfinite(arr) & (arr == np.round(arr))):
                raise ValueError(
                    f"{cls}: {name} must hold integers. Got an array of dtype {arr.dtype} instead."
                )
    elif arr.dtype.kind not in "iubf":
        raise ValueError(
            f"{cls}: {name} must hold numbers. Got an array of dtype {arr.dtype} instead."
        )
    return arr.astype(dtype, copy=False)


def _check_lengths(cls, **arrays):
    lengths = {name: arr.shape[0] for name, arr in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ValueError(f"{cls}: all arrays must have the same length. Got {shown}.")


def _pandas(cls):
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - pandas is optional
        raise ImportError(f"{cls}.to_pandas() requires pandas: pip install pandas") from exc
    return pd


class _Columns:
    """Shared behaviour of the column tables below: length and DataFrame export."""

    _COLUMNS = ()

    def __len__(self):
        return self.qid.shape[0]

    def _n_queries(self):
        return _factorize(self.qid)[0].shape[0]

    def to_pandas(self):
        """Return the table as a :class:`pandas.DataFrame`, one column per attribute."""
        pd = _pandas(type(self).__name__)
        return pd.DataFrame({name: getattr(self, name) for name in self._COLUMNS})


@dataclass(frozen=True, eq=False, repr=False)
class Qrels(_Columns):
    """Relevance judgements read from a TREC qrels file, one row per line.

    Parameters
    ----------
    qid : array-like of str of shape (n_judgements,)
        Query ids.
    docno : array-like of str of shape (n_judgements,)
        Document ids.
    rel : array-like of int of shape (n_judgements,)
        Relevance levels. A negative level means "in the pool but unjudged".

    Attributes are numpy arrays: ``qid`` and ``docno`` of dtype ``str``
    (``<U...``), ``rel`` of dtype int64, in file order.

    See Also
    --------
    read_qrels : Read a qrels file.

    Examples
    --------
    >>> from skrank.io import Qrels
    >>> qrels = Qrels(qid=["q1", "q1"], docno=["d1", "d2"], rel=[1, 0])
    >>> len(qrels)
    2
    >>> qrels.rel
    array([1, 0])
    """

    _COLUMNS = ("qid", "docno", "rel")

    qid: np.ndarray
    docno: np.ndarray
    rel: np.ndarray

    def __post_init__(self):
        name = type(self).__name__
        object.__setattr__(self, "qid", _str_array(name, "qid", self.qid))
        object.__setattr__(self, "docno", _str_array(name, "docno", self.docno))
        object.__setattr__(self, "rel", _num_array(name, "rel", self.rel, np.int64))
        _check_lengths(name, qid=self.qid, docno=self.docno, rel=self.rel)

    def __repr__(self):
        n_queries = self._n_queries()
        return f"Qrels(n_judgements={len(self)}, n_queries={n_queries})"

    @classmethod
    def from_frame(cls, frame, *, query_id="query_id", doc_id="doc_id",
                   relevance="relevance"):
        """Judgements from a pandas (or polars) DataFrame, one row per judged document.

        Parameters
        ----------
        frame : DataFrame
            The ground truth, e.g. a recommender's test interactions.
        query_id, doc_id : str, default="query_id", "doc_id"
            Columns of the query (user, question) and document (item, chunk)
            ids; ints or strings (compared as strings with the run's ids).
        relevance : str or None, default="relevance"
            Column of integer relevance grades (e.g. ``"rating"``); None when
            every row is a relevant document (grade 1).

        Returns
        -------
        qrels : Qrels

        Examples
        --------
        >>> import pandas as pd
        >>> from skrank.io import Qrels
        >>> test = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 11, 10],
        ...                      "rating": [5, 3, 4]})
        >>> qrels = Qrels.from_frame(test, query_id="user_id", doc_id="item_id",
        ...                          relevance="rating")
        >>> qrels.qid, qrels.rel
        (array(['1', '1', '2'], dtype='<U1'), array([5, 3, 4]))
        """
        from ._inputs import qrels_from_frame

        return qrels_from_frame(frame, query_id=query_id, doc_id=doc_id, relevance=relevance)

    @classmethod
    def from_dict(cls, mapping):
        """Judgements from ``{query: {doc: grade}}`` (pytrec_eval, ranx) or
        ``{query: {doc, ...}}`` / ``{query: [doc, ...]}`` (relevant documents, grade 1).

        Examples
        --------
        >>> from skrank.io import Qrels
        >>> Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d7"}}).rel
        array([2, 0, 1])
        """
        from ._inputs import qrels_from_mapping

        return qrels_from_mapping(mapping)



@dataclass(frozen=True, eq=False, repr=False)
class Run(_Columns):
    """Retrieval results read from a TREC run file, one row per line.

    Parameters
    ----------
    qid : array-like of str of shape (n_rows,)
        Query ids.
    docno : array-like of str of shape (n_rows,)
        Document ids.
    score : array-like of float of shape (n_rows,)
        Retrieval scores, higher first. trec_eval ranks by this column.
    rank : array-like of int of shape (n_rows,), default=None
        The rank column of the file, which trec_eval ignores. None gives
        1, 2, ... within each query in input order.
    tag : array-like of str of shape (n_rows,) or str, default=""
        The run tag of each row (one string is repeated).

    Attributes are numpy arrays: ``qid``, ``docno`` and ``tag`` of dtype
    ``str``, ``score`` float64 and ``rank`` int64, in file order.

    See Also
    --------
    read_run : Read a run file.

    Examples
    --------
    >>> from skrank.io import Run
    >>> run = Run(qid=["q1", "q1", "q2"], docno=["d1", "d2", "d1"], score=[2.0, 1.0, 0.5])
    >>> len(run)
    3
    >>> run.rank
    array([1, 2, 1])
    """

    _COLUMNS = ("qid", "docno", "score", "rank", "tag")

    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    rank: np.ndarray = None
    tag: np.ndarray = ""

    def __post_init__(self):
        name = type(self).__name__
        qid = _str_array(name, "qid", self.qid)
        object.__setattr__(self, "qid", qid)
        object.__setattr__(self, "docno", _str_array(name, "docno", self.docno))
        object.__setattr__(self, "score", _num_array(name, "score", self.score, np.float64))
        if self.rank is None:
            rank = _rank_in_query(qid)
        else:
            rank = _num_array(name, "rank", self.rank, np.int64)
        object.__setattr__(self, "rank", rank)
        tag = self.tag
        if isinstance(tag, str):
            tag = np.full(qid.shape[0], tag, dtype=f"U{max(len(tag), 1)}")
        object.__setattr__(self, "tag", _str_array(name, "tag", tag))
        _check_lengths(name, qid=self.qid, docno=self.docno, score=self.score,
                       rank=self.rank, tag=self.tag)

    def __repr__(self):
        n_queries = self._n_queries()
        return f"Run(n_rows={len(self)}, n_queries={n_queries})"

    @classmethod
    def from_frame(cls, frame, *, query_id="query_id", doc_id="doc_id", score="score"):
        """Predictions from a pandas (or polars) DataFrame, one row per ranked document.

        Parameters
        ----------
        frame : DataFrame
            The predictions, e.g. a recommender's top-k lists with scores.
        query_id, doc_id : str, default="query_id", "doc_id"
            Columns of the query and document ids (ints or strings).
        score : str or None, default="score"
            Column of scores, higher first; None when the rows of each query
            are already in rank order (best first).

        Returns
        -------
        run : Run

        Examples
        --------
        >>> import pandas as pd
        >>> from skrank.io import Run
        >>> pred = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [11, 10, 12]})
        >>> Run.from_frame(pred, query_id="user_id", doc_id="item_id", score=None).score
        array([-1., -2., -1.])
        """
        from ._inputs import run_from_frame

        return run_from_frame(frame, query_id=query_id, doc_id=doc_id, score=score)

    @classmethod
    def from_dict(cls, mapping):
        """Predictions from ``{query: {doc: score}}`` (pytrec_eval, ranx) or
        ``{query: [doc, ...]}`` (ranked lists, best first).

        Examples
        --------
        >>> from skrank.io import Run
        >>> run = Run.from_dict({"q1": ["d3", "d1"], "q2": {"d7": 0.5}})
        >>> run.docno, run.score
        (array(['d3', 'd1', 'd7'], dtype='<U2'), array([2. , 1. , 0.5]))
        """
        from ._inputs import run_from_mapping

        return run_from_mapping(mapping)



@dataclass(frozen=True, eq=False, repr=False)
class TrecArrays(_Columns):
    """Flat per-document arrays from :func:`join_qrels_run`.

    One row per (query, document) pair in the union of the run's documents
    and the judged documents of the evaluated queries. Rows of a query are
    contiguous (queries in sorted order); within a query, the retrieved
    rows come first in trec_eval's ranking order (score descending, then
    docno descending), then the unretrieved judged documents in qrels order.

    Attributes
    ----------
    y_true : ndarray of float64
        The qrels relevance, or 0 for a retrieved document absent from the
        qrels. Negative levels are kept as they are.
    y_score : ndarray of float64
        The run score, or NaN for an unretrieved document.
    qid : ndarray of str
        Query ids.
    docno : ndarray of str
        Document ids.
    retrieved : ndarray of bool
        True for documents in the run.
    judged : ndarray of bool
        True for documents in the qrels (whatever their level, negative
        included). A retrieved document with ``judged=False`` is what
        trec_eval calls "not in the pool" (``-`` in ``relstring``), as
        opposed to a judged non-relevant one; bpref and ``unj@k`` need this.
    """

    _COLUMNS = ("qid", "docno", "y_true", "y_score", "retrieved", "judged")

    y_true: np.ndarray
    y_score: np.ndarray
    qid: np.ndarray
    docno: np.ndarray
    retrieved: np.ndarray
    judged: np.ndarray

    def __repr__(self):
        n_queries = self._n_queries()
        return (f"TrecArrays(n_rows={len(self)}, n_queries={n_queries}, "
                f"n_retrieved={int(self.retrieved.sum())})")



def _rank_in_query(qid):
    """1-based position of each row among the rows of its query, in input order."""
    n = qid.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _, codes = _factorize(qid)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    new = np.ones(n, dtype=bool)
    new[1:] = sorted_codes[1:] != sorted_codes[:-1]
    starts = np.flatnonzero(new)
    position = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = position + 1
    return rank


# --------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------


def _load(source):
    """Return ``(data, name)``: the (decompressed) bytes and a name for messages."""
    if hasattr(source, "read"):
        data = source.read()
        name = getattr(source, "name", None)
        name = os.fsdecode(name) if isinstance(name, (str, bytes, os.PathLike)) else "<stream>"
        if isinstance(data, str):
            data = data.encode("utf-8")
    else:
        try:
            path = os.fspath(source)
        except TypeError:
            raise TypeError(
                "expected a path (str or os.PathLike) or a file object. "
                f"Got {type(source).__name__} instead."
            ) from None
        name = os.fsdecode(path)
        with open(path, "rb") as f:
            data = f.read()
    data = bytes(data)
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{name}: corrupt gzip data ({exc})") from exc
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data, name


def _chunks(data):
    """Yield ``(a, first_line)``: uint8 views of ``data`` cut after a newline."""
    start, size, line = 0, len(data), 0
    while start < size:
        end = min(start + _CHUNK_BYTES, size)
        if end < size:
            cut = data.rfind(b"\n", start, end)
            end = (data.find(b"\n", end) if cut < 0 else cut) + 1
        a = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
        yield a, line
        line += data.count(b"\n", start, end)
        start = end


class _Lines:
    """Tokens of the data lines (not blank, not comment) of one chunk."""

    def __init__(self, a, first_line):
        self.a = a
        self.first_line = first_line
        # blank[i + 1] is for a[i]; a newline is prepended (the chunk starts a line).
        padded = np.empty(a.shape[0] + 1, dtype=np.uint8)
        padded[0] = _NEWLINE
        padded[1:] = a
        blank = padded == 32
        blank |= (padded - np.uint8(9)) < 5  # \t \n \v \f \r
        # Blank/non-blank transitions alternate token starts and ends (the
        # chunk starts after and ends with a newline).
        transitions = np.flatnonzero(blank[:-1] != blank[1:])
        starts, ends = transitions[0::2].copy(), transitions[1::2].copy()
        # The token after each newline starts a line; the last of several
        # newlines before one token (blank lines) gives its line number.
        newlines = np.flatnonzero(a == _NEWLINE)
        following = np.searchsorted(starts, newlines)
        last = np.empty(following.shape[0], dtype=bool)
        last[-1] = True
        np.not_equal(following[1:], following[:-1], out=last[:-1])
        first_token = following[last]
        local_line = np.flatnonzero(last) + 1  # 0-based line within the chunk
        inside = first_token < starts.shape[0]
        first_token, local_line = first_token[inside], local_line[inside]
        if starts.shape[0] and (first_token.shape[0] == 0 or first_token[0] != 0):
            first_token = np.concatenate(([0], first_token))
            local_line = np.concatenate(([0], local_line))
        comment = a[starts[first_token]] == _HASH
        if comment.any():
            first = np.zeros(starts.shape[0], dtype=bool)
            first[first_token] = True
            keep = ~comment[np.cumsum(first) - 1]
            starts, ends = starts[keep], ends[keep]
            first_token = np.flatnonzero(first[keep])
            local_line = local_line[~comment]
        self.starts, self.ends = starts, ends
        self.first_token = first_token
        self.n_tokens = np.diff(np.append(first_token, starts.shape[0]))
        self.local_line = local_line

    def __len__(self):
        return self.first_token.shape[0]

    def line_number(self, i):
        """1-based line number in the file of data line ``i``."""
        return self.first_line + int(self.local_line[i]) + 1

    def text(self, i):
        """The text of data line ``i``, for messages."""
        newlines = np.flatnonzero(self.a == _NEWLINE)
        k = int(self.local_line[i])
        begin = int(newlines[k - 1]) + 1 if k > 0 else 0
        raw = self.a[begin:int(newlines[k])].tobytes()
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        if len(text) > _MAX_SHOWN:
            text = text[:_MAX_SHOWN] + "..."
        return text

    def columns(self, n_fields, *, exact):
        """Token starts and ends as (n_lines, n_fields) arrays.

        Returns the index of the first bad line instead when a line has too
        few fields (or, with ``exact``, too many).
        """
        bad = (self.n_tokens != n_fields) if exact else (self.n_tokens < n_fields)
        if bad.any():
            return int(np.argmax(bad))
        starts, ends = self.starts, self.ends
        if not exact and not np.all(self.n_tokens == n_fields):
            # Extra tokens after the last field (e.g. junk after the run tag).
            within = np.arange(starts.shape[0]) - np.repeat(self.first_token, self.n_tokens)
            keep = within < n_fields
            starts, ends = starts[keep], ends[keep]
        return starts.reshape(-1, n_fields), ends.reshape(-1, n_fields)

    def matrix(self, starts, ends):
        """The tokens ``a[starts[i]:ends[i]]`` as the columns of a byte matrix.

        Returns ``(matrix, lengths)``: ``matrix[j, i]`` is byte ``j`` of token
        ``i``, NUL past its end. The number of rows is the longest token
        rounded up to a multiple of 8, so that rows can be hashed as words.
        """
        n = starts.shape[0]
        lengths = ends - starts
        longest = int(lengths.max()) if n else 0
        shortest = int(lengths.min()) if n else 0
        out = np.zeros((max(-(-longest // 8) * 8, 8), n), dtype=np.uint8)
        a = self.a
        if n and int(starts[-1]) + longest > a.shape[0]:  # keep reads past a token in bounds
            a = np.concatenate([a, np.zeros(longest, dtype=np.uint8)])
        index = starts.copy()
        for j in range(longest):
            np.take(a, index, out=out[j])
            if j >= shortest:
                out[j] *= lengths > j
            index += 1
        return out, lengths


def _as_bytes(matrix):
    """A byte matrix from :meth:`_Lines.matrix` as an ``S`` array (one row per token)."""
    return np.ascontiguousarray(matrix.T).view(f"S{matrix.shape[0]}").reshape(-1)


class _StrColumn:
    """A str column filled chunk by chunk from byte matrices, without copies.

    Code points are written into a preallocated ``(capacity, width)`` uint32
    buffer (widened when a longer string arrives), which is finally viewed as
    a ``U<width>`` array. ASCII bytes are their own code points; other
    chunks are decoded as UTF-8.
    """

    def __init__(self, capacity):
        self.capacity = capacity
        self.codes = None
        self.size = 0

    def _reserve(self, width):
        if self.codes is None or width > self.codes.shape[1]:
            codes = np.empty((self.capacity, width), dtype=np.uint32)
            if self.codes is not None:
                old = self.codes.shape[1]
                codes[:self.size, :old] = self.codes[:self.size]
                codes[:self.size, old:] = 0
            self.codes = codes

    def append(self, matrix, lengths):
        longest = max(int(lengths.max()), 1)
        rows = matrix[:longest]
        if int(rows.max()) >= 128:
            decoded = _decode(_as_bytes(rows))
            longest = decoded.dtype.itemsize // 4
            rows = decoded.view(np.uint32).reshape(-1, longest).T
        self._reserve(longest)
        block = self.codes[self.size:self.size + rows.shape[1]]
        block[:, :longest] = rows.T
        block[:, longest:] = 0
        self.size += rows.shape[1]

    def result(self):
        if self.codes is None:
            return np.zeros(0, dtype="U1")
        return _trimmed(self.codes, self.size).view(
            np.dtype(("U", self.codes.shape[1]))).reshape(-1)


class _Column:
    """A numeric column filled chunk by chunk."""

    def __init__(self, capacity, dtype):
        self.values = np.empty(capacity, dtype=dtype)
        self.size = 0

    def append(self, values):
        self.values[self.size:self.size + values.shape[0]] = values
        self.size += values.shape[0]

    def result(self):
        return _trimmed(self.values, self.size)


def _trimmed(buffer, size):
    """The first ``size`` rows of a preallocated buffer (a view unless mostly unused)."""
    return buffer[:size] if 2 * size >= buffer.shape[0] else buffer[:size].copy()


def _decode(arr):
    """Bytes (``S``) array to str array; invalid UTF-8 bytes become lone surrogates."""
    try:
        return arr.astype(str)
    except UnicodeDecodeError:
        return np.char.decode(arr, "utf-8", "surrogateescape")


_POW10 = 10.0 ** np.arange(19)


def _parse_decimal(matrix, lengths, *, integer):
    """Exact vectorised parse of plain decimals (``-12``, ``3.25``, ``+.5``).

    Returns ``(values, ok)``. Rows not in that form (exponents, ``inf``,
    too many digits, garbage) have ``ok`` False and are left to
    :func:`_parse_numbers`. Floats are exact: a mantissa below 2**53 divided
    by an exact power of ten is one correctly rounded operation, the same
    double as C's ``strtod``.
    """
    longest = int(lengths.max())
    rows = matrix[:longest]
    digits = rows - np.uint8(48)
    is_digit = digits < 10  # NUL padding wraps around to 208
    is_dot = rows == 46
    negative = rows[0] == 45
    signed = negative | (rows[0] == 43)
    n_digits = is_digit.sum(axis=0)
    n_dots = is_dot.sum(axis=0)
    ok = (n_digits + n_dots + signed == lengths) & (n_digits >= 1) & (n_digits <= 18)
    ok &= (n_dots == 0) if integer else (n_dots <= 1)
    mantissa = np.zeros(lengths.shape[0], dtype=np.int64)
    step = np.empty_like(mantissa)
    for j in range(longest):
        np.multiply(mantissa, 10, out=step)
        step += digits[j]
        np.copyto(mantissa, step, where=is_digit[j])
    if integer:
        return np.where(negative, -mantissa, mantissa), ok
    ok &= mantissa <= 1 << 53
    decimals = np.where(n_dots > 0, lengths - 1 - np.argmax(is_dot, axis=0), 0)
    values = mantissa / _POW10[np.minimum(decimals, 18)]
    np.negative(values, out=values, where=negative)
    return values, ok


def _parse_numbers(col, dtype):
    """Convert a bytes array to ``dtype``, or return None if any value is invalid."""
    if b"_" in col.tobytes():  # Python's int()/float() accept "1_000"; C does not.
        return None
    try:
        values = col.astype(dtype)
    except (ValueError, OverflowError):
        return None
    if values.dtype.kind == "f" and np.isnan(values).any():
        return None
    return values


def _first_invalid(col, dtype):
    """Index of the first value of ``col`` that :func:`_parse_numbers` rejects."""
    lo, hi = 0, col.shape[0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _parse_numbers(col[lo:mid], dtype) is None:
            hi = mid
        else:
            lo = mid
    return lo


def _read_table(source, *, fmt, n_fields, exact, text_fields, numeric_fields):
    """Parse a whitespace-separated TREC file.

    Returns ``(columns, keys, line_numbers, name)``: str arrays for the text
    fields, numbers for the numeric ones, a hash of each (qid, docno) pair,
    and the line number of each row.
    """
    data, name = _load(source)
    if b"\0" in data:
        raise ValueError(f"{name}: contains NUL bytes; not a TREC text file")
    # One row per line at most; untouched capacity costs no memory.
    capacity = data.count(b"\n")
    text = {field: _StrColumn(capacity) for field in text_fields}
    numbers = {field: _Column(capacity, dtype) for field, (_, dtype, _) in numeric_fields.items()}
    keys = _Column(capacity, _U64)
    line_numbers = _Column(capacity, np.int64)
    for a, first_line in _chunks(data):
        lines = _Lines(a, first_line)
        if len(lines) == 0:
            continue
        result = lines.columns(n_fields, exact=exact)
        if isinstance(result, int):
            i = result
            reason = ""
            if exact and lines.n_tokens[i] > n_fields:
                reason = f" ({lines.n_tokens[i]} fields, expected {n_fields})"
            raise ValueError(
                f"{name}:{lines.line_number(i)}: expected {fmt!r}, got {lines.text(i)!r}{reason}"
            )
        starts, ends = result
        matrices = {}
        for field, index in text_fields.items():
            matrix, lengths = lines.matrix(starts[:, index], ends[:, index])
            text[field].append(matrix, lengths)
            if field in ("qid", "docno"):
                matrices[field] = matrix
        keys.append(_pair_hash(matrices["qid"], matrices["docno"]))
        del matrices
        for field, (index, dtype, what) in numeric_fields.items():
            matrix, lengths = lines.matrix(starts[:, index], ends[:, index])
            values, ok = _parse_decimal(matrix, lengths, integer=dtype == np.int64)
            values = values.astype(dtype, copy=False)
            if not ok.all():
                slow = np.flatnonzero(~ok)
                col = _as_bytes(matrix[:, slow])
                parsed = _parse_numbers(col, dtype)
                if parsed is None:
                    i = slow[_first_invalid(col, dtype)]
                    token = _as_bytes(matrix[:, i:i + 1])[0].decode("utf-8", errors="replace")
                    raise ValueError(
                        f"{name}:{lines.line_number(i)}: expected {fmt!r}, "
                        f"got {lines.text(i)!r} ({field} {token!r} is not {what})"
                    )
                values[slow] = parsed
            numbers[field].append(values)
        line_numbers.append(lines.first_line + lines.local_line + 1)

    columns = {field: column.result() for field, column in text.items()}
    columns.update((field, column.result()) for field, column in numbers.items())
    return columns, keys.result(), line_numbers.result(), name


# --------------------------------------------------------------------------
# Keys: factorizing and hashing
# --------------------------------------------------------------------------


def _factorize(arr):
    """``(uniques, codes)`` with sorted uniques and ``uniques[codes] == arr``.

    Runs of equal neighbours (queries are usually contiguous) are collapsed
    before sorting, so the cost is a sort of the runs, not of the rows.
    """
    n = arr.shape[0]
    if n == 0:
        return arr[:0], np.zeros(0, dtype=np.intp)
    change = np.ones(n, dtype=bool)
    change[1:] = arr[1:] != arr[:-1]  # (no string ufuncs in numpy 1.x)
    starts = np.flatnonzero(change)
    uniques, inverse = _unique_inverse(arr[starts])
    codes = np.repeat(inverse, np.diff(np.append(starts, n)))
    return uniques, codes


def _unique_inverse(values):
    """``np.unique(values, return_inverse=True)`` by one argsort.

    (``np.unique`` of numpy 2.x can be an order of magnitude slower on
    large arrays of many distinct values.)
    """
    n = values.shape[0]
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.ones(n, dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


_U64 = np.uint64


def _mix(h):
    """splitmix64 finalizer, in place."""
    h ^= h >> _U64(30)
    h *= _U64(0xBF58476D1CE4E5B9)
    h ^= h >> _U64(27)
    h *= _U64(0x94D049BB133111EB)
    h ^= h >> _U64(31)
    return h


def _fold_words(h, words):
    """Fold the 8-byte words of each row of ``words`` (n, k) into the hashes ``h``.

    All-zero words (the NUL padding after a string; strings hold no NUL) are
    skipped, so a hash does not depend on the width of the array.
    """
    for k in range(words.shape[1]):
        word = words[:, k]
        nonzero = word != 0
        if nonzero.all():
            h ^= word
            _mix(h)
        else:
            np.copyto(h, _mix(h ^ word), where=nonzero)
    return h


def _words(strings):
    """The bytes of each row of an ``S``/``U`` array as little-endian 8-byte words."""
    n = strings.shape[0]
    raw = np.ascontiguousarray(strings).view(np.uint8).reshape(n, strings.dtype.itemsize)
    pad = -raw.shape[1] % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((n, pad), dtype=np.uint8)], axis=1)
    return raw.view("<u8")


def _key_hash(codes, strings):
    """64-bit hash of each ``(codes[i], strings[i])`` pair (``strings`` of dtype S or U)."""
    h = codes.astype(_U64) * _U64(0x9E3779B97F4A7C15)
    return _fold_words(h, _words(strings))


def _pair_hash(qid_matrix, docno_matrix):
    """64-bit hash of each (qid, docno) pair, from :meth:`_Lines.matrix` byte matrices."""
    h = np.full(qid_matrix.shape[1], 0x9E3779B97F4A7C15, dtype=_U64)
    _fold_words(h, _words(_as_bytes(qid_matrix)))
    h ^= _U64(0xD6E8FEB86659FD93)  # end of the qid
    _mix(h)
    return _fold_words(h, _words(_as_bytes(docno_matrix)))


def _shared_keys(keys):
    """Rows that may share their key with another row (a superset), cheaply.

    Rows are bucketed by slices of the key bits; a row alone in its bucket
    has a unique key and is dropped. A few rounds leave few rows, so the
    final exact sort is small.
    """
    rows = np.arange(keys.shape[0])
    for shift in (0, 24, 40):
        if rows.shape[0] < 1 << 16:
            break
        bits = min(int(rows.shape[0]).bit_length() + 1, 24)
        bucket = ((keys[rows] >> np.uint64(shift)) & np.uint64((1 << bits) - 1)).astype(np.intp)
        rows = rows[np.bincount(bucket, minlength=1 << bits)[bucket] > 1]
    return rows


def _first_duplicate(codes, strings, keys):
    """``(i, j)``, i < j, the duplicate pair whose second row comes first, or None.

    A pair is ``(codes[i], strings[i])`` (``codes`` may be query codes or
    query ids). ``keys`` are hashes of the pairs (equal pairs have equal
    keys); rows sharing a key are then compared exactly, so collisions are
    harmless.
    """
    rows = _shared_keys(keys)
    if rows.shape[0] == 0:
        return None
    order = np.argsort(keys[rows])
    sorted_keys = keys[rows][order]
    same = sorted_keys[1:] == sorted_keys[:-1]
    if not same.any():
        return None
    flagged = np.zeros(rows.shape[0], dtype=bool)
    flagged[1:] |= same
    flagged[:-1] |= same
    candidates = np.sort(rows[order[flagged]])
    seen = {}
    for i, code, string in zip(candidates.tolist(), codes[candidates].tolist(),
                               strings[candidates].tolist()):
        first = seen.setdefault((code, string), i)
        if first != i:
            return first, i
    return None


def _check_no_duplicates(name, columns, keys, line_numbers):
    qid, docno = columns["qid"], columns["docno"]
    pair = _first_duplicate(qid, docno, keys)
    if pair is None:
        return
    i, j = pair
    raise ValueError(
        f"{name}: duplicate document {str(docno[i])!r} for query {str(qid[i])!r} "
        f"(lines {line_numbers[i]} and {line_numbers[j]})"
    )


# --------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------


def read_qrels(path):
    """Read a TREC qrels file (``qid iter docno rel`` per line).

    Parameters
    ----------
    path : str, os.PathLike or file object
        The qrels file, plain or gzip-compressed (detected from its first
        bytes). A file object must be opened in binary mode, or in text mode
        as UTF-8.

    Returns
    -------
    qrels : Qrels
        The judgements in file order: ``qid`` and ``docno`` as str arrays,
        ``rel`` as int64. The ``iter`` column is ignored, as in trec_eval.

    Raises
    ------
    ValueError
        If a line does not have exactly four fields or ``rel`` is not an
        integer (the message names the file, the line number and the
        line), or if a ``(qid, docno)`` pair is judged twice.

    Notes
    -----
    Lines whose first non-blank character is ``#`` and blank lines are
    skipped; a ``#`` inside a docno is part of it. Negative ``rel`` values
    ("in the pool but unjudged") are kept.

    Examples
    --------
    >>> import io
    >>> from skrank.io import read_qrels
    >>> qrels = read_qrels(io.BytesIO(b"# topic 301\\n301 0 d1 1\\n301 0 CR#93 -1\\n"))
    >>> qrels.docno
    array(['d1', 'CR#93'], dtype='<U5')
    >>> qrels.rel
    array([ 1, -1])
    """
    columns, keys, lines, name = _read_table(
        path, fmt=_QRELS_FORMAT, n_fields=4, exact=True,
        text_fields={"qid": 0, "docno": 2},
        numeric_fields={"rel": (3, np.int64, "an integer")},
    )
    _check_no_duplicates(name, columns, keys, lines)
    return Qrels(**columns)


def read_run(path):
    """Read a TREC run file (``qid Q0 docno rank score tag`` per line).

    Parameters
    ----------
    path : str, os.PathLike or file object
        The run file, plain or gzip-compressed (detected from its first
        bytes). A file object must be opened in binary mode, or in text mode
        as UTF-8.

    Returns
    -------
    run : Run
        The rows in file order: ``qid``, ``docno`` and ``tag`` as str arrays,
        ``score`` as float64 and ``rank`` as int64.

    Raises
    ------
    ValueError
        If a line has fewer than six fields, or its score is not a number
        (or NaN) or its rank not an integer (the message names the file,
        the line number and the line), or if a document appears twice for
        the same query.

    Notes
    -----
    As in trec_eval, the ``Q0`` column is not checked, tokens after the tag
    are ignored, and lines whose first non-blank character is ``#`` and blank
    lines are skipped (a ``#`` inside a docno is part of it). trec_eval ranks
    documents by ``score`` and ignores ``rank``; see :func:`join_qrels_run`.

    Examples
    --------
    >>> import io
    >>> from skrank.io import read_run
    >>> run = read_run(io.BytesIO(b"301 Q0 d1 1 2.5 bm25\\n301 Q0 d2 2 1.0 bm25\\n"))
    >>> len(run)
    2
    >>> run.docno
    array(['d1', 'd2'], dtype='<U2')
    >>> run.score
    array([2.5, 1. ])
    """
    columns, keys, lines, name = _read_table(
        path, fmt=_RUN_FORMAT, n_fields=6, exact=False,
        text_fields={"qid": 0, "docno": 2, "tag": 5},
        numeric_fields={"rank": (3, np.int64, "an integer"),
                        "score": (4, np.float64, "a number")},
    )
    _check_no_duplicates(name, columns, keys, lines)
    return Run(**columns)


# --------------------------------------------------------------------------
# Join
# --------------------------------------------------------------------------


def _match(run_keys, qrels_keys):
    """Index of the qrels row with each run key, or -1; None on a hash collision."""
    matched = np.full(run_keys.shape[0], -1, dtype=np.intp)
    if qrels_keys.shape[0] == 0 or run_keys.shape[0] == 0:
        return matched
    order = np.argsort(qrels_keys)
    sorted_keys = qrels_keys[order]
    if (sorted_keys[1:] == sorted_keys[:-1]).any():
        return None  # qrels pairs are distinct, so equal keys are a collision
    # Cheap filter (a bit table of qrels keys), then a search with sorted
    # needles: random binary searches would miss the cache on every step.
    bits = min(max(int(qrels_keys.shape[0]).bit_length() + 4, 10), 27)
    mask = _U64((1 << bits) - 1)
    table = np.zeros(1 << bits, dtype=bool)
    table[(qrels_keys & mask).astype(np.intp)] = True
    candidates = np.flatnonzero(table[(run_keys & mask).astype(np.intp)])
    needles = run_keys[candidates]
    by_key = np.argsort(needles)
    candidates, needles = candidates[by_key], needles[by_key]
    pos = np.minimum(np.searchsorted(sorted_keys, needles), sorted_keys.shape[0] - 1)
    found = sorted_keys[pos] == needles
    matched[candidates[found]] = order[pos[found]]
    return matched


def _concat_str(arrays):
    """Concatenate str arrays (an explicit dtype: 8x faster for mixed widths)."""
    return np.concatenate(arrays, dtype=np.result_type(*arrays))


def _pair_keys(codes, docnos):
    """``_key_hash`` of several (codes, docno) arrays, on one representation.

    Strings whose code points are all below 256 (ASCII, Latin-1) are hashed
    from one byte per character, a quarter of the words of ``U`` storage.
    """
    narrow = all(d.size == 0 or int(d.view(np.uint32).max()) < 256 for d in docnos)
    keys = []
    for c, d in zip(codes, docnos):
        if narrow and d.size:
            width = d.dtype.itemsize // 4
            raw = np.zeros((d.shape[0], -(-width // 8) * 8), dtype=np.uint8)
            raw[:, :width] = d.view(np.uint32).reshape(-1, width)
            words = raw.view("<u8")
            keys.append(_fold_words(c.astype(_U64) * _U64(0x9E3779B97F4A7C15), words))
        else:
            keys.append(_key_hash(c, d))
    return keys


def _block_order(codes, neg_score):
    """Permutation sorting rows by (codes, neg_score), stable.

    Runs are usually written query by query, best first: then only the
    query blocks are reordered and no row is sorted.
    """
    n = codes.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    change = codes[1:] != codes[:-1]
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    block_codes = codes[starts]
    if np.bincount(block_codes).max() > 1:
        return np.lexsort((neg_score, codes))
    lengths = np.diff(np.append(starts, n))
    if np.all((neg_score[1:] >= neg_score[:-1]) | change):
        within = np.arange(n)
    else:
        within = _sort_within_blocks(neg_score, starts, lengths)
    if np.all(block_codes[1:] > block_codes[:-1]):
        return within
    by_code = np.argsort(block_codes)
    lengths = lengths[by_code]
    shift = starts[by_code] - (np.cumsum(lengths) - lengths)
    return within[np.arange(n) + np.repeat(shift, lengths)]


def _sort_within_blocks(values, starts, lengths):
    """Permutation sorting ``values`` within each contiguous block, stable.

    Each block becomes a row of a padded 2-D array (one array per range of
    block lengths, powers of two, so padding at most doubles the rows), sorted
    along its rows: several times faster than one ``np.lexsort`` over all
    rows. The padding is NaN, which sorts after every value, NaN included,
    as it comes after them in its row.
    """
    order = np.empty(values.shape[0], dtype=np.intp)
    bucket = np.frexp(lengths.astype(np.float64))[1]
    for b in np.unique(bucket):
        blocks = np.flatnonzero(bucket == b)
        block_lengths = lengths[blocks]
        block_starts = starts[blocks][:, None]
        valid = np.arange(block_lengths.max()) < block_lengths[:, None]
        rows = (block_starts + np.arange(valid.shape[1]))[valid]
        padded = np.full(valid.shape, np.nan)
        padded[valid] = values[rows]
        ranked = np.argsort(padded, axis=1, kind="stable")
        order[rows] = (block_starts + ranked)[valid]
    return order


def join_qrels_run(qrels, run, *, missing_queries="skip"):
    """Join judgements and a run into flat per-document arrays, as trec_eval does.

    Parameters
    ----------
    qrels : Qrels
        Relevance judgements, e.g. from :func:`read_qrels`.
    run : Run
        Retrieval results, e.g. from :func:`read_run`.
    missing_queries : {"skip", "zero"}, default="skip"
        Which queries to evaluate. ``"skip"`` (trec_eval's default): the
        queries present in both the qrels and the run. ``"zero"``
        (``trec_eval -c``): every query of the qrels; one absent from the run
        gets rows for its judged documents, all unretrieved. Queries of the
        run without judgements are always dropped.

    Returns
    -------
    arrays : TrecArrays
        One row per (qid, docno) in the union of the run's documents and the
        judged documents of the evaluated queries, with ``y_true`` (the qrels
        rel, 0 for retrieved unjudged documents; negative levels kept),
        ``y_score`` (NaN when unretrieved), ``qid``, ``docno``,
        ``retrieved`` and ``judged`` (in the qrels). Queries are contiguous
        and in sorted order; within a query, retrieved rows come first in
        trec_eval's ranking order (score descending, ties broken by docno in
        *descending* ``strcmp`` order), then the unretrieved judged
        documents in qrels order. The rows can
        be passed to the skrank metrics with ``qid=`` and ``retrieved=``;
        ``ties="stable"`` then reproduces trec_eval's tie-breaking.

    Raises
    ------
    ValueError
        If a (qid, docno) pair appears twice in ``qrels`` or in ``run``, or
        a run score is NaN.

    Examples
    --------
    >>> from skrank.io import Qrels, Run, join_qrels_run
    >>> qrels = Qrels(qid=["q1", "q1", "q2"], docno=["a", "c", "x"], rel=[1, 2, 1])
    >>> run = Run(qid=["q1", "q1", "q3"], docno=["a", "b", "z"], score=[0.5, 0.5, 1.0])
    >>> arrays = join_qrels_run(qrels, run)
    >>> arrays.docno
    array(['b', 'a', 'c'], dtype='<U1')
    >>> arrays.y_true
    array([0., 1., 2.])
    >>> arrays.retrieved
    array([ True,  True, False])
    >>> join_qrels_run(qrels, run, missing_queries="zero").qid
    array(['q1', 'q1', 'q1', 'q2'], dtype='<U2')
    """
    columns = _join(qrels, run, missing_queries=missing_queries, strings=True)
    return TrecArrays(qid=columns.pop("qids")[columns.pop("codes")], **columns)


def _join(qrels, run, *, missing_queries, strings):
    """The columns of :func:`join_qrels_run`, with each row's query as an
    integer code into the sorted ``qids`` (``"codes"``, ``"qids"``) and,
    when ``strings`` is false, no ``docno``: gathering 2 million strings
    costs more than the rest of the join for callers that need neither."""
    func = "join_qrels_run"
    if not isinstance(qrels, Qrels):
        raise TypeError(f"{func}: qrels must be a Qrels (see read_qrels). "
                        f"Got {type(qrels).__name__} instead.")
    if not isinstance(run, Run):
        raise TypeError(f"{func}: run must be a Run (see read_run). "
                        f"Got {type(run).__name__} instead.")
    if missing_queries not in ("skip", "zero"):
        raise ValueError(f"{func}: missing_queries must be one of 'skip', 'zero'. "
                         f"Got {missing_queries!r} instead.")
    if np.isnan(run.score).any():
        i = int(np.argmax(np.isnan(run.score)))
        raise ValueError(f"{func}: run scores must not be NaN. Got NaN for query "
                         f"{str(run.qid[i])!r}, document {str(run.docno[i])!r}.")

    # Query codes shared by both sides, in sorted qid order.
    n_judged = len(qrels)
    qids, codes = _factorize(_concat_str([qrels.qid, run.qid]))
    qrels_codes, run_codes = codes[:n_judged], codes[n_judged:]
    n_queries = qids.shape[0]
    evaluated = np.bincount(qrels_codes, minlength=n_queries) > 0
    if missing_queries == "skip":
        evaluated &= np.bincount(run_codes, minlength=n_queries) > 0
    q_codes, q_docno, q_rel = _rows_of(evaluated, qrels_codes, qrels.docno, qrels.rel)
    r_codes, r_docno, r_score = _rows_of(evaluated, run_codes, run.docno, run.score)

    # Match run rows to judgements on (query, docno) by hashing the pairs.
    q_keys, r_keys = _pair_keys((q_codes, r_codes), (q_docno, r_docno))
    for side, c, d, k in (("qrels", q_codes, q_docno, q_keys), ("run", r_codes, r_docno, r_keys)):
        pair = _first_duplicate(c, d, k)
        if pair is not None:
            i = pair[0]
            raise ValueError(f"{func}: duplicate document {str(d[i])!r} for query "
                             f"{str(qids[c[i]])!r} in {side}.")
    matched = _match(r_keys, q_keys)
    if matched is not None:
        hit = np.flatnonzero(matched >= 0)
        if not (np.array_equal(q_docno[matched[hit]], r_docno[hit])
                and np.array_equal(q_codes[matched[hit]], r_codes[hit])):
            matched = None
    if matched is None:  # 64-bit hash collision: match on exact docno codes
        _, docno_codes = _unique_inverse(_concat_str([q_docno, r_docno]))
        exact = (np.concatenate([q_codes, r_codes]).astype(np.int64)
                 * (int(docno_codes.max()) + 1) + docno_codes).astype(_U64)
        matched = _match(exact[q_codes.shape[0]:], exact[:q_codes.shape[0]])

    hit = matched >= 0
    r_true = np.zeros(r_codes.shape[0], dtype=np.float64)
    r_true[hit] = q_rel[matched[hit]]
    judged_retrieved = np.zeros(q_codes.shape[0], dtype=bool)
    judged_retrieved[matched[hit]] = True
    unret = np.flatnonzero(~judged_retrieved)  # in qrels order
    u_codes = q_codes[unret]

    # Retrieved rows: by query, then score descending ...
    neg_score = -r_score
    r_order = _block_order(r_codes, neg_score)
    s_codes, s_score = r_codes[r_order], neg_score[r_order]
    # ... then docno descending among equal scores (trec_eval's tie-break).
    tie = (s_codes[1:] == s_codes[:-1]) & (s_score[1:] == s_score[:-1])
    if tie.any():
        in_tie = np.zeros(r_order.shape[0], dtype=bool)
        in_tie[1:] |= tie
        in_tie[:-1] |= tie
        rows = np.flatnonzero(in_tie)
        group = np.cumsum(np.concatenate(([True], ~tie)))[rows]
        tied = r_order[rows]
        # (group descending, docno ascending), reversed: group ascending, docno descending.
        r_order[rows] = tied[np.lexsort((r_docno[tied], -group))[::-1]]
    # Unretrieved judged rows: by query, in qrels order.
    u_order = np.argsort(u_codes, kind="stable")

    # Interleave: each query's retrieved rows, then its unretrieved rows.
    n_ret, n_unret = r_codes.shape[0], unret.shape[0]
    ret_counts = np.bincount(r_codes, minlength=n_queries)
    unret_counts = np.bincount(u_codes, minlength=n_queries)
    ret_dest = np.arange(n_ret) + (np.cumsum(unret_counts) - unret_counts)[s_codes]
    unret_dest = np.arange(n_unret) + np.cumsum(ret_counts)[u_codes[u_order]]
    unret_rows = unret[u_order]

    if np.array_equal(r_order, np.arange(n_ret)):
        r_order = slice(None)  # already in order: avoid copies

    def place(ret_values, unret_values, dtype):
        out = np.empty(n_ret + n_unret, dtype=dtype)
        out[ret_dest] = ret_values
        out[unret_dest] = unret_values
        return out

    columns = dict(
        y_true=place(r_true[r_order], q_rel[unret_rows], np.float64),
        y_score=place(r_score[r_order], np.nan, np.float64),
        codes=place(s_codes, u_codes[u_order], np.intp),
        qids=qids,
        retrieved=place(True, False, bool),
        judged=place(hit[r_order], True, bool),
    )
    if strings:
        columns["docno"] = place(r_docno[r_order], q_docno[unret_rows],
                                 np.result_type(r_docno, q_docno))
    return columns


def _rows_of(evaluated, codes, docno, values):
    """The rows of evaluated queries (no copy when all are)."""
    keep = evaluated[codes]
    if keep.all():
        return codes, docno, values
    rows = np.flatnonzero(keep)
    return codes[rows], docno[rows], values[rows]
