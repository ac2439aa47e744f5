"""Hostile values (issue 26): grades beyond int64, splits that cut a query,
options out of range. Each must be an error naming the argument, never a value."""

import warnings

import numpy as np
import pytest

import skrank
from skrank import InvalidParameterError, evaluate, ndcg_score
from skrank.io import Qrels


@pytest.mark.parametrize("make", [
    lambda: evaluate(qrels={"q": {"a": 2 ** 63, "b": 1}}, run={"q": {"a": 2., "b": 1.}}),
    lambda: Qrels(qid=["q", "q"], docno=["a", "b"], rel=np.array([2 ** 63, 1], dtype=np.uint64)),
    lambda: Qrels(qid=["q", "q"], docno=["a", "b"], rel=[2 ** 64, 1]),
    lambda: Qrels(qid=["q", "q"], docno=["a", "b"], rel=np.array([-2.0 ** 64, 1.0])),
    lambda: Qrels.from_dict({"q": {"a": 2 ** 63}}),
    lambda: ndcg_score([1e308] * 3, [3, 2, 1], qid=[0] * 3),
    lambda: ndcg_score([[1e300, 0, 1]], [[3, 2, 1]]),
], ids=["evaluate-dict", "uint64", "python-int", "float", "from_dict", "1e308", "2d"])
def test_grades_beyond_int64_are_refused(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cast or overflow warning on the way
        with pytest.raises(ValueError, match=r"2\*\*63|must hold integers"):
            make()


def test_grades_inside_int64_keep_their_value():
    big = 2 ** 62
    qrels = Qrels(qid=["q", "q"], docno=["a", "b"], rel=np.array([big, 1], dtype=np.uint64))
    assert qrels.rel.tolist() == [big, 1]
    # nDCG is invariant to scaling linear grades: [2**62, 1] ranked 2nd then 1st.
    dcg = 1 + big / np.log2(3)
    ideal = big + 1 / np.log2(3)
    assert ndcg_score([big, 1], [1, 2], qid=[0, 0]) == pytest.approx(dcg / ideal)


@pytest.mark.filterwarnings("ignore:The groups parameter is ignored")
def test_cross_val_evaluate_refuses_a_split_that_cuts_a_query():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold

    from skrank.model_selection import cross_val_evaluate

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 2)), np.tile([1.0, 0.0], 4)
    qid = np.repeat([1, 2, 3, 4], 2)
    # KFold(3) puts rows 0-2 in the first test fold: query 2 is cut (one row trains).
    with pytest.raises(ValueError, match=r"whole in a split.*query '2': 1 rows in training, "
                                         r"1 in test"):
        cross_val_evaluate(Ridge(), X, y, qid=qid, cv=KFold(3))
    # A fold that tests part of a query and leaves the rest unused is cut too.
    split = [(np.array([4, 5, 6, 7]), np.array([0, 1, 2]))]
    with pytest.raises(ValueError, match="whole queries"):
        cross_val_evaluate(Ridge(), X, y, qid=qid, cv=_Fixed(split))
    # KFold(4) on rows happens to hold queries whole: allowed.
    by_rows = cross_val_evaluate(Ridge(), X, y, qid=qid, cv=KFold(4), metrics=["ndcg"])
    assert by_rows.qid.tolist() == [1, 2, 3, 4]


class _Fixed:
    def __init__(self, splits):
        self.splits = splits

    def split(self, X, y=None, groups=None):
        return iter(self.splits)


@pytest.mark.parametrize("argv, option", [
    (["-M", "-1"], "-M"), (["-M", "0"], "-M"), (["-N", "-3"], "-N"),
    (["-l", "inf"], "-l"), (["-l", "nan"], "-l"), (["-l", "1e300"], "-l"),
])
def test_cli_count_and_level_options_are_checked(tmp_path, capsys, argv, option):
    from skrank.cli import main

    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.4 t\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "map", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err and repr(argv[1]) in err


def test_query_kfold_checks_shuffle_and_random_state():
    from skrank.model_selection import QueryKFold

    qid = np.repeat(np.arange(4), 2)
    with pytest.raises(InvalidParameterError, match="QueryKFold: shuffle must be True or False"):
        list(QueryKFold(2, shuffle="yes").split(np.zeros((8, 1)), qid=qid))
    with pytest.raises(InvalidParameterError, match="QueryKFold: random_state must be"):
        list(QueryKFold(2, shuffle=True, random_state="x").split(np.zeros((8, 1)), qid=qid))


