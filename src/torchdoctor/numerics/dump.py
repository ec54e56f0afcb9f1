"""The overflow dump: the text printed at the first inf/nan (transformers' text, byte for byte, plus the frame
lines transformers cannot see and, with several ranks, the rank line), and `OverflowReport`, that text carrying
its frames as data (JSON, a plot). What to try next (`advice`) is not part of it: it goes into the exception.
"""

from __future__ import annotations

import json
from typing import Any

from torchdoctor.numerics.frames import COLUMNS, Frame


def dump_text(
    frames: list[Frame], header_batch: int, direction: str = "forward", extra_header: str = ""
) -> str:
    """What transformers prints at the first inf/nan, plus our optional extra header line (the rank)."""
    where = " in backward" if direction == "backward" else ""
    lines = [
        "",
        f"Detected inf/nan{where} during batch_number={header_batch}",
        *([extra_header] if extra_header else []),
        f"Last {len(frames)} {direction} frames:",
        COLUMNS,
        "\n".join(f.text() for f in frames),
        "\n\n",
    ]
    return "\n".join(lines)


class OverflowReport(str):
    """The dump text (a ``str``, as printed) that also carries the frames as data.

    ``report.frames`` lists `Frame`s, ``report.to_json()`` serialises them, ``report.plot("overflow.png")``
    draws abs-max per frame (needs matplotlib: ``pip install 'torchdoctor[plot]'``). ``report.advice`` is what
    to try next (`torchdoctor.numerics.advice`; "" when there is nothing sure to say), kept out of the text.
    """

    frames: list[Frame]
    module_name: str
    batch_number: int
    direction: str
    rank: dict[str, Any]
    advice: str

    def __new__(
        cls,
        text: str,
        frames: list[Frame],
        module_name: str,
        batch_number: int,
        direction: str = "forward",
        rank: dict[str, Any] | None = None,
        advice: str = "",
    ) -> OverflowReport:
        report = super().__new__(cls, text)
        report.frames = list(frames)
        report.module_name = module_name
        report.batch_number = batch_number
        report.direction = direction
        report.rank = rank or {}
        report.advice = advice
        return report

    def to_dict(self) -> dict[str, Any]:
        return {
            "detected": "inf/nan",
            "direction": self.direction,
            "batch_number": self.batch_number,
            "module": self.module_name,
            "rank": self.rank,
            "advice": self.advice,
            "frames": [f.to_dict() for f in self.frames],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def plot(self, path: str, title: str | None = None) -> str:
        """Draw abs max per frame (log scale) to ``path`` (PNG, SVG, … by extension); returns ``path``.

        Needs matplotlib: ``pip install 'torchdoctor[plot]'`` (the ``ImportError`` says so).
        """
        from torchdoctor.numerics.plot import plot_frames

        where = self.module_name or (self.frames[-1].class_name if self.frames else "the model")
        return plot_frames(
            self.frames,
            path,
            title=title or f"inf/nan in {self.direction} of {where}, batch {self.batch_number}",
        )
