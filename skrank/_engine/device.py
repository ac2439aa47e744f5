"""Array-API inputs (PyTorch, CuPy, array-api-strict, ...): the one adapter.

NumPy input (and lists, pandas, ...) never reaches this module: it keeps the
NumPy engine of :mod:`skrank._grouping` and :mod:`skrank._kernels`.  Input
whose ``y_true`` or ``y_score`` is an array of another array-API namespace is
validated, grouped, ordered and scored in that namespace on the arrays' own
device, by:

* :func:`check_ranking_arrays` (validation on the device; a failing check is
  re-run on host copies by the NumPy validation, for the house error message);
* :func:`rank_queries`: one stable sort by (query, -score, tie key), tie
  groups, offsets -> a :class:`DeviceRanking` with the attributes the metric
  kernels read;
* the kernels of :mod:`skrank._kernels`, which hand a :class:`DeviceRanking`
  to :mod:`skrank._device_kernels` (same closed forms, array-API operations).

The standard has sorts (``argsort(stable=True)``), ``searchsorted`` and
``cumulative_sum`` but no scatter: :func:`segment_sum` uses the namespace's
own primitive (``index_add_`` in PyTorch, ``bincount`` in CuPy) and, for any
other namespace, differences of a cumulative sum over the contiguous
segments.

Return conventions (scikit-learn's for its array-API metrics): the metric
functions and :func:`skrank.evaluate`'s means are Python floats; per-query
values (``per_query_scores``, ``Evaluation.per_query``) stay arrays of the
input's namespace on its device.  Query ids stay where they were given: a
device ``qid`` gives device ids, a host ``qid`` (NumPy, list, strings) is
factorised on the host and only its integer codes are copied to the device.
"""

import numpy as np

from .xp import (
    _compat,
    _is_foreign,
    _length,
    device_of,
    float_dtype,
    namespace,
    segment_sum,
    stable_argsort,
    to_numpy,
)
from .codes import check_no_missing_qid, factorize_qid
from .ids import as_qid_array


def segment_cumsum_exclusive_local(xp, values, position, longest):
    """Per row: the sum of the earlier values of its segment, summed within the segment
    only (a doubling scan: ``log2(longest)`` steps), so that a float's rounding grows with
    its segment's length, not with the whole array's as in :func:`segment_cumsum_exclusive`.
    ``position`` is each row's place in its segment, ``longest`` the longest segment."""
    n = values.shape[0]
    zero = xp.zeros_like(values)
    # Exclusive: row i starts from row i - 1's value when both are in one segment.
    out = xp.where(position > 0, xp.concat([zero[:1], values[:-1]]), zero) if n else values
    shift = 1
    while shift < longest - 1:
        earlier = xp.concat([zero[:shift], out[:n - shift]])
        out = xp.where(position > shift, out + earlier, out)
        shift *= 2
    return out


def _fail_on_host(func, y_true, y_score, qid, retrieved, check):
    """Re-run the NumPy validation on host copies: it raises the house error."""
    check(func, to_numpy(y_true), to_numpy(y_score),
          None if qid is None else to_numpy(qid),
          None if retrieved is None else to_numpy(retrieved))
    raise ValueError(f"{func}: invalid input arrays.")  # pragma: no cover (host check raised)


