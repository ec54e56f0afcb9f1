"""Windows refusing the shared memory DataLoader workers hand tensors through: a paging file too small.

On Windows torch shares a tensor between processes through a named file mapping (``aten/src/ATen/MapAllocator.cpp``,
``CreateFileMappingW`` / ``OpenFileMappingW``, torch 1.x-2.13): "Couldn't open shared file mapping: <torch_...>, error
code: <N>", N being ``GetLastError()``. Code 1455 is ``ERROR_COMMITMENT_LIMIT`` ("the paging file is too small for this
operation to complete"): the memory committed by the DataLoader's worker processes (each spawned with its own copy of
the dataset and of every module it imports: torch's CUDA libraries commit gigabytes each) and the batches in flight
exceeds RAM plus the paging file. That code names its cause: certain once a real log shows it. Another code (5, access
denied; 2, a mapping already gone) is another failure of the same call: likely, the code named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

COMMITMENT_LIMIT = "1455"


def _paging(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    code = first(hits, "mapping_error", "")
    if code == COMMITMENT_LIMIT:
        summary = (
            "Windows ran out of commit memory for the tensors DataLoader workers share (error 1455, "
            "ERROR_COMMITMENT_LIMIT: the paging file is too small)" + on_ranks(hits)
        )
    else:
        summary = (
            "Windows refused the shared memory a tensor is passed between processes through"
            + (f" (error code {code})" if code else "")
            + on_ranks(hits)
        )
    fix = (
        "Each DataLoader worker on Windows is a new process that imports torch (and its CUDA libraries) and "
        "copies the dataset, and the batches in flight live in shared memory: together they passed RAM plus the "
        "paging file. Use fewer workers (num_workers=2, or 0 to load in the main process), a smaller batch or "
        "prefetch_factor, or let Windows grow the paging file (System > Advanced system settings > Performance > "
        "Virtual memory: system managed, or a larger size on a disk with room), then restart."
    )
    if code and code != COMMITMENT_LIMIT:
        fix += f" Error {code} is not the paging file's: look it up (net helpmsg {code})."
    return summary, fix


WINDOWS_PAGING_FILE = Recogniser(
    kind="windows_paging_file",
    title="Windows's paging file too small for the DataLoader workers' shared memory",
    templates=("torch_native:couldnt-open-shared-file-mapping",),
    anchors=("Couldn't open shared file mapping: <",),
    facts=(
        R(r"Couldn't open shared file mapping: <[^>\n]{0,120}>, error code: <(?P<mapping_error>\d{1,6})>"),
    ),
    # the code says which failure of the call it was: only 1455 is the paging file
    confirm=lambda hits, ctx: first(hits, "mapping_error", "") == COMMITMENT_LIMIT,
    describe=_paging,
)

RECOGNISERS = (WINDOWS_PAGING_FILE,)
