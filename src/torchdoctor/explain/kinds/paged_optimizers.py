"""bitsandbytes' paged optimizers refusing their own state: the CUDA check of ``pythonInterface.c``.

bitsandbytes checks every CUDA call of its C interface with ``CUDA_CHECK_RETURN`` (``csrc/ops.cuh``;
``csrc/compat.cuh`` from 0.47), which prints "Error %s at line %d in file %s" and exits. In
``csrc/pythonInterface.c`` (``.cpp`` from 0.43) the checked calls are the paged optimizers' own:
``cget_managed_ptr`` (cudaMallocManaged, the paged state buffers ``functional.get_paged`` makes) and ``cprefetch``
(cudaMemPrefetchAsync, which ``prefetch_tensor`` runs on every paged state before a step), each followed by
cudaPeekAtLastError. "invalid argument" there is the prefetch handed memory that is not managed: a saved state
read back (torch.load keeps a tensor's Python attributes) and deep-copied by the optimizers' ``load_state_dict``
(``bitsandbytes/optim/optimizer.py``, 0.39.1-0.50.1 read) keeps the ``is_paged`` mark of the tensors it was made
from but lives in ordinary memory, so a run that
resumes a paged optimizer (paged_adamw_32bit, paged_adamw_8bit, the paged Lion) fails at its first step
(axolotl-ai-cloud/axolotl#864, bitsandbytes#782). `PREFETCH_LINES` holds the line cudaMemPrefetchAsync is on in each
release's file (read from the release tags): a line among them is the prefetch itself, any other line of the file
the check after it, which reports the last error of the thread (an earlier kernel's too), so the reading is never
more than likely (versions.py's release-bug recogniser reads the line with `REFUSED` and says it with
`refused_prefetch`).

"operation not supported" there is the platform refusing the paged memory itself. ``cget_managed_ptr`` allocates
every paged state with cudaMallocManaged(..., cudaMemAttachHost), which returns cudaErrorNotSupported where the
device offers no CUDA managed (unified) memory: an NVIDIA vGPU whose profile has unified memory off (the default),
some virtualised or sandboxed GPUs. So a paged optimizer (PagedAdamW32bit, paged_adamw_8bit) fails at its first
state, whether or not the run resumes (InternLM/xtuner#247, bitsandbytes 0.41.2: line 380, cudaMallocManaged in
0.40.0-0.42.0; xtuner's default optimizers became torch.optim.AdamW). `MANAGED_LINES` holds the line of
cudaMallocManaged in each release's file; on the prefetch's line of 0.39.1 or 0.40.0 it is the prefetch itself,
which those releases ran on devices without concurrent managed access (a Windows or WSL GPU, one before Pascal)
until 0.41.0 checked cudaDevAttrConcurrentManagedAccess first (7be5f2c7). Another line reports the last error of
the thread, so this reading too is likely (`unsupported_paging`).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = ("pythonInterface.c",)
REFUSED = re.compile(
    r"Error (?:(?P<paged_refused>invalid argument)|(?P<paged_unsupported>operation not supported)) at line "
    r"(?P<paged_line>\d{1,5}) in file (?P<paged_file>[^\s]{0,300}?pythonInterface\.c(?P<paged_cpp>pp)?)\b"
)
# the line of cudaMemPrefetchAsync in csrc/pythonInterface.c (0.39.1-0.42.0) and .cpp (0.43.0-0.50.1), per release
PREFETCH_LINES: dict[str, dict[int, str]] = {
    ".c": {359: "0.39.1", 388: "0.40.0", 393: "0.41.0-0.42.0"},
    ".cpp": {
        396: "0.43.x",
        417: "0.44.x",
        400: "0.45.x",
        337: "0.46.x",
        626: "0.47.0",
        718: "0.48.x",
        720: "0.48.x",
        689: "0.49.x",
        691: "0.49.x",
        578: "0.50.x",
        580: "0.50.x",
    },
}
# the line of cudaMallocManaged (cget_managed_ptr) in csrc/pythonInterface.c and .cpp, per release (release tags)
MANAGED_LINES: dict[str, dict[int, str]] = {
    ".c": {351: "0.39.1", 380: "0.40.0-0.42.0"},
    ".cpp": {
        383: "0.43.x",
        404: "0.44.x",
        387: "0.45.x",
        324: "0.46.x",
        611: "0.47.0",
        699: "0.48.x",
        670: "0.49.x",
        559: "0.50.x",
    },
}
# the prefetch's line in the releases that ran it without asking the device (0.41.0 added the check, 7be5f2c7)
UNGUARDED_PREFETCH = {359: "0.39.1", 388: "0.40.0"}


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for bitsandbytes' paged-memory check: its argument refused, or the platform's paging."""
    if first(hits, "paged_unsupported"):
        return unsupported_paging(hits)
    return refused_prefetch(hits)


