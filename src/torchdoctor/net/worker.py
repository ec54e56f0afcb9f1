"""One rank of the communication smoke test: join, init, ``all_reduce`` checked against the expected sum,
``barrier``, allocate device memory, print ``[host:local_rank] OK (rank r/w)``.

Every rank records how far it got in a small JSON report (in ``TORCHDOCTOR_NET_REPORT_DIR`` when the local
launcher set one) and in the job's store, so that a rank that is stuck or never came can be named by the
others. Each stage is bounded by ``timeout`` seconds: a watchdog thread gives the verdict and ends the
process rather than letting it hang.

Run by ``torchdoctor net`` itself (``python -m torchdoctor.net.worker`` under ``torch.distributed.run``) or,
when ``torchdoctor net`` is started by torchrun, srun or mpirun, in that process.

``TORCHDOCTOR_NET_FAULT`` (for torchdoctor's own tests only) injects a fault: ``RANK:KIND`` with KIND one of
``no_join`` (the rank never connects), ``crash`` (raises after joining), ``wrong_value`` (contributes a wrong
value to the all_reduce), ``skip_collective`` (never enters the all_reduce); several separated by commas.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from torchdoctor.distributed.ranks import RankInfo, from_environment

FAULT_VARIABLE = "TORCHDOCTOR_NET_FAULT"
REPORT_DIR_VARIABLE = "TORCHDOCTOR_NET_REPORT_DIR"
FAULTS = ("no_join", "crash", "wrong_value", "skip_collective")
# The order a rank goes through; a verdict names the last stage a rank reached.
STAGES = ("started", "store", "joined", "init", "all_reduce", "barrier", "memory", "done", "bench")
COLLECTIVE_STAGES = ("init", "all_reduce", "barrier")
DEFAULT_MASTER_PORT = 29500


@dataclass
class WorkerOptions:
    timeout: float = 30.0
    backend: str = "auto"  # auto | nccl | gloo
    memory_mib: int = 64
    bench: bool = False
    ops: tuple[str, ...] = ("all_reduce",)
    sizes: tuple[int, ...] = ()  # bytes; empty: the backend's default sweep
    warmup: int | None = None  # None: the backend's default (see torchdoctor.net.bandwidth.DEFAULT_ITERS)
    iters: int | None = None


@dataclass
class Report:
    """What one rank saw; written as JSON after every stage so a killed rank still leaves its last one."""

    rank: int
    world_size: int
    local_rank: int
    host: str
    launcher: str
    pid: int = field(default_factory=os.getpid)
    stage: str = "started"
    done: list[str] = field(default_factory=list)
    backend: str = ""
    device: str = ""
    master: str = ""
    interfaces: list[str] = field(
        default_factory=list
    )  # this host's network interfaces, for a wrong *_IFNAME
    joined: dict[str, str] = field(default_factory=dict)  # rank -> host, of the ranks seen joining
    pids: dict[str, int] = field(default_factory=dict)  # rank -> process id, to point py-spy at a stuck one
    missing: list[int] = field(default_factory=list)  # ranks that never joined
    stuck: dict[str, Any] = field(default_factory=dict)  # {"stage", "not_entered", "stages"}
    wrong: list[dict[str, Any]] = field(default_factory=list)  # contributions that came back wrong
    error: dict[str, str] = field(default_factory=dict)  # {"type", "message", "stage", "where"}
    versions: dict[str, Any] = field(default_factory=dict)
    bench: list[dict[str, Any]] = field(default_factory=list)
    bench_total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def parse_faults(text: str | None) -> dict[int, str]:
    """``"1:crash,2:no_join"`` -> ``{1: "crash", 2: "no_join"}`` (the test-only fault injection)."""
    faults: dict[int, str] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        rank, _, kind = item.partition(":")
        if not rank.isdigit() or kind not in FAULTS:
            raise ValueError(f"{FAULT_VARIABLE}={text!r}: {item!r} is not RANK:KIND with KIND in {FAULTS}")
        faults[int(rank)] = kind
    return faults


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


class _Watchdog:
    """Ends the process with a verdict when one stage runs longer than ``timeout`` seconds."""

    def __init__(self, timeout: float, on_expire) -> None:
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
    """One rank's run. ``run()`` returns the finished report; failures are recorded in it, not raised."""

    def __init__(
        self, options: WorkerOptions, environ: Mapping[str, str] | None = None, out=None, on_timeout=None
    ) -> None:
        """``on_timeout(report)`` is called when a stage times out, just before the process ends."""
        self.options = options
        self.on_timeout = on_timeout
        self.environ = os.environ if environ is None else environ
        self.out = out or sys.stdout
        info = from_environment(self.environ)
        self.info = info
        self.report = Report(info.rank, info.world_size, info.local_rank, info.host, info.launcher)
        try:
            self.report.interfaces = [name for _, name in socket.if_nameindex()]
        except OSError:
            pass
        self.report_dir = self.environ.get(REPORT_DIR_VARIABLE)
        self.fault = parse_faults(self.environ.get(FAULT_VARIABLE)).get(info.rank)
        self.store = self.side_store = None
        self.lock = threading.Lock()

    # -- bookkeeping -------------------------------------------------------------------------------
    def save(self) -> None:
        if not self.report_dir:
            return
        path = Path(self.report_dir) / f"rank-{self.report.rank}.json"
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with self.lock:
            tmp.write_text(json.dumps(self.report.to_dict(), default=str))
            os.replace(tmp, path)

    def enter(self, stage: str) -> None:
        self.report.stage = stage
        self.save()
        if self.store is not None:
            self.store.set(f"stage/{self.report.rank}", stage)

    def finish(self, stage: str) -> None:
        self.report.done.append(stage)
        if self.store is not None:
            self.store.set(f"stage/{self.report.rank}", f"{stage} done")
        self.save()

    def stages_of_others(self) -> dict[str, str]:
        """Each rank's last stage, read through a second store client (the first may be mid-call)."""
        stages = {}
        store = self.side_store
        if store is None:
            return stages
        for rank in range(self.report.world_size):
            try:
                if store.check([f"stage/{rank}"]):
                    stages[str(rank)] = store.get(f"stage/{rank}").decode()
                else:
                    stages[str(rank)] = "never joined"
            except Exception:  # the store's host may be gone too; report what we have
                stages[str(rank)] = "unknown"
        return stages

    def tell_others(self, stage: str) -> None:
        """Leave this rank's failure in the store, where the ranks still waiting on it will read it."""
        try:
            if self.side_store is not None:
                self.side_store.set(f"stage/{self.report.rank}", stage)
        except Exception:  # the store's host may be the one that is gone
            pass

    def on_stuck(self, stage: str) -> None:
        stages = self.stages_of_others()
        failed = {r: s for r, s in stages.items() if s.startswith("failed at")}
        not_entered = [
            int(r)
            for r, s in stages.items()
            if int(r) != self.report.rank and r not in failed and _stage_index(s) < _stage_index(stage)
        ]
        self.report.stuck = {
            "stage": stage,
            "seconds": self.options.timeout,
            "not_entered": not_entered,
            "failed": failed,
            "stages": stages,
        }
        self.report.error = {
            "type": "Timeout",
            "message": f"{stage} did not complete within {self.options.timeout:g}s",
            "stage": stage,
        }
        self.save()
        last = ", ".join(f"rank {r} at {s}" for r, s in stages.items())
        self.say(f"{stage} did not complete within {self.options.timeout:g}s ({last})")
        if self.on_timeout is not None:
            self.on_timeout(self.report)

    def say(self, text: str) -> None:
        print(f"[{self.report.host}:{self.report.local_rank}] {text}", file=self.out, flush=True)

    # -- the test ----------------------------------------------------------------------------------
    def run(self, on_row=None) -> Report:
        """Run every stage (and the bench when asked; ``on_row(row, total)`` sees its rows on rank 0)."""
        self.save()
        watchdog = _Watchdog(self.options.timeout, self.on_stuck)
        try:
            self._run(watchdog, on_row)
        except Exception as error:
            watchdog.enter(None)
            self.report.error = {
                "type": type(error).__name__,
                "message": str(error).strip()[:4000],
                "stage": self.report.stage,
                "where": "".join(traceback.format_exception(error)[-3:])[-2000:],
            }
            self.tell_others(
                f"failed at {self.report.stage}: {type(error).__name__}: {str(error).strip()[:300]}"
            )
            if self.report.stage in COLLECTIVE_STAGES and not self.report.wrong:
                self.report.stuck = {"stage": self.report.stage, "stages": self.stages_of_others()}
            self.save()
            self.say(f"FAILED at {self.report.stage}: {type(error).__name__}: {str(error).strip()[:500]}")
        return self.report

    def _run(self, watchdog: _Watchdog, on_row) -> None:
        import torch
        import torch.distributed as dist

        options, report, info = self.options, self.report, self.info
        if self.fault == "no_join":
            time.sleep(10 * options.timeout + 60)  # the launcher or the other ranks' verdict ends us
            return
        self.enter("store")
        addr, port, _source = rendezvous_address(info, self.environ)
        report.master = f"{addr}:{port}"
        self.save()
        agent_store = self.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
        timeout = timedelta(seconds=options.timeout)
        base = dist.TCPStore(
            addr,
            port,
            None,
            is_master=info.rank == 0 and not agent_store,
            timeout=timeout,
            wait_for_workers=False,
        )
        side = dist.TCPStore(addr, port, None, is_master=False, timeout=timedelta(seconds=5))
        # torchrun keeps one store across restarts: an attempt's keys must not answer for the next one
        prefix = f"torchdoctor/net/{self.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"
        self.store = dist.PrefixStore(prefix, base)
        self.side_store = dist.PrefixStore(prefix, side)
        self.finish("store")

        self.enter("joined")
        has_gpu = torch.cuda.is_available() and torch.cuda.device_count() > info.local_rank
        me = {"host": info.host, "gpu": has_gpu, "local_rank": info.local_rank, "pid": os.getpid()}
        self.store.set(f"joined/{info.rank}", json.dumps(me))
        keys = [f"joined/{r}" for r in range(info.world_size)]
        try:
            self.store.wait(keys, timeout)
        except Exception:
            report.missing = [r for r in range(info.world_size) if not self.store.check([keys[r]])]
        present = [r for r in range(info.world_size) if r not in report.missing]
        peers = {r: json.loads(self.store.get(keys[r])) for r in present}
        report.joined = {str(r): p["host"] for r, p in peers.items()}
        report.pids = {str(r): p["pid"] for r, p in peers.items()}
        if report.missing:
            raise TimeoutError(
                f"rank(s) {_list(report.missing)} never joined within {options.timeout:g}s "
                f"(joined: {_list(present)})"
            )
        self.finish("joined")
        if self.fault == "crash":
            raise RuntimeError(f"injected crash for tests ({FAULT_VARIABLE})")

        backend = options.backend
        if backend == "auto":
            backend = "nccl" if all(p["gpu"] for p in peers.values()) else "gloo"
        report.backend = backend
        device = torch.device("cuda", info.local_rank) if backend == "nccl" else torch.device("cpu")
        if device.type == "cuda":
            torch.cuda.set_device(device)
        report.device = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"

        self.enter("init")
        watchdog.enter("init")
        # Our own watchdog gives the verdict at `timeout`; the backend's is a little later, as a backstop.
        dist.init_process_group(
            backend,
            store=dist.PrefixStore(f"{prefix}/pg", base),
            rank=info.rank,
            world_size=info.world_size,
            timeout=timeout + timedelta(seconds=5),
        )
        watchdog.enter(None)
        self.finish("init")
        if info.rank == 0:
            report.versions = versions()

        if self.fault == "skip_collective":
            time.sleep(10 * options.timeout + 60)
            return
        self.enter("all_reduce")
        watchdog.enter("all_reduce")
        report.wrong = self.checked_all_reduce(device)
        watchdog.enter(None)
        if report.wrong:
            raise ArithmeticError(
                "all_reduce returned a wrong sum for the contribution of rank(s) "
                + _list([w["rank"] for w in report.wrong])
            )
        self.finish("all_reduce")

        self.enter("barrier")
        watchdog.enter("barrier")
        dist.barrier()
        watchdog.enter(None)
        self.finish("barrier")

        self.enter("memory")
        mib = options.memory_mib
        block = torch.ones(mib * 2**20 // 4, dtype=torch.float32, device=device)
        if int(block.sum().item()) != block.numel():
            raise MemoryError(f"{mib} MiB on {device} read back wrong")
        del block
        self.finish("memory")
        self.enter("done")
        self.say(f"OK (rank {info.rank}/{info.world_size})")
        if info.rank == 0:
            self.say(_versions_line(report.versions))

        if options.bench:
            from torchdoctor.net.bandwidth import run_sweep

            def record(row: dict[str, Any], total: int) -> None:
                report.bench.append(row)
                report.bench_total = total
                self.save()
                if on_row is not None:
                    on_row(row, total)

            self.enter("bench")
            run_sweep(options, device, on_row=record if info.rank == 0 else None, watchdog=watchdog)
            self.finish("bench")
            report.stage = "done"  # the smoke test passed before the bench began
            self.save()
        dist.destroy_process_group()

    def checked_all_reduce(self, device) -> list[dict[str, Any]]:
        """All-reduce a known tensor and compare with the expected sums.

        Element ``i`` of a small tensor carries only rank ``i``'s contribution (``i + 1``), so a wrong
        element names whose contribution went wrong; a 4 MiB payload of ``rank + 1`` exercises the
        transport with more than one packet, where broken P2P corrupts data silently.
        """
        import torch
        import torch.distributed as dist

        rank, world = self.info.rank, self.info.world_size
        marks = torch.zeros(world, dtype=torch.float64, device=device)
        marks[rank] = rank + 1
        payload = torch.full((2**20,), float(rank + 1), dtype=torch.float32, device=device)
        if self.fault == "wrong_value":
            marks[rank] += 41
            payload += 41
        dist.all_reduce(marks)
        dist.all_reduce(payload)
        wrong = []
        for r, got in enumerate(marks.tolist()):
            if got != r + 1:
                wrong.append({"rank": r, "expected": r + 1, "got": got})
        expected = world * (world + 1) / 2
        bad = int((payload != expected).sum().item())
        if bad and not wrong:
            wrong.append(
                {"rank": -1, "expected": expected, "got": f"{bad} of {payload.numel()} elements differ"}
            )
        return wrong


def versions() -> dict[str, Any]:
    """torch, CUDA and NCCL versions, and the GPUs this rank sees (what rank 0 prints)."""
    import torch

    found: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda, "nccl": None}
    if torch.cuda.is_available():
        try:
            found["nccl"] = ".".join(str(p) for p in torch.cuda.nccl.version())
        except Exception:  # NCCL missing from this build
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


def _list(ranks) -> str:
    return ", ".join(str(r) for r in ranks)


def options_from_args(argv: list[str] | None = None) -> WorkerOptions:
    """Parse the worker's command line (what ``torchdoctor net`` passes on to each worker)."""
    import argparse

    parser = argparse.ArgumentParser(prog="torchdoctor.net.worker")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--backend", default="auto", choices=("auto", "nccl", "gloo"))
    parser.add_argument("--memory-mib", type=int, default=64)
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--ops", default="all_reduce")
    parser.add_argument("--sizes", default="")
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--iters", type=int, default=None)
    args = parser.parse_args(argv)
    return WorkerOptions(
        timeout=args.timeout,
        backend=args.backend,
        memory_mib=args.memory_mib,
        bench=args.bench,
        ops=tuple(filter(None, args.ops.split(","))),
        sizes=tuple(int(s) for s in args.sizes.split(",") if s),
        warmup=args.warmup,
        iters=args.iters,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m torchdoctor.net.worker [--timeout S] [--backend B] [--bench] ...``: one rank."""
    report = Worker(options_from_args(argv)).run()
    return 1 if report.error else 0


if __name__ == "__main__":
    sys.exit(main())
