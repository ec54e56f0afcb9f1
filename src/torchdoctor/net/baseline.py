"""Each GPU against what its model should do: ``net --find-bad``'s matmul and device copy beside a stored
baseline (``gpu_baseline.tsv``: vendor peak figures per model, with their sources).

The peers' median catches one slow GPU among healthy ones; the baseline catches the job whose GPUs are all slow
alike (power-capped, clocks held low, a throttled node type), which no comparison among them can show. The
expected figure is a share of the vendor's peak: `MATMUL_SHARE` for the float32 matmul (cuBLAS SGEMM of a
2048×2048 matrix reaches about 70–90% of the FP32 peak on these parts; boost clocks are not held under load),
`COPY_SHARE` for the device-to-device copy (a copy reaches about 80–90% of the memory's peak bandwidth). A GPU is
said to be below its model only under `BELOW` of that expected figure, a margin wide enough for power limits and
clock settings that are a site's choice, not a fault. On CPUs there is no baseline: the ranks are compared with
each other only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from torchdoctor.findings import Finding
from torchdoctor.rank_list import who

TABLE = Path(__file__).with_name("gpu_baseline.tsv")
MATMUL_SHARE = 0.7  # of the FP32 peak, for a 2048×2048 float32 matmul at "highest" precision
COPY_SHARE = 0.8  # of the peak memory bandwidth, for a 256 MiB device-to-device copy
BELOW = 0.5  # a GPU under this share of its model's expected figure is named
MOST_NAMED_ONE_BY_ONE = 3  # more ranks below than this: one finding for them all


@dataclass(frozen=True)
class Baseline:
    """One GPU model's row of the table: its peak FP32 TFLOPS and memory GB/s, and where they come from."""

    model: str
    fp32_tflops: float
    memory_gbs: float
    source: str

    def expected(self, measure: str) -> float:
        """What a healthy GPU of this model does in ``measure`` (``matmul_gflops`` in GFLOP/s, ``copy_gbs`` in
        GB/s, as `torchdoctor.net.find_bad` records them)."""
        if measure == "matmul_gflops":
            return self.fp32_tflops * 1000 * MATMUL_SHARE
        return self.memory_gbs * COPY_SHARE


@cache
def load_table(path: Path = TABLE) -> tuple[tuple[re.Pattern[str], Baseline], ...]:
    """The table's rows in order, each as (pattern on the device name, its `Baseline`); comment lines skipped.
    Raises `ValueError` naming the line of a row that does not read."""
    rows = []
    lines = path.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    for number, line in enumerate(lines[header + 1 :], start=header + 2):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        try:
            pattern, model, tflops, gbs, source = fields
            rows.append(
                (re.compile(pattern, re.IGNORECASE), Baseline(model, float(tflops), float(gbs), source))
            )
        except (ValueError, re.error) as error:
            raise ValueError(
                f"{path}:{number}: {line!r} is not pattern, model, TFLOPS, GB/s, source: {error}"
            ) from None
    return tuple(rows)


def baseline_for(device_name: str) -> Baseline | None:
    """The stored baseline of the GPU model ``device_name`` names (as ``torch.cuda.get_device_name`` gives
    it), or None for a model the table does not know (and for ``"cpu"``).

    >>> baseline_for("NVIDIA A100-SXM4-80GB").model
    'A100 80GB SXM'
    >>> baseline_for("cpu") is None
    True
    """
    return next((row for pattern, row in load_table() if pattern.search(device_name)), None)


def rate(measure: str, value: float) -> str:
    """A measured figure with its unit: ``("matmul_gflops", 120000)`` -> ``"120 TFLOPS"``."""
    if measure == "matmul_gflops":
        return f"{value / 1000:.3g} TFLOPS" if value >= 1000 else f"{value:.3g} GFLOP/s"
    return f"{value:.3g} GB/s"


def against_baseline(measure: str, value: float, device_name: str) -> dict[str, Any] | None:
    """``{"model", "expected", "share", "peak", "source"}``: ``value`` beside what the model of ``device_name``
    does in ``measure``; None where there is no stored baseline.

    >>> against_baseline("matmul_gflops", 5460.0, "NVIDIA A100-SXM4-80GB")["share"]
    0.4
    """
    row = baseline_for(device_name)
    if row is None:
        return None
    expected = row.expected(measure)
    peak = row.fp32_tflops * 1000 if measure == "matmul_gflops" else row.memory_gbs
    return {
        "model": row.model,
        "expected": round(expected, 1),
        "share": round(value / expected, 2),
        "peak": peak,
        "source": row.source,
    }


