"""The 2-D form with a sparse relevance matrix and/or an ``exclude`` mask (a
recommender's ``(n_users, n_items)`` score matrix) as flat ``y_true, y_score, qid,
retrieved`` arrays holding only what the metrics read: each user's leading ranks
and its test items, never a dense copy of a sparse matrix.
"""

import sys

import numpy as np

from .._core.checks import InvalidParameterError, _as_numeric, _describe, orderable_scores
from .segments import _kth_largest_by_row
from .xp import namespace
from .device import matrix_arrays as matrix_arrays_on_device


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
    ``depth`` (a :class:`~skrank._engine.ranking.Depth`, or None for the whole
    ranking) need: each user's items scoring at least its floor (its ``k``-th
    largest score, or its first relevant item's score; whole tie groups),
    ranked, then its other test items unranked (``retrieved=False``: they
    count in R and the ideal DCG only).  A user left without any row gets one
    unranked row of label 0, so that every user is a query.

    Returns ``(y_true, y_score, qid, retrieved, n_ranked)`` with ``n_ranked``
    the number of items each user ranks (those not excluded).
    """
    if namespace(y_true, y_score, exclude) is not None and qid is None and retrieved is None:
        return matrix_arrays_on_device(func, y_true, y_score, exclude)
    scores = _checked_scores(func, y_score, qid, retrieved)
    shape = scores.shape
    t_rows, t_cols, t_data, lookup = _labels_matrix(func, y_true, shape)
    excl = _Exclusions(func, exclude, shape)
    n_users, n_items = shape
    n_ranked = n_items - excl.per_row

    # Test items that are not excluded: they are the only ones that can be relevant.
    live = ~excl.contains(t_rows, t_cols)
    t_rows, t_cols, t_data = t_rows[live], t_cols[live], t_data[live]

    floor = _user_floors(depth, t_rows, t_cols, t_data, scores)
    c_rows, c_cols, c_scores = _candidate_cells(func, scores, excl, floor, n_ranked,
                                                None if depth is None else depth.k)
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


def _checked_scores(func, y_score, qid, retrieved):
    """The dense 2-D score matrix of the 2-D form (infinite scores mapped to finite ones
    that keep their order), after refusing the flat form's ``qid`` and ``retrieved``."""
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
    if scores.size and np.isinf([scores.min(), scores.max()]).any():  # NaN: below
        scores = orderable_scores(func, "y_score", scores)  # ranks keep the order
    if scores.shape[0] == 0 or scores.shape[1] == 0:
        raise ValueError(f"{func}: y_score must hold at least one query with one document. "
                         f"Got shape {scores.shape} instead.")
    return scores


def _user_floors(depth, t_rows, t_cols, t_data, scores):
    """Each user's floor: the lowest score its ranking must be held to so that the
    metrics reading ``depth`` see their first relevant items (-inf: the whole ranking;
    the ``k`` floor is applied per block in :func:`_candidate_cells`)."""
    n_users = scores.shape[0]
    floor = np.full(n_users, -np.inf)
    if depth is not None:
        floor[:] = np.inf
        for threshold in depth.first_relevant:
            rel = t_data >= threshold
            best = np.full(n_users, -np.inf)
            np.maximum.at(best, t_rows[rel], scores[t_rows[rel], t_cols[rel]].astype(np.float64))
            best[best == -np.inf] = np.inf
            np.minimum(floor, best, out=floor)
    return floor


def _candidate_cells(func, scores, excl, floor, n_ranked, k):
    """``(rows, cols, scores)`` of the cells each user ranks: not excluded, scoring at
    least the user's floor or its ``k``-th largest score (whole tie groups), read in
    blocks of users so that memory stays a block of the matrix."""
    n_users, n_items = scores.shape
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
    return np.concatenate(cand_rows), np.concatenate(cand_cols), np.concatenate(cand_scores)
