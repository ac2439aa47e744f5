"""String ids as integer keys: their characters packed column by column.

Grouping strings by their integer keys avoids sorting Python strings; a key
packs as many characters as fit in 64 bits, with each column's range measured
so that narrow alphabets pack more characters per key.
"""

import numpy as np


# Wider ids are not keyed by their characters (a pass per position: a long id would
# cost a Python step per character); they are sorted instead.
# Not measured: 64-character keys rarely fit the key range anyway.
_MAX_KEY_BYTES = 256


def _string_character_keys(qid, *, with_strings=False):
    """Integer keys ordered as the fixed-width strings ``qid`` are, from the characters
    each position holds, combined as the digits of a mixed-radix number.  Ids such as
    "q00042" vary in a few positions over few characters, so the keys span a small
    range (then grouped by lookup); None when they would span more than 2**32 values
    or 4 per row.  The keys are uint16 when they span at most 2**16 values, else
    uint32 (int64 when numbered, below).

    A position's digit is its character minus the smallest one found there (base: the
    characters' range), so the keys are one pass of Horner's rule over the positions
    that vary; only when those ranges multiply past the limit are each position's
    characters numbered in order (a bincount of that column) to narrow the bases.

    ``with_strings``: returns ``(keys, strings)`` instead, ``strings[key]`` the string
    of every key in ``[0, keys.max()]`` (held by a row or not), decoded from the
    digits when they span at most one key per 8 rows, else None."""
    n = qid.shape[0]
    if qid.dtype.itemsize == 0 or n == 0 or qid.dtype.itemsize > _MAX_KEY_BYTES:
        return None
    unit = np.uint8 if qid.dtype.kind == "S" else np.uint32
    chars = _narrow_characters(
        np.ascontiguousarray(qid, dtype=qid.dtype.newbyteorder("=")).view(unit).reshape(n, -1))
    limit = _small_range_limit(n)
    lo, hi = _column_min_max(chars)
    bases = hi.astype(np.int64) - lo + 1
    varying = np.flatnonzero(bases > 1)
    found = _mixed_radix_weights(bases, limit)  # last character: least significant
    if found is None:
        keys = _numbered_character_keys(chars, limit)
        return (keys, None) if with_strings and keys is not None else keys
    weights, span = found
    # uint16 or uint32 arithmetic wraps: exact, as every key lies in [0, span).
    dtype = np.uint16 if span <= 2 ** 16 else np.uint32
    keys = _horner_keys(chars, varying, bases, dtype)
    keys -= dtype(int(lo.astype(np.int64) @ weights) % (np.iinfo(dtype).max + 1))
    if not with_strings:
        return keys
    if 8 * span > n:  # decoding every key would make more strings than a row of each
        return keys, None
    # Every key's characters: the smallest ones, plus each position's digit of the key.
    every = np.arange(span, dtype=np.uint32)
    strings = np.repeat(lo.astype(unit)[None, :], span, axis=0)
    for position in varying:
        strings[:, position] += (every // weights[position] % np.uint32(bases[position])).astype(unit)
    return keys, strings.view(qid.dtype.newbyteorder("=")).reshape(span)


# Rows of code points checked and narrowed at a time by _narrow_characters: a block
# that stays in the 2 MiB L2 cache between the two (measured best of 0.4 to 6 MiB).
# Measured: see above (best block size between 0.4 and 6 MiB).
_NARROW_BLOCK_BYTES = 3 * 2 ** 19


def _narrow_characters(chars):
    """The code points ``chars`` (uint32, one row per id) as uint8 or uint16 when all
    fit: after that cast, every pass over a position reads a quarter (or half) of the
    memory (a position's column is strided: reading it alone reads every row's cache
    lines).  Bytes are returned as they are.

    Block by block, the largest code point is checked and the block cast while it is
    in cache: one trip through memory for both, where the whole array is read twice.
    A block that needs 16 bits widens the rows cast so far (a quarter of their bytes);
    one beyond 16 bits gives up at once."""
    if chars.dtype == np.uint8:
        return chars
    narrow = np.empty(chars.shape, dtype=np.uint8)
    rows = max(1, _NARROW_BLOCK_BYTES // max(chars.strides[0], 1))
    for first in range(0, chars.shape[0], rows):
        block = chars[first:first + rows]
        top = int(block.max())
        if top > np.iinfo(narrow.dtype).max:
            if top >= 2 ** 16:
                return chars
            wider = np.empty(chars.shape, dtype=np.uint16)
            wider[:first] = narrow[:first]
            narrow = wider
        np.copyto(narrow[first:first + rows], block, casting="unsafe")
    return narrow


def _horner_keys(chars, positions, bases, dtype):
    """``sum(chars[:, p] * prod(bases[q] for q in positions after p))`` over
    ``positions``, in the unsigned ``dtype`` (wrapping): Horner's rule, one multiply
    and one add per position on a contiguous accumulator (a matrix-vector product of
    integers runs a slow loop per row)."""
    if positions.shape[0] == 0:
        return np.zeros(chars.shape[0], dtype=dtype)
    if positions.shape[0] == 1:
        return chars[:, positions[0]].astype(dtype)
    keys = np.multiply(chars[:, positions[0]], dtype(bases[positions[1]]), dtype=dtype)
    keys += chars[:, positions[1]]
    for position in positions[2:]:
        keys *= dtype(bases[position])
        keys += chars[:, position]
    return keys


def _column_min_max(chars):
    """Smallest and largest value of each column of a narrow 2-D array.  numpy reduces
    the first axis of a few columns slowly (a few elements per inner step), so blocks
    of rows are laid side by side first: wide rows, reduced elementwise."""
    rows = 256
    m = chars.shape[0] // rows * rows
    if m == 0:
        return chars.min(axis=0), chars.max(axis=0)
    head = chars[:m].reshape(-1, rows * chars.shape[1])
    lo = head.min(axis=0).reshape(rows, -1).min(axis=0)
    hi = head.max(axis=0).reshape(rows, -1).max(axis=0)
    if m < chars.shape[0]:
        np.minimum(lo, chars[m:].min(axis=0), out=lo)
        np.maximum(hi, chars[m:].max(axis=0), out=hi)
    return lo, hi


def _numbered_character_keys(chars, limit):
    """:func:`_string_character_keys` with each position's characters numbered in order
    (a bincount of that column): bases as small as the characters found allow."""
    n = chars.shape[0]
    keys = np.zeros(n, dtype=np.int64)
    span = 1
    for position in range(chars.shape[1]):
        column = chars[:, position]
        if column.min() == column.max():  # the same character on every row
            continue
        present = np.bincount(column) > 0
        base = int(np.count_nonzero(present))
        span *= base
        if span > limit:
            return None
        number = np.cumsum(present, dtype=np.int64)
        number -= 1
        keys *= base
        keys += number[column]
    return keys


def _small_range_limit(n):
    """The widest range of integer keys of ``n`` rows grouped by a direct lookup: 4
    values per row, at least 2**16, at most 2**32 (a bincount over the range)."""
    return min(max(4 * n, 2 ** 16), 2 ** 32)


def _mixed_radix_weights(bases, limit):
    """``(weights, span)`` of a mixed-radix number whose digit at each position has
    ``bases[position]`` values, the last position the least significant (a position
    of one value weighs 0); None when the numbers would span more than ``limit``."""
    weights = np.zeros(bases.shape[0], dtype=np.int64)
    span = 1
    for position in np.flatnonzero(bases > 1)[::-1]:  # a few positions, not rows
        weights[position] = span
        span *= int(bases[position])
        if span > limit:
            return None
    return weights, span
