"""Stateful ranking metrics for PyTorch training loops, with ``torch.distributed`` sync.

:class:`RankingMetrics` collects ``(y_true, y_score, qid)`` batches with
:meth:`~RankingMetrics.update` (no host synchronisation: tensors are only kept),
and :meth:`~RankingMetrics.compute` evaluates everything seen with
:func:`skrank.evaluate`, on the tensors' device (skrank's array-API path).  The
rows of one query may arrive in several updates and on several processes: under
``torch.distributed``, ``compute`` first gathers the rows of every process
(uneven sizes, processes without rows included), in the order *process rank,
then arrival*; that is the input order ``ties="stable"`` keeps.

:class:`TorchmetricsRankingMetrics` is the same as a ``torchmetrics.Metric``
(when torchmetrics is installed), for Lightning's ``self.log``.

This module is ``skrank.torch``; it imports PyTorch itself (``import torch``
is absolute here), so PyTorch must be installed.
"""

import torch
import torch.distributed as dist

import skrank
from ._declare import params as P
from . import _plan
from ._core.checks import InvalidParameterError
from ._core.docstrings import shared_doc

__all__ = ["RankingMetrics", "TorchmetricsRankingMetrics"]

_FUNC = "RankingMetrics"

#: The parameters of RankingMetrics.update and TorchmetricsRankingMetrics.update.
_UPDATE_PARAMETERS = """
y_true : torch.Tensor or array-like of shape (n_rows,)
    The rows' relevance labels.
y_score : torch.Tensor of shape (n_rows,)
    The rows' scores; its device is the device of the batch.
qid : torch.Tensor or array-like of shape (n_rows,)
    The rows' query ids (a query's rows may come in several batches).
"""
_DEFAULT_METRICS = ("ndcg@10", "map", "mrr")

#: dtypes a gathered tensor may have, by the code that travels between processes
_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8,
           torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)


def _check_options(func, metrics, ties, no_relevant, threshold):
    """Validate the options once, as :func:`skrank.evaluate` would on every call."""
    options = {name: P.EVALUATE_OPTIONS[name].validate(func, value) for name, value in (
        ("ties", ties), ("no_relevant", no_relevant), ("threshold", threshold))}
    if options["ties"] == "trec":
        raise InvalidParameterError(
            f"{func}: ties='trec' orders ties by docno, which tensors do not have. Got "
            f"ties='trec' instead: use 'average', 'stable', 'optimistic' or 'pessimistic'.")
    calls = _plan.resolve(func, metrics, trec=True, defaults=options)
    return [label for label, _ in calls], options


def _as_batch(func, y_true, y_score, qid, dtypes):
    """The batch as 1-D tensors on ``y_score``'s device, checked from their metadata
    only (shapes, dtypes, devices: never their values, which would wait for them)."""
    if not isinstance(y_score, torch.Tensor):
        raise TypeError(f"{func}.update: y_score must be a torch.Tensor. Got "
                        f"{type(y_score).__name__} instead.")
    device = y_score.device
    y_true = y_true if isinstance(y_true, torch.Tensor) else torch.as_tensor(y_true,
                                                                             device=device)
    qid = qid if isinstance(qid, torch.Tensor) else torch.as_tensor(qid, device=device)
    batch = (y_true, y_score, qid)
    for name, tensor in zip(("y_true", "y_score", "qid"), batch):
        if tensor.ndim != 1:
            raise ValueError(f"{func}.update: {name} must be 1-D (one value per row). Got "
                             f"shape {tuple(tensor.shape)} instead.")
        if tensor.device != device:
            raise ValueError(f"{func}.update: {name} must be on y_score's device ({device}). "
                             f"Got {tensor.device} instead.")
    if not y_true.shape[0] == y_score.shape[0] == qid.shape[0]:
        raise ValueError(f"{func}.update: y_true, y_score and qid must have the same length. "
                         f"Got {y_true.shape[0]}, {y_score.shape[0]} and {qid.shape[0]}.")
    if qid.dtype.is_floating_point or qid.dtype.is_complex:
        raise TypeError(f"{func}.update: qid must hold integer ids. Got dtype {qid.dtype} "
                        f"instead.")
    if dtypes is not None and tuple(t.dtype for t in batch) != dtypes:
        raise TypeError(f"{func}.update: every batch must have the dtypes of the first "
                        f"(y_true, y_score, qid: {', '.join(map(str, dtypes))}). Got "
                        f"{', '.join(str(t.dtype) for t in batch)} instead.")
    return tuple(t.detach() for t in batch)


def _distributed(group):
    return dist.is_available() and dist.is_initialized() and dist.get_world_size(group) > 1


