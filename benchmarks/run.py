"""skrank benchmark suite: skrank against its peers, on identical inputs, in one run.

    python benchmarks/run.py            # full run -> benchmarks/results/{results.md,results.json,scaling.png}
    python benchmarks/run.py --smoke    # tiny sizes, every installed tool, value checks (< 60 s)
    python benchmarks/run.py --quick    # the interleaved layouts-and-peers section at 1M rows: every
                                        # target but the per-tool tables' (a few minutes)

Every tool gets the same flat arrays (see _workloads.py) and converts them to
its own format; conversion and evaluation are timed separately with
time.perf_counter (median of interleaved rounds after a warm-up call: each
round calls every tool and metric once, in rotated order).  A tool's time
counts only when its value agrees with skrank's under the tool's own
conventions (see _tools.py); the run exits with status 1 when a value
disagrees or a tool fails.  Peers that are not installed are reported and
skipped.  There are no timing assertions: the targets are reported, not enforced.
"""

import argparse
import gc
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _layouts as LAYOUTS  # noqa: E402
import _tools as T  # noqa: E402
import _workloads as W  # noqa: E402

EVALUATE = T.EVALUATE

FULL = {
    "uniform": (10_000, 100),
    "graded": (10_000, 100),
    "ties": (10_000, 100),
    "ragged": {"total": 1_000_000, "big": 100_000, "median": 40},
    "scaling_docs": 100,
    "scaling_queries": (100, 1_000, 10_000, 100_000),
    "fold": (10, 100),
    "fold_calls": 2000,
    "paired_rounds": 7,
    "rounds": 7, "budget": 2.0, "min_rep": 3, "slow": 1.0,
    # ranx's cold starts (numba compiling, 0.5-2 min on this machine) only with --ranx-cold.
    "cold": ("skrank",),
    "layouts_large": (100_000, 100),  # 10,000,000 rows, grouped and shuffled, against np.sort
    "layouts_large_rounds": 3,
}
SMOKE = {
    "uniform": (40, 25),
    "graded": (40, 25),
    "ties": (40, 25),
    "ragged": {"total": 3_000, "big": 1_000, "median": 8},
    "scaling_docs": 25,
    "scaling_queries": (10, 40, 160),
    "fold": (10, 100),
    "fold_calls": 30,
    "paired_rounds": 2,
    "rounds": 2, "budget": 0.05, "min_rep": 2, "slow": 1.0,
    # ranx's cold start takes 20-90 s (numba): run it with the full suite only.
    "cold": ("skrank",),
    "layouts_large": None,
}

# --quick: the interleaved layouts-and-peers section alone, at the full 1M-row size (no per-tool
# tables, no 10M rows, no cold starts, no second CPU-dispatch run): the targets' ratios in minutes.
QUICK = {**FULL, "paired_rounds": 5, "layouts_large": None}

METRICS = {
    "uniform": ("ndcg@10", "ndcg_exp@10", "dcg@10", "map", "mrr", "p@10", EVALUATE),
    "graded": ("ndcg@10", "ndcg_exp@10", "map", EVALUATE),
    "ragged": ("ndcg@10", "ndcg_exp@10", "map", "mrr", "p@10", EVALUATE),
    "ties": ("ndcg@10", "ndcg_exp@10", "dcg@10", "map"),
}
METRIC_LABELS = {
    "ndcg@10": "nDCG@10 (linear gain)", "ndcg_exp@10": "nDCG@10 (exponential gain)",
    "dcg@10": "DCG@10", "map": "MAP", "mrr": "MRR", "p@10": "P@10",
    EVALUATE: "evaluate(): 6 metrics at once",
}
TOLERANCE = {"torchmetrics": 1e-6}  # float32 accumulation; everything else 1e-9


_T0 = time.perf_counter()


def log(msg):
    print(f"[{time.perf_counter() - _T0:6.1f}s] {msg}", flush=True)


# ---------------------------------------------------------------------------
# Timing.

def time_conversion(fn, cfg):
    """Time a conversion; repeated (median) only when it is quick."""
    t0 = time.perf_counter()
    out = fn()
    times = [time.perf_counter() - t0]
    while times[0] < 0.3 and len(times) < cfg["min_rep"]:
        del out
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, float(np.median(times))


