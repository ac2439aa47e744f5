"""trec_eval's view of one qrels/run pair: ranked relevance codes per query.

:func:`trec_ranking` turns a :class:`~skrank.io.Qrels` and a
:class:`~skrank.io.Run` into a :class:`TrecRanking`: for every evaluated
query, the relevance code of each retrieved document in trec_eval's order
(score descending, then docno descending), after trec_eval's ``-M``
(keep the first N), ``-J`` (judged documents only) and ``-c`` (a missing
query gets one unjudged document, as trec_eval's placeholder ranking) and
the number of judged documents at each relevance level.  Codes follow
trec_eval's ``form_res_rels.c``: a level >= 0 for a judged document,
:data:`NONPOOL` (-1) for a document absent from the qrels and
:data:`UNJUDGED` (-2) for one judged with a negative level ("in the pool
but unjudged").

Every measure in :mod:`skrank._trec.measures` is a few numpy lines over
these flat arrays, or, for a measure the metric table has too (map, P, ndcg_cut,
...), the table's kernel on their engine view (:attr:`TrecRanking.engine`); the
segmented helpers here keep trec_eval's summation order, so float sums are the
same sequential sums as trec_eval's loops.
"""

import copy
from functools import cached_property

import numpy as np

from .._engine.ranking import Ranking
from .._engine.scan import segment_accumulate, segment_last, segment_starts
from ..io._containers import qrels_table, run_table
from ..io._join import join
from ..io._fields import decode


NONPOOL = -1


UNJUDGED = -2


def lround(x):
    """C's ``lround`` (half away from zero) for non-negative doubles."""
    floor = np.floor(x)
    return (floor + (x - floor >= 0.5)).astype(np.int64)


