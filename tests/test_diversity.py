"""Diversity and intent-aware metrics (issue 29): against ndeval through ir_measures and
pyndeval, against a slow oracle written from ndeval's definitions, hand-computed
values, input forms and errors."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank import diversity
from skrank.diversity import DIVERSITY_METRICS

IR_NAMES = {"alpha_ndcg": "alpha_nDCG", "alpha_dcg": "alpha_DCG", "err_ia": "ERR_IA",
            "nerr_ia": "nERR_IA", "nrbp": "NRBP", "nnrbp": "nNRBP", "p_ia": "P_IA",
            "ap_ia": "AP_IA", "strec": "StRecall"}


# --------------------------------------------------------------------------------------
# The slow oracle: one query, documents already in rank order, loops everywhere.


def _gain_sequence(ranked, alpha, w=None):
    """Novelty gain of each ranked document (lists of covered subtopics); ``w``: the
    weight of each subtopic (1 when None)."""
    seen, out = {}, []
    for covered in ranked:
        gain = 0.0
        for j in sorted(covered):
            gain += (1.0 if w is None else w[j]) * (1.0 - alpha) ** seen.get(j, 0)
            seen[j] = seen.get(j, 0) + 1
        out.append(gain)
    return out


def ref_greedy_ideal(judged, alpha, ideal_ties="last", w=None):
    """ndeval's greedy ideal: each rank takes the document of largest gain given those
    above; ``judged`` is in row order, ties go to the last (or first) of them."""
    remaining = list(range(len(judged)))
    weight, order = {}, []
    while remaining:
        best, pick = None, None
        for i in remaining:
            gain = sum((1.0 if w is None else w[j]) * (1.0 - alpha) ** weight.get(j, 0)
                       for j in sorted(judged[i]))
            if best is None or gain > best or (gain == best and ideal_ties == "last"):
                best, pick = gain, i
        order.append(judged[pick])
        remaining.remove(pick)
        for j in judged[pick]:
            weight[j] = weight.get(j, 0) + 1
    return order


def ref_value(name, ranked, judged, *, k=None, alpha=0.5, beta=0.5, normalization="ndeval",
              ideal_ties="last", intent=None):
    """One query: ``ranked`` (covered subtopics of the ranked documents, best first) and
    ``judged`` (of every judged document, retrieved or not, in row order).  None where the
    query has no covered subtopic."""
    subtopics = sorted({j for covered in judged for j in covered})
    m = len(subtopics)
    if m == 0:
        return None
    w = None
    if intent is not None:   # weights of the covered subtopics, scaled to sum to 1; m -> 1
        w = {j: intent[j] / sum(intent[t] for t in subtopics) for j in subtopics}
        m = 1
    ideal = ref_greedy_ideal(judged, alpha, ideal_ties, w)

    def weight(j):
        return 1.0 if w is None else w[j]

    def dcg(docs):
        return sum(g / math.log2(i + 2)
                   for i, g in enumerate(_gain_sequence(docs, alpha, w)[:k]))

    def err(docs):
        return sum(g / (i + 1) for i, g in enumerate(_gain_sequence(docs, alpha, w)[:k]))

    def nrbp(docs):
        total = sum(g * beta ** i for i, g in enumerate(_gain_sequence(docs, alpha, w)))
        return (1 - (1 - alpha) * beta) / m * total

    if name == "alpha_ndcg":
        best = dcg(ideal)
        return dcg(ranked) / best
    if name == "alpha_dcg":
        ideal_ideal = sum(m * (1 - alpha) ** i / math.log2(i + 2) for i in range(k))
        return dcg(ranked) / (ideal_ideal if normalization == "ndeval" and k > 1 else 1.0)
    if name == "err_ia":
        ideal_ideal = sum(m * (1 - alpha) ** i / (i + 1) for i in range(k))
        return err(ranked) / (ideal_ideal if normalization == "ndeval" and k > 1 else 1.0)
    if name == "nerr_ia":
        return err(ranked) / err(ideal)
    if name == "nrbp":
        return nrbp(ranked)
    if name == "nnrbp":
        return nrbp(ranked) / nrbp(ideal)
    if name == "p_ia":
        return sum(weight(j) for covered in ranked[:k] for j in covered) / (k * m)
    if name == "strec":
        return sum(weight(j) for j in {j for covered in ranked[:k] for j in covered}) / m
    if name == "ap_ia":
        total = 0.0
        for j in subtopics:
            size = sum(1 for covered in judged if j in covered)
            hits, ap = 0, 0.0
            for i, covered in enumerate(ranked):
                if j in covered:
                    hits += 1
                    ap += hits / (i + 1)
            total += weight(j) * ap / size
        return total / m
    raise AssertionError(name)


def ref_per_query(name, y_true, y_score, qid, retrieved=None, *, threshold=1,
                  ties="pessimistic", **options):
    """Per-query oracle values on the array form (rows of a label matrix)."""
    y_true = np.asarray(y_true)
    retrieved = np.ones(len(qid), bool) if retrieved is None else np.asarray(retrieved)
    intents = options.pop("intent_weights", None)
    out = {}
    for number, q in enumerate(sorted(set(qid))):
        if intents is not None:
            options["intent"] = intents[number]
        rows = [i for i in range(len(qid)) if qid[i] == q]
        covers = {i: [j for j in range(y_true.shape[1]) if y_true[i, j] >= threshold]
                  for i in rows}
        ranked_rows = [i for i in rows if retrieved[i]]
        if ties == "stable":
            ranked_rows.sort(key=lambda i: -y_score[i])
        else:
            sign = 1 if ties == "pessimistic" else -1
            ranked_rows.sort(key=lambda i: (-y_score[i], sign * len(covers[i]), i))
        out[q] = ref_value(name, [covers[i] for i in ranked_rows], [covers[i] for i in rows],
                           **options)
    return out


# --------------------------------------------------------------------------------------
# Random collections.


def _arrays(seed, n_queries=12, max_docs=9, n_sub=4, unretrieved=0.2):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_docs + 1, n_queries)
    qid = np.repeat(np.arange(n_queries) * 3 + 1, sizes)
    y = (rng.random((qid.size, n_sub)) < 0.3) * rng.integers(1, 3, (qid.size, n_sub))
    y[rng.random(qid.size) < 0.1] = 0
    s = rng.integers(0, 4, qid.size).astype(float)
    retrieved = rng.random(qid.size) >= unretrieved
    return y.astype(float), s, qid, retrieved


def _collection(seed, n_queries=15, n_docs=12, n_sub=4, ties=True):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(n_queries):
        docs = sorted({f"d{rng.integers(0, 40)}" for _ in range(n_docs)})
        m = rng.integers(1, n_sub + 1)
        for d in docs:
            for t in range(m):
                if rng.random() < 0.6:
                    rel = int(rng.random() < 0.35) * int(rng.integers(1, 3))
                    qrels.append((str(q), str(t + 1), d, rel))
        ranked = [d for d in docs if rng.random() < 0.8]
        ranked += [f"x{i}" for i in range(rng.integers(0, 3))]   # unjudged
        for d in ranked:
            score = float(rng.integers(0, 4)) if ties else float(rng.random())
            run.append((str(q), d, score))
    return (pd.DataFrame(qrels, columns=["query_id", "iteration", "doc_id", "relevance"]),
            pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))


#: The oracle of each diversity declaration (tests/test_metrics.py checks that every
#: declaration of skrank.METRICS has one): ref_per_query computes them all by name.
ORACLES = {name: ref_per_query for name in IR_NAMES}


# --------------------------------------------------------------------------------------
# ndeval through ir_measures and pyndeval.


def _ir_measures_values(measure, qrels, run):
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # one measure per call: mixed parameter groups in one call come back as 0.0
        return {m.query_id: m.value for m in ir_measures.iter_calc(
            [ir_measures.parse_measure(measure)], qrels, run)}


_NDEVAL_CASES = [
    *[(name, {"k": k}, f"{IR_NAMES[name]}@{k}") for name in
      ("alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia", "p_ia", "strec") for k in (1, 5, 20)],
    ("nrbp", {}, "NRBP"), ("nnrbp", {}, "nNRBP"), ("ap_ia", {}, "AP_IA"),
    ("alpha_ndcg", {"k": 10, "alpha": 0.3}, "alpha_nDCG(alpha=0.3)@10"),
    ("alpha_dcg", {"k": 5, "alpha": 0.8}, "alpha_DCG(alpha=0.8)@5"),
    ("nrbp", {"alpha": 0.3, "beta": 0.8}, "NRBP(alpha=0.3,beta=0.8)"),
    ("nnrbp", {"alpha": 0.7, "beta": 0.2}, "nNRBP(alpha=0.7,beta=0.2)"),
]


@pytest.mark.parametrize("seed", [0, 1])
def test_equals_ndeval_through_ir_measures(seed):
    qrels, run = _collection(seed, ties=seed == 0)
    for name, options, measure in _NDEVAL_CASES:
        expected = _ir_measures_values(measure, qrels, run)
        label = name if not options.get("k") else f"{name}@{options['k']}"
        got = diversity.evaluate(qrels, run, [(name, options)],
                                 no_relevant="nan" if name == "nnrbp" else "zero")
        values = dict(zip(got.qid.tolist(), next(iter(got.per_query.values())).tolist()))
        assert set(values) == set(expected), label
        for q, value in expected.items():
            if math.isnan(value):
                assert math.isnan(values[q]), (measure, q)
            else:
                assert values[q] == pytest.approx(value, abs=1e-9), (measure, q)


def test_relevance_level_is_the_threshold():
    qrels, run = _collection(3)
    expected = _ir_measures_values("alpha_nDCG(rel=2)@5", qrels, run)
    got = diversity.evaluate(qrels, run, ["alpha_ndcg@5"], threshold=2)
    np.testing.assert_allclose(got.per_query["alpha_ndcg@5"],
                               [expected[q] for q in got.qid], atol=1e-9)


# --------------------------------------------------------------------------------------
# The array form against the oracle.


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
def test_array_form_equals_the_oracle(ties):
    y, s, qid, retrieved = _arrays(hash(ties) % 1000)
    cases = [(name, {"k": k}) for name in ("alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia",
                                           "p_ia", "strec") for k in (1, 3, 20)]
    cases += [("nrbp", {}), ("nnrbp", {"beta": 0.8}), ("ap_ia", {}),
              ("alpha_ndcg", {"k": 4, "alpha": 0.25}),
              ("alpha_dcg", {"k": 4, "normalization": "none"}),
              ("err_ia", {"k": 4, "normalization": "none", "alpha": 0.9})]
    for name, options in cases:
        expected = ref_per_query(name, y, s, qid, retrieved, ties=ties, **options)
        got = diversity.per_query_scores(name, y, s, qid=qid, retrieved=retrieved, ties=ties,
                                         no_relevant="nan", **options)
        for q, value in zip(got.qid.tolist(), got.score.tolist()):
            if expected[q] is None:
                assert math.isnan(value)
            else:
                assert value == pytest.approx(expected[q], abs=1e-12), (name, options, q)


def test_ideal_tie_order_is_an_option():
    # The ideal's first rank is a tie of [0, 1], [2, 3] and [1, 2] (gain 2 each): the last
    # row, [1, 2], leaves rank 2 a gain of at most 1.5, the first, [0, 1], a gain of 2.
    y = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1], [0, 1, 1, 0]], float)
    s = np.array([4, 3, 2, 1.0])
    values = {}
    for ideal_ties in ("last", "first"):
        expected = ref_per_query("alpha_ndcg", y, s, [0] * 4, k=2, ideal_ties=ideal_ties)[0]
        values[ideal_ties] = diversity.alpha_ndcg_score(y, s, qid=[0] * 4, k=2,
                                                        ideal_ties=ideal_ties)
        assert values[ideal_ties] == pytest.approx(expected, abs=1e-12)
    run_dcg = 2 + 2 / math.log2(3)
    assert values["first"] == pytest.approx(1.0)
    # the greedy ideal is no optimum: alpha-nDCG may exceed 1 (ndeval's too)
    assert values["last"] == pytest.approx(run_dcg / (2 + 1.5 / math.log2(3)))
    assert values["last"] > 1


def test_hand_computed_values():
    # subtopics covered: [0], [0, 1], [1], [] in rank order; alpha = 0.5
    y = [[1, 0], [1, 1], [0, 1], [0, 0]]
    s, q = [4, 3, 2, 1], [7] * 4
    gains = [1, 0.5 + 1, 0.5, 0]
    dcg3 = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:3]))
    ideal3 = 2 + 0.5 / math.log2(3) + 0.5 / 2   # [0, 1], then [1] (last of the tie), [0]
    assert diversity.alpha_ndcg_score(y, s, qid=q, k=3) == pytest.approx(dcg3 / ideal3)
    assert diversity.alpha_dcg_score(y, s, qid=q, k=1) == 1.0      # no division at k = 1
    assert diversity.err_ia_score(y, s, qid=q, k=2) == pytest.approx(
        (1 + 1.5 / 2) / (2 + 2 * 0.5 / 2))
    assert diversity.p_ia_score(y, s, qid=q, k=4) == pytest.approx(4 / (4 * 2))
    assert diversity.subtopic_recall_score(y, s, qid=q, k=1) == 0.5
    assert diversity.ap_ia_score(y, s, qid=q) == pytest.approx(((1 + 2 / 2) / 2
                                                                + (1 / 2 + 2 / 3) / 2) / 2)
    nrbp = (1 - 0.5 * 0.5) / 2 * sum(g * 0.5 ** i for i, g in enumerate(gains))
    assert diversity.nrbp_score(y, s, qid=q) == pytest.approx(nrbp)


# --------------------------------------------------------------------------------------
# Input forms, invariances, errors.


def test_sparse_input_and_row_order_and_query_names():
    sparse = pytest.importorskip("scipy.sparse")
    y, s, qid, retrieved = _arrays(5)
    s = s + np.random.default_rng(0).random(s.size)   # no ties: row order cannot matter
    base = diversity.per_query_scores("alpha_ndcg@5", y, s, qid=qid, retrieved=retrieved)
    got = diversity.per_query_scores("alpha_ndcg@5", sparse.csr_matrix(y), s, qid=qid,
                                     retrieved=retrieved)
    np.testing.assert_array_equal(got.score, base.score)
    perm = np.random.default_rng(1).permutation(s.size)
    shuffled = diversity.per_query_scores("alpha_ndcg@5", y[perm], s[perm], qid=qid[perm],
                                          retrieved=retrieved[perm], ideal_ties="last")
    # the ideal's tie order follows the rows, so only its value can move: compare to
    # the oracle on the shuffled rows instead
    expected = ref_per_query("alpha_ndcg", y[perm], s[perm], qid[perm], retrieved[perm], k=5)
    assert shuffled.score.tolist() == pytest.approx(
        [0.0 if expected[q] is None else expected[q] for q in shuffled.qid.tolist()])
    named = diversity.per_query_scores("alpha_ndcg@5", y, s, qid=[f"q{v}" for v in qid],
                                       retrieved=retrieved)
    np.testing.assert_array_equal(np.sort(named.score), np.sort(base.score))


def test_files_and_dicts(tmp_path):
    qrels, run = _collection(4)
    (tmp_path / "qrels").write_text("".join(f"{q} {t} {d} {r}\n" for q, t, d, r in
                                            qrels.itertuples(index=False)))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s} tag\n" for q, d, s in
                                          run.itertuples(index=False)))
    metrics = ["alpha_ndcg@10", "nrbp"]
    frame = diversity.evaluate(qrels, run, metrics)
    files = diversity.evaluate(tmp_path / "qrels", tmp_path / "run", metrics)
    as_dict = {}
    for q, t, d, r in qrels.itertuples(index=False):
        as_dict.setdefault(q, {}).setdefault(t, {})[d] = r
    run_dict = {}
    for q, d, s in run.itertuples(index=False):
        run_dict.setdefault(q, {})[d] = s
    dicts = diversity.evaluate(as_dict, run_dict, metrics)
    for other in (files, dicts):
        assert other.qid.tolist() == frame.qid.tolist()
        for name in metrics:
            np.testing.assert_allclose(other.per_query[name], frame.per_query[name], atol=1e-15)
    assert list(frame.to_pandas().columns) == metrics


def test_no_relevant_policy():
    y = [[1, 0], [0, 1], [0, 0], [0, 0]]
    s, q = [2, 1, 2, 1], [1, 1, 2, 2]
    assert diversity.per_query_scores("strec@1", y, s, qid=q).score.tolist() == [0.5, 0.0]
    assert diversity.per_query_scores("strec@1", y, s, qid=q,
                                      no_relevant="skip").qid.tolist() == [1]
    assert math.isnan(diversity.per_query_scores("nnrbp", y, s, qid=q,
                                                 no_relevant="nan").score[1])
    with pytest.raises(ValueError, match="query has no relevant document"):
        diversity.alpha_ndcg_score(y, s, qid=q, no_relevant="raise")


@pytest.mark.parametrize("call, message", [
    (lambda: diversity.alpha_ndcg_score([[1, np.nan]], [1.0], qid=[0]),
     "y_true .*must have no missing values"),
    (lambda: diversity.alpha_ndcg_score([[1, 0]], [1.0]), "qid is required"),
    (lambda: diversity.alpha_ndcg_score([[1, 0]], [1.0, 2.0], qid=[0]), "same number of rows"),
    (lambda: diversity.alpha_ndcg_score([[1, 0]], [1.0], qid=[0], k=0), "k must be an int"),
    (lambda: diversity.alpha_ndcg_score([[1, 0]], [1.0], qid=[0], alpha=1.0),
     r"alpha must be a finite number in \[0, 1\)"),
    (lambda: diversity.nrbp_score([[1, 0]], [1.0], qid=[0], beta=-1), "beta must be"),
    (lambda: diversity.alpha_ndcg_score([[1, 0]], [1.0], qid=[0], ties="average"),
     "ties='average' is not supported"),
    (lambda: diversity.per_query_scores("alpha_ndgc@5", [[1]], [1.0], qid=[0]),
     "unknown diversity metric"),
    (lambda: diversity.per_query_scores("nrbp@5", [[1]], [1.0], qid=[0]),
     "nrbp takes no cutoff"),
    (lambda: diversity.per_query_scores("p_ia@5", [[1]], [1.0], qid=[0], alpha=0.2),
     "unexpected option"),
    (lambda: diversity.evaluate([("1", "a", "d1", 1)], "not a file", ["nrbp"]), ""),
])
def test_errors_name_the_argument(call, message):
    with pytest.raises((ValueError, OSError)) as info:
        call()
    assert message == "" or __import__("re").search(message, str(info.value)), str(info.value)


def test_qrels_without_a_subtopic_column():
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "relevance": [1]})
    with pytest.raises(ValueError, match="subtopic .or iteration"):
        diversity.evaluate(qrels, {"1": {"d": 1.0}}, ["nrbp"])


def test_declarations_cover_every_kernel():
    y, s, qid, _ = _arrays(9)
    for spec in DIVERSITY_METRICS.values():
        name = f"{spec.name}@3" if spec.k != "none" else spec.name
        value = diversity.per_query_scores(name, y, s, qid=qid).score
        assert np.isfinite(value).all() and (value >= 0).all()
        assert spec.name in IR_NAMES
    assert set(IR_NAMES) == set(DIVERSITY_METRICS)
    assert isinstance(skrank.QueryScores, type)


# --------------------------------------------------------------------------------------
# skrank.evaluate and the command line.


def test_skrank_evaluate_takes_diversity_qrels():
    qrels, run = _collection(6)
    expected = diversity.evaluate(qrels, run, ["alpha_ndcg@10", "nrbp(beta=0.8)"])
    got = skrank.evaluate(qrels=qrels, run=run, metrics=["alpha_ndcg@10", "nrbp(beta=0.8)"])
    assert got.qid.tolist() == expected.qid.tolist()
    for name in expected.per_query:
        np.testing.assert_array_equal(got.per_query[name], expected.per_query[name])
    assert got.mean == expected.mean
    ndeval = _ir_measures_values("NRBP(beta=0.8)", qrels, run)
    np.testing.assert_allclose(got.per_query["nrbp(beta=0.8)"], [ndeval[q] for q in got.qid],
                               atol=1e-9)
    # trec_eval's counts, with "relevant" = covering some subtopic
    retrieved = run.groupby("query_id").size()
    assert got.counts["num_ret"].tolist() == [retrieved[q] for q in got.qid]
    # no_relevant="skip": NaN in the per-query values, left out of the means
    skip = skrank.evaluate(qrels=qrels, run=run, metrics=["strec@5"], no_relevant="skip")
    values = skip.per_query["strec@5"]
    assert skip.mean["strec@5"] == pytest.approx(np.nanmean(values))
    with pytest.raises(skrank.InvalidParameterError, match="cannot be evaluated in one call"):
        skrank.evaluate(qrels=qrels, run=run, metrics=["alpha_ndcg@10", "ndcg@10"])


def test_command_line(tmp_path):
    import io

    from skrank.cli import main

    qrels, run = _collection(7, n_queries=4)
    (tmp_path / "qrels").write_text("".join(f"{q} {t} {d} {r}\n" for q, t, d, r in
                                            qrels.itertuples(index=False)))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s} tag\n" for q, d, s in
                                          run.itertuples(index=False)))
    out = io.StringIO()
    main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "alpha_ndcg@5",
          "-m", "strec@5", "-q"], out=out)
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    # the command line orders tied scores as trec_eval (ndeval -traditional)
    expected = diversity.evaluate(qrels, run, ["alpha_ndcg@5", "strec@5"], ties="trec")
    means = {name.strip(): float(value) for name, q, value in rows if q == "all"}
    assert means == {name: pytest.approx(v, abs=5e-5) for name, v in expected.mean.items()}
    assert len(rows) == 2 * (len(expected.qid) + 1)


def test_intent_weights_equal_the_oracle():
    y, s, qid, retrieved = _arrays(21, n_sub=3)
    n_queries = len(set(qid))
    rng = np.random.default_rng(3)
    weights = rng.random((n_queries, 3)) + 0.05
    cases = [(name, {"k": 3}) for name in ("alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia",
                                           "p_ia", "strec")]
    cases += [("nrbp", {}), ("nnrbp", {}), ("ap_ia", {}), ("alpha_dcg", {"k": 1})]
    for name, options in cases:
        expected = ref_per_query(name, y, s, qid, retrieved, intent_weights=weights, **options)
        got = diversity.per_query_scores(name, y, s, qid=qid, retrieved=retrieved,
                                         intent_weights=weights, no_relevant="nan", **options)
        for q, value in zip(got.qid.tolist(), got.score.tolist()):
            if expected[q] is None:
                assert math.isnan(value)
            else:
                assert value == pytest.approx(expected[q], abs=1e-12), (name, options, q)
        # uniform weights are ndeval's 1 / m
        uniform = diversity.per_query_scores(name, y, s, qid=qid, retrieved=retrieved,
                                             intent_weights=np.ones((n_queries, 3)), **options)
        plain = diversity.per_query_scores(name, y, s, qid=qid, retrieved=retrieved, **options)
        if options.get("k") == 1 and name in ("alpha_dcg", "err_ia"):
            # not normalised at k = 1: the raw gain, which weights of sum 1 divide by m
            plain_m = np.array([len({j for i in np.flatnonzero(qid == q) for j in range(3)
                                     if y[i, j] >= 1}) for q in plain.qid])
            np.testing.assert_allclose(uniform.score * np.maximum(plain_m, 1), plain.score,
                                       atol=1e-12)
        else:
            np.testing.assert_allclose(uniform.score, plain.score, atol=1e-12)
    as_dict = dict(zip(sorted(set(qid.tolist())), weights))
    np.testing.assert_array_equal(
        diversity.per_query_scores("p_ia@3", y, s, qid=qid, intent_weights=as_dict).score,
        diversity.per_query_scores("p_ia@3", y, s, qid=qid, intent_weights=weights).score)


def test_intent_weights_errors():
    y, s, q = [[1, 0], [0, 1]], [2, 1], [0, 0]
    with pytest.raises(ValueError, match="weight > 0"):
        diversity.alpha_ndcg_score(y, s, qid=q, intent_weights=[[1.0, 0.0]])
    with pytest.raises(ValueError, match=r"shape \(n_queries, n_subtopics\) = \(1, 2\)"):
        diversity.alpha_ndcg_score(y, s, qid=q, intent_weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="finite and >= 0"):
        diversity.alpha_ndcg_score(y, s, qid=q, intent_weights=[[1.0, -1.0]])


def test_qrels_checks():
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"query_id": ["1", "1"], "iteration": ["a", None],
                          "doc_id": ["d1", "d2"], "relevance": [1, 1]})
    with pytest.raises(ValueError, match="qrels must have no missing values"):
        diversity.evaluate(qrels, {"1": {"d1": 1.0}}, ["nrbp"])
    plain = pd.DataFrame({"query_id": ["1", "1"], "iteration": ["0", "0"],
                          "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    with pytest.warns(UserWarning, match="one subtopic only"):
        diversity.evaluate(plain, {"1": {"d1": 1.0, "d2": 2.0}}, ["alpha_ndcg@5"])
    with pytest.raises(ValueError, match="lists a document twice"):
        diversity.evaluate([("1", "a", "d1", 1), ("1", "b", "d2", 1)],
                           pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d1"],
                                         "score": [1.0, 2.0]}), ["nrbp"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.booleans(),
                          st.lists(st.integers(0, 1), min_size=3, max_size=3)),
                min_size=1, max_size=14),
       st.sampled_from(["alpha_ndcg", "err_ia", "nerr_ia", "nnrbp", "ap_ia", "strec",
                        "p_ia", "alpha_dcg"]),
       st.sampled_from(["pessimistic", "optimistic", "stable"]),
       st.integers(1, 5))
def test_generated_rankings_equal_the_oracle(rows, name, ties, k):
    qid = np.array([r[0] for r in rows])
    s = np.array([r[1] for r in rows], dtype=float)
    retrieved = np.array([r[2] for r in rows])
    y = np.array([r[3] for r in rows], dtype=float)
    options = {"k": k} if DIVERSITY_METRICS[name].k != "none" else {}
    expected = ref_per_query(name, y, s, qid, retrieved, ties=ties, **options)
    got = diversity.per_query_scores(name, y, s, qid=qid, retrieved=retrieved, ties=ties,
                                     no_relevant="nan", **options)
    for q, value in zip(got.qid.tolist(), got.score.tolist()):
        if expected[q] is None:
            assert math.isnan(value)
        else:
            assert value == pytest.approx(expected[q], abs=1e-12)
            if name in ("p_ia", "strec", "ap_ia"):
                assert 0 <= value <= 1


def test_compare_takes_diversity_evaluations():
    qrels, run = _collection(2)
    other = run.assign(score=np.random.default_rng(1).random(len(run)))
    results = {name: skrank.evaluate(qrels=qrels, run=r, metrics=["alpha_ndcg@5"])
               for name, r in (("a", run), ("b", other))}
    comparison = skrank.compare(results, n_resamples=99, random_state=0)
    assert "alpha_ndcg@5" in str(comparison)


def test_collection_options_are_refused():
    qrels, run = _collection(2, n_queries=3)
    with pytest.raises(skrank.InvalidParameterError, match="missing_queries='zero'"):
        skrank.evaluate(qrels=qrels, run=run, metrics=["nrbp"], missing_queries="zero")
