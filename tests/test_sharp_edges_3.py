"""Sharp edges met by using skrank from outside, turn three (issue 25).

One test group per item of the issue; each failed on the code before its fix.
"""

import numpy as np
import pytest

import skrank

# --------------------------------------------------------------------------------------
# Wrong numbers: ERR on the array-API path sums log(1 - R) within each query.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_err_device_matches_numpy_on_a_million_rows(dtype, rtol):
    """The continuation probability of a row is a product over the rows above it in
    its query only: a cumulative sum over the whole call made its error grow with the
    call's size (2.6e-2 in float32 at 1M rows)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    rng = np.random.default_rng(25)
    n_queries, size = 50_000, 20  # 1,000,000 rows
    qid = np.repeat(np.arange(n_queries), size)
    y_true = rng.integers(0, 5, qid.size).astype(dtype)
    y_score = rng.random(qid.size).astype(dtype)
    expected = skrank.per_query_scores("err@10", y_true, y_score, qid=qid).score
    got = skrank.per_query_scores("err@10", torch.asarray(y_true), torch.asarray(y_score),
                                  qid=torch.asarray(qid)).score.numpy()
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def test_log_factorial_table_matches_gammaln_on_a_long_query():
    """Tie averages of hit rate and MRR on a 60,000-document query use log(n!): a running
    sum of logs drifted by 1e-11 from scipy's gammaln, which the NumPy path uses."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    n = 60_000
    y_true = np.zeros(n)
    y_true[[5, 7, 30_000]] = 1
    y_score = np.zeros(n)
    y_score[:3] = 1.0  # a tie group of 3 at the top, one of 59,997 below
    for metric in ("mrr", "hit_rate@10"):  # 1e-10 and 7e-7 off before
        expected = skrank.per_query_scores(metric, y_true, y_score, qid=np.zeros(n)).score
        got = skrank.per_query_scores(metric, torch.asarray(y_true), torch.asarray(y_score),
                                      qid=torch.zeros(n)).score.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


# --------------------------------------------------------------------------------------
# Wrong numbers: compare's exact randomization test and rounding noise.
# --------------------------------------------------------------------------------------


def _exact_randomization_p(a, b):
    """Every sign flip of the differences, in exact rational arithmetic."""
    import itertools
    from fractions import Fraction

    diffs = [Fraction(str(y)) - Fraction(str(x)) for x, y in zip(a, b)]
    observed = abs(sum(diffs))
    flips = list(itertools.product((1, -1), repeat=len(diffs)))
    extreme = sum(abs(sum(s * d for s, d in zip(signs, diffs))) >= observed for signs in flips)
    return extreme / len(flips)


def test_exact_randomization_p_with_a_mean_difference_zero_in_decimal():
    a = {"q0": 0, "q1": .8, "q2": .4, "q3": 0}
    b = {"q0": .2, "q1": .4, "q2": 0, "q3": .6}
    result = skrank.compare({"A": a, "B": b})
    assert result.exact
    assert result.pairs[0].p_value == 1.0 == _exact_randomization_p(a.values(), b.values())
    # the shift bootstrap sees no difference either
    assert skrank.compare({"A": a, "B": b}, test="bootstrap", random_state=0).pairs[0].p_value == 1.0


def test_exact_randomization_p_matches_enumeration_in_rationals():
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(3, 9))
        a = np.round(rng.integers(0, 11, n) / 10, 1)
        b = np.round(rng.integers(0, 11, n) / 10, 1)
        qids = [f"q{i}" for i in range(n)]
        result = skrank.compare({"A": dict(zip(qids, a)), "B": dict(zip(qids, b))})
        assert result.exact
        assert result.pairs[0].p_value == pytest.approx(_exact_randomization_p(a, b), abs=1e-15)


# --------------------------------------------------------------------------------------
# Item 4: warn when the default decided, not when the user did.
# --------------------------------------------------------------------------------------

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
RUN_MISSING = {"q1": {"a": 0.9, "b": 0.1}}
RUN_UNJUDGED = {"q1": {"a": 0.9, "b": 0.1}, "q2": {"c": 0.3}, "q9": {"z": 0.2}}


