"""Adapters that let learning-to-rank estimators take ``qid`` like any other.

``QueryLGBMRanker`` is :class:`lightgbm.LGBMRanker` with ``fit(X, y, qid=...)``:
LightGBM wants contiguous rows and group sizes, which breaks inside
``GridSearchCV`` (LightGBM issues 1137 and 3018).  The adapter sorts the rows by
query (stably), derives the group sizes, and fits; rows may come in any order.
It requests ``qid`` through metadata routing by default.  lightgbm is imported
only when the class is first used.
"""

import numpy as np

from ._core.checks import InvalidParameterError
from ._engine.codes import factorize_qid
from ._engine.ids import as_qid_array

__all__ = ["QueryLGBMRanker"]


def _take_rows(X, rows):
    # scikit-learn's row indexing: arrays, lists, sparse matrices and arrays, DataFrames
    from sklearn.utils import _safe_indexing

    return _safe_indexing(X, rows)


def _without_qid_column(X):
    """``(X without its qid column, the column)``, or ``(X, None)`` when it has none."""
    from ._scorer import qid_from_X

    column = qid_from_X(X)
    return (X, None) if column is None else (X.drop(columns="qid"), column)


def _grouped(func, X, y, qid, *per_row):
    """Rows sorted stably by query (LightGBM needs each query's rows contiguous) and the
    group sizes in that order; ``per_row`` arrays (weights, init scores) follow the rows."""

    qid = as_qid_array(qid)
    n = len(y)
    if qid.ndim != 1 or qid.shape[0] != n:
        raise ValueError(f"{func}: qid must be 1-D with one id per row ({n}). Got shape "
                         f"{qid.shape} instead.")
    codes, _, grouped = factorize_qid(func, qid)
    group = np.bincount(codes)  # every code has rows: sizes in query order
    if grouped:
        return (X, y, group, *per_row)
    order = np.argsort(codes, kind="stable")
    moved = [None if a is None else _take_rows(a, order) for a in per_row]
    return (_take_rows(X, order), _take_rows(np.asarray(y), order), group, *moved)


