"""Tokenising TREC files: bytes in, columns out, one piece of the file at a time.

A file is read in pieces of about ``_CHUNK_BYTES`` cut after a newline, so the
whole file is never held in memory.  Each piece is split into tokens without a
Python loop per line: a file whose lines hold exactly the expected fields,
one space or tab apart (what retrieval systems write), is split by one pass
over the bytes; anything else (comments, blank lines, ``\\r``, runs of
blanks, extra tokens) goes through the general tokenizer.  Text columns stay
bytes (``S`` arrays: one byte per character, compared as C's ``strcmp``);
the public containers decode them.  The query column is stored as runs of
equal ids (runs are written query by query), and every row gets a 64-bit hash
of its ``(qid, docno)`` pair, used for the one duplicate check and the join.
"""

import gzip
import os
import zlib

import numpy as np

from ._fields import (
    _first_invalid, decode, encode, fits_fixed, object_array, parse_decimal, parse_numbers,
    runs_of,
)


_GZIP_MAGIC = b"\x1f\x8b"


_BOM = b"\xef\xbb\xbf"


# Pieces of about this many bytes (cut at a newline) bound the per-byte temporaries.
# Not measured: a memory bound (2 MiB pieces bound the per-byte temporaries).
_CHUNK_BYTES = 1 << 21


_NEWLINE = 10


_HASH = ord("#")


_MAX_SHOWN = 200


_U64 = np.uint64


QRELS_FORMAT = "qid iter docno rel"


RUN_FORMAT = "qid Q0 docno rank score tag"


class Layout:
    """Which fields of a line a file holds and how they are read."""

    def __init__(self, fmt, n_fields, exact, *, qid, docno, numbers, tag=None):
        self.fmt = fmt
        self.n_fields = n_fields
        self.exact = exact
        self.qid = qid
        self.docno = docno
        self.numbers = numbers  # name -> (field index, dtype, what)
        self.tag = tag


QRELS = Layout(QRELS_FORMAT, 4, True, qid=0, docno=2,
               numbers={"rel": (3, np.int64, "an integer")})


RUN = Layout(RUN_FORMAT, 6, False, qid=0, docno=2, tag=5,
             numbers={"rank": (3, np.int64, "an integer"), "score": (4, np.float64, "a number")})


class _Chain:
    """A raw stream that returns ``head`` first, then what ``stream`` reads."""

    def __init__(self, head, stream):
        self.head, self.stream = head, stream

    def read(self, size=-1):
        if self.head:
            out = self.head if size < 0 else self.head[:size]
            self.head = self.head[len(out):]
            return out
        return _as_bytes_read(self.stream, size)


def _as_bytes_read(stream, size):
    data = stream.read(size)
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def source_name(source):
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        return os.fsdecode(name) if isinstance(name, (str, bytes, os.PathLike)) else "<stream>"
    try:
        return os.fsdecode(os.fspath(source))
    except TypeError:
        raise TypeError(
            "expected a path (str or os.PathLike) or a file object. "
            f"Got {type(source).__name__} instead."
        ) from None


def pieces(source, name, info=None, size=_CHUNK_BYTES):
    """Yield ``(piece, first_line)``: bytes of whole lines (each ending with a
    newline), decompressed when the file is gzip, read about ``size`` bytes at a
    time, and the 0-based line number of the piece's first line.  ``info["size"]``
    is set to the file's size in bytes when known (a plain regular file), else None."""
    own = not hasattr(source, "read")
    stream = open(os.fspath(source), "rb") if own else source
    try:
        if info is not None:
            info["size"] = _file_size(stream)
        first = _as_bytes_read(stream, size)
        unzipped = None
        if first[:2] == _GZIP_MAGIC:
            unzipped = gzip.GzipFile(fileobj=_Chain(first, stream), mode="rb")

        def read(n):
            if unzipped is None:
                return _as_bytes_read(stream, n)
            try:
                return unzipped.read(n)
            except (OSError, EOFError, zlib.error) as exc:
                raise ValueError(f"{name}: corrupt gzip data ({exc})") from exc

        if unzipped is not None:
            first = read(size)
            if info is not None:
                info["size"] = None
        first, cr_only = _line_ends(first, read, size)
        if first[:3] == _BOM:  # a UTF-8 byte-order mark is no part of the first id
            first = first[3:]
        # `carry`: the bytes after the last newline, kept as a list of blocks and
        # joined once a newline arrives (linear in a long line, whatever `size`).
        carry, line, block = [], 0, first
        while block:
            if cr_only:
                block = block.replace(b"\r", b"\n")
            cut = block.rfind(b"\n") + 1
            if cut:
                piece = b"".join(carry + [block[:cut]]) if carry else block[:cut]
                carry = [block[cut:]] if cut < len(block) else []
                if b"\0" in piece:
                    raise ValueError(f"{name}: contains NUL bytes; not a TREC text file")
                yield piece, line
                line += piece.count(b"\n")
            else:
                carry.append(block)
            block = read(size)
        if carry:
            carry = b"".join(carry)
            if b"\0" in carry:
                raise ValueError(f"{name}: contains NUL bytes; not a TREC text file")
            yield carry + b"\n", line
    finally:
        if own:
            stream.close()


