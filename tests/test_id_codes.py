"""String, object and pandas query ids turned into integer codes early, against a slow
Python reference (sorted distinct ids, each row's index among them) and the int-id path.

Object ids that are all strings are joined and encoded once (``S`` when ASCII, ``<U``
otherwise), all-int ids are packed by the array module, a categorical column gives its
own codes, an Arrow-backed string column is read from its buffers.  Every route must
give the same ids (values, order, Python types), codes and per-query values.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank._engine import codes as C
from skrank._engine import groups as GR
from skrank._engine import keys as KEYS
from skrank._engine.ids import as_qid_array

# Every test runs on both routes of object ids: read in C (skrank._engine._speedups), and the
# pure-numpy paths alone, as where the module was not built (see conftest.py).
pytestmark = pytest.mark.usefixtures("object_id_route")


def _reference(values):
    """Sorted distinct ids and each row's index among them, in plain Python."""
    uniques = sorted(set(values))
    index = {u: i for i, u in enumerate(uniques)}
    return [index[v] for v in values], uniques


def _objects(values):
    qid = np.empty(len(values), dtype=object)
    qid[:] = values
    return qid


def _assert_like_reference(qid, values, want_type):
    want_codes, want_uniques = _reference(values)
    codes, uniques, _ = C.factorize_qid("f", qid)
    assert uniques.dtype == object
    assert uniques.tolist() == want_uniques
    assert {type(u) for u in uniques.tolist()} <= {want_type}
    np.testing.assert_array_equal(codes, want_codes)
    qids, offsets, order = GR.group_queries("f", qid)
    assert qids.dtype == object and qids.tolist() == want_uniques
    assert {type(u) for u in qids.tolist()} <= {want_type}
    np.testing.assert_array_equal(np.diff(offsets), np.bincount(want_codes, minlength=len(want_uniques)))
    if order is None:
        order = np.arange(len(values))
    np.testing.assert_array_equal(order, np.argsort(want_codes, kind="stable"))


STRINGS = [
    ["q003", "q001", "q002", "q010"],                     # one length, ASCII: a view of the bytes
    ["q1", "q10", "q2", "", "a b", "zz", "q1"],           # lengths vary: placed row by row
    ["ä", "αβ", "\U0001f600", "a", "ää"],                  # not ASCII: UTF-32
    ["\ud800", "a", "\udfff", "\ud800"],                  # lone surrogates, kept as numpy keeps them
    ["", ""],
    ["x"],
    ["a", "a\0", "b", "\0"],                              # "\0" is a character, not padding
]


@pytest.mark.parametrize("words", STRINGS)
@pytest.mark.parametrize("shuffled", [False, True])
def test_object_string_ids(words, shuffled):
    rng = np.random.default_rng(1)
    values = [words[i] for i in (rng.integers(0, len(words), 500) if shuffled
                                 else np.repeat(np.arange(len(words)), 3))]
    _assert_like_reference(_objects(values), values, str)


def test_object_string_ids_become_bytes_only_when_ascii():
    # The fixed-width array the engine groups: S (one byte a character) for ASCII ids,
    # <U otherwise, None when an id holds "\0" (numpy would drop it as padding).
    assert C._plain_object_ids(_objects(["b", "a1"])).dtype.kind == "S"
    assert C._plain_object_ids(_objects(["b", "ä1"])).dtype.kind == "U"
    assert C._plain_object_ids(_objects(["b", "a\0"])) is None
    assert C._plain_object_ids(_objects(["b", 1])) is None
    # numpy's str_ is a str: grouped with the equal str, handed back as str
    values = [np.str_("b"), "a", "b"]
    _assert_like_reference(_objects(values), ["b", "a", "b"], str)


@pytest.mark.parametrize("values", [
    [3, -1, 2 ** 62, 3, -2 ** 63],
    [0, 1, 5, 1, 0],
    [np.int64(3), 2, 3, np.int8(2)],                       # numpy integers are the ints they equal
])
def test_object_int_ids_packed(values):
    qid = _objects(values)
    assert C._plain_object_ids(qid).dtype == np.int64
    _assert_like_reference(qid, [int(v) for v in values], int)


