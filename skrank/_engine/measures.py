"""The metric kernels: ``kernel(ranking, *, func, **options) -> (values, undefined)``,
one per metric of the table (:mod:`skrank._declare.table`), vectorised over all
queries with the helpers of :mod:`skrank._engine.kernels`; the queries where the
metric is undefined take the ``no_relevant`` policy.  They never branch on the array
namespace: what differs on a device is behind the ranking's methods and the helpers of
:mod:`skrank._engine.xp` and :mod:`skrank._engine.kernels`.
"""

from .._core.checks import InvalidParameterError
from .arrays import apply_gain
from .xp import as_float, divide_where, minimum, value_range
from . import kernels as K


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


def _gain_fn(func, gain):
    return lambda labels: apply_gain(func, gain, labels)


def _cg(ranking, *, func, k, gain):
    return K.weighted_rank_sum(ranking, ranking.labels, K.ones, k, _gain_fn(func, gain)), None


def _dcg(ranking, *, func, k, gain, log_base):
    return K.weighted_rank_sum(ranking, ranking.labels, K.log_discount(log_base), k,
                               _gain_fn(func, gain)), None


def _ndcg(ranking, *, func, k, gain):
    discount = K.log_discount(2.0)
    dcg = K.weighted_rank_sum(ranking, ranking.labels, discount, k, _gain_fn(func, gain))
    if callable(gain):
        all_gains = apply_gain(func, gain, ranking.all_labels)
        low = value_range(all_gains)[0]
        if low < 0:
            raise InvalidParameterError(
                f"{func}: gain must map every label to a non-negative gain (nDCG is only "
                f"bounded by 1 then). Got a gain of {low:g} instead."
            )
    idcg = K.ideal_dcg(ranking, gain, _gain_fn(func, gain), k, discount)
    undefined = idcg <= 0
    # DCG <= IDCG exactly; the two sums may round apart by an ulp.
    return minimum(divide_where(dcg, idcg, ~undefined), 1.0), undefined


def _relevant(ranking, threshold):
    return ranking.relevant(threshold)


def _is_relevant(threshold):
    return lambda labels: as_float(labels >= threshold)


def _precision(ranking, *, func, k, threshold, denominator):
    hits = K.weighted_rank_sum(ranking, ranking.labels, K.ones, k, _is_relevant(threshold))
    if denominator == "k":
        return hits / float(k), None
    size = as_float(minimum(ranking.n_ranked, k))
    return divide_where(hits, size, size > 0), None


def _per_relevant(ranking, total, threshold):
    n_rel = ranking.n_relevant(threshold)
    undefined = n_rel == 0
    return divide_where(total, n_rel, ~undefined), undefined


def _recall(ranking, *, func, k, threshold):
    hits = K.weighted_rank_sum(ranking, ranking.labels, K.ones, k, _is_relevant(threshold))
    return _per_relevant(ranking, hits, threshold)


def _r_precision(ranking, *, func, threshold):
    n_rel = ranking.n_relevant(threshold)
    hits = K.weighted_rank_sum(ranking, _relevant(ranking, threshold), K.ones, n_rel)
    return _per_relevant(ranking, hits, threshold)


def _hit_rate(ranking, *, func, k, threshold):
    value = K.hit_rate(ranking, threshold, k)
    return value, ranking.n_relevant(threshold) == 0


def _mrr(ranking, *, func, k, threshold):
    value = K.reciprocal_rank(ranking, threshold, k)
    return value, ranking.n_relevant(threshold) == 0


def _map(ranking, *, func, k, threshold, denominator):
    total = K.average_precision_sum(ranking, threshold, k)
    n_rel = ranking.n_relevant(threshold)
    size = n_rel if denominator == "R" or k is None else minimum(n_rel, k)
    undefined = n_rel == 0
    return divide_where(total, size, ~undefined), undefined


def _err(ranking, *, func, k, max_grade):
    return K.expected_reciprocal_rank(ranking, ranking.labels, max_grade, k), None


def _rbp(ranking, *, func, k, p, threshold, gain):
    def weight(positions):
        return (1.0 - p) * p ** positions

    if gain == "binary":
        values = _relevant(ranking, threshold)
    else:
        if value_range(ranking.all_labels)[0] < 0:
            raise ValueError(f"{func}: y_true must be non-negative for gain={gain!r}. Got "
                             f"min(y_true) = {value_range(ranking.all_labels)[0]:g} instead.")
        values = as_float(ranking.labels)
        if gain == "trec":
            # trec_eval scales the grades by the query's top judged grade when it exceeds 1.
            values = values / ranking.label_scale_by_row()
    return K.weighted_rank_sum(ranking, values, weight, k), None
