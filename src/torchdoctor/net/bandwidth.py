"""Collective bandwidth over a sweep of message sizes, reported as nccl-tests does.

For a message of ``size`` bytes taking ``time`` seconds on ``n`` ranks: ``algbw = size / time`` and
``busbw = algbw * factor``, with factor ``2(n-1)/n`` for all_reduce, ``(n-1)/n`` for all_gather and
reduce_scatter (``size`` being the whole gathered / scattered buffer), and 1 for broadcast. busbw is
comparable to the hardware's link speed whatever the number of ranks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from torchdoctor.findings import Finding

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
KIB, MIB, GIB = 2**10, 2**20, 2**30
EXPECT_FRACTION = 0.9  # --expect-busbw fails below 90% of the figure given
# The largest message --sizes takes: past nccl-tests' usual 8-16 GiB and within one big GPU's memory, so a typo
# (99999999999G) is an error rather than an allocation that can never succeed.
MAX_SIZE = 64 * GIB
# Sized for the backend: gloo runs on CPUs (up to a few hundred MiB), NCCL on GPU links (up to GiBs).
DEFAULT_SIZES = {
    "gloo": tuple(4 * KIB * 4**i for i in range(9)),  # 4 KiB .. 256 MiB
    "nccl": tuple(MIB * 4**i for i in range(7)),  # 1 MiB .. 4 GiB
}
DEFAULT_ITERS = {"gloo": (1, 3), "nccl": (5, 20)}  # (warm-up, timed)


def bus_factor(op: str, world_size: int) -> float:
    """nccl-tests' busbw correction: ``2(n-1)/n`` all_reduce, ``(n-1)/n`` all_gather/reduce_scatter, 1 broadcast.

    >>> bus_factor("all_reduce", 4)
    1.5
    """
    n = world_size
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    if op == "broadcast":
        return 1.0
    raise ValueError(f"unknown collective {op!r}; choose from {', '.join(OPS)}")


def bandwidth(op: str, size_bytes: int, seconds: float, world_size: int) -> tuple[float, float]:
    """``(algbw, busbw)`` in GB/s (10^9 bytes per second, as nccl-tests prints)."""
    algbw = size_bytes / seconds / 1e9
    return algbw, algbw * bus_factor(op, world_size)


def parse_size(text: str) -> int:
    """``"64M"`` / ``"64MiB"`` / ``"1G"`` / ``"4096"`` -> bytes (binary units), from 1 byte to `MAX_SIZE` (64 GiB).

    >>> parse_size("1.5K")
    1536
    """
    cleaned = text.strip().upper().removesuffix("IB").removesuffix("B")
    units = {"K": KIB, "M": MIB, "G": GIB}
    try:
        if cleaned and cleaned[-1] in units:
            number: float = float(cleaned[:-1]) * units[cleaned[-1]]
        else:
            number = int(cleaned)  # an int compares exactly, however long
    except ValueError:
        raise ValueError(
            f"message size {text!r} is not a number of bytes like 4096, 64K, 16M or 1G"
        ) from None
    if not 1 <= number <= MAX_SIZE:  # also false for nan and inf
        raise ValueError(
            f"message size {text!r} must be from 1 byte to {human_size(MAX_SIZE)} ({MAX_SIZE} bytes)"
        )
    return int(number)


def human_size(size: int) -> str:
    """``67108864`` -> ``"64 MiB"``."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _collective(op: str, size: int, world_size: int, device) -> Callable[[], None]:
    """A closure running one ``op`` on ``size`` bytes of float32 (sizes rounded to whole elements per rank)."""
    import torch
    import torch.distributed as dist

    count = max(size // 4 // world_size, 1) * world_size
    if op == "all_reduce":
        buffer = torch.ones(count, device=device)
        return lambda: dist.all_reduce(buffer)
    if op == "broadcast":
        buffer = torch.ones(count, device=device)
        return lambda: dist.broadcast(buffer, 0)
    if op == "all_gather":
        out, part = torch.empty(count, device=device), torch.ones(count // world_size, device=device)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: gather(out, part)
    if op == "reduce_scatter":
        full, part = torch.ones(count, device=device), torch.empty(count // world_size, device=device)
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        return lambda: scatter(part, full)
    raise ValueError(f"unknown collective {op!r}; choose from {', '.join(OPS)}")


def time_collective(op: str, size: int, device, warmup: int, iters: int) -> float:
    """Seconds per ``op`` on ``size`` bytes: warm-up, then ``iters`` timed calls; the slowest rank's time."""
    if warmup < 0 or iters < 1:
        raise ValueError(f"warmup={warmup}, iters={iters}: need warmup >= 0 and iters >= 1")
    import torch
    import torch.distributed as dist

    world_size = dist.get_world_size()
    run = _collective(op, size, world_size, device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for _ in range(warmup):
        run()
    sync()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        run()
    sync()
    elapsed = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64, device=device)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    return float(elapsed.item())


def iteration_counts(warmup: int | None, iters: int | None, backend: str) -> tuple[int, int]:
    """``(warmup, iters)``: each one given, or the backend's default when None.

    >>> iteration_counts(None, 50, "gloo")
    (1, 50)
    """
    default_warmup, default_iters = DEFAULT_ITERS.get(backend, DEFAULT_ITERS["gloo"])
    warmup = default_warmup if warmup is None else warmup
    iters = default_iters if iters is None else iters
    if warmup < 0:
        raise ValueError(f"warmup={warmup}: the warm-up iterations must be 0 or more")
    if iters < 1:
        raise ValueError(f"iters={iters}: the timed iterations must be 1 or more")
    return warmup, iters


def sweep_plan(ops: Iterable[str], sizes: Sequence[int], backend: str) -> list[tuple[str, int]]:
    """Every (op, size) measured, in order."""
    sizes = tuple(sizes) or DEFAULT_SIZES.get(backend, DEFAULT_SIZES["gloo"])
    return [(op, size) for op in ops for size in sizes]


def run_sweep(
    options, device, on_row: Callable[[dict[str, Any], int], None] | None = None, watchdog=None
) -> list[dict]:
    """Measure every (op, size) of ``options`` in this process group; every rank must call it.

    ``on_row(row, total)`` is called after each measurement (rank 0 passes one to show progress).
    ``options.warmup`` / ``options.iters`` left at None take the backend's default each on its own
    (`DEFAULT_ITERS`).
    """
    import torch.distributed as dist

    backend = dist.get_backend()
    world_size = dist.get_world_size()
    warmup, iters = iteration_counts(options.warmup, options.iters, backend)
    plan = sweep_plan(options.ops, options.sizes, backend)
    rows = []
    for op, size in plan:
        if watchdog is not None:
            watchdog.enter("bench")
        seconds = time_collective(op, size, device, warmup, iters)
        if watchdog is not None:
            watchdog.enter(None)
        algbw, busbw = bandwidth(op, size, seconds, world_size)
        row = {
            "op": op,
            "size": size,
            "seconds": seconds,
            "algbw": algbw,
            "busbw": busbw,
            "ranks": world_size,
            "warmup": warmup,
            "iters": iters,
        }
        rows.append(row)
        if on_row is not None:
            on_row(row, len(plan))
    return rows


def peaks(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The row with the highest busbw, per op."""
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["op"] not in best or row["busbw"] > best[row["op"]]["busbw"]:
            best[row["op"]] = row
    return best


def table(rows: Sequence[dict[str, Any]], title: str = "collective bandwidth"):
    """A rich Table: op, size, time, algbw, busbw (GB/s), as nccl-tests' columns."""
    from rich.table import Table

    result = Table(title=title)
    for name in ("op", "size", "time (us)", "algbw (GB/s)", "busbw (GB/s)"):
        result.add_column(name, justify="left" if name == "op" else "right")
    for row in rows:
        result.add_row(
            row["op"],
            human_size(row["size"]),
            f"{row['seconds'] * 1e6:,.1f}",
            f"{row['algbw']:.3f}",
            f"{row['busbw']:.3f}",
        )
    return result


def findings(
    rows: Sequence[dict[str, Any]], backend: str, expect_busbw: float | None = None
) -> list[Finding]:
    """``net.bandwidth``: the peak busbw of every collective measured, each one failing below 90% of
    ``expect_busbw``; the fix fits ``backend`` (NCCL's transports, or gloo's CPUs and sockets).

    busbw is nccl-tests' figure that every collective should bring close to the link's speed, so one
    expectation judges them all.
    """
    if not rows:
        return [
            Finding(
                "net.bandwidth",
                "skip",
                "no bandwidth measured (the run did not get through its first size: see the findings above)",
            )
        ]
    best = peaks(rows)
    ranks = next(iter(best.values()))["ranks"]
    details: dict[str, Any] = {
        "backend": backend,
        "ranks": ranks,
        "judged": list(best),
        "peak_busbw_gbps": {op: round(r["busbw"], 4) for op, r in best.items()},
        "rows": [dict(r) for r in rows],
    }
    peaks_text = ", ".join(
        f"{r['busbw']:.3f} GB/s ({op} of {human_size(r['size'])})" for op, r in best.items()
    )
    summary = f"peak busbw {peaks_text}; {ranks} ranks, {backend}"
    if expect_busbw is None:
        return [Finding("net.bandwidth", "ok", summary, details)]
    details["expect_busbw_gbps"] = expect_busbw
    below = [op for op, r in best.items() if r["busbw"] < EXPECT_FRACTION * expect_busbw]
    details["below_expected"] = below
    expected = f"90% of the {expect_busbw:g} GB/s expected"
    if not below:
        each = "each " if len(best) > 1 else ""
        return [Finding("net.bandwidth", "ok", f"{summary}: {each}≥ {expected}", details)]
    shares = _and([f"{op} ({best[op]['busbw'] / expect_busbw:.0%})" for op in below])
    verdict = f"{shares} {'is' if len(below) == 1 else 'are'} below {expected}"
    met = [op for op in best if op not in below]
    if met:
        verdict += f"; {_and(met)} {'meets' if len(met) == 1 else 'meet'} it"
    return [Finding("net.bandwidth", "fail", f"{summary}: {verdict}", details, slow_link_fix(backend))]


def slow_link_fix(backend: str) -> str:
    """What to look at when busbw is low, for this backend: NCCL's transports and topology, or, for gloo
    (CPU memory over TCP sockets), the CPUs, the interface and the link; never NCCL advice for gloo."""
    if "nccl" in backend:
        return (
            "See which transport NCCL picked (NET/IB, not NET/Socket; P2P, not SHM):\n"
            "NCCL_DEBUG=INFO torchdoctor net --nccl-debug\n"
            "Then check `nvidia-smi topo -m`, NCCL_IB_HCA / NCCL_SOCKET_IFNAME, and that no other job shares "
            "the link."
        )
    if "gloo" in backend:
        return (
            "gloo copies tensors through host memory and sends them over TCP sockets, so its busbw is bounded by "
            "the CPUs and the network:\n"
            "- on one host the ranks talk over loopback: a low figure means busy or too few CPU cores (`nproc`, "
            "`uptime`, other jobs on this machine), not a slow network\n"
            "- across hosts, GLOO_SOCKET_IFNAME must name the fast interface (`ip -br addr`; its speed: "
            "`ethtool <interface>`), and no other job may share that link\n"
            "- training on GPUs? gloo's figure says nothing about their links: measure those with --backend nccl"
        )
    return (
        f"Check which interface and transport the {backend} backend uses, the link's speed, and that no other "
        "job shares the link."
    )


def _and(words: Sequence[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def plot(rows: Sequence[dict[str, Any]], path: str, title: str = "busbw by message size") -> None:
    """Draw busbw against message size (log scale), one line per collective, into ``path`` (PNG).

    Needs matplotlib: ``pip install 'torchdoctor[plot]'`` (the ``ImportError`` says so).
    """
    # A bare Figure renders to PNG without pyplot, so no backend is chosen and no global state changes.
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("the bandwidth plot needs matplotlib: pip install 'torchdoctor[plot]'") from error

    figure = Figure(figsize=(7, 4.2), dpi=110)
    axes = figure.add_subplot()
    for op in dict.fromkeys(r["op"] for r in rows):
        mine = [r for r in rows if r["op"] == op]
        axes.plot([r["size"] for r in mine], [r["busbw"] for r in mine], marker="o", label=op)
    axes.set_xscale("log", base=2)
    sizes = sorted({r["size"] for r in rows})
    axes.set_xticks(sizes, [human_size(s).replace(" ", "") for s in sizes], rotation=45, fontsize=8)
    axes.set_xlabel("message size")
    axes.set_ylabel("busbw (GB/s)")
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
