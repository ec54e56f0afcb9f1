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

import faulthandler
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from torchdoctor.distributed.ranks import current, from_environment
from torchdoctor.hang.job import JobExchange
from torchdoctor.hang.report import (  # noqa: F401 - the names the watchdog's users import
    COLLECTIVES,
    Frame,
    RankStack,
    collective_of,
    describe,
    diagnosis,
    format_report,
    frames_of,
    grouped,
    is_user_code,
    parse_faulthandler,
    stack_dict,
)

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
DUMP_SIGNAL = signal.SIGRTMIN + 5 if hasattr(signal, "SIGRTMIN") else signal.SIGUSR2

# ---------------------------------------------------------------------------------------------------------
# Progress, in the worker

_beat = [time.monotonic()]  # when this process last called heartbeat()


def heartbeat() -> None:
    """Tell the watchdog this rank is making progress: call it once per step where one step may sit on a
    single line for longer than the watchdog's timeout (a long C call, a slow ``next(loader)``)."""
    _beat[0] = time.monotonic()


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
            del frame
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

    def answer() -> None:
        if not answered and request.exists():
            answered.append(True)
            write_flight_record(base)

    sampler = ProgressSampler(interval, on_progress=lambda: _touch(beat_file), on_tick=answer).start()
    _worker.update(stack_file=stack_file, sampler=sampler, done=Path(f"{base}.done"))


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


def own_flight_record(stack_wait: float = 2.0) -> tuple[bytes, str]:
    """This process's flight-recorder dump (torch's pickle), or ``b""`` and why there is none."""
    c10d = sys.modules.get("torch._C._distributed_c10d")
    if c10d is None:
        return b"", "torch.distributed was never used"
    if not hasattr(c10d, "_dump_fr_trace"):  # torch 2.4 has only _dump_nccl_trace, and no recorder for gloo
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
    except Exception as error:  # an old torch, a backend without a recorder: the stacks still speak
        return b"", f"{type(error).__name__}: {error}"


def _own_digest(rank: int) -> dict | None:
    """This rank's newest flight-recorder entries for a library-mode report, when the user turned the
    recorder on (``TORCH_FR_BUFFER_SIZE``); None otherwise."""
    if not any(os.environ.get(name, "0") not in ("", "0") for name in FLIGHT_RECORDER_VARIABLES):
        return None
    data, _ = own_flight_record()
    if not data:
        return None
    from torchdoctor.explain import flight_recorder, safe_pickle

    try:
        return flight_recorder.digest(flight_recorder.parse(safe_pickle.loads(data).data, rank))
    except (ValueError, TypeError):
        return None


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def worker_finished() -> None:
    """The script returned (or raised): tell the launcher, and from now on ignore its stack signal, since
    faulthandler lets go of it while the interpreter shuts down and the signal would then kill the worker."""
    if not _worker:
        return
    _worker["sampler"].stop()
    faulthandler.unregister(DUMP_SIGNAL)
    signal.signal(DUMP_SIGNAL, signal.SIG_IGN)
    _worker["done"].touch()
    _worker["stack_file"].close()
    _worker.clear()


# ---------------------------------------------------------------------------------------------------------
# Launcher mode: the launcher side


def is_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


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
    running = [w for w in workers_in(directory) if not (directory / f"rank{w['rank']}.done").exists()]
    if not running:  # the scripts have all returned: a slow exit is not a hang
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
    for worker in workers:
        stack = RankStack(worker["rank"], worker["pid"], worker.get("host", ""))
        stacks.append(stack)
        if (directory / f"rank{worker['rank']}.done").exists():
            stack.note = "its script had already returned"
            continue
        if not is_alive(worker["pid"]):
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
            if size and sizes.get(stack.rank) == size:  # written, and no longer growing
                threads = parse_faulthandler(path.read_text(errors="replace"))
                # faulthandler lists the oldest thread, the main one, last
                stack.frames = threads.get(worker.get("main_thread")) or [[], *threads.values()][-1]
                pending.remove((worker, stack))
            sizes[stack.rank] = size
    for _, stack in pending:
        stack.note = f"did not answer within {wait:g}s"
    return stacks


