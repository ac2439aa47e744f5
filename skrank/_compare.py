"""Is B better than A?  Paired tests, intervals, effect sizes and corrections.

Per-query values of several systems, paired by query id, are the unit.
scipy.stats does the work where it has the test (``ttest_rel``, ``wilcoxon``,
``binomtest``, ``false_discovery_control``); the resampling tests draw their
sign vectors, bootstrap counts and row permutations for all comparisons at
once and reduce them with one matrix product per batch, never a Python loop
per resample.
"""

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from ._core.checks import InvalidParameterError, _describe, check_choice, check_k, check_real
from ._engine.codes import factorize_qid
from ._paired_tests import (
    _TIE_TOLERANCE,
    _analytic_p,
    _bootstrap_interval,
    _bootstrap_means,
    _fdr_bh,
    _holm,
    _randomization_p,
    _tolerance,
    _tukey_p,
    stats,
)
from . import _simultaneous as S


TESTS = ("randomization", "t", "wilcoxon", "bootstrap", "sign")


CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "tukey")


INTERVALS = ("bca", "percentile", "t")


# Resamples of one call at most: the bootstrap keeps one mean per resample and column
# (10**8 is 0.8 GB a column); p-values are then resolved to 1e-8 already.
MAX_RESAMPLES = 10 ** 8


QUERY_POLICIES = ("same", "common")


@dataclass(frozen=True)
class PairComparison:
    """One paired comparison: ``system_b`` against ``system_a`` on one metric.

    Differences are ``system_b - system_a`` per query: positive means
    ``system_b`` scores higher.

    Attributes
    ----------
    metric : str
    system_a, system_b : str
        The two systems (``system_a`` is the baseline when one is given).
    mean_a, mean_b : float
        Mean over the paired queries of each system.
    difference : float
        ``mean_b - mean_a``, the mean of the per-query differences.
    ci_low, ci_high : float
        Confidence interval of ``difference`` at the call's ``confidence``.
    effect_size : float
        Standardised mean difference: ``difference`` divided by the standard
        deviation of the per-query differences (Cohen's d for paired data,
        d_z); 0 when all differences are 0, +-inf when they are all equal and
        non-zero.
    wins, ties, losses : int
        Queries where ``system_b`` scores higher than, equal to, lower than
        ``system_a`` (values within 1e-12 of each other, relatively, are
        equal: their difference is rounding).
    p_value : float
        Two-sided p-value of the call's test, before correction.
    p_adjusted : float
        p-value after the call's correction (equal to ``p_value`` without one).
    significant : bool
        ``p_adjusted <= alpha``.
    """

    metric: str
    system_a: str
    system_b: str
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    p_value: float
    p_adjusted: float
    significant: bool

    @property
    def verdict(self):
        """``"B > A"``, ``"B < A"`` or ``"no significant difference"`` in words."""
        if not self.significant or self.difference == 0:
            return "no significant difference"
        sign = ">" if self.difference > 0 else "<"
        return f"{self.system_b} {sign} {self.system_a}"


_COLUMNS = tuple(PairComparison.__dataclass_fields__)


