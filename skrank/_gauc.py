"""Group AUC: the ROC AUC of each query's ranking, averaged over queries.

Its declaration is in the table :data:`skrank._metrics.METRICS` (the block
"issue 29"); this module holds its kernel and its public function.

The kernel is the Mann-Whitney statistic of each query, written as a sum over
ranks so that the tie policies of every metric apply: a query of ``n`` ranked
documents, ``P`` of them relevant (positives) and ``N = n - P`` not, whose
positives sit at the 0-based positions ``p_1, ..., p_P``, has

    ``U = P * N + P * (P - 1) / 2 - sum_i p_i``

pairs (positive, negative) with the positive ranked above, and ``AUC = U / (P * N)``.
Under ``ties="average"`` the positions are expected positions over the orderings
of each tie group, which counts a tied pair one half: the statistic of
:func:`sklearn.metrics.roc_auc_score`.
"""

from . import _kernels as K
from ._array_api import as_float, divide_where, minimum


def _position(positions):
    return positions * 1.0


def _gauc(ranking, *, func, threshold, weighting):
    def positive(labels):
        return as_float(labels >= threshold)

    labels = ranking.labels
    n_pos = K.weighted_rank_sum(ranking, labels, K.ones, None, positive)
    positions = K.weighted_rank_sum(ranking, labels, _position, None, positive)
    n_neg = as_float(ranking.n_kept, like=n_pos) - n_pos
    pairs = n_pos * n_neg
    above = pairs + n_pos * (n_pos - 1.0) / 2.0 - positions
    defined = pairs > 0
    value = minimum(divide_where(above, pairs, defined), 1.0)
    value = value - minimum(value, 0.0)   # never below 0 by a rounding of the sums
    if weighting == "uniform":
        return value, ~defined
    weights = n_pos + n_neg if weighting == "size" else n_pos
    return value, ~defined, weights
