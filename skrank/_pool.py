"""Which documents must be judged?  Depth-k and budgeted pooling of runs, and the
pool's files for a judge (a person or an LLM), written and read back.

One table of every run's rows, one factorisation of the ids, one sort: the
rank of each row within its run and query, the pairs of the pool, the runs
and ranks that brought each pair in, and the order in which a budget takes
them -- numpy over all runs and queries at once.
"""

import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._core.checks import (
    InvalidParameterError,
    _describe,
    caller_stacklevel,
    check_choice,
    check_k,
)
from .io._columns import is_frame
from .io._fields import as_str_ids, str_array
from ._engine.scan import positions_in_runs
from .io._read import as_run, as_qrels
from .io._containers import factorize_ids
from .io import Qrels

ORDERS = ("round_robin", "reciprocal_rank")
POOL_COLUMNS = ("query_id", "doc_id", "runs", "ranks")


@dataclass(frozen=True, eq=False)
class Pool:
    """Result of :func:`skrank.pool`: the (query, document) pairs to judge.

    Attributes
    ----------
    qid, docno : ndarray of str of shape (n_pairs,)
        The pairs, grouped by query (queries sorted), each query's pairs in
        the order a budget takes them (best first).
    runs : tuple of str
        The pooled runs' names.
    ranks : ndarray of int64 of shape (n_pairs, n_runs)
        The rank (1-based, by score as trec_eval ranks) at which each run
        retrieved each pair within the pool depth; 0 where it did not.
    relevance : ndarray of int64 of shape (n_pairs,) or None
        The judge's grades, once :meth:`judge` gave them or a judged file was
        read back (:func:`skrank.judging.read_pool`); None before.
    """

    qid: np.ndarray
    docno: np.ndarray
    runs: tuple
    ranks: np.ndarray
    relevance: np.ndarray = None

    def __len__(self):
        return int(self.qid.shape[0])

    def __repr__(self):
        n_queries = np.unique(self.qid).shape[0]
        judged = "" if self.relevance is None else ", judged"
        return f"Pool(n_pairs={len(self)}, n_queries={n_queries}, runs={list(self.runs)}{judged})"

    def retrieved_by(self):
        """For each pair, the names of the runs that retrieved it, best rank first."""
        names = np.asarray(self.runs, dtype=object)
        order = np.argsort(np.where(self.ranks > 0, self.ranks, np.iinfo(np.int64).max), axis=1,
                           kind="stable")
        return [names[o[r[o] > 0]].tolist() for o, r in zip(order, self.ranks)]

    def to_pandas(self):
        """One row per pair: ``query_id, doc_id``, a ``rank_<run>`` column per run
        (0: not retrieved within the depth) and ``relevance`` once judged."""
        import pandas as pd

        frame = pd.DataFrame({"query_id": self.qid, "doc_id": self.docno})
        for j, name in enumerate(self.runs):
            frame[f"rank_{name}"] = self.ranks[:, j]
        if self.relevance is not None:
            frame["relevance"] = self.relevance
        return frame

    def judge(self, judge):
        """The pool with ``relevance`` given by ``judge(query_id, doc_id) -> int``.

        Parameters
        ----------
        judge : callable
            ``judge(query_id, doc_id) -> int``, called once per pair in the pool's
            order (a person's form, an LLM prompt); it must return an integer grade.

        Returns
        -------
        pool : Pool
            A new pool, the same pairs with their ``relevance``.
        """
        func = "Pool.judge"
        if not callable(judge):
            raise InvalidParameterError(f"{func}: judge must be a function (query_id, doc_id) "
                                        f"-> grade. Got {_describe(judge)} instead.")
        grades = [judge(q, d) for q, d in zip(self.qid.tolist(), self.docno.tolist())]
        bad = [(q, d, g) for q, d, g in zip(self.qid.tolist(), self.docno.tolist(), grades)
               if isinstance(g, bool) or not isinstance(g, (int, np.integer))]
        if bad:
            q, d, g = bad[0]
            raise ValueError(f"{func}: judge must return an integer grade. Got {g!r} for query "
                             f"{q!r}, document {d!r} ({len(bad)} such pair(s)).")
        return Pool(self.qid, self.docno, self.runs, self.ranks,
                    np.asarray(grades, dtype=np.int64).reshape(-1))

    def to_qrels(self):
        """The judged pairs as :class:`skrank.io.Qrels` (needs ``relevance``)."""

        if self.relevance is None:
            raise ValueError("Pool.to_qrels: the pool has no relevance yet. Judge it first "
                             "(Pool.judge, or write it, judge the file and read it back).")
        return Qrels(qid=self.qid, docno=self.docno, rel=self.relevance)

    def write(self, path, format=None):
        """Write the pool for a judge, as TSV or JSON Lines.

        Parameters
        ----------
        path : str or os.PathLike
        format : {"tsv", "jsonl"} or None, default=None
            None: from the extension (``.jsonl``/``.json`` is JSON Lines, else TSV).
            TSV: a header ``query_id, doc_id, runs, ranks[, relevance]`` and one
            line per pair, ``runs`` and ``ranks`` comma-separated (best rank
            first).  JSON Lines: ``{"query_id", "doc_id", "runs": {run: rank}}``
            per line.  A judge adds a ``relevance`` column (key) with integer
            grades; :func:`skrank.judging.read_pool` reads the file back.
        """
        func = "Pool.write"
        format = _format_of(func, path, format)
        names = self.retrieved_by()
        rows = []
        for i, (q, d) in enumerate(zip(self.qid.tolist(), self.docno.tolist())):
            ranks = {n: int(self.ranks[i, self.runs.index(n)]) for n in names[i]}
            rel = None if self.relevance is None else int(self.relevance[i])
            if format == "jsonl":
                row = {"query_id": q, "doc_id": d, "runs": ranks}
                if rel is not None:
                    row["relevance"] = rel
                rows.append(json.dumps(row, ensure_ascii=False))
            else:
                bad = [v for v in (q, d) if any(c in v for c in "\t\n\r")]
                bad += [n for n in ranks if any(c in n for c in "\t\n\r,")]
                if bad:
                    raise ValueError(f"{func}: ids must not hold tabs or newlines, nor run "
                                     f"names commas, in TSV. Got {bad[0]!r}; write "
                                     f"format='jsonl' instead.")
                cells = [q, d, ",".join(ranks), ",".join(str(r) for r in ranks.values())]
                if rel is not None:
                    cells.append(str(rel))
                rows.append("\t".join(cells))
        header = [] if format == "jsonl" else ["\t".join(
            POOL_COLUMNS + (("relevance",) if self.relevance is not None else ()))]
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write("\n".join(header + rows) + "\n")


