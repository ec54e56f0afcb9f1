"""pytorch/examples' distributed/rpc/rnn/main.py with init_rpc told of a third worker that never starts (world_size
3, two processes spawned): the run hangs without a line, and the user's Ctrl-C leaves a KeyboardInterrupt in
mp.spawn's join, which explain called an error it had no recipe for. Read here from a real process stopped by
SIGINT while mp.spawn waits for a process that sleeps."""

import io
import subprocess
import sys
import textwrap

import pytest
from explaining import explained

from torchdoctor.explain.diagnose import explain

HUNG_SPAWN = textwrap.dedent(
    """
    import os, signal, threading, time
    import torch.multiprocessing as mp

    def wait(rank):
        time.sleep(8)  # a process that never gets anywhere (init_rpc waiting for a worker that never starts)

    if __name__ == "__main__":
        threading.Timer(2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()  # the user's Ctrl-C
        mp.spawn(wait, nprocs=1, join=True)
    """
)


@pytest.mark.processes
def test_a_run_stopped_by_ctrl_c_in_mp_spawn_says_it_was_stopped_and_how_to_see_where_it_hung(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(HUNG_SPAWN)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert "KeyboardInterrupt" in done.stderr, done.stderr[-2000:]
    found = explain(["-"], stdin=io.BytesIO(done.stderr.encode()))[0]
    assert found.id == "log.run_interrupted", (found.summary, done.stderr[-2000:])
    assert "stopped by Ctrl-C" in found.summary and found.details["confidence"] == "likely", found.summary
    assert "mp.spawn's join" in found.fix and "py-spy dump" in found.fix, found.fix


@pytest.mark.parametrize(
    "log",
    [
        # near misses: an error before the interrupt leads; the word inside a sentence is no interrupt
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    x = load()\n'
        'ValueError: bad shape (3, 4)\nTraceback (most recent call last):\n  File "train.py", line 9, in '
        "<module>\n    time.sleep(5)\nKeyboardInterrupt\n",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.06 GiB is free.\nKeyboardInterrupt\n",
        "the handler catches KeyboardInterrupt and saves a checkpoint before it exits\n",
    ],
)
def test_an_interrupt_beside_an_error_or_in_prose_is_not_the_reading(log):
    assert explained(log).id != "log.run_interrupted"
