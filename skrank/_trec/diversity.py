"""Diversity and intent-aware metrics (TREC Web track diversity task, ndeval).

A query's documents carry one binary judgement per subtopic (intent): a label
matrix of shape ``(n_rows, n_subtopics)`` beside ``qid``, or TREC diversity
qrels ``qid subtopic docno rel``.  Following ndeval 4.5 (Clarke et al.):

* a document covering subtopic ``j`` for the ``c``-th time (``c - 1`` documents
  above it cover ``j``) gains ``(1 - alpha) ** (c - 1)``; its gain is the sum over
  the subtopics it covers;
* ``m`` is the number of subtopics of the query that some judged document
  covers (retrieved or not); a query with ``m = 0`` is undefined (``no_relevant``:
  ndeval gives 0, and NaN for nNRBP);
* the ideal ranking is built greedily, each rank taking the document of largest
  gain given those above it; ties go to the last candidate in row order
  (``ideal_ties="last"``; with qrels, rows are in docno order, so this is
  ndeval's largest docno);
* alpha-DCG@k and ERR-IA@k are divided by an "ideal ideal", the value of a
  ranking whose document at rank ``i`` covers all ``m`` subtopics, except at
  ``k = 1`` (``normalization="ndeval"``); alpha-nDCG, nERR-IA and nNRBP divide
  by the value of the greedy ideal ranking.

Everything is vectorised over queries: the run's gains come from one cumulative
sum per subtopic, the greedy ideal from one pass per rank over a padded block of
every query's relevant documents (a loop over ranks and subtopics, never over
queries).  The metrics are declarations of the one metric table
(:data:`skrank.METRICS`, family ``"diversity"``), each naming its kernel here;
:func:`diversity_columns` is their executor and :func:`diversity_table` computes
any of them at once.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real

import numpy as np

from .._core.checks import InvalidParameterError, _describe
from ..io import Run, read_run
from ..io._fields import as_str_ids

TIES = ("pessimistic", "optimistic", "stable")
IDEAL_TIES = ("last", "first")
NO_RELEVANT = ("zero", "one", "skip", "nan", "raise")


def _check_option(func, name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise InvalidParameterError(
            f"{func}: {name} must be one of {', '.join(map(repr, choices))}. "
            f"Got {_describe(value)} instead.")
    return value


# ---------------------------------------------------------------------------
# Arrays.


def check_arrays(func, y_true, y_score, qid, retrieved):
    """``(rel, score, codes, qids, retrieved)``: labels as a 2-D float matrix, scores,
    query codes (0..n_queries-1, sorted ids) and the retrieved mask."""
    if hasattr(y_true, "toarray") and not isinstance(y_true, np.ndarray):  # scipy.sparse
        y_true = y_true.toarray()
    labels = np.asarray(y_true)
    if labels.ndim == 1:
        labels = labels[:, None]
    if labels.ndim != 2:
        raise ValueError(
            f"{func}: y_true must be a 2-D label matrix of shape (n_rows, n_subtopics). Got an "
            f"array of shape {labels.shape} instead.")
    try:
        labels = labels.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{func}: y_true must hold numbers (one label per subtopic). Got dtype "
            f"{labels.dtype} instead.") from None
    if np.isnan(labels).any():
        row = int(np.flatnonzero(np.isnan(labels).any(axis=1))[0])
        raise ValueError(
            f"{func}: y_true (the subtopic labels) must have no missing values. Got NaN in "
            f"row {row} instead. Write 0 for a subtopic the document does not cover.")
    n = labels.shape[0]
    score = np.asarray(y_score, dtype=np.float64).reshape(-1) if n else np.zeros(0)
    if score.shape[0] != n:
        raise ValueError(f"{func}: y_true and y_score must have the same number of rows. Got "
                         f"{n} and {score.shape[0]} instead.")
    if qid is None:
        raise ValueError(f"{func}: qid is required with a 2-D label matrix (one row per "
                         f"document, one column per subtopic). Got None instead.")
    qid = np.asarray(qid)
    if qid.shape != (n,):
        raise ValueError(f"{func}: qid must have one id per row of y_true. Got shape "
                         f"{qid.shape} for {n} rows instead.")
    if retrieved is None:
        retrieved = np.ones(n, dtype=bool)
    else:
        retrieved = np.asarray(retrieved)
        if retrieved.shape != (n,) or retrieved.dtype != bool:
            raise ValueError(f"{func}: retrieved must be a boolean array with one value per "
                             f"row. Got {_describe(retrieved)} instead.")
    if not np.isfinite(score[retrieved]).all():
        raise ValueError(f"{func}: y_score must be finite for the retrieved rows. Got NaN "
                         f"or infinity instead.")
    qids, codes = np.unique(qid, return_inverse=True)
    return labels, score, codes.reshape(-1), qids, retrieved


def _segment_starts(codes_sorted, n_queries):
    return np.searchsorted(codes_sorted, np.arange(n_queries + 1))


def _powers(base, n):
    """``base ** i`` for i < n, by repeated multiplication (ndeval's sequence)."""
    out = np.empty(max(n, 1))
    out[0] = 1.0
    if n > 1:
        np.cumprod(np.full(n - 1, base), out=out[1:])
    return out[:max(n, 0)] if n else out[:0]


def _discount(n):
    """``log(2) / log(i + 2)`` for i < n (ndeval's discount; 1 at rank 1)."""
    return np.log(2.0) / np.log(np.arange(n) + 2.0)


def _row_gains(rel, counts_before, alpha, weights=None):
    """Per row, ``sum_j w_j rel_j * (1 - alpha) ** counts_before_j``, summed subtopic after
    subtopic (ndeval's order); ``weights`` (one row per ranked row), 1 when None."""
    steps = _powers(1.0 - alpha, int(counts_before.max(initial=0)) + 1)
    gains = np.zeros(rel.shape[0])
    for j in range(rel.shape[1]):
        step = steps[counts_before[:, j]]
        gains += np.where(rel[:, j], step if weights is None else weights[:, j] * step, 0.0)
    return gains


def _greedy_ideal(rel_by_query, starts, n_queries, alpha, depth, ideal_ties, weights=None):
    """Gains of the greedy ideal ranking of each query, ``(n_queries, depth)``.

    ``rel_by_query``: the relevant rows (covering at least one subtopic) grouped by
    query in row order, ``starts`` their offsets.  Each rank, every query takes the
    candidate of largest gain (ties: last or first in row order), then its
    subtopics' gains shrink by ``1 - alpha``.  Rows covering nothing gain 0 at any
    rank and rank last, so they are left out.
    """
    m = rel_by_query.shape[1]
    sizes = np.diff(starts)
    width = int(sizes.max(initial=0))
    depth = min(depth, width)
    out = np.zeros((n_queries, max(depth, 0)))
    if depth <= 0:
        return out
    block = np.zeros((n_queries, width, m), dtype=bool)
    within = np.arange(rel_by_query.shape[0]) - np.repeat(starts[:-1], sizes)
    block[np.repeat(np.arange(n_queries), sizes), within] = rel_by_query
    available = np.arange(width)[None, :] < sizes[:, None]
    subtopic_gain = np.ones((n_queries, m)) if weights is None else weights.copy()
    rows = np.arange(n_queries)
    keep = 1.0 - alpha
    for rank in range(depth):
        score = np.zeros((n_queries, width))
        for j in range(m):  # subtopic after subtopic, as ndeval sums
            score += np.where(block[:, :, j], subtopic_gain[:, j:j + 1], 0.0)
        score = np.where(available, score, -1.0)
        if ideal_ties == "last":
            pick = width - 1 - np.argmax(score[:, ::-1], axis=1)
        else:
            pick = np.argmax(score, axis=1)
        best = score[rows, pick]
        live = best >= 0.0
        out[:, rank] = np.where(live, best, 0.0)
        chosen = block[rows, pick] & live[:, None]
        subtopic_gain = np.where(chosen, subtopic_gain * keep, subtopic_gain)
        available[rows[live], pick[live]] = False
    return out


def _ranked_order(score, codes, rel, retrieved, ties, tie_key=None):
    """Retrieved rows by query, then score descending, then the tie policy."""
    rows = np.flatnonzero(retrieved)
    keys = [rows]   # last resort: row order (stable); np.lexsort's last key sorts first
    if tie_key is not None:
        keys.append(tie_key[rows])
    elif ties != "stable":
        covered = rel[rows].sum(axis=1)
        keys.append(covered if ties == "pessimistic" else -covered)
    order = np.lexsort((*keys, -score[rows], codes[rows]))
    return rows[order]


def diversity_table(func, calls, y_true, y_score, qid, *, threshold=1, ties="pessimistic",
                    ideal_ties="last", retrieved=None, no_relevant="zero", tie_key=None,
                    intent_weights=None, subtopics=None):
    """Per-query values of diversity metric calls ``[(spec, options), ...]``.

    Returns ``(qids, [values, ...])``; with ``no_relevant="skip"`` the queries
    without any covered subtopic are left out (the same for every call).
    ``tie_key`` (one number per row, internal): ties of the run are ordered by it,
    ascending, instead of by ``ties`` (the docno orders of the qrels path).
    ``no_relevant=None``: ``(qids, [values, ...], undefined)``, the policy left to the
    caller.  ``subtopics``: each query's subtopic ids in column order (qrels), which
    a mapping of ``intent_weights`` names.
    """
    ties = _check_option(func, "ties", ties, TIES)
    ideal_ties = _check_option(func, "ideal_ties", ideal_ties, IDEAL_TIES)
    if no_relevant is not None:
        no_relevant = _check_option(func, "no_relevant", no_relevant, NO_RELEVANT)
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, Real) \
            or not np.isfinite(threshold):
        raise InvalidParameterError(f"{func}: threshold must be a finite number. Got "
                                    f"{_describe(threshold)} instead.")
    labels, score, codes, qids, retrieved = check_arrays(func, y_true, y_score, qid, retrieved)
    nq = qids.shape[0]
    rel = labels >= threshold
    m_sub = rel.shape[1]

    # Judged documents (retrieved or not): subtopics covered, documents per subtopic.
    by_query = np.argsort(codes, kind="stable")
    starts_all = _segment_starts(codes[by_query], nq)
    per_subtopic = np.zeros((nq, m_sub))
    if rel.shape[0]:
        nonempty = np.flatnonzero(np.diff(starts_all) > 0)
        per_subtopic[nonempty] = np.add.reduceat(rel[by_query].astype(np.float64),
                                                 starts_all[:-1][nonempty], axis=0)
    m = (per_subtopic > 0).sum(axis=1).astype(np.float64)
    undefined = m == 0
    safe_m = np.where(undefined, 1.0, m)
    weights = _intent_weights(func, intent_weights, qids, per_subtopic > 0, subtopics)
    if weights is not None:   # each covered subtopic weighs its share; the weights sum to 1
        safe_m = np.ones(nq)

    # The run: ranked rows, novelty counts, gains.
    order = _ranked_order(score, codes, rel, retrieved, ties, tie_key)
    ranked = rel[order]
    q_of = codes[order]
    starts = _segment_starts(q_of, nq)
    position = np.arange(order.shape[0]) - starts[:-1][q_of]
    inclusive = np.cumsum(ranked, axis=0, dtype=np.int64)
    start_counts = np.vstack([np.zeros((1, m_sub), dtype=np.int64), inclusive])[starts[:-1]]
    counts_incl = inclusive - start_counts[q_of]
    counts_before = counts_incl - ranked

    ideal_cache = {}

    def ideal(alpha, depth):
        key = (alpha, depth)
        if key not in ideal_cache:
            relevant = by_query[rel[by_query].any(axis=1)]
            starts_rel = _segment_starts(codes[relevant], nq)
            ideal_cache[key] = _greedy_ideal(rel[relevant], starts_rel, nq, alpha, depth,
                                             ideal_ties, weights)
        return ideal_cache[key]

    gains_cache = {}

    def gains(alpha):
        if alpha not in gains_cache:
            gains_cache[alpha] = _row_gains(ranked, counts_before, alpha,
                                            None if weights is None else weights[q_of])
        return gains_cache[alpha]

    state = _State(nq=nq, m_sub=m_sub, safe_m=safe_m, weights=weights, ranked=ranked,
                   q_of=q_of, starts=starts, position=position, counts_incl=counts_incl,
                   per_subtopic=per_subtopic, order=order, ideal=ideal, gains=gains)
    out = []
    for spec, options in calls:
        values = spec.kernel(state, **{name: value for name, value in options.items()
                                       if name in _KERNEL_OPTIONS})
        out.append(np.where(undefined, 0.0, values))
    if no_relevant is None:   # the plan applies the policy (and the query weights)
        return qids, out, undefined
    return _apply_no_relevant(func, qids, out, undefined, no_relevant)