@pytest.mark.parametrize("option, run, choices", [
    ("missing_queries", RUN_MISSING, ("skip", "zero")),
    ("unjudged_queries", RUN_UNJUDGED, ("skip",)),
])
def test_coverage_warns_only_when_the_default_decided(option, run, choices):
    import warnings

    with pytest.warns(UserWarning, match=f"{option}="):
        default = skrank.evaluate(qrels=QRELS, run=run, metrics=["ndcg"])
    for choice in choices:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            chosen = skrank.evaluate(qrels=QRELS, run=run, metrics=["ndcg"], **{option: choice})
        if choice == "skip":
            assert chosen.mean == default.mean
    if option == "missing_queries":  # the choice still does what it says
        assert chosen.mean["ndcg"] == pytest.approx(0.5)  # q1 1, q2 0
        assert default.mean["ndcg"] == pytest.approx(1.0)


# --------------------------------------------------------------------------------------
# Item 3: infinite scores are orderable; NaN stays an error.
# --------------------------------------------------------------------------------------

METRIC_NAMES = ["ndcg@3", "ndcg_exp", "map", "mrr", "rbp", "precision@2",
                "recall@2", "hit_rate@1", "r_precision", "dcg@2", "cg@2"]


def _with_infinities(rng, n):
    """Scores with -inf, +inf and ties among them, and the same order in finite numbers."""
    finite = rng.integers(0, 4, n).astype(float)
    kind = rng.integers(0, 3, n)  # 0: -inf, 1: finite, 2: +inf
    infinite = np.where(kind == 0, -np.inf, np.where(kind == 2, np.inf, finite))
    ordered = np.where(kind == 0, -10.0, np.where(kind == 2, 10.0, finite))
    return infinite, ordered


def test_infinite_scores_rank_as_the_same_order_in_finite_numbers():
    rng = np.random.default_rng(7)
    qid = np.repeat(np.arange(30), 6)
    y_true = rng.integers(0, 3, qid.size)
    infinite, ordered = _with_infinities(rng, qid.size)
    before = infinite.copy()
    for ties in ("average", "pessimistic", "optimistic", "stable"):
        got = skrank.evaluate(y_true, infinite, qid=qid, metrics=METRIC_NAMES, ties=ties)
        expected = skrank.evaluate(y_true, ordered, qid=qid, metrics=METRIC_NAMES, ties=ties)
        for name in METRIC_NAMES:
            np.testing.assert_array_equal(got.per_query[name], expected.per_query[name])
    np.testing.assert_array_equal(infinite, before)  # the input is not changed
    # 2-D, and a metric function directly
    assert skrank.ndcg_score(y_true.reshape(30, 6), infinite.reshape(30, 6), k=3) == \
        skrank.ndcg_score(y_true.reshape(30, 6), ordered.reshape(30, 6), k=3)
    # retrieved: unretrieved rows' scores are ignored
    retrieved = rng.random(qid.size) < 0.8
    assert skrank.map_score(y_true, infinite, qid=qid, retrieved=retrieved) == \
        skrank.map_score(y_true, ordered, qid=qid, retrieved=retrieved)


def test_infinite_scores_in_a_recommender_matrix_and_with_exclude():
    import scipy.sparse as sp

    rng = np.random.default_rng(8)
    y_true = sp.csr_array((rng.random((20, 15)) < 0.2).astype(float))
    infinite, ordered = _with_infinities(rng, 300)
    infinite, ordered = infinite.reshape(20, 15), ordered.reshape(20, 15)
    exclude = sp.csr_array(rng.random((20, 15)) < 0.1)
    for kwargs in ({}, {"exclude": exclude}):
        got = skrank.evaluate(y_true, infinite, metrics=["ndcg@5", "recall@5"], **kwargs)
        expected = skrank.evaluate(y_true, ordered, metrics=["ndcg@5", "recall@5"], **kwargs)
        assert got.mean == expected.mean


def test_infinite_scores_on_the_array_api_path():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    rng = np.random.default_rng(9)
    qid = np.repeat(np.arange(20), 5)
    y_true = rng.integers(0, 3, qid.size).astype(float)
    infinite, ordered = _with_infinities(rng, qid.size)
    for metric in ("ndcg@3", "err@3", "map", "mrr"):
        got = skrank.per_query_scores(metric, torch.asarray(y_true), torch.asarray(infinite),
                                      qid=torch.asarray(qid)).score.numpy()
        expected = skrank.per_query_scores(metric, y_true, ordered, qid=qid).score
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_nan_scores_stay_an_error():
    with pytest.raises(ValueError, match="y_score must not contain NaN"):
        skrank.ndcg_score([1, 0], [np.nan, 0.5], qid=[0, 0])
    with pytest.raises(ValueError, match="y_score must not contain NaN"):
        skrank.ndcg_score([[1, 0]], [[np.nan, -np.inf]])


# --------------------------------------------------------------------------------------
# Item 11: docs render as code, model_selection's public names.
# --------------------------------------------------------------------------------------

