"""A run that died by a signal, no Python error: the signal is the consequence, the lines around it say the cause.

glibc's abort on a corrupted heap (malloc/malloc.c malloc_printerr), libstdc++'s uncaught C++ exception
(libsupc++/vterminate.cc), faulthandler's Python stack of a crash (Modules/faulthandler.c), Open MPI's signal
handler's backtrace (opal/util/stacktrace.c), the shell's SIGXFSZ: each names what kind of death it was, read
from real processes where this machine can make one and from the corpus's train logs. Where the log holds
nothing but the signal (mp.spawn's "terminated with signal SIGABRT", torchrun's exitcode -6), explain says it
cannot tell and how to find out, never a guessed cause."""

import io
import shutil
import subprocess
import sys

import pytest
from explaining import explained, lead

from torchdoctor.explain.diagnose import explain

# glibc aborts on the second free of one pointer: a real native heap corruption, in a real process
DOUBLE_FREE = """\
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
p = libc.malloc(64)
libc.free(p)
libc.free(p)
"""

UNCAUGHT = """\
#include <stdexcept>
int main() { throw std::runtime_error("ProcessGroupGloo: connection to 10.0.0.2 lost"); }
"""


def _stderr(argv: list[str], cwd=None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=cwd)
    assert done.returncode != 0, done
    return done.stderr


def test_a_real_double_free_is_read_as_a_corrupted_heap_not_a_bare_crash():
    said = _stderr(["bash", "-c", 'ulimit -c 0; exec "$0" -c "$1"', sys.executable, DOUBLE_FREE])
    if "free" not in said:
        pytest.skip(f"this C library does not say why it aborted: {said!r}")
    found = explained(said + "Aborted (core dumped)\n")
    assert found.id == "log.worker_crash" and found.details["confidence"] == "likely", found.summary
    assert "heap was corrupted" in found.summary and "gdb" in found.fix and "ulimit -c" in found.fix


def test_a_real_faulthandler_stack_names_the_package_whose_code_crashed(tmp_path):
    package = tmp_path / "site-packages" / "crashy"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("import ctypes\n\n\ndef go():\n    ctypes.string_at(0)\n")
    code = f"import sys; sys.path.insert(0, {str(package.parent)!r}); import crashy; crashy.go()"
    said = _stderr(["bash", "-c", 'ulimit -c 0; exec "$0" -X faulthandler -c "$1"', sys.executable, code])
    assert "Fatal Python error: Segmentation fault" in said, said
    found = explained(said)
    assert found.id == "log.worker_crash", found.summary
    # the innermost frame is ctypes' (the standard library's): the package is the first one that is a package's
    assert (
        "it crashed in crashy's code" in found.summary and "Reinstall the library named (crashy)" in found.fix
    )


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler to build a real uncaught exception")
def test_a_real_uncaught_cpp_exception_names_its_type_and_what(tmp_path):
    (tmp_path / "throw.cpp").write_text(UNCAUGHT)
    subprocess.run(["g++", "-o", "throw", "throw.cpp"], cwd=tmp_path, check=True, timeout=120)
    said = _stderr(["bash", "-c", "ulimit -c 0; ./throw"], cwd=tmp_path)
    found = explained(said)
    assert found.id == "log.worker_crash", found.summary
    assert "a C++ exception nobody caught: std::runtime_error (ProcessGroupGloo: connection to 10.0.0.2" in (
        found.summary
    )


def test_a_real_shell_line_of_a_write_past_the_file_size_limit(tmp_path):
    said = _stderr(["bash", "-c", "ulimit -f 1; head -c 100000 /dev/zero > big.bin"], cwd=tmp_path)
    assert "File size limit exceeded" in said, said
    found = explained(said)
    assert found.id == "log.worker_crash" and "file-size limit (SIGXFSZ)" in found.summary
    assert "ulimit -f" in found.fix


def test_open_mpis_segfault_inside_malloc_is_a_corrupted_heap():
    # train 213: mpirun's rank 50 segfaulted in __libc_malloc (an environment variable the toolkit set)
    found = lead("213.txt")
    assert found.id == "log.worker_crash" and found.details["confidence"] == "likely", found.summary
    assert "heap was corrupted (it crashed inside __libc_malloc)" in found.summary


