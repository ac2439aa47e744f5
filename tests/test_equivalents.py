"""The metrics' equivalents in other tools (skrank._declare.equivalents) are right: every
entry that names ``test_equivalent`` is computed by the tool itself and by skrank with
the entry's options, on random collections of the kind the entry allows (with tied
scores too where the entry says it holds with ties), at two cutoffs; every metric of the table has an entry; the docstrings and the docs' table show
them; and every test an entry names exists.

The tools: trec_eval (pytrec_eval), ir_measures (its pytrec_eval, msmarco and gdeval
providers), ranx 0.3.21 (in one subprocess with NUMBA_DISABLE_JIT=1: compiling ranx
takes minutes), scikit-learn, torchmetrics, LightGBM and XGBoost (evaluating fixed
scores, as tests/test_peers.py does).
"""

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import skrank
from skrank._declare.equivalents import EQUIVALENTS, GENERIC, TOOLS, equivalents_markdown
from skrank._declare.table import METRICS

ROOT = Path(__file__).resolve().parents[1]
KS = (1, 5)

CASES = [(metric, i) for metric, entries in EQUIVALENTS.items()
         for i, entry in enumerate(entries) if GENERIC in entry.tests]


def _case_id(case):
    metric, i = case
    entry = EQUIVALENTS[metric][i]
    return f"{metric}-{entry.tool}-{entry.name}"


def _kind(metric, entry):
    """The collection an entry holds on: labels 0/1, 0-4 (gdeval's scale) or 0-3, and
    unjudged documents for the metrics that read ``judged``."""
    labels = ("binary" if "labels 0 or 1" in entry.when
              else "gdeval" if "labels 0 to 4" in entry.when else "graded")
    both = "with a relevant and a judged non-relevant document" in entry.when
    return labels, "judged" in METRICS[metric].inputs, both


