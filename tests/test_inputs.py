"""Data in the shapes users hold it: DataFrames, dicts, ranked lists, relevant sets,
and the 2-D form with a sparse relevance matrix and ``exclude``.

Oracles: the same collection passed as Qrels/Run, pytrec_eval (trec_eval's code),
the slow per-query reference in tests/_reference.py, and the flat form with the
excluded rows dropped.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import skrank
from skrank.io import Qrels, Run

try:
    from tests._reference import ref_query_value
except ImportError:  # tests/ run as the rootdir
    from _reference import ref_query_value

pd = pytest.importorskip("pandas")

TREC_MEASURES = ["ndcg", "ndcg_cut_10", "map", "map_cut_5", "recip_rank", "P_5", "recall_10",
                 "Rprec", "success_1"]


# --------------------------------------------------------------------------------------
# A random collection in the pytrec_eval shape
# --------------------------------------------------------------------------------------


def random_collection(seed, n_queries=20):
    """qrels {q: {d: grade}} and run {q: {d: score}} with ties, unjudged retrieved documents
    and relevant documents the run did not return."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = list(dict.fromkeys(f"d{rng.integers(0, 400)}" for _ in range(rng.integers(1, 30))))
        judged = rng.random(len(docs)) < 0.6
        grades = rng.choice([0, 0, 1, 2, 3], size=len(docs))
        qrels[qid] = {d: int(g) for d, g, j in zip(docs, grades, judged) if j}
        for extra in range(int(rng.integers(0, 4))):     # relevant, never returned
            qrels[qid][f"u{q}_{extra}"] = int(rng.integers(1, 4))
        if not qrels[qid]:
            qrels[qid]["only"] = 0
        run[qid] = {d: float(s) for d, s in zip(docs, rng.integers(0, 6, len(docs)) / 2)}
    return qrels, run


def as_qrels_run(qrels, run):
    q = [(qid, d, g) for qid, docs in qrels.items() for d, g in docs.items()]
    r = [(qid, d, s) for qid, docs in run.items() for d, s in docs.items()]
    return (Qrels(qid=[x[0] for x in q], docno=[x[1] for x in q], rel=[x[2] for x in q]),
            Run(qid=[x[0] for x in r], docno=[x[1] for x in r], score=[x[2] for x in r]))


def ranked_lists(run):
    """Each query's documents best first, ties by docno descending (trec_eval's order)."""
    return {q: [d for d, _ in sorted(docs.items(), key=lambda ds: (ds[1], ds[0]), reverse=True)]
            for q, docs in run.items()}


def per_query(res):
    return {name: dict(zip(res.qid.tolist(), values.tolist()))
            for name, values in res.per_query.items()}


def assert_same(got, expected):
    assert got.qid.tolist() == expected.qid.tolist()
    for name in expected.per_query:
        np.testing.assert_array_equal(got.per_query[name], expected.per_query[name])
    for name in expected.counts:
        np.testing.assert_array_equal(got.counts[name], expected.counts[name])


def pytrec(qrels, run, threshold=1):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    measures = {"ndcg", "ndcg_cut", "map", "map_cut", "recip_rank", "P", "recall", "Rprec",
                "success"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold)
    return evaluator.evaluate(run)


def assert_matches_pytrec(res, expected):
    values = per_query(res)
    assert sorted(res.qid.tolist()) == sorted(expected)
    for name in TREC_MEASURES:
        for qid, by_name in expected.items():
            assert values[name][qid] == pytest.approx(by_name[name], abs=1e-9), (name, qid)


# --------------------------------------------------------------------------------------
# Every shape gives the values of Qrels/Run and of pytrec_eval
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_dicts_of_dicts_match_qrels_run_and_pytrec_eval(seed):
    qrels, run = random_collection(seed)
    expected = skrank.evaluate(qrels=as_qrels_run(qrels, run)[0],
                               run=as_qrels_run(qrels, run)[1], metrics=TREC_MEASURES)
    got = skrank.evaluate(qrels=qrels, run=run, metrics=TREC_MEASURES)
    assert_same(got, expected)
    assert_matches_pytrec(got, pytrec(qrels, run))


@pytest.mark.parametrize("seed", range(3))
def test_dataframes_match_dicts(seed):
    qrels, run = random_collection(seed)
    expected = skrank.evaluate(qrels=qrels, run=run, metrics=TREC_MEASURES)
    q, r = as_qrels_run(qrels, run)
    q_frame = pd.DataFrame({"query_id": q.qid, "doc_id": q.docno, "relevance": q.rel})
    r_frame = pd.DataFrame({"query_id": r.qid, "doc_id": r.docno, "score": r.score})
    assert_same(skrank.evaluate(qrels=q_frame, run=r_frame, metrics=TREC_MEASURES), expected)
    # Any column names, through the documented mapping; rows in any order.
    renamed_q = q_frame.rename(columns={"query_id": "user_id", "doc_id": "item_id",
                                        "relevance": "rating"}).sample(frac=1, random_state=1)
    renamed_r = r_frame.rename(columns={"query_id": "user_id", "doc_id": "item_id",
                                        "score": "pred"}).sample(frac=1, random_state=2)
    got = skrank.evaluate(
        qrels=Qrels.from_frame(renamed_q, query_id="user_id", doc_id="item_id",
                               relevance="rating"),
        run=Run.from_frame(renamed_r, query_id="user_id", doc_id="item_id", score="pred"),
        metrics=TREC_MEASURES)
    assert_same(got, expected)
    # Categorical id columns (what pandas gives for read_csv(dtype="category")).
    cat_q = q_frame.astype({"query_id": "category", "doc_id": "category"})
    cat_r = r_frame.astype({"query_id": "category", "doc_id": "category"})
    assert_same(skrank.evaluate(qrels=cat_q, run=cat_r, metrics=TREC_MEASURES), expected)


