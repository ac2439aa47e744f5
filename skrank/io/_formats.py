"""Benchmark formats beside TREC's: BEIR/MTEB qrels TSV and ``{qid: {doc: score}}`` JSON.

* BEIR/MTEB qrels: ``qrels/<split>.tsv`` of a BEIR folder, tab-separated
  ``query-id  corpus-id  score`` after a header line naming those columns.
  The file is turned, in bytes and without a loop per line, into the TREC
  qrels the tokenizer reads (the header becomes a comment, so line numbers
  stay those of the file): one parser, one set of checks.
* JSON results: ``{query: {doc: score}}`` as BEIR's ``EvaluateRetrieval`` and
  MTEB's saved predictions write them (and pytrec_eval reads); as qrels, the
  scores are integer grades.

:func:`detect` tells the formats apart from the first bytes (gzip or plain):
a ``{`` starts JSON; a first line whose first tab-separated field is
``query-id`` is a BEIR header; anything else is TREC.
"""

import gzip
import io
import json
import os
import re

import numpy as np
from ._tokenize import source_name, QRELS, read_tables, Table
from .._core.checks import check_choice
from .._engine.scan import positions_in_runs
from ._fields import str_array

FORMATS_QRELS = ("trec", "beir", "json")
FORMATS_RUN = ("trec", "json")
BEIR_HEADER = ("query-id", "corpus-id", "score")
_GZIP_MAGIC = b"\x1f\x8b"
# Bytes read to tell a file's format (TREC, BEIR TSV, JSON) before reading it.
# Not measured: enough for a header line and a few rows of any of them.
_SNIFF_BYTES = 1 << 16


def _name(source):

    return source_name(source)


def _head(source):
    """The first bytes of ``source`` (decompressed), without consuming a stream:
    a path is opened; a stream is peeked (``peek``) or read and rewound
    (``seek``); a stream that allows neither is taken for TREC (None)."""
    if hasattr(source, "read"):
        if hasattr(source, "peek"):
            head = source.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
        elif hasattr(source, "seekable") and source.seekable():
            at = source.tell()
            head = source.read(_SNIFF_BYTES)
            source.seek(at)
        else:
            return None
        if isinstance(head, str):
            head = head.encode("utf-8")
    else:
        try:
            with open(os.fspath(source), "rb") as f:
                head = f.read(_SNIFF_BYTES)
        except (OSError, TypeError):
            return None   # the reader says what is wrong
    if head[:2] == _GZIP_MAGIC:
        try:
            head = gzip.GzipFile(fileobj=io.BytesIO(head)).read1(_SNIFF_BYTES)
        except (OSError, EOFError):
            head = b""   # truncated beyond the sniffed bytes: read1 may fail; TREC then
        except Exception:  # pragma: no cover - zlib errors
            head = b""
    return head


def _three_tab_fields(source):
    head = _head(source) or b""
    first = head.lstrip(b"\xef\xbb\xbf \r\n").split(b"\n", 1)[0].rstrip(b"\r")
    return len(first.split(b"\t")) == 3 and len(first.split()) == 3


def _is_beir_folder(source):
    """A directory holding a ``qrels`` folder (other directories are read as files,
    which says that they are directories)."""
    return (isinstance(source, (str, os.PathLike)) and os.path.isdir(source)
            and os.path.isdir(os.path.join(os.fspath(source), "qrels")))


def detect(source):
    """``"json"``, ``"beir"`` or ``"trec"`` from the first bytes of ``source``."""
    if _is_beir_folder(source):
        return "beir"
    head = _head(source)
    if head is None:
        return "trec"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] in (b"{", b"["):
        return "json"
    first = stripped.split(b"\n", 1)[0].rstrip(b"\r")
    if first.split(b"\t", 1)[0].strip().lower() == b"query-id":
        return "beir"
    return "trec"


def _check_format(func, format, choices):

    if format is not None:
        check_choice(func, "format", format, choices)


def _read_bytes(source):
    own = not hasattr(source, "read")
    stream = open(os.fspath(source), "rb") if own else source
    try:
        data = stream.read()
    finally:
        if own:
            stream.close()
    if isinstance(data, str):
        data = data.encode("utf-8")
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{_name(source)}: corrupt gzip data ({exc})") from None
    return data


# --------------------------------------------------------------------------------------
# BEIR qrels
# --------------------------------------------------------------------------------------


