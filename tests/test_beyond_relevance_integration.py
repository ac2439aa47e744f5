"""Issue 29, integration: the diversity and beyond-accuracy metrics as declarations of
the one metric table, through every entry point (evaluate, per_query_scores, scorers
in scikit-learn's model selection, the command line, compare), with intent weights as
arrays, mappings and DataFrames.  The values themselves are checked against ndeval and
slow oracles in tests/test_diversity.py and tests/test_beyond.py: here each entry point
must give what the checked functions give."""

import io
import math

import numpy as np
import pytest

import skrank
from skrank import beyond, diversity
from skrank._plan import MetricCall


def _arrays(seed, n_queries=12, n_docs=8, n_sub=3):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), n_docs)
    y = (rng.random((qid.size, n_sub)) < 0.3).astype(float)
    s = rng.random(qid.size)
    return y, s, qid


# --------------------------------------------------------------------------------------
# The table


def test_every_diversity_and_beyond_metric_is_a_declaration():
    names = {name for name, spec in skrank.METRICS.items()
             if spec.family in ("diversity", "beyond")}
    assert names == set(diversity.DIVERSITY_METRICS) | set(beyond.BEYOND_METRICS)
    for name in diversity.DIVERSITY_METRICS:
        spec = skrank.METRICS[name]
        assert spec.scorer and spec.inputs == ("subtopics",)
        assert spec.function is getattr(diversity, spec.function_name)
    for name, spec in beyond.BEYOND_METRICS.items():
        assert not spec.scorer and "recommendations" in spec.inputs
        assert spec.function is getattr(beyond, name)
        assert spec.aggregate == ("collection" if name in (
            "catalog_coverage", "distributional_coverage", "gini_index", "user_coverage")
            else "mean")


@pytest.mark.parametrize("name", ["alpha_ndcg@5", "nrbp(beta=0.8)", "strec", "ap_ia",
                                  "alpha_dcg(normalization=none)@3", "err_ia(alpha=0.3)@10"])
def test_diversity_names_parse_back(name):
    call = MetricCall.parse(name, inputs=("subtopics",))
    assert MetricCall.parse(str(call)) == call


# --------------------------------------------------------------------------------------
# evaluate and per_query_scores on arrays


def test_evaluate_on_a_label_matrix_equals_the_functions():
    y, s, qid = _arrays(0)
    names = ["alpha_ndcg@5", "err_ia@10", "nerr_ia@3", "nrbp(beta=0.8)", "p_ia@5", "ap_ia",
             "strec@2", "subtopic_recall@2"]
    res = skrank.evaluate(y, s, qid=qid, metrics=names)
    assert res.qid.tolist() == list(range(12))
    for name in names:
        call = MetricCall.parse(name, inputs=("subtopics",))
        per_query = diversity.per_query_scores(call.metric, y, s, qid=qid, **{
            k: v for k, v in call.options.items()
            if k not in ("threshold", "ties", "ideal_ties", "no_relevant")})
        np.testing.assert_array_equal(res.per_query[name], per_query.score)
        assert res.mean[name] == pytest.approx(call.spec.function(y, s, qid=qid, **{
            k: v for k, v in call.options.items()}), rel=1e-15)
        np.testing.assert_array_equal(
            skrank.per_query_scores(name, y, s, qid=qid).score, per_query.score)
    relevant = (y >= 1).any(axis=1)
    assert res.counts["num_rel"].tolist() == np.bincount(qid[relevant], minlength=12).tolist()
    with pytest.raises(skrank.InvalidParameterError, match="cannot be computed in one call"):
        skrank.evaluate(y, s, qid=qid, metrics=["alpha_ndcg@5", "ndcg@5"])


def test_sample_weight_and_no_relevant_follow_the_plan():
    y, s, qid = _arrays(1)
    y[qid == 3] = 0   # a query covering nothing
    w = np.repeat(np.arange(1, 13, dtype=float), 8)
    res = skrank.evaluate(y, s, qid=qid, metrics=["alpha_ndcg@5"], sample_weight=w,
                          no_relevant="skip")
    values = res.per_query["alpha_ndcg@5"]
    assert math.isnan(values[3])
    keep = ~np.isnan(values)
    assert res.mean["alpha_ndcg@5"] == pytest.approx(
        np.average(values[keep], weights=np.arange(1, 13)[keep]), rel=1e-12)


