"""Per-query vector -> one number, with the policy for undefined queries."""

import warnings

import numpy as np

NO_RELEVANT_POLICIES = ("zero", "one", "skip", "nan", "raise")


def apply_no_relevant(func, qids, values, undefined, no_relevant):
    """Apply the ``no_relevant`` policy to a per-query vector.

    Returns ``(qids, values)``; with ``"skip"`` the undefined queries are left out.
    """
    if undefined is None or not undefined.any():
        return qids, values
    if no_relevant == "raise":
        bad = qids[undefined]
        shown = ", ".join(repr(q) for q in bad[:5].tolist()) + (", ..." if bad.size > 5 else "")
        raise ValueError(
            f"{func}: {bad.size} quer{'y has' if bad.size == 1 else 'ies have'} no relevant "
            f"document, so the metric is undefined for them (qid {shown}). Choose what they "
            f"count as with no_relevant='zero' (trec_eval, scikit-learn), 'one' (LightGBM, "
            f"XGBoost), 'skip' or 'nan'."
        )
    if no_relevant == "skip":
        return qids[~undefined], values[~undefined]
    values = values.copy()
    values[undefined] = {"zero": 0.0, "one": 1.0, "nan": np.nan}[no_relevant]
    return qids, values


def mean_over_queries(func, values):
    """Plain mean over queries; NaN with a warning when no query is left."""
    if values.size == 0:
        from sklearn.exceptions import UndefinedMetricWarning  # scikit-learn's, so its filters apply

        warnings.warn(
            f"{func}: every query was skipped (no query has a relevant document), "
            f"so the mean is undefined; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return float("nan")
    return float(np.mean(values))
