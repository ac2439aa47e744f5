"""Many metrics over one grouping pass, with per-query results."""

import numpy as np

from ._core.checks import InvalidParameterError
from ._evaluation import (
    DEFAULT_METRICS,
    Evaluation,
    INPUTS,
    _evaluate_collection,
    _evaluation,
    _run_collection,
    _run_plan,
    check_collection_options,
)
from .io._columns import is_dask_frame
from .io._join import check_query_coverage
from ._declare import params as P
from . import _plan
from .diversity import _evaluation_parts, diversity_request
from .io._stream import QueryStream
from .io._tokenize import check_no_duplicates, empty_run_table
from .io._fields import decode


def evaluate(y_true=None, y_score=None, *, qid=None, metrics=DEFAULT_METRICS, retrieved=None,
             ties=None, no_relevant="zero", threshold=None, qrels=None, run=None,
             missing_queries=None, exclude=None, unjudged_queries=None,
             ignore_identical_ids=False, judged=None, sample_weight=None, intent_weights=None,
             n_items=None, item_popularity=None, item_features=None, history=None,
             similarity=None):
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

    intent_weights : array-like, mapping or DataFrame, default=None
        For the diversity metrics (``"alpha_ndcg@20"``, ``"err_ia@20"``, ...; see
        :mod:`skrank.diversity`, whose ``y_true`` is a label matrix of shape
        ``(n_samples, n_subtopics)``): each query's intent probabilities, as
        :func:`skrank.diversity.err_ia_score` takes them (with qrels, a mapping
        ``{query: {subtopic: weight}}`` or a DataFrame).  None: uniform.
    n_items, item_popularity, item_features, history, similarity : default=None
        For the beyond-accuracy metrics (``"novelty@10"``, ``"catalog_coverage@10"``,
        ...; see :mod:`skrank.beyond`) of the 2-D form: each row of ``y_score`` is
        a user, each column an item, and a metric reads each user's top ``k``
        items (without ``exclude``).  The catalog's size, the items' training
        popularity and feature vectors, the users' training items and a
        similarity callable, as the functions of :mod:`skrank.beyond` take them:
        a metric that needs one that is not given is an error (never guessed from
        the test data).  Per-user metrics (novelty, intra-list diversity,
        serendipity) give one value per user (NaN where undefined) and their mean
        over the users where defined; collection-level ones (catalog coverage,
        Gini index) NaN per user and their one value in ``mean``.

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

            return Evaluation(*_evaluation_parts(
                func, qrels, run, metrics, ties=ties, no_relevant=no_relevant,
                threshold=threshold, missing_queries=missing_queries,
                unjudged_queries=unjudged_queries, ignore_identical_ids=ignore_identical_ids,
                intent_weights=intent_weights))
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
    extra = dict(intent_weights=intent_weights, n_items=n_items,
                 item_popularity=item_popularity, item_features=item_features,
                 history=history, similarity=similarity)
    table, counts = _run_plan(func, metrics, options,
                              (y_true, y_score, qid, retrieved, exclude, sample_weight),
                              judged, False, extra={k: v for k, v in extra.items()
                                                    if v is not None})
    return _evaluation(func, table.qid, table.columns, counts, table.weights)


evaluate.__doc__ = P.fill_options(evaluate.__doc__, P.EVALUATE_OPTIONS.values())


def _evaluate_stream(qrels, run, *, block_bytes, metrics, options, missing_queries=None):
    """:func:`evaluate` of a qrels table and a run read one block of whole queries at
    a time (``run``: a path or a binary file; the command line's ``--stream`` with
    skrank's names).  Each block is joined and executed as ``evaluate(qrels=,
    run=)`` would the whole run, so the values are the same; memory holds the
    qrels, one block and the per-query values.  Raises
    :class:`skrank.io._stream.NotGroupedError` when the run is not grouped by query."""
    from types import SimpleNamespace

    func = "evaluate"
    check_collection_options(func, missing_queries, "skip", False)
    check_no_duplicates(qrels, "in qrels")
    stream = QueryStream(qrels, run, block_bytes)
    index = stream.index
    _plan.resolve(func, metrics, trec=True, inputs=INPUTS,
                  defaults=options.defaults)  # bad names fail first
    parts = []

    def evaluate_block(sub_qrels, block, missing):
        # (the policies for queries on one side only are applied to the whole run below)
        parts.append(_run_collection(func, metrics, sub_qrels, block, options,
                                     missing_queries=missing, check_coverage=False))

    for _, sub_qrels, block in stream:
        evaluate_block(sub_qrels, block, "skip")
    missing = stream.missing()
    # The policies for queries on one side only, on the whole run's queries.
    check_query_coverage(func, SimpleNamespace(qid=decode(index.qids)),
                         SimpleNamespace(qid=decode(stream.ranked)), missing_queries, None)
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
