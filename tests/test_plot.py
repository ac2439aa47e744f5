"""skrank.plot: the plotted data are skrank's metric values, and every display renders."""

import itertools
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from scipy import stats  # noqa: E402

import skrank  # noqa: E402
from skrank.datasets import make_ranking
from skrank.plot import MetricAtKDisplay, MetricDistributionDisplay, PerQueryDisplay

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=60, n_docs=(3, 30), random_state=0)
    rng = np.random.default_rng(1)
    scores = {
        "good": _fitted(X, y),
        "first feature": X[:, 0],
        "coarse": np.round(_fitted(X, y)),  # many ties
    }
    perm = rng.permutation(y.size)  # rows in any order
    return y[perm], {k: v[perm] for k, v in scores.items()}, qid[perm], X[perm]


def _fitted(X, y):
    from sklearn.linear_model import LinearRegression

    return LinearRegression().fit(X, y).predict(X)


def _saved_png(display, tmp_path, name):
    path = tmp_path / f"{name}.png"
    display.figure_.savefig(path, dpi=50)
    assert path.read_bytes()[:8] == PNG_MAGIC
    return path


# --------------------------------------------------------------------------------------
# MetricAtKDisplay
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric, function, params", [
    ("ndcg", skrank.ndcg_score, {}),
    ("ndcg_exp", skrank.ndcg_score, {"gain": "exponential"}),
    ("precision", skrank.precision_at_k_score, {}),
    ("map", skrank.map_score, {}),
])
def test_metric_at_k_plots_each_metric_at_each_cutoff(data, tmp_path, metric, function, params):
    y, scores, qid, _ = data
    display = MetricAtKDisplay.from_predictions(y, scores, qid=qid, metric=metric, max_k=7)
    assert display.k.tolist() == list(range(1, 8))
    for name, y_score in scores.items():
        expected = [function(y, y_score, qid=qid, k=k, **params) for k in range(1, 8)]
        np.testing.assert_allclose(display.values[name], expected, rtol=1e-12)
        line = display.lines_[name]
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 8))
        np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)
        assert line.get_label() == name
    assert display.ax_.get_ylabel() == f"mean {metric}@k"
    assert display.bands_ == {}
    _saved_png(display, tmp_path, f"at_k_{metric}")


def test_metric_at_k_bootstrap_bands_match_scipy(data, tmp_path):
    y, scores, qid, _ = data
    display = MetricAtKDisplay.from_predictions(y, scores, qid=qid, metric="ndcg", max_k=5,
                                                confidence=0.9, n_resamples=4000,
                                                random_state=0)
    for name, y_score in scores.items():
        low, high = display.intervals[name]
        for k in (1, 5):
            per_q = skrank.per_query_scores("ndcg", y, y_score, qid=qid, k=k).score
            ref = stats.bootstrap((per_q,), np.mean, confidence_level=0.9, n_resamples=4000,
                                  method="percentile", random_state=1).confidence_interval
            # two bootstrap runs of 4000 resamples agree to about 0.01
            assert low[k - 1] == pytest.approx(ref.low, abs=0.012)
            assert high[k - 1] == pytest.approx(ref.high, abs=0.012)
            assert low[k - 1] < display.values[name][k - 1] < high[k - 1]
        band = display.bands_[name].get_paths()[0].vertices
        assert band[:, 1].min() == pytest.approx(low.min())
        assert band[:, 1].max() == pytest.approx(high.max())
    again = MetricAtKDisplay.from_predictions(y, scores, qid=qid, metric="ndcg", max_k=5,
                                              confidence=0.9, n_resamples=4000, random_state=0)
    np.testing.assert_array_equal(again.intervals["good"][0], display.intervals["good"][0])
    _saved_png(display, tmp_path, "at_k_bands")


def test_metric_at_k_from_estimator_reads_the_qid_column(data, tmp_path):
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import Ridge

    y, _, qid, X = data
    model = Ridge().fit(X, y)
    from_arrays = MetricAtKDisplay.from_estimator(model, X, y, qid=qid, max_k=4)
    frame = pd.DataFrame(X).rename(columns=str)
    frame_model = Ridge().fit(frame, y)
    frame["qid"] = qid

    class DropQid:  # a model that ignores the qid column, as a pipeline would
        def predict(self, X):
            return frame_model.predict(X.drop(columns="qid"))

    from_frame = MetricAtKDisplay.from_estimator({"ridge": DropQid()}, frame, y, max_k=4)
    np.testing.assert_allclose(from_frame.values["ridge"], from_arrays.values["Ridge"])
    expected = [skrank.ndcg_score(y, model.predict(X), qid=qid, k=k) for k in range(1, 5)]
    np.testing.assert_allclose(from_arrays.values["Ridge"], expected)
    with pytest.raises(ValueError, match="qid is required"):
        MetricAtKDisplay.from_estimator(model, X, y)


