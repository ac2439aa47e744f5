"""The C extension takes only real numpy object arrays (issue 26, item 14), and
SKRANK_NO_SPEEDUPS rules it out. Each hostile call runs in a subprocess: a
segfault there is a failed test, not a crashed test run."""

import os
import subprocess
import sys
import textwrap

import pytest

from skrank._engine import codes as C

try:  # works whether or not tests/ is a package
    from tests.conftest import NO_SPEEDUPS
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import NO_SPEEDUPS

HOSTILE = """
import numpy as np
from skrank._engine import codes as C

bogus = {"typestr": "|O", "shape": (1000,), "data": (16, False), "version": 3}


class Claims:
    __array_interface__ = bogus


class Sub(np.ndarray):
    @property
    def __array_interface__(self):
        return bogus


ids = np.array(["a", "b"] * 500, dtype=object)
out = np.empty(1000, dtype=np.int64)
heads, low, high = np.empty(1000, dtype=np.uint64), np.empty(8, np.uint8), np.empty(8, np.uint8)
calls = {
    "int_values": lambda a: C._speedups.int_values(a, out),
    "str_codes": lambda a: C._speedups.str_codes(a, out, out.copy()),
    "str_runs": lambda a: C._speedups.str_runs(a, out),
    "ascii_heads": lambda a: C._speedups.ascii_heads(a, heads, low, high),
}
for name, call in calls.items():
    for hostile in (Claims(), ids.view(Sub), np.arange(3)):
        try:
            call(hostile)
        except TypeError as exc:
            assert "numpy.ndarray" in str(exc) or "object" in str(exc), exc
        else:
            raise AssertionError(f"{name} took {type(hostile).__name__}")
    call(ids)  # a real object array still works
print("ok")
"""


def test_c_functions_refuse_anything_but_an_object_ndarray():
    if C._speedups is None:
        pytest.skip(NO_SPEEDUPS)
    done = subprocess.run([sys.executable, "-c", HOSTILE], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr)


def test_environment_variable_forces_the_pure_path():
    code = textwrap.dedent("""
        import numpy as np
        import skrank
        from skrank._engine import codes as C
        qid = np.array(["q2", "q1", "q2", "q1", "q3"], dtype=object)
        print(C._speedups is None, skrank.ndcg_score([1, 0, 2, 1, 0], [.5, .4, .3, .2, .1],
                                                     qid=qid))
    """)
    values = {}
    for setting in ("1", "0"):
        env = dict(os.environ, SKRANK_NO_SPEEDUPS=setting)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        pure, value = done.stdout.split()
        values[setting] = (pure, float(value))
    assert values["1"][0] == "True"
    assert values["0"][0] == str(C._speedups is None)
    assert values["1"][1] == values["0"][1]
