"""torchdoctor.distributed collectives: results on 2 real ranks over gloo, and in a single process."""

import json
from collections import namedtuple

import pytest
import torch
from rank_runner import run_ranks

import torchdoctor.distributed as td

# One real 2-rank job for both scenarios (a module-scoped fixture; the module is in SHARED_JOB_MODULES, so
# xdist runs it once): each scenario prints its own lines, tagged with its name, and each test reads its own.
# The job starts with ACCELERATE_DEBUG_MODE=1 in its environment, as `accelerate launch --debug` starts it: that
# scenario runs first, on fresh ranks. Then debug mode is undone (the variable dropped, the wrapped
# torch.distributed functions put back) and the results run without and with TORCHDOCTOR_DEBUG_MODE.
JOB = """
import json, os, traceback, warnings, torch, torch.distributed as dist
import torchdoctor.distributed as td
import torchdoctor.distributed.debug as debug

dist.init_process_group("gloo")
rank = dist.get_rank()

def say(scenario, out):
    print(json.dumps({"scenario": scenario, **out}, default=lambda t: t.tolist()), flush=True)

def accelerate_switch():
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
    say("accelerate switch", out)

def results():
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
        say("results", out)

for name, scenario in (("accelerate switch", accelerate_switch), ("results", results)):
    try:
        scenario()
    except Exception:
        say(name, {"crashed": traceback.format_exc()})
    if name == "accelerate switch":  # back to a process that never had debug mode on
        del os.environ["ACCELERATE_DEBUG_MODE"]
        debug.disable()
dist.barrier()  # leave together: a rank that reaches the teardown seconds before its peer (a loaded machine) can
# abort in gloo's teardown, its store socket timed out after 2000 ms (CI, 2026-11-30, load 5: returncode -6)
dist.destroy_process_group()  # exiting with a live gloo group sometimes aborts (torch, not us)
"""


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("operations")
    return run_ranks(JOB, folder, nprocs=2, env={"ACCELERATE_DEBUG_MODE": "1"}, timeout=120)


def lines_of(result, scenario: str) -> list[dict]:
    """The lines ``scenario`` printed on one rank, without the name; a scenario that raised fails here."""
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    lines = [line for line in lines if line.pop("scenario") == scenario]
    assert lines and all("crashed" not in line for line in lines), result.output
    return lines


def test_results_on_two_ranks_with_and_without_debug_mode(job):
    for rank, result in enumerate(job):
        assert result.returncode == 0, result.output
        runs = lines_of(result, "results")
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


def test_accelerate_debug_mode_variable_turns_debug_mode_on(job):
    for rank, result in enumerate(job):
        assert result.returncode == 0, result.output
        [out] = lines_of(result, "accelerate switch")
        assert out["debug on"] is True
        assert out["nested left as is"] and out["warned"] == ["CannotPadNestedTensorWarning"]
        assert out["pad"] == ([1.0, 0.0] if rank == 0 else [1.0, 1.0])
        assert out["mismatch"] == (
            "Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid."
        )
