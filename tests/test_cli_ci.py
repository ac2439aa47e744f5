"""skrank evaluate --ci: extra interval columns only when asked."""

import io
from pathlib import Path

import pytest

import skrank
from skrank.cli import main

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"
pytestmark = pytest.mark.skipif(not (DATA / "qrels.test").exists(),
                                reason="needs ../shared/data/trec_eval")


def _run(*args):
    out = io.StringIO()
    assert main(["evaluate", *map(str, args)], out=out) == 0
    return out.getvalue()


def test_default_output_is_untouched_and_ci_adds_two_columns():
    qrels, run = DATA / "qrels.test", DATA / "results.test"
    plain = _run(qrels, run, "-m", "map", "-m", "ndcg@10", "-q")
    with_ci = _run(qrels, run, "-m", "map", "-m", "ndcg@10", "-q", "--ci", "--seed", "3",
                   "--n-resamples", "500")
    res = skrank.evaluate(qrels=skrank.io.read_qrels(qrels), run=skrank.io.read_run(run),
                          metrics=["map", "ndcg@10"])
    ci = res.confidence_interval(seed=3, n_resamples=500)
    plain_lines, ci_lines = plain.splitlines(), with_ci.splitlines()
    assert len(plain_lines) == len(ci_lines)
    for a, b in zip(plain_lines, ci_lines):
        if "\tall\t" in a:
            name = a.split("\t")[0].strip()
            assert b == a + f"\t{ci.low[name]:.4f}\t{ci.high[name]:.4f}"
        else:
            assert a == b
    # trec_eval's layout and set stay byte-identical without --ci
    assert _run(qrels, run) == (DATA / "out.test").read_text()


def test_ci_with_trec_names_and_json():
    import json

    qrels, run = DATA / "qrels.test", DATA / "results.test"
    text = _run(qrels, run, "-m", "P_10", "--ci", "--ci-method", "t")
    res = skrank.evaluate(qrels=skrank.io.read_qrels(qrels), run=skrank.io.read_run(run),
                          metrics=["P_10"])
    ci = res.confidence_interval(method="t")
    assert text == f"P_10                  \tall\t{res.mean['P_10']:.4f}\t" \
                   f"{ci.low['P_10']:.4f}\t{ci.high['P_10']:.4f}\n"
    data = json.loads(_run(qrels, run, "-m", "map", "--json", "--ci", "--seed", "0"))
    assert set(data["confidence_interval"]) >= {"low", "high", "method", "n_queries"}
