"""skrank on every input layout, timed interleaved against the grouped integer-id case.

Real data rarely arrives grouped by query with sorted integer ids: logs come in
random order, ids are strings (pandas hands them over as an object column or a
categorical), query sizes are ragged, scores are tied.  Every case here is the
same ranking problem (nDCG@10 unless said otherwise) on the same rows, so each
ratio to its baseline is the price of the layout alone.  Calls are interleaved
(A, B, C, A, B, C, ...) and the median of the rounds is reported.

    python benchmarks/_layouts.py [--queries 10000] [--rounds 7] [--large]

prints the table (run.py includes it in results.md, with targets).
"""

import argparse
import time
import warnings

import numpy as np

import _tools as T
import _workloads as W

EVAL6 = T.EVAL6


def _cases(nq, nd, rg):
    """(group label, [(case, baseline case or None, fn)]) for the 1M-row comparisons."""
    import skrank

    uni = W.uniform(nq, nd, seed=0, labels="binary", name="uniform")
    y, s, q = uni.y_true, uni.y_score, uni.qid
    rng = np.random.default_rng(42)
    perm = rng.permutation(y.size)
    ys, ss, qs = y[perm], s[perm], q[perm]
    width = len(str(nq))
    names = np.char.add("q", np.char.zfill(q.astype(str), width))   # <U ids, sorted like q
    names_s = names[perm]
    objects, objects_s = names.astype(object), names_s.astype(object)
    ints_s = qs.astype(object)
    ties = W.uniform(nq, nd, seed=3, labels="graded", scores="int", name="ties")
    yt, st, qt = ties.y_true, ties.y_score, ties.qid
    rag = W.ragged(rg["total"], rg["big"], seed=2, median=rg["median"])
    rperm = rng.permutation(rag.n_rows)
    yr, sr, qr = rag.y_true[rperm], rag.y_score[rperm], rag.qid[rperm]

    def ndcg(yy, sc, ids):
        return lambda: skrank.ndcg_score(yy, sc, qid=ids, k=10)

    G, S = "grouped int ids", "shuffled int ids"
    cases = [
        (G, None, ndcg(y, s, q)),
        ("np.sort(y_score)", G, lambda: np.sort(s)),
        (S, G, ndcg(ys, ss, qs)),
        ("grouped <U ids", G, ndcg(y, s, names)),
        ("shuffled <U ids", S, ndcg(ys, ss, names_s)),
        ("grouped object str ids", G, ndcg(y, s, objects)),
        ("shuffled object str ids", S, ndcg(ys, ss, objects_s)),
        ("shuffled object int ids", S, ndcg(ys, ss, ints_s)),
    ]
    try:
        import pandas as pd
        column = pd.Series(objects_s)
        cases += [("shuffled pandas object column", S, ndcg(ys, ss, column)),
                  ("shuffled pandas string column", S, ndcg(ys, ss, column.astype("string"))),
                  ("shuffled pandas categorical", S, ndcg(ys, ss, column.astype("category")))]
    except ImportError:
        pass
    cases += [
        ("ragged, grouped", None, ndcg(rag.y_true, rag.y_score, rag.qid)),
        ("ragged, shuffled", "ragged, grouped", ndcg(yr, sr, qr)),
        ("ties: nDCG@10", None, ndcg(yt, st, qt)),
        ("ties: MAP (tie-averaged)", "ties: nDCG@10", lambda: skrank.map_score(yt, st, qid=qt)),
        ("ties: MAP (ties='stable')", "ties: nDCG@10",
         lambda: skrank.map_score(yt, st, qid=qt, ties="stable")),
        ("ties: evaluate(), 6 metrics", "ties: nDCG@10",
         lambda: skrank.evaluate(yt, st, qid=qt, metrics=EVAL6)),
        ("tie-free: evaluate(), 6 metrics", G, lambda: skrank.evaluate(y, s, qid=q, metrics=EVAL6)),
    ]
    cases += _scorer_cases(y, s, q)
    return f"{uni.n_rows:,} rows ({nq:,} queries x {nd}; ragged: {rag.n_rows:,} rows)", cases


SCORER_ONE = "scorer: get_scorer('ndcg@10')"
SCORER_MULTI = "scorer: make_ranking_scorer(['ndcg@10', 'map', 'mrr'])"
SCORER_SK_DICT = "scorer: sklearn dict of 3 skrank scorers"
SCORER_EVAL3 = "scorer: evaluate() of the same 3 metrics"
SCORER_MAP = "scorer: get_scorer('map')"


