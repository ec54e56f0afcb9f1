"""Hang watchdog: when a run stops making progress, say where every rank is waiting, then end it.

**Progress** means any of:

- the Python stack of a rank's main thread changed since the last look (a thread samples it every second,
  reading only; a training loop moves all the time, a rank waiting in a collective or a sleep does not);
- a rank called `heartbeat()` (for a step that sits on one line, one long C call, for minutes);
- under ``torchdoctor launch``, a worker wrote anything to stdout or stderr.

Two ways to use it:

- ``torchdoctor launch --watchdog 300 train.py``: the run is stuck when *no* worker made progress for 300 s
  (the clock starts when the first worker starts the script). The launcher then asks every worker for its stack
  with a signal (``faulthandler``, so even a rank blocked in C code answers), prints one report and stops the
  run with exit status 1. Works whatever the script does.
- ``torchdoctor.watch_for_hangs(300)`` in the script, under any launcher: a thread in each rank watches that
  rank; the first rank to make no progress for 300 s asks the others for their stacks through the process
  group's store (not through a collective, which would hang too), prints one report, and every rank exits.

Pick a timeout of minutes, longer than the longest step: a rank that really spends the whole timeout on one
line (a checkpoint save, one huge kernel) without output or `heartbeat()` counts as stuck.
"""

from __future__ import annotations

import collections
import faulthandler
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from torchdoctor.distributed.ranks import current, from_environment
from torchdoctor.hang import calls
from torchdoctor.hang.failure import failure_verdict, keep_exit_codes
from torchdoctor.hang.files import RankFiles
from torchdoctor.hang.job import JobExchange
from torchdoctor.hang.report import (  # noqa: F401 - the names the watchdog's users import
    COLLECTIVES,
    Frame,
    RankStack,
    Verdict,
    collective_of,
    describe,
    diagnosis,
    format_report,
    frames_of,
    grouped,
    is_user_code,
    parse_faulthandler,
    stack_dict,
    verdict,
)
from torchdoctor.process_state import is_running, started_at, stat_of, wait_channel

# Set by `torchdoctor launch --watchdog` for its workers.
DIR_VARIABLE = "TORCHDOCTOR_WATCHDOG_DIR"
# The launcher creates this file in its folder to ask every worker for its flight-recorder dump.
FLIGHT_RECORDER_REQUEST = "flight-recorder.request"
# torch's names for the recorder's ring buffer size, new and old; a user's own setting is left alone.
FLIGHT_RECORDER_VARIABLES = ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
FLIGHT_RECORDER_ENTRIES = 2000
SECONDS_VARIABLE = "TORCHDOCTOR_WATCHDOG_SECONDS"
# The launcher sends it to a stuck worker and faulthandler writes the stack. Not SIGUSR1/SIGUSR2: Lightning
# and SLURM set-ups use those to requeue a job. A real-time signal nobody else uses, where there are some.
FRAMES_KEPT = 12  # frames of a worker's error kept in rank<N>.done
DUMP_SIGNAL = signal.SIGRTMIN + 5 if hasattr(signal, "SIGRTMIN") else signal.SIGUSR2

# ---------------------------------------------------------------------------------------------------------
# Progress, in the worker

_beat = [time.monotonic()]  # when this process last called heartbeat()


def heartbeat() -> None:
    """Tell the watchdog this rank is making progress: call it once per step where one step may sit on a
    single line for longer than the watchdog's timeout (a long C call, a slow ``next(loader)``)."""
    _beat[0] = time.monotonic()


IMPORT_GRACE = 120.0


def _importing(frame) -> bool:
    """Whether the innermost frame is the import machinery's (a module being loaded)."""
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib")


def _waits_for_loader_frame(frame) -> bool:
    """Whether the main thread (its innermost frames) waits for a DataLoader worker's batch."""
    for _ in range(6):
        if frame is None:
            return False
        if frame.f_code.co_name in ("_try_get_data", "_get_data") and frame.f_code.co_filename.endswith(
            "dataloader.py"
        ):
            return True
        frame = frame.f_back
    return False


def _children_cpu(pid: int) -> int:
    """CPU ticks (user + system) the child processes of ``pid`` have used so far; 0 where there is no /proc."""
    total = 0
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):  # gone meanwhile: it works no more
            continue
    return total


def _stack_signature(frame) -> tuple:
    signature = []
    while frame is not None:
        signature.append((id(frame.f_code), frame.f_lineno))
        frame = frame.f_back
    return tuple(signature)