@pytest.mark.parametrize("seed", range(3))
def test_ranked_lists_match_scored_run_and_pytrec_eval(seed):
    qrels, run = random_collection(seed)
    expected = skrank.evaluate(qrels=qrels, run=run, metrics=TREC_MEASURES)
    got = skrank.evaluate(qrels=qrels, run=ranked_lists(run), metrics=TREC_MEASURES)
    np.testing.assert_array_equal(got.qid, expected.qid)
    for name in TREC_MEASURES:
        np.testing.assert_allclose(got.per_query[name], expected.per_query[name], atol=1e-12)
    assert_matches_pytrec(got, pytrec(qrels, run))
    # A DataFrame whose rows are already in rank order, without a score column.
    rows = [(q, d) for q, docs in ranked_lists(run).items() for d in docs]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id"])
    from_frame = skrank.evaluate(qrels=qrels, run=Run.from_frame(frame, score=None),
                                 metrics=TREC_MEASURES)
    for name in TREC_MEASURES:
        np.testing.assert_allclose(from_frame.per_query[name], expected.per_query[name],
                                   atol=1e-12)


@pytest.mark.parametrize("container", [set, list, tuple])
def test_relevant_sets_are_binary_judgements(container):
    qrels, run = random_collection(7)
    binary = {q: {d: 1 for d, g in docs.items() if g >= 1} for q, docs in qrels.items()}
    relevant = {q: container(docs) for q, docs in binary.items()}
    binary = {q: docs for q, docs in binary.items() if docs}
    relevant = {q: docs for q, docs in relevant.items() if docs}
    metrics = [m for m in TREC_MEASURES]
    got = skrank.evaluate(qrels=relevant, run=run, metrics=metrics)
    assert_same(got, skrank.evaluate(qrels=binary, run=run, metrics=metrics))
    assert_matches_pytrec(got, pytrec(binary, {q: run[q] for q in binary}))


def test_int_and_str_ids_compare_as_strings():
    qrels, run = random_collection(3)
    # Integer ids on the qrels side, strings on the run side, and the reverse.
    as_int = {int(q[1:]): {int(d[1:]) if d.startswith("d") else d: g for d, g in docs.items()}
              for q, docs in qrels.items()}
    run_str = {q[1:]: {d[1:]: s for d, s in docs.items()} for q, docs in run.items()}
    qrels_str = {q[1:]: {d[1:] if d.startswith("d") else d: g for d, g in docs.items()}
                 for q, docs in qrels.items()}
    expected = skrank.evaluate(qrels=qrels_str, run=run_str, metrics=TREC_MEASURES)
    got = skrank.evaluate(qrels=as_int, run=run_str, metrics=TREC_MEASURES)
    assert_same(got, expected)
    # int64 and float (integral, as pandas makes of an int column with NaN) columns too.
    q, r = as_qrels_run(qrels_str, run_str)
    r_frame = pd.DataFrame({"query_id": r.qid.astype(np.int64), "doc_id": r.docno.astype(float),
                            "score": r.score})
    assert_same(skrank.evaluate(qrels=qrels_str, run=r_frame, metrics=TREC_MEASURES), expected)


def test_wrong_left_merge_differs_from_the_right_call():
    """The trap the user guides show: a left merge of predictions onto the ground truth
    loses the relevant items the model did not return."""
    truth = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [10, 11, 12, 20],
                          "rating": [1, 1, 1, 1]})
    pred = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": [10, 13, 21, 20],
                         "score": [0.9, 0.8, 0.7, 0.6]})
    right = skrank.evaluate(qrels=Qrels.from_frame(truth, query_id="user_id", doc_id="item_id",
                                                   relevance="rating"),
                            run=Run.from_frame(pred, query_id="user_id", doc_id="item_id"),
                            metrics=["recall@10"])
    # user 1: 1 of 3 relevant returned; user 2: 1 of 1.
    assert right.per_query["recall@10"].tolist() == [1 / 3, 1.0]
    merged = pred.merge(truth, on=["user_id", "item_id"], how="left").fillna({"rating": 0})
    wrong = skrank.recall_at_k_score(merged["rating"], merged["score"], qid=merged["user_id"],
                                     k=10)
    assert wrong == pytest.approx(1.0) and right.mean["recall@10"] == pytest.approx(2 / 3)


