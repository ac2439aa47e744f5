"""The multi-metric scorer: ``make_ranking_scorer([...])`` ranks each fold once for all metrics.

Oracle: the single-metric scorers (and scikit-learn's own dict ``scoring=`` of them), which
compute each metric on its own path; the values must be equal exactly.
"""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline

import skrank
from skrank import make_ranking_scorer
from skrank._scorer import MultiRankingScorer
from skrank._core.checks import InvalidParameterError
from skrank.model_selection import DropQid

THREE = ["ndcg@10", "map", "mrr"]
WITH_OPTIONS = {"ndcg_exp@5": "ndcg_exp@5", "map@10 min": ("map", {"k": 10, "denominator": "min"}),
                "p@3": ("precision", {"k": 3, "ties": "stable"}), "err": "err"}


def make_data(n_queries=30, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 15, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    n = qid.size
    X = rng.normal(size=(n, 4))
    X[:, 0] = np.round(X[:, 0], 1)  # tied predictions in places
    y = np.clip(np.round(X[:, 0] + rng.normal(size=n)), 0, 4)
    return X, y, qid


def routed():
    return sklearn.config_context(enable_metadata_routing=True)


def single_scores(metrics, estimator, X, y, **kwargs):
    if isinstance(metrics, list):
        metrics = {m: m for m in metrics}
    out = {}
    for label, item in metrics.items():
        scorer = (make_ranking_scorer(item) if isinstance(item, str)
                  else make_ranking_scorer(item[0], **item[1]))
        if "sample_weight" in kwargs:
            scorer = scorer.set_score_request(sample_weight=True)
        out[label] = scorer(estimator, X, y, **kwargs)
    return out


@pytest.mark.parametrize("metrics", [THREE, WITH_OPTIONS])
def test_values_equal_the_single_metric_scorers_exactly(metrics):
    X, y, qid = make_data()
    model = Ridge().fit(X, y)
    scorer = make_ranking_scorer(metrics)
    with routed():
        got = scorer(model, X, y, qid=qid)
        expected = single_scores(metrics, model, X, y, qid=qid)
    assert list(got) == list(expected)
    assert got == expected


def test_sample_weight_routed_equals_the_single_metric_scorers():
    X, y, qid = make_data(seed=1)
    model = Ridge().fit(X, y)
    weight = np.repeat(np.arange(1.0, 31.0), np.bincount(qid))  # constant within a query
    with routed():
        scorer = make_ranking_scorer(THREE).set_score_request(sample_weight=True)
        got = scorer(model, X, y, qid=qid, sample_weight=weight)
        unweighted = scorer(model, X, y, qid=qid)
        expected = single_scores(THREE, model, X, y, qid=qid, sample_weight=weight)
    assert got == expected
    assert got != unweighted


def test_ranks_once_for_all_metrics(monkeypatch):
    X, y, qid = make_data()
    model = Ridge().fit(X, y)
    calls = []
    original = skrank._plan.rank_queries   # the one ranking step

    def counting(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(skrank._plan, "rank_queries", counting)
    with routed():
        make_ranking_scorer(THREE)(model, X, y, qid=qid)
    assert len(calls) == 1


def test_dataframe_qid_column_without_routing():
    pd = pytest.importorskip("pandas")
    X, y, qid = make_data(seed=2)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(qid=qid)
    model = make_pipeline(DropQid(), Ridge()).fit(frame, y)
    got = make_ranking_scorer(THREE)(model, frame, y)
    assert got == single_scores(THREE, model, frame, y)
    result = cross_validate(make_pipeline(DropQid(), Ridge()), frame, y, groups=qid,
                            cv=GroupKFold(3), scoring=make_ranking_scorer(THREE),
                            error_score="raise")
    oracle = cross_validate(make_pipeline(DropQid(), Ridge()), frame, y, groups=qid,
                            cv=GroupKFold(3), scoring={m: m for m in THREE},
                            error_score="raise")
    for m in THREE:
        np.testing.assert_array_equal(result[f"test_{m}"], oracle[f"test_{m}"])


def test_grid_search_refit_on_one_label_matches_sklearn_dict_scoring():
    X, y, qid = make_data(seed=3)
    grid = {"alpha": [0.01, 100.0, 1e5]}
    with routed():
        fast = GridSearchCV(Ridge(), grid, scoring=make_ranking_scorer(THREE), refit="map",
                            cv=GroupKFold(3), error_score="raise").fit(X, y, qid=qid, groups=qid)
        oracle = GridSearchCV(Ridge(), grid, scoring={m: m for m in THREE}, refit="map",
                              cv=GroupKFold(3), error_score="raise").fit(X, y, qid=qid,
                                                                          groups=qid)
    for m in THREE:
        np.testing.assert_array_equal(fast.cv_results_[f"mean_test_{m}"],
                                      oracle.cv_results_[f"mean_test_{m}"])
    assert fast.best_params_ == oracle.best_params_
    assert fast.best_score_ == oracle.best_score_
    assert fast.multimetric_


def test_cross_validate_with_routing():
    X, y, qid = make_data(seed=4)
    with routed():
        result = cross_validate(Ridge(), X, y, cv=GroupKFold(3), scoring=make_ranking_scorer(THREE),
                                params={"qid": qid, "groups": qid}, error_score="raise")
        oracle = cross_validate(Ridge(), X, y, cv=GroupKFold(3), scoring={m: m for m in THREE},
                                params={"qid": qid, "groups": qid}, error_score="raise")
    for m in THREE:
        np.testing.assert_array_equal(result[f"test_{m}"], oracle[f"test_{m}"])


@pytest.mark.parametrize("metrics", [THREE, WITH_OPTIONS])
def test_pickles_and_repr_round_trips(metrics):
    X, y, qid = make_data(seed=5)
    model = Ridge().fit(X, y)
    scorer = make_ranking_scorer(metrics)
    assert isinstance(scorer, MultiRankingScorer)
    again = eval(repr(scorer), {"make_ranking_scorer": make_ranking_scorer})
    assert repr(again) == repr(scorer)
    restored = pickle.loads(pickle.dumps(scorer))
    with routed():
        expected = scorer(model, X, y, qid=qid)
        assert restored(model, X, y, qid=qid) == expected
        assert again(model, X, y, qid=qid) == expected


def test_missing_qid_says_how_to_pass_it():
    X, y, _ = make_data()
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="needs qid"):
        make_ranking_scorer(THREE)(model, X, y)


@pytest.mark.parametrize("metrics, match", [
    ([], "at least one metric. Got an empty list"),
    ({}, "at least one metric. Got an empty dict"),
    (["ndcg@10", "nope"], "nope"),
    (["map", "map"], "'map' is listed twice"),
    ([("map", {"k": 10})], "a list of metrics must hold names"),
    ({1: "map"}, "labels of a dict of metrics must be str"),
    ({"a": ("map", 10)}, "name such as 'ndcg@10' or a pair"),
    ({"a": ("map", {"k": 0})}, "k"),
])
def test_bad_metrics_get_clear_errors(metrics, match):
    with pytest.raises(InvalidParameterError, match=match):
        make_ranking_scorer(metrics)


def test_options_with_several_metrics_are_refused():
    with pytest.raises(InvalidParameterError, match="apply to one metric only"):
        make_ranking_scorer(THREE, k=5)
    with pytest.raises(InvalidParameterError, match="apply to one metric only"):
        make_ranking_scorer(THREE, response="expected_gain")
