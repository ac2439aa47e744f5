"""The recommender's 2-D form: time against one ``np.argsort(S, axis=1)`` and memory.

    python benchmarks/matrix_form.py                    # 1,000 users x 20,000 items
    python benchmarks/matrix_form.py --users 5000       # the issue's size (minutes)
    python benchmarks/matrix_form.py --ties stable      # ties in column order
    python benchmarks/matrix_form.py --compare          # and the engine's route, same rounds
    python benchmarks/matrix_form.py --smoke

A float32 score matrix ``S`` (users x items), sparse test items (0.1% of the
cells, grades 1-3), sparse training items to ``exclude`` (0.5%); for each form
(dense ``y_true`` / sparse ``y_true``, with and without ``exclude``) and each
metric: the time of ``evaluate`` interleaved with ``np.argsort(S, axis=1)``
(median of ``--rounds``), and the peak memory beyond the inputs, measured by
tracemalloc (NumPy reports its allocations to it) in a separate pass, as a
multiple of ``S.nbytes``.  Targets (issue 27): memory under 2x the score
matrix, time within 2x of the argsort.  ``--compare`` also times, in the same
interleaved rounds, the same calls with every block ranked whole by the engine
(the route before blocks were read at their labelled items, ``row_ranks``).
"""

import argparse
import sys
import time
import tracemalloc
import warnings

import numpy as np

import skrank
import skrank._plan as _plan

METRICS = (["ndcg@10"], ["map"], ["ndcg"], ["mrr"],
           ["ndcg@10", "recall@10", "precision@10", "map", "mrr", "ndcg"])


def matrices(n_users, n_items, seed=0):
    from scipy import sparse

    rng = np.random.default_rng(seed)
    S = rng.random((n_users, n_items), dtype=np.float32)
    Y = sparse.random(n_users, n_items, density=0.001, random_state=seed + 1, format="csr")
    Y.data[:] = rng.integers(1, 4, Y.data.size)
    E = sparse.random(n_users, n_items, density=0.005, random_state=seed + 2, format="csr")
    E.data[:] = 1.0
    return S, Y, E


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ties", default="average", choices=("average", "stable"))
    parser.add_argument("--compare", action="store_true",
                        help="also time every block ranked whole by the engine")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    users, items, rounds = (60, 500, 1) if args.smoke else (args.users, args.items, args.rounds)
    S, Y, E = matrices(users, items)
    forms = {"sparse y_true + exclude": (Y, E), "sparse y_true": (Y, None),
             "dense y_true": (Y.toarray(), None)}
    print(f"{users:,} users x {items:,} items, float32 S = {S.nbytes / 2**20:.0f} MiB; "
          f"median of {rounds} rounds interleaved with np.argsort(S, axis=1) (shared machine: "
          f"noisy); ties={args.ties!r}")
    print(f"{'form':26s} {'metrics':40s} {'time':>8s} {'/argsort':>9s} {'peak/S':>7s}"
          + (f" {'engine':>8s} {'/argsort':>9s}" if args.compare else ""))
    direct_block = _plan.direct_block
    missed = 0
    warnings.simplefilter("ignore")
    for form, (y_true, exclude) in forms.items():
        for metrics in METRICS:
            def call():
                return skrank.evaluate(y_true, S, exclude=exclude, metrics=metrics,
                                       ties=args.ties)

            def engine():   # every block ranked whole (no route at the labelled items)
                _plan.direct_block = lambda p: None
                try:
                    return call()
                finally:
                    _plan.direct_block = direct_block

            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            call()
            peak = (tracemalloc.get_traced_memory()[1] - before) / S.nbytes
            tracemalloc.stop()
            runs = [call, lambda: np.argsort(S, axis=1)] + ([engine] if args.compare else [])
            times = [[] for _ in runs]
            for r in range(rounds):
                for which in (range(len(runs)) if r % 2 == 0 else reversed(range(len(runs)))):
                    t0 = time.perf_counter()
                    runs[which]()
                    times[which].append(time.perf_counter() - t0)
            t, a = float(np.median(times[0])), float(np.median(times[1]))
            label = ", ".join(metrics) if len(metrics) < 3 else f"evaluate of {len(metrics)}"
            ok = peak < 2 and t / a <= 2
            missed += not ok
            extra = ""
            if args.compare:
                e = float(np.median(times[2]))
                extra = f" {e:7.2f}s {e / a:8.2f}x"
            print(f"{form:26s} {label:40s} {t:7.2f}s {t / a:8.2f}x {peak:6.2f}x{extra}"
                  f"{'' if ok else '  MISS'}")
    print(f"{missed} of {len(forms) * len(METRICS)} calls miss a target (memory < 2x S, "
          f"time <= 2x argsort)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
