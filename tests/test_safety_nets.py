"""Contributor safety nets (issue 24): the tests that catch a place left out when a
metric or an option is added.

- every declared option has example values other than its default, and each of them
  changes some value (a kernel that ignored its option would fail here, and the
  table-driven oracle tests try those values);
- an option without example values is an error of the test helpers, not a silent
  fall back to its default;
- property tests are derandomised in CI (the same examples every run), while a local
  run keeps hypothesis' example database.
"""

import dataclasses
import math
import os
from numbers import Real

import numpy as np
import pytest
from hypothesis import settings

import skrank
from skrank._declare.params import Interval, Param

try:  # works whether or not tests/ is a package
    from tests.conftest import (SPECS, NoExampleValues, _values_of, hypothesis_profile,
                                spec_id, valid_params)
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import (SPECS, NoExampleValues, _values_of, hypothesis_profile, spec_id,
                          valid_params)

#: Options tried elsewhere value by value (ties: every policy, by spec_ties).
_APART = ("ties",)

# Three queries: graded labels with ties in the scores, a short one, and one without any
# relevant document (so that no_relevant matters).
Y = np.array([3, 0, 2, 1, 0, 2, 1, 0, 0, 0, 0, 1, 2, 0, 3, 1], dtype=float)
S = np.array([0.1, 0.9, 0.5, 0.5, 0.3, 0.2, 0.8, 0.9, 0.4, 0.4, 0.1, 0.7, 0.7, 0.6, 0.2, 0.9])
Q = np.array([0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3])


def _same(a, b):
    return (isinstance(a, str) == isinstance(b, str)) and (
        a is b or (not callable(a) and not callable(b) and a == b))


def _options(spec):
    return [name for name in spec.parameters if name not in _APART]


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_every_declared_option_has_example_values(spec):
    for name in _options(spec):
        values = _values_of(spec, name)
        default = spec.parameters[name]
        assert any(not _same(value, default) for value in values), (
            f"{spec.name}: the example values of {name!r} are only its default {default!r}")


def _value(spec, **options):
    params = valid_params(spec, Y, **options)
    value = spec.function(Y, S, qid=Q, **params)
    return None if isinstance(value, float) and math.isnan(value) else round(value, 12)


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_every_example_value_of_an_option_changes_a_value(spec):
    """Some example value of each option gives another score than another (with the
    cutoffs the grid crosses it with): an option that a kernel ignored fails here."""
    for name in _options(spec):
        cutoffs = [{}] if name == "k" or spec.k == "none" else [{}, {"k": 1}, {"k": 3}]
        changed = False
        for cut in cutoffs:
            got = set()
            for value in _values_of(spec, name):
                try:
                    got.add(_value(spec, **{**cut, name: value}))
                except ValueError:   # no_relevant="raise" on the query without relevant
                    got.add("raised")
            changed = changed or len(got) > 1
        assert changed, f"{spec.name}: no example value of {name!r} changes the score"


def test_an_option_without_example_values_is_an_error():
    """A new option declared without values to try is reported, not tried at its
    default alone."""
    spec = skrank.METRICS["mrr"]
    alpha = Param("alpha", (Interval(Real, 0, 1),), default=0.5, description="A new option.")
    new = dataclasses.replace(spec, params=(*spec.params, alpha))
    with pytest.raises(NoExampleValues, match="option 'alpha' of mrr has no example values"):
        _values_of(new, "alpha")
    with_examples = dataclasses.replace(
        spec, params=(*spec.params, alpha.replace(valid=(0.5, 0.25))))
    assert _values_of(with_examples, "alpha") == [0.5, 0.25]


@pytest.mark.parametrize("environ, profile", [
    ({}, "local"), ({"CI": "true"}, "ci"), ({"CI": "1"}, "ci"),
    ({"SKRANK_TEST_REQUIRE_ALL": "1"}, "ci"), ({"CI": "false"}, "local"),
    ({"CI": "true", "SKRANK_HYPOTHESIS_PROFILE": "local"}, "local")])
def test_hypothesis_profile_of_the_environment(environ, profile):
    assert hypothesis_profile(environ) == profile


def test_property_tests_are_derandomised_in_ci():
    ci, local = settings.get_profile("ci"), settings.get_profile("local")
    assert ci.derandomize and ci.database is None
    assert not local.derandomize and local.database is not None   # kept locally
    loaded = settings.get_profile(hypothesis_profile(os.environ))
    assert settings.default.derandomize == loaded.derandomize
    try:  # the property tests' own settings inherit the profile
        from tests.test_properties import SETTINGS
    except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
        from test_properties import SETTINGS
    assert SETTINGS.derandomize == loaded.derandomize


def test_docs_scorer_table_is_generated_from_the_declarations():
    """docs/tuning.md's table of scorer names is scorer_names_markdown(): a metric added
    to the table appears there, one that reads judged= does not."""
    from pathlib import Path

    from skrank._declare.names import scorer_names_markdown

    table = scorer_names_markdown()
    text = (Path(__file__).resolve().parents[1] / "docs" / "tuning.md").read_text(
        encoding="utf-8")
    assert table in text
    for spec in skrank.METRICS.values():
        assert (f"`{spec.name}" in table) == spec.scorer, spec.name
