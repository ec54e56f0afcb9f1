"""Consoles of real jobs, recorded once, that the explain tests read: the job that printed each is kept beside
its test (a module's ``RECORDED_RUNS``: the recording's name -> a function that runs the job in a folder and
returns what it printed, stdout then stderr, or the folder of per-rank logs it wrote there), and ``benchmarks/recorded_runs.py`` runs them all again, to check
that this torch still prints what the tests read or to record them anew. A job under torchrun costs 10-25 s of
the suite's time; reading its console costs milliseconds, and the suite keeps live the jobs of what torchdoctor
itself runs (launch, the watchdog, debug mode). Not a test module; ``from recorded import recorded``."""

from __future__ import annotations

from pathlib import Path

RECORDINGS = Path(__file__).parent / "fixtures" / "recorded_runs"


def recorded(name: str) -> str:
    """The console recorded as ``fixtures/recorded_runs/NAME.txt``, as the job printed it."""
    return (RECORDINGS / f"{name}.txt").read_text(encoding="utf-8")


def recorded_folder(name: str) -> Path:
    """The folder of logs recorded as ``fixtures/recorded_runs/NAME/`` (a torchrun ``--log-dir``, a watchdog's
    folder), as the job wrote it."""
    return RECORDINGS / name
