"""Rows grouped by query: :class:`QueryGroups` (the order that brings each query's
rows together, and the offsets of the queries), by counting small code ranges or
by a radix sort of the codes in chunks that stay in cache.
"""

import numpy as np

from .codes import (
    CodedIds,
    _ROW_PROBE,
    _as_object_ids,
    _compiled_object_ids,
    _factorize_unsorted,
    _plain_object_ids,
    _sorted_object_runs,
    _sorted_run_offsets,
)
from .keys import _small_range_limit, _string_character_keys


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
