"""``torchdoctor net``'s options: every flag checked up front, into one `NetOptions`, or `BadInput` naming it."""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchdoctor.errors import BadInput, given_path, require_count, require_seconds, require_writable_file
from torchdoctor.launch.torchrun import MAX_NPROC_PER_NODE, parse_endpoint
from torchdoctor.net.worker import WorkerOptions

# --expect-busbw above this is a typo: NVLink 5 moves 1.8 TB/s per GPU.
MAX_EXPECT_BUSBW = 100_000.0  # GB/s
MAX_ITERS = 100_000
DEFAULT_OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")


# The flags net shares with torchrun, and the variables torchrun takes them from when not given (PET_<FLAG>).
TORCHRUN_VARIABLES = {
    "nproc_per_node": "PET_NPROC_PER_NODE",
    "nnodes": "PET_NNODES",
    "rdzv_endpoint": "PET_RDZV_ENDPOINT",
    "rdzv_id": "PET_RDZV_ID",
}


def torchrun_defaults(said: Collection[str], environ: Mapping[str, str]) -> dict[str, Any]:
    """torchrun's ``PET_*`` values for the flags of `TORCHRUN_VARIABLES` not in ``said``, as net reads them
    (``{"nproc_per_node": 4}``); none for a rank someone else started. Raises `BadInput` naming a variable
    net cannot use."""
    from torchdoctor.distributed.ranks import from_environment

    if from_environment(environ).launcher != "none":  # the launcher has read them already
        return {}
    found: dict[str, Any] = {}
    for name, variable in TORCHRUN_VARIABLES.items():
        text = environ.get(variable)
        if name in said or text is None:
            continue
        if name in ("nproc_per_node", "nnodes"):
            if not (text.strip().isascii() and text.strip().isdigit()):
                what = "processes per host" if name == "nproc_per_node" else "hosts (not a range)"
                raise BadInput(f"{variable}={text!r}: torchdoctor net takes a number of {what} there")
            found[name] = int(text)
            most = MAX_NPROC_PER_NODE if name == "nproc_per_node" else 1_000_000
            require_count(variable, found[name], minimum=1, maximum=most)
        else:
            found[name] = text.strip()
    if found.get("rdzv_endpoint"):
        try:
            parse_endpoint(found["rdzv_endpoint"])
        except ValueError as error:
            raise BadInput(f"PET_RDZV_ENDPOINT: {error}") from None
    return found


@dataclass(frozen=True)
class NetOptions:
    """One run of ``torchdoctor net``: what the ranks do (`worker`) and how they are started."""

    worker: WorkerOptions
    nproc_per_node: int | None = None  # None: one per GPU, 2 without
    nnodes: int = 1
    rdzv_endpoint: str = ""
    rdzv_id: str | None = None  # None: torchdoctor-net
    nccl_debug: bool = False
    log_dir: Path | None = None
    expect_busbw: float | None = None
    plot: Path | None = None
    pairs_plot: Path | None = None  # --find-bad's pair picture; None: find-bad-pairs.png in --log-dir or here

    @property
    def timeout(self) -> float:
        return self.worker.timeout

    @property
    def bench(self) -> bool:
        return self.worker.bench


# The shortest wait any stage of the test can pass in: a rank's process starts, imports torch and joins the
# store in about a second at best; below that a timeout is a verdict about the timeout, not the network.
SHORTEST_STAGE = 1.0


def require_stage_timeout(flag: str, timeout: float | None, maximum: float = 7 * 24 * 3600) -> None:
    """Raise `BadInput` unless ``timeout`` is a number of seconds long enough for a stage of the test.

    >>> require_stage_timeout("--timeout", 0.001)
    Traceback (most recent call last):
    torchdoctor.errors.BadInput: --timeout 0.001: too short for any stage of the test (starting a rank and joining its store take about a second at best); give at least 1
    """
    require_seconds(flag, timeout, maximum)
    if timeout is not None and timeout < SHORTEST_STAGE:
        raise BadInput(
            f"{flag} {timeout:g}: too short for any stage of the test (starting a rank and joining its store "
            f"take about a second at best); give at least {SHORTEST_STAGE:g}"
        )


