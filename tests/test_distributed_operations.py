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