@dataclass(frozen=True, eq=False)
class Comparison:
    """Result of :func:`skrank.compare`.

    Attributes
    ----------
    systems : list of str
        System names, in the order given.
    metrics : list of str
        Metrics compared.
    baseline : str or None
        The system every other one was compared with, or None (all pairs).
    pairs : list of PairComparison
        One per metric and pair of systems, metric by metric.
    means : dict of str -> dict of str -> float
        ``means[metric][system]``: mean over the paired queries.
    qid : ndarray of shape (n_queries,)
        The query ids the systems were paired on.
    n_dropped : dict of str -> int
        Queries of each system left out because another system lacks them
        (``queries="common"``; all 0 otherwise).
    test, correction, interval : str or None
        The test, the correction and the interval method used.
    alpha, confidence : float
    n_resamples : int or None
        Resamples drawn by the test (None for exact and analytic tests).
    exact : bool
        Whether the p-values are exact (the randomization test enumerates
        all 2**n_queries sign vectors when that is at most ``n_resamples``).
    interval_level : float
        The level each interval was computed at (``confidence`` when the
        intervals are per comparison; higher when they are simultaneous).
    coverage : str
        What the intervals cover, in words, e.g. ``"95% simultaneous over 6
        comparisons (Bonferroni: each at 99.17%)"``.
    n_no_relevant : int or None
        Paired queries without a relevant document (known when the results
        are :class:`~skrank.Evaluation` objects; None otherwise).  Every
        system scores them alike (0 by default), so they count as ties in
        ``wins/ties/losses`` and pull the differences towards 0.
    """

    systems: list
    metrics: list
    baseline: object
    pairs: list
    means: dict
    qid: np.ndarray
    n_dropped: dict
    test: str
    correction: object
    interval: str
    alpha: float
    confidence: float
    n_resamples: object
    exact: bool
    interval_level: float = None
    coverage: str = ""
    n_no_relevant: object = None

    @property
    def n_queries(self):
        return int(self.qid.shape[0])

    def to_pandas(self):
        """One row per metric and pair of systems, with the verdict (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised without pandas only
            raise ImportError("Comparison.to_pandas needs pandas: pip install pandas") from exc
        return pd.DataFrame([[getattr(p, c) for c in _COLUMNS] + [p.verdict] for p in self.pairs],
                            columns=[*_COLUMNS, "verdict"])

    def to_dict(self):
        """Plain-Python form (for JSON)."""
        def plain(value):
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, (Integral, np.integer)):
                return int(value)
            if isinstance(value, float) and not math.isfinite(value):
                return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
            return value

        return {
            "systems": list(self.systems), "metrics": list(self.metrics),
            "baseline": self.baseline, "n_queries": self.n_queries,
            "n_dropped": dict(self.n_dropped), "test": self.test,
            "correction": self.correction, "interval": self.interval, "alpha": self.alpha,
            "confidence": self.confidence, "n_resamples": self.n_resamples,
            "exact": self.exact, "interval_level": self.interval_level,
            "coverage": self.coverage, "n_no_relevant": self.n_no_relevant,
            "means": {m: {s: plain(v) for s, v in row.items()} for m, row in self.means.items()},
            "pairs": [{**{c: plain(getattr(p, c)) for c in _COLUMNS}, "verdict": p.verdict}
                      for p in self.pairs],
        }

    def _beaten(self):
        """For each (metric, system): the systems it is significantly better than."""
        beaten = {(m, s): [] for m in self.metrics for s in self.systems}
        for p in self.pairs:
            if p.significant and p.difference > 0:
                beaten[p.metric, p.system_b].append(p.system_a)
            elif p.significant and p.difference < 0:
                beaten[p.metric, p.system_a].append(p.system_b)
        return beaten

    def _table(self, sup):
        """Rows (system, cell per metric) of means marked with the letters of the
        systems each one beats significantly, and the legend."""
        letters = {s: _letter(i) for i, s in enumerate(self.systems)}
        beaten = self._beaten()
        rows = []
        for s in self.systems:
            cells = []
            for m in self.metrics:
                marks = "".join(sorted(letters[o] for o in beaten[m, s]))
                cells.append(f"{self.means[m][s]:.4f}" + (sup(marks) if marks else ""))
            rows.append((f"({letters[s]}) {s}", cells))
        how = f"{self.test} test"
        if self.correction is not None:
            how += f", {self.correction} correction"
        against = f" than the baseline ({letters[self.baseline]})" if self.baseline is not None else ""
        legend = (f"Mean over {self.n_queries} queries. A letter marks a significant improvement "
                  f"over that system{against} ({how}, alpha={self.alpha:g}).")
        return rows, legend

    def to_markdown(self):
        """A paper-style table of means (markdown); letters mark significant wins."""
        rows, legend = self._table(lambda marks: f"<sup>{marks}</sup>")
        lines = ["| system | " + " | ".join(self.metrics) + " |",
                 "|---|" + "---:|" * len(self.metrics)]
        lines += ["| " + name + " | " + " | ".join(cells) + " |" for name, cells in rows]
        return "\n".join(lines) + "\n\n" + legend + "\n"

    def to_latex(self):
        """A paper-style table of means (LaTeX tabular); letters mark significant wins."""
        def esc(text):
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"),
                         ("#", r"\#"), ("_", r"\_"), ("{", r"\{"), ("}", r"\}")):
                text = text.replace(a, b)
            return text

        rows, legend = self._table(lambda marks: f"$^{{{marks}}}$")
        lines = [r"\begin{tabular}{l" + "r" * len(self.metrics) + "}", r"\toprule",
                 "System & " + " & ".join(esc(m) for m in self.metrics) + r" \\", r"\midrule"]
        lines += [esc(name) + " & " + " & ".join(cells) + r" \\" for name, cells in rows]
        lines += [r"\bottomrule", r"\end{tabular}", "% " + legend]
        return "\n".join(lines) + "\n"

    def __repr__(self):
        how = f"test={self.test!r}" + (" (exact)" if self.exact else "")
        head = (f"Comparison of {len(self.systems)} systems on {self.n_queries} queries: {how}, "
                f"correction={self.correction!r}, alpha={self.alpha:g}, "
                f"{self.interval if self.coverage.find('Tukey') < 0 else 'Tukey'} intervals: "
                f"{self.coverage or f'{100 * self.confidence:g}%'}")
        dropped = {s: n for s, n in self.n_dropped.items() if n}
        if dropped:
            head += f"; queries left out: {dropped}"
        if self.n_no_relevant:
            head += (f"\n{self.n_no_relevant} of the {self.n_queries} queries have no relevant "
                     f"document: scored alike by every system, they count as ties in W/T/L")
        table = [("metric", "B vs A", "mean A", "mean B", "diff", "interval", "d", "W/T/L",
                  "p", "p adj", "verdict")]
        for p in self.pairs:
            table.append((p.metric, f"{p.system_b} vs {p.system_a}", f"{p.mean_a:.4f}",
                          f"{p.mean_b:.4f}", f"{p.difference:+.4f}",
                          f"[{p.ci_low:+.4f}, {p.ci_high:+.4f}]", f"{p.effect_size:+.2f}",
                          f"{p.wins}/{p.ties}/{p.losses}", format_p(p.p_value),
                          format_p(p.p_adjusted), p.verdict))
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                 for row in table]
        return head + "\n" + "\n".join(lines)

    __str__ = __repr__


def _no_relevant_among(results, qid):
    """How many of the paired queries ``qid`` have no relevant document, by the counts of
    the results that are Evaluations (None when none is)."""
    missing, known = np.zeros(0, dtype=qid.dtype), False
    for result in results.values():
        num_rel = getattr(result, "counts", None) and result.counts.get("num_rel")
        if num_rel is None or not hasattr(result, "qid"):
            continue
        known = True
        ids = np.asarray(result.qid)[np.asarray(num_rel) == 0]
        missing = np.union1d(missing, ids.astype(qid.dtype, copy=False))
    return int(np.isin(qid, missing).sum()) if known else None


def _letter(i):
    return "abcdefghijklmnopqrstuvwxyz"[i] if i < 26 else f"s{i}"


def format_p(p):
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def _per_query_of(func, name, result, metrics):
    """(qid array, {metric: values}) of one system's result."""
    if hasattr(result, "per_query") and hasattr(result, "qid"):  # an Evaluation
        return np.asarray(result.qid), dict(result.per_query)
    label = metrics[0] if metrics is not None and len(metrics) == 1 else "score"
    if hasattr(result, "index") and hasattr(result, "to_numpy"):  # pandas
        qid = np.asarray(result.index)
        if getattr(result, "ndim", 1) == 2:
            return qid, {str(c): result[c].to_numpy() for c in result.columns}
        return qid, {label: result.to_numpy()}
    if isinstance(result, tuple) and len(result) == 2:  # (qid, values), QueryScores
        return np.asarray(result[0]), {label: result[1]}
    if isinstance(result, Mapping):  # {qid: value}
        return np.asarray(list(result)), {label: list(result.values())}
    raise InvalidParameterError(
        f"{func}: results[{name!r}] must be what skrank.evaluate returns (an Evaluation), "
        f"a (qid, values) pair such as skrank.per_query_scores returns, a dict "
        f"{{qid: value}}, or a pandas Series/DataFrame indexed by qid. "
        f"Got {_describe(result)} instead."
    )


