"""A library built on PyTorch refusing its own settings: two options set together, or a model it does not train.

RecBole's configurator (``recbole/config/configurator.py`` ``_set_default_parameters``) checks a sequential model's
loss against its negative sampling before training: a cross-entropy loss (``loss_type: CE``) scores every item, so
the negatives it would sample are refused. Its releases word the check after the option of their time:
"train_neg_sample_args [{...}] should be None when the loss_type is CE." (1.1+), "neg_sampling [{...}] should be
None when the loss_type is CE." (1.0), "training_neg_sample_num should be 0 when the loss_type is CE" (0.2). The
message names its cause; the reading is certain.

MMTracking (open-mmlab/mmtracking 0.x) does not train its SORT, DeepSORT and Tracktor models as one model:
``forward_train`` of ``mmtrack/models/mot/deep_sort.py`` and ``tracktor.py`` raises NotImplementedError("Please
train `detector` and `reid` models first and inference with Tracktor." up to 0.6, "... models firstly, then
inference with SORT/DeepSORT." or "... with Tracktor." after; the string's backslash continuation keeps the next
line's indent inside it). Its quick_run.md: train the detector (configs/det) and the re-id model (configs/reid) with
tools/train.py, then put their checkpoints in the MOT config and test it. The message names its cause; certain.

Lightning's DeepSpeed strategy takes only the precisions its ``DeepSpeedPrecision`` plugin lists
(``lightning/fabric/plugins/precision/deepspeed.py`` and ``lightning/pytorch/plugins/precision/deepspeed.py``:
"`precision={precision!r})` is not supported in DeepSpeed. `precision` must be one of: {supported_precision}.";
Lightning 2.0 listed '32-true', '16-mixed' and 'bf16-mixed', later releases the true half precisions too). A script
that forces precision='bf16-true' and turns DeepSpeed on for several devices meets it (Lightning-AI/litgpt#116, the
fix to choose bf16-mixed with DeepSpeed). The message names its cause; certain.

Qwen's ``finetune.py`` (QwenLM/Qwen; Qwen-VL's and many forks' copies) refuses LoRA under DeepSpeed ZeRO-3 for a
base model: ``train()`` raises RuntimeError("ZeRO3 is incompatible with LoRA when finetuning on base model.") when
use_lora is set without q_lora, ZeRO-3 is enabled and 'chat' is not in model_name_or_path.lower() (some forks test
'instruct'). For a base model its LoRA also trains the whole embedding and output layers (modules_to_save
["wte", "lm_head"], the chat tokens <|im_start|> and <|im_end|> the base model never learnt), which the script does
not take under ZeRO-3 (QwenLM/Qwen#1104, the member jklj077: ZeRO3 and LoRA cannot be used together when fine-tuning
a base model). The message names its cause; certain.

QLoRA under DeepSpeed ZeRO-3: before the releases that partition 4-bit weights (bitsandbytes 0.43.3, accelerate
1.0.1, transformers after 4.44.2, peft after 0.13.0, PEFT's deepspeed guide), a bitsandbytes 4-bit model built
under zero.Init (ZeRO-3's partitioned construction) leaves its quantized weights on the meta device, and the first
copy of one fails with aten's "Cannot copy out of meta tensor; no data!" (aten/src/ATen/native/Copy.cpp), which
names no cause (2U1/Qwen-VL-Series-Finetune#7, the owner: use ZeRO-2 for QLoRA). Read so only where the log shows
both a 4-bit load (QLoRA named, load_in_4bit=True, bitsandbytes' Params4bit / Linear4bit) and ZeRO-3; the message
alone stays meta_weights_not_loaded's. Likely: the copy could fail on a weight left unloaded for another reason.

PyTorch Lightning puts its DistributedSampler into a training DataLoader by building the loader again from its own
attributes: 0.8's ``trainer/data_loading.py`` ``replace_sampler`` (``type(dataloader)(**dl_args)``, every public
attribute, ``collate_fn`` included), 1.5's ``_update_dataloader``, 1.6 on ``utilities/data.py`` (2.x's
``_reinstantiate_wrapped_cls``). A DataLoader subclass whose ``__init__`` sets one of DataLoader's arguments itself
and passes ``**kwargs`` on (torch_geometric's DataLoader sets ``collate_fn``) gets that argument twice: CPython's
"TypeError: __init__() got multiple values for keyword argument 'collate_fn'" (Lightning-AI/pytorch-lightning#2883,
the maintainer: turn the replacement off, replace_sampler_ddp=False, and add the DistributedSampler yourself), which
Lightning 1.6 on words itself ("The {} implementation has an error where more than one `__init__` argument can be
passed to its parent's `{}=...` `__init__` argument ... automatically passed to your object by PyTorch Lightning").
The bare TypeError is read so only where the log shows the re-creation (its frames, replace_sampler_ddp,
use_distributed_sampler or a DistributedSampler named), likely: a script passing the argument to such a loader
itself prints the same; Lightning's own wording is certain. accelerate's ``prepare_data_loader`` builds its own
DataLoaderShard from the loader's attributes instead of the user's class, so it does not print this."""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the option each release's check names, and what turns the sampling off in it
_SAMPLING_OFF = {
    "train_neg_sample_args": "None",
    "neg_sampling": "None",
    "training_neg_sample_num": "0",
}


