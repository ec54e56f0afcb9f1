"""Warnings of runs that work but not as meant, read from the sources that print them (kinds/trained_on_cpu.py,
compile_recompiles.py, settings_ignored.py, deepspeed_slow_collectives.py, and loop_warnings.py's session-39
readings): each wording filled as its source fills it is its kind, likely, where the log holds no error; beside an
error the error leads; the lines a healthy run prints in their place are no finding."""

from __future__ import annotations

import pytest
from explaining import explained, filled

pytestmark = pytest.mark.usefixtures("every_message_seen")

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.69 GiB "
    "of which 1.12 GiB is free.\n"
)
WARNED = "/usr/lib/python3.10/site-packages/x.py:12: UserWarning: "


@pytest.mark.parametrize(
    ("ident", "values", "kind"),
    [
        ("third_party:lightning-gpu-available-but-not-used-0-7", (), "trained_on_cpu"),
        ("third_party:lightning-gpu-available-but-not-used-1-0", (), "trained_on_cpu"),
        ("third_party:lightning-gpu-available-but-not-used-1-6", ("4",), "trained_on_cpu"),
        ("third_party:lightning-gpu-available-but-not-used-2", (), "trained_on_cpu"),
        ("third_party:lightning-gpu-available-used-false", (" (cuda)",), "trained_on_cpu"),
        ("third_party:lightning-gpu-available-used-false", ("",), "trained_on_cpu"),
        ("torch_native:grad-scaler-enabled-cuda-not-available", (), "trained_on_cpu"),
        ("torch_native:autocast-cuda-not-available-device-type", (), "trained_on_cpu"),
        ("torch_native:autocast-cuda-not-available-or-torch-xla", (), "trained_on_cpu"),
        ("torch_native:dynamo-hit-recompile-limit", ("recompile_limit", "8"), "compile_recompile_limit"),
        ("torch_native:dynamo-hit-recompile-limit", ("cache_size_limit", "64"), "compile_recompile_limit"),
        ("lightning:you-defined-validation-step-but-have", (), "validation_loop_skipped"),
        ("lightning:you-passed-in-val-dataloader-but", (), "validation_loop_skipped"),
        ("lightning:you-passed-trainer-accelerator-cpu-precision", (), "trained_on_cpu"),
        ("third_party:lightning-cpu-precision-16-native-amp", (), "trained_on_cpu"),
        ("third_party:lightning-devices-flag-ignored", ("4", "1"), "devices_flag_ignored"),
        ("transformers:there-seems-not-to-be-single", ("1200", "5000"), "data_ran_out_before_max_steps"),
        (
            "third_party:transformers-not-a-single-sample-epoch-iterator-old",
            ("1200", "5000"),
            "data_ran_out_before_max_steps",
        ),
        ("torch_native:checkpoint-none-of-the-inputs-require-grad", (), "checkpoint_inputs_no_grad"),
        ("deepspeed:unable-to-find-torch-distributed-all", (), "deepspeed_slow_collectives"),
        ("deepspeed:unable-to-find-torch-distributed-reduce", (), "deepspeed_slow_collectives"),
        ("deepspeed:unable-to-find-torch-distributed-all-2", (), "deepspeed_slow_collectives"),
        ("deepspeed:unable-to-find-torch-distributed-reduce-3", (), "deepspeed_slow_collectives"),
        (
            "torch_native:loss-target-size-broadcast",
            ("torch.Size([32])", "torch.Size([32, 1])"),
            "loss_target_broadcast",
        ),
        (
            "accelerate:gradient-accumulation-steps-mismatch-gradientaccumulationplugin-has",
            ("8", "1"),
            "grad_accumulation_overridden",
        ),
    ],
)
def test_each_wording_alone_is_its_likely_kind_and_never_beside_an_error(ident, values, kind):
    warning = WARNED + filled(ident, *values)
    found = explained(warning + "\n")
    assert (found.id, found.details["confidence"], found.status) == (f"log.{kind}", "likely", "warn"), (
        ident,
        found.summary,
    )
    beside = explained(warning + "\n" + OOM)
    assert beside.id == "log.cuda_oom", (ident, beside.summary)


