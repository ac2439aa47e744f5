"""skrank's scorers inside scikit-learn's model selection, with the real libraries.

After ``import skrank`` a ranking name (``"ndcg_exp@10"``, any ``k``) is a valid
``scoring=`` string everywhere in scikit-learn, whatever the import order, while
scikit-learn's own names, scorers and error messages stay exactly its own.  The
query ids reach the scorer through metadata routing or a DataFrame ``qid``
column; the scorer's value is always the metric function on the test fold.
"""

import copy
import inspect
import json
import os
import pickle
import random
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import check_scoring
from sklearn.metrics import get_scorer as sk_get_scorer
from sklearn.model_selection import (GridSearchCV, RandomizedSearchCV, cross_val_score,
                                     cross_validate, learning_curve, validation_curve)
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils._param_validation import InvalidParameterError

import skrank
from skrank import RankingScorer, make_ranking_scorer
from skrank.model_selection import QueryKFold

pd = pytest.importorskip("pandas")

REPO = Path(__file__).resolve().parents[1]
GRAMMAR_HINT = "'<metric>[@<k>]'"

# A few "random" cutoffs, fixed so that a failure can be reproduced.
RANDOM_KS = random.Random(20240521).sample(range(2, 5000), 3)


# --------------------------------------------------------------------------------------
# data and helpers
# --------------------------------------------------------------------------------------


def make_data(n_queries=24, sizes=(4, 14), n_features=5, seed=0, shuffle=False):
    """Graded (0-3) synthetic ranking data.

    Returns ``(X, y, qid, df)``: numpy features, labels, query ids (non-contiguous
    integers, two queries without any relevant document) and a DataFrame of
    the features plus a ``qid`` column.  With ``shuffle`` the rows of all
    queries are interleaved.
    """
    rng = np.random.default_rng(seed)
    n_docs = rng.integers(sizes[0], sizes[1] + 1, size=n_queries)
    qid = np.repeat(7 * np.arange(10, 10 + n_queries), n_docs)
    n = qid.shape[0]
    X = rng.normal(size=(n, n_features))
    latent = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=1.0, size=n)
    y = np.digitize(latent, [-0.3, 0.7, 1.7]).astype(np.float64)
    y[qid == qid[0]] = 0
    y[qid == qid[-1]] = 0
    if shuffle:
        perm = rng.permutation(n)
        X, y, qid = X[perm], y[perm], qid[perm]
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(n_features)])
    df["qid"] = qid
    return X, y, qid, df


def frame_ridge():
    """Ridge on a DataFrame, ignoring its qid column (the model must not learn ids)."""
    return make_pipeline(
        ColumnTransformer([("ids", "drop", ["qid"])], remainder="passthrough"), Ridge())


def routed():
    return sklearn.config_context(enable_metadata_routing=True)


def fold_scores(estimator, X, y, qid, cv, metric, *, fit_params=None, **params):
    """The metric on each test fold of a clone fitted on the training rows."""
    scores = []
    for train, test in cv.split(X, qid=qid):
        est = clone(estimator).fit(_rows(X, train), y[train], **(fit_params or {}))
        pred = est.predict(_rows(X, test))
        scores.append(metric(y[test], pred, qid=qid[test], **params))
    return np.array(scores)


def _rows(X, rows):
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def same_scorer(a, b):
    return (type(a) is type(b) and a._score_func is b._score_func and a._kwargs == b._kwargs
            and a._response == b._response and a._sign == b._sign)


