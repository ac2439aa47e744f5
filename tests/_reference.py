"""Slow, obviously-correct reference implementation (test oracle) of skrank's metrics.

This module implements the definitions of the user guide (docs/metrics.md for the DCG
family and the policies, docs/metric_families.md for the other metrics) literally, with
plain Python loops over ranks.
It deliberately does NOT import skrank: it is what skrank is checked against.
Clarity beats speed everywhere; only use it on small inputs.

Layers
------
1. Per-query functions ``ref_<metric>(ranked, unretrieved=(), **params)``.
   ``ranked`` holds the labels of ONE query's retrieved documents, already in rank
   order (rank 1 first); ``unretrieved`` holds the labels of the query's judged but
   unretrieved documents (they count in R and in the ideal DCG, never occupy a rank).
   Metrics that can be undefined (R == 0, or idcg == 0) return ``None``.
2. ``orderings(labels, scores, ties, docnos=None)`` turns one query in INPUT order
   into (probability, ranked_labels) pairs according to a tie policy.
3. ``ref_query_value`` = expectation of a per-query metric over those orderings.
4. ``ref_mean`` (flat arrays + qid) and ``ref_mean_2d`` (one query per row):
   apply the no_relevant policy and average over queries.
"""

import itertools
import math
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

# --------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------


def _check_k(k, *, required=False):
    """k must be None (no cutoff) or an int >= 1 (bool rejected)."""
    if k is None:
        if required:
            raise ValueError("k is required (an int >= 1)")
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"k must be None or an int >= 1, got {k!r}")
    return int(k)


def _depth(ranked, k):
    """Number of ranks that count: min(k, n_ret) (all of them when k is None)."""
    n_ret = len(ranked)
    return n_ret if k is None else min(k, n_ret)


def _gains(labels, gain):
    """g(rel) for every label: 'linear' -> rel, 'exponential' -> 2**rel - 1, or callable."""
    labels = [float(x) for x in labels]
    if gain == "linear":
        return labels
    if gain == "exponential":
        return [2.0**rel - 1.0 for rel in labels]
    if callable(gain):
        out = np.asarray(gain(np.asarray(labels, dtype=float)), dtype=float)
        if out.shape != (len(labels),):
            raise ValueError("a gain callable must return one value per label")
        return [float(x) for x in out]
    raise ValueError(f"gain must be 'linear', 'exponential' or a callable, got {gain!r}")


def _is_relevant(rel, threshold):
    return rel >= threshold


def _n_relevant(ranked, unretrieved, threshold):
    """R = number of relevant docs of the query, retrieved or not."""
    return sum(1 for rel in list(ranked) + list(unretrieved) if _is_relevant(rel, threshold))


def _log(x, base):
    return math.log(x) / math.log(base)


# --------------------------------------------------------------------------------------
# per-query metrics (ranked = labels in rank order)
# --------------------------------------------------------------------------------------


def ref_cg(ranked, unretrieved=(), *, k=None, gain="linear"):
    """Cumulative gain: cg@k = sum_{i <= min(k, n_ret)} g(rel_i). (unretrieved ignored)"""
    k = _check_k(k)
    g = _gains(ranked, gain)
    total = 0.0
    for i in range(1, _depth(ranked, k) + 1):
        total += g[i - 1]
    return total


def ref_dcg(ranked, unretrieved=(), *, k=None, gain="linear", log_base=2):
    """dcg@k = sum_{i <= min(k, n_ret)} g(rel_i) / log_base(i + 1). (unretrieved ignored)"""
    k = _check_k(k)
    g = _gains(ranked, gain)
    total = 0.0
    for i in range(1, _depth(ranked, k) + 1):
        total += g[i - 1] / _log(i + 1, log_base)
    return total


def ref_idcg(ranked, unretrieved=(), *, k=None, gain="linear", log_base=2):
    """idcg@k = dcg@k of ALL the query's labels (retrieved + unretrieved) in decreasing
    order of gain: the best DCG any ordering reaches (for monotone gains, labels sorted
    decreasing)."""
    labels = list(ranked) + list(unretrieved)
    ideal = sorted(labels, key=lambda rel: _gains([rel], gain)[0], reverse=True)
    return ref_dcg(ideal, k=k, gain=gain, log_base=log_base)


