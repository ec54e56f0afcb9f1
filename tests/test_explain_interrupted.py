"""A run stopped with Ctrl-C: the traceback a user holds after a hang names what the run was waiting for.

Found running pytorch/examples' imagenet/main.py shape of script (mp.spawn of fewer processes than its world) and
pressing Ctrl-C after it sat silent: the parent's KeyboardInterrupt traceback in mp.spawn's join was read as "the run
failed: KeyboardInterrupt … torchdoctor knows no fix" (exit 1, as a failure of its own), though it is where the run
hung. Read from a real process group sent SIGINT as a terminal's Ctrl-C sends it (its console recorded,
fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again), and as torch prints the others.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from explaining import explained
from helpers import free_port
from recorded import recorded

from torchdoctor.explain.diagnose import explain

SPAWN_TOO_FEW = """
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(rank, world_size):
    print("rank", rank, "joining", flush=True)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:{port}", world_size=world_size, rank=rank)


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=1, args=(2,))
"""


def _ctrl_c_once_waiting(script, log) -> None:
    """Run ``script`` in a process group of its own, its output to ``log``; once its process says it joins, a
    SIGINT to the whole group as a terminal's Ctrl-C sends it; the group killed once the traceback is written (or
    20 s later)."""
    with open(log, "wb") as out:
        group = subprocess.Popen(
            [sys.executable, str(script)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's foreground job
        )
    try:
        deadline = time.monotonic() + 90
        while b"joining" not in log.read_bytes():
            assert group.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(1)  # inside init_process_group's wait for the rank that was never started
        os.killpg(group.pid, signal.SIGINT)
        # the parent prints its traceback, then waits at exit for its process, which Ctrl-C did not stop: the
        # traceback is what the test reads, so the group goes as soon as it is there
        deadline = time.monotonic() + 20
        while b"KeyboardInterrupt" not in log.read_bytes() and time.monotonic() < deadline:
            if group.poll() is not None:
                break
            time.sleep(0.2)
        time.sleep(0.5)  # the traceback's last lines
    finally:
        try:
            os.killpg(group.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        group.wait()


def run(folder: Path) -> str:
    script, log = folder / "train.py", folder / "console.log"
    script.write_text(SPAWN_TOO_FEW.replace("{port}", str(free_port())))
    _ctrl_c_once_waiting(script, log)
    assert "KeyboardInterrupt" in log.read_text(), log.read_text()
    return log.read_text()


RECORDED_RUNS = {"interrupted_spawn": run}


def test_a_hung_mp_spawn_stopped_with_ctrl_c_is_read_as_waiting_for_its_processes(tmp_path):
    log = tmp_path / "console.log"  # read from a file, as the user's console log
    log.write_text(recorded("interrupted_spawn"), encoding="utf-8")
    assert "KeyboardInterrupt" in log.read_text(), log.read_text()
    found = explain([str(log)])
    assert found[0].id == "log.interrupted_while_waiting", [(f.id, f.summary) for f in found]
    assert found[0].status == "fail" and found[0].summary.startswith("likely a hang")
    assert "mp.spawn was waiting for its processes" in found[0].summary
    assert "mp.spawn(main_worker, nprocs=1, args=(2,))" in found[0].summary  # the user's line
    assert "nprocs=world_size" in found[0].fix and "--watchdog" in found[0].fix
    assert found[0].details["confidence"] == "likely"


TORCH = "/usr/lib/python3/dist-packages/torch"


def interrupted_in(*frames: tuple[str, int, str, str]) -> str:
    """A KeyboardInterrupt traceback through ``frames`` (file, line, function, code), outermost first."""
    lines = ["Traceback (most recent call last):"]
    for file, line, function, code in frames:
        lines += [f'  File "{file}", line {line}, in {function}', f"    {code}"]
    return "\n".join([*lines, "KeyboardInterrupt", ""])


USERS = ("/home/u/train.py", 52, "main", "dist.init_process_group('nccl')")


def test_a_wait_in_init_process_group_names_the_ranks_that_never_joined():
    found = explained(
        interrupted_in(
            USERS,
            (f"{TORCH}/distributed/c10d_logger.py", 95, "wrapper", "func_return = func(*args, **kwargs)"),
            (f"{TORCH}/distributed/distributed_c10d.py", 1716, "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
            (f"{TORCH}/distributed/rendezvous.py", 276, "_env_rendezvous_handler", "store = _create_c10d_store("),
            (f"{TORCH}/distributed/rendezvous.py", 194, "_create_c10d_store", "return TCPStore("),
        )
    )  # fmt: skip
    assert found.id == "log.interrupted_while_waiting", found.summary
    assert "init_process_group was waiting for the other ranks to join" in found.summary
    assert "MASTER_ADDR" in found.fix and "timedelta" in found.fix
    assert found.details["waited_in"].endswith("rendezvous.py:194 in _create_c10d_store")


def test_a_wait_in_a_collective_names_it_and_the_users_line():
    found = explained(
        interrupted_in(
            ("/home/u/train.py", 61, "main", "dist.all_reduce(loss)"),
            (f"{TORCH}/distributed/c10d_logger.py", 83, "wrapper", "return func(*args, **kwargs)"),
            (f"{TORCH}/distributed/distributed_c10d.py", 3010, "all_reduce", "work.wait()"),
        )
    )
    assert found.id == "log.interrupted_while_waiting", found.summary
    assert "the collective all_reduce() was waiting for the other ranks" in found.summary
    assert "train.py:61 in main: dist.all_reduce(loss)" in found.summary
    assert "launch --debug" in found.fix


def test_a_wait_for_a_dataloader_batch_names_its_workers():
    found = explained(
        interrupted_in(
            ("/home/u/train.py", 40, "main", "for batch in loader:"),
            (f"{TORCH}/utils/data/dataloader.py", 733, "__next__", "data = self._next_data()"),
            (f"{TORCH}/utils/data/dataloader.py", 1480, "_next_data", "idx, data = self._get_data()"),
            ("/usr/lib/python3.11/multiprocessing/queues.py", 113, "get", "if not self._poll(timeout):"),
        )
    )
    assert found.id == "log.interrupted_while_waiting", found.summary
    assert "DataLoader was waiting for a batch" in found.summary and "num_workers=0" in found.fix


def test_a_stop_in_the_users_own_code_is_said_to_be_a_stop_not_a_failure():
    text = interrupted_in(("/home/u/train.py", 31, "main", "time.sleep(1)"))
    found = explain(["-"], stdin=__import__("io").BytesIO(text.encode()))
    assert [f.id for f in found] == ["log.interrupted"], [(f.id, f.summary) for f in found]
    assert found[0].status == "skip" and "nothing in this log says it failed" in found[0].summary
    # a private helper of torch's (its leading underscore) is no collective of the user's
    helper = interrupted_in(
        USERS, (f"{TORCH}/distributed/distributed_c10d.py", 900, "_get_default_group", "x = y")
    )
    assert explained(helper).id == "log.interrupted"


def test_the_ctrl_c_torchrun_sends_the_others_after_a_ranks_error_is_not_the_lead():
    # near miss: rank 1 raised first; rank 0's KeyboardInterrupt in its barrier is torchrun stopping it
    text = "\n".join(
        [
            "[rank1]: Traceback (most recent call last):",
            '[rank1]:   File "/home/u/train.py", line 20, in <module>',
            "[rank1]:     raise ValueError('bad batch')",
            "[rank1]: ValueError: bad batch",
            *(
                f"[rank0]: {line}"
                for line in interrupted_in(
                    ("/home/u/train.py", 22, "<module>", "dist.barrier()"),
                    (f"{TORCH}/distributed/distributed_c10d.py", 4810, "barrier", "work.wait()"),
                ).splitlines()
            ),
        ]
    )
    found = explained(text)
    assert found.id == "log.unrecognised" and "ValueError: bad batch" in found.summary, found.summary


@pytest.mark.parametrize(
    "log",
    [
        # an error before the interrupt leads; an interrupt beside an out-of-memory error is not the reading; the
        # word inside a sentence is no interrupt
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    x = load()\n'
        'ValueError: bad shape (3, 4)\nTraceback (most recent call last):\n  File "train.py", line 9, in '
        "<module>\n    time.sleep(5)\nKeyboardInterrupt\n",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.06 GiB is free.\nKeyboardInterrupt\n",
        "the handler catches KeyboardInterrupt and saves a checkpoint before it exits\n",
    ],
)
def test_an_interrupt_beside_an_error_or_in_prose_is_not_the_reading(log):
    assert explained(log).id not in ("log.interrupted", "log.interrupted_while_waiting")
