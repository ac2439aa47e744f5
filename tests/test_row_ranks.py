"""Blocks of the 2-D form read at their labelled items (skrank/_engine/row_ranks.py):
the engine's values to the last bit (one call over the whole matrix, which ranks
every item), the flat form's, a per-user NumPy loop's and the brute-force tie
oracle's; and the blocks it leaves to the engine."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
import skrank._plan as _plan
from skrank._engine import row_blocks as _row_blocks
from skrank._engine import row_ranks as _row_ranks
from tests._reference import ref_query_value

sp = pytest.importorskip("scipy.sparse")

METRICS = ["ndcg", "ndcg@1", "ndcg@10", "ndcg_exp", "dcg", "map", "map@10",
           ("map", {"k": 5, "denominator": "min"}), "mrr", "mrr@3", "precision@10",
           ("precision", {"k": 10, "denominator": "min"}), "recall@10", "recall",
           ("map", {"threshold": 2}), ("recall", {"k": 20, "threshold": 2})]
LABELS = [m if isinstance(m, str) else f"{m[0]}{sorted(m[1].items())}" for m in METRICS]


def _metrics():
    return {label: metric for label, metric in zip(LABELS, METRICS)}


def _data(seed, n_users=37, n_items=300, dtype=np.float32):
    """Float scores with ties where it matters: some users' scores rounded (many tie
    groups, labelled items among them), one user all tied, one with every item
    excluded, one without test items, one whose test items are all excluded."""
    rng = np.random.default_rng(seed)
    scores = rng.random((n_users, n_items)).astype(dtype)
    scores[::4] = np.round(scores[::4], 2)
    scores[5] = 0.5
    scores[7, :50] = np.inf
    scores[8, -40:] = -np.inf
    test = np.where(rng.random(scores.shape) < 0.04, rng.integers(1, 4, scores.shape), 0)
    test[6] = np.where(rng.random(n_items) < 0.5, 1, 0)   # many labelled items in ties
    train = rng.random(scores.shape) < 0.05
    train[test > 0] &= rng.random(int((test > 0).sum())) < 0.2
    train[0] = True
    test[1] = 0
    train[2] |= test[2] > 0
    return test.astype(float), train, scores


def _forms(test, train):
    return {"sparse+exclude": (sp.csr_array(test), sp.csr_array(train)),
            "sparse": (sp.csr_array(test), None),
            "dense": (test, None),
            "dense+dense exclude": (test, train)}


def _blocks(monkeypatch, rows=5, n_items=300):
    monkeypatch.setattr(_row_blocks, "_BLOCK_ABOVE_CELLS", 0)
    for attr in ("_MIN_BLOCK_CELLS", "_MAX_BLOCK_CELLS"):
        monkeypatch.setattr(_row_blocks, attr, rows * n_items)
    monkeypatch.setattr(_row_blocks, "_DEPTH_FACTOR", 1)
    monkeypatch.setattr(_row_blocks, "_DENSE_FACTOR", 1)
    # blocks read at their labelled items twice as large: one left to the engine is
    # ranked in two of its blocks
    monkeypatch.setattr(_row_blocks, "_DIRECT_FACTOR", 2)


def _one_call(monkeypatch):
    monkeypatch.setattr(_row_blocks, "_MIN_BLOCK_CELLS", 1 << 40)
    monkeypatch.setattr(_row_blocks, "_MAX_BLOCK_CELLS", 1 << 40)


@pytest.fixture
def direct_calls(monkeypatch):
    """Counts the blocks read at their labelled items and those left to the engine (the
    small matrices here label up to a third of their cells: read so all the same)."""
    monkeypatch.setattr(_row_ranks, "_MAX_LABELLED_SHARE", 1.0)
    seen = {"direct": 0, "engine": 0}
    run = _plan._run_direct

    def counted(*args, **kwargs):
        out = run(*args, **kwargs)
        seen["direct" if out is not None else "engine"] += 1
        return out
    monkeypatch.setattr(_plan, "_run_direct", counted)
    return seen


@pytest.mark.parametrize("ties", ["average", "stable"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocks_read_at_labelled_items_give_the_engine_values_bit_for_bit(
        monkeypatch, direct_calls, ties, dtype):
    test, train, scores = _data(1, dtype=dtype)
    weights = np.random.default_rng(2).random(test.shape[0]) + 0.5
    _blocks(monkeypatch)
    options = {form: dict(sample_weight=weights if form != "sparse" else None,
                          no_relevant="skip" if form == "dense" else "zero")
               for form in _forms(test, train)}
    got = {form: skrank.evaluate(y, scores, exclude=e, metrics=_metrics(), ties=ties,
                                 **options[form])
           for form, (y, e) in _forms(test, train).items()}
    assert direct_calls["direct"] > 0
    _one_call(monkeypatch)
    for form, (y, e) in _forms(test, train).items():
        want = skrank.evaluate(y, scores, exclude=e, metrics=_metrics(), ties=ties,
                               **options[form])
        for label in LABELS:
            np.testing.assert_array_equal(got[form].per_query[label], want.per_query[label],
                                          err_msg=f"{form} {label}")
            assert got[form].mean[label] == want.mean[label] or (
                np.isnan(got[form].mean[label]) and np.isnan(want.mean[label]))
        for name in want.counts:
            np.testing.assert_array_equal(got[form].counts[name], want.counts[name])


@pytest.mark.parametrize("name", ["map", "ndcg", "mrr", "recall@10", "precision@5", "dcg"])
def test_single_metrics_in_blocks_equal_the_flat_form(monkeypatch, direct_calls, name):
    """The 2-D form read at its labelled items against the flat form of the same rows
    (qid the user, excluded items dropped), which the engine ranks whole."""
    test, train, scores = _data(3)
    _blocks(monkeypatch)
    got = skrank.per_query_scores(name, sp.csr_array(test), scores, exclude=sp.csr_array(train))
    assert direct_calls["direct"] > 0
    keep = ~train
    keep[0, 0] = True   # the user with every item excluded: one row, label 0
    rows = np.nonzero(keep)[0]
    labels = np.where(train, 0.0, test)[keep]
    want = skrank.per_query_scores(name, labels, scores[keep].astype(np.float64), qid=rows)
    ok = want.qid != 0   # (user 0 ranks one item in the flat form, none in the 2-D form)
    np.testing.assert_array_equal(got.score[ok], want.score[ok])


def _loop_oracle(name, labels, scores, k):
    """One user's value with ties in column order: its own argsort, plain formulas."""
    order = np.argsort(-scores.astype(np.float64), kind="stable")
    ranked = labels[order]
    relevant = ranked >= 1
    positions = np.arange(1, ranked.size + 1)
    depth = ranked.size if k is None else k
    if name in ("ndcg", "dcg"):
        dcg = np.sum(ranked[:depth] / np.log2(positions[:depth] + 1))
        if name == "dcg":
            return dcg
        ideal = np.sort(labels)[::-1][:depth]
        idcg = np.sum(ideal / np.log2(np.arange(1, ideal.size + 1) + 1))
        return dcg / idcg if idcg > 0 else 0.0
    n_rel = relevant.sum()
    if name == "map":
        hits = np.cumsum(relevant)
        terms = (hits / positions)[relevant & (positions <= depth)]
        return terms.sum() / n_rel if n_rel else 0.0
    if name == "mrr":
        first = np.flatnonzero(relevant)
        return 1.0 / (first[0] + 1) if first.size and first[0] < depth else 0.0
    if name == "recall":
        return relevant[:depth].sum() / n_rel if n_rel else 0.0
    if name == "precision":
        return relevant[:depth].sum() / depth
    raise AssertionError(name)


