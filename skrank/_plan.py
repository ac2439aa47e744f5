"""Metric calls as values, and the one plan-and-execute path.

Every entry point (the metric functions, :func:`skrank.per_query_scores`,
:func:`skrank.evaluate`, the scorers and the command line) goes the same way::

    calls  = [MetricCall.parse("ndcg@10", func=...), ...]    # validated, complete options
    p      = plan(func, calls, ties=..., no_relevant=..., threshold=...)
    arrays = prepare(p, y_true, y_score, qid, ...)           # checked once, labels checked
    table  = execute(p, arrays)                              # one ranking per tie policy

A :class:`MetricCall` is a hashable value (a metric and all its options) with
one canonical string that parses back: ``ndcg@10``, ``ndcg_exp@10``,
``map(denominator=min)@10``, ``ndcg(ties=stable)@10``.
"""

import functools
import numbers
import re
from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional

import numpy as np

from ._engine.xp import namespace, value_range
from ._engine.aggregate import apply_no_relevant, mean_over_queries, query_weights, _like
from ._engine.ranking import Depth, rank_queries
from ._engine.matrix import is_matrix_form, matrix_arrays
from ._declare import params as P
from ._declare.table import TABLE
from ._trec.measures import ALL_ROW
from ._declare.names import parse_metric_name
from ._engine.row_blocks import blockable, execute_by_rows
from ._engine import row_ranks
from ._core.checks import InvalidParameterError, _describe
from ._engine.arrays import check_ranking_arrays


def spec_of(metric):
    """The declaration of a metric by its name in the table."""
    return TABLE[metric]


def _name_defaults(spec):
    """Options a name leaves unwritten: the declaration's defaults and its name defaults
    (ERR's max_grade=4, the grade scale the scorer names fix)."""
    return {**spec.parameters, **spec.name_defaults}


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    try:
        return bool(a == b)
    except Exception:  # e.g. comparing arrays
        return a is b


_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _format_value(value):
    if isinstance(value, str):
        plain = _WORD.match(value) and not _is_number(value)
        return value if plain else f"'{value}'"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = float(value)
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if callable(value):  # no text form: shown, not parsed back
        return f"<{getattr(value, '__name__', type(value).__name__)}>"
    return repr(value)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class MetricCall:
    """A metric with every option set: a hashable value with one canonical name.

    ``str(call)`` is the scorer-name stem when one fixes the options
    (``ndcg_exp@10``), else ``stem(option=value, ...)@k`` listing only the
    options that differ from their defaults, in the declaration's order
    (``map(denominator=min)@10``).  :meth:`parse` reads that string back, and
    every name the grammar takes, to an equal call.  A callable ``gain`` is shown as
    ``<name>`` and has no text form that parses back.
    """

    metric: str
    params: tuple   # ((option, value), ...): complete and validated, in the declaration's order

    @property
    def spec(self):
        return spec_of(self.metric)

    @property
    def options(self):
        """The options as a dict (a new one each time)."""
        return dict(self.params)

    @classmethod
    def of(cls, spec, params, *, func):
        """The call of ``spec`` with ``params`` (validated; defaults filled in)."""
        return cls(spec.name, tuple(spec.check_params(func, params).items()))

    @classmethod
    def parse(cls, item, *, func="skrank", trec=False, inputs=(), defaults=None):
        """A call from a name (``"ndcg_exp@10"``, ``"map(denominator=min)"``) or a pair
        ``(name, params)``.

        ``trec``: also take trec_eval names (``ndcg_cut.10``); ``inputs``: the extra
        arrays the caller can give (``("judged",)``: also bpref, infap and judged@k,
        whose declarations read it); ``defaults``: option values for the options
        the metric takes and the item does not set (None values are ignored).
        """
        if isinstance(item, MetricCall):
            return item
        spec, params = _parse_item(item, func, trec, inputs)
        for option, value in (defaults or {}).items():
            if value is not None and option in spec.parameters:
                params.setdefault(option, value)
        return cls.of(spec, params, func=func)

    def __str__(self):
        spec = self.spec
        options = self.options
        k = options.pop("k", None)
        defaults = _name_defaults(spec)
        differ = {name: value for name, value in options.items()
                  if name not in defaults or not _same(defaults[name], value)}
        stem, fixed = spec.name, {}
        for variant, variant_fixed in spec.variants.items():  # the stem fixing the most
            if len(variant_fixed) > len(fixed) and all(
                    name in differ and _same(differ[name], value)
                    for name, value in variant_fixed.items()):
                stem, fixed = variant, variant_fixed
        rest = [f"{name}={_format_value(value)}" for name, value in differ.items()
                if name not in fixed]
        text = stem + (f"({', '.join(rest)})" if rest else "")
        return text if k is None else f"{text}@{k}"

    def __repr__(self):
        return f"MetricCall({str(self)!r})"


