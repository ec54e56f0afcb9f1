"""Which values a frame reports, and under which name (``input[0]``, ``output[1][0]``, ``output[loss]``).

The lines transformers' detector prints come first and under the same names: positional inputs, the output,
a tuple output's items and a tuple item's items. Where transformers stops ("not a tensor") this goes on with
extra lines: keyword arguments (``input[mask]``), dicts and ``ModelOutput``s (``output[loss]``), lists,
dataclasses, at any depth.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from torchdoctor.numerics.measure import NONE, NOT_A_TENSOR, Measurement

# a container nested deeper than this is reported as "not a tensor" and not opened (guards against cycles)
MAX_DEPTH = 32
_INPUT_NAMES = tuple(f"input[{i}]" for i in range(32))
_OUTPUT_NAMES = tuple(f"output[{i}]" for i in range(32))

Measure = Callable[[torch.Tensor], Measurement]


def frame_items(
    args: tuple, kwargs: Mapping[str, Any] | None, output: Any, measure: Measure
) -> list[tuple[str, Measurement]]:
    """``(name, measurement)`` for every value a forward frame reports: transformers' lines, then the extras.

    ``measure`` turns a tensor into a measurement; ``None`` and other values get `NONE` and `NOT_A_TENSOR`.
    """
    items: list[tuple[str, Measurement]] = []
    for i, x in enumerate(args):
        add_value(items, _INPUT_NAMES[i] if i < 32 else f"input[{i}]", x, measure, 0)
    if kwargs:
        for key, x in kwargs.items():
            # models pass dozens of unset options (None, False, ints): noise, not information
            add_value(items, f"input[{key}]", x, measure, 0, True)
    output_items(items, output, measure)
    return items


def output_items(items: list, output: Any, measure: Measure, name: str = "output") -> None:
    """transformers' rule for outputs: a tuple's items are ``output[i]``, a tuple item's items ``output[i][j]``."""
    if isinstance(output, tuple):
        for i, x in enumerate(output):
            item_name = _OUTPUT_NAMES[i] if i < 32 and name == "output" else f"{name}[{i}]"
            if isinstance(x, tuple):
                for j, y in enumerate(x):
                    add_value(items, f"{item_name}[{j}]", y, measure, 1)
            else:
                add_value(items, item_name, x, measure, 1)
    else:
        add_value(items, name, output, measure, 0)


def add_value(items: list, name: str, value: Any, measure: Measure, depth: int, extra: bool = False) -> None:
    """Append ``(name, measurement)`` for ``value`` to ``items``, then for what is inside it (extra lines)."""
    if isinstance(value, torch.Tensor):
        items.append((name, measure(value)))
    elif value is None:
        if not extra:
            items.append((name, NONE))
    else:
        inside = children(value) if depth < MAX_DEPTH else []
        # transformers' own lines always; our extra lines only for tensors and what may hold them
        if not extra or inside or is_container(value):
            items.append((name, NOT_A_TENSOR))
        for key, item in inside:
            add_value(items, f"{name}[{key}]", item, measure, depth + 1, True)


def expand(value: Any, name: str, depth: int = 0) -> Iterator[tuple[str, Any]]:
    """``value`` itself, then, if it is a container, everything inside it under ``name[key]``."""
    yield name, value
    if depth >= MAX_DEPTH or value is None or isinstance(value, torch.Tensor):
        return
    for key, item in children(value):
        yield from expand(item, f"{name}[{key}]", depth + 1)


def is_container(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple)) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )


def children(value: Any) -> list[tuple[Any, Any]]:
    """The items of a dict, ``ModelOutput``, list, tuple or dataclass instance; ``[]`` for anything else."""
    try:
        if isinstance(value, Mapping):  # ModelOutput is a Mapping that leaves out unset (None) fields
            return list(value.items())
        if isinstance(value, (list, tuple)):
            return list(enumerate(value))
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    except Exception:  # noqa: BLE001 - a container that fails to list itself is just "not a tensor"
        pass
    return []
