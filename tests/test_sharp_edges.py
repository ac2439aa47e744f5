"""Sharp edges met by using skrank from outside (issue 10), one test group per item.

Each test states the behaviour a user relies on; they failed before the fixes.
"""

import decimal
import inspect
import io
import json
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import UndefinedMetricWarning

import skrank
import skrank.model_selection
from skrank import InvalidParameterError

from _ltr_data import ltr_path

# --------------------------------------------------------------------------------------
# Items 10 and 12: one rule for missing query ids, whatever their dtype.
# --------------------------------------------------------------------------------------

Y3, S3 = [1, 0, 1], [0.3, 0.2, 0.1]


def _object(*values):
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr


def _missing_id_inputs():
    pd = pytest.importorskip("pandas")
    return {
        "object None": _object("a", None, "a"),
        "object float nan": _object(1.0, float("nan"), 1.0),
        "object np.nan": _object(1, np.nan, 1),
        "object decimal nan": _object(1, decimal.Decimal("nan"), 1),
        "object np.float32 nan": _object(1, np.float32("nan"), 1),
        "list with None": [1, None, 1],
        "list with nan": [1.0, np.nan, 1.0],
        "float array": np.array([1.0, np.nan, 2.0]),
        "float32 array": np.array([1.0, np.nan, 2.0], dtype=np.float32),
        "datetime NaT": np.array(["2020-01-01", "NaT", "2020-01-01"], dtype="datetime64[D]"),
        "pandas NA (string dtype)": pd.Series(["a", None, "b"], dtype="string"),
        "pandas str column": pd.Series(["a", np.nan, "b"]),
        "pandas Int64 NA": pd.array([1, None, 1], dtype="Int64"),
        "pandas NaT": pd.Series(pd.to_datetime(["2020-01-01", None, "2020-01-01"])),
        "pandas categorical": pd.Series(pd.Categorical(["a", None, "a"])),
    }


def test_missing_query_ids_are_one_error_for_every_dtype():
    for label, qid in _missing_id_inputs().items():
        print(label)  # shown by pytest when an input is let through
        with pytest.raises(ValueError, match=r"ndcg_score: qid must not contain missing ids "
                                             r"\(None, NaN, NaT or pandas\.NA\)\. Got 1 missing "
                                             r"id\(s\), .* at row\(s\) 1\. Drop those rows"):
            skrank.ndcg_score(Y3, S3, qid=qid)
        # the same rule in evaluate, per_query_scores and the splitters
        with pytest.raises(ValueError, match="qid must not contain missing ids"):
            skrank.evaluate(Y3, S3, qid=qid, metrics=["map"])
        with pytest.raises(ValueError, match="QueryKFold: qid must not contain missing ids"):
            list(skrank.model_selection.QueryKFold(2).split(np.zeros((3, 1)), qid=qid))


def test_nan_ids_are_not_grouped_by_object_identity():
    # float('nan') twice used to make two queries and np.nan twice one
    for qid in (_object(float("nan"), float("nan"), 1.0), _object(np.nan, np.nan, 1)):
        with pytest.raises(ValueError, match=r"Got 2 missing id\(s\), the first being nan, "
                                             r"at row\(s\) 0, 1\."):
            skrank.per_query_scores("ndcg", Y3, S3, qid=qid)


def test_missing_ids_counted_and_valid_ids_untouched():
    with pytest.raises(ValueError, match=r"Got 2 missing id\(s\), the first being None, "
                                         r"at row\(s\) 0, 2\."):
        skrank.map_score([1, 0, 1, 1], [1, 2, 3, 4], qid=_object(None, "a", float("nan"), "a"))
    # ids that merely look special are fine: the string "nan", 0, False, empty string
    res = skrank.per_query_scores("ndcg", [1, 0, 1, 0], [1, 2, 3, 4],
                                  qid=_object("nan", "nan", "", ""))
    assert sorted(res.qid.tolist()) == ["", "nan"]
    res = skrank.per_query_scores("ndcg", [1, 0, 1, 0], [1, 2, 3, 4], qid=[(1, 2), (1, 2), 0, 0])
    assert len(res.qid) == 2


def test_missing_id_check_is_vectorised_for_numbers():
    """A numeric qid never goes through a per-row Python call."""
    from skrank._engine import codes as C

    calls = []
    original = C._is_missing_id
    C._is_missing_id = lambda v: calls.append(v) or original(v)
    try:
        skrank.ndcg_score(np.ones(1000), np.arange(1000.0), qid=np.repeat(np.arange(10.0), 100))
        skrank.ndcg_score(np.ones(1000), np.arange(1000.0), qid=np.repeat(np.arange(10), 100))
    finally:
        C._is_missing_id = original
    assert calls == []


