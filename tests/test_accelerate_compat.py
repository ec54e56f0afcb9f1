"""accelerate 1.15.0's own tests of the features torchdoctor replaces, run against torchdoctor.

`accelerate_harness` takes them from accelerate's source distribution and installed wheel at test time and
points their imports at torchdoctor; nothing of theirs is copied into this project and no assertion is edited.
The one-process tests run in a pytest of their own; the multi-process scripts on 2 gloo ranks. Where the
source distribution cannot be downloaded, these tests skip and say why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import accelerate_harness as harness
import pytest
from rank_runner import SRC, run_ranks

TESTS = Path(__file__).resolve().parent

# accelerate's tests/ file -> its tests that cover torchdoctor's features (test_utils.py: just this one)
ONE_PROCESS = {
    "test_memory_utils.py": [
        "MemoryTest::test_memory_implicit",
        "MemoryTest::test_memory_explicit",
        "MemoryTest::test_start_zero",
        "MemoryTest::test_approach_zero",
        "MemoryTest::test_verbose_guard",
        "MemoryTest::test_any_other_error",
        "MemoryTest::test_release_memory",
    ],
    "test_utils.py": ["UtilsTester::test_pad_across_processes"],
    "test_logging.py": ["test_log_stack", "test_custom_stacklevel"],
}
# what runs on 2 ranks: every check of test_utils/scripts/test_ops.py's main(), in its order, then the
# trigger check of test_script.py and the pad checks of tests/test_multidevice.py's script part
OPS = [
    "test_gather",
    "test_gather_object",
    "test_gather_non_contiguous",
    "test_broadcast",
    "test_pad_across_processes",
    "test_reduce_sum",
    "test_reduce_mean",
    "test_reduce_max",
    "test_op_checker",
    "test_copy_tensor_to_devices",
]
TWO_RANKS = [f"scripts/test_ops.py::{name}" for name in OPS] + [
    "scripts/test_script.py::test_trigger",
    "tests/test_multidevice.py::__main__ pad_across_processes checks",
]

# Differences kept on purpose, each with why a user is better off; strict, so a fix shows up as a failure here.
KEPT_DIFFERENCES: dict[str, str] = {}


def _params(cases: list[str]) -> list:
    return [
        pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=KEPT_DIFFERENCES[case]))
        if case in KEPT_DIFFERENCES
        else case
        for case in cases
    ]


def _sources(kind: str) -> Path:
    try:
        return harness.source_tree() if kind == "sdist" else harness.installed_scripts()
    except harness.Unavailable as reason:
        pytest.skip(f"accelerate {harness.VERSION}'s tests are not available: {reason}")


@pytest.fixture(scope="module")
def one_process_results(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Run the rewritten one-process tests in a pytest of their own; outcome and text by test id."""
    tree = _sources("sdist")
    work = tmp_path_factory.mktemp("accelerate_tests")
    for name in ONE_PROCESS:
        source = (tree / "tests" / name).read_text()
        if name == "test_utils.py":
            text = harness.extract(source, "UtilsTester", "test_pad_across_processes")
        else:
            text = harness.rewrite_imports(source)
        (work / name).write_text(text)
    (work / "pytest.ini").write_text("[pytest]\n")
    report = work / "results.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), SRC, os.environ.get("PYTHONPATH", "")])}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(work), "-c",
         str(work / "pytest.ini"), f"--junitxml={report}", *ONE_PROCESS],
        cwd=work, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return _junit_outcomes(report)


def _junit_outcomes(report: Path) -> dict[str, tuple[str, str]]:
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        module, _, klass = case.get("classname").partition(".")
        key = f"{module}.py::" + (f"{klass}::" if klass else "") + case.get("name")
        outcome, text = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, text = "failed", (child.text or child.get("message") or "")
            elif child.tag == "skipped":
                outcome, text = "skipped", child.get("message") or ""
        outcomes[key] = (outcome, text)
    return outcomes


DRIVER = r"""
import json, sys, traceback
sys.path[:0] = [WORK, TESTS]

def report(name, run):
    try:
        run()
        outcome, text = "passed", ""
    except BaseException:
        outcome, text = "failed", traceback.format_exc()
    print("RESULT " + json.dumps({"case": name, "outcome": outcome, "text": text}), flush=True)

import test_ops
state = test_ops.PartialState()
for name in OPS:
    report(f"scripts/test_ops.py::{name}", lambda: getattr(test_ops, name)(state))

import script_trigger
report("scripts/test_script.py::test_trigger", script_trigger.test_trigger)
report(
    "tests/test_multidevice.py::__main__ pad_across_processes checks",
    lambda: exec(open(WORK + "/multidevice_pad.py").read(), {"__name__": "multidevice_pad"}),
)
state.destroy_process_group()
"""