def collection(labels, with_unjudged, both=False, seed=0, ties=False):
    """Grouped rows of 30 queries of 2 to 12 documents, distinct positive scores, one
    query without a relevant document and one with only relevant ones; numeric query ids
    (gdeval reads no others).  Unjudged rows (``judged`` False) are left out of the qrels.
    ``both``: every query has a relevant and a non-relevant document (its first two);
    ``ties``: scores of four levels instead of distinct ones."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 13, 30)
    qid = np.repeat(np.arange(1, sizes.size + 1), sizes)
    top = {"binary": 1, "gdeval": 4, "graded": 3}[labels]
    y = rng.integers(0, top + 1, qid.size)
    y[qid == 1] = 0
    y[qid == 2] = rng.integers(1, top + 1, int((qid == 2).sum()))
    if both:                                        # every query both: first rows 1, 0
        first = np.r_[0, np.cumsum(sizes)[:-1]]
        y[first], y[first + 1] = 1, 0
    s = (rng.permutation(qid.size) + 1.0) / qid.size
    if ties:                                        # four score levels: many ties
        s = rng.integers(1, 5, qid.size) / 4
    judged = np.ones(qid.size, dtype=bool)
    if with_unjudged:
        judged = rng.random(qid.size) < 0.75
        first = np.r_[0, np.cumsum(sizes)[:-1]]
        judged[first] = judged[first + 1] = True    # every query is in the qrels
        y = np.where(judged, y, 0)
    docno = np.array([f"d{i:03d}" for i in range(qid.size)])
    qrels, run = {}, {}
    for q, d, label, score, j in zip(qid.tolist(), docno, y.tolist(), s.tolist(), judged):
        if j:
            qrels.setdefault(str(q), {})[str(d)] = int(label)
        run.setdefault(str(q), {})[str(d)] = float(score)
    return dict(y=y, s=s, qid=qid, judged=judged, sizes=sizes, qrels=qrels, run=run)


def _mean(values):
    return float(np.mean(list(values)))


# -- the tools ----------------------------------------------------------------------------

def trec_eval(name, data):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    got = pytrec_eval.RelevanceEvaluator(data["qrels"], {name}).evaluate(data["run"])
    key = name.replace(".", "_")
    assert len(got) == data["sizes"].size
    return _mean(v[key] for v in got.values())


def ir_measures(name, data):
    irm = pytest.importorskip("ir_measures")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = list(irm.iter_calc([irm.parse_measure(name)], data["qrels"], data["run"]))
    assert len(got) == data["sizes"].size
    return _mean(m.value for m in got)


def _per_query(data):
    bounds = np.r_[0, np.cumsum(data["sizes"])]
    return [(data["y"][a:b], data["s"][a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def scikit_learn(name, data, k):
    import sklearn.metrics as M

    rows = _per_query(data)
    if name.startswith(("ndcg_score", "dcg_score")):
        f = M.ndcg_score if name.startswith("ndcg") else M.dcg_score
        return _mean(f([y], [s], k=k) for y, s in rows)
    if name == "label_ranking_average_precision_score":
        return _mean(M.label_ranking_average_precision_score([y], [s]) for y, s in rows)
    if name == "roc_auc_score":
        return _mean(M.roc_auc_score(y >= 1, s) for y, s in rows if 0 < (y >= 1).sum() < y.size)
    raise AssertionError(f"no scikit-learn adapter for {name}")


def torchmetrics(name, data):
    torch = pytest.importorskip("torch")
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    target = torch.as_tensor(data["y"])
    if not name.startswith("RetrievalNormalizedDCG"):
        target = target >= 1
    metric = eval(name, vars(retrieval))  # noqa: S307 - the entry's text: RetrievalMAP()
    return float(metric(torch.as_tensor(data["s"]), target,
                        indexes=torch.as_tensor(data["qid"] - 1)))


def lightgbm(name, data):
    lgb = pytest.importorskip("lightgbm")
    metric, k = name.split("@")
    ds = lgb.Dataset(np.zeros((data["y"].size, 1)), label=data["y"], group=data["sizes"],
                     init_score=data["s"])
    record = {}
    lgb.train({"objective": "lambdarank", "metric": [metric], "eval_at": [int(k)],
               "verbose": -1, "min_data_in_leaf": data["y"].size + 1},
              ds, num_boost_round=1, valid_sets=[ds], valid_names=["v"],
              callbacks=[lgb.record_evaluation(record)])
    return record["v"][name][0]


def xgboost(name, data):
    xgb = pytest.importorskip("xgboost")
    dm = xgb.DMatrix(np.zeros((data["y"].size, 1)), label=data["y"], qid=data["qid"],
                     base_margin=data["s"])
    booster = xgb.train({"objective": "rank:ndcg", "eval_metric": name}, dm, num_boost_round=0)
    return float(booster.eval(dm).split(":")[-1])


RANX_SCRIPT = """
import json, sys
import numpy as np
from ranx import Qrels, Run, evaluate
out = {}
for kind, item in json.load(sys.stdin).items():
    qrels, run = Qrels(item["qrels"]), Run(item["run"])
    values = evaluate(qrels, run, item["metrics"], return_mean=False)
    if not isinstance(values, dict):    # one metric: its array
        values = {item["metrics"][0]: values}
    out[kind] = {m: [float(v) for v in np.atleast_1d(values[m])] for m in item["metrics"]}
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def ranx_values():
    """Every ranx case of CASES at both cutoffs, computed in one subprocess (each
    collection's Qrels and Run built once): ``{"<kind>": {"<name>": per-query values}}``."""
    pytest.importorskip("ranx")
    payload = {}
    for metric, i in CASES:
        entry = EQUIVALENTS[metric][i]
        if entry.tool != "ranx":
            continue
        kind = _kind(metric, entry)
        if str(kind) not in payload:
            data = collection(*kind)
            payload[str(kind)] = {"qrels": data["qrels"], "run": data["run"], "metrics": []}
        for k in KS if entry.cut else (None,):
            payload[str(kind)]["metrics"].append(entry.at(k)[0] if entry.cut else entry.name)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", RANX_SCRIPT], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


# -- the tests ----------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_equivalent(case, request):
    metric, i = case
    entry = EQUIVALENTS[metric][i]
    spec = METRICS[metric]
    _check(metric, i, collection(*_kind(metric, entry)), request)
    if "also with ties" in entry.when:
        _check(metric, i, collection(*_kind(metric, entry), ties=True), request)