@pytest.mark.parametrize("name, k", [("ndcg", None), ("ndcg", 10), ("dcg", None), ("map", None),
                                     ("map", 10), ("mrr", None), ("recall", 20),
                                     ("precision", 10)])
def test_stable_ties_equal_a_per_user_numpy_loop(monkeypatch, direct_calls, name, k):
    test, train, scores = _data(4)
    _blocks(monkeypatch)
    params = {} if k is None else {"k": k}
    got = skrank.per_query_scores(name, sp.csr_array(test), scores, exclude=sp.csr_array(train),
                                  ties="stable", **params)
    assert direct_calls["direct"] > 0
    want = []
    for user in range(test.shape[0]):
        keep = ~train[user]
        want.append(_loop_oracle(name, test[user, keep], scores[user, keep], k)
                    if keep.any() else 0.0)
    np.testing.assert_allclose(got.score, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, params", [("ndcg", {}), ("ndcg", {"k": 3}), ("map", {}),
                                          ("map", {"k": 4}), ("mrr", {}), ("precision", {"k": 3}),
                                          ("recall", {"k": 5}), ("dcg", {"gain": "exponential"})])
def test_tie_averages_equal_the_brute_force_oracle(monkeypatch, direct_calls, name, params):
    """Small rows with few distinct scores (every labelled item in a tie group)."""
    rng = np.random.default_rng(5)
    n_users, n_items = 40, 10
    scores = rng.integers(0, 5, (n_users, n_items)).astype(np.float32)
    test = np.where(rng.random(scores.shape) < 0.3, rng.integers(1, 4, scores.shape), 0.0)
    train = rng.random(scores.shape) < 0.15
    _blocks(monkeypatch, rows=4, n_items=n_items)
    got = skrank.per_query_scores(name, sp.csr_array(test), scores, exclude=train, **params)
    assert direct_calls["direct"] > 0
    want = []
    for user in range(n_users):
        keep = ~train[user]
        value = ref_query_value(name, test[user, keep].tolist(), scores[user, keep].tolist(),
                                ties="average", **params)
        want.append(0.0 if value is None else value)
    np.testing.assert_allclose(got.score, want, rtol=1e-12, atol=1e-12)