def _line_ends(first, read, size):
    """``(first, cr_only)``: the first block, read on (as few blocks as needed) until
    its first line end is known, and whether the file ends its lines with a lone
    ``\\r`` (old Mac files): decided by the first line end, a ``\\r`` there not
    followed by ``\\n``.  Otherwise a ``\\r`` is a blank inside a line, as before."""
    head, seen = bytearray(first), 0  # head[:seen] holds no line end
    while True:
        cr, lf = head.find(b"\r", seen), head.find(b"\n", seen)
        if cr < 0 and lf >= 0 or 0 <= lf < cr:
            return bytes(head), False
        if 0 <= cr < len(head) - 1:
            return bytes(head), head[cr + 1] != _NEWLINE
        more = read(size)
        if not more:
            return bytes(head), cr >= 0
        seen = len(head) if cr < 0 else cr
        head += more


def _file_size(stream):
    """Bytes left in a regular file, or None (pipes, text streams, in-memory files)."""
    try:
        stat = os.fstat(stream.fileno())
        position = stream.tell()
    except (AttributeError, OSError, ValueError):
        return None
    import stat as stat_module

    return stat.st_size - position if stat_module.S_ISREG(stat.st_mode) else None


class Lines:
    """Tokens of the data lines (not blank, not comment) of one piece."""

    def __init__(self, a, first_line, layout):
        self.a = a
        self.first_line = first_line
        self.local_line = None  # None: data line i is line i of the piece
        if not self._simple(layout.n_fields):
            self._general()

    def _simple(self, n_fields):
        """Every line is exactly ``n_fields`` tokens one space or tab apart: the
        token bounds are the blank bytes, found in one pass."""
        a = self.a
        blanks = np.flatnonzero(a <= 32)
        if blanks.shape[0] % n_fields or blanks[0] == 0:
            return False
        grid = blanks.reshape(-1, n_fields)
        if not (np.all(a[grid[:, -1]] == _NEWLINE) and np.all(np.diff(blanks) > 1)):
            return False
        separators = a[grid[:, :-1]]
        if not np.all((separators == 32) | (separators == 9)):
            return False
        if a[0] == _HASH or np.any(a[grid[:-1, -1] + 1] == _HASH):
            return False
        starts = np.empty_like(grid)
        starts.reshape(-1)[0] = 0
        np.add(blanks[:-1], 1, out=starts.reshape(-1)[1:])
        self.grid = (starts, grid)
        self.n_lines = grid.shape[0]
        self.n_tokens = None
        return True

    def _general(self):
        a = self.a
        self.grid = None
        # blank[i + 1] is for a[i]; a newline is prepended (the piece starts a line).
        padded = np.empty(a.shape[0] + 1, dtype=np.uint8)
        padded[0] = _NEWLINE
        padded[1:] = a
        blank = padded == 32
        blank |= (padded - np.uint8(9)) < 5  # \t \n \v \f \r
        # Blank/non-blank transitions alternate token starts and ends.
        transitions = np.flatnonzero(blank[:-1] != blank[1:])
        starts, ends = transitions[0::2].copy(), transitions[1::2].copy()
        # The token after each newline starts a line; the last of several
        # newlines before one token (blank lines) gives its line number.
        newlines = np.flatnonzero(a == _NEWLINE)
        following = np.searchsorted(starts, newlines)
        last = np.empty(following.shape[0], dtype=bool)
        last[-1] = True
        np.not_equal(following[1:], following[:-1], out=last[:-1])
        first_token = following[last]
        local_line = np.flatnonzero(last) + 1  # 0-based line within the piece
        inside = first_token < starts.shape[0]
        first_token, local_line = first_token[inside], local_line[inside]
        if starts.shape[0] and (first_token.shape[0] == 0 or first_token[0] != 0):
            first_token = np.concatenate(([0], first_token))
            local_line = np.concatenate(([0], local_line))
        comment = a[starts[first_token]] == _HASH
        if comment.any():
            first = np.zeros(starts.shape[0], dtype=bool)
            first[first_token] = True
            keep = ~comment[np.cumsum(first) - 1]
            starts, ends = starts[keep], ends[keep]
            first_token = np.flatnonzero(first[keep])
            local_line = local_line[~comment]
        self.starts, self.ends = starts, ends
        self.first_token = first_token
        self.n_tokens = np.diff(np.append(first_token, starts.shape[0]))
        self.local_line = local_line
        self.n_lines = first_token.shape[0]

    def line_number(self, i):
        """1-based line number in the file of data line ``i``."""
        local = i if self.local_line is None else int(self.local_line[i])
        return self.first_line + local + 1

    def text(self, i):
        """The text of data line ``i``, for messages."""
        newlines = np.flatnonzero(self.a == _NEWLINE)
        k = i if self.local_line is None else int(self.local_line[i])
        begin = int(newlines[k - 1]) + 1 if k > 0 else 0
        raw = self.a[begin:int(newlines[k])].tobytes()
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        if len(text) > _MAX_SHOWN:
            text = text[:_MAX_SHOWN] + "..."
        return text

    def columns(self, n_fields, *, exact):
        """Token starts and ends as (n_lines, n_fields) arrays.

        Returns the index of the first bad line instead when a line has too
        few fields (or, with ``exact``, too many).
        """
        if self.grid is not None:
            return self.grid
        bad = (self.n_tokens != n_fields) if exact else (self.n_tokens < n_fields)
        if bad.any():
            return int(np.argmax(bad))
        starts, ends = self.starts, self.ends
        if not exact and not np.all(self.n_tokens == n_fields):
            # Extra tokens after the last field (e.g. junk after the run tag).
            within = np.arange(starts.shape[0]) - np.repeat(self.first_token, self.n_tokens)
            keep = within < n_fields
            starts, ends = starts[keep], ends[keep]
        return starts.reshape(-1, n_fields), ends.reshape(-1, n_fields)