def _check(metric, i, data, request):
    entry = EQUIVALENTS[metric][i]
    spec = METRICS[metric]
    extra = {"judged": data["judged"]} if "judged" in spec.inputs else {}
    # gdeval prints 5 decimals; torchmetrics returns float32 (whatever the input's dtype)
    tolerance = 1e-5 if "5 decimals" in entry.when else 1e-6 if entry.tool == "torchmetrics" \
        else 1e-9
    for k in KS if entry.cut else (None,):
        name, options = entry.at(k) if entry.cut else entry.at()
        if entry.tool == "ranx":        # (no entry of ranx holds with ties)
            values = request.getfixturevalue("ranx_values")[str(_kind(metric, entry))][name]
            assert len(values) == data["sizes"].size
            expected = _mean(values)
        elif entry.tool == "scikit-learn":
            expected = scikit_learn(name, data, k)
        else:
            adapter = {"trec_eval": trec_eval, "ir_measures": ir_measures,
                       "torchmetrics": torchmetrics, "LightGBM": lightgbm,
                       "XGBoost": xgboost}[entry.tool]
            expected = adapter(name, data)
        got = spec.function(data["y"], data["s"], qid=data["qid"], **options, **extra)
        assert got == pytest.approx(expected, abs=tolerance), (entry.tool, name, options)


def test_the_data_differ_where_the_options_matter():
    """The collections tell the conventions apart (a query without a relevant document,
    graded labels): without the entry's options skrank's value is not the tool's."""
    data = collection("graded", False)
    assert xgboost("ndcg@5", data) != pytest.approx(
        skrank.ndcg_score(data["y"], data["s"], qid=data["qid"], k=5), abs=1e-6)
    assert trec_eval("ndcg_cut.5", data) != pytest.approx(
        skrank.ndcg_score(data["y"], data["s"], qid=data["qid"], k=5, gain="exponential"),
        abs=1e-6)
    binary = collection("binary", False)
    assert scikit_learn("label_ranking_average_precision_score", binary, None) != \
        pytest.approx(skrank.map_score(binary["y"], binary["s"], qid=binary["qid"]), abs=1e-6)


def test_every_metric_has_an_entry():
    missing = sorted(set(METRICS) - set(EQUIVALENTS))
    assert not missing, (
        f"add {missing} to skrank/_declare/equivalents.py's EQUIVALENTS (an empty tuple "
        "when no other tool computes the metric)")
    assert sorted(EQUIVALENTS) == sorted(METRICS)


def test_entries_are_well_formed():
    for metric, entries in EQUIVALENTS.items():
        spec = METRICS[metric]
        for entry in entries:
            assert entry.tool in TOOLS, entry
            _, options = entry.at()
            spec.check_params("test", options)          # known options, valid values
            assert not entry.cut or spec.k != "none", entry    # a cutoff the metric takes
            for test in entry.tests:
                path, _, function = test.partition("::")
                text = (ROOT / path).read_text(encoding="utf-8")
                assert re.search(rf"^def {function}\(", text, re.M), (entry, test)


def test_docstrings_show_the_equivalents():
    for metric, entries in EQUIVALENTS.items():
        doc = METRICS[metric].function.__doc__
        if entries:
            assert "Equivalents in other tools" in doc, metric
            assert doc.index("    Notes\n") < doc.index("    Examples\n"), metric
        for entry in entries:
            assert f"``{entry.at()[0]}``" in doc, (metric, entry)


def test_docs_table_is_generated_from_the_entries():
    """docs/metric_families.md holds equivalents_markdown()'s output (paste it there when an
    entry changes)."""
    text = (ROOT / "docs" / "metric_families.md").read_text(encoding="utf-8")
    assert equivalents_markdown(METRICS.values()) in text


def test_notes_go_before_the_examples_at_the_docstrings_indentation():
    """As indented in the source, dedented (Python 3.13 dedents docstrings), and after a
    Notes section of the docstring's own."""
    import inspect

    from skrank._declare.equivalents import insert_notes

    source = ("Title.\n\n    Parameters\n    ----------\n    a : int\n\n"
              "    Examples\n    --------\n    >>> 1\n    1\n")
    for doc, indent in ((source, "    "), (inspect.cleandoc(source), "")):
        out = insert_notes(doc, "mrr")
        assert f"\n{indent}Notes\n{indent}-----\n{indent}**Equivalents in other tools.**" in out
        assert out.index("Notes") < out.index("Examples")
        assert f"\n{indent}trec_eval     ``recip_rank``" in out
    own = source.replace("    Examples", "    Notes\n    -----\n    Own note.\n\n    Examples")
    out = insert_notes(own, "mrr")
    assert out.count("Notes\n") == 1
    assert out.index("Own note.") < out.index("Equivalents") < out.index("Examples")
    assert insert_notes(source, "no such metric") == source