def _collect(func, results, metrics, queries):
    """Validated systems, metrics, paired qids and values of shape (n_metrics, n_systems, n)."""
    if not isinstance(results, Mapping):
        raise InvalidParameterError(
            f"{func}: results must be a mapping of system name -> per-query results, e.g. "
            f"{{'A': skrank.evaluate(...), 'B': skrank.evaluate(...)}}. "
            f"Got {_describe(results)} instead."
        )
    if len(results) < 2:
        raise InvalidParameterError(
            f"{func}: results must hold at least 2 systems to compare. "
            f"Got {len(results)} ({list(results)!r}) instead."
        )
    if isinstance(metrics, str):
        metrics = [metrics]
    elif metrics is not None:
        metrics = list(metrics)
        if not metrics or not all(isinstance(m, str) for m in metrics):
            raise InvalidParameterError(
                f"{func}: metrics must be None (every metric the systems share), a metric "
                f"name or a non-empty list of names. Got {_describe(metrics)} instead.")
    systems, metrics, per_system = _per_system(func, results, metrics)
    qids = [q.reshape(-1) if q.ndim else q.reshape(1) for q, _ in per_system]
    sizes = [q.shape[0] for q in qids]
    unique, system_codes, common = _paired_queries(func, systems, qids, queries)
    keep = np.flatnonzero(common)
    values = _values_by_query(func, systems, metrics, per_system, unique, system_codes, common)
    n_dropped = {s: int(size - keep.shape[0]) for s, size in zip(systems, sizes)}
    return systems, metrics, unique[keep], values, n_dropped


