"""BEIR/MTEB qrels TSV and {qid: {doc: score}} JSON runs: readers, detection, errors,
and evaluation through skrank.evaluate and the command line (against TREC files
written from the same judgements)."""

import gzip
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank.cli import main
from skrank.io import read_qrels, read_run

HEADER = "query-id\tcorpus-id\tscore\n"


def _write(path, text, compress=False):
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [False, True])
def test_beir_qrels_detected_and_read(tmp_path, compress):
    path = _write(tmp_path / "test.tsv", HEADER + "q1\td1\t1\nq1\td2\t0\nq2\td9\t-1\n", compress)
    for fmt in (None, "beir"):
        q = read_qrels(path, format=fmt)
        assert q.qid.tolist() == ["q1", "q1", "q2"]
        assert q.docno.tolist() == ["d1", "d2", "d9"]
        assert q.rel.tolist() == [1, 0, -1]


def test_beir_folder_and_split(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    _write(tmp_path / "qrels" / "test.tsv", HEADER + "q1\td1\t1\n")
    assert read_qrels(tmp_path).docno.tolist() == ["d1"]
    _write(tmp_path / "qrels" / "dev.tsv", HEADER + "q1\td2\t1\n")
    assert read_qrels(tmp_path, split="dev").docno.tolist() == ["d2"]
    with pytest.raises(ValueError, match=r"split must name one of the splits .*\['dev', 'test'\]"):
        read_qrels(tmp_path)
    with pytest.raises(ValueError, match="split must be one of"):
        read_qrels(tmp_path, split="train")


def test_ids_with_spaces_take_the_line_by_line_path(tmp_path):
    path = _write(tmp_path / "q.tsv", HEADER + "what is x\tdoc 1\t2\n#q\td2\t1\n")
    q = read_qrels(path)
    assert q.qid.tolist() == ["what is x", "#q"] and q.rel.tolist() == [2, 1]


@pytest.mark.parametrize("text, match", [
    ("q1\td1\t1\n", r"q\.tsv:1: a BEIR qrels file must start with the header line"),
    ("query-id\tcorpus-id\tscore\textra\nq1\td1\t1\t5\n",
     r"q\.tsv:1: the header of a BEIR qrels file must be .*\(4 columns\)"),
    (HEADER + "q1\td1\t1\nq1\td2\t1\tx\n", r"q\.tsv:3: a BEIR qrels line must have 3 .* \(4 columns\)"),
    (HEADER + "q1\td1\t1\nq1\td2\thigh\n", r"q\.tsv:3: expected .* integer score, got 'q1\\td2\\thigh'"),
    (HEADER + "q1\td1\t1\nq1\td1\t0\n", r"q\.tsv.*twice|duplicate"),
])
def test_bad_beir_files_name_the_file_and_line(tmp_path, text, match):
    path = _write(tmp_path / "q.tsv", text)
    with pytest.raises(ValueError, match=match):
        read_qrels(path, format="beir")


def test_headerless_beir_is_explained_when_detected(tmp_path):
    # three tab-separated columns are never TREC qrels: read as TREC, the error says 4 fields
    path = _write(tmp_path / "q.tsv", "q1\td1\t1\n")
    with pytest.raises(ValueError, match="q.tsv:1: a BEIR qrels file must start with the header"):
        read_qrels(path)


def test_json_run_and_qrels(tmp_path):
    path = _write(tmp_path / "results.json", json.dumps({"q1": {"d3": 0.9, "d1": 2}, "q2": {}}))
    run = read_run(path)
    assert run.qid.tolist() == ["q1", "q1"] and run.docno.tolist() == ["d3", "d1"]
    assert run.score.tolist() == [0.9, 2.0] and run.tag.tolist() == ["results"] * 2
    q = read_qrels(_write(tmp_path / "qrels.json", json.dumps({"q1": {"d1": 2, "d2": 0}})))
    assert q.rel.tolist() == [2, 0]


@pytest.mark.parametrize("content, match", [
    ({"q1": {"d1": 0.5, "d2": "high"}}, r"score of document 'd2' of query 'q1' must be a finite "
                                        r"number. Got 'high' instead \(1 such"),
    ({"q1": {"d1": True}}, "must be a finite number. Got True"),
    ({"q1": [1, 2]}, r"must be an object \{query: \{doc: score\}\}"),
])
def test_bad_json_runs(tmp_path, content, match):
    path = _write(tmp_path / "r.json", json.dumps(content))
    with pytest.raises(ValueError, match=match):
        read_run(path)
    with pytest.raises(ValueError, match="grade of document 'd1' of query 'q1' must be an integer"):
        read_qrels(_write(tmp_path / "g.json", json.dumps({"q1": {"d1": 1.5}})))


def test_bad_format_names():
    with pytest.raises(skrank.InvalidParameterError, match="format must be one of 'trec', 'json'"):
        read_run(io.BytesIO(b""), format="beir")


def _trec_files(tmp_path, qrels, run):
    qpath, rpath = tmp_path / "qrels.trec", tmp_path / "run.trec"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                             for d, g in docs.items()))
    rpath.write_text("".join(f"{q} Q0 {d} 1 {s!r} results\n" for q, docs in run.items()
                             for d, s in docs.items()))
    return qpath, rpath


