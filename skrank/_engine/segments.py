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
at most ``log2(max size)`` blocks, whatever the number of queries.  Queries of
uneven sizes, none long, skip the blocks' gather, padding and scatter: whole
queries are taken a chunk of rows at a time where they lie, and each chunk is
sorted as one flat array of keys that carry the query, the score and the row
(:func:`_flat_argsort_desc`).

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

import numpy as np

from .codes import _ROW_PROBE
from .groups import _count_by_segment


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


def segmented_argsort_desc(values, offsets, *, stable, with_ties=False, with_same=False):
    """Permutation sorting ``values`` descending within each segment.

    ``values`` are grouped: segment ``q`` is ``values[offsets[q]:offsets[q+1]]``.
    With ``stable=True`` equal values keep their order; otherwise their order is
    unspecified.  ``values`` must be finite (padding uses -inf).  With ``with_ties``,
    returns ``(order, tied)``: ``tied`` is False only when no segment holds two equal
    values (found by the sort itself, so that a tie-free ranking needs no tie check).
    With ``with_same`` as well, ``(order, tied, same)``: ``same[i]`` says that the
    sorted values i and i + 1 are equal and in one segment (``n - 1`` flags), found by
    the sort while each chunk is in cache, or None where the sort does not find them
    (values other than float64).
    """
    if _flat_sortable(values, offsets):
        out, tied, same = _flat_argsort_desc(values, offsets)
        if not with_ties:
            return out
        return (out, tied, same[:-1]) if with_same else (out, tied)
    return _blocks_argsort_desc(values, offsets, stable=stable, with_ties=with_ties,
                                with_same=with_same)


def _blocks_argsort_desc(values, offsets, *, stable, with_ties, with_same):
    """:func:`segmented_argsort_desc` by padded blocks, one per size class."""
    n = values.shape[0]
    out = np.empty(n, dtype=np.intp)
    same = np.zeros(n, dtype=bool) if with_same else None   # pages written only where tied
    tied = False
    for _, starts, widths, width in _size_blocks(offsets):
        block, rows, valid = _block(values, starts, widths, width, -np.inf)
        block_same = None
        if same is not None:
            block_same = same.reshape(-1, width) if rows is None else np.zeros(block.shape,
                                                                                dtype=bool)
        order, block_tied, found = _argsort_rows_desc(
            block, "stable" if stable else None, starts, padded=valid is not None,
            same=block_same, source=values)
        if not found:
            same = None  # not found by this sort: the caller compares the sorted values
        tied = tied or block_tied
        if rows is None:
            out = order.reshape(-1)
            break
        _scatter(out, order, rows, valid)
        if same is not None and block_tied:
            _scatter(same, block_same, rows, valid)
    if not with_ties:
        return out
    if not with_same:
        return out, tied
    return out, tied, (None if same is None else same[:-1])


# Segments of uneven sizes no longer than this are sorted as whole chunks of rows (see
# _flat_argsort_desc), not in padded blocks of one size class each.
# Measured (1M float64 rows, 2 shared cores): the flat chunks 2-3x faster than the
# padded blocks for sizes 5-15, 90-110, 1,000-4,000 and log-normal (median 32 or 256);
# longer segments not timed (they keep the blocks).
_FLAT_MAX_WIDTH = 2 ** 12


def _flat_sortable(values, offsets):
    """Whether :func:`_flat_argsort_desc` sorts these segments: float64 values in
    segments of uneven sizes (one size is a free reshape into one block), none longer
    than ``_FLAT_MAX_WIDTH``."""
    if values.dtype != np.float64 or np.dtype(np.intp) != np.dtype(np.int64):
        return False
    if offsets.shape[0] < 3 or values.shape[0] < 2:
        return False
    sizes = np.diff(offsets)
    return sizes.max() <= _FLAT_MAX_WIDTH and sizes.min() != sizes.max()


