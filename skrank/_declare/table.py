"""The one metric table: a declaration per metric (:class:`MetricSpec`), :data:`TABLE`;
:data:`METRICS` is its view of the metrics with a public function, the others are
trec_eval's own measures (``trec_eval:<name>``).

A declaration names the metric's kernel (:mod:`skrank._engine.measures`), its
options as :class:`~skrank._declare.params.Param` in signature order, its
bounds, its scorer-name variants and trec_eval names, and its public function
by name (the faces define the functions and bind them, :func:`bind_functions`).
The table drives scorer names, ``get_scorer_names()``, ``evaluate``, the command
line, the docs' metric tables and the common tests (docs/developing.md has a
worked example).
"""

import textwrap
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Callable

from .._core.checks import InvalidParameterError
from .._engine.arrays import check_labels
from .._engine.measures import (
    _cg,
    _dcg,
    _err,
    _gauc,
    _hit_rate,
    _map,
    _mrr,
    _ndcg,
    _precision,
    _r_precision,
    _rbp,
    _recall,
)
from .._engine.xp import value_range
from .._trec.judged import bpref_kernel, infap_kernel, judged_at_k_kernel, judged_columns
from .._trec.measures import TREC_MEASURES, trec_columns
from .._trec import diversity as D
from .._engine import beyond as B
from . import params as P
from .equivalents import insert_notes


#: The extra inputs a scorer is given besides ``y_true``, ``y_score`` and ``qid``: a 2-D
#: ``y`` (rows x subtopics) is the label matrix of the diversity metrics, which
#: scikit-learn passes through to the scorer as it is.
SCORER_INPUTS = ("subtopics",)


#: trec_eval's kernels rank one order of the tied documents: no tie average.
JUDGED_TIES = P.TIES.replace(
    default="pessimistic", supported=("pessimistic", "optimistic", "stable"),
    unsupported="the judged metrics rank one order of tied documents (trec_eval's kernels) "
                "and have no average over their orderings.",
    description="Order of documents with equal scores: least relevant first, most\n"
                "relevant first, or input order.  (trec_eval orders them by docno.)",
    valid=("pessimistic", "optimistic", "stable"), invalid=("average", "bogus", None))


RETRIEVED = P.RETRIEVED.replace(
    description="False marks a judged document the system did not retrieve: it counts\n"
                "in R and N but takes no rank.  None means every row was retrieved.")


#: The array arguments of their public functions around the options.
BEFORE_OPTIONS = (P.QID, P.JUDGED)


AFTER_OPTIONS = (RETRIEVED, P.SAMPLE_WEIGHT)


#: What ``y_true`` means to them (their declarations' ``label_note``).
LABEL_NOTE = ("A negative label marks a document in the pool but not judged\n"
              "(trec_eval's -1).")


_RETURNS = """score : float
    Mean over queries of the per-query values (weighted by ``sample_weight``).  Use
    :func:`skrank.per_query_scores` for the per-query values and their
    query ids."""


_NEGATIVE = "A negative label is a non-relevant document of gain 0 (trec_eval's -1)."


_LABEL_NOTES = {"any": _NEGATIVE, "nonnegative": _NEGATIVE,
                "graded": "Labels must be at most ``max_grade``. " + _NEGATIVE}


#: The public functions by name.  They are the faces' (this module's functions, once the
#: table has its own module) and bind to their declarations when skrank is imported, so
#: that the declarations never import the functions that call the plan.
_FUNCTIONS = {}


def bind_functions(specs, functions):
    """Bind each declaration to its public function (found by ``function_name`` in the
    mapping ``functions``) and fill the function's generated docstring."""
    for spec in specs:
        _FUNCTIONS[spec.function_name] = functions[spec.function_name]
        spec.fill_docstring()


