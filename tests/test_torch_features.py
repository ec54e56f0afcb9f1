"""What a torch lacks is said, not taken for something else: the flight recorder of torch 2.4 (no
``_dump_fr_trace``) and a store without ``clone`` (see also test_store_without_clone.py)."""

import json
import sys
import types
from datetime import timedelta

import torch
import torch.distributed as dist

from torchdoctor.distributed.waiting import can_clone, clone_store, wait_for_keys
from torchdoctor.hang import flight_records, watch


def test_a_torch_without_dump_fr_trace_is_named_and_the_report_says_the_stacks_decide(monkeypatch, tmp_path):
    # torch 2.4's c10d module: _dump_nccl_trace only
    monkeypatch.setitem(
        sys.modules, "torch._C._distributed_c10d", types.SimpleNamespace(_dump_nccl_trace=lambda: b"")
    )
    data, why = flight_records.own_flight_record()
    assert data == b""
    assert why == f"torch {torch.__version__} has no flight recorder to dump (no _dump_fr_trace)"
    (tmp_path / "rank0.fr-none").write_text(why)
    (tmp_path / "rank1.fr-none").write_text(why)
    assert flight_records.why_no_dumps(tmp_path) == (
        f"; no flight-recorder dumps (torch {torch.__version__} has no flight recorder to dump "
        "(no _dump_fr_trace)): the verdict rests on the stacks"
    )


def test_library_mode_says_why_the_recorder_the_user_turned_on_sent_nothing(monkeypatch):
    monkeypatch.setitem(
        sys.modules, "torch._C._distributed_c10d", types.SimpleNamespace(_dump_nccl_trace=lambda: b"")
    )
    assert not flight_records.has_flight_recorder(sys.modules["torch._C._distributed_c10d"])
    monkeypatch.delenv("TORCH_FR_BUFFER_SIZE", raising=False)
    monkeypatch.delenv("TORCH_NCCL_TRACE_BUFFER_SIZE", raising=False)
    assert flight_records.own_digest(0) == {"record": None}  # not turned on: nothing to say
    monkeypatch.setenv("TORCH_FR_BUFFER_SIZE", "100")
    sent = flight_records.own_digest(0)
    why = f"torch {torch.__version__} has no flight recorder to dump (no _dump_fr_trace)"
    assert sent == {"record": None, "no_record": why}
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=30), wait_for_workers=False)
    stack = {"rank": 0, "pid": 1, "host": "here", "frames": [["train.py", 3, "main"]]}
    store.set(f"{watch._KEY}stack/0", json.dumps({**stack, **sent}))
    stacks, records = watch._read_stacks(store, 1, 5)
    assert records == {}
    assert stacks[0].evidence == [f"it sent no flight-recorder record: {why}"]


def test_a_rank_that_never_used_torch_distributed_is_not_called_an_old_torch(monkeypatch, tmp_path):
    monkeypatch.delitem(sys.modules, "torch._C._distributed_c10d", raising=False)
    assert flight_records.own_flight_record() == (b"", "torch.distributed was never used")
    (tmp_path / "rank0.fr-none").write_text("torch.distributed was never used")
    assert flight_records.why_no_dumps(tmp_path) == ""


class WithoutClone:
    """A real TCPStore connection less ``clone``, as torch 2.4's stores are."""

    def __init__(self, inner):
        self.inner = inner
        self.requests = 0

    def __getattr__(self, name):
        if name == "clone":
            raise AttributeError("'torch._C._distributed_c10d.TCPStore' object has no attribute 'clone'")
        self.requests += 1
        return getattr(self.inner, name)


def test_a_wait_on_a_store_that_cannot_clone_is_made_of_checks_and_sees_a_key_set_meanwhile():
    server = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=30), wait_for_workers=False)
    store = WithoutClone(server)
    assert not can_clone(store) and clone_store(store) is None
    assert can_clone(server) == hasattr(server, "clone")  # torch 2.13: True; 2.4: False
    seen = []

    def stop_waiting():  # asked on the same connection while the wait goes on: it must get answers
        seen.append(store.check(["go"]))
        if len(seen) == 3:
            server.set("go", "1")
        return False

    assert wait_for_keys(store, ["go"], 60, on_slow=lambda: None, stop_waiting=stop_waiting)
    assert seen[:3] == [False, False, False]
    assert not wait_for_keys(store, ["never"], 0.3)