def _pages():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def test_every_example_line_of_the_docs_is_inside_a_code_fence():
    """Outside a fence, ``>>>`` lines render as nested quotes (docs/performance.md's Dask
    example did)."""
    outside = []
    for page in _pages():
        fenced = False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and line.lstrip().startswith((">>>", "...")) and ">>>" in line:
                outside.append(f"{page.name}:{number}")
    assert outside == []


@pytest.mark.parametrize("module", ["model_selection", "plot", "rankers", "datasets", "dask",
                                    "io"])
def test_public_modules_export_their_public_names(module):
    """``__all__`` lists what a module defines for users, not what it imports (np,
    BaseEstimator, check_k in skrank.model_selection)."""
    import importlib

    if module == "dask":
        pytest.importorskip("dask.dataframe")
    mod = importlib.import_module(f"skrank.{module}")
    assert "np" not in mod.__all__ and "check_k" not in mod.__all__
    defined = {name for name, value in vars(mod).items() if not name.startswith("_")
               and getattr(value, "__module__", "").startswith(mod.__name__)
               and (isinstance(value, type) or callable(value))}
    assert defined <= set(mod.__all__)
    namespace = {}
    exec(f"from skrank.{module} import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(mod.__all__)


def _prose_and_code(page):
    prose, code, fenced = [], [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return "\n".join(prose), "\n".join(code)


@pytest.mark.parametrize("package, used", [
    ("pandas", ("to_pandas(", "import pandas", "pd.DataFrame")),
    ("matplotlib", ("import matplotlib", ".plot(", "from_evaluation(", "Display.from_")),
])
def test_a_page_that_runs_as_written_names_the_packages_beyond_skrank_it_needs(package, used):
    """skrank needs numpy, scipy and scikit-learn only: a page whose examples need another
    package says so in its text (docs/rag.md called to_pandas() without naming pandas)."""
    missing = []
    for page in _pages():
        prose, code = _prose_and_code(page)
        if any(u in code for u in used) and package not in prose \
                and f"needs {package}" not in code:
            missing.append(page.name)
    assert missing == []


# --------------------------------------------------------------------------------------
# Item 9: the command line's messages.
# --------------------------------------------------------------------------------------


def _cli(*argv):
    import io as _io
    from contextlib import redirect_stderr

    from skrank.cli import main

    err, out = _io.StringIO(), _io.StringIO()
    with redirect_stderr(err):
        status = main(list(argv), out=out)
    return status, out.getvalue(), err.getvalue()


def test_cli_run_line_short_of_a_field_gives_the_field_count(tmp_path):
    (tmp_path / "q").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 0.5 tag\n1 Q0 d2 2\n")
    status, _, err = _cli("evaluate", str(tmp_path / "q"), str(tmp_path / "r"))
    assert status == 2
    assert "r:2: expected 'qid Q0 docno rank score tag', got '1 Q0 d2 2' " \
           "(4 fields, expected at least 6)" in err
    (tmp_path / "q").write_text("1 0 d1\n")
    status, _, err = _cli("evaluate", str(tmp_path / "q"), str(tmp_path / "r"))
    assert "q:1: expected 'qid iter docno rel', got '1 0 d1' (3 fields, expected 4)" in err


def test_cli_unknown_metric_speaks_of_the_command_not_of_python(tmp_path):
    (tmp_path / "q").write_text("1 0 d1 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 0.5 tag\n")
    status, _, err = _cli("evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "ndgc@10")
    assert status == 2 and "Did you mean 'ndcg@10'?" in err
    assert "get_scorer_names" not in err and "judged=" not in err
    assert "'skrank evaluate --help' lists them" in err
    assert "Also (judged by the qrels) bpref, infap, judged@<k>" in err


def test_demo_help_states_the_measured_time(capsys):
    import re
    from pathlib import Path

    with pytest.raises(SystemExit):
        _cli("demo", "--help")
    shown = " ".join(capsys.readouterr().out.split())
    measured = (Path(__file__).resolve().parent.parent / "docs" / "demo.md").read_text()
    seconds = re.search(r"It takes about (\d+) s of CPU", measured)[1]
    assert f"about {seconds} s of CPU" in shown and "minute" not in shown


# --------------------------------------------------------------------------------------
# Item 8: `skrank demo --data FILE` names the file, the line and what to do.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("1 1:0.5 2:0.3\n0 1:0.1 2:0.9\n", "data.txt:1: no 'qid:' field, so the queries are unknown"),
    ("1 qid:1 1:0.5\n0 qid:1 1:0.1\n", "data.txt: the demo needs at least 4 queries"),
    ("hello world\n", "data.txt:1: 'hello world': not an SVMlight / LETOR line"),
    ("1 qid:1 1:0.5\n0 qid:1 1:abc\n", "data.txt:2: '0 qid:1 1:abc': not an SVMlight / LETOR line"),
    ("\n", "data.txt: no data line (an empty file)"),
])
def test_demo_data_errors_name_the_file_and_line(tmp_path, text, expected):
    path = tmp_path / "data.txt"
    path.write_text(text)
    status, _, err = _cli("demo", "--data", str(path), "--quiet", "--no-plot")
    assert status == 2
    assert expected in err
    assert "label qid:ID" in err or "--data out" in err  # what to do
    assert "zero-size array" not in err and "n_samples" not in err


# --------------------------------------------------------------------------------------
# Items 7 and 10: routing off, qid passed; what the README says happens.
# --------------------------------------------------------------------------------------


def _ranking_data():
    from skrank.datasets import make_ranking

    return make_ranking(n_queries=12, random_state=0)


def test_routing_off_with_qid_passed_says_routing_is_off():
    import sklearn
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, cross_validate

    from skrank.model_selection import QueryKFold

    X, y, qid = _ranking_data()
    with sklearn.config_context(enable_metadata_routing=False):
        for call in (
            lambda: GridSearchCV(Ridge(), {"alpha": [1.0]}, scoring="ndcg@10",
                                 cv=QueryKFold(3)).fit(X, y, qid=qid),
            lambda: cross_validate(Ridge(), X, y, scoring="ndcg@10", cv=QueryKFold(3),
                                   params={"qid": qid}),
        ):
            with pytest.raises(ValueError, match=r"metadata routing is off, so a qid passed "
                                                 r".* does not reach the splitter.*"
                                                 r"enable_metadata_routing=True"):
                call()
    with sklearn.config_context(enable_metadata_routing=True):  # routed: no such message
        with pytest.raises(ValueError, match=r"query ids are required\. Pass qid="):
            QueryKFold(3).split(X, y).__next__()


# (A direct QueryLGBMRanker().fit(X, y, qid=qid) with routing off stays covered by
# tests/test_rankers.py.)


def test_readme_describes_numpy_X_without_routing():
    """The README said NaN with one warning per fit; QueryKFold raises at once (NaN only
    with groups=qid)."""
    import warnings
    from pathlib import Path

    import sklearn
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV

    from skrank.model_selection import QueryKFold

    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    assert "`QueryKFold` stops the search at once with a `ValueError`" in readme
    X, y, qid = _ranking_data()
    with sklearn.config_context(enable_metadata_routing=False):
        search = GridSearchCV(Ridge(), {"alpha": [1.0, 2.0]}, scoring="ndcg@10", cv=QueryKFold(3))
        with pytest.raises(ValueError, match="metadata routing is off"):
            search.fit(X, y)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, y, groups=qid)
    assert np.isnan(search.cv_results_["mean_test_score"]).all()
    assert len(caught) == 2 * 3 + 1  # one per fit: 2 candidates x 3 folds, and the summary


