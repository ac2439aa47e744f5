"""What skrank.fuse keeps on a Run (skrank/io/_run_index.py): the codes, stretches and
positions of a Run that skrank built itself, which must give the same fused runs, bit
for bit, as a Run of the caller's arrays (whose index is computed on each fuse), and
must never go stale or touch the caller's arrays."""

import copy
import dataclasses
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skrank
from skrank.fusion import METHODS
from skrank.io import Run, read_run
from skrank.io._run_index import RunIndex, kept_index, run_index

UNSUPERVISED = [m.name for m in METHODS if not m.trained]
PARAMS = {"gmnz": {"gamma": 0.7}, "rbc": {"phi": 0.6}, "logn_isr": {"sigma": 0.3}, "rrf": {"k": 5}}


def random_run(rng, n_queries=5, pool=8, ties=True):
    qid, docno, score = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(1, pool + 1))
        for d in rng.permutation(pool)[:n]:
            qid.append(f"q{q}")
            docno.append(f"d{d}")
            score.append(float(rng.integers(0, 3)) if ties else float(rng.random()))
    return np.array(qid), np.array(docno), np.array(score)


def as_mapping(qid, docno, score):
    out = {}
    for q, d, s in zip(qid.tolist(), docno.tolist(), score.tolist()):
        out.setdefault(q, {})[d] = s
    return out


def trec_bytes(qid, docno, score):
    return "".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, d, s in zip(qid.tolist(), docno.tolist(), score.tolist())).encode()


def same_run(a, b):
    for c in ("qid", "docno", "rank", "tag"):
        assert getattr(a, c).tolist() == getattr(b, c).tolist(), c
    assert a.score.tobytes() == b.score.tobytes()  # bit for bit


def brute_positions(qid, score):
    """Each row's 0-based position among its query's rows by score, ties in row order."""
    pos = np.zeros(len(qid), dtype=np.int64)
    for i in range(len(qid)):
        mine = [j for j in range(len(qid)) if qid[j] == qid[i]]
        pos[i] = sum(1 for j in mine if score[j] > score[i] or (score[j] == score[i] and j < i))
    return pos


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shuffle=st.booleans(), twice=st.booleans())
def test_index_against_brute_force(seed, shuffle, twice):
    rng = np.random.default_rng(seed)
    qid, docno, score = random_run(rng, n_queries=int(rng.integers(1, 5)))
    if twice:  # a document repeated in its query
        qid, docno, score = (np.append(qid, qid[0]), np.append(docno, docno[0]),
                             np.append(score, 0.5))
    if shuffle:
        p = rng.permutation(len(qid))
        qid, docno, score = qid[p], docno[p], score[p]
    x = RunIndex(qid, docno, score)
    rows_q = x.q_code if x.q_len is None else np.repeat(x.q_code, x.q_len)
    assert x.q_uniques[rows_q].tolist() == qid.tolist()
    assert x.d_uniques[x.d_code].tolist() == docno.tolist()
    assert x.q_uniques.tolist() == sorted(set(qid.tolist()))
    assert x.pos.tolist() == brute_positions(qid, score).tolist()
    pairs = list(zip(qid.tolist(), score.tolist()))
    assert x.tied == (len(set(pairs)) < len(pairs))
    assert x.twice == twice
    if not shuffle and not twice:
        assert x.q_len is not None  # each query one stretch


def test_constructors_keep_an_index_of_read_only_columns(tmp_path):
    qid, docno, score = random_run(np.random.default_rng(0))
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": qid, "doc_id": docno, "score": score})
    frame_score = frame["score"].to_numpy(copy=True)
    path = tmp_path / "run.txt"
    path.write_bytes(trec_bytes(qid, docno, score))
    kept = {"from_dict": Run.from_dict(as_mapping(qid, docno, score)),
            "from_frame": Run.from_frame(frame), "read_run": read_run(path),
            "fuse": skrank.fuse([as_mapping(qid, docno, score)], method="sum")}
    for name, run in kept.items():
        assert run_index(run) is kept_index(run), name
        # kept beside the Run: its attributes, pickles and copies are as they were
        assert set(vars(run)) == set(Run._COLUMNS), name
        assert kept_index(pickle.loads(pickle.dumps(run))) is None
        assert kept_index(copy.copy(run)) is None
        for c in run._COLUMNS:
            with pytest.raises(ValueError, match="read-only"):
                getattr(run, c)[:1] = getattr(run, c)[:1]
    # the caller's frame is not touched: its columns stay writeable and equal
    frame.loc[0, "score"] = 99.0
    assert frame["score"].iloc[0] == 99.0
    assert kept["from_frame"].score[0] == frame_score[0]
    # a Run of the caller's arrays keeps nothing and copies nothing
    mine = [qid.copy(), docno.copy(), score.copy()]
    plain = Run(qid=mine[0], docno=mine[1], score=mine[2])
    assert kept_index(plain) is None
    assert plain.score is mine[2] and mine[2].flags.writeable
    skrank.fuse([plain, plain], method="rrf")
    assert kept_index(plain) is None and mine[2].flags.writeable