def _parse_item(item, func, trec, inputs=(), cutoff_given=False):
    """``(spec, params)`` of a name or a ``(name, params)`` pair; params is a new dict.
    ``inputs``: the extra arrays the caller can give; ``cutoff_given``: the caller
    passes ``k`` apart from the name."""
    if isinstance(item, str):
        name, extra = item, {}
    elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict):
        name, extra = item
    else:
        raise InvalidParameterError(
            f"{func}: each metric must be a name such as 'ndcg@10' or a pair "
            f"(name, params_dict) such as ('ndcg', {{'k': 10, 'gain': 'exponential'}}). "
            f"Got {_describe(item)} instead.")
    spec, params = parse_metric_name(name, func=func, trec=trec, inputs=inputs,
                                     cutoff_given=cutoff_given or extra.get("k") is not None)
    params.update(extra)
    return spec, params


# ---------------------------------------------------------------------------
# evaluate()'s options, resolved once.


class Options(NamedTuple):
    """evaluate()'s options for every metric of a call, validated and resolved once by
    :func:`resolve_options`: every later step (the join, the plan, the counts, the
    command line's choice of trec_eval's measures, the Dask partitions) reads these
    fields and none decides again."""

    ties: Optional[str]        # as given; a collection's default is "trec"
    policy: Optional[str]      # the metrics' tie policy (None: each metric's own default)
    tie_order: Optional[str]   # a collection's rows among equal scores: "trec" (docno
    #                            descending) or "input" (the run's rows); None for arrays
    no_relevant: str
    threshold: Optional[float]   # None: each metric's default of 1

    @property
    def defaults(self):
        """The option values of every metric that does not set its own."""
        return dict(ties=self.policy, no_relevant=self.no_relevant, threshold=self.threshold)

    @property
    def level(self):
        """The relevance level of the counts (num_rel, num_rel_ret): the threshold, else 1."""
        return 1.0 if self.threshold is None else float(self.threshold)

    @property
    def trec_eval(self):
        """Whether trec_eval's own measures give these options' values: ties in docno
        order (``"trec"``) and 0 for a query without relevant documents."""
        return self.ties == "trec" and self.no_relevant == "zero"

    def trec_eval_level(self, func):
        """trec_eval's ``-l``: an integer relevance level (trec_eval reads it with
        ``atol``).  A threshold that is not an integer is refused rather than
        truncated, so that a threshold means the same for trec_eval's measures and
        skrank's metrics."""
        if self.threshold is None:
            return 1
        if float(self.threshold).is_integer():
            return int(self.threshold)
        raise InvalidParameterError(
            f"{func}: trec_eval measures take an integer relevance level (trec_eval's -l). "
            f"Got {self.threshold:g} instead. Use -l {int(np.floor(self.threshold))} or "
            f"-l {int(np.ceil(self.threshold))}, or skrank metric names (e.g. P@5, map@100), "
            f"which take any threshold.")