class Declared:
    """What a metric's declaration derives from its ``params``: defaults, checks, the
    public function's signature and its generated docstring.  Shared by
    :class:`MetricSpec` (the table :data:`METRICS`).

    A subclass has ``name``, ``function_name``, ``params``, ``before_options`` and
    ``after_options`` (the array arguments around the options) and ``y_true_note``.
    """

    @property
    def function(self):
        """The public function of the metric (bound by :func:`bind_functions`)."""
        return _FUNCTIONS[self.function_name]

    @cached_property
    def parameters(self):
        """Metric options (everything after ``y_true, y_score`` but the arrays) and their
        defaults (:data:`skrank._declare.params.REQUIRED` for a required one)."""
        return {p.name: p.default for p in self.params}

    def param(self, name):
        """The declaration of one of the metric's options."""
        return next(p for p in self.params if p.name == name)

    @property
    def k(self):
        """``"optional"``, ``"required"`` or ``"none"``: whether the metric takes a cutoff."""
        if "k" not in self.parameters:
            return "none"
        return "required" if self.param("k").required else "optional"

    @property
    def ties(self):
        """Supported tie policies; ``"average"`` only where an exact closed form exists."""
        return self.param("ties").choices

    @property
    def takes_no_relevant(self):
        return "no_relevant" in self.parameters

    def signature_params(self):
        """Every argument of the public function, in signature order."""
        return (*self.positional, *self.before_options, *self.params, *self.after_options)

    def parameters_doc(self):
        """The numpydoc Parameters entries of the public function."""
        entries = []
        for param in self.signature_params():
            if param is P.Y_TRUE and self.y_true_note:
                param = param.note(self.y_true_note)
            entries.append(param.doc())
        return "\n\n".join(entries)

    def fill_docstring(self):
        """Put the generated Parameters and Returns sections into the function's docstring
        (placeholders ``{parameters}`` and ``{returns}``; ``{{``/``}}`` are literal braces),
        and the metric's equivalents in other tools as Notes."""
        doc = self.function.__doc__
        if "{parameters}" not in doc:   # filled already (a module imported again)
            return
        fields = {"parameters": textwrap.indent(self.parameters_doc(), "    ").lstrip(),
                  "returns": textwrap.indent(_RETURNS, "    ").lstrip()}
        # The "Equivalents in other tools" notes: skrank._declare.equivalents.
        self.function.__doc__ = insert_notes(doc.format(**fields), self.name)

    def check_params(self, func, params):
        """Validate options; return them complete (defaults filled in)."""
        known = self.parameters
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise InvalidParameterError(
                f"{func}: {self.name} got unexpected option(s) {', '.join(map(repr, unknown))}. "
                f"Valid options: {', '.join(known)}."
            )
        return {p.name: p.validate(func, params.get(p.name, p.default)) for p in self.params}


