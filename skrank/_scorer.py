"""Scorers for scikit-learn model selection, and their registration as strings.

A skrank scorer is a scikit-learn scorer (the class ``make_scorer`` returns)
that also finds the query ids: from metadata routing (it requests ``qid``) or,
without routing, from a ``qid`` column of a pandas DataFrame ``X``.

Registration.  The names become ``scoring=`` strings through
:mod:`skrank._sklearn_registration`, the one module that touches scikit-learn's
internals (what it changes and why is written there and in docs/developing.md);
this module hands it the scorers when it has loaded.
"""

import sys
import warnings

import numpy as np

from . import _plan, _sklearn_registration
from ._engine.xp import keep_device
from ._declare.table import METRICS
from ._declare.names import metric_names, parse_metric_name
from ._core.checks import InvalidParameterError, _describe, check_choice
from ._engine.arrays import apply_gain
from ._evaluate import evaluate

_sklearn_names = _sklearn_registration.sklearn_scorer_names

_RESPONSES = ("predict", "expected_gain")


def qid_from_X(X):
    """The ``qid`` column of a DataFrame-like ``X``, or None."""
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    try:
        if "qid" not in list(columns):
            return None
        column = X["qid"]
    except Exception:  # exotic frame types
        return None
    return np.asarray(column.to_numpy() if hasattr(column, "to_numpy") else column)


def _names_reaching_the_model(estimator):
    """The feature names the learning step of a fitted ``estimator`` received (the final
    step of a pipeline, whose earlier steps may drop or rename columns), or None."""
    steps = getattr(estimator, "steps", None)
    if not isinstance(steps, list) or not steps:
        return getattr(estimator, "feature_names_in_", None)
    final = steps[-1][1]
    names = _names_reaching_the_model(final) if final != "passthrough" else None
    if names is None and len(steps) > 1:
        try:  # the final step was given an array: the names its input had
            names = estimator[:-1].get_feature_names_out()
        except Exception:  # a step that cannot name its output: nothing known
            return None
    return names


def warn_if_qid_is_a_feature(func, estimator, X, qid=None):
    """Warn when ``estimator`` was fitted with the ``qid`` column of the DataFrame ``X`` (the
    query ids skrank read, or ``qid`` itself) as a feature: it learns from arbitrary id numbers.

    Silent when the model did not see the column (``DropQid``, a ranker that takes it as the
    ids), when X has no such column, or when the column is not the query ids given."""
    try:
        if "qid" not in list(getattr(X, "columns", ())):
            return
    except TypeError:  # exotic frame types
        return
    names = _names_reaching_the_model(estimator)
    if names is None or not any(str(n) == "qid" or str(n).endswith("__qid") for n in names):
        return
    if qid is not None:
        try:
            same = np.array_equal(np.asarray(qid), qid_from_X(X))
        except Exception:  # ids that do not compare: not known to be the column
            same = False
        if not same:
            return
    warnings.warn(
        f"{func}: the model was fitted with the query-id column 'qid' of the DataFrame X as a "
        f"feature ({type(estimator).__name__} received it), so it learns from arbitrary id "
        f"numbers and its scores are not those of the model without it. Put "
        f"skrank.model_selection.DropQid() first in the pipeline, e.g. "
        f"make_pipeline(DropQid(), model), or drop the column from X and pass the ids as qid "
        f"(through metadata routing inside scikit-learn's functions).", UserWarning, stacklevel=3)


def _missing_qid_message(name):
    return (
        f"{name} needs qid but none was given (groups=qid reaches the splitter only, never "
        f"the scorer). Either enable metadata routing, "
        f"sklearn.set_config(enable_metadata_routing=True), and pass the ids as "
        f"GridSearchCV(...).fit(X, y, qid=qid), cross_validate(..., params={{'qid': qid}}), "
        f"cross_val_score(..., params={{'qid': qid}}) or "
        f"validation_curve(..., params={{'qid': qid}}); or pass X as a pandas DataFrame "
        f"with a 'qid' column and put skrank.model_selection.DropQid() first in the "
        f"pipeline so that the model does not learn from it; or, for held-out per-query "
        f"values without routing, skrank.model_selection.cross_val_evaluate(model, X, y, "
        f"qid=qid). (GridSearchCV and cross_validate show this only as a warning and NaN scores "
        f"unless error_score='raise'.)"
    )


