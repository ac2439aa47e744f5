"""skrank.fuse against ranx.fuse (warm), interleaved; printed, never asserted.

    python benchmarks/bench_fusion.py                   # 2 runs x 2,000 queries x 1,000 docs
    python benchmarks/bench_fusion.py --smoke           # tiny sizes, values checked
    python benchmarks/bench_fusion.py --no-ranx         # skrank alone (every method)
    python benchmarks/bench_fusion.py --memory          # peak extra memory, fresh processes
    python benchmarks/bench_fusion.py --memory --runs 10 --queries 10000 --docs 300  # 30M rows
    python benchmarks/bench_fusion.py --doc-pool 1500000   # documents from a corpus of ids

Inputs: each run returns ``--docs`` documents per query out of a pool of 3x as
many, with distinct random scores; the runs overlap partly.  Load time is
excluded on both sides: both tools load the same dicts beforehand
(``skrank.io.Run.from_dict``, which keeps each run's index of codes and
positions, and ``ranx.Run``); skrank is also timed on Runs of the caller's
arrays (``plain``: each run's index computed in every call).
ranx compiles each method with numba on its first call: every method is called
once before timing (minutes the first time, seconds once numba's cache is on
disk).  Each round times every (tool, method) once, round ``r`` starting at case
``r`` (rotated), and each case reports the median of its rounds, so a change of
machine load moves both sides of a ratio alike.  Before timing, the fused
scores of both tools are compared (1e-9, relative) on the methods and
normalisation ranx defines; a mismatch exits with status 1.

The issue's target (issue 28): every unsupervised method at least 20x faster
than ranx's warm fuse on 2 x 2,000 x 1,000, and 10 runs x 10,000 queries x 1,000
documents fused with a peak extra memory under 3x the inputs.  ``--memory``
fuses each method in a fresh process (``--plain``: Runs of the caller's arrays)
and reports the peak of memory allocated during one ``skrank.fuse`` (tracemalloc:
numpy's buffers included, the fused run included) and the growth of the process's
peak RSS, over the bytes of the input runs' columns; run it at two sizes to see
that the ratio does not grow.
"""

import argparse
import sys
import time
import tracemalloc

import numpy as np

import skrank
from skrank.fusion import METHODS
from skrank.io import Run

PARAMS = {"gmnz": {"gamma": 0.5}, "rbc": {"phi": 0.8}, "logn_isr": {"sigma": 0.01}}
# ranx's Condorcet sorts with a Python comparator: minutes at full size
DEFAULT_METHODS = ("rrf", "wsum", "sum", "mnz", "anz", "max", "min", "med", "isr", "rbc",
                   "bordafuse", "mixed", "wmnz")


def make_runs(n_runs, n_queries, n_docs, seed=0, pool=None):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.array([f"q{i}" for i in range(n_queries)]), n_docs)
    if pool is not None and pool > 3 * n_docs:   # --doc-pool: a corpus of ``pool`` ids
        names = np.array([f"doc{j}" for j in range(pool)])
        step = pool // n_docs   # distinct documents a query: increasing offsets, shuffled
        runs = []
        for _ in range(n_runs):
            docs = (rng.integers(0, pool, (n_queries, 1))
                    + np.cumsum(rng.integers(1, step + 1, (n_queries, n_docs)), axis=1)) % pool
            docs = rng.permuted(docs, axis=1)
            runs.append(Run(qid=qid, docno=names[docs.ravel()],
                            score=rng.permutation(n_queries * n_docs) / (n_queries * n_docs)))
        return runs
    pool = 3 * n_docs
    names = np.array([f"doc{j}" for j in range(pool)])
    runs = []
    for _ in range(n_runs):
        docs = rng.permuted(np.tile(np.arange(pool), (n_queries, 1)), axis=1)[:, :n_docs]
        runs.append(Run(qid=qid, docno=names[docs.ravel()],
                        score=rng.permutation(n_queries * n_docs) / (n_queries * n_docs)))
    return runs


