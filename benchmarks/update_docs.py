"""Fill docs/performance.md's measured tables from the benchmark results.

    python benchmarks/update_docs.py                # after `python benchmarks/run.py` (and dask_scaling.py)
    python benchmarks/update_docs.py --time-tests   # first time the test suite here (writes results/test_suite.json)

The page holds blocks between ``<!-- generated: NAME -->`` and
``<!-- end generated: NAME -->``; each is rewritten from
``benchmarks/results/results.json`` (a full run of run.py),
``dask_scaling.json`` (dask_scaling.py), ``test_suite.json`` (``--time-tests``)
and, where the command-line benchmark left one, ``trec_eval_cli*.json``.  A
block whose source is missing says so in the page instead of keeping old
numbers.  Prose around the blocks is written by hand and quotes no number the
blocks do not show.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PAGE = ROOT / "docs" / "performance.md"
sys.path.insert(0, str(HERE))
from run import fmt_ratio as x, fmt_time as ms  # noqa: E402  (one formatting for both)

_BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated: (?P=name) -->)", re.S)


def _load(name):
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def _minutes(seconds):
    return f"{seconds / 60:.1f} min"


def _load_sentence(load, cores):
    """What the load averages at the run's start and end say about its times."""
    if not load[0]:
        return ""
    measured = (f"load average {load[0][0]:.1f} at the start of the run, {load[1][0]:.1f} at its "
                f"end, on {cores} cores")
    if max(load[0][0], load[1][0]) < 1.5:  # the run itself keeps about one core busy
        return f" The machine was otherwise idle ({measured}); ratios are taken within one interleaved run."
    return (f" The machine was shared with other work ({measured}), so absolute times are inflated "
            f"and noisy; ratios are taken within one interleaved run.")


def block_machine(res, tests):
    env = res["environment"]
    v = env["versions"]
    load = env.get("load_at_start"), env.get("load_at_end")
    lines = [f"Measured in a run that ended {res.get('date', '?')}, on {env['cpu']}, {env['cores']} cores, "
             f"{env['memory_bytes'] / 2**30:.0f} GiB, {env['platform']}; Python {v['python']}, "
             f"numpy {v['numpy']}, scipy {v['scipy']}, scikit-learn {v.get('sklearn', '?')}."
             + _load_sentence(load, env["cores"]),
             "",
             f"The full benchmark run (`python benchmarks/run.py`) took {_minutes(res['elapsed_s'])} here."]
    if tests:
        lines.append(f"The test suite (`{tests['command']}`) took {_minutes(tests['seconds'])} "
                     f"({tests['date']}, load average {tests['load_average'][0]:.1f} at its start, "
                     f"{re.sub(r' in [0-9.]+s.*$', '', tests['summary'])}).")
    else:
        lines.append("The test suite's time has not been measured on this machine "
                     "(`python benchmarks/update_docs.py --time-tests`).")
    return "\n".join(lines) + "\n"


def block_targets(res):
    rows = res["targets"]
    n_pass = sum(t["met"] for t in rows)
    L = [f"{n_pass} of {len(rows)} targets pass in this run.", "",
         "| section | target | goal | measured | result |", "|---|---|---|---|---|"]
    for t in rows:
        L.append(f"| {t.get('section', '')} | {t['target']} | {t['goal']} | {x(t['measured'])} ({t['detail']}) | "
                 f"{'PASS' if t['met'] else '**MISS**'} |")
    return "\n".join(L) + "\n"


def _layout_rows(res):
    lay = res.get("layouts") or {}
    return lay.get("rows", []), {r["case"]: r for r in (lay.get("dispatch") or {}).get("rows", [])}


