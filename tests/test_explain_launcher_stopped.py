"""torchrun itself stopped from outside (a `timeout` wrapper, a scheduler's time limit, a kill, Ctrl-C) prints
"SignalException: Process N got signal: 15" and nothing from any worker; explain read it as "a worker failed; the
cause is not in this log". Found when a `timeout 200` ended a slow 2-rank run of accelerate's nlp_example.py under
torchrun. Read from a real torchrun, its console recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs
it again), and as printed. Beside it, the other launcher fault of this session read from torchrun's output: a script that requires the --local_rank argument torchrun does not pass."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from explaining import explained
from helpers import TORCHRUN
from recorded import recorded

from torchdoctor.explain.diagnose import explain

PRINTED = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 5885 got signal: {}\n"


def run(folder: Path) -> str:
    script = folder / "train.py"
    script.write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    launcher = subprocess.Popen(
        [TORCHRUN, "--standalone", "--nproc_per_node", "1", str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,
    )  # fmt: skip
    try:
        assert launcher.stdout is not None
        # the signal must come once the worker runs: sent while torchrun's agent was still starting it (past a
        # 30 s wait, on a machine loaded to 8), torchrun stopped without stopping the worker, which held the pipe
        deadline = time.monotonic() + 90
        started = False
        while not started and time.monotonic() < deadline:
            line = launcher.stdout.readline()
            started = "started" in line
            if not line and launcher.poll() is not None:
                break
        assert started, f"torchrun's worker did not start within 90 s (its exit status {launcher.poll()})"
        launcher.send_signal(signal.SIGTERM)
        # torchrun's own exit; once in a suite run (load 4) it left its sleeping worker holding the pipe past 40 s
        # after "shutting down workers", so the worker is not waited for: its group is stopped once torchrun ends
        launcher.wait(timeout=40)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)
        output = launcher.communicate(timeout=30)[0]
    assert launcher.returncode != 0, output[-2000:]
    return output


RECORDED_RUNS = {"launcher_stopped_sigterm": run}


def test_torchrun_sent_sigterm_reads_as_stopped_from_outside():
    output = recorded("launcher_stopped_sigterm")
    assert "got signal: 15" in output, output[-2000:]
    found = explain(["-"], stdin=io.BytesIO(output.encode()))[0]
    assert found.id == "log.launcher_stopped", (found.summary, output[-2000:])
    assert "SIGTERM from outside" in found.summary and "--watchdog" in found.fix


@pytest.mark.usefixtures("every_message_seen")
@pytest.mark.parametrize(("sent", "named"), [("15", "SIGTERM"), ("2", "SIGINT")])
def test_the_signal_as_printed_is_named_and_only_likely(sent, named):
    found = explained(PRINTED.format(sent))
    assert found.id == "log.launcher_stopped" and found.details["confidence"] == "likely"
    assert f"stopped by {named} from outside" in found.summary


def test_a_hang_up_stays_the_closed_terminal():
    assert explained(PRINTED.format("1")).id == "log.terminal_hangup"


# pytorch/examples' DDP tutorial given `parser.add_argument('--local_rank', type=int, required=True)` (written for
# torch.distributed.launch) and run under torchrun, which passes no argument: argparse's error on every rank
REQUIRED = (
    "[default0]:multigpu_torchrun.py: error: the following arguments are required: --local_rank\n"
    "[default1]:multigpu_torchrun.py: error: the following arguments are required: --local_rank\n"
)


def test_a_required_local_rank_under_torchrun_says_to_read_the_environment():
    found = explained(REQUIRED)
    assert found.id == "log.local_rank_argument", found.summary
    assert "torchrun does not pass" in found.summary
    assert (
        "default=int(os.environ.get('LOCAL_RANK', 0))" in found.fix
        and "Use torchrun instead" not in found.fix
    )


def test_another_required_argument_or_no_launcher_keeps_the_general_reading():
    other = explained("[default0]:train.py: error: the following arguments are required: --config\n")
    assert "torchrun does not pass" not in other.summary
    plain = explained("train.py: error: the following arguments are required: --local_rank\n")
    assert "torchrun does not pass" not in plain.summary