def net_options(
    timeout: float = 30.0,
    backend: str = "auto",
    nproc_per_node: int | None = None,
    nnodes: int = 1,
    rdzv_endpoint: str = "",
    rdzv_id: str | None = None,
    nccl_debug: bool = False,
    log_dir: str | os.PathLike | None = None,
    bench: bool = False,
    ops: str | None = None,
    sizes: str | None = None,
    iters: int | None = None,
    warmup: int | None = None,
    expect_busbw: float | None = None,
    plot: str | os.PathLike | None = None,
    find_bad: bool = False,
    pairs_plot: str | os.PathLike | None = None,
) -> NetOptions:
    """The flags of ``torchdoctor net`` as they were typed, checked, as one `NetOptions`; raises `BadInput`."""
    from torchdoctor.net.bandwidth import MAX_SIZE, OPS, human_size, parse_size

    log_dir = None if log_dir is None else given_path("--log-dir", log_dir, "a folder")
    plot = None if plot is None else given_path("--plot", plot, "a file name ending in .png")
    pairs_plot = (
        None if pairs_plot is None else given_path("--pairs-plot", pairs_plot, "a file name ending in .png")
    )
    require_stage_timeout("--timeout", timeout)
    if backend not in ("auto", "nccl", "gloo"):
        raise BadInput(f"--backend {backend}: choose auto, nccl or gloo")
    require_count("--nproc-per-node", nproc_per_node, minimum=1, maximum=MAX_NPROC_PER_NODE)
    require_count("--nnodes", nnodes, minimum=1)
    if nnodes > 1 and not rdzv_endpoint:
        raise BadInput(f"--nnodes {nnodes} needs --rdzv-endpoint HOST:PORT (got {rdzv_endpoint!r})")
    if rdzv_id is not None and not rdzv_id.strip():
        raise BadInput("--rdzv-id '': give a name, the same on every host")
    if rdzv_endpoint:
        try:
            parse_endpoint(rdzv_endpoint)
        except ValueError as error:
            raise BadInput(f"--rdzv-endpoint: {error}") from None
    op_list = [
        op.strip() for op in (ops if ops is not None else ",".join(DEFAULT_OPS)).split(",") if op.strip()
    ]
    unknown = [op for op in op_list if op not in OPS]
    if unknown or not op_list:
        raise BadInput(
            f"--ops {ops}: unknown collective {', '.join(unknown)!r}; choose from {', '.join(OPS)}"
        )
    try:  # parse_size takes 1 byte .. MAX_SIZE
        size_list = [parse_size(s) for s in (sizes or "").split(",") if s.strip()]
    except ValueError as error:
        raise BadInput(f"--sizes {sizes}: {error}") from None
    if sizes is not None and not size_list:
        raise BadInput(f"--sizes {sizes!r}: give sizes from 1 byte to {human_size(MAX_SIZE)}, e.g. 1M,16M")
    require_count("--iters", iters, minimum=1, maximum=MAX_ITERS)
    require_count("--warmup", warmup, minimum=0, maximum=MAX_ITERS)
    if expect_busbw is not None and not (
        math.isfinite(expect_busbw) and 0 < expect_busbw <= MAX_EXPECT_BUSBW
    ):
        raise BadInput(
            f"--expect-busbw {expect_busbw:g}: must be a number of GB/s above 0 and at most {MAX_EXPECT_BUSBW:g}"
        )
    if plot is not None:
        _require_plot(plot)
    if pairs_plot is not None and not find_bad:
        raise BadInput(
            f"--pairs-plot {pairs_plot}: the pair picture comes from --find-bad; add it (or leave it out)"
        )
    if pairs_plot is not None:
        _require_plot(pairs_plot, "--pairs-plot")
    bench = bench or expect_busbw is not None or plot is not None
    bench_only = [
        flag
        for flag, value in (("--ops", ops), ("--sizes", sizes), ("--iters", iters), ("--warmup", warmup))
        if value is not None
    ]
    if bench_only and not bench:
        raise BadInput(
            f"{', '.join(bench_only)} only {'applies' if len(bench_only) == 1 else 'apply'} to the bandwidth "
            "bench: add --bench (or leave them out)"
        )
    if backend == "nccl":
        require_nccl_build()
    worker = WorkerOptions(
        timeout=timeout,
        backend=backend,
        bench=bench,
        ops=tuple(op_list),
        sizes=tuple(size_list),
        warmup=warmup,
        iters=iters,
        find_bad=find_bad,
    )
    return NetOptions(
        worker,
        nproc_per_node,
        nnodes,
        rdzv_endpoint,
        rdzv_id,
        nccl_debug,
        log_dir,
        expect_busbw,
        plot,
        pairs_plot,
    )


def _require_plot(plot: Path, flag: str = "--plot") -> None:
    if plot.suffix.lower() != ".png":
        raise BadInput(f"{flag} {plot}: give a file name ending in .png")
    require_writable_file(flag, plot)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise BadInput(f"{flag} needs matplotlib: pip install 'torchdoctor[plot]'") from None


def require_nccl_build() -> None:
    """Raise `BadInput` when this torch cannot run NCCL at all (a CPU build), before any rank starts."""
    import torch

    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        raise BadInput(
            f"--backend nccl: nccl needs a CUDA build of torch, and this one (torch {torch.__version__}) is a "
            "CPU build; use --backend gloo, or install a CUDA build of torch"
        )
    gpus, why = visible_gpus()
    if gpus == 0:
        raise BadInput(
            f"--backend nccl: torch {torch.__version__} is a CUDA build, but no GPU is visible here ({why}), "
            "so there is nothing for nccl to test; run it on a GPU node (e.g. under srun), or use --backend gloo"
        )


def visible_gpus() -> tuple[int, str]:
    """(how many CUDA devices this process sees, why none when it sees none), without CUDA's start-up warning."""
    import warnings

    import torch

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # "CUDA initialization: Found no NVIDIA driver ..." is said below instead
        count = torch.cuda.device_count()
    if count:
        return count, ""
    if visible is not None and not visible.strip():
        return 0, "CUDA_VISIBLE_DEVICES is empty"
    if visible is not None:
        return 0, f"CUDA_VISIBLE_DEVICES={visible!r}, and torch sees none of them"
    driver = "an NVIDIA driver" if os.path.exists("/proc/driver/nvidia/version") else "no NVIDIA driver"
    return 0, f"torch sees no CUDA device; this machine has {driver}"
