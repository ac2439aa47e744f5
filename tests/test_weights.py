"""Query weights: sample_weight in the metric functions, evaluate and the scorers."""

import numpy as np
import pytest
import sklearn
from conftest import SPECS, make_queries, oracle, seed_of, spec_id, valid_params
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, GroupKFold

import skrank

JUDGED = [skrank.bpref_score, skrank.infap_score, skrank.judged_at_k_score]


def _row_weights(rng, qid):
    """One random weight per query (some 0), repeated on its rows; and the query -> weight map."""
    uniq = list(dict.fromkeys(qid.tolist()))
    per_query = dict(zip(uniq, rng.choice([0.0, 0.5, 1.0, 2.0, 3.5], size=len(uniq)).tolist()))
    per_query[uniq[-1]] = 1.5  # a positive total whatever the draw
    return np.array([per_query[q] for q in qid.tolist()]), per_query


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("no_relevant", ["zero", "skip"])
def test_weighted_mean_is_the_weighted_average_of_the_oracles_per_query_values(spec, no_relevant):
    rng = np.random.default_rng(seed_of("weights", spec.name, no_relevant))
    y_true, y_score, qid, _ = make_queries(rng, n_queries=9)
    w, per_query_w = _row_weights(rng, qid)
    params = valid_params(spec, y_true)
    if spec.takes_no_relevant:
        params["no_relevant"] = no_relevant
    _, expected_values = oracle(spec, y_true, y_score, qid, **params)
    qs = list(expected_values)  # skipped queries are absent
    values = np.array([expected_values[q] for q in qs])
    weights = np.array([per_query_w[q] for q in qs])
    got = spec.function(y_true, y_score, qid=qid, sample_weight=w, **params)
    # the formula by hand, and numpy's weighted average
    assert got == pytest.approx(sum(w_q * v_q for w_q, v_q in zip(weights, values))
                                / sum(weights), rel=1e-12, abs=1e-12)
    assert got == pytest.approx(np.average(values, weights=weights), rel=1e-12, abs=1e-12)
    # evaluate agrees and keeps the weights by query
    res = skrank.evaluate(y_true, y_score, qid=qid, sample_weight=w,
                          metrics={"m": (spec.name, params)})
    assert res.mean["m"] == pytest.approx(got, rel=1e-12, abs=1e-12)
    assert res.weights.tolist() == [per_query_w[q] for q in res.qid.tolist()]
    # weights do not change the per-query values
    unweighted = skrank.evaluate(y_true, y_score, qid=qid, metrics={"m": (spec.name, params)})
    np.testing.assert_array_equal(res.per_query["m"], unweighted.per_query["m"])


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_integer_weights_equal_repeating_each_query(spec):
    rng = np.random.default_rng(seed_of("repeat", spec.name))
    y_true, y_score, qid, _ = make_queries(rng, n_queries=6, float_scores=True)
    qid = qid.astype(str)
    uniq = np.unique(qid)
    times = dict(zip(uniq.tolist(), rng.integers(0, 4, size=uniq.size).tolist()))
    times[uniq[0]] = max(times[uniq[0]], 1)
    w = np.array([times[q] for q in qid.tolist()])
    rep_true, rep_score, rep_qid = [], [], []
    for q in uniq.tolist():
        rows = qid == q
        for copy in range(times[q]):  # a fresh query id per copy
            rep_true.extend(y_true[rows])
            rep_score.extend(y_score[rows])
            rep_qid.extend([f"{q}#{copy}"] * int(rows.sum()))
    params = valid_params(spec, y_true)
    got = spec.function(y_true, y_score, qid=qid, sample_weight=w, **params)
    repeated = spec.function(np.array(rep_true), np.array(rep_score), qid=np.array(rep_qid),
                             **params)
    assert got == pytest.approx(repeated, rel=1e-12, abs=1e-12)


