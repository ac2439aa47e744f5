"""``skrank evaluate`` as trec_eval 10: measure selection, evaluation, output.

:func:`skrank._declare.names.select_measures` reads ``-m`` options as trec_eval's
``mark_measure`` does (nicknames, ``name.params``); :func:`trec_eval_lines` evaluates the
selected measures of :mod:`skrank._trec.measures` over a
:class:`skrank._trec.data.TrecRanking` and writes trec_eval's lines (per
query, grouped by query, then the ``all`` rows).
"""

import os

import numpy as np

from ._trec.measures import ALL_ROW, TREC_MEASURES
from ._declare.table import METRICS, trec_eval_declaration
from . import _plan
from ._core.checks import InvalidParameterError
from ._declare.names import atof, select_measures
from .io._fields import encode, decode, fits_fixed, str_array
from . import io
from ._trec.data import trec_ranking, run_tag
from .io._read import read_qrels_table, read_run_table
from .io._stream import QueryStream
from .io._tokenize import check_no_duplicates, empty_run_table, Layout, read_tables

MISSING_ZSCORE_VALUE = -1000000.0   # trec_eval.h
_FUNC = "evaluate"


def read_zscores(path):
    """``qid measure mean stddev`` lines -> {(qid, measure): (mean, stddev)}."""
    table = {}
    with open(path, "rb") as handle:
        raw = handle.read()
        try:
            text = raw.decode()
        except UnicodeDecodeError as exc:
            number = raw[:exc.start].count(b"\n") + 1
            raise ValueError(f"{_FUNC}: {path}: line {number} is not UTF-8 text "
                             f"({exc.reason} at byte {exc.start}).") from None
        for number, line in enumerate(text.splitlines(), 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 4:
                raise ValueError(f"{_FUNC}: {path}: line {number} must read 'qid measure "
                                 f"mean stddev'. Got {line!r} instead.")
            table[(fields[0], fields[1])] = (atof(fields[2]), atof(fields[3]))
    return table


class _ZScores:
    """A zscores file as arrays: the evaluated query, the measure name, mean and stddev
    of each of its lines."""

    def __init__(self, table, qids):
        row = {q: i for i, q in enumerate(qids)}
        keys = list(table)
        self.query = np.array([row.get(q, -1) for q, _ in keys], dtype=np.int64)
        self.names, self.name_of = np.unique(np.array([n for _, n in keys] or [""]),
                                             return_inverse=True)
        self.name_of = self.name_of[:len(keys)]
        self.mean = np.array([m for m, _ in table.values()], dtype=np.float64)
        self.stddev = np.array([sd for _, sd in table.values()], dtype=np.float64)

    def convert(self, values, names):
        """trec_eval's te_convert_to_zscore on a (n_queries, n_values) table:
        (value - mean) / stddev; a missing entry, or a zero stddev with value != mean,
        gives MISSING_ZSCORE_VALUE."""
        col_of_name = {name: j for j, name in enumerate(names)}
        column = np.array([col_of_name.get(n, -1) for n in self.names.tolist()])[self.name_of]
        use = (self.query >= 0) & (column >= 0)
        mean = np.full(values.shape, np.nan)
        stddev = np.full(values.shape, np.nan)
        mean[self.query[use], column[use]] = self.mean[use]
        stddev[self.query[use], column[use]] = self.stddev[use]
        known = ~np.isnan(mean)
        out = np.full(values.shape, MISSING_ZSCORE_VALUE)
        scaled = known & (stddev != 0)
        out[scaled] = (values[scaled] - mean[scaled]) / stddev[scaled]
        out[known & (stddev == 0) & (values == mean)] = 0.0
        return out


def _c_float(value):
    """printf's ``%6.4f``, with glibc's spelling of NaN (``-nan`` when the sign bit is set)."""
    if value != value:
        return "  -nan" if np.signbit(value) else "   nan"
    return f"{value:6.4f}"


def measure_blocks(ranking, selected, *, zscores=None):
    """Per selected measure: ``(item, values)``, values of shape (n_queries, n_rows)
    (an array of strings for relstring), in the order of ``ranking.qids``.

    The measures are calls of the metric table's declarations, planned and executed
    by :mod:`skrank._plan` as every entry point's: those a declaration of
    :data:`~skrank._declare.table.METRICS` lists in its ``trec_names`` (map, P.5,
    ndcg_cut.10, bpref, ...) run its kernel on the engine's view of ``ranking``, the
    others (``trec_eval:<name>``) their own kernels on ``ranking``."""
    qids = [str(q) for q in ranking.qids.tolist()]
    n_q = len(qids)
    per_item = [_calls(item, ranking.level) for item in selected]
    p = _plan.plan(_FUNC, [((i, j), call) for i, calls in enumerate(per_item)
                           for j, call in enumerate(calls)])
    prepared = _plan.Prepared(None, None, None, None, {"trec_ranking": ranking})
    rankings = {"stable": ranking.engine} if p.depths else {}   # (a _GroupRanking has none)
    columns = _plan.execute(p, prepared, rankings=rankings).columns
    ztable = _ZScores(zscores, qids) if zscores is not None else None
    blocks = []
    for i, item in enumerate(selected):
        m = item.measure
        parts = [columns[(i, j)].values for j in range(len(per_item[i]))]
        if m.name == "relstring":
            values = parts[0]
            if item.names[0] == "relstring":  # cleared by name, as the others
                values = np.where(ranking.placeholder, "", values)
            blocks.append((item, np.asarray(values).reshape(n_q)))
            continue
        values = np.column_stack([np.asarray(v, dtype=np.float64).reshape(n_q, -1)
                                  for v in parts])
        if m.placeholder_zero:
            # trec_eval clears these by printed name, so not once parameters rename them.
            for j, name in enumerate(item.names):
                if name == m.name or m.name == "unj":
                    values[ranking.placeholder, j] = 0.0
        if ztable is not None and m.name != "runid":
            values = ztable.convert(values, item.names)
        blocks.append((item, values))
    return blocks


#: trec_eval's measures that a declaration of METRICS computes, by their trec_eval name.
_TABLE_METRIC = {name: spec for spec in METRICS.values() for name in spec.trec_names}


def _calls(item, level):
    """The metric calls of one selected measure: one per cutoff of a measure that a
    declaration of METRICS computes, else one of its ``trec_eval:`` declaration."""
    m = item.measure
    spec = _TABLE_METRIC.get(m.name)
    named_gains = m.kind == "p_pair" and any(name != "p" for name, _ in item.params)
    if spec is None or named_gains:   # nDCG and RBP with named gains: trec_eval's own
        declaration = trec_eval_declaration(m.name)
        return [_plan.MetricCall(declaration.name, (("params", tuple(item.params)),))]
    options = dict(spec.trec_names[m.name], threshold=level, ties="stable",
                   no_relevant="zero")
    if m.name == "rbp":
        options["p"] = dict(item.params).get("p", options["p"])
    cutoffs = item.params if m.kind == "cut_long" else (None,)
    calls = []
    for k in cutoffs:
        try:
            calls.append(_plan.MetricCall.of(spec, {
                name: value for name, value in dict(options, k=k).items()
                if name in spec.parameters}, func=_FUNC))
        except InvalidParameterError as exc:   # a cutoff out of range: name the measure
            shown = f"{m.name}.{k}" if k is not None else item.names[0]
            raise InvalidParameterError(
                f"{_FUNC}: measure {shown}: {str(exc).removeprefix(_FUNC + ': ')}"
            ) from None
    return calls


def trec_eval_text(qids, blocks, **options):
    """trec_eval's output (one string, each line ending with a newline); see
    :func:`trec_eval_pieces`."""
    return "".join(trec_eval_pieces(qids, blocks, **options))


# Per-query lines are formatted for this many queries at a time (bounded memory).
# Not measured: a memory bound on the formatted text held at once.
_QUERIES_PER_PIECE = 1000


def trec_eval_pieces(qids, blocks, *, runid, all_qrels_rel, per_query=False, complete=False,
                     z=False):
    """trec_eval's output, piece after piece (strings of whole lines), for the
    per-query values ``blocks`` of the queries ``qids`` (see :func:`measure_blocks`)."""
    n_q = len(qids)
    if per_query and n_q:
        columns = []
        for item, values in blocks:
            m = item.measure
            if not m.per_query:
                continue
            if m.name == "relstring":
                columns.append((f"{item.names[0]:<22}\t", "text", values))
                continue
            prefix = "Z" if z else ""
            for j, name in enumerate(item.names):
                if m.integer and not z:
                    columns.append((f"{name:<22}\t", "int", values[:, j]))
                else:
                    columns.append((f"{prefix}{name:<22}\t", "float", values[:, j]))
        for lo in range(0, n_q if columns else 0, _QUERIES_PER_PIECE):
            hi = lo + _QUERIES_PER_PIECE
            yield _per_query_text(qids[lo:hi], [(p, k, v[lo:hi]) for p, k, v in columns])

    lines = []
    for item, values in blocks:
        m = item.measure
        if m.aggregate == "none":
            if m.name == "runid":
                lines.append(f"{'runid':<22}\tall\t{runid}")
            continue
        prefix = "Z" if z else ""
        for j, name in enumerate(item.names):
            if m.aggregate == "num_rel" and complete:
                value = float((all_qrels_rel > 0).sum())
            else:
                value = ALL_ROW[m.aggregate](_FUNC, values[:, j])
            if m.integer and not z:
                lines.append(f"{name:<22}\tall\t{int(value)}")
            else:
                lines.append(f"{prefix}{name:<22}\tall\t{_c_float(value)}")
    yield "".join(line + "\n" for line in lines)


def trec_eval_lines(ranking, selected, *, per_query=False, complete=False, zscores=None):
    """trec_eval's output lines for ``selected`` measures over ``ranking``."""
    blocks = measure_blocks(ranking, selected, zscores=zscores)
    text = trec_eval_text([str(q) for q in ranking.qids.tolist()], blocks,
                          runid=ranking.runid, all_qrels_rel=ranking.all_qrels_rel,
                          per_query=per_query, complete=complete, z=zscores is not None)
    return text.splitlines()


def _digits(values, width):
    """Non-negative integers as right-aligned decimal bytes (n, width), leading
    zeros as NUL (one digit at least)."""
    out = np.empty((values.shape[0], width), dtype=np.uint8)
    rest = values.copy()
    for j in range(width - 1, -1, -1):
        out[:, j] = rest % 10 + 48
        rest //= 10
    # Leading zeros become NUL: every column left of the first non-zero digit.
    leading = np.cumsum(out[:, :-1] != 48, axis=1) == 0
    out[:, :-1][leading] = 0
    return out


def _fixed4(values):
    """printf's ``%6.4f`` of each value as NUL-padded bytes (n, width), vectorised.

    The value times 10**4 is rounded to an integer and written with integer
    digits; values whose scaled product lies within 1e-6 of a rounding tie
    (where the product's own rounding could decide), NaN, infinities and
    magnitudes of 1e5 or more are formatted one by one as C does.
    """
    n = values.shape[0]
    scaled = np.abs(values) * 1e4
    with np.errstate(invalid="ignore"):
        fraction = scaled - np.floor(scaled)
        careful = ~(scaled < 1e9) | (np.abs(fraction - 0.5) < 1e-6)
    rounded = np.rint(np.where(careful, 0.0, scaled)).astype(np.int64)
    whole = _digits(rounded // 10000, 5)
    out = np.zeros((n, 11), dtype=np.uint8)
    out[:, 0] = np.where(np.signbit(values), 45, 0)
    out[:, 1:6] = whole
    out[:, 6] = 46
    out[:, 7:] = _digits(rounded % 10000 + 10000, 5)[:, 1:]
    rows = np.flatnonzero(careful)
    if rows.size:
        texts = [_c_float(v).encode() for v in values[rows].tolist()]
        width = max(11, max(map(len, texts)))
        if width > 11:
            out = np.concatenate([out, np.zeros((n, width - 11), dtype=np.uint8)], axis=1)
        out[rows] = 0
        for row, text in zip(rows.tolist(), texts):
            out[row, :len(text)] = np.frombuffer(text, dtype=np.uint8)
    return out


def _integers(values):
    """``int(v)`` of each value as NUL-padded bytes (n, 21)."""
    ints = values.astype(np.int64)
    out = np.zeros((ints.shape[0], 21), dtype=np.uint8)
    out[:, 0] = np.where(ints < 0, 45, 0)
    out[:, 1:] = _digits(np.abs(ints), 20)
    return out


def _text_matrix(strings):
    """Strings as NUL-padded UTF-8 bytes (n, width)."""

    encoded = encode(np.asarray(strings, dtype=str))
    return encoded.view(np.uint8).reshape(encoded.shape[0], encoded.dtype.itemsize)


def _per_query_text(qids, columns):
    """The per-query lines ``<name padded>\t<qid>\t<value>``, query by query and
    in column order within a query, built as one byte matrix (one row per line,
    fields NUL-padded) whose NULs are then dropped: no Python loop over lines.  With
    a query id long next to the others, the lines are joined one by one instead (a
    matrix would cost every line the longest id)."""
    q_text = [q + "\t" for q in qids]
    q_lengths = [len(q) for q in q_text]
    wide = bool(q_text) and not fits_fixed(len(q_text), max(q_lengths), sum(q_lengths))
    q_matrix = None if wide else _text_matrix(q_text)
    fields = []
    for prefix, kind, values in columns:
        if kind == "float":
            value = _fixed4(values)
        elif kind == "int":
            value = _integers(values)
        else:
            value = _text_matrix([f"'{v}'" for v in values.tolist()])
        fields.append((np.frombuffer(prefix.encode(), dtype=np.uint8), value))
    if wide:
        return _joined_lines(q_text, fields)
    n_q, n_cols = len(qids), len(fields)
    width = (max(p.shape[0] for p, _ in fields) + q_matrix.shape[1]
             + max(v.shape[1] for _, v in fields) + 1)
    lines = np.zeros((n_q, n_cols, width), dtype=np.uint8)
    for j, (prefix, value) in enumerate(fields):
        at = prefix.shape[0]
        lines[:, j, :at] = prefix
        lines[:, j, at:at + q_matrix.shape[1]] = q_matrix
        at += q_matrix.shape[1]
        lines[:, j, at:at + value.shape[1]] = value
    lines[:, :, -1] = 10
    return lines[lines != 0].tobytes().decode("utf-8", errors="surrogateescape")


def _joined_lines(q_text, fields):
    """:func:`_per_query_text`'s lines joined one by one (long query ids)."""
    values = [[row.tobytes().replace(b"\0", b"") for row in value] for _, value in fields]
    prefixes = [prefix.tobytes() for prefix, _ in fields]
    out = []
    for i, q in enumerate(q_text):
        q = q.encode("utf-8", "surrogateescape")
        out.extend(prefix + q + column[i] + b"\n" for prefix, column in zip(prefixes, values))
    return b"".join(out).decode("utf-8", errors="surrogateescape")


def measures_help():
    """The ``--help`` list of trec_eval measures, from the table."""
    rows = []
    for m in TREC_MEASURES.values():
        if m.kind in ("cut_long", "cut_double"):
            default = ",".join(f"{v:g}" for v in m.defaults)
            label = f"{m.name}[.{default}]"
        elif m.kind == "p_double" and m.defaults:
            label = f"{m.name}[.{','.join(f'{v:g}' for v in m.defaults)}]"
        elif m.kind == "p_pair":
            label = f"{m.name}[.name=value,...]"
        else:
            label = m.name
        rows.append(f"  {label:<34} {m.summary}")
    return "\n".join(rows)


def evaluate_files(qrels, run, *, measures=(), per_query=False, level=1, complete=False,
                   max_ret=None, judged_only=False, num_docs=0, zscores=None,
                   float32_scores=False, rel_format="qrels", pieces=False):
    """trec_eval's output lines for a qrels and a run (paths, io objects or tables
    read by :mod:`skrank.io`); ``pieces``: the output as an iterator of strings
    of whole lines instead."""
    if rel_format not in ("qrels", "qrels_jg"):
        raise ValueError(f"{_FUNC}: -R must be 'qrels' or 'qrels_jg'. Got {rel_format!r} "
                         f"instead; the preference formats are not supported.")
    groups = rel_format == "qrels_jg"
    selected = _selected(measures, rel_format)

    options = dict(level=level, complete=complete, max_ret=max_ret, judged_only=judged_only,
                   float32_scores=float32_scores)
    if groups:
        if isinstance(run, (str, os.PathLike)):
            run = io.read_run(run)
        ranking = _group_ranking(qrels, run, options)
    else:
        if isinstance(run, (str, os.PathLike)):
            run = read_run_table(run, compact=True)
        if isinstance(qrels, (str, os.PathLike)):
            qrels = read_qrels_table(qrels)
        ranking = trec_ranking(qrels, run, **options)
    ranking.num_docs_in_coll = num_docs
    table = read_zscores(zscores) if zscores is not None else None
    blocks = measure_blocks(ranking, selected, zscores=table)
    out = trec_eval_pieces([str(q) for q in ranking.qids.tolist()], blocks,
                           runid=ranking.runid, all_qrels_rel=ranking.all_qrels_rel,
                           per_query=per_query, complete=complete, z=table is not None)
    return out if pieces else "".join(out).splitlines()


def _selected(measures, rel_format):
    """The selected measures, checked against the judgement format."""
    groups = rel_format == "qrels_jg"
    selected = select_measures(measures or (["qrels_jg"] if groups else []))
    for item in selected:
        if item.measure.judgement_groups != groups and item.measure.name not in ("runid",
                                                                                 "num_q"):
            raise ValueError(
                f"{_FUNC}: {item.measure.name} needs "
                f"{'-R qrels_jg' if item.measure.judgement_groups else '-R qrels'}. Got "
                f"-R {rel_format} instead; -R qrels_jg takes map_avgjg, P_avgjg, "
                f"Rprec_mult_avgjg (-m qrels_jg).")
    return selected


def evaluate_stream(qrels, run, *, block_bytes, measures=(), per_query=False, level=1,
                    complete=False, max_ret=None, judged_only=False, num_docs=0,
                    zscores=None, float32_scores=False):
    """trec_eval's output (pieces of text) for a run read and evaluated one block of
    queries at a time.

    ``qrels``: a path or a qrels table (held in memory); ``run``: a path or a
    binary file object, read about ``block_bytes`` at a time.  Every query's
    rows must come together (runs are written query by query); the per-query
    values are those of :func:`evaluate_files` and are printed, as trec_eval
    does, in query order once the whole run has been read, so the output is
    the same byte for byte.  Memory holds the qrels, one block of the run and
    the per-query values.
    """
    selected = _selected(measures, "qrels")
    if isinstance(qrels, (str, os.PathLike)):
        qrels = read_qrels_table(qrels)
    check_no_duplicates(qrels)
    stream = QueryStream(qrels, run, block_bytes)
    index = stream.index
    if index.qids.shape[0] == 0:
        raise ValueError(f"{_FUNC}: the qrels hold no judgement. Got an empty qrels file.")
    table = read_zscores(zscores) if zscores is not None else None
    options = dict(level=level, max_ret=max_ret, judged_only=judged_only,
                   float32_scores=float32_scores)
    parts = []          # per block: (qids, measure blocks)
    last = (None, "")   # (largest evaluated qid, its run tag): trec_eval's runid

    def evaluate_block(sub_qrels, block):
        ranking = trec_ranking(sub_qrels, block, complete=True, **options)
        ranking.num_docs_in_coll = num_docs
        parts.append((ranking.qids, measure_blocks(ranking, selected, zscores=table)))
        return ranking

    for codes, sub_qrels, block in stream:
        ranking = evaluate_block(sub_qrels, block)
        if last[0] is None or index.qids[codes[-1]] > last[0]:
            last = (index.qids[codes[-1]], ranking.runid)
    missing = stream.missing()
    if missing.shape[0]:
        if not complete:
            raise ValueError(
                f"{_FUNC}: every query of the qrels must be in the run (trec_eval 10 stops "
                f"here too). Got query {str(decode(index.qids[missing[:1]])[0])!r} "
                f"({missing.shape[0]} in all) missing from the run. Pass -c to evaluate it "
                f"on an empty ranking, or remove it from the qrels.")
        # trec_eval's placeholder ranking for the queries absent from the run.
        evaluate_block(index.subset(missing), empty_run_table())
    first_tag = run_tag(stream.first_block, None) if stream.first_block is not None else None
    qids = np.concatenate([q for q, _ in parts])
    order = np.argsort(qids, kind="stable")
    merged = [(item, np.concatenate([blocks[j][1] for _, blocks in parts])[order])
              for j, (item, _) in enumerate(parts[0][1])]
    runid = last[1] if last[0] is not None else (first_tag or "")
    return trec_eval_pieces(qids[order].tolist(), merged, runid=runid,
                            all_qrels_rel=qrels.numbers["rel"], per_query=per_query,
                            complete=complete, z=table is not None)


_AGGREGATE_WORDS = {
    "mean": "mean", "sum": "sum", "gm": "geometric mean (values floored at 1e-5)",
    "num_q": "number of queries", "none": "-",
    "num_rel": "sum (with -c: qrels entries with rel > 0)",
}


def measures_markdown():
    """The measure table of docs/trec_eval.md, generated from the declarations."""
    rows = ["| trec_eval measure | parameters (default) | rows printed | `all` row | "
            "skrank on arrays | what it is |",
            "|---|---|---|---|---|---|"]
    for m in TREC_MEASURES.values():
        if m.kind == "cut_long":
            params = "cutoffs " + ",".join(str(v) for v in m.defaults)
            printed = f"`{m.name}_<k>`"
        elif m.kind == "cut_double":
            params = "levels " + ",".join(f"{v:g}" for v in m.defaults)
            printed = f"`{m.name}_<x.xx>`"
        elif m.kind == "p_double":
            params = ",".join(f"{v:g}" for v in m.defaults) if m.defaults else "-"
            printed = f"`{m.name}` (`{m.name}_<params>` when given)"
        elif m.kind == "p_pair":
            params = "`level=gain`,..." + (" and `p=`" if m.name.startswith("rbp") else "")
            printed = f"`{m.name}` (`{m.name}_<params>` when given)"
        else:
            params, printed = "-", f"`{m.name}`"
        if not m.per_query:
            printed += ", `all` only"
        elif m.aggregate == "none":
            printed += ", per query only"
        skrank = f"`{m.skrank}`" if m.skrank else "-"
        rows.append(f"| `{m.name}` | {params} | {printed} | {_AGGREGATE_WORDS[m.aggregate]} | "
                    f"{skrank} | {m.summary} |")
    return "\n".join(rows) + "\n"


class _GroupRanking:
    """-R qrels_jg: one ranking per (query, judgement group), and the queries."""

    def __init__(self, groups, group_query, qids, runid):
        self.groups = groups
        self.group_query = group_query
        self.qids = qids
        self.n_queries = qids.shape[0]
        self.groups_per_query = np.bincount(group_query, minlength=self.n_queries)
        self.placeholder = np.zeros(self.n_queries, dtype=bool)
        self.placeholder[group_query[groups.placeholder]] = True
        self.runid = runid
        self.all_qrels_rel = groups.all_qrels_rel
        self.num_docs_in_coll = 0
        self.level = groups.level


def _tab_joined(left, right):
    """``left<TAB>right`` of each row (objects when either side holds long ids)."""
    if left.dtype == object or right.dtype == object:
        return str_array([f"{a}\t{b}" for a, b in zip(left.tolist(), right.tolist())])
    return np.char.add(np.char.add(left, "\t"), right)


def _before_tab(strings):
    """The text of each string before its first tab."""
    if strings.dtype == object:
        return str_array([text.partition("\t")[0] for text in strings.tolist()])
    return np.char.partition(strings, "\t")[:, 0]


def _group_ranking(path, run, options):
    """Judgement groups (the qrels' second column) as sub-queries 'qid<TAB>group'."""

    # The judgement group is read as the column a run's tag would be (one per row).
    layout = Layout("qid jg docno rel", 4, True, qid=0, docno=2, tag=1,
                    numbers={"rel": (3, np.int64, "an integer")})
    table = next(read_tables(path, layout))
    sub_qid = _tab_joined(decode(table.qid()), decode(table.tag))
    qrels = io.Qrels(qid=sub_qid, docno=decode(table.docno), rel=table.numbers["rel"])
    # Each run row once per judgement group of its query.
    pairs = np.unique(sub_qid)
    pair_qid = _before_tab(pairs)
    order = np.argsort(pair_qid, kind="stable")
    pair_qid, pairs = pair_qid[order], pairs[order]
    first = np.searchsorted(pair_qid, run.qid, side="left")
    last = np.searchsorted(pair_qid, run.qid, side="right")
    counts = last - first
    rows = np.repeat(np.arange(len(run)), counts)
    offset = np.arange(rows.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
    sub_run = io.Run(qid=pairs[first[rows] + offset], docno=run.docno[rows],
                     score=run.score[rows], rank=run.rank[rows], tag=run.tag[rows])
    groups = trec_ranking(qrels, sub_run, **options)
    outer = _before_tab(groups.qids)
    qids, group_query = np.unique(outer, return_inverse=True)
    runid = groups.runid if len(sub_run) else (str(run.tag[0]) if len(run) else "")
    return _GroupRanking(groups, group_query, qids, runid)