def _format_of(func, path, format):
    if format is None:
        return "jsonl" if os.fspath(path).lower().endswith((".jsonl", ".json")) else "tsv"
    check_choice(func, "format", format, ("tsv", "jsonl"))
    return format


def read_pool(path, format=None):
    """Read a pool written by :meth:`Pool.write`, judged or not.

    Parameters
    ----------
    path : str or os.PathLike
    format : {"tsv", "jsonl"} or None, default=None
        None: from the extension, as :meth:`Pool.write`.

    Returns
    -------
    pool : Pool
        With ``relevance`` when the file has a ``relevance`` column (key).
        Lines whose relevance is blank (or null) were not judged: they are
        left out, with a warning that counts them.

    Examples
    --------
    >>> import os, tempfile
    >>> import skrank
    >>> from skrank.judging import read_pool
    >>> runs = {"a": {"q1": ["d1", "d2"]}, "b": {"q1": ["d3", "d1"]}}
    >>> p = skrank.pool(runs, depth=2)
    >>> path = os.path.join(tempfile.mkdtemp(), "pool.tsv")
    >>> p.write(path)
    >>> print(open(path).read().replace("\\t", " | "), end="")
    query_id | doc_id | runs | ranks
    q1 | d1 | a,b | 1,2
    q1 | d3 | b | 1
    q1 | d2 | a | 2
    >>> read_pool(path).docno.tolist()
    ['d1', 'd3', 'd2']
    """
    func = "read_pool"
    format = _format_of(func, path, format)
    name = os.fspath(path)
    with open(name, encoding="utf-8") as f:
        lines = f.read().splitlines()
    read = _pool_records_jsonl if format == "jsonl" else _pool_records_tsv
    records, has_rel = read(name, lines)
    names = list(dict.fromkeys(r for rec in records for r in rec[3]))
    relevance = None
    if has_rel:
        records, relevance = _judged_records(func, name, records)
    ranks = np.zeros((len(records), len(names)), dtype=np.int64)
    index = {n: j for j, n in enumerate(names)}
    for i, rec in enumerate(records):
        for run, rank in rec[3].items():
            ranks[i, index[run]] = rank
    qid = str_array([rec[1] for rec in records])
    docno = str_array([rec[2] for rec in records])
    return Pool(qid, docno, tuple(names), ranks, relevance)


