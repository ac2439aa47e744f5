"""The options of skrank's metrics, each declared once as data.

A :class:`Param` holds an option's constraints, default, documentation and
example values.  From it come the option's check (:meth:`Param.validate`, one
wording and one error type), its numpydoc entry (:meth:`Param.doc`), its
choices for the command line (:attr:`Param.choices`) and the common tests
(``valid`` and ``invalid`` examples, run against every function that takes the
option).  A metric that varies an option (other choices, another default, a
note) says so in its declaration with :meth:`Param.replace` or
:meth:`Param.note`; see ``METRICS`` in :mod:`skrank._metrics`.

The constraint classes follow scikit-learn's ``Interval`` and ``StrOptions``
(and ir_measures' ``ParamInfo``) in spirit; they are skrank's own.
"""

import inspect
from dataclasses import dataclass, field, replace
from numbers import Integral, Real

import numpy as np

from .._core.checks import InvalidParameterError, _describe

#: Default of an option that has none (the caller must pass it).
REQUIRED = inspect.Parameter.empty


# ---------------------------------------------------------------------------
# Constraints: what an option may be.  Each says whether it accepts a value,
# how to convert it, and how to describe itself in an error and in a docstring.


class Constraint:
    def accepts(self, value):
        raise NotImplementedError

    def convert(self, value):
        return value

    def right_type(self, value):
        """Whether ``value`` has the type this constraint wants (maybe out of range)."""
        return self.accepts(value)

    def expected(self, value):
        """Phrase for ``<name> must be <expected>``, given the received value."""
        raise NotImplementedError

    def type_doc(self):
        """Fragment of the numpydoc type line."""
        raise NotImplementedError


@dataclass(frozen=True)
class NoneValue(Constraint):
    """None, with what it means (``"no cutoff"``) for the error message."""

    meaning: str = ""

    def accepts(self, value):
        return value is None

    def expected(self, value):
        return f"None ({self.meaning})" if self.meaning else "None"

    def type_doc(self):
        return "None"


@dataclass(frozen=True)
class Options(Constraint):
    """One of a few strings, in the order they are listed to users."""

    values: tuple

    def accepts(self, value):
        return isinstance(value, str) and value in self.values

    def expected(self, value):
        return "one of " + ", ".join(map(repr, self.values))

    def type_doc(self):
        return "{" + ", ".join(f'"{v}"' for v in self.values) + "}"


@dataclass(frozen=True)
class IsCallable(Constraint):
    """A callable (described in the option's hint, not in the list of choices)."""

    def accepts(self, value):
        return callable(value)

    def expected(self, value):
        return "a callable"

    def type_doc(self):
        return "callable"


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Boolean(Constraint):
    """True or False (Python's or numpy's)."""

    def accepts(self, value):
        return _is_bool(value)

    def convert(self, value):
        return bool(value)

    def expected(self, value):
        return "True or False"

    def type_doc(self):
        return "bool"


@dataclass(frozen=True)
class Interval(Constraint):
    """A finite number of type ``kind`` (:class:`numbers.Integral` or
    :class:`numbers.Real`) between ``low`` and ``high`` (None: unbounded);
    ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"``."""

    kind: type
    low: float = None
    high: float = None
    closed: str = "both"

    def right_type(self, value):
        return not _is_bool(value) and isinstance(value, self.kind)

    def convert(self, value):
        return int(value) if self.kind is Integral else float(value)

    def accepts(self, value):
        if not self.right_type(value):
            return False
        try:  # float(10**400) overflows; ints are finite, but must fit int64 arrays
            value = self.convert(value)
        except OverflowError:
            return False
        if not (abs(value) < 2 ** 63 if self.kind is Integral else np.isfinite(value)):
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low if left else value <= self.low):
            return False
        return self.high is None or (value <= self.high if right else value < self.high)

    def _bound_text(self):
        if self.kind is Integral and self.high is None and self.closed in ("both", "left"):
            return f">= {self.low:g}"
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return f"in {left}{lo}, {hi}{right}"

    def expected(self, value):
        if self.kind is Integral:
            beyond = self.right_type(value) and abs(int(value)) >= 2 ** 63
            return f"an int {self._bound_text()}" + (" and below 2**63" if beyond else "")
        if not self.right_type(value):
            return "a real number"
        return f"a finite number {self._bound_text()}"

    def type_doc(self):
        name = "int" if self.kind is Integral else "float"
        if self.low is None and self.high is None:
            return name
        if self.high is None:
            op = ">=" if self.closed in ("both", "left") else ">"
            return f"{name} {op} {self.low:g}"
        return f"{name} {self._bound_text()}"


