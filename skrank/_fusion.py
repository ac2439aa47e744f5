"""Rank fusion: the declarations of the methods and normalisations, and their kernels.

Every fusion method and every normalisation is one declaration below
(:data:`METHODS`, :data:`NORMS`): its name and aliases, its parameters with their
constraints (:class:`skrank._declare.params.Param`), whether it reads scores or ranks,
whether it takes weights and whether it is trained on qrels.  The public
function (:func:`skrank.fuse`), the command line's choices, ``docs/fusion.md``'s
table and the tests read these lists.

The data are one table of rows ``(run, query, document, score)`` over all runs,
with integer codes; a *pair* is a ``(query, document)`` of the union of the
runs.  Kernels are segment operations over all queries at once (``bincount``
by pair, ``reduceat`` over rows sorted by pair): no Python loop over queries
or documents; the loops are over runs and, for Condorcet, over blocks of
queries of similar size.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ._declare.params import REQUIRED, Interval, NoneValue, Options, Param
from ._engine.groups import _radix_order
from .io._run_index import _factorize

# ---------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True)
class FusionMethod:
    """One fusion method, declared once.

    Attributes
    ----------
    name : str
        The name ``ranx.fuse(method=...)`` takes (or skrank's, for methods ranx lacks).
    reads : {"scores", "ranks"}
        What the method reads of each run: the (normalised) scores, or the
        positions of the documents in each run's ranking.
    summary : str
        One line: the fused score of a document.
    params : tuple of Param
        The method's own parameters (``weights`` is declared by ``weighted``).
    weighted : bool
        Whether it takes ``weights`` (one per run; default 1 each).
    trained : bool
        Whether it is trained on qrels (``qrels=`` in :func:`skrank.fuse`).
    aliases : tuple of str
        Other spellings (ranx's function names, ``comb_*``/``weighted_*``).
    default_norm : str or None
        The normalisation of ``norm="default"``.
    """

    name: str
    reads: str
    summary: str
    params: tuple = ()
    weighted: bool = False
    trained: bool = False
    aliases: tuple = ()
    default_norm: str = "min-max"

    @property
    def param_names(self):
        return tuple(p.name for p in self.params) + (("weights",) if self.weighted else ())


@dataclass(frozen=True)
class Normalisation:
    """One normalisation of each run's scores, query by query (``None``: none)."""

    name: str
    summary: str
    aliases: tuple = ()


_K = Param("k", (Interval(Real, 0, None),), default=60,
           description="Constant added to the rank (ranx's default, Cormack et al.).",
           valid=(60, 0, 10.5), invalid=(-1, np.nan, "60", None, True))
_GAMMA = Param("gamma", (Interval(Real, 0, None),), default=0.5,
               description="Exponent of the number of runs that returned the document\n"
                           "(0: CombSUM, 1: CombMNZ). ranx has no default; 0.5 is skrank's.",
               valid=(0.5, 0, 2), invalid=(-0.1, np.inf, "1", None))
_PHI = Param("phi", (Interval(Real, 0, 1, closed="neither"),), default=0.8,
             description="Persistence of rank-biased centroids. ranx has no default; 0.8 is\n"
                         "skrank's (Bailey et al. 2017 report 0.8 to 0.99).",
             valid=(0.8, 0.5, 0.99), invalid=(0, 1, 1.5, np.nan, "0.8", None))
_SIGMA = Param("sigma", (Interval(Real, 0, 1),), default=0.01,
               description="Added to the number of runs before the logarithm (ranx's default).",
               valid=(0.01, 0, 1), invalid=(-0.1, 1.5, np.nan, "0.01", None))
_N_SEGMENTS = Param("n_segments", (Interval(Integral, 1),), default=10,
                    description="Segments each ranking is cut into. ranx has no default; 10 is\n"
                                "skrank's.",
                    valid=(10, 1, 25), invalid=(0, 2.5, "10", None, True))
_W = Param("w", (Interval(Integral, 0),), default=5,
           description="Half-width of the window of positions averaged. ranx has no default;\n"
                       "5 is skrank's.",
           valid=(5, 0, 20), invalid=(-1, 2.5, "5", None, True))

METHODS = (
    FusionMethod("wsum", "scores", "sum of w_r * s_r over the runs that returned the document "
                 "(a missing document adds 0)", weighted=True, aliases=("weighted_sum",)),
    FusionMethod("sum", "scores", "CombSUM: sum of s_r (a missing document adds 0)",
                 aliases=("comb_sum",)),
    FusionMethod("mnz", "scores", "CombMNZ: sum of s_r times the number of runs that "
                 "returned the document", aliases=("comb_mnz",)),
    FusionMethod("anz", "scores", "CombANZ: sum of s_r divided by the number of runs that "
                 "returned the document", aliases=("comb_anz",)),
    FusionMethod("gmnz", "scores", "CombGMNZ: sum of s_r times (number of runs that returned "
                 "it) ** gamma", params=(_GAMMA,), aliases=("comb_gmnz",)),
    FusionMethod("max", "scores", "CombMAX: largest s_r of the runs that returned it",
                 aliases=("comb_max",)),
    FusionMethod("min", "scores", "CombMIN: smallest s_r of the runs that returned it",
                 aliases=("comb_min",)),
    FusionMethod("med", "scores", "CombMED: median s_r of the runs that returned it",
                 aliases=("comb_med",)),
    FusionMethod("mixed", "scores", "sum of w_r * s_r times the square root of the number "
                 "of runs that returned it", weighted=True),
    FusionMethod("wmnz", "scores", "sum of s_r times the sum of the weights of the runs that "
                 "returned it", weighted=True),
    FusionMethod("dbsf", "scores", "distribution-based score fusion: sum of w_r * s_r with "
                 "s_r scaled from [mean - 3 std, mean + 3 std] to [0, 1] (clipped)",
                 weighted=True, default_norm="dbsf"),
    FusionMethod("rrf", "ranks", "reciprocal rank fusion: sum of w_r / (k + rank_r) (weighted "
                 "RRF with weights)", params=(_K,), weighted=True, default_norm=None,
                 aliases=("reciprocal_rank_fusion",)),
    FusionMethod("isr", "ranks", "sum of 1 / rank_r**2 times the number of runs that "
                 "returned it", default_norm=None),
    FusionMethod("log_isr", "ranks", "sum of 1 / rank_r**2 times log(number of runs that "
                 "returned it)", default_norm=None),
    FusionMethod("logn_isr", "ranks", "sum of 1 / rank_r**2 times log(number of runs that "
                 "returned it + sigma)", params=(_SIGMA,), default_norm=None),
    FusionMethod("rbc", "ranks", "rank-biased centroids: sum of (1 - phi) * phi ** (rank_r - 1)",
                 params=(_PHI,), default_norm=None),
    FusionMethod("bordafuse", "ranks", "Borda count: n - rank_r + 1 points in each run (n "
                 "candidates), (n - n_r + 1) / 2 from a run that did not return it",
                 default_norm=None),
    FusionMethod("w_bordafuse", "ranks", "Borda count, run r's points times w_r",
                 weighted=True, default_norm=None, aliases=("weighted_bordafuse",)),
    FusionMethod("condorcet", "ranks", "Condorcet by Copeland's count: 1 + the number of "
                 "documents it beats by majority of the runs (+1/2 per majority tie)",
                 default_norm=None),
    FusionMethod("w_condorcet", "ranks", "Condorcet with run r's vote weighing w_r",
                 weighted=True, default_norm=None, aliases=("weighted_condorcet",)),
    FusionMethod("probfuse", "ranks", "sum of P_r(relevant | segment) / segment number, "
                 "estimated on the training queries", params=(_N_SEGMENTS,), trained=True,
                 default_norm=None),
    FusionMethod("segfuse", "ranks", "sum of P_r(relevant | segment) * (s_r + 1) over "
                 "segments of sizes 5, 10, 20, ...", trained=True),
    FusionMethod("slidefuse", "ranks", "sum of P_r(relevant | rank) averaged over a window "
                 "of ranks rank_r - w .. rank_r + w", params=(_W,), trained=True,
                 default_norm=None),
    FusionMethod("bayesfuse", "ranks", "sum of log-odds of relevance by rank segment (a "
                 "missing document adds log(0.001 / 0.999))", trained=True, default_norm=None),
    FusionMethod("mapfuse", "ranks", "sum of MAP_r / rank_r, MAP_r on the training queries",
                 trained=True, default_norm=None),
    FusionMethod("posfuse", "ranks", "sum of P_r(relevant | rank) (0 beyond the deepest "
                 "training rank)", trained=True, default_norm=None),
)

NORMS = (
    Normalisation("min-max", "(s - min) / (max - min)", aliases=("min_max",)),
    Normalisation("min-max-inverted", "(max - s) / (max - min); the ranking is reversed",
                  aliases=("min_max_inverted",)),
    Normalisation("max", "s / max"),
    Normalisation("sum", "(s - min) / (sum(s) - n * min)"),
    Normalisation("zmuv", "(s - mean) / std (population std)"),
    Normalisation("rank", "1 - (rank - 1) / n"),
    Normalisation("borda", "1 - (rank - 1) / n_candidates; a candidate the run did not return: "
                  "0.5 - (n_r - 1) / (2 n_candidates)"),
    Normalisation("dbsf", "(clip(s, mean - 3 std, mean + 3 std) - (mean - 3 std)) / (6 std); "
                  "0.5 when std is 0"),
)

METHOD_BY_NAME = {m.name: m for m in METHODS}
METHOD_BY_NAME.update({a: m for m in METHODS for a in m.aliases})
NORM_BY_NAME = {n.name: n for n in NORMS}
NORM_BY_NAME.update({a: n for n in NORMS for a in n.aliases})

TIES = Param("ties", (Options(("average", "stable")),), default="average",
             description='Order of tied scores within a run, for the methods and normalisations\n'
                         'that read ranks: ``"average"`` gives each tied document the mean\n'
                         "of what the tied ranks would give; ``\"stable\"`` ranks them in the\n"
                         "run's input order.",
             valid=("average", "stable"), invalid=("bogus", None, 3))
DEPTH = Param("depth", (NoneValue("no cut"), Interval(Integral, 1)), default=None,
              description="Keep only each run's top ``depth`` documents of each query before\n"
                          "fusing (ties at the cut: input order).",
              valid=(None, 1, 100), invalid=(0, -1, 2.5, "10", True))
EMPTY = REQUIRED  # re-exported for the public module's signature checks

# ranx's bayesfuse: log-odds of a document absent from a run, and the cut-offs of
# its rank segments; segfuse's segment bounds.
MIN_ODD = float(np.log(0.001 / 0.999))
BAYES_CUTS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000])
SEG_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)])