def test_hand_example_and_equal_weights_change_nothing():
    y_true = [1, 0, 0, 0, 0, 1]
    y_score = [3, 2, 1, 3, 2, 1]
    qid = [0, 0, 0, 1, 1, 1]
    # RR is 1 for query 0 and 1/3 for query 1
    assert skrank.mrr_score(y_true, y_score, qid=qid, sample_weight=[3, 3, 3, 1, 1, 1]) == \
        pytest.approx((3 * 1 + 1 * (1 / 3)) / 4)
    assert skrank.mrr_score(y_true, y_score, qid=qid, sample_weight=[2.0] * 6) == \
        skrank.mrr_score(y_true, y_score, qid=qid)


def test_two_d_form_takes_one_weight_per_row():
    y_true = np.array([[3, 2, 0], [1, 0, 1], [0, 0, 1]])
    y_score = np.array([[.1, .9, .5], [.8, .3, .2], [.3, .2, .1]])
    w = np.array([1.0, 0.0, 4.0])
    per_query = skrank.per_query_scores("ndcg", y_true, y_score).score
    expected = np.average(per_query, weights=w)
    assert skrank.ndcg_score(y_true, y_score, sample_weight=w) == pytest.approx(expected)
    # scikit-learn's ndcg_score takes its sample_weight the same way
    assert skrank.ndcg_score(y_true, y_score, sample_weight=w) == pytest.approx(
        sklearn.metrics.ndcg_score(y_true, y_score, sample_weight=w))
    # the sparse 2-D form (exclude) too
    exclude = np.zeros(y_true.shape, dtype=bool)
    exclude[0, 2] = True
    per_query = skrank.per_query_scores("map", y_true, y_score, exclude=exclude).score
    assert skrank.map_score(y_true, y_score, exclude=exclude, sample_weight=w) == \
        pytest.approx(np.average(per_query, weights=w))
    res = skrank.evaluate(y_true, y_score, metrics=["map"], exclude=exclude, sample_weight=w)
    assert res.mean["map"] == pytest.approx(np.average(per_query, weights=w))
    with pytest.raises(ValueError, match=r"sample_weight must be None or of shape \(n_queries,\)"):
        skrank.ndcg_score(y_true, y_score, sample_weight=np.ones(9))


def test_skipped_queries_drop_out_of_both_sums():
    y_true = [1, 0, 0, 0, 0, 0]          # query 1 has no relevant document
    y_score = [3, 2, 1, 3, 2, 1]
    qid = [0, 0, 0, 1, 1, 1]
    w = [1, 1, 1, 5, 5, 5]
    # query 0: RR 1 (weight 1); query 1: undefined (weight 5)
    assert skrank.mrr_score(y_true, y_score, qid=qid, sample_weight=w,
                            no_relevant="skip") == 1.0
    assert skrank.mrr_score(y_true, y_score, qid=qid, sample_weight=w,
                            no_relevant="zero") == pytest.approx(1 / 6)
    # the only queries left weigh nothing: an error, not NaN
    with pytest.raises(ValueError, match="total sample_weight of 0"):
        skrank.mrr_score(y_true, y_score, qid=qid, sample_weight=[0, 0, 0, 5, 5, 5],
                         no_relevant="skip")


@pytest.mark.parametrize("func", JUDGED, ids=lambda f: f.__name__)
def test_judged_metrics_take_query_weights(func):
    y_true = [1, 0, 1, 0, 1, 1, 0, 0]
    y_score = [4, 3, 2, 1, 4, 3, 2, 1]
    qid = [0] * 4 + [1] * 4
    judged = [True, False, True, True, True, True, False, True]
    w = [1] * 4 + [3] * 4
    name = {"bpref_score": "bpref", "infap_score": "infap", "judged_at_k_score": "judged"}[
        func.__name__]
    params = {"k": 3} if name == "judged" else {}
    per_query = skrank.per_query_scores(name, y_true, y_score, qid=qid, judged=judged,
                                        **params).score
    got = func(y_true, y_score, qid=qid, judged=judged, sample_weight=w, **params)
    assert got == pytest.approx((per_query[0] + 3 * per_query[1]) / 4)
    res = skrank.evaluate(y_true, y_score, qid=qid, judged=judged, sample_weight=w,
                          metrics=[name + ("@3" if params else "")])
    assert list(res.mean.values())[0] == pytest.approx(got)


