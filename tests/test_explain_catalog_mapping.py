"""Catalog templates mapped to kinds from the sources that print them, source by source (issue 19: where users' runs
end). Each case is the line as its source prints it, its placeholders filled with values the source puts there,
raised as the source raises it, and read as the kind (and the certainty) it was mapped to; each source has near
misses, lines that share the anchors' words and are not the failure, which must not be read as it.
"""

from __future__ import annotations

import pytest
from explaining import explained, filled

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

# (template id, values for its placeholders, the exception it is raised as, kind, certainty, words of the fix)
TORCH = [
    # torch/distributed/fsdp/_runtime_utils.py _lazy_init, _check_flat_params_on_expected_device, _post_backward_hook
    (
        "torch:fsdp-does-not-support-cpu-only",
        (),
        "RuntimeError",
        "wrapper_usage",
        "certain",
        ["DDP over gloo"],
    ),
    (
        "torch:an-fsdp-managed-module-unexpectedly-has",
        ("cpu", "cuda:0"),
        "RuntimeError",
        "wrapper_usage",
        "certain",
        ["device_id=torch.cuda.current_device()"],
    ),
    (
        "torch:an-fsdp-managed-module-with-parameter",
        ("cuda:3",),
        "RuntimeError",
        "wrapper_usage",
        "certain",
        ["CPUOffload(offload_params=True)"],
    ),
    (
        "torch:fsdp-does-not-support-gradients-of",
        (),
        "RuntimeError",
        "wrapper_usage",
        "certain",
        ["create_graph"],
    ),
    # torch/nn/parallel/distributed.py __getstate__
    (
        "torch:ddp-pickling-unpickling-are-only-supported",
        (),
        "RuntimeError",
        "wrapper_usage",
        "certain",
        ["ddp_model.module.state_dict()"],
    ),
    # torch/distributed/fsdp/fully_sharded_data_parallel.py register_comm_hook
    (
        "torch:communication-hook-is-not-supported-for",
        ("ShardingStrategy.HYBRID_SHARD",),
        "AssertionError",
        "wrapper_usage",
        "certain",
        ["HYBRID_SHARD"],
    ),
    (
        "torch:communication-hook-is-already-registered",
        (),
        "AssertionError",
        "wrapper_usage",
        "certain",
        ["once"],
    ),
    # torch/csrc/distributed/c10d/reducer.cpp: DDP's hook registered twice
    (
        "torch_cpp:register-comm-hook-or-register-builtin",
        (),
        "RuntimeError",
        "wrapper_usage",
        "certain",
        ["DistributedDataParallelKwargs"],
    ),
    # fsdp/_runtime_utils.py, fsdp/_state_dict_utils.py, distributed/checkpoint/state_dict.py
    (
        "torch:fsdp-optimizer-in-backward-only-supported",
        (),
        "RuntimeError",
        "fsdp_config_mismatch",
        "certain",
        ["use_orig_params=True"],
    ),
    (
        "torch:local-state-dict-can-only-be",
        (),
        "RuntimeError",
        "fsdp_config_mismatch",
        "certain",
        ["NO_SHARD"],
    ),
    (
        "torch:sharded-state-dict-can-only-be",
        (),
        "RuntimeError",
        "fsdp_config_mismatch",
        "certain",
        ["NO_SHARD"],
    ),
    (
        "torch:load-sharded-state-dict-can-only",
        (),
        "RuntimeError",
        "fsdp_config_mismatch",
        "certain",
        ["FULL_STATE_DICT"],
    ),
    # torch/distributed/optim/zero_redundancy_optimizer.py state_dict
    (
        "torch:optimizer-state-has-not-been-consolidated",
        ("1",),
        "RuntimeError",
        "wrapper_usage",
        "certain",
        ["consolidate_state_dict(to=0)"],
    ),
    (
        "torch:full-state-dict-must-be-true",
        (),
        "ValueError",
        "fsdp_config_mismatch",
        "certain",
        ["full_state_dict=True"],
    ),
]

