"""TORCH_DISTRIBUTED_DEBUG=DETAIL on one host only (one node's environment differs). Under DETAIL
init_process_group wraps the process group in a checking wrapper with a gloo group of its own, which the other
ranks never set up: on two namespace hosts, DETAIL on the second, init stalled there while the first rank waited
in its all_reduce, and `net` said on one host "rank 1 never entered it ... a rank that skipped a collective" and
on the other "a link between them is too slow for this timeout, or stuck": neither named the variable. The ranks
now say it as they join and the verdict leads with it. Planted with tests/net_faults.py (``debug_detail``); two
forked gloo ranks."""

import os

from net_faults import FAULTS_VARIABLE

from torchdoctor.net.spawn import fork_ranks, free_port
from torchdoctor.net.verdicts import verdicts
from torchdoctor.net.worker import WorkerOptions


def test_detail_on_one_rank_only_is_named_as_the_cause_of_the_stall_at_init():
    env = {**os.environ, FAULTS_VARIABLE: "1:debug_detail"}
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    result = fork_ranks(
        2, WorkerOptions(timeout=6), ("127.0.0.1", free_port()), 60, environ=env, worker="net_faults"
    )
    found = verdicts(result.states, result.world_size, 6, exits=result.exits)
    assert found[0].id == "net.settings" and found[0].status == "fail", [f.summary for f in found]
    assert found[0].summary.startswith("TORCH_DISTRIBUTED_DEBUG is DETAIL on rank 1"), found[0].summary
    assert "and unset on rank 0" in found[0].summary
    assert "init waits for them until its timeout" in found[0].summary
    assert found[0].fix.startswith(
        "Set it alike on every host: unset it (`unset TORCH_DISTRIBUTED_DEBUG` on "
    )
    assert any(f.status == "fail" and f.id == "net.collective" for f in found[1:]), [f.id for f in found]
