"""The timing hooks: where a step ends, and how long a rank waits for data and for its peers — with no
change to the user's code.

* the step: torch's global optimizer step pre-hook (the first optimizer that steps marks the steps); until
  an optimizer steps, the start of each outermost module forward (global module hooks, removed once an
  optimizer is seen);
* waiting for data: ``DataLoader`` iterators' ``__next__`` (every loader, single- or multi-process);
* waiting for the peers: ``torch.distributed``'s collectives wrapped as debug mode wraps them — one started
  with ``async_op=True`` (FSDP2's all-gathers and reduce-scatters) from its ``Work.wait()`` — and DDP's
  gradient all-reduce from when the last gradient is ready (a hook on that parameter) to the end of the
  backward, which waits for it (no comm hook: DDP keeps its own all-reduce; with one, from the first
  collective the hook calls after the last gradient, so that the hook's own work before it is the rank's,
  not the waiting: `_DdpTiming.reduced`); and torch's functional
  collectives, which tensor parallelism and DTensor call, from the call to the end of their ``wait_tensor``
  (`torchdoctor.stragglers.functional`).

Nothing here calls a collective of its own.
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from torchdoctor.distributed.functional import unless_compiling
from torchdoctor.stragglers import functional
from torchdoctor.stragglers.record import StepRecord

# collective -> position of its ``group`` argument
COLLECTIVES = {
    "all_reduce": 2,
    "all_gather": 2,
    "all_gather_into_tensor": 2,
    "all_gather_single": 2,  # torch 2.13's name for it, which FSDP2 calls
    "reduce_scatter_tensor": 3,
    "reduce_scatter_single": 3,
    "reduce_scatter": 3,
    "broadcast": 2,
    "reduce": 3,
    "barrier": 0,
    "all_to_all": 2,
    "all_to_all_single": 4,
    "gather": 3,
    "scatter": 3,
    "all_gather_object": 2,
    "broadcast_object_list": 2,
}
POINT_TO_POINT = ("send", "recv")  # waiting, but no common arrival to compare

_undo: list[Callable[[], None]] = []
_retired = [False]  # the hooks were taken off but the optimizer's step hook, which does nothing (`retire`)
_group_keys: dict[int, str] = {}
_in_backward = [0]  # backward passes running (torch.autograd.backward, wrapped by _hook_ddp)
# (perf_counter, wall, thread) of each collective a DDP comm hook called in the running backward (the first SENT)
_bucket_sent: list[tuple[float, float, int]] = []
SENT = 256
# id(work) -> (work, arrival entry): collectives started with async_op=True, timed when they are waited on
_started: dict[int, tuple[Any, list | None]] = {}
STARTED = 1024  # at most this many kept: a script that never waits on its works does not grow it


def install(record: StepRecord) -> None:
    """Put every hook in place, feeding ``record``. Idempotent; `uninstall` undoes it."""
    if _undo:
        return
    _hook_optimizer(record)
    _hook_forward(record)
    _hook_data_loader(record)
    _hook_collectives(record)
    _hook_ddp(record)


def uninstall() -> None:
    """Remove every hook `install` put in place."""
    while _undo:
        _undo.pop()()
    _group_keys.clear()
    _retired[0] = False


def retire() -> None:
    """Remove every hook but the optimizer's step hook, which does nothing from now on: this may run inside an
    optimizer step (a window ends there), while torch goes through its step hooks, which must not change then.
    `uninstall` removes it."""
    _retired[0] = True
    while len(_undo) > 1:  # the optimizer's is the first installed
        _undo.pop()()


def group_key(group: Any) -> str:
    """``"world"``, or the group's global ranks joined by ``-`` (as debug mode names groups)."""
    if group is None:
        return "world"
    key = _group_keys.get(id(group))
    if key is None:
        import torch.distributed as dist

        if group is dist.GroupMember.WORLD:
            return "world"
        try:
            ranks = sorted(dist.get_process_group_ranks(group))
        except (RuntimeError, ValueError, AttributeError):  # not a group of this job: torch will say so
            return "?"
        key = "world" if len(ranks) == dist.get_world_size() else "-".join(map(str, ranks))
        _group_keys[id(group)] = key
    return key


def _hook_optimizer(record: StepRecord) -> None:
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    def before_step(optimizer, args, kwargs) -> None:
        if _retired[0]:
            return
        if record.optimizer is None:
            record.optimizer = id(optimizer)
            _stop_forward_boundaries()
            record.use_device((p for group in optimizer.param_groups for p in group["params"]), again=True)
            record.restart()
        elif id(optimizer) == record.optimizer:
            record.step_boundary()

    handle = register_optimizer_step_pre_hook(before_step)
    _undo.append(handle.remove)


_forward_handles: list[Any] = []


def _hook_forward(record: StepRecord) -> None:
    """Until an optimizer steps: a step starts with each outermost forward."""
    if record.optimizer is not None:  # installed again: the optimizer marks the steps
        return
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    depth = [0]

    def before(module, args) -> None:
        if depth[0] == 0:
            record.use_device(module.parameters())
            record.step_boundary()
        depth[0] += 1

    def after(module, args, output) -> None:
        depth[0] = max(0, depth[0] - 1)

    _forward_handles[:] = [register_module_forward_pre_hook(before), register_module_forward_hook(after)]
    _undo.append(_stop_forward_boundaries)


