"""What the hundred-and-fifty-third and -fourth samples' train files showed explain lacked, each read as a class
from the code that prints the message (session 44, T67): PEFT's missing adapter keys, LLaMA-Factory's and Unsloth's
refusals of several GPUs, torchvision's CUDA check wrapped onto two lines, FSDP flattening bitsandbytes' packed
4-bit weights. Each with the source's own line and the train file's lines."""

from __future__ import annotations

from explaining import explained, lead

# torchvision/extension.py _check_cuda_version: one line as torchvision raises it
TORCHVISION = (
    "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
    "PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1. Please reinstall the torchvision that "
    "matches your PyTorch install.\n"
)


def test_torchvisions_cuda_check_as_it_prints_it_names_both_versions():
    found = explained(TORCHVISION)
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "torchvision was built for CUDA 12.1 and torch for CUDA 11.8" in found.summary
    assert "torchvision" in found.fix


def test_torchvisions_cuda_check_wrapped_onto_two_lines_reads_the_versions_from_the_next():
    # train/7378.txt (Roblox/FAI-RL#47: PyPI's cu128 torch beside the image's cu130 torchvision), the message's
    # second sentence posted on a line of its own
    found = lead("7378.txt")
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "torchvision was built for CUDA 13.0 and torch for CUDA 12.8" in found.summary


def test_torchvisions_cuda_check_cut_before_its_versions_still_names_the_mismatch():
    found = explained(
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions.\n"
    )
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "torchvision was built for another CUDA major version than torch" in found.summary


def test_fsdp_flattening_uint8_beside_a_float_names_bitsandbytes_quant_storage():
    # train/7321.txt (axolotl#1494, FSDP + QLoRA): torch/distributed/fsdp/_flat_param.py's check, as it printed it
    found = lead("7321.txt")
    assert found.id == "log.fsdp_wrap_config" and found.details["confidence"] == "likely"
    assert "(torch.float32 and torch.uint8)" in found.summary and "4-bit" in found.summary
    assert "bnb_4bit_quant_storage=torch.bfloat16" in found.fix and "bitsandbytes 0.43" in found.fix
    # the other reading, the library release's bug its thread named, stays named
    assert "log.library_version_bug" in found.details["alternatives"]


def test_fsdp_flattening_uint8_first_is_read_the_same_way():
    # _flat_param.py names the unit's first dtype, then the one that differs: the packed weight may come first
    found = explained(
        "ValueError: Must flatten tensors with uniform dtype but got torch.uint8 and torch.bfloat16\n"
    )
    assert found.id == "log.fsdp_wrap_config"
    assert "bnb_4bit_quant_storage" in found.fix


def test_fsdp_flattening_two_float_dtypes_keeps_the_cast():
    found = explained(
        "ValueError: Must flatten tensors with uniform dtype but got torch.float16 and torch.float32\n"
    )
    assert found.id == "log.fsdp_wrap_config"
    assert "bnb_4bit_quant_storage" not in found.fix and "model.to(torch.bfloat16)" in found.fix


# peft/peft_model.py PeftModel.from_pretrained's warnings.warn, as Python prints a UserWarning
PEFT_WARNING = (
    "/opt/conda/lib/python3.11/site-packages/peft/peft_model.py:599: UserWarning: Found missing adapter keys while "
    "loading the checkpoint: ['base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight', "
    "'base_model.model.model.layers.0.self_attn.q_proj.lora_B.default.weight'].\n"
    "  warnings.warn(warn_message)\n"
)


def test_peft_missing_adapter_keys_with_compiled_keys_shown_names_the_orig_mod_prefix():
    # train/7326.txt (Soup#335): an adapter saved under torch.compile, every key carrying _orig_mod.; PEFT's warning
    # is the only message, the run exits 0
    found = lead("7326.txt")
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "likely"
    assert "'_orig_mod.'" in found.summary and "torch.compile" in found.summary
    assert "k.replace('_orig_mod.', '')" in found.fix and "model._orig_mod.save_pretrained" in found.fix


