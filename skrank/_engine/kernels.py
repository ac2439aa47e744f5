"""Vectorised metric kernels: a :class:`~skrank._engine.ranking.Ranking` -> one value per query.

Each kernel returns ``(values, undefined)``: a float vector over queries and a
boolean mask of queries where the metric is undefined (no relevant document),
or None when it is always defined.

Exact tie averaging.  With ``ties="average"`` the ranking carries tie groups
(runs of equal scores).  Every kernel returns the expected value over all
orderings of each group, in closed form, without enumeration:

* metrics linear in the ranked labels (CG, DCG, precision, recall,
  R-precision, RBP) weigh each group's mean gain by the sum of the position
  weights the group spans;
* hit rate uses the hypergeometric probability that the slots a group has
  above the cutoff hold no relevant document;
* reciprocal rank uses the distribution of the first relevant offset in the
  first group that holds a relevant document;
* average precision uses, for a relevant document at offset ``t`` of a group
  of ``n`` documents with ``r`` relevant ones and ``c`` relevant documents
  ranked above the group, ``E[#relevant up to it] = c + 1 + (r-1)(t-1)/(n-1)``
  (McSherry & Najork, 2008).
"""

import functools
import sys

import numpy as np

from . import device_kernels as DK
from .codes import _speedups
from .segments import segmented_sort_desc
from .xp import namespace
from .scan import segment_accumulate


if not hasattr(_speedups, "tie_ap_sums"):  # not built, or built from an older source
    _speedups = None


def _device_form(device_kernel):
    """The NumPy kernel below for a NumPy :class:`Ranking` (which has no ``xp``), and
    ``device_kernel`` (same closed form, array-API operations) for a ranking of device
    arrays (:class:`skrank._engine.device.DeviceRanking`): one interface for both, so the
    metric kernels never branch on the namespace."""
    def with_device_form(numpy_kernel):
        @functools.wraps(numpy_kernel)
        def kernel(ranking, *args, **kwargs):
            if getattr(ranking, "xp", None) is None:
                return numpy_kernel(ranking, *args, **kwargs)
            return device_kernel(ranking, *args, **kwargs)
        return kernel
    return with_device_form


def sum_by_query(query, values, n_queries):
    """Sum ``values`` within each query (float64 even when empty, unlike bincount)."""
    return np.bincount(query, weights=values, minlength=n_queries).astype(np.float64, copy=False)


def _log_comb(n, k):
    from scipy.special import gammaln  # lazily: 0.2 s of every `import skrank`

    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _ranked_rows(ranking, cutoff):
    """``(rows, query, position)`` of the ranked rows within the cutoff.

    ``cutoff`` is None, an int, or one int per query; ``rows`` is None for all rows.
    """
    if cutoff is None or (np.ndim(cutoff) == 0 and cutoff >= ranking.max_kept):
        return None, ranking.query, ranking.position
    if np.ndim(cutoff) == 0:
        return ranking.top(int(cutoff))
    rows = np.flatnonzero(ranking.position < cutoff[ranking.query])
    return rows, ranking.query[rows], ranking.position[rows]


def _take(values, rows):
    return values if rows is None else values[rows]


# Widest top block summed column by column (beyond it, one bincount over the rows costs
# less than as many passes over the queries).
# Not measured: a round number of columns.
_BLOCK_WIDTH = 32


def _top_block(ranking, row_values, cutoff):
    """``row_values`` of the ranked rows at positions < cutoff as an (n_queries, width)
    array when every query holds ``width`` of them (a view when every query holds as many
    rows), else None: sums over it need no per-row query or position index."""
    if ranking.n_queries == 0 or np.ndim(cutoff) != 0:
        return None
    longest = ranking.max_kept
    width = longest if cutoff is None else min(int(cutoff), longest)
    n_kept = ranking.n_kept
    fewest = int(n_kept.min())
    if width == 0 or width > _BLOCK_WIDTH or fewest < width:
        return None
    if fewest == longest:  # queries tile the rows: a strided view, no gather
        return row_values.reshape(ranking.n_queries, longest)[:, :width]
    if row_values is ranking.labels:  # shared by the metrics of one ranking
        return ranking.top_labels(width).reshape(ranking.n_queries, width)
    return row_values[ranking.top(width)[0]].reshape(ranking.n_queries, width)


def _weighted_row_sums(values, weights):
    """``values @ weights`` summed column after column, in rank order: the sums
    :func:`sum_by_query` gives over the same rows, to the last bit."""
    total = values[:, 0] * weights[0]
    for column in range(1, values.shape[1]):
        total += values[:, column] * weights[column]
    return total.astype(np.float64, copy=False)