def diversity_columns(func, calls, prepared):
    """The executor of the diversity declarations (:data:`skrank.METRICS`): their
    values on the arrays of one call, ``(qids, [values, ...], [undefined, ...])``.

    ``prepared.arrays`` holds the arrays as given (``y_true`` the label matrix of
    shape ``(n_rows, n_subtopics)``), ``prepared.inputs`` the optional
    ``intent_weights``.  The calls that share the options of the ranking
    (``threshold``, ``ties``, ``ideal_ties``) share one pass; the plan applies each
    call's ``no_relevant`` (and the query weights) to the values."""
    y_true, y_score, qid, _, retrieved = prepared.arrays
    groups = {}
    for index, call in enumerate(calls):
        options = call.options
        key = (options["threshold"], options["ties"], options.get("ideal_ties", "last"))
        groups.setdefault(key, []).append((index, (call.spec, options)))
    values, undefined, qids = [None] * len(calls), [None] * len(calls), None
    for (threshold, ties, ideal_ties), members in groups.items():
        qids, columns, missing = diversity_table(
            func, [member for _, member in members], y_true, y_score, qid,
            threshold=threshold, ties=ties, ideal_ties=ideal_ties, retrieved=retrieved,
            no_relevant=None, intent_weights=prepared.inputs.get("intent_weights"))
        for (index, _), column in zip(members, columns):
            values[index], undefined[index] = column, missing
    return qids, values, undefined