def _flat_argsort_desc(values, offsets):
    """``(order, tied, same)`` of :func:`segmented_argsort_desc` (stable; ``same`` holds
    ``n`` flags, the last False) for many small segments of uneven sizes.

    Padded blocks of one size class each cost a gather, the padding's sort and a
    scatter of every row.  Here whole segments are taken in chunks of about
    ``_SORT_CHUNK_CELLS`` rows, where they lie, and each chunk is sorted as one flat
    array of uint64 keys: the segment (within the chunk) in the high bits, then the
    value's bits in an order that descends with the value, the row (within the chunk)
    in the low bits, so that the sorted keys give each segment's rows in descending
    order, equal values in input order (a stable sort).  The value keeps only its
    leading bits: neighbouring sorted keys that share them (the XOR of the two keys is
    at most the row bits) hold equal values, a tie, or values that differ only in
    their dropped bits and may be misordered; those groups of rows are sorted again
    by :func:`_resort_segments` (a chunk of 65,536 rows in 2,000 segments keeps the
    leading 37 bits of each value).
    """
    n = values.shape[0]
    sizes = np.diff(offsets)
    order = np.empty(n, dtype=np.intp)
    same = np.zeros(n, dtype=bool)   # pages written only where tied
    tied = False
    misordered = []
    # Chunks end at segment starts: each holds whole segments, at least one.
    ends = np.searchsorted(offsets, np.arange(_SORT_CHUNK_CELLS, n, _SORT_CHUNK_CELLS),
                           side="right") - 1
    bounds = np.unique(np.concatenate(([0], ends, [offsets.shape[0] - 1])))
    longest = min(n, _SORT_CHUNK_CELLS + int(sizes.max()))
    key = np.empty(longest, dtype=np.uint64)
    row = np.arange(longest, dtype=np.uint64)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        first, last = int(offsets[a]), int(offsets[b])
        m = last - first
        if m == 0:
            continue
        k = key[:m]
        bits = values[first:last].view(np.uint64)
        if bits.max() <= _MAX_BITS:   # no sign bit set: the bits ascend with the value
            np.subtract(_MAX_BITS, bits, out=k)
        else:
            np.add(values[first:last], 0.0, out=k.view(np.float64))   # -0.0 -> 0.0
            as_int = k.view(np.int64)
            # Sign bit set: the other bits flip (negative values descend in their bits);
            # then the sign bit flips, and the keys ascend (unsigned) with the value.
            flip = np.right_shift(as_int, 63)
            flip |= np.int64(-2 ** 63)
            as_int ^= flip
            np.invert(k, out=k)   # descending with the value
        segment_bits = (b - a - 1).bit_length()
        row_bits = (m - 1).bit_length()
        low = np.uint64((1 << row_bits) - 1)
        k >>= np.uint64(segment_bits + row_bits)
        k <<= np.uint64(row_bits)
        if segment_bits:   # the segment above the value, the row below it
            tag = np.repeat(np.arange(b - a, dtype=np.uint64) << np.uint64(64 - segment_bits),
                            sizes[a:b])
            tag += row[:m]
            k |= tag
        else:
            k |= row[:m]
        k.sort()
        part = order[first:last]
        np.bitwise_and(k, low, out=part.view(np.uint64))
        part += first
        near = np.flatnonzero((k[1:] ^ k[:-1]) <= low)   # one segment, equal leading bits
        if near.size == 0:
            continue
        equal = values[part[near]] == values[part[near + 1]]
        if equal.any():
            tied = True
            same[first + near[equal]] = True
        if not equal.all():   # the chains of near pairs that hold an unequal one
            chain = np.cumsum(np.append(True, near[1:] != near[:-1] + 1)) - 1
            unequal = np.zeros(int(chain[-1]) + 1, dtype=bool)
            unequal[chain[~equal]] = True
            misordered.append(first + near[unequal[chain]])
    if misordered:
        tied = _resort_segments(values, offsets, np.concatenate(misordered), order, same)
    return order, tied, same


def _resort_segments(values, offsets, rows, order, same):
    """Sort again the groups of sorted positions of :func:`_flat_argsort_desc`'s
    ``order`` whose keys share their segment and leading bits: ``rows`` holds each
    position p whose key shares them with p + 1's, and maximal chains of them are the
    groups (a few rows each, where the keys are sorted right everywhere else).  Each
    group is sorted by value, descending, equal values in row order (the rows of one
    segment ascend with the input order), and its ``same`` flags are set anew.
    Returns whether any segment ties.  (Sorting the whole segments again took 1.4 s for
    the 2,000 segments of 1,660 values of rank-biased centroids, each with a few
    values one unit in the last place apart; the groups take milliseconds.)"""
    rows = np.unique(rows)
    n = order.shape[0]
    cont = np.zeros(n, dtype=bool)
    cont[rows + 1] = True   # in the group of the position before
    member = cont.copy()
    member[rows] = True
    positions = np.flatnonzero(member)
    group = np.cumsum(~cont[positions])
    members = order[positions]
    value = values[members]
    by = np.lexsort((members, -value, group))
    order[positions] = members[by]
    value = value[by]
    flags = (value[1:] == value[:-1]) & (group[1:] == group[:-1])
    same[positions] = False
    same[positions[:-1][flags]] = True
    return bool(same.any())


# Rows of a block are sorted a chunk of about this many cells at a time: the chunk's
# keys and its order stay in cache, and no temporary as large as the block is made.
# Not measured: sized so that a chunk's keys and order (16 B a cell, 1 MiB) stay in L2.
_SORT_CHUNK_CELLS = 2 ** 16


