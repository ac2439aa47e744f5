"""Exact tie averages on the tie patterns of real scores (many small tie groups from
rounding, a few large ones): against the brute-force oracle, and the kernels' shortcut
for tie groups without a relevant row against the path without it, bit for bit."""

import numpy as np
import pytest

import skrank
from skrank import _kernels
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
def test_groups_without_relevant_rows_left_out_bit_for_bit(monkeypatch, pattern):
    y, s, q = _patterned(1, pattern, n_queries=300, size=30)
    metrics = ["map", "map@5", "map(denominator=min)@5", "mrr", "ndcg", "ndcg@10"]
    shortcut = skrank.evaluate(y, s, qid=q, metrics=metrics)
    left_out = []
    original = _kernels._groups_with_relevant

    def spy(n_rel, *per_group):
        out = original(n_rel, *per_group)
        left_out.append(out[0].shape[0] < n_rel.shape[0])
        return out
    monkeypatch.setattr(_kernels, "_groups_with_relevant", spy)
    skrank.evaluate(y, s, qid=q, metrics=metrics)
    assert any(left_out) or pattern == "int0_4"
    monkeypatch.setattr(_kernels, "_groups_with_relevant", lambda n_rel, *per_group: per_group)
    every_group = skrank.evaluate(y, s, qid=q, metrics=metrics)
    for label in metrics:
        np.testing.assert_array_equal(shortcut.per_query[label], every_group.per_query[label])


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
