"""A run read one block of whole queries at a time, matched to the qrels' queries: the
one streaming loop of ``skrank evaluate`` (``--stream``), for trec_eval's measures
and skrank's names alike (:class:`QueryStream`).  Memory holds the qrels, one block
of the run and what the caller keeps of each block."""

import shlex

import numpy as np

from ._containers import factorize_ids
from ._fields import decode
from ._read import iter_run_tables
from ._tokenize import Table, source_name

_FUNC = "evaluate"


class NotGroupedError(ValueError):
    """A streamed run whose lines are not grouped by query."""


def grouped_blocks(run, block_bytes, done):
    """The non-empty tables of whole queries of ``run`` (a path or a binary file),
    about ``block_bytes`` read at a time; ``done`` (a list) receives each block's
    sorted query ids.  Raises :class:`NotGroupedError` when a query comes again
    after other queries."""

    for block in iter_run_tables(run, block_bytes):
        if len(block) == 0:
            continue
        ids = block.qid_runs
        again = np.isin(ids, np.concatenate(done)) if done else np.zeros(ids.shape[0], bool)
        # A query's second run within the block counts too: the error then names the
        # first line where the run stops being grouped, whatever the block size.
        distinct, first_run, run_id = np.unique(ids, return_index=True, return_inverse=True)
        again |= first_run[run_id.reshape(-1)] < np.arange(ids.shape[0])
        if again.any():
            i = int(np.argmax(again))
            row = int(block.run_lengths[:i].sum())
            raise NotGroupedError(
                f"{block.name}:{block.line_of(row)}: the run is not grouped by query: query "
                f"{str(decode(ids[i:i + 1])[0])!r} comes again after other queries. Streaming "
                f"(--stream) reads a run one block of queries at a time; sort it by query "
                f"first (e.g. {_sort_command(block.name)}), or evaluate it in memory "
                f"(--no-stream).")
        done.append(distinct)
        yield block


def _sort_command(name):
    """A shell command grouping the run ``name`` by query, each query's lines kept in
    their order (byte order, whatever the locale; decompressed first when gzip)."""
    path = name if name and not name.startswith("<") else "run"
    quoted = shlex.quote(path)
    stem = path[:-3] if path.endswith(".gz") else path
    if path.endswith(".gz"):
        return f"zcat {quoted} | LC_ALL=C sort -k1,1 -s > {shlex.quote(stem + '.sorted')}"
    return f"LC_ALL=C sort -k1,1 -s {quoted} > {shlex.quote(stem + '.sorted')}"


class QueryIndex:
    """A qrels table's rows by query: ``qids`` (sorted bytes) and the rows of any of them."""

    def __init__(self, qrels):

        self.qrels = qrels
        codes, self.qids = factorize_ids(_FUNC, qrels.qid_runs)
        row_codes = np.repeat(codes, qrels.run_lengths)
        self.counts = np.bincount(row_codes, minlength=self.qids.shape[0])
        self.starts = np.cumsum(self.counts) - self.counts
        sorted_rows = bool(np.all(row_codes[1:] >= row_codes[:-1]))
        self.order = None if sorted_rows else np.argsort(row_codes, kind="stable")

    def codes_of(self, ids):
        """The code of each id, -1 for an id without judgements."""
        pos = np.minimum(np.searchsorted(self.qids, ids), self.qids.shape[0] - 1)
        return np.where(self.qids[pos] == ids, pos, -1)

    def subset(self, codes):
        """A qrels table of the queries ``codes`` (sorted), their rows in file order."""

        counts = self.counts[codes]
        first = np.cumsum(counts) - counts
        rows = np.repeat(self.starts[codes] - first, counts) + np.arange(int(counts.sum()))
        if self.order is not None:
            rows = self.order[rows]
        q = self.qrels
        return Table(name=q.name, qid_runs=self.qids[codes], run_lengths=counts,
                     docno=q.docno[rows], numbers={"rel": q.numbers["rel"][rows]},
                     keys=q.pair_keys()[rows], checked=True)


class QueryStream:
    """``run`` (a path or a binary file) read about ``block_bytes`` at a time, each
    block matched to the judged queries of ``qrels`` (a table held in memory).

    Iterating yields ``(codes, qrels_block, run_block)`` for each block with a judged
    query: their sorted codes in :attr:`index`, the qrels rows of those queries and
    the block (whose other queries have no judgement).  Then :meth:`missing` gives
    the judged queries the run never ranked, and :attr:`ranked` every query id the
    run holds.  Raises :class:`NotGroupedError` when a query comes again after
    other queries.
    """

    def __init__(self, qrels, run, block_bytes):
        self.index = QueryIndex(qrels)
        self.run = run
        self.block_bytes = block_bytes
        self.first_block = None   # the run's first block, judged or not (its run tag)
        self._seen = np.zeros(self.index.qids.shape[0], dtype=bool)
        self._done = []           # each block's sorted query ids

    def __iter__(self):
        for block in grouped_blocks(self.run, self.block_bytes, self._done):
            if self.first_block is None:
                self.first_block = block
            codes = self.index.codes_of(block.qid_runs)
            codes = np.unique(codes[codes >= 0])
            if codes.shape[0]:
                self._seen[codes] = True
                yield codes, self.index.subset(codes), block

    def missing(self):
        """Codes of the judged queries absent from the run (read whole); an empty run
        is an error."""
        if not self._done:
            raise ValueError(f"{source_name(self.run)}: no line (an empty run file)")
        return np.flatnonzero(~self._seen)

    @property
    def ranked(self):
        """The query ids of the run (read whole), sorted."""
        return np.unique(np.concatenate(self._done))
