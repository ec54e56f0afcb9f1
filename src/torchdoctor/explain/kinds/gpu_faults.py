"""A GPU or the machine's GPU fabric that failed in hardware or is not ready: nothing in the script causes it.

The messages are the CUDA runtime's error strings (``cudaGetErrorString``, as torch's ``CUDA error: ...`` and
NCCL's ``Cuda failure '...'`` print them; ``cuda_runtime.tsv``): cudaErrorECCUncorrectable (214),
cudaErrorNvlinkUncorrectable (220) and cudaErrorSystemNotReady (802), the last of which the CUDA documentation
explains as the system not ready for CUDA work: a driver daemon it needs is not running (on NVSwitch machines,
the nvidia-fabricmanager service). Each is printed for that cause alone, so the finding is certain.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, merged, on_ranks

R = re.compile


def _hardware(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    what = " ".join(facts.get("what", "a GPU reported an uncorrectable hardware error").split())
    return (
        f"a GPU failed in hardware ({what})" + on_ranks(hits),
        "The GPU's memory (ECC) or an NVLink reported an error it could not correct; the run cannot go on on "
        "that GPU and the script is not the cause. Find it and take it out of service: nvidia-smi -q -d ECC "
        "(volatile and aggregate uncorrectable counts, retired / remapped pages), and the kernel log for Xid "
        "events (sudo dmesg | grep -i xid: 48/63/64/94/95 for ECC, 74 for NVLink). Reset the GPU (nvidia-smi -r, "
        "with no process on it) or reboot the node; if it comes back, drain the node from the scheduler and have "
        "the GPU replaced. Restart the job from its last checkpoint on healthy GPUs.",
    )


GPU_HARDWARE_FAULT = Recogniser(
    kind="gpu_hardware_fault",
    title="a GPU's uncorrectable hardware error (ECC, NVLink)",
    templates=("cuda_runtime:ecc-uncorrectable", "cuda_runtime:nvlink-uncorrectable"),
    anchors=(
        "uncorrectable ECC error encountered",
        "uncorrectable NVLink error detected during the execution",
    ),
    facts=(
        R(
            r"(?P<what>uncorrectable ECC error encountered|uncorrectable NVLink error detected during the "
            r"execution)"
        ),
    ),
    describe=_hardware,
)


def _fabric(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "CUDA says the system is not yet initialized: a driver daemon it needs is not running (on a machine "
        "whose GPUs are joined by NVSwitch, the fabric manager)" + on_ranks(hits),
        "On NVSwitch systems (DGX / HGX A100, H100, H200) CUDA refuses work until the NVLink fabric is set up by "
        "the nvidia-fabricmanager service, whose version must equal the driver's: systemctl status "
        "nvidia-fabricmanager (start it: sudo systemctl enable --now nvidia-fabricmanager; its log says when its "
        "version differs from the driver, `nvidia-smi` shows the driver's: install the matching "
        "nvidia-fabricmanager-<driver branch> package). Elsewhere, check the driver's daemons (nvidia-persistenced) "
        "and the kernel log (sudo dmesg | grep -i nvrm). In a container, it runs on the host, not in the "
        "container. nvidia-smi -q | grep -A2 -i fabric shows the fabric's state once it is up.",
    )


FABRIC_MANAGER = Recogniser(
    kind="fabric_manager",
    title="GPU fabric not initialized (nvidia-fabricmanager)",
    templates=("cuda_runtime:system-not-ready",),
    anchors=("system not yet initialized",),
    # as cudart's error reaches a log: torch's "CUDA error: ...", its device count's "Error 802: ...", NCCL's
    # "Cuda failure '...'"; not another program's "system not yet initialized"
    match=R(
        r"(?:CUDA error: |Error 802: |Cuda failure '|cudaErrorSystemNotReady\W{1,4})system not yet initialized"
    ),
    describe=_fabric,
)

RECOGNISERS = (GPU_HARDWARE_FAULT, FABRIC_MANAGER)
