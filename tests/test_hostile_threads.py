"""Threads (issue 26, item 13): no skrank code may change the process's warning
filters from a worker thread. ``warnings.catch_warnings`` swaps the global filter
list on enter and restores it on exit: two threads interleaving can leave
``('ignore', ...)`` at the front for everyone (1 round in 60 with compare(test='t'))."""

import ast
import os
import sys
import threading
import warnings

import numpy as np
import pytest

import skrank

PACKAGE = os.path.dirname(skrank.__file__)
FILTER_CALLS = {"catch_warnings", "simplefilter", "filterwarnings", "resetwarnings"}
# The only places allowed to touch the filters: the command line's entry point (the
# main thread of a process of its own) and the NumPy 1.x shim (see its docstring).
ALLOWED = {("cli.py", "main"), ("checks.py", "filtered_on_numpy_1")}


class _Calls(ast.NodeVisitor):
    """Calls of the warning-filter functions, with the function they are in."""

    def __init__(self, path):
        self.path, self.function, self.found = path, "<module>", []

    def visit_FunctionDef(self, node):
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node):
        if isinstance(node.func, ast.Attribute) and node.func.attr in FILTER_CALLS:
            self.found.append((self.path, self.function, node.lineno))
        self.generic_visit(node)


def _filter_calls():
    for root, _, files in os.walk(PACKAGE):
        for file in files:
            if file.endswith(".py"):
                path = os.path.join(root, file)
                calls = _Calls(os.path.relpath(path, PACKAGE))
                calls.visit(ast.parse(open(path, encoding="utf-8").read()))
                yield from calls.found


def test_every_module_leaves_the_warning_filters_alone():
    """Every module of the package, read as source: a new catch_warnings anywhere
    fails here, whichever code path (Dask, joblib, threads) would reach it."""
    found = {(path, func, line) for path, func, line in _filter_calls()}
    assert found, "the scan found no call at all: it no longer reads the package"
    offending = sorted(c for c in found if (os.path.basename(c[0]), c[1]) not in ALLOWED)
    assert not offending, f"warning filters changed outside {ALLOWED}: {offending}"


def test_concurrent_calls_never_enter_catch_warnings_off_the_main_thread(monkeypatch):
    main = threading.main_thread()
    off_main = []
    real = warnings.catch_warnings

    class Watched(real):
        def __enter__(self):
            if sys._getframe(1).f_code.co_filename.startswith(PACKAGE) \
                    and threading.current_thread() is not main:
                off_main.append(sys._getframe(1).f_code.co_name)
            return super().__enter__()

    monkeypatch.setattr(warnings, "catch_warnings", Watched)
    rng = np.random.default_rng(0)
    base = {f"q{i}": float(v) for i, v in enumerate(rng.random(30))}
    shifted = {q: v + 0.125 for q, v in base.items()}  # constant differences: scipy warns
    y, s, qid = rng.integers(0, 3, 300), rng.random(300), np.repeat(np.arange(30), 10)
    errors = []

    def work():
        try:
            for test in ("t", "wilcoxon", "sign"):
                skrank.compare({"a": base, "b": shifted}, test=test, n_resamples=100)
            skrank.evaluate(y, s, qid=qid, metrics=["ndcg@5", "map"])
            skrank.per_query_scores("mrr", y, s, qid=qid)
        except Exception as exc:  # pragma: no cover - shown by the assertion below
            errors.append(exc)

    before = list(warnings.filters)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert off_main == []
    assert list(warnings.filters) == before


def test_t_test_p_values_equal_scipy_without_its_warning():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    a = rng.random(12)
    for b in (a + rng.normal(scale=0.1, size=12), a + 0.25, a - 1e-3 * rng.random(12)):
        res = skrank.compare({"a": dict(enumerate(a)), "b": dict(enumerate(b))}, test="t",
                             correction=None)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = stats.ttest_rel(b, a).pvalue
        assert res.pairs[0].p_value == pytest.approx(expected, rel=1e-9, abs=1e-300)