def test_docs_do_not_call_rbp_binary_only():
    """rbp_score has gain='binary' (default), 'linear' (ranx's graded RBP) and 'trec'."""
    import re

    for page in _pages():
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert not re.search(r"`rbp_score` is binary[;,.]", text), page.name
    assert skrank.rbp_score([2, 1], [0.9, 0.1], qid=[0, 0], p=0.5, gain="linear") == \
        pytest.approx(0.5 * (2 + 0.5 * 1))


# --------------------------------------------------------------------------------------
# Item 1: intervals consistent with the correction, labelled with what they cover.
# --------------------------------------------------------------------------------------


def _systems(n_queries=40, shifts=(0.0, 0.03, 0.05, 0.09), seed=0):
    rng = np.random.default_rng(seed)
    q = [f"q{i}" for i in range(n_queries)]
    base = rng.random(n_queries) * 0.5
    return {f"s{j}": dict(zip(q, base + shift + rng.normal(0, 0.1, n_queries)))
            for j, shift in enumerate(shifts)}


@pytest.mark.parametrize("seed", range(6))
def test_bonferroni_t_intervals_exclude_zero_exactly_when_the_verdict_is_significant(seed):
    from scipy import stats

    systems = _systems(seed=seed)
    result = skrank.compare(systems, test="t", correction="bonferroni")
    m = len(result.pairs)
    assert m == 6 and result.interval_level == pytest.approx(1 - 0.05 / m)
    for pair in result.pairs:
        a = np.array(list(systems[pair.system_a].values()))
        b = np.array(list(systems[pair.system_b].values()))
        d = b - a
        low, high = stats.t.interval(1 - 0.05 / m, d.size - 1, loc=d.mean(),
                                     scale=d.std(ddof=1) / np.sqrt(d.size))
        assert (pair.ci_low, pair.ci_high) == pytest.approx((low, high), rel=1e-12)
        assert (pair.ci_low > 0 or pair.ci_high < 0) == pair.significant
    # Holm rejects at least what Bonferroni does: an interval excluding 0 is never
    # beside "no significant difference".
    holm = skrank.compare(systems, test="t", correction="holm")
    for pair in holm.pairs:
        if pair.ci_low > 0 or pair.ci_high < 0:
            assert pair.significant


