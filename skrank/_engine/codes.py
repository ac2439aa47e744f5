"""Query ids as integer codes, factorised once per call.

Ids arrive as integers, floats, fixed-width strings or object arrays (read in C
by the optional :mod:`skrank._engine._speedups` where it was built, else by
pure-numpy paths).  Each form takes the cheapest exact path: rows already
grouped by query are read as runs; integers over a small range are looked up;
others are hashed or sorted.  Missing ids are refused, and ids of mixed types
(``1`` and ``"1"``) warn.
"""

import operator
import os
import warnings

import numpy as np

from .._core.checks import caller_stacklevel, filtered_on_numpy_1
from .keys import _MAX_KEY_BYTES, _mixed_radix_weights, _small_range_limit, _string_character_keys


try:
    if os.environ.get("SKRANK_NO_SPEEDUPS", "") not in ("", "0"):
        raise ImportError("SKRANK_NO_SPEEDUPS is set: the pure-numpy paths")
    from . import _speedups
except ImportError:  # no C compiler: object ids and tie-averaged AP take the numpy paths
    _speedups = None


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
    if qid.dtype.kind in "US" and n > 1 and qid.dtype.itemsize % 4 == 0 \
            and qid.dtype.itemsize <= _MAX_KEY_BYTES:
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
    """Object ids read once in C (``skrank._engine._speedups``, where it was built): all
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
    if n * width > 2 * points.shape[0] + 64 * n:
        return None  # one long id: fixed-width cells would cost its length on every row
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