def ref_ndcg(ranked, unretrieved=(), *, k=None, gain="linear", log_base=2):
    """ndcg@k = dcg@k / idcg@k; None (undefined) when idcg@k == 0.

    The log base cancels out; it is accepted only so every dcg-family call is uniform.
    """
    idcg = ref_idcg(ranked, unretrieved, k=k, gain=gain, log_base=log_base)
    if idcg == 0:
        return None
    return ref_dcg(ranked, k=k, gain=gain, log_base=log_base) / idcg


def ref_precision(ranked, unretrieved=(), *, k, threshold=1, denominator="k"):
    """P@k = (#relevant among ranks <= k) / k            (denominator="k", trec_eval)
          or (#relevant among ranks <= k) / min(k, n_ret)  (denominator="min").

    k is required (the contract defines no P@None). unretrieved docs are ignored.
    With denominator="min" and nothing retrieved (0/0) the value is 0.0 (nothing
    relevant was retrieved); the contract does not spell this corner out.
    """
    k = _check_k(k, required=True)
    hits = 0
    for i in range(1, _depth(ranked, k) + 1):
        if _is_relevant(ranked[i - 1], threshold):
            hits += 1
    if denominator == "k":
        return hits / k
    if denominator == "min":
        d = min(k, len(ranked))
        return 0.0 if d == 0 else hits / d
    raise ValueError(f"denominator must be 'k' or 'min', got {denominator!r}")


def ref_recall(ranked, unretrieved=(), *, k=None, threshold=1):
    """recall@k = (#relevant among ranks <= k) / R; None when R == 0."""
    k = _check_k(k)
    R = _n_relevant(ranked, unretrieved, threshold)
    if R == 0:
        return None
    hits = 0
    for i in range(1, _depth(ranked, k) + 1):
        if _is_relevant(ranked[i - 1], threshold):
            hits += 1
    return hits / R


def ref_hit_rate(ranked, unretrieved=(), *, k=None, threshold=1):
    """hit_rate@k = 1 if any relevant doc at rank <= k else 0; None when R == 0."""
    k = _check_k(k)
    R = _n_relevant(ranked, unretrieved, threshold)
    if R == 0:
        return None
    for i in range(1, _depth(ranked, k) + 1):
        if _is_relevant(ranked[i - 1], threshold):
            return 1.0
    return 0.0


def ref_r_precision(ranked, unretrieved=(), *, threshold=1):
    """R-precision = (#relevant among ranks <= R) / R; None when R == 0."""
    R = _n_relevant(ranked, unretrieved, threshold)
    if R == 0:
        return None
    hits = 0
    for i in range(1, _depth(ranked, R) + 1):
        if _is_relevant(ranked[i - 1], threshold):
            hits += 1
    return hits / R


def ref_ap(ranked, unretrieved=(), *, k=None, threshold=1, denominator="R"):
    """AP@k = (1/D) * sum_{i <= k, rel_i relevant} P@i,  P@i = (#relevant among ranks <= i) / i.

    D = R (denominator="R", default) or min(R, k) (denominator="min"; D = R when k is None).
    None when R == 0.
    """
    k = _check_k(k)
    if denominator not in ("R", "min"):
        raise ValueError(f"denominator must be 'R' or 'min', got {denominator!r}")
    R = _n_relevant(ranked, unretrieved, threshold)
    if R == 0:
        return None
    D = R if (denominator == "R" or k is None) else min(R, k)
    total = 0.0
    hits = 0
    for i in range(1, _depth(ranked, k) + 1):
        if _is_relevant(ranked[i - 1], threshold):
            hits += 1
            total += hits / i  # P@i at a relevant rank i
    return total / D


def ref_rr(ranked, unretrieved=(), *, k=None, threshold=1):
    """RR@k = 1 / (rank of the first relevant doc) if that rank <= k, else 0; None when R == 0."""
    k = _check_k(k)
    R = _n_relevant(ranked, unretrieved, threshold)
    if R == 0:
        return None
    for i in range(1, _depth(ranked, k) + 1):
        if _is_relevant(ranked[i - 1], threshold):
            return 1.0 / i
    return 0.0


def ref_err(ranked, unretrieved=(), *, k=None, max_grade):
    """ERR@k (Chapelle et al. 2009), always defined:

    R_i = (2**rel_i - 1) / 2**max_grade,
    ERR = sum_{i <= k} (1/i) * R_i * prod_{j < i} (1 - R_j).
    """
    k = _check_k(k)
    total = 0.0
    p_not_stopped = 1.0  # prod_{j < i} (1 - R_j)
    for i in range(1, _depth(ranked, k) + 1):
        R_i = (2.0 ** float(ranked[i - 1]) - 1.0) / 2.0 ** float(max_grade)
        total += (1.0 / i) * R_i * p_not_stopped
        p_not_stopped *= 1.0 - R_i
    return total


