"""skrank's metrics as evaluation metrics of XGBoost, LightGBM and CatBoost.

:func:`xgboost_metric`, :func:`lightgbm_metric` and :func:`catboost_metric` turn
metric names (or :class:`~skrank._plan.MetricCall` values) into the callables
the libraries take, for logging and early stopping:

* XGBoost: ``xgb.train(..., custom_metric=m, maximize=True)`` (the query groups
  are read from the ``DMatrix``), and :class:`XGBRanker` (``xgboost.XGBRanker``
  whose ``eval_metric`` may be such a metric; the plain ``xgboost.XGBRanker``
  calls a callable ``eval_metric`` once per query, never with the groups).
* LightGBM: ``lgb.train(..., feval=m)`` (groups from the ``Dataset``),
  ``LGBMRanker.fit(..., eval_metric=m)`` and
  :class:`skrank.rankers.QueryLGBMRanker`.
* CatBoost: ``CatBoostRanker(eval_metric=catboost_metric(metric, pools=[...]))``
  (CatBoost never passes a Python metric the groups: the metric is given the
  pools and finds each set's groups by its labels).

Each evaluation round gives, per metric, exactly what :func:`skrank.evaluate`
gives on the model's predictions for the rows and queries of that evaluation
set.  The metrics are planned once, and each evaluation set's labels and query
groups are checked once and kept (a few sets, found again by their labels and
group sizes), so a round costs one ranking of the predictions: less than one
:func:`skrank.evaluate` call, which also counts documents per query.

What the libraries impose:

* XGBoost logs and early-stops on a custom metric rounded to 6 decimals; it
  splits its log on whitespace, so the names carry none (``"map(ties=stable,
  denominator=min)@10"`` is reported as ``"map(ties=stable,denominator=min)@10"``);
  without ``maximize=True`` it decides the direction from the name (``ndcg``,
  ``map`` and ``pre`` maximise, ``mrr`` or ``recall`` would be *minimised*):
  pass ``maximize=True`` to ``xgb.train`` or use :meth:`XGBoostMetric.early_stopping`.
  With several metrics it early-stops on the last one.
* LightGBM maximises (the metric says so) and, by default, early-stops when any
  metric (its own built-in ones included: set ``metric="None"`` to have only
  skrank's) stops improving; ``first_metric_only=True`` stops on the first.
"""

import numpy as np

from ._declare import params as P
from . import _plan
from ._core.checks import InvalidParameterError

__all__ = ["XGBoostMetric", "LightGBMMetric", "CatBoostMetric", "xgboost_metric",
           "lightgbm_metric", "catboost_metric", "XGBRanker"]

#: Evaluation sets kept per metric object (training set, validation sets).
_KEPT_SETS = 8


class _EvalSet:
    """One evaluation set, checked once: its labels, query groups and weights."""

    def __init__(self, y_true, sizes, weights, qid):
        self.y_true = y_true
        self.sizes = sizes
        self.weights = weights
        self.qid = qid
        self.label_cache = {}   # Ranking cache entries that depend on the labels alone
        self.rankings = []

    def matches(self, y_true, sizes, weights):
        if (y_true.shape != self.y_true.shape or sizes.shape != self.sizes.shape
                or (weights is None) != (self.weights is None)):
            return False
        return (np.array_equal(sizes, self.sizes) and np.array_equal(y_true, self.y_true)
                and (weights is None or np.array_equal(weights, self.weights)))


def _label_only(key):
    """Whether a :class:`skrank._engine.ranking.Ranking` cache entry depends on the labels and
    query groups alone (not on the scores): grades per query, the ideal ranking, R."""
    name = key[0] if isinstance(key, tuple) else key
    return name in ("grade_counts", "ideal", "ideal_all", "ideal_top", "n_relevant",
                    "all_query")


def _reuse_label_counts(ranking, held):
    """Give ``ranking`` the label-only entries an earlier round of the same evaluation
    set computed, and keep the ones it computes (the ideal DCG's grade counts are a
    fifth of an nDCG round at 1M rows, and the same every round)."""
    cache = getattr(ranking, "_cache", None)
    if not isinstance(cache, dict):
        return
    cache.update(held.label_cache)
    held.rankings.append(ranking)


