"""The same failures as other torch / NCCL / CUDA versions print them, and lines that must not be read as one.

Each text is a message as the named component prints it (torch 1.x-2.x, NCCL 2.x, nvcc, DeepSpeed, gloo); the
fixture logs cover one phrasing per kind, these cover the others a recogniser claims to know.
"""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain

PHRASINGS = [
    # torch 1.8-1.10 watchdog, no SeqNum
    (
        "RuntimeError: [Rank 1] Caught collective operation timeout: WorkNCCL(OpType=BROADCAST, TensorShape=[1], "
        "Timeout(ms)=1800000) ran for 1800520 milliseconds before timing out.",
        "nccl_watchdog_timeout",
        ["BROADCAST", "1800 s", "TensorShape=[1]"],
    ),
    (
        "[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
        "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "nccl_watchdog_timeout",
        [],
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 1800000ms "
        "for send operation to complete",
        "collective_timeout",
        ["send", "1800 s"],
    ),
    (
        "[rank0]:[E1023 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat monitor timed out! Process will be "
        "terminated after dumping debug info. workMetaList_.size()=1",
        "nccl_watchdog_timeout",
        [],
    ),
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=23, OpType=ALLREDUCE, TensorShape=[1024], TensorDtypes=Float, "
        "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)), but Rank 1 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=23, OpType=BROADCAST, TensorShape=[10], TensorDtypes=Float).",
        "rank_divergence",
        ["rank 0 ran ALLREDUCE #23 of shape [1024]", "rank 1 ran BROADCAST of shape [10]"],
    ),
    (
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 200 params, while rank 1 has "
        "inconsistent 198 params.",
        "ddp_model_mismatch",
        ["200", "198"],
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. "
        "8773632 vs 8386560",
        "rank_divergence",
        ["8773632", "8386560"],
    ),
    (
        "node3:412:530 [0] init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective "
        "calls at and around rank 39.",
        "rank_divergence",
        ["rank 39"],
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "rendezvous_or_port",
        ["29500"],
    ),
    (
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
        "failed to bind to [::]:29512 (errno: 98 - Address already in use).",
        "rendezvous_or_port",
        ["29512"],
    ),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
        "MASTER_ADDR expected, but not set",
        "rendezvous_or_port",
        ["MASTER_ADDR"],
    ),
    (
        "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/4 clients joined.",
        "rendezvous_or_port",
        ["1 of 4"],
    ),
    (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: "
        "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
        "collective_timeout",
        ["1 of 2"],
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.1.1]:25423: "
        "Connection refused",
        "network_interface",
        ["127.0.1.1:25423"],
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:208] ifa != nullptr. "
        "Unable to find address for: eth0",
        "network_interface",
        ["eth0"],
    ),
    (
        "node1:123:456 [0] include/socket.h:409 NCCL WARN Net : Connect to 10.1.1.1<47033> failed : No route to host",
        "network_interface",
        ["10.1.1.1:47033", "No route to host"],
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 3; 79.15 GiB total "
        "capacity; 75.01 GiB already allocated; 1.02 GiB free; 77.50 GiB reserved in total by PyTorch) If "
        "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
        "cuda_oom",
        ["GPU 3", "1.50 GiB", "77.50 GiB reserved"],
    ),
    ("RuntimeError: CUDA error: out of memory", "cuda_oom", []),
    (
        "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you "
        "tried to allocate 92274688000 bytes.",
        "cpu_oom",
        ["92274688000"],
    ),
    (
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
        "(shm).",
        "dataloader_shm",
        [],
    ),
    (
        "RuntimeError: unable to write to file </torch_3402_1836338706_0>: No space left on device (28)",
        "dataloader_shm",
        [],
    ),
    (
        "RuntimeError: received 0 items of ancdata",
        "dataloader_shm",
        [],
    ),
    (
        "/usr/local/cuda/include/crt/host_config.h:129:2: error: #error -- unsupported GNU version! gcc versions "
        "later than 10 are not supported!",
        "cuda_build",
        ["later than 10"],
    ),
    (
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
        "cuda_build",
        ["CUDA_HOME"],
    ),
    (
        "csrc/fused.cu:1:10: fatal error: cuda_runtime_api.h: No such file or directory",
        "cuda_build",
        ["cuda_runtime_api.h"],
    ),
    ("RuntimeError: Error building extension 'fused_adam'", "cuda_build", ["fused_adam"]),
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "no_kernel_image",
        [],
    ),
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 10020). Please update your "
        "GPU driver",
        "driver_too_old",
        ["10.2"],
    ),
    (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "driver_too_old",
        [],
    ),
    (
        "RuntimeError: Attempting to deserialize object on CUDA device 2 but torch.cuda.device_count() is 1. "
        "Please use torch.load with map_location to map your storages to an existing device.",
        "checkpoint_device_map",
        ["CUDA device 2", "sees 1 GPU"],
    ),
    (
        "RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.",
        "nan_overflow",
        ["LogSoftmaxBackward0"],
    ),
    ("FloatingPointError: Loss became infinite or NaN at iteration=1234!", "nan_overflow", ["1234"]),
    ("Detected inf/nan during batch_number=0", "nan_overflow", ["batch_number=0"]),
    (
        "Epoch 3:  12%|█▏        | 120/1000 [01:02<07:38,  1.92it/s, loss=nan, v_num=0]",
        "nan_overflow",
        ["loss=nan"],
    ),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "backend_unavailable", ["NCCL"]),
    (
        "node2:77:88 [1] init.cc:652 NCCL WARN Mismatched NCCL version detected : rank 0 version 21803 rank 8 "
        "version 21602",
        "nccl_version_mismatch",
        ["NCCL 2.18.3", "NCCL 2.16.2"],
    ),
    (
        "ImportError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
        "ncclCommRegister",
        "extension_import",
        ["ncclCommRegister"],
    ),
    (
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1.52587890625e-05",
        "nan_overflow",
        [],
    ),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "backend_unavailable", []),
    ("AssertionError: Torch not compiled with CUDA enabled", "cuda_unavailable", []),
    (
        "ImportError: /opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "extension_import",
        ["flash_attn_2_cuda", "_ZN3c104cuda9SetDeviceEi"],
    ),
    (
        "../aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
        "thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
        "RuntimeError: CUDA error: device-side assert triggered",
        "device_assert",
        [],
    ),
    (
        "Root Cause (first observed failure):\n[0]:\n  time      : 2024-05-01_10:00:00\n  host      : node07\n"
        "  rank      : 3 (local_rank: 1)\n  exitcode  : -9 (pid: 8459)\n  error_file: <N/A>\n"
        "  traceback : Signal 9 (SIGKILL) received by PID 8459",
        "worker_killed",
        ["exit code -9"],
    ),
    ("Segmentation fault (core dumped)", "worker_crash", []),
    (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n====\ntrain.py FAILED\n"
        "Root Cause (first observed failure):\n[0]:\n  time      : 2024-05-01_10:00:00\n  host      : node07\n"
        "  rank      : 3 (local_rank: 1)\n  exitcode  : 1 (pid: 8459)\n  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "child_failed",
        ["rank 3", "node07", "exited with 1"],
    ),
]


