"""The DeepSpeed / accelerate / transformers / Lightning templates mapped from their sources: DeepSpeed's engine, ZeRO,
elasticity, DeepCompile and Ulysses refusals (``deepspeed_config_mismatch``), the packages a feature needs
(``dependency_version``) and the Trainer's, the Accelerator's and Lightning's refusals of their arguments
(``trainer_arguments``).

Each case is the line as its source prints it: a catalog template (its id beside it) with its placeholders filled as
the source fills them, after the exception the source raises. Every template the new tables cite is read as its kind;
near-misses, lines that share their words and are not the failure, must not fire.
"""

from __future__ import annotations

import re

import pytest
from explaining import explained, template

from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.kinds import deepspeed_engine_refusals, trainer_arguments, version_refusals

pytestmark = pytest.mark.usefixtures("every_message_seen")


def line(ident: str, *values: str) -> str:
    """The template ``ident`` with its ``{}`` placeholders filled in order (every one must be)."""
    text = template(ident, *values)
    assert "{}" not in text, f"{ident}: a placeholder left unfilled"
    return text


# (template id, values, the exception it is raised as, kind, words the summary or the fix must hold)
CASES = [
    # deepspeed/runtime/config.py _do_error_check / engine.py / zero/*.py
    (
        "deepspeed:bf16-master-weights-and-grads-is",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ['"zero_optimization": {"stage": 1}'],
    ),
    (
        "deepspeed:sum-is-not-supported-with-zero",
        ("gradient_allreduce_op",),
        "ValueError",
        "deepspeed_config_mismatch",
        ['"gradient_allreduce_op": "sum"'],
    ),
    (
        "deepspeed:invalid-communication-data-type-supported-data",
        ("fp8",),
        "ValueError",
        "deepspeed_config_mismatch",
        ['"communication_data_type"'],
    ),
    (
        "deepspeed:data-types-param-dtype-conflicts-with",
        ("bf16", "torch.float16"),
        "ValueError",
        "deepspeed_config_mismatch",
        ["param_dtype"],
    ),
    (
        "deepspeed:unsupported-mix-of-model-dtype-and",
        ("torch.bfloat16", "torch.float16"),
        "NotImplementedError",
        "deepspeed_config_mismatch",
        ["grad_accum_dtype"],
    ),
    (
        "deepspeed:master-weights-feature-requires-zero-offload",
        ("False", "<class 'torch.optim.adamw.AdamW'>"),
        "AssertionError",
        "deepspeed_config_mismatch",
        ['"offload_optimizer": {"device": "cpu"}'],
    ),
    (
        "deepspeed:zero-supports-communication-data-type-with",
        ("(torch.float16, torch.bfloat16, torch.float32)", "torch.int8"),
        "AssertionError",
        "deepspeed_config_mismatch",
        ['"reduce_scatter": false'],
    ),
    (
        "deepspeed:gradient-predivide-factor-is-not-yet",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ["gradient_predivide_factor"],
    ),
    (
        "deepspeed:bit-adam-does-not-support-the",
        (),
        "RuntimeError",
        "deepspeed_config_mismatch",
        ['"amsgrad": false'],
    ),
    (
        "deepspeed:bit-lamb-does-not-support-sparse",
        (),
        "RuntimeError",
        "deepspeed_config_mismatch",
        ["sparse=False"],
    ),
    (
        "deepspeed:managed-gradient-accumulation-false-is-not",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ["gradient_accumulation_steps"],
    ),
    (
        "deepspeed:currently-deepcompile-supports-stage-or-only",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ['"deepcompile": false'],
    ),
    (
        "deepspeed:elasticity-is-not-currently-supported-with",
        (),
        "ElasticityConfigError",
        "deepspeed_config_mismatch",
        ['"elasticity"'],
    ),
    (
        "deepspeed:checkpoint-config-contains-invalid-tag-validation",
        ("STRICT", "['IGNORE', 'WARN', 'FAIL']"),
        "DeepSpeedConfigError",
        "deepspeed_config_mismatch",
        ['"tag_validation"'],
    ),
    (
        "deepspeed:no-device-specified-for-offloading-states",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ['device="cpu"'],
    ),
    (
        "deepspeed:attention-head-count-is-not-divisible",
        ("14", "4"),
        "ValueError",
        "deepspeed_config_mismatch",
        ["sequence_parallel_size", "pad_to_multiple_of"],
    ),
    (
        "deepspeed:batch-seqlen-isn-divisible-by-sp",
        ("4097", "8"),
        "ValueError",
        "deepspeed_config_mismatch",
        ["pad_to_multiple_of"],
    ),
    (
        "deepspeed:pp-bf16-only-work-for-zero",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ["--zero-stage 1"],
    ),
    (
        "deepspeed:zenflow-must-be-used-with-cpu",
        (),
        "ValueError",
        "deepspeed_config_mismatch",
        ['"offload_optimizer": {"device": "cpu"}'],
    ),
    # packages a feature needs (dependency_version)
    (
        "accelerate:bf16-mixed-precision-with-mps-device",
        (),
        "ValueError",
        "dependency_version",
        ["pip install -U torch", "2.6"],
    ),
    (
        "accelerate:grad-scaler-with-mps-device-requires",
        (),
        "ValueError",
        "dependency_version",
        ["2.8", "--mixed_precision no"],
    ),
    (
        "deepspeed:install-mup-to-use-muadamw-optimizer",
        (),
        "NameError",
        "dependency_version",
        ["pip install mup"],
    ),
    (
        "deepspeed:unable-to-import-apex-amp-please",
        (),
        "RuntimeError",
        "dependency_version",
        ["github.com/NVIDIA/apex"],
    ),
    (
        "deepspeed:transformers-is-required-but-you-have",
        ("4.51.0", "4.46.3"),
        "ValueError",
        "dependency_version",
        ["transformers>="],
    ),
    (
        "accelerate:tried-to-train-with-fp8-and",
        (),
        "ImportError",
        "dependency_version",
        ["pip install torchao"],
    ),
    (
        "accelerate:you-have-version-of-bitsandbytes-that",
        (),
        "ImportError",
        "dependency_version",
        ["pip install -U bitsandbytes"],
    ),
    (
        "accelerate:to-set-cpu-affinity-on-cuda",
        (),
        "ImportError",
        "dependency_version",
        ["nvidia-ml-py", "ACCELERATE_CPU_AFFINITY=0"],
    ),
    (
        "transformers:the-package-for-flashattention-doesn-seem",
        ("FlashAttention2 has been toggled on, but it cannot be used due to the following error:", "2"),
        "ImportError",
        "dependency_version",
        ["flash-attn", "sdpa"],
    ),
    (
        "transformers:the-distribution-was-not-found-and",
        ("datasets>=2.14.0", "To fix: pip install -r examples/pytorch/language-modeling/requirements.txt"),
        "importlib.metadata.PackageNotFoundError",
        "dependency_version",
        ["requirements file"],
    ),
    (
        "transformers:this-function-needs-optuna-installed-pip",
        (),
        "ImportError",
        "dependency_version",
        ["optuna"],
    ),
    (
        "lightning:to-use-the-deepspeedstrategy-you-must",
        (),
        "ImportError",
        "dependency_version",
        ["pip install -U deepspeed"],
    ),
    # the Trainer's, the Accelerator's and Lightning's arguments (trainer_arguments)
    (
        "transformers:trainer-training-requires-train-dataset",
        (),
        "ValueError",
        "trainer_arguments",
        ["train_dataset="],
    ),
    (
        "transformers:you-have-set-args-eval-strategy",
        ("IntervalStrategy.STEPS",),
        "ValueError",
        "trainer_arguments",
        ["--eval_strategy no"],
    ),
    (
        "transformers:the-model-did-not-return-loss",
        ("logits,past_key_values", "input_ids,attention_mask"),
        "ValueError",
        "trainer_arguments",
        ["labels", "--label_names"],
    ),
    (
        "transformers:no-columns-in-the-dataset-match",
        ("input_ids, attention_mask, labels", "text, label_text"),
        "ValueError",
        "trainer_arguments",
        ["--remove_unused_columns False"],
    ),
    (
        "transformers:the-train-dataset-does-not-implement",
        (),
        "ValueError",
        "trainer_arguments",
        ["--max_steps"],
    ),
    (
        "transformers:load-best-model-at-end-requires-4",
        ("500", "300"),
        "ValueError",
        "trainer_arguments",
        ["multiple of --eval_steps"],
    ),
    (
        "transformers:lr-scheduler-type-reduce-lr-on",
        (),
        "ValueError",
        "trainer_arguments",
        ["--eval_strategy"],
    ),
    (
        "transformers:the-metric-for-best-model-training",
        ("accuracy", "['eval_loss', 'eval_f1', 'eval_runtime']", "accuracy"),
        "KeyError",
        "trainer_arguments",
        ["--metric_for_best_model"],
    ),
    (
        "accelerate:unknown-mixed-precision-mode-choose-between",
        ("fp32", "['no', 'fp8', 'fp16', 'bf16']"),
        "ValueError",
        "trainer_arguments",
        ["--mixed_precision"],
    ),
    (
        "accelerate:you-must-pass-model-and-an",
        (),
        "ValueError",
        "trainer_arguments",
        ["accelerator.prepare(model, optimizer)"],
    ),
    (
        "accelerate:you-can-train-model-that-has-3",
        (),
        "ValueError",
        "trainer_arguments",
        ["device_map={'': LOCAL_RANK}"],
    ),
    (
        "accelerate:at-least-one-of-the-model",
        (),
        "ValueError",
        "trainer_arguments",
        ["offload_folder="],
    ),
    (
        "lightning:you-selected-an-invalid-strategy-name",
        ("'dpp'",),
        "ValueError",
        "trainer_arguments",
        ["strategy="],
    ),
    (
        "lightning:the-strategy-requires-gpu-accelerator-but",
        ("ddp", "CPUAccelerator()"),
        "ValueError",
        "trainer_arguments",
        ["accelerator='cuda'"],
    ),
    (
        "lightning:precision-set-through-both-strategy-class",
        (),
        "lightning.fabric.utilities.exceptions.MisconfigurationException",
        "trainer_arguments",
        ["not both"],
    ),
    (
        "lightning:ckpt-path-best-is-set-but",
        ("test",),
        "ValueError",
        "trainer_arguments",
        ["ModelCheckpoint(monitor="],
    ),
    (
        "lightning:you-requested-to-check-of-the",
        ("0.01", "val", "0.01", "50", "val", "val", "0.02"),
        "lightning.fabric.utilities.exceptions.MisconfigurationException",
        "trainer_arguments",
        ["limit_val_batches"],
    ),
    (
        "lightning:got-fsdpstrategy-load-checkpoint-state-but",
        ("{'step': 1200}",),
        "ValueError",
        "trainer_arguments",
        ["fabric.load(path, state)"],
    ),
]