# Lightning's device lines of a run on the GPU, and of a machine with none: nothing to find
@pytest.mark.parametrize(
    "line",
    [
        "GPU available: True (cuda), used: True",
        "GPU available: True, used: True",
        "GPU available: False, used: False",
        "TPU available: False, using: 0 TPU cores",
    ],
)
def test_the_device_line_of_a_run_on_the_gpu_or_without_one_is_no_finding(line):
    found = explained(line + "\nEpoch 0: 100%|##########| 10/10 [00:01<00:00, 9.50it/s, v_num=0]\n")
    assert found.id == "log.unrecognised", (line, found.summary)


def test_lightning_on_the_cpu_says_which_trainer_setting_and_why_it_is_slow():
    found = explained(
        "GPU available: True (cuda), used: False\nTPU available: False, using: 0 TPU cores\n"
        "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/trainer/setup.py:177: PossibleUserWarning: GPU "
        "available but not used. You can set it by doing `Trainer(accelerator='gpu')`.\n"
    )
    assert found.id == "log.trained_on_cpu" and "Lightning found a GPU" in found.summary, found.summary
    assert "accelerator='gpu', devices=N" in found.fix and "nvidia-smi" in found.fix


def test_autocast_disabled_says_torch_sees_no_gpu_and_how_to_check():
    found = explained(
        "/home/u/.local/lib/python3.9/site-packages/torch/autocast_mode.py:162: UserWarning: User provided "
        "device_type of 'cuda', but CUDA is not available. Disabling\n"
        "  warnings.warn('User provided device_type of \\'cuda\\', but CUDA is not available. Disabling')\n"
        "Loss:  0.9986863136291504  AUC:  0.5069040816326531\n"
    )
    assert found.id == "log.trained_on_cpu" and "CUDA is not available" in found.summary, found.summary
    assert "torch.version.cuda" in found.fix and "CUDA_VISIBLE_DEVICES" in found.fix


# the warning as torch 2.x's logging prints it (a [frame/compile] prefix on each line), function and reason read
def test_the_recompile_limit_names_the_function_the_limit_and_the_last_reason():
    prefix = "W1107 09:47:09.123000 1234 torch/_dynamo/convert_frame.py:1676] [0/8] "
    lines = (
        "torch._dynamo hit config.recompile_limit (8)",
        "   function: 'forward' (/home/u/modeling_llama.py:637)",
        "   last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9",
        'To log all recompilation reasons, use TORCH_LOGS="recompiles".',
    )
    found = explained("".join(prefix + line + "\n" for line in lines))
    assert found.id == "log.compile_recompile_limit", found.summary
    for words in (
        "'forward' (/home/u/modeling_llama.py:637)",
        "after 8 recompilations",
        "size mismatch at index 0",
    ):
        assert words in found.summary, (words, found.summary)
    assert "mark_dynamic" in found.fix and "torch._dynamo.config.recompile_limit" in found.fix


# torch 2.4's raise of the same limit under fullgraph is an error of its own, not this warning's reading
def test_a_recompile_limit_raised_under_fullgraph_is_not_the_warning():
    found = explained("torch._dynamo.exc.Unsupported: cache_size_limit reached\n")
    assert found.id != "log.compile_recompile_limit", found.summary


def test_a_skipped_val_loop_names_the_missing_half():
    found = explained(WARNED + filled("lightning:you-passed-in-val-dataloader-but") + "\n")
    assert "no validation_step" in found.summary and "validation_step(self, batch, batch_idx)" in found.fix
    found = explained(WARNED + filled("lightning:you-defined-validation-step-but-have") + "\n")
    assert "no val_dataloader" in found.summary and "val_dataloaders=" in found.fix


# Lightning's sync_dist advice is printed by most healthy multi-GPU runs that log on epoch level: no finding alone
def test_the_sync_dist_advice_leads_nothing():
    found = explained(WARNED + filled("third_party:lightning-log-sync-dist-recommended", "'val_loss'") + "\n")
    assert found.id == "log.unrecognised", found.summary


def test_lightning_16_bit_on_the_cpu_says_the_trainer_resolved_to_the_cpu():
    found = explained(WARNED + filled("lightning:you-passed-trainer-accelerator-cpu-precision") + "\n")
    assert "resolved to the CPU" in found.summary and "precision='16-mixed'" in found.fix, found.summary


def test_devices_ignored_names_both_numbers():
    found = explained(WARNED + filled("third_party:lightning-devices-flag-ignored", "4", "1") + "\n")
    assert "devices=4 ignored, 1 used" in found.summary and "drop gpus=" in found.fix, found.summary


