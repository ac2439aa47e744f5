"""Tests of skrank.io: TREC qrels/run readers and the qrels-run join.

Most tests use the upstream trec_eval test files in ``shared/data/trec_eval``
(see the README there) and compare with the trec_eval outputs shipped with
them; they are skipped when that directory is absent.
"""

import gzip
import io
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from skrank.io import _join
from skrank.io import _tokenize
from skrank.io import Qrels, Run, TrecArrays, join_qrels_run, read_qrels, read_run

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"


@pytest.fixture
def data():
    if not DATA.is_dir():
        pytest.skip(f"trec_eval test data not found at {DATA}")
    return DATA


def write(path, text):
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def read_out(path):
    """trec_eval -q output: {(measure, qid): value string}."""
    values = {}
    for line in path.read_text().splitlines():
        measure, qid, value = line.split("\t")
        values[measure.strip(), qid] = value
    return values


def query_groups(arrays):
    """(qid, slice) of each contiguous query block of a TrecArrays."""
    change = np.flatnonzero(arrays.qid[1:] != arrays.qid[:-1]) + 1
    bounds = np.concatenate(([0], change, [len(arrays)]))
    return [(str(arrays.qid[a]), slice(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]


# --------------------------------------------------------------------------
# Readers on the trec_eval files
# --------------------------------------------------------------------------


def plain_rows(path):
    """The whitespace-separated fields of each line that is neither blank nor a '#' comment:
    a reader written independently of skrank's, for the expected columns and counts."""
    lines = Path(path).read_text().splitlines()
    return [line.split() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def assert_qrels_are_the_plain_rows(qrels, path):
    rows = plain_rows(path)
    assert all(len(row) == 4 for row in rows)
    assert len(qrels) == len(rows)
    assert qrels.qid.tolist() == [row[0] for row in rows]
    assert qrels.docno.tolist() == [row[2] for row in rows]
    assert qrels.rel.tolist() == [int(row[3]) for row in rows]
    return rows


def assert_run_is_the_plain_rows(run, path):
    rows = plain_rows(path)
    assert all(len(row) >= 6 for row in rows)  # fields after the tag are ignored
    assert len(run) == len(rows)
    assert run.qid.tolist() == [row[0] for row in rows]
    assert run.docno.tolist() == [row[2] for row in rows]
    assert run.rank.tolist() == [int(row[3]) for row in rows]
    assert run.score.tolist() == [float(row[4]) for row in rows]
    assert run.tag.tolist() == [row[5] for row in rows]
    return rows


def test_qrels_counts(data):
    qrels = read_qrels(data / "qrels.test")
    assert isinstance(qrels, Qrels)
    rows = assert_qrels_are_the_plain_rows(qrels, data / "qrels.test")
    assert len(qrels) == len(rows) > 0
    assert qrels.qid.dtype.kind == "U" and qrels.docno.dtype.kind == "U"
    assert qrels.rel.dtype == np.int64
    assert Counter(qrels.rel.tolist()) == Counter(int(row[3]) for row in rows)
    assert sorted(set(qrels.qid.tolist())) == sorted({row[0] for row in rows})
    assert (qrels.qid[0], qrels.docno[0], qrels.rel[0]) == ("301", "CR93E-10279", 0)


def test_qrels_with_comments_same_data(data):
    plain = read_qrels(data / "qrels.test")
    commented = read_qrels(data / "qrels.test.with-comments")
    assert_qrels_are_the_plain_rows(commented, data / "qrels.test.with-comments")
    np.testing.assert_array_equal(plain.qid, commented.qid)
    np.testing.assert_array_equal(plain.rel, commented.rel)
    # The files are not byte-identical apart from comments: one docno gets an
    # embedded '#', which must be taken literally (rel 0, never retrieved, so
    # trec_eval's output is unchanged).
    differ = np.flatnonzero(plain.docno != commented.docno)
    assert differ.tolist() == [4]
    assert plain.docno[4] == "CR93E-1860"
    assert commented.docno[4] == "CR#93E-1860"
    assert commented.rel[4] == 0


def test_graded_and_negative_qrels(data):
    qrels = read_qrels(data / "qrels.rel_level")
    rows = assert_qrels_are_the_plain_rows(qrels, data / "qrels.rel_level")
    counts = Counter(int(row[3]) for row in rows)
    assert Counter(qrels.rel.tolist()) == counts
    assert {-1, 0, 1, 2, 3, 4} <= set(counts)  # negative and graded labels both occur


def test_qrels_docno_with_hash(data):
    qrels = read_qrels(data / "qrels.comment.test")
    rows = assert_qrels_are_the_plain_rows(qrels, data / "qrels.comment.test")
    assert len(set(qrels.qid.tolist())) == len({row[0] for row in rows}) > 1
    assert Counter(qrels.rel.tolist()) == Counter(int(row[3]) for row in rows)
    assert qrels.docno[0] == "msmarco_v2.1_doc_00_880019750#4_1633802806"
    assert all("#" in d for d in qrels.docno.tolist())


def test_run_counts(data):
    run = read_run(data / "results.test")
    assert isinstance(run, Run)
    rows = assert_run_is_the_plain_rows(run, data / "results.test")
    assert Counter(run.qid.tolist()) == Counter(row[0] for row in rows)
    assert run.score.dtype == np.float64 and run.rank.dtype == np.int64
    assert set(run.tag.tolist()) == {"STANDARD"}
    assert (run.qid[0], run.docno[0], run.rank[0], run.score[0]) == (
        "301", "FR940202-2-00150", 104, 2.129133)


def test_run_with_junk_after_tag(data):
    run = read_run(data / "results.trunc")
    rows = assert_run_is_the_plain_rows(run, data / "results.trunc")
    assert any(len(row) > 6 for row in rows)  # the junk this file is about
    assert Counter(run.qid.tolist()) == Counter(row[0] for row in rows)
    assert set(run.tag.tolist()) == {"STANDARD"}
    assert (run.docno[0], run.rank[0], run.score[0]) == ("FBIS3-27619", 99, 2.138276)


def test_run_docno_with_hash(data):
    run = read_run(data / "results.comment.test")
    rows = assert_run_is_the_plain_rows(run, data / "results.comment.test")
    assert len(set(run.qid.tolist())) == len({row[0] for row in rows}) > 1
    assert run.docno[0] == "msmarco_v2.1_doc_50_2286987788#13_3087841662"
    assert all("#" in d for d in run.docno.tolist())
    assert run.score[0] == 0.7 and run.score[1] == 0.6898301657029192
    assert set(run.tag.tolist()) == {"comment.test"}


def test_qrels_jg_files_have_duplicates(data):
    # qrels.123 holds several judgement groups (the iter column) judging the
    # same documents; as a plain qrels file that is a duplicate, as in trec_eval.
    seen, duplicate = {}, None
    for number, line in enumerate((data / "qrels.123").read_text().splitlines(), start=1):
        qid, _, docno, _ = line.split()
        if (qid, docno) in seen:
            duplicate = (qid, docno, seen[qid, docno], number)
            break
        seen[qid, docno] = number
    qid, docno, first, again = duplicate
    with pytest.raises(ValueError, match=rf"qrels\.123: duplicate document '{docno}' "
                                         rf"for query '{qid}' \(lines {first} and {again}\)"):
        read_qrels(data / "qrels.123")


def test_empty_qid_column_is_malformed(data):
    # prefs.rank20 has an empty qid column, so its lines have five fields.
    with pytest.raises(ValueError, match=r"prefs\.rank20:1: expected"):
        read_run(data / "prefs.rank20")


@pytest.mark.parametrize("name, reader", [("results.comment.test", read_run),
                                          ("qrels.comment.test", read_qrels),
                                          ("results.trunc", read_run)])
def test_gzip_round_trip(data, tmp_path, name, reader):
    plain = reader(data / name)
    raw = (data / name).read_bytes()
    # Detected from the magic bytes, whatever the suffix.
    for target in (tmp_path / (name + ".gz"), tmp_path / name):
        target.write_bytes(gzip.compress(raw))
        packed = reader(target)
        assert len(packed) == len(plain)
        for field in vars(plain):
            np.testing.assert_array_equal(getattr(packed, field), getattr(plain, field))
    # File objects work too.
    with open(tmp_path / name, "rb") as f:
        np.testing.assert_array_equal(reader(f).docno, plain.docno)


def test_chunked_parse_matches(data, monkeypatch):
    whole = read_run(data / "results.comment.test")
    monkeypatch.setattr(_tokenize, "_CHUNK_BYTES", 997)
    pieces = read_run(data / "results.comment.test")
    for field in vars(whole):
        np.testing.assert_array_equal(getattr(pieces, field), getattr(whole, field))
    qrels = read_qrels(data / "qrels.test.with-comments")
    assert_qrels_are_the_plain_rows(qrels, data / "qrels.test.with-comments")
    assert qrels.docno[4] == "CR#93E-1860"


# --------------------------------------------------------------------------
# Readers on small files
# --------------------------------------------------------------------------


def test_comments_blank_lines_and_whitespace(tmp_path):
    text = ("# header\n"
            "\n"
            "   # indented comment\n"
            "\t301\tQ0  a#1 1 1.5e0 tag junk tokens\r\n"
            "   \t \n"
            "301 Q0 b 2 -0.25 tag\n"
            "302 Q0 #c 1 7 tag")  # no final newline; '#' not first on its line
    run = read_run(write(tmp_path / "run.txt", text))
    assert run.qid.tolist() == ["301", "301", "302"]
    assert run.docno.tolist() == ["a#1", "b", "#c"]
    assert run.score.tolist() == [1.5, -0.25, 7.0]
    assert run.rank.tolist() == [1, 2, 1]
    assert run.tag.tolist() == ["tag", "tag", "tag"]


def test_numbers_parse_like_strtod(tmp_path, monkeypatch):
    scores = ["1", "-0", "+.5", "1.", "0.1", "-2.25", "007.50", "1e-3", "-1.5E+2", "inf",
              "0.6898301657029192", "9007199254740993", "12345678901234567890.5",
              "0.30000000000000004", "1.7976931348623157e308", "4.9e-324", "123456.7890123456"]
    ranks = ["0", "+3", "-2", "007", "123456789012345678"]
    rng = np.random.default_rng(0)
    scores += [f"{x:.{int(d)}f}" for x, d in zip(rng.normal(0, 1e3, 300), rng.integers(0, 17, 300))]
    lines = [f"q Q0 d{i} {ranks[i % len(ranks)]} {sc} t\n" for i, sc in enumerate(scores)]
    path = write(tmp_path / "run.txt", "".join(lines))
    for chunk in (_tokenize._CHUNK_BYTES, 64):
        monkeypatch.setattr(_tokenize, "_CHUNK_BYTES", chunk)
        run = read_run(path)
        assert run.score.tolist() == [float(x) for x in scores]  # exact, not approx
        assert np.signbit(run.score[1])
        assert run.rank.tolist() == [int(ranks[i % len(ranks)]) for i in range(len(scores))]


def test_file_objects_and_empty_file(tmp_path):
    run = read_run(io.StringIO("q Q0 d 1 2 t\n"))
    assert run.docno.tolist() == ["d"]
    empty = read_run(write(tmp_path / "empty.txt", "# nothing\n\n"))
    assert len(empty) == 0 and empty.score.dtype == np.float64
    assert len(read_qrels(write(tmp_path / "empty.qrels", b""))) == 0


def test_non_ascii_docnos(tmp_path):
    qrels = read_qrels(write(tmp_path / "q.txt", "q1 0 café 1\nq1 0 naïve 0\n"))
    assert qrels.docno.tolist() == ["café", "naïve"]


def test_too_few_fields_message(tmp_path):
    path = write(tmp_path / "run.txt", "# c\n301 Q0 doc0 1 1.0 t\n\n301 Q0 doc1 x\n")
    with pytest.raises(ValueError) as excinfo:
        read_run(path)
    assert str(excinfo.value) == (
        f"{path}:4: expected 'qid Q0 docno rank score tag', got '301 Q0 doc1 x' "
        f"(4 fields, expected at least 6)")


@pytest.mark.parametrize("line, what", [
    ("301 Q0 doc1 1 abc t", "score 'abc' is not a number"),
    ("301 Q0 doc1 1 nan t", "score 'nan' is not a number"),
    ("301 Q0 doc1 1 1_0 t", "score '1_0' is not a number"),
    ("301 Q0 doc1 1.0 2 t", "rank '1.0' is not an integer"),
    ("301 Q0 doc1 99999999999999999999 2 t", "rank '99999999999999999999' is not an integer"),
])
def test_bad_number_message(tmp_path, monkeypatch, line, what):
    good = "".join(f"301 Q0 d{i} {i} {i}.5 t\n" for i in range(300))
    path = write(tmp_path / "run.txt", good + line + "\n" + good.replace("301", "302"))
    for chunk in (_tokenize._CHUNK_BYTES, 1000):  # error in the first chunk or a later one
        monkeypatch.setattr(_tokenize, "_CHUNK_BYTES", chunk)
        with pytest.raises(ValueError) as excinfo:
            read_run(path)
        assert str(excinfo.value) == (
            f"{path}:301: expected 'qid Q0 docno rank score tag', got {line!r} ({what})")


def test_bad_qrels_lines(tmp_path):
    path = write(tmp_path / "qrels.txt", "1 0 a 1\n1 0 b 1 extra\n")
    with pytest.raises(ValueError, match=r"qrels.txt:2: expected 'qid iter docno rel', "
                                         r"got '1 0 b 1 extra' \(5 fields, expected 4\)"):
        read_qrels(path)
    path = write(tmp_path / "qrels.txt", "1 0 a 1\n1 0 b\n")
    with pytest.raises(ValueError, match=r"qrels.txt:2: expected 'qid iter docno rel', "
                                         r"got '1 0 b' \(3 fields, expected 4\)$"):
        read_qrels(path)
    path = write(tmp_path / "qrels.txt", "1 0 a 1\n1 0 b 0.5\n")
    with pytest.raises(ValueError, match=r"qrels.txt:2: .*\(rel '0.5' is not an integer\)"):
        read_qrels(path)


def test_duplicates_are_errors(tmp_path):
    path = write(tmp_path / "run.txt",
                 "1 Q0 a 1 3 t\n2 Q0 a 1 3 t\n1 Q0 b 2 2 t\n# x\n1 Q0 a 3 1 t\n")
    with pytest.raises(ValueError) as excinfo:
        read_run(path)
    assert str(excinfo.value) == f"{path}: duplicate document 'a' for query '1' (lines 1 and 5)"
    path = write(tmp_path / "qrels.txt", "1 0 a 1\n1 0 b 0\n1 1 b 1\n")
    with pytest.raises(ValueError, match=r"duplicate document 'b' for query '1' \(lines 2 and 3\)"):
        read_qrels(path)


def test_duplicates_found_despite_hash_collisions(tmp_path, monkeypatch):
    monkeypatch.setattr(_tokenize, "_pair_hash", lambda q, d: np.zeros(q.shape[0], np.uint64))
    path = write(tmp_path / "run.txt", "1 Q0 a 1 3 t\n1 Q0 b 1 3 t\n1 Q0 c 1 3 t\n1 Q0 b 1 3 t\n")
    with pytest.raises(ValueError, match=r"'b' for query '1' \(lines 2 and 4\)"):
        read_run(path)
    assert len(read_run(write(tmp_path / "ok.txt", "1 Q0 a 1 3 t\n2 Q0 a 1 3 t\n"))) == 2


def test_hash_ignores_array_width():
    # The qrels' and the run's byte columns have their own widths: equal pairs must
    # hash alike whatever the widths, and the qid must count.
    qid, docno = np.array([b"q1", b"q1"]), np.array([b"ab", b"abcdefghi"])
    narrow = _tokenize._pair_hash(qid, docno)
    np.testing.assert_array_equal(narrow, _tokenize._pair_hash(qid.astype("S17"),
                                                               docno.astype("S40")))
    assert narrow[0] != narrow[1]
    assert narrow[0] != _tokenize._pair_hash(np.array([b"q2"]), docno[:1])[0]
    # (q, "1x") and (q1, "x") are different pairs.
    assert (_tokenize._pair_hash(np.array([b"q"]), np.array([b"1x"]))[0]
            != _tokenize._pair_hash(np.array([b"q1"]), np.array([b"x"]))[0])


def test_nul_bytes_rejected(tmp_path):
    with pytest.raises(ValueError, match="NUL bytes"):
        read_run(write(tmp_path / "run.txt", b"1 Q0 a\x00b 1 2 t\n"))


def test_containers_and_pandas():
    run = Run(qid=[2, 1, 2], docno=["a", "b", "c"], score=[1, 2, 3])
    assert run.qid.tolist() == ["2", "1", "2"]
    assert run.rank.tolist() == [1, 1, 2]
    assert run.tag.tolist() == ["", "", ""]
    assert repr(run) == "Run(n_rows=3, n_queries=2)"
    assert repr(Run(qid=[], docno=[], score=[])) == "Run(n_rows=0, n_queries=0)"
    frame = run.to_pandas()
    assert list(frame.columns) == ["qid", "docno", "score", "rank", "tag"]
    assert frame["score"].tolist() == [1.0, 2.0, 3.0]
    qrels = Qrels(qid=["1"], docno=["a"], rel=[2])
    assert qrels.to_pandas().to_dict("list") == {"qid": ["1"], "docno": ["a"], "rel": [2]}
    with pytest.raises(ValueError, match="same length"):
        Qrels(qid=["1", "2"], docno=["a"], rel=[1])
    with pytest.raises(ValueError, match="integers"):
        Qrels(qid=["1"], docno=["a"], rel=[0.5])
    with pytest.raises(AttributeError):
        qrels.rel = np.array([1])


# --------------------------------------------------------------------------
# Join
# --------------------------------------------------------------------------


def tiny():
    qrels = Qrels(
        qid=["q1", "q1", "q1", "q1", "q2", "q2", "q3"],
        docno=["a", "b", "x", "y", "a", "c", "z"],
        rel=[1, 0, 2, -1, 1, 3, 1],
    )
    run = Run(
        qid=["q1", "q1", "q1", "q1", "q1", "q3", "q3", "q9"],
        # q1: d, a, c tie at 1.0 -> trec order d, c, a (docno descending)
        docno=["a", "c", "b", "d", "e", "z", "w", "a"],
        score=[1.0, 1.0, 3.0, 1.0, -2.0, 0.1, 0.2, 5.0],
    )
    return qrels, run


def as_rows(arrays):
    return list(zip(arrays.qid.tolist(), arrays.docno.tolist(), arrays.y_true.tolist(),
                    [None if math.isnan(s) else s for s in arrays.y_score.tolist()],
                    arrays.retrieved.tolist(), arrays.judged.tolist()))


def test_join_skip():
    qrels, run = tiny()
    arrays = join_qrels_run(qrels, run)
    assert isinstance(arrays, TrecArrays)
    assert arrays.y_true.dtype == np.float64 and arrays.y_score.dtype == np.float64
    assert arrays.retrieved.dtype == bool and arrays.qid.dtype.kind == "U"
    assert as_rows(arrays) == [
        ("q1", "b", 0.0, 3.0, True, True),
        ("q1", "d", 0.0, 1.0, True, False),
        ("q1", "c", 0.0, 1.0, True, False),
        ("q1", "a", 1.0, 1.0, True, True),
        ("q1", "e", 0.0, -2.0, True, False),
        ("q1", "x", 2.0, None, False, True),
        ("q1", "y", -1.0, None, False, True),
        ("q3", "w", 0.0, 0.2, True, False),
        ("q3", "z", 1.0, 0.1, True, True),
    ]


def test_join_zero():
    qrels, run = tiny()
    rows = as_rows(join_qrels_run(qrels, run, missing_queries="zero"))
    assert rows[:7] == as_rows(join_qrels_run(qrels, run))[:7]
    assert rows[7:9] == [("q2", "a", 1.0, None, False, True),
                         ("q2", "c", 3.0, None, False, True)]
    assert [r[0] for r in rows[9:]] == ["q3", "q3"]


def test_join_tie_order_is_strcmp_descending():
    docnos = ["doc10", "doc9", "Doc9", "doc1", "doc_1", "doc-1", "é", "z"]
    run = Run(qid=["q"] * len(docnos), docno=docnos, score=[0.5] * len(docnos))
    qrels = Qrels(qid=["q"], docno=["doc9"], rel=[1])
    arrays = join_qrels_run(qrels, run)
    expected = sorted(docnos, key=lambda d: d.encode("utf-8"), reverse=True)
    assert arrays.docno.tolist() == expected
    # Scores first: -0.0 and 0.0 tie, as in C.
    run = Run(qid=["q"] * 3, docno=["a", "b", "c"], score=[0.0, -0.0, np.inf])
    assert join_qrels_run(qrels, run, missing_queries="zero").docno.tolist() == [
        "c", "b", "a", "doc9"]


def reference_join(qrels, run, missing_queries):
    """trec_eval's semantics, one query at a time in plain Python."""
    judged = {}
    for q, d, r in zip(qrels.qid.tolist(), qrels.docno.tolist(), qrels.rel.tolist()):
        judged.setdefault(q, {})[d] = r
    retrieved = {}
    for q, d, s in zip(run.qid.tolist(), run.docno.tolist(), run.score.tolist()):
        retrieved.setdefault(q, []).append((d, s))
    queries = set(judged) if missing_queries == "zero" else set(judged) & set(retrieved)
    rows = []
    for q in sorted(queries):
        docs = sorted(retrieved.get(q, []), key=lambda ds: ds[0].encode(), reverse=True)
        docs.sort(key=lambda ds: -ds[1])  # stable: docno descending within equal scores
        seen = set()
        for d, s in docs:
            seen.add(d)
            rows.append((q, d, float(judged[q].get(d, 0)), s, True, d in judged[q]))
        rows.extend((q, d, float(r), None, False, True)
                    for d, r in judged[q].items() if d not in seen)
    return rows


@pytest.mark.parametrize("seed", range(40))
def test_join_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n_queries = int(rng.integers(1, 6))
    qids = rng.choice(["1", "2", "10", "q", "b", "a9"], n_queries, replace=False)
    docs = np.array(["d1", "d2", "d10", "D3", "x#1", "é", "zz", "d1x", "a"])
    qrel_rows = [(q, d) for q in qids for d in docs if rng.random() < 0.4]
    run_rows = [(q, d) for q in qids for d in docs if rng.random() < 0.5]
    qrels = Qrels(qid=[q for q, _ in qrel_rows], docno=[d for _, d in qrel_rows],
                  rel=rng.integers(-1, 4, len(qrel_rows)))
    scores = rng.integers(0, 4, len(run_rows)) / 2  # many ties
    if seed % 3 == 0:  # written the usual way: by query, best first
        by_score = np.lexsort((-scores, [q for q, _ in run_rows]))
        run_rows, scores = [run_rows[i] for i in by_score], scores[by_score]
    elif seed % 3 == 1:
        shuffle = rng.permutation(len(run_rows))
        run_rows, scores = [run_rows[i] for i in shuffle], scores[shuffle]
    run = Run(qid=[q for q, _ in run_rows], docno=[d for _, d in run_rows], score=scores)
    for missing in ("skip", "zero"):
        assert as_rows(join_qrels_run(qrels, run, missing_queries=missing)) == \
            reference_join(qrels, run, missing)


def test_join_block_order_fast_path():
    # Sorted within queries, queries not in sorted order: blocks are moved.
    run = Run(qid=["b", "b", "a", "c", "c"], docno=["1", "2", "3", "4", "5"],
              score=[3, 2, 9, 1, 1])
    qrels = Qrels(qid=["a", "b", "c", "b"], docno=["9", "2", "4", "0"], rel=[1, 1, 0, 2])
    arrays = join_qrels_run(qrels, run)
    assert list(zip(arrays.qid.tolist(), arrays.docno.tolist())) == [
        ("a", "3"), ("a", "9"), ("b", "1"), ("b", "2"), ("b", "0"), ("c", "5"), ("c", "4")]


def test_join_hash_collisions_fall_back(monkeypatch):
    qrels, run = tiny()
    expected = as_rows(join_qrels_run(qrels, run, missing_queries="zero"))
    # Every pair hashes alike: duplicates and matches are then decided on the ids.
    monkeypatch.setattr(_tokenize, "_pair_hash", lambda q, d: np.zeros(q.shape[0], np.uint64))
    exact = []
    match = _join._match
    monkeypatch.setattr(_join, "_match", lambda r, q: exact.append(r) or match(r, q))
    assert as_rows(join_qrels_run(qrels, run, missing_queries="zero")) == expected
    assert len(exact) == 2  # the hashed match found the collision, the exact one ran


def test_join_errors_and_empty():
    qrels, run = tiny()
    with pytest.raises(ValueError, match="missing_queries must be one of"):
        join_qrels_run(qrels, run, missing_queries="all")
    with pytest.raises(TypeError, match="qrels must be a Qrels"):
        join_qrels_run(run, run)
    dup = Qrels(qid=["q1", "q1"], docno=["a", "a"], rel=[1, 0])
    with pytest.raises(ValueError, match="duplicate document 'a' for query 'q1' in qrels"):
        join_qrels_run(dup, run)
    nan = Run(qid=["q1"], docno=["a"], score=[np.nan])
    with pytest.raises(ValueError, match="must not be NaN"):
        join_qrels_run(qrels, nan)
    empty = join_qrels_run(qrels, Run(qid=[], docno=[], score=[]))
    assert len(empty) == 0
    assert len(join_qrels_run(qrels, Run(qid=[], docno=[], score=[]),
                              missing_queries="zero")) == len(qrels)


# --------------------------------------------------------------------------
# Join against trec_eval's own output
# --------------------------------------------------------------------------


def per_query_counts(arrays, level=1):
    counts = {}
    for qid, rows in query_groups(arrays):
        relevant = arrays.y_true[rows] >= level
        retrieved = arrays.retrieved[rows]
        counts[qid] = (int(retrieved.sum()), int(relevant.sum()),
                       int((relevant & retrieved).sum()))
    return counts


@pytest.mark.parametrize("qrels_name, run_name, out_name, missing, level", [
    ("qrels.test", "results.test", "out.test.aq", "skip", 1),
    ("qrels.test.with-comments", "results.test", "out.test.aq", "skip", 1),
    ("qrels.test", "results.trunc", "out.test.aqc", "zero", 1),
    ("qrels.rel_level", "results.test", "out.test.aql", "skip", 2),
])
def test_counts_match_trec_eval(data, qrels_name, run_name, out_name, missing, level):
    arrays = join_qrels_run(read_qrels(data / qrels_name), read_run(data / run_name),
                            missing_queries=missing)
    expected = read_out(data / out_name)
    counts = per_query_counts(arrays, level)
    assert sorted(counts) == sorted(q for (m, q) in expected if m == "num_ret" and q != "all")
    assert int(expected["num_q", "all"]) == len(counts)
    for qid, (num_ret, num_rel, num_rel_ret) in counts.items():
        assert num_ret == int(expected["num_ret", qid])
        assert num_rel == int(expected["num_rel", qid])
        assert num_rel_ret == int(expected["num_rel_ret", qid])
    totals = np.sum(list(counts.values()), axis=0)
    assert totals.tolist() == [int(expected[m, "all"]) for m in
                               ("num_ret", "num_rel", "num_rel_ret")]


@pytest.mark.parametrize("qrels_name, run_name, out_name, missing", [
    ("qrels.test", "results.test", "out.test.aq", "skip"),
    ("qrels.test", "results.trunc", "out.test.aqc", "zero"),
    ("qrels.comment.test", "results.comment.test", "out.comment.test", "skip"),
])
def test_ranking_order_matches_trec_eval(data, qrels_name, run_name, out_name, missing):
    """Average precision depends on the full ranking, ties included."""
    arrays = join_qrels_run(read_qrels(data / qrels_name), read_run(data / run_name),
                            missing_queries=missing)
    expected = read_out(data / out_name)
    aps = {}
    for qid, rows in query_groups(arrays):
        retrieved = arrays.retrieved[rows]
        assert not retrieved[np.argmin(retrieved):].any()  # retrieved rows first
        relevant = arrays.y_true[rows] >= 1
        hits = relevant[retrieved]
        precision = np.cumsum(hits) / np.arange(1, hits.size + 1)
        aps[qid] = precision[hits].sum() / relevant.sum() if relevant.sum() else 0.0
        if ("map", qid) in expected:
            assert aps[qid] == pytest.approx(float(expected["map", qid]), abs=5e-5)
    assert np.mean(list(aps.values())) == pytest.approx(float(expected["map", "all"]), abs=5e-5)


def relstring(arrays, rows, length):
    chars = []
    for rel, judged in zip(arrays.y_true[rows][:length], arrays.judged[rows][:length]):
        if not judged:
            chars.append("-")
        elif rel < 0:
            chars.append(".")
        else:
            chars.append(">" if rel > 9 else str(int(rel)))
    return "'" + "".join(chars) + "'"


@pytest.mark.parametrize("qrels_name, out_name, measure, length", [
    ("qrels.test", "out.test.aq", "relstring", 10),
    ("qrels.rel_level", "out.test.aql", "relstring_20", 20),
])
def test_relstring_matches_trec_eval(data, qrels_name, out_name, measure, length):
    arrays = join_qrels_run(read_qrels(data / qrels_name), read_run(data / "results.test"))
    expected = read_out(data / out_name)
    for qid, rows in query_groups(arrays):
        assert relstring(arrays, rows, length) == expected[measure, qid]


@pytest.mark.parametrize("seed", range(20))
def test_block_order_sorts_each_query_block_like_lexsort(seed):
    # Oracle: one stable np.lexsort over all rows. Query blocks contiguous,
    # in any order, ragged lengths, scores unsorted with ties, +-0 and +-inf (NaN scores
    # are rejected before the rows are ordered).
    rng = np.random.default_rng(seed)
    n_queries = int(rng.integers(1, 30))
    lengths = rng.integers(1, [3, 50, 300][seed % 3], n_queries)
    codes = np.repeat(rng.permutation(n_queries), lengths)
    values = [0.0, -0.0, 1.0, 2.5, -3.0, np.inf, -np.inf]
    neg_score = rng.choice(values, codes.size)
    expected = np.lexsort((neg_score, codes))
    np.testing.assert_array_equal(_join._order_desc(codes, np.negative(neg_score)), expected)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("descending", [False, True])
def test_order_ties_sorts_each_group_stably(seed, descending):
    # The one tie-reordering routine (trec_eval's docno order here, the engine's
    # pessimistic/optimistic label order): oracle, Python's stable sort per group.
    from skrank._engine.ranking import order_ties

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    group_of = np.cumsum(rng.random(n) < 0.3)            # runs of tied rows
    keys = rng.integers(0, 4, n)                         # repeated keys: stability shows
    same = group_of[1:] == group_of[:-1]
    rows, ordered = order_ties(same, keys.__getitem__, descending=descending)
    result = np.arange(n)
    result[rows] = ordered
    expected = []
    for g in np.unique(group_of):
        members = np.flatnonzero(group_of == g).tolist()
        expected += sorted(members, key=lambda r: -keys[r] if descending else keys[r])
    assert result.tolist() == expected
    assert set(rows.tolist()) == {r for r in range(n) if np.sum(group_of == group_of[r]) > 1}
