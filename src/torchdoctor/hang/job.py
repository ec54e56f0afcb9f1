"""One hang report for a job on several nodes, made by the launchers through the job's own store.

Each node's `torchdoctor launch --watchdog` watches its own workers. At a hang the launchers meet in the
store torchrun's agent hosts (the one the workers use; under a key prefix of ours): the first node to see a
hang says so there, every node posts one summary of its ranks (their stacks and newest flight-recorder
entries), and the node that hosts rank 0 reads them all and prints the verdict for the whole job.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from torchdoctor.hang.places import grouped
from torchdoctor.hang.report import format_report
from torchdoctor.hang.source import Frame
from torchdoctor.hang.stacks import RankStack, stack_dict
from torchdoctor.rank_list import who


def _listens(address: str, port: int, timeout: float) -> bool:
    """Whether something listens on ``address:port``, by a plain connection: a TCPStore client retries a refused
    connection until its timeout, then torch prints its error with a C++ stack to stderr. A short run on two
    namespace hosts had ended before its launchers first looked: each console of the run, which succeeded, ended
    with two such errors, and `explain` read it as a rendezvous store nobody could reach."""
    try:
        socket.create_connection((address, port), timeout=timeout).close()
    except OSError:
        return False
    return True


class JobExchange:
    """How the launchers of a job on several nodes make one hang report, through the job's own store (the
    one torchrun's agent hosts and the workers use): each node posts one summary of its ranks (stacks and
    the newest flight-recorder entries), and the node hosting rank 0 reads them all and reports for the
    whole job. A constant number of store requests per node and hang, plus one check a second while the
    run lasts (has another node seen a hang?)."""

    def __init__(self, store, node: int, nodes: int, world: int, hosts_rank0: bool, host: str) -> None:
        self.store, self.node, self.nodes, self.world = store, node, nodes, world
        self.hosts_rank0, self.host = hosts_rank0, host
        self._checked = 0.0
        self._gone = False  # the store stopped answering: node 0's agent has ended
        self.reconnect: Callable[[], object] | None = (
            None  # a new connection to the same store, under our prefix
        )

    @classmethod
    def connect(cls, workers: list[dict], timeout: float = 10) -> JobExchange | None:
        """The exchange for this node's ``workers`` (their ``rank*.json``), or None on one node or when the
        store cannot be reached (each node then reports its own ranks, as before)."""
        first = workers[0]
        try:
            nodes, node = int(first.get("nodes", 1)), int(first.get("node", 0))
            address, port = first.get("store", ["", ""])
            if nodes < 2 or not address or not port:
                return None
            if not _listens(address, int(port), timeout):
                return None  # the run is over already (a short one): nothing to exchange, nothing printed
            from datetime import timedelta

            from torch.distributed import PrefixStore, TCPStore

            store = TCPStore(address, int(port), is_master=False, timeout=timedelta(seconds=timeout))
            store.check(["asked"])  # reachable now, or no exchange
        except Exception:  # noqa: BLE001 - no store, no exchange: this node still reports its own ranks
            return None
        prefix = f"torchdoctor/hang/{first.get('run_id', '')}/{first.get('restart', '0')}/"
        hosts_rank0 = any(w["rank"] == 0 for w in workers)
        world = int(first.get("world_size", 0))
        exchange = cls(PrefixStore(prefix, store), node, nodes, world, hosts_rank0, first.get("host", ""))
        exchange.reconnect = lambda: PrefixStore(
            prefix, TCPStore(address, int(port), is_master=False, timeout=timedelta(seconds=timeout))
        )
        return exchange

    def asked(self, running: Callable[[], bool], every: float = 1.0) -> bool:
        """Whether any node saw a hang (one store request, at most once every ``every`` seconds, while
        ``running()`` says one of this node's workers runs), until the store first fails: at the end of a run
        node 0's agent takes the store with it, and every request after that had torch print a warning with a
        C++ stack to stderr, on every node, once a second, until the node's own agent ended."""
        if self._gone or time.monotonic() - self._checked < every:
            return False
        self._checked = time.monotonic()
        if not running():
            return False
        try:
            return self.store.check(["asked"])
        except Exception:  # noqa: BLE001 - the store went with node 0's agent: the run is ending
            self._gone = True
            return False

    def report(
        self, stacks: list[RankStack], records: dict, directory: Path, timeout: float, stop_run, collect=20.0
    ) -> str:
        """Post this node's ranks; on the node hosting rank 0, wait (at most ``collect`` s) for every node's,
        stop the run and return the report for the whole job; elsewhere wait until it is out, stop this
        node's run and return a short report that says where the verdict is."""
        from torchdoctor.explain.flight_recorder.digest import digest, from_digest

        summary = {
            "node": self.node,
            "host": self.host,
            "directory": str(directory),
            "stacks": [{**stack_dict(s), "note": s.note, "evidence": s.evidence} for s in stacks],
            "records": [digest(r) for r in records.values()],
        }
        try:
            self._post(json.dumps(summary))
        except Exception as error:  # noqa: BLE001
            stop_run()
            return format_report(stacks, timeout, f"(the other nodes are unreachable: {error})", records)
        if not self.hosts_rank0:
            self._wait_for(
                ["reported"], collect + 10, "the node that hosts rank 0 to report for the whole job"
            )
            stop_run()
            return self._local_report(stacks, timeout, directory)
        summaries, missing = self._gather(collect)
        all_stacks, all_records, folders = [], {}, []
        unread: dict[int, list[str]] = {}  # rank -> why part of what its node sent did not read
        for node in summaries:
            for s in node.get("stacks") or []:
                try:
                    frames = [Frame(*f) for f in s["frames"]]
                    stack = RankStack(s["rank"], s["pid"], s["host"], frames, s.get("note", ""))
                except (KeyError, TypeError, ValueError) as error:
                    rank = s.get("rank", -1) if isinstance(s, dict) else -1
                    unread.setdefault(rank, []).append(
                        f"its stack from node {node.get('node')} did not read: {error!r}"
                    )
                    continue
                stack.evidence = list(s.get("evidence") or [])
                all_stacks.append(stack)
            for d in node.get("records") or []:
                try:
                    record = from_digest(d)
                except (KeyError, TypeError, ValueError) as error:
                    rank = d.get("rank", -1) if isinstance(d, dict) else -1
                    unread.setdefault(rank, []).append(f"its flight-recorder digest did not read: {error!r}")
                    continue
                all_records[record.rank] = record
            folders.append(f"{node.get('host', '?')}:{node.get('directory', '?')}")
        for stack in all_stacks:
            stack.evidence += unread.get(stack.rank, [])
        known = {s.rank for s in all_stacks}
        why = f"its node ({who(missing, 'node')}) did not answer within {collect:g}s"
        all_stacks += [RankStack(r, note=why) for r in range(self.world) if r not in known]
        try:
            self.store.set("reported", "1")
        except Exception:  # noqa: BLE001 - the others stop by themselves when the store goes
            pass
        stop_run()
        extra = f"Full stacks and flight-recorder dumps, per node: {', '.join(folders)}. The run was stopped."
        return format_report(all_stacks, timeout, extra, all_records, nodes=self.nodes)

    def _post(self, summary: str) -> None:
        """This node's summary into the store, and the hang noted there: on a new connection once more where the
        one in use fails (seen under CI's load: every node's post failed with "Broken pipe" while the store
        still ran, each node then reporting only its own ranks). Raises what the second try raised."""
        try:
            self.store.set(f"node/{self.node}", summary)
            self.store.add("asked", 1)
        except Exception:  # noqa: BLE001 - a connection broken since it was made: a new one, once
            if self.reconnect is None:
                raise
            self.store = self.reconnect()
            self.store.set(f"node/{self.node}", summary)
            self.store.add("asked", 1)

    def _gather(self, collect: float) -> tuple[list[dict], list[int]]:
        keys = [f"node/{n}" for n in range(self.nodes)]
        others = [n for n in range(self.nodes) if n != self.node]
        self._wait_for(
            keys,
            collect,
            f"the other node{'s' if len(others) > 1 else ''} ({who(others, 'node')}) to send their ranks",
        )
        summaries, missing = [], []
        for node, key in enumerate(keys):
            try:
                summary = json.loads(self.store.get(key)) if self.store.check([key]) else None
                summaries.append(summary if isinstance(summary, dict) else None)
            except Exception as error:  # noqa: BLE001 - a store error or a summary that is not JSON: named below
                sys.stderr.write(f"torchdoctor: hang: node {node}'s summary did not read: {error}\n")
                summaries.append(None)
            if summaries[-1] is None:
                missing.append(node)
        return [s for s in summaries if s], missing

    def _wait_for(self, keys: list[str], seconds: float, whom: str) -> None:
        """Until every key is there, at most ``seconds``: one blocking request a second (so Ctrl-C is
        not held up), saying on stderr whom it waits for when they are not there at once."""
        from datetime import timedelta

        deadline = time.monotonic() + seconds
        told = False
        while True:
            left = deadline - time.monotonic()
            try:
                self.store.wait(keys, timedelta(seconds=max(0.01, min(1.0, left))))
                return
            except Exception:  # noqa: BLE001 - not all there yet, or the store went with node 0's agent
                if left <= 0 or not self._store_alive():
                    return
            if not told:
                sys.stderr.write(f"torchdoctor: hang: waiting up to {seconds:g}s for {whom}\n")
                sys.stderr.flush()
                told = True

    def _store_alive(self) -> bool:
        try:
            self.store.check(["asked"])
            return True
        except Exception:  # noqa: BLE001
            return False

    def _local_report(self, stacks: list[RankStack], timeout: float, directory: Path) -> str:
        head = f"torchdoctor: hang: no progress for {timeout:g}s. This node's ranks ({self.host}, node {self.node}):"
        lines = [head, ""] + grouped(stacks)
        lines += [
            "",
            "The verdict for the whole job is in the report of the node that hosts rank 0.",
            f"Full stacks: {directory}/rank*.stack, flight-recorder dumps: {directory}/rank*.fr. "
            "The run was stopped.",
        ]
        return "\n".join(lines) + "\n"
