"""`skrank evaluate` with trec_eval measures: trec_eval 10's output, line for line.

Oracles: trec_eval's own expected outputs (../shared/data/trec_eval, whole files
diffed), pytrec_eval on generated collections (graded, ties, unjudged and
unretrieved documents), and hand-computed values written as formulas.
"""

import io
import math
import shlex
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skrank._engine.scan import positions_in_runs, segment_accumulate
from skrank._trec_eval import evaluate_files
from skrank._declare.names import select_measures
from skrank._trec.measures import NICKNAMES, TREC_MEASURES
from skrank.cli import main
from skrank.io import Qrels, Run

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"trec_eval data absent at {DATA}")

# The expected outputs and the trec_eval command lines that wrote them (DATA/README.md).
COMMANDS = {
    "out.test": "qrels.test results.test",
    "out.test ": "qrels.test.with-comments results.test",
    "out.comment.test": "qrels.comment.test results.comment.test",
    "out.test.a": "-m all_trec qrels.test results.test",
    "out.test.aq": "-m all_trec -q qrels.test results.test",
    "out.test.aqc": "-m all_trec -q -c qrels.test results.trunc",
    "out.test.aqcM": "-m all_trec -q -c -M100 qrels.test results.trunc",
    "out.test.aql": "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
    "out.test.meas_params": (
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
        "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
        "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test"),
    "out.test.aqZ": "-q -m all_trec -Z zscores_file qrels.test results.test",
    "out.test.qrels_jg": "-m qrels_jg -q -R qrels_jg qrels.123 results.test",
    "out.test.qrels_jg ": "-m qrels_jg -q -R qrels_jg qrels.comments.123 results.test",
}


def _argv(command):
    """trec_eval's argv (getopt style, e.g. -M100, -mP.5) in argparse's spelling."""
    out = []
    for token in shlex.split(command):
        if token.startswith("-") and len(token) > 2 and token[1] in "mMlZR":
            out += [token[:2], token[2:]]
        else:
            out.append(str(DATA / token) if (DATA / token).is_file() else token)
    return out


@needs_data
@pytest.mark.parametrize("expected", list(COMMANDS))
def test_expected_outputs_line_for_line(expected, capsys):
    status = main(["evaluate", *_argv(COMMANDS[expected])])
    out = capsys.readouterr().out
    assert status == 0
    want = (DATA / expected.strip()).read_text().splitlines()
    got = out.splitlines()
    diff = [(g, w) for g, w in zip(got, want) if g != w]
    assert not diff and len(got) == len(want), (len(got), len(want), diff[:5])


@needs_data
def test_missing_query_is_an_error_without_c(capsys):
    status = main(["evaluate", str(DATA / "qrels.test"), str(DATA / "results.trunc"),
                   "-m", "map"])
    err = capsys.readouterr().err
    assert status == 2
    assert "query '302'" in err and "Pass -c" in err and err.count("\n") == 1


@pytest.mark.parametrize("spec, fragment", [
    ("sucess.2,5", "Did you mean 'success.2,5'?"),
    ("P.0,5", "cutoffs of P must be positive"),
    ("P.5,5", "must be distinct"),
    ("ndcg.1=2,3", "name=value pairs"),
    ("prefs_simp", "not computed by skrank"),
])
def test_measure_errors(spec, fragment):
    with pytest.raises(ValueError, match=fragment.replace("?", r"\?").replace(".", r"\.")):
        select_measures([spec])


def test_judgement_group_measures_need_qrels_jg():
    with pytest.raises(ValueError, match="map_avgjg needs -R qrels_jg"):
        evaluate_files("unused", "unused", measures=["map_avgjg"])
    with pytest.raises(ValueError, match="map needs -R qrels"):
        evaluate_files("unused", "unused", measures=["map"], rel_format="qrels_jg")