class ProgressSampler:
    """A daemon thread that looks at the main thread's stack every ``interval`` seconds and calls
    ``on_progress()`` when it moved or `heartbeat()` was called, and ``on_idle(idle_seconds)`` when not;
    ``on_tick()`` first, every time."""

    def __init__(
        self,
        interval: float,
        on_progress: Callable[[], None] = lambda: None,
        on_idle: Callable[[float], None] = lambda idle: None,
        on_tick: Callable[[], None] = lambda: None,
    ) -> None:
        self.interval = interval
        self.on_progress, self.on_idle, self.on_tick = on_progress, on_idle, on_tick
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        self._children_busy = 0  # CPU ticks of this process's children (DataLoader workers) last seen
        self._thread = threading.Thread(target=self._run, name="torchdoctor-watchdog", daemon=True)

    def start(self) -> ProgressSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        last_signature, last_beat, last_move = None, _beat[0], time.monotonic()
        while not self._stop.wait(self.interval):
            self.on_tick()
            frame = sys._current_frames().get(self._main)
            signature = _stack_signature(frame)
            importing = _importing(frame)
            loading = signature == last_signature and _waits_for_loader_frame(frame)
            del frame
            if loading:  # the main thread waits for a DataLoader worker: progress while the worker works
                busy = _children_cpu(os.getpid())
                if busy > self._children_busy:
                    self._children_busy = busy
                    last_move = time.monotonic()
                    self.on_progress()
                    continue
            # loading a large extension (``import torch``) sits on one line for seconds on a busy machine:
            # that is progress, for at most IMPORT_GRACE seconds (an import that never ends is a hang too)
            if importing and time.monotonic() - last_move < IMPORT_GRACE:
                last_signature = signature
                self.on_progress()
                continue
            if signature != last_signature or _beat[0] != last_beat:
                last_signature, last_beat, last_move = signature, _beat[0], time.monotonic()
                self.on_progress()
            else:
                self.on_idle(time.monotonic() - last_move)


# ---------------------------------------------------------------------------------------------------------
# Launcher mode: the worker side (called by torchdoctor.launch.bootstrap)

_worker: dict = {}  # what prepare_worker set up: the open stack file (faulthandler writes to it), ...


def prepare_worker(script: str, environ=None) -> None:
    """In a worker started by ``torchdoctor launch --watchdog``: let the launcher see progress and ask for
    the stack. Does nothing when the launcher did not ask for a watchdog."""
    environ = os.environ if environ is None else environ
    directory = environ.get(DIR_VARIABLE)
    if not directory:
        return
    info = from_environment(environ)
    base = Path(directory) / f"rank{info.rank}"
    stack_file = open(f"{base}.stack", "w")  # noqa: SIM115 - faulthandler writes to it until the end
    faulthandler.register(DUMP_SIGNAL, file=stack_file, all_threads=True, chain=False)
    beat_file = Path(f"{base}.beat")
    beat_file.touch()
    meta = {
        "rank": info.rank,
        "pid": os.getpid(),
        "started": started_at(),  # with the pid, names this process: the pid may be reused
        "host": info.host,
        "main_thread": threading.main_thread().ident,
        "script": os.path.realpath(script),
        "world_size": info.world_size,
        "node": environ.get("GROUP_RANK", "0"),
        "nodes": environ.get("GROUP_WORLD_SIZE", "1"),
        "local_world_size": environ.get("LOCAL_WORLD_SIZE", "1"),
        "store": [environ.get("MASTER_ADDR", ""), environ.get("MASTER_PORT", "")],
        "run_id": environ.get("TORCHELASTIC_RUN_ID", ""),
        "restart": environ.get("TORCHELASTIC_RESTART_COUNT", "0"),
    }
    Path(f"{base}.json.tmp").write_text(json.dumps(meta))
    os.replace(f"{base}.json.tmp", f"{base}.json")  # the launcher never reads half a file
    if not any(environ.get(name) for name in FLIGHT_RECORDER_VARIABLES):
        # torch reads it when the first process group is made, after this: the script's collectives are
        # recorded (a few microseconds each) so a hang report can say which one each rank entered
        environ[FLIGHT_RECORDER_VARIABLES[0]] = str(FLIGHT_RECORDER_ENTRIES)
    interval = min(1.0, float(environ.get(SECONDS_VARIABLE, "5")) / 5)
    request, answered = Path(directory) / FLIGHT_RECORDER_REQUEST, []
    files = RankFiles(Path(directory), info.rank)

    try:
        calls.open_ring(files.calls)
        calls.record_calls_on_import()
    except OSError:  # no room for the file: the flight recorder and the stacks still speak
        pass
    _note_exits(files.exit)

    def answer() -> None:
        try:
            asked = request.stat().st_mtime_ns
        except OSError:  # not asked (yet)
            return
        if (
            asked not in answered
        ):  # each request once (a request while the ranks imported is followed by another)
            answered.append(asked)
            write_flight_record(base)

    def moved() -> None:
        _touch(beat_file)
        _note_where(files.where)

    sampler = ProgressSampler(interval, on_progress=moved, on_tick=answer).start()
    _worker.update(stack_file=stack_file, sampler=sampler, done=Path(f"{base}.done"))


