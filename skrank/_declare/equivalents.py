"""What each metric is called in the other tools, and the skrank options that make the
values equal: one table (:data:`EQUIVALENTS`, keyed by the metric names of
:data:`skrank._declare.table.METRICS`) that the metric functions' docstrings (their
"Equivalents in other tools" notes, hence ``help()`` and the API reference) and the
table of docs/metric_families.md are generated from.

Each entry lists the tests that compare skrank with that tool on that name;
``tests/test_equivalents.py::test_equivalent`` runs every entry that names it, against
the tool itself, so an entry claims no test that does not run it.  An entry with no test
is shown as unchecked.

A name with ``{k}`` holds for every cutoff ``k >= 1``, with ``k=k`` among the options
(the documentation shows ``k=10``).  Unless ``when`` says otherwise the equivalence
holds on scores without ties (each tool orders tied documents its own way; the
``ties`` option reproduces some of them, see docs/metric_families.md) and, for the tools
that read qrels (trec_eval, ir_measures, ranx, gdeval), with every judged document of a
query among its rows (otherwise pass ``retrieved=``, or read the files with
``skrank.evaluate(qrels=..., run=...)``).
"""

import re
import textwrap
from dataclasses import dataclass, field
from types import MappingProxyType

#: The tools, in the order the documentation lists them.
TOOLS = ("trec_eval", "ir_measures", "ranx", "scikit-learn", "torchmetrics", "LightGBM",
         "XGBoost", "recommenders", "RecBole")

#: The test that runs every entry naming it against the tool (tests/test_equivalents.py).
GENERIC = "tests/test_equivalents.py::test_equivalent"

#: The cutoff the documentation shows for a name with ``{k}``.
SHOWN_K = 10

_NO_TIES = "scores without ties"
_TORCH = ("labels 0 or 1; scores > 0 (torchmetrics does not retrieve a document scored "
          "<= 0)")


@dataclass(frozen=True)
class Equivalent:
    """One tool's name for a skrank metric.

    Attributes
    ----------
    tool : str
        One of :data:`TOOLS`.
    name : str
        The tool's name of the measure (``{k}`` for a cutoff), as one passes it to the
        tool: a trec_eval measure (``-m``), an ir_measures or ranx measure string, a
        scikit-learn function, a torchmetrics class with its arguments, a LightGBM or
        XGBoost ``eval_metric``.
    options : mapping
        The skrank options under which the values are equal (``k`` is added for a name
        with ``{k}``).
    when : str
        What the input must be besides scores without ties (empty: nothing more).
    tests : tuple of str
        pytest node ids of the tests that compare the two (empty: not checked).
    """

    tool: str
    name: str
    options: MappingProxyType = field(default_factory=dict)
    when: str = ""
    tests: tuple = (GENERIC,)

    @property
    def cut(self):
        """Whether the name takes a cutoff ``k``."""
        return "{k}" in self.name

    def at(self, k=SHOWN_K):
        """``(name, options)`` with the cutoff ``k`` filled in."""
        if not self.cut:
            return self.name, dict(self.options)
        return self.name.replace("{k}", str(k)), {"k": k, **self.options}


def _e(tool, name, when="", tests=(GENERIC,), **options):
    return Equivalent(tool, name, MappingProxyType(options), when, tuple(tests))


_PYTREC = "tests/test_pytrec_eval.py::test_agrees_with_pytrec_eval"
_SKLEARN_NDCG = "tests/test_metrics.py::test_sklearn_parity"
_XGB_NDCG = "tests/test_peers.py::test_xgboost_ndcg"
_XGB_BINARY = "tests/test_peers.py::test_xgboost_binary_metrics"
_LGBM = "tests/test_peers.py::test_lightgbm_ndcg_and_map"
_JUDGED_PYTREC = "tests/test_judged_metrics.py::test_against_pytrec_eval"
_GBDT = dict(ties="stable", no_relevant="one")   # LightGBM and XGBoost's conventions
_NDEVAL = ("tests/test_diversity.py::test_equals_ndeval_through_ir_measures",)
_NDEVAL_WHEN = ("through pyndeval (ndeval); diversity qrels and a run given to "
                "skrank.evaluate(qrels=..., run=...), which orders tied scores as pyndeval; "
                "also with ties")
