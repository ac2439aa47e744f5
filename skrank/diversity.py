"""Diversity and intent-aware metrics: alpha-nDCG, ERR-IA, NRBP, P-IA, AP-IA, S-recall.

The metrics of the TREC Web track diversity task, with ndeval's conventions
(see :mod:`skrank._trec.diversity` and ``docs/diversity.md``).  Each document has one
judgement per subtopic (intent): the functions take a label matrix ``y_true`` of
shape ``(n_rows, n_subtopics)`` beside ``y_score`` and ``qid`` (dense, or a
scipy.sparse matrix); :func:`evaluate` takes TREC diversity qrels
(``qid subtopic docno rel``, or a DataFrame with ir_measures' ``iteration``
column) and a run, and reproduces ndeval through ``pyndeval`` (ir_measures)
query by query.

Common options
--------------
threshold : float, default=1
    A document covers a subtopic when its label for it is ``>= threshold``
    (pyndeval's ``relevance_level``; judgements are binary).
ties : {"pessimistic", "optimistic", "stable"}, default="pessimistic"
    Order of documents with equal scores: those covering fewer (pessimistic) or
    more (optimistic) subtopics first, or input order.  Diversity metrics have no
    closed-form average over tied orderings.
ideal_ties : {"last", "first"}, default="last"
    Which document the greedy ideal ranking takes among equally good ones: the
    last or the first in row order (with qrels, rows are in docno order, so
    ``"last"`` is ndeval's choice, the largest docno).
no_relevant : {"zero", "one", "skip", "nan", "raise"}, default="zero"
    Value of a query where no judged document covers any subtopic (ndeval: 0;
    its nNRBP is NaN there, ``"nan"``).
retrieved : array-like of bool, default=None
    False marks judged documents the run did not retrieve: they count in the
    ideal ranking and the subtopics' sizes, never take a rank.
intent_weights : array-like of shape (n_queries, n_subtopics) or dict, default=None
    Probability of each intent (Agrawal et al.'s ``P(j | q)``), rows in the order
    of the sorted query ids, or a dict ``qid -> weights``; kept on the subtopics
    some judged document covers and scaled to sum to 1.  Each subtopic's gains,
    precision, recall and AP count with its weight instead of ``1 / m``.  None:
    uniform, as ndeval.  A covered subtopic of weight 0 is an error.
"""

from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import _plan
from ._declare import params as P
from ._declare.names import split_name
from ._declare.table import METRICS, bind_functions
from ._trec.diversity import _weights_of_frame, collection_arrays, diversity_table
from ._metrics import QueryScores
from ._core.checks import InvalidParameterError, _describe

__all__ = [
    "DIVERSITY_METRICS",
    "DiversityEvaluation",
    "alpha_dcg_score",
    "alpha_ndcg_score",
    "ap_ia_score",
    "err_ia_score",
    "evaluate",
    "nerr_ia_score",
    "nnrbp_score",
    "nrbp_score",
    "p_ia_score",
    "per_query_scores",
    "subtopic_recall_score",
]

#: What :func:`evaluate` computes by default: ndeval's measures at k = 20.
DEFAULT_METRICS = ("alpha_ndcg@20", "err_ia@20", "nerr_ia@20", "alpha_dcg@20", "nrbp",
                   "nnrbp", "ap_ia", "p_ia@20", "strec@20")


#: The diversity declarations of the one metric table (:data:`skrank.METRICS`), by name:
#: a view of it, not a table of its own.
DIVERSITY_METRICS = MappingProxyType({name: spec for name, spec in METRICS.items()
                                      if spec.family == "diversity"})

#: The extra input a caller of these metrics gives: the label matrix (``y_true``).
INPUTS = ("subtopics",)


def _mean(values):
    return float(np.mean(values)) if values.size else float("nan")


def _one(func, name, options, y_true, y_score, qid, common):
    common = dict(common)
    retrieved, intent_weights = common.pop("retrieved"), common.pop("intent_weights")
    call = _plan.MetricCall.of(DIVERSITY_METRICS[name], {**options, **common}, func=func)
    return _plan.mean(func, call, y_true, y_score, qid, retrieved,
                      inputs={"intent_weights": intent_weights})


