"""skrank.fuse and skrank.fusion.FusionSearch against ranx 0.3.21 (where installed), a
slow obviously-correct oracle (tests/_fusion_oracle.py), and formulas by hand."""

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank.fusion import METHODS, NORMS, FusionSearch, fuse, weight_grid
from skrank.io import Qrels, Run

try:  # works whether or not tests/ is a package
    from tests import _fusion_oracle as O
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    import _fusion_oracle as O

NORM_NAMES = [None] + [n.name for n in NORMS]
PARAMS = {"gmnz": {"gamma": 0.7}, "rbc": {"phi": 0.6}, "logn_isr": {"sigma": 0.3},
          "rrf": {"k": 5}, "probfuse": {"n_segments": 3}, "slidefuse": {"w": 2}}
WEIGHTS3 = [0.45, 0.35, 0.2]


def as_dict(run):
    out = {}
    for q, d, s in zip(run.qid.tolist(), run.docno.tolist(), run.score.tolist()):
        out.setdefault(q, {})[d] = s
    return out


def assert_same(got, expected, rtol=1e-9, atol=1e-12):
    assert sorted(got) == sorted(expected)
    for q in expected:
        assert sorted(got[q]) == sorted(expected[q]), q
        for d in expected[q]:
            assert math.isclose(got[q][d], expected[q][d], rel_tol=rtol, abs_tol=atol), \
                (q, d, got[q][d], expected[q][d])


def random_runs(rng, n_runs=3, n_queries=4, pool=9, ties=True, same_queries=False,
                full=False):
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(n_queries):
            if not same_queries and rng.random() < 0.15:
                continue  # this run lacks the query
            n = pool if full else int(rng.integers(1, pool + 1))
            docs = rng.permutation(pool)[:n]
            scores = (rng.integers(0, 4, n).astype(float) if ties
                      else rng.permutation(n) + rng.random(n) * 0.5)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return runs


def random_qrels(rng, runs, pool=9):
    queries = sorted({q for run in runs for q in run})
    return {q: {f"d{d}": int(rng.integers(0, 3)) for d in range(pool) if rng.random() < 0.5}
            | {"d0": int(rng.integers(0, 2))} for q in queries}


def cases():
    for m in METHODS:
        norms = ["default"] if m.name == "dbsf" else NORM_NAMES
        for norm in norms:
            if m.trained and norm not in (None, "min-max", "zmuv"):
                continue
            yield m.name, norm


def _oracle_norm(method, norm):
    return next(x for x in METHODS if x.name == method).default_norm if norm == "default" \
        else norm


# --------------------------------------------------------------------------------------
# The oracle: every method x normalisation x tie policy, with ties, missing documents and
# queries, and ragged lists


@pytest.mark.parametrize("ties", ["average", "stable"])
def test_every_method_and_normalisation_against_the_oracle(ties):
    rng = np.random.default_rng(7)
    runs = random_runs(rng)
    qrels = random_qrels(rng, runs)
    for method, norm in cases():
        m = next(x for x in METHODS if x.name == method)
        kw = dict(PARAMS.get(method, {}))
        weights = WEIGHTS3 if m.weighted else None
        got = fuse(runs, method=method, norm=norm, weights=weights, ties=ties,
                   qrels=qrels if m.trained else None, **kw)
        expected = O.fuse(runs, method, _oracle_norm(method, norm), weights, ties, kw,
                          qrels if m.trained else None)
        assert_same(as_dict(got), expected)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       method=st.sampled_from(["rrf", "wsum", "mnz", "med", "condorcet", "bordafuse",
                               "isr", "probfuse", "slidefuse", "bayesfuse", "w_condorcet"]),
       norm=st.sampled_from([None, "min-max", "rank", "borda", "zmuv"]),
       ties=st.sampled_from(["average", "stable"]))