class _PlannedMetrics:
    """Metrics planned once for every round, with the evaluation sets seen so far."""

    def __init__(self, func, metrics, ties, no_relevant, threshold):
        ties, no_relevant, threshold = (
            P.EVALUATE_OPTIONS[name].validate(func, value) for name, value in (
                ("ties", ties), ("no_relevant", no_relevant), ("threshold", threshold)))
        if ties == "trec":
            raise InvalidParameterError(
                f"{func}: ties='trec' orders ties by docno, which a training library does not "
                f"have. Got ties='trec' instead: use 'average', 'stable', 'optimistic' or "
                f"'pessimistic'.")
        self.func = func
        calls = _plan.resolve(func, metrics, trec=True, defaults=dict(
            ties=ties, no_relevant=no_relevant, threshold=threshold))
        self.labels = [label for label, _ in calls]
        # The libraries split their logs on whitespace: names carry none.
        self.names = ["".join(label.split()) if isinstance(label, str) else str(label)
                      for label in self.labels]
        self.plan = _plan.plan(func, calls)
        self._sets = []

    def _eval_set(self, y_true, sizes, weights):
        y_true = np.asarray(y_true, dtype=np.float64).reshape(-1)
        sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
        weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        for i, held in enumerate(self._sets):
            if held.matches(y_true, sizes, weights):
                if i:  # most recent first: the sets of one round alternate
                    self._sets.insert(0, self._sets.pop(i))
                return held
        if sizes.size == 0 or sizes.sum() != y_true.shape[0] or (sizes <= 0).any():
            raise ValueError(
                f"{self.func}: the evaluation data must give query groups covering its "
                f"{y_true.shape[0]} rows (group sizes > 0). Got {sizes.size} groups for "
                f"{int(sizes.sum())} rows instead: build the data with query ids (DMatrix("
                f"..., qid=qid), Dataset(..., group=sizes)) or pass eval_qid/eval_group.")
        qid = np.repeat(np.arange(sizes.size), sizes)
        checked = _plan.prepare(self.plan, y_true, np.zeros(y_true.shape[0]), qid,
                                sample_weight=weights)  # labels and weights checked once
        held = _EvalSet(y_true.copy(), sizes.copy(), None if weights is None else
                        weights.copy(), qid)
        held.query_weights = checked.weights
        self._sets.insert(0, held)
        del self._sets[_KEPT_SETS:]
        return held

    def values(self, y_true, y_score, sizes, weights=None):
        """The mean of every metric (in order) on one evaluation set's predictions."""
        held = self._eval_set(y_true, sizes, weights)
        y_score = np.asarray(y_score)
        if y_score.ndim != 1 or y_score.shape[0] != held.y_true.shape[0]:
            raise ValueError(
                f"{self.func}: the predictions must be 1-D with one score per row "
                f"({held.y_true.shape[0]}). Got shape {y_score.shape} instead: ranking "
                f"metrics need a ranking objective with one output.")
        prepared = _plan.prepare(self.plan, held.y_true, y_score, held.qid,
                                 check_labels=False)._replace(weights=held.query_weights)
        rankings = _plan.build_rankings(self.plan, prepared)
        for ranking in rankings.values():   # what the labels alone give, from earlier rounds
            _reuse_label_counts(ranking, held)
        table = _plan.execute(self.plan, prepared, rankings=rankings)
        for ranking in held.rankings:
            held.label_cache.update((key, value) for key, value in ranking._cache.items()
                                    if _label_only(key))
        held.rankings.clear()
        means = table.means(self.func)
        return [float(means[label]) for label in self.labels]