def peak_extra_bytes(fn):
    """Peak traced allocation during ``fn()`` above what was allocated before (numpy is traced)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - before


# ---------------------------------------------------------------------------
# Value agreement.

def agreement(value, reference, tol):
    """(agrees, largest absolute difference) of a float or a dict of floats."""
    if isinstance(reference, dict):
        if not isinstance(value, dict):
            return False, math.inf
        diffs = [abs(value[k] - reference[k]) / max(1.0, abs(reference[k])) for k in reference]
        worst = max(diffs)
    else:
        worst = abs(float(value) - float(reference)) / max(1.0, abs(float(reference)))
    return bool(worst <= tol), float(worst)


# ---------------------------------------------------------------------------
# One workload: every tool, every metric.

def run_workload(wl, tools, metrics, cfg, records, *, warm=True, kept=None, alias=None):
    """Time every tool on every metric of ``wl``, interleaved; keep the calls named in PAIRED in ``kept``.

    Each tool converts the arrays once (timed), then every (tool, metric) call is set up (timed
    with the conversion) and called once (warm-up, value check).  The timed calls then run in
    rounds: every round calls each of them once, round r starting at call r (rotated order), so
    a change of machine load during the workload moves every tool alike.  A call slower than
    ``budget`` seconds takes part in the first ``min_rep`` rounds only (a single one above
    ``slow`` seconds); medians over each call's rounds are reported.
    """
    log(f"== {wl.name}: {wl.summary()}")
    slots = []  # (record, fn, per_repeat, repeats)
    for tool in tools:
        base = {"workload": wl.name, "rows": wl.n_rows, "queries": wl.n_queries, "tool": tool.key}
        wanted = [m for m in metrics if tool.available and tool.supports(wl, m) is None]
        for m in metrics:
            if not tool.available:
                records.append({**base, "metric": m, "status": tool.missing})
            elif m not in wanted:
                records.append({**base, "metric": m, "status": "n/a", "note": tool.supports(wl, m)})
        if not wanted:
            continue
        try:
            native, convert_s = time_conversion(lambda: tool.convert(wl), cfg)
        except Exception as exc:
            for m in wanted:
                records.append({**base, "metric": m, "status": "error",
                                "note": f"conversion failed: {type(exc).__name__}: {exc}"})
            log(f"   {tool.key}: conversion failed: {exc!r}")
            continue
        if not tool.converts:
            convert_s = None
        for m in wanted:
            rec = {**base, "metric": m}
            try:
                t0 = time.perf_counter()
                prepared = tool.setup(native, wl, m)
                setup_s = time.perf_counter() - t0
                fn, per_repeat = tool.call(prepared, wl, m)
                arg = per_repeat() if per_repeat is not None else None
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    value = fn(arg)
                    first = time.perf_counter() - t0
                key = (alias or wl.name, m, tool.key)
                if kept is not None and key in PAIRED and per_repeat is None:
                    kept[key] = (lambda f=fn: f(None))
            except Exception as exc:
                rec.update(status="error", note=f"{type(exc).__name__}: {exc}")
                records.append(rec)
                log(f"   {tool.key:16s} {m:12s} ERROR {exc!r}")
                continue
            rec.update(status="ok", convert_s=(None if convert_s is None else convert_s + setup_s),
                       warmup_s=first, value=value)
            if first > cfg["slow"]:
                repeats = 1
            else:
                repeats = int(min(cfg["rounds"], max(cfg["min_rep"], cfg["budget"] / max(first, 1e-9))))
            ref, note = tool.reference(wl, m)
            rec["reference_note"] = note
            if ref is not None and value is not None:
                rec["reference"] = ref
                ok, diff = agreement(value, ref, TOLERANCE.get(tool.key, 1e-9))
                rec.update(agrees=ok, max_diff=diff)
                if not ok:
                    rec["status"] = "disagrees"
            else:
                rec["agrees"] = None
            records.append(rec)
            slots.append((rec, fn, per_repeat, repeats))
        del native
    rounds = max((s[3] for s in slots), default=0)
    times = [[] for _ in slots]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(rounds):
            shift = r % len(slots)
            for i in list(range(shift, len(slots))) + list(range(shift)):
                rec, fn, per_repeat, repeats = slots[i]
                if len(times[i]) >= repeats:
                    continue
                arg = per_repeat() if per_repeat is not None else None
                t0 = time.perf_counter()
                fn(arg)
                times[i].append(time.perf_counter() - t0)
                del arg
    for (rec, _, _, _), ts in zip(slots, times):
        rec.update(eval_s=float(np.median(ts)), eval_min_s=float(np.min(ts)), n_repeats=len(ts))
        flag = {True: "ok", False: "DISAGREES", None: "-"}[rec["agrees"]]
        conv = "" if rec["convert_s"] is None else f" conv {fmt_time(rec['convert_s'])}"
        log(f"   {rec['tool']:16s} {rec['metric']:12s} eval {fmt_time(rec['eval_s'])} (n={rec['n_repeats']})"
            f"{conv} value-check {flag}")
    slots.clear()


def add_ratios(records):
    """Peer time / skrank time on the same workload and metric (np.sort: sort time / skrank time)."""
    base = {(r["workload"], r["metric"]): r for r in records
            if r["tool"] == "skrank" and r.get("status") == "ok"}
    for r in records:
        b = base.get((r["workload"], r["metric"]))
        if r.get("status") != "ok" or b is None or r["tool"] == "skrank":
            continue
        r["ratio_eval"] = r["eval_s"] / b["eval_s"]
        if r.get("convert_s") is not None:
            r["ratio_total"] = (r["eval_s"] + r["convert_s"]) / b["eval_s"]


# ---------------------------------------------------------------------------
# The scorer inside cross-validation: a 1,000-row fold, many calls.

def run_fold(cfg, records):
    import sklearn
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.metrics import make_scorer, ndcg_score

    import skrank

    class FixedPredictions(RegressorMixin, BaseEstimator):
        """A fitted estimator whose predict returns stored scores."""

        def __init__(self, scores=None):
            self.scores = scores

        def fit(self, X, y=None, **fit_params):
            self.fitted_ = True
            return self

        def predict(self, X):
            return self.scores

    nq, nd = cfg["fold"]
    wl = W.uniform(nq, nd, seed=11, labels="graded", name="fold")
    y, s, q = wl.y_true, wl.y_score, wl.qid
    Y, S = y.reshape(nq, nd), s.reshape(nq, nd)
    X = np.zeros((wl.n_rows, 1))
    try:
        import pandas as pd
        X_frame = pd.DataFrame({"f0": np.zeros(wl.n_rows), "qid": q})
    except ImportError:
        X_frame = None
    est_1d = FixedPredictions(s).fit(X, y)
    est_2d = FixedPredictions(S).fit(np.zeros((nq, 1)), Y)
    sk_scorer = make_scorer(ndcg_score, k=10)
    sk_scorer_it = make_scorer(ndcg_score, k=10, ignore_ties=True)
    rk_scorer = skrank.get_scorer("ndcg@10")

    def routed():
        with sklearn.config_context(enable_metadata_routing=True):
            return rk_scorer(est_1d, X, y, qid=q)

    cases = [
        ("skrank.get_scorer('ndcg@10'), qid by metadata routing", "scorer", routed),
        ("sklearn make_scorer(ndcg_score, k=10), 2-D", "scorer", lambda: sk_scorer(est_2d, np.zeros((nq, 1)), Y)),
        ("sklearn make_scorer(ndcg_score, k=10, ignore_ties=True), 2-D", "scorer",
         lambda: sk_scorer_it(est_2d, np.zeros((nq, 1)), Y)),
        ("skrank.ndcg_score(y, s, qid=qid, k=10)", "function", lambda: skrank.ndcg_score(y, s, qid=q, k=10)),
        ("skrank.ndcg_score(Y, S, k=10), 2-D", "function", lambda: skrank.ndcg_score(Y, S, k=10)),
        ("sklearn.metrics.ndcg_score(Y, S, k=10)", "function", lambda: ndcg_score(Y, S, k=10)),
        ("sklearn.metrics.ndcg_score(Y, S, k=10, ignore_ties=True)", "function",
         lambda: ndcg_score(Y, S, k=10, ignore_ties=True)),
    ]
    if X_frame is not None:
        cases.insert(1, ("skrank.get_scorer('ndcg@10'), qid from a DataFrame column", "scorer",
                         lambda: rk_scorer(est_1d, X_frame, y)))
    log(f"== fold: {wl.n_rows:,} rows ({nq} queries x {nd}), {cfg['fold_calls']} calls each")
    reference = float(skrank.ndcg_score(y, s, qid=q, k=10))
    out = []
    times = {label: [] for label, _, _ in cases}
    values = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, _, fn in cases:  # warm-up
            for _ in range(min(20, cfg["fold_calls"])):
                values[label] = fn()
        for _ in range(cfg["fold_calls"]):  # interleaved: every case sees the same machine load
            for label, _, fn in cases:
                t0 = time.perf_counter()
                fn()
                times[label].append(time.perf_counter() - t0)
    for label, kind, _ in cases:
        value = values[label]
        ok, diff = agreement(value, reference, 1e-9)
        out.append({"case": label, "kind": kind, "median_s": float(np.median(times[label])),
                    "calls": len(times[label]), "value": float(value), "agrees": ok, "max_diff": diff})
        log(f"   {label:64s} {fmt_time(out[-1]['median_s'])} value-check {'ok' if ok else 'DISAGREES'}")
    records.extend({"workload": "fold", "tool": c["case"], "metric": "ndcg@10",
                    "status": "ok" if c["agrees"] else "disagrees", "agrees": c["agrees"],
                    "eval_s": c["median_s"], "value": c["value"]} for c in out)
    return out


# ---------------------------------------------------------------------------
# Cold starts in fresh subprocesses.

_SKRANK_COLD = r"""
import json, sys, time
import numpy as np
d = np.load(sys.argv[1])
y, s, q = d["y_true"], d["y_score"], d["qid"]
t0 = time.perf_counter()
import skrank
t1 = time.perf_counter()
v = skrank.ndcg_score(y, s, qid=q, k=10)
t2 = time.perf_counter()
skrank.ndcg_score(y, s, qid=q, k=10)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "convert_s": None, "first_eval_s": t2 - t1,
                  "second_eval_s": t3 - t2, "value": float(v)}))
