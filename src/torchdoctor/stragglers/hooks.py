"""The timing hooks: where a step ends, and how long a rank waits for data and for its peers — with no
change to the user's code.

* the step: torch's global optimizer step pre-hook (the first optimizer that steps marks the steps); until
  an optimizer steps, the start of each outermost module forward (global module hooks, removed once an
  optimizer is seen);
* waiting for data: ``DataLoader`` iterators' ``__next__`` (every loader, single- or multi-process);
* waiting for the peers: ``torch.distributed``'s collectives wrapped as debug mode wraps them, and DDP's
  gradient all-reduce through a comm hook equal to DDP's default (registered at the first forward, only
  when the user registered none) that stamps when the last bucket is ready and when the reduction ends.

Nothing here calls a collective of its own.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from torchdoctor.stragglers.record import StepRecord

# collective -> position of its ``group`` argument
COLLECTIVES = {
    "all_reduce": 2,
    "all_gather": 2,
    "all_gather_into_tensor": 2,
    "reduce_scatter_tensor": 3,
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
_group_keys: dict[int, str] = {}


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


def group_key(group: Any) -> str:
    """``"world"``, or the group's global ranks joined by ``-`` (as debug mode names groups)."""
    import torch.distributed as dist

    if group is None or group is dist.GroupMember.WORLD:
        return "world"
    key = _group_keys.get(id(group))
    if key is None:
        try:
            ranks = sorted(dist.get_process_group_ranks(group))
        except (RuntimeError, ValueError, AttributeError):  # not a group of this job: torch will say so
            return "?"
        key = "world" if len(ranks) == dist.get_world_size() else "-".join(map(str, ranks))
        _group_keys[id(group)] = key
    return key


def _hook_optimizer(record: StepRecord) -> None:
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    first: list[int] = []

    def before_step(optimizer, args, kwargs) -> None:
        if not first:
            first.append(id(optimizer))
            _stop_forward_boundaries()
            record.restart()
        elif id(optimizer) == first[0]:
            record.step_boundary()

    handle = register_optimizer_step_pre_hook(before_step)
    _undo.append(handle.remove)


_forward_handles: list[Any] = []


def _hook_forward(record: StepRecord) -> None:
    """Until an optimizer steps: a step starts with each outermost forward."""
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    depth = [0]

    def before(module, args) -> None:
        if depth[0] == 0:
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


def _wrap(owner: Any, name: str, wrapper: Callable) -> None:
    original = getattr(owner, name)
    setattr(owner, name, wrapper)
    _undo.append(lambda: setattr(owner, name, original))


def _timed(original: Callable, record: StepRecord, group_position: int | None) -> Callable:
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if group_position is not None:
            group = kwargs["group"] if "group" in kwargs else (
                args[group_position] if len(args) > group_position else None
            )  # fmt: skip
            entry = record.arrived(group_key(group), time.time())
        else:
            entry = None
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            record.add_comm(time.perf_counter() - start, time.thread_time() - cpu)
            if not kwargs.get("async_op"):
                record.left(entry, time.time())

    wrapper.__torchdoctor_original__ = original
    return wrapper


def _hook_ddp(record: StepRecord) -> None:
    """DDP reduces gradients in C++; a comm hook equal to its default all-reduce shows when this rank's
    last bucket was ready (its own backward done) and when the reduction ended (the peers arrived)."""
    try:
        from torch.nn.parallel import DistributedDataParallel
    except ImportError:  # a torch built without distributed
        return
    original_forward = DistributedDataParallel.forward

    @functools.wraps(original_forward)
    def forward(self, *args, **kwargs):
        if not getattr(self, "_torchdoctor_timed", False):
            self._torchdoctor_timed = True
            if not getattr(self, "_comm_hooks", None):  # the user's own hook stays: then DDP is not timed
                self.register_comm_hook(self.process_group, _timed_all_reduce(record))
        return original_forward(self, *args, **kwargs)

    DistributedDataParallel.forward = forward
    _undo.append(lambda: setattr(DistributedDataParallel, "forward", original_forward))


def _timed_all_reduce(record: StepRecord) -> Callable:
    """DDP's default hook (``default_hooks.allreduce_hook``: divide, then all-reduce), timed."""
    import torch.distributed as dist

    all_reduce = getattr(dist.all_reduce, "__torchdoctor_original__", dist.all_reduce)

    def timed_all_reduce(process_group, bucket):
        group = process_group if process_group is not None else dist.group.WORLD
        if bucket.is_last():
            record.ddp_bucket_ready(group_key(group), time.perf_counter(), time.time())
        tensor = bucket.buffer()
        tensor.div_(group.size())

        def done(future):
            record.ddp_bucket_done(time.perf_counter(), time.time())
            return future.value()[0]

        return all_reduce(tensor, group=group, async_op=True).get_future().then(done)

    return timed_all_reduce
