"""CUDA that torch could not initialise with "unknown error": a host driver in a broken state.

c10's ``device_count_impl`` (``c10/cuda/CUDAFunctions.cpp``) turns ``cudaErrorUnknown`` from ``cudaGetDeviceCount``
into "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable
CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero." ("Cuda unknown error ..." in
older releases). ``torch.cuda.device_count()`` / ``is_available()`` print it as a warning, "UserWarning: CUDA
initialization: <that> (Triggered internally at .../c10/cuda/CUDAFunctions.cpp:100.)", and return 0 / False;
``torch.cuda.init()`` and the first CUDA tensor raise it as a RuntimeError. Unlike "Found no NVIDIA driver" (none
installed) or "driver too old" (a version), an unknown error at the driver's first call is the driver's own state:
its kernel module not matching its libraries after an upgrade without a reboot, the ``nvidia_uvm`` module not
loaded (its ``/dev/nvidia-uvm`` missing, common in containers and after suspend), a half-removed install
(apptainer/singularity#5966: purging and reinstalling the driver fixed it). The message's own guess, a
CUDA_VISIBLE_DEVICES changed after the start, is the other reading. Likely, both named.

``launchers.MISSING_LAUNCHER`` (kind ``broken_install``) reads it: one recogniser per kind.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, on_ranks

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "torch_native:cuda-unknown-error-at-initialization",
    "torch_native:cuda-unknown-error-at-init-old",
)
ANCHORS = ("unknown error - this may be due to an incorrectly set up environment",)
FACT = R(
    r"(?P<cuda_init_unknown>(?:CUDA|Cuda) unknown error - this may be due to an incorrectly set up environment)"
)

ALSO = (
    Alternative(
        "gpu_selection",
        "CUDA_VISIBLE_DEVICES changed after the program started (after torch first asked for the GPUs)",
        "Set CUDA_VISIBLE_DEVICES before the process starts (in the shell or the job script), or in the script "
        "before torch is first imported; never change it once CUDA is in use.",
        when=("cuda_init_unknown",),
    ),
)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """The summary and fix for CUDA's "unknown error" at initialisation."""
    return (
        "torch could not initialise CUDA ('CUDA unknown error'), so it sees no GPU (torch.cuda.is_available() is "
        "False): the NVIDIA driver on the host is in a broken state" + on_ranks(hits),
        'Check the driver on the host, outside any container: nvidia-smi. An error there ("Driver/library version '
        'mismatch", "couldn\'t communicate with the NVIDIA driver") means the driver\'s kernel module and its '
        "libraries differ, most often after a driver upgrade without a reboot: reboot the machine. If nvidia-smi "
        "works but CUDA does not, load the unified-memory module: sudo nvidia-modprobe -u -c=0 (or sudo modprobe "
        "nvidia_uvm; /dev/nvidia-uvm must exist, inside the container too). If it persists, purge the driver "
        "packages and reinstall the NVIDIA driver (sudo apt purge 'nvidia-*', then install the driver again, and "
        "reboot).",
    )