# --------------------------------------------------------------------------------------
# Item 1: every public entry point takes what scikit-learn's own take there.
# --------------------------------------------------------------------------------------


def _svmlight_mq2008():
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(str(ltr_path("letor_mq2008_fold1", "vali.txt")), query_id=True)


def _x_forms(X):
    """The same rows as a sparse matrix, a sparse array, a DataFrame and a list."""
    pd = pytest.importorskip("pandas")
    dense = X.toarray()
    return {"csr_matrix": sp.csr_matrix(X), "csr_array": sp.csr_array(X),
            "csc_array": sp.csc_array(X), "DataFrame": pd.DataFrame(dense),
            "list": dense.tolist(), "ndarray": dense}


def test_splitters_take_the_loaders_sparse_X_like_groupkfold():
    from sklearn.model_selection import GroupKFold

    from skrank.model_selection import QueryKFold, QueryShuffleSplit

    X, y, qid = _svmlight_mq2008()
    assert sp.issparse(X)
    expected_kfold = [test.tolist() for _, test in QueryKFold(3).split(X.toarray(), qid=qid)]
    expected_shuffle = [test.tolist() for _, test in QueryShuffleSplit(
        2, random_state=0).split(X.toarray(), qid=qid)]
    for label, X_form in _x_forms(X).items():
        for kwargs in ({"qid": qid}, {"groups": qid}):
            got = [test.tolist() for _, test in QueryKFold(3).split(X_form, y, **kwargs)]
            assert got == expected_kfold, label
            got = [test.tolist() for _, test in QueryShuffleSplit(
                2, random_state=0).split(X_form, y, **kwargs)]
            assert got == expected_shuffle, label
        list(GroupKFold(3).split(X_form, y, groups=qid))  # the scikit-learn reference takes it


def test_splitters_and_scorer_inside_model_selection_with_sparse_X():
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.model_selection import cross_validate

    from skrank.model_selection import QueryKFold

    class SumOfFeatures(RegressorMixin, BaseEstimator):
        """Scores rows by their feature sum: exactly the same for every form of X."""

        def fit(self, X, y):
            return self

        def predict(self, X):
            return np.asarray(X.sum(axis=1)).ravel()

    X, y, qid = _svmlight_mq2008()
    tree = SumOfFeatures()
    _routing(True)
    try:
        dense = cross_validate(tree, X.toarray(), y, cv=QueryKFold(3), scoring="ndcg@10",
                               params={"qid": qid}, error_score="raise")["test_score"]
        for X_form in (sp.csr_matrix(X), sp.csr_array(X)):
            got = cross_validate(tree, X_form, y, cv=QueryKFold(3), scoring="ndcg@10",
                                 params={"qid": qid}, error_score="raise")["test_score"]
            np.testing.assert_allclose(got, dense)
    finally:
        _routing(False)


def _routing(on):
    import sklearn

    sklearn.set_config(enable_metadata_routing=on)
    return True


@pytest.mark.filterwarnings("ignore:Converting data to scipy sparse matrix:UserWarning")
def test_query_lgbm_ranker_takes_sparse_and_list_X():
    pytest.importorskip("lightgbm")
    from skrank.rankers import QueryLGBMRanker

    X, y, qid = _svmlight_mq2008()
    X, y, qid = X[:600], y[:600], qid[:600]
    params = dict(n_estimators=5, n_jobs=1, verbose=-1, random_state=0, min_child_samples=5)
    reference = QueryLGBMRanker(**params).fit(X.toarray(), y, qid=qid).predict(X.toarray())
    for label, X_form in _x_forms(X).items():
        model = QueryLGBMRanker(**params).fit(X_form, y, qid=qid)
        np.testing.assert_allclose(model.predict(X_form), reference, err_msg=label)


# --------------------------------------------------------------------------------------
# Items 6, 15, 16: the routes that bring qid to the scorer, and the message when none does.
# --------------------------------------------------------------------------------------