def _gather_rows(func, parts, group):
    """``(y_true, y_score, qid)`` of every process of ``group``, concatenated in the order
    of their ranks, each process's rows in its order.  ``parts`` is this process's
    (possibly empty) triple or None when it saw no rows.  Every process takes part in
    every collective, whatever it holds, so none waits for another forever."""
    world = dist.get_world_size(group)
    backend = dist.get_backend(group)
    if parts is not None:
        device = parts[1].device
    elif backend == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    else:
        device = torch.device("cpu")
    n = 0 if parts is None else parts[0].shape[0]
    codes = [-1, -1, -1] if parts is None else [_DTYPES.index(t.dtype) for t in parts]
    meta = torch.tensor([n, *codes], dtype=torch.int64, device=device)
    metas = [torch.empty_like(meta) for _ in range(world)]
    dist.all_gather(metas, meta, group=group)
    metas = torch.stack(metas).cpu().tolist()   # compute may wait: update never does
    sizes = [m[0] for m in metas]
    kinds = {tuple(m[1:]) for m in metas if m[0] > 0}
    if not kinds:
        raise ValueError(f"{func}.compute: no process saw any row. Call update() with at "
                         f"least one row before compute().")
    if len(kinds) > 1:
        raise TypeError(f"{func}.compute: every process must give the same dtypes (y_true, "
                        f"y_score, qid). Got {sorted(kinds)} (codes) instead.")
    dtypes = [_DTYPES[c] for c in kinds.pop()]
    longest = max(sizes)
    out = []
    for i, dtype in enumerate(dtypes):
        padded = torch.zeros(longest, dtype=dtype, device=device)
        if n:
            padded[:n] = parts[i]
        pieces = [torch.empty_like(padded) for _ in range(world)]
        dist.all_gather(pieces, padded, group=group)
        out.append(torch.cat([piece[:size] for piece, size in zip(pieces, sizes)]))
    return tuple(out)


def _local_rows(batches):
    """This process's batches concatenated, or None when there are none."""
    if not batches:
        return None
    if len(batches) == 1:
        return batches[0]
    return tuple(torch.cat(column) for column in zip(*batches))


def _evaluate(func, labels, options, rows):
    y_true, y_score, qid = rows
    return skrank.evaluate(y_true, y_score, qid=qid, metrics=list(labels), **options)


def _means(evaluation, device):
    """The means as 0-d float64 tensors on ``device``."""
    return {label: torch.tensor(value, dtype=torch.float64, device=device)
            for label, value in evaluation.mean.items()}


class RankingMetrics:
    """Ranking metrics accumulated over batches, evaluated once at the end.

    Parameters
    ----------
    metrics : str, list or dict, default=("ndcg@10", "map", "mrr")
        What :func:`skrank.evaluate` takes.
    ties, no_relevant, threshold
        As in :func:`skrank.evaluate`.  ``ties="stable"`` keeps the rows' order:
        under ``torch.distributed``, the order of the process ranks, then of
        arrival on each process.
    sync : bool, default=True
        Under an initialised ``torch.distributed`` with more than one process,
        gather every process's rows before computing (each process then gets
        the same values).  False computes this process's rows only.
    process_group : default=None
        The ``torch.distributed`` group to gather over (None: the default group).

    Examples
    --------
    >>> import torch
    >>> from skrank.torch import RankingMetrics
    >>> m = RankingMetrics(["ndcg@2", "mrr"])
    >>> m.update(torch.tensor([2., 0, 1]), torch.tensor([.9, .8, .1]), torch.tensor([1, 1, 1]))
    >>> m.update(torch.tensor([0., 1, 0]), torch.tensor([.3, .2, .1]), torch.tensor([2, 2, 2]))
    >>> {name: round(value.item(), 4) for name, value in m.compute().items()}
    {'ndcg@2': 0.6956, 'mrr': 0.75}
    >>> m.reset()
    """

    def __init__(self, metrics=_DEFAULT_METRICS, *, ties=None, no_relevant="zero",
                 threshold=None, sync=True, process_group=None):
        self.labels, self._options = _check_options(_FUNC, metrics, ties, no_relevant,
                                                    threshold)
        self.sync = bool(sync)
        self.process_group = process_group
        self.reset()

    def reset(self):
        """Forget every row seen."""
        self._batches = []
        self._dtypes = None

    @shared_doc(update_parameters=_UPDATE_PARAMETERS)
    def update(self, y_true, y_score, qid):
        """Keep one batch: ``y_true``, ``y_score`` and ``qid`` 1-D, one entry per row.

        Only the tensors' metadata are checked (values are checked by
        :meth:`compute`), so the call never waits for the device.

        Parameters
        ----------
        {update_parameters}
        """
        batch = _as_batch(_FUNC, y_true, y_score, qid, self._dtypes)
        self._dtypes = tuple(t.dtype for t in batch)
        self._batches.append(batch)

    def _rows(self):
        local = _local_rows(self._batches)
        if self.sync and _distributed(self.process_group):
            return _gather_rows(_FUNC, local, self.process_group)
        if local is None:
            raise ValueError(f"{_FUNC}.compute: no row seen. Call update() with at least one "
                             f"row before compute().")
        return local

    def evaluation(self):
        """The :class:`skrank.Evaluation` of every row seen (per-query values on the
        tensors' device)."""
        return _evaluate(_FUNC, self.labels, self._options, self._rows())

    def compute(self):
        """The mean of each metric over every query seen: ``{label: 0-d float64 tensor}``
        on the tensors' device, equal to :func:`skrank.evaluate`'s means on the
        concatenation of every batch (of every process, in rank order)."""
        rows = self._rows()
        return _means(_evaluate(_FUNC, self.labels, self._options, rows), rows[1].device)

    def __repr__(self):
        return f"RankingMetrics({self.labels!r}, batches={len(self._batches)})"