# torch/nn/modules/module.py: read alone (no traceback) they are likely, a library's class being the other reading
MODULE = [
    (
        "torch:module-is-missing-the-required-forward",
        ("ModuleList",),
        "NotImplementedError",
        ["for layer in"],
    ),
    ("torch:module-is-missing-the-required-forward", ("Encoder",), "NotImplementedError", ["class Encoder"]),
    ("torch:cannot-assign-module-before-module-init", (), "AttributeError", ["super().__init__()"]),
    ("torch:cannot-assign-parameter-before-module-init", (), "AttributeError", ["super().__init__()"]),
    ("torch:cannot-assign-parameters-before-module-init", (), "AttributeError", ["super().__init__()"]),
    ("torch:cannot-assign-buffer-before-module-init", (), "AttributeError", ["super().__init__()"]),
    (
        "torch:cannot-assign-as-parameter-torch-nn",
        ("torch.cuda.FloatTensor", "weight"),
        "TypeError",
        ["nn.Parameter(t)"],
    ),
    ("torch:cannot-assign-object-to-parameter-torch", ("float", "scale"), "TypeError", ["nn.Parameter(t)"]),
    ("torch:cannot-assign-as-child-module-torch", ("str", "head"), "TypeError", ["nn.Identity()"]),
    ("torch:cannot-assign-as-buffer-torch-nn", ("int", "step"), "TypeError", ["torch.as_tensor"]),
    ("torch:cannot-assign-object-to-buffer-torch", ("list", "anchors"), "TypeError", ["torch.as_tensor"]),
    ("torch:cannot-assign-non-leaf-tensor-to", ("weight", "weight"), "ValueError", ["forward()"]),
]

DEEPSPEED = [
    # deepspeed/runtime/engine.py: the consolidated 16-bit state dict outside ZeRO-3, serial checkpoint loading
    (
        "deepspeed:this-function-requires-zero-mode",
        (),
        "ValueError",
        "deepspeed_config_mismatch",
        "certain",
        ["engine.module.state_dict()"],
    ),
    (
        "deepspeed:consolidated-bit-state-dict-is-only",
        (),
        "ValueError",
        "deepspeed_config_mismatch",
        "certain",
        ["save_16bit_model"],
    ),
    (
        "deepspeed:only-stage3-support-for-pipeline-checkpoint",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        "certain",
        ["pipeline_loading_checkpoint"],
    ),
    # runtime/zero/stage_1_and_2.py, stage3.py, fp16/*_optimizer.py: no accelerator for the fp16/bf16 optimizers;
    # torch seeing no GPU has more than one reason (none there, CUDA_VISIBLE_DEVICES naming absent ones)
    (
        "deepspeed:accelerator-is-not-detected-cannot-perform",
        (),
        "SystemError",
        "cuda_unavailable",
        "likely",
        ["CUDA_VISIBLE_DEVICES"],
    ),
    # runtime/zero/config.py, stage3.py: ZeRO-3's elastic checkpoints; runtime/pipe/module.py; curriculum learning
    (
        "deepspeed:zero-elastic-checkpointing-is-deprecated-and-2",
        (),
        "NotImplementedError",
        "deepspeed_config_mismatch",
        "certain",
        ['"elastic_checkpoint": false'],
    ),
    (
        "deepspeed:partitioning-found-no-valid-layers-to",
        ("type:TransformerBlock",),
        "RuntimeError",
        "deepspeed_config_mismatch",
        "certain",
        ['partition_method="parameters"'],
    ),
    (
        "deepspeed:curriculum-learning-with-fixed-linear-schedule",
        ("total_curriculum_step",),
        "AssertionError",
        "deepspeed_config_mismatch",
        "certain",
        ["schedule_config"],
    ),
    ("deepspeed:cannot-use-fp16-without-accelerator", (), "SystemError", "cuda_unavailable", "likely", []),
    ("deepspeed:cannot-use-without-accelerator", (), "SystemError", "cuda_unavailable", "likely", []),
    (
        "deepspeed:cannot-use-without-accelerator-2",
        ("torch.bfloat16",),
        "SystemError",
        "cuda_unavailable",
        "likely",
        [],
    ),
]

