"""A DataLoader's workers started inside a daemonic process: CPython's "daemonic processes are not allowed to have
children" (Lib/multiprocessing/process.py). Found with pytorch/examples' mnist_hogwild, its trainers made daemons
(``p.daemon = True``) and its DataLoader given workers: both trainers died, the main process went on to its test
and exited 0, and explain knew no fix. Read from a real process on this torch, and as CPython prints it under a
Pool and under a DataLoader worker."""

import io

import pytest
from explaining import explained
from rank_runner import run_script

from torchdoctor.explain.diagnose import explain

# mnist_hogwild's shape: a trainer process made a daemon, whose DataLoader starts a worker
SCRIPT = """\
import multiprocessing as mp

import torch
from torch.utils.data import DataLoader, TensorDataset


def train():
    for _ in DataLoader(TensorDataset(torch.zeros(4)), num_workers=1):
        pass


if __name__ == "__main__":
    p = mp.get_context("fork").Process(target=train)
    p.daemon = True
    p.start()
    p.join()
"""


def test_a_daemon_trainer_whose_dataloader_starts_workers_on_this_torch_says_daemon_true_and_exit_status():
    done = run_script(["-c", SCRIPT], timeout=120)
    # the trainer died; its parent went on and ended well: nothing but the log says it failed
    assert done.returncode == 0, done.stderr
    found = explain(["-"], stdin=io.BytesIO(done.stderr.encode()))[0]
    assert found.id == "log.daemon_process_children", (found.summary, done.stderr[-2000:])
    assert "DataLoader's worker processes" in found.summary and "daemon=True" in found.summary
    assert (
        "num_workers=0" in found.fix and "Process-1 here" in found.fix and "exit status can be 0" in found.fix
    )


POOL = '''\
multiprocessing.pool.RemoteTraceback:
"""
Traceback (most recent call last):
  File "/usr/lib/python3.11/multiprocessing/pool.py", line 125, in worker
    result = (True, func(*args, **kwds))
  File "/usr/lib/python3.11/multiprocessing/pool.py", line 48, in mapstar
    return list(map(*args))
  File "/home/me/eval.py", line 9, in evaluate
    return sum(len(b[0]) for b in loader)
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 438, in _get_iterator
    return _MultiProcessingDataLoaderIter(self)
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1176, in __init__
    w.start()
  File "/usr/lib/python3.11/multiprocessing/process.py", line 118, in start
    assert not _current_process._config.get('daemon'), \\
AssertionError: daemonic processes are not allowed to have children
"""

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/me/eval.py", line 14, in <module>
    print(pool.map(evaluate, [0, 1]))
  File "/usr/lib/python3.11/multiprocessing/pool.py", line 774, in get
    raise self._value
AssertionError: daemonic processes are not allowed to have children
'''

# a dataset whose __getitem__ maps over a Pool, read by a DataLoader with workers
IN_A_WORKER = """\
Traceback (most recent call last):
  File "/home/me/train.py", line 30, in <module>
    for batch in loader:
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1512, in _process_data
    data.reraise()
  File "/home/me/venv/lib/python3.11/site-packages/torch/_utils.py", line 733, in reraise
    raise exception
AssertionError: Caught AssertionError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 349, in _worker_loop
    data = fetcher.fetch(index)
  File "/home/me/train.py", line 18, in __getitem__
    with multiprocessing.Pool(4) as pool:
  File "/usr/lib/python3.11/multiprocessing/process.py", line 118, in start
    assert not _current_process._config.get('daemon'), \\
AssertionError: daemonic processes are not allowed to have children
"""


@pytest.mark.usefixtures("every_message_seen")
def test_a_pool_worker_building_a_dataloader_says_pool_workers_are_daemons():
    found = explained(POOL)
    assert found.id == "log.daemon_process_children", found.summary
    assert "multiprocessing.Pool worker" in found.summary and "ProcessPoolExecutor" in found.fix
    assert "exit status" not in found.fix


@pytest.mark.usefixtures("every_message_seen")
def test_a_dataset_starting_a_pool_in_a_dataloader_worker_says_the_dataset_starts_processes():
    found = explained(IN_A_WORKER)
    assert found.id == "log.daemon_process_children", found.summary
    assert "inside a DataLoader worker" in found.summary and "__getitem__" in found.fix


def test_without_a_real_log_showing_it_the_reading_is_likely():
    found = explained(POOL)
    assert found.id == "log.daemon_process_children" and found.details["confidence"] == "likely"


@pytest.mark.parametrize(
    "line",
    [
        # the same file's other asserts: a process misused, not a daemon's child
        "AssertionError: can only test a child process\n",
        "AssertionError: cannot start a process twice\n",
        # a daemon thread's words are not a daemonic process's
        "RuntimeError: cannot set daemon status of active thread\n",
    ],
)
def test_other_multiprocessing_refusals_are_not_a_daemons_children(line):
    assert explained(line).id != "log.daemon_process_children"
