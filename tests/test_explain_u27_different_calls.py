"""Lightning's bug_report_model.py on 2 CPU ranks with `trainer.save_checkpoint(...)` under `if trainer.global_rank
== 0:`, run under `torchdoctor launch --watchdog 20`: the job failed and launch's verdict said the ranks entered
collective #25 with different operations (rank 0 in save_checkpoint's barrier, rank 1 in trainer.test's broadcast)
and the line's condition on the rank; explain read only torchrun's summary ('the cause is not in this log'). The
lines as launch printed them."""

import pytest
from explaining import explained

# the end of that console: torchrun's summary, then launch's failed-job report (src/torchdoctor/hang/supervise.py)
FAILED_JOB = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
=====================================================
bug_report_model.py FAILED
-----------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-30_17:18:00
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -39 (pid: 13869)
  error_file: <N/A>
  traceback : Signal 39 (<N/A>) received by PID 13869
=====================================================

torchdoctor: failed: process group 0: collective #25 has different operations on different ranks: rank 0: barrier #25 (bug_report_model.py:64 in run); rank 1: broadcast_object_list #25 (bug_report_model.py:65 in run).
bug_report_model.py:64 sits under a condition on the rank, line 63: `if trainer.global_rank == 0:  # planted: save once, on rank 0`: rank 0 took another path there; every rank must make the same collective calls.
The job failed on it; rank 1 failed as its consequence.
Culprit: rank(s) 0 at bug_report_model.py:63.
What each rank left: /tmp/torchdoctor-watchdog-77qufc8o/rank*; the verdict as JSON: /tmp/torchdoctor-watchdog-77qufc8o/verdict.json.
"""


def test_launch_verdict_of_different_collectives_leads_with_each_rank_call_and_the_condition():
    found = explained(FAILED_JOB)
    assert found.id == "log.ranks_different_collectives", found.summary
    assert "collective #25 with different operations: rank 0: barrier #25" in found.summary, found.summary
    assert "bug_report_model.py:63" in found.summary
    assert "`if trainer.global_rank == 0:" in found.fix and "out of that condition" in found.fix, found.fix


@pytest.mark.parametrize(
    "log",
    [
        # near misses: the watchdog's hang report names the same mismatch without "torchdoctor: failed: "
        "torchdoctor: hang: no progress for 20s. Where every rank is:\n"
        "process group 0 (default_pg): collective #2 has different operations on different ranks: rank 0: "
        "scatter #2 [2, 16] Float (tp.py:96 in <module>); rank 1: broadcast #2 [32] Float (tp.py:96 in <module>).\n",
        # a person's sentence about it
        "I think collective #3 has different sizes on different ranks: rank 0 pads, rank 1 does not.\n",
    ],
)
def test_other_mismatch_lines_are_not_launch_failed_verdict(log):
    assert explained(log).id != "log.ranks_different_collectives"
