"""skrank on CuPy arrays and CUDA tensors against its NumPy values, with timings.

    python benchmarks/gpu_namespaces.py             # 1M rows, CuPy and PyTorch (CUDA)
    python benchmarks/gpu_namespaces.py --smoke     # 10,000 rows; PyTorch CPU without a GPU

Workload: ``benchmarks/gpu.py``'s (queries of 100 documents, labels in {0, 1, 2},
scores rounded to two decimals, float64), in two layouts: rows grouped by sorted
query ids (the matrix route of the device path) and the same rows shuffled (the
general route: one stable sort per key, ids factorised with ``unique_inverse``).
Each namespace runs ``ndcg_score(k=10)``, ``map_score``, ``mrr_score`` and
``evaluate`` (nDCG@10, MAP, MRR, P@10, recall@10, hit_rate@10, rbp, err), plus
``ties="pessimistic"`` nDCG@10 and float32 input, and each value is compared
with the NumPy path's (1e-9 relative in float64, 1e-5 in float32).  Times: the
first call (kernel compilation: CuPy compiles each kernel on first use) and
the median of three after it, synchronised.  A namespace that is missing or
fails is reported with its traceback, and the others still run; the exit
status is 1 when any value disagrees or any call fails.
"""

import argparse
import statistics
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, __file__.rpartition("/")[0] or ".")

from gpu import _workload  # noqa: E402

import skrank  # noqa: E402

METRICS = ["ndcg@10", "map", "mrr", "P@10", "recall@10", "hit_rate@10", "rbp", "err"]


def _namespaces(smoke):
    """(name, put, sync) of each namespace there is a device for."""
    found = []
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append(("cupy", cupy.asarray,
                          lambda: cupy.cuda.Device().synchronize()))
    except Exception as exc:  # not installed, or no driver / device
        print(f"CuPy: not run ({type(exc).__name__}: {exc})")
    try:
        import torch
    except ImportError:
        print("PyTorch: not installed")
    else:
        if torch.cuda.is_available():
            found.append(("torch cuda", lambda v: torch.as_tensor(v, device="cuda"),
                          torch.cuda.synchronize))
        elif smoke:
            found.append(("torch cpu", torch.as_tensor, lambda: None))
        else:
            print("PyTorch: no CUDA device")
    return found


def _cases(y_true, y_score, qid):
    """name -> function of (y_true, y_score, qid) giving a float (or a dict of floats)."""
    return {
        "ndcg_score(k=10)": lambda t, s, q: skrank.ndcg_score(t, s, qid=q, k=10),
        "map_score": lambda t, s, q: skrank.map_score(t, s, qid=q),
        "mrr_score": lambda t, s, q: skrank.mrr_score(t, s, qid=q),
        "ndcg_score(k=10, ties=pessimistic)":
            lambda t, s, q: skrank.ndcg_score(t, s, qid=q, k=10, ties="pessimistic"),
        "evaluate(8 metrics)":
            lambda t, s, q: skrank.evaluate(t, s, qid=q, metrics=METRICS).mean,
    }


def _close(got, expected, tol):
    if isinstance(expected, dict):
        return all(_close(got[name], value, tol) for name, value in expected.items())
    return type(got) is float and abs(got - expected) <= tol * max(1.0, abs(expected))


def run(n_queries, n_docs, smoke):
    y_true, y_score, qid = _workload(n_queries, n_docs)
    shuffle = np.random.default_rng(1).permutation(qid.shape[0])
    layouts = {"sorted ids": (y_true, y_score, qid),
               "shuffled rows": (y_true[shuffle], y_score[shuffle], qid[shuffle])}
    failures = []
    print(f"{n_queries * n_docs:,} rows ({n_queries:,} queries x {n_docs} documents); "
          f"times in ms: first call, then the median of 3")
    for ns_name, put, sync in _namespaces(smoke):
        for layout, (t, s, q) in layouts.items():
            for dtype, tol in ((np.float64, 1e-9), (np.float32, 1e-5)):
                if dtype is np.float32 and layout != "sorted ids":
                    continue
                host_s = s.astype(dtype).astype(np.float64)  # what float32 scores hold
                try:
                    args = (put(t.astype(dtype)), put(s.astype(dtype)), put(q))
                    sync()
                except Exception:
                    failures.append(f"{ns_name}: arrays not made")
                    traceback.print_exc()
                    continue
                for name, fn in _cases(t, s, q).items():
                    if dtype is np.float32 and name.startswith("evaluate"):
                        continue
                    label = f"{ns_name:10s} {layout:13s} {np.dtype(dtype).name:7s} {name}"
                    try:
                        t0 = time.perf_counter()
                        got = fn(*args)
                        sync()
                        first = time.perf_counter() - t0
                        times = []
                        for _ in range(3):
                            t0 = time.perf_counter()
                            fn(*args)
                            sync()
                            times.append(time.perf_counter() - t0)
                        expected = fn(t, host_s, q)
                    except Exception as exc:
                        failures.append(f"{label}: {type(exc).__name__}: {exc}")
                        print(f"  {label:70s} FAILED")
                        traceback.print_exc()
                        continue
                    ok = _close(got, expected, tol)
                    if not ok:
                        failures.append(f"{label}: {got!r} != NumPy's {expected!r}")
                    print(f"  {label:70s} {first * 1e3:9.1f} {statistics.median(times) * 1e3:9.2f}"
                          f"  {'same as NumPy' if ok else 'VALUE MISMATCH'}")
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="10,000 rows")
    args = parser.parse_args(argv)
    failures = run(*((100, 100) if args.smoke else (10_000, 100)), smoke=args.smoke)
    for failure in failures:
        print("FAILURE:", failure)
    print("all values agree with NumPy" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
