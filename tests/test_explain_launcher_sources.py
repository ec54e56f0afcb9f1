"""Launcher messages read from the sources that print them (docs/catalog.md), which explain left unread: torchrun's
agent stopped by a signal while it waited at the exit barrier (agent/server/api.py's "Got termination signal"), the
deepspeed launcher's mvapich and mpich backends refusing the MPI they found (launcher/multinode_runner.py,
launcher/launcher_helper.py), and Open MPI's errmgr line on a process that returned non-zero. Each is a catalog
template filled the way its source fills it, as a logger or a traceback prints it."""

from __future__ import annotations

import pytest
from explaining import explained, filled

AGENT = "WARNING:torch.distributed.elastic.agent.server.api:"


@pytest.mark.parametrize(
    ("sigval", "kind"),
    [
        # Python 3.11+ prints an IntEnum as its number, older ones as Signals.NAME
        ("15", "launcher_stopped"),
        ("Signals.SIGTERM", "launcher_stopped"),
        ("2", "launcher_stopped"),
        ("Signals.SIGHUP", "terminal_hangup"),
        ("1", "terminal_hangup"),
    ],
)
def test_a_signal_at_the_exit_barrier_is_the_launcher_stopped_from_outside(sigval, kind):
    found = explained(AGENT + filled("torch:got-termination-signal", sigval) + "\n")
    assert found.id == f"log.{kind}", found.summary
    assert found.details["confidence"] == "likely", found.summary


def test_a_stopped_launcher_names_the_signal_it_got():
    found = explained(AGENT + filled("torch:got-termination-signal", "2") + "\n")
    assert "SIGINT" in found.summary, found.summary


def test_mvapich_without_the_gdr_build_is_the_launch_command_and_names_gdr():
    line = filled("deepspeed:expected-mvapich2-gdr-as-return-for", "MVAPICH2 2.3.7")
    found = explained(
        f"UserWarning: {line}\n  warnings.warn(\nRuntimeError: launcher 'mvapich' not installed.\n"
    )
    assert found.id == "log.launch_command", found.summary
    assert "not MVAPICH2-GDR" in found.summary, found.summary
    assert "--launcher openmpi" in found.fix, found.fix


def test_the_mpich_helper_without_ranks_is_the_rank_environment_and_names_the_mpi_variables():
    line = filled("deepspeed:rank-number-is-not-in-current")
    found = explained(f'  File "launcher_helper.py", line 75, in env_mapping\nOSError: {line}\n')
    assert found.id == "log.rank_env_missing", found.summary
    assert "PMI_RANK" in found.summary and "MPI_LOCALRANKID" in found.summary, found.summary
    assert "--launcher openmpi" in found.fix, found.fix
    # the helper ran under deepspeed's own mpirun: not a script run as a plain process
    assert "not_launched_distributed" not in str(found.details.get("alternatives")), found.details


@pytest.mark.parametrize(
    ("job", "end"),
    [
        ("Primary job ", "."),  # Open MPI 3.x-4.x: the primary job's id printed empty
        ("Primary job ", ".."),  # 1.x-2.x
        ("Child job 2", ".."),  # a job that MPI_Comm_spawn started
    ],
)
def test_open_mpis_errmgr_line_is_mpirun_saying_a_worker_failed(job, end):
    line = filled("schedulers:ompi-normal-termination-but", job, "", "1", "process").replace("\\n", "\n")
    found = explained(line.replace("exit code.", "exit code" + end, 1) + "\n")
    assert found.id == "log.child_failed", found.summary
    assert found.details["confidence"] == "likely", found.summary
    assert "mpirun: a worker failed" in found.summary, found.summary


def test_a_worker_that_aborted_before_open_mpis_errmgr_line_is_still_read_from_its_signal():
    line = filled("schedulers:ompi-normal-termination-but", "Primary job ", "", "1", "process").replace(
        "\\n", "\n"
    )
    found = explained(
        line
        + "\n"
        + filled("schedulers:ompi-proc-aborted-strsignal", "mpirun", "0", "0", "node1", "9", "Killed")
    )
    assert found.id == "log.worker_killed", found.summary


@pytest.mark.parametrize(
    ("remote", "python"),
    [
        ("bash: line 1: {}: No such file or directory", "/home/u/miniconda3/envs/ds/bin/python"),
        ("sh: 1: {}: not found", "/opt/venv/bin/python3"),  # dash as the remote shell
    ],
)
def test_a_host_without_the_launching_nodes_python_under_pdsh_is_a_broken_install(remote, python):
    line = filled("schedulers:pdsh-remote-python-not-found", "gpu1", "node2", "1", python)
    if not remote.startswith("bash"):
        line = f"pdsh@gpu1: node2: {remote.format(python)}"
    found = explained(line + "\npdsh@gpu1: node2: ssh exited with exit code 127\n")
    assert found.id == "log.broken_install", found.summary
    assert f"node2 has no {python}" in found.summary, found.summary
    assert "same path" in found.fix, found.fix


def test_a_remote_line_that_is_not_the_interpreter_is_not_read_as_one():
    found = explained("pdsh@gpu1: node2: bash: line 0: cd: /home/u/proj: No such file or directory\n")
    assert found.id != "log.broken_install", found.summary
