"""The files a worker leaves in the watchdog's folder, named in one place.

``torchdoctor launch --watchdog`` gives its workers a folder (``TORCHDOCTOR_WATCHDOG_DIR``); each worker
writes there, under ``rank<N>``: who it is (``.json``), when it last moved (``.beat``), where it is
(``.where``), its collectives' call sites (``.calls``) and, at a hang, each group's count of them
(``.counts``), its stack on request (``.stack``), its flight-recorder dump (``.fr``, or ``.fr-none`` with why
there is none) and that its script returned (``.done``).
``torchdoctor explain FOLDER`` reads the same names after the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# the folder `launch --watchdog` makes for these files (in the run's --log-dir where one is given), and the report
# it writes beside the run's logs there
WATCHDOG_PREFIX = "torchdoctor-watchdog-"
REPORT_FILE = "torchdoctor-report.txt"


def written_at(path: Path) -> float:
    """When ``path`` was last written; 0.0 where it is not there (older than anything)."""
    try:
        return path.stat().st_mtime
    except OSError:  # not written: the rank did not get that far, or the watchdog never fired
        return 0.0


_RANK_FILE = re.compile(r"^rank(\d+)\.(json|stack|fr|fr-none|calls|counts|where|done|beat|exit|fatal)$")


@dataclass(frozen=True)
class RankFiles:
    """The paths of one rank's files in the watchdog's folder."""

    directory: Path
    rank: int

    def _named(self, suffix: str) -> Path:
        return self.directory / f"rank{self.rank}.{suffix}"

    @property
    def base(self) -> Path:
        """``<folder>/rank<N>``, the prefix of them all."""
        return self.directory / f"rank{self.rank}"

    @property
    def meta(self) -> Path:
        return self._named("json")

    @property
    def beat(self) -> Path:
        return self._named("beat")

    @property
    def where(self) -> Path:
        return self._named("where")

    @property
    def calls(self) -> Path:
        return self._named("calls")

    @property
    def counts(self) -> Path:
        return self._named("counts")

    @property
    def stack(self) -> Path:
        return self._named("stack")

    @property
    def dump(self) -> Path:
        return self._named("fr")

    @property
    def no_dump(self) -> Path:
        return self._named("fr-none")

    @property
    def fatal(self) -> Path:
        """Where ``faulthandler`` wrote the stacks of a process a fatal signal ended (SIGABRT: gloo's abort on a
        size mismatch, a C++ exception nobody caught; SIGSEGV, SIGBUS, SIGFPE, SIGILL)."""
        return self._named("fatal")

    @property
    def exit(self) -> Path:
        """Where the process ended itself without a Python error (``os._exit``, a signal to itself)."""
        return self._named("exit")

    @property
    def done(self) -> Path:
        return self._named("done")


def ranks_with_files(directory: Path) -> list[int]:
    """Every rank that left at least one file of ours in ``directory``."""
    ranks = set()
    for path in directory.iterdir() if directory.is_dir() else []:
        match = _RANK_FILE.match(path.name)
        if match:
            ranks.add(int(match[1]))
    return sorted(ranks)


def is_watchdog_folder(directory: Path) -> bool:
    """Whether ``directory`` is a folder ``launch --watchdog`` left (its ``rank<N>.json`` or ``.stack``)."""
    return directory.is_dir() and (any(directory.glob("rank*.json")) or any(directory.glob("rank*.stack")))