# ---------------------------------------------------------------------------
# Segment helpers


def _segment_starts(sorted_codes):
    """Start index of each run of equal values in a sorted integer array."""
    n = sorted_codes.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(sorted_codes[1:], sorted_codes[:-1], out=new[1:])
    return np.flatnonzero(new)


def pair_codes(key, n_keys, sizes, check=True):
    """``(codes, sorted distinct keys, twice)`` of the non-negative integer ``key`` (below
    ``n_keys``) of rows concatenated from runs of ``sizes`` rows; ``twice``: some run
    holds a key twice (only looked for when ``check``).  A dense table of the keys
    when their range is small (one table of a run's keys at a time finds the
    duplicates), else the engine's factoriser and a count of each (key, run)."""
    n = key.shape[0]
    if n_keys > 4 * n + 1024:
        codes, distinct = _factorize(key)
        distinct = distinct.astype(np.int64, copy=False)
        if not check:
            return codes, distinct, False
        run = np.repeat(np.arange(len(sizes)), sizes)
        per_run = np.bincount(codes * len(sizes) + run, minlength=distinct.shape[0] * len(sizes))
        return codes, distinct, bool(per_run.size and per_run.max() > 1)
    seen = np.zeros(n_keys, dtype=bool)
    twice = False
    if len(sizes) == 1 or not check:
        seen[key] = True
        twice = check and int(np.count_nonzero(seen)) < n
    else:
        mine = np.empty(n_keys, dtype=bool)
        first = 0
        for size in sizes:
            mine.fill(False)
            mine[key[first:first + size]] = True
            twice = twice or int(np.count_nonzero(mine)) < size
            seen |= mine
            first += size
        del mine
    distinct = np.flatnonzero(seen)
    index = np.cumsum(seen, dtype=np.int32 if distinct.shape[0] < 2**31 else np.intp)
    del seen
    index -= 1
    return index[key], distinct.astype(np.int64), twice


