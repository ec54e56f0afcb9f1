"""What Slurm, MPI and ssh report when a multi-node launch fails before torch runs.

Kinds of failure in a multi-node launch that the scheduler or the remote launcher reports, not torch: Slurm
refusing a request or a step, Slurm ending a job, srun's MPI plugin, MPI's processes that cannot reach each
other, ssh that cannot reach a host.

The message texts are Slurm's (``src/common/slurm_errno.c``, ``src/srun/launch.c``, ``src/srun/opt.c``,
``src/slurmd/slurmstepd/req.c``), Open MPI's help texts (``help-ess-base.txt``, ``help-mca-bml-r2.txt``,
``help-mpi-btl-tcp.txt``, ``help-oob-tcp.txt``, ``help-errmgr-base.txt``), MPICH Hydra's ``lib/utils/sock.c``,
pdsh's ``src/pdsh/dsh.c`` and OpenSSH's, as ``catalog/schedulers.tsv`` holds them.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# slurm_errno.c's reasons for refusing a job or step request, by what the user changes: (reason, class)
_REFUSALS = (
    ("Invalid account or account/partition combination specified", "account"),
    ("Job violates accounting/QOS policy", "account"),
    ("Invalid qos specification", "account"),
    ("User's group not permitted to use this partition", "account"),
    ("Invalid partition name specified", "partition"),
    ("Requested time limit is invalid (missing or exceeds some limit)", "partition"),
    ("Required partition not available (inactive or drain)", "partition"),
    ("Requested partition configuration not available now", "partition"),
    ("Node count specification invalid", "counts"),
    ("Task count specification invalid", "counts"),
    ("Requested nodes not in this partition", "nodes"),
    ("Required node not available (down, drained or reserved)", "nodes"),
    ("Invalid feature specification", "resources"),
    ("Invalid Trackable RESource (TRES) specification", "resources"),
    ("Invalid GRES specification (with and without type identification)", "resources"),
    ("Duplicate generic resource (gres) specification", "resources"),
    # slurm_opt.c: srun/sbatch/salloc's own check, before any request is sent
    ("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive", "memory"),
    ("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive", "memory"),
)
_REFUSAL_FIXES = {
    "account": "Submit with an account and QOS you belong to: sacctmgr show assoc user=$USER "
    "format=account,partition,qos lists them; pass #SBATCH --account=<account> (and --qos=<qos>) that may use "
    "the partition, and keep the job's size and --time within that QOS (sacctmgr show qos <qos> "
    "format=name,maxwall,maxtrespu).",
    "partition": "sinfo -s lists the partitions and whether they are up; scontrol show partition <name> shows "
    "its MaxTime. Set #SBATCH --partition=<one of them> and --time=HH:MM:SS within its limit (a --time is "
    "required where the partition has no default).",
    "counts": "--nodes, --ntasks and --ntasks-per-node must agree (ntasks = nodes x ntasks-per-node) and fit "
    "the partition (sinfo -p <partition> -o '%D %c %G'). For torchrun: one task per node (--ntasks-per-node=1) "
    "and torchrun --nproc_per_node=<GPUs per node>; for ranks started by srun itself: --ntasks-per-node=<GPUs "
    "per node>.",
    "nodes": "A node named in --nodelist/-w is not in the partition, or is down, drained or reserved (sinfo -R "
    "says why): leave it out (--exclude=<node>), or ask for a node count without -w.",
    "memory": "Ask for memory one way: --mem (per node), --mem-per-cpu or --mem-per-gpu, not two. An srun inside "
    "a job inherits the job's choice as SLURM_MEM_PER_NODE/CPU/GPU, and a site default can set another: pass "
    "srun its own --mem=<size> (an option on the command line overrides them), or unset SLURM_MEM_PER_CPU (the "
    "one the job did not ask for) in the job script before srun.",
    "resources": "Ask for GPUs in one form the cluster knows: --gres=gpu:<N> (or gpu:<type>:<N> with a type the "
    "nodes list: sinfo -o '%N %G'), not --gres and --gpus with different counts; a --constraint must name "
    "features the nodes have (sinfo -o '%N %f').",
}


def _slurm_request(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    reason = merged(hits).get("reason", "")
    kind = next((k for text, k in _REFUSALS if reason.startswith(text[:30])), "counts")
    return f"Slurm refused the job request: {reason}" + on_ranks(hits), _REFUSAL_FIXES[kind]


SLURM_REQUEST = Recogniser(
    kind="slurm_request",
    title="Slurm refused the job request (account, partition, counts, memory or resources)",
    anchors=tuple(text for text, _ in _REFUSALS),
    templates=(
        "schedulers:slurm-invalid-account",
        "schedulers:slurm-accounting-policy",
        "schedulers:slurm-invalid-qos",
        "schedulers:slurm-group-not-permitted",
        "schedulers:slurm-invalid-partition",
        "schedulers:slurm-invalid-time-limit",
        "schedulers:slurm-partition-not-available",
        "schedulers:slurm-partition-config-not-available-now",
        "schedulers:slurm-invalid-node-count",
        "schedulers:slurm-invalid-task-count",
        "schedulers:slurm-nodes-not-in-partition",
        "schedulers:slurm-required-node-not-available",
        "schedulers:slurm-invalid-feature",
        "schedulers:slurm-invalid-tres",
        "schedulers:slurm-invalid-gres-type",
        "schedulers:slurm-duplicate-gres",
        "schedulers:slurm-mem-options-cli",
        "schedulers:slurm-mem-options-env",
    ),
    match=R(r"(?P<reason>" + "|".join(re.escape(text) for text, _ in _REFUSALS) + r")[^\n]{0,80}"),
    describe=_slurm_request,
)


def _step_busy(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    reason = merged(hits).get("busy_reason")
    return (
        "srun waits for a job step: the resources it asks for are held by another step"
        + (f" ({reason})" if reason else "")
        + on_ranks(hits),
        "Since Slurm 20.11 a step gets its CPUs, memory and GPUs for itself: a second srun in the same job (one "
        "torchrun per node started while another srun still runs, a monitoring srun) waits for them, and so does "
        "a step that asks for more than the allocation has free (--mem, --gres). Start one srun for the whole "
        "job (srun --ntasks-per-node=<tasks> ...), let the steps share with srun --overlap, or give each step "
        "only its part (srun --exact --gres=gpu:<N> --mem=<M>).",
    )


SLURM_STEP_BUSY = Recogniser(
    kind="slurm_step_busy",
    title="srun waiting for resources another job step holds",
    anchors=("step creation temporarily disabled, retrying",),
    templates=("schedulers:srun-step-creation-disabled",),
    match=R(r"step creation temporarily disabled, retrying(?: \((?P<busy_reason>[^)\n]{1,100})\))?"),
    # srun (launch.c) prints "Step created for <step>" once the retry succeeds: then srun only waited, and
    # the step ran; the wait is no failure (reject it when the next lines say so; anywhere in the log, likely)
    reject=R(r"Step created for (?:StepId=|job )"),
    span=8,
    confirm=lambda hits, ctx: "slurm_step_created" not in ctx.facts,
    describe=_step_busy,
)


def _layout(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("procs"):
        what = f"{facts['procs']} tasks cannot go on {facts['nodes']} nodes; it set the nodes to {facts['set_nodes']}"
    else:
        what = f"--ntasks-per-node={facts.get('per_node', '?')} does not fit --ntasks={facts.get('tasks', '?')}; it ignored --ntasks-per-node"
    return (
        f"Slurm changed the task layout the job asked for: {what}" + on_ranks(hits),
        "ntasks must equal nodes x ntasks-per-node: ask #SBATCH --nodes=<N> --ntasks-per-node=<tasks per node> "
        "and leave out --ntasks (or set it to their product). The processes Slurm starts then match the world "
        "size the script and torchrun compute from the same numbers.",
    )


SLURM_LAYOUT = Recogniser(
    kind="slurm_layout",
    title="Slurm changed the requested task layout",
    anchors=("nodes, setting nnodes to", "can't honor --ntasks-per-node set to"),
    templates=("schedulers:srun-cant-run-processes", "schedulers:srun-cant-honor-ntasks-per-node"),
    match=R(
        r"can't run (?P<procs>\w{1,10}) processes on (?P<nodes>\w{1,10}) nodes, setting nnodes to (?P<set_nodes>\w{1,10})|"
        r"can't honor --ntasks-per-node set to (?P<per_node>\w{1,10}) which doesn't match the requested tasks "
        r"(?P<tasks>\w{1,10})"
    ),
    # a warning: the job still runs, with another layout. A finding only when nothing else is, never certain
    fallback=True,
    confirm=lambda hits, ctx: False,
    describe=_layout,
)

_CANCELLED_FIXES = {
    "PREEMPTION": "A job of higher priority took the nodes (the partition or QOS is preemptible). Resubmit "
    "with #SBATCH --requeue and resume from the last checkpoint (save one every N steps and on SIGTERM: "
    "#SBATCH --signal=B:TERM@120), or run in a partition/QOS that is not preempted (sacctmgr show qos).",
    "NODE FAILURE": "A node of the job went down (not the script's doing): resubmit leaving it out "
    "(#SBATCH --exclude=<node>; sinfo -R shows its reason), resume from the last checkpoint, and tell the "
    "cluster's admins.",
    "JOB REQUEUE": "The job was put back in the queue (scontrol requeue, or a node failure with --requeue): it "
    "starts again from the beginning unless the script resumes from its last checkpoint; make it do so.",
}


def _cancelled(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    why = facts.get("why", "PREEMPTION")
    where = f" on {facts['node']}" if facts.get("node") else ""
    return (
        f"Slurm ended {facts.get('entity', 'the job')}{where} due to {why.lower()}" + on_ranks(hits),
        _CANCELLED_FIXES[why],
    )


SCHEDULER_CANCELLED = Recogniser(
    kind="scheduler_cancelled",
    title="Slurm ended the job (preemption, node failure, requeue)",
    anchors=("DUE TO PREEMPTION", "DUE TO NODE FAILURE", "DUE TO JOB REQUEUE"),
    templates=(
        "schedulers:slurmstepd-preemption",
        "schedulers:slurmstepd-node-failure",
        "schedulers:slurmstepd-requeue",
    ),
    match=R(
        r"\*\*\* (?P<entity>[^\n*]{1,60}?) ON (?P<node>[^\s*]{1,255}) CANCELLED AT [^\n*]{1,40} "
        r"DUE TO (?P<why>PREEMPTION|NODE FAILURE|JOB REQUEUE)"
    ),
    describe=_cancelled,
)


def _mpi_plugin(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("ompi_direct"):
        summary = "Open MPI was started by srun directly but was built without Slurm's PMI support"
    elif facts.get("plugin"):
        summary = f"srun cannot load its MPI plugin mpi/{facts['plugin']}"
    else:
        summary = "srun was given an MPI plugin it does not have (--mpi)"
    return (
        summary + on_ranks(hits),
        "srun starts the ranks itself and hands them to MPI through a PMI plugin, which both Slurm and the MPI "
        "library must have been built with: srun --mpi=list lists Slurm's, ompi_info | grep -i pmix Open MPI's. "
        "Launch with one they share (srun --mpi=pmix, or --mpi=pmi2; slurm.conf's MpiDefault sets the default), "
        "or start the ranks with mpirun inside the allocation instead of srun. A torch job on NCCL or gloo needs "
        "no MPI: drop --mpi and start torchrun (one per node) or the script with srun.",
    )


SRUN_MPI_PLUGIN = Recogniser(
    kind="srun_mpi_plugin",
    title="srun's MPI plugin (PMI/PMIx) does not match the MPI library",
    anchors=(
        'direct launched using "srun"',
        "Couldn't load specified plugin name for mpi/",
        "Invalid MPI plugin name",
    ),
    templates=(
        "schedulers:ompi-direct-launch-no-pmi",
        "schedulers:ompi-direct-launch-no-slurm",
        "schedulers:srun-mpi-plugin-load",
        "schedulers:slurm-invalid-mpi-plugin",
    ),
    match=R(
        r'(?P<ompi_direct>direct launched using "srun")|'
        r"Couldn't load specified plugin name for mpi/(?P<plugin>[\w.-]{1,40})|Invalid MPI plugin name"
    ),
    describe=_mpi_plugin,
)

_MPI_NETWORK_LOST = "has lost communication with a remote daemon"  # ORTE (Open MPI 1.x-4.x), PRTE (5.x)
# ORTE/PRTE's daemon that died before it called back: its help text names the network first, but a daemon that
# crashed or was killed on that host prints it too
_MPI_DAEMON_FAILED = "daemon has unexpectedly failed after launch and before"


def _mpi_network(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("if_missing"):
        return (
            f"mpirun was told to use network {facts.get('if_include', '(oob_tcp_if_include)')}, which this host "
            "does not have" + on_ranks(hits),
            "Name an interface every host has (ip -br addr on each), or a subnet instead of a name: mpirun --mca "
            "oob_tcp_if_include 10.0.0.0/24 --mca btl_tcp_if_include 10.0.0.0/24.",
        )
    pair = (
        f" ({facts['from_host']} -> {facts['to_host']}: {facts['errno']})" if facts.get("from_host") else ""
    )
    return (
        f"MPI's processes or daemons on different hosts cannot connect to each other{pair}" + on_ranks(hits),
        "The hosts must reach each other on the interface MPI picks: find the one they share (ip -br addr on "
        "each) and name it: mpirun --mca oob_tcp_if_include <iface> --mca btl_tcp_if_include <iface> (Open MPI; "
        "docker0, virbr0 or lo chosen by default cause this), mpiexec -iface <iface> (MPICH Hydra). Open the "
        "firewall between the nodes for TCP (or fix MPI's ports: --mca btl_tcp_port_min_v4 <port> and open that "
        "range), and check that every host resolves the others' names to those addresses (getent hosts <host>).",
    )


MPI_NETWORK = Recogniser(
    kind="mpi_network",
    title="MPI processes on different hosts cannot connect",
    anchors=(
        "are unable to reach each other for",
        "Open MPI failed to TCP connect to a peer MPI process",
        "None of the TCP networks specified to be included for out-of-band communications",
        "ORTE does not know how to route a message to the specified daemon",
        "ORTE is unable to establish a communication connection to the",
        _MPI_NETWORK_LOST,
        _MPI_DAEMON_FAILED,
        'unable to connect from "',
    ),
    templates=(
        "schedulers:ompi-unreachable-proc",
        "schedulers:ompi-btl-tcp-connect-fail",
        "schedulers:ompi-oob-no-included-found",
        "schedulers:ompi-no-path",
        "schedulers:ompi-no-connect",
        "schedulers:ompi-node-died",
        "schedulers:prte-node-died",
        "schedulers:ompi-failed-daemon",
        "schedulers:prte-failed-daemon",
        "schedulers:hydra-sock-connect",
    ),
    match=R(
        r"MPI processes are unable to reach each other for|Open MPI failed to TCP connect to a peer MPI process|"
        r"(?P<if_missing>None of the TCP networks specified to be included for out-of-band communications)|"
        r"ORTE does not know how to route a message to the specified daemon|"
        r"ORTE is unable to establish a communication connection to the|"
        rf"(?:ORTE|PRTE) {_MPI_NETWORK_LOST}|An? (?:ORTE|PRTE) {_MPI_DAEMON_FAILED}|HYDU_sock_connect \([^)\n]{{0,100}}\): unable to connect from \""
    ),
    span=4,
    facts=(
        R(
            r'unable to connect from "(?P<from_host>[^"\n]{1,255})" to "(?P<to_host>[^"\n]{1,255})" \((?P<errno>[^)\n]{1,80})\)'
        ),
        R(r"Value given: (?P<if_include>\S{1,100})"),
    ),
    # losing a daemon is also what a remote node that went down or a daemon that was killed print: likely alone
    generic=(_MPI_NETWORK_LOST, _MPI_DAEMON_FAILED),
    also=(
        Alternative(
            "worker_killed",
            "the remote host went down, or its daemon was killed (out of memory, the scheduler)",
            "Look at that host's own log and dmesg (the OOM killer), and at the scheduler's record of the node "
            "(sinfo -R).",
        ),
    ),
    describe=_mpi_network,
)


def _ssh(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("host_key_changed"):
        summary = "ssh refuses a host whose key changed since it was last seen"
        first = (
            "Remove the old key (ssh-keygen -R <host>) after checking the host really was reinstalled, then "
        )
    elif facts.get("unresolved") or facts.get("unresolved_pdsh"):
        name = facts.get("unresolved") or facts["unresolved_pdsh"]
        summary = f"the launching node cannot resolve host name {name}"
        first = (
            "Make the name resolve on the launching node (getent hosts <host>; /etc/hosts or DNS), or use IP "
            "addresses in the hostfile; then "
        )
    else:
        summary = f"ssh cannot reach {facts.get('ssh_host', 'a host')}" + (
            f" on port {facts['ssh_port']}: {facts['ssh_error']}" if facts.get("ssh_port") else ""
        )
        first = (
            "Check that sshd runs there and its port is open from this node (a refused connection: no sshd "
            "or another port, set Port in ~/.ssh/config; a timeout: a firewall or the wrong address), then "
        )
    return (
        summary + on_ranks(hits),
        first + "ssh <host> hostname from the launching node must work without a password for every host "
        "in the hostfile (pdsh, mpirun and the deepspeed launcher start the other nodes over ssh).",
    )


SSH_CONNECT = Recogniser(
    kind="ssh_connect",
    title="the launcher cannot ssh to another host",
    anchors=(
        "ssh: connect to host ",
        ": Could not resolve hostname ",
        "REMOTE HOST IDENTIFICATION HAS CHANGED",
        'gethostbyname("',
    ),
    templates=(
        "schedulers:ssh-connect-to-host",
        "schedulers:ssh-could-not-resolve-hostname",
        "schedulers:ssh-remote-host-identification-changed",
        "schedulers:pdsh-gethostbyname",
    ),
    match=R(
        r"ssh: connect to host (?P<ssh_host>[^\s:]{1,255}) port (?P<ssh_port>\d{1,5}): (?P<ssh_error>[^\n]{1,80})|"
        r"ssh: Could not resolve hostname (?P<unresolved>[^\s:]{1,255}): |"
        r"(?P<host_key_changed>REMOTE HOST IDENTIFICATION HAS CHANGED)|"
        r"(?P<pdsh>pdsh@)[^\s:]{1,255}: gethostbyname\(\"(?P<unresolved_pdsh>[^\"\n]{1,255})\"\) failed"
    ),
    # git over ssh (a pip install from git@github.com, a git clone or submodule from any git server) prints the
    # same OpenSSH words about the git host, and git's own "fatal: Could not read from remote repository." right
    # after them (connect.c): no launcher's host. Below the host-key banner git's line comes a dozen lines on,
    # past the lines read with it: anywhere in the log, it leaves the finding likely
    reject=R(
        r"(?:connect to host|resolve hostname) (?:ssh\.)?(?:github\.com|gitlab\.com|bitbucket\.org)\b|"
        r"fatal: Could not read from remote repository"
    ),
    span=4,
    confirm=lambda hits, ctx: "git_remote_failed" not in ctx.facts,
    describe=_ssh,
)


# Open MPI names the program ten lines below its message, past the lines read with it: read it from the log
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("Executable:", R(r"(?m)^Executable: +(?P<mpi_executable>\S{1,255})")),
    # srun's launch.c once a step it retried got its resources (SLURM_STEP_BUSY was only a wait)
    ("Step created for", R(r"(?P<slurm_step_created>Step created for (?:StepId=|job ))")),
    # git's connect.c, after ssh failed to reach a git server (SSH_CONNECT's other reading)
    (
        "Could not read from remote repository",
        R(r"(?P<git_remote_failed>fatal: Could not read from remote repository)"),
    ),
)


def _mpi_program(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    program = facts.get("program") or ctx.facts.get("mpi_executable", "the program")
    why = f" ({facts['why']})" if facts.get("why") else ""
    return (
        f"mpirun/mpiexec could not find or run {program}{why} on a host" + on_ranks(hits),
        "The program after mpirun's options must exist at the same path on every host and be executable: start "
        "Python scripts through the interpreter (mpirun ... python train.py, or chmod +x with a #! line), give "
        "absolute paths or run from a shared filesystem, and activate the same environment on every host (the "
        "PATH a non-interactive ssh login gets: ssh <host> which python). Open MPI takes the first token it does "
        "not know as the program: check that mpirun's options before it are spelled right.",
    )


MPI_PROGRAM_NOT_FOUND = Recogniser(
    kind="mpi_program_not_found",
    title="mpirun could not find or run the program on a host",
    anchors=(
        "was unable to find the specified executable file, and therefore",
        "was unable to launch the specified application as it could not access",
        "): execvp error on file ",
    ),
    templates=(
        "schedulers:ompi-exe-not-found",
        "schedulers:ompi-exe-not-accessible",
        "schedulers:hydra-execvp-error",
    ),
    match=R(
        r"\w{1,20} was unable to find the specified executable file, and therefore|\w{1,20} was unable to launch "
        r"the specified application as it could not access|HYDU_create_process \([^)\n]{0,100}\): execvp error on file "
        r"(?P<hydra_program>[^\s(]{1,255}) \((?P<why>[^)\n]{1,80})\)"
    ),
    facts=(R(r"execvp error on file (?P<program>[^\s(]{1,255})"),),
    describe=_mpi_program,
)


def _remote_path(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    daemon = merged(hits).get("daemon", "orted")
    return (
        f"mpirun's daemon {daemon} is not on the PATH of the shell ssh starts on another host"
        + on_ranks(hits),
        f"mpirun starts {daemon} on every other host through ssh, in a non-interactive shell that does not read "
        "what an interactive login sets up (module load, conda activate, PATH in ~/.bashrc after its "
        "'[ -z \"$PS1\" ] && return' line). Give mpirun the install folder (mpirun --prefix /opt/openmpi, the "
        "folder above its bin/; or build Open MPI with --enable-mpirun-prefix-by-default), or set PATH and "
        f"LD_LIBRARY_PATH at the top of ~/.bashrc on every host; ssh <host> which {daemon} must print it.",
    )


MPI_REMOTE_PATH = Recogniser(
    kind="mpi_remote_path",
    title="mpirun's daemon missing from the remote hosts' PATH",
    # bash "bash: orted: command not found", dash "sh: 1: orted: not found", zsh "zsh:1: command not found: orted"
    anchors=(
        "orted: command not found",
        "prted: command not found",
        "orted: not found",
        "prted: not found",
        "command not found: orted",
        "command not found: prted",
    ),
    templates=("schedulers:remote-orted-not-found", "schedulers:remote-prted-not-found"),
    match=R(
        r"(?:^|[\s/:])(?P<daemon>orted|prted)(?:: command not found|: not found)|command not found: (?P<zsh_daemon>orted|prted)\b"
    ),
    facts=(R(r"command not found: (?P<daemon>orted|prted)\b"),),
    describe=_remote_path,
)


# Kubeflow's PyTorchJob webhook (field errors as kubectl prints them) and torchx's dist.ddp component: a job
# description its launcher refuses before anything runs: (anchor, what is wrong, the fix)
_SPEC_REFUSALS = (
    (
        "pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1",
        "the PyTorchJob asks for more than one Master replica",
        "A PyTorchJob has exactly one Master (rank 0, which hosts the rendezvous): set "
        "spec.pytorchReplicaSpecs.Master.replicas: 1 and put the other nodes in Worker.replicas.",
    ),
    (
        "must have at least one container with name pytorch",
        "a PyTorchJob replica has no container named pytorch",
        "The operator sets MASTER_ADDR, RANK and WORLD_SIZE in the container named pytorch: name the training "
        "container pytorch in both the Master and the Worker template (containers: - name: pytorch).",
    ),
    (
        "nProcPerNode: Forbidden: must not be used with",
        "the PyTorchJob sets both spec.elasticPolicy.nProcPerNode and spec.nprocPerNode",
        "spec.elasticPolicy.nProcPerNode is deprecated: keep only spec.nprocPerNode (the processes per node).",
    ),
    (
        "Invalid format for -j, usage example: 1:2x4 or 1x4 or 4",
        "torchx's dist.ddp was given a -j it cannot read",
        "torchx run dist.ddp -j <nodes>x<processes per node> (2x8: two nodes of 8), or MIN:MAXx<per node> "
        "(1:2x8) for an elastic job, or <processes> alone on one node.",
    ),
    (
        "exactly one of --script and -m must be specified",
        "torchx's dist.ddp was given neither --script nor -m, or both",
        "Name what to run once: torchx run dist.ddp -j 2x8 --script train.py (a file) or -m package.module.",
    ),
)


def _job_spec(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    line = merged(hits).get("spec_refused", "")
    _, what, fix = next((r for r in _SPEC_REFUSALS if r[0] in line), _SPEC_REFUSALS[0])
    return what + on_ranks(hits), fix


JOB_SPEC = Recogniser(
    kind="job_spec",
    title="the job description refused by its launcher (Kubeflow PyTorchJob, torchx)",
    anchors=tuple(anchor for anchor, _, _ in _SPEC_REFUSALS),
    templates=(
        "schedulers:pytorchjob-master-replicas",
        "schedulers:pytorchjob-container-name",
        "schedulers:pytorchjob-nproc-per-node",
        "schedulers:torchx-dist-j-format",
        "schedulers:torchx-dist-script-or-m",
    ),
    match=R(r"(?P<spec_refused>(?:" + "|".join(re.escape(anchor) for anchor, _, _ in _SPEC_REFUSALS) + r"))"),
    describe=_job_spec,
)

RECOGNISERS = (
    SLURM_REQUEST,
    SLURM_STEP_BUSY,
    SLURM_LAYOUT,
    SCHEDULER_CANCELLED,
    SRUN_MPI_PLUGIN,
    MPI_NETWORK,
    SSH_CONNECT,
    MPI_PROGRAM_NOT_FOUND,
    MPI_REMOTE_PATH,
    JOB_SPEC,
)