class RankingScorer(_sklearn_registration.sklearn_scorer_class()):
    """A scikit-learn scorer for a ranking metric; greater is better.

    Build one with :func:`skrank.get_scorer` or :func:`skrank.make_ranking_scorer`.
    It requests ``qid`` through metadata routing and otherwise reads it from
    a ``qid`` column of a DataFrame ``X`` (put
    :class:`skrank.model_selection.DropQid` first in a scikit-learn pipeline
    so that the model does not take that column as a feature).

    Query weights (``sample_weight``, one per row and constant within each
    query) are passed on to the metric; as with scikit-learn's own scorers,
    request them for routing with ``scorer.set_score_request(sample_weight=True)``.
    """

    # Default metadata request: route qid to the scorer without set_score_request;
    # sample_weight stays unrequested (None) until set_score_request asks for it, as in
    # scikit-learn.  Listing it also lets scikit-learn < 1.6, which replaces
    # set_score_request by a method accepting only the listed names, request it.
    __metadata_request__score = {"qid": True, "sample_weight": None}

    def __init__(self, metric, params, *, response="predict", name=None, call=None):
        if callable(metric):
            func, self._metric = metric, getattr(metric, "__name__", "custom")
            self._plan = None
        else:
            func, self._metric = METRICS[metric].function, metric
            if call is None:
                call = _plan.MetricCall.of(METRICS[metric], params, func=func.__name__)
            # Validated once here; each fold only executes it.
            self._plan = _plan.single(func.__name__, call)
        response_method = "predict_proba" if response == "expected_gain" else "predict"
        super().__init__(func, 1, dict(params), response_method)
        self._response = response
        self._name = name

    def set_score_request(self, **kwargs):
        """Request metadata for routing, e.g. ``set_score_request(sample_weight=True)``.

        As scikit-learn's ``set_score_request``, except that ``qid`` stays
        requested unless set here too.  Returns the scorer.

        Parameters
        ----------
        **kwargs : bool, str or None
            Metadata name -> request (``True``, ``False``, ``None`` or an alias).

        Returns
        -------
        self : RankingScorer
        """
        kwargs.setdefault("qid", True)
        return super().set_score_request(**kwargs)

    @property
    def name(self):
        """The scorer's name in skrank's grammar, when it has one."""
        return self._name

    def __repr__(self):
        if self._name is not None and self._response == "predict":
            return f"get_scorer({self._name!r})"
        args = [repr(self._metric)] + [f"{k}={v!r}" for k, v in self._kwargs.items()]
        if self._response != "predict":
            args.append(f"response={self._response!r}")
        return f"make_ranking_scorer({', '.join(args)})"

    @staticmethod
    def _metadata(label, X, metadata):
        """``(qid, sample_weight)`` from the routed metadata, qid else from X's column."""
        metadata = dict(metadata)
        qid = metadata.pop("qid", None)
        sample_weight = metadata.pop("sample_weight", None)
        if metadata:
            raise InvalidParameterError(
                f"{label}: ranking scorers take only qid and sample_weight as metadata. "
                f"Got {', '.join(sorted(metadata))}."
            )
        if qid is None:
            qid = qid_from_X(X)
        if qid is None:
            raise ValueError(_missing_qid_message(label))
        return qid, sample_weight

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        qid, sample_weight = self._metadata(self._name or self._metric, X, kwargs)
        warn_if_qid_is_a_feature(self._name or self._metric, estimator, X, qid)
        y_score = method_caller(estimator, self._response_method, X)
        if self._response == "expected_gain":
            y_score = self._expected_gain(estimator, y_score)
        if self._plan is None:  # a callable metric
            weight = {} if sample_weight is None else {"sample_weight": sample_weight}
            return self._score_func(y_true, keep_device(y_score), qid=qid, **weight,
                                    **self._kwargs)
        table = _execute(self._plan, method_caller, y_true, y_score, qid, sample_weight)
        return table.means(self._plan.func)["value"]

    def _expected_gain(self, estimator, proba):
        """Expected gain of each document under a classifier over graded labels."""
        try:
            classes = np.asarray(estimator.classes_, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"response='expected_gain' needs a classifier whose classes are relevance "
                f"grades (numbers). Got {type(estimator).__name__} with classes_ "
                f"{list(np.asarray(estimator.classes_).tolist())[:10]}: fit it on numeric "
                f"grades, "
                f"or use response='predict'.") from None
        proba = np.asarray(proba, dtype=np.float64)
        if proba.ndim == 1:  # binary classifier: scikit-learn returns P(classes_[1])
            proba = np.column_stack([1.0 - proba, proba])
        gains = apply_gain("expected_gain", self._kwargs.get("gain", "linear"), classes)
        return proba @ gains


