"""The TREC readers: a file to a :class:`Qrels` or a :class:`Run`, or to the
byte tables that the command line evaluates without making str arrays."""

import os
from collections.abc import Mapping

import numpy as np

from ._columns import (
    _QRELS_FORMS,
    _RUN_FORMS,
    is_frame,
    qrels_columns,
    qrels_columns_from_mapping,
    run_columns,
    run_columns_from_mapping,
)
from .._core.checks import InvalidParameterError, _describe
from ._containers import Qrels, Run, qrels_of, run_of
from ._tokenize import QRELS, RUN, Table, check_no_duplicates, read_tables
from ._formats import (
    qrels_table_of, run_table_of, FORMATS_QRELS, _check_format, FORMATS_RUN
)


def read_qrels_table(path, format=None, split=None):
    """A qrels file as one table (bytes ids, ``rel``); BEIR TSV and JSON files
    (detected, or ``format``) too."""
    if format != "trec":

        table = qrels_table_of(path, format, split)
        if table is not None:
            return table
    return next(read_tables(path, QRELS))


def read_run_table(path, *, compact=False, format=None):
    """A run file as one table; ``compact``: only what trec_eval reads (no rank
    column, the tag of each query's first row).  JSON runs (detected, or
    ``format``) too."""
    if format != "trec":

        table = run_table_of(path, format)
        if table is not None:
            return table
    if compact:
        return next(read_tables(path, RUN, keep=("score",), per_row_tag=False))
    return next(read_tables(path, RUN))


def iter_run_tables(path, block_bytes):
    """A run file as tables of whole queries, one per ``block_bytes`` read (a JSON
    run: one table)."""

    table = run_table_of(path)
    if table is not None:
        return iter([table])
    return read_tables(path, RUN, keep=("score",), per_row_tag=False, block_bytes=block_bytes)


def _check_path(func, path):
    """A path or a file object, else an error naming the function and argument."""
    if not (hasattr(path, "read") or isinstance(path, (str, bytes, os.PathLike))):
        raise InvalidParameterError(f"{func}: path must be a path (str or os.PathLike) or a "
                                    f"file object. Got {_describe(path)} instead.")


def read_qrels(path, *, format=None, split=None):
    """Read a TREC qrels file (``qid iter docno rel`` per line), or a BEIR/MTEB one.

    Parameters
    ----------
    path : str, os.PathLike or file object
        The qrels file, plain or gzip-compressed (detected from its first
        bytes). A file object must be opened in binary mode, or in text mode
        as UTF-8.  A BEIR/MTEB folder (``queries.jsonl``, ``corpus.jsonl``,
        ``qrels/<split>.tsv``) reads ``qrels/<split>.tsv``.
    format : {"trec", "beir", "json"} or None, default=None
        ``"beir"``: BEIR/MTEB's TSV, tab-separated ``query-id, corpus-id,
        score`` after that header line (the score an integer grade);
        ``"json"``: ``{query: {doc: grade}}``.  None detects the format from
        the first bytes: ``{`` starts JSON, a first line starting
        ``query-id<TAB>`` is BEIR's header, anything else is TREC.
    split : str or None, default=None
        With a BEIR folder: the split (``"test"``, ``"dev"``); None when the
        folder has one.

    Returns
    -------
    qrels : Qrels
        The judgements in file order: ``qid`` and ``docno`` as str arrays,
        ``rel`` as int64. The ``iter`` column is ignored, as in trec_eval.

    Raises
    ------
    ValueError
        If a line does not have exactly four fields (three in a BEIR TSV,
        whose header line is required) or ``rel`` is not an integer (the
        message names the file, the line number and the line), or if a
        ``(qid, docno)`` pair is judged twice.

    Notes
    -----
    Lines whose first non-blank character is ``#`` and blank lines are
    skipped; a ``#`` inside a docno is part of it. Negative ``rel`` values
    ("in the pool but unjudged") are kept.

    Examples
    --------
    >>> import io
    >>> from skrank.io import read_qrels
    >>> qrels = read_qrels(io.BytesIO(b"# topic 301\\n301 0 d1 1\\n301 0 CR#93 -1\\n"))
    >>> qrels.docno
    array(['d1', 'CR#93'], dtype='<U5')
    >>> qrels.rel
    array([ 1, -1])
    >>> beir = read_qrels(io.BytesIO(b"query-id\\tcorpus-id\\tscore\\nq1\\tdoc7\\t2\\n"))
    >>> beir.qid, beir.docno, beir.rel
    (array(['q1'], dtype='<U2'), array(['doc7'], dtype='<U4'), array([2]))
    """

    _check_path("read_qrels", path)
    _check_format("read_qrels", format, FORMATS_QRELS)
    table = read_qrels_table(path, format, split)
    check_no_duplicates(table)
    return qrels_of(table)


