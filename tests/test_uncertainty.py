"""Evaluation.confidence_interval and Evaluation.by against scipy and loops.

Oracles: scipy.stats.bootstrap on the very resamples that compare's code draws
(passed as ``bootstrap_result``), scipy.stats.t.interval with scipy.stats.sem,
and per-segment loops written plainly.
"""

import inspect
import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import skrank
from skrank import Evaluation
from skrank._paired_tests import _bootstrap_means


def _evaluation(values, weights=None, qid=None):
    values = np.asarray(values, dtype=float)
    qid = np.arange(values.shape[0]) if qid is None else np.asarray(qid)
    return Evaluation(qid=qid, per_query={"m": values}, mean={"m": float(np.nanmean(values))},
                      counts={}, weights=None if weights is None else np.asarray(weights, float))


needs_result = pytest.mark.skipif(
    "bootstrap_result" not in inspect.signature(stats.bootstrap).parameters,
    reason="this scipy's bootstrap cannot take a given bootstrap distribution")


@needs_result
@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_bootstrap_interval_is_scipys_on_compares_resamples(method):
    rng = np.random.default_rng(4)
    values = rng.exponential(size=40)
    ci = _evaluation(values).confidence_interval(method=method, n_resamples=3000, seed=7,
                                                 confidence=0.9)
    dist = _bootstrap_means(values[:, None], 3000, np.random.default_rng(7))[:, 0]
    ref = stats.bootstrap((values,), np.mean, n_resamples=0, confidence_level=0.9,
                          method=method,
                          bootstrap_result=SimpleNamespace(bootstrap_distribution=dist))
    assert ci.mean["m"] == pytest.approx(values.mean(), abs=1e-15)
    assert ci.low["m"] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ci.high["m"] == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert ci.n_resamples == 3000 and ci.method == method


@needs_result
@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_weighted_bootstrap_is_scipys_paired_ratio(method):
    rng = np.random.default_rng(5)
    values, weights = rng.random(30), rng.integers(1, 5, size=30).astype(float)
    ci = _evaluation(values, weights).confidence_interval(method=method, n_resamples=2000, seed=3)
    sums = _bootstrap_means(np.column_stack([weights * values, weights]), 2000,
                            np.random.default_rng(3))
    dist = sums[:, 0] / sums[:, 1]

    def ratio(v, w, axis=-1):
        return (v * w).sum(axis=axis) / w.sum(axis=axis)

    ref = stats.bootstrap((values, weights), ratio, paired=True, n_resamples=0, method=method,
                          bootstrap_result=SimpleNamespace(bootstrap_distribution=dist))
    assert ci.mean["m"] == pytest.approx((weights * values).sum() / weights.sum(), abs=1e-14)
    assert ci.low["m"] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ci.high["m"] == pytest.approx(ref.confidence_interval.high, abs=1e-12)


def test_default_method_is_bca_and_seed_reproduces():
    values = np.random.default_rng(0).random(25)
    a = _evaluation(values).confidence_interval(seed=1, n_resamples=500)
    b = _evaluation(values).confidence_interval(method="bca", seed=1, n_resamples=500)
    assert a.method == "bca" and (a.low, a.high) == (b.low, b.high)


def test_t_interval_is_scipys():
    values = np.random.default_rng(1).random(20)
    ci = _evaluation(values).confidence_interval(method="t", confidence=0.99)
    low, high = stats.t.interval(0.99, 19, loc=values.mean(), scale=stats.sem(values))
    assert (ci.low["m"], ci.high["m"]) == pytest.approx((low, high), abs=1e-12)
    assert ci.n_resamples is None


def test_weighted_t_interval_against_the_formula_written_out():
    values, weights = [0.2, 0.9, 0.5, 0.4], [1.0, 3.0, 2.0, 2.0]
    ci = _evaluation(values, weights).confidence_interval(method="t")
    total = sum(weights)
    mean = sum(w * v for w, v in zip(weights, values)) / total
    se = math.sqrt(4 / 3 * sum(w * w * (v - mean) ** 2 for w, v in zip(weights, values))) / total
    half = stats.t.ppf(0.975, 3) * se
    assert ci.mean["m"] == pytest.approx(mean)
    assert (ci.low["m"], ci.high["m"]) == pytest.approx((mean - half, mean + half), abs=1e-12)