def test_intent_weights_as_a_mapping_or_a_frame_equal_the_array():
    pd = pytest.importorskip("pandas")
    y, s, qid = _arrays(2)
    rng = np.random.default_rng(5)
    weights = rng.random((12, 3)) + 0.05
    expected = diversity.per_query_scores("err_ia@5", y, s, qid=qid, intent_weights=weights)
    mapping = {q: {j: weights[q, j] for j in range(3)} for q in range(12)}
    frame = pd.DataFrame([(q, j, weights[q, j]) for q in range(12) for j in range(3)],
                         columns=["query_id", "subtopic", "weight"])
    for given in (mapping, frame):
        got = skrank.per_query_scores("err_ia@5", y, s, qid=qid, intent_weights=given)
        np.testing.assert_array_equal(got.score, expected.score)
        got = skrank.evaluate(y, s, qid=qid, metrics=["err_ia@5"], intent_weights=given)
        np.testing.assert_array_equal(got.per_query["err_ia@5"], expected.score)
    with pytest.raises(ValueError, match="name subtopic 7"):
        diversity.err_ia_score(y, s, qid=qid, intent_weights={q: {7: 1.0} for q in range(12)})


def test_intent_weights_of_qrels_by_subtopic_id():
    """Against the array form built by hand: columns in subtopic-id order, rows in docno
    order; every judged document retrieved, distinct scores."""
    qrels = [("q1", "car", "d1", 1), ("q1", "cat", "d2", 1), ("q1", "car", "d3", 1),
             ("q1", "os", "d3", 1), ("q2", "a", "e1", 1), ("q2", "b", "e2", 1),
             ("q2", "a", "e3", 1)]
    run = {"q1": {"d1": 1.0, "d2": 3.0, "d3": 2.0}, "q2": {"e1": 0.9, "e2": 0.5, "e3": 1.0}}
    mapping = {"q1": {"car": 0.5, "cat": 0.3, "os": 0.2}, "q2": {"a": 0.9, "b": 0.1}}
    got = skrank.evaluate(qrels=qrels, run=run, metrics=["err_ia@3", "alpha_ndcg@3"],
                          intent_weights=mapping)
    # q1: columns car, cat, os; q2: a, b (0 in the third column)
    y = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0]], float)
    s = [1.0, 3.0, 2.0, 0.9, 0.5, 1.0]
    q = ["q1"] * 3 + ["q2"] * 3
    w = [[0.5, 0.3, 0.2], [0.9, 0.1, 0.0]]
    for name in ("err_ia@3", "alpha_ndcg@3"):
        expected = skrank.per_query_scores(name, y, s, qid=q, intent_weights=w).score
        np.testing.assert_allclose(got.per_query[name], expected, rtol=1e-15)
    again = diversity.evaluate(qrels, run, ["err_ia@3"], intent_weights=mapping)
    np.testing.assert_array_equal(again.per_query["err_ia@3"], got.per_query["err_ia@3"])
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q1", "q2", "q2"],
                          "iteration": ["car", "cat", "os", "a", "b"],
                          "probability": [0.5, 0.3, 0.2, 0.9, 0.1]})
    again = skrank.evaluate(qrels=qrels, run=run, metrics=["err_ia@3"], intent_weights=frame)
    np.testing.assert_array_equal(again.per_query["err_ia@3"], got.per_query["err_ia@3"])
    with pytest.raises(ValueError, match="weight > 0"):   # os covered, no weight
        skrank.evaluate(qrels=qrels, run=run, metrics=["err_ia@3"],
                        intent_weights={"q1": {"car": 1.0, "cat": 1.0}, "q2": {"a": 1.0}})


# --------------------------------------------------------------------------------------
# scikit-learn's model selection


def _model_selection():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.linear_model import Ridge

    class FirstSubtopic(RegressorMixin, BaseEstimator):
        """A ridge regression on the first subtopic's labels."""

        def __init__(self, alpha=1.0):
            self.alpha = alpha

        def fit(self, X, y):
            self.model_ = Ridge(alpha=self.alpha).fit(X, np.asarray(y)[:, 0])
            return self

        def predict(self, X):
            return self.model_.predict(X)

    return sklearn, FirstSubtopic