@dataclass(frozen=True)
class MetricSpec(Declared):
    """Declaration of one metric; the single source for everything that lists metrics.

    Attributes
    ----------
    name : str
        Canonical name (the scorer-name stem), e.g. ``"ndcg"``.
    function_name : str
        The public function's name; the function itself (``spec.function``) is
        the faces' and bound by :func:`bind_functions`:
        ``function(y_true, y_score, *, qid=None, <params>,
        retrieved=None, exclude=None, sample_weight=None)`` (a test checks its
        signature against ``params``); its docstring's Parameters section is
        generated from the declarations.
    kernel : callable
        ``kernel(ranking, *, func, **params) -> (values, undefined)``.
    summary : str
        One line for docs and ``--help``.
    params : tuple of :class:`~skrank._declare.params.Param`
        The metric's options, in signature order; a variation of an option
        (other choices, default or a note) is a ``Param.replace`` / ``Param.note``
        of its declaration in :mod:`skrank._declare.params`.
    bounds : (float, float) or None
        Range of the per-query values, or None when unbounded.
    perfect : float or None
        Value of a perfect ranking (documents by decreasing label) of a query
        with a relevant document, with the options ``perfect_with``; None when
        it depends on the query.
    perfect_with : mapping
        Options under which ``perfect`` holds at any cutoff.
    aggregate : {"mean", "collection"}
        How per-query values make the score: their (weighted) mean, or one value of
        the whole collection that the executor computes (catalog coverage, Gini
        index: the per-query values are NaN, the score is that value).
    variants : mapping
        Scorer-name stems and the parameters they fix, e.g.
        ``{"ndcg": {}, "ndcg_exp": {"gain": "exponential"}}``.
    aliases : mapping
        Other stems accepted for a variant (``{"P": "precision"}``).
    name_defaults : mapping
        Options that a scorer name supplies when the caller does not (ERR's
        ``max_grade=4``, gdeval's scale); unlike ``variants`` they may be overridden.
    trec_names : mapping
        trec_eval measure names that mean this metric, with the parameters they fix.
    trec_cut : tuple of str
        Those of ``trec_names`` that only exist with a cutoff (``ndcg_cut.10``).
    labels : {"any", "nonnegative", "graded"}
        What labels must be: any finite, >= 0, or in ``[0, max_grade]``.
    reads_to_first_relevant : bool
        Without a cutoff, the metric reads each ranking only down to its first
        relevant document (ranks below it cannot change its value), so longer
        rankings are not sorted further.
    inputs : tuple of str
        Arrays the metric reads besides ``y_true``, ``y_score`` and the query ids
        (``("judged",)`` for bpref, infAP and judged@k): only a caller that can be
        given them takes the metric's names (``evaluate``, ``per_query_scores``),
        so such a metric has no scorer name (a scorer cannot be given them).
    executor : callable or None
        How the metric's values are computed when its kernel does not read the
        plan's shared ranking: ``executor(func, calls, prepared) -> (qids,
        [values of each call])`` for the calls of the metrics that declare it
        (their ``kernel`` reads the ranking it builds).  None: ``kernel`` runs on
        the plan's ranking of the call's tie policy.
    before_options, after_options : tuple of :class:`~skrank._declare.params.Param`
        The array arguments of the public function before and after the options.
    label_note : str or None
        What the docstring says of ``y_true``; None: what ``labels`` implies.
    family : {"relevance", "judged", "diversity", "beyond", "trec_eval"}
        The kind of metric: what its labels are (one per row; a label matrix rows x
        subtopics; none, recommendation lists; trec_eval's ranking of relevance codes)
        and which guide documents it.
    module : str or None
        The public module whose function it is (``skrank``, ``skrank.diversity``,
        ``skrank.beyond``); None for trec_eval's own measures, which have none.
    positional : tuple of :class:`~skrank._declare.params.Param`
        The public function's positional arguments (``y_true, y_score``, or
        ``recommended`` for the beyond-accuracy metrics).
    optional_inputs : tuple of str
        Arrays the metric reads when given (``intent_weights``); they never gate
        its names.
    """

    name: str
    function_name: str
    kernel: Callable
    summary: str
    params: tuple = ()
    bounds: tuple = (0.0, 1.0)
    perfect: float = None
    perfect_with: MappingProxyType = field(default_factory=dict)
    aggregate: str = "mean"
    variants: MappingProxyType = field(default_factory=dict)
    aliases: MappingProxyType = field(default_factory=dict)
    name_defaults: MappingProxyType = field(default_factory=dict)
    trec_names: MappingProxyType = field(default_factory=dict)
    trec_cut: tuple = ()
    labels: str = "any"
    reads_to_first_relevant: bool = False
    inputs: tuple = ()
    executor: Callable = None
    before_options: tuple = P.BEFORE_OPTIONS
    after_options: tuple = P.AFTER_OPTIONS
    label_note: str = None
    family: str = "relevance"
    module: str = "skrank"
    positional: tuple = P.POSITIONAL
    optional_inputs: tuple = ()

    @property
    def y_true_note(self):
        return _LABEL_NOTES[self.labels] if self.label_note is None else self.label_note

    @property
    def scorer(self):
        """Whether the metric has scorer names: not when it reads arrays (``inputs``)
        that a scorer cannot be given (a scorer is given :data:`SCORER_INPUTS`)."""
        return set(self.inputs) <= set(SCORER_INPUTS)

    def check_labels(self, func, y_true, params, extremes=None):
        """Check the labels for this metric.  ``extremes``, a callable giving
        ``(min, max)`` of ``y_true``, lets the metrics of one call share them;
        by default each is computed when needed."""
        if y_true.shape[0] == 0:
            return
        if extremes is None:  # each computed when needed (any namespace)
            def low():
                return value_range(y_true, "min")

            def high():
                return value_range(y_true, "max")
        else:
            def low():
                return extremes()[0]

            def high():
                return extremes()[1]
        gain = params.get("gain", "linear")
        if self.labels == "nonnegative" or gain == "exponential":
            reason = ("for gain='exponential'" if gain == "exponential"
                      else f"for {self.name} (an ideal DCG needs non-negative gains)")
            check_labels(func, y_true, nonnegative=True, reason=reason, low=low())
        if self.labels == "graded":
            top = params["max_grade"]
            lo, hi = low(), high()
            if lo < 0 or hi > top:
                raise ValueError(
                    f"{func}: y_true must lie in [0, max_grade] = [0, {top:g}]. Got labels in "
                    f"[{lo:g}, {hi:g}] instead. Pass the largest grade of your scale as max_grade."
                )