@pytest.mark.parametrize("values", [
    [True, 1, 0, 2],            # a bool equals an int id, yet is not one: the object path
    [2, False, 3],
    [2, np.True_, 3],
    [2, 1.0, 3],                # a float
    [2, "2", 3],                # 2 and "2" are two ids
    [2 ** 70, 1],               # beyond int64
])
def test_object_ids_that_are_not_all_ints_keep_the_object_path(values):
    assert C._plain_object_ids(_objects(values)) is None


def test_object_ids_that_are_not_all_ints_group_as_before():
    # "2" and 2 stay two queries; True and 1 are one query (they are equal), as np.unique has it.
    y, s = np.array([1.0, 0, 1, 0, 1, 0]), np.array([0.9, 0.1, 0.2, 0.8, 0.5, 0.4])
    got = skrank.per_query_scores("ndcg", y, s, qid=_objects([2, "2", 2, "2", 3, 3]))
    assert [type(q) for q in got.qid.tolist()] in ([int, str, int], [int, int, str])
    assert len(got.qid) == 3
    got = skrank.per_query_scores("ndcg", y, s, qid=_objects([True, 1, 1, 2, 2, 2]))
    assert len(got.qid) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\0é\U0001f600", max_size=4), min_size=1, max_size=40))
def test_object_string_ids_property(values):
    _assert_like_reference(_objects(values), values, str)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2 ** 63, 2 ** 63 - 1) | st.integers(-3, 3), min_size=1, max_size=40))
def test_object_int_ids_property(values):
    _assert_like_reference(_objects(values), values, int)


def test_missing_ids_among_packed_ints_or_joined_strings():
    for values in ([1, 2, None], ["a", None, "b"], [1, 2, float("nan")], ["a", float("nan")]):
        with pytest.raises(ValueError, match="qid must not contain missing ids"):
            skrank.ndcg_score(np.ones(len(values)), np.arange(len(values), dtype=float),
                              qid=_objects(values))


# pandas columns --------------------------------------------------------------------

pd = pytest.importorskip("pandas")


def _rows(n_queries=300, seed=6):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    y = rng.integers(0, 4, qid.size).astype(float)
    s = rng.integers(0, 6, qid.size).astype(float)
    return y, s, qid, rng.permutation(qid.size)


def _assert_same_as_int_ids(column, names, qid, y, s):
    """Per-query values and ids of ``column`` (ids ``names[qid]``) equal the int ids'."""
    metrics = ("ndcg@10", "map", "mrr")
    want = skrank.evaluate(y, s, qid=qid, metrics=metrics)
    got = skrank.evaluate(y, s, qid=column, metrics=metrics)
    assert got.qid.dtype == object
    order = np.argsort(names[want.qid])
    assert got.qid.tolist() == names[want.qid][order].tolist()
    assert {type(q) for q in got.qid.tolist()} == {str}
    for name in metrics:
        np.testing.assert_array_equal(got.per_query[name], want.per_query[name][order])


def _names(n, kind):
    if kind == "one length":
        return np.array([f"q{i:05d}" for i in range(n)], dtype=object)
    if kind == "lengths vary":
        return np.array([f"query-{i}" if i % 3 else f"{i}" for i in range(n)], dtype=object)
    return np.array([f"é{i}" for i in range(n)], dtype=object)   # not ASCII


@pytest.mark.parametrize("kind", ["one length", "lengths vary", "not ascii"])
@pytest.mark.parametrize("dtype", ["category", "string", "str", "object", "string[python]"])
@pytest.mark.parametrize("shuffled", [False, True])
def test_pandas_columns_equal_int_ids(kind, dtype, shuffled):
    y, s, qid, perm = _rows()
    if shuffled:
        y, s, qid = y[perm], s[perm], qid[perm]
    names = _names(300, kind)
    column = pd.Series(names[qid]).astype(dtype)
    _assert_same_as_int_ids(column, names, qid, y, s)


