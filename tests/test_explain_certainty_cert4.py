"""Certainty, fourth round (task CERT4): NCCL's shared-memory lines and python-fire's catalog label.

- NCCL 2.12+ (``misc/shmutils.cc``, then ``os/linux.cc`` ncclOsShmOpen) reach the WARN "Error while creating /
  attaching to shared memory segment <path> (size N)" from one ``fail:`` label, and two of the gotos to it are
  CUDA calls on the mapped segment (``CUDACHECKGOTO(cudaHostRegister ...)``, ``cudaHostGetDevicePointer``), after
  a "Cuda failure '<error>'" WARN: ncclUnhandledCudaError, not /dev/shm. 2.12-2.18 print the segment line without
  errno, so the line alone is likely with that reading (``nccl_error``) named; certain where a system call is shown
  failing: its errno after the segment (2.19+), "failed to extend", "shm_open failed", "Call to posix_fallocate /
  mmap failed", "failed to create shared memory file", "Could not map", or NCCL's "unhandled system error".
  "attaching to" with ENOENT is a segment this process cannot see (ranks in separate containers on one host, or the
  creating rank already gone): still a /dev/shm failure (the kind ``gpu_p2p`` names for a container without the
  host's IPC namespace), now with its own fix.
- python-fire's "Could not consume arg: {}" (fire/core.py) is printed for any argument the fired function has no
  parameter for: the catalog maps it to ``launch_command``; --local_rank is the special case local_rank_argument
  confirms from the argument itself.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, lead, likely_with

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

WARN = "node1:2301:2345 [0] misc/shmutils.cc:{} NCCL WARN {}\n"
SEGMENT = "Error while creating shared memory segment /dev/shm/nccl-AbC123 (size 9637888)"


def test_the_segment_line_alone_is_likely_with_a_cuda_failure_named():
    likely_with(WARN.format(132, SEGMENT), "nccl_system_error", "log.nccl_error")


def test_the_segment_line_after_cuda_failure_is_no_certain_dev_shm():
    # the CUDA failure's own reading leads (likely); /dev/shm is not named as certain
    text = WARN.format(103, "Cuda failure 'invalid argument'") + WARN.format(132, SEGMENT)
    found = explained(text)
    assert found.details["confidence"] == "likely", found.summary
    assert found.id != "log.nccl_system_error", found.summary


@pytest.mark.parametrize(
    "text",
    [
        WARN.format(132, SEGMENT + ", error: No space left on device (28)"),
        WARN.format(88, "Error: failed to extend /dev/shm/nccl-AbC123 to 9637892 bytes")
        + WARN.format(132, SEGMENT),
        WARN.format(132, SEGMENT)
        + "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, "
        "NCCL version 2.14.3\n",
    ],
)
def test_a_system_call_shown_failing_stays_certain(text):
    found = certain(text, "nccl_system_error")
    assert "log.nccl_error" not in found.details.get("alternatives", [])


def test_attaching_to_a_segment_that_is_not_there_says_the_ranks_do_not_share_dev_shm():
    text = WARN.format(
        132,
        "Error while attaching to shared memory segment /dev/shm/nccl-AbC123 (size 9637888), error: "
        "No such file or directory (2)",
    )
    found = certain(text, "nccl_system_error")
    assert "--ipc=host" in found.fix and "same /dev/shm" in found.fix, found.fix


@pytest.mark.parametrize("name", ["968.txt"])
def test_the_train_log_of_a_full_dev_shm_stays_certain(name):
    # 968.txt: "failed to extend ... No space left on device (28)" then the segment line with its errno
    found = lead(name)
    assert (found.id, found.details["confidence"]) == ("log.nccl_system_error", "certain"), found.summary


def test_fires_template_is_mapped_to_the_command_line():
    fire = by_id()["third_party:fire-could-not-consume-arg"]
    assert fire.kind == "launch_command", fire


def test_fires_local_rank_still_reads_as_local_rank():
    found = explained("ERROR: Could not consume arg: --local_rank=0\n")
    assert found.id == "log.local_rank_argument", found.summary


def test_a_refused_communicator_config_is_not_offered_the_shared_memory_reading():
    # the shm segment's CUDA reading belongs to nccl_system_error alone (it had been pasted into the version
    # mismatch's other readings too, where no segment line is ever read)
    text = (
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, invalid argument, NCCL version 2.18.1\n"
        "Last error:\nInvalid config blocking attribute value -2147483648\n"
    )
    found = explained(text)
    assert found.id == "log.nccl_version_mismatch", found.summary
    assert "shared-memory segment" not in found.summary and "log.nccl_error" not in found.details.get(
        "alternatives", []
    ), found.summary
