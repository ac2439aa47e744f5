"""The documentation's examples and its claims about the peers.

* Every ``docs/*.md`` file with ``>>>`` examples runs as a doctest (one test
  per file, collected from a glob so new pages are picked up).
* Every plain ```` ```python ```` block (one without ``>>>``) of README.md and
  of ``docs/*.md`` runs too, each page's blocks in order in one namespace, as a
  newcomer pasting them would (with the ``test`` extra installed).  A block
  that cannot run here (it needs a cluster, or a package outside the ``test``
  extra) says so on the page, in a visible line right above it that starts
  with ``Not run by the documentation tests:``; it is reported as skipped with
  that reason, never skipped silently.
* The numbers that ``docs/metrics.md`` and ``docs/metric_families.md`` quote
  for scikit-learn, trec_eval (pytrec_eval), XGBoost and LightGBM are checked
  against those libraries where they are installed (skipped otherwise).
  ranx and torchmetrics were measured by hand (their import or first call is
  slow); their numbers are in the pages with the versions used.
"""

import contextlib
import doctest
import io
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOC_FILES = sorted(p for p in DOCS.glob("*.md") if ">>>" in p.read_text(encoding="utf-8"))
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS

PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
SKIP_MARK = "Not run by the documentation tests:"
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$", re.M | re.S)


