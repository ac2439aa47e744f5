"""Plots of ranking metrics, following scikit-learn's Display conventions.

Each display is built with ``from_predictions(y_true, y_score, qid=...)`` or
``from_estimator(estimator, X, y, qid=...)``, which compute the values with
:func:`skrank.evaluate` and draw them; ``plot(ax=None, ...)`` draws (again) on
an existing or new matplotlib axes and returns the display, with the axes
(``ax_``), its figure (``figure_``) and the drawn artists as attributes.
Several systems are passed as a dict of name -> scores (or name -> estimator).

* :class:`MetricAtKDisplay`: a metric against its cutoff k = 1..K, with
  optional bootstrap confidence bands over queries;
* :class:`PerQueryDisplay`: per-query values of one system, or the sorted
  per-query differences of two (the topic-by-topic plot of IR papers), with a
  paired test over the queries;
* :class:`MetricDistributionDisplay`: box or violin plots of the per-query
  values of several systems.

matplotlib is imported only when something is drawn
(``pip install "skrank[plot]"``).
"""


from collections.abc import Mapping

import numpy as np

from ._paired_tests import _bootstrap_interval, _bootstrap_means
from ._compare import compare
from ._evaluate import evaluate
from ._declare.names import parse_metric_name
from ._core.checks import InvalidParameterError, _describe, check_choice, check_k, check_real
from ._core.docstrings import shared_doc

__all__ = ["MetricAtKDisplay", "MetricDistributionDisplay", "PerQueryDisplay"]


def _pyplot(caller):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} needs matplotlib: pip install matplotlib (or pip install \"skrank[plot]\")."
        ) from exc
    return plt


def _axes(ax, caller):
    if ax is None:
        _, ax = _pyplot(caller).subplots()
    return ax


def _systems(func, y_score, name, default="system"):
    """Scores of one system or a dict of name -> scores, as a dict of arrays."""
    if isinstance(y_score, dict):
        if not y_score:
            raise InvalidParameterError(
                f"{func}: y_score must hold at least one system. Got an empty dict instead.")
        if name is not None:
            raise InvalidParameterError(
                f"{func}: name is for a single system; with a dict of systems the keys are "
                f"their names. Got name={name!r}.")
        return {str(key): value for key, value in y_score.items()}
    return {default if name is None else str(name): y_score}


def _predictions(func, estimator, X, name, qid):
    """Predictions of an estimator, or of a dict of name -> estimator, and the qid."""
    if qid is None:
        from ._scorer import qid_from_X

        qid = qid_from_X(X)
    if qid is None:
        raise ValueError(f"{func}: qid is required: pass qid=... or X as a pandas DataFrame "
                         f"with a 'qid' column.")
    if isinstance(estimator, dict):
        scores = {key: np.asarray(est.predict(X)) for key, est in estimator.items()}
        return _systems(func, scores, name), qid
    default = type(estimator).__name__
    return _systems(func, np.asarray(estimator.predict(X)), name, default=default), qid


def _check_metric(func, metric):
    if not isinstance(metric, str):
        raise InvalidParameterError(f"{func}: metric must be a metric name such as 'ndcg@10'. "
                                    f"Got {_describe(metric)} instead.")
    parse_metric_name(metric, func=func)
    return metric


def _per_query(func, y_true, scores, qid, metric, arguments=None):
    """(qid, {name: per-query values}) of one metric for every system, same query order;
    ``arguments``: the argument each system's scores came from, for messages."""
    values, qids = {}, None
    for key, y_score in scores.items():
        argument = (arguments or {}).get(key, "y_score")
        try:
            res = evaluate(y_true, y_score, qid=qid, metrics=[metric])
        except (ValueError, TypeError) as exc:
            if argument == "y_score" or "y_score" not in str(exc):
                raise
            message = str(exc).replace("y_score", argument)
            if message.startswith("evaluate: "):
                message = f"{func}: " + message[len("evaluate: "):]
            raise type(exc)(message) from None
        qids = res.qid
        values[key] = res.per_query[metric]
    return qids, values


# --------------------------------------------------------------------------------------
# metric@k
# --------------------------------------------------------------------------------------