# ---------------------------------------------------------------------------
# Param


@dataclass(frozen=True)
class Param:
    """One option: its constraints, default and documentation, declared once.

    Attributes
    ----------
    name : str
    constraints : tuple of Constraint
        The value must satisfy one of them.  Empty: documented only (array
        arguments, checked with the arrays).
    default : object
        :data:`REQUIRED` when the caller must pass it.
    description : str
        The numpydoc description (indented by :meth:`doc`).
    type_text : str or None
        The numpydoc type, when the constraints do not say it (array arguments).
    hint : str
        Appended to the error message: the likely fix, or what else is accepted.
    supported : tuple or None
        Values that the constraints accept but a metric does not (ERR has no
        tie average); None: every accepted value.
    unsupported : str
        Why the others are not supported (for the error message).
    none_is_missing : bool
        None reads as "not given" (the cutoff of a metric that needs one, where
        elsewhere None means no cutoff): the message says the option is required.
    valid, invalid : tuple
        Example values for the common tests: each valid one runs, each
        invalid one raises :class:`~skrank.InvalidParameterError` naming the option.

    Examples
    --------
    >>> from numbers import Real
    >>> from skrank._declare.params import Interval, Param
    >>> alpha = Param("alpha", (Interval(Real, 0, 1, closed="neither"),), default=0.5,
    ...               description="Mixing weight.")
    >>> alpha.validate("f", 0.25)
    0.25
    >>> print(alpha.doc())
    alpha : float in (0, 1), default=0.5
        Mixing weight.
    >>> alpha.validate("f", 1)
    Traceback (most recent call last):
    ...
    skrank.InvalidParameterError: f: alpha must be a finite number in (0, 1). Got 1.0 instead.
    """

    name: str
    constraints: tuple = ()
    default: object = None
    description: str = ""
    type_text: str = None
    hint: str = ""
    supported: tuple = None
    unsupported: str = ""
    none_is_missing: bool = False
    valid: tuple = field(default=(), compare=False)
    invalid: tuple = field(default=(), compare=False)

    @property
    def required(self):
        return self.default is REQUIRED

    @property
    def choices(self):
        """The strings the option takes (for the command line's ``choices=``), in order."""
        if self.supported is not None:
            return tuple(self.supported)
        options = [c.values for c in self.constraints if isinstance(c, Options)]
        return tuple(v for group in options for v in group)

    def replace(self, **changes):
        """The same option with some fields changed (a metric's variation)."""
        return replace(self, **changes)

    def note(self, text):
        """The same option with a metric-specific sentence added to its description."""
        return replace(self, description=f"{self.description}\n{text}")

    def validate(self, func, value):
        """Return the value converted (ints for Integral, floats for Real), or raise
        :class:`~skrank.InvalidParameterError` in skrank's wording."""
        if value is REQUIRED:
            raise InvalidParameterError(f"{func}: {self.name} is required. Got no value for it.")
        for constraint in self.constraints:
            if constraint.accepts(value):
                if self.supported is not None and value not in self.supported:
                    raise InvalidParameterError(
                        f"{func}: {self.name}={value!r} is not supported: {self.unsupported} "
                        f"Use one of {', '.join(map(repr, self.supported))}.")
                return constraint.convert(value)
        shown = [c for c in self.constraints if not isinstance(c, IsCallable)] or self.constraints
        expected = " or ".join(c.expected(value) for c in shown)
        typed = [c for c in shown if not isinstance(c, NoneValue) and c.right_type(value)]
        try:
            got = repr(typed[0].convert(value)) if typed else _describe(value)
        except OverflowError:  # an int beyond float's range, e.g. threshold=10**400
            digits = str(value)
            got = f"{digits[:12]}... ({len(digits.lstrip('-'))} digits)"
        if value is None and self.none_is_missing:
            message, got = f"{self.name} is required and must be {expected}.", "None"
        else:
            message = f"{self.name} must be {expected}."
        hint = f" {self.hint}" if self.hint else ""
        raise InvalidParameterError(f"{func}: {message} Got {got} instead.{hint}")

    def type_doc(self):
        if self.type_text is not None:
            return self.type_text
        parts = [c.type_doc() for c in self.constraints
                 if not isinstance(c, NoneValue)]
        if any(isinstance(c, NoneValue) for c in self.constraints):
            parts.append("None")
        if self.supported is not None:
            parts = ["{" + ", ".join(f'"{v}"' for v in self.supported) + "}"]
        return " or ".join(parts)

    def doc(self):
        """The option's numpydoc entry (name, type, default, indented description)."""
        head = f"{self.name} : {self.type_doc()}"
        if not self.required:
            default = f'"{self.default}"' if isinstance(self.default, str) else repr(self.default)
            head += f", default={default}"
        body = "\n".join(f"    {line}" if line else "" for line in self.description.splitlines())
        return f"{head}\n{body}"


