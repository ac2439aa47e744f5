"""Self-check of the test oracle tests/_reference.py against hand-computed values.

Every expected value is written as the formula it comes from. Nothing here imports skrank.
"""

import math

import numpy as np
import pytest
from sklearn.metrics import dcg_score, ndcg_score

try:  # works whether or not tests/ is a package
    from tests import _reference as R
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    import _reference as R

L2 = np.log2


# --------------------------------------------------------------------------------------
# DCG / nDCG worked examples
# --------------------------------------------------------------------------------------


def test_graded_dcg_idcg_ndcg():
    ranked = [3, 2, 3, 0, 1, 2]
    expected_dcg = 3 / L2(2) + 2 / L2(3) + 3 / L2(4) + 0 / L2(5) + 1 / L2(6) + 2 / L2(7)
    expected_idcg = 3 / L2(2) + 3 / L2(3) + 2 / L2(4) + 2 / L2(5) + 1 / L2(6) + 0 / L2(7)
    assert R.ref_dcg(ranked) == pytest.approx(expected_dcg, rel=1e-12)
    assert R.ref_idcg(ranked) == pytest.approx(expected_idcg, rel=1e-12)
    assert R.ref_dcg([3, 3, 2, 2, 1, 0]) == pytest.approx(expected_idcg, rel=1e-12)
    assert R.ref_ndcg(ranked) == pytest.approx(expected_dcg / expected_idcg, rel=1e-12)
    # the published rounded numbers
    assert round(R.ref_dcg(ranked), 3) == 6.861
    assert round(R.ref_idcg(ranked), 3) == 7.141
    assert round(R.ref_ndcg(ranked), 3) == 0.961


def test_binary_dcg_idcg_ndcg():
    ranked = [1, 1, 0, 0, 0, 1, 1, 0, 1, 0]
    expected_dcg = 1 / L2(2) + 1 / L2(3) + 1 / L2(7) + 1 / L2(8) + 1 / L2(10)
    expected_idcg = 1 / L2(2) + 1 / L2(3) + 1 / L2(4) + 1 / L2(5) + 1 / L2(6)
    assert R.ref_dcg(ranked) == pytest.approx(expected_dcg, rel=1e-12)
    assert R.ref_idcg(ranked) == pytest.approx(expected_idcg, rel=1e-12)
    assert R.ref_ndcg(ranked) == pytest.approx(expected_dcg / expected_idcg, rel=1e-12)
    assert round(R.ref_dcg(ranked), 4) == 2.6215
    assert round(R.ref_idcg(ranked), 4) == 2.9485
    assert round(R.ref_ndcg(ranked), 4) == 0.8891


def test_cg_and_cutoffs():
    ranked = [3, 2, 3, 0, 1, 2]
    assert R.ref_cg(ranked) == 3 + 2 + 3 + 0 + 1 + 2
    assert R.ref_cg(ranked, k=2) == 3 + 2
    assert R.ref_cg(ranked, k=100) == 11
    assert R.ref_cg(ranked, k=2, gain="exponential") == (2**3 - 1) + (2**2 - 1)
    assert R.ref_dcg(ranked, k=3) == pytest.approx(3 / L2(2) + 2 / L2(3) + 3 / L2(4))
    # idcg@k is the top-k of the ideal order
    assert R.ref_ndcg(ranked, k=3) == pytest.approx(
        (3 + 2 / L2(3) + 3 / L2(4)) / (3 + 3 / L2(3) + 2 / L2(4))
    )
    assert R.ref_dcg(ranked, k=2, log_base=10) == pytest.approx(
        3 / np.log10(2) + 2 / np.log10(3)
    )
    # nDCG does not depend on log_base
    assert R.ref_ndcg(ranked, log_base=10) == pytest.approx(R.ref_ndcg(ranked), rel=1e-12)
    with pytest.raises(ValueError):
        R.ref_dcg(ranked, k=0)
    with pytest.raises(ValueError):
        R.ref_dcg(ranked, k=True)


