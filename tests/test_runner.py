import signal
import subprocess
import sys
import time
from pathlib import Path

from rank_runner import ctrl_c_as_at_a_terminal

from torchdoctor.runner import run_command


def test_missing_program_is_reported_not_raised():
    result = run_command(["no-such-program-anywhere"])
    assert result.returncode is None and result.error == "not found: no-such-program-anywhere"


def test_output_and_status_captured():
    result = run_command(["bash", "-c", "echo out; echo err >&2; exit 3"])
    assert (result.returncode, result.stdout, result.stderr, result.ok) == (3, "out\n", "err\n", False)


def background_child(tmp_path: Path) -> tuple[str, Path, Path]:
    """A shell script that starts a child in the background (which would touch ``marker`` after 30 s and
    writes its pid to ``pid_file``), then waits: (script, marker, pid_file)."""
    marker, pid_file = tmp_path / "child-still-alive", tmp_path / "child.pid"
    return f"(sleep 30; touch {marker}) & echo $! > {pid_file}; sleep 60", marker, pid_file


def ended(pid_file: Path, within: float = 30.0) -> bool:
    """Whether the process named in ``pid_file`` is gone (or a zombie) within ``within`` seconds: polled, so
    a test waits only as long as the process takes to go."""
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_timeout_ends_the_command_and_its_children(tmp_path):
    script, marker, pid_file = background_child(tmp_path)
    result = run_command(["bash", "-c", script], timeout=0.5)
    assert result.error == "timed out after 0.5s"
    assert ended(pid_file), "the background child outlived the timeout"
    assert not marker.exists(), "the background child outlived the timeout"


def test_a_program_that_cannot_run_names_the_error_type(tmp_path):
    program = tmp_path / "nvcc"
    program.write_text("#!/bin/sh\necho 12.8\n")  # no execute bit: not even root may run it
    result = run_command([str(program), "--version"])
    assert result.returncode is None and result.error == f"PermissionError: Permission denied: {program}"


def test_ctrl_c_ends_the_command_and_its_children(tmp_path):
    """The command runs in its own session (so a timeout can end its children); Ctrl-C must end it too."""
    started = tmp_path / "started"
    script, marker, pid_file = background_child(tmp_path)
    script = f"touch {started}; {script}"
    caller = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from torchdoctor.runner import run_command\nrun_command(['bash', '-c', {script!r}], timeout=60)",
        ],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    deadline = time.monotonic() + 60
    while not (started.exists() and pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and caller.poll() is None, "the command never started"
        time.sleep(0.05)
    caller.send_signal(signal.SIGINT)
    assert caller.wait(timeout=60) != 0 and "KeyboardInterrupt" in caller.stderr.read()
    assert ended(pid_file), "the background child outlived Ctrl-C"
    assert not marker.exists(), "the background child outlived Ctrl-C"


def test_ctrl_c_while_the_command_is_still_starting_ends_it_too(tmp_path):
    """Ctrl-C can come before Popen has returned the command to us (on a loaded machine a command may start a child
    before that): held back while it starts, it still ends the command's session. The command here sends its
    caller SIGINT as its first act, several callers at once; before the hold, most of their children outlived it."""
    callers = []
    for n in range(4):
        folder = tmp_path / str(n)
        folder.mkdir()
        marker, pid_file = folder / "child-still-alive", folder / "child.pid"
        script = f"(sleep 30; touch {marker}) & echo $! > {pid_file}; kill -INT $PPID; sleep 60"
        code = (
            f"from torchdoctor.runner import run_command\nrun_command(['bash', '-c', {script!r}], timeout=60)"
        )
        callers.append((subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True,
                                         preexec_fn=ctrl_c_as_at_a_terminal), pid_file, marker))  # fmt: skip
    for caller, pid_file, marker in callers:
        assert caller.wait(timeout=60) != 0 and "KeyboardInterrupt" in caller.stderr.read()
        assert ended(pid_file), "the background child outlived Ctrl-C"
        assert not marker.exists()
