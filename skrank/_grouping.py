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
row-wise by one ``np.argsort(axis=1)``.  There are at most ``log2(max size)``
blocks, whatever the number of queries.
"""

import numpy as np

TIE_POLICIES = ("average", "stable", "pessimistic", "optimistic")


def factorize_qid(func, qid):
    """Map query ids to codes 0..n_queries-1.

    Returns ``(codes, qids, grouped)`` where ``qids[codes] == qid`` and
    ``grouped`` says whether rows of each query are already contiguous and in
    the order of ``qids`` (no regrouping needed).  Query ids come out sorted
    when they are orderable, else in order of first appearance.
    """
    n = qid.shape[0]
    if qid.dtype.kind == "f" and np.isnan(qid).any():
        raise ValueError(f"{func}: qid must not contain NaN. Got {int(np.isnan(qid).sum())} NaN id(s).")
    if qid.dtype.kind in "iufUSbmM":
        if n == 1 or bool(np.all(qid[1:] >= qid[:-1])):
            change = qid[1:] != qid[:-1]
            codes = np.zeros(n, dtype=np.intp)
            np.cumsum(change, out=codes[1:])
            starts = np.flatnonzero(np.concatenate(([True], change)))
            return codes, qid[starts], True
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
                            dtype=np.intp, count=n)
    except TypeError as exc:
        raise TypeError(f"{func}: qid values must be hashable. Got an unhashable id ({exc}).") from None
    qids = np.empty(len(index), dtype=object)
    qids[:] = list(index)
    return codes, qids, bool(np.all(codes[1:] >= codes[:-1]))


def _group_order(codes, n_queries):
    """Stable permutation that makes each query's rows contiguous."""
    if n_queries <= np.iinfo(np.uint16).max + 1:
        # numpy's stable sort is a radix sort for 16-bit integers: O(n).
        return np.argsort(codes.astype(np.uint16), kind="stable")
    return np.argsort(codes, kind="stable")


def _size_blocks(offsets):
    """Yield (first rows, widths, block width) for queries grouped by size class.

    Queries whose sizes share ``ceil(log2(size))`` form one block: one 2-D
    array padded to the block's longest query, sorted with one row-wise call.
    """
    sizes = np.diff(offsets)
    nonempty = sizes > 0
    if not nonempty.any():
        return
    lo, hi = sizes[nonempty].min(), sizes.max()
    if lo == hi:
        members = np.flatnonzero(nonempty)
        yield offsets[members], sizes[members], int(hi)
        return
    size_class = np.zeros(sizes.shape, dtype=np.intp)
    size_class[nonempty] = np.frexp((sizes[nonempty] - 1).astype(np.float64))[1]
    for cls in np.unique(size_class[nonempty]):
        members = np.flatnonzero((size_class == cls) & nonempty)
        widths = sizes[members]
        yield offsets[members], widths, int(widths.max())


def _block(values, starts, widths, width, fill):
    """Rows of ``values`` as a 2-D block; returns (block, row index, valid mask or None)."""
    if starts.shape[0] * width == values.shape[0] and widths.min() == width:
        # Every query has the same size and they tile the array: a free reshape.
        return values.reshape(-1, width), np.arange(values.shape[0]).reshape(-1, width), None
    cols = np.arange(width)
    index = starts[:, None] + cols
    if widths.min() == width:
        return values[index], index, None
    valid = cols < widths[:, None]
    block = np.full(valid.shape, fill)
    block[valid] = values[index[valid]]
    return block, index, valid


def segmented_argsort_desc(values, offsets, *, stable):
    """Permutation sorting ``values`` descending within each segment.

    ``values`` are grouped: segment ``q`` is ``values[offsets[q]:offsets[q+1]]``.
    With ``stable=True`` equal values keep their order.  ``values`` must be
    finite (padding uses +inf on the negated values).
    """
    kind = "stable" if stable else None
    out = np.empty(values.shape[0], dtype=np.intp)
    negated = np.negative(values)
    for starts, widths, width in _size_blocks(offsets):
        block, index, valid = _block(negated, starts, widths, width, np.inf)
        order = np.argsort(block, axis=1, kind=kind)
        order += starts[:, None]
        if valid is None and index.shape[0] * width == out.shape[0]:
            return order.reshape(-1)
        if valid is None:
            out[index.reshape(-1)] = order.reshape(-1)
        else:
            # Padding sorts last, so the first `width_q` entries of each row are real.
            out[index[valid]] = order[valid]
    return out


def segmented_sort_desc(values, offsets):
    """``values`` sorted descending within each segment (values, not indices)."""
    out = np.empty_like(values)
    negated = np.negative(values)
    for starts, widths, width in _size_blocks(offsets):
        block, index, valid = _block(negated, starts, widths, width, np.inf)
        block = np.sort(block, axis=1)
        if valid is None and index.shape[0] * width == out.shape[0]:
            return -block.reshape(-1)
        if valid is None:
            out[index.reshape(-1)] = -block.reshape(-1)
        else:
            out[index[valid]] = -block[valid]
    return out