def _mmtrack_untrained(hits: list[Hit]) -> tuple[str, str]:
    # up to 0.9 DeepSORT's forward_train printed Tracktor's message too, so "Tracktor" names either
    method = first(hits, "mot_method", "SORT/DeepSORT")
    method = "DeepSORT or Tracktor" if method == "Tracktor" else method
    return (
        f"MMTracking does not train {method} as one model: its detector and its re-id model are trained "
        "separately, and the tracker config only combines them for inference" + on_ranks(hits),
        "Train the two parts with their own configs (tools/train.py or tools/dist_train.sh): the detector with a "
        "config under configs/det (e.g. faster-rcnn_r50_fpn_4e_mot17-half.py) and the re-id model with one under "
        "configs/reid (e.g. resnet50_b32x8_MOT17.py). Then set their checkpoints in the MOT config "
        "(model.detector.init_cfg and model.reid.init_cfg: dict(type='Pretrained', checkpoint=...)) and run "
        "tools/test.py with it; trackers that do train end to end (ByteTrack, QDTrack) take tools/train.py "
        "directly.",
    )


def _deepspeed_precision(hits: list[Hit]) -> tuple[str, str]:
    precision = first(hits, "ds_precision", "")
    supported = first(hits, "ds_supported", "")
    return (
        f"Lightning's DeepSpeed strategy refused precision={precision}"
        + (f": its DeepSpeedPrecision plugin takes only {supported}" if supported else "")
        + on_ranks(hits),
        "Pass a precision the message lists with strategy='deepspeed': precision='bf16-mixed' (or '16-mixed'); "
        "DeepSpeed keeps the fp32 master weights itself, so bf16-mixed is what 'bf16-true' asks of it. A script that "
        "sets 'bf16-true' for one device and turns DeepSpeed on for several must choose the precision by the "
        "strategy; the releases that list the true half precisions take them too (pip install -U lightning).",
    )


def _qwen_zero3_lora(hits: list[Hit]) -> tuple[str, str]:
    return (
        "Qwen's finetune.py refuses LoRA under DeepSpeed ZeRO-3 for a base model: it judges the model a base one when "
        "'chat' is not in --model_name_or_path, and a base model's LoRA also trains the whole embedding and output "
        "layers (modules_to_save wte and lm_head), which it does not take under ZeRO-3" + on_ranks(hits),
        "This script takes ZeRO3 and LoRA together only for a chat model. "
        "Fine-tune the base model's LoRA with ZeRO-2 (finetune/finetune_lora_ds.sh with --deepspeed "
        "finetune/ds_config_zero2.json), or fine-tune it fully (all parameters) with ZeRO-3, or use Q-LoRA "
        "(--q_lora), or start from the chat model. A chat model saved to a folder whose name lacks 'chat' is "
        "taken for a base model by this check: keep 'chat' in the path.",
    )


