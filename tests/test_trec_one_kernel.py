"""trec_eval mode runs through the plan (issue 24): the measures the metric table has are
its declarations (one kernel per measure) on the engine's view of trec_eval's ranking,
trec_eval's own measures are declarations of the table too (``trec_eval:<name>``)."""

import re

import numpy as np
import pytest

import skrank
from skrank import _plan
from skrank._declare.names import select_measures
from skrank._declare.table import TABLE
from skrank._trec.data import trec_ranking
from skrank._trec.measures import TREC_MEASURES
from skrank._trec_eval import measure_blocks

from test_pytrec_eval import random_collection, to_skrank

#: trec_eval's measure -> the declaration of skrank.METRICS that computes it.
SHARED = {"map": "map", "map_cut": "map", "Rprec": "r_precision", "recip_rank": "mrr",
          "P": "precision", "recall": "recall", "ndcg": "ndcg", "ndcg_cut": "ndcg",
          "success": "hit_rate", "rbp": "rbp", "bpref": "bpref", "infAP": "infap"}


def _values(ranking, name):
    (item, values), = measure_blocks(ranking, select_measures([name]))
    return values


def _spy_plan(monkeypatch):
    ran = []
    real_run, real_execute = _plan.run_kernel, _plan.execute

    def run_kernel(spec, *args, **kwargs):
        ran.append(spec.name)
        return real_run(spec, *args, **kwargs)

    def execute(p, prepared, **kwargs):
        ran.extend(step.call.metric for step in p.steps if step.policy is None)
        return real_execute(p, prepared, **kwargs)

    monkeypatch.setattr(_plan, "run_kernel", run_kernel)
    monkeypatch.setattr(_plan, "execute", execute)
    return ran


@pytest.mark.parametrize("measure,metric", sorted(SHARED.items()))
def test_shared_measure_is_the_table_declaration(monkeypatch, measure, metric):
    qrels, run = to_skrank(*random_collection(0, n_queries=6))
    ran = _spy_plan(monkeypatch)
    values = _values(trec_ranking(qrels, run), measure)
    assert set(ran) == {metric}, (measure, ran)
    assert TREC_MEASURES[measure].kernel is None or measure in ("ndcg", "rbp")
    assert f"trec_eval:{measure}" not in TABLE or measure in ("ndcg", "rbp")
    monkeypatch.undo()
    np.testing.assert_array_equal(values, _values(trec_ranking(qrels, run), measure))


@pytest.mark.parametrize("spec,declaration", [("ndcg.1=0.5,2=3", "trec_eval:ndcg"),
                                              ("rbp.1=0.5", "trec_eval:rbp"),
                                              ("rbp.p=0.5", "rbp")])
def test_named_gains_take_trec_evals_own_declaration(monkeypatch, spec, declaration):
    qrels, run = to_skrank(*random_collection(1, n_queries=6))
    ran = _spy_plan(monkeypatch)
    measure_blocks(trec_ranking(qrels, run), select_measures([spec]))
    assert ran == [declaration]


def test_every_measure_is_a_declaration_the_plan_executes(monkeypatch):
    """-m all_trec: every measure is a declaration of the one table, run by the plan."""
    qrels, run = to_skrank(*random_collection(2, n_queries=8))
    ran = _spy_plan(monkeypatch)
    selected = select_measures(["all_trec"])
    measure_blocks(trec_ranking(qrels, run), selected)
    for item in selected:
        name = item.measure.name
        expected = SHARED.get(name, f"trec_eval:{name}")
        assert expected in TABLE and expected in ran, name
    own = {spec.name for spec in TABLE.values() if spec.family == "trec_eval"}
    assert own.isdisjoint(skrank.METRICS)   # METRICS: the view with public functions
    assert {f"trec_eval:{m.name}" for m in TREC_MEASURES.values()
            if m.name not in SHARED} <= own


def test_engine_view_holds_the_same_queries_and_judgements():
    qrels, run = to_skrank(*random_collection(3, n_queries=12))
    r = trec_ranking(qrels, run, level=2)
    e = r.engine
    np.testing.assert_array_equal(e.n_kept, r.num_ret)
    np.testing.assert_array_equal(e.n_relevant(2), r.num_rel)
    np.testing.assert_array_equal(e.labels, np.maximum(r.rel, 0))   # as the plan ranks
    # every judged document once, at its level, for R and the ideal ranking
    levels = np.diff(e.all_offsets)
    np.testing.assert_array_equal(levels, r.rel_levels.sum(axis=1))


pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("threshold", [1, 2])
def test_trec_mode_agrees_with_pytrec_eval(seed, threshold):
    """The shared measures in trec_eval mode (ties by docno, unjudged and unretrieved
    documents, graded levels) against trec_eval's own C code."""
    qrels, run = random_collection(seed)
    names = ["map", "map_cut", "P", "recall", "recip_rank", "Rprec", "ndcg", "ndcg_cut",
             "success"]
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(names),
                                              relevance_level=threshold).evaluate(run)
    ranking = trec_ranking(*to_skrank(qrels, run), level=threshold)
    qids = [str(q) for q in ranking.qids.tolist()]
    assert sorted(qids) == sorted(expected)
    checked = 0
    for item, values in measure_blocks(ranking, select_measures(names)):
        for j, printed in enumerate(item.names):
            if printed not in next(iter(expected.values())):
                continue   # a cutoff pytrec_eval's older trec_eval does not list
            checked += 1
            want = np.array([expected[q][printed] for q in qids])
            np.testing.assert_allclose(values[:, j], want, rtol=0, atol=1e-12,
                                       err_msg=printed)
    assert checked >= 30


@pytest.mark.parametrize("spec,shown", [("P.9" * 1 + "9" * 24, "P.9" + "9" * 24),
                                        ("rbp.p=1.5", "rbp_p=1.5")])
def test_a_parameter_out_of_range_names_its_measure(spec, shown):
    qrels, run = to_skrank(*random_collection(0, n_queries=3))
    with pytest.raises(skrank.InvalidParameterError, match=f"measure {re.escape(shown)}: "):
        measure_blocks(trec_ranking(qrels, run), select_measures([spec]))