def _per_system(func, results, metrics):
    """System names (distinct as strings), the metrics to compare (those all systems
    share when None) and each system's ``(qid, {metric: values})``."""
    systems = [str(name) for name in results]
    if len(set(systems)) != len(systems):
        raise InvalidParameterError(f"{func}: system names must be distinct as strings. "
                                    f"Got {list(results)!r} instead.")
    per_system = [_per_query_of(func, name, res, metrics) for name, res in zip(systems, results.values())]
    if metrics is None:
        shared = set.intersection(*(set(values) for _, values in per_system))
        metrics = [m for m in per_system[0][1] if m in shared]
        if not metrics:
            raise ValueError(f"{func}: the systems share no metric. Got "
                             + "; ".join(f"{s!r}: {list(v)}" for s, (_, v) in zip(systems, per_system))
                             + ". Evaluate them with the same metrics.")
    for name, (_, values) in zip(systems, per_system):
        missing = [m for m in metrics if m not in values]
        if missing:
            raise InvalidParameterError(
                f"{func}: metrics must name metrics every system has: system {name!r} has "
                f"no values of {missing}. Its metrics are {list(values)}.")

    return systems, metrics, per_system


def _paired_queries(func, systems, qids, queries):
    """The query ids of all systems, each system's codes into them, and which queries
    every system has (checked: unique per system, the same in all with ``"same"``, at
    least 2 shared)."""
    kinds = {q.dtype.kind for q in qids}
    if len(kinds) > 1:  # e.g. int ids beside str ids: compare ids as Python objects
        qids = [q.astype(object) for q in qids]
    sizes = [q.shape[0] for q in qids]
    codes, unique, _ = factorize_qid(func, np.concatenate(qids))
    n_unique = unique.shape[0]
    present = np.zeros((len(systems), n_unique), dtype=bool)
    bounds = np.cumsum([0] + sizes)
    system_codes = [codes[bounds[i]:bounds[i + 1]] for i in range(len(systems))]
    for i, (name, c) in enumerate(zip(systems, system_codes)):
        counts = np.bincount(c, minlength=n_unique)
        if (counts > 1).any():
            dup = unique[np.flatnonzero(counts > 1)[0]]
            raise ValueError(f"{func}: query ids of system {name!r} must be unique. "
                             f"Got query {_show(dup)} {counts.max()} times.")
        present[i, c] = True
    common = present.all(axis=0)
    if not common.all() and queries == "same":
        first_missing = int(np.flatnonzero(~present.all(axis=0))[0])
        lacking = [s for s, has in zip(systems, present[:, first_missing]) if not has]
        described = ", ".join(f"{s!r}: {n}" for s, n in zip(systems, sizes))
        raise ValueError(
            f"{func}: every system must have the same queries. Got {described} queries, "
            f"{int(common.sum())} shared; query {_show(unique[first_missing])} is missing from "
            f"{lacking}. Pass queries='common' to compare on the {int(common.sum())} shared "
            f"queries, or evaluate every run on all queries of the qrels "
            f"(evaluate(..., missing_queries='zero'), trec_eval -c)."
        )
    n = int(common.sum())
    if n < 2:
        raise ValueError(f"{func}: at least 2 queries must be shared by all systems to compare "
                         f"them. Got {n} instead.")
    return unique, system_codes, common


