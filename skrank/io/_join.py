"""Joining a qrels and a run: one factorisation of the query ids, one match of
(query, document) pairs on the readers' pair hashes, one ordering of the
retrieved rows (query, score descending, docno descending: trec_eval's)."""

import warnings

import numpy as np

from .._engine.ranking import order_ties
from .._engine.segments import segmented_argsort_desc
from ._columns import _SHOWN, _shown
from .._core.checks import InvalidParameterError, caller_stacklevel, check_choice
from ._containers import Qrels, Run, TrecArrays, factorize_ids, qrels_table, run_table
from ._tokenize import check_no_duplicates
from ._fields import decode

_U64 = np.uint64


class Joined:
    """A qrels and a run matched on (query, document), evaluated queries only.

    ``qids``: the sorted query ids (bytes) that the codes index;
    ``q_codes``, ``q_rel``, ``q_docno``: the judged rows of evaluated queries;
    ``r_codes``, ``r_score``, ``r_docno``: the retrieved rows of evaluated
    queries, in trec_eval's ranking order (``r_rows`` are their rows in the run);
    ``r_match``: the judged row of each retrieved row, or -1.
    """


def _check_nan(func, run):
    score = run.numbers["score"]
    nan = np.isnan(score)
    if nan.any():
        i = int(np.argmax(nan))
        qid = decode(run.qid_of(np.array([i])))[0]
        raise ValueError(f"{func}: run scores must not be NaN. Got NaN for query "
                         f"{str(qid)!r}, document {str(decode(run.docno[i:i + 1])[0])!r}.")


def join(qrels, run, *, missing_queries, func="join_qrels_run", columns=("score", "docno"),
         tie_order="trec"):
    """Match ``qrels`` and ``run`` (tables or containers); see :class:`Joined`.

    The retrieved rows come in trec_eval's ranking order, with their query code
    and match, and the run ``columns`` asked for ("score", "docno", "rows");
    with ``tie_order="input"``, equal scores of a query keep the run's row order
    instead of trec_eval's docno order (``ties="stable"``).
    """
    qrels, run = qrels_table(qrels, func), run_table(run, func)
    _check_nan(func, run)
    check_no_duplicates(qrels, "in qrels")
    check_no_duplicates(run, "in run")
    # Query codes shared by both sides, in sorted order: one factorisation of the
    # runs of equal ids (queries are contiguous in files), not of every row.
    n_qrels_runs = qrels.qid_runs.shape[0]
    run_ids = np.concatenate([qrels.qid_runs, run.qid_runs])
    codes, qids = factorize_ids(func, run_ids)
    codes = codes.astype(np.int32 if qids.shape[0] < 2 ** 31 else np.intp)
    n_queries = qids.shape[0]
    q_run_codes, r_run_codes = codes[:n_qrels_runs], codes[n_qrels_runs:]
    evaluated = np.bincount(q_run_codes, qrels.run_lengths, minlength=n_queries) > 0
    if missing_queries == "skip":
        evaluated &= np.bincount(r_run_codes, run.run_lengths, minlength=n_queries) > 0
    q_rows, q_codes = _rows_of(evaluated, q_run_codes, qrels.run_lengths)
    r_rows, r_codes = _rows_of(evaluated, r_run_codes, run.run_lengths)
    q_docno = _take(qrels.docno, q_rows)
    matched = _match(_take(run.pair_keys(), r_rows), _take(qrels.pair_keys(), q_rows))
    if matched is not None:
        hit = np.flatnonzero(matched >= 0)
        if not (np.array_equal(q_docno[matched[hit]], _take(run.docno, r_rows)[hit])
                and np.array_equal(q_codes[matched[hit]], r_codes[hit])):
            matched = None
    if matched is None:  # 64-bit hash collision: match on exact docno codes
        docno_codes, _ = factorize_ids(
            func, np.concatenate([q_docno, _take(run.docno, r_rows)]))
        exact = (np.concatenate([q_codes, r_codes]).astype(np.int64)
                 * (int(docno_codes.max()) + 1) + docno_codes).astype(_U64)
        matched = _match(exact[q_codes.shape[0]:], exact[:q_codes.shape[0]])

    out = Joined()
    out.qids, out.evaluated, out.n_queries = qids, evaluated, n_queries
    out.q_codes, out.q_docno = q_codes, q_docno
    out.q_rel = _take(qrels.numbers["rel"], q_rows)
    score = _take(run.numbers["score"], r_rows)
    order = rank_order(r_codes, score, lambda rows: _take(run.docno, r_rows)[rows],
                       by_docno=tie_order == "trec")
    if order is None:
        out.r_codes, out.r_match = r_codes, matched
        rows = r_rows
    else:
        out.r_codes, out.r_match = r_codes[order], matched[order]
        rows = order if r_rows is None else r_rows[order]
    del r_codes, matched, order
    if "score" in columns:
        out.r_score = run.numbers["score"] if rows is None else run.numbers["score"][rows]
    if "docno" in columns:
        out.r_docno = run.docno if rows is None else run.docno[rows]
    out.r_rows = rows
    return out


