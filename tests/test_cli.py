"""The `skrank` command: layout, options, errors (one line, exit status 2)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skrank.cli import main

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"


@pytest.fixture
def tiny(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 e 3\nq2 0 x 1\nq3 0 z 1\n")
    run = tmp_path / "run.txt"
    run.write_text(
        "q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\nq1 Q0 c 3 0.5 t\nq1 Q0 d 4 0.1 t\n"
        "q2 Q0 x 1 0.3 t\nq2 Q0 y 2 0.7 t\n"
    )
    return str(qrels), str(run)


def run_cli(capsys, argv):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_trec_layout_and_values(capsys, tiny):
    status, out, _ = run_cli(capsys, ["evaluate", *tiny, "-m", "ndcg", "-m", "P@2", "-q"])
    assert status == 0
    lines = [line.split("\t") for line in out.splitlines()]
    assert all(len(parts) == 3 for parts in lines)
    assert all(len(parts[0]) == 22 for parts in lines)          # left-justified in 22 columns
    values = {(m.strip(), q): float(v) for m, q, v in lines}
    # q1: c (rel 1) ranks before b at equal score (docno descending); e (rel 3) unretrieved.
    import numpy as np
    dcg = 2 + 1 / np.log2(3)
    idcg = 3 + 2 / np.log2(3) + 1 / np.log2(4)
    assert values[("ndcg", "q1")] == pytest.approx(round(dcg / idcg, 4))
    assert values[("ndcg", "q2")] == pytest.approx(round(1 / np.log2(3), 4))
    assert values[("P@2", "q2")] == 0.5
    assert ("ndcg", "q3") not in values                         # not in the run: left out
    assert values[("ndcg", "all")] == pytest.approx(round((dcg / idcg + 1 / np.log2(3)) / 2, 4),
                                                    abs=1e-4)


def test_complete_counts_missing_queries(capsys, tiny):
    _, out, _ = run_cli(capsys, ["evaluate", *tiny, "-m", "num_q", "-m", "map", "-c"])
    rows = dict((line.split("\t")[0].strip(), line.split("\t")[2]) for line in out.splitlines())
    assert rows["num_q"] == "3"
    # q1: relevant a (rank 1) and c (rank 2: c before b at equal score, docno descending),
    # e relevant but unretrieved, so R = 3; q2: x at rank 2 of 1 relevant; q3 missing: 0
    ap_q1, ap_q2 = (1 / 1 + 2 / 2) / 3, (1 / 2) / 1
    assert float(rows["map"]) == pytest.approx(round((ap_q1 + ap_q2 + 0) / 3, 4), abs=1e-12)


def test_missing_queries_warned_in_the_commands_voice(capsys, tiny):
    status, out, err = run_cli(capsys, ["evaluate", *tiny, "-m", "map@10"])
    assert status == 0
    rows = dict((line.split("\t")[0].strip(), line.split("\t")[2]) for line in out.splitlines())
    assert float(rows["map@10"]) == pytest.approx(round(((1 + 1) / 3 + 1 / 2) / 2, 4), abs=1e-12)
    warning_lines = err.splitlines()
    assert len(warning_lines) == 1, err
    assert warning_lines[0].startswith("skrank evaluate: warning: "), err
    assert "1 of the 3 queries" in warning_lines[0] and "'q3'" in warning_lines[0], err
    assert "UserWarning" not in err


def test_threshold_and_json(capsys, tiny):
    _, out, _ = run_cli(capsys, ["evaluate", *tiny, "-m", "map", "-l", "2", "--json"])
    data = json.loads(out)
    assert set(data) >= {"mean", "per_query", "qid"}
    assert data["per_query"]["q2"]["map"] == 0.0           # no document at level 2 in q2
    assert data["mean"]["map"] == pytest.approx(data["per_query"]["q1"]["map"] / 2)


@pytest.mark.parametrize("argv, fragment", [
    (["evaluate", "missing.qrels", "missing.run"], "missing.qrels: no such file"),
    (["evaluate", "QRELS", "RUN", "-m", "ndgc@10"], "Did you mean 'ndcg@10'"),
    (["evaluate", "QRELS", "RUN", "-m", "r_precision@5"], "takes no cutoff"),
    (["evaluate", "QRELS", "RUN", "--ties", "random"], "invalid choice"),
    (["evaluate", "QRELS"], "required"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_arguments_one_line_exit_2(capsys, tiny, argv, fragment):
    argv = [tiny[0] if a == "QRELS" else tiny[1] if a == "RUN" else a for a in argv]
    try:
        status = main(argv)
    except SystemExit as exc:                   # argparse's own errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1, err
    assert fragment in err


def test_console_script_and_module_entry_points():
    out = subprocess.run([sys.executable, "-m", "skrank", "demo", "--queries", "12", "--folds",
                          "2", "--rankers", "ridge", "--no-plot", "-q"], capture_output=True,
                         text=True, check=True).stdout
    assert "ndcg_exp@10" in out and "map" in out
    bad = subprocess.run([sys.executable, "-m", "skrank", "evaluate"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


@pytest.mark.skipif(not DATA.is_dir(), reason=f"trec_eval data absent at {DATA}")
def test_trec_eval_names_accepted(capsys):
    status, out, _ = run_cli(capsys, ["evaluate", str(DATA / "qrels.test"),
                                      str(DATA / "results.test"), "-m", "ndcg_cut.10",
                                      "-m", "P.5", "-m", "recip_rank"])
    assert status == 0
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names == ["recip_rank", "P_5", "ndcg_cut_10"]     # trec_eval's order, not -m's


def test_subcommand_help_lines_match_their_full_parsers():
    # `skrank evaluate` builds the other subcommands as one-line stubs (see _build_parser):
    # their help must be the full parsers' help.
    from skrank.cli import _build_parser

    def helps(parser):
        return {a.dest: a.help for a in parser._subparsers._group_actions[0]._choices_actions}

    assert helps(_build_parser("evaluate")) == helps(_build_parser())


# --------------------------------------------------------------------------
# Streaming: --stream reads and evaluates a run one block of queries at a time
# --------------------------------------------------------------------------


def _cli_text(capsys, argv):
    status, out, err = run_cli(capsys, argv)
    assert status == 0, err
    return out


def _grouped_run(tmp_path, seed=0):
    """A qrels and a run written query by query (queries in an order that is not
    their sorted one), tied scores, unjudged and -1 documents, one long query
    spanning several blocks, a query without judgements and one judged query
    absent from the run."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in rng.permutation(40)]
    run_lines, qrels_lines = [], []
    for qi, q in enumerate(queries):
        n = 400 if qi == 7 else int(rng.integers(1, 30))
        docs = rng.choice(10_000, size=n, replace=False)
        scores = np.round(rng.random(n), 1)  # ties
        order = np.argsort(-scores, kind="stable")
        for rank, i in enumerate(order, 1):
            run_lines.append(f"{q} Q0 d{docs[i]} {rank} {scores[i]} tag{qi % 3}\n")
        if q != queries[5]:  # queries[5]: in the run only
            for d in docs[rng.random(n) < 0.5]:
                qrels_lines.append(f"{q} 0 d{d} {rng.choice([-1, 0, 1, 2, 3])}\n")
    qrels_lines.append("q999 0 d1 1\n")  # judged, not in the run (-c)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(qrels_lines))
    run = tmp_path / "run.txt"
    run.write_text("".join(run_lines))
    return str(qrels), str(run)