def run_python(code, *, check=True):
    """Run ``code`` in a fresh interpreter; returns the CompletedProcess."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=180, cwd=str(REPO), env=env)
    if check:
        assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


# --------------------------------------------------------------------------------------
# 1. plain strings work in scikit-learn itself
# --------------------------------------------------------------------------------------


def test_grid_search_string_with_dataframe_qid():
    X, y, qid, df = make_data()
    cv = QueryKFold(3)
    search = GridSearchCV(frame_ridge(), {"ridge__alpha": [0.1, 300.0]}, scoring="ndcg_exp@10",
                          cv=cv).fit(df, y)
    for i, alpha in enumerate([0.1, 300.0]):
        expected = fold_scores(frame_ridge().set_params(ridge__alpha=alpha), df, y, qid, cv,
                               skrank.ndcg_score, k=10, gain="exponential")
        got = [search.cv_results_[f"split{j}_test_score"][i] for j in range(3)]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert search.best_score_ == search.cv_results_["mean_test_score"].max()
    assert isinstance(search.scorer_, RankingScorer)
    assert search.scorer_.name == "ndcg_exp@10"


def test_grid_search_string_with_metadata_routing():
    X, y, qid, _ = make_data(shuffle=True)
    cv = QueryKFold(3)
    with routed():
        search = GridSearchCV(Ridge(), {"alpha": [0.1, 300.0]}, scoring="ndcg_exp@10",
                              cv=cv).fit(X, y, qid=qid)
    for i, alpha in enumerate([0.1, 300.0]):
        expected = fold_scores(Ridge(alpha=alpha), X, y, qid, cv, skrank.ndcg_score, k=10,
                               gain="exponential")
        got = [search.cv_results_[f"split{j}_test_score"][i] for j in range(3)]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_randomized_search_string():
    X, y, qid, df = make_data()
    search = RandomizedSearchCV(frame_ridge(), {"ridge__alpha": [0.01, 1.0, 10.0, 1000.0]},
                                n_iter=3, scoring="ndcg_exp@10", cv=QueryKFold(3),
                                random_state=0).fit(df, y)
    best = search.best_params_["ridge__alpha"]
    expected = fold_scores(frame_ridge().set_params(ridge__alpha=best), df, y, qid,
                           QueryKFold(3), skrank.ndcg_score, k=10, gain="exponential")
    assert search.best_score_ == pytest.approx(expected.mean(), abs=1e-12)
    with routed():
        search = RandomizedSearchCV(Ridge(), {"alpha": [0.01, 1.0, 10.0]}, n_iter=2,
                                    scoring="ndcg_exp@10", cv=QueryKFold(3),
                                    random_state=0).fit(X, y, qid=qid)
    for params, score in zip(search.cv_results_["params"],
                             search.cv_results_["mean_test_score"]):
        expected = fold_scores(Ridge(**params), X, y, qid, QueryKFold(3), skrank.ndcg_score,
                               k=10, gain="exponential")
        assert score == pytest.approx(expected.mean(), abs=1e-12), params


@pytest.mark.parametrize("how", ["dataframe", "routing"])
def test_cross_validate_list_of_strings(how):
    X, y, qid, df = make_data(shuffle=True)
    cv = QueryKFold(4)
    if how == "dataframe":
        res = cross_validate(frame_ridge(), df, y, scoring=["ndcg@5", "map@10"], cv=cv)
        est, data = frame_ridge(), df
    else:
        with routed():
            res = cross_validate(Ridge(), X, y, scoring=["ndcg@5", "map@10"], cv=cv,
                                 params={"qid": qid})
        est, data = Ridge(), X
    np.testing.assert_allclose(res["test_ndcg@5"],
                               fold_scores(est, data, y, qid, cv, skrank.ndcg_score, k=5),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(res["test_map@10"],
                               fold_scores(est, data, y, qid, cv, skrank.map_score, k=10),
                               rtol=0, atol=1e-12)


def test_dict_scoring_with_refit_by_name():
    X, y, qid, df = make_data(seed=3)
    alphas = [0.01, 30.0, 3000.0]
    search = GridSearchCV(frame_ridge(), {"ridge__alpha": alphas},
                          scoring={"n": "mrr@10", "m": "map"}, refit="n",
                          cv=QueryKFold(3)).fit(df, y)
    res = search.cv_results_
    assert {"mean_test_n", "mean_test_m", "rank_test_n", "rank_test_m"} <= set(res)
    assert search.best_index_ == int(np.argmin(res["rank_test_n"]))
    assert search.best_score_ == res["mean_test_n"][search.best_index_]
    for i, alpha in enumerate(alphas):
        est = frame_ridge().set_params(ridge__alpha=alpha)
        assert res["mean_test_n"][i] == pytest.approx(
            fold_scores(est, df, y, qid, QueryKFold(3), skrank.mrr_score, k=10).mean(), abs=1e-12)
        assert res["mean_test_m"][i] == pytest.approx(
            fold_scores(est, df, y, qid, QueryKFold(3), skrank.map_score).mean(), abs=1e-12)
    assert search.best_estimator_.named_steps["ridge"].alpha == alphas[search.best_index_]
    assert isinstance(search.scorer_["n"], RankingScorer)


def test_cross_val_score_string():
    X, y, qid, df = make_data(seed=4)
    cv = QueryKFold(3)
    got = cross_val_score(frame_ridge(), df, y, scoring="mrr@10", cv=cv)
    np.testing.assert_allclose(got, fold_scores(frame_ridge(), df, y, qid, cv,
                                                skrank.mrr_score, k=10), rtol=0, atol=1e-12)
    with routed():
        routed_scores = cross_val_score(Ridge(), X, y, scoring="mrr@10", cv=cv,
                                        params={"qid": qid})
    np.testing.assert_allclose(routed_scores, got, rtol=0, atol=1e-12)


def test_validation_curve_and_learning_curve_strings():
    X, y, qid, df = make_data(seed=5)
    cv = QueryKFold(3)
    _, test = validation_curve(frame_ridge(), df, y, param_name="ridge__alpha",
                               param_range=[0.1, 100.0], scoring="ndcg@10", cv=cv)
    for i, alpha in enumerate([0.1, 100.0]):
        expected = fold_scores(frame_ridge().set_params(ridge__alpha=alpha), df, y, qid, cv,
                               skrank.ndcg_score, k=10)
        np.testing.assert_allclose(test[i], expected, rtol=0, atol=1e-12)
    sizes, train, test = learning_curve(frame_ridge(), df, y, train_sizes=[0.5, 1.0],
                                        scoring="ndcg@10", cv=cv)
    assert test.shape == (2, 3) and np.isfinite(test).all() and np.isfinite(train).all()
    np.testing.assert_allclose(test[1], fold_scores(frame_ridge(), df, y, qid, cv,
                                                    skrank.ndcg_score, k=10),
                               rtol=0, atol=1e-12)


@pytest.mark.skipif("params" not in inspect.signature(validation_curve).parameters,
                    reason="validation_curve/learning_curve route metadata from "
                           "scikit-learn 1.6 on")
def test_validation_curve_and_learning_curve_with_routing():
    X, y, qid, df = make_data(seed=5)
    cv = QueryKFold(3)
    with routed():
        _, test = validation_curve(Ridge(), X, y, param_name="alpha", param_range=[0.1, 100.0],
                                   scoring="ndcg@10", cv=cv, params={"qid": qid})
        _, _, test_lc = learning_curve(Ridge(), X, y, train_sizes=[0.5, 1.0],
                                       scoring="ndcg@10", cv=cv, params={"qid": qid})
    np.testing.assert_allclose(test[0], fold_scores(Ridge(alpha=0.1), X, y, qid, cv,
                                                    skrank.ndcg_score, k=10), atol=1e-12)
    np.testing.assert_allclose(test_lc[1], fold_scores(Ridge(), X, y, qid, cv,
                                                       skrank.ndcg_score, k=10), atol=1e-12)


def test_permutation_importance_string():
    X, y, qid, df = make_data(n_queries=30, seed=6)
    model = frame_ridge().fit(df, y)
    result = permutation_importance(model, df, y, scoring="ndcg@10", n_repeats=3,
                                    random_state=0)
    by_object = permutation_importance(model, df, y, scoring=skrank.get_scorer("ndcg@10"),
                                       n_repeats=3, random_state=0)
    np.testing.assert_array_equal(result.importances, by_object.importances)
    importance = dict(zip(df.columns, result.importances_mean))
    # f0 drives the labels; the qid column is dropped by the model, but permuting
    # it regroups the documents, so it is not "unimportant" for the metric.
    assert importance["f0"] == max(importance[c] for c in df.columns if c != "qid")
    assert importance["f0"] > 0.05
    multi = permutation_importance(model, df, y, scoring=["ndcg@10", "map"], n_repeats=2,
                                   random_state=0)
    assert set(multi) == {"ndcg@10", "map"}


@pytest.mark.parametrize("k", [37] + RANDOM_KS)
def test_sklearn_get_scorer_and_check_scoring_any_cutoff(k):
    X, y, qid, df = make_data(sizes=(30, 60), n_queries=6, seed=7)
    name = f"ndcg_exp@{k}"
    scorer = sk_get_scorer(name)
    assert isinstance(scorer, RankingScorer)
    assert scorer.name == name
    assert scorer._kwargs == {"k": k, "gain": "exponential"}
    checked = check_scoring(Ridge(), scoring=name)
    assert same_scorer(checked, scorer)
    model = frame_ridge().fit(df, y)
    expected = skrank.ndcg_score(y, model.predict(df), qid=qid, k=k, gain="exponential")
    assert scorer(model, df, y) == pytest.approx(expected, abs=1e-15)
    assert checked(model, df, y) == pytest.approx(expected, abs=1e-15)


# --------------------------------------------------------------------------------------
# 2. import order does not matter
# --------------------------------------------------------------------------------------

_ORDER_SCRIPT = """
import json
{before}
import numpy as np, pandas as pd
from sklearn.linear_model import Ridge
{skrank_import}
{after}
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.inspection import permutation_importance
import sklearn.metrics
import skrank
from skrank.model_selection import QueryKFold

