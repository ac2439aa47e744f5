"""Each query's rows in order, once per call and tie policy.

:func:`rank_queries` builds a :class:`Ranking`: the rows of every query ordered
by score (a segmented sort or top k, :mod:`skrank._engine.segments`), the tie
groups under the tie policy, the ideal order and the relevant counts that the
metric kernels read.  Rows in random order are not grouped first when every
metric has a cutoff: a lower bound of each query's k-th largest score is found
on the rows as they come (:func:`_candidate_rows`), and only the rows reaching
it are grouped and ranked.  Arrays of another namespace are ranked on their
device by :mod:`skrank._engine.device`.
"""

from typing import NamedTuple, Optional

import numpy as np

from .codes import _ROW_PROBE
from .groups import QueryGroups, _count_by_segment, _count_dtype, _top_rows, query_groups
from .segments import (
    _take_in_order,
    first_relevant_floor,
    kth_floor,
    segmented_argsort_desc,
    segmented_sort_desc,
    segmented_top_order,
    segmented_top_order_by_floor,
)
from . import device as D


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


# Under ties="average", kernels compute one term per tie group when the groups are at
# most this share of the ranked rows (few large groups: integer grades, a flat tail),
# else one term per row, the groups of two or more rows computed as groups (many small
# groups: rounded scores, where most rows are alone in theirs).  (Changed in the tests.)
# Measured (benchmarks/tie_patterns.py, 1M rows, a shared machine): MAP on integers 0-10
# (about 11 groups per 100 rows) 1.4x faster per group; on scores rounded to 2 decimals
# (87 per 100) 1.6x faster per row, half of each query tied (51 per 100) faster per row
# too.  The share between them is not tuned.
_FEW_TIE_GROUPS = 0.25


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
        by ``n_kept``.  None means every row is its own group.  Built on first
        use from ``tie_same`` (one entry per group: about one per row when most
        rows are alone in theirs); kernels that read only the groups of two or
        more rows take :meth:`tie_runs` instead.
    has_ties : bool
        Whether ``tie_starts`` is not None (without building it).
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
                 retrieved_labels, retrieved_offsets, regroup=None, tie_same=None):
        self.qids = qids
        self.n_queries = qids.shape[0]
        self.labels = labels
        self.offsets = offsets
        self.depth = depth
        self.n_kept = np.diff(offsets)
        self.n_ranked = np.diff(retrieved_offsets)
        self._tie_starts = tie_starts
        # ``tie_same[i]``: ranked rows i and i + 1 are one tie group (never across queries)
        self._tie_same = tie_same
        self.has_ties = tie_starts is not None or tie_same is not None
        self._all_labels = all_labels
        self.all_offsets = all_offsets
        self._retrieved_labels = retrieved_labels
        self.retrieved_offsets = retrieved_offsets
        self._regroup = regroup
        self._cache = {}

    @property
    def tie_starts(self):
        if self._tie_starts is None and self._tie_same is not None:
            self._tie_starts = np.concatenate(([0], np.flatnonzero(~self._tie_same) + 1,
                                               [self.labels.shape[0]]))
        return self._tie_starts

    def few_tie_groups(self):
        """Whether the tie groups are at most ``_FEW_TIE_GROUPS`` of the ranked rows (a
        kernel then computes one term per group rather than one per row)."""
        def few():
            n = self.labels.shape[0]
            if self._tie_same is None:
                groups = self._tie_starts.shape[0] - 1
            else:
                groups = n - self.tied_pairs()
            return groups <= _FEW_TIE_GROUPS * n
        return self._cached("few_tie_groups", few)

    def tied_pairs(self):
        """How many pairs of neighbouring ranked rows tie (from ``tie_same``: at least as
        many as the tie groups of two or more rows)."""
        return self._cached("tied_pairs", lambda: int(np.count_nonzero(self._tie_same)))

    def tie_runs(self):
        """``(starts, ends)``: the ranked rows of each tie group of two or more rows are
        ``starts[i]:ends[i]``, in order (groups of one row are left out: with many small
        groups, as rounded scores give, most rows are alone in theirs).  Only meaningful
        when ``has_ties``."""
        def runs():
            if self._tie_same is None:  # from the groups (a ranking built with tie_starts)
                sizes = np.diff(self._tie_starts)
                multi = np.flatnonzero(sizes > 1)
                return self._tie_starts[multi], self._tie_starts[multi + 1]
            # A run of tied pairs i .. j - 1 (same[i:j] all True) is the group of rows
            # i .. j: found among the tied pairs (few), not by a pass of differences.
            pairs = np.flatnonzero(self._tie_same)
            breaks = np.ones(pairs.shape[0] + 1, dtype=bool)
            np.not_equal(pairs[1:], pairs[:-1] + 1, out=breaks[1:-1])
            edges = np.flatnonzero(breaks)
            return pairs[edges[:-1]], pairs[edges[1:] - 1] + 2
        return self._cached("tie_runs", runs)

    def relevant_in_runs(self, threshold):
        """``(tied, group)``: the indices in :meth:`relevant_rows` of the relevant rows in
        a tie group of two or more rows, in order, and the index of that group among
        :meth:`tie_runs`.  Only meaningful when ``has_ties``.

        Read from the tie flags at the relevant rows (a row ties with a neighbour) and
        from the rows of the groups (few, with rounded scores): no pass over every row,
        no search."""
        def find():
            rows = self.relevant_rows(threshold)[0]
            run_starts, run_ends = self.tie_runs()
            if rows.size == 0 or run_starts.size == 0:
                return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
            same = self._tie_same
            if same is None:  # a ranking built with tie_starts: the flags from the groups
                same = np.ones(self.labels.shape[0] - 1, dtype=bool)
                same[self._tie_starts[1:-1] - 1] = False
            # rows i and i + 1 tie when same[i]; the rows are sorted, so only the first
            # can be row 0 and only the last the last row.
            before = same.take(rows - 1, mode="clip")
            if rows[0] == 0:
                before[0] = False
            after = same.take(rows, mode="clip")
            if rows[-1] == same.shape[0]:
                after[-1] = False
            before |= after
            tied = np.flatnonzero(before)
            # The same rows, in the same order, from the groups' side: every row of the
            # groups of two or more (few), those relevant, and their group.
            sizes = run_ends - run_starts
            begin = np.cumsum(sizes) - sizes
            in_runs = np.repeat(run_starts - begin, sizes)
            in_runs += np.arange(in_runs.shape[0])
            relevant = np.flatnonzero(self._ranked_relevant(threshold)[in_runs])
            group = np.repeat(np.arange(run_starts.shape[0]), sizes)[relevant]
            return tied, group
        return self._cached(("relevant_in_runs", threshold), find)

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

    def label_scale_by_row(self):
        """Per ranked row, the largest judged label of its query, at least 1 (rbp's
        ``gain="trec"`` divides by it; the device ranking has the same)."""
        top = np.maximum(np.maximum.reduceat(self.all_labels, self.all_offsets[:-1])
                         if self.all_labels.size else np.ones(0), 1.0)
        return top[self.query]

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
        and reciprocal rank under ties read."""
        return self._cached(("relevant_at_groups", threshold),
                            lambda: self.relevant_before(threshold, self.tie_starts))

    def relevant_before(self, threshold, positions):
        """Ranked rows with label >= threshold above each of ``positions`` (sorted, in
        ``[0, n_kept]``), 32-bit below 2**31 rows.

        Counted a pass of rows at a time in a buffer that stays in cache, each pass's
        running count read at the positions it holds: a running count over every row is a
        fresh array as large as the rows, whose pages cost more than the counting."""
        n = self.labels.shape[0]
        dtype = _count_dtype(n + 1)
        out = np.empty(positions.shape[0], dtype=dtype)
        step = max(min(_PASS_ROWS, n), 1)
        flags = self._cache.get(("ranked_relevant", threshold))
        buffer = np.empty(step, dtype=bool) if flags is None else None
        running = np.zeros(step + 1, dtype=dtype)
        edges = np.append(np.arange(0, n, step), n)
        bounds = np.searchsorted(positions, edges)   # the positions in each pass
        above = 0
        for first, last, lo, hi in zip(edges[:-1], edges[1:], bounds[:-1], bounds[1:]):
            size = last - first
            if flags is None:
                part = np.greater_equal(self.labels[first:last], threshold, out=buffer[:size])
            else:
                part = flags[first:last]
            np.cumsum(part, dtype=dtype, out=running[1:size + 1])
            np.add(running[positions[lo:hi] - first], above, out=out[lo:hi])
            above += int(running[size])
        out[bounds[-1]:] = above
        return out

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
        return D.rank_queries(func, y_true, y_score, qid, shape, retrieved, ties)
    rows = _grouped_rows(func, y_true, y_score, qid, shape, retrieved, depth)
    retrieved_labels, retrieved_offsets = rows.labels, rows.offsets
    if rows.full_offsets is not None:  # the candidates are not every retrieved row
        retrieved_labels, retrieved_offsets = None, rows.full_offsets
    order, offsets, tied, same, complete = _order_by_score(rows, ties, depth)
    if complete and rows.full_offsets is None:
        depth = None  # every row ranked: the ranking is complete
    labels_sorted, tie_same = _sorted_labels_and_ties(rows.labels, rows.scores, order,
                                                      offsets, ties, tied, same)
    if depth is None:
        # The ranking holds every retrieved row: reuse its sorted labels.
        retrieved_labels = labels_sorted
    all_labels, all_offsets = rows.all_labels, rows.all_offsets
    if all_labels is None:
        all_labels, all_offsets = retrieved_labels, retrieved_offsets
    return Ranking(qids=rows.qids, labels=labels_sorted, offsets=offsets, depth=depth,
                   tie_starts=None, tie_same=tie_same, all_labels=all_labels,
                   all_offsets=all_offsets,
                   retrieved_labels=retrieved_labels, retrieved_offsets=retrieved_offsets,
                   regroup=None if all_labels is not None else (y_true, rows.groups))


class _GroupedRows(NamedTuple):
    """The rows of each query together (what :func:`rank_queries` ranks)."""

    qids: np.ndarray
    offsets: np.ndarray        # of ``labels``/``scores``, one segment per query
    labels: np.ndarray
    scores: np.ndarray
    all_labels: object         # every row's labels when unretrieved rows were dropped
    all_offsets: object
    groups: object             # the query groups when only candidates are grouped
    full_offsets: object       # the queries' offsets when only candidates are grouped


def _grouped_rows(func, y_true, y_score, qid, shape, retrieved, depth):
    """Group the rows by query: the 2-D form as it is; rows in random order read to a
    depth, only the rows that can reach it (:func:`_candidate_rows`); unretrieved rows
    dropped from the ranking but kept for R and the ideal."""
    if shape is not None:
        n_queries, n_docs = shape
        return _GroupedRows(np.arange(n_queries), np.arange(n_queries + 1) * n_docs,
                            y_true, y_score, None, None, None, None)
    found = query_groups(func, qid)
    qids, offsets = found.qids, found.offsets
    candidates = None
    if found.codes is not None and retrieved is None and depth is not None:
        candidates = _candidate_rows(found, y_true, y_score, depth)
    if candidates is not None:
        # Rows in random order read to a depth: only the rows that can reach it
        # are grouped and ranked (all of them: they are few, and a prefix of the
        # ranking); the labels of the others are only counted (see Ranking).
        candidate_offsets, labels_g, scores_g = candidates
        return _GroupedRows(qids, candidate_offsets, labels_g, scores_g, None, None, found,
                            offsets)
    if retrieved is None:
        labels_g, scores_g = found.grouped(y_true, y_score)
        return _GroupedRows(qids, offsets, labels_g, scores_g, None, None, None, None)
    labels_g, scores_g, keep = found.grouped(y_true, y_score, retrieved)
    # Unretrieved rows count in R and the ideal ranking but take no rank.
    kept_offsets = np.zeros(qids.shape[0] + 1, dtype=np.intp)
    np.cumsum(np.add.reduceat(keep, offsets[:-1], dtype=np.intp), out=kept_offsets[1:])
    return _GroupedRows(qids, kept_offsets, labels_g[keep], scores_g[keep], labels_g, offsets,
                        None, None)


def _order_by_score(rows, ties, depth):
    """``(order, offsets, tied, same, complete)``: each query's rows by score, descending,
    as deep as ``depth`` reads (None, or candidates only: whole; the offsets of a top-k
    order are its own);
    whether rows may tie, the sort's tie flags when it found them (else None), and
    whether every row was ranked."""
    labels, scores, offsets = rows.labels, rows.scores, rows.offsets
    stable = ties == "stable"
    top = None
    if rows.full_offsets is None and depth is not None:
        if depth.first_relevant:
            floor = first_relevant_floor(labels, scores, offsets, depth.first_relevant)
            if depth.k is not None:
                floor = np.minimum(floor, kth_floor(scores, offsets, depth.k))
            top = segmented_top_order_by_floor(scores, offsets, floor, stable=stable)
        else:
            top = segmented_top_order(scores, offsets, depth.k, stable=stable)
    if top is not None:
        (order, top_offsets) = top
        return order, top_offsets, True, None, False
    if stable:  # input order decides ties: no tie flags to find
        order, tied = segmented_argsort_desc(scores, offsets, stable=True, with_ties=True)
        return order, offsets, tied, None, True
    order, tied, same = segmented_argsort_desc(scores, offsets, stable=False, with_ties=True,
                                               with_same=True)
    return order, offsets, tied, same, True


def _sorted_labels_and_ties(labels, scores, order, offsets, ties, tied, same):
    """The labels in rank order and, under ``ties="average"``, the tie flags the groups
    are built from (None otherwise: other policies reorder the tied rows here)."""
    if ties == "stable" or not tied:  # input order decides ties, or there are none
        return _take_in_order(order, labels)[0], None
    if same is not None:  # found by the sort (never across a query boundary)
        labels_sorted, _ = _take_in_order(order, labels)
    else:
        # Tie groups: runs of equal scores that do not cross a query boundary.
        labels_sorted, same = _take_in_order(order, labels, scores)
        if same.size:
            boundaries = offsets[1:-1]
            boundaries = boundaries[(boundaries > 0) & (boundaries < labels_sorted.shape[0])]
            same[boundaries - 1] = False
    if not same.any():
        return labels_sorted, None
    if ties == "average":
        return labels_sorted, same  # the groups are built from it when a kernel reads them
    # Order tied rows by label: worst first (pessimistic) or best first.
    _order_ties_by_label(labels_sorted, same, worst_first=ties == "pessimistic")
    return labels_sorted, None