def _build_torchmetrics_class():
    """The class :class:`TorchmetricsRankingMetrics`, defined on first use so that
    importing skrank.torch does not import torchmetrics.  Long because the whole class
    (its states, update, compute and distributed sync) is in its body."""
    try:
        import torchmetrics
    except ImportError as exc:
        raise ImportError("skrank.torch.TorchmetricsRankingMetrics needs torchmetrics: "
                          "pip install torchmetrics") from exc

    class TorchmetricsRankingMetrics(torchmetrics.Metric):
        """:class:`RankingMetrics` as a ``torchmetrics.Metric`` (for Lightning).

        The parameters of :class:`RankingMetrics`, except ``sync`` and
        ``process_group``, which are torchmetrics' own.  ``compute()`` returns
        ``{label: 0-d tensor}``; torchmetrics gathers the rows of every process
        first (in rank order; a process without rows takes part too).

        Parameters
        ----------
        metrics : str, list or dict, default=("ndcg@10", "map", "mrr")
            What :func:`skrank.evaluate` takes.
        ties : {"average", "stable", "pessimistic", "optimistic"}, default=None
            Tie policy of the metrics that do not set their own; None keeps each
            metric's default, as in :func:`skrank.evaluate`.  ``"stable"`` keeps
            the rows' order (process rank, then arrival).
        no_relevant : {"zero", "one", "skip", "nan", "raise"}, default="zero"
            Value of a query without a relevant document, as in
            :func:`skrank.evaluate`.
        threshold : float, default=None
            Relevance threshold of the binary metrics; None keeps each metric's
            default of 1.
        **kwargs
            ``torchmetrics.Metric``'s keywords (``dist_sync_on_step``,
            ``process_group``, ``sync_on_compute``, ...).
        """

        full_state_update = False
        higher_is_better = True
        is_differentiable = False

        def __init__(self, metrics=_DEFAULT_METRICS, *, ties=None, no_relevant="zero",
                     threshold=None, **kwargs):
            super().__init__(**kwargs)
            self.labels, self._options = _check_options(
                "TorchmetricsRankingMetrics", metrics, ties, no_relevant, threshold)
            for name in ("y_true", "y_score", "qid"):
                self.add_state(name, default=[], dist_reduce_fx="cat")

        @shared_doc(update_parameters=_UPDATE_PARAMETERS)
        def update(self, y_true, y_score, qid):
            """Keep one batch: ``y_true``, ``y_score`` and ``qid`` 1-D, one entry per row.

            Only the tensors' metadata are checked, as in :meth:`RankingMetrics.update`.

            Parameters
            ----------
            {update_parameters}
            """
            dtypes = (tuple(t.dtype for t in (self.y_true[0], self.y_score[0], self.qid[0]))
                      if self.y_score else None)
            y_true, y_score, qid = _as_batch("TorchmetricsRankingMetrics", y_true, y_score,
                                             qid, dtypes)
            self.y_true.append(y_true)
            self.y_score.append(y_score)
            self.qid.append(qid)

        def _local(self):
            states = (self.y_true, self.y_score, self.qid)
            if isinstance(states[0], torch.Tensor):   # after a sync: one tensor each
                return states
            return _local_rows(list(zip(*states)))

        def _sync_dist(self, dist_sync_fn=None, process_group=None):
            # skrank's gather: uneven sizes, dtypes kept, processes without rows included
            rows = _gather_rows("TorchmetricsRankingMetrics", self._local(),
                                process_group or self.process_group)
            self.y_true, self.y_score, self.qid = ([t] for t in rows)

        def compute(self):
            """The mean of each metric over every query seen: ``{label: 0-d float64
            tensor}``, as :meth:`RankingMetrics.compute` gives."""
            rows = self._local()
            if rows is None:
                raise ValueError("TorchmetricsRankingMetrics.compute: no row seen. Call "
                                 "update() with at least one row before compute().")
            evaluation = _evaluate("TorchmetricsRankingMetrics", self.labels, self._options,
                                   rows)
            return _means(evaluation, rows[1].device)

    TorchmetricsRankingMetrics.__module__ = __name__
    TorchmetricsRankingMetrics.__qualname__ = "TorchmetricsRankingMetrics"
    return TorchmetricsRankingMetrics


def __getattr__(name):
    if name == "TorchmetricsRankingMetrics":
        cls = _build_torchmetrics_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
