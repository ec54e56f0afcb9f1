"""A GPU, the machine's GPU fabric or its kernel that failed or is not ready: nothing in the script causes it.

The messages are the CUDA runtime's error strings (``cudaGetErrorString``, as torch's ``CUDA error: ...`` and
NCCL's ``Cuda failure '...'`` print them; ``cuda_runtime.tsv``): cudaErrorECCUncorrectable (214),
cudaErrorNvlinkUncorrectable (220) and cudaErrorSystemNotReady (802), the last of which the CUDA documentation
explains as the system not ready for CUDA work: a driver daemon it needs is not running (on NVSwitch machines,
the nvidia-fabricmanager service). Each is printed for that cause alone, so the finding is certain.

torchrun's agent (torch 2.13: ``elastic/agent/server/local_elastic_agent.py``, ``elastic/multiprocessing/api.py``)
says when a worker sits in uninterruptible kernel sleep (Linux D-state) past its limit, or does not exit after
SIGKILL: the process waits inside a driver or a file system, which no signal interrupts.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


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
    nvls = next((h.facts for h in hits if h.facts.get("nvls_bind")), None)
    if nvls is not None and all(h.facts.get("nvls_bind") for h in hits):
        return (
            "NCCL could not bind NVLink SHARP (NVLS) multicast memory"
            + (f" (CUDA error '{nvls['nvls_error']}')" if nvls.get("nvls_error") else "")
            + ": NCCL "
            "names the fabric manager or the NVSwitches' setup as the usual cause" + on_ranks(hits),
            "NVLS (NCCL 2.17+, on NVSwitch systems: HGX H100/H200, GB200) needs the NVLink fabric set up by "
            "nvidia-fabricmanager (and, on NVL72 racks, the IMEX service) at the driver's own version: "
            "systemctl status nvidia-fabricmanager, nvidia-smi -q | grep -A2 -i fabric (State: Completed, Status: "
            "Success). Until it is fixed, run without NVLS: export NCCL_NVLS_ENABLE=0 (what NCCL's own message "
            "advises); in a container the fabric manager runs on the host, not in the container.",
        )
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
    templates=(
        "cuda_runtime:system-not-ready",
        # NCCL src/transport/nvls.cc (2.17+): binding the NVLS multicast memory failed, the error returned stops
        # the communicator's setup
        "nccl:failed-to-bind-nvlink-sharp-nvls",
        "nccl:failed-to-bind-nvlink-sharp-nvls-2",
    ),
    anchors=("system not yet initialized", "Failed to bind NVLink SHARP (NVLS) Multicast memory"),
    # as cudart's error reaches a log: torch's "CUDA error: ...", its device count's "Error 802: ...", NCCL's
    # "Cuda failure '...'"; not another program's "system not yet initialized"
    match=R(
        r"(?:CUDA error: |Error 802: |Cuda failure '|cudaErrorSystemNotReady\W{1,4})system not yet initialized|"
        r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory"
    ),
    facts=(
        R(r"(?P<nvls_bind>Failed to bind NVLink SHARP \(NVLS\) Multicast memory)"),
        R(
            r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory[^\n]{0,60}CUDA error \d+ '(?P<nvls_error>[^'\n]{1,80})'"
        ),
    ),
    # NCCL words its own line "This is usually caused by" the fabric manager or the NVSwitches: likely alone
    # (the CUDA error it names may be another: out of memory, a driver without multicast support)
    confirm=lambda hits, ctx: not all(h.facts.get("nvls_bind") for h in hits),
    absorbs=("nccl_error",),
    also=(
        Alternative(
            "driver_too_old",
            "a driver without the multicast objects NVLS binds (CUDA 12.1+ drivers, R530+)",
            "Update the driver (nvidia-smi shows its version) to one that supports CUDA multicast, or run with "
            "NCCL_NVLS_ENABLE=0.",
            when=("nvls_bind",),
        ),
    ),
    describe=_fabric,
)


def _d_state(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    pid = facts.get("pid")
    return (
        f"a worker{' (pid ' + pid + ')' if pid else ''} is stuck in uninterruptible kernel sleep (D-state): it "
        "waits inside a driver or a file system and no signal ends it" + on_ranks(hits),
        "See where it waits: cat /proc/<pid>/stack and /proc/<pid>/wchan (as root), and the kernel log "
        "(sudo dmesg -T | tail -100). An NVIDIA driver frame or an Xid in the log (a wedged GPU, a hung NCCL "
        "collective in the driver): reset the GPU or recycle the host. An nfs / lustre / gpfs / fuse frame: the "
        "shared file system stopped answering (a checkpoint or dataset on it); fix the mount or write to local "
        "disk. A NIC driver frame (mlx5): the network adapter. The host usually has to be drained and rebooted; "
        "restart the job from its last checkpoint elsewhere.",
    )


WORKER_STUCK_IN_KERNEL = Recogniser(
    kind="worker_stuck_in_kernel",
    title="a worker stuck in uninterruptible kernel sleep (D-state)",
    templates=("torch:worker-pid-stuck-in-uninterruptible-sleep", "torch:process-did-not-exit-after-within"),
    anchors=(
        "stuck in uninterruptible sleep (D-state)",
        "Worker may be in uninterruptible kernel sleep",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "abandoning and continuing teardown",
    ),
    facts=(
        R(r"Worker pid=(?P<pid>\d{1,10}) stuck in uninterruptible sleep"),
        R(r"Process (?P<pid>\d{1,10}) did not exit after"),
        R(r"(?P<d_state>stuck in uninterruptible sleep \(D-state\))"),
    ),
    # local_elastic_agent.py reads the worker's state from /proc (D) before it says so: certain. The teardown's
    # "did not exit after SIGKILL within Ns" (multiprocessing/api.py _close) only says a worker outlived the
    # join's timeout ("may be"): it is printed while the agent stops the workers after another failure, and a
    # worker still writing a core dump or releasing its memory outlives it too
    confirm=lambda hits, ctx: any("d_state" in h.facts for h in hits),
    also=(
        Alternative(
            "child_failed",
            "a worker slow to exit while torchrun stopped the group after an earlier failure",
            "Read the log above the teardown for the first worker's own error (or torchrun's failure summary): "
            "that is what stopped the group; a worker that takes long to exit is often one writing a core dump "
            "(ulimit -c 0) or releasing a large amount of memory.",
        ),
    ),
    describe=_d_state,
)

RECOGNISERS = (GPU_HARDWARE_FAULT, FABRIC_MANAGER, WORKER_STUCK_IN_KERNEL)
