import signal
import subprocess
import sys
import time

from torchdoctor.runner import run_command


def test_missing_program_is_reported_not_raised():
    result = run_command(["no-such-program-anywhere"])
    assert result.returncode is None and result.error == "not found: no-such-program-anywhere"


def test_output_and_status_captured():
    result = run_command(["bash", "-c", "echo out; echo err >&2; exit 3"])
    assert (result.returncode, result.stdout, result.stderr, result.ok) == (3, "out\n", "err\n", False)


def test_timeout_ends_the_command_and_its_children(tmp_path):
    marker = tmp_path / "child-still-alive"
    script = f"(sleep 3; touch {marker}) & sleep 30"
    result = run_command(["bash", "-c", script], timeout=0.5)
    assert result.error == "timed out after 0.5s"
    subprocess.run(["sleep", "3.5"])
    assert not marker.exists(), "the background child outlived the timeout"


def test_a_program_that_cannot_run_names_the_error_type(tmp_path):
    program = tmp_path / "nvcc"
    program.write_text("#!/bin/sh\necho 12.8\n")  # no execute bit: not even root may run it
    result = run_command([str(program), "--version"])
    assert result.returncode is None and result.error == f"PermissionError: Permission denied: {program}"


def test_ctrl_c_ends_the_command_and_its_children(tmp_path):
    """The command runs in its own session (so a timeout can end its children); Ctrl-C must end it too."""
    started, marker = tmp_path / "started", tmp_path / "child-still-alive"
    script = f"touch {started}; (sleep 3; touch {marker}) & sleep 30"
    caller = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from torchdoctor.runner import run_command\nrun_command(['bash', '-c', {script!r}], timeout=60)",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline and caller.poll() is None, "the command never started"
        time.sleep(0.05)
    caller.send_signal(signal.SIGINT)
    assert caller.wait(timeout=60) != 0 and "KeyboardInterrupt" in caller.stderr.read()
    subprocess.run(["sleep", "3.5"])
    assert not marker.exists(), "the background child outlived Ctrl-C"
