"""``skrank demo``: tune real rankers end to end and show the result.

Synthetic queries from :func:`skrank.datasets.make_ranking` (or an SVMlight
file with query ids) are split by query into training and held-out queries.
Each installed ranker is grid-searched with ``GridSearchCV(...,
scoring="ndcg_exp@10", cv=QueryKFold(...))`` on the training queries, the
query ids reaching the splitter, the scorer and the rankers through metadata
routing; the refitted best model of each ranker ranks the held-out queries,
which :func:`skrank.evaluate` scores on several metrics and
:func:`skrank.compare` uses for a paired test of the best ranker against the
runner-up.  A figure shows metric@k curves and the per-query differences.
"""

import sys
import time
from dataclasses import dataclass, field

import numpy as np
from .datasets import make_ranking
from ._evaluate import evaluate

DEFAULT_PLOT = "skrank-demo.png"
SCORING = "ndcg_exp@10"
METRICS = ("ndcg_exp@10", "ndcg@10", "map", "mrr@10", "precision@5")
RANKERS = ("ridge", "hgb", "xgboost", "lightgbm")
# Ridge's penalty, in half decades around the best value on the default data (3000): the
# scaled Ridge barely changes below 300 (thousands of rows against 20 features), and
# the best of a grid is only known to be best when it is not at the grid's edge.
RIDGE_ALPHAS = (300.0, 1000.0, 3000.0, 10000.0, 30000.0)


def add_parser(sub):
    """The ``demo`` subcommand's parser."""
    demo = sub.add_parser(
        "demo", help="tune rankers end to end on synthetic (or your) data and plot them",
        description=(
            "Tune learning-to-rank models the scikit-learn way and compare them. "
            "The queries are split into training and held-out queries; on the training "
            "queries each installed ranker (a scaled Ridge regression and "
            "HistGradientBoostingRegressor always, XGBoost's XGBRanker and LightGBM's "
            f"LGBMRanker when installed) is grid-searched with scoring={SCORING!r} and "
            "QueryKFold cross-validation, then refitted. The held-out queries give each "
            "ranker's metrics with confidence intervals and a paired test (skrank.compare) "
            "of the best ranker against the runner-up. A figure shows metric@k curves and "
            "the per-query differences (needs matplotlib). Takes about 20 s of CPU with "
            "the defaults and every ranker installed (as docs/demo.md measures; less without "
            "XGBoost and LightGBM)."),
    )
    demo.prog = "skrank demo"
    demo.add_argument("--data", metavar="PATH", default=None,
                      help="an SVMlight / LETOR file with qid (label qid:ID f:v ...); "
                           "default: make_ranking's synthetic queries")
    demo.add_argument("--queries", type=int, default=300, metavar="N",
                      help="number of synthetic queries (default 300; ignored with --data)")
    demo.add_argument("--test-size", type=float, default=0.5, metavar="FRACTION",
                      help="share of the queries held out for the final comparison "
                           "(default 0.5)")
    demo.add_argument("--folds", type=int, default=3, metavar="K",
                      help="QueryKFold folds of the grid search (default 3)")
    demo.add_argument("--rankers", default=",".join(RANKERS), metavar="LIST",
                      help="comma-separated subset of " + ", ".join(RANKERS)
                           + " (default: all that are installed)")
    demo.add_argument("--n-estimators", type=int, default=50, metavar="N",
                      help="boosting rounds of the tree ensembles (default 50)")
    demo.add_argument("--n-jobs", type=int, default=1, metavar="N",
                      help="parallel fits of the grid search (default 1)")
    demo.add_argument("--plot", default=DEFAULT_PLOT, metavar="PATH",
                      help=f"where to write the figure (default {DEFAULT_PLOT})")
    demo.add_argument("--no-plot", dest="plot", action="store_const", const=None,
                      help="do not draw the figure")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("-q", "--quiet", action="store_true",
                      help="no progress lines; print only the results")
    return demo


