"""The one grouping and ordering step every metric shares.

Rows are grouped by query and ordered by score within each query exactly once;
the resulting :class:`Ranking` feeds every metric kernel (and ``evaluate`` with
many metrics at once).  Nothing else in skrank sorts rows.

Why the sort looks the way it does: sorting each query separately is several
times cheaper than one global sort of (query, score) pairs (the per-row work is
``log(query size)`` instead of ``log(n_samples)`` and stays in cache), but a
Python loop over queries is not.  Queries are therefore sorted in blocks of
similar size: queries whose sizes share the same power-of-two class form one
2-D block, padded to the longest query *of that class* (so at most 2x the rows
of the block, never to the longest query overall), and each block is sorted
row-wise (float64 scores as int64 keys that carry the column, see
:func:`_keyed_argsort_rows_desc`; others by ``np.argsort(axis=1)``).  There are
at most ``log2(max size)`` blocks, whatever the number of queries.

Metrics with a cutoff ``k`` only look at the first ``k`` ranks.  When every
metric of a call has one, long queries are not sorted at all: each query's rows
scoring at least a floor that is at most its ``k``-th largest score are kept (the
``k`` leading ranks plus every row tied with the last of them, so that no tie
group is cut, and for uneven sizes a few more), and only those few rows are
sorted.  Queries of one size find the ``k``-th largest score itself by one
row-wise ``np.partition`` (linear time) of their 2-D block; queries of uneven
sizes, where blocks would be gathered and padded, bound it from below by the
maxima of ``2k`` slices of their rows (one ``np.maximum.reduceat``), see
:func:`segmented_top_order`.  The cost per row no longer grows with the query's
length, which is what keeps long and ragged queries as cheap as short uniform
ones.

Rows in random order are not grouped before that: a lower bound of each query's
``k``-th largest score is found on the rows as they come (see
:func:`_candidate_rows`), and only the rows reaching it are grouped and ranked.
When every row must be grouped, the rows are moved chunk by chunk
(:meth:`QueryGroups.grouped`).
"""

import operator
import os
import warnings
from typing import NamedTuple, Optional

import numpy as np

from ._validation import caller_stacklevel, filtered_on_numpy_1

try:
    if os.environ.get("SKRANK_NO_SPEEDUPS", "") not in ("", "0"):
        raise ImportError("SKRANK_NO_SPEEDUPS is set: the pure-numpy paths")
    from . import _speedups
except ImportError:  # built without a C compiler: object ids take the pure-numpy paths
    _speedups = None

# Integer grades up to this are counted, not sorted, to build the ideal ranking.
# Not measured: grade scales in use (0-4, 0-10) stay far below it.
_MAX_COUNTED_GRADE = 64


class Depth(NamedTuple):
    """How far down each query's ranking the metrics of one call read.

    ``k``: every rank below ``k`` (None: no cutoff to honour).
    ``first_relevant``: thresholds ``t`` for which each query is read down to
    its first document with label ``>= t`` (the tie group it is in included).
    A ranking needed to the end is described by None, not by a Depth.
    """

    k: Optional[int] = None
    first_relevant: tuple = ()

    def covers(self, need):
        """Whether a ranking held this deep serves a metric that reads ``need``."""
        if need is None:
            return False
        if need.k is not None and (self.k is None or need.k > self.k):
            return False
        return set(need.first_relevant) <= set(self.first_relevant)

    @staticmethod
    def union(a, b):
        """The depth that serves both ``a`` and ``b`` (None: the whole ranking)."""
        if a is None or b is None:
            return None
        k = b.k if a.k is None else a.k if b.k is None else max(a.k, b.k)
        return Depth(k, tuple(sorted(set(a.first_relevant) | set(b.first_relevant))))


def factorize_qid(func, qid):
    """Map query ids to codes 0..n_queries-1.

    Returns ``(codes, qids, grouped)`` where ``qids[codes] == qid`` and
    ``grouped`` says whether rows of each query are already contiguous and in
    the order of ``qids`` (no regrouping needed).  Query ids come out sorted
    when they are orderable, else in order of first appearance.
    """
    if isinstance(qid, CodedIds):  # codes known: factorised as integers
        codes, present, grouped = factorize_qid(func, qid.codes)
        return codes, qid.ids[present], grouped
    offsets = _sorted_object_runs(qid)
    if offsets is not None:
        codes = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        return codes, qid[offsets[:-1]], True
    plain = _compiled_object_ids(qid)
    if plain is None:
        plain = _plain_object_ids(qid)
    if plain is not None:  # all str or all int: factorised as numpy ids, handed back as objects
        codes, qids, grouped = factorize_qid(func, plain)
        return codes, _as_object_ids(qids), grouped
    offsets = _sorted_run_offsets(func, qid)
    if offsets is not None:
        codes = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        return codes, qid[offsets[:-1]], True
    return _factorize_unsorted(func, qid)


