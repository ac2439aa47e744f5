"""Every list of metrics and options follows the declarations (skrank._declare.params, skrank.METRICS).

* Each public metric function's signature and Parameters section are its declaration's.
* Public names, scorer names, the command line's choices and help, and the docs'
  metric table hold exactly the declared metrics, both ways.
* Common tests generated from each option's valid and invalid example values, run
  through every metric function that takes the option, ``per_query_scores``,
  ``evaluate`` and the scorers: an invalid value raises InvalidParameterError naming
  the option, a valid one runs.
"""

import inspect
import re
import warnings
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, RegressorMixin

import skrank
from skrank._declare import params as P
from skrank._declare.names import (family_markdown, judged_metrics_markdown, metrics_markdown,
                                   parse_metric_name)
from skrank._plan import MetricCall, _parse_item

try:  # works whether or not tests/ is a package
    from tests.conftest import SPECS, spec_id, valid_params
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import SPECS, spec_id, valid_params

#: Every declaration of the table METRICS (SPECS: those with scorer names), and those
#: reading the extra input judged= (bpref, infap, judged@k).
ALL_SPECS = list(skrank.METRICS.values())
JUDGED_SPECS = [spec for spec in ALL_SPECS if "judged" in spec.inputs]
#: Every declaration with scorer names: SPECS and the diversity metrics (issue 29), whose
#: scorers take the label matrix rows x subtopics as y.
SCORER_SPECS = [spec for spec in ALL_SPECS if spec.scorer]
#: The beyond-accuracy metrics (issue 29): functions of recommendation lists.
BEYOND_SPECS = [spec for spec in ALL_SPECS if spec.family == "beyond"]
DOCS = Path(__file__).resolve().parents[1] / "docs"
Y = [2.0, 0.0, 1.0, 1.0, 0.0]
S = [0.3, 0.2, 0.1, 0.5, 0.4]
Q = [0, 0, 0, 1, 1]


# --------------------------------------------------------------------------------------
# Signatures and docstrings
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ALL_SPECS, ids=spec_id)
def test_signature_is_the_declaration(spec):
    """Names, order, kinds and defaults of the public function's arguments."""
    got = list(inspect.signature(spec.function).parameters.values())
    declared = spec.signature_params()
    assert [p.name for p in got] == [p.name for p in declared]
    for param, decl in zip(got, declared):
        positional = decl in spec.positional
        assert param.kind is (param.POSITIONAL_OR_KEYWORD if positional
                              else param.KEYWORD_ONLY), param.name
        expected = inspect.Parameter.empty if positional else decl.default
        assert param.default is expected or param.default == expected, param.name


def _doc_parameter_names(doc):
    section = doc.split("Parameters\n    ----------\n", 1)[1].split("\n    Returns\n", 1)[0]
    return re.findall(r"^    (\w+) :", section, flags=re.M)


@pytest.mark.parametrize("spec", ALL_SPECS, ids=spec_id)
def test_docstring_parameters_are_the_declarations(spec):
    doc = spec.function.__doc__
    names = list(inspect.signature(spec.function).parameters)
    assert _doc_parameter_names(doc) == names
    for param in spec.params:
        entry = param.doc().replace("\n", "\n    ")
        assert entry in doc, (spec.name, param.name)
    assert "{parameters}" not in doc and "{returns}" not in doc


def test_every_option_of_a_metric_is_a_declared_option():
    """A metric may vary an option (choices, default, note), never invent one."""
    for spec in ALL_SPECS:
        for param in spec.params:
            assert param.name in P.OPTIONS, (spec.name, param.name)
            base = P.OPTIONS[param.name]
            assert param.constraints, (spec.name, param.name)
            assert type(param.constraints[0]) in {type(c) for c in base.constraints}


