"""The kernels of :mod:`skrank._engine.kernels` on a :class:`~skrank._engine.device.DeviceRanking`.

Same signatures and the same closed forms for tie averaging (see
:mod:`skrank._engine.kernels`' docstring), written with array-API operations and the
adapter's segment sums, so that any namespace on any device runs them.
Binomial coefficients come from a table of ``log(n!)`` (their arguments are
integers no larger than the longest query), where the NumPy kernels use
``scipy.special.gammaln``.
"""

import numpy as np

from . import device as D, xp as XP
from .xp import log_comb, log_factorial, segment_cumsum_exclusive, segment_sum


def _is_scalar(cutoff):
    return isinstance(cutoff, (int, np.integer))


def _limit_mask(ranking, position, query, cutoff):
    """Rows at positions < cutoff (None: all; an int; or one cutoff per query)."""
    xp = ranking.xp
    if cutoff is None:
        return None
    if _is_scalar(cutoff):
        return position < cutoff
    return position < xp.take(cutoff, query)


def _masked(ranking, values, mask):
    xp = ranking.xp
    return values if mask is None else xp.where(mask, values, xp.zeros_like(values))


def weighted_rank_sum(ranking, row_values, weight, cutoff=None, transform=None):
    xp = ranking.xp
    transform = transform or (lambda values: values)
    if ranking.tie_starts is None:
        mask = _limit_mask(ranking, ranking.position, ranking.query, cutoff)
        values = ranking.as_float(transform(row_values)) * weight(ranking.fposition)
        return ranking.sum_by_query(_masked(ranking, values, mask))
    longest = ranking.max_kept
    if _is_scalar(cutoff):
        longest = min(longest, cutoff)
    steps = weight(xp.arange(longest, dtype=ranking.dtype, device=ranking.device))
    cumulative = XP.cumulative_sum_from_zero(xp, steps)
    group_pos, sizes = ranking.group_position, ranking.group_size
    if cutoff is None:
        limit = xp.full(group_pos.shape, longest, dtype=group_pos.dtype, device=ranking.device)
    elif _is_scalar(cutoff):
        limit = xp.full(group_pos.shape, min(cutoff, longest), dtype=group_pos.dtype,
                        device=ranking.device)
    else:
        limit = xp.astype(xp.take(cutoff, ranking.group_query), group_pos.dtype)
        limit = xp.minimum(limit, xp.full_like(limit, longest))
    spanned = (xp.take(cumulative, xp.minimum(group_pos + sizes, limit))
               - xp.take(cumulative, xp.minimum(group_pos, limit)))
    means = ranking.sum_by_group(ranking.as_float(transform(row_values))) / \
        ranking.as_float(sizes)
    return ranking.sum_groups_by_query(means * spanned)


def ideal_dcg(ranking, gain, gain_fn, k, discount):
    xp = ranking.xp
    if callable(gain):  # no assumption that a custom gain grows with the label
        gains = ranking.as_float(gain_fn(ranking.all_labels))
        order = xp.argsort(-gains, stable=True)
        order = xp.take(order, xp.argsort(xp.take(ranking.all_query, order), stable=True))
        gains = xp.take(gains, order)
    else:
        gains = ranking.as_float(gain_fn(ranking.ideal_labels()))
    position = ranking.all_position
    values = gains * discount(xp.astype(position, ranking.dtype))
    if k is not None:
        values = xp.where(position < k, values, xp.zeros_like(values))
    return segment_sum(xp, values, ranking.all_query, ranking.all_offsets, ranking.n_queries)


def _group_relevant(ranking, threshold):
    return ranking.sum_by_group(ranking.relevant(threshold))


def _table(ranking):
    return log_factorial(ranking.xp, ranking.max_kept + 1, ranking.xp.float64, ranking.device)


def hit_rate(ranking, threshold, k):
    xp = ranking.xp
    if k is None or ranking.tie_starts is None:
        hits = weighted_rank_sum(ranking, ranking.labels, lambda p: xp.ones_like(p), k,
                                 lambda labels: ranking.as_float(labels >= threshold))
        return ranking.as_float(hits > 0)
    sizes = xp.astype(ranking.group_size, xp.float64)
    group_pos = xp.astype(ranking.group_position, xp.float64)
    n_rel = xp.astype(_group_relevant(ranking, threshold), xp.float64)
    inside = group_pos + sizes <= k
    certain = ranking.sum_groups_by_query(xp.where(inside, n_rel, 0.0)) > 0
    # The one group of a query that straddles the cutoff and holds a relevant document:
    # P(no relevant among its `slots` leading places) = C(n - r, slots) / C(n, slots).
    straddle = (group_pos < k) & ~inside & (n_rel > 0)
    slots = xp.where(straddle, k - group_pos, 0.0)
    possible = straddle & (sizes - n_rel >= slots)
    table = _table(ranking)
    safe = xp.where(possible, sizes - n_rel, slots)
    log_p = log_comb(xp, table, safe, slots) - log_comb(xp, table, xp.where(possible, sizes, slots),
                                                        slots)
    p_hit = xp.where(straddle, 1.0 - xp.where(possible, xp.exp(log_p), 0.0), 0.0)
    # At most one straddling group per query: a sum picks it.
    p_hit = ranking.sum_groups_by_query(p_hit)
    value = xp.where(certain, 1.0, p_hit)
    return xp.astype(value, ranking.dtype)


