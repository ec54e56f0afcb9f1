"""torch.save and torch.load refusing what they were handed.

A file argument that is not a file, a checkpoint of a device type this process has not loaded, safetensors and
TorchScript files, settings that exclude each other.

``torch/serialization.py`` (``_check_save_filelike``, ``_open_buffer_writer``, ``default_restore_location`` and
``_get_restore_location``, the safetensors and TorchScript branches of ``load``, ``_default_to_weights_only``),
torch 1.x-2.13. Each message names its own mistake: certain once a real log shows it. weights_only refusals,
checkpoints saved on a GPU this machine lacks and corrupt files are kinds/checkpoint.py's and
kinds/torch_load_calls.py's.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "checkpoints and pretrained models"

_SAVE_TARGET = (
    "torch.save(obj, f) takes the object first and the destination second: f is a path (str or pathlib.Path) or "
    "a file opened for writing in binary mode (open(path, 'wb'), io.BytesIO()). Swapped arguments (torch.save(path, "
    "state)) or a file opened for reading give this."
)

_DEVICE_TYPE = (
    "The checkpoint's tensors were saved on a device type this process has not loaded (an Ascend NPU, an Intel "
    "XPU, Apple MPS, a TPU): load them onto the CPU, torch.load(path, map_location='cpu'), then move the model, "
    "or import the device's package (torch_npu, intel_extension_for_pytorch) before torch.load on a machine that "
    "has it."
)

_TORCHSCRIPT = (
    "The file is a TorchScript archive (saved with torch.jit.save / script_module.save), not a torch.save "
    "checkpoint: load it with torch.jit.load(path, map_location='cpu'), or ask for the state_dict saved with "
    "torch.save."
)

_SAFETENSORS_MAP = (
    "A safetensors file takes map_location as one device: torch.load(path, map_location='cpu') (or 'cuda:0', or "
    "safetensors.torch.load_file(path, device='cpu')), not a dict of device renames or a function."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("expected 'f' to be string, path, or a file-like object with a 'write' attribute", _SAVE_TARGET),
    ("has no callable attribute 'write'", _SAVE_TARGET),
    ("device module is not registered. If you are running on a CPU-only machine", _DEVICE_TYPE),
    ("don't know how to restore data location of", _DEVICE_TYPE),
    (
        "Expected input to be a checkpoint returned by torch.save but got a torchscript checkpoint",
        _TORCHSCRIPT,
    ),
    (
        "Attempting to load a safetensors file but safetensors is not installed.",
        "torch.load reads .safetensors files through the safetensors package: pip install safetensors.",
    ),
    ("Loading safetensors file with dict map_location is not supported.", _SAFETENSORS_MAP),
    ("Loading safetensors file with callable map_location is not supported.", _SAFETENSORS_MAP),
    (
        "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set",
        "Both TORCH_FORCE_WEIGHTS_ONLY_LOAD and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD are set in the environment: unset "
        "one (unset TORCH_FORCE_WEIGHTS_ONLY_LOAD to let trusted files load fully, or the other to keep the safe "
        "default).",
    ),
    (
        "pickle_load_args only works if `weights_only=False`.",
        "Extra keyword arguments of torch.load (encoding='latin1', errors=...) go to Python's pickle, which "
        "weights_only=True (the default since torch 2.6) does not use: drop them, or for a file you trust pass "
        "torch.load(path, weights_only=False, encoding='latin1').",
    ),
    (
        "Please upgrade dill or switch to 'pickle'",
        "torch.save / torch.load with pickle_module=dill need a newer dill than the one installed: pip install -U "
        "dill, or use the default pickle module.",
    ),
)

TORCH_SERIALIZATION_CALL = refusal_recogniser(
    kind="torch_serialization_call",
    title="torch.save or torch.load refused what it was handed",
    refusals=REFUSALS,
    templates=(
        "torch:expected-to-be-string-path-or",
        "torch:buffer-of-has-no-callable-attribute",
        "torch:the-device-module-is-not-registered",
        "torch:don-know-how-to-restore-data",
        "torch:expected-input-to-be-checkpoint-returned-2",
        "torch:attempting-to-load-safetensors-file-but",
        "torch:loading-safetensors-file-with-dict-map",
        "torch:loading-safetensors-file-with-callable-map",
        "torch:only-one-of-torch-force-weights",
        "torch:pickle-load-args-only-works-if",
        "torch:torch-supports-dill-but-you-have",
    ),
)

RECOGNISERS = (TORCH_SERIALIZATION_CALL,)