rng = np.random.default_rng(0)
qid = np.repeat(np.arange(12), 8)
X = rng.normal(size=(qid.size, 3))
y = np.digitize(X[:, 0] + rng.normal(size=qid.size), [0.0, 1.0]).astype(float)
df = pd.DataFrame(X, columns=["a", "b", "c"]); df["qid"] = qid
ks = {ks}
out = {{}}
for k in ks:
    name = f"ndcg_exp@{{k}}"
    search = GridSearchCV(Ridge(), {{"alpha": [1.0, 10.0]}}, scoring=name, cv=QueryKFold(3)).fit(df, y)
    ref = GridSearchCV(Ridge(), {{"alpha": [1.0, 10.0]}}, scoring=skrank.get_scorer(name),
                       cv=QueryKFold(3)).fit(df, y)
    assert list(search.cv_results_["mean_test_score"]) == list(ref.cv_results_["mean_test_score"])
    cv = cross_validate(Ridge(), df, y, scoring=["ndcg@5", f"map@{{k}}"], cv=QueryKFold(3))
    assert set(cv) >= {{"test_ndcg@5", f"test_map@{{k}}"}}
    imp = permutation_importance(Ridge().fit(df, y), df, y, scoring=f"mrr@{{k}}", n_repeats=2,
                                 random_state=0)
    assert sklearn.metrics.get_scorer(name).name == name
    out[name] = [float(v) for v in search.cv_results_["mean_test_score"]]
    out[f"map@{{k}}"] = [float(v) for v in cv[f"test_map@{{k}}"]]
print(json.dumps(out))
"""

_IMPORT_ORDERS = {
    # scikit-learn's modules (and their frozen scorer-name sets) exist before skrank
    "sklearn-first": ("import sklearn.model_selection, sklearn.inspection, sklearn.metrics\n"
                      "from sklearn.model_selection import GridSearchCV, cross_validate\n"
                      "from sklearn.inspection import permutation_importance",
                      "import skrank", ""),
    "skrank-first": ("", "import skrank",
                     "import sklearn.model_selection, sklearn.inspection"),
    # only a submodule of skrank is imported (the package __init__ still runs)
    "submodule-only": ("import sklearn.inspection",
                       "from skrank.model_selection import QueryKFold", ""),
}


@pytest.mark.parametrize("order", list(_IMPORT_ORDERS))
def test_strings_work_whatever_the_import_order(order):
    before, skrank_import, after = _IMPORT_ORDERS[order]
    ks = [37] + RANDOM_KS
    code = _ORDER_SCRIPT.format(before=before, skrank_import=skrank_import, after=after, ks=ks)
    out = json.loads(run_python(code).stdout)
    assert set(out) == {f"ndcg_exp@{k}" for k in ks} | {f"map@{k}" for k in ks}
    # the same data in this process: each fold's metric of a Ridge fitted on the others
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(12), 8)
    X = rng.normal(size=(qid.size, 3))
    y = np.digitize(X[:, 0] + rng.normal(size=qid.size), [0.0, 1.0]).astype(float)
    for k in ks:
        for alpha, got in zip([1.0, 10.0], out[f"ndcg_exp@{k}"]):
            expected = fold_scores(Ridge(alpha=alpha), X, y, qid, QueryKFold(3),
                                   skrank.ndcg_score, k=k, gain="exponential")
            assert got == pytest.approx(expected.mean(), abs=1e-12), (k, alpha)
        np.testing.assert_allclose(out[f"map@{k}"], fold_scores(
            Ridge(), X, y, qid, QueryKFold(3), skrank.map_score, k=k), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------
# 3. scikit-learn's own names, scorers and messages are untouched
# --------------------------------------------------------------------------------------

_SKLEARN_SNAPSHOT = """
import json
{import_before}
import numpy as np
import sklearn.metrics
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.metrics import check_scoring, get_scorer, get_scorer_names
{import_after}

def error(func):
    try:
        func()
    except Exception as exc:
        return [type(exc).__module__ + "." + type(exc).__qualname__, str(exc)]
    return None

