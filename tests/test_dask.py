"""skrank.dask.evaluate on a Dask cluster gives what skrank.evaluate gives in memory.

A ``LocalCluster`` of two workers (threads of this process, to start fast; the
benchmark ``benchmarks/dask_scaling.py`` runs worker processes) reads a Parquet data set written by
the test (several files, so several input partitions), shuffles qrels and run
by query id and evaluates each partition with the engine. The oracle is the
in-memory :func:`skrank.evaluate` on the same rows as pandas DataFrames (itself
checked against trec_eval and the slow reference elsewhere): same queries, same
per-query values and counts, same means (to 1e-12), same warnings.
"""

import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from sklearn.exceptions import UndefinedMetricWarning

import skrank

try:
    from tests._cluster import local_client
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from _cluster import local_client

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")
pytest.importorskip("pyarrow")
skrank_dask = pytest.importorskip("skrank.dask")

METRICS = {"ndcg@10": "ndcg@10", "map": "map", "mrr": "mrr", "P@5": "precision@5",
           "recall@20": "recall@20", "ndcg_exp@5": ("ndcg", {"k": 5, "gain": "exponential"}),
           "map_skip": ("map", {"no_relevant": "skip"}), "err@10": "err@10",
           "r_precision": "r_precision"}


@pytest.fixture(scope="module")
def client():
    with local_client(processes=False) as client:
        yield client


def _ids(numbers, kind):
    return numbers.astype(np.int64) if kind == "int" else np.char.add("q", numbers.astype(str))


def _tables(seed, ids="int", n_queries=120):
    """Qrels and run with ragged queries (1 to ~300 documents), tied scores, graded and
    negative judgements, queries without a relevant document, queries missing from the
    run and run queries absent from the qrels. Rows shuffled."""
    rng = np.random.default_rng(seed)
    sizes = np.minimum(np.ceil(rng.lognormal(2.5, 1.0, size=n_queries)), 300).astype(int)
    qid = np.repeat(np.arange(n_queries), sizes)
    doc = np.concatenate([rng.permutation(400)[:s] for s in sizes])
    judged = rng.random(qid.size) < 0.6
    rel = rng.integers(-1, 4, size=qid.size)
    rel[np.isin(qid, np.arange(5))] = 0           # queries 0-4: no relevant document
    retrieved = rng.random(qid.size) < 0.8
    retrieved[np.isin(qid, np.arange(10, 18))] = False  # queries 10-17: not in the run
    score = np.round(rng.normal(size=qid.size), 1)      # many ties
    qrels = pd.DataFrame({"query_id": _ids(qid[judged], ids),
                          "doc_id": np.char.add("d", doc[judged].astype(str)),
                          "relevance": rel[judged]})
    extra = rng.integers(n_queries, n_queries + 6, size=20)  # run queries without qrels
    run = pd.DataFrame({"query_id": _ids(np.concatenate([qid[retrieved], extra]), ids),
                        "doc_id": np.char.add("d", np.concatenate(
                            [doc[retrieved], 1000 + np.arange(extra.size)]).astype(str)),
                        "score": np.concatenate([score[retrieved], rng.normal(size=extra.size)])})
    return (qrels.iloc[rng.permutation(len(qrels))].reset_index(drop=True),
            run.iloc[rng.permutation(len(run))].reset_index(drop=True))


def _parquet(tmp_path, frame, name, n_files):
    """Write ``frame`` as a Parquet data set of ``n_files`` files; read it back lazily."""
    folder = tmp_path / name
    dd.from_pandas(frame, npartitions=n_files, sort=False).to_parquet(folder, write_index=False)
    assert len(list(folder.glob("*.parquet"))) == n_files
    return dd.read_parquet(folder)


def _messages(caught, prefix):
    return sorted(re.sub(r"^[\w.]+: ", "", str(w.message)) for w in caught
                  if str(w.message).startswith(prefix))