def tokens(a, starts, ends):
    """The tokens ``a[starts[i]:ends[i]]`` as an ``S`` array (NUL-padded rows), or as
    an object array of ``bytes`` when one token is long next to the others (see
    ``fits_fixed``: memory then follows the tokens' total length, not rows x the
    longest).

    One row gather from a sliding-window view of the bytes: a copy of a few
    contiguous bytes per token, then the bytes past each token are cleared.
    """
    n = starts.shape[0]
    lengths = ends - starts
    width = max(int(lengths.max()), 1) if n else 1
    if n and not fits_fixed(n, width, int(lengths.sum())):
        raw = a.tobytes()
        return object_array([raw[i:j] for i, j in zip(starts.tolist(), ends.tolist())]), lengths
    size = a.shape[0]
    if size < width:
        a = np.concatenate([a, np.zeros(width - size, dtype=np.uint8)])
        size = width
    windows = np.lib.stride_tricks.as_strided(a, shape=(size - width + 1, width),
                                              strides=(1, 1), writeable=False)
    fits = starts <= size - width
    if fits.all():
        matrix = windows[starts]
    else:  # tokens in the last `width` bytes: their (cleared) tail would run past the end
        matrix = np.empty((n, width), dtype=np.uint8)
        matrix[fits] = windows[starts[fits]]
        matrix[~fits] = a[np.minimum(starts[~fits, None] + np.arange(width), size - 1)]
    if n and int(lengths.min()) < width:
        # (multiplying by the mask is about twice as fast as a masked assignment)
        np.multiply(matrix, np.arange(width) < lengths[:, None], out=matrix)
    return matrix.view(f"S{width}").reshape(-1), lengths


