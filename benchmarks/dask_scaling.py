"""Memory per worker of skrank.dask.evaluate as the data grows 10x.

    python benchmarks/dask_scaling.py                      # 1M and 10M run rows
    python benchmarks/dask_scaling.py --rows 200000 --factor 5
    python benchmarks/dask_scaling.py --smoke              # tiny sizes

For each size, a Parquet data set is written to a temporary folder in files of
a fixed number of rows (so 10x the rows is 10x the files, not bigger files):
a run of ``rows`` rows whose query ids are scattered over every file (so the
shuffle by query has real work to do; 100 documents per query on average) and
qrels holding 10% of its rows with grades 1-3.  A fresh ``LocalCluster`` of
``--workers`` worker processes (one thread each) then runs
``skrank.dask.evaluate`` on ``dask.dataframe.read_parquet`` of both.  Each
worker's peak resident memory is read through the distributed client
(``client.run`` of ``getrusage``, Linux), with its resident memory just after
start-up for reference.  Peak memory per worker should stay about the same
when the data grows 10x; the wall time should grow about 10x.

The result is written to ``benchmarks/results/dask_scaling.json`` (``--json``;
not with ``--smoke``), which ``docs/performance.md``'s "Scaling out" section
quotes.  Memory counts as bounded when the largest worker's peak above its
start-up memory grows less than 2x while the data grows ``--factor`` times.

Not part of the benchmark suite or CI (it takes minutes at the default sizes).
"""

import argparse
import json
import os
import platform
import resource
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROWS_PER_FILE = 250_000
RESULTS = Path(__file__).resolve().parent / "results" / "dask_scaling.json"
BOUNDED = 2.0  # growth of the largest worker's peak above start-up allowed for --factor times the data
METRICS = ["ndcg@10", "map", "mrr", "precision@10", "recall@100"]


def write_data(folder, n_rows, rows_per_file, seed=0):
    """Run and qrels Parquet data sets of ``n_rows`` run rows; returns (qrels dir, run dir)."""
    rng = np.random.default_rng(seed)
    n_queries = max(n_rows // 100, 1)
    run_dir, qrels_dir = folder / "run", folder / "qrels"
    run_dir.mkdir()
    qrels_dir.mkdir()
    for i, start in enumerate(range(0, n_rows, rows_per_file)):
        size = min(rows_per_file, n_rows - start)
        qid = rng.integers(0, n_queries, size)
        doc = np.arange(start, start + size)  # unique, so no (query, doc) pair repeats
        score = np.round(rng.random(size), 3)  # some ties
        pq.write_table(pa.table({"query_id": qid, "doc_id": doc, "score": score}),
                       run_dir / f"part-{i:05d}.parquet")
        judged = rng.random(size) < 0.1
        pq.write_table(pa.table({"query_id": qid[judged], "doc_id": doc[judged],
                                 "relevance": rng.integers(1, 4, judged.sum())}),
                       qrels_dir / f"part-{i:05d}.parquet")
    return qrels_dir, run_dir


def _peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _rss_mib():
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def measure(n_rows, n_workers, rows_per_file, memory_limit, comm_buffer):
    import dask
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    import skrank.dask

    with tempfile.TemporaryDirectory() as tmp:
        qrels_dir, run_dir = write_data(Path(tmp), n_rows, rows_per_file)
        config = {} if comm_buffer is None else {"distributed.p2p.comm.buffer": comm_buffer}
        with dask.config.set(config), LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                          memory_limit=memory_limit, dashboard_address=":0",
                          silence_logs=50) as cluster, Client(cluster) as client:
            client.run(lambda: __import__("skrank.dask"))  # imports are not the data's cost
            start_rss = client.run(_rss_mib)
            qrels, run = dd.read_parquet(qrels_dir), dd.read_parquet(run_dir)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # missing/unjudged queries
                result = skrank.dask.evaluate(qrels, run, metrics=METRICS)
            seconds = time.perf_counter() - start
            peak = client.run(_peak_rss_mib)
            return {"rows": n_rows, "partitions": run.npartitions, "seconds": seconds,
                    "start_mib": sorted(start_rss.values()), "peak_mib": sorted(peak.values()),
                    "mean": result.mean}


def dask_default_buffer():
    import dask
    import distributed  # noqa: F401  (loads the distributed.* defaults)

    return dask.config.get("distributed.p2p.comm.buffer")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="run rows of the small size")
    parser.add_argument("--factor", type=int, default=10, help="the large size is this many times")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rows-per-file", type=int, default=ROWS_PER_FILE)
    parser.add_argument("--memory-limit", default="4GiB", help="per worker (dask's limit)")
    parser.add_argument("--comm-buffer", default=None,
                        help="dask's distributed.p2p.comm.buffer: the shuffle's in-memory "
                             "buffer per worker (default 1 GiB), e.g. 128MiB")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (a quick check)")
    parser.add_argument("--json", default=None, help=f"write the result here (default {RESULTS}; "
                                                     "none with --smoke)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rows, args.factor, args.rows_per_file = 20_000, 3, 5_000
    buffer = args.comm_buffer or dask_default_buffer()
    print(f"{args.workers} workers x 1 thread, memory_limit {args.memory_limit}, "
          f"shuffle comm buffer {buffer}, "
          f"{args.rows_per_file:,} rows per Parquet file, metrics {METRICS}")
    rows = []
    for n_rows in (args.rows, args.rows * args.factor):
        row = measure(n_rows, args.workers, args.rows_per_file, args.memory_limit,
                      args.comm_buffer)
        rows.append(row)
        print(f"{row['rows']:>12,} run rows  {row['partitions']:>4} partitions  "
              f"{row['seconds']:7.1f} s  worker RSS after start-up "
              f"{', '.join(f'{m:.0f}' for m in row['start_mib'])} MiB  peak "
              f"{', '.join(f'{m:.0f}' for m in row['peak_mib'])} MiB  "
              f"ndcg@10 {row['mean']['ndcg@10']:.4f}", flush=True)
    small, large = rows
    above = [max(p - s for p, s in zip(r["peak_mib"], r["start_mib"])) for r in rows]
    growth = above[1] / max(above[0], 1e-9)
    bounded = growth < BOUNDED
    print(f"{args.factor}x the rows: {large['seconds'] / small['seconds']:.1f}x the time, "
          f"{max(large['peak_mib']) / max(small['peak_mib']):.2f}x the largest worker peak, "
          f"{growth:.2f}x its growth above start-up ({above[0]:.0f} -> {above[1]:.0f} MiB): "
          f"{'PASS' if bounded else 'MISS'} (bounded: under {BOUNDED:g}x for {args.factor}x the data)")
    path = args.json or (None if args.smoke else RESULTS)
    if path:
        import dask

        Path(path).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "cpu_count": os.cpu_count(), "platform": platform.platform(), "dask": dask.__version__,
            "load_average": os.getloadavg(), "workers": args.workers, "rows_per_file": args.rows_per_file,
            "memory_limit": args.memory_limit, "comm_buffer": buffer, "metrics": METRICS, "factor": args.factor,
            "rows": [{k: v for k, v in r.items() if k != "mean"} | {"ndcg@10": r["mean"]["ndcg@10"]}
                     for r in rows],
            "peak_above_start_mib": above, "growth": growth, "bounded_goal": BOUNDED, "bounded": bounded,
        }, indent=1, default=float))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
