"""torch's messages compiled only into its CUDA libraries (catalog/torch_cuda.tsv): each mapped template, filled in
as its source fills it, is read as its kind; the lines beside them that share their words are not.

The sources (pytorch/pytorch, read one stored version each): c10/cuda (CUDAFunctions.cpp, CUDACachingAllocator.cpp),
aten/src/ATen/cuda (Exceptions.h, CublasHandlePool.cpp), aten/src/ATen/native/cuda's kernel asserts (IndexKernel.cu,
ScatterGatherKernel.cu, Indexing.cu, Loss.cu, MultinomialKernel.cu), aten/src/ATen/native/cudnn/Conv_v8.cpp,
aten/src/THC/THCGeneral.cpp, torch/csrc/cuda/nccl.cpp, torch/csrc/distributed/c10d/NCCLUtils.cpp.
"""

from __future__ import annotations

import io

import pytest
from explaining import filled, names_its_kind

from torchdoctor.explain.catalog import load
from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")

# a kernel's assert as the device prints it: the .cu file and line, the function, the block and the thread
_KERNEL = "/pytorch/aten/src/ATen/native/cuda/{}:93: operator()"


def findings(text: str):
    """Every finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))


def _printed(ident: str) -> str:
    """The template ``ident`` as a log prints it: a kernel assert with its file and thread, anything else raised
    as a RuntimeError, numbers and names where the source puts them."""
    template = next(t for t in load()["torch_cuda"] if t.id == ident)
    if "Assertion `" in template.text:
        kernel = template.file.split("(")[0].strip().rsplit("/", 1)[-1]
        return filled(ident, _KERNEL.format(kernel), "6,0,0", "47,0,0") + "\n"
    values = _VALUES.get(ident, ("1", "2", "3", "4", "5", "6", "7", "8"))
    return "RuntimeError: " + filled(ident, *values) + "\n"


# CUDABlas.cpp's bgemm<at::BFloat16>: TORCH_CUDABLAS_CHECK prints the call as its source writes it
BF16_BATCHED_GEMM = (
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, "
    "opa, opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, "
    "(int)ldb, strideb, (void*)&fbeta, c, CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, "
    "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`\n"
)

# what a source puts where a number would not be printed: NCCLUtils.hpp's C10D_NCCL_ASSERT names the file, its
# line and ncclGetErrorWithVersion's words
_VALUES = {
    "torch_cuda:nccl-assert-abort": (
        "../torch/csrc/distributed/c10d/NCCLUtils.hpp",
        "182",
        "unhandled cuda error, NCCL version 2.18.1",
    ),
    # ProcessGroupNCCL.cpp's broadcastUniqueNCCLID: the rank, the store's key twice, the store's own error
    "torch_cuda:pg-nccl-retrieving-unique-id-network-setup": ("1", "0", "0", "Socket Timeout"),
    # THCGeneral.cpp's __THCudaCheck: the error's number and string, then TH's " at <file>:<line>"
    "torch_cuda:thc-cuda-runtime-error": (
        "11",
        "invalid argument at /pytorch/aten/src/THC/THCGeneral.cpp:405",
    ),
}


# mapped templates a recogniser's anchor is in, but whose pattern never reads them as printed
NOT_READ = {
    # CUDAFunctions.cpp's message of an ASAN build: NCCL's anchor " 'out of memory'" is in its words, cuda_oom's
    # pattern reads the allocator's, cudart's and NCCL's forms only (no released wheel is an ASAN build)
    "torch_cuda:cuda-init-out-of-memory-asan",
    # ProcessGroupNCCL.cpp's "Unknown exception while [N] is setting up NCCL communicator": collective_timeout's
    # pattern wants the store's timeout after the anchor, which a non-std exception never prints
    "torch_cuda:pg-nccl-unknown-exception-retrieving-unique-id",
}
MAPPED = [t.id for t in load()["torch_cuda"] if t.kind and t.id not in NOT_READ]


def test_the_cuda_only_sources_have_templates_and_mappings():
    templates = load()["torch_cuda"]
    assert len(templates) >= 100
    assert len(MAPPED) >= 25
    # every row names the file of pytorch/pytorch it was read from
    assert all(t.file.startswith(("aten/", "c10/", "torch/")) for t in templates)


@pytest.mark.parametrize("ident", MAPPED)
def test_a_mapped_template_as_printed_is_read_as_its_kind(ident):
    kind = next(t.kind for t in load()["torch_cuda"] if t.id == ident)
    ids = [f.id for f in findings(_printed(ident))]
    assert f"log.{kind}" in ids, (ident, ids)


# (line as printed, kind, confidence, words the summary or fix must hold)
NAMED = [
    # CublasHandlePool.cpp: the thread's first matrix multiply could not create its cuBLAS handle, a full GPU most
    # often; only likely, an earlier kernel's fault and a build that does not fit named beside it
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n",
        "cuda_oom",
        "likely",
        ["cuBLAS could not create its handle", "CUDA_LAUNCH_BLOCKING=1", "reinstall torch"],
    ),
    # Conv_v8.cpp: no cuDNN engine ran (cudnn.benchmark off: GET, on: FIND)
    (
        "RuntimeError: GET was unable to find an engine to execute this computation\n",
        "cuda_oom",
        "likely",
        ["cuDNN could not start or choose a convolution", "bfloat16", "LD_LIBRARY_PATH"],
    ),
    (
        "RuntimeError: FIND was unable to find an engine to execute this computation\n",
        "cuda_oom",
        "likely",
        ["cudnn.benchmark = False"],
    ),
    # Exceptions.h: cuBLAS refusing a plain matrix multiply as unsupported on this GPU (LOD-3DGS#25 in the train
    # half: an A800 under a torch not built for its CUDA)
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasSgemmStridedBatched( handle, "
        "opa, opb, m, n, k, &alpha, a, lda, stridea, b, ldb, strideb, &beta, c, ldc, stridec, num_batches)`\n",
        "broken_install",
        "likely",
        ["cublasSgemmStridedBatched", "reinstall torch", "torch.version.cuda"],
    ),
    # the same status where the call's own arguments name a bfloat16 operand (CUDA_R_16BF): a GPU before Ampere
    # has no bf16 matrix multiply, so that reading leads, its kind with it, and the fix is the dtype (session 39, a
    # Llama fine-tune); the build is the other reading
    (
        BF16_BATCHED_GEMM,
        "bf16_unsupported",
        "likely",
        ["a bfloat16 matrix multiply (CUDA_R_16BF", "older than Ampere", "torch.float16", "reinstall torch"],
    ),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx( handle, opa, opb, m, "
        "n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, CUDA_R_32F, "
        "CUBLAS_GEMM_DFALT_TENSOR_OP)`\n",
        "bf16_unsupported",
        "likely",
        ["CUBLAS_STATUS_ARCH_MISMATCH", "cublasGemmEx"],
    ),
    # the same check refusing the arguments ATen computed for a plain matrix multiply: the threads' fixes were a
    # reinstall for the machine's CUDA (huggingface/transformers#21663) or memory
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, "
        "k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n",
        "broken_install",
        "likely",
        ["the arguments of cublasSgemm", "reinstall torch", "nvidia-smi"],
    ),
    # THCGeneral.cpp (torch 0.4-1.x): the same status in THC's words, then THC's file and line
    (
        "RuntimeError: cublas runtime error : an absent device architectural feature is required at "
        "/pytorch/aten/src/THC/THCBlas.cu:258\n",
        "broken_install",
        "likely",
        ["a matrix multiply", "get_arch_list"],
    ),
    # CUDAFunctions.cpp: cudaGetDeviceCount's initialisation error, warned by torch.cuda.is_available()
    (
        "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: CUDA driver "
        "initialization failed, you might not have a CUDA gpu. (Triggered internally at "
        "../c10/cuda/CUDAFunctions.cpp:109.)\n",
        "cuda_unavailable",
        "likely",
        [],
    ),
]


@pytest.mark.parametrize(("text", "kind", "confidence", "words"), NAMED)
def test_source_line_names_its_kind(text, kind, confidence, words):
    names_its_kind(text, kind, confidence, words)


def test_a_float32_cublas_call_is_not_offered_the_bfloat16_reading():
    # cublasSgemm* multiplies float32: a dtype the GPU lacks is no reading of it (train 5519.txt, LOD-3DGS#25)
    (found,) = findings(next(text for text, *_ in NAMED if "`cublasSgemmStridedBatched(" in text))
    assert "cublasSgemmStridedBatched" in found.summary
    assert "bfloat16" not in found.summary + found.fix
    assert "log.bf16_unsupported" not in found.details.get("alternatives", [])


def test_a_bfloat16_cublas_call_in_a_trainers_run_is_bf16_unsupported_with_the_build_as_its_alternative():
    # a Llama fine-tune in bf16 on a V100 as the Trainer's run prints it: the summary leads with bf16 on a GPU
    # older than Ampere, so the finding's id and --json kind say so (it was broken_install's, session 39)
    log = (
        "{'loss': 1.8312, 'learning_rate': 1.9e-05, 'epoch': 0.01}\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/finetune.py", line 88, in <module>\n'
        "    trainer.train()\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 1539, in train\n'
        "    return inner_training_loop(\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py", line 350, '
        "in forward\n"
        "    attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)\n"
        + BF16_BATCHED_GEMM
    )
    (found,) = findings(log)
    assert (found.id, found.details["kind"], found.details["confidence"]) == (
        "log.bf16_unsupported",
        "bf16_unsupported",
        "likely",
    )
    assert found.summary.startswith(
        "likely: cuBLAS refused cublasGemmStridedBatchedEx, a bfloat16 matrix multiply"
    )
    assert found.details["alternatives"][0] == "log.broken_install"
    assert "older than 1.10" not in found.summary  # bf16's version reading is accelerate's, not cuBLAS's


# (a line that shares an anchor's words but is another message, the kind it must not be named)
NEAR_MISSES = [
    # another cuBLAS status: an access to the GPU's memory that failed, not a build that does not fit
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_MAPPING_ERROR when calling `cublasSgemm( handle, opa, opb, m, n, "
        "k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n",
        "broken_install",
    ),
    (
        "RuntimeError: cublas runtime error : an internal operation failed at /pytorch/aten/src/THC/THCBlas.cu:258\n",
        "broken_install",
    ),
    # the handle's stream set on an existing handle: not its creation
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasSetStream(handle, stream)`\n",
        "cuda_oom",
    ),
    # a script's own log line about the engine search, not cuDNN's refusal
    ("INFO: cuDNN found an engine to execute this computation in 3 ms\n", "cuda_oom"),
    ("INFO: CUDA driver initialization took 0.4 s on 8 GPUs\n", "cuda_unavailable"),
]


@pytest.mark.parametrize(("text", "kind"), NEAR_MISSES)
def test_near_miss_is_not_that_kind(text, kind):
    assert f"log.{kind}" not in [f.id for f in findings(text)]