class Ranking:
    """Rows grouped by query and ordered by descending score, built once.

    Attributes
    ----------
    qids : ndarray of shape (n_queries,)
        The query ids, sorted when orderable.
    labels : ndarray of shape (n_ranked,)
        Labels of the retrieved rows, query after query, best rank first.
    offsets : ndarray of shape (n_queries + 1,)
        Ranked rows of query ``q`` are ``labels[offsets[q]:offsets[q + 1]]``.
    query : ndarray of shape (n_ranked,)
        Query index of each ranked row.
    position : ndarray of shape (n_ranked,)
        0-based rank of each ranked row within its query.
    tie_starts : ndarray or None
        With ``ties="average"`` and at least one tie: the first ranked row of
        each tie group (a maximal run of equal scores in one query), followed
        by ``n_ranked``.  None means every row is its own group.
    all_labels, all_offsets : ndarray
        Labels of every judged row, retrieved or not, grouped by query (for R
        and the ideal ranking).
    """

    def __init__(self, *, qids, labels, offsets, tie_starts, all_labels, all_offsets,
                 user_rows, n_samples):
        self.qids = qids
        self.n_queries = qids.shape[0]
        self.labels = labels
        self.offsets = offsets
        self.n_ranked = np.diff(offsets)
        self.query = np.repeat(np.arange(self.n_queries), self.n_ranked)
        self.position = np.arange(labels.shape[0]) - offsets[self.query]
        self.tie_starts = tie_starts
        self.all_labels = all_labels
        self.all_offsets = all_offsets
        self.all_query = (self.query if all_labels is labels
                          else np.repeat(np.arange(self.n_queries), np.diff(all_offsets)))
        self.n_samples = n_samples
        self._user_rows = user_rows
        self._cache = {}

    @property
    def max_ranked(self):
        return int(self.n_ranked.max()) if self.n_queries else 0

    def n_relevant(self, threshold):
        """R: relevant documents per query (retrieved or not), label >= threshold."""
        key = ("n_relevant", threshold)
        if key not in self._cache:
            relevant = self.all_labels >= threshold
            self._cache[key] = np.bincount(self.all_query[relevant], minlength=self.n_queries)
        return self._cache[key]

    def ideal_labels(self):
        """All labels of each query sorted in decreasing order (the ideal ranking)."""
        if "ideal" not in self._cache:
            self._cache["ideal"] = segmented_sort_desc(self.all_labels, self.all_offsets)
        return self._cache["ideal"]

    def ideal_position(self):
        if "ideal_position" not in self._cache:
            self._cache["ideal_position"] = (
                np.arange(self.all_labels.shape[0]) - self.all_offsets[self.all_query]
            )
        return self._cache["ideal_position"]

    def tie_groups(self):
        """(starts, sizes, query, position of the group's first row) of tie groups.

        Only meaningful when ``tie_starts`` is not None.
        """
        if "groups" not in self._cache:
            starts = self.tie_starts[:-1]
            sizes = np.diff(self.tie_starts)
            self._cache["groups"] = (starts, sizes, self.query[starts], self.position[starts])
        return self._cache["groups"]


def rank_queries(func, y_true, y_score, qid, shape, retrieved, ties):
    """Group rows by query and order each query by score with the tie policy."""
    n_samples = y_true.shape[0]
    if shape is not None:
        n_queries, n_docs = shape
        qids = np.arange(n_queries)
        offsets = np.arange(n_queries + 1) * n_docs
        labels_g, scores_g = y_true, y_score
        user_rows = None
        all_labels_g, all_offsets = None, None
    else:
        codes, qids, grouped = factorize_qid(func, qid)
        n_queries = qids.shape[0]
        if grouped:
            user_rows = None
            labels_g, scores_g, keep = y_true, y_score, retrieved
        else:
            user_rows = _group_order(codes, n_queries)
            codes = codes[user_rows]
            labels_g, scores_g = y_true[user_rows], y_score[user_rows]
            keep = None if retrieved is None else retrieved[user_rows]
        all_counts = np.bincount(codes, minlength=n_queries)
        all_offsets = np.zeros(n_queries + 1, dtype=np.intp)
        np.cumsum(all_counts, out=all_offsets[1:])
        if keep is None:
            offsets = all_offsets
            all_labels_g, all_offsets = None, None
        else:
            all_labels_g = labels_g
            labels_g, scores_g = labels_g[keep], scores_g[keep]
            counts = np.bincount(codes[keep], minlength=n_queries)
            offsets = np.zeros(n_queries + 1, dtype=np.intp)
            np.cumsum(counts, out=offsets[1:])
            if user_rows is not None:
                user_rows = user_rows[keep]
            else:
                user_rows = np.flatnonzero(keep)

    order = segmented_argsort_desc(scores_g, offsets, stable=(ties == "stable"))
    scores_sorted = scores_g[order]
    labels_sorted = labels_g[order]
    if user_rows is not None:
        user_rows = user_rows[order]
    else:
        user_rows = order

    # Tie groups: runs of equal scores that do not cross a query boundary.
    same = scores_sorted[1:] == scores_sorted[:-1]
    if same.size:
        boundaries = offsets[1:-1]
        boundaries = boundaries[(boundaries > 0) & (boundaries < scores_sorted.shape[0])]
        same[boundaries - 1] = False
    tie_starts = None
    if same.any() and ties != "stable":
        new_group = np.concatenate(([True], ~same))
        if ties == "average":
            tie_starts = np.append(np.flatnonzero(new_group), scores_sorted.shape[0])
        else:
            # Order tied rows by label: worst first (pessimistic) or best first.
            in_tie = np.zeros(scores_sorted.shape[0], dtype=bool)
            in_tie[1:] |= same
            in_tie[:-1] |= same
            rows = np.flatnonzero(in_tie)
            group_id = np.cumsum(new_group)[rows]
            key = labels_sorted[rows] if ties == "pessimistic" else -labels_sorted[rows]
            resorted = rows[np.lexsort((key, group_id))]
            labels_sorted[rows] = labels_sorted[resorted]
            user_rows[rows] = user_rows[resorted]

    if all_labels_g is None:
        all_labels_g, all_offsets = labels_sorted, offsets
    return Ranking(
        qids=qids, labels=labels_sorted, offsets=offsets, tie_starts=tie_starts,
        all_labels=all_labels_g, all_offsets=all_offsets, user_rows=user_rows,
        n_samples=n_samples,
    )