def alpha_ndcg_score(y_true, y_score, *, qid=None, k=20, alpha=0.5, threshold=1,
                     ties="pessimistic", ideal_ties="last", no_relevant="zero", retrieved=None,
                     intent_weights=None):
    """alpha-nDCG@k (Clarke et al., 2008), averaged over queries.

    A document covering subtopic ``j`` for the ``c``-th time gains
    ``(1 - alpha) ** (c - 1)`` for it; alpha-DCG@k discounts the gains by
    ``1 / log2(rank + 1)``, and alpha-nDCG@k divides it by the alpha-DCG@k of the
    greedy ideal ranking (ndeval's, ``alpha_nDCG@k`` of ir_measures).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> import math
    >>> from skrank.diversity import alpha_ndcg_score
    >>> y_true = [[1, 0], [1, 1], [0, 1], [0, 0]]   # subtopics covered by 4 documents
    >>> y_score = [4, 3, 2, 1]
    >>> # gains 1, 0.5 + 1, 0.5; the ideal ranks [1, 1] first (2), then 0.5 and 0.5
    >>> dcg = 1 + 1.5 / math.log2(3) + 0.5 / 2
    >>> ideal = 2 + 0.5 / math.log2(3) + 0.5 / 2
    >>> round(alpha_ndcg_score(y_true, y_score, qid=[0] * 4, k=3), 6) == round(dcg / ideal, 6)
    True
    >>> round(dcg / ideal, 4)
    0.8561
    """
    return _one("alpha_ndcg_score", "alpha_ndcg", {"k": k, "alpha": alpha}, y_true, y_score,
                qid, dict(threshold=threshold, ties=ties, ideal_ties=ideal_ties,
                          no_relevant=no_relevant, retrieved=retrieved,
                          intent_weights=intent_weights))


def alpha_dcg_score(y_true, y_score, *, qid=None, k=20, alpha=0.5, normalization="ndeval",
                    threshold=1, ties="pessimistic", ideal_ties="last", no_relevant="zero",
                    retrieved=None,
                     intent_weights=None):
    """alpha-DCG@k, divided by the "ideal ideal" as ndeval reports it.

    ``normalization="ndeval"`` divides by ``sum_{{i<k}} m (1 - alpha)**i / log2(i + 2)``
    (a ranking whose every document covers all ``m`` subtopics of the query) when
    ``k > 1``, and not at ``k = 1``, as ndeval does; ``"none"`` gives the raw sum.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> import math
    >>> from skrank.diversity import alpha_dcg_score
    >>> y_true, y_score = [[1, 0], [1, 1], [0, 1]], [3, 2, 1]
    >>> raw = 1 + 1.5 / math.log2(3)                     # gains 1 and 0.5 + 1
    >>> alpha_dcg_score(y_true, y_score, qid=[0] * 3, k=2, normalization="none") == raw
    True
    >>> ideal_ideal = 2 + 2 * 0.5 / math.log2(3)
    >>> round(alpha_dcg_score(y_true, y_score, qid=[0] * 3, k=2), 6) == round(raw / ideal_ideal, 6)
    True
    """
    return _one("alpha_dcg_score", "alpha_dcg",
                {"k": k, "alpha": alpha, "normalization": normalization}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, ideal_ties=ideal_ties,
                     no_relevant=no_relevant, retrieved=retrieved,
                          intent_weights=intent_weights))


def err_ia_score(y_true, y_score, *, qid=None, k=20, alpha=0.5, normalization="ndeval",
                 threshold=1, ties="pessimistic", ideal_ties="last", no_relevant="zero",
                 retrieved=None,
                     intent_weights=None):
    """ERR-IA@k as ndeval computes it: the novelty gains discounted by ``1 / rank``.

    ``sum_{{i<=k}} gain_i / i`` with the gains of :func:`alpha_ndcg_score`, divided
    (``normalization="ndeval"``, when ``k > 1``) by ``sum_{{i<=k}} m (1-alpha)**(i-1) / i``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> from skrank.diversity import err_ia_score
    >>> y_true, y_score = [[1, 0], [1, 1]], [2, 1]
    >>> err_ia_score(y_true, y_score, qid=[0, 0], k=2) == (1 + 1.5 / 2) / (2 + 2 * 0.5 / 2)
    True
    """
    return _one("err_ia_score", "err_ia",
                {"k": k, "alpha": alpha, "normalization": normalization}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, ideal_ties=ideal_ties,
                     no_relevant=no_relevant, retrieved=retrieved,
                          intent_weights=intent_weights))


