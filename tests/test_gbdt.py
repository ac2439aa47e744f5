"""skrank.gbdt: skrank's metrics inside XGBoost's and LightGBM's training loops.

Every logged value is checked against :func:`skrank.evaluate` on the model's
staged predictions (and one of them against the slow oracle of
``tests/_reference.py``), early stopping against the iteration that maximises
the recomputed values, and the libraries' built-in ndcg/map against the skrank
options that reproduce their conventions.
"""

import numpy as np
import pytest

import skrank
import skrank.gbdt

try:  # works whether or not tests/ is a package
    from tests import _reference as R
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    import _reference as R

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

METRICS = ["ndcg@5", "map(ties=stable, denominator=min)@5", "mrr"]


def _data(seed, n_queries):
    """MQ2008-like rows: graded 0-2 from a noisy linear model, ragged queries (one with
    a single row, one without a relevant document), rows contiguous by query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 25, size=n_queries)
    sizes[0] = 1
    qid = np.repeat(np.arange(100, 100 + n_queries), sizes)
    X = rng.normal(size=(qid.size, 6))
    utility = X @ np.array([1.0, -0.5, 0.3, 0.0, 0.8, 0.2]) + rng.normal(scale=1.0, size=qid.size)
    y = np.digitize(utility, [0.8, 1.8]).astype(np.float64)
    y[qid == qid[sizes[0]]] = 0  # the second query has no relevant document
    return X, y, qid


@pytest.fixture(scope="module")
def data():
    return _data(0, 40), _data(1, 25)


def _sizes(qid):
    return np.unique(qid, return_counts=True)[1]


def _xgb_dmatrix(X, y, qid):
    return xgb.DMatrix(X, label=y, qid=qid)


XGB_PARAMS = {"objective": "rank:ndcg", "max_depth": 3, "eta": 0.3, "nthread": 1,
              "disable_default_eval_metric": 1, "seed": 0}


def _first_argmax(values):
    return int(np.argmax(np.asarray(values)))


# ---------------------------------------------------------------------------
# XGBoost


def test_xgb_train_logs_skrank_values_per_iteration(data):
    (X, y, q), (Xv, yv, qv) = data
    metric = skrank.gbdt.xgboost_metric(METRICS)
    assert metric.names == ["ndcg@5", "map(ties=stable,denominator=min)@5", "mrr"]
    dtrain, dvalid = _xgb_dmatrix(X, y, q), _xgb_dmatrix(Xv, yv, qv)
    log = {}
    booster = xgb.train(XGB_PARAMS, dtrain, num_boost_round=8, evals=[(dvalid, "valid")],
                        custom_metric=metric, evals_result=log, verbose_eval=False)
    for i in range(8):
        staged = booster.predict(dvalid, iteration_range=(0, i + 1), output_margin=True)
        expected = skrank.evaluate(yv, staged, qid=qv, metrics=METRICS).mean
        direct = dict(metric(staged, dvalid))
        for label, name in zip(METRICS, metric.names):
            assert abs(direct[name] - expected[label]) <= 1e-12
            # XGBoost logs custom metrics with 6 decimals
            assert abs(log["valid"][name][i] - expected[label]) <= 5e-7 + 1e-12
    # one iteration against the slow oracle
    staged = booster.predict(dvalid, iteration_range=(0, 3), output_margin=True)
    ref_ndcg, _ = R.ref_mean("ndcg", yv, staged.astype(np.float64), qv, k=5)
    ref_map, _ = R.ref_mean("map", yv, staged.astype(np.float64), qv, k=5, ties="stable",
                            denominator="min")
    got = dict(metric(staged, dvalid))
    assert got["ndcg@5"] == pytest.approx(ref_ndcg, abs=1e-12)
    assert got["map(ties=stable,denominator=min)@5"] == pytest.approx(ref_map, abs=1e-12)


def _rounded_history(booster, dvalid, yv, qv, label, n):
    exact = [skrank.evaluate(yv, booster.predict(dvalid, iteration_range=(0, i + 1),
                                                 output_margin=True),
                             qid=qv, metrics=[label]).mean[label] for i in range(n)]
    return exact, [float(f"{v:f}") for v in exact]   # XGBoost stops on 6 decimals


@pytest.mark.parametrize("route", ["maximize", "callback", "default"])
def test_xgb_early_stopping_direction(data, route):
    """mrr maximised with maximize=True or metric.early_stopping(); by its name alone,
    XGBoost minimises it (what the docs warn about)."""
    (X, y, q), (Xv, yv, qv) = data
    metric = skrank.gbdt.xgboost_metric("mrr")
    dtrain, dvalid = _xgb_dmatrix(X, y, q), _xgb_dmatrix(Xv, yv, qv)
    kwargs = {"maximize": dict(maximize=True, early_stopping_rounds=3),
              "callback": dict(callbacks=[metric.early_stopping(3)]),
              "default": dict(early_stopping_rounds=3)}[route]
    log = {}
    booster = xgb.train({**XGB_PARAMS, "eta": 0.5}, dtrain, num_boost_round=30,
                        evals=[(dvalid, "valid")], custom_metric=metric, evals_result=log,
                        verbose_eval=False, **kwargs)
    n = len(log["valid"]["mrr"])
    _, rounded = _rounded_history(booster, dvalid, yv, qv, "mrr", n)
    assert rounded == pytest.approx(log["valid"]["mrr"], abs=1e-12)
    best = _first_argmax(rounded) if route != "default" else int(np.argmin(rounded))
    assert booster.best_iteration == best


def test_xgb_names_carry_no_whitespace(data):
    """XGBoost splits its log on whitespace: a name with a space crashes xgb.train, the
    metric's names (the labels without whitespace) pass."""
    (X, y, q), _ = data
    dtrain = _xgb_dmatrix(X, y, q)
    spaced = "map(ties=stable, denominator=min)@5"
    with pytest.raises(ValueError):
        xgb.train(XGB_PARAMS, dtrain, num_boost_round=1, evals=[(dtrain, "train")],
                  custom_metric=lambda predt, d: (spaced, 0.5), evals_result={},
                  verbose_eval=False)
    metric = skrank.gbdt.xgboost_metric([spaced, "ndcg( gain = exponential )@3"])
    assert metric.names == ["map(ties=stable,denominator=min)@5", "ndcg(gain=exponential)@3"]
    log = {}
    xgb.train(XGB_PARAMS, dtrain, num_boost_round=1, evals=[(dtrain, "train")],
              custom_metric=metric, evals_result=log, verbose_eval=False)
    assert list(log["train"]) == metric.names


