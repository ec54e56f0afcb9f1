"""Warnings of runs that "work but are wrong" (kinds/loop_warnings.py, dataloader_workers.py, warnings_alone.py,
gpus.MISMATCHED_GPUS): each read from a train log or its template filled as its source fills it; likely where the
log holds no error, and never the finding beside an error the log does show."""

from __future__ import annotations

import pytest
from explaining import explained, filled, lead

pytestmark = pytest.mark.usefixtures("every_message_seen")

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.69 GiB "
    "of which 1.12 GiB is free.\n"
)


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        (
            "5868.txt",
            "find_unused_parameters_unneeded",
            ["find_unused_parameters=False", "library_version_bug"],
        ),
        ("5872.txt", "metric_compute_before_update", ["MeanMetric", "torchmetrics"]),
        ("5879.txt", "log_interval_above_batches", ["(4 batches per epoch, log_every_n_steps=50)"]),
        ("5881.txt", "log_interval_above_batches", ["log_every_n_steps=N"]),
        ("5883.txt", "dataloader_workers_oversubscribed", ["12 workers, 4 suggested", "num_workers"]),
        ("5886.txt", "scheduler_before_optimizer_step", ["GradScaler", "scaler.get_scale()"]),
    ],
)
def test_a_warning_alone_in_a_log_is_its_likely_kind(name, kind, words):
    found = lead(name)
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", "likely"), found.summary
    text = found.summary + found.fix + str(found.details.get("alternatives", ""))
    for word in words:
        assert word in text, (word, text)


@pytest.mark.parametrize(
    ("ident", "values", "kind"),
    [
        ("torch_native:lr-scheduler-step-before-optimizer-step", (), "scheduler_before_optimizer_step"),
        ("torch_native:lr-scheduler-optimizer-step-overridden", (), "scheduler_before_optimizer_step"),
        ("torch_native:ddp-find-unused-parameters-nothing-unused-1-8", (), "find_unused_parameters_unneeded"),
        ("torch_cpp:find-unused-parameters-true-was-specified", (), "find_unused_parameters_unneeded"),
        (
            "third_party:lightning-training-samples-below-log-interval",
            ("7", "50"),
            "log_interval_above_batches",
        ),
        (
            "third_party:lightning-training-batches-below-log-interval",
            ("3", "10"),
            "log_interval_above_batches",
        ),
        (
            "third_party:torchmetrics-compute-before-update",
            ("MulticlassAccuracy",),
            "metric_compute_before_update",
        ),
        (
            "torch:this-dataloader-will-create-worker-processes",
            (
                "32",
                "Our suggested max number of worker in current system is 8, which is smaller than what this "
                "DataLoader is going to create.",
            ),
            "dataloader_workers_oversubscribed",
        ),
        ("torch_native:dataparallel-imbalance-between-gpus", ("1", "0"), "mismatched_gpus"),
    ],
)
def test_each_wording_as_its_source_prints_it_reads_alone_and_never_beside_an_error(ident, values, kind):
    warning = "/usr/lib/python3/site-packages/x.py:12: UserWarning: " + filled(ident, *values).replace(
        "\\n", "\n"
    )
    found = explained(warning + "\n")
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", "likely"), (ident, found.summary)
    beside = explained(warning + "\n" + OOM)
    assert beside.id == "log.cuda_oom", (ident, beside.summary)


def test_the_imbalance_names_the_gpus_and_leaves_the_weak_one_out():
    found = explained(
        "UserWarning:\nThere is an imbalance between your GPUs. You may want to exclude GPU 1 which\n"
        "    has less than 75% of the memory or cores of GPU 0. You can do so by setting\n"
        "    the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES\n"
        "    environment variable.\n"
    )
    assert found.id == "log.mismatched_gpus", found.summary
    assert "GPU 1 has under 75% of GPU 0's" in found.summary and "CUDA_VISIBLE_DEVICES=0" in found.fix


# the imbalance before the error it led to: the error is the finding. 5876's is Thrust's out-of-memory (a kernel
# launch's cudaErrorMemoryAllocation, no GPU named): read as cuda_oom since session 44 (T65), the imbalance above it
# choosing the reading (the weak GPU ran out), cuda_oom's own named after it
def test_the_imbalance_above_an_out_of_memory_outside_the_allocator_chooses_its_reading():
    found = lead("5876.txt")
    assert found.id == "log.mismatched_gpus" and found.details["kind"] == "mismatched_gpus", found.summary
    assert found.details["confidence"] == "likely" and "log.cuda_oom" in found.details["alternatives"]
    assert "GPU 0 has under 75% of GPU 1's" in found.summary and "CUDA_VISIBLE_DEVICES" in found.fix


# decord's check in video_reader.cc, as mmaction2's loader printed it (open-mmlab/mmaction2#1001)
def test_decord_finding_no_video_stream_is_bad_training_data_to_re_encode():
    found = lead("5819.txt")
    assert found.id == "log.bad_training_data", found.summary
    assert "re-encode" in found.fix and "check_videos.py" in found.fix
    near = explained("decord._ffi.base.DECORDError: cannot find video file at index 3\n")
    assert near.id != "log.bad_training_data", near.summary


