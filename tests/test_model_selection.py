"""QueryKFold and QueryShuffleSplit: whole queries only, with the real scikit-learn."""

import numpy as np
import pytest
import sklearn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, cross_validate
from sklearn.neighbors import KNeighborsRegressor

import skrank
from skrank.model_selection import QueryKFold, QueryShuffleSplit

pd = pytest.importorskip("pandas")

SPLITTERS = {
    "QueryKFold": lambda n_splits, seed: QueryKFold(n_splits),
    "QueryKFold-shuffle": lambda n_splits, seed: QueryKFold(n_splits, shuffle=True,
                                                            random_state=seed),
    "QueryShuffleSplit": lambda n_splits, seed: QueryShuffleSplit(n_splits, test_size=0.3,
                                                                  random_state=seed),
}


def routed():
    return sklearn.config_context(enable_metadata_routing=True)


def ragged_qid(sizes, *, ids=None, seed=0, shuffle=True):
    """Query ids for queries of the given sizes, rows interleaved when ``shuffle``."""
    ids = np.arange(len(sizes)) * 3 + 11 if ids is None else np.asarray(ids)
    qid = np.repeat(ids, sizes)
    if shuffle:
        qid = qid[np.random.default_rng(seed).permutation(qid.size)]
    return qid


def check_whole_queries(qid, splits, n_rows):
    for train, test in splits:
        assert train.size + test.size == n_rows
        assert np.intersect1d(train, test).size == 0
        np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(n_rows))
        assert not set(qid[train].tolist()) & set(qid[test].tolist()), "a query was cut"
        # the row order is kept (XGBoost needs rows sorted by qid within a fit)
        assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)


# --------------------------------------------------------------------------------------
# properties over random query layouts
# --------------------------------------------------------------------------------------

layouts = st.lists(st.integers(1, 30), min_size=2, max_size=40)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=layouts, n_splits=st.integers(2, 6), seed=st.integers(0, 2**31 - 1),
       shuffle=st.booleans(), string_ids=st.booleans())
def test_query_kfold_properties(sizes, n_splits, seed, shuffle, string_ids):
    n_splits = min(n_splits, len(sizes))
    ids = [f"q{i}" for i in range(len(sizes))] if string_ids else None
    qid = ragged_qid(sizes, ids=ids, seed=seed)
    n = qid.size
    cv = QueryKFold(n_splits, shuffle=shuffle, random_state=seed)
    splits = list(cv.split(np.zeros((n, 1)), qid=qid))
    assert len(splits) == n_splits == cv.get_n_splits()
    check_whole_queries(qid, splits, n)
    # every row is in exactly one test fold
    tests = np.concatenate([test for _, test in splits])
    np.testing.assert_array_equal(np.sort(tests), np.arange(n))
    # no fold is empty, and folds are balanced in rows when no query is too large
    fold_sizes = np.array([test.size for _, test in splits])
    assert (fold_sizes > 0).all()
    if max(sizes) < n / n_splits:
        assert np.all(np.abs(fold_sizes - n / n_splits) <= max(sizes)), (fold_sizes, sizes)
    # reproducible
    again = list(QueryKFold(n_splits, shuffle=shuffle, random_state=seed)
                 .split(np.zeros((n, 1)), qid=qid))
    for (a, b), (c, d) in zip(splits, again):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 20), min_size=3, max_size=40),
       test_size=st.sampled_from([0.2, 0.34, 0.5, 1]), seed=st.integers(0, 2**31 - 1))
