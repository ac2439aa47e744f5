"""Run by tests/test_torch_metrics.py: three CPU processes (gloo) check that
skrank.torch's metrics give, on every process, skrank.evaluate's values on the
concatenation of every process's rows (rank order, then arrival order).

Usage: python _torch_dist_worker.py INIT_FILE.  Exits 0 when every check holds
(each process raises otherwise; torch.multiprocessing.spawn reports it).
"""

import sys

import numpy as np

WORLD = 3
METRICS = ["ndcg@3", "map", "mrr(ties=pessimistic)", "precision(ties=stable)@2"]


def rows_of(seed, n_rows_per_rank):
    """The rows each rank sees (the same on every process: generated from the seed),
    as a list per rank of batches ``(y_true, y_score, qid)``; queries cross ranks and
    batches; a rank with 0 rows has no batch."""
    import torch

    rng = np.random.default_rng(seed)
    out = []
    for n in n_rows_per_rank:
        batches = []
        done = 0
        while done < n:
            m = int(min(n - done, rng.integers(1, 7)))
            y = torch.tensor(rng.integers(0, 3, size=m), dtype=torch.float32)
            s = torch.tensor(np.round(rng.normal(size=m), 1), dtype=torch.float32)
            q = torch.tensor(rng.integers(0, 6, size=m), dtype=torch.int64)
            batches.append((y, s, q))
            done += m
        out.append(batches)
    return out


def expected(per_rank, ranks, **options):
    import torch

    import skrank

    batches = [b for r in ranks for b in per_rank[r]]
    y, s, q = (torch.cat(column) for column in zip(*batches))
    return skrank.evaluate(y, s, qid=q, metrics=METRICS, **options).mean


def check(got, want, where):
    assert set(got) == set(want), where
    for label, value in want.items():
        g = float(got[label])
        assert g == value or (np.isnan(g) and np.isnan(value)), (where, label, g, value)


def worker(rank, init_file):
    import torch.distributed as dist

    from skrank.torch import RankingMetrics, TorchmetricsRankingMetrics

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=WORLD)
    try:
        # three processes, uneven sizes, the last one without rows
        per_rank = rows_of(0, [17, 5, 0])
        for options in ({}, {"ties": "stable"}, {"no_relevant": "skip"}):
            m = RankingMetrics(METRICS, **options)
            for batch in per_rank[rank]:
                m.update(*batch)
            check(m.compute(), expected(per_rank, range(WORLD), **options), (rank, options))
        # torchmetrics' Metric, the same rows
        tm = TorchmetricsRankingMetrics(METRICS)
        for batch in per_rank[rank]:
            tm.update(*batch)
        check(tm.compute(), expected(per_rank, range(WORLD)), (rank, "torchmetrics"))
        # two processes: a group of ranks 0 and 1 (every rank creates it)
        pair = dist.new_group([0, 1])
        per_rank = rows_of(1, [4, 11, 3])
        if rank < 2:
            m = RankingMetrics(METRICS, ties="stable", process_group=pair)
            for batch in per_rank[rank]:
                m.update(*batch)
            check(m.compute(), expected(per_rank, [0, 1], ties="stable"), (rank, "pair"))
        # no rows anywhere: the same error on every process, no hang
        empty = RankingMetrics(METRICS)
        try:
            empty.compute()
        except ValueError as exc:
            assert "no process saw any row" in str(exc)
        else:
            raise AssertionError("compute() without rows did not raise")
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    import multiprocessing

    import torch
    import torch.multiprocessing as mp

    import skrank
    import skrank.torch  # noqa: F401
    import torchmetrics  # noqa: F401

    # Imported (and skrank's lazy modules loaded) once, here: forked processes inherit
    # them, where spawned ones would import torch again each (seconds apiece).
    skrank.evaluate(torch.tensor([1.0, 0.0]), torch.tensor([0.5, 0.2]),
                    qid=torch.tensor([0, 0]), metrics=METRICS)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    mp.start_processes(worker, args=(sys.argv[1],), nprocs=WORLD, join=True,
                       start_method=method)
    print("ok")
