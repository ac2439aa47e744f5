"""Exact tie averages on the tie patterns of real scores (many small tie groups from
rounding, a few large ones): against the brute-force oracle, and the kernels' shortcut
for tie groups without a relevant row against the path without it, bit for bit."""

import numpy as np
import pytest

import skrank
from skrank._engine import kernels as _kernels
from skrank._engine import ranking as _ranking
from skrank._engine.ranking import rank_queries
from tests._reference import ref_query_value


def _patterned(seed, pattern, n_queries=40, size=8):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n_queries * size) < 0.2, rng.integers(1, 4, n_queries * size), 0)
    raw = rng.normal(0.0, 1.0, n_queries * size) + 0.3 * y
    scores = {"round1": np.round(raw, 1),                        # many groups of 2-3
              "float32_2": np.round((0.1 * raw).astype(np.float32), 2).astype(np.float64),
              "int0_4": np.clip(np.round(raw + 2.0), 0, 4),       # few large groups
              "half_tied": np.where(rng.random(raw.shape[0]) < 0.5, 0.0, raw)}[pattern]
    return y.astype(float), scores, np.repeat(np.arange(n_queries), size)


PATTERNS = ["round1", "float32_2", "int0_4", "half_tied"]
CALLS = [("map", {}), ("map", {"k": 3}), ("map", {"k": 3, "denominator": "min"}), ("mrr", {}),
         ("mrr", {"k": 2}), ("ndcg", {}), ("ndcg", {"k": 3}), ("r_precision", {}),
         ("precision", {"k": 3}), ("recall", {"k": 3})]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_tie_patterns_equal_the_brute_force_oracle(pattern):
    y, s, q = _patterned(0, pattern, size=7 if pattern == "half_tied" else 8)
    for name, params in CALLS:
        got = skrank.per_query_scores(name, y, s, qid=q, **params).score
        want = []
        for query in range(q.max() + 1):
            rows = q == query
            value = ref_query_value(name, y[rows].tolist(), s[rows].tolist(), ties="average",
                                    **params)
            want.append(0.0 if value is None else value)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("few", [0.0, 1.0])
def test_both_tie_routes_equal_the_brute_force_oracle(monkeypatch, pattern, few):
    """The kernels under ties take one term per row (many small groups) or one per group
    (few large ones, see ``_FEW_TIE_GROUPS``): each route on every pattern."""
    monkeypatch.setattr(_ranking, "_FEW_TIE_GROUPS", few)
    test_tie_patterns_equal_the_brute_force_oracle(pattern)


def _ap_sum_every_group(ranking, threshold, k):
    """The expected AP sums of a ranking under ties, one term per tie group (groups of
    one row included, none left out), in rank order: the kernel's closed form without
    its shortcuts (only the groups of several rows holding a relevant one computed as
    groups, the others as the tie-free path does)."""
    starts, sizes, query, position = ranking.tie_groups()
    at_start = ranking.relevant_at_groups(threshold)
    n_rel = np.diff(at_start).astype(np.float64)
    above = (at_start[:-1] - ranking.relevant_at_queries(threshold)[:-1][query]
             ).astype(np.float64)
    slots = sizes.astype(np.float64)
    if k is not None:
        np.clip(k - position, 0, sizes, out=slots, casting="unsafe")
    table = 1.0 / np.arange(1.0, ranking.max_kept + 1.0)
    if k is not None:
        table[k:] = 0.0
    sum_inverse = np.add.reduceat(table[ranking.position], starts)
    sum_offset = slots - (position + 1.0) * sum_inverse
    n = sizes.astype(np.float64)
    slope = (n_rel - 1.0) / np.maximum(n - 1.0, 1.0)
    terms = (n_rel / n) * ((above + 1.0) * sum_inverse + slope * sum_offset)
    # a relevant row alone in its group: hits / rank, as where no group is formed
    single = (sizes == 1) & (n_rel == 1.0) & (position < (np.inf if k is None else k))
    terms[single] = (above[single] + 1.0) / (position[single] + 1.0)
    return np.bincount(query, weights=terms, minlength=ranking.n_queries)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("few", [0.0, 1.0])
