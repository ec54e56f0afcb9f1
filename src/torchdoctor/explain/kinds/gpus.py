"""Which GPUs the ranks use: two ranks on one GPU, GPUs out of each other's reach, too few GPUs seen.

Kinds of failure in which GPUs the ranks use: two ranks on one GPU, a rank on a GPU it should not use, GPUs
that cannot reach each other peer-to-peer, more GPUs asked for than the process can see.

The message texts are NCCL's (``src/init.cc`` "Duplicate GPU detected", ``src/transport/p2p.cc``), the CUDA
runtime's, accelerate's and Lightning's (``lightning/fabric/utilities/device_parser.py``, ``_sanitize_gpu_ids``:
"You requested gpu: [...]\n But your machine only has: [...]", "GPUs" in pytorch_lightning 1.x), as printed across
torch 1.x-2.x.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.comm import (
    NCCL_DEBUG_HINT,
    NCCL_WARN_HINTS,
)
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    merged,
    on_ranks,
)

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _duplicate_gpu(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = next((h.facts for h in hits if "detected" in h.facts), {})
    summary = (
        f"duplicate GPU: rank {facts.get('rank_a', '?')} and rank {facts.get('rank_b', '?')} both on CUDA "
        f"device {facts.get('bus_id', '?')} (bus id)"
        if facts.get("rank_a")
        else "duplicate GPU: two ranks of one communicator use the same GPU"
    )
    fix = (
        "Two processes use the same GPU. Each must pick its own before init_process_group and before "
        "building the model:\n"
        "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))   # and device = f'cuda:{LOCAL_RANK}'\n"
        "Remove any hard-coded device (cuda:0, a default GPU id, CUDA_VISIBLE_DEVICES set inside the "
        "script), and start at most one process per GPU (--nproc_per_node)."
    )
    return summary, fix


def _gpu_selection(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    pick = (
        "Make each rank pick its own GPU from LOCAL_RANK (not RANK, which counts across hosts) before "
        "init_process_group:\n"
        "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n"
        "Start at most one process per GPU (--nproc_per_node = the number of GPUs on that host), and do not set "
        "CUDA_VISIBLE_DEVICES to one GPU for every rank of a host; with one GPU per host, LOCAL_RANK is 0 on each."
    )
    odd = next((h.facts for h in hits if "odd_gpu" in h.facts), None)
    if odd is not None:
        return (
            f"the GPUs of this run are not alike (DataParallel warns GPU {odd['odd_gpu']} has less than 75% of "
            f"the memory or cores of GPU {odd['big_gpu']}) and NCCL failed right after: GPUs of different "
            "models in one job" + on_ranks(hits),
            f"Leave the odd GPU out so that the job runs on GPUs of one model: CUDA_VISIBLE_DEVICES=<the other "
            f"GPUs' indices, without {odd['odd_gpu']}> python train.py (or nn.DataParallel(model, "
            "device_ids=[...]) without it); nvidia-smi -L lists the models. NCCL (which DataParallel uses to "
            "broadcast the weights) may fail between GPUs of different architectures, and the slowest one sets "
            "every step's pace anyway.",
        )
    fsdp = next((h.facts for h in hits if "fsdp_device" in h.facts), None)
    if fsdp is not None:
        return (
            f"FSDP's device_id ({fsdp['fsdp_id']}) is not the rank's current GPU ({fsdp['fsdp_device']})"
            + on_ranks(hits),
            pick + "\nThen pass that same device to FSDP: device_id=torch.cuda.current_device().",
        )
    if any("hip_over_rocr" in h.facts for h in hits):
        return (
            "HIP_VISIBLE_DEVICES lists more GPUs than ROCR_VISIBLE_DEVICES leaves: ROCm applies ROCR first and "
            "HIP's indices count within what it left" + on_ranks(hits),
            "Set only one of them (ROCR_VISIBLE_DEVICES=2,3), or give HIP_VISIBLE_DEVICES indices within ROCR's "
            "list (ROCR_VISIBLE_DEVICES=2,3 HIP_VISIBLE_DEVICES=0,1 selects GPUs 2 and 3).",
        )
    if any("lightning_indices" in h.facts for h in hits):
        return (
            "Lightning's devices were chosen by GPU index, and those indices are not the processes' local ranks"
            + on_ranks(hits),
            "Under a launcher (torchrun, srun) each process's GPU is its LOCAL_RANK: pick the GPUs with "
            "CUDA_VISIBLE_DEVICES=2,3 (they become 0,1) and pass Trainer(devices=2), not devices=[2, 3].",
        )
    found = next((h.facts for h in hits if "buffer_device" in h.facts), None)
    if found is not None:
        return (
            f"the {found['buffer']} of a collective is on GPU {found['buffer_device']}, the rank's NCCL "
            f"communicator on GPU {found['nccl_device']}: the rank did not make its own GPU current"
            + on_ranks(hits),
            pick + "\nCreate the tensors on that device (torch.device('cuda', LOCAL_RANK)), not on cuda:0.",
        )
    if any("kaldi_busy" in h.facts for h in hits):
        return (
            "Kaldi found no free GPU for this job (its CuDevice::SelectGpuId could not create a CUDA context: in "
            "exclusive-process compute mode every GPU was already held)" + on_ranks(hits),
            "Kaldi's GPU jobs (and recipes built on them: pkwrap, nnet3's train scripts) each take a whole GPU in "
            "exclusive-process mode (nvidia-smi -c 3): run no more jobs at once than the host has free GPUs. A "
            "recipe that raises its parallel jobs during training (num_jobs_initial to num_jobs_final, "
            "--trainer.num-jobs-final) fails at the first iteration with more jobs than GPUs: set num_jobs_final "
            "(and num_jobs_initial) to at most the GPU count, and stop leftover processes that hold a GPU "
            "(nvidia-smi).",
        )
    if any("busy" in h.facts for h in hits):
        return (
            "the GPU this process chose is busy or unavailable: another process holds it (a GPU in "
            "exclusive-process mode, two ranks on one GPU, another job) or it is not usable" + on_ranks(hits),
            pick + "\nCheck who holds the GPUs and their compute mode: nvidia-smi; nvidia-smi -q | grep "
            "'Compute Mode' (Exclusive_Process allows one process per GPU; a scheduler that hands out GPUs in "
            "that mode also sets CUDA_VISIBLE_DEVICES itself: do not overwrite it in the script). Stop leftover "
            "processes of an earlier run. If no other process holds it, the GPU itself may be gone: "
            "dmesg | grep -i xid (79: fallen off the bus) — then the host needs a GPU reset or a reboot.",
        )
    return (
        "NCCL invalid usage: most often the ranks picked their GPUs wrongly (every rank on cuda:0, the device "
        "taken from RANK instead of LOCAL_RANK)" + on_ranks(hits),
        pick
        + "\nIf the ranks do have GPUs of their own, rerun with NCCL_DEBUG=WARN: the WARN line before the "
        "error names the misuse.",
    )


GPU_SELECTION = Recogniser(
    # NCCL's ncclInvalidUsage ("invalid usage (run with NCCL_DEBUG=WARN for details)") is any misuse of its API;
    # at start-up it is nearly always the ranks' choice of GPU. cudaErrorDevicesUnavailable (46): the GPU is
    # held by another process in exclusive mode, or is unusable.
    kind="gpu_selection",
    title="ranks on the wrong GPUs",
    anchors=(
        "invalid usage",
        "busy or unavailable",
        "There is an imbalance between your GPUs",
        "mismatchs with NCCL device",
        "Inconsistent compute device and `device_id`",
        "don't match the local rank values of processes",
        "HIP_VISIBLE_DEVICES contains more devices than ROCR_VISIBLE_DEVICES",
        "Will try again to get a GPU after",
        "no more unused GPUs?",
    ),
    templates=(
        "nccl:invalid-usage-run-with-nccl-debug",
        "cuda_runtime:devices-unavailable",
        # NCCL src/enqueue.cc (ArgsCheck): a buffer on another GPU than the communicator's: the rank did not
        # make its own GPU current (torch.cuda.set_device) before the collective
        "nccl:allocated-on-device-mismatchs-with-nccl",
        # torch/distributed/fsdp/_init_utils.py: FSDP's device_id against the rank's current device
        "torch:inconsistent-compute-device-and-device-id",
        # lightning/fabric/strategies/ddp.py: devices chosen by index that are not the local ranks' GPUs
        "lightning:the-selected-device-indices-don-match",
        # torch/nn/parallel/data_parallel.py (_check_balance)'s warning is MISMATCHED_GPUS' template; read here
        # too when an NCCL failure follows within the lines after it
        # torch/cuda/__init__.py _parse_visible_devices (ROCm): HIP_VISIBLE_DEVICES indexes into the GPUs
        # ROCR_VISIBLE_DEVICES leaves, so it cannot list more of them
        "torch:hip-visible-devices-contains-more-devices",
        # Kaldi src/cudamatrix/cu-device.cc (CuDevice::SelectGpuId, --use-gpu=yes): no CUDA context to be had
        # (exclusive-process mode, every GPU held), it warns, sleeps 20 s, and fails on the second try
        "third_party:kaldi-will-try-again-to-get-a-gpu",
        "third_party:kaldi-failed-to-create-cuda-context",
    ),
    match=R(
        r"(?P<invalid_usage>NCCL[^\n]{0,300}invalid usage|ncclInvalidUsage)|(?P<busy>busy or unavailable)|"
        r"(?P<buffer>\w+) allocated on device (?P<buffer_device>\d+) mismatchs with NCCL device (?P<nccl_device>\d+)|"
        r"Inconsistent compute device and `device_id` on rank \d+: (?P<fsdp_device>[\w:]{1,20}) vs "
        r"(?P<fsdp_id>[\w:]{1,20})|"
        r"(?P<lightning_indices>The selected device indices [^\n]{0,60} don't match the local rank values)|"
        r"(?P<hip_over_rocr>HIP_VISIBLE_DEVICES contains more devices than ROCR_VISIBLE_DEVICES)|"
        r"(?P<kaldi_busy>Will try again to get a GPU after \d+ seconds|Failed to create CUDA context, no more unused "
        r"GPUs\?)|"
        r"There is an imbalance between your GPUs\. You may want to exclude GPU (?P<odd_gpu>\d+) which\s+has "
        r"less than 75% of the memory or cores of GPU (?P<big_gpu>\d+)\.(?=[\s\S]{0,900}?(?:NCCL|nccl)\w* ?"
        r"(?:[Ee]rror|WARN|[Ii]nvalid|[Uu]nhandled))"
    ),
    span=8,
    # both messages name what went wrong, not which choice caused it: only likely
    generic=(
        "invalid usage",
        "busy or unavailable",
        "There is an imbalance between your GPUs",
        # Kaldi's: no free GPU; why none was free (too many jobs, another run's leftovers) is not printed
        "Will try again to get a GPU after",
        "no more unused GPUs?",
    ),
    # NCCL's init returns ncclInvalidUsage after its "Duplicate GPU detected" WARN, which only NCCL_DEBUG=WARN
    # shows: an "invalid usage" alone may be two ranks on one GPU
    also=(
        Alternative(
            "duplicate_gpu",
            "two ranks on one GPU (more processes on a host than it has GPUs)",
            "Start one process per GPU: --nproc_per_node (torchrun) or --num_processes (accelerate) = the number "
            "of GPUs of the host (nvidia-smi -L), and set each rank's GPU from LOCAL_RANK.",
            when=("invalid_usage",),
        ),
        # torch/serialization.py restores a CUDA tensor inside `with torch.cuda.device(saved index)`: every rank
        # loading a checkpoint saved from cuda:0 switches to GPU 0, which an exclusive-mode GPU refuses
        Alternative(
            "checkpoint_device_map",
            "every rank restoring a checkpoint onto the GPU it was saved from (torch.load without map_location)",
            "Load checkpoints onto the rank's own GPU or the CPU: torch.load(path, map_location=f'cuda:{LOCAL_RANK}') "
            "(or map_location='cpu', then model.to(device)).",
            when=("busy",),
        ),
    ),
    absorbs=("nccl_error", "nccl_system_error"),
    describe=_gpu_selection,
)


def _mismatched(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    weak, strong = facts.get("weak_gpu"), facts.get("strong_gpu")
    which = (
        f"GPU {weak} has under 75% of GPU {strong}'s memory or cores"
        if weak and strong
        else "its GPUs differ"
    )
    return (
        f"DataParallel warned that {which}: the run is split evenly across unequal GPUs (a warning, the run went "
        "on)",
        "DataParallel gives every GPU an equal share of each batch, so the weakest GPU sets the pace and runs out "
        "of memory first: training slower with both GPUs than with the strong one alone, or out of memory on the "
        f"small one. Leave the weak GPU out: CUDA_VISIBLE_DEVICES={strong or '<the strong GPU>'} python train.py, "
        "or DataParallel(model, device_ids=[...]) listing only matched GPUs (nvidia-smi lists them; a display GPU "
        "is often the small one). For several GPUs, DistributedDataParallel over GPUs of one model is the "
        "recommended way.",
    )


MISMATCHED_GPUS = Recogniser(
    kind="mismatched_gpus",
    title="DataParallel over unequal GPUs",
    anchors=("There is an imbalance between your GPUs",),
    templates=("torch_native:dataparallel-imbalance-between-gpus",),
    span=2,
    facts=(
        R(
            r"You may want to exclude GPU (?P<weak_gpu>\d+) which\s+has less than 75% of the memory or cores of GPU "
            r"(?P<strong_gpu>\d+)"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: what the user saw (slow, out of memory) is not in it
    fallback=True,
    describe=_mismatched,
)


# NCCL (src/init.cc, 2.5-2.28: "Duplicate GPU detected"; 2.30+: "Multiple Ranks are using the same GPU") compares
# two ranks' host identity and GPU (bus id; 2.30+ the UUID). The identity (src/misc/utils.cc getHostHash) is the
# hostname and the kernel's boot id, or NCCL_HOSTID where it is set, in place of both: set to one value on every
# node (NVIDIA/nccl#879), it makes ranks on different machines whose GPUs sit at the same bus id (identical servers)
# one machine's two ranks on one GPU. A log that names NCCL_HOSTID leaves that reading open. So does one that names
# MIG instances (CUDA_VISIBLE_DEVICES=MIG-<uuid>): every instance of a GPU has that GPU's bus id.
_HOSTID, _MIG = "saw_nccl_hostid", "saw_mig_device"
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("NCCL_HOSTID", re.compile(r"(?P<saw_nccl_hostid>NCCL_HOSTID)(?: set by environment to |=)")),
    ("MIG-", re.compile(r"(?P<saw_mig_device>\bMIG-(?:GPU-)?[0-9a-fA-F]{8}-)")),
)


def _own_host_identity(hits: list[Hit], ctx: Context) -> bool:
    """Certain on NCCL's message unless the log names NCCL_HOSTID (the nodes may share one identity) or MIG
    instances (two of one GPU share its bus id)."""
    return _HOSTID not in ctx.facts and _MIG not in ctx.facts


_own_host_identity.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


DUPLICATE_GPU = Recogniser(
    # NCCL src/init.cc: "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx"
    kind="duplicate_gpu",
    title="two ranks on one GPU",
    anchors=("Duplicate GPU detected", "Multiple Ranks are using the same GPU"),
    templates=(
        "nccl:duplicate-gpu-detected-rank-and-rank",
        "nccl:duplicate-gpu-detected-rank-and-rank-2",  # the same WARN with the bus id as %x (older releases)
        # NCCL 2.30+ src/init.cc words the same check this way
        "nccl:multiple-ranks-are-using-the-same",
    ),
    match=R(r"Duplicate GPU detected|Multiple Ranks are using the same GPU"),
    facts=(
        R(r"rank (?P<rank_a>\d+) and rank (?P<rank_b>\d+) both on CUDA device (?P<bus_id>\w+)"),
        R(r"(?P<detected>Duplicate GPU detected|Multiple Ranks are using the same GPU)"),
    ),
    absorbs=("nccl_error", "nccl_system_error", "gpu_selection"),
    confirm=_own_host_identity,
    also=(
        Alternative(
            "nccl_env_value",
            "ranks on different machines that NCCL takes for one: NCCL_HOSTID set to the same value on every node",
            "NCCL tells machines apart by NCCL_HOSTID where it is set (else by hostname and boot id), and ranks "
            "of two nodes on GPUs at the same bus id then look like two ranks on one GPU. Unset NCCL_HOSTID "
            "(the job script, the container's ENV, /etc/nccl.conf), or give each node a value of its own.",
            when=(_HOSTID,),
        ),
        Alternative(
            "gpu_selection",
            "ranks on MIG instances of one GPU, which share its bus id",
            "NCCL compares the GPUs' bus ids, and MIG instances of one GPU have that GPU's: to NCCL they are "
            "one GPU. Give each rank a whole GPU, or MIG "
            "instances of different GPUs (nvidia-smi -L lists which GPU each instance belongs to).",
            when=(_MIG,),
        ),
    ),
    describe=_duplicate_gpu,
)


def _p2p(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("rtx4000"):
        return (
            "accelerate refuses to start on RTX 4000-series GPUs (RTX 4090, 4080, ...) with NCCL's P2P/InfiniBand "
            "paths enabled" + on_ranks(hits),
            "These consumer cards have no GPU peer-to-peer: start the script with `accelerate launch` (which "
            "sets them), or export NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 before it starts. accelerate's releases "
            "that read the driver (utils/environment.py check_cuda_p2p_ib_support) refuse only below NVIDIA driver "
            "550.40.07: on an older driver, updating it lifts the refusal too (nvidia-smi shows the version).",
        )
    if facts.get("too_many_peers"):
        return (
            "more GPUs were joined peer to peer than CUDA allows (peer mapping resources exhausted: each GPU "
            "takes at most 8 peer connections, counted across the whole machine)" + on_ranks(hits),
            "A process that enables peer access between all the GPUs it sees runs out past 8 of them: "
            'DataParallel or a model split over the GPUs (device_map="auto") across more than 8, torch 1.x\'s '
            "start-up on a 16-GPU machine (THCGeneral), or NCCL's P2P transport in one process driving many GPUs. "
            "Let each process see at most 8 GPUs (CUDA_VISIBLE_DEVICES=0,1,...,7), or better one GPU per process "
            "with DDP (torchrun --nproc_per_node=N), which needs no peer mapping of its own; where NCCL prints it "
            "(NCCL WARN Cuda failure 711), NCCL_P2P_LEVEL=NVL (or NCCL_P2P_DISABLE=1) keeps it from mapping every "
            "pair. On a machine of 8 GPUs or fewer, another program holding peer mappings on the same GPUs "
            "(nvidia-smi lists it) counts too.",
        )
    summary = (
        f"GPU peer-to-peer does not work here: {facts.get('what', 'peer access is not supported').strip()}"
    )
    return summary + on_ranks(hits), NCCL_WARN_HINTS[0][1] + "\n" + NCCL_DEBUG_HINT


GPU_P2P = Recogniser(
    # NCCL src/transport/p2p.cc ("failed to open CUDA IPC handle"), cudaErrorPeerAccessUnsupported (217)
    kind="gpu_p2p",
    templates=(
        "cuda_runtime:peer-access-unsupported",
        "cuda_runtime:too-many-peers",
        "nccl:failed-to-open-cuda-ipc-handle",
        "nccl:failed-to-peer-with-device",  # NCCL src/transport/p2p.cc, cudaDeviceEnablePeerAccess failed
        # accelerate/state.py: consumer RTX 4000 cards have no P2P/IB; it refuses to start without the two vars
        "accelerate:using-rtx-series-doesn-support-faster",
        # NCCL src/graph/paths.cc: NVML says P2P is off between GPUs that NVLink joins (a hardware issue)
        "nccl:p2p-is-disabled-between-nvlink-connected-2",
        # transport/p2p.cc: cudaIpcGetMemHandle refused (P2P off, or a container without the host's IPC)
        "nccl:rank-failed-to-get-cuda-ipc",
        "nccl:rank-failed-to-get-cuda-ipc-2",
    ),
    title="GPU peer-to-peer failure",
    anchors=(
        "peer access is not supported",
        "failed to open CUDA IPC handle",
        "failed to peer with device",
        "Using RTX 4000 series doesn't support faster communication",
        "P2P is disabled between NVLINK connected GPUs",
        "failed to get CUDA IPC handle to device",
        # cudaErrorTooManyPeers (711; 60 in CUDA 9 and before, "cuda runtime error (60)"), CUDA_ERROR_TOO_MANY_PEERS
        "peer mapping resources exhausted",
    ),
    # a CUDA IPC handle refused is P2P that does not work, or a container that does not share the host's IPC
    # namespace / shared memory: only likely. The same holds on the other side of the exchange: the peer's
    # cudaIpcOpenMemHandle (transport/p2p.cc: "failed to open CUDA IPC handle : %d %s") fails in a container
    # without the host's IPC namespace as much as without P2P; CUDA's own "peer access is not supported" beside
    # it is still certain
    generic=("failed to get CUDA IPC handle to device", "failed to open CUDA IPC handle"),
    also=(
        Alternative(
            "nccl_system_error",
            "a container without the host's IPC namespace or enough shared memory",
            "Run the container with --ipc=host (or --shm-size=16g and the same for every rank's container; "
            "Kubernetes: an emptyDir of medium Memory on /dev/shm); NCCL_P2P_DISABLE=1 tells the two apart.",
            when=("ipc_handle",),
        ),
    ),
    facts=(
        R(r"(?P<ipc_handle>failed to (?:get CUDA IPC handle to device|open CUDA IPC handle)[^\n]{0,80})"),
        R(
            r"(?P<what>failed to (?:open|get) CUDA IPC handle[^\n]{0,120}|peer access is not supported[^\n]{0,80}|"
            r"failed to peer with device[^\n]{0,80}|Using RTX 4000 series doesn't support faster communication|"
            r"P2P is disabled between NVLINK connected GPUs \d+ and \d+)"
        ),
        R(r"(?P<rtx4000>Using RTX 4000 series doesn't support faster communication)"),
        R(r"(?P<too_many_peers>peer mapping resources exhausted)"),
    ),
    absorbs=("nccl_error",),
    describe=_p2p,
)


# Lightning's device parser, after the GPU ids asked for (devices=, gpus=, a config's list) are checked against
# the ones torch can see; an empty list seen is no GPU at all (kinds/cuda.py, cuda_unavailable)
_REQUESTED = R(
    r"You requested (?:gpu|GPUs):\s*(?P<requested>[^\n]{1,200}?)\s*\n[^\n]{0,80}?"
    r"But your machine only has:\s*(?P<visible>[^\n]{0,200})"
)


def _requested(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    summary = (
        f"Lightning was asked for GPUs {facts.get('requested', '?').strip()}, but this process sees only "
        f"{facts.get('visible', '?').strip()}" + on_ranks(hits)
    )
    fix = (
        "Ask for the GPUs this process can see, or let it see the ones asked for. The request comes from "
        "Trainer(devices=...) / gpus= or a config or launch script that sets it (num_gpus, a list of ids): "
        "lower it to the number of GPUs there are (devices='auto', or -1 for all). Ids count from 0 within "
        "CUDA_VISIBLE_DEVICES, so a launch script, a generated job script or a scheduler (Slurm's per-task GPU "
        "binding) that exports fewer GPUs leaves only those: check `echo $CUDA_VISIBLE_DEVICES` and "
        "`nvidia-smi -L` where the run starts."
    )
    return summary, fix


GPUS_REQUESTED_NOT_VISIBLE = Recogniser(
    kind="gpus_requested_not_visible",
    templates=("lightning:you-requested-gpu-but-your-machine",),
    title="more GPUs asked for than visible",
    anchors=("You requested gpu: ", "You requested GPUs: "),
    match=_REQUESTED,
    span=1,
    # no GPU visible at all is another cause (a CPU-only torch, no driver, no GPU in the container)
    reject=R(r"But your machine only has:\s*\[\]"),
    describe=_requested,
)
