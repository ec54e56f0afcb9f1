"""Review of session 43's "an error raised after the failure" rules (first_failure.after_the_failure, verdict's
_after_the_failure) against CPython's own output (Python 3.11, each log printed by a tiny script run for real):
where the second exception is the user's own word for the first, where a `__del__`'s error was printed before the
run failed, and where the first error of a "During handling" chain was cut from the log."""

import io

from torchdoctor.explain.diagnose import explain

# os.environ["WORLD_SIZE"] read without a launcher, the KeyError re-raised by the user's own `except` in clearer words
REWORDED = """\
Traceback (most recent call last):
  File "/tmp/g.py", line 4, in main
    world = int(os.environ["WORLD_SIZE"])
                ~~~~~~~~~~^^^^^^^^^^^^^^
  File "<frozen os>", line 679, in __getitem__
KeyError: 'WORLD_SIZE'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/tmp/g.py", line 7, in <module>
    main()
  File "/tmp/g.py", line 6, in main
    raise ValueError("environment variable WORLD_SIZE expected, but not set: start this script with torchrun")
ValueError: environment variable WORLD_SIZE expected, but not set: start this script with torchrun
"""

# a matrix product that failed, then the `finally`'s torch.save into a missing folder
CLEANUP = """\
Traceback (most recent call last):
  File "/tmp/d.py", line 5, in main
    a @ b
    ~~^~~
RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/tmp/d.py", line 8, in <module>
    main()
  File "/tmp/d.py", line 7, in main
    torch.save({}, "/nonexistent/dir/ckpt.pt")
  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 1002, in save
    with _open_zipfile_writer(f) as opened_zipfile:
         ^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 828, in __init__
    torch._C.PyTorchFileWriter(
RuntimeError: Parent directory /nonexistent/dir does not exist.
"""

# a `__del__` whose open() failed, which Python printed and ignored, then the run's own failure
DEL_ERROR = """\
Exception ignored in: <function Saver.__del__ at 0x7f7c37634720>
Traceback (most recent call last):
  File "/tmp/c.py", line 4, in __del__
    open("/nonexistent/dir/x.pt", "wb")
FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/dir/x.pt'
"""
FAILURE = """\
Traceback (most recent call last):
  File "/tmp/c.py", line 10, in <module>
    main()
  File "/tmp/c.py", line 9, in main
    a @ b
    ~~^~~
RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)
"""

# a download retried after a peer reset it, logged with its traceback, then the run's lines
RESET = """\
Traceback (most recent call last):
  File "/home/u/proj/train.py", line 40, in fetch_shards
    resp = session.get(url, timeout=30)
ConnectionResetError: [Errno 104] Connection reset by peer
retrying shard download (1/5) ...
"""
STEPS = "".join(f"epoch 0 step {i} loss {2.0 - i / 100:.3f}\n" for i in range(100))
# the cleanup's traceback under Python's header, the exception it was handling not in the paste
SAVE_WHILE_HANDLING = """
During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/home/u/proj/train.py", line 120, in <module>
    main()
  File "/home/u/proj/train.py", line 112, in main
    torch.save(state, "ckpt/last.pt")
  File "/usr/lib/python3.11/site-packages/torch/serialization.py", line 525, in __init__
    super().__init__(torch._C.PyTorchFileWriter(self.name))
RuntimeError: Parent directory ckpt does not exist.
"""


def _explain(log: str):
    return explain(["-"], stdin=io.BytesIO(log.encode()))


def test_the_users_own_raise_in_an_except_is_its_clearer_word_not_a_second_fault():
    findings = _explain(REWORDED)
    assert {f.id for f in findings} >= {"log.not_launched_distributed", "log.rank_env_missing"}
    assert all("second fault" not in f.fix and "raised after" not in f.summary for f in findings), findings


def test_a_call_in_the_finally_that_failed_after_the_error_is_still_a_second_fault():
    # near miss of the one above: the second exception is the cleanup's torch.save, not the user's `raise`
    lead, save, *_ = _explain(CLEANUP)
    assert lead.id == "log.layer_input_size", lead.summary
    assert save.id == "log.checkpoint_save_folder" and save.status == "warn", save.summary
    assert "raised after" in save.summary and "second fault" in save.fix


