"""`skrank evaluate` in trec_eval mode on a large TREC run, against trec_eval.

    python benchmarks/trec_eval_cli.py                    # 2,000 queries x 1,000 documents
    python benchmarks/trec_eval_cli.py --queries 200      # smaller
    python benchmarks/trec_eval_cli.py --trec-eval /path/to/trec_eval

Writes a qrels and a run (graded labels with -1, unjudged and unretrieved
documents, tied scores) to a temporary folder, then times, each in a fresh
process as a user runs them: `skrank evaluate` with trec_eval's default
measures and with `-m all_trec -q`, the same through skrank's own metric names
(`-m ndcg@10 -m map -q`), and the trec_eval binary when one is given or on
PATH, whose output must be identical to skrank's (exit status 1 otherwise).
Not part of `run.py`'s suite; no timing is asserted.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def write_collection(folder, n_queries, n_docs, seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), n_docs)
    doc = rng.integers(0, 100 * n_docs, size=qid.size)
    # distinct documents within a query: offset each query's draws by its row number
    doc = doc * n_docs + np.tile(np.arange(n_docs), n_queries)
    score = np.round(rng.random(qid.size) * 100, 2)           # 2 decimals: ties
    lines = np.char.add(np.char.add(qid.astype(str), " Q0 D"), doc.astype(str))
    rank = np.tile(np.arange(1, n_docs + 1), n_queries).astype(str)
    lines = np.char.add(np.char.add(np.char.add(lines, " "), rank), " ")
    lines = np.char.add(np.char.add(lines, score.astype(str)), " run\n")
    (folder / "run").write_text("".join(lines.tolist()))
    judged = rng.random(qid.size) < 0.1
    rel = rng.choice([-1, 0, 0, 0, 1, 2], size=int(judged.sum()))
    qrels = np.char.add(np.char.add(qid[judged].astype(str), " 0 D"), doc[judged].astype(str))
    qrels = np.char.add(np.char.add(qrels, " "), np.char.add(rel.astype(str), "\n"))
    (folder / "qrels").write_text("".join(qrels.tolist()))


def timed(argv):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start, proc.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--trec-eval", default=shutil.which("trec_eval"))
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp())
    try:
        write_collection(folder, args.queries, args.docs)
        files = [str(folder / "qrels"), str(folder / "run")]
        skrank = [sys.executable, "-m", "skrank", "evaluate"]
        print(f"{args.queries * args.docs:,} run lines, {args.queries:,} queries")
        outputs = {}
        for label, extra in (("skrank evaluate (official)", []),
                             ("skrank evaluate -m all_trec -q", ["-m", "all_trec", "-q"]),
                             ("skrank evaluate -m ndcg@10 -m map -q",
                              ["-m", "ndcg@10", "-m", "map", "-q"])):
            seconds, outputs[label] = timed(skrank + extra + files)
            print(f"{label:<40} {seconds:6.2f} s")
        if args.trec_eval:
            seconds, out = timed([args.trec_eval, "-m", "all_trec", "-q", *files])
            print(f"{'trec_eval -m all_trec -q':<40} {seconds:6.2f} s")
            same = out == outputs["skrank evaluate -m all_trec -q"]
            print("outputs identical" if same else "OUTPUTS DIFFER")
            return 0 if same else 1
        print("(no trec_eval binary: pass --trec-eval PATH to compare)")
        return 0
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    sys.exit(main())