"""

_RANX_COLD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
sys.path.insert(0, sys.argv[2])
import _tools, _workloads
d = np.load(sys.argv[1])
wl = _workloads.Workload(name="uniform", description="", y_true=d["y_true"], y_score=d["y_score"],
                         qid=d["qid"], sizes=d["sizes"], binary=True, ties=False)
adapter = _tools.RanxWarm.__new__(_tools.RanxWarm)
t0 = time.perf_counter()
import ranx
t1 = time.perf_counter()
native = adapter.convert(wl)
t2 = time.perf_counter()
v = adapter.evaluate(native, wl, "ndcg@10")
t3 = time.perf_counter()
adapter.evaluate(native, wl, "ndcg@10")
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "convert_s": t2 - t1, "first_eval_s": t3 - t2,
                  "second_eval_s": t4 - t3, "value": v}))
"""


def run_cold(wl, tools, cfg, records):
    by_key = {t.key: t for t in tools}
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "arrays.npz")
        np.savez(path, y_true=wl.y_true, y_score=wl.y_score, qid=wl.qid, sizes=wl.sizes)
        cases = [("skrank (new process)", "skrank-cold", _SKRANK_COLD, None)]
        if "ranx" not in by_key:
            pass
        elif by_key["ranx"].available:
            cases.append(("ranx cold (new process, empty numba cache: compiles)", "ranx-cold",
                          _RANX_COLD, os.path.join(tmp, "numba-cache")))
            cases.append(("ranx (new process, numba cache on disk)", "ranx-cached", _RANX_COLD, ""))
        else:
            records.append({"workload": wl.name, "tool": "ranx-cold", "metric": "ndcg@10",
                            "status": by_key["ranx"].missing})
        for label, key, script, cache in cases:
            if key.replace("-cold", "") not in cfg["cold"] and key not in cfg["cold"]:
                continue
            env = dict(os.environ)
            if cache:
                env["NUMBA_CACHE_DIR"] = cache
            log(f"   cold: {label} ...")
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", script, path, str(HERE)], env=env,
                                  capture_output=True, text=True, timeout=900)
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                out.append({"case": label, "key": key, "error": proc.stderr.strip()[-500:]})
                records.append({"workload": wl.name, "tool": key, "metric": "ndcg@10", "status": "error",
                                "note": proc.stderr.strip()[-300:]})
                log(f"      failed: {proc.stderr.strip()[-300:]}")
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            res.update(case=label, key=key, process_wall_s=wall)
            ref = T.skrank_value(wl, "ndcg@10")
            ok, diff = agreement(res["value"], ref, 1e-9)
            res.update(agrees=ok, max_diff=diff)
            out.append(res)
            records.append({"workload": wl.name, "tool": key, "metric": "ndcg@10",
                            "status": "ok" if ok else "disagrees", "agrees": ok,
                            "eval_s": res["first_eval_s"], "convert_s": res["convert_s"],
                            "import_s": res["import_s"], "value": res["value"]})
            conv = "" if res["convert_s"] is None else f", convert {fmt_time(res['convert_s'])}"
            log(f"      import {fmt_time(res['import_s'])}{conv}, first evaluate "
                f"{fmt_time(res['first_eval_s'])}, second {fmt_time(res['second_eval_s'])}")
    return out


# ---------------------------------------------------------------------------
# Memory.

def memory_rows(wl, cfg):
    import skrank

    rows = []
    y, s, q = wl.y_true, wl.y_score, wl.qid

    def add(label, fn):
        peak = peak_extra_bytes(fn)
        rows.append({"workload": wl.name, "rows": wl.n_rows, "case": label, "peak_extra_bytes": peak,
                     "input_bytes": wl.input_bytes, "ratio": peak / wl.input_bytes})
        log(f"   memory {wl.name:8s} {label:40s} peak extra {peak / 2**20:8.1f} MiB = "
            f"{peak / wl.input_bytes:5.2f} x input ({wl.input_bytes / 2**20:.1f} MiB)")

    add("skrank ndcg@10", lambda: skrank.ndcg_score(y, s, qid=q, k=10))
    if wl.name == "uniform":
        add("skrank evaluate(6)", lambda: skrank.evaluate(y, s, qid=q, metrics=list(T.EVAL6)))
        add("np.sort(y_score)", lambda: np.sort(s))
        if wl.shape is not None:
            from sklearn.metrics import ndcg_score

            Y, S = y.reshape(wl.shape), s.reshape(wl.shape)
            add("sklearn ndcg_score ignore_ties=True (2-D)", lambda: ndcg_score(Y, S, k=10, ignore_ties=True))
            add("sklearn ndcg_score ignore_ties=False (2-D)", lambda: ndcg_score(Y, S, k=10))
    return rows


# ---------------------------------------------------------------------------
# Report.

def fmt_time(t):
    if t is None:
        return "—"
    if t < 1e-3:
        return f"{t * 1e6:.0f} µs"
    if t < 1:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def fmt_ratio(r):
    if r is None:
        return "—"
    if r >= 100:
        return f"{r:.0f}x"
    if r >= 10:
        return f"{r:.1f}x"
    return f"{r:.2f}x"


