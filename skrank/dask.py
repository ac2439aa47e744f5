"""Evaluation of qrels and runs held as Dask DataFrames, beyond one machine's memory.

:func:`evaluate` shuffles both tables by query id with Dask, so that every
query lands in exactly one partition on both sides, then evaluates each
partition with :func:`skrank.evaluate` (the same engine, on the partition's
pandas frames). Per-query values stay on the cluster as a Dask DataFrame; the
means are computed from them the way :func:`skrank.evaluate` computes them.

Needs ``dask[dataframe]`` (``pip install "skrank[dask]"``), imported only when
this module's functions run. :func:`skrank.evaluate` hands Dask DataFrames
passed as ``qrels`` and ``run`` to :func:`evaluate`.
"""

from dataclasses import dataclass

import numpy as np

from . import _plan
from ._evaluation import (
    DEFAULT_METRICS, INPUTS, Evaluation, _collection_values, check_collection_options
)
from ._engine.aggregate import mean_over_queries
from .io._columns import _SHOWN, ids_as_str
from .io._fields import as_str_ids
from .io._join import report_query_coverage
from .io._read import qrels_from_frame, run_from_frame
from ._core.checks import InvalidParameterError, _describe
from .io import Qrels, Run

__all__ = ["DaskEvaluation", "evaluate"]

_FUNC = "skrank.dask.evaluate"
_COUNTS = ("num_ret", "num_rel", "num_rel_ret")
# Normalised columns of both sides after reading a partition (ids as strings).
_QID, _DOC, _VALUE, _IS_RUN, _PART = "query_id", "doc_id", "value", "is_run", "_partition"
# Column of the evaluated table saying where a query has rows: both sides, or one only.
_SIDE = "_side"
_BOTH, _QRELS_ONLY, _RUN_ONLY = 0, 1, 2


def _import_dask():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - exercised without dask only
        raise ImportError(f'{_FUNC} needs dask[dataframe]: pip install "skrank[dask]"') from exc
    return dask, dd


@dataclass(frozen=True)
class DaskEvaluation:
    """Result of :func:`skrank.dask.evaluate`.

    Attributes
    ----------
    per_query : dask.dataframe.DataFrame
        One row per evaluated query, indexed by ``qid`` (str), one float64
        column per metric; queries left out by ``no_relevant="skip"`` hold
        NaN. Persisted on the cluster (the partitions' order is the
        shuffle's, not sorted).
    counts : dask.dataframe.DataFrame
        ``num_ret``, ``num_rel`` and ``num_rel_ret`` per query, indexed alike.
    mean : dict of str -> float
        Mean over queries of each metric, as :func:`skrank.evaluate` gives.
    """

    per_query: object
    counts: object
    mean: dict

    @property
    def metrics(self):
        return list(self.mean)

    def compute(self):
        """Gather the per-query values: the :class:`skrank.Evaluation` that
        ``skrank.evaluate`` returns on the same data in memory (qids sorted)."""
        dask, _ = _import_dask()
        per_query, counts = dask.compute(self.per_query, self.counts)
        qid = as_str_ids(per_query.index.to_numpy())
        order = np.argsort(qid, kind="stable")
        counts = counts.loc[per_query.index]
        return Evaluation(
            qid=qid[order],
            per_query={name: per_query[name].to_numpy(dtype=np.float64)[order]
                       for name in self.mean},
            mean=dict(self.mean),
            counts={name: counts[name].to_numpy(dtype=np.int64)[order] for name in _COUNTS})

    def to_pandas(self, ci=None, *, method="bootstrap", n_resamples=10_000, seed=None):
        """Per-query values as a pandas DataFrame indexed by qid, sorted, and on request
        the mean with its confidence interval below them.

        The per-query values are gathered first (:meth:`compute`): the interval needs
        them all.

        Parameters
        ----------
        ci : None, True or float in (0, 1), default=None
            As in :meth:`skrank.Evaluation.to_pandas`: None, the per-query rows only;
            True (95%) or a confidence level, ``"mean"``, ``"ci_low"`` and
            ``"ci_high"`` rows below them.
        method : {"bootstrap", "bca", "percentile", "t"}, default="bootstrap"
        n_resamples : int, default=10_000
        seed : int, numpy Generator or None, default=None
            As in :meth:`skrank.Evaluation.confidence_interval` (used only with ``ci``).

        Returns
        -------
        frame : pandas.DataFrame
            One column per metric.
        """
        return self.compute().to_pandas(ci, method=method, n_resamples=n_resamples,
                                        seed=seed)

    def __repr__(self):
        means = ", ".join(f"{name}={value:.4f}" for name, value in self.mean.items())
        return f"DaskEvaluation(npartitions={self.per_query.npartitions}, {means})"


