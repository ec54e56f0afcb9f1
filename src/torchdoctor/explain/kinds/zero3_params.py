"""DeepSpeed ZeRO-3 meeting parameters it never partitioned: in its optimizer's groups, or read for its own attributes.

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

The other attributes ``_convert_to_deepspeed_param`` gives a parameter (``ds_numel``, ``ds_status``, ``ds_id``,
``ds_tensor``, ``ds_shape``...) are read the same way by ZeRO-3's own code (``partitioned_param_coordinator.py``
``p.ds_status``) and by the code around it, so "'Parameter' object has no attribute 'ds_numel'" is a plain torch
parameter where ZeRO-3 expected one of its own. Two callers are posted with it: transformers' Trainer 4.28-4.31
(``trainer_pt_utils.py`` ``get_model_param_count``, which from #22193 read ``p.ds_numel`` of every parameter under
ZeRO-3; #24942, in 4.32, falls back to ``numel()``) counting a parameter added after the model was built (PEFT's
adapters, huggingface/peft#623, transformers#24792); and a model's own code that assigns a new ``nn.Parameter``
after ``zero.Init`` converted the model (Baichuan2's NormHead, baichuan-inc/Baichuan2#215): ZeRO-3's coordinator
then reads ``ds_status`` of the new one. The message alone does not tell which: likely, the release named where
the traceback goes through ``get_model_param_count``, the parameter made too late named as the other reading.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = (
    "'Parameter' object has no attribute 'partition_numel'",
    "'Parameter' object has no attribute 'ds_",
)
# the attributes partition_parameters.py _convert_to_deepspeed_param sets on a parameter it converts
REFUSED = re.compile(
    r"'Parameter' object has no attribute '(?:(?P<zero3_unpartitioned>partition_numel)|(?P<zero3_unconverted>ds_"
    r"(?:numel|status|id|tensor|shape|summary|persist|active_sub_modules|process_group|external)))'"
)
TEMPLATES = (
    "third_party:deepspeed-zero3-parameter-no-partition-numel",
    "third_party:transformers-zero3-parameter-no-ds-numel",
    "third_party:deepspeed-zero3-parameter-no-ds-status",
)
# transformers/trainer_pt_utils.py get_model_param_count, the frame CPython prints above the AttributeError
# (deepspeed.py's CONTEXT reads it: ``hf_param_count``)
PARAM_COUNT = "in get_model_param_count"


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


def unconverted_parameter(hits: list[Hit], counted: bool) -> tuple[str, str]:
    """(summary, fix) for a ZeRO-3 attribute (``ds_numel``, ``ds_status``...) read off a plain torch parameter;
    ``counted``: the traceback goes through transformers' get_model_param_count."""
    attribute = next(h.facts["zero3_unconverted"] for h in hits if h.facts.get("zero3_unconverted"))
    if counted:
        return (
            f"transformers' Trainer read ZeRO-3's {attribute} off a parameter ZeRO-3 did not convert, while counting "
            "the model's parameters: get_model_param_count of transformers 4.28 to 4.31 assumes every parameter is "
            "ZeRO-3's (fixed in 4.32 by transformers#24942)" + on_ranks(hits),
            "Upgrade transformers (pip install -U 'transformers>=4.32'), whose count falls back to numel() for a "
            "plain parameter. The parameter is one made after the model was built under ZeRO-3 (PEFT's adapters "
            "from get_peft_model, a new head): deepspeed.initialize converts those when the Trainer wraps the "
            "model.",
        )
    return (
        f"DeepSpeed ZeRO-3 code read {attribute} off a plain torch parameter, one ZeRO-3 never converted: the "
        "release installed, or the library calling it, handed ZeRO-3 a parameter made after it converted the model"
        + on_ranks(hits),
        "Under ZeRO-3 every parameter is converted when the model is built inside deepspeed.zero.Init (from_pretrained "
        "with TrainingArguments(deepspeed=...) / HfDeepSpeedConfig created first) or when deepspeed.initialize wraps "
        "it. Code that assigns a new nn.Parameter later (self.weight = nn.Parameter(...) in forward or on the first "
        "eval step, a module added after initialize) leaves a plain one that ZeRO-3 then reads "
        f"{attribute} from: update it in place instead (with deepspeed.zero.GatheredParameters(p, modifier_rank=0): "
        "p.data.copy_(new)), and add every module before deepspeed.initialize. If the traceback is only DeepSpeed's "
        "and the library's code, search DeepSpeed's issues for the message and upgrade it (pip install -U "
        "deepspeed).",
    )