def test_xgb_builtin_ndcg_equals_skrank_options(data):
    """XGBoost's ndcg@10 is nDCG with exponential gain, ties in input order and 1 for a
    query without a relevant document."""
    (X, y, q), (Xv, yv, qv) = data
    dtrain, dvalid = _xgb_dmatrix(X, y, q), _xgb_dmatrix(Xv, yv, qv)
    params = {**XGB_PARAMS, "eval_metric": "ndcg@10"}
    params.pop("disable_default_eval_metric")
    log = {}
    booster = xgb.train(params, dtrain, num_boost_round=6, evals=[(dvalid, "valid")],
                        evals_result=log, verbose_eval=False)
    for i in range(6):
        staged = booster.predict(dvalid, iteration_range=(0, i + 1), output_margin=True)
        ours = skrank.evaluate(yv, staged, qid=qv,
                               metrics=["ndcg_exp(ties=stable, no_relevant=one)@10"]).mean
        assert abs(log["valid"]["ndcg@10"][i]
                   - ours["ndcg_exp(ties=stable, no_relevant=one)@10"]) <= 1e-12


def test_xgb_sklearn_ranker_route(data):
    (X, y, q), (Xv, yv, qv) = data
    metric = skrank.gbdt.xgboost_metric(["ndcg@5", "mrr@5"])
    ranker = skrank.gbdt.XGBRanker(n_estimators=30, max_depth=3, learning_rate=0.5, n_jobs=1,
                                   eval_metric=metric, early_stopping_rounds=3, random_state=0)
    ranker.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv], verbose=False)
    assert ranker.eval_metric is metric and ranker.early_stopping_rounds == 3  # restored
    log = ranker.evals_result()["validation_0"]
    assert set(log) == {"ndcg@5", "mrr@5"}   # only skrank's
    booster, dvalid = ranker.get_booster(), _xgb_dmatrix(Xv, yv, qv)
    n = len(log["mrr@5"])
    exact, rounded = _rounded_history(booster, dvalid, yv, qv, "mrr@5", n)
    assert np.allclose(log["mrr@5"], exact, rtol=0, atol=5e-7 + 1e-12)
    assert ranker.best_iteration == _first_argmax(rounded)   # maximised (the last metric)


