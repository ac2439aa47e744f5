"""Rank fusion of several runs (hybrid retrieval), and its tuning the scikit-learn way.

:func:`skrank.fuse` combines runs (BM25 and dense retrieval, several embedders,
query rewrites) into one :class:`skrank.io.Run` with the methods and
normalisations of ranx 0.3.21, under the same names and with the same scores
where ranx defines them; :class:`FusionSearch` chooses the weights and
parameters on training queries only, by query-aware cross-validation.

:data:`METHODS` and :data:`NORMS` are the declarations: one per method (name,
parameters with their constraints, whether it reads scores or ranks, whether it
is trained on qrels) and per normalisation.  See ``docs/fusion.md``.
"""

import difflib
import itertools
from collections.abc import Mapping

import numpy as np

from ._fusion import (
    DEPTH,
    METHOD_BY_NAME,
    METHODS,
    NORM_BY_NAME,
    NORMS,
    TIES,
)
from ._fusion_rows import _Prepared, _fuse_prepared
from ._evaluate import evaluate
from ._core.checks import InvalidParameterError
from .io._read import as_run, as_qrels
from .io import Run, Qrels

__all__ = ["FusionSearch", "METHODS", "NORMS", "fuse", "weight_grid"]


def _did_you_mean(word, names):
    close = difflib.get_close_matches(str(word).lower(), list(names), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def _method(func, method):
    if not isinstance(method, str) or method.lower() not in METHOD_BY_NAME:
        names = [m.name for m in METHODS]
        raise InvalidParameterError(
            f"{func}: method must be one of {', '.join(map(repr, names))}. Got {method!r} "
            f"instead.{_did_you_mean(method, METHOD_BY_NAME)}")
    return METHOD_BY_NAME[method.lower()]


def _norm(func, norm, method):
    if isinstance(norm, str) and norm == "default":
        return method.default_norm
    if norm is None or (isinstance(norm, str) and norm.lower() == "none"):
        return None
    if not isinstance(norm, str) or norm.lower() not in NORM_BY_NAME:
        names = ["default", "none", *(n.name for n in NORMS)]
        raise InvalidParameterError(
            f"{func}: norm must be one of {', '.join(map(repr, names))} or None. Got {norm!r} "
            f"instead.{_did_you_mean(norm, NORM_BY_NAME)}")
    name = NORM_BY_NAME[norm.lower()].name
    if method.name == "dbsf" and name != "dbsf":
        raise InvalidParameterError(
            f"{func}: method 'dbsf' normalises the scores itself. Got norm={norm!r} instead: "
            f"leave norm at 'default', or use method='wsum' with norm={norm!r}.")
    return name


def _params(func, method, params):
    unknown = [k for k in params if k not in method.param_names]
    if unknown:
        takes = ", ".join(method.param_names) or "no parameter"
        raise InvalidParameterError(
            f"{func}: method {method.name!r} takes {takes}. Got {unknown[0]}="
            f"{params[unknown[0]]!r} instead.")
    return {p.name: p.validate(func, params.get(p.name, p.default)) for p in method.params}


def _as_runs(func, runs):
    """``[(label, Run)]`` from a list or a dict name -> run, each in any form
    :func:`skrank.evaluate` takes."""

    if isinstance(runs, Mapping):
        items = [(str(k), f"runs[{k!r}]", v) for k, v in runs.items()]
    elif isinstance(runs, (list, tuple)):
        items = [(f"run{i}", f"runs[{i}]", v) for i, v in enumerate(runs)]
    else:
        raise InvalidParameterError(
            f"{func}: runs must be a list of runs or a dict name -> run. Got "
            f"{type(runs).__name__} instead.")
    if not items:
        raise InvalidParameterError(f"{func}: runs must hold at least one run. Got none.")
    out = []
    for name, label, value in items:
        run = as_run(func, value, label)
        bad = ~np.isfinite(run.score)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{func}: {label} must have finite scores. Got {float(run.score[i])!r} for query "
                f"{str(run.qid[i])!r}, document {str(run.docno[i])!r} ({int(bad.sum())} "
                f"non-finite of {len(run)} rows). "
                f"Drop those rows or give them a finite score.")
        out.append((name, label, run))
    return out