def test_equal_weights_give_the_unweighted_interval():
    values = np.random.default_rng(2).random(15)
    for method in ("t", "bca", "percentile"):
        a = _evaluation(values).confidence_interval(method=method, seed=0, n_resamples=400)
        b = _evaluation(values, np.full(15, 2.5)).confidence_interval(method=method, seed=0,
                                                                       n_resamples=400)
        assert (a.low["m"], a.high["m"]) == pytest.approx((b.low["m"], b.high["m"]), abs=1e-12)


def test_skipped_queries_are_left_out_and_constant_values_give_a_point():
    ci = _evaluation([0.5, np.nan, 0.5, 0.5]).confidence_interval(seed=0)
    assert ci.n_queries["m"] == 3
    assert ci.low["m"] == ci.high["m"] == ci.mean["m"] == 0.5


def test_on_a_real_evaluation_and_its_tables():
    res = skrank.evaluate([1, 0, 0, 1, 1, 0, 0, 1, 1, 1], [.9, .8, .7, .6, .5, .4, .3, .2, .9, .1],
                          qid=[1, 1, 2, 2, 3, 3, 4, 4, 5, 5], metrics=["mrr", "ndcg"])
    ci = res.confidence_interval(seed=0, n_resamples=500)
    assert ci.metrics == ["mrr", "ndcg"]
    assert ci.mean == pytest.approx(res.mean)
    for m in ci.metrics:
        assert ci.low[m] <= ci.mean[m] <= ci.high[m]
    frame = ci.to_pandas()
    assert list(frame.columns) == ["mean", "ci_low", "ci_high", "n_queries"]
    assert frame.loc["mrr", "ci_low"] == ci.low["mrr"]
    md = ci.to_markdown()
    assert f"| mrr | {ci.mean['mrr']:.4f} | [{ci.low['mrr']:.4f}, {ci.high['mrr']:.4f}] | 5 |" in md
    assert "95% BCa bootstrap intervals, 500 resamples." in md
    assert r"\begin{tabular}" in ci.to_latex()
    assert res.confidence_interval("ndcg", seed=0, n_resamples=500).metrics == ["ndcg"]


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(0, 1), min_size=2, max_size=30),
       method=st.sampled_from(["t", "bca", "percentile"]))
