"""A rank whose environment runs another torch than the others (one node's venv left behind). Before, only
rank 0's versions were read and printed, so `net` passed saying nothing. The difference is planted with
tests/net_faults.py (``other_torch``: the rank reports an older torch as it joins); two forked gloo ranks."""

import os

from net_faults import FAULTS_VARIABLE

from torchdoctor.net.spawn import fork_ranks, free_port
from torchdoctor.net.verdicts import verdicts
from torchdoctor.net.worker import WorkerOptions


def test_a_rank_on_another_torch_is_named_beside_the_others_version():
    import torch

    env = {**os.environ, FAULTS_VARIABLE: "1:other_torch"}
    result = fork_ranks(
        2, WorkerOptions(timeout=30), ("127.0.0.1", free_port()), 60, environ=env, worker="net_faults"
    )
    found = {f.id: f for f in verdicts(result.states, result.world_size, 30, exits=result.exits)}
    assert found["net.smoke"].status == "ok"
    versions = found["net.versions"]
    assert versions.status == "warn"
    assert f"the ranks run different torch versions: torch {torch.__version__} on rank 0" in versions.summary
    assert "torch 2.4.1+cu121 on rank 1" in versions.summary
    assert f"Install torch {torch.__version__} on" in versions.fix


def test_ranks_on_one_torch_get_no_version_finding():
    result = fork_ranks(
        2, WorkerOptions(timeout=30), ("127.0.0.1", free_port()), 60, environ=dict(os.environ)
    )
    assert [f.id for f in verdicts(result.states, result.world_size, 30, exits=result.exits)] == ["net.smoke"]
