"""trec_eval's measures: one declaration each, in trec_eval's order.

Each :class:`TrecMeasure` holds what trec_eval's ``m_<name>.c`` declares:
its name, how its parameters are read (``kind``), its default parameters,
how the ``all`` row aggregates the per-query values, whether per-query rows
are printed, and the kernel computing the per-query values from a
:class:`skrank._trec.data.TrecRanking` with numpy over all queries at once.
A measure the metric table has (``map``, ``P``, ``ndcg_cut``, ``bpref``, ...: its
declaration lists it in ``trec_names``) has no kernel here: the plan runs that
declaration's kernel on the engine's view of the same ranking
(:attr:`~skrank._trec.data.TrecRanking.engine`).  The others are declarations of
the metric table too (``trec_eval:<name>``, :mod:`skrank._declare.table`), which
:func:`trec_columns` executes.  :data:`TREC_MEASURES` lists them in trec_eval's
order and drives ``skrank evaluate``'s trec_eval mode (``-m all_trec``, ``-m
official``, bare and parameterised names, the output order), its ``--help`` and the
docs page ``docs/trec_eval.md``; adding a measure is adding one declaration here
(see ``docs/developing.md``).
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .data import NONPOOL, UNJUDGED, lround
from .._engine.measures import _map, _ndcg, _precision, _rbp
from .._engine.scan import segment_accumulate, segment_last

MIN_GEO_MEAN = 0.00001      # trec_eval.h: floor of the values in geometric means
INFAP_EPSILON = 0.00001     # trec_eval.h: smoothing in infAP

# How trec_eval reads ``-m name.params`` (meas_init.c):
#   "none"        no parameter (a given one is ignored)
#   "cut_long"    sorted distinct positive integer cutoffs; rows name_k
#   "cut_double"  sorted distinct float cutoffs; rows name_%3.2f
#   "p_double"    comma-separated floats, in order; row name_<params as typed>
#   "p_pair"      comma-separated name=value pairs; row name_<params as typed>
KINDS = ("none", "cut_long", "cut_double", "p_double", "p_pair")
# How the ``all`` row combines the per-query values (meas_avg.c and friends).
AGGREGATES = ("mean", "sum", "gm", "num_q", "num_rel", "none")


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure.

    Attributes
    ----------
    name : str
        trec_eval's name (``-m name``).
    kernel : callable or None
        ``kernel(ranking, params) -> ndarray`` of shape ``(n_queries,)``, or
        ``(n_queries, n_cutoffs)`` for the cut kinds.  None: the metric table's
        declaration that lists the name in its ``trec_names`` computes it (nDCG and
        RBP keep a kernel for the gains trec_eval's ``name=gain`` pairs name).
    summary : str
        One line for ``--help`` and the docs.
    kind : str
        How parameters are read (see :data:`KINDS`).
    defaults : tuple
        Default parameters (cutoffs, or values), as trec_eval's.
    aggregate : str
        How the ``all`` row combines queries (see :data:`AGGREGATES`).
    per_query : bool
        Whether ``-q`` prints a row per query.
    integer : bool
        Printed as an integer (``%ld``) rather than ``%6.4f``.
    placeholder_zero : bool
        Reset to 0 for a query missing from the run under ``-c`` (trec_eval
        computes it on its placeholder ranking, then clears these).
    skrank : str
        The skrank metric (and parameters) giving the same per-query values
        on arrays, or "" when there is none; for the docs.
    judgement_groups : bool
        A measure of ``-R qrels_jg`` (several sets of judgements per query,
        the qrels' second column): computed on each group, averaged per query.
    """

    name: str
    kernel: Optional[Callable] = field(repr=False)
    summary: str
    kind: str = "none"
    defaults: tuple = ()
    aggregate: str = "mean"
    per_query: bool = True
    integer: bool = False
    placeholder_zero: bool = False
    skrank: str = ""
    judgement_groups: bool = False