def _numbers(lines, layout, field, strings, lengths, name, *, keep):
    """The values of one numeric column (validated; None when not kept)."""
    index, dtype, what = layout.numbers[field]
    integer = dtype == np.int64
    if strings.dtype.kind == "O" or strings.dtype.itemsize > 64:  # long fields: every row
        # parsed as Python does (the vectorised parse takes a step per character)
        values, ok = np.zeros(strings.shape[0], dtype=dtype), np.zeros(strings.shape[0], bool)
    else:
        values, ok = parse_decimal(strings, lengths, integer=integer,
                                   values=keep or not integer)
    if ok.all():
        return values.astype(dtype, copy=False) if keep else None
    slow = np.flatnonzero(~ok)
    col = strings[slow]
    parsed = parse_numbers(col, dtype)
    if parsed is None:
        i = slow[_first_invalid(col, dtype)]
        token = strings[i].decode("utf-8", errors="replace")
        raise ValueError(
            f"{name}:{lines.line_number(i)}: expected {layout.fmt!r}, "
            f"got {lines.text(i)!r} ({field} {token!r} is not {what})"
        )
    if not keep:
        return None
    values = values.astype(dtype, copy=False)
    values[slow] = parsed
    return values


def _mix(h):
    """splitmix64 finalizer, in place."""
    h ^= h >> _U64(30)
    h *= _U64(0xBF58476D1CE4E5B9)
    h ^= h >> _U64(27)
    h *= _U64(0x94D049BB133111EB)
    h ^= h >> _U64(31)
    return h


def _position_salts(n_words):
    """A constant for each word position of an id (the order of its words counts)."""
    salts = np.arange(n_words, dtype=_U64)
    salts *= _U64(0x9E3779B97F4A7C15)
    salts += _U64(0xD1B54A32D192ED03)
    return _mix(salts)


def _id_hash(strings):
    """64-bit hash of each id of an ``S`` array or an object array of ``bytes``: the sum
    (mod 2**64) of its 8-byte little-endian words, each xor'ed with the salt of its
    position and mixed.  All-zero words (the NUL padding after a string; ids hold no
    NUL) are skipped, so a hash depends on neither the width of the array nor the
    form the ids are held in; an object array is hashed from its bytes laid end to
    end (memory as their total length)."""
    n = strings.shape[0]
    h = np.zeros(n, dtype=_U64) if strings.dtype.kind == "O" else np.empty(n, dtype=_U64)
    if strings.dtype.kind == "O":
        values = strings.tolist()
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=n)
        n_words = (lengths + 7) // 8
        words = np.frombuffer(b"".join([v + b"\0" * (-len(v) % 8) for v in values]), dtype="<u8")
        if words.shape[0] == 0:
            return h
        first = np.cumsum(n_words) - n_words
        position = np.arange(words.shape[0]) - np.repeat(first, n_words)
        mixed = words ^ _position_salts(int(position.max()) + 1)[position]
        _mix(mixed)
        filled = n_words > 0
        h[filled] = np.add.reduceat(mixed, first[filled])
        return h
    words = _words(strings)
    salts = _position_salts(words.shape[1])
    if words.shape[1] > 8:  # wide ids: every word at once (memory as the array's)
        mixed = words ^ salts
        _mix(mixed)
        mixed[words == 0] = 0
        return mixed.sum(axis=1, dtype=_U64)
    # The first word straight into `h` (all-zero only for an empty id), then the others.
    word = words[:, 0]
    np.bitwise_xor(word, salts[0], out=h)
    _mix(h)
    if n and not word.all():
        h[word == 0] = 0
    mixed = np.empty(n, dtype=_U64) if words.shape[1] > 1 else None
    for k in range(1, words.shape[1]):
        word = words[:, k]
        np.bitwise_xor(word, salts[k], out=mixed)
        _mix(mixed)
        nonzero = word != 0
        if nonzero.all():
            h += mixed
        else:
            np.add(h, mixed, out=h, where=nonzero)
    return h