def resolve_options(func, *, ties=None, no_relevant="zero", threshold=None, collection):
    """The :class:`Options` of one evaluation: ``ties``, ``no_relevant`` and
    ``threshold`` as :func:`skrank.evaluate` takes them, validated.  ``collection``:
    qrels and a run, whose default tie order is trec_eval's (``"trec"``: the join
    gives the rows in trec_eval's order, which a stable sort keeps; ``"stable"``:
    in the run's row order); arrays have no docno, so ``"trec"`` is an error there."""
    ties, no_relevant, threshold = (P.EVALUATE_OPTIONS[name].validate(func, value)
                                    for name, value in (("ties", ties),
                                                        ("no_relevant", no_relevant),
                                                        ("threshold", threshold)))
    tie_order = None
    if collection:
        ties = "trec" if ties is None else ties
        tie_order = "input" if ties == "stable" else "trec"
    elif ties == "trec":
        raise InvalidParameterError(
            f"{func}: ties='trec' orders ties by docno and needs qrels and run.")
    policy = "stable" if ties == "trec" else ties
    return Options(ties, policy, tie_order, no_relevant, threshold)


# ---------------------------------------------------------------------------
# Planning.


def ranking_depth(spec, params):
    """How far down the rankings the metric reads with these options (a
    :class:`~skrank._engine.ranking.Depth`; None: to the end)."""
    k = params.get("k") if spec.k != "none" else None
    if k is not None:
        return Depth(k=k)
    if spec.reads_to_first_relevant:
        return Depth(first_relevant=(params["threshold"],))
    return None


class _Extremes:
    """``(min, max)`` of ``values`` for the metrics of one call: ``extremes()[0]`` is the
    minimum; each is computed when first read, once (most metrics read only the minimum,
    or nothing)."""

    def __init__(self, values):
        self._values = values
        self._found = {}

    def __call__(self):
        return self

    def __getitem__(self, index):
        which = ("min", "max")[index]
        if which not in self._found:
            self._found[which] = value_range(self._values, which)  # any namespace
        return self._found[which]


#: The families of declarations whose executors read the arrays as given.
_RAW_FAMILIES = ("diversity", "beyond")


class Step(NamedTuple):
    """One metric of a plan: its label (None: not reported), call and ranking."""

    label: object
    call: MetricCall
    policy: Optional[str]   # the tie policy of the ranking it reads; None: its own executor


@dataclass(frozen=True)
class Plan:
    """What one call computes: the metrics (validated), which rankings to build
    (one per tie policy) and how deep each must be.  Build it with :func:`plan`;
    run it with :func:`prepare` and :func:`execute`."""

    func: str
    steps: tuple
    depths: tuple   # ((policy, Depth or None), ...): the rankings to build

    @property
    def labels(self):
        return [step.label for step in self.steps if step.label is not None]

    @property
    def raw(self):
        """Whether the plan's metrics read the arrays as given (a label matrix rows x
        subtopics, or recommendation lists): the diversity and beyond-accuracy
        declarations, whose executors check them."""
        families = {step.call.spec.family for step in self.steps}
        if len(families) > 1 and families & set(_RAW_FAMILIES):
            first = next(s.call.spec.family for s in self.steps
                         if s.call.spec.family in _RAW_FAMILIES)
            raw = [str(s.call) for s in self.steps if s.call.spec.family == first]
            other = [str(s.call) for s in self.steps if s.call.spec.family != first]
            what = {"diversity": "a label matrix (rows x subtopics)",
                    "beyond": "recommendation lists"}[first]
            raise InvalidParameterError(
                f"{self.func}: {', '.join(raw)} read {what} and cannot be computed in one "
                f"call with {', '.join(other)}. Got both instead: evaluate them in separate "
                f"calls.")
        return bool(families) and families <= set(_RAW_FAMILIES)

    @property
    def depth(self):
        """The depth that serves every ranking of the plan (None: to the end)."""
        if not self.depths:   # metrics with their own executor only: they rank everything
            return None
        return functools.reduce(Depth.union, (d for _, d in self.depths))

    def check_labels(self, y_true, extremes=None):
        """Check ``y_true`` for every metric of the plan (min and max computed once)."""
        if extremes is None and len(self.steps) > 1:
            extremes = _Extremes(y_true)
        # (one metric computes only the extreme it needs)
        for step in self.steps:
            if step.policy is not None:
                step.call.spec.check_labels(self.func, y_true, step.call.options, extremes)