def _is_missing_id(value):
    """Whether one (object) query id is a missing value: None, or a value that is
    not equal to itself (float NaN of any type, NaT, decimal NaN), or pandas.NA
    (whose comparisons are themselves missing)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):  # pandas.NA: `NA != NA` is NA, whose truth is ambiguous
        return type(value).__name__ == "NAType"


def check_no_missing_qid(func, qid):
    """The one rule for missing query ids, whatever the dtype: they are an error.

    A missing id (None, NaN, NaT, pandas.NA, a missing value of a pandas string
    column) says nothing about which query a row belongs to; grouping such rows
    together or apart would both be guesses.  Numeric and datetime ids are
    checked vectorised; object ids need one pass over the values.
    """
    kind = qid.dtype.kind
    if kind in "fc":
        missing = np.isnan(qid)
    elif kind in "mM":
        missing = np.isnat(qid)
    elif kind == "O":
        if isinstance(qid, CodedIds):  # codes into ids already checked
            return
        values = qid.tolist()
        types = set(map(type, values))
        if types <= {str, int}:  # neither can be missing: no per-id test
            _warn_mixed_ids(func, types)
            return
        missing = np.fromiter(map(_is_missing_id, values), dtype=bool, count=qid.shape[0])
        if not missing.any():
            _warn_mixed_ids(func, types)
    else:
        return
    if missing.any():
        rows = np.flatnonzero(missing)
        shown = ", ".join(str(r) for r in rows[:5]) + (", ..." if rows.size > 5 else "")
        first = qid[rows[0]]
        shown_first = ("NaT" if kind in "mM" else repr(float(first))
                       if isinstance(first, (float, np.floating)) else repr(first))
        raise ValueError(
            f"{func}: qid must not contain missing ids (None, NaN, NaT or pandas.NA). Got "
            f"{rows.size} missing id(s), the first being {shown_first}, at row(s) {shown}. Drop "
            f"those rows or give them a query id."
        )


def _warn_mixed_ids(func, types):
    """Object ids of str and of another type (``types``): ``1`` and ``"1"`` are then two
    queries, which is seldom what was meant (ids read partly as numbers)."""
    if str in types and len(types) > 1:
        others = ", ".join(sorted(t.__name__ for t in types - {str}))
        warnings.warn(
            f"{func}: qid mixes str ids with ids of type {others}: an id such as 1 and the "
            f"str '1' are different queries. Give every id one type first, e.g. "
            f"qid.astype(str), if they should match.", UserWarning,
            stacklevel=caller_stacklevel())


def _sorted_run_offsets(func, qid):
    """Offsets of the runs of equal ids when ``qid`` is a sorted array of a plain
    dtype (the common layout, found without sorting), else None."""
    check_no_missing_qid(func, qid)
    n = qid.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.intp)  # no run: no query
    if qid.dtype.kind in "US" and n > _ROW_PROBE and _sorted_run_offsets(func, qid[:_ROW_PROBE]) is None:
        return None  # string ids in random order: told from the first rows
    if qid.dtype.kind in "US" and n > 1 and qid.dtype.itemsize % 4 == 0:
        # Strings: runs found on the raw characters as integer words (comparing
        # strings row by row is several times slower), order checked on one id per run.
        starts = _string_run_starts(qid)
        if not _increasing(qid, np.concatenate(([0], starts))):
            return None
        return np.concatenate(([0], starts, [n])).astype(np.intp)
    if qid.dtype.kind not in "iufUSbmM":
        return None
    if n > _ROW_PROBE and not bool(np.all(qid[1:_ROW_PROBE] >= qid[:_ROW_PROBE - 1])):
        return None  # ids in random order: told from the first rows
    if n > 1 and not bool(np.all(qid[1:] >= qid[:-1])):
        return None
    if n == 0:  # no rows: no queries (not one empty query)
        return np.zeros(1, dtype=np.intp)
    starts = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    return np.concatenate(([0], starts, [n])).astype(np.intp)


def _string_run_starts(qid):
    """Rows (from 1) whose string differs from the row before, compared as words."""
    width = qid.dtype.itemsize
    unit = np.uint64 if width % 8 == 0 else np.uint32
    words = np.ascontiguousarray(qid).view(unit).reshape(qid.shape[0], -1)
    differs = words[1:, 0] != words[:-1, 0]
    for column in range(1, words.shape[1]):
        differs |= words[1:, column] != words[:-1, column]
    return np.flatnonzero(differs) + 1


def _factorize_unsorted(func, qid):
    """:func:`factorize_qid` for ids that are not a sorted plain array."""
    if qid.dtype.kind in "iufUSbmM":
        found = _factorize_plain(qid)
        if found is not None:
            codes, qids = found
            return codes, qids, False
        qids, codes = np.unique(qid, return_inverse=True)
        return codes.reshape(-1), qids, False
    # object ids: numbers, strings, tuples, ... Sorted when comparable.
    try:
        qids, codes = np.unique(qid, return_inverse=True)
        # Sorting needs a total order; ids such as frozensets compare without one
        # and would leave one id in several places: then group by hash instead.
        if len(set(qids.tolist())) == qids.shape[0]:
            return codes.reshape(-1), qids, bool(np.all(codes[1:] >= codes[:-1]))
    except TypeError:
        pass
    index = {}
    try:
        codes = np.fromiter((index.setdefault(q, len(index)) for q in qid.tolist()),
                            dtype=np.intp, count=qid.shape[0])
    except TypeError as exc:
        raise TypeError(f"{func}: qid values must be hashable. Got an unhashable id ({exc}).") from None
    qids = np.empty(len(index), dtype=object)
    qids[:] = list(index)
    return codes, qids, bool(np.all(codes[1:] >= codes[:-1]))


# Factorising without a comparison sort.  np.unique(return_inverse=True) sorts every
# row (an argsort of n keys, ~90 ms per million rows); the ids of a ranking data set
# repeat, so the distinct ids are found in O(n) by a direct lookup (integers of a small
# range) or by hashing, and only the distinct ids are sorted.

# Golden-ratio multiplier of Fibonacci hashing (multiply-shift): the high bits of
# key * _HASH_MULTIPLIER spread consecutive or patterned keys over the table.
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


class CodedIds:
    """Query ids held as integer codes into their distinct ids (``ids[codes]`` row by
    row), as pandas hands a categorical or Arrow string column over and as
    :func:`_compiled_object_ids` reads object ids: the grouping takes the codes as
    integer ids, and the per-row id objects are never formed (gathering a million of
    them costs more than grouping the codes).  ``ids`` are distinct and sorted where
    a code points (others are unused: a categorical's categories, holes between
    string keys).  Anything that reads the ids row by row gets them through
    ``np.asarray`` or indexing, so no caller sees codes for ids."""

    ndim = 1
    dtype = np.dtype(object)

    def __init__(self, codes, ids, counts=None):
        self.codes = codes
        self.ids = ids
        self.counts = counts  # rows per code, where the reading counted them already

    @property
    def shape(self):
        return self.codes.shape

    @property
    def size(self):
        return self.codes.shape[0]

    def __len__(self):
        return self.codes.shape[0]

    def __getitem__(self, index):
        return self.ids[self.codes[index]]

    def __array__(self, dtype=None, copy=None):
        ids = self.ids[self.codes]
        return ids if dtype is None else ids.astype(dtype)

    def tolist(self):
        return self.ids[self.codes].tolist()


def _compiled_object_ids(qid):
    """Object ids read once in C (``skrank._speedups``, where it was built): all
    ``str`` as :class:`CodedIds` (short ASCII ids keyed by their characters, see
    :func:`_radix_coded_ids`; others numbered by a hash table, then renumbered in
    the ids' sorted order), all ``int`` within int64 as an int64 array.  None for other
    ids (a bool, a float, a numpy scalar, a missing id, ... among them) and without
    the module: the pure-numpy paths below then read them, with the same result.

    Each pure path pays a Python call per row (an elementwise comparison, tolist, a
    join), 10-20 ms per million rows; reading the objects in C costs 3-14 ms."""
    if _speedups is None or qid.dtype.kind != "O" or isinstance(qid, CodedIds) \
            or qid.ndim != 1 or qid.shape[0] == 0:
        return None
    qid = np.ascontiguousarray(qid)  # a strided view: its pointers copied
    n = qid.shape[0]
    kind = type(qid[0])
    if kind is int:
        values = np.empty(n, dtype=np.int64)
        return values if _speedups.int_values(qid, values) else None
    if kind is not str:
        return None
    heads = np.empty(n, dtype=np.uint64)  # short ASCII ids are their own keys
    low, high = np.empty(8, dtype=np.uint8), np.empty(8, dtype=np.uint8)
    if _speedups.ascii_heads(qid, heads, low, high):
        found = _radix_coded_ids(qid, heads, low, high)
        if found is not None:
            return found
    codes = np.empty(n, dtype=np.intp)
    firsts = np.empty(n, dtype=np.intp)  # only the first n_distinct are written
    n_distinct = _speedups.str_codes(qid, codes, firsts)
    if n_distinct < 0:  # not all str
        return None
    ids = qid[firsts[:n_distinct]]  # numbered in order of first appearance
    if bool(np.all(ids[1:] > ids[:-1])):  # first appearance is the ids' order (grouped rows)
        return CodedIds(codes, ids)
    listed = ids.tolist()  # renumbered in the ids' order
    order = np.array(sorted(range(n_distinct), key=listed.__getitem__), dtype=np.intp)
    rank = np.empty(n_distinct, dtype=np.intp)
    rank[order] = np.arange(n_distinct, dtype=np.intp)
    return CodedIds(rank[codes], ids[order])


def _radix_coded_ids(qid, heads, low, high):
    """:class:`CodedIds` of ids whose characters, zero-padded to eight bytes, are
    ``heads``, the smallest and largest character at each position ``low`` and
    ``high`` (see ``_speedups.ascii_heads``): the positions whose character varies
    make a mixed-radix key, the first position the most significant, so the keys
    order the ids as Python orders them; the keys are the codes (into ids with
    holes where no row has the key), counted in the same pass.  None when those
    ranges multiply past the limit of :func:`_small_range_groups` (the hash table
    then numbers the ids)."""
    found = _mixed_radix_weights(high.astype(np.int64) - low + 1, _small_range_limit(qid.shape[0]))
    if found is None:
        return None
    strides, width = found
    rows = np.empty(width, dtype=np.intp)
    counts = np.zeros(width, dtype=np.intp)
    _speedups.radix_keys(heads, low, strides, rows, counts)
    present = np.flatnonzero(counts)
    ids = np.empty(width, dtype=object)  # holes (None) where no id has the key
    ids[present] = qid[rows[present]]
    return CodedIds(heads.view(np.intp), ids, counts)


def _sorted_object_runs(qid):
    """Offsets of the runs of equal ids when ``qid`` is an object array of ids already
    grouped and sorted (the runs' ids all ``str`` or all ``int``, increasing), else None.

    One elementwise comparison of neighbours finds the runs, and only one id per run
    is type-checked and ordered: no conversion of every id.  A row equal to a ``str``
    is a string; a row equal to an ``int`` (``1.0``, ``True``) is the same query for
    np.unique too, and no missing id equals its neighbour.
    """
    n = qid.shape[0]
    if qid.dtype.kind != "O" or n < 2 or isinstance(qid, CodedIds):
        return None
    if n > _ROW_PROBE and _sorted_object_runs(qid[:_ROW_PROBE]) is None:
        return None  # ids in random order: told from the first rows
    if _speedups is not None and type(qid[0]) is int:
        return None  # read into int64 by _compiled_object_ids, cheaper than comparing here
    if _speedups is not None and type(qid[0]) is str:  # the runs found and ordered in C
        starts = np.empty(n, dtype=np.intp)
        n_runs = _speedups.str_runs(np.ascontiguousarray(qid), starts)
        if n_runs < 0:  # not all str (-1), or the runs' ids do not increase (-2)
            return None
        return np.append(starts[:n_runs], n)
    try:
        # NaN ids compare unequal quietly (an error later); NumPy 1.x warns where an
        # elementwise comparison fails, which the check below answers instead.
        with np.errstate(all="ignore"), filtered_on_numpy_1("ignore", DeprecationWarning):
            differs = qid[1:] != qid[:-1]
    except Exception:  # ids whose comparison raises: left to the general path
        return None
    # NumPy 1.x answers a failed elementwise comparison with one scalar bool.
    if not isinstance(differs, np.ndarray) or differs.dtype != bool \
            or differs.shape != (n - 1,):
        return None
    offsets = np.concatenate(([0], np.flatnonzero(differs) + 1, [n])).astype(np.intp)
    # The order first, on a few runs, then the types: ids in random order leave here
    # after a few comparisons, not a pass over every id.
    try:
        with np.errstate(all="ignore"):
            if not _increasing(qid, offsets[:-1], check_types=True):
                return None
    except Exception:  # ids without an order between them, decimal NaN, ...: general path
        return None
    return offsets


# Ids are checked for sorted runs on their first rows, then on the first runs, before
# every row: ids in random order are told apart at that cost.
# Not measured: probe sizes chosen small next to a pass over every id and large enough
# that random order shows in them.
_ROW_PROBE = 4096
_ORDER_PROBE = 64


def _increasing(qid, firsts, check_types=False):
    """Whether ``qid[firsts]`` strictly increases (and, with ``check_types``, whether
    those ids are all ``str`` or all ``int``), probing a prefix before the rest."""
    probe = qid[firsts[:_ORDER_PROBE]]
    if not bool(np.all(probe[1:] > probe[:-1])):
        return False
    ids = qid[firsts]
    if check_types and set(map(type, ids.tolist())) not in ({str}, {int}):
        return False
    return bool(np.all(ids[1:] > ids[:-1]))


def _plain_object_ids(qid):
    """Object ids that are all strings (as an ``S`` or ``<U`` array) or all ``int`` (int64),
    else None (also for ids pandas already factorised, and for any other dtype).
    A bool or a float among ints keeps the object path, as does a string holding
    "\\0" (a ``<U`` array drops trailing NULs).  Neither type can be a missing id,
    so the converted array has no missing-id pass to make."""
    if qid.dtype.kind != "O" or isinstance(qid, CodedIds):
        return None
    values = qid.tolist()
    if values and isinstance(values[0], str):
        return _joined_strings(values)
    if values and isinstance(values[0], (int, np.integer)):
        return _packed_integers(values)
    return None


def _packed_integers(values):
    """A list of integers as an int64 array, or None when one item is not an integer
    (a float, a string, None, ...), is a bool, or lies beyond int64.

    The array module packs the list in C and refuses anything without ``__index__``;
    of what it takes, only bools (and numpy's) would join the int ids they equal, and
    only rows packed as 0 or 1 can be one, so only those rows' types are looked at.
    (numpy integer scalars are taken as the ints they equal.)"""
    import array

    try:
        # NumPy 1.x: np.bool_.__index__ is deprecated
        with filtered_on_numpy_1("ignore", DeprecationWarning):
            packed = np.frombuffer(array.array("q", values), dtype=np.int64)
    except (TypeError, OverflowError, ValueError):
        return None
    if packed.dtype.itemsize != 8:  # pragma: no cover - "q" is 8 bytes on every platform numpy supports
        return None
    maybe_bool = np.flatnonzero(packed <= 1)
    maybe_bool = maybe_bool[packed[maybe_bool] >= 0]
    if maybe_bool.size:
        kinds = set(map(type, operator.itemgetter(*maybe_bool.tolist())(values))) \
            if maybe_bool.size > 1 else {type(values[int(maybe_bool[0])])}
        if any(issubclass(kind, (bool, np.bool_)) for kind in kinds):
            return None
    return packed


def _joined_strings(values):
    """A list of ``str`` as a fixed-width array (``S`` when every character is ASCII,
    else ``<U``; see :func:`_as_object_ids`), or None when one item is not a ``str``
    or holds "\\0".  The strings are joined with "\\0" (which checks their type, in C)
    and encoded once: ids of one length are then that buffer, viewed as fixed-width
    strings whose last character, the separator, is padding; others are placed row
    by row.  Several times cheaper than numpy's conversion of each object (and the
    type check and length search it needs)."""
    n = len(values)
    try:
        joined = "\0".join(values)
    except TypeError:  # not all strings
        return None
    joined += "\0"  # one separator each: ids of one length are then rows of one width
    if joined.isascii():  # known without a pass: one byte per character
        points, kind = np.frombuffer(joined.encode("ascii"), dtype=np.uint8), "S"
    else:  # lone surrogates kept, as numpy's own conversion keeps them
        points, kind = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4"), "<U"
    is_separator = points == 0
    if np.count_nonzero(is_separator) != n:  # an id holds "\0"
        return None
    width = len(values[0])
    if points.shape[0] == n * (width + 1) and bool(np.all(is_separator[width::width + 1])):
        # n separators, every (width + 1)-th character: ids of one length
        return points.view(f"{kind}{width + 1}")
    ends = np.flatnonzero(is_separator)
    starts = np.empty(n, dtype=np.intp)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    width = int((ends - starts).max()) + 1
    # Each id with its separator (padding after it in the fixed-width cells).
    return fixed_width_cells(points, starts, ends - starts + 1, width).view(f"{kind}{width}")


def fixed_width_cells(chars, starts, lengths, width):
    """Strings laid one after another in ``chars`` (id ``r``: ``lengths[r]`` characters
    from ``starts[r]``, together every character) copied to cells of ``width``
    characters, zero-padded: character j of id r goes to cell ``r * width + j``."""
    shift = np.arange(0, starts.shape[0] * width, width, dtype=np.intp)
    shift -= starts
    cells = np.repeat(shift, lengths)
    cells += np.arange(chars.shape[0])
    fixed = np.zeros(starts.shape[0] * width, dtype=chars.dtype)
    fixed[cells] = chars
    return fixed


def _as_object_ids(qids):
    """Ids found on :func:`_plain_object_ids`' array, handed back as the objects they
    were: ``str`` (ASCII strings were bytes), ``int``."""
    if qids.dtype.kind == "O":  # the ids themselves (CodedIds' distinct ids)
        return qids
    if qids.dtype.kind == "S":
        qids = qids.astype(f"U{qids.dtype.itemsize}")
    return qids.astype(object)


def _factorize_plain(qid):
    """``(codes, sorted distinct ids)`` of integer, float or string ids without sorting
    the rows, or None for dtypes left to np.unique (e.g. non-integral floats)."""
    kind = qid.dtype.kind
    if kind == "b":
        codes, uniques = _factorize_integers(qid.view(np.uint8))
        return codes, uniques.astype(bool)
    if kind in "iu":
        return _factorize_integers(qid)
    if kind == "f":
        with np.errstate(invalid="ignore"):
            as_int = qid.astype(np.int64)
        if not np.array_equal(as_int, qid):  # fractions, inf, or beyond int64
            return None
        codes, uniques = _factorize_integers(as_int)
        return codes, uniques.astype(qid.dtype)
    if kind in "US":
        keys = _string_character_keys(qid)  # one integer key per row, when few enough
        if keys is not None:
            codes, _ = _factorize_integers(keys)
        else:
            words = _string_words(qid)
            if words is None:
                return None
            codes, _ = _factorize_integers(words[0])
            for word in words[1:]:  # lexicographic: refine the codes word after word
                word_codes, word_uniques = _factorize_integers(word)
                codes, _ = _factorize_integers(codes * word_uniques.shape[0] + word_codes)
        first = np.zeros(codes.shape[0] and int(codes.max()) + 1, dtype=np.intp)
        first[codes[::-1]] = np.arange(codes.shape[0] - 1, -1, -1)  # a row of each id
        return codes, qid[first]
    return None


def _string_words(qid):
    """Fixed-width strings as big-endian uint64 words whose lexicographic order is the
    strings' order (one word for up to 8 Latin-1 characters); None if too wide."""
    qid = np.ascontiguousarray(qid, dtype=qid.dtype.newbyteorder("="))
    n, width = qid.shape[0], qid.dtype.itemsize
    if qid.dtype.kind == "S":
        data = qid.view(np.uint8).reshape(n, width)
    else:
        points = qid.view(np.uint32).reshape(n, width // 4)
        top = int(points.max()) if points.size else 0
        # Narrowest big-endian unit holding every code point: zero padding sorts first.
        unit = ">u1" if top < 2 ** 8 else ">u2" if top < 2 ** 16 else ">u4"
        data = points.astype(unit).view(np.uint8).reshape(n, -1)
    n_words = -(-data.shape[1] // 8)
    if n_words > 8 or n_words == 0:
        return None
    if data.shape[1] != 8 * n_words:
        padded = np.zeros((n, 8 * n_words), dtype=np.uint8)
        padded[:, :data.shape[1]] = data
        data = padded
    words = np.ascontiguousarray(data).view(">u8").astype(np.uint64)
    return [words[:, i] for i in range(n_words)]


def _factorize_integers(keys):
    """``(codes, sorted distinct keys)`` of an integer array, in O(n)."""
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp), keys[:0].copy()
    lo, hi = keys.min(), keys.max()
    if int(hi) - int(lo) < max(4 * n, 2 ** 16):
        # Small range: mark the ids present, number them in order, look each row up.
        if keys.dtype == np.uint64:  # may exceed intp; the differences do not
            offset = (keys - lo).astype(np.intp)
        else:
            offset = keys.astype(np.intp, copy=False) - lo
        present = np.zeros(int(hi) - int(lo) + 1, dtype=bool)
        present[offset] = True
        number = np.cumsum(present, dtype=np.intp)
        number -= 1
        # Wrapping arithmetic in the keys' own dtype: exact, as every result fits it.
        uniques = np.flatnonzero(present).astype(keys.dtype)
        uniques += lo
        return number[offset], uniques
    return _factorize_hashed(keys)


def _factorize_hashed(keys):
    """:func:`_factorize_integers` for a wide range: a hash table of about 2n slots.

    Each row's slot holds one of the keys hashed to it; rows whose key differs from
    its slot's mark the slot as shared, and the rows of shared slots (few: about
    k**2 / 4n of k distinct keys) are factorised by np.unique.
    """
    n = keys.shape[0]
    bits = max(int(n).bit_length() + 1, 8)
    slot = ((keys.astype(np.uint64, copy=False) * _HASH_MULTIPLIER)
            >> np.uint64(64 - bits)).astype(np.intp)
    table = np.empty(1 << bits, dtype=keys.dtype)
    table[slot] = keys
    clash = table[slot] != keys
    used = np.zeros(1 << bits, dtype=bool)
    used[slot] = True
    shared_rows = None
    if clash.any():
        shared = np.zeros(1 << bits, dtype=bool)
        shared[slot[clash]] = True
        used &= ~shared
        shared_rows = np.flatnonzero(shared[slot])
    slots = np.flatnonzero(used)
    uniques = table[slots]
    if shared_rows is not None:
        extra, extra_codes = np.unique(keys[shared_rows], return_inverse=True)
        uniques = np.concatenate([uniques, extra])
    order = np.argsort(uniques)
    rank = np.empty(order.shape[0], dtype=np.intp)
    rank[order] = np.arange(order.shape[0])
    slot_code = np.empty(1 << bits, dtype=np.intp)
    slot_code[slots] = rank[:slots.shape[0]]
    codes = slot_code[slot]
    if shared_rows is not None:
        codes[shared_rows] = rank[slots.shape[0] + extra_codes.reshape(-1)]
    return codes, uniques[order]


def group_queries(func, qid):
    """Return ``(qids, offsets, order)``: rows ``order[offsets[q]:offsets[q+1]]`` are
    query ``qids[q]``; ``order`` is None when the rows are already grouped."""
    groups = query_groups(func, qid)
    return groups.qids, groups.offsets, groups.order


class QueryGroups:
    """Which query each row belongs to, before any row is moved.

    ``qids``: the query ids; ``offsets``: query ``q`` holds ``offsets[q + 1] -
    offsets[q]`` rows; ``codes``: each row's query index, or None when the rows are
    already grouped in the order of ``qids``.  ``order``, the stable permutation
    that groups the rows (None when they are grouped), is computed on first use:
    a caller that needs only some rows grouped groups those (see
    :func:`rank_queries`).
    """

    def __init__(self, qids, offsets, codes=None):
        self.qids = qids
        self.offsets = offsets
        self.codes = codes
        self.n_queries = qids.shape[0]
        self._order = None

    @property
    def order(self):
        if self._order is None and self.codes is not None:
            self._order = _group_order(self.codes, self.n_queries, np.diff(self.offsets))
        return self._order

    def grouped(self, *arrays):
        """Each array's rows grouped by query (``array[self.order]``, one array per
        argument; the arrays themselves when the rows are already grouped).

        Many rows are moved chunk by chunk, without the order: each chunk is
        radix-sorted in cache and its rows written straight to their places, a few
        consecutive places per query and chunk, where gathering every array through
        the order reads each row from a random place (twice as slow at 1M rows).
        """
        if self.codes is None:
            return list(arrays)
        n = self.codes.shape[0]
        chunk = max(_CHUNK_ROWS, 1 << int(self.n_queries - 1).bit_length())
        if self._order is not None or n < 2 * chunk:
            return [array[self.order] for array in arrays]
        out = [np.empty_like(array) for array in arrays]
        positions = np.empty(chunk, dtype=np.intp)
        for first, part_order, sorted_positions in _chunk_positions(
                self.codes, self.n_queries, np.diff(self.offsets), chunk):
            m = part_order.shape[0]
            positions[part_order] = sorted_positions  # where each row of the chunk goes
            for array, grouped in zip(arrays, out):
                grouped[positions[:m]] = array[first:first + m]
        return out

    def first_rows(self):
        """One row of each query (any: its rows share the id)."""
        if self.codes is None:
            return self.offsets[:-1]
        rows = np.empty(self.n_queries, dtype=np.intp)
        rows[self.codes] = np.arange(self.codes.shape[0])
        return rows

    def count(self, flags):
        """Per query, the rows where the boolean ``flags`` (one per row, in input
        order) hold, without grouping the rows."""
        if self.codes is None:
            return _count_by_segment(flags, self.offsets)
        return self.count_values(flags.view(np.uint8), 2)[:, 1]

    def count_values(self, values, width):
        """``counts[q, v]``: rows of query ``q`` whose value is ``v``, for integer
        ``values`` in ``[0, width)``: one bincount of (query, value) cells."""
        cells = self.codes.astype(np.intp)
        cells *= width
        cells += values
        return np.bincount(cells, minlength=self.n_queries * width).reshape(-1, width)


def query_groups(func, qid):
    """:class:`QueryGroups` of the query ids ``qid`` (see :func:`group_queries`)."""
    if isinstance(qid, CodedIds) and qid.counts is not None:  # counted: no pass over the codes
        present, offsets, codes = _counted_groups(qid.codes, qid.counts)
        head = codes[:_ROW_PROBE]  # rows in random order told from the first rows
        grouped = bool(np.all(head[1:] >= head[:-1])) and bool(np.all(codes[1:] >= codes[:-1]))
        return QueryGroups(qid.ids[present], offsets, None if grouped else codes)
    if isinstance(qid, CodedIds):  # codes known: grouped as integers
        groups = query_groups(func, qid.codes)
        groups.qids = qid.ids[groups.qids]
        return groups
    offsets = _sorted_object_runs(qid)
    if offsets is not None:
        return QueryGroups(qid[offsets[:-1]], offsets)
    plain = _compiled_object_ids(qid)
    if plain is None:
        plain = _plain_object_ids(qid)
    if plain is not None:  # all str or all int: grouped as numpy ids, handed back as objects
        groups = query_groups(func, plain)
        groups.qids = _as_object_ids(groups.qids)
        return groups
    offsets = _sorted_run_offsets(func, qid)
    if offsets is not None:  # the common case: rows sorted by query, no regrouping
        return QueryGroups(qid[offsets[:-1]], offsets)
    if qid.dtype.kind in "iu":
        found = _small_range_groups(qid)
        if found is not None:
            return found
    if qid.dtype.kind in "US":
        found = _string_groups(qid)
        if found is not None:
            return found
    codes, qids, grouped = _factorize_unsorted(func, qid)
    offsets = np.zeros(qids.shape[0] + 1, dtype=np.intp)
    np.cumsum(np.bincount(codes, minlength=qids.shape[0]), out=offsets[1:])
    return QueryGroups(qids, offsets, None if grouped else codes)


def _string_groups(qid):
    """:class:`QueryGroups` of unsorted fixed-width string ids whose character keys
    (see :func:`_string_character_keys`) span a small range, or None.  The ids are
    decoded from the keys present when the keys are few, else read at a row of each
    (a scatter of every row)."""
    found = _string_character_keys(qid, with_strings=True)
    if found is None:
        return None
    keys, strings = found
    groups = _small_range_groups(keys)
    if groups is None:
        return None
    if strings is None:
        groups.qids = qid[groups.first_rows()]
    else:
        groups.qids = strings[groups.qids].astype(qid.dtype, copy=False)
    return groups


def _string_character_keys(qid, *, with_strings=False):
    """Integer keys ordered as the fixed-width strings ``qid`` are, from the characters
    each position holds, combined as the digits of a mixed-radix number.  Ids such as
    "q00042" vary in a few positions over few characters, so the keys span a small
    range (then grouped by lookup); None when they would span more than 2**32 values
    or 4 per row.  The keys are uint16 when they span at most 2**16 values, else
    uint32 (int64 when numbered, below).

    A position's digit is its character minus the smallest one found there (base: the
    characters' range), so the keys are one pass of Horner's rule over the positions
    that vary; only when those ranges multiply past the limit are each position's
    characters numbered in order (a bincount of that column) to narrow the bases.

    ``with_strings``: returns ``(keys, strings)`` instead, ``strings[key]`` the string
    of every key in ``[0, keys.max()]`` (held by a row or not), decoded from the
    digits when they span at most one key per 8 rows, else None."""
    n = qid.shape[0]
    if qid.dtype.itemsize == 0 or n == 0:
        return None
    unit = np.uint8 if qid.dtype.kind == "S" else np.uint32
    chars = _narrow_characters(
        np.ascontiguousarray(qid, dtype=qid.dtype.newbyteorder("=")).view(unit).reshape(n, -1))
    limit = _small_range_limit(n)
    lo, hi = _column_min_max(chars)
    bases = hi.astype(np.int64) - lo + 1
    varying = np.flatnonzero(bases > 1)
    found = _mixed_radix_weights(bases, limit)  # last character: least significant
    if found is None:
        keys = _numbered_character_keys(chars, limit)
        return (keys, None) if with_strings and keys is not None else keys
    weights, span = found
    # uint16 or uint32 arithmetic wraps: exact, as every key lies in [0, span).
    dtype = np.uint16 if span <= 2 ** 16 else np.uint32
    keys = _horner_keys(chars, varying, bases, dtype)
    keys -= dtype(int(lo.astype(np.int64) @ weights) % (np.iinfo(dtype).max + 1))
    if not with_strings:
        return keys
    if 8 * span > n:  # decoding every key would make more strings than a row of each
        return keys, None
    # Every key's characters: the smallest ones, plus each position's digit of the key.
    every = np.arange(span, dtype=np.uint32)
    strings = np.repeat(lo.astype(unit)[None, :], span, axis=0)
    for position in varying:
        strings[:, position] += (every // weights[position] % np.uint32(bases[position])).astype(unit)
    return keys, strings.view(qid.dtype.newbyteorder("=")).reshape(span)


# Rows of code points checked and narrowed at a time by _narrow_characters: a block
# that stays in the 2 MiB L2 cache between the two (measured best of 0.4 to 6 MiB).
# Measured: see above (best block size between 0.4 and 6 MiB).
_NARROW_BLOCK_BYTES = 3 * 2 ** 19


def _narrow_characters(chars):
    """The code points ``chars`` (uint32, one row per id) as uint8 or uint16 when all
    fit: after that cast, every pass over a position reads a quarter (or half) of the
    memory (a position's column is strided: reading it alone reads every row's cache
    lines).  Bytes are returned as they are.

    Block by block, the largest code point is checked and the block cast while it is
    in cache: one trip through memory for both, where the whole array is read twice.
    A block that needs 16 bits widens the rows cast so far (a quarter of their bytes);
    one beyond 16 bits gives up at once."""
    if chars.dtype == np.uint8:
        return chars
    narrow = np.empty(chars.shape, dtype=np.uint8)
    rows = max(1, _NARROW_BLOCK_BYTES // max(chars.strides[0], 1))
    for first in range(0, chars.shape[0], rows):
        block = chars[first:first + rows]
        top = int(block.max())
        if top > np.iinfo(narrow.dtype).max:
            if top >= 2 ** 16:
                return chars
            wider = np.empty(chars.shape, dtype=np.uint16)
            wider[:first] = narrow[:first]
            narrow = wider
        np.copyto(narrow[first:first + rows], block, casting="unsafe")
    return narrow


def _horner_keys(chars, positions, bases, dtype):
    """``sum(chars[:, p] * prod(bases[q] for q in positions after p))`` over
    ``positions``, in the unsigned ``dtype`` (wrapping): Horner's rule, one multiply
    and one add per position on a contiguous accumulator (a matrix-vector product of
    integers runs a slow loop per row)."""
    if positions.shape[0] == 0:
        return np.zeros(chars.shape[0], dtype=dtype)
    if positions.shape[0] == 1:
        return chars[:, positions[0]].astype(dtype)
    keys = np.multiply(chars[:, positions[0]], dtype(bases[positions[1]]), dtype=dtype)
    keys += chars[:, positions[1]]
    for position in positions[2:]:
        keys *= dtype(bases[position])
        keys += chars[:, position]
    return keys


def _column_min_max(chars):
    """Smallest and largest value of each column of a narrow 2-D array.  numpy reduces
    the first axis of a few columns slowly (a few elements per inner step), so blocks
    of rows are laid side by side first: wide rows, reduced elementwise."""
    rows = 256
    m = chars.shape[0] // rows * rows
    if m == 0:
        return chars.min(axis=0), chars.max(axis=0)
    head = chars[:m].reshape(-1, rows * chars.shape[1])
    lo = head.min(axis=0).reshape(rows, -1).min(axis=0)
    hi = head.max(axis=0).reshape(rows, -1).max(axis=0)
    if m < chars.shape[0]:
        np.minimum(lo, chars[m:].min(axis=0), out=lo)
        np.maximum(hi, chars[m:].max(axis=0), out=hi)
    return lo, hi


def _numbered_character_keys(chars, limit):
    """:func:`_string_character_keys` with each position's characters numbered in order
    (a bincount of that column): bases as small as the characters found allow."""
    n = chars.shape[0]
    keys = np.zeros(n, dtype=np.int64)
    span = 1
    for position in range(chars.shape[1]):
        column = chars[:, position]
        if column.min() == column.max():  # the same character on every row
            continue
        present = np.bincount(column) > 0
        base = int(np.count_nonzero(present))
        span *= base
        if span > limit:
            return None
        number = np.cumsum(present, dtype=np.int64)
        number -= 1
        keys *= base
        keys += number[column]
    return keys


def _small_range_limit(n):
    """The widest range of integer keys of ``n`` rows grouped by a direct lookup: 4
    values per row, at least 2**16, at most 2**32 (a bincount over the range)."""
    return min(max(4 * n, 2 ** 16), 2 ** 32)


def _mixed_radix_weights(bases, limit):
    """``(weights, span)`` of a mixed-radix number whose digit at each position has
    ``bases[position]`` values, the last position the least significant (a position
    of one value weighs 0); None when the numbers would span more than ``limit``."""
    weights = np.zeros(bases.shape[0], dtype=np.int64)
    span = 1
    for position in np.flatnonzero(bases > 1)[::-1]:  # a few positions, not rows
        weights[position] = span
        span *= int(bases[position])
        if span > limit:
            return None
    return weights, span


def _small_range_groups(keys):
    """:class:`QueryGroups` of unsorted integer ids of a small range (at most 65,536
    values, or 4 per row, and below 2**32) without factorising: the offsets from the
    key minus the smallest (one bincount over the range), the codes from the same
    differences (ids in increasing order are query codes in increasing order).  None
    for a wider range."""
    lo, hi = keys.min(), keys.max()
    width = int(hi) - int(lo) + 1
    if width > _small_range_limit(keys.shape[0]):
        return None
    # Keys cast (modulo 2**64) to intp, then the smallest subtracted there: wrapping
    # arithmetic, exact as every difference fits.  Full-width codes, as bincount and
    # indexing take them without a cast.
    if lo == 0 and keys.dtype == np.intp:  # ids from 0: the keys are the offsets
        offset = keys
    else:  # one pass: the cast happens inside the subtraction
        offset = np.subtract(keys, np.asarray(lo).astype(np.intp), dtype=np.intp, casting="unsafe")
    present, offsets, codes = _counted_groups(offset, np.bincount(offset, minlength=width))
    qids = present.astype(keys.dtype)
    qids += lo
    return QueryGroups(qids, offsets, codes)


def _counted_groups(keys, counts):
    """``(present, offsets, codes)`` of rows whose integer ``keys`` lie in ``[0,
    counts.size)``, ``counts[key]`` rows holding each: the keys held, in increasing
    order, are the queries; the keys themselves are the codes unless some key of the
    range is held by no row (then those held are numbered)."""
    present = np.flatnonzero(counts)
    offsets = np.zeros(present.shape[0] + 1, dtype=np.intp)
    np.cumsum(counts[present], out=offsets[1:])
    if present.shape[0] < counts.shape[0]:  # ids missing from the range: number those present
        number = np.cumsum(counts > 0, dtype=np.intp)
        number -= 1
        keys = number[keys]
    return present, offsets, keys


def _top_rows(offsets, k):
    """Rows at positions < k of each segment: (rows, segment, position), by arithmetic."""
    sizes = np.diff(offsets)
    n_seg = sizes.shape[0]
    counts = np.minimum(sizes, k)
    if n_seg and counts.min() == counts.max():
        c = int(counts[0])
        position = np.tile(np.arange(c), n_seg)
        segment = np.repeat(np.arange(n_seg), c)
        rows = (offsets[:-1, None] + np.arange(c)).reshape(-1)
        return rows, segment, position
    segment = np.repeat(np.arange(n_seg), counts)
    first_out = np.cumsum(counts) - counts
    position = np.arange(segment.shape[0]) - first_out[segment]
    return offsets[:-1][segment] + position, segment, position


def _count_dtype(n):
    # Sums of one-byte flags are fastest in 32 bits, which hold any count below 2**31.
    return np.int32 if n < 2 ** 31 else np.intp


def _count_by_segment(mask, offsets):
    """True entries of ``mask`` in each segment ``offsets[q]:offsets[q + 1]``."""
    if mask.size and np.all(offsets[1:] > offsets[:-1]):
        return np.add.reduceat(mask.view(np.int8), offsets[:-1], dtype=_count_dtype(mask.size)
                               ).astype(np.intp, copy=False)
    cumulative = np.concatenate(([0], np.cumsum(mask, dtype=np.intp)))
    return np.diff(cumulative[offsets])


# Bits sorted per radix pass: numpy's stable sort of 16-bit integers is a radix sort,
# O(n).  (Lowered in the tests, so that several passes run on a few rows.)
# Not measured: numpy's own choice (its stable sort is a radix sort up to 16-bit ints).
_RADIX_DIGIT_BITS = 16

# numpy's radix sort costs ~3x more per row at 1M rows than at 64k, and ~8x at 10M: its
# scatter leaves the caches.  Beyond _CHUNKED_ABOVE rows the rows are therefore sorted
# in chunks of _CHUNK_ROWS that stay in cache, then placed (measured: 3M rows 1.3x
# faster, 10M rows 3x; no gain at 1M).  (Lowered in the tests.)
# Measured: see above; the break-even measured near 4M rows with one radix pass and
# 2-4M with two, so chunking starts at 2M.
_CHUNK_ROWS = 2 ** 16
_CHUNKED_ABOVE = 2 * 2 ** 20


def _group_order(codes, n_queries, counts=None):
    """Stable permutation that makes each query's rows contiguous.

    ``codes`` are non-negative integers below ``n_queries`` (``counts``, if known:
    the rows of each code).  Up to 2**32 queries:
    stable 16-bit radix passes, least significant digit first (two passes above
    65,536 queries): still O(n), where one stable sort of the full codes is a
    comparison sort, several times slower.  Many rows are sorted chunk by chunk
    (see :func:`_chunked_group_order`).
    """
    bits = max(int(n_queries - 1).bit_length(), 1)
    if bits > 32:
        return np.argsort(codes, kind="stable")
    if codes.shape[0] > _CHUNKED_ABOVE:
        return _chunked_group_order(codes, n_queries, counts)
    return _radix_order(codes, bits)


def _radix_order(codes, bits):
    """Stable argsort of non-negative integer ``codes`` below ``2**bits`` (bits <= 32)."""
    digit = _RADIX_DIGIT_BITS
    mask = (1 << digit) - 1
    order = None
    for shift in range(0, bits, digit):
        key = codes if shift == 0 else codes >> shift
        key = key.astype(np.uint16) if digit == 16 else (key & mask).astype(np.uint16)
        if order is None:
            order = np.argsort(key, kind="stable")
        else:
            order = order[np.argsort(key[order], kind="stable")]
    return order


def _chunked_group_order(codes, n_queries, counts=None):
    """:func:`_group_order` of many rows, chunk by chunk (see :func:`_chunk_positions`)."""
    if counts is None:
        counts = np.bincount(codes, minlength=n_queries)
    order = np.empty(codes.shape[0], dtype=np.intp)
    for first, part_order, sorted_positions in _chunk_positions(codes, n_queries, counts,
                                                                _CHUNK_ROWS):
        part_order += first
        order[sorted_positions] = part_order
    return order


def _chunk_positions(codes, n_queries, counts, chunk):
    """For each chunk of ``chunk`` rows: ``(first row, order, positions)``: the
    chunk's row ``order[i]`` (counted from ``first``) goes to ``positions[i]`` in the
    stable grouping of all the rows.

    Each chunk is radix-sorted in cache; the j-th row of query q in the sorted
    chunk goes to q's next free place plus j (after the same query's rows of
    earlier chunks, so the grouping is the stable one).  A loop over chunks, each
    step vectorised over its rows.
    """
    bits = max(int(n_queries - 1).bit_length(), 1)
    next_free = np.zeros(n_queries, dtype=np.intp)  # where each query's next row goes
    np.cumsum(counts[:-1], out=next_free[1:])
    within = np.arange(min(chunk, codes.shape[0]))
    for first in range(0, codes.shape[0], chunk):
        part = codes[first:first + chunk]
        m = part.shape[0]
        part_order = _radix_order(part, bits)
        part_counts = np.bincount(part, minlength=n_queries)
        # Sorted place of query q's first row in the chunk, minus q's next free place.
        shift = np.cumsum(part_counts)
        shift -= part_counts
        shift -= next_free
        positions = shift[part[part_order]]
        np.subtract(within[:m], positions, out=positions)
        next_free += part_counts
        yield first, part_order, positions


def _size_blocks(offsets, include=None):
    """Yield (members, first rows, widths, block width) for queries grouped by size class.

    Queries whose sizes share ``ceil(2 * log2(size))`` form one block: one 2-D
    array padded to the block's longest query, sorted with one row-wise call.
    ``include`` (boolean, per query) restricts the blocks to some queries.
    """
    sizes = np.diff(offsets)
    nonempty = sizes > 0
    if include is not None:
        nonempty &= include
    if not nonempty.any():
        return
    lo, hi = sizes[nonempty].min(), sizes[nonempty].max()
    if lo == hi:
        members = np.flatnonzero(nonempty)
        yield members, offsets[members], sizes[members], int(hi)
        return
    size_class = np.zeros(sizes.shape, dtype=np.intp)
    # Half-octave classes: padding stays under sqrt(2) times the real rows.
    size_class[nonempty] = np.ceil(2 * np.log2(sizes[nonempty])).astype(np.intp)
    for cls in np.unique(size_class[nonempty]):
        members = np.flatnonzero((size_class == cls) & nonempty)
        widths = sizes[members]
        yield members, offsets[members], widths, int(widths.max())


def _block(values, starts, widths, width, fill, *, rows_needed=True):
    """Rows of ``values`` as a 2-D block; returns (block, rows, valid).

    ``rows`` are the indices of the block's real cells in ``values`` and
    ``valid`` marks them (None when no padding is needed); ``rows`` is None
    when the queries tile ``values`` (a free reshape) or ``rows_needed`` is False.
    """
    if starts.shape[0] * width == values.shape[0] and widths.min() == width:
        return values.reshape(-1, width), None, None
    if starts.shape[0] == 1:  # one query alone in its class (a long one): a plain slice
        first = int(starts[0])
        return values[first:first + width].reshape(1, width), slice(first, first + width), None
    block = _windows(values, starts, width)
    rows = None
    if rows_needed:
        # Real cells, row after row: query i's rows are starts[i] .. starts[i] + widths[i] - 1.
        before = np.cumsum(widths) - widths
        rows = np.repeat(starts - before, widths) + np.arange(before[-1] + widths[-1])
    if widths.min() == width:
        return block, rows, None
    valid = np.arange(width) < widths[:, None]
    np.putmask(block, ~valid, fill)
    return block, rows, valid


def _windows(values, starts, width):
    """``values[starts[i]:starts[i] + width]`` as the rows of a new 2-D array.

    One row gather from a sliding-window view: a copy of contiguous runs,
    several times cheaper than gathering cell by cell with a 2-D index.
    """
    n = values.shape[0]
    if n < width:
        values = np.concatenate([values, np.zeros(width - n, dtype=values.dtype)])
        n = width
    # as_strided, not sliding_window_view: same view, a fraction of the call overhead.
    windows = np.lib.stride_tricks.as_strided(
        values, shape=(n - width + 1, width), strides=(values.strides[0],) * 2, writeable=False)
    fits = starts <= n - width
    if fits.all():
        return windows[starts]
    # The last queries' windows would run past the end: clip their (padding) cells.
    block = np.empty((starts.shape[0], width), dtype=values.dtype)
    block[fits] = windows[starts[fits]]
    block[~fits] = values[np.minimum(starts[~fits, None] + np.arange(width), n - 1)]
    return block


def _scatter(out, result, rows, valid):
    # Padding sorts last, so the first `width_q` entries of each row are the real ones.
    out[rows] = result.reshape(-1) if valid is None else result[valid]


def segmented_argsort_desc(values, offsets, *, stable, with_ties=False):
    """Permutation sorting ``values`` descending within each segment.

    ``values`` are grouped: segment ``q`` is ``values[offsets[q]:offsets[q+1]]``.
    With ``stable=True`` equal values keep their order; otherwise their order is
    unspecified.  ``values`` must be finite (padding uses -inf).  With ``with_ties``,
    returns ``(order, tied)``: ``tied`` is False only when no segment holds two equal
    values (found by the sort itself, so that a tie-free ranking needs no tie check).
    """
    out = np.empty(values.shape[0], dtype=np.intp)
    tied = False
    for _, starts, widths, width in _size_blocks(offsets):
        block, rows, valid = _block(values, starts, widths, width, -np.inf)
        order, block_tied = _argsort_rows_desc(block, "stable" if stable else None, starts,
                                               padded=valid is not None)
        tied = tied or block_tied
        if rows is None:
            out = order.reshape(-1)
            break
        _scatter(out, order, rows, valid)
    return (out, tied) if with_ties else out


# Rows of a block are sorted a chunk of about this many cells at a time: the chunk's
# keys and its order stay in cache, and no temporary as large as the block is made.
# Not measured: sized so that a chunk's keys and order (16 B a cell, 1 MiB) stay in L2.
_SORT_CHUNK_CELLS = 2 ** 16

# Widest rows sorted by keys (see _keyed_argsort_rows_desc): the column takes the
# key's low bits, the fewer the better (distinct values sharing the rest are re-sorted).
# Not a timing: the key layout's bound (the column in the key's low 24 bits).
_KEYED_MAX_WIDTH = 2 ** 24

_SIGN_CLEARED = np.int64(0x7FFF_FFFF_FFFF_FFFF)


def _argsort_rows_desc(block, kind, starts, padded=False):
    """``(order, tied)``: the permutation sorting each row of ``block`` in descending
    order, plus ``starts`` (one per row: where the row's values begin), and False when
    no row holds two equal values other than the -inf padding (True: unknown).
    ``padded``: some rows end in -inf padding.  Float64 rows take
    :func:`_keyed_argsort_rows_desc`; others an ascending argsort of the negated values
    (negation is far cheaper than reversing each sorted row, a strided pass), chunk by
    chunk."""
    n_rows, width = block.shape
    if (block.dtype == np.float64 and 2 <= width <= _KEYED_MAX_WIDTH
            and np.dtype(np.intp) == np.dtype(np.int64)):
        return _keyed_argsort_rows_desc(block, starts, padded)
    step = max(1, _SORT_CHUNK_CELLS // max(width, 1))
    order = np.empty(block.shape, dtype=np.intp)
    negated = np.empty((min(step, n_rows), width), dtype=block.dtype)
    for first in range(0, n_rows, step):
        chunk = block[first:first + step]
        rows = chunk.shape[0]
        np.negative(chunk, out=negated[:rows])
        part = order[first:first + rows]
        part[...] = np.argsort(negated[:rows], axis=1, kind=kind)
        part += starts[first:first + rows, None]   # while the chunk is in cache
    return order, width > 1   # (one value a row: no tie)


def _keyed_argsort_rows_desc(block, starts, padded):
    """:func:`_argsort_rows_desc` of float64 rows by sorting values, not indices.

    numpy sorts 64-bit integers about three times faster than it argsorts floats.  Each
    cell gets one int64 key: its value's bits mapped to an integer order that descends
    with the value, the low ``b`` bits replaced by its column (``2**b >= width``); -inf
    padding gets distinct keys above every value's.  The sorted keys give the order
    (their low bits), and equal values keep their columns' order, as a stable sort does.

    Values whose own low ``b`` bits are not all zero may differ only there (integers,
    float32 values and short fractions never do): such values share the rest of their
    keys and may be misordered.  Neighbouring sorted keys that share it are found (the
    XOR of the two keys); where a chunk's values use their low bits, the rows where two
    different values meet so are argsorted again, stably.  The same pairs say whether a
    row holds equal values.
    """
    n_rows, width = block.shape
    low = np.int64((1 << int(width - 1).bit_length()) - 1)
    columns = np.arange(width, dtype=np.int64)
    padding = None
    if padded:  # above the key of -inf (0x7FF0...), distinct beyond the column bits
        padding = columns * (low + 1) + columns + np.int64(0x7FF8 << 48)
    step = min(n_rows, max(1, _SORT_CHUNK_CELLS // width))
    order = np.empty(block.shape, dtype=np.intp)
    keys = np.empty((step, width), dtype=np.int64)
    shared = np.empty((step, width - 1), dtype=np.int64)
    tied = False
    for first in range(0, n_rows, step):
        chunk = block[first:first + step]
        rows = chunk.shape[0]
        part = order[first:first + rows]
        chunk_tied = _sort_keyed_chunk(chunk, keys[:rows], shared[:rows], part, low, ~columns,
                                       padding)
        tied = tied or chunk_tied
        part += starts[first:first + rows, None]   # while the chunk is in cache
    return order, tied


def _sort_keyed_chunk(chunk, key, shared, part, low, flip, padding):
    """Sort one chunk of :func:`_keyed_argsort_rows_desc`: its columns in order into
    ``part``; ``key`` and ``shared`` are work space.  Returns whether a row ties."""
    as_int = chunk.view(np.int64)
    # XOR with ~column (`flip`): low bits all set (by OR) become the column, the others
    # flip, so that larger values get smaller keys.
    if as_int.min() >= 0:  # no sign bit set (no -0.0): the bits ascend with the value
        np.bitwise_or(as_int, low, out=key)
        key ^= flip
    else:
        np.add(chunk, 0.0, out=key.view(np.float64))   # -0.0 -> 0.0: one key for zero
        # Negative values: the bits other than the sign descend with the value.
        sign = np.right_shift(key, 63)
        sign &= _SIGN_CLEARED
        key ^= sign
        key |= low
        key ^= flip
        if padding is not None:
            np.copyto(key, padding, where=chunk == -np.inf)
    key.sort(axis=1)
    np.bitwise_and(key, low, out=part)
    # Neighbours whose keys differ only in the column bits: the XOR of their keys is at
    # most `low` (unsigned: keys of both signs XOR to a negative int64).
    np.bitwise_xor(key[:, 1:], key[:, :-1], out=shared)
    shared = shared.view(np.uint64)
    if shared.min() > low:
        return False  # neighbours differ beyond the column bits: no tie, no misorder
    np.bitwise_and(as_int, low, out=key)
    if not key.any():  # the values keep nothing in their low bits: equal neighbours
        return True
    row, column = np.nonzero(shared <= low)
    upper = chunk[row, part[row, column]]
    lower = chunk[row, part[row, column + 1]]
    tied = bool(np.any(upper == lower))
    redo = np.unique(row[upper != lower])
    if redo.size:
        values = chunk[redo]
        part[redo] = np.argsort(np.negative(values), axis=1, kind="stable")
        in_order = np.take_along_axis(values, part[redo], axis=1)
        tied = tied or bool(np.any((in_order[:, 1:] == in_order[:, :-1])
                                   & (in_order[:, 1:] != -np.inf)))
    return tied


def _take_in_order(order, labels, scores=None):
    """``(labels[order], same)``: the labels in ``order`` and, with ``scores``,
    ``scores[order][1:] == scores[order][:-1]`` (else None), a chunk at a time.

    ``order`` is consumed: when the labels have its item size, they are written over it
    chunk by chunk (each chunk's tie flags found first), so that ranking a million rows
    touches one fresh array of that size, not two (the pages of a fresh array cost about
    as much as the sort's arithmetic on them).
    """
    n = order.shape[0]
    in_place = labels.dtype.itemsize == order.dtype.itemsize and order.flags.c_contiguous
    out = order.view(labels.dtype) if in_place else np.empty(n, dtype=labels.dtype)
    same = None if scores is None else np.empty(max(n - 1, 0), dtype=bool)
    for first in range(0, n, _SORT_CHUNK_CELLS):
        last = min(first + _SORT_CHUNK_CELLS, n)
        if same is not None and first < n - 1:
            # (order[last], the next chunk's first row, is not overwritten yet)
            gathered = scores[order[first:min(last + 1, n)]]
            np.equal(gathered[1:], gathered[:-1], out=same[first:min(last, n - 1)])
        out[first:last] = labels[order[first:last]]
    return out, same


# Rows in random order read to a depth.  Grouping every row (a radix sort and a
# random gather of the scores) would cost as much as ranking grouped rows; instead a
# lower bound of each query's k-th largest score is found without grouping, and only
# the rows scoring at least that much (the candidates) are grouped and ranked.  The
# bound: the rows are cut into _SUBSETS_PER_K * k consecutive slices, each query's
# rows in each slice form one subset, and the k-th largest of a query's subset maxima
# is at most its k-th largest score (the maxima of disjoint subsets are k distinct rows
# reaching it), so the candidates hold every row of the leading k ranks, ties at the
# cutoff included.  Rows in random order spread each query over every slice; rows in
# runs of one query (grouped, but not in the order of the ids) do not, and are
# grouped whole.
# Not measured (nor _CANDIDATE_SHARE, _PASS_ROWS, _MAX_SUBSETS below): chosen by reasoning
# about the bound's tightness and the cost of one numpy call per subset.
_SUBSETS_PER_K = 2

# Candidates are grouped when they are at most this share of the rows; else (queries
# too short to filter, or rows grouped in a way the subsets do not spread) every row is.
_CANDIDATE_SHARE = 0.5

# Rows per step of the passes over every row, so that their temporaries stay in cache.
_PASS_ROWS = 2 ** 16

# At most this many subsets (one numpy call each): larger cutoffs rank every row.
_MAX_SUBSETS = 1024


def _candidate_rows(groups, labels, scores, depth):
    """The rows of each query that can be ranked within ``depth``, grouped by query
    in input order: ``(offsets, labels, scores)`` of those rows (query ``q``'s are
    ``offsets[q]:offsets[q + 1]``), or None when filtering does not pay.

    The candidates of a query are its rows scoring at least a bound that is at most
    the query's ``k``-th largest score and at most the score of its best document
    of each ``first_relevant`` threshold: a prefix of the query's ranking (never a
    part of a tie group) at least as deep as ``depth``.
    """
    n_queries, n = groups.n_queries, scores.shape[0]
    codes = groups.codes
    if _in_runs(codes[:_ROW_PROBE], np.diff(groups.offsets) / n):
        return None  # rows in runs of one query: the slices would not spread them
    bound = None
    if depth.k is not None:
        bound = _kth_largest_lower_bound(scores, codes, n_queries, depth.k)
        if bound is None:
            return None
    for threshold in depth.first_relevant:
        relevant = labels >= threshold
        best = np.full(n_queries, -np.inf)
        np.maximum.at(best, codes[relevant], scores[relevant])
        best[best == -np.inf] = np.inf  # no such document: nothing to read for it
        bound = best if bound is None else np.minimum(bound, best)
    # Chunk by chunk (each chunk's bounds gathered and compared while in cache), giving
    # up as soon as too many rows reach them; then the candidates gathered at once.
    keep = np.empty(n, dtype=bool)
    n_kept = 0
    for first in range(0, n, _PASS_ROWS):
        part = slice(first, first + _PASS_ROWS)
        np.greater_equal(scores[part], bound[codes[part]], out=keep[part])
        n_kept += np.count_nonzero(keep[part])
        if n_kept > _CANDIDATE_SHARE * n:
            return None
    found = np.flatnonzero(keep)
    kept_codes, kept_labels, kept_scores = codes[found], labels[found], scores[found]
    offsets = np.zeros(n_queries + 1, dtype=np.intp)
    np.cumsum(np.bincount(kept_codes, minlength=n_queries), out=offsets[1:])
    kept_labels, kept_scores = QueryGroups(groups.qids, offsets, kept_codes).grouped(
        kept_labels, kept_scores)
    return offsets, kept_labels, kept_scores


def _in_runs(codes, shares):
    """Whether neighbouring ``codes`` are equal far more often than rows in random
    order would be (``shares``: each query's share of the rows)."""
    if codes.shape[0] < 2:
        return False
    equal = np.count_nonzero(codes[1:] == codes[:-1]) / (codes.shape[0] - 1)
    return equal > max(0.5, 4 * float(np.square(shares).sum()))


def _kth_largest_lower_bound(scores, codes, n_queries, k):
    """Per query, a value at most its ``k``-th largest score (-inf when its rows fill
    fewer than ``k`` subsets), or None when the queries hold too few rows on average
    for the subsets to say much.

    The subsets are the query's rows in each of ``_SUBSETS_PER_K * k`` consecutive
    slices of the rows: each slice updates its own table of one maximum per query,
    small enough to stay in cache (subsets by row number modulo the count would
    scatter every row over the whole table).
    """
    n = scores.shape[0]
    n_subsets = _SUBSETS_PER_K * k
    if n_subsets * n_queries > n or n_subsets > _MAX_SUBSETS:
        return None
    maxima = np.full((n_subsets, n_queries), -np.inf)
    step = -(-n // n_subsets)
    for subset, first in enumerate(range(0, n, step)):
        np.maximum.at(maxima[subset], codes[first:first + step], scores[first:first + step])
    return np.partition(maxima, n_subsets - k, axis=0)[n_subsets - k]


def segmented_top_order(values, offsets, depth, *, stable):
    """The ``depth`` leading ranks of each segment, in order (descending values).

    Segments longer than ``2 * depth`` are not sorted: only a prefix of their
    ranking is kept, the rows whose value reaches a floor that is at most the
    segment's ``depth``-th largest value (so the ``depth`` leading ranks and every
    row tied with the last of them: a tie group is never cut), and only those are
    sorted.  Shorter segments are sorted whole (selecting from them saves nothing).
    Returns ``(order, kept_offsets)``: the kept rows of segment ``q`` are
    ``order[kept_offsets[q]:kept_offsets[q + 1]]``, best first; with ``stable=True``
    equal values keep their input order, so this is a prefix of the stable sort of
    the whole segment.  None when no segment is long enough to select from.
    ``values`` must be finite.

    Segments of one size (a free reshape into one 2-D block) keep exactly the rows
    reaching their ``depth``-th largest value (:func:`_exact_top_order`); segments of
    uneven sizes keep the rows reaching a lower bound of it found without padded
    blocks (:func:`_bounded_top_order`).
    """
    sizes = np.diff(offsets)
    long = sizes > 2 * depth
    if not long.any():
        return None
    if sizes.shape[0] and sizes.min() == sizes.max():
        return _exact_top_order(values, offsets, sizes, long, depth, stable)
    return _bounded_top_order(values, offsets, sizes, long, depth, stable)


# Grouped rows of uneven sizes read to a depth.  Gathering each size class of long
# queries into a padded 2-D block to select from costs a copy of every row; instead a
# lower bound of each long query's k-th largest value is found on the rows where they
# lie, as for rows in random order (see _candidate_rows): the maxima of 2 k
# consecutive slices of the query's rows (one maximum.reduceat over every slice of
# every query), whose k-th largest is at most the query's k-th largest value.  The
# bound keeps about 1.3 k rows of a query in random order.  Queries whose rows come
# ranked already (a run, a retriever's list) would keep about half of their rows:
# their k-th row is their k-th largest value, when the first one is found ranked (one
# pass tells which are).  Other queries keeping more than _LOOSE_BOUND_PER_K * k rows
# take their exact k-th largest.
# Not measured: chosen by reasoning about the bound (about 1.3 k rows kept in random
# order), not by a timing.
_LOOSE_BOUND_PER_K = 4


def _bounded_top_order(values, offsets, sizes, long, depth, stable):
    """:func:`segmented_top_order` of segments of uneven sizes (see above)."""
    _, keep, counts = _uneven_floor(values, offsets, sizes, long, depth)
    return _kept_in_order(values, keep, counts, stable)


def _uneven_floor(values, offsets, sizes, long, k):
    """``(floor, keep, counts)``: per segment, a floor at most its ``k``-th largest value
    (-inf where not ``long``), found as the comment above says; the rows reaching it,
    and how many of each segment's do."""
    floor = np.full(sizes.shape, -np.inf)
    ranked = _ranked_segments(values, offsets, long)
    if ranked is not None:
        floor[ranked] = values[offsets[:-1][ranked] + k - 1]
        long = long & ~ranked
    if long.any():
        floor[long] = _slice_maxima_floor(values, offsets, sizes, long, k)
    keep = values >= np.repeat(floor, sizes)
    counts = _count_by_segment(keep, offsets)
    loose = long & (counts > _LOOSE_BOUND_PER_K * k)
    if loose.any():
        floor[loose] = kth_largest_floor(values, offsets, k, include=loose)[loose]
        keep = values >= np.repeat(floor, sizes)
        counts = _count_by_segment(keep, offsets)
    return floor, keep, counts


def kth_floor(values, offsets, k):
    """Per segment: a floor at most its ``k``-th largest value, -inf when it holds at
    most ``2 * k`` values (all of them kept: selecting would save nothing).  The
    ``k``-th largest value itself for segments of one size; for segments of uneven
    sizes the bound :func:`segmented_top_order` keeps (a few rows more, found without
    gathering padded blocks)."""
    sizes = np.diff(offsets)
    long = sizes > 2 * k
    if not long.any() or sizes.min() == sizes.max():
        return kth_largest_floor(values, offsets, k)
    return _uneven_floor(values, offsets, sizes, long, k)[0]


def _kept_in_order(values, keep, counts, stable):
    """``(order, kept_offsets)`` of the rows ``keep`` marks (``counts`` of them in each
    segment), each segment's in descending order of ``values``."""
    kept_offsets = np.zeros(counts.shape[0] + 1, dtype=np.intp)
    np.cumsum(counts, out=kept_offsets[1:])
    rows = np.flatnonzero(keep)
    return rows[segmented_argsort_desc(values[rows], kept_offsets, stable=stable)], kept_offsets


def _ranked_segments(values, offsets, long):
    """Which segments' values never increase (boolean per segment, among ``long``),
    or None when the first ``long`` segment's first rows already increase somewhere
    (rows in no particular order are told so at that cost)."""
    segment = int(np.argmax(long))
    first = offsets[segment]
    probe = values[first:min(offsets[segment + 1], first + _ROW_PROBE)]
    if np.any(probe[1:] > probe[:-1]):
        return None
    rises = np.zeros(values.shape[0], dtype=bool)
    np.greater(values[1:], values[:-1], out=rises[:-1])
    rises[offsets[1:-1] - 1] = False  # from one segment to the next: no rise
    return long & (_count_by_segment(rises, offsets) == 0)


def _slice_maxima_floor(values, offsets, sizes, long, k):
    """For each segment that ``long`` marks (each holds more than ``2 * k`` rows), at
    most its ``k``-th largest value: the ``k``-th largest of the maxima of ``2 * k``
    consecutive slices of its rows."""
    n_slices = 2 * k  # no slice is empty: a long segment holds more rows than that
    members = np.flatnonzero(long)
    lengths = sizes[members]
    # Slice starts of every long segment, then the segment's end (so that its last
    # slice stops there; that cell's "maximum" is dropped).
    bounds = np.empty((members.shape[0], n_slices + 1), dtype=np.intp)
    np.floor_divide(lengths[:, None] * np.arange(n_slices), n_slices, out=bounds[:, :n_slices])
    bounds[:, :n_slices] += offsets[members, None]
    bounds[:, n_slices] = offsets[members + 1]
    flat = bounds.reshape(-1)
    if flat[-1] == values.shape[0]:  # reduceat runs its last cell to the end anyway
        flat = flat[:-1]
    maxima = np.empty(bounds.size, dtype=values.dtype)
    maxima[:flat.shape[0]] = np.maximum.reduceat(values, flat)
    maxima = maxima.reshape(bounds.shape)[:, :n_slices]
    return np.partition(maxima, n_slices - k, axis=1)[:, n_slices - k]


def _exact_top_order(values, offsets, sizes, long, depth, stable):
    """:func:`segmented_top_order` keeping exactly the rows of each long segment that
    reach its ``depth``-th largest value, selected block by block (row-wise partition)."""
    kind = "stable" if stable else None
    kept_sizes = sizes.copy()
    ranked = []    # (queries, their kept rows best first, one query per row of a 2-D array)
    unranked = [(np.flatnonzero(~long & (sizes > 0)), None)]  # kept rows still to sort
    for members, starts, widths, width in _size_blocks(offsets, include=long):
        # Padding (-inf) is never kept: each member has more than depth real rows.
        block, _, _ = _block(values, starts, widths, width, -np.inf, rows_needed=False)
        threshold = _kth_largest_by_row(block, depth)
        # flatnonzero then divmod: about twice as fast as a 2-D nonzero.
        cells = np.flatnonzero(block >= threshold[:, None])
        member, column = np.divmod(cells, width)
        counts = np.bincount(member, minlength=members.shape[0])
        kept_sizes[members] = counts
        # Queries without a tie at rank `depth` keep exactly `depth` rows: when they are
        # most of the block, they form one small 2-D block sorted here.  Kept cells come
        # in input order, as a stable sort needs.
        exact = counts == depth
        if 2 * np.count_nonzero(exact) < exact.size:  # mostly ties at the cutoff
            unranked.append((members, starts[member] + column))
            continue
        in_exact = exact[member]
        top_cells = cells[in_exact].reshape(-1, depth)
        by_rank = np.argsort(np.negative(block.reshape(-1)[top_cells]), axis=1, kind=kind)
        columns = np.take_along_axis(column[in_exact].reshape(-1, depth), by_rank, axis=1)
        ranked.append((members[exact], starts[exact, None] + columns))
        if not exact.all():
            tied = ~in_exact
            unranked.append((members[~exact], starts[member[tied]] + column[tied]))
    kept_offsets = np.zeros(offsets.shape, dtype=np.intp)
    np.cumsum(kept_sizes, out=kept_offsets[1:])
    order = np.empty(kept_offsets[-1], dtype=np.intp)
    for queries, rows in ranked:
        order[kept_offsets[queries, None] + np.arange(depth)] = rows
    for queries, rows in unranked:
        if queries.size == 0:
            continue
        n_kept = kept_sizes[queries]
        first = np.cumsum(n_kept) - n_kept
        within = np.arange(first[-1] + n_kept[-1]) - np.repeat(first, n_kept)
        if rows is None:  # short queries: all their rows
            rows = np.repeat(offsets[queries], n_kept) + within
        part_offsets = np.append(first, first[-1] + n_kept[-1])
        sorted_rows = rows[segmented_argsort_desc(values[rows], part_offsets, stable=stable)]
        order[np.repeat(kept_offsets[queries], n_kept) + within] = sorted_rows
    return order, kept_offsets


def segmented_top_order_by_floor(values, offsets, floor, *, stable):
    """The rows of each segment whose value is at least the segment's ``floor``, in
    order (descending values; input order on ties with ``stable=True``).

    A floor keeps whole tie groups, so this is a prefix of the segment's
    ranking.  Returns ``(order, kept_offsets)`` as :func:`segmented_top_order`.
    """
    keep = values >= np.repeat(floor, np.diff(offsets))
    return _kept_in_order(values, keep, _count_by_segment(keep, offsets), stable)


def kth_largest_floor(values, offsets, k, include=None):
    """Per segment: its k-th largest value, or -inf when it holds at most ``2 * k``
    values (then all of them are kept: selecting would save nothing) or is not one
    that ``include`` (boolean, per segment) marks."""
    sizes = np.diff(offsets)
    floor = np.full(sizes.shape, -np.inf)
    long = sizes > 2 * k
    for members, starts, widths, width in _size_blocks(
            offsets, include=long if include is None else long & include):
        block, _, _ = _block(values, starts, widths, width, -np.inf, rows_needed=False)
        floor[members] = _kth_largest_by_row(block, k)
    return floor


def first_relevant_floor(labels, scores, offsets, thresholds):
    """Per segment: the lowest score a ranking must reach to hold its first document
    with label >= t, for every t of ``thresholds`` (+inf: no such document)."""
    sizes = np.diff(offsets)
    nonempty = sizes > 0
    floor = np.full(sizes.shape, np.inf)
    for threshold in thresholds:
        best = np.full(sizes.shape, -np.inf)
        if nonempty.any():
            # Empty segments are left out: reduceat would give them a neighbour's value.
            best[nonempty] = np.maximum.reduceat(np.where(labels >= threshold, scores, -np.inf),
                                                 offsets[:-1][nonempty])
        best[best == -np.inf] = np.inf
        np.minimum(floor, best, out=floor)
    return floor


# Row-wise np.partition costs about 2 ns per cell on rows of up to 256 cells and
# 3-4 times as much on longer rows; longer rows are therefore cut into chunks.
# Measured: the per-cell costs above (np.partition by row length).
_SELECT_CHUNK = 256


def _kth_largest_by_row(block, k):
    """The k-th largest value of each row of ``block`` (rows hold more than k cells).

    A row's k largest values are among the k largest of each of its chunks, so
    long rows are reduced chunk by chunk to those candidates before the final
    selection: the same value, at the per-cell cost of short rows.
    """
    m, width = block.shape
    while width > _SELECT_CHUNK and 4 * k <= _SELECT_CHUNK:
        n_chunks = -(-width // _SELECT_CHUNK)
        if n_chunks * _SELECT_CHUNK != width:
            padding = np.full((m, n_chunks * _SELECT_CHUNK - width), -np.inf)
            block = np.concatenate([block, padding], axis=1)
        chunks = block.reshape(m * n_chunks, _SELECT_CHUNK)
        kth = _SELECT_CHUNK - k
        block = np.partition(chunks, kth, axis=1)[:, kth:].reshape(m, n_chunks * k)
        width = n_chunks * k
    return np.partition(block, width - k, axis=1)[:, width - k]


def segmented_sort_desc(values, offsets):
    """``values`` sorted descending within each segment (values, not indices)."""
    out = np.empty_like(values)
    negated = np.negative(values)
    for _, starts, widths, width in _size_blocks(offsets):
        block, rows, valid = _block(negated, starts, widths, width, np.inf)
        result = np.sort(block, axis=1)
        np.negative(result, out=result)
        if rows is None:
            return result.reshape(-1)
        _scatter(out, result, rows, valid)
    return out


class Ranking:
    """Rows grouped by query and ordered by descending score, built once.

    Attributes
    ----------
    qids : ndarray of shape (n_queries,)
        The query ids, sorted when orderable.
    labels : ndarray of shape (n_kept,)
        Labels of the ranked rows held, query after query, best rank first.
    offsets : ndarray of shape (n_queries + 1,)
        Ranked rows of query ``q`` are ``labels[offsets[q]:offsets[q + 1]]``.
    depth : Depth or None
        None: every retrieved row is ranked.  A :class:`Depth`: each query holds
        only a prefix of its ranking, never a part of a tie group, as deep as
        the depth says; metrics must not read further (see ``Depth.covers``).
    n_ranked : ndarray of shape (n_queries,)
        Retrieved rows of each query, whether held or not.
    query, position : ndarray of shape (n_kept,)
        Query index and 0-based rank of each ranked row (computed on first use;
        kernels with a cutoff use :meth:`top` instead, which costs O(n_queries * k)).
    tie_starts : ndarray or None
        With ``ties="average"`` and at least one tie: the first ranked row of
        each tie group (a maximal run of equal scores in one query), followed
        by ``n_kept``.  None means every row is its own group.
    all_labels, all_offsets : ndarray
        Labels of every judged row, retrieved or not, grouped by query (for R
        and the ideal ranking).
    retrieved_labels, retrieved_offsets : ndarray
        Labels of every retrieved row, grouped by query in input order.

    ``all_labels`` may be given as None with ``regroup=(labels, groups)`` (a
    :class:`QueryGroups` of rows in random order): every row is retrieved and
    ``all_labels`` is ``labels[groups.order]``, grouped only if a metric asks for
    it.  Counts per query (R, the grades of the ideal ranking) are taken from the
    rows' query codes instead, without grouping: a ranking read to a depth groups
    only the rows that can reach it (see :func:`rank_queries`).
    """

    def __init__(self, *, qids, labels, offsets, depth, tie_starts, all_labels, all_offsets,
                 retrieved_labels, retrieved_offsets, regroup=None):
        self.qids = qids
        self.n_queries = qids.shape[0]
        self.labels = labels
        self.offsets = offsets
        self.depth = depth
        self.n_kept = np.diff(offsets)
        self.n_ranked = np.diff(retrieved_offsets)
        self.tie_starts = tie_starts
        self._all_labels = all_labels
        self.all_offsets = all_offsets
        self._retrieved_labels = retrieved_labels
        self.retrieved_offsets = retrieved_offsets
        self._regroup = regroup
        self._cache = {}

    @property
    def all_labels(self):
        if self._all_labels is None:
            source, groups = self._regroup
            self._all_labels = self._retrieved_labels = source[groups.order]
        return self._all_labels

    @property
    def retrieved_labels(self):
        return self.all_labels if self._retrieved_labels is None else self._retrieved_labels

    def _count_all(self, flag):
        """Per query, the rows (retrieved or not) whose label ``flag`` (elementwise,
        boolean) holds for, counted from the query codes when the labels are not
        grouped yet."""
        if self._all_labels is None:
            source, groups = self._regroup
            return groups.count(flag(source))
        return _count_by_segment(flag(self._all_labels), self.all_offsets)

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def query(self):
        return self._cached("query", lambda: np.repeat(np.arange(self.n_queries), self.n_kept))

    @property
    def position(self):
        return self._cached("position", lambda: np.arange(self.labels.shape[0])
                            - np.repeat(self.offsets[:-1], self.n_kept))

    @property
    def all_query(self):
        if self._all_labels is self.labels:
            return self.query
        return self._cached("all_query", lambda: np.repeat(np.arange(self.n_queries),
                                                           np.diff(self.all_offsets)))

    @property
    def max_kept(self):
        """Length of the longest ranked list held."""
        return int(self.n_kept.max()) if self.n_queries else 0

    def top(self, k):
        """``(rows, query, position)`` of the ranked rows at positions < k."""
        return self._cached(("top", k), lambda: _top_rows(self.offsets, k))

    def top_labels(self, k):
        """Labels of the ranked rows at positions < k (see :meth:`top`)."""
        return self._cached(("top_labels", k), lambda: self.labels[self.top(k)[0]])

    def n_relevant(self, threshold):
        """R: relevant documents per query (retrieved or not), label >= threshold."""
        def count():
            if self.labels is self._all_labels:  # every row ranked and held: flags shared
                return _count_by_segment(self._ranked_relevant(threshold), self.offsets)
            grades = self._cache.get("grade_counts")
            if grades is not None:  # already counted by grade: no pass over the labels
                first = max(int(np.ceil(threshold)), 0)
                return grades[:, first:].sum(axis=1, dtype=np.intp)
            return self._count_all(lambda labels: labels >= threshold)
        return self._cached(("n_relevant", threshold), count)

    def n_relevant_ranked(self, threshold):
        """Relevant documents among the retrieved ones, per query (held or not)."""
        if self._retrieved_labels is self._all_labels:
            return self.n_relevant(threshold)
        return _count_by_segment(self.retrieved_labels >= threshold, self.retrieved_offsets)

    def relevant(self, threshold):
        """1.0 where a ranked row's label is >= threshold, else 0.0."""
        return self._cached(("relevant", threshold),
                            lambda: (self.labels >= threshold).astype(np.float64))

    def relevant_at_groups(self, threshold):
        """Ranked rows with label >= threshold above each tie group's first row, then in
        all (``n_groups + 1`` entries, 32-bit below 2**31 rows): what average precision
        and reciprocal rank under ties read.

        Counted a pass of rows at a time in a buffer that stays in cache, each pass's
        running count read at the groups it holds: a running count over every row is a
        fresh array as large as the rows, whose pages cost more than the counting."""
        def count():
            n = self.labels.shape[0]
            starts = self.tie_starts
            dtype = _count_dtype(n + 1)
            out = np.empty(starts.shape[0], dtype=dtype)
            step = max(min(_PASS_ROWS, n), 1)
            flags = np.empty(step, dtype=bool)
            running = np.zeros(step + 1, dtype=dtype)
            edges = np.append(np.arange(0, n, step), n)
            bounds = np.searchsorted(starts, edges)   # the groups starting in each pass
            above = 0
            for first, last, lo, hi in zip(edges[:-1], edges[1:], bounds[:-1], bounds[1:]):
                size = last - first
                np.greater_equal(self.labels[first:last], threshold, out=flags[:size])
                np.cumsum(flags[:size], dtype=dtype, out=running[1:size + 1])
                np.add(running[starts[lo:hi] - first], above, out=out[lo:hi])
                above += int(running[size])
            out[-1] = above
            return out
        return self._cached(("relevant_at_groups", threshold), count)

    def relevant_at_queries(self, threshold):
        """:meth:`relevant_at_groups` at each query's first row, then in all (a query's
        first row starts a tie group)."""
        return self._cached(("relevant_at_queries", threshold),
                            lambda: self.relevant_at_groups(threshold)[self._first_groups()])

    def _ranked_relevant(self, threshold):
        """``labels >= threshold`` of the ranked rows held, shared by R and the
        relevant rows when every row is ranked and held."""
        return self._cached(("ranked_relevant", threshold), lambda: self.labels >= threshold)

    def relevant_rows(self, threshold):
        """``(rows, query, position)`` of the ranked rows with label >= threshold."""
        def find():
            rows = np.flatnonzero(self._ranked_relevant(threshold))
            # Rows come query after query: their queries follow from the counts.
            query = np.repeat(np.arange(self.n_queries), self._relevant_counts(threshold))
            return rows, query, rows - self.offsets[query]
        return self._cached(("relevant_rows", threshold), find)

    def _relevant_counts(self, threshold):
        """Per query, the ranked rows held with label >= threshold."""
        def count():
            if self.labels is self._all_labels:  # every judged row is ranked and held
                return self.n_relevant(threshold)
            return _count_by_segment(self._ranked_relevant(threshold), self.offsets)
        return self._cached(("relevant_counts", threshold), count)

    def relevant_first(self, threshold):
        """``(counts, first)``: per query, the ranked rows held with label >= threshold,
        and the index in :meth:`relevant_rows` of the first of them."""
        def find():
            counts = self._relevant_counts(threshold)
            return counts, np.cumsum(counts) - counts
        return self._cached(("relevant_first", threshold), find)

    def grade_counts(self):
        """``counts[q, g]``: documents of grade g in query q (retrieved or not), when every
        label is an integer grade in [0, 64]; None otherwise (the ideal ranking is then
        found by sorting)."""
        def count():
            labels = self._all_labels if self._all_labels is not None else self._regroup[0]
            if labels.size == 0:
                return None
            binary = self._binary_grade_counts(labels)
            if binary is not None:
                return binary
            # One cast and one comparison over the labels: a label that is not an
            # integer, or lies outside int8's range, does not survive the round trip.
            with np.errstate(invalid="ignore"):
                grades = labels.astype(np.int8)
            if not np.array_equal(grades, labels):
                return None
            top = int(grades.max())
            if grades.min() < 0 or top > _MAX_COUNTED_GRADE:
                return None
            width = top + 1
            if self._all_labels is None:  # rows not grouped: counted from the query codes
                return self._regroup[1].count_values(grades, width)
            starts = self.all_offsets[:-1]
            sizes = np.diff(self.all_offsets)
            if width <= 8 and np.all(sizes > 0):
                # Few grades: one pass per grade over one-byte labels beats building
                # cell ids; grade 0 is what is left; binary labels are just summed.
                dtype = _count_dtype(labels.size)
                if width == 2:
                    ones = np.add.reduceat(grades, starts, dtype=dtype)
                    return np.column_stack([sizes - ones, ones])
                counts = [np.add.reduceat((grades == g).view(np.int8), starts, dtype=dtype)
                          for g in range(1, width)]
                return np.column_stack([sizes - sum(counts)] + counts)
            cells = self.all_query * width + grades.astype(np.intp)
            return np.bincount(cells, minlength=self.n_queries * width).reshape(-1, width)
        return self._cached("grade_counts", count)

    def _binary_grade_counts(self, labels):
        """:meth:`grade_counts` of binary labels (each 0 or 1) from R at threshold 1, which
        MAP, MRR and recall read too, or None for other labels.  Two passes over the
        labels without a temporary (the largest is 1, and the labels that are not 0 are
        as many as those >= 1, so each is 0 or 1) instead of casting and comparing them."""
        if labels.max() != 1:
            return None
        relevant = self.n_relevant(1.0)
        if np.count_nonzero(labels) != relevant.sum():
            return None
        return np.column_stack([np.diff(self.all_offsets) - relevant, relevant])

    def ideal_labels(self):
        """All labels of each query sorted in decreasing order (the ideal ranking)."""
        return self._cached("ideal", lambda: segmented_sort_desc(self.all_labels,
                                                                 self.all_offsets))

    def ideal_top(self, k):
        """``(rows, query, position)`` of the ideal ranking's positions < k (None: all)."""
        if k is None:
            return self._cached("ideal_all", lambda: (
                np.arange(self.all_labels.shape[0]), self.all_query,
                np.arange(self.all_labels.shape[0]) - self.all_offsets[:-1][self.all_query]))
        return self._cached(("ideal_top", k), lambda: _top_rows(self.all_offsets, k))

    def tie_groups(self):
        """(starts, sizes, query, position of the group's first row) of tie groups.

        Only meaningful when ``tie_starts`` is not None.
        """
        def groups():
            starts = self.tie_starts[:-1]
            # Groups never cross a query boundary: each query's first group is found by
            # one search per query (not one per group), its groups are the following ones.
            query = np.repeat(np.arange(self.n_queries), np.diff(self._first_groups()))
            return starts, np.diff(self.tie_starts), query, starts - self.offsets[query]
        return self._cached("groups", groups)

    def _first_groups(self):
        """Index of each query's first tie group (then the number of groups)."""
        return self._cached("first_groups",
                            lambda: np.searchsorted(self.tie_starts[:-1], self.offsets))

    def groups_above(self, cutoff):
        """``(groups, rows, first_out)`` for the tie groups starting at a position below
        ``cutoff`` (an int, or one per query), in order: their indices, their ranked
        rows one group after another, and where each group's rows begin in ``rows``.

        Found by one search per query, so a full ranking read to a small cutoff costs
        ``O(n_queries * cutoff)``, not a pass over every group.
        """
        def find():
            first = self._first_groups()
            reach = self.offsets[:-1] + np.minimum(cutoff, self.n_kept)
            end = np.searchsorted(self.tie_starts[:-1], reach)
            counts = end - first[:-1]
            before = np.cumsum(counts) - counts
            n_live = int(counts.sum())
            groups = np.repeat(first[:-1] - before, counts) + np.arange(n_live)
            starts = self.tie_starts[groups]
            sizes = self.tie_starts[groups + 1] - starts
            first_out = np.cumsum(sizes) - sizes
            rows = np.repeat(starts - first_out, sizes) + np.arange(int(sizes.sum()))
            return groups, rows, first_out
        if np.ndim(cutoff):
            return find()
        return self._cached(("groups_above", int(cutoff)), find)

    def labels_above(self, k):
        """Labels of the rows of :meth:`groups_above` ``(k)`` (shared by the metrics)."""
        return self._cached(("labels_above", k), lambda: self.labels[self.groups_above(k)[1]])


def _tie_rows(same):
    """The rows in tie groups of two or more (``same[i]``: rows i and i + 1 tie), in
    order, and whether each opens its group: what both tie orderings below start from."""
    in_tie = np.zeros(same.shape[0] + 1, dtype=bool)
    in_tie[1:] |= same
    in_tie[:-1] |= same
    rows = np.flatnonzero(in_tie)
    starts_group = np.ones(rows.shape[0], dtype=bool)
    starts_group[1:] = ~same[rows[1:] - 1]
    return rows, starts_group


def _order_ties_by_label(labels, same, *, worst_first):
    """Reorder, in place, each tie group's ``labels``: ascending (``worst_first``) or
    descending, equal labels in their order (``same[i]``: rows i and i + 1 tie).

    Only the rows of tie groups are touched, and they are sorted group by group by the
    segmented stable sort (tie groups as its segments), not by one global sort of
    (group, label) keys.
    """
    rows, starts_group = _tie_rows(same)
    tied = labels[rows]
    counted = _sorted_by_counting(tied, starts_group, worst_first)
    if counted is not None:
        labels[rows] = counted
        return
    group_offsets = np.append(np.flatnonzero(starts_group), rows.shape[0])
    # Descending sort of the negated labels is the ascending one; both stable.
    order = segmented_argsort_desc(np.negative(tied) if worst_first else tied, group_offsets,
                                   stable=True)
    labels[rows] = tied[order]


def _sorted_by_counting(labels, starts_group, worst_first):
    """:func:`_order_ties_by_label`'s sorted labels when they are integer grades in
    [0, 64] (no -0.0 among them: it would come back as 0.0): each group's grades are
    counted (one bincount) and written back in order, no sort.  None otherwise, or
    when the count table would outgrow the labels."""
    with np.errstate(invalid="ignore"):
        grades = labels.astype(np.int8)
    if not np.array_equal(grades, labels) or grades.min() < 0 or np.signbit(labels).any():
        return None
    width = int(grades.max()) + 1
    group = np.cumsum(starts_group, dtype=np.intp)
    group -= 1
    n_groups = int(group[-1]) + 1
    if width > _MAX_COUNTED_GRADE + 1 or n_groups * width > 4 * labels.shape[0]:
        return None
    cells = group * width
    cells += grades
    counts = np.bincount(cells, minlength=n_groups * width).reshape(n_groups, width)
    values = np.arange(width, dtype=labels.dtype)
    if not worst_first:
        counts, values = counts[:, ::-1], values[::-1]
    return np.repeat(np.tile(values, n_groups), counts.reshape(-1))


def order_ties(same, key, *, descending=False):
    """Reorder the rows of each tie group by a key: ``(rows, ordered)``.

    ``same[i]`` says that rows ``i`` and ``i + 1`` are tied (one group);
    ``key(rows)`` gives the sort key of some rows.  ``rows`` are the rows that
    belong to a group of two or more, in order; ``ordered`` the same rows with
    each group sorted by key, ascending or descending, equal keys in their
    order.  For any key (trec_eval's order in :mod:`skrank.io`: the docno,
    descending); the engine's numeric labels take :func:`_order_ties_by_label`,
    which sorts each group alone or counts integer grades.
    """
    rows, starts_group = _tie_rows(same)
    group = np.cumsum(starts_group)
    keys = key(rows)
    if descending:  # reversed (group descending, key ascending, position descending)
        by = np.lexsort((np.arange(rows.shape[0], 0, -1), keys, -group))[::-1]
    else:
        by = np.lexsort((keys, group))
    return rows, rows[by]


def rank_queries(func, y_true, y_score, qid, shape, retrieved, ties, depth=None):
    """Group rows by query and order each query by score with the tie policy.

    ``depth`` (a :class:`Depth`; None: all) is how far the metrics will read;
    queries are then ranked only that deep (see :func:`segmented_top_order`).
    Rows in random order read to a depth are not all grouped: only the rows that
    can reach the depth are (see :func:`_candidate_rows`).
    """
    if not isinstance(y_true, np.ndarray):  # PyTorch, CuPy, ...: from check_ranking_arrays
        from . import _array_api

        return _array_api.rank_queries(func, y_true, y_score, qid, shape, retrieved, ties)
    all_labels, all_offsets = None, None
    groups = None       # set when the labels are grouped lazily (see Ranking)
    full_offsets = None  # set when only the candidates of each query are grouped
    if shape is not None:
        n_queries, n_docs = shape
        qids = np.arange(n_queries)
        offsets = np.arange(n_queries + 1) * n_docs
        labels_g, scores_g = y_true, y_score
    else:
        found = query_groups(func, qid)
        qids, offsets = found.qids, found.offsets
        candidates = None
        if found.codes is not None and retrieved is None and depth is not None:
            candidates = _candidate_rows(found, y_true, y_score, depth)
        if candidates is not None:
            # Rows in random order read to a depth: only the rows that can reach it
            # are grouped and ranked (all of them: they are few, and a prefix of the
            # ranking); the labels of the others are only counted (see Ranking).
            groups, keep, full_offsets = found, None, offsets
            offsets, labels_g, scores_g = candidates
        elif retrieved is None:
            (labels_g, scores_g), keep = found.grouped(y_true, y_score), None
        else:
            labels_g, scores_g, keep = found.grouped(y_true, y_score, retrieved)
        if keep is not None:
            # Unretrieved rows count in R and the ideal ranking but take no rank.
            all_labels, all_offsets = labels_g, offsets
            labels_g, scores_g = labels_g[keep], scores_g[keep]
            offsets = np.zeros(qids.shape[0] + 1, dtype=np.intp)
            np.cumsum(np.add.reduceat(keep, all_offsets[:-1], dtype=np.intp), out=offsets[1:])

    retrieved_labels, retrieved_offsets = labels_g, offsets
    if full_offsets is not None:  # the candidates are not every retrieved row
        retrieved_labels, retrieved_offsets = None, full_offsets
    stable = ties == "stable"
    top = None
    if full_offsets is not None:
        pass  # the candidates are ranked whole
    elif depth is not None and depth.first_relevant:
        floor = first_relevant_floor(labels_g, scores_g, offsets, depth.first_relevant)
        if depth.k is not None:
            floor = np.minimum(floor, kth_floor(scores_g, offsets, depth.k))
        top = segmented_top_order_by_floor(scores_g, offsets, floor, stable=stable)
    elif depth is not None:
        top = segmented_top_order(scores_g, offsets, depth.k, stable=stable)
    if top is None:
        if full_offsets is None:
            depth = None  # every row ranked: the ranking is complete
        order, tied = segmented_argsort_desc(scores_g, offsets, stable=stable, with_ties=True)
    else:
        (order, offsets), tied = top, True
    tie_starts = None
    if ties == "stable" or not tied:  # input order decides ties, or there are none
        labels_sorted, _ = _take_in_order(order, labels_g)
        same = np.zeros(0, dtype=bool)
    else:
        # Tie groups: runs of equal scores that do not cross a query boundary.
        labels_sorted, same = _take_in_order(order, labels_g, scores_g)
        if same.size:
            boundaries = offsets[1:-1]
            boundaries = boundaries[(boundaries > 0) & (boundaries < labels_sorted.shape[0])]
            same[boundaries - 1] = False
    if same.any():
        if ties == "average":
            tie_starts = np.concatenate(([0], np.flatnonzero(~same) + 1, [labels_sorted.shape[0]]))
        else:
            # Order tied rows by label: worst first (pessimistic) or best first.
            _order_ties_by_label(labels_sorted, same, worst_first=ties == "pessimistic")

    if depth is None:
        # The ranking holds every retrieved row: reuse its sorted labels.
        retrieved_labels = labels_sorted
    if all_labels is None:
        all_labels, all_offsets = retrieved_labels, retrieved_offsets
    return Ranking(qids=qids, labels=labels_sorted, offsets=offsets, depth=depth,
                   tie_starts=tie_starts, all_labels=all_labels, all_offsets=all_offsets,
                   retrieved_labels=retrieved_labels, retrieved_offsets=retrieved_offsets,
                   regroup=None if all_labels is not None else (y_true, groups))