def as_dicts(runs):
    """Each run as ``{query: {doc: score}}``, the form both tools load from."""
    out = []
    for run in runs:
        d = {}
        for q, doc, s in zip(run.qid.tolist(), run.docno.tolist(), run.score.tolist()):
            d.setdefault(q, {})[doc] = s
        out.append(d)
    return out


def to_ranx(dicts):
    import ranx

    return [ranx.Run(d) for d in dicts]


def to_skrank(dicts):
    """skrank Runs loaded from the same dicts (``Run.from_dict`` keeps each run's index)."""
    return [Run.from_dict(d) for d in dicts]


def _ranx_call(method, n_runs):
    import ranx

    params = dict(PARAMS.get(method, {}))
    if next(m for m in METHODS if m.name == method).weighted and method != "rrf":
        params["weights"] = [1.0] * n_runs

    def call(runs):
        return ranx.fuse(runs, norm="min-max", method=method, params=params)
    return call


def _skrank_call(method):
    params = dict(PARAMS.get(method, {}))

    def call(runs):
        return skrank.fuse(runs, method=method, norm="min-max", **params)
    return call


def check_values(runs, ranx_runs, methods, n_checked=50):
    """Mismatches of the fused scores on the first ``n_checked`` queries (every call also
    warms ranx up)."""
    bad = []
    for method in methods:
        got = _skrank_call(method)(runs)
        expected = _ranx_call(method, len(runs))(ranx_runs)
        queries = sorted(set(got.qid[:1].tolist()) | set(expected.keys()))[:n_checked]
        keep = np.isin(got.qid, queries)
        ours = {}
        for q, d, s in zip(got.qid[keep].tolist(), got.docno[keep].tolist(),
                           got.score[keep].tolist()):
            ours.setdefault(q, {})[d] = s
        for q in queries:
            theirs = dict(expected[q])
            if set(theirs) != set(ours.get(q, {})):
                bad.append((method, q, "documents differ"))
                continue
            for d, s in theirs.items():
                if not np.isclose(ours[q][d], s, rtol=1e-9, atol=1e-12):
                    bad.append((method, q, d, ours[q][d], s))
                    break
    return bad


def interleaved(cases, runs_by_tool, rounds):
    times = {key: [] for key, _, _ in cases}
    for r in range(rounds):
        for i in range(len(cases)):
            key, tool, call = cases[(i + r) % len(cases)]
            start = time.perf_counter()
            call(runs_by_tool[tool])
            times[key].append(time.perf_counter() - start)
    return {key: float(np.median(v)) for key, v in times.items()}


def _rss_kib(field):
    """A field of /proc/self/status in KiB (VmRSS: now, VmHWM: the peak)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def memory_child(args, method):
    """One method's peak memory in this (fresh) process: printed as one line of JSON."""
    import json
    import gc

    from skrank.io._run_index import keep_index, kept_index

    runs = make_runs(args.runs, args.queries, args.docs, pool=args.doc_pool)
    if not args.plain:  # fresh arrays: kept as a reader keeps them (index, read-only)
        runs = [keep_index(r) for r in runs]
    gc.collect()
    columns = sum(getattr(r, c).nbytes for r in runs for c in r._COLUMNS)
    index = 0
    for r in runs:
        x = kept_index(r)
        if x is not None:
            index += sum(a.nbytes for a in (x.q_code, x.q_len, x.q_uniques, x.d_code,
                                            x.d_uniques, x._pos))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS (Linux)
    before = _rss_kib("VmRSS")
    tracemalloc.start()
    start = time.perf_counter()
    fused = _skrank_call(method)(runs)
    seconds = time.perf_counter() - start
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peak_rss = (_rss_kib("VmHWM") - before) * 1024
    print(json.dumps({"method": method, "columns": columns, "index": index, "traced": traced,
                      "rss": peak_rss, "seconds": seconds, "rows_out": len(fused)}))