# ---------------------------------------------------------------------------
# The declarations.  Order of the sections below: the array arguments, then the
# options as the public functions list them.

TIE_POLICIES = ("average", "stable", "pessimistic", "optimistic")
NO_RELEVANT_POLICIES = ("zero", "one", "skip", "nan", "raise")
GAINS = ("linear", "exponential")

Y_TRUE = Param(
    "y_true", type_text="array-like of shape (n_samples,) or (n_queries, n_documents)",
    default=REQUIRED,
    description="Relevance labels.  1-D with ``qid``, or 2-D with one query per row\n"
                "(as :func:`sklearn.metrics.ndcg_score` takes them).")

Y_SCORE = Param(
    "y_score", type_text="array-like of the same shape as ``y_true``", default=REQUIRED,
    description="Scores of a ranker; each query is ranked by decreasing score.")

QID = Param(
    "qid", type_text="array-like of shape (n_samples,)",
    description="Query id of each row, required with 1-D input.  Queries may have any\n"
                "sizes, rows may come in any order, ids may be of any hashable type.")

K = Param(
    "k", (NoneValue("no cutoff"), Interval(Integral, 1)),
    description="Only the top ``k`` ranks count.  None means no cutoff.",
    valid=(None, 1, 3, np.int64(2)), invalid=(0, -1, 1.5, 2.0, True, "3"))

#: The cutoff of a metric that needs one (precision).
K_REQUIRED = K.replace(constraints=(Interval(Integral, 1),), default=REQUIRED,
                       none_is_missing=True,
                       description="The cutoff (required).", valid=(1, 3),
                       invalid=(0, None, 1.5, True))

GAIN = Param(
    "gain", (Options(GAINS), IsCallable()), default="linear",
    description='Gain of a label: ``"linear"`` is ``rel`` (scikit-learn, trec_eval),\n'
                '``"exponential"`` is ``2**rel - 1`` (LightGBM, XGBoost, Burges et al.),\n'
                "a callable maps an array of labels to an array of gains.",
    hint="A callable mapping an array of labels to an array of gains is accepted too.",
    valid=("linear", "exponential", np.sqrt), invalid=("bogus", None, 3, "Linear"))

#: RBP's gains (a document's value, not a transformation of its label).
RBP_GAIN = Param(
    "gain", (Options(("binary", "linear", "trec")),), default="binary",
    description='Gain of a document: ``"binary"`` is 1 for a relevant document (label\n'
                '``>= threshold``) and 0 otherwise (Moffat & Zobel; ir_measures);\n'
                '``"linear"`` is the label itself (ranx\'s graded RBP); ``"trec"`` is\n'
                "the label divided by the query's highest label when that exceeds 1\n"
                "(trec_eval 10's ``rbp``; with ``p=0.9`` it reproduces trec_eval).",
    valid=("binary", "linear", "trec"), invalid=("exponential", None, 3, np.sqrt))