class XGBoostMetric:
    """skrank metrics as an XGBoost ``custom_metric`` (see :func:`xgboost_metric`).

    Called as ``metric(predt, dmatrix)``: returns ``(name, value)``, or a list of
    them for several metrics, each value what :func:`skrank.evaluate` gives on
    ``predt`` for the rows and query groups of ``dmatrix``.

    {options}

    Attributes
    ----------
    names : list of str
        The names XGBoost logs, in order (the metric names, without whitespace).
    """

    def __init__(self, metrics, *, ties=None, no_relevant="zero", threshold=None):
        self._planned = _PlannedMetrics("xgboost_metric", metrics, ties, no_relevant,
                                        threshold)
        self.names = list(self._planned.names)
        self.__name__ = self.names[0]   # the name the scikit-learn wrapper would log

    def __call__(self, predt, dmatrix):
        if not hasattr(dmatrix, "get_uint_info"):
            raise TypeError(
                "xgboost_metric: the metric must be called with (predt, DMatrix). Got "
                f"{type(dmatrix).__name__} instead: xgboost.XGBRanker calls a callable "
                "eval_metric once per query, without the groups; use "
                "skrank.gbdt.XGBRanker(eval_metric=...) or xgb.train(custom_metric=...).")
        ptr = np.asarray(dmatrix.get_uint_info("group_ptr"), dtype=np.int64)
        if ptr.size < 2:
            raise ValueError(
                f"xgboost_metric: the DMatrix must have query groups. Got none instead: "
                f"build it with DMatrix(X, y, qid=qid) (or set_group).")
        sizes = np.diff(ptr)
        weights = dmatrix.get_weight()   # one per query for ranking data
        per_row = None
        if weights.size:
            if weights.shape[0] != sizes.shape[0]:
                raise ValueError(
                    f"xgboost_metric: the DMatrix weights must be one per query "
                    f"({sizes.shape[0]}) for ranking. Got {weights.shape[0]} instead.")
            per_row = np.repeat(np.asarray(weights, dtype=np.float64), sizes)
        values = self._planned.values(dmatrix.get_label(), predt, sizes, per_row)
        pairs = list(zip(self.names, values))
        return pairs[0] if len(pairs) == 1 else pairs

    def early_stopping(self, rounds, **kwargs):
        """An ``xgboost.callback.EarlyStopping`` that maximises the last metric.

        Pass it as ``xgb.train(..., callbacks=[metric.early_stopping(10)])`` instead
        of ``early_stopping_rounds``, or pass ``maximize=True`` to ``xgb.train``.

        Parameters
        ----------
        rounds : int
            Rounds without improvement of the last metric before training stops.
        **kwargs
            Other arguments of ``xgboost.callback.EarlyStopping`` (``data_name``,
            ``save_best``, ...); ``metric_name`` defaults to the last metric's name.

        Returns
        -------
        callback : xgboost.callback.EarlyStopping
            The callback, with ``maximize=True``.
        """
        import xgboost

        kwargs.setdefault("metric_name", self.names[-1])
        return xgboost.callback.EarlyStopping(rounds=rounds, maximize=True, **kwargs)

    def __repr__(self):
        return f"xgboost_metric({self._planned.labels!r})"


class LightGBMMetric:
    """skrank metrics as a LightGBM evaluation function (see :func:`lightgbm_metric`).

    Called by ``lgb.train(feval=...)`` as ``metric(preds, dataset)`` and by the
    scikit-learn wrappers (``eval_metric=``) as ``metric(y_true, y_pred, weight,
    group)``; returns ``(name, value, True)`` per metric (higher is better), a
    list of them for several metrics.

    {options}

    Attributes
    ----------
    names : list of str
        The names LightGBM logs, in order (the metric names, without whitespace).
    """

    def __init__(self, metrics, *, ties=None, no_relevant="zero", threshold=None):
        self._planned = _PlannedMetrics("lightgbm_metric", metrics, ties, no_relevant,
                                        threshold)
        self.names = list(self._planned.names)
        self.__name__ = self.names[0]

    def __call__(self, preds, eval_data, weight=None, group=None):
        # Four parameters: LightGBM's scikit-learn wrapper passes the groups only then.
        if hasattr(eval_data, "get_group"):   # lgb.train: (preds, Dataset)
            y_true, y_score = eval_data.get_label(), preds
            group, weight = eval_data.get_group(), eval_data.get_weight()
        else:                                 # scikit-learn: (y_true, y_pred, weight, group)
            y_true, y_score = preds, eval_data
        if group is None:
            raise ValueError(
                "lightgbm_metric: the evaluation data must have query groups. Got none "
                "instead: build the Dataset with group=sizes, or pass eval_group (LGBMRanker) "
                "or eval_qid (skrank.rankers.QueryLGBMRanker).")
        values = self._planned.values(y_true, y_score, group, weight)
        triples = [(name, value, True) for name, value in zip(self.names, values)]
        return triples[0] if len(triples) == 1 else triples

    def __repr__(self):
        return f"lightgbm_metric({self._planned.labels!r})"


