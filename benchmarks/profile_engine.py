"""Where skrank's time goes: profile ndcg_score(k=10) on the benchmark workloads.

    python benchmarks/profile_engine.py                  # uniform 1M and ragged 1M
    python benchmarks/profile_engine.py --rows 10000000  # uniform at another size too
    python benchmarks/profile_engine.py --metric map --lines

Prints cProfile's functions by own time and, with ``--lines`` and
line_profiler installed (``pip install line_profiler``), per-line timings of
every function in skrank's grouping, kernel, metric and validation modules.
Not part of the suite's run; a tool for optimising the engine.
"""

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _workloads as W  # noqa: E402
from _tools import median_time  # noqa: E402

import skrank  # noqa: E402

CALLS = {
    "ndcg@10": lambda y, s, q: skrank.ndcg_score(y, s, qid=q, k=10),
    "ndcg_exp@10": lambda y, s, q: skrank.ndcg_score(y, s, qid=q, k=10, gain="exponential"),
    "map": lambda y, s, q: skrank.map_score(y, s, qid=q),
    "mrr": lambda y, s, q: skrank.mrr_score(y, s, qid=q),
    "evaluate(6)": lambda y, s, q: skrank.evaluate(
        y, s, qid=q, metrics=["ndcg@10", "ndcg_exp@10", "map", "mrr", "precision@10", "recall@10"]),
}


def profile(name, wl, metric, lines, top):
    call = CALLS[metric]
    y, s, q = wl.y_true, wl.y_score, wl.qid
    fn = lambda: call(y, s, q)  # noqa: E731
    t = median_time(fn)
    t_sort = median_time(lambda: np.sort(s))
    print(f"\n### {name}: {wl.summary()}")
    print(f"{metric}: median {t * 1e3:.1f} ms; np.sort(y_score) {t_sort * 1e3:.1f} ms "
          f"(ratio {t / t_sort:.2f})\n")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5):
        fn()
    pr.disable()
    out = io.StringIO()
    stats = pstats.Stats(pr, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    print("cProfile, 5 calls, by own time:")
    print(text[text.find("   ncalls"):].rstrip())
    if lines:
        try:
            from line_profiler import LineProfiler
        except ImportError:
            print("\n(line timings need `pip install line_profiler`)")
            return
        from skrank import _metrics
        from skrank._engine import codes, groups, kernels, measures, ranking, segments
        from skrank import _metrics

        lp = LineProfiler()
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for mod in (codes, groups, segments, ranking, kernels, measures, _metrics):
                lp.add_module(mod)
        wrapped = lp(fn)
        for _ in range(3):
            wrapped()
        out = io.StringIO()
        lp.print_stats(stream=out, stripzeros=True, output_unit=1e-3)
        print("\nline timings (3 calls, ms):")
        print(_trim_line_stats(out.getvalue(), min_ms=3 * t * 1e3 * 0.01))


def _trim_line_stats(text, min_ms):
    """Keep functions and lines that take at least ``min_ms`` in all (1% of the calls)."""
    keep = []
    for block in text.split("Total time:")[1:]:
        total_ms = float(block.split()[0]) * 1e3
        if total_ms < min_ms:
            continue
        function = next((ln.strip() for ln in block.splitlines() if ln.startswith("Function:")), "")
        rows = [f"{function}  (total {total_ms:.1f} ms)",
                "  line      hits     ms   % time  source"]
        for line in block.partition("=" * 10)[2].splitlines():
            parts = line.split(None, 5)
            if len(parts) >= 6 and parts[0].isdigit():
                try:
                    ms = float(parts[2])
                except ValueError:
                    continue
                if ms >= min_ms:
                    rows.append(f"  {parts[0]:>5} {parts[1]:>8} {ms:8.1f} {parts[4]:>6}  {parts[5].strip()}")
        keep.append("\n".join(rows))
    return "\n\n".join(keep)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metric", default="ndcg@10", choices=sorted(CALLS))
    parser.add_argument("--rows", type=int, action="append", default=[],
                        help="extra uniform sizes (rows, multiple of 100)")
    parser.add_argument("--lines", action="store_true", help="per-line timings (line_profiler)")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    print(f"skrank {skrank.__version__}, numpy {np.__version__}")
    profile("uniform", W.uniform(10_000, 100, seed=0), args.metric, args.lines, args.top)
    profile("ragged", W.ragged(1_000_000, 100_000, seed=2), args.metric, args.lines, args.top)
    profile("ties", W.uniform(10_000, 100, seed=3, labels="graded", scores="int", name="ties"),
            args.metric, args.lines, args.top)
    for rows in args.rows:
        profile(f"uniform {rows:,}", W.uniform(rows // 100, 100, seed=0), args.metric, args.lines, args.top)


if __name__ == "__main__":
    main()
