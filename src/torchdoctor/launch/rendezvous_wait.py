"""While a node of a several-node launch waits at the rendezvous, a line on stderr says for whom and how long.

torch's launcher says nothing there until it gives up (600 s when not told otherwise): a node started alone
looked like a hang with nothing to read. The agent (`torchdoctor.launch.torchrun`, in torchrun's process)
marks in the launch's folder when it enters the rendezvous and when the rendezvous is over
(`noting_the_rendezvous`); the launcher says it waits only between the two, after `FIRST` seconds there, then
every `EVERY` seconds, so a slow start (importing torch, starting the workers) is never taken for a wait. At a c10d
rendezvous the agent also notes, meanwhile, how many nodes have joined it (`JOINED`, read from the rendezvous's
own state in its store), so that the line says how many of the nodes have come.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from torchdoctor.rank_list import who

FIRST = 5.0  # seconds at the rendezvous before the first line: nodes started together have met by then
EVERY = 30.0  # seconds between the lines after it
ENTERED, MET = "rendezvous.entered", "rendezvous.met"  # the agent's marks in the launch's folder
JOINED = "rendezvous.joined"  # the nodes at a c10d rendezvous so far, as the agent last read them
COUNT_EVERY = 2.0  # seconds between the agent's reads of the rendezvous's state
FOLDER_VARIABLE = (
    "TORCHDOCTOR_RENDEZVOUS_DIR"  # the launch's folder, for the agent (set by `torchdoctor launch`)
)


def waiting_line(
    nnodes: int, node_rank: int | None, where: str, waited: float, timeout: float, joined: int | None = None
) -> str:
    """``torchdoctor: node rank 0 of 2 waits at the rendezvous 10.0.0.1:29500 for the other node (node rank 1):
    5 s of 600``; ``node_rank`` None for a c10d rendezvous, where a node takes its rank as it joins, and
    ``joined`` the nodes there so far (None where not known)."""
    if node_rank is None:
        come = "" if joined is None else f", {joined} of {nnodes} come so far"
        return (
            f"torchdoctor: this node waits at the c10d rendezvous {where} for {nnodes} nodes in all{come}: "
            f"{waited:.0f} s of {timeout:g}\n"
        )
    others = [r for r in range(nnodes) if r != node_rank]
    return (
        f"torchdoctor: node rank {node_rank} of {nnodes} waits at the rendezvous {where} for the other "
        f"node{'s' if len(others) > 1 else ''} ({who(others, 'node rank')}): {waited:.0f} s of {timeout:g}\n"
    )


def noting_the_rendezvous(environ: Mapping[str, str]) -> None:
    """In torchrun's process, before its agent runs: mark `ENTERED` in the folder `FOLDER_VARIABLE` names as the
    agent enters the rendezvous and `MET` once it is over (torch's ``SimpleElasticAgent._rendezvous``, there
    from torch 1.9 to 2.13; without it nothing is marked and the launcher says nothing)."""
    folder = environ.get(FOLDER_VARIABLE)
    if not folder:
        return
    try:
        from torch.distributed.elastic.agent.server.api import SimpleElasticAgent
    except ImportError:
        return
    meet = getattr(SimpleElasticAgent, "_rendezvous", None)
    if meet is None:
        return

    def mark(name: str) -> None:
        try:
            Path(folder, name).touch()
        except OSError:  # the launcher removed its folder: the run is over anyway
            pass

    def noted(self, *args, **kwargs):
        mark(ENTERED)
        met = threading.Event()
        handler = getattr(getattr(getattr(self, "_worker_group", None), "spec", None), "rdzv_handler", None)
        counting = threading.Thread(
            target=_counting_the_nodes,
            args=(handler, Path(folder), met),
            name="torchdoctor-joined",
            daemon=True,
        )
        counting.start()
        try:
            result = meet(self, *args, **kwargs)
        finally:
            met.set()
        mark(MET)
        return result

    SimpleElasticAgent._rendezvous = noted


def _counting_the_nodes(handler, folder: Path, met: threading.Event) -> None:
    """In the agent, while it is at the rendezvous: every `COUNT_EVERY` seconds, write in `JOINED` how many
    nodes have joined a rendezvous that keeps its state in a backend (torch's ``DynamicRendezvousHandler``:
    c10d, etcd), read there; nothing for the static rendezvous, which keeps no such state."""
    backend = getattr(getattr(handler, "_state_holder", None), "_backend", None)
    if not callable(getattr(backend, "get_state", None)):
        return
    while not met.wait(COUNT_EVERY):
        try:
            got = backend.get_state()  # its own read of the store, beside the agent's
            joined = len(pickle.loads(got[0]).participants) if got is not None else 0
            Path(folder, JOINED).write_text(str(joined))
        except Exception:  # noqa: BLE001 - a torch whose state differs, or the store gone: the line says less
            return


def _joined(folder: Path) -> int | None:
    """The nodes at the rendezvous as the agent last wrote them in `JOINED`, or None (not known)."""
    try:
        return int(Path(folder, JOINED).read_text())
    except (OSError, ValueError):
        return None


def _waited(folder: Path) -> float | None:
    """Seconds the agent has been at the rendezvous, or None when it is not there (not yet, or met)."""
    try:
        entered = os.stat(folder / ENTERED).st_mtime
    except OSError:
        return None
    if (folder / MET).exists():
        return None
    return max(0.0, time.time() - entered)


@contextlib.contextmanager
def saying_whom_it_waits_for(
    stream, folder: Path, nnodes: int, node_rank: int | None, where: str, timeout: float
) -> Iterator[None]:
    """Within the block, `waiting_line` on ``stream`` once the agent has waited `FIRST` seconds at the
    rendezvous, then every `EVERY` seconds, until it is over."""
    done = threading.Event()

    def say() -> None:
        said_at = None
        while not done.wait(1.0):
            waited = _waited(folder)
            if waited is None:
                if (folder / MET).exists():
                    return
                continue
            if waited >= FIRST and (said_at is None or waited - said_at >= EVERY):
                try:
                    joined = _joined(folder) if node_rank is None else None
                    stream.write(waiting_line(nnodes, node_rank, where, waited, timeout, joined))
                    stream.flush()
                except (OSError, ValueError):  # the terminal went away
                    return
                said_at = waited

    thread = threading.Thread(target=say, name="torchdoctor-rendezvous-wait", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(2.0)
