"""The seventy-ninth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3767-3816)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# NCCL src/misc/socket.cc socketTryAccept (v2.18.6-v2.28.9): WARN("socketTryAccept: Accept failed: %s",
# strerror(errno)), with EMFILE
def test_nccl_accepting_a_peer_with_no_descriptor_left_is_the_open_files_limit():
    found = reads(
        "gpu-node-07:48211:48390 [0] misc/socket.cc:483 NCCL WARN socketTryAccept: Accept failed: Too many open "
        "files\n",
        "open_files_limit",
        "certain",
    )
    assert "ulimit -n" in found.fix and "limits.conf" in found.fix


# src/os/linux.cc ncclOsSocketTryAccept (v2.30.7+), the same accept under its newer name
def test_the_newer_nccl_accept_says_the_same():
    reads(
        "gpu-node-07:48211:48390 [3] NCCL WARN ncclOsSocketTryAccept: Accept failed: Too many open files\n",
        "open_files_limit",
        "certain",
    )


# the same accept failing for another reason is not the limit on open files
def test_an_accept_failing_otherwise_is_not_the_open_files_limit():
    found = explained(
        "gpu-node-07:48211:48390 [0] NCCL WARN socketTryAccept: Accept failed: Connection reset by peer\n"
    )
    assert found.id != "log.open_files_limit", found.summary


# CPython's OSError for EMFILE (Objects/exceptions.c, glibc's strerror) from an open: the limit reached, the
# reason not said
def test_an_open_refused_with_errno_24_is_likely_the_open_files_limit():
    found = reads(
        "OSError: [Errno 24] Too many open files: '/data/coco/train2017/000000391895.jpg'\n",
        "open_files_limit",
        "likely",
    )
    assert "setrlimit" in found.fix


# torch/utils/data/dataloader.py's own message stays the DataLoader's
def test_the_dataloaders_own_too_many_open_files_is_not_this():
    found = explained(
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase "
        "the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
        "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n"
    )
    assert found.id == "log.dataloader_shm", found.summary


# torch/csrc/distributed/c10d/ProcessGroupMPI.cpp: mpiDatatype.at(tensor.scalar_type()) for a bfloat16 tensor,
# std::out_of_range raised by pybind11 as IndexError, under all_reduce's frame
def test_a_bfloat16_all_reduce_over_mpi_is_a_dtype_the_backend_does_not_carry():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "/opt/app/train.py", line 88, in <module>\n'
        "    dist.all_reduce(grad_bf16)\n"
        '  File "/usr/local/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2501, in '
        "all_reduce\n"
        "    work = group.allreduce([tensor], opts)\n"
        "IndexError: map::at\n",
        "collective_dtype_unsupported",
        "likely",
    )
    assert "float32" in found.fix and "MPI" in found.summary


# map::at is any C++ map's lookup: with no collective in the log it is not this
def test_map_at_without_a_collective_is_not_a_collective_dtype():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/opt/app/tokenize.py", line 12, in <module>\n'
        "    ids = vocab.lookup(tokens)\n"
        "IndexError: map::at\n"
    )
    assert found.id != "log.collective_dtype_unsupported", found.summary


# CPython's OSError with two file names (os.rename / os.replace): the temporary checkpoint already moved away
def test_a_temporary_checkpoint_gone_at_its_rename_is_a_concurrent_checkpoint_write():
    found = reads(
        "FileNotFoundError: [Errno 2] No such file or directory: 'output/train/exp3/tmp.pth.tar' -> "
        "'output/train/exp3/last.pth.tar'\n",
        "concurrent_checkpoint_write",
        "likely",
    )
    assert "global rank 0" in found.fix and "tmp.pth.tar" in found.summary


# the same rename of a file that is not a checkpoint, and a checkpoint path that is simply not there
def test_a_renamed_cache_file_or_a_missing_checkpoint_is_not_a_concurrent_write():
    found = explained(
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/cache/shard-0001.arrow.tmp' -> "
        "'/data/cache/shard-0001.arrow'\n"
    )
    assert found.id != "log.concurrent_checkpoint_write", found.summary
    found = explained("FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints/epoch_10.pth'\n")
    assert found.id != "log.concurrent_checkpoint_write", found.summary
