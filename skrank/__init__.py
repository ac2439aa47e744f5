"""skrank: ranking metrics the scikit-learn way.

Correct under ties, query-aware, fast, and usable as ``scoring=`` strings in
scikit-learn model selection.
"""

from ._declare.table import METRICS
from ._metrics import (
    QueryScores,
    cg_score,
    dcg_score,
    bpref_score,
    err_score,
    gauc_score,
    hit_rate_score,
    infap_score,
    judged_at_k_score,
    map_score,
    mrr_score,
    ndcg_score,
    per_query_scores,
    precision_at_k_score,
    r_precision_score,
    rbp_score,
    recall_at_k_score,
)

from ._evaluation import Evaluation
from ._evaluate import evaluate
# issue 29: the faces whose functions bind to their declarations of METRICS (light imports)
from . import beyond, diversity, datasets
from ._core.checks import InvalidParameterError
from ._sklearn_registration import (
    register_when_sklearn_scorers_load as _register_when_sklearn_scorers_load,
)

__version__ = "0.1.0.dev0"

# Imported on first use: scikit-learn (with the pandas and scipy.stats it imports),
# scipy.stats and the plotting module cost seconds that a metric call does not need.
_LAZY = {
    "Comparison": "._compare", "PairComparison": "._compare", "compare": "._compare",
    "RankingScorer": "._scorer", "get_scorer": "._scorer", "get_scorer_names": "._scorer",
    "make_ranking_scorer": "._scorer", "plot": ".plot",
    "pool": "._pool", "judging": ".judging",
    "fuse": ".fusion", "fusion": ".fusion",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'skrank' has no attribute {name!r}")
    import importlib

    loaded = importlib.import_module(module, __name__)
    value = loaded if module == "." + name else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# Deliberate: after `import skrank`, scoring="ndcg_exp@10" works in scikit-learn, whichever
# of the two is imported first (registered when scikit-learn's scorer module loads).
_register_when_sklearn_scorers_load()

__all__ = [
    "METRICS",
    "Comparison",
    "Evaluation",
    "bpref_score",
    "InvalidParameterError",
    "PairComparison",
    "QueryScores",
    "RankingScorer",
    "cg_score",
    "compare",
    "dcg_score",
    "err_score",
    "evaluate",
    "gauc_score",
    "fuse",
    "get_scorer",
    "get_scorer_names",
    "make_ranking_scorer",
    "hit_rate_score",
    "infap_score",
    "judged_at_k_score",
    "map_score",
    "mrr_score",
    "ndcg_score",
    "per_query_scores",
    "pool",
    "precision_at_k_score",
    "r_precision_score",
    "rbp_score",
    "recall_at_k_score",
]