@dataclass
class RankerResult:
    """One tuned ranker: its search and its held-out evaluation."""

    name: str
    best_params: dict
    cv_mean: float
    cv_std: float
    seconds: float
    y_score: np.ndarray
    evaluation: object                     # skrank.Evaluation on the held-out queries
    intervals: dict                        # metric -> (low, high)


@dataclass
class DemoResult:
    """What ``skrank demo`` computed (for tests and for Python users)."""

    description: str
    y_test: np.ndarray
    qid_test: np.ndarray
    n_train_queries: int
    rankers: list = field(default_factory=list)     # RankerResult, best CV score first
    skipped: dict = field(default_factory=dict)     # ranker -> reason
    comparison: object = None                       # skrank.Comparison, best vs runner-up
    figure: object = None                           # path written, or None


def _candidates(selected, n_estimators, seed):
    """(name, estimator, grid) of each selected ranker that is installed, and the skipped."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    found, skipped = [], {}
    if "ridge" in selected:
        found.append(("Ridge", make_pipeline(StandardScaler(), Ridge()),
                      {"ridge__alpha": list(RIDGE_ALPHAS)}))
    if "hgb" in selected:
        found.append(("HistGradientBoosting",
                      HistGradientBoostingRegressor(max_iter=n_estimators, early_stopping=False,
                                                    random_state=seed),
                      {"learning_rate": [0.1, 0.3], "max_leaf_nodes": [7, 31]}))
    if "xgboost" in selected:
        try:
            import xgboost
        except ImportError:
            skipped["XGBRanker"] = "xgboost is not installed (pip install xgboost-cpu)"
        else:
            ranker = xgboost.XGBRanker(objective="rank:ndcg", n_estimators=n_estimators,
                                       tree_method="hist", n_jobs=1, random_state=seed)
            found.append(("XGBRanker", ranker.set_fit_request(qid=True),
                          {"learning_rate": [0.1, 0.3], "max_depth": [3, 6]}))
    if "lightgbm" in selected:
        try:
            import lightgbm  # noqa: F401
        except ImportError:
            skipped["LGBMRanker"] = "lightgbm is not installed (pip install lightgbm)"
        else:
            from .rankers import QueryLGBMRanker

            found.append(("LGBMRanker",
                          QueryLGBMRanker(n_estimators=n_estimators, n_jobs=1, verbose=-1,
                                          random_state=seed),
                          {"learning_rate": [0.1, 0.3], "num_leaves": [7, 31]}))
    return found, skipped


def _load(args):
    """X, y, qid (rows sorted by query, as XGBoost needs) and a description."""
    if args.data is None:

        if args.queries < 4:
            raise ValueError(f"--queries must be an int >= 4. "
                             f"Got {args.queries} instead.")
        X, y, qid = make_ranking(n_queries=args.queries, random_state=args.seed)
        desc = (f"make_ranking(n_queries={args.queries}, random_state={args.seed}): "
                f"{args.queries} queries, {y.size:,} documents, {X.shape[1]} features, "
                f"grades 0-4")
        return X, y, qid, desc
    X, y, qid = _load_svmlight(args.data)
    # The tree learners here want dense input; LETOR features are dense anyway.
    X = X.toarray()
    order = np.argsort(qid, kind="stable")
    X, y, qid = X[order], y[order], qid[order]
    n_queries = np.unique(qid).size
    if n_queries < 4:
        raise ValueError(
            f"{args.data}: the demo needs at least 4 queries (it holds queries out for "
            f"testing and cross-validates on the others). Got {n_queries} "
            f"(qid {', '.join(map(str, np.unique(qid)[:3]))}) in {y.size:,} lines instead. "
            f"Pass a file with more queries, or leave --data out for synthetic data.")
    desc = (f"{args.data}: {n_queries} queries, {y.size:,} documents, {X.shape[1]} features, "
            f"labels {y.min():g}-{y.max():g}")
    return X, y, qid, desc


_SVMLIGHT_FORMAT = ("each line 'label qid:ID 1:value 2:value ...' (SVMlight / LETOR, as "
                    "MQ2008's files)")


def _load_svmlight(path):
    """scikit-learn's reader, with messages that name the file, the line and the fix."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y, qid = load_svmlight_file(path, query_id=True)
    except OSError:
        raise
    except (ValueError, TypeError) as exc:
        where = _first_bad_svmlight_line(path)
        raise ValueError(f"{path}{where}: not an SVMlight / LETOR line ({exc}). The demo "
                         f"reads {_SVMLIGHT_FORMAT}.") from None
    if y.size == 0:
        raise ValueError(f"{path}: no data line (an empty file). The demo reads "
                         f"{_SVMLIGHT_FORMAT}.")
    if qid.size != y.size or not _has_qid(path):
        raise ValueError(f"{path}:1: no 'qid:' field, so the queries are unknown. The demo "
                         f"reads {_SVMLIGHT_FORMAT}; add each line's query id after its "
                         f"label.")
    return X, y, qid