@_device_form(DK.weighted_rank_sum)
def weighted_rank_sum(ranking, row_values, weight, cutoff=None, transform=None):
    """Expected ``sum(f(row_values[i]) * weight(position_i))`` over ranks < cutoff, per query.

    ``weight`` maps an array of 0-based positions to weights; ``transform``
    (``f``, default identity) maps values elementwise, applied only to the rows
    that count.  Under tie averaging, each tie group contributes its mean value
    times the sum of the weights of the positions it spans (below the cutoff).
    """
    transform = transform or (lambda values: values)
    nq = ranking.n_queries
    if not ranking.has_ties:
        block = _top_block(ranking, row_values, cutoff)
        if block is not None:
            # transformed flat, as per row below (a gain callable sees the same array)
            values = transform(block.reshape(-1)).reshape(block.shape)
            return _weighted_row_sums(values, weight(np.arange(block.shape[1])))
        rows, query, position = _ranked_rows(ranking, cutoff)
        if row_values is ranking.labels and rows is not None and np.ndim(cutoff) == 0:
            values = ranking.top_labels(int(cutoff))  # shared by the metrics of one ranking
        else:
            values = _take(row_values, rows)
        return sum_by_query(query, transform(values) * weight(position), nq)
    longest = ranking.max_kept
    if cutoff is not None and np.ndim(cutoff) == 0:
        longest = min(longest, int(cutoff))
    weights = weight(np.arange(longest))
    cumulative = np.zeros(longest + 1)
    np.cumsum(weights, out=cumulative[1:])
    if np.ndim(cutoff) == 0 and not ranking.few_tie_groups():
        return _tied_rank_sum(ranking, row_values, weights, cumulative, cutoff, transform)
    starts, sizes, group_query, group_pos = ranking.tie_groups()
    limit = longest if cutoff is None else np.minimum(
        cutoff if np.ndim(cutoff) == 0 else cutoff[group_query], longest).astype(np.intp)
    live = None
    if cutoff is not None and not (np.ndim(cutoff) == 0 and cutoff >= ranking.max_kept):
        # Groups starting at or below the cutoff add nothing: found by one search per
        # query, not a pass over every group (a full ranking read to a cutoff, as in
        # evaluate with MAP and nDCG@10, holds many more groups than the cutoff reads).
        live, rows, first_out = ranking.groups_above(cutoff)
        if live.size == 0:
            return np.zeros(nq)
    if live is None or live.size == starts.size:
        means = np.add.reduceat(transform(row_values), starts) / sizes
        kept = _nonzero_groups(means)
        if kept is None:
            spanned = _spanned_weights(weights, cumulative, group_pos, sizes, limit)
            return sum_by_query(group_query, means * spanned, nq)
        spanned = _spanned_weights(weights, cumulative, group_pos[kept], sizes[kept],
                                   limit[kept] if np.ndim(limit) else limit)
        return sum_by_query(group_query[kept], means[kept] * spanned, nq)
    # Only the live groups' rows are gathered and transformed, in the same order.
    live_pos, live_sizes = group_pos[live], sizes[live]
    if np.ndim(limit):
        limit = limit[live]
    spanned = _spanned_weights(weights, cumulative, live_pos, live_sizes, limit)
    if row_values is ranking.labels and np.ndim(cutoff) == 0:
        values = ranking.labels_above(int(cutoff))
    else:
        values = row_values[rows]
    means = np.add.reduceat(transform(values), first_out) / live_sizes
    return sum_by_query(group_query[live], means * spanned, nq)


def _tied_rank_sum(ranking, row_values, weights, cumulative, cutoff, transform):
    """:func:`weighted_rank_sum` under ties of one cutoff (None: all) for every query.

    One term per ranked row within the cutoff, as without ties, except in the tie
    groups of two or more rows (:meth:`Ranking.tie_runs`; few with rounded scores):
    each group starting within the cutoff puts its mean value times the weights it
    spans at its first row, its other rows adding 0.0.  Summed in rank order, as one
    term per group would be: a row alone in its group adds its value times its weight,
    the value of the tie-free path's terms, to the last bit.
    """
    nq, longest = ranking.n_queries, weights.shape[0]
    whole = cutoff is None or cutoff >= ranking.max_kept
    if whole:
        query = ranking.query
        values = transform(row_values)
        if nq and int(ranking.n_kept.min()) == longest:   # queries of one length: a block
            terms = (values.reshape(nq, longest) * weights).reshape(-1)
        else:
            terms = values * weights[ranking.position]
    else:
        rows, query, position = ranking.top(int(cutoff))
        if row_values is ranking.labels:
            values = ranking.top_labels(int(cutoff))  # shared by the metrics of one ranking
        else:
            values = row_values[rows]
        block = nq > 0 and longest <= _BLOCK_WIDTH and int(ranking.n_kept.min()) >= longest
        if block:  # every query holds `longest` rows within the cutoff: an (nq, longest) block
            terms = transform(values).reshape(nq, longest) * weights
        else:
            terms = transform(values) * weights[position]
    groups = ranking._cached(("tie_runs_within", longest, whole),
                             lambda: _runs_within(ranking, longest, whole))
    if not whole and block:
        if groups is not None:
            _tied_terms(ranking, row_values, transform, values, cumulative, longest, whole,
                        groups, terms.reshape(-1))
        # Column after column from 0.0: the sums sum_by_query gives, to the last bit.
        total = np.zeros(nq)
        for column in range(longest):
            total += terms[:, column]
        return total
    if groups is None:
        return sum_by_query(query, terms, nq)
    _tied_terms(ranking, row_values, transform, values, cumulative, longest, whole, groups,
                terms)
    return sum_by_query(query, terms, nq)


