"""``gpu.*`` checks: mixed GPUs in one machine.

With data parallelism every GPU gets the same batch and every step waits for the slowest GPU, so the GPU with
the least memory limits the batch and the slowest one sets the pace. `measure_gpus` takes the figures (memory,
a short fp16 matmul throughput) and `balance_verdict` turns given figures into a verdict.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from torchdoctor.checks import verdict_of
from torchdoctor.findings import Finding

AREA = "gpu"
BALANCED = 0.8  # min/max below this is worth a warning


def measure_gpus(size: int = 4096, repeats: int = 10) -> list[dict[str, Any]]:
    """Memory and fp16 matmul throughput (TFLOPS) of every CUDA/ROCm GPU this process sees."""
    import torch

    if not torch.cuda.is_available():
        return []
    gpus = []
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        device = torch.device("cuda", index)
        a = torch.randn(size, size, device=device, dtype=torch.float16)
        b = torch.randn(size, size, device=device, dtype=torch.float16)
        for _ in range(3):  # warm-up: cuBLAS picks its kernel, clocks ramp up
            a @ b
        torch.cuda.synchronize(device)
        start = time.perf_counter()
        for _ in range(repeats):
            a @ b
        torch.cuda.synchronize(device)
        seconds = time.perf_counter() - start
        gpus.append(
            {
                "index": index,
                "name": props.name,
                "memory_gib": round(props.total_memory / 2**30, 1),
                "tflops": round(2 * size**3 * repeats / seconds / 1e12, 1),
            }
        )
        del a, b
        torch.cuda.empty_cache()
    return gpus


def balance_verdict(gpus: list[dict[str, Any]], environ: Mapping[str, str] | None = None) -> Finding:
    """The ``gpu.balance`` verdict from figures: ``index``, ``name``, ``memory_gib``, ``tflops`` per GPU.

    >>> balance_verdict([
    ...     {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "memory_gib": 80, "tflops": 150.0},
    ...     {"index": 1, "name": "NVIDIA GeForce RTX 3090", "memory_gib": 24, "tflops": 71.0},
    ... ]).summary.split("; ")[0]
    'GPU 1 (RTX 3090, 24 GiB) limits the batch to what fits in 24 GiB (GPU 0 has 80 GiB)'
    """
    verdict = verdict_of(check_balance)
    environ = os.environ if environ is None else environ
    details: dict[str, Any] = {"gpus": gpus, "threshold": BALANCED}
    smallest = min(gpus, key=lambda g: g["memory_gib"])
    largest = max(gpus, key=lambda g: g["memory_gib"])
    slowest = min(gpus, key=lambda g: g["tflops"])
    fastest = max(gpus, key=lambda g: g["tflops"])
    memory_ratio = smallest["memory_gib"] / largest["memory_gib"]
    speed_ratio = slowest["tflops"] / fastest["tflops"]
    details |= {"memory_ratio": round(memory_ratio, 3), "speed_ratio": round(speed_ratio, 3)}

    problems, fixes = [], []
    if memory_ratio < BALANCED:
        problems.append(
            f"{_label(smallest)} limits the batch to what fits in {smallest['memory_gib']:g} GiB "
            f"(GPU {largest['index']} has {largest['memory_gib']:g} GiB)"
        )
        fixes.append(
            f"# size the per-device batch for GPU {smallest['index']}'s {smallest['memory_gib']:g} GiB: "
            f"torchdoctor.find_executable_batch_size makes all ranks agree on what fits on every GPU"
        )
    if speed_ratio < BALANCED:
        n = len(gpus)
        paced = n * slowest["tflops"]
        lost = 1 - paced / sum(g["tflops"] for g in gpus)
        problems.append(
            f"GPU {slowest['index']} is {fastest['tflops'] / slowest['tflops']:.1f}× slower than "
            f"GPU {fastest['index']}: every step waits for it ({lost:.0%} of the GPUs' matmul throughput idles)"
        )
        chosen = _fastest_set(gpus)
        if len(chosen) < n:
            pace = min(g["tflops"] for g in chosen)
            ids = ",".join(_physical_ids([g["index"] for g in chosen], environ))
            fixes += [
                f"export CUDA_VISIBLE_DEVICES={ids}   # {len(chosen)} × {pace:g} TFLOPS beats "
                f"{n} × {slowest['tflops']:g} at GPU {slowest['index']}'s pace",
                f"torchdoctor scale --devices {n} --per-device-batch <B> --target-devices {len(chosen)}"
                f"   # keep the effective batch on {len(chosen)} GPU(s)",
            ]
        else:
            fixes.append(
                f"# all {n} GPUs at GPU {slowest['index']}'s pace still beat any subset; for an even pace "
                f"use identical GPUs (list them: nvidia-smi --query-gpu=index,name,memory.total --format=csv)"
            )
    if problems:
        return verdict("warn", "; ".join(problems), details, "\n".join(fixes))
    return verdict(
        "ok",
        f"{len(gpus)} GPUs balanced: {smallest['memory_gib']:g}–{largest['memory_gib']:g} GiB, "
        f"{slowest['tflops']:g}–{fastest['tflops']:g} TFLOPS fp16 matmul",
        details,
    )


def check_balance(
    gpus: list[dict[str, Any]] | None = None, environ: Mapping[str, str] | None = None
) -> Finding:
    """Mixed GPUs: the smallest memory limits the batch, the slowest GPU sets the pace (needs 2+ GPUs)."""
    verdict = verdict_of(check_balance)
    if gpus is None:
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count < 2:
            return _skip(count)
        try:
            gpus = measure_gpus()
        except RuntimeError as error:  # a GPU full of another job's tensors: say so, judge nothing
            return verdict(
                "skip",
                f"could not measure the {count} GPUs: {str(error).splitlines()[0]}",
                {"gpus": count},
            )
    if len(gpus) < 2:
        return _skip(len(gpus))
    return balance_verdict(gpus, environ)


def _skip(count: int) -> Finding:
    verdict = verdict_of(check_balance)
    seen = "no GPU visible" if count == 0 else "1 GPU visible"
    return verdict("skip", f"{seen}: GPU balance applies to 2 or more GPUs", {"gpus": count})


def _label(gpu: dict[str, Any]) -> str:
    name = gpu["name"].removeprefix("NVIDIA ").removeprefix("GeForce ").removeprefix("AMD ")
    return f"GPU {gpu['index']} ({name}, {gpu['memory_gib']:g} GiB)"


def _fastest_set(gpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The k fastest GPUs for the k that does most work when all go at the slowest one's pace."""
    ranked = sorted(gpus, key=lambda g: -g["tflops"])
    best = max(range(1, len(ranked) + 1), key=lambda k: (k * ranked[k - 1]["tflops"], k))
    return sorted(ranked[:best], key=lambda g: g["index"])


def _physical_ids(indices: list[int], environ: Mapping[str, str]) -> list[str]:
    """torch's GPU indices as ``CUDA_VISIBLE_DEVICES`` entries: through the list already set, if any."""
    visible = [entry.strip() for entry in environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    return [visible[i] if i < len(visible) else str(i) for i in indices]