def block_layouts(res):
    sys.path.insert(0, str(HERE))
    import _layouts as LAYOUTS

    rows, other = _layout_rows(res)
    by = {r["case"]: r for r in rows}
    L = ["| layout | skrank | ratio to its baseline | fastest peer taking it | skrank / that peer | "
         "/ np.sort | / np.sort, AVX-512 off |", "|---|---|---|---|---|---|---|"]
    for case in LAYOUTS.SORT_LAYOUTS:
        r = by.get(case)
        if r is None:
            continue
        peers = [by[p] for p in LAYOUTS.LAYOUT_PEERS.get(case, ()) if p in by]
        best = min(peers, key=lambda p: p["median_s"]) if peers else None
        peer = f"{best['case'].split(': ', 1)[1]}, {ms(best['median_s'])}" if best else "none timed"
        o = other.get(case)
        base = f"{x(r['ratio'])} ({r['baseline']})" if r["ratio"] is not None else "baseline"
        L.append(f"| {case} | {ms(r['median_s'])} | {base} | {peer} | "
                 f"{x(r['median_s'] / best['median_s']) if best else '—'} | {x(r['vs_sort'])} | "
                 f"{x(o['vs_sort']) if o and o.get('vs_sort') is not None else '—'} |")
    sorts = [r for r in rows if "np.sort" in r["case"]]
    for r in sorts:
        o = other.get(r["case"])
        L.append(f"| {r['case']} (the yardstick) | {ms(r['median_s'])} | | | | 1x | "
                 f"{ms(o['median_s']) if o else '—'} (its time) |")
    feats = " ".join(((res.get("layouts") or {}).get("dispatch") or {}).get("features") or [])
    L += ["", f"*AVX-512 off*: the skrank cases and np.sort run again in a subprocess with "
              f"`NPY_DISABLE_CPU_FEATURES=\"{feats}\"`." if feats else
          "*AVX-512 off*: not measured in this run."]
    return "\n".join(L) + "\n"


def block_other_cases(res):
    rows, _ = _layout_rows(res)
    L = ["| case | time | ratio | baseline |", "|---|---|---|---|"]
    for r in rows:
        if r["case"].startswith(("ties", "tie-free", "scorer", "large: MAP", "large: evaluate")):
            L.append(f"| {r['case']} | {ms(r['median_s'])} | {x(r['ratio'])} | {r['baseline'] or ''} |")
    return "\n".join(L) + "\n"


def block_peers(res):
    rows, _ = _layout_rows(res)
    by = {r["case"]: r for r in rows}
    L = ["| peer (evaluation only, its own input format) | time | skrank's matching call | skrank | "
         "peer / skrank | value check |", "|---|---|---|---|---|---|"]
    matching = {"peer: sklearn": "2-D array (one query per row)", "peer: XGBoost": "grouped int ids",
                "peer: LightGBM": "grouped int ids", "peer: pytrec_eval, evaluate": "tie-free: evaluate(), 6 metrics",
                "peer: pytrec_eval": "grouped int ids", "peer: ranx": "grouped int ids",
                "ragged peer": "ragged, grouped"}
    for r in rows:
        if not r["case"].startswith(("peer", "ragged peer")):
            continue
        mine = next(by[v] for k, v in matching.items() if r["case"].startswith(k))
        check = {True: "agrees", False: "DISAGREES", None: "not compared"}[r["check"]["agrees"]]
        L.append(f"| {r['case'].split(': ', 1)[1]}{' (ragged rows)' if r['case'].startswith('ragged') else ''} | "
                 f"{ms(r['median_s'])} | {mine['case']} | {ms(mine['median_s'])} | "
                 f"{x(r['median_s'] / mine['median_s'])} | {check} |")
    return "\n".join(L) + "\n"


def block_memory(res):
    mem = (res.get("layouts") or {}).get("memory", [])
    if not mem:
        return "Not measured in this run.\n"
    L = ["| call | rows | peak extra | input arrays | ratio |", "|---|---|---|---|---|"]
    for m in mem:
        L.append(f"| {m['case']} | {m['rows']:,} | {m['peak_extra_bytes'] / 2**20:.0f} MiB | "
                 f"{m['input_bytes'] / 2**20:.0f} MiB | {m['ratio']:.2f}x |")
    return "\n".join(L) + "\n"


