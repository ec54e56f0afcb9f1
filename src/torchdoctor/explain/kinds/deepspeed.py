"""DeepSpeed set up wrongly: its config against the script's, ZeRO-3's weights, its backend's order.

Kinds of failure in DeepSpeed's set-up: its config disagreeing with the script's, ZeRO-3's partitioned weights
used outside the engine, its distributed backend used before it was initialised. (Its ops that do not build are
``cuda_build``, kinds/build.py: they are CUDA extensions built just in time.)

The message texts are transformers' (``integrations/deepspeed.py``: ``trainer_config_finalize``), accelerate's
(``utils/dataclasses.py``: the DeepSpeed plugin; ``accelerator.py``) and DeepSpeed's (``op_builder/builder.py``,
``runtime/config.py``, ``comm/comm.py``, ``runtime/zero/partition_parameters.py``), as the catalog
(`torchdoctor.explain.catalog`) holds them; the refusals read from DeepSpeed's other checks and from accelerate's,
transformers' and Lightning's DeepSpeed paths are kept as data in `framework_refusals`.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import deepspeed_engine_refusals, framework_refusals, zero3_params
from torchdoctor.explain.kinds.refusal_table import one_line, refusal_in, refusal_pattern
from torchdoctor.explain.quote import quote
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


# DeepSpeed's own refusals of a config that does not fit the script (deepspeed/runtime/engine.py, config.py),
# each with what to change: (anchor, fix)
CONFIG_REFUSALS: tuple[tuple[str, str], ...] = (
    (
        "You are using an untested ZeRO Optimizer",
        'ZeRO is tested with DeepSpeed\'s own optimizers: name one in the config ("optimizer": {"type": "AdamW", '
        '"params": {...}}) instead of passing a client optimizer, or add "zero_allow_untested_optimizer": true '
        "to the config to use yours.",
    ),
    (
        "Amp and ZeRO are not currently compatible",
        'Remove the "amp" section of the DeepSpeed config and use "fp16": {"enabled": true} (or "bf16"), which '
        "ZeRO supports.",
    ),
    (
        "requires an optimizer",
        "ZeRO partitions the optimizer's state, so it needs one: pass optimizer= (or model_parameters=) to "
        'deepspeed.initialize, or define "optimizer" in the config; for inference only, use stage 0 or '
        "deepspeed.init_inference.",
    ),
    (
        "You are using ZeRO-Offload with a client provided optimizer",
        "ZeRO-Offload runs the optimizer step on the CPU and by default accepts only DeepSpeed's CPU "
        "optimizer: use deepspeed.ops.adam.DeepSpeedCPUAdam, or name the optimizer in the DeepSpeed config "
        '("optimizer": {"type": "AdamW", ...}; with the HF Trainer drop --optim or use the config\'s), or allow '
        'yours with "zero_force_ds_cpu_optimizer": false at the top level of the config.',
    ),
    (
        "You cannot specify an optimizer in the config file and in the code at the same time",
        'With accelerate + DeepSpeed the optimizer comes from one place: remove "optimizer" (and '
        '"scheduler") from the DeepSpeed config to use the one the script builds, or build '
        "accelerate.utils.DummyOptim(params) / DummyScheduler(optimizer) in the script to use the config's.",
    ),
    (
        "You cannot specify a scheduler in the config file and in the code at the same time",
        'Remove "scheduler" from the DeepSpeed config to use the script\'s, or pass '
        "accelerate.utils.DummyScheduler(optimizer) in the script to use the config's.",
    ),
    (
        "You cannot create a `DummyOptim` without specifying an optimizer in the config file",
        'DummyOptim stands for the optimizer of the DeepSpeed config: add "optimizer": {"type": "AdamW", '
        '"params": {...}} to the config, or build a real torch optimizer in the script.',
    ),
    (
        "Either specify a scheduler in the config file or pass in the `lr_scheduler_callable`",
        'Add "scheduler" to the DeepSpeed config, or give DummyScheduler an lr_scheduler_callable (or pass a '
        "real scheduler built on the script's optimizer).",
    ),
    (
        "Cannot get 16bit model weights because `stage3_gather_16bit_weights_on_model_save`",
        'Under ZeRO-3 the weights are split over the ranks: set "stage3_gather_16bit_weights_on_model_save": '
        'true in "zero_optimization" (accelerate: zero3_save_16bit_model: true) so saving gathers them, or '
        "save the sharded checkpoint and convert it with zero_to_fp32.py.",
    ),
    (
        "together with --deepspeed is not possible",
        "The HF Trainer runs one of them: drop --fsdp (and fsdp_config) to use the DeepSpeed config, or drop "
        "--deepspeed to use FSDP (an accelerate config that enables both is the same conflict).",
    ),
    (
        "isn't supported yet with DeepSpeed Zero-3",
        "auto_find_batch_size retries with smaller batches, which ZeRO-3's partitioned engine cannot: set "
        "per_device_train_batch_size yourself (drop --auto_find_batch_size), or use ZeRO stage 2 / 1 or FSDP.",
    ),
    (
        "therefore it's not possible to automatically fill out the following `auto` entries in the DeepSpeed",
        "transformers fills the ZeRO-3 bucket sizes ('auto') from the model's hidden_size, which this model's "
        "config lacks: write numbers for those entries (reduce_bucket_size, stage3_prefetch_bucket_size, "
        'stage3_param_persistence_threshold) in the DeepSpeed config instead of "auto".',
    ),
    (
        "ZeRO inference only makes sense with ZeRO Stage 3",
        'Evaluation or prediction without training needs "zero_optimization": {"stage": 3} in the DeepSpeed '
        "config (stage 1 and 2 partition only optimizer state), or run it without --deepspeed.",
    ),
    (
        "that was not initialized for DeepSpeed, but also passed in a `deepspeed` configuration",
        "An Accelerator/PartialState was created before the TrainingArguments without DeepSpeed, and the "
        "arguments then ask for it: create the TrainingArguments (with deepspeed=...) first, or start with "
        "`accelerate launch` with a DeepSpeed config, or set use_configured_state=False.",
    ),
    (
        "Train batch size must be divisible by micro-batch data parallelism",
        "DeepSpeed's train_batch_size must be train_micro_batch_size_per_gpu x gradient_accumulation_steps x "
        "the data-parallel world size: a config written for another number of GPUs breaks it. Set the batch "
        'values to "auto" (HF Trainer / accelerate fill them in), or leave train_batch_size out so DeepSpeed '
        "computes it, or recompute it for this world size.",
    ),
    (
        "optimizer requires dynamic loss scaling",
        "This DeepSpeed optimizer (1-bit Adam/LAMB, 0/1 Adam, LAMB) works with dynamic loss scaling only: set "
        '"fp16": {"enabled": true, "loss_scale": 0} (0 = dynamic) in the DeepSpeed config, or use bf16.',
    ),
    (
        "MoE is not supported with ZeRO Stage 3",
        'DeepSpeed\'s native MoE layers run under ZeRO stage 1 or 2: set "zero_optimization": {"stage": 2} (or 1), '
        "or use AutoEP where this release offers it.",
    ),
    (
        "MoE not supported with Stage 3",
        'DeepSpeed\'s MoE layers run under ZeRO stage 1 or 2: set "zero_optimization": {"stage": 2} (or 1).',
    ),
    (
        '"offload_param" must be defined in DeepSpeed Config',
        "zero.Init was asked to place parameters on the CPU or NVMe (remote_device) but the config has no "
        '"offload_param" section: add "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}} (or '
        '"nvme" with "nvme_path"), or do not pass remote_device.',
    ),
    (
        '"nvme_path" in DeepSpeed Config cannot be None',
        'Parameters offloaded to NVMe need a folder on a fast local disk: "offload_param": {"device": "nvme", '
        '"nvme_path": "/local_nvme"} in the DeepSpeed config, or offload to "cpu" instead.',
    ),
    (
        "must provide optimizer during init in order to use",
        "engine.backward() / step() / scale() need the engine to own an optimizer: pass optimizer= (or "
        'model_parameters=model.parameters()) to deepspeed.initialize, or define "optimizer" in the config; '
        "for inference alone use deepspeed.init_inference or call the model without backward.",
    ),
    (
        "is not a supported DeepSpeed Optimizer",
        'The config\'s "optimizer": {"type": ...} names one DeepSpeed does not build (its types: Adam, AdamW, '
        "Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Lion, Muon, ...; check the spelling and this release's "
        "list), or build the optimizer in the script and pass it as optimizer= instead.",
    ),
    (
        "DeepSpeed does not recognize LR scheduler",
        'The config\'s "scheduler": {"type": ...} names one DeepSpeed does not have (LRRangeTest, OneCycle, '
        "WarmupLR, WarmupDecayLR, WarmupCosineLR): fix the name, or build the scheduler in the script and pass it "
        "as lr_scheduler=.",
    ),
    (
        "Expected a string path to an existing deepspeed config",
        "The config given to deepspeed.initialize (config=, --deepspeed_config, TrainingArguments(deepspeed=)) "
        "is neither a file that exists from the working directory of every rank nor a dict: check the path "
        "(relative paths are taken from where the job starts, on every node) or pass the dict itself.",
    ),
    (
        "must divide distributed world size",
        "Pipeline parallelism splits the world into num_stages pipelines of equal size: choose num_stages (the "
        "PipelineModule's, or --pipeline-model-parallel-size) that divides the number of processes, or start "
        "a number of processes that is a multiple of it.",
    ),
    (
        "BF16Optimizer: requires bfloat16 to be enabled",
        'The bf16 optimizer wraps a model in bfloat16: enable it in the config ("bf16": {"enabled": true}) or '
        "drop what selects the bf16 optimizer (a ZeRO stage 0 bf16 setting from another config).",
    ),
    (
        "Partial offloading only supported for ZeRO Stage 3",
        'offload_optimizer\'s "ratio" (partial offload) works under ZeRO-3 only: set "zero_optimization": '
        '{"stage": 3} or remove "ratio" (offload all of it, or none).',
    ),
    (
        "'max_grad_norm' is not supported as an optimizer parameter",
        'Move max_grad_norm out of the optimizer\'s params: DeepSpeed clips with "gradient_clipping": <norm> at '
        "the top level of its config.",
    ),
    *framework_refusals.REFUSALS,
    *deepspeed_engine_refusals.REFUSALS,
)


def _config_mismatch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("batch_zero"):
        return (
            f"DeepSpeed's batch sizes do not fit this world size: {facts['batch_zero']} (it must be at least 1)"
            + on_ranks(hits),
            "DeepSpeed derives the batch value it was not given by integer division (runtime/config.py "
            "_set_batch_related_parameters): micro batch = train_batch_size // (world size x "
            "gradient_accumulation_steps), accumulation steps = train_batch_size // (world size x micro batch), "
            "which is 0 when the global batch size (train_batch_size) is smaller than the divisor (a config written "
            "for fewer GPUs, or a script that computes it for other ranks than the run has). Raise train_batch_size, "
            'or give train_micro_batch_size_per_gpu and gradient_accumulation_steps instead of it, or write "auto" '
            "(HF Trainer / accelerate fill it in).",
        )
    refusal = facts.get("refusal")
    if refusal:
        fix = next(f for anchor, f in CONFIG_REFUSALS if anchor in refusal)
        return f"DeepSpeed refuses its config: {quote(refusal.strip())}" + on_ranks(hits), fix
    if facts.get("train_batch"):
        summary = (
            f"DeepSpeed's batch sizes do not add up: train_batch_size {facts['train_batch']} != "
            f"micro batch {facts['micro_batch']} x gradient accumulation {facts['grad_acc']} x world size "
            f"{facts['world_size']}" + on_ranks(hits)
        )
        fix = (
            "DeepSpeed requires train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps "
            "x the number of GPUs (world size). A config written for another number of GPUs breaks this: set the "
            'three values in the DeepSpeed JSON to "auto" (with the HF Trainer / accelerate, which fill them '
            "in), or leave train_batch_size out so DeepSpeed computes it, or recompute it for this world size."
        )
        sizes = (facts.get("micro_batch", ""), facts.get("grad_acc", ""), facts.get("world_size", ""))
        if all(str(n).strip().isdigit() for n in sizes):
            micro, acc, world = (int(str(n).strip()) for n in sizes)
            fix += (
                f" With these values: train_batch_size {micro * acc * world} ({micro} x {acc} x {world}), or keep "
                f"{facts['train_batch']} and change the micro batch or the accumulation steps to match."
            )
        return summary, fix
    if facts.get("mp_arg"):
        summary = (
            f"accelerate's mixed precision ({facts['mp_arg']}) disagrees with the DeepSpeed config, which enables "
            f"{facts['mp_config']}" + on_ranks(hits)
        )
        fix = (
            "With DeepSpeed the config file decides the precision, and accelerate refuses a different "
            '--mixed_precision. Make them agree: enable the same one in the DeepSpeed JSON ("bf16": '
            '{"enabled": true} or "fp16": {...}, or "enabled": "auto" to follow the script), or pass the '
            f"matching --mixed_precision {facts['mp_config']} (HF Trainer: --bf16 / --fp16). The value accelerate "
            "uses comes from --mixed_precision, its config file (accelerate config) or the ACCELERATE_MIXED_PRECISION "
            "variable that the Trainer's --bf16 / --fp16 set: check all three."
        )
        return summary, fix
    if facts.get("no_batch_size"):
        summary = (
            "accelerate cannot fill DeepSpeed's train_micro_batch_size_per_gpu: no dataloader with a batch_size "
            "was passed to prepare()" + on_ranks(hits)
        )
        fix = (
            "With DeepSpeed, accelerate reads the micro batch size from a dataloader given to "
            "accelerator.prepare(). Pass the training (or evaluation) DataLoader to the same prepare() call as "
            'the model, or write an integer train_micro_batch_size_per_gpu (not "auto") in the DeepSpeed '
            "config (accelerate: AcceleratorState().deepspeed_plugin.deepspeed_config)."
        )
        return summary, fix
    if facts.get("both_precisions"):
        summary = "the DeepSpeed config enables both bf16 and fp16" + on_ranks(hits)
        fix = (
            'DeepSpeed runs in one of them: keep "bf16": {"enabled": true} (Ampere or newer) or "fp16", '
            'and set the other to false (or both to "auto" with the HF Trainer / accelerate, which enable the '
            "one --bf16 / --fp16 / --mixed_precision asks for)."
        )
        return summary, fix
    if facts.get("ignored"):
        ignored = facts["ignored"].strip()
        summary = (
            "accelerate's config sets DeepSpeed options that the DeepSpeed config file also owns: "
            f"{ignored[:200]}" + on_ranks(hits)
        )
        fix = (
            "With deepspeed_config_file, the DeepSpeed JSON alone decides zero_stage, gradient accumulation, "
            "clipping, offload and mixed precision. Remove those keys from the accelerate config (often a "
            "leftover default: ~/.cache/huggingface/accelerate/default_config.yaml), or write a new one with "
            "`accelerate config` (it asks only what a deepspeed_config_file leaves open), and keep the values "
            "in the DeepSpeed JSON."
        )
        return summary, fix
    pairs = [
        f"ds {h.facts['ds_key']}={h.facts['ds_value']} vs {h.facts['hf_key']}={h.facts['hf_value']}"
        for h in hits
        if "ds_key" in h.facts
    ]
    key = facts.get("ds_key", "")
    example = (
        '"bf16": {"enabled": "auto"}'
        if key.startswith("bf16")
        else '"fp16": {"enabled": "auto"}'
        if key.startswith("fp16")
        else f'"{key or "train_micro_batch_size_per_gpu"}": "auto"'
    )
    if _from_accelerate(hits):
        # accelerate/utils/dataclasses.py DeepSpeedPlugin.deepspeed_config_process: accelerate's own calls pass
        # must_match=False and never raise it; code that calls it with must_match=True does (lm-evaluation-harness
        # and its forks hand it their batch size: train_micro_batch_size_per_gpu, and x processes train_batch_size)
        summary = (
            "the DeepSpeed config disagrees with the values the code handed accelerate's DeepSpeed plugin"
            + (f": {'; '.join(pairs[:3])}" if pairs else "")
        )
        fix = (
            "accelerate compared the DeepSpeed config (the deepspeed_config_file of the accelerate config, or its "
            "deepspeed_config section) with the values passed to DeepSpeedPlugin.deepspeed_config_process "
            "(must_match=True: accelerate itself never asks for that, the calling code does, such as an evaluation "
            'harness handing over its batch size) and refuses one set to something else. Set the value to "auto" '
            f"in the DeepSpeed JSON ({example}) so the plugin fills it in, or make the caller's value agree (its "
            "batch size option; train_batch_size is that times the number of processes accelerate launch starts)."
        )
    else:
        summary = "the DeepSpeed config disagrees with the script's TrainingArguments" + (
            f": {'; '.join(pairs[:3])}" if pairs else ""
        )
        fix = (
            'transformers fills every DeepSpeed value set to "auto" from TrainingArguments, and refuses one set '
            f'to something else. Set the value to "auto" in the DeepSpeed JSON ({example}), or pass the matching '
            "argument so both agree (--bf16 / --fp16, --per_device_train_batch_size, "
            "--gradient_accumulation_steps, --learning_rate)."
        )
    alike = [h.facts["ds_key"] for h in hits if "ds_key" in h.facts and _same_value(h.facts)]
    if alike:
        # integrations/deepspeed.py fill_match compares with != and prints both with str(): a JSON string ("8")
        # beside the argument's int 8 prints as the same value
        summary += f" ({', '.join(alike[:3])}: the same value printed, so the JSON holds it as a string)"
        fix = (
            f'The DeepSpeed JSON writes {", ".join(alike[:3])} in quotes ("8", "1e-5", "true"): a string is '
            "never equal to the argument's number or boolean, though both print alike. Write it as a number or "
            f'true/false without quotes, or as "auto". {fix}'
        )
    return summary + on_ranks(hits), fix


def _from_accelerate(hits: list[Hit]) -> bool:
    """Whether the mismatch list is accelerate's ("mismatch kwargs values", "vs arg <key>") rather than
    transformers' ("mismatch TrainingArguments values", "vs hf <name>")."""
    facts = merged(hits)
    if "mismatch_against" in facts:
        return facts["mismatch_against"] == "kwargs"
    return any(h.facts.get("hf_key", "").startswith("arg ") for h in hits)