def test_xgb_plain_sklearn_ranker_is_refused_with_the_route(data):
    (X, y, q), (Xv, yv, qv) = data
    ranker = xgb.XGBRanker(n_estimators=2, eval_metric=skrank.gbdt.xgboost_metric("ndcg@5"),
                           n_jobs=1)
    with pytest.raises(TypeError, match="skrank.gbdt.XGBRanker"):
        ranker.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv], verbose=False)


def test_xgb_query_weights(data):
    (_, _, _), (Xv, yv, qv) = data
    rng = np.random.default_rng(3)
    w = rng.uniform(0.5, 2.0, size=_sizes(qv).size)
    dvalid = _xgb_dmatrix(Xv, yv, qv)
    dvalid.set_weight(w)
    w = w.astype(np.float32).astype(np.float64)   # what the DMatrix holds
    score = rng.normal(size=yv.size)
    name, value = skrank.gbdt.xgboost_metric("ndcg@5")(score, dvalid)
    expected = skrank.evaluate(yv, score, qid=qv, metrics=["ndcg@5"],
                               sample_weight=np.repeat(w, _sizes(qv))).mean["ndcg@5"]
    per_query = skrank.evaluate(yv, score, qid=qv, metrics=["ndcg@5"]).per_query["ndcg@5"]
    assert value == pytest.approx(expected, abs=1e-12)
    assert value == pytest.approx(np.sum(w * per_query) / np.sum(w), abs=1e-12)


# ---------------------------------------------------------------------------
# LightGBM

LGB_PARAMS = {"objective": "lambdarank", "metric": "None", "num_leaves": 7,
              "learning_rate": 0.3, "min_data_in_leaf": 5, "verbose": -1, "num_threads": 1,
              "seed": 0, "deterministic": True}


def _lgb_sets(data):
    (X, y, q), (Xv, yv, qv) = data
    dtrain = lgb.Dataset(X, y, group=_sizes(q))
    return dtrain, lgb.Dataset(Xv, yv, group=_sizes(qv), reference=dtrain)


def test_lgb_train_values_and_early_stopping(data):
    _, (Xv, yv, qv) = data
    metric = skrank.gbdt.lightgbm_metric(METRICS)
    dtrain, dvalid = _lgb_sets(data)
    log = {}
    booster = lgb.train(LGB_PARAMS, dtrain, num_boost_round=40, valid_sets=[dvalid],
                        valid_names=["valid"], feval=metric, keep_training_booster=True,
                        callbacks=[lgb.record_evaluation(log),
                                   lgb.early_stopping(4, first_metric_only=True,
                                                      verbose=False)])
    n = len(log["valid"]["ndcg@5"])
    history = []
    for i in range(n):
        staged = booster.predict(Xv, num_iteration=i + 1, raw_score=True)
        expected = skrank.evaluate(yv, staged, qid=qv, metrics=METRICS).mean
        for label, name in zip(METRICS, metric.names):
            assert abs(log["valid"][name][i] - expected[label]) <= 1e-12
        history.append(expected["ndcg@5"])
    assert booster.best_iteration == _first_argmax(history) + 1   # LightGBM counts from 1
    assert n < 40 and n == booster.best_iteration + 4


