"""Query-id factorisation on every input layout, against np.unique as the oracle.

skrank groups rows without np.unique's comparison sort (a direct lookup for integer
ids of a small range, a hash table otherwise, strings packed into integer words,
pandas' own codes for pandas columns); every path must give np.unique's sorted ids
and codes, and every metric the same values as on the rows grouped and sorted.
"""

import numpy as np
import pytest

import skrank
from skrank._engine import codes as C
from skrank._engine import groups as GR
from skrank._engine import keys as KEYS
from skrank._engine import ranking as R

# Every test runs on both routes of object ids: read in C (skrank._engine._speedups), and the
# pure-numpy paths alone, as where the module was not built (see conftest.py).
pytestmark = pytest.mark.usefixtures("object_id_route")


def _oracle(qid):
    uniques, codes = np.unique(qid, return_inverse=True)
    return codes.reshape(-1), uniques


def _assert_like_unique(qid):
    codes, uniques, _ = C.factorize_qid("f", qid)
    want_codes, want_uniques = _oracle(qid)
    assert uniques.dtype == want_uniques.dtype
    np.testing.assert_array_equal(uniques, want_uniques)
    np.testing.assert_array_equal(codes, want_codes)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64])
def test_integer_ids_of_any_range_and_dtype(dtype):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    full_range = rng.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True)
    small_range = rng.integers(0, 50, 3000).astype(dtype)
    extremes = np.array([info.max, info.min, info.max, info.min + 1, info.max - 1], dtype=dtype)
    for qid in (full_range, small_range, extremes, full_range[rng.integers(0, 40, 3000)]):
        _assert_like_unique(qid)


def test_wide_integer_ids_with_hash_slot_clashes():
    # 100,000 distinct 63-bit ids in a table of 2**20 slots: many slots are shared
    # (birthday bound), and their rows take the np.unique fallback.
    rng = np.random.default_rng(1)
    distinct = rng.integers(0, 2 ** 63, 100_000, dtype=np.int64)
    qid = distinct[rng.integers(0, distinct.size, 300_000)]
    codes, uniques = C._factorize_hashed(qid)
    want_codes, want_uniques = _oracle(qid)
    np.testing.assert_array_equal(uniques, want_uniques)
    np.testing.assert_array_equal(codes, want_codes)


def test_float_bool_and_integral_float_ids():
    rng = np.random.default_rng(2)
    for qid in (rng.integers(-5, 5, 200).astype(float), rng.integers(0, 9, 200).astype(np.float32),
                rng.random(200).round(1), np.array([1.5, np.inf, -np.inf, 1.5, 2.0]),
                np.array([1e300, 3.0, 1e300]), rng.random(50) < 0.5):
        qid = qid[rng.permutation(qid.size)]
        _assert_like_unique(qid)


@pytest.mark.parametrize("kind", ["U", "S"])
def test_string_ids_packed_into_words_keep_their_order(kind):
    rng = np.random.default_rng(3)
    words = ["q1", "q10", "q2", "", "a", "ab", "a b", "zzzzzzzz", "zzzzzzzzz", "x" * 30,
             "x" * 29 + "w", "q" * 70, "q" * 69 + "r"]
    if kind == "U":
        words += ["ä", "αβ", "q1\u4e00", "\U0001f600", "é" * 9]
    base = np.array(words, dtype=kind)
    _assert_like_unique(base[rng.integers(0, base.size, 2000)])
    _assert_like_unique(base[rng.integers(0, 4, 2000)])
    _assert_like_unique(base[::-1])
    # non-contiguous and byte-swapped arrays
    _assert_like_unique(base[rng.integers(0, base.size, 2000)][::3])
    if kind == "U":
        _assert_like_unique(base.astype(base.dtype.newbyteorder(">")))


@pytest.mark.parametrize("values", [["b", "a", "c", "a"], [3, 1, 3, 2], [1, "a", 1],
                                    [2 ** 70, 1, 2 ** 70], [True, 1, 0], [1.5, 1, 2]])