#: The options a diversity kernel reads (the others are the executor's).
_KERNEL_OPTIONS = ("k", "alpha", "beta", "normalization")


@dataclass(frozen=True)
class _State:
    """What every diversity kernel of one call reads: the run's ranked rows and their
    novelty counts, the query sizes, the intent weights, and the (cached) gains of the
    run and of the greedy ideal ranking."""

    nq: int
    m_sub: int
    safe_m: np.ndarray        # subtopics per query (1 where weighted or undefined)
    weights: object           # (n_queries, n_subtopics) intent probabilities, or None
    ranked: np.ndarray        # coverage of the ranked rows, by query then rank
    q_of: np.ndarray          # query of each ranked row
    starts: np.ndarray        # offsets of the queries in the ranked rows
    position: np.ndarray      # rank - 1 of each ranked row
    counts_incl: np.ndarray   # per ranked row and subtopic: covering rows at or above it
    per_subtopic: np.ndarray  # judged documents covering each subtopic, per query
    order: np.ndarray         # the ranked rows (row numbers)
    ideal: object             # ideal(alpha, depth) -> (n_queries, depth) gains
    gains: object             # gains(alpha) -> per ranked row

    def within(self, k, values):
        mask = self.position < k
        return np.bincount(self.q_of[mask], weights=values[mask], minlength=self.nq)


