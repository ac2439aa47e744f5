"""The 2-D form evaluated in blocks of rows (skrank/_row_blocks.py): the same values,
to the last bit, as one call over the whole matrix, in bounded memory."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import skrank
from skrank._engine import row_blocks as _row_blocks
from tests._reference import ref_query_value

sp = pytest.importorskip("scipy.sparse")


def _cases():
    cases = []
    for name, spec in skrank.METRICS.items():
        if spec.inputs:  # bpref, infAP, judged@k read judged=: no 2-D form
            continue
        base = {"max_grade": 3} if name == "err" else {}
        cutoffs = [None, 3] if spec.k == "optional" else [3] if spec.k == "required" else [None]
        for k in cutoffs:
            for ties in ("average", "stable", "pessimistic"):
                if ties in spec.ties:
                    cases.append((name, dict(base, ties=ties, **({} if k is None else {"k": k}))))
    return cases


CASES = _cases()


def _matrices(seed, n_users=23, n_items=9):
    """Graded test items, training items to exclude, scores with many ties; a user with
    every item excluded, one without test items, one whose test items are all excluded."""
    rng = np.random.default_rng(seed)
    test = np.where(rng.random((n_users, n_items)) < 0.3, rng.integers(1, 4, (n_users, n_items)), 0)
    train = rng.random((n_users, n_items)) < 0.25
    train[test > 0] &= rng.random(int((test > 0).sum())) < 0.2
    train[0] = True
    test[1] = 0
    train[2] |= test[2] > 0
    scores = rng.integers(0, 4, (n_users, n_items)) / 2.0
    return test.astype(float), train, scores


def _forms(test, train, all_forms=False):
    forms = [(sp.csr_array(test), sp.csr_array(train)), (sp.csr_array(test), None), (test, None)]
    return forms + [(test, train), (sp.coo_array(test), None)] if all_forms else forms


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 4 rows (the matrices above hold 23 users: 6 blocks, the last short)."""
    def set_rows(rows, n_items=9):
        monkeypatch.setattr(_row_blocks, "_MIN_BLOCK_CELLS", rows * n_items)
        monkeypatch.setattr(_row_blocks, "_MAX_BLOCK_CELLS", rows * n_items)
        monkeypatch.setattr(_row_blocks, "_DEPTH_FACTOR", 1)
        monkeypatch.setattr(_row_blocks, "_DENSE_FACTOR", 1)
        monkeypatch.setattr(_row_blocks, "_BLOCK_ABOVE_CELLS", 0)
    set_rows(4)
    return set_rows


def _one_call(monkeypatch):
    monkeypatch.setattr(_row_blocks, "_MIN_BLOCK_CELLS", 1 << 40)
    monkeypatch.setattr(_row_blocks, "_MAX_BLOCK_CELLS", 1 << 40)


def test_small_matrices_are_evaluated_in_one_call():
    scores = np.zeros((1024, 1024))
    assert _row_blocks.blockable(scores, scores, None, None, None, None) is None
    scores = np.zeros((1025, 1024))
    assert _row_blocks.blockable(scores, scores, None, None, None, None) is scores


def test_blocks_are_used(small_blocks):
    test, train, scores = _matrices(0)
    assert _row_blocks.rows_per_block(scores.shape) == 4
    assert _row_blocks.blockable(test, scores, None, None, train, None) is scores
    # Not blocked: one block's worth of rows, a qid, judged, a list of lists.
    assert _row_blocks.blockable(test[:4], scores[:4], None, None, None, None) is None
    assert _row_blocks.blockable(test, scores, np.zeros(23), None, None, None) is None
    assert _row_blocks.blockable(test, scores, None, None, None, test > 0) is None
    assert _row_blocks.blockable(test.tolist(), scores.tolist(), None, None, None, None) is None


@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_blocks_give_the_one_call_values_bit_for_bit(monkeypatch, small_blocks, name, params):
    test, train, scores = _matrices(1)
    blocked = [skrank.per_query_scores(name, y, scores, exclude=e, **params)
               for y, e in _forms(test, train)]
    means = [skrank.METRICS[name].function(y, scores, exclude=e, **params)
             for y, e in _forms(test, train)]
    _one_call(monkeypatch)
    for (y, e), got, mean in zip(_forms(test, train), blocked, means):
        want = skrank.per_query_scores(name, y, scores, exclude=e, **params)
        np.testing.assert_array_equal(got.qid, want.qid)
        np.testing.assert_array_equal(got.score, want.score)
        assert mean == skrank.METRICS[name].function(y, scores, exclude=e, **params)


@pytest.mark.parametrize("name, params", [c for c in CASES if c[1]["ties"] == "average"][::2])
def test_blocks_equal_the_brute_force_oracle(small_blocks, name, params):
    test, train, scores = _matrices(2)
    params = dict(params)
    got = skrank.per_query_scores(name, sp.csr_array(test), scores, exclude=sp.csr_array(train),
                                  **params)
    ties = params.pop("ties")
    want = []
    for u in range(test.shape[0]):
        keep = ~train[u]
        value = ref_query_value(name, test[u, keep].tolist(), scores[u, keep].tolist(),
                                ties=ties, **params)
        want.append(0.0 if value is None else value)
    np.testing.assert_allclose(got.score, want, rtol=1e-12, atol=1e-12)


