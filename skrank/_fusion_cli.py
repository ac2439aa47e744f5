"""``skrank fuse RUN1 RUN2 ... -m rrf -o fused.run``: the command line of :func:`skrank.fuse`."""

import argparse
import gzip
import sys

from ._fusion import METHODS, NORMS, TIES
from . import io
from .fusion import fuse


def add_parser(sub):
    """The ``fuse`` subcommand's parser (its choices come from the declarations)."""
    methods = [m.name for m in METHODS]
    fuse = sub.add_parser(
        "fuse", help="fuse TREC runs (RRF, CombSUM, weighted sums, ...) into one TREC run",
        description="Fuse TREC runs (qid Q0 docno rank score tag; plain or gzip, '-' reads "
                    "standard input) into one TREC run with skrank.fuse: the methods and "
                    "normalisations of ranx under the same names. A run without a query counts "
                    "as a run that returned nothing for it.",
        epilog="methods:\n" + "\n".join(
            f"  {m.name:12s} reads {m.reads}"
            + (f"; takes {', '.join(m.param_names)}" if m.param_names else "")
            + ("; trained on --qrels" if m.trained else "") for m in METHODS)
        + "\nnormalisations: " + ", ".join(n.name for n in NORMS) + ", none",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    fuse.prog = "skrank fuse"
    fuse.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files (two or more)")
    fuse.add_argument("-m", "--method", default="rrf", metavar="METHOD",
                      help=f"fusion method (default rrf): {', '.join(methods)}; the comb_* and "
                           "weighted_* spellings are accepted too")
    fuse.add_argument("--norm", default="default", metavar="NORM",
                      help="normalisation of each run's scores per query: "
                           + ", ".join(n.name for n in NORMS) + ", none; default: min-max for "
                           "the methods reading scores, none for those reading ranks")
    fuse.add_argument("-w", "--weights", default=None, metavar="W1,W2,...",
                      help="one weight per run, comma-separated (methods taking weights)")
    fuse.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                      help="a parameter of the method, e.g. -p k=60 (rrf), -p gamma=0.5; "
                           "repeatable")
    fuse.add_argument("--ties", default=TIES.default, choices=TIES.choices,
                      help="tied scores in the methods that read ranks (default average)")
    fuse.add_argument("--depth", type=int, default=None, metavar="N",
                      help="keep each run's top N documents per query before fusing")
    fuse.add_argument("--qrels", default=None, metavar="FILE",
                      help="training qrels of the supervised methods (probfuse, segfuse, ...)")
    fuse.add_argument("-o", "--output", default="-", metavar="FILE",
                      help="the fused TREC run ('-': standard output, default; a name "
                           "ending in .gz is written gzip-compressed)")
    fuse.add_argument("--tag", default=None, help="run tag of the output (default: the method)")
    return fuse


def _number(text):
    try:
        return int(text)
    except ValueError:
        return float(text)


def _params(pairs):
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--param must be NAME=VALUE, e.g. -p k=60. Got {pair!r} instead.")
        try:
            params[name.strip()] = _number(value.strip())
        except ValueError:
            raise ValueError(f"--param {name} must be a number. Got {value!r} instead.") from None
    return params


def _weights(text):
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--weights must be numbers separated by commas, e.g. 0.3,0.7. Got "
                         f"{text!r} instead.") from None


def write_trec_run(run, path):
    """Write a :class:`skrank.io.Run` as TREC lines ``qid Q0 docno rank score tag``
    ('-': standard output; ``.gz``: gzip)."""
    lines = "".join(f"{q} Q0 {d} {r} {s!r} {t}\n" for q, d, r, s, t in zip(
        run.qid.tolist(), run.docno.tolist(), run.rank.tolist(), run.score.tolist(),
        run.tag.tolist()))
    if path == "-":
        return lines
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write(lines)
    return None


def run(args, out, read_file):
    """Fuse the runs of ``args``; ``read_file(path, role, reader)`` reads a file with the
    command line's error messages (passed in by :mod:`skrank.cli`)."""

    if sum(path == "-" for path in args.runs + [args.qrels]) > 1:
        raise ValueError("only one input can be read from standard input ('-')")
    runs = {}
    for path in args.runs:
        name = path
        while name in runs:  # the same file twice keeps both
            name += "'"
        runs[name] = read_file(path, "run", io.read_run)
    qrels = None if args.qrels is None else read_file(args.qrels, "qrels", io.read_qrels)
    norm = None if args.norm.lower() == "none" else args.norm
    fused = fuse(runs, method=args.method, norm=norm, weights=_weights(args.weights),
                 ties=args.ties, depth=args.depth, qrels=qrels, name=args.tag,
                 **_params(args.param))
    text = write_trec_run(fused, args.output)
    if text is not None:
        out.write(text)
    if args.output != "-":
        sys.stderr.write(f"skrank fuse: wrote {len(fused)} lines for "
                         f"{len(set(fused.qid.tolist()))} queries to {args.output}\n")