def test_peft_missing_adapter_keys_as_peft_prints_it_is_a_likely_state_dict_reading():
    found = explained(PEFT_WARNING)
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "likely"
    assert "2 of them" in found.summary and "lora_A.default.weight" in found.summary
    assert "'_orig_mod.' torch.compile" in found.fix and "adapter_config.json" in found.fix


def test_peft_missing_adapter_keys_of_a_compiled_model_loaded_into_says_the_model_is_wrapped():
    found = explained(PEFT_WARNING.replace("base_model.model.model.", "base_model.model._orig_mod.model."))
    assert found.id == "log.state_dict_keys"
    assert "the model's keys hold '_orig_mod.'" in found.summary and "before torch.compile" in found.fix


def test_peft_missing_adapter_keys_with_the_adapter_name_in_the_prefix_names_it():
    # the same warning, prefixed by PEFT where the adapter's name holds its tuner's prefix
    found = explained(
        PEFT_WARNING.replace(
            "UserWarning: Found",
            "UserWarning: Adapter name 'lora_1' should not be contained in the prefix 'lora_'. This could be the "
            "potential reason for missing adapter keys. Found",
        ).replace(".default.", ".lora_1.")
    )
    assert found.id == "log.state_dict_keys"
    assert "'lora_1' holds the tuner's prefix 'lora_'" in found.summary


def test_peft_missing_adapter_keys_yield_to_an_error_the_log_shows():
    # a warning: the run went on, and what stopped it leads
    found = explained(
        PEFT_WARNING
        + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.10 GiB of which 1.02 GiB is free.\n"
    )
    assert found.id == "log.cuda_oom", found.summary


def test_llamafactorys_refusal_of_unsloth_under_zero3_is_a_one_gpu_trainer():
    # train/7327.txt (LlamaFactory#6940): llamafactory/hparams/parser.py's ValueError, quoted in the poster's sentence
    found = lead("7327.txt")
    assert found.id == "log.multi_gpu_unsupported" and found.details["confidence"] == "likely"
    assert "LLaMA-Factory refuses use_unsloth under DeepSpeed ZeRO-3" in found.summary
    assert "enable_liger_kernel: true" in found.fix


def test_llamafactorys_refusal_as_its_parser_raises_it():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/opt/LLaMA-Factory/src/llamafactory/hparams/parser.py", line 533, in get_train_args\n'
        '    raise ValueError("Unsloth is incompatible with DeepSpeed ZeRO-3.")\n'
        "ValueError: Unsloth is incompatible with DeepSpeed ZeRO-3.\n"
    )
    assert found.id == "log.multi_gpu_unsupported" and found.details["confidence"] == "likely"


def test_unsloths_own_check_of_several_gpus_is_likely():
    # unsloth/tokenizer_utils.py: the check it adds to trl's trainers' train(), raised in code it compiled
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/workspace/train.py", line 88, in <module>\n'
        "    trainer_stats = trainer.train()\n"
        '  File "<string>", line 38, in train\n'
        "RuntimeError: Unsloth currently does not support multi GPU setups - but we are working on it!\n"
    )
    assert found.id == "log.multi_gpu_unsupported" and found.details["confidence"] == "likely"
    assert "CUDA_VISIBLE_DEVICES=0" in found.fix and "another process" in found.fix


def test_unsloths_warning_that_keeps_the_first_gpu_yields_to_an_error():
    # unsloth/__init__.py's warning where CUDA_VISIBLE_DEVICES lists several GPUs: the run goes on, on the first
    warning = (
        "/usr/local/lib/python3.10/dist-packages/unsloth/__init__.py:38: UserWarning: Unsloth: 'CUDA_VISIBLE_DEVICES' "
        "is currently 0,1 \n"
        "Unsloth currently does not support multi GPU setups - but we are working on it!\n"
        "Multiple CUDA devices detected but we require a single device.\n"
        "We will override CUDA_VISIBLE_DEVICES to first device: 0.\n"
        "  warnings.warn(\n"
    )
    alone = explained(warning)
    assert alone.id == "log.multi_gpu_unsupported" and alone.status == "warn", (alone.status, alone.summary)
    assert "kept only the first" in alone.summary
    beside = explained(
        warning + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 14.74 GiB of which 1.02 GiB is free.\n"
    )
    assert beside.id == "log.cuda_oom"