def ref_rbp(ranked, unretrieved=(), *, k=None, p=0.8, threshold=1, gain="binary"):
    """RBP (Moffat & Zobel 2008) = (1 - p) * sum_{i <= k} g_i * p**(i - 1). Always defined.

    g_i: "binary" 1 if relevant else 0; "linear" the label; "trec" the label divided by
    the query's largest label (retrieved or not) when that exceeds 1 (trec_eval's rbp).
    """
    k = _check_k(k)
    top = max([1.0] + [float(x) for x in list(ranked) + list(unretrieved)])
    total = 0.0
    for i in range(1, _depth(ranked, k) + 1):
        label = ranked[i - 1]
        if gain == "binary":
            g = 1.0 if _is_relevant(label, threshold) else 0.0
        elif gain == "linear":
            g = float(label)
        else:
            g = float(label) / top
        total += g * p ** (i - 1)
    return (1.0 - p) * total


# Metrics for incomplete judgements: a ranked label of None means "not judged" (not in the
# pool); a negative label means "in the pool but unjudged" (trec_eval's -1).


def _is_judged(label):
    return label is not None and label >= 0


def ref_bpref(ranked, unretrieved=(), *, threshold=1):
    """bpref = 1/R sum over ranked relevant r of (1 - min(n_r, R) / min(N, R)), n_r the judged
    non-relevant ranked above r, N all judged non-relevant (trec_eval's m_bpref)."""
    judged = [x for x in list(ranked) + list(unretrieved) if _is_judged(x)]
    R = sum(1 for x in judged if x >= threshold)
    N = sum(1 for x in judged if x < threshold)
    if R == 0:
        return 0.0
    total, nonrel_above = 0.0, 0
    for label in ranked:
        if not _is_judged(label):
            continue
        if label < threshold:
            nonrel_above += 1
        elif nonrel_above == 0:
            total += 1.0
        else:
            total += 1.0 - min(nonrel_above, R) / min(N, R)
    return total / R


def ref_infap(ranked, unretrieved=(), *, threshold=1, epsilon=1e-5):
    """infAP (Yilmaz & Aslam 2006) as trec_eval's m_infap: at the relevant document of
    0-based rank j, 1/(j+1) + j/(j+1) * (judged-or-pooled above / j) * smoothed precision of
    the judged above; averaged over R."""
    judged = [x for x in list(ranked) + list(unretrieved) if _is_judged(x)]
    R = sum(1 for x in judged if x >= threshold)
    if R == 0:
        return 0.0
    total = 0.0
    rel_above = nonrel_above = pooled_above = 0
    for j, label in enumerate(ranked):
        if label is None:
            continue
        if label < 0:
            pooled_above += 1
            continue
        if label < threshold:
            nonrel_above += 1
            continue
        if j == 0:
            total += 1.0
        else:
            total += (1 / (j + 1) + j / (j + 1)
                      * ((rel_above + nonrel_above + pooled_above) / j)
                      * ((rel_above + epsilon) / (rel_above + nonrel_above + 2 * epsilon)))
        rel_above += 1
    return total / R


def ref_judged(ranked, unretrieved=(), *, k):
    """judged@k = #judged (label >= 0) among the first k ranked / k."""
    return sum(1 for x in ranked[:k] if _is_judged(x)) / k


def ref_gauc(ranked, unretrieved=(), *, threshold=1, weighting="uniform"):
    """ROC AUC of one ranked list: the fraction of (relevant, non-relevant) pairs whose
    relevant document is ranked above, by counting every pair.  Unretrieved documents
    have no rank and take no part.  None when either class is empty.  ``weighting``
    weighs queries in a mean (see ``ref_gauc_mean`` in tests/test_gauc.py), not a value."""
    positive = [i for i, x in enumerate(ranked) if x >= threshold]
    negative = [i for i, x in enumerate(ranked) if x < threshold]
    if not positive or not negative:
        return None
    above = sum(1 for p in positive for n in negative if p < n)
    return above / (len(positive) * len(negative))


def ref_gauc_weight(ranked, *, threshold=1, weighting="uniform"):
    """A query's weight in the mean of GAUC: 1, its ranked documents (impressions) or its
    relevant ranked documents (clicks)."""
    return {"uniform": 1.0, "size": float(len(ranked)),
            "positives": float(sum(1 for x in ranked if x >= threshold))}[weighting]


