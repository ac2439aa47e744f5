"""Query ids held by pandas (categoricals, string dtypes) and Arrow: read from their
own codes and buffers instead of one Python string per row.
"""

import numpy as np

from .._core.checks import filtered_on_numpy_1
from .codes import CodedIds, factorize_qid, fixed_width_cells
from .keys import _string_character_keys


def as_qid_array(qid):
    """Query ids as a 1-D array; tuples stay whole ids instead of becoming a 2-D array."""
    if isinstance(qid, np.ndarray):
        return qid
    if type(qid).__module__.partition(".")[0] == "pandas":
        arr = _pandas_string_ids(qid)
        if arr is not None:
            return arr
    ragged_warning = getattr(np, "exceptions", np).VisibleDeprecationWarning
    try:
        # numpy < 1.24 only warns about ragged sequences; make it the same error
        with filtered_on_numpy_1("error", ragged_warning):
            arr = np.asarray(qid)
    except (ValueError, ragged_warning):  # a list mixing tuples and scalars
        arr = np.empty(len(qid), dtype=object)
        arr[:] = list(qid)
        return arr
    if isinstance(qid, np.ndarray) or getattr(qid, "dtype", None) is not None:
        return arr
    # A Python sequence: keep tuples whole and mixed types as they are (numpy would
    # turn [(1, 2)] into a 2-D array and [1, "a"] into the strings ['1', 'a']).
    items = list(qid)
    mixed = arr.dtype.kind in "US" and not all(isinstance(item, str) for item in items)
    if (arr.ndim > 1 and all(isinstance(item, tuple) for item in items)) or mixed:
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
    return arr


def _pandas_string_ids(qid):
    """A pandas column of string ids (object, string or categorical dtype) as its
    integer codes into the sorted distinct ids (a ``CodedIds``: the per-row id objects
    are never formed), or None for anything else, missing ids included (they get
    numpy's path and its error).  A categorical column holds such codes
    already; a string column stored by Arrow is read from its buffers (or factorised
    by pandas' hash table when not ASCII); numpy's conversion of those alone costs
    more.  Columns of Python objects (object dtype, or strings stored as Python
    objects) are left to numpy: None."""

    if getattr(qid, "ndim", 1) != 1 or str(getattr(qid, "dtype", "")) not in (
            "object", "category", "string", "str"):
        return None
    storage = getattr(qid.dtype, "storage", None)
    if str(qid.dtype) == "object" or storage == "python":
        # Python objects already: numpy's array of them (the column's own, for an object
        # column) goes to the grouping's object paths, cheaper than a hash table.
        return None
    found = None
    if str(qid.dtype) == "category":
        found = _categorical_codes(qid)
    elif storage in ("pyarrow", "pyarrow_numpy"):
        found = _arrow_string_codes(qid)
    if found is None:
        found = _factorized_codes(qid)
    if found is None:
        return None
    return CodedIds(*found)


def _sorted_string_categories(codes, categories):
    """``(codes, categories)`` with the categories (distinct ``str``) sorted and the codes
    renumbered alike, or None when a code is missing (-1) or a category is not a str."""
    if codes.size == 0 or codes.min() < 0:
        return None
    categories = np.asarray(categories, dtype=object)
    if set(map(type, categories.tolist())) != {str}:
        return None
    if not bool(np.all(categories[1:] > categories[:-1])):  # distinct: any sort is the order
        order = np.argsort(categories)
        rank = np.empty(order.shape[0], dtype=codes.dtype)
        rank[order] = np.arange(order.shape[0], dtype=codes.dtype)
        return rank[codes], categories[order]
    return codes, categories


def _categorical_codes(qid):
    """A categorical column's own codes and categories (unused ones included: the
    grouping keeps only the codes present)."""
    cat = qid.cat if hasattr(qid, "cat") else qid  # a Series, or a Categorical / CategoricalIndex
    codes = np.array(cat.codes, copy=True)  # ours: the column may change after the call
    return _sorted_string_categories(codes, cat.categories)


def _factorized_codes(qid):
    import pandas as pd  # already imported: qid is a pandas object

    try:
        codes, uniques = pd.factorize(qid)
    except TypeError:
        return None
    return _sorted_string_categories(codes, uniques)


def _arrow_string_codes(qid):
    """Codes of a string column stored by Arrow, read from its offsets and UTF-8 bytes
    when every character is ASCII: the bytes become a fixed-width ``S`` array (a view
    when every id has one length) whose character keys (see ``_string_character_keys``)
    are the codes.  None otherwise (missing ids, other characters, other storage)."""

    try:
        import pyarrow as pa

        chunks = pa.chunked_array(qid.array.__arrow_array__())
        chunks = chunks.chunk(0) if chunks.num_chunks == 1 else chunks.combine_chunks()
    except Exception:  # not pyarrow-backed after all, or an old pyarrow
        return None
    if chunks.null_count or not pa.types.is_string(chunks.type) and not pa.types.is_large_string(chunks.type):
        return None
    n = len(chunks)
    if n == 0:
        return None
    offset_type = np.int64 if pa.types.is_large_string(chunks.type) else np.int32
    _, offset_buffer, data_buffer = chunks.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=offset_type)[chunks.offset:chunks.offset + n + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None \
        else np.zeros(0, dtype=np.uint8)
    data = data[int(offsets[0]):int(offsets[-1])]
    offsets = offsets - offsets[0]
    if data.size and (int(data.max()) >= 128 or not bool(np.all(data))):  # non-ASCII, or "\0"
        return None
    lengths = np.diff(offsets)
    width = int(lengths.max())
    if n * width > 2 * int(offsets[-1]) + 64 * n:
        return None  # one long id: fixed-width cells would cost its length on every row
    if width == 0:
        fixed = np.zeros(n, dtype="S1")
    elif int(lengths.min()) == width:
        fixed = data.view(f"S{width}")
    else:
        fixed = fixed_width_cells(data, offsets[:-1], lengths, width).view(f"S{width}")
    found = _string_character_keys(fixed, with_strings=True)
    if found is None:  # too many combinations of characters: factorised
        codes, uniques, _ = factorize_qid("pandas", fixed)
        return codes, uniques.astype(f"U{uniques.dtype.itemsize}").astype(object)
    # The keys are the codes, in the ids' order: the ids indexed by key (the keys no
    # row holds are never looked up), no renumbering pass.
    keys, strings = found
    if strings is None:  # keys spread wider than the rows: a row of each key held
        row = np.full(int(keys.max()) + 1, -1, dtype=np.intp)
        row[keys] = np.arange(n)
        present = np.flatnonzero(row >= 0)
        uniques = np.empty(row.shape[0], dtype=object)
        uniques[present] = fixed[row[present]].astype(f"U{fixed.dtype.itemsize}").astype(object)
        return keys, uniques
    return keys, strings.astype(f"U{fixed.dtype.itemsize}").astype(object)
