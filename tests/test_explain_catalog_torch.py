"""Catalog templates of torch, torch's C++ and NCCL mapped to kinds from their sources: each group on a line as
its source prints it (values filled in), and a near miss that must not be named with that kind.

The sources: torch/utils/data (dataloader.py, sampler.py, distributed.py, dataset.py, _utils/collate.py),
torch/distributed/distributed_c10d.py, torch/csrc/distributed/c10d (Backend.hpp, ProcessGroupGloo.cpp,
ProcessGroupGlooDetail.hpp, Utils.hpp, socket.cpp, reducer.cpp), NCCL's src/ WARNs.
"""

from __future__ import annotations

import io

import pytest
from explaining import names_its_kind

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def findings(text: str):
    """Every finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))


# (line as printed, kind, confidence, words the summary or fix must hold)
NAMED = [
    # dataloader.py DataLoader.__init__: an IterableDataset beside a DistributedSampler
    (
        "ValueError: DataLoader with IterableDataset: expected unspecified sampler option, but got "
        "sampler=<torch.utils.data.distributed.DistributedSampler object at 0x7f3a2c1d5e50>\n",
        "dataloader_options",
        "certain",
        ["IterableDataset", "split_dataset_by_node"],
    ),
    (
        "ValueError: DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=True\n",
        "dataloader_options",
        "certain",
        ["__iter__"],
    ),
    (
        "ValueError: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last\n",
        "dataloader_options",
        "certain",
        ["batch_sampler"],
    ),
    # sampler.py BatchSampler: a per-GPU batch computed as global // world_size that came out 0
    (
        "ValueError: batch_size should be a positive integer value, but got batch_size=0\n",
        "dataloader_options",
        "certain",
        ["world_size"],
    ),
    (
        # RandomSampler's num_samples is len(dataset): 0 is an empty dataset, likely (test_explain_certainty_review_5)
        "ValueError: num_samples should be a positive integer value, but got num_samples=0\n",
        "data_path_missing",
        "likely",
        ["positive num_samples", "len(dataset)"],
    ),
    (
        "ValueError: num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.\n",
        "dataloader_options",
        "certain",
        ["num_workers"],
    ),
    (
        "ValueError: timeout option should be non-negative\n",
        "dataloader_options",
        "certain",
        ["timeout"],
    ),
    (
        "ValueError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
        "enable multiprocessing, otherwise set prefetch_factor to None.\n",
        "dataloader_options",
        "certain",
        ["prefetch_factor=None"],
    ),
    (
        "ValueError: multiprocessing_context option should specify a valid start method in ['fork', 'spawn', "
        "'forkserver'], but got multiprocessing_context='spwan'\n",
        "dataloader_options",
        "certain",
        ["forkserver"],
    ),
    (
        "ValueError: batch_size attribute should not be set after DataLoader is initialized\n",
        "dataloader_options",
        "certain",
        ["build a new one"],
    ),
    # distributed.py DistributedSampler: LOCAL_RANK of node 1 with the number of nodes
    (
        "ValueError: Invalid rank 9, rank should be in the interval [0, 7]\n",
        "dataloader_options",
        "certain",
        ["dist.get_world_size()"],
    ),
    (
        "AssertionError: Size mismatch between tensors\n",
        "dataloader_options",
        "certain",
        ["TensorDataset"],
    ),
    (
        # likely: a torch before 1.13 prints it for fractions too (it reads them as lengths)
        "ValueError: Sum of input lengths does not equal the length of the input dataset!\n",
        "dataloader_options",
        "likely",
        ["random_split"],
    ),
    (
        "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
        "<class 'PIL.Image.Image'>\n",
        "dataloader_options",
        "certain",
        ["ToTensor", "collate_fn"],
    ),
    (
        "RuntimeError: Batches of nested tensors are not currently supported by the default collate_fn; please "
        "provide a custom collate_fn to handle them appropriately.\n",
        "dataloader_options",
        "certain",
        ["collate_fn"],
    ),
    # dataloader.py _MultiProcessingDataLoaderIter: the warning before it re-raises the worker's start failure
    (
        "UserWarning: Got pickle error when attempting to start a worker Process. This might be because the "
        "worker Process arguments are not picklable. Python 3.14+ changed the multiprocessing start method in "
        "non-Mac POSIX platforms to 'forkserver', which requires the worker Process arguments to be picklable. "
        "You can also try multiprocessing.set_start_method('fork').\n",
        "spawn_pickling",
        "certain",
        ["multiprocessing_context='fork'"],
    ),
    # Backend.hpp: a collective the group's backend does not implement
    (
        "RuntimeError: Backend ucc does not support recvAnysource\n",
        "collective_arguments",
        "certain",
        ["backend"],
    ),
    (
        "RuntimeError: Backend custom does not support barrier\n",
        "collective_arguments",
        "certain",
        ["backend"],
    ),
    # ProcessGroupGlooDetail.hpp / distributed_c10d.py: a reduction op the tensors do not take
    (
        "RuntimeError: Cannot use ReduceOp.BXOR with non-integral dtype\n",
        "collective_arguments",
        "certain",
        ["BXOR", "integer"],
    ),
    (
        "RuntimeError: Cannot use ReduceOp.PREMUL_SUM with Gloo\n",
        "collective_arguments",
        "certain",
        ["world size"],
    ),
    (
        "ValueError: all_reduce does not support ReduceOp.MAX on complex tensors\n",
        "collective_arguments",
        "certain",
        ["view_as_real"],
    ),
    (
        "RuntimeError: unsupported reduction operation (allreduce of sparse tensors only works with "
        "ReduceOp.SUM)\n",
        "collective_arguments",
        "certain",
        ["sparse"],
    ),
    # ProcessGroupGloo.cpp invalidArgument: tensors of one collective that differ
    (
        "RuntimeError: ProcessGroupGloo::scatter: requires empty input on non-root\n",
        "collective_arguments",
        "certain",
        ["root"],
    ),
    (
        "RuntimeError: ProcessGroupGloo::allgather: tensors must all have the same type\n",
        "collective_arguments",
        "certain",
        ["empty_like"],
    ),
    (
        "ValueError: Invalid usage of tensors with different dtypesFound torch.float32 and torch.bfloat16\n",
        "collective_arguments",
        "certain",
        ["dtype"],
    ),
    # reducer.cpp: the unused-parameter message's later lines, a log cut before its first
    (
        "making sure all `forward` function outputs participate in calculating loss.\n"
        "Parameter indices which did not receive grad for rank 1: 254 255\n",
        "ddp_unused_parameters",
        "certain",
        ["find_unused_parameters"],
    ),
    (
        "RuntimeError: Your training graph has changed in this iteration, e.g., one parameter is unused in first "
        "iteration, but then got used in the second iteration. this is not compatible with static_graph set to "
        "True.\n",
        "ddp_unused_parameters",
        "certain",
        ["static_graph"],
    ),
    # reducer.cpp: the ready-twice message's later lines
    (
        "2) Reused parameters in multiple reentrant backward passes. For example, if you use multiple "
        "`checkpoint` functions to wrap the same part of your model, it would result in the same set of "
        "parameters been used by different reentrant backward passes multiple times, and hence marking a "
        "variable ready multiple times.\n",
        "ddp_ready_twice",
        "certain",
        ["use_reentrant=False"],
    ),
    # socket.cpp: the store's client socket that could not be made (a sandbox forbidding it), only likely
    (
        "RuntimeError: The client socket cannot be initialized to connect to localhost:29400 (errno: 1 - "
        "Operation not permitted).\n",
        "rendezvous_or_port",
        "likely",
        ["MASTER_ADDR"],
    ),
    (
        "[E1129 07:12:44.301442 socket.cpp:1019] [c10d] The server socket has failed to listen on [::]:29500 "
        "(errno: 13 - Permission denied).\n",
        "rendezvous_or_port",
        "likely",
        ["29500"],
    ),
    # fsdp/_init_utils.py, fully_sharded_data_parallel.py, wrap.py, _fully_shard/; nn/parallel/distributed.py
    (
        "ValueError: FSDP doesn't support scalar parameters. Change logit_scale to a 1D tensor with numel equal "
        "to 1.\n",
        "wrapper_usage",
        "certain",
        ["1-D tensor"],
    ),
    (
        "RuntimeError: `clip_grad_norm_()` should only be called on the root FSDP instance\n",
        "wrapper_usage",
        "certain",
        ["root"],
    ),
    (
        "AssertionError: FSDP does not support deepcopy. Please use state dict for serialization.\n",
        "wrapper_usage",
        "certain",
        ["copy.deepcopy", "before wrapping"],
    ),
    (
        "RuntimeError: Modules with uninitialized parameters can't be used with `DistributedDataParallel`. Run a "
        "dummy forward pass to correctly initialize the modules\n",
        "wrapper_usage",
        "certain",
        ["dummy"],
    ),
    (
        "ValueError: device_ids can only be None or contain a single element.\n",
        "wrapper_usage",
        "certain",
        ["device_ids=[local_rank]"],
    ),
    (
        "RuntimeError: FSDP only supports single device modules but got params on {device(type='cuda', index=0), "
        "device(type='cuda', index=1)}\n",
        "wrapper_usage",
        "certain",
        ["device_id"],
    ),
    (
        "AssertionError: Child module Linear(in_features=8, out_features=8, bias=True) is already wrapped by "
        "<class 'torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel'>\n",
        "wrapper_usage",
        "certain",
        ["auto_wrap_policy"],
    ),
    # device_mesh.py, _fully_shard/_fsdp_init.py: the mesh's names and dimensions
    (
        "KeyError: \"Invalid mesh_dim_names ('dp_shard',) specified. Valid mesh_dim_names are ['dp', 'tp'].\"\n",
        "device_mesh_config",
        "certain",
        ["mesh['dp']"],
    ),
    (
        "AssertionError: fully_shard expects a 1D or 2D DeviceMesh but got DeviceMesh('cuda', [[[0, 1], [2, 3]], "
        "[[4, 5], [6, 7]]], mesh_dim_names=('pp', 'dp', 'tp'))\n",
        "device_mesh_config",
        "certain",
        ["HSDP"],
    ),
    # cudart's error strings (cuda_runtime.tsv) as torch and NCCL print them
    (
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\n",
        "gpu_hardware_fault",
        "certain",
        ["nvidia-smi -q -d ECC", "Xid"],
    ),
    (
        "misc/strongstream.cc:53 NCCL WARN Cuda failure 'uncorrectable NVLink error detected during the "
        "execution'\n",
        "gpu_hardware_fault",
        "certain",
        ["NVLink"],
    ),
    (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized\n",
        "fabric_manager",
        "certain",
        ["nvidia-fabricmanager"],
    ),
    (
        "RuntimeError: CUDA error: CUDA driver is a stub library\n",
        "cuda_unavailable",
        "certain",
        ["stubs", "LD_LIBRARY_PATH"],
    ),
    (
        "RuntimeError: CUDA error: no CUDA-capable device is detected\n",
        "cuda_unavailable",
        "likely",
        ["CUDA_VISIBLE_DEVICES"],
    ),
    (
        "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination\n",
        "cuda_unavailable",
        "certain",
        ["cuda-compat"],
    ),
    (
        "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n",
        "driver_too_old",
        "certain",
        ["PTX", "TORCH_CUDA_ARCH_LIST"],
    ),
    # NCCL WARNs: os/linux.cc's mmap of the /dev/shm segment, net_ib/init.cc, enqueue.cc
    (
        "node3:2231:2290 [1] NCCL WARN Error: Could not map /dev/shm/nccl-Xk2P1a size 9637888, error: Cannot "
        "allocate memory (12)\n",
        "nccl_system_error",
        "certain",
        ["/dev/shm", "9637888"],
    ),
    (
        "node3:2231:2290 [0] NCCL WARN NET/IB : No IP interface found.\n",
        "network_interface",
        "certain",
        ["NCCL_SOCKET_IFNAME"],
    ),
    (
        "gpu1:88:88 [0] NCCL WARN Trying to send to self without a matching recv\n",
        "collective_arguments",
        "certain",
        ["batch_isend_irecv"],
    ),
    (
        "gpu1:88:88 [0] NCCL WARN FP8 reduction support begins with sm90 capable devices.\n",
        "collective_arguments",
        "certain",
        ["sm90"],
    ),
    # rendezvous.py rendezvous(): a rank read from the environment and passed as a string
    (
        "RuntimeError: `rank` must be an integer. 0\n",
        "process_group_args",
        "certain",
        ["int(os.environ['RANK'])"],
    ),
    (
        "AssertionError: The url: tcp://10.1.2.3:23456?rank=0&world_size=2 has node-specific "
        "arguments(rank, world_size) already.\n",
        "process_group_args",
        "certain",
        ["once"],
    ),
    # elastic local_elastic_agent.py (torch 2.13): a worker in D-state
    (
        "E1129 07:31:02.114000 5120 torch/distributed/elastic/agent/server/local_elastic_agent.py:612] [default] "
        "Worker pid=5377 stuck in uninterruptible sleep (D-state) for 600.0s (>= 600.0s); marking worker group "
        "UNHEALTHY and disabling restarts.\n",
        "worker_stuck_in_kernel",
        "certain",
        ["5377", "/proc/<pid>/stack"],
    ),
    # Utils.hpp recvBytes (torch 2.x): the store's host went away, a consequence
    (
        "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the "
        "remote server shutdown or crash?\n",
        "peer_closed",
        "likely",
        ["died"],
    ),
]


@pytest.mark.parametrize(("text", "kind", "confidence", "words"), NAMED)
def test_source_line_names_its_kind(text, kind, confidence, words):
    names_its_kind(text, kind, confidence, words)


# (a line that shares an anchor's words but is another message, the kind it must not be named)
NEAR_MISSES = [
    # the DataLoader's own sampler + shuffle check is its own kind
    ("ValueError: sampler option is mutually exclusive with shuffle\n", "dataloader_options"),
    # a library's own size check, not TensorDataset's assertion
    ("ValueError: Size mismatch between tensors of the batch and the labels\n", "dataloader_options"),
    (
        "RuntimeError: DataLoader worker (pid 4121) exited unexpectedly with exit code 1.\n",
        "dataloader_options",
    ),
    # the warning of a fallback that works, not a backend that lacks the op
    (
        "UserWarning: CPU process group does not support alltoall yet, falling back with allgather + chunk!\n",
        "collective_arguments",
    ),
    ("RuntimeError: This op does not support barrier semantics on complex inputs\n", "collective_arguments"),
    ("RuntimeError: Cannot use ReduceOp.SUM with integral dtype here\n", "collective_arguments"),
    # IPv6 tried first on a host without it: the IPv4 attempt that follows connects
    (
        "[W socket.cpp:697] [c10d] The client socket cannot be initialized to connect to [node1]:3442 (errno: 97 "
        "- Address family not supported by protocol).\n",
        "rendezvous_or_port",
    ),
    # the elastic agent's own store already serves the port: TCPStore says so and goes on
    (
        "[E304 19:44:40.793259564 TCPStore.cpp:277] [c10d] The server socket on 29500 has failed to bind. "
        "TORCHELASTIC_USE_AGENT_STORE is enabled so ignoring the error.\n",
        "rendezvous_or_port",
    ),
    ("Failed to recv the answer from the config server, retrying\n", "peer_closed"),
    ("Your training graph looks fine: all parameters received grad\n", "ddp_unused_parameters"),
    # another wrapper's words, not FSDP's wrap.py
    ("ValueError: The model is already wrapped by DistributedDataParallel.\n", "wrapper_usage"),
    ("Mesh dimension 'dp' has size 4 on this rank\n", "device_mesh_config"),
    ("WARNING: logging system not yet initialized, using defaults\n", "fabric_manager"),
    ("ECC errors: none (corrected ECC error count 0)\n", "gpu_hardware_fault"),
    ("KeyError: Could not map the label 'cat' to an index\n", "nccl_system_error"),
    ("ValueError: `rank` must be an integer or None in the config\n", "process_group_args"),
    (
        "W1129 07:30:02.1 local_elastic_agent.py:598] [default] Worker pid=5377 entered uninterruptible sleep "
        "(D-state); will mark UNHEALTHY if it remains for 600.0s.\n",
        "worker_stuck_in_kernel",
    ),
    ("gpu1:88:88 [0] NCCL WARN Trying to send to rank 3 which is not connected\n", "collective_arguments"),
]


@pytest.mark.parametrize(("text", "kind"), NEAR_MISSES)
def test_near_miss_is_not_that_kind(text, kind):
    assert f"log.{kind}" not in [f.id for f in findings(text)]