def test_tukey_intervals_agree_with_the_tukey_verdicts():
    systems = _systems(seed=3)
    result = skrank.compare(systems, correction="tukey", random_state=0, n_resamples=20_000)
    for pair in result.pairs:
        half = (pair.ci_high - pair.ci_low) / 2
        assert pair.ci_low + half == pytest.approx(pair.difference)
        if abs(abs(pair.difference) - half) > 0.002:  # away from the boundary
            assert (pair.ci_low > 0 or pair.ci_high < 0) == pair.significant
    widths = {round(p.ci_high - p.ci_low, 12) for p in result.pairs}
    assert len(widths) == 1  # Tukey: one half-width for every pair of a metric
    assert "Tukey HSD" in result.coverage


def test_intervals_are_labelled_with_what_they_cover():
    systems = _systems()
    holm = skrank.compare(systems, random_state=0)  # correction="holm" by default
    assert holm.coverage == "95% simultaneous over 6 comparisons (Bonferroni: each at 99.17%)"
    assert holm.coverage in repr(holm) and holm.to_dict()["coverage"] == holm.coverage
    alone = skrank.compare(systems, random_state=0, simultaneous=False)
    none = skrank.compare(systems, random_state=0, correction=None)
    assert alone.coverage == none.coverage == "95% per comparison (not simultaneous)"
    for p, q, r in zip(holm.pairs, alone.pairs, none.pairs):
        assert (q.ci_low, q.ci_high) == (r.ci_low, r.ci_high)
        assert p.ci_low <= q.ci_low and p.ci_high >= q.ci_high  # simultaneous: wider
    fdr = skrank.compare(systems, random_state=0, correction="fdr_bh")
    n_significant = sum(p.significant for p in fdr.pairs)
    assert fdr.interval_level == pytest.approx(1 - max(n_significant, 1) * 0.05 / 6)
    two = skrank.compare({k: systems[k] for k in ("s0", "s1")}, random_state=0)
    assert two.coverage == "95% (a single comparison)" and two.interval_level == 0.95
    with pytest.raises(skrank.InvalidParameterError, match="simultaneous must be None"):
        skrank.compare(systems, simultaneous="yes")


def test_per_query_display_says_whether_its_p_value_is_corrected_and_agrees_with_the_table():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skrank.datasets import make_ranking
    from skrank.plot import PerQueryDisplay

    X, y, qid = make_ranking(n_queries=40, random_state=1)
    rng = np.random.default_rng(1)
    scores = {f"s{i}": X[:, i] + rng.normal(0, 0.5, y.size) for i in range(4)}
    results = {n: skrank.evaluate(y, s, qid=qid, metrics=["ndcg@10"]) for n, s in scores.items()}
    table = skrank.compare(results, random_state=0)
    pair = table.pairs[0]
    display = PerQueryDisplay.from_predictions(
        y, scores[pair.system_b], qid=qid, baseline_score=scores[pair.system_a],
        metric="ndcg@10", name=pair.system_b, baseline_name=pair.system_a, comparison=table)
    title = display.ax_.get_title()
    assert display.p_value == pair.p_adjusted
    assert f"p = {pair.p_adjusted:.2g}, randomization, holm-corrected over 6 comparisons" in title
    assert ("not significant" not in title) == pair.significant
    alone = PerQueryDisplay.from_predictions(
        y, scores[pair.system_b], qid=qid, baseline_score=scores[pair.system_a],
        metric="ndcg@10", name=pair.system_b, baseline_name=pair.system_a, random_state=0)
    assert ", uncorrected (" in alone.ax_.get_title()
    with pytest.raises(skrank.InvalidParameterError, match="comparison must be a skrank.compare"):
        PerQueryDisplay.from_predictions(
            y, scores["s0"], qid=qid, baseline_score=scores["s1"], metric="ndcg@5",
            name="s0", baseline_name="s1", comparison=table)