def _same_value(facts: dict) -> bool:
    """Whether a mismatch line's two values are one value as printed (``8`` and ``8``, ``1e-5`` and ``1e-05``)."""
    ds, hf = facts["ds_value"].strip(), facts["hf_value"].strip()
    if ds == hf:
        return True
    try:
        return float(ds) == float(hf)
    except ValueError:
        return False


# facts of a refusal that more than one cause prints (the batch check at world size 1; engine.py's "Direct calls to
# tensor.backward()", which names a torch without the APIs it needs as well as ZeRO stage 0; Lightning's DeepSpeed
# strategy on a CPU accelerator, chosen or the one accelerator="auto" falls back to when torch sees no GPU)
# engine.py backward()/scale() (DeepSpeed 0.18.3+, #7665): "loss must be a scalar tensor" is utils.py
# maybe_loss_for_backward failing, which also asks for a grad_fn: a loss built under torch.no_grad() prints it too
# engine.py (AutoTP, 0.16.5+): "Data inconsistency within the TP group" is the ranks of a tensor-parallel group given
# different batches, by the script's sampler or by the trainer library's (accelerate before 1.6.0 sharded by the
# global rank under AutoTP: axolotl-ai-cloud/axolotl#2491)
# deepspeed/__init__.py initialize (0.9.0+, #3186): "we were given deepspeed configs in the deepspeed arguments and
# deepspeed.initialize() function call" refuses args.deepspeed_config beside config= / config_params=, which releases
# before 0.9.0 took: code written for them (gpt-neox's megatron/training.py passes args=neox_args and
# config_params=neox_args.deepspeed_config) prints it as well as a script of the user's
# runtime/torch_autocast.py: "Cannot enable both torch autocast and fp16 / bfloat16" is a refusal of the releases
# 0.17.x-0.18.2 only; 0.18.3 (#7700) accepts torch_autocast beside fp16 / bf16 (zero quantized weights stays refused)
_TWO_CAUSES = (
    "autocast_with_precision",
    "world_size_one",
    "direct_backward",
    "not_cuda_accelerator",
    "loss_not_scalar",
    "tp_data_inconsistent",
    "config_given_twice",
)


