"""Public metric functions, their declarations, and the one metric table.

Adding a metric touches this module: its kernel (usually a few lines over
:mod:`skrank._kernels`), its public function (a real signature, a one-line
body, a docstring whose Parameters come from the declarations) and one
:class:`MetricSpec` entry in :data:`METRICS`; plus its export in
``__init__.py`` and its oracle in ``tests/_reference.py``.  Options are
declared in :mod:`skrank._params`.  The table drives scorer names,
``get_scorer_names()``, ``evaluate``, the command line, the docs' metric table
and the common tests (docs/developing.md has a worked example).
"""

import textwrap
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Callable, NamedTuple

import numpy as np

from . import _kernels as K
from . import _params as P
from ._gauc import _gauc
from ._judged import (AFTER_OPTIONS, BEFORE_OPTIONS, JUDGED_TIES, LABEL_NOTE, bpref_kernel,
                      infap_kernel, judged_at_k_kernel, judged_columns)
from ._array_api import as_float, divide_where, minimum, value_range
from ._validation import (
    InvalidParameterError,
    _describe,
    apply_gain,
    check_labels,
)

# ---------------------------------------------------------------------------
# Kernels: Ranking -> (per-query values, undefined mask or None).


def _gain_fn(func, gain):
    return lambda labels: apply_gain(func, gain, labels)


def _cg(ranking, *, func, k, gain):
    return K.weighted_rank_sum(ranking, ranking.labels, K.ones, k, _gain_fn(func, gain)), None


def _dcg(ranking, *, func, k, gain, log_base):
    return K.weighted_rank_sum(ranking, ranking.labels, K.log_discount(log_base), k,
                               _gain_fn(func, gain)), None


def _ndcg(ranking, *, func, k, gain):
    discount = K.log_discount(2.0)
    dcg = K.weighted_rank_sum(ranking, ranking.labels, discount, k, _gain_fn(func, gain))
    if callable(gain):
        all_gains = apply_gain(func, gain, ranking.all_labels)
        low = value_range(all_gains)[0]
        if low < 0:
            raise InvalidParameterError(
                f"{func}: gain must map every label to a non-negative gain (nDCG is only "
                f"bounded by 1 then). Got a gain of {low:g} instead."
            )
    idcg = K.ideal_dcg(ranking, gain, _gain_fn(func, gain), k, discount)
    undefined = idcg <= 0
    # DCG <= IDCG exactly; the two sums may round apart by an ulp.
    return minimum(divide_where(dcg, idcg, ~undefined), 1.0), undefined


def _relevant(ranking, threshold):
    return ranking.relevant(threshold)


def _is_relevant(threshold):
    return lambda labels: as_float(labels >= threshold)


def _precision(ranking, *, func, k, threshold, denominator):
    hits = K.weighted_rank_sum(ranking, ranking.labels, K.ones, k, _is_relevant(threshold))
    if denominator == "k":
        return hits / float(k), None
    size = as_float(minimum(ranking.n_ranked, k))
    return divide_where(hits, size, size > 0), None


def _per_relevant(ranking, total, threshold):
    n_rel = ranking.n_relevant(threshold)
    undefined = n_rel == 0
    return divide_where(total, n_rel, ~undefined), undefined


def _recall(ranking, *, func, k, threshold):
    hits = K.weighted_rank_sum(ranking, ranking.labels, K.ones, k, _is_relevant(threshold))
    return _per_relevant(ranking, hits, threshold)


def _r_precision(ranking, *, func, threshold):
    n_rel = ranking.n_relevant(threshold)
    hits = K.weighted_rank_sum(ranking, _relevant(ranking, threshold), K.ones, n_rel)
    return _per_relevant(ranking, hits, threshold)


def _hit_rate(ranking, *, func, k, threshold):
    value = K.hit_rate(ranking, threshold, k)
    return value, ranking.n_relevant(threshold) == 0


def _mrr(ranking, *, func, k, threshold):
    value = K.reciprocal_rank(ranking, threshold, k)
    return value, ranking.n_relevant(threshold) == 0


def _map(ranking, *, func, k, threshold, denominator):
    total = K.average_precision_sum(ranking, threshold, k)
    n_rel = ranking.n_relevant(threshold)
    size = n_rel if denominator == "R" or k is None else minimum(n_rel, k)
    undefined = n_rel == 0
    return divide_where(total, size, ~undefined), undefined


