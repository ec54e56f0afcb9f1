"""What a multi-node launch prints when the scheduler or the remote launcher fails it (catalog/schedulers.tsv):
Slurm's refusals, waiting steps, layouts and cancellations, srun's MPI plugin, MPI's network, ssh and pdsh.

Each line is the source's template with realistic values, as a user's log holds it; each class has a near-miss
(the same words in a healthy or unrelated line) that must not be named as it.
"""

from __future__ import annotations

import pytest
from explaining import explained
from explaining import filled as template

pytestmark = pytest.mark.usefixtures("every_message_seen")

OMPI_RULE = "--------------------------------------------------------------------------\n"


def sure(found) -> str:
    return found.details.get("confidence", "certain")


@pytest.mark.parametrize(
    ("log", "kind", "fix_word"),
    [
        (
            "sbatch: error: Batch job submission failed: "
            + template("schedulers:slurm-invalid-account")
            + "\n",
            "slurm_request",
            "--account=",
        ),
        (
            "srun: error: Unable to allocate resources: "
            + template("schedulers:slurm-invalid-partition")
            + "\n",
            "slurm_request",
            "--partition=",
        ),
        (
            "sbatch: error: Batch job submission failed: "
            + template("schedulers:slurm-accounting-policy")
            + "\n",
            "slurm_request",
            "sacctmgr",
        ),
        (
            "salloc: error: Job submit/allocate failed: "
            + template("schedulers:slurm-invalid-time-limit")
            + "\n",
            "slurm_request",
            "--time=",
        ),
        (
            "srun: error: Unable to allocate resources: "
            + template("schedulers:slurm-invalid-gres-type")
            + "\n",
            "slurm_request",
            "--gres=gpu:",
        ),
        (
            "sbatch: error: Batch job submission failed: "
            + template("schedulers:slurm-invalid-node-count")
            + "\n",
            "slurm_request",
            "--ntasks-per-node",
        ),
        (
            "srun: error: Unable to allocate resources: "
            + template("schedulers:slurm-required-node-not-available")
            + "\n",
            "slurm_request",
            "--exclude=",
        ),
        (
            template("schedulers:slurm-mem-options-env", "srun") + "\n",
            "slurm_request",
            "unset SLURM_MEM_PER_CPU",
        ),
        (template("schedulers:slurm-mem-options-cli", "sbatch") + "\n", "slurm_request", "--mem-per-gpu"),
        (
            template("schedulers:srun-step-creation-disabled", "4182735", "Requested nodes are busy") + "\n",
            "slurm_step_busy",
            "--overlap",
        ),
        (
            template("schedulers:slurmstepd-preemption", "JOB 4182735", "gpu-node-017", "2024-03-11T02:14:09")
            + "\n",
            "scheduler_cancelled",
            "--requeue",
        ),
        (
            template(
                "schedulers:slurmstepd-node-failure", "STEP 4182735.0", "gpu-node-017", "2024-03-11T02:14:09"
            )
            + "\n",
            "scheduler_cancelled",
            "--exclude=",
        ),
        (
            OMPI_RULE + template("schedulers:ompi-direct-launch-no-pmi") + "\n" + OMPI_RULE,
            "srun_mpi_plugin",
            "--mpi=pmix",
        ),
        (
            template("schedulers:srun-mpi-plugin-load", "pmix_v3", "Plugin init() callback failed") + "\n",
            "srun_mpi_plugin",
            "--mpi=list",
        ),
        (
            OMPI_RULE
            + template("schedulers:ompi-unreachable-proc")
            + "\n\n  Process 1 ([[41211,1],0]) is on host: node1\n  Process 2 ([[41211,1],9]) is on host: node2\n"
            "  BTLs attempted: self\n\nYour MPI job is now going to abort; sorry.\n" + OMPI_RULE,
            "mpi_network",
            "btl_tcp_if_include",
        ),
        (
            OMPI_RULE
            + template("schedulers:ompi-btl-tcp-connect-fail")
            + "\n\n  Local host: node1\n  PID:        28331\n  Message:    connect() to 172.17.0.1:1024 failed\n"
            "  Error:      Connection refused (111)\n" + OMPI_RULE,
            "mpi_network",
            "btl_tcp_if_include",
        ),
        (
            OMPI_RULE + template("schedulers:ompi-oob-no-included-found", "ib0") + "\n\nPlease revise the "
            "specification and try again.\n" + OMPI_RULE,
            "mpi_network",
            "10.0.0.0/24",
        ),
        (
            template(
                "schedulers:hydra-sock-connect",
                "mpiexec@node1",
                "utils/sock/sock.c:145",
                "node1",
                "node2",
                "Connection refused",
            )
            + "\n",
            "mpi_network",
            "-iface",
        ),
        (
            template("schedulers:ssh-connect-to-host", "10.0.0.12", "22", "Connection timed out") + "\n",
            "ssh_connect",
            "firewall",
        ),
        (
            template("schedulers:ssh-could-not-resolve-hostname", "worker-3", "Name or service not known")
            + "\n",
            "ssh_connect",
            "getent hosts",
        ),
        (
            template("schedulers:pdsh-gethostbyname", "node1", "worker-3") + "\n",
            "ssh_connect",
            "getent hosts",
        ),
        (
            "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
            + template("schedulers:ssh-remote-host-identification-changed")
            + "\n@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n",
            "ssh_connect",
            "ssh-keygen -R",
        ),
        # PRRTE, the runtime of Open MPI 5.x's mpirun: ORTE's texts with its own name (its failed daemon launch,
        # which lists several causes, is likely: test_explain_certainty_review_3.py)
        (
            OMPI_RULE
            + template("schedulers:prte-not-enough-cpus")
            + "\n\n  app:  python\n  Number of procs: 16\n",
            "launch_command",
            "slots=8",
        ),
        # Kubeflow's PyTorchJob webhook, as kubectl apply prints its refusal
        (
            'The PyTorchJob "bert-ddp" is invalid: '
            + template("schedulers:pytorchjob-master-replicas")
            + "\n",
            "job_spec",
            "Master.replicas: 1",
        ),
        (
            'The PyTorchJob "bert-ddp" is invalid: '
            + template("schedulers:pytorchjob-container-name", "Worker")
            + "\n",
            "job_spec",
            "name: pytorch",
        ),
        (
            'The PyTorchJob "bert-ddp" is invalid: '
            + template("schedulers:pytorchjob-nproc-per-node")
            + "\n",
            "job_spec",
            "spec.nprocPerNode",
        ),
        # torchx's dist.ddp component
        (
            "ValueError: " + template("schedulers:torchx-dist-j-format", "2*8") + "\n",
            "job_spec",
            "-j <nodes>x",
        ),
        (
            "ValueError: " + template("schedulers:torchx-dist-script-or-m") + "\n",
            "job_spec",
            "--script train.py",
        ),
    ],
)
def test_a_launch_failure_the_scheduler_or_launcher_reports_is_named_with_its_fix(log, kind, fix_word):
    found = explained(log)
    assert found.id == f"log.{kind}", (found.id, found.summary)
    assert sure(found) == "certain"
    assert fix_word in found.fix


