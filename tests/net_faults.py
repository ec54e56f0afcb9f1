"""Faults planted in the smoke test's ranks, for torchdoctor's own tests: nothing in src/ knows of them.

``NET_FAULTS=RANK:KIND[,RANK:KIND...]`` in a rank's environment, KIND one of ``no_join`` (the rank never
connects), ``crash`` (raises after joining), ``wrong_value`` (contributes a wrong value to the all_reduce),
``skip_collective`` (never enters the all_reduce), ``other_torch`` (reports an older torch as it joins),
``debug_detail`` (runs under TORCH_DISTRIBUTED_DEBUG=DETAIL, as a host whose environment sets it); for ``--find-bad``: ``flip_bit`` (one bit of its seeded result
flipped, as a faulty ALU or memory would) and ``busy_core`` (the rank shares one core with two busy processes,
and yields to them).

Two uses: as the worker module the tests name (``run_net(..., worker="net_faults")``, this folder on the path),
whose `Worker` plants the faults; and as a command that runs ``torchdoctor net``'s test with it, alone or as a
rank of an outer torchrun::

    NET_FAULTS=1:crash python tests/net_faults.py --json --timeout=30
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import torch

from torchdoctor.net import worker

FAULTS_VARIABLE = "NET_FAULTS"
FAULTS = (
    "no_join",
    "crash",
    "wrong_value",
    "skip_collective",
    "flip_bit",
    "busy_core",
    "other_torch",
    "debug_detail",
)


def parse_faults(text: str | None) -> dict[int, str]:
    """``"1:crash,2:no_join"`` -> ``{1: "crash", 2: "no_join"}``."""
    faults: dict[int, str] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        rank, _, kind = item.partition(":")
        if not rank.isdigit() or kind not in FAULTS:
            raise ValueError(f"{FAULTS_VARIABLE}={text!r}: {item!r} is not RANK:KIND with KIND in {FAULTS}")
        faults[int(rank)] = kind
    return faults


class Worker(worker.Worker):
    """The smoke test's rank, with this rank's fault from ``NET_FAULTS`` planted in one stage."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fault = parse_faults(self.environ.get(FAULTS_VARIABLE)).get(self.info.rank)
        if self.fault == "debug_detail":  # torch read the variable as it imported: set its level as well
            self.environ = {**self.environ, "TORCH_DISTRIBUTED_DEBUG": "DETAIL"}
            torch.distributed.set_debug_level(torch.distributed.DebugLevel.DETAIL)

    def _hang(self) -> None:
        time.sleep(10 * self.options.timeout + 60)  # the others' verdict, or the deadline, ends us first
        os._exit(0)

    def connect_store(self) -> None:
        if self.fault == "no_join":
            self._hang()
        super().connect_store()

    def software(self) -> dict[str, str]:
        found = super().software()
        if self.fault == "other_torch":  # as a node whose environment was left at an older torch reports
            found["torch"] = "2.4.1+cu121"
        return found

    def choose_device(self, peers):
        if self.fault == "crash":
            raise RuntimeError(f"injected crash for tests ({FAULTS_VARIABLE})")
        return super().choose_device(peers)

    def check_all_reduce(self, device) -> None:
        if self.fault == "skip_collective":
            self._hang()
        super().check_all_reduce(device)

    def seeded_digest(self, device) -> dict:
        if self.fault != "flip_bit":
            return super().seeded_digest(device)
        from torchdoctor.net.find_bad import digest_of, seeded_result

        values = seeded_result(device)
        bits = values.view(torch.int32)
        bits[7, 7] ^= 1 << 3
        return digest_of(values, device)

    def find_bad(self, device, peers) -> None:
        if self.fault != "busy_core":
            return super().find_bad(device, peers)
        # Pinned to one core with two busy processes, and yielding to them (10 nice levels below them): whatever
        # else runs on the machine, this rank gets a small share of what the others get.
        core = min(os.sched_getaffinity(0))
        spin = f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"
        busy = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
        os.sched_setaffinity(0, {core})
        niceness = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, min(niceness + 10, 19))
        try:
            super().find_bad(device, peers)
        finally:
            os.setpriority(os.PRIO_PROCESS, 0, niceness)
            for process in busy:
                process.kill()
                process.wait()

    def contribute(self, marks, payload) -> None:
        if self.fault == "wrong_value":
            marks[self.info.rank] += 41
            payload += 41


def main(argv: list[str] | None = None) -> int:
    """``torchdoctor net [--json] [--timeout S]`` with this module's `Worker` in every rank."""
    from torchdoctor.cli.app import exit_with_findings, show_findings
    from torchdoctor.cli.net import show_ranks
    from torchdoctor.net.options import net_options
    from torchdoctor.net.smoke import run_net

    parser = argparse.ArgumentParser(prog="net_faults")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--nproc-per-node", type=int, default=None)
    parser.add_argument("--find-bad", action="store_true")
    args = parser.parse_args(argv)
    parse_faults(os.environ.get(FAULTS_VARIABLE))  # a typo in a test fails here, not as a passing run
    result = run_net(
        net_options(timeout=args.timeout, nproc_per_node=args.nproc_per_node, find_bad=args.find_bad),
        out=sys.stderr if args.json else sys.stdout,
        show_now=lambda findings: show_findings(findings, args.json, False),
        worker="net_faults",
    )
    if result.silent:
        return 0
    if not args.json:
        show_ranks(result)
    try:
        exit_with_findings(result.findings, args.json, False)
    except BaseException as done:  # noqa: BLE001 - typer.Exit carries the exit status
        return getattr(done, "exit_code", 1)
    return 0


def run_here(faults: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    """`main` with ``NET_FAULTS=faults`` in this process: its ranks are forked from here, as `net` forks them
    from its own process; what a run of ``python tests/net_faults.py ARGS`` returns, without the process (and
    its 3 s of CPU for ``import torch``). For the cases of one class whose first case runs in a real process."""
    from helpers import main_here

    return main_here(main, "net_faults.py", args, {FAULTS_VARIABLE: faults}, cwd)


if __name__ == "__main__":
    sys.exit(main())
