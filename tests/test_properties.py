"""Property-based tests (hypothesis) of every metric of skrank.METRICS x every tie policy.

Inputs are small integer labels and integer scores (many ties); every transform used
below is exact in floating point, so ties and distinctness are kept exactly.
"""

import math
import warnings

import numpy as np
import pytest
import sklearn.metrics
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning

import skrank

try:  # works whether or not tests/ is a package
    from tests.conftest import (SPECS, assert_close, assert_per_query_equal, oracle,
                                param_grid, spec_ties, valid_params)
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import (SPECS, assert_close, assert_per_query_equal, oracle, param_grid,
                          spec_ties, valid_params)

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------


@st.composite
def ranking_inputs(draw, spec, ties, *, max_rows=10, max_queries=4, unretrieved=True,
                   raise_ok=False):
    """(y_true, y_score, qid, retrieved, params) for one metric and tie policy.

    Rows are decoded from a byte string, 4 bytes a row: label in 0..3, integer score
    in -4..4, qid in 0..max_queries-1, retrieved (3 in 4).  Much cheaper for hypothesis
    than lists of tuples, and it still shrinks towards few rows, label 0, one query.
    (The number of rows is drawn first: st.binary alone mostly gives 1 or 2 rows.)
    """
    n = draw(st.integers(1, max_rows))
    raw = np.frombuffer(draw(st.binary(min_size=4 * n, max_size=4 * n)), dtype=np.uint8)
    rows = raw.reshape(n, 4).astype(np.int64)
    y = (rows[:, 0] % 4).astype(np.float64)
    s = (rows[:, 1] % 9 - 4).astype(np.float64)
    qid = rows[:, 2] % max_queries
    retrieved = None
    if unretrieved and draw(st.booleans()):
        retrieved = rows[:, 3] % 4 != 3
    grid = [p for p in param_grid(spec) if raise_ok or p.get("no_relevant") != "raise"]
    params = valid_params(spec, y, ties=ties, **draw(st.sampled_from(grid)))
    return y, s, qid, retrieved, params


def _run(spec, y, s, qid, retrieved=None, **params):
    kw = {} if retrieved is None else {"retrieved": retrieved}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        mean = spec.function(y, s, qid=qid, **kw, **params)
    res = skrank.per_query_scores(spec.name, y, s, qid=qid, **kw, **params)
    return mean, dict(zip(res.qid.tolist(), res.score.tolist()))


def _per_query(spec, y, s, qid, retrieved=None, **params):
    kw = {} if retrieved is None else {"retrieved": retrieved}
    res = skrank.per_query_scores(spec.name, y, s, qid=qid, **kw, **params)
    return dict(zip(res.qid.tolist(), res.score.tolist()))


def _assert_same_result(a, b):
    (mean_a, per_a), (mean_b, per_b) = a, b
    assert_close(mean_a, mean_b, what="mean")
    assert set(per_a) == set(per_b)
    for q in per_a:
        assert_close(per_a[q], per_b[q], what=f"qid {q!r}")


def _order_keeping_permutation(qid, perm):
    """A row permutation like ``perm`` that keeps the relative order of each query's rows."""
    perm = np.asarray(perm, dtype=np.intp)
    out = perm.copy()
    for q in np.unique(qid):
        out[np.flatnonzero(qid[perm] == q)] = np.flatnonzero(qid == q)
    return out


# --------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------


def _check_bounds(spec, result, params):
    mean, per_q = result
    values = np.array(list(per_q.values()) + [mean])
    if spec.bounds is not None:
        lo, hi = spec.bounds
        if params.get("gain") == "linear" and spec.name == "rbp":
            hi = np.inf  # raw grades as gains (ranx's graded RBP): no upper bound
        finite = values[~np.isnan(values)]
        assert np.all(finite >= lo) and np.all(finite <= hi), f"out of {spec.bounds}: {result}"
    if params.get("no_relevant") != "nan":
        assert not np.isnan(values[:-1]).any(), f"NaN without no_relevant='nan': {result}"