def nerr_ia_score(y_true, y_score, *, qid=None, k=20, alpha=0.5, threshold=1,
                  ties="pessimistic", ideal_ties="last", no_relevant="zero", retrieved=None,
                     intent_weights=None):
    """nERR-IA@k: ERR-IA@k of the run over ERR-IA@k of the greedy ideal ranking.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> from skrank.diversity import nerr_ia_score
    >>> y_true, y_score = [[1, 0], [1, 1]], [2, 1]
    >>> nerr_ia_score(y_true, y_score, qid=[0, 0], k=2) == (1 + 1.5 / 2) / (2 + 0.5 / 2)
    True
    """
    return _one("nerr_ia_score", "nerr_ia", {"k": k, "alpha": alpha}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, ideal_ties=ideal_ties,
                     no_relevant=no_relevant, retrieved=retrieved,
                          intent_weights=intent_weights))


def nrbp_score(y_true, y_score, *, qid=None, alpha=0.5, beta=0.5, threshold=1,
               ties="pessimistic", ideal_ties="last", no_relevant="zero", retrieved=None,
                     intent_weights=None):
    """Novelty- and rank-biased precision (Clarke et al., 2009), no cutoff.

    ``NRBP = (1 - (1 - alpha) beta) / m * sum_i gain_i beta**(i - 1)``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> from skrank.diversity import nrbp_score
    >>> y_true, y_score = [[1, 0], [1, 1]], [2, 1]
    >>> nrbp_score(y_true, y_score, qid=[0, 0]) == (1 - 0.5 * 0.5) / 2 * (1 + 1.5 * 0.5)
    True
    """
    return _one("nrbp_score", "nrbp", {"alpha": alpha, "beta": beta}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, ideal_ties=ideal_ties,
                     no_relevant=no_relevant, retrieved=retrieved,
                          intent_weights=intent_weights))


def nnrbp_score(y_true, y_score, *, qid=None, alpha=0.5, beta=0.5, threshold=1,
                ties="pessimistic", ideal_ties="last", no_relevant="zero", retrieved=None,
                     intent_weights=None):
    """NRBP of the run over NRBP of the greedy ideal ranking.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> from skrank.diversity import nnrbp_score
    >>> y_true, y_score = [[1, 0], [1, 1]], [2, 1]
    >>> nnrbp_score(y_true, y_score, qid=[0, 0]) == (1 + 1.5 * 0.5) / (2 + 0.5 * 0.5)
    True
    """
    return _one("nnrbp_score", "nnrbp", {"alpha": alpha, "beta": beta}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, ideal_ties=ideal_ties,
                     no_relevant=no_relevant, retrieved=retrieved,
                          intent_weights=intent_weights))


def p_ia_score(y_true, y_score, *, qid=None, k=20, threshold=1, ties="pessimistic",
               no_relevant="zero", retrieved=None,
                     intent_weights=None):
    """Intent-aware precision@k: covered (document, subtopic) pairs in the top ``k``
    over ``k * m``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> from skrank.diversity import p_ia_score
    >>> p_ia_score([[1, 0], [1, 1], [0, 0]], [3, 2, 1], qid=[0] * 3, k=2)   # 3 / (2 * 2)
    0.75
    """
    return _one("p_ia_score", "p_ia", {"k": k}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, no_relevant=no_relevant,
                     retrieved=retrieved,
                          intent_weights=intent_weights))


def ap_ia_score(y_true, y_score, *, qid=None, threshold=1, ties="pessimistic",
                no_relevant="zero", retrieved=None,
                     intent_weights=None):
    """Intent-aware average precision (ndeval's MAP-IA, ir_measures' ``AP_IA``): the
    average precision of each subtopic, averaged over the query's ``m`` subtopics.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> from skrank.diversity import ap_ia_score
    >>> # subtopic 0 at ranks 1, 2: AP 1; subtopic 1 at rank 2 only: AP 1/2
    >>> ap_ia_score([[1, 0], [1, 1], [0, 0]], [3, 2, 1], qid=[0] * 3)
    0.75
    """
    return _one("ap_ia_score", "ap_ia", {}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, no_relevant=no_relevant,
                     retrieved=retrieved,
                          intent_weights=intent_weights))


def subtopic_recall_score(y_true, y_score, *, qid=None, k=20, threshold=1,
                          ties="pessimistic", no_relevant="zero", retrieved=None,
                     intent_weights=None):
    """Subtopic recall@k (S-recall, ``StRecall@k``): subtopics covered in the top ``k``
    over ``m``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : float
        The mean over queries.

    Examples
    --------
    >>> from skrank.diversity import subtopic_recall_score
    >>> subtopic_recall_score([[1, 0, 0], [1, 1, 0], [0, 0, 1]], [3, 2, 1], qid=[0] * 3, k=2)
    0.6666666666666666
    """
    return _one("subtopic_recall_score", "strec", {"k": k}, y_true, y_score, qid,
                dict(threshold=threshold, ties=ties, no_relevant=no_relevant,
                     retrieved=retrieved,
                          intent_weights=intent_weights))


