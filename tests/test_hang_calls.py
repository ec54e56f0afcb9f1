"""The call-site ring (`torchdoctor.hang.calls`): what a worker notes of each collective reads back whole, in
numbers on the way in and names on the way out, on a real gloo group of one rank in this process."""

import os
import sys
import types
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from torchdoctor.hang import calls


@pytest.fixture
def ring(tmp_path):
    """A ring in ``tmp_path`` with torch.distributed's collectives wrapped, on a one-rank gloo group."""
    path = tmp_path / "rank0.calls"
    calls.open_ring(path)
    calls.record_calls(dist)
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield path
    dist.destroy_process_group()
    calls._ring.clear()  # later tests in this process must not write into a removed file


def test_each_call_reads_back_with_its_group_operation_shape_dtype_and_sequence_numbers(ring):
    def step(t):
        dist.all_reduce(t)  # the direct caller, line noted

    for _ in range(calls.KEEP + 6):  # more than the ring keeps: the oldest are dropped
        step(torch.ones(2, 3, dtype=torch.float16))
    dist.barrier()
    dist.all_gather_object([None], {"a": 1})  # built on two collectives: uses two sequence numbers
    sub = dist.new_group([0])
    dist.broadcast(torch.zeros(5), 0, group=sub)

    groups = calls.read_calls(ring)
    default = groups["0"]
    assert len(default) + len(groups[sub.group_name]) == calls.KEEP
    reduce_ = default[-3]
    assert reduce_.op == "all_reduce" and reduce_.shape == [2, 3] and reduce_.dtype == "float16"
    assert reduce_.first == reduce_.last == calls.KEEP + 6
    assert [f.function for f in reduce_.frames] == [
        "test_each_call_reads_back_with_its_group_operation_shape_dtype_and_sequence_numbers",
        "step",
    ]
    assert reduce_.frames[-1].file == __file__
    assert reduce_.frames[-1].line == step.__code__.co_firstlineno + 1
    assert (default[-2].op, default[-2].shape, default[-2].dtype) == ("barrier", None, None)
    gathered = default[-1]
    assert gathered.op == "all_gather_object" and gathered.last == gathered.first + 1
    (sent,) = groups[sub.group_name]
    assert (sent.op, sent.first, sent.shape, sent.dtype) == ("broadcast", 1, [5], "float32")


def test_library_frames_between_the_users_are_left_out_but_the_direct_caller_is_kept(ring, tmp_path):
    # a "library" is code whose file lies in the standard library's folder: compiled under that name
    import sysconfig

    library_file = os.path.join(sysconfig.get_paths()["stdlib"], "fake_library.py")
    library = types.ModuleType("fake_library")
    exec(compile("def helper(f, t):\n    return f(t)\n", library_file, "exec"), library.__dict__)
    direct = types.ModuleType("fake_direct")
    exec(compile("def reduce(t):\n    return dist.all_reduce(t)\n", library_file, "exec"), direct.__dict__)
    direct.dist = dist

    def user_code():
        library.helper(direct.reduce, torch.ones(1))

    user_code()
    (call,) = calls.read_calls(ring)["0"]
    where = [(Path(f.file).name, f.function) for f in call.frames]
    # outermost first: this test, user_code, then (skipping the library's helper) the direct caller
    assert where[-1] == ("fake_library.py", "reduce")
    assert where[-2] == ("test_hang_calls.py", "user_code")
    assert ("fake_library.py", "helper") not in where


def test_a_deep_stack_keeps_the_innermost_frames_and_a_call_without_a_tensor_has_no_shape(ring):
    def down(depth):
        return down(depth - 1) if depth else dist.barrier()

    down(2 * calls.FRAMES)
    (call,) = calls.read_calls(ring)["0"]
    assert len(call.frames) == calls.FRAMES and {f.function for f in call.frames} == {"down"}
    assert call.shape is None and call.dtype is None


def test_a_shape_of_more_dimensions_than_kept_is_noted_without_it(ring):
    dist.all_reduce(torch.ones([1] * (calls.DIMS + 1)))
    (call,) = calls.read_calls(ring)["0"]
    assert call.shape is None and call.dtype == "float32"


def test_names_that_no_longer_fit_read_as_unknown_frames_not_as_an_error(ring, monkeypatch):
    monkeypatch.setattr(calls, "_names_used", [calls._names_used[0], calls._NAMES])  # the names area is full
    exec(
        compile("def fresh(t):\n    dist.all_reduce(t)\n", "/nowhere/fresh.py", "exec"), ns := {"dist": dist}
    )
    ns["fresh"](torch.ones(1))
    (call,) = calls.read_calls(ring)["?"]  # the group's name did not fit either
    assert call.frames[-1].file == "?" and call.frames[-1].line == 2


def test_a_file_that_is_not_a_ring_is_refused_with_its_size(tmp_path):
    path = tmp_path / "rank0.calls"
    path.write_bytes(b"\0" * 100)
    with pytest.raises(ValueError, match="100 bytes, not the"):
        calls.read_calls(path)
    calls.open_ring(path)
    ring = calls._ring[0]
    calls._COUNT.pack_into(ring, 0, 1)
    calls._SLOT_AT[0][0].pack_into(ring, calls._HEAD, 1, 0, 7, 0, -1, -1, 0)  # group 7: never named
    ring.flush()
    calls._ring.clear()
    with pytest.raises(ValueError, match="call 0 does not read"):
        calls.read_calls(path)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
