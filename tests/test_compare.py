"""skrank.compare: paired tests, intervals, effect sizes and corrections.

Oracles: scipy.stats (ttest_rel, wilcoxon, binomtest, permutation_test,
bootstrap, false_discovery_control, t), brute-force enumeration of sign
vectors and of row permutations, the textbook formulas of the corrections,
and simulation (size under a true null, power under a shift, coverage of the
intervals) with fixed seeds.
"""

import itertools
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

import skrank
from skrank import InvalidParameterError
from skrank._paired_tests import _bootstrap_interval, _bootstrap_means, _fdr_bh_formula


def pairs_of(values, qid=None):
    """{name: (qid, values)} from {name: values}."""
    n = len(next(iter(values.values())))
    qid = np.arange(n) if qid is None else qid
    return {name: (qid, np.asarray(v, dtype=float)) for name, v in values.items()}


def two_systems(rng, n, shift=0.0, scale=1.0):
    """Per-query values of A and B = A + shift + noise (paired through a query effect)."""
    query_effect = rng.normal(size=n)
    a = query_effect + rng.normal(scale=scale, size=n)
    b = query_effect + shift + rng.normal(scale=scale, size=n)
    return a, b


# --------------------------------------------------------------------------------------
# p-values against scipy and against enumeration
# --------------------------------------------------------------------------------------


def rounded_values(rng, n, n_systems=3):
    # values on a grid of 1/8: many tied and zero differences, exactly representable
    return {f"s{i}": rng.integers(0, 9, size=n) / 8 for i in range(n_systems)}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [6, 25, 80])
def test_analytic_p_values_equal_scipy(seed, n):
    rng = np.random.default_rng(seed)
    values = rounded_values(rng, n)
    values["s3"] = rng.normal(size=n)  # continuous, no ties
    for test in ("t", "wilcoxon", "sign"):
        res = skrank.compare(pairs_of(values), test=test, correction=None)
        assert len(res.pairs) == 6
        for p in res.pairs:
            a, b = values[p.system_a], values[p.system_b]
            d = b - a
            if test == "t":
                expected = stats.ttest_rel(b, a).pvalue
            elif test == "wilcoxon":
                expected = stats.wilcoxon(d).pvalue
            else:
                wins, losses = int((d > 0).sum()), int((d < 0).sum())
                expected = stats.binomtest(wins, wins + losses, 0.5).pvalue
            assert p.p_value == pytest.approx(expected, abs=1e-12, rel=1e-12), (test, p)
            assert p.p_adjusted == p.p_value


def brute_force_randomization_p(d):
    """Share of all 2**n sign vectors whose |sum| reaches the observed |sum|."""
    observed = abs(d.sum())
    hits = sum(abs(np.dot(signs, d)) >= observed - 1e-12 * max(observed, 1)
               for signs in itertools.product([-1.0, 1.0], repeat=d.shape[0]))
    return hits / 2 ** d.shape[0]


@pytest.mark.parametrize("batch_cells", [1 << 21, 40])   # one batch, or many
@pytest.mark.parametrize("n", [2, 3, 5, 8, 11])
def test_randomization_is_exact_enumeration_on_small_sets(n, batch_cells, monkeypatch):
    monkeypatch.setattr(skrank._paired_tests, "_BATCH_CELLS", batch_cells)
    rng = np.random.default_rng(n)
    values = rounded_values(rng, n)
    res = skrank.compare(pairs_of(values), correction=None, n_resamples=2 ** n, random_state=0)
    assert res.exact and res.n_resamples is None
    for p in res.pairs:
        d = values[p.system_b] - values[p.system_a]
        expected = brute_force_randomization_p(d)
        assert p.p_value == pytest.approx(expected, abs=1e-12)
        assert p.p_value > 0
        if n >= 3 and d.any():  # scipy's exact paired permutation test agrees
            scipy_p = stats.permutation_test(
                (values[p.system_b], values[p.system_a]),
                lambda x, y, axis: np.mean(x - y, axis=axis),
                permutation_type="samples", n_resamples=np.inf, vectorized=True).pvalue
            assert p.p_value == pytest.approx(min(scipy_p, 1.0), abs=1e-12)


@pytest.mark.parametrize("batch_cells", [1 << 21, 100])
def test_randomization_monte_carlo_is_close_to_exact_and_never_zero(batch_cells, monkeypatch):
    monkeypatch.setattr(skrank._paired_tests, "_BATCH_CELLS", batch_cells)
    rng = np.random.default_rng(7)
    n, draws = 14, 4000                       # 2**14 > 4000: random signs
    values = {"A": rng.normal(size=n), "B": rng.normal(size=n) + 0.3,
              "C": rng.normal(size=n) + 5.0}  # C: every sign flip is less extreme
    res = skrank.compare(pairs_of(values), correction=None, n_resamples=draws, random_state=1)
    assert not res.exact and res.n_resamples == draws
    for p in res.pairs:
        exact = brute_force_randomization_p(values[p.system_b] - values[p.system_a])
        tolerance = 4 * math.sqrt(exact * (1 - exact) / draws) + 2 / draws
        assert abs(p.p_value - exact) <= tolerance, (p, exact)
        assert p.p_value >= 1 / (draws + 1)
    far = next(p for p in res.pairs if p.system_b == "C" and p.system_a == "A")
    # only the observed signs and their mirror reach it: (b + 1) / (B + 1) with b tiny
    assert far.p_value < 10 / (draws + 1)


