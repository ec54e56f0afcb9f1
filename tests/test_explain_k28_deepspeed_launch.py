"""A DeepSpeed script started without a launcher (kinds/deepspeed_launch.py): deepspeed/comm/comm.py's line and the
mpi4py import its MPI discovery fails on, as a run prints them; neither alone reads as it."""

from __future__ import annotations

import pytest
from explaining import explained, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

NO_LAUNCHER = (
    "[2024-02-07 10:00:01,123] [INFO] [comm.py:637:init_distributed] Not using the DeepSpeed or dist launchers, "
    "attempting to detect MPI environment...\n"
)
NO_MPI4PY = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/comm/comm.py", line 689, in mpi_discovery\n'
    "    from mpi4py import MPI\n"
    "ModuleNotFoundError: No module named 'mpi4py'\n"
)


# python train.py / accelerate launch without --use_deepspeed (axolotl-ai-cloud/axolotl#1211)
def test_no_launcher_and_no_mpi4py_says_to_use_a_launcher():
    found = explained(NO_LAUNCHER + NO_MPI4PY)
    assert found.id == "log.deepspeed_no_launcher" and found.details["confidence"] == "likely", found.summary
    assert (
        "deepspeed --num_gpus 1" in found.fix
        and "--use_deepspeed" in found.fix
        and "WORLD_SIZE=1" in found.fix
    )


# the line alone is a healthy MPI launch's too
def test_the_line_alone_is_not_a_finding():
    found = explained(
        NO_LAUNCHER
        + "[2024-02-07 10:00:02,001] [INFO] [comm.py:688:mpi_discovery] Discovered MPI settings of world_rank=0, "
        "local_rank=0, world_size=8, master_addr=10.0.0.1, master_port=29500\n"
    )
    assert found.id != "log.deepspeed_no_launcher", found.summary


# mpi4py missing elsewhere (a script's own import) is a missing package, not a missing launcher
def test_mpi4py_missing_without_the_line_is_not_it():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/user/train.py", line 3, in <module>\n'
        "    from mpi4py import MPI\n"
        "ModuleNotFoundError: No module named 'mpi4py'\n"
    )
    assert found.id != "log.deepspeed_no_launcher", found.summary


# deepspeed/launcher/launch.py sigkill_handler: "Main process received {SIGINT|SIGTERM}, exiting" (catalog
# deepspeed:main-process-received-exiting), printed only when the launcher itself got the signal; a worker that failed
# first makes it print "exits with return code = N" and exit without it
@pytest.mark.parametrize(("signal", "words"), [("SIGTERM", "scheduler"), ("SIGINT", "Ctrl-C")])
def test_the_deepspeed_launcher_stopped_by_a_signal_is_launcher_stopped(signal, words):
    found = explained(
        "[2024-05-01 10:00:00,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 4242\n"
        "[2024-05-01 10:00:00,001] [INFO] [launch.py:327:sigkill_handler] "
        + template("deepspeed:main-process-received-exiting", signal)
        + "\n"
    )
    assert found.id == "log.launcher_stopped" and found.details["confidence"] == "likely", found.summary
    assert f"the launcher (deepspeed) was stopped by {signal}" in found.summary
    assert words in found.fix


def test_a_worker_that_failed_before_the_launcher_stopped_is_not_a_signal_from_outside():
    found = explained(
        "[2024-05-01 10:00:00,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 4242\n"
        "[2024-05-01 10:00:00,001] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
        "'--local_rank=1'] exits with return code = -9\n"
    )
    assert found.id != "log.launcher_stopped", found.summary