def test_missing_qid_message_names_every_exact_call():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_validate

    from skrank.model_selection import QueryKFold

    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.arange(40) % 3
    qid = np.repeat(np.arange(8), 5)
    with pytest.raises(ValueError) as info:
        cross_validate(Ridge(), X, y, groups=qid, cv=QueryKFold(2), scoring="ndcg@10",
                       error_score="raise")
    message = str(info.value)
    for needed in ("groups=qid reaches the splitter only",
                   "sklearn.set_config(enable_metadata_routing=True)",
                   "GridSearchCV(...).fit(X, y, qid=qid)",
                   "cross_validate(..., params={'qid': qid})",
                   "cross_val_score(..., params={'qid': qid})",
                   "validation_curve(..., params={'qid': qid})",
                   "pandas DataFrame with a 'qid' column",
                   "skrank.model_selection.DropQid()",
                   "skrank.model_selection.cross_val_evaluate(model, X, y, qid=qid)",
                   "error_score='raise'"):
        assert needed in message, needed
    # with default error_score, the same message reaches the user in the warning
    with pytest.warns(UserWarning, match=r"skrank\.model_selection\.DropQid\(\)"):
        result = cross_validate(Ridge(), X, y, groups=qid, cv=QueryKFold(2), scoring="ndcg@10")
    assert np.isnan(result["test_score"]).all()


def test_every_call_named_in_the_message_works_with_routing():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import (GridSearchCV, cross_val_score, cross_validate,
                                         validation_curve)

    from skrank.model_selection import QueryKFold

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(float)
    qid = np.repeat(np.arange(12), 5)
    cv = QueryKFold(3)
    _routing(True)
    try:
        a = cross_validate(Ridge(), X, y, cv=cv, scoring="ndcg@10", params={"qid": qid},
                           error_score="raise")["test_score"]
        b = cross_val_score(Ridge(), X, y, cv=cv, scoring="ndcg@10", params={"qid": qid},
                            error_score="raise")
        c = GridSearchCV(Ridge(), {"alpha": [1.0]}, cv=cv, scoring="ndcg@10",
                         error_score="raise").fit(X, y, qid=qid)
        d = None
        if "params" in inspect.signature(validation_curve).parameters:  # scikit-learn >= 1.6
            _, d = validation_curve(Ridge(), X, y, param_name="alpha", param_range=[1.0],
                                    cv=cv, scoring="ndcg@10", params={"qid": qid},
                                    error_score="raise")
    finally:
        _routing(False)
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(c.cv_results_["mean_test_score"][0], a.mean())
    if d is not None:
        np.testing.assert_allclose(d[0], a)


def test_drop_qid_keeps_the_qid_column_out_of_a_sklearn_regressor_on_mq2008():
    """The DataFrame route with DropQid scores exactly as routing with a numpy X; the same
    pipeline without DropQid learns from the ids (the silent difference of item 15)."""
    pd = pytest.importorskip("pandas")
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.model_selection import cross_validate
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skrank.model_selection import DropQid, QueryKFold

    X, y, qid = _svmlight_mq2008()
    X = X.toarray()
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)

    def model(*first):
        return make_pipeline(*first, StandardScaler(),
                             HistGradientBoostingRegressor(max_iter=15, random_state=0))

    _routing(True)
    try:
        routed = cross_validate(model(), X, y, cv=QueryKFold(3), scoring="ndcg@10",
                                params={"qid": qid}, error_score="raise")["test_score"]
    finally:
        _routing(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)     # DropQid: the model never saw qid
        frame = cross_validate(model(DropQid()), df, y, cv=QueryKFold(3), scoring="ndcg@10",
                               error_score="raise", return_estimator=True)
    np.testing.assert_allclose(frame["test_score"], routed)
    fitted = frame["estimator"][0]
    assert "qid" not in fitted[1].feature_names_in_.tolist()  # the scaler after DropQid
    assert fitted[-1].n_features_in_ == X.shape[1]
    with pytest.warns(UserWarning, match=r"the model was fitted with the query-id column "
                                         r"'qid' .*DropQid\(\)"):
        leaky = cross_validate(model(), df, y, cv=QueryKFold(3), scoring="ndcg@10",
                               error_score="raise")["test_score"]
    assert not np.allclose(leaky, routed)


def test_drop_qid_passes_other_inputs_through_and_names_features():
    pd = pytest.importorskip("pandas")
    from skrank.model_selection import DropQid

    X = np.arange(6.0).reshape(3, 2)
    assert DropQid().fit_transform(X) is X
    Xs = sp.csr_array(X)
    assert DropQid().fit_transform(Xs) is Xs
    df = pd.DataFrame({"a": [1, 2], "qid": [3, 3], "b": [4, 5]})
    out = DropQid().fit(df).transform(df)
    assert out.columns.tolist() == ["a", "b"] and df.columns.tolist() == ["a", "qid", "b"]
    assert DropQid().fit(df).get_feature_names_out().tolist() == ["a", "b"]
    assert DropQid(column="query").fit_transform(df.rename(columns={"qid": "query"})
                                                 ).columns.tolist() == ["a", "b"]
    with pytest.raises(InvalidParameterError, match="DropQid: column must be a str"):
        DropQid(column=3).fit(df)