# transformers/trainer.py, trainer_utils.py; accelerate/accelerator.py; lightning's fabric strategies and device parser
FRAMEWORKS = [
    (
        "transformers:the-model-you-have-picked-cannot",
        ("BertModel",),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["AutoModelForSequenceClassification"],
    ),
    (
        "transformers:model-init-should-not-return-none",
        (),
        "RuntimeError",
        "trainer_arguments",
        "certain",
        [],
    ),
    (
        "transformers:model-init-should-have-or-argument",
        (),
        "RuntimeError",
        "trainer_arguments",
        "certain",
        [],
    ),
    ("transformers:the-data-collator-should-be-simple", (), "TypeError", "trainer_arguments", "certain", []),
    (
        "transformers:the-batch-received-was-empty-your",
        ("input_ids,attention_mask,labels,label,label_ids",),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["remove_unused_columns=False"],
    ),
    (
        "transformers:you-cannot-perform-fine-tuning-on",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["get_peft_model"],
    ),
    (
        "transformers:you-cannot-fine-tune-quantized-model",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        [],
    ),
    (
        "transformers:the-model-you-are-trying-to",
        ("gptq", "gptq"),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["PEFT adapters"],
    ),
    (
        "transformers:does-not-support-activation-checkpointing",
        ("T5EncoderModel",),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["gradient_checkpointing=False"],
    ),
    (
        "transformers:is-not-compatible-with-gradient-checkpointing",
        ("MyModel",),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["gradient_checkpointing"],
    ),
    (
        "accelerate:cannot-pickle-prepared-model-with-automatic",
        (),
        "PicklingError",
        "wrapper_usage",
        "certain",
        ["accelerator.unwrap_model(model)"],
    ),
    (
        "accelerate:checkpoint-directory-already-exists-please-manually",
        ("outputs/checkpoints/checkpoint_0", "0"),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["accelerator.load_state()"],
    ),
    (
        "lightning:device-id-gpu-must-be-unique",
        (),
        "MisconfigurationException",
        "trainer_arguments",
        "certain",
        [],
    ),
    (
        "lightning:could-not-find-fsdp-model-in",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["fabric.save"],
    ),
    (
        "lightning:could-not-find-fsdp-model-in-2",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["fabric.load"],
    ),
    ("lightning:found-multiple-fsdp-models-in-the", (), "ValueError", "trainer_arguments", "certain", []),
    ("lightning:found-multiple-fsdp-models-in-the-2", (), "ValueError", "trainer_arguments", "certain", []),
    ("lightning:could-not-find-distributed-model-in", (), "ValueError", "trainer_arguments", "certain", []),
    ("lightning:could-not-find-distributed-model-in-2", (), "ValueError", "trainer_arguments", "certain", []),
    (
        "lightning:found-multiple-distributed-models-in-the",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        [],
    ),
    (
        "lightning:found-multiple-distributed-models-in-the-2",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        [],
    ),
    (
        "lightning:loading-single-optimizer-object-from-checkpoint",
        (),
        "NotImplementedError",
        "trainer_arguments",
        "certain",
        [],
    ),
    (
        "lightning:loading-single-optimizer-object-from-checkpoint-2",
        ("ModelParallelStrategy",),
        "NotImplementedError",
        "trainer_arguments",
        "certain",
        [],
    ),
    (
        "lightning:you-set-use-orig-params-false",
        ("FSDPStrategy",),
        "ValueError",
        "fsdp_config_mismatch",
        "certain",
        ["fabric.setup_module"],
    ),
    (
        "lightning:the-does-not-support-setting-up",
        ("ModelParallelStrategy",),
        "NotImplementedError",
        "fsdp_config_mismatch",
        "certain",
        ["fabric.setup(model, optimizer)"],
    ),
    (
        "lightning:the-does-not-support-the-joint",
        ("XLAFSDPStrategy",),
        "NotImplementedError",
        "fsdp_config_mismatch",
        "certain",
        ["fabric.setup_optimizers"],
    ),
    (
        "lightning:the-sizes-data-parallel-size-and",
        ("2", "4", "4"),
        "RuntimeError",
        "device_mesh_config",
        "certain",
        ["data_parallel_size=2 x tensor_parallel_size=4 != 4"],
    ),
    # a checkpoint with another number of optimizers: the optimizers built differently, or another model's
    (
        "lightning:you-have-configured-optimizers-but-the",
        ("1", "2"),
        "RuntimeError",
        "optimizer_group_mismatch",
        "likely",
        ["a different number of optimizers"],
    ),
    # no GPU that torch sees: more than one reason
    ("lightning:no-supported-gpu-backend-found", (), "RuntimeError", "cuda_unavailable", "likely", []),
    ("accelerate:no-gpu-found-gpu-is-needed", (), "RuntimeError", "cuda_unavailable", "likely", []),
    ("accelerate:no-gpu-or-intel-xpu-found", (), "RuntimeError", "cuda_unavailable", "likely", []),
]

