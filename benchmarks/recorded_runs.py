"""The jobs behind the explain tests' recorded consoles (tests/fixtures/recorded_runs/), run again on this
machine's torch: each module of tests/ that has ``RECORDED_RUNS`` (a recording's name -> a function that runs its
job in a folder and returns what it printed, or the folder of logs it wrote there) is run, and explain's lead on the fresh console is set beside its
lead on the recording. The tests read the recordings; this says whether this torch still prints what they read
(run it after an upgrade of torch, transformers, accelerate or Lightning), and ``--write`` records anew.

    python benchmarks/recorded_runs.py [--only NAME ...] [--write]
"""

from __future__ import annotations

import argparse
import importlib
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(
    0, str(TESTS)
)  # the test modules that declare the jobs, and the tests' reader of the recordings
from recorded import RECORDINGS, recorded, recorded_folder  # noqa: E402


def jobs() -> dict[str, object]:
    """Every recording's name -> the function that runs its job, from the test modules that declare them."""
    found: dict[str, object] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        if "RECORDED_RUNS" not in path.read_text(encoding="utf-8"):
            continue
        for name, run in importlib.import_module(path.stem).RECORDED_RUNS.items():
            if name in found:
                raise SystemExit(f"recorded_runs: {name} is declared twice (the second in {path.name})")
            found[name] = run
    return found


def lead(recording: str | Path) -> str:
    """explain's lead on a console (a text) or on a folder of logs (a path), and how sure it is."""
    from torchdoctor.explain.diagnose import explain

    if isinstance(recording, Path):
        (found, *_) = explain([str(recording)])
    else:
        (found, *_) = explain(["-"], stdin=io.BytesIO(recording.encode()))
    return f"{found.id} ({found.details.get('confidence', '-')})"


def kept(name: str) -> str | Path | None:
    """The recording ``name``: a console (NAME.txt) or a folder of logs (NAME/), None where there is none yet."""
    if (RECORDINGS / f"{name}.txt").exists():
        return recorded(name)
    return recorded_folder(name) if recorded_folder(name).is_dir() else None


def write(name: str, fresh: str | Path) -> None:
    """Record ``fresh`` as ``name``: a console as NAME.txt, a folder of logs copied whole as NAME/."""
    if isinstance(fresh, Path):
        shutil.rmtree(RECORDINGS / name, ignore_errors=True)
        shutil.copytree(fresh, RECORDINGS / name)
    else:
        (RECORDINGS / f"{name}.txt").write_text(fresh, encoding="utf-8")


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
        recording = kept(name)
        before = lead(recording) if recording is not None else "(none yet)"
        with tempfile.TemporaryDirectory(prefix="torchdoctor-recorded-") as folder:
            started = time.monotonic()
            fresh = every[name](Path(folder))  # a console, or a folder of logs inside ``folder``
            took = time.monotonic() - started
            now = lead(fresh)
            if args.write:
                write(name, fresh)
        differ += before != now
        print(f"| {name} | {took:.0f} | {before} | {now} | {'yes' if before == now else 'NO'} |")
    return 1 if differ and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
