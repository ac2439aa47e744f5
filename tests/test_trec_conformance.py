"""skrank against trec_eval's own expected outputs, file by file.

The files in ../shared/data/trec_eval/ are trec_eval's test fixtures; each
expected output was produced by the command line listed in that folder's
README.  Values are printed with 4 decimals, so they are compared to 5e-5.
"""

import re
import warnings
from pathlib import Path

import pytest

import skrank
from skrank.cli import main as cli_main

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"
pytestmark = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"trec_eval test data not found at {DATA} (../shared is absent)"
)

# trec_eval measures skrank covers; names are passed to skrank as trec_eval spells them.
COVERED = re.compile(
    r"^(map|map_cut_\d+|P_\d+|recall_\d+|recip_rank|Rprec|ndcg|ndcg_cut_\d+|success_\d+)$"
)
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")

# expected output -> (qrels, run, evaluate options)
CASES = {
    "out.test.aq": ("qrels.test", "results.test", {}),
    "out.test.aqc": ("qrels.test", "results.trunc", {"missing_queries": "zero"}),
    "out.test.aql": ("qrels.rel_level", "results.test", {"threshold": 2}),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", {}),
    "out.test": ("qrels.test.with-comments", "results.test", {}),
}


def read_expected(name):
    rows = {}
    for line in (DATA / name).read_text().splitlines():
        measure, qid, value = line.split("\t")
        rows[(measure.strip(), qid)] = value
    return rows


@pytest.mark.parametrize("expected_file", list(CASES))
def test_matches_trec_eval(expected_file):
    qrels, run, options = CASES[expected_file]
    expected = read_expected(expected_file)
    measures = sorted({m for m, _ in expected if COVERED.match(m)})
    assert len(measures) >= 9, measures
    with warnings.catch_warnings():
        # the missing and unjudged query counts are warned about; tested elsewhere
        warnings.filterwarnings("ignore", message="evaluate: .* quer", category=UserWarning)
        res = skrank.evaluate(qrels=DATA / qrels, run=DATA / run, metrics=measures, **options)

    qids = [str(q) for q in res.qid.tolist()]
    compared_per_query = 0
    for measure in measures:
        assert abs(res.mean[measure] - float(expected[(measure, "all")])) <= 5e-5 + 1e-12, (
            measure, res.mean[measure], expected[(measure, "all")])
        for qid, value in zip(qids, res.per_query[measure]):
            if (measure, qid) in expected:
                assert abs(value - float(expected[(measure, qid)])) <= 5e-5 + 1e-12, (
                    measure, qid, value, expected[(measure, qid)])
                compared_per_query += 1
    # every per-query row of the expected output was compared (none for outputs without -q)
    expected_per_query = sum(1 for m, q in expected if q != "all" and m in measures)
    assert compared_per_query == expected_per_query, (compared_per_query, expected_per_query)
    # Counts: per query and the 'all' row (a sum; num_q counts queries).
    assert int(expected[("num_q", "all")]) == len(qids)
    for count in COUNTS[1:]:
        values = res.counts[count]
        assert int(expected[(count, "all")]) == int(values.sum()), count
        for qid, value in zip(qids, values):
            if (count, qid) in expected:
                assert int(expected[(count, qid)]) == int(value), (count, qid)


def test_command_line_reproduces_trec_eval_layout(capsys):
    """`skrank evaluate -q` prints the same lines as trec_eval for covered measures."""
    expected = read_expected("out.test.aq")
    measures = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "P_5", "recip_rank",
                "ndcg", "ndcg_cut_10", "success_1", "Rprec", "recall_100", "map_cut_10"]
    argv = ["evaluate", str(DATA / "qrels.test"), str(DATA / "results.test"), "-q"]
    for m in measures:
        argv += ["-m", m]
    assert cli_main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    original = {line for line in (DATA / "out.test.aq").read_text().splitlines()
                if line.split("\t")[0].strip() in measures}
    assert set(lines) == original
    assert len(lines) == sum(1 for m, _ in expected if m in measures)


def test_trec_ties_follow_docno_descending():
    """results.test has tied scores: the trec policy must reproduce trec_eval's order,
    and the other policies must give other numbers on the tied query (301)."""
    qrels, run = DATA / "qrels.test", DATA / "results.test"
    trec = skrank.evaluate(qrels=qrels, run=run, metrics=["P_5", "map", "ndcg"])
    expected = read_expected("out.test.aq")
    for m in ("P_5", "map", "ndcg"):
        assert abs(trec.mean[m] - float(expected[(m, "all")])) <= 5e-5
        for qid, value in zip(trec.qid.tolist(), trec.per_query[m]):
            assert abs(value - float(expected[(m, str(qid))])) <= 5e-5, (m, qid)
    by_policy = {
        ties: dict(zip(res.qid.tolist(), res.per_query["map"].tolist()))
        for ties in ("pessimistic", "average", "optimistic")
        for res in [skrank.evaluate(qrels=qrels, run=run, metrics=["map"], ties=ties)]
    }
    # 301 has relevant and non-relevant documents tied: order matters, and averaging over
    # the orderings lies strictly between the worst and the best of them
    low, mid, high = (by_policy[t]["301"] for t in ("pessimistic", "average", "optimistic"))
    assert low < mid < high, (low, mid, high)
    # trec_eval's docno order happens to be the best one here
    assert abs(high - float(expected[("map", "301")])) <= 5e-5
    # the other queries have no tie that straddles a relevant document
    for qid in ("302", "303"):
        values = [by_policy[t][qid] for t in by_policy]
        assert max(values) - min(values) <= 1e-12, (qid, values)


def test_missing_queries_option_changes_only_the_mean():
    with pytest.warns(UserWarning, match=r"1 of the 3 queries of qrels .*\('302'\).* left out"):
        skip = skrank.evaluate(qrels=DATA / "qrels.test", run=DATA / "results.trunc",
                               metrics=["map"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an explicit choice is silent (issue 25)
        zero = skrank.evaluate(qrels=DATA / "qrels.test", run=DATA / "results.trunc",
                               metrics=["map"], missing_queries="zero")
    assert set(skip.qid.tolist()) < set(zero.qid.tolist())
    missing = sorted(set(zero.qid.tolist()) - set(skip.qid.tolist()))
    assert missing == ["302"]
    assert zero.per_query["map"][zero.qid.tolist().index("302")] == 0.0
    assert zero.mean["map"] == pytest.approx(skip.mean["map"] * 2 / 3)
