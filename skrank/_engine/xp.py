"""Array namespaces: NumPy, or PyTorch, CuPy and array-api-strict arrays on their device.

Detection (:func:`namespace`), transfers (:func:`to_numpy`) and the few
segmented operations the array-API standard lacks, written once for every
namespace; the ranking on a device is :mod:`skrank._engine.device`.
"""

import numpy as np


_NUMPY_MODULES = ("numpy", "pandas", "builtins", "scipy", "polars", "pyarrow", "dask")


def _compat():
    try:
        import array_api_compat
    except ImportError:  # scikit-learn >= 1.6 vendors it
        try:
            from sklearn.externals import array_api_compat
        except ImportError:
            raise ImportError(
                "skrank: arrays of a namespace other than NumPy need the array-api-compat "
                "package. Install it with `pip install array-api-compat`, or pass NumPy "
                "arrays."
            ) from None
    return array_api_compat


def _is_foreign(x):
    """Whether ``x`` is an array of a non-NumPy array-API namespace (cheap for NumPy)."""
    if x is None or isinstance(x, (np.ndarray, list, tuple, np.generic, int, float, str)):
        return False
    module = type(x).__module__.partition(".")[0]
    if module in _NUMPY_MODULES or module == "skrank":  # skrank's own (CodedIds): host ids
        return False
    return bool(_compat().is_array_api_obj(x))


def namespace(*arrays):
    """The array-API namespace of the non-NumPy arrays among ``arrays``, or None
    when there are none (the NumPy path).  Mixing two such namespaces is an error."""
    foreign = [x for x in arrays if _is_foreign(x)]
    if not foreign:
        return None
    compat = _compat()
    xp = compat.array_namespace(*foreign)
    return _plain_take(xp) if compat.is_torch_namespace(xp) else xp


_PLAIN_TAKE = {}


def _plain_take(xp):
    """array-api-compat's PyTorch namespace with ``take`` and ``take_along_axis`` that
    index directly: its own wrap negative indices first (``where(i < 0, i + n, i)``,
    three more kernels a call, which on a GPU cost more than the gather itself), and
    skrank's indices are never negative."""
    key = id(xp)
    if key not in _PLAIN_TAKE:
        import types

        import torch

        plain = types.ModuleType(xp.__name__)
        plain.__dict__.update(vars(xp))

        def take(x, indices, /, *, axis=None):
            if axis is None and x.ndim != 1:
                raise ValueError("axis must be specified when ndim > 1")
            return torch.index_select(x, 0 if axis is None else axis, indices)

        def take_along_axis(x, indices, /, *, axis=-1):
            return torch.take_along_dim(x, indices, dim=axis)

        plain.take, plain.take_along_axis = take, take_along_axis
        _PLAIN_TAKE[key] = plain
    return _PLAIN_TAKE[key]


def device_of(x):
    return _compat().device(x)


def is_device_array(x):
    return _is_foreign(x)


def to_numpy(x):
    """A host NumPy copy of any array (the error and host-id paths only)."""
    if not _is_foreign(x):
        return np.asarray(x)
    compat = _compat()
    if compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if compat.is_cupy_array(x):
        return x.get()
    xp = compat.array_namespace(x)
    info = getattr(xp, "__array_namespace_info__", None)
    host = x
    if info is not None:
        host = compat.to_device(x, info().default_device())
    return np.asarray(host)


def keep_device(x):
    """Predictions as an array: device arrays (PyTorch, CuPy, ...) as they are, anything
    else through ``np.asarray``."""
    return x if _is_foreign(x) else np.asarray(x)


def float_dtype(xp, *arrays):
    """Floating dtype of the computation: float32 when the scores are float32
    (and no input is float64), else float64."""
    kinds = [a.dtype for a in arrays if a is not None and _is_foreign(a)]
    if kinds and all(d == xp.float32 or not xp.isdtype(d, "real floating") for d in kinds) \
            and any(d == xp.float32 for d in kinds):
        return xp.float32
    return xp.float64