def _qlora_zero3(hits: list[Hit]) -> tuple[str, str]:
    return (
        "QLoRA under DeepSpeed ZeRO-3: the 4-bit (bitsandbytes) weights built under ZeRO-3's partitioned "
        "construction were left on the meta device, and copying one failed" + on_ranks(hits),
        "Before the releases that shard 4-bit weights, ZeRO-3 does not take a bitsandbytes 4-bit model: run QLoRA "
        "with ZeRO-2 (zero_optimization.stage 2, or the repository's zero2 config), which keeps whole weights on each "
        "GPU. To stay on ZeRO-3, upgrade together to bitsandbytes>=0.43.3, accelerate>=1.0.1, transformers>4.44.2, "
        "peft>0.13.0 (trl>0.11.4), set bnb_4bit_quant_storage to the model's dtype (BitsAndBytesConfig(..., "
        "bnb_4bit_quant_storage=torch.bfloat16) and from_pretrained(..., torch_dtype=torch.bfloat16)), and keep "
        "zero3_init_flag: true.",
    )


def _loader_rebuilt(hits: list[Hit]) -> tuple[str, str]:
    argument = first(hits, "pl_reinit_arg", "") or first(hits, "reinit_arg", "the argument")
    loader = first(hits, "pl_loader_cls", "")
    loader = f"the DataLoader subclass {loader}" if loader else "a DataLoader subclass"
    return (
        f"PyTorch Lightning re-created {loader} to put a DistributedSampler in, passing back every argument it "
        f"read from the loader, {argument} included, and the subclass's __init__ also sets {argument} itself, so "
        "DataLoader got it twice" + on_ranks(hits),
        "Turn the automatic sampler replacement off and add the DistributedSampler yourself: "
        "Trainer(use_distributed_sampler=False) in Lightning 2.x (replace_sampler_ddp=False in 1.x), and build "
        "the loader with sampler=DistributedSampler(dataset, shuffle=True). Or make the subclass's __init__ take "
        f"{argument} once: drop it from "
        "**kwargs before calling super().__init__ (kwargs.pop(...)), or upgrade the library whose loader it is "
        "(torch_geometric's loaders accept being rebuilt in later releases).",
    )