def _assert_same(got, expected):
    assert isinstance(got, skrank.Evaluation)
    np.testing.assert_array_equal(got.qid, expected.qid)
    assert list(got.mean) == list(expected.mean)
    for name in expected.mean:
        np.testing.assert_allclose(got.per_query[name], expected.per_query[name],
                                   rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(got.mean[name], expected.mean[name], rtol=1e-12, atol=1e-12,
                                   err_msg=name)
    for name in expected.counts:
        np.testing.assert_array_equal(got.counts[name], expected.counts[name], err_msg=name)


@pytest.mark.parametrize("ids, missing_queries, no_relevant", [
    ("int", "skip", "zero"),
    ("str", "zero", "skip"),
    ("int in qrels, str in run", "zero", "zero"),  # 7 matches "7": hashed as strings
])
def test_parquet_on_a_cluster_matches_the_in_memory_call(client, tmp_path, ids,
                                                         missing_queries, no_relevant):
    qrels, run = _tables(len(ids), "str" if ids == "str" else "int")
    if ids not in ("int", "str"):
        run = run.assign(query_id=run["query_id"].astype(str))
    options = dict(metrics=METRICS, missing_queries=missing_queries, no_relevant=no_relevant)
    with warnings.catch_warnings(record=True) as caught_memory:
        warnings.simplefilter("always")
        expected = skrank.evaluate(qrels=qrels, run=run, **options)
    dask_qrels = _parquet(tmp_path, qrels, "qrels", 3)
    dask_run = _parquet(tmp_path, run, "run", 4)
    with warnings.catch_warnings(record=True) as caught_dask, \
            distributed.get_task_stream(client=client) as tasks:
        warnings.simplefilter("always")
        result = skrank_dask.evaluate(dask_qrels, dask_run, **options)
        got = result.compute()
    assert len(tasks.data) > 0  # the work went to the cluster
    # The shuffle put every query in exactly one output partition.
    assert result.per_query.npartitions == 4
    index = result.per_query.index.compute()
    assert index.is_unique and len(index) == expected.qid.size
    _assert_same(got, expected)
    assert result.mean == got.mean
    # The missing and unjudged queries are counted over the whole data, as in memory.
    assert _messages(caught_dask, "skrank.dask.evaluate") == _messages(caught_memory, "evaluate")
    judged = set(qrels["query_id"].astype(str))
    n_missing = len(judged - set(run["query_id"].astype(str)))
    assert n_missing >= 5
    # an explicit missing_queries is silent about them (issue 25)
    assert not any(f"{n_missing} of the {len(judged)} queries of qrels" in str(w.message)
                   for w in caught_dask)
    pd.testing.assert_frame_equal(result.to_pandas(), expected.to_pandas())
    # intervals below the per-query rows: the in-memory numbers (issue 31)
    pd.testing.assert_frame_equal(result.to_pandas(ci=0.9, method="t"),
                                  expected.to_pandas(ci=0.9, method="t"))


def test_skrank_evaluate_hands_dask_frames_to_skrank_dask(client):
    qrels, run = _tables(4, "str", n_queries=60)
    options = dict(metrics=["ndcg@10", "map", "recall@20"], missing_queries="zero")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = skrank.evaluate(qrels=qrels, run=run, **options)
        result = skrank.evaluate(qrels=dd.from_pandas(qrels, npartitions=3),
                                 run=dd.from_pandas(run, npartitions=2), **options)
    assert isinstance(result, skrank_dask.DaskEvaluation)
    assert result.per_query.npartitions == 3
    _assert_same(result.compute(), expected)


def test_means_come_from_per_query_values_not_partition_means(client):
    """Two partitions of very different sizes: the mean of partition means differs."""
    qrels = pd.DataFrame({"query_id": ["a", "b", "c", "d"], "doc_id": ["x"] * 4,
                          "relevance": [1, 1, 1, 0]})
    run = pd.DataFrame({"query_id": ["a", "b", "c", "d"], "doc_id": ["x"] * 4,
                        "score": [1.0] * 4})
    result = skrank_dask.evaluate(dd.from_pandas(qrels, npartitions=2),
                                  dd.from_pandas(run, npartitions=2), npartitions=3,
                                  metrics={"mrr": "mrr", "mrr_skip": ("mrr", {"no_relevant": "skip"}),
                                           "mrr_nan": ("mrr", {"no_relevant": "nan"})})
    # a, b, c have their relevant document at rank 1; d has none.
    assert result.mean["mrr"] == pytest.approx((1 + 1 + 1 + 0) / 4)
    assert result.mean["mrr_skip"] == pytest.approx(1.0)
    assert np.isnan(result.mean["mrr_nan"])
    table = result.to_pandas()
    assert np.isnan(table.loc["d", "mrr_skip"]) and table.loc["d", "mrr"] == 0.0


def test_every_query_skipped_warns_once_and_gives_nan(client):
    qrels = pd.DataFrame({"query_id": [1, 2], "doc_id": ["x", "y"], "relevance": [0, 0]})
    run = pd.DataFrame({"query_id": [1, 2], "doc_id": ["x", "y"], "score": [1.0, 2.0]})
    with pytest.warns(UndefinedMetricWarning, match="every query was skipped"):
        result = skrank_dask.evaluate(dd.from_pandas(qrels, npartitions=2),
                                      dd.from_pandas(run, npartitions=1),
                                      metrics=["map"], no_relevant="skip")
    assert np.isnan(result.mean["map"])


def test_missing_queries_raise_is_decided_over_the_whole_data(client):
    qrels, run = _tables(5, "int", n_queries=40)
    judged = set(qrels["query_id"])
    n_missing = len(judged - set(run["query_id"]))
    with pytest.raises(ValueError, match=rf"{n_missing} of the {len(judged)} queries of qrels "
                                         rf"have no prediction"):
        skrank_dask.evaluate(dd.from_pandas(qrels, npartitions=3),
                             dd.from_pandas(run, npartitions=3), missing_queries="raise")
    with pytest.raises(ValueError, match=r"queries of run have no ground truth"), \
            pytest.warns(UserWarning, match="queries of qrels have no prediction"):
        skrank_dask.evaluate(dd.from_pandas(qrels, npartitions=3),
                             dd.from_pandas(run, npartitions=3), unjudged_queries="raise")


def test_ignore_identical_ids_and_other_column_names(client):
    qrels = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [1, 5, 2, 6, 3],
                          "rating": [1, 1, 1, 2, 1]})
    run = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [1, 5, 6, 2, 3],
                        "pred": [0.9, 0.8, 0.7, 0.6, 0.5]})
    names = dict(query_id="user", doc_id="item", relevance="rating", score="pred")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = skrank_dask.evaluate(dd.from_pandas(qrels, npartitions=2),
                                      dd.from_pandas(run, npartitions=2), metrics=["mrr"],
                                      ignore_identical_ids=True, **names)
    # Query 3 retrieved only itself: it is missing once the identical ids are dropped.
    assert [str(w.message) for w in caught] == [
        "skrank.dask.evaluate: 1 of the 3 queries of qrels has no prediction in run ('3'); "
        "it is left out of the means (trec_eval's default without -c). Pass "
        "missing_queries='skip' to leave them out without this warning, 'zero' to count "
        "them as empty rankings (trec_eval -c) or 'raise'."]
    # 1: item 5 at rank 1 (item 1 dropped); 2: item 6 at rank 1.
    assert result.to_pandas()["mrr"].to_dict() == {"1": 1.0, "2": 1.0}
    with pytest.warns(UserWarning, match="1 of the 3 queries of qrels"):
        expected = skrank.evaluate(
            qrels=skrank.io.Qrels.from_frame(qrels, query_id="user", doc_id="item",
                                             relevance="rating"),
            run=skrank.io.Run.from_frame(run, query_id="user", doc_id="item", score="pred"),
            metrics=["mrr"], ignore_identical_ids=True)
    _assert_same(result.compute(), expected)


