"""What rank fusion reads of one run, in the run's row order: the codes of its query
and document ids, the stretches of rows of each query, each row's position in its
query's ranking by score, and whether a score ties or a document repeats.

:func:`skrank.fuse` computes it for each run it fuses.  A :class:`~skrank.io.Run`
that skrank builds itself from fresh arrays that no caller holds (the file readers,
``Run.from_dict``, ``Run.from_frame``, ``Run.from_ir_datasets``, the run forms
:func:`skrank.evaluate` takes, the output of :func:`skrank.fuse`) computes it once,
the first time a fuse reads it, and keeps it: :func:`keep_index` makes those arrays
read-only when the Run is built, so what it keeps cannot go stale.  A Run built from the caller's own arrays keeps
nothing and copies nothing: its index is computed on each fuse.  The kept indexes
are held beside the Runs (:data:`_KEPT`, by weak reference), not in their attributes:
``vars(run)``, pickles and copies of a Run are as they were.
"""

import weakref

import numpy as np

from .._engine.codes import _string_run_starts, factorize_qid
from .._engine.groups import _group_order
from .._engine.segments import segmented_argsort_desc


#: Run -> its kept RunIndex (an entry goes with its Run).
_KEPT = weakref.WeakKeyDictionary()


def _narrow(codes):
    """Non-negative integer codes as int32 when they fit (else as they are)."""
    if codes.shape[0] and codes.max() >= 2**31 - 1:
        return codes
    return codes.astype(np.int32, copy=False)


def _factorize(values):
    """``(codes, sorted distinct values)`` by the engine's factoriser."""
    codes, uniques, _ = factorize_qid("fuse", values)
    return np.asarray(codes, dtype=np.intp), np.asarray(uniques)


def factorize_ids(values, grouped=False):
    """``(codes, sorted distinct ids, lengths)`` of a 1-D array of ids.  ``grouped``:
    the rows of an id are likely contiguous (a run's query ids, in any order of
    queries): the first row of each stretch of equal strings is factorised alone,
    and unless an id turns out to have several stretches, ``codes`` are those of the
    stretches, ``lengths`` their numbers of rows (else None, and one code a row)."""
    n = values.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp), values[:0], np.zeros(0, dtype=np.intp)
    if grouped and values.dtype.kind == "U":
        starts = np.concatenate(([0], _string_run_starts(values) if n > 1 else []))
        starts = starts.astype(np.intp)
        heads, uniques = _factorize(values[starts])
        if uniques.shape[0] == starts.shape[0]:  # one stretch per id
            return heads, uniques, np.diff(np.append(starts, n))
    return (*_factorize(values), None)


class RunIndex:
    """The codes and rankings of one run (see the module's docstring).

    ``q_code``, ``q_uniques``, ``q_len``: :func:`factorize_ids` of the query ids
    (grouped: ``q_len`` is None when a query's rows are not contiguous, and then
    ``q_code`` has one code a row); ``d_code``, ``d_uniques``: of the document
    ids; ``pos`` (read on first use): each row's 0-based position in its query's
    ranking by score, descending, tied scores in row order; ``tied``: whether
    some query holds two equal scores; ``twice``: whether some query holds a
    document twice.
    """

    def __init__(self, qid, docno, score):
        self.columns = (qid, docno, score)
        q_code, self.q_uniques, self.q_len = factorize_ids(qid, grouped=True)
        self.q_code = _narrow(q_code)
        d_code, self.d_uniques, _ = factorize_ids(docno)
        self.d_code = _narrow(d_code)
        self._pos = self._tied = self._twice = self._pair_order = None

    @classmethod
    def of_parts(cls, columns, q_code, q_uniques, q_len, d_code, d_uniques, pos, tied):
        """An index whose parts are known (a fused run's), no document twice."""
        index = cls.__new__(cls)
        index.columns = columns
        index.q_code, index.q_uniques, index.q_len = q_code, q_uniques, q_len
        index.d_code, index.d_uniques = d_code, d_uniques
        index._pos, index._tied, index._twice = pos, tied, False
        index._pair_order = None
        return index

    def describes(self, qid, docno, score):
        """Whether the index is still that of these columns: the same arrays, which
        nothing can have written into (read-only, as :func:`keep_index` makes them)."""
        return (all(a is b for a, b in zip(self.columns, (qid, docno, score)))
                and not any(_writeable(a) for a in self.columns))

    def complete(self):
        """Compute what is read on first use (an index kept on a Run is complete)."""
        self.pos, self.twice  # noqa: B018 - the properties compute and keep
        for a in (self.q_code, self.q_len, self.d_code, self._pos):
            if a is not None:
                a.flags.writeable = False
        return self

    @property
    def pair_order(self):
        """The rows in the order of their (query code, document code), computed on first
        use and kept: the order of their codes in any sorted union of ids too, since
        those codes grow with these (what :func:`skrank._fusion.merged_pair_codes`
        merges)."""
        if self._pair_order is None:
            self._pair_order = np.lexsort((self.d_code, self._row_query()))
            self._pair_order.flags.writeable = False
        return self._pair_order

    def _row_query(self):
        return self.q_code if self.q_len is None else np.repeat(self.q_code, self.q_len)

    @property
    def pos(self):
        if self._pos is None:
            self._pos, self._tied = _positions(self.columns[2], self.q_code, self.q_len,
                                               self.q_uniques.shape[0])
        return self._pos

    @property
    def tied(self):
        self.pos  # noqa: B018
        return self._tied

    @property
    def twice(self):
        if self._twice is None:
            self._twice = _holds_twice(self._row_query(), self.d_code, self.q_uniques.shape[0],
                                       self.d_uniques.shape[0])
        return self._twice


