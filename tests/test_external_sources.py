"""ir_datasets datasets (a local stand-in: nothing is downloaded) and Arrow tables
(pyarrow, a Hugging Face-like dataset) as qrels and runs."""

import sys
from collections import namedtuple

import numpy as np
import pandas as pd
import pytest

import skrank
from skrank.io import Qrels, Run, official_measures

pa = pytest.importorskip("pyarrow")

# ir_datasets' tuples, as ir_datasets.formats defines them (field names are what matter)
TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
GenericQrel = namedtuple("GenericQrel", "query_id doc_id relevance")
GenericScoredDoc = namedtuple("GenericScoredDoc", "query_id doc_id score")


class FakeDataset:
    """What ir_datasets.load(...) returns, for the methods the loaders call."""

    def __init__(self, qrels=(), scoreddocs=(), measures=None):
        self._qrels, self._scoreddocs, self._measures = list(qrels), list(scoreddocs), measures

    def dataset_id(self):
        return "fake/test"

    def has_qrels(self):
        return bool(self._qrels)

    def has_scoreddocs(self):
        return bool(self._scoreddocs)

    def qrels_iter(self):
        return iter(self._qrels)

    def scoreddocs_iter(self):
        return iter(self._scoreddocs)

    def documentation(self):
        return {} if self._measures is None else {"official_measures": self._measures}


def test_qrels_and_run_from_a_dataset_object():
    ds = FakeDataset(qrels=[TrecQrel("1", "d1", 2, "0"), TrecQrel("1", "d2", -1, "0"),
                            TrecQrel("2", "d1", 0, "Q0")],
                     scoreddocs=[GenericScoredDoc("1", "d1", 12.5), GenericScoredDoc("1", "d3", 3.0),
                                 GenericScoredDoc("2", "d1", 1.0)])
    q = Qrels.from_ir_datasets(ds)
    assert q.qid.tolist() == ["1", "1", "2"] and q.rel.tolist() == [2, -1, 0]   # grades kept
    r = Run.from_ir_datasets(ds)
    assert r.docno.tolist() == ["d1", "d3", "d1"] and r.score.tolist() == [12.5, 3.0, 1.0]
    res = skrank.evaluate(qrels=q, run=r, metrics=["map", "judged@2"])
    # query 1: d1 relevant at rank 1, d2 (grade -1) unjudged-in-pool -> AP 1; query 2: no relevant
    assert res.per_query["map"].tolist() == [1.0, 0.0]
    # field order differs between datasets: read by name
    q2 = Qrels.from_ir_datasets(FakeDataset(qrels=[GenericQrel("7", "x", 3)]))
    assert q2.rel.tolist() == [3]


def test_dataset_errors():
    with pytest.raises(ValueError, match="dataset must have qrels .* 'fake/test'"):
        Qrels.from_ir_datasets(FakeDataset())
    with pytest.raises(ValueError, match="dataset must have scored documents"):
        Run.from_ir_datasets(FakeDataset(qrels=[GenericQrel("1", "d", 1)]))
    Odd = namedtuple("Odd", "qid doc_id relevance")
    with pytest.raises(ValueError, match=r"must have the fields \['query_id', 'doc_id', "
                                         r"'relevance'\]. Got \['qid', 'doc_id', 'relevance'\]"):
        Qrels.from_ir_datasets(FakeDataset(qrels=[Odd("1", "d", 1)]))


def test_a_dataset_id_is_loaded_by_ir_datasets(monkeypatch):
    import types

    loaded = []
    fake = types.ModuleType("ir_datasets")
    fake.load = lambda name: loaded.append(name) or FakeDataset(qrels=[GenericQrel("1", "d", 1)])
    monkeypatch.setitem(sys.modules, "ir_datasets", fake)
    assert Qrels.from_ir_datasets("beir/scifact/test").docno.tolist() == ["d"]
    assert loaded == ["beir/scifact/test"]


def test_official_measures_are_parsed():
    ds = FakeDataset(measures=["AP(rel=2)", "nDCG@10", "P(rel=2)@10", "RR(rel=2)", "Judged@10",
                               "nDCG(dcg=exp-log2)@10", "SDCG@5"])
    got = [(m["measure"], m["metric"], m["threshold"]) for m in official_measures(ds)]
    assert got == [("AP(rel=2)", "map", 2), ("nDCG@10", "ndcg@10", None),
                   ("P(rel=2)@10", "precision@10", 2), ("RR(rel=2)", "mrr", 2),
                   ("Judged@10", "judged@10", None), ("nDCG(dcg=exp-log2)@10", None, None),
                   ("SDCG@5", None, None)]
    assert official_measures(FakeDataset()) == []


def test_arrow_tables_read_as_frames_without_pandas():
    data = {"query_id": [1, 1, 2], "doc_id": ["a", "b", "a"], "relevance": [2, 0, 1],
            "score": [0.5, 0.9, 0.1]}
    table = pa.table(data)
    frame = pd.DataFrame(data)
    q_arrow, q_pandas = Qrels.from_frame(table), Qrels.from_frame(frame)
    for name in ("qid", "docno", "rel"):
        assert getattr(q_arrow, name).tolist() == getattr(q_pandas, name).tolist()
    r_arrow = Run.from_frame(table.drop(["relevance"]))
    assert r_arrow.score.tolist() == [0.5, 0.9, 0.1]
    a = skrank.evaluate(qrels=table, run=table, metrics=["ndcg"])
    b = skrank.evaluate(qrels=frame, run=frame, metrics=["ndcg"])
    assert a.per_query["ndcg"].tolist() == b.per_query["ndcg"].tolist()
    # dictionary-encoded (categorical) ids are decoded
    encoded = table.set_column(1, "doc_id", table.column("doc_id").dictionary_encode())
    assert Qrels.from_frame(encoded).docno.tolist() == ["a", "b", "a"]
    with pytest.raises(ValueError, match="query_id"):
        Qrels.from_frame(pa.table({"query_id": [1, None], "doc_id": ["a", "b"],
                                   "relevance": [1, 1]}))


def test_a_hugging_face_dataset_goes_through_arrow():
    table = pa.table({"query-id": ["q1", "q1", "q2"], "corpus-id": ["d1", "d2", "d1"],
                      "score": [1, 0, 2]})

    class Dataset:   # datasets.Dataset in brief: rows selected by with_format("arrow")[:]
        def with_format(self, kind):
            assert kind == "arrow"
            return table.slice(0, 2)

    Dataset.__module__ = "datasets.arrow_dataset"
    q = Qrels.from_frame(Dataset(), query_id="query-id", doc_id="corpus-id", relevance="score")
    assert q.docno.tolist() == ["d1", "d2"] and q.rel.tolist() == [1, 0]
