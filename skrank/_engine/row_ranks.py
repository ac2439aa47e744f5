"""Whole rankings of a block of the 2-D form read at its labelled items only.

A recommender's score matrix holds a few labelled (test) items per user among
thousands.  A metric over the whole ranking (``map``, ``ndcg`` without ``k``)
reads each user's ranking only where those items are: the rank of each (how
many items score more) and, under ``ties="average"``, the size of its tie group
(how many score the same).  Both come from one row-wise ``np.sort`` of the
block's scores (values, not indices: several times cheaper than the argsort that
ranking every item takes) and a binary search of each labelled item's score in
its sorted row; nothing is computed per unlabelled item.

The values are those of the engine's kernels (:mod:`skrank._engine.kernels`) to
the last bit: each metric's terms are the kernels' terms, computed by the same
operations, and summed in rank order by one ``bincount`` as the kernels sum them
(the unlabelled items' terms, which this skips, are exactly 0.0).  Where that
cannot be guaranteed (labels that are not integer grades in [0, 64], negative
labels, a tie group holding several labelled items with gains that are not
integers, ``stable`` ties among many labelled items) :func:`rank_rows` or the
metric returns None and the caller ranks the block with the engine.
"""

import numpy as np

from .arrays import apply_gain
from .kernels import _expected_inverse_rank
from .ranking import _MAX_COUNTED_GRADE
from .xp import divide_where, minimum


# The metrics read at the labelled items, and the tie policies they are read under.
METRICS = ("ndcg", "dcg", "map", "mrr", "precision", "recall")
POLICIES = ("average", "stable")

# Integer grades up to this are counted for the ideal ranking, as the engine counts
# them; other labels (whose ideal ranking the engine sorts) are left to the engine.
_MAX_GRADE = _MAX_COUNTED_GRADE

# Blocks read at their labelled items when these are at most this share of the cells;
# more are ranked by the engine.  Measured (map, ndcg and ndcg@10 on 20,000 x 100
# float64 scores, graded labels, CPU time, 2 shared cores): the engine 70-90 ms
# whatever the share; read at the labelled items 49 ms with 2% of the cells labelled,
# 148 ms with 10%, 371 ms with 30% (about 0.6 us per labelled item, 40 ns per cell).
_MAX_LABELLED_SHARE = 1 / 32

# ``ties="stable"``: a labelled item tied with others takes its place among them by
# column, found by comparing its whole row; at most this many such items per user of
# the block (else the block is left to the engine).  Not measured: a bound on the work
# (this many passes over the block).
_STABLE_TIE_PASSES = 4


def few_labelled(y_true, shape):
    """Whether the labelled (nonzero) cells of the whole ``y_true`` are at most
    ``_MAX_LABELLED_SHARE`` of the matrix (else every block is ranked by the engine)."""
    cells = shape[0] * shape[1]
    if hasattr(y_true, "nnz"):
        return y_true.nnz <= _MAX_LABELLED_SHARE * cells
    if not isinstance(y_true, np.ndarray):
        return False
    return np.count_nonzero(y_true) <= _MAX_LABELLED_SHARE * cells


def supported(calls):
    """Whether every ``(metric, options)`` of ``calls`` is read here."""
    for name, options in calls:
        if name not in METRICS or options.get("ties") not in POLICIES:
            return False
        if options.get("gain", "linear") not in ("linear", "exponential"):
            return False
        threshold = options.get("threshold", 1)
        if not threshold > 0:   # label 0 relevant: every item would count
            return False
    return True


