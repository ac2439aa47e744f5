"""The public tables of :mod:`skrank.io`: :class:`Qrels`, :class:`Run` and
:class:`TrecArrays` (numpy columns, str ids), and their conversions to the
byte tables the join reads."""

from dataclasses import dataclass

import numpy as np

from .._engine.codes import factorize_qid
from ._columns import (
    qrels_columns,
    qrels_columns_from_mapping,
    rank_in_query,
    run_columns,
    run_columns_from_mapping,
)
from .._core.checks import _check_length
from ._tokenize import Table
from ._fields import decode, str_array
from ._external import qrels_from_ir_datasets, run_from_ir_datasets
from ._run_index import keep_index


def factorize_ids(func, ids):
    """``(codes, sorted distinct ids)`` by the engine's one factoriser."""
    codes, uniques, _ = factorize_qid(func, ids)
    return codes, uniques


def _str_array(cls, name, value):
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(
            f"{cls}: {name} must be a 1-D array. Got an array of shape {arr.shape} instead."
        )
    if arr.dtype.kind == "U":
        return arr
    if arr.dtype.kind == "S":
        return decode(arr)
    if arr.size == 0:
        return np.zeros(0, dtype="U1")
    if arr.dtype.kind == "O":  # long ids stay objects: memory as their total length
        return str_array([v if isinstance(v, str) else str(v) for v in arr.tolist()])
    return arr.astype(str)


def _num_array(cls, name, value, dtype):
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(
            f"{cls}: {name} must be a 1-D array. Got an array of shape {arr.shape} instead."
        )
    if arr.size == 0:
        return np.zeros(0, dtype=dtype)
    if np.dtype(dtype).kind == "i":
        if arr.dtype.kind not in "iub":
            if arr.dtype.kind != "f" or not np.all(np.isfinite(arr) & (arr == np.round(arr))):
                raise ValueError(
                    f"{cls}: {name} must hold integers. Got an array of dtype {arr.dtype} instead."
                )
    elif arr.dtype.kind not in "iubf":
        raise ValueError(
            f"{cls}: {name} must hold numbers. Got an array of dtype {arr.dtype} instead."
        )
    if np.dtype(dtype).kind == "i" and arr.dtype.kind in "uf" and (
            arr.max() >= 2 ** 63 or arr.min() < -2 ** 63):  # would wrap around in int64
        raise ValueError(
            f"{cls}: {name} must hold integers between -2**63 and 2**63 - 1. Got "
            f"{arr.max() if arr.max() >= 2 ** 63 else arr.min()} instead.")
    return arr.astype(dtype, copy=False)


def _pandas(cls):
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - pandas is optional
        raise ImportError(f"{cls}.to_pandas() requires pandas: pip install pandas") from exc
    return pd


class _Columns:
    """Shared behaviour of the column tables below: length and DataFrame export."""

    _COLUMNS = ()

    def __len__(self):
        return self.qid.shape[0]

    def _n_queries(self):
        return factorize_ids(type(self).__name__, self.qid)[1].shape[0]

    def to_pandas(self):
        """Return the table as a :class:`pandas.DataFrame`, one column per attribute."""
        pd = _pandas(type(self).__name__)
        return pd.DataFrame({name: getattr(self, name) for name in self._COLUMNS})