def test_errors():
    frame = pd.DataFrame({"query_id": [1], "doc_id": [1], "relevance": [1], "score": [1.0]})
    ddf = dd.from_pandas(frame, npartitions=1)
    with pytest.raises(TypeError, match=r"qrels must be a dask.dataframe.DataFrame\. Got "):
        skrank_dask.evaluate(frame, ddf)
    with pytest.raises(ValueError, match=r"score must name the run's score column"):
        skrank_dask.evaluate(ddf, ddf, score=None)
    with pytest.raises(ValueError, match=r"run must have a column 'points' \(score\) \(the "
                       r"shuffle by query does not keep row order.*one of \['relevance'\]"):
        skrank_dask.evaluate(ddf, ddf.drop(columns="score"), score="points")
    with pytest.raises(ValueError, match=r"ties='stable' keeps the run's row order.*ties='trec'"):
        skrank_dask.evaluate(ddf, ddf, ties="stable")
    # Missing ids: counted in one partition, named by index label (not a partition's row).
    holes = pd.DataFrame({"query_id": [1, None, 2, None], "doc_id": [1, 2, 3, 4],
                          "score": [1.0, 2.0, 3.0, 4.0]}, index=[10, 11, 12, 13])
    with pytest.raises(ValueError, match=r"run must not contain missing query ids .* Got 1 in one "
                       r"of its partitions, the first at index label 1[13]\. Drop those rows "
                       r"first, e\.g\. run\.dropna\(subset=\['query_id'\]\)"):
        skrank_dask.evaluate(ddf, dd.from_pandas(holes, npartitions=2))
    with pytest.raises(ValueError, match=r"npartitions must be a positive int"):
        skrank_dask.evaluate(ddf, ddf, npartitions=0)
    with pytest.raises(ValueError, match=r"missing_queries must be None .* or one of"):
        skrank_dask.evaluate(ddf, ddf, missing_queries="drop")
    # Metric options are checked before any work on the cluster, as in memory.
    with pytest.raises(ValueError, match=r"evaluate: k must be"):
        skrank_dask.evaluate(ddf, ddf, metrics={"bad": ("ndcg", {"k": 0})})
    with pytest.raises(ValueError, match=r"evaluate: k must be"):
        skrank.evaluate(qrels=ddf, run=ddf, metrics={"bad": ("ndcg", {"k": 0})})


