"""How sure is one system's number?  Confidence intervals of an
:class:`~skrank.Evaluation`'s means and per-segment breakdowns.

The bootstrap draws its resamples with :func:`skrank._paired_tests._bootstrap_means`
(the code :func:`skrank.compare` uses, one matrix product per batch of
resamples) and forms BCa and percentile intervals with scipy.stats.bootstrap's
formulas; a weighted mean ``sum(w v) / sum(w)`` is the ratio of the resampled
means of ``w v`` and ``w``, so the same draws serve both.
"""

from dataclasses import dataclass

import numpy as np
from scipy import special

from ._paired_tests import _bootstrap_means, _quantiles
from ._compare import _check_random_state
from ._core.checks import InvalidParameterError, _describe, check_choice, check_k, check_real
from ._engine.xp import to_numpy
from .io._fields import as_str_ids, str_array

METHODS = ("bootstrap", "bca", "percentile", "t")


def _check(func, metric, metrics, method, confidence, n_resamples, seed):
    check_choice(func, "method", method, METHODS)
    confidence = check_real(func, "confidence", confidence, low=0, high=1, low_open=True,
                            high_open=True)
    n_resamples = check_k(func, n_resamples, required=True, name="n_resamples")
    rng = _check_random_state(func, seed, "seed")
    if metric is None:
        chosen = list(metrics)
    else:
        chosen = [metric] if isinstance(metric, str) else list(metric)
        unknown = [m for m in chosen if not isinstance(m, str) or m not in metrics]
        if unknown or not chosen:
            raise InvalidParameterError(
                f"{func}: metric must be None (every metric), one of the evaluation's metrics "
                f"{list(metrics)} or a list of them. Got {_describe(metric)} instead.")
    return ("bca" if method == "bootstrap" else method), confidence, n_resamples, rng


def _host(values):

    return np.asarray(to_numpy(values), dtype=np.float64)


def _weighted_interval(values, weights, method, confidence, n_resamples, rng):
    """``(mean, low, high)`` of the weighted mean of ``values`` (finite, 1-D)."""
    mean, low, high = _intervals(values[:, None], weights, method, confidence, n_resamples, rng)
    return float(mean[0]), float(low[0]), float(high[0])


def _intervals(values, weights, method, confidence, n_resamples, rng):
    """``(mean, low, high)`` arrays of the weighted mean of each column of ``values``
    (n_queries, n_columns), all finite; the columns share one set of resamples.

    ``weights`` None: the plain mean.  The t-interval uses the ratio estimator's
    standard error ``sqrt(n / (n - 1) * sum(w_i^2 (v_i - m)^2)) / sum(w)``, which
    is ``sd / sqrt(n)`` for equal weights, with n - 1 degrees of freedom.  A column
    without spread (or one query) gets a point interval (scipy gives NaN).
    """
    n, m = values.shape
    w = np.ones(n) if weights is None else weights
    total = w.sum()
    mean = (w[:, None] * values).sum(axis=0) / total
    point = np.all(values == values[:1], axis=0) | (n < 2)
    alpha = (1 - confidence) / 2
    if point.all():
        return mean, mean.copy(), mean.copy()
    if method == "t":
        from scipy import stats

        se = np.sqrt(n / (n - 1) * ((w[:, None] ** 2) * (values - mean) ** 2).sum(axis=0)) / total
        point = point | ~(se > 0)   # a spread below the smallest float: no interval to draw
        low, high = stats.t.interval(confidence, n - 1, loc=mean, scale=np.where(point, 1.0, se))
    else:
        if weights is None:
            dist = _bootstrap_means(values, n_resamples, rng)
        else:   # the same draws of queries for the numerators and the denominator
            sums = _bootstrap_means(np.column_stack([w[:, None] * values, w]), n_resamples, rng)
            with np.errstate(invalid="ignore", divide="ignore"):
                dist = sums[:, :m] / sums[:, m:]   # resamples of zero-weight queries only: NaN
            dist = dist[~np.isnan(dist).any(axis=1)]
        sorted_dist = np.sort(dist, axis=0)
        if method == "percentile":
            levels = np.full(m, alpha), np.full(m, 1 - alpha)
        else:
            # BCa (Efron & Tibshirani 1993, 14.3) as scipy.stats.bootstrap computes it:
            # bias from the share of resamples below the estimate, acceleration from the
            # jackknife (leave-one-out means, analytic: no loop)
            below = (dist < mean).sum(axis=0) + (dist <= mean).sum(axis=0)
            z0 = special.ndtri(below / (2 * dist.shape[0]))
            wv = w[:, None] * values
            loo = (wv.sum(axis=0) - wv) / (total - w)[:, None]
            centred = loo.mean(axis=0) - loo
            spread = (centred ** 2).sum(axis=0) ** 1.5
            accel = (centred ** 3).sum(axis=0) / (6 * np.where(spread > 0, spread, 1.0))
            z = special.ndtri(alpha)
            levels = tuple(special.ndtr(z0 + (z0 + zz) / (1 - accel * (z0 + zz)))
                           for zz in (z, -z))
        low, high = _quantiles(sorted_dist, levels[0]), _quantiles(sorted_dist, levels[1])
    return mean, np.where(point, mean, low), np.where(point, mean, high)


