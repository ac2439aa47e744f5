"""Several metrics on one ranking: what they share, and the fast paths that sharing takes.

Oracles: the slow per-query reference (tests/_reference.py), per-query counts and sorts
written out with numpy (bincount, lexsort), the single-metric scorers and functions (each
on its own ranking), and the general code paths themselves (the shortcuts switched off),
which the shortcuts must match to the last bit.
"""

from unittest import mock

import numpy as np
import pytest
import sklearn
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank._engine import ranking as R
from skrank._engine import segments as S
from skrank._engine import kernels as _kernels
from skrank._engine.ranking import Depth, rank_queries
from skrank._engine.segments import segmented_argsort_desc
from skrank._plan import _Extremes, run_kernel
from tests._reference import FixedScores, ref_mean

RNG = np.random.default_rng(11)


def _rows(sizes, labels, rng, *, tied=False):
    qid = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.choice(labels, qid.size)
    s = rng.integers(0, 4, qid.size).astype(float) if tied else rng.normal(size=qid.size)
    return y, s, qid


def _kernel(ranking, name, **params):
    spec = skrank.METRICS[name]
    options = spec.check_params("test", params)
    return run_kernel(spec, "test", ranking, options)[1]


# --------------------------------------------------------------------------------------
# Binary labels: the ideal DCG from R, which MAP and MRR read too


def test_ideal_dcg_of_binary_labels_reads_the_r_map_reads():
    y, s, qid = _rows([7, 12, 3, 9, 1], [0.0, 1.0], RNG)
    y[:7] = 0.0   # a query without a relevant document
    ranking = rank_queries("test", y, s, qid, None, None, "average")
    ndcg = _kernel(ranking, "ndcg", k=5)
    assert ("n_relevant", 1.0) in ranking._cache   # counted once, for nDCG, MAP and MRR
    expected = np.bincount(qid, weights=y).astype(int)
    np.testing.assert_array_equal(ranking.grade_counts()[:, 1], expected)
    np.testing.assert_array_equal(ranking.grade_counts()[:, 0], np.bincount(qid) - expected)
    assert ndcg.mean() == pytest.approx(ref_mean("ndcg", y, s, qid, k=5)[0], rel=1e-12)


@pytest.mark.parametrize("labels", [[0.0, 0.5, 1.0], [0.0, 0.25], [0.0, 1.0, 2.0],
                                    [0.0, 1.0, 1.5], [0.0], [1.0]])
def test_only_labels_of_zero_and_one_take_the_binary_ideal_dcg(labels):
    y, s, qid = _rows([6, 10, 4], labels, RNG)
    y[0], y[-1] = labels[0], labels[-1]
    ranking = rank_queries("test", y, s, qid, None, None, "average")
    found = ranking._binary_grade_counts(ranking.all_labels)
    binary = set(np.unique(y)) <= {0.0, 1.0} and y.max() == 1   # (all 0: the general path)
    assert (found is not None) == binary
    for gain in ("linear", "exponential"):
        got = skrank.ndcg_score(y, s, qid=qid, k=3, gain=gain)
        assert got == pytest.approx(ref_mean("ndcg", y, s, qid, k=3, gain=gain)[0], rel=1e-12)


# --------------------------------------------------------------------------------------
# Sums over the leading ranks of equal-width queries: a 2-D block, column by column


LAYOUTS = {"equal sizes": [8] * 6, "every query >= k": [5, 9, 14, 6, 5],
           "some queries < k": [2, 9, 14, 1, 5]}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ties", ["average", "stable", "pessimistic"])
def test_sums_over_a_top_block_equal_the_per_row_sums_to_the_last_bit(layout, ties,
                                                                         monkeypatch):
    y, s, qid = _rows(LAYOUTS[layout], [0, 1, 2, 3], RNG, tied=ties != "average")
    metrics = ["ndcg@4", "ndcg_exp@4", "dcg@4", "precision@4", "recall@4", "ndcg@30",
               "cg@4", ("rbp", {"k": 4, "p": 0.5, "gain": "trec"})]
    got = skrank.evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
    monkeypatch.setattr(_kernels, "_BLOCK_WIDTH", 0)   # every sum per row, by bincount
    expected = skrank.evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
    for label in got.per_query:
        np.testing.assert_array_equal(got.per_query[label], expected.per_query[label])


