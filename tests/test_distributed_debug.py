"""Debug mode on real ranks over gloo: mismatches raise on every rank, a missing rank is named, plain
torch.distributed scripts are checked once enable() ran."""

import json
import re

import pytest
import torch
import torch.distributed as dist
from rank_runner import run_ranks

from torchdoctor.distributed import debug, debug_settings, messages, signature

ISSUE_EXAMPLE = """\
Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.

Operation: `torchdoctor.distributed.broadcast`
Input shapes:
  - Process 0: [1, 5]
  - Process 1: [1, 2, 5]"""


def results_by_case(output: str) -> dict:
    return {d["case"]: d for d in map(json.loads, output.splitlines()) if "case" in d}


MISMATCHES = """
import json, torch, torch.distributed as dist
import torchdoctor.distributed as td

dist.init_process_group("gloo")
rank = dist.get_rank()

def attempt(case, fn):
    try:
        print(json.dumps({"case": case, "result": fn()}), flush=True)
    except Exception as error:
        print(json.dumps({"case": case, "error": str(error), "raised": type(error).__module__}), flush=True)

attempt("broadcast shape", lambda: td.broadcast(torch.zeros(1, 5) if rank == 0 else torch.zeros(1, 2, 5)).tolist())
attempt("gather dtype", lambda: td.gather({"x": torch.zeros(2, dtype=torch.float32 if rank == 0 else torch.int64)})["x"].tolist())
attempt("pad ndim", lambda: td.pad_across_processes(torch.zeros(2) if rank == 0 else torch.zeros(2, 2)).tolist())
attempt("gather ok", lambda: td.gather(torch.tensor([rank, rank])).tolist())
attempt("direct all_reduce", lambda: dist.all_reduce(torch.zeros(3 + rank)))
attempt("direct broadcast src", lambda: dist.broadcast(torch.zeros(2), src=rank))
attempt("direct reduce op", lambda: dist.all_reduce(torch.zeros(2), op=dist.ReduceOp.MAX if rank else dist.ReduceOp.SUM))
attempt("different operations", lambda: td.reduce(torch.ones(1)).tolist() if rank == 0 else td.gather(torch.ones(1)).tolist())

# the real accelerate, in debug mode, on the same mismatch: our text must read the same
from accelerate.state import PartialState
from accelerate.utils import broadcast as accelerate_broadcast
PartialState(cpu=True).debug = True
attempt("accelerate broadcast shape", lambda: accelerate_broadcast(torch.zeros(1, 5) if rank == 0 else torch.zeros(1, 2, 5)))

# then accelerate's own gather without accelerate's debug mode, under ours: the user's line and the fix
import torchdoctor.distributed.debug as debug
from accelerate.utils import gather
from torchdoctor.distributed import DistributedOperationException

PartialState(cpu=True).debug = False
debug.enable()  # what `torchdoctor launch --debug` does in every worker
predictions = torch.zeros(4 if rank == 0 else 3, 2)  # an uneven last batch
try:
    gather(predictions)
except DistributedOperationException as error:
    print(json.dumps({"case": "accelerate gather uneven", "error": str(error)}), flush=True)
dist.destroy_process_group()  # exiting with a live gloo group sometimes aborts (torch, not us)
"""


# One real 2-rank job for the mismatches and accelerate's uneven gather (a module-scoped fixture; the module is
# in SHARED_JOB_MODULES, so xdist runs it once): each case is caught and printed, so one job holds them all.
@pytest.fixture(scope="module")
def mismatch_job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mismatches")
    return run_ranks(MISMATCHES, folder, nprocs=2, env={"TORCHDOCTOR_DEBUG_MODE": "1"}, timeout=240)