def _take(values, rows):
    return values if rows is None else values[rows]


def _rows_of(evaluated, run_codes, run_lengths):
    """``(rows or None for all, code of each row)`` of the evaluated queries' rows."""
    keep_runs = evaluated[run_codes]
    codes = np.repeat(run_codes, run_lengths)
    if keep_runs.all():
        return None, codes
    rows = np.flatnonzero(np.repeat(keep_runs, run_lengths))
    return rows, codes[rows]


def rank_order(codes, score, docno, by_docno=True):
    """trec_eval's order of retrieved rows: by query, score descending, then docno
    descending (``strcmp``; ``docno(rows)`` gives the docnos of some rows); with
    ``by_docno=False`` equal scores keep their row order.  None when the rows
    already are in that order."""
    order = _order_desc(codes, score)
    if not by_docno:
        return None if np.array_equal(order, np.arange(order.shape[0])) else order
    s_codes, s_score = codes[order], score[order]
    tie = s_codes[1:] == s_codes[:-1]
    tie &= s_score[1:] == s_score[:-1]
    del s_codes, s_score
    if tie.any():
        rows, ordered = order_ties(tie, lambda rows: docno(order[rows]), descending=True)
        order[rows] = order[ordered]
    if np.array_equal(order, np.arange(order.shape[0])):
        return None
    return order


def _match(run_keys, qrels_keys):
    """Index of the qrels row with each run key, or -1; None on a hash collision."""
    matched = np.full(run_keys.shape[0], -1,
                      dtype=np.int32 if qrels_keys.shape[0] < 2 ** 31 else np.intp)
    if qrels_keys.shape[0] == 0 or run_keys.shape[0] == 0:
        return matched
    order = np.argsort(qrels_keys)
    sorted_keys = qrels_keys[order]
    if (sorted_keys[1:] == sorted_keys[:-1]).any():
        return None  # qrels pairs are distinct, so equal keys are a collision
    # Cheap filter (a bit table of qrels keys), then a search with sorted
    # needles: random binary searches would miss the cache on every step.
    bits = min(max(int(qrels_keys.shape[0]).bit_length() + 4, 10), 27)
    mask = _U64((1 << bits) - 1)
    table = np.zeros(1 << bits, dtype=bool)
    table[(qrels_keys & mask).astype(np.intp)] = True
    candidates = np.flatnonzero(table[run_keys & mask])
    needles = run_keys[candidates]
    by_key = np.argsort(needles)
    candidates, needles = candidates[by_key], needles[by_key]
    pos = np.minimum(np.searchsorted(sorted_keys, needles), sorted_keys.shape[0] - 1)
    found = sorted_keys[pos] == needles
    matched[candidates[found]] = order[pos[found]]
    return matched


def _order_desc(codes, score):
    """Permutation sorting rows by code, then score descending, stable.

    Runs are usually written query by query, best first: then only the
    query blocks are reordered and no row is sorted.
    """
    n = codes.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    change = codes[1:] != codes[:-1]
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    block_codes = codes[starts]
    if np.bincount(block_codes).max() > 1:
        return np.lexsort((np.negative(score), codes))
    lengths = np.diff(np.append(starts, n))
    if np.all((score[1:] <= score[:-1]) | change):
        within = np.arange(n)
    else:  # the engine's segmented sort (stable: equal scores keep their order)
        within = segmented_argsort_desc(score, np.append(starts, n), stable=True)
    if np.all(block_codes[1:] > block_codes[:-1]):
        return within
    by_code = np.argsort(block_codes)
    lengths = lengths[by_code]
    rows = np.repeat(starts[by_code] - (np.cumsum(lengths) - lengths), lengths)
    rows += np.arange(n)
    return within[rows]