def test_tied_average_precision_equals_every_group_bit_for_bit(monkeypatch, pattern, few):
    """Per row (only the groups of several rows holding a relevant one computed as
    groups) or per group (few groups), the sums equal one term per tie group, in rank
    order, to the last bit."""
    monkeypatch.setattr(_ranking, "_FEW_TIE_GROUPS", few)
    y, s, q = _patterned(1, pattern, n_queries=300, size=30)
    ranking = rank_queries("f", y, s, q, None, None, "average")
    assert ranking.has_ties
    for threshold in (1.0, 2.0):
        for k in (None, 1, 5, 30):
            np.testing.assert_array_equal(
                _kernels.average_precision_sum(ranking, threshold, k),
                _ap_sum_every_group(ranking, threshold, k), err_msg=f"{threshold} {k}")


def _rank_sum_every_group(ranking, values, weight, k):
    """Expected sums of ``values`` times ``weight`` of the rank under ties, one term per
    tie group starting within ``k`` (groups of one row included), in rank order: each
    group's mean value times the weights of the positions it spans within ``k``."""
    starts, sizes, query, position = ranking.tie_groups()
    longest = ranking.max_kept if k is None else min(k, ranking.max_kept)
    weights = weight(np.arange(longest))
    cumulative = np.concatenate(([0.0], np.cumsum(weights)))
    live = position < longest
    means = np.add.reduceat(values, starts)[live] / sizes[live]
    first, end = position[live], np.minimum(position[live] + sizes[live], longest)
    spanned = cumulative[end] - cumulative[first]
    alone = sizes[live] == 1   # a group of one row: its own weight, as where none is formed
    spanned[alone] = weights[first[alone]]
    return np.bincount(query[live], weights=means * spanned, minlength=ranking.n_queries)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("few", [0.0, 1.0])