X = np.arange(40.0).reshape(20, 2); y = np.arange(20.0)
names = get_scorer_names()
out = {{
    "names": names,
    "reprs": {{n: repr(get_scorer(n)) for n in names}},
    "types": {{n: type(get_scorer(n)).__module__ for n in names}},
    "errors": {{
        "grid": error(lambda: GridSearchCV(Ridge(), {{}}, scoring="not_a_scorer").fit(X, y)),
        "grid_typo": error(lambda: GridSearchCV(Ridge(), {{}}, scoring="ndgc@10").fit(X, y)),
        "cross_validate": error(lambda: cross_validate(Ridge(), X, y, scoring="nope@3")),
        "cross_validate_list": error(lambda: cross_validate(Ridge(), X, y, scoring=["r2", "nope"])),
        "get_scorer": error(lambda: get_scorer("not_a_scorer")),
        "get_scorer_typo": error(lambda: get_scorer("ndgc@10")),
        "check_scoring": error(lambda: check_scoring(Ridge(), scoring="not_a_scorer")),
    }},
}}
print(json.dumps(out, sort_keys=True))
"""


def _sklearn_snapshots(*wheres):
    """Run the snapshot script for each place of ``import skrank``, concurrently."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    procs = {}
    for where in wheres:
        code = _SKLEARN_SNAPSHOT.format(
            import_before="import skrank" if where == "before" else "",
            import_after="import skrank" if where == "after" else "")
        procs[where] = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, cwd=str(REPO), env=env)
    out = {}
    for where, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 0, f"{where}:\n{stderr}"
        out[where] = json.loads(stdout)
    return out


def test_sklearn_names_scorers_and_messages_unchanged():
    snaps = _sklearn_snapshots("never", "before", "after")
    plain = snaps["never"]
    for where in ("before", "after"):
        snap = snaps[where]
        assert snap["names"] == plain["names"], where
        assert snap["reprs"] == plain["reprs"], where
        # recall and precision keep scikit-learn's scorer (same function, options, repr),
        # wrapped so that a failure on ranking data names the skrank spelling
        shadowed = {"recall", "precision"}
        assert {n: t for n, t in snap["types"].items() if n not in shadowed} == {
            n: t for n, t in plain["types"].items() if n not in shadowed}, where
        assert {snap["types"][n] for n in shadowed} == {"skrank._scorer"}, where
        assert snap["errors"] == plain["errors"], where
    errors = plain["errors"]
    assert errors["grid"][0].endswith("InvalidParameterError")
    assert "The 'scoring' parameter of GridSearchCV must be" in errors["grid"][1]
    assert errors["grid_typo"][0].endswith("InvalidParameterError")
    assert errors["get_scorer"][0] == "builtins.ValueError"
    assert "is not a valid scoring value" in errors["get_scorer"][1]
    assert "sklearn.metrics.get_scorer_names()" in errors["get_scorer"][1]


@pytest.mark.parametrize("name, func", [
    ("accuracy", "accuracy_score"),
    ("recall", "recall_score"),
    ("precision", "precision_score"),
    ("average_precision", "average_precision_score"),
    ("r2", "r2_score"),
])
def test_sklearn_names_keep_sklearn_scorers(name, func):
    for get in (sk_get_scorer, skrank.get_scorer):
        scorer = get(name)
        assert not isinstance(scorer, RankingScorer)
        assert scorer._score_func.__name__ == func
        assert scorer._score_func.__module__.startswith("sklearn.")
    assert not isinstance(check_scoring(Ridge(), scoring=name), RankingScorer)
    assert name not in skrank.get_scorer_names()


def test_recall_string_in_a_search_is_sklearns_recall():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)
    search = GridSearchCV(LogisticRegression(), {"C": [1.0]}, scoring="recall", cv=3).fit(X, y)
    expected = cross_val_score(LogisticRegression(), X, y,
                               scoring=sklearn.metrics.make_scorer(sklearn.metrics.recall_score),
                               cv=3)
    assert search.best_score_ == pytest.approx(expected.mean(), abs=1e-15)


def test_invalid_string_still_raises_sklearns_error():
    X, y, qid, df = make_data()
    with pytest.raises(InvalidParameterError, match="The 'scoring' parameter of GridSearchCV"):
        GridSearchCV(Ridge(), {"alpha": [1.0]}, scoring="ndgc@10").fit(df, y)
    with pytest.raises(ValueError, match="is not a valid scoring value"):
        sk_get_scorer("ndcg@0")


def test_ranking_names_do_not_show_in_sklearn_names():
    names = set(sklearn.metrics.get_scorer_names())
    assert not names & set(skrank.get_scorer_names())
    assert "ndcg@10" not in names and "ndcg" not in names


# --------------------------------------------------------------------------------------
# 4. an incompatible scikit-learn: the import works, warns, get_scorer still works
# --------------------------------------------------------------------------------------

_FAILURE_SCRIPT = """
import json, warnings
import numpy as np
import sklearn
{break_sklearn}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import skrank
messages = [(w.category.__name__, str(w.message)) for w in caught]
result = {{"registered": skrank._sklearn_registration.REGISTERED, "warnings": messages}}

from sklearn.linear_model import Ridge
rng = np.random.default_rng(0)
qid = np.repeat(np.arange(6), 5)
X = rng.normal(size=(30, 2)); y = (X[:, 0] > 0).astype(float)
model = Ridge().fit(X, y)
try:
    scorer = skrank.get_scorer("ndcg@10")
    with sklearn.config_context(enable_metadata_routing=True):
        value = scorer(model, X, y, qid=qid)
    result["get_scorer"] = [repr(scorer), value,
                            skrank.ndcg_score(y, model.predict(X), qid=qid, k=10)]
except Exception as exc:
    result["get_scorer"] = "FAILED: " + repr(exc)
try:
    result["names"] = len(skrank.get_scorer_names())
except Exception as exc:
    result["names"] = "FAILED: " + repr(exc)
print(json.dumps(result))
"""

_BREAKAGES = {
    # scikit-learn keeps its scorers in a read-only mapping that is not a dict
    "scorers-not-a-dict": "import types, sklearn.metrics._scorer as s\n"
                          "s._SCORERS = types.MappingProxyType(dict(s._SCORERS))",
    # scikit-learn no longer has StrOptions (parameter validation is skipped so that
    # scikit-learn itself still runs without it)
    "no-StrOptions": "import sklearn.metrics, sklearn.linear_model, sklearn.model_selection\n"
                     "import sklearn.utils._param_validation as pv\n"
                     "sklearn.set_config(skip_parameter_validation=True)\n"
                     "del pv.StrOptions",
}