def block_dask(d):
    if d is None:
        return ("*Not measured yet on this machine: run `python benchmarks/dask_scaling.py`, "
                "then `python benchmarks/update_docs.py`.*\n")
    L = [f"Measured on {d['date']} ({d['cpu_count']} cores, load average {d['load_average'][0]:.1f} at the end; "
         f"dask {d['dask']}; {d['workers']} worker processes of one thread, memory limit {d['memory_limit']}, "
         f"shuffle buffer {d['comm_buffer']}; Parquet files of {d['rows_per_file']:,} rows; "
         f"metrics {', '.join(d['metrics'])}):", "",
         "| run rows | partitions | wall time | worker RSS after start-up | peak worker RSS |",
         "|---:|---:|---:|---:|---:|"]
    for r in d["rows"]:
        L.append(f"| {r['rows']:,} | {r['partitions']} | {r['seconds']:.1f} s | "
                 f"{', '.join(f'{m:.0f}' for m in r['start_mib'])} MiB | "
                 f"{', '.join(f'{m:.0f}' for m in r['peak_mib'])} MiB |")
    small, large = d["rows"]
    a0, a1 = d["peak_above_start_mib"]
    L += ["", f"{d['factor']} times the rows took {large['seconds'] / small['seconds']:.1f} times the time; "
              f"the largest worker's peak above its start-up memory went from {a0:.0f} MiB to {a1:.0f} MiB "
              f"({d['growth']:.2f}x): {'bounded' if d['bounded'] else 'NOT bounded'} by the suite's "
              f"criterion (under {d['bounded_goal']:g}x for {d['factor']}x the data)."]
    return "\n".join(L) + "\n"


def block_cli():
    found = sorted(RESULTS.glob("trec_eval_cli*.json")) + sorted(RESULTS.glob("trec_eval_cli*.md"))
    if not found:
        return ("**Not measured by this suite's run.** `python benchmarks/trec_eval_cli.py` (run on its own: "
                "it builds trec_eval and runs each command in a fresh process) leaves no results file in "
                "`benchmarks/results/`; its latest measurements, 2,000,000- and 10,000,000-line runs against "
                "trec_eval 10.0's C binary with wall time and peak memory, are in "
                "[skrank evaluate as trec_eval: large runs](trec_eval.md#large-runs-streaming-speed-and-memory).\n")
    return "".join(f"See [`{p.name}`](../benchmarks/results/{p.name}) (written by "
                   f"`python benchmarks/trec_eval_cli.py`).\n" for p in found)


def time_tests():
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    load = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    seconds = time.perf_counter() - t0
    summary = (proc.stdout.strip().splitlines() or ["?"])[-1].strip("= ")
    out = {"command": "python -m pytest -q -x -p no:cacheprovider", "seconds": seconds, "summary": summary,
           "returncode": proc.returncode, "load_average": load,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    (RESULTS / "test_suite.json").write_text(json.dumps(out, indent=1))
    print(f"test suite: {seconds:.0f} s, {summary}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-tests", action="store_true", help="time the test suite first")
    parser.add_argument("--results", help="preview from another results.json (any mode)")
    args = parser.parse_args(argv)
    if args.time_tests:
        time_tests()
    res = json.loads(Path(args.results).read_text()) if args.results else _load("results.json")
    if res is None or (res.get("mode") != "full" and not args.results):
        sys.exit("update_docs: benchmarks/results/results.json must come from a full run "
                 "(`python benchmarks/run.py`). Got " + ("none" if res is None else f"mode {res.get('mode')!r}") + ".")
    blocks = {"machine": lambda: block_machine(res, _load("test_suite.json")),
              "targets": lambda: block_targets(res), "layouts": lambda: block_layouts(res),
              "other-cases": lambda: block_other_cases(res), "peers": lambda: block_peers(res),
              "memory": lambda: block_memory(res), "dask": lambda: block_dask(_load("dask_scaling.json")),
              "cli": block_cli}
    text = PAGE.read_text(encoding="utf-8")
    seen = []

    def fill(match):
        name = match["name"]
        if name not in blocks:
            raise SystemExit(f"update_docs: unknown generated block {name!r} in {PAGE}.")
        seen.append(name)
        return match.group(1) + blocks[name]() + match.group(4)

    text = _BLOCK.sub(fill, text)
    PAGE.write_text(text, encoding="utf-8")
    print(f"updated {PAGE}: {', '.join(seen)}")


if __name__ == "__main__":
    main()
