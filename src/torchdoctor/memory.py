"""`find_executable_batch_size`: run a function at the largest batch size that fits in memory.

A drop-in for ``accelerate.find_executable_batch_size`` (accelerate 1.15): same arguments, same call forms,
same sizes tried (×0.9 per out-of-memory, rounded down), same errors. Added: ``search="halve"`` and
``search="binary"`` (the largest size that fits, not the first step down), a log line per try, and agreement
across ranks, so that every rank of a distributed job ends with the same batch size and a rank that runs out of
memory while another is still inside the function is named instead of left hanging.
"""

from __future__ import annotations

import functools
import gc
import inspect
import logging
import operator
from collections.abc import Callable
from typing import Any

from torchdoctor import memory_agreement
from torchdoctor.memory_agreement import FITS, OTHER_ERROR, OUT_OF_MEMORY
from torchdoctor.rank_list import ranks_text

SEARCHES = ("tenth", "halve", "binary")
# accelerate's error, word for word: scripts and tests match on it
REACHED_ZERO = "No executable batch size found, reached zero."

# Substrings of the errors an allocator raises when memory runs out: CUDA/HIP/XPU/NPU/MLU ("CUDA out of
# memory.", "CUDA error: out of memory"), MPS ("MPS backend out of memory"), the CPU allocator, Gaudi (HPU)'s
# device allocator, cuBLAS failing to allocate its workspace, and cuDNN refusing a too-large problem, which a
# smaller batch fixes.
_OUT_OF_MEMORY_TEXTS = (
    "out of memory",
    "DefaultCPUAllocator: can't allocate memory",
    "PT_DEVMEM Allocation failed",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_NOT_SUPPORTED",
)

# oneDNN (ideep) on the CPU: its primitive could not be made, for any status, out of memory among them (its
# scratchpad refused under ulimit -v, found with nanoGPT's model at a size between one that fitted and one that
# ran out): read as out of memory only where a smaller size of the same function already ran
ONEDNN_PRIMITIVE = "could not create a primitive"


