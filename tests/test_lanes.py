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


ISSUE_CASE = """
def test_live(cli):  # the `cli` fixture: a test that starts processes
    assert cli is not None

def test_in_process():
    assert 2 + 2 == 4
"""


def test_a_live_issue_case_is_left_to_the_sweep_unless_kept_and_its_in_process_tests_stay(pytester):
    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text())
    pytester.makepyfile(helpers=Path(__file__).with_name("helpers.py").read_text())
    pytester.makepyfile(test_net_u99_case=ISSUE_CASE)
    suite = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    suite.assert_outcomes(passed=1, deselected=1)
    swept = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--issue-cases", "-m", "processes")
    swept.assert_outcomes(passed=1, deselected=1)


def test_every_issue_case_kept_in_the_suite_is_a_test_of_an_issue_case_module():
    from conftest import ISSUE_CASE_MODULE, ISSUE_CASES_IN_THE_SUITE

    here = Path(__file__).parent
    for module, names in ISSUE_CASES_IN_THE_SUITE.items():
        assert ISSUE_CASE_MODULE.match(module), module
        text = (here / f"{module}.py").read_text()
        for name in names:
            assert f"\ndef {name}(" in text, f"{module} has no test {name}"
