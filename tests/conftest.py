"""Shared helpers of the table-driven tests.

Everything here is driven by :data:`skrank.METRICS`: a metric added to the table
gets valid parameters, parameter grids and data for free.  Test modules import
these helpers with ``from tests.conftest import ...`` (falling back to
``from conftest import ...`` when ``tests`` is not importable as a package).
"""

import functools
import inspect
import math
import os
import zlib

os.environ.setdefault("MPLBACKEND", "Agg")  # figures are drawn to files only, never shown

import numpy as np
import pytest
from hypothesis import settings

import skrank

# Property tests: the same examples on every CI run (derandomize=True: seeded from each
# test's own hash, so a counterexample found once is found on every run, and a run
# cannot pass by luck); locally the default profile draws new examples each run and
# keeps its example database (.hypothesis/), which replays the failures it found.
# SKRANK_HYPOTHESIS_PROFILE picks one explicitly.
settings.register_profile("ci", derandomize=True, print_blob=True,
                          parent=settings.get_profile("default"))
settings.register_profile("local", parent=settings.get_profile("default"))


def hypothesis_profile(environ):
    """The hypothesis profile for an environment: "ci" where CI=true or
    SKRANK_TEST_REQUIRE_ALL is set (.ci/run), else "local"."""
    if environ.get("SKRANK_HYPOTHESIS_PROFILE"):
        return environ["SKRANK_HYPOTHESIS_PROFILE"]
    ci = environ.get("CI", "").lower() in ("1", "true", "yes")
    return "ci" if ci or environ.get("SKRANK_TEST_REQUIRE_ALL") else "local"


settings.load_profile(hypothesis_profile(os.environ))

try:  # works whether or not tests/ is a package
    from tests import _reference as R
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    import _reference as R

#: The metrics with scorer names (those of the table that read no extra input; bpref,
#: infap and judged@k read ``judged=`` and have their own oracle tests).
SPECS = [spec for spec in skrank.METRICS.values() if spec.scorer and not spec.inputs]
#: (the generic tests read one label per row: the diversity metrics, scorers on a label
#: matrix rows x subtopics, have their oracle tests in tests/test_diversity.py)
AVERAGE_SPECS = [spec for spec in SPECS if "average" in spec.ties]


def spec_id(spec):
    return spec.name


def spec_ties(specs=None):
    """(spec, ties) pairs for every metric and every tie policy it supports."""
    return [
        pytest.param(spec, ties, id=f"{spec.name}-{ties}")
        for spec in (SPECS if specs is None else specs)
        for ties in spec.ties
    ]


# --------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------

#: Alternative values tried for each option, by option name (the default is always tried).
PARAM_VALUES = {
    "k": [None, 1, 3, 50],
    "gain": ["linear", "exponential", np.sqrt],
    "threshold": [1, 2],
    "log_base": [2, 10],
    "p": [0.8, 0.5],
    "no_relevant": ["zero", "one", "skip", "nan", "raise"],
    "max_grade": ["label_max", "label_max+1"],
}

@functools.lru_cache(maxsize=None)
def _defaults(name):
    """spec.parameters, cached (hypothesis calls this a lot)."""
    return skrank.METRICS[name].parameters


def _max_grade(y_true):
    top = float(np.max(y_true)) if np.size(y_true) else 0.0
    return max(1.0, math.ceil(top))


def valid_params(spec, y_true=(), **overrides):
    """Options that make a valid call of ``spec`` on labels ``y_true``.

    Fills in the required ones (``k`` for required-k metrics, ``max_grade`` =
    label max for "graded" metrics); ``overrides`` win.  The sentinels
    ``"label_max"`` / ``"label_max+1"`` for max_grade are resolved from y_true.
    """
    params = {}
    defaults = _defaults(spec.name)
    for name, default in defaults.items():
        if default is inspect.Parameter.empty:
            if name == "k":
                params["k"] = 3
            elif name == "max_grade":
                params["max_grade"] = _max_grade(y_true)
            else:  # pragma: no cover - a new required option: teach this helper
                raise AssertionError(f"valid_params: no value for required {name!r}")
    if spec.k == "required" and params.get("k", defaults.get("k")) is None:
        params["k"] = 3
    params.update(overrides)
    if params.get("max_grade") == "label_max":
        params["max_grade"] = _max_grade(y_true)
    elif params.get("max_grade") == "label_max+1":
        params["max_grade"] = _max_grade(y_true) + 1
    if spec.k == "required" and "k" in params and params["k"] is None:
        params["k"] = 3
    unknown = set(params) - set(defaults)
    assert not unknown, f"{spec.name} does not take {sorted(unknown)}"
    return params


