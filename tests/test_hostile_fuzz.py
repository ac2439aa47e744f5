"""The fuzz harness of issue 26, in a form CI runs in seconds: hypothesis mutates
valid TREC files byte by byte and line by line (byte-order marks, CR line ends,
NUL bytes, long tokens, huge numbers, missing and extra fields, truncated gzip)
and draws option values (huge, negative, NaN, text). Every outcome is either a
table (exit status 0) or one error line (status 2) that names the file, the
option or the argument; nothing raises, and no case allocates out of proportion
to its few kilobytes of input (tracemalloc's peak)."""

import contextlib
import gzip
import io
import os
import re
import tempfile
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skrank
from skrank import InvalidParameterError
from skrank.cli import main

QRELS = b"1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 x 1\n2 0 y 0\n3 0 z 1\n"
RUN = (b"1 Q0 a 1 0.9 t\n1 Q0 b 2 0.5 t\n1 Q0 c 3 0.4 t\n"
       b"2 Q0 y 1 0.7 t\n2 Q0 x 2 0.3 t\n3 Q0 z 1 1.5 t\n")
PEAK_BYTES = 64 << 20  # a few KB of input: anything near this is out of proportion
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

_PIECES = [b"\xef\xbb\xbf", b"\r", b"\r\n", b"\n", b"\0", b" ", b"\t", b"#", b"\xff\xfe",
           b"9" * 30, b"-", b"1e999", b"nan", b"inf", b"d" * 3000, b"2147483648",
           b"9223372036854775808", b"Q0", b"1_000", b"0x1f"]


@st.composite
def mutated(draw, text):
    """``text`` with a few edits: a piece inserted, a span deleted, lines swapped
    or duplicated, or the whole compressed and cut."""
    data = bytearray(text)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "random"]))
        at = draw(st.integers(0, len(data)))
        if kind == "insert":
            data[at:at] = draw(st.sampled_from(_PIECES))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 12))]
        elif kind == "duplicate":
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i])
            data = bytearray(b"\n".join(lines))
        else:
            data[at:at] = draw(st.binary(min_size=1, max_size=6))
    data = bytes(data)
    if draw(st.integers(0, 9)) == 0:  # gzip, sometimes cut short
        packed = gzip.compress(data)
        data = packed[:draw(st.integers(2, len(packed)))]
    return data


@contextlib.contextmanager
def files(qrels, run):
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, data in (("qrels.txt", qrels), ("run.txt", run)):
            path = os.path.join(folder, name)
            with open(path, "wb") as handle:
                handle.write(data)
            paths.append(path)
        yield paths


def run_cli(argv):
    """``(status, stdout, stderr, peak bytes)`` of one in-process command."""
    out, err = io.StringIO(), io.StringIO()
    tracemalloc.start()
    try:
        with contextlib.redirect_stderr(err):
            status = main(argv, out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return status, out.getvalue(), err.getvalue(), peak


def check_outcome(status, out, err, peak, named):
    assert peak < PEAK_BYTES, f"peak {peak} bytes"
    assert "Traceback" not in err
    if status == 0:
        assert out
        return
    assert status == 2 and out == "", (status, out, err)
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1, err
    assert any(n in errors[0] for n in named), (named, errors[0])


# What an error about a file must name: the file, or the query or document the
# two files disagree on (a query of the qrels missing from the run, ...).
FILE_WORDS = ("qrels.txt", "run.txt", "query", "standard input")


@pytest.mark.parametrize("metrics", [["-m", "map", "-m", "P.1"], ["-m", "ndcg@10", "-m", "mrr"]],
                         ids=["trec", "skrank"])
@SETTINGS
@given(qrels=mutated(QRELS), run=mutated(RUN), stream=st.booleans())
def test_malformed_files(metrics, qrels, run, stream):
    with files(qrels, run) as (qrels_path, run_path):
        argv = ["evaluate", qrels_path, run_path, "-q", *metrics]
        if stream:
            argv += ["--stream", "--block-size", "7"]
        check_outcome(*run_cli(argv), named=FILE_WORDS)


_OPTION_VALUES = st.one_of(
    st.integers(-3, 3).map(str), st.sampled_from(["1e400", "nan", "inf", "-inf", "x", "",
                                                  str(2 ** 64), str(10 ** 30), "0.5",
                                                  "-0", "1_0", "9" * 40]))


@SETTINGS
@given(option=st.sampled_from(["-M", "-N", "-l", "--block-size", "--max-grade"]),
       value=_OPTION_VALUES)
def test_option_values(option, value):
    with files(QRELS, RUN) as (qrels_path, run_path):
        argv = ["evaluate", qrels_path, run_path, "-m", "map", "-m", "ndcg@5", option, value]
        try:
            result = run_cli(argv)
        except SystemExit as exc:  # argparse: one line naming the option, status 2
            assert exc.code == 2
            return
        check_outcome(*result, named=(option, option.lstrip("-").replace("-", "_")))


_METRIC_NAMES = st.one_of(
    st.sampled_from(["ndcg", "map", "P", "mrr", "recall", "ndcg_cut", "err", "rbp"]).flatmap(
        lambda m: st.sampled_from([m, f"{m}@", f"{m}@0", f"{m}@-1", f"{m}@{2 ** 64}",
                                   f"{m}@{'9' * 25}", f"{m}.{'9' * 25}", f"{m}(x=1)",
                                   f"{m}@1.5", f"{m}@nan"])),
    st.text(min_size=1, max_size=12))


@SETTINGS
@given(name=_METRIC_NAMES)
def test_metric_names(name):
    with files(QRELS, RUN) as (qrels_path, run_path):
        check_outcome(*run_cli(["evaluate", qrels_path, run_path, f"--metric={name}"]),
                      named=("metric", "measure", repr(name), name, "-m",
                             re.split(r"[@.(]", name)[0] or name))


_NUMBERS = st.one_of(st.integers(-2, 3), st.sampled_from([2 ** 63, 2 ** 64, 10 ** 30, 10 ** 400,
                                                          -(2 ** 63)]),
                     st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
                     st.text(max_size=3))


@SETTINGS
@given(k=_NUMBERS, threshold=_NUMBERS)
def test_option_values_of_functions(k, threshold):
    y, s, qid = [2, 0, 1, 1, 0], [0.5, 0.4, 0.3, 0.9, 0.1], [1, 1, 1, 2, 2]
    for call, name, value in (
            (lambda: skrank.ndcg_score(y, s, qid=qid, k=k), "k", k),
            (lambda: skrank.precision_at_k_score(y, s, qid=qid, k=1, threshold=threshold),
             "threshold", threshold)):
        try:
            result = call()
        except InvalidParameterError as exc:
            assert f"{name} " in str(exc) or f"{name}=" in str(exc), str(exc)
            continue
        assert isinstance(result, float) and 0 <= result <= 1, (name, value, result)


@SETTINGS
@given(labels=st.lists(st.one_of(st.integers(-2 ** 70, 2 ** 70), st.floats()), min_size=2,
                       max_size=6))
def test_label_values(labels):
    n = len(labels)
    try:
        value = skrank.ndcg_score(labels, np.arange(n, dtype=float), qid=np.zeros(n))
    except (ValueError, TypeError) as exc:
        assert "y_true" in str(exc), str(exc)
        return
    assert np.isnan(value) or -1e300 < value < 1e300
