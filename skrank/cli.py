"""The ``skrank`` console command.

``skrank evaluate QRELS RUN -m ndcg@10 -m map`` prints trec_eval's layout
(``measure<TAB>qid|all<TAB>value``); ``skrank demo`` tunes rankers end to end (:mod:`skrank._demo`);
``skrank compare QRELS RUN1 RUN2 ...`` tests whether runs differ (:func:`skrank.compare`);
``skrank fuse RUN1 RUN2 ... -m rrf`` fuses runs (:func:`skrank.fuse`).
"""

import argparse
import functools
import json
import re
import sys
import warnings
from typing import NamedTuple

import numpy as np

COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
DEFAULT_CLI_METRICS = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "recip_rank",
                       "P_5", "P_10", "recall_100", "ndcg", "ndcg_cut_10")


# By default a run file larger than one block is streamed; one that turns out not to
# be grouped by query is then read whole if it is below _AUTO_STREAM_BYTES.
# Not measured: _AUTO_STREAM_BYTES is a memory policy (a run read whole up to 1 GiB);
# _BLOCK_BYTES follows --block-size's help, blocks of a few MiB stream at full speed
# (benchmarks/trec_eval_cli), but 8 MiB itself was not timed against other sizes.
_AUTO_STREAM_BYTES = 1 << 30
_BLOCK_BYTES = 8 << 20


_BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _byte_size(text):
    """'4096', '64K', '256M', '8MiB', '8 MB', '1G' -> bytes (argparse type; K, M and G
    are powers of 1024, with or without a trailing 'B' or 'iB')."""
    found = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:I?B)?\s*", text.upper())
    value = int(found[1]) * _BYTE_UNITS[found[2]] if found else 0
    if value <= 0:
        raise argparse.ArgumentTypeError(
            f"block size must be a positive number of bytes such as 4096, 64M, 8MiB or 1G. "
            f"Got {text!r} instead.")
    return value