@pytest.mark.parametrize("breakage", list(_BREAKAGES))
def test_incompatible_sklearn_import_warns_and_get_scorer_works(breakage):
    code = _FAILURE_SCRIPT.format(break_sklearn=_BREAKAGES[breakage])
    result = json.loads(run_python(code).stdout)
    assert result["registered"] is False
    assert len(result["warnings"]) == 1, result["warnings"]
    category, message = result["warnings"][0]
    assert category == "RuntimeWarning"
    assert "skrank.get_scorer(" in message and "scoring=" in message
    assert not str(result["get_scorer"]).startswith("FAILED"), result["get_scorer"]
    shown, value, expected = result["get_scorer"]
    assert shown == "get_scorer('ndcg@10')"
    assert value == pytest.approx(expected, abs=1e-15)
    assert not str(result["names"]).startswith("FAILED"), result["names"]


def test_registration_is_idempotent():
    from skrank._scorer import register_with_sklearn
    import sklearn.metrics._scorer as sk_scorer
    from sklearn.utils._param_validation import StrOptions

    registry, check = sk_scorer._SCORERS, StrOptions.is_satisfied_by
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert register_with_sklearn() is True
        assert register_with_sklearn() is True
    assert sk_scorer._SCORERS is registry
    assert StrOptions.is_satisfied_by is check
    assert getattr(check, "_skrank", False)  # patched once, not wrapped twice
    assert not getattr(check.__wrapped__, "_skrank", False)


# --------------------------------------------------------------------------------------
# 5. bad names
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [skrank.get_scorer, make_ranking_scorer],
                         ids=["get_scorer", "make_ranking_scorer"])
@pytest.mark.parametrize("name, suggestion", [
    ("ndgc@10", "ndcg@10"),
    ("ndcg_xp@5", "ndcg_exp@5"),
    ("mpa@10", "map@10"),
    ("ndcg_cut.10", "ndcg@10"),
])
def test_misspelled_name_suggests_the_closest(make, name, suggestion):
    with pytest.raises(ValueError) as info:
        make(name)
    message = str(info.value)
    assert f"Did you mean {suggestion!r}?" in message
    assert GRAMMAR_HINT in message and "k an integer >= 1" in message
    assert "ndcg_exp[@<k>]" in message and "precision@<k>" in message


def _cli_metric_error(name):
    import contextlib
    import io
    import tempfile

    from skrank.cli import main

    with tempfile.TemporaryDirectory() as folder:
        qrels, run = Path(folder) / "qrels", Path(folder) / "run"
        qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
        run.write_text("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.1 t\n")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main(["evaluate", "-m", name, str(qrels), str(run)], out=io.StringIO())
    assert status == 2
    raise skrank.InvalidParameterError(err.getvalue())


# Every place that reads a metric name from a user, through the one did-you-mean helper.
_NAME_READERS = {
    "get_scorer": skrank.get_scorer,
    "make_ranking_scorer": make_ranking_scorer,
    "make_ranking_scorer(list)": lambda name: make_ranking_scorer([name, "map"]),
    "evaluate": lambda name: skrank.evaluate([1, 0], [0.5, 0.2], qid=[0, 0], metrics=[name]),
    "per_query_scores": lambda name: skrank.per_query_scores(name, [1, 0], [0.5, 0.2],
                                                             qid=[0, 0]),
    "cli -m": _cli_metric_error,
}


@pytest.mark.parametrize("reader", list(_NAME_READERS))
@pytest.mark.parametrize("name, suggestion", [
    ("NDGC@10", "ndcg@10"),                              # case aside
    ("ndgc@37", "ndcg@37"),                              # any cutoff kept, not the nearest common one
    ("ndgc(ties=stable)@10", "ndcg(ties=stable)@10"),    # options kept
    ("recal@1000", "recall@1000"),
    ("presicion", "precision@10"),                       # a metric that needs a cutoff gets one
])
def test_every_name_reader_suggests_the_corrected_name(reader, name, suggestion):
    with pytest.raises(ValueError) as info:
        _NAME_READERS[reader](name)
    message = str(info.value)
    assert f"{name!r}" in message and f"Did you mean {suggestion!r}?" in message
    if "unknown trec_eval measure" not in message:  # a name without '@' on the command line
        # the command line names its own --help, not a Python function (issue 25)
        listed = ("'skrank evaluate --help' lists them" if reader.startswith("cli")
                  else "skrank.get_scorer_names() lists them with common cutoffs")
        assert listed in message


def test_get_scorer_suggests_scikit_learns_names_too():
    """get_scorer passes scikit-learn's names on, so a misspelt one is answered with it."""
    for name, suggestion in (("acuracy", "accuracy"),
                             ("neg_mean_squard_error", "neg_mean_squared_error")):
        with pytest.raises(ValueError) as info:
            skrank.get_scorer(name)
        assert f"Did you mean {suggestion!r}?" in str(info.value)
        assert "sklearn.metrics.get_scorer_names()" in str(info.value)
        sk_get_scorer(suggestion)  # the suggestion is valid
    with pytest.raises(ValueError) as info:    # evaluate reads ranking metrics only
        skrank.evaluate([1, 0], [0.5, 0.2], qid=[0, 0], metrics=["acuracy"])
    assert "Did you mean" not in str(info.value)
    assert "sklearn.metrics" not in str(info.value)


@pytest.mark.parametrize("name", ["foo", "ndcg@", "ndcg@x", "@10", "ndcg@10@5", "ndcg@-1",
                                  "ndcg @10", ""])
def test_malformed_names_list_the_grammar(name):
    for make in (skrank.get_scorer, make_ranking_scorer):
        with pytest.raises(ValueError, match=r"unknown metric name") as info:
            make(name)
        assert GRAMMAR_HINT in str(info.value)


def test_zero_cutoff():
    for make in (skrank.get_scorer, make_ranking_scorer):
        with pytest.raises(ValueError, match=r"cutoff in 'ndcg@0' must be an integer >= 1"):
            make("ndcg@0")


def test_precision_without_cutoff():
    with pytest.raises(ValueError, match=r"precision needs a cutoff: write e.g. 'precision@10'"):
        make_ranking_scorer("precision")
    # as a string, "precision" is scikit-learn's classification scorer
    assert skrank.get_scorer("precision")._score_func is sklearn.metrics.precision_score
    assert isinstance(skrank.get_scorer("precision@5"), RankingScorer)
    assert isinstance(sk_get_scorer("P@5"), RankingScorer)