_TOGGLED = "FlashAttention2 has been toggled on, but it cannot be used due to the following error:"

# transformers/modeling_utils.py: the attention implementation asked of from_pretrained; flash-attn's own kernels
ATTENTION = [
    (
        "transformers:does-not-support-flash-attention-yet",
        ("GPT2LMHeadModel", "2", "openai-community/gpt2"),
        "ValueError",
        "attention_implementation",
        "certain",
        ["attn_implementation='sdpa'"],
    ),
    (
        "transformers:does-not-support-an-attention-implementation",
        ("T5ForConditionalGeneration",),
        "ValueError",
        "attention_implementation",
        "certain",
        ["attn_implementation='eager'"],
    ),
    (
        "transformers:does-not-support-an-attention-implementation-2",
        ("BertModel",),
        "ValueError",
        "attention_implementation",
        "certain",
        [],
    ),
    (
        "transformers:flashattention-is-not-available-on-cpu",
        (_TOGGLED, "2", "('cuda', 'xpu')"),
        "ImportError",
        "attention_implementation",
        "certain",
        ["torch.cuda.is_available()"],
    ),
    (
        "transformers:you-are-attempting-to-use-flash-3",
        ("2",),
        "ValueError",
        "attention_implementation",
        "certain",
        [],
    ),
    (
        "transformers:flashattention-requires-compute-capability-but-found",
        (_TOGGLED, "2", "8", "(7, 0)", "7"),
        "ImportError",
        "attention_implementation",
        "certain",
        ["V100"],
    ),
    (
        "transformers:specified-attn-implementation-is-not-supported",
        ("flash_attn_2",),
        "ValueError",
        "attention_implementation",
        "certain",
        ["'flash_attention_2'"],
    ),
    (
        "transformers:specified-attn-implementation-is-not-supported-2",
        ("flash2", "text_config", "['sdpa', 'flash_attention_2']"),
        "ValueError",
        "attention_implementation",
        "certain",
        [],
    ),
    (
        "transformers:is-not-valid-attention-implementation-registered",
        ("flash-attention-2",),
        "KeyError",
        "attention_implementation",
        "certain",
        ["AttentionInterface.register"],
    ),
    (
        "third_party:flash-attn-ampere-or-newer",
        (),
        "RuntimeError",
        "attention_implementation",
        "certain",
        ["compute capability 8.0"],
    ),
]


def _read(ident: str, values: tuple[str, ...], raised: str):
    text = filled(ident, *values)
    assert "{}" not in text, f"{ident}: a placeholder left unfilled"
    return explained(f"{raised}: {text}\n")


@pytest.mark.parametrize(
    ("ident", "values", "raised", "kind", "confidence", "words"), TORCH + DEEPSPEED + FRAMEWORKS
)
def test_the_line_as_its_source_prints_it(ident, values, raised, kind, confidence, words):
    found = _read(ident, values, raised)
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", confidence), (ident, found.summary)
    assert by_id()[ident].kind == kind
    for word in words:
        assert word in found.summary + found.fix, (word, found.fix)


@pytest.mark.parametrize(("ident", "values", "raised", "words"), MODULE)
def test_a_module_class_torch_refuses_is_likely_alone_and_names_a_librarys_release(
    ident, values, raised, words
):
    found = _read(ident, values, raised)
    assert (found.id, found.details["confidence"]) == ("log.module_definition", "likely"), found.summary
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert by_id()[ident].kind == "module_definition"
    for word in words:
        assert word in found.summary + found.fix, (word, found.fix)


