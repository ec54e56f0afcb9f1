"""An operator that has no kernel for the reduced-precision dtype it was given.

ATen picks an operator's kernel by the tensors' dtype (``aten/src/ATen/Dispatch.h``, the ``AT_DISPATCH_*``
macros); a dtype the kernel was not compiled for stops the run with ``"<op>" not implemented for '<dtype>'``
(``NotImplementedError`` since torch 2.1, ``RuntimeError`` before), whatever the operator: torch's own
(``addmm_impl_cpu_``, ``slow_conv2d_cpu``, ``LayerNormKernelImpl``) and a library's CUDA extension
(``deform_conv_forward_cuda``) alike. With ``Half`` or ``BFloat16`` it is mixed precision meeting an operator
that has no such kernel on that device — most often an fp16 model run on the CPU, whose kernels lack fp16
for many operators, or a custom CUDA op written for float32 only. The operator's name says which device's
kernel is missing (``_cpu`` / ``_cuda``), so the fix is read from it. Other dtypes (an integer tensor where a
float one was meant) are not this kind.

The FFTs say it in their own words: ATen's ``SpectralOps.cpp`` (``promote_type_fft``) refuses a dtype the
spectral kernels lack with ``Unsupported dtype Half`` (half FFTs need ComplexHalf, i.e. complex32, support: torch
1.12+ on CUDA only, power-of-two sizes, compute capability 5.3+), MKL's CPU FFT with ``MKL FFT doesn't support
tensors of type: Half``. ``Unsupported dtype`` alone is printed by other ATen code too, so without an FFT in
the log it is only likely.

Mixed precision also refuses one loss by name: ATen's autocast (``autocast_mode.cpp``,
``binary_cross_entropy_banned``) stops ``binary_cross_entropy`` / ``BCELoss`` with "are unsafe to autocast",
because a sigmoid's output in float16 loses the values near 0 and 1 the loss takes logs of.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# `"deform_conv_forward_cuda" not implemented for 'Half'`, as Dispatch.h prints it
_NOT_IMPLEMENTED = R(
    r"\"(?P<op>[\w.:<>]{1,100})\" not implemented for '(?P<dtype>Half|BFloat16|ComplexHalf|Float8_\w{1,20})'"
)


# the refusal of a CPU kernel ("addmm_impl_cpu_", "slow_conv2d_cpu"): the name says the tensors were on the CPU
_CPU_KERNEL = R(
    r"\"(?P<cpu_kernel>(?:[\w.:<>]{0,100}[_.:])?[Cc][Pp][Uu](?:[_.:][\w.:<>]{0,100})?)\" not implemented for "
    r"'(?:Half|BFloat16|ComplexHalf|Float8_\w{1,20})'"
)


# CPU kernels whose dispatch name does not say so (aten/src/ATen/native/cpu/layer_norm_kernel.cpp,
# group_norm_kernel.cpp, Activation.cpp, SoftMaxKernel.cpp, native/SoftMax.cpp, LinearAlgebra.cpp): their CUDA
# counterparts either carry another name or take Half, so a Half refusal of these is the CPU's. The threads posting
# "LayerNormKernelImpl" not implemented for 'Half' are a model run on the CPU on purpose and a torch that does not
# see the GPU (hiyouga/ChatGLM-Efficient-Tuning#37, facebookresearch/flores#30), as for "addmm_impl_cpu_" (CERT10)
_CPU_KERNEL_BY_NAME = R(
    r"\"(?P<cpu_kernel>LayerNormKernelImpl|GroupNormKernelImpl|GeluKernelImpl|(?:log_)?softmax_lastdim_kernel_impl|"
    r"host_softmax|baddbmm_with_gemm)\" not implemented for 'Half'"
)

# the spectral kernels' refusal (SpectralOps.cpp) and MKL's, as torch prints them
_FFT_DTYPE = R(
    r"(?:Unsupported dtype |(?P<mkl_fft>MKL FFT) doesn't support tensors of type: )"
    r"(?P<fft_dtype>Half|BFloat16|ComplexHalf)\b"
)

# torch_xla/csrc/convert_ops.cpp (ConvertTo's default): a conversion from XLA's F16 (PrimitiveType 10), which
# PyTorch/XLA does not take on the TPU (it computes in bfloat16)
_XLA_F16 = R(r"(?P<xla_f16>Unsupported XLA type 10)(?!\d)")

# an FFT in the log: torch.fft's functions, their frames, cuFFT/MKL's names
CONTEXT: tuple[tuple[str, re.Pattern], ...] = tuple(
    (literal, R(r"(?P<saw_fft>torch\.fft\.|\b[ir]?fft[2n]?\(|\b_fft_\w|\bcuFFT\b|\bMKL FFT\b|\bfftn?2?\b)"))
    for literal in ("fft", "FFT")
)


def _device_of(op: str) -> str:
    """``cpu``, ``cuda`` or "" from the kernel's name (``addmm_impl_cpu_``, ``deform_conv_forward_cuda``)."""
    words = set(re.split(r"[_.:]+", op.lower()))
    return "cpu" if "cpu" in words else "cuda" if words & {"cuda", "gpu"} else ""


