"""A DataLoader worker that died while the main process took a batch's tensors from it: the main process reads the
file descriptor the worker passes them through (torch/multiprocessing/reductions.py rebuild_storage_fd, CPython's
multiprocessing/resource_sharer.py) and gets "ConnectionResetError: [Errno 104] Connection reset by peer". Found
with a DataLoader worker killed with SIGKILL (pytorch/examples' DDP tutorial given persistent workers, and a
one-process copy of it: one run in four ended so rather than on torch's "is killed by signal"); explain said 'a peer
closed the connection' as between ranks. The traceback as CPython printed it on this torch (paths shortened)."""

from explaining import explained

RESET = """\
Traceback (most recent call last):
  File "/home/me/train.py", line 21, in <module>
    for batch in loader:
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 725, in __next__
    data = self._next_data()
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1505, in _next_data
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1464, in _get_data
    success, data = self._try_get_data()
  File "/home/me/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1291, in _try_get_data
    data = self._data_queue.get(timeout=timeout)
  File "/usr/lib/python3.11/multiprocessing/queues.py", line 122, in get
    return _ForkingPickler.loads(res)
  File "/home/me/venv/lib/python3.11/site-packages/torch/multiprocessing/reductions.py", line 538, in rebuild_storage_fd
    fd = df.detach()
  File "/usr/lib/python3.11/multiprocessing/resource_sharer.py", line 57, in detach
    with _resource_sharer.get_connection(self._id) as conn:
  File "/usr/lib/python3.11/multiprocessing/resource_sharer.py", line 86, in get_connection
    c = Client(address, authkey=process.current_process().authkey)
  File "/usr/lib/python3.11/multiprocessing/connection.py", line 524, in Client
    answer_challenge(c, authkey)
  File "/usr/lib/python3.11/multiprocessing/connection.py", line 768, in answer_challenge
    message = connection.recv_bytes(256)         # reject large message
  File "/usr/lib/python3.11/multiprocessing/connection.py", line 216, in recv_bytes
    buf = self._recv_bytes(maxlength)
  File "/usr/lib/python3.11/multiprocessing/connection.py", line 430, in _recv_bytes
    buf = self._recv(4)
  File "/usr/lib/python3.11/multiprocessing/connection.py", line 395, in _recv
    chunk = read(handle, remaining)
ConnectionResetError: [Errno 104] Connection reset by peer
"""


def test_a_reset_while_taking_a_batch_from_a_worker_names_the_dataloader_worker():
    found = explained(RESET)
    assert found.id == "log.peer_closed", found.summary
    assert "a DataLoader worker went away while the main process was taking a batch from it" in found.summary
    assert "num_workers=0" in found.fix and "OOM killer" in found.fix


def test_a_reset_between_ranks_is_still_a_peer_that_closed():
    found = explained(
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error "
        "[127.0.0.1]:31541: Connection reset by peer\n"
    )
    assert found.id == "log.peer_closed" and "DataLoader" not in found.summary, found.summary