# ---------------------------------------------------------------------------
# The kernels: one per metric (its declaration in skrank._declare.table names it).


def alpha_dcg_kernel(s, *, k, alpha, normalization="none"):
    """alpha-DCG@k; ``normalization="ndeval"`` divides by the "ideal ideal" when k > 1."""
    values = s.within(k, s.gains(alpha) * _discount(max(k, 1))[np.minimum(s.position, k - 1)])
    if normalization == "ndeval" and k > 1:
        values = values / (s.safe_m[:, None] * _powers(1.0 - alpha, k) * _discount(k)).sum(1)
    return values


def alpha_ndcg_kernel(s, *, k, alpha):
    """alpha-DCG@k over the alpha-DCG@k of the greedy ideal ranking."""
    values = alpha_dcg_kernel(s, k=k, alpha=alpha)
    top = s.ideal(alpha, k)
    best = (top * _discount(k)[:top.shape[1]]).sum(axis=1)
    return np.divide(values, best, out=np.zeros(s.nq), where=best > 0)


def err_ia_kernel(s, *, k, alpha, normalization="none"):
    """ERR-IA@k as ndeval computes it: the novelty gains discounted by 1 / rank."""
    values = s.within(k, s.gains(alpha) / (np.minimum(s.position, k - 1) + 1.0))
    if normalization == "ndeval" and k > 1:
        values = values / (s.safe_m[:, None] * _powers(1.0 - alpha, k)
                           / (np.arange(k) + 1.0)).sum(1)
    return values


