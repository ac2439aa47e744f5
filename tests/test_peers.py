"""skrank reproduces LightGBM's and XGBoost's built-in ranking metrics.

Both evaluate fixed scores here (XGBoost: base_margin with zero boosting
rounds; LightGBM: init_score with one round that cannot split, so every score
moves by the same constant).  Their conventions, as named skrank parameters:
exponential gain, ties in input order (``ties="stable"``), queries without a
relevant document scored 1 (``no_relevant="one"``; XGBoost's ``ndcg@k-`` gives
0), AP@k divided by min(R, k), P@k divided by min(k, n).
"""

import numpy as np
import pytest

import skrank

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


def ragged(seed, binary=False):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 15, 60)
    qid = np.repeat(np.arange(sizes.size), sizes)
    y = rng.integers(0, 2 if binary else 5, qid.size).astype(float)
    y[qid == 3] = 0                                    # a query with no relevant document
    s = rng.integers(0, 5, qid.size).astype(float)     # heavy ties
    return sizes, qid, y, s


def xgb_metric(metric, qid, y, s):
    dm = xgb.DMatrix(np.zeros((y.size, 1)), label=y, qid=qid, base_margin=s)
    booster = xgb.train({"objective": "rank:ndcg", "eval_metric": metric}, dm,
                        num_boost_round=0)
    return float(booster.eval(dm).split(":")[-1])


def lgb_metrics(k, sizes, y, s):
    ds = lgb.Dataset(np.zeros((y.size, 1)), label=y, group=sizes, init_score=s)
    record = {}
    lgb.train({"objective": "lambdarank", "metric": ["ndcg", "map"], "eval_at": [k],
               "verbose": -1, "min_data_in_leaf": y.size + 1},
              ds, num_boost_round=1, valid_sets=[ds], valid_names=["v"],
              callbacks=[lgb.record_evaluation(record)])
    return record["v"][f"ndcg@{k}"][0], record["v"][f"map@{k}"][0]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_xgboost_ndcg(seed, k):
    _, qid, y, s = ragged(seed)
    common = dict(qid=qid, k=k, gain="exponential", ties="stable")
    assert xgb_metric(f"ndcg@{k}", qid, y, s) == pytest.approx(
        skrank.ndcg_score(y, s, no_relevant="one", **common), abs=1e-9)
    assert xgb_metric(f"ndcg@{k}-", qid, y, s) == pytest.approx(
        skrank.ndcg_score(y, s, no_relevant="zero", **common), abs=1e-9)
    # The default (average) tie policy gives a different number on these ties.
    assert skrank.ndcg_score(y, s, no_relevant="one", qid=qid, k=k, gain="exponential") != \
        pytest.approx(xgb_metric(f"ndcg@{k}", qid, y, s), abs=1e-9)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_xgboost_binary_metrics(k):
    _, qid, y, s = ragged(2, binary=True)
    assert xgb_metric(f"pre@{k}", qid, y, s) == pytest.approx(
        skrank.precision_at_k_score(y, s, qid=qid, k=k, ties="stable", denominator="min"),
        abs=1e-9)
    assert xgb_metric(f"map@{k}", qid, y, s) == pytest.approx(
        skrank.map_score(y, s, qid=qid, k=k, ties="stable", denominator="min",
                         no_relevant="one"), abs=1e-9)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_lightgbm_ndcg_and_map(k):
    sizes, qid, y, s = ragged(3)
    ndcg, ap = lgb_metrics(k, sizes, y, s)
    assert ndcg == pytest.approx(skrank.ndcg_score(
        y, s, qid=qid, k=k, gain="exponential", ties="stable", no_relevant="one"), abs=1e-9)
    assert ap == pytest.approx(skrank.map_score(
        y, s, qid=qid, k=k, ties="stable", denominator="min", no_relevant="one"), abs=1e-9)