def plan(func, calls, *, ranking_for_counts=False):
    """The :class:`Plan` of ``calls``, a list of ``(label, MetricCall)``.

    Each tie policy gets one ranking, deep enough for all its metrics; with
    ``ranking_for_counts`` a ranking is built even when only metrics with their own
    executor (which rank on their own) are asked for.
    """
    steps, depths = [], {}
    for label, call in calls:
        spec = call.spec
        if spec.executor is None:
            options = call.options
            policy = options["ties"]   # every declaration has one
            depth = ranking_depth(spec, options)
            depths[policy] = Depth.union(depths[policy], depth) if policy in depths else depth
            steps.append(Step(label, call, policy))
        else:
            steps.append(Step(label, call, None))
    raw = bool(steps) and all(step.call.spec.family in _RAW_FAMILIES for step in steps)
    if ranking_for_counts and not depths and not raw:
        depths["stable"] = None
    return Plan(func, tuple(steps), tuple(depths.items()))


def single(func, call):
    """The plan of one metric call (what a metric function or a scorer runs)."""
    try:
        return _single(func, call)
    except TypeError:   # an unhashable callable gain
        return plan(func, [("value", call)])


@functools.lru_cache(maxsize=256)
def _single(func, call):
    # Calls are values: the metric functions plan each distinct call once.
    return plan(func, [("value", call)])


def resolve(func, metrics, *, trec=False, inputs=(), defaults=None):
    """``metrics`` (a name, a list of names or pairs, or a dict of label -> name or
    pair) -> list of ``(label, MetricCall)``.  A name keeps its spelling as its label;
    a pair is labelled by its call's canonical name (without ``defaults``).
    ``inputs``: the extra arrays the caller gives (see :meth:`MetricCall.parse`)."""
    if isinstance(metrics, (str, MetricCall)):
        metrics = [metrics]
    try:
        items = (list(metrics.items()) if isinstance(metrics, dict)
                 else [(None, m) for m in metrics])
    except TypeError:
        raise InvalidParameterError(
            f"{func}: metrics must be a metric name, a list of names or (name, params) pairs, "
            f"or a dict of label -> name or pair. Got {_describe(metrics)} instead.") from None
    out, seen = [], set()
    for label, item in items:
        call = MetricCall.parse(item, func=func, trec=trec, inputs=inputs, defaults=defaults)
        if label is None:
            if isinstance(item, str):
                label = item
            elif isinstance(item, MetricCall) or not defaults:
                label = str(call)
            else:
                label = str(MetricCall.parse(item, func=func, trec=trec, inputs=inputs))
        if label in seen:
            raise InvalidParameterError(f"{func}: metric {label!r} is listed twice.")
        seen.add(label)
        out.append((label, call))
    if not out:
        raise InvalidParameterError(f"{func}: metrics must name at least one metric. Got none.")
    return out


# ---------------------------------------------------------------------------
# Executing.


class Prepared(NamedTuple):
    """Checked arrays of one call, ready for :func:`execute`."""

    arrays: tuple          # (y_true, y_score, qid, shape, retrieved) as checked
    gain_arrays: tuple     # the same with labels as the metrics read them
    weights: Optional[np.ndarray]
    n_ranked: Optional[np.ndarray]   # 2-D sparse/exclude form: items ranked per row
    inputs: dict           # the extra arrays metrics declare (``judged``), as given


