"""What a convolution's input and its weight differ in: the device or the dtype.

What ATen's convolution check says differs between a layer's input and its weight (or bias): the device, or the
dtype. Not a recogniser: the patterns `placement.DEVICE_MISMATCH` and `operand_dtypes.DTYPE_MISMATCH` split the
message by.

``aten/src/ATen/native/Convolution.cpp`` check_input_same_type_as_parameters prints both tensors' types
(``Tensor::toString``: "torch.cuda.HalfTensor" from Python, "CUDAHalfType" / "CPUFloatType" / "MPSFloatType"
through the C++ API and in later releases): "Input type ({}) and weight type ({}) should be the same", and on the
MKLDNN backend (a CPU input) "... should be the same or input should be a MKLDNN tensor and weight is a dense
tensor"; the same two for the bias. conv1d/conv2d/conv3d also compare the bias's dtype alone, printed as a dtype's
name: "Input type (float) and bias type (c10::Half) should be the same". Both types on one device: the dtypes
differ; on two devices: the tensors are on different devices (the check prints nothing else for either).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Pattern

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# each device's spellings of a tensor type in the message
_ON = {
    "cpu": r"torch\.(?!cuda\.|mps\.|xpu\.)\w{1,12}Tensor|CPU\w{1,12}Type",
    "cuda": r"torch\.cuda\.\w{1,12}Tensor|CUDA\w{1,12}Type",
    "mps": r"torch\.mps\.\w{1,12}Tensor|MPS\w{1,12}Type",
    "xpu": r"torch\.xpu\.\w{1,12}Tensor|XPU\w{1,12}Type",
}
# a dtype's name alone (conv1d/2d/3d's bias check; torch 0.2-0.3's torch/csrc/autograd/functions/convolution.cpp
# named the weight's check so too, capitalised): no device in it
_DTYPE = (
    r"float|double|c10::Half|c10::BFloat16|c10::Float8_\w{1,12}|unsigned char|signed char|int|long int|short int|"
    r"Byte|Char|Short|Int|Long|Half|Float|Double"
)


def _pair(first: str, second: str) -> str:
    return rf"Input type \((?:{first})\) and (?:weight|bias) type \((?:{second})\) should be the same"


# the two types on two different devices
ON_TWO_DEVICES = "|".join(_pair(_ON[a], _ON[b]) for a in _ON for b in _ON if a != b)
# the two types on one device, or dtypes' names alone
ON_ONE_DEVICE = "|".join([*(_pair(spelling, spelling) for spelling in _ON.values()), _pair(_DTYPE, _DTYPE)])
# the two types as printed, and which parameter
TYPES = R(
    r"Input type \((?P<layer_input>[\w.: ]{1,40})\) and (?P<layer_param>weight|bias) type "
    r"\((?P<layer_weight>[\w.: ]{1,40})\) should be the same"
)


def device_of(tensor_type: str) -> str:
    """The device a tensor type as printed names: ``torch.cuda.HalfTensor`` -> ``cuda``, ``CPUFloatType`` ->
    ``cpu``; "" for a dtype's name alone.

    >>> device_of("torch.FloatTensor"), device_of("MPSFloatType"), device_of("c10::Half")
    ('cpu', 'mps', '')
    """
    return next((device for device, spelled in _ON.items() if re.fullmatch(spelled, tensor_type)), "")


def dtype_of(tensor_type: str) -> str:
    """The dtype a tensor type as printed names: ``torch.cuda.HalfTensor`` -> ``Half``, ``CPUBFloat16Type`` ->
    ``BFloat16``, ``c10::Half`` -> ``Half``, ``float`` -> ``Float``.

    >>> dtype_of("torch.cuda.ByteTensor"), dtype_of("CPUBFloat16Type"), dtype_of("float")
    ('Byte', 'BFloat16', 'Float')
    """
    named = re.fullmatch(
        r"(?:torch\.(?:\w+\.)?(\w+)Tensor|(?:CPU|CUDA|MPS|XPU)(\w+)Type|(?:c10::)?(.+))", tensor_type
    )
    dtype = next((g for g in named.groups() if g), tensor_type) if named else tensor_type
    return {"unsigned char": "Byte", "signed char": "Char", "long int": "Long", "short int": "Short"}.get(
        dtype, dtype[:1].upper() + dtype[1:]
    )