def nerr_ia_kernel(s, *, k, alpha):
    """ERR-IA@k over the ERR-IA@k of the greedy ideal ranking."""
    values = err_ia_kernel(s, k=k, alpha=alpha)
    top = s.ideal(alpha, k)
    best = (top / (np.arange(top.shape[1]) + 1.0)).sum(axis=1)
    return np.divide(values, best, out=np.zeros(s.nq), where=best > 0)


def _nrbp(s, alpha, beta):
    decay = _powers(beta, int(s.position.max(initial=-1)) + 1)
    scale = (1.0 - (1.0 - alpha) * beta) / s.safe_m
    values = np.bincount(s.q_of, weights=s.gains(alpha) * decay[s.position], minlength=s.nq)
    return values * scale, scale


def nrbp_kernel(s, *, alpha, beta):
    """Novelty- and rank-biased precision (no cutoff)."""
    return _nrbp(s, alpha, beta)[0]


def nnrbp_kernel(s, *, alpha, beta):
    """NRBP over the NRBP of the greedy ideal ranking."""
    values, scale = _nrbp(s, alpha, beta)
    top = s.ideal(alpha, np.iinfo(np.int32).max)
    best = (top * _powers(beta, top.shape[1])).sum(axis=1) * scale
    return np.divide(values, best, out=np.zeros(s.nq), where=best > 0)


def p_ia_kernel(s, *, k):
    """Intent-aware precision@k: covered (document, subtopic) pairs of the top k over k m."""
    per_row = (s.ranked.sum(axis=1).astype(np.float64) if s.weights is None
               else (s.ranked * s.weights[s.q_of]).sum(axis=1))
    return s.within(k, per_row) / (k * s.safe_m)


def strec_kernel(s, *, k):
    """Subtopic recall@k: subtopics covered in the top k over m."""
    sizes = np.diff(s.starts)
    last = s.starts[:-1] + np.minimum(k, sizes) - 1   # each query's last row in the top k
    covered = np.zeros(s.nq)
    some = sizes > 0
    seen = s.counts_incl[last[some]] > 0
    covered[some] = (seen.sum(axis=1) if s.weights is None
                     else (seen * s.weights[some]).sum(axis=1))
    return covered / s.safe_m


def ap_ia_kernel(s):
    """Intent-aware average precision: each subtopic's AP, averaged over the subtopics."""
    hits = np.where(s.ranked, s.counts_incl / (s.position[:, None] + 1.0), 0.0)
    sums = np.zeros((s.nq, s.m_sub))
    if s.order.size:
        nonempty = np.flatnonzero(np.diff(s.starts) > 0)
        sums[nonempty] = np.add.reduceat(hits, s.starts[:-1][nonempty], axis=0)
    per = np.divide(sums, s.per_subtopic, out=np.zeros_like(sums), where=s.per_subtopic > 0)
    return (per if s.weights is None else per * s.weights).sum(axis=1) / s.safe_m


def _intent_weights(func, intent_weights, qids, covered, subtopics=None):
    """Intent probabilities ``(n_queries, n_subtopics)`` in the order of the sorted query
    ids, kept on the covered subtopics and scaled to sum to 1 per query; None: uniform
    (ndeval).  ``intent_weights``: such an array, a mapping ``qid -> one weight per
    subtopic`` or ``qid -> {subtopic: weight}``, or a DataFrame with columns ``query_id``,
    ``subtopic`` (or ``iteration``) and ``weight`` (or ``probability``).  A subtopic is
    its column of the label matrix, or with qrels its id (``subtopics``: each query's
    subtopic ids in column order)."""
    if intent_weights is None:
        return None
    nq, m_sub = covered.shape
    if hasattr(intent_weights, "columns"):   # a DataFrame: one row per (query, subtopic)
        intent_weights = _weights_of_frame(func, intent_weights)
    if isinstance(intent_weights, Mapping):
        missing = [q for q in qids.tolist() if q not in intent_weights]
        if missing:
            raise ValueError(f"{func}: intent_weights must give the weights of every query. Got "
                             f"none for qid {missing[0]!r} instead.")
        rows = [_weights_row(func, q, intent_weights[q], m_sub,
                             None if subtopics is None else subtopics[i])
                for i, q in enumerate(qids.tolist())]
        if any(row.shape != (m_sub,) for row in rows):
            raise ValueError(f"{func}: intent_weights must hold one weight per subtopic "
                             f"({m_sub}) for each query. Got another length instead.")
        weights = np.array(rows).reshape(nq, m_sub)
    else:
        if subtopics is not None:
            raise ValueError(f"{func}: intent_weights must be a mapping {{query: {{subtopic: "
                             f"weight}}}} or a DataFrame with qrels (their subtopics have ids, "
                             f"not columns). Got {_describe(intent_weights)} instead.")
        weights = np.asarray(intent_weights, dtype=np.float64)
        if weights.shape != (nq, m_sub):
            raise ValueError(f"{func}: intent_weights must have shape (n_queries, n_subtopics) = "
                             f"({nq}, {m_sub}), rows in the order of the sorted query ids. Got "
                             f"shape {weights.shape} instead.")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError(f"{func}: intent_weights must be finite and >= 0. Got a negative or "
                         f"non-finite weight instead.")
    zero = covered & (weights == 0)
    if zero.any():
        q, j = np.argwhere(zero)[0]
        shown = j if subtopics is None else subtopics[q][j]
        raise ValueError(f"{func}: intent_weights must give every covered subtopic a weight > 0. "
                         f"Got 0 (or none) for subtopic {shown!r} of qid {qids[q]!r}, which a "
                         f"judged document covers, instead. Drop its judgements to leave it "
                         f"out.")
    weights = np.where(covered, weights, 0.0)
    total = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)