def _fft_half(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    dtype = first(hits, "fft_dtype", "Half")
    summary = f"an FFT got {dtype} tensors, which torch's spectral kernels do not take" + on_ranks(hits)
    fix = (
        "Mixed precision (autocast, a model in .half()) handed torch.fft (fft, fft2, rfft2, ...) half-precision "
        "input; the FFT kernels need complex32 (ComplexHalf) support for that, which torch has only from 1.12, on "
        "CUDA only (not MKL's CPU FFT), for power-of-two signal sizes and GPUs of compute capability 5.3+. Run "
        "the FFT in float32: x.float() before it and the call inside torch.autocast(device_type='cuda', "
        "enabled=False), casting the result back if the model needs it (this keeps AMP for the rest); or "
        "upgrade torch to 1.12+ where its half FFT covers the sizes used."
    )
    return summary, fix


# ATen's kernels took BFloat16 into their AT_DISPATCH_* lists release by release, after Half (float16)
_BF16_LATER = (
    "bf16 kernels came to torch's operators release by release, later than fp16's: a newer torch may have this "
    "one (upgrade torch and check the op's dtypes there); otherwise keep bf16 for the rest of the model and run "
    "this op in float32, or train in fp16 (Half), which older kernels more often have."
)


def _xla_half(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "float16 (Half, XLA's type 10) reached PyTorch/XLA, which has no float16 conversion on the TPU: the TPU "
        "computes in bfloat16" + on_ranks(hits),
        "Use bfloat16, not float16, on TPU: precision='bf16-mixed' (or 'bf16-true') instead of 16 in Lightning, "
        "torch.autocast('xla', dtype=torch.bfloat16) or XLA_USE_BF16=1 instead of fp16 autocast, and no .half() "
        "or dtype=torch.float16 on tensors sent to the XLA device.",
    )


def _half_unsupported(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "xla_f16") is not None:
        return _xla_half(hits, ctx)
    if first(hits, "op") is None and first(hits, "fft_dtype") is not None:
        return _fft_half(hits, ctx)
    op, dtype = first(hits, "op", "?"), first(hits, "dtype", "Half")
    # a CPU kernel named without "cpu" refusing Half (_CPU_KERNEL_BY_NAME) is the CPU's too
    device = "cpu" if first(hits, "cpu_kernel") else _device_of(op)
    where = {"cpu": " on the CPU", "cuda": " on the GPU"}.get(device, "")
    summary = f"the operator {op} has no {dtype} kernel{where}: {dtype} tensors reached it" + on_ranks(hits)
    on_cpu = (
        f"torch's CPU kernels lack {dtype} for many operators: a model (or input) in {dtype} that runs on the "
        "CPU. Put it on the GPU it was meant for (check the device the model and batch are moved to: "
        ".to(device) / device_map), or run it on the CPU in float32 (model.float(), torch_dtype=torch.float32)."
    )
    on_gpu = (
        f"this operator's kernel was built without {dtype} (a library's custom CUDA op often is float32 only): "
        "run it in float32 inside the mixed-precision step — its inputs .float() and, under autocast, the call "
        "inside torch.autocast(device_type='cuda', enabled=False) (apex O1: register it as a float function) — "
        f"or train that model in full precision; a newer release of the library (or torch) may add the {dtype} "
        "kernel."
    )
    if device == "cpu":
        fix = on_cpu
    elif device == "cuda":
        fix = on_gpu[0].upper() + on_gpu[1:]
    else:  # the name does not say which device's kernel it is
        fix = f"On the CPU: {on_cpu}\nOn the GPU: {on_gpu}"
    if dtype == "BFloat16":
        fix += f"\n{_BF16_LATER}"
    return summary, fix


HALF_UNSUPPORTED_OP = Recogniser(
    # aten/src/ATen/Dispatch.h: the AT_DISPATCH_* macros' refusal of a dtype the kernel was not built for
    # and SpectralOps.cpp / MKL's FFT refusing half input: the generic "Unsupported dtype " is certain only
    # beside an FFT in the log
    kind="half_unsupported_op",
    templates=(
        "torch_native:op-not-implemented-for-dtype",
        "torch_native:fft-unsupported-dtype",
        "torch_native:mkl-fft-unsupported-type",
        "third_party:torch-xla-unsupported-xla-type",
    ),
    title="operator without a reduced-precision kernel",
    anchors=(
        "\" not implemented for '",
        "Unsupported dtype ",
        "MKL FFT doesn't support tensors of type",
        "Unsupported XLA type 10",
    ),
    match=R(_NOT_IMPLEMENTED.pattern + "|" + _FFT_DTYPE.pattern + "|" + _XLA_F16.pattern),
    facts=(_CPU_KERNEL, _CPU_KERNEL_BY_NAME),
    # a CPU kernel's refusal says the half model ran on the CPU, not why: on purpose (a machine without a GPU), or
    # because torch sees no GPU (a CPU-only build, a driver it cannot use) and the script's "cuda if available"
    # fell back to the CPU -- the threads posting "addmm_impl_cpu_" are both (CERT9): only likely, that one named.
    # A GPU kernel without the dtype (a library's float32-only CUDA op) is the one cause.
    confirm=lambda hits, ctx: (
        (any(k in h.facts for h in hits for k in ("op", "mkl_fft")) or "saw_fft" in ctx.facts)
        and not all("cpu_kernel" in h.facts for h in hits)
    ),
    also=(
        Alternative(
            "cuda_unavailable",
            "a torch that sees no GPU (a CPU-only build, or a driver it cannot use), so the half model fell back to "
            "the CPU",
            "If the model was meant to run on a GPU, check that torch sees one: python -c 'import torch; "
            "print(torch.cuda.is_available(), torch.version.cuda)' (None: a CPU-only build; install a CUDA build "
            "of torch, e.g. from https://pytorch.org/get-started/locally/), and nvidia-smi for the driver.",
            when=("cpu_kernel",),
        ),
    ),
    describe=_half_unsupported,
)


def _bce_autocast(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "autocast refused binary_cross_entropy / BCELoss: the loss is computed on sigmoid outputs in mixed "
        "precision, which torch bans as numerically unsafe" + on_ranks(hits),
        "Give the loss logits, not probabilities: drop the sigmoid before it and use "
        "torch.nn.BCEWithLogitsLoss / F.binary_cross_entropy_with_logits, which are safe to autocast (apply "
        "torch.sigmoid only where probabilities are needed, e.g. for metrics). If the probabilities must stay, "
        "compute that loss in float32 outside autocast: with torch.autocast(device_type='cuda', enabled=False): "
        "loss = F.binary_cross_entropy(p.float(), target.float()). (Projects that train fp16 through apex O1/O2 "
        "instead of torch.amp do not hit this check; that is why their configs say to use apex.)",
    )


AUTOCAST_UNSAFE_LOSS = Recogniser(
    # aten/src/ATen/autocast_mode.cpp: binary_cross_entropy_banned, the one op autocast refuses outright
    kind="autocast_unsafe_loss",
    templates=("torch_native:autocast-binary-cross-entropy-unsafe",),
    title="BCELoss on probabilities under autocast",
    anchors=("are unsafe to autocast",),
    describe=_bce_autocast,
)


def _fp16_weights(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the GradScaler met float16 gradients: some parameters are themselves float16 (a model or a layer cast "
        "with .half() / to(torch.float16), or loaded in fp16), which mixed precision's loss scaling cannot unscale"
        + on_ranks(hits),
        "Automatic mixed precision keeps the weights in float32 and runs only the forward in float16 under "
        "autocast; the GradScaler unscales float32 gradients and refuses fp16 ones. Keep the trained parameters "
        "in float32 (torch.float32): remove the model.half() / .to(torch.float16) on the trained modules (frozen "
        "ones may stay fp16), load with torch_dtype=torch.float32, and let autocast(dtype=torch.float16) do the "
        "rest; for training entirely in half precision use bf16 without a GradScaler instead. When a library "
        "casts the trainable weights (LoRA adapters through peft, a fine-tuning script), its version decides: "
        "use the one the script pins.",
    )


FP16_WEIGHTS_GRADSCALER = Recogniser(
    # torch/amp/grad_scaler.py (_unscale_grads_; torch/cuda/amp/grad_scaler.py before 2.3) and FSDP's
    # sharded_grad_scaler.py: a gradient in float16 reached unscale_. The weights are fp16 -- cast by the user's
    # code or by a library (peft's adapters, a training script), so only likely, naming the library's version
    kind="fp16_weights_gradscaler",
    title="float16 weights under AMP's GradScaler",
    # as printed, and lower-cased as users quote it in prose
    anchors=("to unscale FP16 gradients", "unscale fp16 "),
    templates=(
        "torch_native:amp-attempting-to-unscale-fp16-gradients",
        "torch:attempting-to-unscale-fp16-gradients",
    ),
    match=R(r"(?i:to unscale fp16 gradients)"),
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "dependency_version",
            "a library version that casts the trained weights (e.g. LoRA adapters) to float16",
            "Install the version of the library (peft, transformers, the fine-tuning script's requirements) the "
            "script was written for, e.g. pip install peft==<the pinned version>.",
        ),
    ),
    describe=_fp16_weights,
)


RECOGNISERS = (HALF_UNSUPPORTED_OP, AUTOCAST_UNSAFE_LOSS, FP16_WEIGHTS_GRADSCALER)