# --------------------------------------------------------------------------------------
# Item 2: queries without a relevant document are counted wherever a mean is shown.
# --------------------------------------------------------------------------------------


def _with_unanswerable_queries():
    qid = np.repeat(np.arange(6), 4)
    y = np.tile([1, 0, 0, 0], 6)
    y[qid >= 4] = 0  # queries 4 and 5: nothing relevant
    rng = np.random.default_rng(2)
    return y, qid, rng.random(qid.size), rng.random(qid.size)


def test_evaluation_repr_counts_queries_without_a_relevant_document():
    y, qid, a, _ = _with_unanswerable_queries()
    res = skrank.evaluate(y, a, qid=qid, metrics=["ndcg@10"])
    assert res.n_no_relevant == 2 == int((res.counts["num_rel"] == 0).sum())
    assert repr(res).startswith("Evaluation(n_queries=6, n_no_relevant=2, ndcg@10=")
    one = skrank.evaluate(y, a, qid=qid, metrics=["ndcg@10"], no_relevant="one")
    assert one.mean["ndcg@10"] - res.mean["ndcg@10"] == pytest.approx(2 / 6)
    full = skrank.evaluate(y[qid < 4], a[qid < 4], qid=qid[qid < 4], metrics=["ndcg@10"])
    assert "n_no_relevant" not in repr(full)


def test_compare_says_how_many_ties_are_queries_without_a_relevant_document():
    y, qid, a, b = _with_unanswerable_queries()
    results = {name: skrank.evaluate(y, s, qid=qid, metrics=["ndcg@10"])
               for name, s in (("A", a), ("B", b))}
    result = skrank.compare(results)
    assert result.n_no_relevant == 2
    assert result.pairs[0].ties >= 2
    assert "2 of the 6 queries have no relevant document" in repr(result)
    plain = skrank.compare({n: (r.qid, r.per_query["ndcg@10"]) for n, r in results.items()})
    assert plain.n_no_relevant is None


def test_demo_reports_queries_without_a_relevant_document(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    from skrank.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=16, random_state=0)
    y = np.where(qid % 4 == 0, 0, y)  # a quarter of the queries: nothing relevant
    path = tmp_path / "letor.txt"
    dump_svmlight_file(X, y, str(path), query_id=qid)
    status, out, _ = _cli("demo", "--data", str(path), "--rankers", "ridge", "--folds", "2",
                          "--no-plot", "-q")
    assert status == 0
    import re

    found = re.search(r"(\d+) of the (\d+) queries have no relevant document", out)
    assert found and int(found[1]) >= 1
    assert "no_relevant='one'" in out


def test_readme_lightgbm_and_xgboost_ndcg_equivalence():
    from pathlib import Path

    from sklearn.datasets import load_svmlight_file

    from _ltr_data import ltr_path

    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    assert ('`ndcg_score(..., k=10, gain="exponential", no_relevant="one", ties="stable")`'
            in readme)
    _, y, qid = load_svmlight_file(str(ltr_path("letor_mq2008_fold1", "test.txt")),
                                   query_id=True)
    num_rel = np.bincount(np.unique(qid, return_inverse=True)[1], weights=y > 0)
    assert ((num_rel == 0).sum(), num_rel.size) == (51, 156)
    assert "51 of the 156 queries of MQ2008's fold-1 test split" in readme
    lightgbm = pytest.importorskip("lightgbm")
    train = ltr_path("lightgbm_lambdarank", "rank.train.svmlight")
    test = ltr_path("lightgbm_lambdarank", "rank.test.svmlight")
    X, y, qid = load_svmlight_file(str(train), query_id=True)
    Xt, yt, qt = load_svmlight_file(str(test), query_id=True)
    yt = np.where(np.isin(qt, np.unique(qt)[::3]), 0, yt)  # some queries without relevant docs
    sizes = np.unique(qid, return_counts=True)[1]
    sizes_t = np.unique(qt, return_counts=True)[1]
    model = lightgbm.LGBMRanker(n_estimators=5, num_leaves=4, verbose=-1, min_child_samples=50)
    model.fit(X, y, group=sizes, eval_set=[(Xt, yt)], eval_group=[sizes_t], eval_at=[10])
    theirs = model.evals_result_["valid_0"]["ndcg@10"][-1]
    scores = model.predict(Xt)
    assert np.unique(scores).size < scores.size  # tied predictions
    ours = skrank.ndcg_score(yt, scores, qid=qt, k=10, gain="exponential", no_relevant="one",
                             ties="stable")
    assert ours == pytest.approx(theirs, abs=1e-12)
    name = "ndcg_exp(no_relevant=one, ties=stable)@10"  # the scorer name the README gives
    assert skrank.evaluate(yt, scores, qid=qt, metrics=[name]).mean[name] == \
        pytest.approx(theirs, abs=1e-12)