def test_ssh_failing_under_pdsh_names_both_readings_of_the_launch():
    found = explained(
        template("schedulers:ssh-connect-to-host", "10.0.0.12", "22", "Connection refused")
        + "\npdsh@node1: 10.0.0.12: ssh exited with exit code 255\n"
    )
    assert found.id == "log.ssh_connect" and "sshd" in found.fix
    assert "log.launch_command" in found.details.get("alternatives", [])


@pytest.mark.parametrize(
    "ident", ["schedulers:ompi-node-died", "schedulers:ompi-failed-daemon", "schedulers:prte-failed-daemon"]
)
def test_a_lost_mpi_daemon_is_only_likely_and_names_a_node_that_went_down(ident):
    found = explained(OMPI_RULE + template(ident) + "\n" + OMPI_RULE)
    assert found.id == "log.mpi_network" and sure(found) == "likely"
    assert "log.worker_killed" in found.details["alternatives"]


def test_slurm_changing_the_layout_is_a_likely_finding_only_when_nothing_else_is():
    warning = template("schedulers:srun-cant-run-processes", "16", "1", "1") + "\n"
    found = explained(warning)
    assert found.id == "log.slurm_layout" and sure(found) == "likely"
    assert "--ntasks-per-node" in found.fix
    other = explained(
        warning + template("schedulers:slurmstepd-preemption", "JOB 77", "gn3", "2024-03-11T02:14:09")
    )
    assert other.id == "log.scheduler_cancelled"