def _weights_row(func, q, given, m_sub, names):
    """One query's weights in column order: a sequence as it is, a mapping
    ``{subtopic: weight}`` by column index (arrays) or subtopic id (qrels, ``names``);
    a subtopic the mapping leaves out weighs 0."""
    if not isinstance(given, Mapping):
        return np.asarray(given, dtype=np.float64).reshape(-1)
    row = np.zeros(m_sub)
    index = ({j: j for j in range(m_sub)} if names is None
             else {str(name): j for j, name in enumerate(names) if name is not None})
    for subtopic, weight in given.items():
        j = index.get(subtopic if names is None else str(subtopic))
        if j is None:
            known = list(index)
            raise ValueError(f"{func}: intent_weights of qid {q!r} name subtopic {subtopic!r}, "
                             f"which no judgement of the query has. Got it instead of one of "
                             f"{known[:10]}.")
        try:
            row[j] = float(weight)
        except (TypeError, ValueError):
            raise ValueError(f"{func}: intent_weights must hold numbers. Got "
                             f"{_describe(weight)} for subtopic {subtopic!r} of qid {q!r} "
                             f"instead.") from None
    return row


def _weights_of_frame(func, frame):
    """``{qid: {subtopic: weight}}`` from a DataFrame of intent weights."""
    frame = frame.to_pandas() if hasattr(frame, "to_pandas") and not hasattr(
        frame, "iloc") else frame
    names = list(frame.columns)
    subtopic = next((c for c in ("subtopic", "iteration", "subtopic_id") if c in names), None)
    weight = next((c for c in ("weight", "probability") if c in names), None)
    if "query_id" not in names or subtopic is None or weight is None:
        raise ValueError(f"{func}: intent_weights as a DataFrame must have the columns query_id, "
                         f"subtopic (or iteration) and weight (or probability). Got columns "
                         f"{names} instead.")
    out = {}
    for q, t, w in zip(frame["query_id"].tolist(), frame[subtopic].tolist(),
                       frame[weight].tolist()):
        out.setdefault(q, {})[t] = w
    return out


def _apply_no_relevant(func, qids, columns, undefined, no_relevant):
    if not undefined.any():
        return qids, columns
    if no_relevant == "raise":
        shown = ", ".join(map(repr, qids[undefined][:5].tolist()))
        raise ValueError(
            f"{func}: {int(undefined.sum())} quer{'y has' if undefined.sum() == 1 else 'ies have'}"
            f" no relevant document for any subtopic, so the metric is undefined for them (qid "
            f"{shown}). Choose what they count as with no_relevant='zero' (ndeval), 'one', "
            f"'skip' or 'nan'.")
    if no_relevant == "skip":
        return qids[~undefined], [c[~undefined] for c in columns]
    fill = {"zero": 0.0, "one": 1.0, "nan": np.nan}[no_relevant]
    return qids, [np.where(undefined, fill, c) for c in columns]


# ---------------------------------------------------------------------------
# Qrels with a subtopic column, and a run.

