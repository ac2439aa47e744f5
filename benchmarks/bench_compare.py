"""Time of skrank.compare on a large comparison (printed, never asserted).

    python benchmarks/bench_compare.py            # 5 systems x 5,000 queries, 10,000 resamples
    python benchmarks/bench_compare.py --smoke    # tiny sizes

Each line times one configuration: the randomization test alone (t-intervals,
no bootstrap), the default (randomization test + BCa bootstrap intervals),
the paired bootstrap test, the t-test, and the randomized Tukey HSD.  The
resampling is vectorised over all comparisons: one matrix product per batch
of sign vectors or bootstrap counts, no Python loop per resample.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tools import median_time  # noqa: E402

import skrank  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    n_queries, n_systems, n_resamples = (200, 3, 500) if args.smoke else (5_000, 5, 10_000)
    rng = np.random.default_rng(0)
    qid = np.arange(n_queries)
    base = rng.random(n_queries)
    results = {f"system{i}": (qid, np.clip(base + 0.01 * i + rng.normal(scale=0.1, size=n_queries), 0, 1))
               for i in range(n_systems)}
    n_pairs = n_systems * (n_systems - 1) // 2
    print(f"{n_systems} systems ({n_pairs} pairs) x {n_queries} queries, "
          f"{n_resamples} resamples; median of 3 after a warm-up")
    configs = [
        ("randomization test, t-intervals", dict(test="randomization", interval="t")),
        ("randomization test, BCa intervals (default)", dict(test="randomization")),
        ("bootstrap test, BCa intervals", dict(test="bootstrap")),
        ("t-test, t-intervals", dict(test="t")),
        ("randomization + Tukey HSD, t-intervals", dict(correction="tukey", interval="t")),
    ]
    for label, kw in configs:
        seconds = median_time(lambda: skrank.compare(results, n_resamples=n_resamples,
                                                     random_state=0, **kw), repeats=3)
        print(f"{label:<46}{seconds:8.3f} s")


if __name__ == "__main__":
    main()