@dataclass(frozen=True, eq=False, repr=False)
class Qrels(_Columns):
    """Relevance judgements read from a TREC qrels file, one row per line.

    Parameters
    ----------
    qid : array-like of str of shape (n_judgements,)
        Query ids.
    docno : array-like of str of shape (n_judgements,)
        Document ids.
    rel : array-like of int of shape (n_judgements,)
        Relevance levels. A negative level means "in the pool but unjudged".

    Attributes
    ----------
    qid, docno : ndarray of str
        Query and document ids (dtype ``<U...``; object, of ``str``, when
        one id is long next to the others: see the input rules), in file order.
    rel : ndarray of int64
        Relevance levels, in file order.

    See Also
    --------
    read_qrels : Read a qrels file.

    Examples
    --------
    >>> from skrank.io import Qrels
    >>> qrels = Qrels(qid=["q1", "q1"], docno=["d1", "d2"], rel=[1, 0])
    >>> len(qrels)
    2
    >>> qrels.rel
    array([1, 0])
    """

    _COLUMNS = ("qid", "docno", "rel")

    qid: np.ndarray
    docno: np.ndarray
    rel: np.ndarray

    def __post_init__(self):
        name = type(self).__name__
        object.__setattr__(self, "qid", _str_array(name, "qid", self.qid))
        object.__setattr__(self, "docno", _str_array(name, "docno", self.docno))
        object.__setattr__(self, "rel", _num_array(name, "rel", self.rel, np.int64))
        _check_length(name, [("qid", self.qid), ("docno", self.docno), ("rel", self.rel)])

    def __repr__(self):
        n_queries = self._n_queries()
        return f"Qrels(n_judgements={len(self)}, n_queries={n_queries})"

    @classmethod
    def from_frame(cls, frame, *, query_id="query_id", doc_id="doc_id",
                   relevance="relevance"):
        """Judgements from a pandas (or polars) DataFrame, one row per judged document.

        Parameters
        ----------
        frame : DataFrame
            The ground truth, e.g. a recommender's test interactions.
        query_id, doc_id : str, default="query_id", "doc_id"
            Columns of the query (user, question) and document (item, chunk)
            ids; ints or strings (compared as strings with the run's ids).
        relevance : str or None, default="relevance"
            Column of integer relevance grades (e.g. ``"rating"``); None when
            every row is a relevant document (grade 1).

        Returns
        -------
        qrels : Qrels

        Examples
        --------
        >>> import pandas as pd
        >>> from skrank.io import Qrels
        >>> test = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 11, 10],
        ...                      "rating": [5, 3, 4]})
        >>> qrels = Qrels.from_frame(test, query_id="user_id", doc_id="item_id",
        ...                          relevance="rating")
        >>> qrels.qid, qrels.rel
        (array(['1', '1', '2'], dtype='<U1'), array([5, 3, 4]))
        """
        return cls(*qrels_columns(frame, query_id=query_id, doc_id=doc_id, relevance=relevance))

    @classmethod
    def from_dict(cls, mapping):
        """Judgements from ``{query: {doc: grade}}`` (pytrec_eval, ranx) or
        ``{query: {doc, ...}}`` / ``{query: [doc, ...]}`` (relevant documents, grade 1).

        Parameters
        ----------
        mapping : dict
            Query id -> the judged documents, in one of the forms above.

        Returns
        -------
        qrels : Qrels

        Examples
        --------
        >>> from skrank.io import Qrels
        >>> Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d7"}}).rel
        array([2, 0, 1])
        """
        return cls(*qrels_columns_from_mapping(mapping))

    @classmethod
    def from_ir_datasets(cls, dataset):
        """Judgements of an ir_datasets dataset (its ``qrels_iter()``).

        Parameters
        ----------
        dataset : ir_datasets dataset or str
            The dataset object, or its id (``"beir/scifact/test"``), which
            ir_datasets loads (downloading the data on first use).

        Returns
        -------
        qrels : Qrels
            The dataset's grades as they are (negative ones included), read
            by field name (``query_id``, ``doc_id``, ``relevance``: qrels
            tuples differ between datasets).  ir_datasets keeps the relevance
            threshold of its official measures in their text: see
            :func:`skrank.io.official_measures`.

        Examples
        --------
        >>> from collections import namedtuple
        >>> from skrank.io import Qrels
        >>> TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
        >>> class Dataset:   # stands in for ir_datasets.load("...")
        ...     def qrels_iter(self):
        ...         return iter([TrecQrel("1", "d1", 2, "0"), TrecQrel("1", "d2", -1, "0")])
        >>> Qrels.from_ir_datasets(Dataset()).rel
        array([ 2, -1])
        """

        qid, docno, rel = qrels_from_ir_datasets(dataset)
        return cls(qid=qid, docno=docno, rel=rel)