def _build_query_lgbm_ranker():
    """The class :class:`QueryLGBMRanker`, defined on first use so that importing
    skrank.rankers does not import LightGBM.  Long because the whole class (its fit with
    query ids and evaluation sets) is in its body."""
    try:
        import lightgbm
    except ImportError as exc:
        raise ImportError(
            "skrank.rankers.QueryLGBMRanker needs lightgbm: pip install lightgbm"
        ) from exc

    import inspect

    _TAKES_EVAL_XY = "eval_X" in inspect.signature(lightgbm.LGBMRanker.fit).parameters

    class QueryLGBMRanker(lightgbm.LGBMRanker):
        """:class:`lightgbm.LGBMRanker` that takes query ids instead of group sizes.

        All parameters are LGBMRanker's.  ``fit(X, y, qid=qid)`` accepts rows
        in any order; ``qid`` may also come from a ``qid`` column of a pandas
        DataFrame ``X`` (the column is then not used as a feature).  Evaluation
        sets (``eval_set``, for early stopping) take their query ids the same
        way: ``eval_qid`` (one array per set) or a ``qid`` column of each
        evaluation DataFrame; their rows may come in any order too.
        """

        __metadata_request__fit = {"qid": True}

        def fit(self, X, y, *, qid=None, sample_weight=None, init_score=None, eval_set=None,
                eval_qid=None, eval_sample_weight=None, eval_init_score=None, **fit_params):
            """Fit on rows grouped by ``qid`` (any order).

            ``eval_qid`` : list of arrays, one per ``eval_set`` entry, each with one
            query id per row of that set (not needed for an evaluation DataFrame with
            a ``qid`` column).  Every other argument is ``LGBMRanker.fit``'s, except
            ``group`` and ``eval_group``: group sizes are derived from the ids.
            """
            func = "QueryLGBMRanker.fit"
            for sizes in ("group", "eval_group"):
                if fit_params.get(sizes) is not None:
                    ids = "qid" if sizes == "group" else "eval_qid (one array per eval set)"
                    raise InvalidParameterError(
                        f"{func}: pass {ids}, not {sizes}: group sizes are derived from "
                        f"query ids, whatever the row order (sizes of rows that are not "
                        f"contiguous by query would silently describe wrong queries).")
                fit_params.pop(sizes, None)
            X, frame_qid = _without_qid_column(X)
            qid = frame_qid if qid is None else qid
            if qid is None:
                raise ValueError(
                    f"{func}: qid is required: pass fit(X, y, qid=qid) "
                    "(with metadata routing inside GridSearchCV) or X as a DataFrame with "
                    "a 'qid' column."
                )
            X, y, group, sample_weight, init_score = _grouped(
                func, X, y, qid, sample_weight, init_score)
            eval_set, eval_group, eval_sample_weight, eval_init_score = self._eval_sets(
                func, eval_set, eval_qid, eval_sample_weight, eval_init_score, fit_params)
            if eval_set is not None and _TAKES_EVAL_XY:  # LightGBM >= 4.7 deprecates eval_set
                fit_params["eval_X"] = tuple(X_e for X_e, _ in eval_set)
                fit_params["eval_y"] = tuple(y_e for _, y_e in eval_set)
                eval_set = None
            return super().fit(X, y, group=group, sample_weight=sample_weight,
                               init_score=init_score, eval_set=eval_set, eval_group=eval_group,
                               eval_sample_weight=eval_sample_weight,
                               eval_init_score=eval_init_score, **fit_params)

        @staticmethod
        def _eval_sets(func, eval_set, eval_qid, eval_sample_weight, eval_init_score,
                       fit_params):
            eval_X, eval_y = fit_params.pop("eval_X", None), fit_params.pop("eval_y", None)
            if eval_X is not None:  # LightGBM >= 4.7's other spelling of eval_set
                if eval_set is not None:
                    raise InvalidParameterError(f"{func}: pass eval_set or eval_X/eval_y, not both.")
                many = isinstance(eval_X, tuple)
                eval_set = list(zip(eval_X, eval_y)) if many else [(eval_X, eval_y)]
            if eval_set is None:
                if eval_qid is not None:
                    raise InvalidParameterError(f"{func}: eval_qid is given but eval_set is not.")
                return None, None, eval_sample_weight, eval_init_score
            if isinstance(eval_set, tuple):  # one (X, y) pair
                eval_set = [eval_set]
            n_sets = len(eval_set)

            def per_set(values, name):
                if values is None:
                    return [None] * n_sets
                if len(values) != n_sets:
                    raise InvalidParameterError(f"{func}: {name} must hold one entry per eval_set "
                                     f"({n_sets}). Got {len(values)} instead.")
                return list(values)

            qids = per_set(eval_qid, "eval_qid")
            weights = per_set(eval_sample_weight, "eval_sample_weight")
            inits = per_set(eval_init_score, "eval_init_score")
            sets, groups = [], []
            for i, (X_e, y_e) in enumerate(eval_set):
                X_e, frame_qid = _without_qid_column(X_e)
                q = qids[i] if qids[i] is not None else frame_qid
                if q is None:
                    raise ValueError(
                        f"{func}: eval_set[{i}] needs query ids: pass eval_qid=[qid_0, ...] "
                        f"(one array per eval set) or its X as a DataFrame with a 'qid' "
                        f"column.")
                X_e, y_e, group, weights[i], inits[i] = _grouped(
                    f"{func} (eval_set[{i}])", X_e, y_e, q, weights[i], inits[i])
                sets.append((X_e, y_e))
                groups.append(group)
            return (sets, groups, None if eval_sample_weight is None else weights,
                    None if eval_init_score is None else inits)

        def predict(self, X, **kwargs):
            X, _ = _without_qid_column(X)
            return super().predict(X, **kwargs)

    QueryLGBMRanker.__module__ = __name__
    QueryLGBMRanker.__qualname__ = "QueryLGBMRanker"
    return QueryLGBMRanker


def __getattr__(name):
    if name == "QueryLGBMRanker":
        cls = _build_query_lgbm_ranker()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