def merged_pair_codes(key, sizes, orders):
    """:func:`pair_codes` of a sparse key range (none of the runs holding a key twice)
    from each run's rows in the order of their keys (``orders``: each run's kept
    :attr:`~skrank.io._run_index.RunIndex.pair_order`): one stable argsort of the
    runs' sorted keys, which merges them (measured: 0.13 s for two runs of 2M rows,
    against 1.0 s for the factoriser on the same keys), then a code at each new key.
    The same codes and keys as :func:`pair_codes`."""
    n = key.shape[0]
    first = np.concatenate(([0], np.cumsum(sizes)))
    rows = np.concatenate([order + start for order, start in zip(orders, first[:-1])]
                          ) if orders else np.zeros(0, dtype=np.intp)
    ranked_rows = rows[np.argsort(key[rows], kind="stable")]   # the runs' sorted keys merged
    del rows
    ranked = key[ranked_rows]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(ranked[1:], ranked[:-1], out=new[1:])
    distinct = ranked[new].astype(np.int64)
    del ranked
    code = np.cumsum(new, dtype=np.int32 if distinct.shape[0] < 2**31 else np.intp)
    code -= 1
    codes = np.empty(n, dtype=code.dtype)
    codes[ranked_rows] = code
    return codes, distinct, False


def _group_mean(values, groups, n_groups):
    """Each value replaced by the mean of its group's values."""
    total = np.bincount(groups, weights=values, minlength=n_groups)
    count = np.bincount(groups, minlength=n_groups)
    return (total / np.maximum(count, 1))[groups]


