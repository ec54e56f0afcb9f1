"""One rank of the communication smoke test: join, init, ``all_reduce`` checked against the expected sum,
``barrier``, allocate device memory, print ``[host:local_rank] OK (rank r/w)``.

Every rank records how far it got in its `RankState` (in ``TORCHDOCTOR_NET_STATE_DIR`` when the command that
started it set one) and in the job's store, so that a rank that is stuck or never came can be named by the
others. Each collective stage is bounded by ``timeout`` seconds: a watchdog thread gives the verdict and ends
the process rather than letting it hang.

Run by ``torchdoctor net`` itself (in processes it starts, or ``python -m torchdoctor.net.worker`` under torch's
launcher on several hosts) or, when ``torchdoctor net`` is started by torchrun, srun or mpirun, in that process.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from torchdoctor.distributed.ranks import RankInfo, from_environment
from torchdoctor.net.addresses import interface_addresses, no_route, offered_address
from torchdoctor.net.rank_state import (
    COLLECTIVE_STAGES,
    STAGES,
    RankError,
    RankState,
    Stuck,
    WrongSum,
    save_state,
)
from torchdoctor.rank_list import ranks_text

STATE_DIR_VARIABLE = "TORCHDOCTOR_NET_STATE_DIR"
# gloo's transport failing to connect to a peer at init ("... socket.cc:142] ... connect: Network is unreachable")
CONNECT_FAILED = re.compile(
    r"\bconnect: (?:Network is unreachable|No route to host|Connection refused|Connection timed out)"
)
DEFAULT_MASTER_PORT = 29500


@dataclass(frozen=True)
class WorkerOptions:
    """What every rank of one run does."""

    timeout: float = 30.0
    backend: str = "auto"  # auto | nccl | gloo
    memory_mib: int = 64
    bench: bool = False
    ops: tuple[str, ...] = ("all_reduce",)
    sizes: tuple[int, ...] = ()  # bytes; empty: the backend's default sweep
    warmup: int | None = None  # None: the backend's default (see torchdoctor.net.bandwidth.DEFAULT_ITERS)
    iters: int | None = None
    find_bad: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerOptions:
        data = json.loads(text)
        return cls(**{**data, "ops": tuple(data["ops"]), "sizes": tuple(data["sizes"])})


def first_slurm_host(nodelist: str) -> str:
    """The first host of a SLURM node list: ``"gpu[03-05,09],cpu1"`` -> ``"gpu03"``."""
    match = re.match(r"([^,\[]+)(?:\[([^\]]+)\])?", nodelist.strip())
    if not match:
        return ""
    prefix, ranges = match.groups()
    if not ranges:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def rendezvous_address(info: RankInfo, environ: Mapping[str, str]) -> tuple[str, int, str]:
    """``(MASTER_ADDR, MASTER_PORT, where it came from)`` for this job.

    torchrun sets both. Under SLURM the first host of the step's node list and a port derived from the job
    id (so two jobs sharing a node do not collide); under mpirun ``MASTER_ADDR`` must be passed
    (``mpirun -x MASTER_ADDR=host-of-rank-0``) unless every rank is on this host.
    """
    addr, port = environ.get("MASTER_ADDR", ""), environ.get("MASTER_PORT", "")
    source = "MASTER_ADDR/MASTER_PORT"
    if not addr and info.launcher == "slurm":
        nodelist = environ.get("SLURM_STEP_NODELIST") or environ.get("SLURM_JOB_NODELIST", "")
        addr, source = first_slurm_host(nodelist), "first host of the SLURM node list"
    if not addr and info.local_world_size >= info.world_size:
        addr, source = "127.0.0.1", "all ranks on this host"
    if not port and environ.get("SLURM_JOB_ID", "").isdigit():
        port = str(20000 + int(environ["SLURM_JOB_ID"]) % 20000)
    if not addr:
        raise ValueError(
            f"{info.launcher} started {info.world_size} ranks over several hosts but MASTER_ADDR is not set; "
            "pass the host of rank 0, e.g. `mpirun -x MASTER_ADDR=node01 -x MASTER_PORT=29500 ...`"
        )
    return addr, int(port or DEFAULT_MASTER_PORT), source


# variables every rank must set alike, compared as the ranks join (verdicts.py `_mixed_settings`): under
# TORCH_DISTRIBUTED_DEBUG=DETAIL init_process_group wraps each process group in a checking wrapper with a gloo
# group of its own, which only the ranks that have it set up; the others never join it, and init waits for them
# to its timeout (two namespace hosts, DETAIL on one: init stalled there, the other rank waited in all_reduce)
SHARED_SETTINGS = ("TORCH_DISTRIBUTED_DEBUG",)


def node_identity() -> str:
    """Which machine this rank runs on, whatever its host name says: the kernel's boot id (one per machine
    and boot) and this process's network namespace (a container or namespace host of its own)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}/{os.stat('/proc/self/ns/net').st_ino}"
    except OSError:
        return ""