def _tied_terms(ranking, row_values, transform, values, cumulative, longest, whole, groups,
                terms):
    """The terms of :func:`_tied_rank_sum` in the tie groups of two or more rows (see
    :func:`_runs_within`): each group's first term its mean value times the weights it
    spans, its other terms 0.0 (``terms``, flat, set in place)."""
    position, sizes, index, inside, group_rows, begin = groups
    if whole:
        means = np.add.reduceat(values[group_rows], begin)
    else:  # the rows of the groups, some beyond the cutoff, gathered (and shared)
        if row_values is ranking.labels:
            gathered = ranking._cached(("tie_run_labels", longest),
                                       lambda: row_values[group_rows])
        else:
            gathered = row_values[group_rows]
        means = np.add.reduceat(transform(gathered), begin)
    means /= sizes
    spanned = cumulative[np.minimum(position + sizes, longest)] - cumulative[position]
    terms[inside] = 0.0
    terms[index] = means * spanned


def _runs_within(ranking, longest, whole):
    """The tie groups of two or more rows starting at a position below ``longest``
    (``whole``: every one), for :func:`_tied_rank_sum`: ``(position, sizes, index,
    inside, rows, begin)``: each group's first position and size, where it begins among
    the terms (every ranked row, or the rows within the cutoff), the terms of its rows
    within the cutoff, and its rows (all of them, group after group, the group's first
    at ``begin``).  None when there is none.  Shared by the metrics of one ranking."""
    run_starts, run_ends = ranking.tie_runs()
    offsets = ranking.offsets
    if whole:
        run = None
        run_query = ranking.query[run_starts]
        position = run_starts - offsets[run_query]
        index = run_starts        # where each group's rows begin among the terms
    else:
        # The groups starting within the cutoff: one search per query among the groups.
        held = np.minimum(ranking.n_kept, longest)
        first = np.searchsorted(run_starts, offsets[:-1])
        counts = np.searchsorted(run_starts, offsets[:-1] + held) - first
        run_query = np.repeat(np.arange(ranking.n_queries), counts)
        before = np.cumsum(counts) - counts
        run = np.repeat(first - before, counts) + np.arange(int(counts.sum()))
        position = run_starts[run] - offsets[:-1][run_query]
        index = (np.cumsum(held) - held)[run_query] + position
    if run_query.size == 0:
        return None
    starts = run_starts if run is None else run_starts[run]
    sizes = (run_ends if run is None else run_ends[run]) - starts
    begin = np.cumsum(sizes) - sizes
    rows = np.repeat(starts - begin, sizes)
    rows += np.arange(rows.shape[0])
    if whole:  # every group whole within the terms, which are every ranked row
        return position, sizes, index, rows, rows, begin
    # The group's terms within the cutoff: index .. index + (end - position) - 1.
    within = np.minimum(position + sizes, longest) - position
    shift = np.cumsum(within) - within
    inside = np.repeat(index - shift, within)
    inside += np.arange(inside.shape[0])
    return position, sizes, index, inside, rows, begin


def _nonzero_groups(means):
    """Indices of the tie groups whose mean value is not 0, or None to keep every group
    (when they are more than three quarters: gathering would cost what it saves).

    A group of mean 0 adds exactly 0 (its finite spanned weight times 0) to its
    query's bincount, so leaving it out changes no bit: full rankings of sparse
    relevance (a recommender's items) hold almost only such groups."""
    kept = np.flatnonzero(means)
    return None if 4 * kept.shape[0] > 3 * means.shape[0] else kept


def _spanned_weights(weights, cumulative, positions, sizes, limit):
    """Per tie group (first position, size), the sum of ``weights`` over its positions
    below ``limit``: a difference of the cumulative sums, except for a group of one row,
    which takes its own weight (a difference of sums can be off in the last bit, and a
    query without ties must get the value it gets alone, where no group is formed)."""
    spanned = (cumulative[np.minimum(positions + sizes, limit)]
               - cumulative[np.minimum(positions, limit)])
    single = np.flatnonzero((sizes == 1) & (positions < limit))
    spanned[single] = weights[positions[single]]
    return spanned