# --------------------------------------------------------------------------------------
# Missing and unjudged queries
# --------------------------------------------------------------------------------------


def test_missing_queries_warn_with_their_count_and_follow_the_policy():
    qrels, run = random_collection(5, n_queries=10)
    partial = {q: docs for q, docs in run.items() if q not in ("q2", "q7")}
    with pytest.warns(UserWarning, match=r"2 of the 10 queries of qrels have no prediction "
                                         r"in run \('q2', 'q7'\).*left out") as caught:
        skip = skrank.evaluate(qrels=qrels, run=partial, metrics=["ndcg", "recall@10"])
    assert [w.filename for w in caught] == [__file__]  # the caller's line, not skrank's
    assert sorted(skip.qid.tolist()) == sorted(partial)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an explicit choice is silent
        zero = skrank.evaluate(qrels=qrels, run=partial, metrics=["ndcg", "recall@10"],
                               missing_queries="zero")
    values = per_query(zero)
    assert values["ndcg"]["q2"] == values["ndcg"]["q7"] == 0.0
    assert zero.mean["ndcg"] == pytest.approx(sum(skip.per_query["ndcg"]) / 10)
    with pytest.raises(ValueError, match=r"2 of the 10 queries of qrels have no prediction "
                                         r"in run \('q2', 'q7'\)"):
        skrank.evaluate(qrels=qrels, run=partial, missing_queries="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # nothing missing: no warning
        skrank.evaluate(qrels=qrels, run=run, missing_queries="raise")


def test_unjudged_queries_warn_or_raise():
    qrels, run = random_collection(5, n_queries=6)
    extra = dict(run, extra1={"a": 1.0}, extra2={"b": 1.0}, extra3=["c"])
    with pytest.warns(UserWarning, match=r"3 of the 9 queries of run have no ground truth in "
                                         r"qrels \('extra1', 'extra2', 'extra3'\)"):
        res = skrank.evaluate(qrels=qrels, run=extra, metrics=["ndcg"])
    assert_same(res, skrank.evaluate(qrels=qrels, run=run, metrics=["ndcg"]))
    with pytest.raises(ValueError, match="3 of the 9 queries of run have no ground truth"):
        skrank.evaluate(qrels=qrels, run=extra, unjudged_queries="raise")
    with pytest.raises(ValueError, match="unjudged_queries must be None .* or one of"):
        skrank.evaluate(qrels=qrels, run=run, unjudged_queries="zero")


def test_ignore_identical_ids_drops_a_query_retrieving_itself():
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
    run = {"q1": {"q1": 3.0, "d1": 2.0, "d9": 1.0, "d2": 0.5}, "q2": {"d3": 2.0, "q2": 1.0}}
    by_hand = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}
    metrics = ["mrr", "ndcg@2", "P_1"]
    dropped = skrank.evaluate(qrels=qrels, run=run, metrics=metrics, ignore_identical_ids=True)
    assert_same(dropped, skrank.evaluate(qrels=qrels, run=by_hand, metrics=metrics))
    kept = skrank.evaluate(qrels=qrels, run=run, metrics=metrics)
    assert kept.per_query["mrr"].tolist() == [0.5, 1.0]
    assert dropped.per_query["mrr"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="ignore_identical_ids must be True or False"):
        skrank.evaluate(qrels=qrels, run=run, ignore_identical_ids="yes")


# --------------------------------------------------------------------------------------
# Malformed tables and dicts: errors that name the argument and the offending value
# --------------------------------------------------------------------------------------

QRELS_FRAME = {"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"], "relevance": [1, 0, 2]}
RUN_FRAME = {"query_id": ["a", "a", "b"], "doc_id": ["x", "z", "x"], "score": [.5, .4, .3]}