def test_interval_contains_the_mean_and_is_ordered(values, method):
    ci = _evaluation(values).confidence_interval(method=method, seed=0, n_resamples=200)
    tol = 1e-12
    assert ci.low["m"] <= ci.high["m"] + tol
    if method == "t":
        assert ci.low["m"] - tol <= ci.mean["m"] <= ci.high["m"] + tol


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="boot"), "method must be one of"),
    (dict(confidence=1.0), "confidence must be"),
    (dict(n_resamples=0), "n_resamples"),
    (dict(seed=-1), "seed must be"),
    (dict(metric="ndcg"), r"metric must be None \(every metric\), one of"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(skrank.InvalidParameterError, match=match):
        _evaluation([0.1, 0.2]).confidence_interval(**kwargs)


# --------------------------------------------------------------------------------------
# segments
# --------------------------------------------------------------------------------------


def test_by_matches_a_loop_over_segments_with_weights():
    rng = np.random.default_rng(3)
    values, weights = rng.random(30), rng.integers(1, 4, size=30).astype(float)
    values[[4, 9]] = np.nan   # skipped queries
    qid = np.array([f"q{i}" for i in range(30)])
    segment = rng.choice(["head", "torso", "tail"], size=30)
    res = _evaluation(values, weights, qid).by(dict(zip(qid, segment)))
    assert res.segments.tolist() == ["head", "tail", "torso"]
    for i, s in enumerate(res.segments):
        mine = (segment == s) & ~np.isnan(values)
        v, w = values[mine], weights[mine]
        mean = (w * v).sum() / w.sum()
        sub = _evaluation(v, w).confidence_interval(method="t")
        assert res.n_queries["m"][i] == mine.sum()
        assert res.mean["m"][i] == pytest.approx(mean, abs=1e-14)
        assert (res.low["m"][i], res.high["m"][i]) == pytest.approx(
            (sub.low["m"], sub.high["m"]), abs=1e-12)


def test_by_bootstrap_and_array_segments_and_tables():
    res = skrank.evaluate([1, 0, 0, 1, 1, 0, 0, 1, 1, 1], [.9, .8, .7, .6, .5, .4, .3, .2, .9, .1],
                          qid=[1, 1, 2, 2, 3, 3, 4, 4, 5, 5], metrics=["mrr"])
    seg = res.by(["a", "a", "b", "b", "b"], method="percentile", seed=0, n_resamples=300)
    assert seg.mean["mrr"].tolist() == pytest.approx([0.75, (1 + 0.5 + 1) / 3])
    assert seg.n_queries["mrr"].tolist() == [2, 3]
    frame = seg.to_pandas()
    assert frame.loc["b", ("mrr", "n")] == 3
    assert "| b | 3 | " in seg.to_markdown()


def test_by_with_sample_weight_from_evaluate():
    res = skrank.evaluate([1, 0, 0, 1, 1, 0], [.9, .8, .7, .6, .5, .4], qid=[1, 1, 2, 2, 3, 3],
                          metrics=["mrr"], sample_weight=[3, 3, 1, 1, 1, 1])
    seg = res.by({1: "x", 2: "x", 3: "y"})
    assert seg.mean["mrr"].tolist() == pytest.approx([(3 * 1 + 1 * 0.5) / 4, 1.0])


def test_segments_must_cover_every_query():
    with pytest.raises(ValueError, match=r"Got none for 1 of 3 queries \(first: 'c'\)"):
        _evaluation([0.1, 0.2, 0.3], qid=["a", "b", "c"]).by({"a": 1, "b": 2})
    with pytest.raises(skrank.InvalidParameterError, match="array of one segment per query"):
        _evaluation([0.1, 0.2, 0.3]).by([1, 2])


@needs_result
def test_metrics_share_resamples_and_each_is_scipys():
    rng = np.random.default_rng(8)
    a, b, c = rng.random(25), rng.exponential(size=25), rng.random(25)
    c[3] = np.nan   # skips a query: its own resamples, drawn after the others
    ev = Evaluation(qid=np.arange(25), per_query={"a": a, "b": b, "c": c}, mean={}, counts={})
    ci = ev.confidence_interval(seed=5, n_resamples=1000)
    assert ci.metrics == ["a", "b", "c"] and ci.n_queries == {"a": 25, "b": 25, "c": 24}
    draws = np.random.default_rng(5)
    dist = _bootstrap_means(np.column_stack([a, b]), 1000, draws)
    dist_c = _bootstrap_means(c[~np.isnan(c)][:, None], 1000, draws)
    for name, values, d in (("a", a, dist[:, 0]), ("b", b, dist[:, 1]),
                            ("c", c[~np.isnan(c)], dist_c[:, 0])):
        ref = stats.bootstrap((values,), np.mean, n_resamples=0, method="bca",
                              bootstrap_result=SimpleNamespace(bootstrap_distribution=d))
        assert ci.low[name] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
        assert ci.high[name] == pytest.approx(ref.confidence_interval.high, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_segment_means_add_up_to_the_overall_mean(data):
    n = data.draw(st.integers(2, 25))
    values = np.array(data.draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    weights = np.array(data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), float)
    segment = np.array(data.draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n)))
    ev = _evaluation(values, weights)
    res = ev.by(segment)
    totals = np.array([weights[segment == s].sum() for s in res.segments])
    overall = ev.confidence_interval(method="t").mean["m"]
    assert (totals * res.mean["m"]).sum() / totals.sum() == pytest.approx(overall, abs=1e-12)
    assert res.n_queries["m"].sum() == n