def check_ranking_arrays(func, y_true, y_score, qid, retrieved, host_check):
    """:func:`skrank._engine.arrays.check_ranking_arrays` for device arrays, or None
    when neither ``y_true`` nor ``y_score`` is one (then the NumPy path runs).

    Returns ``(y_true, y_score, qid, shape, retrieved)`` with float arrays of one
    floating dtype on the scores' device; ``qid`` as given (a device array, or a
    host array); ``retrieved`` a boolean device array or None.
    """
    xp = namespace(y_true, y_score)
    if xp is None:
        return None
    compat = _compat()
    device = compat.device(y_score if _is_foreign(y_score) else y_true)
    dtype = float_dtype(xp, y_true, y_score)

    def on_device(values):
        if values is None:
            return None
        if not _is_foreign(values):
            values = np.asarray(values)
            if values.dtype.kind not in "iufb":
                return None
        values = xp.asarray(values, device=device)
        if not (xp.isdtype(values.dtype, ("real floating", "integral", "bool"))):
            return None
        return xp.astype(values, dtype, copy=False)

    labels, scores = on_device(y_true), on_device(y_score)
    ok = labels is not None and scores is not None and labels.ndim == scores.ndim \
        and labels.ndim in (1, 2) and labels.shape == scores.shape and labels.shape[0] > 0
    if ok and labels.ndim == 2:
        ok = qid is None and retrieved is None and labels.shape[1] > 0
    elif ok:
        ok = qid is not None and _length(qid) == labels.shape[0]
    mask = None
    if ok and retrieved is not None:
        mask = xp.asarray(retrieved if _is_foreign(retrieved) else np.asarray(retrieved),
                          device=device)
        ok = mask.dtype == xp.bool and mask.ndim == 1 and mask.shape[0] == labels.shape[0]
    if ok:  # both checks in one transfer: finite labels, scores not NaN (inf is ranked)
        scored = ~xp.isnan(scores) if mask is None else ~xp.isnan(scores) | ~mask
        ok = bool(xp.all(xp.isfinite(labels)) & xp.all(scored))
    if not ok:
        _fail_on_host(func, y_true, y_score, qid, retrieved, host_check)
    if bool(xp.any(xp.isinf(scores))):  # dense ranks keep every order and tie
        ranks = xp.unique_inverse(scores).inverse_indices
        exact = scores.dtype if scores.shape[0] < 2 ** 24 else xp.float64
        scores = xp.astype(ranks, exact)
    if _is_foreign(qid) and xp.isdtype(qid.dtype, "real floating") \
            and bool(xp.any(xp.isnan(qid))):

        check_no_missing_qid(func, to_numpy(qid))  # raises the house error
    if labels.ndim == 2:
        shape = tuple(labels.shape)
        return xp.reshape(labels, (-1,)), xp.reshape(scores, (-1,)), None, shape, None
    return labels, scores, qid, None, mask


def query_weights(func, sample_weight, qid, n_queries, codes_of, host_check):
    """Per-query weights on the device from per-row (``qid``) or per-query weights.

    ``codes_of(qid)`` gives ``(codes, qids)`` as :func:`rank_queries` factorises
    them.  A failed check re-runs ``host_check`` on host copies for its message.
    """
    xp = namespace(sample_weight, qid)
    device = device_of(sample_weight if _is_foreign(sample_weight) else qid)
    weights = xp.asarray(sample_weight if _is_foreign(sample_weight)
                         else np.asarray(sample_weight, dtype=np.float64), device=device)

    def fail():
        host_check(func, to_numpy(sample_weight),
                   qid=None if qid is None else to_numpy(qid), n_queries=n_queries)
        raise ValueError(f"{func}: invalid sample_weight.")  # pragma: no cover

    expected = n_queries if qid is None else _length(qid)
    if weights.ndim != 1 or weights.shape[0] != expected or not xp.isdtype(
            weights.dtype, ("real floating", "integral", "bool")):
        fail()
    weights = xp.astype(weights, xp.float64)
    if not bool(xp.all(xp.isfinite(weights) & (weights >= 0))) or float(xp.sum(weights)) <= 0:
        fail()
    if qid is None:
        return weights
    codes, qids = codes_of(qid)
    codes = xp.asarray(codes, device=device)
    # The first row's weight of each query, then every row compared with it.
    order = stable_argsort(xp, codes)
    sorted_codes = xp.take(codes, order)
    first = xp.searchsorted(sorted_codes, xp.arange(qids.shape[0], device=device))
    per_query = xp.take(xp.take(weights, order), first)
    if bool(xp.any(xp.take(per_query, codes) != weights)):
        fail()
    return per_query


