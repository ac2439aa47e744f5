"""trec_eval mode computes the measures it shares with the metric table with the table's
kernels (issue 24: one kernel per measure), on the engine's view of its ranking."""

import numpy as np
import pytest

from skrank._declare.names import select_measures
from skrank._engine import measures as table_kernels
from skrank._trec import measures as trec_measures
from skrank._trec.data import trec_ranking
from skrank._trec_eval import measure_blocks

from test_pytrec_eval import random_collection, to_skrank

#: trec_eval's measure -> the kernel of skrank.METRICS it runs.
SHARED = {"map": "_map", "gm_map": "_map", "map_cut": "_map", "Rprec": "_r_precision",
          "recip_rank": "_mrr", "P": "_precision", "recall": "_recall", "ndcg": "_ndcg",
          "ndcg_cut": "_ndcg", "success": "_hit_rate", "rbp": "_rbp"}


def _values(ranking, name):
    (item, values), = measure_blocks(ranking, select_measures([name]))
    return values


@pytest.mark.parametrize("measure,kernel", sorted(SHARED.items()))
def test_shared_measure_runs_the_table_kernel(monkeypatch, measure, kernel):
    qrels, run = to_skrank(*random_collection(0, n_queries=6))
    calls = []
    real = getattr(table_kernels, kernel)

    def spy(ranking, **options):
        calls.append(options)
        return real(ranking, **options)

    monkeypatch.setattr(trec_measures, kernel, spy)
    values = _values(trec_ranking(qrels, run), measure)
    assert calls, f"{measure} did not run the table's {kernel}"
    monkeypatch.undo()
    np.testing.assert_array_equal(values, _values(trec_ranking(qrels, run), measure))


def test_engine_view_holds_the_same_queries_and_judgements():
    qrels, run = to_skrank(*random_collection(3, n_queries=12))
    r = trec_ranking(qrels, run, level=2)
    e = r.engine
    np.testing.assert_array_equal(e.n_kept, r.num_ret)
    np.testing.assert_array_equal(e.n_relevant(2), r.num_rel)
    np.testing.assert_array_equal(e.labels, r.rel)
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
