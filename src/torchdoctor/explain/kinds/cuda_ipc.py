"""CUDA tensors shared between processes on Windows, which PyTorch cannot do there.

``torch.multiprocessing`` sends a CUDA tensor to another process through CUDA IPC: ``torch/csrc/generic/
StorageSharing.cpp`` (``_share_cuda_``) asks for an IPC handle with ``cudaIpcGetMemHandle``. The CUDA runtime has
no IPC on Windows and answers cudaErrorNotSupported, which torch printed through THCudaCheck as "cuda runtime error
(801) : operation not supported at C:\\w\\1\\s\\windows\\pytorch\\torch/csrc/generic/StorageSharing.cpp:245"
(pytorch/pytorch#36037; the Windows notes' "CUDA IPC operations"). That is a DataLoader worker, a
multiprocessing Queue or a spawned process handed CUDA tensors. A Windows path beside the line is required; the
words alone are likely, as the same call can fail for another reason on another system.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks

FAMILY = "the machine and its operating system"

# the file of a Windows build (a drive letter or torch's Windows build folder) before StorageSharing.cpp
NOT_SUPPORTED = re.compile(
    r"(?:\(801\)|801\)?) ?:? ?operation not supported at (?P<ipc_windows>[A-Za-z]:\\\S{0,300}?|\S{0,300}?"
    r"\\windows\\\S{0,300}?)StorageSharing\.cpp:\d+"
)


def _ipc_on_windows(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a CUDA tensor was sent to another process on Windows, where CUDA IPC (sharing GPU memory between "
        "processes) is not supported: the CUDA runtime refused the IPC handle" + on_ranks(hits),
        "On Windows keep CUDA tensors in the process that made them: DataLoader workers (num_workers > 0) and "
        "multiprocessing queues must pass CPU tensors, and each process moves its own data to the GPU (.cuda() "
        "after the batch arrives, not inside the Dataset); or use num_workers=0, or run on Linux (or WSL2) where "
        "CUDA IPC works.",
    )


CUDA_IPC_ON_WINDOWS = Recogniser(
    kind="windows_unsupported",
    templates=("torch_native:storage-sharing-cuda-ipc-not-supported",),
    title="CUDA IPC, which Windows does not have",
    anchors=("StorageSharing.cpp:",),
    match=NOT_SUPPORTED,
    confirm=lambda hits, ctx: False,  # the runtime's words, not a check of the platform
    describe=_ipc_on_windows,
)

RECOGNISERS = (CUDA_IPC_ON_WINDOWS,)
