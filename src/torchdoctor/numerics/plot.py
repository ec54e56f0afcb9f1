"""A picture of a dump: abs max per frame on a log scale, the dtype's largest value, the first bad frame.

Needs matplotlib (``pip install 'torchdoctor[plot]'``). Draws on its own figure (no pyplot), so it never
touches the caller's matplotlib state.
"""

from __future__ import annotations

import math

from torchdoctor.numerics.frames import Frame
from torchdoctor.numerics.precision import LIMITS

_FLOAT32_MAX = 3.4028234663852886e38


def plot_frames(frames: list[Frame], path: str, title: str = "") -> str:
    """Draw ``frames`` to ``path`` (PNG, SVG, PDF … by its extension); returns ``path``.

    One point per frame for what the module produced (outputs, or gradients towards its inputs) and one for
    its parameters; inf and nan sit on the top edge as red crosses; the first bad frame is marked.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("report.plot needs matplotlib: pip install 'torchdoctor[plot]'") from error

    dtype, limit = _dtype_limit(frames)
    produced = [_abs_max(f, _is_produced) for f in frames]
    params = [_abs_max(f, _is_parameter) for f in frames]
    finite = [v for v in produced + params if v is not None and math.isfinite(v) and v > 0]
    top = max(finite + [limit]) * 30
    bottom = max(min(finite + [limit]) / 30, 1e-45)

    figure = Figure(figsize=(max(6.0, 0.45 * len(frames) + 2), 4.8), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.set_yscale("log")
    x = list(range(len(frames)))
    backward = bool(frames) and frames[0].direction == "backward"
    labels = ("gradients towards inputs", "parameter gradients") if backward else ("outputs", "parameters")
    for values, label, style in ((produced, labels[0], "o-"), (params, labels[1], "s:")):
        points = [
            (i, v) for i, v in zip(x, values, strict=True) if v is not None and math.isfinite(v) and v > 0
        ]
        if points:
            axes.plot(*zip(*points, strict=True), style, label=label, markersize=4)
    bad_x = [i for i, v in enumerate(produced + params) if v is not None and not math.isfinite(v)]
    if bad_x:
        axes.plot(
            [i % len(frames) for i in bad_x],
            [top / 3] * len(bad_x),
            "x",
            color="red",
            markersize=9,
            label="inf/nan",
        )
    axes.axhline(limit, color="grey", linestyle="--", linewidth=1)
    axes.annotate(
        f"{dtype} max {limit:.3g}",
        (len(frames) / 2, limit),
        textcoords="offset points",
        xytext=(0, 4),
        ha="center",
        fontsize=8,
        color="grey",
    )
    first_bad = next((i for i, f in enumerate(frames) if f.bad), None)
    if first_bad is not None:
        axes.axvline(first_bad, color="red", linewidth=1)
        axes.annotate(
            f"first inf/nan: {frames[first_bad].module_name or frames[first_bad].class_name}",
            (first_bad, bottom * 3),
            textcoords="offset points",
            xytext=(-4, 0),
            rotation=90,
            ha="right",
            va="bottom",
            fontsize=8,
            color="red",
        )
    axes.set_ylim(bottom, top)
    axes.set_xticks(x, [_short(f) for f in frames], rotation=60, ha="right", fontsize=7)
    axes.set_ylabel("abs max")
    direction = frames[0].direction if frames else "forward"
    axes.set_title(title or f"last {len(frames)} {direction} frames", fontsize=10)
    axes.legend(fontsize=8, loc="lower left")
    figure.savefig(path, dpi=120)
    return path


def _is_produced(name: str) -> bool:
    return name.startswith(("output", "grad_input"))


def _is_parameter(name: str) -> bool:
    return not name.startswith(("input", "output", "grad_"))


def _abs_max(frame: Frame, wanted) -> float | None:
    """The largest abs max among the frame's measured entries that ``wanted`` picks; inf/nan win."""
    values = [float(e.max) for e in frame.entries if not e.label and wanted(e.name) and e.max is not None]
    if not values:
        return None
    bad = [v for v in values if not math.isfinite(v)]
    return bad[0] if bad else max(values)


def _dtype_limit(frames: list[Frame]) -> tuple[str, float]:
    """The reduced-precision dtype most entries have, and its largest value (float32 when there is none)."""
    counts: dict[str, int] = {}
    for frame in frames:
        for entry in frame.entries:
            if entry.dtype in LIMITS:
                counts[entry.dtype] = counts.get(entry.dtype, 0) + 1
    if not counts:
        return "float32", _FLOAT32_MAX
    dtype = max(counts, key=counts.get)
    return dtype, LIMITS[dtype]


def _short(frame: Frame) -> str:
    """The module name shortened to its last three parts, so the ticks stay readable."""
    name = frame.module_name or frame.class_name
    parts = name.split(".")
    return name if len(parts) <= 3 else "…" + ".".join(parts[-3:])