def _has_qid(path):
    with open(path, "rb") as f:
        for line in f:
            data = line.split(b"#", 1)[0].split()
            if data:
                return len(data) > 1 and data[1].startswith(b"qid:")
    return False


def _first_bad_svmlight_line(path):
    """``":N: 'text'"`` for the first line that is not ``label [qid:ID] idx:value ...``
    (read only once the file failed to load), or ""."""
    def number(text):
        try:
            float(text)
        except ValueError:
            return False
        return True

    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            data = line.split(b"#", 1)[0].split()
            if not data:
                continue
            pairs = [token.partition(b":") for token in data[1:]]
            if not number(data[0]) or not all(sep and number(value) and (key == b"qid" or
                                                                        key.isdigit())
                                              for key, sep, value in pairs):
                shown = line.decode("utf-8", "replace").strip()
                return f":{n}: {shown[:60] + ('...' if len(shown) > 60 else '')!r}"
    return ""


def _params_text(params):
    return ", ".join(f"{key.split('__')[-1]}={value:g}" if isinstance(value, float)
                     else f"{key.split('__')[-1]}={value}" for key, value in params.items())


def _checked_rankers(args):
    """The rankers ``--rankers`` names, after checking the demo's options."""
    selected = [name.strip().lower() for name in args.rankers.split(",") if name.strip()]
    unknown = sorted(set(selected) - set(RANKERS))
    if unknown or not selected:
        raise ValueError(f"--rankers must list some of {', '.join(RANKERS)}. "
                         f"Got {args.rankers!r} instead.")
    if not 0 < args.test_size < 1:
        raise ValueError(f"--test-size must be a fraction in (0, 1). "
                         f"Got {args.test_size} instead.")
    if args.folds < 2:
        raise ValueError(f"--folds must be an int >= 2. Got {args.folds} instead.")
    if args.n_estimators < 1:
        raise ValueError(f"--n-estimators must be an int >= 1. "
                         f"Got {args.n_estimators} instead.")
    return selected


def _add_intervals(result, rng):
    """Percentile bootstrap intervals of each ranker's held-out means, drawn together so
    that every ranker's interval comes from the same resampled queries."""
    from ._paired_tests import _bootstrap_interval, _bootstrap_means

    per_query = np.column_stack([r.evaluation.per_query[m] for r in result.rankers
                                 for m in METRICS])
    dist = _bootstrap_means(per_query, 2000, rng)
    low, high = _bootstrap_interval(per_query, dist, 0.95, "percentile")
    for j, ranker in enumerate(result.rankers):
        for m, metric in enumerate(METRICS):
            col = j * len(METRICS) + m
            ranker.intervals[metric] = (float(low[col]), float(high[col]))