# --------------------------------------------------------------------------------------
# Items 9 and 17: QueryLGBMRanker's evaluation sets take query ids, in any row order.
# --------------------------------------------------------------------------------------


def _lgbm_eval_data():
    pytest.importorskip("lightgbm")
    X, y, qid = _svmlight_mq2008()
    X = X.toarray()
    cut = np.unique(qid)[100]
    train, valid = qid < cut, qid >= cut
    return (X[train], y[train], qid[train]), (X[valid], y[valid], qid[valid])


_LGBM = dict(n_estimators=40, learning_rate=0.3, n_jobs=1, verbose=-1, random_state=0,
             min_child_samples=5)


def _reference_eval(train, valid):
    """LightGBM's own ranker on contiguous rows with hand-made group sizes (the oracle)."""
    import lightgbm

    (X, y, qid), (Xv, yv, qv) = train, valid
    sizes = lambda q: np.unique(q, return_counts=True)[1]  # noqa: E731 (sorted, contiguous)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # LightGBM 4.7 prefers eval_X/eval_y
        model = lightgbm.LGBMRanker(**_LGBM).fit(X, y, group=sizes(qid), eval_set=[(Xv, yv)],
                                                 eval_group=[sizes(qv)], eval_at=[10])
    return model.evals_result_["valid_0"]["ndcg@10"]


def test_query_lgbm_ranker_eval_qid_in_any_row_order():
    from skrank.rankers import QueryLGBMRanker

    train, valid = _lgbm_eval_data()
    Xv, yv, qv = valid
    shuffled = np.random.default_rng(0).permutation(qv.size)   # not contiguous by query
    # LightGBM keeps tied documents in row order: the oracle sees each query's rows in
    # the shuffled order, made contiguous
    contiguous = shuffled[np.argsort(qv[shuffled], kind="stable")]
    expected = _reference_eval(train, tuple(a[contiguous] for a in valid))
    model = QueryLGBMRanker(**_LGBM).fit(
        *train[:2], qid=train[2], eval_set=[(Xv[shuffled], yv[shuffled])],
        eval_qid=[qv[shuffled]], eval_at=[10])
    np.testing.assert_allclose(model.evals_result_["valid_0"]["ndcg@10"], expected)
    # skrank's own nDCG@10 (exponential gain, as LightGBM) on the last iteration agrees too
    ours = skrank.ndcg_score(yv[contiguous], model.predict(Xv[contiguous]), qid=qv[contiguous],
                             k=10, gain="exponential", ties="stable", no_relevant="one")
    assert ours == pytest.approx(expected[-1], abs=1e-6)


def test_query_lgbm_ranker_eval_dataframe_with_qid_column_and_early_stopping():
    pd = pytest.importorskip("pandas")
    import lightgbm

    from skrank.rankers import QueryLGBMRanker

    train, valid = _lgbm_eval_data()
    frame = lambda X, q: pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]  # noqa
                                      ).assign(qid=q)
    Xv, yv, qv = valid
    shuffled = np.random.default_rng(1).permutation(qv.size)
    contiguous = shuffled[np.argsort(qv[shuffled], kind="stable")]
    expected = _reference_eval(train, tuple(a[contiguous] for a in valid))
    model = QueryLGBMRanker(**_LGBM).fit(
        frame(train[0], train[2]), train[1],
        eval_set=[(frame(Xv, qv).iloc[shuffled], yv[shuffled])], eval_at=[10])
    np.testing.assert_allclose(model.evals_result_["valid_0"]["ndcg@10"], expected)
    assert model.n_features_in_ == train[0].shape[1]
    stopped = QueryLGBMRanker(**{**_LGBM, "n_estimators": 400}).fit(
        train[0], train[1], qid=train[2], eval_set=[(Xv, yv)], eval_qid=[qv], eval_at=[10],
        callbacks=[lightgbm.early_stopping(5, verbose=False)])
    assert stopped.best_iteration_ < 400