def factorize(func, qid, device, xp):
    """``(codes on the device, qids)``: device ids by ``unique_inverse`` (sorted ids),
    host ids by the NumPy factoriser (its order), codes then copied to the device."""
    codes, qids, _ = _factorize(func, qid, device, xp)
    return codes, qids


def _factorize(func, qid, device, xp):
    """:func:`factorize`'s ``(codes, qids)`` and whether the codes are sorted (rows
    grouped by query), known without a further transfer."""
    if _is_foreign(qid):
        if qid.shape[0] > 1:
            # Sorted ids (the usual layout): runs of equal ids, numbered without a sort.
            # One transfer says both whether they are sorted and how many runs there are.
            new = xp.concat([xp.ones(1, dtype=xp.bool, device=device), qid[1:] != qid[:-1]])
            codes = xp.cumulative_sum(xp.astype(new, xp.int64)) - 1
            # (-1 made on the device from codes[0] == 0: no host-to-device copy.)
            last = int(xp.where(xp.all(qid[1:] >= qid[:-1]), codes[-1], -codes[0] - 1))
            if last >= 0:
                starts = xp.searchsorted(codes, xp.arange(last + 1, device=device))
                return codes, xp.take(qid, starts), True
        qids, codes = xp.unique_inverse(qid)
        return xp.astype(codes, xp.int64), qids, qid.shape[0] <= 1

    codes, qids, _ = factorize_qid(func, as_qid_array(qid))
    codes = np.asarray(codes, dtype=np.int64)
    grouped = bool(np.all(codes[1:] >= codes[:-1]))  # on the host: no transfer
    return xp.asarray(codes, device=device), qids, grouped


class DeviceRanking:
    """The device counterpart of :class:`skrank._engine.ranking.Ranking`: every retrieved
    row ranked (no depth), attributes of the same names and meanings, arrays of
    the namespace ``xp`` on one device.  Tie groups: ``group`` (each ranked row's
    group) and ``group_start``, ``group_size``, ``group_query``, ``group_position``
    when ``tie_starts`` is not None."""

    depth = None

    def __init__(self, xp, *, qids, query, labels, offsets, tie_starts, all_labels, all_query,
                 all_offsets, group=None, max_kept=None):
        self.xp = xp
        self.device = device_of(labels)
        self.dtype = labels.dtype
        self.qids = qids
        self.n_queries = offsets.shape[0] - 1
        self.query = query
        self.labels = labels
        self.offsets = offsets
        self.n_kept = offsets[1:] - offsets[:-1]
        self.n_ranked = self.n_kept
        self.position = xp.arange(labels.shape[0], device=self.device) - xp.take(offsets, query)
        self.fposition = xp.astype(self.position, self.dtype)
        self.tie_starts = tie_starts
        self.all_labels = all_labels
        self.all_query = all_query
        self.all_offsets = all_offsets
        if all_offsets is offsets:  # every judged row is ranked
            self.all_position = self.position
        else:
            self.all_position = (xp.arange(all_labels.shape[0], device=self.device)
                                 - xp.take(all_offsets, all_query))
        self._cache = {}
        if max_kept is not None:
            self._cache["max_kept"] = max_kept
        if tie_starts is not None:
            starts = tie_starts[:-1]
            self.group_start = starts
            self.group_size = tie_starts[1:] - starts
            self.group_query = xp.take(query, starts)
            self.group_position = xp.take(self.position, starts)
            self.group = group  # each row's group

    @property
    def max_kept(self):
        """Rows of the longest query (one transfer, on first use)."""
        if "max_kept" not in self._cache:
            self._cache["max_kept"] = int(self.xp.max(self.n_kept)) if self.n_queries else 0
        return self._cache["max_kept"]

    def sum_by_query(self, values):
        return segment_sum(self.xp, values, self.query, self.offsets, self.n_queries)

    def sum_by_group(self, values):
        return segment_sum(self.xp, values, self.group, self.tie_starts,
                           self.group_start.shape[0])

    def sum_groups_by_query(self, values):
        group_offsets = self.xp.searchsorted(self.group_query, self.xp.arange(
            self.n_queries + 1, device=self.device))
        return segment_sum(self.xp, values, self.group_query, group_offsets, self.n_queries)

    def as_float(self, values):
        return self.xp.astype(values, self.dtype)

    def relevant(self, threshold):
        key = ("relevant", threshold)
        if key not in self._cache:
            self._cache[key] = self.as_float(self.labels >= threshold)
        return self._cache[key]

    def n_relevant(self, threshold):
        key = ("n_relevant", threshold)
        if key not in self._cache:
            xp = self.xp
            self._cache[key] = xp.astype(segment_sum(
                xp, xp.astype(self.all_labels >= threshold, xp.int64), self.all_query,
                self.all_offsets, self.n_queries), xp.int64)
        return self._cache[key]

    def n_relevant_ranked(self, threshold):
        xp = self.xp
        return xp.astype(self.sum_by_query(xp.astype(self.labels >= threshold, xp.int64)),
                         xp.int64)

    def ideal_labels(self):
        """Each query's judged labels in decreasing order (the ideal ranking), sorted
        on first use: only nDCG and rbp's trec gain read it."""
        if "ideal" not in self._cache:
            xp = self.xp
            order, _, _ = _group(xp, self.all_query, [(self.all_labels, True)], self.n_queries,
                                 self.device, grouped=True, offsets=self.all_offsets,
                                 width=self._cache.get("all_width"))
            self._cache["ideal"] = xp.take(self.all_labels, order)
        return self._cache["ideal"]

    def max_label_by_query(self):
        """Largest judged label of each query (the first of its ideal ranking)."""
        return self.xp.take(self.ideal_labels(), self.all_offsets[:-1])

    def label_scale_by_row(self):
        """Per ranked row, the largest judged label of its query, at least 1, as float64
        (rbp's ``gain="trec"`` divides by it; the host :class:`Ranking` has the same)."""
        xp = self.xp
        top = xp.take(self.max_label_by_query(), self.query)
        return xp.astype(xp.where(top > 1.0, top, 1.0), xp.float64)


