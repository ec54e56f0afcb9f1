"""The fast lane (`make test-fast`, ``-m "not processes"``) holds no test that starts a process: one that does
anyway fails there, naming where to mark it, and passes in the whole suite."""

from pathlib import Path

pytest_plugins = ["pytester"]

SNEAKY = """
import subprocess

def test_starts_a_process_and_hides_it():
    try:
        subprocess.run(["true"], check=True)
    except Exception:  # swallowing it must not get the test into the fast lane
        pass

def test_plain():
    assert 1 + 1 == 2
"""


def test_a_test_that_starts_a_process_fails_the_fast_lane_only(pytester):
    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text())
    pytester.makepyfile(helpers=Path(__file__).with_name("helpers.py").read_text())  # the conftest imports it
    pytester.makepyfile(test_sneaky=SNEAKY)
    fast = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-m", "not processes")
    fast.assert_outcomes(passed=1, failed=1)
    fast.stdout.fnmatch_lines(
        [
            "*test_sneaky.py::test_starts_a_process_and_hides_it starts a process, so it belongs to `make test`*"
        ]
    )
    whole = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    whole.assert_outcomes(passed=2)
