"""Confidence intervals consistent with :func:`skrank.compare`'s correction.

A corrected verdict beside an interval at the per-comparison level contradicts
itself: with six comparisons, a difference whose 95% interval excludes 0 may
be "no significant difference" after Holm's correction.  Each correction gets
the intervals that go with it (``simultaneous=True``, the default whenever a
correction is applied):

* ``"bonferroni"`` and ``"holm"``: Bonferroni's simultaneous intervals, each at
  level ``1 - (1 - confidence) / m`` over the ``m`` comparisons of the call,
  so that all ``m`` cover their true differences together with probability at
  least ``confidence`` (Holm's step-down has no interval of its own; these are
  the usual, slightly wider, companions of its family-wise guarantee);
* ``"fdr_bh"``: Benjamini & Yekutieli's (2005) false-coverage-rate adjusted
  intervals, each at level ``1 - R (1 - confidence) / m`` with ``R`` the number
  of significant comparisons (at least 1);
* ``"tukey"``: Tukey's simultaneous intervals from the randomized HSD: the
  difference plus or minus the ``confidence`` quantile of the permutation
  distribution of the range of the system means (Bonferroni across metrics
  when there are several, as for the p-values), so that an interval excludes 0
  exactly when the Tukey-adjusted p-value is below ``1 - confidence``.

``simultaneous=False`` (or no correction) gives every interval at the
per-comparison level ``confidence``.
"""

import numpy as np

from ._core.checks import InvalidParameterError, _describe


def check_simultaneous(func, simultaneous, correction):
    """``simultaneous`` resolved: None is True when a correction is applied."""
    if simultaneous is None:
        return correction is not None
    if not isinstance(simultaneous, (bool, np.bool_)):
        raise InvalidParameterError(
            f"{func}: simultaneous must be None (True when a correction is applied), True or "
            f"False. Got {_describe(simultaneous)} instead.")
    return bool(simultaneous)


def interval_level(confidence, correction, simultaneous, n_comparisons, n_significant):
    """The level each interval is computed at (Tukey: per metric, see module doc)."""
    if not simultaneous or correction is None:
        return confidence
    if correction == "fdr_bh":
        return 1.0 - max(int(n_significant), 1) * (1.0 - confidence) / n_comparisons
    return 1.0 - (1.0 - confidence) / n_comparisons  # bonferroni, holm


def coverage_label(confidence, correction, simultaneous, level, n_comparisons, n_metrics):
    """What the intervals cover, in words (shown beside them)."""
    pct = f"{100 * confidence:g}%"
    if n_comparisons == 1 and correction != "tukey":
        return f"{pct} (a single comparison)"
    if not simultaneous or correction is None:
        return f"{pct} per comparison (not simultaneous)"
    if correction == "tukey":
        across = f", Bonferroni over {n_metrics} metrics" if n_metrics > 1 else ""
        return f"{pct} simultaneous over all pairs of systems (Tukey HSD{across})"
    if correction == "fdr_bh":
        return (f"{pct} false-coverage-rate adjusted over {n_comparisons} comparisons "
                f"(Benjamini-Yekutieli: each at {100 * level:.4g}%)")
    return (f"{pct} simultaneous over {n_comparisons} comparisons (Bonferroni: each at "
            f"{100 * level:.4g}%)")


def tukey_half_widths(spreads, confidence, n_metrics):
    """Per metric: the ``confidence`` quantile (Bonferroni across metrics) of the
    permutation distribution of the range of system means, ``spreads`` of shape
    (n_resamples, n_metrics)."""
    level = 1.0 - (1.0 - confidence) / n_metrics
    return np.quantile(spreads, level, axis=0)