def sentence(rank: int, where: str, device_name: str, measure: str, value: float) -> str:
    """How rank ``rank`` (on ``where``: its host, GPU index, PCI bus) does in ``measure`` beside its model's
    baseline, in words; or that there is no baseline for it.

    >>> sentence(3, "GPU 1", "NVIDIA A100-SXM4-80GB", "matmul_gflops", 5460.0)
    'rank 3 (GPU 1, NVIDIA A100-SXM4-80GB) does 5.46 TFLOPS float32 matmul, 40% of what this model does (13.7 TFLOPS: 70% of the 19.5 TFLOPS peak of the A100 80GB SXM)'
    >>> sentence(0, "host a", "cpu", "copy_gbs", 9.0)
    'rank 0 (host a) runs on a CPU: there is no stored baseline, so it is compared with the other ranks only'
    """
    if device_name == "cpu":
        return f"rank {rank} ({where}) runs on a CPU: there is no stored baseline, so it is compared with the other ranks only"
    compared = against_baseline(measure, value, device_name)
    what = "float32 matmul" if measure == "matmul_gflops" else "device copy"
    if compared is None:
        return (
            f"rank {rank} ({where}, {device_name}) does {rate(measure, value)} {what}; there is no stored baseline "
            "for this model, so it is compared with the other ranks only"
        )
    share = MATMUL_SHARE if measure == "matmul_gflops" else COPY_SHARE
    return (
        f"rank {rank} ({where}, {device_name}) does {rate(measure, value)} {what}, {compared['share']:.0%} of what "
        f"this model does ({rate(measure, compared['expected'])}: {share:.0%} of the {rate(measure, compared['peak'])}"
        f" peak of the {compared['model']})"
    )


def where_is(rank: int, host: str, device: Mapping[str, Any] | None) -> str:
    """``"host h, GPU 1, PCI 0000:41:00.0"``: where a rank runs, as much as is known.

    >>> where_is(3, "node7", {"model": "NVIDIA H100 80GB HBM3", "index": 1, "pci_bus": "0000:41:00.0"})
    'host node7, GPU 1, PCI 0000:41:00.0'
    """
    parts = [f"host {host}"]
    if device and device.get("index") is not None:
        parts.append(f"GPU {device['index']}")
    if device and device.get("pci_bus"):
        parts.append(f"PCI {device['pci_bus']}")
    return ", ".join(parts)


def baseline_findings(record: Mapping[str, Any], hosts: Mapping[int, str]) -> list[Finding]:
    """GPUs under `BELOW` of their model's expected matmul or copy speed (``net.below_baseline``, a warning: the
    table gives peaks, and a site may cap power or clocks on purpose); none on CPUs or for unknown models."""
    devices = record.get("devices") or {}
    below = []
    for rank_text, speed in sorted(record.get("speed", {}).items(), key=lambda item: int(item[0])):
        rank, device = int(rank_text), devices.get(rank_text) or {}
        model = str(device.get("model", "cpu"))
        if model == "cpu" or not speed:
            continue
        for measure in ("matmul_gflops", "copy_gbs"):
            compared = against_baseline(measure, speed[measure], model)
            if compared is not None and compared["share"] < BELOW:
                below.append((rank, measure, speed[measure], model, compared))
                break
    if not below:
        return []
    if len(below) > MOST_NAMED_ONE_BY_ONE:
        shares = sorted(b[4]["share"] for b in below)
        return [
            Finding(
                "net.below_baseline",
                "warn",
                f"{who([b[0] for b in below])} run at {shares[0]:.0%}–{shares[-1]:.0%} of what their GPU model "
                f"does ({below[0][4]['model']}, figures from {_page(below[0][4]['source'])}): slow alike, so no comparison "
                "among "
                "them shows it",
                {
                    "ranks": [b[0] for b in below],
                    "below": [dict(rank=b[0], measure=b[1], value=b[2], **b[4]) for b in below],
                },
                _fix("each node"),
            )
        ]
    return [
        Finding(
            "net.below_baseline",
            "warn",
            sentence(rank, where_is(rank, hosts[rank], devices.get(str(rank))), model, measure, value)
            + f" (figures from {_page(compared['source'])})",
            {"rank": rank, "host": hosts[rank], "measure": measure, "value": value, **compared},
            _fix(hosts[rank]),
        )
        for rank, measure, value, model, compared in below
    ]


def _page(source: str) -> str:
    """The page a table row's figures come from, without the note after it."""
    return source.split(" (")[0]


def _fix(host: str) -> str:
    return (
        f"On {host}: `nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE` (throttle reasons, clocks held low, a "
        "power cap), `nvidia-smi -q -d ECC`; a power limit or clock setting chosen on purpose explains it, anything "
        "else is worth a ticket or draining the node."
    )