# --------------------------------------------------------------------------
# Helpers over a TrecRanking
# --------------------------------------------------------------------------


def _divide(num, den):
    """num / den where den != 0, else 0 (trec_eval leaves the value at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _sequential_sum(values, query, n_queries):
    """Per-query sum of ``values`` (grouped by query), added left to right."""
    lengths = np.bincount(query, minlength=n_queries).astype(np.int64)
    acc = segment_accumulate(np.add, np.asarray(values, dtype=np.float64), query, lengths)
    starts = np.zeros(n_queries, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return segment_last(acc, starts, lengths, lengths)


def _per_cutoff(r, cutoffs, func):
    return np.stack([func(k) for k in cutoffs], axis=1) if len(cutoffs) else \
        np.zeros((r.n_queries, 0))


def _gain_pairs(params):
    """The ``level=gain`` pairs of a p_pair parameter list (other names ignored)."""
    pairs = {}
    for name, value in params:
        if _is_int(name):
            pairs.setdefault(int(name), value)
    return pairs


def _is_int(text):
    text = text[1:] if text[:1] in "+-" else text
    return text.isdigit() and text.isascii()


def _named(params, name, default):
    for key, value in params:
        if key == name:
            return value
    return default


_FUNC = "evaluate"


def _table_kernel(kernel, ranking, **options):
    """The metric table's kernel (:mod:`skrank._engine.measures`) inside a measure of
    trec_eval's own (gm_map, P_avgjg, nDCG and RBP with named gains) on ``ranking``,
    the engine's view of a :class:`~skrank._trec.data.TrecRanking` (``r.engine``,
    ``r.engine_with(gains)``).  A query where it is undefined is 0, as trec_eval's."""
    values, undefined = kernel(ranking, func=_FUNC, **options)
    return values if undefined is None else np.where(undefined, 0.0, values)


def _average_precision(r):
    return _table_kernel(_map, r.engine, k=None, threshold=r.level, denominator="R")


def _judged_rel_mask(r):
    """bpref/infAP's relevant rows: judged, and not below the threshold."""
    nonrel = (r.rel >= 0) & (r.rel < r.level)
    return ~nonrel & (r.rel != NONPOOL) & (r.rel != UNJUDGED), nonrel


def _before(r, mask):
    """Per row, how many rows of ``mask`` rank above it in its query."""
    counts = np.zeros(mask.shape[0] + 1, dtype=np.int64)   # counts[i]: rows < i in mask
    np.cumsum(mask, out=counts[1:])
    return counts[:-1] - counts[r.starts][r.query]


def _bpref(r):
    relevant, nonrel = _judged_rel_mask(r)
    rows = np.flatnonzero(relevant)
    nonrel_before = _before(r, nonrel)[rows]
    q = r.query[rows]
    R = r.num_rel[q]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(nonrel_before > 0,
                         1.0 - np.minimum(nonrel_before, R) / np.minimum(r.num_nonrel[q], R),
                         1.0)
    return _divide(_sequential_sum(terms, q, r.n_queries), r.num_rel)


def _interpolated_precision(r, fractions):
    """trec_eval's iprec_at_recall at each fraction: (n_queries, n_fractions)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p_end = r.num_rel_ret / r.num_ret
    best_after = segment_accumulate(np.maximum, r.precision_at_rel, r.rel_query,
                                    r.num_rel_ret, reverse=True)
    has = r.num_rel_ret > 0

    def at(fraction):
        needed = lround(fraction * r.num_rel)
        reached = needed <= r.num_rel_ret
        out = np.where(reached, p_end, 0.0)
        ok = reached & has
        rows = r.rel_starts[ok] + np.maximum(needed[ok], 1) - 1
        out[ok] = np.maximum(p_end[ok], best_after[rows])
        return out

    return _per_cutoff(r, fractions, at)


def _powers(p, n):
    """p**0 .. p**n by repeated multiplication, as trec_eval's ``cur_p``."""
    steps = np.full(n + 1, p, dtype=np.float64)
    steps[0] = 1.0
    return np.multiply.accumulate(steps)