def test_categorical_codes_used_as_they_are(monkeypatch):
    # More than 127 categories (int16 codes), out of order, some unused; also a
    # pandas.Categorical and a CategoricalIndex.  pandas' factorize is not called.
    monkeypatch.setattr(pd, "factorize", lambda *a, **k: pytest.fail("factorised again"))
    y, s, qid, perm = _rows(n_queries=400)
    y, s, qid = y[perm], s[perm], qid[perm]
    names = _names(400, "lengths vary")
    categories = sorted(set(names.tolist()) | {"unused", "zzz"}, reverse=True)
    for column in (pd.Series(pd.Categorical(names[qid], categories=categories)),
                   pd.Categorical(names[qid], categories=categories),
                   pd.CategoricalIndex(names[qid], categories=categories)):
        _assert_same_as_int_ids(column, names, qid, y, s)
    # the column is not changed, and codes changed later do not leak into a new call
    column = pd.Series(pd.Categorical(names[qid], categories=categories))
    before = column.cat.codes.to_numpy().copy()
    arr = as_qid_array(column)
    np.testing.assert_array_equal(column.cat.codes.to_numpy(), before)
    assert arr.tolist() == names[qid].tolist()


def test_arrow_string_columns_read_from_their_buffers(monkeypatch):
    pa = pytest.importorskip("pyarrow")
    from skrank._engine import ids as IDS

    calls = []
    original = IDS._factorized_codes
    monkeypatch.setattr(IDS, "_factorized_codes", lambda qid: calls.append(1) or original(qid))
    y, s, qid, perm = _rows()
    y, s, qid = y[perm], s[perm], qid[perm]
    for kind in ("one length", "lengths vary"):
        names = _names(300, kind)
        column = pd.Series(names[qid], dtype="string[pyarrow]")
        _assert_same_as_int_ids(column, names, qid, y, s)
        # several chunks, and a slice that starts inside the buffers
        half = qid.size // 2
        chunked = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(
            [pa.array(names[qid[:half]].tolist()), pa.array(names[qid[half:]].tolist())])))
        _assert_same_as_int_ids(chunked, names, qid, y, s)
        tail = pd.Series(names[qid], dtype="string[pyarrow]").iloc[7:]
        _assert_same_as_int_ids(tail, names, qid[7:], y[7:], s[7:])
    assert calls == []
    # empty strings, "\0" (a character, not padding) and non-ASCII ids
    for words, fast in ((["", "a", ""], True), (["a", "a\0", "b"], False), (["é", "e"], False)):
        calls.clear()
        column = pd.Series(words, dtype="string[pyarrow]")
        arr = as_qid_array(column)
        assert arr.dtype == object and arr.tolist() == words
        codes, uniques, _ = C.factorize_qid("f", arr)
        want_codes, want_uniques = _reference(words)
        assert uniques.tolist() == want_uniques
        np.testing.assert_array_equal(codes, want_codes)
        assert (calls == []) == fast


@pytest.mark.parametrize("words, decoded, kind", [
    (["q00", "q07", "q10", "q99"], True, "U"),        # keys span fewer values than rows: decoded
    (["q00", "q07", "q10", "q99"], True, "S"),
    (["a", "é", "\U0001f600"], False, "U"),           # a wide range of characters, few ids (not bytes)
    (["!!!", "~~~", "!~!", "~!~"], False, "U"),       # ranges too wide: characters numbered
    (["!!!", "~~~", "!~!", "~!~"], False, "S"),
])
def test_character_keys_with_the_strings_of_every_key(words, decoded, kind):
    rng = np.random.default_rng(2)
    qid = np.array(words, dtype=kind)[rng.integers(0, len(words), 2000)]
    keys, strings = KEYS._string_character_keys(qid, with_strings=True)
    assert (strings is not None) == decoded
    _, inverse = np.unique(qid, return_inverse=True)
    np.testing.assert_array_equal(np.unique(keys, return_inverse=True)[1].reshape(-1), inverse.reshape(-1))
    if decoded:
        assert strings.dtype == qid.dtype
        np.testing.assert_array_equal(strings[keys], qid)


