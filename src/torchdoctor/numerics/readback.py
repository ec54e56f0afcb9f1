"""Frames as the hooks record them, and the one device-to-host read-back per batch.

On an accelerator every ``.item()`` waits for the device, so the hooks leave their statistics on the device as
0-d tensors and the detector reads all of a batch's back at once, when the batch is over.

Each value of a frame is a `measure.Measurement`; the ones still on a device hold 0-d tensors as their numbers.
"""

from __future__ import annotations

from typing import Any

import torch

from torchdoctor.numerics.frames import Entry, Frame
from torchdoctor.numerics.measure import Measurement

_INF = float("inf")


class RawFrame:
    """A frame as the hooks record it: cheap to build; turned into a `Frame` only to be shown."""

    __slots__ = (
        "module_name",
        "class_name",
        "batch_number",
        "banner",
        "items",
        "header_batch",
        "trace",
        "direction",
    )

    def __init__(
        self,
        module_name: str,
        class_name: str,
        batch_number: int,
        banner: int | None,
        items: list[tuple[str, Measurement]],
        header_batch: int,
        trace: bool,
        direction: str = "forward",
    ) -> None:
        self.module_name = module_name
        self.class_name = class_name
        self.batch_number = batch_number
        self.banner = banner
        self.items = items
        self.header_batch = header_batch  # transformers' counter when the frame was recorded
        self.trace = trace
        self.direction = direction

    def frame(self) -> Frame:
        entries = []
        for name, (label, low, high, dtype, has, notes) in self.items:
            data = dict(notes) if notes else {}
            if has:
                data["has"] = list(has)
            entries.append(Entry(name, low, high, label, dtype, data or None))
        return Frame(
            self.module_name, self.class_name, self.batch_number, entries, self.banner, self.direction
        )


def is_lazy(measurement: Measurement) -> bool:
    """Whether the numbers of ``measurement`` are still on a device."""
    return not measurement.label and isinstance(measurement.abs_max, torch.Tensor)


def read_back(frames: list[RawFrame]) -> None:
    """Turn the statistics still on a device into numbers, in place: one device-to-host copy per device."""
    lazy: dict[int, Measurement] = {}
    for frame in frames:
        for _, m in frame.items:
            if is_lazy(m):
                lazy[id(m)] = m
    if not lazy:
        return
    by_device: dict[Any, list[Measurement]] = {}
    for m in lazy.values():
        by_device.setdefault(m.abs_max.device, []).append(m)
    resolved: dict[int, Measurement] = {}
    for measurements in by_device.values():
        scalars: list[torch.Tensor] = []
        for m in measurements:
            counts = (v for v in (m.notes or {}).values() if isinstance(v, torch.Tensor))
            scalars += [m.abs_min, m.abs_max, *counts]
        try:
            with torch.no_grad():
                values = iter(gather(scalars))
        except Exception:  # noqa: BLE001 - any tensor type (subclasses, fakes, meta) may refuse this: the detector must not break the user's step
            values = None
        for m in measurements:
            dtype, notes = m.dtype, m.notes
            if values is None:
                resolved[id(m)] = Measurement("unreadable", None, None, dtype, None, None)
                continue
            low, high = next(values), next(values)
            if notes:
                notes = {
                    k: _number(next(values)) if isinstance(v, torch.Tensor) else v for k, v in notes.items()
                }
            has = ("nans",) if high != high else ("infs",) if high == _INF else None
            resolved[id(m)] = Measurement("", low, high, dtype, has, notes)
    for frame in frames:
        frame.items = [(name, resolved.get(id(m), m)) for name, m in frame.items]


def gather(scalars: list[torch.Tensor]) -> list[float]:
    """The values of 0-d tensors on one device, in order: one stack per dtype, one copy to the host."""
    by_dtype: dict[torch.dtype, list[int]] = {}
    for i, scalar in enumerate(scalars):
        by_dtype.setdefault(scalar.dtype, []).append(i)
    stacked = [torch.stack([scalars[i] for i in positions]).double() for positions in by_dtype.values()]
    flat = torch.cat(stacked).tolist()
    values = [0.0] * len(scalars)
    order = (i for positions in by_dtype.values() for i in positions)
    for i, value in zip(order, flat, strict=True):
        values[i] = value
    return values


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
