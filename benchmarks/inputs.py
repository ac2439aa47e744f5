"""Cost of the input conversions: DataFrames and dicts -> Qrels/Run, and the sparse 2-D form.

    python benchmarks/inputs.py            # 10 million rows, 20,000 x 2,000 matrix
    python benchmarks/inputs.py --smoke    # tiny sizes

A DataFrame conversion is compared with the pandas merge a user would write
instead (the same two frames, merged on (user, item)); the dict conversion with
building the same dicts; the sparse top-k path with the dense 2-D path on the
same matrices.  Prints one line per measurement (median of a few runs).
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

import skrank
from skrank.io import Qrels, Run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tools import median_time  # noqa: E402  (one timing helper for the benchmarks)


def frames(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    n_users = max(n_rows // 100, 1)
    users = np.repeat(np.arange(n_users), 100)[:n_rows]
    items = rng.integers(0, 1_000_000, n_rows)
    pred = pd.DataFrame({"user_id": users, "item_id": items, "score": rng.random(n_rows)})
    pred = pred.drop_duplicates(["user_id", "item_id"])
    truth = pred.sample(frac=0.2, random_state=seed)[["user_id", "item_id"]]
    truth = truth.assign(rating=rng.integers(1, 6, len(truth)))
    return truth, pred


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    n_rows = 10_000 if args.smoke else 10_000_000
    repeats = 1 if args.smoke else 3
    truth, pred = frames(n_rows)
    names = dict(query_id="user_id", doc_id="item_id")
    print(f"DataFrames: run {len(pred):,} rows, qrels {len(truth):,} rows (int ids)")
    t_merge = median_time(lambda: pred.merge(truth, on=["user_id", "item_id"], how="left"),
                          repeats)
    print(f"  pandas merge (left, on user and item)        {t_merge:8.2f} s")
    t_run = median_time(lambda: Run.from_frame(pred, **names), repeats)
    print(f"  Run.from_frame                               {t_run:8.2f} s")
    t_qrels = median_time(lambda: Qrels.from_frame(truth, **names, relevance="rating"), repeats)
    print(f"  Qrels.from_frame                             {t_qrels:8.2f} s")
    strings = pred.astype({"user_id": str, "item_id": str})
    truth_strings = truth.astype({"user_id": str, "item_id": str})
    t_merge_str = median_time(lambda: strings.merge(truth_strings, on=["user_id", "item_id"],
                                                    how="left"), repeats)
    print(f"  pandas merge, string (object) ids            {t_merge_str:8.2f} s")
    t_str = median_time(lambda: Run.from_frame(strings, **names), repeats)
    print(f"  Run.from_frame, string (object) ids          {t_str:8.2f} s")
    qrels = Qrels.from_frame(truth, **names, relevance="rating")
    run = Run.from_frame(pred, **names)
    t_eval = median_time(lambda: skrank.evaluate(qrels=qrels, run=run,
                                                 metrics=["ndcg@10", "recall@100"]), repeats)
    print(f"  evaluate(qrels=Qrels, run=Run), 2 metrics    {t_eval:8.2f} s")

    n_dict = n_rows // 10
    small_truth, small_pred = frames(n_dict, seed=1)
    run_dict = {u: dict(zip(g["item_id"].tolist(), g["score"].tolist()))
                for u, g in small_pred.groupby("user_id")}
    print(f"dict of dicts: {len(small_pred):,} rows")
    t_dict = median_time(lambda: Run.from_dict(run_dict), repeats)
    print(f"  Run.from_dict                                {t_dict:8.2f} s")

    n_users, n_items = (200, 300) if args.smoke else (20_000, 2_000)
    rng = np.random.default_rng(2)
    scores = rng.random((n_users, n_items))
    test = sp.random(n_users, n_items, density=0.01, random_state=3, format="csr")
    test.data[:] = 1.0
    train = sp.random(n_users, n_items, density=0.05, random_state=4, format="csr")
    print(f"matrices: {n_users:,} users x {n_items:,} items, test nnz {test.nnz:,}, "
          f"train nnz {train.nnz:,}")
    t_sparse = median_time(lambda: skrank.ndcg_score(test, scores, k=10, exclude=train), repeats)
    print(f"  ndcg_score(Y_test, S, k=10, exclude=Y_train) {t_sparse:8.2f} s")
    dense = test.toarray()
    t_dense = median_time(lambda: skrank.ndcg_score(dense, scores, k=10), repeats)
    print(f"  ndcg_score(dense Y, S, k=10), no exclude    {t_dense:8.2f} s")


if __name__ == "__main__":
    main()