def beir_qrels_path(folder, split):
    """``folder/qrels/<split>.tsv`` of a BEIR/MTEB folder (``split`` needed when it
    holds several)."""
    qrels_dir = os.path.join(os.fspath(folder), "qrels")
    if not os.path.isdir(qrels_dir):
        raise ValueError(f"{os.fspath(folder)}: a BEIR folder must hold a 'qrels' folder of "
                         f"<split>.tsv files. Got no 'qrels' folder.")
    splits = sorted(f[:-4] for f in os.listdir(qrels_dir) if f.endswith(".tsv"))
    if split is None:
        if len(splits) != 1:
            raise ValueError(f"read_qrels: split must name one of the splits of "
                             f"{os.fspath(folder)} {splits}. Got None instead.")
        split = splits[0]
    if split not in splits:
        raise ValueError(f"read_qrels: split must be one of {splits} (the .tsv files of "
                         f"{qrels_dir}). Got {split!r} instead.")
    return os.path.join(qrels_dir, split + ".tsv")


def _line(data, number):
    """Line ``number`` (1-based) of ``data`` as text, for messages."""
    lines = data.split(b"\n", number)
    return lines[number - 1].rstrip(b"\r").decode("utf-8", "replace") if len(lines) >= number else ""


def read_beir_qrels_table(source):
    """A BEIR/MTEB qrels TSV as the byte table of TREC qrels (grades as ``rel``)."""

    name = _name(source)
    data = _read_bytes(source)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    expected = "\t".join(BEIR_HEADER)
    end = data.find(b"\n")
    header = (data if end < 0 else data[:end]).rstrip(b"\r")
    fields = header.decode("utf-8", "replace").split("\t")
    if [f.strip().lower() for f in fields] != list(BEIR_HEADER):
        if len(fields) == 3 and fields[0].strip().lower() != "query-id":
            raise ValueError(f"{name}:1: a BEIR qrels file must start with the header line "
                             f"{expected!r}. Got {header.decode('utf-8', 'replace')!r} "
                             f"instead: add the header line.")
        raise ValueError(f"{name}:1: the header of a BEIR qrels file must be {expected!r} "
                         f"(3 tab-separated columns). Got {header.decode('utf-8', 'replace')!r} "
                         f"({len(fields)} columns) instead.")
    body = data[end + 1:] if end >= 0 else b""
    if not body.endswith(b"\n"):
        body += b"\n"
    # every data line has exactly two tabs (blank lines aside): counted per line, in numpy
    a = np.frombuffer(body, dtype=np.uint8)
    newlines = np.flatnonzero(a == 10)
    tabs = np.cumsum(a == 9)[newlines]
    per_line = np.diff(np.concatenate([[0], tabs]))
    starts = np.concatenate([[0], newlines[:-1] + 1])
    blank = (newlines - starts) == 0
    cr_only = (newlines - starts == 1) & (a[np.maximum(newlines - 1, 0)] == 13)
    bad = np.flatnonzero((per_line != 2) & ~blank & ~cr_only)
    if bad.shape[0]:
        number = int(bad[0]) + 2
        line = _line(data, number)
        raise ValueError(f"{name}:{number}: a BEIR qrels line must have 3 tab-separated "
                         f"columns {expected!r}. Got {line!r} ({line.count(chr(9)) + 1} "
                         f"columns) instead.")
    if re.search(rb"[ \x0b\x0c]|(?:^|\n)#", body):
        return _slow_beir_table(name, body)   # spaces or a leading '#' inside ids
    trec = b"#" + header + b"\n" + re.sub(rb"(?m)^([^\t\n]*)\t", rb"\1\t0\t", body)
    stream = io.BytesIO(trec)
    stream.name = name
    try:
        return next(read_tables(stream, QRELS))
    except ValueError as exc:   # its message shows the rewritten line: show the file's
        found = re.match(rf"{re.escape(name)}:(\d+): ", str(exc))
        if found is None:
            raise
        number = int(found[1])
        line = _line(data, number)
        raise ValueError(f"{name}:{number}: expected {expected!r} with an integer score, "
                         f"got {line!r}") from None


def _slow_beir_table(name, body):
    """Ids with spaces (or a leading '#'): split on tabs line by line."""

    qid, doc, rel = [], [], []
    for i, line in enumerate(body.decode("utf-8").split("\n")):
        line = line.rstrip("\r")
        if not line:
            continue
        q, d, s = line.split("\t")
        try:
            grade = int(s)
        except ValueError:
            raise ValueError(f"{name}:{i + 2}: expected {chr(9).join(BEIR_HEADER)!r} with an "
                             f"integer score, got {line!r}") from None
        qid.append(q)
        doc.append(d)
        rel.append(grade)
    return _table(name, str_array(qid), str_array(doc),
                  {"rel": np.asarray(rel, dtype=np.int64)})