def _traceback(user_line: str, torch_frame: str, error: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 88, in <module>\n'
        "    model = Net()\n"
        '  File "/home/ana/project/model.py", line 12, in __init__\n'
        f"    {user_line}\n"
        f'  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1745, in {torch_frame}\n'
        "    raise\n"
        f"{error}\n"
    )


QUANTIZED = [
    ("transformers:half-is-not-supported-for-quantized", ()),
    ("transformers:float-is-not-supported-for-quantized", ()),
    ("transformers:calling-cuda-is-not-supported-for", ()),
    ("transformers:you-cannot-cast-bitsandbytes-model-in", ()),
    ("transformers:you-cannot-cast-gptq-model-in", ()),
    ("transformers:casting-quark-quantized-model-to-new", ()),
]


@pytest.mark.parametrize(("ident", "values"), QUANTIZED)
def test_a_quantized_model_cast_alone_is_likely_and_names_a_frameworks_release(ident, values):
    # transformers/modeling_utils.py PreTrainedModel.half / float / cuda / to
    found = _read(ident, values, "ValueError")
    assert (found.id, found.details["confidence"]) == ("log.quantized_model_cast", "likely"), found.summary
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert "quantization_config" in found.fix
    assert by_id()[ident].kind == "quantized_model_cast"


def test_the_scripts_own_cast_of_a_quantized_model_is_certain():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 40, in <module>\n'
        "    model = model.half()\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py", line 3786, in half\n'
        "    raise ValueError(\n"
        "ValueError: `.half()` is not supported for quantized model. Please use the model as it is, since the model "
        "has already been casted to the correct `dtype`.\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.quantized_model_cast", "certain"), found.summary


def test_a_frameworks_cast_of_a_quantized_model_stays_likely():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 60, in <module>\n'
        "    model = accelerator.prepare(model)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py", line 1400, in prepare_model\n'
        "    model = model.to(self.device, dtype=torch.bfloat16)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py", line 3766, in to\n'
        "    raise ValueError(\n"
        "ValueError: You cannot cast a bitsandbytes model in a new `dtype`. Make sure to load the model using "
        "`from_pretrained` using the desired `dtype` by passing the correct `dtype` argument.\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.quantized_model_cast", "likely"), found.summary


# transformers/modeling_utils.py _get_resolved_checkpoint_files: a folder or repository without the model's weights,
# a wrong path and a save that never wrote them print the same words
WEIGHTS_MISSING = [
    (
        "transformers:does-not-appear-to-have-file",
        ("outputs/run1", "pytorch_model.fp16.bin", "fp16"),
        "outputs/run1",
    ),
    (
        "transformers:does-not-appear-to-have-file-2",
        ("outputs/lora-run", "pytorch_model.bin", "model.safetensors"),
        "outputs/lora-run",
    ),
    (
        "transformers:does-not-appear-to-have-file-3",
        ("org/model", "model.safetensors", "model.safetensors.index.json"),
        "org/model",
    ),
    ("transformers:error-no-file-named-found-in", ("model.safetensors", "outputs/final"), "outputs/final"),
    (
        "transformers:error-no-file-named-or-found",
        ("model.safetensors", "pytorch_model.bin", "outputs/checkpoint-500"),
        "outputs/checkpoint-500",
    ),
]


@pytest.mark.parametrize(("ident", "values", "path"), WEIGHTS_MISSING)
def test_a_pretrained_folder_without_weights_is_a_likely_checkpoint_path(ident, values, path):
    found = _read(ident, values, "OSError")
    assert (found.id, found.details["confidence"]) == ("log.checkpoint_path", "likely"), found.summary
    assert found.details["alternatives"] == ["log.checkpoint_incomplete"]
    assert path in found.summary and "PeftModel.from_pretrained" in found.fix
    assert by_id()[ident].kind == "checkpoint_path"