def join_qrels_run(qrels, run, *, missing_queries="skip"):
    """Join judgements and a run into flat per-document arrays, as trec_eval does.

    Parameters
    ----------
    qrels : Qrels
        Relevance judgements, e.g. from :func:`read_qrels`.
    run : Run
        Retrieval results, e.g. from :func:`read_run`.
    missing_queries : {"skip", "zero"}, default="skip"
        Which queries to evaluate. ``"skip"`` (trec_eval's default): the
        queries present in both the qrels and the run. ``"zero"``
        (``trec_eval -c``): every query of the qrels; one absent from the run
        gets rows for its judged documents, all unretrieved. Queries of the
        run without judgements are always dropped.

    Returns
    -------
    arrays : TrecArrays
        One row per (qid, docno) in the union of the run's documents and the
        judged documents of the evaluated queries, with ``y_true`` (the qrels
        rel, 0 for retrieved unjudged documents; negative levels kept),
        ``y_score`` (NaN when unretrieved), ``qid``, ``docno``,
        ``retrieved`` and ``judged`` (in the qrels). Queries are contiguous
        and in sorted order; within a query, retrieved rows come first in
        trec_eval's ranking order (score descending, ties broken by docno in
        *descending* ``strcmp`` order), then the unretrieved judged
        documents in qrels order. The rows can
        be passed to the skrank metrics with ``qid=`` and ``retrieved=``;
        ``ties="stable"`` then reproduces trec_eval's tie-breaking.

    Raises
    ------
    ValueError
        If a (qid, docno) pair appears twice in ``qrels`` or in ``run``, or
        a run score is NaN.

    Examples
    --------
    >>> from skrank.io import Qrels, Run, join_qrels_run
    >>> qrels = Qrels(qid=["q1", "q1", "q2"], docno=["a", "c", "x"], rel=[1, 2, 1])
    >>> run = Run(qid=["q1", "q1", "q3"], docno=["a", "b", "z"], score=[0.5, 0.5, 1.0])
    >>> arrays = join_qrels_run(qrels, run)
    >>> arrays.docno
    array(['b', 'a', 'c'], dtype='<U1')
    >>> arrays.y_true
    array([0., 1., 2.])
    >>> arrays.retrieved
    array([ True,  True, False])
    >>> join_qrels_run(qrels, run, missing_queries="zero").qid
    array(['q1', 'q1', 'q1', 'q2'], dtype='<U2')
    """
    func = "join_qrels_run"
    if not isinstance(qrels, Qrels):
        swapped = " (the arguments are qrels, run: swapped?)" if isinstance(qrels, Run) else ""
        raise InvalidParameterError(f"{func}: qrels must be a Qrels (see read_qrels). "
                                    f"Got {type(qrels).__name__} instead{swapped}.")
    if not isinstance(run, Run):
        raise InvalidParameterError(f"{func}: run must be a Run (see read_run). "
                                    f"Got {type(run).__name__} instead.")
    check_choice(func, "missing_queries", missing_queries, ("skip", "zero"))
    j = join(qrels, run, missing_queries=missing_queries, func=func)
    rows = flat_rows(j, docno=True)
    codes = rows.pop("codes")
    return TrecArrays(qid=decode(j.qids)[codes] if codes.shape[0] else np.zeros(0, dtype="U1"),
                      docno=decode(rows.pop("docno")), **rows)


def flat_rows(j, *, docno=False):
    """The rows of :func:`join_qrels_run` from a :class:`Joined` (with "score"
    joined), ids as codes: a dict of ``codes`` (indexing ``j.qids``, sorted),
    ``y_true``, ``y_score``, ``retrieved``, ``judged`` and, with ``docno``, the
    docno bytes.  Each query's retrieved rows in trec_eval's order, then its
    unretrieved judged rows in qrels order."""
    hit = j.r_match >= 0
    r_true = np.zeros(j.r_codes.shape[0], dtype=np.float64)
    r_true[hit] = j.q_rel[j.r_match[hit]]
    judged_retrieved = np.zeros(j.q_codes.shape[0], dtype=bool)
    judged_retrieved[j.r_match[hit]] = True
    unret = np.flatnonzero(~judged_retrieved)  # in qrels order
    u_codes = j.q_codes[unret]
    u_order = np.argsort(u_codes, kind="stable")
    unret_rows = unret[u_order]
    # Interleave: each query's retrieved rows, then its unretrieved rows.
    n_ret, n_unret = j.r_codes.shape[0], unret.shape[0]
    ret_counts = np.bincount(j.r_codes, minlength=j.n_queries)
    unret_counts = np.bincount(u_codes, minlength=j.n_queries)
    ret_dest = np.arange(n_ret) + (np.cumsum(unret_counts) - unret_counts)[j.r_codes]
    unret_dest = np.arange(n_unret) + np.cumsum(ret_counts)[u_codes[u_order]]

    def place(ret_values, unret_values, dtype):
        out = np.empty(n_ret + n_unret, dtype=dtype)
        out[ret_dest] = ret_values
        out[unret_dest] = unret_values
        return out

    rows = dict(
        codes=place(j.r_codes, u_codes[u_order], np.intp),
        y_true=place(r_true, j.q_rel[unret_rows], np.float64),
        y_score=place(j.r_score, np.nan, np.float64),
        retrieved=place(True, False, bool),
        judged=place(hit, True, bool),
    )
    if docno:
        rows["docno"] = place(j.r_docno, j.q_docno[unret_rows],
                              np.result_type(j.r_docno, j.q_docno))
    return rows