def ones(positions):
    if isinstance(positions, np.ndarray):
        return np.ones(positions.shape)
    return positions * 0.0 + 1.0  # float positions of a device ranking


def log_discount(log_base):
    scale = np.log(log_base)

    def discount(positions):
        if isinstance(positions, np.ndarray):
            return scale / np.log(positions + 2.0)

        return float(scale) / namespace(positions).log(positions + 2.0)

    return discount


@_device_form(DK.ideal_dcg)
def ideal_dcg(ranking, gain, gain_fn, k, discount):
    """DCG@k of each query's documents (retrieved or not) in decreasing order of gain.

    Integer grades in [0, 64] (binary and graded judgements) need no sort: the
    ideal ranking holds, per query, ``count[q, g]`` documents of each grade, so
    its DCG is ``sum_g gain(g) * (discounts of the positions those documents
    fill)``, from one ``bincount``.  Other labels are sorted within each query.
    """
    grade_counts = ranking.grade_counts()
    if grade_counts is not None:
        top = grade_counts.shape[1] - 1
        grades = np.arange(top + 1, dtype=np.float64)
        grade_gain = gain_fn(grades)
        # Fill positions in decreasing order of gain (the grade order for a monotone gain).
        by_gain = np.argsort(-grade_gain, kind="stable")
        nq = ranking.n_queries
        counts = grade_counts[:, by_gain]
        end = np.cumsum(counts, axis=1)
        start = end - counts
        longest = int(end[:, -1].max()) if nq else 0
        depth = longest if k is None else min(k, longest)
        cumulative = np.zeros(depth + 1)
        np.cumsum(discount(np.arange(depth)), out=cumulative[1:])
        spanned = cumulative[np.minimum(end, depth)] - cumulative[np.minimum(start, depth)]
        # Column after column, not a matrix product: BLAS sums a row in an order that
        # depends on how many rows there are, and a query's value must not depend on
        # the other queries of the call (a streamed block, a fold), to the last bit.
        return _weighted_row_sums(spanned, grade_gain[by_gain])
    if callable(gain):  # no assumption that a custom gain grows with the label
        ideal = segmented_sort_desc(gain_fn(ranking.all_labels), ranking.all_offsets)
        rows, query, position = ranking.ideal_top(k)
        gains = _take(ideal, rows)
    else:
        rows, query, position = ranking.ideal_top(k)
        gains = gain_fn(_take(ranking.ideal_labels(), rows))
    return sum_by_query(query, gains * discount(position), ranking.n_queries)


@_device_form(DK.hit_rate)
def hit_rate(ranking, threshold, k):
    """P(at least one relevant document (label >= threshold) within the top k)."""
    nq = ranking.n_queries
    if k is None or not ranking.has_ties:
        hits = weighted_rank_sum(ranking, ranking.labels, ones, k,
                                 lambda labels: (labels >= threshold).astype(np.float64))
        return (hits > 0).astype(np.float64)
    starts, sizes, group_query, group_pos = ranking.tie_groups()
    n_rel = np.add.reduceat(ranking.relevant(threshold), starts)
    inside = group_pos + sizes <= k
    certain = sum_by_query(group_query, n_rel * inside, nq) > 0
    value = certain.astype(np.float64)
    straddle = np.flatnonzero((group_pos < k) & ~inside & (n_rel > 0))
    n, r = sizes[straddle].astype(np.float64), n_rel[straddle]
    slots = k - group_pos[straddle].astype(np.float64)
    # P(no relevant among `slots` draws without replacement from n with r relevant)
    possible = n - r >= slots
    p_none = np.zeros(straddle.shape)
    p_none[possible] = np.exp(
        _log_comb(n[possible] - r[possible], slots[possible]) - _log_comb(n[possible], slots[possible])
    )
    q = group_query[straddle]
    value[q] = np.where(certain[q], 1.0, 1.0 - p_none)
    return value


# Reciprocal rank under ties computes each distinct (size, relevant, position) of the
# groups holding a first relevant row once when they hold more rows than this on average
# (one term per row; the distinct ones cost a sort of the groups).  Changed in the tests.
# Not measured: the route itself was measured as a whole (see _PAIR_TABLE_LIMIT), not this
# threshold.
_DISTINCT_GROUPS_ABOVE = 4