# --------------------------------------------------------------------------------------
# Param and its constraints
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("constraint, type_doc, bad, message", [
    (P.Interval(Real, 0, 1, closed="left"), "float in [0, 1)", 1.0,
     "f: x must be a finite number in [0, 1). Got 1.0 instead."),
    (P.Interval(Real, 0, 1, closed="right"), "float in (0, 1]", 0,
     "f: x must be a finite number in (0, 1]. Got 0.0 instead."),
    (P.Interval(Real, None, 5), "float in (-inf, 5]", 6, "in (-inf, 5]. Got 6.0 instead."),
    (P.Interval(Real, 2, None, closed="neither"), "float > 2", "a",
     "f: x must be a real number. Got 'a' (type str) instead."),
    (P.Interval(Integral, 0), "int >= 0", -1, "f: x must be an int >= 0. Got -1 instead."),
    (P.Interval(Integral, 0), "int >= 0", 1.0,
     "f: x must be an int >= 0. Got 1.0 (type float) instead."),
    (P.Options(("a", "b")), '{"a", "b"}', "c",
     "f: x must be one of 'a', 'b'. Got 'c' (type str) instead."),
])
def test_constraint_wording(constraint, type_doc, bad, message):
    param = P.Param("x", (constraint,), default=None, description="An option.")
    assert param.type_doc() == type_doc
    with pytest.raises(skrank.InvalidParameterError) as info:
        param.validate("f", bad)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_param_doc_and_choices():
    param = P.Param("x", (P.NoneValue("off"), P.Options(("a", "b"))), default="a",
                    description="First line.\nSecond line.")
    assert param.doc() == 'x : {"a", "b"} or None, default="a"\n    First line.\n    Second line.'
    assert param.choices == ("a", "b")
    assert param.validate("f", None) is None
    with pytest.raises(skrank.InvalidParameterError, match=r"f: x must be None \(off\) or one "
                                                           r"of 'a', 'b'\. Got 3 \(type int\)"):
        param.validate("f", 3)
    required = param.replace(default=P.REQUIRED)
    assert required.doc().startswith('x : {"a", "b"} or None\n')
    with pytest.raises(skrank.InvalidParameterError, match=r"f: x is required\. Got no value"):
        required.validate("f", P.REQUIRED)
    restricted = param.replace(supported=("b",), unsupported="f has no a.")
    assert restricted.choices == ("b",)
    with pytest.raises(skrank.InvalidParameterError,
                       match=r"f: x='a' is not supported: f has no a\. Use one of 'b'\."):
        restricted.validate("f", "a")


def test_conversion():
    assert type(P.K.validate("f", np.int64(3))) is int
    assert type(P.THRESHOLD.validate("f", np.int32(2))) is float
    assert P.GAIN.validate("f", np.sqrt) is np.sqrt


@pytest.mark.parametrize("name", sorted(P.OPTIONS))
def test_examples_of_each_declared_option(name):
    """Each option has examples both ways, and they mean what they say on the Param."""
    param = P.OPTIONS[name]
    assert param.valid and param.invalid, name
    for value in param.valid:
        param.validate("f", value)
    for value in param.invalid:
        with pytest.raises(skrank.InvalidParameterError, match=rf"^f: {name}\b"):
            param.validate("f", value)


def test_the_engine_takes_every_declared_choice():
    # The engine reads the declared choices, not lists of its own: every tie policy
    # ranks and every no_relevant policy aggregates (or raises, as declared).
    from skrank._engine.aggregate import apply_no_relevant
    from skrank._engine.ranking import rank_queries
    from skrank._engine.arrays import check_ranking_arrays

    arrays = check_ranking_arrays("f", [1, 0, 0, 0], [0.5, 0.5, 0.2, 0.1], [0, 0, 1, 1])
    for ties in P.TIES.choices:
        assert rank_queries("f", *arrays, ties).n_queries == 2
    qids, values, undefined = np.array([0, 1]), np.array([1.0, 0.0]), np.array([False, True])
    for policy in P.NO_RELEVANT.choices:
        if policy == "raise":
            with pytest.raises(ValueError, match="no relevant"):
                apply_no_relevant("f", qids, values, undefined, policy)
        else:
            apply_no_relevant("f", qids, values, undefined, policy)
    assert P.GAIN.choices == ("linear", "exponential")


# --------------------------------------------------------------------------------------
# Common tests generated from the examples, through every entry point
# --------------------------------------------------------------------------------------