def python_blocks(path):
    """``(line, code, skip_reason)`` of each plain ```python block of a page, in order;
    ``skip_reason`` is the text after SKIP_MARK on the last non-blank line above the
    block, or None."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        if match["lang"] != "python" or ">>>" in match["code"]:
            continue
        before = [ln.strip() for ln in text[:match.start()].splitlines() if ln.strip()]
        last = before[-1].strip("*_ ") if before else ""
        reason = last[len(SKIP_MARK):].strip() if last.startswith(SKIP_MARK) else None
        line = text.count("\n", 0, match.start()) + 2
        blocks.append((line, match["code"], reason))
    return blocks


PAGES_WITH_CODE = [p for p in PAGES if any(r is None for _, _, r in python_blocks(p))]
MARKED = [(p, line, reason) for p in PAGES for line, _, reason in python_blocks(p) if reason]


@pytest.mark.parametrize("path", PAGES_WITH_CODE, ids=[p.name for p in PAGES_WITH_CODE])
def test_doc_code_blocks_run(path, tmp_path, monkeypatch):
    """The page's python blocks run in order, in one namespace, from an empty directory;
    scikit-learn's global configuration (metadata routing) is restored afterwards."""
    import sklearn

    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{path.stem}"}
    with sklearn.config_context(), contextlib.redirect_stdout(io.StringIO()):
        for line, code, reason in python_blocks(path):
            if reason is not None:
                continue
            try:
                exec(compile(code, f"{path.name}:{line}", "exec"), namespace)
            except Exception as exc:
                pytest.fail(f"{path.name}, the python block at line {line} fails: "
                            f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("path, line, reason", MARKED,
                         ids=[f"{p.name}:{line}" for p, line, _ in MARKED])
def test_doc_code_blocks_marked_not_run(path, line, reason):
    pytest.skip(f"{path.name}:{line} is marked on the page as not run: {reason}")


def test_python_blocks_are_found():
    """The block finder sees README's examples and the marks (a guard for the regex)."""
    readme = python_blocks(ROOT / "README.md")
    assert len(readme) >= 2 and all(reason is None for _, _, reason in readme)
    assert any(p.name == "tuning.md" for p, _, _ in MARKED)


@pytest.mark.parametrize("path", DOC_FILES, ids=[p.name for p in DOC_FILES])
def test_doc_examples(path):
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        result = doctest.testfile(str(path), module_relative=False, name=path.name,
                                  optionflags=FLAGS, encoding="utf-8", globs={})
    assert result.attempted > 0, f"{path.name}: no example ran"
    assert result.failed == 0, f"{path.name}: {result.failed} failing example(s)\n{report.getvalue()}"


# --------------------------------------------------------------------------------------
# The peers' numbers quoted in the docs.
# --------------------------------------------------------------------------------------

GAIN = dict(y=[3, 2, 0], s=[.1, .9, .5])                     # linear 0.8212, exponential 0.7309
TIES = dict(y=[0, 1, 0], s=[.5, .5, .1])                     # nDCG@1
NO_REL = dict(y=[1, 0, 0, 0], s=[.9, .1, .9, .1], groups=[2, 2])
P_AT_5 = dict(y=[1, 0, 0], s=[.9, .5, .1])
AP_AT_2 = dict(y=[1, 0, 1, 1], s=[.9, .8, .7, .6])


def test_sklearn_claims():
    from sklearn.metrics import ndcg_score

    assert ndcg_score([GAIN["y"]], [GAIN["s"]]) == pytest.approx(0.8212, abs=5e-5)
    assert ndcg_score([TIES["y"]], [TIES["s"]], k=1) == pytest.approx(0.5)
    assert ndcg_score([TIES["y"]], [TIES["s"]], k=1, ignore_ties=True) == pytest.approx(1.0)
    assert ndcg_score([[1, 0], [0, 0]], [[.9, .1], [.9, .1]]) == pytest.approx(0.5)
    assert ndcg_score([[1, 3]], [[.9, .1]], k=1) == pytest.approx(1 / 3)
    assert ndcg_score([[2, 0, 1, 0]], [[.9, .5, .5, .1]]) == pytest.approx(0.9751, abs=5e-5)
    assert ndcg_score([[2, 0, 1, 0, 3]], [[.9, .5, .5, .1, -1]]) == pytest.approx(0.7825, abs=5e-5)


def _trec(qrels, run, measures, **kw):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    return pytrec_eval.RelevanceEvaluator(qrels, set(measures), **kw).evaluate(run)


def _docs(values):
    return {f"d{i}": v for i, v in enumerate(values)}


def test_trec_eval_claims():
    res = _trec({"q": _docs(GAIN["y"])}, {"q": _docs(GAIN["s"])}, ["ndcg"])
    assert res["q"]["ndcg"] == pytest.approx(0.8212, abs=5e-5)
    # ties by document id descending: the relevant d1 goes before d0 ...
    res = _trec({"q": _docs(TIES["y"])}, {"q": _docs(TIES["s"])}, ["ndcg_cut.1"])
    assert res["q"]["ndcg_cut_1"] == 1.0
    # ... and after it when the names are swapped.
    res = _trec({"q": {"d1": 0, "d0": 1, "d2": 0}}, {"q": {"d1": .5, "d0": .5, "d2": .1}},
                ["ndcg_cut.1"])
    assert res["q"]["ndcg_cut_1"] == 0.0
    res = _trec({"1": {"a": 1, "b": 0}, "2": {"a": 0, "b": 0}},
                {"1": {"a": .9, "b": .1}, "2": {"a": .9, "b": .1}}, ["ndcg"])
    assert np.mean([v["ndcg"] for v in res.values()]) == pytest.approx(0.5)
    res = _trec({"q": _docs(P_AT_5["y"])}, {"q": _docs(P_AT_5["s"])}, ["P.5"])
    assert res["q"]["P_5"] == pytest.approx(0.2)
    res = _trec({"q": _docs(AP_AT_2["y"])}, {"q": _docs(AP_AT_2["s"])}, ["map_cut.2", "map"])
    assert res["q"]["map_cut_2"] == pytest.approx(1 / 3)
    assert res["q"]["map"] == pytest.approx(0.8056, abs=5e-5)
    res = _trec({"q": {"a": 1, "b": 2}}, {"q": {"a": .9, "b": .1}}, ["ndcg", "P.1"],
                relevance_level=2)
    assert res["q"]["ndcg"] == pytest.approx(0.8597, abs=5e-5)
    assert res["q"]["P_1"] == 0.0
    res = _trec({"q": {"a": 2, "b": 0, "c": 1, "d": 0, "e": 3}},
                {"q": {"a": .9, "b": .5, "c": .5, "d": .1}}, ["ndcg"])
    assert res["q"]["ndcg"] == pytest.approx(0.5525, abs=5e-5)
    res = _trec({"q": {"a": 1, "b": 3}}, {"q": {"a": .9, "b": .1}}, ["ndcg_cut.1"])
    assert res["q"]["ndcg_cut_1"] == pytest.approx(1 / 3)


def test_trec_eval_matches_binary_example():
    """The one-query example of the binary metrics (docs/metric_families.md)."""
    import skrank

    y = [0, 1, 0, 1, 1, 1]
    s = [.9, .8, .7, .6, .5]
    res = _trec({"q": _docs(y)}, {"q": _docs(s)},
                ["P.3", "P.10", "recall.3", "recall.1000", "success.1", "success.2", "Rprec",
                 "map", "map_cut.3", "recip_rank"])["q"]
    got = skrank.evaluate(y, s + [np.nan], qid=[0] * 6, retrieved=[True] * 5 + [False],
                          metrics=["P@3", "P@10", "recall@3", "recall", "hit_rate@1",
                                   "hit_rate@2", "r_precision", "map", "map@3", "mrr"]).mean
    expected = [res[m] for m in ("P_3", "P_10", "recall_3", "recall_1000", "success_1",
                                 "success_2", "Rprec", "map", "map_cut_3", "recip_rank")]
    assert list(got.values()) == pytest.approx(expected)


def _xgb(y, s, groups, metric, **params):
    xgb = pytest.importorskip("xgboost")
    dmat = xgb.DMatrix(np.zeros((len(y), 1)), label=np.asarray(y, float),
                       base_margin=np.asarray(s, float))
    dmat.set_group(groups)
    booster = xgb.train({"objective": "rank:ndcg", "eval_metric": metric, **params}, dmat,
                        num_boost_round=0)
    return float(re.search(r":([-0-9.e]+)", booster.eval(dmat)).group(1))


def test_xgboost_claims():
    assert _xgb(GAIN["y"], GAIN["s"], [3], "ndcg") == pytest.approx(0.7309, abs=5e-5)
    assert _xgb(GAIN["y"], GAIN["s"], [3], "ndcg", ndcg_exp_gain=False) == pytest.approx(
        0.8212, abs=5e-5)
    assert _xgb(TIES["y"], TIES["s"], [3], "ndcg@1") == 0.0
    assert _xgb([1, 0, 0], TIES["s"], [3], "ndcg@1") == 1.0        # input order
    assert _xgb(NO_REL["y"], NO_REL["s"], NO_REL["groups"], "ndcg") == 1.0
    assert _xgb(NO_REL["y"], NO_REL["s"], NO_REL["groups"], "ndcg-") == pytest.approx(0.5)
    assert _xgb(NO_REL["y"], NO_REL["s"], NO_REL["groups"], "map") == 1.0
    assert _xgb(NO_REL["y"], NO_REL["s"], NO_REL["groups"], "map-") == pytest.approx(0.5)
    assert _xgb(P_AT_5["y"], P_AT_5["s"], [3], "pre@5") == pytest.approx(1 / 3)
    assert _xgb(AP_AT_2["y"], AP_AT_2["s"], [4], "map@2") == pytest.approx(0.5)
    assert _xgb(AP_AT_2["y"], AP_AT_2["s"], [4], "map") == pytest.approx(0.8056, abs=5e-5)
    assert _xgb([1, 3], [.9, .1], [2], "ndcg@1") == pytest.approx(1 / 7)   # ideal cut at k

    # ndcg and map without @k cut every query at 32 documents: skrank's k=32
    import skrank

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=50).astype(float)
    s = rng.permutation(50).astype(float)            # no ties
    q = np.zeros(50)
    assert _xgb(y, s, [50], "ndcg") == pytest.approx(skrank.ndcg_score(
        y, s, qid=q, k=32, gain="exponential"), abs=1e-6)
    assert _xgb(y, s, [50], "ndcg") != pytest.approx(skrank.ndcg_score(
        y, s, qid=q, gain="exponential"), abs=1e-4)
    binary = (y > 1).astype(float)                  # XGBoost's map takes binary labels
    assert _xgb(binary, s, [50], "map") == pytest.approx(skrank.map_score(
        binary, s, qid=q, k=32, denominator="min"), abs=1e-6)
    assert _xgb(binary, s, [50], "map") != pytest.approx(skrank.map_score(
        binary, s, qid=q), abs=1e-4)