import numpy as np  # noqa: E402


@pytest.mark.parametrize("options", [
    ["-c"], ["-c", "-q"], ["-c", "-q", "-m", "all_trec"], ["-c", "-q", "-m", "all_trec", "-l", "2"],
    ["-c", "-q", "-m", "all_trec", "-M", "5", "-J"], ["-c", "-m", "ndcg_cut.3,10", "-m", "relstring"],
])
@pytest.mark.parametrize("block", ["64", "1K", "256M"])
def test_stream_output_is_the_in_memory_output_byte_for_byte(capsys, tmp_path, options, block):
    qrels, run = _grouped_run(tmp_path)
    in_memory = _cli_text(capsys, ["evaluate", "--no-stream", *options, qrels, run])
    streamed = _cli_text(capsys, ["evaluate", "--stream", "--block-size", block, *options,
                                  qrels, run])
    assert streamed == in_memory
    assert "q999" in in_memory or "-q" not in options  # the -c placeholder query is there


@pytest.mark.skipif(not DATA.is_dir(), reason=f"trec_eval data absent at {DATA}")
@pytest.mark.parametrize("argv, expected", [
    (["-q", "qrels.test", "results.test"], "out.test.aq"),
    (["-q", "-c", "qrels.test", "results.trunc"], None),  # not grouped: an error
    (["-q", "-c", "-M100", "qrels.test", "results.trunc"], None),
    (["-m", "all_trec", "-m", "relstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
     "out.test.aql"),
    (["-q", "-Z", "zscores_file", "qrels.test", "results.test"], "out.test.aqZ"),
])
def test_stream_matches_trec_eval(capsys, argv, expected):
    argv = [str(DATA / a) if (DATA / a).exists() else a for a in argv]
    if "-m" not in argv:
        argv = ["-m", "all_trec", *argv]
    if expected is None:
        status, _, err = run_cli(capsys, ["evaluate", "--stream", "--block-size", "512", *argv])
        assert status == 2
        assert "results.trunc:" in err and "not grouped by query: query '301' comes again" in err
        assert "sort -k1,1 -s" in err and "--no-stream" in err
        return
    out = _cli_text(capsys, ["evaluate", "--stream", "--block-size", "2K", *argv])
    assert out == (DATA / expected).read_text()


def test_stream_names_the_first_line_where_a_query_comes_again(capsys, tmp_path):
    """Whatever the block size (a block holding the whole file included), --stream stops at
    the first line whose query came before other queries, and offers a sort command for
    that very file (zcat first for a gzip run)."""
    import gzip

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("a 0 d1 1\nb 0 d2 1\nc 0 d3 1\n")
    lines = ["a Q0 d1 1 3 t\n", "b Q0 d2 1 2 t\n", "a Q0 d9 2 1 t\n", "c Q0 d3 1 1 t\n"]
    want_line = 3  # 1-based: "a" again after "b"
    for name, write in (("run.txt", lambda p: p.write_text("".join(lines))),
                        ("run.gz", lambda p: p.write_bytes(gzip.compress("".join(lines).encode())))):
        run = tmp_path / name
        write(run)
        for block in ("16", "1K", "8MiB"):
            status, _, err = run_cli(capsys, ["evaluate", "--stream", "--block-size", block,
                                              str(qrels), str(run)])
            assert status == 2
            assert f"{name}:{want_line}: the run is not grouped by query: query 'a'" in err
            sort = (f"zcat {run} | LC_ALL=C sort -k1,1 -s > {tmp_path / 'run'}.sorted"
                    if name.endswith(".gz") else
                    f"LC_ALL=C sort -k1,1 -s {run} > {run}.sorted")
            assert sort in err
        # read whole, the same run gives values (and the sorted file the same ones)
        whole = _cli_text(capsys, ["evaluate", "-q", str(qrels), str(run)])
        ordered = tmp_path / "sorted.txt"
        ordered.write_text("".join(sorted(lines, key=lambda line: line.split()[0])))
        assert _cli_text(capsys, ["evaluate", "-q", "--stream", "--block-size", "16",
                                  str(qrels), str(ordered)]) == whole


def test_block_size_is_honoured_and_spelled_as_documented(tmp_path):
    """--block-size takes 4096, 64K, 8MiB, '8 MB', 1G (powers of 1024), and blocks smaller
    than the reader's pieces are read as such: one query per block here."""
    from skrank.io._stream import grouped_blocks
    from skrank.cli import _byte_size

    assert [_byte_size(t) for t in ("4096", "64K", "8MiB", "8 MB", "1g")] == [
        4096, 64 << 10, 8 << 20, 8 << 20, 1 << 30]
    for bad in ("0", "8TB", "-5", "x"):
        with pytest.raises(Exception, match="block size must be a positive number of bytes"):
            _byte_size(bad)
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q{q} Q0 d{d} {d} {1 / (d + 1)} t\n" for q in range(5)
                           for d in range(3)))
    blocks = list(grouped_blocks(str(run), 40, []))
    assert len(blocks) >= 4 and sum(len(b) for b in blocks) == 15