def _values_by_query(func, systems, metrics, per_system, unique, system_codes, common):
    """The values of shape (n_metrics, n_systems, n_shared), columns in the order of the
    shared queries among ``unique`` (checked: real, finite, one per query id)."""
    n_unique = unique.shape[0]
    n = int(common.sum())
    keep = np.flatnonzero(common)
    position = np.full(n_unique, -1, dtype=np.intp)
    position[keep] = np.arange(n)
    values = np.empty((len(metrics), len(systems), n))
    for i, (name, (_, per_query)) in enumerate(zip(systems, per_system)):
        c = system_codes[i]
        mine = common[c]
        for j, metric in enumerate(metrics):
            try:
                column = np.asarray(per_query[metric], dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                raise TypeError(f"{func}: values of {metric!r} of system {name!r} must be real "
                                f"numbers. Got {_describe(per_query[metric])} instead.") from None
            if column.shape[0] != c.shape[0]:
                raise ValueError(f"{func}: system {name!r} must have one value of {metric!r} "
                                 f"per query id. Got {column.shape[0]} values and "
                                 f"{c.shape[0]} ids.")
            bad = ~np.isfinite(column)
            if bad.any():
                raise ValueError(
                    f"{func}: per-query values must be finite. Got {int(bad.sum())} "
                    f"non-finite value(s) of {metric!r} for system {name!r} (query "
                    f"{_show(unique[c[np.flatnonzero(bad)[0]]])}). Queries without a relevant "
                    f"document hold NaN with no_relevant='skip' or 'nan': evaluate with "
                    f"no_relevant='zero' (or 'one') to compare systems on every query.")
            values[j, i, position[c[mine]]] = column[mine]
    return values


def _show(qid):
    """A query id for messages: '302', not np.str_('302')."""
    return repr(qid.item() if isinstance(qid, np.generic) else qid)


def _check_random_state(func, random_state, name="random_state"):
    # ``name``: another spelling (skrank compare's --seed, which only takes ints)
    expected = ("None, an int >= 0, a numpy Generator or RandomState" if name == "random_state"
                else "an int >= 0")
    if random_state is None or isinstance(random_state, (Integral, np.random.Generator,
                                                         np.random.SeedSequence)):
        if isinstance(random_state, (bool, np.bool_)) or (
                isinstance(random_state, Integral) and random_state < 0):
            shown = repr(int(random_state)) if name != "random_state" else _describe(random_state)
            raise InvalidParameterError(f"{func}: {name} must be {expected}. Got {shown} instead.")
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int64).max))
    raise InvalidParameterError(f"{func}: {name} must be {expected}. Got "
                                f"{_describe(random_state)} instead.")


def check_options(func, *, test="randomization", correction="holm", queries="same",
                  n_resamples=10_000, alpha=0.05, confidence=0.95, interval=None,
                  random_state=None, names=None):
    """:func:`compare`'s options checked, one rule each: ``(test, n_resamples, alpha,
    confidence, interval, rng)``.  ``skrank compare`` checks its options here too
    before reading any file, with ``names`` mapping each parameter to its option
    (``{"random_state": "--seed", ...}``) for the messages."""
    name = dict(names or {}).get
    check_choice(func, name("test", "test"), test, TESTS)
    if correction is not None:
        check_choice(func, name("correction", "correction"), correction, CORRECTIONS + (None,))
    check_choice(func, name("queries", "queries"), queries, QUERY_POLICIES)
    n_resamples = check_k(func, n_resamples, required=True, high=MAX_RESAMPLES,
                          name=name("n_resamples", "n_resamples"))
    alpha = check_real(func, name("alpha", "alpha"), alpha, low=0, high=1, low_open=True,
                       high_open=True)
    confidence = check_real(func, name("confidence", "confidence"), confidence, low=0, high=1,
                            low_open=True, high_open=True)
    if interval is None:
        interval = "t" if test == "t" else "bca"
    check_choice(func, name("interval", "interval"), interval, INTERVALS)
    rng = _check_random_state(func, random_state, name("random_state", "random_state"))
    return test, n_resamples, alpha, confidence, interval, rng


