"""Rows in random order: ranked from the candidates of each query, or grouped chunk by chunk.

Rows whose query ids are not sorted are never all grouped when the metrics read to
a depth: a lower bound of each query's k-th largest score (from the maxima of
disjoint subsets of its rows) selects the candidates, and only those are grouped
and ranked; counts over every row (R, the grades of the ideal ranking) come from
the rows' query codes.  Full rankings group every row, chunk by chunk.  Every path
is checked against the obvious one: the same rows grouped by a stable sort of the
ids (which keeps the input order within each query, as ``ties="stable"`` needs),
and the bound against the k-th largest score found by sorting each query.
"""

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank._engine import groups as GR
from skrank._engine import ranking as R


def _regrouped(qid, *arrays):
    """The rows grouped by a stable sort of the ids: the reference layout."""
    order = np.argsort(qid, kind="stable")
    return (qid[order],) + tuple(a[order] for a in arrays)


def _kth_largest_by_sorting(scores, codes, n_queries, k):
    out = np.full(n_queries, -np.inf)
    for q in range(n_queries):
        values = np.sort(scores[codes == q])[::-1]
        if values.size >= k:
            out[q] = values[k - 1]
    return out


@contextlib.contextmanager
def _knobs(**values):
    """Module constants of skrank._engine.ranking set for a block (hypothesis tests cannot
    take pytest's function-scoped monkeypatch)."""
    home = {name: R if hasattr(R, name) else GR for name in values}
    saved = {name: getattr(home[name], name) for name in values}
    for name, value in values.items():
        setattr(home[name], name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(home[name], name, value)


@pytest.fixture
def small_knobs(monkeypatch):
    """Chunks and subsets small enough that several run on a few hundred rows, and
    candidates kept whatever their share (so the candidate path runs on every input)."""
    monkeypatch.setattr(R, "_PASS_ROWS", 37)
    monkeypatch.setattr(GR, "_CHUNK_ROWS", 50)
    monkeypatch.setattr(R, "_SUBSETS_PER_K", 1)
    monkeypatch.setattr(R, "_CANDIDATE_SHARE", 1.0)


@pytest.fixture
def candidate_calls(monkeypatch):
    """Counts the rankings built from candidates (the path under test ran)."""
    calls = []
    original = R._candidate_rows

    def spy(*args, **kwargs):
        found = original(*args, **kwargs)
        calls.append(found is not None)
        return found

    monkeypatch.setattr(R, "_candidate_rows", spy)
    return calls


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_bound_is_at_most_the_kth_largest_score(data):
    n_queries = data.draw(st.integers(1, 6), label="n_queries")
    k = data.draw(st.integers(1, 5), label="k")
    n = data.draw(st.integers(k * n_queries, 120), label="n_rows")
    codes = np.array(data.draw(st.lists(st.integers(0, n_queries - 1), min_size=n, max_size=n)),
                     dtype=np.intp)
    scores = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)),
                      dtype=float)  # many ties
    with _knobs(_SUBSETS_PER_K=data.draw(st.sampled_from([1, 2]), label="subsets per k")):
        bound = R._kth_largest_lower_bound(scores, codes, n_queries, k)
    truth = _kth_largest_by_sorting(scores, codes, n_queries, k)
    if bound is None:  # fewer rows than subsets x queries
        assert R._SUBSETS_PER_K == 2 or n < k * n_queries
        return
    assert bound.shape == (n_queries,)
    assert np.all(bound <= truth)
    # A query with fewer than k rows has no k-th largest score: every row stays.
    assert np.all(bound[truth == -np.inf] == -np.inf)


def test_bound_is_tight_on_rows_in_random_order():
    # 20 slices of 2,000 rows in random order: each query's top rows mostly fall in
    # distinct slices, so few rows beyond the leading k score at least the bound.
    rng = np.random.default_rng(0)
    codes = rng.permutation(np.repeat(np.arange(400), 100))
    scores = rng.random(codes.size)
    bound = R._kth_largest_lower_bound(scores, codes, 400, 10)
    candidates = np.bincount(codes[scores >= bound[codes]], minlength=400)
    assert candidates.min() >= 10
    assert candidates.mean() < 20  # of 100 rows per query