def test_query_lgbm_ranker_refuses_group_sizes_and_missing_eval_ids():
    from skrank.rankers import QueryLGBMRanker

    train, valid = _lgbm_eval_data()
    Xv, yv, qv = valid
    with pytest.raises(ValueError, match=r"pass eval_qid \(one array per eval set\), not "
                                         r"eval_group: group sizes are derived"):
        QueryLGBMRanker(**_LGBM).fit(*train[:2], qid=train[2], eval_set=[(Xv, yv)],
                                     eval_group=[np.unique(qv, return_counts=True)[1]])
    with pytest.raises(ValueError, match=r"eval_set\[0\] needs query ids: pass eval_qid"):
        QueryLGBMRanker(**_LGBM).fit(*train[:2], qid=train[2], eval_set=[(Xv, yv)])
    with pytest.raises(ValueError, match=r"eval_qid must hold one entry per eval_set \(1\)"):
        QueryLGBMRanker(**_LGBM).fit(*train[:2], qid=train[2], eval_set=[(Xv, yv)],
                                     eval_qid=[qv, qv])


def test_query_lgbm_ranker_moves_weights_and_init_scores_with_the_rows():
    import lightgbm

    from skrank.rankers import QueryLGBMRanker

    (X, y, qid), _ = _lgbm_eval_data()
    rng = np.random.default_rng(0)
    w = rng.uniform(0.5, 2, size=qid.size)
    init = rng.normal(size=qid.size)
    expected = lightgbm.LGBMRanker(**_LGBM).fit(
        X, y, group=np.unique(qid, return_counts=True)[1], sample_weight=w,
        init_score=init).predict(X)
    shuffled = rng.permutation(qid.size)
    model = QueryLGBMRanker(**_LGBM).fit(X[shuffled], y[shuffled], qid=qid[shuffled],
                                         sample_weight=w[shuffled], init_score=init[shuffled])
    np.testing.assert_allclose(model.predict(X), expected)


# --------------------------------------------------------------------------------------
# Item 2: Evaluation.to_dict reads each column once (it was quadratic in the queries).
# --------------------------------------------------------------------------------------


class _CountingArray(np.ndarray):
    """An array that counts full conversions to Python lists."""

    reads = 0

    def tolist(self):
        type(self).reads += 1
        return super().tolist()


def test_to_dict_reads_each_column_once_and_matches_the_values():
    rng = np.random.default_rng(0)
    n_queries = 400
    qid = np.repeat(np.arange(n_queries), 5)
    y = rng.integers(0, 2, size=qid.size)
    res = skrank.evaluate(y, rng.random(qid.size), qid=qid, metrics=["ndcg@3", "map"],
                          no_relevant="nan")
    counted = skrank.Evaluation(qid=res.qid, mean=res.mean, counts=res.counts,
                                per_query={k: v.view(_CountingArray)
                                           for k, v in res.per_query.items()})
    _CountingArray.reads = 0
    data = counted.to_dict()
    assert _CountingArray.reads <= 2 * len(res.per_query)   # was n_queries per metric
    # the values, against a plain per-query reading (NaN -> None for JSON)
    assert data["qid"] == list(range(n_queries))   # the ids themselves (issue 11)
    for i, q in enumerate(data["qid"]):
        for name, values in res.per_query.items():
            expected = None if np.isnan(values[i]) else float(values[i])
            assert data["per_query"][q][name] == expected
    assert any(v["map"] is None for v in data["per_query"].values())
    json.dumps(data)   # plain Python throughout


