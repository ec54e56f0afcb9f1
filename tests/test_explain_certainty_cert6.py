"""Certainty, sixth round (task CERT6): NCCL's duplicate GPU, the caching allocator's out-of-memory line, and the
rest of the certain readings of the memory, device placement, other and comm families, each read against every
caller of its message.

- NCCL's "Duplicate GPU detected" (src/init.cc, 2.5-2.28; 2.30+ "Multiple Ranks are using the same GPU") compares
  two ranks' host identity and GPU bus id. The identity (src/misc/utils.cc getHostHash) is the hostname and the
  kernel's boot id, or NCCL_HOSTID in place of both: set to one value on every node, ranks of two identical
  servers on the same GPU slot collide (NVIDIA/nccl#879). MIG instances of one GPU share its bus id. Certain alone
  (the host identity is the machine's unless NCCL_HOSTID says otherwise); likely where the log names NCCL_HOSTID
  (nccl_env_value named) or MIG instances (gpu_selection named).
- CUDACachingAllocator's "CUDA out of memory. Tried to allocate N": a request of a thousand GiB or more is a size
  computed wrong (likely, input_shape_mismatch named, as CERT2 made the CPU allocator's); one over four times the
  GPU but one a larger GPU holds is no longer told "no GPU has that much, a smaller batch will not help"; "N
  allowed;" (set_per_process_memory_fraction) is the process's own cap, not fragmentation with the GPU's free
  memory left; and the fix names memory kept from step to step (a leak prints the same line).
- A KeyboardInterrupt of a rank on Windows may be torchrun's: its elastic agent stops the workers with
  CTRL_C_EVENT there (torch/distributed/elastic/multiprocessing/subprocess_handler.py _get_default_signal).
- Fixes corrected: accelerate's RTX 4000 refusal lifts with NVIDIA driver 550.40.07 (utils/environment.py
  check_cuda_p2p_ib_support); multiprocessing's bootstrapping error in a frozen program needs freeze_support().

Checked and left certain (one cause in every caller): Open MPI's "exited on signal 9 (Killed)" (mpirun reports the
first process that ended abnormally; the ones it stops after are not reported so); CPython's "cannot serialize a
bytes object larger than 4 GiB" (_pickle.c save_bytes, protocol < 4 only); LMDB's MDB_MAP_FULL (the map size the
environment was opened with); ProcessGroupMPI's "doesn't have CUDA-aware MPI support" (its only check, the fix
names a rebuild too); torch.quantile's "input tensor is too large" (Sorting.cpp, the 2**24 check); Lightning's
"You requested gpu: [...] But your machine only has: [...]" (_sanitize_gpu_ids, ids not visible); the Ray
autoscaler's "No available node types can fulfill resource request".
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, lead, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

DUPLICATE = "node1:2301:2345 [0] init.cc:904 NCCL WARN Duplicate GPU detected : rank 8 and rank 0 both on CUDA device 1b000\n"
MULTIPLE = (
    "node1:2301:2345 [0] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set "
    "NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.\n"
)
HOSTID_INFO = "node1:2301:2301 [0] NCCL INFO NCCL_HOSTID set by environment to cluster-a\n"


def test_duplicate_gpu_alone_stays_certain():
    found = certain(DUPLICATE, "duplicate_gpu")
    assert "NCCL_HOSTID" not in found.summary and "LOCAL_RANK" in found.fix, found.fix


@pytest.mark.parametrize("setting", [HOSTID_INFO, "export NCCL_HOSTID=cluster-a\n"])
@pytest.mark.parametrize("warning", [DUPLICATE, MULTIPLE])
def test_duplicate_gpu_beside_nccl_hostid_is_likely_with_the_shared_identity_named(setting, warning):
    found = likely_with(setting + warning, "duplicate_gpu", "log.nccl_env_value")
    assert "Unset NCCL_HOSTID" in found.fix, found.fix


def test_duplicate_gpu_on_mig_instances_is_likely_with_their_shared_bus_id_named():
    text = "CUDA_VISIBLE_DEVICES=MIG-4f8d2a1c-77e1-5b0e-9e52-0c1a2b3c4d5e\n" + DUPLICATE
    found = likely_with(text, "duplicate_gpu", "log.gpu_selection")
    assert "MIG instances" in found.fix, found.fix


OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {request}. GPU 0 has a total capacity of "
    "{total} of which {free} is free. Including non-PyTorch memory, this process has 6.97 GiB memory in use. "
    "{allowed}Of the allocated memory 5.45 GiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch "
    "but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"
)


def oom(request: str, total: str = "23.56 GiB", free: str = "16.57 GiB", allowed: str = "") -> str:
    return OOM.format(request=request, total=total, free=free, allowed=allowed)


def test_a_request_no_gpu_holds_is_likely_a_wrong_size():
    found = likely_with(oom("130206.04 GiB"), "cuda_oom", "log.input_shape_mismatch")
    assert "no GPU has that much" in found.fix, found.fix


def test_a_request_a_larger_gpu_holds_stays_certain_and_keeps_the_smaller_batch():
    found = certain(oom("48.00 GiB", total="7.79 GiB", free="5.12 GiB"), "cuda_oom")
    assert "no GPU has that much" not in found.fix and "smaller batch" in found.fix, found.fix
    assert "more than four times this GPU's 7.79 GiB" in found.fix, found.fix


def test_a_per_process_cap_is_named_and_not_read_as_fragmentation():
    text = oom("2.00 GiB", total="79.10 GiB", free="60.12 GiB", allowed="7.00 GiB allowed; ")
    found = certain(text, "cuda_oom")
    assert "set_per_process_memory_fraction" in found.fix and "capped at 7.00 GiB" in found.fix, found.fix
    assert "fragmentation" not in found.fix, found.fix


def test_torch_1_wording_of_the_cap_is_read_too():
    text = (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.10 GiB total capacity; 6.90 GiB "
        "already allocated; 60.12 GiB free; 7.00 GiB allowed; 6.95 GiB reserved in total by PyTorch)\n"
    )
    found = certain(text, "cuda_oom")
    assert "capped at 7.00 GiB" in found.fix and "fragmentation" not in found.fix, found.fix


def test_the_fix_names_memory_kept_from_step_to_step():
    found = certain(oom("2.00 GiB", free="20.00 MiB"), "cuda_oom")
    assert "loss.item()" in found.fix and "torch.no_grad()" in found.fix, found.fix


WINDOWS_RANK = (
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "C:\\Users\\ana\\train.py", line 40, in <module>\n'
    "[rank1]:     main()\n"
    '[rank1]:   File "C:\\Users\\ana\\train.py", line 31, in main\n'
    "[rank1]:     for batch in loader:\n"
    "[rank1]: KeyboardInterrupt\n"
)


def test_a_windows_ranks_keyboard_interrupt_may_be_torchruns_stop():
    found = explained(WINDOWS_RANK)
    assert (found.id, found.details.get("confidence")) == ("log.interrupted", "likely"), found.summary
    assert found.details["alternatives"] == ["log.child_failed"] and "Root Cause" in found.fix, found.fix


@pytest.mark.parametrize(
    "text",
    [
        WINDOWS_RANK.replace("C:\\Users\\ana", "/home/ana"),  # torchrun stops Linux workers with SIGTERM
        "".join(line.removeprefix("[rank1]: ") + "\n" for line in WINDOWS_RANK.splitlines()),  # one process
    ],
)
def test_a_keyboard_interrupt_elsewhere_stays_the_users_stop(text):
    found = explained(text)
    assert (found.id, found.details.get("confidence")) == ("log.interrupted", "certain"), found.summary


def test_accelerates_rtx_4000_refusal_names_the_driver_that_lifts_it():
    text = (
        "NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or IB. "
        'Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use `accelerate launch` which will do this '
        "automatically.\n"
    )
    found = certain(text, "gpu_p2p")
    assert "550.40.07" in found.fix and "NCCL_P2P_DISABLE=1" in found.fix, found.fix


def test_the_bootstrapping_error_names_freeze_support_for_a_frozen_program():
    text = (
        "RuntimeError: \n        An attempt has been made to start a new process before the\n"
        "        current process has finished its bootstrapping phase.\n"
    )
    found = certain(text, "spawn_main_guard")
    assert "multiprocessing.freeze_support()" in found.fix and "__name__" in found.fix, found.fix


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "mpirun noticed that process rank 3 with PID 41233 on node gpu-07 exited on signal 9 (Killed).\n",
            "worker_killed",
        ),
        ("OverflowError: cannot serialize a bytes object larger than 4 GiB\n", "pickle_size_limit"),
        ("lmdb.MapFullError: mdb_put: MDB_MAP_FULL: Environment mapsize limit reached\n", "lmdb_map_full"),
        (
            "RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support\n",
            "mpi_implementation",
        ),
        ("RuntimeError: quantile() input tensor is too large\n", "quantile_input_too_large"),
        (
            "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1, 2, 3]\n"
            " But your machine only has: [0, 1]\n",
            "gpus_requested_not_visible",
        ),
        (
            "Error: No available node types can fulfill resource request {'GPU': 8.0}. Add suitable node types to "
            "this cluster to resolve this issue.\n",
            "ray_resources",
        ),
    ],
)
def test_one_cause_anchors_stay_certain(text, kind):
    certain(text, kind)


@pytest.mark.parametrize("name", ["142.txt", "155.txt"])
def test_the_train_logs_of_the_allocator_stay_certain(name):
    found = lead(name)
    assert (found.id, found.details["confidence"]) == ("log.cuda_oom", "certain"), found.summary