def test_mismatches_raise_on_every_rank_with_accelerate_wording(mismatch_job):
    results = mismatch_job
    cases = [results_by_case(r.stdout) for r in results]
    for rank, result in enumerate(results):
        assert result.returncode == 0, result.output
        by_case = cases[rank]
        assert by_case["broadcast shape"]["error"].startswith(
            ISSUE_EXAMPLE + "\nCalled from:\n  - Process 0: "
        )
        dtype_error = by_case["gather dtype"]["error"]
        assert "due to dtype mismatches. All dtypes across devices must be valid." in dtype_error
        assert "Operation: `torchdoctor.distributed.gather`" in dtype_error
        assert "  - Process 0: {'x': 'torch.float32'}\n  - Process 1: {'x': 'torch.int64'}" in dtype_error
        assert dtype_error.endswith(messages.dtype_fix(["torch.float32", "torch.int64"]))
        assert by_case["pad ndim"]["error"].startswith(
            "Error found while calling `torchdoctor.distributed.pad_across_processes`"
        )
        assert by_case["gather ok"]["result"] == [0, 0, 1, 1]
        # debug mode on + one torchdoctor collective = the user's own torch.distributed calls are checked too
        direct = by_case["direct all_reduce"]["error"]
        assert "Operation: `torch.distributed.all_reduce`" in direct
        assert "  - Process 0: [3]\n  - Process 1: [4]" in direct
        assert (
            "Input source ranks:\n  - Process 0: 0\n  - Process 1: 1"
            in by_case["direct broadcast src"]["error"]
        )
        assert (
            "Input reduce ops:\n  - Process 0: SUM\n  - Process 1: MAX"
            in by_case["direct reduce op"]["error"]
        )
        assert by_case["different operations"]["error"].startswith(
            "Cannot apply desired operation because the processes called different operations at the same point."
            " All processes must call the same collectives in the same order.\n\nOperations:\n"
            "  - Process 0: `torchdoctor.distributed.reduce`\n  - Process 1: `torchdoctor.distributed.gather`"
        )
    # word for word what accelerate says, but for the operation's name and the call sites we add
    ours = cases[0]["broadcast shape"]["error"].split("\nCalled from:")[0]
    theirs = cases[0]["accelerate broadcast shape"]["error"]
    assert cases[0]["broadcast shape"]["raised"] == "torchdoctor.distributed"
    assert ours == theirs.replace(
        "accelerate.utils.operations.broadcast", "torchdoctor.distributed.broadcast"
    )
    # the call site named is the user's line, the same on both ranks here
    assert "script_" in cases[0]["broadcast shape"]["error"].split("Called from:")[1]
    assert cases[0]["broadcast shape"]["error"] == cases[1]["broadcast shape"]["error"]


PLAIN_DDP_SCRIPT = """
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
total = torch.ones(2)
dist.all_reduce(total)
print("sum", total.tolist(), flush=True)
grads = torch.zeros(4 if rank == 0 else 6)
dist.all_reduce(grads)  # the bug: rank 1's tensor is longer
print("unreachable", flush=True)
"""

LAUNCHER = """
import runpy, sys
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException
debug.enable()
runpy.run_path(sys.argv[1] if len(sys.argv) > 1 else {user!r}, run_name="__main__")
"""


def test_plain_torch_distributed_script_checked_after_enable(tmp_path):
    user = tmp_path / "train.py"
    user.write_text(PLAIN_DDP_SCRIPT)
    results = run_ranks(LAUNCHER.format(user=str(user)), tmp_path, nprocs=2, timeout=60)
    line = (
        PLAIN_DDP_SCRIPT.splitlines().index("dist.all_reduce(grads)  # the bug: rank 1's tensor is longer")
        + 1
    )
    for rank, result in enumerate(results):
        assert result.returncode not in (0, None), result.output  # 1, or an abort on exit with a live group
        assert "sum [2.0, 2.0]" in result.stdout
        assert "unreachable" not in result.stdout
        stderr = result.stderr.replace(f"[rank{rank}]: ", "")  # torch prefixes an uncaught error's lines
        assert "torchdoctor.distributed.DistributedOperationException: " in stderr
        assert "Operation: `torch.distributed.all_reduce`" in stderr
        assert "  - Process 0: [4]\n  - Process 1: [6]" in stderr
        for other in (0, 1):
            assert f"  - Process {other}: {user}:{line} in <module>" in stderr
        # the traceback ends at the user's line: torchdoctor's own frames (the wrapper, the check) are left out
        frames = stderr.split("Traceback (most recent call last):\n")[1].split("torchdoctor.distributed.")[0]
        assert "torchdoctor/" not in frames, frames
        shown = [line for line in frames.splitlines() if line.strip().strip("^~")]  # less 3.11's carets
        assert shown[-1].endswith("dist.all_reduce(grads)  # the bug: rank 1's tensor is longer"), frames


MISSING_RANK = """
import torch, torch.distributed as dist, time
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException

debug.enable()
dist.init_process_group("gloo")
rank = dist.get_rank()
first_two = dist.new_group([0, 1])
dist.all_reduce(torch.ones(1))
if rank < 2:
    dist.all_reduce(torch.ones(1), group=first_two)  # checked among ranks 0 and 1 only
if rank == 2:
    time.sleep(60)  # never reaches the barrier below
def wait_for_everyone():
    dist.barrier()
try:
    wait_for_everyone()
except DistributedOperationException as error:
    print(error, flush=True)
"""