# ---------------------------------------------------------------------------
# Queries on one side only.


def check_query_coverage(func, qrels, run, missing_queries, unjudged_queries):
    """Apply the policies for queries on one side only; warn with their counts.

    ``missing_queries``: queries of the qrels without any row in the run
    (``"skip"``: left out, ``"zero"``: empty rankings, ``"raise"``; None: ``"skip"``
    with a warning).  ``unjudged_queries``: queries of the run absent from the qrels
    (``"skip"``: left out, ``"raise"``; None: ``"skip"`` with a warning).  Only the
    default (None) warns: an explicit choice was made knowing of such queries.
    """
    # byte tables (files read by evaluate) hold their ids as runs of bytes
    judged, ranked = (decode(factorize_ids(func, side.qid_runs)[1]) if hasattr(side, "qid_runs")
                      else factorize_ids(func, side.qid)[1] for side in (qrels, run))
    missing = judged[~np.isin(judged, ranked)]
    unjudged = ranked[~np.isin(ranked, judged)]
    report_query_coverage(func, *((ids.size, ids[:_SHOWN].tolist())
                                  for ids in (judged, ranked, missing, unjudged)),
                          missing_queries, unjudged_queries)


def report_query_coverage(func, judged, ranked, missing, unjudged, missing_queries,
                          unjudged_queries):
    """:func:`check_query_coverage` from counts: each of ``judged``, ``ranked``,
    ``missing`` and ``unjudged`` is ``(count, first ids)``, the first ids (sorted) at
    least ``_SHOWN`` of them when there are more (what the messages show); the
    warnings point at the caller's line outside skrank."""
    def shown(side):
        count, ids = side
        return _shown(ids, count)

    (n_judged, _), (n_missing, _), (n_unjudged, _) = judged, missing, unjudged
    if n_judged == 0:
        raise ValueError(f"{func}: qrels must hold at least one judged document. Got none.")
    if n_missing == n_judged and missing_queries != "zero":
        raise ValueError(
            f"{func}: no query of qrels has a prediction in run, so there is nothing to "
            f"evaluate. Got qrels queries ({shown(judged)}) and run queries "
            f"({shown(ranked)}). Ids are compared as strings: check that both "
            f"sides name the queries alike, or pass missing_queries='zero' to score every "
            f"query 0.")
    if n_missing:
        head = (f"{func}: {n_missing} of the {n_judged} queries of qrels "
                f"{'has' if n_missing == 1 else 'have'} no prediction in run "
                f"({shown(missing)})")
        if missing_queries == "raise":
            raise ValueError(f"{head}. Pass missing_queries='zero' to count them as empty "
                             f"rankings (trec_eval -c) or 'skip' to leave them out.")
        they = "it is" if n_missing == 1 else "they are"
        if missing_queries is None:  # the default decided: say what it did
            warnings.warn(f"{head}; {they} left out of the means (trec_eval's default "
                          f"without -c). Pass missing_queries='skip' to leave them out "
                          f"without this warning, 'zero' to count them as empty rankings "
                          f"(trec_eval -c) or 'raise'.", UserWarning,
                          stacklevel=caller_stacklevel())
    if n_unjudged:
        head = (f"{func}: {n_unjudged} of the {ranked[0]} queries of run "
                f"{'has' if n_unjudged == 1 else 'have'} no ground truth in qrels "
                f"({shown(unjudged)})")
        if unjudged_queries == "raise":
            raise ValueError(f"{head}. Pass unjudged_queries='skip' to leave them out.")
        they = "it is" if n_unjudged == 1 else "they are"
        if unjudged_queries is None:  # the default decided
            warnings.warn(f"{head}; {they} left out. Pass unjudged_queries='skip' to leave "
                          f"them out without this warning, or 'raise'.",
                          UserWarning, stacklevel=caller_stacklevel())