_TIES_EXACT = P.TIES.note("The tie average is exact (McSherry & Najork, 2008).")


#: What bpref, infAP and judged@k declare alike: the extra input ``judged``, the
#: executor that builds their ranking from it, their array arguments and labels.
_JUDGED = dict(inputs=("judged",), executor=judged_columns, family="judged",
               before_options=BEFORE_OPTIONS, after_options=AFTER_OPTIONS,
               label_note=LABEL_NOTE)


# -- issue 29: diversity and intent-aware metrics (TREC Web track, ndeval) ----------------------
# They read a label matrix (rows x subtopics) as ``y_true`` (the input ``subtopics``,
# which a scorer is given as its 2-D ``y``), and optionally ``intent_weights``; their
# executor (skrank._trec.diversity.diversity_columns) ranks once per tie policy and
# runs each declaration's kernel on that ranking.

DIVERSITY_Y_TRUE = P.Y_TRUE.replace(
    type_text="array-like or scipy.sparse matrix of shape (n_samples, n_subtopics)",
    description="Each document's label for each subtopic (intent) of its query, one row\n"
                "per document (a 1-D array is one subtopic).  A document covers a\n"
                "subtopic when its label is ``>= threshold``.")

DIVERSITY_Y_SCORE = P.Y_SCORE.replace(
    type_text="array-like of shape (n_samples,)",
    description="Scores of a ranker, one per row; each query is ranked by decreasing score.")

DIVERSITY_QID = P.QID.replace(
    description="Query id of each row (required).  Rows may come in any order.")

DIVERSITY_TIES = P.TIES.replace(
    default="pessimistic", supported=("pessimistic", "optimistic", "stable"),
    unsupported="diversity metrics have no closed-form average over the orderings of tied "
                "documents.",
    description="Order of documents with equal scores: those covering fewer\n"
                "(pessimistic) or more (optimistic) subtopics first, or input order.",
    valid=("pessimistic", "optimistic", "stable"), invalid=("average", "bogus", None))

DIVERSITY_THRESHOLD = P.THRESHOLD.replace(
    description="A document covers a subtopic when its label for it is ``>= threshold``\n"
                "(pyndeval's ``relevance_level``; judgements are binary).")

DIVERSITY_NO_RELEVANT = P.NO_RELEVANT.replace(
    description="Value of a query where no judged document covers any subtopic: 0\n"
                "(ndeval; its nNRBP is NaN there, ``\"nan\"``), 1, left out of the mean,\n"
                "NaN, or an error.")

DIVERSITY_RETRIEVED = P.RETRIEVED.replace(
    description="False marks judged documents the run did not retrieve: they count in\n"
                "the ideal ranking and the subtopics' sizes, never take a rank.  None:\n"
                "every row was retrieved.")

INTENT_WEIGHTS = P.Param(
    "intent_weights",
    type_text="array-like of shape (n_queries, n_subtopics), mapping or DataFrame",
    description="Probability of each intent (Agrawal et al.'s ``P(j | q)``): an array,\n"
                "rows in the order of the sorted query ids; a mapping ``{qid: weights}``\n"
                "or ``{qid: {subtopic: weight}}`` (a subtopic is its column; with qrels,\n"
                "its id); or a DataFrame with columns ``query_id``, ``subtopic`` and\n"
                "``weight``.  Kept on the subtopics some judged document covers and\n"
                "scaled to sum to 1; a covered subtopic of weight 0 is an error.  None:\n"
                "uniform, as ndeval.")