def test_selection_follows_trec_eval():
    """Bare cut measures take trec_eval's default cutoffs; the first parameters given win;
    output order is trec_eval's, whatever the -m order."""
    sel = select_measures(["ndcg_cut", "P.5,10", "P.20", "recip_rank", "success.2,5,20"])
    assert [s.measure.name for s in sel] == ["recip_rank", "P", "ndcg_cut", "success"]
    assert sel[1].names == ("P_5", "P_10")
    assert sel[2].names == tuple(f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500,
                                                            1000))
    assert [s.measure.name for s in select_measures([])] == list(NICKNAMES["official"])
    assert [s.measure.name for s in select_measures(["all_trec"])] == [
        m for m in TREC_MEASURES if m in NICKNAMES["all_trec"]]
    rbp = select_measures(["rbp.p=0.8"])[0]
    assert rbp.names == ("rbp_p=0.8",) and rbp.params == (("p", 0.8),)


def _lines(qrels_text, run_text, **kw):
    qrels = _qrels(qrels_text)
    run = _run(run_text)
    return dict(_parse(evaluate_files(qrels, run, per_query=True, **kw)))


def _qrels(text):
    rows = [line.split() for line in text.strip().splitlines()]
    return Qrels(qid=[r[0] for r in rows], docno=[r[2] for r in rows],
                 rel=[int(r[3]) for r in rows])


def _run(text):
    rows = [line.split() for line in text.strip().splitlines()]
    return Run(qid=[r[0] for r in rows], docno=[r[2] for r in rows],
               score=[float(r[4]) for r in rows], tag=[r[5] for r in rows])


def _parse(lines):
    for line in lines:
        name, qid, value = line.split("\t")
        yield (name.strip(), qid), value


# q1: ranked a(rel 2) x(not judged) b(0) u(-1: unjudged in pool) c(1); d (rel 3) unretrieved.
HAND_QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 d 3\nq1 0 u -1\nq1 0 e 0\n"
HAND_RUN = ("q1 Q0 a 1 5 t\nq1 Q0 x 2 4 t\nq1 Q0 b 3 3 t\nq1 Q0 u 4 2 t\nq1 Q0 c 5 1 t\n")


def test_hand_computed_values():
    got = _lines(HAND_QRELS, HAND_RUN, measures=["all_trec"])
    v = {name: float(value) for (name, qid), value in got.items()
         if qid == "q1" and name != "relstring"}
    R = 3                                              # a, c, d
    assert v["map"] == pytest.approx(round((1 / 1 + 2 / 5) / R, 4))
    # bpref: judged nonrel b before c; min(1, R) / min(#nonrel judged = 2, R)
    assert v["bpref"] == pytest.approx(round((1 + (1 - 1 / 2)) / R, 4))
    # infAP at c (j = 4): 1/5 + 4/5 * ((1 + 1 + 1)/4) * ((1 + e) / (1 + 1 + 2e)); a: 1
    e = 1e-5
    inf_c = 1 / 5 + 4 / 5 * (3 / 4) * ((1 + e) / (2 + 2 * e))
    assert v["infAP"] == pytest.approx(round((1 + inf_c) / R, 4))
    # rbp: gains scaled by the top level 3, p = 0.9
    assert v["rbp"] == pytest.approx(round(0.1 * (2 / 3 + 1 / 3 * 0.9 ** 4), 4))
    # rbp_resid: x and u unjudged: p^5 + (1 - p)(p^1 + p^3)
    assert v["rbp_resid"] == pytest.approx(round(0.9 ** 5 + 0.1 * (0.9 + 0.9 ** 3), 4))
    assert v["unj_5"] == pytest.approx(2 / 5)
    dcg = 2 + 1 / math.log2(6)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert v["ndcg"] == pytest.approx(round(dcg / idcg, 4))
    assert v["num_nonrel_judged_ret"] == 1
    assert v["utility"] == 2 - 3                       # 2 relevant, 3 others retrieved
    assert got[("relstring", "q1")] == "'2-0.1'"
    assert got[("runid", "all")] == "t"


def test_judged_only_and_max_retrieved():
    got = _lines(HAND_QRELS, HAND_RUN, measures=["P.2", "num_ret", "map"], judged_only=True)
    assert got[("num_ret", "q1")] == "3"               # a, b, c: x and u dropped
    assert float(got[("P_2", "q1")]) == 0.5
    assert float(got[("map", "q1")]) == pytest.approx(round((1 + 2 / 3) / 3, 4))
    got = _lines(HAND_QRELS, HAND_RUN, measures=["num_ret", "num_rel_ret"], max_ret=2)
    assert got[("num_ret", "q1")] == "2" and got[("num_rel_ret", "q1")] == "1"


