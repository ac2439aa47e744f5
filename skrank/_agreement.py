"""Do two sets of judgements agree?  On the labels (Cohen's kappa, Krippendorff's
alpha, the confusion matrix, per query and overall) and on the system rankings
they induce (Kendall's tau, tau-AP, the pairs of systems that swap)."""

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._core.checks import InvalidParameterError, _describe, check_choice
from .io._fields import pair_codes, split_pair_codes
from .io._read import as_qrels
from ._evaluate import evaluate

KAPPA_WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _weights_matrix(n_labels, weights):
    """Cohen's disagreement weights over label indices (scikit-learn's definition)."""
    i = np.arange(n_labels)
    if weights is None:
        return 1.0 - np.eye(n_labels)
    diff = np.abs(i[:, None] - i[None, :]).astype(np.float64)
    return diff if weights == "linear" else diff ** 2


def _kappa(confusion, w):
    """Cohen's kappa of each confusion matrix of ``confusion`` (..., L, L); NaN where
    the expected disagreement is 0 (one label throughout)."""
    n = confusion.sum(axis=(-2, -1))
    expected = confusion.sum(axis=-1)[..., :, None] * confusion.sum(axis=-2)[..., None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = expected / n[..., None, None]
        observed_d = (w * confusion).sum(axis=(-2, -1))
        expected_d = (w * expected).sum(axis=(-2, -1))
        return np.where(expected_d > 0, 1.0 - observed_d / np.where(expected_d > 0, expected_d, 1),
                        np.nan)


@dataclass(frozen=True, eq=False)
class Agreement:
    """Result of :func:`skrank.judging.agreement`.

    Attributes
    ----------
    kappa : float
        Cohen's kappa over every common pair (NaN when one label is used
        throughout: agreement beyond chance is then undefined).
    confusion : ndarray of int64 of shape (n_labels, n_labels)
        Pairs with label ``labels[i]`` in ``a`` and ``labels[j]`` in ``b``.
    labels : ndarray
        The labels (grades, or 0/1 with ``threshold``), sorted.
    qid : ndarray of str
        Queries with at least one common pair.
    per_query_kappa : ndarray of float
        Each query's kappa (NaN where undefined).
    per_query_n : ndarray of int64
        Each query's common pairs.
    n_common, n_only_a, n_only_b : int
        Pairs judged by both, by ``a`` only, by ``b`` only (negative grades,
        "unjudged", count as not judged).
    weights : str or None
    """

    kappa: float
    confusion: np.ndarray
    labels: np.ndarray
    qid: np.ndarray
    per_query_kappa: np.ndarray
    per_query_n: np.ndarray
    n_common: int
    n_only_a: int
    n_only_b: int
    weights: object

    def to_pandas(self):
        """Per-query kappa and common pairs, indexed by qid (needs pandas)."""
        import pandas as pd

        return pd.DataFrame({"kappa": self.per_query_kappa, "n_common": self.per_query_n},
                            index=pd.Index(self.qid, name="qid"))

    def confusion_frame(self):
        """The confusion matrix as a DataFrame (rows: ``a``'s labels, columns: ``b``'s)."""
        import pandas as pd

        return pd.DataFrame(self.confusion, index=pd.Index(self.labels, name="a"),
                            columns=pd.Index(self.labels, name="b"))

    def __repr__(self):
        return (f"Agreement(kappa={self.kappa:.4f}, n_common={self.n_common}, "
                f"n_only_a={self.n_only_a}, n_only_b={self.n_only_b}, weights={self.weights!r})")


def _as_judged(func, value, name):
    """The judged pairs (grade >= 0) of one qrels: query ids, document ids, grades;
    a pair judged twice is an error."""
    q = as_qrels(func, value, name)
    judged = q.rel >= 0
    qid, docno = q.qid[judged], q.docno[judged]
    codes, qids, docnos = pair_codes(qid, docno)
    uniques, counts = np.unique(codes, return_counts=True)
    if (counts > 1).any():
        qq, d = split_pair_codes(uniques[np.flatnonzero(counts > 1)[:1]], qids, docnos)
        raise ValueError(f"{func}: {name} judges document {str(d[0])!r} of query "
                         f"{str(qq[0])!r} more than once. Keep one judgement per pair.")
    return qid, docno, q.rel[judged]


def agreement(a, b, *, weights=None, threshold=None):
    """Agreement of two sets of judgements on the pairs both judge.

    Parameters
    ----------
    a, b : qrels
        Two judgements of (query, document) pairs, e.g. people's and an LLM's,
        in any form :func:`skrank.evaluate` takes.  Negative grades
        ("unjudged") count as not judged.
    weights : {None, "linear", "quadratic"}, default=None
        Cohen's kappa unweighted, or weighted by the distance of the labels'
        positions in the sorted list of labels (graded judgements);
        :func:`sklearn.metrics.cohen_kappa_score`'s definition.
    threshold : int or None, default=None
        Binarise both first: relevant (1) when the grade is at least
        ``threshold``, else 0.

    Returns
    -------
    result : Agreement
        Overall kappa and confusion matrix, each query's kappa, the counts of
        pairs judged by both or one side only.

    Examples
    --------
    >>> from skrank.judging import agreement
    >>> human = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 0, "d2": 1}}
    >>> llm = {"q1": {"d1": 2, "d2": 1, "d3": 1}, "q2": {"d1": 0, "d4": 1}}
    >>> res = agreement(human, llm)
    >>> res.n_common, res.n_only_a, res.n_only_b
    (4, 1, 1)
    >>> res.confusion.tolist()
    [[1, 1, 0], [0, 1, 0], [0, 0, 1]]

    Observed agreement 3/4; by chance, from the margins (2, 1, 1) and
    (1, 2, 1) of 4: (2*1 + 1*2 + 1*1) / 16 = 5/16; kappa = (3/4 - 5/16) /
    (1 - 5/16) = 7/11:

    >>> round(res.kappa, 6) == round(7 / 11, 6)
    True
    """
    func = "agreement"
    if weights is not None:
        check_choice(func, "weights", weights, KAPPA_WEIGHTS[1:])
    if threshold is not None and (isinstance(threshold, bool)
                                  or not isinstance(threshold, (int, np.integer))):
        raise InvalidParameterError(f"{func}: threshold must be None or an integer grade. Got "
                                    f"{_describe(threshold)} instead.")
    qid_a, docno_a, rel_a = _as_judged(func, a, "a")
    qid_b, docno_b, rel_b = _as_judged(func, b, "b")
    keys, _, _ = pair_codes(np.concatenate([qid_a, qid_b]), np.concatenate([docno_a, docno_b]))
    keys_a, keys_b = keys[:qid_a.shape[0]], keys[qid_a.shape[0]:]
    common, ia, ib = np.intersect1d(keys_a, keys_b, assume_unique=True, return_indices=True)
    if common.shape[0] == 0:
        raise ValueError(f"{func}: a and b must judge some pair in common to measure their "
                         f"agreement. Got {keys_a.shape[0]} and {keys_b.shape[0]} judged pairs, "
                         f"none shared (do the query and document ids match?).")
    la, lb = rel_a[ia], rel_b[ib]
    if threshold is not None:
        la, lb = (la >= threshold).astype(np.int64), (lb >= threshold).astype(np.int64)
    labels, codes = np.unique(np.concatenate([la, lb]), return_inverse=True)
    codes = codes.reshape(-1)
    ca, cb = codes[:la.shape[0]], codes[la.shape[0]:]
    n_labels = labels.shape[0]
    qids, qcode = np.unique(qid_a[ia], return_inverse=True)
    qcode = qcode.reshape(-1)
    cells = np.bincount((qcode * n_labels + ca) * n_labels + cb,
                        minlength=qids.shape[0] * n_labels * n_labels)
    per_query = cells.reshape(qids.shape[0], n_labels, n_labels)
    confusion = per_query.sum(axis=0)
    w = _weights_matrix(n_labels, weights)
    return Agreement(kappa=float(_kappa(confusion.astype(np.float64), w)),
                     confusion=confusion.astype(np.int64), labels=labels, qid=qids,
                     per_query_kappa=_kappa(per_query.astype(np.float64), w),
                     per_query_n=per_query.sum(axis=(1, 2)).astype(np.int64),
                     n_common=int(common.shape[0]),
                     n_only_a=int(keys_a.shape[0] - common.shape[0]),
                     n_only_b=int(keys_b.shape[0] - common.shape[0]), weights=weights)


@dataclass(frozen=True, eq=False)
class KrippendorffAlpha:
    """Result of :func:`skrank.judging.krippendorff_alpha` with ``per_query=True``.

    Attributes
    ----------
    alpha : float
        Over every pair judged by two judges or more (what ``per_query=False``
        returns).
    qid : ndarray of str
        Queries with at least one pair judged by two judges or more.
    per_query_alpha : ndarray of float
        Each query's alpha, its pairs taken as reliability data of their own
        (ordinal distances from the query's own grade frequencies).  NaN
        where alpha is undefined: the query's pairable judgements use one
        grade only (no disagreement to expect), as ``Agreement.per_query_kappa``
        is NaN for a query with one label; ``n_undefined`` counts them.
    per_query_n : ndarray of int64
        Each query's pairs judged by two judges or more.
    level : str
    """

    alpha: float
    qid: np.ndarray
    per_query_alpha: np.ndarray
    per_query_n: np.ndarray
    level: str

    @property
    def n_undefined(self):
        """Queries whose alpha is undefined (NaN): one grade on all their pairs."""
        return int(np.isnan(self.per_query_alpha).sum())

    def to_pandas(self):
        """Per-query alpha and pairable pairs, indexed by qid (needs pandas)."""
        import pandas as pd

        return pd.DataFrame({"alpha": self.per_query_alpha, "n_pairs": self.per_query_n},
                            index=pd.Index(self.qid, name="qid"))

    def __repr__(self):
        return (f"KrippendorffAlpha(alpha={self.alpha:.4f}, level={self.level!r}, "
                f"n_queries={self.qid.shape[0]}, n_undefined={self.n_undefined})")


def krippendorff_alpha(sources, *, level="ordinal", per_query=False):
    """Krippendorff's alpha of several judges over the (query, document) pairs.

    Parameters
    ----------
    sources : mapping of str -> qrels
        At least two judges' judgements (any form :func:`skrank.evaluate`
        takes).  A judge may leave pairs out (negative grades count as not
        judged); pairs judged by fewer than two judges do not count.
    level : {"nominal", "ordinal", "interval", "ratio"}, default="ordinal"
        Level of measurement of the grades, which sets the distance between
        two grades (Krippendorff 2011).
    per_query : bool, default=False
        Also each query's alpha (one coincidence matrix per query, built for
        all queries at once): a :class:`KrippendorffAlpha` instead of a float.

    Returns
    -------
    alpha : float or KrippendorffAlpha
        1 is perfect agreement, 0 agreement at chance level.  With
        ``per_query``: the overall alpha, each query's (NaN where undefined,
        counted by ``n_undefined``) and its pairs.

    Examples
    --------
    >>> from skrank.judging import krippendorff_alpha
    >>> a = {"q1": {"d1": 1, "d2": 0, "d3": 1}}
    >>> b = {"q1": {"d1": 1, "d2": 0, "d3": 0}}
    >>> round(krippendorff_alpha({"a": a, "b": b}, level="nominal"), 4)
    0.4444

    Per query: on q2 the judges agree on two grades (alpha 1); on q3 they use
    one grade only, so there is no disagreement to expect and alpha is
    undefined (NaN, counted):

    >>> a2 = {**a, "q2": {"d1": 2, "d2": 0}, "q3": {"d1": 1, "d2": 1}}
    >>> b2 = {**b, "q2": {"d1": 2, "d2": 0}, "q3": {"d1": 1, "d2": 1}}
    >>> res = krippendorff_alpha({"a": a2, "b": b2}, level="nominal", per_query=True)
    >>> res.qid.tolist(), res.per_query_alpha.round(4).tolist(), res.n_undefined
    (['q1', 'q2', 'q3'], [0.4444, 1.0, nan], 1)
    """
    func = "krippendorff_alpha"
    check_choice(func, "level", level, LEVELS)
    if not isinstance(per_query, (bool, np.bool_)):
        raise InvalidParameterError(f"{func}: per_query must be True or False. Got "
                                    f"{_describe(per_query)} instead.")
    if not isinstance(sources, Mapping) or len(sources) < 2:
        raise InvalidParameterError(f"{func}: sources must be a mapping of at least 2 judges' "
                                    f"qrels. Got {_describe(sources)} instead.")
    judged = [_as_judged(func, v, f"sources[{k!r}]") for k, v in sources.items()]
    unit_qid = np.concatenate([q for q, _, _ in judged])
    keys, _, _ = pair_codes(unit_qid, np.concatenate([d for _, d, _ in judged]))
    grades = np.concatenate([g for _, _, g in judged])
    units, first, unit = np.unique(keys, return_index=True, return_inverse=True)
    values, value = np.unique(grades, return_inverse=True)
    unit, value = unit.reshape(-1), value.reshape(-1)
    n_v = values.shape[0]
    # n_uc: the judges giving grade c to unit u; m_u: the judges of unit u
    counts = np.bincount(unit * n_v + value, minlength=units.shape[0] * n_v)
    counts = counts.reshape(units.shape[0], n_v).astype(np.float64)
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, m, unit_qid = counts[pairable], m[pairable], unit_qid[first][pairable]
    if counts.shape[0] == 0:
        raise ValueError(f"{func}: at least one pair must be judged by 2 or more judges. Got "
                         f"none.")
    # the coincidence matrix: o_ck = sum_u (n_uc n_uk - [c == k] n_uc) / (m_u - 1)
    scaled = counts / (m - 1)[:, None]
    coincidence = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    delta = _distances(values.astype(np.float64), n_c, level)
    expected = (n_c[:, None] * n_c[None, :] * delta).sum()
    if expected == 0:
        raise ValueError(f"{func}: the judges must give at least 2 different grades (at "
                         f"distinct distances) for alpha to be defined. Got only "
                         f"{values.tolist()} on the pairs judged twice or more.")
    alpha = float(1.0 - (n - 1) * (coincidence * delta).sum() / expected)
    if not per_query:
        return alpha
    qids, qcode = np.unique(unit_qid, return_inverse=True)
    qcode = qcode.reshape(-1)
    per_q = _coincidences_by_query(counts, m, qcode, qids.shape[0])
    n_qc = per_q.sum(axis=2)
    delta_q = _distances(values.astype(np.float64), n_qc, level)
    expected_q = (n_qc[:, :, None] * n_qc[:, None, :] * delta_q).sum(axis=(1, 2))
    observed_q = (per_q * delta_q).sum(axis=(1, 2))
    defined = expected_q > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha_q = np.where(defined, 1.0 - (n_qc.sum(axis=1) - 1) * observed_q
                           / np.where(defined, expected_q, 1.0), np.nan)
    return KrippendorffAlpha(alpha=alpha, qid=qids, per_query_alpha=alpha_q,
                             per_query_n=np.bincount(qcode, minlength=qids.shape[0]
                                                     ).astype(np.int64), level=level)


def _coincidences_by_query(counts, m, qcode, n_queries):
    """The coincidence matrix of each query's units, (n_queries, n_values, n_values):
    ``o_qck = sum_{u in q} (n_uc n_uk - [c == k] n_uc) / (m_u - 1)``, summed by one
    bincount over (query, c, k) codes of the pairs of grades present in each unit
    (a unit holds at most one entry per grade, so the pairs are few)."""
    n_v = counts.shape[1]
    u, c = np.nonzero(counts)                  # by unit, then grade
    n_uc = counts[u, c]
    per_unit = np.bincount(u, minlength=counts.shape[0])
    start = np.cumsum(per_unit) - per_unit     # first entry of each unit
    reps = per_unit[u]                         # each entry meets every entry of its unit
    left = np.repeat(np.arange(u.shape[0]), reps)
    offset = np.arange(left.shape[0]) - np.repeat(np.cumsum(reps) - reps, reps)
    right = start[u[left]] + offset
    weight = (n_uc[left] * n_uc[right] - (left == right) * n_uc[left]) / (m[u[left]] - 1)
    code = (qcode[u[left]] * n_v + c[left]) * n_v + c[right]
    cells = np.bincount(code, weights=weight, minlength=n_queries * n_v * n_v)
    return cells.reshape(n_queries, n_v, n_v)


def _distances(values, n_c, level):
    """Squared distances delta^2 between grades (Krippendorff 2011); ordinal ones
    from the grade frequencies ``n_c``, (n_values,) or (n_queries, n_values)."""
    if level == "nominal":
        return 1.0 - np.eye(values.shape[0])
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ratio":
        total = values[:, None] + values[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            d = ((values[:, None] - values[None, :]) / total) ** 2
        return np.where(total == 0, 0.0, d)
    # ordinal: (sum of n_g for g from c to k, less half of n_c and n_k)^2, from the
    # frequencies n_c (..., n_values): one matrix per leading index (per query)
    cum = np.concatenate([np.zeros(n_c.shape[:-1] + (1,)), np.cumsum(n_c, axis=-1)], axis=-1)
    i = np.arange(values.shape[0])
    lo, hi = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
    between = cum[..., hi + 1] - cum[..., lo] - (n_c[..., :, None] + n_c[..., None, :]) / 2
    return between ** 2


# --------------------------------------------------------------------------------------
# system rankings
# --------------------------------------------------------------------------------------


TAU_AP_TIES = ("a", "b", "error")


def tau_ap(reference, estimate, *, ties="a"):
    """AP rank correlation, tau-AP (Yilmaz, Aslam and Robertson 2008), with ties
    treated as Urbano and Marrero (2017) do.

    Kendall's tau counts every discordant pair alike; tau-AP weighs the top
    of the ranking more: going down the ranking by ``estimate`` (highest
    first), each system at position ``i > 1`` adds the share of the ``i - 1``
    systems above it that ``reference`` also places above it;
    ``tau_AP = 2 * mean(share) - 1``.  It is not symmetric: ``reference`` is
    the ranking taken as true (e.g. under people's judgements).

    Parameters
    ----------
    reference, estimate : array-like of float of shape (n_systems,)
        One score per system (higher ranks higher), e.g. mean nDCG under two
        qrels.
    ties : {"a", "b", "error"}, default="a"
        Ties of scores (Urbano and Marrero, "The Treatment of Ties in AP
        Correlation", ICTIR 2017):

        * ``"a"``, tau_AP_a, the accuracy of an estimate against a true
          ranking: ``reference`` must not tie; systems tied in ``estimate``
          count as in every order of the tie alike, so tau_AP_a is the mean of
          tau-AP over all the ways to break the estimate's ties.  Without ties
          it is tau-AP itself.
        * ``"b"``, tau_AP_b, the agreement of two rankings with ties in both
          (none taken as true): in each direction, each system outside the top
          tie group adds the share of the systems strictly above its tie group
          that the other ranking also places strictly above it; tau_AP_b is the
          mean of the two directions.  It is symmetric, and without ties it is
          ``(tau_ap(x, y) + tau_ap(y, x)) / 2``, not tau-AP.  Undefined (an
          error) when either ranking ties every system.
        * ``"error"``: plain tau-AP; any tie is an error.

    Returns
    -------
    tau_ap : float in [-1, 1]

    Notes
    -----
    scipy has no tau-AP: :func:`scipy.stats.weightedtau` is Vigna's weighted
    Kendall tau (hyperbolic weights on the ranks of both rankings, symmetric),
    a different top-weighted coefficient.  The values here agree with the
    ``ircor`` R package of Urbano (``tauAP``, ``tauAP_a``, ``tauAP_b``).

    Examples
    --------
    Systems A > B > C > D by ``reference``; swapping the top two costs more
    than swapping the bottom two (Kendall's tau is 2/3 for both):

    >>> from skrank.judging import tau_ap
    >>> ref = [4, 3, 2, 1]
    >>> round(tau_ap(ref, [3, 4, 2, 1]), 4), round(tau_ap(ref, [4, 3, 1, 2]), 4)
    (0.3333, 0.7778)

    A tie of the top two in the estimate is the mean of its two orders:

    >>> round(tau_ap(ref, [4, 4, 2, 1]), 4), round((1 + 1 / 3) / 2, 4)
    (0.6667, 0.6667)

    With ties in the reference too, tau_AP_b.  Down the estimate, B has A above
    it, whom the reference ties with B (0/1), C and D have 2/2 and 3/3: 2 * 2/3 - 1;
    down the reference, C and D have only systems above them in the estimate too
    (A and B tie at the top and are not counted): 1.  tau_AP_b = (1/3 + 1) / 2:

    >>> round(tau_ap([4, 4, 2, 1], [4, 3, 2, 1], ties="b"), 4)
    0.6667
    """
    func = "tau_ap"
    check_choice(func, "ties", ties, TAU_AP_TIES)
    ref = np.asarray(reference, dtype=np.float64).reshape(-1)
    est = np.asarray(estimate, dtype=np.float64).reshape(-1)
    if ref.shape != est.shape or ref.shape[0] < 2:
        raise InvalidParameterError(f"{func}: reference and estimate must hold one score per "
                                    f"system, at least 2 systems. Got {ref.shape[0]} and "
                                    f"{est.shape[0]} scores instead.")
    if not (np.isfinite(ref).all() and np.isfinite(est).all()):
        raise ValueError(f"{func}: scores must be finite. Got NaN or inf.")
    ref_ties = np.unique(ref).shape[0] < ref.shape[0]
    est_ties = np.unique(est).shape[0] < est.shape[0]
    if ties == "b":
        if np.all(ref == ref[0]) or np.all(est == est[0]):
            raise ValueError(f"{func}: tau_AP_b is undefined when one ranking ties every "
                             f"system. Got {'reference' if np.all(ref == ref[0]) else 'estimate'}"
                             f" with one score, {ref[0] if np.all(ref == ref[0]) else est[0]:g}.")
        return float((_tau_ap_b_one_way(ref, est) + _tau_ap_b_one_way(est, ref)) / 2)
    if ties == "error" and (ref_ties or est_ties):
        raise ValueError(f"{func}: with ties='error', reference and estimate must not tie. Got "
                         f"ties in {'reference' if ref_ties else 'estimate'}. Pass ties='a' "
                         f"(ties in the estimate only) or ties='b' (ties in both).")
    if ref_ties:
        raise ValueError(f"{func}: with ties='a' (the accuracy of an estimate against a true "
                         f"ranking), reference must not tie. Got tied reference scores. Pass "
                         f"ties='b' (Urbano and Marrero's tau_AP_b, for ties in both).")
    return float(_tau_ap_a(ref, est))


def _harmonic(n):
    """H[k] = 1 + 1/2 + ... + 1/k for k = 0..n."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])


def _tau_ap_a(ref, est):
    """tau_AP_a (reference without ties): the expectation of tau-AP over the orders of
    the estimate's tie groups, in closed form.  A system with ``above`` systems strictly
    above its tie group of size ``t`` lands at position ``above + k`` (k = 1..t) with
    probability 1/t: its concordant systems above the group weigh the mean of
    ``1 / (above + k - 1)``; each of the ``k - 1`` group mates above it is concordant
    with probability 1/2."""
    n = ref.shape[0]
    higher = est[None, :] > est[:, None]            # [i, j]: j strictly above i's group
    above = higher.sum(axis=1)
    tied = (est[None, :] == est[:, None]).sum(axis=1)
    concordant = (higher & (ref[None, :] > ref[:, None])).sum(axis=1)
    h = _harmonic(n)
    # mean over k = 1..t of 1 / (above + k - 1); 0 for the top group (no one above)
    lo = np.maximum(above - 1, 0)
    weight = np.where(above > 0, (h[above + tied - 1] - h[lo]) / tied, 0.0)
    # untied systems: exactly tau-AP's 1 / (position - 1), free of the harmonic sums' rounding
    weight = np.where((tied == 1) & (above > 0), 1.0 / np.maximum(above, 1), weight)
    # (1 / 2t) sum_{k=1}^{t-1} k / (above + k) per system of the group
    within = ((tied - 1) - above * (h[above + tied - 1] - h[above])) / (2 * tied)
    return 2 * ((concordant * weight).sum() + within.sum()) / (n - 1) - 1


def _tau_ap_b_one_way(ref, est):
    """One direction of tau_AP_b: down ``est``'s tie groups, each system outside the top
    group adds the share of the systems strictly above its group that ``ref`` places
    strictly above it."""
    higher = est[None, :] > est[:, None]
    above = higher.sum(axis=1)
    concordant = (higher & (ref[None, :] > ref[:, None])).sum(axis=1)
    counted = above > 0
    return 2 * (concordant[counted] / above[counted]).mean() - 1


@dataclass(frozen=True, eq=False)
class RankingAgreement:
    """Result of :func:`skrank.judging.ranking_agreement`.

    Attributes
    ----------
    metric : str
    systems : list of str
    mean_a, mean_b : dict of str -> float
        Each system's mean under ``qrels_a`` and ``qrels_b``.
    kendall_tau : float
        :func:`scipy.stats.kendalltau` (tau-b) of the two lists of means.
    tau_ap : float
        :func:`skrank.judging.tau_ap` with ``qrels_a``'s ranking as reference,
        tie-aware: tau_AP_a while ``qrels_a``'s means do not tie (tau-AP itself
        when neither side ties), tau_AP_b when they do (``tau_ap_ties`` says
        which).  NaN when tau_AP_b is undefined, as ``kendall_tau`` is: every
        system ties under one qrels.
    swapped : list of (str, str)
        Pairs of systems ordered one way under ``qrels_a`` and the other way
        under ``qrels_b`` (the first of each pair is ahead under ``qrels_a``).
    tau_ap_ties : {"a", "b"}
        Which tie-aware tau-AP ``tau_ap`` is (see :func:`skrank.judging.tau_ap`):
        Urbano and Marrero's tau_AP_a or tau_AP_b.
    """

    metric: str
    systems: list
    mean_a: dict
    mean_b: dict
    kendall_tau: float
    tau_ap: float
    swapped: list
    tau_ap_ties: str = "a"

    @property
    def n_swapped(self):
        return len(self.swapped)

    def to_pandas(self):
        """Per system: its mean and rank under each qrels (needs pandas)."""
        import pandas as pd

        frame = pd.DataFrame({"mean_a": self.mean_a, "mean_b": self.mean_b})
        frame["rank_a"] = frame["mean_a"].rank(ascending=False, method="min").astype(int)
        frame["rank_b"] = frame["mean_b"].rank(ascending=False, method="min").astype(int)
        frame.index.name = "system"
        return frame

    def __repr__(self):
        return (f"RankingAgreement({self.metric}: kendall_tau={self.kendall_tau:.4f}, "
                f"tau_ap_{self.tau_ap_ties}={self.tau_ap:.4f}, {self.n_swapped} of "
                f"{len(self.systems) * (len(self.systems) - 1) // 2} system pairs swapped)")


def ranking_agreement(runs, qrels_a, qrels_b, *, metric="ndcg@10", tau_ap_ties=None,
                      **evaluate_options):
    """Do two sets of judgements rank the systems alike?

    Each run is evaluated on ``metric`` with :func:`skrank.evaluate` under
    both qrels; the two lists of system means are compared.

    Parameters
    ----------
    runs : mapping of str -> run
        At least two systems (any run form :func:`skrank.evaluate` takes).
    qrels_a, qrels_b : qrels
        The reference judgements (e.g. people's) and the others (e.g. an LLM's).
    metric : str, default="ndcg@10"
        The metric the systems are ranked by, one name :func:`skrank.evaluate` takes.
    tau_ap_ties : {None, "a", "b"}, default=None
        How tau-AP treats systems with equal means (see :func:`tau_ap`): None
        picks tau_AP_a (``qrels_a`` taken as true) unless ``qrels_a``'s means
        tie, then tau_AP_b; ``"a"`` (an error when ``qrels_a``'s means tie) or
        ``"b"`` (symmetric; tau-AP of both directions averaged even without
        ties) always.
    **evaluate_options
        Passed to :func:`skrank.evaluate` (``missing_queries``, ``threshold``, ...).

    Returns
    -------
    result : RankingAgreement
        Kendall's tau (tau-b, which accounts for ties), tau-AP, and the pairs
        of systems that swap.

    Examples
    --------
    Three systems, and two judges who disagree on which document is relevant:

    >>> from skrank.judging import ranking_agreement
    >>> runs = {"s1": {"q1": {"a": 3, "b": 2, "c": 1}},
    ...         "s2": {"q1": {"b": 3, "c": 2, "a": 1}},
    ...         "s3": {"q1": {"c": 3, "a": 2, "b": 1}}}
    >>> res = ranking_agreement(runs, {"q1": {"a": 1}}, {"q1": {"b": 1}}, metric="p@1")
    >>> res.mean_a, res.mean_b
    ({'s1': 1.0, 's2': 0.0, 's3': 0.0}, {'s1': 0.0, 's2': 1.0, 's3': 0.0})
    >>> res.swapped          # s1 is ahead of s2 under the first qrels, behind under the second
    [('s1', 's2')]
    >>> round(res.kendall_tau, 6)   # tau-b: (0 concordant - 1 discordant) / sqrt(2 * 2)
    -0.5

    s2 and s3 tie under the first qrels, s1 and s3 under the second, so tau-AP
    is Urbano and Marrero's tau_AP_b.  Down the second qrels' ranking, s1 and
    s3 have s2 above them, whom the first does not place above either (0/1);
    down the first's, s2 and s3 have s1 above them, whom the second does not
    place above either: both directions are 2 * 0 - 1:

    >>> res.tau_ap_ties, res.tau_ap
    ('b', -1.0)
    """
    from scipy import stats

    func = "ranking_agreement"
    if tau_ap_ties is not None:
        check_choice(func, "tau_ap_ties", tau_ap_ties, ("a", "b"))
    if not isinstance(runs, Mapping) or len(runs) < 2:
        raise InvalidParameterError(f"{func}: runs must be a mapping of at least 2 system "
                                    f"names -> runs. Got {_describe(runs)} instead.")
    if not isinstance(metric, str):
        raise InvalidParameterError(f"{func}: metric must be one metric name such as "
                                    f"'ndcg@10'. Got {_describe(metric)} instead.")
    systems = [str(s) for s in runs]
    means = np.empty((2, len(systems)))
    for j, run in enumerate(runs.values()):   # a loop over systems (few)
        for i, qrels in enumerate((qrels_a, qrels_b)):
            means[i, j] = evaluate(qrels=qrels, run=run, metrics=[metric],
                                   **evaluate_options).mean[metric]
    a, b = means
    if np.all(a == a[0]) or np.all(b == b[0]):
        tau = float("nan")   # every system ties under one qrels: no ranking to correlate
    else:
        tau = float(stats.kendalltau(a, b)[0])
    swapped = [(systems[i], systems[j]) if a[i] > a[j] else (systems[j], systems[i])
               for i, j in itertools.combinations(range(len(systems)), 2)
               if (a[i] - a[j]) * (b[i] - b[j]) < 0]
    variant = tau_ap_ties
    if variant is None:
        variant = "b" if np.unique(a).shape[0] < a.shape[0] else "a"
    if variant == "b" and (np.all(a == a[0]) or np.all(b == b[0])):
        tap = float("nan")   # undefined, as Kendall's tau is here
    else:
        tap = tau_ap(a, b, ties=variant)
    return RankingAgreement(metric=metric, systems=systems,
                            mean_a=dict(zip(systems, a.tolist())),
                            mean_b=dict(zip(systems, b.tolist())), kendall_tau=tau,
                            tau_ap=tap, swapped=swapped, tau_ap_ties=variant)