def _stop_forward_boundaries() -> None:
    for handle in _forward_handles:
        handle.remove()
    _forward_handles.clear()


def _hook_data_loader(record: StepRecord) -> None:
    from torch.utils.data.dataloader import _BaseDataLoaderIter

    original = _BaseDataLoaderIter.__next__

    @functools.wraps(original)
    def timed_next(self):
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(self)
        finally:
            record.add_data(time.perf_counter() - start, time.thread_time() - cpu)

    _BaseDataLoaderIter.__next__ = timed_next
    _undo.append(lambda: setattr(_BaseDataLoaderIter, "__next__", original))


def _hook_collectives(record: StepRecord) -> None:
    import torch.distributed as dist

    if not dist.is_available():
        return
    for name, position in COLLECTIVES.items():
        if hasattr(dist, name):
            _wrap(dist, name, _timed(getattr(dist, name), record, position))
    for name in POINT_TO_POINT:
        if hasattr(dist, name):
            _wrap(dist, name, _timed(getattr(dist, name), record, None))
    _hook_waits(record, dist)
    # tensor parallelism's and DTensor's: the functional collectives
    functional.hook(record, _wrap, group_key)
    _undo.append(functional.forget)


def _hook_waits(record: StepRecord, dist: Any) -> None:
    """The wait on a collective started with ``async_op=True`` is the rank's waiting for its peers (FSDP2
    starts every all-gather and reduce-scatter so, then waits on it before the layer that needs it)."""
    work = getattr(dist.distributed_c10d, "Work", None)
    if work is None:
        return
    original = work.wait

    def wait(self, *args, **kwargs):
        started = _started.pop(id(self), None)
        if started is None or started[0] is not self:
            return original(self, *args, **kwargs)
        clock = record.device
        if clock is not None:
            clock.mark("b")
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(self, *args, **kwargs)
        finally:
            record.add_comm(time.perf_counter() - start, time.thread_time() - cpu)
            record.left(started[1], time.time())
            if clock is not None:
                clock.mark("a")

    _wrap(work, "wait", functools.wraps(original)(wait))
    _undo.append(_started.clear)


def _wrap(owner: Any, name: str, wrapper: Callable) -> None:
    original = getattr(owner, name)
    setattr(owner, name, wrapper)
    _undo.append(lambda: setattr(owner, name, original))


def _timed(original: Callable, record: StepRecord, group_position: int | None) -> Callable:
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if _in_backward[0] and kwargs.get("async_op"):  # a DDP comm hook's bucket: timed as DDP's reduction
            if len(_bucket_sent) < SENT:
                _bucket_sent.append((time.perf_counter(), time.time(), threading.get_ident()))
            return original(*args, **kwargs)
        if group_position is not None:
            group = kwargs["group"] if "group" in kwargs else (
                args[group_position] if len(args) > group_position else None
            )  # fmt: skip
            entry = record.arrived(group_key(group), time.time())
        else:
            entry = None
        # on CUDA its stream's time in the collective (NCCL's kernels waiting for the peers) is not device work;
        # one started with async_op=True holds the stream only when it is waited on (`_hook_waits`)
        clock = None if kwargs.get("async_op") else record.device
        if clock is not None:
            clock.mark("b")
        start, cpu = time.perf_counter(), time.thread_time()
        work = None
        try:
            work = original(*args, **kwargs)
            return work
        finally:
            record.add_comm(time.perf_counter() - start, time.thread_time() - cpu)
            if clock is not None:
                clock.mark("a")
            if not kwargs.get("async_op"):
                record.left(entry, time.time())
            elif work is not None:  # left when it is waited on (_hook_waits)
                if len(_started) >= STARTED:
                    _started.pop(next(iter(_started)))
                _started[id(work)] = (work, entry)

    return wrapper


LEARN = 3  # synchronised backward passes over which each DDP model's last-ready gradients are learned
LEARNED = "_torchdoctor_last_gradients"  # the DDP model's attribute that keeps them (ids of its parameters)