def run(args, out, err=None):
    """Run the demo with parsed ``args``; write the report to ``out`` and progress
    to ``err`` (stderr); return a :class:`DemoResult`."""
    import sklearn
    from sklearn.model_selection import GridSearchCV
    from threadpoolctl import threadpool_limits

    from ._compare import compare
    from .model_selection import QueryKFold, QueryShuffleSplit

    err = sys.stderr if err is None else err

    def progress(text):
        if not args.quiet:
            err.write(text + "\n")
            err.flush()

    selected = _checked_rankers(args)

    X, y, qid, description = _load(args)
    split = QueryShuffleSplit(n_splits=1, test_size=args.test_size, random_state=args.seed)
    train, test = (np.sort(rows) for rows in next(split.split(X, qid=qid)))
    n_train = np.unique(qid[train]).size
    if n_train < args.folds:
        raise ValueError(f"--folds must not exceed the {n_train} training queries. "
                         f"Got {args.folds}.")
    result = DemoResult(description=description, y_test=y[test], qid_test=qid[test],
                        n_train_queries=n_train)
    progress(f"Data: {description}")
    progress(f"Tuning on {n_train} queries, comparing on {np.unique(qid[test]).size} "
             f"held-out queries.")

    rng = np.random.default_rng(args.seed)
    # One thread per fit: on a busy machine, OpenMP threads of the tree learners
    # wait for each other and a fit takes several times longer.  --n-jobs runs
    # fits in parallel instead.
    with sklearn.config_context(enable_metadata_routing=True), \
            threadpool_limits(limits=1, user_api="openmp"):
        candidates, result.skipped = _candidates(selected, args.n_estimators, args.seed)
        for name, reason in result.skipped.items():
            progress(f"{name} skipped: {reason}")
        if not candidates:
            raise ValueError("none of the rankers in --rankers is installed.")
        for i, (name, estimator, grid) in enumerate(candidates, 1):
            n_candidates = int(np.prod([len(v) for v in grid.values()]))
            progress(f"[{i}/{len(candidates)}] {name}: {n_candidates} candidates x "
                     f"{args.folds} folds = {n_candidates * args.folds} fits + refit ...")
            start = time.perf_counter()
            search = GridSearchCV(estimator, grid, scoring=SCORING, refit=True,
                                  cv=QueryKFold(args.folds), n_jobs=args.n_jobs,
                                  error_score="raise")
            search.fit(X[train], y[train], qid=qid[train])
            seconds = time.perf_counter() - start
            cv_mean = float(search.best_score_)
            cv_std = float(search.cv_results_["std_test_score"][search.best_index_])
            progress(f"      done in {seconds:.1f} s: CV {SCORING} {cv_mean:.4f} "
                     f"with {_params_text(search.best_params_)}")
            y_score = np.asarray(search.predict(X[test]), dtype=np.float64)
            evaluation = evaluate(y[test], y_score, qid=qid[test], metrics=list(METRICS))
            result.rankers.append(RankerResult(
                name=name, best_params=dict(search.best_params_), cv_mean=cv_mean,
                cv_std=cv_std, seconds=seconds, y_score=y_score, evaluation=evaluation,
                intervals={}))

    # Best first by cross-validation: the held-out queries only judge the choice.
    result.rankers.sort(key=lambda r: -r.cv_mean)
    _add_intervals(result, rng)

    if len(result.rankers) >= 2:
        best, runner = result.rankers[:2]
        result.comparison = compare({runner.name: runner.evaluation, best.name: best.evaluation},
                                    metrics=[SCORING], baseline=runner.name,
                                    random_state=args.seed)
    _report(args, result, out)
    if args.plot is not None:
        result.figure = _figure(args, result, out)
    return result