def _uniform_width(xp, offsets, n, n_queries):
    """The common size of the queries (one transfer), or 0 when sizes differ (None
    stands for "not known yet" where a width is passed on)."""
    width = n // n_queries if n_queries else 0
    if width * n_queries == n and bool(xp.all(offsets[1:] - offsets[:-1] == width)):
        return width
    return 0


def _group(xp, codes, keys, n_queries, device, grouped=False, offsets=None, width=None):
    """Order of rows by (query, keys[-1], ..., keys[0]): one stable sort per key, least
    significant first; returns ``(order, sorted codes, offsets)``.

    Rows already grouped into queries of one size (the 2-D form, uniform lists with
    sorted ids) are sorted row-wise as a (queries x documents) matrix: one sort per
    key, segmented for free, and no sort by query.  With ``grouped``, known
    ``offsets`` and ``width`` (the common size; 0 when the sizes differ) save their
    computation and a transfer."""
    n = codes.shape[0]
    if grouped:
        if offsets is None:
            offsets = xp.searchsorted(codes, xp.arange(n_queries + 1, device=device))
        if not keys:
            return xp.arange(n, device=device), codes, offsets
        if width is None:
            width = _uniform_width(xp, offsets, n, n_queries)
        if width:
            # Positions within each query, None while they are the rows' own order.
            within = None
            for key, descending in keys:
                block = xp.reshape(key, (n_queries, width))
                if within is not None:
                    block = xp.take_along_axis(block, within, axis=1)
                rows = xp.argsort(block, axis=1, stable=True, descending=descending)
                within = rows if within is None else xp.take_along_axis(within, rows, axis=1)
            base = xp.reshape(xp.arange(n_queries, dtype=within.dtype, device=device) * width,
                              (-1, 1))
            return xp.reshape(within + base, (-1,)), codes, offsets
    order = xp.arange(n, device=device)
    for key, descending in keys:
        order = xp.take(order, stable_argsort(xp, xp.take(key, order), descending=descending))
    # A stable sort by query keeps the keys' order within each query.
    order = xp.take(order, stable_argsort(xp, xp.take(codes, order)))
    sorted_codes = xp.take(codes, order)
    offsets = xp.searchsorted(sorted_codes, xp.arange(n_queries + 1, device=device))
    return order, sorted_codes, offsets