def test_the_uncaught_exceptions_message_leads_where_another_kind_reads_it():
    # train 203: gloo's IoException, uncaught, aborted the rank: its what() is a network failure, not a crash
    found = lead("203.txt")
    assert found.id == "log.network_interface", found.summary


def test_a_bare_sigabrt_says_the_log_does_not_say_why_and_how_to_find_out():
    # train 292: mp.spawn's line is the whole log
    found = lead("292.txt")
    assert found.id == "log.child_failed" and found.details["confidence"] == "likely", found.summary
    assert "ended by SIGABRT" in found.summary
    assert "the log does not say why" in found.fix
    assert all(way in found.fix for way in ("PYTHONFAULTHANDLER=1", "ulimit -c unlimited", "dmesg"))


def test_torchruns_exit_status_names_its_signal_and_guesses_no_cause():
    # torch/distributed/elastic/multiprocessing/errors/__init__.py's summary of a worker that aborted
    found = explained(
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-03-01_10:00:00\n"
        "  host      : node1\n"
        "  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : -8 (pid: 1234)\n"
        "  error_file: <N/A>\n"
        "  traceback : Signal 8 (SIGFPE) received by PID 1234\n"
    )
    assert found.id == "log.child_failed" and "exited with -8 (SIGFPE)" in found.summary, found.summary
    assert "integer division by zero" in found.fix and "the log does not say why" in found.fix


def test_the_kernels_oom_killer_lines_name_the_killer_not_a_guess():
    # mm/oom_kill.c as dmesg -T prints it: a cgroup's limit (a container's, a job's) ran out
    found = explained(
        "[Thu Dec  3 10:00:01 2026] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, "
        "oom_score_adj=0\n"
        "[Thu Dec  3 10:00:01 2026] Memory cgroup out of memory: Killed process 4242 (python) total-vm:81234567kB, "
        "anon-rss:6543210kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:13000kB oom_score_adj:0\n"
    )
    assert found.id == "log.worker_killed", found.summary
    assert "the out-of-memory killer ended it: host RAM (or the job's memory limit) ran out" in found.summary


def test_a_bare_137_is_a_sigkill_without_naming_who_sent_it():
    # CPython's CalledProcessError for a worker a launcher started, killed with SIGKILL (128 + 9)
    found = explained(
        "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=0']' "
        "returned non-zero exit status 137.\n"
    )
    assert found.id == "log.worker_killed" and found.details["confidence"] == "likely", found.summary
    assert "out-of-memory killer ended it" not in found.summary and "dmesg" in found.fix


def test_a_line_that_only_mentions_a_signal_word_is_no_death():
    # near misses: a Python error whose message holds the words, and a status that is not 128 + 9
    assert explained("Epoch 3: exit code 1370 written to results.csv\n").id != "log.worker_killed"
    assert explained("INFO: cache uses free(): invalidation is lazy\n").id != "log.worker_crash"


def test_faulthandlers_dump_of_an_abort_leaves_the_lead_to_what_aborted():
    # a CUDA error thrown from torch's C++ and not caught, then faulthandler's "Aborted" stack (Modules/faulthandler.c)
    found = explained(
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  CUDA error: an illegal memory access was encountered\n"
        "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call "
        "first):\n"
        "Fatal Python error: Aborted\n"
        "\n"
        "Current thread 0x00007f1f2dfff700 (most recent call first):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/graph.py", line 744 in _engine_run_backward\n'
    )
    assert found.id != "log.worker_crash" and "illegal memory access" in found.summary, found.summary


def test_an_uncaught_cpp_exception_alone_is_a_failure_not_a_warning():
    # worker_crash's C++ exception yields to any kind that reads its what(), but with nothing else in the log the
    # process aborted: a failure (status fail, exit 1), not a line healthy runs print
    found = explained(
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  ProcessGroupGloo: connection to 10.0.0.2 lost\n"
        "Aborted (core dumped)\n"
    )
    assert (found.id, found.status) == ("log.worker_crash", "fail"), (found.status, found.summary)


