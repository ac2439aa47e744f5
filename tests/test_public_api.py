"""The public namespace, the scorer names and the docs follow the metric table.

The scorer names are checked against :data:`SCORER_STEMS`, written here by hand from
the user guide (docs/tuning.md), and their values against the test oracle, so a name
that the table drops, renames or maps to other options fails here.
"""

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
import sklearn
import sklearn.metrics
from sklearn.base import BaseEstimator, RegressorMixin

import skrank
from skrank import METRICS

try:  # works whether or not tests/ is a package
    from tests import _reference as R
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    import _reference as R

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: scorer stem -> (oracle metric, options the stem fixes, cutoff: "optional" means
#: both ``stem`` and ``stem@k``, "required" only ``stem@k``, "none" only ``stem``).
SCORER_STEMS = {
    "ndcg": ("ndcg", {}, "optional"),
    "ndcg_exp": ("ndcg", {"gain": "exponential"}, "optional"),
    "dcg": ("dcg", {}, "optional"),
    "dcg_exp": ("dcg", {"gain": "exponential"}, "optional"),
    "cg": ("cg", {}, "optional"),
    "cg_exp": ("cg", {"gain": "exponential"}, "optional"),
    "map": ("map", {}, "optional"),
    "mrr": ("mrr", {}, "optional"),
    "precision": ("precision", {}, "required"),
    "recall": ("recall", {}, "optional"),
    "hit_rate": ("hit_rate", {}, "optional"),
    "r_precision": ("r_precision", {}, "none"),
    "err": ("err", {"max_grade": 4}, "optional"),
    "rbp": ("rbp", {"p": 0.8}, "optional"),
    "gauc": ("gauc", {}, "none"),
}

#: the diversity metrics' scorer names (issue 29): y is their label matrix rows x subtopics
DIVERSITY_STEMS = {"alpha_ndcg": "optional", "alpha_dcg": "optional", "err_ia": "optional",
                   "nerr_ia": "optional", "nrbp": "none", "nnrbp": "none", "p_ia": "optional",
                   "ap_ia": "none", "strec": "optional"}

#: the aliases the docs name beside their stem
ALIASES = {"P": "precision", "map_ia": "ap_ia", "subtopic_recall": "strec", "s_recall": "strec"}

_NAME = re.compile(r"^(?P<stem>[a-z_]+)(?P<cut>@\d+)?$")


def _split(name):
    match = _NAME.match(name)
    assert match, f"{name!r} is not of the form <stem>[@<k>]"
    return match["stem"], match["cut"]


def _doc_text():
    return "\n".join(p.read_text() for p in sorted(DOCS.glob("*.md")))


def _table_rows(text, header):
    """The first cells of the rows of the markdown table whose header row starts ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_every_metric_function_is_public_and_every_score_function_is_in_the_table():
    functions = {spec.function.__name__ for spec in METRICS.values() if spec.module == "skrank"}
    exported = {name for name in skrank.__all__ if name.endswith("_score")}
    assert functions == exported
    for name in skrank.__all__:
        assert hasattr(skrank, name), name
    for spec in METRICS.values():   # skrank's, skrank.diversity's and skrank.beyond's
        module = importlib.import_module(spec.module)
        assert getattr(module, spec.function.__name__) is spec.function
        assert spec.function.__name__ in module.__all__


def test_scorer_names_are_the_documented_stems():
    """get_scorer_names(): exactly the stems of SCORER_STEMS, with their cutoff forms,
    less the names scikit-learn already has ("recall", "precision", ...)."""
    names = skrank.get_scorer_names()
    assert len(names) == len(set(names))
    sklearn_names = set(sklearn.metrics.get_scorer_names())
    forms = {}
    for name in names:
        stem, cut = _split(name)
        forms.setdefault(stem, set()).add(cut is not None)
    assert set(forms) == set(SCORER_STEMS) | set(DIVERSITY_STEMS)
    cutoffs = {**{stem: cut for stem, (_, _, cut) in SCORER_STEMS.items()}, **DIVERSITY_STEMS}
    for stem, cutoff in cutoffs.items():
        expected = {"optional": {False, True}, "required": {True}, "none": {False}}[cutoff]
        if stem in sklearn_names:
            expected = expected - {False}  # never shadows scikit-learn's scorer
        assert forms[stem] == expected, stem
    assert set(names) & sklearn_names == set()


def _score(name, X, y, qid):
    with sklearn.config_context(enable_metadata_routing=True):
        return skrank.get_scorer(name)(_FirstColumn(), X, y, qid=qid)


def _scoring_data():
    rng = np.random.default_rng(7)
    qid = np.repeat([3, 1, 4, 5], [6, 9, 5, 7])
    y = rng.integers(0, 4, size=qid.size).astype(float)
    y[qid == 4] = 0  # a query without a relevant document
    X = rng.random((qid.size, 1))  # distinct scores: every tie policy agrees
    return X, y, qid


class _FirstColumn(RegressorMixin, BaseEstimator):
    """A model whose score is the first feature (nothing to fit)."""

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


@pytest.mark.parametrize("stem", list(SCORER_STEMS))
def test_scorer_names_mean_what_the_docs_say(stem):
    metric, fixed, cutoff = SCORER_STEMS[stem]
    X, y, qid = _scoring_data()
    names = {"optional": [stem, f"{stem}@3"], "required": [f"{stem}@3"], "none": [stem]}[cutoff]
    for name in names:
        if name in sklearn.metrics.get_scorer_names():
            continue  # "recall" keeps scikit-learn's meaning
        k = 3 if "@" in name else None
        params = dict(fixed, **({} if cutoff == "none" else {"k": k}))
        expected, _ = R.ref_mean(metric, y, X[:, 0], qid, ties="stable", **params)
        got = _score(name, X, y, qid)
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), name
    for alias, target in ALIASES.items():
        if target == stem:
            assert _score(f"{alias}@3", X, y, qid) == _score(f"{stem}@3", X, y, qid)


def test_user_guide_scorer_table_is_exactly_the_scorer_names():
    """docs/tuning.md's table of names: the same stems, cutoff forms and aliases."""
    rows = _table_rows((DOCS / "tuning.md").read_text(), "| name | metric |")
    documented = {}
    for first, _ in rows:
        for token in re.findall(r"`([^`]+)`", first):
            match = re.fullmatch(r"(?P<stem>[A-Za-z_]+)(?P<cut>\[@k\]|@k)?", token)
            assert match, f"docs/tuning.md: {token!r} is not a scorer name form"
            stem = ALIASES.get(match["stem"], match["stem"])
            cut = {None: {False}, "@k": {True}, "[@k]": {False, True}}[match["cut"]]
            documented.setdefault(stem, set()).update(cut)
    assert set(documented) == set(SCORER_STEMS) | set(DIVERSITY_STEMS)
    cutoffs = {**{stem: cut for stem, (_, _, cut) in SCORER_STEMS.items()}, **DIVERSITY_STEMS}
    for stem, cutoff in cutoffs.items():
        expected = {"optional": {False, True}, "required": {True}, "none": {False}}[cutoff]
        assert documented[stem] == expected, stem


@pytest.mark.parametrize("stem", list(DIVERSITY_STEMS))
def test_diversity_scorer_names_score_the_label_matrix(stem):
    """A diversity scorer name scores y, the label matrix rows x subtopics that
    scikit-learn passes through, as the diversity function does (tests/test_diversity.py
    checks the functions against ndeval and a slow oracle)."""
    X, _, qid = _scoring_data()
    rng = np.random.default_rng(3)
    y = (rng.random((qid.size, 3)) < 0.3).astype(float)
    spec = skrank.diversity.DIVERSITY_METRICS[stem]
    name = stem if DIVERSITY_STEMS[stem] == "none" else f"{stem}@3"
    options = {} if DIVERSITY_STEMS[stem] == "none" else {"k": 3}
    expected = spec.function(y, X[:, 0], qid=qid, **options)
    assert _score(name, X, y, qid) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_user_guide_binary_metric_table_matches_the_metric_table():
    """docs/metric_families.md's table: each function with its own scorer stems."""
    rows = _table_rows((DOCS / "metric_families.md").read_text(),
                       "| function | scorer name |")
    assert rows
    by_function = {spec.function.__name__: spec for spec in METRICS.values()}
    for function, names, *_ in rows:
        function = function.strip("`")
        assert function in by_function, function
        spec = by_function[function]
        for token in re.findall(r"`([^`]+)`", names):
            stem = re.sub(r"\[?@k\]?$", "", token)
            assert ALIASES.get(stem, stem) in spec.variants, (function, token)


def test_user_guide_names_exactly_the_public_metric_functions():
    """Every ``skrank.<metric>_score`` the docs call exists, and every one is called."""
    called = set(re.findall(r"skrank\.([a-z_]+_score)(?!\w)", _doc_text()))
    assert called == {spec.function.__name__ for spec in METRICS.values()
                      if spec.module == "skrank"}


def test_public_functions_have_runnable_examples():
    for spec in METRICS.values():
        doc = spec.function.__doc__
        assert "Examples" in doc and ">>>" in doc, spec.name
        assert "Parameters" in doc and "Returns" in doc, spec.name