def test_top_block_is_a_view_when_queries_tile_the_rows():
    y, s, qid = _rows([10] * 4, [0.0, 1.0], RNG)
    ranking = rank_queries("test", y, s, qid, None, None, "average")
    block = _kernels._top_block(ranking, ranking.labels, 3)
    assert np.shares_memory(block, ranking.labels)
    np.testing.assert_array_equal(block, ranking.labels.reshape(4, 10)[:, :3])
    assert _kernels._top_block(ranking, ranking.labels, 10).shape == (4, 10)
    ragged = rank_queries("test", *_rows([3, 5], [0.0, 1.0], RNG), None, None, "average")
    assert _kernels._top_block(ragged, ragged.labels, 4) is None   # a query holds 3 rows


# --------------------------------------------------------------------------------------
# MAP and MRR: each query's first relevant row from shared counts


def test_first_relevant_row_of_each_query_from_the_counts():
    y, s, qid = _rows([5, 8, 3, 6], [0.0, 1.0, 2.0], RNG)
    y[5:13] = 0.0   # the second query has no relevant document
    ranking = rank_queries("test", y, s, qid, None, None, "stable")
    rows, query, _ = ranking.relevant_rows(1.0)
    counts, first = ranking.relevant_first(1.0)
    np.testing.assert_array_equal(counts, np.bincount(query, minlength=4))
    for q in np.flatnonzero(counts):
        assert first[q] == np.flatnonzero(query == q)[0]
    for name in ("map", "mrr"):
        got = skrank.per_query_scores(name, y, s, qid=qid, ties="stable").score
        _, expected = ref_mean(name, y, s, qid, ties="stable")
        for q in range(4):
            assert got[q] == pytest.approx(expected[q], rel=1e-12)


# --------------------------------------------------------------------------------------
# MAP and MRR under tie averaging: sums per distinct group shape, not per row


def _per_shape(on):
    """Patches that make MAP's inverse-rank sums and MRR's values go per distinct group
    shape (``on``) or per row and per group (the general paths)."""
    return (mock.patch.object(_kernels, "_PAIR_TABLE_LIMIT", 10 ** 9 if on else 0),
            mock.patch.object(_kernels, "_DISTINCT_GROUPS_ABOVE", -1 if on else 10 ** 9))


def _evaluate_paths(y, s, qid, metrics):
    """evaluate() per distinct group shape and per row, one Evaluation each."""
    out = []
    for on in (True, False):
        table, shapes = _per_shape(on)
        with table, shapes:
            out.append(skrank.evaluate(y, s, qid=qid, metrics=metrics))
    return out


@st.composite
def _tied_queries(draw, longest=7):
    """(y, s, qid): up to 5 queries of 1..longest rows, labels 0..2, scores 0..2 (ties)."""
    sizes = draw(st.lists(st.integers(1, longest), min_size=1, max_size=5))
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=float)
    s = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=float)
    return y, s, np.repeat(np.arange(len(sizes)), sizes)


