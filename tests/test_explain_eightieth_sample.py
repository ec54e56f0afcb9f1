"""The eightieth sample's train misses: each reading on its line as the source prints it, filled in as a run would
print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3817-3866)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# transformers/training_args.py TrainingArguments.__post_init__ (4.x): --fp16 where the resolved device is not CUDA
def test_the_trainer_refusing_fp16_off_a_cuda_device_is_likely_no_usable_cuda():
    found = reads(
        "ValueError: FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation "
        "(`--fp16_full_eval`) can only be used on CUDA devices.\n",
        "cuda_unavailable",
        "likely",
    )
    assert "--fp16" in found.fix and "GPU" in found.fix


# the 3.x wording of the same check
def test_the_older_amp_wording_says_the_same():
    reads("ValueError: AMP (`--fp16`) can only be used on CUDA devices.\n", "cuda_unavailable", "likely")


# 4.40's bf16 check also allows the CPU: refused there on another device (Apple's), not for want of CUDA
def test_the_bf16_refusal_that_allows_the_cpu_is_not_this():
    found = explained(
        "ValueError: BF16 Mixed precision training with AMP (`--bf16`) and BF16 half precision evaluation "
        "(`--bf16_full_eval`) can only be used on CUDA, XPU (with IPEX), NPU, MLU or CPU/TPU/NeuronCore devices.\n"
    )
    assert found.id != "log.cuda_unavailable", found.summary


# aten/src/ATen/native/Lerp.cpp TORCH_META_FUNC(lerp_Tensor): "expected dtype ", self.dtype(), " for `end` but got
# dtype ", end.dtype(), from an EMA's lerp_
def test_lerp_between_two_floating_dtypes_is_a_dtype_mismatch():
    found = reads(
        '  File "/opt/app/ema.py", line 41, in update\n'
        "    ema_p.lerp_(p, 1.0 - self.decay)\n"
        "RuntimeError: expected dtype c10::Half for `end` but got dtype float\n",
        "dtype_mismatch",
        "likely",
    )
    assert "lerp" in found.summary and "coerce_dtype" in found.fix


# an integer operand is not two floating dtypes
def test_lerp_with_an_integer_weight_is_not_read_as_this():
    found = explained("RuntimeError: expected dtype float for `weight` but got dtype long int\n")
    assert found.id != "log.dtype_mismatch", found.summary


# apex/amp/_initialize.py check_models, on a model DistributedDataParallel already wraps
def test_amp_initialize_after_ddp_is_its_order():
    found = reads(
        "RuntimeError: Incoming model is an instance of torch.nn.parallel.DistributedDataParallel. Parallel "
        "wrappers should only be applied to the model(s) AFTER \n"
        "the model(s) have been returned from amp.initialize.\n",
        "amp_initialize_order",
        "certain",
    )
    assert "torch.nn.parallel.DistributedDataParallel" in found.summary and "amp.initialize" in found.fix


# the older releases' one-line wording
def test_the_older_apex_wording_says_the_same():
    reads(
        "RuntimeError: Incoming model is an instance of torch.nn.parallel.DataParallel. Parallel wrappers should "
        "only be applied AFTER the model(s) have been returned from amp.initialize.\n",
        "amp_initialize_order",
        "certain",
    )


# apex's check_params_fp32 names amp.initialize too, for a model turned .half() before it
def test_apex_refusing_a_half_model_is_not_the_wrapper_order():
    found = explained(
        "RuntimeError: Found param module.fc.weight with type torch.cuda.HalfTensor, expected "
        "torch.cuda.FloatTensor.\n"
        "When using amp.initialize, you do not need to call .half() on your model\n"
    )
    assert found.id != "log.amp_initialize_order", found.summary


# a training step on Megatron asserting MixedPrecisionOptimizer.step()'s first value, which is False when the fp16
# grad scaler found inf/nan (megatron/core/optimizer/optimizer.py: return False, None, None)
def test_asserting_megatrons_skipped_step_is_likely_the_fp16_overflow():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "/workspace/slime/slime/backends/megatron_utils/model.py", line 412, in train_one_step\n'
        "    assert update_successful\n"
        "           ^^^^^^^^^^^^^^^^^\n"
        "AssertionError\n",
        "skipped_step_asserted",
        "likely",
    )
    assert "bf16" in found.fix and "overflow" in found.summary


# the same name asserted outside Megatron's code is someone else's flag
def test_an_update_successful_assert_outside_megatron_is_not_this():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/srv/app/tests/test_history.py", line 88, in test_update_interface_id\n'
        "    assert update_successful\n"
        "AssertionError\n"
    )
    assert found.id != "log.skipped_step_asserted", found.summary
