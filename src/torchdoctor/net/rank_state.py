"""What one rank of the smoke test saw: how far it got, who it saw join, and what went wrong.

Each rank writes its `RankState` as JSON after every stage (so a killed rank still leaves its last one); the
command that started the ranks reads them back through `RankState.from_dict`, the one place that reads them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# The order a rank goes through; a verdict names the last stage a rank reached.
STAGES = (
    "started",
    "store",
    "joined",
    "init",
    "all_reduce",
    "barrier",
    "memory",
    "done",
    "find_bad",
    "bench",
)
COLLECTIVE_STAGES = ("init", "all_reduce", "barrier")


@dataclass
class RankError:
    """The exception that stopped a rank (``type`` is ``"Timeout"`` when our watchdog ended a stage)."""

    type: str
    message: str
    stage: str
    where: str = ""  # the end of the traceback

    def facts(self) -> dict[str, str]:
        return {name: value for name, value in asdict(self).items() if value or name != "where"}


@dataclass
class Stuck:
    """A collective this rank waited in: the ranks that had not entered it and what each rank last did."""

    stage: str
    seconds: float | None = None
    not_entered: list[int] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # rank -> "failed at STAGE: why"
    stages: dict[str, str] = field(default_factory=dict)  # rank -> last stage, read from the store


@dataclass
class WrongSum:
    """A contribution that came back wrong from the all_reduce (``rank`` -1: the large payload)."""

    rank: int
    expected: float
    got: float | str


@dataclass
class RankState:
    """What one rank saw."""

    rank: int
    world_size: int
    local_rank: int
    host: str
    launcher: str
    pid: int = field(default_factory=os.getpid)
    stage: str = "started"
    done: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # stage -> how long it took here
    backend: str = ""
    device: str = ""
    master: str = ""
    interfaces: list[str] = field(
        default_factory=list
    )  # this host's network interfaces, for a wrong *_IFNAME
    joined: dict[str, str] = field(default_factory=dict)  # rank -> host, of the ranks seen joining
    pids: dict[str, int] = field(default_factory=dict)  # rank -> process id, to point py-spy at a stuck one
    missing: list[int] = field(default_factory=list)  # ranks that never joined
    # rank -> the address its backend offers ({"interface", "address", "variable", "interfaces"}), as it joined
    offers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # rank -> {"why" this host cannot reach its offer, "reachable": its other interfaces this host can reach}
    unreachable: dict[str, dict[str, Any]] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)  # rank -> which machine (boot id, network namespace)
    software: dict[str, dict[str, str]] = field(default_factory=dict)  # rank -> {"Python": ..., "torch": ...}
    # rank -> the settings every rank must share (worker.SHARED_SETTINGS), as it joined ("" where unset)
    settings: dict[str, dict[str, str]] = field(default_factory=dict)
    stuck: Stuck | None = None
    wrong: list[WrongSum] = field(default_factory=list)
    error: RankError | None = None
    versions: dict[str, Any] = field(default_factory=dict)
    bench: list[dict[str, Any]] = field(default_factory=list)
    bench_total: int = 0
    find_bad: dict[str, Any] = field(default_factory=dict)  # rank 0: the --find-bad measurements

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RankState:
        """The state a rank wrote (`to_dict`, through JSON); raises ValueError when it is not one."""
        try:
            fields = dict(data)
            stuck, error = fields.pop("stuck", None), fields.pop("error", None)
            wrong = fields.pop("wrong", None) or []
            return cls(
                **fields,
                stuck=Stuck(**stuck) if stuck else None,
                error=RankError(**error) if error else None,
                wrong=[WrongSum(**item) for item in wrong],
            )
        except (TypeError, AttributeError) as problem:
            raise ValueError(f"not a rank state: {problem}") from None


def save_state(state: RankState, folder: Path) -> None:
    """Write ``state`` to ``folder/rank-N.json`` whole (a reader never sees half of it)."""
    path = folder / f"rank-{state.rank}.json"
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(state.to_dict(), default=str))
    os.replace(tmp, path)


def read_states(folder: Path) -> dict[int, RankState]:
    """The ``rank-N.json`` states in ``folder``, by rank (a file caught mid-write is skipped)."""
    states = {}
    for path in folder.glob("rank-*.json"):
        try:
            state = RankState.from_dict(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
        states[state.rank] = state
    return states