def test_oracle_on_random_inputs(seed, method, norm, ties):
    rng = np.random.default_rng(seed)
    runs = random_runs(rng, n_runs=int(rng.integers(1, 5)), pool=int(rng.integers(1, 8)))
    m = next(x for x in METHODS if x.name == method)
    if m.trained and norm == "borda":
        norm = None
    weights = list(rng.random(len(runs))) if m.weighted else None
    qrels = random_qrels(rng, runs, 8) if m.trained else None
    if not any(runs) or (m.trained and not qrels):
        return
    got = fuse(runs, method=method, norm=norm, weights=weights, ties=ties, qrels=qrels,
               **PARAMS.get(method, {}))
    expected = O.fuse(runs, method, norm, weights, ties, PARAMS.get(method, {}), qrels)
    assert_same(as_dict(got), expected)


# --------------------------------------------------------------------------------------
# ranx 0.3.21, in a subprocess with NUMBA_DISABLE_JIT=1 (compiling ranx takes minutes)

RANX_SCRIPT = textwrap.dedent("""
    import json, sys
    from ranx import Qrels, Run, fuse
    from ranx import fusion as F
    from ranx.normalization import norm_switch

    data = json.load(sys.stdin)
    out = {}
    for key, dataset, method, norm, params in data["cases"]:
        ds = data["datasets"][dataset]
        runs = [Run(r) for r in ds["runs"]]
        params = dict(params)
        train = {"probfuse": F.probfuse_train, "segfuse": F.segfuse_train,
                 "slidefuse": F.slidefuse_train, "bayesfuse": F.bayesfuse_train,
                 "mapfuse": F.mapfuse_train, "posfuse": F.posfuse_train}.get(method)
        if train is not None:
            qrels = Qrels(ds["qrels"])
            norm_runs = runs if norm is None else [norm_switch(norm)(r) for r in runs]
            if method == "probfuse":
                params = {"probs": train(qrels, norm_runs, params.pop("n_segments"))}
            elif method == "slidefuse":
                params = {"probs": train(qrels, norm_runs), "w": params["w"]}
            else:
                name = {"bayesfuse": "log_odds", "mapfuse": "map_scores"}.get(method, "probs")
                params = {name: train(qrels, norm_runs)}
        fused = fuse(runs, norm=norm, method=method, params=params)
        out[key] = {q: {d: float(s) for d, s in docs.items()}
                    for q, docs in fused.to_dict().items()}
    json.dump(out, sys.stdout)
""")


def _ranx_cases():
    """(key, dataset, method, ranx norm, params, skrank norm, weights) where ranx is defined."""
    out = []
    for m in METHODS:
        if m.name == "dbsf":
            continue
        params = dict(PARAMS.get(m.name, {}))
        weights = WEIGHTS3 if m.weighted else None
        if m.weighted:
            params["weights"] = weights
        if m.name == "rrf":
            params.pop("weights")  # ranx's RRF has no weights
            weights = None
        for norm in [None, "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank",
                     "borda"]:
            if m.trained and norm not in (None, "min-max"):
                continue
            dataset = "full" if m.name in ("condorcet", "w_condorcet") else "partial"
            ranx_norm = norm
            if norm == "borda" and m.reads == "ranks":
                # ranx ranks borda-normalised runs in Python set order: compare with ranx
                # without normalisation, on runs that all return the same documents
                dataset, ranx_norm = "full", None
            out.append((f"{m.name}|{norm}", dataset, m.name, ranx_norm, params, norm, weights))
    return out


@pytest.fixture(scope="module")
def ranx_results():
    pytest.importorskip("ranx")
    rng = np.random.default_rng(3)
    datasets = {}
    for name, full in (("partial", False), ("full", True)):
        runs = random_runs(rng, n_runs=3, n_queries=5, pool=10, ties=False, same_queries=True,
                           full=full)
        datasets[name] = {"runs": runs, "qrels": random_qrels(rng, runs, 10)}
    cases = _ranx_cases()
    payload = {"datasets": datasets,
               "cases": [[key, ds, method, norm, {k: v for k, v in params.items()}]
                         for key, ds, method, norm, params, _, _ in cases]}
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", RANX_SCRIPT], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return datasets, cases, json.loads(proc.stdout)