@pytest.mark.parametrize(
    ("ident", "key"),
    [
        # lightning/fabric/strategies/model_parallel.py, strategy.py: fabric.load(strict=True), a key the file lacks
        ("lightning:the-model-contains-key-that-does", "model.layers.0.self_attn.q_proj.weight"),
        ("lightning:the-requested-state-contains-key-that", "scheduler"),
    ],
)
def test_fabrics_strict_load_missing_a_key_is_a_likely_state_dict_keys(ident, key):
    found = _read(ident, (key,), "KeyError")
    assert (found.id, found.details["confidence"]) == ("log.state_dict_keys", "likely"), found.summary
    assert "strict=False" in found.fix
    assert by_id()[ident].kind == "state_dict_keys"


def test_fabrics_strict_load_naming_a_prefixed_model_key_is_only_likely():
    # _load_raw_module_state names the MODEL's key the checkpoint lacks: 'module.' on it is a wrapped model (or
    # a submodule called module), not a checkpoint saved through DDP, and one key does not say which
    # (the certainty review's sixth part, tests/test_explain_certainty_review_6.py)
    found = _read("lightning:the-model-contains-key-that-does", ("module.encoder.weight",), "KeyError")
    assert (found.id, found.details["confidence"]) == ("log.state_dict_keys", "likely"), found.summary
    assert "saved through" not in found.summary and "strict=False" in found.fix


def test_a_dataloader_timeout_names_the_seconds_and_how_to_tell_slow_from_stuck():
    # torch/utils/data/dataloader.py _MultiProcessingDataLoaderIter._get_data, with timeout > 0
    found = _read("torch:dataloader-timed-out-after-seconds", ("120",), "RuntimeError")
    assert (found.id, found.details["confidence"]) == ("log.dataloader_timeout", "certain"), found.summary
    assert "(120 s)" in found.summary and "num_workers=0" in found.fix
    assert by_id()["torch:dataloader-timed-out-after-seconds"].kind == "dataloader_timeout"


def test_peft_target_modules_of_another_architecture_name_the_modules_and_how_to_list_them():
    # peft/tuners/tuners_utils.py BaseTuner.inject_adapter (get_peft_model)
    found = _read("third_party:peft-target-modules-of-another-model", ("{'q_proj', 'v_proj'}",), "ValueError")
    assert (found.id, found.details["confidence"]) == ("log.peft_target_modules", "certain"), found.summary
    assert "{'q_proj', 'v_proj'}" in found.summary and "named_modules()" in found.fix
    assert by_id()["third_party:peft-target-modules-of-another-model"].kind == "peft_target_modules"
    # the shorthand 'all-linear' that a peft before 0.8 took for a module name is a release's, not this kind
    older = explained(
        "ValueError: Target modules all-linear not found in the base model. Please check the target modules and try "
        "again.\n"
    )
    assert older.id == "log.dependency_version", older.summary


def test_the_cudnn_mismatch_is_read_with_either_ending_torch_gives_it():
    # torch/backends/cudnn/__init__.py: the same message ends by whether LD_LIBRARY_PATH names a cuda/cudnn folder
    start = (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found runtime "
        "version (8, 9, 2). PyTorch already comes bundled with cuDNN. One option to resolving this error is to "
        "ensure PyTorch can find the bundled cuDNN. "
    )
    for ident, values in (
        ("torch:looks-like-your-ld-library-path", ("", "(9, 1, 0)")),
        ("torch:one-possibility-is-that-there-is", ("",)),
    ):
        found = explained(start + filled(ident, *values) + "\n")
        assert (found.id, found.details["confidence"]) == ("log.cudnn_version_mismatch", "certain"), (
            found.summary
        )
        assert by_id()[ident].kind == "cudnn_version_mismatch"


@pytest.mark.parametrize(
    ("user_line", "torch_frame", "error", "word"),
    [
        (
            "self.conv1 = nn.Conv2d(3, 16, 3)",
            "__setattr__",
            "AttributeError: cannot assign module before Module.__init__() call",
            "super().__init__()",
        ),
        # a ModuleList called from the script's forward: iterate over it
        (
            "x = self.blocks(x)",
            "_call_impl",
            'NotImplementedError: Module [ModuleList] is missing the required "forward" function',
            "for layer in self.layers",
        ),
    ],
)
def test_the_scripts_own_module_class_refused_by_torch_is_certain(user_line, torch_frame, error, word):
    found = explained(_traceback(user_line, torch_frame, error))
    assert (found.id, found.details["confidence"]) == ("log.module_definition", "certain"), found.summary
    assert word in found.fix


