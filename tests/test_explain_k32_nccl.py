"""NCCL's own WARNs naming what failed (kinds/gdrcopy.py, kinds/nccl_driver_library.py): GDRCopy's calls with
NCCL_GDRCOPY_ENABLE=1 and the CUDA driver library NCCL loads, as NCCL prints them and as torch's DistBackendError
quotes them under "Last error:" (NCCL-only paths: no CPU run prints them); and near misses that stay NCCL's other
kinds."""

from __future__ import annotations

import pytest
from explaining import explained, filled, leads_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

TORCH_NCCL_ERROR = (
    "[rank3]: Traceback (most recent call last):\n"
    '[rank3]:   File "/home/ana/project/train.py", line 61, in <module>\n'
    "[rank3]:     dist.all_reduce(t)\n"
    '[rank3]:   File "/opt/conda/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2806, in '
    "all_reduce\n"
    "[rank3]:     work = group.allreduce([tensor], opts)\n"
    "[rank3]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "[rank3]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
    "[rank3]: Last error:\n"
    "[rank3]: {last}\n"
)


def test_a_gdrcopy_pin_that_fails_leads_the_system_error():
    leads_with(
        TORCH_NCCL_ERROR.format(last="gdr_pin_buffer(addr 7f3a2c000000, size 65536) failed: -22"),
        "nccl_gdrcopy",
        "certain",
        ["gdr_pin_buffer(addr 7f3a2c000000, size 65536) failed: -22", "NCCL_GDRCOPY_ENABLE=0", "gdrdrv"],
    )


def test_a_gdrcopy_warn_line_as_nccl_prints_it():
    found = leads_with(
        "gpu-node-07:1234:1290 [0] misc/gdrwrap.cc:217 NCCL WARN gdr_map(handle 5593ab1c0d70, size 65536) failed: -1\n",
        "nccl_gdrcopy",
        "certain",
        ["gdr_map(handle 5593ab1c0d70, size 65536) failed: -1", "unset it"],
    )
    assert "NCCL WARN" not in found.summary, found.summary


def test_an_old_gdrcopy_library():
    leads_with(
        "gpu-node-07:1234:1290 [0] include/gdrwrap.h:169 NCCL WARN "
        + filled("nccl:gdr-pin-buffer-v2-not-available")
        + "\n",
        "nccl_gdrcopy",
        "certain",
        ["GDRCopy 2.5+"],
    )


def test_shared_memory_under_last_error_stays_a_system_error():
    found = explained(
        TORCH_NCCL_ERROR.format(
            last="Error while creating shared memory segment /dev/shm/nccl-7Rk2 (size 9637888)"
        )
    )
    assert found.id == "log.nccl_system_error", (found.id, found.summary)


def test_missing_driver_entry_points_are_likely_with_both_causes():
    leads_with(
        TORCH_NCCL_ERROR.format(last=filled("nccl:cuda-some-pfn-functions-not-found")),
        "nccl_cuda_driver",
        "likely",
        ["PFN functions", "--gpus all", "upgrade it"],
    )


def test_nccl_without_libcuda_names_its_path_setting():
    line = filled(
        "nccl:failed-to-find-cuda-library-nccl",
        "libcuda.so",
        "/usr/local/cuda/compat",
        "libcuda.so: cannot open",
    )
    leads_with(
        f"node1:88:88 [0] misc/cudawrap.cc:188 NCCL WARN {line}\n",
        "nccl_cuda_driver",
        "likely",
        ["NCCL_CUDA_PATH='/usr/local/cuda/compat'", "unset NCCL_CUDA_PATH"],
    )


def test_torch_without_libcuda_is_not_ncclss_driver_library():
    found = explained("OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n")
    assert found.id != "log.nccl_cuda_driver", found.summary


def test_ranks_that_disagree_on_the_communicator_size_are_likely():
    line = "node-2:4411:4470 [0] bootstrap.cc:140 NCCL WARN Bootstrap Root : mismatch in rank count from procs 16 : 8\n"
    leads_with(line, "nccl_bootstrap_mismatch", "likely", ["16 : 8", "new_group", "unset NCCL_COMM_ID"])


def test_growing_a_communicator_under_nccl_comm_id():
    line = filled("nccl:ncclcommgetuniqueid-should-not-be-called-when")
    leads_with(
        f"node-2:4411:4470 [0] bootstrap.cc:437 NCCL WARN {line}\n",
        "nccl_bootstrap_mismatch",
        "certain",
        ["ncclCommGrow"],
    )


def test_a_version_mismatch_between_ranks_is_not_a_bootstrap_one():
    found = explained(
        "node-2:4411:4470 [0] init.cc:1021 NCCL WARN Mismatched NCCL version detected : rank 0 version 21805 rank 8 "
        "version 22105\n"
    )
    assert found.id == "log.nccl_version_mismatch", (found.id, found.summary)


def test_multi_node_nvlink_without_imex():
    line = (
        "gb200-n3:9311:9342 [2] mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize 72) is available but not working on this "
        "system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to "
        "ignore this issue."
    )
    leads_with(
        TORCH_NCCL_ERROR.format(last=line.split("NCCL WARN ")[1]) + line + "\n",
        "mnnvl_imex",
        "certain",
        ["cliqueSize 72", "nvidia-imex-ctl -N", "NCCL_MNNVL_ENABLE=0"],
    )


def test_nvls_multicast_binding_stays_the_fabric_managers():
    found = explained(
        "node:1:1 [0] transport/nvls.cc:110 NCCL WARN Cuda failure 'system not yet initialized'\n"
        "RuntimeError: CUDA error: system not yet initialized\n"
    )
    assert found.id == "log.fabric_manager", (found.id, found.summary)