def test_against_ranx(ranx_results):
    datasets, cases, results = ranx_results
    checked = 0
    for key, ds, method, _, params, norm, weights in cases:
        runs, qrels = datasets[ds]["runs"], datasets[ds]["qrels"]
        m = next(x for x in METHODS if x.name == method)
        kw = {k: v for k, v in params.items() if k != "weights"}
        got = as_dict(fuse(runs, method=method, norm=norm, weights=weights,
                           qrels=qrels if m.trained else None, **kw))
        expected = results[key]
        if method in ("condorcet", "w_condorcet"):
            # ranx's comparator is defined where the majority order is strict: the
            # queries where Copeland's counts are all different (a transitive tournament)
            expected = {q: v for q, v in expected.items()
                        if len(set(got[q].values())) == len(got[q])}
            assert expected, "no query with a strict majority order in the data"
            got = {q: got[q] for q in expected}
        assert_same(got, expected, rtol=1e-9, atol=1e-12)
        checked += 1
    assert checked == len(cases) > 150


# --------------------------------------------------------------------------------------
# Hand-computed examples


BM25 = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 5.0}}
DENSE = {"q1": {"b": 0.9, "d": 0.5}}


def test_rrf_by_hand():
    got = as_dict(fuse([BM25, DENSE], method="rrf"))
    assert got["q1"] == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 63,
                                       "d": 1 / 62}, rel=1e-15)
    # q2 is in one run only: fused from the runs that have it
    assert got["q2"] == pytest.approx({"x": 1 / 61})
    weighted = as_dict(fuse([BM25, DENSE], method="rrf", weights=[2, 1], k=0))
    assert weighted["q1"]["b"] == pytest.approx(2 / 2 + 1 / 1)


def test_score_methods_by_hand():
    # min-max: BM25 q1 -> a 1, b 0.5, c 0; DENSE q1 -> b 1, d 0; BM25 q2 (one doc) -> 0
    s = {m: as_dict(fuse([BM25, DENSE], method=m)) for m in
         ("sum", "mnz", "anz", "max", "min", "med")}
    assert s["sum"]["q1"] == pytest.approx({"a": 1, "b": 1.5, "c": 0, "d": 0})
    assert s["mnz"]["q1"]["b"] == pytest.approx(1.5 * 2)
    assert s["anz"]["q1"]["b"] == pytest.approx(1.5 / 2)
    assert s["max"]["q1"]["b"] == 1 and s["min"]["q1"]["b"] == 0.5
    assert s["med"]["q1"]["b"] == pytest.approx(0.75)
    assert s["sum"]["q2"] == {"x": 0.0}  # one document: no division by zero, no NaN
    gmnz = as_dict(fuse([BM25, DENSE], method="gmnz", gamma=0.5))
    assert gmnz["q1"]["b"] == pytest.approx(1.5 * 2 ** 0.5)
    wmnz = as_dict(fuse([BM25, DENSE], method="wmnz", weights=[0.25, 0.75]))
    assert wmnz["q1"] == pytest.approx({"a": 1 * 0.25, "b": 1.5 * 1.0, "c": 0, "d": 0})


def test_borda_and_condorcet_by_hand():
    # q1 candidates a, b, c, d (n=4); BM25 ranks a b c (d unranked: (4 - 3 + 1) / 2 = 1);
    # DENSE ranks b d (a, c unranked: (4 - 2 + 1) / 2 = 1.5)
    got = as_dict(fuse([BM25, DENSE], method="bordafuse"))["q1"]
    assert got == {"a": 4 + 1.5, "b": 3 + 4, "c": 2 + 1.5, "d": 1 + 3}
    # Copeland: b beats a (1 run to 0: DENSE ranks b, not a; BM25 ranks a first... 1-1 tie)
    cond = as_dict(fuse([BM25, DENSE, DENSE], method="condorcet"))["q1"]
    # b: beats a (2-1), c (3-0), d (3-0) -> 4; a: beats c (1-0), d? BM25 a<inf, DENSE d<inf
    # twice -> d beats a 2-1; so a: 1 + 1 = 2; d: beats a, c (2-1 each) -> 3; c: 1
    assert cond == {"b": 4.0, "d": 3.0, "a": 2.0, "c": 1.0}


