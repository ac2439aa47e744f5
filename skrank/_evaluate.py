"""Many metrics over one grouping pass, with per-query results."""

import functools
from dataclasses import dataclass

import numpy as np

from . import _params as P
from . import _plan
from ._aggregate import renamed_no_relevant_error
from ._array_api import fill_skipped, to_numpy
from ._diversity import diversity_request
from ._inputs import is_dask_frame
from .io._join import check_query_coverage
from .io._read import as_qrels, as_run, drop_identical_ids
from ._row_blocks import blockable, execute_by_rows
from ._validation import InvalidParameterError

DEFAULT_METRICS = ("ndcg@10", "map", "mrr", "precision@10", "recall@100")

#: The extra arrays evaluate() gives the metrics that declare them (``judged=``, or
#: which documents the qrels judge): their names are accepted.
INPUTS = ("judged",)


def check_collection_options(func, missing_queries, unjudged_queries, ignore_identical_ids):
    """The options about matching a ground truth with predictions (in memory and on Dask)."""
    for param, value in zip(P.COLLECTION_OPTIONS,
                            (missing_queries, unjudged_queries, ignore_identical_ids)):
        param.validate(func, value)


@dataclass(frozen=True)
class Evaluation:
    """Result of :func:`evaluate`: per-query values, their query ids, and the means.

    Attributes
    ----------
    qid : ndarray of shape (n_queries,)
        Every evaluated query id (sorted when orderable).
    per_query : dict of str -> ndarray of shape (n_queries,)
        Per-query values of each metric, aligned with ``qid``.  Queries left
        out by ``no_relevant="skip"`` hold NaN.
    mean : dict of str -> float
        Mean over queries of each metric (skipped queries left out), weighted
        by ``sample_weight`` when given.
    counts : dict of str -> ndarray of shape (n_queries,)
        ``num_ret``, ``num_rel`` and ``num_rel_ret`` per query (trec_eval's
        counts; relevance at the evaluation's threshold, 1 by default).
    weights : ndarray of shape (n_queries,) or None
        The query weights from ``sample_weight``, aligned with ``qid``; None
        when every query weighs the same.

    With PyTorch, CuPy or other array-API input, ``per_query``, ``counts`` and
    ``weights`` hold arrays of that namespace on the input's device (``qid``
    too when the ids were given as one); ``mean`` holds Python floats.
    """

    qid: np.ndarray
    per_query: dict
    mean: dict
    counts: dict
    weights: np.ndarray = None

    @property
    def metrics(self):
        return list(self.mean)

    @property
    def n_no_relevant(self):
        """Queries without a relevant document (``num_rel == 0``): their values come from
        each metric's ``no_relevant`` policy (0 by default, 1 in LightGBM's and XGBoost's
        convention, left out with ``"skip"``), which can move a mean a long way."""
        num_rel = self.counts.get("num_rel") if self.counts else None
        return 0 if num_rel is None else int((to_numpy(num_rel) == 0).sum())

    def to_pandas(self):
        """Per-query values as a DataFrame indexed by qid (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised without pandas only
            raise ImportError("Evaluation.to_pandas needs pandas: pip install pandas") from exc
        # Device arrays (PyTorch, CuPy, ...) are copied to the host here.
        frame = pd.DataFrame({name: to_numpy(values) for name, values in self.per_query.items()},
                             index=pd.Index(to_numpy(self.qid), name="qid"))
        return frame

    def to_dict(self):
        """Plain-Python form: means, per-query values and counts.

        ``per_query`` is keyed by the query ids themselves (as Python scalars), so
        ids ``1`` and ``"1"`` stay two entries; ``json.dumps`` writes int keys
        as strings.
        """
        def clean(values):  # NaN -> None, once per metric column
            values = to_numpy(values).astype(np.float64)
            out = values.astype(object)
            out[np.isnan(values)] = None
            return out.tolist()

        qids = to_numpy(self.qid).tolist()   # the ids themselves: 1 and "1" stay two queries
        columns = {name: clean(vals) for name, vals in self.per_query.items()}
        return {
            "mean": {name: (None if np.isnan(v) else v) for name, v in self.mean.items()},
            "per_query": {q: {name: column[i] for name, column in columns.items()}
                          for i, q in enumerate(qids)},
            "counts": {name: to_numpy(vals).tolist() for name, vals in self.counts.items()},
            "qid": qids,
        }

    def confidence_interval(self, metric=None, *, method="bootstrap", confidence=0.95,
                            n_resamples=10_000, seed=None):
        """Confidence interval of each mean over the queries (one system's uncertainty).

        Parameters
        ----------
        metric : str, list of str or None, default=None
            The metrics; None: every metric of the evaluation.
        method : {"bootstrap", "bca", "percentile", "t"}, default="bootstrap"
            ``"bootstrap"`` is ``"bca"``: the bias-corrected and accelerated
            bootstrap over queries, drawn by the resampling code of
            :func:`skrank.compare` and formed as :func:`scipy.stats.bootstrap`
            forms it; ``"percentile"`` the plain percentile bootstrap;
            ``"t"`` Student's t-interval.  With ``sample_weight`` the mean is
            weighted, queries are resampled with their weights, and the
            t-interval takes the ratio estimator's standard error.
        confidence : float in (0, 1), default=0.95
        n_resamples : int, default=10_000
        seed : int, numpy Generator or None, default=None
            Seed of the resampling; an int makes the bounds reproducible.

        Returns
        -------
        intervals : ConfidenceIntervals
            ``mean``, ``low``, ``high`` and ``n_queries`` per metric;
            ``to_pandas()``, ``to_markdown()``, ``to_latex()``.  Queries left
            out by ``no_relevant="skip"`` (NaN) are left out; a metric whose
            values are all equal gets a point interval.

        Examples
        --------
        >>> import skrank
        >>> res = skrank.evaluate([1, 0, 0, 1, 1, 0, 0, 1], [.9, .8, .7, .6, .5, .4, .3, .2],
        ...                       qid=[1, 1, 2, 2, 3, 3, 4, 4], metrics=["mrr"])
        >>> res.per_query["mrr"].tolist()
        [1.0, 0.5, 1.0, 0.5]

        The t-interval is ``0.75 -+ t(0.975, df=3) * sd / sqrt(4)`` with
        ``sd = sqrt(4 * 0.25**2 / 3)``: ``0.75 -+ 3.1824 * 0.1443``.

        >>> ci = res.confidence_interval(method="t")
        >>> round(ci.mean["mrr"], 4), round(ci.low["mrr"], 4), round(ci.high["mrr"], 4)
        (0.75, 0.2907, 1.2093)
        """
        from ._uncertainty import confidence_interval

        return confidence_interval(self, metric, method=method, confidence=confidence,
                                   n_resamples=n_resamples, seed=seed)

    def by(self, segment, *, method="t", confidence=0.95, n_resamples=10_000, seed=None):
        """Per-segment means, with their query counts and confidence intervals.

        Parameters
        ----------
        segment : mapping, pandas Series or array-like of shape (n_queries,)
            The segment of each query (e.g. ``"head"``/``"tail"``, a domain, a
            query-length bucket): a mapping or Series query id -> segment (ids
            compared as strings), or an array aligned with ``qid``.  Every
            evaluated query needs a segment (an error names the first without).
        method : {"t", "bootstrap", "bca", "percentile"}, default="t"
            Interval of each segment's mean, as in :meth:`confidence_interval`.
        confidence, n_resamples, seed
            As in :meth:`confidence_interval`.

        Returns
        -------
        breakdown : SegmentBreakdown
            ``segments`` (sorted) and per metric ``mean``, ``low``, ``high``,
            ``n_queries``, weighted by ``sample_weight`` when the evaluation
            was; ``to_pandas()``, ``to_markdown()``.

        Examples
        --------
        >>> import skrank
        >>> res = skrank.evaluate([1, 0, 0, 1, 1, 0, 0, 1], [.9, .8, .7, .6, .5, .4, .3, .2],
        ...                       qid=[1, 1, 2, 2, 3, 3, 4, 4], metrics=["mrr"])
        >>> seg = res.by({1: "head", 2: "head", 3: "tail", 4: "tail"})
        >>> seg.segments.tolist(), seg.mean["mrr"].tolist(), seg.n_queries["mrr"].tolist()
        (['head', 'tail'], [0.75, 0.75], [2, 2])
        """
        from ._uncertainty import by

        return by(self, segment, method=method, confidence=confidence, n_resamples=n_resamples,
                  seed=seed)

    def __repr__(self):
        means = ", ".join(f"{name}={value:.4f}" for name, value in self.mean.items())
        # queries without a relevant document weigh on every mean: say how many
        missing = self.n_no_relevant
        shown = f"n_no_relevant={missing}, " if missing else ""
        return f"Evaluation(n_queries={self.qid.shape[0]}, {shown}{means})"


def evaluate(y_true=None, y_score=None, *, qid=None, metrics=DEFAULT_METRICS, retrieved=None,
             ties=None, no_relevant="zero", threshold=None, qrels=None, run=None,
             missing_queries=None, exclude=None, unjudged_queries=None,
             ignore_identical_ids=False, judged=None, sample_weight=None):
    """Evaluate several metrics at once, sharing one grouping and sorting pass.

    Parameters
    ----------
    y_true, y_score, qid, retrieved, exclude
        As in :func:`skrank.ndcg_score` (``y_true`` may be a scipy sparse
        relevance matrix in the 2-D form, ``exclude`` the items that take no
        rank).  Leave them out to evaluate ``qrels`` and ``run`` instead.
    {metrics}
    {ties}
    {no_relevant}
    {threshold}
    qrels, run : default=None
        Ground truth and predictions to evaluate instead of arrays, each in
        any of these forms: a :class:`skrank.io.Qrels` / :class:`skrank.io.Run`
        or the path of a TREC file; a pandas (or polars) DataFrame with
        columns ``query_id, doc_id, relevance`` / ``query_id, doc_id, score``
        (other names through :meth:`skrank.io.Qrels.from_frame` and
        :meth:`skrank.io.Run.from_frame`); a dict of dicts
        ``{query: {doc: grade}}`` / ``{query: {doc: score}}`` (pytrec_eval,
        ranx); a dict of relevant sets ``{query: {doc, ...}}`` (grade 1); a
        dict of ranked lists ``{query: [doc, ...]}``, best first.  Ids may be
        ints or strings and are compared as strings (``7`` matches ``"7"``).
        Documents of the ground truth that the run did not return count in
        R, the ideal DCG and recall; returned documents without judgement
        count as non-relevant; negative judgements (trec_eval's "unjudged in
        pool") have gain 0 and are never relevant.  See the user guides
        ``docs/recommender.md`` and ``docs/rag.md``.  Dask DataFrames (with
        those column names) are evaluated partition by partition by
        :func:`skrank.dask.evaluate`, which returns a
        :class:`skrank.dask.DaskEvaluation`.
    {missing_queries}
    {unjudged_queries}
    {ignore_identical_ids}
    judged : array-like of bool of shape (n_samples,), default=None
        For ``"bpref"``, ``"infap"`` and ``"judged@k"``: False marks a
        document nobody judged (see :func:`skrank.bpref_score`).  None means
        all were; with TREC files, the documents in the qrels are.
    sample_weight : array-like of shape (n_samples,) or (n_queries,), default=None
        Query weights (arrays only): every mean becomes
        ``sum(w_q * v_q) / sum(w_q)`` (see :func:`skrank.ndcg_score`); the
        per-query values do not change and ``result.weights`` holds the
        weight of each query.

    Returns
    -------
    result : Evaluation
        Per-query values with their query ids, and the means.

    Examples
    --------
    >>> import skrank
    >>> res = skrank.evaluate([2, 0, 1, 0, 1, 0], [0.9, 0.8, 0.1, 0.3, 0.2, 0.1],
    ...                       qid=[1, 1, 1, 2, 2, 2], metrics=["ndcg@2", "mrr", "precision@1"])
    >>> {name: round(value, 4) for name, value in res.mean.items()}
    {'ndcg@2': 0.6956, 'mrr': 0.75, 'precision@1': 0.5}
    >>> res.per_query["mrr"].tolist()
    [1.0, 0.5]
    """
    func = "evaluate"
    trec = qrels is not None or run is not None
    # Diversity metrics (issue 29) read qrels with subtopics and take ndeval's conventions:
    # their options are theirs to resolve.
    diversity = trec and diversity_request(func, metrics)
    options = None if diversity else _plan.resolve_options(
        func, ties=ties, no_relevant=no_relevant, threshold=threshold, collection=trec)
    check_collection_options(func, missing_queries, unjudged_queries, ignore_identical_ids)
    if trec:
        if sample_weight is not None:
            raise InvalidParameterError(
                f"{func}: sample_weight applies to arrays (y_true, y_score) only. Got qrels and "
                f"run instead: evaluate them, then weigh result.per_query yourself.")
        if y_true is None and y_score is None and qid is None and (
                retrieved is not None or judged is not None):
            given = " and ".join(n for n, v in (("judged", judged), ("retrieved", retrieved))
                                 if v is not None)
            raise InvalidParameterError(
                f"{func}: {given} {'apply' if ' and ' in given else 'applies'} to arrays "
                f"(y_true, y_score, qid) only. Got qrels and "
                f"run instead, where the judged documents are those of the qrels and the "
                f"retrieved ones those of the run: leave {given} out.")
        if (y_true is not None or y_score is not None or qid is not None
                or retrieved is not None or judged is not None):
            raise InvalidParameterError(f"{func}: pass either arrays (y_true, y_score, qid) or TREC files "
                             f"(qrels, run), not both.")
        if qrels is None or run is None:
            raise InvalidParameterError(f"{func}: TREC evaluation needs both qrels and run.")
        if exclude is not None:
            raise InvalidParameterError(f"{func}: exclude is for the 2-D form (y_true, y_score matrices); "
                             f"with qrels and run, leave the excluded documents out of the run.")
        if diversity:
            from .diversity import _evaluation_parts

            return Evaluation(*_evaluation_parts(
                func, qrels, run, metrics, ties=ties, no_relevant=no_relevant,
                threshold=threshold, missing_queries=missing_queries,
                unjudged_queries=unjudged_queries, ignore_identical_ids=ignore_identical_ids))
        if is_dask_frame(qrels) or is_dask_frame(run):  # partition by partition on Dask
            from .dask import _evaluate_frames

            return _evaluate_frames(
                qrels, run, metrics=metrics, query_id="query_id", doc_id="doc_id",
                relevance="relevance", score="score", options=options,
                missing_queries=missing_queries, unjudged_queries=unjudged_queries,
                ignore_identical_ids=ignore_identical_ids, npartitions=None)
        return _evaluate_collection(
            func, metrics, qrels, run, options, missing_queries=missing_queries,
            unjudged_queries=unjudged_queries, ignore_identical_ids=ignore_identical_ids)
    if y_true is None or y_score is None:
        raise InvalidParameterError(f"{func}: y_true and y_score are required (or qrels and run).")
    # options about matching two collections mean nothing for arrays: say so, not ignore
    given = {param.name: value for param, value in zip(
        P.COLLECTION_OPTIONS, (missing_queries, unjudged_queries, ignore_identical_ids))
        if not _plan._same(value, param.default)}
    if given:
        listed = ", ".join(f"{name}={value!r}" for name, value in given.items())
        raise InvalidParameterError(
            f"{func}: {listed} applies to qrels and run only. Got arrays (y_true, y_score) "
            f"instead: every query of the arrays is evaluated; drop rows beforehand to "
            f"leave some out.")
    table, counts = _run_plan(func, metrics, options,
                              (y_true, y_score, qid, retrieved, exclude, sample_weight),
                              judged, False)
    return _evaluation(func, table.qid, table.columns, counts, table.weights)


def _evaluate_collection(func, metrics, qrels, run, options, **collection_options):
    """The :class:`Evaluation` of ``qrels`` against ``run`` with the resolved ``options``
    (checked collection options): evaluate()'s path, and the command line's."""
    table, counts = _run_collection(func, metrics, qrels, run, options, **collection_options)
    return _evaluation(func, table.qid, table.columns, counts, table.weights)


def _run_collection(func, metrics, qrels, run, options, *, missing_queries,
                    unjudged_queries=None, ignore_identical_ids=False, check_coverage=True):
    """``(table, counts)`` of ``qrels`` against ``run`` with the resolved ``options``
    (:func:`skrank._plan.resolve_options`): joined in their tie order, ranked and
    executed, the table's queries named by their ids.  See :func:`_trec_arrays` for
    ``check_coverage``."""
    y_true, y_score, qid, retrieved, judged, qid_labels = _trec_arrays(
        qrels, run, missing_queries, unjudged_queries, ignore_identical_ids,
        options.tie_order, check_coverage)
    table, counts = _run_plan(func, metrics, options,
                              (y_true, _ranked_finite(y_score), qid, retrieved, None, None),
                              judged, True, qid_labels=qid_labels)
    return _named(table, qid_labels), counts


def _run_plan(func, metrics, options, arrays, judged, trec, qid_labels=None):
    """Plan, prepare and execute ``metrics`` with the resolved ``options`` on ``arrays``
    (y_true, y_score, qid, retrieved, exclude, sample_weight): ``(table, counts)``, the
    table with the query weights as ``table.weights``.  ``qid_labels``: the query id of
    each code, when ``qid`` holds codes (TREC files), for errors that name queries."""
    calls = _plan.resolve(func, metrics, trec=True, inputs=INPUTS, defaults=options.defaults)
    p = _plan.plan(func, calls, ranking_for_counts=True)
    blocked = _by_rows(p, arrays, judged, options.level)
    if blocked is not None:
        return blocked
    prepared = _plan.prepare(p, *arrays, inputs=dict(judged=judged), negative_is_unjudged=trec)
    try:
        table = _plan.execute(p, prepared)
    except ValueError as exc:
        named = None if qid_labels is None else renamed_no_relevant_error(exc, qid_labels)
        if named is None:
            raise
        raise named from None
    return _Executed(table.qid, table.columns, prepared.weights), _table_counts(
        table, prepared, options.level)


def _by_rows(p, arrays, judged, threshold):
    """``(table, counts)`` of :func:`_run_plan` on a large 2-D form, one block of rows
    at a time in bounded memory (see :mod:`skrank._row_blocks`), or None to run it
    in one call."""
    y_true, y_score, qid, retrieved, exclude, sample_weight = arrays
    matrix = blockable(y_true, y_score, qid, retrieved, exclude, judged, p.depth is None)
    if matrix is None:
        return None
    blocked = execute_by_rows(p.func, functools.partial(_plan._run_block, p), y_true, matrix,
                              exclude, sample_weight, whole_rankings=p.depth is None,
                              extra=functools.partial(_table_counts, threshold=threshold))
    if blocked is None:
        return None
    counts = {name: np.concatenate([c[name] for c in blocked.extras])
              for name in blocked.extras[0]}
    return _Executed(blocked.qid, blocked.columns, blocked.weights), counts


def _table_counts(table, prepared, threshold):
    """num_ret, num_rel and num_rel_ret of each query of an executed table."""
    ranking = next(iter(table.rankings.values()))
    counts = _counts(ranking, 1.0 if threshold is None else float(threshold))
    if prepared.n_ranked is not None:
        # Every item that is not excluded is ranked, though only the leading ones are held.
        if isinstance(prepared.n_ranked, np.ndarray):
            counts["num_ret"] = prepared.n_ranked.astype(np.int64)
            counts["num_rel_ret"] = counts["num_rel"].copy()
        else:  # device counts
            counts["num_ret"] = prepared.n_ranked
            counts["num_rel_ret"] = counts["num_rel"] + 0
    return counts


@dataclass(frozen=True)
class _Executed:
    """What one execution gives: the query ids, a Column per label, the query weights."""

    qid: np.ndarray
    columns: dict
    weights: object


def _named(table, qid_labels):
    """``table`` with its query codes replaced by the query ids."""
    return _Executed(qid_labels[table.qid],
                     {label: column._replace(qid=qid_labels[column.qid])
                      for label, column in table.columns.items()}, table.weights)


def _evaluation(func, qids, columns, counts, weights):
    """The :class:`Evaluation` of executed columns (label -> Column)."""
    mean = {label: column.score(func) for label, column in columns.items()}
    return Evaluation(qid=qids, per_query=_per_query(qids, columns), mean=mean, counts=counts,
                      weights=weights)


def _per_query(qids, columns):
    """Each executed column's value per query of ``qids`` (NaN where skipped)."""
    per_query = {}
    for label, column in columns.items():
        if column.qid.shape[0] == qids.shape[0]:
            per_query[label] = column.values
        elif not isinstance(column.values, np.ndarray):  # device values: NaN where skipped
            per_query[label] = fill_skipped(column.values, column.qid, qids)
        else:  # queries left out by no_relevant="skip" hold NaN
            full = np.full(qids.shape[0], np.nan)
            full[np.isin(qids, column.qid)] = column.values
            per_query[label] = full
    return per_query


def _collection_values(qrels, run, *, metrics, options, missing_queries="skip"):
    """``(qid, per_query, counts)`` of ``evaluate(qrels=..., run=...)``, without the means
    and without a policy or warning for queries on one side only: what each partition of
    :func:`skrank.dask.evaluate` computes (its caller counts those queries over the whole
    data; warnings filtered in worker threads would race with other threads).  ``options``:
    resolved by :func:`skrank._plan.resolve_options`."""
    table, counts = _run_collection("evaluate", metrics, qrels, run, options,
                                    missing_queries=missing_queries, check_coverage=False)
    return table.qid, _per_query(table.qid, table.columns), counts


def _ranked_finite(y_score):
    """Scores with infinities replaced by dense ranks, which keep every order and tie
    (trec_eval ranks inf scores)."""
    if not np.isinf(y_score).any():
        return y_score
    finite_rank = np.full(y_score.shape, np.nan)
    scored = ~np.isnan(y_score)
    finite_rank[scored] = np.unique(y_score[scored], return_inverse=True)[1]
    return finite_rank


evaluate.__doc__ = P.fill_options(evaluate.__doc__, P.EVALUATE_OPTIONS.values())


def _counts(ranking, threshold):
    if getattr(ranking, "xp", None) is not None:  # a device ranking: counts on the device
        xp = ranking.xp
        return {name: xp.astype(values, xp.int64) for name, values in (
            ("num_ret", ranking.n_ranked), ("num_rel", ranking.n_relevant(threshold)),
            ("num_rel_ret", ranking.n_relevant_ranked(threshold)))}
    return {
        "num_ret": ranking.n_ranked.astype(np.int64),
        "num_rel": ranking.n_relevant(threshold).astype(np.int64),
        "num_rel_ret": ranking.n_relevant_ranked(threshold).astype(np.int64),
    }


def _trec_arrays(qrels, run, missing_queries, unjudged_queries="skip",
                 ignore_identical_ids=False, tie_order="trec", check_coverage=True):
    """The joined rows of ``qrels`` and ``run`` with query codes, and the query id
    of each code.  Files are read as byte tables and joined on the readers' pair
    hashes in trec_eval's order (the command line's path): no str column.  With
    ``tie_order="input"`` equal scores keep the run's row order (its lines, its frame's
    rows) instead of trec_eval's docno order (``"trec"``).  ``check_coverage=False``: no policy or
    warning for queries on one side only (they are then left out, or scored as empty
    rankings with ``missing_queries="zero"``)."""
    from .io._join import flat_rows, join
    from .io._tokenize import decode

    qrels = _trec_table(qrels, "qrels")
    run = _trec_table(run, "run")
    if ignore_identical_ids:
        run = drop_identical_ids(run)
    if check_coverage:
        check_query_coverage("evaluate", qrels, run, missing_queries, unjudged_queries)
    if missing_queries in ("raise", None):
        missing_queries = "skip"  # none is missing / the default: both give the same rows
    joined = join(qrels, run, missing_queries=missing_queries, func="evaluate",
                  columns=("score",), tie_order=tie_order)
    rows = flat_rows(joined)
    labels = decode(joined.qids) if joined.qids.shape[0] else np.zeros(0, dtype="U1")
    return (rows["y_true"], rows["y_score"], rows["codes"], rows["retrieved"],
            rows["judged"], labels)


def _trec_table(value, name):
    """A qrels or run in any accepted form -> its byte table (a file is read as one,
    without str columns)."""
    import os

    from .io._containers import qrels_table, run_table
    from .io._read import read_qrels_table, read_run_table
    from .io._tokenize import Table

    if isinstance(value, Table):  # read by the command line
        return value
    if isinstance(value, (str, os.PathLike)) or hasattr(value, "read"):
        return (read_qrels_table(value) if name == "qrels"
                else read_run_table(value, compact=True))
    if name == "qrels":
        return qrels_table(as_qrels("evaluate", value, name), "evaluate")
    return run_table(as_run("evaluate", value, name), "evaluate")


def _evaluate_stream(qrels, run, *, block_bytes, metrics, options, missing_queries=None):
    """:func:`evaluate` of a qrels table and a run read one block of whole queries at
    a time (``run``: a path or a binary file; the command line's ``--stream`` with
    skrank's names).  Each block is joined and executed as ``evaluate(qrels=,
    run=)`` would the whole run, so the values are the same; memory holds the
    qrels, one block and the per-query values.  Raises
    :class:`skrank._trec_eval.NotGroupedError` when the run is not grouped by query."""
    from types import SimpleNamespace

    from ._trec_eval import _QueryIndex, grouped_blocks
    from .io._tokenize import check_no_duplicates, decode, empty_run_table

    func = "evaluate"
    check_collection_options(func, missing_queries, "skip", False)
    check_no_duplicates(qrels, "in qrels")
    index = _QueryIndex(qrels)
    _plan.resolve(func, metrics, trec=True, inputs=INPUTS,
                  defaults=options.defaults)  # bad names fail first
    seen = np.zeros(index.qids.shape[0], dtype=bool)
    done, parts = [], []

    def evaluate_block(sub_qrels, block, missing):
        # (the policies for queries on one side only are applied to the whole run below)
        parts.append(_run_collection(func, metrics, sub_qrels, block, options,
                                     missing_queries=missing, check_coverage=False))

    for block in grouped_blocks(run, block_bytes, done):
        codes = index.codes_of(block.qid_runs)
        codes = np.unique(codes[codes >= 0])
        if codes.shape[0]:
            seen[codes] = True
            evaluate_block(index.subset(codes), block, "skip")
    if not done:
        from .io._tokenize import source_name

        raise ValueError(f"{source_name(run)}: no line (an empty run file)")
    # The policies for queries on one side only, on the whole run's queries.
    ranked = decode(np.unique(np.concatenate(done)))
    check_query_coverage(func, SimpleNamespace(qid=decode(index.qids)),
                         SimpleNamespace(qid=ranked), missing_queries, None)
    missing = np.flatnonzero(~seen)
    if missing_queries == "zero" and missing.shape[0]:
        evaluate_block(index.subset(missing), empty_run_table(), "zero")
    qids = np.concatenate([table.qid for table, _ in parts])
    order = np.argsort(qids, kind="stable")
    columns = {}
    for label in parts[0][0].columns:
        column_qid = np.concatenate([t.columns[label].qid for t, _ in parts])
        by_qid = np.argsort(column_qid, kind="stable")
        columns[label] = parts[0][0].columns[label]._replace(
            qid=column_qid[by_qid],
            values=np.concatenate([t.columns[label].values for t, _ in parts])[by_qid])
    counts = {name: np.concatenate([c[name] for _, c in parts])[order]
              for name in parts[0][1]}
    return _evaluation(func, qids[order], columns, counts, None)