@pytest.mark.parametrize("weights, error, message", [
    (np.ones(5), ValueError, r"sample_weight must be None or of shape \(n_samples,\)"),
    (np.ones((6, 1)), ValueError, r"of shape \(n_samples,\)"),
    ([1, 1, 1, -1, -1, -1], ValueError, "finite and non-negative. Got -1.0"),
    ([1, 1, 1, np.nan, np.nan, np.nan], ValueError, "finite and non-negative. Got nan"),
    ([1, 1, 1, np.inf, np.inf, np.inf], ValueError, "finite and non-negative. Got inf"),
    ([0] * 6, ValueError, "positive total"),
    ([1, 1, 2, 3, 3, 3], ValueError, "constant within each query.*query 'a'"),
    ([1, 1, 1, 3, 2, 3], ValueError, "constant within each query.*query 'b' instead"),
    (["x"] * 6, TypeError, "sample_weight must be numeric"),
])
@pytest.mark.parametrize("func", [skrank.ndcg_score, skrank.bpref_score,
                                  lambda *a, **kw: skrank.evaluate(*a, metrics=["map"], **kw)])
def test_bad_weights_are_errors(weights, error, message, func):
    with pytest.raises(error, match=message):
        func([1, 0, 1, 0, 1, 0], [3, 2, 1, 3, 2, 1], qid=["a"] * 3 + ["b"] * 3,
             sample_weight=weights)


def test_weights_with_trec_inputs_are_refused_and_per_query_scores_takes_none():
    with pytest.raises(ValueError, match="sample_weight applies to arrays"):
        skrank.evaluate(qrels={"q": {"d": 1}}, run={"q": {"d": 1.0}}, sample_weight=[1.0])
    with pytest.raises(TypeError):
        skrank.per_query_scores("ndcg", [1, 0], [1, 0], qid=[0, 0], sample_weight=[1, 1])


def test_grid_search_routes_sample_weight_to_the_scorer():
    rng = np.random.default_rng(7)
    n_queries, size = 12, 8
    X = rng.normal(size=(n_queries * size, 4))
    y = rng.integers(0, 4, size=n_queries * size).astype(float)
    qid = np.repeat(np.arange(n_queries), size)
    w = np.repeat(rng.uniform(0.1, 5.0, size=n_queries), size)
    folds = list(GroupKFold(n_splits=3).split(X, y, qid))
    alphas = [0.1, 100.0]
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = skrank.get_scorer("ndcg@5").set_score_request(sample_weight=True)
        search = GridSearchCV(Ridge().set_fit_request(sample_weight=False),
                              {"alpha": alphas}, scoring=scorer, cv=folds)
        search.fit(X, y, qid=qid, sample_weight=w)
    for i, alpha in enumerate(alphas):
        for split, (train, test) in enumerate(folds):
            model = Ridge(alpha=alpha).fit(X[train], y[train])
            expected = skrank.ndcg_score(y[test], model.predict(X[test]), qid=qid[test], k=5,
                                         sample_weight=w[test])
            unweighted = skrank.ndcg_score(y[test], model.predict(X[test]), qid=qid[test], k=5)
            got = search.cv_results_[f"split{split}_test_score"][i]
            assert got == pytest.approx(expected, rel=1e-12)
            assert got != pytest.approx(unweighted, rel=1e-9)


def test_scorer_passes_weights_without_a_request_only_when_called_directly():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = rng.integers(0, 3, size=40).astype(float)
    qid = np.repeat(np.arange(5), 8)
    w = np.repeat([1.0, 2.0, 0.5, 4.0, 1.0], 8)
    model = Ridge().fit(X, y)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = skrank.get_scorer("map")
        requests = scorer.get_metadata_routing().score.requests
        assert requests["qid"] is True and requests["sample_weight"] is None
        assert scorer(model, X, y, qid=qid, sample_weight=w) == pytest.approx(
            skrank.map_score(y, model.predict(X), qid=qid, sample_weight=w))
        requested = skrank.make_ranking_scorer("map", k=5).set_score_request(sample_weight=True)
        requests = requested.get_metadata_routing().score.requests
        assert requests["qid"] is True and requests["sample_weight"] is True