def test_bootstrap_p_value_is_never_zero_and_near_t_for_many_queries():
    rng = np.random.default_rng(3)
    a, b = two_systems(rng, 400, shift=0.1)
    boot = skrank.compare({"A": (np.arange(400), a), "B": (np.arange(400), b)},
                          test="bootstrap", random_state=0).pairs[0]
    t = stats.ttest_rel(b, a).pvalue
    assert abs(boot.p_value - t) < 0.02
    far = skrank.compare({"A": (np.arange(50), a[:50]), "B": (np.arange(50), a[:50] + 10.0 +
                                                                rng.normal(size=50))},
                         test="bootstrap", n_resamples=999, random_state=0).pairs[0]
    assert far.p_value == 1 / 1000


def test_identical_systems_have_p_one_for_every_test():
    values = {"A": [0.1, 0.5, 0.3, 0.9], "B": [0.1, 0.5, 0.3, 0.9]}
    for test in skrank._compare.TESTS:
        p = skrank.compare(pairs_of(values), test=test, random_state=0).pairs[0]
        assert p.p_value == 1.0
        assert (p.difference, p.ci_low, p.ci_high, p.effect_size) == (0.0, 0.0, 0.0, 0.0)
        assert (p.wins, p.ties, p.losses) == (0, 4, 0)
        assert not p.significant


# --------------------------------------------------------------------------------------
# corrections
# --------------------------------------------------------------------------------------


def bonferroni(p):
    return [min(1.0, len(p) * x) for x in p]


def holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order, start=1):
        running = max(running, min(1.0, (m - rank + 1) * p[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    for rank, i in enumerate(order, start=1):
        adjusted[i] = min(min(1.0, m * p[j] / r) for r, j in enumerate(order, start=1) if r >= rank)
    return adjusted


@pytest.mark.parametrize("correction,formula", [("bonferroni", bonferroni), ("holm", holm),
                                                ("fdr_bh", benjamini_hochberg)])
def test_corrections_equal_their_textbook_formulas(correction, formula):
    rng = np.random.default_rng(11)
    n = 40
    base = rng.normal(size=n)
    systems = {f"s{i}": {"m1": base + 0.15 * i + rng.normal(size=n),
                         "m2": base - 0.1 * i + rng.normal(size=n)} for i in range(4)}
    pd = pytest.importorskip("pandas")
    results = {name: pd.DataFrame(cols, index=np.arange(n)) for name, cols in systems.items()}
    res = skrank.compare(results, test="t", correction=correction)
    assert len(res.pairs) == 12                       # 6 pairs x 2 metrics, one family
    raw = [p.p_value for p in res.pairs]
    expected = formula(raw)
    assert [p.p_adjusted for p in res.pairs] == pytest.approx(expected, abs=1e-15)
    assert [p.significant for p in res.pairs] == [x <= 0.05 for x in expected]


def test_bh_formula_matches_scipy():
    control = getattr(stats, "false_discovery_control", None)
    if control is None:
        pytest.skip("scipy < 1.11 has no false_discovery_control")
    rng = np.random.default_rng(0)
    for m in (1, 2, 7, 50):
        p = rng.random(m) ** 3
        p[: m // 3] = p[0]                            # ties
        assert _fdr_bh_formula(p) == pytest.approx(control(p, method="bh"), abs=1e-15)
        assert _fdr_bh_formula(p) == pytest.approx(benjamini_hochberg(list(p)), abs=1e-15)


def exact_tukey_p(matrix):
    """Randomized Tukey HSD by brute force: every way of permuting each query's row
    of per-system values; p of each pair = share of range(means) >= |mean_i - mean_j|."""
    n, k = matrix.shape
    means = matrix.mean(axis=0)
    ranges = []
    for perms in itertools.product(list(itertools.permutations(range(k))), repeat=n):
        permuted = np.array([matrix[q, list(perm)] for q, perm in enumerate(perms)]).mean(axis=0)
        ranges.append(permuted.max() - permuted.min())
    ranges = np.array(ranges)
    return {(i, j): float(np.mean(ranges >= abs(means[i] - means[j]) - 1e-12))
            for i, j in itertools.combinations(range(k), 2)}


@pytest.mark.parametrize("table_cells", [1 << 23, 0])   # precomputed permutations, or drawn
def test_tukey_matches_exhaustive_permutations(table_cells, monkeypatch):
    monkeypatch.setattr(skrank._paired_tests, "_TUKEY_TABLE_CELLS", table_cells)
    rng = np.random.default_rng(5)
    matrix = rng.integers(0, 5, size=(4, 3)) / 4.0 + np.array([0.0, 0.2, 0.5])
    names = ["A", "B", "C"]
    draws = 20_000
    res = skrank.compare(pairs_of({s: matrix[:, i] for i, s in enumerate(names)}),
                         correction="tukey", n_resamples=draws, random_state=0)
    exact = exact_tukey_p(matrix)
    for p in res.pairs:
        e = exact[names.index(p.system_a), names.index(p.system_b)]
        assert abs(p.p_adjusted - e) <= 4 * math.sqrt(e * (1 - e) / draws) + 2 / draws, (p, e)


def test_tukey_with_two_systems_is_the_randomization_test_and_covers_metrics():
    rng = np.random.default_rng(8)
    a, b = two_systems(rng, 10, shift=0.5)
    draws = 20_000
    one = skrank.compare(pairs_of({"A": a, "B": b}), correction="tukey", n_resamples=draws,
                         random_state=0).pairs[0]
    exact = brute_force_randomization_p(b - a)
    assert abs(one.p_adjusted - exact) <= 4 * math.sqrt(exact * (1 - exact) / draws) + 2 / draws
    # several metrics: Bonferroni across metrics on top of each metric's Tukey p-value
    pd = pytest.importorskip("pandas")
    results = {s: pd.DataFrame({"m1": v, "m2": v * 2}) for s, v in (("A", a), ("B", b))}
    two = skrank.compare(results, correction="tukey", n_resamples=draws, random_state=0)
    assert len(two.pairs) == 2
    for p in two.pairs:
        assert p.p_adjusted == pytest.approx(min(1.0, 2 * one.p_adjusted), abs=1e-12)


# --------------------------------------------------------------------------------------
# intervals, effect sizes, counts
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_interval_is_scipys_on_the_same_resamples(method):
    import inspect

    if "bootstrap_result" not in inspect.signature(stats.bootstrap).parameters:
        pytest.skip("this scipy's bootstrap cannot take a given bootstrap distribution")
    rng = np.random.default_rng(2)
    diffs = np.column_stack([rng.exponential(size=30) - 0.8, rng.normal(size=30)])
    dist = _bootstrap_means(diffs, 2000, np.random.default_rng(0))
    low, high = _bootstrap_interval(diffs, dist, 0.9, method)
    for j in range(diffs.shape[1]):
        # the resample means are those of the resampled queries
        ref = stats.bootstrap((diffs[:, j],), np.mean, n_resamples=0, confidence_level=0.9,
                              method=method,
                              bootstrap_result=SimpleNamespace(bootstrap_distribution=dist[:, j]))
        assert low[j] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
        assert high[j] == pytest.approx(ref.confidence_interval.high, abs=1e-12)


def test_bootstrap_means_are_means_of_resampled_queries():
    # With one query, every resample is that query; with two, means lie on the grid.
    diffs = np.array([[1.0, -2.0], [3.0, 5.0]])
    dist = _bootstrap_means(diffs, 500, np.random.default_rng(0))
    assert set(np.round(dist[:, 0], 12)) <= {1.0, 2.0, 3.0}
    assert set(np.round(dist[:, 1], 12)) <= {-2.0, 1.5, 5.0}
    counts = {v: int((np.round(dist[:, 0], 12) == v).sum()) for v in (1.0, 2.0, 3.0)}
    # multinomial(2, 1/2): probabilities 1/4, 1/2, 1/4
    assert abs(counts[2.0] / 500 - 0.5) < 0.1 and abs(counts[1.0] / 500 - 0.25) < 0.08


def test_t_interval_effect_size_and_counts_from_formulas():
    rng = np.random.default_rng(4)
    a, b = two_systems(rng, 25, shift=0.3)
    b[:3] = a[:3]                                     # three ties
    res = skrank.compare(pairs_of({"A": a, "B": b}), test="t", confidence=0.9)
    p = res.pairs[0]
    d = b - a
    sem = d.std(ddof=1) / math.sqrt(25)
    half = stats.t.ppf(0.95, 24) * sem
    assert res.interval == "t"
    assert (p.ci_low, p.ci_high) == pytest.approx((d.mean() - half, d.mean() + half), abs=1e-12)
    ttest = stats.ttest_rel(b, a)
    if hasattr(ttest, "confidence_interval"):
        ci = ttest.confidence_interval(0.9)
        assert (p.ci_low, p.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert p.difference == pytest.approx(d.mean(), abs=1e-15)
    assert (p.mean_a, p.mean_b) == pytest.approx((a.mean(), b.mean()), abs=1e-15)
    assert p.effect_size == pytest.approx(d.mean() / d.std(ddof=1), abs=1e-12)
    assert (p.wins, p.ties, p.losses) == ((d > 0).sum(), 3, (d < 0).sum())


def test_constant_shift_gives_a_point_interval_and_infinite_effect():
    a = np.array([0.125, 0.5, 0.25, 0.75, 0.375])      # exact in binary: b - a == 0.25
    p = skrank.compare(pairs_of({"A": a, "B": a + 0.25}), random_state=0).pairs[0]
    assert (p.ci_low, p.ci_high) == pytest.approx((0.25, 0.25))
    assert p.effect_size == math.inf and p.wins == 5
    assert p.p_value == 2 / 32                         # exact: only all-plus and all-minus


def binomial_bounds(n, rate, tail=1e-4):
    return stats.binom.ppf(tail, n, rate), stats.binom.isf(tail, n, rate)


N_COLLECTIONS = 200


@pytest.mark.parametrize("test", ["randomization", "t", "wilcoxon", "sign", "bootstrap"])
def test_size_under_a_true_null_and_power_under_a_shift(test):
    """Two systems from the same distribution: rejections at alpha=0.05 are a
    binomial(200, <=0.05) count; with a shift of 0.8 sd of the differences,
    almost always rejected (the sign test, the least powerful, about 95%)."""
    rng = np.random.default_rng(12345)
    n = 40
    rejected_null = rejected_shift = 0
    for _ in range(N_COLLECTIONS):
        a, b = two_systems(rng, n)
        res = skrank.compare(pairs_of({"A": a, "B": b}), test=test, n_resamples=400,
                             correction=None, interval="t", random_state=rng)
        rejected_null += res.pairs[0].significant
        a, b = two_systems(rng, n, shift=0.8 * math.sqrt(2))
        res = skrank.compare(pairs_of({"A": a, "B": b}), test=test, n_resamples=400,
                             correction=None, interval="t", random_state=rng)
        rejected_shift += res.pairs[0].significant and res.pairs[0].difference > 0
    low, high = binomial_bounds(N_COLLECTIONS, 0.05)
    if test == "sign":  # discrete: its true size at n=40 is below 5%
        low = 0
    assert low <= rejected_null <= high, rejected_null
    assert rejected_shift >= 0.9 * N_COLLECTIONS, rejected_shift


@pytest.mark.parametrize("interval", ["bca", "percentile", "t"])
def test_interval_coverage_is_near_nominal(interval):
    rng = np.random.default_rng(99)
    n, shift = 40, 0.3
    covered = 0
    for _ in range(N_COLLECTIONS):
        a, b = two_systems(rng, n, shift=shift)
        p = skrank.compare(pairs_of({"A": a, "B": b}), test="t", interval=interval,
                           n_resamples=500, random_state=rng).pairs[0]
        covered += p.ci_low <= shift <= p.ci_high
    low, high = binomial_bounds(N_COLLECTIONS, 0.95)
    # bootstrap intervals of a mean undercover slightly at n=40 (about 94%)
    assert low - (0.015 * N_COLLECTIONS if interval != "t" else 0) <= covered <= high, covered


def test_holm_controls_the_family_wise_error_under_a_global_null():
    rng = np.random.default_rng(2024)
    any_rejected = 0
    for _ in range(150):
        values = {f"s{i}": rng.normal(size=30) for i in range(4)}
        res = skrank.compare(pairs_of(values), test="t", interval="t")
        any_rejected += any(p.significant for p in res.pairs)
    assert any_rejected <= binomial_bounds(150, 0.05)[1]


# --------------------------------------------------------------------------------------
# pairing, inputs, options
# --------------------------------------------------------------------------------------


def test_queries_are_paired_by_id_not_by_position():
    rng = np.random.default_rng(1)
    qid = np.array([f"q{i}" for i in range(12)])
    a, b = two_systems(rng, 12, shift=0.4)
    order = rng.permutation(12)
    aligned = skrank.compare({"A": (qid, a), "B": (qid, b)}, random_state=0)
    shuffled = skrank.compare({"A": (qid, a), "B": (qid[order], b[order])}, random_state=0)
    assert aligned.pairs == shuffled.pairs
    as_dict = skrank.compare({"A": dict(zip(qid, a)), "B": dict(zip(qid[order], b[order]))},
                             random_state=0)
    assert as_dict.pairs == aligned.pairs


def test_mismatched_queries_raise_unless_common():
    a = ([1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4])
    b = ([2, 3, 4, 5, 6], [0.5, 0.1, 0.9, 0.3, 0.3])
    with pytest.raises(ValueError, match="same queries.*queries='common'"):
        skrank.compare({"A": a, "B": b})
    res = skrank.compare({"A": a, "B": b}, queries="common")
    assert res.qid.tolist() == [2, 3, 4]
    assert res.n_dropped == {"A": 1, "B": 2}
    p = res.pairs[0]
    assert p.difference == pytest.approx(np.mean([0.5 - 0.2, 0.1 - 0.3, 0.9 - 0.4]))
    assert "queries left out" in repr(res)


def test_evaluations_and_pandas_inputs():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(30), 5)
    y = rng.integers(0, 3, size=qid.size)
    good = skrank.evaluate(y, y + rng.normal(size=qid.size), qid=qid, metrics=["ndcg@3", "mrr"])
    bad = skrank.evaluate(y, rng.normal(size=qid.size), qid=qid, metrics=["ndcg@3", "map"])
    res = skrank.compare({"good": good, "bad": bad}, baseline="bad", random_state=0)
    assert res.metrics == ["ndcg@3"]                  # the only metric both have
    p = res.pairs[0]
    assert (p.system_a, p.system_b) == ("bad", "good")
    assert p.mean_b == pytest.approx(good.mean["ndcg@3"], abs=1e-15)
    frames = skrank.compare({"good": good.to_pandas(), "bad": bad.to_pandas()},
                            metrics="ndcg@3", baseline="bad", random_state=0)
    assert frames.pairs == res.pairs
    series = skrank.compare({"good": good.to_pandas()["ndcg@3"],
                             "bad": bad.to_pandas()["ndcg@3"]},
                            metrics=["ndcg@3"], baseline="bad", random_state=0)
    assert series.pairs == res.pairs
    table = res.to_pandas()
    assert isinstance(table, pd.DataFrame)
    assert table.shape == (1, 16) and table.loc[0, "system_b"] == "good"
    assert table.loc[0, "verdict"] == p.verdict


def test_per_query_scores_input():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(30), 5)
    y = rng.integers(0, 3, size=qid.size)
    good_s, bad_s = y + rng.normal(size=qid.size), rng.normal(size=qid.size)
    scores = {"bad": skrank.per_query_scores("ndcg", y, bad_s, qid=qid, k=3),
              "good": skrank.per_query_scores("ndcg", y, good_s, qid=qid, k=3)}
    res = skrank.compare(scores, metrics="ndcg@3", random_state=0)
    evaluations = {"bad": skrank.evaluate(y, bad_s, qid=qid, metrics=["ndcg@3"]),
                   "good": skrank.evaluate(y, good_s, qid=qid, metrics=["ndcg@3"])}
    assert res.pairs == skrank.compare(evaluations, random_state=0).pairs


def test_all_pairs_and_baseline_layouts():
    rng = np.random.default_rng(0)
    values = {s: rng.normal(size=10) for s in "ABCD"}
    res = skrank.compare(pairs_of(values), random_state=0)
    assert [(p.system_a, p.system_b) for p in res.pairs] == list(itertools.combinations("ABCD", 2))
    res = skrank.compare(pairs_of(values), baseline="C", random_state=0)
    assert [(p.system_a, p.system_b) for p in res.pairs] == [("C", "A"), ("C", "B"), ("C", "D")]


def test_deterministic_given_random_state():
    rng = np.random.default_rng(0)
    a, b = two_systems(rng, 60, shift=0.2)
    kw = dict(n_resamples=500, test="bootstrap")
    first = skrank.compare(pairs_of({"A": a, "B": b}), random_state=3, **kw)
    again = skrank.compare(pairs_of({"A": a, "B": b}), random_state=3, **kw)
    other = skrank.compare(pairs_of({"A": a, "B": b}), random_state=4, **kw)
    assert first.pairs == again.pairs
    assert first.pairs != other.pairs


def test_tables_mark_significant_wins():
    rng = np.random.default_rng(0)
    base = rng.normal(size=30)
    values = {"weak": base, "strong": base + 1 + 0.1 * rng.normal(size=30),
              "weak too": base + 0.01 * rng.normal(size=30)}
    res = skrank.compare(pairs_of(values), metrics="ndcg@10", random_state=0)
    markdown = res.to_markdown()
    # strong (b) beats weak (a) and "weak too" (c); no other significant win
    strong_mean = f"{values['strong'].mean():.4f}"
    assert f"| (b) strong | {strong_mean}<sup>ac</sup> |" in markdown
    assert "| (a) weak | " in markdown and "<sup>" not in markdown.split("(a) weak")[1].split("\n")[0]
    latex = res.to_latex()
    assert f"{strong_mean}$^{{ac}}$" in latex and r"\begin{tabular}{lr}" in latex
    assert "weak too" in latex
    text = repr(res)
    assert "strong > weak" in text and "ndcg@10" in text
    data = json.loads(json.dumps(res.to_dict()))
    assert data["pairs"][0]["system_a"] == "weak" and data["n_queries"] == 30


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


GOOD = {"A": ([1, 2, 3], [0.1, 0.5, 0.2]), "B": ([1, 2, 3], [0.3, 0.4, 0.9])}


@pytest.mark.parametrize("kwargs,match", [
    (dict(test="anova"), "test must be one of 'randomization'"),
    (dict(correction="sidak"), "correction must be one of 'holm'"),
    (dict(interval="normal"), "interval must be one of 'bca'"),
    (dict(queries="all"), "queries must be one of 'same', 'common'"),
    (dict(alpha=1.5), r"alpha must be a finite number in \(0, 1\)"),
    (dict(confidence=0), r"confidence must be a finite number in \(0, 1\)"),
    (dict(n_resamples=0), "n_resamples must be an int >= 1"),
    (dict(baseline="C"), r"baseline must be None or one of the systems \['A', 'B'\]"),
    (dict(random_state="seed"), "random_state must be None, an int"),
    (dict(metrics=[]), "metrics must be None"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match) as info:
        skrank.compare(GOOD, **kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    assert str(info.value).startswith("compare: ")


def test_bad_inputs():
    with pytest.raises(InvalidParameterError, match="at least 2 systems.*Got 1"):
        skrank.compare({"A": GOOD["A"]})
    with pytest.raises(InvalidParameterError, match="results must be a mapping"):
        skrank.compare([GOOD["A"], GOOD["B"]])
    with pytest.raises(InvalidParameterError, match=r"results\['B'\] must be what skrank.evaluate"):
        skrank.compare({"A": GOOD["A"], "B": 0.5})
    with pytest.raises(ValueError, match="at least 2 queries.*Got 1"):
        skrank.compare({"A": ([1], [0.1]), "B": ([1], [0.2])})
    with pytest.raises(ValueError, match="must be finite.*'B'.*query 2.*no_relevant='zero'"):
        skrank.compare({"A": GOOD["A"], "B": ([1, 2, 3], [0.3, np.nan, 0.9])})
    with pytest.raises(ValueError, match="query ids of system 'A' must be unique.*query 1"):
        skrank.compare({"A": ([1, 1, 3], [0.1, 0.5, 0.2]), "B": GOOD["B"]})
    with pytest.raises(ValueError, match="one value of 'score' per query id"):
        skrank.compare({"A": ([1, 2, 3], [0.1, 0.5]), "B": GOOD["B"]})
    with pytest.raises(ValueError, match="system 'A' has no values of \\['map', 'mrr'\\]"):
        skrank.compare(GOOD, metrics=["map", "mrr"])


def test_nan_from_skipped_queries_is_an_error_with_the_fix():
    y = [1, 0, 0, 0, 1, 0]
    qid = [1, 1, 2, 2, 3, 3]
    a = skrank.evaluate(y, [.9, .1, .5, .4, .2, .8], qid=qid, metrics=["ndcg"], no_relevant="skip")
    b = skrank.evaluate(y, [.1, .9, .5, .4, .8, .2], qid=qid, metrics=["ndcg"], no_relevant="skip")
    with pytest.raises(ValueError, match="query 2.*no_relevant='zero'"):
        skrank.compare({"A": a, "B": b})


def test_inputs_are_not_modified():
    a = np.array([0.1, 0.5, 0.2, 0.7])
    b = np.array([0.3, 0.4, 0.9, 0.1])
    qid = np.array([4, 3, 2, 1])
    saved = a.copy(), b.copy(), qid.copy()
    skrank.compare({"A": (qid, a), "B": (qid, b)}, random_state=0)
    for before, after in zip(saved, (a, b, qid)):
        np.testing.assert_array_equal(before, after)


# --------------------------------------------------------------------------------------
# cross_val_evaluate: held-out per-query values
# --------------------------------------------------------------------------------------


def ranking_data(seed=0, n_queries=24):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries) * 7 + 3, rng.integers(4, 12, size=n_queries))
    X = rng.normal(size=(qid.size, 4))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=qid.size), [0, 1])
    return X, y.astype(float), qid


def test_cross_val_evaluate_equals_a_manual_loop_over_folds():
    from sklearn.base import clone
    from sklearn.linear_model import Ridge

    from skrank.model_selection import QueryKFold, cross_val_evaluate

    X, y, qid = ranking_data()
    cv = QueryKFold(4, shuffle=True, random_state=0)
    res = cross_val_evaluate(Ridge(alpha=2.0), X, y, qid=qid, cv=cv, metrics=["ndcg@5", "map"])
    expected = {}
    for train, test in cv.split(X, qid=qid):
        model = clone(Ridge(alpha=2.0)).fit(X[train], y[train])
        fold = skrank.evaluate(y[test], model.predict(X[test]), qid=qid[test],
                               metrics=["ndcg@5", "map"])
        for i, q in enumerate(fold.qid.tolist()):
            expected[q] = (fold.per_query["ndcg@5"][i], fold.per_query["map"][i])
    assert sorted(res.qid.tolist()) == sorted(expected)
    for i, q in enumerate(res.qid.tolist()):
        assert (res.per_query["ndcg@5"][i], res.per_query["map"][i]) == pytest.approx(
            expected[q], abs=1e-15)


def test_cross_val_evaluate_takes_sparse_and_dataframe_x_and_feeds_compare():
    import scipy.sparse as sp
    from sklearn.linear_model import Ridge
    from sklearn.tree import DecisionTreeRegressor

    from skrank.model_selection import QueryKFold, cross_val_evaluate

    X, y, qid = ranking_data(1)
    cv = QueryKFold(3)
    dense = cross_val_evaluate(Ridge(), X, y, qid=qid, cv=cv, metrics=["ndcg@5"])
    for sparse in (sp.csr_matrix(X), sp.coo_matrix(X)):
        got = cross_val_evaluate(Ridge(), sparse, y, qid=qid, cv=cv, metrics=["ndcg@5"])
        np.testing.assert_allclose(got.per_query["ndcg@5"], dense.per_query["ndcg@5"],
                                   rtol=1e-9)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=list("abcd"))
    got = cross_val_evaluate(Ridge(), frame, pd.Series(y), qid=qid, cv=cv, metrics=["ndcg@5"])
    np.testing.assert_allclose(got.per_query["ndcg@5"], dense.per_query["ndcg@5"], rtol=1e-12)
    tree = cross_val_evaluate(DecisionTreeRegressor(max_depth=1), X, y, qid=qid, cv=cv,
                              metrics=["ndcg@5"])
    res = skrank.compare({"stump": tree, "ridge": dense}, random_state=0)
    assert res.n_queries == np.unique(qid).size
    assert res.pairs[0].mean_b == pytest.approx(dense.mean["ndcg@5"])


class FixedLinear:
    """A stub estimator: fit does nothing, predict is X @ weights (sparse or dense X)."""

    def __init__(self, weights=None):
        self.weights = weights

    def get_params(self, deep=True):
        return {"weights": self.weights}

    def set_params(self, **params):
        self.weights = params.get("weights", self.weights)
        return self

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.asarray(X @ self.weights).reshape(-1)


def test_cross_val_evaluate_on_sparse_svmlight_data():
    from sklearn.datasets import load_svmlight_file

    try:
        from tests._ltr_data import ltr_path
    except ImportError:  # pragma: no cover - depends on pytest's rootdir
        from _ltr_data import ltr_path
    from skrank.model_selection import QueryKFold, cross_val_evaluate

    path = ltr_path("lightgbm_lambdarank", "rank.test.svmlight")
    X, y, qid = load_svmlight_file(str(path), query_id=True)
    model = FixedLinear(np.random.default_rng(0).normal(size=X.shape[1]))
    res = cross_val_evaluate(model, X, y, qid=qid, cv=QueryKFold(3), metrics=["ndcg@10"])
    expected = skrank.evaluate(y, X.toarray() @ model.weights, qid=qid, metrics=["ndcg@10"])
    np.testing.assert_array_equal(res.qid, expected.qid)
    np.testing.assert_allclose(res.per_query["ndcg@10"], expected.per_query["ndcg@10"],
                               rtol=1e-12)


class QidRecorder:
    """A ranker whose fit takes qid: it records what it gets and scores by column 0."""

    seen = []

    def __init__(self, sign=1.0):
        self.sign = sign

    def get_params(self, deep=True):
        return {"sign": self.sign}

    def set_params(self, **params):
        self.sign = params.get("sign", self.sign)
        return self

    def fit(self, X, y, qid=None):
        QidRecorder.seen.append((np.asarray(qid), X.shape[0]))
        return self

    def predict(self, X):
        return self.sign * np.asarray(X)[:, 0]


def test_cross_val_evaluate_passes_grouped_qid_to_rankers_and_checks_folds():
    from skrank.model_selection import QueryKFold, QueryShuffleSplit, cross_val_evaluate

    X, y, qid = ranking_data(2)
    order = np.random.default_rng(0).permutation(qid.size)    # queries interleaved
    X, y, qid = X[order], y[order], qid[order]
    QidRecorder.seen.clear()
    res = cross_val_evaluate(QidRecorder(), X, y, qid=qid, cv=3, metrics=["mrr"])
    assert len(QidRecorder.seen) == 3
    for seen, n_rows in QidRecorder.seen:
        assert seen.shape == (n_rows,)
        assert np.all(seen[1:] >= seen[:-1])                    # each query's rows together
    direct = skrank.evaluate(y, X[:, 0], qid=qid, metrics=["mrr"])
    np.testing.assert_allclose(res.per_query["mrr"], direct.per_query["mrr"])
    from sklearn.model_selection import GroupKFold
    grouped = cross_val_evaluate(QidRecorder(), X, y, qid=qid, cv=GroupKFold(3), metrics=["mrr"])
    np.testing.assert_allclose(grouped.per_query["mrr"], direct.per_query["mrr"])
    with pytest.raises(ValueError, match="at most one test fold"):
        cross_val_evaluate(QidRecorder(), X, y, qid=qid,
                           cv=QueryShuffleSplit(n_splits=4, test_size=0.5, random_state=0))
    with pytest.raises(ValueError, match="query ids are required"):
        cross_val_evaluate(QidRecorder(), X, y, cv=QueryKFold(3))
    with pytest.raises(InvalidParameterError, match="cv must be None, an int"):
        cross_val_evaluate(QidRecorder(), X, y, qid=qid, cv="folds")


# --------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------

from pathlib import Path  # noqa: E402

from skrank.cli import main

TREC = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"
needs_trec = pytest.mark.skipif(not TREC.is_dir(), reason=f"trec_eval data absent at {TREC}")


def cli(capsys, argv):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@needs_trec
def test_cli_compare_trec_runs(capsys, tmp_path):
    qrels, run1, run2 = TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc"
    # a third run: results.test with its scores reversed
    lines = [line.split() for line in run1.read_text().splitlines() if line.strip()]
    reversed_run = tmp_path / "reversed.run"
    reversed_run.write_text("".join(f"{q} Q0 {d} {r} {-float(s)} rev\n" for q, _, d, r, s, *_ in lines))
    argv = ["compare", str(qrels), str(run1), str(run2), str(reversed_run), "-m", "map",
            "-m", "ndcg@10", "-c", "--seed", "0", "--format", "json"]
    status, out, err = cli(capsys, argv)
    assert status == 0, err
    data = json.loads(out)
    assert data["systems"] == ["results.test", "results.trunc", "reversed.run"]
    assert data["n_queries"] == 3 and data["exact"] is True
    assert len(data["pairs"]) == 6                                # 3 pairs x 2 metrics
    for path, name in ((run1, "results.test"), (run2, "results.trunc"),
                       (reversed_run, "reversed.run")):
        ev = skrank.evaluate(qrels=str(qrels), run=str(path), metrics=["map", "ndcg@10"],
                             missing_queries="zero")
        assert data["means"]["map"][name] == pytest.approx(ev.mean["map"], abs=1e-12)
    # Python and the command line agree
    results = {name: skrank.evaluate(qrels=str(qrels), run=str(path), metrics=["map", "ndcg@10"],
                                     missing_queries="zero")
               for path, name in ((run1, "results.test"), (run2, "results.trunc"),
                                  (reversed_run, "reversed.run"))}
    res = skrank.compare(results, random_state=0)
    assert [p["p_adjusted"] for p in data["pairs"]] == [p.p_adjusted for p in res.pairs]
    # the same again: deterministic with a seed
    assert cli(capsys, argv)[1] == out


@needs_trec
def test_cli_compare_formats_baseline_and_errors(capsys):
    qrels, run1, run2 = str(TREC / "qrels.test"), str(TREC / "results.test"), str(TREC / "results.trunc")
    status, out, _ = cli(capsys, ["compare", qrels, run1, run2, "-c", "--baseline", run2,
                                  "--test", "t", "--correction", "none"])
    assert status == 0
    assert "results.test vs results.trunc" in out and "test='t'" in out
    status, out, _ = cli(capsys, ["compare", qrels, run1, run2, "--common-queries",
                                  "--format", "markdown", "-m", "P@10"])
    assert status == 0 and out.startswith("| system | P@10 |") and "Mean over 2 queries" in out
    status, out, _ = cli(capsys, ["compare", qrels, run1, run2, "-c", "--format", "latex"])
    assert status == 0 and r"\begin{tabular}{lrr}" in out
    status, _, err = cli(capsys, ["compare", qrels, run1, run2])        # 3 queries against 2
    assert status == 2
    # the evaluation's warning about the missing query comes first, then the one error line
    *warned, error = err.splitlines()
    assert all(line.startswith("skrank compare: warning: ") for line in warned), err
    assert error.startswith("skrank compare: error: ") and "-c" in error, err
    assert "--common-queries" in error
    status, _, err = cli(capsys, ["compare", qrels, run1])
    assert status == 2 and "two or more run files. Got one" in err
    with pytest.raises(SystemExit):
        main(["compare", qrels, run1, run2, "--test", "anova"])
    assert "invalid choice" in capsys.readouterr().err


@needs_trec
def test_cli_compare_errors_name_the_mistake_and_the_fix(capsys, tmp_path, monkeypatch):
    """The same run twice (one path twice, or two paths of one file), a --baseline that is no
    run, a missing file or a directory: one line naming the file and what to pass instead,
    not an internal 'Got 1 (['x'])' or an OSError's errno."""
    qrels, run1, run2 = str(TREC / "qrels.test"), str(TREC / "results.test"), str(TREC / "results.trunc")
    monkeypatch.chdir(TREC)
    for runs, said in (([run1, run1], "run " + run1 + " is given twice"),
                       ([run1, run2, run1], "run " + run1 + " is given twice"),
                       ([run1, "./results.test"], "run ./results.test and " + run1
                        + " are the same file")):
        status, out, err = cli(capsys, ["compare", qrels, *runs, "-c"])
        assert status == 2 and out == ""
        assert err.startswith("skrank compare: error: " + said), err
        assert "a run compared with itself differs on no query" in err
        assert "different systems" in err and "Got 1" not in err
    status, _, err = cli(capsys, ["compare", qrels, run1, run2, "--baseline", "results.other"])
    assert status == 2 and err == ("skrank compare: error: --baseline must be one of the runs "
                                   "given, as written or by its file name (results.test, "
                                   "results.trunc). Got 'results.other' instead.\n")
    # another path of a run given is that run
    status, out, _ = cli(capsys, ["compare", qrels, run1, run2, "-c", "--seed", "0",
                                  "--baseline", "./results.trunc"])
    assert status == 0 and "results.test vs results.trunc" in out
    missing_run = str(tmp_path / "not-read.run")
    # compare()'s own rules (check_options), in the options' names, before any file is read
    for option, value, expected, shown in (("--seed", "-1", "an int >= 0", "-1"),
                                           ("--n-resamples", "0", "an int >= 1", "0"),
                                           ("--alpha", "2", "a finite number in (0, 1)", "2.0"),
                                           ("--confidence", "nan", "a finite number in (0, 1)",
                                            "nan")):
        status, _, err = cli(capsys, ["compare", qrels, missing_run, run2, option, value])
        assert (status, err) == (2, f"skrank compare: error: {option} must be {expected}. "
                                    f"Got {shown} instead.\n")
    missing = str(tmp_path / "nothing.run")
    for argv, line in (([qrels, run1, missing], f"{missing}: no such file"),
                       ([missing, run1, run2], f"{missing}: no such file"),
                       ([qrels, run1, str(tmp_path)], f"{tmp_path}: is a directory, not a run "
                                                      f"file")):
        status, _, err = cli(capsys, ["compare", *argv])
        assert (status, err) == (2, f"skrank compare: error: {line}\n")


# --------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

grid_values = st.lists(st.integers(0, 8).map(lambda v: v / 8), min_size=2, max_size=12)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), test=st.sampled_from(["randomization", "t", "wilcoxon", "sign", "bootstrap"]),
       interval=st.sampled_from(["bca", "percentile", "t"]))
