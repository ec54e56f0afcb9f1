"""A DeepSpeed op this machine cannot build or run: the library, the package, the GPU or the system it lacks.

DeepSpeed's op builders (``op_builder/*.py``: ``is_compatible`` and the paths a build looks for) say which
prerequisite of one op is missing before the op is built at install (DS_BUILD_*=1) or just in time: libaio for
async_io / GDS (NVMe offload), CUTLASS for the Evoformer attention, triton 1.0.0 and torch 1.x for sparse attention,
the triton releases of the FP quantizer, oneCCL for the CPU accelerator's communication op, Ascend's CANN for NPU
ops, a GPU generation, a POSIX system, torch itself when ops are compiled inside pip's isolated build environment;
and an accelerator whose op builders lack the op (``op_builder/<accelerator>/no_impl.py``: "This op had not been
implemented on CPU backend"), printed on a CPU or NPU run on purpose and as often where torch saw no CUDA GPU and
DeepSpeed fell back to the CPU accelerator: likely, both named in its fix.
``ds_report`` prints the same lines for every op, built or not, on healthy machines too: each stays likely (the
lines are generic), and the op builder's "Unable to JIT load the <op> op" (``cuda_build``) beside one is its
consequence.
"""

from __future__ import annotations

import dataclasses

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "builds and installs"

_LIBAIO = (
    "The async_io op (ZeRO-Infinity's NVMe offload, DeepNVMe) and GDS build against libaio: install its headers and "
    "library, apt install libaio-dev (yum / dnf: libaio-devel; conda: conda install -c conda-forge libaio, then "
    "export CFLAGS=-I$CONDA_PREFIX/include LDFLAGS=-L$CONDA_PREFIX/lib), and build again (DS_BUILD_AIO=1 pip install "
    'deepspeed, or let it build just in time). A run that offloads to the CPU ("device": "cpu") or not at all '
    "never loads async_io: the line is then only ds_report's survey."
)

_CUTLASS = (
    "DeepSpeed's Evoformer attention (DS4Sci_EvoformerAttention) is built on CUTLASS 3.1 or newer: pip install "
    "nvidia-cutlass, or git clone https://github.com/NVIDIA/cutlass and export CUTLASS_PATH=<that checkout> (the "
    "folder holding include/cutlass), then build again (DS_BUILD_EVOFORMER_ATTN=1 pip install deepspeed, or just "
    "in time)."
)

_SPARSE_ATTENTION = (
    "DeepSpeed's sparse attention op runs only with torch 1.5-1.13 and triton==1.0.0: under torch 2.x it cannot be "
    'built. Drop "sparse_attention" from the DeepSpeed config (and SparseSelfAttention from the model) and use '
    "torch's scaled_dot_product_attention or FlashAttention, or run it in an environment with torch<2 and "
    "pip install triton==1.0.0."
)

_TORCH_FIRST = (
    "DeepSpeed compiles ops at install time (DS_BUILD_OPS=1 / DS_BUILD_<OP>=1) with the torch it imports, and pip "
    "builds in an isolated environment without it: install torch first (the CUDA build, for CUDA ops), then pip "
    "install deepspeed --no-build-isolation with the DS_BUILD_* variables; or install without them and let the ops "
    "build just in time."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("requires the dev libaio .so object and headers but these were not found", _LIBAIO),
    ("If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS", _LIBAIO),
    ("Unable to locate CUTLASS", _CUTLASS),
    ("Please pip install nvidia-cutlass", _CUTLASS),
    ("does not contain CUTLASS headers", _CUTLASS),
    ("Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH", _CUTLASS),
    ("Please use CUTLASS version >= 3.1.0", _CUTLASS),
    (
        "Please use a GPU with compute capability >= 7.0",
        "DeepSpeed's Evoformer attention needs Tensor Cores, a GPU of compute capability 7.0 (V100) or newer "
        "(torch.cuda.get_device_capability() shows it): run it on such a GPU, or use the model's own attention "
        "instead of DS4Sci_EvoformerAttention on this one.",
    ),
    ("please install triton==1.0.0 if you want to use sparse attention", _SPARSE_ATTENTION),
    ("requires a torch version >= 1.5 and < 2.0 but detected", _SPARSE_ATTENTION),
    (
        "if you want to use the FP Quantizer Kernels",
        "The FP quantizer's kernels (FP8/FP6 quantization, ZeRO++'s quantized weights) are written for triton 2.3.0, "
        "2.3.1 or 3.0.0: install one of them beside a torch it fits (torch 2.3 / 2.4 ship them), or do not enable the "
        "FP quantizer.",
    ),
    (
        "NVIDIA Inference is only supported on Ampere and newer architectures",
        "This DeepSpeed op (the FP quantizer) runs on Ampere (compute capability 8.0: A100, RTX 30xx) and newer "
        "GPUs only: run it on such a GPU, or leave the feature that needs it off (fp8/fp6 quantization, "
        '"zero_quantized_weights").',
    ),
    (
        "NVIDIA Inference is only supported on Pascal and newer architectures",
        "DeepSpeed-Inference v2's kernels (DeepSpeed-FastGen, deepspeed-mii) run on Pascal (compute capability 6.0) "
        "and newer GPUs only: run them on such a GPU.",
    ),
    (
        "Didn't find CCL_ROOT, install oneCCL",
        "DeepSpeed on the CPU accelerator communicates through oneCCL: install it (pip install oneccl_bind_pt from "
        "Intel's index for this torch, or build oneCCL) and source its environment before launching: source "
        "$(python -c 'import oneccl_bindings_for_pytorch as m, os; print(os.path.dirname(m.__file__))')/env/setvars.sh "
        "(it sets CCL_ROOT).",
    ),
    (
        "CANN_HOME does not exist, unable to compile NPU op(s)",
        "DeepSpeed builds Ascend NPU ops with the CANN toolkit it finds through ASCEND_HOME_PATH: install CANN and "
        "source its environment before launching (source /usr/local/Ascend/ascend-toolkit/set_env.sh), on every node.",
    ),
    (
        "is only supported on POSIX platforms, not Windows",
        "This DeepSpeed op (pinned host memory) builds on Linux only: run the job under Linux or WSL2, or without "
        "the feature that loads it.",
    ),
    # op_builder/{cpu,hpu,mlu,npu,sdaa,xpu}/no_impl.py: the op builder of an accelerator without this op
    (
        "This op had not been implemented on",
        "DeepSpeed ran on the accelerator the message names, whose op builders lack this op (kernel injection, "
        "FusedAdam and the CUDA kernels have no CPU build). DeepSpeed picks it from DS_ACCELERATOR or from what it "
        "detects: the CPU when torch sees no CUDA GPU. On a GPU machine check python -c 'import torch; "
        "print(torch.cuda.is_available())' (a CPU-only torch, a driver it cannot use) and unset DS_ACCELERATOR "
        "(ds_report names the accelerator it chose); on that accelerator on purpose, turn off what needs the op "
        "(replace_with_kernel_inject=False, torch.optim.AdamW instead of FusedAdam).",
    ),
    ("Please install torch if trying to pre-compile", _TORCH_FIRST),
    ("Please install torch CUDA if trying to pre-compile GDS with CUDA", _TORCH_FIRST),
)