def test_object_ids(values):
    rng = np.random.default_rng(4)
    qid = np.empty(400, dtype=object)
    qid[:] = [values[i] for i in rng.integers(0, len(values), 400)]
    codes, uniques, _ = C.factorize_qid("f", qid)
    assert uniques.dtype == object
    # every row's id is recovered, distinct ids get distinct codes
    assert all(u == q for u, q in zip(uniques[codes].tolist(), qid.tolist()))
    assert len(set(uniques.tolist())) == uniques.size
    if {type(v) for v in values} in ({str}, {int}):
        want_codes, want_uniques = _oracle(qid)
        assert uniques.tolist() == want_uniques.tolist()
        assert [type(u) for u in uniques.tolist()] == [type(u) for u in want_uniques.tolist()]
        np.testing.assert_array_equal(codes, want_codes)


@pytest.mark.parametrize("n_queries", [70_000, 300_000])
def test_group_order_above_65536_queries_is_the_stable_sort(n_queries):
    rng = np.random.default_rng(5)
    codes = rng.integers(0, n_queries, 400_000)
    np.testing.assert_array_equal(GR._group_order(codes, n_queries),
                                  np.argsort(codes, kind="stable"))


def _layouts():
    rng = np.random.default_rng(6)
    sizes = rng.integers(1, 40, 300)
    qid = np.repeat(np.arange(sizes.size) * 7 + 3, sizes)
    y = rng.integers(0, 4, qid.size).astype(float)
    s = rng.integers(0, 6, qid.size).astype(float)  # many ties
    perm = rng.permutation(qid.size)
    return y, s, qid, perm


@pytest.mark.parametrize("make", [
    lambda q: q,
    lambda q: q.astype(np.uint16),
    lambda q: q.astype(float),
    lambda q: q * 2 ** 40,                               # a wide range: hashed
    lambda q: np.char.add("query-", q.astype(str)),      # <U ids, two words
    lambda q: np.char.add("q", q.astype(str)).astype("S"),
    lambda q: q.astype(object),
    lambda q: np.char.add("q", q.astype(str)).astype(object),
])
def test_metrics_equal_on_every_layout(make):
    y, s, qid, perm = _layouts()
    metrics = ("ndcg@10", "map", "mrr", "precision@5", "recall@10", "r_precision")
    grouped = skrank.evaluate(y, s, qid=qid, metrics=metrics)
    ids = make(qid)
    shuffled = skrank.evaluate(y[perm], s[perm], qid=ids[perm], metrics=metrics)
    same_order = skrank.evaluate(y, s, qid=ids, metrics=metrics)
    for name in metrics:
        assert shuffled.mean[name] == pytest.approx(grouped.mean[name], abs=1e-12)
        assert same_order.mean[name] == pytest.approx(grouped.mean[name], abs=1e-12)


def test_pandas_string_and_categorical_columns_use_their_codes():
    pd = pytest.importorskip("pandas")
    y, s, qid, perm = _layouts()
    names = np.char.add("q", qid.astype(str)).astype(object)[perm]
    want = skrank.evaluate(y, s, qid=qid, metrics=("ndcg@10", "map")).mean
    for column in (pd.Series(names), pd.Series(names, dtype="string"),
                   pd.Series(names).astype("category"), pd.Index(names)):
        got = skrank.evaluate(y[perm], s[perm], qid=column, metrics=("ndcg@10", "map"))
        for name in want:
            assert got.mean[name] == pytest.approx(want[name], abs=1e-12)
        per_query = skrank.per_query_scores("ndcg", y[perm], s[perm], qid=column, k=10)
        assert list(per_query.qid) == sorted(set(names.tolist()))
    # unused categories are not queries; categories out of order still come out sorted
    column = pd.Categorical(names, categories=sorted(set(names.tolist()) | {"zz"}, reverse=True))
    codes, uniques, _ = C.factorize_qid("f", skrank._engine.ids.as_qid_array(column))
    assert uniques.tolist() == sorted(set(names.tolist()))
    assert (uniques[codes] == names).all()


