"""Time skrank.datasets.make_ranking on 1,000,000 rows (median of 5 after a warm-up).

``python benchmarks/datasets.py [--rows 1000000]``
"""

import argparse

from _tools import median_time

from skrank.datasets import make_ranking


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    n_queries = max(1, args.rows // 50)          # n_docs=(1, 99): 50 rows per query on average
    for ties in (0.0, 0.2):
        seconds = median_time(lambda: make_ranking(n_queries=n_queries, n_docs=(1, 99),
                                                   ties=ties, random_state=0), repeats=5)
        X, _, _ = make_ranking(n_queries=n_queries, n_docs=(1, 99), ties=ties, random_state=0)
        print(f"make_ranking: {X.shape[0]:,} rows x {X.shape[1]} features, ties={ties}: "
              f"{seconds:.2f} s")


if __name__ == "__main__":
    main()