@_device_form(DK.reciprocal_rank)
def reciprocal_rank(ranking, threshold, k):
    """Expected 1 / rank of the first relevant document (0 beyond the cutoff)."""
    nq = ranking.n_queries
    value = np.zeros(nq)
    if not ranking.has_ties:
        _, _, position = ranking.relevant_rows(threshold)
        counts, first = ranking.relevant_first(threshold)
        found = np.flatnonzero(counts)   # the queries with a relevant row
        pos = position[first[found]]
        within = pos < (np.inf if k is None else k)
        value[found[within]] = 1.0 / (pos[within] + 1.0)
        return value
    if ranking.few_tie_groups():
        return _reciprocal_rank_by_group(ranking, threshold, k)
    # Each query's first relevant row: alone in its tie group, it is the tie-free one;
    # else its group (of two or more rows, see Ranking.tie_runs) is found by one search
    # per query among those groups.  Groups starting at or below the cutoff add nothing.
    compiled = _speedups is not None and ranking._tie_same is not None
    if compiled:  # the groups and first relevant rows of the compiled pass (shared with AP)
        run_starts, sizes, _, _, n_rel, row = _compiled_groups(ranking, threshold)
        query = np.flatnonzero(row >= 0)   # the queries with a relevant row
        row = row[query]
        pos = row - ranking.offsets[query]
        run_ends = run_starts + sizes
    else:
        rows, _, position = ranking.relevant_rows(threshold)
        counts, first = ranking.relevant_first(threshold)
        query = np.flatnonzero(counts)   # the queries with a relevant row
        first = first[query]
        row, pos = rows[first], position[first]
        run_starts, run_ends = ranking.tie_runs()
    run = np.searchsorted(run_ends, row, side="right")
    in_run = run < run_ends.shape[0]
    in_run[in_run] = run_starts[run[in_run]] <= row[in_run]
    alone = np.flatnonzero(~in_run)
    if k is not None:
        alone = alone[pos[alone] < k]
    value[query[alone]] = 1.0 / (pos[alone] + 1.0)
    grouped = np.flatnonzero(in_run)
    run = run[grouped]
    n = run_ends[run] - run_starts[run]
    s = pos[grouped] - (row[grouped] - run_starts[run])
    if compiled:
        r = n_rel[run]   # the query's first relevant row is its group's first
    else:
        # the group's relevant rows: from the query's first relevant row to the group's end
        r = np.searchsorted(rows, run_ends[run]) - first[grouped]
    group_query = query[grouped]
    if k is not None:
        cut = s < k
        n, s, r, group_query = n[cut], s[cut], r[cut], group_query[cut]
    width = ranking.max_kept + 1
    if n.sum() > _DISTINCT_GROUPS_ABOVE * n.size and width ** 3 < 2 ** 62:
        # Groups of several rows: the value depends only on (n, r, s), which take few
        # distinct values in short rankings; each distinct triple is computed once.
        key = (s * width + n) * width + r
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        value[group_query] = _expected_inverse_rank(n[first], r[first], s[first], k)[inverse]
    else:
        value[group_query] = _expected_inverse_rank(n, r, s, k)
    return value


def _reciprocal_rank_by_group(ranking, threshold, k):
    """:func:`reciprocal_rank` under ties, the groups read as :meth:`Ranking.tie_groups`
    (few: see ``few_tie_groups``)."""
    value = np.zeros(ranking.n_queries)
    starts, sizes, group_query, group_pos = ranking.tie_groups()
    # The queries holding a relevant row, from the relevant rows above each query.
    at_start = ranking.relevant_at_queries(threshold)
    query = np.flatnonzero(at_start[1:] > at_start[:-1])
    # The tie group of each query's first relevant row: the first group with more
    # relevant rows above its end than above the query, found by one search per query
    # among the groups (not the rows).  Groups starting at or below the cutoff add nothing.
    at_group = ranking.relevant_at_groups(threshold)
    group = np.searchsorted(at_group, at_start[query] + 1) - 1
    if k is not None:
        group = group[group_pos[group] < k]
    n = sizes[group]
    r = at_group[group + 1] - at_group[group]
    s = group_pos[group]
    width = ranking.max_kept + 1
    if n.sum() > _DISTINCT_GROUPS_ABOVE * n.size and width ** 3 < 2 ** 62:
        # Groups of several rows: the value depends only on (n, r, s), which take few
        # distinct values in short rankings; each distinct triple is computed once.
        key = (s * width + n) * width + r
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        value[group_query[group]] = _expected_inverse_rank(n[first], r[first], s[first],
                                                           k)[inverse]
    else:
        value[group_query[group]] = _expected_inverse_rank(n, r, s, k)
    return value