def test_stream_errors(capsys, tmp_path):
    qrels, run = _grouped_run(tmp_path)
    # Without -c, a judged query absent from the run stops, as in memory and in trec_eval.
    status, _, err = run_cli(capsys, ["evaluate", "--stream", "--block-size", "1K", qrels, run])
    assert status == 2 and "Got query 'q999' (1 in all) missing from the run" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    status, _, err = run_cli(capsys, ["evaluate", "--stream", qrels, str(empty)])
    assert status == 2 and "no line (an empty run file)" in err
    dup = tmp_path / "dup.txt"
    dup.write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq1 Q0 a 3 0 t\n")
    status, _, err = run_cli(capsys, ["evaluate", "--stream", "--block-size", "16", "-c", qrels,
                                      str(dup)])
    assert status == 2 and "duplicate document 'a' for query 'q1' (lines 1 and 3)" in err


def test_stream_is_automatic_above_one_block(capsys, tmp_path, monkeypatch):
    import skrank._trec_eval as trec

    qrels, run = _grouped_run(tmp_path)
    calls = []
    stream = trec.evaluate_stream
    monkeypatch.setattr(trec, "evaluate_stream", lambda *a, **k: calls.append(1) or stream(*a, **k))
    whole = _cli_text(capsys, ["evaluate", "-c", "-q", qrels, run])  # smaller than a block
    assert calls == []
    assert _cli_text(capsys, ["evaluate", "-c", "-q", "--block-size", "100", qrels, run]) == whole
    assert calls == [1]
    _cli_text(capsys, ["evaluate", "--no-stream", "--block-size", "100", "-c", qrels, run])
    assert calls == [1]
    # A run not grouped by query, streamed by default: read whole instead (same output);
    # with --stream, an error.
    lines = Path(run).read_text().splitlines(keepends=True)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(lines[1::2] + lines[0::2]))
    whole = _cli_text(capsys, ["evaluate", "-c", "-q", qrels, str(shuffled)])
    assert _cli_text(capsys, ["evaluate", "-c", "-q", "--block-size", "100", qrels,
                              str(shuffled)]) == whole
    assert calls == [1, 1]
    status, _, err = run_cli(capsys, ["evaluate", "--stream", "--block-size", "100", "-c", qrels,
                                      str(shuffled)])
    assert status == 2 and "not grouped by query" in err