def _batch_for_every_process(facts: dict) -> bool:
    """Whether train_batch_size is the other three times a whole factor above 1: the batch a Trainer or accelerate
    fills for "auto" from every process (transformers' trainer_config_process: args.world_size x micro x
    accumulation; accelerate before 1.12 num_processes x ...), which DeepSpeed 0.17+ checks against the
    data-parallel ranks only: runtime/config.py divides the world size by the config's sequence_parallel_size
    (a float, printed "4.0"; an integer world is the processes' own count or Megatron's mpu, the user's numbers)."""
    if "train_batch" not in facts or "divided_world" not in facts:
        return False
    per_world = int(facts["micro_batch"]) * int(facts["grad_acc"]) * int(facts["world_size"])
    return (
        per_world > 0 and int(facts["train_batch"]) % per_world == 0 and int(facts["train_batch"]) > per_world
    )


def _one_cause(hits: list[Hit], ctx: Context) -> bool:
    """Certain unless every hit is a refusal that two causes print (only lowers the anchors' certainty)."""
    return not all(
        any(key in h.facts for key in _TWO_CAUSES) or _batch_for_every_process(h.facts) for h in hits
    )


_one_cause.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


DEEPSPEED_CONFIG_MISMATCH = Recogniser(
    kind="deepspeed_config_mismatch",
    title="DeepSpeed config disagrees with the script",
    anchors=(
        "DeepSpeed config values that mismatch",
        "the following accelerate config variables will be ignored",
        "train_batch_size is not equal to micro_batch_per_gpu",
        "is set in the DeepSpeed config file",
        "bfloat16 and fp16 modes cannot be simultaneously enabled",
        "bfloat16 and fp16 cannot be enabled at once",
        "requires you to pass at least one of training or evaluation dataloaders",
        "has `None` as batch size. Please set an integer value in `train_micro_batch_size_per_gpu`",
        # config.py _batch_assertion: a batch value that came out as 0 (only in the form below: see reject)
        "has to be greater than 0",
        *(anchor for anchor, _ in CONFIG_REFUSALS),
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "Check batch related parameters",
        "has `None` as batch size",
        "train_batch() requires gradients enabled",
        "Invalid communication_data_type",
        "custom_load_fn not supported",
        "is not a valid attn_implementation",
    ),
    templates=(
        "transformers:please-correct-the-following-deepspeed-config",
        "accelerate:please-correct-the-following-deepspeed-config",
        "accelerate:when-using-deepspeed-config-file-the",
        "deepspeed:check-batch-related-parameters-train-batch",  # deepspeed/runtime/config.py _batch_assertion
        # accelerate/utils/dataclasses.py DeepSpeedPlugin.set_mixed_precision
        "accelerate:mixed-precision-arg-cannot-be-set",
        "deepspeed:bfloat16-and-fp16-modes-cannot-be",  # deepspeed/runtime/config.py
        "deepspeed:bfloat16-and-fp16-cannot-be-enabled",  # zero/partition_parameters.py: zero.Init's own check
        "deepspeed:train-batch-size-must-be-divisible",  # runtime/engine.py: batch against the DP world size
        # runtime/engine.py, zero/partition_parameters.py: the config against the optimizer, MoE and offload
        "deepspeed:deepspeed-optimizer-requires-dynamic-loss-scaling",
        "deepspeed:native-deepspeed-moe-is-not-supported",
        "deepspeed:moe-not-supported-with-stage",
        "deepspeed:offload-param-must-be-defined-in",
        "deepspeed:nvme-path-in-deepspeed-config-cannot",
        # accelerate/accelerator.py _prepare_deepspeed: an "auto" micro batch size with no dataloader to read
        "accelerate:when-using-deepspeed-accelerate-prepare-requires",
        # deepspeed/runtime/engine.py: the config's optimizer, precision and clipping against ZeRO
        "deepspeed:you-are-using-an-untested-zero",
        "deepspeed:amp-and-zero-are-not-currently",
        "deepspeed:zero-stage-requires-an-optimizer",
        "deepspeed:max-grad-norm-is-not-supported",
        "deepspeed:you-are-using-zero-offload-with",  # engine.py: zero_force_ds_cpu_optimizer
        # accelerate/accelerator.py _prepare_deepspeed: optimizer/scheduler in the config and in the code,
        # a DataLoader without a batch size for an "auto" micro batch; get_state_dict under ZeRO-3
        "accelerate:you-cannot-specify-an-optimizer-in",
        "accelerate:you-cannot-specify-scheduler-in-the",
        "accelerate:you-cannot-create-dummyoptim-without-specifying",
        "accelerate:either-specify-scheduler-in-the-config",
        "accelerate:at-least-one-of-the-dataloaders",
        "accelerate:cannot-get-bit-model-weights-because",
        # transformers/trainer.py, training_args.py, integrations/deepspeed.py: the Trainer's own refusals
        "transformers:using-fsdp-xxx-together-with-deepspeed",
        "transformers:auto-find-batch-size-isn-supported",
        "transformers:the-model-config-file-has-neither",
        "transformers:zero-inference-only-makes-sense-with",
        "transformers:tried-to-use-an-already-configured",
        # deepspeed/runtime/engine.py, config.py: the engine without an optimizer, names it does not know, a
        # config path that is not there
        "deepspeed:must-provide-optimizer-during-init-in",
        "deepspeed:must-provide-optimizer-during-init-in-2",
        "deepspeed:must-provide-optimizer-during-init-in-3",
        "deepspeed:is-not-supported-deepspeed-optimizer",
        "deepspeed:deepspeed-does-not-recognize-lr-scheduler",
        "deepspeed:expected-string-path-to-an-existing",
        "deepspeed:num-stages-must-divide-distributed-world",  # runtime/pipe/module.py
        "deepspeed:bf16optimizer-requires-bfloat16-to-be-enabled",  # runtime/bf16_optimizer.py
        "deepspeed:partial-offloading-only-supported-for-zero",  # runtime/zero/config.py
        # runtime/config.py _batch_assertion: train batch, micro batch or accumulation steps that came out as 0
        "deepspeed:train-batch-size-has-to-be",
        "deepspeed:micro-batch-size-per-gpu-has",
        "deepspeed:gradient-accumulation-steps-has-to-be",
        *framework_refusals.TEMPLATES,
        *deepspeed_engine_refusals.TEMPLATES,
    ),
    span=6,
    # "requires an optimizer" is DeepSpeed's only after "zero stage N"; "has to be greater than 0" only after one of
    # _batch_assertion's three names and the value; "than buffer size" only as the NVMe swapper's "More elements N
    # than buffer size M"; "No modules of type / named" only with z3_leaf_module.py's "found in model" after it
    # (the window's first line is the anchored one)
    reject=R(
        r"(?<!zero stage \d )requires an optimizer|^(?!.*(?:Train batch size|Micro batch size per gpu|Gradient "
        r"accumulation steps): ?-?\d+ has to be greater than 0).*has to be greater than 0|"
        r"^(?!.*More elements \d+ than buffer size).*than buffer size|"
        r"^(?!.*No modules (?:of type|named) [^\n]{1,400} found in model ).*No modules (?:of type|named) "
    ),
    facts=(
        R(r"(?P<train_batch>\d+) != (?P<micro_batch>\d+) \* (?P<grad_acc>\d+) \* (?P<world_size>\d+)"),
        R(r"\d+ != \d+ \* \d+ \* (?P<world_size_one>1)(?!\d)"),
        R(r"\d+ != \d+ \* \d+ \* (?P<divided_world>\d+\.0)\b"),
        R(r"(?P<direct_backward>Direct calls to tensor\.backward\(\) are not supported)"),
        R(r"(?P<loss_not_scalar>loss must be a scalar tensor|only accepts a scalar tensor)"),
        R(r"(?P<tp_data_inconsistent>Data inconsistency within the TP group)"),
        R(r"Cannot enable both torch autocast and (?P<autocast_with_precision>fp16|bfloat16)\b"),
        R(
            r"(?P<config_given_twice>we were given deepspeed configs in the deepspeed arguments and deepspeed\.initialize)"
        ),
        R(r"only supported on CUDA GPUs but `(?P<not_cuda_accelerator>\w{1,40})` is used"),
        R(
            r"(?P<batch_zero>(?:Train batch size|Micro batch size per gpu|Gradient accumulation steps): ?-?\d+) has to "
            r"be greater than 0"
        ),
        # the hf side's name may carry "+", "(amp)" or " (calculated)"; a list value holds spaces ("[0.8, 0.89]")
        R(
            r"- ds (?P<ds_key>[\w.]+)=(?P<ds_value>[^\n]{1,60}?) vs (?P<hf_key>(?:hf|arg) [^=\n]{1,80})="
            r"(?P<hf_value>[^\n]{1,60})"
        ),
        R(r"DeepSpeed config values that mismatch (?P<mismatch_against>kwargs|TrainingArguments)\b"),
        R(r"will be ignored: (?P<ignored>\[[^\]\n]{0,400}\]?)"),
        R(
            r"(?P<refusal>[^\n:]{0,150}?(?:"
            + "|".join(
                re.escape(anchor) for anchor, _ in CONFIG_REFUSALS if anchor != "requires an optimizer"
            )
            + r"|zero stage \d requires an optimizer)[^\n]{0,200})"
        ),
        R(
            r"(?P<no_batch_size>requires you to pass at least one of training or evaluation dataloaders|has `None` "
            r"as batch size)"
        ),
        R(
            r"(?P<both_precisions>bfloat16 and fp16 modes cannot be simultaneously enabled|bfloat16 and fp16 cannot "
            r"be enabled at once)"
        ),
        R(
            r"mixed_precision`? arg cannot be set to `?(?P<mp_arg>\w{1,10})`? when `?(?P<mp_config>\w{1,10})`? is set in "
            r"the DeepSpeed config"
        ),
    ),
    # runtime/config.py's batch check multiplies by the world size the process sees: 1 is a config written for more
    # GPUs run on one, or a script started as plain python processes, each a world of its own (no deepspeed
    # launcher, torchrun or init_process_group before deepspeed.initialize) — only likely then, both named; so is
    # engine.py's refusal of loss.backward(), which names ZeRO stage 0 and a torch without the APIs it needs
    confirm=_one_cause,
    also=(
        Alternative(
            "not_launched_distributed",
            "processes not started by a distributed launcher (each sees a world size of 1)",
            "If the job was meant to use several GPUs, start it with the launcher: deepspeed --num_gpus <N> "
            "train.py (or torchrun --nproc_per_node <N>, accelerate launch), so that every process sees the job's "
            "world size; the config's batch sizes then add up.",
            when=("world_size_one",),
        ),
        Alternative(
            "library_version_bug",
            'a batch the HF Trainer or accelerate filled in for "auto" from every process, while DeepSpeed '
            "counts the data-parallel ranks only (sequence, tensor or pipeline parallel)",
            'If the DeepSpeed JSON says "auto" and the job splits sequences, tensors or layers across ranks, '
            "the number of processes it multiplied by is not DeepSpeed's data-parallel world: write "
            "train_batch_size = micro batch x accumulation x (processes / sequence_parallel_size) yourself, or "
            "upgrade accelerate to 1.12+ (it divides by the sequence-parallel size).",
            when=("divided_world",),
        ),
        Alternative(
            "dependency_version",
            "a PyTorch without the internal APIs DeepSpeed needs to take loss.backward() (the message names both)",
            "If the config is not ZeRO stage 0, the installed torch lacks what this DeepSpeed needs for loss.backward(): "
            "upgrade torch to a release this DeepSpeed supports (pip install -U torch), or keep engine.backward(loss).",
            when=("direct_backward",),
        ),
        Alternative(
            "no_grad_in_loss",
            "a loss without a graph (computed under torch.no_grad() or from detached outputs)",
            "If the loss is a scalar, it has no grad_fn: compute it from the engine's forward outside torch.no_grad() "
            "and inference_mode, with the model in train mode and some parameters requiring grad.",
            when=("loss_not_scalar",),
        ),
        Alternative(
            "cuda_unavailable",
            'no GPU that torch can see (accelerator="auto" then picks the CPU)',
            "If the Trainer was meant to find the GPUs itself, torch sees none: check nvidia-smi, "
            "CUDA_VISIBLE_DEVICES and python -c 'import torch; print(torch.cuda.is_available(), torch.version.cuda)' "
            "(a CPU-only torch build prints None).",
            when=("not_cuda_accelerator",),
        ),
        Alternative(
            "library_version_bug",
            "a trainer library that shards the data by the global rank under AutoTP (accelerate before 1.6.0)",
            "If the DataLoader is the HF Trainer's, trl's or accelerate's, upgrade them (pip install -U "
            "'accelerate>=1.6.0' transformers trl): from 1.6.0 accelerate gives every rank of a tensor-parallel "
            "group the same batch.",
            when=("tp_data_inconsistent",),
        ),
        Alternative(
            "dependency_version",
            "code written for DeepSpeed before 0.9.0, which took a config in args and in config_params at once "
            "(gpt-neox's training.py)",
            "If the call is a repository's (deepspeed.initialize(args=..., config_params=...) in its training code), "
            "install the DeepSpeed it pins (its requirements: gpt-neox's DeeperSpeed, or pip install 'deepspeed<0.9'), "
            "or remove config_params= from that call so the config comes from args alone.",
            when=("config_given_twice",),
        ),
        Alternative(
            "dependency_version",
            "a DeepSpeed before 0.18.3, which refused torch_autocast beside fp16 / bf16 (0.18.3 accepts both)",
            "To keep torch.autocast and the fp16 / bf16 section together, upgrade DeepSpeed (pip install -U "
            "'deepspeed>=0.18.3'; deepspeedai/DeepSpeed#7700 lifted the refusal).",
            when=("autocast_with_precision",),
        ),
    ),
    describe=_config_mismatch,
)