def test_per_query_display_needs_one_value_per_query():
    from skrank.plot import PerQueryDisplay

    with pytest.raises(ValueError, match=r"PerQueryDisplay: qid and values.*\(2,\) and \(1,\)"):
        PerQueryDisplay(qid=[1, 2], values=[0.1], metric="ndcg", name="a")


def test_metric_at_k_display_stops_at_the_longest_query():
    """max_k=10**9 on 4 documents listed 10**9 metric names (about 10 GB, minutes):
    in a subprocess, so that today's code fails by its time limit, not a hung run."""
    pytest.importorskip("matplotlib")
    import subprocess
    import sys

    code = """
import matplotlib
matplotlib.use("Agg")
from skrank.plot import MetricAtKDisplay
d = MetricAtKDisplay.from_predictions([1, 0, 1, 0], [.4, .3, .2, .1], qid=[0, 0, 0, 1],
                                      metric="precision", max_k=10 ** 9)
(values,) = d.values.values()
print(repr((d.k.tolist(), values.tolist())))
"""
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("MetricAtKDisplay.from_predictions(max_k=10**9) ran past 60 s")
    assert done.returncode == 0, done.stderr[-2000:]
    ks, values = eval(done.stdout)
    assert ks == [1, 2, 3]
    # query 0: relevant at ranks 1 and 3; query 1: no relevant document (0 by default)
    np.testing.assert_allclose(values, [(1 + 0) / 2, (1 / 2 + 0) / 2, (2 / 3 + 0) / 2])


Y, S, Q = [1, 0, 1], [0.3, 0.2, 0.1], [0, 0, 0]


def _cv_case(**kwargs):
    from sklearn.linear_model import Ridge

    from skrank.model_selection import cross_val_evaluate

    X, y = np.arange(16.0).reshape(8, 2), np.tile([1.0, 0.0], 4)
    options = dict(estimator=Ridge(), qid=np.repeat([1, 2, 3, 4], 2), cv=2)
    options.update(kwargs)
    return lambda: cross_val_evaluate(options.pop("estimator"), X, y, **options)


class _NoPredict:
    def fit(self, X, y):
        return self

    def get_params(self, deep=True):
        return {}


def _two_columns():
    from sklearn.linear_model import Ridge

    class TwoColumns(Ridge):
        def predict(self, X):
            return np.column_stack([super().predict(X)] * 2)
    return TwoColumns()


def _plot(make):
    def call():
        pytest.importorskip("matplotlib")
        import matplotlib

        matplotlib.use("Agg")
        import skrank.plot as plot
        return make(plot)
    return call


PARAMETER_ERRORS = {
    "k=2**64": (lambda: ndcg_score(Y, S, qid=Q, k=2 ** 64), "k must be"),
    "k=10**30": (lambda: ndcg_score(Y, S, qid=Q, k=10 ** 30), "k must be"),
    "metric k beyond int64": (lambda: evaluate(Y, S, qid=Q, metrics=["ndcg@99999999999999999999"]),
                              "the cutoff in 'ndcg@99999999999999999999' must be"),
    "threshold=10**400": (lambda: skrank.precision_at_k_score(Y, S, qid=Q, k=1, threshold=10 ** 400),
                          "threshold must be"),
    "n_resamples=10**21": (lambda: skrank.compare(
        {"a": {"q1": 0.1, "q2": 0.5}, "b": {"q1": 0.2, "q2": 0.4}}, n_resamples=10 ** 21),
        "n_resamples must be"),
    "make_ranking random_state=-1": (
        lambda: skrank.datasets.make_ranking(random_state=-1), "random_state must be"),
    "QueryShuffleSplit nan": (lambda: list(skrank.model_selection.QueryShuffleSplit(
        2, test_size=float("nan")).split(np.zeros((4, 1)), qid=[1, 1, 2, 2])), "test_size must be"),
    "QueryShuffleSplit sum": (lambda: list(skrank.model_selection.QueryShuffleSplit(
        2, test_size=0.6, train_size=0.6).split(np.zeros((4, 1)), qid=[1, 1, 2, 2])),
        "test_size \\+ train_size"),
    "QueryShuffleSplit bool": (lambda: list(skrank.model_selection.QueryShuffleSplit(
        2, train_size=True).split(np.zeros((4, 1)), qid=[1, 1, 2, 2])), "train_size must be"),
    "cv=1": (_cv_case(cv=1), "cross_val_evaluate: cv must be"),
    "no predict": (_cv_case(estimator=_NoPredict()), "estimator must have fit and predict"),
    "fit_params list": (_cv_case(fit_params=[1]), "fit_params must be"),
    "colors": (_plot(lambda plot: plot.PerQueryDisplay(
        qid=[1, 2], values=[0.1, 0.2], metric="ndcg", name="a").plot(colors=("r",))),
        "colors must be"),
    "MetricAtKDisplay values": (_plot(lambda plot: plot.MetricAtKDisplay(
        k=[1, 2], values=[0.5, 0.6], metric="ndcg")), "values must be a dict"),
    "MetricDistributionDisplay values": (_plot(lambda plot: plot.MetricDistributionDisplay(
        values=[], metric="ndcg")), "values must be a non-empty dict"),
}