def _table(rows, align):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.ljust(w) if a == "<" else cell.rjust(w)
                 for cell, w, a in zip(row, widths, align)]
        lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _report(args, result, out):
    n_test = np.unique(result.qid_test).size
    out.write(f"\nskrank demo: {result.description}\n")
    out.write(f"\nTuning: GridSearchCV(scoring={SCORING!r}, cv=QueryKFold({args.folds}), "
              f"refit=True) on {result.n_train_queries} training queries\n")
    rows = [("ranker", "best parameters", f"CV {SCORING}", "time")]
    for r in result.rankers:
        rows.append((r.name, _params_text(r.best_params),
                     f"{r.cv_mean:.4f} ± {r.cv_std:.4f}", f"{r.seconds:.1f} s"))
    out.write(_table(rows, "<<>>"))
    for name, reason in result.skipped.items():
        out.write(f"  ({name} skipped: {reason})\n")

    out.write(f"\nHeld-out queries: {n_test} queries, {result.y_test.size:,} documents; "
              f"mean [95% bootstrap confidence interval]\n")
    missing = result.rankers[0].evaluation.n_no_relevant if result.rankers else 0
    if missing:
        out.write(f"{missing} of the {n_test} queries have no relevant document: each metric "
                  f"scores them 0 (no_relevant='zero'); LightGBM and XGBoost score them 1 "
                  f"(no_relevant='one'), which raises every mean.\n")
    rows = [("ranker",) + METRICS]
    for r in result.rankers:
        rows.append((r.name,) + tuple(
            f"{r.evaluation.mean[m]:.4f} [{r.intervals[m][0]:.3f}, {r.intervals[m][1]:.3f}]"
            for m in METRICS))
    # One metric per line when the table would not fit a terminal.
    out.write(_table([row[:3] for row in rows], "<>>"))
    out.write(_table([(row[0],) + row[3:] for row in rows], "<>>>"))

    if result.comparison is None:
        out.write("\nOnly one ranker ran: nothing to compare.\n")
        return
    pair = result.comparison.pairs[0]
    if pair.significant:
        better = pair.system_b if pair.difference > 0 else pair.system_a
        verdict = f"{better} is significantly better at alpha = {result.comparison.alpha:g}"
    else:
        verdict = f"no significant difference at alpha = {result.comparison.alpha:g}"
    out.write(f"\nBest by cross-validation: {pair.system_b}; runner-up: {pair.system_a}. "
              f"On the {n_test} held-out queries\n(paired randomization test, "
              f"skrank.compare):\n")
    rows = [(f"{SCORING} difference", f"{pair.difference:+.4f} [95% CI {pair.ci_low:+.4f}, "
                                      f"{pair.ci_high:+.4f}]"),
            ("wins/ties/losses", f"{pair.wins}/{pair.ties}/{pair.losses}"),
            ("p-value", f"{_format_p(pair.p_value, result.comparison)}: {verdict}")]
    out.write(_table(rows, "<<"))


def _format_p(p, comparison):
    """A Monte Carlo p-value is at least 1/(B+1): at that floor, say so rather than print
    a number that reads as precise."""
    draws = comparison.n_resamples
    if draws and not comparison.exact and p <= 1.0 / (draws + 1) * (1 + 1e-9):
        return f"{p:.1e} (the smallest p-value {draws:,} resamples can give)"
    from ._compare import format_p

    return format_p(p)


def _figure(args, result, out):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        out.write('\nFigure skipped: matplotlib is not installed. Install it with '
                  'pip install "skrank[plot]" (or pip install matplotlib) and run again.\n')
        return None
    from .plot import MetricAtKDisplay, PerQueryDisplay

    fig = Figure(figsize=(12, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.2])
    scores = {r.name: r.y_score for r in result.rankers}
    MetricAtKDisplay.from_predictions(result.y_test, scores, qid=result.qid_test,
                                      metric=SCORING.split("@")[0], max_k=20, confidence=0.95,
                                      random_state=args.seed, ax=left,
                                      title=f"{np.unique(result.qid_test).size} held-out queries")
    if len(result.rankers) >= 2:
        best, runner = result.rankers[:2]
        PerQueryDisplay.from_predictions(result.y_test, best.y_score, qid=result.qid_test,
                                         baseline_score=runner.y_score, metric=SCORING,
                                         name=best.name, baseline_name=runner.name,
                                         random_state=args.seed, ax=right,
                                         comparison=result.comparison)  # the report's p
    else:
        only = result.rankers[0]
        PerQueryDisplay.from_predictions(result.y_test, only.y_score, qid=result.qid_test,
                                         metric=SCORING, name=only.name, ax=right)
    fig.suptitle(f"skrank demo: {result.description}", fontsize="medium")
    fig.savefig(args.plot, dpi=80)
    out.write(f"\nFigure written to {args.plot}: {SCORING.split('@')[0]}@k of each ranker "
              f"(left) and the per-query differences of the best two (right).\n")
    return args.plot
