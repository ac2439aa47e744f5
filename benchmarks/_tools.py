"""Adapters: one per tool, all fed the same workload arrays.

Each adapter says which metrics it computes, converts the shared arrays to
its own format (timed as *conversion*), evaluates on that format (timed as
*evaluation*), and names the skrank call whose conventions match it (the
*reference*), so that a time counts only when the value agrees.

Only public APIs of the peers are used.
"""

import importlib
import importlib.metadata as md
import time

import numpy as np

import skrank

# Metric keys of the suite -> skrank function name and options.
SKRANK_METRICS = {
    "ndcg@10": ("ndcg", {"k": 10}),
    "ndcg_exp@10": ("ndcg", {"k": 10, "gain": "exponential"}),
    "dcg@10": ("dcg", {"k": 10}),
    "map": ("map", {}),
    "mrr": ("mrr", {}),
    "p@10": ("precision", {"k": 10}),
}
EVAL6 = ("ndcg@10", "ndcg_exp@10", "map", "mrr", "precision@10", "recall@10")
EVALUATE = "evaluate(6)"


def median_time(fn, repeats=7):
    """Median wall time of ``fn()`` over ``repeats`` calls after one warm-up call
    (for the engine's own measurements; tools are timed by run.py's time_call)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def skrank_value(wl, metric, *, reverse=False, **overrides):
    """skrank's value of ``metric`` on ``wl`` with conventions overridden.

    ``reverse=True`` evaluates the rows in reverse order; with
    ``ties="stable"`` that orders tied documents last-row-first, which is
    trec_eval's docno-descending order for our docnos.
    """
    y, s, q = wl.y_true, wl.y_score, wl.qid
    if reverse:
        y, s, q = y[::-1], s[::-1], q[::-1]
    if metric == EVALUATE:
        ties = overrides.get("ties")
        res = skrank.evaluate(y, s, qid=q, metrics=list(EVAL6), ties=ties,
                              no_relevant=overrides.get("no_relevant", "zero"))
        return dict(res.mean)
    name, params = SKRANK_METRICS[metric]
    spec = skrank.METRICS[name]
    params = {**params, **overrides}
    if not spec.takes_no_relevant:  # dcg, P@k: every query is defined
        params.pop("no_relevant", None)
    return float(spec.function(y, s, qid=q, **params))


def package_version(*names):
    for name in names:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            continue
    return None


class Tool:
    """Base adapter.  Subclasses set the class attributes and override methods."""

    key = ""
    label = ""
    modules = ()           # import names that must be importable
    dists = ()             # distribution names for the version
    peer = True            # False for skrank itself and the np.sort reference
    converts = True        # needs its own input format
    max_scaling_rows = None  # largest scaling size run (None: all)
    conventions = ""

    def __init__(self):
        self.missing = None
        for mod in self.modules:
            try:
                importlib.import_module(mod)
            except Exception as exc:  # ImportError, or a broken install
                self.missing = "not installed" if isinstance(exc, ImportError) else f"broken install ({mod}: {exc!r})"
                break

    @property
    def available(self):
        return self.missing is None

    @property
    def version(self):
        return package_version(*self.dists) if self.dists else None

    # -- what it computes
    def supports(self, wl, metric):
        """None when the tool computes ``metric`` on ``wl``, else the reason it does not."""
        return None

    # -- timed steps
    def convert(self, wl):
        """Metric-independent conversion of the shared arrays (timed)."""
        return None

    def setup(self, native, wl, metric):
        """Metric-specific preparation, counted as conversion (timed)."""
        return native

    def call(self, prepared, wl, metric):
        """Return ``(fn, per_repeat_setup)``; ``fn(arg)`` evaluates and returns the value."""
        return (lambda _arg: self.evaluate(prepared, wl, metric)), None

    def evaluate(self, prepared, wl, metric):
        raise NotImplementedError

    # -- value agreement
    def reference(self, wl, metric):
        """(skrank value with this tool's conventions, note), or (None, reason not compared)."""
        return skrank_value(wl, metric), "skrank defaults"


# ---------------------------------------------------------------------------
class Skrank(Tool):
    key = "skrank"
    label = "skrank"
    modules = ("skrank",)
    dists = ("skrank",)
    peer = False
    converts = False
    conventions = "ties='average' (exact expectation over tied orderings), linear gain unless *_exp, no_relevant='zero', P@k over k, MAP over R"

    def supports(self, wl, metric):
        return None if metric in SKRANK_METRICS or metric == EVALUATE else "not a suite metric"

    def evaluate(self, prepared, wl, metric):
        return skrank_value(wl, metric)

    def reference(self, wl, metric):
        return None, "baseline"


class Skrank2D(Tool):
    key = "skrank-2d"
    label = "skrank (2-D input)"
    modules = ("skrank",)
    dists = ("skrank",)
    peer = False
    conventions = "as skrank; one query per row of a 2-D array (sklearn's form)"

    def supports(self, wl, metric):
        if wl.shape is None:
            return "2-D form needs equal query sizes"
        return None if metric in ("ndcg@10", "dcg@10") else "only the sklearn-comparable metrics"

    def convert(self, wl):
        return wl.y_true.reshape(wl.shape), wl.y_score.reshape(wl.shape)

    def evaluate(self, prepared, wl, metric):
        y, s = prepared
        f = skrank.ndcg_score if metric == "ndcg@10" else skrank.dcg_score
        return float(f(y, s, k=10))


class SkrankShuffled(Tool):
    key = "skrank-shuffled"
    label = "skrank (rows shuffled)"
    modules = ("skrank",)
    dists = ("skrank",)
    peer = False
    converts = False  # the shuffle makes a different input, not a conversion
    conventions = "as skrank; same rows in random order (queries not contiguous): adds the regrouping pass"

    def supports(self, wl, metric):
        return None if metric == "ndcg@10" and wl.name == "uniform" else "only uniform nDCG@10"

    def convert(self, wl):
        perm = np.random.default_rng(7).permutation(wl.n_rows)
        return wl.y_true[perm], wl.y_score[perm], wl.qid[perm]

    def evaluate(self, prepared, wl, metric):
        y, s, q = prepared
        return float(skrank.ndcg_score(y, s, qid=q, k=10))


class NpSort(Tool):
    key = "np.sort"
    label = "np.sort(y_score) [yardstick]"
    modules = ("numpy",)
    dists = ("numpy",)
    peer = False
    converts = False
    conventions = "one global np.sort of the score array: not a metric, the yardstick of the 3x targets"

    def supports(self, wl, metric):
        return None if metric == "ndcg@10" else "yardstick shown once per workload"

    def evaluate(self, prepared, wl, metric):
        np.sort(wl.y_score)
        return None

    def reference(self, wl, metric):
        return None, "not a metric"


# ---------------------------------------------------------------------------
class Sklearn(Tool):
    modules = ("sklearn",)
    dists = ("scikit-learn",)
    ignore_ties = False

    def __init__(self, ignore_ties):
        self.ignore_ties = ignore_ties
        self.key = f"sklearn-{'it' if ignore_ties else 'avg'}"
        self.label = f"sklearn (ignore_ties={ignore_ties})"
        self.conventions = (
            "2-D input (one query per row), linear gain, a query without relevant document scores 0; "
            + ("ignore_ties=True: argsort order of tied scores (unspecified)"
               if ignore_ties else "ignore_ties=False: tie-averaged DCG (= skrank ties='average')"))
        super().__init__()

    def supports(self, wl, metric):
        if metric not in ("ndcg@10", "dcg@10"):
            return "sklearn has nDCG/DCG only"
        if wl.shape is None:
            return "2-D form needs equal query sizes (padding to the largest query is impractical)"
        return None

    def convert(self, wl):
        return wl.y_true.reshape(wl.shape), wl.y_score.reshape(wl.shape)

    def evaluate(self, prepared, wl, metric):
        from sklearn.metrics import dcg_score, ndcg_score

        y, s = prepared
        f = ndcg_score if metric == "ndcg@10" else dcg_score
        return float(f(y, s, k=10, ignore_ties=self.ignore_ties))

    def reference(self, wl, metric):
        if self.ignore_ties and wl.ties:
            return None, "tied order unspecified with ignore_ties=True"
        return skrank_value(wl, metric), "ties='average'"


# ---------------------------------------------------------------------------
def _docnos(n):
    width = len(str(max(n - 1, 0)))
    return [f"d{i:0{width}d}" for i in range(n)]


class PytrecEval(Tool):
    key = "pytrec_eval"
    label = "pytrec_eval"
    modules = ("pytrec_eval",)
    dists = ("pytrec-eval-terrier", "pytrec_eval")
    max_scaling_rows = 1_000_000
    conventions = ("trec_eval: linear gain, ties broken by docno descending, a query without "
                   "relevant document scores 0, P@10 over 10, MAP over R; no exponential nDCG")
    MEASURES = {"ndcg@10": "ndcg_cut_10", "map": "map", "mrr": "recip_rank", "p@10": "P_10"}
    EVAL5 = {"ndcg@10": "ndcg_cut_10", "map": "map", "mrr": "recip_rank",
             "precision@10": "P_10", "recall@10": "recall_10"}

    def supports(self, wl, metric):
        if metric == EVALUATE:
            return None
        return None if metric in self.MEASURES else "no such trec_eval measure"

    def convert(self, wl):
        # What a user writes: dicts {qid: {docno: value}} from the flat arrays.
        docs = _docnos(wl.n_rows)
        labels = wl.y_true.astype(np.int64).tolist()
        scores = wl.y_score.tolist()
        qrel, run = {}, {}
        start = 0
        for q, size in enumerate(wl.sizes.tolist()):
            stop = start + size
            name = f"q{q}"
            d = docs[start:stop]
            qrel[name] = dict(zip(d, labels[start:stop]))
            run[name] = dict(zip(d, scores[start:stop]))
            start = stop
        return qrel, run

    def _measures(self, metric):
        return self.EVAL5 if metric == EVALUATE else {metric: self.MEASURES[metric]}

    def setup(self, native, wl, metric):
        import pytrec_eval

        qrel, run = native
        measures = self._measures(metric)
        return pytrec_eval.RelevanceEvaluator(qrel, set(measures.values())), run, measures

    def evaluate(self, prepared, wl, metric):
        evaluator, run, measures = prepared
        res = evaluator.evaluate(run)
        per_query = list(res.values())
        means = {name: float(np.mean([v[m] for v in per_query])) for name, m in measures.items()}
        return means if metric == EVALUATE else means[metric]

    def reference(self, wl, metric):
        value = skrank_value(wl, metric, reverse=True, ties="stable")
        if metric == EVALUATE:
            value = {k: v for k, v in value.items() if k in self.EVAL5}
            return value, "5 of the 6 (no exponential nDCG); ties by docno descending"
        return value, "ties='stable' on rows reversed (= docno descending)"


class RanxWarm(Tool):
    key = "ranx"
    label = "ranx (warm)"
    modules = ("ranx",)
    dists = ("ranx",)
    max_scaling_rows = 10_000  # 1M: the uniform workload; building its dictionaries at 100k took a minute here
    conventions = ("linear gain (ndcg), 2**rel-1 (ndcg_burges), a query without relevant document "
                   "scores 0, precision@k over k, MAP over R; tied order is not specified")
    NAMES = {"ndcg@10": "ndcg@10", "ndcg_exp@10": "ndcg_burges@10", "map": "map", "mrr": "mrr",
             "p@10": "precision@10"}
    EVAL6 = {"ndcg@10": "ndcg@10", "ndcg_exp@10": "ndcg_burges@10", "map": "map", "mrr": "mrr",
             "precision@10": "precision@10", "recall@10": "recall@10"}

    def supports(self, wl, metric):
        return None if metric in self.NAMES or metric == EVALUATE else "no such ranx metric"

    def convert(self, wl):
        import pandas as pd
        import ranx

        qids = pd.Series(np.char.add("q", wl.qid.astype(str)), dtype=object)
        docs = pd.Series(_docnos(wl.n_rows), dtype=object)
        frame = pd.DataFrame({"q_id": qids, "doc_id": docs,
                              "rel": wl.y_true.astype(np.int64), "score": wl.y_score})
        qrels = ranx.Qrels.from_df(frame, q_id_col="q_id", doc_id_col="doc_id", score_col="rel")
        run = ranx.Run.from_df(frame, q_id_col="q_id", doc_id_col="doc_id", score_col="score")
        return qrels, run

    def evaluate(self, prepared, wl, metric):
        import ranx

        qrels, run = prepared
        if metric == EVALUATE:
            res = ranx.evaluate(qrels, run, list(self.EVAL6.values()))
            return {name: float(res[m]) for name, m in self.EVAL6.items()}
        return float(ranx.evaluate(qrels, run, self.NAMES[metric]))

    def reference(self, wl, metric):
        if wl.ties:
            return None, "ranx's order of tied documents is unspecified"
        return skrank_value(wl, metric), "skrank defaults (tie-free scores)"


# The per-query loops (20-150x slower than skrank) run on the uniform and tied workloads only:
# on the others they took minutes of the suite and told nothing new.
SLOW_PEER_NOTE = "run on the uniform and ties workloads only (a per-query loop: minutes of the suite)"


class Torchmetrics(Tool):
    key = "torchmetrics"
    label = "torchmetrics"
    modules = ("torch", "torchmetrics")
    dists = ("torchmetrics",)
    max_scaling_rows = 1_000_000
    conventions = ("retrieval metrics grouped by `indexes`; linear gain; nDCG tie-averaged like "
                   "sklearn; empty_target_action='neg' (0 for a query without relevant document); "
                   "precision@k over k")
    CLASSES = {"ndcg@10": ("RetrievalNormalizedDCG", {"top_k": 10}),
               "map": ("RetrievalMAP", {}), "mrr": ("RetrievalMRR", {}),
               "p@10": ("RetrievalPrecision", {"top_k": 10})}

    @property
    def version(self):
        v = package_version("torchmetrics")
        t = package_version("torch")
        return f"{v} (torch {t})" if v else None

    def supports(self, wl, metric):
        if wl.name in ("graded", "ragged"):
            return SLOW_PEER_NOTE
        return None if metric in self.CLASSES else "no such torchmetrics retrieval metric"

    def convert(self, wl):
        import torch

        return (torch.from_numpy(wl.y_score), torch.from_numpy(wl.y_true.astype(np.int64)),
                torch.from_numpy(wl.qid))

    def setup(self, native, wl, metric):
        preds, target, indexes = native
        if metric != "ndcg@10":
            target = target > 0
        return preds, target, indexes

    def evaluate(self, prepared, wl, metric):
        from torchmetrics import retrieval

        preds, target, indexes = prepared
        name, kwargs = self.CLASSES[metric]
        m = getattr(retrieval, name)(**kwargs)
        m.update(preds, target, indexes=indexes)
        return float(m.compute())

    def reference(self, wl, metric):
        if wl.ties and metric != "ndcg@10":
            return None, "tied order unspecified (only nDCG averages ties)"
        return skrank_value(wl, metric), "skrank defaults"


class PandasLoop(Tool):
    key = "pandas"
    label = "pandas groupby(qid).apply"
    modules = ("pandas",)
    dists = ("pandas",)
    max_scaling_rows = 1_000_000
    conventions = ("the loop users write by hand: per query np.argsort(-score, kind='stable'), "
                   "linear or 2**rel-1 gain, 0 for a query without relevant document, P@10 over 10")

    def supports(self, wl, metric):
        if wl.name in ("graded", "ragged"):
            return SLOW_PEER_NOTE
        return None if metric in ("ndcg@10", "ndcg_exp@10", "map", "mrr", "p@10") else "not written by hand here"

    def convert(self, wl):
        import pandas as pd

        return pd.DataFrame({"qid": wl.qid, "y": wl.y_true, "s": wl.y_score})

    @staticmethod
    def _func(metric):
        disc = 1.0 / np.log2(np.arange(2, 12))

        def ndcg(g, exp):
            y = g["y"].to_numpy()
            order = np.argsort(-g["s"].to_numpy(), kind="stable")
            gain = np.exp2(y) - 1.0 if exp else y
            top = gain[order[:10]]
            ideal = np.sort(gain)[::-1][:10]
            idcg = ideal @ disc[: ideal.size]
            return (top @ disc[: top.size]) / idcg if idcg > 0 else 0.0

        def ranked_rel(g):
            order = np.argsort(-g["s"].to_numpy(), kind="stable")
            return g["y"].to_numpy()[order] >= 1

        def ap(g):
            rel = ranked_rel(g)
            n_rel = rel.sum()
            if n_rel == 0:
                return 0.0
            prec = np.cumsum(rel) / np.arange(1, rel.size + 1)
            return prec[rel].sum() / n_rel

        def rr(g):
            rel = ranked_rel(g)
            return 1.0 / (np.argmax(rel) + 1) if rel.any() else 0.0

        def p10(g):
            return ranked_rel(g)[:10].sum() / 10.0

        return {"ndcg@10": lambda g: ndcg(g, False), "ndcg_exp@10": lambda g: ndcg(g, True),
                "map": ap, "mrr": rr, "p@10": p10}[metric]

    def setup(self, native, wl, metric):
        return native, self._func(metric)

    def evaluate(self, prepared, wl, metric):
        frame, func = prepared
        return float(frame.groupby("qid", sort=False)[["y", "s"]].apply(func).mean())

    def reference(self, wl, metric):
        return skrank_value(wl, metric, ties="stable"), "ties='stable' (input order)"


# ---------------------------------------------------------------------------
class XGBoost(Tool):
    modules = ("xgboost",)
    dists = ("xgboost-cpu", "xgboost")
    conventions = ("C++ metric on fixed scores: DMatrix(label, qid, base_margin=scores) and "
                   "booster.eval() of a booster trained for 0 rounds; stable order of tied scores, "
                   "a query without relevant document scores 1 (ndcg, map); exponential gain unless "
                   "ndcg_exp_gain=False; map needs binary labels; map@k over min(R, k); pre@k over "
                   "min(k, query size); plain 'map' and 'ndcg' (no @k) are truncated at 32 documents, "
                   "so full MAP is run as map@<largest query>")
    METRICS = {"ndcg@10": ("ndcg@10", {"ndcg_exp_gain": False}), "ndcg_exp@10": ("ndcg@10", {}),
               "map": (None, {}), "p@10": ("pre@10", {})}

    def __init__(self, fresh=False, nthread=None):
        self.fresh = fresh
        self.nthread = nthread
        if fresh:
            self.key, self.label = "xgboost-new", "XGBoost (first eval of a new DMatrix)"
        elif nthread:
            self.key, self.label = f"xgboost-{nthread}t", f"XGBoost (eval, nthread={nthread})"
        else:
            self.key, self.label = "xgboost", "XGBoost (eval)"
        super().__init__()

    def supports(self, wl, metric):
        if metric not in self.METRICS:
            return "no such XGBoost ranking metric"
        if (self.fresh or self.nthread) and metric not in ("ndcg@10", "ndcg_exp@10"):
            return "this variant is run for nDCG only"
        if metric == "map" and not wl.binary:
            return "XGBoost's map needs binary labels"
        return None

    def convert(self, wl):
        import xgboost as xgb

        X = np.zeros((wl.n_rows, 1), dtype=np.float32)
        return xgb.DMatrix(X, label=wl.y_true, qid=wl.qid, base_margin=wl.y_score)

    def _booster(self, dmat, metric):
        import xgboost as xgb

        name, extra = self.METRICS[metric]
        if metric == "map":
            # Plain "map" stops at 32 documents (found by experiment): ask for the largest query.
            name = f"map@{int(np.diff(dmat.get_uint_info('group_ptr')).max())}"
        params = {"objective": "rank:ndcg", "eval_metric": name, "base_score": 0.0, **extra}
        if self.nthread:
            params["nthread"] = self.nthread
        return xgb.train(params, dmat, num_boost_round=0)

    def setup(self, native, wl, metric):
        return native, self._booster(native, metric)

    @staticmethod
    def _parse(text):
        return float(text.rsplit(":", 1)[1])

    def call(self, prepared, wl, metric):
        if not self.fresh:
            dmat, booster = prepared
            return (lambda _arg: self._parse(booster.eval(dmat))), None

        def per_repeat():
            dmat = self.convert(wl)
            return dmat, self._booster(dmat, metric)

        return (lambda arg: self._parse(arg[1].eval(arg[0]))), per_repeat

    def reference(self, wl, metric):
        if metric == "p@10":
            return (skrank_value(wl, metric, ties="stable", denominator="min"),
                    "ties='stable', denominator='min'")
        return (skrank_value(wl, metric, ties="stable", no_relevant="one"),
                "ties='stable', no_relevant='one'")


class LightGBM(Tool):
    modules = ("lightgbm",)
    dists = ("lightgbm",)
    conventions = ("C++ metric on fixed scores: Dataset(label, group, init_score=scores) and "
                   "Booster(train_set=...).eval_train() without training; stable order of tied scores, "
                   "a query without relevant document scores 1; gain from label_gain (default 2**rel-1, "
                   "label_gain=[0, 1, 2, ...] for linear); map@k over min(R, k), run with k = the "
                   "largest query so that it is full MAP")

    def __init__(self, num_threads=None):
        self.num_threads = num_threads
        if num_threads:
            self.key, self.label = f"lightgbm-{num_threads}t", f"LightGBM (eval_train, num_threads={num_threads})"
        else:
            self.key, self.label = "lightgbm", "LightGBM (eval_train)"
        super().__init__()

    def supports(self, wl, metric):
        if metric not in ("ndcg@10", "ndcg_exp@10", "map"):
            return "no such LightGBM metric"
        if self.num_threads and metric not in ("ndcg@10", "ndcg_exp@10"):
            return "this variant is run for nDCG only"
        if wl.sizes.max() > 10_000:
            return "LightGBM's ranking metrics reject a query of more than 10,000 rows"
        return None

    def setup(self, native, wl, metric):
        import lightgbm as lgb

        X = np.zeros((wl.n_rows, 1), dtype=np.float32)
        ds = lgb.Dataset(X, label=wl.y_true, group=wl.sizes, init_score=wl.y_score,
                         params={"verbose": -1}, free_raw_data=False)
        params = {"objective": "lambdarank", "verbose": -1}
        if self.num_threads:
            params["num_threads"] = self.num_threads
        if metric == "map":
            params.update(metric="map", eval_at=[int(wl.sizes.max())])
        else:
            params.update(metric="ndcg", eval_at=[10])
            if metric == "ndcg@10":
                params["label_gain"] = list(range(31))
        return lgb.Booster(params=params, train_set=ds)

    def evaluate(self, prepared, wl, metric):
        return float(prepared.eval_train()[0][2])

    def reference(self, wl, metric):
        return (skrank_value(wl, metric, ties="stable", no_relevant="one"),
                "ties='stable', no_relevant='one'")


def all_tools():
    return [
        Skrank(), Skrank2D(), SkrankShuffled(), NpSort(),
        Sklearn(False), Sklearn(True),
        PytrecEval(), RanxWarm(), Torchmetrics(), PandasLoop(),
        XGBoost(), XGBoost(nthread=1), XGBoost(fresh=True), LightGBM(), LightGBM(num_threads=1),
    ]
