"""A package missing, or too old, for the feature a run asked for, as the library says before use.

A package missing, or of a version too old, for the feature a run asked for: the refusals DeepSpeed
(``runtime/engine.py``, ``comm/torch.py``, ``runtime/fp16/onebit/``, ``runtime/zenflow/engine.py``,
``runtime/sequence_parallel/ulysses_sp.py``, ``runtime/utils.py``), accelerate (``accelerator.py``, ``state.py``,
``utils/dataclasses.py``, ``utils/modeling.py``, ``utils/launch.py``, ``utils/environment.py``), transformers
(``trainer.py``, ``training_args.py``, ``modeling_utils.py``, ``quantizers/``, ``utils/versions.py``,
``integrations/``) and Lightning (``strategies/deepspeed.py``, ``strategies/model_parallel.py``) print before they
use it, and torch's own refusal of code written for an older torch: ``torch/autograd/function.py``
``Function.__call__`` (1.5 on) refuses an autograd Function called as an instance with a non-static ``forward``
("Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd function
with static forward method."),
which torch 1.3-1.4 only warned about (``python_function.cpp``: "... deprecated and will be removed in 1.3."),
and the compiler's refusal of ``AT_CHECK``, the check macro ``c10/util/Exception.h`` defined up to torch 1.4 and
dropped for ``TORCH_CHECK`` (nvcc: 'identifier "AT_CHECK" is undefined'; gcc: "'AT_CHECK' was not declared in this
scope"; clang: "use of undeclared identifier 'AT_CHECK'"; MSVC C3861: "'AT_CHECK': identifier not found").

Each message names the package and, where there is one, the version: a certain ``dependency_version``
(kinds/versions.py reads ``REFUSALS``; ``TEMPLATES`` cites the catalog).
"""

from __future__ import annotations

from torchdoctor.explain.kinds.compiler import TH_THC_GONE

FAMILY = "library releases that disagree with the code"

