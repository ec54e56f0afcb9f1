"""What to try next follows the backend the ranks used: a gloo run is not told to read NCCL's log or to turn
NCCL's peer-to-peer or InfiniBand off (before, every failure without a known cause was, on gloo too)."""

from torchdoctor.net.rank_state import RankError, RankState, Stuck
from torchdoctor.net.verdicts import verdicts

NCCL_WORDS = ("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "--nccl-debug")


def _states(backend: str, **fields) -> dict[int, RankState]:
    states = {}
    for rank in (0, 1):
        state = RankState(rank, 2, rank, f"host{rank}", "none", stage="init", backend=backend)
        state.joined = {"0": "host0", "1": "host1"}
        for name, value in fields.items():
            setattr(state, name, value)
        states[rank] = state
    return states


def test_an_unknown_init_error_on_gloo_gets_gloo_advice_and_on_nccl_nccls():
    error = RankError("RuntimeError", "something new went wrong", "init")
    (gloo,) = verdicts(_states("gloo", error=error), 2, 30)
    assert gloo.id == "net.collective" and "GLOO_SOCKET_IFNAME" in gloo.fix
    assert not any(word in gloo.fix for word in NCCL_WORDS), gloo.fix
    (nccl,) = verdicts(_states("nccl", error=error), 2, 30)
    assert "NCCL_P2P_DISABLE" in nccl.fix


def test_a_stage_every_rank_waited_in_on_gloo_gets_gloo_advice():
    stuck = Stuck("all_reduce", 30, [], {}, {"0": "all_reduce", "1": "all_reduce"})
    error = RankError("Timeout", "all_reduce did not complete within 30s", "all_reduce")
    (found,) = verdicts(_states("gloo", stuck=stuck, error=error, stage="all_reduce"), 2, 30)
    assert found.id == "net.collective" and "--find-bad" in found.fix
    assert not any(word in found.fix for word in NCCL_WORDS), found.fix


def test_a_stall_every_rank_entered_across_hosts_names_an_mtu_that_differs_along_the_path():
    """Two namespace hosts at MTU 9000 with a 1500 hop between them (session 41, USER9): the rendezvous worked and
    the all_reduce never completed; the fix named the interface and firewalls only."""
    stuck = Stuck("all_reduce", 30, [], {}, {"0": "all_reduce", "1": "all_reduce"})
    error = RankError("Timeout", "all_reduce did not complete within 30s", "all_reduce")
    (found,) = verdicts(_states("gloo", stuck=stuck, error=error, stage="all_reduce"), 2, 30)
    assert "the MTU may differ along the path" in found.fix and "ping -M do -s 8972" in found.fix
    one_host = _states("gloo", stuck=stuck, error=error, stage="all_reduce", joined={"0": "vm", "1": "vm"})
    for state in one_host.values():
        state.host = "vm"
    (alone,) = verdicts(one_host, 2, 30)
    assert "MTU" not in alone.fix  # loopback: no path between hosts
