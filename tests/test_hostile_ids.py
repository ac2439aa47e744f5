"""Long ids: memory follows the total length of the ids, not rows x the longest.

Fixed-width id columns (``S``/``U`` arrays) cost every row the longest id: one
4,000-character docno in a 500k-line run took peak memory from 118 MB to 2.09 GB,
a dict run with one long id 10 GB.  Each case here compares the peak (tracemalloc,
which sees numpy's buffers) and the values with the same input whose long id is
replaced by a short one.
"""

import contextlib
import io
import os
import tracemalloc

import numpy as np
import pytest

import skrank
from skrank.cli import main
from skrank.io import Qrels, Run, read_qrels, read_run

N_QUERIES, PER_QUERY = 40, 500  # 20,000 run lines
LONG = 4000


def _peak(call):
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _files(tmp_path, name, long_docno, long_qid):
    run, qrels = [], []
    for q in range(N_QUERIES):
        qid = long_qid if q == 7 else f"q{q:02d}"
        for r in range(PER_QUERY):
            docno = long_docno if (q, r) == (3, 4) else f"d{r}"
            run.append(f"{qid} Q0 {docno} {r + 1} {(PER_QUERY - r) // 2} run1\n")  # ties
            if r % 7 == 4:
                qrels.append(f"{qid} 0 {docno} {r % 3}\n")
    run_path, qrels_path = tmp_path / f"run_{name}", tmp_path / f"qrels_{name}"
    run_path.write_text("".join(run))
    qrels_path.write_text("".join(qrels))
    return str(qrels_path), str(run_path)


def _size(paths):
    return sum(os.path.getsize(path) for path in paths)