def _recbole_ce(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if any("reinit_arg" in h.facts or "pl_reinit_arg" in h.facts for h in hits):
        return _loader_rebuilt(hits)
    if any(h.facts.get("qlora_meta") for h in hits):
        return _qlora_zero3(hits)
    if any(h.facts.get("qwen_zero3_lora") for h in hits):
        return _qwen_zero3_lora(hits)
    if any("ds_precision" in h.facts for h in hits):
        return _deepspeed_precision(hits)
    if any("mot_method" in h.facts for h in hits):
        return _mmtrack_untrained(hits)
    option = first(hits, "sampling_option", "train_neg_sample_args")
    return (
        f"RecBole refuses negative sampling ({option}) with loss_type CE: a cross-entropy loss scores every item, "
        "so the sequential model takes no sampled negatives" + on_ranks(hits),
        f"To keep loss_type CE turn the sampling off: {option}={_SAMPLING_OFF[option]} on the command line or in "
        f"config_dict ({option}: {_SAMPLING_OFF[option]} in the YAML). Or set loss_type: BPR to train on sampled "
        "negatives instead (pairwise).",
    )


LIBRARY_OPTION_CONFLICT = Recogniser(
    kind="library_option_conflict",
    templates=(
        "third_party:recbole-neg-sample-args-loss-type-ce",
        "third_party:recbole-neg-sampling-loss-type-ce",
        "third_party:recbole-training-neg-sample-num-loss-type-ce",
        "third_party:mmtracking-train-detector-and-reid-first",
        "third_party:mmtracking-train-detector-and-reid-firstly",
        "third_party:lightning-deepspeed-precision-not-supported",
        "third_party:qwen-finetune-zero3-lora-base-model",
        "torch_native:cannot-copy-out-of-meta-tensor",
        "lightning:the-implementation-has-an-error-where",
    ),
    title="a library's settings it refuses: two options together, or a model it does not train",
    anchors=(
        "when the loss_type is CE",
        "Please train `detector` and `reid` models",
        "is not supported in DeepSpeed. `precision` must be one of",
        "is not supported in DeepSpeed. precision must be one of",
        "ZeRO3 is incompatible with LoRA when finetuning on base model",
        "Cannot copy out of meta tensor; no data!",
        "__init__() got multiple values for keyword argument '",
        "implementation has an error where more than one `__init__` argument",
    ),
    match=R(
        r"(?P<sampling_option>train_neg_sample_args|neg_sampling|training_neg_sample_num)\b[^\n]{0,300}"
        r"should be (?:None|0) when the loss_type is CE"
        r"|Please train `detector` and `reid` models (?:first and|firstly, then)\s+inference with "
        r"(?P<mot_method>SORT/DeepSORT|Tracktor)"
        r"|precision=(?P<ds_precision>[^`)\s]{1,24})\)?`? is not supported in DeepSpeed\. `?precision`? must be one "
        r"of:? ?(?P<ds_supported>\([^)\n]{0,200}\))?"
        r"|(?P<qwen_zero3_lora>ZeRO3 is incompatible with LoRA when finetuning on base model)"
        r"|(?P<qlora_meta>Cannot copy out of meta tensor; no data!)"
        # CPython's duplicate keyword, where a DataLoader subclass rebuilt by Lightning gets an argument twice
        r"|__init__\(\) got multiple values for keyword argument '(?P<reinit_arg>\w{1,60})'"
        # Lightning 1.6+'s own wording of it (utilities/data.py, 2.x fabric/utilities/data.py)
        r"|The (?P<pl_loader_cls>\w{1,100}) (?:`DataLoader` )?implementation has an error where more than one "
        r"`__init__` argument\s+can be passed to its parent's `(?P<pl_reinit_arg>\w{1,60})=\.\.\.`"
    ),
    facts=(R(r"(?P<sampling_option>train_neg_sample_args|neg_sampling|training_neg_sample_num)\b"),),
    # aten's meta-tensor copy is QLoRA-under-ZeRO-3's only where the log shows both; then it replaces the
    # plain reading of that message (a weight never loaded), named after it, and is likely: the message says no cause
    requires_beside=(("qlora_meta", ("saw_4bit", "saw_zero3")), ("reinit_arg", ("loader_recreated",))),
    absorbs=("meta_weights_not_loaded",),
    # the bare duplicate keyword: a script passing the argument to such a loader itself prints the same
    confirm=lambda hits, ctx: not any("qlora_meta" in h.facts or "reinit_arg" in h.facts for h in hits),
    also=(
        Alternative(
            "meta_weights_not_loaded",
            "a weight left on the meta device for another reason (a key the checkpoint lacks, a device_map'd "
            "model moved with .to())",
            "Look above the error for the 'newly initialized' / missing keys warning and for a .to() after loading "
            "with device_map; log.meta_weights_not_loaded's reading covers those.",
            when=("qlora_meta",),
        ),
    ),
    describe=_recbole_ce,
)

RECOGNISERS = (LIBRARY_OPTION_CONFLICT,)

# where the log shows Lightning re-creating a DataLoader for its DistributedSampler: its frames, or the sampler and
# the options named anywhere (requires_beside of the bare duplicate keyword)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    (
        "ampler",
        re.compile(
            r"(?P<loader_recreated>\bin (?:replace_sampler|auto_add_sampler|_update_dataloader|"
            r"_reinstantiate_wrapped_cls)\b|replace_sampler_ddp|use_distributed_sampler|DistributedSampler)"
        ),
    ),
)