# the Trainer's warning as its logger prints it, both numbers read
def test_the_data_running_out_names_the_step_and_max_steps():
    found = explained(
        "[WARNING|trainer.py:2278] 2024-03-01 10:00:00,000 >> There seems not to be a single sample in your "
        "epoch_iterator, stopping training at step 1200! This is expected if you're using an IterableDataset and "
        "set num_steps (5000) higher than the number of available samples.\n"
    )
    assert found.id == "log.data_ran_out_before_max_steps", found.summary
    assert "at step 1200 of max_steps=5000" in found.summary and "split_dataset_by_node" in found.fix


def test_a_checkpoint_without_input_gradients_says_the_adapters_never_train():
    found = explained(
        "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:31: UserWarning: None of the inputs have "
        "requires_grad=True. Gradients will be None\n"
        '  warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")\n'
        "{'loss': 2.3026, 'learning_rate': 0.0002, 'epoch': 0.1}\n"
    )
    assert found.id == "log.checkpoint_inputs_no_grad", found.summary
    assert "enable_input_require_grads" in found.fix and "'use_reentrant': False" in found.fix


# the error LoRA with reentrant checkpointing raises where nothing else needs a gradient leads over the warning
def test_the_checkpoint_warning_beside_the_no_grad_error_is_not_the_finding():
    found = explained(
        "/usr/lib/python3/torch/utils/checkpoint.py:31: UserWarning: None of the inputs have requires_grad=True. "
        "Gradients will be None\n"
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"
    )
    assert found.id != "log.checkpoint_inputs_no_grad", found.summary


def test_deepspeed_fallback_names_the_missing_collectives():
    found = explained(
        "[WARNING] [comm.py:152:init_deepspeed_backend] "
        + filled("deepspeed:unable-to-find-torch-distributed-all")
        + "\n[WARNING] [comm.py:152:init_deepspeed_backend] "
        + filled("deepspeed:unable-to-find-torch-distributed-reduce")
        + "\n"
    )
    assert "all_gather_into_tensor, reduce_scatter_tensor missing" in found.summary, found.summary
    assert "1.13" in found.fix


# accelerate's warning as its logger prints it under accelerate launch with a DeepSpeed config
def test_the_accumulation_override_names_both_numbers_and_auto():
    found = explained(
        "12/03/2024 10:00:00 - WARNING - accelerate.accelerator - Gradient accumulation steps mismatch: "
        "GradientAccumulationPlugin has 8, DeepSpeed config has 1. Using DeepSpeed's value.\n"
    )
    assert found.id == "log.grad_accumulation_overridden", found.summary
    assert "(8 asked, the DeepSpeed config's 1 used)" in found.summary and '"auto"' in found.fix


# torch 2.x's wording names torch_xla, but the check behind it (amp_definitely_not_available) is false wherever
# torch_xla is installed: no TPU reading, the CPU one
def test_autocast_off_in_torch_2_is_the_cpu_reading():
    found = explained(WARNED + filled("torch_native:autocast-cuda-not-available-or-torch-xla") + "\n")
    assert "the model trains on the CPU" in found.summary and "torch.version.cuda" in found.fix, found.summary


# mse_loss's warning as Python prints it, with the source line under it
def test_a_broadcast_target_names_both_sizes_and_the_squeeze():
    found = explained(
        "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/loss.py:536: UserWarning: Using a target size "
        "(torch.Size([64])) that is different to the input size (torch.Size([64, 1])). This will likely lead to "
        "incorrect results due to broadcasting. Please ensure they have the same size.\n"
        "  return F.mse_loss(input, target, reduction=self.reduction)\n"
        "Epoch 3 | train loss 0.2481 | val loss 0.2502\n"
    )
    assert found.id == "log.loss_target_broadcast", found.summary
    assert (
        "(target torch.Size([64]), output torch.Size([64, 1]))" in found.summary
        and "squeeze(-1)" in found.fix
    )


# binary_cross_entropy refuses the same mismatch with a ValueError ("... is deprecated"): that error is no warning
def test_the_refused_target_size_is_not_the_broadcast_warning():
    found = explained(
        "ValueError: Using a target size (torch.Size([8])) that is different to the input size "
        "(torch.Size([8, 1])) is deprecated. Please ensure they have the same size.\n"
    )
    assert found.id != "log.loss_target_broadcast", found.summary