def environment(tools):
    cpu = platform.processor() or platform.machine()
    try:
        info = {}
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
        cpu = info.get("model name", cpu)
        if "family" in " ".join(info) and info.get("cpu family"):
            # A VM may name its CPU only "AMD EPYC": family and model tell the generation.
            cpu += f" (family {info['cpu family']}, model {info.get('model', '?')}"
            cpu += ", AVX-512)" if "avx512f" in info.get("flags", "").split() else ")"
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "scipy": T.package_version("scipy")}
    seen = set()
    for t in tools:
        name = t.label.split(" (")[0]
        if name in seen or t.key in ("np.sort",):
            continue
        seen.add(name)
        versions[name] = t.version if t.available else t.missing
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_bytes": mem, "load_at_start": load,
            "platform": platform.platform(), "versions": versions}


def _find(records, workload, metric, tool):
    for r in records:
        if r["workload"] == workload and r["metric"] == metric and r["tool"] == tool:
            return r
    return None


def _ok(r):
    return r is not None and r.get("status") == "ok"


# The comparisons the targets rest on, re-timed interleaved (A B C ... A B C ...) so that a
# change in machine load during the run affects every side of a ratio alike.
PAIRED = (
    ("uniform", "ndcg@10", "skrank"),
    ("uniform", "ndcg@10", "np.sort"),
    ("uniform", "ndcg@10", "sklearn-it"),
    ("uniform", "ndcg@10", "xgboost"),
    ("uniform", "ndcg@10", "xgboost-1t"),
    ("uniform", "ndcg@10", "pytrec_eval"),
    ("uniform", "ndcg@10", "ranx"),
    ("uniform", EVALUATE, "skrank"),
    ("ragged", "ndcg@10", "skrank"),
    ("ties", "ndcg@10", "skrank"),
    ("scale-max", "ndcg@10", "skrank"),
)
# Interleaved among themselves only: the largest size is timed against the 1M-row call alone, since
# calls of other tools in between change what its 80 MB temporaries cost (memory reuse, page faults).
PAIRED_GROUPS = (
    [k for k in PAIRED if k[0] != "scale-max"],
    [("uniform", "ndcg@10", "skrank"), ("scale-max", "ndcg@10", "skrank")],
)


def run_paired(kept, rounds):
    """Per group of PAIRED_GROUPS: median of ``rounds`` interleaved calls of each kept function."""
    groups = []
    for group in PAIRED_GROUPS:
        order = [k for k in group if k in kept]
        if len(order) < 2:
            groups.append({})
            continue
        log(f"== targets: {len(order)} calls interleaved (rotated), {rounds} rounds")
        times = {k: [] for k in order}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in range(rounds):
                shift = r % len(order)
                for k in order[shift:] + order[:shift]:  # rotated: round r starts at call r
                    t0 = time.perf_counter()
                    kept[k]()
                    times[k].append(time.perf_counter() - t0)
        out = {k: float(np.median(v)) for k, v in times.items()}
        for k, v in out.items():
            log(f"   {k[0]:10s} {k[1]:12s} {k[2]:12s} {fmt_time(v)}")
        groups.append(out)
    return groups


def targets(records, memory, fold, paired, rows):
    """The targets resting on the per-tool tables, each with its measured ratio (the re-timed
    interleaved pairs where available).  The layouts section adds its own (np.sort, memory,
    evaluate, layouts against the peers); the ones it covers are not repeated here."""
    out = []

    def add(name, measured, goal, met, detail):
        out.append({"target": name, "measured": measured, "goal": goal, "met": bool(met), "detail": detail,
                    "section": "per-tool tables"})

    interleaved, scale = (list(paired) + [{}, {}])[:2]

    def t(workload, metric, tool):
        if (workload, metric, tool) in interleaved:
            return interleaved[(workload, metric, tool)]
        r = _find(records, workload, metric, tool)
        return r["eval_s"] if _ok(r) else None

    sk = t("uniform", "ndcg@10", "skrank")
    if sk is None:
        return out
    it = t("uniform", "ndcg@10", "sklearn-it")
    if it is not None:
        add("nDCG@10 (ties='average', 1-D) on uniform rows faster than sklearn ignore_ties=True (its 2-D input)",
            it / sk, "> 1x", it > sk, f"sklearn {fmt_time(it)} vs skrank {fmt_time(sk)}")
    for key, what in (("xgboost", "at least as fast as XGBoost's C++ evaluation (ndcg@10, warm DMatrix, 2 threads)"),
                            ("xgboost-1t", "(for reference) XGBoost's eval with nthread=1 (skrank is single-threaded)"),
                            ("xgboost-new", "(for reference) XGBoost's first eval of a new DMatrix")):
        x = t("uniform", "ndcg@10", key)
        if x is not None:
            add(f"... {what}", x / sk, ">= 1x", x >= sk, f"XGBoost {fmt_time(x)} vs skrank {fmt_time(sk)}")
    for peer, label in (("pytrec_eval", "pytrec_eval"), ("ranx", "ranx (warm)")):
        p = t("uniform", "ndcg@10", peer)
        others = [r for r in records if r["workload"] == "uniform" and r["tool"] == peer and _ok(r)
                  and r.get("ratio_eval") is not None]
        if p is None:
            continue
        worst = min(others, key=lambda r: r["ratio_eval"]) if others else None
        detail = f"nDCG@10 {fmt_time(p)} vs {fmt_time(sk)}"
        if worst is not None:
            detail += (f"; lowest ratio over its {len(others)} metrics in the tables: "
                       f"{fmt_ratio(worst['ratio_eval'])} ({worst['metric']})")
        add(f">= 10x faster than {label}, evaluation only (uniform nDCG@10)", p / sk, ">= 10x",
            p >= 10 * sk, detail)
    for wname in ("ragged", "ties"):
        other = t(wname, "ndcg@10", "skrank")
        if other is not None and rows.get(wname) == rows.get("uniform"):
            add(f"{wname} nDCG@10 within 1.5x of uniform at equal rows", other / sk, "<= 1.5x",
                other <= 1.5 * sk, f"{wname} {fmt_time(other)} vs uniform {fmt_time(sk)} "
                                   f"({rows['uniform']:,} rows each)")
    key_big, key_small = ("scale-max", "ndcg@10", "skrank"), ("uniform", "ndcg@10", "skrank")
    big, small = scale.get(key_big), scale.get(key_small)
    if big is None:
        big, small = t(*key_big), sk
    if big is not None and rows.get("scale-max", 0) > rows["uniform"]:
        n0, n1 = rows["uniform"], rows["scale-max"]
        bound = (n1 * math.log(n1)) / (n0 * math.log(n0))
        r = big / small
        add(f"{n1:,} rows scale no worse than n log n (time ratio vs {n0:,} rows)", r,
            f"<= {bound:.2f}x", r <= bound,
            f"{fmt_time(small)} -> {fmt_time(big)}; slope of log time over log rows "
            f"{math.log(r) / math.log(n1 / n0):.2f}")
    if fold:
        f = {c["case"]: c for c in fold}
        pairs = [("skrank.get_scorer('ndcg@10'), qid by metadata routing",
                  "sklearn make_scorer(ndcg_score, k=10), 2-D", "scorer"),
                 ("skrank.get_scorer('ndcg@10'), qid from a DataFrame column",
                  "sklearn make_scorer(ndcg_score, k=10), 2-D", "scorer (qid from DataFrame)"),
                 ("skrank.ndcg_score(y, s, qid=qid, k=10)", "sklearn.metrics.ndcg_score(Y, S, k=10)",
                  "metric functions")]
        for a, b, what in pairs:
            if a in f and b in f:
                r = f[a]["median_s"] / f[b]["median_s"]
                add(f"1,000-row fold, {what}: skrank <= 2x sklearn", r, "<= 2x", r <= 2,
                    f"{fmt_time(f[a]['median_s'])} vs {fmt_time(f[b]['median_s'])} per call")
    return out