def _err(ranking, *, func, k, max_grade):
    return K.expected_reciprocal_rank(ranking, ranking.labels, max_grade, k), None


def _rbp(ranking, *, func, k, p, threshold, gain):
    def weight(positions):
        return (1.0 - p) * p ** positions

    if gain == "binary":
        values = _relevant(ranking, threshold)
    else:
        if value_range(ranking.all_labels)[0] < 0:
            raise ValueError(f"{func}: y_true must be non-negative for gain={gain!r}. Got "
                             f"min(y_true) = {value_range(ranking.all_labels)[0]:g} instead.")
        values = as_float(ranking.labels)
        if gain == "trec" and getattr(ranking, "xp", None) is not None:  # a device ranking
            xp = ranking.xp
            top = xp.take(ranking.max_label_by_query(), ranking.query)
            values = values / xp.astype(xp.where(top > 1.0, top, 1.0), values.dtype)
        elif gain == "trec":
            # trec_eval scales the grades by the query's top judged grade when it exceeds 1.
            top = np.maximum(np.maximum.reduceat(ranking.all_labels, ranking.all_offsets[:-1])
                             if ranking.all_labels.size else np.ones(0), 1.0)
            values = values / top[ranking.query]
    return K.weighted_rank_sum(ranking, values, weight, k), None


# ---------------------------------------------------------------------------
# The declarations.


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
        defaults (:data:`skrank._params.REQUIRED` for a required one)."""
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
        return (*P.POSITIONAL, *self.before_options, *self.params, *self.after_options)

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
        (placeholders ``{parameters}`` and ``{returns}``; ``{{``/``}}`` are literal braces)."""
        doc = self.function.__doc__
        fields = {"parameters": textwrap.indent(self.parameters_doc(), "    ").lstrip(),
                  "returns": textwrap.indent(_RETURNS, "    ").lstrip()}
        self.function.__doc__ = doc.format(**fields)

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
    params : tuple of :class:`~skrank._params.Param`
        The metric's options, in signature order; a variation of an option
        (other choices, default or a note) is a ``Param.replace`` / ``Param.note``
        of its declaration in :mod:`skrank._params`.
    bounds : (float, float) or None
        Range of the per-query values, or None when unbounded.
    perfect : float or None
        Value of a perfect ranking (documents by decreasing label) of a query
        with a relevant document, with the options ``perfect_with``; None when
        it depends on the query.
    perfect_with : mapping
        Options under which ``perfect`` holds at any cutoff.
    aggregate : {"mean"}
        How per-query values make the score.
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
    before_options, after_options : tuple of :class:`~skrank._params.Param`
        The array arguments of the public function before and after the options.
    label_note : str or None
        What the docstring says of ``y_true``; None: what ``labels`` implies.
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

    @property
    def y_true_note(self):
        return _LABEL_NOTES[self.labels] if self.label_note is None else self.label_note

    @property
    def scorer(self):
        """Whether the metric has scorer names: not when it reads arrays (``inputs``)
        that a scorer cannot be given."""
        return not self.inputs

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


class QueryScores(NamedTuple):
    """Per-query values of a metric.

    Attributes
    ----------
    qid : ndarray of shape (n_queries,)
        Query ids (sorted when orderable); 2-D input gets row numbers.
    score : ndarray of shape (n_queries,)
        The metric for each query after the ``no_relevant`` policy
        (queries skipped by ``no_relevant="skip"`` are left out).

    With PyTorch, CuPy or other array-API input, ``score`` is an array of that
    namespace on the input's device, and ``qid`` too when the ids were given as
    one (see ``docs/array_api.md``).
    """

    qid: np.ndarray
    score: np.ndarray


def score(name, arguments):
    """The score of the public function of metric ``name`` called with ``arguments``
    (its locals): the arrays, its declared extra ``inputs``, and its options as
    declared.  Its call is planned and executed (see :mod:`skrank._plan`)."""
    from ._plan import MetricCall, mean

    spec = METRICS[name]
    func = spec.function_name
    options = {key: value for key, value in arguments.items() if key not in P.ARRAY_ARGUMENTS}
    return mean(func, MetricCall.of(spec, options, func=func), arguments["y_true"],
                arguments["y_score"], arguments["qid"], arguments.get("retrieved"),
                arguments.get("exclude"), arguments["sample_weight"],
                inputs={input_name: arguments[input_name] for input_name in spec.inputs})