def test_a_del_error_printed_before_the_failure_is_not_said_raised_after_it():
    lead, ignored, *_ = _explain(DEL_ERROR + FAILURE)
    assert lead.id == "log.layer_input_size", lead.summary
    assert ignored.status == "warn" and "printed before" in ignored.summary, ignored.summary
    assert "raised after" not in ignored.summary and "cleanup hides" not in ignored.fix


def test_a_del_error_printed_after_the_failure_is_said_raised_after_it():
    # near miss: the same `__del__` run at the interpreter's exit, below the failure
    lead, ignored, *_ = _explain(FAILURE + DEL_ERROR)
    assert lead.id == "log.layer_input_size", lead.summary
    assert "raised after" in ignored.summary and "printed and ignored" in ignored.summary, ignored.summary


def test_a_cleanup_error_whose_first_error_was_cut_is_not_read_as_handling_an_older_lost_peer():
    # the reset far above was retried and the run went on: the save is not a consequence of it
    (lead, *_) = _explain(RESET + STEPS + SAVE_WHILE_HANDLING)
    assert lead.id == "log.checkpoint_save_folder" and lead.status == "fail", lead.summary


def test_a_cleanup_error_right_below_the_lost_peer_is_still_its_consequence():
    # near miss: the reset printed just above "During handling": the save was raised while handling it
    (lead, *_) = _explain(RESET.replace("retrying shard download (1/5) ...\n", "") + SAVE_WHILE_HANDLING)
    assert lead.id == "log.peer_closed", lead.summary


# the `finally`'s save below an exception the process itself raised to stop: Ctrl-C, the script's own sys.exit(1)
SAVE_IN_FINALLY = """
During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/tmp/k.py", line 9, in <module>
    main()
  File "/tmp/k.py", line 8, in main
    torch.save({}, "/nonexistent/dir/ckpt.pt")
  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 1002, in save
    with _open_zipfile_writer(f) as opened_zipfile:
         ^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 828, in __init__
    torch._C.PyTorchFileWriter(
RuntimeError: Parent directory /nonexistent/dir does not exist.
"""
CTRL_C = """\
Traceback (most recent call last):
  File "/tmp/k.py", line 6, in main
    time.sleep(0.05)
KeyboardInterrupt
"""
SYS_EXIT = """\
Traceback (most recent call last):
  File "/tmp/k.py", line 4, in main
    sys.exit(1)
SystemExit: 1
"""


def test_a_cleanup_error_after_ctrl_c_or_sys_exit_is_not_said_to_follow_a_lost_peer():
    # a KeyboardInterrupt or the script's own SystemExit: no peer was lost, the cause is not another rank's
    for stop in (CTRL_C, SYS_EXIT):
        (lead, *_) = _explain(stop + SAVE_IN_FINALLY)
        assert lead.id == "log.checkpoint_save_folder" and lead.status == "fail", lead.summary
        assert "lost its peer" not in lead.summary and "not in this log" not in lead.summary, lead.summary


def test_a_cleanup_error_after_connection_closed_by_peer_still_follows_the_lost_peer():
    # near miss: gloo's lost peer above the same `finally`
    closed = """\
Traceback (most recent call last):
  File "/tmp/k.py", line 6, in main
    dist.all_reduce(loss)
  File "/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 81, in wrapper
    return func(*args, **kwargs)
RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:29500
"""
    (lead, save, *_) = _explain(closed + SAVE_IN_FINALLY)
    assert lead.id == "log.peer_closed", lead.summary
    assert save.id == "log.checkpoint_save_folder" and "lost its peer" in save.summary, save.summary


# the DataLoader iterator's __del__ at the end of a run, printed and ignored by Python (torch's dataloader.py)
ITERATOR_DEL = """\
epoch 3 done, loss 0.12
Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f0c3c1d2af0>
Traceback (most recent call last):
  File "/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1479, in __del__
    self._shutdown_workers()
  File "/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1462, in _shutdown_workers
    if w.is_alive():
  File "/usr/lib/python3.10/multiprocessing/process.py", line 160, in is_alive
    assert self._parent_pid == os.getpid(), 'can only test a child process'
AssertionError: can only test a child process
"""


def test_an_error_python_ignored_alone_is_not_said_to_have_stopped_the_run():
    (lead, *_) = _explain(ITERATOR_DEL)
    assert lead.id == "log.unrecognised" and lead.status == "warn", lead.summary
    assert "ignored" in lead.summary and "went on" in lead.summary and "stopped on" not in lead.fix, lead.fix