def per_query_scores(metric, y_true, y_score, *, qid=None, threshold=1, ties="pessimistic",
                     ideal_ties="last", no_relevant="zero", retrieved=None,
                     intent_weights=None, **options):
    """Per-query values of one diversity metric, by name (``"alpha_ndcg@20"``,
    ``"nrbp"``) with its options (``alpha=``, ``beta=``, ``k=``, ``normalization=``).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    result : skrank.QueryScores
        ``(qid, score)``: the sorted query ids and their values.

    Examples
    --------
    >>> from skrank.diversity import per_query_scores
    >>> res = per_query_scores("strec@1", [[1, 0], [1, 1], [0, 1], [1, 0]], [2, 1, 2, 1],
    ...                        qid=["a", "a", "b", "b"])
    >>> res.qid.tolist(), res.score.tolist()
    (['a', 'b'], [0.5, 0.5])
    """
    func = "per_query_scores"
    call = _call(func, (metric, options),
                 dict(threshold=threshold, ties=ties, ideal_ties=ideal_ties,
                      no_relevant=no_relevant))
    column = _plan.per_query(func, call, y_true, y_score, qid, retrieved,
                             inputs={"intent_weights": intent_weights})
    return QueryScores(column.qid, column.values)


def _call(func, item, defaults):
    """The :class:`~skrank._plan.MetricCall` of a diversity metric's name (or ``(name,
    options)`` pair), read by the grammar every entry point shares."""
    name = item[0] if isinstance(item, tuple) else item
    try:
        call = _plan.MetricCall.parse(item, func=func, inputs=INPUTS, defaults=defaults)
    except InvalidParameterError as exc:
        if "unknown metric" not in str(exc):
            raise
        call = None
    if call is None or call.spec.family != "diversity":
        names = ", ".join(f"{s.name}@k" if s.k != "none" else s.name
                          for s in DIVERSITY_METRICS.values())
        raise InvalidParameterError(
            f"{func}: unknown diversity metric {name!r}. Valid names: {names} "
            f"(k an integer >= 1).")
    return call


class DiversityEvaluation(NamedTuple):
    """Result of :func:`evaluate`: the query ids, per-query values and means by metric.

    Attributes
    ----------
    qid : ndarray of shape (n_queries,)
        The evaluated query ids, sorted.
    per_query : dict of str -> ndarray of shape (n_queries,)
        Each metric's value on each query, in the order of ``qid``.
    mean : dict of str -> float
        Each metric's mean over the queries.
    """

    qid: np.ndarray
    per_query: dict
    mean: dict

    def to_pandas(self):
        """A DataFrame with one row per query and one column per metric."""
        import pandas as pd

        return pd.DataFrame(self.per_query, index=pd.Index(self.qid, name="query_id"))


