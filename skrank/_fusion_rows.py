"""The data path of :func:`skrank.fuse`: runs joined into one table of codes, sorted
only as far as a method needs, fused by the kernels of :mod:`skrank._fusion`, and
written as a :class:`skrank.io.Run`."""

import numpy as np

from ._fusion import (
    KERNELS,
    Rows,
    _group_mean,
    _segment_starts,
    merged_pair_codes,
    normalise,
    pair_codes,
    train,
)
from ._engine.codes import _string_run_starts
from ._engine.groups import _group_order
from ._engine.segments import segmented_argsort_desc
from .io import Run
from .io._run_index import factorize_ids, keep_known_index, kept_index, run_index

_UNSET = object()


def _union_codes(parts):
    """Codes of each part's values in the sorted union of all of them; each part is
    ``(codes, sorted distinct values, lengths)`` of :func:`factorize_ids` (one run's
    ids, factorised on its own), so only the arrays of distinct values are merged."""
    union, into = _sorted_union([u for _, u, _ in parts])
    # int32 codes (the union's ids number fewer than the rows of one run, as a rule)
    small = np.int32 if union.shape[0] < 2**31 else np.intp
    codes = []
    for (c, _, lengths), to in zip(parts, into):
        to = to.astype(small)
        codes.append(to[c] if lengths is None else np.repeat(to[c], lengths))
    return codes, union