def test_pandas_columns_with_missing_or_mixed_ids_keep_numpy_conversion():
    # pandas' codes are used only for complete columns of strings: anything else
    # (missing ids, numbers among strings) gets numpy's conversion and its rules.
    pd = pytest.importorskip("pandas")
    from skrank._engine.ids import as_qid_array

    for column in (pd.Series(["a", None, "b"], dtype="string"), pd.Series(["a", np.nan, "b"]),
                   pd.Series(["a", 1, "b"], dtype=object), pd.Series([1, 2, 1], dtype="category")):
        arr = as_qid_array(column)
        assert not isinstance(arr, C.CodedIds)
        assert arr.dtype == np.asarray(column).dtype
        assert [repr(v) for v in arr.tolist()] == [repr(v) for v in np.asarray(column).tolist()]


@pytest.mark.parametrize("missing", [None, float("nan"), np.nan, "pd.NA"])
def test_missing_ids_among_strings_or_ints_are_still_found(missing):
    # The fast paths (all-str / all-int object ids, pandas codes) must not skip the
    # missing-id rule: one missing id among many valid ones is the error it always was.
    if missing == "pd.NA":
        pd = pytest.importorskip("pandas")
        missing = pd.NA
    for valid in (["a", "b", "c"], [1, 2, 3]):
        ids = np.empty(6, dtype=object)
        ids[:] = valid + valid[:2] + [missing]
        with pytest.raises(ValueError, match="qid must not contain missing ids"):
            skrank.ndcg_score(np.ones(6), np.arange(6.0), qid=ids)
    pd = pytest.importorskip("pandas")
    for dtype in ("object", "string", "category"):
        column = pd.Series(["a", "b", None, "a"], dtype=dtype)
        with pytest.raises(ValueError, match="qid must not contain missing ids"):
            skrank.ndcg_score(np.ones(4), np.arange(4.0), qid=column)


def test_cutoff_metrics_on_a_full_ranking_equal_each_metric_alone_on_ties():
    # With MAP in the call, evaluate ranks every row and the cutoff metrics read only the
    # tie groups that start above their cutoff; each must equal its own call (which
    # selects the top rows instead), for groups straddling the cutoff too.
    rng = np.random.default_rng(8)
    sizes = rng.integers(1, 60, 200)
    qid = np.repeat(np.arange(sizes.size), sizes)
    y = rng.integers(0, 5, qid.size).astype(float)
    for levels in (2, 5, 40):
        s = rng.integers(0, levels, qid.size).astype(float)
        got = skrank.evaluate(y, s, qid=qid, metrics=["map", "ndcg@10", "ndcg_exp@5", "dcg@1",
                                                      "precision@20", "cg@7"])
        alone = {
            "ndcg@10": skrank.per_query_scores("ndcg", y, s, qid=qid, k=10),
            "ndcg_exp@5": skrank.per_query_scores("ndcg", y, s, qid=qid, k=5, gain="exponential"),
            "dcg@1": skrank.per_query_scores("dcg", y, s, qid=qid, k=1),
            "precision@20": skrank.per_query_scores("precision", y, s, qid=qid, k=20),
            "cg@7": skrank.per_query_scores("cg", y, s, qid=qid, k=7),
        }
        for name, want in alone.items():
            np.testing.assert_allclose(got.per_query[name], want.score, rtol=0, atol=1e-12)


# Unsorted integer ids spanning at most 65,536 values are grouped without factorising
# (a bincount of key - min and a stable 16-bit radix sort): checked against np.unique
# and the stable sort of the codes, the obvious way to group rows.
def _assert_grouped_like_stable_sort(qid):
    qids, offsets, order = GR.group_queries("f", qid)
    want_uniques, codes = np.unique(qid, return_inverse=True)
    assert qids.dtype == want_uniques.dtype
    np.testing.assert_array_equal(qids, want_uniques)
    np.testing.assert_array_equal(np.diff(offsets), np.bincount(codes.reshape(-1)))
    if order is None:  # rows already grouped in the order of the ids
        order = np.arange(qid.shape[0])
    np.testing.assert_array_equal(order, np.argsort(codes.reshape(-1), kind="stable"))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64,
                                   ">i4", ">u8"])
