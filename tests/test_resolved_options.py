"""evaluate()'s ``ties``, ``no_relevant`` and ``threshold`` are resolved once
(:func:`skrank._plan.resolve_options`), and ``-l`` means one thing in both modes of the
command line (issue 24)."""

import pytest

import skrank
import skrank._plan
from skrank._plan import Options, resolve_options
from skrank.cli import main
from skrank.io import Qrels, Run


@pytest.mark.parametrize("given, collection, expected", [
    # (ties given, qrels and run?) -> (ties, the metrics' policy, the join's tie order)
    (None, True, ("trec", "stable", "trec")),
    ("trec", True, ("trec", "stable", "trec")),
    ("stable", True, ("stable", "stable", "input")),
    ("average", True, ("average", "average", "trec")),
    ("pessimistic", True, ("pessimistic", "pessimistic", "trec")),
    (None, False, (None, None, None)),
    ("average", False, ("average", "average", None)),
])
def test_ties_resolved_once(given, collection, expected):
    options = resolve_options("evaluate", ties=given, collection=collection)
    assert (options.ties, options.policy, options.tie_order) == expected
    assert options.defaults == {"ties": expected[1], "no_relevant": "zero", "threshold": None}
    assert options.level == 1.0


def test_trec_ties_need_a_collection():
    with pytest.raises(skrank.InvalidParameterError,
                       match=r"^evaluate: ties='trec' orders ties by docno and needs qrels"):
        resolve_options("evaluate", ties="trec", collection=False)


def test_options_are_validated_there():
    with pytest.raises(skrank.InvalidParameterError, match="ties"):
        resolve_options("evaluate", ties="bogus", collection=True)
    with pytest.raises(skrank.InvalidParameterError, match="threshold"):
        resolve_options("evaluate", threshold="1", collection=True)


@pytest.mark.parametrize("ties, no_relevant, trec_eval", [
    (None, "zero", True), ("trec", "zero", True), ("stable", "zero", False),
    ("trec", "skip", False), ("average", "zero", False)])
def test_trec_eval_conventions(ties, no_relevant, trec_eval):
    options = resolve_options("evaluate", ties=ties, no_relevant=no_relevant, collection=True)
    assert options.trec_eval is trec_eval


@pytest.mark.parametrize("threshold, level", [(None, 1), (2, 2), (2.0, 2), (3.0, 3)])
def test_trec_eval_level_is_an_integer(threshold, level):
    options = resolve_options("evaluate", threshold=threshold, collection=True)
    got = options.trec_eval_level("evaluate")
    assert got == level and isinstance(got, int)


def test_a_fractional_trec_eval_level_is_refused():
    options = resolve_options("evaluate", threshold=1.5, collection=True)
    with pytest.raises(skrank.InvalidParameterError,
                       match=r"integer relevance level .*Got 1.5 instead. Use -l 1 or -l 2"):
        options.trec_eval_level("evaluate")


def _count_resolutions(monkeypatch):
    calls = []
    real = skrank._plan.resolve_options

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(skrank._plan, "resolve_options", counting)
    return calls


QRELS = Qrels(qid=["q1", "q1", "q1", "q2"], docno=["a", "b", "c", "x"], rel=[2, 0, 1, 1])
RUN = Run(qid=["q1", "q1", "q1", "q2", "q2"], docno=["a", "b", "c", "x", "y"],
          score=[0.9, 0.5, 0.5, 0.3, 0.7])


def test_evaluate_resolves_once(monkeypatch):
    calls = _count_resolutions(monkeypatch)
    skrank.evaluate(qrels=QRELS, run=RUN, metrics=["ndcg@2", "bpref", "P@2"], ties="stable")
    assert len(calls) == 1


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 x 2\nq2 0 y 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.8 t\nq1 Q0 c 3 0.7 t\n"
                   "q2 Q0 x 1 0.3 t\nq2 Q0 y 2 0.2 t\n")
    return str(qrels), str(run)


def _all(capsys, argv):
    status = main(argv)
    captured = capsys.readouterr()
    rows = {line.split("\t")[0].strip(): line.split("\t")[2]
            for line in captured.out.splitlines() if line.split("\t")[1] == "all"}
    return status, rows, captured.err


def test_the_command_line_resolves_once(monkeypatch, capsys, files):
    calls = _count_resolutions(monkeypatch)
    status, _, _ = _all(capsys, ["evaluate", *files, "-m", "P@2", "-m", "map"])
    assert status == 0 and len(calls) == 1
    calls.clear()
    status, _, _ = _all(capsys, ["evaluate", *files, "-m", "P.2"])
    assert status == 0 and len(calls) == 1


def test_one_level_in_both_modes(capsys, files):
    """-l 2: P.2 (trec_eval mode) and P@2 (skrank mode) count the same documents."""
    # q1: a (2), b (1) -> 1 of 2 at level 2; q2: x (2), y (1) -> 1 of 2
    _, trec, _ = _all(capsys, ["evaluate", *files, "-m", "P.2", "-l", "2"])
    _, ours, _ = _all(capsys, ["evaluate", *files, "-m", "P@2", "-l", "2"])
    assert trec["P_2"] == ours["P@2"] == "0.5000"


def test_a_fractional_level_is_refused_in_trec_eval_mode(capsys, files):
    """trec_eval would read -l 1.5 as 1 (atol); skrank's names read 1.5: rather than two
    meanings, trec_eval's measures refuse it."""
    status, rows, err = _all(capsys, ["evaluate", *files, "-m", "P.2", "-l", "1.5"])
    assert status == 2 and not rows
    assert "integer relevance level" in err and "-l 1 or -l 2" in err
    status, rows, _ = _all(capsys, ["evaluate", *files, "-m", "P@2", "-l", "1.5"])
    assert status == 0 and rows["P@2"] == "0.5000"
