"""Metrics, ``per_query_scores``, ``evaluate`` and the scorers on array-API arrays.

The oracle is skrank's own NumPy path (itself checked against the slow reference
implementations, scikit-learn, trec_eval and pytrec_eval elsewhere): the device
path must give the same per-query values to 1e-12 in float64 and 1e-6 in
float32, for every metric, option and tie policy, on random ragged queries with
many ties.  Two namespaces run on this CPU-only CI: array-api-strict (which
refuses anything outside the standard; its arrays live on a second, fake device
``Device("device1")``, so that an array moved to the default device or to NumPy
on the way fails) and PyTorch CPU tensors (the adapter's native primitives).
On a machine with a CUDA GPU, the same tests also run on CUDA tensors and, when
CuPy is installed, on CuPy arrays (``-k "torch_cuda or cupy"`` selects them);
CI has no GPU, so there they are simply not collected.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sklearn

import skrank

try:
    from tests.conftest import SPECS, make_queries, param_grid, seed_of, spec_ties, valid_params
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import SPECS, make_queries, param_grid, seed_of, spec_ties, valid_params

xps = pytest.importorskip("array_api_strict")
torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

STRICT_DEVICE = xps.Device("device1")


def _floats_as(values, dtype):
    """``values`` as a NumPy array, its floats cast to ``dtype`` when one is given."""
    values = np.asarray(values)
    if dtype is not None and values.dtype.kind == "f":
        values = values.astype(dtype)
    return values


class Strict:
    name = "array_api_strict"

    @staticmethod
    def put(values, dtype=None):
        return xps.asarray(_floats_as(values, dtype), device=STRICT_DEVICE)

    @staticmethod
    def get(values):
        return np.asarray(xps.asarray(values, device=xps.Device("CPU_DEVICE")))

    @staticmethod
    def is_own(values):
        return type(values).__module__.startswith("array_api_strict") \
            and values.device == STRICT_DEVICE

    float32 = xps.float32


class Torch:
    name = "torch"
    device = "cpu"

    @classmethod
    def put(cls, values, dtype=None):
        return torch.asarray(_floats_as(values, dtype), device=cls.device)

    @staticmethod
    def get(values):
        return values.cpu().numpy()

    @classmethod
    def is_own(cls, values):
        return isinstance(values, torch.Tensor) and values.device.type == cls.device

    float32 = torch.float32


class TorchCuda(Torch):
    name = "torch_cuda"
    device = "cuda"


def _cupy():
    """CuPy when it is installed and sees a GPU, else None."""
    try:
        import cupy

        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # not installed, or no driver / device
        return None


cupy = _cupy()


class CuPy:
    name = "cupy"

    @staticmethod
    def put(values, dtype=None):
        return cupy.asarray(_floats_as(values, dtype))

    @staticmethod
    def get(values):
        return cupy.asnumpy(values)

    @staticmethod
    def is_own(values):
        return isinstance(values, cupy.ndarray)

    float32 = np.float32


# array-api-strict's releases that still run on NumPy 1.x mishandle devices (cumulative_sum
# puts its leading zero on the default device; to_device calls NumPy 2's asarray(copy=)):
# on NumPy 1.x (CI's oldest-versions run) PyTorch alone covers the device path.
sklearn_version = tuple(int(part) for part in sklearn.__version__.split(".")[:2])
STRICT_RUNS_HERE = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
needs_working_strict = pytest.mark.skipif(
    not STRICT_RUNS_HERE, reason="array-api-strict is unreliable on NumPy 1.x; PyTorch covers it")

NAMESPACES = [pytest.param(Strict, id="strict", marks=needs_working_strict),
              pytest.param(Torch, id="torch")]
# GPU namespaces, only where there is a GPU (never on CI).
if torch.cuda.is_available():
    NAMESPACES.append(pytest.param(TorchCuda, id="torch_cuda"))
if cupy is not None:
    NAMESPACES.append(pytest.param(CuPy, id="cupy"))


def _device_gain(labels):
    """np.sqrt written with operators, so that device labels stay in their namespace."""
    return labels ** 0.5


def _params(params):
    """The grid's options, its NumPy-only gain callable swapped for one that is generic."""
    return {name: (_device_gain if value is np.sqrt else value) for name, value in params.items()}


def _data(spec, ties, *, qid_kind="int", unretrieved=0.2):
    rng = np.random.default_rng(seed_of("array_api", spec.name, ties, qid_kind))
    return make_queries(rng, n_queries=9, max_size=9, n_scores=3, qid_kind=qid_kind,
                        unretrieved=unretrieved)