def rank_queries(func, y_true, y_score, qid, shape, retrieved, ties):
    """:func:`skrank._engine.ranking.rank_queries` for checked device arrays."""
    xp = namespace(y_true)
    device = device_of(y_true)
    width = None  # the common size of the queries, when known to be one
    if shape is not None:
        n_queries, width = shape
        codes = xp.reshape(xp.broadcast_to(xp.reshape(
            xp.arange(n_queries, dtype=xp.int64, device=device), (-1, 1)), shape), (-1,))
        qids = xp.arange(n_queries, device=device)
        grouped = True
        offsets = xp.arange(n_queries + 1, dtype=xp.int64, device=device) * width
    else:
        # Already grouped (sorted ids): the query sort is skipped.
        codes, qids, grouped = _factorize(func, qid, device, xp)
        n_queries = qids.shape[0]
        offsets = None
    all_labels = all_query = all_offsets = None
    if retrieved is not None:
        # The judged rows (retrieved or not), grouped by query, for R and the ideal ranking.
        all_order, all_query, all_offsets = _group(xp, codes, [], n_queries, device, grouped,
                                                   offsets)
        all_labels = xp.take(y_true, all_order)
        kept = xp.nonzero(retrieved)[0]
        codes, y_true, y_score = (xp.take(codes, kept), xp.take(y_true, kept),
                                  xp.take(y_score, kept))
        offsets = width = None  # unknown again once rows are dropped
    keys = [(y_score, True)]
    if ties in ("pessimistic", "optimistic"):  # tied rows: least / most relevant first
        keys = [(y_true, ties == "optimistic")] + keys
    # Stable sorts, least significant key first: the tie key, the score, the query.
    # (Dropping unretrieved rows keeps grouped ids grouped.)
    if grouped:
        if offsets is None:
            offsets = xp.searchsorted(codes, xp.arange(n_queries + 1, device=device))
        if width is None:
            width = _uniform_width(xp, offsets, codes.shape[0], n_queries)
    order, query, offsets = _group(xp, codes, keys, n_queries, device, grouped, offsets, width)
    labels = xp.take(y_true, order)
    n = labels.shape[0]
    if all_labels is None:  # every judged row is ranked
        all_labels, all_query, all_offsets = labels, query, offsets
    tie_starts = group = None
    if ties == "average" and n > 1:
        scores = xp.take(y_score, order)
        new_group = xp.concat([xp.ones(1, dtype=xp.bool, device=device),
                               (scores[1:] != scores[:-1]) | (query[1:] != query[:-1])])
        # Each row's group: the number of group starts at or before it, minus one; the
        # last one says (one transfer) whether any rows tie.
        group = xp.cumulative_sum(xp.astype(new_group, xp.int64)) - 1
        n_groups = int(group[-1]) + 1
        if n_groups < n:
            starts = xp.searchsorted(group, xp.arange(n_groups, device=device))
            # (xp.full, not xp.asarray: a host-to-device copy would wait for the device.)
            tie_starts = xp.concat([starts, xp.full((1,), n, dtype=starts.dtype,
                                                    device=device)])
        else:
            group = None
    ranking = DeviceRanking(xp, qids=qids, query=query, labels=labels, offsets=offsets,
                            tie_starts=tie_starts, all_labels=all_labels, all_query=all_query,
                            all_offsets=all_offsets, group=group,
                            max_kept=width if grouped and n_queries and width else None)
    if grouped and all_offsets is offsets:
        ranking._cache["all_width"] = width  # the ideal ranking's sort reuses it
    return ranking