# ---------------------------------------------------------------------------
# Public functions: real signatures (a test checks each against its declaration);
# the Parameters sections are generated from the declarations in METRICS.


def cg_score(y_true, y_score, *, qid=None, k=None, gain="linear", ties="average",
             retrieved=None, exclude=None, sample_weight=None):
    """Cumulative gain: the sum of the gains of the top ``k`` documents.

    ``CG@k = sum_{{i <= k}} gain(rel_i)``, averaged over queries.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import cg_score
    >>> cg_score([3, 2, 0, 1], [0.1, 0.9, 0.5, 0.3], qid=[1, 1, 1, 1], k=2)
    2.0
    """
    return score("cg", locals())


def dcg_score(y_true, y_score, *, qid=None, k=None, gain="linear", log_base=2,
              ties="average", retrieved=None, exclude=None, sample_weight=None):
    """Discounted cumulative gain.

    ``DCG@k = sum_{{i <= k}} gain(rel_i) / log_b(i + 1)`` with ranks ``i`` from 1,
    averaged over queries.  With 2-D input, ``gain="linear"`` and
    ``ties="average"`` it equals :func:`sklearn.metrics.dcg_score`.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    See Also
    --------
    ndcg_score : DCG divided by the DCG of the ideal ranking.

    Examples
    --------
    >>> from skrank import dcg_score
    >>> y_true = [3, 2, 3, 0, 1, 2]
    >>> y_score = [6, 5, 4, 3, 2, 1]          # already in ranked order
    >>> round(dcg_score(y_true, y_score, qid=[0] * 6), 3)
    6.861
    >>> round(dcg_score(y_true, y_score, qid=[0] * 6, gain="exponential"), 3)
    13.848
    """
    return score("dcg", locals())