QRELS_COLUMNS = ("query_id", "subtopic", "doc_id", "relevance")
RUN_TIES = ("pyndeval", "trec", "stable", "pessimistic", "optimistic")


def _qrels_columns(func, qrels):
    """``(qid, subtopic, docno, rel)`` string/float arrays of diversity qrels: a TREC
    diversity qrels file (``qid subtopic docno rel``), a DataFrame (columns
    ``query_id``, ``iteration`` or ``subtopic``, ``doc_id``, ``relevance``), a dict
    ``{qid: {subtopic: {docno: rel}}}`` or rows ``(qid, subtopic, docno, rel)``."""
    import os

    checked = False
    if isinstance(qrels, (str, os.PathLike)):
        import pandas as pd

        frame = pd.read_csv(qrels, sep=r"\s+", header=None, dtype=str, comment=None,
                            names=list(QRELS_COLUMNS), engine="python")
        if frame.isna().any().any():
            raise ValueError(f"{func}: each line of the diversity qrels file {str(qrels)!r} must "
                             f"have 4 fields (qid subtopic docno rel). Got a shorter line "
                             f"instead.")
        columns = [frame[c].to_numpy() for c in QRELS_COLUMNS]
        checked = True
    elif hasattr(qrels, "columns"):
        frame = qrels.to_pandas() if hasattr(qrels, "to_pandas") and not hasattr(
            qrels, "iloc") else qrels
        names = list(frame.columns)
        subtopic = next((c for c in ("subtopic", "iteration", "subtopic_id") if c in names),
                        None)
        missing = [c for c in ("query_id", "doc_id", "relevance") if c not in names]
        if subtopic is None or missing:
            raise ValueError(
                f"{func}: qrels must have the columns query_id, subtopic (or iteration, as "
                f"ir_measures names it), doc_id and relevance. Got columns {names} instead.")
        chosen = ["query_id", subtopic, "doc_id", "relevance"]
        if frame[chosen].isna().to_numpy().any():
            raise ValueError(f"{func}: qrels must have no missing values (query, subtopic, "
                             f"document or relevance). Got a missing value instead.")
        columns = [frame[c].to_numpy() for c in chosen]
        checked = True
    elif isinstance(qrels, dict):
        rows = [(q, t, d, r) for q, topics in qrels.items() for t, docs in topics.items()
                for d, r in docs.items()]
        columns = [np.array([row[i] for row in rows], dtype=object) for i in range(4)]
    else:
        rows = [tuple(row) for row in qrels]
        if any(len(row) != 4 for row in rows):
            raise ValueError(f"{func}: each qrels row must be (qid, subtopic, docno, rel). Got "
                             f"a row of another length instead.")
        columns = [np.array([row[i] for row in rows], dtype=object) for i in range(4)]
    qid, subtopic, docno, rel = columns
    if not checked and any(_has_missing(c) for c in (qid, subtopic, docno, rel)):
        raise ValueError(f"{func}: qrels must have no missing values (query, subtopic, "
                         f"document or relevance). Got a missing value instead.")
    try:
        rel = np.asarray(rel, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{func}: qrels relevance must be numbers. Got "
                         f"{_describe(rel[:3].tolist())} instead.") from None
    if np.isnan(rel).any():
        raise ValueError(f"{func}: qrels must have no missing values (query, subtopic, "
                         f"document or relevance). Got a missing value instead.")
    return as_str_ids(qid), as_str_ids(subtopic), as_str_ids(docno), rel


def _sorted_codes(values):
    """``(codes, uniques)`` of string ids, the uniques in sorted (string) order; pandas'
    hash factorisation when pandas is loaded (the DataFrame and file paths), else numpy's
    sort."""
    import sys

    values = as_str_ids(values)
    pd = sys.modules.get("pandas")
    if pd is None:
        uniques, codes = np.unique(values, return_inverse=True)
        return codes.reshape(-1), uniques
    codes, uniques = pd.factorize(values)
    uniques = as_str_ids(np.asarray(uniques, dtype=object))
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(order.shape[0], dtype=np.intp)
    rank[order] = np.arange(order.shape[0])
    return rank[codes], uniques[order]


def _has_missing(values):
    values = np.asarray(values, dtype=object)
    return any(v is None or (isinstance(v, float) and np.isnan(v)) for v in values)


