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
import linecache
import os
import re
import signal
import subprocess
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from torchdoctor.distributed.ranks import current, from_environment

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

COLLECTIVES = frozenset(
    "barrier monitored_barrier all_reduce all_gather all_gather_object all_gather_into_tensor "
    "reduce_scatter reduce_scatter_tensor broadcast broadcast_object_list reduce gather gather_object "
    "scatter scatter_object_list all_to_all all_to_all_single send recv isend irecv batch_isend_irecv "
    "init_process_group new_group destroy_process_group pad_across_processes".split()
)
_LIBRARY_DIRS = tuple(
    {
        os.path.realpath(sysconfig.get_paths()[k]) + os.sep
        for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep
# DistributedDataParallel's own collectives (torch/nn/parallel/distributed.py, torch/distributed/utils.py),
# by the function a stack shows: the user's line is `DDP(model)` or `model(x)`, not a collective.
_DDP_STEPS = {
    "_verify_param_shape_across_processes": "check that every rank has the same parameters",
    "_sync_module_states": "broadcast of the parameters and buffers from rank 0",
    "_sync_params_and_buffers": "broadcast of the parameters and buffers from rank 0",
    "_distributed_broadcast_coalesced": "broadcast of the parameters and buffers",
    "_sync_buffers": "buffer broadcast before forward",
    "_sync_module_buffers": "buffer broadcast before forward",
    "_default_broadcast_coalesced": "buffer broadcast before forward",
    "_check_global_requires_backward_grad_sync": "join check (all_reduce) before forward",
    "_match_all_reduce_for_bwd_pass": "join shadow all_reduce",
    "_pre_forward": "collectives before forward (bucket rebuild, buffer sync)",
}


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


@dataclass
class RankStack:
    """Where one rank was when the stacks were taken; ``frames`` outermost first, empty when unknown."""

    rank: int
    pid: int | None = None
    host: str = ""
    frames: list[Frame] = field(default_factory=list)
    note: str = ""  # why there is no stack: "exited", "did not answer within 5s", ...


# ---------------------------------------------------------------------------------------------------------
# Reading stacks


def is_user_code(path: str) -> bool:
    """False for the standard library, installed packages, torchdoctor itself and frozen modules."""
    if path.startswith("<"):
        return False
    real = os.path.realpath(path)
    return not real.startswith(_LIBRARY_DIRS) and not real.startswith(_OWN_DIR)


def parse_faulthandler(text: str) -> dict[int, list[Frame]]:
    """Thread id -> frames (outermost first) from what ``faulthandler`` writes."""
    threads: dict[int, list[Frame]] = {}
    frames: list[Frame] | None = None
    for line in text.splitlines():
        header = re.match(r"(?:Current thread|Thread) (0x[0-9a-fA-F]+)", line)
        if header:
            frames = threads.setdefault(int(header[1], 16), [])
            continue
        frame = re.match(r'\s+File "(.*)", line (\d+) in (.*)$', line)
        if frame and frames is not None:
            frames.insert(0, Frame(frame[1], int(frame[2]), frame[3].strip()))
    return threads


def frames_of(frame) -> list[Frame]:
    """A live Python frame and its callers, outermost first."""
    return [Frame(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack(frame)]


def collective_of(frames: list[Frame]) -> str | None:
    """``"torch.distributed.barrier"`` when the stack is inside a collective called from user code, else None.

    Collectives that are not on the user's line are named for whose they are: DistributedDataParallel's
    (its parameter broadcast, its buffer sync, the gradients' all-reduce in ``backward()``) and torchdoctor's
    own (``find_executable_batch_size``'s agreement across ranks: the user's line only calls the function)."""
    user = [i for i, f in enumerate(frames) if is_user_code(f.file)]
    below = frames[user[-1] + 1 if user else 0 :]
    ours = next(
        (f for f in below if f.file.replace(os.sep, "/").startswith(_OWN_DIR.replace(os.sep, "/"))), None
    )
    for frame in below:
        path = frame.file.replace(os.sep, "/")
        if path.endswith("torch/nn/parallel/distributed.py") or path.endswith("torch/distributed/utils.py"):
            ddp = _DDP_STEPS.get(frame.function)
            if ddp:
                return f"DistributedDataParallel's {ddp} ({frame.function})"
        for package in ("torch/distributed/", "torchdoctor/distributed/"):
            if package in path and frame.function in COLLECTIVES:
                name = f"{package.split('/')[0]}.distributed.{frame.function}"
                if ours is not None and not ours.file.endswith(("debug.py", "agreement.py", "operations.py")):
                    where = f"{os.path.basename(ours.file)}:{ours.line}"
                    return (
                        f"{name} inside torchdoctor's {ours.function} ({where}), which every rank must reach"
                    )
                return name
        if "torch/autograd/" in path and frame.function in ("backward", "_engine_run_backward"):
            # DistributedDataParallel all-reduces the gradients inside backward and waits for it there
            return "backward() (under DDP, the gradients' all-reduce)"
        if path.endswith("torchdoctor/distributed/debug.py") and frame.function == "check_collective":
            # debug mode's wrapper hides which call it checks; the user's line of code says it
            called = re.findall(r"(\w+)\s*\(", _source(frames[user[-1]], limit=1000)) if user else []
            name = next(
                (f"torch.distributed.{c}" for c in reversed(called) if c in COLLECTIVES), "a collective"
            )
            return f"{name} (its debug-mode check: the other ranks have not arrived)"
    return None


def where_it_is(stack: RankStack) -> tuple[str, list[Frame]]:
    """What one rank is doing, in words (``"waiting in torch.distributed.barrier"``), and the frames to show
    under it: the user's, innermost first."""
    if not stack.frames:
        return f"no stack: {stack.note or 'unknown'}", []
    collective = collective_of(stack.frames)
    user = [f for f in stack.frames if is_user_code(f.file)]
    innermost = stack.frames[-1]
    if collective:
        head = f"waiting in {collective}"
    elif user and innermost is not user[-1]:
        head = f"not in a collective; in {innermost.function} ({innermost.file}:{innermost.line})"
    else:
        head = "not in a collective"
    shown = user[-4:] if user else stack.frames[-4:]
    return head, list(reversed(shown))


def describe(stack: RankStack) -> list[str]:
    """The lines of the report for one rank: the verdict, then the user's frames innermost first."""
    head, shown = where_it_is(stack)
    return [f"{_who(stack)}: {head}"] + [f"    {frame}{_source(frame)}" for frame in shown]


def _who(stack: RankStack) -> str:
    facts = ", ".join(part for part in (f"pid {stack.pid}" if stack.pid else "", stack.host) if part)
    return f"rank {stack.rank}" + (f" ({facts})" if facts else "")


def _source(frame: Frame, limit: int = 60) -> str:
    """``": dist.barrier()"``: the line of code, when this machine has the file (the launcher's does)."""
    text = linecache.getline(frame.file, frame.line).strip()
    if not text:
        return ""
    return f": {text if len(text) <= limit else text[: limit - 1] + '…'}"


def grouped(stacks: list[RankStack]) -> list[str]:
    """One block per place: ranks in the same state with the same frames share one line (``ranks 0-999``),
    so the odd ones out stand out; a rank alone keeps its pid and host."""
    places: dict[tuple, list[RankStack]] = {}
    for stack in sorted(stacks, key=lambda s: s.rank):
        head, shown = where_it_is(stack)
        places.setdefault((head, tuple(shown)), []).append(stack)
    lines = []
    for (head, shown), members in sorted(places.items(), key=lambda item: item[1][0].rank):
        if len(members) == 1:
            who = _who(members[0])
        else:
            hosts = {m.host for m in members if m.host}
            on = f" on {len(hosts)} hosts" if len(hosts) > 1 else (f", {hosts.pop()}" if hosts else "")
            who = f"ranks {_ranks(m.rank for m in members)} ({len(members)} ranks{on})"
        lines.append(f"{who}: {head}")
        lines += [f"    {frame}{_source(frame)}" for frame in shown]
    return lines


def diagnosis(stacks: list[RankStack], records: dict | None = None) -> str:
    """What the stacks (and, when given, the ranks' flight-recorder records) say: which ranks never came
    to the collective the others wait in, where they are instead, and what to look for."""
    if records:
        joined = _joined_verdict(stacks, records)
        if joined:
            return joined
    waiting: dict[str, list[int]] = {}
    elsewhere: list[RankStack] = []
    for stack in stacks:
        collective = collective_of(stack.frames) if stack.frames else None
        if collective:
            waiting.setdefault(collective, []).append(stack.rank)
        else:
            elsewhere.append(stack)
    if len(waiting) == 1 and elsewhere:
        ((collective, ranks),) = waiting.items()
        absent = [s.rank for s in elsewhere]
        waiters = [s for s in stacks if s.rank in ranks]
        left = _left_the_loop(waiters, elsewhere)
        if left:
            return left
        finished = [s.rank for s in elsewhere if not s.frames and "returned" in s.note]
        if finished and len(finished) == len(absent):
            return (
                f"{_count(finished)} had already finished the script while {_count(ranks)} wait in {collective}: "
                "the ranks made different numbers of collective calls (a loop that ran longer on some ranks, "
                "uneven data per rank, a condition on the rank)."
            )
        if "inside torchdoctor's" in collective:
            return (
                f"{_count(absent)} never reached {collective}, where {_count(ranks)} wait: every rank must call the "
                "function that contains it the same number of times."
            )
        hint = _rank_condition_hint(waiters[:1] + elsewhere)
        return f"{_count(absent)} never reached {collective}, where {_count(ranks)} wait: " + (
            hint
            or "look for a condition on the rank (an `if rank == ...`, an early `return` or `break`) before it."
        )
    if len(waiting) > 1:
        places = "; ".join(f"{_count(r)} in {c}" for c, r in waiting.items())
        return f"the ranks wait in different collectives ({places}): they must call them in the same order."
    if waiting:
        ((collective, ranks),) = waiting.items()
        return f"every rank waits in {collective}: a rank on another node, or a peer process, never came."
    return "no rank is in a collective: the run is stuck in the script itself."


def _count(ranks) -> str:
    return f"rank(s) {_ranks(ranks)}"


def _user_frame(stack: RankStack) -> Frame | None:
    return next((f for f in reversed(stack.frames) if is_user_code(f.file)), None)


def _left_the_loop(waiters: list[RankStack], elsewhere: list[RankStack]) -> str:
    """When the waiting ranks are inside a loop of the user's code and the others are past it (or have
    finished), the ranks ran different numbers of iterations: say so."""
    from torchdoctor.explain.flight_recorder import enclosing_loop

    frame = _user_frame(waiters[0]) if waiters else None
    loop = enclosing_loop(frame.file, frame.line) if frame else None
    if loop is None:
        return ""
    first, last = loop
    out = []
    for stack in elsewhere:
        inside = any(f.file == frame.file and first <= f.line <= last for f in stack.frames)
        if inside or not (stack.frames or "returned" in stack.note or "exited" in stack.note):
            return ""
        out.append(stack)
    place = "; ".join(
        f"rank {s.rank} is in {s.frames[-1].function} ({s.frames[-1].file}:{s.frames[-1].line})"
        if s.frames
        else f"rank {s.rank}: {s.note}"
        for s in out[:4]
    )
    collective = collective_of(waiters[0].frames)
    return (
        f"{_count([s.rank for s in out])} left the loop at {frame.file}:{first}-{last} while "
        f"{_count([s.rank for s in waiters])} still run it, waiting in {collective} ({frame.file}:{frame.line}); "
        f"{place}. The ranks ran different numbers of iterations: give every rank the same number of batches "
        "(DistributedSampler(drop_last=True), data split evenly), or run the loop under DDP's "
        "`with model.join():`, which lets ranks with fewer batches finish."
    )


def _rank_condition_hint(stacks: list[RankStack]) -> str:
    """The innermost condition on the rank around any of the user's frames of these ranks, named."""
    from torchdoctor.explain.flight_recorder import rank_condition

    for stack in stacks:
        for frame in reversed(stack.frames):
            found = rank_condition(frame.file, frame.line) if is_user_code(frame.file) else None
            if found:
                return f"rank {stack.rank}'s line {frame.file}:{frame.line} sits under a condition on the rank, {found}."
    return ""


def _joined_verdict(stacks: list[RankStack], records: dict) -> str:
    """The flight recorder's first disagreement per process group, joined with where the ranks that are
    behind are now: ``rank 1 never entered all_reduce #3 (train.py:10): it is in save_checkpoint (...)``."""
    from torchdoctor.explain import flight_recorder as fr

    by_rank = {s.rank: s for s in stacks}
    sentences = []
    for d in fr.disagreements(records, sorted(by_rank)):
        finding = fr.to_finding(d)
        if d.kind != "never_entered":
            sentences.append(finding.summary + ".")
            continue
        (example,) = d.examples.values()
        entered = sorted(r for ranks in d.entered.values() for r in ranks)
        if not example.frames:  # dumped without stacks: the ranks waiting in it show where it was called
            live = next(
                (by_rank[r].frames for r in entered if r in by_rank and collective_of(by_rank[r].frames)), []
            )
            example.frames = [fr.Call(f.file, f.line, f.function) for f in live]
        text = (
            f"{fr.who(d.behind)} never entered {example.shape()}{_ddp_where(example)}, "
            f"which {fr.who(entered)} entered"
        )
        now = [_is_now(by_rank[rank]) for rank in d.behind[:6] if rank in by_rank]
        sentences.append(text + (": " + "; ".join(now) if now else "") + ".")
        waiters = [by_rank[r] for r in entered if r in by_rank][:1]
        elsewhere = [by_rank[r] for r in d.behind if r in by_rank]
        left = _left_the_loop(waiters, elsewhere) if waiters and elsewhere else ""
        if left:
            sentences.append(left)
            continue
        # the lone collective, or a call on its way there, under a condition on the rank: that is the line
        calls = [f for f in reversed(example.frames) if not fr.is_library(f.file)]
        found = next(
            ((c, fr.rank_condition(c.file, c.line)) for c in calls if fr.rank_condition(c.file, c.line)), None
        )
        if found:
            sentences.append(
                f"{found[0].file}:{found[0].line} sits under a condition on the rank, {found[1]}: "
                "every rank must make the same collective calls."
            )
        else:
            sentences.append(_rank_condition_hint(elsewhere) or fr.to_finding(d).fix.splitlines()[0])
    return "\n".join(sentences)


def _is_now(stack: RankStack) -> str:
    """``"rank 1 is in save_checkpoint (train.py:44), called from train.py:20 in main"``."""
    if not stack.frames:
        return f"rank {stack.rank}: {stack.note or 'no stack'}"
    user = _user_frame(stack)
    collective = collective_of(stack.frames)
    if collective:
        return f"rank {stack.rank} waits in {collective}" + (f" ({user})" if user else "")
    innermost = stack.frames[-1]
    callers = [f for f in stack.frames[:-1] if is_user_code(f.file)]
    called = f", called from {callers[-1]}" if callers else ""
    return f"rank {stack.rank} is in {innermost.function} ({innermost.file}:{innermost.line}){called}"


def _ddp_where(collective) -> str:
    from torchdoctor.explain import flight_recorder as fr

    if any(
        f.function in ("backward", "_engine_run_backward") and "autograd" in f.file for f in collective.frames
    ):
        call = fr.user_call(collective.frames)
        return (
            f" (DDP's gradient all-reduce, in backward() at {call.file}:{call.line})"
            if call
            else " (in backward)"
        )
    return fr.where(collective)


def format_report(
    stacks: list[RankStack], timeout: float, extra: str = "", records: dict | None = None, nodes: int = 1
) -> str:
    """The hang report: where every rank is (ranks in the same place on one line), then the diagnosis,
    joined with the ranks' flight-recorder ``records`` (rank -> `RankRecord`) when there are any."""
    scope = "Where every rank is:"
    if nodes > 1:
        scope = f"Where every rank of the job ({len(stacks)} ranks on {nodes} nodes) is:"
    lines = [f"torchdoctor: hang: no progress for {timeout:g}s. {scope}", ""]
    lines += grouped(stacks)
    lines += ["", diagnosis(stacks, records)]
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"


def _ranks(ranks) -> str:
    from torchdoctor.explain.flight_recorder import ranks_text

    return ranks_text(list(ranks))


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
# Launcher mode: the worker side (called by torchdoctor.distributed.bootstrap)

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
    c10d = sys.modules.get("torch._C._distributed_c10d")
    why = "torch.distributed was never used"
    data = b""
    if c10d is not None and hasattr(c10d, "_dump_fr_trace"):
        # With a gloo collective in flight, writing out the recorded Python stacks can wait for that
        # collective to end (torch 2.13), which at a hang is never: give it two seconds, then dump without.
        whole: list = []
        try:
            asking = threading.Thread(target=lambda: whole.append(c10d._dump_fr_trace()), daemon=True)
            asking.start()
            asking.join(stack_wait)
            data = whole[0] if whole else c10d._dump_fr_trace(includeStackTraces=False)
        except Exception as error:  # an old torch, a backend without a recorder: the stacks still speak
            why = f"{type(error).__name__}: {error}"
    try:
        if data:
            Path(f"{base}.fr.tmp").write_bytes(data)
            os.replace(f"{base}.fr.tmp", f"{base}.fr")
        else:
            Path(f"{base}.fr-none").write_text(why)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


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
        if not looked_for_job:  # once this node's workers have started: are there other nodes?
            workers = workers_in(directory)
            if workers:
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
        where += f", flight-recorder dumps: {directory}/rank*.fr" if records else ""
        result = Supervision(1, format_report(stacks, timeout, where + ". The run was stopped.", records))
    for pump in pumps:
        pump.join(timeout=5)  # an orphaned worker may hold the pipe open; do not wait for it forever
    return result or Supervision(process.wait())


class JobExchange:
    """How the launchers of a job on several nodes make one hang report, through the job's own store (the
    one torchrun's agent hosts and the workers use): each node posts one summary of its ranks (stacks and
    the newest flight-recorder entries), and the node hosting rank 0 reads them all and reports for the
    whole job. A constant number of store requests per node and hang, plus one check a second while the
    run lasts (has another node seen a hang?)."""

    def __init__(self, store, node: int, nodes: int, world: int, hosts_rank0: bool, host: str) -> None:
        self.store, self.node, self.nodes, self.world = store, node, nodes, world
        self.hosts_rank0, self.host = hosts_rank0, host
        self._checked = 0.0

    @classmethod
    def connect(cls, workers: list[dict], timeout: float = 30) -> JobExchange | None:
        """The exchange for this node's ``workers`` (their ``rank*.json``), or None on one node or when the
        store cannot be reached (each node then reports its own ranks, as before)."""
        first = workers[0]
        try:
            nodes, node = int(first.get("nodes", 1)), int(first.get("node", 0))
            address, port = first.get("store", ["", ""])
            if nodes < 2 or not address or not port:
                return None
            from datetime import timedelta

            from torch.distributed import PrefixStore, TCPStore

            store = TCPStore(address, int(port), is_master=False, timeout=timedelta(seconds=timeout))
        except Exception:  # noqa: BLE001 - no store, no exchange: this node still reports its own ranks
            return None
        prefix = f"torchdoctor/hang/{first.get('run_id', '')}/{first.get('restart', '0')}/"
        hosts_rank0 = any(w["rank"] == 0 for w in workers)
        world = int(first.get("world_size", 0))
        return cls(PrefixStore(prefix, store), node, nodes, world, hosts_rank0, first.get("host", ""))

    def asked(self, every: float = 1.0) -> bool:
        """Whether any node saw a hang (one store request, at most once every ``every`` seconds)."""
        if time.monotonic() - self._checked < every:
            return False
        self._checked = time.monotonic()
        try:
            return self.store.check(["asked"])
        except Exception:  # noqa: BLE001 - the store went with node 0's agent: the run is ending
            return False

    def report(
        self, stacks: list[RankStack], records: dict, directory: Path, timeout: float, stop_run, collect=20.0
    ) -> str:
        """Post this node's ranks; on the node hosting rank 0, wait (at most ``collect`` s) for every node's,
        stop the run and return the report for the whole job; elsewhere wait until it is out, stop this
        node's run and return a short report that says where the verdict is."""
        from torchdoctor.explain import flight_recorder as fr

        summary = {
            "node": self.node,
            "host": self.host,
            "directory": str(directory),
            "stacks": [{**_stack_dict(s), "note": s.note} for s in stacks],
            "records": [fr.digest(r) for r in records.values()],
        }
        try:
            self.store.set(f"node/{self.node}", json.dumps(summary))
            self.store.add("asked", 1)
        except Exception as error:  # noqa: BLE001
            stop_run()
            return format_report(stacks, timeout, f"(the other nodes are unreachable: {error})", records)
        if not self.hosts_rank0:
            self._wait_for(["reported"], collect + 10)
            stop_run()
            return self._local_report(stacks, timeout, directory)
        summaries, missing = self._gather(collect)
        all_stacks, all_records, folders = [], {}, []
        for node in summaries:
            for s in node["stacks"]:
                frames = [Frame(*f) for f in s["frames"]]
                all_stacks.append(RankStack(s["rank"], s["pid"], s["host"], frames, s.get("note", "")))
            all_records.update({d["rank"]: fr.from_digest(d) for d in node["records"]})
            folders.append(f"{node['host']}:{node['directory']}")
        known = {s.rank for s in all_stacks}
        why = f"its node (node {', '.join(map(str, missing))}) did not answer within {collect:g}s"
        all_stacks += [RankStack(r, note=why) for r in range(self.world) if r not in known]
        try:
            self.store.set("reported", "1")
        except Exception:  # noqa: BLE001 - the others stop by themselves when the store goes
            pass
        stop_run()
        extra = f"Full stacks and flight-recorder dumps, per node: {', '.join(folders)}. The run was stopped."
        return format_report(all_stacks, timeout, extra, all_records, nodes=self.nodes)

    def _gather(self, collect: float) -> tuple[list[dict], list[int]]:
        keys = [f"node/{n}" for n in range(self.nodes)]
        self._wait_for(keys, collect)
        summaries, missing = [], []
        for node, key in enumerate(keys):
            try:
                summaries.append(json.loads(self.store.get(key)) if self.store.check([key]) else None)
            except Exception:  # noqa: BLE001
                summaries.append(None)
            if summaries[-1] is None:
                missing.append(node)
        return [s for s in summaries if s], missing

    def _wait_for(self, keys: list[str], seconds: float) -> None:
        """One request that returns when every key is there, or after ``seconds``."""
        from datetime import timedelta

        try:
            self.store.wait(keys, timedelta(seconds=seconds))
        except Exception:  # noqa: BLE001 - not all came, or the store went with node 0's agent
            pass

    def _local_report(self, stacks: list[RankStack], timeout: float, directory: Path) -> str:
        head = f"torchdoctor: hang: no progress for {timeout:g}s. This node's ranks ({self.host}, node {self.node}):"
        lines = [head, ""] + grouped(stacks)
        lines += [
            "",
            "The verdict for the whole job is in the report of the node that hosts rank 0.",
            f"Full stacks: {directory}/rank*.stack, flight-recorder dumps: {directory}/rank*.fr. "
            "The run was stopped.",
        ]
        return "\n".join(lines) + "\n"


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
            store.set(f"{_KEY}stack/{rank}", json.dumps(_stack_dict(own)))
            if not first:
                return self._wait_and_exit(store)
            stacks = _read_stacks(store, world, self.collect)
        except Exception as error:  # the store died with rank 0: report what this rank knows
            self._finish(format_report([own], self.timeout, f"(other ranks unreachable: {error})"))
            return
        self._write(format_report(stacks, self.timeout))
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
            store.set(f"{_KEY}stack/{rank}", json.dumps(_stack_dict(own)))
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


def _stack_dict(stack: RankStack) -> dict:
    return {
        "rank": stack.rank,
        "pid": stack.pid,
        "host": stack.host,
        "frames": [[f.file, f.line, f.function] for f in stack.frames],
    }


def _read_stacks(store, world: int, collect: float) -> list[RankStack]:
    deadline = time.monotonic() + collect
    keys = {rank: f"{_KEY}stack/{rank}" for rank in range(world)}
    while time.monotonic() < deadline and not store.check(list(keys.values())):
        time.sleep(0.2)
    stacks = []
    for rank, key in keys.items():
        if not store.check([key]):
            stacks.append(RankStack(rank, note=f"did not answer within {collect:g}s"))
            continue
        data = json.loads(store.get(key))
        frames = [Frame(*f) for f in data["frames"]]
        stacks.append(RankStack(data["rank"], data["pid"], data["host"], frames))
    return stacks