def _words(strings):
    """The bytes of each row of an ``S`` array as little-endian 8-byte words."""
    n = strings.shape[0]
    raw = np.ascontiguousarray(strings).view(np.uint8).reshape(n, strings.dtype.itemsize)
    pad = -raw.shape[1] % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((n, pad), dtype=np.uint8)], axis=1)
    return raw.view("<u8")


def _pair_hash(qid, docno):
    """64-bit hash of each (qid, docno) pair of two ``S`` (or object ``bytes``) arrays."""
    h = _id_hash(qid)
    h ^= _U64(0xD6E8FEB86659FD93)  # end of the qid
    _mix(h)
    h += _id_hash(docno)  # a sum of mixed words: well spread already
    return h


class Table:
    """The columns of a TREC file (or of a Qrels/Run), as the join needs them.

    ``qid_runs`` and ``run_lengths``: the query ids as runs of equal
    neighbours; ``docno``: ``S`` bytes; ``numbers``: numeric columns by name;
    ``tag``: one per row, or one per query run (``tag_per_run``); ``keys``:
    the pair hash of each row; ``lines``: the file's line of each row (a
    callable), for messages; ``checked``: no duplicate pair.
    """

    def __init__(self, *, name, qid_runs, run_lengths, docno, numbers, tag=None,
                 tag_per_run=False, keys=None, lines=None, checked=False):
        self.name = name
        self.qid_runs = qid_runs
        self.run_lengths = np.asarray(run_lengths, dtype=np.int64)
        self.docno = docno
        self.numbers = numbers
        self.tag = tag
        self.tag_per_run = tag_per_run
        self.keys = keys
        self.lines = lines
        self.checked = checked

    def __len__(self):
        return self.docno.shape[0]

    def qid(self):
        """The query id of every row."""
        return np.repeat(self.qid_runs, self.run_lengths)

    def qid_of(self, rows):
        ends = np.cumsum(self.run_lengths)
        return self.qid_runs[np.searchsorted(ends, rows, side="right")]

    def pair_keys(self):
        if self.keys is None:
            self.keys = _pair_hash(encode(self.qid()), encode(self.docno))
        return self.keys

    def release(self):
        """Drop the per-row columns (docno, numbers, keys) once joined; what
        remains (query runs, tags) names the queries and the run tag."""
        self.docno = self.docno[:0]
        self.numbers = {f: v[:0] for f, v in self.numbers.items()}
        self.keys = None if self.keys is None else self.keys[:0]

    def line_of(self, row):
        return None if self.lines is None else self.lines(row)

    def take(self, rows):
        """The table of the rows ``rows`` (increasing), in the same order."""
        run_of_row = np.repeat(np.arange(self.qid_runs.shape[0]), self.run_lengths)[rows]
        runs, lengths = runs_of(run_of_row)
        tag = self.tag
        if tag is not None:
            tag = tag[runs] if self.tag_per_run else tag[rows]
        lines = None if self.lines is None else (lambda row: self.lines(int(rows[row])))
        return Table(name=self.name, qid_runs=self.qid_runs[runs], run_lengths=lengths,
                     docno=self.docno[rows],
                     numbers={f: v[rows] for f, v in self.numbers.items()}, tag=tag,
                     tag_per_run=self.tag_per_run,
                     keys=None if self.keys is None else self.keys[rows], lines=lines,
                     checked=self.checked)

    @classmethod
    def of_columns(cls, name, qid, docno, numbers, tag=None):
        qid_runs, lengths = runs_of(np.asarray(qid))
        qid_runs = encode(qid_runs)
        return cls(name=name, qid_runs=qid_runs, run_lengths=lengths, docno=encode(docno),
                   numbers=numbers, tag=tag)


class _LineMap:
    """The file line of each row: consecutive lines per piece, or a stored array
    for pieces with comments or blank lines."""

    def __init__(self):
        self.row_ends, self.first_lines, self.local = [], [], []

    def add(self, n_rows, lines):
        self.row_ends.append((self.row_ends[-1] if self.row_ends else 0) + n_rows)
        self.first_lines.append(lines.first_line)
        self.local.append(lines.local_line)

    def __call__(self, row):
        piece = int(np.searchsorted(self.row_ends, row, side="right"))
        start = self.row_ends[piece - 1] if piece else 0
        local = row - start if self.local[piece] is None else int(self.local[piece][row - start])
        return self.first_lines[piece] + local + 1


