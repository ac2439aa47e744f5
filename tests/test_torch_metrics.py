"""skrank.torch: stateful metrics for tensor training loops.

``compute()`` is checked against :func:`skrank.evaluate` on the concatenation of
the batches (and against the NumPy path and the slow oracle), ``update`` for
doing no host transfer, and the distributed gather with three CPU ``gloo``
processes (and a group of two) in one spawned run.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import skrank  # noqa: E402
from skrank.torch import RankingMetrics

try:  # works whether or not tests/ is a package
    from tests import _reference as R
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    import _reference as R

METRICS = ["ndcg@5", "map", "mrr(ties=pessimistic)", "recall(ties=optimistic)@3",
           "precision(ties=stable)@2"]


def _batches(seed, n_rows=120, n_queries=9, dtype=torch.float64):
    """Rows of ragged queries in random order, split in batches of random sizes (so
    queries cross batches); scores rounded so that ties are common."""
    rng = np.random.default_rng(seed)
    qid = rng.integers(0, n_queries, size=n_rows)
    y = rng.integers(0, 3, size=n_rows).astype(np.float64)
    y[qid == 0] = 0   # a query without a relevant document
    s = np.round(rng.normal(size=n_rows), 1)
    cuts = np.sort(rng.choice(np.arange(1, n_rows), size=6, replace=False))
    parts = zip(*(np.split(a, cuts) for a in (y, s, qid)))
    return [(torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype), torch.tensor(c))
            for a, b, c in parts], (y, s, qid)


@pytest.mark.parametrize("options", [{}, {"ties": "stable"}, {"no_relevant": "skip"},
                                     {"no_relevant": "one", "threshold": 2}])
def test_compute_equals_evaluate_on_the_concatenation(options):
    batches, (y, s, qid) = _batches(0)
    m = RankingMetrics(METRICS, **options)
    for batch in batches:
        m.update(*batch)
    got = m.compute()
    cat = [torch.cat(column) for column in zip(*batches)]
    on_torch = skrank.evaluate(*cat[:2], qid=cat[2], metrics=METRICS, **options).mean
    on_numpy = skrank.evaluate(y, s, qid=qid, metrics=METRICS, **options).mean
    for label in METRICS:
        assert got[label].dtype == torch.float64 and got[label].ndim == 0
        assert got[label].item() == on_torch[label]
        assert got[label].item() == pytest.approx(on_numpy[label], abs=1e-12)
    per_query = m.evaluation().per_query["ndcg@5"]
    assert isinstance(per_query, torch.Tensor)   # on the inputs' device


def test_against_the_oracle():
    batches, (y, s, qid) = _batches(1)
    m = RankingMetrics(["ndcg@5", "map(ties=stable)"])
    for batch in batches:
        m.update(*batch)
    got = m.compute()
    assert got["ndcg@5"].item() == pytest.approx(R.ref_mean("ndcg", y, s, qid, k=5)[0],
                                                 abs=1e-12)
    assert got["map(ties=stable)"].item() == pytest.approx(
        R.ref_mean("map", y, s, qid, ties="stable")[0], abs=1e-12)


def test_reset_and_float32():
    batches, _ = _batches(2, dtype=torch.float32)
    m = RankingMetrics("ndcg@5")
    m.update(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]), torch.tensor([7, 7]))
    m.reset()
    for batch in batches:
        m.update(*batch)
    cat = [torch.cat(column) for column in zip(*batches)]
    assert m.compute()["ndcg@5"].item() == skrank.evaluate(
        cat[0], cat[1], qid=cat[2], metrics=["ndcg@5"]).mean["ndcg@5"]


def test_errors():
    m = RankingMetrics("ndcg@5")
    with pytest.raises(ValueError, match="no row seen"):
        m.compute()
    with pytest.raises(ValueError, match="same length"):
        m.update(torch.zeros(3), torch.zeros(3), torch.zeros(2, dtype=torch.int64))
    with pytest.raises(ValueError, match="must be 1-D"):
        m.update(torch.zeros(3, 1), torch.zeros(3, 1), torch.zeros(3, dtype=torch.int64))
    with pytest.raises(TypeError, match="integer ids"):
        m.update(torch.zeros(3), torch.zeros(3), torch.zeros(3))
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        m.update([0, 1], [0.5, 0.2], [1, 1])
    m.update(torch.zeros(2), torch.zeros(2), torch.zeros(2, dtype=torch.int64))
    with pytest.raises(TypeError, match="dtypes of the first"):
        m.update(torch.zeros(2), torch.zeros(2, dtype=torch.float64),
                 torch.zeros(2, dtype=torch.int64))
    with pytest.raises(skrank.InvalidParameterError, match="ties='trec'"):
        RankingMetrics("ndcg@5", ties="trec")
    with pytest.raises(skrank.InvalidParameterError, match="ndgc"):
        RankingMetrics("ndgc@5")
    bad = RankingMetrics("ndcg@5")
    bad.update(torch.tensor([float("nan"), 1.0]), torch.zeros(2),
               torch.zeros(2, dtype=torch.int64))
    with pytest.raises(ValueError, match="finite"):   # values checked by compute
        bad.compute()


# Calls that read a tensor's values on the host (or wait for the device on a GPU).
_HOST_READS = {"item", "tolist", "numpy", "__array__", "__bool__", "__int__", "__float__",
               "__index__", "nonzero", "unique", "masked_select", "cpu", "__len__",
               "__iter__", "__format__", "__repr__"}


class Recording(torch.Tensor):
    """A tensor that records every call that reads its values on the host."""

    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", repr(func))
        if name in _HOST_READS:
            cls.calls.append(name)
        return super().__torch_function__(func, types, args, kwargs or {})


def _recording(t):
    return t.as_subclass(Recording)


def test_the_recording_tensor_sees_host_reads():
    """The detector itself: each way of reading values is seen."""
    t = _recording(torch.tensor([1.0, 2.0]))
    Recording.calls.clear()
    t[0].item()
    t.tolist()
    np.asarray(t)
    bool(t[0])
    t.nonzero()
    assert {"item", "tolist", "__array__", "__bool__", "nonzero"} <= set(Recording.calls)


@pytest.mark.parametrize("which", ["RankingMetrics", "TorchmetricsRankingMetrics"])
def test_update_reads_no_value_on_the_host(which):
    batches, _ = _batches(3)
    if which == "RankingMetrics":
        m = RankingMetrics(METRICS)
    else:
        pytest.importorskip("torchmetrics")
        from skrank.torch import TorchmetricsRankingMetrics

        m = TorchmetricsRankingMetrics(METRICS)
    recorded = [tuple(_recording(t) for t in batch) for batch in batches]
    Recording.calls.clear()
    for batch in recorded:
        m.update(*batch)
    assert Recording.calls == []
    got = m.compute()   # compute may read: it gives the values of the plain tensors
    cat = [torch.cat(column) for column in zip(*batches)]
    expected = skrank.evaluate(cat[0], cat[1], qid=cat[2], metrics=METRICS).mean
    assert {k: v.item() for k, v in got.items()} == expected


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_update_does_not_synchronise_on_cuda():   # pragma: no cover - GPU machines only
    batches, _ = _batches(4)
    m = RankingMetrics(METRICS)
    on_gpu = [tuple(t.cuda() for t in batch) for batch in batches]
    torch.cuda.set_sync_debug_mode("error")
    try:
        for batch in on_gpu:
            m.update(*batch)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert all(v.device.type == "cuda" for v in m.compute().values())


def test_torchmetrics_metric():
    pytest.importorskip("torchmetrics")
    import torchmetrics

    from skrank.torch import TorchmetricsRankingMetrics

    batches, _ = _batches(5)
    m = TorchmetricsRankingMetrics(METRICS, ties="stable")
    assert isinstance(m, torchmetrics.Metric)
    first = m(*batches[0])   # forward: the batch's own values
    assert first == {k: torch.tensor(v, dtype=torch.float64) for k, v in skrank.evaluate(
        *batches[0][:2], qid=batches[0][2], metrics=METRICS, ties="stable").mean.items()}
    for batch in batches[1:]:
        m.update(*batch)
    cat = [torch.cat(column) for column in zip(*batches)]
    expected = skrank.evaluate(cat[0], cat[1], qid=cat[2], metrics=METRICS, ties="stable").mean
    assert {k: v.item() for k, v in m.compute().items()} == expected
    m.reset()
    m.update(*batches[1])
    expected = skrank.evaluate(*batches[1][:2], qid=batches[1][2], metrics=METRICS,
                               ties="stable").mean
    assert {k: v.item() for k, v in m.compute().items()} == expected


def test_distributed_gloo_two_and_three_processes(tmp_path):
    """One spawned run of three CPU processes (the worker script checks every value on
    every process: three processes, one without rows; a group of two; torchmetrics;
    no rows anywhere).  A hang fails the test by its timeout."""
    pytest.importorskip("torchmetrics")
    worker = Path(__file__).with_name("_torch_dist_worker.py")
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [root, *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(worker), str(tmp_path / "rendezvous")],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 40),
       n_cuts=st.integers(0, 5), ties=st.sampled_from(["average", "stable", "pessimistic"]))
def test_property_any_split_in_batches_equals_evaluate(seed, n_rows, n_cuts, ties):
    """However the rows are split in batches, compute() is evaluate on their
    concatenation."""
    rng = np.random.default_rng(seed)
    y = torch.tensor(rng.integers(0, 3, size=n_rows), dtype=torch.float64)
    s = torch.tensor(rng.integers(0, 4, size=n_rows), dtype=torch.float64)
    q = torch.tensor(rng.integers(0, 4, size=n_rows))
    cuts = sorted(rng.integers(0, n_rows + 1, size=n_cuts).tolist())
    m = RankingMetrics(["ndcg@3", "map"], ties=ties)
    for part in np.split(np.arange(n_rows), cuts):
        rows = torch.as_tensor(part, dtype=torch.int64)
        m.update(y[rows], s[rows], q[rows])   # empty batches included
    expected = skrank.evaluate(y, s, qid=q, metrics=["ndcg@3", "map"], ties=ties).mean
    assert {k: v.item() for k, v in m.compute().items()} == expected
