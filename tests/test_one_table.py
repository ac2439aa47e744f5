"""One metric table and one grammar (issue 24, the logical half).

- bpref, infAP and judged@k are declarations of :data:`skrank.METRICS`: their extra
  input ``judged`` is declared (``inputs``), as is the executor that builds their
  ranking; nothing branches on a metric's name.  Scorer names leave out the
  metrics whose declarations read an input a scorer cannot be given.
- One grammar reads every spelling of a name (``ndcg_exp@10``,
  ``map(denominator=min)@10``, ``ndcg_cut.10``, ``P.5``, ``P_5``, ``judged@5``); the
  cutoff's rule lives in the metric's ``k`` Param; the command line reads a name once.
"""

import dataclasses
from types import MappingProxyType

import numpy as np
import pytest

import skrank
import skrank._declare.names
import skrank._plan
from skrank._trec import judged as TJ
from skrank._declare.table import METRICS, MetricSpec, TABLE
from skrank._declare.names import metric_names, parse_metric_name, split_name
from skrank._declare.params import Interval, K
from skrank._plan import MetricCall

Y = [2, 0, 1, 1, 0, 1]
S = [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]
Q = [0, 0, 0, 1, 1, 1]
JUDGED = [True, False, True, True, True, False]


def _with_table(monkeypatch, *specs):
    """The table with ``specs`` added or replacing those of their names, everywhere
    names and calls are read."""
    table = MappingProxyType({**METRICS, **{spec.name: spec for spec in specs}})
    monkeypatch.setattr(skrank._declare.names, "METRICS", table)
    # the plan reads every declaration, trec_eval's own measures too
    monkeypatch.setattr(skrank._plan, "TABLE", MappingProxyType({**TABLE, **table}))
    return table


# ---------------------------------------------------------------------------
# One table.


def test_judged_metrics_are_declarations_of_the_table():
    for name in ("bpref", "infap", "judged"):
        spec = skrank.METRICS[name]
        assert isinstance(spec, MetricSpec)
        assert spec.inputs == ("judged",) and not spec.scorer
        assert spec.executor is TJ.judged_columns
    assert all(spec.scorer for spec in skrank.METRICS.values() if not spec.inputs)


def test_scorer_names_follow_the_declared_inputs(monkeypatch):
    """A metric is left out of the scorer names because its declaration reads an input,
    whatever its name: declaring mrr with inputs removes it, and the scorer parser
    refuses it; the callers that give the input read it."""
    assert "mrr@10" in metric_names()
    _with_table(monkeypatch, dataclasses.replace(METRICS["mrr"], inputs=("judged",)))
    assert "mrr" not in metric_names() and "mrr@10" not in metric_names()
    with pytest.raises(skrank.InvalidParameterError, match="unknown metric name 'mrr@10'"):
        parse_metric_name("mrr@10", func="get_scorer")
    spec, params = parse_metric_name("mrr@10", inputs=("judged",))
    assert spec.name == "mrr" and params == {"k": 10}


def test_a_scorer_asked_for_a_judged_metric_says_what_it_reads():
    with pytest.raises(skrank.InvalidParameterError) as info:
        skrank.get_scorer("bpref")
    message = str(info.value)
    assert "bpref, infap, judged@<k> read judged=" in message
    assert "Did you mean" not in message


def _twice_judged(r, *, k, convention="trec_eval"):
    return 2 * r.count(r.rel >= 0, k) / float(k)


def test_a_new_metric_with_the_judged_executor_runs_by_its_declaration(monkeypatch):
    """A metric declared with the judged executor and its own kernel runs through
    evaluate and per_query_scores: no list of names decides how a metric runs."""
    base = METRICS["judged"]
    twice = dataclasses.replace(base, name="twice_judged", kernel=_twice_judged,
                                variants={"twice_judged": {}}, aliases={}, trec_names={})
    _with_table(monkeypatch, twice)
    res = skrank.evaluate(Y, S, qid=Q, judged=JUDGED, metrics=["twice_judged@2", "judged@2"])
    # q0: top 2 = (judged, not judged) -> 1/2; q1: (judged, judged) -> 1
    np.testing.assert_allclose(res.per_query["judged@2"], [0.5, 1.0])
    np.testing.assert_allclose(res.per_query["twice_judged@2"], [1.0, 2.0])