def test_bound_is_refused_when_queries_are_too_short_to_fill_the_subsets():
    codes = np.repeat(np.arange(10), 5)
    assert R._kth_largest_lower_bound(np.zeros(50), codes, 10, 10) is None


@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_candidates_are_the_rows_reaching_the_bound_grouped_in_input_order(data):
    n_queries = data.draw(st.integers(1, 5), label="n_queries")
    n = data.draw(st.integers(2 * n_queries, 150), label="n_rows")
    qid = np.array(data.draw(st.lists(st.integers(0, n_queries - 1), min_size=n, max_size=n)))
    scores = np.array(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), float)
    labels = np.arange(n, dtype=float)  # the row number: shows which rows came, in which order
    k = data.draw(st.integers(1, 3), label="k")
    groups = GR.query_groups("f", qid)
    if groups.codes is None:
        return  # ids already sorted: no candidates to select
    with _knobs(_PASS_ROWS=7, _CANDIDATE_SHARE=1.0, _SUBSETS_PER_K=1):
        found = R._candidate_rows(groups, labels, scores, R.Depth(k))
        bound = R._kth_largest_lower_bound(scores, groups.codes, groups.n_queries, k)
    if found is None:  # too few rows per query for the subsets
        assert bound is None
        return
    offsets, kept_labels, kept_scores = found
    truth = _kth_largest_by_sorting(scores, groups.codes, groups.n_queries, k)
    for q in range(groups.n_queries):
        rows = kept_labels[offsets[q]:offsets[q + 1]].astype(int)
        want = np.flatnonzero((groups.codes == q) & (scores >= bound[q]))
        np.testing.assert_array_equal(rows, want)  # in input order
        np.testing.assert_array_equal(kept_scores[offsets[q]:offsets[q + 1]], scores[want])
        # Every row of the leading k ranks, and every row tied with the k-th, is there.
        assert set(np.flatnonzero((groups.codes == q) & (scores >= truth[q]))) <= set(rows)


_CALLS = {
    "ndcg@3": lambda y, s, q, t: skrank.ndcg_score(y, s, qid=q, k=3, ties=t),
    "ndcg_exp@4 (grade counts)": lambda y, s, q, t: skrank.ndcg_score(
        y, s, qid=q, k=4, gain="exponential", ties=t),
    "ndcg@2 custom gain (every label grouped)": lambda y, s, q, t: skrank.ndcg_score(
        y, s, qid=q, k=2, gain=lambda g: np.sqrt(g), ties=t),
    "precision@3": lambda y, s, q, t: skrank.precision_at_k_score(y, s, qid=q, k=3, ties=t),
    "recall@3 (R)": lambda y, s, q, t: skrank.recall_at_k_score(y, s, qid=q, k=3, threshold=2,
                                                                ties=t),
    "hit_rate@2": lambda y, s, q, t: skrank.hit_rate_score(y, s, qid=q, k=2, ties=t),
    "mrr (first relevant)": lambda y, s, q, t: skrank.mrr_score(y, s, qid=q, ties=t),
    "mrr@3, threshold 3": lambda y, s, q, t: skrank.mrr_score(y, s, qid=q, k=3, threshold=3,
                                                              ties=t),
    "map@3": lambda y, s, q, t: skrank.map_score(y, s, qid=q, k=3, ties=t),
    "rbp@4 trec gain": lambda y, s, q, t: skrank.rbp_score(y, s, qid=q, k=4, gain="trec", ties=t),
    "per-query ndcg@3": lambda y, s, q, t: skrank.per_query_scores(
        "ndcg", y, s, qid=q, k=3, ties=t).score,
    "evaluate (depth and full)": lambda y, s, q, t: skrank.evaluate(
        y, s, qid=q, metrics=["ndcg@3", "precision@2", "map", "r_precision"], ties=t).per_query,
}