def test_ties_average_gives_the_mean_contribution():
    runs = [{"q": {"a": 1.0, "b": 1.0, "c": 0.0}}]
    avg = as_dict(fuse(runs, method="rrf", k=0))["q"]
    assert avg == pytest.approx({"a": (1 / 1 + 1 / 2) / 2, "b": (1 / 1 + 1 / 2) / 2,
                                 "c": 1 / 3})
    stable = as_dict(fuse(runs, method="rrf", k=0, ties="stable"))["q"]
    assert stable == pytest.approx({"a": 1.0, "b": 0.5, "c": 1 / 3})


def test_constant_scores_and_dbsf():
    runs = [{"q": {"a": 2.0, "b": 2.0}}, {"q": {"a": 1.0, "b": 3.0, "c": 5.0}}]
    for norm in ("min-max", "max", "sum", "zmuv", "min-max-inverted", "dbsf"):
        out = fuse(runs, method="wsum", norm=norm)
        assert np.all(np.isfinite(out.score))
    got = as_dict(fuse(runs, method="dbsf"))["q"]
    sd = math.sqrt(8 / 3)  # second run: mean 3, population std sqrt(8/3)
    scaled = {d: (s - (3 - 3 * sd)) / (6 * sd) for d, s in runs[1]["q"].items()}
    assert got == pytest.approx({"a": 0.5 + scaled["a"], "b": 0.5 + scaled["b"],
                                 "c": scaled["c"]})


def test_depth_cuts_each_run_before_fusing():
    runs = [{"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q": {"c": 9.0, "d": 8.0, "a": 1.0}}]
    cut = [{"q": {"a": 3.0, "b": 2.0}}, {"q": {"c": 9.0, "d": 8.0}}]
    for method in ("rrf", "wsum", "mnz"):
        assert_same(as_dict(fuse(runs, method=method, depth=2)),
                    as_dict(fuse(cut, method=method)))


def test_input_forms_agree_and_output_is_a_run(tmp_path):
    pd = pytest.importorskip("pandas")
    run = Run(qid=["q1", "q1", "q1", "q2"], docno=["a", "b", "c", "x"],
              score=[3.0, 2.0, 1.0, 5.0])
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["b", "d"], "score": [0.9, 0.5]})
    path = tmp_path / "dense.run"
    path.write_text("q1 Q0 b 1 0.9 dense\nq1 Q0 d 2 0.5 dense\n")
    a = fuse([run, frame], method="rrf")
    b = fuse([BM25, str(path)], method="rrf")
    c = fuse({"bm25": BM25, "dense": {"q1": ["b", "d"]}}, method="rrf")
    assert isinstance(a, Run)
    for other in (b, c):
        assert_same(as_dict(other), as_dict(a))
    assert a.rank.tolist() == [1, 2, 3, 4, 1]
    qrels = {"q1": {"b": 1}, "q2": {"x": 1}}
    assert skrank.evaluate(qrels=qrels, run=a, metrics=["mrr"]).mean["mrr"] == 1.0


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), method=st.sampled_from(["rrf", "wsum", "condorcet",
                                                               "bordafuse", "med"]))
def test_row_order_and_id_renaming_do_not_matter(seed, method):
    rng = np.random.default_rng(seed)
    runs = random_runs(rng, n_runs=2)
    base = as_dict(fuse(runs, method=method))
    shuffled = []
    for run in runs:
        rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
        rows = [rows[i] for i in rng.permutation(len(rows))]
        frame = Run(qid=[r[0] for r in rows], docno=["z" + r[1] for r in rows],
                    score=[r[2] for r in rows])
        shuffled.append(frame)
    got = as_dict(fuse(shuffled, method=method))
    renamed = {q: {"z" + d: s for d, s in docs.items()} for q, docs in base.items()}
    assert_same(got, renamed)


def test_rank_methods_ignore_increasing_transforms():
    rng = np.random.default_rng(1)
    runs = random_runs(rng)
    moved = [{q: {d: math.exp(s) * 3 - 7 for d, s in docs.items()} for q, docs in run.items()}
             for run in runs]
    for m in METHODS:
        if m.reads == "ranks" and m.name != "segfuse":
            qrels = random_qrels(rng, runs) if m.trained else None
            assert_same(as_dict(fuse(moved, method=m.name, qrels=qrels)),
                        as_dict(fuse(runs, method=m.name, qrels=qrels)))