def test_scores_read_as_doubles_or_float32():
    """trec_eval 10 reads scores as doubles; pytrec_eval (and --float32-scores) as floats,
    where the two scores below tie and the docno order (descending) puts b first."""
    qrels = "q1 0 a 1\nq1 0 b 0\n"
    run = "q1 Q0 a 1 10.00000001 x\nq1 Q0 b 2 10.00000000 x\n"
    assert _lines(qrels, run, measures=["recip_rank"])[("recip_rank", "q1")] == "1.0000"
    assert _lines(qrels, run, measures=["recip_rank"],
                  float32_scores=True)[("recip_rank", "q1")] == "0.5000"


def test_infinite_scores_are_ranked():
    run = "q1 Q0 a 1 inf x\nq1 Q0 b 2 -inf x\nq1 Q0 c 3 1 x\n"
    got = _lines("q1 0 b 1\nq1 0 a 0\n", run, measures=["recip_rank"])
    assert got[("recip_rank", "q1")] == "0.3333"


def test_complete_placeholder_ranking():
    """-c: a query absent from the run is evaluated on trec_eval's placeholder (one
    unjudged document), then num_ret, utility and the unj/rbp_resid values are cleared."""
    got = _lines("q1 0 a 1\nq2 0 b 1\nq2 0 c 0\n", "q1 Q0 a 1 1 t\n",
                 measures=["all_trec"], complete=True)
    assert got[("num_ret", "q2")] == "0" and got[("num_rel", "q2")] == "1"
    assert got[("utility", "q2")] == "0.0000" and got[("relstring", "q2")] == "''"
    assert got[("set_P", "q2")] == "0.0000" and got[("num_q", "all")] == "2"
    assert got[("map", "all")] == "0.5000"


@pytest.mark.parametrize("equal_lengths", [False, True])  # True: the no-scatter path
def test_segment_accumulate_is_sequential(equal_lengths):
    rng = np.random.default_rng(0)
    lengths = np.full(50, 37) if equal_lengths else rng.integers(0, 40, size=50)
    values = rng.random(int(lengths.sum())) * 10.0 ** rng.integers(-8, 8, size=int(lengths.sum()))
    seg = np.repeat(np.arange(50), lengths)
    got = segment_accumulate(np.add, values, seg, lengths)
    start = 0
    for n in lengths.tolist():
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
            assert got[i] == total          # bit for bit: a C loop's order
        start += n
    rev = segment_accumulate(np.maximum, values, seg, lengths, reverse=True)
    start = 0
    for n in lengths.tolist():
        for i in range(start, start + n):
            assert rev[i] == values[i:start + n].max()
        start += n


def _collection(seed):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(12):
        docs = [f"d{i}" for i in rng.choice(300, size=int(rng.integers(3, 40)), replace=False)]
        for d in docs:
            if rng.random() < 0.8:
                qrels.append((f"q{q}", d, int(rng.choice([-1, 0, 0, 1, 2, 3]))))
        ret = list(rng.choice(docs, size=int(rng.integers(1, len(docs))), replace=False))
        ret += [f"x{i}" for i in range(int(rng.integers(0, 6)))]
        scores = rng.integers(0, 6, size=len(ret)) / 4 if q % 2 else rng.random(len(ret))
        run += [(f"q{q}", d, float(s)) for d, s in zip(ret, scores)]
    qrels.append(("q0", "anchor", 1))
    return qrels, run


PYTREC_MEASURES = ("map", "Rprec", "bpref", "recip_rank", "P", "recall", "infAP", "ndcg",
                   "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_recall",
                   "set_relative_P", "set_map", "set_F", "binG", "G", "ndcg_rel", "Rndcg",
                   "Rprec_mult", "utility", "num_ret", "num_rel", "num_rel_ret",
                   "num_nonrel_judged_ret")


