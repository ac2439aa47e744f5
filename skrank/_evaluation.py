"""What :func:`skrank.evaluate` returns (:class:`Evaluation`), and the one path that
joins, ranks and executes qrels against a run (in memory, streamed blocks and
Dask partitions alike).
"""

import functools
from dataclasses import dataclass

import numpy as np

from ._engine.aggregate import renamed_no_relevant_error
from ._engine.device import fill_skipped
from ._engine.row_blocks import blockable, execute_by_rows
from ._engine.xp import to_numpy
from .io._join import check_query_coverage, flat_rows, join
from .io._read import as_qrels, as_run, drop_identical_ids, read_qrels_table, read_run_table
from ._declare import params as P
from . import _plan
from .io._fields import decode
from .io._containers import qrels_table, run_table
from .io._tokenize import Table


DEFAULT_METRICS = ("ndcg@10", "map", "mrr", "precision@10", "recall@100")


#: The extra arrays evaluate() gives the metrics that declare them (``judged=``, or
#: which documents the qrels judge): their names are accepted.
INPUTS = ("judged",
          # issue 29: the label matrix of the diversity metrics (y_true, rows x subtopics),
          # the recommendation lists (the top k of a 2-D y_score) and the catalog's data
          # of the beyond-accuracy metrics, each an argument of evaluate()
          "subtopics", "recommendations", "n_items", "item_popularity", "item_features",
          "history")

#: evaluate()'s arguments that metrics read when given (issue 29), by name.
EXTRA_INPUTS = ("intent_weights", "n_items", "item_popularity", "item_features", "history",
                "similarity")


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

    def to_pandas(self, ci=None, *, method="bootstrap", n_resamples=10_000, seed=None):
        """Per-query values as a DataFrame indexed by qid (needs pandas), and on request
        the mean with its confidence interval below them.

        Parameters
        ----------
        ci : None, True or float in (0, 1), default=None
            None (or False): the per-query rows only, as always.  True (95%) or a
            confidence level: three rows follow the queries, ``"mean"``,
            ``"ci_low"`` and ``"ci_high"``: the very numbers of
            :meth:`confidence_interval` with the same ``method``,
            ``n_resamples`` and ``seed`` (weighted by ``sample_weight`` when the
            evaluation was; queries skipped by ``no_relevant="skip"`` left out).
            The index then mixes query ids and these three names (object
            dtype); a query named like one of them is an error.
        method : {"bootstrap", "bca", "percentile", "t"}, default="bootstrap"
        n_resamples : int, default=10_000
        seed : int, numpy Generator or None, default=None
            As in :meth:`confidence_interval` (used only with ``ci``).

        Returns
        -------
        frame : pandas.DataFrame
            One column per metric.  For the summary alone (one row per metric,
            with the query counts) and its markdown and LaTeX tables, see
            :meth:`confidence_interval` (``.to_pandas()``, ``.to_markdown()``,
            ``.to_latex()``).

        Examples
        --------
        >>> import skrank
        >>> res = skrank.evaluate([1, 0, 0, 1, 1, 0, 0, 1], [.9, .8, .7, .6, .5, .4, .3, .2],
        ...                       qid=[1, 1, 2, 2, 3, 3, 4, 4], metrics=["mrr"])
        >>> res.to_pandas()["mrr"].tolist()
        [1.0, 0.5, 1.0, 0.5]
        >>> frame = res.to_pandas(ci=0.95, method="t")
        >>> frame.index.tolist()
        [1, 2, 3, 4, 'mean', 'ci_low', 'ci_high']
        >>> frame.loc[["mean", "ci_low", "ci_high"], "mrr"].round(4).tolist()
        [0.75, 0.2907, 1.2093]
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised without pandas only
            raise ImportError("Evaluation.to_pandas needs pandas: pip install pandas") from exc
        from ._uncertainty import SUMMARY_ROWS, summary_rows

        rows = summary_rows(self, ci, method=method, n_resamples=n_resamples, seed=seed)
        # Device arrays (PyTorch, CuPy, ...) are copied to the host here.
        frame = pd.DataFrame({name: to_numpy(values) for name, values in self.per_query.items()},
                             index=pd.Index(to_numpy(self.qid), name="qid"))
        if rows is None:
            return frame
        summary = pd.DataFrame(rows, index=pd.Index(SUMMARY_ROWS, dtype=object, name="qid"))
        frame.index = frame.index.astype(object)
        return pd.concat([frame, summary[frame.columns]])

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


def _run_plan(func, metrics, options, arrays, judged, trec, qid_labels=None, extra=None):
    """Plan, prepare and execute ``metrics`` with the resolved ``options`` on ``arrays``
    (y_true, y_score, qid, retrieved, exclude, sample_weight): ``(table, counts)``, the
    table with the query weights as ``table.weights``.  ``qid_labels``: the query id of
    each code, when ``qid`` holds codes (TREC files), for errors that name queries."""
    calls = _plan.resolve(func, metrics, trec=True, inputs=INPUTS, defaults=options.defaults)
    families = {call.spec.family for _, call in calls}
    if "beyond" in families and len(families) > 1 and "diversity" not in families and (
            arrays[2] is None and np.ndim(arrays[1]) == 2):
        return _with_lists(func, calls, options, arrays, judged, trec, extra)
    p = _plan.plan(func, calls, ranking_for_counts=True)
    if p.raw:   # issue 29: diversity or beyond-accuracy metrics, on the arrays as given
        prepared = _plan.prepare(p, *arrays, inputs=dict(extra or {}))
        table = _plan.execute(p, prepared)
        return (_Executed(table.qid, table.columns, prepared.weights),
                _raw_counts(p, arrays, table.qid, options.level))
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


def _with_lists(func, calls, options, arrays, judged, trec, extra):
    """Accuracy and beyond-accuracy metrics of one 2-D form (issue 29): each part on its
    own plan, the rows (users) the same; the columns in the order asked for, the counts
    and query weights the accuracy part's."""
    lists = {label: call for label, call in calls if call.spec.family == "beyond"}
    others = {label: call for label, call in calls if label not in lists}
    table, counts = _run_plan(func, others, options, arrays, judged, trec)
    users, _ = _run_plan(func, lists, options, arrays, judged, trec, extra=extra)
    if not np.array_equal(np.asarray(users.qid), np.asarray(table.qid)):   # pragma: no cover
        raise RuntimeError(f"{func}: internal error: the users of the lists and of the "
                           f"rankings differ.")
    columns = {**table.columns, **users.columns}
    return _Executed(table.qid, {label: columns[label] for label, _ in calls},
                     table.weights), counts