#: The parameters of MetricAtKDisplay.from_estimator and MetricDistributionDisplay's.
_FROM_ESTIMATOR_PARAMETERS = """
estimator : estimator or dict of str -> estimator
    A fitted estimator with ``predict``, or several by name.
X : array-like or DataFrame of shape (n_samples, n_features)
    Features; a DataFrame's ``qid`` column gives the query ids (and is
    not passed to the estimator).
y : array-like of shape (n_samples,)
    Relevance labels.
qid : array-like of shape (n_samples,), default=None
    Query id of each row; None reads the ``qid`` column of ``X``.
name : str, default=None
    Name of a single estimator (the legend's label).
**kwargs
    Passed to :meth:`from_predictions`.
"""


class MetricAtKDisplay:
    """A ranking metric against its cutoff k = 1..K, for one or several systems.

    Build it with :meth:`from_predictions` or :meth:`from_estimator`; the
    constructor takes precomputed values.

    Parameters
    ----------
    k : ndarray of shape (n_cutoffs,)
        The cutoffs.
    values : dict of str -> ndarray of shape (n_cutoffs,)
        Mean metric at each cutoff, per system.
    metric : str
        The metric's name without a cutoff (``"ndcg"``, ``"ndcg_exp"``, ``"precision"``).
    intervals : dict of str -> (ndarray, ndarray), default=None
        Lower and upper confidence bounds at each cutoff, per system.
    confidence : float, default=None
        Confidence level of ``intervals`` (for the legend).

    Attributes
    ----------
    lines_ : dict of str -> matplotlib Line2D
        The curve of each system.
    bands_ : dict of str -> matplotlib PolyCollection
        The confidence band of each system (empty without intervals).
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> from skrank.datasets import make_ranking
    >>> from skrank.plot import MetricAtKDisplay
    >>> from sklearn.linear_model import LinearRegression
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> linear = LinearRegression().fit(X, y).predict(X)
    >>> display = MetricAtKDisplay.from_predictions(
    ...     y, {"linear": linear, "first feature": X[:, 0]}, qid=qid, metric="ndcg", max_k=10)
    >>> display.values["linear"].round(3)[:3]
    array([0.685, 0.67 , 0.678])
    >>> display.lines_["linear"].get_ydata()[:3].round(3)
    array([0.685, 0.67 , 0.678])
    """

    def __init__(self, *, k, values, metric, intervals=None, confidence=None):
        self.k = np.asarray(k)
        if not isinstance(values, Mapping) or any(
                np.shape(v) != self.k.shape for v in values.values()):
            raise InvalidParameterError(
                f"MetricAtKDisplay: values must be a dict {{system name: one value per k}} "
                f"with {self.k.shape[0] if self.k.ndim else 1} values each (the length of k). "
                f"Got {_describe(values)} instead.")
        self.values = dict(values)
        self.metric = metric
        self.intervals = None if intervals is None else dict(intervals)
        self.confidence = confidence

    @classmethod
    def from_predictions(cls, y_true, y_score, *, qid, metric="ndcg", max_k=20, name=None,
                         confidence=None, n_resamples=1000, random_state=None, ax=None,
                         **kwargs):
        """Compute the metric at k = 1..max_k from scores, and plot it.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Relevance labels.
        y_score : array-like of shape (n_samples,), or dict of str -> array-like
            Scores of one system, or of several by name.
        qid : array-like of shape (n_samples,)
            Query id of each row.
        metric : str, default="ndcg"
            A metric name without a cutoff, in the scorer grammar: ``"ndcg"``,
            ``"ndcg_exp"``, ``"map"``, ``"precision"``, ``"recall"``, ``"mrr"``...
        max_k : int >= 1, default=20
            The largest cutoff; at most the number of documents of the longest
            query.
        name : str, default=None
            Name of a single system (the legend's label).
        confidence : float in (0, 1), default=None
            Draw percentile bootstrap confidence bands at this level, from
            ``n_resamples`` resamples of the queries (the same resamples for
            every system and cutoff).  None draws no bands.
        n_resamples : int, default=1000
        random_state : int, numpy Generator or None, default=None
            Seed of the bootstrap.
        ax : matplotlib Axes, default=None
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        display : MetricAtKDisplay
        """
        func = "MetricAtKDisplay.from_predictions"
        scores = _systems(func, y_score, name)
        max_k = check_k(func, max_k, name="max_k", required=True)
        if not isinstance(metric, str) or "@" in metric:
            raise InvalidParameterError(
                f"{func}: metric must be a metric name without a cutoff, such as 'ndcg' or "
                f"'precision' (the cutoffs are 1..max_k). Got {_describe(metric)} instead.")
        if confidence is not None:
            confidence = check_real(func, "confidence", confidence, low=0, high=1,
                                    low_open=True, high_open=True)
            n_resamples = check_k(func, n_resamples, name="n_resamples", required=True)
        # No cutoff beyond the longest query is drawn (max_k=10**9 listed 10**9 names).
        qid_array = np.asarray(qid)
        if qid_array.ndim == 1 and qid_array.size:
            max_k = min(max_k, int(np.unique(qid_array, return_counts=True)[1].max()))
        ks = np.arange(1, max_k + 1)
        names = [f"{metric}@{k}" for k in ks]
        _check_metric(func, names[0])
        values, per_query = {}, {}
        for key, y_s in scores.items():
            res = evaluate(y_true, y_s, qid=qid, metrics=names)
            values[key] = np.array([res.mean[label] for label in names])
            per_query[key] = np.column_stack([res.per_query[label] for label in names])
        intervals = None
        if confidence is not None:
            rng = np.random.default_rng(random_state)
            stacked = np.concatenate(list(per_query.values()), axis=1)
            if np.isnan(stacked).any():
                raise ValueError(f"{func}: confidence bands need a value for every query; "
                                 f"use a no_relevant policy other than 'skip' or 'nan'.")
            dist = _bootstrap_means(stacked, n_resamples, rng)
            low, high = _bootstrap_interval(stacked, dist, confidence, "percentile")
            intervals = {key: (low[i * max_k:(i + 1) * max_k], high[i * max_k:(i + 1) * max_k])
                         for i, key in enumerate(per_query)}
        display = cls(k=ks, values=values, metric=metric, intervals=intervals,
                      confidence=confidence)
        return display.plot(ax=ax, **kwargs)

    @classmethod
    @shared_doc(from_estimator_parameters=_FROM_ESTIMATOR_PARAMETERS)
    def from_estimator(cls, estimator, X, y, *, qid=None, name=None, **kwargs):
        """Compute the metric at k = 1..max_k from an estimator's predictions, and plot it.

        ``estimator`` is a fitted estimator or a dict of name -> fitted
        estimator; ``qid`` defaults to the ``qid`` column of a DataFrame ``X``.
        Other arguments as in :meth:`from_predictions`.

        Parameters
        ----------
        {from_estimator_parameters}

        Returns
        -------
        display : MetricAtKDisplay
        """
        scores, qid = _predictions("MetricAtKDisplay.from_estimator", estimator, X, name, qid)
        return cls.from_predictions(y, scores, qid=qid, **kwargs)

    def plot(self, ax=None, *, title=None, legend=True, **line_kwargs):
        """Draw the curves (and bands) on ``ax`` (a new figure when None).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        title : str, default=None
        legend : bool, default=True
        **line_kwargs
            Passed to ``Axes.plot`` for every curve.

        Returns
        -------
        display : MetricAtKDisplay
        """
        ax = _axes(ax, "MetricAtKDisplay.plot")
        self.lines_, self.bands_ = {}, {}
        for key, values in self.values.items():
            kw = {"marker": "o", "markersize": 3, "label": key, **line_kwargs}
            (line,) = ax.plot(self.k, values, **kw)
            self.lines_[key] = line
            if self.intervals is not None:
                low, high = self.intervals[key]
                self.bands_[key] = ax.fill_between(self.k, low, high, alpha=0.2, linewidth=0,
                                                   color=line.get_color())
        ax.set_xlabel("cutoff k")
        ax.set_ylabel(f"mean {self.metric}@k")
        ax.set_xlim(self.k[0] - 0.5, self.k[-1] + 0.5)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, alpha=0.3)
        if title is not None:
            ax.set_title(title)
        if legend:
            band = (f"; bands: {self.confidence:.0%} bootstrap CI"
                    if self.intervals is not None else "")
            ax.legend(title=(f"{self.metric}@k{band}" if band else None), fontsize="small",
                      title_fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


# --------------------------------------------------------------------------------------
# per query
# --------------------------------------------------------------------------------------


class PerQueryDisplay:
    """Per-query values of one system, or sorted per-query differences of two.

    With two systems this is the topic-by-topic plot of IR papers: one bar
    per query, the difference ``system - baseline`` sorted from the largest
    win to the largest loss, wins and losses coloured, differences smaller
    than ``min_difference`` drawn grey; the title gives the mean difference and
    a two-sided paired randomization test over the queries.

    Parameters
    ----------
    qid : ndarray of shape (n_queries,)
        Query ids, in plotting order.
    values : ndarray of shape (n_queries,)
        Per-query values (one system) or differences (two systems), in plotting order.
    metric : str
    name : str
    baseline_name : str, default=None
        Name of the baseline; None for a single system.
    p_value : float, default=None
        Two-sided p-value of the paired randomization test of the mean
        difference over queries (:func:`skrank.compare`), for two systems.
    alpha : float, default=0.05
        Significance level of the test.
    min_difference : float, default=0.0
        Differences with an absolute value below this count as ties.
    p_label : str, default="uncorrected"
        What the p-value is, shown in the title beside it: ``"uncorrected"``
        (this comparison alone), or the correction it carries when it comes
        from a :class:`~skrank.Comparison` of several comparisons.

    Attributes
    ----------
    bars_ : matplotlib BarContainer
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> from skrank.datasets import make_ranking
    >>> from skrank.plot import PerQueryDisplay
    >>> from sklearn.linear_model import LinearRegression
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> linear = LinearRegression().fit(X, y).predict(X)
    >>> display = PerQueryDisplay.from_predictions(
    ...     y, linear, qid=qid, baseline_score=X[:, 0], metric="ndcg@10",
    ...     name="linear", baseline_name="first feature", random_state=0)
    >>> display.values.shape, round(display.p_value, 4)
    ((50,), 0.0001)
    """

    def __init__(self, *, qid, values, metric, name, baseline_name=None, p_value=None,
                 alpha=0.05, min_difference=0.0, p_label="uncorrected"):
        self.p_label = p_label
        self.qid = np.asarray(qid)
        self.values = np.asarray(values)
        if self.qid.ndim != 1 or self.values.shape != self.qid.shape:
            raise ValueError(
                f"PerQueryDisplay: qid and values must be 1-D with one value per query. Got "
                f"shapes {self.qid.shape} and {self.values.shape} instead.")
        self.metric = metric
        self.name = name
        self.baseline_name = baseline_name
        self.p_value = p_value
        self.alpha = alpha
        self.min_difference = min_difference

    @classmethod
    def from_predictions(cls, y_true, y_score, *, qid, baseline_score=None, metric="ndcg@10",
                         name=None, baseline_name=None, alpha=0.05, min_difference=0.0,
                         n_resamples=10_000, random_state=None, comparison=None, ax=None,
                         **kwargs):
        """Compute per-query values (or differences to a baseline) and plot them.

        Parameters
        ----------
        y_true, qid : array-like of shape (n_samples,)
        y_score : array-like of shape (n_samples,)
            Scores of the system.
        baseline_score : array-like of shape (n_samples,), default=None
            Scores of a second system: plot ``system - baseline`` per query.
        metric : str, default="ndcg@10"
            A metric name in the scorer grammar.
        name, baseline_name : str, default=None
            Names for the title and legend ("system", "baseline" when None).
        alpha : float in (0, 1), default=0.05
            Significance level of the paired test.
        min_difference : float >= 0, default=0.0
            Differences with an absolute value below this are drawn as ties.
        n_resamples : int, default=10000
            Sign flips of the randomization test (exact when 2**n_queries is smaller).
        comparison : Comparison, default=None
            A :func:`skrank.compare` result holding this pair (``metric``,
            ``name`` and ``baseline_name`` as its metric and systems): the title
            then shows that table's corrected p-value, test and alpha, so that
            figure and table agree.  None: this pair's own randomization test,
            titled "uncorrected".
        random_state : int, numpy Generator or None, default=None
        ax : matplotlib Axes, default=None
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        display : PerQueryDisplay
        """
        func = "PerQueryDisplay.from_predictions"
        _check_metric(func, metric)
        alpha = check_real(func, "alpha", alpha, low=0, high=1, low_open=True, high_open=True)
        min_difference = check_real(func, "min_difference", min_difference, low=0)
        name = "system" if name is None else str(name)
        if baseline_score is None:
            qids, per_query = _per_query(func, y_true, {name: y_score}, qid, metric)
            values = per_query[name]
            keep = ~np.isnan(values)
            order = np.argsort(-values[keep], kind="stable")
            display = cls(qid=qids[keep][order], values=values[keep][order], metric=metric,
                          name=name, alpha=alpha, min_difference=min_difference)
            return display.plot(ax=ax, **kwargs)
        baseline_name = "baseline" if baseline_name is None else str(baseline_name)
        if baseline_name == name:
            raise InvalidParameterError(f"{func}: name and baseline_name must differ. "
                                        f"Got {name!r} for both.")
        qids, per_query = _per_query(func, y_true, {name: y_score, baseline_name: baseline_score},
                                     qid, metric, {baseline_name: "baseline_score"})
        a, b = per_query[name], per_query[baseline_name]
        keep = ~(np.isnan(a) | np.isnan(b))
        a, b, qids = a[keep], b[keep], qids[keep]
        if comparison is None:
            pair = compare({baseline_name: (qids, b), name: (qids, a)}, baseline=baseline_name,
                           test="randomization", n_resamples=n_resamples, correction=None,
                           random_state=random_state).pairs[0]
            p_value, p_label = pair.p_value, "uncorrected"
        else:
            p_value, p_label, alpha = _corrected_p(func, comparison, metric, name, baseline_name)
        diff = a - b
        order = np.argsort(-diff, kind="stable")
        display = cls(qid=qids[order], values=diff[order], metric=metric, name=name,
                      baseline_name=baseline_name, p_value=p_value, alpha=alpha,
                      min_difference=min_difference, p_label=p_label)
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, qid=None, baseline=None, name=None,
                       baseline_name=None, **kwargs):
        """Per-query values of a fitted estimator (minus those of a ``baseline``
        estimator), and plot them; ``qid`` defaults to the ``qid`` column of a
        DataFrame ``X``.  Other arguments as in :meth:`from_predictions`.

        Parameters
        ----------
        estimator : estimator
            A fitted estimator with ``predict``.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features; a DataFrame's ``qid`` column gives the query ids (and is
            not passed to the estimators).
        y : array-like of shape (n_samples,)
            Relevance labels.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row; None reads the ``qid`` column of ``X``.
        baseline : estimator, default=None
            A second fitted estimator: plot ``estimator - baseline`` per query.
        name, baseline_name : str, default=None
            Names for the title and legend.
        **kwargs
            Passed to :meth:`from_predictions`.

        Returns
        -------
        display : PerQueryDisplay
        """
        func = "PerQueryDisplay.from_estimator"
        scores, qid = _predictions(func, estimator, X, name, qid)
        (name, y_score), = scores.items()
        baseline_score = None
        if baseline is not None:
            (base_default, baseline_score), = _predictions(
                func, baseline, X, baseline_name, qid)[0].items()
            baseline_name = base_default
        return cls.from_predictions(y, y_score, qid=qid, baseline_score=baseline_score,
                                    name=name, baseline_name=baseline_name, **kwargs)

    def plot(self, ax=None, *, title=None, legend=True, colors=("tab:blue", "tab:red", "0.6")):
        """Draw one bar per query on ``ax`` (a new figure when None).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        title : str, default=None
            None: a title with the mean (difference) and, for two systems, the test.
        legend : bool, default=True
        colors : (str, str, str), default=("tab:blue", "tab:red", "0.6")
            Colours of wins, losses and ties (one system: values, -, -).

        Returns
        -------
        display : PerQueryDisplay
        """
        ax = _axes(ax, "PerQueryDisplay.plot")
        positions = np.arange(self.values.shape[0])
        n = self.values.shape[0]
        if isinstance(colors, str) or not hasattr(colors, "__len__") or len(colors) != 3:
            raise InvalidParameterError(
                f"PerQueryDisplay.plot: colors must be three colours (wins, losses, ties). "
                f"Got {_describe(colors)} instead.")
        win_color, loss_color, tie_color = colors
        if self.baseline_name is None:
            self.bars_ = ax.bar(positions, self.values, width=1.0, color=win_color,
                                linewidth=0, label=self.name)
            mean = float(np.mean(self.values)) if n else float("nan")
            self.mean_line_ = ax.axhline(mean, color="k", linewidth=1, linestyle="--",
                                         label=f"mean {mean:.3f}")
            ax.set_ylabel(self.metric)
            default_title = f"{self.name}: {self.metric} per query"
        else:
            win = self.values >= self.min_difference
            loss = self.values <= -self.min_difference
            if self.min_difference == 0:
                win, loss = self.values > 0, self.values < 0
            color = np.where(win, win_color, np.where(loss, loss_color, tie_color))
            self.bars_ = ax.bar(positions, self.values, width=1.0, color=color, linewidth=0)
            self.mean_line_ = ax.axhline(0.0, color="k", linewidth=0.8)
            tie_label = ("tied" if self.min_difference == 0
                         else f"|difference| < {self.min_difference:g}")
            if legend:
                from matplotlib.patches import Patch

                handles = [Patch(color=win_color, label=f"{self.name} better: {int(win.sum())}"),
                           Patch(color=loss_color,
                                 label=f"{self.baseline_name} better: {int(loss.sum())}"),
                           Patch(color=tie_color,
                                 label=f"{tie_label}: {int((~win & ~loss).sum())}")]
                ax.legend(handles=handles, fontsize="small", loc="upper right")
            ax.set_ylabel(f"{self.metric} difference")
            mean = float(np.mean(self.values)) if n else float("nan")
            # compare's rule (p <= alpha), so that the figure agrees with its table
            verdict = ("significant" if self.p_value is not None and self.p_value <= self.alpha
                       else "not significant")
            test = ("paired randomization test" if self.p_label == "uncorrected"
                    else "paired test")
            default_title = (f"{self.name} − {self.baseline_name}\nmean {mean:+.3f}, "
                             f"{test} p = {self.p_value:.2g}, {self.p_label} "
                             f"({verdict} at {self.alpha:g})")
        ax.set_xlabel(f"queries ({n}), sorted" if n else "queries")
        ax.set_xlim(-0.5, max(n, 1) - 0.5)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(default_title if title is None else title, fontsize="medium")
        if legend and self.baseline_name is None:
            ax.legend(fontsize="small", loc="upper right")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


