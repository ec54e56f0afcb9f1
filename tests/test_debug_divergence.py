"""Debug mode's running fingerprints on real gloo ranks: divergences that would never block, and ones that would
block or abort, are named on every rank, seconds after the first divergent call.

Each script warms up (every call it will make is made once on every rank, so later calls are repeats, which
cost no store request), then one rank diverges. Every rank prints the error it got, or, blocked for good inside
a collective, ends saying it on stderr. Times are printed, not asserted (the machine is shared).
"""

import json
import re

from rank_runner import run_ranks

HEAD = """
import json, sys, time, torch, torch.distributed as dist
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException

debug.enable(timeout=120)  # far beyond the test's bound: what is named here is found by the fingerprints
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(8)
diverged_at = None

def report(error, i):
    after = time.monotonic() - diverged_at if diverged_at else None
    print(json.dumps({"error": str(error), "iteration": i, "after": after}), flush=True)
"""

DIFFERENT_LINES = (
    HEAD
    + """
def forward_sync():
    dist.all_reduce(t)  # line A

def metrics_sync():
    dist.all_reduce(t)  # line B

try:
    for i in range(2000):
        if i == 10:
            diverged_at = time.monotonic()
        if i >= 10 and rank == 1:  # the same shapes in the other order: gloo pairs them, nothing blocks
            metrics_sync()
            forward_sync()
        else:
            forward_sync()
            metrics_sync()
        time.sleep(0.02)
    print("no error", flush=True)
except DistributedOperationException as error:
    report(error, i)
"""
)


def outcome(result) -> str:
    """The error a rank raised (printed by the script), or the one it ended with on stderr."""
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)["error"]
    found = re.search(
        r"torchdoctor\.distributed\.DistributedOperationException: (.*?)\ntorchdoctor: this rank is blocked",
        result.stderr,
        re.S,
    )
    assert found, result.output
    return found.group(1)


def line_of(script: str, marker: str) -> int:
    return next(i for i, line in enumerate(script.splitlines(), 1) if marker in line)


def test_compatible_shapes_from_different_lines_are_named_on_every_rank(tmp_path):
    results = run_ranks(DIFFERENT_LINES, tmp_path, nprocs=2, timeout=150)
    a, b = line_of(DIFFERENT_LINES, "# line A"), line_of(DIFFERENT_LINES, "# line B")
    for result in results:
        assert "no error" not in result.stdout, result.output
        error = outcome(result)
        assert error.startswith("The ranks diverged at collective #21 of the world group"), error
        assert "the processes called `torch.distributed.all_reduce` from different lines" in error
        assert re.search(rf"Process 0: \S+:{a} in forward_sync", error), error
        assert re.search(rf"Process 1: \S+:{b} in metrics_sync", error), error
        # raised by the fingerprints while both ranks ran on, long before the loop's end (or, blocked inside
        # the next all_reduce by the other's leaving, ended saying it)
        printed = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        assert not printed or printed[0]["iteration"] < 1000, result.output


ORDER_SWAP = (
    HEAD
    + """
pair = dist.new_group([0, 1])
try:
    for i in range(2000):
        if i == 5:
            diverged_at = time.monotonic()
        if i >= 5 and rank == 1:  # the other order, across two groups: each waits inside one for good
            dist.all_reduce(t, group=pair)  # swapped: pair first
            dist.all_reduce(t)
        else:
            dist.all_reduce(t)
            dist.all_reduce(t, group=pair)
        time.sleep(0.02)
    print("no error", flush=True)
except DistributedOperationException as error:
    report(error, i)
"""
)


def test_an_order_swap_across_two_groups_is_named_on_every_rank(tmp_path):
    results = run_ranks(ORDER_SWAP, tmp_path, nprocs=2, timeout=150)
    for result in results:
        assert "no error" not in result.stdout, result.output
        error = outcome(result)
        assert "The ranks diverged at collective #" in error, error
        assert "has not reached it; it is blocked in collective #" in error, error
        assert "an order swap across process groups" in error, error


ANOTHER_PATH = (
    HEAD
    + """
try:
    for i in range(2000):
        if i == 5 and rank == 1:
            diverged_at = time.monotonic()
            dist.barrier()  # rank 1 takes another path: a barrier where rank 0 reduces
        else:
            if i == 5:
                diverged_at = time.monotonic()
            dist.all_reduce(t)  # the usual step
        time.sleep(0.02)
    print("no error", flush=True)
except DistributedOperationException as error:
    report(error, i)
"""
)