def _count(low):
    """argparse type: an int >= ``low`` (-M: documents kept per query, -N: documents)."""
    def count(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(
                f"must be an integer >= {low}. Got {text!r} instead.")
        return value
    return count


def _level(text):
    """argparse type of -l: a finite number."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not abs(value) < 2.0 ** 63:  # NaN, inf, beyond the int64 grades
        raise argparse.ArgumentTypeError(
            f"must be a number between -2**63 and 2**63 (a relevance level). Got {text!r} "
            f"instead.")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


_COMMAND_HELP = {
    "demo": "tune rankers end to end on synthetic (or your) data and plot them",
    "compare": "compare TREC runs: paired significance tests, intervals, effect sizes",
    "fuse": "fuse TREC runs (RRF, CombSUM, weighted sums, ...) into one TREC run",
}


def _build_parser(command=None):
    """The command line's parser.  ``command``: the subcommand about to run; the
    others get their one-line help only, so that ``skrank evaluate`` does not
    import what ``compare`` (scipy.stats) and ``demo`` (scikit-learn) need.
    None builds every subcommand in full."""
    from . import __version__

    parser = _Parser(prog="skrank", description="Ranking metrics the scikit-learn way.")
    parser.add_argument("--version", action="version", version=f"skrank {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_evaluate_parser(sub)
    for name, build in (("demo", _demo_parser), ("compare", _add_compare_parser),
                        ("fuse", _fuse_parser)):
        if command is None or command == name:
            build(sub)
        else:
            sub.add_parser(name, help=_COMMAND_HELP[name])
    return parser


class _Reading(NamedTuple):
    """One ``-m`` name, read once by the one grammar (:func:`_read_name`)."""

    skrank: bool      # a skrank metric name (skrank mode), not a trec_eval measure
    item: object      # what evaluate() is given: (name, the options the name sets)
    spec: object      # its declaration; None for a count or a name that does not parse
    error: object     # the grammar's error for a name that does not parse, else None


@functools.lru_cache(maxsize=256)
def _read_name(name):
    """What ``-m name`` is: a trec_eval measure or nickname (``P.5,10``, a row trec_eval
    prints such as ``P_5``), a count, or a skrank metric name, read once with the names
    of the metrics that read ``judged=`` (the qrels judge).  A name printed as trec_eval
    prints it carries trec_eval's value (``rbp``: trec_eval's p=0.9).  Names neither
    knows go to trec_eval mode, whose error suggests both."""
    from ._evaluation import INPUTS
    from ._declare.names import is_trec_spec, parse_metric_name

    if name in COUNTS:
        return _Reading(not is_trec_spec(name), name, None, None)
    try:
        spec, params = parse_metric_name(name, func="evaluate", trec=True, inputs=INPUTS,
                                         trec_first=True)
    except (ValueError, TypeError) as exc:
        return _Reading("@" in name and not is_trec_spec(name), name, None, exc)
    # (bpref and infAP without '@' are trec_eval mode's, as in trec_eval)
    skrank = not is_trec_spec(name) and ("@" in name or not spec.inputs)
    return _Reading(skrank, (name, params), spec, None)


def _add_evaluate_parser(sub):
    """``skrank evaluate``: its inputs and metric options, then those of --ci and of
    trec_eval's own (each group in a function of its own)."""
    from ._declare.names import metric_help
    from ._declare.table import METRICS
    from ._declare.params import EVALUATE_NO_RELEVANT, EVALUATE_TIES

    max_grade = METRICS["err"].name_defaults["max_grade"]   # gdeval's scale
    from ._trec_eval import measures_help

    ev = sub.add_parser(
        "evaluate", help="evaluate a TREC run against qrels (trec_eval layout)",
        description="Evaluate a TREC run (qid Q0 docno rank score tag) against qrels "
                    "(qid iter docno rel). Output: measure<TAB>qid|all<TAB>value. "
                    "With trec_eval measure names (or no -m: trec_eval's 'official' set) "
                    "the output is trec_eval 10's, line for line; skrank names "
                    "(ndcg@10, mrr, ...) use skrank's metrics.",
        epilog="trec_eval measures (-m NAME, -m NAME.PARAMS, or the sets official, "
               "all_trec, set):\n" + measures_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.prog = "skrank evaluate"
    ev.add_argument("qrels", help="TREC qrels file (plain or gzip); - reads standard input")
    ev.add_argument("run", help="TREC run file (plain or gzip); - reads standard input")
    ev.add_argument("-m", "--metric", action="append", dest="metrics", metavar="NAME",
                    help=f"a skrank metric name ({metric_help()}), or a trec_eval name "
                         "(ndcg_cut.10, P.5, recip_rank); also bpref, infap, judged@<k> "
                         "(judged by the qrels), num_q, num_ret, num_rel, "
                         "num_rel_ret; the diversity metrics among the skrank names "
                         "(alpha_ndcg, err_ia, ...) alone, on qrels with a subtopic column "
                         "(--qrels-format). Repeatable.")
    ev.add_argument("--qrels-format", default="auto", choices=("auto", "trec", "diversity"),
                    help="diversity: qrels with a subtopic column (qid subtopic docno rel, "
                         "TREC Web track diversity qrels), evaluated with the diversity "
                         "metrics (-m alpha_ndcg@20 ...; default: ndeval's set at k=20); "
                         "trec: plain qrels (qid iter docno rel); auto (default): "
                         "diversity when -m names diversity metrics (never guessed from "
                         "the file: plain qrels may repeat a document under several "
                         "iterations)")
    ev.add_argument("--max-grade", type=float, default=float(max_grade), metavar="G",
                    help="top grade of the relevance scale for err (ERR's stop probability "
                         f"is (2**rel - 1) / 2**G); default {max_grade:g}, as gdeval")
    ev.add_argument("-q", "--per-query", action="store_true",
                    help="also print one row per query")
    ev.add_argument("-l", "--threshold", type=_level, default=None, metavar="LEVEL",
                    help="relevance threshold for binary metrics (trec_eval -l); default 1. "
                         "An integer with trec_eval measures, as trec_eval reads it (a "
                         "level such as 1.5 is refused there, not truncated)")
    ev.add_argument("-c", "--complete", action="store_true",
                    help="count queries in the qrels but missing from the run as 0 "
                         "(trec_eval -c); default: leave them out")
    ev.add_argument("--ties", default="trec", choices=EVALUATE_TIES.choices,
                    help="order of tied scores; default 'trec' (docno descending, "
                         "as trec_eval)")
    ev.add_argument("--no-relevant", default="zero", choices=EVALUATE_NO_RELEVANT.choices,
                    help="value of queries without a relevant document: zero (default, "
                         "trec_eval), one (LightGBM, XGBoost), skip (left out of the mean), "
                         "nan, or raise (an error naming them, exit status 2)")
    ev.add_argument("--json", action="store_true", help="print JSON instead of the table")
    _add_ci_options(ev)
    _add_trec_eval_options(ev)


def _add_ci_options(ev):
    """``skrank evaluate --ci`` and its interval's options."""
    ev.add_argument("--ci", action="store_true",
                    help="add each mean's confidence interval as two extra columns (low, "
                         "high) of the 'all' rows; evaluates with skrank's engine (trec_eval "
                         "names keep trec_eval's values; without -m, the default set: "
                         + ", ".join(DEFAULT_CLI_METRICS) + ")")
    ev.add_argument("--ci-method", default="bootstrap",
                    choices=["bootstrap", "bca", "percentile", "t"],
                    help="interval of --ci: BCa bootstrap over queries (default), "
                         "percentile bootstrap or Student's t")
    ev.add_argument("--confidence", type=float, default=0.95,
                    help="confidence level of --ci (0.95)")
    ev.add_argument("--n-resamples", type=int, default=10_000, metavar="B",
                    help="bootstrap resamples of --ci (10000)")
    ev.add_argument("--seed", type=int, default=None,
                    help="random seed of --ci's bootstrap (default: none, so intervals vary "
                         "slightly between calls)")


def _add_trec_eval_options(ev):
    """``skrank evaluate``'s options of trec_eval (-M, -J, -N, -Z, -R, 32-bit scores)
    and of reading the run in blocks."""
    ev.add_argument("-M", "--max-retrieved", type=_count(1), default=None, metavar="N",
                    help="trec_eval -M: evaluate only the first N documents of each ranking")
    ev.add_argument("-J", "--judged-only", action="store_true",
                    help="trec_eval -J: drop retrieved documents without a judgement")
    ev.add_argument("-N", "--num-docs", type=_count(0), default=0, metavar="N",
                    help="trec_eval -N: documents in the collection (for utility)")
    ev.add_argument("-Z", "--zscores", default=None, metavar="FILE",
                    help="trec_eval -Z: print z-scores from a 'qid measure mean stddev' file")
    ev.add_argument("-R", "--rel-format", default="qrels", metavar="FORMAT",
                    help="trec_eval -R: judgement format, 'qrels' (default) or 'qrels_jg' "
                         "(judgement groups, for -m qrels_jg)")
    ev.add_argument("--stream", action=argparse.BooleanOptionalAction, default=None,
                    help="read and evaluate the run one block of queries at a time, in "
                         "bounded memory (trec_eval and skrank measures alike; the run's lines "
                         "must be grouped by query, as runs are written). Default: streamed "
                         "when the run file "
                         "is larger than one block; a run that is not grouped by query is "
                         f"then read whole if under {_AUTO_STREAM_BYTES >> 30} GiB. "
                         "--no-stream reads it whole")
    ev.add_argument("--block-size", type=_byte_size, default=_BLOCK_BYTES, metavar="BYTES",
                    help="bytes of the run read per block when streaming (e.g. 64M, 8MiB, "
                         f"1G; default {_BLOCK_BYTES >> 20}M). Blocks of a few MiB or more keep "
                         "streaming at full speed; each block costs a fixed set of numpy calls")
    ev.add_argument("--float32-scores", action="store_true",
                    help="compare scores as 32-bit floats, as pytrec_eval (trec_eval 10 "
                         "reads doubles)")


def _add_compare_parser(sub):
    from ._compare import CORRECTIONS, INTERVALS, TESTS

    cmp = sub.add_parser(
        "compare", help=_COMMAND_HELP["compare"],
        description="Compare two or more TREC runs on the same qrels, query by query: "
                    "mean difference with its confidence interval, effect size, "
                    "wins/ties/losses, raw and corrected p-values (skrank.compare).",
    )
    cmp.prog = "skrank compare"
    cmp.add_argument("qrels", help="TREC qrels file (plain or gzip)")
    cmp.add_argument("runs", nargs="+", metavar="RUN",
                     help="two or more TREC run files; each is named by its file name")
    cmp.add_argument("-m", "--metric", action="append", dest="metrics", metavar="NAME",
                     help="metric to compare (ndcg@10, map, P@5, ...; repeatable); "
                          "default: map and ndcg@10")
    cmp.add_argument("--test", default="randomization", choices=list(TESTS),
                     help="paired two-sided test (default randomization)")
    cmp.add_argument("--correction", default="holm", choices=[*CORRECTIONS, "none"],
                     help="multiple-comparison correction over all comparisons "
                          "(default holm)")
    cmp.add_argument("--baseline", metavar="RUN",
                     help="compare every run with this one (a RUN as given, or its file "
                          "name); default: all pairs")
    cmp.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    cmp.add_argument("--confidence", type=float, default=0.95,
                     help="confidence level of the intervals, of all of them together "
                          "(simultaneous) when a correction is applied (0.95)")
    cmp.add_argument("--interval", choices=list(INTERVALS), default=None,
                     help="interval method (default: t with --test t, else bca)")
    cmp.add_argument("--n-resamples", type=int, default=10_000, metavar="B",
                     help="resamples of the randomization/bootstrap test and intervals "
                          "(10000)")
    cmp.add_argument("--seed", type=int, default=None, help="random seed of the randomization and bootstrap tests (default: none, so "
                          "their p-values and intervals vary slightly from run to run; give one "
                          "for reproducible output)")
    cmp.add_argument("-c", "--complete", action="store_true",
                     help="count queries of the qrels missing from a run as 0 (trec_eval -c)")
    cmp.add_argument("--common-queries", action="store_true",
                     help="compare on the queries every run has (default: runs must have "
                          "the same queries)")
    cmp.add_argument("--format", default="text", choices=["text", "markdown", "latex", "json"],
                     help="output: a text report (default), a paper-style table in markdown or "
                          "LaTeX, or JSON")


def _display_name(name):
    # trec_eval prints cutoffs as measure_k
    return name.replace(".", "_") if "@" not in name else name


def _format(value):
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{value:.4f}"


def _options(args):
    """evaluate()'s options from the command line, resolved once for both modes (see
    :func:`skrank._plan.resolve_options`)."""
    from ._plan import resolve_options

    return resolve_options("evaluate", ties=args.ties, no_relevant=args.no_relevant,
                           threshold=args.threshold, collection=True)


def _trec_mode(args, options):
    """trec_eval's measures and layout, unless skrank metric names are asked for, the
    options are not trec_eval's (ties other than docno order, no_relevant other than 0) or
    intervals are asked for (--ci)."""
    if args.json or args.ci or not options.trec_eval:
        return False
    return not any(_is_skrank_name(m) for m in (args.metrics or []))


def _is_skrank_name(spec):
    """A skrank metric name (ndcg@10, mrr, precision@5), as opposed to a trec_eval one."""
    return _read_name(spec).skrank


def _run_size(args):
    import os

    try:
        return os.path.getsize(args.run) if args.run != "-" else None
    except OSError:
        return None  # reading it says what is wrong


def _streaming(args):
    """Whether to stream the run: --stream, or a run file larger than one block."""
    if args.stream is not None:
        return args.stream
    if args.rel_format != "qrels" or args.qrels == "-":
        return False
    size = _run_size(args)
    return size is not None and size > args.block_size


def _evaluate_stream(args, out, level):
    from . import io
    from ._trec_eval import evaluate_stream

    if args.rel_format != "qrels":
        raise ValueError("--stream reads -R qrels judgements only. Got -R qrels_jg; "
                         "evaluate with --no-stream.")
    if args.qrels == "-" and args.run == "-":
        raise ValueError("only one of qrels and run can be read from standard input ('-')")
    qrels = _read_file(args.qrels, "qrels", io._read.read_qrels_table)
    run = sys.stdin.buffer if args.run == "-" else args.run
    try:
        text = evaluate_stream(
            qrels, run, block_bytes=args.block_size, measures=args.metrics or [],
            per_query=args.per_query, level=level,
            complete=args.complete, max_ret=args.max_retrieved, judged_only=args.judged_only,
            num_docs=args.num_docs, zscores=args.zscores, float32_scores=args.float32_scores)
    except FileNotFoundError:
        raise ValueError(f"{args.run}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{args.run}: is a directory, not a run file") from None
    for piece in text:
        out.write(piece)


def _evaluate_trec(args, out, options):
    from ._trec_eval import evaluate_files

    level = options.trec_eval_level("evaluate")   # -l 1.5 is refused, not truncated
    if _streaming(args):
        from .io._stream import NotGroupedError

        try:
            _evaluate_stream(args, out, level)
            return
        except NotGroupedError:
            size = _run_size(args)
            if args.stream or size is None or size > _AUTO_STREAM_BYTES:
                raise
            # Streamed by default, not grouped by query, small enough: read it whole.
    if args.rel_format == "qrels":
        qrels, run = _read_inputs(args, common_queries=False, tables=True)
    elif "-" in (args.qrels, args.run):
        raise ValueError("-R qrels_jg reads files only, not standard input ('-')")
    else:
        qrels, run = args.qrels, args.run
    text = evaluate_files(
        qrels, run, measures=args.metrics or [], per_query=args.per_query,
        level=level, complete=args.complete, max_ret=args.max_retrieved,
        judged_only=args.judged_only, num_docs=args.num_docs, zscores=args.zscores,
        float32_scores=args.float32_scores, rel_format=args.rel_format, pieces=True)
    for piece in text:
        out.write(piece)


def _diversity_qrels(args, named):
    """Whether the qrels are diversity qrels (``--qrels-format``): said so, or (``auto``)
    named by the metrics.  Not guessed from the file: plain qrels may repeat a document
    under several values of trec_eval's iteration column too (trec_eval's qrels.123)."""
    fmt = getattr(args, "qrels_format", "auto")
    if fmt == "trec":
        if named:
            raise ValueError("--qrels-format trec reads plain qrels, where diversity metrics "
                             "(-m alpha_ndcg@20 ...) have no subtopics: use --qrels-format "
                             "diversity (qid subtopic docno rel), or other metrics.")
        return False
    if fmt == "diversity" or named:
        if fmt == "diversity" and args.metrics and not named:
            raise ValueError("--qrels-format diversity evaluates diversity metrics only "
                             "(alpha_ndcg@k, alpha_dcg@k, err_ia@k, nerr_ia@k, nrbp, nnrbp, "
                             "p_ia@k, ap_ia, strec@k). Got " + ", ".join(args.metrics) +
                             " instead; evaluate the other metrics on plain qrels "
                             "(--qrels-format trec).")
        return True
    return False


def _evaluate_diversity(args, out):
    """Diversity metrics (issue 29): qrels with a subtopic column (``qid subtopic docno
    rel``), rows as trec_eval prints them; ties as ``ndeval -traditional`` by default."""
    from ._evaluate import evaluate
    from .diversity import DEFAULT_METRICS

    args.metrics = args.metrics or list(DEFAULT_METRICS)
    res = evaluate(qrels=args.qrels, run=args.run, metrics=args.metrics, ties=args.ties,
                   no_relevant=args.no_relevant, threshold=args.threshold)
    if args.json:
        json.dump(res.to_dict(), out, indent=1)
        out.write("\n")
        return
    qids = [str(q) for q in res.qid.tolist()]
    if args.per_query:
        for i, q in enumerate(qids):
            for name in args.metrics:
                value = float(res.per_query[name][i])
                if not np.isnan(value) or args.no_relevant == "nan":
                    out.write(f"{name:<22}\t{q}\t{_format(value)}\n")
    for name in args.metrics:
        out.write(f"{name:<22}\tall\t{_format(res.mean[name])}\n")


def _evaluate(args, out):
    from .diversity import diversity_request
    from ._evaluation import _evaluate_collection

    if _diversity_qrels(args, diversity_request("skrank evaluate", args.metrics)):  # issue 29
        _evaluate_diversity(args, out)
        return
    resolved = _options(args)
    if _trec_mode(args, resolved):
        _evaluate_trec(args, out, resolved)
        return
    trec_only = [flag for flag, on in (("-M", args.max_retrieved is not None),
                                       ("-J", args.judged_only), ("-Z", args.zscores),
                                       ("--float32-scores", args.float32_scores),
                                       ("-R", args.rel_format != "qrels")) if on]
    if trec_only:
        raise ValueError(f"{' and '.join(trec_only)} apply to trec_eval measures only "
                         f"(e.g. -m P.10, -m all_trec). Got skrank metric names or options "
                         f"(--json, --ties, --no-relevant) instead.")
    requested = args.metrics or list(DEFAULT_CLI_METRICS)
    readings = {name: _read_name(name) for name in requested if name not in COUNTS}
    for reading in readings.values():
        if reading.error is not None:
            raise reading.error
    metrics = _with_max_grade(readings, args.max_grade)

    def check_grades(qrels):
        top = float(np.max(qrels.numbers["rel"]))
        if top > args.max_grade and any(_is_err(r) for r in readings.values()):
            from ._declare.table import METRICS

            raise ValueError(
                f"{_shown(args.qrels)}: relevance level {top:g} is above err's grade scale "
                f"0-{args.max_grade:g} (--max-grade, default "
                f"{METRICS['err'].name_defaults['max_grade']:g} as gdeval). "
                f"Pass --max-grade {top:g} or more.")

    options = dict(metrics=metrics or ["map"], options=resolved,
                   missing_queries="zero" if args.complete else None)
    res = _evaluate_stream_skrank(args, options, check_grades) if _streaming(args) else None
    if res is None:
        qrels, run = _read_inputs(args, common_queries=True, tables=True)
        check_grades(qrels)
        res = _evaluate_collection("evaluate", options.pop("metrics"), qrels, run, **options)
    ci = None
    if args.ci and metrics:
        ci = res.confidence_interval(method=args.ci_method, confidence=args.confidence,
                                     n_resamples=args.n_resamples, seed=args.seed)
    if args.json:
        _write_json(res, metrics, ci, out)
    else:
        _write_rows(args, res, requested, ci, out)


def _write_json(res, metrics, ci, out):
    """``skrank evaluate --json``: the evaluation's dict, and --ci's intervals."""
    data = res.to_dict()
    if not metrics:
        data["mean"], data["per_query"] = {}, {}
    if ci is not None:
        data["confidence_interval"] = {
            "method": ci.method, "confidence": ci.confidence,
            "n_resamples": ci.n_resamples,
            "low": ci.low, "high": ci.high, "n_queries": ci.n_queries}
    json.dump(data, out, indent=1)
    out.write("\n")


def _write_rows(args, res, requested, ci, out):
    """``skrank evaluate``'s table in trec_eval's layout (--ci: two more columns)."""
    # As trec_eval: per-query rows grouped by query (measures in request order), then 'all'.
    per_query_rows, all_rows = [], []
    qids = [str(q) for q in res.qid.tolist()]
    for name in requested:
        label = _display_name(name)
        if name in COUNTS:
            if name == "num_q":
                all_rows.append((label, "all", res.qid.shape[0]))
                continue
            per_q = res.counts[name]
            if args.per_query:
                per_query_rows.extend((i, (label, q, int(v)))
                                      for i, (q, v) in enumerate(zip(qids, per_q)))
            all_rows.append((label, "all", int(per_q.sum())))
            continue
        if args.per_query:
            per_query_rows.extend((i, (label, q, float(v)))
                                  for i, (q, v) in enumerate(zip(qids, res.per_query[name]))
                                  if not np.isnan(v) or args.no_relevant == "nan")
        bounds = () if ci is None else (ci.low[name], ci.high[name])
        all_rows.append((label, "all", res.mean[name], *bounds))
    per_query_rows.sort(key=lambda row: row[0])
    for label, q, value, *bounds in [row for _, row in per_query_rows] + all_rows:
        extra = "".join(f"\t{_format(b)}" for b in bounds)   # --ci: low, high
        out.write(f"{label:<22}\t{q}\t{_format(value)}{extra}\n")


def _evaluate_stream_skrank(args, options, check_grades):
    """skrank's names on a run read one block of queries at a time; None when the
    run, streamed by default, turns out not to be grouped by query and is small
    enough to read whole."""
    from . import io
    from ._evaluate import _evaluate_stream
    from .io._stream import NotGroupedError

    if args.qrels == "-" and args.run == "-":
        raise ValueError("only one of qrels and run can be read from standard input ('-')")
    qrels = _read_file(args.qrels, "qrels", io._read.read_qrels_table)
    check_grades(qrels)
    try:
        return _evaluate_stream(qrels, sys.stdin.buffer if args.run == "-" else args.run,
                                block_bytes=args.block_size, **options)
    except FileNotFoundError:
        raise ValueError(f"{args.run}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{args.run}: is a directory, not a run file") from None
    except NotGroupedError:
        size = _run_size(args)
        if args.stream or size is None or size > _AUTO_STREAM_BYTES:
            raise
        return None  # streamed by default, not grouped by query, small enough


def _is_err(reading):
    return reading.spec is not None and reading.spec.name == "err"


def _with_max_grade(readings, max_grade):
    """evaluate()'s metrics (label -> (name, params)); err gets the --max-grade scale."""
    out = {}
    for label, reading in readings.items():
        name, params = reading.item
        out[label] = (name, {**params, "max_grade": max_grade} if _is_err(reading) else params)
    return out


def _shown(path):
    return "<stdin>" if path == "-" else path


def _read_inputs(args, *, common_queries, tables=False):
    """Read the qrels and the run ('-': standard input); errors name the file.
    ``common_queries``: also check that the two files share a query (skrank's names;
    trec_eval mode has its own rules).  ``tables``: the byte tables trec_eval mode
    reads (no str arrays, no rank column), checked for duplicates."""
    from . import io
    from .io import _read

    if args.qrels == "-" and args.run == "-":
        raise ValueError("only one of qrels and run can be read from standard input ('-')")
    if tables:
        readers = (_read.read_qrels_table, lambda path: _read.read_run_table(path, compact=True))
    else:
        readers = (io.read_qrels, io.read_run)
    qrels = _read_file(args.qrels, "qrels", readers[0])
    run = _read_file(args.run, "run", readers[1])
    if (common_queries and not args.complete
            and np.intersect1d(qrels.qid_runs, run.qid_runs).size == 0):
        raise ValueError(
            f"{_shown(args.run)}: no query of the run is in {_shown(args.qrels)} (the query "
            f"ids of the two files do not match)")
    return qrels, run


def _read_file(path, role, reader):
    """``reader(path)`` ('-': standard input), its errors naming the file; an empty
    file is an error."""
    name = "<stdin>" if path == "-" else path
    try:
        value = reader(sys.stdin.buffer if path == "-" else path)
    except FileNotFoundError:
        raise ValueError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{name}: is a directory, not a {role} file") from None
    except PermissionError:
        raise ValueError(f"{name}: permission denied") from None
    if len(value) == 0:
        raise ValueError(f"{name}: no line (an empty {role} file)")
    return value


def _demo_parser(sub):
    from ._demo import add_parser

    return add_parser(sub)


def _fuse_parser(sub):
    from ._fusion_cli import add_parser

    return add_parser(sub)


def _demo(args, out):
    from ._demo import run

    return run(args, out)


def _run_names(paths):
    """Each run's file name, or its path where file names repeat."""
    from pathlib import Path

    names = [Path(p).name for p in paths]
    return names if len(set(names)) == len(names) else list(paths)


def _same_file(a, b):
    import os

    try:
        return a == b or os.path.samefile(a, b)
    except OSError:  # missing or unreadable: reading it says so
        return False


def _check_distinct_runs(paths):
    """Each run file once: a run compared with itself (the same path twice, or two paths
    of one file) differs nowhere, and names two systems that are one."""
    for j, path in enumerate(paths):
        for earlier in paths[:j]:
            if _same_file(earlier, path):
                how = ("is given twice" if earlier == path
                       else f"and {earlier} are the same file")
                raise ValueError(
                    f"run {path} {how}: a run compared with itself differs on no query. "
                    f"Pass the run files of two or more different systems, e.g. "
                    f"skrank compare QRELS baseline.run new.run.")


#: compare()'s parameters as `skrank compare` spells them, for its messages.
_COMPARE_OPTIONS = {"n_resamples": "--n-resamples", "alpha": "--alpha",
                    "confidence": "--confidence", "random_state": "--seed"}


def _compare(args, out):
    from . import io
    from ._compare import check_options, compare
    from ._evaluate import evaluate

    if len(args.runs) < 2:
        raise ValueError(f"compare needs two or more run files. Got one ({args.runs[0]}). "
                         f"Pass the runs of the systems to compare, e.g. skrank compare "
                         f"{args.qrels} {args.runs[0]} OTHER_RUN.")
    _check_distinct_runs(args.runs)
    # compare()'s own rules, before any file is read, in the options' names
    check_options("skrank compare", n_resamples=args.n_resamples, alpha=args.alpha,
                  confidence=args.confidence, random_state=args.seed, names=_COMPARE_OPTIONS)
    names = _run_names(args.runs)
    baseline = args.baseline
    if baseline is not None and baseline not in names:  # a path as given, or another path
        baseline = next((name for name, path in zip(names, args.runs)
                         if _same_file(path, baseline)), baseline)
    if baseline is not None and baseline not in names:
        raise ValueError(f"--baseline must be one of the runs given, as written or by its "
                         f"file name ({', '.join(names)}). Got {baseline!r} instead.")
    metrics = args.metrics or ["map", "ndcg@10"]
    # the byte tables `skrank evaluate` reads; errors name the file
    qrels = _read_file(args.qrels, "qrels", io._read.read_qrels_table)
    results = {name: evaluate(qrels=qrels, metrics=metrics,
                              run=_read_file(path, "run", lambda p: io._read.read_run_table(
                                  p, compact=True)),
                              missing_queries="zero" if args.complete else None)
               for name, path in zip(names, args.runs)}
    if not args.common_queries:
        first, *others = (set(r.qid.tolist()) for r in results.values())
        if any(other != first for other in others):
            sizes = ", ".join(f"{name}: {r.qid.shape[0]}" for name, r in results.items())
            raise ValueError(
                f"the runs must have the same queries to be compared query by query. Got "
                f"{sizes} queries. Pass -c to count the qrels' queries missing from a run as "
                f"0 (trec_eval -c), or --common-queries to compare on the queries all runs have.")
    res = compare(results, metrics=metrics, baseline=baseline, test=args.test,
                  n_resamples=args.n_resamples,
                  correction=None if args.correction == "none" else args.correction,
                  alpha=args.alpha, confidence=args.confidence, interval=args.interval,
                  queries="common" if args.common_queries else "same", random_state=args.seed)
    if args.format == "json":
        json.dump(res.to_dict(), out, indent=1)
        out.write("\n")
    elif args.format == "markdown":
        out.write(res.to_markdown())
    elif args.format == "latex":
        out.write(res.to_latex())
    else:
        out.write(repr(res) + "\n")


def _print_warnings(command, caught):
    """skrank's own warnings (missing queries, ...) as one plain line each on stderr, in
    the command's voice rather than as Python's ``file:line: UserWarning:`` form."""
    seen = set()
    for w in caught:
        message = str(w.message).replace("\n", " ")
        if issubclass(w.category, UserWarning):
            if message not in seen:
                seen.add(message)
                sys.stderr.write(f"skrank {command}: warning: {message}\n")
        else:  # pragma: no cover - anything else goes its usual way
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _in_command_terms(message, command):
    """The Python function's wording of an unknown metric name, in the command's terms:
    where the names are listed (``--help``), and the judged metrics, which the qrels
    always judge here (no ``judged=`` argument)."""
    from ._declare.names import NAMES_LISTED

    message = message.replace(NAMES_LISTED, f"'skrank {command} --help' lists them")
    return message.replace("With judged=, also ", "Also (judged by the qrels) ")


def main(argv=None, out=None):
    """Entry point of the ``skrank`` command; returns the exit status."""
    out = sys.stdout if out is None else out
    words = sys.argv[1:] if argv is None else list(argv)
    command = next((w for w in words if not w.startswith("-")), "")
    parser = _build_parser(command)
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            try:
                if args.command == "evaluate":
                    _evaluate(args, out)
                elif args.command == "compare":
                    _compare(args, out)
                elif args.command == "fuse":
                    from ._fusion_cli import run as _fuse

                    _fuse(args, out, _read_file)
                else:
                    _demo(args, out)
            finally:
                out.flush()
                _print_warnings(args.command, caught)
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        sys.stderr.close()
        return 0
    except (ValueError, TypeError, OSError) as exc:
        message = str(exc).replace("\n", " ")
        prefix = f"skrank {args.command}: "
        # A check that names the command itself, or the Python function of that name.
        for named in (prefix, f"{args.command}: "):
            message = message[len(named):] if message.startswith(named) else message
        message = _in_command_terms(message, args.command)
        sys.stderr.write(f"{prefix}error: {message}\n")
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