_DIVERSITY = dict(inputs=("subtopics",), optional_inputs=("intent_weights",),
                  executor=D.diversity_columns, family="diversity", module="skrank.diversity",
                  positional=(DIVERSITY_Y_TRUE, DIVERSITY_Y_SCORE), before_options=(DIVERSITY_QID,),
                  after_options=(DIVERSITY_RETRIEVED, INTENT_WEIGHTS))

_COMMON = (DIVERSITY_THRESHOLD, DIVERSITY_TIES, P.IDEAL_TIES, DIVERSITY_NO_RELEVANT)
_SET_BASED = (DIVERSITY_THRESHOLD, DIVERSITY_TIES, DIVERSITY_NO_RELEVANT)   # no ideal ranking


def _diversity(name, function_name, kernel, summary, params, **fields):
    return MetricSpec(name, function_name, kernel, summary, params=params,
                      variants={name: {}}, **{**_DIVERSITY, **fields})


DIVERSITY = (
    _diversity("alpha_ndcg", "alpha_ndcg_score", D.alpha_ndcg_kernel,
               "alpha-nDCG@k (Clarke et al., 2008)", (P.DIVERSITY_K, P.ALPHA, *_COMMON)),
    _diversity("alpha_dcg", "alpha_dcg_score", D.alpha_dcg_kernel,
               "alpha-DCG@k, divided by the ideal ideal as ndeval reports it",
               (P.DIVERSITY_K, P.ALPHA, P.NORMALIZATION, *_COMMON), bounds=None),
    _diversity("err_ia", "err_ia_score", D.err_ia_kernel, "ERR-IA@k as ndeval computes it",
               (P.DIVERSITY_K, P.ALPHA, P.NORMALIZATION, *_COMMON), bounds=None),
    _diversity("nerr_ia", "nerr_ia_score", D.nerr_ia_kernel,
               "nERR-IA@k: ERR-IA of the run over ERR-IA of the ideal ranking",
               (P.DIVERSITY_K, P.ALPHA, *_COMMON)),
    _diversity("nrbp", "nrbp_score", D.nrbp_kernel,
               "novelty- and rank-biased precision (Clarke et al., 2009)",
               (P.ALPHA, P.BETA, *_COMMON)),
    _diversity("nnrbp", "nnrbp_score", D.nnrbp_kernel, "NRBP over NRBP of the ideal ranking",
               (P.ALPHA, P.BETA, *_COMMON)),
    _diversity("p_ia", "p_ia_score", D.p_ia_kernel, "intent-aware precision@k",
               (P.DIVERSITY_K, *_SET_BASED)),
    _diversity("ap_ia", "ap_ia_score", D.ap_ia_kernel, "intent-aware average precision (MAP-IA)",
               _SET_BASED, aliases={"map_ia": "ap_ia"}),
    _diversity("strec", "subtopic_recall_score", D.strec_kernel, "subtopic recall@k (S-recall)",
               (P.DIVERSITY_K, *_SET_BASED),
               aliases={"subtopic_recall": "strec", "s_recall": "strec"}),
)


# -- issue 29: beyond-accuracy metrics of recommendation lists --------------------------------
# They read top-k lists of items (the input ``recommendations``: ``recommended``, or the
# top k of a 2-D score matrix that evaluate() ranks) and the catalog's data they declare
# (``n_items``, ``item_popularity``, ``item_features``, ``history``), never guessed.
# Per-user metrics make their score as the mean over the users where they are defined;
# collection-level ones (aggregate="collection") are one value of the whole collection.

RECOMMENDED = P.Param(
    "recommended", type_text="array-like of int of shape (n_users, n_positions)",
    default=P.REQUIRED,
    description="Each user's list of item indices, best first, ``-1`` padding a shorter\n"
                "list (:func:`skrank.beyond.top_k_items` makes it from a score matrix).")