class RowRanks:
    """The labelled items of a block of rows, ranked under one tie policy.

    Groups (one per tie group holding a labelled item; under ``stable`` one per
    labelled item) in rank order, user after user: ``row``, ``position`` (0-based
    rank of the group's first item), ``size``; ``cells`` (the labelled items'
    labels, group after group, in column order) with ``first`` (each group's first
    cell).  ``n_ranked``: items each user ranks (those not excluded).
    """

    def __init__(self, n_rows, n_items, n_ranked, row, position, size, labels, first):
        self.n_queries = n_rows
        self.n_items = n_items
        self.n_ranked = n_ranked
        self.row, self.position, self.size = row, position, size
        self.labels, self.first = labels, first
        self._cache = {}

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    # -- what evaluate()'s counts read (as a Ranking gives them)
    def n_relevant(self, threshold):
        """Labelled items with label >= threshold per user (excluded ones left out)."""
        return self._cached(("n_relevant", threshold), lambda: np.bincount(
            np.repeat(self.row, np.diff(np.append(self.first, self.labels.shape[0])))[
                self.labels >= threshold], minlength=self.n_queries))

    def n_relevant_ranked(self, threshold):
        return self.n_relevant(threshold)

    def group_counts(self, threshold):
        """Per group, its items with label >= threshold."""
        return self._cached(("counts", threshold), lambda: np.add.reduceat(
            (self.labels >= threshold).astype(np.intp), self.first) if self.first.size
            else np.zeros(0, dtype=np.intp))

    def group_gains(self, gain):
        """Per group, the sum of its items' gains, or None when the kernels' sum (over
        the group's every item, in rank order) could round differently: gains that are
        not integers in a group of several labelled items."""
        def make():
            if self.first.size == 0:
                return np.zeros(0)
            gains = apply_gain("skrank", gain, self.labels)
            sums = np.add.reduceat(gains, self.first)
            if gain != "linear":
                several = np.diff(np.append(self.first, self.labels.shape[0])) > 2
                if several.any() and not np.array_equal(gains, np.round(gains)):
                    return None
            return sums
        return self._cached(("gains", gain), make)


def _dense_mask(exclude, n_rows, n_items):
    """The excluded cells of a block as a dense boolean array (None: none), or False
    when ``exclude`` is of a kind left to the engine."""
    if exclude is None:
        return None
    if hasattr(exclude, "indptr"):
        exclude = exclude.copy()
        exclude.sum_duplicates()
        mask = np.zeros((n_rows, n_items), dtype=bool)
        mask[np.repeat(np.arange(n_rows), np.diff(exclude.indptr)), exclude.indices] = \
            exclude.data != 0
        return mask
    if not isinstance(exclude, np.ndarray) or exclude.dtype.kind != "b":
        return False
    return exclude


def _labelled_cells(y_true):
    """``(rows, cols, labels)`` of a block's nonzero labels, row after row, columns
    ascending; None for labels left to the engine (negative, not finite, not integer
    grades in [0, 64])."""
    if hasattr(y_true, "indptr"):
        block = y_true.copy()
        block.sum_duplicates()
        if block.dtype.kind not in "fiub":
            return None
        data = block.data.astype(np.float64)
        rows = np.repeat(np.arange(block.shape[0]), np.diff(block.indptr))
        cols = block.indices.astype(np.intp)
        keep = data != 0
        rows, cols, data = rows[keep], cols[keep], data[keep]
    else:
        if not isinstance(y_true, np.ndarray) or y_true.dtype.kind not in "fiub":
            return None
        rows, cols = np.nonzero(y_true)
        data = y_true[rows, cols].astype(np.float64)
    if data.size and not (data.min() > 0 and data.max() <= _MAX_GRADE
                          and np.array_equal(data, np.floor(data))):
        return None   # negative (and NaN: min fails), fractional or large labels
    return rows, cols, data


def _search(flat, base, length, values, right):
    """Per value, how many of the sorted ``flat[base:base + length]`` are below it
    (``right``: at most it): a binary search of every value at once."""
    lo = np.zeros(values.shape[0], dtype=np.intp)
    hi = length.astype(np.intp, copy=True)
    last = flat.shape[0] - 1
    for _ in range(int(length.max(initial=0)).bit_length()):
        active = lo < hi
        mid = (lo + hi) >> 1
        probe = flat[np.minimum(base + mid, last)]
        go = (probe <= values) if right else (probe < values)
        go &= active
        np.copyto(lo, mid + 1, where=go)
        np.copyto(hi, mid, where=active & ~go)
    return lo