def test_one_rank_taking_another_path_is_named_on_every_rank(tmp_path):
    results = run_ranks(ANOTHER_PATH, tmp_path, nprocs=2, timeout=150)
    for result in results:
        assert "no error" not in result.stdout, result.output
        error = outcome(result)
        assert error.startswith("The ranks diverged at collective #6 of the world group"), error
        assert (
            "Operations:\n  - Process 0: `torch.distributed.all_reduce`\n  - Process 1: `torch.distributed.barrier`"
            in error
        ), error


SIZE_MISMATCH = (
    HEAD
    + """
try:
    for i in range(2000):
        if i == 5:
            diverged_at = time.monotonic()
        grads = torch.ones(9 if (rank == 1 and i >= 5) else 8)  # rank 1's batch grows: gloo would block
        dist.all_reduce(grads)  # the step
        time.sleep(0.02)
    print("no error", flush=True)
except DistributedOperationException as error:
    report(error, i)
"""
)


def test_a_size_mismatch_on_one_rank_is_named_on_every_rank_with_the_reductions_fix(tmp_path):
    results = run_ranks(SIZE_MISMATCH, tmp_path, nprocs=2, timeout=150)
    line = line_of(SIZE_MISMATCH, "# the step")
    for result in results:
        assert "no error" not in result.stdout, result.output
        error = outcome(result)
        assert "Cannot apply desired operation due to shape mismatches" in error, error
        assert "Input shapes:\n  - Process 0: [8]\n  - Process 1: [9]" in error, error
        assert re.search(rf"Process 0: \S+:{line} in <module>", error), error
        # the fix fits a reduction: the same shape on every rank, not gather's padding
        assert "every rank must pass the same shape" in error
        assert "gather_object" not in error and "pad_across_processes" not in error


MISSING_AT_A_REPEAT = """
import time, torch, torch.distributed as dist
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException

debug.enable()
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(8)
for i in range(20):
    if i == 10 and rank == 1:
        time.sleep(120)  # stuck loading data at its 11th step
    dist.all_reduce(t)  # the step, made before: no check-in, only the fingerprint
print("finished", flush=True)
"""


def test_a_rank_missing_at_a_repeated_collective_is_named_with_its_stack_at_the_timeout(tmp_path):
    results = run_ranks(
        MISSING_AT_A_REPEAT,
        tmp_path,
        nprocs=2,
        env={"TORCHDOCTOR_DEBUG_TIMEOUT": "6"},
        wait_for=[0],
        timeout=150,
    )
    err = results[0].stderr
    assert results[0].returncode == 1, results[0].output
    assert re.search(
        r"torchdoctor: waited \d+ s of 6 for rank 1 at collective #11 `torch.distributed.all_reduce` "
        r"\(1 of 2 waiting; this is rank 0 at \S+\.py:\d+ in <module>; TORCHDOCTOR_DEBUG_TIMEOUT=6\)",
        err,
    ), err
    assert "DistributedOperationException: Process 1 did not reach collective #11 within 6 s" in err, err
    assert "  - Process 1: last seen at collective #10 `torch.distributed.all_reduce` at " in err
    assert "time.sleep(120)  # stuck loading data at its 11th step" in err
    assert "this rank is blocked inside collective #11 of the world group, which nothing" in err
    assert results[1].returncode is None  # still asleep: killed by the runner


def test_first_difference_finds_the_first_differing_call_or_the_swap():
    from torchdoctor.distributed import fingerprint

    a, b = {"operation": "all_reduce", "site": "t.py:1"}, {"operation": "all_reduce", "site": "t.py:2"}
    entries = {"a": a, "b": b}
    same = {"from": 0, "digests": ["a", "b", "a"], "pending": None, "entries": entries}
    other = {"from": 0, "digests": ["a", "b", "b"], "pending": None, "entries": entries}
    assert fingerprint.first_difference({0: same, 1: dict(same)}, {}) is None
    assert fingerprint.first_difference({0: same, 1: other}, {}) == (3, {0: a, 1: b})
    # one rank checking in with another call where the other made its third
    pending = {"from": 0, "digests": ["a", "b"], "pending": "b", "entries": entries}
    assert fingerprint.first_difference({0: same, 1: pending}, {}) == (3, {0: a, 1: b})
    # a rank behind is only slow, unless it is blocked elsewhere (an order swap)
    behind = {"from": 0, "digests": ["a", "b"], "pending": None, "entries": entries}
    assert fingerprint.first_difference({0: same, 1: behind}, {1: None}) is None
    assert fingerprint.first_difference({0: same, 1: behind}, {1: ["0-1@1", 7]}) == (3, {0: a, 1: None})