def takes_dcg_gain(spec):
    """Whether ``gain`` is the DCG family's option (linear/exponential/callable); rbp's
    ``gain`` (binary/linear/trec) is a choice of its own."""
    return _defaults(spec.name).get("gain") == "linear"


class NoExampleValues(LookupError):
    """A declared option without example values for the table-driven tests."""


def _values_of(spec, name):
    """The values of option ``name`` that the table-driven tests try on ``spec``: its
    entry of PARAM_VALUES, else the values its declaration lists as ``valid``.  An
    option with neither is an error, not its default alone: a kernel that ignored the
    option would pass every oracle test (``tests/test_declarations.py`` checks every
    declared option has values other than its default)."""
    if (name == "gain" and not takes_dcg_gain(spec)) or name == "denominator":
        return list(spec.param(name).choices)  # the metric's own choices (rbp, map, P@k)
    if name == "k" and spec.k == "required":
        return [v for v in PARAM_VALUES["k"] if v is not None]
    if name in PARAM_VALUES:
        return PARAM_VALUES[name]
    declared = list(spec.param(name).valid)
    if declared:
        return declared
    raise NoExampleValues(
        f"tests/conftest.py: option {name!r} of {spec.name} has no example values. Add its "
        f"values to PARAM_VALUES, or list them as valid=(...) on its Param: with its default "
        f"alone, a kernel that ignored the option would pass every oracle test.")


def _combo_id(params):
    def show(v):
        return getattr(v, "__name__", repr(v)).strip("'")

    return ",".join(f"{k}={show(v)}" for k, v in params.items()) or "defaults"


def param_grid(spec):
    """A few option combinations of one metric (ties excluded).

    The defaults, every single-option variation, and every variation crossed
    with k in {1, 3} (cutoffs interact with denominators, no_relevant, ...).
    """
    return [dict(combo) for combo in _param_grid(spec.name)]


@functools.lru_cache(maxsize=None)
def _param_grid(name):
    spec = skrank.METRICS[name]
    names = [n for n in _defaults(name) if n not in ("ties",)]
    base = {}
    if "k" in names:
        base["k"] = _values_of(spec, "k")[0]
    if "max_grade" in names:
        base["max_grade"] = "label_max"
    combos = [dict(base)]
    for name in names:
        for value in _values_of(spec, name):
            combo = dict(base)
            combo[name] = value
            combos.append(combo)
            if "k" in names and name != "k":
                for k in (1, 3):
                    crossed = dict(combo)
                    crossed["k"] = k
                    combos.append(crossed)
    seen, out = set(), []
    for combo in combos:
        key = _combo_id(combo)
        if key not in seen:
            seen.add(key)
            out.append(combo)
    return tuple(out)


# --------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------


def seed_of(*parts):
    """A stable seed from test parameters (not Python's salted hash)."""
    return zlib.crc32(repr(parts).encode())


def make_qids(rng, n_queries, kind):
    if kind == "int":
        ids = rng.choice(np.arange(-50, 1000), size=n_queries, replace=False)
        return [int(i) for i in ids]
    if kind == "str":
        return [f"q{int(i)}" for i in rng.choice(1000, size=n_queries, replace=False)]
    # mixed ints and strings (not mutually orderable)
    return [int(i) if j % 2 else f"s{int(i)}"
            for j, i in enumerate(rng.choice(1000, size=n_queries, replace=False))]