def _raw_counts(p, arrays, qids, threshold):
    """num_ret, num_rel and num_rel_ret of the diversity metrics' queries (a document is
    relevant when it covers some subtopic); none for recommendation lists."""
    y_true, _, qid, retrieved = arrays[:4]
    if qid is None or p.steps[0].call.spec.family != "diversity":
        return {}
    labels = y_true.toarray() if hasattr(y_true, "toarray") else np.asarray(y_true)
    labels = labels.reshape(labels.shape[0], -1)
    relevant = (labels >= (1.0 if threshold is None else threshold)).any(axis=1)
    ranked = np.ones(labels.shape[0], dtype=bool) if retrieved is None else np.asarray(
        retrieved, dtype=bool)
    codes = np.searchsorted(qids, np.asarray(qid))
    return {name: np.bincount(codes[mask], minlength=qids.shape[0]).astype(np.int64)
            for name, mask in (("num_ret", ranked), ("num_rel", relevant),
                               ("num_rel_ret", ranked & relevant))}


def _by_rows(p, arrays, judged, threshold):
    """``(table, counts)`` of :func:`_run_plan` on a large 2-D form, one block of rows
    at a time in bounded memory (see :mod:`skrank._engine.row_blocks`), or None to run it
    in one call."""
    y_true, y_score, qid, retrieved, exclude, sample_weight = arrays
    matrix = blockable(y_true, y_score, qid, retrieved, exclude, judged, p.depth is None)
    if matrix is None:
        return None
    blocked = execute_by_rows(p.func, functools.partial(_plan._run_block, p), y_true, matrix,
                              exclude, sample_weight, whole_rankings=p.depth is None,
                              extra=functools.partial(_table_counts, threshold=threshold),
                              direct=_plan.direct_block(p))
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

    if isinstance(value, Table):  # read by the command line
        return value
    if isinstance(value, (str, os.PathLike)) or hasattr(value, "read"):
        return (read_qrels_table(value) if name == "qrels"
                else read_run_table(value, compact=True))
    if name == "qrels":
        return qrels_table(as_qrels("evaluate", value, name), "evaluate")
    return run_table(as_run("evaluate", value, name), "evaluate")