def test_a_crash_in_torchs_own_frame_keeps_the_general_native_crash_advice():
    # CERT11: "Reinstall the library named (torch) built for the torch installed" read oddly; torch's frame is where
    # most native crashes surface, so the fix is the general one (the Python stack, dmesg, /dev/shm)
    found = explained(
        "Fatal Python error: Segmentation fault\n"
        "\n"
        "Current thread 0x00007f1f2dfff700 (most recent call first):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2237 in embedding\n'
        '  File "/home/user/train.py", line 40 in forward\n'
    )
    assert found.id == "log.worker_crash", found.summary
    assert "Reinstall the library named (torch)" not in found.fix and "dmesg" in found.fix, found.fix


# a script that fails on its own error, then dies while exiting from it: an exit handler (an extension's teardown)
# touches memory it should not, so faulthandler's "Fatal Python error: Segmentation fault" comes after the traceback
DIES_UNWINDING = """\
import atexit
import ctypes

atexit.register(lambda: ctypes.string_at(0))
images = [0.0] * 4
for step in range(8):
    print(f"step {step}: loss {1.0 / (step + 1):.3f}", flush=True)
    images[step]
"""

# what that script printed here (python -X faulthandler, Python 3.11), the shell's line after it
DIED_UNWINDING = """\
step 3: loss 0.250
step 4: loss 0.200
Traceback (most recent call last):
  File "/tmp/small4/seg/crash_train.py", line 22, in <module>
    data[step]
    ~~~~^^^^^^
  File "/tmp/small4/seg/crash_train.py", line 10, in __getitem__
    return self.images[index]
           ~~~~~~~~~~~^^^^^^^
IndexError: list index out of range
Fatal Python error: Segmentation fault

Current thread 0x00007f38c2ff1b80 (most recent call first):
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/ctypes/__init__.py", line 519 in string_at
  File "/tmp/small4/seg/crash_train.py", line 15 in teardown
Segmentation fault (core dumped)
"""


def _error_leads_and_the_crash_follows(said: str, error: str) -> None:
    found = explain(["-"], stdin=io.BytesIO(said.encode()))
    assert found[0].id == "log.unrecognised" and error in found[0].summary, found[0].summary
    crash = next(f for f in found if f.id == "log.worker_crash")
    assert crash.details["consequence_of"] == "log.unrecognised" and crash.status == "warn", crash.summary


def test_a_real_crash_while_exiting_from_an_error_follows_that_error(tmp_path):
    (tmp_path / "train.py").write_text(DIES_UNWINDING)
    said = _stderr(
        ["bash", "-c", 'ulimit -c 0; exec "$0" -X faulthandler train.py', sys.executable], tmp_path
    )
    assert said.index("IndexError") < said.index("Fatal Python error: Segmentation fault"), said
    _error_leads_and_the_crash_follows(said, "IndexError: list index out of range")


def test_a_crash_printed_after_the_error_it_died_unwinding_from_does_not_lead():
    _error_leads_and_the_crash_follows(DIED_UNWINDING, "IndexError: list index out of range")
    # a known error leads the same way, the crash named as what followed it
    found = explain(
        ["-"],
        stdin=io.BytesIO(
            DIED_UNWINDING.replace(
                "IndexError: list index out of range",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                "79.15 GiB of which 1.06 GiB is free.",
            ).encode()
        ),
    )
    assert found[0].id == "log.cuda_oom", found[0].summary
    assert next(f for f in found if f.id == "log.worker_crash").details["consequence_of"] == "log.cuda_oom"


def test_a_crash_printed_first_or_alone_still_leads():
    crash = DIED_UNWINDING[DIED_UNWINDING.index("Fatal Python error") :]
    assert explained(crash).id == "log.worker_crash"
    # another process's traceback after the crash (a DataLoader worker's dump, then the main process's error)
    error = DIED_UNWINDING[: DIED_UNWINDING.index("Fatal Python error")]
    assert explained(crash + error).id == "log.worker_crash"


# a DataLoader worker that crashes in its dataset's native code (ctypes here, a decoder in the threads): torch's
# worker handler says so first, then the main process's "is killed by signal" and "exited unexpectedly"
CRASHING_WORKER = """\
import ctypes

import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        if index == 3:
            ctypes.string_at(0)  # a decoder's native bug, in the worker
        return torch.zeros(2)


for batch in DataLoader(Images(), batch_size=2, num_workers=1):
    print("batch", batch.shape, flush=True)
"""