def test_small_range_integer_ids_grouped_by_lookup(dtype):
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    lo = max(int(info.min), -1000) if info.min < 0 else 0
    gaps = (lo + 7 * rng.integers(0, 40, 2000)).astype(dtype)  # ids with gaps, negative ones
    top = np.full(50, info.max, dtype=dtype) - rng.integers(0, 3, 50).astype(dtype)  # near max
    ends = np.array([info.max, info.min, 0, info.max, info.min], dtype=dtype)  # int8: wraps
    for qid in (gaps, top, ends):
        if int(qid.max()) - int(qid.min()) > 65535:
            continue
        _assert_grouped_like_stable_sort(qid[rng.permutation(qid.size)])


@pytest.mark.parametrize("width", [65535, 65536, 65537, 10 ** 9])
def test_integer_ids_at_and_beyond_the_lookup_range(width):
    # Ranges of 65,536 values (or 4 per row) or fewer take the lookup; wider ones
    # factorise first.
    rng = np.random.default_rng(12)
    qid = np.concatenate([[-5, width - 6], rng.integers(-5, width - 5, 3000)])
    assert (GR._small_range_groups(qid) is None) == (width > 65536)
    _assert_grouped_like_stable_sort(qid[rng.permutation(qid.size)])


@pytest.mark.parametrize("digit_bits", [16, 3])
def test_radix_passes_over_many_queries(monkeypatch, digit_bits):
    # Above 65,536 queries the group order takes two 16-bit radix passes; with 3-bit
    # digits the same multi-pass code runs (four passes) on a few hundred queries.
    monkeypatch.setattr(GR, "_RADIX_DIGIT_BITS", digit_bits)
    rng = np.random.default_rng(15)
    n_queries = 70_000 if digit_bits == 16 else 700
    codes = rng.integers(0, n_queries, 5 * n_queries)
    np.testing.assert_array_equal(GR._group_order(codes, n_queries),
                                  np.argsort(codes, kind="stable"))
    # End to end: ids of a range of 4 per row (the lookup) and a wide range
    # (factorised), both grouped through those passes.
    for ids in (codes * 3 - 7, codes * 2 ** 40):
        _assert_grouped_like_stable_sort(ids)


@pytest.mark.parametrize("digit_bits", [16, 3])
@pytest.mark.parametrize("n_queries", [1, 37, 700, 70_000])
def test_many_rows_sorted_chunk_by_chunk_equal_the_stable_sort(monkeypatch, n_queries, digit_bits):
    # Beyond _CHUNKED_ABOVE rows each chunk is radix-sorted alone and its runs placed
    # after the same query's rows of earlier chunks; lowered, the same code runs on
    # chunks of 100 rows (the last one short, queries missing from some chunks, runs
    # cut by chunk boundaries), with one and several radix passes per chunk.
    monkeypatch.setattr(GR, "_RADIX_DIGIT_BITS", digit_bits)
    monkeypatch.setattr(GR, "_CHUNK_ROWS", 100)
    monkeypatch.setattr(GR, "_CHUNKED_ABOVE", 250)
    rng = np.random.default_rng(21)
    n_rows = 1037 if n_queries < 70_000 else 150_000
    codes = rng.integers(0, n_queries, n_rows)
    codes[:300] = np.sort(codes[:300])  # long runs spanning chunk boundaries
    for counts in (None, np.bincount(codes, minlength=n_queries)):
        np.testing.assert_array_equal(GR._group_order(codes, n_queries, counts),
                                      np.argsort(codes, kind="stable"))
    if n_queries > 1:
        for ids in (codes * 3 - 7, codes * 2 ** 40):  # the lookup and the factorised path
            _assert_grouped_like_stable_sort(ids)
    y = rng.integers(0, 4, n_rows).astype(float)
    s = rng.integers(0, 6, n_rows).astype(float)  # ties: input order matters for "stable"
    regroup = np.argsort(codes, kind="stable")
    for call in ("ndcg@10", "map@4 pessimistic", "ndcg@4 stable"):
        fn = _SHUFFLED_CALLS[call]
        np.testing.assert_allclose(fn(y, s, codes), fn(y[regroup], s[regroup], codes[regroup]),
                                   rtol=1e-12, atol=1e-12)