def _weights(func, weights, labels):
    m = len(labels)
    if weights is None:
        return np.ones(m)
    if isinstance(weights, Mapping):
        names = [name for name, _ in labels]
        extra = set(map(str, weights)) - set(names)
        if extra or len(weights) != m:
            raise InvalidParameterError(
                f"{func}: weights must name each run once ({', '.join(names)}). Got "
                f"{sorted(map(str, weights))} instead.")
        weights = [dict((str(k), v) for k, v in weights.items())[n] for n in names]
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{func}: weights must be {m} non-negative numbers, one per run. Got "
            f"{weights!r} instead.") from None
    if w.ndim != 1 or w.shape[0] != m:
        raise InvalidParameterError(
            f"{func}: weights must be {m} numbers, one per run. Got {w.size} instead.")
    if not np.all(np.isfinite(w)) or (w < 0).any():
        i = int(np.flatnonzero(~np.isfinite(w) | (w < 0))[0])
        raise InvalidParameterError(
            f"{func}: weights must be finite and non-negative. Got {float(w[i])!r} for "
            f"{labels[i][1]} instead.")
    return w


def fuse(runs, *, method="rrf", norm="default", weights=None, ties="average", depth=None,
         qrels=None, name=None, **params):
    """Fuse several runs into one: reciprocal rank fusion, CombSUM, weighted sums, ...

    Parameters
    ----------
    runs : list of runs, or dict name -> run
        Each in any form :func:`skrank.evaluate` takes as ``run``: a
        :class:`skrank.io.Run` or the path of a TREC run file, a DataFrame
        with columns ``query_id, doc_id, score``, a dict ``{query: {doc:
        score}}`` or a dict of ranked lists ``{query: [doc, ...]}``.  Ids are
        compared as strings.  Runs need not have the same queries: a run
        without a query counts as a run that returned no document for it.
    method : str, default="rrf"
        One of :data:`METHODS` (the names ``ranx.fuse`` takes, with the
        ``comb_*``/``weighted_*`` spellings as aliases, and ``"dbsf"``); see
        the table in ``docs/fusion.md``.
    norm : str or None, default="default"
        Normalisation of each run's scores, query by query: ``"min-max"``,
        ``"min-max-inverted"``, ``"max"``, ``"sum"``, ``"zmuv"``, ``"rank"``,
        ``"borda"``, ``"dbsf"``, or None for none.  ``"default"`` is
        ``"min-max"`` (ranx's default) for the methods that read scores, none
        for those that read ranks, and the method's own scaling for ``"dbsf"``.
    weights : list of float or dict name -> float, default=None
        One non-negative weight per run, for the methods that take weights;
        None gives every run the weight 1.
    ties : {"average", "stable"}, default="average"
        Tied scores within a run, for what reads ranks: ``"average"`` gives
        tied documents the mean of their ranks' contributions, ``"stable"``
        ranks them in input order.
    depth : int or None, default=None
        Keep each run's top ``depth`` documents per query before fusing.
    qrels : default=None
        Training judgements of the supervised methods (``probfuse``,
        ``segfuse``, ``slidefuse``, ``bayesfuse``, ``mapfuse``, ``posfuse``),
        in any form :func:`skrank.evaluate` takes: they are trained on the
        queries of ``qrels`` only and fuse every query of ``runs``.
    name : str or None, default=None
        Tag of the fused run (default: the method's name).
    **params
        The method's parameters (``k`` of RRF, ``gamma``, ``phi``, ``sigma``,
        ``n_segments``, ``w``); each method declares which it takes.

    Returns
    -------
    run : skrank.io.Run
        The fused run, queries in sorted order, documents by fused score
        (ties by document id), ranks from 1.

    Examples
    --------
    >>> import skrank
    >>> bm25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 3.1}}
    >>> dense = {"q1": {"d2": 0.82, "d4": 0.80, "d1": 0.35}}
    >>> fused = skrank.fuse([bm25, dense], method="rrf")
    >>> fused.docno.tolist()
    ['d2', 'd1', 'd4', 'd3']
    >>> bool(abs(fused.score[0] - (1 / (60 + 2) + 1 / (60 + 1))) < 1e-15)
    True
    >>> skrank.fuse({"bm25": bm25, "dense": dense}, method="wsum",
    ...             weights={"bm25": 0.3, "dense": 0.7}).docno.tolist()
    ['d2', 'd4', 'd1', 'd3']
    """
    func = "fuse"
    m = _method(func, method)
    nm = _norm(func, norm, m)
    p = _params(func, m, {k: v for k, v in params.items()})
    ties = TIES.validate(func, ties)
    depth = DEPTH.validate(func, depth)
    loaded = _as_runs(func, runs)
    labels = [(n, lb) for n, lb, _ in loaded]
    if m.weighted:
        w = _weights(func, weights, labels)
    elif weights is not None:
        raise InvalidParameterError(
            f"{func}: method {m.name!r} takes no weights. Got weights={weights!r} instead: "
            f"use one of {', '.join(x.name for x in METHODS if x.weighted)}.")
    else:
        w = np.ones(len(labels))
    qr = _training_qrels(func, m, qrels)
    prep = _Prepared(func, loaded, qr)
    return _fuse_prepared(func, prep, m, nm, w, p, ties, depth, name or m.name)


