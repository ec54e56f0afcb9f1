"""One hang verdict for a job on two hosts: network namespaces joined by a veth pair (the fixture of the
multi-node `net` tests), `torchdoctor launch --watchdog` on each, one rank on the second host stuck.

One real job, over the c10d rendezvous, stands for both rendezvous backends: c10d gives out the node ranks
itself, so either host may end up hosting rank 0 and the test reads which one did; with the static
rendezvous it is always node rank 0's, a case of that. The launchers meet, at the hang, in the store torchrun
gives every worker (MASTER_ADDR/MASTER_PORT, whichever the backend), so the exchange is the same code for
both. Static multi-node launches run for real in test_launch.py and test_launch_stops.py (two nodes, a node
that never comes, a stop at the rendezvous). Each job here is 8 processes that import torch (~35 s of CPU).
"""

import re
import shutil
import textwrap
from pathlib import Path

from test_net_multinode import _finish, _start, two_hosts  # noqa: F401 - two_hosts is a fixture

PORT = 29411

SCRIPT = """
import time
import torch
import torch.distributed as dist


def save_checkpoint():
    time.sleep(120)  # a save that never ends


dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
for step in range(3):
    dist.all_reduce(x)
    if step == 1 and rank == 3:
        save_checkpoint()
"""


def test_the_node_hosting_rank_0_reports_for_the_whole_job(two_hosts, tmp_path):  # noqa: F811
    a, b = two_hosts
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    launch = ["-m", "torchdoctor", "launch", "--nnodes", "2", "--nproc-per-node", "2", "--watchdog", "5"]
    # c10d gives out the node ranks itself: either host may end up with rank 0
    launch += ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"{a.address}:{PORT}", "--rdzv-id", a.namespace]
    started = [_start(host, *launch, str(script)) for host in (a, b)]
    (code_a, _, err_a), (code_b, _, err_b) = _finish(started)
    kept = {Path(f) for f in re.findall(r"/\S*torchdoctor-watchdog-[\w]+", err_a + err_b)}
    try:
        check_the_job_report(a, b, script, code_a, err_a, code_b, err_b)
    finally:
        for folder in kept:
            shutil.rmtree(folder, ignore_errors=True)


def check_the_job_report(a, b, script, code_a, err_a, code_b, err_b):
    at = {
        t: script.read_text().splitlines().index(t) + 1
        for t in ("    dist.all_reduce(x)", "        save_checkpoint()")
    }
    assert (code_a, code_b) == (1, 1), (err_a, err_b)
    (report,) = [
        e[e.index("torchdoctor: hang:") :] for e in (err_a, err_b) if "Where every rank of the job" in e
    ]
    (local,) = [e[e.index("torchdoctor: hang:") :] for e in (err_a, err_b) if "This node's ranks" in e]
    second = a if "This node's ranks" in err_a else b  # the node without rank 0: ranks 2 and 3
    assert "Where every rank of the job (4 ranks on 2 nodes) is:" in report
    lines = report.splitlines()
    assert "ranks 0-2 (3 ranks on 2 hosts): waiting in torch.distributed.all_reduce" in lines
    assert any(
        line.startswith("rank 3 (pid ") and f", {second.name}): not in a collective" in line for line in lines
    )
    assert (
        f"rank 3 never entered all_reduce #3 [4] Float ({script}:{at['    dist.all_reduce(x)']} in <module>), "
        f"which ranks 0-2 entered: rank 3 is in save_checkpoint ({script}:" in report
    )
    assert f"called from {script}:{at['        save_checkpoint()']} in <module>" in report
    assert "`if step == 1 and rank == 3:`" in report
    folders = report.split("per node: ")[1].split(". The run was stopped")[0].split(", ")
    assert sorted(f.split(":")[0] for f in folders) == sorted([a.name, b.name])
    for folder in folders:  # each node's full stacks stay in its own log folder
        kept = Path(folder.split(":", 1)[1])
        assert any(kept.glob("rank*.stack")) and any(kept.glob("rank*.fr"))
    # the other node shows its own ranks and says where the verdict is, without a verdict of its own
    assert f"This node's ranks ({second.name}, node 1):" in local
    assert "The verdict for the whole job is in the report of the node that hosts rank 0." in local
    assert "never entered" not in local
