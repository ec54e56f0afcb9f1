"""CPython refusing to start on a PYTHON* variable it cannot read ("Fatal Python error: config_init_hash_seed:
PYTHONHASHSEED must be ...") was not recognised (session 41's brief). Made here by a real Python started with each
bad value: the variable is named, with what it takes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from explaining import explained


def _refusal(variable: str, value: str) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}, variable: value}
    done = subprocess.run([sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode != 0 and "Fatal Python error: " in done.stderr, done.stderr
    return done.stderr


@pytest.mark.parametrize(
    "variable, value, accepts",
    [
        ("PYTHONHASHSEED", "abc", '"random" or an integer'),
        ("PYTHONMALLOC", "foo", "pymalloc"),
        ("PYTHONUTF8", "2", "0 or 1"),
        ("PYTHONINTMAXSTRDIGITS", "5", "at least 640"),
        ("PYTHONIOENCODING", "nope", "utf-8"),
    ],
)
def test_a_bad_python_variable_that_stops_python_starting_is_named_with_what_it_takes(
    variable, value, accepts
):
    found = explained(_refusal(variable, value))
    assert found.id == "log.python_env_value", found.summary
    assert f"the environment variable {variable} holds a value it cannot use" in found.summary, found.summary
    assert f"{variable} takes" in found.fix and accepts in found.fix and f"unset {variable}" in found.fix, (
        found.fix
    )
