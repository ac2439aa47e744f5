"""Tuning real rankers on real learning-to-rank data with skrank's scorers and splitters.

Each case runs ``GridSearchCV(..., scoring=<skrank string>, cv=QueryKFold(3),
n_jobs=2)`` on ``../shared/data/ltr`` and checks that ``best_score_`` is what
GridSearchCV promises: the mean over the folds of skrank's metric on the
held-out predictions of a model refitted with ``best_params_`` on the
training folds.  Models are tiny (<= 20 trees) to keep the file fast.
"""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skrank
from skrank.model_selection import QueryKFold

try:  # works whether or not tests/ is a package
    from tests._ltr_data import lambdarank, mq2008_vali
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from _ltr_data import lambdarank, mq2008_vali

pd = pytest.importorskip("pandas")

TOL = 1e-9


@pytest.fixture(autouse=True)
def one_thread_in_this_process():
    """OpenMP models fit single-threaded here (the search's n_jobs=2 workers are limited
    to one thread each by joblib): on a 2-core machine two OpenMP threads next to two
    worker processes make HistGradientBoosting many times slower."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


def routed():
    return sklearn.config_context(enable_metadata_routing=True)


def _rows(X, rows):
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def held_out_scores(search, X, y, qid, *, metric, fit_qid=False, predict=None, **params):
    """skrank's metric on each QueryKFold test fold of a refit with best_params_."""
    predict = predict or (lambda est, X_test: est.predict(X_test))
    scores = []
    for train, test in search.cv.split(X, qid=qid):
        est = clone(search.estimator).set_params(**search.best_params_)
        fit_params = {"qid": qid[train]} if fit_qid else {}
        est.fit(_rows(X, train), y[train], **fit_params)
        pred = predict(est, _rows(X, test))
        scores.append(metric(y[test], pred, qid=qid[test], **params))
    return np.array(scores)


def check_best_score(search, scores):
    best = search.best_index_
    folds = [search.cv_results_[f"split{i}_test_score"][best] for i in range(len(scores))]
    np.testing.assert_allclose(folds, scores, rtol=0, atol=TOL)
    assert abs(search.best_score_ - scores.mean()) <= TOL
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def frame(X, qid):
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["qid"] = qid
    return df


# --------------------------------------------------------------------------------------
# (a), (b) XGBoost
# --------------------------------------------------------------------------------------


def _xgb_ranker(**params):
    xgb = pytest.importorskip("xgboost")
    defaults = dict(objective="rank:ndcg", n_estimators=10, max_depth=3, learning_rate=0.3,
                    tree_method="hist", n_jobs=1, random_state=0)
    defaults.update(params)
    return xgb.XGBRanker(**defaults)


def test_xgboost_does_not_sort_rows_by_qid_itself():
    """XGBRanker needs each fit's rows sorted by qid; QueryKFold keeps the row order."""
    X, y, qid = lambdarank("train")
    assert np.all(np.diff(qid) >= 0), "the LTR file is sorted by qid"
    keep = np.isin(qid, np.unique(qid)[:40])
    X, y, qid = X[keep], y[keep], qid[keep]
    perm = np.random.default_rng(0).permutation(qid.size)
    try:
        shuffled = _xgb_ranker(n_estimators=3).fit(X[perm], y[perm], qid=qid[perm])
    except Exception as exc:  # xgboost 2.x/3.x: it checks, it does not sort
        assert "sorted" in str(exc)
    else:  # a later xgboost that sorts by itself must give the same model
        in_order = _xgb_ranker(n_estimators=3).fit(X, y, qid=qid)
        np.testing.assert_allclose(shuffled.predict(X), in_order.predict(X), rtol=1e-6)
    # every training fold of QueryKFold is a subsequence of the sorted rows
    for train, test in QueryKFold(3, shuffle=True, random_state=0).split(X, qid=qid):
        assert np.all(np.diff(qid[train]) >= 0) and np.all(np.diff(qid[test]) >= 0)


def test_xgb_ranker_with_metadata_routing():
    X, y, qid = lambdarank("train")
    with routed():
        ranker = _xgb_ranker().set_fit_request(qid=True)
        search = GridSearchCV(ranker, {"max_depth": [2, 4], "learning_rate": [0.1, 0.3]},
                              scoring="ndcg_exp@10", cv=QueryKFold(3), n_jobs=2)
        search.fit(X, y, qid=qid)
    scores = held_out_scores(search, X, y, qid, metric=skrank.ndcg_score, fit_qid=True, k=10,
                             gain="exponential")
    check_best_score(search, scores)
    # the refitted best model ranks held-out queries better than chance
    X_test, y_test, qid_test = lambdarank("test")
    rng = np.random.default_rng(0)
    model_ndcg = skrank.ndcg_score(y_test, search.predict(X_test), qid=qid_test, k=10)
    random_ndcg = skrank.ndcg_score(y_test, rng.random(y_test.size), qid=qid_test, k=10)
    assert model_ndcg > random_ndcg


def test_xgb_ranker_with_dataframe_qid_column():
    X, y, qid = lambdarank("train")
    df = frame(X, qid)
    search = GridSearchCV(_xgb_ranker(), {"max_depth": [2, 4]}, scoring="ndcg_exp@10",
                          cv=QueryKFold(3), n_jobs=2).fit(df, y)
    scores = held_out_scores(search, df, y, qid, metric=skrank.ndcg_score, k=10,
                             gain="exponential")
    check_best_score(search, scores)
    # the same search through routing gives the same numbers (XGBoost drops the column)
    with routed():
        routed_search = GridSearchCV(_xgb_ranker().set_fit_request(qid=True),
                                     {"max_depth": [2, 4]}, scoring="ndcg_exp@10",
                                     cv=QueryKFold(3), n_jobs=1).fit(X, y, qid=qid)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                               routed_search.cv_results_["mean_test_score"], rtol=0, atol=TOL)