# (template id, values, the exception it is raised as, kind, words): FSDP settings, ZeRO-3's GatheredParameters and
# zero.Init, accelerate's checkpoint folders
MORE_CASES = [
    (
        "deepspeed:please-initialize-the-torch-distributed-backend",
        (),
        "AssertionError",
        "deepspeed_init_order",
        ["deepspeed.init_distributed()"],
    ),
    (
        "deepspeed:cycle-first-step-size-must-be",
        ("0",),
        "ValueError",
        "deepspeed_config_mismatch",
        ['"cycle_first_step_size"'],
    ),
    (
        "transformers:using-fsdp-only-works-in-distributed",
        (),
        "ValueError",
        "fsdp_config_mismatch",
        ["torchrun --nproc_per_node"],
    ),
    (
        "accelerate:invalid-auto-wrap-policy-must-be",
        ("TRANSFORMER_WRAP", "['TRANSFORMER_BASED_WRAP', 'SIZE_BASED_WRAP', 'NO_WRAP']"),
        "ValueError",
        "fsdp_config_mismatch",
        ["TRANSFORMER_BASED_WRAP"],
    ),
    (
        "lightning:the-hybrid-sharding-strategy-requires-you",
        (),
        "RuntimeError",
        "fsdp_config_mismatch",
        ["device_mesh="],
    ),
    (
        "deepspeed:detected-in-place-modification-of-zero",
        (),
        "RuntimeError",
        "zero3_partitioned_weights",
        ["modifier_rank=0"],
    ),
    (
        "deepspeed:parameter-is-on-but-broadcast-requires",
        ("417", "cpu", "cuda:3"),
        "RuntimeError",
        "zero3_partitioned_weights",
        ["p.data.copy_"],
    ),
    (
        "deepspeed:was-not-properly-set-up-for",
        ("LlamaRMSNorm",),
        "RuntimeError",
        "zero3_partitioned_weights",
        ["before entering deepspeed.zero.Init()"],
    ),
    (
        "accelerate:tried-to-find-but-folder-does",
        ("outputs/step_1200",),
        "ValueError",
        "checkpoint_path",
        ["outputs/step_1200", "load_state"],
    ),
    (
        "accelerate:no-input-dir-provided-and-automatic",
        (),
        "ValueError",
        "checkpoint_path",
        ["automatic_checkpoint_naming=True"],
    ),
    (
        "transformers:provided-path-should-be-directory-not",
        ("outputs/final/model.safetensors",),
        "AssertionError",
        "checkpoint_path",
        ["outputs/final/model.safetensors", "save_pretrained"],
    ),
]


