"""Cost of one evaluation round of skrank.gbdt's metrics against one skrank.evaluate call.

    python benchmarks/bench_gbdt.py [--queries 10000] [--docs 100] [--rounds 7] [--out FILE]

On ``queries * docs`` rows (1,000,000 by default, rows contiguous by query as
the libraries hold them), each round calls, in rotated order:

* ``evaluate``: one ``skrank.evaluate(y, scores, qid=qid, metrics=...)``;
* ``xgboost round``: the ``xgboost_metric`` callable on a ``DMatrix``, as
  ``xgb.train`` calls it (labels and groups read from the DMatrix each round);
* ``lightgbm round``: the ``lightgbm_metric`` callable on a ``Dataset``, as
  ``lgb.train(feval=...)`` calls it;
* ``xgboost built-in``: XGBoost's own evaluation of ``ndcg@10`` (``Booster.eval``
  with ``base_margin`` set to the scores, 2 threads), for scale.

Each round uses new scores (as a training round does); the metric objects are
created once (the first round, which plans and checks the labels, is reported
apart).  Reported: the median per case and each round's cost over evaluate's.
The machine may be shared: the rounds are interleaved so that a change of load
moves both sides of a ratio alike; rerun when numbers look off.
"""

import argparse
import json
import statistics
import time

import numpy as np

import skrank
import skrank.gbdt

METRIC_SETS = {"ndcg@10": ["ndcg@10"], "ndcg@10+map+mrr": ["ndcg@10", "map", "mrr"]}


def _data(n_queries, n_docs, seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), n_docs)
    y = rng.integers(0, 5, size=qid.size).astype(np.float64)
    return y, qid


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)

    import lightgbm as lgb
    import xgboost as xgb

    y, qid = _data(args.queries, args.docs)
    n = y.size
    rng = np.random.default_rng(1)
    scores = [np.round(rng.normal(size=n), 3) for _ in range(args.rounds)]  # trees tie
    sizes = np.full(args.queries, args.docs)
    features = np.zeros((n, 1), dtype=np.float32)
    dmatrix = xgb.DMatrix(features, label=y, qid=qid, nthread=2)
    dataset = lgb.Dataset(features, label=y, group=sizes,
                          params={"verbose": -1}).construct()
    booster = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@10", "nthread": 2},
                        dmatrix, num_boost_round=0)

    results = {"rows": n, "queries": args.queries, "rounds": args.rounds, "sets": {}}
    for set_name, metrics in METRIC_SETS.items():
        xgb_metric = skrank.gbdt.xgboost_metric(metrics)
        lgb_metric = skrank.gbdt.lightgbm_metric(metrics)
        first = {"xgboost first round": _timed(lambda: xgb_metric(scores[0], dmatrix)),
                 "lightgbm first round": _timed(lambda: lgb_metric(scores[0], dataset))}
        state = {"i": 0}

        def builtin():
            dmatrix.set_base_margin(scores[state["i"]])
            booster.eval(dmatrix)

        cases = {
            "evaluate": lambda: skrank.evaluate(y, scores[state["i"]], qid=qid,
                                                metrics=metrics),
            "xgboost round": lambda: xgb_metric(scores[state["i"]], dmatrix),
            "lightgbm round": lambda: lgb_metric(scores[state["i"]], dataset),
        }
        if set_name == "ndcg@10":
            cases["xgboost built-in"] = builtin
        times = {name: [] for name in cases}
        names = list(cases)
        for r in range(args.rounds):
            state["i"] = r
            for j in range(len(names)):   # rotated order
                name = names[(r + j) % len(names)]
                times[name].append(_timed(cases[name]))
        dmatrix.set_base_margin(np.zeros(n))
        medians = {name: statistics.median(t) for name, t in times.items()}
        results["sets"][set_name] = {"median_s": medians, "first_round_s": first}
        base = medians["evaluate"]
        print(f"\n{n:,} rows, {args.queries:,} queries, metrics {metrics} "
              f"(median of {args.rounds} interleaved rounds)")
        print("| case | ms | / evaluate |\n|---|---:|---:|")
        for name, value in {**medians, **first}.items():
            print(f"| {name} | {value * 1e3:.1f} | {value / base:.2f}x |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
