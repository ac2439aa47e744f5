"""Fields of TREC files as values: decimal numbers parsed from their bytes (exact as
``float()``), ids encoded and decoded between str and bytes, and runs of equal ids.
"""

import numpy as np


def _byte_matrix(strings):
    """An ``S`` array as its (n, width) bytes."""
    return strings.view(np.uint8).reshape(strings.shape[0], strings.dtype.itemsize)


_POW10 = 10.0 ** np.arange(19)


def parse_decimal(strings, lengths, *, integer, values=True):
    """Exact vectorised parse of plain decimals (``-12``, ``3.25``, ``+.5``).

    Returns ``(values, ok)``. Rows not in that form (exponents, ``inf``,
    too many digits, garbage) have ``ok`` False and are left to
    :func:`parse_numbers`. Floats are exact: a mantissa below 2**53 divided
    by an exact power of ten is one correctly rounded operation, the same
    double as C's ``strtod``.
    """
    rows = _byte_matrix(strings).T  # one row per byte position
    digits = rows - np.uint8(48)
    is_digit = digits < 10  # NUL padding wraps around to 208
    is_dot = rows == 46
    negative = rows[0] == 45
    signed = negative | (rows[0] == 43)
    n_digits = is_digit.sum(axis=0)
    n_dots = is_dot.sum(axis=0)
    ok = (n_digits + n_dots + signed == lengths) & (n_digits >= 1) & (n_digits <= 18)
    ok &= (n_dots == 0) if integer else (n_dots <= 1)
    if not values:  # validation only
        return None, ok
    mantissa = np.zeros(lengths.shape[0], dtype=np.int64)
    step = np.empty_like(mantissa)
    for j in range(rows.shape[0]):
        np.multiply(mantissa, 10, out=step)
        step += digits[j]
        np.copyto(mantissa, step, where=is_digit[j])
    if integer:
        return np.where(negative, -mantissa, mantissa), ok
    ok &= mantissa <= 1 << 53
    decimals = np.where(n_dots > 0, lengths - 1 - np.argmax(is_dot, axis=0), 0)
    values = mantissa / _POW10[np.minimum(decimals, 18)]
    np.negative(values, out=values, where=negative)
    return values, ok


def parse_numbers(col, dtype):
    """Convert a bytes array to ``dtype``, or return None if any value is invalid."""
    if col.dtype.kind == "O":  # long fields: bytes objects
        if any(b"_" in v for v in col.tolist()):
            return None
    elif b"_" in col.tobytes():  # Python's int()/float() accept "1_000"; C does not.
        return None
    try:
        values = col.astype(dtype)
    except (ValueError, OverflowError):
        return None
    if values.dtype.kind == "f" and np.isnan(values).any():
        return None
    return values


