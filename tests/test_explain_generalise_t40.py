"""Misses of the train half read as classes, third round (helper T40): each class with its train log, a line of
a sibling template or another release's wording, and a near-miss that must not read as it.

- torch 0.1-0.3's legacy nn functions (THNN on the CPU, "Cuda" + the THNN name on the GPU) refuse a CPU tensor
  among CUDA ones with torch/csrc/utils/invalid_arguments.cpp's "CudaClassNLLCriterion_updateOutput received an
  invalid combination of arguments - got (...)" (train 628: a loss's weight left on the CPU); the same words for
  an argument of another dtype, so likely, with that reading named; a got list shown whole on one device is the
  dtype's and is not read as devices.
"""

from __future__ import annotations

import pytest
from explaining import explained, lead

pytestmark = pytest.mark.usefixtures("every_message_seen")

THNN_NLL = "TypeError: CudaClassNLLCriterion_updateOutput received an invalid combination of arguments - got "


def test_the_train_log_of_a_legacy_loss_refusing_its_arguments_reads_as_devices_only_likely():
    found = lead("628.txt")
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "likely", found.summary
    assert "CudaClassNLLCriterion_updateOutput" in found.summary
    assert "log.dtype_mismatch" in found.details["alternatives"], found.details["alternatives"]
    assert ".cuda()" in found.fix and "weight=" in found.fix


def test_a_cpu_backend_convolution_given_cuda_weights_reads_the_same_way():
    # the CPU backend's name (Float + the THNN function) with the weight and bias marked refused, on the CUDA device
    found = explained(
        "TypeError: FloatSpatialConvolutionMM_updateOutput received an invalid combination of arguments - got "
        "(int, torch.FloatTensor, torch.FloatTensor, !torch.cuda.FloatTensor!, !torch.cuda.FloatTensor!, "
        "torch.FloatTensor, torch.FloatTensor, int, int, int, int, int, int), but expected (int state, "
        "torch.FloatTensor input, torch.FloatTensor output, torch.FloatTensor weight, [torch.FloatTensor bias or "
        "None], torch.FloatTensor finput, torch.FloatTensor fgradInput, int kW, int kH, int dW, int dH, int padW, "
        "int padH)\n"
    )
    assert found.id == "log.device_mismatch", found.summary
    assert "FloatSpatialConvolutionMM_updateOutput" in found.summary


def test_the_backward_step_of_a_legacy_function_reads_the_same_way():
    found = explained(
        "TypeError: CudaBatchNormalization_updateGradInput received an invalid combination of arguments - got "
        "(int, torch.cuda.FloatTensor, torch.cuda.FloatTensor, torch.cuda.FloatTensor, NoneType, NoneType, "
        "!torch.FloatTensor!, torch.cuda.FloatTensor, torch.cuda.FloatTensor, bool, float), but expected one of:\n"
    )
    assert found.id == "log.device_mismatch", found.summary


def test_a_got_list_all_on_the_gpu_is_a_dtype_not_devices():
    # an IntTensor target for the CUDA NLL loss: every argument on the GPU, the refusal is the target's type
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 80, in <module>\n'
        "    loss = criterion(output, target)\n"
        + THNN_NLL
        + "(int, torch.cuda.FloatTensor, !torch.cuda.IntTensor!, torch.cuda.FloatTensor, bool, NoneType, "
        "torch.cuda.FloatTensor), but expected (int state, torch.cuda.FloatTensor input, torch.cuda.LongTensor "
        "target, torch.cuda.FloatTensor output, bool sizeAverage, [torch.cuda.FloatTensor weights or None], "
        "torch.cuda.FloatTensor total_weight)\n"
    )
    assert found.id != "log.device_mismatch", found.summary


def test_another_function_refusing_its_arguments_is_not_read_as_a_legacy_nn_function():
    found = explained(
        "TypeError: add() received an invalid combination of arguments - got (torch.cuda.FloatTensor, "
        "torch.FloatTensor), but expected one of:\n"
    )
    assert found.id != "log.device_mismatch", found.summary
