"""Segmented scans (cumulative ufuncs within contiguous segments), block by block,
in trec_eval's summation order, so that float sums are the same sequential sums as
trec_eval's loops.
"""

import numpy as np


# Padded blocks of at most about this many cells in the segmented scans.
# Not measured: a memory bound (2**22 cells, 32 MiB per float64 block).
_BLOCK_CELLS = 1 << 22


def positions_in_runs(keys):
    """The 0-based position of each element of ``keys`` within its run of equal
    consecutive keys (``[7, 7, 3, 7] -> [0, 1, 0, 0]``)."""
    n = keys.shape[0]
    new = np.ones(n, dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(new)
    return np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))


def segment_starts(lengths):
    """Start offset of each segment given the segment lengths."""
    starts = np.zeros(lengths.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def segment_accumulate(ufunc, values, seg, lengths, *, reverse=False):
    """``ufunc.accumulate`` within each segment, in order (or from the end).

    ``values`` are grouped by segment (``seg`` is non-decreasing);
    ``lengths`` holds each segment's size.  The scan runs along the rows of
    padded 2-D blocks, one block per range of segment lengths (powers of
    two), so each segment is accumulated sequentially, left to right, as a
    C loop would: float sums are bit-identical to trec_eval's.
    """
    out = np.empty_like(values)
    n = values.shape[0]
    if n == 0:
        return out
    used = lengths[seg[0]:seg[-1] + 1]
    if used.min() == used.max() and int(used[0]) * used.shape[0] == n:
        # Every segment the same length (a run cut at the same depth for every
        # query): the values already are the rows of one block, no scatter.
        block = values.reshape(-1, int(used[0]))
        if reverse:
            block = block[:, ::-1]
        block = ufunc.accumulate(block, axis=1, dtype=values.dtype)
        out[:] = (block[:, ::-1] if reverse else block).reshape(-1)
        return out
    starts = segment_starts(lengths)
    offset = np.arange(n, dtype=np.int64) - starts[seg]
    if reverse:
        offset = lengths[seg] - 1 - offset
    # uint8 buckets (exponents up to 64): a stable argsort of them is a radix sort.
    bucket = np.zeros(lengths.shape[0], dtype=np.uint8)
    nonzero = lengths > 0
    bucket[nonzero] = np.frexp(lengths[nonzero].astype(np.float64))[1]
    elem_bucket = bucket[seg]
    order = np.argsort(elem_bucket, kind="stable")
    sorted_bucket = elem_bucket[order]
    bounds = np.flatnonzero(sorted_bucket[1:] != sorted_bucket[:-1]) + 1
    bounds = np.concatenate(([0], bounds, [n]))
    identity = ufunc.identity if ufunc.identity is not None else 0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        rows = order[lo:hi]
        segs = seg[rows]  # non-decreasing: the sort above is stable
        new_seg = np.ones(segs.shape[0], dtype=bool)
        np.not_equal(segs[1:], segs[:-1], out=new_seg[1:])
        seg_ids = segs[new_seg]
        row_of = np.cumsum(new_seg) - 1
        width = int(lengths[seg_ids].max())
        block = np.full((seg_ids.shape[0], width), identity, dtype=values.dtype)
        block[row_of, offset[rows]] = values[rows]
        ufunc.accumulate(block, axis=1, out=block)
        out[rows] = block[row_of, offset[rows]]
    return out


def segment_last(cumulative, starts, lengths, take, empty=0.0):
    """Per segment, ``cumulative`` at position ``take - 1`` (clipped to the
    segment), or ``empty`` where that is before the first element."""
    take = np.minimum(take, lengths)
    out = np.full(lengths.shape[0], empty, dtype=np.result_type(cumulative, type(empty)))
    ok = take > 0
    out[ok] = cumulative[starts[ok] + take[ok] - 1]
    return out
