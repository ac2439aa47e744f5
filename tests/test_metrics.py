"""Table-driven tests of every metric of skrank.METRICS against the oracle and sklearn.

Every test loops over ``skrank.METRICS``: a metric added to the table gets them all.
"""

import itertools
import math
import warnings

import numpy as np
import pytest
import sklearn.metrics
from sklearn.exceptions import UndefinedMetricWarning

import skrank

try:  # works whether or not tests/ is a package
    from tests.conftest import (AVERAGE_SPECS, SPECS, R, assert_close, assert_per_query_equal,
                                call_metric, make_queries, oracle, param_grid, seed_of,
                                spec_id, spec_ties, takes_dcg_gain, valid_params)
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import (AVERAGE_SPECS, SPECS, R, assert_close, assert_per_query_equal,
                          call_metric, make_queries, oracle, param_grid, seed_of, spec_id,
                          spec_ties, takes_dcg_gain, valid_params)

L2 = np.log2
QID_KINDS = ("int", "str", "mixed")


def _by_name(name):
    return skrank.METRICS[name]


# --------------------------------------------------------------------------------------
# 1. every metric has an oracle
# --------------------------------------------------------------------------------------


def test_every_metric_has_an_oracle():
    # the diversity and beyond-accuracy declarations (issue 29): their oracles live beside
    # their tests, tests/test_diversity.py and tests/test_beyond.py
    import importlib.util
    from pathlib import Path

    family = {}
    for name in ("diversity", "beyond"):
        path = Path(__file__).parent / f"test_{name}.py"
        spec = importlib.util.spec_from_file_location(f"_oracles_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        family[name] = set(module.ORACLES)
    for name, spec in skrank.METRICS.items():
        if spec.family in family:
            assert name in family[spec.family], f"{name}: no oracle in tests/test_{spec.family}.py"
    missing = sorted(name for name, spec in skrank.METRICS.items() if spec.family not in family
                     and name not in R.REFERENCE_METRICS
                     and name not in R.JUDGED_REFERENCE_METRICS)   # those reading judged=
    assert not missing, f"metrics without an oracle in tests/_reference.py: {missing}"


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_spec_is_consistent(spec):
    assert skrank.METRICS[spec.name] is spec
    assert spec.k in ("optional", "required", "none")
    assert ("k" in spec.parameters) == (spec.k != "none")
    assert set(spec.ties) <= {"average", "stable", "pessimistic", "optimistic"}
    assert spec.labels in ("any", "nonnegative", "graded")
    if spec.bounds is not None:
        assert spec.bounds[0] <= spec.bounds[1]
    for variant in spec.variants.values():
        assert set(variant) <= set(spec.parameters)


# --------------------------------------------------------------------------------------
# 2. agreement with the oracle: every metric x tie policy x option combination
# --------------------------------------------------------------------------------------


def _oracle_cases():
    cases = []
    for spec in SPECS:
        for i, params in enumerate(param_grid(spec)):
            for ties in spec.ties:
                for unret in (0.0, 0.3):
                    pid = ",".join(f"{k}={getattr(v, '__name__', v)}" for k, v in params.items())
                    cases.append(pytest.param(
                        spec, ties, params, QID_KINDS[i % 3], unret,
                        id=f"{spec.name}-{ties}-{pid or 'defaults'}-{'unret' if unret else 'all'}",
                    ))
    return cases


@pytest.mark.parametrize("spec, ties, params, qid_kind, unretrieved", _oracle_cases())
def test_oracle_agreement(spec, ties, params, qid_kind, unretrieved):
    rng = np.random.default_rng(seed_of(spec.name, ties, sorted(map(str, params.items())),
                                        unretrieved))
    y, s, qid, retrieved = make_queries(rng, n_queries=8, max_size=7, qid_kind=qid_kind,
                                        unretrieved=unretrieved)
    params = valid_params(spec, y, ties=ties, **params)
    try:
        expected, expected_per_q = oracle(spec, y, s, qid, retrieved, **params)
    except ValueError:  # no_relevant="raise" with an undefined query
        assert params.get("no_relevant") == "raise"
        with pytest.raises(ValueError, match="no relevant document"):
            call_metric(spec, y, s, qid, retrieved, **params)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        mean, per_q = call_metric(spec, y, s, qid, retrieved, **params)
    assert_close(mean, expected, what="mean")
    assert_per_query_equal(per_q, expected_per_q)


@pytest.mark.parametrize("spec, ties", spec_ties())
def test_oracle_agreement_real_valued_labels(spec, ties):
    """Non-integer labels (and negative ones where the metric allows any label)."""
    rng = np.random.default_rng(seed_of("real-labels", spec.name, ties))
    y, s, qid, retrieved = make_queries(rng, n_queries=10, max_size=6, unretrieved=0.2)
    y = np.round(y * rng.random(y.size) * 1.5, 2)
    if spec.labels == "any":
        y = y - 0.75
    for extra in ({}, {"threshold": 1.5}, {"threshold": 0.25}):
        if not set(extra) <= set(spec.parameters):
            continue
        params = valid_params(spec, y, ties=ties, **extra)
        if "no_relevant" in params:
            params["no_relevant"] = "nan"
        expected, expected_per_q = oracle(spec, y, s, qid, retrieved, **params)
        mean, per_q = call_metric(spec, y, s, qid, retrieved, **params)
        assert_close(mean, expected, what=f"mean {extra}")
        assert_per_query_equal(per_q, expected_per_q)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.labels == "graded"], ids=spec_id)