_SHUFFLED_CALLS = {
    "ndcg@10": lambda y, s, q: skrank.ndcg_score(y, s, qid=q, k=10),
    "ndcg_exp@5 (grade counts)": lambda y, s, q: skrank.ndcg_score(y, s, qid=q, k=5,
                                                                  gain="exponential"),
    "ndcg@3 custom gain (all labels)": lambda y, s, q: skrank.ndcg_score(
        y, s, qid=q, k=3, gain=lambda g: np.sqrt(g)),
    "precision@5": lambda y, s, q: skrank.precision_at_k_score(y, s, qid=q, k=5),
    "recall@5 (R)": lambda y, s, q: skrank.recall_at_k_score(y, s, qid=q, k=5, threshold=2),
    "hit_rate@2": lambda y, s, q: skrank.hit_rate_score(y, s, qid=q, k=2),
    "rbp@5 trec gain": lambda y, s, q: skrank.rbp_score(y, s, qid=q, k=5, gain="trec"),
    "mrr@5": lambda y, s, q: skrank.mrr_score(y, s, qid=q, k=5),
    "map@4 pessimistic": lambda y, s, q: skrank.map_score(y, s, qid=q, k=4, ties="pessimistic"),
    "ndcg@4 stable": lambda y, s, q: skrank.ndcg_score(y, s, qid=q, k=4, ties="stable"),
    "evaluate": lambda y, s, q: skrank.evaluate(y, s, qid=q, metrics=["ndcg@5", "precision@3"]).mean,
}


@pytest.mark.parametrize("labels", ["graded", "fractional"])
@pytest.mark.parametrize("call", list(_SHUFFLED_CALLS))
def test_top_k_metrics_on_shuffled_rows_equal_the_grouped_rows(call, labels):
    # Shuffled rows are ranked from the gathered scores alone; labels are gathered only
    # for the kept rows and, lazily, for counts over every row: same values as grouped.
    rng = np.random.default_rng(13)
    sizes = rng.integers(1, 60, 200)
    qid = np.repeat(rng.permutation(5000)[:sizes.size] - 100, sizes)
    qid = qid[np.argsort(qid, kind="stable")]
    y = rng.integers(0, 5, qid.size).astype(float)
    if labels == "fractional":
        y = y * 0.75
    s = rng.integers(0, 8, qid.size).astype(float)
    perm = rng.permutation(qid.size)
    # Stable ties follow input order, so the grouped reference keeps the shuffled order
    # within each query.
    regroup = perm[np.argsort(qid[perm], kind="stable")]
    fn = _SHUFFLED_CALLS[call]
    got, want = fn(y[perm], s[perm], qid[perm]), fn(y[regroup], s[regroup], qid[regroup])
    if isinstance(got, dict):
        assert got.keys() == want.keys()
        got, want = list(got.values()), list(want.values())
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_first_relevant_and_per_query_cutoffs_on_a_full_ranking_equal_each_metric_alone():
    # MRR (first relevant row found on the running count of relevant rows), R-precision
    # (a cutoff per query) and the other cutoff metrics read a full ranking (MAP in the
    # call) only down to their cutoff; each must equal its own depth-limited call.
    rng = np.random.default_rng(9)
    sizes = rng.integers(1, 60, 200)
    qid = np.repeat(np.arange(sizes.size), sizes)
    y = rng.integers(0, 5, qid.size).astype(float)
    y[qid % 7 == 0] = 0.0  # queries without a relevant document
    names = {"mrr": ("mrr", {}), "mrr@3": ("mrr", {"k": 3}), "r_precision": ("r_precision", {}),
             "recall@4": ("recall", {"k": 4}), "hit_rate@3": ("hit_rate", {"k": 3}),
             "mrr@1": ("mrr", {"k": 1})}
    for levels in (2, 5, 40):
        s = rng.integers(0, levels, qid.size).astype(float)
        got = skrank.evaluate(y, s, qid=qid, metrics=["map", *names])
        for name, (metric, params) in names.items():
            want = skrank.per_query_scores(metric, y, s, qid=qid, **params)
            np.testing.assert_allclose(got.per_query[name], want.score, rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda ids: ids,                                    # <U: runs found on integer words
    lambda ids: ids.astype("S"),
    lambda ids: np.char.add(ids, "-long-suffix-01"),    # several words per id
    lambda ids: ids.astype(object),                     # object str: one type check per run
    lambda ids: np.array([int(i[1:]) for i in ids], dtype=object),
])
def test_grouped_string_and_object_ids_found_from_their_runs(make):
    # Ids already grouped and sorted are split into runs without converting or sorting
    # every id; grouped-but-unsorted and interleaved ids must still come out as
    # np.unique and the stable sort say.
    rng = np.random.default_rng(14)
    sizes = rng.integers(1, 30, 400)
    ids = np.char.add("q", np.char.zfill(np.arange(sizes.size).astype(str), 4))
    sorted_rows = make(np.repeat(ids, sizes))
    blocks = np.repeat(make(ids[rng.permutation(ids.size)]), sizes)  # grouped, unsorted
    interleaved = sorted_rows[rng.permutation(sorted_rows.size)]
    # Sorted over the first thousands of rows (what is probed first), not after them.
    late_disorder = np.concatenate([sorted_rows, sorted_rows[:3]])
    assert sorted_rows.size > C._ROW_PROBE
    for qid in (sorted_rows, blocks, interleaved, late_disorder, sorted_rows[:1]):
        _assert_grouped_like_stable_sort(qid)
        codes, uniques, grouped = C.factorize_qid("f", qid)
        want_uniques, want_codes = np.unique(qid, return_inverse=True)
        np.testing.assert_array_equal(uniques, want_uniques)
        np.testing.assert_array_equal(codes, want_codes.reshape(-1))
        assert grouped == bool(np.all(want_codes[1:] >= want_codes[:-1]))