class TrecRanking:
    """Ranked relevance codes per query, as trec_eval's ``form_res_rels``.

    Attributes
    ----------
    qids : ndarray of str, shape (n_queries,)
        Evaluated queries, in trec_eval's order (sorted).
    rel : ndarray of int64
        Relevance code of each ranked document, grouped by query in rank
        order (see the module docstring).
    query : ndarray of intp
        Query index of each ranked document.
    position : ndarray of int64
        0-based rank of each document within its query.
    num_ret : ndarray of int64, shape (n_queries,)
        Ranked documents per query.
    rel_levels : ndarray of int64, shape (n_queries, n_levels)
        Judged documents (level >= 0) per query and level, retrieved or not.
    level_values : ndarray of int64, shape (n_levels,), default=None
        The level of each column of ``rel_levels`` (increasing): the levels
        some query has, so memory does not grow with the largest grade.
        None: ``0 .. n_levels - 1``.
    level : int
        The relevance threshold (``-l``).
    placeholder : ndarray of bool, shape (n_queries,)
        Queries absent from the run, evaluated on trec_eval's placeholder
        ranking (``-c``).
    runid : str
        The run tag trec_eval prints.
    """

    def __init__(self, *, qids, rel, query, num_ret, rel_levels, level, placeholder, runid,
                 all_qrels_rel, level_values=None):
        self.qids = qids
        self.rel = rel
        self.query = query
        self.num_ret = num_ret
        self.rel_levels = rel_levels
        self.level_values = (np.arange(rel_levels.shape[1], dtype=np.int64)
                             if level_values is None else level_values)
        self.level = level
        self.placeholder = placeholder
        self.runid = runid
        self.all_qrels_rel = all_qrels_rel
        self.num_docs_in_coll = 0  # trec_eval -N, for utility
        self.n_queries = qids.shape[0]
        self.starts = segment_starts(num_ret)
        self.position = np.arange(rel.shape[0], dtype=np.int64) - self.starts[query]

    # The engine's view -----------------------------------------------------
    @cached_property
    def engine(self):
        """This ranking as the engine's :class:`~skrank._engine.ranking.Ranking`, with
        labels as the plan ranks them (a level; 0, never relevant, for a document not
        judged): the metric table's kernels run on it, so the measures both have (map,
        P, ndcg_cut, ...) have one kernel (see :mod:`skrank._trec.measures`)."""
        return self.engine_with(np.maximum(self.rel, 0).astype(np.float64))

    def engine_with(self, labels):
        """The engine's ranking of these rows with other per-row ``labels`` (a gain of
        each ranked document); every judged document keeps its level for R and the
        ideal ranking."""
        n_q = self.n_queries
        offsets = np.empty(n_q + 1, dtype=np.int64)
        offsets[:n_q] = self.starts
        offsets[n_q] = self.rel.shape[0]
        per_query = self.rel_levels.sum(axis=1)
        all_offsets = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(per_query, out=all_offsets[1:])
        all_labels = np.repeat(np.tile(self.level_values.astype(np.float64), n_q),
                               self.rel_levels.ravel())
        return Ranking(qids=self.qids, labels=labels, offsets=offsets, depth=None,
                       tie_starts=None, all_labels=all_labels, all_offsets=all_offsets,
                       retrieved_labels=labels, retrieved_offsets=offsets)

    # Counts ---------------------------------------------------------------
    @cached_property
    def num_rel(self):
        return self.rel_levels[:, self.level_values >= max(self.level, 0)].sum(axis=1)

    @cached_property
    def num_nonrel(self):
        """Judged documents below the threshold (bpref's denominator)."""
        return self.rel_levels[:, self.level_values < max(self.level, 0)].sum(axis=1)

    @cached_property
    def num_rel_levels(self):
        """trec_eval's ``num_rel_levels``: highest level with a document, plus one."""
        present = self.rel_levels > 0
        n_levels = present.shape[1]
        highest = self.level_values[n_levels - 1 - np.argmax(present[:, ::-1], axis=1)]
        return np.where(present.any(axis=1), highest + 1, 0)

    @cached_property
    def is_rel(self):
        return self.rel >= self.level

    @cached_property
    def num_rel_ret(self):
        return self.count(self.is_rel)

    def count(self, mask, k=None):
        """Per query, rows of ``mask`` (among the top ``k`` when given)."""
        if k is not None:
            k = np.asarray(k)
            mask = mask & (self.position < (k[self.query] if k.ndim else k))
        return np.bincount(self.query[mask], minlength=self.n_queries).astype(np.int64)

    # Relevant rows --------------------------------------------------------
    @cached_property
    def rel_rows(self):
        return np.flatnonzero(self.is_rel)

    @cached_property
    def rel_query(self):
        return self.query[self.rel_rows]

    @cached_property
    def rel_position(self):
        return self.position[self.rel_rows]

    @cached_property
    def rel_rank(self):
        """1-based count of relevant documents so far, at each relevant row."""
        starts = segment_starts(self.num_rel_ret)
        return np.arange(self.rel_rows.shape[0], dtype=np.int64) - starts[self.rel_query] + 1

    @cached_property
    def rel_starts(self):
        return segment_starts(self.num_rel_ret)

    @cached_property
    def precision_at_rel(self):
        """Precision at each relevant row: relevant so far / rank."""
        return self.rel_rank / (self.rel_position + 1.0)

    def cumsum(self, values):
        """Sequential per-query cumulative sum of a per-row array."""
        return segment_accumulate(np.add, values, self.query, self.num_ret)

    def at_depth(self, cumulative, depth, empty=0.0):
        """Per query, a per-row cumulative value after ``depth`` rows (clipped)."""
        return segment_last(cumulative, self.starts, self.num_ret,
                            np.broadcast_to(np.asarray(depth, dtype=np.int64),
                                            (self.n_queries,)), empty)

    # Gains (ndcg, G, rbp) -------------------------------------------------
    def gains(self, pairs):
        """Gain of each ranked row and the per-query ideal list for ``level=gain`` pairs.

        trec_eval's ``setup_gains``: a level's gain is the level itself unless
        a pair names it; a document outside the query's table of levels
        (absent from the qrels, or unjudged in the pool) gains 0 unless a
        pair names its code.
        """
        return _Gains(self, dict(pairs))