_BEYOND = "tests/test_beyond.py::test_{}_metrics_equal_the_oracles"
_ORACLE = ("checked against a formula oracle written from {}'s definition (the library "
           "itself is not installed in the tests)")


def _ndeval(name, **options):
    return _e("ir_measures", name, when=_NDEVAL_WHEN, tests=_NDEVAL, **options)


def _beyond(tool, name, test, when="", **options):
    note = _ORACLE.format("microsoft/recommenders" if tool == "recommenders" else tool)
    return _e(tool, name, when=f"{when}; {note}" if when else note,
              tests=(_BEYOND.format(test),), **options)


EQUIVALENTS = MappingProxyType({
    "ndcg": (
        _e("trec_eval", "ndcg", tests=(GENERIC, _PYTREC)),
        _e("trec_eval", "ndcg_cut.{k}", tests=(GENERIC, _PYTREC)),
        _e("ir_measures", "nDCG"),
        _e("ir_measures", "nDCG@{k}"),
        _e("ir_measures", "nDCG(dcg='exp-log2')@{k}", gain="exponential",
           when="labels 0 to 4 (computed by gdeval, to 5 decimals)"),
        _e("ranx", "ndcg@{k}"),
        _e("ranx", "ndcg_burges@{k}", gain="exponential"),
        _e("scikit-learn", "ndcg_score(k={k})",
           when="2-D input (a query per row) of at least 2 documents; also with ties (both "
                "average over their orders)", tests=(GENERIC, _SKLEARN_NDCG)),
        _e("torchmetrics", "RetrievalNormalizedDCG(top_k={k})"),
        _e("LightGBM", "ndcg@{k}", gain="exponential", **_GBDT,
           when="also with ties (input order)", tests=(GENERIC, _LGBM)),
        _e("XGBoost", "ndcg@{k}", gain="exponential", **_GBDT,
           when="also with ties (input order)", tests=(GENERIC, _XGB_NDCG)),
        _e("XGBoost", "ndcg@{k}-", gain="exponential", ties="stable", no_relevant="zero",
           when="also with ties (input order)", tests=(GENERIC, _XGB_NDCG)),
    ),
    "dcg": (
        _e("ranx", "dcg@{k}"),
        _e("ranx", "dcg_burges@{k}", gain="exponential"),
        _e("scikit-learn", "dcg_score(k={k})",
           when="2-D input (a query per row) of at least 2 documents; also with ties (both "
                "average over their orders)", tests=(GENERIC, _SKLEARN_NDCG)),
    ),
    "cg": (
        _e("ranx", "hits@{k}", when="labels 0 or 1"),
    ),
    "map": (
        _e("trec_eval", "map", tests=(GENERIC, _PYTREC)),
        _e("trec_eval", "map_cut.{k}", tests=(GENERIC, _PYTREC)),
        _e("ir_measures", "AP"),
        _e("ir_measures", "AP@{k}"),
        _e("ranx", "map"),
        _e("ranx", "map@{k}"),
        _e("scikit-learn", "label_ranking_average_precision_score", no_relevant="one",
           when="labels 0 or 1; 2-D input (a query per row)"),
        _e("torchmetrics", "RetrievalMAP()", when=_TORCH),
        _e("LightGBM", "map@{k}", denominator="min", **_GBDT,
           when="also with ties (input order)", tests=(GENERIC, _LGBM)),
        _e("XGBoost", "map@{k}", denominator="min", **_GBDT,
           when="labels 0 or 1; also with ties (input order)", tests=(GENERIC, _XGB_BINARY)),
        _e("XGBoost", "map@{k}-", denominator="min", ties="stable", no_relevant="zero",
           when="labels 0 or 1; also with ties (input order)"),
    ),
    "mrr": (
        _e("trec_eval", "recip_rank", tests=(GENERIC, _PYTREC)),
        _e("ir_measures", "RR"),
        _e("ir_measures", "RR@{k}"),
        _e("ranx", "mrr"),
        _e("ranx", "mrr@{k}"),
        _e("torchmetrics", "RetrievalMRR(top_k={k})", when=_TORCH),
    ),
    "precision": (
        _e("trec_eval", "P.{k}", tests=(GENERIC, _PYTREC)),
        _e("ir_measures", "P@{k}"),
        _e("ranx", "precision@{k}"),
        _e("torchmetrics", "RetrievalPrecision(top_k={k})", when=_TORCH),
        _e("torchmetrics", "RetrievalPrecision(top_k={k}, adaptive_k=True)",
           denominator="min", when=_TORCH),
        _e("XGBoost", "pre@{k}", denominator="min", ties="stable",
           when="labels 0 or 1; also with ties (input order)", tests=(GENERIC, _XGB_BINARY)),
    ),
    "recall": (
        _e("trec_eval", "recall.{k}", tests=(GENERIC, _PYTREC)),
        _e("ir_measures", "R@{k}"),
        _e("ranx", "recall@{k}"),
        _e("torchmetrics", "RetrievalRecall(top_k={k})", when=_TORCH),
    ),
    "hit_rate": (
        _e("trec_eval", "success.{k}", tests=(GENERIC, _PYTREC)),
        _e("ir_measures", "Success@{k}"),
        _e("ranx", "hit_rate@{k}"),
        _e("torchmetrics", "RetrievalHitRate(top_k={k})", when=_TORCH),
    ),
    "r_precision": (
        _e("trec_eval", "Rprec", tests=(GENERIC, _PYTREC)),
        _e("ir_measures", "Rprec"),
        _e("ranx", "r-precision"),
        _e("torchmetrics", "RetrievalRPrecision()", when=_TORCH),
    ),
    "err": (
        _e("ir_measures", "ERR@{k}", max_grade=4,
           when="labels 0 to 4 (computed by gdeval, to 5 decimals)"),
    ),
    "rbp": (
        # trec_eval 10's rbp (pytrec_eval has no rbp): the declaration's trec name.
        _e("trec_eval", "rbp", p=0.9, gain="trec", tests=()),
        _e("ranx", "rbp.8", p=0.8, gain="linear"),
    ),
    "gauc": (
        _e("scikit-learn", "roc_auc_score", no_relevant="skip",
           when="labels 0 or 1; each query's value, averaged over the queries with both "
                "labels; also with ties (both count a tied pair one half)",
           tests=(GENERIC, "tests/test_gauc.py::test_each_query_equals_sklearn_roc_auc_score")),
        _e("torchmetrics", "RetrievalAUROC()", when="labels 0 or 1"),
    ),
    "bpref": (
        _e("trec_eval", "bpref", tests=(GENERIC, _JUDGED_PYTREC)),
        _e("ir_measures", "Bpref"),
        _e("ranx", "bpref", when="every query with a relevant and a judged non-relevant "
                                 "document (ranx's bpref is NaN otherwise)"),
    ),
    "infap": (
        _e("trec_eval", "infAP", tests=(GENERIC, _JUDGED_PYTREC)),
        _e("ir_measures", "infAP"),
    ),
    "judged": (
        _e("ir_measures", "Judged@{k}", convention="ir_measures", tests=(
            GENERIC, "tests/test_sharp_edges_3.py::test_judged_at_k_conventions_against_ir_measures")),
    ),
    # Diversity: ndeval's measures, through ir_measures and pyndeval.
    "alpha_ndcg": (_ndeval("alpha_nDCG@{k}"),),
    "alpha_dcg": (_ndeval("alpha_DCG@{k}"),),
    "err_ia": (_ndeval("ERR_IA@{k}"),),
    "nerr_ia": (_ndeval("nERR_IA@{k}"),),
    "nrbp": (_ndeval("NRBP"),),
    "nnrbp": (_ndeval("nNRBP", no_relevant="nan"),),
    "p_ia": (_ndeval("P_IA@{k}"),),
    "ap_ia": (_ndeval("AP_IA"),),
    "strec": (_ndeval("StRecall@{k}"),),
    # Beyond accuracy: microsoft/recommenders' python_evaluation, RecBole's metrics.
    "catalog_coverage": (
        _beyond("recommenders", "catalog_coverage", "collection",
                when="n_items = the distinct items of the training data"),
        _beyond("RecBole", "ItemCoverage", "collection",
                when="n_items = the items of the dataset"),
    ),
    "distributional_coverage": (
        _beyond("recommenders", "distributional_coverage", "collection"),
        _beyond("RecBole", "ShannonEntropy", "collection", convention="recbole"),
    ),
    "gini_index": (_beyond("RecBole", "GiniIndex", "collection"),),
    "user_coverage": (),
    "novelty": (
        _beyond("recommenders", "novelty", "popularity",
                when="every user's list of the same length (recommenders averages over "
                     "all recommendations)"),
    ),
    "average_popularity": (_beyond("RecBole", "AveragePopularity", "popularity"),),
    "long_tail_share": (_beyond("RecBole", "TailPercentage", "popularity"),),
    "intra_list_similarity": (),
    "intra_list_diversity": (_beyond("recommenders", "diversity", "similarity"),),
    "serendipity": (_beyond("recommenders", "serendipity", "similarity"),),
})