def weights_of_queries(func, sample_weight, qid, shape, n_users=None):
    """Per-query weights (in the ranking's query order) from checked arrays, or None.
    ``shape`` is the dense 2-D form's, ``n_users`` the sparse/exclude 2-D form's rows."""
    if sample_weight is None:
        return None
    if shape is not None or n_users is not None:
        return query_weights(func, sample_weight, n_queries=n_users or shape[0])
    return query_weights(func, sample_weight, qid=qid)


def prepare(p, y_true, y_score, qid=None, retrieved=None, exclude=None, sample_weight=None, *,
            inputs=None, negative_is_unjudged=False, check_labels=True):
    """Check the arrays once for every metric of the plan.

    ``inputs``: the extra arrays that metrics declare, by name (``{"judged": mask}``),
    checked by the executor of the metrics that read them.
    Labels follow one rule for every metric of the table, in arrays as in qrels: a
    negative label (trec_eval's -1, "in the pool, not judged") is a non-relevant
    document of gain 0 (the judged metrics read the labels as given, -1 as unjudged).
    ``negative_is_unjudged`` is kept for the callers that name the rule.
    """
    func = p.func
    if p.raw:   # diversity and beyond-accuracy metrics: their executors check the arrays
        inputs = {**(inputs or {}), "exclude": exclude}
        return Prepared((y_true, y_score, qid, None, retrieved), None,
                        _raw_weights(func, sample_weight, y_score, qid), None, inputs)
    n_users = n_ranked = None
    if is_matrix_form(y_true, exclude):
        n_users = np.shape(y_score)[0]
        # One reduction of the matrices, deep enough for every metric of the plan.
        y_true, y_score, qid, retrieved, n_ranked = matrix_arrays(
            func, y_true, y_score, qid, retrieved, exclude, p.depth)
    arrays = check_ranking_arrays(func, y_true, y_score, qid, retrieved)
    gain_arrays = arrays
    labels = arrays[0]
    if labels.shape[0] and value_range(labels, "min") < 0:  # the rule above
        if isinstance(labels, np.ndarray):
            gain_arrays = (np.maximum(labels, 0.0), *arrays[1:])
        else:
            xp = namespace(labels)
            gain_arrays = (xp.where(labels < 0, xp.zeros_like(labels), labels), *arrays[1:])
    if check_labels:
        p.check_labels(gain_arrays[0])
    weights = weights_of_queries(func, sample_weight, arrays[2], arrays[3], n_users)
    return Prepared(arrays, gain_arrays, weights, n_ranked, dict(inputs or {}))


def _raw_weights(func, sample_weight, y_score, qid):
    """Query weights of arrays as given (sorted query ids; the rows of a 2-D form)."""
    if sample_weight is None:
        return None
    if qid is None:
        return query_weights(func, sample_weight, n_queries=np.shape(y_score)[0])
    return query_weights(func, sample_weight, qid=np.asarray(qid))


def run_kernel(spec, func, ranking, params, weights=None):
    """Per-query values of one metric on a ranking, after the no_relevant policy:
    ``(qids, values, weights)`` (``weights``, the query weights, filtered alike)."""
    if ranking.depth is not None:
        needed = ranking_depth(spec, params)
        if not ranking.depth.covers(needed):
            raise RuntimeError(f"{func}: internal error: {spec.name} reads {needed} of a "
                               f"ranking held to {ranking.depth}.")
    kernel_params = {k: v for k, v in params.items() if k not in ("ties", "no_relevant")}
    values, undefined, *extra = spec.kernel(ranking, func=func, **kernel_params)
    if extra:   # a kernel may weigh its queries (gauc's weighting): times sample_weight
        weights = extra[0] if weights is None else extra[0] * _like_values(weights, extra[0])
    return apply_no_relevant(func, ranking.qids, values, undefined,
                             params.get("no_relevant", "zero"), weights)


