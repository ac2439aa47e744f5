"""A slow, obviously correct rank fusion: one query and one document at a time, in
plain Python, written from the definitions in docs/fusion.md (and ranx 0.3.21's
source for the formulas), never from skrank's kernels.

Runs are ``{query: {doc: score}}`` dicts; a list's input order is its dict order.
"""

import math

MIN_ODD = math.log(0.001 / 0.999)
SEG_BOUNDS = [0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)]
BAYES_CUTS = [0, 5, 10, 15, 20, 30, 100, 200, 500, 1000]


def ranking(lst):
    """Documents best first; ties in input order (Python's sort is stable)."""
    return sorted(lst, key=lambda d: -lst[d])


def tie_groups(lst, ranked):
    """doc -> list of the positions (0-based) of its tie group."""
    groups = {}
    for i, d in enumerate(ranked):
        groups.setdefault(lst[d], []).append(i)
    return {d: groups[lst[d]] for d in ranked}


def contribution(lst, d, f, ties):
    """f of d's position, or the mean of f over its tie group's positions."""
    ranked = ranking(lst)
    if ties == "stable":
        return f(ranked.index(d), len(ranked))
    positions = tie_groups(lst, ranked)[d]
    return sum(f(p, len(ranked)) for p in positions) / len(positions)


def normalise(lst, norm, ties):
    if norm is None or not lst:
        return dict(lst)
    values = list(lst.values())
    n = len(values)
    lo, hi, total = min(values), max(values), sum(values)
    mean = total / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    out = {}
    for d, s in lst.items():
        if norm == "min-max":
            out[d] = (s - lo) / max(hi - lo, 1e-9)
        elif norm == "min-max-inverted":
            out[d] = (hi - s) / max(hi - lo, 1e-9)
        elif norm == "max":
            out[d] = s / max(hi, 1e-9)
        elif norm == "sum":
            out[d] = (s - lo) / max(total - lo * n, 1e-9)
        elif norm == "zmuv":
            out[d] = (s - mean) / max(std, 1e-9)
        elif norm == "rank":
            out[d] = contribution(lst, d, lambda p, n_: 1 - p / n_, ties)
        elif norm == "dbsf":
            if std == 0:
                out[d] = 0.5
            else:
                low, high = mean - 3 * std, mean + 3 * std
                out[d] = (min(max(s, low), high) - low) / (high - low)
        else:
            raise AssertionError(norm)
    return out


def borda_norm(lists, ties):
    cands = sorted({d for lst in lists for d in lst})
    out = []
    for lst in lists:
        new = {}
        for d in lst:
            new[d] = contribution(lst, d, lambda p, n_: 1 - p / len(cands), ties)
        for d in cands:
            if d not in lst:
                new[d] = 0.5 - (len(lst) - 1) / (2 * len(cands))
        out.append(new)
    return out


def _position(lst, d, ties):
    return contribution(lst, d, lambda p, n_: p, ties)


def train(method, runs, qrels, norm, ties, params):
    """ranx's training estimates, query by query."""
    m = len(runs)
    queries = sorted(qrels)
    hits = []  # hits[r][qi] = [0/1 by position]
    for run in runs:
        per_q = []
        for q in queries:
            lst = _norm_lists([run.get(q, {})], norm, ties)[0] if q in run else {}
            per_q.append([1.0 if qrels[q].get(d, 0) >= 1 else 0.0 for d in ranking(lst)])
        hits.append(per_q)
    nq = len(queries)
    model = []
    for r in range(m):
        if method == "probfuse":
            k_seg = params["n_segments"]
            probs = [0.0] * k_seg
            for h in hits[r]:
                size = math.ceil(len(h) / k_seg)
                for k in range(k_seg):
                    seg = h[k * size:(k + 1) * size]
                    if seg:
                        probs[k] += sum(seg) / len(seg)
            model.append([p / nq for p in probs])
        elif method == "segfuse":
            probs = []
            for k in range(len(SEG_BOUNDS) - 1):
                a, b = SEG_BOUNDS[k], SEG_BOUNDS[k + 1]
                probs.append(sum(sum(h[a:b]) / (b - a) for h in hits[r]) / nq)
            model.append(probs)
        elif method in ("posfuse", "slidefuse"):
            width = max((len(h) for h in hits[r]), default=0)
            probs = []
            for i in range(width):
                long_enough = [h[i] for h in hits[r] if len(h) > i]
                probs.append(sum(long_enough) / len(long_enough))
            model.append(probs)
        elif method == "bayesfuse":
            odds = []
            for k in range(len(BAYES_CUTS) - 1):
                a, b = BAYES_CUTS[k], BAYES_CUTS[k + 1]
                prec = sum(sum(h[a:b]) / (b - a) for h in hits[r]) / nq
                prec = 0.001 if prec == 0 else prec
                neg = 1 - prec
                neg = 0.001 if neg == 0 else neg
                odds += [math.log(prec / neg)] * (b - a)
            model.append(odds)
        elif method == "mapfuse":
            aps = []
            for q, h in zip(queries, hits[r]):
                n_rel = sum(1 for g in qrels[q].values() if g >= 1)
                found, ap = 0, 0.0
                for i, x in enumerate(h):
                    if x:
                        found += 1
                        ap += found / (i + 1)
                aps.append(ap / n_rel if n_rel else 0.0)
            model.append(sum(aps) / nq)
    return model