def evaluate(qrels, run, *, metrics=DEFAULT_METRICS, query_id="query_id", doc_id="doc_id",
             relevance="relevance", score="score", ties=None, no_relevant="zero",
             threshold=None, missing_queries=None, unjudged_queries=None,
             ignore_identical_ids=False, npartitions=None):
    """Evaluate a run against qrels held as Dask DataFrames, partition by partition.

    Both tables are shuffled by query id (ids compared as strings, as in
    :func:`skrank.evaluate`: ``7`` matches ``"7"``), so each query's judged
    and ranked documents meet in one partition; each partition is evaluated
    with :func:`skrank.evaluate`. A worker holds one partition at a time, so
    memory per worker is bounded by the partition size, not the data size.
    Which queries are missing on either side is decided over the whole data,
    so warnings, ``missing_queries`` and ``unjudged_queries`` behave as in
    the in-memory call (counted in the partitions after the shuffle, so no
    list of every query id reaches the client; ``"raise"`` stops once the
    partitions are evaluated), and the means are computed from the per-query
    values (not as a mean of partition means).

    Parameters
    ----------
    qrels, run : dask.dataframe.DataFrame
        Ground truth (one row per judged document) and predictions (one row
        per ranked document), e.g. from ``dask.dataframe.read_parquet``.
    metrics, ties, no_relevant, threshold, missing_queries, unjudged_queries, ignore_identical_ids
        As in :func:`skrank.evaluate`.
    query_id, doc_id, relevance, score : str
        Column names, as in :meth:`skrank.io.Qrels.from_frame` and
        :meth:`skrank.io.Run.from_frame` (``relevance=None``: every qrels row
        is a relevant document). ``score`` must name a column: a shuffle does
        not keep row order, so ranks cannot come from it.
        With ``no_relevant="raise"`` the error comes from the first partition
        holding such a query, and the count it gives is that partition's.
    npartitions : int, default=None
        Number of partitions after the shuffle; None takes the larger of the
        two inputs' numbers of partitions.

    Returns
    -------
    result : DaskEvaluation
        ``result.mean`` holds the means; ``result.per_query`` the per-query
        values as a Dask DataFrame; ``result.compute()`` the
        :class:`skrank.Evaluation` the in-memory call returns, and
        ``result.to_pandas()`` its per-query table.

    Examples
    --------
    >>> import pandas as pd
    >>> import dask.dataframe as dd
    >>> import skrank.dask
    >>> truth = pd.DataFrame({"query_id": [1, 1, 2, 3], "doc_id": ["a", "b", "a", "c"],
    ...                       "relevance": [2, 1, 1, 1]})
    >>> pred = pd.DataFrame({"query_id": [1, 1, 2, 2], "doc_id": ["b", "a", "a", "b"],
    ...                      "score": [0.9, 0.5, 0.7, 0.1]})
    >>> qrels, run = dd.from_pandas(truth, npartitions=2), dd.from_pandas(pred, npartitions=2)
    >>> res = skrank.dask.evaluate(qrels, run, metrics=["ndcg@2", "mrr"],
    ...                            missing_queries="zero")  # query 3 scores 0, silently
    >>> {name: round(value, 4) for name, value in res.mean.items()}  # as skrank.evaluate gives
    {'ndcg@2': 0.6199, 'mrr': 0.6667}
    >>> res.to_pandas()  # doctest: +NORMALIZE_WHITESPACE
           ndcg@2  mrr
    qid
    1    0.859719  1.0
    2    1.000000  1.0
    3    0.000000  0.0
    """
    options = _plan.resolve_options(_FUNC, ties=ties, no_relevant=no_relevant,
                                    threshold=threshold, collection=True)
    return _evaluate_frames(
        qrels, run, metrics=metrics, query_id=query_id, doc_id=doc_id, relevance=relevance,
        score=score, options=options, missing_queries=missing_queries,
        unjudged_queries=unjudged_queries, ignore_identical_ids=ignore_identical_ids,
        npartitions=npartitions)