def read_tables(source, layout, *, keep=None, per_row_tag=True, block_bytes=None):
    """Yield :class:`Table` objects of the rows of a TREC file.

    ``keep``: the numeric columns to keep (all when None; the others are
    still validated). With ``block_bytes``, a table is yielded each time
    about that many bytes have been read, holding whole query runs (the rows
    of the last query read are held back for the next table); otherwise one
    table holds the whole file.  ``per_row_tag`` False keeps the tag of each
    query run's first row only.
    """
    name = source_name(source)
    keep = set(layout.numbers) if keep is None else set(keep)
    parts, info = None, {}
    # Blocks smaller than a piece are read a block at a time (as many lines as fit).
    size = _CHUNK_BYTES if block_bytes is None else max(1, min(_CHUNK_BYTES, block_bytes))
    for piece, first_line in pieces(source, name, info, size):
        a = np.frombuffer(piece, dtype=np.uint8)
        lines = Lines(a, first_line, layout)
        if lines.n_lines == 0:
            continue
        if parts is None:  # room for the rows the file (or a block) should hold
            total = block_bytes if block_bytes is not None else info.get("size")
            capacity = 0 if total is None else int(total / len(piece) * lines.n_lines * 1.05)
            parts = _Parts(per_row_tag, capacity, 4 * (total or 0))
        result = lines.columns(layout.n_fields, exact=layout.exact)
        if isinstance(result, int):
            i = result
            # the field count, whether too many or too few (a run line short of its score)
            count = int(lines.n_tokens[i])
            reason = (f" ({count} field{'s' if count != 1 else ''}, expected "
                      f"{'' if layout.exact else 'at least '}{layout.n_fields})")
            raise ValueError(f"{name}:{lines.line_number(i)}: expected {layout.fmt!r}, "
                             f"got {lines.text(i)!r}{reason}")
        starts, ends = result
        qid, _ = tokens(a, starts[:, layout.qid], ends[:, layout.qid])
        docno, _ = tokens(a, starts[:, layout.docno], ends[:, layout.docno])
        numbers = {}
        for field, (index, _, _) in layout.numbers.items():
            strings, lengths = tokens(a, starts[:, index], ends[:, index])
            numbers[field] = _numbers(lines, layout, field, strings, lengths, name,
                                      keep=field in keep)
        tag = None
        if layout.tag is not None:
            tag = (starts[:, layout.tag], ends[:, layout.tag])
        parts.add(a, lines, qid, docno, numbers, tag, len(piece))
        if block_bytes is not None and parts.n_bytes >= block_bytes:
            table = parts.table(name, hold_last=True)
            if table is not None:
                yield table
    table = None if parts is None else parts.table(name, hold_last=False)
    if table is not None or block_bytes is None:
        yield table if table is not None else _empty(name, layout, keep)


def empty_run_table(name="<run>"):
    """A run table without rows."""
    return _empty(name, RUN, ("score",))


def _empty(name, layout, keep):
    return Table(name=name, qid_runs=np.zeros(0, dtype="S1"), run_lengths=[],
                 docno=np.zeros(0, dtype="S1"),
                 numbers={f: np.zeros(0, dtype=layout.numbers[f][1]) for f in keep},
                 tag=np.zeros(0, dtype="S1") if layout.tag is not None else None,
                 keys=np.zeros(0, dtype=_U64), lines=_LineMap(), checked=True)


