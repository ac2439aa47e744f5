"""Sharp edges met by using skrank from outside, turn three (issue 25).

One test group per item of the issue; each failed on the code before its fix.
"""

import numpy as np
import pytest

import skrank

# --------------------------------------------------------------------------------------
# Wrong numbers: ERR on the array-API path sums log(1 - R) within each query.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_err_device_matches_numpy_on_a_million_rows(dtype, rtol):
    """The continuation probability of a row is a product over the rows above it in
    its query only: a cumulative sum over the whole call made its error grow with the
    call's size (2.6e-2 in float32 at 1M rows)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    rng = np.random.default_rng(25)
    n_queries, size = 50_000, 20  # 1,000,000 rows
    qid = np.repeat(np.arange(n_queries), size)
    y_true = rng.integers(0, 5, qid.size).astype(dtype)
    y_score = rng.random(qid.size).astype(dtype)
    expected = skrank.per_query_scores("err@10", y_true, y_score, qid=qid).score
    got = skrank.per_query_scores("err@10", torch.asarray(y_true), torch.asarray(y_score),
                                  qid=torch.asarray(qid)).score.numpy()
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def test_log_factorial_table_matches_gammaln_on_a_long_query():
    """Tie averages of hit rate and MRR on a 60,000-document query use log(n!): a running
    sum of logs drifted by 1e-11 from scipy's gammaln, which the NumPy path uses."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    n = 60_000
    y_true = np.zeros(n)
    y_true[[5, 7, 30_000]] = 1
    y_score = np.zeros(n)
    y_score[:3] = 1.0  # a tie group of 3 at the top, one of 59,997 below
    for metric in ("mrr", "hit_rate@10", "hit_rate@30000", "mrr@20000"):
        expected = skrank.per_query_scores(metric, y_true, y_score, qid=np.zeros(n)).score
        got = skrank.per_query_scores(metric, torch.asarray(y_true), torch.asarray(y_score),
                                      qid=torch.zeros(n)).score.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


# --------------------------------------------------------------------------------------
# Wrong numbers: compare's exact randomization test and rounding noise.
# --------------------------------------------------------------------------------------


def _exact_randomization_p(a, b):
    """Every sign flip of the differences, in exact rational arithmetic."""
    import itertools
    from fractions import Fraction

    diffs = [Fraction(str(y)) - Fraction(str(x)) for x, y in zip(a, b)]
    observed = abs(sum(diffs))
    flips = list(itertools.product((1, -1), repeat=len(diffs)))
    extreme = sum(abs(sum(s * d for s, d in zip(signs, diffs))) >= observed for signs in flips)
    return extreme / len(flips)


def test_exact_randomization_p_with_a_mean_difference_zero_in_decimal():
    a = {"q0": 0, "q1": .8, "q2": .4, "q3": 0}
    b = {"q0": .2, "q1": .4, "q2": 0, "q3": .6}
    result = skrank.compare({"A": a, "B": b})
    assert result.exact
    assert result.pairs[0].p_value == 1.0 == _exact_randomization_p(a.values(), b.values())
    # the shift bootstrap sees no difference either
    assert skrank.compare({"A": a, "B": b}, test="bootstrap", random_state=0).pairs[0].p_value == 1.0


def test_exact_randomization_p_matches_enumeration_in_rationals():
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(3, 9))
        a = np.round(rng.integers(0, 11, n) / 10, 1)
        b = np.round(rng.integers(0, 11, n) / 10, 1)
        qids = [f"q{i}" for i in range(n)]
        result = skrank.compare({"A": dict(zip(qids, a)), "B": dict(zip(qids, b))})
        assert result.exact
        assert result.pairs[0].p_value == pytest.approx(_exact_randomization_p(a, b), abs=1e-15)


# --------------------------------------------------------------------------------------
# Item 4: warn when the default decided, not when the user did.
# --------------------------------------------------------------------------------------

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
RUN_MISSING = {"q1": {"a": 0.9, "b": 0.1}}
RUN_UNJUDGED = {"q1": {"a": 0.9, "b": 0.1}, "q2": {"c": 0.3}, "q9": {"z": 0.2}}


@pytest.mark.parametrize("option, run, choices", [
    ("missing_queries", RUN_MISSING, ("skip", "zero")),
    ("unjudged_queries", RUN_UNJUDGED, ("skip",)),
])
def test_coverage_warns_only_when_the_default_decided(option, run, choices):
    import warnings

    with pytest.warns(UserWarning, match=f"{option}="):
        default = skrank.evaluate(qrels=QRELS, run=run, metrics=["ndcg"])
    for choice in choices:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            chosen = skrank.evaluate(qrels=QRELS, run=run, metrics=["ndcg"], **{option: choice})
        if choice == "skip":
            assert chosen.mean == default.mean
    if option == "missing_queries":  # the choice still does what it says
        assert chosen.mean["ndcg"] == pytest.approx(0.5)  # q1 1, q2 0
        assert default.mean["ndcg"] == pytest.approx(1.0)