def _note_exits(path: Path) -> None:
    """Note where this process ends itself without a Python error: ``os._exit()`` (wrapped) and a signal it
    sends itself (an audit hook on ``os.kill``), so a failed job's verdict can name the line. Only this
    process: a DataLoader worker forked from it ends with ``os._exit`` too."""
    me, real_exit = os.getpid(), os._exit

    def note(how: str) -> None:
        if os.getpid() != me:
            return
        frames = _main_frames() if threading.current_thread() is threading.main_thread() else []
        frames = frames or frames_of(sys._getframe(2))
        try:
            path.write_text(
                json.dumps({"how": how, "frames": [[f.file, f.line, f.function] for f in frames]})
            )
        except OSError:  # the launcher removed its folder: the run is over anyway
            pass

    def exit_noted(code: int) -> None:
        note(f"os._exit({code})")
        real_exit(code)

    def on_audit(event: str, args: tuple) -> None:
        if event == "os.kill" and args and args[0] in (me, 0) and args[1] not in (0, DUMP_SIGNAL):
            name = signal.Signals(args[1]).name if args[1] in signal.Signals._value2member_map_ else args[1]
            note(f"os.kill(own pid, {name})")

    os._exit = exit_noted
    sys.addaudithook(on_audit)


def _note_where(path: Path) -> None:
    """Write where the main thread is now (its frames, outermost first) to ``path``: what is left of a rank
    that is killed or calls ``os._exit`` (at most one sampling interval old)."""
    frames = _main_frames()
    try:
        Path(f"{path}.tmp").write_text(json.dumps([[f.file, f.line, f.function] for f in frames]))
        os.replace(f"{path}.tmp", path)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def write_flight_record(base: Path | str, stack_wait: float = 2.0) -> None:
    """Write this process's flight-recorder dump to ``<base>.fr`` (whole, or not at all), or ``<base>.fr-none``
    when it has none (torch.distributed never loaded, or the dump failed: the reason is in the file)."""
    data, why = own_flight_record(stack_wait)
    try:
        if data:
            Path(f"{base}.fr.tmp").write_bytes(data)
            os.replace(f"{base}.fr.tmp", f"{base}.fr")
        else:
            Path(f"{base}.fr-none").write_text(why)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def has_flight_recorder(c10d) -> bool:
    """Whether this torch (its ``torch._C._distributed_c10d``) can dump its flight recorder for every backend:
    torch 2.4 has only ``_dump_nccl_trace``, and no recorder for gloo."""
    return hasattr(c10d, "_dump_fr_trace")


def own_flight_record(stack_wait: float = 2.0) -> tuple[bytes, str]:
    """This process's flight-recorder dump (torch's pickle), or ``b""`` and why there is none."""
    c10d = sys.modules.get("torch._C._distributed_c10d")
    if c10d is None:
        return b"", "torch.distributed was never used"
    if not has_flight_recorder(c10d):
        import torch

        return b"", f"torch {torch.__version__} has no flight recorder to dump (no _dump_fr_trace)"
    # With a gloo collective in flight, writing out the recorded Python stacks can wait for that
    # collective to end (torch 2.13), which at a hang is never: give it two seconds, then dump without.
    whole: list = []
    try:
        asking = threading.Thread(target=lambda: whole.append(c10d._dump_fr_trace()), daemon=True)
        asking.start()
        asking.join(stack_wait)
        return (whole[0] if whole else c10d._dump_fr_trace(includeStackTraces=False)), ""
    except Exception as error:  # noqa: BLE001 - an old torch, a backend without a recorder: the stacks still speak
        return b"", f"{type(error).__name__}: {error}"