class _Watchdog:
    """Ends the process with a verdict when one stage runs longer than ``timeout`` seconds."""

    def __init__(self, timeout: float, on_expire: Callable[[str], None]) -> None:
        self.timeout, self.on_expire = timeout, on_expire
        self.stage: str | None = None
        self.since = 0.0
        threading.Thread(target=self._watch, daemon=True, name="torchdoctor-net-watchdog").start()

    def enter(self, stage: str | None) -> None:
        self.stage, self.since = stage, time.monotonic()

    def _watch(self) -> None:
        while True:
            time.sleep(0.1)
            stage = self.stage
            if stage is not None and time.monotonic() - self.since > self.timeout:
                self.on_expire(stage)
                os._exit(1)


class Worker:
    """One rank's run. ``run()`` returns its final `RankState`; failures are recorded in it, not raised.

    The test is a sequence of stages, one method each; a subclass may replace one (torchdoctor's own tests
    plant faults that way).
    """

    def __init__(
        self,
        options: WorkerOptions,
        environ: Mapping[str, str] | None = None,
        out=None,
        on_timeout: Callable[[RankState], None] | None = None,
    ) -> None:
        """``on_timeout(state)`` is called when a stage times out, just before the process ends."""
        self.options = options
        self.on_timeout = on_timeout
        self.environ = os.environ if environ is None else environ
        self.out = out or sys.stdout
        self.info = info = from_environment(self.environ)
        self.state = RankState(info.rank, info.world_size, info.local_rank, info.host, info.launcher)
        try:
            self.state.interfaces = [name for _, name in socket.if_nameindex()]
        except OSError:
            pass
        folder = self.environ.get(STATE_DIR_VARIABLE)
        self.state_dir = Path(folder) if folder else None
        self.store = self.side_store = self.base_store = None
        self.prefix = ""
        self.hosts_store = False
        self.watchdog: _Watchdog | None = None
        self.lock = threading.Lock()

    # -- bookkeeping -------------------------------------------------------------------------------
    def save(self) -> None:
        if self.state_dir is not None:
            with self.lock:
                save_state(self.state, self.state_dir)

    def enter(self, stage: str) -> None:
        self.state.stage = stage
        self.save()
        if self.store is not None:
            self.store.set(f"stage/{self.state.rank}", stage)

    def finish(self, stage: str) -> None:
        self.state.done.append(stage)
        if self.store is not None:
            self.store.set(f"stage/{self.state.rank}", f"{stage} done")
        self.save()

    @contextmanager
    def stage(self, name: str, watched: bool = False) -> Iterator[None]:
        """Run one stage: announce it (state file and store), bound it by the watchdog when ``watched``,
        keep how long it took, and mark it done."""
        self.enter(name)
        if watched and self.watchdog is not None:
            self.watchdog.enter(name)
        started = time.monotonic()
        yield
        if watched and self.watchdog is not None:
            self.watchdog.enter(None)
        self.state.seconds[name] = round(time.monotonic() - started, 4)
        self.finish(name)

    def stages_of_others(self) -> dict[str, str]:
        """Each rank's last stage, read through a second store client (the first may be mid-call)."""
        stages: dict[str, str] = {}
        store = self.side_store
        if store is None:
            return stages
        for rank in range(self.state.world_size):
            try:
                if store.check([f"stage/{rank}"]):
                    stages[str(rank)] = store.get(f"stage/{rank}").decode()
                else:
                    stages[str(rank)] = "never joined"
            except Exception:  # noqa: BLE001 - the store's host may be gone too; report what we have
                stages[str(rank)] = "unknown"
        return stages

    def tell_others(self, stage: str) -> None:
        """Leave this rank's failure in the store, where the ranks still waiting on it will read it."""
        try:
            if self.side_store is not None:
                self.side_store.set(f"stage/{self.state.rank}", stage)
        except Exception:  # noqa: BLE001 - the store's host may be the one that is gone
            pass

    def on_stuck(self, stage: str) -> None:
        stages = self.stages_of_others()
        failed = {r: s for r, s in stages.items() if s.startswith("failed at")}
        not_entered = [
            int(r)
            for r, s in stages.items()
            if int(r) != self.state.rank and r not in failed and _stage_index(s) < _stage_index(stage)
        ]
        timeout = self.options.timeout
        self.state.stuck = Stuck(stage, timeout, not_entered, failed, stages)
        self.state.error = RankError("Timeout", f"{stage} did not complete within {timeout:g}s", stage)
        self.save()
        last = ", ".join(f"rank {r} at {s}" for r, s in stages.items())
        self.say(f"{stage} did not complete within {timeout:g}s ({last})")
        if self.on_timeout is not None:
            self.on_timeout(self.state)

    def say(self, text: str) -> None:
        print(f"[{self.state.host}:{self.state.local_rank}] {text}", file=self.out, flush=True)

    # -- the test ----------------------------------------------------------------------------------
    def run(self, on_row: Callable[[dict[str, Any], int], None] | None = None) -> RankState:
        """Run every stage (and the bench when asked; ``on_row(row, total)`` sees its rows on rank 0)."""
        self.save()
        self.watchdog = _Watchdog(self.options.timeout, self.on_stuck)
        try:
            self.run_stages(on_row)
        except Exception as error:  # noqa: BLE001 - every failure of a stage is recorded in the rank's state, to be judged, not raised
            self.watchdog.enter(None)
            self.record_failure(error)
        return self.state

    def run_stages(self, on_row) -> None:
        import torch.distributed as dist

        self.connect_store()
        peers = self.join()
        device = self.choose_device(peers)
        self.init_process_group(device)
        self.check_all_reduce(device)
        self.barrier()
        self.check_memory(device)
        self.say_done()
        if self.options.find_bad:
            self.find_bad(device, peers)
        # one rank has no link to time (smoke.ONE_RANK_BENCH)
        if self.options.bench and self.info.world_size > 1:
            self.bench(device, on_row)
        dist.destroy_process_group()
        self.leave()

    def leave(self) -> None:
        """The last word in the store. When rank 0 hosts the store (not torch's agent), it stays until every
        rank has said it, so that no rank's last write finds the store gone."""
        info = self.info
        self.store.set(f"left/{info.rank}", "1")
        if info.rank == 0 and self.hosts_store:
            keys = [f"left/{r}" for r in range(info.world_size)]
            try:
                self.store.wait(keys, timedelta(seconds=self.options.timeout))
            except Exception:  # noqa: BLE001 - a store wait fails with several types across torch versions; the missing ranks are named below
                late = [r for r in range(info.world_size) if not self.store.check([keys[r]])]
                raise TimeoutError(
                    f"rank(s) {ranks_text(late)} did not finish within {self.options.timeout:g}s after the test"
                ) from None

    def record_failure(self, error: Exception) -> None:
        state, why = self.state, str(error).strip()
        where = "".join(traceback.format_exception(error)[-3:])[-2000:]
        state.error = RankError(type(error).__name__, why[:4000], state.stage, where)
        if state.stage == "init" and CONNECT_FAILED.search(why):
            state.unreachable = self.offers_out_of_reach()
        self.tell_others(f"failed at {state.stage}: {type(error).__name__}: {why[:300]}")
        if state.stage in COLLECTIVE_STAGES and not state.wrong:
            state.stuck = Stuck(state.stage, stages=self.stages_of_others())
        self.save()
        self.say(f"FAILED at {state.stage}: {type(error).__name__}: {why[:500]}")

    def offers_out_of_reach(self) -> dict[str, dict[str, Any]]:
        """The ranks on other hosts whose offered address this host cannot connect to: rank -> ``{"why",
        "reachable"}``, the peer's other interfaces this host has a route to."""
        import ipaddress

        found = {}
        for rank, offer in self.state.offers.items():
            host, address = self.state.joined.get(rank), offer.get("address", "")
            if host == self.info.host or not address:
                continue
            if ipaddress.ip_address(address).is_loopback:
                why = f"a loopback address: on {self.info.host} that is {self.info.host} itself"
            elif why := no_route(address):
                why += f" from {self.info.host}"
            else:
                continue
            reachable = {
                name: other
                for name, other in (offer.get("interfaces") or {}).items()
                if other != address and not ipaddress.ip_address(other).is_loopback and not no_route(other)
            }
            found[rank] = {"why": why, "reachable": reachable}
        return found

    def connect_store(self) -> None:
        """Reach the job's store (rank 0 hosts it unless torch's launcher does) with a second client beside it."""
        import torch.distributed as dist

        with self.stage("store"):
            addr, port, _source = rendezvous_address(self.info, self.environ)
            self.state.master = f"{addr}:{port}"
            self.save()
            agent_store = self.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
            self.hosts_store = self.info.rank == 0 and not agent_store
            self.base_store = dist.TCPStore(
                addr,
                port,
                None,
                is_master=self.hosts_store,
                timeout=timedelta(seconds=self.options.timeout),
                wait_for_workers=False,
            )
            side = dist.TCPStore(addr, port, None, is_master=False, timeout=timedelta(seconds=5))
            # torchrun keeps one store across restarts: an attempt's keys must not answer for the next one
            self.prefix = f"torchdoctor/net/{self.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"
            self.store = dist.PrefixStore(self.prefix, self.base_store)
            self.side_store = dist.PrefixStore(self.prefix, side)

    def join(self) -> dict[int, dict[str, Any]]:
        """Say who we are in the store and wait for every rank to do the same; returns rank -> what it said."""
        import torch

        info, state, store = self.info, self.state, self.store
        with self.stage("joined"):
            has_gpu = torch.cuda.is_available() and torch.cuda.device_count() > info.local_rank
            me = {"host": info.host, "gpu": has_gpu, "local_rank": info.local_rank, "pid": os.getpid()}
            me["node"] = node_identity()
            me["software"] = self.software()
            me["settings"] = {name: self.environ.get(name, "") for name in SHARED_SETTINGS}
            me["offers"] = {
                **offered_address(self.environ, self.options.backend),
                "interfaces": interface_addresses(),
            }
            store.set(f"joined/{info.rank}", json.dumps(me))
            keys = [f"joined/{r}" for r in range(info.world_size)]
            try:
                store.wait(keys, timedelta(seconds=self.options.timeout))
            except Exception:  # noqa: BLE001 - a store wait fails with several types across torch versions; the missing ranks are named below
                state.missing = [r for r in range(info.world_size) if not store.check([keys[r]])]
            present = [r for r in range(info.world_size) if r not in state.missing]
            peers = {r: json.loads(store.get(keys[r])) for r in present}
            state.joined = {str(r): p["host"] for r, p in peers.items()}
            state.pids = {str(r): p["pid"] for r, p in peers.items()}
            state.offers = {str(r): p["offers"] for r, p in peers.items() if p.get("offers")}
            state.nodes = {str(r): p["node"] for r, p in peers.items() if p.get("node")}
            state.software = {str(r): p["software"] for r, p in peers.items() if p.get("software")}
            state.settings = {str(r): p["settings"] for r, p in peers.items() if "settings" in p}
            if state.missing:
                raise TimeoutError(
                    f"rank(s) {ranks_text(state.missing)} never joined within {self.options.timeout:g}s "
                    f"(joined: {ranks_text(present)})"
                )
        return peers

    def software(self) -> dict[str, str]:
        """The versions every rank of a job must share: Python's and torch's (compared when the ranks join)."""
        import platform

        import torch

        return {"Python": platform.python_version(), "torch": torch.__version__}

    def choose_device(self, peers: Mapping[int, Mapping[str, Any]]):
        """NCCL on this rank's GPU when asked for, or by default when every rank has one; else gloo on CPU."""
        import torch

        backend = self.options.backend
        if backend == "auto":
            backend = "nccl" if all(p["gpu"] for p in peers.values()) else "gloo"
        self.state.backend = backend
        if backend == "nccl" and not peers.get(self.info.rank, {}).get("gpu", True):
            count = torch.cuda.device_count()
            raise RuntimeError(
                f"--backend nccl: local rank {self.info.local_rank} on {self.info.host} has no GPU of its own "
                f'({count} GPU(s) there): NCCL needs one GPU per rank and refuses two ranks on one ("Duplicate '
                f'GPU detected"); start at most {count} rank(s) on this host (--nproc-per-node {count}), or use '
                "--backend gloo"
            )
        device = torch.device("cuda", self.info.local_rank) if backend == "nccl" else torch.device("cpu")
        if device.type == "cuda":
            torch.cuda.set_device(device)
        self.state.device = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
        return device

    def init_process_group(self, device) -> None:
        import torch.distributed as dist

        with self.stage("init", watched=True):
            # Our own watchdog gives the verdict at `timeout`; the backend's is a little later, as a backstop.
            dist.init_process_group(
                self.state.backend,
                store=dist.PrefixStore(f"{self.prefix}/pg", self.base_store),
                rank=self.info.rank,
                world_size=self.info.world_size,
                timeout=timedelta(seconds=self.options.timeout + 5),
            )
        if self.info.rank == 0:
            self.state.versions = versions(on_gpu=device.type == "cuda")

    def check_all_reduce(self, device) -> None:
        """All-reduce a known tensor and compare with the expected sums.

        Element ``i`` of a small tensor carries only rank ``i``'s contribution (``i + 1``), so a wrong
        element names whose contribution went wrong; a 4 MiB payload of ``rank + 1`` exercises the
        transport with more than one packet, where broken P2P corrupts data silently.
        """
        import torch
        import torch.distributed as dist

        rank, world = self.info.rank, self.info.world_size
        with self.stage("all_reduce", watched=True):
            marks = torch.zeros(world, dtype=torch.float64, device=device)
            marks[rank] = rank + 1
            payload = torch.full((2**20,), float(rank + 1), dtype=torch.float32, device=device)
            self.contribute(marks, payload)
            dist.all_reduce(marks)
            dist.all_reduce(payload)
            wrong = [WrongSum(r, r + 1, got) for r, got in enumerate(marks.tolist()) if got != r + 1]
            expected = world * (world + 1) / 2
            bad = int((payload != expected).sum().item())
            if bad and not wrong:
                wrong.append(WrongSum(-1, expected, f"{bad} of {payload.numel()} elements differ"))
            self.state.wrong = wrong
            if wrong:
                raise ArithmeticError(
                    "all_reduce returned a wrong sum for the contribution of rank(s) "
                    + ranks_text([w.rank for w in wrong])
                )

    def contribute(self, marks, payload) -> None:
        """This rank's share of the checked all_reduce, already in ``marks`` and ``payload``."""

    def barrier(self) -> None:
        import torch.distributed as dist

        with self.stage("barrier", watched=True):
            dist.barrier()

    def check_memory(self, device) -> None:
        import torch

        with self.stage("memory"):
            mib = self.options.memory_mib
            block = torch.ones(mib * 2**20 // 4, dtype=torch.float32, device=device)
            if int(block.sum().item()) != block.numel():
                raise MemoryError(f"{mib} MiB on {device} read back wrong")

    def say_done(self) -> None:
        self.enter("done")
        self.say(f"OK (rank {self.info.rank}/{self.info.world_size})")
        if self.info.rank == 0:
            self.say(_versions_line(self.state.versions))

    def find_bad(self, device, peers) -> None:
        """The rounds of `torchdoctor.net.find_bad`; rank 0 keeps the measurements for the verdict."""
        from torchdoctor.net.find_bad import run_rounds

        with self.stage("find_bad", watched=True):
            record = run_rounds(self.info.rank, self.info.world_size, peers, device, self.seeded_digest)
        if self.info.rank == 0:
            self.state.find_bad = record
        self.state.stage = "done"  # the smoke test passed before the rounds began
        self.save()

    def seeded_digest(self, device) -> dict:
        """This rank's hash of the seeded computation every rank runs alike."""
        from torchdoctor.net.find_bad import digest_of, seeded_result

        return digest_of(seeded_result(device), device)

    def bench(self, device, on_row) -> None:
        from torchdoctor.net.bandwidth import run_sweep

        state = self.state

        def record(row: dict[str, Any], total: int) -> None:
            state.bench.append(row)
            state.bench_total = total
            self.save()
            if on_row is not None:
                on_row(row, total)

        with self.stage("bench"):
            run_sweep(
                self.options, device, on_row=record if self.info.rank == 0 else None, watchdog=self.watchdog
            )
        state.stage = "done"  # the smoke test passed before the bench began
        self.save()


def versions(on_gpu: bool = True) -> dict[str, Any]:
    """torch, CUDA and NCCL versions, and the GPUs this rank sees (what rank 0 prints). ``on_gpu=False`` (a
    gloo rank on CPU) leaves the GPUs alone: a rank forked from a process that has used CUDA (`torchdoctor
    check` has, to list them) cannot use CUDA itself."""
    import torch

    found: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda, "nccl": None}
    if on_gpu and torch.cuda.is_available():
        try:
            found["nccl"] = ".".join(str(p) for p in torch.cuda.nccl.version())
        except Exception:  # noqa: BLE001 - NCCL missing from this build
            pass
        found["gpus"] = [
            {
                "name": torch.cuda.get_device_name(i),
                "capability": "{}.{}".format(*torch.cuda.get_device_capability(i)),
            }
            for i in range(torch.cuda.device_count())
        ]
        found["arch_list"] = torch.cuda.get_arch_list()
    return found