@dataclass
class Rows:
    """The rows of all runs after normalisation (in no particular order).

    ``pair``, ``run``, ``query`` (codes), ``score`` (normalised), ``pos`` (0-based
    position in the run's ranking of the query), ``n`` (length of that ranking),
    ``tie`` (tie-group id: equal scores of one run and query), and per pair:
    ``pair_query``, ``counts`` (runs that returned it) and ``starts`` (where its rows
    start once sorted by pair, see :meth:`by_pair`); the last two are computed when
    first read.
    """

    pair: np.ndarray
    run: np.ndarray
    query: np.ndarray
    score: np.ndarray
    pos: np.ndarray
    n: np.ndarray
    tie: np.ndarray
    n_ties: int
    ties: str
    pair_query: np.ndarray
    n_pairs: int
    n_runs: int
    n_queries: int
    run_query_len: np.ndarray  # (n_runs, n_queries) lengths of each run's ranking
    _counts: np.ndarray = None

    @property
    def counts(self):
        """The number of runs that returned each pair (counted once, when first read)."""
        if self._counts is None:
            self._counts = np.bincount(self.pair, minlength=self.n_pairs)
        return self._counts

    @property
    def starts(self):
        return np.concatenate(([0], np.cumsum(self.counts)[:-1]))

    def by_pair(self):
        """``(order, starts)``: the rows sorted by pair (stable radix passes), and where each
        pair's rows start (only the kernels that need contiguous pairs pay for it)."""

        bits = max(int(self.n_pairs - 1).bit_length(), 1)
        order = (_radix_order(self.pair, bits) if bits <= 32
                 else np.argsort(self.pair, kind="stable"))
        return order, self.starts

    def by_rank(self, values):
        """Per-row values of positions, averaged over tie groups under ``ties="average"``."""
        some_tie = self.tie is not None and self.n_ties < self.tie.shape[0]
        if self.ties == "average" and some_tie:
            return _group_mean(values, self.tie, self.n_ties)
        return values

    def weighted(self, w, values):
        """``w[run] * values`` of each row (``values`` itself when every weight is 1:
        the same numbers, without the gather)."""
        return values if bool((w == 1).all()) else w[self.run] * values

    def total(self, values):
        return np.bincount(self.pair, weights=values, minlength=self.n_pairs)

    def n_cand(self):
        per_query = np.bincount(self.pair_query, minlength=self.n_queries)
        return per_query[self.pair_query]