@pytest.mark.parametrize("spec, ties", spec_ties())
@SETTINGS
@given(data=st.data())
def test_bounds_and_invariances(spec, ties, data):
    """Bounds, and invariance to row shuffling, qid relabelling, increasing score maps.

    (One test per metric and tie policy rather than four, to keep hypothesis fast.)
    """
    y, s, qid, retrieved, params = data.draw(ranking_inputs(spec, ties))
    # GAUC's weighted means (weighting="size" or "positives") are checked against their
    # definition in tests/test_gauc.py; here a draw may leave no weight at all.
    assume(params.get("weighting", "uniform") == "uniform")
    base = _run(spec, y, s, qid, retrieved, **params)

    # bounds
    _check_bounds(spec, base, params)

    # row shuffling (for "stable", input order is the tie-breaker: keep it within queries)
    perm = np.asarray(data.draw(st.permutations(range(y.size))), dtype=np.intp)
    if ties == "stable":
        perm = _order_keeping_permutation(qid, perm)
    r = None if retrieved is None else retrieved[perm]
    base_q = base[1]
    _assert_same_result((0.0, base_q),
                        (0.0, _per_query(spec, y[perm], s[perm], qid[perm], r, **params)))

    # qid relabelling: strings, another set of ints, tuples
    relabel = data.draw(st.sampled_from([
        lambda q: f"query-{q}", lambda q: (q * 7 + 11) % 997 - 500, lambda q: ("t", -q),
    ]))
    new = np.empty(qid.size, dtype=object)
    new[:] = [relabel(q) for q in qid.tolist()]
    per_q = _per_query(spec, y, s, new, retrieved, **params)
    assert per_q.keys() == {relabel(q) for q in base_q}
    for q, value in base_q.items():
        assert_close(per_q[relabel(q)], value, what=f"qid {q} after relabelling")

    # strictly increasing score maps, exact on small integers (ties and distinctness kept)
    transform = data.draw(st.sampled_from([
        lambda x: 3 * x + 1, np.exp, lambda x: x ** 3, lambda x: x / 8 - 100,
    ]))
    _assert_same_result((0.0, base_q), (0.0, _per_query(spec, y, transform(s), qid, retrieved,
                                                        **params)))

    # the scores of unretrieved documents are ignored
    if retrieved is not None and not retrieved.all():
        s2 = s.copy()
        s2[~retrieved] = data.draw(st.sampled_from([np.nan, 1e9, -1e9, 0.0]))
        _assert_same_result((0.0, base_q), (0.0, _per_query(spec, y, s2, qid, retrieved,
                                                            **params)))


def _perfect_cases():
    out = []
    for spec in SPECS:
        if spec.perfect is None:
            continue
        for ties in spec.ties:
            out.append(pytest.param(spec, ties, id=f"{spec.name}-{ties}"))
    return out


@pytest.mark.parametrize("spec, ties", _perfect_cases())
@SETTINGS
@given(data=st.data())
def test_perfect_ranking_scores_the_declared_perfect_value(spec, ties, data):
    y, _, qid, _, _ = data.draw(ranking_inputs(spec, ties, unretrieved=False))
    params = {"ties": ties, "no_relevant": "nan"}
    if spec.k != "none":
        params["k"] = data.draw(st.sampled_from([None, 1, 2, 5]))
    params.update(spec.perfect_with)  # e.g. AP@k of a perfect ranking is 1 with D = min(R, k)
    params = valid_params(spec, y, **params)
    # y_score = y_true (tied documents have equal labels), or any increasing map of it
    y_score = data.draw(st.sampled_from([y, 2 * y + 0.5, np.exp(y)]))
    for q, value in _per_query(spec, y, y_score, qid, **params).items():
        if (y[qid == q] >= 1).any():
            assert_close(value, spec.perfect, what=f"qid {q}")
        else:
            assert math.isnan(value)


@pytest.mark.parametrize("ties", skrank.METRICS["ndcg"].ties)
@SETTINGS
@given(data=st.data())
def test_ndcg_is_dcg_ratio_whatever_the_log_base(ties, data):
    ndcg = skrank.METRICS["ndcg"]
    y, s, qid, _, _ = data.draw(ranking_inputs(ndcg, ties, unretrieved=False))
    k = data.draw(st.sampled_from([None, 1, 3]))
    gain = data.draw(st.sampled_from(["linear", "exponential"]))
    _, per_q = _run(ndcg, y, s, qid, k=k, gain=gain, ties=ties, no_relevant="nan")
    for base in (2, 10, math.e, 1.5):
        kw = dict(k=k, gain=gain, log_base=base)
        _, dcg = _run(skrank.METRICS["dcg"], y, s, qid, ties=ties, **kw)
        _, idcg = _run(skrank.METRICS["dcg"], y, y, qid, ties="stable", **kw)
        for q, value in per_q.items():
            if idcg[q] > 0:
                assert_close(value, dcg[q] / idcg[q], what=f"qid {q}, log_base {base}")
            else:
                assert math.isnan(value)