def test_query_shuffle_split_properties(sizes, test_size, seed):
    qid = ragged_qid(sizes, seed=seed)
    n, n_queries = qid.size, len(sizes)
    cv = QueryShuffleSplit(n_splits=3, test_size=test_size, random_state=seed)
    splits = list(cv.split(np.zeros((n, 1)), qid=qid))
    assert len(splits) == 3 == cv.get_n_splits()
    check_whole_queries(qid, splits, n)
    n_test = test_size if isinstance(test_size, int) else int(np.ceil(test_size * n_queries))
    for _, test in splits:
        assert np.unique(qid[test]).size == n_test
    again = list(QueryShuffleSplit(n_splits=3, test_size=test_size, random_state=seed)
                 .split(None, qid=qid))
    for (a, b), (c, d) in zip(splits, again):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_query_kfold_balances_rows_not_queries():
    # 10 small queries then 2 large ones: equal row counts need unequal query counts
    sizes = [2] * 10 + [10, 10]
    qid = ragged_qid(sizes, shuffle=False)
    folds = [test for _, test in QueryKFold(2).split(None, qid=qid)]
    assert [f.size for f in folds] == [20, 20]
    assert [np.unique(qid[f]).size for f in folds] == [10, 2]


def test_query_kfold_with_one_huge_query_leaves_no_fold_empty():
    sizes = [100, 1, 1, 1, 1]
    qid = ragged_qid(sizes, seed=1)
    splits = list(QueryKFold(4).split(None, qid=qid))
    assert all(test.size > 0 for _, test in splits)
    check_whole_queries(qid, splits, qid.size)


def test_query_kfold_without_shuffle_keeps_the_order_of_query_ids():
    qid = ragged_qid([3, 1, 4, 1, 5, 9, 2, 6], ids=[40, 10, 70, 20, 30, 80, 60, 50], seed=2)
    folds = [np.unique(qid[test]) for _, test in QueryKFold(3).split(None, qid=qid)]
    for earlier, later in zip(folds, folds[1:]):
        assert earlier.max() < later.min()


def test_shuffle_depends_on_the_seed():
    qid = ragged_qid([5] * 40, seed=3)
    first = [tuple(np.unique(qid[t])) for _, t in
             QueryKFold(4, shuffle=True, random_state=0).split(None, qid=qid)]
    same = [tuple(np.unique(qid[t])) for _, t in
            QueryKFold(4, shuffle=True, random_state=0).split(None, qid=qid)]
    other = [tuple(np.unique(qid[t])) for _, t in
             QueryKFold(4, shuffle=True, random_state=1).split(None, qid=qid)]
    plain = [tuple(np.unique(qid[t])) for _, t in QueryKFold(4).split(None, qid=qid)]
    assert first == same
    assert first != other and first != plain
    rng = np.random.RandomState(5)
    a = [t for _, t in QueryKFold(4, shuffle=True, random_state=rng).split(None, qid=qid)]
    b = [t for _, t in QueryKFold(4, shuffle=True, random_state=rng).split(None, qid=qid)]
    assert any(not np.array_equal(x, y) for x, y in zip(a, b))  # a RandomState advances


# --------------------------------------------------------------------------------------
# where qid comes from
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SPLITTERS))
def test_qid_from_qid_groups_or_dataframe_column(name):
    qid = ragged_qid([4, 7, 2, 9, 5, 3, 8, 6, 1, 5], seed=4)
    X = np.random.default_rng(0).normal(size=(qid.size, 2))
    df = pd.DataFrame(X, columns=["a", "b"]).assign(qid=qid)

    def splits(**kw):
        data = kw.pop("data", X)
        return [(a.tolist(), b.tolist()) for a, b in SPLITTERS[name](3, 7).split(data, **kw)]

    by_qid = splits(qid=qid)
    assert splits(groups=qid) == by_qid
    assert splits(data=df) == by_qid
    assert splits(data=df, y=np.zeros(qid.size)) == by_qid
    # an explicit qid wins over groups and over the DataFrame column
    other = qid[::-1].copy()
    assert splits(qid=qid, groups=other) == by_qid
    assert splits(data=df.assign(qid=other), qid=qid) == by_qid
    assert splits(data=df.assign(qid=other), groups=qid) == by_qid