def test_grid_search_scores_the_label_matrix():
    sklearn, FirstSubtopic = _model_selection()
    from sklearn.model_selection import GridSearchCV, GroupKFold

    y, _, qid = _arrays(3, n_queries=15)
    rng = np.random.default_rng(0)
    X = np.column_stack([y[:, 0] + rng.normal(0, 0.5, qid.size), rng.random(qid.size)])
    cv = GroupKFold(3)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(FirstSubtopic(), {"alpha": [0.1, 1000.0]},
                              scoring="alpha_ndcg@5", cv=cv, error_score="raise")
        search.fit(X, y, qid=qid, groups=qid)
    for i, alpha in enumerate([0.1, 1000.0]):
        expected = []
        for train, test in cv.split(X, y, groups=qid):
            model = FirstSubtopic(alpha).fit(X[train], y[train])
            expected.append(diversity.alpha_ndcg_score(y[test], model.predict(X[test]),
                                                       qid=qid[test], k=5))
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(np.mean(expected),
                                                                         rel=1e-12)


def test_gauc_scoring_in_cross_validate():
    sklearn, _ = _model_selection()
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GroupKFold, cross_validate

    y, _, qid = _arrays(4, n_queries=15)
    labels = y[:, 0]
    X = np.column_stack([labels + np.random.default_rng(1).normal(0, 1, qid.size)])
    cv = GroupKFold(3)
    with sklearn.config_context(enable_metadata_routing=True):
        got = cross_validate(Ridge(), X, labels, scoring="gauc", cv=cv,
                             params={"qid": qid, "groups": qid}, error_score="raise")
    expected = [skrank.gauc_score(labels[test], Ridge().fit(X[train], labels[train]).predict(
        X[test]), qid=qid[test]) for train, test in cv.split(X, labels, groups=qid)]
    np.testing.assert_allclose(got["test_score"], expected, rtol=1e-12)


# --------------------------------------------------------------------------------------
# the command line and compare


def _files(tmp_path, seed=7):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(4):
        for d in range(6):
            for t in ("a", "b", "c"):
                qrels.append(f"{q} {t} d{d} {int(rng.random() < 0.4)}\n")
            run.append(f"{q} Q0 d{d} 1 {rng.random():.6f} tag\n")
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def test_command_line_qrels_format(tmp_path, capsys):
    from skrank.cli import main

    qrels, run = _files(tmp_path)
    out = io.StringIO()
    main(["evaluate", qrels, run, "--qrels-format", "diversity"], out=out)
    means = {name.strip(): float(v) for name, q, v in
             (line.split("\t") for line in out.getvalue().splitlines()) if q == "all"}
    expected = diversity.evaluate(qrels, run, ties="trec")   # ndeval's measures at k = 20
    assert set(means) == set(diversity.DEFAULT_METRICS)
    assert means == {name: pytest.approx(v, abs=5e-5) for name, v in expected.mean.items()}
    for args, message in (
            (["--qrels-format", "trec", "-m", "alpha_ndcg@5"], "--qrels-format trec"),
            (["--qrels-format", "diversity", "-m", "ndcg@5"], "diversity metrics only")):
        assert main(["evaluate", qrels, run, *args], out=io.StringIO()) == 2
        assert message in capsys.readouterr().err
    help_text = io.StringIO()
    with pytest.raises(SystemExit):
        from contextlib import redirect_stdout

        with redirect_stdout(help_text):
            main(["evaluate", "--help"])
    assert "--qrels-format" in help_text.getvalue()


def test_compare_takes_diversity_values_of_arrays():
    y, s, qid = _arrays(8, n_queries=20)
    other = s + 0.5 * y.sum(axis=1)
    results = {name: skrank.evaluate(y, scores, qid=qid, metrics=["alpha_ndcg@5", "strec@3"])
               for name, scores in (("base", s), ("coverage", other))}
    comparison = skrank.compare(results, metrics=["alpha_ndcg@5"], n_resamples=199,
                                random_state=0)
    text = str(comparison)
    assert "alpha_ndcg@5" in text and "coverage" in text
    a, b = (results[n].per_query["alpha_ndcg@5"] for n in ("base", "coverage"))
    assert np.mean(b - a) > 0   # the comparison is of these paired values