def ndcg_score(y_true, y_score, *, qid=None, k=None, gain="linear", ties="average",
               no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Normalized discounted cumulative gain.

    ``nDCG@k = DCG@k / IDCG@k`` where ``IDCG@k`` is the DCG@k of the query's
    own labels sorted in decreasing order of gain (including judged documents
    that were not retrieved, see ``retrieved``): the best DCG@k any ordering
    reaches.  Averaged over queries.  With 2-D
    input and the defaults it equals :func:`sklearn.metrics.ndcg_score`.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import ndcg_score
    >>> y_true = [3, 2, 0, 1, 0, 1]
    >>> y_score = [0.1, 0.9, 0.5, 0.8, 0.3, 0.2]
    >>> qid = ["a", "a", "a", "b", "b", "b"]
    >>> round(ndcg_score(y_true, y_score, qid=qid), 4)
    0.8705
    >>> round(ndcg_score(y_true, y_score, qid=qid, k=1, gain="exponential"), 4)
    0.7143

    The same two queries as rows of 2-D arrays:

    >>> round(ndcg_score([[3, 2, 0], [1, 0, 1]], [[.1, .9, .5], [.8, .3, .2]]), 4)
    0.8705
    """
    return score("ndcg", locals())


def precision_at_k_score(y_true, y_score, *, qid=None, k, threshold=1, denominator="k",
                         ties="average", retrieved=None, exclude=None, sample_weight=None):
    """Precision at k: the fraction of the top ``k`` ranks holding a relevant document.

    ``P@k = #{{relevant in top k}} / k`` (trec_eval ``P_k``), also when a query
    has fewer than ``k`` documents.  Averaged over queries.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import precision_at_k_score
    >>> y_true, y_score = [1, 0, 0], [0.9, 0.5, 0.1]
    >>> precision_at_k_score(y_true, y_score, qid=[0, 0, 0], k=5)
    0.2
    >>> round(precision_at_k_score(y_true, y_score, qid=[0, 0, 0], k=5, denominator="min"), 4)
    0.3333
    """
    return score("precision", locals())


def recall_at_k_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties="average",
                      no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Recall at k: the fraction of a query's relevant documents in the top ``k``.

    ``recall@k = #{{relevant in top k}} / R`` with ``R`` the number of relevant
    documents of the query, retrieved or not (trec_eval ``recall_k``).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import recall_at_k_score
    >>> recall_at_k_score([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.1], qid=[0] * 4, k=2)
    0.3333333333333333
    """
    return score("recall", locals())


def hit_rate_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties="average",
                   no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Hit rate (success) at k: 1 if a relevant document is in the top ``k``, else 0.

    trec_eval's ``success_k``.  With ``ties="average"`` a query whose cutoff
    falls inside a tie group gets the probability of a hit.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import hit_rate_score
    >>> hit_rate_score([0, 1, 0, 0], [0.9, 0.8, 0.7, 0.1], qid=[0] * 4, k=1)
    0.0
    >>> hit_rate_score([0, 1, 0, 0], [0.9, 0.9, 0.7, 0.1], qid=[0] * 4, k=1)
    0.5
    """
    return score("hit_rate", locals())


def r_precision_score(y_true, y_score, *, qid=None, threshold=1, ties="average",
                      no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """R-precision: precision at rank ``R``, the number of relevant documents of the query.

    trec_eval's ``Rprec``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import r_precision_score
    >>> r_precision_score([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], qid=[0] * 4)
    0.5
    """
    return score("r_precision", locals())


def map_score(y_true, y_score, *, qid=None, k=None, threshold=1, denominator="R",
              ties="average", no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Mean average precision.

    ``AP@k = (1 / D) * sum_{{i <= k, rel_i relevant}} P@i`` where ``D = R``,
    the number of relevant documents of the query (trec_eval ``map`` and
    ``map_cut_k``, ranx), or ``min(R, k)`` (LightGBM, XGBoost, Kaggle's MAP@k).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import map_score
    >>> y_true = [1, 0, 1, 1]                 # relevant at ranks 1, 3 and 4
    >>> y_score = [0.9, 0.8, 0.7, 0.6]
    >>> round(map_score(y_true, y_score, qid=[0] * 4), 4)   # (1 + 2/3 + 3/4) / 3
    0.8056
    >>> round(map_score(y_true, y_score, qid=[0] * 4, k=2), 4)   # 1 / 3
    0.3333
    >>> map_score(y_true, y_score, qid=[0] * 4, k=2, denominator="min")   # 1 / 2
    0.5
    """
    return score("map", locals())


def mrr_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties="average",
              no_relevant="zero", retrieved=None, exclude=None, sample_weight=None):
    """Mean reciprocal rank of the first relevant document.

    ``RR@k = 1 / rank`` of the first relevant document, 0 when there is none
    in the top ``k`` (trec_eval ``recip_rank`` without a cutoff).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import mrr_score
    >>> mrr_score([0, 0, 1, 1, 0, 0], [3, 2, 1, 3, 2, 1], qid=[0, 0, 0, 1, 1, 1])   # (1/3 + 1) / 2
    0.6666666666666666
    """
    return score("mrr", locals())


def err_score(y_true, y_score, *, qid=None, k=None, max_grade, ties="pessimistic",
              retrieved=None, exclude=None, sample_weight=None):
    """Expected reciprocal rank (Chapelle et al., 2009).

    ``ERR@k = sum_{{i <= k}} (1 / i) R_i prod_{{j < i}} (1 - R_j)`` with stopping
    probabilities ``R_i = (2**rel_i - 1) / 2**max_grade``.

    ERR has no closed-form average over the orderings of tied documents, so
    ``ties="average"`` is rejected; the default is the deterministic,
    conservative ``"pessimistic"``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import err_score
    >>> round(err_score([3, 2, 0], [0.1, 0.9, 0.5], qid=[0] * 3, k=3, max_grade=4), 5)
    0.30599
    """
    return score("err", locals())


def rbp_score(y_true, y_score, *, qid=None, k=None, p=0.8, threshold=1, gain="binary",
              ties="average", retrieved=None, exclude=None, sample_weight=None):
    """Rank-biased precision (Moffat & Zobel, 2008).

    ``RBP = (1 - p) * sum_{{i <= k}} gain_i * p**(i - 1)``: the expected
    rate of relevance seen by a user who moves on from each rank with
    probability ``p``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import rbp_score
    >>> round(rbp_score([1, 0, 1], [3, 2, 1], qid=[0] * 3, p=0.5), 4)   # 0.5 * (1 + 0.25)
    0.625
    >>> round(rbp_score([2, 0, 4], [3, 2, 1], qid=[0] * 3, p=0.5, gain="trec"), 4)
    0.375
    """
    return score("rbp", locals())


