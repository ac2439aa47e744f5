"""bpref, infAP and judged@k on arrays (a ``judged`` mask): against the slow oracle in
tests/_reference.py, against pytrec_eval, and against `skrank evaluate`'s trec_eval values."""

import numpy as np
import pytest

import skrank

try:
    from tests import _reference as R
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    import _reference as R

REFS = R.JUDGED_REFERENCE_METRICS
FUNCTIONS = {"bpref": skrank.bpref_score, "infap": skrank.infap_score,
             "judged": skrank.judged_at_k_score}


def _queries(seed, ties):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 15, size=20)
    qid = np.repeat(np.arange(20), sizes)
    n = qid.size
    y = rng.choice([-1, 0, 0, 1, 2], size=n).astype(float)
    s = rng.integers(0, 4, size=n).astype(float) if ties else rng.permutation(n).astype(float)
    judged = rng.random(n) < 0.7
    retrieved = rng.random(n) < 0.85
    perm = rng.permutation(n)                      # rows in any order
    return y[perm], s[perm], qid[perm], judged[perm], retrieved[perm]


def _expected(metric, y, s, qid, judged, retrieved, ties, **params):
    out = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        ret = rows[retrieved[rows]]
        code = {i: (y[i] if judged[i] else None) for i in rows}
        # the tie policy: least relevant first (not pooled -1, pooled-unjudged -2 lowest)
        sort_code = {i: (-1.0 if code[i] is None else (-2.0 if code[i] < 0 else code[i]))
                     for i in rows}
        if ties == "stable":
            order = sorted(ret, key=lambda i: -s[i])
        elif ties == "pessimistic":
            order = sorted(ret, key=lambda i: (-s[i], sort_code[i]))
        else:
            order = sorted(ret, key=lambda i: (-s[i], -sort_code[i]))
        unret = [code[i] for i in rows[~retrieved[rows]]]
        out.append(REFS[metric]([code[i] for i in order], unret, **params))
    return np.array(out)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
@pytest.mark.parametrize("metric", ["bpref", "infap"])
@pytest.mark.parametrize("seed", range(3))
def test_against_oracle(seed, metric, ties):
    y, s, qid, judged, retrieved = _queries(seed, ties=True)
    for threshold in (1, 2):
        got = skrank.per_query_scores(metric, y, s, qid=qid, judged=judged, retrieved=retrieved,
                                      threshold=threshold, ties=ties)
        want = _expected(metric, y, s, qid, judged, retrieved, ties, threshold=threshold)
        np.testing.assert_allclose(got.score, want, rtol=0, atol=1e-12)
        assert FUNCTIONS[metric](y, s, qid=qid, judged=judged, retrieved=retrieved,
                                 threshold=threshold, ties=ties) == pytest.approx(want.mean())


@pytest.mark.parametrize("k", [1, 3, 20])
def test_judged_at_k_against_oracle(k):
    y, s, qid, judged, retrieved = _queries(7, ties=False)
    keep = retrieved
    got = skrank.per_query_scores("judged", y[keep], s[keep], qid=qid[keep], judged=judged[keep],
                                  k=k)
    want = _expected("judged", y[keep], s[keep], qid[keep], judged[keep],
                     np.ones(keep.sum(), dtype=bool), "stable", k=k)
    np.testing.assert_allclose(got.score, want, atol=1e-12)


def test_hand_computed():
    # relevant, unjudged, non-relevant, relevant; R = 2, N = 1
    y, s, judged = [1, 0, 0, 1], [4, 3, 2, 1], [True, False, True, True]
    assert skrank.bpref_score(y, s, qid=[0] * 4, judged=judged) == (1 + (1 - 1 / 1)) / 2
    e = 1e-5   # infAP at rank 4 (j = 3): 1/4 + 3/4 * (2/3) * ((1 + e) / (2 + 2e))
    assert skrank.infap_score(y, s, qid=[0] * 4, judged=judged) == pytest.approx(
        (1 + 1 / 4 + 3 / 4 * (2 / 3) * ((1 + e) / (2 + 2 * e))) / 2)
    assert skrank.judged_at_k_score(y, s, qid=[0] * 4, judged=judged, k=4) == 0.75
    assert skrank.judged_at_k_score(y, s, qid=[0] * 4, judged=judged, k=8) == 3 / 8


def test_all_judged_infap_is_average_precision():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 50).astype(float)
    s = rng.permutation(50).astype(float)
    qid = np.repeat(np.arange(5), 10)
    assert skrank.infap_score(y, s, qid=qid) == pytest.approx(skrank.map_score(y, s, qid=qid))