def _answered(base: Path) -> bool:
    return Path(f"{base}.fr").exists() or Path(f"{base}.fr-none").exists()


def read_flight_records(directory: Path) -> dict:
    """Rank -> `RankRecord` for every ``rank<N>.fr`` in ``directory`` that reads (the workers wrote them,
    but they are still read as plain data only)."""
    from torchdoctor.explain import flight_recorder

    records = {}
    for path in sorted(directory.glob("rank*.fr")):
        try:
            record = flight_recorder.read_dump(path)
        except (OSError, ValueError):
            continue
        records[record.rank] = record
    return records


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
    pumps = [
        threading.Thread(target=_pump, args=(pipe, out, last_output), daemon=True)
        for pipe, out in ((process.stdout, sys.stdout), (process.stderr, sys.stderr))
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
        stacks = collect_stacks(directory)
        records = read_flight_records(directory)
        if job is not None:
            result = Supervision(1, job.report(stacks, records, directory, timeout, stop_run))
            break
        if process.poll() is not None:  # finished while we looked: not a hang
            break
        stop_run()
        where = f"Full stacks: {directory}/rank*.stack"
        where += f", flight-recorder dumps: {directory}/rank*.fr" if records else _no_records(directory)
        result = Supervision(1, format_report(stacks, timeout, where + ". The run was stopped.", records))
    for pump in pumps:
        pump.join(timeout=5)  # an orphaned worker may hold the pipe open; do not wait for it forever
    return result or Supervision(process.wait())


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


def _pump(pipe, out: TextIO, last_output: list[float]) -> None:
    """Copy ``pipe`` to ``out`` as it comes (no line buffering: progress bars use \\r), noting the time."""
    target = getattr(out, "buffer", None)
    while True:
        chunk = os.read(pipe.fileno(), 65536)
        if not chunk:
            return
        last_output[0] = time.time()
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
            store.set(f"{_KEY}stack/{rank}", json.dumps({**stack_dict(own), "record": _own_digest(rank)}))
            if not first:
                return self._wait_and_exit(store)
            stacks, records = _read_stacks(store, world, self.collect)
        except Exception as error:  # the store died with rank 0: report what this rank knows
            self._finish(format_report([own], self.timeout, f"(other ranks unreachable: {error})"))
            return
        self._write(format_report(stacks, self.timeout, records=records))
        try:
            store.set(_KEY + "reported", "1")  # the others exit once the report is out
        except Exception:
            pass
        self._finish("")

    def _answer_if_asked(self) -> bool:
        store, rank, _ = _store_and_rank()
        try:
            if store is None or not store.check([_KEY + "asked"]) or store.check([f"{_KEY}stack/{rank}"]):
                return False
            own = RankStack(rank, os.getpid(), current().host, _main_frames())
            store.set(f"{_KEY}stack/{rank}", json.dumps({**stack_dict(own), "record": _own_digest(rank)}))
        except Exception:
            return False
        self._wait_and_exit(store)
        return True

    def _wait_and_exit(self, store) -> None:
        deadline = time.monotonic() + self.collect + 5
        while time.monotonic() < deadline:
            try:
                if store.check([_KEY + "reported"]):
                    break
            except Exception:
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
    if not timeout > 0:
        raise ValueError(f"watch_for_hangs: timeout={timeout!r} must be a positive number of seconds")
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
    except Exception:  # no usable store: this rank reports alone
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
        data = json.loads(store.get(key))
        frames = [Frame(*f) for f in data["frames"]]
        stacks.append(RankStack(data["rank"], data["pid"], data["host"], frames))
        if data.get("record"):
            records[data["rank"]] = from_digest(data["record"])
    return stacks, records