def _like_values(weights, values):
    """Query weights as an array of the namespace and device of ``values``."""

    xp = namespace(values)
    return weights if xp is None else _like(weights, values, xp)


#: How per-query values make a score, by the name a declaration's ``aggregate`` gives.
AGGREGATES = {"mean": mean_over_queries,
              # the executor's one value (skrank._engine.beyond): see _own_column
              "collection": None,
              # trec_eval's own measures: its all row (a mean, sum, geometric mean, count)
              **{f"trec_eval:{name}": function for name, function in ALL_ROW.items()}}


def aggregation(func, spec):
    """The function ``(func, values, weights) -> score`` that ``spec.aggregate`` declares."""
    try:
        return AGGREGATES[spec.aggregate]
    except KeyError:
        raise RuntimeError(
            f"{func}: internal error: {spec.name} declares aggregate={spec.aggregate!r}, which "
            f"the plan does not know. Known: {', '.join(map(repr, AGGREGATES))}.") from None


class Column(NamedTuple):
    """Per-query values of one metric: the queries kept by its no_relevant policy,
    their values, their weights (None: equal) and how they make the score (the
    metric's declared ``aggregate``)."""

    qid: np.ndarray
    values: np.ndarray
    weights: Optional[np.ndarray]
    aggregate: Callable = mean_over_queries

    def score(self, func):
        return self.aggregate(func, self.values, self.weights)


class Table(NamedTuple):
    """Result of :func:`execute`: every query id, a :class:`Column` per label, the rankings."""

    qid: np.ndarray
    columns: dict
    rankings: dict

    def means(self, func):
        return {label: c.score(func) for label, c in self.columns.items()}


def build_rankings(p, prepared, rankings=None, *, full=False):
    """The rankings of the plan, one per tie policy (reusing those in ``rankings``
    that are deep enough; with ``full``, new ones are built to the end)."""
    rankings = {} if rankings is None else rankings
    for policy, depth in p.depths:
        held = rankings.get(policy)
        if held is not None and (held.depth is None or held.depth.covers(depth)):
            continue
        rankings[policy] = rank_queries(p.func, *prepared.gain_arrays, policy,
                                        None if full else depth)
    return rankings


def execute(p, prepared, *, rankings=None, full=False):
    """Run the plan on prepared arrays: per-query values of every labelled metric.

    ``rankings`` (policy -> ranking) is read and completed in place, so callers
    that evaluate several plans on the same arrays rank once (see ``full``).
    """
    func = p.func
    rankings = build_rankings(p, prepared, rankings, full=full)
    columns, qids = {}, None
    for step in p.steps:
        if step.policy is None:
            continue
        ranking = rankings[step.policy]
        qids = ranking.qids
        if step.label is not None:
            spec = step.call.spec
            columns[step.label] = Column(*run_kernel(spec, func, ranking, step.call.options,
                                                     prepared.weights), aggregation(func, spec))
    executors = {}   # the metrics that declare their own executor, by executor
    for step in p.steps:
        if step.policy is None:
            executors.setdefault(step.call.spec.executor, []).append(step)
    for executor, steps in executors.items():
        own_qids, own_values, *own_undefined = executor(func, [step.call for step in steps],
                                                        prepared)
        qids = own_qids if qids is None else qids
        for index, (step, values) in enumerate(zip(steps, own_values)):
            if own_undefined:   # the executor leaves the no_relevant policy to the plan
                columns[step.label] = _own_column(func, step.call, own_qids, values,
                                                  own_undefined[0][index], prepared.weights)
                continue
            columns[step.label] = Column(own_qids, values, prepared.weights,
                                         aggregation(func, step.call.spec))
    if qids is None:
        qids = next(iter(rankings.values())).qids
    ordered = {step.label: columns[step.label] for step in p.steps if step.label is not None}
    return Table(qids, ordered, rankings)