@settings(max_examples=60, deadline=None)
@given(data=_tied_queries(), k=st.sampled_from([None, 1, 2, 4]))
def test_tie_averaged_map_and_mrr_per_group_shape_match_the_reference(data, k):
    y, s, qid = data
    metrics = ["map", "mrr"] if k is None else [f"map@{k}", f"mrr@{k}"]
    shapes, rows = _evaluate_paths(y, s, qid, metrics)
    for label in metrics:
        np.testing.assert_array_equal(shapes.per_query[label], rows.per_query[label])
        _, expected = ref_mean(label.split("@")[0], y, s, qid,
                               **({} if k is None else {"k": k}))
        for q, value in zip(shapes.qid, shapes.per_query[label]):
            assert value == pytest.approx(expected[q], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("sizes", [[40] * 60, [40] * 59 + [25], [3, 60, 17, 45, 1, 33] * 8])
@pytest.mark.parametrize("k", [None, 5, 30])
def test_tie_averaged_map_and_mrr_per_group_shape_to_the_last_bit(sizes, k):
    rng = np.random.default_rng(len(sizes) + (k or 0))
    qid = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.integers(0, 5, qid.size).astype(float)
    s = rng.integers(0, 6, qid.size).astype(float)   # groups of several rows
    y[qid == 1] = 0.0   # a query without a relevant document
    metrics = ["map", "mrr"] if k is None else [f"map@{k}", f"mrr@{k}", "map"]
    shapes, rows = _evaluate_paths(y, s, qid, metrics)
    default = skrank.evaluate(y, s, qid=qid, metrics=metrics)
    for label in metrics:
        np.testing.assert_array_equal(shapes.per_query[label], rows.per_query[label])
        np.testing.assert_array_equal(default.per_query[label], rows.per_query[label])
    # the sums themselves, against the row sums they replace
    ranking = rank_queries("test", y, s, qid, None, None, "average")
    starts, group_sizes, _, positions = ranking.tie_groups()
    expected = np.add.reduceat(_kernels._inverse_ranks(ranking, k), starts)
    with mock.patch.object(_kernels, "_PAIR_TABLE_LIMIT", 10 ** 9):
        got = _kernels._inverse_rank_sums(ranking, k, starts, group_sizes, positions)
    np.testing.assert_array_equal(got, expected)


def test_tie_averaged_map_and_mrr_take_the_per_shape_paths_on_short_rankings():
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(400), 30)
    y, s = rng.integers(0, 3, qid.size).astype(float), rng.integers(0, 4, qid.size) * 1.0
    ranking = rank_queries("test", y, s, qid, None, None, "average")
    starts = ranking.tie_groups()[0]
    assert ranking.max_kept * (ranking.max_kept + 1) <= starts.size   # a small pair table
    with mock.patch.object(_kernels, "_expected_inverse_rank",
                           wraps=_kernels._expected_inverse_rank) as per_group:
        _kernel(ranking, "mrr")
    n_computed = per_group.call_args[0][0].size
    assert n_computed < 400 / 4   # distinct (size, relevant, position) triples, not queries
    assert ranking.relevant_at_groups(1.0).dtype == np.int32


@pytest.mark.parametrize("rows_per_pass", [1, 3, 7, 2 ** 16])
def test_relevant_rows_above_each_tie_group_counted_a_pass_at_a_time(rows_per_pass,
                                                                      monkeypatch):
    monkeypatch.setattr(R, "_PASS_ROWS", rows_per_pass)
    y, s, qid = _rows([6, 3, 11, 4, 9], [0, 1, 2], RNG, tied=True)
    retrieved = np.ones(qid.size, dtype=bool)
    retrieved[6:9] = False   # the second query ranks no row
    ranking = rank_queries("test", y, s, qid, None, retrieved, "average")
    kept = np.flatnonzero(retrieved)
    order = kept[np.lexsort((-s[kept], qid[kept]))]
    running = np.concatenate(([0], np.cumsum(y[order] >= 1)))
    np.testing.assert_array_equal(ranking.relevant_at_groups(1.0), running[ranking.tie_starts])
    np.testing.assert_array_equal(ranking.relevant_at_queries(1.0), running[ranking.offsets])
    for name in ("map", "mrr"):
        got = skrank.per_query_scores(name, y, s, qid=qid, retrieved=retrieved).score
        _, expected = ref_mean(name, y, s, qid, retrieved=retrieved)
        for q in range(5):
            assert got[q] == pytest.approx(expected[q], rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------------------
# Full rankings sorted a chunk of rows at a time


@pytest.mark.parametrize("chunk", [1, 7, 40])
@pytest.mark.parametrize("sizes", [[10] * 9, [1, 4, 9, 30, 2, 17, 5, 8]])
def test_rows_sorted_a_chunk_at_a_time(chunk, sizes, monkeypatch):
    monkeypatch.setattr(S, "_SORT_CHUNK_CELLS", chunk)
    y, s, qid = _rows(sizes, [0, 1, 2], RNG, tied=True)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    # Stable: within each query by decreasing score, ties in input order (lexsort's last
    # key sorts first).
    expected = np.lexsort((np.arange(s.size), -s, qid))
    np.testing.assert_array_equal(segmented_argsort_desc(s, offsets, stable=True), expected)
    order = segmented_argsort_desc(s, offsets, stable=False)
    np.testing.assert_array_equal(np.sort(order), np.arange(s.size))
    np.testing.assert_array_equal(qid[order], qid)          # rows stay in their query
    np.testing.assert_array_equal(s[order], s[expected])    # by decreasing score
    metrics = ["ndcg@3", "map", "mrr", "precision@2", "recall"]
    got = {ties: skrank.evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
           for ties in ("average", "stable", "pessimistic", "optimistic")}
    monkeypatch.setattr(S, "_SORT_CHUNK_CELLS", 2 ** 16)
    for ties, result in got.items():
        expected_result = skrank.evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
        for label in metrics:
            np.testing.assert_array_equal(result.per_query[label],
                                          expected_result.per_query[label])


# Scores that defeat a sort on truncated keys: values equal but for their lowest bits
# (the bits the keyed sort gives the column), both zeros, subnormals, both signs.
_CLOSE_SCORES = np.array([1.0, np.nextafter(1.0, 2.0), 1.0 + 2.0 ** -51, 1.0 + 3 * 2.0 ** -52,
                          -1.0, np.nextafter(-1.0, 0.0), 0.0, -0.0, 5e-324, -5e-324, 1e-300,
                          2.0, -7.5, 1e300])


@st.composite
def _close_rankings(draw, longest=40):
    """(scores, offsets): up to 8 queries of 0..longest rows, at least one row (ragged:
    padded blocks), with scores drawn from _CLOSE_SCORES or from a wider pool with ties."""
    sizes = draw(st.lists(st.integers(0, longest), min_size=1, max_size=8).filter(any))
    pool = draw(st.sampled_from([_CLOSE_SCORES, _CLOSE_SCORES[:4], np.arange(5.0),
                                 np.linspace(-1, 1, 1000)]))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=sum(sizes),
                          max_size=sum(sizes)))
    return pool[np.array(picks, dtype=np.intp)], np.concatenate(([0], np.cumsum(sizes)))