def _own_digest(rank: int) -> dict:
    """This rank's newest flight-recorder entries for a library-mode report (``{"record": digest}``), when the
    user turned the recorder on (``TORCH_FR_BUFFER_SIZE``); else ``{"record": None}``, with why there is
    none (``"no_record"``) when the user turned it on and this torch cannot dump it."""
    if not any(os.environ.get(name, "0") not in ("", "0") for name in FLIGHT_RECORDER_VARIABLES):
        return {"record": None}
    data, why = own_flight_record()
    if not data:
        return {"record": None, "no_record": why}
    from torchdoctor.explain import flight_recorder, safe_pickle

    try:
        return {"record": flight_recorder.digest(flight_recorder.parse(safe_pickle.loads(data).data, rank))}
    except (ValueError, TypeError) as error:
        return {"record": None, "no_record": f"its dump did not read: {error}"}


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def worker_finished(error: BaseException | None = None) -> None:
    """The script returned (or raised ``error``): tell the launcher (with the error, where and when, so that
    a failed job's verdict can tell the rank that failed first from the ones that failed because of it), and
    from now on ignore the stack signal, since faulthandler lets go of it while the interpreter shuts down
    and the signal would then kill the worker."""
    if not _worker:
        return
    _worker["sampler"].stop()
    faulthandler.unregister(DUMP_SIGNAL)
    signal.signal(DUMP_SIGNAL, signal.SIG_IGN)
    said = {}
    if error is not None:
        frames = [Frame(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(error.__traceback__)]
        message = str(error).strip().splitlines()
        said = {
            "error": f"{type(error).__name__}: {message[0] if message else ''}"[:500],
            "frames": [[f.file, f.line, f.function] for f in frames[-FRAMES_KEPT:]],
            "time": time.time(),
        }
    try:
        _worker["done"].write_text(json.dumps(said) if said else "")
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass
    _worker["stack_file"].close()
    _worker.clear()


# ---------------------------------------------------------------------------------------------------------
# Launcher mode: the launcher side


# /proc/PID/stat's state letters, for a rank that does not answer: what its silence means
_STATES = {
    "T": "its process is stopped (SIGSTOP or Ctrl-Z, a debugger, a scheduler's suspend): it runs nothing "
    "until `kill -CONT {pid}`",
    "t": "its process is stopped by a debugger (ptrace): it runs nothing until the debugger lets go",
    "D": "its process waits inside the kernel, uninterruptibly (disk, network filesystem or driver I/O; "
    "or swapping){wchan}",
    "Z": "its process has exited (a zombie its parent has not collected)",
    "R": "its process is running but did not answer: busy in a C call that blocks signals, or starved of "
    "CPU (swapping, an oversubscribed node)",
    "S": "its process sleeps in a C call{wchan} and did not answer the signal",
}


def silence(pid: int) -> str:
    """What it means that process ``pid`` gave no stack: ``"its process is stopped (...)"``."""
    stat = stat_of(pid)
    if stat is None:
        return "the process had already exited"
    letter, channel = stat.state, wait_channel(pid)
    said = _STATES.get(letter, f"its process state is {letter!r}")
    return said.format(pid=pid, wchan=f" (in {channel})" if channel else "")


def workers_in(directory: Path) -> list[dict]:
    workers = []
    for path in sorted(directory.glob("rank*.json")):
        try:
            workers.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return workers


def stuck_for(directory: Path, last_output: float = 0.0, now: float | None = None) -> float:
    """Seconds since any worker last made progress (``last_output``: when a worker last wrote output, as
    ``time.time()``); 0 while no worker has started the script yet (see ``supervise``'s ``start_timeout``)."""
    now = time.time() if now is None else now
    latest = None
    running = [
        w
        for w in workers_in(directory)
        if not RankFiles(directory, w["rank"]).done.exists() and is_running(w["pid"], w.get("started"))
    ]
    if not running:  # the scripts have all returned or died: a slow exit, or a failure, is not a hang
        return 0.0
    for worker in running:
        try:
            beat = (directory / f"rank{worker['rank']}.beat").stat().st_mtime
        except OSError:
            continue
        latest = beat if latest is None else max(latest, beat)
    if latest is None:
        return 0.0
    return now - max(latest, last_output)


def collect_stacks(directory: Path, wait: float = 5.0) -> list[RankStack]:
    """Signal every live worker to write its stack, wait (at most ``wait`` seconds) and read them."""
    workers = workers_in(directory)
    asked = []
    stacks = []
    try:
        (directory / FLIGHT_RECORDER_REQUEST).touch()  # each worker's sampler thread answers within a second
    except OSError:
        pass
    start_at: dict[int, int] = {}  # where each stack file ends before this request: a second one appends
    for worker in workers:
        stack = RankStack(worker["rank"], worker["pid"], worker.get("host", ""))
        stacks.append(stack)
        try:
            start_at[stack.rank] = (directory / f"rank{worker['rank']}.stack").stat().st_size
        except OSError:
            start_at[stack.rank] = 0
        if (directory / f"rank{worker['rank']}.done").exists():
            stack.note = "its script had already returned"
            continue
        if not is_running(worker["pid"], worker.get("started")):
            stack.note = "the process had already exited"
            continue
        try:
            os.kill(worker["pid"], DUMP_SIGNAL)
            asked.append((worker, stack))
        except OSError as error:
            stack.note = f"cannot signal pid {worker['pid']}: {error.strerror}"
    deadline = time.monotonic() + wait
    pending = list(asked)
    sizes: dict[int, int] = {}
    recording = [w["rank"] for w, _ in asked]
    while (pending or recording) and time.monotonic() < deadline:
        time.sleep(0.1)
        recording = [r for r in recording if not _answered(directory / f"rank{r}")]
        for worker, stack in list(pending):
            path = directory / f"rank{worker['rank']}.stack"
            size = path.stat().st_size if path.exists() else 0
            if size > start_at[stack.rank] and sizes.get(stack.rank) == size:  # written, no longer growing
                try:
                    with open(path, "rb") as dump:
                        dump.seek(start_at[stack.rank])
                        threads = parse_faulthandler(dump.read().decode(errors="replace"))
                except OSError as error:
                    stack.note = f"its stack file {path} could not be read: {error.strerror or error}"
                    pending.remove((worker, stack))
                    continue
                # faulthandler lists the oldest thread, the main one, last
                stack.frames = threads.get(worker.get("main_thread")) or [[], *threads.values()][-1]
                pending.remove((worker, stack))
            sizes[stack.rank] = size
    for worker, stack in pending:
        stack.note = f"did not answer within {wait:g}s: {silence(worker['pid'])}"
        stack.last_seen = _last_seen(directory, stack.rank)
    for stack in stacks:
        if not stack.frames and not stack.last_seen:
            stack.last_seen = _last_seen(directory, stack.rank)
        elif stack.pid and waits_for_loader(stack.frames):
            stack.helpers = _loader_workers(directory / f"rank{stack.rank}.stack", stack.pid)
    return stacks


def waits_for_loader(frames: list[Frame]) -> bool:
    """Whether the innermost frames wait for a DataLoader worker's batch."""
    return any(
        f.file.replace(os.sep, "/").endswith("torch/utils/data/dataloader.py")
        and f.function in ("_try_get_data", "_get_data")
        for f in frames[-6:]
    )


def _loader_workers(stack_file: Path, pid: int, wait: float = 3.0) -> list[tuple[int, list[Frame]]]:
    """The stacks of ``pid``'s child processes (its DataLoader workers, forked with faulthandler's handler
    and the open stack file): each is asked in turn, and its dump read from the end of the file."""
    found = []
    for child in _children(pid):
        try:
            before = stack_file.stat().st_size
            os.kill(child, DUMP_SIGNAL)
        except OSError:  # gone meanwhile, or the file went with the folder
            continue
        deadline, size = time.monotonic() + wait, -1
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = stack_file.stat().st_size if stack_file.exists() else 0
            if now > before and now == size:
                break
            size = now
        with open(stack_file, "rb") as dump:
            dump.seek(before)
            threads = parse_faulthandler(dump.read().decode(errors="replace"))
        if threads:
            found.append((child, list(threads.values())[-1]))
    return found


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (from ``/proc/PID/task/*/children``); none where there is no /proc."""
    children = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            children += [int(c) for c in (task / "children").read_text().split()]
    except (OSError, ValueError):  # gone, or no /proc: no helpers to ask
        pass
    return children


def _last_seen(directory: Path, rank: int) -> list[Frame]:
    """Where the rank's sampler last saw its main thread move (``rank<N>.where``), or nothing."""
    try:
        return [Frame(*f) for f in json.loads(RankFiles(directory, rank).where.read_text())]
    except (OSError, ValueError, TypeError):  # never written (a rank that never moved): nothing seen
        return []


def _still_importing(stacks: list[RankStack], running_for: float) -> bool:
    """Whether every rank that is not in a collective is loading a module, early in the run: while a
    large extension loads (``import torch`` on a busy machine) the sampler thread cannot run, so no
    progress is seen, but the import ends by itself."""
    importing = [s for s in stacks if s.frames and s.frames[-1].file.startswith("<frozen importlib")]
    elsewhere = [s for s in stacks if s.frames and not collective_of(s.frames) and s not in importing]
    return bool(importing) and not elsewhere and running_for < IMPORT_GRACE


def _answered(base: Path) -> bool:
    return Path(f"{base}.fr").exists() or Path(f"{base}.fr-none").exists()


def read_flight_records(directory: Path, notes: dict[int, list[str]] | None = None) -> dict:
    """Rank -> `RankRecord` for every ``rank<N>.fr`` in ``directory`` that reads (the workers wrote them,
    but they are still read as plain data only), with the call sites of ``rank<N>.calls`` filled in where
    the dump has no stacks. Why a rank has no record goes into ``notes`` (rank -> reasons)."""
    from torchdoctor.explain import flight_recorder, safe_pickle

    notes = {} if notes is None else notes
    records = {}
    for path in sorted(directory.glob("rank*.fr")):
        try:
            record = flight_recorder.read_dump(path)
        except (OSError, ValueError, safe_pickle.UnsafePickle) as error:
            rank = _rank_of(path)
            notes.setdefault(rank, []).append(f"its dump {path.name} was not read: {error}")
            continue
        if record.truncated:
            notes.setdefault(record.rank, []).append(
                f"its dump {path.name} is cut off; read what is before the cut"
            )
        records[record.rank] = record
    for path in sorted(directory.glob("rank*.fr-none")):
        rank = _rank_of(path)
        if rank not in records:
            try:
                why = path.read_text(errors="replace").strip()
            except OSError as error:
                why = error.strerror or str(error)
            notes.setdefault(rank, []).append(f"it wrote no dump: {why}")
    for path in sorted(directory.glob("rank*.calls")):
        rank = _rank_of(path)
        try:
            noted = calls.read_calls(path)
        except (OSError, ValueError, TypeError) as error:
            notes.setdefault(rank, []).append(f"its call sites {path.name} were not read: {error}")
            continue
        if rank in records:
            flight_recorder.fill_call_sites(records[rank], noted)
        elif noted:  # no dump (killed, stopped, cut away): what it called still compares
            records[rank] = flight_recorder.from_calls(rank, noted, str(path))
    return records


def _rank_of(path: Path) -> int:
    match = re.match(r"rank(\d+)\.", path.name)
    return int(match[1]) if match else -1


@dataclass
class Supervision:
    """What `supervise` saw: the exit status, and the hang report when the watchdog stopped the run."""

    returncode: int
    report: str = ""


def supervise(
    process: subprocess.Popen,
    directory: Path,
    timeout: float,
    stop_run: Callable[[], None],
    poll: float = 0.25,
    start_timeout: float | None = None,
) -> Supervision:
    """Wait for ``process`` (torchrun, its stdout and stderr piped), passing its output on; when no worker
    made progress for ``timeout`` seconds, collect every worker's stack, call ``stop_run()`` and return the
    report with exit status 1.

    No worker has progress to make before it starts, so the rendezvous is bounded apart: when no worker has
    started ``start_timeout`` seconds after the call, ``stop_run()`` too, and exit status 1 with no report
    (the caller knows which nodes it waited for)."""
    began = time.monotonic()
    last_output = [time.time()]
    said: collections.deque = collections.deque(maxlen=64)  # torchrun's last output: its failure summary
    pumps = [
        threading.Thread(target=_pump, args=(pipe, out, last_output, keep), daemon=True)
        for pipe, out, keep in ((process.stdout, sys.stdout, None), (process.stderr, sys.stderr, said))
    ]
    for pump in pumps:
        pump.start()
    result = None
    job: JobExchange | None = None
    looked_for_job = False
    while result is None and process.poll() is None:
        time.sleep(poll)
        if start_timeout is not None and time.monotonic() - began > start_timeout:
            if not workers_in(directory) and process.poll() is None:
                stop_run()
                result = Supervision(1)
                break
        if not looked_for_job:  # once all of this node's workers have started: are there other nodes?
            workers = workers_in(directory)
            # all of them: whether this node hosts rank 0 is only known once rank 0's file is there too
            if workers and len(workers) >= int(workers[0].get("local_world_size", 1)):
                looked_for_job = True
                job = JobExchange.connect(workers)
        asked = job is not None and job.asked()
        if not asked and stuck_for(directory, last_output[0]) < timeout:
            continue
        fired = time.monotonic()
        stacks = collect_stacks(directory)
        if not asked and _still_importing(stacks, time.monotonic() - began):
            last_output[0] = time.time()  # loading a module (its thread starved of the GIL) is not a hang
            for path in [
                directory / FLIGHT_RECORDER_REQUEST,
                *directory.glob("rank*.fr"),
                *directory.glob("rank*.fr-none"),
            ]:
                path.unlink(missing_ok=True)  # asked again, answered again, at the real hang
            continue
        notes: dict[int, list[str]] = {}
        records = read_flight_records(directory, notes)
        for stack in stacks:
            stack.evidence += notes.get(stack.rank, [])
        if job is not None:
            result = Supervision(1, job.report(stacks, records, directory, timeout, stop_run))
            break
        if process.poll() is not None:  # finished while we looked: not a hang
            break
        where = f"Full stacks: {directory}/rank*.stack"
        dumps = any(directory.glob("rank*.fr"))  # records may come from call sites alone (rank*.calls)
        where += f", flight-recorder dumps: {directory}/rank*.fr" if dumps else _no_records(directory)
        found = verdict(stacks, records)
        text = format_report(stacks, timeout, where + ". The run was stopped.", records, found=found)
        write_verdict(directory, found, time.monotonic() - fired)
        stop_run()
        result = Supervision(1, text)
    for pump in pumps:
        pump.join(timeout=5)  # an orphaned worker may hold the pipe open; do not wait for it forever
    if result is None:
        result = Supervision(process.wait())
        if result.returncode != 0:
            result.report = _failure_report(directory, b"".join(said).decode(errors="replace"))
    return result


def _failure_report(directory: Path, torchrun_output: str) -> str:
    """The verdict for a job that failed: which rank failed first and where (`failure.failure_verdict`)."""
    keep_exit_codes(directory, torchrun_output)
    found = failure_verdict(directory, torchrun_output)
    if found is None:
        return ""
    write_verdict(directory, found, 0.0)
    lines = [f"torchdoctor: failed: {found.text}"]
    if found.culprits:
        where = f" at {found.where.file}:{found.where.line}" if found.where else ""
        lines.append(f"Culprit: rank(s) {', '.join(map(str, found.culprits))}{where}.")
    lines.append(f"What each rank left: {directory}/rank*; the verdict as JSON: {directory}/{VERDICT_FILE}.")
    return "\n".join(lines) + "\n"


VERDICT_FILE = "verdict.json"


def write_verdict(directory: Path, found: Verdict, seconds: float) -> None:
    """``verdict.json`` in the kept folder: the verdict for scripts (culprit ranks, file and line, kind)
    and how many seconds it took from the watchdog firing."""
    try:
        (directory / VERDICT_FILE).write_text(json.dumps({**found.to_dict(), "seconds": round(seconds, 2)}))
    except OSError:  # the folder went: the report on stderr still says it all
        pass


def _no_records(directory: Path) -> str:
    """Why there are no flight-recorder dumps, as the workers said (``rank<N>.fr-none``), when one can tell."""
    for path in sorted(directory.glob("rank*.fr-none")):
        try:
            why = path.read_text().strip()
        except OSError:  # the launcher removed its folder: the run is over anyway
            return ""
        if "no flight recorder" in why:
            return f"; no flight-recorder dumps ({why}): the verdict rests on the stacks"
    return ""


def _pump(pipe, out: TextIO, last_output: list[float], keep: collections.deque | None = None) -> None:
    """Copy ``pipe`` to ``out`` as it comes (no line buffering: progress bars use \\r), noting the time
    (and keeping the last chunks in ``keep``)."""
    target = getattr(out, "buffer", None)
    while True:
        chunk = os.read(pipe.fileno(), 65536)
        if not chunk:
            return
        last_output[0] = time.time()
        if keep is not None:
            keep.append(chunk)
        if target is not None:
            target.write(chunk)
        else:
            out.write(chunk.decode(errors="replace"))
        out.flush()


# ---------------------------------------------------------------------------------------------------------
# Library mode

_KEY = "torchdoctor/watchdog/"


class HangWatch:
    """What `watch_for_hangs` returns: ``stop()`` it (or leave the ``with`` block) to stop watching."""

    def __init__(self, timeout: float, exit_code: int | None, stream: TextIO | None, collect: float) -> None:
        self.timeout, self.exit_code, self.stream, self.collect = timeout, exit_code, stream, collect
        self.fired = False
        self._sampler = ProgressSampler(min(1.0, timeout / 5), on_progress=self._moved, on_idle=self._idle)

    def start(self) -> HangWatch:
        self._sampler.start()
        return self

    def stop(self) -> None:
        self._sampler.stop()

    def __enter__(self) -> HangWatch:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _moved(self) -> None:
        self.fired = False
        self._answer_if_asked()

    def _idle(self, idle: float) -> None:
        if self._answer_if_asked() or self.fired or idle < self.timeout:
            return
        self.fired = True
        store, rank, world = _store_and_rank()
        own = RankStack(rank, os.getpid(), current().host, _main_frames())
        if store is None or world == 1:
            self._finish(format_report([own], self.timeout))
            return
        try:
            first = store.add(_KEY + "asked", 1) == 1
            store.set(f"{_KEY}stack/{rank}", json.dumps({**stack_dict(own), **_own_digest(rank)}))
            if not first:
                return self._wait_and_exit(store)
            stacks, records = _read_stacks(store, world, self.collect)
        except Exception as error:  # noqa: BLE001 - the store died with rank 0: report what this rank knows
            self._finish(format_report([own], self.timeout, f"(other ranks unreachable: {error})"))
            return
        self._write(format_report(stacks, self.timeout, records=records))
        try:
            store.set(_KEY + "reported", "1")  # the others exit once the report is out
        except Exception:  # noqa: BLE001 - the store's host may be gone with the job: the report stands without it
            pass
        self._finish("")

    def _answer_if_asked(self) -> bool:
        store, rank, _ = _store_and_rank()
        try:
            if store is None or not store.check([_KEY + "asked"]) or store.check([f"{_KEY}stack/{rank}"]):
                return False
            own = RankStack(rank, os.getpid(), current().host, _main_frames())
            store.set(f"{_KEY}stack/{rank}", json.dumps({**stack_dict(own), **_own_digest(rank)}))
        except Exception:  # noqa: BLE001 - the store's host may be gone with the job: the report stands without it
            return False
        self._wait_and_exit(store)
        return True

    def _wait_and_exit(self, store) -> None:
        deadline = time.monotonic() + self.collect + 5
        while time.monotonic() < deadline:
            try:
                if store.check([_KEY + "reported"]):
                    break
            except Exception:  # noqa: BLE001 - the store's host may be gone with the job: the report stands without it
                break
            time.sleep(0.2)
        self._finish("")

    def _write(self, report: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(report)
        stream.flush()

    def _finish(self, report: str) -> None:
        if report:
            self._write(report)
        if self.exit_code is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(self.exit_code)  # the main thread is stuck in C code: nothing else ends it


def watch_for_hangs(
    timeout: float, *, exit_code: int | None = 1, stream: TextIO | None = None, collect: float = 10.0
) -> HangWatch:
    """Watch this rank for a hang: no progress (see the module doc) for ``timeout`` seconds.

    Then the first rank to notice collects every rank's stack through the process group's store (for at most
    ``collect`` seconds), writes one report to ``stream`` (default ``sys.stderr``), and every rank exits with
    ``exit_code`` (``None``: report once and go on). Call it in every rank, after ``init_process_group``.
    It needs the GIL to look: a rank stuck in C code that holds the GIL is only caught by
    ``torchdoctor launch --watchdog``, which asks for the stack with a signal instead::

        torchdoctor.watch_for_hangs(300)
    """
    for name, value in (("timeout", timeout), ("collect", collect)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"watch_for_hangs: {name}={value!r} must be a number of seconds, e.g. 600")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"watch_for_hangs: {name}={value!r} must be a positive number of seconds")
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise TypeError(f"watch_for_hangs: exit_code={exit_code!r} must be a whole number or None")
    while _watching:  # a second call replaces the first rather than adding a second watcher
        _watching.pop().stop()
    _watching.append(HangWatch(timeout, exit_code, stream, collect).start())
    return _watching[-1]


_watching: list[HangWatch] = []


def _store_and_rank():
    dist = sys.modules.get("torch.distributed")  # not imported: there is no process group to ask
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            from torch.distributed.distributed_c10d import _get_default_store

            return _get_default_store(), dist.get_rank(), dist.get_world_size()
    except Exception:  # noqa: BLE001 - no usable store: this rank reports alone
        pass
    info = current()
    return None, info.rank, info.world_size


def _main_frames() -> list[Frame]:
    frame = sys._current_frames().get(threading.main_thread().ident)
    return frames_of(frame) if frame is not None else []


def _read_stacks(store, world: int, collect: float) -> tuple[list[RankStack], dict]:
    """Every rank's stack from the store, and its flight-recorder record where it sent one."""
    from torchdoctor.explain.flight_recorder import from_digest

    deadline = time.monotonic() + collect
    keys = {rank: f"{_KEY}stack/{rank}" for rank in range(world)}
    while time.monotonic() < deadline and not store.check(list(keys.values())):
        time.sleep(0.2)
    stacks, records = [], {}
    for rank, key in keys.items():
        if not store.check([key]):
            stacks.append(RankStack(rank, note=f"did not answer within {collect:g}s"))
            continue
        try:
            data = json.loads(store.get(key))
            frames = [Frame(*f) for f in data["frames"]]
            stacks.append(RankStack(data["rank"], data["pid"], data["host"], frames))
        except (ValueError, TypeError, KeyError) as error:
            stacks.append(RankStack(rank, note=f"its stack did not read: {error!r}"))
            continue
        try:
            if data.get("record"):
                records[data["rank"]] = from_digest(data["record"])
            elif data.get("no_record"):
                stacks[-1].evidence.append(f"it sent no flight-recorder record: {data['no_record']}")
        except (ValueError, TypeError, KeyError) as error:
            stacks[-1].evidence.append(f"its flight-recorder digest did not read: {error!r}")
    return stacks, records