def evaluate(qrels, run, metrics=DEFAULT_METRICS, *, threshold=1, ties="pyndeval",
             ideal_ties="last", no_relevant="zero", intent_weights=None):
    """Diversity metrics of a run against diversity qrels, as ndeval computes them.

    Only the queries of both ``qrels`` and ``run`` are evaluated, as ndeval does.

    Parameters
    ----------
    qrels : path, DataFrame, dict or iterable of rows
        TREC diversity qrels ``qid subtopic docno rel`` (a file), a DataFrame with
        columns ``query_id``, ``subtopic`` (or ir_measures' ``iteration``),
        ``doc_id`` and ``relevance``, a dict ``{qid: {subtopic: {docno: rel}}}``, or
        rows ``(qid, subtopic, docno, rel)``.
    run : path, DataFrame, dict or skrank.io.Run
        The ranking: a TREC run file, a DataFrame (``query_id``, ``doc_id``,
        ``score``), ``{qid: {docno: score}}`` or a :class:`skrank.io.Run`.
    metrics : list of str or (str, dict), default=DEFAULT_METRICS
        Names such as ``"alpha_ndcg@20"``, ``"err_ia@10"``, ``"nrbp"``,
        ``("nrbp", {"alpha": 0.5, "beta": 0.8})``.
    threshold : float, default=1
        A document covers a subtopic when its judgement is ``>= threshold``.
    ties : {"pyndeval", "trec", "stable", "pessimistic", "optimistic"}, default="pyndeval"
        Order of equal scores: docno ascending (pyndeval, hence ir_measures),
        docno descending (trec_eval, ``ndeval -traditional``), the run's row
        order, or by the number of subtopics covered.
    ideal_ties : {"last", "first"}, default="last"
        Among equally good documents the greedy ideal takes the largest docno
        (ndeval) or the smallest.
    no_relevant : {"zero", "one", "skip", "nan", "raise"}, default="zero"
        Value of a query whose judged documents cover no subtopic.
    intent_weights : mapping or DataFrame, default=None
        Each query's intent probabilities by subtopic id: ``{qid: {subtopic:
        probability}}`` or a DataFrame with columns ``query_id``, ``subtopic`` (or
        ``iteration``) and ``weight`` (or ``probability``).  None: uniform, as ndeval.

    Returns
    -------
    result : DiversityEvaluation
        ``qid``, ``per_query`` (metric -> values) and ``mean`` (metric -> float).

    Examples
    --------
    >>> from skrank import diversity
    >>> qrels = [("1", "a", "d1", 1), ("1", "b", "d2", 1), ("1", "b", "d3", 1)]
    >>> run = {"1": {"d3": 3.0, "d2": 2.0, "d1": 1.0}}
    >>> res = diversity.evaluate(qrels, run, metrics=["strec@2", "p_ia@2"])
    >>> res.mean   # the top 2 cover subtopic b twice: recall 1/2, precision 2 / (2 * 2)
    {'strec@2': 0.5, 'p_ia@2': 0.5}
    """
    qids, per_query, means, _ = _evaluation_parts(
        "diversity.evaluate", qrels, run, metrics, ties=ties, ideal_ties=ideal_ties,
        no_relevant=no_relevant, threshold=threshold, intent_weights=intent_weights)
    return DiversityEvaluation(qids, per_query, means)


def _evaluation_parts(func, qrels, run, metrics, *, ties="pyndeval", ideal_ties="last",
                      no_relevant="zero", threshold=1, missing_queries=None,
                      unjudged_queries=None, ignore_identical_ids=False, intent_weights=None):
    """``(qid, per_query, mean, counts)`` of diversity metrics on qrels and a run: what
    :func:`evaluate` returns and :func:`skrank.evaluate` wraps in an ``Evaluation``
    (there, a query left out by ``no_relevant="skip"`` holds NaN)."""
    given = [f"{name}={value!r}" for name, value, default in (
        ("missing_queries", missing_queries, "skip"),
        ("unjudged_queries", unjudged_queries, "skip"),
        ("ignore_identical_ids", ignore_identical_ids, False))
        if value is not None and value != default]
    if given:
        raise InvalidParameterError(
            f"{func}: diversity metrics evaluate the queries of both qrels and run, as ndeval "
            f"does. Got {', '.join(given)} instead: leave the option at its default.")
    ties = "pyndeval" if ties is None else ties
    threshold = 1 if threshold is None else threshold
    try:
        resolved = _plan.resolve(func, metrics, inputs=INPUTS)
    except InvalidParameterError as exc:
        if "unknown metric" not in str(exc):
            raise
        resolved = None
    if resolved is None or any(call.spec.family != "diversity" for _, call in resolved):
        items = [metrics] if isinstance(metrics, (str, tuple)) else list(metrics)
        for item in items:
            _call(func, item, None)   # names the first that is no diversity metric
    labels = [label for label, _ in resolved]
    calls = [(call.spec, call.options) for _, call in resolved]
    y_true, y_score, qid, retrieved, tie_key, row_ties, ids, subtopics = collection_arrays(
        func, qrels, run, ties=ties)
    skip = no_relevant == "skip" and func == "evaluate"
    names = None
    if intent_weights is not None:   # keyed by query id and subtopic id
        intent_weights, names = _weights_by_code(func, intent_weights, ids, subtopics)
    qids, columns = diversity_table(func, calls, y_true, y_score, qid, threshold=threshold,
                                    ties=row_ties, ideal_ties=ideal_ties,
                                    no_relevant="nan" if skip else no_relevant,
                                    retrieved=retrieved, tie_key=tie_key,
                                    intent_weights=intent_weights, subtopics=names)
    qid, qids = ids[qid], ids[qids]
    per_query = dict(zip(labels, columns))
    means = {label: (float(np.nanmean(v)) if skip and not np.isnan(v).all() else _mean(v))
             for label, v in per_query.items()}
    codes = np.searchsorted(qids, qid) if qids.size else np.zeros(0, dtype=np.intp)
    keep = np.isin(qid, qids)
    relevant = (y_true >= threshold).any(axis=1)
    counts = {name: np.bincount(codes[keep & mask], minlength=qids.size)
              for name, mask in (("num_ret", retrieved), ("num_rel", relevant),
                                 ("num_rel_ret", retrieved & relevant))}
    return qids, per_query, means, counts