@settings(max_examples=150, deadline=None)
@given(data=_close_rankings(), chunk=st.sampled_from([1, 7, 64, 2 ** 16]), flat=st.booleans())
def test_keyed_row_sort_is_the_stable_sort_and_finds_every_tie(data, chunk, flat):
    s, offsets = data
    qid = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    expected = np.lexsort((np.arange(s.size), -s, qid))
    sorted_scores = s[expected]
    has_tie = bool(np.any((sorted_scores[1:] == sorted_scores[:-1]) & (qid[1:] == qid[:-1])))
    # Uneven sizes take the flat chunks of keys, or (flat=False) the padded blocks.
    with mock.patch.object(S, "_SORT_CHUNK_CELLS", chunk), \
            mock.patch.object(S, "_FLAT_MAX_WIDTH", S._FLAT_MAX_WIDTH if flat else 0):
        order, tied = segmented_argsort_desc(s, offsets, stable=True, with_ties=True)
        unstable, unstable_tied, same = segmented_argsort_desc(
            s, offsets, stable=False, with_ties=True, with_same=True)
    np.testing.assert_array_equal(order, expected)
    assert tied == has_tie   # exact for float64 scores: the tie check is skipped on it
    np.testing.assert_array_equal(s[unstable], sorted_scores)
    np.testing.assert_array_equal(qid[unstable], qid)
    # The tie flags found by the sort: equal sorted neighbours of one query.
    assert unstable_tied == has_tie
    np.testing.assert_array_equal(
        same, (sorted_scores[1:] == sorted_scores[:-1]) & (qid[1:] == qid[:-1]))


@settings(max_examples=40, deadline=None)
@given(data=_close_rankings(longest=12),
       labels=st.lists(st.integers(0, 2), min_size=96, max_size=96))