def test_inputs_are_not_mutated():
    run = Run(qid=["q", "q"], docno=["a", "b"], score=[1.0, 2.0])
    before = run.score.copy()
    fuse([run, {"q": {"a": 1.0}}], method="wsum", norm="zmuv")
    assert np.array_equal(run.score, before)


# --------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="rfr"), r"fuse: method must be one of .* Got 'rfr' instead\. Did you mean 'rrf'"),
    (dict(method="rrf", norm="minmax"), r"norm must be one of .*Did you mean 'min_max'"),
    (dict(method="rrf", gamma=0.5), r"method 'rrf' takes k, weights\. Got gamma=0.5"),
    (dict(method="sum", weights=[1, 1]), r"method 'sum' takes no weights"),
    (dict(method="wsum", weights=[1]), r"weights must be 2 numbers, one per run\. Got 1"),
    (dict(method="wsum", weights=[1, -1]), r"weights must be finite and non-negative\. "
                                           r"Got -1.0 for runs\[1\]"),
    (dict(method="rrf", k=-1), r"fuse: k must be a finite number in \[0, inf\)"),
    (dict(method="rbc", phi=1), r"phi must be a finite number in \(0, 1\)"),
    (dict(method="probfuse"), r"method 'probfuse' is trained on judgements. Got qrels=None"),
    (dict(method="rrf", qrels={"q": {"a": 1}}), r"method 'rrf' is not trained"),
    (dict(method="dbsf", norm="min-max"), r"method 'dbsf' normalises the scores itself"),
    (dict(method="rrf", ties="first"), r"ties must be one of 'average', 'stable'"),
    (dict(method="rrf", depth=0), r"depth must be None \(no cut\) or an int >= 1"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(skrank.InvalidParameterError, match=match):
        fuse([{"q": {"a": 1.0}}, {"q": {"a": 2.0}}], **kwargs)


def test_bad_runs():
    with pytest.raises(ValueError, match=r"fuse: runs\[1\] scores must hold numbers, not NaN\. "
                                         r"Got nan for query 'q', document 'b'"):
        fuse([{"q": {"a": 1.0}}, {"q": {"b": float("nan")}}])
    nan_run = Run(qid=["q"], docno=["b"], score=[np.nan])
    with pytest.raises(ValueError, match=r"fuse: runs\[1\] must have finite scores\. Got nan "
                                         r"for query 'q', document 'b'"):
        fuse([{"q": {"a": 1.0}}, nan_run])
    with pytest.raises(ValueError, match=r"runs\['dense'\] must have finite scores\. Got inf"):
        fuse({"bm25": {"q": {"a": 1.0}}, "dense": {"q": {"b": float("inf")}}})
    dup = Run(qid=["q", "q"], docno=["a", "a"], score=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"runs\[0\] must hold each document once per query\. "
                                         r"Got document 'a' twice for query 'q'"):
        fuse([dup, {"q": {"a": 1.0}}])
    with pytest.raises(skrank.InvalidParameterError, match="at least one run"):
        fuse([])
    with pytest.raises(TypeError, match=r"runs\[0\] must be"):
        fuse([42])


def test_int_and_str_query_ids_are_the_same_query():
    a = fuse([{1: {"a": 1.0}}, {"1": {"a": 2.0}}], method="mnz", norm=None)
    assert a.qid.tolist() == ["1"] and a.score.tolist() == [6.0]


# --------------------------------------------------------------------------------------
# Tuning


def test_weight_grid_is_exact():
    assert len(weight_grid(2)) == 11
    assert len(weight_grid(3)) == math.comb(12, 2) == 66
    assert len(weight_grid(4)) == math.comb(13, 3)
    for w in weight_grid(3):
        assert round(sum(w) * 10) == 10 and all(x >= 0 for x in w)
    assert len(set(weight_grid(3))) == 66
    with pytest.raises(skrank.InvalidParameterError, match="step must divide 1"):
        weight_grid(2, step=0.3)


def _search_data(seed=0, n_queries=12):
    rng = np.random.default_rng(seed)
    qrels, good, bad, noise = {}, {}, {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        rel = [f"d{j}" for j in range(3)]
        qrels[q] = {d: 1 for d in rel}
        docs = [f"d{j}" for j in range(10)]
        good[q] = {d: float(10 - j + rng.normal(0, 3)) for j, d in enumerate(docs)}
        bad[q] = {d: float(rng.random()) for d in docs}
        noise[q] = {d: float(j + rng.normal(0, 3)) for j, d in enumerate(docs)}
    return qrels, {"good": good, "bad": bad, "noise": noise}


def test_fusion_search_selects_on_training_queries_only():
    from skrank.model_selection import QueryKFold

    qrels, runs = _search_data()
    search = FusionSearch(method="wsum", metric="ndcg@5", cv=QueryKFold(3)).fit(runs, qrels)
    res = search.cv_results_
    assert len(res["params"]) == 66
    assert search.best_score_ == pytest.approx(res["mean_test_score"].max())
    assert res["rank_test_score"][search.best_index_] == 1
    # recompute each fold's choice from the training queries by hand
    queries = np.array(sorted(qrels))
    folds = list(QueryKFold(3).split(queries.reshape(-1, 1), qid=queries))
    per_combo = []
    for combo in res["params"]:
        ev = skrank.evaluate(qrels=qrels, run=fuse(runs, method="wsum", **combo),
                             metrics=["ndcg@5"])
        per_combo.append(dict(zip(ev.qid.tolist(), ev.per_query["ndcg@5"].tolist())))
    for fi, (train, test) in enumerate(folds):
        train_means = [np.mean([v[q] for q in queries[train]]) for v in per_combo]
        test_means = [np.mean([v[q] for q in queries[test]]) for v in per_combo]
        assert np.allclose(res[f"split{fi}_test_score"], test_means)
        best = int(np.argmax(np.round(train_means, 12)))
        assert search.chosen_params_[fi] == res["params"][best]
        for q in queries[test]:
            assert search.heldout_[1][queries.tolist().index(q)] == pytest.approx(
                per_combo[best][q])
    # the held-out run evaluates to the held-out values, and compare takes it
    ev = skrank.evaluate(qrels=qrels, run=search.heldout_run_, metrics=["ndcg@5"])
    assert np.allclose(ev.per_query["ndcg@5"], search.heldout_[1])
    single = skrank.evaluate(qrels=qrels, run=runs["good"], metrics=["ndcg@5"])
    cmp = skrank.compare({"fused": ev, "good": single}, n_resamples=200, random_state=0)
    assert len(cmp.pairs) == 1
    best_run = search.predict(runs)
    assert_same(as_dict(best_run), as_dict(fuse(runs, method="wsum", **search.best_params_)))


def test_fusion_search_param_grid_and_trained_method():
    qrels, runs = _search_data(1, n_queries=8)
    search = FusionSearch(method="rrf", metric="mrr", cv=2,
                          param_grid={"k": [1, 60]}).fit(runs, qrels)
    assert [p["k"] for p in search.cv_results_["params"]] == [1, 60]
    trained = FusionSearch(method="probfuse", metric="mrr", cv=2,
                           param_grid={"n_segments": [2, 5]}).fit(runs, qrels)
    assert trained.best_params_["n_segments"] in (2, 5)
    assert np.all(np.isfinite(trained.heldout_[1]))
    with pytest.raises(skrank.InvalidParameterError, match="takes no weights"):
        FusionSearch(method="sum", cv=2, param_grid={"weights": [(1, 1, 1)]}).fit(runs, qrels)


# --------------------------------------------------------------------------------------
# Command line


def test_cli_fuse_writes_a_trec_run(tmp_path, capsys, monkeypatch):
    import gzip
    import io as _io

    from skrank.cli import main

    bm25 = tmp_path / "bm25.run"
    bm25.write_text("q1 Q0 a 1 3.0 bm25\nq1 Q0 b 2 2.0 bm25\nq2 Q0 x 1 5 bm25\n")
    dense = tmp_path / "dense.run.gz"
    with gzip.open(dense, "wt") as f:
        f.write("q1 Q0 b 1 0.9 dense\nq1 Q0 d 2 0.5 dense\n")
    out = _io.StringIO()
    assert main([ "fuse", str(bm25), str(dense), "-m", "rrf", "-p", "k=10"], out=out) == 0
    written = skrank.io.read_run(_io.BytesIO(out.getvalue().encode()))
    expected = fuse({"a": str(bm25), "b": str(dense)}, method="rrf", k=10)
    assert_same(as_dict(written), as_dict(expected), rtol=0, atol=0)
    assert out.getvalue().splitlines()[0] == f"q1 Q0 b 1 {1 / 12 + 1 / 11!r} rrf"
    target = tmp_path / "fused.run.gz"
    monkeypatch.setattr("sys.stdin", _io.TextIOWrapper(_io.BytesIO(dense.read_bytes())))
    assert main(["fuse", str(bm25), "-", "-m", "wsum", "-w", "0.3,0.7", "-o",
                 str(target)]) == 0
    assert_same(as_dict(skrank.io.read_run(target)),
                as_dict(fuse([str(bm25), str(dense)], method="wsum", weights=[0.3, 0.7])),
                rtol=0, atol=0)
    assert main(["fuse", str(bm25), str(dense), "-m", "rfr"], out=_io.StringIO()) == 2
    assert "Did you mean 'rrf'?" in capsys.readouterr().err
    assert main(["fuse", str(bm25), str(dense), "-p", "k"], out=_io.StringIO()) == 2
    assert "--param must be NAME=VALUE" in capsys.readouterr().err


def test_every_declared_method_has_a_kernel_and_oracle():
    from skrank._fusion import KERNELS, METHOD_BY_NAME

    assert set(KERNELS) == {m.name for m in METHODS}
    assert len({m.name for m in METHODS}) == len(METHODS)
    ranx_names = {"wsum", "rrf", "isr", "log_isr", "logn_isr", "sum", "mnz", "anz", "gmnz",
                  "max", "min", "med", "bordafuse", "w_bordafuse", "condorcet",
                  "w_condorcet", "rbc", "mixed", "wmnz", "probfuse", "segfuse", "slidefuse",
                  "bayesfuse", "mapfuse", "posfuse"}
    assert ranx_names <= set(METHOD_BY_NAME)
    for alias in ("comb_sum", "comb_mnz", "weighted_bordafuse", "weighted_condorcet"):
        assert alias in METHOD_BY_NAME
    assert {n.name for n in NORMS} >= {"min-max", "min-max-inverted", "max", "sum", "zmuv",
                                        "rank", "borda"}
    oracle_source = open(O.__file__).read()
    for m in METHODS:  # the oracle knows every method
        assert f'"{m.name}"' in oracle_source


def test_docs_table_is_the_declarations():
    from pathlib import Path

    from skrank._fusion import methods_markdown

    page = (Path(__file__).resolve().parents[1] / "docs" / "fusion.md").read_text()
    assert methods_markdown() in page


def test_fusion_search_follows_estimator_conventions():
    from sklearn.base import clone

    search = FusionSearch(method="rrf", metric="mrr", cv=3, param_grid={"k": [1, 60]})
    assert clone(search).get_params() == search.get_params()
    assert repr(search) == "FusionSearch(method='rrf', metric='mrr', cv=3, param_grid={'k': [1, 60]})"
    assert search.set_params(cv=2).cv == 2
    with pytest.raises(ValueError, match="call fit"):
        search.predict([{"q": {"a": 1.0}}])
    with pytest.raises(skrank.InvalidParameterError, match="Got 'bogus' instead"):
        search.set_params(bogus=1)


@pytest.mark.parametrize("runs", [[{}, {}], [{"q": {"a": 1.0}}, {}], [{"q": []}, {"q": {"a": 2.0}}]])
def test_empty_runs_and_queries(runs):
    for m in METHODS:
        for norm in ("default", None, "borda", "rank"):
            if m.name == "dbsf" and norm != "default":
                continue
            out = fuse(runs, method=m.name, norm=norm, qrels={"q": {"a": 1}} if m.trained else None)
            assert np.all(np.isfinite(out.score))
            assert len(out) == len({(q, d) for r in runs for q, docs in r.items() for d in docs})