# deepspeed/runtime/zero/partition_parameters.py: ZeRO-3's own refusals of partitioned parameters handled outside
# the engine (GatheredParameters used wrongly; a module class defined inside zero.Init), each naming its cause
ZERO3_REFUSALS: tuple[tuple[str, str], ...] = (
    (
        "Detected in-place modification of ZeRO-3 parameters inside GatheredParameters",
        "Parameters changed inside deepspeed.zero.GatheredParameters(params) are thrown away on exit unless one rank "
        "is named to broadcast them: use GatheredParameters(params, modifier_rank=0) and change them on that rank "
        "(if torch.distributed.get_rank() == 0: ...).",
    ),
    (
        "but broadcast requires it to be on",
        "With GatheredParameters(params, modifier_rank=...) keep the parameters on the accelerator inside the block: "
        "copy new values into them in place (p.data.copy_(new.to(p.device))) instead of moving or replacing them.",
    ),
    (
        "Nested GatheredParameters contexts cannot overlap parameters",
        "Gather each parameter once: an inner deepspeed.zero.GatheredParameters(...) must not name parameters the "
        "outer one already gathered (gather them all in the outer block).",
    ),
    (
        "was not properly set up for sharding by zero.Init()",
        "Define (import) every nn.Module subclass before entering deepspeed.zero.Init(), and build the model inside "
        "it; a class defined inside the `with` block (or a model built by a factory that defines one) is not "
        "partitioned.",
    ),
)


