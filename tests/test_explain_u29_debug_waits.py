"""torchdoctor's debug mode waiting at a checked collective for a rank that never reaches it: it says so every 10 s
("torchdoctor: waited 25 s of 300 for rank 1 at collective #2 `torch.distributed.all_gather` (1 of 2 waiting; this
is rank 0 at train.py:163 in main; TORCHDOCTOR_DEBUG_TIMEOUT=300)") and raises at its timeout ("Process 1 did not
reach collective #2 within 300 s (TORCHDOCTOR_DEBUG_TIMEOUT); ..."). Found with accelerate's
examples/by_feature/early_stopping.py, its trigger replaced by a break on the main process only, under launch
--debug (rank 1 waited in DDP's backward, which debug mode does not check), stopped before the timeout: explain
read socket.cpp's waitForInput warnings printed while debug mode polls the store as "the rendezvous failed on rank
0", and knew neither of debug mode's own lines. Read from real processes on this torch, and as printed."""

from __future__ import annotations

import textwrap

from explaining import explained
from test_watchdog import line_with

SCRIPT = textwrap.dedent(
    """
    import time

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    if dist.get_rank() == 0:
        out = [torch.zeros(2) for _ in range(2)]
        dist.all_gather(out, torch.ones(2))  # the evaluation's gather
    else:
        time.sleep(20)  # still training, in a collective debug mode does not check
    """
)


def test_debug_modes_timeout_at_a_collective_one_rank_never_reached_names_it_and_the_waiting_line(
    cli, tmp_path
):
    script = tmp_path / "early_stop.py"
    script.write_text(SCRIPT)
    result = cli(
        "launch",
        "--debug",
        "--nproc-per-node",
        "2",
        str(script),
        env={"TORCHDOCTOR_DEBUG_TIMEOUT": "6"},
        timeout=100,
    )
    assert "did not reach collective #1 within 6 s" in result.stderr, result.stderr[-3000:]
    found = explained(result.stderr)
    gather = line_with(script, "dist.all_gather")
    assert found.id == "log.collective_never_reached", found.summary
    assert "rank 1 never reached collective #1 `torch.distributed.all_gather`" in found.summary
    assert (
        f"which rank 0 waited in at {script.name}:{gather}" in found.summary or f":{gather}" in found.summary
    )
    assert "a loop one rank left early" in found.fix and found.details["confidence"] == "likely"


WAITS = (
    "[default0]:[rank0]:[W1130 23:14:10.969406861 socket.cpp:494] [c10d] waitForInput: socket SocketImpl(fd=3, "
    "addr=[::ffff:127.0.0.1]:42218, remote=[::ffff:127.0.0.1]:33269) timed out after 2000ms\n"
    "[default0]:torchdoctor: waited 155 s of 300 for rank 1 at collective #2 `torch.distributed.all_gather` (1 of 2 "
    "waiting; this is rank 0 at early_stopping_main.py:163 in training_function; TORCHDOCTOR_DEBUG_TIMEOUT=300)\n"
    "torchdoctor: stopped by SIGTERM; ended the 3 processes of this launch\n"
)


def test_the_wait_lines_as_printed_are_the_rank_that_never_came_not_a_rendezvous():
    found = explained(WAITS)
    assert found.id == "log.collective_never_reached", found.summary
    assert (
        "which rank 0 waited in at early_stopping_main.py:163" in found.summary and "155 s" in found.summary
    )


def test_a_store_poll_warning_alone_is_not_a_failed_rendezvous():
    assert explained(WAITS.splitlines()[0] + "\n").id != "log.rendezvous_or_port"


def test_a_store_wait_that_failed_for_good_is_still_the_rendezvous():
    failed = (
        WAITS.splitlines()[0]
        + "\n"
        + "torch.distributed.DistStoreError: wait timeout after 30000ms, keys: /x\n"
    )
    assert explained(failed).id == "log.rendezvous_or_port"


def test_the_variable_named_elsewhere_is_not_a_wait():
    found = explained("RuntimeError: bad value; TORCHDOCTOR_DEBUG_TIMEOUT=abc is not a number of seconds\n")
    assert found.id != "log.collective_never_reached"
