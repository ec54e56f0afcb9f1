"""The sixty-ninth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3267-3316)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# aten/src/TH/THGeneral.cpp THAlloc: THError("$ Torch: not enough memory: you tried to allocate %dGB. Buy new RAM!",
# size/1073741824) when malloc returns NULL; _THError appends " at <file>:<line>"
def test_ths_allocator_refusing_host_memory_is_host_ram_with_the_size():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "prepare.py", line 52, in build_features\n'
        "    input_ids = torch.tensor([f.input_ids for f in features], dtype=torch.long)\n"
        "RuntimeError: $ Torch: not enough memory: you tried to allocate 5GB. Buy new RAM! at "
        "/pytorch/aten/src/TH/THGeneral.cpp:201\n",
        "cpu_oom",
        "certain",
    )
    assert "5 GB" in found.summary and "host RAM" in found.fix and "in pieces" in found.fix


# THRealloc: "$ Torch: not enough memory: you tried to reallocate %dGB. Buy new RAM!"
def test_ths_reallocation_reads_the_same():
    found = reads(
        "RuntimeError: $ Torch: not enough memory: you tried to reallocate 0GB. Buy new RAM! at "
        "/pytorch/aten/src/TH/THGeneral.cpp:230\n",
        "cpu_oom",
        "certain",
    )
    assert "0 GB (in whole GB" in found.summary


def test_ths_invalid_size_is_not_host_memory():
    # THAlloc's other refusal: a negative size, an overflow in the code that asked, not memory running out
    found = explained(
        "RuntimeError: $ Torch: invalid memory size -- maybe an overflow? at THGeneral.cpp:188\n"
    )
    assert found.id != "log.cpu_oom"


# CPython's OSError for ENOMEM: multiprocessing/popen_fork.py's os.fork() when the DataLoader starts its workers
def test_enomem_when_the_dataloader_forks_its_workers_is_likely_host_memory():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 120, in <module>\n'
        "    for i, (images, labels) in enumerate(train_loader):\n"
        '  File "/usr/lib/python3.8/multiprocessing/popen_fork.py", line 70, in _launch\n'
        "    self.pid = os.fork()\n"
        "OSError: [Errno 12] Cannot allocate memory\n",
        "cpu_oom",
        "likely",
    )
    assert "ENOMEM" in found.summary and "num_workers" in found.fix and "swap" in found.fix


def test_another_errno_is_not_enomem():
    # EAGAIN from fork is a process-count limit (ulimit -u), not memory
    found = explained(
        "    self.pid = os.fork()\nBlockingIOError: [Errno 11] Resource temporarily unavailable\n"
    )
    assert found.id != "log.cpu_oom"
