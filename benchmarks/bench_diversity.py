"""alpha-nDCG@20 of skrank.diversity against ndeval (pyndeval through ir_measures).

A diversity collection of ``--queries`` queries x ``--docs`` judged and retrieved
documents x ``--subtopics`` subtopics (each document covers each subtopic with
probability ``--coverage``; a query's non-covering documents are judged 0 on its
first subtopic), tied scores included.  Both sides start from the same pandas
DataFrames (ir_measures' input) and return per-query values, which are checked
equal to 1e-9.  Rounds alternate which side runs first; the median of the rounds
is reported.  The machine is shared: numbers move by tens of percent between runs.

    python benchmarks/bench_diversity.py [--queries 10000] [--docs 100] [--subtopics 10]
                                          [--rounds 3]
"""

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skrank import diversity


def collection(n_queries, n_docs, n_subtopics, coverage, seed=0):
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_queries), n_docs)
    d = np.tile(np.arange(n_docs), n_queries)
    covers = rng.random((q.size, n_subtopics)) < coverage
    rows, subtopics = np.nonzero(covers)
    none = np.flatnonzero(~covers.any(axis=1))
    qid = np.char.add("q", q.astype(str))
    doc = np.char.add("d", d.astype(str))
    qrels = pd.DataFrame({
        "query_id": np.concatenate([qid[rows], qid[none]]),
        "iteration": np.concatenate([(subtopics + 1).astype(str), np.full(none.size, "1")]),
        "doc_id": np.concatenate([doc[rows], doc[none]]),
        "relevance": np.concatenate([np.ones(rows.size, int), np.zeros(none.size, int)]),
    })
    run = pd.DataFrame({"query_id": qid, "doc_id": doc,
                        "score": rng.integers(0, 50, q.size).astype(float)})
    return qrels, run


def run_skrank(qrels, run):
    res = diversity.evaluate(qrels, run, ["alpha_ndcg@20"])
    return dict(zip(res.qid.tolist(), res.per_query["alpha_ndcg@20"].tolist()))


def run_ndeval(qrels, run):
    import ir_measures

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {m.query_id: m.value for m in ir_measures.iter_calc(
            [ir_measures.parse_measure("alpha_nDCG@20")], qrels, run)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--subtopics", type=int, default=10)
    parser.add_argument("--coverage", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    qrels, run = collection(args.queries, args.docs, args.subtopics, args.coverage)
    print(f"{args.queries} queries x {args.docs} documents x {args.subtopics} subtopics: "
          f"{len(qrels)} qrels rows, {len(run)} run rows")
    sides = {"skrank": run_skrank, "ndeval (ir_measures)": run_ndeval}
    times = {name: [] for name in sides}
    values = {}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for name in order:
            start = time.perf_counter()
            values[name] = sides[name](qrels, run)
            times[name].append(time.perf_counter() - start)
    a, b = values["skrank"], values["ndeval (ir_measures)"]
    assert set(a) == set(b) and all(abs(a[q] - b[q]) < 1e-9 for q in a), "values differ"
    for name, t in times.items():
        print(f"{name:>22}: median {statistics.median(t):.2f} s  (rounds: "
              f"{', '.join(f'{x:.2f}' for x in t)})")
    print(f"per-query values equal to 1e-9 on all {len(a)} queries")


if __name__ == "__main__":
    main()