# DeepSpeed's skipped steps while the loss scale is still high, and the Trainer's lr 0 meanwhile (transformers#10362)
def test_the_loss_scale_search_alone_is_a_likely_nan_overflow_that_says_it_is_normal():
    found = lead("5878.txt")
    assert (found.id, found.details["confidence"]) == ("log.nan_overflow", "likely"), found.summary
    assert "down to 2147483648.0" in found.summary and "initial_scale_power" in found.fix
    assert "edge of its domain" not in found.summary


SKIPPED = (
    "[2023-05-02 10:11:12,345] [INFO] [loss_scaler.py:188:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
    "Attempted loss scale: 65536, reducing to 32768\n"
)


def test_a_skipped_step_beside_an_error_is_not_the_finding():
    assert explained(SKIPPED + OOM).id == "log.cuda_oom"


# down to a loss scale of 1, every step overflows: the overflow reading, not the search at the start
def test_a_skipped_step_down_to_scale_one_is_the_overflow_itself():
    found = explained(SKIPPED.replace("65536, reducing to 32768", "2, reducing to 1"))
    assert found.id == "log.nan_overflow" and "searching" not in found.summary, found.summary


# c10/cuda/CUDAFunctions.cpp's unknown error, as is_available() warns it (apptainer/singularity#5966) and as
# torch.cuda.init() raises it
def test_cuda_unknown_error_at_initialisation_is_a_likely_broken_driver_with_the_visible_devices_reading():
    found = lead("5769.txt")
    assert (found.id, found.details["confidence"]) == ("log.broken_install", "likely"), found.summary
    assert "CUDA_VISIBLE_DEVICES changed after the program started" in found.summary
    assert "nvidia-modprobe" in found.fix and "reinstall the NVIDIA driver" in found.fix
    raised = explained("RuntimeError: " + filled("torch_native:cuda-unknown-error-at-init-old") + "\n")
    assert raised.id == "log.broken_install" and raised.details["confidence"] == "likely", raised.summary


# transformers' Whisper refusing labels past its decoder (huggingface/transformers#33196), filled as forward fills it
def test_whisper_labels_past_the_decoder_are_a_sequence_too_long_naming_the_length():
    found = explained(
        "ValueError: " + filled("third_party:whisper-labels-exceed-max-target-positions", "512", "448")
    )
    assert found.id == "log.sequence_too_long", found.summary
    assert "512" in found.summary and "448" in found.fix


def test_the_trainers_own_find_unused_default_on_a_run_that_works_is_advice_naming_its_argument():
    # a real two-rank Trainer run with nothing planted (planted_runs/hf_trainer_no_fault, transformers 5.23): the
    # Trainer passes find_unused_parameters=True for a model without gradient checkpointing, so the reducer warns
    from pathlib import Path

    console = Path(__file__).parent / "fixtures" / "planted_runs" / "hf_trainer_no_fault" / "console.txt"
    found = explained(console.read_text(encoding="utf-8"))
    assert (found.id, found.status, found.details["confidence"]) == (
        "log.find_unused_parameters_unneeded",
        "warn",
        "likely",
    ), found.summary
    assert "transformers' Trainer sets it" in found.summary and "not an error" in found.summary, found.summary
    assert "ddp_find_unused_parameters=False to TrainingArguments" in found.fix, found.fix
    # 5.x's "[transformers]" prefix and quoted metrics: not the pre-4.3 Trainer, and no upgrade asked for
    assert "log.library_version_bug" not in found.details.get("alternatives", []), found.summary
    assert "pip install -U transformers" not in found.fix, found.fix


def test_the_same_warning_without_the_trainer_does_not_name_it_as_the_cause():
    # torch's own wording under a plain DDP script (no Trainer frames, metrics or --do_train): the flag is the
    # script's; the Trainer is only among the places the fix names
    warning = "[W reducer.cpp:1303] Warning: " + filled("torch_cpp:find-unused-parameters-true-was-specified")
    found = explained(warning + "\nEpoch 3 | loss 0.41\n")
    assert found.id == "log.find_unused_parameters_unneeded", found.summary
    assert (
        "Trainer sets it" not in found.summary
        and "DistributedDataParallel(model, find_unused_parameters=False)" in found.fix
    ), found.fix


def test_a_checkpoints_no_grad_warning_names_the_healthy_runs_that_print_it_too():
    # pytorch/pytorch#85066: printed in the validation loop of a run that trains fine (reentrant checkpoint wrapper)
    warning = (
        "/home/ubuntu/anaconda3/envs/pytorch_p39/lib/python3.9/site-packages/torch/utils/checkpoint.py:31: "
        "UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n"
        '  warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")\n'
    )
    found = explained(warning)
    assert (found.id, found.details["confidence"]) == ("log.checkpoint_inputs_no_grad", "likely"), (
        found.summary
    )
    assert "printed while training" in found.summary and "validation loop" in found.summary, found.summary
    assert "harmless" in found.summary and "enable_input_require_grads" in found.fix, found.fix


def test_a_skipped_val_loop_is_advice_for_a_run_meant_to_validate_not_an_order():
    # Lightning prints it for every run that defines validation_step and passes no val data, on purpose or not
    found = explained(filled("lightning:you-defined-validation-step-but-have") + "\n")
    assert (found.id, found.details["confidence"]) == ("log.validation_loop_skipped", "likely"), found.summary
    assert found.fix.startswith("Where the run was meant to validate") and "can ignore it" in found.fix, (
        found.fix
    )
