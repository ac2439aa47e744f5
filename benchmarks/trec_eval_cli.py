"""`skrank evaluate` against trec_eval's C binary: wall time and peak memory.

    python benchmarks/trec_eval_cli.py                                # 10,000 queries x 200
    python benchmarks/trec_eval_cli.py --docs 1000                    # 10,000,000 lines
    python benchmarks/trec_eval_cli.py --trec-eval /path/to/trec_eval --repeats 3
    python benchmarks/trec_eval_cli.py --trec-eval-src /path/to/trec_eval/checkout  # builds it

Writes a qrels and a run (graded labels with -1, unjudged and unretrieved
documents, tied scores, scores not in rank order, queries not in sorted order)
to a folder (``--folder`` keeps and reuses them), then runs, each in a fresh
process as a user does and interleaved (C, skrank, C, skrank, ...: a loaded
machine slows both alike): `-m ndcg_cut.10 -m map` and `-m all_trec -q`, with
skrank's default (streamed in blocks) and `--no-stream` (the whole run in
memory), and skrank's own names (`-m ndcg@10 -m map`, streamed and not; compared
with trec_eval's `-m ndcg_cut.10 -m map`).  Reports each
command's median wall time and peak resident memory (the child's
``ru_maxrss``), the ratios to trec_eval and to the run file's size, and
checks that skrank's output is trec_eval's byte for byte (exit status 1
otherwise).  The trec_eval binary is taken from ``--trec-eval``, from PATH, or
built with its own Makefile from ``--trec-eval-src`` when a compiler is
present; without one, skrank alone is timed and the report says so.
Not part of `run.py`'s suite; no timing is asserted.
"""

import argparse
import os
import shutil
import statistics
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
    with open(folder / "run", "w") as out:                     # query by query: bounded memory
        for q in range(n_queries):
            rows = slice(q * n_docs, (q + 1) * n_docs)
            out.write("".join(f"{q} Q0 D{d} {r} {s} run\n" for r, (d, s) in enumerate(
                zip(doc[rows].tolist(), score[rows].tolist()), 1)))
    judged = rng.random(qid.size) < 0.1
    rel = rng.choice([-1, 0, 0, 0, 1, 2], size=int(judged.sum()))
    with open(folder / "qrels", "w") as out:
        out.write("".join(f"{q} 0 D{d} {r}\n" for q, d, r in zip(
            qid[judged].tolist(), doc[judged].tolist(), rel.tolist())))


NAMES = "-m ndcg@10 -m map"
SAME_AS = {NAMES: "-m ndcg_cut.10 -m map"}  # the trec_eval command a case is compared with
TIME = "/usr/bin/time"  # GNU time: the child's peak memory, through a small parent


def measured(argv, stdout_path):
    """Run ``argv`` (stdout to a file); return (wall seconds, peak RSS in MiB or None).

    The memory is GNU time's ``%M``: a process started straight from this one
    would report at least this (numpy-sized) parent's resident size, which
    Linux carries over ``ru_maxrss`` across the exec.
    """
    env = dict(os.environ, PYTHONPATH=str(REPO))
    report = f"{stdout_path}.time"
    use_time = os.access(TIME, os.X_OK)
    command = [TIME, "-f", "%M", "-o", report, *argv] if use_time else argv
    with open(stdout_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, env=env)
        seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.decode()}")
    mib = int(Path(report).read_text().split()[-1]) / 1024 if use_time else None
    return seconds, mib


def find_trec_eval(args):
    if args.trec_eval:
        return args.trec_eval, ""
    found = shutil.which("trec_eval")
    if found:
        return found, ""
    if args.trec_eval_src:
        src = Path(args.trec_eval_src)
        if not (src / "trec_eval").exists():
            if shutil.which("make") is None or shutil.which("cc") is None:
                return None, "no compiler (make, cc) to build trec_eval"
            subprocess.run(["make", "-C", str(src)], check=True, capture_output=True)
        return str(src / "trec_eval"), ""
    return None, "no trec_eval binary (pass --trec-eval PATH or --trec-eval-src DIR)"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--folder", help="keep the collection here (reused when present)")
    parser.add_argument("--trec-eval")
    parser.add_argument("--trec-eval-src")
    args = parser.parse_args(argv)
    folder = Path(args.folder) if args.folder else Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if not (folder / "run").exists():
            write_collection(folder, args.queries, args.docs)
        files = [str(folder / "qrels"), str(folder / "run")]
        size = (folder / "run").stat().st_size / 2 ** 20
        binary, why = find_trec_eval(args)
        skrank = [sys.executable, "-m", "skrank", "evaluate"]
        cases = [("-m ndcg_cut.10 -m map", ["-m", "ndcg_cut.10", "-m", "map"]),
                 ("-m all_trec -q", ["-m", "all_trec", "-q"])]
        commands = []  # (case, tool, argv)
        for label, measures in cases:
            if binary:
                commands.append((label, "trec_eval", [binary, *measures, *files]))
            commands.append((label, "skrank", [*skrank, *measures, *files]))
            commands.append((label, "skrank --no-stream", [*skrank, "--no-stream", *measures,
                                                         *files]))
        # skrank's names for the same measures: compared with trec_eval's first case
        names = ["-m", "ndcg@10", "-m", "map"]
        commands.append((NAMES, "skrank", [*skrank, *names, *files]))
        commands.append((NAMES, "skrank --no-stream", [*skrank, "--no-stream", *names,
                                                       *files]))
        with open(folder / "run", "rb") as f:  # the files may come from an earlier call
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
        print(f"{lines:,} run lines, run file {size:.0f} MiB; "
              f"{'trec_eval: ' + binary if binary else why}")
        times = {key[:2]: [] for key in commands}
        memory = {key[:2]: [] for key in commands}
        identical = True
        for _ in range(args.repeats):
            outputs = {}
            for label, tool, command in commands:   # interleaved
                seconds, mib = measured(command, folder / "out")
                times[label, tool].append(seconds)
                memory[label, tool].append(mib)
                outputs[label, tool] = (folder / "out").read_bytes()
            # skrank's names: streamed and in memory print the same bytes
            identical &= outputs[NAMES, "skrank"] == outputs[NAMES, "skrank --no-stream"]
            for label, _ in cases:
                if binary:
                    for tool in ("skrank", "skrank --no-stream"):
                        identical &= outputs[label, tool] == outputs[label, "trec_eval"]
        print("\n| measures | command | wall (s) | vs trec_eval | peak memory (MiB) | "
              "x run file |\n|---|---|---|---|---|---|")
        for label, tool, _ in commands:
            t = statistics.median(times[label, tool])
            base = times.get((SAME_AS.get(label, label), "trec_eval"))
            ratio = f"{t / statistics.median(base):.2f}x" if base and tool != "trec_eval" else ""
            if None in memory[label, tool]:
                mem = "- | -"  # no GNU time
            else:
                m = max(memory[label, tool])
                mem = f"{m:.0f} | {m / size:.2f}"
            print(f"| `{label}` | {tool} | {t:.2f} | {ratio} | {mem} |")
        if binary:
            print("\noutputs identical to trec_eval's (skrank's names: streamed == in memory)"
                  if identical else "\nOUTPUTS DIFFER")
        return 0 if identical else 1
    finally:
        if not args.folder:
            shutil.rmtree(folder)


if __name__ == "__main__":
    sys.exit(main())
