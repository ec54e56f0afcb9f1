"""Every wait of ours on real gloo ranks: says whom it waits for while it waits, gives way to Ctrl-C, and a
debug-mode timeout shows where the missing rank is (its stack)."""

import re

from rank_runner import run_ranks

# A real SIGINT, sent by the process to itself from a timer thread, as a terminal's Ctrl-C would be: Python
# handles it in the main thread, which is inside our wait at that moment.
CTRL_C_AFTER = """
import os, signal, threading
def ctrl_c_after(seconds):
    threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT)).start()
"""

SKIPPED_COLLECTIVE = (
    CTRL_C_AFTER
    + """
import time, torch, torch.distributed as dist
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException

debug.enable()
dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))
if rank == 1:
    time.sleep(120)  # skips the barrier rank 0 waits at
ctrl_c_after(9)
try:
    dist.barrier()
except KeyboardInterrupt:
    print("interrupted at the barrier", flush=True)
"""
)


def test_a_skipped_collective_is_announced_while_waiting_and_ctrl_c_stops_the_wait(tmp_path):
    # two ranks: one waits and says whom for, as each of two waiting ranks of three did
    results = run_ranks(
        SKIPPED_COLLECTIVE,
        tmp_path,
        nprocs=2,
        env={"TORCHDOCTOR_DEBUG_TIMEOUT": "100"},
        wait_for=[0],
        timeout=90,
    )
    rank, result = 0, results[0]
    assert result.returncode == 0, result.output
    assert "interrupted at the barrier" in result.stdout  # long before the 100 s timeout
    lines = [line for line in result.stderr.splitlines() if line.startswith("torchdoctor: waited")]
    assert lines, result.stderr
    assert re.match(
        r"torchdoctor: waited \d+ s of 100 for rank 1 at collective #2 `torch.distributed.barrier` "
        rf"\(1 of 2 waiting; this is rank {rank} at .*script_\d+\.py:\d+ in <module>; "
        r"TORCHDOCTOR_DEBUG_TIMEOUT=100\)$",
        lines[0],
    ), lines[0]
    assert "did not reach" not in result.output
    assert results[1].returncode is None  # still asleep: killed by the runner


SKIPPED_MESSAGE = (
    CTRL_C_AFTER
    + """
import logging, sys, torch.distributed as dist
from torchdoctor import get_logger

logging.basicConfig(stream=sys.stdout, format="%(message)s")
logger = get_logger("train", log_level="INFO")
dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 2:
    ctrl_c_after(9)
if rank != 1:  # rank 1 forgets this message; rank 2 comes after it
    try:
        logger.info("epoch done", in_order=True)
    except KeyboardInterrupt:
        print("interrupted while waiting for its turn", flush=True)
"""
)


def test_a_skipped_in_order_message_is_announced_and_ctrl_c_stops_the_wait(tmp_path):
    results = run_ranks(
        SKIPPED_MESSAGE, tmp_path, nprocs=3, env={"TORCHDOCTOR_DEBUG_TIMEOUT": "100"}, timeout=90
    )
    assert "[RANK 0] epoch done" in results[0].stdout
    waiting = results[2]
    assert waiting.returncode == 0, waiting.output
    assert "interrupted while waiting for its turn" in waiting.stdout
    assert "[RANK 2] epoch done" not in waiting.stdout
    lines = [line for line in waiting.stderr.splitlines() if line.startswith("torchdoctor: waited")]
    assert lines and re.fullmatch(
        r"torchdoctor: waited \d+ s of 100 for rank 1 to log in-order message #1 before rank 2 logs its own",
        lines[0],
    ), waiting.stderr


def test_a_skipped_in_order_message_delays_the_next_rank_by_the_timeout_and_says_so(tmp_path):
    script = SKIPPED_MESSAGE.replace("if rank == 2:\n    ctrl_c_after(9)\n", "")
    results = run_ranks(script, tmp_path, nprocs=3, env={"TORCHDOCTOR_DEBUG_TIMEOUT": "7"}, timeout=90)
    waiting = results[2]
    assert waiting.returncode == 0, waiting.output
    assert "[RANK 2] epoch done" in waiting.stdout
    assert (
        "torchdoctor: rank 1 did not log in-order message #1 within 7 s (TORCHDOCTOR_DEBUG_TIMEOUT); "
        "rank 2 logs without waiting for it" in waiting.stderr
    )
    assert re.search(r"torchdoctor: waited \d+ s of 7 for rank 1 to log in-order message #1", waiting.stderr)


STUCK_BEFORE_ANY_COLLECTIVE = """
import time, torch, torch.distributed as dist
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException

debug.enable()
dist.init_process_group("gloo")
if dist.get_rank() == 1:
    time.sleep(120)  # stuck loading data: never reaches a checked collective
try:
    dist.all_reduce(torch.ones(1))
except DistributedOperationException as error:
    print(error, flush=True)
"""


def test_a_rank_stuck_before_its_first_collective_still_says_where_it_is(tmp_path):
    results = run_ranks(
        STUCK_BEFORE_ANY_COLLECTIVE,
        tmp_path,
        nprocs=2,
        env={"TORCHDOCTOR_DEBUG_TIMEOUT": "3"},
        wait_for=[0],
        timeout=90,
    )
    out = results[0].stdout
    assert out.startswith("Process 1 did not reach collective #1 within 3 s"), results[0].output
    assert (
        "  - Process 1: never reached a checked collective\n    where it is now (innermost call last):" in out
    )
    assert out.rstrip().endswith("time.sleep(120)  # stuck loading data: never reaches a checked collective")


LATE_MISMATCH_THEN_LATE_RANK = """
import time, torch, torch.distributed as dist
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException

debug.enable(timeout=60)
dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1:
    time.sleep(4)  # arrives late, and with another shape: still a mismatch, not a timeout
try:
    dist.all_reduce(torch.zeros(2 if rank == 1 else 3))
except DistributedOperationException as error:
    print("first:", str(error).splitlines()[0], flush=True)
debug.enable(timeout=3)
if rank == 1:
    time.sleep(8)  # rank 0 gives up after 3 s; this rank comes afterwards
try:
    dist.barrier()
except DistributedOperationException as error:
    print("second:", str(error).splitlines()[0], flush=True)
"""


def test_a_late_mismatch_is_a_mismatch_and_a_rank_arriving_after_the_timeout_raises_too(tmp_path):
    # two ranks: the late one is both the mismatched and the late-after-the-timeout rank, each said as with three
    results = run_ranks(LATE_MISMATCH_THEN_LATE_RANK, tmp_path, nprocs=2, timeout=150)
    for rank, result in enumerate(results):
        assert result.returncode == 0, result.output
        lines = result.stdout.splitlines()
        assert lines[0] == (
            "first: Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid."
        ), result.output
        if rank == 1:  # it must not go on into a barrier nobody else is in
            assert re.fullmatch(
                r"second: This process reached collective #2 `torch.distributed.barrier` at \S+\.py:\d+ in "
                r"<module> after the others had stopped waiting for it \(TORCHDOCTOR_DEBUG_TIMEOUT=3 s\): they "
                r"raised this error there, naming it\.",
                lines[1],
            ), lines[1]
        else:
            assert lines[1] == (
                "second: Process 1 did not reach collective #2 within 3 s "
                "(TORCHDOCTOR_DEBUG_TIMEOUT); the others are waiting for them."
            )
