"""Adapters that let learning-to-rank estimators take ``qid`` like any other.

``QueryLGBMRanker`` is :class:`lightgbm.LGBMRanker` with ``fit(X, y, qid=...)``:
LightGBM wants contiguous rows and group sizes, which breaks inside
``GridSearchCV`` (LightGBM issues 1137 and 3018).  The adapter sorts the rows by
query (stably), derives the group sizes, and fits; rows may come in any order.
It requests ``qid`` through metadata routing by default.  lightgbm is imported
only when the class is first used.
"""

import numpy as np

__all__ = ["QueryLGBMRanker"]


def _take_rows(X, rows):
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    return X[rows]


def _build_query_lgbm_ranker():
    try:
        import lightgbm
    except ImportError as exc:
        raise ImportError(
            "skrank.rankers.QueryLGBMRanker needs lightgbm: pip install lightgbm"
        ) from exc

    from ._grouping import factorize_qid
    from ._scorer import qid_from_X

    class QueryLGBMRanker(lightgbm.LGBMRanker):
        """:class:`lightgbm.LGBMRanker` that takes query ids instead of group sizes.

        All parameters are LGBMRanker's.  ``fit(X, y, qid=qid)`` accepts rows
        in any order; ``qid`` may also come from a ``qid`` column of a pandas
        DataFrame ``X`` (the column is then not used as a feature).
        """

        __metadata_request__fit = {"qid": True}

        def fit(self, X, y, *, qid=None, sample_weight=None, **fit_params):
            """Fit on rows grouped by ``qid`` (any order)."""
            frame_qid = qid_from_X(X)
            if frame_qid is not None:
                X = X.drop(columns="qid")
                qid = frame_qid if qid is None else qid
            if qid is None:
                raise ValueError(
                    "QueryLGBMRanker.fit: qid is required: pass fit(X, y, qid=qid) "
                    "(with metadata routing inside GridSearchCV) or X as a DataFrame with "
                    "a 'qid' column."
                )
            if "group" in fit_params:
                raise ValueError("QueryLGBMRanker.fit: pass qid, not group; group sizes "
                                 "are derived from qid.")
            qid = np.asarray(qid)
            codes, _, _ = factorize_qid("QueryLGBMRanker.fit", qid)
            order = np.argsort(codes, kind="stable")
            group = np.bincount(codes)  # every code has rows: sizes in query order
            y = np.asarray(y)[order]
            X = _take_rows(X, order)
            if sample_weight is not None:
                sample_weight = np.asarray(sample_weight)[order]
            return super().fit(X, y, group=group, sample_weight=sample_weight, **fit_params)

        def predict(self, X, **kwargs):
            if qid_from_X(X) is not None:
                X = X.drop(columns="qid")
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