@pytest.mark.parametrize(
    ("log", "kind"),
    [
        # scancel, a time limit: not the scheduler's preemption or a node failure
        (
            "slurmstepd: error: *** JOB 4182735 ON gpu-node-017 CANCELLED AT 2024-03-11T02:14:09 ***\n",
            "scheduler_cancelled",
        ),
        # the same prefix with a reason that is not a refused request
        (
            "srun: error: Unable to allocate resources: Socket timed out on send/recv operation\n",
            "slurm_request",
        ),
        # a step that waited and then ran: verbose, not the retry
        ("srun: Step completed in JobId=4182735, retrying\n", "slurm_step_busy"),
        # git over ssh in a pip install: the git host, not a node of the job
        ("ssh: connect to host github.com port 22: Connection timed out\n", "ssh_connect"),
        ("ssh: Could not resolve hostname gitlab.com: Temporary failure in name resolution\n", "ssh_connect"),
        # srun's other plugins (gres, switch) failing to load are not its MPI plugin
        (
            "srun: error: Couldn't load specified plugin name for gres/gpu: Plugin init() callback failed\n",
            "srun_mpi_plugin",
        ),
        # an MPI job that reached its peers and ran
        ("[node1:28331] mca: bml: Using tcp btl for send to [[41211,1],9] on node node2\n", "mpi_network"),
    ],
)
def test_a_near_miss_is_not_named_as_the_launch_failure(log, kind):
    assert explained(log).id != f"log.{kind}"


def test_a_script_whose_interpreter_the_node_lacks_is_a_broken_install():
    found = explained(
        template(
            "schedulers:slurmstepd-execve-bad-interpreter", "/home/u/venv/bin/python3.10", "No such file"
        )
        + "\nsrun: error: gpu-node-017: task 0: Exited with exit code 2\n"
    )
    assert found.id == "log.broken_install" and sure(found) == "certain"
    assert "/home/u/venv/bin/python3.10" in found.summary and "Activate the environment" in found.fix
    # the bare execve line with a launcher that is installed, run as a script: not this
    assert explained("slurmstepd: error: execve(): train.sh: Permission denied\n").id != "log.broken_install"


def test_open_mpi_5_losing_a_daemon_is_read_as_open_mpi_4_is():
    found = explained(
        OMPI_RULE
        + template("schedulers:prte-node-died")
        + "\n\n  HNP daemon   : [prterun-node1-2231@0,0] on node node1\n"
    )
    assert found.id == "log.mpi_network" and sure(found) == "likely"


@pytest.mark.parametrize(
    "log",
    [
        # a healthy torchx submission and a valid PyTorchJob's replica count
        "torchx run -s kubernetes dist.ddp -j 2x8 --script train.py\n",
        "spec.pytorchReplicaSpecs[Worker].replicas: 3\n",
    ],
)
def test_a_job_description_that_was_accepted_is_not_named_refused(log):
    assert explained(log).id != "log.job_spec"


