"""The TREC readers: a file to a :class:`Qrels` or a :class:`Run`, or to the
byte tables that the command line evaluates without making str arrays."""

import os

from .._validation import InvalidParameterError, _describe
from ._containers import qrels_of, run_of
from ._tokenize import QRELS, RUN, check_no_duplicates, read_tables


def read_qrels_table(path, format=None, split=None):
    """A qrels file as one table (bytes ids, ``rel``); BEIR TSV and JSON files
    (detected, or ``format``) too."""
    if format != "trec":
        from ._formats import qrels_table_of

        table = qrels_table_of(path, format, split)
        if table is not None:
            return table
    return next(read_tables(path, QRELS))


def read_run_table(path, *, compact=False, format=None):
    """A run file as one table; ``compact``: only what trec_eval reads (no rank
    column, the tag of each query's first row).  JSON runs (detected, or
    ``format``) too."""
    if format != "trec":
        from ._formats import run_table_of

        table = run_table_of(path, format)
        if table is not None:
            return table
    if compact:
        return next(read_tables(path, RUN, keep=("score",), per_row_tag=False))
    return next(read_tables(path, RUN))


def iter_run_tables(path, block_bytes):
    """A run file as tables of whole queries, one per ``block_bytes`` read (a JSON
    run: one table)."""
    from ._formats import run_table_of

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
    from ._formats import FORMATS_QRELS, _check_format

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
    from ._formats import FORMATS_RUN, _check_format

    _check_path("read_run", path)
    _check_format("read_run", format, FORMATS_RUN)
    table = read_run_table(path, format=format)
    check_no_duplicates(table)
    return run_of(table)