_SKRANK_NAMES = ["-m", "ndcg@10", "-m", "map", "-m", "P@5", "-m", "mrr", "-m", "err@10",
                 "-m", "recall@100", "-m", "num_ret", "-m", "num_rel_ret",
                 "-m", "num_q"]


@pytest.mark.parametrize("options", [
    ["-q"], ["-c", "-q"], ["--json"], ["-c", "--json", "--ties", "optimistic"],
    ["-q", "--no-relevant", "skip"], ["-q", "-l", "2"], ["-c", "-q", "--no-relevant", "nan"]])
@pytest.mark.parametrize("block", ["16", "1K"])
def test_stream_skrank_names_is_the_in_memory_output_byte_for_byte(capsys, tmp_path, options,
                                                                    block):
    qrels, run = _grouped_run(tmp_path)
    argv = ["evaluate", *_SKRANK_NAMES, *options, qrels, run]
    status, whole, whole_err = run_cli(capsys, [*argv[:1], "--no-stream", *argv[1:]])
    assert status == 0, whole_err
    status, streamed, streamed_err = run_cli(capsys, [*argv[:1], "--stream", "--block-size",
                                                      block, *argv[1:]])
    assert status == 0, streamed_err
    assert streamed == whole
    assert streamed_err == whole_err  # the same warnings (queries on one side only), once
    assert "no ground truth in qrels" in whole_err


def test_stream_skrank_names_not_grouped(capsys, tmp_path):
    qrels, run = _grouped_run(tmp_path)
    lines = Path(run).read_text().splitlines(keepends=True)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(lines[1::2] + lines[0::2]))
    argv = ["evaluate", "-q", "-m", "ndcg@10", "-m", "map", qrels]
    whole = _cli_text(capsys, [*argv, run])
    # streamed by default (the run is larger than a block), read whole when not grouped
    assert _cli_text(capsys, [*argv, "--block-size", "100", str(shuffled)]) == whole
    status, _, err = run_cli(capsys, [*argv, "--stream", "--block-size", "100", str(shuffled)])
    assert status == 2 and "not grouped by query" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    status, _, err = run_cli(capsys, [*argv, "--stream", str(empty)])
    assert status == 2 and "no line (an empty run file)" in err