def test_plot_draws_on_the_given_axes_and_returns_the_display(data, tmp_path):
    y, scores, qid, _ = data
    fig, (left, right) = plt.subplots(1, 2)
    display = MetricAtKDisplay.from_predictions(y, scores["good"], qid=qid, name="mine",
                                                max_k=3, ax=right)
    assert display.ax_ is right and display.figure_ is fig
    assert display.plot(ax=left) is display and display.ax_ is left
    assert list(display.lines_) == ["mine"]
    _saved_png(display, tmp_path, "two_axes")


# --------------------------------------------------------------------------------------
# PerQueryDisplay
# --------------------------------------------------------------------------------------


def test_per_query_one_system_plots_sorted_per_query_values(data, tmp_path):
    y, scores, qid, _ = data
    display = PerQueryDisplay.from_predictions(y, scores["good"], qid=qid, metric="map@10",
                                               name="good")
    ref = skrank.per_query_scores("map", y, scores["good"], qid=qid, k=10)
    by_qid = dict(zip(ref.qid.tolist(), ref.score.tolist()))
    assert sorted(display.qid.tolist()) == sorted(by_qid)
    np.testing.assert_array_equal(display.values, [by_qid[q] for q in display.qid.tolist()])
    assert np.all(np.diff(display.values) <= 0)
    heights = [bar.get_height() for bar in display.bars_]
    np.testing.assert_array_equal(heights, display.values)
    assert display.mean_line_.get_ydata()[0] == pytest.approx(ref.score.mean())
    assert display.p_value is None
    _saved_png(display, tmp_path, "per_query_one")


def test_per_query_differences_are_paired_by_query_and_sorted(data, tmp_path):
    y, scores, qid, _ = data
    display = PerQueryDisplay.from_predictions(
        y, scores["good"], qid=qid, baseline_score=scores["coarse"], metric="ndcg_exp@5",
        name="good", baseline_name="coarse", min_difference=0.05, random_state=0)
    a = skrank.per_query_scores("ndcg", y, scores["good"], qid=qid, k=5, gain="exponential")
    b = skrank.per_query_scores("ndcg", y, scores["coarse"], qid=qid, k=5, gain="exponential")
    diff = dict(zip(a.qid.tolist(), (a.score - b.score).tolist()))
    np.testing.assert_allclose(display.values, [diff[q] for q in display.qid.tolist()],
                               atol=1e-15)
    assert np.all(np.diff(display.values) <= 0)
    np.testing.assert_array_equal([bar.get_height() for bar in display.bars_], display.values)
    colors = [matplotlib.colors.to_hex(bar.get_facecolor()) for bar in display.bars_]
    blue, red = matplotlib.colors.to_hex("tab:blue"), matplotlib.colors.to_hex("tab:red")
    values = display.values
    assert colors.count(blue) == int(np.sum(values >= 0.05))
    assert colors.count(red) == int(np.sum(values <= -0.05))
    legend = [t.get_text() for t in display.ax_.get_legend().get_texts()]
    assert legend[0] == f"good better: {int(np.sum(values >= 0.05))}"
    assert "p = " in display.ax_.get_title() and "good − coarse" in display.ax_.get_title()
    _saved_png(display, tmp_path, "per_query_two")


def test_per_query_p_value_is_the_exact_sign_flip_test_on_few_queries():
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(9), 6)
    y = rng.integers(0, 3, qid.size).astype(float)
    s1, s2 = y + rng.normal(size=y.size), rng.normal(size=y.size)
    display = PerQueryDisplay.from_predictions(y, s1, qid=qid, baseline_score=s2,
                                               metric="ndcg@3", n_resamples=10_000)
    d = (skrank.per_query_scores("ndcg", y, s1, qid=qid, k=3).score
         - skrank.per_query_scores("ndcg", y, s2, qid=qid, k=3).score)
    # every one of the 2**9 sign assignments, as a slow loop
    observed = abs(d.mean())
    flips = [abs(np.mean(d * np.array(signs))) >= observed - 1e-12
             for signs in itertools.product([1, -1], repeat=d.size)]
    assert display.p_value == pytest.approx(np.mean(flips))
    assert display.p_value < 0.05
    assert "(significant at 0.05)" in display.ax_.get_title()


def test_per_query_from_estimator_matches_from_predictions(data):
    from sklearn.linear_model import Ridge
    from sklearn.dummy import DummyRegressor

    y, _, qid, X = data
    ridge, dummy = Ridge().fit(X, y), DummyRegressor().fit(X, y)
    display = PerQueryDisplay.from_estimator(ridge, X, y, qid=qid, baseline=dummy,
                                             random_state=0)
    expected = PerQueryDisplay.from_predictions(y, ridge.predict(X), qid=qid,
                                                baseline_score=dummy.predict(X),
                                                name="Ridge", baseline_name="DummyRegressor",
                                                random_state=0)
    np.testing.assert_array_equal(display.values, expected.values)
    assert (display.name, display.baseline_name) == ("Ridge", "DummyRegressor")
    assert display.p_value == expected.p_value