@pytest.mark.parametrize(
    ("ident", "values", "raised", "kind", "words"), CASES + MORE_CASES, ids=[c[0] for c in CASES + MORE_CASES]
)
def test_the_line_as_its_source_prints_it(ident, values, raised, kind, words):
    found = explained(f"{raised}: {line(ident, *values)}\n")
    assert (found.id, found.details.get("confidence", "certain")) == (f"log.{kind}", "certain"), (
        found.id,
        found.summary,
    )
    for word in words:
        assert word in found.summary + found.fix, word


def test_zero_to_fp32_without_its_files_names_the_checkpoint_saved_without_its_state():
    # deepspeed/utils/zero_to_fp32.py: a wrong folder and a checkpoint saved weights-only both leave no state files
    text = line(
        "deepspeed:can-find-files-in-directory", "*_optim_states.pt", "out/checkpoint-500/global_step500"
    )
    found = explained(f"FileNotFoundError: {text}\n")
    assert (found.id, found.details.get("confidence", "certain")) == ("log.checkpoint_path", "likely")
    assert found.details["alternatives"] == ["log.checkpoint_incomplete"]


def test_accelerates_gradient_clipping_refusal_is_read_with_the_two_spaces_it_prints():
    # accelerate/accelerator.py clip_grad_value_: "DeepSpeed and FSDP  do not support" (two spaces; the catalog keeps
    # one)
    found = explained(
        "Exception: DeepSpeed and FSDP  do not support `clip_grad_value_`. Use `clip_grad_norm_` instead.\n"
    )
    assert (found.id, found.details.get("confidence", "certain")) == ("log.trainer_arguments", "certain")
    assert "clip_grad_norm_" in found.fix