# scikit-learn's classification scorers whose names are also skrank metric stems: the
# strings stay scikit-learn's, and their failures on ranking data say what to write instead.
SHADOWED_NAMES = {"recall": "recall@100", "precision": "precision@10"}


class ShadowedNameScorer(_sklearn_registration.sklearn_scorer_class()):
    """scikit-learn's own scorer for a name that is also a ranking metric stem.

    It scores exactly as scikit-learn's (same function, options and response);
    when scikit-learn's metric rejects the data (continuous predictions of a
    regressor or ranker, graded labels), the error names the skrank spelling.
    """

    def __init__(self, score_func, sign, kwargs, response_method="predict", *, name=None):
        super().__init__(score_func, sign, kwargs, response_method)
        self._name = name

    @classmethod
    def wrap(cls, scorer, name):
        return cls(scorer._score_func, scorer._sign, scorer._kwargs, scorer._response_method,
                   name=name)

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        try:
            return super()._score(method_caller, estimator, X, y_true, **kwargs)
        except ValueError as exc:
            raise ValueError(
                f"scoring={self._name!r} is scikit-learn's classification "
                f"{self._score_func.__name__}, which failed on these predictions: "
                f"{str(exc).rstrip('.')}. "
                f"If you meant the ranking metric, write a cutoff, e.g. "
                f"scoring={SHADOWED_NAMES[self._name]!r}, or pass "
                f"scoring=skrank.make_ranking_scorer({self._name!r}"
                f"{', k=10' if self._name == 'precision' else ''})."
            ) from exc


class MultiRankingScorer(RankingScorer):
    """A scorer of several ranking metrics that ranks each fold once for all of them.

    Build one with ``skrank.make_ranking_scorer(["ndcg@10", "map", "mrr"])``
    (or a dict of label -> name or ``(name, params)``).  Called, it returns a
    dict of label -> score computed by one :func:`skrank.evaluate`, which
    scikit-learn takes as multi-metric ``scoring=`` (``cross_validate``,
    ``GridSearchCV(refit=<label>)``).  ``qid`` and ``sample_weight`` are found
    and routed as by :class:`RankingScorer`.
    """

    def __init__(self, metrics, scorers):

        # The score function is never called: the plan of all the metrics is executed.
        super(RankingScorer, self).__init__(evaluate, 1, {}, "predict")
        self._response = "predict"
        self._name = None
        self._metrics = metrics      # as given (normalised), for the repr
        self._scorers = scorers      # label -> RankingScorer, validated at construction
        self._plan = _plan.plan("evaluate", [
            (label, scorer._plan.steps[0].call) for label, scorer in scorers.items()])

    @property
    def name(self):
        """None: a multi-metric scorer has one label per metric (see ``labels``)."""
        return None

    @property
    def labels(self):
        """The keys of the dict of scores, in order."""
        return list(self._scorers)

    def __repr__(self):
        return f"make_ranking_scorer({self._metrics!r})"

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        label = f"make_ranking_scorer({self.labels!r})"
        qid, sample_weight = self._metadata(label, X, kwargs)
        warn_if_qid_is_a_feature(label, estimator, X, qid)
        y_score = method_caller(estimator, self._response_method, X)
        table = _execute(self._plan, method_caller, y_true, y_score, qid, sample_weight)
        return table.means("evaluate")


class _Shared:
    """Checked arrays and rankings shared by the skrank scorers of one dict ``scoring=``."""

    def __init__(self, inputs, prepared):
        self.inputs = inputs      # held so that the ids in the key stay theirs
        self.prepared = prepared
        self.rankings = {}
        self.extremes = _plan._Extremes(prepared.gain_arrays[0])