def memory(args, methods):
    """Each method in a fresh process (``--memory-child``), its peak extra memory over
    the input runs' columns: by tracemalloc (numpy's buffers, the fused run included)
    and by the process's peak RSS (VmHWM, reset after the runs are built)."""
    import json
    import subprocess

    kind = "Runs of the caller's arrays (index computed in fuse)" if args.plain else \
        "Runs that keep their index, as the readers build them (not counted in the columns)"
    print(kind)
    print(f"{'method':<12}{'columns MiB':>12}{'index MiB':>10}{'traced MiB':>11}{'x':>6}"
          f"{'RSS MiB':>9}{'x':>6}{'s':>7}")
    for method in methods:
        cmd = [sys.executable, __file__, "--memory-child", method, "--runs", str(args.runs),
               "--queries", str(args.queries), "--docs", str(args.docs)]
        cmd += ["--plain"] if args.plain else []
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        mib = 2 ** 20
        print(f"{method:<12}{r['columns'] / mib:12.1f}{r['index'] / mib:10.1f}"
              f"{r['traced'] / mib:11.1f}{r['traced'] / r['columns']:6.2f}"
              f"{r['rss'] / mib:9.1f}{r['rss'] / r['columns']:6.2f}{r['seconds']:7.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--doc-pool", type=int, default=None,
                        help="draw each query's documents from this many ids (default: 3x "
                             "--docs, shared by the queries); e.g. 1500000, as a corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--methods", default=",".join(DEFAULT_METHODS))
    parser.add_argument("--no-ranx", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--plain", action="store_true")
    parser.add_argument("--memory-child", default=None)
    args = parser.parse_args(argv)
    if args.smoke:
        args.queries, args.docs, args.rounds = 50, 40, 2
    methods = [m for m in args.methods.split(",") if m]
    if args.memory_child:
        memory_child(args, args.memory_child)
        return 0
    n_rows = args.runs * args.queries * args.docs
    print(f"{args.runs} runs x {args.queries} queries x {args.docs} documents "
          f"({n_rows:,} rows)")
    if args.memory:
        memory(args, methods)
        return 0
    runs = make_runs(args.runs, args.queries, args.docs, pool=args.doc_pool)
    dicts = as_dicts(runs)
    start = time.perf_counter()
    loaded = to_skrank(dicts)
    print(f"skrank Run.from_dict (excluded): {time.perf_counter() - start:.1f} s")
    cases = [(("skrank", m), "skrank", _skrank_call(m)) for m in methods]
    cases += [(("plain", m), "plain", _skrank_call(m)) for m in methods]
    by_tool = {"skrank": loaded, "plain": runs}
    if not args.no_ranx:
        try:
            import ranx  # noqa: F401
        except ImportError:
            print("ranx is not installed: skrank alone")
            args.no_ranx = True
    if not args.no_ranx:
        start = time.perf_counter()
        by_tool["ranx"] = to_ranx(dicts)
        print(f"ranx.Run from dicts (excluded): {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        bad = check_values(loaded, by_tool["ranx"], methods)  # also warms ranx (numba)
        print(f"value check and ranx warm-up (compilation): {time.perf_counter() - start:.1f} s")
        if bad:
            for item in bad:
                print("MISMATCH", item)
            return 1
        cases += [(("ranx", m), "ranx", _ranx_call(m, args.runs)) for m in methods]
    del dicts
    for _, tool, call in cases:
        if tool != "ranx":
            call(by_tool[tool])  # warm-up
    times = interleaved(cases, by_tool, args.rounds)
    print(f"median of {args.rounds} interleaved rounds; skrank: Runs from Run.from_dict, "
          f"plain: Runs of the caller's arrays")
    print(f"{'method':<12}{'skrank s':>10}{'plain s':>10}{'ranx s':>10}{'ratio':>8}"
          f"{'plain':>8}")
    for m in methods:
        ours, plain = times[("skrank", m)], times[("plain", m)]
        theirs = times.get(("ranx", m))
        ratio = f"{theirs / ours:7.1f}x" if theirs else ""
        ratio_plain = f"{theirs / plain:7.1f}x" if theirs else ""
        theirs_text = f"{theirs:10.3f}" if theirs else f"{'':>10}"
        print(f"{m:<12}{ours:10.3f}{plain:10.3f}{theirs_text}{ratio:>8}{ratio_plain:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
