"""Three readings found and left by session 38's helpers (task SMALL2), each from the source that prints it:

- cuDNN's CUDNN_STATUS_EXECUTION_FAILED as ATen's cuDNN bindings raise it ("cuDNN error: " and cudnnGetErrorString,
  aten/src/ATen/cudnn/Exceptions.h): a kernel that failed to run, read beside cuBLAS's execution failure: likely,
  an earlier kernel's fault first, then the GPU's memory reported late, a cuDNN/CUDA build that does not fit, a
  GPU that faulted (the order the threads posting it established them); never certain.
- CPython's "'X' object has no attribute 'to'" on a batch: certain for the 'list' a labelled log showed, likely for
  the other containers with what each usually is named (as CERT10 did for default_collate's found <class X>).
- transformers 4.27-4.37's Trainer refusing a quantized model not marked trainable: both halves of the fix (a
  bitsandbytes that trains, PEFT adapters), with the releases the log prints.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, lead, likely_with, read, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/home/u/miniconda3/envs/t/lib/python3.10/site-packages"

_CONV = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 88, in <module>\n'
    "    out = model(images)\n"
    f'  File "{SITE}/torch/nn/modules/conv.py", line 456, in _conv_forward\n'
    "    return F.conv2d(input, weight, bias, self.stride,\n"
)


def test_cudnn_execution_failed_is_a_likely_earlier_fault_with_the_other_causes_named():
    found = likely_with(
        _CONV + "RuntimeError: " + template("torch_native:cudnn-status-execution-failed") + "\n",
        "device_assert",
        "log.cuda_oom",
    )
    assert ["cuda_oom", "cudnn_version_mismatch", "gpu_hardware_fault"] == [
        a.removeprefix("log.") for a in found.details["alternatives"][:3]
    ], found.details["alternatives"]
    assert "CUDNN_STATUS_EXECUTION_FAILED" in found.summary and "earlier kernel" in found.summary
    assert found.fix.index("CUDA_LAUNCH_BLOCKING=1") < found.fix.index("cudnn.enabled = False"), found.fix
    # torch<=0.4's CuDNNError printed the status after its number
    old = explained("torch.backends.cudnn.CuDNNError: 8: b'CUDNN_STATUS_EXECUTION_FAILED'\n")
    assert (old.id, old.details["confidence"]) == ("log.device_assert", "likely"), old.summary


def test_the_other_cudnn_and_cublas_statuses_keep_their_readings():
    alloc = explained("RuntimeError: " + template("torch_native:cudnn-status-alloc-failed") + "\n")
    assert alloc.id == "log.cuda_oom", alloc.summary
    internal = explained("RuntimeError: " + template("torch_native:cudnn-status-internal-error") + "\n")
    assert internal.id == "log.cuda_oom", internal.summary
    # cuBLAS's execution failure keeps its own words and its other reading
    cublas = explained(
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, "
        "n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n"
    )
    assert "cublasSgemm" in cublas.summary and "cuDNN" not in cublas.summary, cublas.summary
    assert "log.gpu_hardware_fault" not in cublas.details["alternatives"], cublas.details["alternatives"]


def test_to_on_the_list_a_labelled_log_showed_stays_certain():
    # train 1592 (huggingface/lerobot#713): batch['task'] is a list of strings
    found = read("1592.txt", "batch_not_tensor")
    assert "list" in found.summary and "is_tensor" in found.fix


_OWN_TO = '  File "train.py", line 61, in <module>\n    y = y.to(device)\n'


@pytest.mark.parametrize(
    ("container", "usually"),
    [("tuple", "string labels"), ("dict", "a sample's fields"), ("str", "a file path")],
)
def test_to_on_another_container_is_likely_what_it_usually_is_named(container, usually):
    found = explained(_OWN_TO + f"AttributeError: '{container}' object has no attribute 'to'\n")
    assert (found.id, found.details["confidence"]) == ("log.batch_not_tensor", "likely"), found.summary
    assert usually in found.summary, found.summary
    # the list, from the same frame, is certain
    certain(_OWN_TO + "AttributeError: 'list' object has no attribute 'to'\n", "batch_not_tensor")


_TRAINER = (
    "Traceback (most recent call last):\n"
    '  File "finetune.py", line 112, in <module>\n'
    "    trainer = Trainer(model=model, args=training_args, train_dataset=data)\n"
    f'  File "{SITE}/transformers/trainer.py", line 412, in __init__\n'
    "    raise ValueError(\n"
    "ValueError: " + template("third_party:transformers-8bit-model-not-trainable") + "\n"
)


def test_a_quantized_model_not_marked_trainable_gets_both_halves_of_the_fix():
    found = likely_with(_TRAINER, "trainer_arguments", "log.dependency_version")
    assert "4.27-4.37" in found.summary, found.summary
    for words in ("prepare_model_for_kbit_training", "get_peft_model", "0.37.0", "0.39.0"):
        assert words in found.fix, (words, found.fix)
    assert "upgrade transformers" not in found.fix.lower()


def test_the_releases_the_log_prints_are_named_and_an_old_bitsandbytes_first():
    env = "- `transformers` version: 4.31.0\nbitsandbytes                  0.35.4\npeft                          0.4.0\n"
    found = explained(env + _TRAINER)
    assert "transformers 4.31.0, bitsandbytes 0.35.4, peft 0.4.0" in found.fix, found.fix
    assert found.fix.index("predates 8-bit training") < found.fix.index("get_peft_model"), found.fix
    # a bitsandbytes that trains is not blamed
    newer = explained(env.replace("0.35.4", "0.41.1") + _TRAINER)
    assert "bitsandbytes 0.41.1" in newer.fix and "predates" not in newer.fix, newer.fix


def test_the_newer_quantized_refusal_and_the_accelerate_one_keep_their_readings():
    purely = explained("ValueError: " + template("transformers:you-cannot-perform-fine-tuning-on") + "\n")
    assert purely.id == "log.trainer_arguments" and "prepare_model_for_kbit_training" in purely.fix
    assert "4.27-4.37" not in purely.summary, purely.summary
    # accelerate 0.17-0.19's refusal of an 8-bit model on several devices (train 257)
    assert lead("257.txt").id == "log.library_version_bug"
