"""Judgements and runs held by other libraries: ir_datasets datasets, and Arrow
tables (pyarrow, Hugging Face ``datasets``) read without pandas."""

import re
from operator import attrgetter

import numpy as np

from ._fields import str_array


def _dataset(func, dataset):
    """An ir_datasets dataset: the object itself, or loaded from its id (ir_datasets
    downloads the data on first use)."""
    if isinstance(dataset, str):
        try:
            import ir_datasets
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(f"{func}: a dataset id needs ir_datasets: pip install "
                              f"ir_datasets (or pass the dataset object).") from None
        return ir_datasets.load(dataset)
    return dataset


def _fields(func, items, names, what, dataset):
    """The named fields of ir_datasets' namedtuples, as lists (read by name: qrels
    tuples differ between datasets, e.g. TrecQrel has an ``iteration`` field)."""
    first = next(items, None)
    if first is None:
        return [[] for _ in names]
    missing = [n for n in names if not hasattr(first, n)]
    if missing:
        raise ValueError(f"{func}: the {what} of {_describe_dataset(dataset)} must have the "
                         f"fields {list(names)}. Got {list(getattr(first, '_fields', []))} "
                         f"instead (missing {missing}).")
    get = attrgetter(*names)
    rows = [get(first)]
    rows.extend(map(get, items))
    return [list(column) for column in zip(*rows)]


def _ids(values):
    """A list of ids as str (memory following the ids, see :func:`str_array`)."""
    return str_array([str(v) for v in values])


def _describe_dataset(dataset):
    dataset_id = getattr(dataset, "dataset_id", None)
    return repr(dataset_id() if callable(dataset_id) else type(dataset).__name__)


def qrels_from_ir_datasets(dataset):
    """``(qid, docno, rel)`` arrays of a dataset's qrels (for ``Qrels.from_ir_datasets``)."""
    func = "Qrels.from_ir_datasets"
    dataset = _dataset(func, dataset)
    if not hasattr(dataset, "qrels_iter") or (hasattr(dataset, "has_qrels")
                                              and not dataset.has_qrels()):
        raise ValueError(f"{func}: dataset must have qrels (ir_datasets' qrels_iter). Got "
                         f"{_describe_dataset(dataset)}, which has none.")
    qid, docno, rel = _fields(func, iter(dataset.qrels_iter()),
                              ("query_id", "doc_id", "relevance"), "qrels", dataset)
    return (_ids(qid), _ids(docno),
            np.asarray(rel, dtype=np.int64))


def run_from_ir_datasets(dataset):
    """``(qid, docno, score)`` arrays of a dataset's scored documents."""
    func = "Run.from_ir_datasets"
    dataset = _dataset(func, dataset)
    if not hasattr(dataset, "scoreddocs_iter") or (hasattr(dataset, "has_scoreddocs")
                                                   and not dataset.has_scoreddocs()):
        raise ValueError(f"{func}: dataset must have scored documents (ir_datasets' "
                         f"scoreddocs_iter, e.g. a BM25 run). Got "
                         f"{_describe_dataset(dataset)}, which has none.")
    qid, docno, score = _fields(func, iter(dataset.scoreddocs_iter()),
                                ("query_id", "doc_id", "score"), "scoreddocs", dataset)
    return (_ids(qid), _ids(docno),
            np.asarray(score, dtype=np.float64))


# ir_measures' names (what ir_datasets' documentation lists) -> skrank's metric stems
_MEASURES = {"AP": "map", "nDCG": "ndcg", "P": "precision", "RR": "mrr", "R": "recall",
             "Rprec": "r_precision", "Bpref": "bpref", "infAP": "infap", "Judged": "judged",
             "ERR": "err", "Success": "hit_rate", "RBP": "rbp"}
_MEASURE = re.compile(r"^(?P<name>[A-Za-z_]+)(?:\((?P<params>[^)]*)\))?(?:@(?P<k>\d+))?$")


def official_measures(dataset):
    """The official measures that an ir_datasets dataset documents, in skrank's terms.

    ir_datasets has no threshold attribute: its documentation lists the
    measures as ir_measures text (``documentation()["official_measures"]``,
    e.g. ``'AP(rel=2)'``, ``'nDCG@10'``).  Each is parsed here: the measure
    name maps to a skrank metric, ``@k`` to its cutoff and ``rel=N`` to
    :func:`skrank.evaluate`'s ``threshold``.

    Parameters
    ----------
    dataset : ir_datasets dataset or str
        The dataset, or its id.

    Returns
    -------
    measures : list of dict
        One per documented measure: ``{"measure": text, "metric": skrank name
        or None, "threshold": int or None}``; ``metric`` is None where skrank
        has no equivalent or the measure has parameters other than ``rel``
        (evaluate those otherwise).  An empty list when the dataset documents
        none.

    Examples
    --------
    >>> from skrank.io import official_measures
    >>> class Dataset:   # what ir_datasets.load("...") returns, in brief
    ...     def documentation(self):
    ...         return {"official_measures": ["AP(rel=2)", "nDCG@10", "P(rel=2)@10"]}
    >>> [(m["metric"], m["threshold"]) for m in official_measures(Dataset())]
    [('map', 2), ('ndcg@10', None), ('precision@10', 2)]
    """
    dataset = _dataset("official_measures", dataset)
    documentation = getattr(dataset, "documentation", None)
    doc = documentation() if callable(documentation) else {}
    out = []
    for text in (doc or {}).get("official_measures", []) or []:
        found = _MEASURE.match(str(text).replace(" ", ""))
        metric, threshold = None, None
        if found and found["name"] in _MEASURES:
            params = dict(p.split("=", 1) for p in (found["params"] or "").split(",") if "=" in p)
            if set(params) <= {"rel"} and all(v.lstrip("-").isdigit() for v in params.values()):
                metric = _MEASURES[found["name"]] + (f"@{found['k']}" if found["k"] else "")
                threshold = int(params["rel"]) if "rel" in params else None
        out.append({"measure": str(text), "metric": metric, "threshold": threshold})
    return out


# --------------------------------------------------------------------------------------
# Arrow tables
# --------------------------------------------------------------------------------------


class _ArrowColumns:
    """A pyarrow Table seen as the frames the readers take: ``columns`` (names) and
    ``table[name]`` (a numpy array; string columns as object arrays, dictionary
    columns decoded)."""

    def __init__(self, table):
        self._table = table
        self.columns = list(table.column_names)

    def __getitem__(self, name):
        import pyarrow as pa

        column = self._table.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        return column.to_numpy()


def arrow_view(frame):
    """``frame`` itself, or a view of a pyarrow Table / RecordBatch or a Hugging
    Face ``datasets.Dataset`` that the frame readers can read (no pandas)."""
    if type(frame).__module__.startswith("datasets") and hasattr(frame, "with_format"):
        frame = frame.with_format("arrow")[:]   # the rows the dataset selects, as Arrow
    if type(frame).__module__.startswith("pyarrow") and hasattr(frame, "column_names"):
        return _ArrowColumns(frame)
    return frame