@pytest.mark.parametrize("side, change, match", [
    ("qrels", lambda f: f.drop(columns="relevance"),
     r"qrels must have a column 'relevance'.*Got columns \['query_id', 'doc_id'\].*Rename the "
     r"columns, or pass skrank.io.Qrels.from_frame\(qrels, query_id=..., doc_id=..., "
     r"relevance=...\)"),
    ("run", lambda f: f.drop(columns="score"), r"run must have a column 'score'"),
    ("run", lambda f: f.rename(columns={"doc_id": "item"}),
     r"run must have a column 'doc_id' \(doc_id\)"),
    ("qrels", lambda f: f.assign(query_id=["a", None, "b"]),
     r"qrels column 'query_id' must not hold missing ids.*1 missing id\(s\), the first at row 1"),
    ("run", lambda f: f.assign(doc_id=[1.0, np.nan, 2.0]),
     r"run column 'doc_id' must not hold missing ids.*first at row 1"),
    ("run", lambda f: f.assign(query_id=pd.Series(["a", None, "b"], dtype="category")),
     r"run column 'query_id' must not hold missing ids"),
    ("qrels", lambda f: f.assign(relevance=[1, np.nan, 2]),
     r"qrels column 'relevance' must hold integer relevance grades. Got nan for query 'a', "
     r"document 'y'"),
    ("qrels", lambda f: f.assign(relevance=[1, 3.5, 2]),
     r"qrels column 'relevance' must hold integer relevance grades. Got 3.5"),
    ("run", lambda f: f.assign(score=[0.5, np.nan, 0.1]),
     r"run column 'score' must hold numbers, not NaN. Got nan for query 'a', document 'z'"),
    ("run", lambda f: f.assign(score=["high", "low", "low"]), r"run column 'score' must hold numbers"),
    ("run", lambda f: f.assign(doc_id=[1.5, 2.0, 3.0]), r"run column 'doc_id' must hold ids.*1.5"),
    ("qrels", lambda f: f.assign(doc_id=["x", "x", "x"]),
     r"duplicate document 'x' for query 'a' in qrels"),
    ("run", lambda f: f.assign(doc_id=["x", "x", "x"]),
     r"duplicate document 'x' for query 'a' in run"),
])
def test_malformed_frames(side, change, match):
    frames = {"qrels": pd.DataFrame(QRELS_FRAME), "run": pd.DataFrame(RUN_FRAME)}
    frames[side] = change(frames[side])
    with pytest.raises((ValueError, TypeError), match=match):
        skrank.evaluate(qrels=frames["qrels"], run=frames["run"])


@pytest.mark.parametrize("qrels, run, match", [
    ({"q": {"a"}}, {"q": ["a", "b", "a"]}, r"duplicate document 'a' for query 'q' in run"),
    ({"q": {"a"}}, {"q": {"a", "b"}}, r"run\['q'\] must be a dict \{doc: score\} or a list.*"
                                      r"A set has no order"),
    ({"q": "a"}, {"q": ["a"]}, r"qrels\['q'\] must be a dict \{doc: grade\} or a set"),
    ({"q": {"a": 1.5}}, {"q": ["a"]}, r"qrels grades must hold integer relevance grades. "
                                      r"Got 1.5 for query 'q', document 'a'"),
    ({"q": {"a": 1}}, {"q": {"a": "high"}}, r"run scores must hold numbers"),
    ({"q": {"a": 1}}, {"q": {"a": float("nan")}}, r"run scores must hold numbers, not NaN. "
                                                   r"Got nan for query 'q', document 'a'"),
    ({None: {"a": 1}}, {"q": ["a"]}, r"qrels query ids must not hold missing ids"),
    ([("q", "a", 1)], {"q": ["a"]}, r"evaluate: qrels must be a Qrels, a path.*Got \[\('q'"),
    ({"q": {"a": 1}}, np.zeros(3), r"evaluate: run must be a Run, a path"),
    ({"q": {"a": 1}}, {}, r"no query of qrels has a prediction in run.*Got qrels queries "
                          r"\('q'\) and run queries \(\)"),
    ({"q1": {"a": 1}}, {1: ["a"]}, r"no query of qrels has a prediction in run.*\('q1'\).*"
                                   r"\('1'\).*compared as strings"),
    ({}, {"q": ["a"]}, r"qrels must hold at least one judged document"),
])
def test_malformed_dicts(qrels, run, match):
    with pytest.raises((ValueError, TypeError), match=match):
        skrank.evaluate(qrels=qrels, run=run)


def test_inputs_are_not_mutated():
    qrels, run = random_collection(1)
    frame = pd.DataFrame({"query_id": ["a", "b"], "doc_id": [1, 2], "score": [0.5, 0.1]})
    copies = (repr(qrels), repr(run), frame.copy())
    skrank.evaluate(qrels=qrels, run=run)
    skrank.evaluate(qrels={"a": {1}}, run=frame)
    assert (repr(qrels), repr(run)) == copies[:2]
    pd.testing.assert_frame_equal(frame, copies[2])


# --------------------------------------------------------------------------------------
# The 2-D form: sparse relevance, exclude, top-k selection
# --------------------------------------------------------------------------------------


def random_matrices(seed, n_users=14, n_items=8, levels=4):
    """Sparse test relevance, sparse training items to exclude, dense tied scores; with a
    user whose items are all excluded, one without test items, and one whose test items
    are all excluded."""
    rng = np.random.default_rng(seed)
    test = np.where(rng.random((n_users, n_items)) < 0.3, rng.integers(1, 4, (n_users, n_items)), 0)
    train = rng.random((n_users, n_items)) < 0.25
    train[test > 0] &= rng.random(int((test > 0).sum())) < 0.2   # a few overlaps
    train[0] = True                        # user 0 ranks nothing
    test[1] = 0                            # user 1 has no test item
    train[2] |= test[2] > 0                # user 2's test items are all excluded
    scores = rng.integers(0, levels, (n_users, n_items)).astype(float)   # many ties
    return test, train, scores