def _sorted_union(arrays):
    """``(union, into)``: the sorted union of sorted arrays of distinct values, and the
    code in it of each array's values.  One stable argsort of their concatenation,
    which finds the arrays already sorted (``np.unique`` sorts them again, and took
    19 s for two arrays of 1.9M distinct MS MARCO-like document ids, measured on the
    shared machine, where this takes about 2 s)."""
    if not arrays:
        return np.zeros(0, dtype="U1"), []
    if len(arrays) == 1:
        return arrays[0], [np.arange(arrays[0].shape[0])]
    both = np.concatenate(arrays)
    order = np.argsort(both, kind="stable")
    ranked = both[order]
    del both
    new = np.zeros(ranked.shape[0], dtype=bool)
    if ranked.shape[0]:
        new[0] = True
        if ranked.dtype.kind == "U" and ranked.dtype.itemsize:
            new[_string_run_starts(ranked)] = True
        else:
            new[1:] = ranked[1:] != ranked[:-1]
    union = ranked[new]
    del ranked
    code = np.empty(order.shape[0], dtype=np.intp)
    code[order] = np.cumsum(new) - 1
    bounds = np.cumsum([0] + [a.shape[0] for a in arrays])
    return union, [code[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _sort_rows(key, n_keys, score):
    """Order of rows by (key, -score), ties in their current order: the engine's radix
    grouping, then its segmented sort."""

    if key.shape[0] == 0:
        return np.zeros(0, dtype=np.intp)
    group = _group_order(key, max(n_keys, 1))
    counts = np.bincount(key, minlength=n_keys)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    return group[segmented_argsort_desc(score[group], offsets, stable=True)]


def _narrow(codes):
    """Non-negative integer codes as int32 when they fit (else as they are)."""
    if codes.shape[0] and codes.max() >= 2**31 - 1:
        return codes
    return codes.astype(np.int32, copy=False)


class _Prepared:
    """Runs joined into one table of codes (shared by the calls of :class:`FusionSearch`).

    Rows stay in input order, run after run; :meth:`rows` sorts them only as far as a
    method needs (by run and query for a normalisation, by score within them for the
    methods that read ranks), and not at all when they already are."""

    def __init__(self, func, runs, qrels=None):
        self.labels = [(name, label) for name, label, _ in runs]
        objs = [r for _, _, r in runs]
        self.m = m = len(objs)
        sizes = [len(r) for r in objs]
        bounds = np.concatenate(([0], np.cumsum(sizes, dtype=np.intp)))
        # each run's codes, positions and stretches: kept by the Runs skrank built
        self.indexes = [run_index(r) for r in objs]
        extra = [] if qrels is None else [qrels]
        q_parts = [(x.q_code, x.q_uniques, x.q_len) for x in self.indexes]
        q_parts += [factorize_ids(r.qid, True) for r in extra]
        qcodes, self.uq = _union_codes(q_parts)
        # each run's rows of a query contiguous: (run, query) segments need no sorting
        self.contiguous = all(x.q_len is not None for x in self.indexes)
        d_parts = [(x.d_code, x.d_uniques, None) for x in self.indexes]
        d_parts += [factorize_ids(r.docno) for r in extra]
        dcodes, self.ud = _union_codes(d_parts)
        del q_parts, d_parts
        qrels_doc = dcodes[m] if qrels is not None else None
        self.nq, self.nd = nq, nd = self.uq.shape[0], self.ud.shape[0]
        # codes as int32 where they fit: the row arrays are most of fuse's memory
        self.query = _narrow(np.concatenate(qcodes[:m]) if m else np.zeros(0, dtype=np.intp))
        key = self.query.astype(np.int32 if nq * nd < 2**31 else np.int64)
        key *= nd
        for r in range(m):  # no concatenated copy of the document codes
            key[bounds[r]:bounds[r + 1]] += dcodes[r]
        del dcodes
        self.run = np.repeat(np.arange(m, dtype=np.int32), sizes)
        self.score = np.concatenate([r.score for r in objs])
        # a run that holds a document twice says so in its index
        check = any(x.twice for x in self.indexes)
        if (not check and nq * nd > 4 * key.shape[0] + 1024
                and all(x is kept_index(r) for x, r in zip(self.indexes, objs))):
            # sparse keys of Runs that keep their order by (query, document): merged
            pair, self.pairs, twice = merged_pair_codes(
                key, sizes, [x.pair_order for x in self.indexes])
        else:
            pair, self.pairs, twice = pair_codes(key, nq * nd, sizes, check=check)
        self.pair = pair if pair.dtype == np.int32 else _narrow(pair)
        del key, pair
        if twice:
            self._duplicates(func)
        self.qrels_q = self.qrels_rel_key = None
        if qrels is not None:
            qq, qd = qcodes[m], qrels_doc
            self.qrels_q = np.unique(qq)
            rel = qrels.rel >= 1
            self.qrels_rel_key = np.unique(qq[rel].astype(np.int64) * nd + qd[rel])
        self._group = self._order = _UNSET

    def positions(self):
        """``(pos, seg_len, tied)`` in input order (runs contiguous by query): each row's
        0-based position in its run's ranking of its query, the length of each
        (run, query) stretch, and whether some run ties scores."""
        pos = np.concatenate([x.pos for x in self.indexes]) if self.m else np.zeros(0, np.int32)
        seg_len = (np.concatenate([x.q_len for x in self.indexes]) if self.m
                   else np.zeros(0, dtype=np.intp))
        return pos, seg_len, any(x.tied for x in self.indexes)

    def _duplicates(self, func):
        """Raise for the first (query, document) that a run holds twice."""
        m = self.m
        per_run = np.bincount(self.pair.astype(np.int64) * m + self.run,
                              minlength=self.pairs.shape[0] * m)
        first = int(np.argmax(per_run > 1))
        p, r = divmod(first, m)
        q, d = divmod(int(self.pairs[p]), self.nd)
        raise ValueError(
            f"{func}: {self.labels[r][1]} must hold each document once per query. Got "
            f"document {str(self.ud[d])!r} twice for query {str(self.uq[q])!r} "
            f"({int((per_run - 1)[per_run > 1].sum())} duplicate rows in all). Drop the "
            f"duplicates first.")

    def _segment_key(self):
        return _segment_key(self.run, self.query, self.nq)

    def _grouping(self):
        """Order grouping the rows by (run, query), None when they already are."""
        if self._group is _UNSET:
            self._group = (None if self.contiguous
                           else _group_order(self._segment_key(), max(self.m * self.nq, 1)))
        return self._group

    def _ranked(self):
        """Order of the rows by (run, query, -score), ties in input order (queries in
        their order of the runs when they are contiguous); None when they already are."""
        if self._order is _UNSET:
            self._order = None
            if not self.contiguous:
                self._order = _sort_rows(self._segment_key(), self.m * self.nq, self.score)
                return self._order
            s = self.score
            down = s[1:] <= s[:-1]
            if not bool(down.all()):
                starts = _segment_starts(self._segment_key())
                down[starts[1:] - 1] = True  # a segment's first row follows another's
                if not bool(down.all()):
                    self._order = segmented_argsort_desc(s, np.append(starts, s.shape[0]),
                                                         stable=True)
        return self._order

    def rows(self, depth=None, ranked=True):
        """Row arrays (run, query, pair, score) sorted by (run, query, -score) (by
        (run, query) only, unless ``ranked``), cut at ``depth``."""
        o = self._ranked() if ranked or depth is not None else self._grouping()
        if depth is not None:
            seg = self._segment_key() if o is None else self._segment_key()[o]
            starts = _segment_starts(seg)
            pos = np.arange(seg.shape[0]) - np.repeat(starts, np.diff(np.append(
                starts, seg.shape[0])))
            o = np.flatnonzero(pos < depth) if o is None else o[pos < depth]
        if o is None:
            return self.run, self.query, self.pair, self.score
        return self.run[o], self.query[o], self.pair[o], self.score[o]


def _segment_key(run, query, nq):
    key = run.astype(np.int64)
    key *= nq
    key += query
    return key


def _ranking(run, query, score, nq):
    """Positions, ranking lengths and tie groups of rows sorted by (run, query, -score)."""
    seg = _segment_key(run, query, nq)
    starts = _segment_starts(seg)
    lengths = np.diff(np.append(starts, seg.shape[0]))
    seg_id = np.repeat(np.arange(starts.shape[0]), lengths)
    pos = np.arange(seg.shape[0]) - starts[seg_id]
    n = lengths[seg_id]
    new = np.ones(seg.shape[0], dtype=bool)
    if seg.shape[0]:
        new[1:] = (seg[1:] != seg[:-1]) | (score[1:] != score[:-1])
    tie = np.cumsum(new) - 1
    return starts, seg_id, pos, n, tie


def _fuse_prepared(func, prep, method, norm, w, params, ties, depth, name):
    # the row arrays of _fused_scores are freed before the output's strings are made
    upair, fused, pair_query = _fused_scores(prep, method, norm, w, params, ties, depth)
    return _as_run(prep, upair, fused, name, pair_query)


def _in_input_order(prep, method, norm, depth):
    """Whether the rows can stay in input order, each run's positions read from its
    index (no sort, no gather): every run's queries in stretches, and the fused
    scores the same to the last bit as on rows sorted by score: sums of several rows
    are over one pair's rows (one a run, in run order either way) or one tie group's
    (in input order either way), but a normalisation's sums over a query's rows would
    add them in another order after a depth cut (sum, zmuv, dbsf), and
    ``min-max-inverted`` re-ranks rows whose inverted scores may tie (kept in score
    order).  The trained methods read rows in ranking order."""
    if not prep.contiguous or method.trained or norm == "min-max-inverted":
        return False
    return depth is None or method.reads == "ranks" or norm not in ("sum", "zmuv", "dbsf")


def _input_order_rows(prep, ranked, depth, need_n):
    """``(run, query, pair, score, starts, pos, n, tie)`` of :func:`_ranking`, rows in
    input order (``pos``, ``n``, ``tie``: None where not needed; ``tie`` None: no
    tie), cut at ``depth``."""
    run, query, pair, score = prep.run, prep.query, prep.pair, prep.score
    if not (ranked or depth is not None):
        seg_len = (np.concatenate([x.q_len for x in prep.indexes]) if prep.m
                   else np.zeros(0, dtype=np.intp))
        return run, query, pair, score, _starts(seg_len), None, None, None
    pos, seg_len, tied = prep.positions()
    tie = _tie_groups(score, pos, seg_len) if tied else None
    if depth is not None:
        keep = pos < depth
        if not bool(keep.all()):
            rows = np.flatnonzero(keep)
            run, query, pair, score, pos = run[rows], query[rows], pair[rows], score[rows], \
                pos[rows]
            if tie is not None:  # groups renumbered among the rows kept
                used = np.zeros(int(tie.max()) + 1, dtype=bool)
                used[tie[rows]] = True
                tie = (np.cumsum(used) - 1)[tie[rows]]
            seg_len = np.minimum(seg_len, depth)
    n = np.repeat(seg_len, seg_len) if need_n else None
    return run, query, pair, score, _starts(seg_len), pos, n, tie


def _starts(lengths):
    return np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.intp) if lengths.size \
        else np.zeros(0, dtype=np.intp)


def _tie_groups(score, pos, seg_len):
    """Tie-group id of each row in input order: equal scores of one (run, query)
    stretch (``pos``: each row's position in its stretch's ranking)."""
    n = score.shape[0]
    first = np.repeat(_starts(seg_len), seg_len)
    order = np.empty(n, dtype=np.intp)
    order[first + pos] = np.arange(n)
    seg = np.repeat(np.arange(seg_len.shape[0]), seg_len)  # sorted: the same by position
    ranked = score[order]
    new = np.ones(n, dtype=bool)
    if n:
        new[1:] = (seg[1:] != seg[:-1]) | (ranked[1:] != ranked[:-1])
    tie = np.empty(n, dtype=np.intp)
    tie[order] = np.cumsum(new) - 1
    return tie


def _fused_scores(prep, method, norm, w, params, ties, depth):
    """``(pairs, fused score of each pair, query of each pair)``."""
    # positions in each run's ranking: for what reads ranks (not the score methods)
    ranked = method.reads == "ranks" or norm in ("rank", "borda")
    nq, nd, m = prep.nq, prep.nd, prep.m
    if _in_input_order(prep, method, norm, depth):
        run, query, pair, score, starts, pos, n, tie = _input_order_rows(prep, ranked, depth,
                                                                         norm == "rank")
    else:
        run, query, pair, score = prep.rows(depth=depth, ranked=ranked)
        if ranked or depth is not None:
            starts, seg_id, pos, n, tie = _ranking(run, query, score, nq)
        else:
            starts = _segment_starts(_segment_key(run, query, nq))
            pos = n = tie = None
    n_ties = int(tie.max()) + 1 if tie is not None and tie.size else 0

    def tie_mean(values):
        some_tie = tie is not None and n_ties < tie.shape[0]
        return _group_mean(values, tie, n_ties) if ties == "average" and some_tie else values

    if depth is None:
        upair = prep.pairs
    else:  # pairs no run keeps drop out
        kept = np.zeros(prep.pairs.shape[0], dtype=bool)
        kept[pair] = True
        renumber = np.cumsum(kept) - 1
        upair, pair = prep.pairs[kept], renumber[pair]
    pair_query = (upair // nd).astype(np.intp)
    n_pairs = upair.shape[0]
    if norm == "borda":
        n_cand = np.bincount(pair_query, minlength=nq)
        run_len = np.bincount(run * nq + query, minlength=m * nq).reshape(m, nq)
        ranked = tie_mean(1.0 - pos / n_cand[query])
        present = np.zeros((n_pairs, m), dtype=bool)
        present[pair, run] = True
        miss_p, miss_r = np.nonzero(~present)
        miss_q = pair_query[miss_p]
        unranked = 0.5 - (run_len[miss_r, miss_q] - 1) / (2 * n_cand[miss_q])
        run = np.concatenate([run, miss_r])
        query = np.concatenate([query, miss_q])
        pair = np.concatenate([pair, miss_p])
        score = np.concatenate([ranked, unranked])
        resort = True
    elif method.reads == "ranks" and method.name != "segfuse" and norm != "min-max-inverted":
        resort = False  # the kernel reads positions only, and the order is unchanged
    else:
        lengths = np.diff(np.append(starts, score.shape[0]))
        score = normalise(norm, score, starts, lengths, pos, n, tie_mean)
        resort = norm == "min-max-inverted" and pos is not None
    if resort:
        order = _sort_rows(run * nq + query, m * nq, score)
        run, query, pair, score = run[order], query[order], pair[order], score[order]
        starts, seg_id, pos, n, tie = _ranking(run, query, score, nq)
        n_ties = int(tie[-1]) + 1 if tie.size else 0
    run_len = None
    if method.name in ("bordafuse", "w_bordafuse"):
        run_len = np.bincount(run * nq + query, minlength=m * nq).reshape(m, nq).astype(float)
    model = None
    if method.trained:
        model = _train(prep, method, params, run, query, pair, upair, pos, n)
    rows = Rows(pair=pair, run=run, query=query, score=score, pos=pos, n=n, tie=tie,
                n_ties=n_ties, ties=ties, pair_query=pair_query, n_pairs=n_pairs, n_runs=m,
                n_queries=nq, run_query_len=run_len)
    kernel = KERNELS[method.name]
    fused = kernel(rows, w, params) if model is None else kernel(rows, w, params, model)
    return upair, fused, pair_query


def _train(prep, method, params, run, query, pair, upair, pos, n):
    """The trained table of a supervised method on the queries of the qrels."""
    train_rows = np.isin(query, prep.qrels_q)
    hit = np.isin(upair[pair[train_rows]], prep.qrels_rel_key).astype(np.float64)
    r, p, ln, q = run[train_rows], pos[train_rows], n[train_rows], query[train_rows]
    n_train = prep.qrels_q.shape[0]
    mean_ap = None
    if method.name == "mapfuse":
        # AP of each (run, training query), by position; R from the qrels
        rel_q = prep.qrels_rel_key // prep.nd
        n_rel = np.bincount(rel_q, minlength=prep.nq).astype(np.float64)
        seg = r * prep.nq + q
        cum = np.cumsum(hit)
        starts = _segment_starts(seg)
        offset = np.repeat(np.concatenate(([0.0], cum))[starts],
                           np.diff(np.append(starts, seg.shape[0])))
        prec = (cum - offset) / (p + 1.0) * hit
        ap = np.divide(prec, n_rel[q], out=np.zeros_like(prec), where=n_rel[q] > 0)
        mean_ap = np.bincount(r, weights=ap, minlength=prep.m) / max(n_train, 1)
    return train(method, params, hit, r, p, ln, prep.m, n_train, mean_ap)


def _as_run(prep, upair, fused, name, pair_query=None):
    """The fused run: each query's pairs by fused score (ties by document), with the
    index that :func:`skrank.fuse` reads of it kept (its codes and positions are
    known here)."""
    q = (upair // prep.nd) if pair_query is None else pair_query
    n = q.shape[0]
    small = np.int32 if n < 2**31 and prep.nd < 2**31 else np.int64
    # pairs are sorted by (query, doc): sort each query's by fused score, ties by doc
    counts = np.bincount(q, minlength=prep.nq)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    order = (segmented_argsort_desc(fused, offsets, stable=True) if n
             else np.zeros(0, dtype=np.intp))
    doc = upair - q * prep.nd  # q is the same after the order (a permutation within queries)
    d = doc.astype(small)[order]
    del doc
    s = fused[order]
    del order
    present = np.flatnonzero(counts)
    lengths = counts[present]
    pos = np.arange(n, dtype=small)
    pos -= np.repeat(offsets[:-1][present].astype(small), lengths)
    rank = pos.astype(np.int64)
    rank += 1
    qid = np.repeat(prep.uq[present], lengths)  # q is sorted: no gather of strings
    same = s[1:] == s[:-1]  # tied fused scores within a query
    same[offsets[1:][present][:-1] - 1] = False
    run = Run(qid=qid, docno=prep.ud[d], score=s, rank=rank, tag=name)
    return keep_known_index(
        run, q_code=np.arange(present.shape[0], dtype=np.int32), q_uniques=prep.uq[present],
        q_len=lengths, d_code=d, d_uniques=prep.ud, pos=pos, tied=bool(same.any()))