# --------------------------------------------------------------------------
# Kernels, one per measure
# --------------------------------------------------------------------------


def _k_zero(r, params):
    return np.zeros(r.n_queries)


def _k_num_q(r, params):
    return np.ones(r.n_queries)


def _k_num_ret(r, params):
    return r.num_ret.astype(np.float64)


def _k_num_rel(r, params):
    return r.num_rel.astype(np.float64)


def _k_num_rel_ret(r, params):
    return r.num_rel_ret.astype(np.float64)


def _k_map(r, params):
    return _average_precision(r)


def _k_gm_map(r, params):
    return np.log(np.maximum(_average_precision(r), MIN_GEO_MEAN))


def _k_gm_bpref(r, params):
    return np.log(np.maximum(_bpref(r), MIN_GEO_MEAN))


def _k_iprec_at_recall(r, params):
    return _interpolated_precision(r, params)


def _k_P(r, params):
    return _per_cutoff(r, params, lambda k: _table_kernel(
        _precision, r.engine, k=k, threshold=r.level, denominator="k"))


def _k_relstring(r, params):
    """The first N relevance codes of each ranking, one character each."""
    length = int(params[0]) if params else 10
    length = max(length, 0)
    chars = np.full(r.rel.shape[0], ord("<"), dtype=np.uint8)
    chars[r.rel > 9] = ord(">")
    digit = (r.rel >= 0) & (r.rel <= 9)
    chars[digit] = ord("0") + r.rel[digit]
    chars[r.rel == NONPOOL] = ord("-")
    chars[r.rel == UNJUDGED] = ord(".")
    block = np.zeros((r.n_queries, max(length, 1)), dtype=np.uint8)
    keep = r.position < length
    block[r.query[keep], r.position[keep]] = chars[keep]
    strings = block.view(f"S{block.shape[1]}").ravel()
    return np.char.decode(strings, "ascii") if length else np.full(r.n_queries, "")


def _k_unj(r, params):
    unjudged = (r.rel == NONPOOL) | (r.rel == UNJUDGED)
    return _per_cutoff(r, params, lambda k: r.count(unjudged, k) / float(k))


def _rbp_gains(r, params):
    gains = r.gains(_gain_pairs(params))
    lo, hi = gains.table_extremes()
    row = gains.row_gain.copy()
    inside = gains.row_in_table()
    q = r.query
    scale = (lo < 0) | (hi > 1)
    rescaled = inside & scale[q]
    row[rescaled] = (row[rescaled] - lo[q][rescaled]) / (hi[q][rescaled] - lo[q][rescaled])
    row[~inside] = 0.0
    return row


def _k_rbp(r, params):
    return _table_kernel(_rbp, r.engine_with(_rbp_gains(r, params)), k=None,
                         p=_named(params, "p", 0.9), threshold=r.level, gain="linear")


def _k_rbp_resid(r, params):
    p = _named(params, "p", 0.9)
    powers = _powers(p, int(r.num_ret.max(initial=0)))
    unjudged = r.rel < 0
    total = _sequential_sum(np.where(unjudged, powers[r.position], 0.0), r.query, r.n_queries)
    return np.where(r.count(unjudged) > 0, powers[r.num_ret] + (1 - p) * total, 0.0)