def _weights_by_code(func, intent_weights, ids, subtopics):
    """Intent weights keyed by query id and subtopic id -> keyed by query code, with each
    code's subtopic ids in column order (``subtopics``: ``(query code, column, id)`` of
    every subtopic of the qrels)."""
    if hasattr(intent_weights, "columns"):
        intent_weights = _weights_of_frame(func, intent_weights)
    if not hasattr(intent_weights, "items"):
        raise ValueError(f"{func}: intent_weights must be a mapping {{query: {{subtopic: "
                         f"weight}}}} or a DataFrame with qrels (their subtopics have ids, not "
                         f"columns). Got {_describe(intent_weights)} instead.")
    by_text = {str(q): w for q, w in intent_weights.items()}
    codes, columns, names = subtopics
    width = int(columns.max(initial=-1)) + 1
    table = {}
    for code, column, name in zip(codes.tolist(), columns.tolist(), names.tolist()):
        table.setdefault(code, [None] * width)[column] = name
    out = {code: by_text[str(ids[code])] for code in table if str(ids[code]) in by_text}
    kept = sorted(table)
    return out, [table[code] for code in kept]


# ---------------------------------------------------------------------------
# The functions bind to their declarations (their Parameters sections are generated).

bind_functions(DIVERSITY_METRICS.values(), globals())


def _options_doc():
    """The Parameters entries of :func:`per_query_scores`: the metric, the arrays and the
    options of every diversity declaration (once each, in signature order)."""
    seen, entries = set(), [P.METRIC.replace(
        description="A diversity metric's name, with its cutoff and options:\n"
                    "``\"alpha_ndcg@20\"``, ``\"err_ia@10\"``, ``\"nrbp(beta=0.8)\"``,\n"
                    "``\"strec@5\"`` (the names of :data:`DIVERSITY_METRICS`).").doc()]
    first = next(iter(DIVERSITY_METRICS.values()))
    shared = {"threshold", "ties", "ideal_ties", "no_relevant"}
    for param in first.signature_params():
        if param.name in ("k", "alpha"):
            continue
        seen.add(param.name)
        entries.append(param.doc())
    options = [p for spec in DIVERSITY_METRICS.values() for p in spec.params
               if p.name not in shared]
    names = list(dict.fromkeys(p.name for p in options))
    entries.append("**options\n    The metric's own options: " +
                   ", ".join(f"``{name}``" for name in names) + ".")
    return "\n\n".join(entries).replace("\n", "\n    ")


per_query_scores.__doc__ = per_query_scores.__doc__.replace("{parameters}", _options_doc())


def _stems():
    return {stem: spec for spec in DIVERSITY_METRICS.values()
            for stem in (*spec.variants, *spec.aliases)}


def stem_of(item):
    """The diversity declaration an ``evaluate`` item names (a name or a ``(name,
    options)`` pair), or None."""
    name = item[0] if isinstance(item, tuple) and len(item) == 2 else item
    parts = split_name(name) if isinstance(name, str) else None
    return None if parts is None else _stems().get(parts.stem)


def diversity_request(func, metrics):
    """Whether ``metrics`` (an evaluate list) asks for diversity metrics; an error when it
    mixes them with others (they read qrels with a subtopic column)."""
    if metrics is None:
        return False
    try:
        items = [metrics] if isinstance(metrics, (str, tuple)) else (
            list(metrics.values()) if isinstance(metrics, dict) else list(metrics))
    except TypeError:   # not a list of names: the caller's own check says so
        return False
    found = [stem_of(item) is not None for item in items]
    if any(found) and not all(found):
        diversity = [item for item, f in zip(items, found) if f]
        others = [item for item, f in zip(items, found) if not f]
        raise InvalidParameterError(
            f"{func}: diversity metrics ({', '.join(map(repr, diversity))}) read qrels with a "
            f"subtopic column and cannot be evaluated in one call with other metrics "
            f"({', '.join(map(repr, others))}). Got both instead: evaluate them in two calls.")
    return any(found)