def test_evaluate_in_blocks_matches_one_call(monkeypatch, small_blocks):
    test, train, scores = _matrices(3)
    weights = np.random.default_rng(0).random(test.shape[0]) + 0.5
    metrics = ["ndcg@3", "ndcg", "map", "mrr", "recall@5", "precision@2", "r_precision"]
    runs = [dict(y_true=sp.csr_array(test), exclude=sp.csr_array(train)),
            dict(y_true=test, exclude=train, sample_weight=weights, no_relevant="skip"),
            dict(y_true=test, ties="pessimistic"), dict(y_true=test, no_relevant="nan"),
            dict(y_true=sp.csr_array(test), threshold=2)]
    blocked = [skrank.evaluate(y_score=scores, metrics=metrics, **kw) for kw in runs]
    _one_call(monkeypatch)
    for kw, got in zip(runs, blocked):
        want = skrank.evaluate(y_score=scores, metrics=metrics, **kw)
        np.testing.assert_array_equal(got.qid, want.qid)
        for label in metrics:
            np.testing.assert_array_equal(got.per_query[label], want.per_query[label])
        assert got.mean == want.mean or all(
            np.isnan(got.mean[m]) and np.isnan(want.mean[m]) or got.mean[m] == want.mean[m]
            for m in metrics)
        for name in want.counts:
            np.testing.assert_array_equal(got.counts[name], want.counts[name])
        np.testing.assert_array_equal(got.weights, want.weights)


def test_errors_in_a_later_block_are_the_whole_matrix_errors(monkeypatch, small_blocks):
    test, train, scores = _matrices(4)
    bad = scores.copy()
    bad[17, 3] = np.nan   # NaN is an error (infinite scores are ranked)
    negative = test.copy()
    negative[21, 2] = -1.0   # the sparse form rejects it; the dense form would not
    calls = [lambda: skrank.map_score(sp.csr_array(test), bad, exclude=sp.csr_array(train)),
             lambda: skrank.map_score(test, bad),
             lambda: skrank.evaluate(test, scores, metrics=["map"], no_relevant="raise"),
             lambda: skrank.ndcg_score(test, scores, sample_weight=np.ones(5)),
             lambda: skrank.map_score(sp.csr_array(negative), scores),
             lambda: skrank.map_score(sp.csr_array(np.where(negative < 0, np.nan, test)), scores)]
    messages = []
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        messages.append(str(info.value))
    assert "row 17, column 3" in messages[0]
    _one_call(monkeypatch)
    for call, message in zip(calls, messages):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


@pytest.mark.parametrize("name", ["map", "ndcg", "recall", "rbp"])
def test_every_input_form_in_blocks(monkeypatch, small_blocks, name):
    test, train, scores = _matrices(6)
    forms = _forms(test, train, all_forms=True)
    blocked = [skrank.per_query_scores(name, y, scores, exclude=e) for y, e in forms]
    _one_call(monkeypatch)
    for (y, e), got in zip(forms, blocked):
        np.testing.assert_array_equal(
            got.score, skrank.per_query_scores(name, y, scores, exclude=e).score)


def test_inputs_are_not_modified(small_blocks):
    test, train, scores = _matrices(5)
    copies = test.copy(), train.copy(), scores.copy()
    skrank.evaluate(sp.csr_array(test), scores, exclude=train, metrics=["map", "ndcg@3"])
    for before, after in zip(copies, (test, train, scores)):
        np.testing.assert_array_equal(before, after)


_MEMORY = textwrap.dedent("""
    import tracemalloc, numpy as np, scipy.sparse as sp, skrank
    rng = np.random.default_rng(0)
    n_users, n_items = 300, 4000
    S = rng.random((n_users, n_items), dtype=np.float32)
    Y = sp.random(n_users, n_items, density=0.002, random_state=1, format="csr")
    Y.data[:] = rng.integers(1, 4, Y.data.size)
    E = sp.random(n_users, n_items, density=0.01, random_state=2, format="csr")
    tracemalloc.start()
    for kw in (dict(exclude=E), {}):
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        skrank.evaluate(Y, S, metrics=["map", "ndcg"], **kw)
        print((tracemalloc.get_traced_memory()[1] - before) / S.nbytes)
""")


def test_memory_of_whole_rankings_stays_under_twice_the_score_matrix():
    """map and ndcg over whole rankings of a 300 x 4,000 float32 matrix (4.6 MiB, just
    above the size evaluated in one call):
    the one-call path held about 35x the score matrix beyond the inputs."""
    out = subprocess.run([sys.executable, "-c", _MEMORY], capture_output=True, text=True,
                         check=True).stdout.split()
    ratios = [float(x) for x in out]
    assert len(ratios) == 2 and max(ratios) < 2.0, ratios


@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_rows_without_ties_among_rows_with_ties(monkeypatch, name, params):
    """Float32 scores: a few rows hold a tie, most none.  In one call every row takes the
    tie path; in blocks of one row, those without ties take the tie-free one: the values
    must not depend on it (MAP's single relevant rows once differed in the last bit)."""
    rng = np.random.default_rng(9)
    scores = rng.random((30, 400), dtype=np.float32)
    scores[::7, :40] = np.round(scores[::7, :40], 2)
    test = np.where(rng.random(scores.shape) < 0.05, rng.integers(1, 4, scores.shape), 0)
    test = test.astype(float)
    _one_call(monkeypatch)
    want = skrank.per_query_scores(name, sp.csr_array(test), scores, **params).score
    monkeypatch.setattr(_row_blocks, "_BLOCK_ABOVE_CELLS", 0)
    for attr in ("_MIN_BLOCK_CELLS", "_MAX_BLOCK_CELLS"):
        monkeypatch.setattr(_row_blocks, attr, 400)
    monkeypatch.setattr(_row_blocks, "_DENSE_FACTOR", 1)
    monkeypatch.setattr(_row_blocks, "_DEPTH_FACTOR", 1)
    for exclude in (None, sp.csr_array(scores.shape)):
        got = skrank.per_query_scores(name, sp.csr_array(test), scores, exclude=exclude,
                                      **params).score
        np.testing.assert_array_equal(got, want)
