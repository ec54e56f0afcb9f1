"""The pair matrix of ``net --find-bad``: the point-to-point bandwidths its pair rounds measured, between ranks
(and their hosts), as text when small and as a heat map (matplotlib, the ``plot`` extra).

Only the pairs the rounds chose are measured (each suspect host beside a cleared one, and a reference pair or
two), so most cells of a large job are empty: the picture shows what was measured, not a guess for the rest.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchdoctor.findings import Finding

PICTURE_NAME = "find-bad-pairs.png"
MOST_RANKS_AS_TEXT = 8


def pair_matrix(record: Mapping[str, Any]) -> dict[str, Any]:
    """``{"ranks": [...], "hosts": {"rank": host}, "pairs": [{"ranks": [a, b], "gbs", "rtt_ms", "kind"}]}`` from
    the pair rounds of ``record``: each pair once, at the best of its timings (a passing load lowers one timing,
    never raises it); empty ``pairs`` when no pair was timed.

    >>> record = {"hosts": {"0": "a", "1": "b"}, "rounds": [
    ...     {"what": "pairs", "pairs": [{"ranks": [1, 0], "kind": "suspect", "gbs": 0.01, "rtt_ms": 2.0}]},
    ...     {"what": "pairs again", "pairs": [{"ranks": [1, 0], "kind": "suspect", "gbs": 0.02, "rtt_ms": 1.0}]}]}
    >>> pair_matrix(record)["pairs"]
    [{'ranks': [0, 1], 'gbs': 0.02, 'rtt_ms': 1.0, 'kind': 'suspect'}]
    """
    best: dict[tuple[int, int], dict[str, Any]] = {}
    for round_ in record.get("rounds", []):
        for pair in round_.get("pairs", []) if str(round_.get("what", "")).startswith("pairs") else []:
            if "gbs" not in pair:
                continue
            key = tuple(sorted(int(r) for r in pair["ranks"]))
            if key not in best or pair["gbs"] > best[key]["gbs"]:
                best[key] = {
                    "ranks": list(key),
                    "gbs": pair["gbs"],
                    "rtt_ms": pair["rtt_ms"],
                    "kind": pair["kind"],
                }
    ranks = sorted({r for key in best for r in key})
    hosts = {str(r): str(record.get("hosts", {}).get(str(r), "?")) for r in ranks}  # str keys: as in --json
    return {"ranks": ranks, "hosts": hosts, "pairs": [best[k] for k in sorted(best)]}


def named_slow(found: list[Finding]) -> dict[tuple[int, int], str]:
    """The pairs the ``net.slow_link`` findings in ``found`` named, as sorted rank pairs, each with its host."""
    return {
        tuple(sorted((int(f.details["rank"]), int(f.details["partner"])))): str(f.details["host"])
        for f in found
        if f.id == "net.slow_link" and "partner" in f.details
    }


def matrix_text(matrix: Mapping[str, Any], slow: Mapping[tuple[int, int], str] | None = None) -> str | None:
    """The matrix as lines of text, MB/s per measured pair (``·`` where none was measured), a ``!`` after a
    pair named slow; None when there is nothing to show or more than `MOST_RANKS_AS_TEXT` ranks."""
    ranks = matrix["ranks"]
    if not matrix["pairs"] or len(ranks) > MOST_RANKS_AS_TEXT:
        return None
    cells = {}
    for pair in matrix["pairs"]:
        a, b = pair["ranks"]
        mark = "!" if slow and (a, b) in slow else ""
        cells[(a, b)] = cells[(b, a)] = f"{pair['gbs'] * 1000:.1f}{mark}"
    names = {r: f"rank {r} ({matrix['hosts'][str(r)]})" for r in ranks}
    left = max(len(n) for n in names.values())
    width = max([len(f"rank {r}") for r in ranks] + [len(c) for c in cells.values()]) + 2
    lines = [
        "point-to-point bandwidth between ranks, MB/s (· not measured" + ("; ! named slow)" if slow else ")"),
        " " * left + "".join(f"rank {r}".rjust(width) for r in ranks),
    ]
    for a in ranks:
        lines.append(names[a].ljust(left) + "".join(cells.get((a, b), "·").rjust(width) for b in ranks))
    return "\n".join(lines)


def write_picture(
    matrix: Mapping[str, Any],
    path: str | os.PathLike,
    title: str,
    slow: Mapping[tuple[int, int], str] | None = None,
) -> Path | None:
    """Draw the matrix as a heat map into ``path`` (PNG): colour by bandwidth on a log scale, the figure in each
    measured cell, grey where no pair was measured, a red frame round a pair named slow. None when matplotlib is missing or no pair was timed;
    `OSError` when the file cannot be written."""
    try:
        from matplotlib.colors import LogNorm
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle
    except ImportError:
        return None
    ranks = matrix["ranks"]
    if not matrix["pairs"]:
        return None
    import numpy as np

    index = {r: i for i, r in enumerate(ranks)}
    values = np.full((len(ranks), len(ranks)), np.nan)
    for pair in matrix["pairs"]:
        a, b = (index[r] for r in pair["ranks"])
        values[a, b] = values[b, a] = max(pair["gbs"] * 1000, 1e-3)
    side = min(2.2 + 0.8 * len(ranks), 14)
    figure = Figure(figsize=(side + 1.6, side), dpi=80)
    axes = figure.add_subplot()
    axes.set_facecolor("#dddddd")
    measured = values[~np.isnan(values)]
    # At least two decades of colour: pairs within a few per cent of each other look alike, a slow one stands out.
    norm = LogNorm(vmin=min(measured.min(), measured.max() / 100), vmax=measured.max())
    image = axes.imshow(np.ma.masked_invalid(values), cmap="viridis", norm=norm)
    if len(ranks) <= 16:
        for (i, j), value in np.ndenumerate(values):
            if not np.isnan(value):
                light = norm(value) < 0.5
                axes.text(
                    j,
                    i,
                    f"{value:.0f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if light else "black",
                )
    for a, b in slow or {}:
        if a in index and b in index:
            for i, j in ((index[a], index[b]), (index[b], index[a])):
                axes.add_patch(
                    Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#d00000", linewidth=2.5)
                )
    labels = [f"{r}\n{matrix['hosts'][str(r)]}" if len(ranks) <= 16 else str(r) for r in ranks]
    axes.set_xticks(range(len(ranks)), labels, fontsize=7)
    axes.set_yticks(range(len(ranks)), [label.replace("\n", " ") for label in labels], fontsize=7)
    axes.set_xlabel("rank (host)", fontsize=8)
    axes.set_title(title, fontsize=9)
    figure.colorbar(
        image, ax=axes, label="MB/s there and back (log scale); grey: not measured", shrink=0.8, format="%g"
    )
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path)
    return path


def picture_finding(
    record: Mapping[str, Any], path: str | os.PathLike, slow: Mapping[tuple[int, int], str] | None = None
) -> tuple[dict[str, Any], Finding | None]:
    """(the pair matrix, the finding that says where its picture went — or why there is none): written to
    ``path``; no finding when no pair was timed."""
    matrix = pair_matrix(record)
    if not matrix["pairs"]:
        return matrix, None
    hosts = len(set(record.get("hosts", {}).values()))
    title = f"net --find-bad: pair bandwidth, {len(record.get('hosts', {}))} ranks on {hosts} host(s)"
    try:
        written = write_picture(matrix, path, title, slow)
    except (OSError, ValueError) as error:  # a vanished folder, a full disk: said, the verdicts stand
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return matrix, Finding(
            "net.find_bad_picture",
            "warn",
            f"could not write the pair picture {path}: {reason}",
            {"picture": str(path), "error": str(error)},
            f"Check that {Path(path).parent} exists and is writable, or choose another place with "
            "--pairs-plot FILE.png; the figures are in the matrix above and in --json.",
        )
    if written is None:
        return matrix, Finding(
            "net.find_bad_picture",
            "skip",
            "no picture of the pair bandwidths: matplotlib is not installed (pip install 'torchdoctor[plot]')",
        )
    return matrix, Finding(
        "net.find_bad_picture",
        "ok",
        f"the pair bandwidths ({len(matrix['pairs'])} pair(s)) drawn in {written}",
        {"picture": str(written)},
    )