def _pool_records_jsonl(name, lines):
    """(records, whether a relevance field is present) of a JSONL pool file; a record is
    (line number, qid, docno, {run: rank}, relevance or None)."""
    records, has_rel = [], False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            q, d, ranks = str(row["query_id"]), str(row["doc_id"]), dict(row.get("runs", {}))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            raise ValueError(f"{name}:{number}: expected a JSON object with query_id, doc_id "
                             f"and runs. Got {line[:80]!r}") from None
        has_rel = has_rel or "relevance" in row
        records.append((number, q, d, ranks, row.get("relevance")))
    return records, has_rel


def _pool_records_tsv(name, lines):
    """(records, whether a relevance column is present) of a TSV pool file; a record is
    (line number, qid, docno, {run: rank}, relevance text, "" when blank, or None)."""
    records = []
    if not lines:
        raise ValueError(f"{name}: no line (an empty pool file)")
    header = lines[0].split("\t")
    if header[:4] != list(POOL_COLUMNS) or header[4:] not in ([], ["relevance"]):
        raise ValueError(f"{name}:1: the header of a pool file must be "
                         f"{chr(9).join(POOL_COLUMNS)!r}, then optionally 'relevance'. "
                         f"Got {lines[0]!r} instead.")
    has_rel = len(header) == 5
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) == 4 and has_rel:
            cells.append("")
        if len(cells) != len(header):
            raise ValueError(f"{name}:{number}: expected {len(header)} tab-separated "
                             f"columns. Got {line!r}")
        runs = [r for r in cells[2].split(",") if r]
        try:
            ranks = [int(r) for r in cells[3].split(",") if r]
        except ValueError:
            raise ValueError(f"{name}:{number}: ranks must be comma-separated integers. "
                             f"Got {cells[3]!r}") from None
        if len(runs) != len(ranks):
            raise ValueError(f"{name}:{number}: runs and ranks must have as many entries. "
                             f"Got {cells[2]!r} and {cells[3]!r}")
        records.append((number, cells[0], cells[1], dict(zip(runs, ranks)),
                        cells[4].strip() if has_rel else None))
    return records, has_rel


def _judged_records(func, name, records):
    """The records with a relevance (those without one counted in a warning) and their
    integer grades."""
    judged, grades = [], []
    for number, _, _, _, rel in records:
        if rel is None or rel == "":
            judged.append(False)
            grades.append(0)
            continue
        try:
            grade = int(rel) if not isinstance(rel, bool) else None
            if grade is None or (isinstance(rel, float) and rel != grade):
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(f"{name}:{number}: relevance must be an integer grade. Got "
                             f"{rel!r}") from None
        judged.append(True)
        grades.append(grade)
    judged = np.asarray(judged, dtype=bool)
    if not judged.all():
        warnings.warn(f"{func}: {int((~judged).sum())} of {len(records)} pairs of {name} have "
                      f"no relevance (not judged); they are left out.", UserWarning,
                      stacklevel=caller_stacklevel())
    records = [rec for rec, keep in zip(records, judged) if keep]
    relevance = np.asarray(grades, dtype=np.int64)[judged]
    return records, relevance


# --------------------------------------------------------------------------------------
# pooling
# --------------------------------------------------------------------------------------


def _id_kind(value):
    """``"int"`` or ``"str"``: the kind of query ids an input holds before skrank
    compares them as strings (None when it cannot tell)."""

    if isinstance(value, Mapping):
        kinds = {type(k) for k in value}
        if kinds and all(issubclass(k, (int, np.integer)) for k in kinds):
            return "int"
        return "str" if kinds and all(issubclass(k, str) for k in kinds) else None
    if is_frame(value):
        try:
            column = value["query_id"]
        except (KeyError, TypeError):
            return None
        dtype = column.dtype
        if callable(getattr(dtype, "is_integer", None)):   # polars
            return "int" if dtype.is_integer() else "str"
        return "int" if getattr(dtype, "kind", "O") in "iu" else "str"
    return "str"   # files and Run objects hold str ids