@dataclass(frozen=True, eq=False, repr=False)
class Run(_Columns):
    """Retrieval results read from a TREC run file, one row per line.

    Parameters
    ----------
    qid : array-like of str of shape (n_rows,)
        Query ids.
    docno : array-like of str of shape (n_rows,)
        Document ids.
    score : array-like of float of shape (n_rows,)
        Retrieval scores, higher first. trec_eval ranks by this column.
    rank : array-like of int of shape (n_rows,), default=None
        The rank column of the file, which trec_eval ignores. None gives
        1, 2, ... within each query in input order.
    tag : array-like of str of shape (n_rows,) or str, default=""
        The run tag of each row (one string is repeated).

    Attributes
    ----------
    qid, docno, tag : ndarray of str
        Query ids, document ids and run tags (dtype ``<U...``; object, of
        ``str``, when one id is long next to the others), in file order.
    score : ndarray of float64
        Scores, in file order.
    rank : ndarray of int64
        Ranks as written in the file, in file order.

    Notes
    -----
    A Run that skrank builds itself (``read_run``, ``Run.from_dict``,
    ``Run.from_frame``, ``Run.from_ir_datasets``, :func:`skrank.fuse`) owns
    its columns and makes them read-only: it keeps the codes of its ids and
    each query's order by score, which :func:`skrank.fuse` reads instead of
    computing them again on every call.  To change a column, build a new Run
    (``Run(qid=run.qid, docno=run.docno, score=new_scores)``).  A Run built
    from your own arrays, as above, keeps nothing and neither copies nor
    locks them.

    See Also
    --------
    read_run : Read a run file.

    Examples
    --------
    >>> from skrank.io import Run
    >>> run = Run(qid=["q1", "q1", "q2"], docno=["d1", "d2", "d1"], score=[2.0, 1.0, 0.5])
    >>> len(run)
    3
    >>> run.rank
    array([1, 2, 1])
    """

    _COLUMNS = ("qid", "docno", "score", "rank", "tag")

    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    rank: np.ndarray = None
    tag: np.ndarray = ""

    def __post_init__(self):
        name = type(self).__name__
        qid = _str_array(name, "qid", self.qid)
        object.__setattr__(self, "qid", qid)
        object.__setattr__(self, "docno", _str_array(name, "docno", self.docno))
        object.__setattr__(self, "score", _num_array(name, "score", self.score, np.float64))
        if self.rank is None:
            rank = rank_in_query(qid)
        else:
            rank = _num_array(name, "rank", self.rank, np.int64)
        object.__setattr__(self, "rank", rank)
        tag = self.tag
        if isinstance(tag, str):
            tag = np.full(qid.shape[0], tag, dtype=f"U{max(len(tag), 1)}")
        object.__setattr__(self, "tag", _str_array(name, "tag", tag))
        _check_length(name, [("qid", self.qid), ("docno", self.docno), ("score", self.score),
                             ("rank", self.rank), ("tag", self.tag)])

    def __repr__(self):
        n_queries = self._n_queries()
        return f"Run(n_rows={len(self)}, n_queries={n_queries})"

    @classmethod
    def from_frame(cls, frame, *, query_id="query_id", doc_id="doc_id", score="score"):
        """Predictions from a pandas (or polars) DataFrame, one row per ranked document.

        Parameters
        ----------
        frame : DataFrame
            The predictions, e.g. a recommender's top-k lists with scores.
        query_id, doc_id : str, default="query_id", "doc_id"
            Columns of the query and document ids (ints or strings).
        score : str or None, default="score"
            Column of scores, higher first; None when the rows of each query
            are already in rank order (best first).

        Returns
        -------
        run : Run

        Examples
        --------
        >>> import pandas as pd
        >>> from skrank.io import Run
        >>> pred = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [11, 10, 12]})
        >>> Run.from_frame(pred, query_id="user_id", doc_id="item_id", score=None).score
        array([-1., -2., -1.])
        """
        return keep_index(cls(*run_columns(frame, query_id=query_id, doc_id=doc_id,
                                           score=score)), fresh=False)

    @classmethod
    def from_dict(cls, mapping):
        """Predictions from ``{query: {doc: score}}`` (pytrec_eval, ranx) or
        ``{query: [doc, ...]}`` (ranked lists, best first).

        Parameters
        ----------
        mapping : dict
            Query id -> the retrieved documents, in one of the forms above.

        Returns
        -------
        run : Run

        Examples
        --------
        >>> from skrank.io import Run
        >>> run = Run.from_dict({"q1": ["d3", "d1"], "q2": {"d7": 0.5}})
        >>> run.docno, run.score
        (array(['d3', 'd1', 'd7'], dtype='<U2'), array([2. , 1. , 0.5]))
        """
        return keep_index(cls(*run_columns_from_mapping(mapping)))

    @classmethod
    def from_ir_datasets(cls, dataset):
        """The scored documents of an ir_datasets dataset (its ``scoreddocs_iter()``,
        e.g. the BM25 run MS MARCO ships) as a run.

        Parameters
        ----------
        dataset : ir_datasets dataset or str
            The dataset object, or its id (ir_datasets downloads on first use).

        Returns
        -------
        run : Run
            Fields read by name (``query_id``, ``doc_id``, ``score``).
        """

        qid, docno, score = run_from_ir_datasets(dataset)
        return keep_index(cls(qid=qid, docno=docno, score=score))


