"""DeepSpeed refusing a setting of Ulysses sequence parallelism or of its process groups, read as
deepspeed_config_mismatch (kinds/deepspeed_engine_refusals.py): the catalog's templates filled in as
ulysses_sp.py and groups.py print them (DeepSpeed is not installed here), and near misses."""

from __future__ import annotations

import pytest
from explaining import explained, filled, leads_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

ULYSSES = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/project/sft.py", line 74, in <module>\n'
    "    mpu = UlyssesSPAttentionHF.register_with_transformers(model_name_or_path=model, {call})\n"
    '  File "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/sequence_parallel/ulysses_sp.py", line 483, '
    "in register_with_transformers\n"
    "    raise ValueError(\n"
    "ValueError: {message}\n"
)


def test_an_attention_ulysses_does_not_know():
    message = filled(
        "deepspeed:is-not-valid-attn-implementation-the",
        "eager",
        "['flash_attention_3', 'flash_attention_2', 'flex_attention', 'sdpa']",
    )
    leads_with(
        ULYSSES.format(call="core_attn_implementation='eager'", message=message),
        "deepspeed_config_mismatch",
        "certain",
        ["eager is not a valid attn_implementation", "'sdpa'", "register_with_transformers"],
    )


def test_a_fixed_length_never_given():
    message = filled("deepspeed:either-seq-length-is-variable-needs")
    leads_with(
        ULYSSES.format(call="seq_length_is_variable=False", message=message),
        "deepspeed_config_mismatch",
        "certain",
        ["seq_length_is_variable=True", "seq_length=<the fixed length"],
    )


def test_a_batch_tensor_of_another_length():
    message = filled(
        "deepspeed:shape-must-match-input-ids-shape",
        "labels",
        "torch.Size([2, 4095])",
        "torch.Size([2, 4096])",
    )
    leads_with(
        f"ValueError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ["labels's shape torch.Size([2, 4095])", "per-token tensors"],
    )


def test_quantized_gradients_on_part_of_a_node():
    message = filled("deepspeed:num-gpus-not-equal-to-device")
    leads_with(
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/deepspeed/utils/groups.py", line 684, in '
        "_get_local_all_to_all_group\n"
        f"AssertionError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ["zero_quantized_gradients", "multiple of the GPUs each node"],
    )


def test_expert_data_order_beside_model_parallelism():
    message = filled("deepspeed:use-data-before-expert-parallel-is")
    leads_with(
        f"NotImplementedError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ['"use_data_before_expert_parallelism": false'],
    )


def test_transformers_own_attention_refusal_is_not_ulysses():
    found = explained(
        'ValueError: Specified `attn_implementation="flash_attention_3"` is not supported. The only possible '
        'arguments are `attn_implementation="eager"`\n'
    )
    assert found.id != "log.deepspeed_config_mismatch", found.summary


def test_the_optimizers_scalar_check_stays_likely_as_the_engines():
    message = filled("deepspeed:optimizer-backward-only-accepts-scalar-tensor")
    leads_with(
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/base_optimizer.py", line 435, in backward\n'
        f"AssertionError: {message}\n",
        "deepspeed_config_mismatch",
        "likely",
        ["loss.mean()", "torch.no_grad()"],
    )


def test_a_closure_handed_to_the_bf16_optimizer():
    message = filled(
        "deepspeed:does-not-support-closure", "<class 'deepspeed.runtime.bf16_optimizer.BF16_Optimizer'>"
    )
    leads_with(
        f"NotImplementedError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ["BF16_Optimizer'> does not support closure", "engine.step()", "LBFGS"],
    )


def test_zero3_only_helpers_under_stage_two():
    message = filled("deepspeed:this-api-is-only-defined-for")
    leads_with(
        f"AssertionError: {message}\n", "deepspeed_config_mismatch", "certain", ["safe_get_full_fp32_param"]
    )


def test_torch_autocast_beside_a_bf16_model_in_017():
    message = filled("deepspeed:all-parameters-must-be-float32-for")
    leads_with(
        f"AssertionError: {message}\n", "deepspeed_config_mismatch", "certain", ["torch_autocast", "0.18.3+"]
    )


def test_a_plain_optimizer_closure_is_not_deepspeeds():
    found = explained("TypeError: step() got an unexpected keyword argument 'closure'\n")
    assert found.id != "log.deepspeed_config_mismatch", found.summary


def test_batch_values_beside_elasticity():
    message = filled(
        "deepspeed:one-or-more-batch-related-parameters",
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "'ignore_non_elastic_batch_info",
    )
    leads_with(
        f"deepspeed.elasticity.config.ElasticityConfigError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ["elasticity", '"ignore_non_elastic_batch_info": true'],
    )


def test_a_sparse_attention_mode_misspelt():
    message = filled("deepspeed:given-sparsity-mode-has-not-been", "bigbrd")
    leads_with(
        f"NotImplementedError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ["bigbrd", "bslongformer"],
    )


def test_another_librarys_unimplemented_mode_is_not_deepspeeds():
    found = explained(
        "NotImplementedError: Given interpolation mode, bicubic, has not been implemented yet!\n"
    )
    assert found.id != "log.deepspeed_config_mismatch", found.summary


def test_an_old_moe_checkpoint_into_autoep_layers():
    message = filled("deepspeed:legacy-checkpoint-format-old-moe-load")
    leads_with(
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 4019, in '
        "_load_checkpoint\n"
        f"RuntimeError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ["ds_to_universal", '"load_universal": true'],
    )


def test_a_pipeline_modules_state_asked_outside_save_checkpoint():
    message = filled("deepspeed:pipelineengine-expects-module-state-dict-to")
    leads_with(
        f"AssertionError: {message}\n", "deepspeed_config_mismatch", "certain", ["engine.save_checkpoint("]
    )


def test_a_second_zero_init_under_hpz_names_the_hpz_setting_and_the_group_to_reuse():
    # utils/groups.py asserts when zero.Init (partition_parameters.py, which makes the hpZ group unless handed one)
    # runs a second time in a process: here a DPO script's reference model loaded after the policy, under ZeRO-3
    # with "zero_hpz_partition_size" above 1 (deepspeedai/DeepSpeed#4901, #7066); the frames as 0.16's source has them
    message = filled("deepspeed:zero-parameter-intra-parallel-group-is")
    found = leads_with(
        "[2025-02-20 10:12:31,402] [INFO] [partition_parameters.py:348:__exit__] finished initializing model - "
        "num_params = 291, num_elems = 7.24B\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/train_dpo.py", line 120, in <module>\n'
        "    ref_model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py", line 3594, in '
        "from_pretrained\n"
        "    init_contexts = [deepspeed.zero.Init(config_dict_or_path=deepspeed_config())] + init_contexts\n"
        '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/partition_parameters.py", line 978, '
        "in __init__\n"
        "    groups._create_zero_param_parallel_group(_ds_config.zero_config.zero_hpz_partition_size)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/utils/groups.py", line 663, in '
        "_create_zero_param_parallel_group\n"
        "    assert _ZERO_PARAM_INTRA_PARALLEL_GROUP is None, \\\n"
        f"AssertionError: {message}\n",
        "deepspeed_config_mismatch",
        "certain",
        ['"zero_hpz_partition_size": 1', "second deepspeed.zero.Init", "zero_param_parallel_group="],
    )
    assert "train_dpo.py:120" in found.fix, found.fix
