"""`find_executable_batch_size`: run a function at the largest batch size that fits in memory.

Same call forms as ``accelerate.find_executable_batch_size`` (decorator with arguments, or called with the
function), plus ``search="binary"`` to find the largest size that fits instead of the first power-of-two step
down, and agreement across ranks so that every rank of a distributed job ends with the same batch size.
"""

from __future__ import annotations

import functools
import gc
import inspect
import logging
import operator
from collections.abc import Callable
from typing import Any

SEARCHES = ("halve", "binary")

# Substrings of the errors an allocator raises when memory runs out: CUDA/HIP/XPU ("CUDA out of memory.",
# "CUDA error: out of memory"), MPS ("MPS backend out of memory"), the CPU allocator, cuBLAS failing to
# allocate its workspace, and cuDNN refusing a too-large problem, which a smaller batch fixes.
_OUT_OF_MEMORY_TEXTS = (
    "out of memory",
    "DefaultCPUAllocator: can't allocate memory",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_NOT_SUPPORTED",
)

# What each rank reports after a try, in its own slot of the agreement tensor.
_FITS, _OUT_OF_MEMORY, _OTHER_ERROR = 0, 1, 2


def _logger() -> logging.Logger | Any:
    """The rank-aware logger when torchdoctor has one (one line from the main process), else a plain one."""
    try:
        from torchdoctor.distributed.logging import get_logger
    except ImportError:
        return logging.getLogger(__name__)
    return get_logger(__name__)


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` means "out of memory", i.e. a smaller batch could succeed.

    True for ``torch.OutOfMemoryError`` and for a ``RuntimeError`` whose message is a CUDA/HIP/XPU/MPS
    out-of-memory, the CPU allocator's "can't allocate memory", cuBLAS's ``CUBLAS_STATUS_ALLOC_FAILED`` or
    cuDNN's ``CUDNN_STATUS_NOT_SUPPORTED``.

    >>> is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    True
    >>> is_out_of_memory(ValueError("out of memory"))
    False
    """
    import torch

    if isinstance(error, getattr(torch, "OutOfMemoryError", ())):
        return True
    if not isinstance(error, RuntimeError):  # torch.AcceleratorError ("CUDA error: ...") is one too
        return False
    # NCCL's "Cuda failure 'out of memory'" leaves a broken communicator that no smaller batch repairs
    if isinstance(error, getattr(getattr(torch, "distributed", None), "DistError", ())):
        return False
    message = str(error)
    return any(text in message for text in _OUT_OF_MEMORY_TEXTS)


def free_device_memory() -> None:
    """Collect garbage and hand the cached blocks of every accelerator in use back to the device."""
    import torch

    gc.collect()
    if torch.cuda.is_initialized():  # also ROCm; never initialise CUDA just to empty its cache
        torch.cuda.empty_cache()
    for name in ("xpu", "npu"):
        device = getattr(torch, name, None)
        if device is not None and device.is_available():
            device.empty_cache()
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        torch.mps.empty_cache()


def find_executable_batch_size(
    function: Callable[..., Any] | None = None,
    starting_batch_size: int = 128,
    *,
    search: str = "halve",
    reduce_batch_size_fn: Callable[..., int] | None = None,
) -> Callable[..., Any]:
    """Call ``function(batch_size, ...)`` with smaller batch sizes until it runs without running out of memory.

    ``function`` takes the batch size as its first argument; call the wrapped function without it. On
    out-of-memory (see `is_out_of_memory`) the memory is freed and ``function`` is retried with half the
    batch size (or ``reduce_batch_size_fn()``); any other error propagates unchanged. With
    ``search="binary"``, after the first size that fits, a binary search between it and the last size that
    did not returns the largest size that fits: from 128 with out-of-memory above 37, ``"halve"`` returns 32
    after 3 tries, ``"binary"`` 37 after 5 more. Each try runs ``function`` to the end, so for
    ``"binary"`` pass a short probe (one training step) that returns the batch size; the result of the
    best try so far is held while larger sizes are tried, so keep it small.

    In a distributed job (default process group initialised) every rank tries the same size and the ranks
    agree after each try: if one rank ran out of memory, all of them try smaller, so all end with the same
    batch size. Like accelerate, a later call starts from the size the previous call settled on.

    >>> @find_executable_batch_size(starting_batch_size=128)
    ... def train(batch_size, model):
    ...     return batch_size
    >>> train("model")
    128
    """
    if search not in SEARCHES:
        raise ValueError(f"search={search!r}: choose one of {', '.join(map(repr, SEARCHES))}")
    if isinstance(starting_batch_size, bool) or not isinstance(starting_batch_size, int):
        raise TypeError(f"starting_batch_size={starting_batch_size!r}: expected a positive int")
    if starting_batch_size < 1:
        raise ValueError(f"starting_batch_size={starting_batch_size}: expected a positive int")
    if reduce_batch_size_fn is not None and not callable(reduce_batch_size_fn):
        raise TypeError(
            f"reduce_batch_size_fn={reduce_batch_size_fn!r} is not callable; pass a function that returns "
            "the next, smaller batch size"
        )
    if function is not None and not callable(function):
        hint = (
            f"; for a starting size, find_executable_batch_size(starting_batch_size={function!r})"
            if isinstance(function, int) and not isinstance(function, bool)
            else ""
        )
        raise TypeError(
            f"find_executable_batch_size: function={function!r} is not callable: decorate the function that "
            f"takes the batch size{hint}"
        )
    if function is None:
        return functools.partial(
            find_executable_batch_size,
            starting_batch_size=starting_batch_size,
            search=search,
            reduce_batch_size_fn=reduce_batch_size_fn,
        )

    name = getattr(function, "__name__", repr(function))
    state = {"batch_size": starting_batch_size}

    @functools.wraps(function)
    def run_with_batch_size(*args: Any, **kwargs: Any) -> Any:
        _refuse_batch_size_argument(function, name, args, kwargs)
        free_device_memory()
        size, result = _search(
            function, name, args, kwargs, state["batch_size"], search, reduce_batch_size_fn
        )
        state["batch_size"] = size
        return result

    # help() and IDEs show what the caller passes: the signature without the batch size
    del run_with_batch_size.__wrapped__
    try:
        signature = inspect.signature(function)
        run_with_batch_size.__signature__ = signature.replace(
            parameters=list(signature.parameters.values())[1:]
        )
    except (TypeError, ValueError):
        pass
    return run_with_batch_size


def _refuse_batch_size_argument(function: Callable, name: str, args: tuple, kwargs: dict) -> None:
    """The decorator passes the batch size; passing it too shifts every argument by one (accelerate's check)."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check against
        return
    if not params:
        raise TypeError(f"`{name}` takes no arguments; it must take the batch size as its first argument")
    if params[0].name in kwargs:
        raise TypeError(
            f"Batch size was passed into `{name}` as `{params[0].name}=` when called. "
            f"Remove it, as the decorator already passes it: `{name}(...)` without `{params[0].name}=`"
        )
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(args) + 1 <= len(positional):
        return
    shown = ", ".join(f"{p.name}={value!r}" for p, value in zip(positional[1:], args[1:], strict=False))
    raise TypeError(
        f"Batch size was passed into `{name}` as the first argument when called. "
        f"Remove it, as the decorator already passes it: `{name}({shown})`"
    )


def _search(
    function: Callable,
    name: str,
    args: tuple,
    kwargs: dict,
    start: int,
    search: str,
    reduce_batch_size_fn: Callable[..., int] | None,
) -> tuple[int, Any]:
    """Try sizes from ``start`` down, then (binary) up again; return the size settled on and its result."""
    log = _logger()
    size = start
    fits: tuple[int, Any] | None = None  # the largest size that fitted on every rank, with its result
    too_big: int | None = None  # the smallest size that did not
    tries = 0
    while True:
        if size < 1:
            raise RuntimeError(
                f"No executable batch size found for `{name}`: out of memory even at batch size "
                f"{too_big}, the smallest tried"
            )
        tries += 1
        outcome, result, error = _try(function, size, args, kwargs)
        statuses = _agree(outcome)
        out_of_memory = [rank for rank, status in enumerate(statuses) if status == _OUT_OF_MEMORY]
        crashed = [rank for rank, status in enumerate(statuses) if status == _OTHER_ERROR]
        if crashed:
            if error is not None:
                raise error  # this rank's own error, unchanged
            raise RuntimeError(
                f"`{name}` failed on rank(s) {_ranks(crashed)} at batch size {size} with an error that is "
                f"not out-of-memory; stopping here too rather than waiting for them forever"
            )
        if not out_of_memory:
            log.info("find_executable_batch_size: batch size %d: fits", size)
            fits = (size, result)
            if search == "halve" or too_big is None or too_big - size <= 1:
                break
            size = (size + too_big) // 2
            continue
        where = f" on rank(s) {_ranks(out_of_memory)} of {len(statuses)}" if len(statuses) > 1 else ""
        reason = f" ({error})" if error else ""
        log.info("find_executable_batch_size: batch size %d: out of memory%s%s", size, where, reason)
        too_big = size
        if fits is None:
            size = _smaller(size, reduce_batch_size_fn)
        elif too_big - fits[0] <= 1:
            break
        else:
            size = (fits[0] + too_big) // 2
    log.info("find_executable_batch_size: settled on batch size %d after %d tries", fits[0], tries)
    return fits


def _try(function: Callable, size: int, args: tuple, kwargs: dict) -> tuple[int, Any, Any]:
    """Run one try: (outcome, result, error), where error is the exception or a one-line OOM reason."""
    try:
        return _FITS, function(size, *args, **kwargs), None
    except Exception as error:
        if not is_out_of_memory(error):
            return _OTHER_ERROR, None, error
        reason = _one_line(error)
    # Out of the except block, the traceback (and the tensors its frames hold) is gone: now free them.
    free_device_memory()
    return _OUT_OF_MEMORY, None, reason


def _one_line(error: BaseException, limit: int = 160) -> str:
    """The gist of an out-of-memory message for a log line, without the CPU allocator's ``[enforce fail]``."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if text.startswith("[enforce fail") and "] " in text:
        text = text.split("] ", 1)[1].removeprefix("err == 0. ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _smaller(size: int, reduce_batch_size_fn: Callable[..., int] | None) -> int:
    if reduce_batch_size_fn is None:
        return size // 2
    try:  # accelerate's reduce_batch_size_fn takes no argument; ours may also take the size that failed
        params = inspect.signature(reduce_batch_size_fn).parameters
    except (TypeError, ValueError):
        params = {}
    new = reduce_batch_size_fn(size) if params else reduce_batch_size_fn()
    name = getattr(reduce_batch_size_fn, "__name__", repr(reduce_batch_size_fn))
    try:
        number = None if isinstance(new, bool) else operator.index(new)  # numpy ints too
    except TypeError:
        number = None
    if number is None or not 1 <= number < size:
        raise ValueError(
            f"reduce_batch_size_fn {name} returned {new!r} after batch size {size} ran out of memory; "
            f"it must return a smaller int, at least 1"
        )
    return number


def _agree(outcome: int) -> list[int]:
    """Every rank's outcome of this try, from one small all-reduce; just ours outside a distributed job."""
    try:
        import torch.distributed as dist
    except ImportError:
        return [outcome]
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return [outcome]
    import torch

    statuses = torch.zeros(dist.get_world_size(), dtype=torch.int32, device=_collective_device())
    statuses[dist.get_rank()] = outcome
    dist.all_reduce(statuses)  # each rank fills its own slot; the sum is everyone's outcome
    return statuses.tolist()


def _collective_device():
    """A device the default group's backend can reduce on: CPU for gloo, the current accelerator otherwise."""
    import torch
    import torch.distributed as dist

    if "gloo" in str(dist.get_backend()) or "mpi" in str(dist.get_backend()):
        return torch.device("cpu")
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        kind = accelerator.current_accelerator().type
        return torch.device(kind, accelerator.current_device_index())
    return torch.device("cuda", torch.cuda.current_device())


def _ranks(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks))