_TH_THC_SOURCE = (
    "The extension's source was written for a torch before 1.11: install the package's release ported to the "
    "installed torch (its issues or a newer commit usually carry the port), or a torch older than 1.11 with a CUDA "
    "toolkit it supports; or port it yourself: drop the include, " + TH_THC_GONE
)
_AT_CHECK_SOURCE = (
    "The extension's source calls AT_CHECK, the check macro torch's headers (c10/util/Exception.h) defined up to "
    "torch 1.4; torch 1.5 on has only TORCH_CHECK, with the same arguments. Replace AT_CHECK with TORCH_CHECK in "
    "the sources the error names (or add #ifndef AT_CHECK / #define AT_CHECK TORCH_CHECK / #endif after the torch "
    "includes), install the project's release ported to the installed torch, or a torch 1.4 or older."
)
_UPGRADE_TORCH = (
    "Upgrade PyTorch to the version the message names, with the index of your CUDA (pip install -U torch "
    "--index-url https://download.pytorch.org/whl/cu1xx), or turn off the feature that needs it."
)
_FP8_BACKEND = (
    "FP8 training needs one FP8 backend installed in the job's environment: pip install torchao (or NVIDIA's "
    "transformer-engine, pip install 'transformer-engine[pytorch]'), or train in bf16 (--mixed_precision bf16)."
)
_BITSANDBYTES = (
    "Upgrade bitsandbytes (pip install -U bitsandbytes): 8-bit and 4-bit loading need a recent release, built for "
    "the installed CUDA (python -m bitsandbytes prints what it found)."
)
_SAVE_QUANTIZED = (
    "Upgrade bitsandbytes to the release the message names (pip install -U 'bitsandbytes>=0.41.3' to save a 4-bit "
    "model, 'bitsandbytes>0.37.2' an 8-bit one), built for the installed CUDA; or save only what was trained: a "
    "PEFT (QLoRA) model's save_pretrained writes the adapter alone, which needs no quantized serialization."
)
_FLASH_ATTENTION = (
    "Install flash-attn built for the installed torch and CUDA (pip install flash-attn --no-build-isolation; 2.3.3 "
    "or newer), or load the model with attn_implementation='sdpa', which needs no extra package."
)
_SEARCH_BACKEND = (
    "Install the hyperparameter-search package the call names in the job's environment (pip install optuna, pip "
    "install 'ray[tune]', pip install wandb), or choose the installed one with backend=... in "
    "trainer.hyperparameter_search()."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    # torch: an extension's source that includes the C headers torch 1.11 removed (compiler.py reads the same
    # header as a build failure; the source was written for an older torch, whatever else the build lacks)
    ("THC/THC.h: No such file or directory", _TH_THC_SOURCE),
    ("TH/TH.h: No such file or directory", _TH_THC_SOURCE),
    # torch: an extension's source that calls AT_CHECK, which torch 1.5 dropped (compiler.py reads the same line as
    # a name the headers lack; whose name it is decides the kind)
    ('identifier "AT_CHECK" is undefined', _AT_CHECK_SOURCE),
    ("\u2018AT_CHECK\u2019 was not declared in this scope", _AT_CHECK_SOURCE),
    ("'AT_CHECK' was not declared in this scope", _AT_CHECK_SOURCE),
    ("use of undeclared identifier 'AT_CHECK'", _AT_CHECK_SOURCE),
    ("'AT_CHECK': identifier not found", _AT_CHECK_SOURCE),
    # torch 1.1-1.3.1: SyncBatchNorm._check_input_dim (torch/nn/modules/batchnorm.py) refused input of 2 dimensions
    # or fewer; pytorch/pytorch#29626 relaxed it to fewer than 2 ("expected at least 2D input") in torch 1.4. The
    # (N, C) input it refused is BatchNorm1d's usual one, which convert_sync_batchnorm converts: the torch is too
    # old, not the tensor wrong. (torch.distributed.pipeline's DeferredBatchNorm, 1.8-2.3, kept the 3-D check: a
    # reason this stays likely.)
    (
        "expected at least 3D input (got 2D input)",
        "torch before 1.4 refuses (N, C) input in SyncBatchNorm, the input of the BatchNorm1d layers "
        "convert_sync_batchnorm converts (pytorch/pytorch#29626 allowed it in 1.4): upgrade torch to 1.4 or later "
        "(pip install -U torch; python -c 'import torch; print(torch.__version__)' shows the one installed). On "
        "an older torch, leave those layers out of the conversion or give them (N, C, 1) input (x.unsqueeze(-1), "
        "squeeze(-1) after the layer); from Pipe's DeferredBatchNorm (torch 1.8-2.3) the same message asks for "
        "(N, C, L) input.",
    ),
    # NumPy 2.0: np.array(obj, copy=False) means "never copy" and raises where a copy is needed (numpy/_core/src/
    # multiarray/ctors.c npy_no_copy_err_msg); NumPy 1.x copied silently, so the caller was written for 1.x
    (
        "If using `np.array(obj, copy=False)` replace it with `np.asarray(obj)`",
        "The code that called np.array(..., copy=False) (the frame above the error: the script's own, or a "
        "package's such as datasets, fasttext or an older transformers) was written for NumPy 1.x, where copy=False "
        "still copied when it had to; NumPy 2.0 refuses instead. Upgrade that package to its release made for NumPy "
        "2 (pip install -U <package>), or replace copy=False with np.asarray(...) in your own code, or install "
        "NumPy 1.x in the job's environment (pip install 'numpy<2').",
    ),
    # torch: a custom autograd Function in the old style, written for a torch before 1.3
    (
        "Legacy autograd function with non-static forward method is deprecated. Please use",
        "The code defines a torch.autograd.Function the pre-1.3 way (an instance with __init__ arguments and a "
        "forward(self, x)), which torch refuses from 1.5: make forward and backward @staticmethod taking ctx "
        "(def forward(ctx, x, ...), save tensors with ctx.save_for_backward) and call it as MyFunction.apply(x, "
        "...) instead of MyFunction(args)(x); values the old __init__ took become arguments of apply. Or install "
        "the torch the code was written for (1.4 or older), or the project's release that ports it.",
    ),
    # torch: code (an extension's build script, or the module that loads it) written for torch 0.4 or older,
    # whose cffi-based torch.utils.ffi torch 1.0 replaced with a stub that raises on import
    # (torch/utils/ffi/__init__.py: raise ImportError("torch.utils.ffi is deprecated. Please use cpp extensions
    # instead."))
    (
        "torch.utils.ffi is deprecated. Please use cpp extensions instead",
        "The code builds or loads its C/CUDA parts with torch.utils.ffi (create_extension, _wrap_function), the "
        "cffi interface of torch 0.4 and older that torch 1.0 removed. Install the project's branch or release "
        "ported to torch 1.x (often a pytorch-1.0 branch that builds with torch.utils.cpp_extension's "
        "CppExtension/CUDAExtension and BuildExtension), or run it in an environment with the torch it was written "
        "for (torch 0.4.1, with its Python and CUDA); porting means rewriting the C sources against ATen.",
    ),
    # DeepSpeed
    (
        "Please use torch 1.8 or greater to enable NCCL backend in",
        "Upgrade PyTorch (1.8 or newer) to run the 1-bit / 0/1 optimizers over NCCL, or set "
        '"comm_backend_name": "mpi" in the optimizer\'s params.',
    ),
    (
        "Install mup to use Mu",
        "The config names a muP optimizer (MuAdam, MuAdamW, MuSGD), which comes from the mup package: pip install mup "
        '(and set the model\'s base shapes with mup.set_base_shapes), or name "AdamW" / "SGD" instead.',
    ),
    (
        "Unable to import apex/amp, please make sure it is installed",
        'The config\'s "amp" section uses NVIDIA Apex: install it from source (github.com/NVIDIA/apex) with its CUDA '
        'extensions, or replace "amp" with DeepSpeed\'s own "fp16": {"enabled": true} / "bf16".',
    ),
    ("Torch version must be 2.5 or higher to use symmetric memory", _UPGRADE_TORCH),
    ("compile is not supported in your version of PyTorch", _UPGRADE_TORCH + " (torch.compile came in 2.0)"),
    (
        "Please use PyTorch 2.1 or later to enable ZenFlow",
        _UPGRADE_TORCH
        + ' ZenFlow\'s own words: or remove the "zenflow" section to use the default ZeRO-Offload.',
    ),
    (
        "count_used_parameters_in_backward requires internal PyTorch APIs",
        "This DeepSpeed counts the parameters a backward uses through PyTorch internals this torch lacks: upgrade "
        "torch to a release this DeepSpeed supports, or install the DeepSpeed release made for your torch.",
    ),
    ("Current torch version does not have", _UPGRADE_TORCH),
    (
        "is required, but you have transformers==",
        "Ulysses sequence parallelism needs the transformers version the message names: pip install -U "
        "'transformers>=<that version>'.",
    ),
    (
        "Hub kernel attention requires a transformers version exposing",
        "Kernels from the Hub need a newer transformers: pip install -U transformers, or set "
        "attn_implementation='flash_attention_2' / 'sdpa'.",
    ),
    # accelerate
    (
        "bf16 mixed precision with MPS device requires a Pytorch >=",
        "Upgrade PyTorch (pip install -U torch, 2.6 or newer) for bf16 on Apple MPS, or train in fp32 there "
        "(accelerate launch --mixed_precision no).",
    ),
    (
        "Grad Scaler with MPS device requires a Pytorch >=",
        "fp16 on Apple MPS scales the loss with a GradScaler that PyTorch has for MPS from 2.8: upgrade PyTorch "
        "(pip install -U torch), or train in fp32 there (--mixed_precision no).",
    ),
    (
        "was not found on your system or is too old of a version",
        "pip install -U 'torchao>=0.6.1' in the job's environment, or choose another FP8 backend "
        "(fp8_backend: te / msamp) or bf16.",
    ),
    ("Please ensure that either Transformer Engine, MSAMP or torchao is installed", _FP8_BACKEND),
    ("but no FP8-compatible backend was installed", _FP8_BACKEND),
    ("is not available. Please install it or use a different backend", _FP8_BACKEND),
    ("You have a version of `bitsandbytes` that is not compatible with", _BITSANDBYTES),
    (
        "and later versions. Please upgrade your PyTorch version",
        _UPGRADE_TORCH + " (context and tensor parallelism in accelerate follow PyTorch's DTensor APIs)",
    ),
    (
        "TP requires transformers >=",
        "accelerate's tensor parallelism loads the model through transformers' tp_plan: pip install -U "
        "'transformers>=<the version named>'.",
    ),
    (
        "it requires Transformers to be installed",
        "zero3_init_flag builds the model inside DeepSpeed's zero.Init through transformers: pip install "
        "transformers, or set zero3_init_flag: false in the accelerate config.",
    ),
    (
        "the `nvidia-ml-py` package must be available",
        "accelerate sets each process's CPU affinity from NVML: pip install nvidia-ml-py, or turn off "
        "enable_cpu_affinity in the accelerate config (ACCELERATE_CPU_AFFINITY=0).",
    ),
    (
        "Megatron is not installed. please build it from source",
        "accelerate's Megatron-LM integration imports megatron.core: install Megatron-LM from source "
        "(github.com/NVIDIA/Megatron-LM) in the job's environment, or turn off use_megatron_lm.",
    ),
    # transformers
    (
        "ParallelismConfig requires accelerate>=",
        "pip install -U 'accelerate>=<the version named>' for the Trainer's parallelism_config, or drop it.",
    ),
    (
        "Requires accelerate>",
        "pip install -U accelerate (the Trainer's tensor parallelism needs the version named), or drop tp_size.",
    ),
    (
        "Could not load adapter model, make sure to have PEFT >=",
        "The checkpoint holds a PEFT adapter: pip install -U 'peft>=<the version named>' in the job's environment.",
    ),
    ("This function needs Optuna installed", _SEARCH_BACKEND),
    ("This function needs ray installed", _SEARCH_BACKEND),
    ("This function needs wandb installed", _SEARCH_BACKEND),
    (
        "requires `huggingface_hub` version",
        "pip install -U 'huggingface_hub>=0.31.4' to save a tensor-parallel model.",
    ),
    (
        "accelerate is required when loading a GGUF file",
        "pip install accelerate in the job's environment to load a GGUF checkpoint.",
    ),
    ("the package for FlashAttention", _FLASH_ATTENTION),
    # the same checks as 4.36-4.5x word them, after "FlashAttention2 has been toggled on, but it cannot be used
    # due to the following error:" (modeling_utils.py _check_and_enable_flash_attn_2)
    ("the package flash_attn seems to be not installed", _FLASH_ATTENTION),
    ("you need flash_attn package version to be greater or equal than", _FLASH_ATTENTION),
    ("requires at least version `2.3.3`", _FLASH_ATTENTION),
    (
        "Kernels are not available. Please install a compatible version",
        "pip install the kernels version the message names (pip install 'kernels==<version>'), or load the model "
        "without use_kernels.",
    ),
    (
        "You need to install `pip install bitsandbytes>=",
        "pip install -U 'bitsandbytes>=<the version named>' to move a quantized model between devices, or load it "
        "on its device directly (device_map={'': LOCAL_RANK}).",
    ),
    # transformers' save_pretrained of a bitsandbytes model (modeling_utils.py up to 4.38, then the quantizers'
    # is_serializable in quantizers/quantizer_bnb_4bit.py and quantizer_bnb_8bit.py): a bitsandbytes too old to
    # serialize 4-bit (before 0.41.3) or 8-bit (0.37.2 and older) weights; pasted without its backticks too
    ("to a 4-bit converted model, but your `bitsandbytes` version doesn't support it", _SAVE_QUANTIZED),
    ("to a 8-bit converted model, but your `bitsandbytes` version doesn't support it", _SAVE_QUANTIZED),
    ("to a 4-bit converted model, but your bitsandbytes version doesn't support it", _SAVE_QUANTIZED),
    ("to a 8-bit converted model, but your bitsandbytes version doesn't support it", _SAVE_QUANTIZED),
    (
        "distribution was not found and is required by this application",
        "A package the code checks for is not installed in the job's environment: pip install it (the message "
        "names it and the hint), or install the project's requirements file.",
    ),
    # Lightning
    (
        "you must have DeepSpeed installed",
        "pip install -U deepspeed in the job's environment (it builds its ops on first use: a CUDA toolkit matching "
        "torch's CUDA is needed), or choose another strategy (ddp, fsdp).",
    ),
    (
        "requires PyTorch 2.4 or higher",
        "ModelParallelStrategy uses PyTorch's DTensor and fully_shard: upgrade torch (2.4 or newer), or use "
        "FSDPStrategy / DDP.",
    ),
)