@pytest.mark.parametrize("case", list(PARAMETER_ERRORS))
def test_bad_parameters_are_invalid_parameter_errors(case):
    import skrank.datasets  # noqa: F401
    import skrank.model_selection  # noqa: F401

    call, message = PARAMETER_ERRORS[case]
    with pytest.raises(InvalidParameterError, match=message):
        call()


DATA_ERRORS = {
    "frame not a frame": (lambda: Qrels.from_frame({"query_id": [1]}), TypeError,
                          "Qrels.from_frame: frame must be a pandas or polars DataFrame"),
    "run dict a list": (lambda: skrank.io.Run.from_dict([("q", "d", 1.0)]), TypeError,
                        "Run.from_dict: run must be a dict"),
    "2-D predictions": (_cv_case(estimator=_two_columns()), ValueError,
                        r"TwoColumns.predict must return one score per row. Got shape \(4, 2\)"),
}


@pytest.mark.parametrize("case", list(DATA_ERRORS))
def test_bad_inputs_are_named(case):
    call, kind, message = DATA_ERRORS[case]
    with pytest.raises(kind, match=message):
        call()


def test_huge_cutoffs_inside_int64_are_no_cutoff():
    assert ndcg_score(Y, S, qid=Q, k=2 ** 62) == ndcg_score(Y, S, qid=Q)


def test_cli_files_that_are_not_what_the_option_reads(tmp_path, capsys):
    from skrank.cli import main

    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.4 t\n")
    (tmp_path / "z").write_bytes(b"1 map 0.5 0.1\n\xff\xfe map 0.2 0.1\n")
    argv = ["evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "map", "-Z",
            str(tmp_path / "z")]
    assert main(argv) == 2
    assert f"{tmp_path / 'z'}: line 2 is not UTF-8" in capsys.readouterr().err
    assert main(["demo", "--data", str(tmp_path / "r"), "--no-plot"]) == 2
    assert f"{tmp_path / 'r'}:1: '1 Q0 a 1 0.5 t': not an SVMlight" in capsys.readouterr().err


def _qrels_run():
    from skrank.io import Run

    return (Qrels(qid=["1", "1"], docno=["a", "b"], rel=[1, 0]),
            Run(qid=["1", "1"], docno=["a", "b"], score=[0.5, 0.4]))


def _frame(columns):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame([list(range(len(columns)))], columns=columns)