# --------------------------------------------------------------------------------------
# distributions
# --------------------------------------------------------------------------------------


class MetricDistributionDisplay:
    """Box or violin plots of the per-query values of several systems.

    Parameters
    ----------
    values : dict of str -> ndarray of shape (n_queries,)
        Per-query values of each system.
    metric : str

    Attributes
    ----------
    artists_ : dict
        What ``Axes.boxplot`` or ``Axes.violinplot`` returned.
    means_ : matplotlib Line2D
        The markers of the means.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> from skrank.datasets import make_ranking
    >>> from skrank.plot import MetricDistributionDisplay
    >>> from sklearn.linear_model import LinearRegression
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> linear = LinearRegression().fit(X, y).predict(X)
    >>> display = MetricDistributionDisplay.from_predictions(
    ...     y, {"linear": linear, "first feature": X[:, 0]}, qid=qid, metric="ndcg@10")
    >>> {name: round(float(v.mean()), 3) for name, v in display.values.items()}
    {'linear': 0.7, 'first feature': 0.217}
    """

    def __init__(self, *, values, metric):
        if not isinstance(values, Mapping) or not values:
            raise InvalidParameterError(
                f"MetricDistributionDisplay: values must be a non-empty dict {{system name: "
                f"per-query values}}. Got {_describe(values)} instead.")
        self.values = {key: np.asarray(v) for key, v in values.items()}
        self.metric = metric

    @classmethod
    def from_predictions(cls, y_true, y_score, *, qid, metric="ndcg@10", name=None,
                         kind="box", ax=None, **kwargs):
        """Compute per-query values of each system and plot their distributions.

        Parameters
        ----------
        y_true, qid : array-like of shape (n_samples,)
        y_score : array-like of shape (n_samples,), or dict of str -> array-like
            Scores of one system, or of several by name.
        metric : str, default="ndcg@10"
            A metric name in the scorer grammar.
        name : str, default=None
            Name of a single system.
        kind : {"box", "violin"}, default="box"
        ax : matplotlib Axes, default=None
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        display : MetricDistributionDisplay
        """
        func = "MetricDistributionDisplay.from_predictions"
        _check_metric(func, metric)
        check_choice(func, "kind", kind, ("box", "violin"))
        _, per_query = _per_query(func, y_true, _systems(func, y_score, name), qid, metric)
        values = {key: v[~np.isnan(v)] for key, v in per_query.items()}
        return cls(values=values, metric=metric).plot(ax=ax, kind=kind, **kwargs)

    @classmethod
    @shared_doc(from_estimator_parameters=_FROM_ESTIMATOR_PARAMETERS)
    def from_estimator(cls, estimator, X, y, *, qid=None, name=None, **kwargs):
        """Per-query values of a fitted estimator or a dict of name -> estimator;
        ``qid`` defaults to the ``qid`` column of a DataFrame ``X``.  Other
        arguments as in :meth:`from_predictions`.

        Parameters
        ----------
        {from_estimator_parameters}

        Returns
        -------
        display : MetricDistributionDisplay
        """
        func = "MetricDistributionDisplay.from_estimator"
        scores, qid = _predictions(func, estimator, X, name, qid)
        return cls.from_predictions(y, scores, qid=qid, **kwargs)

    def plot(self, ax=None, *, kind="box", title=None):
        """Draw the distributions on ``ax`` (a new figure when None); white
        diamonds mark the means.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        kind : {"box", "violin"}, default="box"
        title : str, default=None

        Returns
        -------
        display : MetricDistributionDisplay
        """
        check_choice("MetricDistributionDisplay.plot", "kind", kind, ("box", "violin"))
        ax = _axes(ax, "MetricDistributionDisplay.plot")
        data = list(self.values.values())
        positions = np.arange(1, len(data) + 1)
        if kind == "box":
            self.artists_ = ax.boxplot(data, positions=positions, widths=0.5,
                                       patch_artist=True, showfliers=True,
                                       medianprops={"color": "k"})
            for patch, color in zip(self.artists_["boxes"], _cycle_colors(len(data))):
                patch.set_facecolor(color)
                patch.set_alpha(0.6)
        else:
            self.artists_ = ax.violinplot(data, positions=positions, widths=0.7,
                                          showmedians=True, showextrema=True)
            for body, color in zip(self.artists_["bodies"], _cycle_colors(len(data))):
                body.set_facecolor(color)
                body.set_alpha(0.6)
            for part in ("cbars", "cmins", "cmaxes", "cmedians"):
                self.artists_[part].set_color("k")
                self.artists_[part].set_linewidth(1)
        means = [float(np.mean(v)) if v.size else np.nan for v in data]
        (self.means_,) = ax.plot(positions, means, linestyle="none", marker="D",
                                 markerfacecolor="white", markeredgecolor="k", markersize=6,
                                 label="mean")
        ax.set_xticks(positions)
        ax.set_xticklabels(list(self.values), rotation=0 if len(data) <= 4 else 30,
                           ha="center" if len(data) <= 4 else "right")
        ax.set_ylabel(f"{self.metric} per query")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small", loc="best")
        if title is not None:
            ax.set_title(title)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


def _cycle_colors(n):
    import matplotlib

    cycle = matplotlib.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    return [cycle[i % len(cycle)] for i in range(n)]


def _corrected_p(func, comparison, metric, name, baseline_name):
    """``(p_adjusted, label, alpha)`` of the pair ``name`` vs ``baseline_name`` on ``metric``
    in a :class:`~skrank.Comparison`, the label naming its test and correction."""
    pairs = [p for p in getattr(comparison, "pairs", ()) if p.metric == metric
             and {p.system_a, p.system_b} == {name, baseline_name}]
    if not pairs:
        raise InvalidParameterError(
            f"{func}: comparison must be a skrank.compare result holding metric {metric!r} "
            f"for systems {name!r} and {baseline_name!r}. Got "
            f"{_describe(comparison) if not hasattr(comparison, 'pairs') else 'none such'} "
            f"instead.")
    pair = pairs[0]
    n = len(comparison.pairs)
    if comparison.correction is None or n == 1:
        label = f"{comparison.test}, uncorrected"
    else:
        label = f"{comparison.test}, {comparison.correction}-corrected over {n} comparisons"
    return pair.p_adjusted, label, comparison.alpha