@pytest.mark.parametrize("words", [
    ["q00", "q07", "q10", "q99"],                     # keys decoded into the ids
    ["aa0", "zz9", "mm5", "az1"],                     # keys spread wider than the rows
    ["!!!", "~~~", "!~!", "~!~"],                     # characters numbered
    ["".join(w) for w in np.random.default_rng(0).choice(list("abcdefgh"), (300, 9))],  # factorised
])
def test_arrow_string_columns_on_every_key_route(words):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(5)
    values = [words[i] for i in rng.integers(0, len(words), 3000)]
    arr = as_qid_array(pd.Series(values, dtype="string[pyarrow]"))
    assert arr.dtype == object and arr.tolist() == values
    _assert_like_reference(arr, values, str)


def _assert_string_keys_like_python(qid):
    # The keys order the rows as Python orders the strings; the grouping and the
    # factorisation both find Python's sorted distinct ids, whichever route they take.
    values = qid.tolist()
    codes, uniques = _reference(values)
    keys = KEYS._string_character_keys(qid)
    if keys is not None:
        np.testing.assert_array_equal(np.unique(keys, return_inverse=True)[1].reshape(-1), codes)
    qids, offsets, order = GR.group_queries("f", qid)
    assert qids.dtype == qid.dtype and qids.tolist() == uniques
    order = np.arange(qid.shape[0]) if order is None else order
    assert [values[i] for i in order] == sorted(values)  # stable: equal ids keep their rows' order
    assert np.diff(offsets).tolist() == np.bincount(codes, minlength=len(uniques)).tolist()
    got_codes, got_uniques, _ = C.factorize_qid("f", qid)
    assert got_codes.tolist() == codes and got_uniques.tolist() == uniques
    return keys


@pytest.mark.parametrize("words, narrowed", [
    (["q0042", "q0007", "q1999", "q0500"], np.uint8),    # ASCII: one byte per character
    (["caf\u00e9", "cafe", "caf\u00ea", "cafe"], np.uint8),  # Latin-1 still fits a byte
    (["\u0100a", "\u0101b", "\u4e2dc", "\u0100c"], np.uint16),
    (["\u0121a", "ab", "\u0100c", "\u0161b"], np.uint16),  # low bytes alone would collide
    (["\U0001F600", "a\U0001F601", "b", "a"], np.uint32),    # beyond the 16-bit plane
    (["a", "ab", "abc", "b", ""], np.uint8),              # varied lengths: trailing "\0"s
    (["id7"] * 3 + ["id7x"], np.uint8),                  # one rare trailing character
])
@pytest.mark.parametrize("dtype", ["<U", ">U"])
def test_character_keys_of_narrowed_code_points(words, narrowed, dtype):
    # Code points are narrowed to the smallest unsigned dtype that holds them all
    # (then each position's pass reads less memory); the keys are the same.
    rng = np.random.default_rng(11)
    qid = np.array(words)[rng.integers(0, len(words), 3000)].astype(dtype + str(max(map(len, words))))
    chars = np.ascontiguousarray(qid, dtype=qid.dtype.newbyteorder("=")).view(np.uint32)
    assert KEYS._narrow_characters(chars.reshape(qid.shape[0], -1)).dtype == narrowed
    assert _assert_string_keys_like_python(qid) is not None


@pytest.mark.parametrize("words", [
    [b"x", b"x1", b"x\x001", b"y", b"", b"\xff\x01"],
    [b"row"] * 5 + [b"rox"],                            # ids differing in one rare position
])
def test_character_keys_of_bytes(words):
    rng = np.random.default_rng(12)
    qid = np.array(words)[rng.integers(0, len(words), 2000)]
    qid[-1] = words[-1]
    assert _assert_string_keys_like_python(qid) is not None


@pytest.mark.parametrize("words", [["same"], ["a1", "a2", "a9"], ["x0", "y5", "x9", "z0"]])
def test_character_keys_from_no_one_or_several_varying_positions(words):
    # Horner's rule over the positions that vary: none (one id), one (its characters
    # are the keys), or several.
    rng = np.random.default_rng(13)
    qid = np.array(words)[rng.integers(0, len(words), 500)]
    keys = _assert_string_keys_like_python(qid)
    assert keys.dtype == np.uint16