# --------------------------------------------------------------------------------------
# Item 3: exponential gain of a large label is an error naming y_true, never NaN.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda y: skrank.ndcg_score(y, [0.1, 0.2], qid=[0, 0], gain="exponential"),
    lambda y: skrank.dcg_score(y, [0.1, 0.2], qid=[0, 0], gain="exponential"),
    lambda y: skrank.evaluate(y, [0.1, 0.2], qid=[0, 0], metrics=["ndcg_exp@10", "map"]),
])
def test_exponential_gain_of_a_huge_label_is_an_error(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # and no overflow warning on the way
        with pytest.raises(ValueError, match=r"y_true must be <= 1000 for gain='exponential'"
                                             r".*Got max\(y_true\) = 2000 instead\. Use "
                                             r"gain='linear'"):
            call([2000, 0])


def test_exponential_gain_up_to_the_limit_is_exact():
    # two documents at the largest usable label, one ranked below a 0: 1 / log2(3) ... exactly
    y, s = [1000, 0, 1000], [0.9, 0.8, 0.1]
    ideal = (2.0 ** 1000 - 1) * (1 + 1 / np.log2(3))
    dcg = (2.0 ** 1000 - 1) * (1 + 1 / np.log2(4))
    assert skrank.ndcg_score(y, s, qid=[0, 0, 0], gain="exponential") == pytest.approx(
        dcg / ideal, rel=1e-12)


# --------------------------------------------------------------------------------------
# Item 11: a cutoff given in the params of a (name, params) pair counts as the cutoff.
# --------------------------------------------------------------------------------------


def test_name_params_pair_takes_its_cutoff_from_params():
    y, s, q = [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], [0, 0, 0, 0]
    res = skrank.evaluate(y, s, qid=q, metrics={"p": ("precision", {"k": 2}),
                                                "p_min": ("precision", {"k": 10,
                                                                        "denominator": "min"})})
    assert res.mean == {"p": 0.5, "p_min": 0.5}   # 1 of 2; 2 of min(4, 10)
    res = skrank.evaluate(y, s, qid=q, metrics=[("precision", {"k": 3})])
    assert list(res.mean) == ["precision@3"] and res.mean["precision@3"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="precision needs a cutoff"):
        skrank.evaluate(y, s, qid=q, metrics=[("precision", {"k": None})])


# --------------------------------------------------------------------------------------
# Item 13: sparse labels/scores and generators get a message that names them.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [sp.csr_matrix, sp.csr_array, sp.coo_array])
def test_sparse_scores_say_what_to_pass(make):
    dense = np.array([[1.0, 0.0, 2.0]])
    with pytest.raises(TypeError, match=rf"ndcg_score: y_score must be a dense array of "
                                        rf"numbers \(every document needs a score\)\. Got a "
                                        rf"sparse {make.__name__} of shape \(1, 3\) instead: "
                                        rf"pass y_score\.toarray\(\)"):
        skrank.ndcg_score(dense, make(dense))
    with pytest.raises(TypeError, match=r"ndcg_score: y_score must be a dense"):
        skrank.ndcg_score(make(dense), make(dense))   # beside the 2-D form's sparse y_true
    # the sparse relevance matrix itself is valid input, equal to its dense form
    assert skrank.ndcg_score(make(dense), dense[:, ::-1]) == skrank.ndcg_score(dense,
                                                                              dense[:, ::-1])


@pytest.mark.parametrize("make", [lambda: (v for v in [1, 0]), lambda: map(float, [1, 0]),
                                  lambda: {1.0, 0.0}])
def test_generators_and_sets_say_what_to_pass(make):
    with pytest.raises(TypeError, match=r"y_score must be an array-like of numbers .*Got a "
                                        r"(generator|map|set) instead.*list\(y_score\)"):
        skrank.map_score([1, 0], make(), qid=[0, 0])


# --------------------------------------------------------------------------------------
# Item 14: a bad parameter raises skrank.InvalidParameterError (a ValueError and a
# TypeError, as scikit-learn's); bad array contents stay plain ValueErrors.
# --------------------------------------------------------------------------------------

_Y, _S, _Q = [1, 0, 2, 0], [0.4, 0.3, 0.2, 0.1], [0, 0, 1, 1]


def _bad_parameter_calls():
    from skrank.model_selection import QueryKFold

    return {
        "k=0": lambda: skrank.ndcg_score(_Y, _S, qid=_Q, k=0),
        "k=1.5": lambda: skrank.ndcg_score(_Y, _S, qid=_Q, k=1.5),
        "gain name": lambda: skrank.ndcg_score(_Y, _S, qid=_Q, gain="exp"),
        "gain negative": lambda: skrank.ndcg_score(_Y, _S, qid=_Q, gain=lambda y: y - 5),
        "gain fails": lambda: skrank.ndcg_score(_Y, _S, qid=_Q, gain=lambda y: 1 / "a"),
        "gain shape": lambda: skrank.dcg_score(_Y, _S, qid=_Q, gain=lambda y: y[:1]),
        "gain inf": lambda: skrank.dcg_score(_Y, _S, qid=_Q, gain=lambda y: y / 0.0),
        "log_base": lambda: skrank.dcg_score(_Y, _S, qid=_Q, log_base=1),
        "ties": lambda: skrank.ndcg_score(_Y, _S, qid=_Q, ties="random"),
        "unknown option": lambda: skrank.per_query_scores("map", _Y, _S, qid=_Q, gain="linear"),
        "metric name": lambda: skrank.evaluate(_Y, _S, qid=_Q, metrics=["ndgc@10"]),
        "metric type": lambda: skrank.evaluate(_Y, _S, qid=_Q, metrics=[3]),
        "metrics type": lambda: skrank.evaluate(_Y, _S, qid=_Q, metrics=5),
        "metric twice": lambda: skrank.evaluate(_Y, _S, qid=_Q, metrics=["map", "map"]),
        "no metric": lambda: skrank.evaluate(_Y, _S, qid=_Q, metrics=[]),
        "cutoff missing": lambda: skrank.evaluate(_Y, _S, qid=_Q, metrics=["precision"]),
        "cutoff not taken": lambda: skrank.evaluate(_Y, _S, qid=_Q, metrics=["r_precision@3"]),
        "trec ties": lambda: skrank.evaluate(_Y, _S, qid=_Q, ties="trec"),
        "arrays and files": lambda: skrank.evaluate(_Y, _S, qid=_Q, qrels="q", run="r"),
        "per_query metric": lambda: skrank.per_query_scores("ndgc", _Y, _S, qid=_Q),
        "scorer name": lambda: skrank.get_scorer("ndgc@10"),
        "scorer option twice": lambda: skrank.make_ranking_scorer("ndcg@10", k=5),
        "scorer response": lambda: skrank.make_ranking_scorer("ndcg", response="proba"),
        "n_splits": lambda: list(QueryKFold(1).split(None, qid=_Q)),
    }


@pytest.mark.parametrize("label", list(_bad_parameter_calls()))
def test_bad_parameters_raise_invalid_parameter_error(label):
    with pytest.raises(InvalidParameterError) as info:
        _bad_parameter_calls()[label]()
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    assert type(info.value).__module__ == "skrank"   # shown as skrank.InvalidParameterError


@pytest.mark.parametrize("call", [
    lambda: skrank.ndcg_score([1, 0], [0.1, np.nan], qid=[0, 0]),        # NaN score
    lambda: skrank.ndcg_score([1, np.nan], [0.1, 0.2], qid=[0, 0]),      # NaN label
    lambda: skrank.ndcg_score([1, 0], [0.1, 0.2, 0.3], qid=[0, 0]),      # lengths
    lambda: skrank.err_score([1, 7], [0.1, 0.2], qid=[0, 0], max_grade=4),   # above the scale
    lambda: skrank.ndcg_score([1, 0], [0.1, 0.2], qid=[0, None]),        # missing id
])
def test_bad_array_contents_stay_plain_value_errors(call):
    with pytest.raises(ValueError) as info:
        call()
    assert not isinstance(info.value, InvalidParameterError)


@pytest.mark.parametrize("kwargs", [{"k": 0}, {"k": -1}, {"k": 1.5}, {"k": "3"}])
def test_code_catching_sklearn_errors_keeps_working(kwargs):
    """What catches scikit-learn's ndcg_score error catches skrank's, as ValueError and as
    TypeError alike."""
    from sklearn.metrics import ndcg_score as sk_ndcg

    for exc in (ValueError, TypeError):
        with pytest.raises(exc):
            sk_ndcg([[1, 0, 2]], [[0.3, 0.2, 0.1]], **kwargs)
        with pytest.raises(exc):
            skrank.ndcg_score([[1, 0, 2]], [[0.3, 0.2, 0.1]], **kwargs)


# --------------------------------------------------------------------------------------
# Item 5: scoring strings that scikit-learn also knows stay scikit-learn's, and say so
# when they fail on ranking data.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, spelling", [("recall", "recall@100"),
                                            ("precision", "precision@10")])