def test_rank_that_never_arrives_is_named_within_the_timeout(tmp_path):
    results = run_ranks(
        MISSING_RANK, tmp_path, nprocs=3, env={"TORCHDOCTOR_DEBUG_TIMEOUT": "3"}, wait_for=[0, 1], timeout=60
    )
    line = MISSING_RANK.splitlines().index("    dist.barrier()") + 1
    first = MISSING_RANK.splitlines().index("dist.all_reduce(torch.ones(1))") + 1
    for rank in (0, 1):
        out = results[rank].stdout
        assert out.startswith("Process 2 did not reach collective #2 within 3 s"), out
        assert "Operation: `torch.distributed.barrier`" in out
        for waiting in (0, 1):
            assert f"  - Process {waiting}: " in out and f".py:{line} in wait_for_everyone" in out
        assert "  - Process 2: last seen at collective #1 `torch.distributed.all_reduce` at " in out
        assert f".py:{first} in <module>" in out
        # and where it is now: its own answer, its main thread's stack, innermost call last
        where = out.split("    where it is now (innermost call last):\n")[1]
        assert where.rstrip().endswith("time.sleep(60)  # never reaches the barrier below"), where
    assert results[2].returncode is None  # still asleep: it was the one missing


def test_debug_mode_switch_and_timeout_setting():
    assert debug_settings.debug_mode_enabled({"TORCHDOCTOR_DEBUG_MODE": "1"})
    assert debug_settings.debug_mode_enabled({"TORCHDOCTOR_DEBUG_MODE": "True"})
    assert not debug_settings.debug_mode_enabled({"TORCHDOCTOR_DEBUG_MODE": "0"})
    assert not debug_settings.debug_mode_enabled({})
    assert debug_settings.debug_timeout({}) == debug_settings.DEFAULT_TIMEOUT
    assert debug_settings.debug_timeout({"TORCHDOCTOR_DEBUG_TIMEOUT": "12.5"}) == 12.5
    for bad in ("soon", "0", "-3"):
        with pytest.raises(ValueError, match=f"TORCHDOCTOR_DEBUG_TIMEOUT='{bad}'"):
            debug_settings.debug_timeout({"TORCHDOCTOR_DEBUG_TIMEOUT": bad})


def test_enable_is_idempotent_and_disable_restores_the_originals():
    originals = {name: getattr(dist, name) for name in debug.CHECKED_CALLS}
    try:
        debug.enable(timeout=7)
        wrapped = {name: getattr(dist, name) for name in debug.CHECKED_CALLS}
        debug.enable()
        assert all(getattr(dist, name) is wrapped[name] for name in debug.CHECKED_CALLS)
        assert all(wrapped[name] is not originals[name] for name in debug.CHECKED_CALLS)
        assert debug.is_enabled() and debug_settings.debug_timeout() == 7
        with pytest.raises(ValueError, match="timeout=0"):
            debug.enable(timeout=0)
        with pytest.raises(TypeError, match="Expected parameter `tensor`"):  # torch's own words, not ours
            dist.all_reduce("not a tensor")
    finally:
        debug.disable()
    assert all(getattr(dist, name) is originals[name] for name in debug.CHECKED_CALLS)
    assert not debug.is_enabled() and debug_settings.debug_timeout({}) == debug_settings.DEFAULT_TIMEOUT


def test_mismatch_message_names_each_field():
    same = {"operation": "op", "shape": [2], "dtype": "torch.float32", "device": "cpu", "site": "a.py:1 in f"}
    assert messages.mismatch_message({0: same, 1: dict(same)}) == ""
    # the same call from two lines: a rank took another path (named since fingerprints include the call site)
    text = messages.mismatch_message({0: same, 1: dict(same, site="a.py:9 in g")})
    assert text.startswith("Cannot apply desired operation: the processes called `op` from different lines.")
    assert text.endswith("Called from:\n  - Process 0: a.py:1 in f\n  - Process 1: a.py:9 in g")
    text = messages.mismatch_message({0: same, 1: dict(same, device="cuda", site="b.py:3 in h")})
    assert text.startswith("Cannot apply desired operation due to device mismatches. All devices across")
    assert text.endswith("Called from:\n  - Process 0: a.py:1 in f\n  - Process 1: b.py:3 in h")
    text = messages.mismatch_message({0: dict(same, src=0), 1: dict(same, src=1)})
    assert "Input source ranks:\n  - Process 0: 0\n  - Process 1: 1" in text
    assert messages.mismatch_message({0: same, 1: same}, backend="gloo") == ""
    text = messages.mismatch_message({0: same, 1: dict(same, device="cuda")}, backend="nccl")
    assert text.startswith("Cannot apply desired operation due to device mismatches")
    text = messages.mismatch_message({0: same, 1: same}, backend="nccl")
    assert text.startswith("Cannot apply desired operation: the NCCL backend only communicates CUDA tensors")
    assert "Input devices:\n  - Process 0: cpu\n  - Process 1: cpu" in text
    # a dtype mismatch ends with its fix, the dtypes named (nested ones too), rank 0's as the cast's example
    text = messages.mismatch_message({0: same, 1: dict(same, dtype="torch.float64")})
    assert text.endswith(
        "Called from:\n  - Process 0: a.py:1 in f\n  - Process 1: a.py:1 in f\n\nFix: the ranks' tensors have "
        "different dtypes (torch.float32, torch.float64): a collective sends raw bytes, so every rank must pass "
        "the same dtype. Cast to one dtype on every rank before the call (e.g. `.to(torch.float32)`), and look at "
        "where one rank's dtype came from (a `.double()`, a NumPy float64 array through `torch.from_numpy`, "
        "integer values where the others hold floats, autocast on one rank only)."
    )
    text = messages.mismatch_message(
        {0: dict(same, dtype={"x": "torch.float32"}), 1: dict(same, dtype={"x": "torch.int64"})}
    )
    assert "Fix: the ranks' tensors have different dtypes (torch.float32, torch.int64)" in text