@pytest.mark.parametrize("method", UNSUPERVISED)
def test_kept_index_gives_the_same_fused_run_bit_for_bit(method):
    rng = np.random.default_rng(3)
    cols = [random_run(rng, ties=bool(i % 2)) for i in range(3)]
    kept = [Run.from_dict(as_mapping(*c)) for c in cols]
    plain = [Run(qid=c[0].copy(), docno=c[1].copy(), score=c[2].copy()) for c in cols]
    m = next(x for x in METHODS if x.name == method)
    norms = ["default"] if method == "dbsf" else [None, "min-max", "zmuv", "sum", "rank",
                                                   "borda", "min-max-inverted"]
    for norm in norms:
        for depth in (None, 3):
            for ties in ("average", "stable"):
                kw = dict(method=method, norm=norm, depth=depth, ties=ties,
                          weights=[0.5, 0.3, 0.2] if m.weighted else None,
                          **PARAMS.get(method, {}))
                same_run(skrank.fuse(kept, **kw), skrank.fuse(plain, **kw))


def test_fused_run_fused_again_reads_its_kept_index():
    rng = np.random.default_rng(5)
    runs = [as_mapping(*random_run(rng)) for _ in range(2)]
    fused = skrank.fuse(runs, method="rrf")
    fused_ties = skrank.fuse(runs, method="sum", norm=None)  # tied sums of integers
    for f in (fused, fused_ties):
        plain = Run(qid=f.qid.copy(), docno=f.docno.copy(), score=f.score.copy())
        assert run_index(f) is kept_index(f)
        assert kept_index(f).pos.tolist() == (f.rank - 1).tolist()
        for method in ("rrf", "wsum", "bordafuse", "condorcet"):
            same_run(skrank.fuse([f, runs[0]], method=method),
                     skrank.fuse([plain, runs[0]], method=method))


def test_index_never_goes_stale():
    qid, docno, score = random_run(np.random.default_rng(2), ties=False)
    run = Run.from_dict(as_mapping(qid, docno, score))
    other = as_mapping(*random_run(np.random.default_rng(4), ties=False))
    # a new Run with other scores (dataclasses.replace) computes its own index
    flipped = dataclasses.replace(run, score=-run.score, rank=None)
    expected = skrank.fuse([Run(qid=run.qid.copy(), docno=run.docno.copy(),
                                score=-run.score), other], method="rrf")
    same_run(skrank.fuse([flipped, other], method="rrf"), expected)
    # a pickled or deep-copied Run has writeable columns again: its index is not trusted
    for clone in (pickle.loads(pickle.dumps(run)), copy.deepcopy(run)):
        clone.score[:] = -clone.score
        same_run(skrank.fuse([clone, other], method="rrf"), expected)
    # columns made writeable again are not trusted either
    scores = run.score
    scores.flags.writeable = True
    scores[:] = -scores
    same_run(skrank.fuse([run, other], method="rrf"), expected)


def test_duplicates_are_found_through_a_kept_index():
    pd = pytest.importorskip("pandas")
    run = Run.from_frame(pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "a"],
                                       "score": [2.0, 1.0, 0.5]}))
    assert kept_index(run).twice
    with pytest.raises(ValueError, match="runs\\[0\\] must hold each document once per query. "
                                         "Got document 'a' twice for query 'q1'"):
        skrank.fuse([run, {"q1": {"a": 1.0}}], method="rrf")


@pytest.mark.parametrize("seed", range(5))
def test_merged_pair_codes_equal_the_factoriser(seed):
    """Sparse (query, document) keys of Runs that keep their index are numbered by a
    merge of each run's keys in its kept order: the same codes and keys as the
    factoriser's, and the same fused run."""
    from skrank._fusion import merged_pair_codes, pair_codes
    from skrank._fusion_rows import _Prepared

    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(int(rng.integers(1, 4))):   # few documents a query from a large pool
        qid = np.repeat([f"q{q}" for q in range(30)], 20)
        docno = np.array([f"d{d}" for q in range(30)
                          for d in rng.choice(100_000, 20, replace=False)])
        runs.append((qid, docno, rng.random(qid.shape[0])))
    kept = [Run.from_dict(as_mapping(*r)) for r in runs]
    plain = [Run(qid=q.copy(), docno=d.copy(), score=s.copy()) for q, d, s in runs]
    prepared = _Prepared("fuse", [(str(i), i, r) for i, r in enumerate(kept)])
    sizes = [len(r) for r in kept]
    key = prepared.query.astype(np.int64) * prepared.nd + np.concatenate(
        [np.searchsorted(prepared.ud, r.docno) for r in kept])
    expected = pair_codes(key, 10**12, sizes, check=False)   # the factoriser's route
    got = merged_pair_codes(key, sizes, [run_index(r).pair_order for r in kept])
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert prepared.nq * prepared.nd > 4 * len(key) + 1024   # the merged route is taken
    for method in ("rrf", "wsum", "med"):
        same_run(skrank.fuse(kept, method=method), skrank.fuse(plain, method=method))