def _runs_table(func, runs):
    """Every run as one table: names, and (run index, qid, docno, score) rows."""

    if not isinstance(runs, Mapping) or len(runs) == 0:
        raise InvalidParameterError(
            f"{func}: runs must be a non-empty mapping of run name -> run (a Run, a TREC or "
            f"JSON run file, a DataFrame, a dict {{query: {{doc: score}}}} or of ranked "
            f"lists). Got {_describe(runs)} instead.")
    names = [str(n) for n in runs]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"{func}: run names must be distinct as strings. Got "
                                    f"{list(runs)!r} instead.")
    kinds = {n: _id_kind(v) for n, v in zip(names, runs.values())}
    seen = {k for k in kinds.values() if k is not None}
    if len(seen) > 1:
        by_kind = {k: [n for n, v in kinds.items() if v == k] for k in sorted(seen)}
        raise InvalidParameterError(
            f"{func}: every run must have query ids of one type. Got int ids in runs "
            f"{by_kind['int']} and str ids in runs {by_kind['str']} instead. Convert the ids "
            f"(e.g. str(qid)) so that the pool's pairs are those a judge sees.")
    tables = [as_run(func, value, f"runs[{name!r}]") for name, value in zip(names, runs.values())]
    sizes = [len(t) for t in tables]
    run_index = np.repeat(np.arange(len(tables)), sizes)
    qid = np.concatenate([t.qid for t in tables]) if tables else np.zeros(0, "U1")
    docno = np.concatenate([t.docno for t in tables])
    score = np.concatenate([t.score for t in tables])
    return names, run_index, qid, docno, score


