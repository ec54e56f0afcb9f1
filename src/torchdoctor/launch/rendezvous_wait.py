"""While a node of a several-node launch waits at the rendezvous, a line on stderr says for whom and how long.

torch's launcher says nothing there until it gives up (600 s when not told otherwise): a node started alone
looked like a hang with nothing to read. The first line comes after `FIRST` seconds, then one every `EVERY`
seconds, until a worker starts here (it leaves its ``started.*`` mark in the launch's folder: the rendezvous
is over) or the run ends.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from torchdoctor.rank_list import who

FIRST = 5.0  # seconds before the first line: a rendezvous of nodes started together is over by then
EVERY = 30.0  # seconds between the lines after it


def waiting_line(nnodes: int, node_rank: int | None, where: str, waited: float, timeout: float) -> str:
    """``torchdoctor: node rank 0 of 2 waits at the rendezvous 10.0.0.1:29500 for the other node (node rank 1):
    5 s of 600``; ``node_rank`` None for a c10d rendezvous, where a node takes its rank as it joins."""
    if node_rank is None:
        return (
            f"torchdoctor: this node waits at the c10d rendezvous {where} for {nnodes} nodes in all: "
            f"{waited:.0f} s of {timeout:g}\n"
        )
    others = [r for r in range(nnodes) if r != node_rank]
    return (
        f"torchdoctor: node rank {node_rank} of {nnodes} waits at the rendezvous {where} for the other "
        f"node{'s' if len(others) > 1 else ''} ({who(others, 'node rank')}): {waited:.0f} s of {timeout:g}\n"
    )


@contextlib.contextmanager
def saying_whom_it_waits_for(
    stream, folder: Path, nnodes: int, node_rank: int | None, where: str, timeout: float
) -> Iterator[None]:
    """Within the block, `waiting_line` on ``stream`` after `FIRST` seconds and every `EVERY` seconds, until a
    worker's ``started.*`` mark appears in ``folder``."""
    done = threading.Event()
    began = time.monotonic()

    def say() -> None:
        wait = FIRST
        while not done.wait(wait):
            if any(folder.glob("started.*")):
                return
            try:
                stream.write(waiting_line(nnodes, node_rank, where, time.monotonic() - began, timeout))
                stream.flush()
            except (OSError, ValueError):  # the terminal went away
                return
            wait = EVERY

    thread = threading.Thread(target=say, name="torchdoctor-rendezvous-wait", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(1.0)