LOG_BASE = Param(
    "log_base", (Interval(Real, 1, None, closed="neither"),), default=2,
    description="Base ``b`` of the logarithm in the discount.",
    valid=(2, 10, 1.5, np.e), invalid=(1, 0.5, -2, np.nan, np.inf, "2", None, True))

P = Param(
    "p", (Interval(Real, 0, 1, closed="neither"),), default=0.8,
    description="Persistence.  trec_eval's ``rbp`` uses 0.9.",
    valid=(0.5, 0.9, np.float32(0.5)), invalid=(0, 1, 1.5, -0.2, np.nan, "0.5", None, True))

THRESHOLD = Param(
    "threshold", (Interval(Real, 0, None, closed="neither"),), default=1,
    description="A document is relevant when its label is ``>= threshold``\n"
                "(trec_eval's ``-l``); positive, so that a label of 0 (or a negative\n"
                "one) is never relevant.",
    valid=(1, 2, 0.5, np.int64(1)),
    invalid=(0, -1, np.nan, np.inf, -np.inf, "1", None, True, [1]))

DENOMINATOR = Param(
    "denominator", (Options(("k", "min")),), default="k",
    description='``"k"`` divides by ``k`` (trec_eval, ranx); ``"min"`` by\n'
                "``min(k, number of retrieved documents)`` (XGBoost).",
    valid=("k", "min"), invalid=("bogus", None, 3, "R"))

MAX_GRADE = Param(
    "max_grade", (Interval(Real, 0, None, closed="neither"),), default=REQUIRED,
    description="The top grade of the label scale (required: gdeval hard-codes 4).",
    valid=(4, 4.5, 10), invalid=(0, -1, np.nan, np.inf, "4", None, True))

TIES = Param(
    "ties", (Options(TIE_POLICIES),), default="average",
    description='Order of documents with equal scores.  ``"average"`` gives the exact\n'
                "expected value over all orderings of tied documents (scikit-learn's\n"
                'default for DCG); ``"stable"`` keeps their input order (LightGBM,\n'
                'XGBoost); ``"pessimistic"``/``"optimistic"`` put the least/most\n'
                "relevant first.",
    valid=TIE_POLICIES, invalid=("bogus", None, 3, "trec", "Average"))

NO_RELEVANT = Param(
    "no_relevant", (Options(NO_RELEVANT_POLICIES),), default="zero",
    description="Value of a query without any relevant document, where the metric is\n"
                "undefined: 0 (trec_eval, scikit-learn), 1 (LightGBM, XGBoost), left out\n"
                "of the mean, NaN, or an error.",
    valid=("zero", "one", "skip", "nan"), invalid=("bogus", None, 3, 0))

RETRIEVED = Param(
    "retrieved", type_text="array-like of bool of shape (n_samples,)",
    description="False marks a judged document the system did not retrieve: it counts\n"
                "in the number of relevant documents, the ideal DCG and recall, but\n"
                "occupies no rank (its score is ignored and may be NaN).  None means\n"
                "every row was retrieved.")

EXCLUDE = Param(
    "exclude",
    type_text="sparse matrix or array-like of bool of shape (n_queries, n_documents)",
    description="2-D form only: documents that take no rank, e.g. the items a user\n"
                "interacted with in training.  An excluded document is left out\n"
                "entirely, as if its row were dropped from the flat form: it is never\n"
                "ranked and never counts as relevant.  A scipy sparse matrix (its\n"
                "stored nonzero entries are excluded) or a dense boolean mask.  With\n"
                "``exclude`` or a sparse ``y_true`` (a scipy sparse relevance matrix,\n"
                "absent entries meaning 0), ``y_score`` stays a dense score matrix and\n"
                "only each query's leading ranks are sorted: memory beyond the inputs\n"
                "is about ``n_queries * k``, never a dense copy of a sparse matrix.")

SAMPLE_WEIGHT = Param(
    "sample_weight", type_text="array-like of shape (n_samples,) or (n_queries,)",
    description="Query weights: the score is ``sum(w_q * v_q) / sum(w_q)`` over the\n"
                'queries ``q`` (those skipped by ``no_relevant="skip"`` drop out of\n'
                "both sums).  With 1-D input one weight per row, constant within each\n"
                "query (as scikit-learn and LightGBM take it); with 2-D input one per\n"
                "row of the matrices.  Non-negative and finite, with a positive total.\n"
                "None weighs every query equally.")