class _FirstColumn(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


def _options(spec):
    """Options making a valid call of the metric (its required ones)."""
    if spec.scorer:
        return valid_params(spec, Y)
    return {"k": 3} if spec.k == "required" else {}


#: Lists, scores and catalog data for the beyond-accuracy metrics' entry points.
_SCORES = np.array([[0.9, 0.1, 0.5, 0.3, 0.7], [0.2, 0.8, 0.4, 0.6, 0.1],
                    [0.5, 0.4, 0.3, 0.2, 0.9]])
_CATALOG = dict(n_items=5, item_popularity=[5, 1, 3, 2, 4],
                item_features=[[1, 0], [1, 1], [0, 1], [1, 2], [2, 1]], history=[[0], [1], [2]])


def _beyond_entry_points(spec, options):
    """(name, call) of a beyond-accuracy metric: its function on the lists, the lists'
    evaluate and per-user values, and skrank.evaluate on the scores (the lists' top k)."""
    k = options.get("k")
    lists = skrank.beyond.top_k_items(_SCORES, 3)
    reads = {name: value for name, value in _CATALOG.items()
             if name in {p.name for p in spec.signature_params()}}
    evaluated = (spec.name, dict(options))   # the cutoff as an option (checked as k)
    points = [
        ("function", lambda: spec.function(lists, **reads, **options)),
        ("beyond.evaluate", lambda: skrank.beyond.evaluate(lists, [spec.name], **reads,
                                                           **options)),
        ("evaluate", lambda: skrank.evaluate(_SCORES, _SCORES, metrics=[evaluated], **reads)),
    ]
    if spec.aggregate == "mean":
        points.append(("per_user_scores", lambda: skrank.beyond.per_user_scores(
            spec.name, lists, **reads, **options)))
    return points


def _entry_points(spec, options):
    """(name, call) running the metric with these options through each entry point (the
    metrics taking judged= are no scorers)."""
    X = np.asarray(S)[:, None]
    if spec.family == "beyond":
        return _beyond_entry_points(spec, options)
    if not spec.scorer:
        return [
            ("function", lambda: spec.function(Y, S, qid=Q, judged=None, **options)),
            ("per_query_scores", lambda: skrank.per_query_scores(spec.name, Y, S, qid=Q,
                                                                 **options)),
            ("evaluate", lambda: skrank.evaluate(Y, S, qid=Q, metrics=[(spec.name, options)])),
        ]

    def scorer():
        scorer = skrank.make_ranking_scorer(spec.name, **options)
        with sklearn.config_context(enable_metadata_routing=True):
            return scorer(_FirstColumn(), X, np.asarray(Y), qid=Q)

    return [
        ("function", lambda: spec.function(Y, S, qid=Q, **options)),
        ("per_query_scores", lambda: skrank.per_query_scores(spec.name, Y, S, qid=Q, **options)),
        ("evaluate", lambda: skrank.evaluate(Y, S, qid=Q, metrics=[(spec.name, options)])),
        ("scorer", scorer),
    ]


def _example_cases(which):
    return [pytest.param(spec, param.name, value, id=f"{spec.name}-{param.name}-{value!r}")
            for spec in ALL_SPECS for param in spec.params for value in getattr(param, which)]


@pytest.mark.parametrize("spec, name, value", _example_cases("invalid"))
def test_invalid_example_raises_naming_the_option(spec, name, value):
    options = {**_options(spec), name: value}
    for entry, call in _entry_points(spec, options):
        with pytest.raises(skrank.InvalidParameterError) as info:
            call()
        assert re.search(rf"\b{name}\b", str(info.value)), (entry, str(info.value))


@pytest.mark.parametrize("spec, name, value", _example_cases("valid"))
def test_valid_example_runs(spec, name, value):
    options = {**_options(spec), name: value}
    if spec.family == "beyond":
        return _beyond_valid_example_runs(spec, name, value)
    expected = spec.function(Y, S, qid=Q, **options)
    assert isinstance(expected, float)
    for entry, call in _entry_points(spec, options)[1:]:
        if entry == "per_query_scores" and options.get("weighting", "uniform") != "uniform":
            continue   # unweighted per-query values (gauc's weighting: tests/test_gauc.py)
        result = call()
        got = {"per_query_scores": lambda r: float(np.mean(r.score)),
               "evaluate": lambda r: next(iter(r.mean.values())),
               "scorer": float}[entry](result)
        assert got == pytest.approx(expected, rel=1e-12, nan_ok=True), entry


def _beyond_valid_example_runs(spec, name, value):
    """The same value through every entry point (the function on the scores' top-3 lists;
    skrank.evaluate ranks the scores itself, with the cutoff of the name)."""
    options = {name: value}
    points = dict(_beyond_entry_points(spec, options))
    if spec.name.startswith("intra_list") and options.get("k") == 1:   # no pair in a list
        with pytest.raises(ValueError, match="no user has a list it is defined on"):
            points["function"]()
        return
    expected = points.pop("function")()
    assert isinstance(expected, float)
    res = points.pop("beyond.evaluate")()
    assert res.mean[spec.name] == pytest.approx(expected, rel=1e-12)
    if "per_user_scores" in points:
        assert float(np.mean(points.pop("per_user_scores")().score)) == pytest.approx(
            expected, rel=1e-12)
    if options.get("k") is None:   # evaluate needs a cutoff to make the lists from scores
        with pytest.raises(skrank.InvalidParameterError, match="needs a cutoff"):
            points.pop("evaluate")()
        options["k"] = 3
        expected = spec.function(skrank.beyond.top_k_items(_SCORES, 3), **{
            n: v for n, v in _CATALOG.items()
            if n in {p.name for p in spec.signature_params()}}, **options)
        points = dict(_beyond_entry_points(spec, options))
    got = points["evaluate"]()
    assert next(iter(got.mean.values())) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------
# Names: public functions, scorer names, aliases, trec_eval names
# --------------------------------------------------------------------------------------


def test_public_metric_functions_are_the_declared_ones():
    """The table, both ways; bpref, infap and judged@k are in it, declaring their extra
    input judged=, and so have no scorer names."""
    public = {name for name in skrank.__all__ if name.endswith("_score")}
    declared = [spec.function.__name__ for spec in ALL_SPECS if spec.module == "skrank"]
    assert public == set(declared) and len(declared) == len(public)
    assert {spec.name for spec in JUDGED_SPECS} == {"bpref", "infap", "judged"}
    assert not any(spec.scorer for spec in JUDGED_SPECS)
    names = set(skrank.get_scorer_names())
    assert not {"bpref", "infap", "judged@10"} & names
    for spec in ALL_SPECS:
        module = skrank if spec.module == "skrank" else getattr(skrank, spec.module[7:])
        assert getattr(module, spec.function.__name__) is spec.function


def _cut_forms(spec):
    return {"optional": {False, True}, "required": {True}, "none": {False}}[spec.k]


def test_scorer_names_are_the_declared_variants():
    """get_scorer_names() both ways against the variants, each name parsing back to its
    declaration (scikit-learn's own names, "recall" and "precision", stay scikit-learn's)."""
    sklearn_names = set(sklearn.metrics.get_scorer_names())
    listed = {}
    for name in skrank.get_scorer_names():
        stem, _, cut = name.partition("@")
        listed.setdefault(stem, set()).add(bool(cut))
        spec, params = parse_metric_name(name)
        assert stem in spec.variants, name
        assert {k: v for k, v in params.items() if k != "k"} == {
            **spec.variants[stem], **spec.name_defaults}
    declared = {stem: spec for spec in SCORER_SPECS for stem in spec.variants}
    assert set(listed) == set(declared)
    for stem, spec in declared.items():
        expected = _cut_forms(spec) - ({False} if stem in sklearn_names else set())
        assert listed[stem] == expected, stem


@pytest.mark.parametrize("spec", SCORER_SPECS, ids=spec_id)
def test_scorer_name_computes_the_declared_function(spec):
    rng = np.random.default_rng(3)
    qid = np.repeat([1, 2, 3], [5, 6, 4])
    y = rng.integers(0, 4, size=qid.size).astype(float)
    X = rng.random((qid.size, 1))
    for stem, fixed in spec.variants.items():
        for alias in [stem, *[a for a, s in spec.aliases.items() if s == stem]]:
            name = alias if spec.k == "none" else f"{alias}@3"
            options = {**spec.name_defaults, **fixed, **({} if spec.k == "none" else {"k": 3})}
            expected = spec.function(y, X[:, 0], qid=qid, **options)
            with sklearn.config_context(enable_metadata_routing=True):
                got = skrank.get_scorer(name)(_FirstColumn(), X, y, qid=qid)
            assert got == pytest.approx(expected, rel=1e-12), name
            assert str(MetricCall.of(spec, options, func="f")) == (
                stem if spec.k == "none" else f"{stem}@3")


def test_name_defaults_may_be_overridden_and_variants_not():
    scorer = skrank.make_ranking_scorer("err", k=5, max_grade=3)
    X = np.asarray([[.9], [.5], [.1]])
    with sklearn.config_context(enable_metadata_routing=True):
        got = scorer(_FirstColumn(), X, np.asarray([3.0, 0.0, 1.0]), qid=[0, 0, 0])
    assert got == pytest.approx(skrank.err_score([3, 0, 1], [.9, .5, .1], qid=[0] * 3, k=5,
                                                 max_grade=3))
    with pytest.raises(skrank.InvalidParameterError, match="already sets gain"):
        skrank.make_ranking_scorer("ndcg_exp", gain="linear")


@pytest.mark.parametrize("spec", [s for s in SPECS if s.trec_names], ids=spec_id)
def test_trec_names_and_their_cutoffs(spec):
    assert set(spec.trec_cut) <= set(spec.trec_names)
    for name, fixed in spec.trec_names.items():
        if name in spec.variants:
            pass  # a skrank name too ("recall", "rbp"): skrank's meaning, see cli._read_name
        elif name in spec.trec_cut:
            with pytest.raises(skrank.InvalidParameterError, match="needs a cutoff"):
                parse_metric_name(name, trec=True)
        else:
            got, params = parse_metric_name(name, trec=True)
            assert got is spec and {k: v for k, v in params.items()
                                    if k not in spec.name_defaults} == fixed
        if spec.k != "none":
            got, params = parse_metric_name(f"{name}.10", trec=True)
            assert got is spec and params["k"] == 10


# --------------------------------------------------------------------------------------
# The command line and the docs
# --------------------------------------------------------------------------------------


def _evaluate_action(dest):
    from skrank.cli import _build_parser

    parser = _build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return next(a for a in sub.choices["evaluate"]._actions if a.dest == dest)


def test_cli_choices_are_the_declared_ones():
    assert list(_evaluate_action("ties").choices) == list(P.EVALUATE_TIES.choices)
    assert list(P.EVALUATE_TIES.choices) == ["trec", *P.TIES.choices]
    assert list(_evaluate_action("no_relevant").choices) == list(P.EVALUATE_NO_RELEVANT.choices)
    assert "raise" in P.EVALUATE_NO_RELEVANT.choices
    # ERR's grade scale when a name does not give one: the declaration's (gdeval's 4)
    max_grade = skrank.METRICS["err"].name_defaults["max_grade"]
    assert _evaluate_action("max_grade").default == max_grade
    assert f"default {max_grade:g}" in _evaluate_action("max_grade").help


def test_cli_max_grade_default_follows_the_declaration(monkeypatch):
    from skrank._declare.table import METRICS

    monkeypatch.setitem(METRICS["err"].name_defaults, "max_grade", 7)
    assert _evaluate_action("max_grade").default == 7


def test_cli_metric_help_names_exactly_the_declared_metrics():
    text = _evaluate_action("metrics").help
    skrank_part = text.split("), or a trec_eval name", 1)[0]
    stems = set(re.findall(r"\b([A-Za-z_]+)(?:\[?@<k>\]?)", skrank_part))
    stems |= set(re.findall(r"(?:\(|, )([A-Za-z_]+)(?=[,;)])", skrank_part))
    stems |= set(re.findall(r"; ([A-Za-z_]+) = ", skrank_part))   # aliases without a cutoff
    declared = {stem for spec in SCORER_SPECS for stem in [*spec.variants, *spec.aliases]}
    assert stems == declared


def _metric_table_rows():
    text = (DOCS / "metric_families.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    start = lines.index(metrics_markdown().splitlines()[0])
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return text, rows


def test_docs_metric_table_is_generated_from_the_declarations():
    """docs/metric_families.md holds metrics_markdown()'s output (paste it there when a
    declaration changes), and its rows are exactly the declared metrics."""
    text, rows = _metric_table_rows()
    assert metrics_markdown() in text
    functions = [re.match(r"\| `(\w+)`", row)[1] for row in rows]
    assert functions == [spec.function.__name__ for spec in SPECS]


def test_docs_judged_metric_table_is_generated_from_the_declarations():
    """The same for the metrics that take judged= (their own table, in their section)."""
    text = (DOCS / "metric_families.md").read_text(encoding="utf-8")
    table = judged_metrics_markdown()
    assert table in text
    rows = table.splitlines()[2:]
    assert [re.match(r"\| `(\w+)`", row)[1] for row in rows] == [
        spec.function.__name__ for spec in JUDGED_SPECS]
    section = text.split("## Documents nobody judged", 1)[1].split("\n## ", 1)[0]
    assert table in section


@pytest.mark.parametrize("family, page", [("diversity", "diversity.md"),
                                          ("beyond", "recommender.md")])
def test_docs_family_tables_are_generated_from_the_declarations(family, page):
    """docs/diversity.md and docs/recommender.md hold family_markdown()'s tables (paste
    them there when a declaration changes), one row per declaration of the family."""
    table = family_markdown(family)
    assert table in (DOCS / page).read_text(encoding="utf-8")
    rows = table.splitlines()[2:]
    assert [re.match(r"\| `skrank\.\w+\.(\w+)`", row)[1] for row in rows] == [
        spec.function_name for spec in ALL_SPECS if spec.family == family]


def test_trec_eval_measure_table_agrees_with_the_trec_names():
    """The trec_eval measures whose "skrank on arrays" column (docs/trec_eval.md) names a
    declared metric are exactly the declared trec_names; cut measures are the trec_cut."""
    from skrank._trec.measures import TREC_MEASURES

    stems = {stem: spec for spec in ALL_SPECS for stem in spec.variants}
    described = {}
    for measure in TREC_MEASURES.values():
        match = re.match(r"[a-z_]+", measure.skrank or "")
        if match and match[0] in stems:
            described[measure.name] = stems[match[0]]
    assert described == {name: spec for spec in ALL_SPECS for name in spec.trec_names}
    for name, spec in described.items():
        assert (TREC_MEASURES[name].kind == "cut_long") == (
            name in getattr(spec, "trec_cut", ())), name


@pytest.mark.parametrize("spec", JUDGED_SPECS, ids=spec_id)
def test_judged_metric_names_are_the_declared_ones(spec):
    """evaluate() reads each judged metric by its name and its trec_eval names, and only
    by those; error messages list them."""
    for name in (*spec.variants, *spec.aliases, *spec.trec_names):
        item = f"{name}@3" if spec.k == "required" else name
        got, params = _parse_item(item, "evaluate", True, ("judged",))
        assert got is spec
    with pytest.raises(skrank.InvalidParameterError, match="unknown metric name") as info:
        skrank.evaluate(Y, S, qid=Q, metrics=[spec.name + "x"])
    assert (f"{spec.name}@<k>" if spec.k == "required" else spec.name) in str(info.value)


@pytest.mark.parametrize("param", [P.TIES, P.NO_RELEVANT], ids=lambda p: p.name)
def test_user_guide_option_tables_are_the_declared_choices(param):
    """docs/metrics.md's table of each policy: its rows are the option's choices, in the
    declared order, with the declared default marked."""
    lines = (DOCS / "metrics.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| `{param.name}=` |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    assert [re.match(r'`"(\w+)"`', row)[1] for row in rows] == list(param.choices)
    assert [row for row in rows if "(default)" in row] == [f'`"{param.default}"` (default)']


def test_command_line_docs_list_the_declared_choices():
    """docs/metric_families.md's table of `skrank evaluate` options: --ties and
    --no-relevant list the command line's choices (read from the declarations)."""
    text = (DOCS / "metric_families.md").read_text(encoding="utf-8")
    for flag, dest in (("--ties", "ties"), ("--no-relevant", "no_relevant")):
        row = next(line for line in text.splitlines() if line.startswith(f"| `{flag}` |"))
        documented = re.findall(r"`(\w+)`", row.split("|")[2])
        assert documented == list(_evaluate_action(dest).choices), flag


# --------------------------------------------------------------------------------------
# No dead code left behind by the declarations
# --------------------------------------------------------------------------------------

#: Module-level functions of private modules that skrank itself never calls, and why.
_CALLED_FROM_OUTSIDE = {
    "__dir__": "module hook, called by dir(skrank)",
    "__getattr__": "module hook, called by attribute access",
    "metrics_markdown": "generates docs/metric_families.md's table (the tests compare them)",
    "judged_metrics_markdown": "generates docs/metric_families.md's table (the tests compare)",
    "scorer_names_markdown": "generates docs/tuning.md's table (tests/test_safety_nets.py)",
    "measures_markdown": "generates docs/trec_eval.md's table (the tests compare them)",
    "methods_markdown": "generates docs/fusion.md's table of methods (the tests compare them)",
    "family_markdown": "generates the tables of docs/diversity.md and docs/recommender.md",
}


def test_every_private_function_is_used_by_skrank():
    """A helper of a private module that no code of skrank refers to is dead (e.g. a
    name helper left over once MetricCall wrote canonical names)."""
    package = Path(skrank.__file__).resolve().parent
    sources = {path: path.read_text(encoding="utf-8") for path in package.rglob("*.py")}
    everything = "\n".join(sources.values())
    unused = []
    for path, text in sources.items():
        if not path.name.startswith("_") or path.name == "__main__.py":
            continue
        for name in re.findall(r"^def (\w+)\(", text, flags=re.M):
            if name not in _CALLED_FROM_OUTSIDE and len(
                    re.findall(rf"\b{name}\b", everything)) == 1:
                unused.append(f"{path.relative_to(package)}:{name}")
    assert unused == []


# --------------------------------------------------------------------------------------
# evaluate()'s and per_query_scores' own options
# --------------------------------------------------------------------------------------

_QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1}}
_RUN = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.1}, "q2": {"d1": 0.3, "d4": 0.2}}