def test_swapping_the_systems_mirrors_the_comparison(data, test, interval):
    a = data.draw(grid_values)
    b = data.draw(st.lists(st.integers(0, 8).map(lambda v: v / 8), min_size=len(a),
                           max_size=len(a)))
    kw = dict(test=test, interval=interval, n_resamples=300, random_state=0)
    ab = skrank.compare(pairs_of({"A": a, "B": b}), **kw).pairs[0]
    ba = skrank.compare(pairs_of({"B": b, "A": a}), **kw).pairs[0]
    assert (ba.system_a, ba.system_b) == ("B", "A")
    assert ba.difference == -ab.difference
    assert (ba.ci_low, ba.ci_high) == pytest.approx((-ab.ci_high, -ab.ci_low), abs=1e-12)
    assert ba.effect_size == -ab.effect_size
    assert (ba.wins, ba.ties, ba.losses) == (ab.losses, ab.ties, ab.wins)
    d = np.subtract(b, a)
    if test == "wilcoxon" and d.any():
        # older scipy's exact Wilcoxon is not symmetric under ties: compare with scipy's own
        assert (ab.p_value, ba.p_value) == pytest.approx(
            (stats.wilcoxon(d).pvalue, stats.wilcoxon(-d).pvalue), abs=1e-12)
    else:
        assert ba.p_value == pytest.approx(ab.p_value, abs=1e-12)
    if test == "t" and d.std() == 0 and d.any():
        assert ab.p_value == 0.0   # scipy's t-test on constant non-zero differences: t = inf
    else:
        assert 0 < ab.p_value <= 1
    assert math.isfinite(ab.ci_low) and ab.ci_low <= ab.ci_high