def test_graded_metric_top_grade_on_a_large_scale(spec):
    """A 0..100 grade scale: the top grade stops the user with probability ~1 in ERR;
    later queries must still get their (tiny, finite) values."""
    y = np.array([100, 0, 50, 100, 1, 2, 0], dtype=float)
    s = np.array([3, 2, 1, 2, 1, 0, 5], dtype=float)
    qid = np.array([0, 0, 1, 1, 2, 2, 2])
    params = valid_params(spec, y, max_grade=100)
    expected, expected_per_q = oracle(spec, y, s, qid, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, per_q = call_metric(spec, y, s, qid, **params)
    assert_per_query_equal(per_q, expected_per_q)
    assert_close(mean, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        call_metric(spec, y, s, qid, **params)  # no divide-by-zero / invalid-value warning


# --------------------------------------------------------------------------------------
# 3. scikit-learn parity (2-D input) and 1-D + qid == 2-D
# --------------------------------------------------------------------------------------


def _sklearn_input(seed, ties):
    rng = np.random.default_rng(seed)
    n_q, n_d = 6, 8
    Y = rng.integers(0, 4, size=(n_q, n_d))
    S = rng.integers(0, 3, size=(n_q, n_d)).astype(float) if ties else rng.random((n_q, n_d))
    Y[0] = 0  # all-zero labels: nDCG 0 for sklearn, "zero" policy here
    Y[3] = 0
    return Y, S


@pytest.mark.parametrize("ties", [False, True], ids=["floats", "integer_ties"])
@pytest.mark.parametrize("k", [None, 1, 3, 10])
@pytest.mark.parametrize("seed", range(3))
def test_sklearn_parity(seed, k, ties):
    Y, S = _sklearn_input(seed, ties)
    kw = dict(ties="average", gain="linear")
    assert_close(skrank.ndcg_score(Y, S, k=k, no_relevant="zero", **kw),
                 sklearn.metrics.ndcg_score(Y, S, k=k), what="ndcg")
    assert_close(skrank.dcg_score(Y, S, k=k, **kw), sklearn.metrics.dcg_score(Y, S, k=k),
                 what="dcg")
    # defaults are sklearn's
    assert_close(skrank.ndcg_score(Y, S, k=k), sklearn.metrics.ndcg_score(Y, S, k=k))
    assert_close(skrank.dcg_score(Y, S, k=k), sklearn.metrics.dcg_score(Y, S, k=k))
    # per-query values: each row alone
    per_q = skrank.per_query_scores("ndcg", Y, S, k=k)
    assert per_q.qid.tolist() == list(range(Y.shape[0]))
    for row in range(Y.shape[0]):
        assert_close(per_q.score[row], sklearn.metrics.ndcg_score(Y[[row]], S[[row]], k=k))


@pytest.mark.parametrize("ties", [False, True], ids=["floats", "integer_ties"])
@pytest.mark.parametrize("k", [1, 10, 50, 400])
def test_sklearn_parity_long_rows(k, ties):
    """Rows of 700 documents: the cutoff's rows are selected, not sorted (in chunks of
    256 cells for small k), with the tie group at rank k averaged as scikit-learn does."""
    rng = np.random.default_rng(seed_of("long-rows", k, ties))
    Y = rng.integers(0, 5, size=(12, 700))
    S = rng.integers(0, 40, size=Y.shape).astype(float) if ties else rng.random(Y.shape)
    assert_close(skrank.ndcg_score(Y, S, k=k), sklearn.metrics.ndcg_score(Y, S, k=k),
                 rel=1e-10, what="2-D ndcg")
    # The same rows as ragged 1-D queries: about a tenth of each row's documents dropped.
    keep = rng.random(Y.shape) < 0.9
    qid = np.repeat(np.arange(Y.shape[0]), keep.sum(axis=1))
    expected = np.mean([sklearn.metrics.ndcg_score(Y[[q]][:, keep[q]], S[[q]][:, keep[q]], k=k)
                        for q in range(Y.shape[0])])
    assert_close(skrank.ndcg_score(Y[keep], S[keep], qid=qid, k=k), expected, rel=1e-10,
                 what="ragged 1-D ndcg")


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("k", [None, 3])
def test_flat_equals_2d(spec, k):
    rng = np.random.default_rng(seed_of("flat2d", spec.name, k))
    Y = rng.integers(0, 4, size=(5, 6)).astype(float)
    S = rng.integers(0, 3, size=(5, 6)).astype(float)
    Y[1] = 0
    params = valid_params(spec, Y, **({"k": k} if spec.k != "none" else {}))
    ties = [t for t in spec.ties if t != "stable"]  # rows get shuffled below
    n_q, n_d = Y.shape
    qid = np.repeat(np.arange(n_q), n_d)
    perm = rng.permutation(qid.size)
    for t in ties:
        mean_2d, pq_2d = call_metric(spec, Y, S, ties=t, **params)
        mean_1d, pq_1d = call_metric(spec, Y.ravel()[perm], S.ravel()[perm], qid[perm],
                                     ties=t, **params)
        assert_close(mean_1d, mean_2d)
        assert pq_1d.qid.tolist() == pq_2d.qid.tolist() == list(range(n_q))
        np.testing.assert_allclose(pq_1d.score, pq_2d.score, rtol=1e-12, atol=1e-12)
        # and the 2-D oracle
        expected, _ = R.ref_mean_2d(spec.name, Y, S, ties=t, **params)
        assert_close(mean_2d, expected)
    # stable: 1-D rows in the 2-D row order
    if "stable" in spec.ties:
        assert_close(call_metric(spec, Y.ravel(), S.ravel(), qid, ties="stable", **params)[0],
                     call_metric(spec, Y, S, ties="stable", **params)[0])


# --------------------------------------------------------------------------------------
# 4. worked examples, as formulas
# --------------------------------------------------------------------------------------


def test_worked_example_graded():
    ranked = [3, 2, 3, 0, 1, 2]
    y_score = [6, 5, 4, 3, 2, 1]
    qid = [0] * 6
    dcg = 3 / L2(2) + 2 / L2(3) + 3 / L2(4) + 0 / L2(5) + 1 / L2(6) + 2 / L2(7)
    idcg = 3 / L2(2) + 3 / L2(3) + 2 / L2(4) + 2 / L2(5) + 1 / L2(6) + 0 / L2(7)
    assert_close(skrank.dcg_score(ranked, y_score, qid=qid), dcg)
    assert_close(skrank.dcg_score([3, 3, 2, 2, 1, 0], y_score, qid=qid), idcg)
    assert_close(skrank.ndcg_score(ranked, y_score, qid=qid), dcg / idcg)
    assert round(dcg, 3) == 6.861 and round(idcg, 3) == 7.141 and round(dcg / idcg, 3) == 0.961
    dcg_exp = sum((2.0 ** r - 1) / L2(i + 2) for i, r in enumerate(ranked))
    assert_close(skrank.dcg_score(ranked, y_score, qid=qid, gain="exponential"), dcg_exp)
    assert round(dcg_exp, 3) == 13.848
    assert_close(skrank.cg_score(ranked, y_score, qid=qid, k=2), 3 + 2)


def test_worked_example_binary():
    ranked = [1, 1, 0, 0, 0, 1, 1, 0, 1, 0]
    y_score = list(range(10, 0, -1))
    qid = ["q"] * 10
    dcg = 1 / L2(2) + 1 / L2(3) + 1 / L2(7) + 1 / L2(8) + 1 / L2(10)
    idcg = 1 / L2(2) + 1 / L2(3) + 1 / L2(4) + 1 / L2(5) + 1 / L2(6)
    assert_close(skrank.dcg_score(ranked, y_score, qid=qid), dcg)
    assert_close(skrank.ndcg_score(ranked, y_score, qid=qid), dcg / idcg)
    assert round(dcg, 4) == 2.6215 and round(idcg, 4) == 2.9485
    assert round(dcg / idcg, 4) == 0.8891


def test_worked_example_gain():
    y, s, qid = [3, 2, 0], [0.1, 0.9, 0.5], [0, 0, 0]  # ranked labels: 2, 0, 3
    lin = (2 / L2(2) + 0 / L2(3) + 3 / L2(4)) / (3 / L2(2) + 2 / L2(3) + 0 / L2(4))
    exp = (3 / L2(2) + 0 / L2(3) + 7 / L2(4)) / (7 / L2(2) + 3 / L2(3) + 0 / L2(4))
    assert_close(skrank.ndcg_score(y, s, qid=qid), lin)
    assert_close(skrank.ndcg_score(y, s, qid=qid, gain="exponential"), exp)
    assert_close(skrank.ndcg_score(y, s, qid=qid, gain=lambda r: 2.0 ** r - 1), exp)
    assert round(lin, 4) == 0.8212 and round(exp, 4) == 0.7309
    # the docstring's two queries
    y2, s2, q2 = [3, 2, 0, 1, 0, 1], [0.1, 0.9, 0.5, 0.8, 0.3, 0.2], list("aaabbb")
    b = (1 / L2(2) + 1 / L2(4)) / (1 / L2(2) + 1 / L2(3))
    assert_close(skrank.ndcg_score(y2, s2, qid=q2), (lin + b) / 2)
    assert round((lin + b) / 2, 4) == 0.8705
    assert_close(skrank.ndcg_score(y2, s2, qid=q2, k=1, gain="exponential"), (3 / 7 + 1) / 2)
    assert_close(skrank.ndcg_score([[3, 2, 0], [1, 0, 1]], [[.1, .9, .5], [.8, .3, .2]]),
                 (lin + b) / 2)


@pytest.mark.parametrize("ties, expected", [
    ("average", 0.5), ("stable", 0.0), ("pessimistic", 0.0), ("optimistic", 1.0),
])
def test_worked_example_ties(ties, expected):
    y, s = [0, 1, 0], [0.5, 0.5, 0.1]
    assert_close(skrank.ndcg_score(y, s, qid=[7] * 3, k=1, ties=ties), expected)


@pytest.mark.parametrize("policy, expected, per_query", [
    ("zero", (1 + 0) / 2, {1: 1.0, 2: 0.0}),
    ("one", (1 + 1) / 2, {1: 1.0, 2: 1.0}),
    ("skip", 1 / 1, {1: 1.0}),
    ("nan", math.nan, {1: 1.0, 2: math.nan}),
])
def test_worked_example_no_relevant(policy, expected, per_query):
    y, s, qid = [1, 0, 0, 0], [0.9, 0.1, 0.5, 0.5], [1, 1, 2, 2]
    assert_close(skrank.ndcg_score(y, s, qid=qid, no_relevant=policy), expected)
    assert_per_query_equal(skrank.per_query_scores("ndcg", y, s, qid=qid, no_relevant=policy),
                           per_query)


def test_worked_example_no_relevant_raise():
    y, s, qid = [1, 0, 0, 0], [0.9, 0.1, 0.5, 0.5], [1, 1, 2, 2]
    with pytest.raises(ValueError, match=r"ndcg_score: 1 query has no relevant document.*qid 2"):
        skrank.ndcg_score(y, s, qid=qid, no_relevant="raise")


def test_worked_example_precision_map_err_others():
    y, s, q = [1, 0, 0], [0.9, 0.5, 0.1], [0, 0, 0]
    assert_close(skrank.precision_at_k_score(y, s, qid=q, k=5), 1 / 5)
    assert_close(skrank.precision_at_k_score(y, s, qid=q, k=5, denominator="min"), 1 / 3)

    y, s, q = [1, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0] * 4  # relevant at ranks 1, 3, 4
    assert_close(skrank.map_score(y, s, qid=q, k=2), (1 / 1) / 3)
    assert_close(skrank.map_score(y, s, qid=q, k=2, denominator="min"), (1 / 1) / 2)
    full = (1 / 1 + 2 / 3 + 3 / 4) / 3
    assert_close(skrank.map_score(y, s, qid=q), full)
    assert round(full, 4) == 0.8056

    # ERR@3: ranked labels 2, 0, 3 with max_grade 4
    r1, r2, r3 = (2**2 - 1) / 2**4, (2**0 - 1) / 2**4, (2**3 - 1) / 2**4
    err = r1 / 1 + (1 - r1) * r2 / 2 + (1 - r1) * (1 - r2) * r3 / 3
    assert_close(skrank.err_score([3, 2, 0], [0.1, 0.9, 0.5], qid=[0] * 3, k=3, max_grade=4),
                 err)
    assert round(err, 5) == 0.30599

    # the other docstring examples
    assert_close(skrank.recall_at_k_score([1, 0, 1, 1], [.9, .8, .7, .1], qid=[0] * 4, k=2),
                 1 / 3)
    assert_close(skrank.hit_rate_score([0, 1, 0, 0], [.9, .8, .7, .1], qid=[0] * 4, k=1), 0.0)
    assert_close(skrank.hit_rate_score([0, 1, 0, 0], [.9, .9, .7, .1], qid=[0] * 4, k=1), 1 / 2)
    assert_close(skrank.r_precision_score([1, 0, 1, 0], [.9, .8, .7, .1], qid=[0] * 4), 1 / 2)
    assert_close(skrank.mrr_score([0, 0, 1, 1, 0, 0], [3, 2, 1, 3, 2, 1], qid=[0, 0, 0, 1, 1, 1]),
                 (1 / 3 + 1) / 2)
    assert_close(skrank.rbp_score([1, 0, 1], [3, 2, 1], qid=[0] * 3, p=0.5),
                 (1 - 0.5) * (1 + 0.5**2))
    assert_close(skrank.cg_score([3, 2, 0, 1], [.1, .9, .5, .3], qid=[1] * 4, k=2), 2 + 0)


def test_worked_example_unretrieved_relevant_doc():
    # retrieved a=2 (.9), c=1 (.5), b=0 (.5), d=0 (.1); e=3 judged but not retrieved
    y = [2, 1, 0, 0, 3]
    s = [0.9, 0.5, 0.5, 0.1, np.nan]  # the unretrieved score is ignored, may be NaN
    retrieved = np.array([True, True, True, True, False])
    dcg = 2 / L2(2) + 1 / L2(3)  # ranked 2, 1, 0, 0 (stable keeps c before b)
    idcg = 3 / L2(2) + 2 / L2(3) + 1 / L2(4)  # ideal over all labels 3, 2, 1, 0, 0
    got = skrank.ndcg_score(y, s, qid=["q"] * 5, ties="stable", retrieved=retrieved)
    assert_close(got, dcg / idcg)
    assert round(dcg / idcg, 4) == 0.5525
    # without e, ties averaged: (2, 0, 1, 0) and (2, 1, 0, 0) with probability 1/2 each
    y4, s4 = [2, 0, 1, 0], [0.9, 0.5, 0.5, 0.1]
    avg = (0.5 * (2 / L2(2) + 1 / L2(4)) + 0.5 * (2 / L2(2) + 1 / L2(3))) / (2 / L2(2) + 1 / L2(3))
    assert_close(skrank.ndcg_score(y4, s4, qid=["q"] * 4, ties="average"), avg)
    assert_close(avg, sklearn.metrics.ndcg_score([y4], [s4]))
    assert round(avg, 4) == 0.9751


# --------------------------------------------------------------------------------------
# 5. exact tie averaging == brute-force enumeration
# --------------------------------------------------------------------------------------


def _enumeration_cases():
    return [pytest.param(spec, k, id=f"{spec.name}-k={k}")
            for spec in AVERAGE_SPECS
            for k in ([None] if spec.k == "none" else [None, 1, 2, 4])
            if not (spec.k == "required" and k is None)]


@pytest.mark.parametrize("spec, k", _enumeration_cases())
def test_tie_average_equals_enumeration(spec, k):
    rng = np.random.default_rng(seed_of("enum", spec.name, k))
    y, s, qid, _ = make_queries(rng, n_queries=60, max_size=6, n_labels=3, n_scores=3,
                                n_irrelevant=3)
    params = valid_params(spec, y, ties="average", **({} if spec.k == "none" else {"k": k}))
    expected, expected_per_q = oracle(spec, y, s, qid, **params)
    mean, per_q = call_metric(spec, y, s, qid, **params)
    assert_close(mean, expected)
    assert_per_query_equal(per_q, expected_per_q)


@pytest.mark.parametrize("spec", [s for s in SPECS if "average" not in s.ties], ids=spec_id)
def test_average_rejected_where_unsupported(spec):
    y, s = [2, 1, 0], [0.5, 0.5, 0.1]
    params = valid_params(spec, y, ties="average")
    match = (rf"{spec.function.__name__}: ties='average' is not supported: {spec.name} has no "
             r"exact closed-form average")
    with pytest.raises(ValueError, match=match):
        spec.function(y, s, qid=[0] * 3, **params)
    with pytest.raises(ValueError, match=match):
        skrank.per_query_scores(spec.name, y, s, qid=[0] * 3, **params)


def test_err_rejects_average():
    assert "average" not in skrank.METRICS["err"].ties
    with pytest.raises(ValueError, match=r"err_score: ties='average' is not supported.*"
                                         r"Use one of 'pessimistic', 'optimistic', 'stable'"):
        skrank.err_score([3, 2, 0], [1, 1, 0], qid=[0] * 3, max_grade=3, ties="average")


# --------------------------------------------------------------------------------------
# 6. one large query among many small ones
# --------------------------------------------------------------------------------------


def _groupwise_average(metric, labels, scores, k):
    """Exact tie average by enumerating each tie group on its own.

    Valid because (for nDCG and AP) the number of relevant documents and the gain
    above a tie group do not depend on how earlier groups are ordered, so the
    expectation is a sum over groups of per-group expectations.
    """
    order = sorted(range(len(labels)), key=lambda i: -scores[i])
    k = len(labels) if k is None else k
    total, start, rel_above = 0.0, 0, 0
    for _, group in itertools.groupby(order, key=lambda i: scores[i]):
        group_labels = [labels[i] for i in group]
        perms = list(itertools.permutations(group_labels))
        acc = 0.0
        for perm in perms:
            hits = rel_above
            for j, lab in enumerate(perm):
                pos = start + j  # 0-based rank
                if metric == "ndcg" and pos < k:
                    acc += lab / L2(pos + 2)
                if metric == "map" and lab >= 1:
                    hits += 1
                    if pos < k:
                        acc += hits / (pos + 1)
        total += acc / len(perms)
        start += len(group_labels)
        rel_above += sum(lab >= 1 for lab in group_labels)
    if metric == "ndcg":
        ideal = sorted(labels, reverse=True)
        return total / sum(g / L2(i + 2) for i, g in enumerate(ideal[:k]))
    return total / sum(lab >= 1 for lab in labels)


def _big_and_small(rng, *, big_scores):
    n_big = 5000
    y_big = rng.integers(0, 4, size=n_big).astype(float)
    if big_scores == "floats":
        s_big = rng.permutation(n_big) / n_big + 0.5 * rng.random()  # distinct
    elif big_scores == "small_groups":  # tie groups of 1..5 documents
        sizes = rng.integers(1, 6, size=n_big)
        sizes = sizes[np.cumsum(sizes) <= n_big]
        sizes = np.append(sizes, n_big - sizes.sum())
        sizes = sizes[sizes > 0]
        s_big = rng.permutation(np.repeat(np.arange(sizes.size), sizes)).astype(float)
    else:  # many ties
        s_big = rng.integers(0, 50, size=n_big).astype(float)
    y, s, qid, _ = make_queries(rng, n_queries=200, max_size=5, n_scores=4)
    y = np.concatenate([y, y_big])
    s = np.concatenate([s, s_big])
    qid = np.concatenate([qid, np.full(n_big, -1)])
    perm = rng.permutation(y.size)
    return y[perm], s[perm], qid[perm], (qid[perm] == -1)


@pytest.mark.parametrize("metric", ["ndcg", "map"])
@pytest.mark.parametrize("ties, big_scores", [
    ("stable", "integers"), ("average", "floats"), ("average", "small_groups"),
    ("pessimistic", "integers"), ("optimistic", "integers"),
])
@pytest.mark.parametrize("k", [None, 10])
def test_large_query_among_small_ones(metric, ties, big_scores, k):
    spec = _by_name(metric)
    rng = np.random.default_rng(seed_of("big", metric, ties, big_scores, k))
    y, s, qid, is_big = _big_and_small(rng, big_scores=big_scores)
    per_q = skrank.per_query_scores(metric, y, s, qid=qid, ties=ties, k=k)
    got = dict(zip(per_q.qid.tolist(), per_q.score.tolist()))
    yb, sb = y[is_big].tolist(), s[is_big].tolist()
    if big_scores == "small_groups":
        expected_big = _groupwise_average(metric, yb, sb, k)
    else:
        expected_big = R.ref_query_value(metric, yb, sb, ties=ties, k=k)
    assert_close(got[-1], expected_big, what="large query")
    # the small queries, against the oracle
    small = ~is_big
    _, expected_small = oracle(spec, y[small], s[small], qid[small], ties=ties, k=k)
    del got[-1]
    assert got == pytest.approx(expected_small, rel=1e-12, abs=1e-12)
    assert_close(spec.function(y, s, qid=qid, ties=ties, k=k),
                 (sum(expected_small.values()) + expected_big) / (len(expected_small) + 1))


def test_groupwise_helper_matches_oracle():
    """The independent closed form used above agrees with the oracle where both run."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        y = rng.integers(0, 3, size=8).tolist()
        s = rng.integers(0, 4, size=8).tolist()
        if sum(y) == 0:
            continue
        for metric in ("ndcg", "map"):
            for k in (None, 3):
                assert_close(_groupwise_average(metric, y, s, k),
                             R.ref_query_value(metric, y, s, ties="average", k=k))


# --------------------------------------------------------------------------------------
# 6b. long queries ranked only as deep as the cutoff
# --------------------------------------------------------------------------------------

CUTOFF_SPECS = [spec for spec in SPECS if spec.k != "none"]


@pytest.mark.parametrize("spec, ties", spec_ties(CUTOFF_SPECS))
@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("unretrieved", [0.0, 0.3])
def test_oracle_agreement_beyond_the_cutoff(spec, ties, k, unretrieved):
    """Queries longer than 2k are ranked only k deep (plus the tie group at rank k):
    every metric still equals the oracle's full ranking, on many ties at the cutoff."""
    rng = np.random.default_rng(seed_of("deep", spec.name, ties, k, unretrieved))
    y, s, qid, retrieved = make_queries(rng, n_queries=12, max_size=40, n_scores=6,
                                        unretrieved=unretrieved)
    if ties == "average":  # the oracle enumerates orderings: one tie group at the cutoff
        s = _tie_group_at_rank(rng, s, qid, k - 1, retrieved)
    _, counts = np.unique(qid[retrieved] if retrieved is not None else qid, return_counts=True)
    assert counts.max() > 2 * k  # the selection path is taken
    params = valid_params(spec, y, ties=ties, k=k)
    expected, expected_per_q = oracle(spec, y, s, qid, retrieved, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        mean, per_q = call_metric(spec, y, s, qid, retrieved, **params)
    assert_close(mean, expected, what="mean")
    assert_per_query_equal(per_q, expected_per_q)


def _tie_group_at_rank(rng, scores, qid, rank, retrieved):
    """Distinct scores, except one tie group of 1-5 documents covering ``rank`` in each
    query (so that exact averaging is enumerable yet a group straddles the cutoff)."""
    scores = rng.permutation(scores.size).astype(float)
    keep = np.ones(scores.size, bool) if retrieved is None else retrieved
    for q in np.unique(qid):
        rows = np.flatnonzero((qid == q) & keep)
        by_rank = rows[np.argsort(-scores[rows])]
        first = int(rng.integers(max(0, rank - 2), rank + 1))
        group = by_rank[first:first + int(rng.integers(1, 6))]
        scores[group] = scores[by_rank[first]] if group.size else 0.0
    if retrieved is not None:
        scores[~retrieved] = np.nan
    return scores


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_strided_input_equals_contiguous(spec):
    """Columns of a 2-D array (strided views) give the values of their copies: blocks
    are gathered through a window view built from the input's own strides."""
    rng = np.random.default_rng(seed_of("strided", spec.name))
    sizes = rng.integers(1, 60, size=40)
    qid = np.repeat(np.arange(sizes.size), sizes)
    table = np.column_stack([rng.integers(0, 3, qid.size), rng.integers(0, 5, qid.size),
                             rng.random(qid.size)]).astype(float)
    y, s = table[:, 0], table[:, 1]
    assert not y.flags.c_contiguous
    for k in ([None, 2] if spec.k != "none" else [None]):
        params = valid_params(spec, y, **({} if spec.k == "none" else {"k": k}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            got = spec.function(y, s, qid=qid, **params)
            expected = spec.function(y.copy(), s.copy(), qid=qid, **params)
        assert_close(got, expected, what=f"{spec.name} k={k}")


@pytest.mark.parametrize("stable", [True, False])
@pytest.mark.parametrize("layout", ["ragged", "equal sizes", "ragged, ranked runs",
                                    "ragged, ascending runs"])
def test_top_order_against_a_loop(stable, layout):
    """segmented_top_order keeps, per long segment, a prefix of its ranking holding every
    row that scores at least its depth-th largest score, never cutting a tie group, and
    whole short segments, in descending order: a prefix of the stable sort with
    ``stable=True``.  Segments of one size keep exactly those rows; segments of uneven
    sizes keep the rows reaching a lower bound of that score, at most 4 * depth rows
    (or exactly those) each, also when a segment's rows come sorted (a loose bound)."""
    from skrank._engine.segments import segmented_top_order

    rng = np.random.default_rng(11)
    if layout == "equal sizes":
        sizes = np.full(40, 57)
    else:
        sizes = np.concatenate([rng.integers(0, 60, size=300), [0, 1, 5000]])
        rng.shuffle(sizes)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.intp)
    n = offsets[-1]
    # Ties at the cutoff in every segment, in some segments, in none.
    for values in (rng.integers(0, 8, size=n) * 1.0, rng.integers(0, 150, size=n) * 1.0,
                   rng.random(n)):
        if layout.endswith("runs"):  # two segments in three in order already
            sign = 1 if layout.endswith("ascending runs") else -1
            for q in range(sizes.size):
                if q % 3 != 2:
                    segment = values[offsets[q]:offsets[q + 1]]
                    segment[...] = sign * np.sort(sign * segment)
        for depth in (1, 3, 10, 100):
            top = segmented_top_order(values, offsets, depth, stable=stable)
            if top is None:  # nothing to select from
                assert sizes.max() <= 2 * depth
                continue
            order, kept_offsets = top
            for q in range(sizes.size):
                segment = values[offsets[q]:offsets[q + 1]]
                full = offsets[q] + np.argsort(-segment, kind="stable")
                got = order[kept_offsets[q]:kept_offsets[q + 1]]
                n_kept = n_least = segment.size
                if segment.size > 2 * depth:
                    n_least = int(np.count_nonzero(segment >= values[full[depth - 1]]))
                    n_kept = got.size
                    assert n_least <= n_kept <= max(n_least, 4 * depth)
                    if layout == "equal sizes":
                        assert n_kept == n_least
                    if n_kept < segment.size:  # no tie group cut
                        assert values[full[n_kept - 1]] > values[full[n_kept]]
                if stable:
                    np.testing.assert_array_equal(got, full[:n_kept])
                else:
                    assert sorted(got) == sorted(full[:n_kept])
                    assert np.all(np.diff(values[got]) <= 0)
    assert segmented_top_order(values, offsets, 5000, stable=stable) is None  # nothing to select


@pytest.mark.parametrize("layout", ["ragged", "equal sizes", "ragged, ranked runs"])
def test_kth_floor_is_at_most_the_kth_largest(layout):
    """kth_floor: -inf for segments of at most 2k values; else at most the k-th largest
    value, and that value itself for segments of one size or ranked runs."""
    from skrank._engine.segments import kth_floor

    rng = np.random.default_rng(8)
    sizes = np.full(30, 41) if layout == "equal sizes" else rng.integers(0, 200, size=200)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.intp)
    for values in (rng.random(offsets[-1]), rng.integers(0, 6, size=offsets[-1]) * 1.0):
        if layout.endswith("runs"):
            for q in range(sizes.size):
                values[offsets[q]:offsets[q + 1]] = -np.sort(-values[offsets[q]:offsets[q + 1]])
        for k in (1, 5, 20):
            floor = kth_floor(values, offsets, k)
            for q in range(sizes.size):
                segment = values[offsets[q]:offsets[q + 1]]
                if segment.size <= 2 * k:
                    assert floor[q] == -np.inf
                    continue
                kth = np.sort(segment)[-k]
                assert floor[q] <= kth
                if layout != "ragged":
                    assert floor[q] == kth


@pytest.mark.parametrize("order, ranked, exact", [
    ("random", False, False), ("ranked", True, False), ("ascending", False, True)])
def test_top_order_of_uneven_segments_takes_the_bound_its_rows_need(monkeypatch, order, ranked,
                                                                   exact):
    """Segments of uneven sizes: rows in no order take the slice-maxima bound alone;
    ranked rows (descending) are found so and read at their depth-th row; rows whose
    bound keeps too many (ascending) take their exact depth-th largest value."""
    from skrank._engine import ranking as R
    from skrank._engine import segments as S

    rng = np.random.default_rng(3)
    sizes = rng.integers(30, 300, size=50)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.intp)
    values = rng.random(offsets[-1])
    if order != "random":
        for q in range(sizes.size):
            segment = values[offsets[q]:offsets[q + 1]]
            segment[...] = np.sort(segment)[::-1 if order == "ranked" else 1]
    calls = {"ranked": [], "exact": []}
    found_ranked, exact_floor = S._ranked_segments, S.kth_largest_floor
    monkeypatch.setattr(S, "_ranked_segments",
                        lambda *a: calls["ranked"].append(found_ranked(*a)) or calls["ranked"][-1])
    monkeypatch.setattr(S, "kth_largest_floor",
                        lambda *a, **kw: calls["exact"].append(1) or exact_floor(*a, **kw))
    order_, kept_offsets = S.segmented_top_order(values, offsets, 5, stable=True)
    found = calls["ranked"][0]
    assert (found is not None and bool(found.all())) == ranked
    assert bool(calls["exact"]) == exact
    assert np.all(np.diff(kept_offsets) >= 5) and np.all(np.diff(kept_offsets) <= 20)
    for q in range(sizes.size):
        want = offsets[q] + np.argsort(-values[offsets[q]:offsets[q + 1]], kind="stable")
        got = order_[kept_offsets[q]:kept_offsets[q + 1]]
        np.testing.assert_array_equal(got, want[:got.size])


@pytest.mark.parametrize("ties", ["average", "stable"])
def test_evaluate_shares_one_ranking_deep_enough_for_every_metric(ties):
    """evaluate() ranks as deep as its deepest cutoff (all rows when a metric has none);
    each value and the counts equal separate calls of the metric functions."""
    rng = np.random.default_rng(5)
    y, s, qid, retrieved = make_queries(rng, n_queries=30, max_size=60, n_scores=5,
                                        unretrieved=0.2)
    # Cutoffs only; a metric read to the end; first relevant documents at two
    # thresholds with a cutoff; first relevant documents only.
    for metrics in (["ndcg@2", "precision@7", "mrr@3"], ["ndcg@2", "map", "recall@5"],
                    ["mrr", ("hit_rate", {"threshold": 2}), "precision@4"], ["mrr", "hit_rate"]):
        res = skrank.evaluate(y, s, qid=qid, retrieved=retrieved, metrics=metrics, ties=ties)
        for metric, label in zip(metrics, res.per_query):
            name, params = metric if isinstance(metric, tuple) else (metric, {})
            stem, k = name.split("@") if "@" in name else (name, None)
            per_q = skrank.per_query_scores(stem, y, s, qid=qid, retrieved=retrieved,
                                            ties=ties, k=None if k is None else int(k), **params)
            np.testing.assert_allclose(res.per_query[label], per_q.score, rtol=1e-12)
        n_ret = [int(retrieved[qid == q].sum()) for q in res.qid]
        np.testing.assert_array_equal(res.counts["num_ret"], n_ret)
        relevant = retrieved & (y >= 1)
        n_rel_ret = [int(relevant[qid == q].sum()) for q in res.qid]
        np.testing.assert_array_equal(res.counts["num_rel_ret"], n_rel_ret)


def test_a_metric_never_reads_below_the_depth_ranked():
    """The internal guard: a kernel asked for ranks the ranking does not hold fails loudly."""
    from skrank._engine.ranking import Depth, rank_queries
    from skrank._plan import run_kernel

    y = np.tile(np.arange(10.0) % 2, 3)
    s = np.arange(30.0)
    qid = np.repeat([0, 1, 2], 10)
    ranking = rank_queries("test", y, s, qid, None, None, "average", depth=Depth(k=2))
    assert ranking.depth == Depth(k=2)
    for name, params in [("ndcg", {"k": 3}), ("ndcg", {}), ("mrr", {})]:
        spec = skrank.METRICS[name]
        with pytest.raises(RuntimeError, match="internal error"):
            run_kernel(spec, "test", ranking, spec.check_params("test", params))
    ranking = rank_queries("test", y, s, qid, None, None, "average",
                           depth=Depth(first_relevant=(1.0,)))
    assert ranking.labels.size == 3  # the best-scored document of each query is relevant
    spec = skrank.METRICS["mrr"]
    with pytest.raises(RuntimeError, match="internal error"):
        run_kernel(spec, "test", ranking, spec.check_params("test", {"threshold": 2}))


# --------------------------------------------------------------------------------------
# 7. return types, query ids, skipping
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_returns_python_float_and_query_scores(spec):
    rng = np.random.default_rng(seed_of("types", spec.name))
    y, s, qid, _ = make_queries(rng, n_queries=6, n_irrelevant=0)
    qid = qid[::-1]  # unsorted
    params = valid_params(spec, y)
    mean = spec.function(y, s, qid=qid, **params)
    assert type(mean) is float
    assert type(spec.function(y.reshape(1, -1), s.reshape(1, -1), **params)) is float
    res = skrank.per_query_scores(spec.name, y, s, qid=qid, **params)
    assert isinstance(res, skrank.QueryScores)
    assert isinstance(res.qid, np.ndarray) and isinstance(res.score, np.ndarray)
    assert res.qid.tolist() == sorted(set(qid.tolist()))
    assert res.score.dtype == np.float64
    assert_close(mean, np.mean(res.score))
    # via res.qid and res.score, and as a tuple
    q, v = res
    assert q is res.qid and v is res.score


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_string_object_tuple_qids(spec):
    y = np.array([1, 0, 2, 0, 1, 1, 0, 3, 0], dtype=float)
    s = np.array([3, 2, 1, 1, 5, 2, 2, 0, 4], dtype=float)
    codes = [2, 0, 1, 2, 0, 1, 2, 0, 1]
    params = valid_params(spec, y)
    ref = skrank.per_query_scores(spec.name, y, s, qid=np.array(codes), **params)
    ref_by_code = dict(zip(ref.qid.tolist(), ref.score.tolist()))
    names = {
        "str": ["b", "a", "c"],
        "bytes": [b"b", b"a", b"c"],
        "float": [0.5, -1.0, 2.25],
        "tuple": [("x", 1), ("x", 0), ("y", 0)],
        "mixed": [("x", 1), "a", 7],
    }
    for kind, ids in names.items():
        qid = np.empty(len(codes), dtype=object)
        qid[:] = [ids[c] for c in codes]
        if kind in ("str", "bytes", "float"):
            qid = np.array(qid.tolist())
        res = skrank.per_query_scores(spec.name, y, s, qid=qid, **params)
        got = dict(zip(res.qid.tolist(), res.score.tolist()))
        assert got == pytest.approx({ids[c]: v for c, v in ref_by_code.items()}, rel=1e-12), kind
        if kind in ("str", "bytes", "float", "tuple"):
            assert res.qid.tolist() == sorted(ids), kind
        assert_close(spec.function(y, s, qid=qid, **params), np.mean(ref.score), what=kind)


def test_hashable_but_not_totally_ordered_qids():
    """frozensets compare (subset order) without raising, but are not totally ordered:
    the rows of one query must still form one query."""
    y, s = [1, 0, 0, 1], [1, 1, 1, 1]
    qid = np.empty(4, dtype=object)
    qid[:] = [frozenset({1}), frozenset({2}), frozenset({1}), frozenset({2})]
    for spec in SPECS:  # grouping is shared: one test for every metric
        params = valid_params(spec, y)
        res = skrank.per_query_scores(spec.name, y, s, qid=qid, **params)
        assert sorted(map(sorted, res.qid.tolist())) == [[1], [2]], spec.name
        expected = skrank.per_query_scores(spec.name, y, s, qid=[1, 2, 1, 2], **params)
        got = dict(zip(res.qid.tolist(), res.score.tolist()))
        assert got == pytest.approx({frozenset({1}): expected.score[0],
                                     frozenset({2}): expected.score[1]}, rel=1e-12), spec.name


def test_qids_as_a_list_of_tuples():
    """Any hashable id works, also given as a plain list (tuples must not become a 2-D array)."""
    y, s = [1, 0, 1, 1], [3, 2, 1, 0]
    for qid in ([("x", 1), ("y", 2), ("x", 1), ("y", 2)],   # -> (4, 2) array
                [("x", 1), "y", ("x", 1), "y"]):            # -> inhomogeneous array
        for spec in SPECS:
            params = valid_params(spec, y)
            res = skrank.per_query_scores(spec.name, y, s, qid=qid, **params)
            assert res.qid.tolist() == [qid[0], qid[1]], spec.name
            expected = skrank.per_query_scores(spec.name, y, s, qid=[0, 1, 0, 1], **params)
            np.testing.assert_allclose(res.score, expected.score, rtol=1e-12)


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_qid_relabelling_keeps_the_mean(spec):
    rng = np.random.default_rng(seed_of("relabel", spec.name))
    y, s, qid, _ = make_queries(rng, n_queries=9)
    params = valid_params(spec, y)
    base = spec.function(y, s, qid=qid, **params)
    mapping = {q: f"id-{i}" for i, q in enumerate(rng.permutation(np.unique(qid)).tolist())}
    for new in (np.array([mapping[q] for q in qid.tolist()]),
                np.array([-3 * q + 7 for q in qid.tolist()]),
                qid.astype(float) / 7):
        assert_close(spec.function(y, s, qid=new, **params), base)


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_2d_qids_are_row_numbers(spec):
    Y = np.array([[1, 0, 2], [0, 0, 0], [3, 1, 0], [0, 1, 1]], dtype=float)
    S = np.array([[.3, .2, .1], [.1, .2, .3], [.5, .5, .1], [.9, .1, .4]])
    params = valid_params(spec, Y)
    res = skrank.per_query_scores(spec.name, Y, S, **params)
    assert res.qid.tolist() == [0, 1, 2, 3]
    for row in range(Y.shape[0]):
        alone = skrank.per_query_scores(spec.name, Y[row], S[row], qid=[0] * 3, **params)
        assert_close(res.score[row], alone.score[0])


@pytest.mark.parametrize("spec", [s for s in SPECS if s.takes_no_relevant], ids=spec_id)
def test_skip_leaves_queries_out(spec):
    y = [1, 0, 0, 0, 0, 1, 0]
    s = [2, 1, 3, 2, 1, 1, 2]
    qid = ["a", "a", "b", "b", "b", "c", "c"]  # b has no relevant document
    params = valid_params(spec, y)
    res = skrank.per_query_scores(spec.name, y, s, qid=qid, no_relevant="skip", **params)
    assert res.qid.tolist() == ["a", "c"]
    full = skrank.per_query_scores(spec.name, y, s, qid=qid, no_relevant="zero", **params)
    np.testing.assert_array_equal(res.score, full.score[[0, 2]])
    assert_close(spec.function(y, s, qid=qid, no_relevant="skip", **params), np.mean(res.score))


@pytest.mark.parametrize("spec", [s for s in SPECS if s.takes_no_relevant], ids=spec_id)
def test_every_query_skipped_gives_nan_and_warning(spec):
    y, s, qid = [0, 0, 0], [1, 2, 3], [0, 0, 1]
    params = valid_params(spec, y)
    with pytest.warns(UndefinedMetricWarning, match=r"every query was skipped"):
        value = spec.function(y, s, qid=qid, no_relevant="skip", **params)
    assert type(value) is float and math.isnan(value)
    res = skrank.per_query_scores(spec.name, y, s, qid=qid, no_relevant="skip", **params)
    assert res.qid.size == 0 and res.score.size == 0


# --------------------------------------------------------------------------------------
# 8. inputs are never modified
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_inputs_not_modified(spec):
    rng = np.random.default_rng(seed_of("inplace", spec.name))
    y, s, qid, retrieved = make_queries(rng, n_queries=6, unretrieved=0.3)
    sorted_order = np.argsort(qid, kind="stable")
    cases = [
        (y, s, qid, retrieved),  # unsorted qids, float64 arrays (no conversion copy)
        (y[sorted_order], s[sorted_order], qid[sorted_order], retrieved[sorted_order]),
        (y, np.where(np.isnan(s), 0.0, s), qid.astype(str), None),
    ]
    gains = ([g for g in ("linear", "exponential") if takes_dcg_gain(spec)]
             or (["binary", "linear", "trec"] if "gain" in spec.parameters else [None]))
    for (yy, ss, qq, rr), ties, gain in itertools.product(cases, spec.ties, gains):
        params = valid_params(spec, yy, ties=ties)
        if gain is not None:
            params["gain"] = gain
        copies = [a.copy() for a in (yy, ss, qq)] + [None if rr is None else rr.copy()]
        call_metric(spec, yy, ss, qq, rr, **params)
        for before, after in zip(copies, (yy, ss, qq, rr)):
            if before is not None:
                np.testing.assert_array_equal(after, before)
    # 2-D input
    Y = y[:12].reshape(3, 4).copy()
    S = np.where(np.isnan(s[:12]), 1.0, s[:12]).reshape(3, 4)
    Y0, S0 = Y.copy(), S.copy()
    for ties in spec.ties:
        call_metric(spec, Y, S, **valid_params(spec, Y, ties=ties))
    np.testing.assert_array_equal(Y, Y0)
    np.testing.assert_array_equal(S, S0)


@pytest.mark.parametrize("spec", [s for s in SPECS if takes_dcg_gain(s)], ids=spec_id)
def test_gain_callable_cannot_modify_inputs(spec):
    y = np.array([3.0, 2.0, 0.0, 1.0])
    s = np.array([0.1, 0.9, 0.5, 0.3])
    y0 = y.copy()

    def clobber(labels):
        out = labels ** 2
        labels[:] = -1  # a misbehaving callable
        return out

    spec.function(y, s, qid=np.zeros(4), **valid_params(spec, y, gain=clobber))
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("layout", ["ragged", "equal sizes"])
def test_a_query_value_does_not_depend_on_the_other_queries_to_the_last_bit(layout):
    """Each query's value is the same, bit for bit, whether it is evaluated alone or among
    others (a streamed block, a fold, a Dask partition): no summation whose order depends
    on how many queries the call holds (a BLAS matrix product did, for the ideal DCG)."""
    rng = np.random.default_rng(12)
    sizes = np.full(40, 30) if layout == "equal sizes" else rng.integers(1, 90, size=40)
    qid = np.repeat(np.arange(sizes.size), sizes)
    y = rng.integers(0, 5, qid.size).astype(float)
    s = np.round(rng.random(qid.size), 1)  # ties
    metrics = ["ndcg@10", "ndcg_exp@10", "ndcg", "map", "mrr", "err@10", "precision@5",
               "recall@20", "rbp", "dcg@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        together = skrank.evaluate(y, s, qid=qid, metrics=metrics)
        for q in range(sizes.size):
            rows = qid == q
            alone = skrank.evaluate(y[rows], s[rows], qid=qid[rows], metrics=metrics)
            for name in metrics:
                np.testing.assert_array_equal(alone.per_query[name],
                                              together.per_query[name][q:q + 1], err_msg=name)