class CatBoostMetric:
    """One skrank metric as a CatBoost ``eval_metric`` (see :func:`catboost_metric`).

    CatBoost calls ``evaluate(approxes, target, weight)`` with the labels and
    predictions of one data set, never its groups (catboost issue 1777): the
    metric finds the set among the pools it was given, by its labels.  The
    class's name is the metric's (CatBoost logs a metric object by its class).
    """

    no_jit = True   # CatBoost would try (and fail, with a warning) to compile evaluate

    def __init__(self, planned, sets):
        self._planned = planned
        self._pool_sets = sets   # [(labels, group sizes, per-row weights or None)]

    def is_max_optimal(self):
        return True

    def evaluate(self, approxes, target, weight):
        target = np.asarray(target, dtype=np.float64)
        found = [s for s in self._pool_sets
                 if s[0].shape == target.shape and np.array_equal(s[0], target)]
        if len({(tuple(s[1]), None if s[2] is None else tuple(s[2])) for s in found}) != 1:
            what = "none" if not found else f"{len(found)} with other groups"
            raise ValueError(
                f"catboost_metric: CatBoost evaluated a set of {target.shape[0]} rows whose "
                f"labels match {what} of the pools given. Got {len(self._pool_sets)} pools "
                f"instead: pass every Pool the model is fitted and evaluated on (the "
                f"training pool too: CatBoost evaluates eval_metric on it), e.g. "
                f"catboost_metric('ndcg@10', pools=[train_pool, valid_pool]).")
        labels, sizes, row_weights = found[0]
        (value,) = self._planned.values(labels, np.asarray(approxes[0]), sizes, row_weights)
        return value, 1.0

    def get_final_error(self, error, weight):
        return error

    def __repr__(self):
        return f"catboost_metric({self._planned.labels[0]!r})"


def _pool_set(func, pool):
    groups = pool.get_group_id_hash()
    if groups is None or len(groups) == 0:
        raise ValueError(f"{func}: each pool must have query groups. Got a pool without "
                         f"group_id instead: build it with catboost.Pool(X, y, group_id=qid).")
    groups = np.asarray(groups)
    starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    sizes = np.diff(np.append(starts, groups.shape[0]))
    weights = pool.get_weight()
    weights = None if weights is None or np.all(np.asarray(weights) == 1) else np.asarray(
        weights, dtype=np.float64)
    return np.asarray(pool.get_label(), dtype=np.float64), sizes, weights


_OPTIONS_DOC = """
    Parameters
    ----------
    metrics : str, MetricCall, list or dict
        What :func:`skrank.evaluate` takes: ``"ndcg_exp@10"``,
        ``"map(denominator=min)@10"``, a list of them, or a dict of label -> name.
    ties : {"average", "stable", "pessimistic", "optimistic"}, default=None
        Tie policy of the metrics that do not set their own; None keeps each
        metric's default, as in :func:`skrank.evaluate` (``ties="trec"`` is
        refused: training data has no docnos).
    no_relevant : {"zero", "one", "skip", "nan", "raise"}, default="zero"
        Value of a query without a relevant document, for the metrics that do
        not set their own, as in :func:`skrank.evaluate` (the libraries' built-in
        metrics give 1 there).
    threshold : float, default=None
        Relevance threshold of the binary metrics; None keeps each metric's
        default of 1, as in :func:`skrank.evaluate`.
"""


def xgboost_metric(metrics, *, ties=None, no_relevant="zero", threshold=None):
    """skrank metrics as an XGBoost ``custom_metric``, for logging and early stopping.

    Use as ``xgb.train(params, dtrain, evals=[(dvalid, "valid")], custom_metric=m,
    maximize=True, early_stopping_rounds=10)`` (set ``"disable_default_eval_metric": 1``
    in ``params`` to log only skrank's), or through :class:`XGBRanker`.
    {options}

    Returns
    -------
    metric : XGBoostMetric
        Callable ``(predt, dmatrix) -> (name, value)`` (a list of pairs for several
        metrics); the values are :func:`skrank.evaluate`'s on the DMatrix's groups.

    Examples
    --------
    >>> import numpy as np, xgboost as xgb
    >>> import skrank.gbdt
    >>> m = skrank.gbdt.xgboost_metric(["ndcg@2", "map(ties=stable, denominator=min)@2"])
    >>> m.names
    ['ndcg@2', 'map(ties=stable,denominator=min)@2']
    >>> d = xgb.DMatrix(np.zeros((4, 1)), label=[1, 0, 0, 1], qid=[1, 1, 2, 2])
    >>> [(name, round(value, 4)) for name, value in m(np.array([.9, .1, .8, .2]), d)]
    [('ndcg@2', 0.8155), ('map(ties=stable,denominator=min)@2', 0.75)]
    """
    return XGBoostMetric(metrics, ties=ties, no_relevant=no_relevant, threshold=threshold)


