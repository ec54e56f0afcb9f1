"""The live issue cases: every test of the modules named ``tests/test_*_uNN_*.py`` that starts processes, run
one after another, with a table of each one's outcome, wall time and CPU time (its own and its processes').

Each `_uNN_` module holds one user's issue found in session NN, as a real job on this machine's torch (two gloo
ranks under `torchdoctor launch --debug` or `--watchdog`, `torchdoctor net` over network-namespace hosts, a
DataLoader whose worker is killed, ...) and, beside it, in-process checks of the same case. A live 2-rank case
costs 3.5-13 s of CPU and 6-21 s of wall time (session 37, measured here), and the 42 live tests were 28% of the
process lane's time (session 36), so since session 37 the suite (`make test`) runs only the 20 named in
``ISSUE_CASES_IN_THE_SUITE`` in tests/conftest.py (those under 1.5 s of CPU, a real job of each command, the two
Ctrl-C cases) and every in-process test of those modules; the other 22 are left out of its collection
(``deselected``) and run here, with the 20 again. Nothing of them changed: ``pytest --issue-cases`` collects them
too, so one case runs as ``pytest --issue-cases tests/test_watchdog_u32_file_lock.py``; ``benchmarks/compat.py``
passes it, so every torch it tries runs them all.

    python benchmarks/issue_cases.py [--only SUBSTRING ...] [--json out.json]

Run it after a change to `launch`, the watchdog, debug mode, `net` or explain's readers of live consoles, and
before a release. It exits 1 if a case failed. The CPU column adds the pytest process's own and that of every
process the test started (see `_Processes`), the ranks forked by tests/rank_forkserver.py among them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
_OUT = "TORCHDOCTOR_ISSUE_CASES_OUT"  # where the plugin below writes a JSON line per test


class _Processes:
    """CPU seconds of every process this test run started, read from /proc every 0.05 s by a thread: each process
    whose environment holds the run's mark (tests/conftest.py gives it to every process the tests start, and it
    stays with those that leave our process tree, as torch's launcher's ranks do), its own time only, so nothing
    is counted twice; a process's last 0.05 s before it ends, and a process shorter than that, are not seen."""

    def __init__(self) -> None:
        self.mark = f"TORCHDOCTOR_TEST_RUN={os.environ.get('TORCHDOCTOR_TEST_RUN', '')}".encode()
        self.seen: dict[tuple[int, str], float] = {}  # (pid, start time) -> its CPU seconds when last read
        self.theirs: dict[int, bool] = {}  # pid -> whether it carries the mark (read once)
        self.own = 0.0  # this thread's CPU, left out of the pytest process's own
        self.lock = threading.Lock()
        self.pause = threading.Event()  # never set
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while True:
            started = time.thread_time()
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) == os.getpid():
                    continue
                pid = int(entry)
                try:
                    if pid not in self.theirs:
                        with open(f"/proc/{pid}/environ", "rb") as environ:
                            self.theirs[pid] = self.mark in environ.read().split(b"\0")
                    if not self.theirs[pid]:
                        continue
                    with open(f"/proc/{pid}/stat") as stat:
                        fields = stat.read().rsplit(")", 1)[1].split()
                except OSError:
                    self.theirs.pop(pid, None)
                    continue
                with self.lock:
                    self.seen[(pid, fields[19])] = (int(fields[11]) + int(fields[12])) / tick
            self.own += time.thread_time() - started
            self.pause.wait(
                0.05
            )  # not time.sleep, which a test may count (test_watchdog_gil_held patches it)

    def total(self) -> float:
        """The CPU seconds of the pytest process (less this thread's) and of every process seen so far."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with self.lock:
            return usage.ru_utime + usage.ru_stime - self.own + sum(self.seen.values())


_processes: _Processes | None = None


def _cpu() -> float:
    global _processes
    if _processes is None:
        _processes = _Processes()
    return _processes.total()


# -- the pytest plugin (``-p issue_cases``): each test's outcome, wall and CPU time, a JSON line each ----------
_started: dict[str, tuple[float, float]] = {}
_outcome: dict[str, str] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _started[item.nodeid] = (time.monotonic(), _cpu())
    yield
    wall_start, cpu_start = _started.pop(item.nodeid)
    path = os.environ.get(_OUT)
    if path:
        line = {
            "test": item.nodeid,
            "outcome": _outcome.pop(item.nodeid, "passed"),
            "wall": time.monotonic() - wall_start,
            "cpu": _cpu() - cpu_start,
        }
        with open(path, "a") as out:
            out.write(json.dumps(line) + "\n")


def pytest_runtest_logreport(report):
    if report.failed:
        _outcome[report.nodeid] = "failed"
    elif report.skipped:
        _outcome.setdefault(report.nodeid, "skipped")


# -- the sweep ---------------------------------------------------------------------------------------------------
def kept_in_the_suite() -> dict[str, set[str]]:
    sys.path.insert(0, str(TESTS))
    from conftest import ISSUE_CASES_IN_THE_SUITE

    return ISSUE_CASES_IN_THE_SUITE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", nargs="+", metavar="SUBSTRING", help="the modules whose name holds one of these"
    )
    parser.add_argument("--json", type=Path, help="also write the table's rows here")
    args = parser.parse_args(argv)
    modules = sorted(
        path
        for path in TESTS.glob("test_*_u[0-9]*_*.py")
        if not args.only or any(part in path.stem for part in args.only)
    )
    if not modules:
        print(f"issue_cases: no module of tests/ named test_*_uNN_* holds {args.only}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="issue-cases-") as folder:
        out = Path(folder) / "rows.jsonl"
        env = dict(os.environ, **{_OUT: str(out)})
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT / "src"), str(ROOT / "benchmarks"), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        started = time.monotonic()
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "issue_cases"]
        command += ["--issue-cases", "-m", "processes", *(str(path.relative_to(ROOT)) for path in modules)]
        pytest_status = subprocess.run(command, cwd=ROOT, env=env).returncode
        wall = time.monotonic() - started
        rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    kept = kept_in_the_suite()
    print(f"\n{'case':<96} {'in make test':>12} {'outcome':>8} {'wall s':>7} {'CPU s':>7}")
    for row in rows:
        module = Path(row["test"].split("::")[0]).stem
        name = row["test"].split("::")[-1].split("[")[0]
        row["in_make_test"] = name in kept.get(module, ())
        case = f"{module}::{name}"
        case = case if len(case) <= 96 else case[:93] + "..."
        print(
            f"{case:<96} {'yes' if row['in_make_test'] else 'no':>12} {row['outcome']:>8} "
            f"{row['wall']:>7.1f} {row['cpu']:>7.1f}"
        )
    failed = sum(row["outcome"] == "failed" for row in rows)
    print(
        f"{len(rows)} live issue cases of {len(modules)} modules: {sum(row['outcome'] == 'passed' for row in rows)} passed, {failed} failed; "
        f"{sum(row['cpu'] for row in rows):.0f} s of CPU, {wall:.0f} s of wall time in all "
        f"({sum(row['in_make_test'] for row in rows)} of them in make test: "
        f"{sum(row['cpu'] for row in rows if row['in_make_test']):.0f} s of CPU)"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if failed or pytest_status not in (0, 5) else 0


if __name__ == "__main__":
    sys.exit(main())
