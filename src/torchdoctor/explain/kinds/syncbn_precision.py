"""SyncBatchNorm in a model converted to half precision: its counts refused beside half running statistics.

``SyncBatchNorm.forward`` (``torch/nn/modules/_functions.py``) gathers every rank's mean, inverse std and element
count and calls ``torch.batch_norm_gather_stats_with_counts``; the CUDA kernel
(``batch_norm_gather_stats_cuda_template``, ``aten/src/ATen/native/cuda/Normalization.cuh``) reads the counts in
the running statistics' dtype and checks it with ``get_packed_accessor``: "Expected counts to have type {} but got
{}". Before torch 2.1 the counts were built in the dtype of the gathered mean, which ``batch_norm_stats`` returns
in float32 for a half input, so a model whose SyncBatchNorm layers were converted to half or bfloat16
(``model.half()``, apex's O2/O3 and ``network_to_half``, DeepSpeed's or ColossalAI's fp16 modes, which convert the
whole model) has half running statistics beside float32 counts and fails at its first forward
(pytorch/pytorch#96203, hpcaitech/ColossalAI#258, deepspeedai/DeepSpeed#2102). pytorch/pytorch#98332 casts the
counts to the running statistics' dtype (torch 2.1 and later). The message names the counts and both dtypes, so
the reading is certain; the model's conversion is what the fix changes.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

COUNTS_REFUSED = R(
    r"Expected counts to have type (?P<stats_dtype>Half|BFloat16|c10::Half|c10::BFloat16) "
    r"but got (?P<counts_dtype>Float|c10::Float)"
)


def _half_stats(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    stats = first(hits, "stats_dtype", "Half").replace("c10::", "")
    half = "bfloat16" if stats == "BFloat16" else "float16"
    return (
        f"SyncBatchNorm's gather of the ranks' statistics refused its counts: they are float32 while the layer's "
        f"running statistics are {stats} ({half}), because the model, its SyncBatchNorm layers included, was "
        "converted to half precision, and torch before 2.1 builds SyncBatchNorm's counts in float32"
        + on_ranks(hits),
        "Keep the normalisation layers in float32 (fp32), or use a torch that casts the counts:\n"
        "- torch 2.1 or later (pytorch/pytorch#98332) casts SyncBatchNorm's counts to the running statistics' "
        "dtype: pip install -U torch;\n"
        "- for mixed precision, keep the model in float32 and run the forward under torch.autocast "
        f"(torch.cuda.amp / accelerate's mixed_precision) instead of model.half() or model.to({half}): autocast runs "
        "batch norm in float32;\n"
        "- where a framework converts the whole model (apex O2/O3 or network_to_half, DeepSpeed's fp16, "
        "ColossalAI's naive AMP or ZeRO), convert the SyncBatchNorm layers back after it: for m in "
        "model.modules(): if isinstance(m, torch.nn.SyncBatchNorm): m.float() (apex: keep_batchnorm_fp32=True).",
    )


SYNCBN_HALF_PRECISION = Recogniser(
    kind="syncbn_half_precision",
    title="SyncBatchNorm in a model converted to half precision",
    templates=("aten:expected-counts-to-have-type",),
    anchors=("Expected counts to have type",),
    # the message names SyncBatchNorm's counts and both dtypes (the half model's statistics against float
    # counts): the anchor alone is certain
    match=COUNTS_REFUSED,
    describe=_half_stats,
)

RECOGNISERS = (SYNCBN_HALF_PRECISION,)