def _assert_same(got, want):
    if hasattr(got, "columns"):  # a per-query table
        assert list(got.columns) == list(want.columns)
        for column in got.columns:
            np.testing.assert_allclose(np.asarray(got[column], dtype=float),
                                       np.asarray(want[column], dtype=float), rtol=1e-12, atol=0)
        return
    if isinstance(got, dict):
        assert got.keys() == want.keys()
        for key in got:
            np.testing.assert_allclose(np.asarray(got[key], dtype=float),
                                       np.asarray(want[key], dtype=float), rtol=1e-12, atol=0)
        return
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def _shuffled_case(rng, labels):
    sizes = rng.integers(1, 40, 60)
    sizes[:3] = [1, 2, 300]  # a query shorter than k, and one much longer than the rest
    qid = np.repeat(rng.permutation(1000)[:sizes.size] * 3 - 50, sizes)
    y = rng.integers(0, 4, qid.size).astype(float)
    if labels == "fractional":  # no grade counts: the ideal ranking sorts every label
        y = y * 0.75
    elif labels == "int":
        y = y.astype(np.int64)
    elif labels == "binary":  # grade counts: one sum per query
        y = (y >= 2).astype(float)
    s = rng.integers(0, 9, qid.size).astype(float)  # ties at every cutoff
    perm = rng.permutation(qid.size)
    return y[perm], s[perm], qid[perm]


@pytest.mark.parametrize("labels", ["binary", "graded", "fractional", "int"])
@pytest.mark.parametrize("ties", ["average", "pessimistic", "optimistic", "stable"])
@pytest.mark.parametrize("call", list(_CALLS))
def test_shuffled_rows_score_as_the_grouped_rows(small_knobs, candidate_calls, call, ties,
                                                 labels):
    y, s, q = _shuffled_case(np.random.default_rng(7), labels)
    fn = _CALLS[call]
    got = fn(y, s, q, ties)
    qg, yg, sg = _regrouped(q, y, s)
    assert not candidate_calls[-1:] or candidate_calls[-1]  # selected (knobs: never refused)
    n_before = len(candidate_calls)
    want = fn(yg, sg, qg, ties)
    assert len(candidate_calls) == n_before  # the reference is grouped: no candidates
    _assert_same(got, want)


def test_depth_metrics_on_shuffled_rows_take_the_candidate_path(candidate_calls):
    # With the default knobs: rows in random order, 100 per query, read to rank 10.
    rng = np.random.default_rng(3)
    q = rng.permutation(np.repeat(np.arange(300) * 7, 100))
    y = rng.integers(0, 2, q.size).astype(float)
    s = rng.random(q.size)
    got = skrank.ndcg_score(y, s, qid=q, k=10)
    assert candidate_calls == [True]
    qg, yg, sg = _regrouped(q, y, s)
    assert got == skrank.ndcg_score(yg, sg, qid=qg, k=10)  # tie-free scores: exactly equal
    # Rows grouped but with their ids out of order are not spread over the slices:
    # refused, and every row is grouped.
    blocks = np.repeat(rng.permutation(300), 100)
    got = skrank.ndcg_score(y, s, qid=blocks, k=10)
    assert candidate_calls[-1] is False
    order = np.argsort(blocks, kind="stable")
    assert got == skrank.ndcg_score(y[order], s[order], qid=blocks[order], k=10)