@settings(max_examples=30, deadline=None)
@given(systems=st.lists(grid_values.filter(lambda v: len(v) == 6), min_size=2, max_size=4),
       correction=st.sampled_from(["holm", "bonferroni", "fdr_bh", "tukey"]))
def test_adjusted_p_values_are_valid_and_never_below_the_raw_ones(systems, correction):
    values = {f"s{i}": v for i, v in enumerate(systems)}
    res = skrank.compare(pairs_of(values), correction=correction, n_resamples=200,
                         random_state=0)
    for p in res.pairs:
        assert 0 < p.p_value <= 1 and 0 < p.p_adjusted <= 1
        if correction != "tukey":  # Tukey's p-values come from their own randomization
            assert p.p_adjusted >= p.p_value


def test_random_state_forms():
    rng = np.random.default_rng(0)
    a, b = two_systems(rng, 30, shift=0.2)
    data = pairs_of({"A": a, "B": b})
    seeded = skrank.compare(data, random_state=5)
    assert skrank.compare(data, random_state=np.random.default_rng(5)).pairs == seeded.pairs
    legacy = skrank.compare(data, random_state=np.random.RandomState(5)).pairs
    assert legacy == skrank.compare(data, random_state=np.random.RandomState(5)).pairs
    with pytest.raises(InvalidParameterError, match="random_state"):
        skrank.compare(data, random_state=-1)


def test_differences_of_rounding_are_ties():
    # 0.1 + 0.2 != 0.3 in binary; as metric values they are the same number
    a = {"q1": 0.1 + 0.2, "q2": 0.5, "q3": 0.25, "q4": 1 / 3}
    b = {"q1": 0.3, "q2": 0.75, "q3": 0.25, "q4": 1 - 2 / 3}
    for test in ("sign", "wilcoxon", "randomization"):
        p = skrank.compare({"A": a, "B": b}, test=test).pairs[0]
        assert (p.wins, p.ties, p.losses) == (1, 3, 0)
    sign = skrank.compare({"A": a, "B": b}, test="sign").pairs[0]
    assert sign.p_value == stats.binomtest(1, 1, 0.5).pvalue == 1.0
