"""DeepSpeed ZeRO-3's optimizer handed parameters that ZeRO-3 never partitioned.

ZeRO-3 turns each parameter of the model it wraps into its own kind (``deepspeed/runtime/zero/partition_parameters.py``
``_convert_to_deepspeed_param``, which sets ``ds_id``, ``ds_numel``, ``ds_tensor`` and, from DeepSpeed 0.6.6 (#2011,
2022-06), ``partition_numel``), and its optimizer sizes its flat buffers from the parameters of its groups
(``deepspeed/runtime/zero/stage3.py`` ``_create_fp16_sub_groups`` and ``_create_param_groups_fp16_flat_cpu_memory``:
``p.partition_numel()``). CPython's "'Parameter' object has no attribute 'partition_numel'" there is a plain torch
parameter in the optimizer's groups: an optimizer that holds tensors the wrapped model no longer has. DeepSpeed's
AutoEP did that itself: it replaced the MoE modules before configuring the optimizer, so an optimizer the caller (HF
Trainer, with no optimizer block in the DeepSpeed config) had built kept the discarded experts, fixed by remapping the
groups (deepspeedai/DeepSpeed#8377). A script that builds its optimizer from another model object, or before it
replaces modules, prints the same: likely (versions.py's release-bug recogniser reads the line with `REFUSED`).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = ("'Parameter' object has no attribute 'partition_numel'",)
REFUSED = re.compile(r"'Parameter' object has no attribute '(?P<zero3_unpartitioned>partition_numel)'")
TEMPLATES = ("third_party:deepspeed-zero3-parameter-no-partition-numel",)


def unpartitioned_parameter(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for ZeRO-3's optimizer meeting a parameter ZeRO-3 never partitioned."""
    return (
        "DeepSpeed ZeRO-3's optimizer met a plain torch parameter, one ZeRO-3 never partitioned (it has no "
        "partition_numel): the optimizer's parameter groups hold tensors that are not the parameters of the model "
        "deepspeed.initialize wrapped, as DeepSpeed's AutoEP left them when it replaced the MoE experts after the "
        "optimizer was built (fixed by deepspeedai/DeepSpeed#8377)" + on_ranks(hits),
        "Update deepspeed (pip install -U deepspeed: a release with #8377 remaps the optimizer's groups to the "
        "replaced experts), or let DeepSpeed build the optimizer (an optimizer block in its config) instead of "
        "passing one; an optimizer of your own must be built from the very model given to deepspeed.initialize, "
        "after every module it replaces (LoRA, MoE or quantized layers).",
    )