def _writeable(arr):
    """Whether ``arr`` or an array it views can be written into."""
    while isinstance(arr, np.ndarray):
        if arr.flags.writeable:
            return True
        arr = arr.base
    return False


def _positions(score, q_code, q_len, n_queries):
    """``(pos, tied)`` of :class:`RunIndex`: int32 positions (int64 beyond 2**31 rows)."""
    n = score.shape[0]
    dtype = np.int32 if n < 2**31 else np.int64
    if q_len is not None:  # each query one stretch: sorted within the stretches
        order = None
        lengths = q_len
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.intp)
        boundary = offsets[1:-1] - 1  # a stretch's last row, but the run's last
        down = score[1:] <= score[:-1]
        down[boundary] = True
        if not bool(down.all()):
            order, tied = segmented_argsort_desc(score, offsets, stable=True, with_ties=True)
        else:
            same = score[1:] == score[:-1]
            same[boundary] = False
            tied = bool(same.any())
    else:
        group = _group_order(q_code, max(n_queries, 1))
        lengths = np.bincount(q_code, minlength=n_queries)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.intp)
        order, tied = segmented_argsort_desc(score[group], offsets, stable=True, with_ties=True)
        order = group[order]
    pos = np.arange(n, dtype=dtype)
    pos -= np.repeat(offsets[:-1].astype(dtype), lengths)
    if order is not None:
        ranked = np.empty(n, dtype=dtype)
        ranked[order] = pos
        pos = ranked
    return pos, bool(tied)


def _holds_twice(query, doc, n_queries, n_docs):
    """Whether some (query, document) of these codes appears on two rows."""
    n = query.shape[0]
    if n < 2:
        return False
    key = query.astype(np.int64)
    key *= n_docs
    key += doc
    if n_queries * n_docs <= 4 * n + 1024:  # a dense table of the keys
        seen = np.zeros(n_queries * n_docs, dtype=bool)
        seen[key] = True
        return int(np.count_nonzero(seen)) < n
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def keep_index(run, fresh=True):
    """``run`` made to keep its :class:`RunIndex` (computed on first use), its columns
    made read-only.

    Only for a Run that skrank has just built: ``fresh``, its columns (and the arrays
    they view) are new arrays that no caller holds (a reader's, ``from_dict``'s); else
    (a DataFrame's columns, which a converted column may be or view) the id and score
    columns are copied first.  The arrays it keeps codes of are then its own, and
    read-only, so nothing can make them stale.  Returns ``run``.
    """
    for name in run._COLUMNS:
        column = getattr(run, name)
        if not fresh and name in ("qid", "docno", "score"):
            column = column.copy()
            object.__setattr__(run, name, column)
        while isinstance(column, np.ndarray):
            column.flags.writeable = False
            column = column.base
    # Computed by the first fuse that reads it (kept_index): loading a run costs no more
    # for the callers that never fuse it.
    _KEPT[run] = None
    return run


def keep_known_index(run, **parts):
    """``run`` (built from fresh arrays) with the index of :meth:`RunIndex.of_parts`
    kept, its columns made read-only.  Returns ``run``."""
    for name in run._COLUMNS:
        getattr(run, name).flags.writeable = False
    _KEPT[run] = RunIndex.of_parts((run.qid, run.docno, run.score), **parts).complete()
    return run


def kept_index(run):
    """The index kept for ``run``, computed the first time it is asked for (None when
    the Run keeps none: one built from the caller's arrays, a copy, a pickle)."""
    if run not in _KEPT:
        return None
    kept = _KEPT[run]
    if kept is None:
        kept = _KEPT[run] = RunIndex(run.qid, run.docno, run.score).complete()
    return kept


def run_index(run):
    """The :class:`RunIndex` of ``run``: the one it keeps when it still describes the
    run's columns, else a new one (not kept)."""
    kept = kept_index(run)
    if kept is not None and kept.describes(run.qid, run.docno, run.score):
        return kept
    return RunIndex(run.qid, run.docno, run.score)