def _training_qrels(func, method, qrels):

    if method.trained:
        if qrels is None:
            raise InvalidParameterError(
                f"{func}: method {method.name!r} is trained on judgements. Got qrels=None "
                f"instead: pass the qrels of the training queries.")
        return as_qrels(func, qrels)
    if qrels is not None:
        raise InvalidParameterError(
            f"{func}: method {method.name!r} is not trained. Got qrels instead: leave it out.")
    return None


# ---------------------------------------------------------------------------
# Tuning


def weight_grid(n_runs, step=0.1):
    """Every weight vector of ``n_runs`` non-negative multiples of ``step`` summing to 1.

    Counted in integer units of ``step`` (exactly ``round(1 / step)`` of them), so
    no combination is lost to a floating-point sum (ranx 0.3.21's ``sum(w) == 1.0``
    drops 4 of the 66 vectors of 3 runs at step 0.1, such as ``(0.2, 0.7, 0.1)``,
    and 30 of the 286 of 4 runs).

    Parameters
    ----------
    n_runs : int
        The number of runs, the length of each weight vector.
    step : float, default=0.1
        The grid's step; ``1 / step`` must be a whole number.

    Returns
    -------
    weights : list of tuple of float
        Every weight vector, in lexicographic order of its first ``n_runs - 1``
        weights.

    Examples
    --------
    >>> from skrank.fusion import weight_grid
    >>> len(weight_grid(3))
    66
    >>> weight_grid(2, step=0.5)
    [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]
    """
    units = round(1 / step)
    if units < 1 or abs(units * step - 1) > 1e-9:
        raise InvalidParameterError(
            f"weight_grid: step must divide 1 into a whole number of parts. Got {step!r} "
            f"instead.")
    out = []
    for combo in itertools.product(range(units + 1), repeat=n_runs - 1):
        rest = units - sum(combo)
        if rest >= 0:
            out.append(tuple(c / units for c in (*combo, rest)))
    return out


_DEFAULTS = {"cv": 5, "param_grid": None, "norm": "default", "ties": "average", "depth": None}


