"""skrank.datasets.make_ranking: layout, determinism, grades, learnability, ties."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import skrank
from skrank.datasets import make_ranking


def _heldout_ndcg(X, y, qid, columns, n_train):
    """nDCG@10 on queries >= n_train of a linear model fitted on the others."""
    train, test = qid < n_train, qid >= n_train
    model = LinearRegression().fit(X[train][:, columns], y[train])
    return skrank.ndcg_score(y[test], model.predict(X[test][:, columns]), qid=qid[test], k=10)


def _chance_ndcg(y, qid, n_train, seed=0):
    test = qid >= n_train
    scores = np.random.default_rng(seed).random(test.sum())
    return skrank.ndcg_score(y[test], scores, qid=qid[test], k=10)


def test_same_seed_same_data_and_other_seed_other_data():
    a = make_ranking(n_queries=30, random_state=3, ties=0.2)
    b = make_ranking(n_queries=30, random_state=3, ties=0.2)
    c = make_ranking(n_queries=30, random_state=4, ties=0.2)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])
    rng_a = make_ranking(n_queries=5, random_state=np.random.default_rng(7))
    rng_b = make_ranking(n_queries=5, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(rng_a[0], rng_b[0])


@pytest.mark.parametrize("n_docs", [7, (1, 1), (3, 9)])
def test_shapes_and_query_sizes(n_docs):
    X, y, qid = make_ranking(n_queries=40, n_docs=n_docs, n_features=6, n_informative=2,
                             random_state=0)
    low, high = (n_docs, n_docs) if isinstance(n_docs, int) else n_docs
    assert X.shape == (y.shape[0], 6) and qid.shape == y.shape
    assert X.dtype == y.dtype == np.float64 and qid.dtype == np.int64
    ids, sizes = np.unique(qid, return_counts=True)
    assert ids.tolist() == list(range(40))
    assert np.all(np.diff(qid) >= 0)                     # grouped, increasing ids
    assert sizes.min() >= low and sizes.max() <= high
    if high - low >= 4:
        assert sizes.min() < sizes.max()                 # ragged


@pytest.mark.parametrize("n_grades", [2, 3, 5, 8])
def test_grades_are_integers_in_range_each_about_half_as_frequent(n_grades):
    _, y, _ = make_ranking(n_queries=400, n_docs=50, n_grades=n_grades, random_state=1)
    assert set(np.unique(y).tolist()) == set(range(n_grades))
    share = np.bincount(y.astype(int)) / y.size
    expected = 0.5 ** np.arange(n_grades)
    np.testing.assert_allclose(share, expected / expected.sum(), atol=2e-3)


def test_a_better_model_scores_higher():
    X, y, qid = make_ranking(n_queries=300, n_docs=(10, 40), random_state=2)
    chance = _chance_ndcg(y, qid, 200)
    informative = _heldout_ndcg(X, y, qid, slice(0, 5), 200)
    noise_only = _heldout_ndcg(X, y, qid, slice(5, 20), 200)
    one_feature = _heldout_ndcg(X, y, qid, slice(0, 1), 200)
    assert informative > chance + 0.15
    assert abs(noise_only - chance) < 0.05               # the other features carry nothing
    assert chance + 0.02 < one_feature < informative - 0.05


def test_less_noise_is_easier():
    scores = []
    for noise in (0.0, 1.0, 3.0):
        X, y, qid = make_ranking(n_queries=200, noise=noise, random_state=5)
        scores.append(_heldout_ndcg(X, y, qid, slice(0, 5), 150))
    assert scores[0] > scores[1] + 0.05 > scores[2] + 0.1


def test_interactions_reward_a_model_that_learns_them():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures

    X, y, qid = make_ranking(n_queries=300, n_docs=30, noise=0.3, random_state=4)
    train, test = qid < 200, qid >= 200
    products = make_pipeline(PolynomialFeatures(2, interaction_only=True), LinearRegression())
    products.fit(X[train][:, :5], y[train])
    with_products = skrank.ndcg_score(y[test], products.predict(X[test][:, :5]), qid=qid[test],
                                      k=10)
    assert with_products > _heldout_ndcg(X, y, qid, slice(0, 5), 200) + 0.05


def _duplicate_share(X, qid):
    """Share of rows whose features equal those of an earlier row of their query."""
    rows = np.column_stack([qid, X])
    _, first = np.unique(rows, axis=0, return_index=True)
    return 1.0 - first.size / rows.shape[0]


def test_ties_duplicate_documents_within_queries():
    X, y, qid = make_ranking(n_queries=200, n_docs=20, ties=0.0, random_state=0)
    assert _duplicate_share(X, qid) == 0.0
    X, y, qid = make_ranking(n_queries=200, n_docs=20, ties=0.3, random_state=0)
    # the first row of each query is never a duplicate: 0.3 * 19/20 expected
    assert _duplicate_share(X, qid) == pytest.approx(0.3 * 19 / 20, abs=0.02)
    assert _duplicate_share(X, np.zeros_like(qid)) == _duplicate_share(X, qid)  # not across
    # Any model ties them, and the tie policy then matters.
    scores = LinearRegression().fit(X, y).predict(X)
    average = skrank.ndcg_score(y, scores, qid=qid, k=5, ties="average")
    stable = skrank.ndcg_score(y, scores, qid=qid, k=5, ties="stable")
    assert average != stable
    assert _duplicate_share(scores[:, None], qid) == pytest.approx(_duplicate_share(X, qid))


def test_ties_without_noise_give_duplicates_the_same_grade():
    X, y, qid = make_ranking(n_queries=100, n_docs=20, ties=0.5, noise=0.0, random_state=0)
    rows = np.column_stack([qid, X])
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    low = np.full(inverse.max() + 1, np.inf)
    high = np.full(inverse.max() + 1, -np.inf)
    np.minimum.at(low, inverse, y)
    np.maximum.at(high, inverse, y)
    assert np.array_equal(low, high)
    _, y_noisy, _ = make_ranking(n_queries=100, n_docs=20, ties=0.5, noise=1.0, random_state=0)
    assert not np.array_equal(y, y_noisy)


def test_as_frame_holds_the_same_values():
    pd = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=10, n_features=4, n_informative=2, random_state=0)
    frame, y_s, qid_s = make_ranking(n_queries=10, n_features=4, n_informative=2,
                                     as_frame=True, random_state=0)
    assert isinstance(frame, pd.DataFrame) and isinstance(y_s, pd.Series)
    assert list(frame.columns) == ["qid", "f0", "f1", "f2", "f3"]
    np.testing.assert_array_equal(frame.drop(columns="qid").to_numpy(), X)
    np.testing.assert_array_equal(frame["qid"].to_numpy(), qid)
    np.testing.assert_array_equal(y_s.to_numpy(), y)
    np.testing.assert_array_equal(qid_s.to_numpy(), qid)
    # the qid column reaches skrank's scorers without routing
    from sklearn.dummy import DummyRegressor

    scorer = skrank.get_scorer("ndcg@3")
    from sklearn.pipeline import make_pipeline

    from skrank.model_selection import DropQid

    model = make_pipeline(DropQid(), DummyRegressor()).fit(frame, y_s)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the model never saw the column: no qid warning
        value = scorer(model, frame, y_s)
    assert value == pytest.approx(
        skrank.ndcg_score(y, np.zeros_like(y), qid=qid, k=3))


@pytest.mark.parametrize("kwargs, match", [
    ({"n_queries": 0}, "n_queries must be an int >= 1. Got 0"),
    ({"n_queries": 2.5}, "n_queries must be an int >= 1"),
    ({"n_docs": (5, 2)}, r"n_docs must be an int >= 1 or a pair \(low, high\)"),
    ({"n_docs": (0, 2)}, "n_docs must be"),
    ({"n_docs": "many"}, "n_docs must be"),
    ({"n_informative": 30}, r"n_informative must be an int in \[1, 20\]. Got 30"),
    ({"n_grades": 1}, "n_grades must be an int >= 2"),
    ({"noise": -1.0}, "noise must be a finite number"),
    ({"ties": 1.0}, r"ties must be a finite number in \[0, 1\)"),
    ({"as_frame": "yes"}, "as_frame must be True or False"),
    ({"random_state": "seed"}, "random_state must be None, an int"),
])
def test_bad_parameters_raise_the_house_error(kwargs, match):
    with pytest.raises(skrank.InvalidParameterError, match="make_ranking: " + match):
        make_ranking(**kwargs)