def _scorer_cases(y, s, q):
    """One metric's scorer against the multi-metric scorer of three (and scikit-learn's dict)."""
    import sklearn
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.metrics import check_scoring

    import skrank

    class FixedScores(RegressorMixin, BaseEstimator):
        """A fitted estimator whose predict returns fixed scores: only the scorer is timed."""

        def __init__(self, scores=None):
            self.scores = scores

        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def predict(self, X):
            return self.scores

    X = np.zeros((s.size, 1))
    est = FixedScores(s).fit(X, y)
    names = ["ndcg@10", "map", "mrr"]
    one, multi = skrank.get_scorer("ndcg@10"), skrank.make_ranking_scorer(names)
    sk_dict = check_scoring(est, scoring={n: skrank.get_scorer(n) for n in names})

    def routed(scorer):
        def call():
            with sklearn.config_context(enable_metadata_routing=True):
                return scorer(est, X, y, qid=q)
        return call

    return [(SCORER_ONE, None, routed(one)),
            (SCORER_MAP, SCORER_ONE, routed(skrank.get_scorer("map"))),
            (SCORER_MULTI, SCORER_ONE, routed(multi)),
            (SCORER_SK_DICT, SCORER_ONE, routed(sk_dict)),
            (SCORER_EVAL3, SCORER_ONE, lambda: skrank.evaluate(y, s, qid=q, metrics=names))]


def _large_cases(nq, nd):
    import skrank

    uni = W.uniform(nq, nd, seed=5, labels="binary", name="large")
    y, s, q = uni.y_true, uni.y_score, uni.qid
    perm = np.random.default_rng(43).permutation(y.size)
    ys, ss, qs = y[perm], s[perm], q[perm]
    del perm
    G = "large: grouped int ids"
    cases = [(G, None, lambda: skrank.ndcg_score(y, s, qid=q, k=10)),
             ("large: np.sort(y_score)", G, lambda: np.sort(s)),
             ("large: shuffled int ids", G, lambda: skrank.ndcg_score(ys, ss, qid=qs, k=10))]
    return f"{uni.n_rows:,} rows ({nq:,} queries x {nd})", cases


def _interleave(cases, rounds):
    times = {name: [] for name, _, _ in cases}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, _, fn in cases:  # warm-up
            fn()
        for _ in range(rounds):
            for name, _, fn in cases:
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(v)) for name, v in times.items()}


def run_layouts(*, queries, docs, ragged, rounds, large=None, log=print, small=True):
    """Time every layout; returns a list of {group, case, baseline, median_s, ratio, vs_sort}."""
    groups = [_cases(queries, docs, ragged)] if small else []
    if large:
        groups.append(_large_cases(*large))
    out = []
    for label, cases in groups:
        log(f"== layouts: {label}, {len(cases)} calls interleaved, {rounds} rounds")
        medians = _interleave(cases, rounds)
        sort = next((medians[c] for c, _, _ in cases if "np.sort" in c), None)
        for case, base, _ in cases:
            t = medians[case]
            row = {"group": label, "case": case, "baseline": base, "median_s": t,
                   "ratio": None if base is None else t / medians[base],
                   "vs_sort": None if sort is None or "np.sort" in case else t / sort}
            out.append(row)
            ratio = "" if row["ratio"] is None else f"{row['ratio']:6.2f}x {base}"
            log(f"   {case:34s} {t * 1e3:9.1f} ms  {ratio}")
        del cases
    return out


