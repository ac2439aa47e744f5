"""The same GridSearchCV on a Dask cluster (joblib's dask backend) as in one process.

Runs whenever dask.distributed is installed (it is in the ``test`` extra, so CI
runs it).  A ``LocalCluster`` of two worker *processes* stands in for a
multi-machine cluster: the search's tasks, its skrank scorers and the query ids
are pickled to other interpreters, which import skrank themselves.
"""


import numpy as np
import pytest
import sklearn
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skrank

try:
    from tests._cluster import local_client
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from _cluster import local_client
from skrank.model_selection import DropQid, QueryKFold

distributed = pytest.importorskip("dask.distributed")
joblib = pytest.importorskip("joblib")


def _dask_backend():
    """joblib >= 1.3 has parallel_config; older releases have parallel_backend."""
    if hasattr(joblib, "parallel_config"):
        return joblib.parallel_config(backend="dask")
    return joblib.parallel_backend("dask")  # pragma: no cover - old joblib


@pytest.fixture(scope="module")
def dask_client():
    with local_client(processes=True) as client:
        yield client


def _data(seed=0, n_queries=40):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), rng.integers(5, 20, size=n_queries))
    qid = qid[rng.permutation(qid.size)]
    X = rng.normal(size=(qid.size, 6))
    y = np.digitize(X[:, 0] - 0.5 * X[:, 1] + rng.normal(size=qid.size),
                    [-0.5, 0.5, 1.5]).astype(float)
    return X, y, qid


def _search(n_jobs, *steps):
    return GridSearchCV(make_pipeline(*steps, StandardScaler(), Ridge()),
                        {"ridge__alpha": [0.01, 1.0, 100.0, 1e4]},
                        scoring={"ndcg": "ndcg_exp@10", "map": "map@5"}, refit="ndcg",
                        cv=QueryKFold(4, shuffle=True, random_state=0), n_jobs=n_jobs)


def test_grid_search_on_a_dask_cluster_matches_the_serial_run(dask_client):
    X, y, qid = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        serial = _search(n_jobs=1).fit(X, y, qid=qid)
        with distributed.get_task_stream(client=dask_client) as tasks, _dask_backend():
            on_dask = _search(n_jobs=-1).fit(X, y, qid=qid)
    # the work really went to the cluster's two worker processes
    assert len(dask_client.scheduler_info()["workers"]) == 2
    assert len(tasks.data) > 0
    for key in ("mean_test_ndcg", "mean_test_map", "split0_test_ndcg", "split3_test_map",
                "rank_test_ndcg"):
        np.testing.assert_array_equal(on_dask.cv_results_[key], serial.cv_results_[key],
                                      err_msg=key)
    assert on_dask.best_params_ == serial.best_params_
    assert on_dask.best_score_ == serial.best_score_
    np.testing.assert_array_equal(on_dask.predict(X), serial.predict(X))


def test_dataframe_qid_on_a_dask_cluster(dask_client):
    pd = pytest.importorskip("pandas")
    X, y, qid = _data(seed=1, n_queries=30)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)
    # DropQid: the models learn from the features, not from the query-id column
    serial = _search(1, DropQid()).fit(df, y)
    with _dask_backend():
        on_dask = _search(-1, DropQid()).fit(df, y)
    np.testing.assert_array_equal(on_dask.cv_results_["mean_test_ndcg"],
                                  serial.cv_results_["mean_test_ndcg"])
    # skrank's scorers work on the workers: every fold's scores are the metrics of that
    # fold's held-out predictions, computed here directly
    results = on_dask.cv_results_
    for i, (train, test) in enumerate(_search(n_jobs=1).cv.split(df, y)):
        for j, alpha in enumerate(results["param_ridge__alpha"]):
            model = make_pipeline(DropQid(), StandardScaler(), Ridge(alpha=alpha))
            pred = model.fit(df.iloc[train], y[train]).predict(df.iloc[test])
            assert results[f"split{i}_test_map"][j] == pytest.approx(
                skrank.map_score(y[test], pred, qid=qid[test], k=5), rel=1e-12, abs=1e-15)
            assert results[f"split{i}_test_ndcg"][j] == pytest.approx(
                skrank.ndcg_score(y[test], pred, qid=qid[test], k=10, gain="exponential"),
                rel=1e-12, abs=1e-15)
    best = on_dask.best_estimator_
    assert skrank.get_scorer("ndcg_exp@10")(best, df, y) == pytest.approx(
        skrank.ndcg_score(y, best.predict(df), qid=qid, k=10, gain="exponential"), abs=1e-15)
