"""Metric calls as values with one canonical name, and the one plan-and-execute path."""

import warnings

import numpy as np
import pytest
import sklearn
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import check_scoring

import skrank
from tests._reference import FixedScores
import skrank._plan
from skrank._engine.ranking import Depth
from skrank._plan import MetricCall, plan
from skrank._scorer import is_ranking_name

ALL_SPECS = [spec for spec in skrank.METRICS.values()
             if spec.family != "beyond"]   # beyond-accuracy metrics read lists, not y_true
SPECS = [spec for spec in ALL_SPECS if spec.scorer and not spec.inputs]

# Every word any option takes somewhere; each option keeps those its metric accepts.
WORDS = ("average", "stable", "pessimistic", "optimistic", "zero", "one", "skip", "nan",
         "raise", "linear", "exponential", "binary", "trec", "k", "min", "R")
NUMBERS = st.one_of(st.integers(-3, 10**6), st.floats(-1e6, 1e6, allow_nan=False),
                    st.floats(0.0, 1.0), st.floats(1.0, 100.0))
REQUIRED = {"k": 10, "max_grade": 4}


def _accepts(spec, option, value):
    params = {name: REQUIRED[name] for name in spec.parameters if name in REQUIRED}
    params[option] = value
    try:
        spec.check_params("test", params)
    except (ValueError, TypeError):
        return False
    return True


def _values(spec, option):
    if option == "k":
        ks = st.integers(1, 10**6)
        return ks if spec.k == "required" else st.one_of(st.none(), ks)
    words = [w for w in WORDS if _accepts(spec, option, w)]
    if words:
        return st.sampled_from(words)
    return NUMBERS.filter(lambda v: _accepts(spec, option, v))


@st.composite
def calls(draw, specs=ALL_SPECS):
    spec = draw(st.sampled_from(specs))
    params = {}
    for option in spec.parameters:
        if option in REQUIRED and (option != "k" or spec.k == "required") or draw(st.booleans()):
            params[option] = draw(_values(spec, option))
    try:
        return MetricCall.of(spec, params, func="test")
    except (ValueError, TypeError):   # a combination the metric refuses
        assume(False)


# --------------------------------------------------------------------------------------
# The value and its name


@settings(max_examples=400, deadline=None)
@given(calls())
def test_canonical_name_parses_back_to_the_same_call(call):
    name = str(call)
    again = MetricCall.parse(name, inputs=("judged",))
    assert again == call and hash(again) == hash(call), name
    assert str(again) == name


@pytest.mark.parametrize("item, name", [
    ("ndcg@10", "ndcg@10"),
    (("ndcg", {"k": 10, "gain": "exponential"}), "ndcg_exp@10"),
    (("map", {"k": 10, "denominator": "min"}), "map(denominator=min)@10"),
    (("ndcg", {"k": 10, "ties": "stable"}), "ndcg(ties=stable)@10"),
    # options listed in the declaration's order, whatever the order given
    (("ndcg", {"no_relevant": "one", "ties": "stable", "gain": "exponential"}),
     "ndcg_exp(ties=stable, no_relevant=one)"),
    (("map", {"threshold": 2.0}), "map(threshold=2)"),
    (("rbp", {"p": 0.9, "gain": "trec"}), "rbp(p=0.9, gain=trec)"),
    ("ndcg_cut.10", "ndcg@10"),
    ("P_5", "precision@5"),
    ("err@5", "err@5"),
    (("err", {"k": 5, "max_grade": 3}), "err(max_grade=3)@5"),
    ("recip_rank", "mrr"),
    ("judged@10", "judged@10"),
    (("bpref", {"ties": "stable"}), "bpref(ties=stable)"),
])
def test_canonical_names(item, name):
    call = MetricCall.parse(item, trec=True, inputs=("judged",))
    assert str(call) == name
    assert MetricCall.parse(name, inputs=("judged",)) == call


def test_defaults_written_or_not_are_one_call():
    assert MetricCall.parse("ndcg(ties=average, gain=linear)@10") == MetricCall.parse("ndcg@10")
    assert MetricCall.parse("map(denominator=R)") == MetricCall.parse("map")
    assert MetricCall.parse("ndcg@10") != MetricCall.parse("ndcg@9")
    assert len({MetricCall.parse(n) for n in ("ndcg@10", "NDCG@10", ("ndcg", {"k": 10}))}) == 1


@pytest.mark.parametrize("name, fragment", [
    ("map(denominator)@10", "must be name=value pairs separated by commas"),
    ("map(denominator=min, denominator=R)", "option denominator is given twice"),
    ("ndcg(k=10)", "must be written after '@'"),
    ("ndcg_exp(gain=linear)", "'ndcg_exp' already sets gain='exponential'"),
    ("map(denominator=max)@10", "denominator must be one of"),
    ("ndcg(bogus=1)", "got unexpected option(s) 'bogus'"),
])
def test_bad_options_in_a_name(name, fragment):
    with pytest.raises(ValueError, match="^get_scorer: ") as info:
        skrank.get_scorer(name)
    assert fragment in str(info.value)
    assert isinstance(info.value, TypeError)   # the project's parameter error


