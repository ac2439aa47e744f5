"""Many small queries of uneven sizes (issue 27): log-normal sizes against uniform ones.

    python benchmarks/many_small_queries.py               # 1M rows, median 32, 9 rounds
    python benchmarks/many_small_queries.py --median 16   # smaller queries
    python benchmarks/many_small_queries.py --smoke

Log-normal query sizes (``_workloads.lognormal``: median 32, about 18,000 queries,
the largest about 1,300, graded labels, tie-free float scores, grouped rows)
against the same number of rows in 100-document queries, flat (``qid``) and 2-D,
for each metric of ``tie_patterns.CALLS``; and the log-normal sizes read to a depth
by the route before (``_WHOLE_PER_K = 0``: each query longer than 2k bounded by
slice maxima, then its kept rows sorted), so that before and after come from the
same rounds.  Times are CPU time of the process (``time.process_time``), so that
other jobs on a shared machine count less than in wall time; the median of
``--rounds`` rounds in rotated order.  Targets: within 1.3x of uniform flat and
1.5x of the 2-D form.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _workloads as W  # noqa: E402
from tie_patterns import CALLS, interleaved  # noqa: E402

from skrank._engine import segments as S  # noqa: E402


def bounded(call):
    """``call`` with every uneven query longer than 2k bounded (the route before)."""
    def run():
        kept = S._WHOLE_PER_K
        S._WHOLE_PER_K = 0
        try:
            return call()
        finally:
            S._WHOLE_PER_K = kept
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--median", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    rows, rounds = (20_000, 2) if args.smoke else (args.rows, args.rounds)
    small = W.lognormal(rows, seed=4, median=args.median)
    n_docs = 100
    uni = W.uniform(rows // n_docs, n_docs, seed=4, labels="graded")
    Y2, S2 = uni.y_true.reshape(-1, n_docs), uni.y_score.reshape(-1, n_docs)
    print(f"{small.description}; against {rows // n_docs:,} queries of {n_docs}; CPU time, "
          f"median of {rounds} rotated rounds (a shared machine: ratios are noisy)")
    print(f"{'metric':12s} {'log-normal':>10s} {'before':>8s} {'uniform':>8s} {'2-D':>8s} "
          f"{'/uniform':>9s} {'/2-D':>6s} {'before/uniform':>15s} {'before/2-D':>11s}")
    missed = 0
    for metric, call in CALLS.items():
        calls = {"lognormal": lambda c=call: c(small.y_true, small.y_score, small.qid),
                 "before": bounded(lambda c=call: c(small.y_true, small.y_score, small.qid)),
                 "uniform": lambda c=call: c(uni.y_true, uni.y_score, uni.qid),
                 "2-D": lambda c=call: c(Y2, S2, None)}
        t = interleaved(calls, rounds, clock=time.process_time)
        vs_uniform, vs_2d = t["lognormal"] / t["uniform"], t["lognormal"] / t["2-D"]
        ok = vs_uniform <= 1.3 and vs_2d <= 1.5
        missed += not ok
        print(f"{metric:12s} {t['lognormal'] * 1e3:8.1f}ms {t['before'] * 1e3:6.1f}ms "
              f"{t['uniform'] * 1e3:6.1f}ms {t['2-D'] * 1e3:6.1f}ms {vs_uniform:8.2f}x "
              f"{vs_2d:5.2f}x {t['before'] / t['uniform']:14.2f}x {t['before'] / t['2-D']:10.2f}x"
              f"{'' if ok else '  MISS'}")
    print(f"{missed} of {len(CALLS)} metrics miss a target (1.3x of uniform, 1.5x of 2-D)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