# Widest rows sorted by keys (see _keyed_argsort_rows_desc): the column takes the
# key's low bits, the fewer the better (distinct values sharing the rest are re-sorted).
# Not a timing: the key layout's bound (the column in the key's low 24 bits).
_KEYED_MAX_WIDTH = 2 ** 24


_SIGN_CLEARED = np.int64(0x7FFF_FFFF_FFFF_FFFF)


def _argsort_rows_desc(block, kind, starts, padded, same, source):
    """``(order, tied)``: the permutation sorting each row of ``block`` in descending
    order, plus ``starts`` (one per row: where the row's values begin), and False when
    no row holds two equal values other than the -inf padding (True: unknown).
    ``padded``: some rows end in -inf padding.  Float64 rows take
    :func:`_keyed_argsort_rows_desc`; others an ascending argsort of the negated values
    (negation is far cheaper than reversing each sorted row, a strided pass), chunk by
    chunk.  ``same`` (a boolean array of the block's shape, all False, or None): where
    ``same[i, j]`` is set when the sorted values j and j + 1 of row i are equal (the
    last column stays False).  Returns ``(order, tied, found)``: ``found`` is False
    when ``same`` was given and not filled (values other than float64).  ``source``: the
    1-D values whose cells ``starts`` count (row ``i``'s real values are
    ``source[starts[i]:]``), read at the pairs of neighbours with equal keys."""
    n_rows, width = block.shape
    if (block.dtype == np.float64 and 2 <= width <= _KEYED_MAX_WIDTH
            and np.dtype(np.intp) == np.dtype(np.int64)):
        return (*_keyed_argsort_rows_desc(block, starts, padded, same, source), True)
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
    return order, width > 1, width <= 1 or same is None   # (one value a row: no tie)


