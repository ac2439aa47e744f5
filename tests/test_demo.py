"""``skrank demo`` on tiny configurations: its tables, its test and its figure."""

import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV

import skrank
from skrank._demo import METRICS, RIDGE_ALPHAS, run
from skrank.cli import _build_parser, main
from skrank.datasets import make_ranking
from skrank.model_selection import QueryKFold, QueryShuffleSplit

LTR = Path(__file__).resolve().parents[2] / "shared" / "data" / "ltr"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TINY = ["--queries", "30", "--folds", "2", "--n-estimators", "5", "--seed", "1"]


def _run(argv):
    args = _build_parser().parse_args(["demo", *argv])
    out, err = io.StringIO(), io.StringIO()
    result = run(args, out, err)
    return result, out.getvalue(), err.getvalue()


def _table_rows(text, header):  # noqa: D401
    """Rows (name, cells) of the table that follows the line starting with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def test_tiny_demo_tables_are_skranks_values_on_the_held_out_queries(tmp_path):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "demo.png"
    result, out, err = _run([*TINY, "--rankers", "ridge,hgb", "--plot", str(figure)])

    # The held-out queries are those QueryShuffleSplit leaves out of training.
    X, y, qid = make_ranking(n_queries=30, random_state=1)
    train, test = next(QueryShuffleSplit(n_splits=1, test_size=0.5, random_state=1)
                       .split(X, qid=qid))
    np.testing.assert_array_equal(result.qid_test, np.sort(qid[test]))
    assert not set(qid[train]) & set(result.qid_test.tolist())

    # Tuning table: the best parameters and CV score of an independent GridSearchCV.
    tuning = {row[0]: row for row in _table_rows(out, "  ranker  ")}
    ridge = next(r for r in result.rankers if r.name == "Ridge")
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train = np.sort(train)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(make_pipeline(StandardScaler(), Ridge()),
                              {"ridge__alpha": list(RIDGE_ALPHAS)}, scoring="ndcg_exp@10",
                              cv=QueryKFold(2)).fit(X[train], y[train], qid=qid[train])
    assert ridge.best_params == search.best_params_
    assert ridge.cv_mean == pytest.approx(search.best_score_, rel=1e-12)
    assert tuning["Ridge"][1] == f"alpha={search.best_params_['ridge__alpha']:g}"
    assert tuning["Ridge"][2].startswith(f"{search.best_score_:.4f} ± ")
    np.testing.assert_allclose(ridge.y_score, search.predict(X[np.sort(test)]))

    # Held-out table: each cell is skrank's metric of the ranker's predictions.
    held_out = {}
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Held-out queries"))
    start = next(i for i in range(start, len(lines)) if lines[i].startswith("  ranker"))
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] == "ranker":
            header = cells[1:]
            continue
        held_out.setdefault(cells[0], {}).update(zip(header, cells[1:]))
    assert set(held_out) == {"Ridge", "HistGradientBoosting"}
    for ranker in result.rankers:
        expected = {m: getattr_metric(m, result.y_test, ranker.y_score, result.qid_test)
                    for m in METRICS}
        for metric in METRICS:
            mean, low, high = map(float, re.findall(r"[-0-9.]+", held_out[ranker.name][metric]))
            assert mean == round(expected[metric], 4), (ranker.name, metric)
            assert low <= expected[metric] <= high
            assert ranker.evaluation.mean[metric] == pytest.approx(expected[metric], rel=1e-12)

    # The paired test is skrank.compare's on the per-query values, best minus runner-up.
    best, runner = result.rankers[:2]
    assert best.cv_mean >= runner.cv_mean
    a = skrank.per_query_scores("ndcg", result.y_test, best.y_score, qid=result.qid_test, k=10,
                                gain="exponential").score
    b = skrank.per_query_scores("ndcg", result.y_test, runner.y_score, qid=result.qid_test,
                                k=10, gain="exponential").score
    pair = result.comparison.pairs[0]
    assert (pair.system_b, pair.system_a) == (best.name, runner.name)
    assert pair.difference == pytest.approx(np.mean(a - b), abs=1e-12)
    assert (pair.wins, pair.ties, pair.losses) == (int(np.sum(a > b)), int(np.sum(a == b)),
                                                   int(np.sum(a < b)))
    assert f"{pair.wins}/{pair.ties}/{pair.losses}" in out
    p_text = f"{pair.p_value:.4f}" if pair.p_value >= 1e-4 else f"{pair.p_value:.1e}"
    assert f"p-value                 {p_text}: " in out

    assert result.figure == str(figure)
    assert figure.read_bytes()[:8] == PNG_MAGIC
    assert f"Figure written to {figure}" in out
    assert "[1/2] Ridge" in err and "[2/2] HistGradientBoosting" in err


def test_default_demo_finds_ridges_best_alpha_inside_its_grid():
    """On the default data, the best penalty is a value with a worse one on each side:
    the grid brackets the optimum instead of stopping at its edge."""
    result, out, _ = _run(["--rankers", "ridge", "--no-plot", "-q"])
    alpha = result.rankers[0].best_params["ridge__alpha"]
    assert alpha in RIDGE_ALPHAS[1:-1], alpha
    assert list(RIDGE_ALPHAS) == sorted(RIDGE_ALPHAS)
    assert f"alpha={alpha:g}" in out


def getattr_metric(name, y_true, y_score, qid):
    """A metric by its scorer name, through its own public function."""
    spec, params = skrank._declare.names.parse_metric_name(name)
    return spec.function(y_true, y_score, qid=qid, **params)


def test_quiet_demo_prints_no_progress_and_same_results():
    loud, out_loud, err_loud = _run([*TINY, "--rankers", "ridge", "--no-plot"])
    quiet, out_quiet, err_quiet = _run([*TINY, "--rankers", "ridge", "--no-plot", "-q"])
    assert err_loud and not err_quiet
    assert quiet.rankers[0].cv_mean == loud.rankers[0].cv_mean
    assert "Only one ranker ran" in out_quiet and quiet.figure is None


def test_missing_rankers_and_matplotlib_are_skipped_with_a_message(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "xgboost", None)
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    figure = tmp_path / "demo.png"
    result, out, err = _run([*TINY, "--plot", str(figure)])
    assert sorted(r.name for r in result.rankers) == ["HistGradientBoosting", "Ridge"]
    assert "XGBRanker skipped: xgboost is not installed (pip install xgboost-cpu)" in out
    assert "LGBMRanker skipped: lightgbm is not installed (pip install lightgbm)" in out
    assert 'Figure skipped: matplotlib is not installed. Install it with pip install ' \
           '"skrank[plot]"' in out
    assert not figure.exists() and result.figure is None


@pytest.mark.skipif(not (LTR / "lightgbm_lambdarank").is_dir(),
                    reason=f"LTR data absent at {LTR}")
def test_demo_on_an_svmlight_file():
    from sklearn.datasets import load_svmlight_file

    path = LTR / "lightgbm_lambdarank" / "rank.test.svmlight"
    result, out, _ = _run(["--data", str(path), "--rankers", "ridge", "--folds", "2",
                           "--no-plot", "-q"])
    X, y, qid = load_svmlight_file(str(path), query_id=True)
    assert f"{np.unique(qid).size} queries, {y.size:,} documents, {X.shape[1]} features" in out
    assert set(result.qid_test.tolist()) < set(qid.tolist())


@pytest.mark.parametrize("argv, message", [
    (["--rankers", "ridge,svm"], "--rankers must list some of ridge, hgb, xgboost, lightgbm"),
    (["--test-size", "1.5"], "--test-size must be a fraction in (0, 1). Got 1.5"),
    (["--folds", "1"], "--folds must be an int >= 2. Got 1"),
    (["--queries", "2"], "--queries must be an int >= 4. Got 2"),
    (["--queries", "6", "--folds", "5"], "--folds must not exceed the 3 training queries"),
])
def test_bad_options_exit_2_with_one_line(capsys, argv, message):
    assert main(["demo", *argv, "--no-plot", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("skrank demo: error: --") and message in err
    assert err.count("\n") == 1


def test_help_explains_the_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--data", "--plot", "--no-plot", "--rankers", "--folds", "--quiet",
                   "ndcg_exp@10", "QueryKFold"):
        assert option in text


def test_p_value_at_the_monte_carlo_floor_says_so():
    from types import SimpleNamespace

    from skrank._demo import _format_p

    drawn = SimpleNamespace(n_resamples=10_000, exact=False)
    assert _format_p(1 / 10_001, drawn) == \
        "1.0e-04 (the smallest p-value 10,000 resamples can give)"
    assert _format_p(0.0123, drawn) == "0.0123"
    # an exact test's small p-value is just a number
    assert _format_p(1 / 1024, SimpleNamespace(n_resamples=None, exact=True)) == "0.0010"