def bpref_score(y_true, y_score, *, qid=None, judged=None, threshold=1, ties="pessimistic",
                retrieved=None, sample_weight=None):
    """Binary preference (Buckley & Voorhees, 2004), as trec_eval's ``bpref``.

    For each relevant document ranked, the share of the first R judged
    non-relevant documents ranked above it is a loss:
    ``bpref = 1/R * sum_r (1 - min(n_r, R) / min(N, R))``, with R the relevant
    documents, N the judged non-relevant ones and ``n_r`` the judged
    non-relevant documents ranked above ``r``.  Unjudged documents are ignored.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import bpref_score
    >>> # relevant, unjudged, non-relevant, relevant: the second relevant loses 1/min(1, 2)
    >>> bpref_score([1, 0, 0, 1], [4, 3, 2, 1], qid=[0] * 4,
    ...             judged=[True, False, True, True])
    0.5
    """
    return score("bpref", locals())


def infap_score(y_true, y_score, *, qid=None, judged=None, threshold=1, ties="pessimistic",
                retrieved=None, sample_weight=None):
    """Inferred average precision (Yilmaz & Aslam, 2006), as trec_eval's ``infAP``.

    Average precision estimated from a sample of judged documents: documents
    outside the pool (``judged=False``) count as non-relevant, those in the
    pool but not judged (negative labels) are assumed relevant in the same
    proportion as the judged ones above them.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import infap_score
    >>> round(infap_score([1, 0, 1], [3, 2, 1], qid=[0] * 3), 4)    # = AP when all judged
    0.8333
    """
    return score("infap", locals())


def judged_at_k_score(y_true, y_score, *, qid=None, judged=None, k, ties="pessimistic",
                      convention="trec_eval", sample_weight=None):
    """Share of the top k documents that were judged.

    By default (``convention="trec_eval"``) ``judged@k = #judged in the top k
    / k``: a ranking shorter than k is filled with unjudged documents, a
    negative label (trec_eval's -1) is not judged, and ``1 - judged@k`` is
    trec_eval's ``unj_k``.  ``convention="ir_measures"`` is ir_measures'
    ``Judged@k``: any document of the qrels (-1 included) counts as judged, and
    the share is of ``min(k, number of ranked documents)`` (on a ranking of 2
    judged documents, judged@5 is 0.4 by default and 1.0 in ir_measures'
    convention).  RAG and dense-retrieval evaluations watch it: a low value
    means the other numbers rest on guesses.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import judged_at_k_score
    >>> judged_at_k_score([1, 0, 0], [3, 2, 1], qid=[0] * 3, k=2,
    ...                   judged=[True, False, True])
    0.5
    >>> judged_at_k_score([1, 0], [2, 1], qid=[0] * 2, k=5)        # 2 judged of 5 places
    0.4
    >>> judged_at_k_score([1, 0], [2, 1], qid=[0] * 2, k=5, convention="ir_measures")
    1.0
    """
    return score("judged", locals())


def gauc_score(y_true, y_score, *, qid=None, threshold=1, weighting="uniform",
               ties="average", no_relevant="zero", retrieved=None, exclude=None,
               sample_weight=None):
    """Group AUC: the ROC AUC of each query's ranking, averaged over queries.

    Per query, ``AUC = #{{(positive, negative): positive scored higher}} / (P * N)``
    with a tied pair counted one half (the Mann-Whitney statistic), where the
    positives are the ranked documents with label ``>= threshold``.  With the
    defaults each query's value equals :func:`sklearn.metrics.roc_auc_score`
    of its rows, and the mean is torchmetrics' ``RetrievalAUROC``; recommender
    papers (GAUC, Zhu et al. 2017) weigh each user by impressions or clicks
    (``weighting``).  Judged documents that were not retrieved have no score and
    take no part.  A query with one class only (no positive or no negative) is
    undefined and follows ``no_relevant``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from skrank import gauc_score
    >>> y_true = [1, 0, 1, 0, 0, 1, 0, 0]
    >>> y_score = [0.9, 0.8, 0.6, 0.5, 0.4, 0.4, 0.2, 0.1]
    >>> qid = [1, 1, 1, 1, 2, 2, 2, 2]
    >>> # query 1: 0.9 beats 0.8 and 0.5, 0.6 beats 0.5 only -> 3/4;
    >>> # query 2: the positive ties one negative and beats two -> (2 + 1/2) / 3
    >>> round(gauc_score(y_true, y_score, qid=qid), 6)   # (3/4 + 5/6) / 2
    0.791667
    >>> round(gauc_score(y_true, y_score, qid=qid, weighting="positives"), 6)   # (2*3/4 + 5/6) / 3
    0.777778
    """
    return score("gauc", locals())