def _same_call(ns, dtype, tol, spec, params, y_true, y_score, qid, retrieved, *, device_qid):
    """Per-query values and mean of the NumPy path and of the device path; compares them."""
    host_scores = y_score.astype(dtype).astype(np.float64)  # what float32 scores hold
    expected_error = None
    try:
        expected = skrank.per_query_scores(spec.name, y_true, host_scores, qid=qid,
                                           retrieved=retrieved, **_params(params))
    except ValueError as exc:  # no_relevant="raise" with a query without relevant documents
        expected_error = str(exc)
    args = (ns.put(y_true, dtype), ns.put(y_score, dtype))
    kwargs = dict(qid=ns.put(qid) if device_qid else qid,
                  retrieved=None if retrieved is None else ns.put(retrieved))
    if expected_error is not None:
        with pytest.raises(ValueError) as info:
            skrank.per_query_scores(spec.name, *args, **kwargs, **_params(params))
        assert str(info.value) == expected_error
        return
    got = skrank.per_query_scores(spec.name, *args, **kwargs, **_params(params))
    assert ns.is_own(got.score), type(got.score)
    assert (got.score.dtype == ns.float32) == (dtype == np.float32)
    got_qid = ns.get(got.qid) if device_qid else got.qid
    assert ns.is_own(got.qid) if device_qid else isinstance(got.qid, np.ndarray)
    np.testing.assert_array_equal(got_qid, expected.qid)
    np.testing.assert_allclose(ns.get(got.score), expected.score, rtol=tol, atol=tol)
    mean = spec.function(*args, **kwargs, **_params(params))
    assert type(mean) is float
    expected_mean = spec.function(y_true, host_scores, qid=qid, retrieved=retrieved,
                                  **_params(params)) if expected.score.size else np.nan
    np.testing.assert_allclose(mean, expected_mean, rtol=tol, atol=tol)


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize(("spec", "ties"), spec_ties())
def test_every_option_matches_numpy_float64(ns, spec, ties):
    """Every option combination of the common grid, device query ids, unretrieved rows."""
    y_true, y_score, qid, retrieved = _data(spec, ties)
    for params in param_grid(spec):
        params = valid_params(spec, y_true, ties=ties, **params)
        _same_call(ns, np.float64, 1e-12, spec, params, y_true, y_score, qid, retrieved,
                   device_qid=True)


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize(("dtype", "tol", "qid_kind"), [
    pytest.param(np.float32, 1e-6, "int", id="float32-device_ids"),
    pytest.param(np.float64, 1e-12, "str", id="float64-host_string_ids")])
@pytest.mark.parametrize(("spec", "ties"), spec_ties())
def test_matches_numpy_per_dtype_and_host_ids(ns, dtype, tol, qid_kind, spec, ties):
    """float32 with device query ids; float64 with string ids factorised on the host."""
    y_true, y_score, qid, retrieved = _data(spec, ties, qid_kind=qid_kind)
    y_score = np.where(np.isnan(y_score), y_score, y_score + np.float32(0.25))
    for k in ([None, 3] if spec.k == "optional" else [3] if spec.k == "required" else [None]):
        params = valid_params(spec, y_true, ties=ties, **({} if spec.k == "none" else {"k": k}))
        _same_call(ns, dtype, tol, spec, params, y_true, y_score, qid, retrieved,
                   device_qid=qid_kind == "int")