def test_lgb_builtin_ndcg_and_map_equal_skrank_options(data):
    _, (Xv, yv, qv) = data
    dtrain, dvalid = _lgb_sets(data)
    log = {}
    params = {**LGB_PARAMS, "metric": ["ndcg", "map"], "eval_at": [10]}
    booster = lgb.train(params, dtrain, num_boost_round=6, valid_sets=[dvalid],
                        valid_names=["valid"], keep_training_booster=True,
                        callbacks=[lgb.record_evaluation(log)])
    names = {"ndcg@10": "ndcg_exp(ties=stable, no_relevant=one)@10",
             "map@10": "map(ties=stable, no_relevant=one, denominator=min)@10"}
    for i in range(6):
        staged = booster.predict(Xv, num_iteration=i + 1, raw_score=True)
        ours = skrank.evaluate(yv, staged, qid=qv, metrics=list(names.values())).mean
        for builtin, label in names.items():
            assert abs(log["valid"][builtin][i] - ours[label]) <= 1e-12


def _shuffled(X, y, qid, seed):
    order = np.random.default_rng(seed).permutation(y.size)
    return X[order], y[order], qid[order]


@pytest.mark.parametrize("route", ["LGBMRanker", "QueryLGBMRanker"])
def test_lgb_sklearn_routes(data, route):
    """LGBMRanker passes the groups to a callable of four parameters; QueryLGBMRanker
    takes eval_qid with rows in any order.  The wrapper keeps only the trees up to the
    best iteration, so the values are recomputed up to there."""
    (X, y, q), (Xv, yv, qv) = data
    metric = skrank.gbdt.lightgbm_metric(["ndcg@5", "mrr"])
    kwargs = dict(n_estimators=40, num_leaves=7, learning_rate=0.3, min_child_samples=5,
                  verbose=-1, n_jobs=1, random_state=0, metric="None", deterministic=True)
    if route == "LGBMRanker":
        ranker = lgb.LGBMRanker(**kwargs)
        import inspect

        evals = (dict(eval_X=(Xv,), eval_y=(yv,))   # LightGBM >= 4.7's spelling
                 if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters
                 else dict(eval_set=[(Xv, yv)]))
        ranker.fit(X, y, group=_sizes(q), eval_group=[_sizes(qv)], eval_metric=metric,
                   callbacks=[lgb.early_stopping(3, verbose=False)], **evals)
    else:
        from skrank.rankers import QueryLGBMRanker

        X, y, q = _shuffled(X, y, q, 1)
        Xv, yv, qv = _shuffled(Xv, yv, qv, 2)
        ranker = QueryLGBMRanker(**kwargs)
        ranker.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv], eval_metric=metric,
                   callbacks=[lgb.early_stopping(3, verbose=False)])
    log = ranker.evals_result_["valid_0"]
    best = ranker.best_iteration_
    assert len(log["mrr"]) == best + 3
    assert ranker.booster_.num_trees() == best   # the wrapper keeps the trees up to the best
    history = []
    for i in range(best):
        # average ties: the value does not depend on the rows' order
        staged = ranker.predict(Xv, num_iteration=i + 1, raw_score=True)
        expected = skrank.evaluate(yv, staged, qid=qv, metrics=["ndcg@5", "mrr"]).mean
        assert abs(log["ndcg@5"][i] - expected["ndcg@5"]) <= 1e-12
        assert abs(log["mrr"][i] - expected["mrr"]) <= 1e-12
    # LightGBM stops when any metric stops improving: its best iteration maximises one
    logged = [log["ndcg@5"][:best + 3], log["mrr"][:best + 3]]
    assert any(_first_argmax(values) + 1 == best for values in logged)


# ---------------------------------------------------------------------------
# The metric objects themselves