def _lgb(y, s, groups, metric, eval_at, **params):
    lgb = pytest.importorskip("lightgbm")
    # A constant feature and a negligible learning rate: the evaluated scores are
    # the init scores (a one-leaf tree adds the same ~0 to every row, ties stay tied).
    data = lgb.Dataset(np.zeros((len(y), 1)), label=y, group=groups, init_score=s)
    record = {}
    lgb.train({"objective": "lambdarank", "metric": metric, "eval_at": eval_at,
               "learning_rate": 1e-300, "verbose": -1, **params},
              data, num_boost_round=1, valid_sets=[data], valid_names=["d"],
              callbacks=[lgb.record_evaluation(record)])
    return {name: values[-1] for name, values in record["d"].items()}


def test_lightgbm_claims():
    assert _lgb(GAIN["y"], GAIN["s"], [3], "ndcg", [3])["ndcg@3"] == pytest.approx(
        0.7309, abs=5e-5)
    assert _lgb(GAIN["y"], GAIN["s"], [3], "ndcg", [3], label_gain=[0, 1, 2, 3])[
        "ndcg@3"] == pytest.approx(0.8212, abs=5e-5)
    assert _lgb(TIES["y"], TIES["s"], [3], "ndcg", [1])["ndcg@1"] == 0.0
    assert _lgb([1, 0, 0], TIES["s"], [3], "ndcg", [1])["ndcg@1"] == 1.0   # input order
    assert _lgb(NO_REL["y"], NO_REL["s"], NO_REL["groups"], "ndcg", [2])["ndcg@2"] == 1.0
    assert _lgb(NO_REL["y"], NO_REL["s"], NO_REL["groups"], "map", [2])["map@2"] == 1.0
    res = _lgb(AP_AT_2["y"], AP_AT_2["s"], [4], "map", [2, 4])
    assert res["map@2"] == pytest.approx(0.5)
    assert res["map@4"] == pytest.approx(0.8056, abs=5e-5)
    assert _lgb([1, 3], [.9, .1], [2], "ndcg", [1])["ndcg@1"] == pytest.approx(1 / 7)