def _expected_inverse_rank(n, r, s, k):
    """``E[1 / (s + J)]`` per group, ``J`` (from 1) the offset of the first relevant row of
    a group of ``n`` rows with ``r`` relevant ones in random order; 0 where s + J > k."""
    from scipy.special import gammaln  # lazily: 0.2 s of every `import skrank`

    r = r.astype(np.float64)
    # One term per offset j = 1..n of those groups: P(first relevant at j) / (s + j),
    # P = C(n - j, r - 1) / C(n, r); the factors that depend on the group alone are
    # computed once per group.
    offsets = np.repeat(np.arange(n.size), n)
    j = np.arange(offsets.size) - np.repeat(np.cumsum(n) - n, n) + 1.0
    nn, rr, ss = n[offsets].astype(np.float64), r[offsets], s[offsets]
    ok = (j <= nn - rr + 1) & (ss + j <= (np.inf if k is None else k))
    log_choose_group = _log_comb(n.astype(np.float64), r)
    log_fact_group = gammaln((r - 1) + 1.0)
    term_group = offsets[ok]
    remaining, chosen = nn[ok] - j[ok], rr[ok] - 1
    log_p = ((gammaln(remaining + 1.0) - log_fact_group[term_group]
              - gammaln(remaining - chosen + 1.0)) - log_choose_group[term_group])
    terms = np.exp(log_p) / (ss[ok] + j[ok])
    return sum_by_query(term_group, terms, n.size)


@_device_form(DK.average_precision_sum)
def average_precision_sum(ranking, threshold, k):
    """Expected sum over relevant ranks i <= k of precision@i (to be divided by R)."""
    nq = ranking.n_queries
    if ranking.has_ties and ranking.few_tie_groups():
        return _average_precision_sum_by_group(ranking, threshold, k)
    if ranking.has_ties and _speedups is not None and ranking._tie_same is not None:
        # (few large groups, above, are as fast in numpy: measured on integers 0-10)
        return _average_precision_sum_compiled(ranking, threshold, k)
    # Only relevant rows contribute: the j-th relevant row of its query (from 1) at
    # position p adds j / (p + 1).
    rows, query, position = ranking.relevant_rows(threshold)
    _, first_of_query = ranking.relevant_first(threshold)
    hits = np.arange(1, rows.shape[0] + 1)
    hits -= first_of_query[query]
    if not ranking.has_ties:
        if k is None:
            terms = position + 1.0
            return sum_by_query(query, np.divide(hits, terms, out=terms), nq)
        keep = position < k
        return sum_by_query(query[keep], hits[keep] / (position[keep] + 1.0), nq)
    # Under ties a row alone in its tie group adds the same; each group of two or more
    # rows holding a relevant one adds its expected sum (see _tied_group_terms) in
    # place of its relevant rows' terms: at its first relevant row, the others adding
    # 0.0.  The terms are summed in rank order, one per relevant row, as the groups'
    # terms would be: a row alone in its group gets, to the last bit, the value of the
    # tie-free path, and only the groups of several rows (few, with rounded scores)
    # cost more than a row.
    terms = position + 1.0
    np.divide(hits, terms, out=terms)
    if k is not None:
        terms[position >= k] = 0.0
    tied, group = ranking.relevant_in_runs(threshold)
    if tied.size:
        # The groups holding a relevant row, in order, from the runs of equal ``group``
        # among the tied relevant rows: each one's first relevant row in ``rows``.
        opens = np.ones(tied.shape[0], dtype=bool)
        np.not_equal(group[1:], group[:-1], out=opens[1:])
        at = np.flatnonzero(opens)
        first = tied[at]
        n_rel = np.diff(np.append(at, tied.shape[0]))
        run_starts, run_ends = ranking.tie_runs()
        group = group[at]
        starts = run_starts[group]
        sizes = run_ends[group] - starts
        group_position = position[first] - (rows[first] - starts)
        group_terms = _tied_group_terms(ranking, k, starts, sizes, group_position,
                                        hits[first] - 1, n_rel)
        # The relevant rows of each group add 0.0 but the first, which adds its term.
        terms[tied] = 0.0
        terms[first] = group_terms
    return sum_by_query(query, terms, nq)


def _compiled_groups(ranking, threshold):
    """``(starts, sizes, positions, above, n_rel, first)`` of every tie group of two or
    more rows, in rank order (its first row, size, position in its query, relevant rows
    of the query above it and in it) and each query's first relevant row (-1: none),
    found by ``skrank._engine._speedups`` in one pass over the ranked rows.  Shared by
    average precision and reciprocal rank."""
    def find():
        relevant = ranking._ranked_relevant(threshold)
        offsets = np.ascontiguousarray(ranking.offsets, dtype=np.intp)
        same = ranking._tie_same
        capacity = ranking.tied_pairs()   # at least the groups
        if 8 * capacity > same.shape[0]:   # many tied pairs (large groups?): count the groups
            capacity = int(same[0]) + int(np.count_nonzero(same[1:] > same[:-1]))
        found = [np.empty(capacity + 1, dtype=np.intp) for _ in range(5)]
        first = np.empty(ranking.n_queries, dtype=np.intp)
        n_groups = _speedups.tie_groups(relevant, same, offsets, *found, first)
        return (*(column[:n_groups] for column in found), first)
    return ranking._cached(("compiled_groups", threshold), find)