def _own_column(func, call, qids, values, undefined, weights):
    """The :class:`Column` of an executor's values: a collection-level value (a float;
    the queries' values NaN), or per-query values and the queries where the metric is
    undefined, under the call's ``no_relevant`` policy (without one, such queries are
    left out: the beyond-accuracy metrics' mean over the users where they are defined)."""
    if call.spec.aggregate == "collection":
        return Column(qids, np.full(qids.shape[0], np.nan), None,
                      functools.partial(_collection_value, float(values)))
    policy = call.options.get("no_relevant", "skip")
    return Column(*apply_no_relevant(func, qids, values, undefined, policy, weights),
                  aggregation(func, call.spec))


def _collection_value(value, func, values, weights):
    return value


def per_query(func, call, y_true, y_score, qid=None, retrieved=None, exclude=None,
              sample_weight=None, *, inputs=None):
    """The :class:`Column` of one metric call on arrays (the metric functions' path);
    ``inputs``: the extra arrays it declares, by name."""
    p = single(func, call)
    judged = (inputs or {}).get("judged")
    if p.raw:
        prepared = prepare(p, y_true, y_score, qid, retrieved, exclude, sample_weight,
                           inputs=inputs)
        return execute(p, prepared).columns["value"]
    matrix = blockable(y_true, y_score, qid, retrieved, exclude, judged, p.depth is None)
    if matrix is not None:  # a large 2-D form: in blocks of rows, in bounded memory
        blocked = execute_by_rows(func, functools.partial(_run_block, p), y_true, matrix,
                                  exclude, sample_weight, whole_rankings=p.depth is None,
                                  direct=direct_block(p))
        if blocked is not None:
            return blocked.columns["value"]
    prepared = prepare(p, y_true, y_score, qid, retrieved, exclude, sample_weight, inputs=inputs)
    return execute(p, prepared).columns["value"]


def _run_block(p, y_true, y_score, exclude, weights, qid=None, **options):
    """``(table, prepared)`` of the plan on one block of rows of the 2-D form (or
    on its flat rows, with ``qid``)."""
    prepared = prepare(p, y_true, y_score, qid, None, exclude, weights, **options)
    return execute(p, prepared), prepared


def direct_block(p):
    """The ``direct`` route of :func:`~skrank._engine.row_blocks.execute_by_rows` for a
    plan whose every metric :mod:`skrank._engine.row_ranks` reads at the labelled items
    (``map``, ``ndcg``, ``ndcg@k``, ... under ``average`` or ``stable`` ties), else None."""
    if not p.steps or any(step.policy is None for step in p.steps):
        return None
    if not row_ranks.supported([(step.call.spec.name, step.call.options) for step in p.steps]):
        return None
    return functools.partial(_run_direct, p)


def _run_direct(p, y_true, y_score, exclude, weights):
    """``(table, prepared)`` of the plan on one block of the 2-D form read at its labelled
    items (the values of :func:`execute`, to the last bit), or None to rank it whole."""
    found = row_ranks.rank_rows(y_true, y_score, exclude, {policy for policy, _ in p.depths})
    if found is None:
        return None
    qids = np.arange(y_score.shape[0])
    columns = {}
    for step in p.steps:
        if step.label is None:
            continue
        options = step.call.options
        got = row_ranks.metric_values(found[step.policy], step.call.spec.name, options)
        if got is None:
            return None
        columns[step.label] = Column(*apply_no_relevant(
            p.func, qids, *got, options.get("no_relevant", "zero"), weights),
            aggregation(p.func, step.call.spec))
    return Table(qids, columns, found), Prepared(None, None, weights, None, {})


def mean(func, call, *args, **kwargs):
    """The mean of one metric call on arrays, weighted by ``sample_weight`` when given."""
    column = per_query(func, call, *args, **kwargs)
    return column.score(func)
