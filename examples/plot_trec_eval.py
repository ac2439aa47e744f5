"""
trec_eval files: qrels and runs
===============================

``skrank evaluate QRELS RUN`` reads TREC files and prints trec_eval's output,
line for line; from Python, :func:`skrank.io.read_qrels` and
:func:`skrank.io.read_run` read the same files and ``skrank.evaluate(qrels=...,
run=...)`` evaluates them with trec_eval's conventions (ties by document id,
queries missing from the run skipped unless ``missing_queries="zero"``).
"""

# %%
# Writing a qrels file and two run files
# --------------------------------------
# 50 topics, 30 judged documents each (grades 0-2), and two systems that score
# 100 documents per topic.  The files go to a temporary directory.
import tempfile
from pathlib import Path

import numpy as np

import skrank
from skrank.cli import main
from skrank.io import read_qrels, read_run
from skrank.plot import MetricDistributionDisplay, PerQueryDisplay

rng = np.random.default_rng(0)
folder = Path(tempfile.mkdtemp())
qrels_lines, runs = [], {"bm25": [], "rerank": []}
for topic in range(401, 451):
    grades = {f"DOC-{topic}-{d:03d}": int(rng.choice(3, p=[.6, .25, .15])) for d in range(100)}
    judged = list(grades)[:30]
    qrels_lines += [f"{topic} 0 {doc} {grades[doc]}" for doc in judged]
    for system, quality in {"bm25": 0.8, "rerank": 1.4}.items():
        score = {doc: quality * g + rng.normal() for doc, g in grades.items()}
        ranked = sorted(score, key=score.get, reverse=True)
        runs[system] += [f"{topic} Q0 {doc} {rank} {score[doc]:.4f} {system}"
                         for rank, doc in enumerate(ranked, 1)]
(folder / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
for system, lines in runs.items():
    (folder / f"{system}.txt").write_text("\n".join(lines) + "\n")
print((folder / "bm25.txt").read_text().splitlines()[:3])

# %%
# The command line, as trec_eval
# ------------------------------
# ``skrank.cli.main`` takes the arguments of ``skrank evaluate`` and returns
# the exit status.
main(["evaluate", str(folder / "qrels.txt"), str(folder / "rerank.txt"),
      "-m", "map", "-m", "ndcg_cut.10", "-m", "P.5,10", "-m", "bpref"])

# %%
# The same files in Python
# ------------------------
qrels = read_qrels(folder / "qrels.txt")
results = {system: skrank.evaluate(qrels=qrels, run=read_run(folder / f"{system}.txt"),
                                   metrics=["map", "ndcg@10", "P@10"])
           for system in runs}
for system, res in results.items():
    print(system, {m: round(v, 4) for m, v in res.mean.items()})
print(skrank.compare(results, metrics="map", random_state=0).to_markdown())

# %%
# Per-topic differences and distributions
# ---------------------------------------
# :func:`skrank.io.join_qrels_run` gives flat rows (one per retrieved or judged
# document) that the displays take with ``qid=``.  Both systems retrieved the
# same 100 documents per topic, so after ordering each system's rows by (topic,
# document) the rows pair up and the scores of the two systems sit side by side.
from skrank.io import join_qrels_run  # noqa: E402


def by_document(system):
    arrays = join_qrels_run(qrels, read_run(folder / f"{system}.txt"))
    order = np.lexsort((arrays.docno, arrays.qid))
    return arrays.qid[order], arrays.docno[order], arrays.y_true[order], arrays.y_score[order]


qid, docno, y_true, s_rerank = by_document("rerank")
qid_b, docno_b, _, s_bm25 = by_document("bm25")
assert (qid == qid_b).all() and (docno == docno_b).all()
PerQueryDisplay.from_predictions(y_true, s_rerank, baseline_score=s_bm25, qid=qid,
                                 metric="ndcg@10", name="rerank", baseline_name="bm25",
                                 random_state=0)
MetricDistributionDisplay.from_predictions(y_true, {"bm25": s_bm25, "rerank": s_rerank},
                                           qid=qid, metric="ndcg@10", kind="violin")
