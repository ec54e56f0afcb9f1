"""Kinds of failure between torch and the GPU at run time: memory, kernel images, the driver, device indexes.

The message texts are torch's (``c10/cuda/CUDACachingAllocator.cpp``, ``torch/cuda/__init__.py``,
``c10/cuda/CUDAFunctions.cpp``, ``c10/core/impl/alloc_cpu.cpp``) and the CUDA runtime's.
"""

from __future__ import annotations

import re

from torchdoctor.explain import printed_versions
from torchdoctor.explain.kinds import arch_wheels, cublas_build, task_gpus
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    merged,
    on_ranks,
    size_in_bytes,
)
from torchdoctor.explain.steps_before import memory_grew, ran_before

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)
_SIZE = r"(?P<{0}>\d+(?:\.\d+)?) ?(?P<{0}_unit>[KMGTPE]?i?B)\b"


def _size(name: str) -> str:
    return _SIZE.format(name)


def _bytes(facts: dict, name: str) -> float | None:
    if name not in facts:
        return None
    return size_in_bytes(facts[name], facts.get(f"{name}_unit", "B"))


def _shown(facts: dict, name: str) -> str:
    return f"{facts[name]} {facts.get(name + '_unit', '')}".strip()


# -- out of memory --------------------------------------------------------------------------------------


def _reserved_unused(facts: dict, unallocated: float, request: float) -> str:
    """What the numbers show of the memory PyTorch reserved and does not use, beside the request: torch 2.1+ says
    it ("reserved by PyTorch but unallocated"); from torch 1.x-2.0's reserved and allocated it is the difference."""
    if "unallocated" in facts:
        held = f"{_shown(facts, 'unallocated')} is reserved by PyTorch but unallocated"
    else:
        size = f"{unallocated / 2**30:.2f} GiB" if unallocated >= 2**30 else f"{unallocated / 2**20:.2f} MiB"
        held = (
            f"{size} is reserved by PyTorch but not allocated ({_shown(facts, 'reserved')} reserved, "
            f"{_shown(facts, 'allocated')} allocated)"
        )
    ask = _shown(facts, "request")
    if unallocated >= request:
        return f"{held}, more than the {ask} request"
    return f"{held}, which with the {_shown(facts, 'free')} free would hold the {ask} request"