def _norm_lists(lists, norm, ties):
    if norm == "borda":
        return borda_norm(lists, ties)
    return [normalise(lst, norm, ties) for lst in lists]


def fuse(runs, method, norm=None, weights=None, ties="average", params=None, qrels=None):
    params = params or {}
    m = len(runs)
    w = list(weights) if weights is not None else [1.0] * m
    model = train(method, runs, qrels, norm, ties, params) if qrels is not None else None
    queries = sorted({q for run in runs for q in run})
    out = {}
    for q in queries:
        raw = [run.get(q, {}) for run in runs]
        lists = _norm_lists(raw, norm, ties)
        docs = sorted({d for lst in lists for d in lst})
        out[q] = {d: _fuse_doc(method, lists, d, w, ties, params, model, docs) for d in docs}
    return out


def _fuse_doc(method, lists, d, w, ties, params, model, docs):
    present = [r for r, lst in enumerate(lists) if d in lst]
    s = {r: lists[r][d] for r in present}
    c = len(present)

    def rank_sum(f, weighted=False):
        return sum((w[r] if weighted else 1.0) * contribution(lists[r], d, f, ties)
                   for r in present)

    if method in ("wsum", "dbsf"):
        return sum(w[r] * s[r] for r in present)
    if method == "sum":
        return sum(s.values())
    if method == "mnz":
        return sum(s.values()) * c
    if method == "anz":
        return sum(s.values()) / c
    if method == "gmnz":
        return sum(s.values()) * c ** params.get("gamma", 0.5)
    if method == "max":
        return max(s.values())
    if method == "min":
        return min(s.values())
    if method == "med":
        v = sorted(s.values())
        return (v[(c - 1) // 2] + v[c // 2]) / 2
    if method == "mixed":
        return sum(w[r] * s[r] for r in present) * math.sqrt(c)
    if method == "wmnz":
        return sum(s.values()) * sum(w[r] for r in present)
    if method == "rrf":
        k = params.get("k", 60)
        return rank_sum(lambda p, n: 1 / (k + p + 1), weighted=True)
    if method in ("isr", "log_isr", "logn_isr"):
        total = rank_sum(lambda p, n: 1 / (p + 1) ** 2)
        factor = {"isr": c, "log_isr": math.log(c),
                  "logn_isr": math.log(c + params.get("sigma", 0.01))}[method]
        return total * factor
    if method == "rbc":
        phi = params.get("phi", 0.8)
        return rank_sum(lambda p, n: (1 - phi) * phi ** p)
    if method in ("bordafuse", "w_bordafuse"):
        n_cand = len(docs)
        total = 0.0
        for r, lst in enumerate(lists):
            wr = w[r] if method == "w_bordafuse" else 1.0
            if d in lst:
                total += wr * contribution(lst, d, lambda p, n: n_cand - p, ties)
            else:
                total += wr * (n_cand - len(lst) + 1) / 2
        return total
    if method in ("condorcet", "w_condorcet"):
        ww = w if method == "w_condorcet" else [1.0] * len(lists)
        score = 1.0
        pos = [(_position(lst, d, ties) if d in lst else math.inf) for lst in lists]
        for e in docs:
            if e == d:
                continue
            pe = [(_position(lst, e, ties) if e in lst else math.inf) for lst in lists]
            for_d = sum(ww[r] for r in range(len(lists)) if pos[r] < pe[r])
            for_e = sum(ww[r] for r in range(len(lists)) if pe[r] < pos[r])
            score += 1.0 if for_d > for_e else 0.5 if for_d == for_e else 0.0
        return score
    if method == "probfuse":
        k_seg = params.get("n_segments", 10)

        def f(p, n, r):
            seg = p // math.ceil(n / k_seg)
            return model[r][seg] / (seg + 1)
        return sum(contribution(lists[r], d, lambda p, n: f(p, n, r), ties) for r in present)
    if method == "segfuse":
        def f(p, n, r):
            for k in range(len(SEG_BOUNDS) - 1):
                if SEG_BOUNDS[k] <= p < SEG_BOUNDS[k + 1]:
                    return model[r][k] * (lists[r][d] + 1)
            return 0.0
        return sum(contribution(lists[r], d, lambda p, n: f(p, n, r), ties) for r in present)
    if method == "posfuse":
        return sum(contribution(lists[r], d, lambda p, n: model[r][p] if p < len(model[r])
                                else 0.0, ties) for r in present)
    if method == "slidefuse":
        win = params.get("w", 5)

        def f(p, n, r):
            a, b = max(p - win, 0), min(p + win, n - 1)
            return sum(model[r][a:b + 1]) / (b - a + 1)
        return sum(contribution(lists[r], d, lambda p, n: f(p, n, r), ties) for r in present)
    if method == "bayesfuse":
        total = 0.0
        for r, lst in enumerate(lists):
            if d in lst:
                total += contribution(lst, d, lambda p, n: model[r][p] if p < len(model[r])
                                      else MIN_ODD, ties)
            else:
                total += MIN_ODD
        return total
    if method == "mapfuse":
        return sum(contribution(lists[r], d, lambda p, n: model[r] / (p + 1), ties)
                   for r in present)
    raise AssertionError(method)
