"""Paired tests over per-query values: randomization (exact or sampled), bootstrap
intervals, Tukey's HSD by resampling, analytic tests through scipy.stats, and the
corrections for multiple comparisons; resampling is one matrix product per batch
of sign vectors, never a loop per resample.
"""

import itertools
import math

import numpy as np
from scipy import special


class _LazyStats:
    """scipy.stats, imported on first use: it takes longer to import than most
    comparisons take to run, and ``skrank --help`` reads this module's names only."""

    def __getattr__(self, name):
        from scipy import stats

        return getattr(stats, name)


stats = _LazyStats()


# Resampling works on batches of about this many (resample, query) cells.
# Not measured: a memory bound (2**21 float64 cells, 16 MiB per batch), not a timing.
_BATCH_CELLS = 1 << 21


# Per-query differences within this relative distance are rounding: ties.
# Not a speed constant: the last-bit differences of per-query values across platforms
# (found on the oldest numpy) are far below it, real differences far above.
_TIE_TOLERANCE = 1e-12


# The Tukey test precomputes every permutation of every query's row up to this size.
# Not measured: a memory bound (2**23 cells, 64 MiB of permutation indices).
_TUKEY_TABLE_CELLS = 1 << 23


def _tolerance(observed, scale):
    # Resampled statistics equal to the observed one up to rounding count as
    # "at least as extreme" (as in scipy.stats.permutation_test).  The rounding of a
    # sum is relative to its terms (``scale``: the sum of their magnitudes), not to the
    # sum: a mean difference that is zero in decimal is 1e-17 or so in floats, and
    # relative to itself every sign flip's rounding looked more extreme.
    return np.maximum(np.abs(observed), scale) * (100 * np.finfo(np.float64).eps)


def _batches(total, n):
    size = max(1, min(total, _BATCH_CELLS // max(n, 1)))
    for start in range(0, total, size):
        yield min(size, total - start)


def _randomization_p(diffs, n_resamples, rng):
    """Two-sided paired sign-flip p-values of the mean difference, per column.

    ``diffs``: (n_queries, n_comparisons).  Exact (the share of all 2**n sign
    vectors) when 2**n <= n_resamples, else (b + 1) / (B + 1) over random signs.
    Returns (p, exact).
    """
    n = diffs.shape[0]
    total = diffs.sum(axis=0)
    threshold = np.abs(total) - _tolerance(total, np.abs(diffs).sum(axis=0))
    exact = n < 63 and 2 ** n <= n_resamples
    n_draws = 2 ** n if exact else n_resamples
    n_bytes = (n + 7) // 8
    extreme = np.zeros(diffs.shape[1], dtype=np.int64)
    done = 0
    for size in _batches(n_draws, n):
        if exact:  # the binary digits of consecutive integers: every sign vector once
            codes = np.arange(done, done + size, dtype=np.int64)
            bits = ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)
        else:
            packed = rng.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
            bits = np.unpackbits(packed, axis=1, count=n).astype(np.float64)
        # sum(s * d) over signs s = 2 * bit - 1 is 2 * (bits @ d) - sum(d)
        extreme += (np.abs(2 * (bits @ diffs) - total) >= threshold).sum(axis=0)
        done += size
    if exact:
        return extreme / n_draws, True
    return (extreme + 1) / (n_resamples + 1), False


def _bootstrap_means(diffs, n_resamples, rng):
    """Means of ``n_resamples`` paired bootstrap resamples (queries drawn with
    replacement, the same draw for every column): shape (n_resamples, n_columns)."""
    n = diffs.shape[0]
    out = np.empty((n_resamples, diffs.shape[1]))
    done = 0
    for size in _batches(n_resamples, n):
        draws = rng.integers(0, n, size=(size, n))
        draws += np.arange(size)[:, None] * n
        counts = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n)
        out[done:done + size] = counts @ diffs
        done += size
    return out / n


def _quantiles(sorted_dist, q):
    """Per-column quantiles at per-column levels ``q`` (numpy's default 'linear' rule)."""
    b = sorted_dist.shape[0]
    h = (b - 1) * np.clip(q, 0.0, 1.0)
    lo = np.floor(h).astype(np.intp)
    hi = np.minimum(lo + 1, b - 1)
    cols = np.arange(sorted_dist.shape[1])
    low, high = sorted_dist[lo, cols], sorted_dist[hi, cols]
    return low + (h - lo) * (high - low)


def _bootstrap_interval(diffs, dist, confidence, method):
    """Percentile or BCa interval (Efron & Tibshirani 1993, 14.3) of the mean
    difference from its bootstrap distribution ``dist``, as scipy.stats.bootstrap
    computes it; the jackknife of a mean is analytic, so this is O(n)."""
    alpha = (1 - confidence) / 2
    sorted_dist = np.sort(dist, axis=0)
    if method == "percentile":
        levels = np.full(diffs.shape[1], alpha), np.full(diffs.shape[1], 1 - alpha)
    else:
        mean = diffs.mean(axis=0)
        below = (dist < mean).sum(axis=0) + (dist <= mean).sum(axis=0)
        z0 = special.ndtri(below / (2 * dist.shape[0]))
        centred = diffs - mean
        spread = ((centred ** 2).sum(axis=0)) ** 1.5
        # constant differences (no spread) get a point interval from the caller
        accel = (centred ** 3).sum(axis=0) / (6 * np.where(spread > 0, spread, 1.0))
        z = special.ndtri(alpha)
        levels = tuple(special.ndtr(z0 + (z0 + zz) / (1 - accel * (z0 + zz))) for zz in (z, -z))
    return _quantiles(sorted_dist, levels[0]), _quantiles(sorted_dist, levels[1])