def _show(value):
    return repr(value) if isinstance(value, str) else f"{value:g}"


def options_text(options):
    """``k=10, gain="exponential"`` (reST literals), or "the defaults"."""
    if not options:
        return "the defaults"
    return ", ".join(f"``{name}={_show(value)}``".replace("'", '"')
                     for name, value in options.items())


def _test_files(entry):
    return ", ".join(dict.fromkeys(t.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
                                   for t in entry.tests))


def _rst_table(header, rows):
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    rule = "  ".join("=" * w for w in widths)
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(header), rule, *(line(r) for r in rows), rule])


def notes_section(metric):
    """The "Notes" text of a metric function's docstring: its equivalents as a table (no
    heading; ``""`` for a metric without any)."""
    entries = EQUIVALENTS.get(metric, ())
    if not entries:
        return ""
    rows = []
    for entry in entries:
        name, options = entry.at()
        condition = f"; {entry.when}" if entry.when else ""
        checked = f"checked by {_test_files(entry)}" if entry.tests else "not checked"
        rows.append((entry.tool, f"``{name}``", f"{options_text(options)}{condition}; "
                                                f"{checked}"))
    cutoff = (f" (``{SHOWN_K}`` stands for any cutoff ``k``)"
              if any(entry.cut for entry in entries) else "")
    intro = ("**Equivalents in other tools.**  With scores that do not tie, and every "
             "judged document of a query among its rows, each name below computes the "
             f"values of this function with the options shown{cutoff}; each row names "
             "the tests that compare the two.")
    if any(entry.tool == "torchmetrics" for entry in entries):
        intro += "  torchmetrics computes in float32: its values agree to within 1e-6."
    return textwrap.fill(intro, 84) + "\n\n" + _rst_table(("tool", "name", "skrank options"),
                                                          rows)