# --------------------------------------------------------------------------------------
# judged@k: trec_eval's convention by default, ir_measures' as a parameter.
# --------------------------------------------------------------------------------------


def _random_pool(seed):
    """qrels (labels -1, 0, 1, 2) and a run with unjudged documents and short rankings."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(12):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 15)))]
        judged = [d for d in docs if rng.random() < 0.6]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 3)) for d in judged}
        if not qrels[f"q{q}"]:
            qrels[f"q{q}"] = {"dz": 1}
        ranked = [d for d in docs if rng.random() < 0.8] or docs[:1]
        run[f"q{q}"] = {d: float(rng.integers(0, 1000)) for d in ranked}  # distinct enough
    return qrels, run


def _arrays(qrels, run):
    y_true, y_score, qid, judged = [], [], [], []
    for q, docs in run.items():
        for d, s in docs.items():
            y_true.append(qrels[q].get(d, 0))
            y_score.append(s)
            qid.append(q)
            judged.append(d in qrels[q])
    return (np.array(y_true), np.array(y_score), np.array(qid), np.array(judged))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3, 10, 20])
def test_judged_at_k_conventions_against_ir_measures(seed, k):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _random_pool(seed)
    run = {q: {d: s + i * 1e-3 for i, (d, s) in enumerate(docs.items())}
           for q, docs in run.items()}  # no tied scores: one order for both
    y_true, y_score, qid, judged = _arrays(qrels, run)
    expected = {m.query_id: m.value for m in
                ir_measures.iter_calc([ir_measures.Judged @ k], qrels, run)}
    got = skrank.per_query_scores(f"judged(convention=ir_measures)@{k}", y_true, y_score,
                                  qid=qid, judged=judged)
    assert dict(zip(got.qid.tolist(), got.score.tolist())) == pytest.approx(expected, abs=1e-12)
    # the default: judged (label >= 0) in the top k over k, by the definition
    default = skrank.per_query_scores(f"judged@{k}", y_true, y_score, qid=qid, judged=judged)
    for q, value in zip(default.qid.tolist(), default.score.tolist()):
        top = sorted(run[q], key=lambda d: -run[q][d])[:k]
        assert value == pytest.approx(sum(qrels[q].get(d, -1) >= 0 for d in top) / k)


def test_judged_metrics_tie_policies_are_the_orders_the_docs_name():
    """bpref and judged@k: pessimistic/optimistic are the lowest/highest value over every
    order of the tied documents (brute force); infAP: not a bound (the docs' example)."""
    import itertools

    rng = np.random.default_rng(4)
    for _ in range(8):
        n = 5
        y = rng.integers(-1, 3, n)
        judged = rng.random(n) < 0.8
        s = rng.integers(0, 2, n).astype(float)  # two tie groups
        for metric in ("bpref", "judged@3"):
            values = set()
            for perm in set(itertools.permutations(range(n))):
                perm = list(perm)
                values.add(round(float(skrank.per_query_scores(
                    metric, y[perm], s[perm], qid=np.zeros(n), judged=judged[perm],
                    ties="stable").score[0]), 12))
            low = skrank.per_query_scores(metric, y, s, qid=np.zeros(n), judged=judged,
                                          ties="pessimistic").score[0]
            high = skrank.per_query_scores(metric, y, s, qid=np.zeros(n), judged=judged,
                                           ties="optimistic").score[0]
            assert (round(low, 12), round(high, 12)) == (min(values), max(values))
    tied = dict(y_true=[0, 1, 1, -1], y_score=[1, 0, 0, 0], qid=[0] * 4,
                judged=[False, True, True, True])
    assert skrank.infap_score(**tied, ties="pessimistic") > \
        skrank.infap_score(**tied, ties="optimistic")


# --------------------------------------------------------------------------------------
# Item 6: row-wise cross-validation cuts queries.
# --------------------------------------------------------------------------------------


def test_cross_val_evaluate_refuses_a_splitter_that_cuts_queries():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GroupKFold, KFold

    from skrank.model_selection import QueryKFold, cross_val_evaluate

    X, y, qid = _ranking_data()
    with pytest.raises(ValueError, match=r"each query must be whole in a split, but KFold puts "
                                         r"\d+ queries in both the training and the test rows"):
        cross_val_evaluate(Ridge(), X, y, qid=qid, cv=KFold(3, shuffle=True, random_state=0))
    whole = cross_val_evaluate(Ridge(), X, y, qid=qid, cv=QueryKFold(3))
    grouped = cross_val_evaluate(Ridge(), X, y, qid=qid, cv=GroupKFold(3))
    assert whole.qid.size == grouped.qid.size == np.unique(qid).size


def test_tuning_guide_shows_row_wise_and_query_aware_cv_side_by_side():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "tuning.md").read_text()
    assert '"KFold": KFold(5, shuffle=True' in text and '"QueryKFold": QueryKFold(5)' in text
    assert "cross_val_evaluate` refuses" in " ".join(text.split())