# what it printed here (python -X faulthandler, torch 2.13.0+cpu, Python 3.11), stdout and stderr as one
WORKER_CRASHED = 'ERROR: Unexpected segmentation fault encountered in worker.\n\x00Traceback (most recent call last):\n  File "/work/small4/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1291, in _try_get_data\n    data = self._data_queue.get(timeout=timeout)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/queues.py", line 113, in get\n    if not self._poll(timeout):\n           ^^^^^^^^^^^^^^^^^^^\n  File "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/connection.py", line 257, in poll\n    return self._poll(timeout)\n           ^^^^^^^^^^^^^^^^^^^\n  File "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/connection.py", line 440, in _poll\n    r = wait([self], timeout)\n        ^^^^^^^^^^^^^^^^^^^^^\n  File "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/connection.py", line 947, in wait\n    ready = selector.select(timeout)\n            ^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/root/.pyenv/versions/3.11.7/lib/python3.11/selectors.py", line 415, in select\n    fd_event_list = self._selector.poll(timeout)\n                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/work/small4/.venv/lib/python3.11/site-packages/torch/utils/data/_utils/signal_handling.py", line 73, in handler\n    _error_if_any_worker_fails()\nRuntimeError: DataLoader worker (pid 11399) is killed by signal: Segmentation fault. \n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File "/tmp/small4/seg/worker_crash.py", line 17, in <module>\n    for batch in DataLoader(Images(), batch_size=2, num_workers=1):\n  File "/work/small4/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 725, in __next__\n    data = self._next_data()\n           ^^^^^^^^^^^^^^^^^\n  File "/work/small4/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1505, in _next_data\n    idx, data = self._get_data()\n                ^^^^^^^^^^^^^^^^\n  File "/work/small4/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1464, in _get_data\n    success, data = self._try_get_data()\n                    ^^^^^^^^^^^^^^^^^^^^\n  File "/work/small4/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1304, in _try_get_data\n    raise RuntimeError(\nRuntimeError: DataLoader worker (pid(s) 11399) exited unexpectedly\n'


def _a_worker_crash_not_a_missing_report(said: str) -> None:
    found = explained(said)
    assert found.id == "log.worker_crash", found.summary
    assert "segmentation fault" in found.summary.lower() and "Here a DataLoader worker crashed" in found.fix
    assert "not in this log" not in found.summary, found.summary


def test_a_dataloader_workers_crash_leads_and_its_exit_is_not_read_as_a_missing_report():
    # the crash is printed first and told twice more by the main process: one death, not /dev/shm with "the
    # worker's own report is not in this log"
    _a_worker_crash_not_a_missing_report(WORKER_CRASHED)


def test_a_real_dataloader_workers_crash_leads(tmp_path):
    (tmp_path / "train.py").write_text(CRASHING_WORKER)
    said = _stderr(
        ["bash", "-c", 'ulimit -c 0; exec "$0" -X faulthandler train.py', sys.executable], tmp_path
    )
    assert "is killed by signal: Segmentation fault" in said, said
    _a_worker_crash_not_a_missing_report(said)


def test_a_real_faulthandler_stack_names_the_crashed_threads_package_not_another_threads(tmp_path):
    # faulthandler lists the other threads first (newest first), the thread that crashed as "Current thread": a
    # package's thread waiting (tqdm's monitor, a logger's) is not where the crash was
    package = tmp_path / "site-packages" / "waiter"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import threading\n\n\ndef idle():\n    threading.Event().wait()\n\n\n"
        "def start():\n    threading.Thread(target=idle, daemon=True).start()\n"
    )
    code = (
        f"import sys; sys.path.insert(0, {str(package.parent)!r}); import ctypes, time, waiter; waiter.start(); "
        "time.sleep(0.2); ctypes.string_at(0)"
    )
    said = _stderr(["bash", "-c", 'ulimit -c 0; exec "$0" -X faulthandler -c "$1"', sys.executable, code])
    assert said.index("Thread 0x") < said.index("Current thread"), said
    found = explained(said)
    assert found.id == "log.worker_crash" and "waiter" not in found.summary + found.fix, found.summary
