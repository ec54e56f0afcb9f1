"""The fifty-sixth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2617-2627)."""

from __future__ import annotations

from explaining import certain, explained


def likely(text: str, kind: str):
    """The lead finding on ``text``: asserted to be ``kind``, only likely."""
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    return found


# trl/trainer/sft_trainer.py SFTTrainer.__init__ (TRL 1.0+): padding_free on, packing off, max_length set
PADDING_FREE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/trl/trainer/sft_trainer.py", line 702, in __init__\n'
    "    raise ValueError(\n"
    "ValueError: When `padding_free=True` without packing, `max_length` is not enforced. Either enable packing "
    "(e.g., `packing=True, packing_strategy='bfd'`), provide already truncated inputs, or set `max_length=None`.\n"
)


def test_trls_padding_free_check_names_the_library_on_top_and_where_packing_goes():
    found = likely(PADDING_FREE, "library_version_bug")
    assert "SFTConfig" in found.fix and "padding_free=False" in found.fix and "trl<1.0" in found.fix


def test_trls_padding_free_warning_about_attention_is_not_the_refusal():
    found = explained(
        "Padding-free training is enabled, but the attention implementation is not set to a supported Flash "
        "Attention variant. Padding-free training flattens batches into a single sequence.\n"
    )
    assert found.id != "log.library_version_bug"


# torch/distributed/fsdp/_flat_param.py: a wrapped unit holding integer tensors
def test_fsdp_flattening_integer_tensors_names_the_4bit_storage_dtype():
    found = certain(
        "[rank0]: ValueError: Cannot flatten integer dtype tensors\n",
        "fsdp_wrap_config",
    )
    assert "bnb_4bit_quant_storage" in found.fix and "integer tensors" in found.summary


def test_fsdp_refusing_to_flatten_a_flat_parameter_is_not_integer_storage():
    found = explained("ValueError: Cannot flatten a `FlatParameter`\n")
    assert "bnb_4bit_quant_storage" not in found.fix


# CPython's AttributeError from torch/utils/data/sampler.py BatchSampler.__len__ (if self.drop_last:)
NO_DROP_LAST = (
    "Traceback (most recent call last):\n"
    '  File "tools/train_net.py", line 61, in main\n'
    "    num_batches = len(train_loader)\n"
    '  File "/usr/lib/python3/dist-packages/torch/utils/data/sampler.py", line 283, in __len__\n'
    "    if self.drop_last:\n"
    "AttributeError: 'GroupedBatchSampler' object has no attribute 'drop_last'\n"
)


def test_len_of_a_loader_with_a_grouped_batch_sampler_says_it_has_no_length():
    found = likely(NO_DROP_LAST, "dataloader_has_no_len")
    assert "GroupedBatchSampler" in found.summary and "len()" in found.fix and "drop_last" in found.fix


def test_a_data_loader_without_drop_last_is_not_a_batch_sampler():
    found = explained("AttributeError: 'DataLoader' object has no attribute 'drop_last'\n")
    assert found.id != "log.dataloader_has_no_len"


# CPython's TypeError from rsl_rl/runners/on_policy_runner.py: alg_class(..., multi_gpu_cfg=self.multi_gpu_cfg)
RSL_RL = (
    '  File "/home/ana/rsl_rl/rsl_rl/runners/on_policy_runner.py", line 75, in __init__\n'
    "    self.alg: PPO = alg_class(policy, device=self.device, **self.alg_cfg, multi_gpu_cfg=self.multi_gpu_cfg)\n"
    "TypeError: PPO.__init__() got an unexpected keyword argument 'multi_gpu_cfg'\n"
)


def test_rsl_rls_runner_passing_multi_gpu_cfg_says_the_rsl_rl_is_newer_than_the_code():
    found = likely(RSL_RL, "dependency_version")
    assert "rsl_rl" in found.summary and "multi_gpu_cfg" in found.fix and "rsl-rl-lib" in found.fix


def test_another_unexpected_keyword_of_ppo_is_not_rsl_rls_runner():
    found = explained("TypeError: PPO.__init__() got an unexpected keyword argument 'clip_range_vf_typo'\n")
    assert "multi_gpu_cfg" not in found.fix
