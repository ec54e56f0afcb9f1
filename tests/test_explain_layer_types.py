"""ATen's convolution check (aten/src/ATen/native/Convolution.cpp check_input_same_type_as_parameters, and
conv1d/2d/3d's bias dtype check) names the input's and the weight's (or bias's) tensor types: two devices are
``device_mismatch`` (certain: nothing else prints two devices there), one device and two dtypes ``dtype_mismatch``
(likely, as every operator's refusal)."""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, template

from torchdoctor.explain.kinds.layer_types import device_of, dtype_of

pytestmark = pytest.mark.usefixtures("every_message_seen")

MKLDNN = " or input should be a MKLDNN tensor and weight is a dense tensor"


@pytest.mark.parametrize(
    ("given", "held", "tail", "words"),
    [
        (
            "torch.FloatTensor",
            "torch.cuda.FloatTensor",
            "",
            ["input is still on the CPU", "x = x.to(device)"],
        ),
        ("torch.FloatTensor", "torch.cuda.FloatTensor", MKLDNN, ["(cpu), the weight torch.cuda.FloatTensor"]),
        ("torch.cuda.FloatTensor", "torch.FloatTensor", "", ["model (or this layer) is still on the CPU"]),
        ("CPUFloatType", "CUDAFloatType", MKLDNN, ["model.to(device)"]),
        ("MPSFloatType", "torch.FloatTensor", "", ["(mps), the weight"]),
        ("torch.FloatTensor", "torch.cuda.HalfTensor", "", ["their dtypes differ too (Float and Half)"]),
    ],
)
def test_a_layer_given_an_input_on_another_device_is_certain(given, held, tail, words):
    line = template("aten:input-type-and-weight-type-same", given, held) + tail
    leads_with(f"RuntimeError: {line}", "device_mismatch", "certain", words)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (
            "Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same",
            ["torch.autocast(device_type='cuda', dtype=torch.float16)", "x.half()"],
        ),
        # conv2d's bias check prints the dtypes' names alone
        (
            "Input type (float) and bias type (c10::Half) should be the same",
            ["its bias c10::Half", "autocast"],
        ),
        (
            "Input type (torch.cuda.ByteTensor) and weight type (torch.cuda.FloatTensor) should be the same",
            ["/ 255"],
        ),
    ],
)
def test_a_layer_given_an_input_of_another_dtype_is_a_dtype_mismatch(line, words):
    leads_with(f"RuntimeError: {line}", "dtype_mismatch", "likely", words)


def test_one_device_under_mkldnn_is_not_read_as_two_devices_near_miss():
    # a bf16 CPU input to a float32 CPU model on the MKLDNN backend: the dtypes differ, both are on the CPU
    line = f"RuntimeError: Input type (CPUBFloat16Type) and weight type (torch.FloatTensor) should be the same{MKLDNN}"
    found = explained(line + "\n")
    assert found.id == "log.dtype_mismatch", found.summary


def test_a_type_the_check_does_not_print_is_neither_near_miss():
    # a sparse or an MKLDNN-layout type names no device we know: nothing is said rather than a guess
    found = explained(
        "RuntimeError: Input type (SparseCUDAFloatType) and weight type (SparseCPUFloatType) should be the same\n"
    )
    assert found.id == "log.unrecognised", found.summary


def test_the_types_as_printed_name_their_device_and_dtype():
    assert [device_of(t) for t in ("torch.cuda.HalfTensor", "CPUFloatType", "float")] == ["cuda", "cpu", ""]
    assert [dtype_of(t) for t in ("torch.cuda.HalfTensor", "c10::BFloat16", "double")] == [
        "Half",
        "BFloat16",
        "Double",
    ]