def segment_sum(xp, values, segment_ids, offsets, n_segments):
    """Sums of ``values`` over ``n_segments`` segments; rows of a segment are contiguous
    (``offsets``) and ``segment_ids`` gives each row's segment."""
    compat = _compat()
    if compat.is_torch_array(values):
        import torch

        out = torch.zeros(n_segments, dtype=values.dtype, device=values.device)
        return out.index_add_(0, segment_ids, values)
    if compat.is_cupy_array(values):
        import cupy

        with values.device:
            if segment_ids.shape[0] == 0:  # cupy.bincount takes the max of its input
                return cupy.zeros(n_segments, dtype=values.dtype)
            return cupy.bincount(segment_ids, weights=values,
                                 minlength=n_segments).astype(values.dtype)
    # Generic: a cumulative sum read at the segment boundaries (exact for integers; for
    # floats its rounding grows with the running total, which is why the namespaces
    # with a scatter-add use it).
    total = cumulative_sum_from_zero(xp, values)
    return xp.take(total, offsets[1:]) - xp.take(total, offsets[:-1])


def segment_cumsum_exclusive(xp, values, segment_of_row, offsets):
    """Per row: the sum of the earlier values of its segment (exact for integers)."""
    total = cumulative_sum_from_zero(xp, values)
    return total[:-1] - xp.take(xp.take(total, offsets[:-1]), segment_of_row)


def cumulative_sum_from_zero(xp, values):
    """``[0, v0, v0 + v1, ...]``: the cumulative sum with a leading zero on ``values``'
    device (array-api-strict before 2.6, the last releases that run on NumPy 1.x, puts
    ``include_initial=True``'s zero on the default device)."""
    zero = xp.zeros((1,), dtype=values.dtype, device=device_of(values))
    return xp.concat([zero, xp.cumulative_sum(values)])


def stable_argsort(xp, keys, *, descending=False):
    return xp.argsort(keys, stable=True, descending=descending)


def log_factorial(xp, longest, dtype, device):
    """``table[n] = log(n!)`` for n = 0..longest: every binomial coefficient the tie
    kernels need has integer arguments no larger than the longest query."""
    # scipy's gammaln on the host (as the NumPy kernels): a running sum of logs drifts
    # (1e-11 at n = 60,000 in float64).
    from scipy.special import gammaln

    return xp.asarray(gammaln(np.arange(longest + 1, dtype=np.float64) + 1.0),
                      dtype=dtype, device=device)


def log_comb(xp, table, n, k):
    """log C(n, k) for integer-valued float arrays ``0 <= k <= n`` (via the table)."""
    def at(v):
        return xp.take(table, xp.astype(v, xp.int64))
    return at(n) - at(k) - at(n - k)


def _length(ids):
    """Rows of a 1-D id array of any namespace (None when not 1-D)."""
    shape = tuple(ids.shape) if _is_foreign(ids) else np.shape(ids)
    return shape[0] if len(shape) == 1 else None


def value_range(y_true, which=None):
    """``(min, max)`` of a label array of any namespace, as Python floats; one of them
    with ``which="min"`` or ``"max"``."""
    xp = namespace(y_true)
    if xp is None:
        if which is not None:
            return getattr(y_true, which)()
        return y_true.min(), y_true.max()
    if which is not None:
        return float(getattr(xp, which)(y_true))
    return float(xp.min(y_true)), float(xp.max(y_true))


def divide_where(numerator, denominator, defined):
    """``numerator / denominator`` where ``defined``, else 0 (any namespace)."""
    xp = namespace(numerator)
    if xp is None:
        return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=defined)
    denominator = xp.astype(xp.asarray(denominator, device=device_of(numerator)),
                            numerator.dtype) if _is_foreign(denominator) else denominator
    safe = xp.where(defined, denominator, xp.ones_like(numerator))
    return xp.where(defined, numerator / safe, xp.zeros_like(numerator))


def minimum(values, bound):
    xp = namespace(values)
    if xp is None:
        return np.minimum(values, bound)
    if isinstance(bound, (int, float)):
        # A filled array (no host-to-device copy, which would wait for the device).
        return xp.where(values > bound, xp.full_like(values, bound), values)
    return xp.minimum(values, bound)


def as_float(values, like=None):
    """Booleans or integers as floats: float64 on NumPy, the ranking's dtype on a device."""
    xp = namespace(values)
    if xp is None:
        return values.astype(np.float64)
    return xp.astype(values, xp.float64 if like is None else like.dtype)