def test_r_precision_takes_no_cutoff():
    for make in (skrank.get_scorer, make_ranking_scorer):
        with pytest.raises(ValueError, match=r"r_precision takes no cutoff.*Use 'r_precision'"):
            make("r_precision@5")
    with pytest.raises(ValueError):
        sk_get_scorer("r_precision@5")
    assert isinstance(sk_get_scorer("r_precision"), RankingScorer)


def test_make_ranking_scorer_rejects_conflicts_and_bad_options():
    with pytest.raises(ValueError, match="already sets k"):
        make_ranking_scorer("ndcg@10", k=5)
    with pytest.raises(ValueError, match="response"):
        make_ranking_scorer("ndcg", response="decision_function")
    with pytest.raises((ValueError, TypeError)):
        make_ranking_scorer("ndcg", k=0)
    with pytest.raises((ValueError, TypeError)):
        make_ranking_scorer("ndcg", ties="random")
    with pytest.raises(TypeError, match="must be a string"):
        make_ranking_scorer(10)


# --------------------------------------------------------------------------------------
# 6. scorer objects: pickle, deepcopy, repr, names, and their values
# --------------------------------------------------------------------------------------

NAMESPACE = {"get_scorer": skrank.get_scorer, "make_ranking_scorer": make_ranking_scorer}

SCORERS = {
    "ndcg@10": lambda: skrank.get_scorer("ndcg@10"),
    "ndcg_exp@37": lambda: skrank.get_scorer("ndcg_exp@37"),
    "map": lambda: skrank.get_scorer("map"),
    "mrr@5": lambda: skrank.get_scorer("mrr@5"),
    "precision@3": lambda: skrank.get_scorer("precision@3"),
    "recall@10": lambda: skrank.get_scorer("recall@10"),
    "hit_rate": lambda: skrank.get_scorer("hit_rate"),
    "r_precision": lambda: skrank.get_scorer("r_precision"),
    "err@20": lambda: skrank.get_scorer("err@20"),
    "rbp": lambda: skrank.get_scorer("rbp"),
    "dcg_exp@3": lambda: skrank.get_scorer("dcg_exp@3"),
    "cg@5": lambda: skrank.get_scorer("cg@5"),
    "make-ndcg-k": lambda: make_ranking_scorer("ndcg", k=10),
    "make-map-min": lambda: make_ranking_scorer("map", k=10, denominator="min"),
    "make-ndcg-opts": lambda: make_ranking_scorer("ndcg", k=5, ties="stable",
                                                  no_relevant="one"),
    "make-err": lambda: make_ranking_scorer("err", k=5, max_grade=3),
    "make-expected-gain": lambda: make_ranking_scorer("ndcg", k=10, response="expected_gain"),
    "make-name-expected-gain": lambda: make_ranking_scorer("ndcg_exp@10",
                                                           response="expected_gain"),
}


def _value(scorer):
    X, y, qid, df = make_data(seed=8)
    if scorer._response == "expected_gain":
        model = LogisticRegression(max_iter=500).fit(X, y)
    else:
        model = Ridge().fit(X, y)
    with routed():
        return scorer(model, X, y, qid=qid)


@pytest.mark.parametrize("key", list(SCORERS))
def test_scorer_pickle_deepcopy_repr_and_name_round_trip(key):
    scorer = SCORERS[key]()
    assert isinstance(scorer, RankingScorer)
    expected = _value(scorer)
    copies = {
        "pickle": pickle.loads(pickle.dumps(scorer)),
        "deepcopy": copy.deepcopy(scorer),
        "repr": eval(repr(scorer), dict(NAMESPACE)),
    }
    if scorer.name is not None:
        copies["name"] = skrank.get_scorer(scorer.name) if scorer._response == "predict" else \
            make_ranking_scorer(scorer.name, response=scorer._response)
        copies["sklearn-name"] = sk_get_scorer(scorer.name) if scorer._response == "predict" \
            else copies["name"]
        copies["make-name"] = make_ranking_scorer(scorer.name, response=scorer._response)
    for how, other in copies.items():
        assert same_scorer(other, scorer), (how, repr(other), repr(scorer))
        assert repr(other) == repr(scorer), how
        assert _value(other) == expected, how   # NaN != NaN: a NaN value fails here too


def test_canonical_names_and_reprs():
    assert repr(make_ranking_scorer("ndcg", k=10, gain="exponential")) == \
        "get_scorer('ndcg_exp@10')"
    assert make_ranking_scorer("ndcg", k=10, gain="exponential").name == "ndcg_exp@10"
    # options without a stem of their own are written in the one grammar (issue 11)
    assert make_ranking_scorer("map", k=10, denominator="min").name == "map(denominator=min)@10"
    assert repr(make_ranking_scorer("map", k=10, denominator="min")) == \
        "get_scorer('map(denominator=min)@10')"
    assert make_ranking_scorer("ndcg", gain=np.sqrt).name is None   # no text form
    assert make_ranking_scorer("err", k=5).name == "err@5"
    assert repr(make_ranking_scorer("ndcg", response="expected_gain")) == \
        "make_ranking_scorer('ndcg', response='expected_gain')"
    assert repr(skrank.get_scorer("ndcg_exp@37")) == "get_scorer('ndcg_exp@37')"


def test_scorer_named_like_an_sklearn_scorer_round_trips():
    # "recall" (no cutoff) is skrank's recall only through make_ranking_scorer; as a
    # string it is scikit-learn's classification recall.  The scorer's repr and name
    # must therefore not send a reader (or eval) to scikit-learn's scorer.
    scorer = make_ranking_scorer("recall")
    assert isinstance(scorer, RankingScorer)
    again = eval(repr(scorer), dict(NAMESPACE))
    assert same_scorer(again, scorer), (repr(scorer), repr(again))
    assert scorer.name is None       # no string names it: "recall" is scikit-learn's
    assert _value(again) == _value(scorer)
    X, y, qid, _ = make_data(seed=8)
    assert _value(scorer) == pytest.approx(
        skrank.recall_at_k_score(y, Ridge().fit(X, y).predict(X), qid=qid), abs=1e-12)