def test_grouped_object_ids_mixing_equal_numbers_or_missing_ids():
    # 1, True and 1.0 are one id for np.unique as for the run split; a missing id
    # never equals its neighbours and keeps its error.
    qid = np.array([1, 1, True, 2, 2.0, 3], dtype=object)
    qids, offsets, order = GR.group_queries("f", qid)
    assert qids.tolist() == [1, 2, 3] and offsets.tolist() == [0, 3, 5, 6] and order is None
    for missing in (None, float("nan")):
        with pytest.raises(ValueError, match="qid must not contain missing ids"):
            GR.group_queries("f", np.array(["a", "a", missing, "b"], dtype=object))


@pytest.mark.parametrize("make", [
    lambda rng, n: np.char.add("q", np.char.zfill(rng.integers(0, 500, n).astype(str), 5)),
    lambda rng, n: np.array(["", "a", "ab", "b", "b\u0100", "\U0001F600"])[rng.integers(0, 6, n)],
    lambda rng, n: np.array([b"x", b"x1", b"x\x001", b"y", b""])[rng.integers(0, 5, n)],
    lambda rng, n: rng.integers(0, 2 ** 62, n).astype(str),   # too many combinations: hashed
])
def test_shuffled_string_ids_keyed_by_their_characters(make):
    # Strings in random order are grouped through integer keys built from each
    # position's characters (a mixed-radix number), when those span a small range.
    rng = np.random.default_rng(16)
    qid = make(rng, 3000)
    keys = KEYS._string_character_keys(qid)
    if keys is not None:  # the keys order the rows as the strings do
        _, inverse = np.unique(qid, return_inverse=True)
        np.testing.assert_array_equal(np.argsort(keys, kind="stable"),
                                      np.argsort(inverse.reshape(-1), kind="stable"))
    _assert_grouped_like_stable_sort(qid)


