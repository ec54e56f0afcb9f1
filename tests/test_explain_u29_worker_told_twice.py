"""A DataLoader worker killed with SIGKILL (the kernel's OOM killer) while the main process waits for its batch is
told twice by torch: "DataLoader worker (pid N) is killed by signal: Killed." and, raised from it by
dataloader.py's _try_get_data, "DataLoader worker (pid(s) N) exited unexpectedly". explain read the second as a
second failure, "most often /dev/shm was full", beside the worker killed (noticed by the u28 helper; found again
with pytorch/examples' DDP tutorial given persistent workers, and a one-process copy). One death is one finding.
Read from a real process on this torch, and as printed."""

from __future__ import annotations

from explaining import explained
from rank_runner import run_script

from torchdoctor.explain.diagnose import explain

SCRIPT = """\
import os
import signal

from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does to a worker


if __name__ == "__main__":
    for batch in DataLoader(Samples(), batch_size=4, num_workers=1):
        pass
"""


def test_a_worker_killed_while_the_main_process_waits_on_this_torch_is_one_finding_not_a_full_dev_shm(
    tmp_path,
):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    done = run_script([str(script)], timeout=120)  # `python script`, forked where torch is imported
    assert done.returncode != 0 and "is killed by signal: Killed" in done.stderr, done.stderr[-2000:]
    assert ") exited unexpectedly" in done.stderr, done.stderr[-2000:]
    found = explain([_log(tmp_path, done.stderr)])
    assert [f.id for f in found] == ["log.worker_killed"], [f.summary for f in found]
    assert "DataLoader worker (pid " in found[0].summary


def _log(tmp_path, text: str) -> str:
    path = tmp_path / "console.log"
    path.write_text(text)
    return str(path)


KILLED = "RuntimeError: DataLoader worker (pid 9359) is killed by signal: Killed. \n"
EXITED = "RuntimeError: DataLoader worker (pid(s) {pids}) exited unexpectedly\n"
CHAINED = "\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n"


def test_the_two_lines_as_printed_are_one_worker_killed():
    found = explain(["-"], stdin=_stdin(KILLED + CHAINED + EXITED.format(pids="9359")))
    assert [f.id for f in found] == ["log.worker_killed"]


def test_another_workers_exit_beside_a_killed_one_keeps_its_own_reading():
    # pid 9360 is not the worker that was killed: its exit is not told by the kill
    found = explain(["-"], stdin=_stdin(KILLED + CHAINED + EXITED.format(pids="9360")))
    assert "log.dataloader_shm" in [f.id for f in found]


def test_an_exit_alone_is_still_read_as_the_shared_memory_reading():
    assert explained(EXITED.format(pids="9359")).id == "log.dataloader_shm"


def test_a_consequence_names_the_process_killed_as_the_process_killed():
    found = explain(
        ["-"], stdin=_stdin(KILLED + "ConnectionResetError: [Errno 104] Connection reset by peer\n")
    )
    assert all("the killed with" not in f.summary for f in found)


def _stdin(text: str):
    import io

    return io.BytesIO(text.encode())


# the DDP tutorial on two gloo ranks, rank 1's DataLoader worker killed while rank 1 took a batch from it (three
# runs in four of pytorch/examples' multigpu_torchrun.py with persistent workers ended so, without torch's "is killed
# by signal" line); as torchrun --tee 3 printed it on this torch, frames of the standard library and torch left out
TWO_RANKS = """\
[default1]:[rank1]: Traceback (most recent call last):
[default1]:[rank1]:   File "/home/me/multigpu_torchrun.py", line 57, in _run_epoch
[default1]:[rank1]:     for source, targets in self.train_data:
[default1]:[rank1]:   File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1291, in \
_try_get_data
[default1]:[rank1]:     data = self._data_queue.get(timeout=timeout)
[default1]:[rank1]:   File "/home/me/venv/lib/python3.11/site-packages/torch/multiprocessing/reductions.py", line 538, in \
rebuild_storage_fd
[default1]:[rank1]:     fd = df.detach()
[default1]:[rank1]:   File "/usr/lib/python3.11/multiprocessing/resource_sharer.py", line 57, in detach
[default1]:[rank1]:     with _resource_sharer.get_connection(self._id) as conn:
[default1]:[rank1]: ConnectionResetError: [Errno 104] Connection reset by peer
[default0]:[rank0]: Traceback (most recent call last):
[default0]:[rank0]:   File "/home/me/multigpu_torchrun.py", line 50, in _run_batch
[default0]:[rank0]:     loss.backward()
[default0]:[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection \
closed by peer [127.0.0.1]:62082. This is typically caused by a remote worker crashing. Check the logs of the remote \
worker before reporting an error. GLHF! 🏖️
"""


def test_a_worker_gone_on_one_rank_names_that_rank_and_the_others_closed_connection_as_its_consequence():
    found = explained(TWO_RANKS)
    assert found.id == "log.peer_closed", found.summary
    assert "a DataLoader worker went away" in found.summary and "on rank 1;" in found.summary
    assert "rank 0's connection (127.0.0.1:62082) closed when rank 1 ended on it" in found.summary
    # the cause is rank 1's worker, not another rank to find: no generic "the first rank that failed" line
    assert "The cause is the first rank that failed" not in found.fix and "dmesg" in found.fix


def test_two_ranks_closed_connections_without_a_loader_stay_a_peer_that_closed():
    gloo_only = "\n".join(line for line in TWO_RANKS.splitlines() if "rank0" in line)
    found = explained(gloo_only + "\n")
    assert found.id == "log.peer_closed" and "DataLoader" not in found.summary