def _run_of(func, run):
    import os

    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        return read_run(run)
    if isinstance(run, dict):
        return Run.from_dict(run)
    if hasattr(run, "columns"):
        return Run.from_frame(run)
    raise InvalidParameterError(f"{func}: run must be a Run, a TREC run file, a DataFrame or a "
                                f"dict {{query: {{doc: score}}}}. Got {_describe(run)} instead.")


def collection_arrays(func, qrels, run, *, ties="pyndeval"):
    """The arrays of :func:`diversity_table` for diversity qrels and a run, on the queries
    they share (as ndeval evaluates them): one row per (query, document) of either, in
    docno order within each query, a label matrix over each query's own subtopics
    (column ``j`` is the query's ``j``-th subtopic id in sorted order).

    Returns ``(y_true, y_score, qid, retrieved, tie_key, ties, ids, subtopics)``:
    ``qid`` holds codes, query ``c``'s id is ``ids[c]``; ``subtopics`` is ``(query
    code, column, subtopic id)`` of every subtopic.
    """
    ties = _check_option(func, "ties", ties, RUN_TIES)
    q_qid, q_sub, q_doc, q_rel = _qrels_columns(func, qrels)
    r = _run_of(func, run)
    r_qid, r_doc, r_score = as_str_ids(r.qid), as_str_ids(r.docno), r.score
    n_q = q_qid.shape[0]
    # Integer codes in string order: queries and documents of both sides.
    qcode, quniq = _sorted_codes(np.concatenate([q_qid, r_qid]))
    shared = np.zeros(quniq.shape[0], dtype=bool)
    shared[np.intersect1d(qcode[:n_q], qcode[n_q:])] = True
    keep = shared[qcode]
    keep_q, keep_r = keep[:n_q], keep[n_q:]
    q_sub, q_rel, r_score = q_sub[keep_q], q_rel[keep_q], r_score[keep_r]
    dcode, duniq = _sorted_codes(np.concatenate([q_doc[keep_q], r_doc[keep_r]]))
    qcode = qcode[keep]
    n_kept_q = int(keep_q.sum())
    # One row per (query, document): the pairs of both, sorted by query then docno.
    width_d = max(duniq.shape[0], 1)
    pair = qcode.astype(np.int64) * width_d + dcode
    _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    row_qid = qcode[first]   # codes: the ids are quniq[code]
    n_rows = first.shape[0]
    # Subtopics numbered within their query, in string order.
    scode, suniq = _sorted_codes(q_sub)
    skey = qcode[:n_kept_q].astype(np.int64) * max(suniq.shape[0], 1) + scode
    sub_uniq, sub_code = np.unique(skey, return_inverse=True)
    sub_code = sub_code.reshape(-1)
    sub_query = sub_uniq // max(suniq.shape[0], 1)
    local = np.arange(sub_uniq.shape[0]) - np.searchsorted(sub_query, sub_query, side="left")
    width = int(local.max(initial=-1)) + 1
    if width == 1:
        import warnings

        warnings.warn(f"{func}: every query of qrels has one subtopic only, so the diversity "
                      f"metrics reduce to their single-intent forms. Diversity qrels have the "
                      f"subtopic in their second column (ir_measures' 'iteration'); plain TREC "
                      f"qrels hold a constant there.", UserWarning, stacklevel=3)
    y_true = np.zeros((n_rows, max(width, 1)))
    np.maximum.at(y_true, (inverse[:n_kept_q], local[sub_code]), q_rel)
    retrieved = np.zeros(n_rows, dtype=bool)
    run_rows = inverse[n_kept_q:]
    if np.unique(run_rows).shape[0] != run_rows.shape[0]:
        raise ValueError(f"{func}: the run lists a document twice for one query. Got duplicate "
                         f"(query, document) pairs instead.")
    retrieved[run_rows] = True
    y_score = np.zeros(n_rows)
    y_score[run_rows] = r_score
    # Rows are in docno order within each query: the row number is the docno order.
    position = np.arange(n_rows, dtype=np.float64)
    tie_key = {"pyndeval": position, "trec": -position}.get(ties)
    row_ties = ties if ties in TIES else "stable"
    subtopics = (sub_query, local, suniq[sub_uniq % max(suniq.shape[0], 1)])
    return y_true, y_score, row_qid, retrieved, tie_key, row_ties, quniq, subtopics
