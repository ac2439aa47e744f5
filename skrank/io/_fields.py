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
    if b"_" in col.tobytes():  # Python's int()/float() accept "1_000"; C does not.
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


def encode(strings):
    """A str array as UTF-8 bytes (``S``); lone surrogates (bytes that were not
    UTF-8 in a file) become those bytes again."""
    if strings.dtype.kind == "S":
        return strings
    if strings.size == 0:
        return np.zeros(0, dtype="S1")
    width = max(strings.dtype.itemsize // 4, 1)
    points = np.ascontiguousarray(strings).view(np.uint32).reshape(-1, width)
    if points.size == 0 or int(points.max()) < 128:
        # ASCII: each code point is its byte (numpy's own cast is ~50x slower)
        return points.astype(np.uint8).view(f"S{width}").reshape(-1)
    return np.char.encode(strings, "utf-8", "surrogateescape")


def decode(strings):
    """Bytes (``S``) array to str array; invalid UTF-8 bytes become lone surrogates."""
    if strings.dtype.kind == "U":
        return strings
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