def compare(results, *, metrics=None, baseline=None, test="randomization", n_resamples=10_000,
            correction="holm", alpha=0.05, confidence=0.95, interval=None, queries="same",
            random_state=None, simultaneous=None):
    """Compare systems on per-query values: paired tests, intervals, effect sizes.

    Every system is evaluated on the same queries; query by query, the
    difference of two systems' values is the unit of evidence.  Each
    comparison reports both systems' means, the mean difference with its
    confidence interval, a standardised effect size, wins/ties/losses over
    queries, the test's p-value and the p-value corrected for every
    comparison of the call.

    Parameters
    ----------
    results : mapping of str -> Evaluation or per-query values
        System name -> what :func:`skrank.evaluate` returns, or per-query
        values with their query ids: a ``(qid, values)`` pair (such as
        :func:`skrank.per_query_scores` returns), a dict ``{qid: value}`` or
        a pandas Series/DataFrame indexed by qid.  Queries are paired by id.
    metrics : str, list of str or None, default=None
        Metrics to compare; None compares every metric all systems have.
        Per-query values without a metric name are called ``"score"`` (or
        the one name given here).
    baseline : str or None, default=None
        None compares every pair of systems; a name compares every other
        system with that one.
    test : {"randomization", "t", "wilcoxon", "bootstrap", "sign"}, default="randomization"
        Two-sided paired test of the mean difference (median for Wilcoxon):
        ``"randomization"``: Fisher's sign-flip permutation test, exact when
        ``2**n_queries <= n_resamples``, else ``(b + 1) / (B + 1)`` over
        ``n_resamples`` random sign vectors (never 0); ``"t"``:
        :func:`scipy.stats.ttest_rel`; ``"wilcoxon"``:
        :func:`scipy.stats.wilcoxon` on the differences; ``"bootstrap"``:
        the paired shift bootstrap (differences centred to mean 0,
        resampled with replacement); ``"sign"``: :func:`scipy.stats.binomtest`
        on wins against losses (ties left out).
    n_resamples : int, default=10_000
        Resamples of the randomization and bootstrap tests, of the bootstrap
        intervals and of the Tukey correction; at most 10**8.
    correction : {"holm", "bonferroni", "fdr_bh", "tukey"} or None, default="holm"
        Multiple-comparison correction across every comparison of the call
        (all pairs and metrics): Holm's step-down and Bonferroni control the
        family-wise error rate, ``"fdr_bh"`` (Benjamini-Hochberg) the false
        discovery rate.  ``"tukey"`` is the randomized Tukey HSD over all
        systems of each metric (each query's values are permuted across
        systems, the statistic is the range of the system means; its
        ``n_resamples`` permutations give the adjusted p-values whatever
        ``test`` is), with Bonferroni across metrics when there are several.
    alpha : float in (0, 1), default=0.05
        Significance level of the verdicts: ``significant`` is
        ``p_adjusted <= alpha``.
    confidence : float in (0, 1), default=0.95
        Level of the confidence intervals of the mean differences: of each
        interval alone, or of all of them together when ``simultaneous``.
    interval : {"bca", "percentile", "t"} or None, default=None
        Interval method: BCa or percentile bootstrap (``n_resamples``
        resamples of the queries), or Student's t-interval.  None: ``"t"``
        with ``test="t"``, else ``"bca"``.
    queries : {"same", "common"}, default="same"
        ``"same"``: systems must have the same queries (a clear error
        otherwise); ``"common"``: compare on the queries all systems share;
        the number left out of each is in ``n_dropped``.
    random_state : int, numpy Generator or RandomState, or None, default=None
        Seed of the resampling; an int makes results reproducible.
    simultaneous : bool or None, default=None
        Whether the intervals go with the correction, so that an interval
        excluding 0 and the corrected verdict do not contradict each other:
        Bonferroni's simultaneous intervals for ``"bonferroni"`` and
        ``"holm"`` (each at level ``1 - (1 - confidence) / m`` over the
        ``m`` comparisons), Benjamini-Yekutieli's false-coverage-rate
        intervals for ``"fdr_bh"``, Tukey's simultaneous intervals (from the
        randomized HSD's range distribution) for ``"tukey"``.  None: True
        whenever a correction is applied.  False: every interval at level
        ``confidence`` alone.  ``result.coverage`` says which.

    Returns
    -------
    result : Comparison
        ``result.pairs`` holds one :class:`PairComparison` per metric and
        pair; ``to_pandas()``, ``to_markdown()``, ``to_latex()``.

    Examples
    --------
    >>> import skrank
    >>> a = {"q1": 0.50, "q2": 0.20, "q3": 0.40, "q4": 0.70}   # per-query values
    >>> b = {"q1": 0.60, "q2": 0.45, "q3": 0.40, "q4": 0.90}
    >>> res = skrank.compare({"A": a, "B": b}, random_state=0)
    >>> p = res.pairs[0]
    >>> p.system_b, p.system_a, round(p.difference, 4), (p.wins, p.ties, p.losses)
    ('B', 'A', 0.1375, (3, 1, 0))

    With 4 queries, all 2**4 sign vectors are enumerated; 4 of them give a
    sum of differences at least as far from 0 as the observed one:

    >>> p.p_value, res.exact
    (0.25, True)
    """
    func = "compare"
    test, n_resamples, alpha, confidence, interval, rng = check_options(
        func, test=test, correction=correction, queries=queries, n_resamples=n_resamples,
        alpha=alpha, confidence=confidence, interval=interval, random_state=random_state)
    simultaneous = S.check_simultaneous(func, simultaneous, correction)
    systems, metrics, qid, values, n_dropped = _collect(func, results, metrics, queries)
    if baseline is not None:
        if str(baseline) not in systems:
            raise InvalidParameterError(f"{func}: baseline must be None or one of the systems "
                                        f"{systems}. Got {_describe(baseline)} instead.")
        base = systems.index(str(baseline))
        pairs = [(base, j) for j in range(len(systems)) if j != base]
        baseline = systems[base]
    else:
        pairs = list(itertools.combinations(range(len(systems)), 2))

    n = values.shape[2]
    ia = np.array([a for a, _ in pairs])
    ib = np.array([b for _, b in pairs])
    # columns: metric-major, then pair
    a_values = values[:, ia, :].reshape(-1, n).T
    b_values = values[:, ib, :].reshape(-1, n).T
    diffs = b_values - a_values
    # Equal values computed along different paths (tie averages, say) differ by
    # rounding: such differences are ties, whatever the platform's last bits.
    diffs[np.abs(diffs) <= _TIE_TOLERANCE * np.maximum(np.abs(a_values), np.abs(b_values))] = 0.0
    mean_diff = diffs.mean(axis=0)

    dist = None
    if interval != "t" or test == "bootstrap":
        dist = _bootstrap_means(diffs, n_resamples, rng)
    p_raw, exact, drawn = _raw_p_values(test, diffs, a_values, b_values, mean_diff, dist,
                                        n_resamples, rng)
    p_adj, spreads = _adjusted_p_values(correction, p_raw, values, ia, ib, len(metrics),
                                        n_resamples, rng)
    # Intervals consistent with the correction (see skrank/_simultaneous.py).
    level = S.interval_level(confidence, correction, simultaneous, p_raw.shape[0],
                             int((p_adj <= alpha).sum()))
    coverage = S.coverage_label(confidence, correction, simultaneous, level, p_raw.shape[0],
                                len(metrics))
    low, high, effect = _intervals_and_effects(
        diffs, mean_diff, dist, level, interval,
        confidence if simultaneous and correction == "tukey" else None,
        spreads, len(metrics), len(pairs))

    wins = (diffs > 0).sum(axis=0)
    losses = (diffs < 0).sum(axis=0)
    means = {m: {s: float(v) for s, v in zip(systems, values[j].mean(axis=1))}
             for j, m in enumerate(metrics)}
    rows = []
    for col, (metric, (i, j)) in enumerate(itertools.product(metrics, pairs)):
        rows.append(PairComparison(
            metric=metric, system_a=systems[i], system_b=systems[j],
            mean_a=means[metric][systems[i]], mean_b=means[metric][systems[j]],
            difference=float(mean_diff[col]), ci_low=float(low[col]), ci_high=float(high[col]),
            effect_size=float(effect[col]), wins=int(wins[col]),
            ties=int(n - wins[col] - losses[col]), losses=int(losses[col]),
            p_value=float(p_raw[col]), p_adjusted=float(p_adj[col]),
            significant=bool(p_adj[col] <= alpha),
        ))
    return Comparison(systems=systems, metrics=metrics, baseline=baseline, pairs=rows,
                      means=means, qid=qid, n_dropped=n_dropped, test=test,
                      correction=correction, interval=interval, alpha=alpha,
                      confidence=confidence, n_resamples=drawn, exact=exact,
                      interval_level=float(level), coverage=coverage,
                      n_no_relevant=_no_relevant_among(results, qid))