def _beir_files(tmp_path, qrels, run):
    qpath, rpath = tmp_path / "test.tsv", tmp_path / "results.json"
    qpath.write_text(HEADER + "".join(f"{q}\t{d}\t{g}\n" for q, docs in qrels.items()
                                      for d, g in docs.items()))
    rpath.write_text(json.dumps(run))
    return qpath, rpath


ids = st.sampled_from(["q1", "q2", "q3", "7"])
docs = st.sampled_from(["d1", "d2", "d3", "d4", "d5"])


@pytest.mark.filterwarnings("ignore:evaluate:UserWarning")
@settings(max_examples=20, deadline=None)
@given(qrels=st.dictionaries(ids, st.dictionaries(docs, st.integers(-1, 3), min_size=1),
                             min_size=1),
       run=st.dictionaries(ids, st.dictionaries(docs, st.floats(-5, 5), min_size=1), min_size=1))
def test_beir_and_json_evaluate_as_the_same_trec_files(tmp_path_factory, qrels, run):
    tmp = tmp_path_factory.mktemp("f")
    tq, tr = _trec_files(tmp, qrels, run)
    bq, br = _beir_files(tmp, qrels, run)
    metrics = ["ndcg@3", "map", "mrr", "bpref"]
    if not set(qrels) & set(run):
        return
    a = skrank.evaluate(qrels=tq, run=tr, metrics=metrics)
    b = skrank.evaluate(qrels=bq, run=br, metrics=metrics)
    assert a.qid.tolist() == b.qid.tolist()
    for m in metrics:
        np.testing.assert_array_equal(a.per_query[m], b.per_query[m])
    # the dict forms (pytrec_eval's) give the same values too
    c = skrank.evaluate(qrels=qrels, run=run, metrics=metrics)
    for m in metrics:
        np.testing.assert_array_equal(a.per_query[m], c.per_query[m])


def test_command_line_reads_beir_and_json_as_trec(tmp_path):
    qrels = {"q1": {"d1": 1, "d2": 0, "d5": 2}, "q2": {"d1": 2}}
    run = {"q1": {"d1": 0.9, "d2": 1.5, "d3": 0.1}, "q2": {"d1": 3.0, "d4": 4.0}}
    tq, tr = _trec_files(tmp_path, qrels, run)
    bq, br = _beir_files(tmp_path, qrels, run)
    for extra in ([], ["-q", "-m", "all_trec"], ["-m", "ndcg@10", "-m", "P_5", "-q"]):
        outs = []
        for q, r in ((tq, tr), (bq, br)):
            out = io.StringIO()
            assert main(["evaluate", str(q), str(r), *extra], out=out) == 0
            outs.append(out.getvalue())
        assert outs[0] == outs[1]
    out, err = io.StringIO(), io.StringIO()
    bad = _write(tmp_path / "bad.tsv", "q1\td1\t1\n")
    assert main(["evaluate", str(bad), str(br)], out=out) == 2


def test_standard_input_is_detected_without_being_consumed(tmp_path, monkeypatch):
    import sys
    import types

    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}
    run = {"q1": {"d1": 0.9, "d2": 1.5}, "q2": {"d1": 3.0}}
    tq, tr = _trec_files(tmp_path, qrels, run)
    bq, br = _beir_files(tmp_path, qrels, run)
    expected = io.StringIO()
    main(["evaluate", str(tq), str(tr), "-m", "map", "-q"], out=expected)
    for path, argv in ((bq, ["-", str(br)]), (br, [str(bq), "-"])):
        stdin = types.SimpleNamespace(buffer=io.BufferedReader(io.BytesIO(path.read_bytes())))
        monkeypatch.setattr(sys, "stdin", stdin)
        out = io.StringIO()
        assert main(["evaluate", *argv, "-m", "map", "-q"], out=out) == 0
        assert out.getvalue() == expected.getvalue()


def test_windows_line_endings_and_text_streams(tmp_path):
    path = _write(tmp_path / "crlf.tsv", "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq2\td2\t0\r\n\r\n")
    q = read_qrels(path)
    assert q.qid.tolist() == ["q1", "q2"] and q.docno.tolist() == ["d1", "d2"]
    assert read_qrels(io.StringIO(HEADER + "q1\td1\t3\n")).rel.tolist() == [3]


def test_directories(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(ValueError, match="a BEIR folder must hold a 'qrels' folder"):
        read_qrels(tmp_path / "plain", format="beir")
    with pytest.raises(IsADirectoryError):
        read_qrels(tmp_path / "plain")   # as before: the command line says 'is a directory'
    (tmp_path / "beir" / "qrels").mkdir(parents=True)
    _write(tmp_path / "beir" / "qrels" / "test.tsv", HEADER + "q1\td1\t1\n")
    with pytest.raises(ValueError, match="is a BEIR folder .* not a run file"):
        read_run(tmp_path / "beir")
    with pytest.raises(ValueError, match="split names a qrels file of a BEIR folder"):
        read_qrels(tmp_path / "beir" / "qrels" / "test.tsv", split="test")
