"""Synthetic ranking workloads shared by every tool of the benchmark suite.

Every workload is one set of flat arrays (``y_true``, ``y_score``, ``qid``)
with the rows of each query contiguous and query ids sorted, because that is
the layout every peer accepts (XGBoost and LightGBM require it).  Each tool
converts these same arrays into its own format; the conversion is timed
separately from the evaluation.

Scores are tie-free unless a workload is meant to have ties: they are the
ranks of ``signal + noise`` scaled by 2**-24, so they are distinct, exactly
representable in float32 (XGBoost stores margins as float32) and correlated
with the labels so that metric values are realistic.
"""

from dataclasses import dataclass, field

import numpy as np

# Label frequencies of MSLR-WEB30K (grades 0..4), rounded.
MSLR_GRADES = np.array([0.52, 0.32, 0.13, 0.02, 0.01])


@dataclass
class Workload:
    name: str
    description: str
    y_true: np.ndarray          # float64 labels
    y_score: np.ndarray         # float64 scores
    qid: np.ndarray             # int64, sorted, contiguous
    sizes: np.ndarray           # documents per query, in query order
    binary: bool                # labels are 0/1
    ties: bool                  # scores have ties within queries
    metrics: tuple = ()
    extra: dict = field(default_factory=dict)

    @property
    def n_rows(self):
        return int(self.y_true.shape[0])

    @property
    def n_queries(self):
        return int(self.sizes.shape[0])

    @property
    def shape(self):
        """(n_queries, n_docs) when every query has the same size, else None."""
        if self.sizes.size and self.sizes.min() == self.sizes.max():
            return (self.n_queries, int(self.sizes[0]))
        return None

    @property
    def input_bytes(self):
        return self.y_true.nbytes + self.y_score.nbytes + self.qid.nbytes

    def summary(self):
        s = self.sizes
        return (f"{self.n_rows:,} rows, {self.n_queries:,} queries "
                f"(sizes {int(s.min()):,}..{int(s.max()):,}, median {int(np.median(s)):,})")


def _labels(rng, sizes, kind):
    n = int(sizes.sum())
    if kind == "binary":
        y = (rng.random(n) < 0.1).astype(np.float64)
        # ~2% of the queries have no relevant document: this exercises each
        # tool's convention for queries where the metric is undefined.
        empty = rng.random(sizes.shape[0]) < 0.02
        if empty.any():
            y[np.repeat(empty, sizes)] = 0.0
        return y
    if kind == "graded":
        return rng.choice(5, size=n, p=MSLR_GRADES).astype(np.float64)
    raise ValueError(kind)


def _scores(rng, y, kind):
    n = y.shape[0]
    signal = y + rng.normal(0.0, 1.5, n)
    if kind == "float":
        ranks = np.empty(n, dtype=np.float64)
        ranks[np.argsort(signal, kind="stable")] = np.arange(n, dtype=np.float64)
        if n >= 2 ** 24:
            raise ValueError("tie-free float32-exact scores need fewer than 2**24 rows")
        return ranks * 2.0 ** -24
    if kind == "int":
        # Ten distinct values: about ten tied documents per group in a 100-doc query.
        return np.clip(np.round(signal * 2.0 + 2.0), 0, 9).astype(np.float64)
    raise ValueError(kind)


def _assemble(name, description, rng, sizes, labels, scores, metrics):
    sizes = np.asarray(sizes, dtype=np.int64)
    y = _labels(rng, sizes, labels)
    s = _scores(rng, y, scores)
    qid = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    return Workload(name=name, description=description, y_true=y, y_score=s, qid=qid,
                    sizes=sizes, binary=(labels == "binary"), ties=(scores == "int"),
                    metrics=tuple(metrics))


def uniform(n_queries, n_docs, *, seed=0, labels="binary", scores="float", name="uniform",
            description=None, metrics=()):
    rng = np.random.default_rng(seed)
    sizes = np.full(n_queries, n_docs)
    description = description or (f"{n_queries:,} queries x {n_docs} documents, "
                                  f"{labels} labels, {'integer' if scores == 'int' else 'tie-free float'} scores")
    return _assemble(name, description, rng, sizes, labels, scores, metrics)