class FusionSearch:
    """Choose a fusion method's weights and parameters on training queries only.

    scikit-learn's search conventions (``fit``, ``best_params_``,
    ``best_score_``, ``cv_results_``, ``predict``) over queries: each
    combination of ``param_grid`` is scored on the held-out queries of each
    fold of ``cv``; ``best_params_`` is the combination with the best mean
    held-out score.  ``heldout_run_`` and ``heldout_`` are the honest
    estimate: the queries of each test fold fused with the combination chosen
    on that fold's training queries, ready for :func:`skrank.compare` against
    each single run.

    Parameters
    ----------
    method : str, default="wsum"
        A method of :func:`skrank.fuse`.
    metric : str, default="ndcg@10"
        The metric to maximise (any name :func:`skrank.evaluate` takes).
    cv : int or cross-validator, default=5
        Folds over queries: an int gives :class:`skrank.model_selection.QueryKFold`.
    param_grid : dict or list of dict or None, default=None
        Parameter name -> list of values (scikit-learn's ``ParameterGrid``).
        None: for a weighted method, every weight vector in steps of 0.1
        summing to 1 (:func:`weight_grid`); for other methods, the method's
        defaults only.
    norm, ties, depth
        As in :func:`skrank.fuse`.

    Examples
    --------
    >>> import skrank
    >>> from skrank.fusion import FusionSearch
    >>> from skrank.model_selection import QueryKFold
    >>> qrels = {f"q{i}": {"a": 1} for i in range(4)}
    >>> good = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(4)}
    >>> bad = {f"q{i}": {"a": 1.0, "b": 2.0} for i in range(4)}
    >>> search = FusionSearch(method="wsum", metric="mrr", cv=QueryKFold(2))
    >>> search = search.fit([good, bad], qrels)
    >>> search.best_params_["weights"], search.best_score_
    ((0.6, 0.4), 1.0)
    """

    def __init__(self, method="wsum", metric="ndcg@10", *, cv=5, param_grid=None,
                 norm="default", ties="average", depth=None):
        self.method = method
        self.metric = metric
        self.cv = cv
        self.param_grid = param_grid
        self.norm = norm
        self.ties = ties
        self.depth = depth

    _PARAMS = ("method", "metric", "cv", "param_grid", "norm", "ties", "depth")

    def get_params(self, deep=True):
        """The constructor's parameters (scikit-learn's convention; ``clone`` works).

        Parameters
        ----------
        deep : bool, default=True
            Ignored: no parameter is an estimator (scikit-learn's signature).

        Returns
        -------
        params : dict
            Parameter name -> value.
        """
        return {name: getattr(self, name) for name in self._PARAMS}

    def set_params(self, **params):
        """Set constructor parameters.

        Parameters
        ----------
        **params
            Constructor parameters by name (``method``, ``metric``, ``cv``,
            ``param_grid``, ``norm``, ``ties``, ``depth``).

        Returns
        -------
        self : FusionSearch
            The search.
        """
        for name, value in params.items():
            if name not in self._PARAMS:
                raise InvalidParameterError(
                    f"FusionSearch.set_params: the parameters are {', '.join(self._PARAMS)}. "
                    f"Got {name!r} instead.")
            setattr(self, name, value)
        return self

    def __repr__(self):
        shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()
                          if k in ("method", "metric") or v != _DEFAULTS[k])
        return f"FusionSearch({shown})"

    def _grid(self, m, n_runs):
        from sklearn.model_selection import ParameterGrid

        grid = self.param_grid
        if grid is None:
            grid = {"weights": weight_grid(n_runs)} if m.weighted else {}
        combos = [dict(c) for c in ParameterGrid(grid)]
        for c in combos:
            if "weights" in c:
                c["weights"] = tuple(c["weights"])
        return combos

    def _cv(self):
        from numbers import Integral

        from .model_selection import QueryKFold

        return QueryKFold(self.cv) if isinstance(self.cv, Integral) else self.cv

    def fit(self, runs, qrels):
        """Score every combination on the held-out queries of every fold.

        Parameters
        ----------
        runs : list of runs, or dict name -> run
            The runs to fuse, in any form :func:`skrank.fuse` takes.
        qrels : qrels
            The judgements of the training queries, in any form
            :func:`skrank.evaluate` takes; its queries are split into folds.

        Returns
        -------
        self : FusionSearch
            The fitted search (``best_params_``, ``cv_results_``, ``heldout_run_``, ...).
        """

        func = "FusionSearch.fit"
        m = _method(func, self.method)
        nm = _norm(func, self.norm, m)
        ties = TIES.validate(func, self.ties)
        depth = DEPTH.validate(func, self.depth)
        loaded = _as_runs(func, runs)
        labels = [(n, lb) for n, lb, _ in loaded]
        qr = as_qrels(func, qrels)
        queries = np.unique(qr.qid)
        combos = self._grid(m, len(loaded))
        if not combos:
            raise InvalidParameterError(f"{func}: param_grid must hold at least one combination.")
        folds = list(self._cv().split(queries.reshape(-1, 1), qid=queries))
        n_folds = len(folds)

        def take(ids):
            keep = np.isin(qr.qid, ids)
            return Qrels(qid=qr.qid[keep], docno=qr.docno[keep], rel=qr.rel[keep])

        values = np.zeros((len(combos), queries.shape[0]))
        train_score = np.zeros((len(combos), n_folds))  # mean over each fold's training queries
        prep_plain = None if m.trained else _Prepared(func, loaded, None)
        for ci, combo in enumerate(combos):
            w, p = self._combo(func, m, labels, combo)
            if m.trained:  # trained on each fold's training queries, scored on all
                for fi, (train_idx, test_idx) in enumerate(folds):
                    prep = _Prepared(func, loaded, take(queries[train_idx]))
                    fused = _fuse_prepared(func, prep, m, nm, w, p, ties, depth, m.name)
                    every = self._per_query(qr, fused, queries)
                    values[ci, test_idx] = every[test_idx]
                    train_score[ci, fi] = every[train_idx].mean()
            else:
                fused = _fuse_prepared(func, prep_plain, m, nm, w, p, ties, depth, m.name)
                values[ci] = self._per_query(qr, fused, queries)
                for fi, (train_idx, _) in enumerate(folds):
                    train_score[ci, fi] = values[ci, train_idx].mean()
        split = np.stack([values[:, test_idx].mean(axis=1) for _, test_idx in folds], axis=1)
        mean = split.mean(axis=1)
        # scikit-learn's rank_test_score: equal means share the best rank
        order = np.unique(-np.round(mean, 12), return_inverse=True)[1].reshape(-1)
        counts = np.bincount(order)
        rank = (np.concatenate(([0], np.cumsum(counts)[:-1])) + 1)[order]
        self.cv_results_ = {"params": combos, "mean_test_score": mean,
                            "std_test_score": split.std(axis=1), "rank_test_score": rank}
        for fi in range(n_folds):
            self.cv_results_[f"split{fi}_test_score"] = split[:, fi]
        self.best_index_ = int(np.argmin(rank))
        self.best_params_ = dict(combos[self.best_index_])
        self.best_score_ = float(mean[self.best_index_])
        # nested: each test fold fused with the combination best on its training queries
        held = np.zeros(queries.shape[0])
        parts = []
        self.chosen_params_ = []
        for fi, (train_idx, test_idx) in enumerate(folds):
            best = int(np.argmax(np.round(train_score[:, fi], 12)))
            self.chosen_params_.append(dict(combos[best]))
            held[test_idx] = values[best, test_idx]
            fused = self._fuse_combo(func, m, nm, ties, depth, loaded, labels, combos[best],
                                     take(queries[train_idx]) if m.trained else None,
                                     prep_plain)
            keep = np.isin(fused.qid, queries[test_idx])
            parts.append([getattr(fused, c)[keep] for c in ("qid", "docno", "score", "rank")])

        qid, docno, score, rank_col = (np.concatenate(c) for c in zip(*parts))
        self.heldout_ = (queries, held)
        self.heldout_run_ = Run(qid=qid, docno=docno, score=score, rank=rank_col, tag=m.name)
        self._fit_qrels = qr
        self._labels = labels
        return self

    def _per_query(self, qrels, fused, queries):
        res = evaluate(qrels=qrels, run=fused, metrics=[self.metric],
                              missing_queries="zero")
        values = dict(zip(res.qid.tolist(), res.per_query[self.metric].tolist()))
        return np.array([values.get(q, 0.0) for q in queries.tolist()])

    @staticmethod
    def _combo(func, m, labels, combo):
        combo = dict(combo)
        weights = combo.pop("weights", None)
        if weights is not None and not m.weighted:
            raise InvalidParameterError(
                f"{func}: method {m.name!r} takes no weights. Got weights in param_grid.")
        w = _weights(func, weights, labels) if m.weighted else np.ones(len(labels))
        return w, _params(func, m, combo)

    def _fuse_combo(self, func, m, nm, ties, depth, loaded, labels, combo, qrels, prep=None):
        w, p = self._combo(func, m, labels, combo)
        prep = _Prepared(func, loaded, qrels) if prep is None else prep
        return _fuse_prepared(func, prep, m, nm, w, p, ties, depth, m.name)

    def predict(self, runs):
        """The runs fused with ``best_params_`` (a supervised method is trained on all
        the queries given to :meth:`fit`).

        Parameters
        ----------
        runs : list of runs, or dict name -> run
            The runs to fuse, the same systems in the same order as in :meth:`fit`.

        Returns
        -------
        run : skrank.io.Run
            The fused run.
        """
        if not hasattr(self, "best_params_"):
            raise ValueError("FusionSearch.predict: call fit(runs, qrels) first.")
        func = "FusionSearch.predict"
        m = _method(func, self.method)
        nm = _norm(func, self.norm, m)
        loaded = _as_runs(func, runs)
        labels = [(n, lb) for n, lb, _ in loaded]
        return self._fuse_combo(func, m, nm, TIES.validate(func, self.ties),
                                DEPTH.validate(func, self.depth), loaded, labels,
                                self.best_params_, self._fit_qrels if m.trained else None)