def _k_infap(r, params):
    relevant, nonrel = _judged_rel_mask(r)
    rows = np.flatnonzero(relevant)
    q = r.query[rows]
    j = r.position[rows].astype(np.float64)
    rel_before = _before(r, relevant)[rows]
    nonrel_before = _before(r, nonrel)[rows]
    unjudged_before = _before(r, r.rel == UNJUDGED)[rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (1.0 / (j + 1.0)
                 + (j / (j + 1.0))
                 * ((rel_before + nonrel_before + unjudged_before) / j)
                 * ((rel_before + INFAP_EPSILON)
                    / (rel_before + nonrel_before + 2 * INFAP_EPSILON)))
    terms = np.where(j == 0, 1.0, terms)
    return _divide(_sequential_sum(terms, q, r.n_queries), r.num_rel)


def _k_rprec_mult(r, params):
    def at(fraction):
        k = (fraction * r.num_rel + 0.9).astype(np.int64)
        return _divide(r.count(r.is_rel, k), k)
    return _per_cutoff(r, params, at)


def _k_utility(r, params):
    if len(params) != 4:
        raise ValueError("utility needs exactly 4 coefficients (utility.a,b,c,d). "
                         f"Got {len(params)}.")
    a, b, c, d = params
    nrr, nret, nrel = r.num_rel_ret, r.num_ret, r.num_rel
    return (a * nrr + b * (nret - nrr) + c * (nrel - nrr)
            + d * (r.num_docs_in_coll + nrr - nret - nrel))


def _k_11pt_avg(r, params):
    if not params:
        raise ValueError("11pt_avg needs at least one recall level.")
    values = _interpolated_precision(r, params)
    total = np.zeros(r.n_queries)
    for column in range(values.shape[1] - 1, -1, -1):  # trec_eval adds from the last
        total = total + values[:, column]
    return total / float(len(params))


def _k_binG(r, params):
    terms = 1.0 / np.log2((3 + r.rel_position - r.rel_rank).astype(np.float64))
    total = _sequential_sum(terms, r.rel_query, r.n_queries)
    return np.where(r.num_rel_ret > 0, _divide(total, r.num_rel), 0.0)


def _k_G(r, params):
    gains = r.gains(_gain_pairs(params))
    q, pos = r.query, r.position
    g = gains.row_gain
    inside = pos < gains.ideal_len[q]
    ideal_here = np.zeros(pos.shape[0])
    ideal_here[inside] = gains.ideal[gains.ideal_starts[q[inside]] + pos[inside]]
    cost = np.where(ideal_here >= 1.0, ideal_here, 1.0)
    sum_cost = r.cumsum(cost)
    sum_results = r.cumsum(g)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(g != 0, g / np.log2(2 + sum_cost - sum_results), 0.0)
    total = _sequential_sum(terms, q, r.n_queries)
    ideal_total = _sequential_sum(gains.ideal, gains.ideal_query, r.n_queries)
    return _divide(total, ideal_total)


def _dcg_and_ideal(r, pairs):
    gains = r.gains(pairs)
    dcg = gains.dcg_cumsum()
    ideal = gains.ideal_cumsum()
    return gains, dcg, ideal


def _k_ndcg(r, params):
    pairs = _gain_pairs(params)
    if not pairs:   # the levels as gains: the table's nDCG
        return _table_kernel(_ndcg, r.engine, k=None, gain="linear")
    # Named gains: trec_eval's ideal ranking follows its gain table's qsort (see
    # skrank._trec.data._Gains), which is not always by decreasing gain.
    gains, dcg, ideal = _dcg_and_ideal(r, pairs)
    return _divide(r.at_depth(dcg, r.num_ret), gains.ideal_at(ideal, gains.ideal_len))


def _k_ndcg_rel(r, params):
    gains, dcg, ideal = _dcg_and_ideal(r, _gain_pairs(params))
    n_pos = gains.ideal_len
    rows = np.flatnonzero(gains.row_gain > 0)
    q = r.query[rows]
    depth = np.minimum(r.position[rows] + 1, n_pos[q])
    ideal_at_row = np.zeros(rows.shape[0])
    ok = depth > 0
    ideal_at_row[ok] = ideal[gains.ideal_starts[q[ok]] + depth[ok] - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        total = _sequential_sum(dcg[rows] / ideal_at_row, q, r.n_queries)
        dcg_full = r.at_depth(dcg, r.num_ret)
        ideal_full = gains.ideal_at(ideal, n_pos)
        missed = (n_pos - np.bincount(q, minlength=r.n_queries)).astype(np.float64)
        total = total + missed * dcg_full / ideal_full
    return np.where(total > 0, _divide(total, n_pos), 0.0)


def _k_rndcg(r, params):
    gains, dcg, ideal = _dcg_and_ideal(r, _gain_pairs(params))
    n_pos = gains.ideal_len
    g = gains.ideal
    # Points where the ideal gain changes: t = 1..n_pos, ideal[t] != ideal[t-1]
    # (the end of the positive gains always counts).
    t = gains.ideal_position
    last = t == n_pos[gains.ideal_query] - 1
    change_next = np.zeros(g.shape[0], dtype=bool)
    change_next[:-1] = (g[1:] != g[:-1]) & ~last[:-1]
    change_next |= last
    rows = np.flatnonzero(change_next)      # the point is t = position + 1
    q = gains.ideal_query[rows]
    depth = t[rows] + 1
    take = np.minimum(depth, r.num_ret[q])
    dcg_at = np.zeros(rows.shape[0])
    ok = take > 0
    dcg_at[ok] = dcg[r.starts[q[ok]] + take[ok] - 1]
    values = dcg_at / ideal[rows]
    total = _sequential_sum(values, q, r.n_queries)
    points = np.bincount(q, minlength=r.n_queries).astype(np.float64)
    extra = n_pos + 1 < r.num_ret
    dcg_full = r.at_depth(dcg, r.num_ret)
    ideal_full = gains.ideal_at(ideal, n_pos)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(extra & (ideal_full > 0), total + dcg_full / ideal_full, total)
        points = points + (extra & (ideal_full > 0))
        value = total / points
    return np.where(r.num_rel == 0, 0.0, value)


def _k_relative_P(r, params):
    return _per_cutoff(r, params,
                       lambda k: _divide(r.count(r.is_rel, k), np.minimum(k, r.num_rel)))


def _k_set_P(r, params):
    return _divide(r.num_rel_ret, r.num_ret)


def _k_set_recall(r, params):
    return _divide(r.num_rel_ret, r.num_rel)


def _k_set_relative_P(r, params):
    return np.where(r.num_rel > 0, _divide(r.num_rel_ret, np.minimum(r.num_ret, r.num_rel)),
                    0.0)


def _k_set_map(r, params):
    nrr = r.num_rel_ret.astype(np.float64)
    den = r.num_ret.astype(np.float64) * r.num_rel.astype(np.float64)
    return _divide(nrr * nrr, den)


def _k_set_F(r, params):
    x = params[0] if params else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        P = r.num_rel_ret / r.num_ret.astype(np.float64)
        R = r.num_rel_ret / r.num_rel.astype(np.float64)
        value = (x + 1.0) * P * R / (x * P + R)
    return np.where(r.num_rel_ret > 0, value, 0.0)


def _k_num_nonrel_judged_ret(r, params):
    nonpool = r.count(r.rel == NONPOOL)
    unjudged = r.count(r.rel == UNJUDGED)
    return (r.num_ret - nonpool - unjudged - r.num_rel_ret).astype(np.float64)


def _averaged_over_groups(kernel):
    """A judgement-group measure: ``kernel`` on each (query, group), averaged per query."""
    def averaged(r, params):
        values = np.asarray(kernel(r.groups, params), dtype=np.float64)
        values = values.reshape(values.shape[0], -1)
        total = np.stack([_sequential_sum(values[:, j], r.group_query, r.n_queries)
                          for j in range(values.shape[1])], axis=1)
        n = r.groups_per_query[:, None].astype(np.float64)
        return np.where(n > 1, total / np.maximum(n, 1), total)
    return averaged


def _sequential_total(values):
    return float(np.add.accumulate(values)[-1]) if values.size else 0.0


def _all_sum(func, values, weights=None):
    return _sequential_total(values)


def _all_geometric(func, values, weights=None):   # the values are logs
    return float(np.exp(_sequential_total(values) / values.shape[0]))


def _all_count(func, values, weights=None):
    return float(values.shape[0])


def _all_none(func, values, weights=None):
    return float("nan")


def all_row_mean(func, values, weights=None):
    """trec_eval's mean: the values added in query order, over the number of queries."""
    return _sequential_total(values) / values.shape[0]


#: How trec_eval's ``all`` row combines the per-query values of a measure, by its
#: ``aggregate`` (the plan's aggregations of the ``trec_eval:`` declarations too).
#: ``num_rel`` under ``-c`` counts the qrels' relevant entries instead (trec_eval's
#: quirk; see skrank._trec_eval).
ALL_ROW = {"mean": all_row_mean, "sum": _all_sum, "num_rel": _all_sum,
           "gm": _all_geometric, "num_q": _all_count, "none": _all_none}


def trec_columns(func, calls, prepared):
    """``(qids, [values of each call])`` of calls of trec_eval's own measures (the
    declarations ``trec_eval:<name>`` of the metric table, executed by the plan): each
    declaration's kernel on the :class:`~skrank._trec.data.TrecRanking` given as the
    input ``trec_ranking`` (the command line's trec_eval mode builds it)."""
    ranking = prepared.inputs["trec_ranking"]
    return ranking.qids, [call.spec.kernel(ranking, call.options["params"]) for call in calls]


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

# In trec_eval's order (measures.c): the output lists measures in this order,
# whatever the order of the -m options.
TREC_MEASURES = {m.name: m for m in (
    TrecMeasure("runid", _k_zero, "the run tag of the results file", aggregate="none",
                per_query=False),
    TrecMeasure("num_q", _k_num_q, "number of queries evaluated", aggregate="num_q",
                per_query=False, integer=True),
    TrecMeasure("num_ret", _k_num_ret, "documents retrieved (summed over queries)",
                aggregate="sum", integer=True, placeholder_zero=True),
    TrecMeasure("num_rel", _k_num_rel, "relevant documents in the qrels (summed)",
                aggregate="num_rel", integer=True),
    TrecMeasure("num_rel_ret", _k_num_rel_ret, "relevant documents retrieved (summed)",
                aggregate="sum", integer=True),
    TrecMeasure("map", None, "mean average precision", skrank="map"),
    TrecMeasure("gm_map", _k_gm_map, "geometric mean of average precision",
                aggregate="gm", per_query=False),
    TrecMeasure("Rprec", None, "precision after R documents", skrank="r_precision"),
    TrecMeasure("bpref", None, "binary preference (judged documents only)",
                skrank="bpref (judged=)"),
    TrecMeasure("recip_rank", None, "reciprocal rank of the first relevant",
                skrank="mrr"),
    TrecMeasure("iprec_at_recall", _k_iprec_at_recall,
                "interpolated precision at recall levels", kind="cut_double",
                defaults=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    TrecMeasure("P", None, "precision at cutoffs", kind="cut_long", defaults=_CUTS,
                skrank="precision@k"),
    TrecMeasure("relstring", _k_relstring, "relevance codes of the first N documents",
                kind="p_double", defaults=(10.0,), aggregate="none"),
    TrecMeasure("recall", None, "recall at cutoffs", kind="cut_long", defaults=_CUTS,
                skrank="recall@k"),
    TrecMeasure("infAP", None, "inferred average precision", skrank="infap (judged=)"),
    TrecMeasure("gm_bpref", _k_gm_bpref, "geometric mean of bpref", aggregate="gm",
                per_query=False),
    TrecMeasure("Rprec_mult", _k_rprec_mult, "precision at multiples of R",
                kind="cut_double", defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    TrecMeasure("utility", _k_utility, "set utility a*relret + b*nonrelret + c*relmissed + "
                "d*nonrelmissed", kind="p_double", defaults=(1.0, -1.0, 0.0, 0.0),
                placeholder_zero=True),
    TrecMeasure("11pt_avg", _k_11pt_avg, "interpolated precision averaged over recall levels",
                kind="p_double",
                defaults=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    TrecMeasure("binG", _k_binG, "binary G (experimental)"),
    TrecMeasure("G", _k_G, "normalized gain G (experimental)", kind="p_pair"),
    TrecMeasure("ndcg", _k_ndcg, "nDCG with the qrels levels as gains (ndcg.L=gain,...)",
                kind="p_pair", skrank="ndcg (gain='linear')"),
    TrecMeasure("ndcg_rel", _k_ndcg_rel, "nDCG averaged over relevant documents",
                kind="p_pair"),
    TrecMeasure("Rndcg", _k_rndcg, "nDCG averaged at the R levels", kind="p_pair"),
    TrecMeasure("ndcg_cut", None, "nDCG at cutoffs", kind="cut_long", defaults=_CUTS,
                skrank="ndcg@k"),
    TrecMeasure("map_cut", None, "average precision at cutoffs (divided by R)",
                kind="cut_long", defaults=_CUTS, skrank="map@k"),
    TrecMeasure("relative_P", _k_relative_P, "precision at k divided by its maximum",
                kind="cut_long", defaults=_CUTS),
    TrecMeasure("success", None, "a relevant document in the top k", kind="cut_long",
                defaults=(1, 5, 10), skrank="hit_rate@k"),
    TrecMeasure("set_P", _k_set_P, "precision of the retrieved set"),
    TrecMeasure("set_relative_P", _k_set_relative_P, "set precision over its maximum"),
    TrecMeasure("set_recall", _k_set_recall, "recall of the retrieved set"),
    TrecMeasure("set_map", _k_set_map, "set precision times set recall"),
    TrecMeasure("set_F", _k_set_F, "F measure of the retrieved set (set_F.beta)",
                kind="p_double", defaults=(1.0,)),
    TrecMeasure("num_nonrel_judged_ret", _k_num_nonrel_judged_ret,
                "judged non-relevant documents retrieved (summed)", aggregate="sum",
                integer=True),
    TrecMeasure("map_avgjg", _averaged_over_groups(_k_map),
                "map averaged over judgement groups (-R qrels_jg)", judgement_groups=True),
    TrecMeasure("P_avgjg", _averaged_over_groups(_k_P),
                "P at cutoffs averaged over judgement groups (-R qrels_jg)", kind="cut_long",
                defaults=_CUTS, judgement_groups=True),
    TrecMeasure("Rprec_mult_avgjg", _averaged_over_groups(_k_rprec_mult),
                "Rprec_mult averaged over judgement groups (-R qrels_jg)", kind="cut_double",
                defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                judgement_groups=True),
    TrecMeasure("rbp", _k_rbp, "rank-biased precision, p=0.9, gains over the top level "
                "(rbp.p=0.8)", kind="p_pair", skrank="rbp (p=0.9, gain='trec')"),
    TrecMeasure("rbp_resid", _k_rbp_resid, "RBP residual from unjudged documents",
                kind="p_pair", placeholder_zero=True),
    TrecMeasure("unj", _k_unj, "share of unjudged documents at cutoffs", kind="cut_long",
                defaults=(5, 10, 20), placeholder_zero=True, skrank="1 - judged@k"),
)}

# trec_eval's nicknames (measures.c), in the order they list the measures.
NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
                 "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
                 "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
                 "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}

# trec_eval measures skrank does not compute (preference judgements, judgement groups).
UNSUPPORTED = ("dcg", "ideal_dcg", "ndcg_p", "yaap", "prefs_num_prefs_poss",
               "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
               "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
               "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
               "prefs_pair_imp", "prefs_avgjg_imp")