MESSAGES = {
    # (call, exception type, the message must contain)
    "judged with qrels": (lambda: evaluate(qrels=_qrels_run()[0], run=_qrels_run()[1],
                                           judged=[True, True]),
                          InvalidParameterError, "judged applies to arrays"),
    "baseline_score": (_plot(lambda plot: plot.PerQueryDisplay.from_predictions(
        [1, 0], [0.5, 0.4], qid=[1, 1], baseline_score=[0.1, 0.2, 0.3])), ValueError,
        "PerQueryDisplay.from_predictions: y_true and baseline_score must have the same"),
    "duplicate columns": (lambda: Qrels.from_frame(_frame(["query_id", "doc_id", "relevance",
                                                           "relevance"])),
                          ValueError, "one column named 'relevance'"),
    "query_id=None": (lambda: Qrels.from_frame(_frame(["query_id", "doc_id", "relevance"]),
                                               query_id=None),
                      InvalidParameterError, "query_id must be the name of a column"),
    "read_qrels(None)": (lambda: skrank.io.read_qrels(None), InvalidParameterError,
                         "read_qrels: path must be a path"),
    "read_run(123)": (lambda: skrank.io.read_run(123), InvalidParameterError,
                      "read_run: path must be a path"),
    "join swapped": (lambda: skrank.io.join_qrels_run(*_qrels_run()[::-1]),
                     InvalidParameterError, "swapped?"),
    "compare absent metric": (lambda: skrank.compare(
        {s: evaluate([1, 0, 1, 0], v, qid=[1, 1, 2, 2], metrics=["map"])
         for s, v in (("a", [0.5, 0.4, 0.3, 0.2]), ("b", [0.4, 0.5, 0.3, 0.2]))},
        metrics=["ndcg"]), InvalidParameterError, "metrics must name metrics every system has"),
    "QueryKFold random_state": (lambda: list(skrank.model_selection.QueryKFold(
        2, shuffle=True, random_state="x").split(np.zeros((4, 1)), qid=[1, 1, 2, 2])),
        InvalidParameterError, "QueryKFold: random_state"),
}


@pytest.mark.parametrize("case", list(MESSAGES))
def test_messages_name_the_right_argument(case):
    import skrank.io  # noqa: F401
    import skrank.model_selection  # noqa: F401

    call, kind, text = MESSAGES[case]
    with pytest.raises(kind) as info:
        call()
    assert text in str(info.value)


def test_nan_in_a_metric_name_is_the_word():
    res = evaluate([1, 0, 0, 0], [0.5, 0.4, 0.3, 0.2], qid=[1, 1, 2, 2],
                   metrics=["ndcg(no_relevant=nan)"])
    assert res.per_query["ndcg(no_relevant=nan)"][0] == 1.0
    assert np.isnan(res.per_query["ndcg(no_relevant=nan)"][1])


def test_bytes_ids_beyond_ascii_are_ids(tmp_path):
    """An S-dtype or bytes-object id holding b'\\xff' is read as a file's id is."""
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"query_id": np.array([b"\xff", b"a"]), "doc_id": ["d", "d"],
                          "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": np.array([b"\xff", b"a"]), "doc_id": ["d", "d"],
                        "score": [1.0, 1.0]})
    assert evaluate(qrels=qrels, run=run).qid.tolist() == ["a", "\udcff"]
    got = evaluate(qrels={b"\xff": {"d": 1}}, run={b"\xff": {"d": 1.0}}).qid
    assert got.tolist() == ["\udcff"]


def test_expected_gain_scorer_needs_numeric_classes():
    import sklearn
    from sklearn.linear_model import LogisticRegression

    from skrank import make_ranking_scorer

    X = np.arange(12.0).reshape(6, 2)
    labels = np.array(["bad", "good", "bad", "good", "bad", "good"])
    model = LogisticRegression().fit(X, labels)
    scorer = make_ranking_scorer("ndcg", response="expected_gain")
    with pytest.raises(ValueError, match=r"expected_gain' needs a classifier whose classes are "
                                         r"relevance grades.*'bad'"):
        with sklearn.config_context(enable_metadata_routing=True):
            scorer(model, X, np.tile([0, 1], 3), qid=np.repeat([1, 2], 3))


@pytest.mark.parametrize("n_queries", [10 ** 12, 10 ** 10])
def test_make_ranking_too_many_queries_refused_before_allocating(n_queries):
    # Before: 10**12 reached numpy's allocation (a MemoryError from the random draw
    # caught after the fact); 10**10 (80 GB of sizes) could start allocating.
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(skrank.InvalidParameterError, match=f"n_queries={n_queries} .*GiB"):
            skrank.datasets.make_ranking(n_queries=n_queries)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 ** 6
