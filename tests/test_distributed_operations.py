"""torchdoctor.distributed collectives: results on 2 real ranks over gloo, and in a single process."""

import json
from collections import namedtuple

import pytest
import torch
from rank_runner import run_ranks

import torchdoctor.distributed as td

RESULTS = """
import json, os, torch, torch.distributed as dist
import torchdoctor.distributed as td

dist.init_process_group("gloo")
rank = dist.get_rank()
for debug_mode in ("0", "1"):
  os.environ["TORCHDOCTOR_DEBUG_MODE"] = debug_mode
  out = {"debug mode": debug_mode}
  out["gather"] = td.gather({"a": torch.tensor([rank, rank]), "b": [torch.tensor(float(rank))]})
  out["gather_object"] = td.gather_object([f"rank {rank}"])
  out["reduce mean"] = td.reduce(torch.tensor([1.0 + rank, 4.0]))
  out["reduce max"] = td.reduce(torch.tensor([1.0 + rank]), reduction="max")
  out["reduce sum scaled"] = td.reduce(torch.tensor([1.0 + rank]), reduction="sum", scale=10)
  x = torch.tensor([float(rank)])
  td.all_reduce((x,))
  out["all_reduce in place"] = x
  y = torch.tensor([rank * 7])
  td.broadcast({"y": y}, from_process=1)
  out["broadcast from 1"] = y
  objects = [None, rank] if rank else [{"config": 1}, "hello"]
  out["broadcast_object_list"] = td.broadcast_object_list(objects)
  out["pad"] = td.pad_across_processes(torch.ones(1 + rank), pad_index=-1)
  out["pad first"] = td.pad_across_processes(torch.ones(1, 1 + rank), dim=1, pad_first=True)
  print(json.dumps({k: v.tolist() if isinstance(v, torch.Tensor) else v for k, v in out.items()}, default=lambda t: t.tolist()))
dist.destroy_process_group()  # exiting with a live gloo group sometimes aborts (torch, not us)
"""


def test_results_on_two_ranks_with_and_without_debug_mode(tmp_path):
    results = run_ranks(RESULTS, tmp_path, nprocs=2)
    for rank, result in enumerate(results):
        assert result.returncode == 0, result.output
        runs = [json.loads(line) for line in result.stdout.strip().splitlines()]
        assert [run.pop("debug mode") for run in runs] == ["0", "1"]
        assert runs[0] == runs[1]
        got = runs[0]
        assert got["gather"] == {"a": [0, 0, 1, 1], "b": [[0.0, 1.0]]}
        assert got["gather_object"] == ["rank 0", "rank 1"]
        assert got["reduce mean"] == [1.5, 4.0]
        assert got["reduce max"] == [2.0]
        assert got["reduce sum scaled"] == [30.0]
        assert got["all_reduce in place"] == [1.0]
        assert got["broadcast from 1"] == [7]
        assert got["broadcast_object_list"] == [{"config": 1}, "hello"]
        assert got["pad"] == ([1.0, -1.0] if rank == 0 else [1.0, 1.0])
        assert got["pad first"] == ([[0.0, 1.0]] if rank == 0 else [[1.0, 1.0]])


def test_single_process_returns_the_input_like_accelerate():
    t = torch.arange(3.0)
    assert td.gather(t) is t
    assert td.gather_object(["a"]) == ["a"]
    reduced = td.reduce(t, reduction="sum", scale=2)
    assert reduced.tolist() == [0.0, 2.0, 4.0] and t.tolist() == [0.0, 1.0, 2.0]
    Pair = namedtuple("Pair", "x y")
    padded = td.pad_across_processes(Pair(torch.ones(2), torch.zeros(1)))
    assert isinstance(padded, Pair) and padded.x.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="reduction='median'"):
        td.reduce(t, reduction="median")
    with pytest.raises(TypeError, match="Unsupported type str"):
        td.reduce({"a": "not a tensor"})


def test_nested_tensor_is_left_unpadded_with_accelerates_warning():
    nested = torch.nested.nested_tensor([[1, 2, 3], [1], [1, 2]])
    with pytest.warns(td.CannotPadNestedTensorWarning, match="cannot pad a nested tensor"):
        assert td.pad_across_processes(nested) is nested
    with pytest.warns(td.CannotPadNestedTensorWarning):
        padded = td.pad_across_processes({"nested": nested, "plain": torch.ones(2)})
    assert padded["nested"] is nested and padded["plain"].tolist() == [1.0, 1.0]
    tensor = torch.randn(4, 3, 10)
    assert td.pad_across_processes(tensor, dim=-1).shape == (4, 3, 10)
    assert td.pad_across_processes(tensor, dim=-4) is tensor


ACCELERATE_SWITCH = """
import json, warnings, torch, torch.distributed as dist
import torchdoctor.distributed as td

dist.init_process_group("gloo")
rank = dist.get_rank()
out = {"debug on": td.debug_mode_enabled()}
nested = torch.nested.nested_tensor([torch.zeros(2), torch.zeros(1 + rank)])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out["nested left as is"] = td.pad_across_processes(nested) is nested
out["warned"] = [w.category.__name__ for w in caught if "nested" in str(w.message)]
out["pad"] = td.pad_across_processes(torch.ones(1 + rank)).tolist()
try:
    td.broadcast(torch.zeros(1, 5) if rank == 0 else torch.zeros(1, 2, 5))
except td.DistributedOperationException as error:
    out["mismatch"] = str(error).splitlines()[0]
print(json.dumps(out), flush=True)
dist.destroy_process_group()
"""


def test_accelerate_debug_mode_variable_turns_debug_mode_on(tmp_path):
    results = run_ranks(ACCELERATE_SWITCH, tmp_path, nprocs=2, env={"ACCELERATE_DEBUG_MODE": "1"})
    for rank, result in enumerate(results):
        assert result.returncode == 0, result.output
        out = json.loads(result.stdout.strip().splitlines()[-1])
        assert out["debug on"] is True
        assert out["nested left as is"] and out["warned"] == ["CannotPadNestedTensorWarning"]
        assert out["pad"] == ([1.0, 0.0] if rank == 0 else [1.0, 1.0])
        assert out["mismatch"] == (
            "Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid."
        )