def physical_anchors(cfg, rows):
    """Measured lower bounds that explain targets a numpy engine cannot reach.

    * memory: one streaming pass (``np.negative``) and one gather at the
      uniform size and at the largest scaling size; their ratio is what any
      algorithm reading its input a constant number of times pays beyond n.
    * selection: each query's 10 leading ranks of the ragged workload
      (``segmented_top_order``: a bound from slice maxima where sizes are
      uneven), against the same selection on the uniform rows (one 2-D block,
      a free reshape).
    """
    from skrank._engine import segments as S

    out = {}
    small = int(np.prod(cfg["uniform"]))
    large = rows.get("scale-max")
    if large:
        rng = np.random.default_rng(0)
        for name, n in (("small", small), ("large", large)):
            a = rng.random(n)
            idx = np.arange(n)
            out[f"negate_{name}"] = T.median_time(lambda: np.negative(a))
            out[f"gather_{name}"] = T.median_time(lambda: a[idx])
            del a, idx
        out["rows_small"], out["rows_large"] = small, large
    rg = cfg.get("ragged")
    if rg:
        sizes = W.ragged_sizes(rg["total"], rg["big"], median=rg["median"])
        small = rg["total"]
        rng = np.random.default_rng(1)
        scores = rng.random(int(sizes.sum()))
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.intp)
        out["select_ragged"] = T.median_time(
            lambda: S.segmented_top_order(scores, offsets, 10, stable=False))
        n_queries, n_docs = cfg["uniform"]
        uniform_scores = rng.random(n_queries * n_docs)
        uniform_offsets = np.arange(n_queries + 1, dtype=np.intp) * n_docs
        out["select_uniform"] = T.median_time(
            lambda: S.segmented_top_order(uniform_scores, uniform_offsets, 10, stable=False))
        out["ragged_big"] = int(rg["big"])
    return out