def test_blocks_left_to_the_engine(monkeypatch, direct_calls):
    """Labels that are not integer grades, negative dense labels, exponential gains
    summed over tie groups of several labelled items, other tie policies and metrics:
    ranked whole by the engine, with the same values as one call."""
    test, train, scores = _data(6, n_users=20, n_items=300)
    fractional = np.where(test > 0, test + 0.5, 0.0)
    negative = np.where(test > 0, test, -1.0 * (train & (np.arange(300) % 7 == 0)))
    tied = np.round(scores, 1)   # groups of about 30 items, several labelled
    calls = [(fractional, scores, {"metrics": ["map", "ndcg"]}),
             (negative, scores, {"metrics": ["map", "ndcg"]}),
             (test, tied, {"metrics": ["ndcg_exp", "map"]}),
             (test, scores, {"metrics": ["map", "ndcg"], "ties": "pessimistic"}),
             (test, scores, {"metrics": ["map", "hit_rate@10"]})]
    _blocks(monkeypatch)
    got = [skrank.evaluate(y, s, **kw) for y, s, kw in calls]
    assert direct_calls["direct"] == 0
    assert direct_calls["engine"] > 0   # tried, then left to the engine
    _one_call(monkeypatch)
    for (y, s, kw), blocked in zip(calls, got):
        want = skrank.evaluate(y, s, **kw)
        for label in kw["metrics"]:
            np.testing.assert_array_equal(blocked.per_query[label], want.per_query[label])


def test_many_labelled_items_are_ranked_by_the_engine(monkeypatch, direct_calls):
    """More labelled cells than _MAX_LABELLED_SHARE of the matrix: no block is read at
    its labelled items (each would cost more than ranking every item)."""
    test, train, scores = _data(8, n_users=20)
    _blocks(monkeypatch)
    share = np.count_nonzero(test) / test.size
    monkeypatch.setattr(_row_ranks, "_MAX_LABELLED_SHARE", share * 0.99)
    for y in (test, sp.csr_array(test)):
        skrank.map_score(y, scores)
    assert direct_calls == {"direct": 0, "engine": 0}
    monkeypatch.setattr(_row_ranks, "_MAX_LABELLED_SHARE", share)
    skrank.map_score(sp.csr_array(test), scores)
    assert direct_calls["direct"] > 0


def test_errors_are_the_whole_matrix_errors(monkeypatch, direct_calls):
    test, train, scores = _data(7, n_users=20)
    bad = scores.copy()
    bad[13, 4] = np.nan
    _blocks(monkeypatch)
    with pytest.raises(ValueError) as blocked:
        skrank.map_score(sp.csr_array(test), bad, exclude=sp.csr_array(train))
    _one_call(monkeypatch)
    with pytest.raises(ValueError) as whole:
        skrank.map_score(sp.csr_array(test), bad, exclude=sp.csr_array(train))
    assert str(blocked.value) == str(whole.value)
    assert "row 13, column 4" in str(blocked.value)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n_items=st.integers(1, 40), distinct=st.integers(1, 50),
       density=st.floats(0.0, 0.5), ties=st.sampled_from(["average", "stable"]),
       sparse=st.booleans(), excluded=st.floats(0.0, 0.5))
def test_any_matrix_read_at_its_labelled_items_gives_the_engine_values(
        seed, n_items, distinct, density, ties, sparse, excluded):
    """Random matrices (scores with few or many distinct values, any share of labelled
    and excluded items, users with none): blocks of 3 users read at their labelled items
    against one call ranked by the engine, bit for bit."""
    rng = np.random.default_rng(seed)
    n_users = 11
    scores = rng.integers(0, distinct, (n_users, n_items)).astype(np.float32) / distinct
    test = np.where(rng.random(scores.shape) < density, rng.integers(1, 5, scores.shape), 0.0)
    train = rng.random(scores.shape) < excluded
    y = sp.csr_array(test) if sparse else test
    e = sp.csr_array(train) if sparse else train
    metrics = ["ndcg", "ndcg@3", "map", "map@2", "mrr", "precision@2", "recall@4", "dcg"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_row_ranks, "_MAX_LABELLED_SHARE", 1.0)
        _blocks(mp, rows=3, n_items=n_items)
        mp.setattr(_row_blocks, "_DIRECT_FACTOR", 1)
        got = skrank.evaluate(y, scores, exclude=e, metrics=metrics, ties=ties)
        _one_call(mp)
        want = skrank.evaluate(y, scores, exclude=e, metrics=metrics, ties=ties)
    for label in metrics:
        np.testing.assert_array_equal(got.per_query[label], want.per_query[label])