@pytest.mark.parametrize("name", list(SPLITTERS))
def test_missing_qid_error(name):
    cv = SPLITTERS[name](3, 0)
    with pytest.raises(ValueError) as info:
        list(cv.split(np.zeros((12, 2))))
    message = str(info.value)
    assert "query ids are required" in message
    assert "qid=" in message and "groups=qid" in message and "'qid' column" in message
    assert "enable metadata routing" in message
    with pytest.raises(ValueError, match="query ids are required"):
        list(cv.split(pd.DataFrame({"a": np.zeros(12)})))


@pytest.mark.parametrize("name", list(SPLITTERS))
def test_qid_of_the_wrong_length_or_with_nan(name):
    cv = SPLITTERS[name](2, 0)
    with pytest.raises(ValueError, match="one id per row"):
        list(cv.split(np.zeros((10, 2)), qid=np.repeat([1, 2], 4)))
    with pytest.raises(ValueError, match="one id per row"):
        list(cv.split(np.zeros((4, 2)), qid=np.zeros((4, 2))))
    with pytest.raises(ValueError, match="NaN"):
        list(cv.split(np.zeros((4, 2)), qid=np.array([1.0, np.nan, 2.0, 2.0])))


def test_query_kfold_errors():
    qid = ragged_qid([2, 3, 4])
    with pytest.raises(ValueError, match=r"must not exceed the number of queries.*n_splits=4 "
                                         r"with 3 queries"):
        list(QueryKFold(4).split(None, qid=qid))
    for bad in (1, 0, -3):
        with pytest.raises(ValueError, match="n_splits"):
            list(QueryKFold(bad).split(None, qid=qid))
    for bad in (2.5, "3", True):
        with pytest.raises(TypeError, match="n_splits"):
            list(QueryKFold(bad).split(None, qid=qid))


def test_query_kfold_n_splits_none_gives_a_clear_error():
    with pytest.raises((ValueError, TypeError), match="n_splits"):
        list(QueryKFold(None).split(None, qid=ragged_qid([2, 3, 4])))


def test_query_shuffle_split_errors():
    qid = ragged_qid([2, 3, 4])
    with pytest.raises(ValueError):
        list(QueryShuffleSplit(2, test_size=5).split(None, qid=qid))
    with pytest.raises(ValueError):
        list(QueryShuffleSplit(2, test_size=0.0).split(None, qid=qid))


def test_query_kfold_repr_and_clone():
    cv = QueryKFold(4, shuffle=True, random_state=3)
    assert repr(cv) == "QueryKFold(n_splits=4, random_state=3, shuffle=True)"
    assert "QueryShuffleSplit" in repr(QueryShuffleSplit(2))


# --------------------------------------------------------------------------------------
# routing, and use as cv= in scikit-learn
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SPLITTERS))
def test_splitters_request_qid_and_groups(name):
    requests = SPLITTERS[name](2, 0).get_metadata_routing().split.requests
    assert requests["qid"] is True and requests["groups"] is True


def _ranking_data(n_queries=20, seed=0):
    rng = np.random.default_rng(seed)
    qid = ragged_qid(rng.integers(3, 12, size=n_queries), seed=seed)
    X = rng.normal(size=(qid.size, 3))
    y = np.digitize(X[:, 0] + rng.normal(size=qid.size), [0.0, 1.0]).astype(float)
    return X, y, qid


@pytest.mark.parametrize("name", list(SPLITTERS))
def test_usable_as_cv_with_routing(name):
    X, y, qid = _ranking_data()
    cv = SPLITTERS[name](3, 1)
    with routed():
        res = cross_validate(Ridge(), X, y, cv=cv, scoring="ndcg@10", params={"qid": qid},
                             return_indices=True)
        search = GridSearchCV(Ridge(), {"alpha": [1.0, 100.0]}, cv=cv, scoring="ndcg@10")
        search.fit(X, y, qid=qid)
    expected = list(cv.split(X, qid=qid))
    for test, (_, want) in zip(res["indices"]["test"], expected):
        np.testing.assert_array_equal(test, want)
    for i, (train, test) in enumerate(expected):
        pred = Ridge(alpha=1.0).fit(X[train], y[train]).predict(X[test])
        value = skrank.ndcg_score(y[test], pred, qid=qid[test], k=10)
        assert res["test_score"][i] == pytest.approx(value, abs=1e-12)
        assert search.cv_results_[f"split{i}_test_score"][0] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("name", list(SPLITTERS))