def write_markdown(path, *, env, cfg_name, workloads, records, scaling, memory, fold, cold, tools,
                   target_rows, elapsed, plot_note, anchors=None, layouts=()):
    by_key = {t.key: t for t in tools}
    L = []
    L.append("# skrank benchmark results\n")
    L.append(f"Produced by `python benchmarks/run.py{'' if cfg_name == 'full' else ' --' + cfg_name}` in "
             f"{elapsed:.0f} s on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. One run, identical "
             f"inputs for every tool. Times are medians of interleaved rounds after a warm-up call "
             f"(time.perf_counter; every round calls every case once, in rotated order); *ratio* is "
             f"peer time / skrank time on the same workload and metric (above 1: skrank is faster). "
             f"*Conversion* is the peer's own input format built from the shared arrays (plus "
             f"metric-specific setup), reported apart from *evaluation*. A time counts only when "
             f"the value agrees with skrank's under that peer's conventions (see the last section).\n")
    L.append(f"Machine: {env['cpu']}, {env['cores']} cores"
             + (f", {env['memory_bytes'] / 2**30:.0f} GiB" if env["memory_bytes"] else "")
             + f"; {env['platform']}. skrank and numpy run single-threaded; XGBoost, LightGBM, ranx "
               f"(numba) and torch may use every core."
             + ("" if not env.get("load_at_start") else
                f" Load average (1 min) at start {env['load_at_start'][0]:.2f}, at end "
                f"{env['load_at_end'][0]:.2f}: other processes shared the machine when above 1, "
                f"which inflates the times (ratios measured side by side are more robust than absolute times).")
             + "\n")
    L.append("| package | version |\n|---|---|")
    for k, v in env["versions"].items():
        L.append(f"| {k} | {v} |")
    L.append("")

    L.append("## Targets\n")
    L.append("Every ratio below comes from calls timed in the same interleaved rounds (each round calls "
             "every case once, in rotated order; medians of the rounds), so that a change of machine "
             "load moves both sides of a ratio alike. *layouts*, *peers*, *np.sort* and *memory* come "
             "from the input-layouts section below; *per-tool tables* from a re-timing of the pairs "
             "at the end of the tables. A ratio is the first case's time over the second's, except "
             "where the goal says speed-up.\n")
    if target_rows:
        n_pass = sum(t["met"] for t in target_rows)
        L.append(f"**{n_pass} of {len(target_rows)} targets pass.**\n")
        L.append("| section | target | goal | measured | result |\n|---|---|---|---|---|")
        for t in target_rows:
            met = "PASS" if t["met"] else "**MISS**"
            L.append(f"| {t.get('section', '')} | {t['target']} | {t['goal']} | {fmt_ratio(t['measured'])} "
                     f"({t['detail']}) | {met} |")
    else:
        L.append("No target could be evaluated (peers missing).")
    L.append("")
    missed = " ".join(t["target"] for t in target_rows if not t["met"])
    if anchors and ("scale no worse" in missed or "ragged" in missed):
        L.append("### Why a missed target is missed (measured on this machine, this run)\n")
        if "negate_large" in anchors and "scale no worse" in missed:
            r_neg = anchors["negate_large"] / anchors["negate_small"]
            r_gat = anchors["gather_large"] / anchors["gather_small"]
            L.append(f"- Scaling from {anchors['rows_small']:,} to {anchors['rows_large']:,} rows: "
                     f"one streaming pass (`np.negative`) grows {r_neg:.1f}x "
                     f"({fmt_time(anchors['negate_small'])} -> {fmt_time(anchors['negate_large'])}) and one "
                     f"gather {r_gat:.1f}x ({fmt_time(anchors['gather_small'])} -> "
                     f"{fmt_time(anchors['gather_large'])}), against {anchors['rows_large'] / anchors['rows_small']:.0f}x "
                     f"the rows: the small arrays stay in the CPU cache, the large ones stream from "
                     f"memory. Any engine that reads its input a constant number of times inherits "
                     f"this, so an n log n bound measured from a cache-resident baseline cannot hold "
                     f"when the streaming ratio itself exceeds it.")
        if "select_ragged" in anchors and "ragged" in missed:
            L.append(f"- Ragged against uniform: selecting each query's top 10 of the ragged rows "
                     f"(a lower bound from slice maxima, then the rows reaching it sorted) "
                     f"takes {fmt_time(anchors['select_ragged'])} against "
                     f"{fmt_time(anchors['select_uniform'])} for the uniform rows, one 2-D block "
                     f"({anchors['select_ragged'] / anchors['select_uniform']:.1f}x), before the rest of "
                     f"skrank's work (`python benchmarks/profile_engine.py --lines` prints the "
                     f"breakdown; one query holds {anchors['ragged_big']:,} documents).")
        L.append("")

    if layouts and layouts.get("rows"):
        L += LAYOUTS.markdown(layouts)
    if not workloads:
        Path(path).write_text("\n".join(L))
        return

    # Summary: ratio of each peer on nDCG@10, per workload.
    wnames = [w["name"] for w in workloads]
    L.append("## Summary: nDCG@10 evaluation time, ratio to skrank\n")
    L.append("| tool | " + " | ".join(wnames) + " |")
    L.append("|---|" + "---|" * len(wnames))
    for tool in tools:
        cells = []
        for w in wnames:
            r = _find(records, w, "ndcg@10", tool.key)
            cells.append(_cell_short(r))
        if all(c in ("", "n/a") for c in cells):
            continue
        L.append(f"| {tool.label} | " + " | ".join(cells) + " |")
    L.append("")
    L.append("Cells: evaluation time (ratio to skrank). Ragged queries cannot be fed to sklearn's "
             "2-D form without padding every query to the 100,000-document one.\n")

    for w in workloads:
        L.append(f"## Workload `{w['name']}`: {w['description']}\n")
        L.append(f"{w['summary']}.\n")
        L.append("| metric | tool | conversion | evaluation | ratio (eval) | ratio (conv + eval) | value (tool's conventions) | check |")
        L.append("|---|---|---|---|---|---|---|---|")
        for m in METRICS.get(w["name"], ()):
            for tool in tools:
                r = _find(records, w["name"], m, tool.key)
                if r is None or r.get("status") == "n/a" or not tool.available:
                    continue
                if r.get("status") not in ("ok", "disagrees"):
                    L.append(f"| {METRIC_LABELS[m]} | {tool.label} | | | | | | {r['status']} |")
                    continue
                check = {True: "agrees", False: "**DISAGREES**", None: "not compared"}[r.get("agrees")]
                if r.get("agrees") is None and r.get("reference_note") not in (None, "baseline", "not a metric"):
                    check = f"not compared: {r['reference_note']}"
                if r["tool"] in ("skrank", "np.sort"):
                    check = ""
                value = r.get("value")
                if isinstance(value, dict):
                    value = ", ".join(f"{k} {v:.4f}" for k, v in value.items())
                elif value is not None:
                    value = f"{value:.6f}"
                ratio = fmt_ratio(r.get("ratio_eval")) if r.get("agrees") is not False else "—"
                total = fmt_ratio(r.get("ratio_total")) if r.get("agrees") is not False else "—"
                L.append(f"| {METRIC_LABELS[m]} | {tool.label} | {fmt_time(r.get('convert_s'))} | "
                         f"{fmt_time(r['eval_s'])} | {ratio} | {total} | {value or ''} | {check} |")
        L.append("")

    if scaling:
        sizes = sorted({r["rows"] for r in scaling})
        L.append("## Scaling: nDCG@10 evaluation time against rows (uniform queries of "
                 f"{workloads[0].get('docs', '')} documents)\n")
        if plot_note:
            L.append(plot_note + "\n")
        L.append("| tool | " + " | ".join(f"{n:,}" for n in sizes) + " |")
        L.append("|---|" + "---|" * len(sizes))
        for tool in tools:
            cells = []
            for n in sizes:
                r = next((x for x in scaling if x["rows"] == n and x["tool"] == tool.key), None)
                cells.append(fmt_time(r["eval_s"]) if _ok(r) else ("✗" if r and r.get("status") == "disagrees" else ""))
            if all(c == "" for c in cells):
                continue
            L.append(f"| {tool.label} | " + " | ".join(cells) + " |")
        L.append("")
        L.append("The largest size runs only the tools that finish it in seconds (skrank, np.sort, sklearn, "
                 "XGBoost, LightGBM), with a longer repeat budget.\n")

    if memory:
        L.append("## Peak extra memory (tracemalloc; numpy allocations are traced)\n")
        L.append("| workload | rows | call | peak extra | input arrays | ratio |\n|---|---|---|---|---|---|")
        for m in memory:
            L.append(f"| {m['workload']} | {m['rows']:,} | {m['case']} | {m['peak_extra_bytes'] / 2**20:.1f} MiB | "
                     f"{m['input_bytes'] / 2**20:.1f} MiB | {m['ratio']:.2f}x |")
        L.append("")

    if fold:
        L.append("## A 1,000-row fold scored many times (what a scorer pays inside GridSearchCV)\n")
        L.append("10 queries x 100 documents, graded labels; the estimator is a fitted stub whose "
                 "`predict` returns fixed scores, so only the scorer is timed. Median per call.\n")
        L.append("| call | kind | per call | calls | check |\n|---|---|---|---|---|")
        for c in fold:
            L.append(f"| `{c['case']}` | {c['kind']} | {fmt_time(c['median_s'])} | {c['calls']} | "
                     f"{'agrees' if c['agrees'] else '**DISAGREES**'} |")
        L.append("")

    if cold:
        L.append("## Cold start (a fresh Python process, uniform workload, nDCG@10)\n")
        warm = _find(records, "uniform", "ndcg@10", "skrank")
        L.append("| case | import | conversion | first evaluation | ratio to skrank (warm) | second evaluation | check |")
        L.append("|---|---|---|---|---|---|---|")
        for c in cold:
            if "error" in c:
                L.append(f"| {c['case']} | | | | | | error: {c['error'][-120:]} |")
                continue
            ratio = fmt_ratio(c["first_eval_s"] / warm["eval_s"]) if _ok(warm) else "—"
            L.append(f"| {c['case']} | {fmt_time(c['import_s'])} | {fmt_time(c['convert_s'])} | "
                     f"{fmt_time(c['first_eval_s'])} | {ratio} | {fmt_time(c['second_eval_s'])} | "
                     f"{'agrees' if c['agrees'] else '**DISAGREES**'} |")
        L.append("")
        L.append("ranx compiles its numba kernels on first use and caches them on disk; its rows "
                 "(`--ranx-cold`, minutes) set `NUMBA_CACHE_DIR` to a new directory for the empty-cache "
                 "case, so it pays the compilation a user pays once per installation.\n")

    L.append("## Conventions, as established by experiment, and how values were matched\n")
    L.append("| tool | conventions | skrank call it is checked against |\n|---|---|---|")
    notes = {}
    for r in records:
        if r.get("reference_note") and r["tool"] in by_key:
            notes.setdefault(r["tool"], set()).add(r["reference_note"])
    for tool in tools:
        if not tool.available:
            L.append(f"| {tool.label} | {tool.missing} | |")
            continue
        L.append(f"| {tool.label} | {tool.conventions} | {'; '.join(sorted(notes.get(tool.key, [])))} |")
    L.append("")
    L.append("Timing notes: XGBoost and LightGBM run OpenMP threads on both cores (the rows with "
             "nthread=1 / num_threads=1 compare single thread with single thread); when other "
             "processes load this 2-core machine, their thread wake-ups can put a floor of 4-8 ms "
             "under every call (seen in earlier runs: XGBoost's eval of 10,000 rows took 8 ms with "
             "2 threads, 0.4 ms with `nthread=1`), and they suffer more from that load than skrank. ranx's "
             "conversion builds numba typed dictionaries and its time varies widely between runs. "
             "Within each workload's table every call is timed in the same rounds (rotated order); "
             "a call over the repeat budget takes part in fewer rounds (at least 3, one above 1 s). "
             "results.json also holds the minimum of each.\n")
    L.append("Docnos are `d<row number>` zero-padded, so trec_eval's docno-descending tie order is "
             "skrank's `ties='stable'` on the rows reversed. Tolerance: 1e-9 (relative above 1), "
             "1e-6 for torchmetrics (float32 accumulation).\n")
    Path(path).write_text("\n".join(L))