@dataclass(frozen=True)
class ConfidenceIntervals:
    """Result of :meth:`skrank.Evaluation.confidence_interval`.

    Attributes
    ----------
    metrics : list of str
    mean, low, high : dict of str -> float
        Each metric's mean and the bounds of its interval.
    n_queries : dict of str -> int
        Queries behind each mean (queries skipped by ``no_relevant="skip"`` are
        left out).
    method : str
        ``"bca"``, ``"percentile"`` or ``"t"``.
    confidence : float
    n_resamples : int or None
        Bootstrap resamples (None for the t-interval).
    """

    metrics: list
    mean: dict
    low: dict
    high: dict
    n_queries: dict
    method: str
    confidence: float
    n_resamples: object

    def to_pandas(self):
        """One row per metric: ``mean, ci_low, ci_high, n_queries`` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame({"mean": [self.mean[m] for m in self.metrics],
                             "ci_low": [self.low[m] for m in self.metrics],
                             "ci_high": [self.high[m] for m in self.metrics],
                             "n_queries": [self.n_queries[m] for m in self.metrics]},
                            index=pd.Index(self.metrics, name="metric"))

    def _rows(self):
        return [(m, f"{self.mean[m]:.4f}", f"[{self.low[m]:.4f}, {self.high[m]:.4f}]",
                 str(self.n_queries[m])) for m in self.metrics]

    def _legend(self):
        how = {"bca": "BCa bootstrap", "percentile": "percentile bootstrap",
               "t": "Student's t"}[self.method]
        extra = f", {self.n_resamples} resamples" if self.n_resamples else ""
        return f"{100 * self.confidence:g}% {how} intervals{extra}."

    def to_markdown(self):
        """A markdown table: metric, mean, interval, queries."""
        lines = ["| metric | mean | interval | queries |", "|---|---:|---:|---:|"]
        lines += ["| " + " | ".join(row) + " |" for row in self._rows()]
        return "\n".join(lines) + "\n\n" + self._legend() + "\n"

    def to_latex(self):
        """A LaTeX tabular: metric, mean, interval, queries."""
        lines = [r"\begin{tabular}{lrrr}", r"\toprule",
                 r"Metric & Mean & Interval & Queries \\", r"\midrule"]
        lines += [" & ".join((m.replace("_", r"\_"), mean, ci, n)) + r" \\"
                  for m, mean, ci, n in self._rows()]
        lines += [r"\bottomrule", r"\end{tabular}", "% " + self._legend()]
        return "\n".join(lines) + "\n"

    def __repr__(self):
        body = ", ".join(f"{m}={self.mean[m]:.4f} [{self.low[m]:.4f}, {self.high[m]:.4f}]"
                         for m in self.metrics)
        return f"ConfidenceIntervals({self.method}, {100 * self.confidence:g}%: {body})"


def confidence_interval(evaluation, metric=None, *, method="bootstrap", confidence=0.95,
                        n_resamples=10_000, seed=None):
    """See :meth:`skrank.Evaluation.confidence_interval`."""
    func = "Evaluation.confidence_interval"
    method, confidence, n_resamples, rng = _check(func, metric, evaluation.per_query, method,
                                                  confidence, n_resamples, seed)
    metrics = list(evaluation.per_query) if metric is None else (
        [metric] if isinstance(metric, str) else list(metric))
    weights = None if evaluation.weights is None else _host(evaluation.weights)
    out = {"mean": {}, "low": {}, "high": {}, "n_queries": {}}
    columns = {name: _host(evaluation.per_query[name]) for name in metrics}
    # metrics that skip the same queries share one set of resamples (one matrix product)
    groups = {}
    for name, values in columns.items():
        groups.setdefault(np.isnan(values).tobytes(), []).append(name)
    for names in groups.values():
        kept = ~np.isnan(columns[names[0]])
        w = None if weights is None else weights[kept]
        if not kept.any() or (w is not None and w.sum() <= 0):
            raise ValueError(f"{func}: {names[0]!r} has no query to average (every query was "
                             f"skipped or weighs 0).")
        block = np.column_stack([columns[name][kept] for name in names])
        means, lows, highs = _intervals(block, w, method, confidence, n_resamples, rng)
        for j, name in enumerate(names):
            for key, value in zip(out, (means[j], lows[j], highs[j], kept.sum())):
                out[key][name] = float(value) if key != "n_queries" else int(value)
    out = {key: {name: out[key][name] for name in metrics} for key in out}   # metric order
    return ConfidenceIntervals(metrics=metrics, method=method, confidence=confidence,
                               n_resamples=None if method == "t" else n_resamples, **out)


# --------------------------------------------------------------------------------------
# segments
# --------------------------------------------------------------------------------------


def _segment_of_queries(func, evaluation, segment):
    """The segment of each query of ``evaluation`` (an array aligned with ``qid``)."""
    from collections.abc import Mapping

    qids = np.asarray(_host_ids(evaluation.qid))
    n = qids.shape[0]
    if isinstance(segment, Mapping):
        keys = str_array([str(k) for k in segment])
        values = np.asarray(list(segment.values()))
        if np.unique(keys).shape[0] != keys.shape[0]:
            raise InvalidParameterError(f"{func}: segment's query ids must be distinct as "
                                        f"strings. Got {_describe(segment)} instead.")
        sorter = np.argsort(keys)
        wanted = as_str_ids(qids)
        if keys.dtype.kind != wanted.dtype.kind:  # a long id: compare as Python str
            keys, wanted = keys.astype(object), wanted.astype(object)
        at = np.minimum(np.searchsorted(keys[sorter], wanted), max(keys.shape[0] - 1, 0))
        found = (keys[sorter][at] == wanted) if keys.shape[0] else np.zeros(n, dtype=bool)
        if not found.all():
            missing = qids[~found]
            raise ValueError(
                f"{func}: segment must give a segment for every evaluated query. Got none for "
                f"{missing.shape[0]} of {n} queries (first: {missing[0].item()!r}). Add them "
                f"(e.g. an 'other' segment) or evaluate only the queries you segment.")
        return values[sorter][at]
    if hasattr(segment, "index") and hasattr(segment, "reindex"):  # a pandas Series by qid
        return _segment_of_queries(func, evaluation, dict(zip(segment.index, segment.to_numpy())))
    arr = np.asarray(segment)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InvalidParameterError(
            f"{func}: segment must be a mapping query id -> segment, a pandas Series indexed "
            f"by query id, or an array of one segment per query (aligned with "
            f"Evaluation.qid, {n} queries). Got {_describe(segment)} instead.")
    return arr


def _host_ids(qid):

    return to_numpy(qid)


@dataclass(frozen=True)
class SegmentBreakdown:
    """Result of :meth:`skrank.Evaluation.by`: per-segment means.

    Attributes
    ----------
    segments : ndarray
        The distinct segments, sorted.
    metrics : list of str
    n_queries : dict of str -> ndarray of int
        Queries of each segment behind each metric's mean (skipped queries left out).
    mean, low, high : dict of str -> ndarray
        Per-segment weighted means and the bounds of their intervals (NaN for
        a segment whose queries were all skipped by ``no_relevant="skip"``:
        its count is 0; a point interval for one query or no spread).
    method : str
    confidence : float
    """

    segments: np.ndarray
    metrics: list
    n_queries: dict
    mean: dict
    low: dict
    high: dict
    method: str
    confidence: float

    def to_pandas(self):
        """One row per segment; per metric: mean, ci_low, ci_high and n (needs pandas)."""
        import pandas as pd

        columns = {}
        for m in self.metrics:
            columns[(m, "mean")] = self.mean[m]
            columns[(m, "ci_low")] = self.low[m]
            columns[(m, "ci_high")] = self.high[m]
            columns[(m, "n")] = self.n_queries[m]
        frame = pd.DataFrame(columns, index=pd.Index(self.segments, name="segment"))
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
        return frame

    def to_markdown(self):
        """A markdown table: one row per segment, ``mean [low, high]`` per metric, and n."""
        lines = ["| segment | n | " + " | ".join(self.metrics) + " |",
                 "|---|---:|" + "---:|" * len(self.metrics)]
        for i, s in enumerate(self.segments.tolist()):
            n = self.n_queries[self.metrics[0]][i]
            cells = [f"{self.mean[m][i]:.4f} [{self.low[m][i]:.4f}, {self.high[m][i]:.4f}]"
                     for m in self.metrics]
            lines.append(f"| {s} | {n} | " + " | ".join(cells) + " |")
        how = {"bca": "BCa bootstrap", "percentile": "percentile bootstrap",
               "t": "Student's t"}[self.method]
        return "\n".join(lines) + f"\n\n{100 * self.confidence:g}% {how} intervals.\n"


def by(evaluation, segment, *, method="t", confidence=0.95, n_resamples=10_000, seed=None):
    """See :meth:`skrank.Evaluation.by`."""
    func = "Evaluation.by"
    method, confidence, n_resamples, rng = _check(func, None, evaluation.per_query, method,
                                                  confidence, n_resamples, seed)
    seg = _segment_of_queries(func, evaluation, segment)
    try:
        segments, codes = np.unique(seg, return_inverse=True)
    except TypeError:
        raise InvalidParameterError(f"{func}: segments must be comparable values (all numbers "
                                    f"or all strings). Got {_describe(segment)} instead.") from None
    codes = codes.reshape(-1)
    k = segments.shape[0]
    weights = (np.ones(codes.shape[0]) if evaluation.weights is None
               else _host(evaluation.weights))
    out = {"n_queries": {}, "mean": {}, "low": {}, "high": {}}
    for name in evaluation.per_query:
        values = _host(evaluation.per_query[name])
        kept = ~np.isnan(values)
        w = np.where(kept, weights, 0.0)
        v = np.where(kept, values, 0.0)
        n = np.bincount(codes, weights=kept, minlength=k).astype(np.int64)
        total = np.bincount(codes, weights=w, minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.bincount(codes, weights=w * v, minlength=k) / total
        if method == "t":   # vectorised over segments
            from scipy import stats

            resid = np.bincount(codes, weights=w ** 2 * (v - mean[codes]) ** 2, minlength=k)
            with np.errstate(invalid="ignore", divide="ignore"):
                se = np.sqrt(n / (n - 1) * resid) / total
                low, high = stats.t.interval(confidence, np.maximum(n - 1, 1), loc=mean,
                                             scale=np.where(se > 0, se, 1.0))
            point = (se == 0) | (n < 2)
            low = np.where(point, mean, low)
            high = np.where(point, mean, high)
        else:   # a bootstrap per segment (segments are few), each vectorised
            low, high = np.full(k, np.nan), np.full(k, np.nan)
            for s in range(k):
                mine = (codes == s) & kept
                if mine.any() and weights[mine].sum() > 0:
                    _, low[s], high[s] = _weighted_interval(
                        values[mine], None if evaluation.weights is None else weights[mine],
                        method, confidence, n_resamples, rng)
        for key, value in zip(out, (n, mean, low, high)):
            out[key][name] = value
    return SegmentBreakdown(segments=segments, metrics=list(evaluation.per_query),
                            method=method, confidence=confidence, **out)


# --------------------------------------------------------------------------------------
# intervals in Evaluation.to_pandas
# --------------------------------------------------------------------------------------

#: The rows that Evaluation.to_pandas(ci=...) adds below the queries.
SUMMARY_ROWS = ("mean", "ci_low", "ci_high")


def summary_rows(evaluation, ci, *, method, n_resamples, seed):
    """``{metric: [mean, low, high]}`` of :meth:`skrank.Evaluation.to_pandas` with ``ci``
    (the numbers of :func:`confidence_interval`), or None without ``ci``."""
    func = "Evaluation.to_pandas"
    if ci is None or ci is False:
        return None
    if ci is True:
        confidence = 0.95
    elif isinstance(ci, (bool, np.bool_)) or not isinstance(ci, (int, float, np.integer,
                                                                  np.floating)):
        raise InvalidParameterError(
            f"{func}: ci must be None (no interval), True (95%) or a confidence level in "
            f"(0, 1) such as 0.9. Got {_describe(ci)} instead.")
    else:
        confidence = check_real(func, "ci", ci, low=0, high=1, low_open=True, high_open=True)
    qids = np.asarray(to_numpy(evaluation.qid))
    clash = np.isin(qids.astype(str), SUMMARY_ROWS)
    if clash.any():
        raise ValueError(
            f"{func}: with ci, the rows {list(SUMMARY_ROWS)} follow the queries, so no query "
            f"id may be one of these names. Got query {qids[clash][0].item()!r}. Take the "
            f"intervals from Evaluation.confidence_interval(...).to_pandas() instead.")
    try:
        intervals = confidence_interval(evaluation, None, method=method, confidence=confidence,
                                        n_resamples=n_resamples, seed=seed)
    except (ValueError, TypeError) as exc:   # name the method the user called
        raise type(exc)(str(exc).replace("Evaluation.confidence_interval", func)) from None
    return {m: [intervals.mean[m], intervals.low[m], intervals.high[m]]
            for m in intervals.metrics}