# (Ridge learns from the qid column here, as the oracle fits do: the splits are under test)
@pytest.mark.filterwarnings("ignore:.*query-id column 'qid':UserWarning")
def test_usable_as_cv_without_routing(name):
    X, y, qid = _ranking_data(seed=1)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(qid=qid)
    cv = SPLITTERS[name](3, 2)
    by_frame = cross_validate(Ridge(), df, y, cv=cv, scoring="ndcg@10", return_indices=True)
    by_groups = cross_validate(Ridge(), X, y, groups=qid, cv=cv, scoring="r2",
                               return_indices=True)
    search = GridSearchCV(Ridge(), {"alpha": [1.0, 10.0]}, cv=cv, scoring="ndcg@10").fit(df, y)
    # every fold's score is nDCG@10 of that fold's held-out predictions, computed here
    for i, (train, test) in enumerate(cv.split(X, qid=qid)):
        for j, alpha in enumerate(search.cv_results_["param_alpha"]):
            pred = Ridge(alpha=alpha).fit(df.iloc[train], y[train]).predict(df.iloc[test])
            value = skrank.ndcg_score(y[test], pred, qid=qid[test], k=10)
            assert search.cv_results_[f"split{i}_test_score"][j] == pytest.approx(value,
                                                                                 abs=1e-12)
            if alpha == Ridge().alpha:
                assert by_frame["test_score"][i] == pytest.approx(value, abs=1e-12)
    expected = list(cv.split(X, qid=qid))
    for got in (by_frame, by_groups):
        for test, (_, want) in zip(got["indices"]["test"], expected):
            np.testing.assert_array_equal(test, want)


def _qid_warnings(run):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if "query-id column 'qid'" in str(w.message)]


def _models_and_whether_they_see_qid():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skrank.model_selection import DropQid

    return [
        (Ridge(), True),
        (make_pipeline(StandardScaler(), Ridge()), True),   # the final step gets an array
        (make_pipeline(ColumnTransformer([("s", StandardScaler(), ["a"])],
                                         remainder="passthrough"), Ridge()), True),
        (make_pipeline(DropQid(), Ridge()), False),
        (make_pipeline(DropQid(), StandardScaler(), Ridge()), False),
        (make_pipeline(ColumnTransformer([("ids", "drop", ["qid"])], remainder="passthrough"),
                       Ridge()), False),
    ]


@pytest.mark.parametrize("case", range(6))
def test_a_model_fitted_on_the_qid_column_is_warned_about(case):
    """The ids skrank reads from X's qid column, learnt as a feature, draw a warning naming
    the column and DropQid; a pipeline whose model never sees the column draws none."""
    model, sees_qid = _models_and_whether_they_see_qid()[case]
    X, y, qid = _ranking_data(seed=2)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(qid=qid)
    cv = QueryKFold(3)
    runs = [
        lambda: cross_validate(model, df, y, cv=cv, scoring="ndcg@10", error_score="raise"),
        lambda: cross_validate(model, df, y, cv=cv, error_score="raise",
                               scoring=skrank.make_ranking_scorer(["ndcg@10", "map"])),
        lambda: skrank.model_selection.cross_val_evaluate(model, df, y, cv=cv,
                                                          metrics=["ndcg@10"]),
        lambda: skrank.model_selection.cross_val_evaluate(model, df, y, qid=qid, cv=cv,
                                                          metrics=["ndcg@10"]),
    ]
    for run in runs:
        found = _qid_warnings(run)
        assert bool(found) == sees_qid
        for message in found:
            assert "skrank.model_selection.DropQid()" in message
    # the same ids routed: the column is still the ids, so still a warning
    from sklearn.compose import ColumnTransformer
    from sklearn.utils.fixes import parse_version

    if parse_version(sklearn.__version__) < parse_version("1.5") and any(
            isinstance(step, ColumnTransformer) for _, step in getattr(model, "steps", ())):
        return  # scikit-learn 1.4's ColumnTransformer cannot route metadata before its fit
    with routed():
        found = _qid_warnings(lambda: cross_validate(model, df, y, cv=cv, scoring="ndcg@10",
                                                     params={"qid": qid}))
    assert bool(found) == sees_qid