def _cell_short(r):
    if r is None:
        return ""
    if r.get("status") == "n/a":
        return "n/a"
    if r.get("status") == "disagrees":
        return "✗ disagrees"
    if r.get("status") != "ok":
        return r.get("status", "")
    if r["tool"] == "skrank":
        return fmt_time(r["eval_s"])
    return f"{fmt_time(r['eval_s'])} ({fmt_ratio(r.get('ratio_eval'))})"


def plot(path, scaling, tools):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "scaling.png not written: matplotlib is not installed (`pip install -e \".[benchmark]\"`)."
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for tool in tools:
        pts = sorted((r["rows"], r["eval_s"]) for r in scaling if r["tool"] == tool.key and _ok(r))
        if len(pts) < 2:
            continue
        xs, ys = zip(*pts)
        style = {"skrank": dict(lw=2.5, color="black", marker="o"),
                 "np.sort": dict(ls="--", color="grey", marker=".")}.get(tool.key, dict(marker="o", ms=4))
        ax.loglog(xs, ys, label=tool.label, **style)
    ax.set_xlabel("rows (uniform queries)")
    ax.set_ylabel("nDCG@10 evaluation time [s] (median)")
    ax.set_title("Time against rows, every tool (log-log)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def to_json(obj):
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# ---------------------------------------------------------------------------

def run_tables(cfg, tools, *, cold_starts=True):
    """The per-tool tables (four 1M-row workloads), scaling, memory, the fold, cold starts and the
    re-timed target pairs."""
    records, workloads, scaling, memory = [], [], [], []
    kept, rows = {}, {}

    def describe(wl, docs=None):
        workloads.append({"name": wl.name, "description": wl.description, "summary": wl.summary(),
                          "rows": wl.n_rows, "queries": wl.n_queries, "docs": docs})

    # The four main workloads.
    nq, nd = cfg["uniform"]
    uni = W.uniform(nq, nd, seed=0, labels="binary", name="uniform")
    describe(uni, docs=nd)
    run_workload(uni, tools, METRICS["uniform"], cfg, records, kept=kept)
    rows["uniform"] = uni.n_rows
    memory += memory_rows(uni, cfg)
    scaling += [r for r in records if r["workload"] == "uniform" and r["metric"] == "ndcg@10"]
    cold = run_cold(uni, tools, cfg, records) if cold_starts else []

    nq, nd = cfg["graded"]
    wl = W.uniform(nq, nd, seed=1, labels="graded", name="graded",
                   description=f"{nq:,} queries x {nd} documents, labels 0-4 with MSLR-WEB30K's "
                               f"frequencies, tie-free float scores")
    describe(wl)
    run_workload(wl, tools, METRICS["graded"], cfg, records)
    del wl

    rg = cfg["ragged"]
    wl = W.ragged(rg["total"], rg["big"], seed=2, median=rg["median"])
    describe(wl)
    run_workload(wl, tools, METRICS["ragged"], cfg, records, kept=kept)
    rows["ragged"] = wl.n_rows
    memory += memory_rows(wl, cfg)
    del wl

    nq, nd = cfg["ties"]
    wl = W.uniform(nq, nd, seed=3, labels="graded", scores="int", name="ties",
                   description=f"{nq:,} queries x {nd} documents, labels 0-4, integer scores 0-9 "
                               f"(heavy ties: about {nd // 10} documents per tie group)")
    describe(wl)
    run_workload(wl, tools, METRICS["ties"], cfg, records, kept=kept)
    rows["ties"] = wl.n_rows
    memory += memory_rows(wl, cfg)
    del wl
    gc.collect()

    # Scaling: the uniform shape at other sizes, nDCG@10 only.
    docs = cfg["scaling_docs"]
    largest = max(cfg["scaling_queries"]) * docs
    for q in cfg["scaling_queries"]:
        if (q, docs) == cfg["uniform"]:
            continue
        wl = W.uniform(q, docs, seed=0, labels="binary", name=f"scale-{q * docs}")
        limit_tools = [t for t in tools
                       if t.key not in ("skrank-shuffled", "xgboost-new", "xgboost-1t", "lightgbm-1t")
                       and (t.max_scaling_rows is None or wl.n_rows <= t.max_scaling_rows)]
        recs = []
        big = wl.n_rows == largest and wl.n_rows > uni.n_rows
        # The largest size: a longer budget, so that its medians hold about five repeats.
        run_workload(wl, limit_tools, ("ndcg@10",), {**cfg, "budget": 4 * cfg["budget"]}
                     if big else cfg, recs, kept=kept if big else None, alias="scale-max" if big else None)
        if big:
            rows["scale-max"] = wl.n_rows
        add_ratios(recs)
        scaling += recs
        records += recs
        if big:
            memory += memory_rows(wl, cfg)
        del wl
        gc.collect()

    fold = run_fold(cfg, records)
    add_ratios(records)
    paired = run_paired(kept, cfg["paired_rounds"])
    kept.clear()
    gc.collect()
    return {"records": records, "workloads": workloads, "scaling": scaling, "memory": memory,
            "cold": cold, "fold": fold, "paired": paired, "rows": rows}


def tie_pattern_targets(cfg_name):
    """The targets of benchmarks/tie_patterns.py (issue 27): every metric tied on the tie
    patterns of real scores against tie-free, against nDCG@10, and log-normal query sizes
    against uniform, so that the suite cannot pass on integer ties alone."""
    import tie_patterns

    n_rows, rounds = {"smoke": (4_000, 2)}.get(cfg_name, (1_000_000, 3))
    log(f"== tie patterns and log-normal query sizes, {n_rows:,} rows, {rounds} rounds")
    _, found = tie_patterns.run(n_rows, rounds, log=log)
    return [{"target": name, "measured": measured, "goal": f"<= {goal}x", "met": measured <= goal,
             "detail": "interleaved medians, benchmarks/tie_patterns.py", "section": "tie patterns"}
            for name, measured, goal in found]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (CI); writes to a temp dir unless --out")
    parser.add_argument("--quick", action="store_true",
                        help="only the interleaved layouts-and-peers section at 1M rows (a few minutes); "
                             "writes to a temp dir unless --out")
    parser.add_argument("--out", help="output directory (default: benchmarks/results, or a temp dir with --smoke)")
    parser.add_argument("--tools", help="comma-separated tool keys to run (skrank is always run)")
    parser.add_argument("--no-cold", action="store_true", help="skip the fresh-process cold starts")
    parser.add_argument("--ranx-cold", action="store_true",
                        help="also time ranx in fresh processes, with an empty numba cache (it compiles) "
                             "and with the cache on disk (minutes)")
    args = parser.parse_args(argv)

    if args.smoke and args.quick:
        parser.error("--smoke and --quick are exclusive")
    cfg_name = "smoke" if args.smoke else "quick" if args.quick else "full"
    cfg = dict({"smoke": SMOKE, "quick": QUICK, "full": FULL}[cfg_name])
    if args.ranx_cold:
        cfg["cold"] = cfg["cold"] + ("ranx-cold", "ranx-cached")
    if args.out:
        out = Path(args.out)
    elif cfg_name != "full":
        out = Path(tempfile.mkdtemp(prefix="skrank-bench-"))
    else:
        out = HERE / "results"
    out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    tools = T.all_tools()
    if args.tools:
        keep = set(args.tools.split(",")) | {"skrank"}
        tools = [t for t in tools if t.key in keep]
    env = environment(tools)
    log(f"skrank benchmark ({cfg_name}) -> {out}")
    for t in tools:
        log(f"   {t.label:42s} {t.version if t.available else t.missing}")

    if cfg_name == "quick":
        tables = {"records": [], "workloads": [], "scaling": [], "memory": [], "cold": [], "fold": [],
                  "paired": [], "rows": {}}
    else:
        tables = run_tables(cfg, tools, cold_starts=not args.no_cold)
    records, workloads, scaling, memory = (tables[k] for k in ("records", "workloads", "scaling", "memory"))
    cold, fold, paired, rows = (tables[k] for k in ("cold", "fold", "paired", "rows"))
    layouts = LAYOUTS.run_layouts(queries=cfg["uniform"][0], docs=cfg["uniform"][1],
                                  ragged=cfg["ragged"], rounds=max(cfg["paired_rounds"], 3),
                                  large_rounds=cfg.get("layouts_large_rounds"),
                                  large=cfg["layouts_large"], log=log,
                                  dispatch=cfg_name == "full", peers=True,
                                  peer_keys={t.key for t in tools} if args.tools else None)
    target_rows = LAYOUTS.layout_targets(layouts) + targets(records, memory, fold, paired, rows)
    target_rows += tie_pattern_targets(cfg_name)
    anchors = (physical_anchors(cfg, rows) if cfg_name != "quick" and any(not t["met"] for t in target_rows)
               else None)

    elapsed = time.perf_counter() - started
    try:
        env["load_at_end"] = os.getloadavg()
    except OSError:
        env["load_at_end"] = None
    plot_note = plot(out / "scaling.png", scaling, tools)
    write_markdown(out / "results.md", env=env, cfg_name=cfg_name, workloads=workloads, records=records,
                   scaling=scaling, memory=memory, fold=fold, cold=cold, tools=tools,
                   target_rows=target_rows, elapsed=elapsed, plot_note=plot_note,
                   anchors=anchors, layouts=layouts)
    (out / "results.json").write_text(json.dumps(to_json({
        "mode": cfg_name, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "elapsed_s": elapsed,
        "environment": env, "workloads": workloads,
        "targets": target_rows, "anchors": anchors, "paired": [[{"workload": k[0], "metric": k[1], "tool": k[2], "median_s": v}
                                            for k, v in group.items()] for group in paired],
        "records": records, "memory": memory, "fold": fold, "cold": cold, "layouts": layouts,
    }), indent=1, default=str))

    bad = [r for r in records if r.get("status") in ("disagrees", "error")]
    bad += [{"workload": "layouts", "metric": r["case"], "tool": "", "status": "disagrees"}
            for r in LAYOUTS.disagreements(layouts)]
    log(f"\nwrote {out / 'results.md'}, results.json" + ("" if plot_note else ", scaling.png")
        + f" in {elapsed:.0f} s")
    for t in target_rows:
        log(f"   {'PASS' if t['met'] else 'MISS'} {fmt_ratio(t['measured']):>8s} (goal {t['goal']}): {t['target']}")
    if bad:
        log(f"\n{len(bad)} value check(s) failed or tool(s) errored:")
        for r in bad:
            log(f"   {r['workload']} {r['metric']} {r['tool']}: {r['status']} {r.get('note', '')} "
                f"value={r.get('value')} reference={r.get('reference')}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