def _glibc_msort(items, compare):
    """glibc's qsort for small arrays (msort_with_tmp): a top-down merge sort that
    takes from the left run while ``compare(left, right) <= 0``."""
    n = len(items)
    if n <= 1:
        return list(items)
    left, right = _glibc_msort(items[:n // 2], compare), _glibc_msort(items[n // 2:], compare)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


class _Gains:
    """Per-row gains, and the ideal ranking's gains, for one gain table."""

    def __init__(self, ranking, pairs):
        self.ranking = ranking
        self.pairs = pairs
        r = ranking
        level_gain = np.array([pairs.get(lv, float(lv)) for lv in r.level_values.tolist()],
                              dtype=np.float64)
        self.level_gain = level_gain  # of each column of r.rel_levels
        # Gain of each row's code: a level's own value unless named, other codes 0 unless named.
        row_gain = np.where(r.rel >= 0, r.rel, 0).astype(np.float64)
        for code, gain in pairs.items():
            row_gain[r.rel == code] = gain
        self.row_gain = row_gain
        # The ideal ranking: the judged documents level by level in the order of
        # trec_eval's sorted gain table, down to the first level without a positive gain.
        gain_table, count_table = self._ideal_tables()
        self.ideal_len = count_table.sum(axis=1)
        self.ideal = np.repeat(gain_table.ravel(), count_table.ravel())
        self.ideal_query = np.repeat(np.arange(r.n_queries), self.ideal_len)
        self.ideal_starts = segment_starts(self.ideal_len)
        self.ideal_position = (np.arange(self.ideal.shape[0], dtype=np.int64)
                               - self.ideal_starts[self.ideal_query])

    def _ideal_tables(self):
        """Per query, the gains of its table's levels from the top and their counts.

        trec_eval's setup_gains lists the named levels (in the order given), then
        the other levels below the query's num_rel_levels, and sorts them with
        qsort and a comparator returning ``(int)(gain1 - gain2)`` (glibc's merge
        sort, emulated here; it matters only for gains less than 1 apart).  Its
        ideal ranking walks that table from the top and stops at the first level
        with documents and a gain <= 0.
        """
        r = self.ranking
        values = r.level_values
        nrl = r.num_rel_levels
        # Levels no query has hold no document: leaving them out of the table changes
        # nothing when every gain is an integer (the comparator is then an exact order);
        # with fractional named gains they can move others in glibc's sort, so they are
        # listed while few (a grade in the millions lists only the levels present).
        exact = not all(float(g).is_integer() for g in self.pairs.values()) \
            and int(nrl.max(initial=0)) <= 1 << 16
        width = len(self.pairs) + (int(nrl.max(initial=0)) if exact else values.shape[0])
        gain_table = np.zeros((r.n_queries, width))
        count_table = np.zeros((r.n_queries, width), dtype=np.int64)
        for m in np.unique(nrl).tolist():  # one table per number of levels (a handful)
            listed = range(m) if exact else values[values < m].tolist()
            entries = list(self.pairs.items()) + [(lv, float(lv)) for lv in listed
                                                  if lv not in self.pairs]
            ordered = _glibc_msort(entries, lambda a, b: int(a[1] - b[1]))[::-1]
            rows = np.flatnonzero(nrl == m)
            levels = np.array([lv for lv, _ in ordered], dtype=np.int64)
            gains = np.array([g for _, g in ordered], dtype=np.float64)
            column = np.minimum(np.searchsorted(values, levels), max(values.shape[0] - 1, 0))
            inside = (levels >= 0) & (levels < m) & (values[column] == levels)
            counts = np.zeros((rows.shape[0], levels.shape[0]), dtype=np.int64)
            counts[:, inside] = r.rel_levels[np.ix_(rows, column[inside])]
            stop = np.logical_or.accumulate((counts > 0) & (gains <= 0)[None, :], axis=1)
            counts[stop] = 0
            gain_table[rows, :levels.shape[0]] = gains
            count_table[rows, :levels.shape[0]] = counts
        return gain_table, count_table

    def table_extremes(self):
        """Per query, the smallest and largest gain of its table (with 0, as
        trec_eval's rbp starts from zeroed bounds)."""
        r = self.ranking
        values = r.level_values
        nrl = r.num_rel_levels
        in_table = values[None, :] < nrl[:, None]
        present = set(values.tolist())
        named = [g for lv, g in self.pairs.items() if lv not in present]
        for lv in self.pairs:
            if lv in present:
                in_table[:, int(np.searchsorted(values, lv))] = True
        gains = np.where(in_table, self.level_gain[None, :], 0.0)
        lo = np.minimum(gains.min(axis=1, initial=0.0), min(named, default=0.0))
        hi = np.maximum(gains.max(axis=1, initial=0.0), max(named, default=0.0))
        # The table also lists the levels below num_rel_levels that no query has, at
        # their own (non-negative) gain: the largest of them not named raises `hi`.
        top = nrl - 1
        for lv in sorted((lv for lv in self.pairs if lv >= 0), reverse=True):
            top = np.where(top == lv, top - 1, top)
        hi = np.maximum(hi, np.maximum(top, 0).astype(np.float64))
        return lo, hi

    def row_in_table(self):
        r = self.ranking
        inside = (r.rel >= 0) & (r.rel < r.num_rel_levels[r.query])
        for code in self.pairs:
            inside |= r.rel == code
        return inside

    def discounted(self, gains, positions):
        return gains / np.log2(positions + 2.0)

    def dcg_cumsum(self):
        r = self.ranking
        return r.cumsum(self.discounted(self.row_gain, r.position))

    def ideal_cumsum(self):
        return segment_accumulate(np.add, self.discounted(self.ideal, self.ideal_position),
                                  self.ideal_query, self.ideal_len)

    def ideal_at(self, cumulative, depth):
        depth = np.broadcast_to(np.asarray(depth, dtype=np.int64),
                                (self.ranking.n_queries,))
        return segment_last(cumulative, self.ideal_starts, self.ideal_len, depth)


def trec_ranking(qrels, run, *, level=1, complete=False, max_ret=None, judged_only=False,
                 float32_scores=False, func="evaluate"):
    """Build a :class:`TrecRanking` from a qrels and a run, as trec_eval reads them.

    Parameters
    ----------
    qrels : skrank.io.Qrels or a qrels table read by skrank.io
    run : skrank.io.Run or a run table read by skrank.io
    level : int, default=1
        Relevance threshold (``-l``).
    complete : bool, default=False
        ``-c``: queries of the qrels absent from the run are evaluated on a
        placeholder ranking.  Without it, such a query is an error, as in
        trec_eval 10.
    max_ret : int, default=None
        ``-M``: keep the first ``max_ret`` documents of each ranking.
    judged_only : bool, default=False
        ``-J``: drop the documents absent from the qrels or unjudged.
    float32_scores : bool, default=False
        Compare scores as 32-bit floats (pytrec_eval's reading) instead of
        trec_eval 10's doubles.
    """

    qrels, run = qrels_table(qrels, func), run_table(run, func)
    if float32_scores:
        score = run.numbers["score"].astype(np.float32).astype(np.float64)
        run = copy.copy(run)
        run.numbers = {**run.numbers, "score": score}
    joined = join(qrels, run, missing_queries="zero", func=func, columns=())
    run.release()  # the large columns are no longer needed (the tags are kept)
    if joined.q_codes.shape[0] == 0:
        raise ValueError(f"{func}: the qrels hold no judgement. Got an empty qrels file.")
    # Evaluated queries (those of the qrels), numbered in sorted order.
    evaluated = joined.evaluated
    query_of_code = np.cumsum(evaluated) - 1
    qids = decode(joined.qids[evaluated])
    n_q = qids.shape[0]
    ret_query = query_of_code[joined.r_codes]
    num_in_run = np.bincount(ret_query, minlength=n_q)
    missing = num_in_run == 0
    if missing.any() and not complete:
        first = str(qids[np.argmax(missing)])
        raise ValueError(
            f"{func}: every query of the qrels must be in the run (trec_eval 10 stops "
            f"here too). Got query {first!r} ({int(missing.sum())} in all) missing from the "
            f"run. Pass -c to evaluate it on an empty ranking, or remove it from the qrels.")

    # Judged documents per (query, level), retrieved or not.
    q_rel = joined.q_rel
    judged_rows = q_rel >= 0
    levels = q_rel[judged_rows]
    # One column per level some query has (not per integer up to the largest grade).
    level_values, level_column = np.unique(levels, return_inverse=True)
    if level_values.size == 0:
        level_values = np.zeros(1, dtype=np.int64)
    n_levels = level_values.shape[0]
    rel_levels = np.bincount(query_of_code[joined.q_codes[judged_rows]] * n_levels
                             + level_column.reshape(-1),
                             minlength=n_q * n_levels).reshape(n_q, n_levels)

    # Ranked rows: relevance codes, in trec_eval's order (the join's).
    match = joined.r_match
    code = np.full(match.shape[0], NONPOOL, dtype=np.int64)
    hit = match >= 0
    rel = q_rel[match[hit]].astype(np.int64)
    code[hit] = np.where(rel < 0, UNJUDGED, rel)
    if missing.any():  # trec_eval's placeholder ranking: one document outside the pool
        placeholder_q = np.flatnonzero(missing)
        ret_query = np.concatenate([ret_query, placeholder_q])
        code = np.concatenate([code, np.full(placeholder_q.shape[0], NONPOOL)])
        order = np.argsort(ret_query, kind="stable")
        ret_query, code = ret_query[order], code[order]
    num_ret = np.bincount(ret_query, minlength=n_q).astype(np.int64)
    keep = None
    if max_ret is not None:
        position = np.arange(code.shape[0]) - segment_starts(num_ret)[ret_query]
        keep = position < max_ret
    if judged_only:
        keep = (code >= 0) if keep is None else keep & (code >= 0)
    if keep is not None:
        code, ret_query = code[keep], ret_query[keep]
        num_ret = np.bincount(ret_query, minlength=n_q).astype(np.int64)

    present = joined.qids[evaluated][~missing]
    runid = run_tag(run, present[-1] if present.shape[0] else None)
    return TrecRanking(qids=qids, rel=code, query=ret_query, num_ret=num_ret,
                       rel_levels=rel_levels, level=level, placeholder=missing, runid=runid,
                       all_qrels_rel=np.asarray(qrels.numbers["rel"]),
                       level_values=level_values.astype(np.int64))


def run_tag(run, qid):
    """The tag trec_eval prints: that of query ``qid``'s first row in the run table
    (``qid`` None or absent: the first row's), "" for an empty run."""

    if run.qid_runs.shape[0] == 0:
        return ""
    found = np.flatnonzero(run.qid_runs == qid) if qid is not None else np.zeros(0, int)
    first_run = int(found[0]) if found.size else 0
    index = first_run if run.tag_per_run else int(run.run_lengths[:first_run].sum())
    return str(decode(run.tag[index:index + 1])[0])