# refusals whose words another source prints too: only likely (SyncBatchNorm's pre-1.4 check is also Pipe's
# DeferredBatchNorm's, torch 1.8-2.3, and copies of the old check in other packages)
GENERIC: tuple[str, ...] = ("expected at least 3D input (got 2D input)",)

TEMPLATES: tuple[str, ...] = (
    "aten:syncbn-expected-at-least-3d-input",
    "torch_native:legacy-autograd-function-non-static",
    "third_party:numpy-unable-to-avoid-copy",
    "third_party:torch-utils-ffi-removed",
    "deepspeed:please-use-torch-or-greater-to",
    "deepspeed:please-use-torch-or-greater-to-2",
    "deepspeed:install-mup-to-use-muadam-optimizer",
    "deepspeed:install-mup-to-use-muadamw-optimizer",
    "deepspeed:install-mup-to-use-musgd-optimizer",
    "deepspeed:unable-to-import-apex-amp-please",
    "deepspeed:torch-version-must-be-or-higher",
    "deepspeed:compile-is-not-supported-in-your",
    "deepspeed:please-use-pytorch-or-later-to",
    "deepspeed:count-used-parameters-in-backward-requires",
    "deepspeed:current-torch-version-does-not-have",
    "deepspeed:current-torch-version-does-not-have-2",
    "deepspeed:transformers-is-required-but-you-have",
    "deepspeed:hub-kernel-attention-requires-transformers-version",
    "accelerate:bf16-mixed-precision-with-mps-device",
    "accelerate:grad-scaler-with-mps-device-requires",
    "accelerate:torchao-was-not-found-on-your",
    "accelerate:fp8-is-not-available-on-this",
    "accelerate:tried-to-train-with-fp8-and",
    "accelerate:torchao-is-not-available-please-install",
    "accelerate:transformerengine-is-not-available-please-install",
    "accelerate:you-have-version-of-bitsandbytes-that",
    "accelerate:you-have-version-of-bitsandbytes-that-2",
    "accelerate:fsdp2-based-context-parallelism-is-only",
    "accelerate:torch-tensor-parallelism-is-only-available",
    "accelerate:tp-requires-transformers",
    "accelerate:when-zero3-init-flag-is-set",
    "accelerate:to-set-cpu-affinity-on-cuda",
    "accelerate:megatron-is-not-installed-please-build",
    "transformers:parallelismconfig-requires-accelerate-please-upgrade-accelerate",
    "transformers:requires-accelerate-to-use-tensor-parallelism",
    "transformers:could-not-load-adapter-model-make",
    "transformers:this-function-needs-optuna-installed-pip",
    "transformers:this-function-needs-ray-installed-pip",
    "transformers:this-function-needs-wandb-installed-pip",
    "transformers:saving-model-with-tensor-parallelism-requires",
    "transformers:accelerate-is-required-when-loading-gguf",
    "transformers:the-package-for-flashattention-doesn-seem",
    "transformers:flashattention-requires-at-least-version",
    "transformers:flash-attn-2-toggled-on-not-installed",
    "transformers:flash-attn-2-toggled-on-version",
    "transformers:kernels-are-not-available-please-install",
    "transformers:you-need-to-install-pip-install",
    "transformers:the-distribution-was-not-found-and",
    "third_party:transformers-save-4bit-bitsandbytes-too-old",
    "third_party:transformers-save-8bit-bitsandbytes-too-old",
    "lightning:to-use-the-deepspeedstrategy-you-must",
    "lightning:requires-pytorch-or-higher",
)