# --------------------------------------------------------------------------------------
# Item 5: one documented rule per label case (docs/metrics.md "Labels: the rules"),
# checked for every metric.
# --------------------------------------------------------------------------------------

SCORES = [3.0, 2.0, 1.0]


def _value(name, y, **options):
    spec = skrank.METRICS[name]
    if "k" in spec.parameters and spec.parameters["k"] is not None and name == "precision":
        options.setdefault("k", 2)
    if name == "err":
        options.setdefault("max_grade", 4)
    return spec.function(y, SCORES, qid=[0, 0, 0], **options)


# bpref, infAP and judged@k read a negative label as trec_eval's "in the pool, not judged"
# (documented with them): the rule below is every other metric's.
_LABEL_RULE_METRICS = [name for name, spec in skrank.METRICS.items() if not spec.inputs]


@pytest.mark.parametrize("name", _LABEL_RULE_METRICS)
def test_negative_label_rule_per_metric(name):
    """Every metric, arrays and qrels alike: a negative label is a non-relevant document of
    gain 0 (ndcg refused it, map took it as non-relevant, dcg summed it as a gain)."""
    spec = skrank.METRICS[name]
    y, zero = [-1.0, 1.0, 0.0], [0.0, 1.0, 0.0]
    assert _value(name, y) == _value(name, zero)
    assert _value(name, [-3.0, 2.0, -0.5]) == _value(name, [0.0, 2.0, 0.0])
    if "gain" in spec.parameters and name != "rbp":
        assert _value(name, y, gain="exponential") == _value(name, zero, gain="exponential")
    if "threshold" in spec.parameters:
        with pytest.raises(skrank.InvalidParameterError, match="threshold must be"):
            _value(name, y, threshold=0)
    metric = {"precision": "precision@2", "err": "err"}.get(name, name)
    qrels = {"q": {"a": -1, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    zero_qrels = {"q": {"a": 0, "b": 1, "c": 0}}
    assert skrank.evaluate(qrels=qrels, run=run, metrics=[metric]).mean == \
        skrank.evaluate(qrels=zero_qrels, run=run, metrics=[metric]).mean
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    kwargs = {"max_grade": 4} if name == "err" else ({"k": 2} if name == "precision" else {})
    on_device = spec.function(torch.asarray(np.array(y)), torch.asarray(np.array(SCORES)),
                              qid=torch.zeros(3), **kwargs)
    assert on_device == pytest.approx(_value(name, zero), rel=1e-12)


@pytest.mark.parametrize("name", [n for n, s in skrank.METRICS.items()
                                  if "threshold" in s.parameters])
def test_fractional_label_rule_per_binary_metric(name):
    assert _value(name, [0.5, 1.0, 0.0]) == _value(name, [0.0, 1.0, 0.0])  # below 1
    assert _value(name, [0.5, 1.0, 0.0], threshold=0.5) == _value(name, [1.0, 1.0, 0.0])


@pytest.mark.parametrize("name", _LABEL_RULE_METRICS)
def test_a_query_without_relevant_document_follows_no_relevant_per_metric(name):
    metric = {"precision": "precision@2"}.get(name, name)
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "d": 1.0}}
    listed_empty = skrank.evaluate(qrels={"q1": {"a": 1}, "q2": set()}, run=run,
                                   metrics=[metric])
    all_zero = skrank.evaluate(qrels={"q1": {"a": 1}, "q2": {"c": 0}}, run=run, metrics=[metric])
    assert listed_empty.qid.tolist() == all_zero.qid.tolist() == ["q1", "q2"]
    assert listed_empty.mean == all_zero.mean
    assert listed_empty.n_no_relevant == 1