# (case, goal on the ratio to its baseline, what the goal says)
LAYOUT_GOALS = (
    ("shuffled int ids", 1.5, "rows in random order (int ids) within 1.5x of grouped"),
    ("grouped <U ids", 1.5, "<U string ids within 1.5x of int ids (grouped)"),
    ("shuffled <U ids", 1.5, "<U string ids within 1.5x of int ids (shuffled)"),
    ("grouped object str ids", 1.5, "object-dtype string ids within 1.5x of int ids (grouped)"),
    ("shuffled object str ids", 1.5, "object-dtype string ids within 1.5x of int ids (shuffled)"),
    ("shuffled object int ids", 1.5, "object-dtype int ids within 1.5x of int ids (shuffled)"),
    ("shuffled pandas object column", 1.5, "a pandas object column of ids within 1.5x of int ids"),
    ("shuffled pandas string column", 1.5, "a pandas string column of ids within 1.5x of int ids"),
    ("shuffled pandas categorical", 1.5, "a pandas categorical column within 1.5x of int ids"),
    ("ragged, shuffled", 1.5, "ragged rows in random order within 1.5x of ragged grouped"),
    ("ties: MAP (tie-averaged)", 1.5, "tie-averaged MAP within 1.5x of nDCG@10 (tied scores)"),
    ("ties: evaluate(), 6 metrics", 2.0, "evaluate() of 6 metrics within 2x of nDCG@10 (tied scores)"),
    ("tie-free: evaluate(), 6 metrics", 2.0, "evaluate() of 6 metrics within 2x of nDCG@10 (tie-free)"),
    (SCORER_MULTI, 1.2, "the multi-metric scorer of 3 metrics within 1.2x of one metric's scorer"),
    (SCORER_SK_DICT, 1.2, "scikit-learn's dict scoring= of 3 skrank scorers within 1.2x of one "
                          "metric's scorer (they check and rank each fold once)"),
)
# Ratios between two non-baseline cases: (case, reference case, goal, what the goal says).
PAIR_GOALS = (
    (SCORER_MULTI, SCORER_MAP, 1.2,
     "the multi-metric scorer of 3 metrics within 1.2x of its costliest metric's scorer (MAP)"),
    (SCORER_MULTI, SCORER_EVAL3, 1.2,
     "the multi-metric scorer of 3 metrics within 1.2x of evaluate() of the same 3 metrics"),
)


def layout_targets(rows):
    """Targets of the layouts: ratios to their baselines, and every layout against np.sort."""
    by_case = {r["case"]: r for r in rows}
    out = []
    for case, goal, what in LAYOUT_GOALS:
        r = by_case.get(case)
        if r is None:
            continue
        out.append({"target": what, "measured": r["ratio"], "goal": f"<= {goal}x",
                    "met": r["ratio"] <= goal,
                    "detail": f"{r['median_s'] * 1e3:.1f} ms vs {r['baseline']}"})
    for case, reference, goal, what in PAIR_GOALS:
        if goal is None or case not in by_case or reference not in by_case:
            continue
        ratio = by_case[case]["median_s"] / by_case[reference]["median_s"]
        out.append({"target": what, "measured": ratio, "goal": f"<= {goal}x", "met": ratio <= goal,
                    "detail": f"{by_case[case]['median_s'] * 1e3:.1f} ms vs {reference}"})
    for r in rows:
        if r["vs_sort"] is None or not r["case"].startswith(("shuffled", "grouped", "ragged", "large")):
            continue
        out.append({"target": f"{r['case']} within 3x of one np.sort of the scores ({r['group']})",
                    "measured": r["vs_sort"], "goal": "<= 3x", "met": r["vs_sort"] <= 3,
                    "detail": f"{r['median_s'] * 1e3:.1f} ms"})
    return out


def markdown(rows):
    L = ["## Input layouts (interleaved)\n",
         "The same ranking problem on every layout real data arrives in (nDCG@10 unless said "
         "otherwise); calls interleaved, median of the rounds. *ratio* is the time over the "
         "case named as its baseline; */ np.sort* is the time over one `np.sort` of the same "
         "group's scores (numpy's AVX-512 dispatch changes that yardstick: compare with "
         "`NPY_DISABLE_CPU_FEATURES`).\n"]
    group = None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            L += ["", f"**{group}**\n", "| case | time | ratio | baseline | / np.sort |",
                  "|---|---|---|---|---|"]
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        vs = "" if r["vs_sort"] is None else f"{r['vs_sort']:.2f}x"
        L.append(f"| {r['case']} | {r['median_s'] * 1e3:.1f} ms | {ratio} | {r['baseline'] or ''} | {vs} |")
    L.append("")
    return L


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--large", type=int, default=0, help="also time this many queries x docs")
    parser.add_argument("--large-only", action="store_true", help="time the --large case only")
    args = parser.parse_args()
    total = args.queries * args.docs
    rows = run_layouts(queries=args.queries, docs=args.docs, rounds=args.rounds,
                       ragged={"total": total, "big": max(total // 10, 1), "median": 40},
                       large=(args.large, args.docs) if args.large else None,
                       small=not args.large_only)
    print("\n".join(markdown(rows)))
    for t in layout_targets(rows):
        print(f"{'MET   ' if t['met'] else 'MISSED'} {t['measured']:6.2f}x (goal {t['goal']}): {t['target']}")


if __name__ == "__main__":
    main()
