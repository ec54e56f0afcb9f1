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
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = ("pythonInterface.c",)
REFUSED = re.compile(
    r"Error (?P<paged_refused>invalid argument) at line (?P<paged_line>\d{1,5}) in file "
    r"(?P<paged_file>[^\s]{0,300}?pythonInterface\.c(?P<paged_cpp>pp)?)\b"
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