# ---------------------------------------------------------------------------
# Kernels: each returns the fused score of every pair


def _k_wsum(t, w, p):
    return t.total(t.weighted(w, t.score))


def _k_sum(t, w, p):
    return t.total(t.score)


def _k_mnz(t, w, p):
    return t.total(t.score) * t.counts


def _k_anz(t, w, p):
    return t.total(t.score) / t.counts


def _k_gmnz(t, w, p):
    return t.total(t.score) * t.counts.astype(np.float64) ** p["gamma"]


def _extreme(t, ufunc, start):
    """``ufunc`` (maximum or minimum) of each pair's scores, run after run: a run holds
    a pair on one row at most, so each run is one gather and one scatter, no sort of
    the rows by pair (the same values, in the same order, as a reduction over them)."""
    out = np.full(t.n_pairs, start)
    for r in range(t.n_runs):
        rows = t.run == r
        pair = t.pair[rows]
        out[pair] = ufunc(out[pair], t.score[rows])
    return out


def _k_max(t, w, p):
    return _extreme(t, np.maximum, -np.inf)


def _k_min(t, w, p):
    return _extreme(t, np.minimum, np.inf)


# Cells of the (pairs, runs) table of scores that CombMED sorts at once.
_MED_BLOCK = 1 << 22
_MED_DENSE = 4  # the whole table when it has at most this many cells a row