TABLES = (
    ("deepspeed_config_mismatch", deepspeed_engine_refusals.TEMPLATES),
    ("dependency_version", version_refusals.TEMPLATES),
    ("trainer_arguments", trainer_arguments.TEMPLATES),
)
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


# a line that a second cause prints too, certain only beside the fact that rules it out
# (test_explain_certainty_review_2.py): --tf32's refusal is also what a torch that sees no CUDA GPU prints
# and DeepSpeed's scalar-loss check is a loss without a graph too (test_explain_certainty_review_3.py)
LIKELY_ALONE = {
    "transformers:tf32-requires-ampere-or-newer-gpu",
    "deepspeed:loss-must-be-scalar-tensor-with",
    "deepspeed:loss-must-be-scalar-tensor-if",
    "deepspeed:optimizer-backward-only-accepts-scalar-tensor",  # the same check in base_optimizer.py (0.18.9+)
    # AutoTP's data check is the script's sampler or an older accelerate's (test_explain_certainty_review_4.py)
    "deepspeed:data-inconsistency-within-the-tp-group",
    # a config in args and in config_params: the script's, or code written for DeepSpeed before 0.9.0 (the same)
    "deepspeed:not-sure-how-to-proceed-we",
    # torch_autocast beside fp16 / bf16, refused by DeepSpeed 0.17.x-0.18.2 only
    "deepspeed:cannot-enable-both-torch-autocast-and-2",
    "deepspeed:cannot-enable-both-torch-autocast-and-3",
    # SyncBatchNorm's 2-D refusal before torch 1.4 is also Pipe's DeferredBatchNorm's (torch 1.8-2.3) and old copies'
    "aten:syncbn-expected-at-least-3d-input",
    # transformers 4.27-4.37's refusal of a quantized model not marked trainable: a bitsandbytes too old to train
    # it, or no adapters, or a quantization method those releases do not train (test_explain_small2.py)
    "third_party:transformers-8bit-model-not-trainable",
}