def _oom(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = next((h.facts for h in hits if "request" in h.facts), hits[0].facts)
    gpu = facts.get("gpu")
    parts = []
    if "request" in facts:
        parts.append(f"tried to allocate {_shown(facts, 'request')}")
    for name, label in (
        ("total", "total capacity"),
        ("allocated", "allocated by PyTorch"),
        ("free", "free"),
        ("reserved", "reserved by PyTorch"),
        ("unallocated", "reserved but unallocated"),
        ("cached", "cached"),
        ("process", "in use by this process"),
    ):
        if name in facts:
            parts.append(f"{_shown(facts, name)} {label}")
    other_is_self = "other" in facts and _other_is_this_process(facts, ctx)
    if "other" in facts:
        parts.append(
            f"process {facts['other_pid']} (this one, as the host numbers it) holds {_shown(facts, 'other')}"
            if other_is_self
            else f"process {facts['other_pid']} holds {_shown(facts, 'other')}"
        )
    where = f" on GPU {gpu}" if gpu is not None else ""
    summary = f"CUDA out of memory{where}{on_ranks(hits)}" + (": " + ", ".join(parts) if parts else "")
    summary += ran_before(facts)
    if all("nccl_malloc" in h.facts for h in hits):
        size = int(next(h.facts["nccl_malloc"] for h in hits))
        summary = f"NCCL could not allocate {size / 2**20:.1f} MiB on the GPU for its buffers{on_ranks(hits)}"
    if all("cudnn_alloc" in h.facts for h in hits):
        summary = f"cuDNN could not allocate the memory it needs (CUDNN_STATUS_ALLOC_FAILED){on_ranks(hits)}"
    if all("cudnn_start" in h.facts for h in hits):
        status = hits[0].facts["cudnn_start"]
        summary = (
            f"cuDNN could not start or choose a convolution ({status}): most often the GPU's memory is full, "
            f"where cuDNN's handle and workspaces are allocated{on_ranks(hits)}"
        )
    if all("cublas_start" in h.facts for h in hits):
        summary = (
            "cuBLAS could not create its handle (CUBLAS_STATUS_NOT_INITIALIZED at cublasCreate): most often the "
            f"GPU's memory is full, where the handle is allocated{on_ranks(hits)}"
        )
    request, total = _bytes(facts, "request"), _bytes(facts, "total")
    free = _bytes(facts, "free")
    unallocated = _bytes(facts, "unallocated")
    reserved, allocated = _bytes(facts, "reserved"), _bytes(facts, "allocated")
    if unallocated is None and reserved is not None and allocated is not None:
        unallocated = max(0.0, reserved - allocated)
    if "impossible_gpu_request" in facts:
        fix = (
            f"A request of {_shown(facts, 'request')} is not a shortage: no GPU has that much. The code that "
            "asked computed a wrong size (an overflowed or uninitialised size, a wrong shape) — the last "
            "frame of the traceback names it (often a custom CUDA extension or op). A smaller batch will not "
            "help; report it to the project that owns that code, with the shapes you passed."
        )
        return summary + " — an impossible request", fix
    grew = memory_grew(facts)
    lines = [grew] if grew else []
    if request is not None and total is not None and request > 4 * total:
        # a larger GPU holds it: a wrong size, or one input (a batch, a sequence) this GPU cannot take
        lines.append(
            f"One request of {_shown(facts, 'request')} is more than four times this GPU's "
            f"{_shown(facts, 'total')}: print the shapes the operation in the traceback's last frame was given. "
            "A size computed wrong (a dimension from the wrong axis, an attention or distance matrix over a whole "
            "input) is a bug to fix there; shapes you meant need a smaller batch or sequence, or a larger GPU."
        )
    allowed = _bytes(facts, "allowed")
    if allowed is not None:
        # CUDACachingAllocator adds "N allowed; " when torch.cuda.set_per_process_memory_fraction capped the
        # process: it raises at the cap, whatever the GPU still has free
        lines.append(
            f"This process is capped at {_shown(facts, 'allowed')} of the GPU "
            "(torch.cuda.set_per_process_memory_fraction, called by the script or a library it uses): it ran out "
            "at that cap"
            + (f", with {_shown(facts, 'free')} of the GPU still free" if "free" in facts else "")
            + ". Raise the fraction (or remove the call) if the GPU is not shared; otherwise need less memory."
        )
    conf = ctx.facts.get("alloc_conf", "")
    already = "expandable_segments:true" in conf.replace(" ", "").lower()
    if allowed is not None:
        # under a per-process cap the GPU's free memory is not the process's to take: what is left of the cap is
        free = max(
            0.0, allowed - (reserved if reserved is not None else (allocated or 0.0) + (unallocated or 0.0))
        )
    fragmented = (
        unallocated is not None
        and request is not None
        and total is not None
        and unallocated >= request
        and unallocated >= 0.1 * total
    ) or (
        # the allocator frees its cached blocks and retries before it raises: what is still reserved but
        # unallocated sits in segments partly in use, so free + that covering the request is fragmentation
        unallocated is not None
        and free is not None
        and request is not None
        and free + unallocated >= request
        and unallocated >= 0.25 * request
    )
    room_left = free is not None and request is not None and free >= 2 * request
    process = _bytes(facts, "process")
    torch_held = (allocated or 0.0) + (unallocated or 0.0)
    if process is not None and torch_held and process - torch_held > max(0.5 * process, 2**30):
        lines.append(
            f"Of the {_shown(facts, 'process')} this process holds on the GPU, PyTorch's allocator has only "
            f"{torch_held / 2**30:.2f} GiB: the rest is another library's in the same process (JAX or "
            "TensorFlow preallocating most of the GPU, NCCL's buffers, a CUDA extension's own allocations). "
            "Stop that preallocation (JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false; TensorFlow: "
            "set_memory_growth) or give it another GPU."
        )
    sharers = _sharers(hits, ctx)
    if len(sharers) >= 2:
        lines.append(
            f"{len(sharers)} other processes hold memory on this GPU (pids {', '.join(sharers)}): when they are "
            "this job's other ranks, the ranks share one GPU instead of one each. Every rank must use its own "
            "before it builds the model: torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) (a bare .cuda() "
            "or device='cuda' is GPU 0 otherwise), or, if they are other jobs, stop them or use another GPU "
            "(`nvidia-smi` lists them). A checkpoint saved from GPU 0 comes back on GPU 0 in every rank, "
            "set_device or not: load it with torch.load(path, map_location='cpu') (or "
            "map_location=f'cuda:{local_rank}')."
        )
    elif "other" in facts and not other_is_self:
        lines.append(
            f"Another process (pid {facts['other_pid']}) holds {_shown(facts, 'other')} of this GPU: stop it "
            "or use another GPU (`nvidia-smi` lists them); with several ranks, check none shares a GPU."
        )
    if (fragmented or room_left) and not already:
        foreign = any(line.startswith("Of the ") for line in lines)
        if fragmented:
            # the numbers show memory reserved and not allocated that could hold the request, not that the
            # allocator could not have used it: fragmentation is the likely reading, not a certain one
            why = _reserved_unused(facts, unallocated, request)
            lead = "Fragmentation adds to it" if foreign else "This is likely fragmentation"
        else:
            why = f"the GPU still had {_shown(facts, 'free')} free for a {_shown(facts, 'request')} request"
            lead = "Fragmentation adds to it" if foreign else "This is fragmentation, not a lack of memory"
        lines.append(
            lead + f": {why}. Let the allocator grow segments instead of "
            "splitting fixed blocks:\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # torch >= 2.1 "
            "(older: max_split_size_mb:128)"
        )
    elif already and (fragmented or room_left):
        lines.append(
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True is already set, so this is a real shortage."
        )
    if any("nccl_malloc" in h.facts for h in hits):
        lines.append(
            "NCCL allocates its buffers on the GPU when a communicator is made and on its first collectives "
            "(more with more channels and peers): leave it room — create the process group and run a first "
            "collective (dist.barrier()) before filling the GPU, check no other process holds the GPU "
            "(`nvidia-smi`), and shrink NCCL's own share with NCCL_BUFFSIZE=2097152 (the default is 4 MiB)"
            " or fewer channels (NCCL_MAX_NCHANNELS)."
        )
    if any("cudnn_start" in h.facts for h in hits):
        lines.append(
            "Check what else holds the GPU (nvidia-smi: another job, the job's other ranks on the same GPU, a "
            "notebook kernel left running): cuDNN needs room beside the model to create its handle and its "
            "workspaces. torch.backends.cudnn.benchmark = False keeps it from the algorithms with the largest "
            "workspaces."
        )
    if any("cublas_start" in h.facts for h in hits):
        lines.append(
            "Check what else holds the GPU (nvidia-smi: another job, the job's other ranks on the same GPU): cuBLAS "
            "allocates its handle and workspace on the GPU at the first matrix multiply."
        )
    if any("cudnn_alloc" in h.facts for h in hits):
        lines.append(
            "cuDNN's workspace comes from the GPU's memory: torch.backends.cudnn.benchmark = False keeps it from "
            "trying the fastest algorithms, which need the largest workspaces."
        )
    lines.append(
        "To need less memory: a smaller batch size (torchdoctor's find_executable_batch_size finds the largest that "
        "fits; keep the effective batch with gradient accumulation), mixed precision (fp16 / bf16 autocast, "
        "or the script's --fp16 / --bf16 option), gradient checkpointing, or shard the model (FSDP / ZeRO)."
    )
    # the allocator prints the same line when the memory of earlier steps was never freed: a batch smaller
    # only postpones it (said first, with the steps, where the log shows them)
    # with the step the log shows where it shows one; else said as a condition (a pasted traceback rarely
    # keeps the steps above it, and memory kept from step to step is a common cause of this very line)
    if not grew:
        shown = facts.get("steps_seen")
        lines.append(
            (
                f"The log shows a step before this ({shown!r}): if it ran for many steps, memory grew step by step"
                if shown
                else "If it ran for many steps before this, memory grew step by step"
            )
            + ": something keeps every step's tensors "
            "(a running total of the loss with its graph, total += loss instead of loss.item(); outputs or "
            "logits kept in a list; evaluation without torch.no_grad()). torch.cuda.memory_allocated() printed "
            "each step shows the growth."
        )
    return summary, "\n".join(lines)


_PROCESS_IN_USE = R(r"Process (\d+) has \d+(?:\.\d+)? ?[KMGTPE]?i?B memory in use")


def _sharers(hits: list[Hit], ctx: Context) -> list[str]:
    """The pids torch's out-of-memory message lists as holding memory on the failing GPU (CUDACachingAllocator
    asks NVML for every process on the device and names each: "Process 3112 has 19.50 GiB memory in use"),
    less the failing process itself where the log's torchrun summary names it (a container's host pid)."""
    pids: list[str] = []
    for hit in hits:
        for pid in _PROCESS_IN_USE.findall(hit.facts.get("processes", "")):
            if pid not in pids and pid not in ctx.facts.get("worker_pids", ()):
                pids.append(pid)
    return pids


def _other_is_this_process(facts: dict, ctx: Context) -> bool:
    """Whether torch's "Process 144 has 77.93 GiB memory in use" is the failing process itself: in a
    container torch cannot tell its own host pid, so it lists itself among the others. It is when the log's
    own summary names pid 144 as one of its workers ("(pid: 144)"), or when that process and what PyTorch
    holds here could not both fit on the GPU."""
    if facts.get("other_pid") in ctx.facts.get("worker_pids", ()):
        return True
    other, total, free = _bytes(facts, "other"), _bytes(facts, "total"), _bytes(facts, "free")
    held = sum(v for v in (_bytes(facts, "allocated"), _bytes(facts, "unallocated")) if v is not None)
    if other is None or total is None or not held:
        return False
    used = total - free if free is not None else total
    return other + held > used + 0.02 * total


# cuDNN's failures to start or to choose a convolution: the GPU's memory most often, never certain alone
_CUDNN_START = R(
    r"(?P<cudnn_start>CUDNN_STATUS_NOT_INITIALIZED|CUDNN_STATUS_INTERNAL_ERROR|"
    r"Unable to find a valid cuDNN algorithm to run convolution|no valid convolution algorithms available in CuDNN|"
    r"(?:GET|FIND) was unable to find an engine to execute this computation)"
)
# cuDNN's v8 API (aten/src/ATen/native/cudnn/Conv_v8.cpp) after every engine it was offered failed: an engine whose
# workspace did not fit, as the v7 API's "Unable to find a valid cuDNN algorithm", or none for this dtype on this GPU
_CUDNN_ENGINE = R(r"(?P<cudnn_engine>(?:GET|FIND) was unable to find an engine to execute this computation)")
# the thread's cuBLAS handle, created on its first matrix multiply (aten/src/ATen/cuda/CublasHandlePool.cpp): cublasCreate
# allocates on the GPU, so a full GPU fails it; so does a CUDA context an earlier kernel's fault broke, or a build
# that does not fit the driver
_CUBLAS_START = R(r"(?P<cublas_start>CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate\(handle\)`)")


CUDA_OOM = Recogniser(
    # c10/cuda/CUDACachingAllocator.cpp (the message across torch 1.x-2.x), torch.OutOfMemoryError,
    # NCCL's "Cuda failure 'out of memory'"
    kind="cuda_oom",
    templates=(
        "torch_native:cuda-out-of-memory",
        "torch_native:cuda-out-of-memory-old",  # the same raise as torch 1.x-2.0 worded it
        # the same raise with the private pools' and the process's own shares, and the expandable_segments advice
        "torch_cuda:cuda-oom-reserved-but-unallocated",
        "torch_native:cudnn-status-alloc-failed",
        # cuDNN failing to start (its handle) or to find a convolution algorithm whose workspace fits
        "torch_native:cudnn-status-not-initialized",
        "torch_native:cudnn-status-internal-error",
        "torch_native:cudnn-no-valid-convolution-algorithm",
        "torch_native:cudnn-no-valid-convolution-algorithms-old",
        # the same search in cuDNN's v8 API (torch 1.13+ builds): no engine ran, with or without cudnn.benchmark
        "torch_cuda:cudnn-get-unable-to-find-engine",
        "torch_cuda:cudnn-find-unable-to-find-engine",
        "torch_cuda:cublas-not-initialized-cublascreate",
        # NCCL src/include/alloc.h (2.14+): its own buffers' cudaMalloc / cuMem allocation failed
        "nccl:failed-to-cuda-malloc-bytes",
        "third_party:thrust-bulk-launch-out-of-memory",
    ),
    title="CUDA out of memory",
    anchors=(
        "CUDA out of memory",
        "OutOfMemoryError",
        "CUDA error: out of memory",
        "Cuda failure 'out of memory'",
        "triple_chevron_launcher::launch(): out of memory",
        " 'out of memory'",  # NCCL 2.19+'s CUCHECK: "Cuda failure 2 'out of memory'" (the driver's number)
        "CUBLAS_STATUS_ALLOC_FAILED",
        "HIP out of memory",
        # cuDNN's status as torch raised it (aten/src/ATen/cudnn/Exceptions.h "cuDNN error: %s", and torch<=0.4's
        # torch/backends/cudnn CuDNNError: the status alone); cuDNN's API reference: "Resource allocation failed
        # inside the cuDNN library. This is usually caused by an internal cudaMalloc() failure" (not always)
        "CUDNN_STATUS_ALLOC_FAILED",
        # cuDNN's handle (cudnnCreate) and its convolutions' workspaces come from the GPU's memory: on a full GPU
        # it cannot start (NOT_INITIALIZED, INTERNAL_ERROR) or finds no algorithm whose workspace fits (Conv.cpp's
        # try_all, "no valid convolution algorithms available in CuDNN" before 1.5); a cuDNN that does not fit the
        # build prints the same, so only likely (docs/explain.md: the messages users post most)
        "CUDNN_STATUS_NOT_INITIALIZED",
        "CUDNN_STATUS_INTERNAL_ERROR",
        "Unable to find a valid cuDNN algorithm to run convolution",
        "no valid convolution algorithms available in CuDNN",
        "was unable to find an engine to execute this computation",
        "CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
        # NCCL's WARN after the allocation of its own buffers (channels, FIFOs) failed on the GPU
        "Failed to CUDA malloc",
    ),
    match=R(
        r"CUDA out of memory|torch(?:\.cuda)?\.OutOfMemoryError|CUDA error: out of memory|"
        r"Cuda failure (?:\d{1,4} )?'out of memory'|CUBLAS_STATUS_ALLOC_FAILED|HIP out of memory|"
        r"triple_chevron_launcher::launch\(\): out of memory|"
        r"CUDNN_STATUS_ALLOC_FAILED|Failed to CUDA malloc \d+ bytes|"
        + _CUDNN_START.pattern
        + "|"
        + _CUBLAS_START.pattern
    ),
    facts=(
        R(r"(?P<cudnn_alloc>CUDNN_STATUS_ALLOC_FAILED)"),
        _CUDNN_START,
        _CUDNN_ENGINE,
        _CUBLAS_START,
        R(r"Failed to CUDA malloc (?P<nccl_malloc>\d+) bytes"),
        # Thrust's bulk launcher (CUDA 7-8) words cudaErrorMemoryAllocation from a kernel launch as its own
        # system_error: outside the caching allocator too
        R(r"(?P<runtime_oom>CUDA error: out of memory|triple_chevron_launcher::launch\(\): out of memory)"),
        R(r"Tried to allocate " + _size("request")),
        # a thousand GiB or more (torch's format_size never goes past GiB): no GPU holds it
        R(r"Tried to allocate (?P<impossible_gpu_request>\d{4,}(?:\.\d+)? ?GiB|\d+(?:\.\d+)? ?[TPE]iB)"),
        R(r"(?:; |is free\. [^\n]{0,200}?)" + _size("allowed") + r" allowed;"),
        R(r"\(GPU (?P<gpu>\d+); " + _size("total") + r" total capacity"),
        R(r"; " + _size("allocated") + r" already allocated"),
        R(r"; " + _size("free") + r" free"),
        R(_size("reserved") + r" reserved in total by PyTorch"),
        R(_size("cached") + r" cached\)"),
        R(
            r"GPU (?P<gpu>\d+) has a total capacity of "
            + _size("total")
            + r" of which "
            + _size("free")
            + r" is free"
        ),
        R(r"this process has " + _size("process") + r" memory in use"),
        R(r"Of the allocated memory " + _size("allocated") + r" is allocated by PyTorch"),
        R(_size("unallocated") + r" is reserved by PyTorch but unallocated"),
        R(r"Process (?P<other_pid>\d+) has " + _size("other") + r" memory in use"),
        R(r"(?P<processes>(?:Process \d+ has \d+(?:\.\d+)? ?[KMGTPE]?i?B memory in use\.? ?){2,})"),
    ),
    absorbs=("nccl_error",),
    # the script's own source line that tests for the message, as a traceback or notebook cell shows it
    # (`if "CUDA out of memory" in str(e):`, `except torch.cuda.OutOfMemoryError:`): code, not the failure
    reject=R(
        r"\bif\b[^\n]{0,80}[\"'][^\"'\n]{0,40}out of memory[^\"'\n]{0,40}[\"']\s+in\s+str\(|"
        r"\bexcept\s+\(?(?:torch\.(?:cuda\.)?)?OutOfMemoryError\b"
    ),
    # the allocator lists every process on the GPU: two or more others beside this one are the job's ranks on
    # one GPU as often as other jobs, and ranks that share a GPU is a cause of its own (a rank's device choice)
    # cuDNN's allocation failure is "usually" its cudaMalloc (cuDNN's docs), so alone it is only likely.
    # "CUDA error: out of memory" is not the caching allocator's (CUDACachingAllocator words its own "CUDA out of
    # memory. Tried to allocate"): it is C10_CUDA_CHECK's text for cudaErrorMemoryAllocation from a call outside
    # it, most often the CUDA context a process creates on a GPU other processes (the job's ranks without a
    # device of their own, another job) already filled — only likely alone, the ranks' GPU choice named
    confirm=lambda hits, ctx: (
        len(_sharers(hits, ctx)) < 2
        and not all("cudnn_alloc" in h.facts for h in hits)
        and not all("runtime_oom" in h.facts for h in hits)
        and not all("cudnn_start" in h.facts for h in hits)
        and not all("cublas_start" in h.facts for h in hits)
        # NCCL's own line says an allocation failed, not why: out of memory beside it ("Cuda failure 'out of
        # memory'") is certain, alone it is likely (a sticky error from before fails every cudaMalloc too)
        and not all("nccl_malloc" in h.facts for h in hits)
        # the allocator prints the same line for a size no GPU has: a size computed wrong (cpu_oom's rule)
        and not all("impossible_gpu_request" in h.facts for h in hits)
    ),
    also=(
        Alternative(
            "cpu_oom",
            "an allocation of cuDNN's own that failed on the host, not on the GPU",
            "Watch the host's memory too (free -g, dmesg for the OOM killer): fewer DataLoader workers, a smaller "
            "batch.",
            when=("cudnn_alloc",),
        ),
        Alternative(
            "cudnn_version_mismatch",
            "a cuDNN that does not fit this torch build or this GPU (a system cuDNN found first on "
            "LD_LIBRARY_PATH, a torch built for another CUDA), or no GPU the process can use",
            "python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), "
            "torch.cuda.get_device_name(0))' shows which cuDNN loaded: drop cuDNN folders from LD_LIBRARY_PATH so "
            "the one torch's wheel brings is used, reinstall torch for the driver's CUDA, check CUDA_VISIBLE_DEVICES "
            "is a plain list of indices (0,1 not [0,1]); torch.backends.cudnn.enabled = False for one run tells "
            "cuDNN's part from the rest.",
            when=("cudnn_start",),
        ),
        Alternative(
            "bf16_unsupported",
            "a convolution in a dtype this GPU's cuDNN has no engine for (bfloat16 on a GPU older than Ampere: "
            "T4, V100, P100; torch.cuda.is_bf16_supported() can say True there)",
            "Run the model in float16 or float32 on that GPU (autocast dtype=torch.float16, or no --bf16), or on "
            "an Ampere or newer GPU; torch.backends.cudnn.enabled = False for one run tells cuDNN's part from the "
            "rest.",
            when=("cudnn_engine",),
        ),
        Alternative(
            "device_assert",
            "an earlier kernel's fault (an index or a label out of range) that left CUDA unusable before cuBLAS "
            "started",
            "Run once with CUDA_LAUNCH_BLOCKING=1 (or on the CPU) to see the first failing operation, and check the "
            "labels and indices against the model's sizes.",
            when=("cublas_start",),
        ),
        Alternative(
            "broken_install",
            "a torch build whose CUDA does not fit this GPU or driver",
            "Compare python -c 'import torch; print(torch.__version__, torch.version.cuda, "
            "torch.cuda.get_arch_list())' with nvidia-smi, and reinstall torch built for this machine's CUDA.",
            when=("cublas_start",),
        ),
        Alternative(
            "gpu_selection",
            "the job's ranks sharing one GPU (a rank that never chose its own)",
            "Each rank uses the GPU of its LOCAL_RANK: torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) "
            "before building the model; check CUDA_VISIBLE_DEVICES and the launcher's process count against "
            "the GPUs (nvidia-smi shows which processes sit on which GPU).",
            when=("processes", "runtime_oom"),
        ),
        Alternative(
            "input_shape_mismatch",
            "a tensor size computed wrong (a wrong shape, an overflowed or uninitialised size), not a GPU too small",
            "No GPU has that much memory, so a smaller batch will not help: the last frames of the traceback name "
            "the operation that asked; print the shapes it was given.",
            when=("impossible_gpu_request",),
        ),
        # torch/nn/parallel/data_parallel.py (_check_balance) warns once, as DataParallel is built, that one GPU
        # has under 75% of another's memory or cores; DataParallel then gives every GPU an equal share of each
        # batch (and gathers the outputs on the first), so the weak GPU is the one that runs out. An allocation
        # failure outside the allocator (no GPU named) after that warning is read so; the allocator's own "CUDA out
        # of memory ... GPU N" names the GPU and stays certain
        Alternative(
            "mismatched_gpus",
            "DataParallel over unequal GPUs, the weak one running out first",
            "DataParallel gives every GPU an equal share of each batch, so the GPU with less memory runs out first: "
            "leave it out, CUDA_VISIBLE_DEVICES=<the strong GPUs> python train.py, or DataParallel(model, "
            "device_ids=[...]) listing only matched GPUs (nvidia-smi lists them; a display GPU is often the small "
            "one).",
            when=("imbalance_weak_gpu",),
            first_when=("runtime_oom", "imbalance_weak_gpu"),
            because="DataParallel warned that GPU {imbalance_weak_gpu} has under 75% of GPU "
            "{imbalance_strong_gpu}'s memory or cores",
        ),
    ),
    describe=_oom,
)


# -- kernel images, driver, devices -------------------------------------------------------------------

# The first CUDA release whose nvcc builds each architecture (NVIDIA's CUDA release notes)
_MIN_CUDA = {
    "30": "6.0", "35": "6.0", "37": "6.0", "50": "6.0", "52": "7.0", "60": "8.0", "61": "8.0", "70": "9.0",
    "72": "10.0", "75": "10.0", "80": "11.0", "86": "11.1", "87": "11.4", "89": "11.8", "90": "11.8",
    "100": "12.8", "101": "12.8", "103": "12.9", "110": "13.0", "120": "12.8", "121": "12.9",
}  # fmt: skip


# The first PyTorch release whose official CUDA wheels list each architecture family (PyTorch's release notes:
# sm_80 with the CUDA 11.0 wheels of 1.7.0, sm_86 with CUDA 11.1 in 1.8.0, sm_90 with CUDA 11.8 in 2.0.0,
# sm_101 with CUDA 12.8 in 2.7.0). A GPU of a listed major version runs that major's kernels. The newest GPUs'
# first wheels (sm_100, sm_103, sm_110, sm_120, sm_121) are arch_wheels.NEWEST, which `_no_kernel` asks first.
_MIN_TORCH = {"80": "1.7", "86": "1.8", "90": "2.0", "101": "2.7"}


def _wheel_for(cuda: str) -> str:
    """A torch wheel index that has the architecture (the oldest current one at or above ``cuda``)."""
    major, minor = (int(x) for x in cuda.split(".")[:2])
    return "cu128" if (major, minor) > (11, 8) else "cu118"


def _newest_wheels(printed: str) -> str:
    """Which wheels the newest GPUs need: where the log printed the build's kernels (``printed``: its arch list or
    torch's "supports CUDA capabilities" line), those of them this build has none for; else each of them."""
    kernels = arch_wheels.kernels_in(printed)
    if kernels:
        lacking = arch_wheels.lacking(kernels)
        if not lacking:
            return f"This build has kernels for sm_{', sm_'.join(kernels)}, which the newest GPUs run."
        return (
            f"This build has kernels for sm_{', sm_'.join(kernels)}; of the newest GPUs it has none for\n"
            + ("\n".join(arch_wheels.wheel_line(part) for part in lacking))
        )
    by_wheel: dict[tuple[str, str], list[str]] = {}
    for part in arch_wheels.NEWEST:
        by_wheel.setdefault((part.index, part.torch), []).append(f"{part.names} sm_{part.sm}")
    return (
        "The newest GPUs' first wheels: "
        + "; ".join(
            f"{', '.join(names)}: PyTorch {torch}+ {index}" for (index, torch), names in by_wheel.items()
        )
        + " (pip install torch --index-url https://download.pytorch.org/whl/<that index>)."
    )


def _no_kernel(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    sm, name = facts.get("sm"), (facts.get("gpu_name") or "").strip()
    if facts.get("too_old_capability"):
        summary = (
            f"{name or 'this GPU'} (compute capability {facts['too_old_capability']}) is too old for this torch"
            + (f" (minimum {facts['min_capability']})" if facts.get("min_capability") else "")
        )
        fix = "Use an older torch release that still supports this GPU, or a newer GPU."
        return summary, fix
    summary = "no kernel image for this GPU"
    if sm:
        summary += f": {name + ' with ' if name else ''}CUDA capability sm_{sm} is not in this PyTorch build"
    if facts.get("supported"):
        summary += f" (it has {facts['supported'].strip()})"
    summary += on_ranks(hits)
    newest = arch_wheels.first_wheel(sm) if sm else None
    if newest:
        fix = (
            f"This torch was not compiled for sm_{sm}. The first wheels that run it, for "
            f"{arch_wheels.wheel_line(newest)}\n"
            "Check with:\npython -c 'import torch; print(torch.version.cuda, torch.cuda.get_arch_list())'\n"
            f"A CUDA extension you build yourself needs TORCH_CUDA_ARCH_LIST to include {int(sm) // 10}.{int(sm) % 10}."
        )
    elif sm:
        cuda = _MIN_CUDA.get(sm)
        # the wheel's local version names the CUDA it was built with: torch 1.8.0+cu111
        need = (
            f"a torch built with CUDA {cuda} or newer (+cu{cuda.replace('.', '')} or later)"
            if cuda
            else "a newer torch build"
        )
        if sm in _MIN_TORCH:  # no earlier release has a wheel with it
            need = need.replace("a torch built", f"PyTorch {_MIN_TORCH[sm]} or newer, built", 1)
        fix = (
            f"This torch was not compiled for sm_{sm}. Reinstall PyTorch as {need} that includes sm_{sm}, e.g.\n"
            f"pip install torch --index-url https://download.pytorch.org/whl/{_wheel_for(cuda or '12.8')}\n"
            f"(conda: pytorch-cuda=<that CUDA version> -c pytorch -c nvidia). Check with:\n"
            "python -c 'import torch; print(torch.version.cuda, torch.cuda.get_arch_list())'\n"
            f"A CUDA extension you build yourself needs TORCH_CUDA_ARCH_LIST to include {int(sm) // 10}.{int(sm) % 10}."
        )
    else:
        fix = (
            "This torch, or a CUDA extension, was not built for this GPU's architecture. Compare\n"
            "python -c 'import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())'\n"
            "Reinstall PyTorch with a build that lists your sm_XY (a newer PyTorch for a newer GPU); rebuild an extension (apex, flash-attn, a custom op) "
            "with TORCH_CUDA_ARCH_LIST set to your GPU's capability (`torchdoctor env` shows both)."
        )
        fix += "\n" + _newest_wheels(facts.get("supported") or ctx.facts.get("arch_list") or "")
    return summary, fix


NO_KERNEL_IMAGE = Recogniser(
    # torch/cuda/__init__.py (_check_capability: "... is not compatible with the current PyTorch installation"),
    # cudaErrorNoKernelImageForDevice
    kind="no_kernel_image",
    templates=("cuda_runtime:no-kernel-image",),
    title="no kernel image for this GPU",
    anchors=(
        "no kernel image is available for execution on the device",
        "is not compatible with the current PyTorch installation",
        "cudaErrorNoKernelImageForDevice",
        "PyTorch no longer supports this GPU because it is too old",
        "CUDA error: invalid device function",
    ),
    span=2,
    facts=(
        R(r"(?P<gpu_name>[A-Za-z][\w .\-/]{0,60}?) with CUDA capability\s+sm_(?P<sm>\d+)"),
        # the warning wrapped by a terminal after "capability": the anchored line starts with the architecture
        R(r"(?:^|\s)sm_(?P<sm>\d+) is not compatible with the current PyTorch"),
        R(r"supports CUDA capabilities (?P<supported>(?:(?:sm|compute)_\d+\w? ?){1,40})"),
        R(
            r"Found GPU\d+ (?P<gpu_name>[^\n]{1,60}?) which is of cuda capability (?P<too_old_capability>[\d.]+)"
        ),
        R(r"minimum cuda capability supported by this library is (?P<min_capability>[\d.]+)"),
    ),
    describe=_no_kernel,
)


def _cuda_version(code: str) -> str:
    """NVIDIA's integer CUDA version: 11060 -> 11.6."""
    number = int(code)
    return f"{number // 1000}.{number % 1000 // 10}"


_WHEELS = ("9.2", "10.1", "10.2", "11.1", "11.3", "11.6", "11.7", "11.8", "12.1", "12.4", "12.6", "12.8")


def _driver(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    summary = "the NVIDIA driver is too old for this torch"
    supported = None
    if facts.get("found_version"):
        supported = _cuda_version(facts["found_version"])
        summary += f": it supports CUDA up to {supported} (found version {facts['found_version']})"
    elif facts.get("insufficient"):
        summary += (
            ": CUDA driver version is insufficient for CUDA runtime version (or no NVIDIA driver at all)"
        )
    elif facts.get("ptx_newer"):
        summary = (
            "the NVIDIA driver is too old for the PTX it was handed: the kernel was compiled (to PTX only) by a "
            "newer CUDA toolkit than this driver can compile"
        )
    torch_version = facts.get("torch_version") or ctx.facts.get("torch_version")
    if torch_version:
        summary += f"; torch {torch_version}"
    summary += on_ranks(hits)
    fix = (
        "Update the NVIDIA driver to one that supports torch's CUDA (`nvidia-smi` shows the driver and the "
        "highest CUDA it supports):\n"
        "sudo apt install cuda-drivers   # from NVIDIA's CUDA repository; or nvidia-driver-<version>, then reboot"
    )
    if facts.get("insufficient") and not supported:
        fix += (
            "\nThe CUDA runtime says the same when there is no NVIDIA driver or GPU at all (an integrated or "
            "non-NVIDIA GPU, a container started without --gpus): if `nvidia-smi` finds no GPU, this machine "
            "cannot run the CUDA build; use a machine with an NVIDIA GPU, or the CPU build."
        )
    if facts.get("ptx_newer"):
        fix += (
            "\nOr build the extension or kernel for this GPU's architecture, so no PTX needs compiling at run "
            'time: TORCH_CUDA_ARCH_LIST="8.0" (the GPU\'s compute capability, `nvidia-smi --query-gpu='
            "compute_cap --format=csv`) with a CUDA toolkit no newer than the driver supports, then rebuild."
        )
    if supported:
        older = [w for w in _WHEELS if tuple(map(int, w.split("."))) <= tuple(map(int, supported.split(".")))]
        if older:
            tag = "cu" + older[-1].replace(".", "")
            fix += (
                f"\nOr install a torch built for CUDA {older[-1]} or older, which this driver runs:\n"
                f"pip install torch --index-url https://download.pytorch.org/whl/{tag}"
            )
    return summary, fix


DRIVER_TOO_OLD = Recogniser(
    # c10/cuda/CUDAFunctions.cpp ("The NVIDIA driver on your system is too old (found version %d)"),
    # cudaErrorInsufficientDriver (35), cudaErrorCompatNotSupportedOnDevice (804)
    kind="driver_too_old",
    templates=(
        "cuda_runtime:insufficient-driver",
        "cuda_runtime:compat-not-supported",
        "cuda_runtime:unsupported-ptx",
        "nccl:cuda-driver-version-found-is-minimum",  # NCCL src/init.cc
    ),
    title="NVIDIA driver too old",
    anchors=(
        "driver on your system is too old",
        "CUDA Driver version found is",
        "driver version is insufficient for CUDA runtime version",
        "forward compatibility was attempted on non supported HW",
        "cudaErrorInsufficientDriver",
        # cudaErrorUnsupportedPtxVersion (222): PTX from a newer toolkit than the driver's JIT knows
        "the provided PTX was compiled with an unsupported toolchain",
    ),
    span=2,
    facts=(
        R(r"too old \(found version (?P<found_version>\d{4,6})\)"),
        R(r"CUDA Driver version found is (?P<found_version>\d{4,6})"),
        R(r"(?P<insufficient>driver version is insufficient)"),
        R(r"(?P<compat>forward compatibility was attempted)"),
        R(r"(?P<ptx_newer>the provided PTX was compiled with an unsupported toolchain)"),
        R(r"\btorch (?P<torch_version>\d+\.\d+(?:\.\d+)?[\w.+]*)"),
    ),
    # cudart's "insufficient" is also what a machine with no NVIDIA driver at all gets: the driver's own
    # version (torch's "found version N") or an NVIDIA stack in the log makes it certain
    confirm=lambda hits, ctx: any(
        "found_version" in h.facts or "compat" in h.facts or "ptx_newer" in h.facts for h in hits
    ),
    also=(
        Alternative(
            "cuda_unavailable",
            "no NVIDIA driver or no NVIDIA GPU at all (the CUDA runtime says the same then)",
            "Check that the machine has an NVIDIA GPU and its driver: nvidia-smi (no such command, or no GPU "
            "listed: install the driver, or in a container start it with --gpus all / nvidia-docker). Without "
            "an NVIDIA GPU, run a CPU build of torch.",
        ),
    ),
    describe=_driver,
)


def _ordinal(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("smp_processes"):
        return (
            f"SageMaker's model parallel library (smdistributed.modelparallel) refused {facts['smp_processes']} "
            f"processes on a machine with {facts['smp_devices']} GPUs: more processes per host than GPUs"
            + on_ranks(hits),
            "smp.init() needs one process per GPU at most on each instance. Lower the estimator's "
            "distribution={'mpi': {'enabled': True, 'processes_per_host': N}} to the instance's GPU count "
            "(ml.p3.8xlarge has 4, ml.p3.16xlarge and ml.p4d.24xlarge 8), or pick an instance type with as many "
            "GPUs as processes_per_host.",
        )
    summary = "invalid device ordinal: a process asked for a GPU index that does not exist" + on_ranks(hits)
    if facts.get("set_device"):
        summary += f" (in {facts['set_device'].strip()})"
    fix = (
        "More processes than visible GPUs, or a device index past the last GPU. --nproc_per_node "
        "(accelerate: --num_processes) must be at most the number of GPUs this process sees (`nvidia-smi -L`, and CUDA_VISIBLE_DEVICES, which renumbers "
        "them from 0), e.g.\n"
        "CUDA_VISIBLE_DEVICES=0,1,2 torchrun --nproc_per_node=3 train.py\n"
        "Each process should use torch.cuda.set_device(int(os.environ['LOCAL_RANK'])). A checkpoint saved on "
        "another GPU is loaded with torch.load(path, map_location='cpu')."
    )
    slurm = task_gpus.under_slurm(ctx.facts)  # a Slurm job: the GPUs each task sees are the ones bound to it
    if slurm:
        summary += slurm[0]
        fix = f"{slurm[1]}\nOtherwise: {fix[0].lower()}{fix[1:]}"
    return summary, fix


INVALID_DEVICE_ORDINAL = Recogniser(
    # cudaErrorInvalidDevice (10, "invalid device ordinal"); DataParallel's "Invalid device id". torch.load's
    # "deserialize object on CUDA device N but torch.cuda.device_count() is M" is checkpoint_device_map's
    kind="invalid_device_ordinal",
    templates=(
        "cuda_runtime:invalid-device-ordinal",
        "torch:invalid-device-id",
        # torch/distributed/elastic/agent/server/local_elastic_agent.py: torchrun's nproc_per_node past the GPUs
        "torch:local-rank-exceeds-available-gpus-in",
        "torch:device-id-is-out-of-range",  # distributed_c10d.py: init_process_group(device_id=...) past the GPUs
        "torch:device-is-not-visible-cuda-visible",  # torch/cuda/__init__.py: an index CUDA_VISIBLE_DEVICES hides
        "torch:device-is-not-visible-hip-visible",  # the same check on ROCm, against HIP_VISIBLE_DEVICES
        # smdistributed/modelparallel/backend/core.py: SageMaker's model parallel library, more processes than GPUs
        "third_party:smdistributed-modelparallel-node-local-processes-exceed-devices",
    ),
    title="GPU index that does not exist",
    anchors=(
        "invalid device ordinal",
        "Invalid device id",
        "device >= 0 && device < num_gpus",
        "exceeds available GPUs in CUDA_VISIBLE_DEVICES",
        "Please use a device index less than the number of accelerators available",
        "is not visible (CUDA_VISIBLE_DEVICES=",
        "is not visible (HIP_VISIBLE_DEVICES=",
        "cannot be larger than the device count",
    ),
    span=8,
    facts=(
        R(r"(?P<set_device>torch\.cuda\.set_device\([^\n)]{0,100}\))"),
        R(
            r"node-local MPI processes (?P<smp_processes>\d+) ?cannot be larger than the device count (?P<smp_devices>\d+)"
        ),
    ),
    # cudart's bare "invalid device ordinal" (cudaErrorInvalidDevice) is returned for any index past the count:
    # a rank's set_device, a tensor's .to('cuda:N'), and torch.load restoring a tensor onto the GPU it was saved
    # from (serialization.py's restore_location) alike. Certain with the launcher's, DataParallel's and
    # torch.cuda's own checks of the index (the specific anchors), or with set_device in the log (the frame or
    # the call: the rank picked its GPU); else likely, naming a checkpoint's saved device when torch.load is in it.
    # Where the traceback runs through an installed package (not torch), that package's code may have chosen the
    # index itself (Ray Train's prepare_model under Ray Tune, ray-project/ray#26493): only likely, naming it
    generic=("invalid device ordinal",),
    confirm=lambda hits, ctx: (
        any(h.specific for h in hits)
        or (
            ("set_device_frame" in ctx.facts or any("set_device" in h.facts for h in hits))
            and "frame_package" not in ctx.facts
        )
    ),
    also=(
        Alternative(
            "library_version_bug",
            "an installed package that chose the GPU index itself (its frames are in the traceback), wrongly",
            "See which package's frame calls torch.cuda.set_device in the traceback: when it picks the index "
            "itself (Ray Train's TorchTrainer set the Ray GPU id instead of its index among CUDA_VISIBLE_DEVICES "
            "under Ray Tune until ray-project/ray#26493), upgrade that package (pip install -U <package>) or "
            "pass it the device explicitly.",
            when=("frame_package",),
        ),
        Alternative(
            "checkpoint_device_map",
            "a checkpoint restored onto the GPU it was saved from, which this process does not have",
            "torch.load puts each tensor back on its saved device: load it with "
            "torch.load(path, map_location='cpu') (or map_location=f'cuda:{LOCAL_RANK}') and move the model "
            "after.",
            when=("saw_torch_load",),
            # torch.load's own restore frames in the traceback: the index was the saved tensor's
            first_when=("restoring_saved_device",),
            because="the traceback runs through torch.load's {restoring_saved_device}",
        ),
    ),
    describe=_ordinal,
)


# another vendor's accelerator named in a log: its extension runs on torch's CPU build
OTHER_ACCELERATORS = ("torch_npu", "torch-npu", "Ascend", "intel_extension_for_pytorch", "habana_frameworks")

# torch.load putting a tensor back on the GPU it was saved from: serialization.py's default_restore_location calls
# _cuda_deserialize, which moves it there (obj.cuda(device); releases before 1.x's validate_cuda_device named the
# count instead). Its frames beside "invalid device ordinal": the saved index, past this machine's GPUs
RESTORE_FRAME = (
    "serialization.py",
    R(
        r"serialization\.py\S{0,10}, line \d+, in "
        r"(?P<restoring_saved_device>restore_location|default_restore_location|_cuda_deserialize)\b"
    ),
)

# CUDA_VISIBLE_DEVICES given a value where the log shows it: a command line or a job script (VAR=1 python ...,
# export VAR=0,1), the script's own os.environ["VAR"] = '1', a printed environment ("VAR: 0"); not a comparison
# (==) or a read (os.environ.get). The driver enumerates only the GPUs it names, so where the runtime then finds
# no device at all (cudaErrorNoDevice) the list named none this machine has, or none (an empty value, -1). A list
# that starts with GPU 0 hides none where the machine has one: not this fact ("0", "0,1"), the value's first
# character never a blank or a quote (the regex backing off its optional quote), save between two quotes ("")
VISIBLE_DEVICES_SET = (
    "CUDA_VISIBLE_DEVICES",
    R(
        r"\bCUDA_VISIBLE_DEVICES['\"]?\]?[ \t]*[=:](?!=)[ \t]*['\"]?"
        r"(?P<visible_devices_set>(?<=['\"])(?=['\"])|(?![ \t'\"]|0(?![\w-]))[\w,-]{0,80})"
    ),
)


def _no_cuda(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if ctx.facts.get("other_accelerator"):
        facts.setdefault("other_accelerator", ctx.facts["other_accelerator"])
    if facts.get("bnb_check"):
        return (
            f"transformers refused to load the model with {facts['bnb_check'].replace('`', '')}: it counts "
            "bitsandbytes as unavailable, "
            "which from transformers 4.34 it does wherever torch sees no CUDA GPU, installed or not"
            + on_ranks(hits),
            "bitsandbytes' 8-bit and 4-bit layers (before 0.43.1) run on CUDA only, so transformers reports them "
            "missing on a machine or process without a GPU: a notebook's CPU runtime (Colab: Runtime > Change "
            "runtime type > GPU), a Mac, a CPU-only torch (python -c 'import torch; print(torch.version.cuda, "
            "torch.cuda.is_available())'), a container started without --gpus all, CUDA_VISIBLE_DEVICES empty. "
            "Give it a GPU, or load without quantization (drop load_in_8bit / load_in_4bit / "
            "BitsAndBytesConfig) on the CPU; bitsandbytes 0.43.1+ with transformers 4.45+ no longer ties the "
            "check to CUDA.",
        )
    what = facts.get("what", "CUDA is not available")
    if what.endswith("is_available()"):
        what = "torch.cuda.is_available() is False: this process sees no usable GPU"
    if "low precision training" in what or what.endswith("without accelerator"):
        what = f"DeepSpeed's fp16/bf16 optimizer found no GPU ({what}): torch sees none in this process"
    if what.startswith("_cuda_"):  # torch.cuda calling into a torch._C built without CUDA
        what = f"torch._C has no {what}: this torch was compiled without CUDA (a CPU-only build)"
    if "`--fp16`" in what:
        return (
            "the Trainer's arguments refused --fp16 (mixed precision) because the device they resolved is not CUDA: "
            "torch sees no GPU in this process" + on_ranks(hits),
            "transformers' TrainingArguments take --fp16 (and --fp16_full_eval) only on a CUDA device. Give the "
            "process a GPU: a notebook's runtime or a container started without one (Colab: Runtime > Change "
            "runtime type > GPU; docker run --gpus all), a CPU-only torch (python -c 'import torch; "
            "print(torch.version.cuda, torch.cuda.is_available())'), CUDA_VISIBLE_DEVICES empty. To train on the "
            "CPU (or with --no_cuda / use_cpu=True), drop --fp16 and --fp16_full_eval.",
        )
    if what.startswith("No CUDA runtime"):
        what = (
            "torch found no CUDA runtime while an extension was built or loaded (torch.cuda.is_available() is "
            "False there)"
        )
    if "compiled" in what and facts.get("other_accelerator"):
        fix = (
            f"This machine's accelerator is not CUDA ({facts['other_accelerator']} in the log): its torch is a "
            "CPU build with the vendor's extension, so anything that reaches torch.cuda raises this. Use the "
            "device's own name in the project's code (device='npu' / 'xpu' / 'hpu', not .cuda()); where a "
            "library's call ends in torch.cuda, upgrade it, or torch and the extension together, to releases that "
            "support the device (Ascend: torch and torch-npu 2.5.1, whose to() of an int no longer falls into "
            "CUDA's lazy init)."
        )
    elif "compiled" in what:
        # torch/cuda/__init__.py _lazy_init raises it for any CPU build: one installed by mistake on a machine
        # with an NVIDIA GPU, or the only build there is (macOS: no CUDA wheels; a machine without an NVIDIA GPU)
        fix = (
            "This is a CPU-only build of torch. Install a CUDA build: pip install torch --index-url "
            "https://download.pytorch.org/whl/cu128 (pick the CUDA your driver supports; `nvidia-smi`).\n"
            "On a Mac (torch has no CUDA build for macOS) or a machine without an NVIDIA GPU, the code must not "
            "ask for CUDA: run it on the CPU or Apple's GPU through the script's own device option (--device "
            "cpu, --gpu_ids -1, --no_cuda / use_cpu=True) or device='mps' / 'cpu' instead of .cuda()."
        )
    elif "mismatch" in what or "combination" in what:
        fix = (
            "The NVIDIA kernel module loaded is not the driver version installed (an upgrade without a reboot): "
            "reboot, or reload the module (sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia; nvidia-smi). "
            "The user-space libcuda can also come from elsewhere: a cuda-compat package (/usr/local/cuda/compat on "
            "LD_LIBRARY_PATH, common in containers) of another driver branch than the kernel module's; remove it "
            "from the path where the driver itself is new enough for the CUDA in use."
        )
    elif "stub" in what:
        fix = (
            "The libcuda.so this process loaded is the CUDA toolkit's stub (cuda/lib64/stubs, for linking only), "
            "not the driver's: remove the stubs folder from LD_LIBRARY_PATH (and any /etc/ld.so.conf.d entry for "
            "it); the driver's libcuda.so.1 lives in /usr/lib/x86_64-linux-gnu (or is mounted into a container "
            "started with --gpus all)."
        )
    elif "driver" in what or "cannot open" in what:
        fix = (
            "No NVIDIA driver is loaded: install it (sudo apt install cuda-drivers) and check `nvidia-smi`; in a "
            "container, start it with the GPUs (docker run --gpus all, or nvidia-docker), which mounts the "
            "driver's libraries in."
        )
    elif "machine only has" in what or "none are available" in what:
        what = f"Lightning sees no GPU ({what})"
        fix = (
            "torch sees no GPU in this process, so Lightning has none to give: check "
            "python -c 'import torch; print(torch.version.cuda, torch.cuda.is_available())'. None for the CUDA "
            "version is a CPU-only build of torch (install a CUDA build); otherwise no driver is loaded "
            "(`nvidia-smi`), CUDA_VISIBLE_DEVICES is empty, or the container was started without the GPUs."
        )
    else:
        fix = (
            "No GPU is visible to this process: CUDA_VISIBLE_DEVICES is empty or wrong, or the container was "
            "started without the GPUs (docker run --gpus all; older Docker: nvidia-docker run), or the machine "
            "has no NVIDIA GPU at all (`nvidia-smi -L`)."
        )
    return what + on_ranks(hits), fix


CUDA_UNAVAILABLE = Recogniser(
    # torch/cuda/__init__.py (_lazy_init), c10/cuda
    kind="cuda_unavailable",
    templates=(
        "torch:torch-not-compiled-with-cuda-enabled",
        # c10/cuda/CUDAFunctions.cpp (libc10_cuda, not in the CPU wheel's strings)
        "torch_cuda:found-no-nvidia-driver",
        "torch_cuda:cuda-driver-initialization-failed",
        "system:ld-cannot-open-shared-object",
        "deepspeed:unable-to-proceed-no-gpu-resources",  # deepspeed/launcher/runner.py: no GPU on this host
        "torch:cuda-is-not-available",  # torch/distributed/run.py: --nproc_per_node=gpu without CUDA
        "lightning:can-not-run-on-your-system",  # accelerator connector: accelerator="gpu" without CUDA
        "torch:pytorch-was-compiled-without-cuda-support",  # torch/cuda/__init__.py: a CPU-only build
        "accelerate:there-are-currently-no-available-devices",  # accelerate/utils/environment.py: no accelerator
        # c10/cuda/CUDAFunctions.cpp device_count_ensure_non_zero: a CUDA build of torch that sees no GPU
        "torch_native:no-cuda-gpus-are-available",
        # torch/utils/cpp_extension.py _find_cuda_home: printed when torch.cuda.is_available() is False while an
        # extension is built or loaded (a container started without the GPUs, a CPU-only torch, no driver)
        "torch:no-cuda-runtime-is-found-using",
        "cuda_runtime:no-cuda-capable-device",
        "cuda_runtime:stub-library",
        "cuda_runtime:system-driver-mismatch",
        # lightning/fabric/utilities/device_parser.py: GPUs asked for where torch sees none (the ids checked
        # against an empty list, "[]"; a non-empty one is kinds/gpus.py, gpus_requested_not_visible)
        "lightning:gpus-requested-but-none-are-available",
        # deepspeed/runtime/zero/stage_1_and_2.py, stage3.py, fp16/fused_optimizer.py, unfused_optimizer.py: the
        # fp16/bf16 optimizers check get_accelerator().is_available() first (no GPU visible to torch)
        "deepspeed:accelerator-is-not-detected-cannot-perform",
        "deepspeed:cannot-use-fp16-without-accelerator",
        "deepspeed:cannot-use-without-accelerator",
        "deepspeed:cannot-use-without-accelerator-2",
        # lightning accelerator_connector.py _choose_gpu_accelerator_backend: accelerator="gpu", neither CUDA nor MPS
        "lightning:no-supported-gpu-backend-found",
        # accelerate/utils/bnb.py load_and_quantize_model: no device_map and no GPU to quantize on
        "accelerate:no-gpu-found-gpu-is-needed",
        "accelerate:no-gpu-or-intel-xpu-found",
        # torch.cuda's functions calling torch._C._cuda_* (set_device: _cuda_setDevice) on a CPU-only build,
        # whose torch._C has none of them (torch 2.13's CPU wheel: AttributeError, not "not compiled with CUDA")
        "system:torch-c-has-no-cuda-function",
        # transformers/training_args.py (TrainingArguments.__post_init__, releases 3.x-4.x; 5.x no longer checks):
        # --fp16 (or --fp16_full_eval) refused where the device the arguments resolved is not CUDA
        "transformers:amp-fp16-can-only-be-used-on-cuda",
        "transformers:mixed-precision-and-fp16-evaluation-cuda-only",
        "transformers:mixed-precision-half-evaluation-cuda-only",
        "transformers:fp16-half-precision-evaluation-cuda-only",
        "transformers:fp16-half-precision-evaluation-cuda-or-other",
        # transformers' bitsandbytes check (modeling_utils.py up to 4.37, quantizers/quantizer_bnb_*bit.py after):
        # is_bitsandbytes_available() is False without CUDA from 4.34 (for bitsandbytes < 0.43.1 from 4.45)
        "transformers:load-in-8bit-requires-accelerate",
        "transformers:bnb-quantization-requires-accelerate",
        "transformers:bnb-quantization-requires-latest-bitsandbytes",
    ),
    title="no usable CUDA",
    anchors=(
        "Torch not compiled with CUDA enabled",
        "Unable to proceed, no GPU resources available",
        "Cuda is not available.",
        "can not run on your system since the accelerator is not available",
        "Found no NVIDIA driver on your system",
        "No CUDA GPUs are available",
        # c10/cuda/CUDAFunctions.cpp: cudaGetDeviceCount's cudaErrorInitializationError (a warning from
        # torch.cuda.is_available(), "CUDA initialization: ..."; raised by the first CUDA call)
        "CUDA driver initialization failed, you might not have a CUDA gpu",
        "PyTorch was compiled without CUDA support",
        "There are currently no available devices found",
        "No CUDA runtime is found, using CUDA_HOME=",
        # cudart's own strings (cudaErrorNoDevice 100, cudaErrorStubLibrary 34, cudaErrorSystemDriverMismatch 803)
        "no CUDA-capable device is detected",
        "CUDA driver is a stub library",
        "system has unsupported display driver / cuda driver combination",
        "GPUs requested but none are available",
        "But your machine only has: []",
        "Accelerator is not detected, cannot perform low precision training",
        "without accelerator.",
        "No supported gpu backend found",
        "A GPU is needed for quantization.",
        "A GPU or Intel XPU is needed for quantization.",
        "module 'torch._C' has no attribute '_cuda_",
        # the Trainer's arguments refusing fp16 off a CUDA device, as each release words it
        "`--fp16`) can only be used on CUDA devices",
        "and FP16 evaluation can only be used on CUDA devices",
        "`--bf16_full_eval`) can only be used on CUDA devices",
        "(`--fp16_full_eval`) can only be used on CUDA",
        # the driver's own libraries (the dynamic loader's message): no driver on the machine or in the container
        "libcuda.so.1: cannot open shared object file: No such file or directory",
        "libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
        # torch's own answer, as a user shows it: `python -c "...print(torch.cuda.is_available())"`, the
        # REPL (">>> torch.cuda.is_available()" / IPython's "Out[2]: False"), only with False below or beside
        "cuda.is_available()",
        # transformers refusing 8-bit/4-bit loading: bitsandbytes counts as missing where torch sees no GPU
        "`load_in_8bit=True` requires Accelerate: `pip install accelerate` and the latest version of bitsandbytes",
        "quantization requires Accelerate: `pip install accelerate` and the latest version of bitsandbytes",
        "quantization requires the latest version of bitsandbytes",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "No GPU or Intel XPU found",
    ),
    # the line itself, or is_available() answered False (the next line, or "returns False" on it): a
    # script's `if torch.cuda.is_available():` in a traceback is not a finding
    match=R(
        r"^(?![^\n]*cuda\.is_available\(\))|"
        r"cuda\.is_available\(\)[)\"']{0,3}[ \t]*(?:\n(?:Out\[\d+\]:[ \t]*)?|[^\n]{0,12}\b(?:returns?|is|gives)[ \t]+)"
        r"False\b"
    ),
    span=1,
    facts=(
        R(
            r"(?P<what>Torch not compiled with CUDA enabled|PyTorch was compiled without CUDA support|"
            r"There are currently no available devices found|Found no NVIDIA driver on your system|No CUDA GPUs are available|"
            r"Unable to proceed, no GPU resources available|Cuda is not available|"
            r"`?\w+`? can not run on your system since the accelerator is not available|"
            r"(?:libcuda|libnvidia-ml)\.so\.1: cannot open shared object file|torch\.cuda\.is_available\(\)|"
            r"No CUDA runtime is found|no CUDA-capable device is detected|CUDA driver is a stub library|"
            r"system has unsupported display driver / cuda driver combination|"
            r"GPUs requested but none are available|But your machine only has: \[\]|"
            r"Accelerator is not detected, cannot perform low precision training|Cannot use \S{1,40} without accelerator|"
            r"No supported gpu backend found|No GPU (?:or Intel XPU )?found)"
        ),
        # the runtime found no device at all (cudaErrorNoDevice: c10/cuda/CUDAFunctions.cpp's device_count_impl
        # words it "No CUDA GPUs are available", cudart "no CUDA-capable device is detected"): the driver is there
        # (without one torch says "Found no NVIDIA driver", cudart "insufficient for CUDA runtime version")
        R(r"(?P<no_device_visible>No CUDA GPUs are available|no CUDA-capable device is detected)"),
        R(r"module 'torch\._C' has no attribute '(?P<what>_cuda_\w{1,60})'"),
        # transformers' TrainingArguments: the device it resolved is not CUDA, and --fp16 was asked for
        R(
            r"(?P<what>(?:FP16 )?(?:Mixed precision training with )?AMP (?:or APEX )?\(`--fp16`)[^\n]{0,200}?can only be used on CUDA\b"
        ),
        # a build of torch without CUDA: no CUDA_VISIBLE_DEVICES makes these
        R(
            r"(?P<cpu_build>Torch not compiled with CUDA enabled|PyTorch was compiled without CUDA support|"
            r"module 'torch\._C' has no attribute '_cuda_)"
        ),
        # another vendor's accelerator beside it: torch_npu (Ascend), intel_extension_for_pytorch (XPU) and
        # habana_frameworks (HPU) run on torch's CPU build, where torch/cuda/__init__.py's _lazy_init raises
        # "Torch not compiled with CUDA enabled" for any call into torch.cuda, the project's or a library's
        R(rf"(?P<other_accelerator>\b(?:{'|'.join(OTHER_ACCELERATORS)})\b)"),
        R(
            r"Using `(?P<bnb_check>load_in_8bit=True|bitsandbytes` [48]-bit quantization)`? requires (?:Accelerate: "
            r"`pip install accelerate` and )?the latest version of bitsandbytes"
        ),
    ),
    # certain from a specific anchor, unless another vendor's accelerator is named beside it (see facts)
    confirm=lambda hits, ctx: (
        any(h.specific for h in hits)
        and not ctx.facts.get("other_accelerator")
        and not any(h.facts.get("other_accelerator") for h in hits)
    ),
    # "No CUDA GPUs are available" says none is visible, not why: a container or machine without them, or
    # CUDA_VISIBLE_DEVICES naming GPUs this process does not have; so does is_available() being False
    generic=(
        "No CUDA GPUs are available",
        # the driver failed to start, not why: no GPU in the container, a driver module not loaded, a device node
        # the process may not open
        "CUDA driver initialization failed, you might not have a CUDA gpu",
        "cuda.is_available()",
        "Unable to proceed, no GPU resources available",
        "Cuda is not available.",
        "can not run on your system since the accelerator is not available",
        "There are currently no available devices found",
        # a CPU-only machine building wheels prints it too, and goes on with TORCH_CUDA_ARCH_LIST set
        "No CUDA runtime is found, using CUDA_HOME=",
        "no CUDA-capable device is detected",
        # DeepSpeed's accelerator found no GPU: torch sees none, whichever the reason
        "Accelerator is not detected, cannot perform low precision training",
        "without accelerator.",
        "No supported gpu backend found",
        "A GPU is needed for quantization.",
        "A GPU or Intel XPU is needed for quantization.",
        # its first sentence, the same check cut short
        "No GPU or Intel XPU found",
        # the device is not CUDA: no GPU visible, a CPU-only torch, a Mac, or the CPU asked for (--no_cuda)
        "`--fp16`) can only be used on CUDA devices",
        "and FP16 evaluation can only be used on CUDA devices",
        "`--bf16_full_eval`) can only be used on CUDA devices",
        "(`--fp16_full_eval`) can only be used on CUDA",
        # the same check fails where accelerate or bitsandbytes is not installed at all
        "`load_in_8bit=True` requires Accelerate: `pip install accelerate` and the latest version of bitsandbytes",
        "quantization requires Accelerate: `pip install accelerate` and the latest version of bitsandbytes",
        "quantization requires the latest version of bitsandbytes",
    ),
    also=(
        Alternative(
            "dependency_version",
            "accelerate or bitsandbytes not installed (or too old) in the environment that ran",
            "pip install -U accelerate bitsandbytes in the environment the script runs in (python -m pip, the "
            "notebook's own kernel), then restart the process: transformers checks them once, when it is imported.",
            when=("bnb_check",),
        ),
        Alternative(
            "library_version_bug",
            "a library's release that calls torch.cuda on another vendor's accelerator",
            "Upgrade the library whose frames end in torch.cuda, or torch and the device's extension together, to "
            "releases that support the device (hiyouga/LlamaFactory#7986: torch-npu 2.5.1).",
            when=("other_accelerator",),
        ),
        Alternative(
            "gpu_selection",
            "CUDA_VISIBLE_DEVICES naming GPUs that are not there",
            "Set CUDA_VISIBLE_DEVICES to indices `nvidia-smi -L` lists (or unset it), and do not set it inside "
            "the script after a scheduler has set it.",
            unless=("other_accelerator", "cpu_build"),
            # no device at all where the log sets the variable: the list it gave hid every GPU, the likelier
            # reading than a machine or container without one (which the variable does not change)
            first_when=("no_device_visible", "visible_devices_set"),
            because="the log sets CUDA_VISIBLE_DEVICES={visible_devices_set}",
            told_by="print CUDA_VISIBLE_DEVICES where the script starts (os.environ.get('CUDA_VISIBLE_DEVICES')) and "
            "run nvidia-smi -L in the same job: indices it does not list, or an empty value, hid the GPUs; a GPU "
            "that nvidia-smi does not show is not in this machine or container.",
        ),
    ),
    describe=_no_cuda,
)


def _device_assert(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    assertion = first(hits, "assertion")
    summary = "a CUDA kernel's assertion failed" + (f": {assertion}" if assertion else "") + on_ranks(hits)
    if first(hits, "loss_kernel"):
        # the NLL loss's kernels assert `t >= 0 && t < n_classes` (or `cur_target ...`) on each target, nothing else
        summary += " in the NLL loss's kernel (cross-entropy): a target outside 0..C-1"
        return summary, (
            "A class label outside 0..C-1 reached nn.CrossEntropyLoss / NLLLoss: a label >= the model's number "
            "of outputs, or a padding label the loss does not ignore (its ignore_index is -100: pad labels with "
            "-100, or pass ignore_index=-1 for labels padded with -1). Print labels.min() and labels.max() "
            "against the output's size; CUDA_LAUNCH_BLOCKING=1 (or one step on the CPU) names the exact line."
        )
    if all(h.facts.get("cublas_failed") for h in hits):
        return _cublas_failed(hits)
    if all(h.facts.get("cudnn_failed") for h in hits):
        return _cudnn_failed(hits)
    fix = (
        "Almost always an index out of range inside a kernel: a class label >= the number of classes (or "
        "-1 without ignore_index), a token id >= the embedding size (a tokenizer with added tokens needs "
        "model.resize_token_embeddings). Run one step with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to get the exact "
        "line, and check the data: min/max of the labels or ids."
    )
    return summary, fix


# cuBLAS's CUBLAS_STATUS_EXECUTION_FAILED, as torch reports it: THC's THCublasCheck (torch up to 1.x) "cublas runtime
# error : the GPU program failed to execute at .../THCBlas.cu:N", ATen's TORCH_CUDABLAS_CHECK "CUDA error:
# CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( ...)`". The gemm's kernel could not run: almost always
# an earlier kernel's fault reported at this call (CUDA errors stick to the context until the next call checks), the
# earlier kernel most often one that indexed out of range (an embedding handed an id past its rows, a loss a label
# past its classes: on the CPU the same step raises an IndexError naming the value); or a torch build whose cuBLAS
# does not run on this GPU. Never certain from the line
CUBLAS_FAILED = ("cublas runtime error : the GPU program failed to execute", "CUBLAS_STATUS_EXECUTION_FAILED")


def _cublas_failed(hits: list[Hit]) -> tuple[str, str]:
    call = first(hits, "cublas_call", "")
    at = f" ({call})" if call else ""
    return (
        f"a cuBLAS matrix multiply{at} failed to execute on the GPU: most often an earlier kernel's fault reported "
        "at this call, an index out of range (an id past an embedding's rows, a label past the classes)"
        + on_ranks(hits),
        "CUDA reports a kernel's failure at the next call that checks, and cuBLAS's gemm is often that call: the "
        "line is not the one at fault. Rerun one step with CUDA_LAUNCH_BLOCKING=1, or on the CPU, where the "
        "faulty op raises an IndexError that names the value and the size. Check the data against the model's "
        "sizes: token ids < the embedding's num_embeddings (len(tokenizer) after added tokens: "
        "model.resize_token_embeddings), labels < the number of classes, indices < the size of what they index "
        "(a parameter sized from len(dataset) is indexed by sample ids, not batches).",
    )


# cuDNN's CUDNN_STATUS_EXECUTION_FAILED, as torch raises it: ATen's cuDNN bindings check every cuDNN call
# (aten/src/ATen/cudnn/Exceptions.h, AT_CUDNN_CHECK: "cuDNN error: " and cudnnGetErrorString of the status, from
# native/cudnn's Conv, RNN, BatchNorm calls), torch<=0.4's torch/backends/cudnn CuDNNError the status alone. cuDNN's
# reference: "The GPU program failed to execute", a kernel launch or run that failed. The threads posting it (most
# under DDP on several GPUs) established, in this order: an earlier kernel's fault reported at the convolution (an
# illegal memory access, an index out of range; CUDA errors stick until the next call checks), the GPU's memory
# full and reported late, a torch build whose cuDNN or CUDA does not fit the driver or the GPU, and a GPU that
# faulted (Xid in the kernel log). Never certain from the line.
CUDNN_FAILED = ("CUDNN_STATUS_EXECUTION_FAILED",)


def _cudnn_failed(hits: list[Hit]) -> tuple[str, str]:
    return (
        "a cuDNN kernel (a convolution, an RNN or a batch norm) failed to execute on the GPU "
        "(CUDNN_STATUS_EXECUTION_FAILED): most often an earlier kernel's fault reported at this call, an illegal "
        "memory access or an index out of range" + on_ranks(hits),
        "CUDA reports a kernel's failure at the next call that checks, and a cuDNN call is often that call: the "
        "line is not the one at fault. Rerun one step with CUDA_LAUNCH_BLOCKING=1 (or on the CPU) to find the "
        "kernel that failed and the values it was given: token ids < the embedding's num_embeddings, labels < "
        "the number of classes, indices < the size of what they index. If the step still fails at cuDNN's call, "
        "torch.backends.cudnn.enabled = False for one run tells cuDNN's part from the rest.",
    )


# The NLL loss's kernels (cross-entropy's on the GPU) assert one thing, that each target is in 0..C-1: `t >= 0 && t <
# n_classes` in the reducing kernels, `cur_target >= 0 && cur_target < n_classes` in reduction='none''s. That assert
# names its cause outright, unlike the kernel-agnostic "device-side assert triggered" or an indexing kernel's bounds
# assert (an embedding id, a position past the table, an index of the script's own: one real log printed the
# indexing assert for labels longer than Whisper's 448 positions), so it is an anchor of its own
NLL_TARGET_ASSERT = "< n_classes` failed"

DEVICE_ASSERT = Recogniser(
    # aten CUDA kernels' CUDA_KERNEL_ASSERT; cudaErrorAssert; cuBLAS's failed execution (CUBLAS_FAILED), likely;
    # cuDNN's (CUDNN_FAILED), likely
    kind="device_assert",
    templates=(
        "cuda_runtime:device-side-assert",
        "aten:nll-loss-cuda-target-assert",
        "aten:nll-loss-cuda-no-reduce-target-assert",
        "torch_native:thc-cublas-execution-failed",
        "torch_native:cublas-status-execution-failed",
        "torch_native:cudnn-status-execution-failed",
    ),
    title="device-side assertion",
    # the NLL target's assert first: a line holding it is read on it, not on the "Assertion `" every kernel prints
    anchors=(NLL_TARGET_ASSERT, "device-side assert triggered", "Assertion `", *CUBLAS_FAILED, *CUDNN_FAILED),
    generic=CUBLAS_FAILED + CUDNN_FAILED,
    # a kernel's assert names its .cu file; glibc's and other C asserts look the same otherwise
    match=R(
        r"device-side assert triggered|\.cuh?:\d+:[^\n]{0,300}Assertion `[^`]{1,300}` failed|"
        r"(?P<cublas_failed>cublas runtime error : the GPU program failed to execute|"
        r"CUBLAS_STATUS_EXECUTION_FAILED(?: when calling `(?P<cublas_call>cublas\w{1,40}))?)|"
        r"(?P<cudnn_failed>CUDNN_STATUS_EXECUTION_FAILED)"
    ),
    also=(
        Alternative(
            "library_version_bug",
            "a torch build whose cuBLAS does not run on this GPU (a CUDA 10 build on an Ampere or newer GPU), or a "
            "library kernel's fault on valid input",
            "Compare python -c 'import torch; print(torch.__version__, torch.version.cuda, "
            "torch.cuda.get_arch_list())' with the GPU (nvidia-smi): install the torch build for its generation "
            "(a CUDA 11 or newer wheel for Ampere and later).",
            when=("cublas_failed",),
        ),
        # cuDNN's failed execution: the causes after an earlier kernel's fault, as often as threads found them
        Alternative(
            "cuda_oom",
            "the GPU's memory full, reported late at cuDNN's call",
            "Watch nvidia-smi while it runs: a smaller batch per GPU, torch.backends.cudnn.benchmark = False "
            "(the algorithms with the largest workspaces), and no other process on the GPU.",
            when=("cudnn_failed",),
        ),
        Alternative(
            "cudnn_version_mismatch",
            "a torch build whose cuDNN or CUDA does not fit the driver or the GPU (a system cuDNN loaded first, a "
            "CUDA 10 build on an Ampere or newer GPU)",
            "python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), "
            "torch.cuda.get_arch_list())' against nvidia-smi: drop cuDNN folders from LD_LIBRARY_PATH, and install "
            "the torch wheel built for this GPU's generation and driver.",
            when=("cudnn_failed",),
        ),
        Alternative(
            "gpu_hardware_fault",
            "a GPU that faulted (one rank's GPU only, Xid errors in the kernel log)",
            "sudo dmesg | grep -i xid and nvidia-smi -q -d ECC on the node: a GPU with errors is reset or taken "
            "out of service, and the job restarted on healthy GPUs.",
            when=("cudnn_failed",),
        ),
    ),
    facts=(
        R(r"Assertion `(?P<assertion>[^`]{1,300})` failed"),
        # the NLL loss's CUDA sources: THCUNN's ClassNLLCriterion.cu (named by THCudaCheck's "at <file>:<line>"
        # before 1.x moved the loss to ATen), ATen's Loss.cu / NLLLoss2d.cu kernels, and their target assertion
        R(
            r"(?P<loss_kernel>ClassNLLCriterion\.cu|NLLLoss2d\.cu:\d+|nll_loss2?d?_(?:forward|backward)\w*_kernel"
            r"|Assertion `(?:t >= 0 && t|cur_target >= 0 && cur_target) < n_classes` failed)"
        ),
    ),
    describe=_device_assert,
)


def _cpu_oom(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if all("ram_cache_signal" in h.facts for h in hits):
        return (
            f"a DDP worker of a YOLO-style train.py run with --cache (images cached in host RAM) was ended by "
            f"{first(hits, 'ram_cache_signal')}: each rank's process caches the images itself, so host memory "
            "holds the cache once per GPU and the kernel's OOM killer (or the launcher, once another worker was "
            "killed) ends the run" + on_ranks(hits),
            "This is host RAM, not GPU memory. Under DDP every process builds its own RAM cache (YOLOv5's "
            "LoadImagesAndLabels.cache_images before ultralytics/yolov5#10383, 2022-12, cached every image in "
            "every rank): use --cache disk (or no --cache), or cache on one GPU only; update YOLOv5 to a release "
            "after #10383, which keeps each rank on its own subset of images; check dmesg for the OOM killer and "
            "free -g while the cache fills. Ultralytics' YOLO: cache='disk' or cache=False with device=0,1,...",
        )
    if all("enomem" in h.facts for h in hits):
        return (
            "the operating system refused the process memory (ENOMEM, [Errno 12]): most often host RAM and swap "
            "exhausted where the DataLoader forks its worker processes (os.fork copies the parent's address space "
            "into the commit charge)" + on_ranks(hits),
            "This is host RAM, not GPU memory. Use fewer DataLoader num_workers (each is a copy of the main "
            "process) and keep large data out of the parent process (memory-map it, load it lazily in "
            "__getitem__); check free -g while it starts. Adding swap, or a machine (job allocation) with more "
            "memory, gives the fork the room it needs; the job's own limits (ulimit -v, the container's or the "
            "scheduler's memory limit) refuse memory the same way.",
        )
    asked = first(hits, "cpu_bytes")
    gigabytes = first(hits, "cpu_gb")
    summary = "host memory (RAM) ran out in torch's CPU allocator" + (
        f": it asked for {asked} bytes"
        if asked
        else f": it asked for {gigabytes} GB (in whole GB, rounded down)"
        if gigabytes
        else ""
    )
    fix = (
        "This is host RAM, not GPU memory. Need less of it: load the model once (low_cpu_mem_usage=True, "
        "device_map, or on rank 0 then broadcast), fewer DataLoader workers, memory-map the dataset; a smaller "
        "batch size where the model runs on the CPU (torchdoctor's find_executable_batch_size finds the largest that "
        "fits); and nothing that grows step after step: predictions or "
        "metric states kept for the whole evaluation (compute the metric as you go, reset it, keep fewer "
        "samples), losses kept with their graph. A tensor made of the whole dataset at once (torch.tensor over "
        "every example's features) needs all of it in RAM together: build it in pieces, or from shorter inputs "
        "(a smaller max_seq_length or image size). Or run on a machine (or job allocation) with more memory. A "
        "request far beyond the machine's RAM is a wrong size computed by the code that asked."
    )
    if _impossible_request(merged(hits)):
        summary += " — a request no machine's RAM holds"
    if asked and int(asked) < SMALL_REQUEST:
        # found with accelerate's loop on a tiny GPT-2, rank 1 under an address-space limit: a 2 MiB request
        # refused, and the fix was all about needing less memory
        summary += f" ({int(asked) / 2**20:.1f} MiB: a request this small refused means almost none was left)"
        fix = (
            "A request this small is refused when the process had almost nothing left: a limit of its own (ulimit -v "
            "or RLIMIT_AS set by the script or the shell, a container's or the scheduler's memory limit, e.g. "
            "Slurm's --mem) or the machine's memory taken by other processes. Check ulimit -a and "
            "cat /proc/<pid>/limits for the rank, the job's memory request, and free -g while it runs.\n"
            + fix
        )
    if grew := memory_grew(merged(hits)):
        fix = grew + "\n" + fix
    return summary + ran_before(merged(hits)) + on_ranks(hits), fix


SMALL_REQUEST = 64 * 2**20  # bytes: a refused request below this is a limit reached, not the request's size
# c10/core/impl/alloc_cpu.cpp prints "not enough memory: you tried to allocate N bytes" for any request malloc
# refuses: RAM used up, and as much a size no machine has, computed wrong by the code that asked (a shape from
# the wrong dimension, an attention matrix over a whole unchunked input, an overflowed or uninitialised size).
# A request of a terabyte or more is the second: likely, the wrong size named (cuda_oom's "impossible request")
IMPOSSIBLE_REQUEST = 10**12  # bytes: 13 digits, as the impossible_bytes fact reads it


def _impossible_request(facts: dict) -> bool:
    """Whether the CPU allocator's request is beyond any machine's RAM (bytes, or TH's whole GB)."""
    if "cpu_bytes" in facts:
        return int(facts["cpu_bytes"]) >= IMPOSSIBLE_REQUEST
    return "cpu_gb" in facts and int(facts["cpu_gb"]) >= IMPOSSIBLE_REQUEST // 10**9


def _ram_ran_out(hits: list[Hit], ctx: Context) -> bool:
    """Certain on the allocators' own messages unless every one asked for an impossible size; never on the
    generic ENOMEM or a killed launcher's worker alone."""
    return any(h.specific and not _impossible_request(h.facts) for h in hits)


_ram_ran_out.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


CPU_OOM = Recogniser(
    # c10/core/impl/alloc_cpu.cpp ("DefaultCPUAllocator: can't allocate memory" / "not enough memory"); before
    # c10's allocator, aten/src/TH/THGeneral.cpp's THAlloc / THRealloc when malloc returned NULL ("$ Torch: not
    # enough memory: you tried to allocate %dGB. Buy new RAM!", the size in whole GB, so often "0GB"); and the
    # OS's ENOMEM as CPython's OSError prints it ("[Errno 12] Cannot allocate memory": os.fork in
    # multiprocessing's popen_fork when the DataLoader starts its workers, mmap, subprocess), which other limits
    # print too (ulimit -v, a container's or a job's memory limit), so alone it is only likely
    kind="cpu_oom",
    templates=(
        "torch_native:cpu-allocator-cannot-allocate",
        "torch_native:th-alloc-not-enough-memory",
        "torch_native:th-realloc-not-enough-memory",
        "system:python-cannot-allocate-memory",
        "system:subprocess-died-with-signal",
    ),
    title="host memory exhausted",
    anchors=(
        "DefaultCPUAllocator: can't allocate memory",
        "DefaultCPUAllocator: not enough memory",
        "Torch: not enough memory: you tried to",
        "[Errno 12] Cannot allocate memory",
        # CPython's CalledProcessError for a worker the launcher started (torch/distributed/launch.py before
        # torchrun), read only where the command it prints is a YOLO-style train.py with --cache (ram, its
        # default): the signal alone ends workers for any cause (child_failed)
        "' died with <Signals.",
    ),
    generic=("[Errno 12] Cannot allocate memory", "' died with <Signals."),
    # the launcher's line of a killed worker counts only with --cache (not --cache disk) in its command
    match=R(
        r"DefaultCPUAllocator|Torch: not enough memory|\[Errno 12\] Cannot allocate memory|"
        r"'--cache'(?!, 'disk')[^\n]{0,2000}' died with <Signals\.(?:SIGKILL|SIGTERM)"
    ),
    facts=(
        R(r"'--cache'(?!, 'disk')[^\n]{0,2000}' died with <Signals\.(?P<ram_cache_signal>SIGKILL|SIGTERM)"),
        R(r"you tried to allocate (?P<cpu_bytes>\d+) bytes"),
        R(r"you tried to (?:re)?allocate (?P<cpu_gb>\d+)GB"),
        R(r"(?P<enomem>\[Errno 12\] Cannot allocate memory)"),
        R(
            r"you tried to allocate (?P<impossible_bytes>\d{13,}) bytes"
        ),  # 1 TB and more: see _impossible_request
        R(r"you tried to (?:re)?allocate (?P<impossible_bytes>\d{4,})GB"),
    ),
    confirm=_ram_ran_out,
    also=(
        Alternative(
            "input_shape_mismatch",
            "a tensor size computed wrong (a wrong shape, an overflowed or uninitialised size), not RAM used up",
            "No machine has that much RAM, so less memory will not help: the last frames of the traceback name "
            "the operation that asked; print the shapes it was given (an attention or distance matrix over a "
            "whole input, a dimension taken from the wrong axis, a size read before it was set).",
            when=("impossible_bytes",),
        ),
    ),
    describe=_cpu_oom,
)


# accelerate/accelerator.py (Accelerator.__init__): one message for two causes, a torch older than 1.10 and a
# GPU without bf16; the second is the one users meet (a V100 or T4 told to train in bf16)
ACCELERATE_BF16 = "bf16 mixed precision requires PyTorch >= 1.10 and a supported device"
# transformers/training_args.py (4.x, TrainingArguments.__post_init__) raises "Your setup doesn't support
# bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0" whenever utils/import_utils.py's
# is_torch_bf16_gpu_available() is False: a torch older than 1.10, a GPU below compute capability 8 or a build for
# CUDA 10 (three readings, like accelerate's); 5.x's "... You need to assign use_cpu ..." asks torch's own
# is_bf16_supported() alone
TRANSFORMERS_BF16 = "doesn't support bf16/gpu"
TRANSFORMERS_BF16_DEVICE = "doesn't support bf16/gpu. You need to assign use_cpu"


def _torch_at_least(version: str, wanted: tuple[int, int]) -> bool:
    parts = re.findall(r"\d+", version)[:2]
    return len(parts) == 2 and (int(parts[0]), int(parts[1])) >= wanted


# deepspeed/accelerator/real_accelerator.py logs the accelerator it picked; it falls back to "cpu" when it detects
# no other, and the CPU accelerator's is_fp16_supported() is False without mkldnn fp16
DS_ACCELERATOR = ("Setting ds_accelerator to", R(r"Setting ds_accelerator to (?P<ds_accelerator>\w{1,20})"))

# engine.py's "Type fp16 is not supported on your device" and accelerate's "(not 'cpu')" are a GPU without fp16 or
# a run that saw no GPU at all: likely, certain where DeepSpeed names the accelerator it runs on (not the CPU).
# transformers' training_args.py adds "You need Ampere+ GPU with cuda>=11.0." to its bf16 refusal only where
# is_torch_cuda_available(): without it the line is a run that saw no GPU too
_NO_GPU_SEEN = Alternative(
    "cuda_unavailable",
    "no GPU that torch can see, so the run fell back to the CPU",
    "If the run was meant for a GPU: python -c 'import torch; print(torch.cuda.is_available(), torch.version.cuda)' "
    "must print True and a CUDA version (a CPU-only torch build prints None); check nvidia-smi and "
    "CUDA_VISIBLE_DEVICES in the job.",
    when=("fp16_maybe_cpu", "bf16_no_cuda"),
)


def _bf16_sure(hits: list[Hit], ctx: Context) -> bool:
    """Certain on a message that names the GPU; accelerate's and transformers' several-cause messages only beside
    a torch >= 1.10; transformers 5's without its Ampere sentence never (torch saw no CUDA GPU); cuBLAS refusing a
    bfloat16 call never (a build that does not fit the GPU prints it too)."""
    if all("bf16_no_cuda" in h.facts or "cublas_bf16" in h.facts for h in hits):
        return False
    if any(h.specific for h in hits):
        return True
    version = printed_versions.shown(ctx.facts, "torch") or ctx.facts.get("torch_version", "")
    return bool(version) and _torch_at_least(version, (1, 10))


def _bf16(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if all("cublas_bf16" in h.facts for h in hits):
        return cublas_build.explain_bf16(hits)
    summary = "this GPU does not support bfloat16 (bf16 needs compute capability 8.0, Ampere, or newer)"
    fix = (
        "Train in fp16 with loss scaling instead (--fp16 / mixed_precision='fp16', "
        "torch.autocast(dtype=torch.float16) with a GradScaler), or in fp32; choose it at run time with "
        'torch.cuda.is_bf16_supported(). DeepSpeed: "fp16": {"enabled": true} and bf16 disabled.'
    )
    return summary + on_ranks(hits), fix


_BF16_MESSAGES = (
    "does not support bfloat16",
    TRANSFORMERS_BF16,
    TRANSFORMERS_BF16_DEVICE,
    "Type bf16 is not supported on your device",
    ACCELERATE_BF16,
)

BF16_UNSUPPORTED = Recogniser(
    kind="bf16_unsupported",
    title="bf16 on a GPU without it",
    # cuBLAS's statuses are read here only on a call whose arguments name a bfloat16 operand (cublas_build.py)
    anchors=(*_BF16_MESSAGES, *cublas_build.BF16_ANCHORS),
    match=R("|".join(map(re.escape, _BF16_MESSAGES)) + "|" + cublas_build.BF16.pattern),
    templates=(
        "transformers:your-setup-doesn-support-bf16-gpu",
        "torch_native:bf16-not-supported",
        "deepspeed:type-bf16-is-not-supported-on",  # deepspeed/runtime/engine.py: bf16 on a GPU without it
        "accelerate:bf16-mixed-precision-requires-pytorch-and",
        *cublas_build.BF16_TEMPLATES,
    ),
    generic=(ACCELERATE_BF16, TRANSFORMERS_BF16, *cublas_build.BF16_ANCHORS),
    facts=(
        R(
            r"(?P<bf16_no_cuda>need to assign use_cpu if you want to train the model on CPU\.)(?! You need Ampere)"
        ),
        *cublas_build.FACTS,
    ),
    confirm=_bf16_sure,
    also=(
        _NO_GPU_SEEN,
        Alternative(
            "dependency_version",
            "a PyTorch older than 1.10 (accelerate's and transformers' 4.x messages name it beside the GPU)",
            "Upgrade PyTorch to 1.10 or newer (pip install -U torch); check with python -c 'import torch; "
            "print(torch.__version__)'.",
            # transformers 5 needs a torch 2 anyway; cuBLAS's refusal is no version check
            unless=("bf16_no_cuda", "cublas_bf16"),
        ),
        *cublas_build.BF16_ALSO,
    ),
    describe=_bf16,
)


def _fp16(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    device = facts.get("fp16_device", "")
    summary = "fp16 mixed precision was asked for on a device that does not support it" + (
        f" ({device})" if device else ""
    )
    if "fp16_mps_torch" in facts:
        return summary + ": accelerate needs PyTorch >= 2.5 for fp16 on Apple MPS" + on_ranks(hits), (
            "Upgrade PyTorch (pip install -U torch, 2.5 or newer), or train in fp32 on MPS "
            "(accelerate launch --mixed_precision no)."
        )
    fix = (
        "Train in bf16 where the device has it (Ampere or newer GPUs, recent CPUs, Gaudi) or in fp32: DeepSpeed's "
        'config "fp16": {"enabled": false} (and "bf16": {"enabled": true} where supported); accelerate launch '
        "--mixed_precision bf16 or no; the Trainer without --fp16.\n"
        "DeepSpeed refuses fp16 on a GPU below compute capability 7.0 (Pascal: P100, GTX 10xx; "
        "DS_ALLOW_DEPRECATED_FP16=1 lets 6.x through), on a CPU without fp16 support and on Apple MPS; accelerate "
        "on a device type it has no fp16 for (a TPU, an unknown backend).\n"
        "If the run was meant for a GPU, it ran on the CPU: check that the job sees one (python -c 'import torch; "
        "print(torch.cuda.is_available())', CUDA_VISIBLE_DEVICES, a CPU-only torch build)."
    )
    return summary + on_ranks(hits), fix


FP16_UNSUPPORTED = Recogniser(
    # deepspeed/runtime/engine.py _do_sanity_check: fp16 enabled and get_accelerator().is_fp16_supported() False
    # (a CUDA GPU below compute capability 7.0, a CPU without fp16, MPS); accelerate/accelerator.py's
    # Accelerator.__init__: fp16 on a device type it has no fp16 for ("fp16 mixed precision requires a device in
    # (...) (not 'x')", in older releases "requires a GPU (not 'x')" / "requires a GPU or MPS device"), and fp16
    # on MPS with a torch older than 2.5. The bf16 twins are bf16_unsupported's.
    kind="fp16_unsupported",
    title="fp16 on a device without it",
    anchors=(
        "Type fp16 is not supported on your device",
        "fp16 mixed precision requires a ",
        "fp16 mixed precision with MPS device requires a Pytorch >=",
    ),
    templates=(
        "deepspeed:type-fp16-is-not-supported-on",
        "accelerate:fp16-mixed-precision-requires-device-in",
        "accelerate:fp16-mixed-precision-with-mps-device",
    ),
    facts=(
        R(r"fp16 mixed precision requires a [^\n]{0,200}\(not '(?P<fp16_device>\w{1,20})'\)"),
        R(r"(?P<fp16_mps_torch>fp16 mixed precision with MPS device requires a Pytorch >=)"),
        R(
            r"(?P<fp16_maybe_cpu>Type fp16 is not supported on your device|fp16 mixed precision requires a "
            r"[^\n]{0,200}\(not 'cpu'\))"
        ),
    ),
    confirm=lambda hits, ctx: (
        not all("fp16_maybe_cpu" in h.facts for h in hits) or ctx.facts.get("ds_accelerator", "cpu") != "cpu"
    ),
    also=(_NO_GPU_SEEN,),
    describe=_fp16,
)


def _driver_mismatch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the NVIDIA driver's kernel module and its user-space libraries are different versions "
        "(NVML: Driver/library version mismatch)",
        "The driver was upgraded (often by unattended upgrades) while the old kernel module stays loaded. "
        "Reboot the machine; without a reboot, stop every GPU process and reload the module "
        "(sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia). "
        "In a container, the host's driver must match the libraries mounted into it.",
    )


DRIVER_MISMATCH = Recogniser(
    kind="driver_mismatch",
    title="driver module and libraries differ",
    anchors=("Driver/library version mismatch",),
    templates=("system:nvml-driver-library-mismatch",),
    describe=_driver_mismatch,
)


RECOGNISERS = (
    BF16_UNSUPPORTED,
    FP16_UNSUPPORTED,
    DRIVER_MISMATCH,
    CUDA_OOM,
    CPU_OOM,
    NO_KERNEL_IMAGE,
    DRIVER_TOO_OLD,
    INVALID_DEVICE_ORDINAL,
    CUDA_UNAVAILABLE,
    DEVICE_ASSERT,
)