N_ITEMS = P.Param(
    "n_items", type_text="int", default=P.REQUIRED,
    description="The catalog's size (items of the training data, or of the dataset):\n"
                "every item index is below it; items never recommended count 0 times.")

ITEM_POPULARITY = P.Param(
    "item_popularity", type_text="array-like of shape (n_items,)", default=P.REQUIRED,
    description="Each item's number of training interactions (counts >= 0), indexed\n"
                "by item.")

ITEM_FEATURES = P.Param(
    "item_features",
    type_text="array-like or scipy.sparse matrix of shape (n_items, n_features)",
    description="One feature vector per item, compared by cosine similarity (the items\n"
                "x users matrix of training interactions gives microsoft/recommenders'\n"
                "co-occurrence similarity).  Exactly one of ``item_features`` and\n"
                "``similarity`` is given.")

ITEM_FEATURES_REQUIRED = ITEM_FEATURES.replace(
    default=P.REQUIRED,
    description="One feature vector per item, compared by cosine similarity.")

SIMILARITY = P.Param(
    "similarity", type_text="callable",
    description="``similarity(items_a, items_b)``: one similarity per pair of item index\n"
                "arrays, instead of ``item_features``.")

HISTORY = P.Param(
    "history", type_text="array-like of int of shape (n_users, n_history) or scipy.sparse matrix",
    default=P.REQUIRED,
    description="Each user's training items: a list matrix like ``recommended`` (``-1``\n"
                "padding), or a users x items matrix of interactions.")

RELEVANCE = P.Param(
    "relevance", type_text="array-like of shape (n_users, n_positions)",
    description="The relevance of each recommended item; None: 1 for every item.")

N_USERS = P.Param(
    "n_users", type_text="int",
    description="The number of users, at least the rows of ``recommended``; None: the\n"
                "rows.")

_BEYOND = dict(executor=B.beyond_columns, family="beyond", module="skrank.beyond",
               positional=(RECOMMENDED,), after_options=(), bounds=None, labels="any",
               label_note="")


def _beyond(name, kernel, summary, before, params, *, reads=(), after=(), optional=(),
            **fields):
    return MetricSpec(name, name, kernel, summary, params=(P.LIST_K, *params),
                      variants={name: {}}, inputs=("recommendations", *reads),
                      optional_inputs=optional, before_options=before,
                      **{**_BEYOND, "after_options": after, **fields})


BEYOND = (
    _beyond("catalog_coverage", B.catalog_coverage_kernel,
            "distinct recommended items over the catalog", (N_ITEMS,), (), reads=("n_items",),
            aggregate="collection", bounds=(0.0, 1.0)),
    _beyond("distributional_coverage", B.distributional_coverage_kernel,
            "entropy of the items' share of the recommendations", (), (P.ENTROPY_CONVENTION,),
            aggregate="collection"),
    _beyond("gini_index", B.gini_kernel, "Gini index of the items' exposure (RecBole)",
            (N_ITEMS,), (), reads=("n_items",), aggregate="collection", bounds=(0.0, 1.0)),
    _beyond("user_coverage", B.user_coverage_kernel,
            "users with at least one recommendation", (), (), after=(N_USERS,),
            optional=("n_users",), aggregate="collection", bounds=(0.0, 1.0)),
    _beyond("novelty", B.novelty_kernel, "mean self-information of the recommended items",
            (ITEM_POPULARITY,), (P.N_INTERACTIONS,), reads=("item_popularity",)),
    _beyond("average_popularity", B.popularity_kernel,
            "average recommendation popularity (ARP)", (ITEM_POPULARITY,), (),
            reads=("item_popularity",)),
    _beyond("long_tail_share", B.tail_kernel, "share of each list in the long tail",
            (ITEM_POPULARITY,), (P.TAIL,), reads=("item_popularity",), bounds=(0.0, 1.0)),
    _beyond("intra_list_similarity", B.ils_kernel,
            "mean similarity of the pairs of items of each list", (ITEM_FEATURES,), (),
            after=(SIMILARITY,), optional=("item_features", "similarity")),
    _beyond("intra_list_diversity", B.ild_kernel,
            "1 - intra-list similarity (microsoft/recommenders' diversity)", (ITEM_FEATURES,),
            (), after=(SIMILARITY,), optional=("item_features", "similarity")),
    _beyond("serendipity", B.serendipity_kernel,
            "relevant and unexpected items (microsoft/recommenders)",
            (HISTORY, ITEM_FEATURES_REQUIRED), (), reads=("history", "item_features"),
            after=(RELEVANCE,), optional=("relevance",)),
)
# -- end issue 29 ---------------------------------------------------------------------------


