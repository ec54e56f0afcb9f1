"""Stopping together: any rank may pull the trigger; every rank learns it at the next ``check_trigger()``.

A rank that breaks out of the training loop on its own leaves the others waiting in the next collective.
Instead, the rank that wants to stop calls ``set_trigger()``, and every rank calls ``check_trigger()`` at the
same point of the loop: a collective (one max all-reduce of a single number) that returns True on every rank
when any rank set the trigger, and resets it.

    for batch in loader:
        loss = model(batch).loss
        if not torch.isfinite(loss):
            set_trigger()
        if check_trigger():
            break
"""

from __future__ import annotations

_trigger_set = False


def set_trigger() -> None:
    """Ask every rank to stop (or do anything else together) at the next `check_trigger()`."""
    global _trigger_set
    _trigger_set = True


def check_trigger() -> bool:
    """True on every rank when any rank called `set_trigger()` since the last check; resets the trigger.

    A collective: every rank must call it at the same point. Without a process group it just reads this
    process's trigger.
    """
    global _trigger_set
    import torch.distributed as dist

    fired = _trigger_set
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        import torch

        from torchdoctor.distributed.operations import all_reduce

        flag = torch.tensor([int(fired)], device=_device(dist))
        fired = bool(all_reduce(flag, reduction="max").item())
    _trigger_set = False
    return fired


# the names accelerate's troubleshooting guide uses
set_breakpoint = set_trigger
check_breakpoint = check_trigger


def _device(dist):
    """The device the default process group's backend communicates from (CUDA for NCCL, else CPU)."""
    import torch

    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