def test_same_shape_other_labels_are_not_confused():
    """Evaluation sets are kept between rounds, found by labels and groups: a set of
    the same size with other labels is a new set."""
    metric = skrank.gbdt.lightgbm_metric("ndcg@3")
    rng = np.random.default_rng(5)
    score, group = rng.normal(size=12), np.array([5, 7])
    for _ in range(3):
        y = rng.integers(0, 3, size=12).astype(float)
        _, value, _ = metric(y, score, None, group)
        qid = np.repeat([0, 1], group)
        assert value == pytest.approx(skrank.evaluate(y, score, qid=qid,
                                                      metrics=["ndcg@3"]).mean["ndcg@3"],
                                      abs=1e-12)
    _, other, _ = metric(y, score, None, np.array([6, 6]))
    assert other == pytest.approx(skrank.evaluate(y, score, qid=np.repeat([0, 1], 6),
                                                  metrics=["ndcg@3"]).mean["ndcg@3"],
                                  abs=1e-12)


def test_options_apply_like_evaluate():
    rng = np.random.default_rng(6)
    y, score = rng.integers(0, 2, size=30).astype(float), np.round(rng.normal(size=30), 1)
    group = np.array([10, 10, 10])
    y[:10] = 0
    qid = np.repeat([0, 1, 2], group)
    for options in (dict(ties="pessimistic"), dict(no_relevant="skip"), dict(threshold=2)):
        metric = skrank.gbdt.lightgbm_metric(["ndcg@5", "map"], **options)
        got = metric(y * (2 if "threshold" in options else 1), score, None, group)
        expected = skrank.evaluate(y * (2 if "threshold" in options else 1), score, qid=qid,
                                   metrics=["ndcg@5", "map"], **options).mean
        assert [v for _, v, _ in got] == pytest.approx(list(expected.values()), abs=1e-12)


def test_errors():
    with pytest.raises(skrank.InvalidParameterError, match="ndgc"):
        skrank.gbdt.xgboost_metric("ndgc@10")
    with pytest.raises(skrank.InvalidParameterError, match="ties='trec'"):
        skrank.gbdt.lightgbm_metric("ndcg@10", ties="trec")
    metric = skrank.gbdt.lightgbm_metric("ndcg@10")
    with pytest.raises(ValueError, match="query groups"):
        metric(np.zeros(4), np.zeros(4), None, None)
    with pytest.raises(ValueError, match="covering its 4 rows"):
        metric(np.zeros(4), np.zeros(4), None, np.array([2, 1]))
    with pytest.raises(ValueError, match="must be 1-D"):
        metric(np.zeros(4), np.zeros((4, 2)), None, np.array([2, 2]))
    with pytest.raises(ValueError, match="query groups"):
        skrank.gbdt.xgboost_metric("ndcg@10")(np.zeros(4), xgb.DMatrix(np.zeros((4, 1)),
                                                                      label=np.zeros(4)))
    with pytest.raises(ValueError, match="finite"):   # labels checked like evaluate
        metric(np.array([np.nan, 0, 1, 0]), np.zeros(4), None, np.array([2, 2]))


@pytest.mark.parametrize("labels", ["grades", "binary", "real"])
def test_rounds_on_one_set_equal_evaluate(labels):
    """Later rounds reuse what the labels alone give (grade counts, ideal ranking, R):
    each round still equals evaluate on its scores, for every metric and tie policy."""
    rng = np.random.default_rng(7)
    group = rng.integers(1, 30, size=40)
    qid = np.repeat(np.arange(group.size), group)
    y = {"grades": rng.integers(0, 5, size=qid.size).astype(float),
         "binary": rng.integers(0, 2, size=qid.size).astype(float),
         "real": np.round(rng.uniform(0, 3, size=qid.size), 2)}[labels]
    metrics = ["ndcg@5", "ndcg_exp(ties=stable)@10", "ndcg(ties=pessimistic)", "map@5",
               "mrr(ties=optimistic)", "recall@3", "r_precision", "precision@2",
               "err(max_grade=4)@5", "rbp"]
    metric = skrank.gbdt.lightgbm_metric(metrics, threshold=1)
    for _ in range(4):
        score = np.round(rng.normal(size=qid.size), 1)
        got = [v for _, v, _ in metric(y, score, None, group)]
        expected = skrank.evaluate(y, score, qid=qid, metrics=metrics, threshold=1).mean
        assert got == pytest.approx(list(expected.values()), abs=1e-12)


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 8), min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1),
       metric=st.sampled_from(["ndcg@3", "map", "mrr(ties=stable)", "precision(ties=pessimistic)@2",
                               "ndcg_exp(no_relevant=one)@2"]),
       rounds=st.integers(1, 3))