def test_character_keys_wrap_in_their_dtype_and_come_back_exact():
    # Keys in uint16 up to 2**16 values, else uint32.  The raw characters times their
    # weights pass the accumulator's range (2**16 for letters in three positions; 2**32
    # for 4-byte code points over 200,000 keys): the sums wrap, the keys (each below
    # the span) come out exact.
    rng = np.random.default_rng(14)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    qid = np.char.add(np.char.add(letters[rng.integers(0, 26, 5000)], letters[rng.integers(0, 26, 5000)]),
                      np.array(["y", "z"])[rng.integers(0, 2, 5000)])
    assert _assert_string_keys_like_python(qid).dtype == np.uint16
    n = 30_000  # 100,000 keys: more than uint16 holds
    qid = np.char.add("q", np.char.zfill(rng.integers(0, 100_000, n).astype(str), 5))
    keys = _assert_string_keys_like_python(qid)
    assert keys.dtype == np.uint32 and int(keys.max()) >= 2 ** 16
    n = 60_000
    first = np.array(["\U0001F600", "\U0001F601"])[rng.integers(0, 2, n)]
    qid = np.char.add(first, np.char.zfill(rng.integers(0, 100_000, n).astype(str), 5))
    keys = _assert_string_keys_like_python(qid)
    assert keys.dtype == np.uint32 and int(keys.max()) >= 2 ** 16


@pytest.mark.parametrize("n_ids, decoded", [(20, True), (900, False)])
def test_shuffled_string_ids_decoded_from_their_keys_or_read_at_a_row(n_ids, decoded):
    # Few keys (here at most 100 over 2000 rows): the distinct ids are decoded from the
    # keys present; keys spread wider than one per 8 rows: the ids are read at a row of
    # each.  The same ids either way.
    rng = np.random.default_rng(15)
    digits = 2 if decoded else 3
    ids = np.char.add("q", np.char.zfill(rng.choice(10 ** digits, n_ids, replace=False).astype(str), 3))
    qid = ids[rng.integers(0, n_ids, 2000)].astype(">U4")
    _, strings = KEYS._string_character_keys(qid, with_strings=True)
    assert (strings is not None) == decoded
    _assert_string_keys_like_python(qid)


@pytest.mark.parametrize("last, narrowed", [("z", np.uint8), ("\u0101", np.uint16),
                                            ("\U0001F600", np.uint32)])
@pytest.mark.parametrize("block_bytes", [1, 40, 2 ** 20])
def test_code_points_narrowed_block_by_block(monkeypatch, last, narrowed, block_bytes):
    # Code points are checked and cast block by block; a wide one in the last block
    # sends every row to the wider dtype, values unchanged.
    monkeypatch.setattr(KEYS, "_NARROW_BLOCK_BYTES", block_bytes)
    qid = np.array(["ab", "a", "ba", "b" + last] * 25)
    chars = qid.view(np.uint32).reshape(qid.shape[0], -1)
    narrow = KEYS._narrow_characters(chars)
    assert narrow.dtype == narrowed
    np.testing.assert_array_equal(narrow, chars)
    _assert_string_keys_like_python(qid)


@pytest.mark.parametrize("first, later, narrowed", [
    ("\u0101", "\U0001F600", np.uint32),   # 16 bits early, beyond 16 bits later
    ("a", "\u0101", np.uint16),            # rows cast to bytes so far widened
    ("\U0001F600", "a", np.uint32),
])
def test_code_points_widened_as_blocks_need(monkeypatch, first, later, narrowed):
    monkeypatch.setattr(KEYS, "_NARROW_BLOCK_BYTES", 40)
    qid = np.array(["b" + first] + ["ab", "a", "ba"] * 30 + ["b" + later])
    chars = qid.view(np.uint32).reshape(qid.shape[0], -1)
    narrow = KEYS._narrow_characters(chars)
    assert narrow.dtype == narrowed
    np.testing.assert_array_equal(narrow, chars)
    _assert_string_keys_like_python(qid)