def test_keyed_row_sort_gives_the_reference_values_for_every_tie_policy(data, labels):
    s, offsets = data
    qid = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    y = np.array(labels[:s.size], dtype=np.float64)
    # The oracle enumerates the orderings of each tie group: only small groups for it.
    _, group_sizes = np.unique(np.column_stack([qid, s + 0.0]), axis=0, return_counts=True)
    small_groups = group_sizes.max() <= 6
    metrics = ["map", "mrr", "ndcg@3", "precision@2"]
    for ties in ("average", "stable", "pessimistic", "optimistic"):
        got = skrank.evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
        # The general path (an argsort of the negated scores, then the tie check).
        with mock.patch.object(S, "_KEYED_MAX_WIDTH", 0), \
                mock.patch.object(S, "_FLAT_MAX_WIDTH", 0):
            general = skrank.evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
        for label in metrics:
            np.testing.assert_allclose(got.per_query[label], general.per_query[label],
                                       rtol=1e-12, atol=1e-15)
            if small_groups:
                name, k = (label.split("@") + [None])[:2]
                _, expected = ref_mean(name, y, s, qid, ties=ties,
                                       **({} if k is None else {"k": int(k)}))
                values = dict(zip(got.qid, got.per_query[label]))
                for q, value in expected.items():
                    assert values[q] == pytest.approx(value, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("chunk", [1, 50, 2 ** 16])
def test_flat_sort_resorts_segments_whose_values_differ_only_in_dropped_bits(
        chunk, monkeypatch):
    # Many small segments of uneven sizes: the flat chunks of (segment, value, row) keys.
    # Values one unit in the last place apart share their leading bits: the sorted keys
    # may misorder them, and their segments must be sorted again (and only they).
    monkeypatch.setattr(S, "_SORT_CHUNK_CELLS", chunk)
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 30, 400)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    qid = np.repeat(np.arange(sizes.size), sizes)
    s = rng.normal(size=offsets[-1])
    # Per segment, a base value of either sign and the next float above it.
    base = (1.0 + rng.random(sizes.size)) * rng.choice([1.0, -1.0], sizes.size)
    close = rng.random(s.size) < 0.2
    above = rng.random(s.size) < 0.5
    s[close] = np.where(above, np.nextafter(base, np.inf)[qid], base[qid])[close]
    s[rng.random(s.size) < 0.05] = 1.0   # ties as well, next to the close values
    calls = []
    resort = S._resort_segments
    monkeypatch.setattr(S, "_resort_segments", lambda *a: calls.append(a[2]) or resort(*a))
    assert S._flat_sortable(s, offsets)
    order, tied, same = segmented_argsort_desc(s, offsets, stable=False, with_ties=True,
                                               with_same=True)
    expected = np.lexsort((np.arange(s.size), -s, qid))
    np.testing.assert_array_equal(order, expected)
    sorted_scores = s[expected]
    flags = (sorted_scores[1:] == sorted_scores[:-1]) & (qid[1:] == qid[:-1])
    np.testing.assert_array_equal(same, flags)
    assert tied == bool(flags.any())
    assert calls   # the close values were caught, not sorted right by chance
    # Without a close pair nothing is sorted again.
    calls.clear()
    assert np.array_equal(segmented_argsort_desc(np.arange(s.size, 0, -1.0), offsets,
                                                 stable=True), np.arange(s.size))
    assert not calls


@pytest.mark.parametrize("chunk", [1, 50, 2 ** 16])
@pytest.mark.parametrize("kind", ["grades", "gains", "halves", "fractions", "signed", "nan"])
def test_values_sorted_within_segments_flat_or_in_blocks(kind, chunk, monkeypatch):
    monkeypatch.setattr(S, "_SORT_CHUNK_CELLS", chunk)
    rng = np.random.default_rng(12)
    sizes = rng.integers(0, 40, 300)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    qid = np.repeat(np.arange(sizes.size), sizes)
    n = offsets[-1]
    values = {"grades": rng.integers(0, 5, n).astype(float),
              "gains": 2.0 ** rng.integers(0, 11, n) - 1.0,
              "halves": rng.integers(0, 9, n) / 2.0,
              "fractions": rng.random(n),            # low bits used: padded blocks
              "signed": rng.choice([-1.0, -0.0, 0.0, 2.0, np.inf], n),
              "nan": rng.choice([np.nan, 0.0, 2.0, np.inf], n)}[kind]
    flat = S._flat_sort_desc(values, offsets)
    assert (flat is None) == (kind in ("fractions", "signed", "nan"))
    if kind == "nan":   # not sorted flat (NaN would lead); the blocks keep what they did
        return
    expected = values[np.lexsort((-values, qid))]
    got = S.segmented_sort_desc(values, offsets)
    np.testing.assert_array_equal(got, expected)
    monkeypatch.setattr(S, "_FLAT_MAX_WIDTH", 0)
    np.testing.assert_array_equal(S.segmented_sort_desc(values, offsets), expected)


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_tie_groups_found_a_chunk_at_a_time(chunk, monkeypatch):
    monkeypatch.setattr(S, "_SORT_CHUNK_CELLS", chunk)
    y, s, qid = _rows([6, 1, 11, 4], [0, 1], RNG, tied=True)
    ranking = rank_queries("test", y, s, qid, None, None, "average")
    order = np.lexsort((-s, qid))
    sorted_scores, sorted_qid = s[order], qid[order]
    starts = np.flatnonzero(np.concatenate(
        ([True], (sorted_scores[1:] != sorted_scores[:-1]) | (sorted_qid[1:] != sorted_qid[:-1]))))
    np.testing.assert_array_equal(ranking.tie_starts, np.append(starts, s.size))