def make_queries(rng, *, n_queries=8, max_size=7, n_labels=4, n_scores=4, qid_kind="int",
                 n_irrelevant=2, unretrieved=0.0, float_scores=False):
    """Random ragged, shuffled input.

    Returns ``(y_true, y_score, qid, retrieved)`` as numpy arrays (``retrieved`` is
    None when ``unretrieved == 0``; unretrieved rows get NaN scores).  Integer
    labels in ``[0, n_labels)``, integer scores in ``[0, n_scores)`` (many ties)
    unless ``float_scores``; the first ``n_irrelevant`` queries have only zero labels.
    """
    sizes = rng.integers(1, max_size + 1, size=n_queries)
    ids = make_qids(rng, n_queries, qid_kind)
    y_true, y_score, qid = [], [], []
    for q, size in enumerate(sizes):
        labels = rng.integers(0, n_labels, size=size)
        if q < n_irrelevant:
            labels[:] = 0
        scores = rng.random(size) if float_scores else rng.integers(0, n_scores, size=size)
        y_true.extend(labels.tolist())
        y_score.extend(scores.tolist())
        qid.extend([ids[q]] * size)
    perm = rng.permutation(len(y_true))
    y_true = np.asarray(y_true, dtype=np.float64)[perm]
    y_score = np.asarray(y_score, dtype=np.float64)[perm]
    qid_arr = np.empty(len(qid), dtype=object)
    qid_arr[:] = qid
    qid_arr = qid_arr[perm]
    if qid_kind == "int":
        qid_arr = qid_arr.astype(np.int64)
    elif qid_kind == "str":
        qid_arr = qid_arr.astype(str)
    retrieved = None
    if unretrieved:
        retrieved = rng.random(len(y_true)) >= unretrieved
        y_score = y_score.copy()
        y_score[~retrieved] = np.nan
    return y_true, y_score, qid_arr, retrieved


# --------------------------------------------------------------------------------------
# calling skrank and the oracle
# --------------------------------------------------------------------------------------


def call_metric(spec, y_true, y_score, qid=None, retrieved=None, **params):
    """(mean, QueryScores) of one metric through its function and per_query_scores."""
    kw = {} if retrieved is None else {"retrieved": retrieved}
    mean = spec.function(y_true, y_score, qid=qid, **kw, **params)
    per_q = skrank.per_query_scores(spec.name, y_true, y_score, qid=qid, **kw, **params)
    return mean, per_q


def oracle(spec, y_true, y_score, qid, retrieved=None, **params):
    """R.ref_mean with the metric's options split the way the oracle takes them."""
    params = dict(params)
    ties = params.pop("ties", spec.parameters.get("ties", "average"))
    no_relevant = params.pop("no_relevant", "zero")
    return R.ref_mean(spec.name, list(y_true), list(y_score), list(qid), retrieved=retrieved,
                      ties=ties, no_relevant=no_relevant, **params)


def _same(a, b, rel=1e-12, abs_=1e-12):
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def assert_close(got, expected, rel=1e-12, abs_=1e-12, what="value"):
    assert _same(got, expected, rel, abs_), f"{what}: got {got!r}, expected {expected!r}"


def assert_per_query_equal(per_q, expected, rel=1e-12, abs_=1e-12):
    """per_q: QueryScores; expected: {qid: value} (the oracle's)."""
    got_ids = per_q.qid.tolist()
    assert len(got_ids) == len(set(got_ids)), f"duplicate qids {got_ids}"
    assert set(got_ids) == set(expected), f"qids {got_ids} != {list(expected)}"
    assert per_q.score.shape == (len(got_ids),)
    bad = {q: (v, expected[q]) for q, v in zip(got_ids, per_q.score.tolist())
           if not _same(v, expected[q], rel, abs_)}
    assert not bad, f"per-query (got, expected): {bad}"


# In CI a skip for a missing test dependency or missing ../shared data is a failure.
try:  # noqa: E402  (pytest hooks, registered by their names)
    from tests._require_all import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from _require_all import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401


# --------------------------------------------------------------------------------------
# object ids: the compiled reading and the pure-numpy paths
# --------------------------------------------------------------------------------------

#: The skip reason where skrank._engine._speedups was not built; "could not import" makes it a
#: failure in CI (tests/_require_all.py), where a C compiler is present.
NO_SPEEDUPS = ("could not import skrank._engine._speedups: skrank was installed without a C "
               "compiler, so object ids and tie-averaged AP take the pure-numpy paths only")


@pytest.fixture(params=["compiled", "pure"], scope="module")
def object_id_route(request):
    """Every test of a module that uses this fixture runs twice: object ids read by
    skrank._engine._speedups, then by the pure-numpy paths alone (as where no C compiler
    built the module).  Both must give the same ids, codes and values."""
    from skrank._engine import codes as C
    from skrank._engine import ranking as R

    compiled = C._speedups
    if request.param == "compiled" and compiled is None:
        pytest.skip(NO_SPEEDUPS)
    C._speedups = compiled if request.param == "compiled" else None
    yield request.param
    C._speedups = compiled