def rank_rows(y_true, y_score, exclude, policies):
    """:class:`RowRanks` of a block of the 2-D form under each tie policy of
    ``policies`` (a dict policy -> RowRanks), or None when the block is left to the
    engine.  ``y_true``: the block's labels (dense, or CSR rows); ``exclude``: None,
    CSR rows or a dense boolean block."""
    if not isinstance(y_score, np.ndarray) or y_score.ndim != 2:
        return None
    n_rows, n_items = y_score.shape
    scores = y_score
    if scores.dtype not in (np.float32, np.float64):
        if scores.dtype.kind not in "iub":
            return None
        scores = scores.astype(np.float64)   # as the engine ranks them
    elif np.isnan(scores).any():
        return None   # an error: the engine says where
    excluded = _dense_mask(exclude, n_rows, n_items)
    if excluded is False:
        return None
    cells = _labelled_cells(y_true)
    if cells is None:
        return None
    rows, cols, labels = cells
    if excluded is None:
        n_ranked = np.full(n_rows, n_items, dtype=np.intp)
        ordered = np.sort(scores, axis=1)
    else:
        n_ranked = n_items - np.count_nonzero(excluded, axis=1)
        live = ~excluded[rows, cols]
        rows, cols, labels = rows[live], cols[live], labels[live]
        ordered = scores.copy()
        ordered[excluded] = np.nan   # sorted last, never counted below or at a score
        ordered.sort(axis=1)
    values = scores[rows, cols]
    flat = ordered.reshape(-1)
    base = rows * n_items
    length = n_ranked[rows]
    at_most = _search(flat, base, length, values, right=True)
    greater = length - at_most
    equal = at_most - _search(flat, base, length, values, right=False)
    del ordered, flat
    out = {}
    for policy in policies:
        if policy == "average":
            position, size = greater, equal
        else:
            position = _stable_positions(scores, excluded, rows, cols, values, greater, equal)
            if position is None:
                return None
            size = np.ones(rows.shape[0], dtype=np.intp)
        out[policy] = _groups(n_rows, n_items, n_ranked, rows, position, size, labels)
    return out


def _stable_positions(scores, excluded, rows, cols, values, greater, equal):
    """Each labelled item's rank with ties in column order (``ties="stable"``): the
    items scoring more, plus those scoring the same in a column before it."""
    position = greater.copy()
    tied = np.flatnonzero(equal > 1)
    if tied.size == 0:
        return position
    n_rows, n_items = scores.shape
    if tied.size > _STABLE_TIE_PASSES * n_rows:
        return None
    step = max(1, (1 << 20) // n_items)
    columns = np.arange(n_items)
    for first in range(0, tied.size, step):
        part = tied[first:first + step]
        same = scores[rows[part]] == values[part, None]
        same &= columns < cols[part, None]
        if excluded is not None:
            same &= ~excluded[rows[part]]
        position[part] += np.count_nonzero(same, axis=1)
    return position


def _groups(n_rows, n_items, n_ranked, rows, position, size, labels):
    """:class:`RowRanks` of the labelled items at their positions: one group per
    (user, position), in rank order (a tie group's items in column order)."""
    key = rows.astype(np.int64) * (n_items + 1) + position
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.append(key.size > 0, key[1:] != key[:-1]))
    first_cell = order[starts]
    return RowRanks(n_rows, n_items, n_ranked, rows[first_cell], position[first_cell],
                    size[first_cell], labels[order], starts)


# ---------------------------------------------------------------------------
# The metrics: (values, undefined) per user, as the engine's kernels give them.


def _log_discount_table(ranks, log_base):
    """``(weights, cumulative)`` of the log discount over every position, as
    :func:`skrank._engine.kernels.log_discount` and the kernels' running sums give
    them."""
    def make():
        positions = np.arange(ranks.n_items)
        weights = np.log(log_base) / np.log(positions + 2.0)
        cumulative = np.zeros(ranks.n_items + 1)
        np.cumsum(weights, out=cumulative[1:])
        return weights, cumulative
    return ranks._cached(("discount", log_base), make)