METRICS = MappingProxyType({spec.name: spec for spec in (
    MetricSpec("ndcg", "ndcg_score", _ndcg, "normalized discounted cumulative gain",
               params=(P.K, P.GAIN, P.TIES, P.NO_RELEVANT.note(
                   "A query is undefined when its ideal DCG is 0.")),
               perfect=1.0, variants={"ndcg": {}, "ndcg_exp": {"gain": "exponential"}},
               trec_names={"ndcg": {}, "ndcg_cut": {}}, trec_cut=("ndcg_cut",),
               labels="nonnegative"),
    MetricSpec("dcg", "dcg_score", _dcg, "discounted cumulative gain",
               params=(P.K, P.GAIN, P.LOG_BASE, P.TIES), bounds=None,
               variants={"dcg": {}, "dcg_exp": {"gain": "exponential"}}),
    MetricSpec("cg", "cg_score", _cg, "cumulative gain",
               params=(P.K, P.GAIN, P.TIES), bounds=None,
               variants={"cg": {}, "cg_exp": {"gain": "exponential"}}),
    MetricSpec("map", "map_score", _map, "mean average precision",
               params=(P.K, P.THRESHOLD, P.DENOMINATOR.replace(
                   constraints=(P.Options(("R", "min")),), default="R",
                   description="``D`` above.  Only matters with a cutoff ``k``.",
                   valid=("R", "min"), invalid=("bogus", None, 3, "k")),
                   _TIES_EXACT, P.NO_RELEVANT),
               perfect=1.0, perfect_with={"denominator": "min"},
               variants={"map": {}}, trec_names={"map": {}, "map_cut": {}}, trec_cut=("map_cut",)),
    MetricSpec("mrr", "mrr_score", _mrr, "mean reciprocal rank",
               params=(P.K, P.THRESHOLD, _TIES_EXACT, P.NO_RELEVANT), perfect=1.0,
               variants={"mrr": {}}, trec_names={"recip_rank": {}}, reads_to_first_relevant=True),
    MetricSpec("precision", "precision_at_k_score", _precision, "precision at k",
               params=(P.K_REQUIRED, P.THRESHOLD, P.DENOMINATOR, P.TIES),
               variants={"precision": {}}, aliases={"P": "precision"},
               trec_names={"P": {}}, trec_cut=("P",)),
    MetricSpec("recall", "recall_at_k_score", _recall, "recall at k",
               params=(P.K, P.THRESHOLD, P.TIES, P.NO_RELEVANT),
               variants={"recall": {}}, trec_names={"recall": {}}, trec_cut=("recall",)),
    MetricSpec("hit_rate", "hit_rate_score", _hit_rate, "hit rate (success) at k",
               params=(P.K, P.THRESHOLD, P.TIES, P.NO_RELEVANT), perfect=1.0,
               variants={"hit_rate": {}}, trec_names={"success": {}}, trec_cut=("success",),
               reads_to_first_relevant=True),
    MetricSpec("r_precision", "r_precision_score", _r_precision, "R-precision",
               params=(P.THRESHOLD, P.TIES, P.NO_RELEVANT), perfect=1.0,
               variants={"r_precision": {}}, trec_names={"Rprec": {}}),
    MetricSpec("err", "err_score", _err, "expected reciprocal rank",
               params=(P.K, P.MAX_GRADE, P.TIES.replace(
                   default="pessimistic", supported=("pessimistic", "optimistic", "stable"),
                   unsupported="err has no exact closed-form average over the orderings of "
                               "tied documents.",
                   description="Order of documents with equal scores (see :func:`ndcg_score`).",
                   valid=("pessimistic", "optimistic", "stable"),
                   invalid=("average", "bogus", None))),
               variants={"err": {}}, name_defaults={"max_grade": 4}, labels="graded"),
    MetricSpec("rbp", "rbp_score", _rbp, "rank-biased precision",
               params=(P.K, P.P, P.THRESHOLD.note('Used by ``gain="binary"`` only.'),
                       P.RBP_GAIN, P.TIES),
               variants={"rbp": {}}, trec_names={"rbp": {"p": 0.9, "gain": "trec"}}),
    # -- issue 29: metrics beyond relevance (kernels and functions in their own modules) --
    MetricSpec("gauc", "gauc_score", _gauc, "group AUC (per-query ROC AUC)",
               params=(P.THRESHOLD, P.WEIGHTING, P.TIES.note(
                   'With ``"average"`` a tied (positive, negative) pair counts one half, as in '
                   ":func:`sklearn.metrics.roc_auc_score`."),
                   P.NO_RELEVANT.note("A query is undefined when its ranked documents are all "
                                      "relevant or all non-relevant.")),
               variants={"gauc": {}}),
    # -- end issue 29 ---------------------------------------------------------------------
    # Metrics for incomplete judgements: they read which documents were judged
    # (``inputs``), so they have no scorer names, and their kernels run on trec_eval's
    # ranking of relevance codes that their executor builds (see skrank._trec.judged).
    MetricSpec("bpref", "bpref_score", bpref_kernel, "binary preference",
               params=(P.THRESHOLD, JUDGED_TIES), variants={"bpref": {}},
               trec_names={"bpref": {}}, **_JUDGED),
    MetricSpec("infap", "infap_score", infap_kernel, "inferred average precision",
               params=(P.THRESHOLD, JUDGED_TIES), variants={"infap": {}},
               aliases={"infAP": "infap"}, trec_names={"infAP": {}}, **_JUDGED),
    MetricSpec("judged", "judged_at_k_score", judged_at_k_kernel,
               "share of the top k that was judged",
               params=(P.K_REQUIRED, JUDGED_TIES, P.JUDGED_CONVENTION),
               variants={"judged": {}}, **{**_JUDGED, "after_options": (P.SAMPLE_WEIGHT,)}),
    *DIVERSITY, *BEYOND,   # issue 29
)})