def _evaluate_frames(qrels, run, *, metrics, query_id, doc_id, relevance, score, options,
                     missing_queries, unjudged_queries, ignore_identical_ids, npartitions):
    """:func:`evaluate` of Dask frames, for both public entries (this one and skrank.evaluate),
    with the options resolved by :func:`skrank._plan.resolve_options`."""
    dask, dd = _import_dask()
    for name, value in (("qrels", qrels), ("run", run)):
        if not isinstance(value, dd.DataFrame):
            raise InvalidParameterError(
                f"{_FUNC}: {name} must be a dask.dataframe.DataFrame. Got {_describe(value)} "
                f"instead. Pass pandas DataFrames to skrank.evaluate.")
    check_collection_options(_FUNC, missing_queries, unjudged_queries, ignore_identical_ids)
    if score is None:
        raise InvalidParameterError(
            f"{_FUNC}: score must name the run's score column. Got None instead: ranks from "
            f"row order are lost in the shuffle by query. Add a score column first, e.g. "
            f"run.assign(score=-run['rank']).")
    if options.tie_order == "input":
        raise InvalidParameterError(
            f"{_FUNC}: ties='stable' keeps the run's row order among equal scores, and the "
            f"shuffle by query does not keep row order. Got ties='stable' instead: order ties "
            f"by docno (ties='trec', the default) or average over them (ties='average').")
    if npartitions is None:
        npartitions = max(qrels.npartitions, run.npartitions)
    if isinstance(npartitions, (bool, np.bool_)) or not isinstance(
            npartitions, (int, np.integer)) or npartitions < 1:
        raise InvalidParameterError(f"{_FUNC}: npartitions must be a positive int or None. "
                                    f"Got {_describe(npartitions)} instead.")
    npartitions = int(npartitions)
    _check_columns(qrels, "qrels", {"query_id": query_id, "doc_id": doc_id,
                                    "relevance": relevance})
    _check_columns(run, "run", {"query_id": query_id, "doc_id": doc_id, "score": score})
    # Bad metric names or options fail here, before any work on the cluster: the same
    # call on a one-document evaluation checks them as every partition will.

    _collection_values(Qrels(qid=["q"], docno=["d"], rel=[1]),
                       Run(qid=["q"], docno=["d"], score=[1.0]), metrics=metrics,
                       options=options)
    skip_nan = _skipped_as_nan(metrics, options)
    options = dict(metrics=metrics, options=options)

    qrels_rows = qrels.map_partitions(
        _normalised, side="qrels", columns=(query_id, doc_id, relevance),
        npartitions_out=npartitions, ignore_identical_ids=False, meta=_normalised_meta())
    run_rows = run.map_partitions(
        _normalised, side="run", columns=(query_id, doc_id, score),
        npartitions_out=npartitions, ignore_identical_ids=bool(ignore_identical_ids),
        meta=_normalised_meta())

    # One shuffle of both sides' rows together: partition p receives the judged and the
    # ranked documents of the queries whose id hashes to p, and is evaluated as soon as it
    # is complete (two separate shuffles would leave one side's partitions waiting in
    # memory for the other's).  A query on one side only is on that side in its partition
    # too: each partition also lists those queries (a row each, see _SIDE), so which
    # queries are on one side only is known over the whole data without gathering every
    # query id to the client.
    divisions = tuple(range(npartitions + 1))
    rows = dd.concat([qrels_rows, run_rows]).set_index(_PART, divisions=divisions)
    labels = _labels(metrics)
    zero = missing_queries == "zero"
    table = rows.map_partitions(
        _evaluate_partition, options=options, missing_queries="zero" if zero else "skip",
        meta=_table_meta(labels), align_dataframes=False)
    table = table.persist()
    side = table[_SIDE]
    counted = table[(side == _BOTH) | (side == _QRELS_ONLY)] if zero else table[side == _BOTH]

    sums = {label: counted[label].sum(skipna=skip_nan[label]) for label in labels}
    sizes = {label: (counted[label].count() if skip_nan[label] else counted[label].size)
             for label in labels}
    coverage = {name: (mask.sum(), _first_ids(table[mask].index))
                for name, mask in (("judged", side != _RUN_ONLY), ("ranked", side != _QRELS_ONLY),
                                   ("missing", side == _QRELS_ONLY), ("unjudged", side == _RUN_ONLY))}
    sums, sizes, coverage = dask.compute(sums, sizes, coverage)
    report_query_coverage(_FUNC, *((int(count), sorted(ids)[:_SHOWN])
                                   for count, ids in coverage.values()),
                          missing_queries, unjudged_queries)
    mean = {}
    for label in labels:
        if sizes[label] == 0:
            # Same warning and NaN as the in-memory call when every query is skipped.
            mean[label] = mean_over_queries(_FUNC, np.zeros(0))
        else:
            mean[label] = float(sums[label] / sizes[label])
    return DaskEvaluation(per_query=counted[labels], counts=counted[list(_COUNTS)], mean=mean)