def test_skrank_names_give_trec_names_values(capsys, tmp_path):
    """The same metric under both names, per query and mean, on the same files."""
    qrels, run = _grouped_run(tmp_path)
    pairs = {"ndcg@10": "ndcg_cut_10", "map": "map", "P@5": "P_5", "mrr": "recip_rank",
             "recall@100": "recall_100", "num_ret": "num_ret", "num_rel_ret": "num_rel_ret"}
    files = [qrels, run]

    def values(argv):
        out = _cli_text(capsys, ["evaluate", "-c", "-q", *argv, *files])
        rows = [line.split("\t") for line in out.splitlines()]
        return {(m.strip(), q): float(v) for m, q, v in rows}

    skrank_names = values([f"-m{name}" for name in pairs])
    trec_names = values(["-mndcg_cut.10", "-mmap", "-mP.5", "-mrecip_rank", "-mrecall.100",
                         "-mnum_ret", "-mnum_rel_ret"])
    assert {(pairs[name], q) for name, q in skrank_names} == set(trec_names)
    assert ("map", "q999") in trec_names and len(trec_names) > 7 * 30
    for (name, q), value in skrank_names.items():
        assert trec_names[pairs[name], q] == pytest.approx(value, abs=5e-5), (name, q)


def test_judged_metrics_by_skrank_name(capsys, tiny):
    # judged@k, bpref and infap take their judgements from the qrels, also beside other
    # skrank names (they used to fail as "unknown metric name 'judged@2'").
    status, out, err = run_cli(capsys, ["evaluate", *tiny, "-m", "ndcg@10", "-m", "judged@2",
                                        "-m", "bpref", "-q"])
    assert status == 0, err
    values = {(m.strip(), q): float(v) for m, q, v in (ln.split("\t") for ln in out.splitlines())}
    # q1 ranks a, then c before b (tied at 0.5, docno descending): both judged.
    # q2 ranks y (unjudged) before x (judged): 1 of 2.
    assert values[("judged@2", "q1")] == 1.0
    assert values[("judged@2", "q2")] == 0.5
    assert values[("judged@2", "all")] == 0.75
    _, trec_out, _ = run_cli(capsys, ["evaluate", *tiny, "-m", "bpref", "-q", "-c"])
    trec = {(m.strip(), q): float(v) for m, q, v in (ln.split("\t") for ln in trec_out.splitlines())}
    assert values[("bpref", "q1")] == trec[("bpref", "q1")]


def test_no_relevant_takes_every_choice_of_the_api_raise_naming_the_files_queries(capsys,
                                                                                 tmp_path):
    """--no-relevant offers what evaluate(no_relevant=) accepts; 'raise' exits with status 2
    and names the queries by their ids in the files (not internal codes), streamed or not."""
    import skrank
    from skrank._declare.params import EVALUATE_NO_RELEVANT

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("zeta 0 a 1\nzeta 0 b 0\nalpha 0 c 2\nmid 0 d 0\nmid 0 e 0\n")
    run = tmp_path / "run.txt"
    run.write_text("zeta Q0 a 1 0.9 t\nzeta Q0 b 2 0.5 t\nmid Q0 d 1 0.8 t\nmid Q0 e 2 0.1 t\n"
                   "alpha Q0 c 1 0.4 t\n")
    base = ["evaluate", "-m", "ndcg@10", "-q", str(qrels), str(run)]
    for choice in EVALUATE_NO_RELEVANT.choices:
        status, out, err = run_cli(capsys, [*base, "--no-relevant", choice])
        if choice == "raise":
            assert (status, out) == (2, ""), err
            assert err.startswith("skrank evaluate: error: 1 query has no relevant "
                                  "document, so the metric is undefined for them (qid 'mid')")
        else:
            assert status == 0, err
    for stream in ("--stream", "--no-stream"):
        status, _, err = run_cli(capsys, [*base, "--no-relevant", "raise", stream,
                                          "--block-size", "16"])
        assert status == 2 and "(qid 'mid')" in err, err
    with pytest.raises(ValueError, match=r"\(qid 'mid'\)"):
        skrank.evaluate(qrels=str(qrels), run=str(run), metrics=["ndcg@10"], no_relevant="raise")
    # without such a query, raise prints what zero prints
    qrels.write_text("zeta 0 a 1\nzeta 0 b 0\nalpha 0 c 2\nmid 0 d 1\nmid 0 e 0\n")
    assert run_cli(capsys, [*base, "--no-relevant", "raise"]) == run_cli(capsys, base)