def _large_ties():
    """Long queries made of long tie groups: the closed forms' binomials and sums at size."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(50, 400, size=12)
    qid = np.repeat(np.arange(12), sizes)
    y_true = rng.integers(0, 3, qid.shape[0]).astype(float)
    y_score = rng.integers(0, 4, qid.shape[0]).astype(float)
    return y_true, y_score, qid


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("spec", [s for s in SPECS if "average" in s.ties], ids=lambda s: s.name)
def test_long_tie_groups_match_numpy(ns, spec):
    y_true, y_score, qid = _large_ties()
    for k in ([None, 10, 120] if spec.k != "none" else [None]):
        params = valid_params(spec, y_true, ties="average", **({"k": k} if k else {}))
        if spec.k == "required" and k is None:
            continue
        _same_call(ns, np.float64, 1e-12, spec, params, y_true, y_score, qid, None,
                   device_qid=True)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_two_d_form_and_exclude_match_numpy(ns):
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 3, (6, 9)).astype(float)
    y_score = rng.integers(0, 4, (6, 9)).astype(float)
    exclude = rng.random((6, 9)) < 0.3
    exclude[4] = True  # a user with every item excluded still counts as a query
    for spec in SPECS:
        params = valid_params(spec, y_true, **({"k": 4} if spec.k != "none" else {}))
        for mask in (None, exclude):
            expected = skrank.per_query_scores(spec.name, y_true, y_score, exclude=mask,
                                               **params)
            for device_mask in ([None] if mask is None else [ns.put(mask), mask]):
                got = skrank.per_query_scores(spec.name, ns.put(y_true), ns.put(y_score),
                                              exclude=device_mask, **params)
                assert ns.is_own(got.score) and ns.is_own(got.qid)
                np.testing.assert_array_equal(ns.get(got.qid), expected.qid)
                np.testing.assert_allclose(ns.get(got.score), expected.score, rtol=1e-12,
                                           atol=1e-12)


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("device_weights", [True, False])
def test_sample_weight_matches_numpy(ns, device_weights):
    rng = np.random.default_rng(5)
    y_true, y_score, qid, retrieved = make_queries(rng, n_queries=10, max_size=8,
                                                   unretrieved=0.1)
    codes = np.unique(qid, return_inverse=True)[1]
    weight = rng.random(10)[codes]
    put = ns.put if device_weights else (lambda v: v)
    for no_relevant in ("zero", "skip"):
        for name in ("ndcg", "map", "mrr"):
            expected = skrank.METRICS[name].function(
                y_true, y_score, qid=qid, retrieved=retrieved, sample_weight=weight,
                no_relevant=no_relevant)
            got = skrank.METRICS[name].function(
                ns.put(y_true), ns.put(y_score), qid=ns.put(qid), retrieved=ns.put(retrieved),
                sample_weight=put(weight), no_relevant=no_relevant)
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # Weights must be constant within a query: the same error as the NumPy path's.
    bad = weight.copy()
    bad[np.flatnonzero(codes == codes[0])[-1]] += 1.0
    if np.sum(codes == codes[0]) > 1:
        with pytest.raises(ValueError) as host:
            skrank.ndcg_score(y_true, y_score, qid=qid, retrieved=retrieved, sample_weight=bad)
        with pytest.raises(ValueError) as device:
            skrank.ndcg_score(ns.put(y_true), ns.put(y_score), qid=ns.put(qid),
                              retrieved=ns.put(retrieved), sample_weight=put(bad))
        assert str(device.value) == str(host.value)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_evaluate_matches_numpy(ns):
    rng = np.random.default_rng(11)
    y_true, y_score, qid, retrieved = make_queries(rng, n_queries=12, max_size=9,
                                                   unretrieved=0.2)
    metrics = ["ndcg@5", "ndcg_exp", "map", "map@3", "mrr", "P@3", "recall@5", "hit_rate@2",
               "r_precision", "rbp", "cg@4", "dcg"]
    for no_relevant in ("zero", "skip"):
        expected = skrank.evaluate(y_true, y_score, qid=qid, retrieved=retrieved,
                                   metrics=metrics, no_relevant=no_relevant)
        got = skrank.evaluate(ns.put(y_true), ns.put(y_score), qid=ns.put(qid),
                              retrieved=ns.put(retrieved), metrics=metrics,
                              no_relevant=no_relevant)
        assert ns.is_own(got.qid)
        np.testing.assert_array_equal(ns.get(got.qid), expected.qid)
        for label in metrics:
            assert type(got.mean[label]) is float
            assert got.mean[label] == pytest.approx(expected.mean[label], rel=1e-12, abs=1e-12)
            assert ns.is_own(got.per_query[label])
            np.testing.assert_allclose(ns.get(got.per_query[label]), expected.per_query[label],
                                       rtol=1e-12, atol=1e-12)
        for name, values in expected.counts.items():
            assert ns.is_own(got.counts[name])
            np.testing.assert_array_equal(ns.get(got.counts[name]), values)
        as_dict, expected_dict = got.to_dict(), expected.to_dict()  # host copies
        assert as_dict["qid"] == expected_dict["qid"]
        assert as_dict["counts"] == expected_dict["counts"]
        assert got.to_pandas().shape == expected.to_pandas().shape


@pytest.mark.parametrize("ns", NAMESPACES)
def test_invalid_input_gives_the_numpy_paths_error(ns):
    y_true, y_score, qid = np.array([1.0, 0.0, 2.0]), np.array([0.5, np.nan, 0.1]), [1, 1, 2]
    cases = [
        ((y_true, y_score), dict(qid=qid)),  # a NaN score
        ((y_true, y_score[:2]), dict(qid=qid)),  # lengths differ
        ((y_true, np.nan_to_num(y_score)), dict(qid=None)),  # 1-D without qid
        ((y_true * np.nan, np.nan_to_num(y_score)), dict(qid=qid)),  # NaN labels
        # (negative labels are non-relevant documents: no error, issue 25)
        ((y_true, np.nan_to_num(y_score)), dict(qid=qid, retrieved=np.array([1, 0, 1]))),
        ((y_true, np.nan_to_num(y_score)), dict(qid=np.array([1.0, np.nan, 2.0]))),
    ]
    for (labels, scores), kwargs in cases:
        with pytest.raises((ValueError, TypeError)) as host:
            skrank.ndcg_score(labels, scores, **kwargs)
        device_kwargs = {name: (ns.put(value) if isinstance(value, np.ndarray) else value)
                         for name, value in kwargs.items()}
        with pytest.raises(type(host.value)) as device:
            skrank.ndcg_score(ns.put(labels), ns.put(scores), **device_kwargs)
        assert str(device.value) == str(host.value)


def test_a_gain_callable_must_stay_in_the_namespace():
    with pytest.raises(skrank.InvalidParameterError, match="namespace"):
        skrank.ndcg_score(torch.tensor([1.0, 0.0]), torch.tensor([0.3, 0.2]),
                          qid=torch.tensor([0, 0]), gain=lambda labels: np.ones(2))


@pytest.mark.parametrize("metric", ["bpref", "infap", "judged"])
def test_judged_metrics_say_they_need_numpy(metric):
    """bpref, infAP and judged@k have no device path: a clear error, not a silent copy."""
    params = {"k": 2} if metric == "judged" else {}
    with pytest.raises(TypeError, match="NumPy arrays only"):
        skrank.per_query_scores(metric, torch.tensor([1.0, 0.0]), torch.tensor([0.2, 0.1]),
                                qid=[0, 0], judged=[True, True], **params)


@needs_working_strict
def test_mixing_namespaces_is_an_error():
    with pytest.raises(TypeError, match="[Mm]ultiple namespaces"):
        skrank.ndcg_score(torch.tensor([1.0, 0.0]), Strict.put([0.3, 0.2]), qid=[0, 0])


def test_numpy_input_never_loads_the_array_api_machinery():
    """The NumPy path stays as it was: no array-api-compat, no torch, on NumPy input."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import skrank
        skrank.evaluate(np.array([1.0, 0.0, 2.0]), np.array([0.5, 0.2, 0.1]), qid=[1, 1, 2],
                        sample_weight=[1.0, 1.0, 2.0], metrics=["ndcg@2", "map", "mrr"])
        skrank.ndcg_score([[1, 0, 2]], [[0.5, 0.2, 0.1]], exclude=[[False, True, False]])
        loaded = sorted(m for m in ("torch", "array_api_compat", "array_api_strict")
                        if m in sys.modules)
        print(loaded)
    """)
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(repo)}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(
    not STRICT_RUNS_HERE or sklearn_version < (1, 6),
    reason="scikit-learn's own array-API dispatch (Ridge.fit on tensors) fails before 1.6 / "
           "NumPy 2 with today's array-api-compat")
def test_scorers_under_array_api_dispatch():
    """scikit-learn's array-API dispatch, an estimator predicting tensors, routed tensor qid:
    the scorers score on the tensors and agree with the NumPy run of the same model."""
    code = textwrap.dedent("""
        import numpy as np, torch, sklearn, skrank
        from sklearn.linear_model import Ridge
        from sklearn.model_selection import cross_validate
        sklearn.set_config(array_api_dispatch=True, enable_metadata_routing=True)
        rng = np.random.default_rng(0)
        X = rng.random((120, 4)); y = rng.integers(0, 3, 120).astype(float)
        qid = np.repeat(np.arange(12), 10)
        X_t, y_t, qid_t = torch.asarray(X), torch.asarray(y), torch.asarray(qid)
        model = Ridge(solver="svd").fit(X_t, y_t)
        assert isinstance(model.predict(X_t), torch.Tensor)
        single = skrank.get_scorer("ndcg@5").set_score_request(qid=True)
        multi = skrank.make_ranking_scorer(["ndcg@5", "map"]).set_score_request(qid=True)
        on_tensors = [single(model, X_t, y_t, qid=qid_t), multi(model, X_t, y_t, qid=qid_t),
                      cross_validate(Ridge(solver="svd"), X_t, y_t, params={"qid": qid_t},
                                     cv=3, scoring=single)["test_score"].tolist()]
        sklearn.set_config(array_api_dispatch=False)
        model = Ridge(solver="svd").fit(X, y)
        on_numpy = [single(model, X, y, qid=qid), multi(model, X, y, qid=qid),
                    cross_validate(Ridge(solver="svd"), X, y, params={"qid": qid},
                                   cv=3, scoring=single)["test_score"].tolist()]
        assert type(on_tensors[0]) is float, type(on_tensors[0])
        np.testing.assert_allclose(on_tensors[0], on_numpy[0], rtol=1e-9)
        for label in on_numpy[1]:
            np.testing.assert_allclose(on_tensors[1][label], on_numpy[1][label], rtol=1e-9)
        np.testing.assert_allclose(on_tensors[2], on_numpy[2], rtol=1e-9)
        print("ok")
    """)
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(repo), "SCIPY_ARRAY_API": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