NEAR_MISSES = [
    # FSDP's own start-up warnings and INFO lines that share the anchors' words
    "UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.FULL_SHARD since the world size "
    "is 1.\n",
    "UserWarning: The passed-in `module` is on CPU and will thus have FSDP's sharding initialization run on CPU, "
    "which may be slower than on GPU.\n",
    "INFO: registering communication hook allreduce_hook on the root FSDP instance\n",
    # a module's repr and a healthy DeepSpeed start-up
    "  (blocks): ModuleList(\n",
    "[INFO] [engine.py:1300:_configure_optimizer] Creating fp16 ZeRO stage 3 optimizer, MiCS is enabled False\n",
    "[INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)\n",
    "[INFO] [engine.py:3500:save_16bit_model] Saving model weights to out/pytorch_model.bin, tag: global_step10\n",
    # words a script prints about its own modules
    "Loaded weights into the model; forward function ready\n",
    "note: consolidated the state dict on rank 0\n",
    # the Trainer's and Lightning's start-up lines beside the refusals' words
    "***** Running training *****\n  Num examples = 1,000\n",
    "Saving model checkpoint to outputs/checkpoint-500\n",
    "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]\n",
    "GPU available: True (cuda), used: True\n",
    "Restoring states from the checkpoint path at lightning_logs/version_0/checkpoints/last.ckpt\n",
    "bitsandbytes: loading the model in 4-bit for quantization\n",
    # accelerate's warning on a healthy quantized load that moves a CPU model to the GPU
    "The model device type is cpu. However, gpu or intel xpu is needed for quantization.We move the model to it.\n",
    # a healthy cuDNN report and a ZeRO optimizer being consolidated as it should
    # DeepSpeed's start-up warning of a setting that fails only when a ZeRO-3 checkpoint is written (config.py)
    "[WARNING] [config.py:288:__init__] ZeRO-3 elastic checkpointing is deprecated and no longer supported. Use "
    "Universal Checkpointing instead.\n",
    "cuDNN version: 90100 (LD_LIBRARY_PATH=/usr/local/cuda/lib64)\n",
    "INFO: consolidating the optimizer state on rank 0 before saving\n",
    # a healthy load that names the attention implementation, and a quantized load
    "Using attn_implementation='flash_attention_2' (FlashAttention 2.6.3)\n",
    "Loading checkpoint shards: 100%|##########| 4/4, model quantized with bitsandbytes 4-bit\n",
    "RuntimeError: this kernel requires compute capability >= 8.0\n",
    # from_pretrained finding what it looks for
    "loading weights file outputs/final/model.safetensors\n",
    "trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622 (target modules q_proj, v_proj)\n",
    "DataLoader(num_workers=8, timeout=120) created; 1250 batches per epoch\n",
    # transformers' own warning when gradient checkpointing is on, from a healthy run
    "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.\n",
    "Restored all states from the checkpoint at lightning_logs/checkpoints/epoch=3.ckpt (every key loaded)\n",
    "loading file tokenizer.json from cache at /root/.cache/huggingface/hub/models--gpt2/tokenizer.json\n",
]

MAPPED_KINDS = {
    "log.wrapper_usage",
    "log.fsdp_config_mismatch",
    "log.module_definition",
    "log.deepspeed_config_mismatch",
    "log.cuda_unavailable",
    "log.trainer_arguments",
    "log.device_mesh_config",
    "log.optimizer_group_mismatch",
    "log.cudnn_version_mismatch",
    "log.attention_implementation",
    "log.quantized_model_cast",
    "log.checkpoint_path",
    "log.state_dict_keys",
    "log.dataloader_timeout",
    "log.peft_target_modules",
}


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_do_not_fire(text):
    found = explained(text)
    assert found.id not in MAPPED_KINDS, (text, found.id, found.summary)
