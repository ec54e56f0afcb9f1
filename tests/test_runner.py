import subprocess

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