def _keyed_argsort_rows_desc(block, starts, padded, same, source):
    """:func:`_argsort_rows_desc` of float64 rows by sorting values, not indices.

    numpy sorts 64-bit integers about three times faster than it argsorts floats.  Each
    cell gets one int64 key: its value's bits mapped to an integer order that descends
    with the value, the low ``b`` bits replaced by its column (``2**b >= width``); -inf
    padding gets distinct keys above every value's.  The sorted keys give the order
    (their low bits), and equal values keep their columns' order, as a stable sort does.

    Values whose own low ``b`` bits are not all zero may differ only there (integers,
    float32 values and short fractions never do): such values share the rest of their
    keys and may be misordered.  Neighbouring sorted keys that share it are found (the
    keys once the column bits are shifted out); where a chunk's values use their low
    bits, the values of those pairs only are compared (gathered while the chunk is in
    cache): equal ones tie, and the rows where two different values meet so are argsorted
    again, stably.  The same pairs say whether a row holds equal values and set ``same``
    (see :func:`_argsort_rows_desc`).
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
    near = np.empty(step * width, dtype=bool)
    tied = False
    low_bits = None   # whether the values use their low bits (once found, of a first row)
    for first in range(0, n_rows, step):
        chunk = block[first:first + step]
        rows = chunk.shape[0]
        part = order[first:first + rows]
        chunk_tied = _sort_keyed_chunk(chunk, keys[:rows], near[:rows * width], part, low,
                                       ~columns, padding, starts[first:first + rows, None],
                                       None if same is None else same[first:first + rows],
                                       source, low_bits)
        tied = tied or chunk_tied
        if chunk_tied and low_bits is None:
            low_bits = bool(np.bitwise_and(chunk[0].view(np.int64), low).any())
    return order, tied


_ALL_BITS = np.int64(-1)


def _sort_keyed_chunk(chunk, key, near, part, low, flip, padding, starts, same, source,
                      low_bits):
    """Sort one chunk of :func:`_keyed_argsort_rows_desc`: its cells in order into
    ``part`` (``starts`` added to the columns: the cells of ``source``, the 1-D values);
    ``key`` (the chunk's shape) and ``near`` (as many cells, flat) are work space;
    ``same`` (None, or the chunk's flags of equal sorted neighbours, all False, of the
    chunk's shape: the last column stays False) is set.  ``low_bits``: True when the
    values are known to use their low bits (then the pass that would tell is skipped:
    the values of near pairs are compared either way).  Returns whether a row ties."""
    rows, width = key.shape
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
    part += starts   # while the chunk is in cache
    # Neighbours whose keys differ only in the column bits (equal once the column bits
    # are shifted out), row after row, flat: a row's last cell is never near the next
    # row's first.
    key >>= np.int64(int(low).bit_length())
    flat = key.reshape(-1)
    np.equal(flat[1:], flat[:-1], out=near[:-1])
    near[width - 1::width] = False
    if not near.any():
        return False  # neighbours differ beyond the column bits: no tie, no misorder
    if not low_bits:
        np.bitwise_and(as_int, low, out=key)
        if not key.any():  # the values keep nothing in their low bits: equal neighbours
            if same is not None:
                np.copyto(same.reshape(-1), near)
            return True
    # The values of the near pairs (the pairs only) compared: equal ones tie, different
    # ones are misordered, and their rows are sorted again.
    pairs = np.flatnonzero(near)   # the first cell of each pair, flat
    cells = part.reshape(-1)
    equal = source[cells[pairs]] == source[cells[pairs + 1]]
    if equal.all():
        if same is not None:
            same.reshape(-1)[pairs] = True
        return True
    # Misordered rows: sorted again (stably), and their flags found from their values.
    redo = np.unique(pairs[~equal] // width)
    redone = np.zeros(rows, dtype=bool)
    redone[redo] = True
    equal &= ~redone[pairs // width]
    values = chunk[redo]
    by_value = np.argsort(np.negative(values), axis=1, kind="stable")
    part[redo] = by_value + starts[redo]
    in_order = np.take_along_axis(values, by_value, axis=1)
    redo_equal = (in_order[:, 1:] == in_order[:, :-1]) & (in_order[:, 1:] != -np.inf)
    if same is not None:
        same.reshape(-1)[pairs[equal]] = True
        same[redo, :-1] = redo_equal
    return bool(equal.any() or redo_equal.any())


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
    if _flat_sortable(values, offsets) and sizes[long].mean() <= _WHOLE_PER_K * depth:
        return None   # many short segments: the flat sort of every row costs less
    return _bounded_top_order(values, offsets, sizes, long, depth, stable)


# Segments of uneven sizes read to a depth are sorted whole by the flat keyed sort
# (:func:`_flat_argsort_desc`, as a ranking to the end) when those longer than twice
# the depth hold at most this many times the depth rows on average: the bound of each
# one's k-th largest value (a slice maxima reduction, then a pass over every row to
# keep and gather those reaching it) costs more than sorting them.
# Measured (nDCG@10, 1M rows in log-normal sizes, CPU time, median of 7 interleaved
# rounds, 2 shared cores): whole against bounded, median size 16 (segments longer than
# 20 rows hold 50 on average) 0.94x, median 32 (73) 0.86x, median 64 (119) 1.09x,
# median 128 (216) 1.13x, median 256 (417) 2.2x.
_WHOLE_PER_K = 8


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
    if _flat_sortable(values, offsets):
        out = _flat_sort_desc(values, offsets)
        if out is not None:
            return out
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


_MAX_BITS = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
_INF_BITS = np.uint64(0x7FF0_0000_0000_0000)


def _flat_sort_desc(values, offsets):
    """:func:`segmented_sort_desc` of non-negative float64 values (labels, gains) in
    segments of uneven sizes, a chunk of whole segments at a time as
    :func:`_flat_argsort_desc` does: each value's key is the segment (within the chunk)
    in the high bits and the value's bits, reversed to descend, below; the sorted keys
    give the values back.  Only values whose lowest bits, which the segment pushes
    out, are zero (integers and short fractions) are sorted so; otherwise (or with a
    sign bit set, or NaN) None: the caller sorts in padded blocks."""
    n = values.shape[0]
    sizes = np.diff(offsets)
    out = np.empty(n, dtype=np.float64)
    ends = np.searchsorted(offsets, np.arange(_SORT_CHUNK_CELLS, n, _SORT_CHUNK_CELLS),
                           side="right") - 1
    bounds = np.unique(np.concatenate(([0], ends, [offsets.shape[0] - 1])))
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        first, last = int(offsets[a]), int(offsets[b])
        if last == first:
            continue
        bits = values[first:last].view(np.uint64)
        segment_bits = (b - a - 1).bit_length()
        dropped = np.uint64((1 << segment_bits) - 1)
        if bits.max() > _INF_BITS or (bits & dropped).any():   # sign bit set, or NaN
            return None
        key = out[first:last].view(np.uint64)
        np.subtract(_MAX_BITS, bits, out=key)   # descends with the value; low bits all set
        if segment_bits:
            key >>= np.uint64(segment_bits)
            segment = np.repeat(np.arange(b - a, dtype=np.uint64), sizes[a:b])
            segment <<= np.uint64(64 - segment_bits)
            key |= segment
        key.sort()
        if segment_bits:
            key <<= np.uint64(segment_bits)
            key |= dropped
        np.subtract(_MAX_BITS, key, out=key)
    return out