def test_bad_judged_mask():
    with pytest.raises(TypeError, match="judged must be None or a 1-D boolean mask"):
        skrank.bpref_score([1, 0], [1, 0], qid=[0, 0], judged=[1, 0])
    with pytest.raises(ValueError, match="y_true and judged must have the same length"):
        skrank.bpref_score([1, 0], [1, 0], qid=[0, 0], judged=[True])
    with pytest.raises(skrank.InvalidParameterError, match="ties='average' is not supported"):
        skrank.infap_score([1, 0], [1, 0], qid=[0, 0], ties="average")


def test_against_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from skrank.io import Qrels, Run, join_qrels_run

    rng = np.random.default_rng(11)
    qrels_d, run_d, qrows, rrows = {}, {}, [], []
    for q in range(15):
        docs = [f"d{i}" for i in rng.choice(200, size=30, replace=False)]
        for d in docs[:20]:
            rel = int(rng.choice([-1, 0, 0, 1, 2]))
            qrels_d.setdefault(f"q{q}", {})[d] = rel
            qrows.append((f"q{q}", d, rel))
        for d in rng.choice(docs, size=18, replace=False):
            score = float(rng.random())
            run_d.setdefault(f"q{q}", {})[str(d)] = score
            rrows.append((f"q{q}", str(d), score))
    want = pytrec_eval.RelevanceEvaluator(qrels_d, {"bpref", "infAP"}).evaluate(run_d)
    joined = join_qrels_run(Qrels(*zip(*qrows)), Run(*zip(*rrows)))
    args = (joined.y_true, np.nan_to_num(joined.y_score, nan=-1.0))
    kw = dict(qid=joined.qid, judged=joined.judged, retrieved=joined.retrieved)
    for metric, name in (("bpref", "bpref"), ("infap", "infAP")):
        got = skrank.per_query_scores(metric, *args, **kw)
        for q, value in zip(got.qid.tolist(), got.score.tolist()):
            assert value == pytest.approx(want[q][name], abs=1e-6), (metric, q)


DATA = __import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"


@pytest.mark.skipif(not DATA.is_dir(), reason=f"trec_eval data absent at {DATA} (shared/data)")
def test_evaluate_names_on_trec_files_match_trec_eval():
    """evaluate(metrics=["bpref", "infap", "judged@10"]) on TREC files: judged = in the qrels,
    and the values are trec_eval's (out.test.aql, -l2); judged@10 = 1 - unj_10 there."""
    res = skrank.evaluate(qrels=DATA / "qrels.rel_level", run=DATA / "results.test",
                          metrics=["bpref", "infap", "judged@10", "ndcg"], threshold=2)
    expected = {}
    for line in (DATA / "out.test.aql").read_text().splitlines():
        name, qid, value = line.split("\t")
        expected[(name.strip(), qid)] = value
    for label, name in (("bpref", "bpref"), ("infap", "infAP")):
        for qid, value in zip(res.qid.tolist(), res.per_query[label].tolist()):
            assert f"{value:6.4f}" == expected[(name, qid)], (label, qid)
    for qid, value in zip(res.qid.tolist(), res.per_query["judged@10"].tolist()):
        assert f"{1 - value:6.4f}" == expected[("unj_10", qid)]
    assert list(res.mean) == ["bpref", "infap", "judged@10", "ndcg"]


def test_evaluate_with_judged_mask():
    res = skrank.evaluate([1, 0, 0, 1, 1, 0], [4, 3, 2, 1, 2, 1], qid=[0, 0, 0, 0, 1, 1],
                          judged=[True, False, True, True, True, True],
                          metrics=["bpref", "judged@4", "map"])
    assert res.per_query["bpref"].tolist() == [0.5, 1.0]
    assert res.per_query["judged@4"].tolist() == [0.75, 0.5]
    with pytest.raises(skrank.InvalidParameterError, match="judged needs a cutoff"):
        skrank.evaluate([1], [1], qid=[0], metrics=["judged"])


def test_unknown_name_suggests_a_judged_metric_in_evaluate():
    with pytest.raises(skrank.InvalidParameterError, match=r"Did you mean 'bpref'\?.*"
                       r"With judged=, also bpref, infap, judged@<k>\."):
        skrank.evaluate([1, 0], [0.5, 0.2], qid=[0, 0], metrics=["bpre"])