# ---------------------------------------------------------------------------
# The table.  Order here is the order of every list shown to users.


_TIES_EXACT = P.TIES.note("The tie average is exact (McSherry & Najork, 2008).")

#: What bpref, infAP and judged@k declare alike: the extra input ``judged``, the
#: executor that builds their ranking from it, their array arguments and labels.
_JUDGED = dict(inputs=("judged",), executor=judged_columns,
               before_options=BEFORE_OPTIONS, after_options=AFTER_OPTIONS,
               label_note=LABEL_NOTE)

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
    # ranking of relevance codes that their executor builds (see skrank._judged).
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
)})

bind_functions(METRICS.values(), globals())


def per_query_scores(metric, y_true, y_score, *, qid=None, retrieved=None, exclude=None,
                     **params):
    """Per-query values of a metric, with their query ids.

    Parameters
    ----------
    {metric}
    y_true, y_score, qid, retrieved, exclude
        As in the metric's function.
    **params
        The metric's options (``k``, ``gain``, ``ties``, ``no_relevant``, ...);
        ``judged=`` for ``"bpref"``, ``"infap"`` and ``"judged"`` (judged@k).

    Returns
    -------
    result : QueryScores
        Named tuple ``(qid, score)`` of arrays over queries.  Queries skipped by
        ``no_relevant="skip"`` are left out; the mean of ``score`` is the value
        the metric function returns.

    Examples
    --------
    >>> from skrank import per_query_scores
    >>> res = per_query_scores("ndcg", [1, 0, 0, 0], [0.9, 0.1, 0.5, 0.4],
    ...                        qid=["q1", "q1", "q2", "q2"])
    >>> res.qid.tolist(), res.score.tolist()
    (['q1', 'q2'], [1.0, 0.0])
    """
    from ._plan import MetricCall, _parse_item, per_query

    inputs = {name: params.pop(name, None) for name in _INPUTS}
    if not isinstance(metric, str):
        raise InvalidParameterError(
            f"per_query_scores: metric must be one of {', '.join(map(repr, METRICS))}. "
            f"Got {_describe(metric)} instead."
        )
    try:
        # A plain stem is the function's call (ERR's max_grade stays required); any
        # other name is read by the grammar every entry point shares.
        if metric in METRICS:
            spec = METRICS[metric]
        else:
            spec, fixed = _parse_item(metric, "per_query_scores", False, _INPUTS,
                                      cutoff_given=params.get("k") is not None)
            overlap = sorted(set(fixed) & set(params) - {"max_grade"})
            if overlap:
                raise InvalidParameterError(
                    f"per_query_scores: {metric!r} already sets {', '.join(overlap)}; pass the "
                    f"plain metric name ({spec.name!r}) with the options instead.")
            params = {**fixed, **params}
    except InvalidParameterError as exc:
        if not str(exc).startswith("per_query_scores: unknown metric name"):
            raise
        from ._names import NAMES_LISTED, did_you_mean_hint

        raise InvalidParameterError(
            f"per_query_scores: metric must be one of {', '.join(map(repr, METRICS))}. "
            f"Got {_describe(metric)} instead.{did_you_mean_hint(metric, inputs=_INPUTS)} "
            f"Names with a cutoff and options work too, e.g. 'ndcg_exp@10' or "
            f"'map(denominator=min)@10' ({NAMES_LISTED})."
        ) from None
    func = spec.function_name if spec.scorer else "per_query_scores"
    call = MetricCall.of(spec, params, func=func)
    column = per_query(func, call, y_true, y_score, qid, retrieved, exclude,
                       inputs={name: inputs[name] for name in spec.inputs})
    return QueryScores(column.qid, column.values)


per_query_scores.__doc__ = P.fill_options(per_query_scores.__doc__, [P.METRIC])

#: The extra inputs some metrics declare (``judged``): per_query_scores takes them.
_INPUTS = tuple(dict.fromkeys(name for spec in METRICS.values() for name in spec.inputs))