def _execute(p, method_caller, y_true, y_score, qid, sample_weight):
    """Run a scorer's plan on one fold.  Inside scikit-learn's multi-metric scorer, the
    skrank scorers of the dict check the arrays and rank them once for all of them: the
    first builds complete rankings into scikit-learn's per-call cache, the others read them."""
    cache = _sklearn_registration.sklearn_call_cache(method_caller)
    if cache is None:
        prepared = _plan.prepare(p, y_true, keep_device(y_score), qid,
                                 sample_weight=sample_weight)
        return _plan.execute(p, prepared)
    inputs = (y_true, y_score, qid, sample_weight)
    key = ("skrank: checked arrays and rankings", p.raw, *map(id, inputs))   # raw: issue 29
    shared = cache.get(key)
    if shared is None:
        prepared = _plan.prepare(p, y_true, keep_device(y_score), qid,
                                 sample_weight=sample_weight, check_labels=False)
        shared = cache[key] = _Shared(inputs, prepared)
    p.check_labels(shared.prepared.gain_arrays[0], shared.extremes)
    return _plan.execute(p, shared.prepared, rankings=shared.rankings, full=True)


def _make_multi_scorer(metrics, response, params):
    """The :class:`MultiRankingScorer` for a list or dict of metrics (validated here)."""
    func = "make_ranking_scorer"
    if params or response != "predict":
        given = sorted(params) + (["response"] if response != "predict" else [])
        raise InvalidParameterError(
            f"{func}: options ({', '.join(given)}) apply to one metric only. Got them with "
            f"several metrics instead. Put each metric's options in a dict entry, e.g. "
            f"make_ranking_scorer({{'map@10': ('map', {{'k': 10, 'denominator': 'min'}})}})."
        )
    if isinstance(metrics, dict):
        items = list(metrics.items())
        for label, _ in items:
            if not isinstance(label, str):
                raise InvalidParameterError(
                    f"{func}: the labels of a dict of metrics must be str. Got "
                    f"{_describe(label)} instead.")
    else:
        items = []
        for item in metrics:
            if not isinstance(item, str):
                raise InvalidParameterError(
                    f"{func}: a list of metrics must hold names such as 'ndcg@10'. Got "
                    f"{_describe(item)} instead. Use a dict of label -> (name, params) for "
                    f"options.")
            items.append((item, item))
    if not items:
        raise InvalidParameterError(
            f"{func}: metrics must name at least one metric. Got an empty "
            f"{type(metrics).__name__} instead.")
    scorers, normalised = {}, {}
    for label, item in items:
        if label in scorers:
            raise InvalidParameterError(f"{func}: metric {label!r} is listed twice.")
        if isinstance(item, str):
            scorers[label] = make_ranking_scorer(item)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) \
                and isinstance(item[1], dict):
            scorers[label] = make_ranking_scorer(item[0], **item[1])
            item = (item[0], dict(item[1]))
        else:
            raise InvalidParameterError(
                f"{func}: each metric must be a name such as 'ndcg@10' or a pair "
                f"(name, params_dict) such as ('ndcg', {{'k': 10, 'gain': 'exponential'}}). "
                f"Got {_describe(item)} instead.")
        normalised[label] = item
    if not isinstance(metrics, dict):
        normalised = list(normalised)
    return MultiRankingScorer(normalised, scorers)