#: The parameters of a measure of trec_eval's own, as ``-m name.params`` gives them.
TREC_EVAL_PARAMS = P.Param(
    "params", (), default=(),
    description="The measure's parameters as trec_eval reads ``-m name.params`` (its\n"
                "``kind``): cutoffs, values or ``name=value`` pairs.")


def _trec_eval_declaration(measure):
    """The declaration of a measure of trec_eval's own (no function: the command line's
    trec_eval mode names it), executed by :func:`skrank._trec.measures.trec_columns` on
    the ranking it is given as the input ``trec_ranking``."""
    return MetricSpec(f"trec_eval:{measure.name}", None, measure.kernel, measure.summary,
                      params=(TREC_EVAL_PARAMS,), bounds=None,
                      aggregate=f"trec_eval:{measure.aggregate}",
                      inputs=("trec_ranking",), executor=trec_columns, family="trec_eval",
                      module=None, positional=(), before_options=(), after_options=())


#: The metric table: every declaration.  :data:`METRICS` (skrank.METRICS) is its view of
#: the metrics with a public function; the others are trec_eval's own measures (the
#: command line's trec_eval mode), keyed ``trec_eval:<name>``.  trec_eval's measures
#: that a declaration of METRICS lists in its ``trec_names`` (map, P, ndcg_cut, bpref,
#: ...) are that declaration: they have no second one.
TABLE = MappingProxyType({**METRICS, **{
    spec.name: spec for spec in map(_trec_eval_declaration, TREC_MEASURES.values())
    if spec.kernel is not None}})


def trec_eval_declaration(measure_name):
    """The declaration of trec_eval's own measure ``measure_name`` (``"gm_map"``)."""
    return TABLE[f"trec_eval:{measure_name}"]