@pytest.mark.parametrize("labels", ["binary", "graded", "fractional"])
def test_counts_over_every_row_come_from_the_codes(small_knobs, candidate_calls, labels):
    # The ranking built from candidates holds a prefix of each query; R, the grade
    # counts, the retrieved count and the labels of every row (grouped on demand)
    # are those of the ranking of the grouped rows.
    y, s, q = _shuffled_case(np.random.default_rng(5), labels)
    qg, yg, sg = _regrouped(q, y, s)
    depth = R.Depth(k=3)
    got = R.rank_queries("f", y, s, q, None, None, "average", depth=depth)
    want = R.rank_queries("f", yg, sg, qg, None, None, "average", depth=depth)
    assert candidate_calls == [True]
    assert got.depth == depth
    np.testing.assert_array_equal(got.qids, want.qids)
    np.testing.assert_array_equal(got.n_ranked, want.n_ranked)
    for threshold in (1, 2.5):
        np.testing.assert_array_equal(got.n_relevant(threshold), want.n_relevant(threshold))
        np.testing.assert_array_equal(got.n_relevant_ranked(threshold),
                                      want.n_relevant_ranked(threshold))
    if labels == "fractional":
        assert got.grade_counts() is None and want.grade_counts() is None
    else:
        np.testing.assert_array_equal(got.grade_counts(), want.grade_counts())
    np.testing.assert_array_equal(got.all_offsets, want.all_offsets)
    np.testing.assert_array_equal(got.all_labels, want.all_labels)  # grouped stably
    np.testing.assert_array_equal(got.ideal_labels(), want.ideal_labels())
    # Each query holds at least its leading 3 ranks: with stable ties, the same labels
    # in the same order as the grouped rows' ranking.
    got = R.rank_queries("f", y, s, q, None, None, "stable", depth=depth)
    full = R.rank_queries("f", yg, sg, qg, None, None, "stable")
    assert got.depth == depth and full.depth is None
    for q_index in range(got.n_queries):
        held = got.labels[got.offsets[q_index]:got.offsets[q_index + 1]]
        ranked = full.labels[full.offsets[q_index]:full.offsets[q_index + 1]]
        assert held.shape[0] >= min(ranked.shape[0], 3)
        np.testing.assert_array_equal(held, ranked[:held.shape[0]])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_shuffled_rows_score_as_the_grouped_rows_on_generated_inputs(data):
    n = data.draw(st.integers(1, 80), label="n_rows")
    q = np.array(data.draw(st.lists(st.integers(-3, 6), min_size=n, max_size=n)))
    y = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), float)
    s = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), float)
    ties = data.draw(st.sampled_from(["average", "pessimistic", "optimistic", "stable"]))
    k = data.draw(st.integers(1, 4), label="k")
    qg, yg, sg = _regrouped(q, y, s)
    # Metrics read to a depth (candidates), and to the end (every row, chunk by chunk).
    for metrics in ([f"ndcg@{k}", f"precision@{k}", "mrr", f"recall@{k}"], ["map", "ndcg"]):
        with _knobs(_PASS_ROWS=5, _SUBSETS_PER_K=1, _CANDIDATE_SHARE=1.0, _CHUNK_ROWS=4):
            got = skrank.evaluate(y, s, qid=q, metrics=metrics, ties=ties, no_relevant="skip")
        want = skrank.evaluate(yg, sg, qid=qg, metrics=metrics, ties=ties, no_relevant="skip")
        _assert_same(got.per_query, want.per_query)
        _assert_same(got.mean, want.mean)


@pytest.mark.parametrize("n_queries", [1, 3, 40, 200])
def test_rows_grouped_chunk_by_chunk_equal_the_gather_through_the_order(monkeypatch, n_queries):
    monkeypatch.setattr(GR, "_CHUNK_ROWS", 64)
    rng = np.random.default_rng(n_queries)
    qid = rng.integers(0, n_queries, 1000) * 5 + 2
    qid[:300] = np.sort(qid[:300])  # runs spanning chunk boundaries
    if n_queries == 1:
        qid[0] = 7  # not sorted
    groups = GR.query_groups("f", qid)
    y = rng.random(qid.size)
    keep = rng.random(qid.size) < 0.5
    codes = rng.integers(0, 9, qid.size).astype(np.int8)
    got = groups.grouped(y, keep, codes)  # before the order is known: chunk by chunk
    order = np.argsort(qid, kind="stable")
    for array, grouped in zip((y, keep, codes), got):
        assert grouped.dtype == array.dtype
        np.testing.assert_array_equal(grouped, array[order])
    np.testing.assert_array_equal(groups.order, order)


def test_retrieved_and_weights_on_shuffled_rows(small_knobs):
    # retrieved= ranks only some rows (every row grouped); sample_weight per row of a query.
    rng = np.random.default_rng(11)
    y, s, q = _shuffled_case(rng, "graded")
    retrieved = rng.random(q.size) < 0.7
    weights = (q % 5 + 1).astype(float)
    qg, yg, sg, rg, wg = _regrouped(q, y, s, retrieved, weights)
    for metric in ("ndcg@3", "map", "recall@4"):
        got = skrank.evaluate(y, s, qid=q, retrieved=retrieved, sample_weight=weights,
                              metrics=[metric]).mean
        want = skrank.evaluate(yg, sg, qid=qg, retrieved=rg, sample_weight=wg,
                               metrics=[metric]).mean
        _assert_same(got, want)
