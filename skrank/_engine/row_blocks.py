"""The 2-D form (one query per row of a score matrix) evaluated in blocks of rows.

A recommender's score matrix (users x items) is evaluated one block of users
at a time, so that the memory beyond the inputs stays bounded whatever the
number of users: the flat arrays, the ranking and the kernels' temporaries of
one block only.  Each query's value depends on its own row alone (see the
engine's tests of a metric alone against among others), so the values, their
order and the means are those of the whole matrix in one call, to the last
bit.

Only plain host inputs take this path (NumPy scores, dense or scipy sparse
labels and exclusions of the same shape, no ``qid``/``retrieved``/``judged``);
anything else, and any error raised in a block, goes through the one-call
path, so messages stay those of the whole matrix.
"""

import numpy as np

from .aggregate import query_weights
from .row_ranks import few_labelled
from .matrix import _issparse as issparse

# The rows of a block hold about this many cells.  Measured on 2 shared cores
# (docs/recommender.md): a block costs 5-9 ms of fixed overhead (evaluate of 6
# metrics: 9 ms); the time per cell is flat up to 2**18 cells and grows above
# (cache).  Blocks reduced through the flat form (an ``exclude``; a sparse
# ``y_true`` read to a depth) hold about 130 bytes a cell while a block is
# processed (map on float32 users x 20,000 items); blocks of the dense 2-D form
# about 55-95 (evaluate of 6 metrics on 10,000 x 100, float64: peak 0.44x the
# scores with 2**16-cell blocks, 1.2x with 2**18, 4.2x in one call).  So at
# most 2**18 cells, and at most 1/32 (flat) or 1/16 (dense) of the matrix, so
# that a block's temporaries stay under the float32 score matrix's own size,
# but at least 2**14 (flat) or 2**15 (dense) cells, so that the overhead stays
# bounded (10,000 x 100, evaluate of 6: 2**14 cells 2.5x the one call, 2**16
# 1.35x, 2**18 1.1x).
_MAX_BLOCK_CELLS = 1 << 18
_MIN_BLOCK_CELLS = 1 << 14
_BLOCKS_AT_LEAST = 32
_DENSE_FACTOR = 2   # the dense 2-D form: twice the minimum, half the number of blocks
# Blocks read at their labelled items (skrank._engine.row_ranks) are this many times
# larger: a sorted copy of the scores and the excluded cells, about 5-17 bytes a cell,
# not the engine's ~130.  Measured (1,000 x 20,000 float32, sparse labels, 2 shared
# cores): map with exclude 0.32 s in blocks of the engine's size, 0.24 s 4 times
# larger, 0.22 s 16 times; evaluate of 6 metrics 0.46, 0.34 and 0.30 s.
_DIRECT_FACTOR = 8
# Matrices of at most this many cells are evaluated in one call: their one-call
# temporaries (~130 bytes a cell: 130 MiB at most) cost less than the blocks'
# overhead would (10,000 x 100, evaluate of 6 metrics in 16 blocks: 1.35x the one
# call); above it, blocks bound the memory whatever the size.
_BLOCK_ABOVE_CELLS = 1 << 20
# Plans held to a depth (@k metrics, first relevant items) keep only a few cells
# of each row: blocks 4 times larger (ndcg@10 on float32 300 x 20,000, sparse
# with exclude: 2**14 cells 2.0 s, 2**16 0.62 s, 2**18 0.42 s, 2**20 0.54 s).
_DEPTH_FACTOR = 4


def _issparse(value):

    return issparse(value)