def test_judged_metrics_share_the_plan_with_table_metrics():
    res = skrank.evaluate(Y, S, qid=Q, judged=JUDGED, metrics=["bpref", "ndcg@2", "judged@3"])
    assert list(res.mean) == ["bpref", "ndcg@2", "judged@3"]
    np.testing.assert_allclose(res.per_query["judged@3"], [2 / 3, 2 / 3])
    for name, function, options in (("bpref", skrank.bpref_score, {}),
                                    ("judged@3", skrank.judged_at_k_score, {"k": 3})):
        assert res.mean[name] == pytest.approx(function(Y, S, qid=Q, judged=JUDGED,
                                                        **options))


# ---------------------------------------------------------------------------
# One grammar.


@pytest.mark.parametrize("name, parts", [
    ("ndcg_exp@10", ("ndcg_exp", None, "@", "10")),
    ("map(denominator=min)@10", ("map", "denominator=min", "@", "10")),
    ("ndcg_cut.10", ("ndcg_cut", None, ".", "10")),
    ("P.5", ("P", None, ".", "5")),
    ("P_5", ("P", None, "_", "5")),
    ("judged@5", ("judged", None, "@", "5")),
    ("recip_rank", ("recip_rank", None, None, None)),
    ("hit_rate@3", ("hit_rate", None, "@", "3")),
])
def test_one_grammar_splits_every_spelling(name, parts):
    assert tuple(split_name(name)) == parts


@pytest.mark.parametrize("name", ["P@5", "p@5", "precision@5", "P.5", "P_5"])
def test_every_spelling_of_precision_at_5_is_one_call(name):
    spec, params = parse_metric_name(name, trec=True)
    assert (spec.name, params) == ("precision", {"k": 5})


@pytest.mark.parametrize("name", ["P.5", "P_5", "ndcg_cut.10", "recip_rank"])
def test_trec_spellings_need_trec(name):
    with pytest.raises(skrank.InvalidParameterError, match="unknown metric name"):
        parse_metric_name(name)


def test_judged_names_in_the_one_grammar():
    inputs = ("judged",)
    assert MetricCall.parse("judged(ties=stable)@5", inputs=inputs).options == {
        "k": 5, "ties": "stable", "convention": "trec_eval"}
    assert MetricCall.parse("infAP", trec=True, inputs=inputs).metric == "infap"
    assert MetricCall.parse("INFAP", inputs=inputs).metric == "infap"   # case aside
    with pytest.raises(skrank.InvalidParameterError, match="bpref takes no cutoff"):
        MetricCall.parse("bpref@10", inputs=inputs)


def test_the_cutoff_rule_is_the_k_param(monkeypatch):
    """The grammar asks the metric's k declaration whether a cutoff is valid: a
    declaration that wants k >= 2 refuses '@1', with the name in the message."""
    assert parse_metric_name("ndcg@1")[1] == {"k": 1}
    strict = K.replace(constraints=(Interval(int, 2),))
    ndcg = METRICS["ndcg"]
    _with_table(monkeypatch, dataclasses.replace(
        ndcg, params=tuple(strict if p.name == "k" else p for p in ndcg.params)))
    with pytest.raises(skrank.InvalidParameterError, match=r"cutoff in 'ndcg@1' must be"):
        parse_metric_name("ndcg@1")


def test_the_command_line_reads_a_name_once(monkeypatch, tmp_path, capsys):
    """skrank mode: the command line reads each -m name once, evaluate's plan once."""
    from skrank.cli import _read_name, main

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 0\nq2 0 x 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\nq2 Q0 x 1 0.3 t\n")
    read = []
    real = skrank._declare.names.parse_metric_name

    def counting(name, **kwargs):
        read.append(name)
        return real(name, **kwargs)

    monkeypatch.setattr(skrank._declare.names, "parse_metric_name", counting)
    monkeypatch.setattr(skrank._plan, "parse_metric_name", counting)
    _read_name.cache_clear()
    assert main(["evaluate", str(qrels), str(run), "-m", "ndcg@2", "-m", "err@2",
                 "-m", "rbp"]) == 0
    out = capsys.readouterr().out
    assert read.count("ndcg@2") == 2 and read.count("err@2") == 2 and read.count("rbp") == 2
    # rbp as trec_eval prints it carries trec_eval's p=0.9 (its gain "trec")
    expected = skrank.rbp_score([2, 0, 1], [0.9, 0.5, 0.3], qid=[1, 1, 2], p=0.9, gain="trec")
    assert f"{expected:.4f}" in [line.split("\t")[2] for line in out.splitlines()
                                 if line.startswith("rbp")]
