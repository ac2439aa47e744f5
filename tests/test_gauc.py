"""Group AUC (issue 29): per-query ROC AUC against scikit-learn, the weightings, one-class
queries, every entry point.  The table-driven tests (tests/test_metrics.py,
test_declarations.py, test_properties.py) cover it too, against ``ref_gauc``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

import skrank


def _collection(rng, n_queries=30, max_size=12, ties=True):
    sizes = rng.integers(1, max_size + 1, n_queries)
    qid = np.repeat(rng.permutation(n_queries) * 7 + 3, sizes)
    y = rng.integers(0, 3, qid.size)
    s = rng.integers(0, 5, qid.size) / 4 if ties else rng.random(qid.size)
    order = rng.permutation(qid.size)   # rows in any order
    return y[order], s[order], qid[order]


def _sklearn_per_query(y, s, qid, threshold=1):
    out = {}
    for q in np.unique(qid):
        positive = y[qid == q] >= threshold
        if positive.all() or not positive.any():
            continue
        out[q] = roc_auc_score(positive, s[qid == q])
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threshold", [1, 2])
def test_each_query_equals_sklearn_roc_auc_score(seed, threshold):
    rng = np.random.default_rng(seed)
    y, s, qid = _collection(rng, ties=seed % 2 == 0)
    expected = _sklearn_per_query(y, s, qid, threshold)
    got = skrank.per_query_scores("gauc", y, s, qid=qid, threshold=threshold,
                                  no_relevant="skip")
    assert got.qid.tolist() == sorted(expected)
    np.testing.assert_allclose(got.score, [expected[q] for q in got.qid], rtol=0, atol=1e-12)
    assert skrank.gauc_score(y, s, qid=qid, threshold=threshold, no_relevant="skip") == \
        pytest.approx(np.mean(list(expected.values())), abs=1e-12)


def ref_gauc_mean(y, s, qid, weighting, sample_weight=None):
    """The weighted mean over the two-class queries, by its definition."""
    values, weights = [], []
    for q, auc in _sklearn_per_query(y, s, qid).items():
        rows = qid == q
        w = {"uniform": 1.0, "size": rows.sum(), "positives": (y[rows] >= 1).sum()}[weighting]
        if sample_weight is not None:
            w *= sample_weight[rows][0]
        values.append(auc)
        weights.append(w)
    return np.average(values, weights=weights)


@pytest.mark.parametrize("weighting", ["uniform", "size", "positives"])
def test_weightings(weighting):
    rng = np.random.default_rng(7)
    y, s, qid = _collection(rng)
    got = skrank.gauc_score(y, s, qid=qid, weighting=weighting, no_relevant="skip")
    assert got == pytest.approx(ref_gauc_mean(y, s, qid, weighting), abs=1e-12)
    # query weights multiply: sample_weight (one per query) times the weighting
    codes = np.unique(qid, return_inverse=True)[1]
    sample_weight = (rng.random(codes.max() + 1) + 0.1)[codes]
    got = skrank.gauc_score(y, s, qid=qid, weighting=weighting, no_relevant="skip",
                            sample_weight=sample_weight)
    assert got == pytest.approx(ref_gauc_mean(y, s, qid, weighting, sample_weight), abs=1e-12)
    # the same through evaluate and a scorer name with options
    name = f"gauc(weighting={weighting}, no_relevant=skip)"
    assert skrank.evaluate(y, s, qid=qid, metrics=[name]).mean[name] == pytest.approx(
        ref_gauc_mean(y, s, qid, weighting), abs=1e-12)


def test_hand_computed_and_one_class_queries():
    # q1: positives 0.9, 0.6 over negatives 0.8, 0.5: 3 of 4 pairs; q2: one positive tied
    # with one negative, above two: (2 + 1/2) / 3; q3 only positives; q4 only negatives.
    y = [1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0]
    s = [.9, .8, .6, .5, .4, .4, .2, .1, .3, .7, .1, .2]
    qid = [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4]
    q1, q2 = 3 / 4, 2.5 / 3
    got = skrank.per_query_scores("gauc", y, s, qid=qid)
    assert got.score.tolist() == pytest.approx([q1, q2, 0.0, 0.0], abs=1e-15)
    assert skrank.gauc_score(y, s, qid=qid, no_relevant="skip") == pytest.approx((q1 + q2) / 2)
    assert skrank.gauc_score(y, s, qid=qid, no_relevant="one") == pytest.approx(
        (q1 + q2 + 2) / 4)
    with pytest.raises(ValueError, match="2 queries have no relevant document"):
        skrank.gauc_score(y, s, qid=qid, no_relevant="raise")
    # size weighting: 4, 4 documents (the skipped queries take no weight)
    assert skrank.gauc_score(y, s, qid=qid, no_relevant="skip", weighting="size") == \
        pytest.approx((q1 + q2) / 2)
    # positives weighting: 2 and 1 clicks
    assert skrank.gauc_score(y, s, qid=qid, no_relevant="skip", weighting="positives") == \
        pytest.approx((2 * q1 + q2) / 3)
    # other tie policies rank the tied pair: pessimistic puts the negative first
    assert skrank.per_query_scores("gauc", y, s, qid=qid, ties="pessimistic").score[1] == \
        pytest.approx(2 / 3)
    assert skrank.per_query_scores("gauc", y, s, qid=qid, ties="optimistic").score[1] == 1.0


def test_two_dimensional_form_and_unretrieved_rows():
    Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0]])
    S = np.array([[.9, .8, .6, .5], [.4, .4, .2, .1]])
    assert skrank.gauc_score(Y, S) == pytest.approx((3 / 4 + 2.5 / 3) / 2)
    # judged rows that were not retrieved have no score and take no part
    retrieved = np.array([True, True, True, True, False, True, True, True])
    got = skrank.per_query_scores("gauc", Y.ravel(), S.ravel(), qid=[0] * 4 + [1] * 4,
                                  retrieved=retrieved)
    assert got.score.tolist() == pytest.approx([3 / 4, 1.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 3), st.integers(0, 2)),
                min_size=1, max_size=25))
def test_reversing_the_scores_complements_the_auc(rows):
    y, s, qid = (np.array(column) for column in zip(*rows))
    forward = skrank.per_query_scores("gauc", y, s, qid=qid, no_relevant="skip")
    backward = skrank.per_query_scores("gauc", y, -s, qid=qid, no_relevant="skip")
    assert forward.qid.tolist() == backward.qid.tolist()
    np.testing.assert_allclose(forward.score + backward.score, 1.0, atol=1e-12)
    assert ((forward.score >= 0) & (forward.score <= 1)).all()


def test_command_line_metric(tmp_path, capsys):
    from skrank.cli import main

    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 d 0\n")
    (tmp_path / "run").write_text("1 Q0 a 1 0.9 x\n1 Q0 b 2 0.8 x\n1 Q0 c 3 0.6 x\n"
                                  "1 Q0 d 4 0.5 x\n")
    assert main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "gauc"]) \
        in (0, None)
    out = capsys.readouterr().out
    assert "gauc" in out and "0.75" in out


def test_device_arrays_with_weighting():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    y, s, qid = _collection(rng)
    codes = np.unique(qid, return_inverse=True)[1]
    sample_weight = (rng.random(codes.max() + 1) + 0.1)[codes]
    for options in ({"weighting": "size"}, {"weighting": "positives", "no_relevant": "skip"}):
        expected = skrank.gauc_score(y, s, qid=qid, sample_weight=sample_weight, **options)
        got = skrank.gauc_score(torch.tensor(y), torch.tensor(s), qid=torch.tensor(qid),
                                sample_weight=torch.tensor(sample_weight), **options)
        assert got == pytest.approx(expected, abs=1e-12)