def rows_per_block(shape, whole_rankings=True, dense=False):
    """Rows of the 2-D form of ``shape`` in one block (``whole_rankings``: the plan
    reads whole rankings, else it is held to a depth; ``dense``: blocks go through
    the dense 2-D form, not the flat one)."""
    n_users, n_items = shape
    lowest, parts = _MIN_BLOCK_CELLS, _BLOCKS_AT_LEAST
    if dense:
        lowest, parts = lowest * _DENSE_FACTOR, max(1, parts // _DENSE_FACTOR)
    cells = min(_MAX_BLOCK_CELLS, max(lowest, n_users * n_items // parts))
    if not whole_rankings:
        cells *= _DEPTH_FACTOR
    return max(1, cells // max(n_items, 1))


def _dense_blocks(y_true, exclude, whole_rankings):
    """Whether blocks go through the dense 2-D form: no ``exclude``, and dense labels
    or sparse ones read by whole-ranking plans (see :func:`_dense_rows`)."""
    if exclude is not None:
        return False
    if _issparse(y_true):
        return whole_rankings and y_true.dtype.kind in "fiu"
    return True


def _same_shape(value, shape):
    return value is None or (getattr(value, "shape", None) == shape
                             and (_issparse(value) or isinstance(value, np.ndarray)))


def blockable(y_true, y_score, qid, retrieved, exclude, judged, whole_rankings=True):
    """The score matrix as a NumPy array when the call can be evaluated in blocks of
    rows (and holds more than one block), else None."""
    if qid is not None or retrieved is not None or judged is not None:
        return None
    if not isinstance(y_score, np.ndarray) or y_score.ndim != 2:
        return None
    if y_score.dtype.kind not in "fiub" or y_score.size == 0:
        return None
    if y_true is None or not _same_shape(y_true, y_score.shape):
        return None
    if isinstance(y_true, np.ndarray) and y_true.dtype.kind not in "fiub":
        return None
    if not _same_shape(exclude, y_score.shape):
        return None
    if y_score.size <= _BLOCK_ABOVE_CELLS:
        return None
    if y_score.shape[0] <= rows_per_block(y_score.shape, whole_rankings,
                                          _dense_blocks(y_true, exclude, whole_rankings)):
        return None
    return y_score


def _rows(value, r0, r1):
    if value is None:
        return None
    return value[r0:r1]


def _flat_rows(y_true, y_score, exclude, r0, r1):
    """``(labels, scores, qid)`` of rows r0:r1 with ``exclude``, for plans reading whole
    rankings: the arrays :func:`skrank._engine.matrix.matrix_arrays` gives them (every item
    not excluded, user after user, item order; float64; qid the row in the block),
    from a dense block instead of a look-up of every cell in the sparse labels.
    None (that path then) for a user with every item excluded (it holds an unranked
    row there) or labels of another kind; ValueError for what that path rejects.
    """
    n_rows, n_items = r1 - r0, y_score.shape[1]
    excluded = np.zeros((n_rows, n_items), dtype=bool)
    if _issparse(exclude):
        block = exclude[r0:r1]
        block.sum_duplicates()
        excluded[np.repeat(np.arange(n_rows), np.diff(block.indptr)), block.indices] = \
            block.data != 0
    elif exclude.dtype.kind == "b":
        excluded[:] = exclude[r0:r1]
    else:
        return None
    kept = ~excluded
    per_row = kept.sum(axis=1)
    if not per_row.all():
        return None
    if _issparse(y_true):
        block = y_true[r0:r1]
        if block.dtype.kind not in "fiu":
            return None
        labels = block.toarray().astype(np.float64, copy=False)
        if block.data.size and not (np.isfinite(block.data).all() and block.data.min() >= 0):
            raise ValueError("labels the sparse form rejects")
    else:
        if y_true.dtype.kind not in "fiu":
            return None
        labels = y_true[r0:r1].astype(np.float64)
        if not np.isfinite(labels).all():
            raise ValueError("labels that are not finite")
    scores = y_score[r0:r1].astype(np.float64)
    if not np.isfinite(scores).all():
        raise ValueError("scores that are not finite")
    qid = np.repeat(np.arange(n_rows, dtype=np.intp), per_row)
    return labels[kept], scores[kept], qid


def _dense_rows(csr, r0, r1):
    """Rows r0:r1 of a sparse ``y_true`` as a dense block, for plans reading whole
    rankings without ``exclude``: the dense 2-D form ranks every item as the sparse
    form does and gives the same values to the last bit (tests/test_row_blocks.py),
    in about half the time (no flat arrays, no label look-up).  Labels the sparse
    form rejects (negative, not finite) raise, so that the one-call path says why."""
    block = csr[r0:r1]
    if block.data.size and not (np.isfinite(block.data).all() and block.data.min() >= 0):
        raise ValueError("labels the sparse form rejects")
    return block.toarray()


class _Blocked:
    """The parts of one execution gathered over the blocks."""

    def __init__(self, qid, columns, weights, extras):
        self.qid, self.columns, self.weights, self.extras = qid, columns, weights, extras


def execute_by_rows(func, run_block, y_true, y_score, exclude, sample_weight, *, extra=None,
                    whole_rankings=True, direct=None):
    """Execute a plan on the 2-D form one block of rows at a time.

    ``run_block(y_true, y_score, exclude, weights)`` prepares and executes the
    plan on the rows of one block: ``(table, prepared)``.  ``direct`` (None, or a
    callable of the same arguments, given the block's rows as they are: dense, or
    CSR) is tried first: ``(table, prepared)``, or None to run ``run_block``
    (:mod:`skrank._engine.row_ranks`: whole rankings read at the labelled items).  Returns a
    :class:`_Blocked` (``qid``, ``columns`` label -> Column, the query
    ``weights``, and ``extras``: ``extra(table, prepared)`` of each block, a
    list) or None when a block raised a ValueError (the caller then runs the
    one-call path, which raises the whole matrix's error).
    """
    n_users = y_score.shape[0]
    try:
        weights = (None if sample_weight is None
                   else query_weights(func, sample_weight, n_queries=n_users))
    except ValueError:
        return None
    dense = _dense_blocks(y_true, exclude, whole_rankings)
    step = rows_per_block(y_score.shape, whole_rankings, dense)
    if direct is not None and not few_labelled(y_true, y_score.shape):
        direct = None   # many labelled items: ranking every item costs less
    labels_of = _rows
    if _issparse(y_true):
        y_true = _csr(y_true)
        if dense:
            labels_of = _dense_rows
    if _issparse(exclude):
        exclude = _csr(exclude)

    def engine(r0, r1):
        flat = (_flat_rows(y_true, y_score, exclude, r0, r1)
                if whole_rankings and exclude is not None and weights is None else None)
        if flat is not None:  # the rows of the matrix form, built without look-ups
            return run_block(*flat[:2], None, None, qid=flat[2])
        return run_block(labels_of(y_true, r0, r1), y_score[r0:r1], _rows(exclude, r0, r1),
                         None if weights is None else weights[r0:r1])

    parts, extras = [], []

    def keep(r0, table, prepared):
        columns = {label: column._replace(qid=column.qid + r0)
                   for label, column in table.columns.items()}
        parts.append((table.qid + r0, columns))
        if extra is not None:
            extras.append(extra(table, prepared))

    outer = step if direct is None else rows_per_block(y_score.shape) * _DIRECT_FACTOR
    for r0 in range(0, n_users, outer):
        r1 = min(r0 + outer, n_users)
        try:
            found = None
            if direct is not None:   # read at the labelled items
                found = direct(_rows(y_true, r0, r1), y_score[r0:r1], _rows(exclude, r0, r1),
                               None if weights is None else weights[r0:r1])
            if found is not None:
                keep(r0, *found)
                continue
            for e0 in range(r0, r1, step):   # the engine's blocks
                keep(e0, *engine(e0, min(e0 + step, r1)))
        except ValueError:
            return None
    qid = np.concatenate([q for q, _ in parts])
    columns = {}
    for label, first in parts[0][1].items():
        pieces = [c[label] for _, c in parts]
        columns[label] = first._replace(
            qid=np.concatenate([c.qid for c in pieces]),
            values=np.concatenate([c.values for c in pieces]),
            weights=None if first.weights is None else np.concatenate(
                [c.weights for c in pieces]))
    return _Blocked(qid, columns, weights, extras)


def _csr(matrix):
    from scipy import sparse

    return matrix if isinstance(matrix, sparse.csr_array) else sparse.csr_array(matrix)