def test_debug_names_the_users_line_under_accelerate_and_the_fix_for_an_uneven_batch(mismatch_job):
    line = MISMATCHES.splitlines().index("    gather(predictions)") + 1
    for result in mismatch_job:
        assert result.returncode == 0, result.output
        error = results_by_case(result.stdout)["accelerate gather uneven"]["error"]
        assert "Operation: `torch.distributed.all_gather`" in error
        assert "  - Process 0: [4, 2]\n  - Process 1: [3, 2]" in error
        for rank in (0, 1):  # the user's call, not accelerate/utils/operations.py
            assert re.search(rf"  - Process {rank}: \S*script_\d+\.py:{line} in <module>", error), error
        assert "accelerate" not in error.split("Called from:")[1].split("\n\n")[0]
        fix = error.split("\n\n")[-1]
        assert fix.startswith("Fix: the ranks hold different numbers of rows in dimension 0 (4, 3)")
        for advice in (
            "pad_across_processes(tensor, dim=0)",
            "drop_last=True",
            "even_batches=True",
            "gather_object",
        ):
            assert advice in fix


def test_shape_fix_fits_the_operation():
    # a reduction or a broadcast needs the same shape everywhere: gather's padding would not help
    for operation in ("torch.distributed.all_reduce", "torchdoctor.distributed.reduce"):
        fix = messages.shape_fix([[4, 3], [2, 3]], operation)
        assert "every rank must pass the same shape" in fix and "drop_last=True" in fix
        assert "pad_across_processes" not in fix and "gather_object" not in fix
    fix = messages.shape_fix([[4], [2]], "torch.distributed.broadcast")
    assert "Allocate the receiving tensors with the source's shape" in fix
    assert "pad_across_processes" not in fix
    fix = messages.shape_fix([[4, 3], [2, 3]], "torch.distributed.all_gather")
    assert "pad_across_processes(tensor, dim=0)" in fix and "gather_object" in fix


def test_shape_fix_names_the_dimension_or_says_nothing():
    assert "dimension 1 (5, 7)" in messages.shape_fix([[2, 5], [2, 7]])
    assert "pad_across_processes(tensor, dim=1, pad_index=...)" in messages.shape_fix([[2, 5], [2, 7]])
    assert "different numbers of dimensions (2, 1)" in messages.shape_fix([[2, 5], [5]])
    assert messages.shape_fix([[2, 5], [3, 7]]) == ""  # two dimensions differ: no confident advice
    nested = [{"a": [1], "b": [4, 2]}, {"a": [1], "b": [3, 2]}]
    assert "dimension 0 (4, 3)" in messages.shape_fix(nested)


def test_nested_tensors_have_a_signature_instead_of_a_crash():
    import torch

    nested = torch.nested.nested_tensor([torch.zeros(3), torch.zeros(1)])
    found = signature.tensor_signature({"x": nested})
    assert found["shape"] == {"x": {"nested": [[3], [1]]}}
    assert found["dtype"] == {"x": "torch.float32"}


def test_every_checked_call_is_read_with_its_own_parameter_names():
    # FSDP2 (torch 2.13) calls all_gather_single(out, inp, group=...) and reduce_scatter_single(output=..., ...):
    # each checked call is read from positional and keyword arguments alike, under torch's own names
    import inspect

    out, inp = torch.zeros(4), torch.zeros(2)
    for name in debug.CHECKED_CALLS:
        if not hasattr(dist, name) or name in ("barrier", "all_gather", "all_reduce", "broadcast", "reduce"):
            continue
        parameters = list(inspect.signature(getattr(dist, name)).parameters)
        by_name = {parameters[0]: out, parameters[1]: inp, "group": "g"}
        quick, described = signature.QUICK[name](**by_name), signature.DESCRIBE[name](**by_name)
        assert quick == signature.QUICK[name](out, inp, group="g"), name
        assert quick[0] == described[0] == "g", name
