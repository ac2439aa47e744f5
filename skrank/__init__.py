"""skrank: ranking metrics the scikit-learn way.

Correct under ties, query-aware, fast, and usable as ``scoring=`` strings in
scikit-learn model selection.
"""

from ._metrics import (
    METRICS,
    QueryScores,
    cg_score,
    dcg_score,
    err_score,
    hit_rate_score,
    map_score,
    mrr_score,
    ndcg_score,
    per_query_scores,
    precision_at_k_score,
    r_precision_score,
    rbp_score,
    recall_at_k_score,
)

from ._judged import bpref_score, infap_score, judged_at_k_score
from ._evaluate import Evaluation, evaluate
from ._compare import Comparison, PairComparison, compare
from ._validation import InvalidParameterError
from ._scorer import RankingScorer, get_scorer, get_scorer_names, make_ranking_scorer
from ._scorer import register_with_sklearn as _register_with_sklearn
from . import datasets, plot  # noqa: F401  (light: matplotlib is imported only to draw)

__version__ = "0.1.0.dev0"

# Deliberate: after `import skrank`, scoring="ndcg_exp@10" works in scikit-learn.
_register_with_sklearn()

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
    "precision_at_k_score",
    "r_precision_score",
    "rbp_score",
    "recall_at_k_score",
]