def _hook_ddp(record: StepRecord) -> None:
    """DDP reduces gradients in C++. Without a comm hook (DDP going through any Python comm hook costs ~3% of
    a step, torch's own default hook too): a post-accumulate-grad hook on the parameter whose gradient is
    ready last stamps when this rank's own backward was done (its last bucket goes out), and the end of
    ``torch.autograd.backward`` — DDP waits for its reductions before the backward returns — when the peers
    had arrived. Which parameter is last is learned: every parameter is hooked for the first `LEARN`
    synchronised backward passes, then only those that were last (kept on the model for the next install)."""
    try:
        import torch.autograd
        from torch.nn.parallel import DistributedDataParallel
    except ImportError:  # a torch built without distributed
        return
    pending: list[_DdpTiming] = []  # the models whose gradients were ready in the running backward
    original_forward = DistributedDataParallel.forward
    original_backward = torch.autograd.backward
    timings: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> _DdpTiming

    @functools.wraps(original_forward)
    def forward(self, *args, **kwargs):
        timing = timings.get(self)
        if timing is None:
            timing = timings[self] = _DdpTiming(self, pending, record)
        timing.sync = self.require_backward_grad_sync and torch.is_grad_enabled()
        return original_forward(self, *args, **kwargs)

    @functools.wraps(original_backward)
    def backward(*args, **kwargs):
        if not _in_backward[0]:
            _bucket_sent.clear()
        _in_backward[0] += 1
        try:
            result = original_backward(*args, **kwargs)
        except BaseException:
            for timing in pending:
                timing.ready = timing.ready_event = None
            pending.clear()
            raise
        finally:
            _in_backward[0] -= 1
        if pending:
            done, done_wall = time.perf_counter(), time.time()
            clock = record.device
            for timing in pending:
                if clock is not None and timing.sync:  # the device's time in the reduction: not its work
                    clock.span(timing.ready_event, clock.event_now())
                timing.ready_event = None
                timing.reduced(record, done, done_wall, _bucket_sent)
            pending.clear()
        return result

    # on CUDA the stream's wait for the peers in DDP's buffer broadcast before each forward (a model with buffers,
    # BatchNorm's, under broadcast_buffers=True: a collective in C++, which the hooks on torch.distributed do not
    # see) is not device work: bracketed by events, or a rank that waits there for a late peer looks busier
    original_sync = getattr(DistributedDataParallel, "_sync_buffers", None)

    def sync_buffers(self, *args, **kwargs):
        clock = record.device
        if clock is None:
            return original_sync(self, *args, **kwargs)
        clock.mark("b")
        try:
            return original_sync(self, *args, **kwargs)
        finally:
            clock.mark("a")

    DistributedDataParallel.forward = forward
    torch.autograd.backward = backward
    if original_sync is not None:
        DistributedDataParallel._sync_buffers = unless_compiling(original_sync, sync_buffers)

    def undo() -> None:
        DistributedDataParallel.forward = original_forward
        torch.autograd.backward = original_backward
        if original_sync is not None:
            DistributedDataParallel._sync_buffers = original_sync
        for timing in list(timings.values()):
            timing.remove()
        timings.clear()

    _undo.append(undo)


class _DdpTiming:
    """One DDP model's hooks and stamps: its gradients' readiness in the running backward."""

    def __init__(self, ddp: Any, pending: list, record: StepRecord | None = None) -> None:
        self.group = group_key(ddp.process_group)
        self.pending = pending
        self.record = record
        self.ready_event: tuple | None = None  # on CUDA: (host time, event, stream) at the latest ready
        self.sync = False
        self.ready: tuple[float, float, int] | None = None  # the latest gradient ready: when, wall, which
        self.thread = 0  # the thread its hook ran on: autograd's, which calls DDP's hook, then the comm hook
        if not hasattr(ddp, LEARNED):
            setattr(ddp, LEARNED, set())
        self.lasts: set[int] = getattr(ddp, LEARNED)
        self.learning = 0 if self.lasts else LEARN
        self.handles = {
            id(p): p.register_post_accumulate_grad_hook(self._gradient_ready)
            for p in ddp.module.parameters()
            if p.requires_grad and (self.learning or id(p) in self.lasts)
        }

    def _gradient_ready(self, parameter: Any) -> None:
        if self.ready is None:
            self.pending.append(self)
        self.ready = (time.perf_counter(), time.time(), id(parameter))
        self.thread = threading.get_ident()
        clock = self.record.device if self.record is not None else None
        if (
            clock is not None and self.sync
        ):  # the device's time from here to the backward's end is the reduction's
            self.ready_event = clock.event_now()

    def reduced(self, record: StepRecord, done: float, done_wall: float, sent: list | None = None) -> None:
        """The backward that made this model's gradients ready returned at ``done`` (wall ``done_wall``).
        ``sent``: the collectives comm hooks called in that backward (perf_counter, wall, thread). The rank
        arrived at the reduction at the first of them after its last gradient was ready, on that thread (our
        gradient hook runs before DDP's, which calls the comm hook there), not when that gradient was ready:
        the hook's work before its collective (compressing a bucket, or anything that delays it) is the rank's
        own, and its peers, which wait for it in their reduction, are the ones waiting. The later ones do not
        count: a hook calls them from a callback once the first is done (PowerSGD), after the peers arrived."""
        ready, ready_wall, last = self.ready
        self.ready = None
        if not self.sync:  # under no_sync(), or a backward DDP did not prepare for: nothing was reduced
            return
        first = min((call for call in sent or () if call[2] == self.thread and call[0] > ready), default=None)
        if first is not None:
            ready, ready_wall = first[0], first[1]
        record.ddp_reduced(self.group, ready, ready_wall, done, done_wall)
        if self.learning:
            self.lasts.add(last)
            self.learning -= 1
            if not self.learning:
                for key in [key for key in self.handles if key not in self.lasts]:
                    self.handles.pop(key).remove()

    def remove(self) -> None:
        """Take the hooks off the parameters."""
        for handle in self.handles.values():
            handle.remove()
        self.handles.clear()