@pytest.fixture(scope="module")
def two_rank_results(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Run the rewritten scripts on 2 gloo ranks; a case passed only if it passed on both."""
    scripts = _sources("wheel")
    work = tmp_path_factory.mktemp("accelerate_scripts")
    ops = (scripts / "test_ops.py").read_text()
    assert [n for n in harness.calls_in(ops, "main") if n.startswith("test_")] == OPS, (
        "test_ops.py's main() changed"
    )
    (work / "test_ops.py").write_text(harness.rewrite_imports(ops))
    (work / "script_trigger.py").write_text(
        harness.extract((scripts / "test_script.py").read_text(), "test_trigger")
    )
    skipped = {}
    try:  # the wheel's scripts run without the download; test_multidevice.py needs it
        multidevice = (harness.source_tree() / "tests" / "test_multidevice.py").read_text()
        pad_checks = harness.main_block_until(multidevice, "raise ValueError(error_msg)")
    except harness.Unavailable as reason:
        skipped[TWO_RANKS[-1]] = (
            "skipped",
            f"accelerate {harness.VERSION}'s tests are not available: {reason}",
        )
        pad_checks = ""
    (work / "multidevice_pad.py").write_text(pad_checks)
    driver = f"WORK, TESTS, OPS = {str(work)!r}, {str(TESTS)!r}, {OPS!r}\n" + DRIVER
    results = run_ranks(driver, work, nprocs=2, timeout=240)
    merged: dict[str, tuple[str, str]] = dict(skipped)
    for result in results:
        lines = [json.loads(line[7:]) for line in result.stdout.splitlines() if line.startswith("RESULT ")]
        for entry in lines:
            if entry["case"] in skipped:
                continue
            old = merged.get(entry["case"], ("passed", ""))
            if entry["outcome"] != "passed":
                old = ("failed", old[1] + f"\n--- rank {result.rank} ---\n{entry['text']}")
            merged[entry["case"]] = old
        if result.returncode != 0:
            for case in TWO_RANKS:
                if case not in {entry["case"] for entry in lines} and case not in skipped:
                    merged[case] = ("failed", f"rank {result.rank} ended (exit {result.returncode}) before it:\n"
                                    f"{result.stderr[-3000:]}")  # fmt: skip
    return merged


def _check(results: dict[str, tuple[str, str]], case: str) -> None:
    assert case in results, f"{case} did not run; results for: {sorted(results)}"
    outcome, text = results[case]
    if outcome == "skipped":
        pytest.skip(
            text if text.startswith("accelerate ") else f"accelerate's test skips itself here: {text}"
        )
    assert outcome == "passed", text


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", _params([f"{f}::{t}" for f, tests in ONE_PROCESS.items() for t in tests]))
def test_accelerates_own_test(case, one_process_results):
    _check(one_process_results, case)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", _params(TWO_RANKS))
def test_accelerates_own_script_on_two_ranks(case, two_rank_results):
    _check(two_rank_results, case)


def test_no_test_of_the_files_taken_whole_is_left_out(one_process_results):
    ran = {case for case in one_process_results if not case.startswith("test_utils.py::")}
    assert ran == {f"{f}::{t}" for f in ("test_memory_utils.py", "test_logging.py") for t in ONE_PROCESS[f]}


def test_the_harness_rewrites_imports_only_and_refuses_names_it_cannot_map():
    source = (
        "import torch\n"
        "from accelerate.utils.memory import (\n    find_executable_batch_size,\n    release_memory,\n)\n"
        "from accelerate.test_utils import torch_device\n"
        "assert find_executable_batch_size  # line 7\n"
    )
    rewritten = harness.rewrite_imports(source).splitlines()
    assert rewritten[1] == (
        "from torchdoctor import find_executable_batch_size as find_executable_batch_size; "
        "from torchdoctor.memory import release_memory as release_memory"
    )
    assert rewritten[2:5] == ["", "", ""]  # line numbers kept: tracebacks point at their lines
    assert rewritten[5] == "from accelerate.test_utils import torch_device as torch_device"
    assert rewritten[6] == "assert find_executable_batch_size  # line 7"
    with pytest.raises(KeyError, match="no torchdoctor name for prepare_pippy"):
        harness.rewrite_imports("from accelerate.inference import prepare_pippy\n")


def test_an_impossible_download_skips_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens on port 9
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "5")
    with pytest.raises(harness.Unavailable, match=r"`pip download accelerate==1.15.0` failed \(exit 1\)"):
        harness.source_tree()
    with pytest.raises(
        pytest.skip.Exception, match="accelerate 1.15.0's tests are not available: `pip download"
    ):
        _sources("sdist")
