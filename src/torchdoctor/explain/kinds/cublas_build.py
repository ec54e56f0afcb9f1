"""cuBLAS refusing a plain matrix multiply, or its arguments, on this GPU: a torch build that does not fit it.

ATen's ``TORCH_CUDABLAS_CHECK`` (``aten/src/ATen/cuda/Exceptions.h``) raises "CUDA error: <status> when calling
`<the cuBLAS call>`", the status as ``_cublasGetErrorEnum`` (Exceptions.cpp) names it; THC's ``__THCublasCheck``
(``aten/src/THC/THCGeneral.cpp``, torch 0.4-1.x) words the same statuses "cublas runtime error : <words>". Two of
them say the GPU lacks what the call needs: ``CUBLAS_STATUS_ARCH_MISMATCH`` ("an absent device architectural
feature is required") and ``CUBLAS_STATUS_NOT_SUPPORTED``. On a script's plain ``nn.Linear`` or ``bmm`` that is
most often a torch whose CUDA and cuBLAS predate the GPU (a CUDA 10 build on an Ampere card, a pip install that
replaced the CUDA build with another): reinstalling torch built for the machine's CUDA fixed the thread in the
train half (LOD-3DGS#25, an A800 under a torch not built for CUDA 11.6). A dtype this GPU's cuBLAS lacks (bfloat16
before Ampere) and a cuBLAS bug for some shapes print the same, so only likely, those named. Where the call's own
arguments name a bfloat16 operand (``CUDA_R_16BF``: the macro prints the call as written), the dtype is the reading
that leads, so that line is ``bf16_unsupported``'s (``cuda.BF16_UNSUPPORTED`` reads it with ``BF16``, this build's
reading its alternative) and not this kind's. A third,
``CUBLAS_STATUS_INVALID_VALUE``, refuses the call's arguments: on a plain ``nn.Linear``, ``bmm`` or ``matmul`` (the
sizes ATen computed itself) the threads' fixes were the same reinstall (huggingface/transformers#21663: "a
PyTorch/Cuda mismatch, after reinstall it works"), or memory (Fictionarry/TalkingGaussian#56 and
eliphatfs/zerorf#9 name a GPU close to full first): likely, a full GPU named beside it.

``launchers.MISSING_LAUNCHER`` (kind ``broken_install``) reads it: one recogniser per kind.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, on_ranks

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "torch_cuda:cublas-status-not-supported",
    "torch_cuda:cublas-status-invalid-value",
    "torch_cuda:cublas-status-arch-mismatch",
    "torch_cuda:thc-cublas-an-absent-device-architectural-feature",
)
ANCHORS = (
    "CUBLAS_STATUS_NOT_SUPPORTED when calling",
    "CUBLAS_STATUS_ARCH_MISMATCH when calling",
    "CUBLAS_STATUS_INVALID_VALUE when calling",
    "cublas runtime error : an absent device architectural feature is required",
)
FACT = R(
    r"(?P<cublas_unsupported>CUBLAS_STATUS_(?:NOT_SUPPORTED|ARCH_MISMATCH|INVALID_VALUE)) when calling "
    r"`(?P<cublas_call>\w{1,60})|"
    r"cublas runtime error : (?P<cublas_unsupported_thc>an absent device architectural feature is required)"
)
# the arguments refused rather than the GPU's features: memory is named beside the build
INVALID = R(r"(?P<cublas_invalid>CUBLAS_STATUS_INVALID_VALUE) when calling")
# the dtype the call itself names: a bfloat16 operand (cudaDataType CUDA_R_16BF in a cublas*Ex call's arguments), or a
# float32/float64 routine (cublasSgemm*, cublasDgemm*), where no bfloat16 reading applies
BF16 = R(
    r"CUBLAS_STATUS_(?:NOT_SUPPORTED|ARCH_MISMATCH) when calling `[^`\n]{0,600}?(?P<cublas_bf16>CUDA_R_16BF)"
)
# the statuses that say the GPU lacks what the call needs, where a bfloat16 call is bf16_unsupported's line
BF16_ANCHORS = ("CUBLAS_STATUS_NOT_SUPPORTED when calling", "CUBLAS_STATUS_ARCH_MISMATCH when calling")
BF16_TEMPLATES = ("torch_cuda:cublas-status-not-supported", "torch_cuda:cublas-status-arch-mismatch")
FLOAT = R(r"CUBLAS_STATUS_\w{1,20} when calling `(?P<cublas_float_call>cublas[SD]gemm)")
FACTS = (FACT, INVALID, BF16, FLOAT)

_CUBLAS_BUG = Alternative(
    "library_version_bug",
    "a cuBLAS bug of this CUDA release for these shapes or this call",
    "Try the torch wheel of another CUDA release (pip install torch --index-url "
    "https://download.pytorch.org/whl/cu121, or cu118); the call named in the error says which cuBLAS routine.",
    when=("cublas_unsupported", "cublas_unsupported_thc"),
)

ALSO = (
    Alternative(
        "cuda_oom",
        "the GPU's memory nearly full, which cuBLAS reports as an invalid value",
        "Watch nvidia-smi while it runs: a smaller batch per GPU, and no other process on the GPU.",
        when=("cublas_invalid",),
    ),
    Alternative(
        "bf16_unsupported",
        "a matrix multiply in a dtype this GPU's cuBLAS lacks (bfloat16 on a GPU older than Ampere)",
        "Run it in float16 or float32 on that GPU (autocast dtype=torch.float16, no --bf16), or on an Ampere or "
        "newer GPU.",
        when=("cublas_unsupported", "cublas_unsupported_thc"),
        unless=("cublas_float_call",),  # a float32 call
    ),
    _CUBLAS_BUG,
)

# the other readings of a bfloat16 call refused (bf16_unsupported's, on an Ampere or newer GPU)
BF16_ALSO = (
    Alternative(
        "broken_install",
        "a torch whose CUDA build does not fit the GPU (on an Ampere or newer GPU, which has bfloat16)",
        "Compare python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_arch_list(), "
        "torch.cuda.get_device_capability())' with nvidia-smi, and reinstall torch built for this machine's CUDA "
        "(pip install torch --index-url https://download.pytorch.org/whl/cu<CUDA>).",
        when=("cublas_bf16",),
    ),
    _CUBLAS_BUG,
)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """The summary and fix for cuBLAS refusing a call as not supported on this GPU, or its arguments."""
    call = next((h.facts["cublas_call"] for h in hits if h.facts.get("cublas_call")), "")
    status = next(
        (h.facts.get("cublas_unsupported") or h.facts.get("cublas_unsupported_thc") for h in hits),
        "its status",
    )
    call = call or "a matrix multiply"
    refused = (
        f"the arguments of {call}"
        if status == "CUBLAS_STATUS_INVALID_VALUE"
        else f"{call} as not supported on this GPU"
    )
    return (
        f"cuBLAS refused {refused} ({status}): most often a torch "
        "whose CUDA build does not fit the GPU or the machine's CUDA (an older CUDA build on a newer GPU, a torch "
        "replaced by another build)" + on_ranks(hits),
        "Compare python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_arch_list(), "
        "torch.cuda.get_device_capability())' with nvidia-smi: reinstall torch built for this machine's CUDA and "
        "GPU (pip install torch==<version>+cu<CUDA> --index-url https://download.pytorch.org/whl/cu<CUDA>, with the "
        "matching torchvision and torchaudio), and check that no requirements file replaced it afterwards.",
    )


def explain_bf16(hits: list[Hit]) -> tuple[str, str]:
    """The summary and fix for cuBLAS refusing a call whose arguments name a bfloat16 operand (``cublas_bf16``):
    the dtype leads (a GPU older than Ampere), the build is the alternative (``BF16_ALSO``)."""
    call = next((h.facts["cublas_call"] for h in hits if h.facts.get("cublas_call")), "a matrix multiply")
    status = next(
        (h.facts["cublas_unsupported"] for h in hits if h.facts.get("cublas_unsupported")), "its status"
    )
    return (
        f"cuBLAS refused {call}, a bfloat16 matrix multiply (CUDA_R_16BF in its arguments), as not supported "
        f"on this GPU ({status}): most often a GPU older than Ampere (compute capability 8.0), which has no "
        "bfloat16 matrix multiply" + on_ranks(hits),
        "Check the GPU: python -c 'import torch; print(torch.cuda.get_device_name(), "
        "torch.cuda.get_device_capability(), torch.cuda.is_bf16_supported())'. Below (8, 0) (V100, T4, "
        "RTX 20xx) run it in float16 or float32 (torch_dtype=torch.float16, autocast dtype=torch.float16, no "
        "--bf16), or on an Ampere or newer GPU.",
    )