class _Parts:
    """Columns of the pieces read so far."""

    def __init__(self, per_row_tag, capacity=0, budget=0):
        self.per_row_tag = per_row_tag
        self.capacity = capacity
        self.budget = budget  # bytes a fixed-width column may take (4 x the input's)
        self.qid_runs, self.run_lengths, self.tag = _Column(), _Column(), _Column()
        self.docno, self.keys = _Column(capacity, budget), _Column(capacity)
        if per_row_tag:
            self.tag = _Column(capacity, budget)
        self.numbers = {}
        self.lines = _LineMap()
        self.n_bytes = 0
        self.n_rows = 0

    def add(self, a, lines, qid, docno, numbers, tag, n_bytes):
        qid_runs, lengths = runs_of(qid)
        self.keys.append(_pair_hash(qid, docno))
        if tag is not None:
            starts, ends = tag
            if not self.per_row_tag:  # the tag of each query run's first row
                first = np.cumsum(lengths) - lengths
                starts, ends = starts[first], ends[first]
            tag = tokens(a, starts, ends)[0]
        if self.qid_runs.size and self.qid_runs.last() == qid_runs[0]:
            # The last query of the previous piece goes on: one run.
            self.run_lengths.buffer[self.run_lengths.size - 1] += lengths[0]
            qid_runs, lengths = qid_runs[1:], lengths[1:]
            if tag is not None and not self.per_row_tag:
                tag = tag[1:]
        self.qid_runs.append(qid_runs)
        self.run_lengths.append(lengths)
        if tag is not None:
            self.tag.append(tag)
        self.docno.append(docno)
        for field, values in numbers.items():
            if values is not None:
                if field not in self.numbers:
                    self.numbers[field] = _Column(self.capacity)
                self.numbers[field].append(values)
        self.lines.add(docno.shape[0], lines)
        self.n_bytes += n_bytes
        self.n_rows += docno.shape[0]

    def table(self, name, *, hold_last):
        """A table of the rows so far (but the last query's with ``hold_last``)."""
        if self.n_rows == 0:
            return None
        held = int(self.run_lengths.last()) if hold_last else 0
        if held == self.n_rows:
            return None  # one query so far: keep reading
        cut = self.n_rows - held
        n_runs = self.qid_runs.size - (1 if held else 0)
        tag_cut = cut if self.per_row_tag else n_runs
        table = Table(name=name, qid_runs=self.qid_runs.result(n_runs),
                      run_lengths=self.run_lengths.result(n_runs),
                      docno=self.docno.result(cut),
                      numbers={f: c.result(cut) for f, c in self.numbers.items()},
                      tag=self.tag.result(tag_cut), tag_per_run=not self.per_row_tag,
                      keys=self.keys.result(cut), lines=self.lines, checked=False)
        if held:
            rest = _Parts(self.per_row_tag, self.capacity, self.budget)
            for column, mine in ((rest.qid_runs, self.qid_runs),
                                 (rest.run_lengths, self.run_lengths), (rest.tag, self.tag)):
                if mine.buffer is not None:
                    column.append(mine.buffer[n_runs if mine is not self.tag else tag_cut:
                                              mine.size].copy())
            rest.docno.append(self.docno.buffer[cut:self.n_rows])
            rest.keys.append(self.keys.buffer[cut:self.n_rows])
            for f, c in self.numbers.items():
                rest.numbers[f] = _Column(self.capacity)
                rest.numbers[f].append(c.buffer[cut:self.n_rows])
            rest.lines = _shifted(self.lines, cut)
            rest.n_rows = held
            self.__dict__.update(rest.__dict__)
        else:
            self.__init__(self.per_row_tag, self.capacity, self.budget)
        return table


def _shifted(lines, cut):
    """The line map of the rows from ``cut`` on."""
    out = _LineMap()
    out.row_ends = [max(end - cut, 0) for end in lines.row_ends]
    out.first_lines = list(lines.first_lines)
    out.local = list(lines.local)
    # Pieces wholly before `cut` now have no rows; shift the piece holding `cut`.
    for k, end in enumerate(lines.row_ends):
        start = lines.row_ends[k - 1] if k else 0
        if start < cut < end:
            skip = cut - start
            if out.local[k] is None:
                out.first_lines[k] += skip
            else:
                out.local[k] = out.local[k][skip:]
    return out


