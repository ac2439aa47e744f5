"""In CI a skip for a missing test dependency or missing ../shared data is a failure.

``.ci/run`` sets ``SKRANK_TEST_REQUIRE_ALL``; tests/conftest.py then turns such skips into
failures, while other skips (and every skip in a user's clone) stay skips.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._require_all import REQUIRE_ALL_ENV

REPO = Path(__file__).resolve().parents[1]
PROBE = textwrap.dedent("""
    import pytest

    def test_missing_dependency():
        pytest.importorskip("skrank_no_such_module")

    def test_missing_shared_data():
        pytest.skip("data not found: /somewhere/shared/data/ltr/x.txt")

    def test_other_reason():
        pytest.skip("not applicable here")
""")


def _run_probe(tmp_path, require_all):
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_ALL_ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if require_all:
        env[REQUIRE_ALL_ENV] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           "-p", "tests._require_all", "test_probe.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("require_all", [False, True])
def test_missing_requirements_fail_only_when_required(tmp_path, require_all):
    out = _run_probe(tmp_path, require_all)
    if require_all:
        assert "FAILED test_probe.py::test_missing_dependency" in out, out
        assert "FAILED test_probe.py::test_missing_shared_data" in out, out
        assert "2 failed, 1 skipped" in out, out
    else:
        assert "3 skipped" in out, out
    assert "SKIPPED" in out and "not applicable here" in out, out