def _first_ids(index):
    """The first few ids (sorted) of a Dask index: enough for the coverage messages."""
    return index.to_series().map_partitions(
        lambda ids: ids.sort_values().head(_SHOWN), meta=(None, object))


def _check_columns(frame, name, columns):
    present = [str(c) for c in frame.columns]
    unused = [c for c in present if c not in columns.values()]
    for role, column in columns.items():
        if column is not None and column not in frame.columns:
            why = (" (the shuffle by query does not keep row order: the ranking needs "
                   "scores)" if role == "score" else "")
            hint = (f" Name its column with {role}=..., one of {unused}." if unused
                    else " Add the column.")
            raise ValueError(f"{_FUNC}: {name} must have a column {column!r} ({role}){why}. "
                             f"Got columns {present} instead.{hint}")


def _skipped_as_nan(metrics, options):
    """Per metric label: whether a NaN per-query value means "left out by no_relevant='skip'"
    (then the mean is over the other queries), rather than a value of 'nan' (the mean is NaN)."""
    calls = _plan.resolve(_FUNC, metrics, trec=True, inputs=INPUTS, defaults=options.defaults)
    return {label: call.options.get("no_relevant") == "skip" for label, call in calls}


def _labels(metrics):
    """The labels :func:`skrank.evaluate` gives the metrics (the plan's)."""
    return [label for label, _ in _plan.resolve(_FUNC, metrics, trec=True, inputs=INPUTS)]


def _partition_of(qid, npartitions):
    import pandas as pd

    hashed = pd.util.hash_array(qid.astype(object))
    return (hashed % np.uint64(npartitions)).astype(np.int64)