def test_shadowed_scoring_string_fails_with_the_skrank_spelling(name, spelling):
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_score

    from skrank.model_selection import QueryKFold

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    qid = np.repeat(np.arange(12), 5)
    expected = (rf"scoring='{name}' is scikit-learn's classification {name}_score, which "
                rf"failed on these predictions: Classification metrics can't handle a mix of "
                rf"binary and continuous targets\. If you meant the ranking metric, write a "
                rf"cutoff, e\.g\. scoring='{spelling}', or pass "
                rf"scoring=skrank\.make_ranking_scorer\('{name}'")
    _routing(True)
    try:
        with pytest.raises(ValueError, match=expected):
            cross_val_score(Ridge(), X, y, cv=QueryKFold(3), scoring=name,
                            params={"qid": qid}, error_score="raise")
        with pytest.warns(UserWarning, match=rf"write a cutoff, e\.g\. scoring='{spelling}'"):
            cross_val_score(Ridge(), X, y, cv=QueryKFold(3), scoring=name, params={"qid": qid})
        # the spelling it suggests works
        ranked = cross_val_score(Ridge(), X, y, cv=QueryKFold(3), scoring=spelling,
                                 params={"qid": qid}, error_score="raise")
        assert np.isfinite(ranked).all()
    finally:
        _routing(False)