def metric_cases():
    cases = []
    for name, spec in skrank.METRICS.items():
        if spec.inputs:   # bpref, infap, judged@k take judged=, not the 2-D form
            continue
        base = {"max_grade": 3} if name == "err" else {}
        cutoffs = [None, 3] if spec.k == "optional" else [3] if spec.k == "required" else [None]
        for k in cutoffs:
            params = dict(base, **({} if k is None else {"k": k}))
            for ties in ("average", "stable", "pessimistic"):
                if ties in spec.ties:
                    cases.append((name, dict(params, ties=ties)))
    cases.append(("precision", {"k": 3, "denominator": "min", "ties": "average"}))
    cases.append(("map", {"k": 3, "denominator": "min", "ties": "average"}))
    cases.append(("ndcg", {"k": 2, "gain": "exponential", "ties": "average"}))
    return cases


def reference_per_user(name, test, train, scores, params):
    params = dict(params)
    ties = params.pop("ties")
    values = []
    for u in range(test.shape[0]):
        keep = ~train[u]
        value = ref_query_value(name, test[u, keep].tolist(), scores[u, keep].tolist(),
                                ties=ties, **params)
        values.append(0.0 if value is None else value)
    return np.array(values)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name, params", metric_cases(),
                         ids=[f"{n}-{p}" for n, p in metric_cases()])
def test_sparse_top_k_equals_reference(seed, name, params):
    test, train, scores = random_matrices(seed)
    expected = reference_per_user(name, test, train, scores, params)
    for y_true, exclude in [(sp.csr_matrix(test), sp.csr_matrix(train)),
                            (sp.csr_array(test), sp.coo_array(train)),
                            (sp.coo_array(test), train),          # dense boolean mask
                            (test, sp.csr_array(train))]:         # dense labels
        got = skrank.per_query_scores(name, y_true, scores, exclude=exclude, **params)
        np.testing.assert_array_equal(got.qid, np.arange(test.shape[0]))
        np.testing.assert_allclose(got.score, expected, rtol=1e-12, atol=1e-12)
    function = skrank.METRICS[name].function
    assert function(sp.csr_array(test), scores, exclude=sp.csr_array(train), **params) == \
        pytest.approx(expected.mean(), abs=1e-12)


@pytest.mark.parametrize("name, params", metric_cases(), ids=[f"{n}-{p}" for n, p in metric_cases()])
def test_exclude_equals_dropping_rows_of_the_flat_form(name, params):
    test, train, scores = random_matrices(11, n_users=30, n_items=40, levels=6)
    users, items = np.nonzero(~train)
    flat = skrank.per_query_scores(name, test[users, items], scores[users, items], qid=users,
                                   **params)
    got = skrank.per_query_scores(name, sp.csr_array(test), scores,
                                  exclude=sp.csr_array(train), **params)
    # User 0 has no row left in the flat form; every other user matches it.
    np.testing.assert_array_equal(flat.qid, np.arange(1, 30))
    np.testing.assert_allclose(got.score[1:], flat.score, rtol=1e-12, atol=1e-12)


def test_sparse_without_exclude_equals_dense_2d():
    test, _, scores = random_matrices(4, n_users=20, n_items=50, levels=5)
    for name, params in metric_cases():
        dense = skrank.per_query_scores(name, test, scores, **params)
        sparse = skrank.per_query_scores(name, sp.csr_array(test), scores, **params)
        np.testing.assert_allclose(sparse.score, dense.score, rtol=1e-12, atol=1e-12)


def test_users_without_test_items_follow_no_relevant():
    test, train, scores = random_matrices(2)
    y, x = sp.csr_array(test), sp.csr_array(train)
    undefined = ~((test > 0) & ~train).any(axis=1)        # users 0, 1, 2 at least
    assert undefined[:3].all()
    for policy, value in (("zero", 0.0), ("one", 1.0)):
        res = skrank.per_query_scores("ndcg", y, scores, exclude=x, k=3, no_relevant=policy)
        assert (res.score[undefined] == value).all()
    skipped = skrank.per_query_scores("ndcg", y, scores, exclude=x, k=3, no_relevant="skip")
    np.testing.assert_array_equal(skipped.qid, np.flatnonzero(~undefined))
    with pytest.raises(ValueError, match="no relevant document"):
        skrank.ndcg_score(y, scores, exclude=x, no_relevant="raise")


def test_evaluate_on_matrices_shares_one_selection():
    test, train, scores = random_matrices(6, n_users=25, n_items=60, levels=8)
    y, x = sp.csr_array(test), sp.csr_array(train)
    metrics = {name: name for name in ["ndcg@5", "map", "mrr", "precision@3", "recall@10",
                                       "hit_rate"]}
    metrics["err@4"] = ("err", {"k": 4, "max_grade": 3})
    res = skrank.evaluate(y, scores, exclude=x, metrics=metrics)
    singles = {"ndcg@5": skrank.ndcg_score(y, scores, exclude=x, k=5),
               "map": skrank.map_score(y, scores, exclude=x),
               "mrr": skrank.mrr_score(y, scores, exclude=x),
               "precision@3": skrank.precision_at_k_score(y, scores, exclude=x, k=3),
               "recall@10": skrank.recall_at_k_score(y, scores, exclude=x, k=10),
               "hit_rate": skrank.hit_rate_score(y, scores, exclude=x),
               "err@4": skrank.err_score(y, scores, exclude=x, k=4, max_grade=3)}
    for name, value in singles.items():
        assert res.mean[name] == pytest.approx(value, abs=1e-12), name
    # trec_eval's counts: every item not excluded is ranked; R counts live test items.
    np.testing.assert_array_equal(res.counts["num_ret"], (~train).sum(axis=1))
    np.testing.assert_array_equal(res.counts["num_rel"], ((test >= 1) & ~train).sum(axis=1))
    np.testing.assert_array_equal(res.counts["num_rel_ret"], res.counts["num_rel"])