def insert_notes(doc, metric):
    """``doc`` (a numpydoc docstring) with the metric's equivalents as its Notes section
    (or at the end of its Notes), before References/Examples; indented as the docstring's
    section headings (4 spaces in the source, none where Python dedents docstrings)."""
    text = notes_section(metric)
    if not text:
        return doc
    found = re.search(r"^([ \t]*)Parameters\n\1----------$", doc, re.M)
    indent = found[1] if found else ""
    body = "\n".join(indent + line if line else "" for line in text.splitlines())
    notes = f"\n{indent}Notes\n{indent}-----\n"
    for heading in ("References", "Examples"):
        marker = f"\n{indent}{heading}\n{indent}{'-' * len(heading)}\n"
        if marker in doc:
            before, after = doc.split(marker, 1)
            head = "" if notes in before else notes
            return f"{before.rstrip()}\n{head or chr(10)}{body}\n{marker}{after}"
    return f"{doc.rstrip()}\n{notes}{body}\n"


def _md_name(entry):
    name, options = entry.at()
    options = {k: v for k, v in options.items() if k != "k"}
    opts = " (" + options_text(options).replace("``", "`") + ")" if options else ""
    marks = (" \\*" if entry.when else "") + ("" if entry.tests else " (not checked)")
    return f"`{name}`{opts}{marks}"


def equivalents_markdown(specs):
    """The table of docs/metric_families.md: per metric (``specs``, the declarations in
    order) and tool, the tool's names and the skrank options they need besides the cutoff;
    ``*`` marks a name with a note on the input (its function's page says which),
    "(not checked)" one that no test compares (``tests/test_equivalents.py`` fails until
    the page holds this text)."""
    rows = ["| function | tool | name (skrank options) |", "|---|---|---|"]
    for spec in specs:
        entries = EQUIVALENTS.get(spec.name, ())
        first = f"`{spec.function_name}`"
        if not entries:
            rows.append(f"| {first} | — | — |")
        for tool in TOOLS:
            names = [_md_name(e) for e in entries if e.tool == tool]
            if names:
                rows.append(f"| {first} | {tool} | {'<br>'.join(names)} |")
                first = ""
    return "\n".join(rows) + "\n"