def lightgbm_metric(metrics, *, ties=None, no_relevant="zero", threshold=None):
    """skrank metrics as a LightGBM evaluation function, for logging and early stopping.

    Use as ``lgb.train(params, dtrain, valid_sets=[dvalid], feval=m,
    callbacks=[lgb.early_stopping(10)])`` (with ``"metric": "None"`` in ``params``
    to log only skrank's), ``LGBMRanker(...).fit(..., eval_metric=m)`` or
    ``skrank.rankers.QueryLGBMRanker(...).fit(..., eval_qid=..., eval_metric=m)``.
    {options}

    Returns
    -------
    metric : LightGBMMetric
        Callable ``(preds, dataset)`` and ``(y_true, y_pred, weight, group)`` ->
        ``(name, value, True)`` (a list of them for several metrics).

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> import skrank.gbdt
    >>> m = skrank.gbdt.lightgbm_metric("ndcg_exp@2")
    >>> d = lgb.Dataset(np.zeros((4, 1)), label=[1, 0, 0, 1], group=[2, 2],
    ...                 params={"verbose": -1}).construct()
    >>> name, value, higher_is_better = m(np.array([.9, .1, .8, .2]), d)
    >>> name, round(value, 4), higher_is_better
    ('ndcg_exp@2', 0.8155, True)
    """
    return LightGBMMetric(metrics, ties=ties, no_relevant=no_relevant, threshold=threshold)


def catboost_metric(metric, pools, *, ties=None, no_relevant="zero", threshold=None):
    """One skrank metric as a CatBoost ``eval_metric``, for logging and early stopping.

    CatBoost passes a Python metric the labels and predictions of a data set but
    not its groups, so the metric is given the pools (with ``group_id``) it will
    see, the training pool included (CatBoost evaluates ``eval_metric`` on it
    too), and finds each set's groups by its labels.  Use as
    ``CatBoostRanker(eval_metric=m, early_stopping_rounds=10).fit(train_pool,
    eval_set=valid_pool)``; the metric is maximised, and logged under its name
    without whitespace.

    Parameters
    ----------
    metric : str or MetricCall
        One metric name :func:`skrank.evaluate` takes (CatBoost takes one
        ``eval_metric``).
    pools : list of catboost.Pool
        Every pool the model is fitted and evaluated on, built with ``group_id``.
    ties : {"average", "stable", "pessimistic", "optimistic"}, default=None
        Tie policy, unless the metric sets its own; None keeps the metric's
        default, as in :func:`skrank.evaluate` (``ties="trec"`` is refused).
    no_relevant : {"zero", "one", "skip", "nan", "raise"}, default="zero"
        Value of a query without a relevant document, unless the metric sets
        its own, as in :func:`skrank.evaluate`.
    threshold : float, default=None
        Relevance threshold of a binary metric; None keeps its default of 1.

    Returns
    -------
    metric : CatBoostMetric
        An object with CatBoost's ``is_max_optimal``, ``evaluate`` and
        ``get_final_error``, of a class named after the metric.

    Examples
    --------
    >>> import numpy as np, catboost
    >>> import skrank.gbdt
    >>> pool = catboost.Pool(np.zeros((4, 1)), label=[1, 0, 0, 1], group_id=[1, 1, 2, 2])
    >>> m = skrank.gbdt.catboost_metric("ndcg@2", pools=[pool])
    >>> type(m).__name__, m.is_max_optimal()
    ('ndcg@2', True)
    >>> value, weight = m.evaluate([np.array([.9, .1, .8, .2])], [1, 0, 0, 1], None)
    >>> round(value, 4)
    0.8155
    """
    func = "catboost_metric"
    if not isinstance(metric, (str, _plan.MetricCall)):
        raise InvalidParameterError(
            f"{func}: metric must be one metric name such as 'ndcg@10' (CatBoost takes one "
            f"eval_metric). Got {type(metric).__name__} instead.")
    planned = _PlannedMetrics(func, metric, ties, no_relevant, threshold)
    if not isinstance(pools, (list, tuple)) or not pools:
        raise InvalidParameterError(
            f"{func}: pools must be a non-empty list of catboost.Pool. Got "
            f"{type(pools).__name__} instead.")
    sets = [_pool_set(func, pool) for pool in pools]
    cls = type(planned.names[0], (CatBoostMetric,), {"__module__": __name__})
    return cls(planned, sets)