# --------------------------------------------------------------------------------------
# (c) LightGBM through skrank.rankers.QueryLGBMRanker, rows in any order
# --------------------------------------------------------------------------------------


def test_query_lgbm_ranker_with_routing_and_shuffled_rows():
    pytest.importorskip("lightgbm")
    from skrank.rankers import QueryLGBMRanker

    X, y, qid = lambdarank("train")
    perm = np.random.default_rng(1).permutation(qid.size)
    X, y, qid = X[perm], y[perm], qid[perm]
    assert not np.all(np.diff(qid) >= 0)
    ranker = QueryLGBMRanker(n_estimators=15, num_leaves=7, min_child_samples=5,
                             learning_rate=0.2, n_jobs=1, deterministic=True, verbose=-1,
                             random_state=0)
    with routed():
        search = GridSearchCV(ranker, {"num_leaves": [3, 7], "min_child_samples": [5, 20]},
                              scoring="ndcg_exp@10", cv=QueryKFold(3, shuffle=True,
                                                                  random_state=0), n_jobs=2)
        search.fit(X, y, qid=qid)
    scores = held_out_scores(search, X, y, qid, metric=skrank.ndcg_score, fit_qid=True, k=10,
                             gain="exponential")
    check_best_score(search, scores)
    # row order does not matter to the adapter: sorted rows give the same model
    order = np.argsort(qid, kind="stable")
    params = {**ranker.get_params(), **search.best_params_}
    a = QueryLGBMRanker(**params).fit(X, y, qid=qid)
    b = QueryLGBMRanker(**params).fit(X[order], y[order], qid=qid[order])
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------
# (d) a pointwise pipeline
# --------------------------------------------------------------------------------------


def test_pointwise_pipeline_hist_gradient_boosting():
    X, y, qid = mq2008_vali()
    pipe = make_pipeline(StandardScaler(),
                         HistGradientBoostingRegressor(max_iter=20, random_state=0))
    grid = {"histgradientboostingregressor__max_leaf_nodes": [7, 15],
            "histgradientboostingregressor__learning_rate": [0.1, 0.3]}
    with routed():
        search = GridSearchCV(pipe, grid, scoring="ndcg@10", cv=QueryKFold(3), n_jobs=2)
        search.fit(X, y, qid=qid)
    scores = held_out_scores(search, X, y, qid, metric=skrank.ndcg_score, k=10)
    check_best_score(search, scores)


# --------------------------------------------------------------------------------------
# (e) a classifier over graded labels, ranked by expected gain
# --------------------------------------------------------------------------------------


def expected_gain(est, X, gain=lambda c: c):
    return est.predict_proba(X) @ gain(np.asarray(est.classes_, dtype=float))


@pytest.mark.parametrize("model, grid", [
    (HistGradientBoostingClassifier(max_iter=10, random_state=0),
     {"max_leaf_nodes": [7, 15], "learning_rate": [0.1, 0.3]}),
    (make_pipeline(StandardScaler(), LogisticRegression(max_iter=300)),
     {"logisticregression__C": [0.01, 1.0]}),
], ids=["hgb-classifier", "logistic-regression"])
def test_classifier_ranked_by_expected_gain(model, grid):
    X, y, qid = mq2008_vali()
    assert set(np.unique(y)) == {0.0, 1.0, 2.0}
    scorer = skrank.make_ranking_scorer("ndcg", k=10, response="expected_gain")
    with routed():
        search = GridSearchCV(model, grid, scoring=scorer, cv=QueryKFold(3), n_jobs=2)
        search.fit(X, y, qid=qid)
    scores = held_out_scores(search, X, y, qid, metric=skrank.ndcg_score, k=10,
                             predict=expected_gain)
    check_best_score(search, scores)


def test_expected_gain_is_predict_proba_times_the_classes():
    X, y, qid = mq2008_vali()
    clf = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clf.classes_, [0.0, 1.0, 2.0])
    linear = skrank.make_ranking_scorer("ndcg", k=10, response="expected_gain")
    gains = linear._expected_gain(clf, proba)
    np.testing.assert_allclose(gains, proba @ clf.classes_, rtol=0, atol=1e-12)
    with routed():
        assert linear(clf, X, y, qid=qid) == pytest.approx(
            skrank.ndcg_score(y, proba @ clf.classes_, qid=qid, k=10), abs=1e-12)
    # exponential gain: the expected value of 2**label - 1
    exp = skrank.make_ranking_scorer("ndcg_exp@10", response="expected_gain")
    exp_gain = proba @ (2.0 ** clf.classes_ - 1)
    np.testing.assert_allclose(exp._expected_gain(clf, proba), exp_gain, rtol=0, atol=1e-12)
    with routed():
        assert exp(clf, X, y, qid=qid) == pytest.approx(
            skrank.ndcg_score(y, exp_gain, qid=qid, k=10, gain="exponential"), abs=1e-12)
    # it differs from ranking by predict (the most likely class: many ties)
    with routed():
        by_class = skrank.get_scorer("ndcg@10")(clf, X, y, qid=qid)
        by_gain = linear(clf, X, y, qid=qid)
    assert by_class != by_gain


def test_expected_gain_of_a_binary_classifier():
    X, y, qid = mq2008_vali()
    binary = (y > 0).astype(int)
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=300)).fit(X, binary)
    scorer = skrank.make_ranking_scorer("map", response="expected_gain")
    with routed():
        got = scorer(clf, X, binary, qid=qid)
    assert got == pytest.approx(skrank.map_score(binary, clf.predict_proba(X)[:, 1], qid=qid),
                                abs=1e-12)