def _average_precision_sum_compiled(ranking, threshold, k):
    """:func:`average_precision_sum` under ties by ``skrank._engine._speedups``, where it
    was built: the same terms, summed in the same order (the values of the per-row path
    below, to the last bit), in two passes over the ranked rows instead of a dozen numpy
    calls.  The first finds every tie group of two or more rows
    (:func:`_compiled_groups`); numpy computes the terms of those holding a relevant row
    (:func:`_tied_group_terms`); the second sums, query by query in rank order,
    ``hits / (position + 1)`` of each relevant row alone in its group and each group's
    term."""
    starts, sizes, positions, above, n_rel, _ = _compiled_groups(ranking, threshold)
    live = np.flatnonzero(n_rel)
    terms = np.zeros(starts.shape[0] + 1)   # a group without a relevant row adds 0.0; one more
    terms[live] = _tied_group_terms(ranking, k, starts[live], sizes[live], positions[live],
                                    above[live], n_rel[live])
    sums = np.empty(ranking.n_queries)
    _speedups.tie_ap_sums(ranking._ranked_relevant(threshold), ranking._tie_same,
                          np.ascontiguousarray(ranking.offsets, dtype=np.intp),
                          sys.maxsize if k is None else int(k), terms, sums)
    return sums


def _average_precision_sum_by_group(ranking, threshold, k):
    """:func:`average_precision_sum` under ties, one term per tie group holding a
    relevant row (few groups: see ``few_tie_groups``), in rank order.  A group without
    one adds exactly 0.0 to its query's sum (a bincount adding terms one after
    another), so leaving it out changes no bit."""
    at_start = ranking.relevant_at_groups(threshold)
    starts, sizes, group_query, group_position = ranking.tie_groups()
    live = np.flatnonzero(np.diff(at_start))
    starts, sizes, group_query, group_position = (starts[live], sizes[live], group_query[live],
                                                  group_position[live])
    n_rel = (at_start[live + 1] - at_start[live]).astype(np.float64)
    above = (at_start[live] - ranking.relevant_at_queries(threshold)[:-1][group_query]
             ).astype(np.float64)
    terms = _tied_group_terms(ranking, k, starts, sizes, group_position, above, n_rel)
    # A relevant row alone in its group: the tie-free term, hits / (position + 1) (the
    # closed form can differ in the last bit, and a query without ties must get the
    # value it gets where no group is formed).
    single = (sizes == 1) & (n_rel == 1.0)
    if k is not None:
        single &= group_position < k
    single = np.flatnonzero(single)
    terms[single] = (above[single] + 1.0) / (group_position[single] + 1.0)
    return sum_by_query(group_query, terms, ranking.n_queries)


def _tied_group_terms(ranking, k, starts, sizes, group_position, above, n_rel):
    """Expected sum of precision at the relevant ranks (below ``k``) within each tie
    group: ``sizes`` rows from position ``group_position`` (first ranked row
    ``starts``), ``n_rel`` of them relevant, ``above`` relevant rows ranked above it."""
    n_rel = n_rel.astype(np.float64)
    above = above.astype(np.float64)
    # Each slot t (from 1) of a group holds a relevant document with probability r/n and
    # then adds E[hits] / rank with E[hits] = c + 1 + (r-1)(t-1)/(n-1): linear in t - 1,
    # so two sums per group over its ranks within the cutoff carry all the row work:
    # sum 1/rank, and sum (t-1)/rank = slots - first_rank * sum 1/rank (rank = first_rank
    # + t - 1), whose rounding error stays below a few ulps of the slot count.
    slots = sizes.astype(np.float64)
    if k is not None:
        np.clip(k - group_position, 0, sizes, out=slots, casting="unsafe")
    sum_inverse = _inverse_rank_sums(ranking, k, starts, sizes, group_position)
    sum_offset = slots - (group_position + 1.0) * sum_inverse
    n = sizes.astype(np.float64)
    slope = (n_rel - 1.0) / np.maximum(n - 1.0, 1.0)
    return (n_rel / n) * ((above + 1.0) * sum_inverse + slope * sum_offset)


def _inverse_rank_table(longest, k):
    """``1 / (position + 1)`` of positions 0 .. longest - 1, 0 at positions >= k."""
    table = np.arange(1.0, longest + 1.0)
    np.reciprocal(table, out=table)
    if k is not None:
        table[k:] = 0.0
    return table