JUDGED = Param(
    "judged", type_text="array-like of bool of shape (n_samples,)",
    description="False marks a retrieved document without any judgement (its label is\n"
                "ignored; it is not a non-relevant one).  None means every document was\n"
                "judged.")

#: The arguments every metric function takes around its options, in signature order:
#: ``f(y_true, y_score, *, qid=None, <options>, retrieved=None, exclude=None,
#: sample_weight=None)``.
POSITIONAL = (Y_TRUE, Y_SCORE)
BEFORE_OPTIONS = (QID,)
AFTER_OPTIONS = (RETRIEVED, EXCLUDE, SAMPLE_WEIGHT)
ARRAY_ARGUMENTS = frozenset(p.name for p in (*POSITIONAL, *BEFORE_OPTIONS, *AFTER_OPTIONS,
                                               JUDGED))

#: judged@k's two conventions: trec_eval's (1 - unj_k) and ir_measures' Judged@k.
JUDGED_CONVENTION = Param(
    "convention", (Options(("trec_eval", "ir_measures")),), default="trec_eval",
    description='``"trec_eval"``: the judged documents (``judged=True`` and a label\n'
                ">= 0) among the top k, divided by k (``1 - unj_k`` of trec_eval; a\n"
                "ranking shorter than k is filled with unjudged documents; a negative\n"
                'label, trec_eval\'s -1, is in the pool but not judged).  ``"ir_measures"``:\n'
                "ir_measures' ``Judged@k``: every document of the qrels (``judged=True``,\n"
                "any label, -1 included) among the top k, divided by ``min(k, number of\n"
                "ranked documents)``.",
    valid=("trec_eval", "ir_measures"), invalid=("bogus", None, "k"))

#: Every option declared here, by name (a metric may vary one, e.g. RBP's gain).
# -- issue 29 (group AUC): its query weighting ------------------------------------------
WEIGHTING = Param(
    "weighting", (Options(("uniform", "size", "positives")),), default="uniform",
    description='Weight of each query in the mean: ``"uniform"`` (torchmetrics\'\n'
                '``RetrievalAUROC``), ``"size"``, its number of ranked documents\n'
                '(impressions), or ``"positives"``, its relevant ranked documents\n'
                "(clicks), as GAUC is weighted in recommender papers.  Multiplies\n"
                "``sample_weight`` when both are given; :func:`skrank.per_query_scores`\n"
                "reports the unweighted per-query values.",
    valid=("uniform", "size", "positives"), invalid=("bogus", None, 3, "Size"))
# -- end issue 29 --------------------------------------------------------------------------

# -- issue 29: the options of the diversity and beyond-accuracy metrics -----------------------
#: Diversity metrics (TREC Web track, ndeval): their cutoff defaults to ndeval's 20.
DIVERSITY_K = K.replace(
    constraints=(Interval(Integral, 1),), default=20,
    description="The cutoff: the top ``k`` documents of each query count (ndeval's 20).",
    valid=(1, 3, 20), invalid=(0, -1, 1.5, None, True, "3"))

ALPHA = Param(
    "alpha", (Interval(Real, 0, 1, closed="left"),), default=0.5,
    description="The redundancy penalty: a document's gain for a subtopic already\n"
                "covered ``c`` times above it is ``(1 - alpha) ** c``.",
    valid=(0, 0.5, 0.99), invalid=(1, -0.1, np.nan, "0.5", None, True))

BETA = Param(
    "beta", (Interval(Real, 0, 1, closed="left"),), default=0.5,
    description="The persistence: rank ``i`` counts ``beta ** (i - 1)``.",
    valid=(0, 0.5, 0.8), invalid=(1, -0.1, np.nan, "0.5", None, True))