@pytest.mark.parametrize("uneven", [False, True])
def test_tied_rank_sums_equal_every_group_bit_for_bit(monkeypatch, pattern, few, uneven):
    """Linear metrics under ties, per row (only the groups of several rows computed as
    groups) or per group: their sums equal one term per tie group, in rank order, to
    the last bit; queries of one length (summed as a block) or not (some shorter than
    the cutoff)."""
    monkeypatch.setattr(_ranking, "_FEW_TIE_GROUPS", few)
    y, s, q = _patterned(2, pattern, n_queries=300, size=30)
    if uneven:
        keep = np.random.default_rng(3).random(y.shape[0]) < np.repeat(
            np.linspace(0.1, 1.0, 300), 30)
        y, s, q = y[keep], s[keep], q[keep]
    ranking = rank_queries("f", y, s, q, None, None, "average")
    gains = np.exp2(ranking.labels) - 1.0
    for weight in (_kernels.ones, _kernels.log_discount(2.0)):
        for k in (None, 1, 5, 10, 30, 40):
            got = _kernels.weighted_rank_sum(ranking, ranking.labels, weight, k,
                                             lambda labels: np.exp2(labels) - 1.0)
            np.testing.assert_array_equal(got, _rank_sum_every_group(ranking, gains, weight, k),
                                          err_msg=f"{k}")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_tied_reciprocal_rank_per_row_equals_per_group_bit_for_bit(monkeypatch, pattern):
    y, s, q = _patterned(4, pattern, n_queries=300, size=30)
    values = {}
    for few in (0.0, 1.0):
        monkeypatch.setattr(_ranking, "_FEW_TIE_GROUPS", few)
        ranking = rank_queries("f", y, s, q, None, None, "average")
        values[few] = [_kernels.reciprocal_rank(ranking, t, k) for t in (1.0, 3.0)
                       for k in (None, 1, 3, 30)]
    for a, b in zip(values[0.0], values[1.0]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_groups_without_relevant_rows_left_out_bit_for_bit(monkeypatch, pattern):
    y, s, q = _patterned(1, pattern, n_queries=300, size=30)
    metrics = ["ndcg", "ndcg@10"]
    shortcut = skrank.evaluate(y, s, qid=q, metrics=metrics)
    monkeypatch.setattr(_kernels, "_nonzero_groups", lambda means: None)
    every_group = skrank.evaluate(y, s, qid=q, metrics=metrics)
    for label in metrics:
        np.testing.assert_array_equal(shortcut.per_query[label], every_group.per_query[label])


def test_groups_left_out_on_full_rankings_of_sparse_relevance(monkeypatch):
    """A recommender's case: long rankings, few relevant rows, scores with a few ties."""
    rng = np.random.default_rng(3)
    y = (rng.random(40 * 500) < 0.01) * rng.integers(1, 4, 40 * 500).astype(float)
    s = np.round(rng.random(40 * 500), 3)
    q = np.repeat(np.arange(40), 500)
    ks = [None, 10, 300]
    ranking = rank_queries("f", y, s, q, None, None, "average")
    for k in ks:
        np.testing.assert_array_equal(_kernels.average_precision_sum(ranking, 1.0, k),
                                      _ap_sum_every_group(ranking, 1.0, k))
    got = [skrank.per_query_scores("ndcg", y, s, qid=q, k=k).score for k in ks]
    monkeypatch.setattr(_kernels, "_nonzero_groups", lambda means: None)
    want = [skrank.per_query_scores("ndcg", y, s, qid=q, k=k).score for k in ks]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_group_sums_of_groups_that_do_not_tile_the_rows():
    values = np.random.default_rng(2).random(50)
    for starts, sizes in [([0, 5, 9], [5, 4, 41]),           # tiling: one reduceat
                          ([3, 20, 47], [2, 9, 3]),          # gaps, the last one to the end
                          ([0, 10], [1, 1]), ([], [])]:
        starts, sizes = np.array(starts, dtype=np.intp), np.array(sizes, dtype=np.intp)
        got = _kernels._group_sums(values, starts, sizes)
        # Each group alone, as reduceat sums a segment (pairwise: not a plain running sum).
        want = [np.add.reduceat(values[a:a + n], [0])[0] for a, n in zip(starts, sizes)]
        np.testing.assert_array_equal(got, want)


def _compiled_kernels():
    if _kernels._speedups is None:
        try:  # works whether or not tests/ is a package
            from tests.conftest import NO_SPEEDUPS
        except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
            from conftest import NO_SPEEDUPS
        pytest.skip(NO_SPEEDUPS)


@pytest.mark.parametrize("pattern", PATTERNS + ["sparse"])
def test_compiled_tie_kernels_equal_the_numpy_paths_bit_for_bit(monkeypatch, pattern):
    """Tie-averaged AP and reciprocal rank by skrank._engine._speedups (passes in C, the
    groups' closed forms in numpy) against the numpy per-row and per-group paths, to the
    last bit, with and without a cutoff, on every tie pattern, in uneven queries, with
    queries holding no relevant row and rankings held to a depth."""
    _compiled_kernels()
    rng = np.random.default_rng(11)
    for case in range(6):
        if pattern == "sparse":
            n = 2000
            y = (rng.random(n) < 0.01) * rng.integers(1, 4, n).astype(float)
            s = np.round(rng.random(n), 2)
            q = np.sort(rng.integers(0, 15, n))
        else:
            y, s, q = _patterned(20 + case, pattern, n_queries=120, size=13 + case)
            if case % 2:   # uneven sizes: some queries dropped, some rows too
                keep = rng.random(y.shape[0]) < 0.8
                y, s, q = y[keep], s[keep], q[keep]
        for depth in (None, 4):
            ranking = rank_queries("f", y, s, q, None, None, "average",
                                   None if depth is None else _ranking.Depth(k=depth))
            if not ranking.has_ties:
                continue
            for threshold in (1.0, 2.0):
                for k in (None, 1, 3, 7, 40):
                    if depth is not None and (k is None or k > depth):
                        continue
                    monkeypatch.setattr(_ranking, "_FEW_TIE_GROUPS", 0.0)   # not by group
                    ranking._cache.pop("few_tie_groups", None)
                    got = [_kernels.average_precision_sum(ranking, threshold, k),
                           _kernels.reciprocal_rank(ranking, threshold, k)]
                    compiled = _kernels._speedups
                    try:
                        monkeypatch.setattr(_kernels, "_speedups", None)
                        for few in (0.0, 1.0):
                            monkeypatch.setattr(_ranking, "_FEW_TIE_GROUPS", few)
                            ranking._cache.pop("few_tie_groups", None)
                            want = [_kernels.average_precision_sum(ranking, threshold, k),
                                    _kernels.reciprocal_rank(ranking, threshold, k)]
                            for a, b in zip(got, want):
                                np.testing.assert_array_equal(
                                    a, b, err_msg=f"{case} {depth} {threshold} {k} {few}")
                    finally:
                        monkeypatch.setattr(_kernels, "_speedups", compiled)
                        ranking._cache.pop("few_tie_groups", None)


def test_compiled_tie_passes_refuse_bad_buffers():
    _compiled_kernels()
    speedups = _kernels._speedups
    relevant = np.array([True, False, True])
    same = np.array([True, False])
    offsets = np.array([0, 3], dtype=np.intp)
    out = [np.empty(2, dtype=np.intp) for _ in range(5)]
    first = np.empty(1, dtype=np.intp)
    assert speedups.tie_groups(relevant, same, offsets, *out, first) == 1
    assert [int(column[0]) for column in out] == [0, 2, 0, 0, 1]   # rows 0-1, 1 relevant
    assert first[0] == 0
    assert speedups.tie_groups(~relevant, same, offsets, *out, first) == 1
    assert first[0] == 1
    assert speedups.tie_groups(relevant & False, same, offsets, *out, first) == 1
    assert first[0] == -1
    assert speedups.tie_groups(relevant, same, offsets, *[c[:1] for c in out], first) == -1
    with pytest.raises(ValueError):
        speedups.tie_groups(relevant, same[:1], offsets, *out, first)   # n - 1 flags
    with pytest.raises(ValueError):
        speedups.tie_groups(relevant, same, np.array([0, 4], dtype=np.intp), *out, first)
    with pytest.raises(ValueError):
        speedups.tie_groups(relevant, same, offsets, *out, first[:0])   # one per query
    sums = np.empty(1)
    speedups.tie_ap_sums(relevant, same, offsets, 10, np.array([0.5, 0.0]), sums)
    assert sums[0] == 0.5 + 2.0 / 3.0    # the group's term, then row 2: 2 hits at rank 3
    speedups.tie_ap_sums(relevant, same, offsets, 2, np.array([0.5, 0.0]), sums)
    assert sums[0] == 0.5                # row 2 beyond k = 2
    with pytest.raises(ValueError):
        speedups.tie_ap_sums(relevant, same, offsets, 10, np.array([0.5]), sums)


def test_relevant_in_runs_from_tie_starts_equals_from_tie_flags():
    """A ranking holding its tie groups as ``tie_starts`` (no flags) finds the same
    relevant rows in tie groups as one holding the flags."""
    y, s, q = _patterned(5, "round1", n_queries=60, size=12)
    ranking = rank_queries("f", y, s, q, None, None, "average")
    want = ranking.relevant_in_runs(1.0)
    starts = ranking.tie_starts
    ranking._cache.clear()
    ranking._tie_same, ranking._tie_starts = None, starts
    got = ranking.relevant_in_runs(1.0)
    assert want[0].size
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
