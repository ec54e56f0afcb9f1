"""Debug mode on a torch whose stores cannot be cloned (torch 2.4 and older: one store connection per process).

The ranks are real gloo processes on a real TCPStore; the script hides the store's ``clone`` as torch 2.4 does
(fault injection, here in the test): every wait of ours then shares the connection with the rank's own requests,
so it must be made of short ``check``s, not one blocking ``wait`` that would hold the check spotting a mismatch
until the debug-mode timeout ran out.
"""

import pytest
from rank_runner import run_ranks

WITHOUT_CLONE = """
import time, torch, torch.distributed as dist
import torchdoctor.distributed.debug as debug
from torchdoctor.distributed import DistributedOperationException


class WithoutClone:
    \"\"\"The job's store less `clone`, as torch 2.4's is.\"\"\"

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        if name == "clone":
            raise AttributeError("'torch._C._distributed_c10d.TCPStore' object has no attribute 'clone'")
        return getattr(self.inner, name)


job_store = dist.distributed_c10d._get_default_store
dist.distributed_c10d._get_default_store = lambda: WithoutClone(job_store())
debug.enable()
dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(2))
try:
    dist.all_reduce(torch.zeros(4 if rank == 0 else 5))
except DistributedOperationException as error:
    print("mismatch:", str(error).splitlines()[0], flush=True)
debug.enable(timeout=4)
if rank == 1:
    time.sleep(300)  # stuck in its data loader: rank 0 must still learn where it is
try:
    dist.barrier()
except DistributedOperationException as error:
    print("timeout:", error, flush=True)
"""


@pytest.mark.timeout(300)
def test_a_mismatch_is_named_and_a_stuck_rank_shown_without_a_second_store_connection(tmp_path):
    # The debug-mode timeout (400 s) is beyond the run's bound (240 s, import of torch on a loaded machine
    # included): a mismatch found only when the timeout ran out fails here.
    results = run_ranks(
        WITHOUT_CLONE,
        tmp_path,
        nprocs=2,
        env={"TORCHDOCTOR_DEBUG_TIMEOUT": "400"},
        wait_for=[0],
        timeout=240,
    )
    out = results[0].stdout
    assert out.startswith(
        "mismatch: Cannot apply desired operation due to shape mismatches. All shapes across devices must be "
        "valid.\n"
    ), results[0].output
    assert "timeout: Process 1 did not reach collective #3 within 4 s" in out, results[0].output
    # rank 1's stack, answered by its responder looking on the shared connection
    assert "where it is now (innermost call last):" in out, out
    assert out.rstrip().endswith(
        "time.sleep(300)  # stuck in its data loader: rank 0 must still learn where it is"
    )
    assert results[1].returncode is None  # asleep: killed by the runner
