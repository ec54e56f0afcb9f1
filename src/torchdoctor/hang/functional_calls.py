"""The call log's notes of torch's functional collectives (`torchdoctor.hang.calls`): tensor parallelism's and
DTensor's all-reduces, all-gathers and reduce-scatters, which never pass through ``torch.distributed``'s
functions. Each call is noted as ``torch.distributed``'s are: its process group (the mesh dimension's), the
sequence numbers it used there, the operation (the function's name: ``all_reduce``, ``all_gather_single``,
``reduce_scatter_single``...), the tensor it sends and the caller's frames, the user's ``model(x)`` among them.

A functional collective returns at once (its result waits at its first use, in ``wait_tensor``); the note is
of the call, which is what the flight recorder counts too. The group is found once per group argument, as
the straggler watch finds it (`torchdoctor.stragglers.functional`). Code that ``torch.compile`` traced, and
the backward of a functional collective (its autograd formula calls torch's ops directly), pass through none
of this and are not noted.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import Any

from torchdoctor.distributed import functional
from torchdoctor.hang import calls

# a functional collective's group argument (`functional.cache_key`) -> its process group, weakly: a group kept
# here would outlive destroy_process_group, which shuts it down as its last reference goes
_groups: dict[Any, weakref.ref] = {}
_wrapped: list[str] = []


def record_functional_calls(funcol: Any) -> None:
    """Wrap ``funcol``'s (``torch.distributed._functional_collectives``') collectives so that each call is
    noted in the call log. Idempotent."""
    if _wrapped:
        return
    tensor_type = sys.modules["torch"].Tensor
    for name in functional.collectives(funcol):
        original = getattr(funcol, name)
        try:
            position = functional.parameters(original).index("group")
        except ValueError:  # a torch whose function takes no group: nothing to note it by
            continue
        setattr(funcol, name, _noting(original, calls.OPS.index(name), position, tensor_type))
        _wrapped.append(name)


def _noting(original: Callable, op: int, position: int, tensor_type: type) -> Callable:
    def noting(*args, **kwargs):
        if not calls._ring:
            return original(*args, **kwargs)
        group = kwargs["group"] if "group" in kwargs else args[position] if len(args) > position else None
        try:
            pg = _group(group, kwargs.get("tag", ""))
        except Exception:  # noqa: BLE001 - no group yet, a torch without these: the call itself says why
            return original(*args, **kwargs)
        # the frame above `unless_compiling`'s: the caller (DTensor's redistribute, the user's code)
        tensor = calls._first_tensor(args, tensor_type)
        return calls.call_noted(original, args, kwargs, pg, op, tensor, sys._getframe(2))

    return functional.unless_compiling(original, noting)  # nothing of ours in a compiled graph


def _group(group: Any, tag: str) -> Any:
    key = functional.cache_key(group)
    known = _groups.get(key)
    found = None if known is None else known()
    if found is None:
        found = functional.process_group(group, tag)  # which holds a mesh's groups weakly too
        _groups[key] = weakref.ref(found)
    return found
