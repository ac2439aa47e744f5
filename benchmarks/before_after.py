"""Time the same skrank calls in two source trees, interleaved: a change's before and after.

    git worktree add /tmp/before <commit> && (cd /tmp/before && python setup.py build_ext --inplace)
    python benchmarks/before_after.py /tmp/before .            # 1M rows, 7 rounds
    python benchmarks/before_after.py /tmp/before . --rows 200000 --rounds 3

Each round runs one fresh process per tree (the order alternates between rounds), and
each process times every call (best of ``--repeat`` after a warm-up) on the same seeded
data: 1M rows as 10,000 queries x 100 documents with graded labels, scores tie-free and
rounded to 2 decimals (many small tie groups), one evaluate of 6 metrics, and the
command line's trec_eval mode and skrank mode on files of the same rows.  The report
gives each call's median over rounds in both trees and their ratio (after / before);
on a shared machine read ratios, not absolute times.  Values are compared too: a call
whose value differs between the trees by more than 1e-12 is reported.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_WORKER = r"""
import json, sys, time, os, io, contextlib
import numpy as np
import skrank
from skrank.cli import main as cli

n_queries, n_docs, repeat, folder = int(sys.argv[1]), 100, int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
qid = np.repeat(np.arange(n_queries), n_docs)
y = rng.integers(0, 4, qid.shape[0]).astype(np.float64)
free = rng.random(qid.shape[0]) + 0.1 * y
rounded = np.round(free, 2)
SIX = ["ndcg@10", "ndcg", "map", "mrr", "precision@10", "recall@100"]
calls = {
    "ndcg@10": lambda: skrank.ndcg_score(y, free, qid=qid, k=10),
    "ndcg": lambda: skrank.ndcg_score(y, free, qid=qid),
    "map": lambda: skrank.map_score(y, free, qid=qid),
    "mrr": lambda: skrank.mrr_score(y, free, qid=qid),
    "map, 2-decimal ties": lambda: skrank.map_score(y, rounded, qid=qid),
    "ndcg@10, 2-decimal ties": lambda: skrank.ndcg_score(y, rounded, qid=qid, k=10),
    "evaluate of 6": lambda: skrank.evaluate(y, free, qid=qid, metrics=SIX).mean,
    "evaluate of 6, 2-decimal ties": lambda: skrank.evaluate(y, rounded, qid=qid, metrics=SIX).mean,
}
qrels, run = os.path.join(folder, "qrels"), os.path.join(folder, "run")
def cli_call(*args):
    def call():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli(["evaluate", qrels, run, *args])
        return out.getvalue()
    return call
calls["cli trec_eval mode (-m map -m ndcg_cut.10)"] = cli_call("-m", "map", "-m", "ndcg_cut.10")
calls["cli trec_eval mode (-m all_trec -q)"] = cli_call("-m", "all_trec", "-q")
calls["cli skrank mode (-m map -m ndcg@10)"] = cli_call("-m", "map", "-m", "ndcg@10")
result = {}
for name, call in calls.items():
    value = call()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    if isinstance(value, dict):
        value = {k: float(v) for k, v in value.items()}
    elif not isinstance(value, str):
        value = float(value)
    result[name] = [best, value]
print(json.dumps(result))
"""


def _write_files(folder, n_queries):
    import numpy as np

    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(n_queries), 100)
    doc = np.tile(np.arange(100), n_queries)
    y = rng.integers(0, 4, qid.shape[0])
    score = rng.random(qid.shape[0]) + 0.1 * y
    with open(Path(folder) / "qrels", "w") as f:
        f.writelines(f"q{q} 0 d{d} {r}\n" for q, d, r in zip(qid, doc, y))
    with open(Path(folder) / "run", "w") as f:
        f.writelines(f"q{q} Q0 d{d} 0 {s:.6f} bench\n" for q, d, s in zip(qid, doc, score))


def _same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= 1e-12 for k in a)
    if isinstance(a, str):
        return a == b
    return abs(a - b) <= 1e-12


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="source tree of the change's parent (its skrank/ built)")
    parser.add_argument("after", help="source tree with the change")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n_queries = max(args.rows // 100, 1)
    trees = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    times = {side: {} for side in trees}
    values = {}
    with tempfile.TemporaryDirectory() as folder:
        _write_files(folder, n_queries)
        for r in range(args.rounds):
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            for side in order:
                env = dict(os.environ, PYTHONPATH=trees[side])
                out = subprocess.run(
                    [sys.executable, "-c", _WORKER, str(n_queries), str(args.repeat), folder],
                    env=env, capture_output=True, text=True, check=True, cwd=folder)
                for name, (seconds, value) in json.loads(out.stdout).items():
                    times[side].setdefault(name, []).append(seconds)
                    values.setdefault(name, {})[side] = value
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{args.rows:,} rows, {args.rounds} rounds (median of each call's best of "
          f"{args.repeat}), before = {args.before}, after = {args.after}\n")
    print("| call | before (ms) | after (ms) | after / before | same values |")
    print("|---|---|---|---|---|")
    for name in times["before"]:
        b = statistics.median(times["before"][name]) * 1e3
        a = statistics.median(times["after"][name]) * 1e3
        same = _same(values[name]["before"], values[name]["after"])
        print(f"| {name} | {b:.1f} | {a:.1f} | {a / b:.2f}x | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