def _table(name, qid, docno, numbers, tag=None):
    """The byte table the readers give, of str columns."""

    return Table.of_columns(name, qid, docno, numbers, tag=tag)


# --------------------------------------------------------------------------------------
# JSON {query: {doc: score}}
# --------------------------------------------------------------------------------------


def _read_json_columns(source, role):
    """``(qid, docno, values)`` of a ``{query: {doc: value}}`` JSON file; values are
    real numbers (a run) or integers (qrels); the message names the file, query and doc."""
    name = _name(source)
    try:
        data = json.loads(_read_bytes(source))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{name}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{name}: a JSON {role} must be an object {{query: {{doc: "
                         f"{'score' if role == 'run' else 'grade'}}}}} (BEIR, MTEB, "
                         f"pytrec_eval). Got {type(data).__name__} instead.")
    sizes = np.fromiter((len(v) for v in data.values()), dtype=np.int64, count=len(data))
    qid = np.repeat(str_array(list(data)), sizes)
    from itertools import chain

    docno = list(chain.from_iterable(data.values()))
    raw = list(chain.from_iterable(v.values() for v in data.values()))
    ok = np.fromiter((type(v) in (int, float) for v in raw), dtype=bool, count=len(raw))
    values = np.asarray([v if k else 0 for v, k in zip(raw, ok)], dtype=np.float64)
    integral = values == np.round(values)
    wrong = ~ok | ~np.isfinite(values) | ((role == "qrels") & ~integral)
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        what = "an integer grade" if role == "qrels" else "a finite number"
        raise ValueError(f"{name}: the {'grade' if role == 'qrels' else 'score'} of document "
                         f"{docno[i]!r} of query {str(qid[i])!r} must be {what}. Got {raw[i]!r} "
                         f"instead ({int(wrong.sum())} such value(s) in the file).")
    return qid, str_array(docno), values


def read_json_run(source):
    """The run table of a JSON ``{query: {doc: score}}`` file: ranks 1, 2, ... in the
    file's order within each query, the file's name as the run tag (trec_eval's runid)."""
    qid, docno, score = _read_json_columns(source, "run")
    n = qid.shape[0]
    rank = positions_in_runs(qid) + 1   # a query's documents are contiguous in the file
    tag = os.path.splitext(os.path.basename(_name(source)))[0] or "json"
    return _table(_name(source), qid, docno, {"score": score, "rank": rank.astype(np.int64)},
                  tag=np.full(n, tag, dtype=f"U{len(tag)}"))


def read_json_qrels(source):
    """The qrels table of a JSON ``{query: {doc: grade}}`` file."""
    qid, docno, rel = _read_json_columns(source, "qrels")
    return _table(_name(source), qid, docno, {"rel": rel.astype(np.int64)})


# --------------------------------------------------------------------------------------
# entry points of the readers
# --------------------------------------------------------------------------------------


def qrels_table_of(source, format=None, split=None):
    """The qrels byte table of ``source`` in ``format`` (None: detected), or None for
    TREC (the caller reads it)."""
    if format is None:
        format = detect(source)
        if format == "trec" and _three_tab_fields(source):
            format = "beir"   # never TREC qrels (4 fields): say that BEIR's header is missing
    if format == "beir" and isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        source = beir_qrels_path(source, split)   # says so when it has no qrels/ folder
    elif split is not None:
        raise ValueError(f"read_qrels: split names a qrels file of a BEIR folder; pass the "
                         f"folder as path. Got the file {_name(source)!r} instead.")
    if format == "beir":
        return read_beir_qrels_table(source)
    if format == "json":
        return read_json_qrels(source)
    return None


def run_table_of(source, format=None):
    """The run byte table of ``source`` (JSON), or None for TREC."""

    format = detect(source) if format is None else format
    if _is_beir_folder(source):
        raise ValueError(f"{_name(source)}: is a BEIR folder (its qrels/ folder holds "
                         f"judgements), not a run file.")
    if format == "beir":
        raise ValueError(f"{_name(source)}: a BEIR qrels file (header 'query-id') was given "
                         f"as a run. Runs are TREC files or JSON {{query: {{doc: score}}}}.")
    if format == "json":
        return read_json_run(source)
    return None