#: Metrics whose mean weighs queries by a declared option (the per-query values stay
#: unweighted): the weight of one query from its ranked labels and the options.
REFERENCE_QUERY_WEIGHTS = {"gauc": ref_gauc_weight}


REFERENCE_METRICS = {
    "cg": ref_cg,
    "dcg": ref_dcg,
    "ndcg": ref_ndcg,
    "precision": ref_precision,
    "recall": ref_recall,
    "hit_rate": ref_hit_rate,
    "r_precision": ref_r_precision,
    "map": ref_ap,
    "mrr": ref_rr,
    "err": ref_err,
    "rbp": ref_rbp,
    "gauc": ref_gauc,
}

#: The oracles of the metrics that read ``judged=`` (their declared extra input): a
#: ranked label None is a document nobody judged (tests/test_judged_metrics.py).
JUDGED_REFERENCE_METRICS = {"bpref": ref_bpref, "infap": ref_infap, "judged": ref_judged}

TIE_POLICIES = ("average", "stable", "pessimistic", "optimistic", "trec")

# brute force guard: "average" enumerates prod(group_size!) orderings
MAX_ORDERINGS = 200_000


# --------------------------------------------------------------------------------------
# tie handling: one query in input order -> ranked orderings
# --------------------------------------------------------------------------------------


def _sort_score_desc(indices, scores):
    """Stable sort by score descending (Python's sort is stable, also with reverse=True)."""
    return sorted(indices, key=lambda i: scores[i], reverse=True)


def orderings(labels, scores, ties, docnos=None):
    """Yield (probability, ranked_labels) for one query given in INPUT order.

    ranked_labels is a tuple of labels, rank 1 first.
    - "stable": score desc, equal scores keep input order; probability 1.
    - "pessimistic": score desc, equal scores by label ascending; probability 1.
    - "optimistic": score desc, equal scores by label descending; probability 1.
    - "trec": score desc, equal scores by docno descending (string order); needs docnos.
    - "average": every ordering obtained by permuting each tie group independently,
      each with probability 1 / (number of such orderings). Brute force.
    """
    labels = list(labels)
    scores = list(scores)
    if len(labels) != len(scores):
        raise ValueError("labels and scores must have the same length")
    idx = list(range(len(labels)))

    if ties == "stable":
        order = _sort_score_desc(idx, scores)
        yield 1.0, tuple(labels[i] for i in order)
    elif ties == "pessimistic":
        by_label = sorted(idx, key=lambda i: labels[i])  # worst first
        order = _sort_score_desc(by_label, scores)
        yield 1.0, tuple(labels[i] for i in order)
    elif ties == "optimistic":
        by_label = sorted(idx, key=lambda i: labels[i], reverse=True)  # best first
        order = _sort_score_desc(by_label, scores)
        yield 1.0, tuple(labels[i] for i in order)
    elif ties == "trec":
        if docnos is None:
            raise ValueError('ties="trec" needs docnos')
        docnos = [str(d) for d in docnos]
        if len(docnos) != len(labels):
            raise ValueError("docnos must have the same length as labels")
        by_docno = sorted(idx, key=lambda i: docnos[i], reverse=True)
        order = _sort_score_desc(by_docno, scores)
        yield 1.0, tuple(labels[i] for i in order)
    elif ties == "average":
        order = _sort_score_desc(idx, scores)
        groups = []  # consecutive runs of equal scores in rank order
        for i in order:
            if groups and scores[groups[-1][0]] == scores[i]:
                groups[-1].append(i)
            else:
                groups.append([i])
        n_total = 1
        for g in groups:
            n_total *= math.factorial(len(g))
        if n_total > MAX_ORDERINGS:
            raise ValueError(f"too many orderings to enumerate ({n_total}); use a smaller query")
        per_group = [list(itertools.permutations(g)) for g in groups]
        for combo in itertools.product(*per_group):
            ranked = tuple(labels[i] for perm in combo for i in perm)
            yield 1.0 / n_total, ranked
    else:
        raise ValueError(f"ties must be one of {TIE_POLICIES}, got {ties!r}")


