"""skrank on every input layout, against its peers and one np.sort, timed interleaved.

Real data rarely arrives grouped by query with sorted integer ids: logs come in
random order, ids are strings (pandas hands them over as an object column or a
categorical), query sizes are ragged, scores are tied.  Every case here is the
same ranking problem (nDCG@10 unless said otherwise) on the same rows, so each
ratio to its baseline is the price of the layout alone.  The peers that accept
a layout (scikit-learn on the 2-D form, XGBoost and LightGBM on grouped rows,
pytrec_eval and ranx on any ids, since they take dictionaries or a DataFrame)
run in the same rounds, evaluation only (their conversion is timed apart by
run.py's tables).  Every round runs every case once, starting at a different
case each round (rotated order), and the median of the rounds is reported.

    python benchmarks/_layouts.py [--queries 10000] [--rounds 7] [--large 100000] [--no-peers]

prints the table and its targets (run.py includes them in results.md).
``--dispatch`` also reruns the skrank cases and np.sort in a subprocess with
numpy's AVX-512 code paths disabled (``NPY_DISABLE_CPU_FEATURES``), since
that dispatch moves the np.sort yardstick.
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

import _tools as T
import _workloads as W

EVAL6 = T.EVAL6
HERE = Path(__file__).resolve().parent

G, S = "grouped int ids", "shuffled int ids"
TWO_D = "2-D array (one query per row)"
RAGGED_G, RAGGED_S = "ragged, grouped", "ragged, shuffled"
SORT = "np.sort(y_score)"
LARGE_G, LARGE_S, LARGE_SORT = "large: grouped int ids", "large: shuffled int ids", "large: np.sort(y_score)"
EVAL_TIE_FREE = "tie-free: evaluate(), 6 metrics"

# Peers (evaluation only, on their own format built from the same rows).
P_SK_IT = "peer: sklearn ndcg_score(ignore_ties=True), 2-D"
P_SK_AVG = "peer: sklearn ndcg_score (tie-averaged), 2-D"
P_XGB = "peer: XGBoost eval (2 threads)"
P_LGB = "peer: LightGBM eval_train (2 threads)"
P_XGB1 = "peer: XGBoost eval (nthread=1)"
P_LGB1 = "peer: LightGBM eval_train (num_threads=1)"
P_TREC = "peer: pytrec_eval"
P_RANX = "peer: ranx (warm)"
P_XGB_R = "ragged peer: XGBoost eval (2 threads)"
P_TREC_R = "ragged peer: pytrec_eval"
P_RANX_R = "ragged peer: ranx (warm)"
P_TREC_EVAL = "peer: pytrec_eval, evaluate()'s 5 trec_eval measures"

_ANY_IDS = (P_TREC, P_RANX)  # dictionaries / a DataFrame: any id type, any row order
# Which peers accept each layout as it is (XGBoost and LightGBM need rows grouped by
# query and numeric ids; LightGBM refuses a query over 10,000 rows; sklearn takes 2-D).
LAYOUT_PEERS = {
    G: (P_XGB, P_LGB, P_XGB1, P_LGB1) + _ANY_IDS,
    TWO_D: (P_SK_IT, P_SK_AVG, P_XGB, P_LGB, P_XGB1, P_LGB1),  # XGBoost/LightGBM: the 2-D array raveled is their input
    S: _ANY_IDS,
    "grouped <U ids": _ANY_IDS,
    "shuffled <U ids": _ANY_IDS,
    "grouped object str ids": _ANY_IDS,
    "shuffled object str ids": _ANY_IDS,
    "grouped object int ids": _ANY_IDS,
    "shuffled object int ids": _ANY_IDS,
    "shuffled pandas object column": _ANY_IDS,
    "shuffled pandas string column": _ANY_IDS,
    "shuffled pandas categorical": _ANY_IDS,
    RAGGED_G: (P_XGB_R, P_TREC_R, P_RANX_R),
    RAGGED_S: (P_TREC_R, P_RANX_R),
}
# The layouts held against one np.sort of the same number of scores.
SORT_LAYOUTS = tuple(LAYOUT_PEERS) + (LARGE_G, LARGE_S)


def _peer_cases(uni, rag, log=print, peer_keys=None):
    """(case, baseline, fn, check) for the installed peers; check = (agrees, note)."""
    specs = [(P_SK_IT, T.Sklearn(True), uni, "ndcg@10"), (P_SK_AVG, T.Sklearn(False), uni, "ndcg@10"),
             (P_XGB, T.XGBoost(), uni, "ndcg@10"), (P_LGB, T.LightGBM(), uni, "ndcg@10"),
             (P_XGB1, T.XGBoost(nthread=1), uni, "ndcg@10"), (P_LGB1, T.LightGBM(num_threads=1), uni, "ndcg@10"),
             (P_TREC, T.PytrecEval(), uni, "ndcg@10"), (P_RANX, T.RanxWarm(), uni, "ndcg@10"),
             (P_XGB_R, T.XGBoost(), rag, "ndcg@10"), (P_TREC_R, T.PytrecEval(), rag, "ndcg@10"),
             (P_RANX_R, T.RanxWarm(), rag, "ndcg@10"), (P_TREC_EVAL, T.PytrecEval(), uni, T.EVALUATE)]
    natives, out = {}, []
    for case, tool, wl, metric in specs:
        if not tool.available or tool.supports(wl, metric) is not None:
            continue
        if peer_keys is not None and tool.key not in peer_keys:
            continue
        key = (tool.key, wl.name)
        if key not in natives:
            t0 = time.perf_counter()
            natives[key] = tool.convert(wl)
            log(f"   {tool.label} converts the {wl.name} rows: {time.perf_counter() - t0:.1f} s (not timed below)")
        prepared = tool.setup(natives[key], wl, metric)
        fn, per_repeat = tool.call(prepared, wl, metric)
        if per_repeat is not None:
            raise RuntimeError(f"{case}: only warm variants (no per-repeat setup) are timed here")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fn(None)
        ref, note = tool.reference(wl, metric)
        agrees = None if ref is None else _agrees(value, ref)
        out.append((case, None, (lambda f=fn: f(None)), (agrees, note)))
    return out


def _agrees(value, reference, tol=1e-9):
    if isinstance(reference, dict):
        return all(abs(value[k] - reference[k]) <= tol * max(1.0, abs(reference[k])) for k in reference)
    return abs(float(value) - float(reference)) <= tol * max(1.0, abs(float(reference)))


def _cases(nq, nd, rg, *, peers=True, scorers=True, log=print, peer_keys=None):
    """(group label, [(case, baseline case or None, fn, check or None)]) for the 1M-row comparisons."""
    import skrank

    uni = W.uniform(nq, nd, seed=0, labels="binary", name="uniform")
    y, s, q = uni.y_true, uni.y_score, uni.qid
    Y, Sc = y.reshape(nq, nd), s.reshape(nq, nd)
    rng = np.random.default_rng(42)
    perm = rng.permutation(y.size)
    ys, ss, qs = y[perm], s[perm], q[perm]
    width = len(str(nq))
    names = np.char.add("q", np.char.zfill(q.astype(str), width))   # <U ids, sorted like q
    names_s = names[perm]
    objects, objects_s = names.astype(object), names_s.astype(object)
    ints, ints_s = q.astype(object), qs.astype(object)
    ties = W.uniform(nq, nd, seed=3, labels="graded", scores="int", name="ties")
    yt, st, qt = ties.y_true, ties.y_score, ties.qid
    rag = W.ragged(rg["total"], rg["big"], seed=2, median=rg["median"])
    rperm = rng.permutation(rag.n_rows)
    yr, sr, qr = rag.y_true[rperm], rag.y_score[rperm], rag.qid[rperm]

    def ndcg(yy, sc, ids):
        return lambda: skrank.ndcg_score(yy, sc, qid=ids, k=10)

    cases = [
        (G, None, ndcg(y, s, q)),
        (SORT, G, lambda: np.sort(s)),
        (TWO_D, G, lambda: skrank.ndcg_score(Y, Sc, k=10)),
        (S, G, ndcg(ys, ss, qs)),
        ("grouped <U ids", G, ndcg(y, s, names)),
        ("shuffled <U ids", S, ndcg(ys, ss, names_s)),
        ("grouped object str ids", G, ndcg(y, s, objects)),
        ("shuffled object str ids", S, ndcg(ys, ss, objects_s)),
        ("grouped object int ids", G, ndcg(y, s, ints)),
        ("shuffled object int ids", S, ndcg(ys, ss, ints_s)),
    ]
    try:
        import pandas as pd
        # dtype=object: pandas 3 would infer its Arrow-backed str dtype from the strings
        column = pd.Series(objects_s, dtype=object)
        cases += [("shuffled pandas object column", S, ndcg(ys, ss, column)),
                  ("shuffled pandas string column", S, ndcg(ys, ss, column.astype("string"))),
                  ("shuffled pandas categorical", S, ndcg(ys, ss, column.astype("category")))]
    except ImportError:
        pass
    cases += [
        (RAGGED_G, None, ndcg(rag.y_true, rag.y_score, rag.qid)),
        (RAGGED_S, RAGGED_G, ndcg(yr, sr, qr)),
        ("ties: nDCG@10", None, ndcg(yt, st, qt)),
        ("ties: MAP (tie-averaged)", "ties: nDCG@10", lambda: skrank.map_score(yt, st, qid=qt)),
        ("ties: MAP (ties='stable')", "ties: nDCG@10",
         lambda: skrank.map_score(yt, st, qid=qt, ties="stable")),
        ("ties: evaluate(), 6 metrics", "ties: nDCG@10",
         lambda: skrank.evaluate(yt, st, qid=qt, metrics=EVAL6)),
        (EVAL_TIE_FREE, G, lambda: skrank.evaluate(y, s, qid=q, metrics=EVAL6)),
    ]
    cases = [(c, b, f, None) for c, b, f in cases]
    if scorers:
        cases += [(c, b, f, None) for c, b, f in _scorer_cases(y, s, q)]
    if peers:
        cases += _peer_cases(uni, rag, log, peer_keys)
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


def _large_data(nq, nd):
    uni = W.uniform(nq, nd, seed=5, labels="binary", name="large")
    y, s, q = uni.y_true, uni.y_score, uni.qid
    perm = np.random.default_rng(43).permutation(y.size)
    # The same scores cut into 10 levels: about ten tied documents per group, as the 1M ties workload.
    tied = np.floor(s * (10 / (s.max() * (1 + 1e-9))))
    return (y, s, q), (y[perm], s[perm], q[perm]), tied


def _large_cases(data):
    import skrank

    (y, s, q), (ys, ss, qs), tied = data
    cases = [(LARGE_G, None, lambda: skrank.ndcg_score(y, s, qid=q, k=10)),
             (LARGE_SORT, LARGE_G, lambda: np.sort(s)),
             (LARGE_S, LARGE_G, lambda: skrank.ndcg_score(ys, ss, qid=qs, k=10)),
             ("large: MAP (tie-free), grouped", LARGE_G, lambda: skrank.map_score(y, s, qid=q)),
             ("large: evaluate(), 6 metrics, grouped", LARGE_G,
              lambda: skrank.evaluate(y, s, qid=q, metrics=EVAL6)),
             ("large: MAP (tie-averaged, tied scores), grouped", LARGE_G, lambda: skrank.map_score(y, tied, qid=q))]
    return f"{y.size:,} rows ({q[-1] + 1:,} queries x {y.size // (q[-1] + 1)})", [c + (None,) for c in cases]


def _large_memory(data, log):
    """Peak extra memory (tracemalloc traces numpy's allocations) of the 10M-row calls."""
    import skrank

    (y, s, q), (ys, ss, qs), tied = data
    input_bytes = y.nbytes + s.nbytes + q.nbytes
    calls = [("nDCG@10, grouped", lambda: skrank.ndcg_score(y, s, qid=q, k=10)),
             ("nDCG@10, shuffled", lambda: skrank.ndcg_score(ys, ss, qid=qs, k=10)),
             ("MAP (tie-free), grouped", lambda: skrank.map_score(y, s, qid=q)),
             ("evaluate(), 6 metrics, grouped", lambda: skrank.evaluate(y, s, qid=q, metrics=EVAL6)),
             ("MAP (tie-averaged, tied scores), grouped", lambda: skrank.map_score(y, tied, qid=q)),
             ("evaluate(), 6 metrics, tied scores, grouped",
              lambda: skrank.evaluate(y, tied, qid=q, metrics=EVAL6)),
             ("np.sort(y_score)", lambda: np.sort(s))]
    out = []
    for label, fn in calls:
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
        out.append({"rows": int(y.size), "case": label, "peak_extra_bytes": int(peak),
                    "input_bytes": int(input_bytes), "ratio": peak / input_bytes})
        log(f"   memory {label:34s} peak extra {peak / 2**20:8.1f} MiB = {peak / input_bytes:5.2f} x input")
    return out


def _interleave(cases, rounds):
    """Median time per case: one warm-up call each, then ``rounds`` rounds that run every case
    once, round r starting at case r (rotated), so no case always follows the same neighbour."""
    names = [c[0] for c in cases]
    times = {name: [] for name in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:  # warm-up
            case[2]()
        for r in range(rounds):
            shift = r % len(cases)
            for case in cases[shift:] + cases[:shift]:
                t0 = time.perf_counter()
                case[2]()
                times[case[0]].append(time.perf_counter() - t0)
    return {name: float(np.median(v)) for name, v in times.items()}


def disabled_avx512():
    """The AVX-512 features numpy dispatches to on this CPU (for NPY_DISABLE_CPU_FEATURES), or []."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:
        return []
    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f) and (f == "X86_V4" or "AVX512" in f)]


def run_layouts(*, queries, docs, ragged, rounds, large=None, log=print, small=True,
                peers=True, scorers=True, dispatch=False, memory=True, large_rounds=None, peer_keys=None):
    """Time every layout (and its peers); returns {"rows", "memory", "dispatch"}.

    peer_keys: the tool keys (_tools) of the peers to time (None: every installed one).
    rows: {group, case, baseline, median_s, ratio, vs_sort, check}; dispatch: the same rows from
    a subprocess with numpy's AVX-512 paths disabled (skrank cases and np.sort only), or None.
    """
    out, mem = [], []
    specs = [("small", None)] if small else []
    if large:
        specs.append(("large", large))
    for kind, shape in specs:
        data = None
        if kind == "small":
            label, cases = _cases(queries, docs, ragged, peers=peers, scorers=scorers, log=log,
                                  peer_keys=peer_keys)
        else:
            data = _large_data(*shape)
            label, cases = _large_cases(data)
        n_rounds = rounds if kind == "small" else (large_rounds or rounds)
        log(f"== layouts: {label}, {len(cases)} calls interleaved (rotated), {n_rounds} rounds")
        medians = _interleave(cases, n_rounds)
        sort = next((medians[c[0]] for c in cases if "np.sort" in c[0]), None)
        for case, base, _, check in cases:
            t = medians[case]
            row = {"group": label, "case": case, "baseline": base, "median_s": t,
                   "ratio": None if base is None else t / medians[base],
                   "vs_sort": None if sort is None or "np.sort" in case or case.startswith(("peer", "ragged peer"))
                   else t / sort,
                   "check": None if check is None else {"agrees": check[0], "note": check[1]}}
            out.append(row)
            ratio = "" if row["ratio"] is None else f"{row['ratio']:6.2f}x {base}"
            flag = "" if check is None else {True: "  value ok", False: "  VALUE DISAGREES", None: ""}[check[0]]
            log(f"   {case:52s} {t * 1e3:9.1f} ms  {ratio}{flag}")
        del cases
        if data is not None and memory:
            mem += _large_memory(data, log)
        del data
        gc.collect()
    features = disabled_avx512()
    other = None
    if dispatch and features:
        other = _dispatch_subprocess(queries, docs, ragged, rounds, large, small, features, log, large_rounds)
    return {"rows": out, "memory": mem, "dispatch": other}


def _dispatch_subprocess(queries, docs, ragged, rounds, large, small, features, log, large_rounds=None):
    import tempfile

    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(features))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rows.json")
        argv = [sys.executable, str(HERE / "_layouts.py"), "--queries", str(queries), "--docs", str(docs),
                "--rounds", str(rounds), "--ragged-total", str(ragged["total"]),
                "--ragged-big", str(ragged["big"]), "--ragged-median", str(ragged["median"]),
                "--no-peers", "--no-scorers", "--no-memory", "--json", path]
        if large:
            argv += ["--large", str(large[0])]
            if large_rounds:
                argv += ["--large-rounds", str(large_rounds)]
            if not small:
                argv.append("--large-only")
        log(f"== layouts again with NPY_DISABLE_CPU_FEATURES='{env['NPY_DISABLE_CPU_FEATURES']}' (subprocess)")
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            log(f"   failed: {proc.stderr.strip()[-500:]}")
            return {"features": features, "error": proc.stderr.strip()[-500:], "rows": []}
        rows = json.loads(Path(path).read_text())["rows"]
    for r in rows:
        if r["vs_sort"] is not None and r["case"] in SORT_LAYOUTS:
            log(f"   {r['case']:52s} {r['median_s'] * 1e3:9.1f} ms  {r['vs_sort']:6.2f}x np.sort")
        elif "np.sort" in r["case"]:
            log(f"   {r['case']:52s} {r['median_s'] * 1e3:9.1f} ms")
    return {"features": features, "rows": rows}


# (case, goal on the ratio to its baseline, what the goal says)
LAYOUT_GOALS = (
    (S, 1.5, "rows in random order (int ids) within 1.5x of grouped"),
    ("grouped <U ids", 1.5, "<U string ids within 1.5x of int ids (grouped)"),
    ("shuffled <U ids", 1.5, "<U string ids within 1.5x of int ids (shuffled)"),
    ("grouped object str ids", 1.5, "object-dtype string ids within 1.5x of int ids (grouped)"),
    ("shuffled object str ids", 1.5, "object-dtype string ids within 1.5x of int ids (shuffled)"),
    ("grouped object int ids", 1.5, "object-dtype int ids within 1.5x of int ids (grouped)"),
    ("shuffled object int ids", 1.5, "object-dtype int ids within 1.5x of int ids (shuffled)"),
    ("shuffled pandas object column", 1.5, "a pandas object column of ids within 1.5x of int ids"),
    ("shuffled pandas string column", 1.5, "a pandas string column of ids within 1.5x of int ids"),
    ("shuffled pandas categorical", 1.5, "a pandas categorical column within 1.5x of int ids"),
    (RAGGED_S, 1.5, "ragged rows in random order within 1.5x of ragged grouped"),
    ("ties: MAP (tie-averaged)", 1.5, "tie-averaged MAP within 1.5x of nDCG@10 (tied scores)"),
    ("ties: evaluate(), 6 metrics", 2.0, "evaluate() of 6 metrics within 2x of nDCG@10 (tied scores)"),
    (EVAL_TIE_FREE, 2.0, "evaluate() of 6 metrics within 2x of nDCG@10 (tie-free)"),
    (SCORER_MULTI, 1.2, "the multi-metric scorer of 3 metrics within 1.2x of one metric's scorer"),
    (SCORER_SK_DICT, 1.2, "scikit-learn's dict scoring= of 3 skrank scorers within 1.2x of one "
                          "metric's scorer (issue 11: they check and rank each fold once)"),
)
# Ratios between two non-baseline cases: (case, reference case, goal, what the goal says).
PAIR_GOALS = (
    (SCORER_MULTI, SCORER_MAP, 1.2,
     "the multi-metric scorer of 3 metrics within 1.2x of its costliest metric's scorer (MAP)"),
    (SCORER_MULTI, SCORER_EVAL3, 1.2,
     "the multi-metric scorer of 3 metrics within 1.2x of evaluate() of the same 3 metrics"),
)


def _target(name, measured, goal, met, detail, section):
    return {"target": name, "measured": measured, "goal": goal, "met": bool(met), "detail": detail,
            "section": section}


def layout_targets(result):
    """Targets of the layouts: ratios to their baselines, against the peers, against np.sort
    (under both CPU dispatch settings), and peak memory at the largest size."""
    rows = result["rows"]
    by_case = {r["case"]: r for r in rows}
    out = []
    ms = lambda r: f"{r['median_s'] * 1e3:.1f} ms"  # noqa: E731
    # 1. Every layout against the fastest peer that accepts it.
    for layout, peers in LAYOUT_PEERS.items():
        r = by_case.get(layout)
        timed = [by_case[p] for p in peers if p in by_case and by_case[p]["check"]
                 and by_case[p]["check"]["agrees"] is not False]
        if r is None or not timed:
            continue
        best = min(timed, key=lambda p: p["median_s"])
        ratio = r["median_s"] / best["median_s"]
        out.append(_target(f"{layout}: at least as fast as the fastest peer taking it "
                           f"({len(timed)} timed)", ratio, "<= 1x", ratio <= 1,
                           f"{ms(r)} vs {best['case'].split(': ', 1)[1]} {ms(best)}", "peers"))
    ev, trec = by_case.get(EVAL_TIE_FREE), by_case.get(P_TREC_EVAL)
    if ev and trec and trec["check"]["agrees"] is not False:
        speedup = trec["median_s"] / ev["median_s"]
        out.append(_target("evaluate() of 6 metrics >= 10x faster than pytrec_eval computing 5 of them "
                           "(evaluation only)", speedup, ">= 10x (speed-up)", speedup >= 10,
                           f"pytrec_eval {ms(trec)} vs evaluate {ms(ev)}", "peers"))
    # 2. Layout costs against their baselines.
    for case, goal, what in LAYOUT_GOALS:
        r = by_case.get(case)
        if r is None:
            continue
        out.append(_target(what, r["ratio"], f"<= {goal}x", r["ratio"] <= goal,
                           f"{ms(r)} vs {r['baseline']} {ms(by_case[r['baseline']])}", "layouts"))
    for case, reference, goal, what in PAIR_GOALS:
        if case not in by_case or reference not in by_case:
            continue
        ratio = by_case[case]["median_s"] / by_case[reference]["median_s"]
        out.append(_target(what, ratio, f"<= {goal}x", ratio <= goal,
                           f"{ms(by_case[case])} vs {reference} {ms(by_case[reference])}", "layouts"))
    # 3. Every layout within 3x of one np.sort, under both CPU dispatch settings.
    settings = [("default dispatch", rows)]
    other = result.get("dispatch")
    if other and other.get("rows"):
        settings.append((f"NPY_DISABLE_CPU_FEATURES='{' '.join(other['features'])}'", other["rows"]))
    for setting, rs in settings:
        for r in rs:
            if r["vs_sort"] is None or r["case"] not in SORT_LAYOUTS:
                continue
            sort = next(x for x in rs if x["group"] == r["group"] and "np.sort" in x["case"])
            out.append(_target(f"{r['case']} within 3x of one np.sort of as many scores ({setting})",
                               r["vs_sort"], "<= 3x", r["vs_sort"] <= 3,
                               f"{ms(r)} vs np.sort {ms(sort)}", "np.sort"))
    # 4. Memory at the largest size.
    for m in result.get("memory", ()):
        if "np.sort" in m["case"]:
            continue
        out.append(_target(f"peak extra memory < 10x the inputs: {m['case']}, {m['rows']:,} rows (tracemalloc)",
                           m["ratio"], "< 10x", m["ratio"] < 10,
                           f"{m['peak_extra_bytes'] / 2**20:.0f} MiB over {m['input_bytes'] / 2**20:.0f} MiB",
                           "memory"))
    return out


def disagreements(result):
    return [r for r in result["rows"] if r["check"] and r["check"]["agrees"] is False]


def markdown(result):
    rows = result["rows"]
    L = ["## Input layouts and peers (interleaved)\n",
         "The same ranking problem on every layout real data arrives in (nDCG@10 unless said "
         "otherwise), with the peers that accept each layout, in one run: every round calls every "
         "case once, starting at a different case each round; medians of the rounds. Peers are "
         "timed on evaluation only, on their own format built beforehand (pytrec_eval and ranx "
         "take dictionaries or a DataFrame, so any ids in any order; XGBoost and LightGBM need "
         "rows grouped by query; scikit-learn the 2-D form). *ratio* is the time over the case "
         "named as its baseline; */ np.sort* the time over one `np.sort` of as many scores.\n"]
    other = {r["case"]: r for r in (result.get("dispatch") or {}).get("rows", [])}
    feats = " ".join((result.get("dispatch") or {}).get("features", []))
    group = None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            L += ["", f"**{group}**\n",
                  "| case | time | ratio | baseline | / np.sort | / np.sort, AVX-512 off | fastest peer taking it | check |",
                  "|---|---|---|---|---|---|---|---|"]
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        vs = "" if r["vs_sort"] is None else f"{r['vs_sort']:.2f}x"
        o = other.get(r["case"])
        if o and o.get("vs_sort") is not None:
            vs2 = f"{o['vs_sort']:.2f}x"
        elif o and "np.sort" in r["case"]:
            vs2 = f"{o['median_s'] * 1e3:.1f} ms"
        else:
            vs2 = ""
        peer = ""
        by_case = {x["case"]: x for x in rows}
        timed = [by_case[p] for p in LAYOUT_PEERS.get(r["case"], ()) if p in by_case]
        if timed:
            best = min(timed, key=lambda p: p["median_s"])
            peer = f"{best['case'].split(': ', 1)[1]} {best['median_s'] * 1e3:.1f} ms ({r['median_s'] / best['median_s']:.2f}x)"
        check = "" if r["check"] is None else {True: "agrees", False: "**DISAGREES**",
                                               None: f"not compared: {r['check']['note']}"}[r["check"]["agrees"]]
        L.append(f"| {r['case']} | {r['median_s'] * 1e3:.1f} ms | {ratio} | {r['baseline'] or ''} | {vs} | "
                 f"{vs2} | {peer} | {check} |")
    L.append("")
    if feats:
        L.append(f"*AVX-512 off*: the skrank cases and np.sort rerun in a subprocess with "
                 f"`NPY_DISABLE_CPU_FEATURES=\"{feats}\"` (the AVX-512 targets numpy dispatches to on "
                 f"this CPU); that column holds the ratio to that run's np.sort (np.sort's own row: its time).\n")
    if result.get("memory"):
        L.append("Peak extra memory at the largest size (tracemalloc, which traces numpy's allocations):\n")
        L.append("| call | rows | peak extra | input arrays | ratio |\n|---|---|---|---|---|")
        for m in result["memory"]:
            L.append(f"| {m['case']} | {m['rows']:,} | {m['peak_extra_bytes'] / 2**20:.0f} MiB | "
                     f"{m['input_bytes'] / 2**20:.0f} MiB | {m['ratio']:.2f}x |")
        L.append("")
    return L


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ragged-total", type=int, default=None, help="default: queries x docs")
    parser.add_argument("--ragged-big", type=int, default=None, help="default: a tenth of the ragged rows")
    parser.add_argument("--ragged-median", type=int, default=40)
    parser.add_argument("--large", type=int, default=0, help="also time this many queries x docs")
    parser.add_argument("--large-only", action="store_true", help="time the --large case only")
    parser.add_argument("--large-rounds", type=int, default=None, help="rounds of the --large case (default --rounds)")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--no-scorers", action="store_true")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--dispatch", action="store_true",
                        help="also rerun with numpy's AVX-512 paths disabled (subprocess)")
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args()
    total = args.ragged_total or args.queries * args.docs
    result = run_layouts(queries=args.queries, docs=args.docs, rounds=args.rounds,
                         ragged={"total": total, "big": args.ragged_big or max(total // 10, 1),
                                 "median": args.ragged_median},
                         large=(args.large, args.docs) if args.large else None,
                         small=not args.large_only, peers=not args.no_peers, scorers=not args.no_scorers,
                         memory=not args.no_memory, dispatch=args.dispatch, large_rounds=args.large_rounds)
    if args.json:
        Path(args.json).write_text(json.dumps(result, default=float))
        return
    print("\n".join(markdown(result)))
    for t in layout_targets(result):
        print(f"{'PASS' if t['met'] else 'MISS'} {t['measured']:6.2f}x (goal {t['goal']}): {t['target']}")


if __name__ == "__main__":
    main()
