"""Launcher mode, in each worker: ``torchdoctor launch --watchdog`` starts every worker through
`prepare_worker`, which lets the launcher see the worker's progress and ask for its stack (a signal,
answered by ``faulthandler`` even in C code), and notes where the worker ends itself; `worker_finished` says
that the script returned or how it failed, and how many collectives it made. Without the watchdog,
`note_the_end` has `worker_finished` say only that. What a worker writes is named in `torchdoctor.hang.files`.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

from torchdoctor.distributed import functional
from torchdoctor.distributed.ranks import from_environment
from torchdoctor.hang import calls
from torchdoctor.hang.files import RankFiles
from torchdoctor.hang.flight_records import (
    FLIGHT_RECORDER_ENTRIES,
    FLIGHT_RECORDER_REQUEST,
    FLIGHT_RECORDER_VARIABLES,
    write_flight_record,
)
from torchdoctor.hang.functional_calls import record_functional_calls
from torchdoctor.hang.progress import ProgressSampler, main_frames
from torchdoctor.hang.source import Frame, is_user_code
from torchdoctor.hang.stack_signal import keep_caught
from torchdoctor.hang.stacks import frames_of
from torchdoctor.process_state import started_at

# Set by `torchdoctor launch --watchdog` for its workers.
DIR_VARIABLE = "TORCHDOCTOR_WATCHDOG_DIR"
SECONDS_VARIABLE = "TORCHDOCTOR_WATCHDOG_SECONDS"
FRAMES_KEPT = 12  # frames of a worker's error kept in rank<N>.done
USER_FRAMES_KEPT = 4  # and the innermost of the user's above them (FSDP2's hooks alone are more than 12 deep)
# The launcher sends it to a stuck worker and faulthandler writes the stack. Not SIGUSR1/SIGUSR2: Lightning
# and SLURM set-ups use those to requeue a job. A real-time signal nobody else uses, where there are some.
DUMP_SIGNAL = signal.SIGRTMIN + 5 if hasattr(signal, "SIGRTMIN") else signal.SIGUSR2


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
    if not faulthandler.is_enabled():  # PYTHONFAULTHANDLER or the script's own: its stderr is kept
        # a fatal signal (SIGABRT, SIGSEGV, ...) ends the rank with no Python error: where it was then, exactly,
        # not where it was last seen moving (`hang.failure`)
        fatal_file = open(f"{base}.fatal", "w")  # noqa: SIM115 - faulthandler writes to it until the end
        faulthandler.enable(file=fatal_file, all_threads=True)
    beat_file = Path(f"{base}.beat")
    beat_file.touch()
    meta = {
        "rank": info.rank,
        "pid": os.getpid(),
        "started": started_at(),  # with the pid, names this process: the pid may be reused
        "host": info.host,
        "main_thread": threading.main_thread().ident,
        "script": os.path.realpath(script),
        "cwd": os.getcwd(),  # where a frame's relative path (a script run as `train.py`) starts from
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
        # and torch's functional collectives as soon as theirs is imported (tensor parallelism, DTensor)
        calls.when_imported(record_functional_calls, functional.MODULE)
    except OSError:  # no room for the file: the flight recorder and the stacks still speak
        pass
    _note_exits(files.exit)

    def answer() -> None:
        keep_caught(DUMP_SIGNAL, stack_file)  # a library that put every signal's handler back took it away
        try:
            asked = request.stat().st_mtime_ns
        except OSError:  # not asked (yet)
            return
        if (
            asked not in answered
        ):  # each request once (a request while the ranks imported is followed by another)
            answered.append(asked)
            calls.write_counts(files.counts)  # first: the dump may wait two seconds for a collective
            write_flight_record(base)

    def moved() -> None:
        _touch(beat_file)
        _note_where(files.where)

    sampler = ProgressSampler(interval, on_progress=moved, on_tick=answer).start()
    _worker.update(stack_file=stack_file, sampler=sampler, done=Path(f"{base}.done"))
    calls.when_imported(_count_before_destroy)


def note_the_end(directory: str | None, environ=None) -> None:
    """Under ``torchdoctor launch`` without the watchdog: note only how this worker's script ends, in
    ``directory`` (the launcher's folder), as `prepare_worker` does for the watchdog: ``rank<N>.done``, with
    the number of collectives this rank made. A failed run can then name a rank that ended while the others
    were still training (`torchdoctor.hang.failure.ended_early`). Does nothing under the watchdog (its
    workers note it already) or without a folder."""
    environ = os.environ if environ is None else environ
    if _worker or not directory or environ.get(DIR_VARIABLE):
        return
    rank = from_environment(environ).rank
    _worker.update(done=RankFiles(Path(directory), rank).done)
    calls.when_imported(_count_before_destroy)


def _count_before_destroy(dist) -> None:
    """Keep the default group's count of collectives as ``destroy_process_group`` ends it: a rank that
    destroys its group before its script returns still says how far it got."""
    destroy = dist.destroy_process_group

    # named as torch's: a rank stuck in the teardown shows this frame, and the hang report reads it as one
    def destroy_process_group(*args, **kwargs):
        count = collectives_so_far()
        if count is not None:
            _worker["collectives"] = count
        return destroy(*args, **kwargs)

    destroy_process_group.__wrapped__ = destroy
    dist.destroy_process_group = destroy_process_group


def collectives_so_far() -> int | None:
    """How many collectives this rank has started in the default process group (torch's own count: DDP's
    gradient all-reduces too), or None without one."""
    dist = sys.modules.get("torch.distributed")
    try:
        group = dist.distributed_c10d._world.default_pg
        return None if group is None else int(group._get_sequence_number_for_group())
    except Exception:  # noqa: BLE001 - no torch.distributed, a torch without the count: nothing to say
        return None


def _note_exits(path: Path) -> None:
    """Note where this process ends itself without a Python error: ``os._exit()`` (wrapped) and a signal it
    sends itself (an audit hook on ``os.kill``), so a failed job's verdict can name the line. Only this
    process: a DataLoader worker forked from it ends with ``os._exit`` too."""
    me, real_exit = os.getpid(), os._exit

    def note(how: str) -> None:
        if os.getpid() != me:
            return
        frames = main_frames() if threading.current_thread() is threading.main_thread() else []
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
    frames = main_frames()
    try:
        Path(f"{path}.tmp").write_text(json.dumps([[f.file, f.line, f.function] for f in frames]))
        os.replace(f"{path}.tmp", path)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def worker_finished(error: BaseException | None = None, exit_status: int = 0) -> None:
    """The script returned with ``exit_status`` (``sys.exit``'s) or raised ``error``: tell the launcher (with
    the error, where and when, so that a failed job's verdict can tell the rank that failed first from the
    ones that failed because of it; and how many collectives this rank made), and from now on ignore the
    stack signal, since faulthandler lets go of it while the interpreter shuts down and the signal would
    then kill the worker."""
    if not _worker:
        return
    said: dict = {}
    count = collectives_so_far()
    count = _worker.get("collectives") if count is None else count
    if count is not None:
        said["collectives"] = count
    if error is None and exit_status:
        said["exit_status"] = exit_status
    if "sampler" in _worker:  # under the watchdog: what Python will wait for at exit (hang.at_exit)
        left = threads_left()
        if left:
            said["threads_left"] = left
    if error is not None:
        frames = [Frame(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(error.__traceback__)]
        message = str(error).strip().splitlines()
        said.update(
            error=f"{type(error).__name__}: {message[0] if message else ''}"[:500],
            frames=[[f.file, f.line, f.function] for f in _kept(frames)],
            time=time.time(),
        )
    try:
        _worker["done"].write_text(json.dumps(said) if said else "")
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass
    # only now: until the note is written this rank is watched, and from then on it is outside its script
    # (a clean-up that runs here, a finalizer the garbage collector calls, is not the script's hang)
    if "sampler" in _worker:
        _worker["sampler"].stop()
        faulthandler.unregister(DUMP_SIGNAL)
        signal.signal(DUMP_SIGNAL, signal.SIG_IGN)
    if "stack_file" in _worker:
        _worker["stack_file"].close()
    _worker.clear()


def threads_left() -> list[dict]:
    """The threads other than the main one, not daemons, still running now (as the script returns): their
    names and frames, outermost first."""
    frames = sys._current_frames()
    left = []
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon or not thread.is_alive():
            continue
        frame = frames.get(thread.ident)
        stack = frames_of(frame) if frame is not None else []
        left.append({"name": thread.name, "frames": [[f.file, f.line, f.function] for f in stack]})
    return left


def _kept(frames: list[Frame]) -> list[Frame]:
    """The innermost `FRAMES_KEPT` frames of an error, and the innermost user frames above them, outermost
    first: the user's line, and the loop around it, whatever library the error came through."""
    inner = frames[-FRAMES_KEPT:]
    users = [f for f in frames[: len(frames) - len(inner)] if is_user_code(f.file)]
    return users[-USER_FRAMES_KEPT:] + inner
