"""The seventy-first sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3367-3416)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# aten/src/ATen/Context.cpp Context::alertNotDeterministic(caller), torch 1.11+: TORCH_CHECK(false, caller, " does not
# have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'. You can turn off
# determinism just for this operation, or you can use the 'warn_only=True' option, ...")
def test_an_op_refused_under_deterministic_algorithms_is_named_with_the_switch():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    loss.backward()\n"
        "RuntimeError: upsample_bilinear2d_backward_out_cuda does not have a deterministic implementation, but you "
        "set 'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation, or "
        "you can use the 'warn_only=True' option, if that's acceptable for your application. You can also file an "
        "issue at https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for "
        "this operation.\n",
        "nondeterministic_op",
        "certain",
    )
    assert "upsample_bilinear2d_backward_out_cuda" in found.summary
    assert "warn_only=True" in found.fix and "deterministic=True" in found.fix


# the same check in torch 1.8-1.10 (no warn_only yet), and torch 1.7's torch.set_deterministic
def test_the_older_wordings_read_the_same():
    found = reads(
        "RuntimeError: index_put_with_accumulate does not have a deterministic implementation, but you set "
        "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation if that's "
        "acceptable for your application. You can also file an issue at https://github.com/pytorch/pytorch/issues "
        "to help us prioritize adding deterministic support for this operation.\n",
        "nondeterministic_op",
        "certain",
    )
    assert "index_put_with_accumulate" in found.summary
    found = reads(
        "RuntimeError: reflection_pad2d_backward_cuda does not have a deterministic implementation, but you set "
        "'torch.set_deterministic(True)'. You can turn off determinism just for this operation if that's acceptable "
        "for your application.\n",
        "nondeterministic_op",
        "certain",
    )
    assert "torch.set_deterministic(True)" in found.summary


def test_warn_only_and_cublas_are_not_a_refused_op():
    # with warn_only=True the same text is a UserWarning and the op runs
    found = explained(
        "/usr/lib/python3.10/site-packages/torch/autograd/graph.py:744: UserWarning: "
        "adaptive_max_pool2d_backward_cuda does not have a deterministic implementation, but you set "
        "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
        "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
        "operation. (Triggered internally at ../aten/src/ATen/Context.cpp:83.)\n"
    )
    assert found.id != "log.nondeterministic_op"
    # aten/src/ATen/Context.cpp alertCuBLASConfigNotDeterministic: CUBLAS_WORKSPACE_CONFIG, another check
    found = explained(
        "RuntimeError: Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or "
        "`at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses "
        "CuBLAS and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an "
        "environment variable before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or "
        "CUBLAS_WORKSPACE_CONFIG=:16:8.\n"
    )
    assert found.id != "log.nondeterministic_op"


# espnet2/train/trainer.py: logging.warning(f"The grad norm is {grad_norm}. Skipping updating the model.") when
# clip_grad_norm_'s total norm is not finite; espnet/asr/pytorch_backend/asr.py (ESPnet 1):
# logging.warning("grad norm is nan. Do not update model.")
def test_espnets_nan_gradient_norm_reads_as_nan_gradients():
    found = reads(
        "[node1] 2022-05-10 11:20:31,402 (trainer:660) WARNING: The grad norm is nan. Skipping updating the model.\n",
        "nan_overflow",
        "likely",
    )
    assert "grad norm is nan" in found.summary
    reads(
        "2019-07-16 10:04:12,118 (asr:236) WARNING: grad norm is nan. Do not update model.\n",
        "nan_overflow",
        "likely",
    )


def test_espnets_infinite_norm_under_fp16_is_not_read():
    # fp16's GradScaler overflows by design in its first steps and ESPnet prints the inf norm for each of them
    found = explained(
        "[node1] 2022-05-10 11:20:31,402 (trainer:660) WARNING: The grad norm is inf. Skipping updating the model.\n"
    )
    assert found.id != "log.nan_overflow"


# language-model/model_word_ada/radam.py of LiyuanLucasLiu/RAdam: ratio = math.sqrt((1 - beta2_t) * (N_sma - 4) /
# (N_sma_max - 4) * (N_sma - 2) / N_sma * N_sma_max / (N_sma_max - 2)) / beta1_t, CPython's math.sqrt refusing a
# negative value ("math domain error")
def test_radams_language_model_copy_is_its_fixed_bug():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "main.py", line 301, in <module>\n'
        "    train_epoch()\n"
        '  File "main.py", line 214, in train_epoch\n'
        "    optimizer.step()\n"
        '  File "/work/lm/model_word_ada/radam.py", line 67, in step\n'
        "    ratio = math.sqrt((1 - beta2_t) * (N_sma - 4) / (N_sma_max - 4) * (N_sma - 2) / N_sma * N_sma_max / "
        "(N_sma_max - 2)) / beta1_t\n"
        "ValueError: math domain error\n",
        "library_version_bug",
        "likely",
    )
    assert "top-level radam.py" in found.fix and "torch.optim.RAdam" in found.fix


def test_another_math_domain_error_is_not_radams():
    # the top-level radam.py divides by (1 - beta1 ** state['step']), and a math.log of zero is the script's own
    for line in (
        "    step_size = math.sqrt((1 - beta2_t) * (N_sma - 4) / (N_sma_max - 4) * (N_sma - 2) / N_sma * N_sma_max "
        "/ (N_sma_max - 2)) / (1 - beta1 ** state['step'])\n",
        "    psnr = 10 * math.log10(1.0 / mse)\n",
    ):
        found = explained('  File "train.py", line 40, in step\n' + line + "ValueError: math domain error\n")
        assert "RAdam" not in found.summary