# --------------------------------------------------------------------------------------
# intervals in Evaluation.to_pandas
# --------------------------------------------------------------------------------------


def _weighted_evaluation():
    rng = np.random.default_rng(11)
    n = 12
    y_true = rng.integers(0, 3, size=n * 5)
    y_true[:5] = 0   # query 0 has no relevant document: skipped by no_relevant="skip"
    return skrank.evaluate(y_true, rng.random(n * 5), qid=np.repeat(np.arange(n), 5),
                           metrics=["ndcg@3", "mrr"],
                           sample_weight=np.repeat(rng.integers(1, 4, size=n), 5),
                           no_relevant="skip")


def test_to_pandas_default_is_unchanged():
    import pandas as pd

    res = _weighted_evaluation()
    expected = pd.DataFrame(res.per_query, index=pd.Index(res.qid, name="qid"))
    for frame in (res.to_pandas(), res.to_pandas(ci=None), res.to_pandas(ci=False)):
        pd.testing.assert_frame_equal(frame, expected)


@pytest.mark.parametrize("method", ["bootstrap", "percentile", "t"])
@pytest.mark.parametrize("ci", [True, 0.8])
def test_to_pandas_intervals_are_confidence_intervals(method, ci):
    res = _weighted_evaluation()
    assert res.weights is not None and np.isnan(res.per_query["mrr"]).any()
    frame = res.to_pandas(ci=ci, method=method, n_resamples=500, seed=4)
    ref = res.confidence_interval(method=method, confidence=0.95 if ci is True else ci,
                                  n_resamples=500, seed=4)
    assert frame.index.tolist() == res.qid.tolist() + ["mean", "ci_low", "ci_high"]
    assert list(frame.columns) == res.metrics
    for m in res.metrics:
        # the very numbers (not approximately): one computation
        assert frame.loc["mean", m] == ref.mean[m]
        assert frame.loc["ci_low", m] == ref.low[m] and frame.loc["ci_high", m] == ref.high[m]
        # the weighted mean of the evaluation, skipped queries left out
        assert frame.loc["mean", m] == pytest.approx(res.mean[m], abs=1e-12)
        np.testing.assert_array_equal(frame[m].to_numpy(dtype=float)[:-3], res.per_query[m])
    weights = res.weights[~np.isnan(res.per_query["mrr"])]
    kept = res.per_query["mrr"][~np.isnan(res.per_query["mrr"])]
    assert frame.loc["mean", "mrr"] == pytest.approx((weights * kept).sum() / weights.sum())


def test_to_pandas_ci_errors():
    res = _evaluation([0.1, 0.5, 0.9], qid=["a", "mean", "c"])
    with pytest.raises(ValueError, match=r"Evaluation.to_pandas: with ci, the rows .* Got "
                                         r"query 'mean'"):
        res.to_pandas(ci=True)
    assert res.to_pandas().index.tolist() == ["a", "mean", "c"]   # no clash without ci
    res = _evaluation([0.1, 0.5, 0.9])
    for bad in (1.5, 0, "0.9", [0.9]):
        with pytest.raises(skrank.InvalidParameterError, match="Evaluation.to_pandas: ci must"):
            res.to_pandas(ci=bad)
    with pytest.raises(skrank.InvalidParameterError, match="Evaluation.to_pandas: method must"):
        res.to_pandas(ci=True, method="normal")
    with pytest.raises(skrank.InvalidParameterError, match="Evaluation.to_pandas: n_resamples"):
        res.to_pandas(ci=True, n_resamples=0)


def test_t_interval_of_a_spread_below_the_smallest_float_is_a_point():
    # (5e-324 - mean)**2 underflows to 0: a zero standard error, not NaN from scipy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = _evaluation([0.0, 5e-324]).confidence_interval(method="t")
    assert ci.low["m"] == ci.mean["m"] == ci.high["m"]