class _Column:
    """A column filled piece by piece into one buffer (no final concatenation, which
    would hold the column twice): sized from an estimate of the rows, grown by
    half when it falls short, widened when a longer string arrives."""

    def __init__(self, capacity=0, budget=0):
        self.capacity = capacity
        self.budget = budget
        self.buffer = None
        self.size = 0

    def append(self, values):
        n = values.shape[0]
        if self.buffer is None:
            self.buffer = np.empty(self._rows(values.dtype, n, values, max(self.capacity, n)),
                                   dtype=values.dtype)
        else:
            dtype = self.buffer.dtype
            if dtype.kind == "O" and values.dtype.kind == "S":
                values = values.astype(object)
            elif dtype.kind == "S" and values.dtype.kind == "O":
                dtype = values.dtype  # long ids arrived: the column holds bytes objects
            elif dtype.kind == "S" and values.dtype.itemsize > dtype.itemsize:
                dtype = values.dtype
                total = int(_str_len(self.buffer[:self.size]).sum()) + int(_str_len(values).sum())
                if not fits_fixed(self.size + n, dtype.itemsize, total):
                    dtype = np.dtype(object)  # one long id would cost its length on every row
            if dtype != self.buffer.dtype or self.size + n > self.buffer.shape[0]:
                grown = max(self.buffer.shape[0], (self.size + n) * 3 // 2)
                if dtype != self.buffer.dtype:
                    grown = self._rows(dtype, self.size + n, values, grown)
                buffer = np.empty(grown, dtype=dtype)
                buffer[:self.size] = self.buffer[:self.size]
                self.buffer = buffer
        self.buffer[self.size:self.size + n] = values
        self.size += n

    def _rows(self, dtype, n_rows, values, wanted):
        """Rows of a new buffer: ``wanted`` (the estimate), unless at a fixed width that
        many rows would take more than ``budget`` bytes (a few times the input's size):
        then the ``n_rows`` needed, grown by half."""
        if dtype.kind != "S" or wanted * dtype.itemsize <= max(self.budget, 64 * wanted):
            return wanted
        return max(n_rows * 3 // 2, n_rows)

    def last(self):
        return self.buffer[self.size - 1]

    def result(self, stop=None):
        stop = self.size if stop is None else stop
        if self.buffer is None:
            return None
        # A view, unless most of the buffer went unused.
        view = self.buffer[:stop]
        return view if 2 * stop >= self.buffer.shape[0] else view.copy()


def _str_len(strings):
    """Length of each string of an ``S`` array."""
    return getattr(np, "strings", np.char).str_len(strings)


def _shared_keys(keys):
    """Rows whose key another row has too (ascending), by one sort of the keys:
    in the usual case, no key repeats, and that is all it costs (a bucket count
    is no faster and needs several times the memory)."""
    ordered = np.sort(keys)
    repeated = ordered[1:] == ordered[:-1]
    if not repeated.any():
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(np.isin(keys, ordered[1:][repeated]))


def first_duplicate(keys, pairs):
    """``(i, j)``, i < j, the duplicate pair whose second row comes first, or None.

    ``keys`` are hashes of the rows' pairs (equal pairs have equal keys);
    ``pairs(rows)`` gives the exact pairs of some rows, compared for the rows
    sharing a key, so collisions are harmless.
    """
    rows = _shared_keys(keys)
    if rows.shape[0] == 0:
        return None
    order = np.argsort(keys[rows])
    sorted_keys = keys[rows][order]
    same = sorted_keys[1:] == sorted_keys[:-1]
    if not same.any():
        return None
    flagged = np.zeros(rows.shape[0], dtype=bool)
    flagged[1:] |= same
    flagged[:-1] |= same
    candidates = np.sort(rows[order[flagged]])
    seen = {}
    for i, pair in zip(candidates.tolist(), pairs(candidates)):
        first = seen.setdefault(pair, i)
        if first != i:
            return first, i
    return None


def check_no_duplicates(table, where=None):
    """Raise when a (qid, docno) pair appears twice in ``table``; marks it checked.

    ``where`` (e.g. "in qrels") replaces the line numbers in the message.
    """
    if table.checked:
        return
    keys = table.pair_keys()
    pair = first_duplicate(keys, lambda rows: zip(table.qid_of(rows).tolist(),
                                                  table.docno[rows].tolist()))
    if pair is not None:
        i, j = pair
        docno = decode(table.docno[i:i + 1])[0]
        qid = decode(table.qid_of(np.array([i])))[0]
        if table.lines is not None:
            where = f"(lines {table.line_of(i)} and {table.line_of(j)})"
            raise ValueError(f"{table.name}: duplicate document {str(docno)!r} for query "
                             f"{str(qid)!r} {where}")
        raise ValueError(f"{table.name}: duplicate document {str(docno)!r} for query "
                         f"{str(qid)!r} {where}.")
    table.checked = True