@pytest.mark.parametrize("ident", ["schedulers:ompi-version-mismatch", "schedulers:prte-version-mismatch"])
def test_mpi_of_two_releases_on_two_hosts_is_named(ident):
    found = explained(
        OMPI_RULE
        + template(ident)
        + "\nversion of Open MPI on on node, but your default path on one of the\n"
        "other nodes upon which you launched found a different version of Open MPI.\n\n"
        "  Local host:        node1\n  Local version:     4.1.5\n  Peer host:         node2\n"
        "  Peer version:      4.0.3\n" + OMPI_RULE
    )
    assert found.id == "log.mpi_implementation" and sure(found) == "certain"
    assert "--prefix" in found.fix and "same Open MPI" in found.fix


@pytest.mark.parametrize(
    ("log", "program"),
    [
        (
            OMPI_RULE
            + template("schedulers:ompi-exe-not-found", "mpirun")
            + "  This error was first reported for "
            "process\nrank 0; it may have occurred for other processes as well.\n\nNOTE: A common cause for this "
            "error is misspelling a mpirun command\n      line parameter option (remember that mpirun interprets "
            "the first\n      unrecognized command line token as the executable).\n\nNode:       node2\n"
            "Executable: /home/u/venv/bin/python\n" + OMPI_RULE,
            "/home/u/venv/bin/python",
        ),
        (
            template(
                "schedulers:hydra-execvp-error",
                "0:1",
                "node2",
                "lib/utils/launch.c:73",
                "train.py",
                "Permission denied",
            )
            + "\n",
            "train.py",
        ),
    ],
)
def test_a_program_mpirun_cannot_start_on_a_host_is_named(log, program):
    found = explained(log)
    assert found.id == "log.mpi_program_not_found" and sure(found) == "certain"
    assert program in found.summary and "python train.py" in found.fix


def test_a_program_that_mpirun_started_is_not_named_missing():
    assert explained("Executable: /home/u/venv/bin/python\n").id != "log.mpi_program_not_found"


@pytest.mark.parametrize(
    "line",
    [
        # slurmstepd's accounting killing a step over its --mem (20.11+: "StepId=", before: "Step 4182735.0")
        template(
            "schedulers:slurmstepd-exceeded-memory-limit", "StepId=4182735.0", "68719476736", "64424509440"
        ),
        template(
            "schedulers:slurmstepd-exceeded-virtual-memory-limit",
            "Step 4182735.0",
            "70368744177",
            "64424509440",
        ),
    ],
)
def test_slurm_killing_a_step_over_its_memory_is_a_killed_worker(line):
    found = explained(line + "\nsrun: error: gpu-node-017: task 0: Killed\n")
    assert found.id == "log.worker_killed" and sure(found) == "certain"
    assert "MaxRSS" in found.fix
    # the words without the sizes Slurm prints: not its report
    assert explained("note: the job exceeded memory limit (see the docs)\n").id != "log.worker_killed"


@pytest.mark.parametrize(
    "line",
    [
        template("schedulers:remote-orted-not-found"),
        template("schedulers:remote-prted-not-found"),
        "zsh:1: command not found: orted",  # zsh's order of the same words
        "sh: 1: orted: not found",  # dash, /bin/sh on Debian and Ubuntu
    ],
)
def test_mpiruns_daemon_missing_on_another_hosts_path_is_named(line):
    found = explained(line + "\n")
    assert found.id == "log.mpi_remote_path" and sure(found) == "certain"
    assert "--prefix" in found.fix and "which " in found.fix


def test_the_missing_daemon_leads_open_mpis_report_that_followed_it():
    found = explained(
        "bash: orted: command not found\n"
        + OMPI_RULE
        + "ORTE was unable to reliably start one or more daemons.\n"
        "This usually is caused by:\n" + OMPI_RULE
    )
    # the report lists several causes (a likely launch_command alone); the missing daemon is the one here
    assert found.id == "log.mpi_remote_path" and sure(found) == "certain"


def test_a_launcher_missing_on_this_host_is_not_mpiruns_remote_daemon():
    assert explained("bash: torchrun: command not found\n").id == "log.broken_install"
    assert explained("orted_comm.c: reported 3 daemons\n").id != "log.mpi_remote_path"
