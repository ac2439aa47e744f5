"""pytrec_eval (trec_eval compiled as a Python module) as a second oracle.

Random qrels and runs with graded labels, tied scores, unjudged retrieved
documents and judged documents the run did not retrieve; every measure the two
share must agree per query to 1e-9.
"""

import numpy as np
import pytest

import skrank
from skrank.io import Qrels, Run

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {"map", "map_cut", "P", "recall", "recip_rank", "Rprec", "ndcg", "ndcg_cut",
            "success"}


def random_collection(seed, n_queries=25):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q:03d}"
        n_docs = int(rng.integers(1, 60))
        docs = [f"d{rng.integers(0, 10**6):07d}" for _ in range(n_docs)]
        docs = list(dict.fromkeys(docs))
        judged = rng.random(len(docs)) < 0.7          # some retrieved docs are unjudged
        rels = rng.choice([0, 0, 0, 1, 2, 3], size=len(docs))
        qrels[qid] = {d: int(r) for d, r, j in zip(docs, rels, judged) if j}
        # judged documents the run does not retrieve
        for extra in range(int(rng.integers(0, 5))):
            qrels[qid][f"u{q:03d}{extra}"] = int(rng.integers(0, 4))
        if not qrels[qid]:
            qrels[qid]["u_only"] = 0
        scores = rng.integers(0, 8, size=len(docs)).astype(float) / 4   # many ties
        run[qid] = {d: float(s) for d, s in zip(docs, scores)}
    return qrels, run


def to_skrank(qrels, run):
    q_rows = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    qr = Qrels(qid=np.array([r[0] for r in q_rows]), docno=np.array([r[1] for r in q_rows]),
               rel=np.array([r[2] for r in q_rows], dtype=np.int64))
    rn = Run(qid=np.array([r[0] for r in r_rows]), docno=np.array([r[1] for r in r_rows]),
             score=np.array([r[2] for r in r_rows]), rank=np.zeros(len(r_rows), dtype=np.int64),
             tag=np.array(["t"] * len(r_rows)))
    return qr, rn


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threshold", [1, 2])
def test_agrees_with_pytrec_eval(seed, threshold):
    qrels, run = random_collection(seed)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, MEASURES, relevance_level=threshold)
    expected = evaluator.evaluate(run)
    names = sorted(next(iter(expected.values())))
    qr, rn = to_skrank(qrels, run)
    res = skrank.evaluate(qrels=qr, run=rn, metrics=names, threshold=threshold)
    qids = res.qid.tolist()
    assert sorted(qids) == sorted(expected)
    assert len(names) >= 30
    for name in names:
        got = dict(zip(qids, res.per_query[name].tolist()))
        for qid, values in expected.items():
            assert got[qid] == pytest.approx(values[name], abs=1e-9), (name, qid)