def test_metadata_request_of_scorers():
    routing = skrank.get_scorer("ndcg@10").get_metadata_routing()
    assert routing.score.requests["qid"] is True
    routing = make_ranking_scorer("map", k=3).get_metadata_routing()
    assert routing.score.requests["qid"] is True


METRIC_OPTIONS = [
    ("ndcg", dict(k=5, ties="pessimistic")),
    ("ndcg", dict(k=5, ties="optimistic")),
    ("ndcg", dict(k=5, ties="stable", gain="exponential", no_relevant="one")),
    ("ndcg", dict(gain=np.sqrt, no_relevant="skip")),
    ("dcg", dict(k=3, log_base=10)),
    ("map", dict(threshold=2, no_relevant="skip")),
    ("map", dict(k=10, denominator="min", threshold=1)),
    ("mrr", dict(k=3, threshold=2, ties="stable")),
    ("precision", dict(k=3, threshold=2, denominator="min")),
    ("recall", dict(k=5, threshold=3, ties="pessimistic")),
    ("hit_rate", dict(k=1, threshold=2, no_relevant="skip")),
    ("r_precision", dict(threshold=2)),
    ("err", dict(k=5, max_grade=3)),
    ("rbp", dict(p=0.5, threshold=2)),
]


def _options_id(metric, options):
    shown = ",".join(f"{k}={getattr(v, '__name__', v)}" for k, v in options.items())
    return f"{metric}-{shown}"


@pytest.mark.parametrize("metric, options", METRIC_OPTIONS,
                         ids=[_options_id(m, o) for m, o in METRIC_OPTIONS])
def test_make_ranking_scorer_equals_the_metric_function(metric, options):
    X, y, qid, df = make_data(seed=9, shuffle=True)
    # a shallow tree: few distinct predictions, so many tied scores
    model = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    pred = model.predict(X)
    assert np.unique(pred).size <= 4
    expected = skrank.METRICS[metric].function(y, pred, qid=qid, **options)
    scorer = make_ranking_scorer(metric, **options)
    assert scorer(_DropQid(model), df, y) == expected
    with routed():
        assert scorer(model, X, y, qid=qid) == expected