def reciprocal_rank(ranking, threshold, k):
    xp = ranking.xp
    relevant = xp.astype(ranking.labels >= threshold, xp.int64)
    if ranking.tie_starts is None:
        before = segment_cumsum_exclusive(xp, relevant, ranking.query, ranking.offsets)
        first = (relevant > 0) & (before == 0)
        if k is not None:
            first = first & (ranking.position < k)
        terms = xp.where(first, 1.0 / (ranking.fposition + 1.0),
                         xp.zeros_like(ranking.fposition))
        return ranking.sum_by_query(terms)
    # The first group of each query holding a relevant document: no relevant above it.
    n_rel = segment_sum_int(ranking, relevant)
    group_offsets = xp.searchsorted(ranking.group_query,
                                    xp.arange(ranking.n_queries + 1, device=ranking.device))
    above = segment_cumsum_exclusive(xp, n_rel, ranking.group_query, group_offsets)
    is_first = (n_rel > 0) & (above == 0)
    # One term per row j = 1..n of those groups: P(first relevant at j) / (s + j),
    # P = C(n - j, r - 1) / C(n, r).
    g = ranking.group
    row_first = xp.take(is_first, g)
    n = xp.astype(xp.take(ranking.group_size, g), xp.float64)
    r = xp.astype(xp.take(n_rel, g), xp.float64)
    s = xp.astype(xp.take(ranking.group_position, g), xp.float64)
    j = xp.astype(ranking.position, xp.float64) - s + 1.0
    ok = row_first & (j <= n - r + 1)
    if k is not None:
        ok = ok & (s + j <= k)
    table = _table(ranking)
    nn = xp.where(ok, n, 1.0)
    rr = xp.where(ok, r, 1.0)
    jj = xp.where(ok, j, 1.0)
    log_p = log_comb(xp, table, nn - jj, rr - 1.0) - log_comb(xp, table, nn, rr)
    terms = xp.where(ok, xp.exp(log_p) / (s + j), 0.0)
    return xp.astype(ranking.sum_by_query(terms), ranking.dtype)


def segment_sum_int(ranking, values):
    """Integer sums over tie groups (exact)."""
    return segment_sum(ranking.xp, values, ranking.group, ranking.tie_starts,
                       ranking.group_start.shape[0])


def average_precision_sum(ranking, threshold, k):
    xp = ranking.xp
    relevant = xp.astype(ranking.labels >= threshold, xp.int64)
    position = ranking.fposition
    if ranking.tie_starts is None:
        # The j-th relevant row of its query (from 1) at position p adds j / (p + 1).
        hits = segment_cumsum_exclusive(xp, relevant, ranking.query, ranking.offsets) + relevant
        keep = relevant > 0
        if k is not None:
            keep = keep & (ranking.position < k)
        terms = xp.where(keep, ranking.as_float(hits) / (position + 1.0), xp.zeros_like(position))
        return ranking.sum_by_query(terms)
    n_rel_int = segment_sum_int(ranking, relevant)
    group_offsets = xp.searchsorted(ranking.group_query,
                                    xp.arange(ranking.n_queries + 1, device=ranking.device))
    above = ranking.as_float(segment_cumsum_exclusive(xp, n_rel_int, ranking.group_query,
                                                      group_offsets))
    n_rel = ranking.as_float(n_rel_int)
    # As in the NumPy kernel: E[hits at slot t] = c + 1 + (r-1)(t-1)/(n-1), linear in t - 1.
    inverse_rank = 1.0 / (position + 1.0)
    sizes = ranking.as_float(ranking.group_size)
    group_position = ranking.as_float(ranking.group_position)
    slots = sizes
    if k is not None:
        inverse_rank = xp.where(ranking.position < k, inverse_rank, xp.zeros_like(inverse_rank))
        slots = xp.clip(k - group_position, 0.0, sizes)
        slots = xp.where(slots > sizes, sizes, slots)
    sum_inverse = ranking.sum_by_group(inverse_rank)
    sum_offset = slots - (group_position + 1.0) * sum_inverse
    slope = (n_rel - 1.0) / xp.where(sizes - 1.0 > 1.0, sizes - 1.0, 1.0)
    terms = (n_rel / sizes) * ((above + 1.0) * sum_inverse + slope * sum_offset)
    return ranking.sum_groups_by_query(terms)


def expected_reciprocal_rank(ranking, labels, max_grade, k):
    xp = ranking.xp
    labels = ranking.as_float(labels)
    stop = xp.pow(2.0, labels - max_grade) - 2.0 ** (-max_grade)  # (2^rel - 1) / 2^max_grade
    certain = stop >= 1.0
    log_continue = xp.log1p(-xp.where(certain, xp.zeros_like(stop), stop))
    before = D.segment_cumsum_exclusive_local(xp, log_continue, ranking.position,
                                              ranking.max_kept)
    blocked = segment_cumsum_exclusive(xp, xp.astype(certain, xp.int64), ranking.query,
                                       ranking.offsets) > 0
    terms = xp.where(blocked, xp.zeros_like(stop), stop * xp.exp(before)) / \
        (ranking.fposition + 1.0)
    if k is not None:
        terms = xp.where(ranking.position < k, terms, xp.zeros_like(terms))
    return ranking.sum_by_query(terms)