def test_gain_linear_exponential_callable():
    y, s = [3, 2, 0], [0.1, 0.9, 0.5]  # ranked labels: 2, 0, 3
    lin = (2 / L2(2) + 0 / L2(3) + 3 / L2(4)) / (3 / L2(2) + 2 / L2(3) + 0 / L2(4))
    exp = (3 / L2(2) + 0 / L2(3) + 7 / L2(4)) / (7 / L2(2) + 3 / L2(3) + 0 / L2(4))
    v_lin = R.ref_query_value("ndcg", y, s, gain="linear")
    v_exp = R.ref_query_value("ndcg", y, s, gain="exponential")
    assert v_lin == pytest.approx(lin, rel=1e-12)
    assert v_exp == pytest.approx(exp, rel=1e-12)
    assert round(v_lin, 4) == 0.8212
    assert round(v_exp, 4) == 0.7309
    # a callable gain is applied to the label array
    v_call = R.ref_query_value("ndcg", y, s, gain=lambda r: 2**r - 1)
    assert v_call == pytest.approx(exp, rel=1e-12)
    v_sq = R.ref_query_value("dcg", y, s, gain=np.square)
    assert v_sq == pytest.approx(4 / L2(2) + 9 / L2(4))


def test_ndcg_undefined_when_idcg_zero():
    assert R.ref_ndcg([0, 0, 0]) is None
    assert R.ref_ndcg([]) is None
    assert R.ref_ndcg([0, 0], unretrieved=[2]) == 0.0  # unretrieved relevant doc: idcg > 0
    assert R.ref_ndcg([0, 1, 0], k=1) == 0.0  # idcg@1 = 1 > 0
    assert R.ref_dcg([]) == 0.0


# --------------------------------------------------------------------------------------
# ties
# --------------------------------------------------------------------------------------


def test_tie_policies_ndcg_at_1():
    y, s = [0, 1, 0], [0.5, 0.5, 0.1]
    # average: the tie group {0, 1} is first with prob 1/2 each
    assert R.ref_query_value("ndcg", y, s, k=1, ties="average") == pytest.approx(0.5)
    assert R.ref_query_value("ndcg", y, s, k=1, ties="stable") == 0
    assert R.ref_query_value("ndcg", y, s, k=1, ties="pessimistic") == 0
    assert R.ref_query_value("ndcg", y, s, k=1, ties="optimistic") == 1


def test_orderings_enumeration():
    y = [1, 2, 3, 4, 5]
    s = [1, 2, 1, 2, 0]  # tie groups (in rank order): {2, 4}, {1, 3}, {5}
    got = list(R.orderings(y, s, "average"))
    assert len(got) == 2 * 2 * 1
    assert all(p == pytest.approx(1 / 4) for p, _ in got)
    assert sum(p for p, _ in got) == pytest.approx(1)
    assert sorted(r for _, r in got) == sorted(
        [(2, 4, 1, 3, 5), (2, 4, 3, 1, 5), (4, 2, 1, 3, 5), (4, 2, 3, 1, 5)]
    )
    assert list(R.orderings(y, s, "stable")) == [(1.0, (2, 4, 1, 3, 5))]
    assert list(R.orderings(y, s, "pessimistic")) == [(1.0, (2, 4, 1, 3, 5))]
    assert list(R.orderings(y, s, "optimistic")) == [(1.0, (4, 2, 3, 1, 5))]
    # stable keeps input order among equal scores, whatever the labels
    assert list(R.orderings([5, 1, 3], [0, 0, 0], "stable")) == [(1.0, (5, 1, 3))]
    # duplicates of identical label sequences are kept and weighted equally
    dup = list(R.orderings([1, 1, 0], [0, 0, 0], "average"))
    assert len(dup) == 6
    assert sum(p for p, r in dup if r == (1, 1, 0)) == pytest.approx(2 / 6)
    # an empty query has one (empty) ordering
    assert list(R.orderings([], [], "average")) == [(1.0, ())]
    with pytest.raises(ValueError):
        list(R.orderings(y, s, "random"))


def test_orderings_trec_docno_descending():
    y = [2, 0, 1, 0]
    s = [0.9, 0.5, 0.5, 0.1]
    docnos = ["a", "b", "c", "d"]
    # equal score: docno descending -> "c" before "b"
    assert list(R.orderings(y, s, "trec", docnos=docnos)) == [(1.0, (2, 1, 0, 0))]
    # string order, not numeric: "10" < "9"
    assert list(R.orderings([1, 0], [0, 0], "trec", docnos=["10", "9"])) == [(1.0, (0, 1))]
    with pytest.raises(ValueError):
        list(R.orderings(y, s, "trec"))