@pytest.mark.parametrize("spec, ties", spec_ties())
@SETTINGS
@given(data=st.data())
def test_mean_is_additive_over_disjoint_query_sets(spec, ties, data):
    y, s, qid, retrieved, params = data.draw(ranking_inputs(spec, ties, max_queries=6))
    # A mean that weighs queries by their documents (GAUC's weighting) adds up by weights,
    # not by counts: tests/test_gauc.py checks it against its definition.
    assume(params.get("weighting", "uniform") == "uniform")
    ids = np.unique(qid).tolist()
    part = set(data.draw(st.lists(st.sampled_from(ids), unique=True)))
    kw = {} if retrieved is None else {"retrieved": retrieved}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        mean = spec.function(y, s, qid=qid, **kw, **params)
    if params.get("no_relevant") == "skip":
        per_q = _per_query(spec, y, s, qid, retrieved, **params)
    else:
        per_q = dict.fromkeys(np.unique(qid).tolist())
    total, count = 0.0, 0
    for rows in (np.isin(qid, list(part)), ~np.isin(qid, list(part))):
        if not rows.any():
            continue
        r = None if retrieved is None else retrieved[rows]
        kw = {} if r is None else {"retrieved": r}
        if params.get("no_relevant") == "skip":
            n_part = sum(q in per_q for q in np.unique(qid[rows]).tolist())
        else:
            n_part = np.unique(qid[rows]).size
        if n_part:  # else every query of the part is skipped (mean NaN)
            total += spec.function(y[rows], s[rows], qid=qid[rows], **kw, **params) * n_part
            count += n_part
    assert count == len(per_q)
    if count == 0:
        assert math.isnan(mean)
    else:
        assert_close(mean, total / count, rel=1e-12, abs_=1e-12)


@pytest.mark.parametrize("spec, ties", spec_ties())
@SETTINGS
@given(data=st.data())
def test_oracle_agreement_on_generated_inputs(spec, ties, data):
    y, s, qid, retrieved, params = data.draw(
        ranking_inputs(spec, ties, max_rows=7, raise_ok=True))
    assume(params.get("weighting", "uniform") == "uniform")   # see test_bounds_and_invariances
    try:
        expected_mean, expected = oracle(spec, y, s, qid, retrieved, **params)
    except ValueError:
        assert params.get("no_relevant") == "raise"
        with pytest.raises(ValueError, match="no relevant document"):
            _run(spec, y, s, qid, retrieved, **params)
        return
    kw = {} if retrieved is None else {"retrieved": retrieved}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        mean = spec.function(y, s, qid=qid, **kw, **params)
    assert_close(mean, expected_mean, what="mean")
    assert_per_query_equal(skrank.per_query_scores(spec.name, y, s, qid=qid, **kw, **params),
                           expected)


# --------------------------------------------------------------------------------------
# moving a relevant document up, 1-D and 2-D forms, scikit-learn parity
# --------------------------------------------------------------------------------------