def _tukey_p(values, n_resamples, rng):
    """Randomized Tukey HSD (Carterette 2012; Sakai 2018), paired: each query's
    row of per-system values is permuted across systems; the null distribution
    is that of the largest minus the smallest system mean.

    ``values``: (n_metrics, n_systems, n).  Returns, per metric, a
    (n_systems, n_systems) matrix of p-values of |mean_i - mean_j|.
    """
    n_metrics, n_systems, n = values.shape
    means = values.mean(axis=2)
    observed = np.abs(means[:, :, None] - means[:, None, :])
    scale = np.abs(values).mean(axis=2).max(axis=1)[:, None, None]
    threshold = observed - _tolerance(observed, scale)
    extreme = np.zeros(observed.shape, dtype=np.int64)
    spreads = []  # the null distribution of the range, for Tukey's intervals
    n_perms = math.factorial(n_systems)
    if n * n_perms * n_systems * n_metrics <= _TUKEY_TABLE_CELLS:
        # Every permutation of every query's row, precomputed: a resample then
        # picks one row per query (a gather of contiguous rows).
        table = np.array(list(itertools.permutations(range(n_systems))), dtype=np.intp)
        rows = values.transpose(2, 0, 1)[:, :, table]          # (n, metrics, perms, systems)
        rows = rows.transpose(0, 2, 1, 3).reshape(n * n_perms, n_metrics, n_systems)
        offsets = np.arange(n) * n_perms
        for size in _batches(n_resamples, n * n_systems):
            picks = rng.integers(0, n_perms, size=(size, n)) + offsets
            permuted = np.take(rows, picks, axis=0).mean(axis=1)  # (size, metrics, systems)
            spread = permuted.max(axis=2) - permuted.min(axis=2)
            extreme += (spread[:, :, None, None] >= threshold[None]).sum(axis=0)
            spreads.append(spread)
    else:
        flat = values.transpose(0, 2, 1).reshape(n_metrics, n * n_systems)  # query-major
        offsets = (np.arange(n) * n_systems)[None, :, None]
        for size in _batches(n_resamples, n * n_systems):
            index = rng.random((size, n, n_systems)).argsort(axis=2) + offsets
            batch = np.empty((size, n_metrics))
            for m in range(n_metrics):
                permuted = np.take(flat[m], index).mean(axis=1)  # (size, systems)
                spread = permuted.max(axis=1) - permuted.min(axis=1)
                extreme[m] += (spread[:, None, None] >= threshold[m][None]).sum(axis=0)
                batch[:, m] = spread
            spreads.append(batch)
    return (extreme + 1) / (n_resamples + 1), np.concatenate(spreads)


def _holm(p):
    """Holm (1979) step-down adjusted p-values."""
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def _fdr_bh(p):
    """Benjamini-Hochberg (1995) adjusted p-values: scipy's when it has them
    (scipy >= 1.11), else the textbook step-up formula."""
    control = getattr(stats, "false_discovery_control", None)
    if control is not None:
        return np.asarray(control(p, method="bh"), dtype=np.float64)
    return _fdr_bh_formula(p)


def _fdr_bh_formula(p):
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def _analytic_p(test, diffs, b_values, a_values):
    """p-values of the tests scipy has, per column; identical systems get 1."""
    n_cols = diffs.shape[1]
    p = np.ones(n_cols)
    if test == "t":
        # scipy's ttest_rel, its formula written out for every column at once: scipy
        # warns on constant differences, and silencing that takes catch_warnings, which
        # swaps the process's filters (unsafe in threads: Dask, joblib).
        n = b_values.shape[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            d = b_values - a_values
            t = d.mean(axis=0) / np.sqrt(d.var(axis=0, ddof=1) / n)
            p_t = 2 * stats.t.sf(np.abs(t), n - 1)
        return np.minimum(np.where(diffs.any(axis=0), p_t, 1.0), 1.0)
    for j in range(n_cols):  # a loop over comparisons (few), not over queries
        d = diffs[:, j]
        if not d.any():
            continue  # identical: no evidence of a difference (scipy gives NaN or raises)
        with np.errstate(divide="ignore", invalid="ignore"):
            if test == "wilcoxon":
                p[j] = stats.wilcoxon(d).pvalue
            else:  # sign
                wins, losses = int((d > 0).sum()), int((d < 0).sum())
                p[j] = stats.binomtest(wins, wins + losses, 0.5).pvalue
    return np.minimum(p, 1.0)
