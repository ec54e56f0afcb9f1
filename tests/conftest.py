import os
import subprocess
import sys

import pytest


def run_cli(
    *args: str, env: dict | None = None, timeout: float = 120, cwd=None
) -> subprocess.CompletedProcess:
    """Run `python -m torchdoctor ARGS` as a user would, in a real process."""
    full_env = os.environ.copy()
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=cwd,
    )


@pytest.fixture
def cli():
    return run_cli
