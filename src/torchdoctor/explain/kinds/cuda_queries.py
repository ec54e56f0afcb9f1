"""torch.cuda's queries of the GPUs refusing: the NVML or amdsmi library missing, or a peer, mode, fraction or event.

``torch/cuda/__init__.py`` (torch 2.1-2.13): ``utilization``, ``temperature``, ``power_draw``, ``clock_rate`` and
``memory_usage`` read NVIDIA's NVML through the nvidia-ml-py package (AMD's amdsmi on ROCm), which a training
loop's logger or a monitoring callback often calls; ``can_device_access_peer`` and ``set_sync_debug_mode`` check
their arguments, as ``torch/cuda/memory.py``'s ``set_per_process_memory_fraction`` and ``c10/cuda/CUDAEvent.h``'s
``torch.cuda.Event`` (record, elapsed_time) do. Each message names its own cause: certain once a real log shows it.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "drivers and GPUs"

_FRACTION = (
    "torch.cuda.set_per_process_memory_fraction(fraction, device) caps this process's share of one GPU's memory: "
    "fraction is a Python float from 0 to 1 (0.5, not 1 or 50; torch.mps's takes up to 2), e.g. "
    "torch.cuda.set_per_process_memory_fraction(0.45, local_rank) for two processes sharing a GPU."
)

_TIMING = (
    "Timing GPU work with CUDA events: create both with timing on, record both on the stream doing the work, and "
    "wait for the second before reading the time: start = torch.cuda.Event(enable_timing=True); end = "
    "torch.cuda.Event(enable_timing=True); start.record(); ...; end.record(); end.synchronize(); ms = "
    "start.elapsed_time(end)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    (
        "nvidia-ml-py does not seem to be installed or it can't be imported.",
        "torch.cuda.utilization() / temperature() / power_draw() / memory_usage() (a logger or a monitoring "
        "callback calls them) read the GPU through NVML: pip install nvidia-ml-py in the training environment (it "
        "provides the pynvml module; the old 'pynvml' package on PyPI is deprecated), or stop logging those values.",
    ),
    (
        "amdsmi does not seem to be installed or it can't be imported.",
        "On ROCm, torch.cuda.utilization() and the other GPU queries read the GPU through amdsmi: install the "
        "amdsmi Python package that ships with the machine's ROCm (ROCm 6.0+: /opt/rocm/share/amd_smi, pip install "
        "it from there), or stop logging those values.",
    ),
    (
        "cuda driver can't be loaded, is cuda enabled?",
        "NVML found no loaded NVIDIA driver in this process: nvidia-smi must list the GPUs here (in a container, "
        "start it with --gpus all / the NVIDIA container toolkit; on a host, load the driver), or do not call "
        "torch.cuda.utilization() and the other NVML queries where there is no GPU.",
    ),
    (
        "Invalid peer device id",
        "torch.cuda.can_device_access_peer(device, peer) takes two indices below torch.cuda.device_count() in this "
        "process (CUDA_VISIBLE_DEVICES renumbers the GPUs it leaves visible from 0).",
    ),
    (
        "invalid value of debug_mode, expected one of `default`, `warn`, `error`",
        "torch.cuda.set_sync_debug_mode takes 'default', 'warn' or 'error' (or 0, 1, 2).",
    ),
    # torch/cuda/memory.py set_per_process_memory_fraction (torch/mps/__init__.py prints the second with 0~2)
    ("Invalid type for fraction argument, must be `float`", _FRACTION),
    ("Allowed range: 0~", _FRACTION),
    # c10/cuda/CUDAEvent.h: torch.cuda.Event's record and elapsed_time
    ("Both events must be created with argument 'enable_timing=True'.", _TIMING),
    ("Both events must be recorded before calculating elapsed time.", _TIMING),
    ("Both events must be completed before calculating elapsed time.", _TIMING),
    (
        " does not match recording stream's device ",
        "A torch.cuda.Event belongs to the GPU it was first recorded on: record it again only on a stream of that "
        "GPU. Time each device with its own pair of events, created and recorded under torch.cuda.device(i) (or "
        "after torch.cuda.set_device(local_rank) at the start of each process).",
    ),
)

CUDA_QUERIES = refusal_recogniser(
    kind="cuda_queries",
    title="a torch.cuda query of the GPU refused: its library missing, or an argument it does not take",
    refusals=REFUSALS,
    templates=(
        "torch:nvidia-ml-py-does-not-seem",
        "torch:amdsmi-does-not-seem-to-be",
        "torch:cuda-driver-can-be-loaded-is",
        "torch:invalid-peer-device-id",
        "torch:invalid-value-of-debug-mode-expected",
        "torch:invalid-type-for-fraction-argument-must",
        "torch:invalid-fraction-value-allowed-range",
        "torch_cpp:both-events-must-be-created-with",
        "torch_cpp:both-events-must-be-recorded-before",
        "torch_cpp:both-events-must-be-completed-before",
        "torch_cpp:event-device-does-not-match-recording",
    ),
)

RECOGNISERS = (CUDA_QUERIES,)