def _first_invalid(col, dtype):
    """Index of the first value of ``col`` that :func:`parse_numbers` rejects."""
    lo, hi = 0, col.shape[0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if parse_numbers(col[lo:mid], dtype) is None:
            hi = mid
        else:
            lo = mid
    return lo


# Fixed-width (``S``/``U``) id columns cost rows x the longest id.  They are kept while
# that stays within twice the ids' own length plus this many characters a row (so any
# column of ids up to 64 characters is fixed-width); otherwise ids are held as an
# object array of ``bytes``/``str`` (about 40 bytes a row plus the id), so memory
# follows the total length of the ids, not rows x the longest.
# Not measured: 64 is above the ids retrieval systems write (a URL, a UUID, a hash).
_FIXED_SLACK = 64


def fits_fixed(n, width, total):
    """Whether ``n`` ids of total length ``total``, the longest ``width``, may be a
    fixed-width array (see ``_FIXED_SLACK``)."""
    return n * width <= 2 * total + _FIXED_SLACK * n


def object_array(items):
    """A 1-D object array of ``items`` (a list), each kept whole."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def str_array(strs):
    """A list of ``str`` as a ``<U`` array, or an object array when a fixed width would
    be out of proportion to the ids (see :func:`fits_fixed`)."""
    n = len(strs)
    if n == 0:
        return np.zeros(0, dtype="U1")
    lengths = np.fromiter(map(len, strs), dtype=np.int64, count=n)
    if fits_fixed(n, int(lengths.max()), int(lengths.sum())):
        return np.array(strs, dtype=str)
    return object_array(strs)


def as_str_ids(values):
    """Ids as ``str``: a ``<U`` array as it is, else each converted with ``str`` (an
    object array when one id is long, see :func:`str_array`), never rows x the longest
    id in a fixed-width copy made by ``astype(str)``."""
    values = np.asarray(values)
    if values.dtype.kind == "U":
        return values
    if values.dtype.kind != "O":
        return values.astype(str)  # numbers and bytes: short by construction
    items = values.tolist()
    if set(map(type, items)) != {str}:   # (map and set run in C: no Python loop)
        items = list(map(str, items))
    return str_array(items)


def pair_codes(qid, docno):
    """One int64 code per (query, document) pair, ordered as the pairs sorted by query
    id, then document id, and the sorted unique ids the codes index: ``code = query's
    index * len(docnos) + document's index``.  Each id column is factorised alone, so
    memory follows the ids, not rows x (longest query id + longest document id) as
    joined strings would."""
    qids, q = np.unique(qid, return_inverse=True)
    docnos, d = np.unique(docno, return_inverse=True)
    codes = q.reshape(-1).astype(np.int64) * max(docnos.shape[0], 1) + d.reshape(-1)
    return codes, qids, docnos


def split_pair_codes(codes, qids, docnos):
    """The query and document ids of :func:`pair_codes`' ``codes``."""
    n_docs = max(docnos.shape[0], 1)
    return qids[codes // n_docs], docnos[codes % n_docs]


def encode(strings):
    """A str array as UTF-8 bytes (``S``); lone surrogates (bytes that were not
    UTF-8 in a file) become those bytes again.  An object array of ``str`` (long ids)
    becomes an object array of ``bytes``."""
    if strings.dtype.kind == "S":
        return strings
    if strings.dtype.kind == "O":
        return object_array([v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")
                             for v in strings.tolist()])
    if strings.size == 0:
        return np.zeros(0, dtype="S1")
    width = max(strings.dtype.itemsize // 4, 1)
    points = np.ascontiguousarray(strings).view(np.uint32).reshape(-1, width)
    if points.size == 0 or int(points.max()) < 128:
        # ASCII: each code point is its byte (numpy's own cast is ~50x slower)
        return points.astype(np.uint8).view(f"S{width}").reshape(-1)
    return np.char.encode(strings, "utf-8", "surrogateescape")


def decode(strings):
    """Bytes (``S``) array to str array; invalid UTF-8 bytes become lone surrogates.
    An object array of ``bytes`` (long ids) becomes an object array of ``str``."""
    if strings.dtype.kind == "U":
        return strings
    if strings.dtype.kind == "O":
        return object_array([v.decode("utf-8", "surrogateescape") if isinstance(v, bytes)
                             else v for v in strings.tolist()])
    if strings.size == 0:
        return np.zeros(0, dtype="U1")
    width = max(strings.dtype.itemsize, 1)
    raw = np.ascontiguousarray(strings).view(np.uint8).reshape(-1, width)
    if int(raw.max()) < 128:  # ASCII: each byte is its code point (numpy's cast is slower)
        return raw.astype(np.uint32).view(f"U{width}").reshape(-1)
    try:
        return strings.astype(str)
    except UnicodeDecodeError:
        return np.char.decode(strings, "utf-8", "surrogateescape")


def runs_of(values):
    """``(run values, run lengths)`` of the runs of equal neighbours."""
    n = values.shape[0]
    if n == 0:
        return values[:0], np.zeros(0, dtype=np.int64)
    change = np.empty(n, dtype=bool)
    change[0] = True
    if values.dtype.kind in "SU":  # NumPy 1.x has no not_equal loop for strings: the operator
        change[1:] = values[1:] != values[:-1]
    else:
        np.not_equal(values[1:], values[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    return values[starts], np.diff(np.append(starts, n))