class _DropQid(BaseEstimator, RegressorMixin):
    """Wraps a fitted model so that it predicts from a DataFrame without its qid column."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):  # pragma: no cover - never refitted
        return self

    def predict(self, X):
        return self.model.predict(X.drop(columns="qid").to_numpy())


def test_make_ranking_scorer_precision_with_k_as_an_option():
    # "precision" needs a cutoff; given as the k option it must be accepted, like every
    # other option of the metric (make_ranking_scorer("ndcg", k=10) works).
    scorer = make_ranking_scorer("precision", k=3)
    assert scorer.name == "precision@3"
    assert same_scorer(scorer, skrank.get_scorer("precision@3"))


def test_tie_options_reach_the_metric():
    X, y, qid, _ = make_data(seed=9, shuffle=True)
    model = DecisionTreeRegressor(max_depth=1, random_state=0).fit(X, y)
    with routed():
        values = {ties: make_ranking_scorer("ndcg", k=5, ties=ties)(model, X, y, qid=qid)
                  for ties in ("pessimistic", "average", "optimistic")}
    assert values["pessimistic"] < values["average"] < values["optimistic"]


def test_callable_metric():
    X, y, qid, _ = make_data(seed=10)

    def top1_label(y_true, y_score, *, qid, bonus=0.0):
        best = {}
        for t, s, q in zip(y_true, y_score, qid):
            if q not in best or s > best[q][0]:
                best[q] = (s, t)
        return float(np.mean([t for _, t in best.values()])) + bonus

    scorer = make_ranking_scorer(top1_label, bonus=1.0)
    model = Ridge().fit(X, y)
    with routed():
        got = scorer(model, X, y, qid=qid)
    assert got == top1_label(y, model.predict(X), qid=qid, bonus=1.0)
    assert "top1_label" in repr(scorer)


def test_scorer_equals_metric_on_held_out_predictions():
    X, y, qid, df = make_data(n_queries=30, seed=11)
    test_q = np.isin(qid, np.unique(qid)[::3])
    model = Ridge(alpha=3.0).fit(X[~test_q], y[~test_q])
    pred = model.predict(X[test_q])
    expected = skrank.ndcg_score(y[test_q], pred, qid=qid[test_q])
    with routed():
        assert skrank.get_scorer("ndcg")(model, X[test_q], y[test_q], qid=qid[test_q]) == \
            expected
    assert skrank.get_scorer("ndcg")(_DropQid(model), df[test_q], y[test_q]) == expected
    assert sk_get_scorer("ndcg")(_DropQid(model), df[test_q], y[test_q]) == expected
    # routed qid wins over the DataFrame column
    wrong = df[test_q].assign(qid=0)
    with routed():
        assert skrank.get_scorer("ndcg")(_DropQid(model), wrong, y[test_q],
                                         qid=qid[test_q]) == expected


def test_scorer_rejects_other_metadata():
    X, y, qid, _ = make_data()
    model = Ridge().fit(X, y)
    with routed(), pytest.raises(TypeError, match="take only qid and sample_weight"):
        skrank.get_scorer("ndcg")(model, X, y, qid=qid, groups=qid)


# --------------------------------------------------------------------------------------
# 7. missing qid
# --------------------------------------------------------------------------------------


def test_missing_qid_message():
    X, y, qid, _ = make_data()
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError) as info:
        skrank.get_scorer("ndcg@10")(model, X, y)
    message = str(info.value)
    assert "ndcg@10 needs qid" in message
    assert "enable_metadata_routing=True" in message and "fit(X, y, qid=qid)" in message
    assert "DataFrame with a 'qid' column" in message
    assert "error_score" in message


def test_missing_qid_in_grid_search_is_nan_with_a_warning():
    X, y, qid, _ = make_data()
    # groups reach the splitter but not the scorer: the scorer has no qid
    search = GridSearchCV(Ridge(), {"alpha": [1.0, 10.0]}, scoring="ndcg@10", cv=QueryKFold(3))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search.fit(X, y, groups=qid)
    assert np.isnan(search.cv_results_["mean_test_score"]).all()
    failed = [str(w.message) for w in record
              if w.category is UserWarning and "Scoring failed" in str(w.message)]
    assert len(failed) == 2 * 3  # every candidate x fold
    assert all("needs qid but none was given" in m for m in failed)
    assert any("non-finite" in str(w.message) for w in record)


def test_missing_qid_with_error_score_raise():
    X, y, qid, _ = make_data()
    search = GridSearchCV(Ridge(), {"alpha": [1.0]}, scoring="ndcg@10", cv=QueryKFold(3),
                          error_score="raise")
    with pytest.raises(ValueError, match="ndcg@10 needs qid but none was given"):
        search.fit(X, y, groups=qid)
    with pytest.raises(ValueError, match="needs qid"):
        cross_validate(Ridge(), X, y, groups=qid, cv=QueryKFold(3), scoring=["ndcg", "map"],
                       error_score="raise")
    with pytest.warns(UserWarning, match="Scoring failed"):
        res = cross_validate(Ridge(), X, y, groups=qid, cv=QueryKFold(3), scoring="ndcg")
    assert np.isnan(res["test_score"]).all()


# --------------------------------------------------------------------------------------
# 8. the scorer receives exactly the test fold's qids
# --------------------------------------------------------------------------------------


def _recording_scorer(log):
    def metric(y_true, y_score, *, qid):
        log.append(np.array(qid, copy=True))
        return skrank.ndcg_score(y_true, y_score, qid=qid)

    return make_ranking_scorer(metric)


class QidRecorder(RegressorMixin, BaseEstimator):
    """Ridge that keeps the qid it was fitted with."""

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fit(self, X, y, qid=None):
        X = X.drop(columns="qid").to_numpy() if hasattr(X, "columns") else X
        self.fit_qid_ = None if qid is None else np.array(qid, copy=True)
        self.model_ = Ridge(alpha=self.alpha).fit(X, y)
        return self

    def predict(self, X):
        X = X.drop(columns="qid").to_numpy() if hasattr(X, "columns") else X
        return self.model_.predict(X)


@pytest.mark.parametrize("how", ["routing", "dataframe"])
def test_scorer_receives_the_test_folds_qids(how):
    X, y, qid, df = make_data(n_queries=20, seed=12, shuffle=True)
    qid = np.array([f"q{q}" for q in qid])  # string ids, rows interleaved
    df["qid"] = qid
    cv = QueryKFold(4, shuffle=True, random_state=1)
    log = []
    if how == "routing":
        with routed():
            GridSearchCV(QidRecorder().set_fit_request(qid=True), {"alpha": [1.0]},
                         scoring=_recording_scorer(log), cv=cv, refit=False).fit(X, y, qid=qid)
    else:
        GridSearchCV(QidRecorder(), {"alpha": [1.0]}, scoring=_recording_scorer(log), cv=cv,
                     refit=False).fit(df, y)
    expected = [qid[test] for _, test in cv.split(X, qid=qid)]
    assert len(log) == len(expected) == 4
    for got, want in zip(log, expected):
        np.testing.assert_array_equal(got, want)


def test_estimator_receives_the_training_folds_qids():
    X, y, qid, _ = make_data(n_queries=20, seed=13, shuffle=True)
    cv = QueryKFold(3, shuffle=True, random_state=2)
    with routed():
        res = cross_validate(QidRecorder().set_fit_request(qid=True), X, y, params={"qid": qid},
                             cv=cv, scoring="ndcg@10", return_estimator=True,
                             return_indices=True)
    splits = list(cv.split(X, qid=qid))
    for est, (train, test), test_idx in zip(res["estimator"], splits, res["indices"]["test"]):
        np.testing.assert_array_equal(est.fit_qid_, qid[train])
        np.testing.assert_array_equal(test_idx, test)
        assert not set(est.fit_qid_) & set(qid[test])


# --------------------------------------------------------------------------------------
# 9. n_jobs does not change the results
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["routing", "dataframe"])
def test_same_cv_results_with_n_jobs_1_and_2(how):
    X, y, qid, df = make_data(n_queries=30, seed=14, shuffle=True)
    scoring = {"ndcg": "ndcg_exp@10", "map": "map@5", "mrr": "mrr"}
    results = []
    for n_jobs in (1, 2):
        if how == "routing":
            search = GridSearchCV(Ridge(), {"alpha": [0.1, 10.0, 1000.0]}, scoring=scoring,
                                  refit="ndcg", cv=QueryKFold(3), n_jobs=n_jobs)
            with routed():
                search.fit(X, y, qid=qid)
        else:
            search = GridSearchCV(frame_ridge(), {"ridge__alpha": [0.1, 10.0, 1000.0]},
                                  scoring=scoring, refit="ndcg", cv=QueryKFold(3),
                                  n_jobs=n_jobs).fit(df, y)
        results.append(search)
    one, two = results
    keys = [k for k in one.cv_results_ if "_test_" in k]
    assert len(keys) == 3 * (3 + 3)  # mean, std, rank and 3 splits per metric
    for key in keys:
        np.testing.assert_array_equal(one.cv_results_[key], two.cv_results_[key], err_msg=key)
    assert one.best_index_ == two.best_index_ and one.best_score_ == two.best_score_


def test_str_options_answer_changes_only_for_ranking_names_in_scorer_sets():
    from sklearn.utils._param_validation import StrOptions

    scorer_names = StrOptions(set(sklearn.metrics.get_scorer_names()))
    other = StrOptions({"auto", "ndcg", "accuracy"})
    assert scorer_names.is_satisfied_by("ndcg_exp@37")
    assert scorer_names.is_satisfied_by("accuracy")
    # not a ranking name, not a scorer-name set, not a string: the original answer
    for options, value in [(scorer_names, "ndgc@10"), (scorer_names, "ndcg@0"),
                           (other, "ndcg@10"), (other, "map"), (scorer_names, 10)]:
        assert options.is_satisfied_by(value) is \
            options.is_satisfied_by.__wrapped__(options, value) is False
    assert other.is_satisfied_by("ndcg") is True