def test_skrank_reproduces_the_peers():
    """The skrank side of the table in docs/metric_families.md."""
    import skrank

    q3 = [0, 0, 0]
    lgbm = dict(gain="exponential", ties="stable", no_relevant="one")
    assert skrank.ndcg_score(GAIN["y"], GAIN["s"], qid=q3) == pytest.approx(0.8212, abs=5e-5)
    assert skrank.ndcg_score(GAIN["y"], GAIN["s"], qid=q3, **lgbm) == pytest.approx(
        0.7309, abs=5e-5)
    assert skrank.ndcg_score(TIES["y"], TIES["s"], qid=q3, k=1) == 0.5
    assert skrank.ndcg_score(TIES["y"], TIES["s"], qid=q3, k=1, **lgbm) == 0.0
    qid = [1, 1, 2, 2]
    assert skrank.ndcg_score(NO_REL["y"], NO_REL["s"], qid=qid) == 0.5
    assert skrank.ndcg_score(NO_REL["y"], NO_REL["s"], qid=qid, **lgbm) == 1.0
    assert skrank.precision_at_k_score(P_AT_5["y"], P_AT_5["s"], qid=q3, k=5) == 0.2
    assert skrank.precision_at_k_score(P_AT_5["y"], P_AT_5["s"], qid=q3, k=5,
                                       denominator="min") == pytest.approx(1 / 3)
    q4 = [0] * 4
    assert skrank.map_score(AP_AT_2["y"], AP_AT_2["s"], qid=q4, k=2) == pytest.approx(1 / 3)
    assert skrank.map_score(AP_AT_2["y"], AP_AT_2["s"], qid=q4, k=2, denominator="min") == 0.5


OPTIONAL = ("pandas", "matplotlib", "xgboost", "lightgbm", "dask", "pytrec_eval", "ranx")


def test_readme_first_example_needs_only_the_runtime_dependencies():
    """README's first Python example runs after `pip install .` alone: with every optional
    package made unimportable (in a fresh interpreter)."""
    import subprocess
    import sys

    line, code, _ = python_blocks(ROOT / "README.md")[0]
    blocker = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {OPTIONAL!r}:\n"
        "            raise ImportError(f'{name} is not installed (blocked by the test)')\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    done = subprocess.run([sys.executable, "-c", blocker + code], capture_output=True,
                          text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"README.md:{line} needs more than the runtime " \
                                 f"dependencies:\n{done.stderr}"
    assert "{'ndcg@10'" in done.stdout