def _normalised(part, *, side, columns, npartitions_out, ignore_identical_ids):
    """One input partition as (query_id str, doc_id str, value, partition number)."""
    import pandas as pd

    query_id, doc_id, value = columns
    if query_id in part.columns:
        missing = part[query_id].isna().to_numpy()
        if missing.any():  # named by index label: a row number would be the partition's
            raise ValueError(
                f"{_FUNC}: {side} must not contain missing query ids (None, NaN, NaT or "
                f"pandas.NA) in column {query_id!r}. Got {int(missing.sum())} in one of its "
                f"partitions, the first at index label {part.index[[np.argmax(missing)]].tolist()[0]!r}. "
                f"Drop those rows first, e.g. {side}.dropna(subset=[{query_id!r}]), or give "
                f"them an id.")
    if side == "qrels":
        table = qrels_from_frame(part, query_id=query_id, doc_id=doc_id, relevance=value,
                                 func=_FUNC, name="qrels")
        values = table.rel
    else:
        table = run_from_frame(part, query_id=query_id, doc_id=doc_id, score=value,
                               func=_FUNC, name="run")
        values = table.score
    qid, docno = table.qid, table.docno
    if ignore_identical_ids:
        keep = qid != docno
        qid, docno, values = qid[keep], docno[keep], values[keep]
    # Grades are integers: float64 holds them exactly (checked when the qrels were read).
    return pd.DataFrame({_QID: qid.astype(object), _DOC: docno.astype(object),
                         _VALUE: values.astype(np.float64),
                         _IS_RUN: np.full(qid.shape[0], side == "run"),
                         _PART: _partition_of(qid, npartitions_out)})


def _normalised_meta():
    import pandas as pd

    return pd.DataFrame({_QID: np.zeros(0, dtype=object), _DOC: np.zeros(0, dtype=object),
                         _VALUE: np.zeros(0, dtype=np.float64), _IS_RUN: np.zeros(0, dtype=bool),
                         _PART: np.zeros(0, dtype=np.int64)})


def _table_meta(labels):
    import pandas as pd

    columns = {label: np.zeros(0, dtype=np.float64) for label in labels}
    columns.update({name: np.zeros(0, dtype=np.int64) for name in _COUNTS})
    columns[_SIDE] = np.zeros(0, dtype=np.int8)
    return pd.DataFrame(columns, index=pd.Index(np.zeros(0, dtype=object), name="qid"))


def _evaluate_partition(rows, *, options, missing_queries):
    """skrank.evaluate on one partition's rows (every query's rows are all here)."""
    import pandas as pd

    labels = _labels(options["metrics"])
    is_run = rows[_IS_RUN].to_numpy(dtype=bool)
    qrels_part, run_part = rows[~is_run], rows[is_run]
    qrels = Qrels(qid=_strings(qrels_part[_QID]), docno=_strings(qrels_part[_DOC]),
                  rel=qrels_part[_VALUE].to_numpy().astype(np.int64))
    run = Run(qid=_strings(run_part[_QID]), docno=_strings(run_part[_DOC]),
              score=run_part[_VALUE].to_numpy())
    judged, ranked = np.unique(qrels.qid), np.unique(run.qid)
    parts = []
    if judged.size and (missing_queries == "zero" or np.isin(judged, ranked).any()):
        # Without warnings about queries on one side only: counted over the whole data.
        qid, per_query, counts = _collection_values(qrels, run, missing_queries=missing_queries,
                                                    **options)
        columns = {label: per_query[label] for label in labels}
        columns.update({name: counts[name] for name in _COUNTS})
        columns[_SIDE] = np.where(np.isin(qid, ranked), _BOTH, _QRELS_ONLY).astype(np.int8)
        parts.append(pd.DataFrame(columns, index=pd.Index(qid.astype(object), name="qid")))
    # Queries on one side only that the evaluation left out: a row each, for the counts.
    for ids, side in ((judged[~np.isin(judged, ranked)], _QRELS_ONLY),
                      (ranked[~np.isin(ranked, judged)], _RUN_ONLY)):
        if side == _QRELS_ONLY and missing_queries == "zero" and parts:
            continue  # evaluated as empty rankings above
        if ids.size:
            columns = {label: np.full(ids.size, np.nan) for label in labels}
            columns.update({name: np.zeros(ids.size, dtype=np.int64) for name in _COUNTS})
            columns[_SIDE] = np.full(ids.size, side, dtype=np.int8)
            parts.append(pd.DataFrame(columns, index=pd.Index(ids.astype(object), name="qid")))
    return pd.concat(parts) if parts else _table_meta(labels)


def _strings(series):
    return ids_as_str(_FUNC, "ids", series.to_numpy())
