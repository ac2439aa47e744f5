"""Exact ties on real tie patterns, and many small queries (issue 27).

    python benchmarks/tie_patterns.py                 # 1M rows (10,000 x 100), minutes
    python benchmarks/tie_patterns.py --rows 10000000 # 10M rows
    python benchmarks/tie_patterns.py --smoke         # tiny, seconds (checks that it runs)
    python benchmarks/tie_patterns.py --cpu --ties-only   # CPU time of the process, no log-normal table

For each tie pattern of ``_workloads.TIE_PATTERNS`` (scores rounded to 2
decimals; float32 rounded to 3; integers 0-10; half of each query tied at one
score) and each metric (nDCG@10, nDCG, MAP, MRR, ``evaluate`` of 6 metrics)
under ``ties="average"``: the time against the same call on tie-free scores of
the same data (the pattern's normal scores before their rounding), and MAP and ``evaluate`` against nDCG@10 on the same tied
data, grouped rows and shuffled rows.  Then log-normal query sizes (median 32)
against the same rows in 100-document queries (flat and 2-D).

Every ratio comes from calls interleaved in rotated order, the median of
``--rounds`` rounds: the machine is shared, so single timings are noise.  ``--cpu``
times the CPU time of the process (``time.process_time``) instead of wall time, so
that other jobs on a shared machine count less.
Prints the table and each target as PASS/MISS; ``--json PATH`` writes them.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _workloads as W  # noqa: E402

import skrank  # noqa: E402

EVAL6 = ["ndcg@10", "ndcg_exp@10", "map", "mrr", "precision@10", "recall@10"]
CALLS = {
    "ndcg@10": lambda y, s, q: skrank.ndcg_score(y, s, qid=q, k=10),
    "ndcg": lambda y, s, q: skrank.ndcg_score(y, s, qid=q),
    "map": lambda y, s, q: skrank.map_score(y, s, qid=q),
    "mrr": lambda y, s, q: skrank.mrr_score(y, s, qid=q),
    "evaluate(6)": lambda y, s, q: skrank.evaluate(y, s, qid=q, metrics=EVAL6),
}


CLOCK = time.perf_counter   # time.process_time with --cpu


def interleaved(calls, rounds, clock=None):
    """Median time of each call of ``calls`` (name -> function), ``rounds`` rotated rounds
    (``clock``: the timer, :data:`CLOCK` by default)."""
    clock = clock or CLOCK
    names = list(calls)
    times = {name: [] for name in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:  # warm-up
            calls[name]()
        for r in range(rounds):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                t0 = clock()
                calls[name]()
                times[name].append(clock() - t0)
    return {name: float(np.median(v)) for name, v in times.items()}


def tie_table(n_queries, n_docs, rounds, log, layouts=("grouped", "shuffled")):
    wl = W.uniform(n_queries, n_docs, seed=3, labels="graded")
    perm = np.random.default_rng(7).permutation(wl.n_rows)
    # The baseline is the patterns' own scores before rounding: the same distribution and
    # ranking without the ties (wl.y_score, uniform in [0, 1), sorts faster than normal
    # scores with their negative half, which is not a cost of the ties).
    free = W.tie_pattern_scores(wl, "tie_free")
    rows, targets = [], []
    for layout in layouts:
        for pattern in W.TIE_PATTERNS:
            tied = W.tie_pattern_scores(wl, pattern)
            data = {"free": (wl.y_true, free, wl.qid), "tied": (wl.y_true, tied, wl.qid)}
            if layout == "shuffled":
                data = {k: tuple(a[perm] for a in v) for k, v in data.items()}
            calls = {(metric, kind): (lambda c=call, a=arrays: c(*a))
                     for metric, call in CALLS.items() for kind, arrays in data.items()}
            t = interleaved(calls, rounds)
            row = {"layout": layout, "pattern": pattern}
            for metric in CALLS:
                row[metric] = t[(metric, "tied")] / t[(metric, "free")]
                row[metric + " s"] = t[(metric, "tied")]
                targets.append((f"{layout} {pattern}: {metric} tied within 1.3x of tie-free",
                                row[metric], 1.3))
            for metric, goal in (("map", 1.5), ("evaluate(6)", 2.0)):
                r = t[(metric, "tied")] / t[("ndcg@10", "tied")]
                row[metric + " / ndcg@10"] = r
                targets.append((f"{layout} {pattern}: {metric} within {goal}x of nDCG@10 (tied)",
                                r, goal))
            rows.append(row)
            log(f"{layout:8s} {pattern:10s} " + " ".join(
                f"{m} {row[m]:.2f}x" for m in CALLS) + f" | map/ndcg@10 {row['map / ndcg@10']:.2f}x"
                f" evaluate/ndcg@10 {row['evaluate(6) / ndcg@10']:.2f}x")
    return rows, targets


def lognormal_table(total, rounds, log):
    """Log-normal sizes (median 32) against the same rows in 100-document queries."""
    small = W.lognormal(total, seed=4)
    n_docs = 100
    uni = W.uniform(total // n_docs, n_docs, seed=4, labels="graded")
    Y2, S2 = uni.y_true.reshape(-1, n_docs), uni.y_score.reshape(-1, n_docs)
    rows, targets = [], []
    for metric, call in CALLS.items():
        calls = {"lognormal": lambda c=call: c(small.y_true, small.y_score, small.qid),
                 "uniform": lambda c=call: c(uni.y_true, uni.y_score, uni.qid),
                 "2-D": lambda c=call: c(Y2, S2, None)}
        t = interleaved(calls, rounds)
        row = {"metric": metric, **{k + " s": v for k, v in t.items()},
               "vs uniform": t["lognormal"] / t["uniform"], "vs 2-D": t["lognormal"] / t["2-D"]}
        rows.append(row)
        targets.append((f"log-normal sizes: {metric} within 1.3x of uniform flat",
                        row["vs uniform"], 1.3))
        targets.append((f"log-normal sizes: {metric} within 1.5x of the 2-D form",
                        row["vs 2-D"], 1.5))
        log(f"lognormal {metric:12s} {t['lognormal'] * 1e3:7.1f} ms  uniform "
            f"{t['uniform'] * 1e3:7.1f} ms ({row['vs uniform']:.2f}x)  2-D "
            f"{t['2-D'] * 1e3:7.1f} ms ({row['vs 2-D']:.2f}x)")
    return {"description": small.description, "rows": rows}, targets


def run(rows, rounds, log=print, layouts=("grouped", "shuffled"), lognormal=True):
    """``(tables, targets)``: each target ``(name, measured ratio, goal)``."""
    ties, targets = tie_table(rows // 100, 100, rounds, log, layouts)
    if not lognormal:
        return {"ties": ties}, targets
    lognormal, more = lognormal_table(rows, rounds, log)
    return {"ties": ties, "lognormal": lognormal}, targets + more


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--grouped-only", action="store_true", help="skip the shuffled rows")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--cpu", action="store_true",
                        help="time the CPU time of the process, not wall time")
    parser.add_argument("--ties-only", action="store_true", help="skip the log-normal table")
    parser.add_argument("--json", help="write the tables and targets to this file")
    args = parser.parse_args(argv)
    rows, rounds = (4_000, 2) if args.smoke else (args.rows, args.rounds)
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    print(f"tie patterns and many small queries, {rows:,} rows, median of {rounds} interleaved "
          f"rounds of {'CPU' if args.cpu else 'wall'} time (a shared machine: ratios are noisy)")
    tables, targets = run(rows, rounds, layouts=("grouped",) if args.grouped_only
                          else ("grouped", "shuffled"), lognormal=not args.ties_only)
    missed = 0
    for name, measured, goal in targets:
        met = measured <= goal
        missed += not met
        print(f"   {'PASS' if met else 'MISS'} {measured:5.2f}x (goal <= {goal}x): {name}")
    print(f"{len(targets) - missed} of {len(targets)} targets met")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "rows": rows, "rounds": rounds, "clock": "cpu" if args.cpu else "wall", **tables,
            "targets": [{"target": n, "measured": m, "goal": g, "met": m <= g}
                        for n, m, g in targets]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