def test_no_qid_warning_when_the_column_is_not_the_query_ids():
    """A feature that happens to be called 'qid' while other query ids are given (routed,
    or to cross_val_evaluate) is the user's business; XGBRanker takes the column as the ids
    and does not learn from it; a numpy X has no column names."""
    X, y, qid = _ranking_data(seed=2)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(qid=qid % 2)
    cv = QueryKFold(3)
    with routed():
        assert not _qid_warnings(lambda: cross_validate(Ridge(), df, y, cv=cv,
                                                        scoring="ndcg@10", params={"qid": qid}))
    assert not _qid_warnings(lambda: skrank.model_selection.cross_val_evaluate(
        Ridge(), df, y, qid=qid, cv=cv, metrics=["ndcg@10"]))
    assert not _qid_warnings(lambda: skrank.model_selection.cross_val_evaluate(
        Ridge(), X, y, qid=qid, cv=cv, metrics=["ndcg@10"]))
    xgboost = pytest.importorskip("xgboost")
    order = np.argsort(qid, kind="stable")
    ranked = pd.DataFrame(X[order], columns=["a", "b", "c"]).assign(qid=qid[order])
    ranker = xgboost.XGBRanker(n_estimators=2, n_jobs=1)
    assert not _qid_warnings(lambda: cross_validate(ranker, ranked, y[order], cv=cv,
                                                    scoring="ndcg@10", error_score="raise"))


# --------------------------------------------------------------------------------------
# why: KFold lets a query leak into its own test fold
# --------------------------------------------------------------------------------------


def test_kfold_leakage_inflates_the_score():
    """Rows of one query in both train and test let a model memorise the query.

    Each query prefers either high or low values of a document feature ``x``
    (at random), so nothing about ``x`` generalises to a new query.  The leaky
    features add a per-query constant that identifies the query: a nearest-
    neighbour model then looks up the query's other documents, which KFold puts
    in the training set.  KFold (shuffled rows) reports a much better model than
    QueryKFold, and the gap is larger than the one from KFold's truncated test
    queries alone (the same comparison without the identifying feature).
    """
    rng = np.random.default_rng(0)
    n_queries, size = 60, 12
    qid = np.repeat(np.arange(n_queries), size)
    preference = rng.choice([-1.0, 1.0], size=n_queries)[qid]
    x = rng.uniform(-1.0, 1.0, size=qid.size)
    y = np.digitize(preference * x, [-0.5, 0.0, 0.5]).astype(float)
    query_constant = 100.0 * rng.normal(size=n_queries)[qid]
    leaky = np.column_stack([query_constant, x])
    plain = x[:, None]
    model = KNeighborsRegressor(n_neighbors=5)
    kfold = KFold(5, shuffle=True, random_state=0)
    with routed():
        def score(X, cv):
            return cross_val_score(model, X, y, cv=cv, scoring="ndcg@10",
                                   params={"qid": qid}).mean()

        leaky_kfold, leaky_query = score(leaky, kfold), score(leaky, QueryKFold(5))
        plain_kfold, plain_query = score(plain, kfold), score(plain, QueryKFold(5))
    assert leaky_kfold > leaky_query
    assert leaky_kfold - leaky_query > plain_kfold - plain_query
    # on unseen queries the identifying feature is worth (almost) nothing
    assert abs(leaky_query - plain_query) < leaky_kfold - leaky_query