def test_evaluate_docstring_is_the_declarations():
    for doc, params in ((skrank.evaluate.__doc__, P.EVALUATE_OPTIONS.values()),
                        (skrank.per_query_scores.__doc__, [P.METRIC])):
        for param in params:
            assert param.doc().replace("\n", "\n    ") in doc, param.name
        assert not re.search(r"^    \{\w+\}$", doc, flags=re.M)
    names = _doc_parameter_names(skrank.evaluate.__doc__)
    assert set(P.EVALUATE_OPTIONS) <= set(names)
    signature = inspect.signature(skrank.evaluate).parameters
    for name, param in P.EVALUATE_OPTIONS.items():
        if name != "metrics":
            assert signature[name].default == param.default, name


def _evaluate_cases(which):
    return [pytest.param(param, value, id=f"{param.name}-{value!r}")
            for param in P.EVALUATE_OPTIONS.values() for value in getattr(param, which)]


@pytest.mark.parametrize("param, value", _evaluate_cases("invalid"))
def test_evaluate_invalid_option_raises_naming_it(param, value):
    """Checked whether or not a listed metric reads the option (cg takes neither
    no_relevant nor threshold), for arrays and for qrels with a run."""
    calls = [lambda: skrank.evaluate(qrels=_QRELS, run=_RUN, metrics=["cg@2"],
                                     **{param.name: value}),
             lambda: skrank.evaluate(Y, S, qid=Q, metrics=["cg@2"], **{param.name: value})]
    for call in calls:
        with pytest.raises(skrank.InvalidParameterError,
                           match=rf"^evaluate: {param.name}\b"):
            call()


@pytest.mark.parametrize("param, value", _evaluate_cases("valid"))
def test_evaluate_valid_option_runs(param, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # q2 has no relevant document retrieved, d4 unjudged
        res = skrank.evaluate(qrels=_QRELS, run=_RUN, metrics=["cg@2", "recall@2"],
                              **{param.name: value})
    assert res.qid.tolist() == ["q1", "q2"]
    # cg@2 of q1: d2 (0) then d1 (2); q2: d1 (1), then d4 (unjudged, 0)
    assert res.per_query["cg@2"].tolist() == [2.0, 1.0]


def test_no_name_suggests_itself():
    """Where judged names are not read (a scorer name, the command line's skrank names),
    the error lists them but never answers 'judged@10' with "Did you mean 'judged@10'?"."""
    with pytest.raises(skrank.InvalidParameterError, match="unknown metric name") as info:
        parse_metric_name("judged@10", func="evaluate")
    assert "Did you mean 'judged@10'" not in str(info.value)
    assert "judged@<k>" in str(info.value)