# --------------------------------------------------------------------------------------
# beyond-accuracy metrics through evaluate


def _recommender(seed=0, n_users=30, n_items=25):
    rng = np.random.default_rng(seed)
    scores = rng.random((n_users, n_items))
    train = rng.random((n_users, n_items)) < 0.2
    popularity = train.sum(axis=0) + 1
    features = rng.random((n_items, 4))
    history = np.where(train, np.arange(n_items), -1)
    history = np.sort(history, axis=1)[:, ::-1]
    return scores, train, popularity, features, history


def test_evaluate_reports_beyond_metrics_per_user_and_for_the_collection():
    scores, train, popularity, features, history = _recommender()
    top = beyond.top_k_items(scores, 5, exclude=train)
    inputs = dict(n_items=25, item_popularity=popularity, item_features=features,
                  history=history)
    names = [f"{name}@5" for name in beyond.BEYOND_METRICS]
    res = skrank.evaluate(scores, scores, exclude=train, metrics=names, **inputs)
    assert res.qid.tolist() == list(range(30))
    for name, spec in beyond.BEYOND_METRICS.items():
        takes = {p.name for p in spec.signature_params()}
        expected = spec.function(top, **{k: v for k, v in inputs.items() if k in takes})
        assert res.mean[f"{name}@5"] == pytest.approx(expected, rel=1e-12), name
        values = res.per_query[f"{name}@5"]
        if spec.aggregate == "collection":
            assert np.isnan(values).all()
        else:
            each = beyond.per_user_scores(name, top, **{k: v for k, v in inputs.items()
                                                        if k in takes})
            np.testing.assert_allclose(values[each.qid], each.score, rtol=1e-12)
            assert np.isnan(np.delete(values, each.qid)).all()


def test_beyond_metrics_never_guess_their_inputs():
    scores, train, popularity, _, _ = _recommender(1)
    with pytest.raises(skrank.InvalidParameterError, match="needs n_items"):
        skrank.evaluate(scores, scores, metrics=["catalog_coverage@5"])
    with pytest.raises(skrank.InvalidParameterError, match="needs a cutoff"):
        skrank.evaluate(scores, scores, metrics=["novelty"], item_popularity=popularity)
    with pytest.raises(ValueError, match="2-D score matrix"):
        skrank.evaluate(scores.ravel(), scores.ravel(), qid=np.repeat(np.arange(30), 25),
                        metrics=["novelty@5"], item_popularity=popularity)
    with pytest.raises(skrank.InvalidParameterError, match="one value of the whole collection"):
        skrank.per_query_scores("gini_index@5", scores, scores, n_items=25)
    with pytest.raises(skrank.InvalidParameterError, match="cannot be computed in one call"):
        skrank.evaluate(np.zeros((90, 3)), np.ones(90), qid=np.repeat(np.arange(30), 3),
                        metrics=["alpha_ndcg@5", "novelty@5"], item_popularity=popularity)
    with pytest.raises(ValueError, match="cover every recommended item"):
        skrank.evaluate(scores, scores, metrics=["average_popularity@5"],
                        item_popularity=popularity[:3])


def test_beyond_metrics_beside_accuracy_metrics_in_one_call():
    """On one 2-D form, the accuracy metrics read the labels and these the top-k lists:
    one call gives what two calls give, the columns in the order asked for."""
    scores, train, popularity, _, _ = _recommender(2)
    labels = (np.random.default_rng(3).random(scores.shape) < 0.2).astype(float)
    names = ["ndcg@5", "novelty@5", "mrr", "gini_index@5"]
    both = skrank.evaluate(labels, scores, exclude=train, metrics=names,
                           item_popularity=popularity, n_items=25)
    accuracy = skrank.evaluate(labels, scores, exclude=train, metrics=["ndcg@5", "mrr"])
    lists = skrank.evaluate(labels, scores, exclude=train, metrics=["novelty@5", "gini_index@5"],
                            item_popularity=popularity, n_items=25)
    assert list(both.mean) == names
    for res in (accuracy, lists):
        for name in res.mean:
            assert both.mean[name] == res.mean[name]
            np.testing.assert_array_equal(both.per_query[name], res.per_query[name])
    np.testing.assert_array_equal(both.counts["num_ret"], accuracy.counts["num_ret"])
