"""The jobs behind the explain tests' recorded consoles (tests/fixtures/recorded_runs/), run again on this
machine's torch: each module of tests/ that has ``RECORDED_RUNS`` (a recording's name -> a function that runs its
job in a folder and returns what it printed) is run, and explain's lead on the fresh console is set beside its
lead on the recording. The tests read the recordings; this says whether this torch still prints what they read
(run it after an upgrade of torch, transformers, accelerate or Lightning), and ``--write`` records anew.

    python benchmarks/recorded_runs.py [--only NAME ...] [--write]
"""

from __future__ import annotations

import argparse
import importlib
import io
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
RECORDINGS = TESTS / "fixtures" / "recorded_runs"


def jobs() -> dict[str, object]:
    """Every recording's name -> the function that runs its job, from the test modules that declare them."""
    sys.path.insert(0, str(TESTS))
    found: dict[str, object] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        if "RECORDED_RUNS" not in path.read_text(encoding="utf-8"):
            continue
        for name, run in importlib.import_module(path.stem).RECORDED_RUNS.items():
            if name in found:
                raise SystemExit(f"recorded_runs: {name} is declared twice (the second in {path.name})")
            found[name] = run
    return found


def lead(text: str) -> str:
    from torchdoctor.explain.diagnose import explain

    (found, *_) = explain(["-"], stdin=io.BytesIO(text.encode()))
    return f"{found.id} ({found.details.get('confidence', '-')})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these recordings")
    parser.add_argument("--write", action="store_true", help="record the consoles anew")
    args = parser.parse_args(argv)
    every = jobs()
    unknown = sorted(set(args.only or []) - set(every))
    if unknown:
        print(f"recorded_runs: no job records {', '.join(unknown)}; known: {', '.join(sorted(every))}")
        return 2
    differ = 0
    print("| recording | seconds | lead on the recording | lead on this run | same |")
    print("|---|---:|---|---|---|")
    for name in args.only or sorted(every):
        path = RECORDINGS / f"{name}.txt"
        with tempfile.TemporaryDirectory(prefix="torchdoctor-recorded-") as folder:
            started = time.monotonic()
            fresh = every[name](Path(folder))
            took = time.monotonic() - started
        before = lead(path.read_text(encoding="utf-8")) if path.exists() else "(none yet)"
        now = lead(fresh)
        differ += before != now
        print(f"| {name} | {took:.0f} | {before} | {now} | {'yes' if before == now else 'NO'} |")
        if args.write:
            path.write_text(fresh, encoding="utf-8")
    return 1 if differ and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