@pytest.mark.parametrize("ids, numbered", [
    (["q07", "q10", "q03", "q99"], False),          # digits: each position's range is its base
    (["b1", "a9", "b\u00ff", "a1"], False),
    (["\U0001F600a", "a\U0001F600", "aa", "\U0001F600\U0001F600"], True),  # ranges too wide
    ([b"x\xff", b"\x00x", b"xx", b"\xff\x00"], False),
])
def test_character_keys_direct_or_numbered(ids, numbered, monkeypatch):
    # Keys are each position's character minus its smallest (one matrix-vector product)
    # unless those ranges multiply past the limit: then the characters found are numbered.
    calls = []
    original = KEYS._numbered_character_keys
    monkeypatch.setattr(KEYS, "_numbered_character_keys",
                        lambda *a: calls.append(1) or original(*a))
    rng = np.random.default_rng(3)
    qid = np.array(ids)[rng.integers(0, len(ids), 1000)]
    keys = KEYS._string_character_keys(qid)
    assert keys is not None and bool(calls) == numbered
    _, inverse = np.unique(qid, return_inverse=True)
    # Equal strings, equal keys; the keys' order is the strings' order.
    np.testing.assert_array_equal(np.unique(keys, return_inverse=True)[1].reshape(-1),
                                  inverse.reshape(-1))
    _assert_grouped_like_stable_sort(qid)


def test_character_keys_over_many_rows_and_short_tails():
    # The per-position minimum and maximum are taken on blocks of 256 rows laid side by
    # side, the rows left over apart: the extremes may sit in either part.
    for n in (1, 255, 256, 257, 1000):
        qid = np.array(["m5"] * n)
        qid[-1], qid[0] = "z9", "a0"
        keys = KEYS._string_character_keys(qid)
        if n > 2:
            assert keys[0] < keys[n // 2] < keys[-1]
        _assert_grouped_like_stable_sort(qid)


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, float, bool, "<U3", "S2", object, "M8[s]"])
def test_no_rows_are_no_queries(dtype):
    # The public functions reject empty input first; the grouping itself still answers
    # zero queries (np.unique's answer), not one empty query or an IndexError.
    qid = np.array([], dtype=dtype)
    _assert_like_unique(qid)
    qids, offsets, _ = GR.group_queries("f", qid)
    assert qids.shape == (0,) and qids.dtype == qid.dtype
    np.testing.assert_array_equal(offsets, [0])


@pytest.mark.parametrize("values", [
    [0.0, -0.0, 1.0, 2.0, 0.5, 3.0],   # fractions, -0.0: the segmented stable sort
    [0.0, 1.0, 2.0, 3.0, 4.0],         # integer grades: counted per group
    [0.0, 1.0, 64.0],                  # the largest counted grade
    [0.0, 65.0, 3.0],                  # beyond it: sorted
])
@pytest.mark.parametrize("worst_first", [True, False])
def test_tie_groups_ordered_by_label_like_a_stable_sort_per_group(worst_first, values):
    # Pessimistic/optimistic ties: each tie group's labels sorted on their own (one
    # stable sort per group, in Python, as the oracle); groups of 2 to 300 rows span
    # several size blocks; 0.0 and -0.0 compare equal and must keep their order (bits
    # compared); rows outside tie groups are untouched.
    rng = np.random.default_rng(22)
    sizes = np.concatenate([rng.integers(1, 6, 400), rng.integers(6, 300, 20), [1, 2]])
    rng.shuffle(sizes)
    labels = rng.choice(values, sizes.sum())
    same = np.ones(labels.size - 1, dtype=bool)
    same[np.cumsum(sizes)[:-1] - 1] = False  # the last row of each group
    want, start = [], 0
    for size in sizes:
        group = labels[start:start + size].tolist()
        # Python's sort is stable: equal labels (0.0 and -0.0 too) keep their order.
        want += sorted(group) if worst_first else sorted(group, key=lambda v: -v)
        start += size
    got = labels.copy()
    R._order_ties_by_label(got, same, worst_first=worst_first)
    np.testing.assert_array_equal(got.view(np.uint64), np.array(want).view(np.uint64))


@pytest.mark.parametrize("dtype", ["S3", "U3", np.int64, np.uint8, np.float64, bool, object,
                                   "datetime64[s]"])
def test_empty_ids_have_no_query(dtype):
    codes, uniques, grouped = C.factorize_qid("f", np.zeros(0, dtype=dtype))
    assert codes.shape == (0,) and uniques.shape == (0,) and grouped
    assert uniques.dtype == np.dtype(dtype)
