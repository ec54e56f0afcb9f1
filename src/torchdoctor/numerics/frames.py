"""Frames as data: one module call, and one line per value it reported.

A frame is one module call: the module's qualified name and class, then one entry per parameter, input and
output (or, in the backward pass, per gradient). An entry is either measured (abs min, abs max) or labelled
(``None``, ``not a tensor``, ``empty``, …). ``Frame.text()`` is the text transformers' detector prints for it,
byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PREFIX = " " * 17  # transformers' indent of module lines and banners
COLUMNS = f"{'abs min':8} {'abs max':8} metadata"


@dataclass(slots=True)
class Entry:
    """One reported value of a frame: ``weight``, ``input[0]``, ``output[loss]``, ``grad_output[0]``, …"""

    name: str
    min: Any = None  # float once measured; a 0-d device tensor until the batch's one sync
    max: Any = None
    label: str = ""  # set when there is nothing to measure: "None", "not a tensor", "empty", "meta", …
    dtype: str = ""  # "float16", "bfloat16", … for measured tensors
    notes: dict[str, Any] | None = None  # "has": ["nans", "infs"], fp8 saturation, underflow share, …

    @property
    def bad(self) -> bool:
        """Holds an inf or a nan (its abs max is not finite)."""
        return not self.label and not (self.max == self.max and abs(self.max) != float("inf"))

    def line(self) -> str:
        if self.label:
            return f"{self.label:>17} {self.name}"
        return f"{self.min:8.2e} {self.max:8.2e} {self.name}"

    def note_lines(self) -> list[str]:
        """Our extra lines under a tensor's line: fp8 saturation, and the underflow share when measured."""
        notes = self.notes or {}
        lines = []
        if notes.get("saturated"):
            lines.append(f"{str(notes['saturated']) + ' saturated':>17} {self.name}")
        if "tiny" in notes and notes.get("numel"):
            lines.append(f"{format(notes['tiny'] / notes['numel'], '.1%') + ' underflow':>17} {self.name}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name}
        if self.label:
            data["label"] = self.label
        else:
            data.update(abs_min=json_float(self.min), abs_max=json_float(self.max), dtype=self.dtype)
        if self.notes:
            data["notes"] = self.notes
        return data


@dataclass
class Frame:
    """One module call (forward, or backward with ``check_gradients=True``)."""

    module_name: str
    class_name: str
    batch_number: int  # 0-indexed batch this call belongs to
    entries: list[Entry] = field(default_factory=list)
    banner: int | None = None  # transformers prints "*** Starting batch number=N ***" inside the next frame
    direction: str = "forward"

    @property
    def bad(self) -> bool:
        return any(e.bad for e in self.entries)

    def text(self) -> str:
        lines = []
        if self.banner is not None:
            lines += [f"\n\n{PREFIX} *** Starting batch number={self.banner} ***", COLUMNS]
        lines.append(f"{PREFIX} {self.module_name} {self.class_name}")
        for entry in self.entries:
            lines.append(entry.line())
            lines += entry.note_lines()
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "module": self.module_name,
            "class": self.class_name,
            "batch_number": self.batch_number,
            "direction": self.direction,
            "bad": self.bad,
            "entries": [e.to_dict() for e in self.entries],
        }


def json_float(value: Any) -> Any:
    """JSON has no inf/nan: those become the strings "inf", "-inf", "nan"."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value