def test_the_same_error_raised_is_still_the_run_stopping_on_it():
    # near miss: the same traceback without Python's "Exception ignored in" header
    (lead, *_) = _explain(ITERATOR_DEL.replace("Exception ignored in: <function", "In: <function"))
    assert lead.id == "log.unrecognised" and lead.status == "fail", lead.summary
    assert "The run stopped on this error" in lead.fix


# a DataLoader worker's __getitem__ whose `except KeyError` re-raises in the user's words (torch 2.x, Python 3.11;
# the parent re-raises it as "Caught ValueError in DataLoader worker process 0")
WORKER_REWORDED = """\
Traceback (most recent call last):
  File "/tmp/w.py", line 11, in <module>
    for x in torch.utils.data.DataLoader(DS(), num_workers=1):
  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 725, in __next__
    data = self._next_data()
           ^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1529, in _next_data
    return self._process_data(data, worker_id)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1567, in _process_data
    data.reraise()
  File "/venv/lib/python3.11/site-packages/torch/_utils.py", line 794, in reraise
    raise exception
ValueError: Caught ValueError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/tmp/w.py", line 7, in __getitem__
    return torch.zeros(2), labels[i + 5]
                           ~~~~~~^^^^^^^
KeyError: 5

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 374, in _worker_loop
    data = fetcher.fetch(index)  # type: ignore[possibly-undefined]
           ^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54, in fetch
    data = [self.dataset[idx] for idx in possibly_batched_index]
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54, in <listcomp>
    data = [self.dataset[idx] for idx in possibly_batched_index]
            ~~~~~~~~~~~~^^^^^
  File "/tmp/w.py", line 9, in __getitem__
    raise ValueError(f"sample {i} has no label: the labels file is shorter than the images folder")
ValueError: sample 0 has no label: the labels file is shorter than the images folder

"""


def test_a_workers_own_raise_in_its_except_leads_as_the_workers_error():
    # the worker's ValueError, the one the DataLoader reports: not the KeyError it was raised while handling
    (lead, *_) = _explain(WORKER_REWORDED)
    assert "(in its DataLoader worker process 0): ValueError: sample 0 has no label" in lead.summary, (
        lead.summary
    )


# the same worker whose `except KeyError` loads the item from disk instead, a file that is not there
WORKER_FALLBACK = """\
Traceback (most recent call last):
  File "/tmp/w2.py", line 11, in <module>
    for x in torch.utils.data.DataLoader(DS(), num_workers=1):
  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 725, in __next__
    data = self._next_data()
           ^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1529, in _next_data
    return self._process_data(data, worker_id)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1567, in _process_data
    data.reraise()
  File "/venv/lib/python3.11/site-packages/torch/_utils.py", line 794, in reraise
    raise exception
FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/tmp/w2.py", line 7, in __getitem__
    return torch.zeros(2), labels[i + 5]
                           ~~~~~~^^^^^^^
KeyError: 5

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 374, in _worker_loop
    data = fetcher.fetch(index)  # type: ignore[possibly-undefined]
           ^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54, in fetch
    data = [self.dataset[idx] for idx in possibly_batched_index]
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54, in <listcomp>
    data = [self.dataset[idx] for idx in possibly_batched_index]
            ~~~~~~~~~~~~^^^^^
  File "/tmp/w2.py", line 9, in __getitem__
    return torch.load(f"/data/labels/{i}.pt")
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 1561, in load
    with _open_file_like(f, "rb") as opened_file:
         ^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 795, in _open_file_like
    return _open_file(name_or_buffer, mode)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 776, in __init__
    super().__init__(open(name, mode))  # noqa: SIM115
                     ^^^^^^^^^^^^^^^^
FileNotFoundError: [Errno 2] No such file or directory: '/data/labels/0.pt'

"""


def test_a_workers_fallback_that_failed_is_named_in_the_worker_and_may_be_the_error_to_fix():
    # the KeyError it handled leads, still in the worker the DataLoader names; the load that failed says that an
    # `except` trying another way makes it the error to fix (a log does not show which block ran it)
    lead, load, *_ = _explain(WORKER_FALLBACK)
    assert "(in its DataLoader worker process 0): KeyError: 5" in lead.summary, lead.summary
    assert load.id == "log.data_path_missing" and "a fallback for" in load.fix, load.fix
