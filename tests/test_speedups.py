"""skrank._engine._speedups, the optional C reading of object query ids.

Where it is built, all-``str`` and all-``int`` object ids are read by it; the
pure-numpy paths it stands in for must give the same ids (values, order, Python
types), codes, grouping and metric values, checked here against those paths and a
plain-Python reference.  test_id_codes.py and test_factorize.py run whole on both
routes (the ``object_id_route`` fixture).  In CI, where a C compiler is present, a
missing module is a failure, not a skip.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank._engine import codes as C
from skrank._engine import groups as GR

try:  # works whether or not tests/ is a package
    from tests.conftest import NO_SPEEDUPS
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import NO_SPEEDUPS


@pytest.fixture(scope="module")
def speedups():
    if C._speedups is None:
        pytest.skip(NO_SPEEDUPS)
    return C._speedups


def _objects(values):
    qid = np.empty(len(values), dtype=object)
    qid[:] = values
    return qid


def _reference(values):
    uniques = sorted(set(values))
    index = {u: i for i, u in enumerate(uniques)}
    return [index[v] for v in values], uniques


def _on_both_routes(qid, monkeypatch):
    """factorize_qid and query_groups of ``qid``, compiled then pure."""
    out = []
    for compiled in (C._speedups, None):
        with monkeypatch.context() as m:
            m.setattr(C, "_speedups", compiled)
            codes, uniques, grouped = C.factorize_qid("f", qid)
            groups = GR.query_groups("f", qid)
            out.append((codes, uniques.tolist(), [type(u) for u in uniques.tolist()], grouped,
                        groups.qids.tolist(), groups.offsets, groups.order))
    return out


def _assert_routes_agree(values, monkeypatch):
    qid = _objects(values)
    (codes, uniques, types, grouped, qids, offsets, order), pure = _on_both_routes(qid, monkeypatch)
    want_codes, want_uniques = _reference(values)
    np.testing.assert_array_equal(codes, want_codes)
    assert uniques == want_uniques and qids == want_uniques
    assert types == [type(u) for u in want_uniques]
    np.testing.assert_array_equal(np.diff(offsets), np.bincount(want_codes, minlength=len(want_uniques)))
    want_order = None if order is None else np.argsort(want_codes, kind="stable")
    if order is not None:
        np.testing.assert_array_equal(order, want_order)
    assert grouped == bool(np.all(np.diff(want_codes) >= 0))
    p_codes, p_uniques, p_types, p_grouped, p_qids, p_offsets, p_order = pure
    np.testing.assert_array_equal(p_codes, codes)
    assert (p_uniques, p_types, p_qids, p_grouped) == (uniques, types, qids, grouped)
    np.testing.assert_array_equal(p_offsets, offsets)
    assert (p_order is None) == (order is None)
    if order is not None:
        np.testing.assert_array_equal(p_order, order)


def test_the_module_is_built(speedups):
    # In CI (a C compiler present) the skip above is a failure: the fast route is tested.
    assert callable(speedups.str_codes) and callable(speedups.int_values)


# Strings whose first 8 bytes agree (the table tells short strings apart by those
# bytes alone, longer ones by every character), every kind of character, "\0" inside
# and at the end, the empty string.
_TEXT = st.text(alphabet="ab\0éā\U0001f600", max_size=4) | st.sampled_from(
    ["prefix-12345678-a", "prefix-12345678-b", "prefix-12345678", "prefix-1", "", "a\0", "a",
     "ééééééééé1", "ééééééééé2", "\U0001f600" * 3])


@settings(max_examples=80, deadline=None)
@given(values=st.lists(_TEXT, min_size=1, max_size=60), grouped=st.booleans())
def test_string_ids_on_both_routes(speedups, values, grouped):
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_routes_agree(sorted(values) if grouped else values, monkeypatch)


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.integers(-2 ** 63, 2 ** 63 - 1) | st.integers(-3, 3), min_size=1,
                       max_size=60), grouped=st.booleans())
def test_int_ids_on_both_routes(speedups, values, grouped):
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_routes_agree(sorted(values) if grouped else values, monkeypatch)


class _Name(str):
    """A str subclass: its own __eq__ could differ, so C never reads it."""


@pytest.mark.parametrize("values, read_as", [
    (["b", "a", "b"], "codes"),
    ([3, -1, 2 ** 63 - 1, -2 ** 63], "int64"),
    ([True, 1, 2], None),                   # a bool is not an int id
    ([1, 2 ** 63], None),                   # beyond int64
    ([np.int64(1), 2], None),               # numpy scalars: the pure path takes them
    ([1, 2.0], None),
    (["a", None], None),                    # a missing id: the pure path's error
    (["a", 1], None),
    ([np.str_("a"), "b"], None),
    (["a", _Name("b")], None),
    ([(1, 2), (1, 2)], None),
])
def test_what_the_compiled_route_reads(speedups, values, read_as):
    got = C._compiled_object_ids(_objects(values))
    if read_as is None:
        assert got is None
    elif read_as == "int64":
        assert got.dtype == np.int64 and got.tolist() == values
    else:
        assert isinstance(got, C.CodedIds)
        assert got.ids[got.codes].tolist() == values and got.ids.tolist() == sorted(set(values))


def test_ids_the_compiled_route_leaves_are_grouped_as_before(speedups, monkeypatch):
    for values in ([True, 1, 2, 2], ["a", 1, "a"], [np.str_("b"), "a", "b"], [1, 2 ** 70, 1]):
        qid = _objects(values)
        (codes, uniques, *_), (p_codes, p_uniques, *_) = _on_both_routes(qid, monkeypatch)
        np.testing.assert_array_equal(codes, p_codes)
        assert [repr(u) for u in uniques] == [repr(u) for u in p_uniques]


def test_many_distinct_ids_and_a_strided_view(speedups, monkeypatch):
    # 120,000 distinct strings: the table grows many times; a strided view is read too.
    rng = np.random.default_rng(3)
    words = [f"user-{i:07d}" if i % 2 else f"u{i}" for i in range(120_000)]
    values = [words[i] for i in rng.integers(0, len(words), 300_000)]
    _assert_routes_agree(values, monkeypatch)
    view = _objects(values)[::3]
    got = C._compiled_object_ids(view)
    want_codes, want_uniques = _reference(values[::3])
    np.testing.assert_array_equal(got.codes, want_codes)
    assert got.ids.tolist() == want_uniques


def test_metric_values_on_both_routes(speedups, monkeypatch):
    rng = np.random.default_rng(4)
    qid = rng.integers(0, 200, 5000)
    y, s = rng.integers(0, 3, qid.size).astype(float), rng.integers(0, 5, qid.size).astype(float)
    metrics = ["ndcg@10", "map", "mrr", "precision@5"]
    for ids in (np.char.add("q", qid.astype(str)).astype(object), qid.astype(object)):
        compiled = skrank.evaluate(y, s, qid=ids, metrics=metrics)
        monkeypatch.setattr(C, "_speedups", None)
        pure = skrank.evaluate(y, s, qid=ids, metrics=metrics)
        monkeypatch.undo()
        assert compiled.qid.tolist() == pure.qid.tolist()
        assert [type(q) for q in compiled.qid.tolist()] == [type(q) for q in pure.qid.tolist()]
        for name in metrics:
            np.testing.assert_array_equal(compiled.per_query[name], pure.per_query[name])


@pytest.mark.parametrize("bad", [
    np.array([1, 2]),                                   # not object dtype
    np.array([1, 2, 3, 4], dtype=object)[::2],          # not contiguous
    np.empty((2, 2), dtype=object),                     # not 1-D
    [1, 2],                                             # not an array
])
def test_the_c_functions_refuse_what_they_cannot_read(speedups, bad):
    with pytest.raises((TypeError, AttributeError)):
        speedups.int_values(bad, np.empty(4, dtype=np.int64))
    with pytest.raises((TypeError, AttributeError)):
        speedups.str_codes(bad, np.empty(4, dtype=np.intp), np.empty(4, dtype=np.intp))


def test_the_c_functions_check_their_output_buffers(speedups):
    ids = _objects(["a", "b", "a"])
    with pytest.raises(ValueError, match="codes holds"):
        speedups.str_codes(ids, np.empty(2, dtype=np.intp), np.empty(3, dtype=np.intp))
    with pytest.raises(ValueError, match="out holds"):
        speedups.int_values(_objects([1, 2, 3]), np.empty(2, dtype=np.int64))
    with pytest.raises(BufferError):
        speedups.int_values(_objects([1]), b"12345678")  # read-only
    assert speedups.str_codes(_objects([]), np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)) == 0


def test_coded_ids_read_as_the_ids_they_stand_for():
    coded = C.CodedIds(np.array([1, 0, 1]), np.array(["a", "b"], dtype=object))
    assert len(coded) == 3 and coded.shape == (3,) and coded.ndim == 1 and coded.dtype == object
    assert np.asarray(coded).tolist() == ["b", "a", "b"] == coded.tolist()
    assert coded[0] == "b" and coded[1:].tolist() == ["a", "b"]


# Short ASCII ids (at most 8 characters, no "\0") are numbered by their characters:
# a mixed-radix key over the positions that vary, ordered as Python orders strings
# ("" < "a" < "a0" < "ab"); grouped rows are found as runs.
_SHORT_ASCII = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=127), max_size=8)


@settings(max_examples=80, deadline=None)
@given(values=st.lists(_SHORT_ASCII, min_size=1, max_size=80), grouped=st.booleans())
def test_short_ascii_ids_on_both_routes(speedups, values, grouped):
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_routes_agree(sorted(values) if grouped else values, monkeypatch)


def test_short_ascii_ids_are_their_own_keys(speedups):
    # Positions 1 and 2 vary ("1".."3" and "\0".."0"): keys below 3 * 49, ordered as
    # the strings, the ids indexed by key (holes for unused keys).
    values = ["q10", "q1", "q2", "q10", "q3", "q2"]
    got = C._compiled_object_ids(_objects(values))
    assert isinstance(got, C.CodedIds)
    assert [got.ids[k] for k in sorted(set(got.codes.tolist()))] == sorted(set(values))
    assert got.ids[got.codes].tolist() == values
    assert got.ids.shape[0] == 3 * 49                       # holes: a radix key, not a count
    # 9 characters, "\0" or non-ASCII: numbered by the hash table (no holes)
    for other in (["q000000010", "q000000001"], ["a\0", "a"], ["é", "e"]):
        got = C._compiled_object_ids(_objects(other))
        assert got.ids.tolist() == sorted(other)


def test_keys_spanning_too_wide_a_range_take_the_hash_table(speedups, monkeypatch):
    # Eight positions each spanning most of ASCII: the radix key would pass the
    # limit, so the table numbers them; same ids and codes either way.
    rng = np.random.default_rng(7)
    values = ["".join(chr(c) for c in rng.integers(33, 127, 8)) for _ in range(3000)]
    values = [values[i] for i in rng.integers(0, 3000, 6000)]
    got = C._compiled_object_ids(_objects(values))
    assert got.ids.shape[0] == len(set(values))             # numbered, not keyed
    _assert_routes_agree(values, monkeypatch)


def test_grouped_string_ids_are_found_as_runs(speedups, monkeypatch):
    # Rows grouped by sorted ids: the runs, no regrouping; grouped but not sorted: the
    # ids are numbered and the rows regrouped in the ids' order.
    names = [f"query-{i:04d}" for i in range(2000)]
    sizes = np.random.default_rng(8).integers(1, 6, 2000)
    values = [name for name, size in zip(names, sizes) for _ in range(size)]
    groups = GR.query_groups("f", _objects(values))
    assert groups.order is None and groups.qids.tolist() == names
    np.testing.assert_array_equal(np.diff(groups.offsets), sizes)
    backwards = [name for name, size in zip(names[::-1], sizes[::-1]) for _ in range(size)]
    groups = GR.query_groups("f", _objects(backwards))
    assert groups.order is not None and groups.qids.tolist() == names
    _assert_routes_agree(values, monkeypatch)
    _assert_routes_agree(backwards, monkeypatch)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(_TEXT, min_size=1, max_size=40), sort=st.booleans())
def test_str_runs_order_the_runs_as_python_does(speedups, values, sort):
    """str_runs finds the runs and says whether their strings increase in Python's order
    (every kind of character, prefixes, NUL): -2 exactly when a run's string is not
    greater than the one before."""
    values = sorted(values) if sort else values
    starts = np.empty(len(values), dtype=np.intp)
    got = speedups.str_runs(_objects(values), starts)
    firsts = [i for i in range(len(values)) if i == 0 or values[i] != values[i - 1]]
    runs = [values[i] for i in firsts]
    if all(b > a for a, b in zip(runs, runs[1:])):
        assert got == len(firsts) and starts[:got].tolist() == firsts
    else:
        assert got == -2
    assert speedups.str_runs(_objects(values + [1]), np.empty(len(values) + 1, np.intp)) in (-1, -2)
