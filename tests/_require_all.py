"""A pytest plugin: where ``SKRANK_TEST_REQUIRE_ALL`` is set (``.ci/run`` sets it), a skip
because a test dependency or the ``../shared`` data is missing is a failure.

A user's clone without them still skips, with the reason.  Recognised reasons: pytest's
``importorskip`` wording, and the data loaders' reasons, which all name ``shared/data``.
"""

import os
import re

import pytest

REQUIRE_ALL_ENV = "SKRANK_TEST_REQUIRE_ALL"
_MISSING_SOMETHING = re.compile(r"could not import|shared/data")



def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_missing_requirement(report):
    if not os.environ.get(REQUIRE_ALL_ENV) or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if _MISSING_SOMETHING.search(reason):
        report.outcome = "failed"
        report.longrepr = (f"{REQUIRE_ALL_ENV} is set (as in CI), so a missing test dependency "
                           f"or missing ../shared data is a failure, not a skip: {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_missing_requirement(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # a module-level importorskip skips the whole module at collection
    outcome = yield
    _fail_missing_requirement(outcome.get_result())