@pytest.mark.parametrize(
    "text, kind, facts", PHRASINGS, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(PHRASINGS)]
)
def test_phrasing(text, kind, facts):
    found = explain(["-"], stdin=io.BytesIO(("some output\n" + text + "\nmore output\n").encode()))
    assert found[0].id == f"log.{kind}", [(f.id, f.summary) for f in found]
    for fact in facts:
        assert fact in found[0].summary, (fact, found[0].summary)


NOT_FAILURES = [
    # torch prints this on hosts without IPv6, then connects over IPv4
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 97 - Address "
    "family not supported by protocol).",
    # (DDP's find_unused_parameters warning alone is a likely finding since session 38's T56:
    # test_explain_t56_loop_warnings.py)
    " iteration 100 | lm loss: 2.3E+00 | loss scale: 65536.0 | number of skipped iterations: 0 | number of nan "
    "iterations: 0 |",
    "[2024-05-01 10:00:00,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
    "step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1",
    "/usr/lib/python3/site-packages/transformers/trainer.py:1234: FutureWarning: `tokenizer` is deprecated",
    "NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
    "epoch 1: val_loss=0.3421 val_acc=0.912 (best so far)",
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
    "python: ../nptl/pthread_mutex_lock.c:81: __pthread_mutex_lock: Assertion `mutex->__data.__owner == 0` failed.",
    "UserWarning: Attempting to run cuBLAS, but there was no current CUDA context! Attempting to set the primary "
    "context...",
]


@pytest.mark.parametrize("text", NOT_FAILURES)
def test_not_a_failure(text):
    (finding,) = explain(["-"], stdin=io.BytesIO((text + "\n").encode()))
    assert finding.id == "log.unrecognised", finding.summary


TITLES = [
    ("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)", "cuda_oom"),
    (
        "Expected to have finished reduction in the prior iteration before starting a new one",
        "ddp_unused_parameters",
    ),
    ("Distributed package doesn't have NCCL built in", "backend_unavailable"),
    ("no kernel image is available for execution on the device", "no_kernel_image"),
    ("Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000", "duplicate_gpu"),
    (
        'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/'
        'CUDAContext.cpp":50',
        "invalid_device_ordinal",
    ),
    ("RuntimeError: DataLoader worker (pid 2207) is killed by signal: Bus error.", "dataloader_shm"),
    ("Loss is NaN, stopping training", "nan_overflow"),
    ("Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.", "nan_overflow"),
    (
        "DataLoader worker (pid 12) is killed by signal: Bus error. It is possible that dataloader's workers are out "
        "of shared memory.",
        "dataloader_shm",
    ),
]


@pytest.mark.parametrize("title, kind", TITLES)
def test_an_issue_title_without_its_exception_prefix(title, kind):
    found = explain(["-"], stdin=io.BytesIO(title.encode()))
    assert found[0].id == f"log.{kind}"


# the recognisers in PARTS slices, so that the suite's workers share them (all of them in one test took 53 s)
PARTS = 8


@pytest.mark.parametrize("part", range(PARTS))
def test_every_anchor_alone_or_garbled_gives_findings_not_a_crash(part):
    """An anchor with none of the facts around it (a log cut mid-message) still gives a finding or none."""
    from torchdoctor.explain.kinds import RECOGNISERS

    for recogniser in RECOGNISERS[part::PARTS]:
        for anchor in recogniser.anchors:
            for text in (anchor, f"RuntimeError: {anchor} :: (( [[ 0x{anchor[::-1]}", f"Error {anchor}" * 3):
                found = explain(["-"], stdin=io.BytesIO(text.encode()))
                assert found and all(f.summary for f in found), (recogniser.kind, text)