def test_unretrieved_relevant_doc():
    # a=2 (.9), b=0 (.5), c=1 (.5), d=0 (.1) retrieved; e=3 relevant but not retrieved
    y, s, docnos = [2, 0, 1, 0], [0.9, 0.5, 0.5, 0.1], ["a", "b", "c", "d"]
    # trec: ranked 2, 1, 0, 0 (c before b); ideal over all labels: 3, 2, 1, 0, 0
    dcg = 2 / L2(2) + 1 / L2(3)
    idcg = 3 / L2(2) + 2 / L2(3) + 1 / L2(4)
    v = R.ref_query_value("ndcg", y, s, [3], ties="trec", docnos=docnos)
    assert v == pytest.approx(dcg / idcg, rel=1e-12)
    assert round(v, 4) == 0.5525

    # without e, ties averaged: orderings (2,0,1,0) and (2,1,0,0) with prob 1/2
    avg_dcg = 0.5 * (2 / L2(2) + 1 / L2(4)) + 0.5 * (2 / L2(2) + 1 / L2(3))
    idcg_no_e = 2 / L2(2) + 1 / L2(3)
    v_avg = R.ref_query_value("ndcg", y, s, ties="average")
    assert v_avg == pytest.approx(avg_dcg / idcg_no_e, rel=1e-12)
    assert round(v_avg, 4) == 0.9751
    assert v_avg == pytest.approx(ndcg_score([y], [s]), rel=1e-12)

    # the same through ref_mean with a retrieved mask
    mean, per_q = R.ref_mean(
        "ndcg", y + [3], s + [123.0], ["q"] * 5,
        retrieved=[True, True, True, True, False], ties="trec", docnos=docnos + ["e"],
    )
    assert mean == pytest.approx(dcg / idcg, rel=1e-12)
    assert per_q == {"q": pytest.approx(dcg / idcg, rel=1e-12)}


# --------------------------------------------------------------------------------------
# binary metrics
# --------------------------------------------------------------------------------------


def test_precision_denominators():
    ranked = [1, 0, 0]
    assert R.ref_precision(ranked, k=5) == pytest.approx(1 / 5)
    assert R.ref_precision(ranked, k=5, denominator="min") == pytest.approx(1 / 3)
    assert R.ref_precision(ranked, k=2) == pytest.approx(1 / 2)
    assert R.ref_precision(ranked, k=2, denominator="min") == pytest.approx(1 / 2)
    assert R.ref_precision([2, 1, 0], k=3, threshold=2) == pytest.approx(1 / 3)
    # unretrieved docs are ignored by precision
    assert R.ref_precision(ranked, [1, 1], k=5) == pytest.approx(1 / 5)
    assert R.ref_precision([], [1], k=3) == 0.0
    assert R.ref_precision([], [1], k=3, denominator="min") == 0.0
    with pytest.raises(ValueError):
        R.ref_precision(ranked, k=None)


def test_recall_hit_rate_r_precision_rr():
    ranked = [0, 1, 0, 1]
    unret = [1]  # R = 3
    assert R.ref_recall(ranked, unret) == pytest.approx(2 / 3)
    assert R.ref_recall(ranked, unret, k=2) == pytest.approx(1 / 3)
    assert R.ref_recall(ranked, unret, k=1) == 0.0
    assert R.ref_recall([0, 0]) is None
    assert R.ref_hit_rate(ranked, unret, k=1) == 0.0
    assert R.ref_hit_rate(ranked, unret, k=2) == 1.0
    assert R.ref_hit_rate([0, 0], [0]) is None
    # r-precision: ranks <= R = 3 -> one relevant (rank 2)
    assert R.ref_r_precision(ranked, unret) == pytest.approx(1 / 3)
    assert R.ref_r_precision(ranked) == pytest.approx(1 / 2)  # R = 2: ranks 1..2
    assert R.ref_r_precision([1], [1, 1]) == pytest.approx(1 / 3)  # R > n_ret
    assert R.ref_r_precision([0]) is None
    assert R.ref_rr(ranked) == pytest.approx(1 / 2)
    assert R.ref_rr(ranked, k=1) == 0.0
    assert R.ref_rr([0, 0], [1]) == 0.0
    assert R.ref_rr([0, 0]) is None
    assert R.ref_rr([0, 2, 1], threshold=2) == pytest.approx(1 / 2)