def make_ranking_scorer(metric, *, response="predict", **params):
    """Make a scorer from a ranking metric and its options.

    Parameters
    ----------
    metric : str, callable, list of str, or dict of str -> str or (str, dict)
        A metric name (``"ndcg"``, ``"map"``, or a full name such as
        ``"ndcg_exp@10"``), or a callable ``f(y_true, y_score, *, qid, **params)``
        returning a float, greater is better.  Several metrics (a list of
        names, or a dict of label -> name or ``(name, params)``) make one
        :class:`MultiRankingScorer` that returns a dict of scores and ranks
        each fold once for all of them: the fast multi-metric ``scoring=``
        (``GridSearchCV(..., refit="ndcg@10")``, ``cross_validate``).
    response : {"predict", "expected_gain"}, default="predict"
        How documents are scored: the estimator's ``predict``, or, for a
        classifier trained on graded labels, the expected gain
        ``sum_c P(c | x) * gain(c)`` from ``predict_proba`` (with the
        metric's ``gain``, linear by default).
    **params
        The metric's options (``k``, ``gain``, ``ties``, ``no_relevant``, ...).

    Returns
    -------
    scorer : RankingScorer or MultiRankingScorer
        Use it as ``scoring=`` in any scikit-learn search or validation function.

    Examples
    --------
    >>> import skrank
    >>> skrank.make_ranking_scorer("ndcg", k=10, gain="exponential")
    get_scorer('ndcg_exp@10')
    >>> skrank.make_ranking_scorer("map", k=10, denominator="min")
    get_scorer('map(denominator=min)@10')
    >>> skrank.make_ranking_scorer(["ndcg@10", "map", "mrr"])
    make_ranking_scorer(['ndcg@10', 'map', 'mrr'])
    """
    check_choice("make_ranking_scorer", "response", response, _RESPONSES)
    if isinstance(metric, (list, tuple, dict)):
        return _make_multi_scorer(metric, response, params)
    if callable(metric):
        return RankingScorer(metric, params, response=response)
    spec, fixed = parse_metric_name(metric, func="make_ranking_scorer",
                                    cutoff_given="k" in params)
    overlap = sorted(set(fixed) & set(params) - set(spec.name_defaults))
    if overlap:
        raise InvalidParameterError(
            f"make_ranking_scorer: {metric!r} already sets {', '.join(overlap)}; pass the "
            f"plain metric name ({spec.name!r}) with the options instead."
        )
    merged = {**fixed, **params}
    call = _plan.MetricCall.of(spec, merged, func="make_ranking_scorer")
    name = str(call) if _names_itself(call) else None
    return RankingScorer(spec.name, merged, response=response, name=name, call=call)


def _names_itself(call):
    """Whether the call's canonical name is a scoring string that means it (not scikit-learn's
    'recall', not a callable gain, which has no text form)."""
    name = str(call)
    if not is_ranking_name(name):
        return False
    try:
        return _plan.MetricCall.parse(name) == call
    except (ValueError, TypeError):
        return False


def get_scorer(scoring):
    """Scorer for a ranking metric name such as ``"ndcg_exp@10"``.

    The grammar is ``<metric>[@<k>]`` with any integer ``k >= 1``; see
    :func:`get_scorer_names`.  Names that are not ranking names are passed to
    :func:`sklearn.metrics.get_scorer`, and a scorer object is returned as is.

    Parameters
    ----------
    scoring : str or callable
        A ranking metric name (``"ndcg_exp@10"``, ``"map@5"``, ...), a scikit-learn
        scorer name, or a scorer object.

    Returns
    -------
    scorer : callable
        A :class:`skrank.RankingScorer` for a ranking name, scikit-learn's scorer for
        one of its names, or ``scoring`` itself when it is not a string.

    Examples
    --------
    >>> import skrank
    >>> skrank.get_scorer("ndcg_exp@37")
    get_scorer('ndcg_exp@37')
    """
    if not isinstance(scoring, str):
        return scoring
    if is_ranking_name(scoring):
        spec, params = parse_metric_name(scoring, func="get_scorer")
        call = _plan.MetricCall.of(spec, params, func="get_scorer")
        return RankingScorer(spec.name, params, name=scoring, call=call)
    from sklearn.metrics import get_scorer as sk_get_scorer

    if scoring in _sklearn_names():
        return sk_get_scorer(scoring)
    # raises with the grammar and a suggestion (scikit-learn's names too: they are valid here)
    parse_metric_name(scoring, func="get_scorer", also=sorted(_sklearn_names()))
    raise AssertionError("unreachable")  # pragma: no cover


def get_scorer_names():
    """Names of skrank's scorers with common cutoffs; any other ``k >= 1`` works too.

    Examples
    --------
    >>> import skrank
    >>> "ndcg_exp@10" in skrank.get_scorer_names()
    True
    """
    return [name for name in metric_names() if name not in _sklearn_names()]


def is_ranking_name(name):
    """True for a valid skrank name that does not shadow a scikit-learn scorer name."""
    if not isinstance(name, str) or name in _sklearn_names():
        return False
    try:
        parse_metric_name(name)
    except (ValueError, TypeError):
        return False
    return True


def register_with_sklearn():
    """Make skrank's ranking names valid ``scoring=`` strings in scikit-learn (see
    :mod:`skrank._sklearn_registration`, the one module that touches its internals).
    Idempotent; returns True on success, else warns and returns False."""
    return _sklearn_registration.register_with_sklearn(sys.modules[__name__])


# This module imports scikit-learn: its names are registered from here on (idempotent).
register_with_sklearn()