_NON_PAGED = (
    "Use an optimizer that is not paged: torch.optim.AdamW (Trainer: optim='adamw_torch'), or bitsandbytes' "
    "8-bit one without paging (optim='adamw_bnb_8bit', bnb.optim.AdamW8bit); in a config that names "
    "PagedAdamW32bit or paged_adamw_8bit (xtuner, axolotl, LLaMA-Factory), change that line."
)


def unsupported_paging(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for bitsandbytes' paged memory the device or its driver does not offer."""
    line = int(first(hits, "paged_line", "0"))
    suffix = ".cpp" if first(hits, "paged_cpp") else ".c"
    managed = MANAGED_LINES[suffix].get(line)
    if managed:
        return (
            f"bitsandbytes could not allocate a paged optimizer's state: line {line} is cudaMallocManaged in "
            f"bitsandbytes {managed}, and this GPU or its driver offers no CUDA managed (unified) memory "
            "(operation not supported)" + on_ranks(hits),
            "A paged optimizer keeps its state in CUDA managed memory, which this machine does not provide (an "
            "NVIDIA vGPU whose profile has unified memory off, as it is by default; some virtualised or sandboxed "
            "GPUs). " + _NON_PAGED + " On a vGPU, the host can enable unified memory for the profile "
            "(enable_uvm=1) instead.",
        )
    unguarded = UNGUARDED_PREFETCH.get(line) if suffix == ".c" else None
    if unguarded:
        return (
            f"bitsandbytes {unguarded} prefetched a paged optimizer's state (line {line}, cudaMemPrefetchAsync) on "
            "a GPU that cannot prefetch managed memory (operation not supported)" + on_ranks(hits),
            "bitsandbytes before 0.41.0 prefetches paged state without asking whether the device can (a Windows "
            "or WSL GPU, one older than Pascal): upgrade bitsandbytes (pip install -U bitsandbytes, 0.41.0 or "
            "later skips the prefetch there), or " + _NON_PAGED[0].lower() + _NON_PAGED[1:],
        )
    return (
        f"bitsandbytes' CUDA check in its paged-memory code (line {line} of pythonInterface{suffix}) reports an "
        "operation this GPU or its driver does not support, most often the managed memory a paged optimizer's "
        "state needs" + on_ranks(hits),
        _NON_PAGED
        + " If no paged optimizer is used, rerun with CUDA_LAUNCH_BLOCKING=1: the check reports the "
        "last error of the thread, an earlier kernel's too.",
    )


def refused_prefetch(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for bitsandbytes' paged-memory check refusing its argument."""
    line = int(first(hits, "paged_line", "0"))
    release = PREFETCH_LINES[".cpp" if first(hits, "paged_cpp") else ".c"].get(line)
    where = (
        f"its prefetch of a paged optimizer's state (line {line} is cudaMemPrefetchAsync in bitsandbytes {release})"
        if release
        else f"a call of its paged-memory code (line {line}), most often the prefetch of a paged optimizer's state"
    )
    return (
        f"bitsandbytes' CUDA check refused {where}: state restored from a checkpoint is no longer in the managed "
        "memory a paged optimizer prefetches" + on_ranks(hits),
        "A paged optimizer (paged_adamw_32bit, paged_adamw_8bit, the paged Lion) cannot resume from its saved "
        "state: read back, it is ordinary memory that still claims to be paged (bitsandbytes' load_state_dict keeps the mark), and "
        "the first step's prefetch fails (no release up to 0.50.1 changes it). Resume with a non-paged optimizer "
        "(Trainer: optim='adamw_torch' or 'adamw_bnb_8bit'), or start the optimizer afresh from the checkpoint's "
        "weights (remove optimizer.pt from the checkpoint folder); keep the paged one for runs that start from "
        "scratch. If the run did not resume, rerun with CUDA_LAUNCH_BLOCKING=1: the check also reports an earlier "
        "kernel's error.",
    )