def ragged_sizes(total, big, *, seed=0, median=40, sigma=1.2):
    """Log-normal query sizes summing to ``total``, one query of ``big`` documents among them."""
    rng = np.random.default_rng(seed)
    rest = total - big
    sizes = np.maximum(1, np.round(rng.lognormal(np.log(median), sigma, size=4 * rest // median + 16)))
    sizes = sizes.astype(np.int64)
    cum = np.cumsum(sizes)
    sizes = sizes[: int(np.searchsorted(cum, rest))]
    last = rest - int(sizes.sum())
    if last > 0:
        sizes = np.append(sizes, last)
    sizes = np.insert(sizes, int(rng.integers(sizes.shape[0] + 1)), big)
    assert int(sizes.sum()) == total
    return sizes


def ragged(total, big, *, seed=0, labels="binary", metrics=(), median=40):
    rng = np.random.default_rng(seed + 1)
    sizes = ragged_sizes(total, big, seed=seed, median=median)
    description = (f"log-normal query sizes (median {median}), one query of {big:,} documents, "
                   f"{total:,} rows in all, {labels} labels, tie-free float scores")
    return _assemble("ragged", description, rng, sizes, labels, "float", metrics)


# The tie patterns of real scores (issue 27): each replaces a workload's tie-free scores by
# scores with the ties that rounding, float32 models, LLM judges or a flat tail give.
TIE_PATTERNS = {
    "round2": "rounded to 2 decimals (scores in [0, 1]: about 87 distinct values per 100 "
              "documents, many tie groups of 2-3)",
    "float32_3": "float32 predictions rounded to 3 decimals (a GBDT or a float32 model)",
    "int0_10": "integers 0-10 (an LLM judge's grades: few large tie groups)",
    "half_tied": "half of each query tied at one score (a few very large groups)",
}


def tie_pattern_scores(wl, pattern, *, seed=0):
    """``wl``'s scores with the ties of ``pattern`` (a key of :data:`TIE_PATTERNS`), as
    float64; the order of the tie-free scores is kept where no tie is made.  ``"tie_free"``:
    the same normal scores unrounded (the baseline of the tie ratios: the same data
    without its ties)."""
    rng = np.random.default_rng(seed)
    n = wl.y_score.shape[0]
    # Normal scores in the order of the tie-free ones within each query (the same ranking,
    # the spread of a model's outputs), then the pattern's rounding.
    order = np.lexsort((wl.y_score, wl.qid))
    values = rng.normal(0.0, 1.0, n)
    scores = np.empty(n)
    scores[order] = values[np.lexsort((values, wl.qid))]
    if pattern == "tie_free":   # the same scores before the pattern's rounding
        return scores
    if pattern == "round2":
        return np.round(scores, 2)
    if pattern == "float32_3":
        return np.round((0.1 * scores).astype(np.float32), 3).astype(np.float64)
    if pattern == "int0_10":
        return np.clip(np.round(scores * 2.0 + 5.0), 0, 10)
    if pattern == "half_tied":
        return np.where(rng.random(n) < 0.5, 0.0, scores)
    raise ValueError(pattern)


def lognormal_sizes(total, *, seed=0, median=32, sigma=1.0):
    """Log-normal query sizes (median ``median``) summing to ``total``: search logs and
    recommender sessions (1,000,000 rows: about 18,000 queries, the largest ~1,300)."""
    rng = np.random.default_rng(seed)
    sizes = np.maximum(1, np.round(rng.lognormal(np.log(median), sigma,
                                                 size=4 * total // median + 16))).astype(np.int64)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), total))]
    last = total - int(sizes.sum())
    if last > 0:
        sizes = np.append(sizes, last)
    assert int(sizes.sum()) == total
    return sizes


def lognormal(total, *, seed=0, labels="graded", median=32, metrics=()):
    rng = np.random.default_rng(seed + 1)
    sizes = lognormal_sizes(total, seed=seed, median=median)
    description = (f"log-normal query sizes (median {median}, max {int(sizes.max()):,}), "
                   f"{sizes.shape[0]:,} queries, {total:,} rows, {labels} labels, tie-free float "
                   f"scores")
    return _assemble("lognormal", description, rng, sizes, labels, "float", metrics)