def test_import_skrank_does_not_import_dask():
    code = textwrap.dedent("""
        import sys
        import pandas as pd
        import skrank
        frame = pd.DataFrame({"query_id": [1], "doc_id": [1], "relevance": [1], "score": [1.0]})
        skrank.evaluate(qrels=frame, run=frame)
        assert not any(m == "dask" or m.startswith("dask.") for m in sys.modules), "dask loaded"
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_partitions_never_touch_the_global_warning_filters(monkeypatch):
    """warnings.catch_warnings is not thread-safe: a worker thread that enters and leaves it
    while another does can leave the process's filters set to 'ignore' (so the caller's
    later warnings vanish). The partitions (threads of the default scheduler here) must
    not use it; the warnings about queries on one side only come from the caller's thread."""
    import os
    import threading

    main = threading.main_thread()
    entered = []
    real = warnings.catch_warnings

    package = os.path.dirname(skrank.__file__)

    class Watched(real):
        def __enter__(self):
            if sys._getframe(1).f_code.co_filename.startswith(package):  # skrank's own
                entered.append(threading.current_thread() is main)
            return super().__enter__()

    monkeypatch.setattr(warnings, "catch_warnings", Watched)
    qrels, run = _tables(3, "int", n_queries=40)
    before = list(warnings.filters)
    with pytest.warns(UserWarning, match="queries of qrels have no prediction in run"):
        skrank_dask.evaluate(dd.from_pandas(qrels, npartitions=3),
                             dd.from_pandas(run, npartitions=3), npartitions=4)
    assert all(entered)  # skrank entered it in the caller's thread only
    assert list(warnings.filters) == before