def _raw_p_values(test, diffs, a_values, b_values, mean_diff, dist, n_resamples, rng):
    """Each column's two-sided p-value under ``test``, whether the randomization test
    enumerated every sign vector, and the number of resamples drawn (None: exact or
    analytic)."""
    exact, drawn = False, None
    if test == "randomization":
        p_raw, exact = _randomization_p(diffs, n_resamples, rng)
        drawn = None if exact else n_resamples
    elif test == "bootstrap":
        shifted = np.abs(dist - mean_diff)
        threshold = np.abs(mean_diff) - _tolerance(mean_diff, np.abs(diffs).mean(axis=0))
        p_raw = ((shifted >= threshold).sum(axis=0) + 1) / (n_resamples + 1)
        drawn = n_resamples
    else:
        p_raw = _analytic_p(test, diffs, b_values, a_values)
    return p_raw, exact, drawn


def _adjusted_p_values(correction, p_raw, values, ia, ib, n_metrics, n_resamples, rng):
    """The p-values corrected across every comparison of the call, and Tukey's range
    distribution (None for the other corrections)."""
    if correction is None:
        return p_raw.copy(), None
    if correction == "bonferroni":
        return np.minimum(p_raw * p_raw.shape[0], 1.0), None
    if correction == "holm":
        return _holm(p_raw), None
    if correction == "fdr_bh":
        return _fdr_bh(p_raw), None
    tukey, spreads = _tukey_p(values, n_resamples, rng)
    return np.minimum(tukey[:, ia, ib].reshape(-1) * n_metrics, 1.0), spreads