# --------------------------------------------------------------------------------------
# One grammar everywhere


RNG = np.random.default_rng(0)
QID = np.repeat(np.arange(6), 7)
Y = RNG.integers(0, 3, QID.size).astype(float)
S = RNG.integers(0, 4, QID.size).astype(float)     # ties
X = np.zeros((QID.size, 1))


def _outcome(fn):
    """A value, or the type of the error raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fn()
    except (ValueError, TypeError) as exc:
        return type(exc).__name__
    return "nan" if isinstance(value, float) and np.isnan(value) else value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls(SPECS))
def test_one_grammar_in_every_entry_point(call):
    name = str(call)
    assume(MetricCall.parse(name) == call)   # a name that means the call (always: see above)
    spec = call.spec
    expected = _outcome(lambda: spec.function(Y, S, qid=QID, **call.options))
    assert _outcome(lambda: skrank.evaluate(Y, S, qid=QID, metrics=[name]).mean[name]) \
        == expected
    assert _outcome(lambda: float(np.mean(
        skrank.per_query_scores(name, Y, S, qid=QID).score))) == pytest.approx(expected) \
        if not isinstance(expected, str) else expected
    if not is_ranking_name(name):   # 'recall' without a cutoff is scikit-learn's
        return
    est = FixedScores(S).fit(X, Y)
    with sklearn.config_context(enable_metadata_routing=True):
        for scorer in (skrank.get_scorer(name), skrank.make_ranking_scorer(name),
                       sklearn.metrics.get_scorer(name)):
            assert _outcome(lambda: scorer(est, X, Y, qid=QID)) == expected, repr(scorer)
            assert scorer.name == name and repr(scorer) == f"get_scorer({name!r})"


def test_per_query_scores_takes_full_names():
    got = skrank.per_query_scores("map(denominator=min)@3", Y, S, qid=QID)
    expected = skrank.per_query_scores("map", Y, S, qid=QID, k=3, denominator="min")
    np.testing.assert_array_equal(got.qid, expected.qid)
    np.testing.assert_array_equal(got.score, expected.score)
    with pytest.raises(ValueError, match="already sets k"):
        skrank.per_query_scores("ndcg@10", Y, S, qid=QID, k=5)


def test_evaluate_labels():
    res = skrank.evaluate(Y, S, qid=QID, ties="stable", metrics=[
        "MAP@3", ("map", {"k": 3, "denominator": "min"}), ("ndcg", {"k": 3, "ties": "stable"})])
    # a name keeps its spelling; a pair is labelled by its call (without evaluate's defaults)
    assert list(res.mean) == ["MAP@3", "map(denominator=min)@3", "ndcg(ties=stable)@3"]
    assert res.mean["map(denominator=min)@3"] == skrank.map_score(
        Y, S, qid=QID, k=3, denominator="min", ties="stable")
    res = skrank.evaluate(Y, S, qid=QID, metrics={"mine": "map(denominator=min)@3"})
    assert res.mean == {"mine": skrank.map_score(Y, S, qid=QID, k=3, denominator="min")}


def test_cli_takes_full_names(tmp_path, capsys):
    from skrank.cli import main

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{q} 0 d{i} {int(y)}\n" for i, (q, y) in enumerate(zip(QID, Y))))
    run = tmp_path / "run"
    run.write_text("".join(f"q{q} Q0 d{i} 0 {-i} t\n" for i, q in enumerate(QID)))
    assert main(["evaluate", str(qrels), str(run), "-m", "map(denominator=min)@3",
                 "-m", "ndcg(ties=stable)@2"]) == 0
    rows = dict(line.split("\t")[::2] for line in capsys.readouterr().out.splitlines())
    rows = {name.strip(): float(value) for name, value in rows.items()}
    s = -np.arange(QID.size, dtype=float)    # the run's scores: untied
    assert rows["map(denominator=min)@3"] == round(
        skrank.map_score(Y, s, qid=QID, k=3, denominator="min"), 4)
    assert rows["ndcg(ties=stable)@2"] == round(skrank.ndcg_score(Y, s, qid=QID, k=2), 4)


# --------------------------------------------------------------------------------------
# Plans


def _plan_of(*names):
    return plan("test", [(n, MetricCall.parse(n, inputs=("judged",))) for n in names])


def test_one_ranking_per_tie_policy_as_deep_as_its_metrics_read():
    p = _plan_of("ndcg@10", "precision@3", "mrr(ties=stable)", "err@5")
    assert dict(p.depths) == {"average": Depth(k=10),
                              "stable": Depth(first_relevant=(1,)),
                              "pessimistic": Depth(k=5)}
    assert p.depth is None or p.depth == Depth(k=10, first_relevant=(1,))
    p = _plan_of("ndcg@10", "map", "mrr(threshold=2)", "mrr")
    assert dict(p.depths) == {"average": None}
    p = _plan_of("mrr", "hit_rate(threshold=2)")
    assert dict(p.depths) == {"average": Depth(first_relevant=(1, 2))}
    assert dict(_plan_of("bpref", "judged@5").depths) == {}   # they rank on their own
    assert dict(plan("t", [], ranking_for_counts=True).depths) == {"stable": None}


def _counting(monkeypatch):
    calls = []
    original = skrank._plan.rank_queries

    def counting(*args, **kwargs):
        calls.append(args[6])   # the tie policy
        return original(*args, **kwargs)

    monkeypatch.setattr(skrank._plan, "rank_queries", counting)
    return calls


def test_evaluate_ranks_once_per_tie_policy(monkeypatch):
    calls = _counting(monkeypatch)
    skrank.evaluate(Y, S, qid=QID, metrics=["ndcg@3", "map", "mrr", "err@3", "precision@2"])
    assert sorted(calls) == ["average", "pessimistic"]


THREE = ["ndcg@10", "map", "mrr"]


def sklearn_multimetric(est, scorers):
    """What scikit-learn's search and cross_validate build for a dict ``scoring=``
    (``check_scoring`` takes a dict from 1.5; before, they build the same class)."""
    try:
        return check_scoring(est, scoring=scorers)
    except ValueError:
        from sklearn.metrics._scorer import _MultimetricScorer

        return _MultimetricScorer(scorers=scorers, raise_exc=True)


@pytest.mark.parametrize("how", ["make_ranking_scorer", "sklearn dict"])
def test_multi_metric_scorers_rank_once_and_equal_the_single_scorers(monkeypatch, how):
    est = FixedScores(S).fit(X, Y)
    weight = np.repeat(RNG.uniform(0.5, 2.0, 6), 7)
    with sklearn.config_context(enable_metadata_routing=True):
        singles = {n: skrank.get_scorer(n).set_score_request(sample_weight=True)
                   for n in THREE}
        expected = {n: scorer(est, X, Y, qid=QID, sample_weight=weight)
                    for n, scorer in singles.items()}
        if how == "sklearn dict":
            multi = sklearn_multimetric(est, singles)
        else:
            multi = skrank.make_ranking_scorer(THREE).set_score_request(sample_weight=True)
        calls = _counting(monkeypatch)
        got = multi(est, X, Y, qid=QID, sample_weight=weight)
    assert got == expected             # exactly: the same kernels on the same ranking
    assert len(calls) == 1


def test_sklearn_dict_of_scorers_still_checks_each_metrics_labels():
    est = FixedScores(S).fit(X, Y)
    multi = sklearn_multimetric(est, {"ndcg": skrank.get_scorer("ndcg@3"),
                                       "err": skrank.make_ranking_scorer("err", max_grade=1)})
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match=r"err_score: y_true must lie in \[0, max_grade\]"):
            multi(est, X, Y, qid=QID)


# --------------------------------------------------------------------------------------
# Evaluation.to_dict


def test_to_dict_keys_queries_by_their_ids():
    qid = np.array([1, 1, "1", "1"], dtype=object)
    res = skrank.evaluate([1, 0, 0, 1], [2, 1, 2, 1], qid=qid, metrics=["mrr"])
    data = res.to_dict()
    assert data["per_query"] == {1: {"mrr": 1.0}, "1": {"mrr": 0.5}}
    assert data["qid"] == [1, "1"]


@pytest.mark.parametrize("spec", ALL_SPECS, ids=lambda spec: spec.name)
def test_declared_aggregate_makes_the_score(spec, monkeypatch):
    """execute reads each declaration's aggregate: "mean" is the (weighted) mean of the
    per-query values; a value the plan does not know is an internal error, never a number."""
    y, s, q = [2, 0, 1, 1, 0, 1], [.3, .2, .1, .5, .4, .9], [0, 0, 0, 1, 1, 1]
    params = {"k": 2} if spec.k == "required" else {}
    params.update({"max_grade": 2} if "max_grade" in spec.parameters else {})
    call = MetricCall.of(spec, params, func="f")
    weights = [1, 1, 1, 3, 3, 3]
    column = skrank._plan.per_query("f", call, y, s, q, sample_weight=weights)
    assert spec.aggregate == "mean"
    assert skrank._plan.mean("f", call, y, s, q, sample_weight=weights) == pytest.approx(
        np.average(column.values, weights=[1, 3]), rel=1e-12)

    odd = type(spec)(**{**{f: getattr(spec, f) for f in spec.__dataclass_fields__},
                        "aggregate": "sum"})
    table = {spec.name: odd}
    monkeypatch.setattr(skrank._plan, "spec_of", table.__getitem__)
    with pytest.raises(RuntimeError, match=r"internal error: .*aggregate='sum'"):
        skrank._plan.mean("f", call, y, s, q)
