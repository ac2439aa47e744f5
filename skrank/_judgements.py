"""Judgements from several sources (people, an LLM, ...) with their provenance, and
the rules that turn them into one qrels."""

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._core.checks import InvalidParameterError, _describe, caller_stacklevel, check_choice
from .io._fields import pair_codes, split_pair_codes
from .io._read import as_qrels
from .io import Qrels

RULES = ("prefer", "majority")


@dataclass(frozen=True, eq=False)
class Judgements:
    """Result of :func:`skrank.judging.merge_qrels`: every source's judgements.

    Attributes
    ----------
    qid, docno : ndarray of str of shape (n_rows,)
    rel : ndarray of int64 of shape (n_rows,)
    source : ndarray of str of shape (n_rows,)
        The provenance of each row (``"human"``, ``"llm"``, ...).
    sources : tuple of str
        The sources in the order given (the default preference order).
    """

    qid: np.ndarray
    docno: np.ndarray
    rel: np.ndarray
    source: np.ndarray
    sources: tuple

    def __len__(self):
        return int(self.qid.shape[0])

    def __repr__(self):
        counts = {s: int((self.source == s).sum()) for s in self.sources}
        return f"Judgements({counts})"

    def to_pandas(self):
        """One row per judgement: ``query_id, doc_id, relevance, source``."""
        import pandas as pd

        return pd.DataFrame({"query_id": self.qid, "doc_id": self.docno, "relevance": self.rel,
                             "source": self.source})

    def _pairs(self, rows):
        """The distinct (query, document) pairs of ``rows`` as (codes, query ids,
        document ids; see :func:`skrank.io._fields.pair_codes`), and each row's index
        into the codes."""
        codes, qids, docnos = pair_codes(self.qid[rows], self.docno[rows])
        uniques, where = np.unique(codes, return_inverse=True)
        return (uniques, qids, docnos), where

    def conflicts(self, sources=None):
        """Number of (query, document) pairs that the chosen sources grade differently.

        Parameters
        ----------
        sources : str, list of str or None, default=None
            The sources to compare; None: all.

        Returns
        -------
        n_conflicts : int
            The pairs with two different grades or more among those sources.
        """
        rows = self._rows("Judgements.conflicts", sources)
        _, where = self._pairs(rows)
        where = where.reshape(-1)
        rel = self.rel[rows]
        n = int(where.max()) + 1 if where.shape[0] else 0
        low = np.full(n, np.iinfo(np.int64).max)
        high = np.full(n, np.iinfo(np.int64).min)
        np.minimum.at(low, where, rel)
        np.maximum.at(high, where, rel)
        return int((low != high).sum())

    def _rows(self, func, sources):
        if sources is None:
            return np.arange(len(self))
        chosen = [sources] if isinstance(sources, str) else list(sources)
        unknown = [s for s in chosen if s not in self.sources]
        if unknown or not chosen:
            raise InvalidParameterError(f"{func}: sources must be None (all) or some of "
                                        f"{list(self.sources)}. Got {_describe(sources)} instead.")
        return np.flatnonzero(np.isin(self.source, chosen))

    def to_qrels(self, sources=None, *, rule="prefer", prefer=None):
        """One grade per (query, document) pair, from the chosen sources.

        Parameters
        ----------
        sources : str, list of str or None, default=None
            The sources to use; None: all.  One source gives its qrels as they are.
        rule : {"prefer", "majority"}, default="prefer"
            When the sources grade a pair differently: ``"prefer"`` takes the
            grade of the first source in ``prefer`` that judged the pair;
            ``"majority"`` the grade most sources gave, a tie going to the
            tied grade of the first source in ``prefer``.
        prefer : list of str or None, default=None
            The preference order; None: the order the sources were merged in.

        Returns
        -------
        qrels : skrank.io.Qrels
            Pairs sorted by query, then document.  A warning counts the pairs
            whose grades disagree and names the rule that settled them.
        """

        func = "Judgements.to_qrels"
        check_choice(func, "rule", rule, RULES)
        rows = self._rows(func, sources)
        order = list(self.sources) if prefer is None else (
            [prefer] if isinstance(prefer, str) else list(prefer))
        if prefer is not None and (set(order) - set(self.sources) or len(set(order)) != len(order)):
            raise InvalidParameterError(f"{func}: prefer must list some of the sources "
                                        f"{list(self.sources)}, each once. Got "
                                        f"{_describe(prefer)} instead.")
        order += [s for s in self.sources if s not in order]
        names, source_code = np.unique(self.source[rows], return_inverse=True)
        priority = np.array([order.index(s) for s in names.tolist()],   # per source, not row
                            dtype=np.int64)[source_code.reshape(-1)]
        uniques, where = self._pairs(rows)
        where = where.reshape(-1)
        rel = self.rel[rows]
        n_conflicts = self.conflicts(sources)
        if rule == "prefer":
            pick = np.lexsort((priority, where))
        else:
            # votes per (pair, grade); among the most voted grades of a pair, the one
            # whose best-placed source comes first in ``prefer``
            keys, inverse, votes = np.unique(np.column_stack([where, rel]), axis=0,
                                             return_inverse=True, return_counts=True)
            inverse = inverse.reshape(-1)
            best = np.full(keys.shape[0], np.iinfo(np.int64).max)
            np.minimum.at(best, inverse, priority)
            chosen = np.lexsort((best, -votes, keys[:, 0]))
            first = np.ones(chosen.shape[0], dtype=bool)
            first[1:] = keys[chosen[1:], 0] != keys[chosen[:-1], 0]
            winners = keys[chosen[first]]
            if n_conflicts:
                self._warn(func, n_conflicts, uniques[0].shape[0], rule, order)
            return self._qrels(Qrels, uniques, winners[:, 0], winners[:, 1])
        first = np.ones(pick.shape[0], dtype=bool)
        first[1:] = where[pick[1:]] != where[pick[:-1]]
        taken = pick[first]
        if n_conflicts:
            self._warn(func, n_conflicts, uniques[0].shape[0], rule, order)
        return self._qrels(Qrels, uniques, where[taken], rel[taken])

    @staticmethod
    def _qrels(Qrels, pairs, index, grades):
        codes, qids, docnos = pairs
        qid, docno = split_pair_codes(codes[index], qids, docnos)
        return Qrels(qid=qid, docno=docno, rel=np.asarray(grades, dtype=np.int64))

    @staticmethod
    def _warn(func, n, total, rule, order):
        how = (f"the grade of the first source in {order}" if rule == "prefer"
               else f"the most frequent grade (ties: the first source in {order})")
        warnings.warn(f"{func}: {n} of {total} judged pairs have conflicting grades across "
                      f"sources; each takes {how} (rule={rule!r}).", UserWarning,
                      stacklevel=caller_stacklevel())