@pytest.mark.parametrize(
    ("kind", "ident"),
    [(kind, ident) for kind, idents in TABLES for ident in idents if ident not in LIKELY_ALONE],
    ids=lambda v: v,
)
def test_every_cited_template_is_read_as_its_kind(kind, ident):
    # each placeholder a value of the kind sources put there (a count), the line raised as the sources raise it
    text = _PLACEHOLDER.sub("2", by_id()[ident].text).splitlines()[0]
    found = explained(f"ValueError: {text}\n")
    assert (found.id, found.details.get("confidence", "certain")) == (f"log.{kind}", "certain"), (
        ident,
        found.id,
        found.summary,
    )


NEAR_MISSES = [
    # DeepSpeed's INFO lines from a healthy start-up, sharing the refusals' words
    "[INFO] [stage3.py:142:__init__] Reduce bucket size 500000000\n",
    "[INFO] [config.py:1003:print] communication_data_type ........ None\n",
    "[INFO] [engine.py:1300:_configure_optimizer] Creating fp16 ZeRO stage 3 optimizer, MiCS is enabled False, "
    "Hierarchical params gather False\n",
    "[INFO] [config.py:733:__init__] [Elasticity] valid GPU counts: [8, 16, 32]\n",
    "[WARNING] [engine.py:1400:_configure_basic_optimizer] Currently the convergence of 1-bit Adam is only verified "
    "under FP16\n",
    # accelerate's choice of an FP8 backend that was found, and the warning that does not stop a run
    "Found `torchao` installed, using it for FP8 training.\n",
    "UserWarning: Overriding even_batches is only supported for map-style datasets, yet some dataloaders given were "
    "iterable\n",
    # Lightning's and the Trainer's start-up lines
    "Using 16bit Automatic Mixed Precision (AMP)\n",
    "Trainer will use only 1 of 8 GPUs because it is running inside an interactive / notebook environment.\n",
    "  Num update steps per epoch = 125\n",
    "  Total optimization steps = 1,000\n",
    # another library's words that the anchors share in part
    "ValueError: loss must be a tensor, got float\n",
    "AssertionError: num_heads 14 is not divisible by tp size 4\n",
    "RuntimeError: This function needs a GPU\n",
    # accelerate's and DeepSpeed's progress lines about the same folders and parameters
    "INFO:accelerate.accelerator:Loading states from outputs/checkpoint_12\n",
    "[INFO] [partition_parameters.py:350:__exit__] finished initializing model - num_params = 291, num_elems = 6.74B\n",
    "ValueError: Invalid mixed precision policy for the scheduler\n",
]


# the kinds this file's tables map to: none of them may read a near-miss
NEW_KINDS = {
    f"log.{kind}"
    for kind in (
        "deepspeed_config_mismatch",
        "dependency_version",
        "trainer_arguments",
        "fsdp_config_mismatch",
        "zero3_partitioned_weights",
        "checkpoint_path",
    )
}


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_do_not_fire(text):
    found = explained(text)
    assert found.id not in NEW_KINDS, (text, found.id, found.summary)