def _k_med(t, w, p):
    """The median score of each pair: its scores laid in a table of one row per pair
    and one column per run (+inf where the run did not return it), each row sorted;
    the middle two of its ``count`` scores averaged.  The whole table when it is no
    larger than a few times the rows, else blocks of pairs (rows sorted by pair)."""
    if not t.n_pairs:
        return np.zeros(0)
    m, n_rows = t.n_runs, t.pair.shape[0]
    counts = t.counts
    out = np.empty(t.n_pairs)
    if t.n_pairs * m <= max(_MED_DENSE * n_rows, _MED_BLOCK):
        blocks, order, starts = [(0, t.n_pairs)], None, None
    else:
        step = max(1, _MED_BLOCK // m)
        blocks = [(a, min(a + step, t.n_pairs)) for a in range(0, t.n_pairs, step)]
        order, starts = t.by_pair()
    for first, last in blocks:
        if order is None:
            rows = slice(None)
        else:
            rows = order[starts[first]:starts[last] if last < t.n_pairs else n_rows]
        table = np.full((last - first, m), np.inf)
        table[t.pair[rows] - first, t.run[rows]] = t.score[rows]
        table.sort(axis=1)
        c = counts[first:last]
        i = np.arange(last - first)
        out[first:last] = (table[i, (c - 1) // 2] + table[i, c // 2]) / 2
    return out


def _k_mixed(t, w, p):
    return t.total(t.weighted(w, t.score)) * np.sqrt(t.counts)


def _k_wmnz(t, w, p):
    if bool((w == 1).all()):  # the sum of the weights of its runs: the count
        return t.total(t.score) * t.counts.astype(np.float64)
    return t.total(t.score) * t.total(w[t.run])


def _isr(t):
    return t.total(t.by_rank(1.0 / (t.pos + 1.0) ** 2))


def _k_rrf(t, w, p):
    return t.total(t.weighted(w, t.by_rank(1.0 / (p["k"] + t.pos + 1.0))))


def _k_isr(t, w, p):
    return _isr(t) * t.counts


def _k_log_isr(t, w, p):
    return _isr(t) * np.log(t.counts)


def _k_logn_isr(t, w, p):
    return _isr(t) * np.log(t.counts + p["sigma"])


def _k_rbc(t, w, p):
    return t.total(t.by_rank((1 - p["phi"]) * p["phi"] ** t.pos))


def _borda(t, w):
    n_cand = t.n_cand()
    ranked = t.total(t.weighted(w, t.by_rank(n_cand[t.pair] - t.pos.astype(np.float64))))
    # a run that did not return a candidate gives it (n - n_r + 1) / 2 points
    n_cand_q = np.bincount(t.pair_query, minlength=t.n_queries).astype(np.float64)
    unranked = (n_cand_q[None, :] - t.run_query_len + 1) / 2 * w[:, None]
    present = t.total(unranked[t.run, t.query])
    return ranked + unranked.sum(axis=0)[t.pair_query] - present


def _k_bordafuse(t, w, p):
    return _borda(t, np.ones_like(w))


def _k_w_bordafuse(t, w, p):
    return _borda(t, w)


# Pairs of candidates compared at once by Condorcet (memory bound of one block).
_CONDORCET_BLOCK = 1 << 22


def _condorcet(t, w):
    """Copeland's count: 1 + wins + ties / 2 over the pairwise majority contests, by
    blocks of queries of similar size (padded)."""
    pos = np.full((t.n_pairs, t.n_runs), np.inf)
    rank = t.by_rank(t.pos.astype(np.float64))  # tied documents share their mean rank
    pos[t.pair, t.run] = rank
    n_cand = np.bincount(t.pair_query, minlength=t.n_queries)
    q_start = np.concatenate(([0], np.cumsum(n_cand)[:-1]))  # pairs are sorted by query
    fused = np.zeros(t.n_pairs)
    order = np.argsort(n_cand, kind="stable")
    i = 0
    n_q = order.shape[0]
    while i < n_q:
        size = max(int(n_cand[order[i]]), 1)
        step = max(1, _CONDORCET_BLOCK // (size * size * max(t.n_runs, 1)))
        # queries order[i:j] padded to the largest of them
        j = min(n_q, i + step)
        block = order[i:j]
        width = int(n_cand[block].max()) if block.size else 0
        if width == 0:
            i = j
            continue
        while j - i > 1 and width * width * (j - i) * t.n_runs > 4 * _CONDORCET_BLOCK:
            j = i + max(1, (j - i) // 2)
            block = order[i:j]
            width = int(n_cand[block].max())
        col = np.arange(width)
        valid = col[None, :] < n_cand[block][:, None]  # (b, width)
        idx = np.where(valid, q_start[block][:, None] + col[None, :], 0)
        x = np.where(valid[:, :, None], pos[idx], np.inf)  # (b, width, runs)
        votes = np.zeros((block.size, width, width))
        for r in range(t.n_runs):
            xr = x[:, :, r]
            votes += w[r] * (xr[:, :, None] < xr[:, None, :])
        beats = votes > np.swapaxes(votes, 1, 2)
        even = votes == np.swapaxes(votes, 1, 2)
        pair_ok = valid[:, :, None] & valid[:, None, :]
        eye = np.eye(width, dtype=bool)[None]
        score = ((beats & pair_ok).sum(axis=2)
                 + 0.5 * (even & pair_ok & ~eye).sum(axis=2) + 1.0)
        fused[idx[valid]] = score[valid]
        i = j
    return fused


def _k_condorcet(t, w, p):
    return _condorcet(t, np.ones_like(w))


def _k_w_condorcet(t, w, p):
    return _condorcet(t, w)


def _by_run_position(table, t, fill=0.0):
    """``table[run, position]`` for every row (``fill`` beyond the table's width)."""
    width = table.shape[1]
    inside = t.pos < width
    out = np.full(t.pos.shape[0], fill)
    out[inside] = table[t.run[inside], t.pos[inside]]
    return out


def _k_probfuse(t, w, p, model):
    n_seg = p["n_segments"]
    size = -(-t.n // n_seg)  # ceil
    seg = t.pos // size
    return t.total(t.by_rank(model[t.run, seg] / (seg + 1)))


def _k_segfuse(t, w, p, model):
    seg = np.searchsorted(SEG_BOUNDS, t.pos, side="right") - 1
    inside = seg < model.shape[1]
    prob = np.where(inside, model[t.run, np.minimum(seg, model.shape[1] - 1)], 0.0)
    return t.total(t.by_rank(prob * (t.score + 1)))


def _k_slidefuse(t, w, p, model):
    window = p["w"]
    cum = np.zeros((model.shape[0], model.shape[1] + 1))
    np.cumsum(model, axis=1, out=cum[:, 1:])
    a = np.maximum(t.pos - window, 0)
    b = np.minimum(t.pos + window, t.n - 1)
    width = model.shape[1]
    total = cum[t.run, np.minimum(b + 1, width)] - cum[t.run, np.minimum(a, width)]
    return t.total(t.by_rank(total / (b - a + 1)))


def _k_bayesfuse(t, w, p, model):
    odds = _by_run_position(model, t, fill=MIN_ODD)
    return t.total(t.by_rank(odds)) + (t.n_runs - t.counts) * MIN_ODD


def _k_mapfuse(t, w, p, model):
    return t.total(t.by_rank(model[t.run] / (t.pos + 1.0)))


def _k_posfuse(t, w, p, model):
    return t.total(t.by_rank(_by_run_position(model, t)))


def _k_dbsf(t, w, p):
    return _k_wsum(t, w, p)


KERNELS = {
    "wsum": _k_wsum,
    "sum": _k_sum,
    "mnz": _k_mnz,
    "anz": _k_anz,
    "gmnz": _k_gmnz,
    "max": _k_max,
    "min": _k_min,
    "med": _k_med,
    "mixed": _k_mixed,
    "wmnz": _k_wmnz,
    "rrf": _k_rrf,
    "isr": _k_isr,
    "log_isr": _k_log_isr,
    "logn_isr": _k_logn_isr,
    "rbc": _k_rbc,
    "bordafuse": _k_bordafuse,
    "w_bordafuse": _k_w_bordafuse,
    "condorcet": _k_condorcet,
    "w_condorcet": _k_w_condorcet,
    "probfuse": _k_probfuse,
    "segfuse": _k_segfuse,
    "slidefuse": _k_slidefuse,
    "bayesfuse": _k_bayesfuse,
    "mapfuse": _k_mapfuse,
    "posfuse": _k_posfuse,
    "dbsf": _k_dbsf,
}


# ---------------------------------------------------------------------------
# Training of the supervised methods (ranx's estimates, vectorised)


def train(method, p, hit, run, pos, query_len, n_runs, n_train, mean_ap=None):
    """The trained table of ``method`` from the training rows: ``hit`` (1.0 for a
    relevant document), ``run``, ``pos`` and ``query_len`` (the run's ranking length
    for the row's query), over ``n_train`` training queries."""
    name = method.name
    if name == "mapfuse":
        return mean_ap
    if name == "probfuse":
        n_seg = p["n_segments"]
        size = -(-query_len // n_seg)
        seg = pos // size
        seg_len = np.minimum(size, query_len - seg * size)
        table = np.bincount(run * n_seg + seg, weights=hit / seg_len,
                            minlength=n_runs * n_seg).reshape(n_runs, n_seg)
        return table / max(n_train, 1)
    if name == "segfuse":
        n_seg = SEG_BOUNDS.shape[0] - 1
        seg = np.searchsorted(SEG_BOUNDS, pos, side="right") - 1
        keep = seg < n_seg
        sizes = np.diff(SEG_BOUNDS).astype(np.float64)
        table = np.bincount(run[keep] * n_seg + seg[keep], weights=hit[keep] / sizes[seg[keep]],
                            minlength=n_runs * n_seg).reshape(n_runs, n_seg)
        return table / max(n_train, 1)
    if name == "bayesfuse":
        cuts = BAYES_CUTS
        n_seg = cuts.shape[0] - 1
        seg = np.searchsorted(cuts, pos, side="right") - 1
        keep = seg < n_seg
        sizes = np.diff(cuts).astype(np.float64)
        prec = np.bincount(run[keep] * n_seg + seg[keep], weights=hit[keep] / sizes[seg[keep]],
                           minlength=n_runs * n_seg).reshape(n_runs, n_seg) / max(n_train, 1)
        prec = np.where(prec == 0, 0.001, prec)
        neg = 1 - prec
        neg = np.where(neg == 0, 0.001, neg)
        return np.repeat(np.log(prec / neg), sizes.astype(np.intp), axis=1)
    # posfuse, slidefuse: P(relevant | position) over the training queries long enough
    width = int(pos.max()) + 1 if pos.size else 0
    num = np.bincount(run * width + pos, weights=hit, minlength=n_runs * width)
    den = np.bincount(run * width + pos, minlength=n_runs * width)
    num, den = num.reshape(n_runs, width).astype(np.float64), den.reshape(n_runs, width)
    # ranx's table of a run is as long as its longest training ranking; positions
    # beyond it read as 0 (posfuse) or as 0 inside the window (slidefuse)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


# ---------------------------------------------------------------------------
# Normalisations: per (run, query) segment of the rows sorted by (run, query)


def normalise(name, score, seg_starts, lengths, pos, n, tie_mean):
    """The normalised scores (``name`` other than "borda"; rows grouped by (run,
    query): segment ``i`` is ``lengths[i]`` rows from ``seg_starts[i]``; ``pos`` and
    ``n``, the rank and ranking length of each row, are read by "rank" only).  Each
    segment's statistics are spread over its rows by ``np.repeat``."""
    if name is None:
        return score
    if name in ("rank",):
        return tie_mean(1.0 - pos / n)
    if score.shape[0] == 0:
        return score.copy()

    def spread(values):
        return np.repeat(values, lengths)

    hi = np.maximum.reduceat(score, seg_starts)
    lo = np.minimum.reduceat(score, seg_starts)
    if name in ("min-max", "min-max-inverted"):
        out = score - spread(lo) if name == "min-max" else spread(hi) - score
        out /= spread(np.maximum(hi - lo, 1e-9))
        return out
    if name == "max":
        return score / spread(np.maximum(hi, 1e-9))
    if name == "sum":
        total = np.add.reduceat(score, seg_starts)
        return (score - spread(lo)) / spread(np.maximum(total - lo * lengths, 1e-9))
    count = lengths.astype(np.float64)
    mean = (np.add.reduceat(score, seg_starts) / count)
    dev = score - spread(mean)
    std = spread(np.sqrt(np.add.reduceat(dev * dev, seg_starts) / count))
    if name == "zmuv":
        return dev / np.maximum(std, 1e-9)
    if name == "dbsf":
        out = np.full(score.shape[0], 0.5)
        ok = std > 0
        out[ok] = (np.clip(dev[ok], -3 * std[ok], 3 * std[ok]) + 3 * std[ok]) / (6 * std[ok])
        return out
    raise AssertionError(name)  # pragma: no cover - names are validated before


def methods_markdown():
    """The table of methods of ``docs/fusion.md`` (a test compares the page with it)."""
    lines = ["| method | reads | fused score of a document | parameters (default) | "
             "aliases |", "|---|---|---|---|---|"]
    for m in METHODS:
        params = [f"`{p.name}` ({p.default:g})" for p in m.params]
        if m.weighted:
            params.append("`weights` (1 each)")
        if m.trained:
            params.append("`qrels` (training)")
        aliases = ", ".join(f"`{a}`" for a in m.aliases)
        summary = m.summary.replace("|", "\\|")  # a bar inside a cell is escaped
        lines.append(f"| `{m.name}` | {m.reads} | {summary} | {', '.join(params) or '-'} "
                     f"| {aliases or '-'} |")
    return "\n".join(lines)