def _same_or_both_nan(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
@SETTINGS
@given(data=st.data())
def test_moving_a_relevant_document_up_never_lowers_the_value(spec, data):
    """Rows i and j of one query, i ranked strictly above j (higher score) and less
    relevant (lower label): exchanging their places never lowers the query's value,
    for every metric of the table (P@k, AP, nDCG and RR among them).

    The exchange is written as a swap of the two labels, which is the same as moving
    the documents for every tie policy (also "stable", where a row's place among tied
    documents is its input position); for the other policies it is also the same as
    swapping the two scores, checked too.
    """
    ties = data.draw(st.sampled_from(spec.ties))
    y, s, qid, retrieved, params = data.draw(ranking_inputs(spec, ties, max_queries=2))
    retrieved = np.ones(y.size, bool) if retrieved is None else retrieved
    pairs = [(i, j) for i in range(y.size) for j in range(y.size)
             if qid[i] == qid[j] and retrieved[i] and retrieved[j]
             and s[i] > s[j] and y[i] < y[j]]
    assume(pairs)
    i, j = data.draw(st.sampled_from(pairs))
    before = _per_query(spec, y, s, qid, retrieved, **params)
    moved = y.copy()
    moved[[i, j]] = y[[j, i]]
    after = _per_query(spec, moved, s, qid, retrieved, **params)
    assert after.keys() == before.keys()
    for q, value in before.items():
        if q != qid[i]:
            assert _same_or_both_nan(after[q], value), f"qid {q} changed"
        elif math.isnan(value):
            assert math.isnan(after[q])
        else:
            assert after[q] >= value - 1e-12, f"qid {q}: {value} -> {after[q]}"
    if ties != "stable":
        swapped = s.copy()
        swapped[[i, j]] = s[[j, i]]
        by_scores = _per_query(spec, y, swapped, qid, retrieved, **params)
        for q, value in after.items():
            assert _same_or_both_nan(by_scores[q], value), f"qid {q}: score swap"


@st.composite
def two_dimensional_inputs(draw, *, min_documents=1):
    """(Y, S): labels in 0..3 and integer scores in -2..2 (many ties), one query a row."""
    n_queries = draw(st.integers(1, 4))
    n_documents = draw(st.integers(min_documents, 6))
    raw = np.frombuffer(draw(st.binary(min_size=2 * n_queries * n_documents,
                                       max_size=2 * n_queries * n_documents)), dtype=np.uint8)
    cells = raw.reshape(n_queries, n_documents, 2).astype(np.int64)
    return (cells[..., 0] % 4).astype(np.float64), (cells[..., 1] % 5 - 2).astype(np.float64)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
@SETTINGS
@given(data=st.data())
def test_flat_input_with_qid_equals_the_2d_form(spec, data):
    """One query a row of 2-D arrays == the same cells as flat arrays with qid = row number,
    rows in any order (for "stable", each query's rows keep their order)."""
    Y, S = data.draw(two_dimensional_inputs())
    ties = data.draw(st.sampled_from(spec.ties))
    params = valid_params(spec, Y, ties=ties, **data.draw(st.sampled_from(
        [p for p in param_grid(spec) if p.get("no_relevant") != "raise"
         and p.get("weighting", "uniform") == "uniform"])))
    qid = np.repeat(np.arange(Y.shape[0]), Y.shape[1])
    perm = np.asarray(data.draw(st.permutations(range(qid.size))), dtype=np.intp)
    if ties == "stable":
        perm = _order_keeping_permutation(qid, perm)
    flat = _run(spec, Y.ravel()[perm], S.ravel()[perm], qid[perm], **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        mean_2d = spec.function(Y, S, **params)
    per_query_2d = skrank.per_query_scores(spec.name, Y, S, **params)
    _assert_same_result(flat, (mean_2d, dict(zip(per_query_2d.qid.tolist(),
                                                 per_query_2d.score.tolist()))))


@SETTINGS
@given(data=st.data())
def test_ndcg_and_dcg_equal_scikit_learns_on_generated_2d_input(data):
    """scikit-learn averages over tied scores (ignore_ties=False), as ties="average";
    all-irrelevant rows score 0 there, as no_relevant="zero" (the defaults)."""
    Y, S = data.draw(two_dimensional_inputs(min_documents=2))  # scikit-learn's minimum
    k = data.draw(st.sampled_from([None, 1, 2, 3, 10]))
    log_base = data.draw(st.sampled_from([2, 10]))
    assert_close(skrank.ndcg_score(Y, S, k=k),
                 sklearn.metrics.ndcg_score(Y, S, k=k, ignore_ties=False), what="ndcg")
    assert_close(skrank.ndcg_score(Y, S, k=k, ties="average", gain="linear",
                                   no_relevant="zero"),
                 sklearn.metrics.ndcg_score(Y, S, k=k), what="ndcg, explicit options")
    assert_close(skrank.dcg_score(Y, S, k=k, log_base=log_base),
                 sklearn.metrics.dcg_score(Y, S, k=k, log_base=log_base, ignore_ties=False),
                 what="dcg")
    # without ties, scikit-learn's ignore_ties=True is every tie policy's value
    distinct = S + np.arange(S.size).reshape(S.shape) / (2.0 * S.size)
    for ties in skrank.METRICS["ndcg"].ties:
        assert_close(skrank.ndcg_score(Y, distinct, k=k, ties=ties),
                     sklearn.metrics.ndcg_score(Y, distinct, k=k, ignore_ties=True),
                     what=f"ndcg, distinct scores, ties={ties}")