def _sum_by_user(ranks, keep, terms):
    return np.bincount(ranks.row[keep], weights=terms,
                       minlength=ranks.n_queries).astype(np.float64, copy=False)


def _linear_sum(ranks, per_group, weights, cumulative, k):
    """``weighted_rank_sum``: per group starting above the cutoff, its mean value times
    the weights it spans (a group of one item: its value times its weight)."""
    limit = ranks.n_items if k is None else min(int(k), ranks.n_items)
    keep = np.flatnonzero((ranks.position < limit) & (per_group != 0))
    position, size, value = ranks.position[keep], ranks.size[keep], per_group[keep]
    single = size == 1
    terms = np.empty(keep.shape[0])
    terms[single] = value[single] * weights[position[single]]
    many = ~single
    spanned = (cumulative[np.minimum(position[many] + size[many], limit)]
               - cumulative[position[many]])
    terms[many] = (value[many] / size[many]) * spanned
    return _sum_by_user(ranks, keep, terms)


def _ideal_dcg(ranks, gain, k, cumulative):
    """``ideal_dcg`` from the grade counts: each grade's gain times the discounts of the
    positions its items fill, grade after grade from the top, summed in that order."""
    cells_row = np.repeat(ranks.row, np.diff(np.append(ranks.first, ranks.labels.shape[0])))
    if ranks.labels.size == 0:
        return np.zeros(ranks.n_queries)
    top = int(ranks.labels.max())
    grades = ranks.labels.astype(np.intp)
    width = top + 1
    counts = np.bincount(cells_row * width + (top - grades),
                         minlength=ranks.n_queries * width).reshape(-1, width)
    grade_gain = apply_gain("skrank", gain, np.arange(top + 1, dtype=np.float64))[::-1]
    end = np.cumsum(counts, axis=1)
    start = end - counts
    depth = ranks.n_items if k is None else min(int(k), ranks.n_items)
    user, column = np.nonzero(counts)
    spanned = (cumulative[np.minimum(end[user, column], depth)]
               - cumulative[np.minimum(start[user, column], depth)])
    return np.bincount(user, weights=spanned * grade_gain[column],
                       minlength=ranks.n_queries).astype(np.float64, copy=False)


def _dcg_values(ranks, k, gain, log_base):
    sums = ranks.group_gains(gain)
    if sums is None:
        return None
    weights, cumulative = _log_discount_table(ranks, log_base)
    return _linear_sum(ranks, sums, weights, cumulative, k)


def _ndcg(ranks, *, k, gain, **_):
    dcg = _dcg_values(ranks, k, gain, 2.0)
    if dcg is None:
        return None
    idcg = _ideal_dcg(ranks, gain, k, _log_discount_table(ranks, 2.0)[1])
    undefined = idcg <= 0
    return minimum(divide_where(dcg, idcg, ~undefined), 1.0), undefined


def _dcg(ranks, *, k, gain, log_base, **_):
    dcg = _dcg_values(ranks, k, gain, float(log_base))
    return None if dcg is None else (dcg, None)


def _hits(ranks, k, threshold):
    ones = ranks._cached("ones", lambda: (np.ones(ranks.n_items),
                                          np.arange(ranks.n_items + 1, dtype=np.float64)))
    counts = ranks.group_counts(threshold).astype(np.float64)
    return _linear_sum(ranks, counts, ones[0], ones[1], k)


def _precision(ranks, *, k, threshold, denominator, **_):
    hits = _hits(ranks, k, threshold)
    if denominator == "k":
        return hits / float(k), None
    size = minimum(ranks.n_ranked, k).astype(np.float64)
    return divide_where(hits, size, size > 0), None