for _documented in (xgboost_metric, lightgbm_metric, XGBoostMetric, LightGBMMetric):
    _documented.__doc__ = _documented.__doc__.replace("    {options}", _OPTIONS_DOC.rstrip())
del _documented


def _build_xgb_ranker():
    try:
        import xgboost
    except ImportError as exc:
        raise ImportError("skrank.gbdt.XGBRanker needs xgboost: pip install xgboost") from exc

    class XGBRanker(xgboost.XGBRanker):
        """:class:`xgboost.XGBRanker` whose ``eval_metric`` may be an :class:`XGBoostMetric`.

        ``xgboost.XGBRanker`` calls a callable ``eval_metric`` once per query with
        ``(y_true, y_score)``, gives one-row queries 1.0 and never passes the
        groups; this class hands an :class:`XGBoostMetric` to training as
        ``xgb.train``'s ``custom_metric`` instead (values: :func:`skrank.evaluate`'s
        per-query mean), and early-stops (``early_stopping_rounds``) maximising
        the last of its metrics.  Every other parameter is XGBRanker's.

        Parameters
        ----------
        objective : str, default="rank:ndcg"
            XGBoost's ranking objective (``"rank:ndcg"``, ``"rank:map"``,
            ``"rank:pairwise"``).
        **kwargs
            ``xgboost.XGBRanker``'s parameters; ``eval_metric`` may be an
            :class:`XGBoostMetric` (from :func:`xgboost_metric`), and
            ``early_stopping_rounds`` then early-stops maximising its last metric.
        """

        def _skrank_metric(self):
            metric = self.eval_metric
            return metric if isinstance(metric, XGBoostMetric) else None

        def _configure_fit(self, *args, **kwargs):
            metric = self._skrank_metric()
            if metric is None:
                return super()._configure_fit(*args, **kwargs)
            self.eval_metric = None
            try:
                model, _, params, *rest = super()._configure_fit(*args, **kwargs)
            finally:
                self.eval_metric = metric
            params["disable_default_eval_metric"] = 1
            return (model, metric, params, *rest)

        def fit(self, X, y, **kwargs):
            """Fit the ranker, as ``xgboost.XGBRanker.fit`` does.

            With an :class:`XGBoostMetric` as ``eval_metric`` and
            ``early_stopping_rounds`` set, training early-stops maximising the
            metric's last value on the last evaluation set.

            Parameters
            ----------
            X : array-like of shape (n_samples, n_features)
                The features, rows grouped by query.
            y : array-like of shape (n_samples,)
                The relevance labels.
            **kwargs
                ``xgboost.XGBRanker.fit``'s other arguments: ``qid`` (or
                ``group``), ``eval_set``, ``eval_qid``, ``verbose``, ...

            Returns
            -------
            self : XGBRanker
                The fitted ranker.
            """
            metric, rounds = self._skrank_metric(), self.early_stopping_rounds
            if metric is None or rounds is None:
                return super().fit(X, y, **kwargs)
            # XGBoost would pick the direction from the metric's name: maximise.
            callbacks = self.callbacks
            self.early_stopping_rounds = None
            self.callbacks = [*(callbacks or []), metric.early_stopping(rounds)]
            try:
                return super().fit(X, y, **kwargs)
            finally:
                self.early_stopping_rounds, self.callbacks = rounds, callbacks

    XGBRanker.__module__ = __name__
    XGBRanker.__qualname__ = "XGBRanker"
    return XGBRanker


def __getattr__(name):
    if name == "XGBRanker":
        cls = _build_xgb_ranker()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
