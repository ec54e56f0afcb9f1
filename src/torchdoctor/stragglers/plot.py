"""The picture: each rank's step time over the run, split into data, compute, collectives (besides waiting)
and waiting for the peers (matplotlib, the ``plot`` extra)."""

from __future__ import annotations

from pathlib import Path

from torchdoctor.stragglers.record import WINDOW
from torchdoctor.stragglers.window import WindowVerdict

PARTS = (("data", "#e69f00"), ("compute", "#0072b2"), ("transfer", "#009e73"), ("wait", "#cccccc"))
LABELS = {
    "data": "waiting for data",
    "compute": "compute",
    "transfer": "collectives",
    "wait": "waiting for peers",
}


def plot_steps(
    verdicts: list[WindowVerdict], path: str | Path, said: list[dict] | None = None
) -> Path | None:
    """Write the picture to ``path`` (PNG); None when matplotlib is missing or there is nothing to draw."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    ranks = sorted({rank for v in verdicts for rank in v.ranks})
    if not ranks:
        return None
    figure, axes = plt.subplots(len(ranks), 1, sharex=True, sharey=True, figsize=(7, 1.2 + 1.3 * len(ranks)))
    axes = list(axes) if len(ranks) > 1 else [axes]
    named = {s["rank"]: s["cause"] for s in said or []}
    for ax, rank in zip(axes, ranks, strict=True):
        rows = [(v.window * WINDOW, v.ranks[rank]) for v in verdicts if rank in v.ranks]
        x = [step for step, _ in rows]
        stacks = []
        for part, _ in PARTS:
            if part == "wait":
                stacks.append([(w.wait or 0.0) * 1000 for _, w in rows])
            elif part == "transfer":
                stacks.append([(w.transfer if w.wait is not None else w.comm) * 1000 for _, w in rows])
            else:
                stacks.append([getattr(w, part) * 1000 for _, w in rows])
        ax.stackplot(
            x, *stacks, colors=[c for _, c in PARTS], labels=[LABELS[p] for p, _ in PARTS], step="post"
        )
        for verdict in said or []:
            if verdict["rank"] == rank:  # where the verdict line was said
                ax.axvline((verdict["window"] + 1) * WINDOW, color="#b00000", linewidth=1, linestyle="--")
        title = f"rank {rank}" + (
            f"  — straggler ({named[rank]}), said at the dashed line" if rank in named else ""
        )
        ax.set_title(title, fontsize=9, loc="left", color="#b00000" if rank in named else "black")
        ax.set_ylabel("ms / step", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[-1].set_xlabel("step", fontsize=8)
    axes[0].legend(fontsize=7, ncol=4, loc="lower left", bbox_to_anchor=(0, 1.15), frameon=False)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return path