def read_run(path, *, format=None):
    """Read a TREC run file (``qid Q0 docno rank score tag`` per line), or JSON results.

    Parameters
    ----------
    path : str, os.PathLike or file object
        The run file, plain or gzip-compressed (detected from its first
        bytes). A file object must be opened in binary mode, or in text mode
        as UTF-8.
    format : {"trec", "json"} or None, default=None
        ``"json"``: ``{query: {doc: score}}`` as BEIR's ``EvaluateRetrieval``
        and MTEB's saved predictions write results (rows in the file's
        order, ranks 1, 2, ... in that order; evaluation ranks by score).
        None detects JSON from a leading ``{``.

    Returns
    -------
    run : Run
        The rows in file order: ``qid``, ``docno`` and ``tag`` as str arrays,
        ``score`` as float64 and ``rank`` as int64.

    Raises
    ------
    ValueError
        If a line has fewer than six fields, or its score is not a number
        (or NaN) or its rank not an integer (the message names the file,
        the line number and the line), or if a document appears twice for
        the same query.

    Notes
    -----
    As in trec_eval, the ``Q0`` column is not checked, tokens after the tag
    are ignored, and lines whose first non-blank character is ``#`` and blank
    lines are skipped (a ``#`` inside a docno is part of it). trec_eval ranks
    documents by ``score`` and ignores ``rank``; see :func:`join_qrels_run`.

    Examples
    --------
    >>> import io
    >>> from skrank.io import read_run
    >>> run = read_run(io.BytesIO(b"301 Q0 d1 1 2.5 bm25\\n301 Q0 d2 2 1.0 bm25\\n"))
    >>> len(run)
    2
    >>> run.docno
    array(['d1', 'd2'], dtype='<U2')
    >>> run.score
    array([2.5, 1. ])
    >>> read_run(io.BytesIO(b'{"q1": {"d3": 0.9, "d1": 0.4}}')).docno
    array(['d3', 'd1'], dtype='<U2')
    """

    _check_path("read_run", path)
    _check_format("read_run", format, FORMATS_RUN)
    table = read_run_table(path, format=format)
    check_no_duplicates(table)
    return run_of(table)


# ---------------------------------------------------------------------------
# Every form evaluate() takes: files, Qrels/Run, DataFrames, dicts, ranked lists.


def qrels_from_frame(frame, **options):
    """A :class:`Qrels` from a DataFrame (see ``Qrels.from_frame``; ``func`` and ``name``
    say who asks, for the messages)."""
    return Qrels(*qrels_columns(frame, **options))


def run_from_frame(frame, **options):
    """A :class:`Run` from a DataFrame (see ``Run.from_frame``)."""
    return Run(*run_columns(frame, **options))


def qrels_from_mapping(mapping, **options):
    """A :class:`Qrels` from ``{query: {doc: grade}}`` or ``{query: {doc, ...}}``."""
    return Qrels(*qrels_columns_from_mapping(mapping, **options))


def run_from_mapping(mapping, **options):
    """A :class:`Run` from ``{query: {doc: score}}`` or ``{query: [doc, ...]}``."""
    return Run(*run_columns_from_mapping(mapping, **options))


def as_qrels(func, value, name="qrels"):
    """Any accepted ground-truth form -> :class:`~skrank.io.Qrels`."""
    if isinstance(value, Qrels):
        return value
    if isinstance(value, (str, os.PathLike)) or hasattr(value, "read"):
        return read_qrels(value)
    if is_frame(value):
        return qrels_from_frame(value, func=func, name=name)
    if isinstance(value, Mapping):
        qrels = qrels_from_mapping(value, func=func, name=name)
        return _with_empty_queries(qrels, value)
    raise TypeError(f"{func}: {name} must be {_QRELS_FORMS}. Got {_describe(value)} instead.")


#: The document of a placeholder row: no TREC file or whitespace-split line has an empty id.
_NO_DOCUMENT = ""


def _with_empty_queries(qrels, mapping):
    """A query listed with an empty set of documents (``{"q2": set()}``: judged, nothing
    relevant) is a query of the ground truth, as a TREC qrels query whose lines are all 0:
    it is kept with one placeholder row of grade 0 (a document no run ranks), so that it
    scores as the ``no_relevant`` policy says (0 by default) instead of being dropped."""
    try:
        empty = [str(q) for q, docs in mapping.items() if hasattr(docs, "__len__")
                 and len(docs) == 0]
    except TypeError:  # pragma: no cover - _flatten has already refused odd values
        return qrels
    if not empty:
        return qrels
    return Qrels(qid=np.concatenate([qrels.qid, np.array(empty)]),
                 docno=np.concatenate([qrels.docno, np.full(len(empty), _NO_DOCUMENT)]),
                 rel=np.concatenate([qrels.rel, np.zeros(len(empty), dtype=qrels.rel.dtype)]))


def as_run(func, value, name="run"):
    """Any accepted prediction form -> :class:`~skrank.io.Run`."""
    if isinstance(value, Run):
        return value
    if isinstance(value, (str, os.PathLike)) or hasattr(value, "read"):
        return read_run(value)
    if is_frame(value):
        return run_from_frame(value, func=func, name=name)
    if isinstance(value, Mapping):
        return run_from_mapping(value, func=func, name=name)
    raise TypeError(f"{func}: {name} must be {_RUN_FORMS}. Got {_describe(value)} instead.")


def drop_identical_ids(run):
    """The run without rows whose document id equals their query id (BEIR's
    ``ignore_identical_ids``)."""
    if isinstance(run, Table):  # a byte table (files read by evaluate)
        return run.take(np.flatnonzero(run.qid() != run.docno))
    keep = run.qid != run.docno
    if keep.all():
        return run
    return Run(qid=run.qid[keep], docno=run.docno[keep], score=run.score[keep],
               rank=run.rank[keep], tag=run.tag[keep])