NORMALIZATION = Param(
    "normalization", (Options(("ndeval", "none")),), default="ndeval",
    description='``"ndeval"`` divides by the value of a ranking whose every document\n'
                "covers every subtopic (not at ``k = 1``), as ndeval reports it;\n"
                '``"none"`` gives the raw sum.',
    valid=("ndeval", "none"), invalid=("bogus", None, 3, "ideal"))

IDEAL_TIES = Param(
    "ideal_ties", (Options(("last", "first")),), default="last",
    description="Which document the greedy ideal ranking takes among equally good\n"
                'ones: the last or the first in row order (``"last"`` is ndeval\'s\n'
                "choice when rows are in docno order, as with qrels).",
    valid=("last", "first"), invalid=("bogus", None, 3, "Last"))

#: Beyond-accuracy metrics: options of single metrics.
N_INTERACTIONS = Param(
    "n_interactions", (NoneValue("the sum of item_popularity"),
                       Interval(Real, 0, None, closed="neither")),
    description="The total of the popularity; None: ``sum(item_popularity)``.",
    valid=(None, 10, 12.5), invalid=(0, -1, np.nan, "3", True))

TAIL = Param(
    "tail", (Interval(Real, 0, None, closed="neither"),), default=0.1,
    description="The long tail: with ``tail <= 1``, that share of the items seen in\n"
                "training (the least popular); with ``tail > 1``, the items seen at most\n"
                "``tail`` times.",
    valid=(0.1, 0.5, 3), invalid=(0, -1, np.nan, "0.1", None, True))

ENTROPY_CONVENTION = Param(
    "convention", (Options(("recommenders", "recbole")),), default="recommenders",
    description='``"recommenders"``: ``-sum_i p_i log2 p_i`` with ``p_i`` the share of\n'
                "the recommendations that are item ``i`` (microsoft/recommenders'\n"
                '``distributional_coverage``); ``"recbole"``: the natural-log entropy\n'
                "divided by the number of distinct recommended items (RecBole's\n"
                "``ShannonEntropy``).",
    valid=("recommenders", "recbole"), invalid=("bogus", None, 3))

LIST_K = K.note("Each list's first ``k`` items count (lists are cut there); None: the\n"
                "whole lists.  :func:`skrank.evaluate` makes the lists from the scores'\n"
                "top ``k`` and needs it (``novelty@10``).")
# -- end issue 29 (options) -------------------------------------------------------------------

OPTIONS = {p.name: p for p in (K, GAIN, LOG_BASE, P, THRESHOLD, DENOMINATOR, MAX_GRADE, TIES,
                               NO_RELEVANT, WEIGHTING, JUDGED_CONVENTION,
                               ALPHA, BETA, NORMALIZATION, IDEAL_TIES,   # issue 29
                               N_INTERACTIONS, TAIL)}


# ---------------------------------------------------------------------------
# The options of evaluate() (and skrank.dask.evaluate, the command line's
# ``skrank evaluate``): defaults for every metric, and how qrels meet a run.

METRIC = Param(
    "metric", type_text="str", default=REQUIRED,
    description="A metric name in the scorer grammar: a name from :data:`skrank.METRICS`\n"
                '(``"ndcg"``, ``"map"``, ...), with a cutoff and options when wanted\n'
                '(``"ndcg_exp@10"``, ``"map(denominator=min)@10"``), or ``"bpref"``,\n'
                '``"infap"``, ``"judged@10"``.')