DEEPSPEED_OP_PREREQUISITE = refusal_recogniser(
    kind="deepspeed_op_prerequisite",
    title="a DeepSpeed op whose prerequisite this machine lacks",
    refusals=REFUSALS,
    templates=(
        "deepspeed:requires-the-dev-libaio-so-object",  # op_builder/async_io.py (and gds.py, its subclass)
        "deepspeed:if-libaio-is-already-installed-perhaps",
        "deepspeed:unable-to-locate-cutlass-install-nvidia",  # op_builder/evoformer_attn.py
        "deepspeed:unable-to-locate-cutlass-from-the",
        "deepspeed:please-pip-install-nvidia-cutlass",
        "deepspeed:please-pip-install-nvidia-cutlass-if",
        "deepspeed:cutlass-path-does-not-contain-cutlass",
        "deepspeed:please-specify-the-cutlass-repo-directory",
        "deepspeed:please-use-cutlass-version",
        "deepspeed:please-use-gpu-with-compute-capability",
        "deepspeed:please-install-triton-if-you-want",  # op_builder/sparse_attn.py
        "deepspeed:requires-torch-version-and-but-detected",
        "deepspeed:please-install-triton-or-if-you",  # op_builder/fp_quantizer.py
        "deepspeed:nvidia-inference-is-only-supported-on",
        "deepspeed:nvidia-inference-is-only-supported-on-2",  # op_builder/inference_core_ops.py
        "deepspeed:didn-find-ccl-root-install-oneccl",  # op_builder/cpu/comm.py
        "deepspeed:cann-home-does-not-exist-unable",  # op_builder/npu/builder.py
        "deepspeed:is-only-supported-on-posix-platforms",  # op_builder/pin_memory.py
        "deepspeed:this-op-had-not-been-implemented",  # op_builder/cpu/no_impl.py
        "deepspeed:this-op-had-not-been-implemented-2",  # op_builder/hpu/no_impl.py
        "deepspeed:this-op-had-not-been-implemented-3",  # op_builder/mlu/no_impl.py
        "deepspeed:this-op-had-not-been-implemented-4",  # op_builder/npu/no_impl.py
        "deepspeed:this-op-had-not-been-implemented-5",  # op_builder/sdaa/no_impl.py
        "deepspeed:this-op-had-not-been-implemented-6",  # op_builder/xpu/no_impl.py
        "deepspeed:please-install-torch-if-trying-to",
        "deepspeed:please-install-torch-if-trying-to-2",
        "deepspeed:please-install-torch-if-trying-to-3",
        "deepspeed:please-install-torch-cuda-if-trying",
    ),
    several=tuple(text for text, _ in REFUSALS),
)

# the op builder's "Unable to JIT load the <op> op due to ..." (cuda_build) is what the missing prerequisite led to
DEEPSPEED_OP_PREREQUISITE = dataclasses.replace(DEEPSPEED_OP_PREREQUISITE, absorbs=("cuda_build",))

RECOGNISERS = (DEEPSPEED_OP_PREREQUISITE,)