# --------------------------------------------------------------------------------------
# MetricDistributionDisplay
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["box", "violin"])
def test_distribution_plots_the_per_query_values(data, tmp_path, kind):
    y, scores, qid, _ = data
    display = MetricDistributionDisplay.from_predictions(y, scores, qid=qid, metric="mrr@10",
                                                         kind=kind)
    assert list(display.values) == list(scores)
    means = []
    for name, y_score in scores.items():
        ref = skrank.per_query_scores("mrr", y, y_score, qid=qid, k=10).score
        np.testing.assert_array_equal(np.sort(display.values[name]), np.sort(ref))
        means.append(ref.mean())
    np.testing.assert_allclose(display.means_.get_ydata(), means)
    if kind == "box":
        medians = [line.get_ydata()[0] for line in display.artists_["medians"]]
        np.testing.assert_allclose(medians, [np.median(v) for v in display.values.values()])
    else:
        assert len(display.artists_["bodies"]) == len(scores)
    assert [t.get_text() for t in display.ax_.get_xticklabels()] == list(scores)
    _saved_png(display, tmp_path, f"distribution_{kind}")


def test_skipped_queries_are_left_out_of_the_distribution():
    y = np.array([1.0, 0, 0, 0, 2, 1])
    qid = np.array([1, 1, 2, 2, 3, 3])
    s = np.array([0.9, 0.1, 0.5, 0.4, 0.1, 0.9])
    display = MetricDistributionDisplay.from_predictions(y, s, qid=qid, metric="ndcg")
    assert display.values["system"].size == 3     # the no-relevant query scores zero
    assert display.values["system"].min() == 0.0


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors(data):
    y, scores, qid, _ = data
    with pytest.raises(skrank.InvalidParameterError, match="metric must be a metric name "
                                                           "without a cutoff"):
        MetricAtKDisplay.from_predictions(y, scores, qid=qid, metric="ndcg@10")
    with pytest.raises(ValueError, match="unknown metric name 'ndgc@1'"):
        MetricAtKDisplay.from_predictions(y, scores, qid=qid, metric="ndgc")
    with pytest.raises(skrank.InvalidParameterError, match="max_k must be an int >= 1"):
        MetricAtKDisplay.from_predictions(y, scores, qid=qid, max_k=0)
    with pytest.raises(skrank.InvalidParameterError, match=r"confidence must be a finite "
                                                           r"number in \(0, 1\)"):
        MetricAtKDisplay.from_predictions(y, scores, qid=qid, confidence=95)
    with pytest.raises(skrank.InvalidParameterError, match="at least one system"):
        MetricDistributionDisplay.from_predictions(y, {}, qid=qid)
    with pytest.raises(skrank.InvalidParameterError, match="kind must be one of 'box', "
                                                           "'violin'"):
        MetricDistributionDisplay.from_predictions(y, scores, qid=qid, kind="bar")
    with pytest.raises(skrank.InvalidParameterError, match="name and baseline_name must differ"):
        PerQueryDisplay.from_predictions(y, scores["good"], qid=qid, name="a",
                                         baseline_score=scores["coarse"], baseline_name="a")
    with pytest.raises(skrank.InvalidParameterError, match="name is for a single system"):
        MetricAtKDisplay.from_predictions(y, scores, qid=qid, name="x")


def test_without_matplotlib_the_error_says_how_to_install_it(data, monkeypatch):
    y, scores, qid, _ = data
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r'pip install "skrank\[plot\]"'):
        MetricAtKDisplay.from_predictions(y, scores, qid=qid)


# --------------------------------------------------------------------------------------
# the user guide's pictures
# --------------------------------------------------------------------------------------

DOCS = __import__("pathlib").Path(__file__).resolve().parents[1] / "docs"


def test_plot_pages_show_pictures_drawn_by_their_own_code(tmp_path):
    import importlib.util
    import re

    spec = importlib.util.spec_from_file_location("make_images",
                                                  DOCS / "images" / "make_images.py")
    make_images = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_images)
    pages = sorted(DOCS.glob("plot_*.md"))
    assert {p.stem for p in pages} >= {"plot_metric_at_k", "plot_per_query",
                                       "plot_distribution"}
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for page in pages:
        assert page.name in index, f"{page.name} is not linked from docs/index.md"
        linked = re.findall(r"\(images/([\w.-]+\.png)\)", page.read_text(encoding="utf-8"))
        assert linked, page.name
        drawn = make_images.render(page, tmp_path)
        assert [p.name for p in drawn] == linked
        for name in linked:
            assert (tmp_path / name).read_bytes()[:8] == PNG_MAGIC
            committed = DOCS / "images" / name
            assert committed.read_bytes()[:8] == PNG_MAGIC
            assert committed.stat().st_size < 60_000, f"{name}: keep the pictures small"


def test_import_skrank_imports_no_plotting_library():
    import subprocess

    code = ("import sys, skrank; skrank.plot, skrank.datasets; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
