"""The consoles of a `torchdoctor launch` on two nodes that never met, handed to `explain`. Each node's launch
ends with a line of its own: the node whose check before the start failed (a rendezvous host in no /etc/hosts of
that node) prints ``torchdoctor: error: SUMMARY; FIX``; the node that waited names the node ranks that never came;
a node that could not reach the rendezvous says so. `explain` said "no known failure recognised" on the first, and
on the others only torch's "1/2 clients joined" (who never came, and why, was left to guess). Recorded from two
network-namespace hosts (tests/namespace_hosts.py; root), the jobs in `RECORDED_RUNS`."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from explaining import explained
from recorded import recorded

PORT = 29439


def _script(folder: Path) -> Path:
    script = folder / "train.py"
    script.write_text("import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    return script


def _launch(host, node_rank: int, master: str, script: Path) -> list[str]:
    return [
        *("-m", "torchdoctor", "launch", "--nnodes", "2", "--nproc-per-node", "1"),
        *("--node-rank", str(node_rank), "--master-addr", master, "--master-port", str(PORT)),
        *("--watchdog", "6", str(script)),
    ]


def run_unresolved(node: int, folder: Path) -> str:
    """Both nodes, the master's name missing from node rank 1's /etc/hosts; node ``node``'s console."""
    from namespace_hosts import finish, start, two_hosts

    script = _script(folder)
    with two_hosts("u9x") as (a, b):
        b.hosts_file.write_text(f"127.0.0.1 localhost\n{b.address} {b.name}\n")
        started = [start(h, *_launch(h, rank, a.name, script)) for rank, h in enumerate((a, b))]
        results = finish(started)
    _, out, err = results[node]
    return out + err


def run_dropped(folder: Path) -> str:
    """Both nodes, node rank 1's packets to the rendezvous port dropped; node rank 1's console."""
    from namespace_hosts import drop_port, finish, start, two_hosts

    script = _script(folder)
    with two_hosts("u9y") as (a, b):
        drop_port(b, PORT)
        started = [start(h, *_launch(h, rank, a.name, script)) for rank, h in enumerate((a, b))]
        results = finish(started)
    _, out, err = results[1]
    return out + err


RECORDED_RUNS = {
    "u9_unresolved_master_node0": partial(run_unresolved, 0),
    "u9_unresolved_master_node1": partial(run_unresolved, 1),
    "u9_port_dropped_node1": run_dropped,
}


def test_the_node_whose_check_refused_the_master_name_is_read_with_the_checks_fix():
    found = explained(recorded("u9_unresolved_master_node1"))
    assert found.id == "log.torchdoctor_refused", found.summary
    assert "torchdoctor refused to start the run on this node: rendezvous host 'u9xhost-" in found.summary
    assert "' does not resolve (" in found.summary
    assert "`getent hosts u9xhost-" in found.fix and "to /etc/hosts on every node" in found.fix
    assert "the other nodes wait at the rendezvous for this one" in found.fix


def test_the_node_that_waited_names_the_node_rank_that_never_came_and_where_to_look():
    found = explained(recorded("u9_unresolved_master_node0"))
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "node rank 0 of 2 waited " in found.summary
    assert " for node rank 1, which never came (torchdoctor launch's count)" in found.summary
    assert found.fix.startswith(
        "The console of node rank 1 says why: a check before the start that failed there"
    )


def test_the_node_that_could_not_reach_the_rendezvous_is_not_told_the_other_node_never_came():
    found = explained(recorded("u9_port_dropped_node1"))
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "node rank 1 of 2 could not reach the rendezvous at u9yhost-" in found.summary
    assert (
        "no answer from u9yhost-" in found.summary
        and "when torchdoctor launch tried it again" in found.summary
    )
    assert "never came" not in found.summary
    assert found.fix.startswith("From this node: nc -vz u9yhost-")
    assert "every port between the nodes" in found.fix


def test_a_refusal_of_bad_input_is_said_with_its_own_words():
    found = explained(
        "torchdoctor: error: --standalone runs one node alone, and --nnodes is 2: drop --standalone and give every "
        "node --rdzv-endpoint HOST:PORT (or --master-addr/--master-port)\n"
    )
    assert found.id == "log.torchdoctor_refused", found.summary
    assert found.summary.endswith("--standalone runs one node alone, and --nnodes is 2: drop --standalone and give "
                                  "every node --rdzv-endpoint HOST:PORT (or --master-addr/--master-port)")  # fmt: skip
    assert found.fix == "Change what the line names and start the command again."


def test_a_refusal_of_a_commands_input_is_not_said_as_a_node_that_holds_up_the_others():
    # check's answer to `--only sys.nope`, as it prints it: no rendezvous, no node waits for it
    found = explained(
        "torchdoctor: error: --only sys.nope: no such check; choose from sys.python, sys.torch, net.smoke\n"
    )
    assert found.id == "log.torchdoctor_refused", found.summary
    assert found.summary.endswith(
        "torchdoctor refused its input: --only sys.nope: no such check; choose from sys.python, sys.torch, net.smoke"
    ), found.summary
    assert "rendezvous" not in found.fix and "node" not in found.fix, found.fix