def _recall(ranks, *, k, threshold, **_):
    n_rel = ranks.n_relevant(threshold)
    return divide_where(_hits(ranks, k, threshold), n_rel, n_rel > 0), n_rel == 0


def _inverse_rank_sums(ranks, k, position, size):
    """Per group, the sum of ``1 / (rank)`` over its positions (0 at and past ``k``),
    summed by ``np.add.reduceat`` as the kernels sum them."""
    table = np.arange(1.0, ranks.n_items + 1.0)
    np.reciprocal(table, out=table)
    if k is not None:
        table[k:] = 0.0
    total = int(size.sum())
    if total == 0:
        return np.zeros(position.shape[0])
    begin = np.cumsum(size) - size
    rows = np.repeat(position - begin, size) + np.arange(total)
    return np.add.reduceat(table[rows], begin)


def _map(ranks, *, k, threshold, denominator, **_):
    counts = ranks.group_counts(threshold)
    live = np.flatnonzero(counts)
    row, position, size = ranks.row[live], ranks.position[live], ranks.size[live]
    n_rel = counts[live]
    # relevant items ranked above each group, within its user
    ahead = np.cumsum(n_rel) - n_rel
    user_first = np.searchsorted(row, row)   # the user's first live group (rows sorted)
    above = (ahead - ahead[user_first]).astype(np.float64)
    terms = np.empty(live.shape[0])
    single = size == 1
    terms[single] = (above[single] + 1.0) / (position[single] + 1.0)
    if k is not None:
        terms[single & (position >= k)] = 0.0
    many = np.flatnonzero(~single)
    if many.size:
        terms[many] = _tied_group_terms(ranks, k, position[many], size[many], above[many],
                                        n_rel[many])
    total = np.bincount(row, weights=terms, minlength=ranks.n_queries).astype(np.float64,
                                                                             copy=False)
    r = ranks.n_relevant(threshold)
    denominator_ = r if denominator == "R" or k is None else minimum(r, k)
    undefined = r == 0
    return divide_where(total, denominator_, ~undefined), undefined


def _tied_group_terms(ranks, k, position, size, above, n_rel):
    """The expected sum of precision at a tie group's relevant ranks (the kernels'
    closed form, McSherry & Najork 2008), operation for operation."""
    n_rel = n_rel.astype(np.float64)
    slots = size.astype(np.float64)
    if k is not None:
        np.clip(k - position, 0, size, out=slots, casting="unsafe")
    sum_inverse = _inverse_rank_sums(ranks, k, position, size)
    sum_offset = slots - (position + 1.0) * sum_inverse
    n = size.astype(np.float64)
    slope = (n_rel - 1.0) / np.maximum(n - 1.0, 1.0)
    return (n_rel / n) * ((above + 1.0) * sum_inverse + slope * sum_offset)


def _mrr(ranks, *, k, threshold, **_):
    value = np.zeros(ranks.n_queries)
    counts = ranks.group_counts(threshold)
    live = np.flatnonzero(counts)
    row = ranks.row[live]
    first = live[np.flatnonzero(np.append(row.size > 0, row[1:] != row[:-1]))]  # each user's
    user, position, size = ranks.row[first], ranks.position[first], ranks.size[first]
    within = position < (np.inf if k is None else k)
    user, position, size, r = user[within], position[within], size[within], counts[first][within]
    single = size == 1
    value[user[single]] = 1.0 / (position[single] + 1.0)
    many = ~single
    if many.any():
        value[user[many]] = _expected_inverse_rank(size[many], r[many], position[many], k)
    n_rel = ranks.n_relevant(threshold)
    return value, n_rel == 0


_KERNELS = {"ndcg": _ndcg, "dcg": _dcg, "map": _map, "mrr": _mrr, "precision": _precision,
            "recall": _recall}


def metric_values(ranks, name, options):
    """``(values, undefined)`` of metric ``name`` with ``options`` per user of the
    block, or None when its values are left to the engine."""
    return _KERNELS[name](ranks, **{key: value for key, value in options.items()
                                    if key not in ("ties", "no_relevant")})