@pytest.mark.parametrize("chunk", [1, 2, 5, 2 ** 16])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_labels_taken_in_order_over_the_order_and_ties_flagged_a_chunk_at_a_time(
        chunk, dtype, monkeypatch):
    monkeypatch.setattr(S, "_SORT_CHUNK_CELLS", chunk)
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 23).astype(dtype)
    scores = rng.integers(0, 4, 23).astype(float)
    order = rng.permutation(23)
    expected_labels, sorted_scores = labels[order], scores[order]
    taken, same = S._take_in_order(order.copy(), labels, scores)
    np.testing.assert_array_equal(taken, expected_labels)
    assert taken.dtype == labels.dtype
    np.testing.assert_array_equal(same, sorted_scores[1:] == sorted_scores[:-1])
    taken, same = S._take_in_order(order.copy(), labels)
    np.testing.assert_array_equal(taken, expected_labels)
    assert same is None


# --------------------------------------------------------------------------------------
# One call: label extremes and rankings shared


def test_label_extremes_each_computed_when_first_read():
    class Counting(np.ndarray):
        reads = []

        def min(self, *args, **kwargs):
            self.reads.append("min")
            return super().min(*args, **kwargs)

        def max(self, *args, **kwargs):
            self.reads.append("max")
            return super().max(*args, **kwargs)

    values = np.array([0.0, 2.0, 1.0]).view(Counting)
    extremes = _Extremes(values)
    assert extremes()[0] == 0.0 and extremes()[0] == 0.0
    assert Counting.reads == ["min"]
    assert extremes()[1] == 2.0 and Counting.reads == ["min", "max"]


@pytest.mark.parametrize("sizes", [[20] * 15, [3, 25, 12, 40, 8, 15, 30, 11]])
def test_binary_labels_one_ranking_values_of_the_single_scorers(sizes, monkeypatch):
    """Binary labels, tie-free scores: the multi-metric scorer ranks once, to the end, and
    reads nDCG@10 from that ranking; each single scorer ranks on its own (nDCG@10 only to
    rank 10).  The values agree exactly, and with the reference."""
    y, s, qid = _rows(sizes, [0.0, 0.0, 1.0], RNG)
    X = np.zeros((s.size, 1))
    est = FixedScores(s).fit(X, y)
    names = ["ndcg@10", "map", "mrr"]
    with sklearn.config_context(enable_metadata_routing=True):
        singles = {n: skrank.get_scorer(n)(est, X, y, qid=qid) for n in names}
        calls = []
        original = skrank._plan.rank_queries

        def counting(*args, **kwargs):
            calls.append(kwargs.get("depth", args[7] if len(args) > 7 else None))
            return original(*args, **kwargs)

        monkeypatch.setattr(skrank._plan, "rank_queries", counting)
        got = skrank.make_ranking_scorer(names)(est, X, y, qid=qid)
    assert calls == [None]   # one ranking, to the end
    assert got == singles
    for name, stem, params in (("ndcg@10", "ndcg", {"k": 10}), ("map", "map", {}),
                               ("mrr", "mrr", {})):
        assert got[name] == pytest.approx(ref_mean(stem, y, s, qid, **params)[0], rel=1e-12)


def test_full_ranking_reads_every_depth_a_top_ranking_reads(monkeypatch):
    monkeypatch.setattr(S, "_WHOLE_PER_K", 0)   # short uneven queries bounded, not sorted whole
    y, s, qid = _rows([30, 12, 25], [0.0, 1.0], RNG)
    full = rank_queries("test", y, s, qid, None, None, "average")
    top = rank_queries("test", y, s, qid, None, None, "average", Depth(k=10))
    assert top.depth == Depth(k=10) and full.depth is None
    np.testing.assert_array_equal(_kernel(full, "ndcg", k=10), _kernel(top, "ndcg", k=10))