@pytest.mark.parametrize("seed", range(4))
def test_against_pytrec_eval(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_rows, run_rows = _collection(seed)
    qrels_rows = list({(q, d): (q, d, r) for q, d, r in qrels_rows}.values())
    run_qids = {q for q, _, _ in run_rows}
    qrels_rows = [row for row in qrels_rows if row[0] in run_qids]
    qrels_dict, run_dict = {}, {}
    for q, d, r in qrels_rows:
        qrels_dict.setdefault(q, {})[d] = r
    for q, d, s in run_rows:
        run_dict.setdefault(q, {})[d] = s
    expected = pytrec_eval.RelevanceEvaluator(qrels_dict, set(PYTREC_MEASURES)).evaluate(
        run_dict)
    qrels = Qrels(qid=[r[0] for r in qrels_rows], docno=[r[1] for r in qrels_rows],
                  rel=[r[2] for r in qrels_rows])
    run = Run(qid=[r[0] for r in run_rows], docno=[r[1] for r in run_rows],
              score=[r[2] for r in run_rows], tag="t")
    got = dict(_parse(evaluate_files(qrels, run, measures=list(PYTREC_MEASURES),
                                     per_query=True, float32_scores=True)))
    compared = 0
    for qid, values in expected.items():
        for name, value in values.items():
            # printed with 4 decimals: half a unit of the last one, and a hair
            assert float(got[(name, qid)]) == pytest.approx(value, abs=5e-5 + 1e-9), (qid, name)
            compared += 1
    assert compared > 12 * 60


def test_docs_page_lists_the_declared_measures():
    """docs/trec_eval.md's measure table is generated from TREC_MEASURES (paste
    measures_markdown()'s output there when a declaration changes)."""
    from skrank._trec_eval import measures_markdown

    page = (Path(__file__).resolve().parents[1] / "docs" / "trec_eval.md").read_text()
    assert measures_markdown() in page


def test_help_lists_measures_and_flags(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    for name in TREC_MEASURES:
        assert f"  {name}" in out, name
    for flag in ("-M", "-J", "-Z", "-R", "-N", "-c", "-l", "-q", "--float32-scores"):
        assert flag in out


def test_evaluate_ranks_infinite_scores(tmp_path):
    import skrank

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 b 1\nq1 0 a 0\nq1 0 d 1\n")
    run.write_text("q1 Q0 a 1 inf x\nq1 Q0 b 2 -inf x\nq1 Q0 c 3 1 x\nq1 Q0 d 4 inf x\n")
    res = skrank.evaluate(qrels=qrels, run=run, metrics=["mrr", "map"])
    # order: d, a (inf, docno descending), c, b
    assert res.per_query["mrr"].tolist() == [1.0]
    assert res.per_query["map"][0] == pytest.approx((1 + 2 / 4) / 2)


def test_gain_table_sorted_as_trec_eval():
    """ndcg.1=0.5: trec_eval sorts its gain table with a comparator returning
    (int)(g1 - g2), so 0.5 ties with level 0's gain 0 and lands below it; its ideal
    ranking then stops at level 0 and holds only the level-2 document:
    ndcg = (0.5 / log2 2 + 2 / log2 3) / 2 (trec_eval 10 prints 0.8809)."""
    got = _lines("q 0 a 2\nq 0 b 1\nq 0 c 0\n", "q Q0 b 1 3 t\nq Q0 a 2 2 t\nq Q0 c 3 1 t\n",
                 measures=["ndcg.1=0.5"])
    assert got[("ndcg_1=0.5", "q")] == f"{(0.5 + 2 / math.log2(3)) / 2:6.4f}" == "0.8809"


@given(st.lists(st.integers(0, 3), max_size=30))
def test_positions_in_runs_count_within_runs_of_equal_keys(keys):
    expected, previous, count = [], object(), 0
    for key in keys:   # one element at a time: 0 where a run starts, else one more
        count = count + 1 if key == previous else 0
        expected.append(count)
        previous = key
    assert positions_in_runs(np.asarray(keys, dtype=np.int64)).tolist() == expected
