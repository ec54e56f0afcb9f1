"""Run torchdoctor's tests under another torch and another Python, each in a cached venv of its own.

CI keeps its one pin (constraints.txt); this is how the table of versions tried (docs/compat.md) is made:

    python benchmarks/compat.py --python 3.10 --torch 2.13.0
    python benchmarks/compat.py --python 3.11 --torch 2.4.1 --lane processes
    python benchmarks/compat.py --python 3.12 --torch 2.15.0 --lane all

A venv is built once under ``~/.cache/torchdoctor-compat/py<PY>-torch<TORCH>`` (``--fresh`` rebuilds it): the
Python from pyenv (``~/.pyenv/versions/<PY>*``) or ``python<PY>`` on PATH, ``torch==<TORCH>`` from PyPI (older
releases come as CUDA builds of several GB; they run on a machine without a GPU), then torchdoctor with its test
extras under constraints.txt less its torch pin and less the peers a given torch is too old for.

Lanes: ``processes`` is a set of real multi-process cases: debug mode on raw and wrapped collectives, the hang
watchdog, ``net`` and ``explain`` on a real run; ``rest`` is the rest of ``tests/`` less the two that build network
namespaces (their names are the machine's, shared with whoever else runs them; CI runs them on its pin); ``all`` is
both. It prints one line per lane with pytest's counts, and exits 1 if a lane failed.

The tests run against the checkout this script is in (its ``src/`` first on ``PYTHONPATH``), whatever checkout the
venv's editable install points at: one venv serves every worktree.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("TORCHDOCTOR_COMPAT_CACHE", Path.home() / ".cache" / "torchdoctor-compat"))
PROCESS_CASES = [
    "tests/test_distributed_debug.py",
    "tests/test_distributed_operations.py",
    "tests/test_watchdog.py",
    "tests/test_net_smoke.py",
    "tests/test_explain.py",
]
NAMESPACE_TESTS = ["tests/test_net_multinode.py", "tests/test_watchdog_multinode.py"]


def find_python(version: str) -> str:
    """The interpreter for ``version`` ("3.10"): pyenv's, else ``python3.10`` on PATH."""
    found = sorted(glob.glob(str(Path.home() / ".pyenv" / "versions" / f"{version}.*" / "bin" / "python3")))
    if found:
        return found[-1]
    on_path = shutil.which(f"python{version}")
    if on_path:
        return on_path
    sys.exit(
        f"compat: no Python {version} here (looked in ~/.pyenv/versions and for python{version} on PATH)"
    )


# Peers whose pinned release turns itself off under an older torch, and the newest release that does not:
# transformers 5 needs torch >= 2.6 ("Disabling PyTorch because PyTorch >= 2.6 is required"); 4.57 takes 2.1.
OLDER_PEERS = (((2, 6), "transformers", "transformers==4.57.3"),)


def constraints_without(torch_version: str, folder: Path) -> Path:
    """constraints.txt with ``torch==torch_version`` for its torch pin, so that no peer upgrades it, and the
    peers this torch is too old for (`OLDER_PEERS`) pinned to a release that still runs on it."""
    release = tuple(int(part) for part in re.findall(r"\d+", torch_version)[:2])
    older = {name: pin for below, name, pin in OLDER_PEERS if release < below}
    lines = [
        line
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if not re.match(r"\s*torch\s*[=<>!~]", line)
        and not any(re.match(rf"\s*{name}\s*[=<>!~]", line) for name in older)
    ] + [f"torch=={torch_version}", *older.values()]
    path = folder / "constraints-compat.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def build(python: str, torch_version: str, venv: Path, fresh: bool) -> Path:
    """The venv's interpreter, built (once) with torch==torch_version and torchdoctor[test]."""
    marker = venv / ".compat-installed"
    if fresh and venv.exists():
        shutil.rmtree(venv)
    if marker.exists():
        return venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-cache-dir"]
    # This machine's pip config caps torch at the releases on its disk; a compat venv asks PyPI for any release.
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    subprocess.run([*pip, "--upgrade", "pip"], check=True, env=env)
    subprocess.run([*pip, f"torch=={torch_version}"], check=True, env=env)
    constraints = constraints_without(torch_version, venv)
    if subprocess.run([*pip, "-c", str(constraints), "-e", f"{ROOT}[test]"], env=env).returncode != 0:
        # Some pins have no release for this Python (numpy 2.4 needs 3.11+): let pip choose the peers, torch kept.
        print(
            f"compat: constraints.txt does not install on Python {python}; peers chosen by pip",
            file=sys.stderr,
        )
        (venv / "torch-only.txt").write_text(f"torch=={torch_version}\n")
        subprocess.run([*pip, "-c", str(venv / "torch-only.txt"), "-e", f"{ROOT}[test]"], check=True, env=env)
    marker.write_text(f"torch=={torch_version}\n")
    return venv / "bin" / "python"


def run_lane(python: Path, lane: str, workers: int, extra: list[str]) -> tuple[bool, str, float]:
    """(passed, pytest's closing line, seconds) for one lane."""
    # --issue-cases: every other torch tries the live issue cases the suite leaves to benchmarks/issue_cases.py too
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--issue-cases"]
    command += ["-n", str(workers), *extra]
    if any(arg.startswith("tests/") for arg in extra):
        pass  # the tests named after --: the lane gives only its name
    elif lane == "processes":
        command += PROCESS_CASES
    else:
        command += [f"--ignore={path}" for path in PROCESS_CASES + NAMESPACE_TESTS] + ["tests"]
    # Nothing of the dev venv may leak in, and this checkout's source wins over the venv's editable install.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(ROOT / "src")
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - started
    summary = next(
        (
            line.strip("= ")
            for line in reversed(done.stdout.splitlines())
            if re.search(r"\d+ (passed|failed)", line)
        ),
        done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-300:],
    )
    log = python.parent.parent / f"last-{lane}.log"
    log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        print(done.stdout[-6000:], file=sys.stderr)
        print(f"compat: pytest's whole output is in {log}", file=sys.stderr)
    return done.returncode == 0, summary, seconds


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=f"{sys.version_info.major}.{sys.version_info.minor}")
    parser.add_argument("--torch", required=True, help="a torch release on PyPI, e.g. 2.4.1")
    parser.add_argument("--lane", choices=("processes", "rest", "all"), default="all")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --), e.g. -- -k debug")
    parser.add_argument("--fresh", action="store_true", help="rebuild the cached venv")
    parser.add_argument("--build-only", action="store_true", help="build the venv, run nothing")
    args = parser.parse_args()
    python = find_python(args.python)
    venv = CACHE / f"py{args.python}-torch{args.torch}"
    interpreter = build(python, args.torch, venv, args.fresh)
    versions = subprocess.run(
        [str(interpreter), "-c", "import sys, torch; print(sys.version.split()[0], torch.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if args.build_only:
        print(f"Python {versions[0]}  torch {versions[1]}  built in {venv}")
        return 0
    failed = False
    for lane in ("processes", "rest") if args.lane == "all" else (args.lane,):
        passed, summary, seconds = run_lane(interpreter, lane, args.workers, args.pytest_args)
        failed |= not passed
        print(
            f"Python {versions[0]}  torch {versions[1]}  {lane:<9}  {'ok  ' if passed else 'FAIL'}  {summary}  ({seconds:.0f} s)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
