"""Read TREC qrels and run files, and join them into skrank's flat arrays.

The readers follow trec_eval 10 (``get_qrels.c`` and ``get_trec_results.c``):

* fields are separated by any whitespace;
* a line whose first non-blank character is ``#`` is a comment, and blank
  lines are skipped; a ``#`` *inside* a field (``CR#93E-1860``) is part of it;
* in a run, the ``Q0`` and ``rank`` columns are read but trec_eval ignores
  them, and tokens after the run tag are ignored;
* a qrels line has exactly four fields ``qid iter docno rel`` (``iter`` is
  ignored) and ``rel`` is an integer; ``rel < 0`` means "in the pool but
  unjudged" and is kept as it is.

Unlike trec_eval, a non-numeric ``rel``, ``score`` or ``rank`` is an error
(trec_eval reads it as 0 with ``atof``/``atol``), as is a NaN score and a
duplicate ``(qid, docno)`` pair.

Both readers accept plain or gzip-compressed files (detected from the magic
bytes, not the file name) and parse without a Python loop per line, so a
10-million-line run takes seconds.

:func:`join_qrels_run` turns a :class:`Qrels` and a :class:`Run` into the
``y_true, y_score, qid, retrieved`` arrays the skrank metrics take, in
trec_eval's ranking order.

The package: ``_tokenize`` (bytes to columns, piece by piece; the pair hash and
the one duplicate check), ``_containers`` (the public tables), ``_read`` (the
readers) and ``_join`` (one factorisation of the query ids, one match, one
ordering).  The command line evaluates the byte tables of ``_tokenize``
directly, without str arrays.
"""

from ._containers import Qrels, Run, TrecArrays
from ._join import join_qrels_run
from ._read import read_qrels, read_run
from ._external import official_measures

__all__ = [
    "Qrels",
    "Run",
    "TrecArrays",
    "join_qrels_run",
    "official_measures",
    "read_qrels",
    "read_run",
]