def ref_query_value(metric, labels, scores, unretrieved=(), *, ties="average", docnos=None,
                    **params):
    """Expected per-query value: sum over orderings of probability * metric(ranked).

    Returns None when the metric is undefined for this query (that depends only on
    the labels, so it is the same for every ordering).
    """
    func = REFERENCE_METRICS[metric]
    if metric == "err" and ties == "average":
        raise ValueError('ERR has no exact tie average: ties="average" is rejected (contract)')
    terms = []
    undefined = []
    for prob, ranked in orderings(labels, scores, ties, docnos=docnos):
        value = func(ranked, tuple(unretrieved), **params)
        undefined.append(value is None)
        if value is not None:
            terms.append(prob * value)
    assert all(undefined) or not any(undefined), "undefinedness must not depend on order"
    if undefined and all(undefined):
        return None
    return math.fsum(terms)


# --------------------------------------------------------------------------------------
# means over queries
# --------------------------------------------------------------------------------------

NO_RELEVANT_POLICIES = ("zero", "one", "skip", "nan", "raise")


def ref_mean(metric, y_true, y_score, qid, *, retrieved=None, ties="average",
             no_relevant="zero", docnos=None, **params):
    """Mean over queries of the per-query values, after the no_relevant policy.

    Rows with retrieved == False are their query's unretrieved docs (score ignored).
    no_relevant (value of an undefined query): "zero" -> 0, "one" -> 1,
    "skip" -> left out, "nan" -> NaN, "raise" -> ValueError.
    Returns (mean as float, {qid: per-query value}); skipped queries are absent from
    the dict; NaN when no query is left.
    """
    if no_relevant not in NO_RELEVANT_POLICIES:
        raise ValueError(f"no_relevant must be one of {NO_RELEVANT_POLICIES}, got {no_relevant!r}")
    y_true = list(y_true)
    if metric not in ("bpref", "infap", "judged"):
        # skrank's label rule: a negative label is a non-relevant document of gain 0
        y_true = [max(label, 0) for label in y_true]
    y_score = list(y_score)
    qid = list(qid)
    n = len(y_true)
    if len(y_score) != n or len(qid) != n:
        raise ValueError("y_true, y_score and qid must have the same length")
    retrieved = [True] * n if retrieved is None else [bool(r) for r in retrieved]
    docnos = [None] * n if docnos is None else list(docnos)

    queries = {}  # qid -> dict of lists, in first-appearance order
    for row in range(n):
        q = queries.setdefault(qid[row], {"labels": [], "scores": [], "docnos": [],
                                          "unretrieved": []})
        if retrieved[row]:
            q["labels"].append(y_true[row])
            q["scores"].append(y_score[row])
            q["docnos"].append(docnos[row])
        else:
            q["unretrieved"].append(y_true[row])

    per_query, weights = {}, {}
    for q_id, q in queries.items():
        value = ref_query_value(metric, q["labels"], q["scores"], q["unretrieved"], ties=ties,
                                docnos=q["docnos"] if ties == "trec" else None, **params)
        weigh = REFERENCE_QUERY_WEIGHTS.get(metric)
        weights[q_id] = 1.0 if weigh is None else weigh(q["labels"], **params)
        if value is None:
            if no_relevant == "zero":
                value = 0.0
            elif no_relevant == "one":
                value = 1.0
            elif no_relevant == "nan":
                value = float("nan")
            elif no_relevant == "raise":
                raise ValueError(f"query {q_id!r}: {metric} is undefined (no relevant document)")
            else:  # "skip"
                continue
        per_query[q_id] = float(value)

    if not per_query:
        return float("nan"), per_query
    total = sum(weights[q] for q in per_query)
    if total == 0:
        return float("nan"), per_query
    return float(sum(weights[q] * v for q, v in per_query.items()) / total), per_query


def ref_mean_2d(metric, Y_true, Y_score, **kw):
    """ref_mean for 2-D input: one query per row, qid = row index.

    A 2-D ``retrieved`` or ``docnos`` keyword is flattened the same way.
    """
    Y_true = np.asarray(Y_true)
    Y_score = np.asarray(Y_score)
    if Y_true.ndim != 2 or Y_true.shape != Y_score.shape:
        raise ValueError("Y_true and Y_score must be 2-D arrays of the same shape")
    n_q, n_d = Y_true.shape
    qid = [q for q in range(n_q) for _ in range(n_d)]
    for name in ("retrieved", "docnos"):
        if kw.get(name) is not None:
            kw[name] = [x for row in kw[name] for x in row]
    return ref_mean(metric, Y_true.ravel().tolist(), Y_score.ravel().tolist(), qid, **kw)


class FixedScores(RegressorMixin, BaseEstimator):
    """A regressor whose predictions are given scores: scorers then rank exactly those."""

    def __init__(self, scores=None):
        self.scores = scores

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        return self.scores