@dataclass(frozen=True, eq=False, repr=False)
class TrecArrays(_Columns):
    """Flat per-document arrays from :func:`join_qrels_run`.

    One row per (query, document) pair in the union of the run's documents
    and the judged documents of the evaluated queries. Rows of a query are
    contiguous (queries in sorted order); within a query, the retrieved
    rows come first in trec_eval's ranking order (score descending, then
    docno descending), then the unretrieved judged documents in qrels order.

    Attributes
    ----------
    y_true : ndarray of float64
        The qrels relevance, or 0 for a retrieved document absent from the
        qrels. Negative levels are kept as they are.
    y_score : ndarray of float64
        The run score, or NaN for an unretrieved document.
    qid : ndarray of str
        Query ids.
    docno : ndarray of str
        Document ids.
    retrieved : ndarray of bool
        True for documents in the run.
    judged : ndarray of bool
        True for documents in the qrels (whatever their level, negative
        included). A retrieved document with ``judged=False`` is what
        trec_eval calls "not in the pool" (``-`` in ``relstring``), as
        opposed to a judged non-relevant one; bpref and ``unj@k`` need this.
    """

    _COLUMNS = ("qid", "docno", "y_true", "y_score", "retrieved", "judged")

    y_true: np.ndarray
    y_score: np.ndarray
    qid: np.ndarray
    docno: np.ndarray
    retrieved: np.ndarray
    judged: np.ndarray

    def __repr__(self):
        n_queries = self._n_queries()
        return (f"TrecArrays(n_rows={len(self)}, n_queries={n_queries}, "
                f"n_retrieved={int(self.retrieved.sum())})")


def qrels_table(qrels, name="join_qrels_run"):
    """The byte table of a :class:`Qrels` (or a table as it is)."""
    if isinstance(qrels, Table):
        return qrels
    return Table.of_columns(name, qrels.qid, qrels.docno, {"rel": qrels.rel})


def run_table(run, name="join_qrels_run"):
    """The byte table of a :class:`Run` (or a table as it is)."""
    if isinstance(run, Table):
        return run
    return Table.of_columns(name, run.qid, run.docno, {"score": run.score, "rank": run.rank},
                            tag=run.tag)


def qrels_of(table):
    """The :class:`Qrels` of a qrels table read from a file."""
    return Qrels(qid=decode(table.qid()), docno=decode(table.docno), rel=table.numbers["rel"])


def run_of(table):
    """The :class:`Run` of a run table read from a file (with every row's tag)."""
    return keep_index(Run(qid=decode(table.qid()), docno=decode(table.docno),
                          score=table.numbers["score"], rank=table.numbers["rank"],
                          tag=decode(table.tag)))
