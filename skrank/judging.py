"""Judgements: pools for human or LLM judges, merged sources, agreement.

* :func:`skrank.pool` (also here as :func:`pool`): the (query, document)
  pairs that the runs retrieve and the qrels do not judge yet, written for a
  judge (:meth:`Pool.write`) and read back (:func:`read_pool`);
* :func:`merge_qrels`: judgements of several sources (people, an LLM) in one
  table with their provenance, resolved into one qrels by a stated rule;
* :func:`agreement` (Cohen's kappa and the confusion matrix of two qrels, per
  query and overall), :func:`krippendorff_alpha` (several judges) and
  :func:`ranking_agreement` (Kendall's tau and tau-AP of the system rankings
  that two qrels induce, and the pairs of systems that swap).

See the guide ``docs/judging.md``.
"""

from ._pool import Pool, pool, read_pool
from ._judgements import Judgements, merge_qrels
from ._agreement import (
    Agreement,
    KrippendorffAlpha,
    RankingAgreement,
    agreement,
    krippendorff_alpha,
    ranking_agreement,
    tau_ap,
)

__all__ = [
    "Agreement",
    "Judgements",
    "KrippendorffAlpha",
    "Pool",
    "RankingAgreement",
    "agreement",
    "krippendorff_alpha",
    "merge_qrels",
    "pool",
    "ranking_agreement",
    "read_pool",
    "tau_ap",
]
