"""Beyond-accuracy recommender metrics (issue 29) against formula oracles written from
microsoft/recommenders' python_evaluation and RecBole's metrics (loops over users and
pairs, dictionaries of counts: the definitions as those libraries state them).

recommenders itself is not installed: 1.2.1 pins pandas<3 (and gives wrong diversity and
serendipity values under pandas 3), and a full install pulls cornac, transformers and
notebook."""

import math
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from scipy import sparse

from skrank import beyond


def _data(seed, n_users=40, n_items=30, k=6, pad=True):
    rng = np.random.default_rng(seed)
    reco = np.array([rng.choice(n_items, k, replace=False) for _ in range(n_users)])
    if pad:
        lengths = rng.integers(0, k + 1, n_users)
        reco = np.where(np.arange(k)[None, :] < lengths[:, None], reco, -1)
    train = [(u, i) for u in range(n_users) for i in range(n_items)
             if rng.random() < 0.15 and i not in reco[u]]
    popularity = np.zeros(n_items)
    for _, i in train:
        popularity[i] += 1
    return reco, train, popularity, rng


def _lists(reco):
    return {u: [int(i) for i in row if i >= 0] for u, row in enumerate(reco)}


# --------------------------------------------------------------------------------------
# The oracles.


def ref_catalog_coverage(reco, n_items):
    return len({i for items in _lists(reco).values() for i in items}) / n_items


def ref_distributional_coverage(reco):   # recommenders
    counts = Counter(i for items in _lists(reco).values() for i in items)
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values())


def ref_shannon_entropy(reco):   # RecBole
    counts = Counter(i for items in _lists(reco).values() for i in items)
    total = sum(counts.values())
    return sum(-c / total * math.log(c / total) for c in counts.values()) / len(counts)


def ref_gini(reco, n_items):   # RecBole's formula over all n items
    counts = Counter(i for items in _lists(reco).values() for i in items)
    exposure = sorted(counts.get(i, 0) for i in range(n_items))
    total = sum(exposure)
    return sum((2 * (r + 1) - n_items - 1) * p for r, p in enumerate(exposure)) / (n_items * total)


def ref_novelty(reco, train):   # recommenders: over all recommendations
    counts = Counter(i for _, i in train)
    rows = [i for items in _lists(reco).values() for i in items]
    return sum(-math.log2(counts[i] / len(train)) for i in rows) / len(rows)


def ref_user_mean(reco, per_item):
    values = [sum(per_item(i) for i in items) / len(items)
              for items in _lists(reco).values() if items]
    return sum(values) / len(values)


def ref_cooccurrence_similarity(train):
    users_of = {}
    for u, i in train:
        users_of.setdefault(i, set()).add(u)

    def sim(a, b):
        if a not in users_of or b not in users_of:
            return 0.0   # recommenders fills a missing pair with 0
        return len(users_of[a] & users_of[b]) / math.sqrt(len(users_of[a]) * len(users_of[b]))
    return sim


def ref_ils(reco, sim):   # recommenders: mean over distinct pairs, users with >= 2 items
    values = [sum(sim(a, b) for a, b in combinations(items, 2)) / math.comb(len(items), 2)
              for items in _lists(reco).values() if len(items) >= 2]
    return sum(values) / len(values)


def ref_serendipity(reco, train, sim, relevance=None):
    history = {}
    for u, i in train:
        history.setdefault(u, []).append(i)
    values = []
    for u, items in _lists(reco).items():
        if not items or u not in history:
            continue
        each = []
        for j, i in enumerate(items):
            rel = 1.0 if relevance is None else relevance[u][j]
            each.append((1 - sum(sim(i, h) for h in history[u]) / len(history[u])) * rel)
        values.append(sum(each) / len(each))
    return sum(values) / len(values)


def ref_tail_share(reco, popularity, tail=0.1):   # RecBole's TailPercentage
    counts = {i: c for i, c in enumerate(popularity) if c > 0}
    if tail > 1:
        tail_set = {i for i, c in counts.items() if c <= tail}
    else:
        ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))
        tail_set = {i for i, _ in ordered[:max(int(len(ordered) * tail), 1)]}
    return ref_user_mean(reco, lambda i: 1.0 if i in tail_set else 0.0)


def ref_user_coverage(reco, n_users=None):
    lists = _lists(reco)
    return sum(len(v) > 0 for v in lists.values()) / (len(lists) if n_users is None else n_users)


#: The oracle of each beyond-accuracy declaration (tests/test_metrics.py checks that every
#: declaration of skrank.METRICS has one).
ORACLES = {"catalog_coverage": ref_catalog_coverage,
           "distributional_coverage": ref_distributional_coverage, "gini_index": ref_gini,
           "user_coverage": ref_user_coverage, "novelty": ref_novelty,
           "average_popularity": ref_user_mean, "long_tail_share": ref_tail_share,
           "intra_list_similarity": ref_ils, "intra_list_diversity": ref_ils,
           "serendipity": ref_serendipity}


# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_collection_metrics_equal_the_oracles(seed):
    reco, train, popularity, _ = _data(seed)
    assert beyond.catalog_coverage(reco, n_items=30) == pytest.approx(
        ref_catalog_coverage(reco, 30), abs=1e-15)
    assert beyond.distributional_coverage(reco) == pytest.approx(
        ref_distributional_coverage(reco), rel=1e-13)
    assert beyond.distributional_coverage(reco, convention="recbole") == pytest.approx(
        ref_shannon_entropy(reco), rel=1e-13)
    for n_items in (30, 45):
        assert beyond.gini_index(reco, n_items=n_items) == pytest.approx(
            ref_gini(reco, n_items), rel=1e-13)
    assert beyond.user_coverage(reco) == pytest.approx(ref_user_coverage(reco), abs=1e-15)
    assert beyond.user_coverage(reco, n_users=100) == pytest.approx(
        ref_user_coverage(reco, 100), abs=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_popularity_metrics_equal_the_oracles(seed):
    reco, train, popularity, _ = _data(seed, pad=False)
    popularity = popularity + 1   # every item seen: novelty is finite
    train = train + [(-1, i) for i in range(30)]
    # equal list lengths: the mean over users is recommenders' mean over recommendations
    assert beyond.novelty(reco, item_popularity=popularity) == pytest.approx(
        ref_novelty(reco, train), rel=1e-13)
    reco, train, popularity, _ = _data(seed)
    assert beyond.average_popularity(reco, item_popularity=popularity) == pytest.approx(
        ref_user_mean(reco, lambda i: popularity[i]), rel=1e-13)
    for tail in (0.1, 0.3, 1, 2.0):
        assert beyond.long_tail_share(reco, item_popularity=popularity, tail=tail) == \
            pytest.approx(ref_tail_share(reco, popularity, tail), rel=1e-13)


@pytest.mark.parametrize("seed", [0, 1])
def test_similarity_metrics_equal_the_oracles(seed):
    reco, train, popularity, rng = _data(seed)
    # recommenders' default similarity: item co-occurrence in training, i.e. the cosine of
    # the items' columns of the (binary) users x items interaction matrix
    users, items = np.array(train).T
    interactions = sparse.csr_matrix((np.ones(len(train)), (items, users)), shape=(30, 40))
    sim = ref_cooccurrence_similarity(train)
    assert beyond.intra_list_similarity(reco, item_features=interactions) == pytest.approx(
        ref_ils(reco, sim), rel=1e-12)
    assert beyond.intra_list_diversity(reco, item_features=interactions) == pytest.approx(
        1 - ref_ils(reco, sim), rel=1e-12)
    history = sparse.csr_matrix((np.ones(len(train)), (users, items)), shape=(40, 30))
    assert beyond.serendipity(reco, history=history, item_features=interactions) == \
        pytest.approx(ref_serendipity(reco, train, sim), rel=1e-12)
    relevance = rng.integers(0, 2, reco.shape).astype(float)
    assert beyond.serendipity(reco, history=history, item_features=interactions,
                              relevance=relevance) == pytest.approx(
        ref_serendipity(reco, train, sim, relevance), rel=1e-12)
    # dense feature vectors: cosine; a callable similarity gives the same
    features = rng.normal(size=(30, 5))
    unit = features / np.linalg.norm(features, axis=1, keepdims=True)

    def cosine(a, b):
        return float(unit[a] @ unit[b])

    def vectorised(a, b):
        return np.einsum("ij,ij->i", unit[a], unit[b])

    expected = ref_ils(reco, cosine)
    assert beyond.intra_list_similarity(reco, item_features=features) == pytest.approx(
        expected, rel=1e-12)
    assert beyond.intra_list_similarity(reco, similarity=vectorised) == pytest.approx(
        expected, rel=1e-12)
    history_lists = [[i for u, i in train if u == user] for user in range(40)]
    width = max(map(len, history_lists))
    padded = np.array([h + [-1] * (width - len(h)) for h in history_lists])
    assert beyond.serendipity(reco, history=padded, item_features=features) == pytest.approx(
        ref_serendipity(reco, train, cosine), rel=1e-12)


def test_per_user_values_and_their_mean():
    reco, train, popularity, _ = _data(4)
    res = beyond.per_user_scores("average_popularity", reco, item_popularity=popularity)
    lists = _lists(reco)
    assert res.qid.tolist() == [u for u, items in lists.items() if items]
    assert res.score.tolist() == pytest.approx(
        [np.mean(popularity[lists[u]]) for u in res.qid.tolist()])
    assert res.score.mean() == pytest.approx(
        beyond.average_popularity(reco, item_popularity=popularity))
    ils = beyond.per_user_scores("intra_list_similarity", reco,
                                 item_features=np.eye(30) + 0.5)
    assert ils.qid.tolist() == [u for u, items in lists.items() if len(items) >= 2]


def test_top_k_items_and_exclusion():
    rng = np.random.default_rng(0)
    scores = rng.random((50, 20))
    exclude = rng.random((50, 20)) < 0.3
    top = beyond.top_k_items(scores, 5, exclude=sparse.csr_matrix(exclude))
    for u in range(50):
        allowed = [i for i in np.argsort(-scores[u], kind="stable") if not exclude[u, i]]
        assert [i for i in top[u] if i >= 0] == allowed[:5]
    assert (beyond.top_k_items(scores[:, :3], 5)[:, 3:] == -1).all()


def test_a_large_catalog_stays_small_in_memory():
    import tracemalloc

    rng = np.random.default_rng(0)
    n_users, n_items, k = 20_000, 50_000, 20
    reco = rng.integers(0, n_items, (n_users, k))
    reco = np.where(np.arange(k) < 19, reco, -1)   # rows may repeat an item: make them unique
    reco = np.sort(reco, axis=1)
    reco[:, 1:][reco[:, 1:] == reco[:, :-1]] = -1
    popularity = rng.integers(1, 100, n_items)
    tracemalloc.start()
    beyond.novelty(reco, item_popularity=popularity)
    beyond.gini_index(reco, n_items=n_items)
    beyond.intra_list_similarity(reco, item_features=rng.random((n_items, 8)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200 * n_users * k   # bytes: O(users x k) (a dense users x items: 8 GB)


@pytest.mark.parametrize("call, message", [
    (lambda: beyond.novelty([[0, 5]], item_popularity=[1, 2]), "must cover every recommended"),
    (lambda: beyond.novelty([[0, 1]], item_popularity=[1, 0]), "must be > 0 for every"),
    (lambda: beyond.novelty([[0, 0]], item_popularity=[1, 2]), "must not repeat an item"),
    (lambda: beyond.catalog_coverage([[0, 7]], n_items=5), "outside the catalog"),
    (lambda: beyond.catalog_coverage([0, 1], n_items=5), "must be a 2-D array"),
    (lambda: beyond.gini_index([[0]], n_items=0), "n_items .* must be an int >= 1"),
    (lambda: beyond.intra_list_similarity([[0, 3]], item_features=np.ones((2, 2))),
     "must have a row for every recommended item"),
    (lambda: beyond.intra_list_similarity([[0, 1]], item_features=np.ones(4)),
     "item_features must be 2-D"),
    (lambda: beyond.intra_list_similarity([[0, 1]]), "exactly one of item_features"),
    (lambda: beyond.long_tail_share([[0]], item_popularity=[1.0], tail=0), "tail must be"),
    (lambda: beyond.novelty([[0, 1]], item_popularity=[1, np.nan]), "finite counts"),
    (lambda: beyond.distributional_coverage([[0]], convention="x"), "convention must be"),
])
def test_errors_name_the_argument(call, message):
    import re

    with pytest.raises(ValueError) as info:
        call()
    assert re.search(message, str(info.value)), str(info.value)


def test_no_user_to_average_is_an_error():
    with pytest.raises(ValueError, match="novelty: no user has a list"):
        beyond.novelty(np.full((2, 2), -1), item_popularity=[1, 2])
    with pytest.raises(ValueError, match="intra_list_similarity: no user"):
        beyond.intra_list_similarity([[0, -1]], item_features=np.eye(2))


def test_evaluate_equals_the_functions():
    reco, train, popularity, rng = _data(8)
    features = rng.normal(size=(30, 4))
    history = [[i for u, i in train if u == user] for user in range(40)]
    width = max(map(len, history))
    history = np.array([h + [-1] * (width - len(h)) for h in history])
    inputs = dict(n_items=30, item_popularity=popularity + 1, item_features=features,
                  history=history)
    res = beyond.evaluate(reco, **inputs)
    assert set(res.mean) == set(beyond.BEYOND_METRICS)
    for name, spec in beyond.BEYOND_METRICS.items():
        function = spec.function
        reads = [r for r in spec.inputs if r != "recommendations"]
        if name in ("intra_list_similarity", "intra_list_diversity"):
            reads = ["item_features"]   # or similarity=: optional inputs
        expected = function(reco, **{k: inputs[k] for k in reads})
        assert res.mean[name] == pytest.approx(expected, rel=1e-13), name
        if spec.aggregate == "mean":
            each = beyond.per_user_scores(name, reco, **{k: inputs[k] for k in reads})
            column = res.per_user[name]
            assert np.isnan(np.delete(column, each.qid)).all()
            np.testing.assert_array_equal(column[each.qid], each.score)
    unseen = popularity.copy()
    unseen[reco[reco >= 0][0]] = 0
    with pytest.raises(ValueError, match="must be > 0 for every recommended item"):
        beyond.evaluate(reco, metrics=["novelty"], item_popularity=unseen)
    with pytest.raises(ValueError, match="gini_index needs n_items"):
        beyond.evaluate(reco, metrics=["gini_index"])
    with pytest.raises(ValueError, match="unexpected input"):
        beyond.evaluate(reco, popularity=popularity)