def _intervals_and_effects(diffs, mean_diff, dist, level, interval, tukey_simultaneous,
                           spreads, n_metrics, n_pairs):
    """Each column's interval of the mean difference and its standardised effect size
    (mean over standard deviation; +-inf for a constant nonzero difference).

    ``tukey_simultaneous``: the confidence of Tukey's simultaneous intervals (from the
    range distribution ``spreads``), or None for intervals at ``level`` by ``interval``."""
    n = diffs.shape[0]
    sd = diffs.std(axis=0, ddof=1)
    constant = sd == 0
    if tukey_simultaneous is not None:
        half = S.tukey_half_widths(spreads, tukey_simultaneous, n_metrics)
        half = np.repeat(half, n_pairs)  # columns: metric-major, then pair
        low, high = mean_diff - half, mean_diff + half
    elif interval == "t":
        low, high = stats.t.interval(level, n - 1, loc=mean_diff,
                                     scale=np.where(constant, 1.0, sd) / math.sqrt(n))
    else:
        low, high = _bootstrap_interval(diffs, dist, level, interval)
    low = np.where(constant, mean_diff, low)
    high = np.where(constant, mean_diff, high)
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(constant, np.sign(mean_diff) * np.inf,
                          mean_diff / np.where(constant, 1, sd))
    effect = np.where(constant & (mean_diff == 0), 0.0, effect)
    return low, high, effect