def merge_qrels(sources):
    """Judgements of several sources in one table, with their provenance.

    Parameters
    ----------
    sources : mapping of str -> qrels
        Source name (``"human"``, ``"llm"``, ...) -> its judgements, in any
        form :func:`skrank.evaluate` takes (a :class:`skrank.io.Qrels`, a
        file, a DataFrame, a dict ``{query: {doc: grade}}``).  A source may
        not judge a pair twice.

    Returns
    -------
    judgements : Judgements
        ``to_qrels()`` resolves them into one qrels (one source, or several
        by a rule), ``to_pandas()`` lists them with a ``source`` column.

    Examples
    --------
    >>> from skrank.judging import merge_qrels
    >>> j = merge_qrels({"human": {"q1": {"d1": 2, "d2": 0}},
    ...                  "llm": {"q1": {"d1": 1, "d3": 1}}})
    >>> j.conflicts()
    1
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     q = j.to_qrels(prefer=["human"])
    >>> q.docno.tolist(), q.rel.tolist()
    (['d1', 'd2', 'd3'], [2, 0, 1])
    >>> j.to_qrels("llm").rel.tolist()
    [1, 1]
    """

    func = "merge_qrels"
    if not isinstance(sources, Mapping) or not sources:
        raise InvalidParameterError(f"{func}: sources must be a non-empty mapping of source "
                                    f"name -> qrels, e.g. {{'human': ..., 'llm': ...}}. Got "
                                    f"{_describe(sources)} instead.")
    names = [str(n) for n in sources]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"{func}: source names must be distinct as strings. Got "
                                    f"{list(sources)!r} instead.")
    tables = [as_qrels(func, value, f"sources[{name!r}]")
              for name, value in zip(names, sources.values())]
    for name, table in zip(names, tables):
        codes, qids, docnos = pair_codes(table.qid, table.docno)
        uniques, counts = np.unique(codes, return_counts=True)
        if (counts > 1).any():
            q, d = (str(ids[0]) for ids in split_pair_codes(
                uniques[np.flatnonzero(counts > 1)[:1]], qids, docnos))
            raise ValueError(f"{func}: source {name!r} judges document {d!r} of query {q!r} "
                             f"{counts.max()} times ({int((counts > 1).sum())} such pair(s)). "
                             f"Keep one judgement per pair in each source.")
    sizes = [len(t) for t in tables]
    width = max(len(n) for n in names)
    return Judgements(qid=np.concatenate([t.qid for t in tables]),
                      docno=np.concatenate([t.docno for t in tables]),
                      rel=np.concatenate([t.rel for t in tables]).astype(np.int64),
                      source=np.repeat(np.asarray(names, dtype=f"U{width}"), sizes),
                      sources=tuple(names))
