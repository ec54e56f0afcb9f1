"""What `torchdoctor net`'s status line says it waits for (session 40, tried as a user): over two hosts, before the
other host came, it listed four ranks "starting" one by one, though no rank starts before every host reaches the
rendezvous; now it names the rendezvous it waits at, and ranks at one stage are one group."""

import time

from test_status_line import Terminal

from torchdoctor import status_line as module
from torchdoctor.net.rank_state import RankState
from torchdoctor.net.status import Status


def _said(monkeypatch, states, world_size, rendezvous=None) -> str:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with Status() as status:
        status.ranks(states, world_size, 30, rendezvous)
        time.sleep(2 * module.EVERY)
    return "".join(terminal.written)


def _state(rank: int, stage: str) -> RankState:
    return RankState(
        rank=rank, world_size=8, local_rank=rank % 4, host="vm", launcher="torchrun", stage=stage
    )


def test_over_hosts_before_any_rank_it_waits_at_the_rendezvous(monkeypatch):
    shown = _said(monkeypatch, {}, 4, rendezvous="node01:29400")
    assert "waiting at the rendezvous node01:29400 for every host to join, at most 30s" in shown
    assert "rank 0 (starting)" not in shown


def test_ranks_at_one_stage_are_one_group(monkeypatch):
    states = {r: _state(r, "joined") for r in range(4)} | {5: _state(5, "init")}
    shown = _said(monkeypatch, states, 8, rendezvous="node01:29400")
    assert (
        "waiting for ranks 0-3 (joined), ranks 4, 6, 7 (starting), rank 5 (init), at most 30s a stage"
        in shown
    )
