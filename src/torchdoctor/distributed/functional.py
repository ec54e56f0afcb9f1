"""torch's functional collectives (``torch.distributed._functional_collectives``), which tensor parallelism and
DTensor call (``parallelize_module``'s ``ColwiseParallel``/``RowwiseParallel``, ``redistribute``,
``full_tensor``) and which never pass through ``torch.distributed.all_reduce``: what they are called, where their
group is, and what a call passes, for the straggler watch (`torchdoctor.stragglers.functional`) and debug mode
(`torchdoctor.distributed.debug`).

A functional collective returns at once, its result an ``AsyncCollectiveTensor``; the rank waits for its peers
in ``wait_tensor``, called at the result's first use (``AsyncCollectiveTensor.trigger_wait`` and ``.wait()``
both look ``wait_tensor`` up in the module at call time). DTensor looks every collective up in the module at
call time too (``funcol.all_reduce(...)``), so replacing a module attribute reaches its calls. The names kept
here are those the others go through (``all_gather_tensor`` calls ``all_gather_single``, the ``*_autograd`` and
``*_inplace`` names call these): wrapping one of those too would count a call twice. Code that
``torch.compile`` traced calls torch's C++ ops directly at run time and passes through none of them.
"""

from __future__ import annotations

import functools
import inspect
import sys
import weakref
from collections.abc import Callable
from typing import Any

from torchdoctor.distributed.signature import tensor_signature

MODULE = "torch.distributed._functional_collectives"
# the collectives the others go through, in torch 2.13; an older torch's names for the same (its
# all_gather_tensor / reduce_scatter_tensor were the ones to go through) where the newer is missing
COLLECTIVES = (
    ("all_reduce",),
    ("all_gather_single", "all_gather_tensor"),
    ("reduce_scatter_single", "reduce_scatter_tensor"),
    ("broadcast",),
    ("all_to_all_single",),
    ("all_reduce_coalesced",),
    ("all_gather_single_coalesced", "all_gather_into_tensor_coalesced"),
    ("reduce_scatter_single_coalesced", "reduce_scatter_tensor_coalesced"),
)
# a parameter -> the signature field debug mode compares it as (messages.FIELDS); the rest are left out
COMPARED = {
    "reduceOp": "reduce op",
    "src": "src",
    "gather_dim": "dimension",
    "scatter_dim": "dimension",
    "output_split_sizes": "split sizes",
    "input_split_sizes": "split sizes",
}


def module() -> Any:
    """``torch.distributed._functional_collectives``, or None where this torch has none (or no distributed)."""
    try:
        import torch.distributed as dist

        if not dist.is_available():
            return None
        import torch.distributed._functional_collectives as funcol
    except (ImportError, RuntimeError):
        return None
    return funcol


def collectives(funcol: Any) -> list[str]:
    """The functional collectives of ``funcol`` to wrap: one name of each of `COLLECTIVES`, the newest it has."""
    found = []
    for names in COLLECTIVES:
        name = next((n for n in names if callable(getattr(funcol, n, None))), None)
        if name is not None:
            found.append(name)
    return found


def unless_compiling(original: Callable, wrapper: Callable) -> Callable:
    """``wrapper``, but ``original`` itself while torch.compile traces the call (nothing of ours in a graph):
    debug mode's checks and the straggler watch's timing alike."""
    import torch

    compiling = torch.compiler.is_compiling

    @functools.wraps(original)
    def call(*args, **kwargs):
        if compiling():
            return original(*args, **kwargs)
        return wrapper(*args, **kwargs)

    call.__torchdoctor_original__ = original
    return call


def parameters(function: Callable) -> tuple[str, ...]:
    """The names of ``function``'s parameters, in order (those of the original, through ``functools.wraps``)."""
    return tuple(inspect.signature(inspect.unwrap(function)).parameters)


def arguments(names: tuple[str, ...], args: tuple, kwargs: dict) -> dict[str, Any]:
    """A call's arguments by parameter name."""
    given = dict(zip(names, args, strict=False))
    given.update(kwargs)
    return given


def cache_key(group: Any) -> Any:
    """A functional collective's ``group`` argument as a key to remember what was found of it: ``group``
    itself where it can be one (a group name, a process group), else what names it."""
    if isinstance(group, tuple):  # (mesh, dimension): a new tuple at every call
        return id(group[0]), group[1]
    if isinstance(group, list):
        return tuple(map(str, group))
    return group if isinstance(group, str) else id(group)


# (id of a DeviceMesh, its dimension) -> that dimension's process group, weakly: a group kept alive here would
# outlive the script's destroy_process_group (and change how its teardown ends)
_groups: dict[tuple[int, int], weakref.ref] = {}


def process_group(group: Any, tag: str = "") -> Any:
    """The ``ProcessGroup`` a functional collective's ``group`` names: a process group, a 1-D ``DeviceMesh``,
    ``(mesh, dimension)``, a group name, or a list of ranks."""
    if isinstance(group, tuple) and len(group) == 2:
        mesh, dimension = group
        key = (id(mesh), dimension)
        known = _groups.get(key)
        found = known() if known is not None else None
        if found is None:
            found = mesh.get_group(dimension)
            _groups[key] = weakref.ref(found)
        return found
    if isinstance(group, str):
        return _named(group)
    if isinstance(group, list):
        funcol = sys.modules[MODULE]
        return _named(funcol._resolve_group_name(group, tag))
    if hasattr(group, "get_group") and hasattr(group, "ndim"):  # a 1-D DeviceMesh
        return process_group((group, 0))
    return group


def _named(name: str) -> Any:
    from torch._C._distributed_c10d import _resolve_process_group

    return _resolve_process_group(name)


def forget_meshes() -> None:
    """Forget the groups found from meshes (the process groups are going away)."""
    _groups.clear()


def describe(given: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """What debug mode compares of a functional collective's call: the input tensors' shapes, dtypes and
    devices, and its reduce op, source rank, gather or scatter dimension and split sizes where it has them."""
    signature = tensor_signature(given.get(names[0]))
    for name, field in COMPARED.items():
        if name in given:
            value = given[name]
            signature[field] = str(value).lower() if name == "reduceOp" else _plain(value)
    return signature


def quick(given: dict[str, Any], names: tuple[str, ...]) -> tuple:
    """A cheap key of the same (this rank's own cache key, never compared across ranks)."""
    first = given.get(names[0])
    if isinstance(first, (list, tuple)):
        tensors = tuple((t.shape, t.dtype, t.device) for t in first)
    else:
        tensors = (first.shape, first.dtype, first.device)
    return tensors, tuple(_plain(given.get(name)) for name in COMPARED if name in given)


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(int(v) for v in value)
    return value if value is None or isinstance(value, (int, str)) else str(value)
