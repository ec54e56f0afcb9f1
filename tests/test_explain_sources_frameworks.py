"""The DeepSpeed / accelerate / transformers / Lightning paths, read from the code that prints their messages:
DeepSpeed's config, batch and precision checks and its engine's and pipeline's refusals, accelerate's DeepSpeed and
FSDP plugins and process state, the HF Trainer's DeepSpeed and FSDP checks, Lightning's DeepSpeed strategy, and the
checkpoint paths their loaders refuse.

Each case is a catalog template (its id beside it) with its placeholders filled as its source formats them, prefixed
with the exception the source raises; each class has a near-miss, a line that shares its words and must not fire.
"""

from __future__ import annotations

import pytest
from explaining import explained

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")


def template(ident: str, *values: str) -> str:
    """A catalog template with its ``{}`` placeholders filled in order."""
    text = by_id()[ident].text
    for value in values:
        text = text.replace("{}", value, 1)
    assert "{}" not in text, f"{ident}: a placeholder left unfilled"
    return text


def sure(found) -> str:
    return found.details.get("confidence", "certain")


# (template id, values, exception prefix, kind, confidence, words the summary or the fix must hold)
CASES = [
    # deepspeed/runtime/config.py _set_batch_related_parameters / _batch_assertion
    (
        "deepspeed:either-train-batch-size-or-train",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["train_micro_batch_size_per_gpu", '"auto"'],
    ),
    (
        "deepspeed:micro-batch-size-per-gpu-has",
        ("0",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["Micro batch size per gpu: 0", "integer division"],
    ),
    (
        "deepspeed:gradient-accumulation-steps-has-to-be",
        ("0",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["Gradient accumulation steps: 0", "train_batch_size"],
    ),
    (
        "deepspeed:deepspeedconfig-maximum-supported-zero-stage-is",
        ("3",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"stage"'],
    ),
    (
        "deepspeed:duplicate-keys-in-deepspeed-config",
        ("['fp16']",),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["['fp16']", "twice"],
    ),
    (
        "deepspeed:cannot-provide-deprecated-parameter-and-replacing",
        ("cpu_offload", "offload_optimizer"),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["offload_optimizer", "deprecated"],
    ),
    (
        "deepspeed:fp16-loss-scale-must-be-number-2",
        (),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"loss_scale": 0'],
    ),
    (
        "deepspeed:fp16-loss-scale-window-must-be",
        (),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["loss_scale_window"],
    ),
    # deepspeed/runtime/engine.py
    (
        "deepspeed:no-sync-context-manager-is-incompatible",
        ("2",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["ZeRO stage 2", "gradient_accumulation_steps", "engine.backward"],
    ),
    (
        "deepspeed:it-is-illegal-to-call-engine",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["after the `with engine.no_sync():`"],
    ),
    (
        "deepspeed:bit-adam-is-not-compatible-with",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"stage": 0'],
    ),
    (
        "deepspeed:cannot-enable-both-amp-with-legacy",
        (),
        "NotImplementedError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"amp"'],
    ),
    (
        "deepspeed:client-optimizer-type-is-not-instantiated",
        ("<class 'function'>)",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["callable"],
    ),
    (
        "deepspeed:contiguous-checkpointing-is-only-available-with",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["partition_activations"],
    ),
    (
        "deepspeed:direct-calls-to-tensor-backward-are",
        (),
        "RuntimeError: ",
        "deepspeed_config_mismatch",
        "likely",
        ["engine.backward(loss)", "pip install -U torch"],
    ),
    (
        "deepspeed:loss-scaling-is-required-for-this",
        (),
        "RuntimeError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["engine.scale(loss).backward()"],
    ),
    (
        "deepspeed:training-data-must-be-torch-dataset",
        (),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["torch.utils.data.Dataset"],
    ),
    (
        "deepspeed:bfloat16-wrapper-must-use-gradient-accumulation",
        (),
        "NotImplementedError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"grad_accum_dtype": "fp32"'],
    ),
    # zero/config.py, zero/partition_parameters.py, zero/stage_1_and_2.py, utils/groups.py
    (
        "deepspeed:deepspeedzeroconfig-stage-must-be-defined-before",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"stage": 2'],
    ),
    (
        "deepspeed:device-in-deepspeed-config-cannot-be",
        ("nvme", "cpu"),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['remote_device="nvme"'],
    ),
    (
        "deepspeed:reduce-scatter-in-zero-stage-must",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"reduce_scatter": true'],
    ),
    (
        "deepspeed:the-model-has-moe-layers-but",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["split_params_into_different_moe_groups_for_optimizer"],
    ),
    (
        "deepspeed:allgather-bucket-size-must-be-multiple",
        ("2",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"allgather_bucket_size"'],
    ),
    (
        "deepspeed:data-parallel-size-tensor-model-parallel",
        ("4", "4", "8"),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["product is the world size"],
    ),
    # runtime/pipe/engine.py, pipe/module.py, lr_schedules.py
    (
        "deepspeed:zero-and-zero-are-incompatible-with",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"stage": 1', "--zero-stage 1"],
    ),
    (
        "deepspeed:only-train-batch-is-accessible-in",
        (),
        "deepspeed.runtime.pipe.engine.PipelineError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["engine.train_batch("],
    ),
    (
        "deepspeed:warmup-num-steps-must-be-positive",
        ("auto",),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"warmup_num_steps"', "positive integer"],
    ),
    # accelerate/utils/dataclasses.py, accelerator.py, utils/deepspeed.py, utils/imports.py
    (
        "accelerate:please-specify-the-zero-optimization-config",
        (),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"zero_optimization"'],
    ),
    (
        "accelerate:not-found-in-kwargs-please-specify",
        ("optimizer.params.lr", "optimizer.params.lr"),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["optimizer.params.lr", "write a number"],
    ),
    (
        "accelerate:can-find-neither-model-config-hidden",
        (
            "therefore it's not possible to automatically fill out the following `auto` entries in the DeepSpeed "
            "config file: ['zero_optimization.reduce_bucket_size']. You can fix that by replacing `auto` values for "
            "these keys with an integer value of your choice.",
        ),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["reduce_bucket_size", 'instead of "auto"'],
    ),
    (
        "accelerate:could-not-find-transformer-layer-class",
        ("MixtralSparseMoeBlock",),
        "Exception: ",
        "deepspeed_config_mismatch",
        "certain",
        ["'MixtralSparseMoeBlock'", "transformer_moe_cls_names"],
    ),
    (
        "accelerate:you-can-use-same-accelerator-instance",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["deepspeed_plugins"],
    ),
    (
        "accelerate:in-order-to-use-the-configured",
        ("4", "hf"),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["sp_backend='deepspeed'"],
    ),
    (
        "accelerate:deepspeedplugin-object-must-be-enabled-manually",
        (),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["select_deepspeed_plugin(name)"],
    ),
    (
        "accelerate:couldn-retrieve-the-active-deepspeedplugin-as",
        (),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["accelerate launch --use_deepspeed"],
    ),
    # transformers/integrations/deepspeed.py
    (
        "transformers:weight-conversions-moe-expert-fusion-with",
        (),
        "NotImplementedError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"tensor_parallel"', "save_pretrained"],
    ),
    # accelerate/accelerator.py: the DeepSpeed it needs
    (
        "accelerate:deepspeed-version-must-be-please-update",
        (),
        "ImportError: ",
        "dependency_version",
        "certain",
        ["DeepSpeed >= 0.9.3", "pip install -U"],
    ),
    (
        "accelerate:deepspeed-tp-requires-deepspeed-please-update",
        (),
        "ImportError: ",
        "dependency_version",
        "certain",
        ["deepspeed>=0.16.4"],
    ),
    # lightning/pytorch/strategies/deepspeed.py, lightning/fabric/strategies/deepspeed.py
    (
        "lightning:deepspeed-does-not-support-clipping-gradients",
        (),
        "lightning.fabric.utilities.exceptions.MisconfigurationException: ",
        "deepspeed_config_mismatch",
        "certain",
        ['gradient_clip_algorithm="norm"'],
    ),
    (
        "lightning:currently-only-one-optimizer-is-supported",
        ("2",),
        "RuntimeError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["one optimizer"],
    ),
    (
        "lightning:do-not-set-gradient-accumulation-steps",
        (),
        "lightning.fabric.utilities.exceptions.MisconfigurationException: ",
        "deepspeed_config_mismatch",
        "certain",
        ["accumulate_grad_batches=N"],
    ),
    (
        "lightning:you-passed-in-path-to-deepspeed",
        ("configs/ds_zero2.json",),
        "lightning.fabric.utilities.exceptions.MisconfigurationException: ",
        "deepspeed_config_mismatch",
        "certain",
        ["configs/ds_zero2.json"],
    ),
    (
        "lightning:empty-init-is-not-valid-choice",
        ("empty_init=False",),
        "NotImplementedError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["empty_init=False"],
    ),
    # the checkpoint paths: Lightning's DeepSpeed strategy, zero_to_fp32, the engine's universal load, the Trainer
    (
        "lightning:it-looks-like-you-passed-the",
        (
            "The provided path is not a valid DeepSpeed checkpoint: lightning_logs/version_0/checkpoints/last.ckpt/checkpoint",
            "lightning_logs/version_0/checkpoints/last.ckpt",
        ),
        "FileNotFoundError: ",
        "checkpoint_path",
        "certain",
        ["pass lightning_logs/version_0/checkpoints/last.ckpt"],
    ),
    (
        "lightning:the-provided-path-is-not-valid",
        ("lightning_logs/version_0/checkpoints/epoch=9-step=500.ckpt",),
        "FileNotFoundError: ",
        "checkpoint_path",
        "likely",
        ["epoch=9-step=500.ckpt", "load_full_weights=True"],
    ),
    (
        "lightning:deepspeed-was-unable-to-load-the",
        (),
        "lightning.fabric.utilities.exceptions.MisconfigurationException: ",
        "checkpoint_path",
        "likely",
        ["global_stepN"],
    ),
    (
        "deepspeed:unable-to-find-latest-file-at-2",
        ("output/checkpoint-1000/global_step1000/latest",),
        "ValueError: ",
        "checkpoint_path",
        "likely",
        ["-t global_stepN"],
    ),
    (
        "deepspeed:is-not-zero-checkpoint",
        ("out/global_step20/mp_rank_00_optim_states.pt",),
        "ValueError: ",
        "checkpoint_path",
        "certain",
        ["mp_rank_00_model_states.pt", "'module'"],
    ),
    (
        "deepspeed:invalid-for-universal-checkpoint-does-not",
        ("ckpts/latest_universal",),
        "ValueError: ",
        "checkpoint_path",
        "certain",
        ["ds_to_universal", "latest_universal"],
    ),
    (
        "transformers:can-find-valid-checkpoint-at",
        ("output/llama-sft",),
        "ValueError: ",
        "checkpoint_path",
        "likely",
        ["output/llama-sft", "checkpoint-N"],
    ),
    (
        "transformers:checkpoint-found-at-is-only-supported",
        ("output/checkpoint-200",),
        "ValueError: ",
        "checkpoint_path",
        "certain",
        ["accelerate merge-weights", "fsdp_config"],
    ),
    # accelerate's FSDP plugin and prepare(), transformers' Trainer: FSDP settings refused before wrapping
    (
        "accelerate:reshard-after-forward-set-to-this",
        ("ShardingStrategy.FULL_SHARD",),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["FULL_SHARD", "fsdp_reshard_after_forward: true"],
    ),
    (
        "accelerate:fsdp2-does-not-support-local-state",
        (),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["SHARDED_STATE_DICT"],
    ),
    (
        "accelerate:when-using-fsdp2-model-and-optimizer",
        (),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["accelerator.prepare(model, optimizer)"],
    ),
    (
        "accelerate:when-using-fsdp-cpu-ram-efficient",
        (),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["--fsdp_sync_module_states true"],
    ),
    (
        "transformers:passing-optimizers-is-not-allowed-if",
        (),
        "RuntimeError: ",
        "fsdp_config_mismatch",
        "certain",
        ["create_optimizer_and_scheduler", "--optim"],
    ),
    (
        "transformers:fsdp-config-activation-checkpointing-fsdp-own",
        (),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["`fsdp_config['activation_checkpointing']` (FSDP's own", "gradient_checkpointing"],
    ),
    (
        "lightning:the-path-does-not-point-to",
        ("'lightning_logs/version_3/checkpoints/epoch=1.ckpt'",),
        "ValueError: ",
        "checkpoint_path",
        "likely",
        ["epoch=1.ckpt", ".metadata"],
    ),
    (
        "accelerate:checkpoint-should-be-the-path-to",
        ("weights/",),
        "ValueError: ",
        "checkpoint_path",
        "likely",
        ["weights/", "model.safetensors.index.json"],
    ),
    (
        "transformers:can-find-checkpoint-index-in",
        ("pytorch_model.bin.index.json or model.safetensors.index.json", "out/checkpoint-5"),
        "ValueError: ",
        "checkpoint_path",
        "likely",
        ["model.safetensors.index.json"],
    ),
    (
        "lightning:the-optimizer-does-not-seem-to",
        (),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["configure_optimizers()", "fabric.setup_module(model) first"],
    ),
    (
        "transformers:unknown-fsdp-option",
        ("full_shards",),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["full_shards", "hybrid_shard_zero2"],
    ),
    (
        "accelerate:using-cp-size-requires-fsdp2-but",
        (),
        "ValueError: ",
        "fsdp_config_mismatch",
        "certain",
        ["fsdp_version: 2"],
    ),
    # lightning/pytorch/trainer/connectors/checkpoint_connector.py: a weights-only checkpoint given to fit()
    (
        "lightning:trying-to-restore-optimizer-state-but",
        (),
        "KeyError: ",
        "checkpoint_incomplete",
        "certain",
        ["save_weights_only=False", "optimizer"],
    ),
    # accelerate/state.py, accelerator.py: the process state out of order
    (
        "accelerate:the-partialstate-or-accelerator-must-be",
        (),
        "ValueError: ",
        "accelerate_init_order",
        "certain",
        ["accelerator = Accelerator("],
    ),
    (
        "accelerate:please-make-sure-to-properly-initialize",
        (),
        "ValueError: ",
        "accelerate_init_order",
        "certain",
        ["do not build AcceleratorState() yourself"],
    ),
    (
        "accelerate:acceleratorstate-object-has-no-attribute-this",
        ("distributed_type",),
        "AttributeError: ",
        "accelerate_init_order",
        "certain",
        ["distributed_type", "_reset_state()"],
    ),
    (
        "transformers:passing-use-configured-state-true-to",
        (),
        "ValueError: ",
        "accelerate_init_order",
        "certain",
        ["use_configured_state", "then the TrainingArguments"],
    ),
    (
        "accelerate:you-cannot-pass-in-deepspeed-plugin",
        (),
        "ValueError: ",
        "accelerate_init_order",
        "certain",
        ["select_deepspeed_plugin"],
    ),
]


@pytest.mark.parametrize(
    ("ident", "values", "prefix", "kind", "confidence", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_the_line_as_its_source_prints_it(ident, values, prefix, kind, confidence, words):
    found = explained(prefix + template(ident, *values) + "\n")
    assert (found.id, sure(found)) == (f"log.{kind}", confidence), (found.id, found.summary)
    for word in words:
        assert word in found.summary + found.fix, word


def test_accelerate_names_the_option_it_was_asked_to_change():
    # state.py _check_initialized: err.format(flag=f"mixed_precision='{mixed_precision}'")
    line = template("accelerate:acceleratorstate-has-already-been-initialized-and").replace(
        "{flag}", "mixed_precision='bf16'"
    )
    found = explained(f"ValueError: {line}\n")
    assert (found.id, sure(found)) == ("log.accelerate_init_order", "certain")
    assert "mixed_precision='bf16'" in found.summary and "restart the kernel" in found.fix


def test_the_refusal_of_loss_backward_names_both_of_its_causes():
    # engine.py _backward_prologue: "(1) your PyTorch version lacks required internal APIs, or (2) using ZeRO stage 0"
    found = explained("RuntimeError: " + template("deepspeed:direct-calls-to-tensor-backward-are") + "\n")
    assert found.details["alternatives"] == ["log.dependency_version"]
    # the fp16 one has one cause: certain
    scaled = explained("RuntimeError: " + template("deepspeed:loss-scaling-is-required-for-this") + "\n")
    assert sure(scaled) == "certain"


def test_lightnings_deepspeed_strategy_on_a_cpu_accelerator_names_a_machine_without_gpus():
    # lightning strategies/deepspeed.py setup_environment: accelerator="auto" on a machine torch sees no GPU on ends
    # here as well as an accelerator chosen by hand
    line = template("lightning:the-deepspeed-strategy-is-only-supported", "CPUAccelerator")
    found = explained(f"RuntimeError: {line}\n")
    assert (found.id, sure(found)) == ("log.deepspeed_config_mismatch", "likely")
    assert found.details["alternatives"] == ["log.cuda_unavailable"]
    assert 'accelerator="cuda"' in found.fix and "torch.cuda.is_available()" in found.fix


def test_accelerate_merge_weights_names_the_folder_of_the_shards():
    # accelerate/utils/fsdp_utils.py merge_fsdp_weights: the pieces of one message, joined as the source joins them
    line = (
        template("accelerate:tried-to-load-from-but-couldn", "outputs/checkpoint-100")
        + " However, a potential model checkpoint directory exists."
        + template("accelerate:please-try-passing-in-pytorch-model", "outputs/checkpoint-100")
    )
    found = explained(f"ValueError: {line}\n")
    assert (found.id, sure(found)) == ("log.checkpoint_path", "certain")
    assert "accelerate merge-weights outputs/checkpoint-100/pytorch_model_fsdp_0" in found.fix
    alone = explained(
        "ValueError: " + template("accelerate:tried-to-load-from-but-couldn", "outputs/x") + "\n"
    )
    assert (alone.id, sure(alone)) == ("log.checkpoint_path", "likely")


def test_a_likely_checkpoint_path_names_the_checkpoint_saved_without_its_state():
    found = explained(
        "ValueError: " + template("transformers:can-find-valid-checkpoint-at", "runs/sft") + "\n"
    )
    assert found.details["alternatives"] == ["log.checkpoint_incomplete"]
    assert "save_only_model=True" in found.fix


NEAR_MISSES = [
    # "has to be greater than 0" is DeepSpeed's batch check only after one of its three names and the value
    "ValueError: num_layers has to be greater than 0\n",
    "AssertionError: Train batch size has to be greater than 0 for this sampler\n",
    # a healthy line of the HF Trainer's start-up summary
    "  Gradient Accumulation steps = 4\n",
    # Lightning's log of a DeepSpeed checkpoint loaded well, and zero_to_fp32's progress
    "Restoring states from the checkpoint path at lightning_logs/version_0/checkpoints/last.ckpt\n",
    "Processing zero checkpoint 'output/checkpoint-1000/global_step1000'\n",
    # accelerate's own state printed at start-up (its __repr__), not an error
    "Distributed environment: DEEPSPEED  Backend: nccl\nNum processes: 8\nProcess index: 0\n",
    # accelerate's advice printed with FSDP on, not a refusal
    "When using FSDP, prefer `fsdp_config['activation_checkpointing']` (FSDP's own activation checkpointing) over the "
    "`activation_checkpointing` training argument\n",
    # a world-size check of another library, and a plain backward call in a traceback
    "AssertionError: num_heads (12) must equal world_size (8) times heads per rank\n",
    '  File "train.py", line 88, in <module>\n    loss.backward()\n',
    # DeepSpeed's warning that a client optimizer runs under ZeRO, with no refusal
    "[WARNING] [engine.py:1200:_configure_optimizer] **** You are using ZeRO with an untested optimizer, proceed with "
    "caution *****\n",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_do_not_fire(text):
    found = explained(text)
    assert found.id not in {
        "log.deepspeed_config_mismatch",
        "log.fsdp_config_mismatch",
        "log.checkpoint_path",
        "log.checkpoint_incomplete",
        "log.accelerate_init_order",
    }, (text, found.id, found.summary)


def test_the_readings_next_to_the_new_ones_stay_theirs():
    # engine.py's own warning for a folder without 'latest' stays checkpoint_incomplete (zero_to_fp32's is a path)
    engine = explained(
        "[WARNING] [engine.py:2800:load_checkpoint] "
        + template("deepspeed:unable-to-find-latest-file-at", "output/checkpoint-500/latest")
        + "\n"
    )
    assert engine.id == "log.checkpoint_incomplete"
    # FSDP's wrap class (accelerate's FSDP plugin) is fsdp_wrap_config, not the DeepSpeed MoE leaf class
    fsdp = explained(
        "ValueError: Could not find the transformer layer class LlamaDecoderLayer in the model.\n"
    )
    assert fsdp.id == "log.fsdp_wrap_config"


def test_an_old_kernel_is_named_only_when_nothing_else_explains_the_run():
    # accelerate/utils/other.py check_os_kernel, logged by Accelerator() on every run on such a kernel
    warning = (
        "WARNING:accelerate.utils.other:"
        + by_id()["accelerate:detected-kernel-version-which-is-below"]
        .text.replace("{}", "4.15.0", 1)
        .replace("{}", "5.5.0", 1)
        + "\n"
    )
    found = explained(warning + "Epoch 0:   3%|3         | 12/400 [00:10<05:30,  1.17it/s]\n")
    assert (found.id, sure(found)) == ("log.kernel_too_old", "likely")
    assert "4.15.0" in found.summary and "5.5.0 or newer" in found.fix
    # beside an error the log does show, the warning says nothing
    assert explained(warning + "torch.OutOfMemoryError: CUDA out of memory.\n").id == "log.cuda_oom"
    # another check's "below the recommended minimum" is not the kernel's
    other = "Detected driver version 470, which is below the recommended minimum of 525; upgrade it.\n"
    assert explained(other).id != "log.kernel_too_old"