def _zero3_weights(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    zero = "saw_zero3" in ctx.facts
    facts = merged(hits)
    refusal = refusal_in(facts, ZERO3_REFUSALS, message="zero3_refusal")
    if refusal:
        _, said, fix = refusal
        summary = f"ZeRO-3 refused how its partitioned parameters were used: {one_line(said)}"
        return summary + on_ranks(hits), fix
    if facts.get("empty_saved") and not facts.get("empty_param"):
        return (
            f"the checkpoint's {facts['empty_saved']} is an empty tensor (shape [0]): it was saved from ZeRO-3 "
            "(or FSDP) partitions, each rank's placeholder, not from the gathered weights" + on_ranks(hits),
            "The file was written from model.state_dict() while the parameters were partitioned (DeepSpeed ZeRO-3, "
            "or FSDP without a full state dict), so it holds [0]-shaped placeholders; no model loads it. Save it "
            "again from the gathered weights: with ZeRO-3 set stage3_gather_16bit_weights_on_model_save: true "
            "and save through the engine / Trainer / accelerator.get_state_dict(model) (a PEFT adapter: "
            "model.save_pretrained(dir, state_dict=accelerator.get_state_dict(model))), or rebuild the weights "
            "from the DeepSpeed checkpoint with its zero_to_fp32.py; under FSDP save with "
            "StateDictType.FULL_STATE_DICT (accelerate: fsdp_state_dict_type FULL_STATE_DICT).",
        )
    if facts.get("empty_param"):
        return (
            f"loading weights into {facts['empty_param']}, whose shape in the model is [0]: the model's "
            "parameters are ZeRO-3 partitions (each rank holds a slice; outside the engine they are empty)"
            + on_ranks(hits),
            "Under ZeRO-3 (deepspeed.zero.Init, HfDeepSpeedConfig, accelerate/Trainer with zero_stage 3) a "
            "model's parameters are partitioned as it is built, so model.load_state_dict(...) sees shape [0]. "
            "Load through the path that gathers them: from_pretrained(...) (transformers handles ZeRO-3), "
            "engine.load_checkpoint(dir) for a DeepSpeed checkpoint, or load inside "
            "deepspeed.zero.GatheredParameters(list(model.parameters()), modifier_rank=0); or load the weights "
            "before the model is partitioned (before deepspeed.initialize / outside zero.Init).",
        )
    summary = (
        "a layer's weight is empty: under DeepSpeed ZeRO-3 a parameter outside the engine's forward is a "
        "partitioned placeholder of shape [0]"
        if zero
        else "a layer's weight is not 2-D (under DeepSpeed ZeRO-3: a partitioned placeholder used outside the "
        "engine)"
    ) + on_ranks(hits)
    fix = (
        "ZeRO-3 splits every parameter across the ranks and gathers it only inside the engine's forward; "
        "elsewhere a parameter has shape [0]. A second model (a reference / teacher / EMA model) copied from "
        "the partitioned one (deepcopy, create_reference_model) holds those placeholders: load it on its own "
        "with from_pretrained (inside the same HfDeepSpeedConfig / zero.Init) and hand it to "
        "deepspeed.initialize too, or read a weight outside forward under "
        "deepspeed.zero.GatheredParameters(param)."
    )
    return summary, fix


ZERO3_PARTITIONED_WEIGHTS = Recogniser(
    kind="zero3_partitioned_weights",
    title="ZeRO-3 partitioned weights used outside the engine",
    anchors=("'weight' must be 2-D", "torch.Size([0])", *(anchor for anchor, _ in ZERO3_REFUSALS)),
    templates=(
        "torch_native:embedding-weight-must-be-2d",
        "torch_native:size-mismatch-for-zero3-partition",
        "torch_native:size-mismatch-for-saved-partition",
        "deepspeed:detected-in-place-modification-of-zero",
        "deepspeed:parameter-is-on-but-broadcast-requires",
        "deepspeed:nested-gatheredparameters-contexts-cannot-overlap-parameters",
        "deepspeed:was-not-properly-set-up-for",
    ),
    # torch.Size([0]) counts only as the shape a state dict is loaded into, or as the shape it was saved with:
    # a checkpoint whose tensors are [0] was written from partitions (a ZeRO-3 or FSDP model's state_dict()
    # taken without gathering, huggingface/peft#1443), not from a model of another architecture
    match=R(
        r"^(?![^\n]*torch\.Size\(\[0\]\))|the shape in current model is torch\.Size\(\[0\]\)"
        r"|copying a param with shape torch\.Size\(\[0\]\) from checkpoint"
    ),
    facts=(
        R(
            r"size mismatch for (?P<empty_param>[\w.]{1,200}): [^\n]{0,200}current model is torch\.Size\(\[0\]\)"
        ),
        R(
            r"size mismatch for (?P<empty_saved>[\w.]{1,200}): copying a param with shape torch\.Size\(\[0\]\) from"
        ),
        refusal_pattern(ZERO3_REFUSALS, name="zero3_refusal", after=200),
    ),
    # an embedding's weight is not 2-D for other reasons too; ZeRO-3 in the log makes this the cause (for a
    # state dict loaded into [0]-shaped parameters, DeepSpeed in the log does)
    confirm=lambda hits, ctx: (
        "saw_zero3" in ctx.facts
        or any("zero3_refusal" in h.facts for h in hits)
        or ("saw_deepspeed" in ctx.facts and any("empty_param" in h.facts for h in hits))
    ),
    absorbs=("state_dict_keys", "model_checkpoint_mismatch"),
    describe=_zero3_weights,
)


def _init_order(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("zero_init_world"):
        summary = (
            "zero.Init saw a process group of one rank while the launcher started "
            f"{facts['zero_init_world']}: a single-rank group was initialised before DeepSpeed's"
            + on_ranks(hits)
        )
    else:
        summary = (
            "DeepSpeed's distributed backend was used before it was initialised "
            f"({quote(facts.get('what', 'backend not set'))})" + on_ranks(hits)
        )
    fix = (
        "Initialise the distributed backend first, in every process, before anything that uses deepspeed.comm "
        "(building a model with MoE / sequence-parallel layers, zero.Init, from_pretrained under ZeRO-3, "
        "dist.get_rank()):\n"
        "import deepspeed; deepspeed.init_distributed()   # calls torch.distributed.init_process_group\n"
        "A script that calls torch.distributed.init_process_group itself must still call "
        "deepspeed.init_distributed() (it reuses the group), or let deepspeed.initialize(...) do it "
        "(dist_init_required=True, the default). With the HF Trainer, create the TrainingArguments (which "
        "initialise it) before from_pretrained. Start the script with the deepspeed launcher or torchrun so "
        "every rank has RANK / WORLD_SIZE."
    )
    return summary, fix


# deepspeed/comm/comm.py asserts "DeepSpeed backend not set" in every call (get_rank, new_group, barrier, ...) when
# its backend `cdb` is None or `cdb.is_initialized()` is False: before init_distributed, and as much after
# torch.distributed.destroy_process_group (the end of a run: a logger or a library asking the rank). Its traceback
# tells them apart: a model being built under zero.Init / from_pretrained / DeepSpeed's MoE layers is before.
BACKEND_NOT_SET = "DeepSpeed backend not set, please initialize it"
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("partition_parameters.py", R(r"(?P<ds_comm_while_building>zero/partition_parameters\.py)")),
    ("deepspeed/moe/", R(r"(?P<ds_comm_while_building>deepspeed/moe/\w+\.py)")),
    ("in from_pretrained", R(r"(?P<ds_comm_while_building>, in from_pretrained\b)")),
    ("destroy_process_group", R(r"(?P<ds_comm_after_destroy>destroy_process_group\()")),
    # transformers' Trainer counting parameters by ZeRO-3's ds_numel (kinds/zero3_params.py)
    (zero3_params.PARAM_COUNT, R(r"(?P<hf_param_count>, in get_model_param_count\b)")),
)


def _before_initialised(hits: list[Hit], ctx: Context) -> bool:
    """Certain on the messages only the order prints; on comm.py's bare assertion, only where the traceback shows
    a model being built (zero.Init, from_pretrained, MoE layers) and no process group destroyed."""
    if any(h.anchor != BACKEND_NOT_SET for h in hits):
        return True
    return "ds_comm_while_building" in ctx.facts and "ds_comm_after_destroy" not in ctx.facts


_before_initialised.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


DEEPSPEED_INIT_ORDER = Recogniser(
    kind="deepspeed_init_order",
    title="DeepSpeed used before its distributed backend was initialised",
    anchors=(
        BACKEND_NOT_SET,
        "Distributed backend is not initialized. Please set dist_init_required",
        "zero.Init resolved a process group of world_size=1",
        "Parameters cannot be scattered without initializing deepspeed.comm",
        "Please initialize the torch distributed backend",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "Distributed backend is not initialized",
    ),
    templates=(
        "deepspeed:deepspeed-backend-not-set-please-initialize",  # deepspeed/comm/comm.py
        "deepspeed:distributed-backend-is-not-initialized-please",  # deepspeed/comm/comm.py
        "deepspeed:zero-init-resolved-process-group-of",  # deepspeed/runtime/zero/partition_parameters.py
        "deepspeed:parameters-cannot-be-scattered-without-initializing",  # partition_parameters.py: zero.Init, no comm
        "deepspeed:please-initialize-the-torch-distributed-backend",  # runtime/fp16/onebit/*.py: the 1-bit optimizers
    ),
    facts=(
        R(
            r"(?P<what>DeepSpeed backend not set|Distributed backend is not initialized|"
            r"zero\.Init resolved a process group of world_size=1|Parameters cannot be scattered without "
            r"initializing deepspeed\.comm|Please initialize the torch distributed backend)"
        ),
        R(r"launcher environment reports WORLD_SIZE=(?P<zero_init_world>\d+)"),
        R(r"(?P<backend_not_set>DeepSpeed backend not set)"),
    ),
    # comm.py's bare assertion: before init_distributed or after destroy_process_group (_before_initialised)
    generic=(BACKEND_NOT_SET,),
    confirm=_before_initialised,
    also=(
        Alternative(
            "process_group_destroyed",
            "a deepspeed.comm call after the process group was destroyed (the end of the run)",
            "If the traceback is at the end of training, after destroy_process_group (a logger, a callback or a "
            "library asking the rank): make that call before the group is destroyed, or guard it with "
            "deepspeed.comm.is_initialized().",
            when=("backend_not_set",),
        ),
    ),
    describe=_init_order,
)


RECOGNISERS = (DEEPSPEED_CONFIG_MISMATCH, ZERO3_PARTITIONED_WEIGHTS, DEEPSPEED_INIT_ORDER)
