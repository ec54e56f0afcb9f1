"""``gpu.*`` checks: mixed GPUs in one machine.

With data parallelism every GPU gets the same batch and every step waits for the slowest GPU, so the GPU with
the least memory limits the batch and the slowest one sets the pace. `measure_gpus` takes the figures (memory,
a short fp16 matmul throughput) and `balance_verdict` turns given figures into a verdict.

In a running job (``torchdoctor launch --stragglers``) every rank measures its own device with `measure_device`
(a short matmul and a copy, with the threads and the device the rank really has) and `rank_balance_verdict`
says which rank holds the run back, by how much, and how to rebalance: each rank's share of the global batch
in proportion to its speed, or which ranks to leave out.
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


def measure_device(device: Any = None, seconds: float = 0.1) -> dict[str, Any]:
    """This process's device as the training sees it: matmul throughput (GFLOPS; fp16 on a GPU, fp32 on the
    CPU with torch's current thread count) and copy bandwidth (GB/s; host to device on a GPU, memory to
    memory on the CPU), the best of three short runs of about ``seconds`` each."""
    import torch

    device = torch.device(device) if device is not None else _current_device(torch)
    on_gpu = device.type != "cpu"
    size, dtype = (2048, torch.float16) if on_gpu else (256, torch.float32)
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    source = torch.empty(
        16 * 2**20 // 4, dtype=torch.float32, pin_memory=on_gpu and torch.cuda.is_available()
    )
    target = torch.empty_like(source, device=device)

    def timed(work, count: int, deadline: float = float("inf")) -> float:
        _sync(torch, device)
        start = time.perf_counter()
        done = 0
        while done < count and (done == 0 or time.perf_counter() < deadline):
            work()
            done += 1
        _sync(torch, device)
        return (time.perf_counter() - start) / done

    a @ b  # warm-up: the kernel is picked, clocks ramp up
    target.copy_(source)
    matmul = min(
        timed(lambda: a @ b, max(1, int(seconds / max(timed(lambda: a @ b, 1), 1e-6)))) for _ in range(3)
    )
    copy = min(timed(lambda: target.copy_(source), 3) for _ in range(3))
    return {
        "device": str(device),
        "gpu": _gpu_identity(torch, device) if device.type == "cuda" else "",
        "name": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else _cpu_name(torch.get_num_threads()),
        "threads": torch.get_num_threads(),
        "gflops": round(2 * size**3 / matmul / 1e9, 2),
        "copy_gbps": round(source.numel() * 4 / copy / 1e9, 2),
    }


def rank_balance_verdict(ranks: list[dict[str, Any]]) -> Finding:
    """The ``gpu.balance`` verdict for the ranks of a job, from each rank's `measure_device` figures plus
    ``rank`` and ``host``: the rank with the slowest matmul holds every step back.

    >>> rank_balance_verdict([
    ...     {"rank": 0, "host": "a", "name": "A100", "gflops": 150000.0, "copy_gbps": 20.0},
    ...     {"rank": 1, "host": "b", "name": "RTX 3090", "gflops": 71000.0, "copy_gbps": 12.0},
    ... ]).summary.split(":")[0]
    'rank 1 (host b, RTX 3090) holds the run back'
    """
    verdict = verdict_of(check_balance)  # the same verdict as the check's, measured in a job instead
    ranks = sorted(ranks, key=lambda r: r["rank"])
    details: dict[str, Any] = {"ranks": ranks, "threshold": BALANCED}
    if len(ranks) < 2:
        return verdict("skip", "one rank measured: balance needs two or more", details)
    shared = _shared_gpus(ranks)
    if shared:  # measured at the same time on one GPU, each figure is what the other left of it
        group = shared[0]
        names = ", ".join(str(r["rank"]) for r in group)
        return verdict(
            "skip",
            f"not judged: ranks {names} share one GPU ({group[0]['name']} on host {group[0]['host']}), so each "
            "measured it while the other used it too: their figures differ by the moment, not by the device",
            details,
        )
    slowest = min(ranks, key=lambda r: r["gflops"])
    fastest = max(ranks, key=lambda r: r["gflops"])
    ratio = slowest["gflops"] / fastest["gflops"]
    total = sum(r["gflops"] for r in ranks)
    idle = 1 - len(ranks) * slowest["gflops"] / total
    details |= {"speed_ratio": round(ratio, 3), "idle": round(idle, 3)}
    if ratio >= BALANCED:
        return verdict(
            "ok",
            f"{len(ranks)} ranks balanced: matmul {slowest['gflops']:g}–{fastest['gflops']:g} GFLOPS",
            details,
        )
    shares = {r["rank"]: r["gflops"] / total for r in ranks}
    per_rank = ", ".join(f"rank {rank} {share:.0%}" for rank, share in shares.items())
    example = _batch_split(shares, 32 * len(ranks))
    fixes = [
        f"# per-rank batch sizes in proportion to speed: {per_rank} of the global batch "
        f"(of {32 * len(ranks)}: {', '.join(map(str, example))}); weight each rank's loss by its share",
    ]
    chosen = _fastest_set([dict(r, tflops=r["gflops"], index=r["rank"]) for r in ranks])
    if len(chosen) < len(ranks):
        left_out = sorted({r["rank"] for r in ranks} - {r["rank"] for r in chosen})
        pace = min(r["gflops"] for r in chosen)
        fixes.append(
            f"# or leave out rank{'s' if len(left_out) > 1 else ''} {', '.join(map(str, left_out))}: "
            f"{len(chosen)} × {pace:g} GFLOPS beats {len(ranks)} × {slowest['gflops']:g} at rank "
            f"{slowest['rank']}'s pace"
        )
    summary = (
        f"rank {slowest['rank']} (host {slowest['host']}, {slowest['name']}) holds the run back: its matmul "
        f"runs at {ratio:.0%} of rank {fastest['rank']}'s ({slowest['gflops']:g} vs {fastest['gflops']:g} "
        f"GFLOPS), so every step waits for it and {idle:.0%} of the ranks' compute idles"
    )
    return verdict("warn", summary, details, "\n".join(fixes))


def _batch_split(shares: Mapping[int, float], total: int) -> list[int]:
    """``total`` samples shared out in proportion to ``shares`` (largest remainders), at least 1 each."""
    raw = {rank: share * total for rank, share in shares.items()}
    sizes = {rank: max(1, int(value)) for rank, value in raw.items()}
    for rank in sorted(raw, key=lambda r: raw[r] - int(raw[r]), reverse=True)[
        : max(0, total - sum(sizes.values()))
    ]:
        sizes[rank] += 1
    return [sizes[rank] for rank in sorted(sizes)]


def _gpu_identity(torch: Any, device: Any) -> str:
    """The physical GPU behind ``device`` (its UUID, else its PCI address): the same for two ranks that share it,
    whatever CUDA_VISIBLE_DEVICES each was given."""
    props = torch.cuda.get_device_properties(device)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid:
        return uuid
    parts = [getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    return ":".join(str(p) for p in parts) if None not in parts else ""


def _shared_gpus(ranks: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Ranks that measured the same physical GPU of one host, in groups of two or more."""
    by_gpu: dict[tuple, list[dict[str, Any]]] = {}
    for r in ranks:
        if r.get("gpu"):
            by_gpu.setdefault((r.get("host"), r["gpu"]), []).append(r)
    return [group for group in by_gpu.values() if len(group) > 1]


def _cpu_name(threads: int) -> str:
    return f"CPU, {threads} thread{'s' if threads > 1 else ''}"


def _current_device(torch: Any) -> Any:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _sync(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


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