def test_average_precision():
    ranked = [1, 0, 1, 1]  # relevant at ranks 1, 3, 4; R = 3
    assert R.ref_ap(ranked, k=2) == pytest.approx((1 / 1) / 3)
    assert R.ref_ap(ranked, k=2, denominator="min") == pytest.approx((1 / 1) / min(3, 2))
    full = (1 / 1 + 2 / 3 + 3 / 4) / 3
    assert R.ref_ap(ranked) == pytest.approx(full)
    assert round(R.ref_ap(ranked), 4) == 0.8056
    assert R.ref_ap(ranked, denominator="min") == pytest.approx(full)
    # an unretrieved relevant doc enlarges R
    assert R.ref_ap(ranked, [1]) == pytest.approx((1 / 1 + 2 / 3 + 3 / 4) / 4)
    assert R.ref_ap([0, 0]) is None
    assert R.ref_ap([0, 0], [1]) == 0.0


def test_err():
    # y = [3, 2, 0]; ranked 2nd, 3rd, 1st -> ranked labels [2, 0, 3]; max_grade = 4
    r1, r2, r3 = (2**2 - 1) / 2**4, (2**0 - 1) / 2**4, (2**3 - 1) / 2**4
    expected = r1 / 1 + (1 - r1) * r2 / 2 + (1 - r1) * (1 - r2) * r3 / 3
    assert R.ref_err([2, 0, 3], k=3, max_grade=4) == pytest.approx(expected, rel=1e-12)
    assert round(R.ref_err([2, 0, 3], k=3, max_grade=4), 5) == 0.30599
    assert R.ref_err([2, 0, 3], k=1, max_grade=4) == pytest.approx(r1)
    assert R.ref_err([2, 0, 3], max_grade=4) == pytest.approx(expected, rel=1e-12)
    v = R.ref_query_value("err", [3, 2, 0], [0.1, 0.9, 0.5], ties="stable", k=3, max_grade=4)
    assert v == pytest.approx(expected, rel=1e-12)
    # the contract rejects ties="average" for ERR
    with pytest.raises(ValueError):
        R.ref_query_value("err", [3, 2, 0], [0.1, 0.9, 0.5], max_grade=4)
    assert R.ref_err([0, 0], max_grade=1) == 0.0


def test_rbp():
    ranked = [1, 0, 1, 2]
    p = 0.8
    assert R.ref_rbp(ranked) == pytest.approx((1 - p) * (1 + p**2 + p**3))
    assert R.ref_rbp(ranked, k=3, p=0.5) == pytest.approx(0.5 * (1 + 0.5**2))
    assert R.ref_rbp(ranked, threshold=2) == pytest.approx((1 - p) * p**3)
    assert R.ref_rbp([0, 0]) == 0.0


def test_uniform_signature():
    """Every per-query function takes (ranked, unretrieved=(), **params), and the
    unretrieved labels count in R and the ideal DCG only."""
    ranked, unretrieved = [1, 0, 2], [1]  # relevant at ranks 1 and 3; R = 3 with, 2 without
    dcg = 1 / L2(2) + 0 / L2(3) + 2 / L2(4)
    r1, r2, r3 = (2**1 - 1) / 2**3, (2**0 - 1) / 2**3, (2**2 - 1) / 2**3
    err = r1 + (1 - r1) * r2 / 2 + (1 - r1) * (1 - r2) * r3 / 3
    # metric: (options, value with the unretrieved label, value without it)
    expected = {
        "cg": ({}, 1 + 0 + 2, 1 + 0 + 2),
        "dcg": ({}, dcg, dcg),
        "ndcg": ({}, dcg / (2 / L2(2) + 1 / L2(3) + 1 / L2(4)), dcg / (2 / L2(2) + 1 / L2(3))),
        "precision": ({"k": 2}, 1 / 2, 1 / 2),
        "recall": ({}, 2 / 3, 2 / 2),
        "hit_rate": ({}, 1.0, 1.0),
        "r_precision": ({}, 2 / 3, 1 / 2),  # relevant in the top R = 3, resp. R = 2
        "map": ({}, (1 / 1 + 2 / 3) / 3, (1 / 1 + 2 / 3) / 2),
        "mrr": ({}, 1 / 1, 1 / 1),
        "err": ({"max_grade": 3}, err, err),
        "rbp": ({}, (1 - 0.8) * (1 + 0.8**2), (1 - 0.8) * (1 + 0.8**2)),
        "gauc": ({}, 1 / 2, 1 / 2),  # the non-relevant rank 2 is below 1 of 2 relevant
    }
    assert set(R.REFERENCE_METRICS) == set(expected)
    for name, func in R.REFERENCE_METRICS.items():
        params, with_unretrieved, without = expected[name]
        assert func(ranked, unretrieved, **params) == pytest.approx(with_unretrieved,
                                                                    rel=1e-12), name
        assert func(ranked, **params) == pytest.approx(without, rel=1e-12), name


