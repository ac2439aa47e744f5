"""Many small queries of uneven sizes read to a depth (skrank/_engine/segments.py,
``_WHOLE_PER_K``): sorted whole by the flat keyed sort or bounded then sorted, the
values are the same to the last bit, and those of a per-query loop."""

import numpy as np
import pytest

import skrank
from skrank._engine import segments as S
from tests._reference import ref_query_value

METRICS = ["ndcg@10", "ndcg@3", "precision@5", "recall@10", "map@10", "mrr@10", "hit_rate@10",
           "ndcg_exp@10", ("map", {"k": 10, "denominator": "min"})]


def _queries(seed, n_queries=400, median=24):
    rng = np.random.default_rng(seed)
    sizes = np.maximum(1, np.round(rng.lognormal(np.log(median), 1.0, n_queries))).astype(int)
    sizes = np.minimum(sizes, 2000)
    qid = np.repeat(np.arange(n_queries), sizes)
    scores = rng.random(qid.size)
    scores[qid % 3 == 0] = np.round(scores[qid % 3 == 0], 2)   # ties in a third of them
    labels = np.where(rng.random(qid.size) < 0.2, rng.integers(1, 4, qid.size), 0) * 1.0
    return labels, scores, qid


@pytest.fixture
def routes(monkeypatch):
    seen = {"bounded": 0}
    bounded = S._bounded_top_order

    def counted(*args, **kwargs):
        seen["bounded"] += 1
        return bounded(*args, **kwargs)
    monkeypatch.setattr(S, "_bounded_top_order", counted)
    return seen


@pytest.mark.parametrize("ties", ["average", "stable", "pessimistic"])
def test_whole_sort_and_bound_give_the_same_values(monkeypatch, routes, ties):
    labels, scores, qid = _queries(1)
    metrics = {str(m): m for m in METRICS}
    monkeypatch.setattr(S, "_WHOLE_PER_K", 10 ** 9)   # every uneven call sorted whole
    whole = skrank.evaluate(labels, scores, qid=qid, metrics=metrics, ties=ties)
    singles = {label: skrank.per_query_scores(m if isinstance(m, str) else m[0], labels, scores,
                                              qid=qid, ties=ties,
                                              **({} if isinstance(m, str) else m[1])).score
               for label, m in metrics.items()}
    assert routes["bounded"] == 0
    monkeypatch.setattr(S, "_WHOLE_PER_K", 0)   # every one bounded
    bound = skrank.evaluate(labels, scores, qid=qid, metrics=metrics, ties=ties)
    assert routes["bounded"] > 0
    for label, m in metrics.items():
        np.testing.assert_array_equal(whole.per_query[label], bound.per_query[label])
        np.testing.assert_array_equal(singles[label], bound.per_query[label])


def test_log_normal_sizes_take_the_whole_sort(routes):
    """Median 24 (segments longer than 20 rows hold about 60 on average): sorted whole at
    k = 10; k = 3 keeps the bound (segments longer than 6 rows: about 40 on average)."""
    labels, scores, qid = _queries(2)
    skrank.ndcg_score(labels, scores, qid=qid, k=10)
    assert routes["bounded"] == 0
    skrank.ndcg_score(labels, scores, qid=qid, k=3)
    assert routes["bounded"] == 1


def test_whole_sort_equals_the_brute_force_oracle():
    labels, scores, qid = _queries(3, n_queries=60, median=12)
    scores = np.round(scores, 1)   # tie groups of a few rows
    got = skrank.per_query_scores("map", labels, scores, qid=qid, k=4).score
    want = np.full(60, np.nan)
    for q in range(60):
        rows = qid == q
        if rows.sum() <= 9:   # brute force: every ordering of each tie group
            value = ref_query_value("map", labels[rows].tolist(), scores[rows].tolist(),
                                    ties="average", k=4)
            want[q] = 0.0 if value is None else value
    small = ~np.isnan(want)
    assert small.sum() > 20
    np.testing.assert_allclose(got[small], want[small], rtol=1e-12, atol=1e-12)