class _Named:
    """A default shown by its name in a docstring (``default=DEFAULT_METRICS``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


METRIC_LIST = Param(
    "metrics", type_text="list of str, or dict of label -> str or (str, dict)",
    default=_Named("DEFAULT_METRICS"),
    description='Metric names in the scorer grammar (``"ndcg_exp@10"``, ``"map"``,\n'
                '``"precision@5"``, ``"map(denominator=min)@10"``; trec_eval names\n'
                'such as ``"ndcg_cut.10"`` are accepted too), or ``(name, params)``\n'
                'pairs, e.g. ``("map", {"k": 10, "denominator": "min"})``.  A name\n'
                "(or a dict key) is its metric's label as written; a pair is labelled\n"
                'by its canonical name, here ``"map(denominator=min)@10"``.')

#: ``"trec"``: trec_eval's order of ties (score descending, then docno descending).
EVALUATE_TIES = TIES.replace(
    constraints=(NoneValue("each metric's default"), Options(("trec", *TIE_POLICIES))),
    default=None,
    description="Tie policy for every metric that does not set its own in a\n"
                "``(name, params)`` pair; None uses each metric's default\n"
                '(``"average"``, or ``"pessimistic"`` for ERR).  With ``qrels`` and\n'
                '``run`` (files, frames, dicts) the default is ``"trec"``: score\n'
                'descending, then docno descending, as trec_eval orders documents\n'
                '(with arrays, ``"trec"`` is an error); ``"stable"`` keeps the run\'s\n'
                'row order there (its lines, its frame\'s rows).',
    valid=(None, "trec", *TIE_POLICIES), invalid=("bogus", 3, "Average"))

EVALUATE_NO_RELEVANT = NO_RELEVANT.replace(
    description="Policy for queries without a relevant document, for the metrics that\n"
                "take it and do not set their own (see :func:`skrank.ndcg_score`).")

EVALUATE_THRESHOLD = THRESHOLD.replace(
    constraints=(NoneValue("each metric's default of 1"),
                 Interval(Real, 0, None, closed="neither")), default=None,
    description="Relevance threshold for every binary metric (trec_eval ``-l``); None\n"
                "keeps each metric's default of 1.  The DCG family keeps graded gains.",
    valid=(None, 1, 2, 0.5), invalid=(0, -1, np.nan, np.inf, "1", True, [1]))

MISSING_QUERIES = Param(
    "missing_queries", (NoneValue("'skip', with a warning"), Options(("skip", "zero", "raise"))),
    default=None,
    description="Queries of ``qrels`` without any row in ``run`` (users or questions\n"
                "the system returned nothing for) are left out of the means\n"
                "(``\"skip\"``, trec_eval's default), count as empty rankings, i.e. 0\n"
                "for every metric (``\"zero\"``, ``trec_eval -c``; a recommender that\n"
                "returns nothing for a user is usually meant to score 0 there), or\n"
                "raise an error (``\"raise\"``).  None (the default) is ``\"skip\"``\n"
                "with a warning giving their count; an explicit choice is silent.",
    valid=(None, "skip", "zero", "raise"), invalid=("bogus", True, "Skip"))

UNJUDGED_QUERIES = Param(
    "unjudged_queries", (NoneValue("'skip', with a warning"), Options(("skip", "raise"))),
    default=None,
    description="Queries of ``run`` absent from ``qrels`` are left out (``\"skip\"``)\n"
                "or raise an error (``\"raise\"``; trec_eval 10 refuses such a run\n"
                "unless ``-c``).  None (the default) is ``\"skip\"`` with a warning\n"
                "giving their count; an explicit choice is silent.",
    valid=(None, "skip", "raise"), invalid=("zero", "bogus"))

IGNORE_IDENTICAL_IDS = Param(
    "ignore_identical_ids", (Boolean(),), default=False,
    description="Drop every run row whose document id equals its query id before\n"
                "evaluating (BEIR's ``ignore_identical_ids``: on corpora where the\n"
                "queries are documents too, a query retrieving itself is not a hit).",
    valid=(False, True, np.bool_(True)), invalid=(0, 1, "yes", None))

#: evaluate()'s options, by name: their checks, docs and the command line's choices.
EVALUATE_OPTIONS = {p.name: p for p in (
    METRIC_LIST, EVALUATE_TIES, EVALUATE_NO_RELEVANT, EVALUATE_THRESHOLD, MISSING_QUERIES,
    UNJUDGED_QUERIES, IGNORE_IDENTICAL_IDS)}

#: The options about matching qrels with a run (meaningless for arrays).
COLLECTION_OPTIONS = (MISSING_QUERIES, UNJUDGED_QUERIES, IGNORE_IDENTICAL_IDS)


def fill_options(doc, params):
    """``doc`` with each line ``{name}`` (indented) replaced by the numpydoc entry of
    the Param of that name in ``params`` (a docstring with literal braces elsewhere)."""
    for param in params:
        doc = doc.replace("{" + param.name + "}", param.doc().replace("\n", "\n    "))
    return doc
