"""The data path of :func:`skrank.fuse`: runs joined into one table of codes, sorted
only as far as a method needs, fused by the kernels of :mod:`skrank._fusion`, and
written as a :class:`skrank.io.Run`."""

import numpy as np

from ._fusion import (
    KERNELS,
    Rows,
    _group_mean,
    _segment_starts,
    factorize_ids,
    normalise,
    pair_codes,
    train,
)
from ._engine.groups import _group_order
from ._engine.segments import segmented_argsort_desc
from .io import Run

_UNSET = object()


def _union_codes(arrays, grouped=False):
    """Codes of each array's values in the sorted union of all of them: each array is
    factorised on its own (``grouped``: ids of one query are contiguous in a run, read
    by their first row), then the small arrays of distinct values are merged."""
    parts = [factorize_ids(a, grouped) for a in arrays]
    uniques = [u for _, u, _ in parts if u.shape[0]]
    union = np.unique(np.concatenate(uniques)) if uniques else np.zeros(0, dtype="U1")
    # int32 codes (the union's ids number fewer than the rows of one run, as a rule)
    small = np.int32 if union.shape[0] < 2**31 else np.intp
    codes = []
    for c, u, lengths in parts:
        into = np.searchsorted(union, u).astype(small)
        codes.append(into[c] if lengths is None else np.repeat(into[c], lengths))
    return codes, union, [lengths is not None for _, _, lengths in parts]


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
        extra = [] if qrels is None else [qrels]
        qcodes, self.uq, stretches = _union_codes([r.qid for r in objs + extra], grouped=True)
        # each run's rows of a query contiguous: (run, query) segments need no sorting
        self.contiguous = all(stretches[:m])
        dcodes, self.ud, _ = _union_codes([r.docno for r in objs + extra])
        qrels_doc = dcodes[m] if qrels is not None else None
        self.nq, self.nd = nq, nd = self.uq.shape[0], self.ud.shape[0]
        # codes as int32 where they fit: the row arrays are most of fuse's memory
        self.query = _narrow(np.concatenate(qcodes[:m]) if m else np.zeros(0, dtype=np.intp))
        key = self.query.astype(np.int64)
        key *= nd
        for r in range(m):  # no concatenated copy of the document codes
            key[bounds[r]:bounds[r + 1]] += dcodes[r]
        del dcodes
        self.run = np.repeat(np.arange(m, dtype=np.int32), sizes)
        self.score = np.concatenate([r.score for r in objs])
        pair, self.pairs, twice = pair_codes(key, nq * nd, sizes)
        self.pair = _narrow(pair)
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


def _fused_scores(prep, method, norm, w, params, ties, depth):
    """``(pairs, fused score of each pair, query of each pair)``."""
    # positions in each run's ranking: for what reads ranks (not the score methods)
    ranked = method.reads == "ranks" or norm in ("rank", "borda")
    run, query, pair, score = prep.rows(depth=depth, ranked=ranked)
    nq, nd, m = prep.nq, prep.nd, prep.m
    if ranked or depth is not None:
        starts, seg_id, pos, n, tie = _ranking(run, query, score, nq)
    else:
        starts = _segment_starts(_segment_key(run, query, nq))
        pos = n = tie = None
    n_ties = int(tie[-1]) + 1 if tie is not None and tie.size else 0

    def tie_mean(values):
        some_tie = n_ties < tie.shape[0]
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
    q = (upair // prep.nd) if pair_query is None else pair_query
    # pairs are sorted by (query, doc): sort each query's by fused score, ties by doc
    counts = np.bincount(q, minlength=prep.nq)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    order = (segmented_argsort_desc(fused, offsets, stable=True) if q.shape[0]
             else np.zeros(0, dtype=np.intp))
    d = upair[order]
    d -= q * prep.nd  # q is the same after the order (a permutation within queries)
    s = fused[order]
    del order
    present = np.flatnonzero(counts)
    rank = np.arange(1, q.shape[0] + 1) - np.repeat(offsets[:-1][present], counts[present])
    qid = np.repeat(prep.uq[present], counts[present])  # q is sorted: no gather of strings
    return Run(qid=qid, docno=prep.ud[d], score=s, rank=rank, tag=name)