def _versions_line(found: Mapping[str, Any]) -> str:
    parts = [f"torch {found.get('torch')}"]
    parts.append(f"CUDA {found['cuda']}" if found.get("cuda") else "CPU build")
    if found.get("nccl"):
        parts.append(f"NCCL {found['nccl']}")
    for gpu in found.get("gpus", []):
        parts.append(f"{gpu['name']} (sm_{gpu['capability'].replace('.', '')})")
    if found.get("arch_list"):
        parts.append("arch list " + " ".join(found["arch_list"]))
    return ", ".join(parts)


def _stage_index(stage: str) -> float:
    name = stage.removesuffix(" done")
    index = STAGES.index(name) if name in STAGES else -1
    return index + (0.5 if stage.endswith(" done") else 0)


def main(argv: list[str] | None = None) -> int:
    """``python -m torchdoctor.net.worker OPTIONS_JSON [WORKER_MODULE]``: one rank under torch's launcher.

    ``WORKER_MODULE`` names a module whose ``Worker`` runs the rank (default: this one's).
    """
    args = sys.argv[1:] if argv is None else argv
    options = WorkerOptions.from_json(args[0]) if args else WorkerOptions()
    worker = importlib.import_module(args[1]).Worker if len(args) > 1 else Worker
    return 1 if worker(options).run().error else 0


if __name__ == "__main__":
    sys.exit(main())