def _inverse_ranks(ranking, k):
    """``1 / (position + 1)`` of every ranked row, 0 at positions >= k (k None: no cutoff).

    Built from a table over positions: tiled when every query holds as many rows
    (no per-row index at all), else gathered by position.
    """
    longest = ranking.max_kept
    table = _inverse_rank_table(longest, k)
    n_kept = ranking.n_kept
    if ranking.n_queries and n_kept.min() == longest:
        return np.tile(table, ranking.n_queries)
    return table[ranking.position]


# The distinct (first position, size) pairs of tie groups are summed once when the pair
# table holds at most this many cells per group and their rows are at most this share of
# the ranked rows (0: never; lowered or raised in the tests).
# Measured: the pair table as a route (a million rows in 100k tie groups: 6x faster);
# the limit of 1 itself is not measured.
_PAIR_TABLE_LIMIT = 1


def _inverse_rank_sums(ranking, k, starts, sizes, positions):
    """Per tie group (first rows ``starts``, ``sizes`` rows from ``positions``), the sum
    of :func:`_inverse_ranks` over its rows: ``np.add.reduceat`` of them, to the last bit.

    A group's sum depends only on its first position and its size.  Short rankings hold
    few distinct pairs of the two (at most ``longest * (longest + 1)``): each is summed
    once, by the same reduceat over the same values, and the groups look their sums up,
    instead of a pass over every row (a million rows in 100k groups: 6x faster).
    """
    longest = ranking.max_kept
    width = longest + 1
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(starts.shape[0])
    if longest * width > _PAIR_TABLE_LIMIT * starts.shape[0]:  # a table larger than the groups
        if 4 * total < ranking.labels.shape[0]:  # groups holding few of the rows: theirs only
            begin = np.cumsum(sizes) - sizes
            rows = np.repeat(positions - begin, sizes) + np.arange(total)
            return np.add.reduceat(_inverse_rank_table(longest, k)[rows], begin)
        return _group_sums(_inverse_ranks(ranking, k), starts, sizes)
    # The distinct pairs hold at most the groups' rows: never more to sum than without.
    pair = positions * width
    pair += sizes
    seen = np.zeros(longest * width, dtype=bool)
    seen[pair] = True
    distinct = np.flatnonzero(seen)
    first, size = np.divmod(distinct, width)
    total = int(size.sum())
    begin = np.cumsum(size) - size
    rows = np.repeat(first - begin, size) + np.arange(total)
    sums = np.empty(longest * width)
    sums[distinct] = np.add.reduceat(_inverse_rank_table(longest, k)[rows], begin)
    return sums[pair]


def _group_sums(values, starts, sizes):
    """``values[start:start + size].sum()`` per group, summed in row order as
    ``np.add.reduceat`` sums (the groups need not tile ``values``)."""
    if starts.shape[0] == 0:
        return np.zeros(0)
    ends = starts + sizes
    if starts[0] == 0 and ends[-1] == values.shape[0] and np.array_equal(starts[1:], ends[:-1]):
        return np.add.reduceat(values, starts)
    bounds = np.empty(2 * starts.shape[0], dtype=np.intp)
    bounds[0::2] = starts
    bounds[1::2] = ends
    if ends[-1] >= values.shape[0]:
        values = np.append(values, 0.0)
    return np.add.reduceat(values, bounds)[0::2]


@_device_form(DK.expected_reciprocal_rank)
def expected_reciprocal_rank(ranking, labels, max_grade, k):
    """ERR (Chapelle et al. 2009) in the ranking's order (no tie averaging)."""
    stop = np.exp2(labels - max_grade) - np.exp2(-max_grade)  # (2^rel - 1) / 2^max_grade
    # prod_{j<i} (1 - R_j) per query, via sums of logs; a certain stop (R_j rounds to 1
    # on large scales) is counted apart so that no -inf enters the sums.
    certain = stop >= 1.0
    log_continue = np.log1p(-np.where(certain, 0.0, stop))

    first = ranking.offsets[:-1][ranking.query]
    # Sums within each query (not differences of one running sum over all queries):
    # a query's value does not depend on the queries evaluated with it.
    shifted = np.zeros_like(log_continue)
    shifted[1:] = log_continue[:-1]
    shifted[first] = 0.0
    before = segment_accumulate(np.add, shifted, ranking.query, np.diff(ranking.offsets))
    stops_before = np.concatenate(([0], np.cumsum(certain)))
    blocked = (stops_before[:-1] - stops_before[first]) > 0
    terms = np.where(blocked, 0.0, stop * np.exp(before)) / (ranking.position + 1.0)
    rows, query, _ = _ranked_rows(ranking, k)
    return sum_by_query(query, _take(terms, rows), ranking.n_queries)