def fill_skipped(values, kept_qids, qids):
    """Per-query device values over all ``qids``, NaN for the queries left out
    (``no_relevant="skip"``); ids on the host or on the device."""
    xp = namespace(values)
    device = device_of(values)
    if _is_foreign(qids):
        kept = xp.searchsorted(qids, kept_qids)  # device ids come sorted (unique_inverse)
    else:
        kept = xp.asarray(np.flatnonzero(np.isin(qids, kept_qids)), device=device)
    present = xp.zeros(qids.shape[0], dtype=xp.bool, device=device)
    # Scatter through a comparison: the standard has no index assignment of many places.
    rank = xp.searchsorted(kept, xp.arange(qids.shape[0], device=device))
    rank = xp.minimum(rank, xp.full_like(rank, max(kept.shape[0] - 1, 0)))
    if kept.shape[0]:
        present = xp.take(kept, rank) == xp.arange(qids.shape[0], device=device)
        spread = xp.take(values, rank)
    else:
        spread = xp.zeros(qids.shape[0], dtype=values.dtype, device=device)
    return xp.where(present, spread, xp.full_like(spread, float("nan")))


def matrix_arrays(func, y_true, y_score, exclude):
    """:func:`skrank._engine.matrix.matrix_arrays` for dense device matrices and a dense boolean
    ``exclude`` mask (device or host): the flat form with the excluded cells dropped; a
    user left without any cell gets one unranked row of label 0.  Returns
    ``(y_true, y_score, qid, retrieved, n_ranked)``, all on the device."""
    xp = namespace(y_true, y_score, exclude)
    if not (_is_foreign(y_true) and _is_foreign(y_score)) or exclude is None \
            or not (_is_foreign(exclude) or isinstance(exclude, np.ndarray)):
        raise TypeError(
            f"{func}: with {type(y_score).__module__.partition('.')[0]} arrays, y_true and "
            f"y_score must be dense 2-D arrays of that namespace and exclude a dense boolean "
            f"mask (a sparse matrix lives on the host). Got y_true of type "
            f"{type(y_true).__name__} and exclude of type {type(exclude).__name__} instead. "
            f"Pass exclude as a boolean array, e.g. torch.as_tensor(exclude.toarray())."
        )
    device = device_of(y_score)
    mask = xp.asarray(exclude, device=device)
    shape = tuple(y_score.shape)
    if mask.dtype != xp.bool or tuple(mask.shape) != shape or tuple(y_true.shape) != shape \
            or len(shape) != 2:
        raise ValueError(
            f"{func}: y_true, y_score and exclude must be 2-D of the same shape, exclude "
            f"boolean. Got shapes {tuple(y_true.shape)}, {shape} and {tuple(mask.shape)}, "
            f"exclude of dtype {mask.dtype} instead."
        )
    n_users, n_items = shape
    keep = xp.nonzero(~xp.reshape(mask, (-1,)))[0]
    n_ranked = n_items - xp.sum(xp.astype(mask, xp.int64), axis=1)
    empty = xp.nonzero(n_ranked == 0)[0]
    dtype = float_dtype(xp, y_true, y_score)

    def flat(values):
        return xp.astype(xp.take(xp.reshape(values, (-1,)), keep), dtype)

    zeros = xp.zeros(empty.shape[0], dtype=dtype, device=device)
    labels = xp.concat([flat(y_true), zeros])
    scores = xp.concat([flat(y_score), zeros])
    qid = xp.concat([keep // n_items, xp.astype(empty, keep.dtype)])
    retrieved = xp.concat([xp.ones(keep.shape[0], dtype=xp.bool, device=device),
                           xp.zeros(empty.shape[0], dtype=xp.bool, device=device)])
    return labels, scores, qid, retrieved, n_ranked