def test_property_every_round_equals_evaluate(sizes, seed, metric, rounds):
    """Any groups, labels and tied scores, over rounds: the metric is evaluate's."""
    rng = np.random.default_rng(seed)
    group = np.array(sizes)
    qid = np.repeat(np.arange(group.size), group)
    y = rng.integers(0, 3, size=qid.size).astype(float)
    m = skrank.gbdt.lightgbm_metric(metric)
    for _ in range(rounds):
        score = rng.integers(0, 3, size=qid.size).astype(float)
        _, value, _ = m(y, score, None, group)
        expected = skrank.evaluate(y, score, qid=qid, metrics=[metric]).mean[metric]
        assert value == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------
# CatBoost (a Python eval_metric never sees the groups: the metric is given the pools)


def test_catboost_values_and_early_stopping(data):
    catboost = pytest.importorskip("catboost")
    (X, y, q), (Xv, yv, qv) = data
    train, valid = catboost.Pool(X, y, group_id=q), catboost.Pool(Xv, yv, group_id=qv)
    metric = skrank.gbdt.catboost_metric("map(ties=stable, denominator=min)@5",
                                         pools=[train, valid])
    assert type(metric).__name__ == "map(ties=stable,denominator=min)@5"
    ranker = catboost.CatBoostRanker(iterations=40, learning_rate=0.3, depth=3,
                                     loss_function="YetiRank", eval_metric=metric,
                                     early_stopping_rounds=4, thread_count=1, random_seed=0,
                                     allow_writing_files=False,
                                     verbose=False)
    ranker.fit(train, eval_set=valid)
    log = ranker.get_evals_result()
    name = "map(ties=stable,denominator=min)@5"
    label = "map(ties=stable, denominator=min)@5"
    history = log["validation"][name]
    assert len(history) < 40   # stopped early
    recomputed = []
    for i in range(ranker.tree_count_):   # use_best_model: the trees up to the best
        staged = ranker.predict(valid, ntree_end=i + 1)
        recomputed.append(skrank.evaluate(yv, staged, qid=qv, metrics=[label]).mean[label])
        assert abs(history[i] - recomputed[-1]) <= 1e-12
    learn_staged = ranker.predict(train, ntree_end=1)
    assert abs(log["learn"][name][0] - skrank.evaluate(y, learn_staged, qid=q,
                                                       metrics=[label]).mean[label]) <= 1e-12
    assert ranker.get_best_iteration() == _first_argmax(history)   # maximised
    assert ranker.tree_count_ == ranker.get_best_iteration() + 1


def test_catboost_errors(data):
    catboost = pytest.importorskip("catboost")
    (X, y, q), (Xv, yv, qv) = data
    train, valid = catboost.Pool(X, y, group_id=q), catboost.Pool(Xv, yv, group_id=qv)
    metric = skrank.gbdt.catboost_metric("ndcg@5", pools=[valid])   # the training pool left out
    ranker = catboost.CatBoostRanker(iterations=2, eval_metric=metric, thread_count=1,
                                     loss_function="YetiRank", verbose=False,
                                     allow_writing_files=False)
    with pytest.raises(Exception, match="the training pool too"):
        ranker.fit(train, eval_set=valid)
    with pytest.raises(skrank.InvalidParameterError, match="one metric name"):
        skrank.gbdt.catboost_metric(["ndcg@5", "mrr"], pools=[valid])
    with pytest.raises(ValueError, match="group_id"):
        skrank.gbdt.catboost_metric("ndcg@5", pools=[catboost.Pool(Xv, yv)])