def pool(runs, *, depth=100, qrels=None, budget=None, order="round_robin"):
    """The (query, document) pairs the runs retrieve that still need a judgement.

    Depth-k pooling as TREC builds its pools: the union over the runs of
    each query's top ``depth`` documents (ranked by score, ties by document
    id descending, as trec_eval ranks), less the pairs ``qrels`` already
    judges; with ``budget``, at most that many pairs per query, taken in
    ``order``.

    Parameters
    ----------
    runs : mapping of str -> run
        Run name -> a :class:`skrank.io.Run`, a TREC or JSON run file, a
        DataFrame (``query_id, doc_id, score``), a dict ``{query: {doc:
        score}}`` or a dict of ranked lists ``{query: [doc, ...]}``.  Query
        ids of the runs must be of one type (all int or all str).
    depth : int or None, default=100
        Ranks of each run pooled per query; None pools every retrieved document.
    qrels : qrels or None, default=None
        Judgements already made (any form :func:`skrank.evaluate` takes):
        their pairs are left out of the pool, whatever their grade.
    budget : int or None, default=None
        At most this many new pairs per query, the first ones in ``order``.
    order : {"round_robin", "reciprocal_rank"}, default="round_robin"
        The order in which a query's pairs are listed and a budget takes
        them. ``"round_robin"``: rank 1 of each run (in the order of
        ``runs``), then rank 2 of each, ... skipping pairs already taken
        (each pair at its smallest ``(rank, run)``). ``"reciprocal_rank"``:
        by the mean over the runs of ``1 / rank`` (0 where a run did not
        retrieve it within ``depth``), highest first, ties in round-robin
        order -- documents that several runs rank high come first.

    Returns
    -------
    pool : Pool
        The pairs with the runs and ranks that retrieved each; ``write()``
        them for a judge, ``judge()`` them with a function, ``to_qrels()``.

    Examples
    --------
    >>> import skrank
    >>> runs = {"bm25": {"q1": ["d1", "d2", "d3"]}, "dense": {"q1": ["d4", "d1", "d5"]}}
    >>> p = skrank.pool(runs, depth=2)
    >>> p.docno.tolist(), p.ranks.tolist()
    (['d1', 'd4', 'd2'], [[1, 2], [0, 1], [2, 0]])
    >>> skrank.pool(runs, depth=3, qrels={"q1": {"d1": 1}}, budget=2).docno.tolist()
    ['d4', 'd2']
    """
    func = "pool"
    depth = None if depth is None else check_k(func, depth, required=True, name="depth")
    budget = None if budget is None else check_k(func, budget, required=True, name="budget")
    check_choice(func, "order", order, ORDERS)
    names, run_index, qid, docno, score = _runs_table(func, runs)
    if np.isnan(score).any():
        i = int(np.flatnonzero(np.isnan(score))[0])
        raise ValueError(f"{func}: run {names[run_index[i]]!r} must have a score for every "
                         f"document. Got NaN for query {str(qid[i])!r}, document "
                         f"{str(docno[i])!r}.")
    n_runs = len(names)
    judged_q, judged_d = np.zeros(0, dtype=qid.dtype), np.zeros(0, dtype=docno.dtype)
    if qrels is not None:
        q = as_qrels(func, qrels)
        judged_q, judged_d = q.qid, q.docno
    # one factorisation of the ids of the runs and the qrels
    n_rows = qid.shape[0]
    if n_rows == 0:
        raise ValueError(f"{func}: the runs retrieve no document. Got {len(names)} empty runs.")
    q_codes, q_uniques = factorize_ids(func, np.concatenate([qid, judged_q]))
    d_codes, d_uniques = factorize_ids(func, np.concatenate([docno, judged_d]))
    n_docs = max(d_uniques.shape[0], 1)
    pair = q_codes[:n_rows].astype(np.int64) * n_docs + d_codes[:n_rows]
    # duplicate documents within a run's query are an error (as in the readers)
    run_pair = run_index.astype(np.int64) * (q_uniques.shape[0] * n_docs) + pair
    _, first_row, times = np.unique(run_pair, return_index=True, return_counts=True)
    if (times > 1).any():
        i = first_row[np.flatnonzero(times > 1)[0]]
        raise ValueError(f"{func}: run {names[run_index[i]]!r} retrieves document "
                         f"{str(docno[i])!r} twice for query {str(qid[i])!r}.")
    rank = _ranks_in_runs(run_index, q_codes[:n_rows], d_codes[:n_rows], score,
                          len(names), q_uniques.shape[0], n_docs)
    keep = np.ones(n_rows, dtype=bool) if depth is None else rank <= depth
    if judged_q.shape[0]:
        judged_pairs = q_codes[n_rows:].astype(np.int64) * n_docs + d_codes[n_rows:]
        keep &= ~np.isin(pair, judged_pairs)
    pair, rank, runs_of_rows = pair[keep], rank[keep], run_index[keep]
    pairs, where = np.unique(pair, return_inverse=True)
    where = where.reshape(-1)
    ranks = np.zeros((pairs.shape[0], n_runs), dtype=np.int64)
    ranks[where, runs_of_rows] = rank
    # each pair's round-robin position: its smallest (rank, run)
    big = np.iinfo(np.int64).max // (n_runs + 1)
    rr = np.where(ranks > 0, ranks * n_runs + np.arange(n_runs), big).min(axis=1)
    pair_query = pairs // n_docs
    if order == "round_robin":
        sequence = np.lexsort((rr, pair_query))
    else:
        with np.errstate(divide="ignore"):
            mrr = np.where(ranks > 0, 1.0 / np.maximum(ranks, 1), 0.0).mean(axis=1)
        sequence = np.lexsort((rr, -mrr, pair_query))
    if budget is not None:
        sorted_query = pair_query[sequence]
        first = np.ones(sequence.shape[0], dtype=bool)
        first[1:] = sorted_query[1:] != sorted_query[:-1]
        starts = np.flatnonzero(first)
        within = np.arange(sequence.shape[0]) - np.repeat(
            starts, np.diff(np.append(starts, sequence.shape[0])))
        sequence = sequence[within < budget]
    pairs, ranks = pairs[sequence], ranks[sequence]
    return Pool(qid=as_str_ids(q_uniques[pairs // n_docs]),
                docno=as_str_ids(d_uniques[pairs % n_docs]),
                runs=tuple(names), ranks=ranks)


def _ranks_in_runs(run_index, q_codes, d_codes, score, n_runs, n_queries, n_docs):
    """The rank of each row within its run and query: score descending, document id
    descending; one int64 key (one argsort) when it fits, else a lexsort of the four."""
    n_rows = run_index.shape[0]
    score_rank = np.unique(score, return_inverse=True)[1].reshape(-1)
    n_scores = int(score_rank.max()) + 1
    group_of_row = run_index.astype(np.int64) * n_queries + q_codes
    if (n_runs * n_queries + 1) * n_scores * n_docs < 2 ** 62:
        key = ((group_of_row * n_scores + (n_scores - 1 - score_rank)) * n_docs
               + (n_docs - 1 - d_codes))
        order_rows = np.argsort(key, kind="stable")
    else:  # pragma: no cover - huge id spaces
        order_rows = np.lexsort((-d_codes, -score, q_codes, run_index))
    group = run_index[order_rows].astype(np.int64) * n_queries + q_codes[order_rows]
    rank = np.empty(n_rows, dtype=np.int64)
    rank[order_rows] = positions_in_runs(group) + 1
    return rank