def test_shadowed_scoring_string_still_scores_classifiers_as_sklearn():
    import copy
    import pickle

    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import get_scorer, make_scorer, recall_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=80) > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    scorer = get_scorer("recall")
    assert scorer(model, X, y) == make_scorer(recall_score)(model, X, y)
    assert skrank.get_scorer("recall")(model, X, y) == scorer(model, X, y)
    for clone in (copy.deepcopy(scorer), pickle.loads(pickle.dumps(scorer))):
        assert clone(model, X, y) == scorer(model, X, y)


# --------------------------------------------------------------------------------------
# Item 8: the command line: --version, '-' for standard input, file errors that name the
# file, and err's grade scale as an option.
# --------------------------------------------------------------------------------------


class _Done:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _cli(argv, stdin=None):
    """Run the command in this process (standard streams replaced), as the console would."""
    import contextlib
    import sys

    from skrank.cli import main

    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    old_stdin, sys.stdin = sys.stdin, fake_stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:   # argparse's --version and usage errors
                status = exc.code
    finally:
        sys.stdin = old_stdin
    return _Done(status, out.getvalue().encode(), err.getvalue().encode())


@pytest.fixture
def one_query(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 x 1\nq 0 y 0\n")
    run = tmp_path / "run.txt"
    run.write_text("q Q0 y 1 0.7 t\nq Q0 x 2 0.3 t\n")
    return qrels, run


def test_cli_version():
    done = _cli(["--version"])
    assert done.returncode == 0
    assert done.stdout.decode().strip() == f"skrank {skrank.__version__}"


def test_cli_reads_standard_input(one_query):
    qrels, run = one_query
    expected = _cli(["evaluate", str(qrels), str(run), "-m", "map", "-m", "ndcg"])
    assert expected.returncode == 0
    for argv, data in ((["evaluate", str(qrels), "-"], run.read_bytes()),
                       (["evaluate", "-", str(run)], qrels.read_bytes())):
        done = _cli([*argv, "-m", "map", "-m", "ndcg"], stdin=data)
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected.stdout
    done = _cli(["evaluate", "-", "-"], stdin=b"")
    assert done.returncode == 2
    assert b"only one of qrels and run can be read from standard input" in done.stderr


def test_cli_file_errors_name_the_file(one_query, tmp_path):
    from skrank.cli import main

    qrels, run = one_query
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    other = tmp_path / "other.txt"
    other.write_text("z Q0 x 1 0.3 t\n")
    cases = [
        ([str(qrels), str(empty)], f"{empty}: no line (an empty run file)"),
        ([str(empty), str(run)], f"{empty}: no line (an empty qrels file)"),
        ([str(qrels), str(tmp_path / 'missing.txt')], f"{tmp_path / 'missing.txt'}: no such file"),
        ([str(qrels), str(other), "-m", "ndcg@10"], f"{other}: no query of the run is in {qrels}"),
    ]
    high = tmp_path / "graded.txt"
    high.write_text("q 0 x 6\nq 0 y 0\n")
    cases.append(([str(high), str(run), "-m", "err@10"],
                  f"{high}: relevance level 6 is above err's grade scale 0-4 (--max-grade, "
                  f"default 4 as gdeval). Pass --max-grade 6 or more."))
    for files, message in cases:
        err = io.StringIO()
        import contextlib

        with contextlib.redirect_stderr(err):
            assert main(["evaluate", *files], out=io.StringIO()) == 2
        assert message in err.getvalue()
        assert "y_true" not in err.getvalue()


def test_cli_err_grade_scale_is_documented_and_an_option(one_query):
    from skrank.cli import _build_parser

    help_text = _build_parser()._subparsers._group_actions[0].choices["evaluate"].format_help()
    assert "--max-grade G" in help_text and "default 4" in help_text
    qrels, run = one_query
    # one relevant document (grade 1) at rank 2 under an irrelevant one:
    # ERR = R(1) / 2 with R(1) = (2**1 - 1) / 2**G
    for grade_option, expected in (([], 1 / 2 ** 4 / 2), (["--max-grade", "2"], 1 / 2 ** 2 / 2),
                                   (["--max-grade", "1"], 1 / 2 ** 1 / 2)):
        done = _cli(["evaluate", str(qrels), str(run), "-m", "err@10", "--json", *grade_option])
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["mean"]["err@10"] == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------
# Item 18 (the rest is in tests/test_docs.py): nothing that .gitignore lists is committed.
# --------------------------------------------------------------------------------------


def test_no_ignored_file_is_tracked():
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "ls-files", "--cached", "--ignored", "--exclude-standard"],
                          cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"git ls-files failed: {done.stderr.strip()}")
    assert done.stdout.split() == [], "tracked files that .gitignore lists (git rm --cached them)"