def test_sparse_inputs_are_never_densified(monkeypatch):
    test, train, scores = random_matrices(8, n_users=30, n_items=200)
    y, x = sp.csr_array(test), sp.csr_matrix(train)
    expected = skrank.evaluate(y, scores, exclude=x, metrics=["ndcg@10", "recall@20"]).mean

    def refuse(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_array, sp.csr_matrix, sp.coo_array, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    got = skrank.evaluate(y, scores, exclude=x, metrics=["ndcg@10", "recall@20"]).mean
    assert got == expected
    y_before = y.copy()
    skrank.ndcg_score(y, scores, exclude=x, k=5)
    assert (y != y_before).nnz == 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(y_true=sp.csr_array(np.array([[1.0, -1.0]])), y_score=[[0.5, 0.1]]),
     r"a sparse y_true must be non-negative.*Got -1 at row 0, column 1"),
    (dict(y_true=sp.csr_array(np.ones((2, 3))), y_score=np.zeros((2, 4))),
     r"y_true and y_score must have the same shape. Got \(2, 3\) and \(2, 4\)"),
    (dict(y_true=sp.csr_array(np.ones((2, 3))), y_score=np.zeros((2, 3)),
          exclude=sp.csr_array(np.ones((3, 3)))),
     r"exclude and y_score must have the same shape. Got \(3, 3\) and \(2, 3\)"),
    (dict(y_true=np.ones((2, 3)), y_score=np.zeros((2, 3)), exclude=np.ones((2, 3))),
     r"exclude must be a scipy sparse matrix .* or a boolean array.*float64"),
    (dict(y_true=sp.csr_array(np.ones((2, 3))), y_score=sp.csr_array(np.ones((2, 3)))),
     r"y_score must be a dense 2-D array"),
    (dict(y_true=sp.csr_array(np.ones((2, 3))), y_score=np.array([[0, np.nan, 1], [0, 0, 0]])),
     r"y_score must not contain NaN .* Got nan at row 0, column 1"),
    (dict(y_true=sp.csr_array(np.ones((2, 3))), y_score=np.zeros((2, 3)), qid=[0, 1]),
     r"qid must be None"),
    (dict(y_true=sp.csr_array(np.ones((2, 3))), y_score=np.zeros(6)),
     r"y_score must be 2-D of shape \(n_users, n_items\)"),
])
def test_malformed_matrices(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        skrank.ndcg_score(**kwargs, k=2)
    with pytest.raises((ValueError, TypeError), match=match):
        skrank.evaluate(**kwargs, metrics=["ndcg@2"])


def test_exclude_is_rejected_with_qrels_and_run():
    with pytest.raises(ValueError, match="exclude is for the 2-D form"):
        skrank.evaluate(qrels={"q": {"a"}}, run={"q": ["a"]}, exclude=np.ones((1, 1), bool))


def test_pandas_nullable_and_string_dtypes():
    qrels, run = random_collection(9)
    q, r = as_qrels_run(qrels, run)
    expected = skrank.evaluate(qrels=q, run=r, metrics=TREC_MEASURES)
    q_frame = pd.DataFrame({"query_id": pd.array(q.qid, dtype="string"),
                            "doc_id": pd.array(q.docno, dtype="string"),
                            "relevance": pd.array(q.rel, dtype="Int64")})
    r_frame = pd.DataFrame({"query_id": pd.array(r.qid, dtype="string"),
                            "doc_id": pd.array(r.docno, dtype="string"),
                            "score": pd.array(r.score, dtype="Float64")})
    assert_same(skrank.evaluate(qrels=q_frame, run=r_frame, metrics=TREC_MEASURES), expected)
    q_frame.loc[3, "doc_id"] = pd.NA
    with pytest.raises(ValueError, match="qrels column 'doc_id' must not hold missing ids.*row 3"):
        skrank.evaluate(qrels=q_frame, run=r_frame)
    ids = pd.DataFrame({"query_id": pd.array([1, 2, None], dtype="Int64"), "doc_id": [1, 2, 3],
                        "score": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="run column 'query_id' must not hold missing ids.*row 2"):
        skrank.evaluate(qrels={1: {1}}, run=ids)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_users=st.integers(1, 6), n_items=st.integers(1, 30),
       k=st.integers(1, 8), levels=st.integers(1, 5),
       name=st.sampled_from(["ndcg", "map", "mrr", "recall", "precision", "hit_rate", "rbp"]))
def test_sparse_path_equals_flat_form_property(seed, n_users, n_items, k, levels, name):
    rng = np.random.default_rng(seed)
    test = np.where(rng.random((n_users, n_items)) < 0.3, rng.integers(1, 4, (n_users, n_items)), 0)
    train = rng.random((n_users, n_items)) < 0.3
    scores = rng.integers(0, levels, (n_users, n_items)).astype(float)
    users, items = np.nonzero(~train)
    got = skrank.per_query_scores(name, sp.csr_array(test), scores, exclude=sp.csr_array(train),
                                  k=k)
    assert got.qid.tolist() == list(range(n_users))
    if users.size == 0:
        assert (got.score == 0).all()
        return
    flat = skrank.per_query_scores(name, test[users, items], scores[users, items], qid=users,
                                   k=k)
    np.testing.assert_allclose(got.score[flat.qid], flat.score, rtol=1e-12, atol=1e-12)
    # Users with every item excluded rank nothing: 0 (no_relevant="zero").
    assert (np.delete(got.score, flat.qid) == 0).all()


def test_polars_frames_match_pandas():
    pl = pytest.importorskip("polars")
    qrels, run = random_collection(4)
    q, r = as_qrels_run(qrels, run)
    expected = skrank.evaluate(qrels=q, run=r, metrics=TREC_MEASURES)
    q_frame = pl.DataFrame({"user": q.qid, "item": q.docno, "rating": q.rel})
    r_frame = pl.DataFrame({"query_id": r.qid, "doc_id": r.docno, "score": r.score})
    got = skrank.evaluate(qrels=Qrels.from_frame(q_frame, query_id="user", doc_id="item",
                                                 relevance="rating"),
                          run=r_frame, metrics=TREC_MEASURES)
    assert_same(got, expected)
    with pytest.raises(ValueError, match="frame must have a column 'rating' .*relevance=None"):
        Qrels.from_frame(q_frame.drop("rating"), query_id="user", doc_id="item",
                         relevance="rating")
    with pytest.raises(ValueError, match="frame column 'item' must not hold missing ids.*row 0"):
        Qrels.from_frame(q_frame.with_columns(pl.lit(None, dtype=pl.String).alias("item")),
                         query_id="user", doc_id="item", relevance="rating")


@pytest.mark.parametrize("option", [{"missing_queries": "zero"}, {"missing_queries": "raise"},
                                    {"unjudged_queries": "raise"},
                                    {"ignore_identical_ids": True}])
def test_collection_options_are_refused_with_arrays(option):
    (name, value), = option.items()
    with pytest.raises(skrank.InvalidParameterError,
                       match=rf"evaluate: {name}={value!r} applies to qrels and run only"):
        skrank.evaluate([1, 0], [0.2, 0.1], qid=[0, 0], metrics=["map"], **option)


def _write_collection(tmp_path, seed=0):
    """Files with tied scores, -1 and unjudged documents, a query retrieving itself,
    a run-only query and a judged query absent from the run, queries out of order."""
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    for q in rng.permutation(30):
        docs = [f"d{d}" for d in rng.choice(500, size=int(rng.integers(1, 40)), replace=False)]
        if q % 7 == 0:
            docs[-1] = f"q{q}"  # the query retrieves itself (ignore_identical_ids)
        for d in docs:
            run_lines.append(f"q{q} Q0 {d} 0 {rng.integers(0, 5)} tag\n")
            if q != 3 and rng.random() < 0.5:
                qrels_lines.append(f"q{q} 0 {d} {rng.choice([-1, 0, 1, 2])}\n")
    qrels_lines.append("q999 0 d1 1\n")
    (tmp_path / "qrels").write_text("".join(qrels_lines))
    (tmp_path / "run").write_text("".join(run_lines))
    return tmp_path / "qrels", tmp_path / "run"


@pytest.mark.parametrize("options", [
    {}, {"missing_queries": "zero"}, {"ignore_identical_ids": True},
    {"ties": "optimistic", "threshold": 2}, {"no_relevant": "skip"}, {"ties": "stable"}])
def test_files_and_containers_give_the_same_evaluation(tmp_path, options):
    """Files are read as byte tables and joined on codes; Qrels/Run objects and frames
    as before: the same rows, so the same values, counts and query ids."""
    qrels, run = _write_collection(tmp_path)
    metrics = ["ndcg@10", "map", "mrr", "precision@5", "recall@100", "bpref", "infap",
               "judged@10"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_files = skrank.evaluate(qrels=qrels, run=str(run), metrics=metrics, **options)
        from_objects = skrank.evaluate(qrels=skrank.io.read_qrels(qrels),
                                       run=skrank.io.read_run(run), metrics=metrics, **options)
        q_frame = skrank.io.read_qrels(qrels).to_pandas().set_axis(
            ["query_id", "doc_id", "relevance"], axis=1)
        r_frame = skrank.io.read_run(run).to_pandas()[["qid", "docno", "score"]].set_axis(
            ["query_id", "doc_id", "score"], axis=1)
        from_frames = skrank.evaluate(qrels=q_frame, run=r_frame, metrics=metrics, **options)
    for other in (from_objects, from_frames):
        np.testing.assert_array_equal(from_files.qid, other.qid.astype(str))
        for name in metrics:
            np.testing.assert_array_equal(from_files.per_query[name], other.per_query[name])
            assert from_files.mean[name] == other.mean[name]
        for name, counts in from_files.counts.items():
            np.testing.assert_array_equal(counts, other.counts[name])
    assert from_files.qid.dtype.kind == "U" and "q3" not in from_files.qid  # run-only: out


@pytest.mark.parametrize("seed", range(3))
def test_stable_ties_keep_the_run_row_order(seed):
    """ties='stable' with qrels and run: equal scores keep the run's row order, as the same
    rows given as arrays do (not trec_eval's docno order, which ties='trec', the default
    there, gives); reversing each query's rows changes 'stable', never 'average'."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    qrels_rows, run_rows = [], []
    for q in range(20):
        docs = [f"d{j}" for j in rng.permutation(12)]
        for d in docs[:8]:
            qrels_rows.append((f"q{q}", d, int(rng.integers(0, 3))))
        for d in docs[2:]:  # two judged documents not retrieved, four retrieved unjudged
            run_rows.append((f"q{q}", d, float(rng.integers(0, 3))))  # many ties
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    grades = {(q, d): g for q, d, g in qrels_rows}
    unretrieved = [(q, d) for q, d, _ in qrels_rows if (q, d) not in
                   {(q2, d2) for q2, d2, _ in run_rows}]
    y = np.array([grades.get((q, d), 0) for q, d, _ in run_rows] + [grades[p] for p in unretrieved],
                 dtype=float)
    score = np.array([sc for _, _, sc in run_rows] + [0.0] * len(unretrieved))
    qid = np.array([q for q, _, _ in run_rows] + [q for q, _ in unretrieved])
    retrieved = np.arange(y.size) < len(run_rows)
    metrics = ["ndcg@3", "map", "mrr", "precision@2"]
    frames = skrank.evaluate(qrels=qrels, run=run, metrics=metrics, ties="stable")
    arrays = skrank.evaluate(y, score, qid=qid, retrieved=retrieved, metrics=metrics,
                             ties="stable")
    trec = skrank.evaluate(qrels=qrels, run=run, metrics=metrics)
    backwards = run.iloc[::-1]
    for name in metrics:
        np.testing.assert_allclose(frames.per_query[name], arrays.per_query[name], rtol=1e-12)
    assert any(frames.mean[m] != trec.mean[m] for m in metrics)  # docno order differs
    stable_back = skrank.evaluate(qrels=qrels, run=backwards, metrics=metrics, ties="stable")
    assert any(stable_back.mean[m] != frames.mean[m] for m in metrics)
    average = skrank.evaluate(qrels=qrels, run=run, metrics=metrics, ties="average")
    average_back = skrank.evaluate(qrels=qrels, run=backwards, metrics=metrics, ties="average")
    for name in metrics:
        np.testing.assert_allclose(average_back.per_query[name], average.per_query[name],
                                   rtol=1e-12)


@pytest.mark.parametrize("block_bytes", [16, 300, 1 << 20])
@pytest.mark.parametrize("missing_queries", ["skip", "zero"])
@pytest.mark.parametrize("ties", [None, "stable"])
def test_streamed_evaluation_is_the_in_memory_one(tmp_path, block_bytes, missing_queries, ties):
    from skrank._evaluate import _evaluate_stream
    from skrank._plan import resolve_options
    from skrank.io._read import read_qrels_table

    qrels, run = _write_collection(tmp_path)
    lines = run.read_text().splitlines(keepends=True)
    run.write_text("".join(sorted(lines, key=lambda line: line.split()[0])))  # grouped
    metrics = ["ndcg@10", "map", "err@10", "rbp", "bpref", "infap", "r_precision"]
    with warnings.catch_warnings(record=True) as whole_warnings:
        warnings.simplefilter("always")
        whole = skrank.evaluate(qrels=qrels, run=run, metrics=metrics,
                                missing_queries=missing_queries, ties=ties)
    with warnings.catch_warnings(record=True) as streamed_warnings:
        warnings.simplefilter("always")
        streamed = _evaluate_stream(read_qrels_table(qrels), str(run), block_bytes=block_bytes,
                                    metrics=metrics, missing_queries=missing_queries,
                                    options=resolve_options("evaluate", ties=ties,
                                                            collection=True))
    assert [str(w.message) for w in streamed_warnings] == [str(w.message) for w in whole_warnings]
    np.testing.assert_array_equal(streamed.qid, whole.qid)
    for name in metrics:  # bit for bit: a query's value does not depend on the others
        np.testing.assert_array_equal(streamed.per_query[name], whole.per_query[name])
        assert streamed.mean[name] == whole.mean[name]
    for name, counts in whole.counts.items():
        np.testing.assert_array_equal(streamed.counts[name], counts)