def _logger() -> logging.Logger | Any:
    """The rank-aware logger when torchdoctor has one (one line from the main process), else a plain one."""
    try:
        from torchdoctor.distributed.logging import get_logger
    except ImportError:
        return logging.getLogger(__name__)
    return get_logger(__name__)


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` means "out of memory", i.e. a smaller batch could succeed.

    True for ``torch.OutOfMemoryError`` and for a ``RuntimeError`` whose message is a CUDA/HIP/XPU/NPU/MPS
    out-of-memory, the CPU allocator's "can't allocate memory", HPU's ``PT_DEVMEM Allocation failed``, cuBLAS's
    ``CUBLAS_STATUS_ALLOC_FAILED`` or cuDNN's ``CUDNN_STATUS_NOT_SUPPORTED``: every error accelerate's
    ``should_reduce_batch_size`` accepts, and a few more.

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


def release_memory(*objects: Any) -> list[None]:
    """Drop this function's references to ``objects``, free device memory, and return as many ``None``s.

    accelerate's ``release_memory``: assign the result back so that your own references go too.

    >>> model, optimizer = release_memory(model, optimizer)  # doctest: +SKIP
    """
    released: list[None] = [None] * len(objects)
    del objects
    free_device_memory()
    return released


def find_executable_batch_size(
    function: Callable[..., Any] | None = None,
    starting_batch_size: int = 128,
    reduce_batch_size_fn: Callable[..., int] | None = None,
    *,
    search: str = "tenth",
    timeout: float | None = None,
) -> Callable[..., Any]:
    """Call ``function(batch_size, ...)`` with smaller batch sizes until it runs without running out of memory.

    ``function`` takes the batch size as its first argument; call the wrapped function without it. On
    out-of-memory (see `is_out_of_memory`) the memory is freed and ``function`` is retried at a smaller size;
    any other error propagates unchanged. ``search`` says which sizes:

    - ``"tenth"`` (default, accelerate's): ×0.9 rounded down each time, from 128: 128, 115, 103, 92, …
    - ``"halve"``: half each time: 128, 64, 32, … (fewer tries, a smaller batch).
    - ``"binary"``: halve until a size fits, then search between it and the last size that did not for the
      largest size that fits: from 128 with out-of-memory above 37, 37 after 8 tries. Each try runs
      ``function`` to the end, so pass a short probe (one training step) that returns the batch size.

    ``reduce_batch_size_fn()`` (or ``reduce_batch_size_fn(failed_size)``), if given, returns the next size
    instead. Reaching 0 raises accelerate's ``RuntimeError("No executable batch size found, reached
    zero.")``, with the size that last ran out of memory after it. A later call starts from the size the
    previous call settled on.

    In a distributed job (default process group initialised) every rank tries the same size and the ranks agree
    after each try, through the process group's store: if one rank ran out of memory, all try smaller, so all
    end with the same size. A rank waits at most ``timeout`` seconds (default: the process group's timeout,
    plus a margin) for the others, saying whom it waits for; a rank that ran out of memory while another is
    still inside ``function`` (a whole training loop decorated, the other rank waiting in DDP's all-reduce)
    ends with an error naming both and the fix instead of hanging.

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
    if reduce_batch_size_fn is not None and not callable(reduce_batch_size_fn):
        raise TypeError(
            f"reduce_batch_size_fn={reduce_batch_size_fn!r} is not callable; pass a function that returns "
            "the next, smaller batch size"
        )
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise ValueError(f"timeout={timeout!r}: expected a positive number of seconds")
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
            reduce_batch_size_fn=reduce_batch_size_fn,
            search=search,
            timeout=timeout,
        )

    name = getattr(function, "__name__", repr(function))
    state = {"batch_size": starting_batch_size}

    @functools.wraps(function)
    def run_with_batch_size(*args: Any, **kwargs: Any) -> Any:
        _refuse_batch_size_argument(function, name, args, kwargs)
        free_device_memory()
        options = _Search(function, name, search, reduce_batch_size_fn, timeout)
        try:
            size, result = options.run(args, kwargs, state["batch_size"])
        finally:
            if options.agreement is not None:
                options.agreement.leave()
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


class _Search:
    """One call of the wrapped function: the sizes tried, and what the ranks agreed after each."""

    def __init__(
        self, function: Callable, name: str, search: str, reduce_fn: Callable | None, timeout: float | None
    ) -> None:
        self.function, self.name, self.search, self.reduce_fn = function, name, search, reduce_fn
        self.log = _logger()
        self.agreement = None
        self.ranks = 1
        if _distributed():
            self.ranks = _world_size()
            if memory_agreement.has_store():
                self.agreement = memory_agreement.Agreement(name, timeout, self.log)

    def run(self, args: tuple, kwargs: dict, start: int) -> tuple[int, Any]:
        """Try sizes from ``start`` down, then (binary) up again; return the size settled on and its result."""
        size = start
        fits: tuple[int, Any] | None = None  # the largest size that fitted on every rank, with its result
        too_big: int | None = None  # the smallest size that did not
        tries = 0
        while True:
            if size < 1:
                raise RuntimeError(self._reached_zero(too_big, start))
            tries += 1
            statuses, result = self._try(tries, size, args, kwargs, fits is not None and fits[0] < size)
            out_of_memory = sorted(
                rank for rank, entry in statuses.items() if entry["outcome"] == OUT_OF_MEMORY
            )
            if not out_of_memory:
                self.log.info("find_executable_batch_size: batch size %d: fits%s", size, self._on_all())
                fits = (size, result)
                if self.search != "binary" or too_big is None or too_big - size <= 1:
                    break
                size = (size + too_big) // 2
                continue
            self._log_out_of_memory(size, statuses, out_of_memory)
            too_big = size
            if fits is None:
                size = self._smaller(size)
            elif too_big - fits[0] <= 1:
                break
            else:
                size = (fits[0] + too_big) // 2
        self.log.info("find_executable_batch_size: settled on batch size %d after %d tries", fits[0], tries)
        return fits

    def _try(
        self, attempt: int, size: int, args: tuple, kwargs: dict, smaller_ran: bool = False
    ) -> tuple[dict[int, dict], Any]:
        """Run one try here and learn every rank's outcome; raise if any rank failed otherwise.
        ``smaller_ran``: a smaller size already ran, so oneDNN's failure to make a primitive is memory."""
        if self.agreement is not None:
            self.agreement.starting(attempt, size)
        error: BaseException | None = None
        result = None
        try:
            result = self.function(size, *args, **kwargs)
            outcome, message = FITS, ""
        except Exception as raised:
            if smaller_ran and isinstance(raised, RuntimeError) and str(raised).startswith(ONEDNN_PRIMITIVE):
                outcome, message = OUT_OF_MEMORY, f"{_one_line(raised)}: oneDNN's, where a smaller size ran"
            elif not is_out_of_memory(raised):
                if self.agreement is None and self.ranks == 1:
                    raise
                error, outcome, message = raised, OTHER_ERROR, f"{type(raised).__name__}: {_one_line(raised)}"
            else:
                outcome, message = OUT_OF_MEMORY, _one_line(raised)
        if outcome == OUT_OF_MEMORY:
            # Out of the except block, the traceback (and the tensors its frames hold) is gone: now free them.
            free_device_memory()
            if self.ranks > 1:
                self.log.info(
                    "find_executable_batch_size: batch size %d: out of memory on rank %d (%s)",
                    size,
                    _rank(),
                    message,
                    main_process_only=False,
                )
        statuses = self._agree(attempt, size, outcome, message, error)
        crashed = sorted(rank for rank, entry in statuses.items() if entry["outcome"] == OTHER_ERROR)
        if crashed:
            text = memory_agreement.failure_message(self.name, size, statuses, crashed)
            if error is not None and not any(s["outcome"] == OUT_OF_MEMORY for s in statuses.values()):
                raise error  # this rank's own error, unchanged
            raise RuntimeError(text) from error
        return statuses, result

    def _agree(self, attempt: int, size: int, outcome: str, message: str, error) -> dict[int, dict]:
        entry = {"outcome": outcome, "size": size, "error": message}
        if self.agreement is not None and error is not None:
            # No retry can follow another error: tell the others and go at once, with what they said so far
            # (a rank waiting for us in a collective is released when we leave)
            try:
                self.agreement.publish(attempt, size, outcome, message)
                return self.agreement.posted(attempt)
            except RuntimeError as lost:  # the store went away with the others: our own error says more
                raise error from lost
        if self.agreement is not None:
            return self.agreement.outcomes(attempt, size, outcome, message)
        if self.ranks > 1:
            return _all_reduce_outcomes(outcome, message)
        return {0: entry}

    def _log_out_of_memory(self, size: int, statuses: dict[int, dict], out_of_memory: list[int]) -> None:
        if self.ranks == 1:
            self.log.info(
                "find_executable_batch_size: batch size %d: out of memory (%s)", size, statuses[0]["error"]
            )
        else:
            self.log.info(
                "find_executable_batch_size: batch size %d: out of memory on rank(s) %s of %d",
                size,
                ranks_text(out_of_memory),
                self.ranks,
            )

    def _on_all(self) -> str:
        return f" on all {self.ranks} ranks" if self.ranks > 1 else ""

    def _smaller(self, size: int) -> int:
        if self.reduce_fn is None:
            return int(size * 0.9) if self.search == "tenth" else size // 2
        try:  # accelerate's reduce_batch_size_fn takes no argument; ours may also take the size that failed
            params = inspect.signature(self.reduce_fn).parameters
        except (TypeError, ValueError):
            params = {}
        new = self.reduce_fn(size) if params else self.reduce_fn()
        name = getattr(self.reduce_fn, "__name__", repr(self.reduce_fn))
        try:
            number = None if isinstance(new, bool) else operator.index(new)  # numpy ints too
        except TypeError:
            number = None
        if number is not None and number < 1:
            raise RuntimeError(
                f"{REACHED_ZERO} reduce_batch_size_fn {name} returned {new!r} after batch size {size} ran out "
                "of memory"
            )
        if number is None or number >= size:
            raise ValueError(
                f"reduce_batch_size_fn {name} returned {new!r} after batch size {size} ran out of memory; "
                f"it must return a smaller int, at least 1"
            )
        return number

    def _reached_zero(self, too_big: int | None, start: int) -> str:
        if too_big is None:
            return f"{REACHED_ZERO} starting_batch_size={start}: start from a positive batch size"
        return (
            f"{REACHED_ZERO} `{self.name}` ran out of memory even at batch size {too_big}, the smallest tried"
        )


def _distributed() -> bool:
    try:
        import torch.distributed as dist
    except ImportError:
        return False
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def _world_size() -> int:
    import torch.distributed as dist

    return dist.get_world_size()


def _rank() -> int:
    import torch.distributed as dist

    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def _all_reduce_outcomes(outcome: str, message: str) -> dict[int, dict]:
    """Every rank's outcome from one small all-reduce: for a process group without a store (MPI)."""
    import torch
    import torch.distributed as dist

    codes = (FITS, OUT_OF_MEMORY, OTHER_ERROR)
    statuses = torch.zeros(dist.get_world_size(), dtype=torch.int32, device=_collective_device())
    statuses[dist.get_rank()] = codes.index(outcome)
    dist.all_reduce(statuses)  # each rank fills its own slot; the sum is everyone's outcome
    mine = dist.get_rank()
    return {
        rank: {"outcome": codes[code], "error": message if rank == mine else "(see that rank's log)"}
        for rank, code in enumerate(statuses.tolist())
    }


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


def _one_line(error: BaseException, limit: int = 160) -> str:
    """The gist of an out-of-memory message for a log line, without the CPU allocator's ``[enforce fail]``."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if text.startswith("[enforce fail") and "] " in text:
        text = text.split("] ", 1)[1].removeprefix("err == 0. ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