def test_average_matches_linearity_of_expectation():
    # P@k under tie averaging = expected number of relevant docs in the top k / k;
    # all 4 docs tied: each rank holds a relevant doc with prob 2/4
    y, s = [1, 0, 1, 0], [0, 0, 0, 0]
    assert R.ref_query_value("precision", y, s, k=1) == pytest.approx(2 / 4)
    # RR: first relevant at rank 1 w.p. 1/2, rank 2 w.p. 1/3, rank 3 w.p. 1/6
    assert R.ref_query_value("mrr", y, s) == pytest.approx(1 / 2 + (1 / 3) / 2 + (1 / 6) / 3)


# --------------------------------------------------------------------------------------
# agreement with scikit-learn (which averages over ties)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [None, 1, 3])
def test_against_sklearn_dcg_ndcg(seed, k):
    rng = np.random.default_rng(seed)
    n_q, n_d = rng.integers(1, 4), rng.integers(2, 6)
    Y = rng.integers(0, 4, size=(n_q, n_d))
    S = rng.integers(0, 3, size=(n_q, n_d))  # integer scores -> many ties
    if seed == 0:
        Y[0] = 0  # an all-irrelevant query: sklearn scores it 0 ("zero" policy)
    dcg, _ = R.ref_mean_2d("dcg", Y, S, k=k, ties="average")
    ndcg, _ = R.ref_mean_2d("ndcg", Y, S, k=k, ties="average")
    assert dcg == pytest.approx(dcg_score(Y, S, k=k), rel=1e-12, abs=1e-15)
    assert ndcg == pytest.approx(ndcg_score(Y, S, k=k), rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------------------
# means and the no_relevant policy
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "policy, expected, expected_per_query",
    [
        ("zero", (1 + 0) / 2, {1: 1.0, 2: 0.0}),
        ("one", (1 + 1) / 2, {1: 1.0, 2: 1.0}),
        ("skip", 1 / 1, {1: 1.0}),
    ],
)
def test_no_relevant_policies(policy, expected, expected_per_query):
    y, s, qid = [1, 0, 0, 0], [0.9, 0.1, 0.5, 0.5], [1, 1, 2, 2]
    mean, per_q = R.ref_mean("ndcg", y, s, qid, no_relevant=policy)
    assert mean == pytest.approx(expected)
    assert per_q == expected_per_query


def test_no_relevant_nan_and_raise():
    y, s, qid = [1, 0, 0, 0], [0.9, 0.1, 0.5, 0.5], [1, 1, 2, 2]
    mean, per_q = R.ref_mean("ndcg", y, s, qid, no_relevant="nan")
    assert math.isnan(mean)
    assert per_q[1] == 1.0 and math.isnan(per_q[2])
    with pytest.raises(ValueError):
        R.ref_mean("ndcg", y, s, qid, no_relevant="raise")
    with pytest.raises(ValueError):
        R.ref_mean("ndcg", y, s, qid, no_relevant="ignore")
    # every query skipped -> NaN
    mean, per_q = R.ref_mean("ndcg", [0, 0], [1, 2], ["a", "b"], no_relevant="skip")
    assert math.isnan(mean) and per_q == {}


def test_mean_2d_and_hashable_qids():
    Y = [[1, 0], [0, 0]]
    S = [[0.9, 0.1], [0.5, 0.5]]
    assert R.ref_mean_2d("ndcg", Y, S)[0] == pytest.approx(0.5)
    assert R.ref_mean_2d("ndcg", Y, S, no_relevant="skip") == (1.0, {0: 1.0})
    # qids: any hashable, rows of one query need not be contiguous
    mean, per_q = R.ref_mean(
        "mrr", [0, 0, 1, 1], [3, 2, 1, 0], [("x", 1), "y", ("x", 1), "y"]
    )
    assert per_q == {("x", 1): pytest.approx(1 / 2), "y": pytest.approx(1 / 2)}
    assert mean == pytest.approx(1 / 2)
    # a 2-D retrieved mask is flattened like the labels
    mean, per_q = R.ref_mean_2d("recall", [[1, 1, 0]], [[3, 2, 1]],
                                retrieved=[[True, False, True]])
    assert per_q == {0: pytest.approx(1 / 2)}
    # queries whose docs are all unretrieved: nothing ranked
    mean, per_q = R.ref_mean("recall", [1, 1], [0, 0], ["q", "q"], retrieved=[False, False])
    assert per_q == {"q": 0.0}