def _cli(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


# "d4x..." sorts where "d4" does among the tied docnos ("d4" < "d4x..." < "d5"), and
# "q07y..." where "q07" does: the output is the same but for the ids' text.
@pytest.mark.parametrize("metrics", [["-m", "map", "-m", "P.5"], ["-m", "ndcg@10", "-m", "map"]])
@pytest.mark.parametrize("stream", [False, True])
def test_cli_peak_memory_follows_the_file_not_rows_x_longest(tmp_path, metrics, stream):
    short = _files(tmp_path, "short", "d4", "q07")
    long = _files(tmp_path, "long", "d4" + "x" * LONG, "q07" + "y" * LONG)
    options = ["--stream", "--block-size", "64K"] if stream else []
    expected, short_peak = _peak(lambda: _cli(["evaluate", *short, *metrics, "-q", *options]))
    got, long_peak = _peak(lambda: _cli(["evaluate", *long, *metrics, "-q", *options]))
    assert got.replace("q07" + "y" * LONG, "q07") == expected
    # rows x longest would be 20,000 x 4,000 bytes (80 MB; 320 MB as str); the long
    # qid is on 500 lines (2 MB of the 2.4 MB of the files)
    assert long_peak < short_peak + 8 * _size(long), (short_peak, long_peak, _size(long))


def test_readers_hold_long_ids_as_objects(tmp_path):
    short = _files(tmp_path, "short", "d4", "q07")
    long = _files(tmp_path, "long", "d4" + "x" * LONG, "q07" + "y" * LONG)
    (s_qrels, s_run), s_peak = _peak(lambda: (read_qrels(short[0]), read_run(short[1])))
    (l_qrels, l_run), l_peak = _peak(lambda: (read_qrels(long[0]), read_run(long[1])))
    assert l_peak < s_peak + 8 * _size(long), (s_peak, l_peak, _size(long))
    assert s_run.docno.dtype.kind == "U" and l_run.docno.dtype == object
    assert l_run.docno.tolist()[3 * PER_QUERY + 4] == "d4" + "x" * LONG
    assert [d.replace("x" * LONG, "") for d in l_run.docno.tolist()] == s_run.docno.tolist()
    assert [q.replace("y" * LONG, "") for q in l_qrels.qid.tolist()] == s_qrels.qid.tolist()
    expected = skrank.evaluate(qrels=s_qrels, run=s_run, metrics=["ndcg@10", "map"])
    got = skrank.evaluate(qrels=l_qrels, run=l_run, metrics=["ndcg@10", "map"])
    assert got.mean == expected.mean


def _dicts(long_id):
    rng = np.random.default_rng(0)
    docs = [f"d{i}" for i in range(2000)]
    docs[5] = long_id
    run = {f"q{q}": {docs[i]: float(rng.random()) for i in range(q * 100, q * 100 + 100)}
           for q in range(20)}
    qrels = {f"q{q}": {docs[i]: i % 3 for i in range(q * 100, q * 100 + 100, 2)}
             for q in range(20)}
    return qrels, run


def test_dict_run_with_one_long_id():
    """Before: the dicts' ids became ``<U`` arrays of 2,000 x 20,000 characters (160 MB)."""
    evaluate = lambda qrels, run: skrank.evaluate(qrels=qrels, run=run,  # noqa: E731
                                                  metrics=["ndcg@10", "map", "mrr"])
    evaluate(*_dicts("d5"))  # warm-up
    expected, short_peak = _peak(lambda: evaluate(*_dicts("d5")))
    got, long_peak = _peak(lambda: evaluate(*_dicts("d5" + "z" * 20000)))
    assert got.mean == expected.mean
    assert long_peak < 1.5 * short_peak + 10 ** 6, (short_peak, long_peak)


def test_object_array_ids_with_one_long_id():
    rng = np.random.default_rng(1)
    n = 2000
    y, score = rng.integers(0, 3, n), rng.random(n)
    ids = [f"q{i // 100:02d}" for i in range(n)]
    short = np.array(ids, dtype=object)
    ids[100:200] = ["q01" + "y" * 20000 for _ in range(100)]  # 100 objects
    long = np.empty(n, dtype=object)
    long[:] = ids
    expected, short_peak = _peak(lambda: skrank.ndcg_score(y, score, qid=short, k=10))
    got, long_peak = _peak(lambda: skrank.ndcg_score(y, score, qid=long, k=10))
    assert got == expected
    # rows x longest: 2,000 x 20,003 characters (160 MB as str); the ids hold 2 MB
    assert long_peak < 3 * 100 * 20003 + short_peak + 10 ** 6, (short_peak, long_peak)
    docs = np.array([f"d{i}" for i in range(n)], dtype=object)
    run, peak = _peak(lambda: Run(qid=long, docno=docs, score=score))
    assert run.qid.dtype == object and run.qid.tolist() == ids and run.docno.dtype.kind == "U"
    assert peak < 3 * 100 * 20003 + 10 ** 6
    qrels = Qrels(qid=long, docno=docs, rel=y)
    assert skrank.evaluate(qrels=qrels, run=run, metrics=["map"]).mean["map"] == \
        skrank.evaluate(qrels=Qrels(qid=short, docno=docs, rel=y),
                        run=Run(qid=short, docno=docs, score=score), metrics=["map"]).mean["map"]


def test_joined_strings_refuse_fixed_cells_for_one_long_id():
    from skrank._engine.codes import _joined_strings

    assert _joined_strings(["a", "bb", "c"]).dtype == np.dtype("S3")
    assert _joined_strings(["a"] * 100 + ["b" * 100000]) is None


def test_judgement_groups_with_long_ids(tmp_path):
    """``-R qrels_jg`` joins each query id with its group as text: long ids stay objects."""
    short = _files(tmp_path, "short", "d4", "q07")
    long = _files(tmp_path, "long", "d4" + "x" * LONG, "q07" + "y" * LONG)
    argv = ["-R", "qrels_jg", "-m", "qrels_jg", "-q"]
    expected = _cli(["evaluate", *argv, *short])
    assert _cli(["evaluate", *argv, *long]).replace("q07" + "y" * LONG, "q07") == expected


def test_pair_hash_is_the_same_for_fixed_width_and_object_ids():
    """A qrels read fixed-width and a run read as objects (or the reverse) match on
    their pairs' hashes: the hash depends on the bytes only."""
    from skrank.io._tokenize import _pair_hash

    qid = [b"q1", b"q1", b"q22", b"q" * 30, b"q1"]
    docno = [b"d", b"abcdefgh", b"abcdefghi", b"x" * 100, b""]
    fixed = _pair_hash(np.array(qid), np.array(docno))
    objects = _pair_hash(np.array(qid, dtype=object), np.array(docno, dtype=object))
    wider = _pair_hash(np.array(qid, dtype="S40"), np.array(docno, dtype="S200"))
    assert fixed.tolist() == objects.tolist() == wider.tolist()
    assert len(set(fixed.tolist())) == 5


def test_arrow_string_ids_with_one_long_id():
    """pandas' Arrow strings were laid into fixed-width cells (rows x the longest)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(2)
    n = 2000
    y, score = rng.integers(0, 3, n), rng.random(n)
    ids = [f"q{i // 100:02d}" for i in range(n)]
    expected = skrank.ndcg_score(y, score, qid=pd.Series(ids, dtype="string[pyarrow]"), k=10)
    ids[100:200] = ["q01" + "y" * 20000] * 100
    long = pd.Series(ids, dtype="string[pyarrow]")
    got, peak = _peak(lambda: skrank.ndcg_score(y, score, qid=long, k=10))
    assert got == expected
    assert peak < 3 * 100 * 20003 + 10 ** 6  # rows x longest: 40 MB


def _judgements(long_docno, n_queries=40, per_query=500):
    """Two judges' qrels (dicts) on the same pairs, one pair's document id long."""
    a, b = {}, {}
    for q in range(n_queries):
        for r in range(per_query):
            doc = long_docno if (q, r) == (3, 4) else f"d{r}"
            a.setdefault(f"q{q:02d}", {})[doc] = r % 3
            b.setdefault(f"q{q:02d}", {})[doc] = (r + (q % 2)) % 3
    return a, b


def test_judging_memory_follows_the_ids():
    from skrank.judging import agreement, krippendorff_alpha, merge_qrels

    def run(long_docno):
        a, b = _judgements(long_docno)
        kappa = agreement(a, b).kappa
        alpha = krippendorff_alpha({"a": a, "b": b}, level="ordinal")
        merged = merge_qrels({"human": a, "llm": b}).to_qrels(prefer=["human"])
        return kappa, alpha, sorted(merged.rel.tolist())

    (short, short_peak) = _peak(lambda: run("x" * 8))
    (long, long_peak) = _peak(lambda: run("x" * LONG * 10))
    assert long == short
    # joined "qid<sep>docno" strings cost 20,000 pairs x 40,000 characters x 4 bytes
    # (3.2 GB); codes per column cost the ids themselves.
    assert long_peak < short_peak + 20 * LONG * 10 * 4 + 10 * 2**20


def test_pool_memory_follows_the_ids(tmp_path):
    from skrank.judging import read_pool

    def run(long_docno):
        runs = {name: {f"q{q:02d}": [long_docno if (q, r, name) == (3, 4, "a") else f"d{r}"
                                     for r in range(shift, 300 + shift)]
                       for q in range(40)}
                for name, shift in (("a", 0), ("b", 7))}
        pool = skrank.pool(runs, depth=300)
        path = tmp_path / f"pool{len(long_docno)}.tsv"
        pool.write(path)
        back = read_pool(path)
        return len(pool), back.ranks.tolist() == pool.ranks.tolist()

    (short, short_peak) = _peak(lambda: run("x" * 8))
    (long, long_peak) = _peak(lambda: run("x" * LONG * 10))
    assert long == short and long[1]
    assert long_peak < short_peak + 20 * LONG * 10 * 4 + 10 * 2**20


def test_beir_and_json_files_memory_follows_the_ids(tmp_path):
    import json

    def run(long_docno):
        docs = [long_docno if r == 4 else f"d{r}" for r in range(PER_QUERY)]
        beir = tmp_path / f"qrels{len(long_docno)}.tsv"
        beir.write_text("query-id\tcorpus-id\tscore\n" + "".join(
            f"q{q:02d}\t{d}\t{r % 3}\n" for q in range(N_QUERIES) for r, d in enumerate(docs)))
        results = tmp_path / f"run{len(long_docno)}.json"
        results.write_text(json.dumps({f"q{q:02d}": {d: float(-r) for r, d in enumerate(docs)}
                                       for q in range(N_QUERIES)}))
        qrels, ranked = read_qrels(beir, format="beir"), read_run(results)
        return skrank.evaluate(qrels=qrels, run=ranked, metrics=["map"]).mean["map"]

    (short, short_peak) = _peak(lambda: run("x" * 8))
    (long, long_peak) = _peak(lambda: run("x" * LONG * 10))
    assert long == short
    # A fixed-width column would cost 20,000 rows x 40,000 characters x 4 bytes (3.2 GB);
    # the long ids themselves are 40 x 40,000 characters (1.6 MB), held in a few copies
    # (the file's text, the parsed JSON, the columns, the joined tables).
    long_ids = N_QUERIES * LONG * 10
    assert long_peak < short_peak + 30 * long_ids
