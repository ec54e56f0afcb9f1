"""A run started wrongly: launcher arguments the script does not take, a rank's environment unset.

Kinds of failure in how the run was started: a launcher's arguments the script does not take, launcher options
after the script, a rank's environment a scheduler did not set.

The message texts are argparse's (``unrecognized arguments``, ``the following arguments are required``), torch's
(``distributed/rendezvous.py``: ``environment variable RANK expected, but not set``; ``distributed/launch.py``),
and DeepSpeed's launcher (``launcher/launch.py``: ``spawned with command``), as the catalog holds them.
"""

from __future__ import annotations

import re

from torchdoctor.explain import printed_versions
from torchdoctor.explain.kinds import (
    api_keywords,
    compiled_ops,
    cublas_build,
    cuda_init,
    extension_packages,
    installers,
    missing_packages,
    simulators,
)
from torchdoctor.explain.kinds.comm import ENV_ERROR_RAISED
from torchdoctor.explain.kinds.versions import SUBMODULE
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

LAUNCHER_OPTIONS = r"-m torch\.distributed\.(?:launch|run)|--nproc[_-]per[_-]node|--nnodes|--master[_-]port|--master[_-]addr|--node[_-]rank"


def _local_rank(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    prog = facts.get("prog", "the script")
    injected = facts.get("bad_arg") or ctx.facts.get("injected_local_rank")
    if facts.get("ds_local_rank"):
        summary = (
            f"the script's --local_rank ({facts['ds_local_rank']}) is not the LOCAL_RANK the launcher set "
            f"({facts['env_local_rank']}): DeepSpeed refuses the mismatch"
        )
        fix = (
            "The launcher (deepspeed, torchrun) sets LOCAL_RANK for every worker; a --local_rank of the script's "
            "own (a default, a value in a shell script or a launch config) disagrees with it. Drop the argument "
            "(or its default other than -1) and read the rank from the environment: "
            "local_rank = int(os.environ['LOCAL_RANK']), or pass it through unchanged (the deepspeed launcher "
            "passes --local_rank=N itself; do not add another)."
        )
        return summary + on_ranks(hits), fix
    if facts.get("ds_local_rank_type"):
        # deepspeed/runtime/engine.py _configure_with_arguments asserts isinstance(args.local_rank, int): the
        # launcher passes --local_rank=N, which argparse keeps as a string unless the option says type=int
        return (
            f"the script's args.local_rank is a {facts['ds_local_rank_type']} "
            f"({facts['ds_local_rank_value'].strip()}), not an int: DeepSpeed refuses it" + on_ranks(hits),
            "deepspeed.initialize(args=args) reads args.local_rank, which the launcher passes as --local_rank=N; "
            "argparse keeps it a string unless the option declares its type. Declare it as an int: "
            "parser.add_argument('--local_rank', '--local-rank', type=int, default=-1); or do not pass args= to "
            "deepspeed.initialize (it reads LOCAL_RANK from the environment).",
        )
    required = facts.get("argparse_error", "")
    launched = ctx.facts.get("failure_summary_in_input") or any(h.rank is not None for h in hits)
    if launched and not injected and re.search(r"required: (?:[^\n]*, )?--local[_-]rank\b", required):
        # the script wants the argument torch.distributed.launch passed; torchrun passes none, nor accelerate
        # launch (found with accelerate's nlp_example.py given a required --local_rank: planted_runs/local_rank_required)
        launcher = "accelerate launch" if ctx.facts.get("saw_accelerate_launch") else "torchrun"
        return (
            f"{prog} requires a --local_rank argument, which {launcher} does not pass (it sets LOCAL_RANK in the "
            "environment instead; torch.distributed.launch passed the argument)" + on_ranks(hits),
            "Read the local rank from the environment, and keep the argument optional for older launchers:\n"
            "parser.add_argument('--local-rank', '--local_rank', type=int, "
            "default=int(os.environ.get('LOCAL_RANK', 0)))\n"
            "(drop required=True), or use local_rank = int(os.environ['LOCAL_RANK']) where the script reads it.",
        )
    if facts.get("hf_parser") and injected:
        flag = injected.strip().split("=")[0]
        return (
            f"transformers' HfArgumentParser does not take the {flag} argument the launcher adds: no field of the "
            "script's dataclasses is named so" + on_ranks(hits),
            "torch.distributed.launch (torch 2.x) and the deepspeed launcher pass --local-rank=N / --local_rank=N "
            "to every worker. TrainingArguments takes --local_rank, and its dashed spelling --local-rank only from "
            "transformers 4.46 (hf_argparser.py added dashed aliases then); dataclasses of the script's own take "
            "neither. Start the script with torchrun (it passes no argument and sets LOCAL_RANK in the "
            "environment, which the Trainer reads), or torch.distributed.launch --use-env; or upgrade transformers "
            "to 4.46+ when TrainingArguments is among the parsed dataclasses; or add a field local_rank: int = -1 "
            "to the script's own arguments dataclass.",
        )
    if injected:
        # each rank is handed its own value (--local-rank=1 on rank 1): quoted only where every rank's is the
        # same, else the flag alone (the first value read may not be the rank named below)
        given = {h.facts["bad_arg"].strip() for h in hits if h.facts.get("bad_arg")}
        flag = injected.strip() if len(given) <= 1 else injected.strip().split("=")[0]
        summary = f"{prog} does not accept the {flag} argument its launcher adds"
    else:
        summary = (
            f"{prog} stopped on its arguments ({facts.get('argparse_error', 'argparse error').strip()[:160]}): "
            "a launcher may have added or moved arguments"
        )
    fix = (
        "torch.distributed.launch and the deepspeed launcher pass --local_rank=N (torch 2.x: --local-rank=N) "
        "to every worker. Use torchrun instead, which passes nothing and sets LOCAL_RANK in the environment "
        "(read it with int(os.environ['LOCAL_RANK'])), or make the script accept it:\n"
        "parser.add_argument('--local-rank', '--local_rank', type=int, "
        "default=int(os.environ.get('LOCAL_RANK', 0)))\n"
        "A script that starts its own workers (detectron2's --num-gpus, a YAML-only entry point) must be run "
        "with plain python and its own option, not under a launcher."
    )
    return summary + on_ranks(hits), fix


LOCAL_RANK_ARGUMENT = Recogniser(
    kind="local_rank_argument",
    title="the launcher's --local_rank argument",
    anchors=(
        "unrecognized arguments: ",
        "error: the following arguments are required",
        "Could not consume arg: ",
        "Mismatch in local rank setting, args.local_rank=",
        "args.local_rank of ",
        # transformers/hf_argparser.py parse_args_into_dataclasses: the arguments no dataclass field takes
        "not used by the HfArgumentParser: ",
    ),
    templates=(
        "system:argparse-unrecognized-arguments",
        "transformers:arguments-not-used-by-hfargumentparser",
        "system:argparse-arguments-required",
        "third_party:fire-could-not-consume-arg",  # a fire.Fire entry point handed --local_rank
        "deepspeed:mismatch-in-local-rank-setting-args",  # deepspeed/runtime/engine.py _configure_with_arguments
        "deepspeed:args-local-rank-of-is-an",  # engine.py _configure_with_arguments: args.local_rank not an int
    ),
    match=R(
        r"(?:unrecognized arguments|Could not consume arg|not used by the HfArgumentParser): [^\n]{0,300}?"
        r"(?:--|–|—)local[_-]rank|"
        r"arguments are required|Mismatch in local rank setting|args\.local_rank of [^\n]{0,40} is an unknown type"
    ),
    facts=(
        R(r"(?P<prog>[\w./-]{1,100}): error:"),
        R(
            r"(?:unrecognized arguments|Could not consume arg|not used by the HfArgumentParser): [^\n]{0,300}?"
            r"(?P<bad_arg>(?:--|–|—)local[_-]rank(?:=\d+)?)"
        ),
        R(r"(?P<hf_parser>not used by the HfArgumentParser): [^\n]{0,300}?(?:--|–|—)local[_-]rank"),
        R(r"error: (?P<argparse_error>the following arguments are required: [^\n]{1,200})"),
        R(
            r"Mismatch in local rank setting, args\.local_rank=(?P<ds_local_rank>-?\d+) but "
            r"env\['LOCAL_RANK'\]=(?P<env_local_rank>-?\d+)"
        ),
        R(
            r"args\.local_rank of (?P<ds_local_rank_value>[^\n]{0,40}) is an unknown type <class '(?P<ds_local_rank_type>\w{1,20})'>"
        ),
    ),
    # "arguments are required" alone is any argparse failure; the launcher's --local_rank in the log confirms it
    # (torch:the-module-torch-distributed-launch-is, the launcher's deprecation warning, is evidence too)
    # Not the launcher's deprecation warning or its --local_rank=N elsewhere in the log beside a "required"
    # error: argparse reports missing required arguments before unknown ones, so a script stopped on those lacks
    # its own arguments whatever the launcher added (certain only on the --local_rank argument itself)
    confirm=lambda hits, ctx: any(
        "bad_arg" in h.facts or "ds_local_rank" in h.facts or "ds_local_rank_type" in h.facts for h in hits
    ),
    also=(
        Alternative(
            "launch_command",
            "the script's own required arguments were not passed (or were put before the script's path)",
            "Pass the arguments the error names after the script's path: torchrun --nproc_per_node=2 train.py "
            "--config cfg.yaml (the launcher's options before the script, the script's after it).",
            when=("argparse_error",),
        ),
    ),
    describe=_local_rank,
)


RENDEZVOUS_ARGS_FIX = (
    "Every node runs the same command but its own --node_rank, 0 to nnodes-1:\n"
    "torchrun --nnodes=2 --node_rank=<0|1> --nproc_per_node=8 --master_addr=<node 0's IP> --master_port=29500 "
    "train.py\nor let the c10d rendezvous number the nodes (no --node_rank): torchrun --nnodes=2 "
    "--nproc_per_node=8 --rdzv-backend=c10d --rdzv-endpoint=<node 0's IP>:29500 --rdzv-id=<job id> train.py"
)

SSH_FIX = (
    "deepspeed's multi-node launcher (pdsh) and mpirun start the other hosts' processes over ssh: from the "
    "launching node `ssh <host> hostname` must work without a password or a prompt: ssh-keygen, then "
    "ssh-copy-id <host>; accept each host's key once (ssh <host> by hand, or ~/.ssh/known_hosts); the same user "
    "and sshd port (~/.ssh/config); host names in the hostfile that resolve on every node. In a container, run "
    "sshd in it on the port the hostfile's hosts answer on, or use a launcher without ssh (torchrun on every "
    "node, deepspeed --no_ssh, srun)."
)

# (fact, what it is, what to do): the launchers' own refusals of their command line, as the sources word them
ACCELERATE_CONFIG_FIX = (
    "accelerate launch reads --config_file relative to the directory it runs in: give the file's real path "
    "(an absolute one is safest; check it with ls), or create a config for this machine with `accelerate "
    "config` (written to ~/.cache/huggingface/accelerate/default_config.yaml, or under $HF_HOME) and run "
    "accelerate launch without --config_file."
)

LAUNCHER_REFUSALS: tuple[tuple[str, str, str], ...] = (
    (
        "acc_config_file",
        "accelerate launch was given a --config_file that does not exist",
        ACCELERATE_CONFIG_FIX,
    ),
    (
        "acc_default_config",
        "accelerate read its default config file, which does not exist: a --config_file path that does not "
        "exist (accelerate before 0.17 then falls back to the default one), or no `accelerate config` run here",
        ACCELERATE_CONFIG_FIX,
    ),
    (
        "mpi_slots",
        "mpirun was asked for more processes than the hosts have slots",
        "Open MPI gives each host one slot per core (or the hostfile's slots=N) and refuses more processes than "
        "slots: ask for as many as there are (-np <GPUs>, one process per GPU), give each host its slots in the "
        "hostfile (node1 slots=8), or allow more with mpirun --oversubscribe.",
    ),
    (
        "mpi_root",
        "mpirun refuses to run as root",
        "Run as a normal user, or, in a container where root is the only user, allow it: mpirun "
        "--allow-run-as-root ... (or export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).",
    ),
    (
        "mpi_daemons",
        "mpirun could not start its daemon (orted/prted) on another host",
        "mpirun starts a daemon on every host over ssh before the processes: passwordless ssh to each host, and "
        "the same Open MPI at the same path there, on PATH and LD_LIBRARY_PATH of a non-interactive shell (or "
        "mpirun --prefix <its install folder>).\n" + SSH_FIX,
    ),
    ("ssh_failed", "the launcher could not reach another host through ssh", SSH_FIX),
    ("ssh_denied", "ssh refused the launcher's login to another host", SSH_FIX),
    (
        "rdzv_port0",
        "the workers wait for a TCPStore on port 0: the rendezvous endpoint (or MASTER_PORT) the launch was "
        "given has no port, so nothing ever listens there",
        "Give the rendezvous a real port: torchrun --rdzv-endpoint=HOST:29500 (or --master_port=29500 with the "
        "default static rendezvous), and check what builds the torchrun command (a job launcher's own rdzv "
        "settings) for an endpoint without its :PORT. On one node, torchrun --standalone --nproc_per_node=N "
        "picks a free local port itself.",
    ),
    (
        # deepspeed/launcher/multinode_runner.py MVAPICHRunner.backend_exists: `mpiname` answered, but not with
        # the GPU-direct build; runner.py then raises "launcher 'mvapich' not installed"
        "ds_mvapich_gdr",
        "deepspeed --launcher mvapich found an MPI that is not MVAPICH2-GDR",
        "deepspeed's mvapich launcher takes only MVAPICH2-GDR, the GPU-direct build (its `mpiname` must print "
        "MVAPICH2-GDR): a plain MVAPICH2 or another MPI's mpiname first on PATH is refused. Put MVAPICH2-GDR's bin "
        "folder first on PATH on the launching node (check `mpiname`), or launch through the MPI that is there: "
        "deepspeed --launcher openmpi (or mpich / impi / pdsh) --hostfile hostfile train.py.",
    ),
    (
        "ds_launcher",
        "the deepspeed launcher's multi-node backend is not installed",
        "A hostfile with more than this host makes deepspeed start the other nodes through pdsh (or "
        "--launcher openmpi / mvapich / slurm / impi / mpich). Install the one you use on the launching node "
        "(apt install pdsh; check `which pdsh`) with passwordless ssh to every host, or choose one that is "
        "there: deepspeed --launcher openmpi --hostfile hostfile train.py. Without a hostfile (or "
        "--num_nodes 1) deepspeed runs on this node only.",
    ),
    (
        "ds_no_ssh",
        "deepspeed --no_ssh was started without this node's --node_rank",
        "With --no_ssh every node starts the launcher itself and must say which it is: deepspeed --no_ssh "
        "--node_rank=<0..nnodes-1> --master_addr=<node 0's IP> --master_port=29500 --hostfile hostfile "
        "train.py (the same hostfile on every node).",
    ),
    (
        "ds_master_addr",
        "the deepspeed launcher could not find this host's address for the master",
        "deepspeed takes the first address `hostname -I` prints; on a host where that fails (a container, "
        "macOS) name it: deepspeed --master_addr=<this host's IP> --master_port=29500 ...",
    ),
    (
        "ds_include",
        "the deepspeed launcher's --include/--exclude (or --num_nodes/--num_gpus beside them) do not fit the "
        "hostfile",
        "--include/--exclude name hosts and GPU slots of the hostfile (host1:0,1@host2:2); they replace "
        "--num_nodes/--num_gpus (use one or the other), and each host named must be in the hostfile with enough "
        "slots.",
    ),
    (
        # deepspeed/launcher/multinode_runner.py SlurmRunner.get_cmd: srun places the processes on the GPUs itself
        "ds_slurm_remap",
        "the deepspeed launcher's slurm backend cannot remap the GPUs (--detect_nvlink_pairs)",
        "With --launcher slurm, srun decides which GPUs each process sees: drop --detect_nvlink_pairs from the "
        "deepspeed command, or launch with the default pdsh (or openmpi) backend to keep it.",
    ),
    (
        # deepspeed/launcher/launch.py main: the folder each rank's log is written to
        "ds_rank_log",
        "the deepspeed launcher's --enable_each_rank_log names a file, not a folder",
        "--enable_each_rank_log takes the folder each rank's log goes to (created when missing): give a directory "
        "path (deepspeed --enable_each_rank_log logs/ train.py), not the path of an existing file, or drop the "
        "option.",
    ),
    (
        "static_rdzv",
        "torchrun's static rendezvous (several nodes, no c10d endpoint) lacks this node's rank or the master's "
        "address",
        RENDEZVOUS_ARGS_FIX,
    ),
    (
        "rdzv_format",
        "torchrun's rendezvous arguments are malformed",
        "--rdzv-endpoint (and --master_addr/--master_port) is HOST:PORT with a host name or an IP address and a "
        "port 0-65535 (no scheme, no path); --nnodes is N or MIN:MAX (1 <= MIN <= MAX); --nproc_per_node is a "
        "number or gpu/cpu/auto; --rdzv-backend is c10d (or static, etcd, etcd-v2); --rdzv-conf is key=value "
        "pairs separated by commas (join_timeout=900,read_timeout=60), numbers and true/false as values "
        "(protocol=http or https for etcd, store_type=tcp or file for c10d).\n" + RENDEZVOUS_ARGS_FIX,
    ),
    (
        "accelerate_mode",
        "accelerate launch refuses its options: they ask for more than one mode or too few processes/GPUs",
        "accelerate launch takes one of --cpu / --multi_gpu / --use_deepspeed / --use_fsdp (or the config "
        "file's distributed_type), and --multi_gpu needs --num_processes 2 or more and at least two GPUs in "
        "--gpu_ids (or --gpu_ids all). Pass --num_processes with a config file that does not set it, or run "
        "`accelerate config` again for this machine.",
    ),
    (
        "accelerate_multinode",
        "accelerate launch was asked for several machines without the main process's address",
        "With --num_machines > 1 every machine runs the same accelerate launch with its own --machine_rank "
        "(0 on the main one) and the main machine's --main_process_ip <node 0's IP> and --main_process_port "
        "29500 (or the same values in each machine's accelerate config).",
    ),
    (
        "lightning_world",
        "Lightning's devices x num_nodes is not the world size the launcher started",
        "Under torchrun (or another launcher) Lightning takes the processes it was given: devices= of "
        "Trainer(...) or Fabric(...) must equal --nproc_per_node and num_nodes= --nnodes, so that devices x "
        "num_nodes is the world size; "
        "or start the script with plain python and let Lightning launch its own processes.",
    ),
    (
        "lightning_fork",
        "Lightning's fork-based strategy is not available on this platform",
        "Process forking (strategy='ddp_fork' / 'ddp_notebook') works on Linux only: on Windows and macOS use "
        "strategy='ddp_spawn', or run the script with strategy='ddp' (a script, not a notebook).",
    ),
    (
        "launcher_options",
        "the launcher refused a combination of its own options",
        "torchrun: --nnodes is N or MIN:MAX with 0 < MIN <= MAX, --max-restarts 0 or more, "
        "--local-ranks-filter a comma-separated list of local ranks (0,1), and --no-python and -m/--module "
        "not together (accelerate launch: --module and --no_python not together); deepspeed's elastic "
        "training takes no --no_local_rank. Check the command against `torchrun --help` (or the launcher's "
        "own --help) and the script that builds it.",
    ),
    (
        "rdzv_timeout",
        "torchrun's --rdzv-conf sets a rendezvous timeout that is not positive",
        "--rdzv-conf takes the c10d/etcd-v2 rendezvous' timeouts in seconds, each above 0: join_timeout "
        "(default 600), last_call_timeout (30), close_timeout (30), heartbeat (5), read_timeout (60 for the "
        "c10d store); e.g. torchrun --rdzv-conf join_timeout=1800,read_timeout=120 ... — remove the zero or "
        "negative one (a timeout cannot be switched off).",
    ),
    (
        "launch_shutdown_timeout",
        "the launch configuration's shutdown timeout is negative",
        "LaunchConfig(shutdown_timeout=...) (torch.distributed.launcher.api, the elastic_launch a job library "
        "builds) is the seconds the agent waits for workers to exit after SIGTERM before it kills them: 0 or "
        "more.",
    ),
    (
        "torchrun_logs",
        "torchrun cannot use the log options it was given",
        "torchrun --log-dir (--log_dir) names a directory for the workers' logs (it is created when missing; a "
        "file of that name is refused): give a directory path, or drop the option. --logs-specs names an entry "
        "point registered under the 'torchrun.logs_specs' group (a package's own LogsSpecs); without such a "
        "package installed leave it out to use the default. --local-ranks-filter lists local ranks (0,1); an "
        "empty value is refused.",
    ),
    (
        "accelerate_platform",
        "accelerate launch refuses its options for the TPU or SageMaker launcher",
        "The TPU launcher (--tpu, or distributed_type: XLA/TPU in the config) imports the script and calls the "
        "function --main_training_function names (default main): define it, or pass the name your script uses; "
        "it runs a python script (no --no_python), and a TPU pod launch takes no docker flags. SageMaker runs a "
        "python training script file: no --module or --no_python; it passes the script's arguments as "
        "hyperparameters, so give each argparse option an explicit type (type=bool, not action='store_true'), and "
        "it needs AWS credentials (aws_profile, or aws_access_key_id with aws_secret_access_key, in the config "
        "file from `accelerate config`). Check the config file's distributed_type "
        "and compute_environment (`accelerate config` again) if you did not mean TPU or SageMaker.",
    ),
    (
        "accelerate_config_keys",
        "accelerate launch cannot read its config file",
        "The config file (--config_file, or ~/.cache/huggingface/accelerate/default_config.yaml) has no "
        "distributed_type: it is incomplete, written by hand or by another tool (add it: NO, MULTI_GPU, DEEPSPEED, "
        "FSDP...). `accelerate config` writes a complete one for this machine and this release. (Keys the "
        "installed accelerate does not know are another release's file: dependency_version, stack_releases.py.)",
    ),
    (
        "ds_mpi_devices",
        "the deepspeed launcher's MPI backend needs the same number of GPUs on every node",
        "With --launcher mpich / impi / mvapich deepspeed starts the same number of processes on each host: "
        "give every host in the hostfile the same slots=N (or --include the same number of GPUs on each), or "
        "use the default pdsh launcher (or openmpi), which allows different counts.",
    ),
    (
        "fire_arg",
        "python-fire could not give the script an option its entry point does not take",
        "A fire.Fire(main) script takes as options only the parameters of the function it fires: the command "
        "(or a launch script around it) passes one the function does not have. Remove the option from the "
        "command, or add the parameter to the function (def train(..., model_config_file=None)); or parse the "
        "command line with argparse instead of fire. Options a launcher adds (--local_rank) must be parameters "
        "too, or use torchrun, which adds none.",
    ),
    (
        "yacs_py",
        "yacs was given a Python file as the config, and that file defines no cfg",
        "The config option takes one of the repository's config files, usually a .yaml (configs/, experiments/): "
        "pass its path relative to where the script runs (--config_file experiments/<name>.yaml). yacs loads a .py "
        "config only when the file defines cfg = CfgNode(...); the repository's defaults module (configs.py, "
        "defaults.py) is not a config to pass.",
    ),
    (
        # lightning/fabric/fabric.py _validate_launched: setup() / setup_dataloaders() on a multi-device strategy
        # before fabric.launch(); under torchrun too, where launch() starts no process but makes the group
        "fabric_launch",
        "Fabric was set up on more than one device without fabric.launch(): its processes and process group "
        "were never started",
        "Call fabric.launch() right after Fabric(...), before fabric.setup(...) or setup_dataloaders(...): "
        "fabric = Fabric(accelerator=..., devices=N, strategy='ddp'); fabric.launch(). Started by plain python, "
        "launch() starts the other processes itself; under torchrun or srun it starts none and only joins the "
        "process group, so it is needed there too. Or start the script with Fabric's own launcher, which does "
        "it as Fabric(...) is made (and then refuses a launch() call): fabric run --accelerator=cpu --devices=2 "
        "--strategy=ddp train.py. With devices=1 no launch is needed.",
    ),
    (
        "interactive",
        "Lightning refuses DDP in an interactive environment (a notebook, or python -i)",
        "DDP starts one process per GPU by re-running the script, which a notebook cannot do: run the code as "
        "a script (python train.py, or torchrun/srun), or in the notebook use Trainer(strategy='ddp_notebook') "
        "(fork-based) or devices=1.",
    ),
)


def _nproc_invalid(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    value, prog = facts["nproc_invalid"], facts.get("prog", "launch.py")
    what = "an empty --nproc_per_node" if value == "''" else f"--nproc_per_node={value}, not a whole number"
    return (
        f"{prog} was given {what}: the number of processes (GPUs) per node must be an integer"
        + on_ranks(hits),
        "torch.distributed.launch (torch <= 1.9 reads --nproc_per_node as an int) got no number of GPUs: a "
        "wrapper script (tools/dist_train.sh CONFIG GPUS, a Makefile, a job script) passes it from a shell "
        "variable or one of its own arguments that was not given, or given in another place. Call the wrapper "
        "with the arguments it expects, the number of GPUs as an integer where its usage puts it (mmcv/mmdet-style "
        "scripts: ./tools/dist_train.sh configs/<model>.py 4), or launch it yourself: python -m "
        "torch.distributed.launch --nproc_per_node=4 train.py <args> (torch 1.10+: torchrun "
        "--nproc_per_node=4 train.py <args>, which also takes 'gpu' or 'auto').",
    )


def _training_arguments_release(options: str) -> tuple[str, str]:
    """An option HfArgumentParser refused that is a TrainingArguments field of other transformers releases only
    (api_keywords.tsv, read from the released wheels): what the summary and the fix add, ("", "") for none."""
    # the whole option as the field is spelled (a dashed one is another matter: HfArgumentParser takes dashed
    # aliases only from transformers 4.46)
    for name in re.findall(r"--([A-Za-z][\w-]{0,60})", options):
        row = next(
            (r for r in api_keywords.rows("TrainingArguments", name) if r.package == "transformers"), None
        )
        if row is None:
            continue
        if row.last:
            instead = f" (--{row.replacement} in its place)" if row.replacement else ""
            return (
                f"; --{name} is a TrainingArguments field only up to transformers {row.last}, gone "
                f"by {row.removed}{instead}",
                f"\n--{name} is a field of TrainingArguments in transformers up to {row.last} only: check the "
                "installed release (pip show transformers) against the one the script was written for, and pass "
                + (
                    f"--{row.replacement} instead"
                    if row.replacement
                    else "the option its release has instead"
                )
                + f" or install transformers {row.last}.",
            )
        if row.added:
            return (
                f"; --{name} is a TrainingArguments field first in transformers {row.added} (of the releases read)",
                f"\n--{name} is a field of TrainingArguments first in transformers {row.added}: where the script parses "
                "TrainingArguments (its own dataclasses take their fields only), an older release may be installed "
                f"here (pip show transformers); install transformers>={row.added}, or drop the option.",
            )
    return "", ""


def _script_args(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    """argparse refusing options the program's parser does not define (Lib/argparse.py: "unrecognized
    arguments: ..."): the command line, not the code, is what to change."""
    prog = facts.get("prog", "").strip()
    options = facts["script_args"].split(": ", 1)[1].strip()[:200]
    hf = "HfArgumentParser" in facts["script_args"]
    parser = "transformers' HfArgumentParser" if hf else "argparse"
    release, release_fix = _training_arguments_release(options) if hf else ("", "")
    # a program run by its own name (pytest, a console script) is asked for its help as it is
    helped = f"python {prog}" if prog.endswith(".py") else (prog or "python <script>")
    return (
        f"{prog or 'the script'}'s command line has options its parser does not define: {options}"
        + release
        + on_ranks(hits),
        f"{prog or 'The script'} ({parser}) stops on any option its parser has no argument (or dataclass field) "
        f"for. Compare the command with `{helped} --help`: the spelling (--batch_size and --batch-size are two options), an option of "
        "another release of the script (a README or a job script newer or older than the checkout), or a "
        "launcher's option written after the script's path (the launcher's options go before it: torchrun "
        f"--nproc_per_node=2 {prog or '<script>'} <script args>; accelerate launch --num_processes=2 "
        f"{prog or '<script>'} <script args>). A value split by the shell (a space or a glob unquoted) "
        "is read as an extra argument too: quote it; a '\\r' among them is a job script saved with Windows line ends "
        "(run dos2unix on it)." + release_fix,
    )


def _launch_command(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    for key, what, fix in LAUNCHER_REFUSALS:
        if facts.get(key):
            return f"{what}: {facts[key].strip()[:200]}" + on_ranks(hits), fix
    if facts.get("hostfile"):
        return (
            f"the deepspeed launcher cannot use its hostfile: {facts['hostfile'].strip()}" + on_ranks(hits),
            "The hostfile (--hostfile, default /job/hostfile) lists one host a line as `<host> slots=<GPUs>`, "
            "e.g.\n    node1 slots=8\n    node2 slots=8\nwith host names every node resolves and reaches by "
            "passwordless ssh (pdsh). --num_nodes must not exceed the hosts listed; without a hostfile deepspeed "
            "runs on this machine only. deepspeed checks each host with `ssh -o PasswordAuthentication=no "
            "<host> hostname`: set up passwordless ssh (ssh-copy-id <host>) from the launching node, or remove "
            "the hostfile to run on this node alone.",
        )
    if facts.get("nproc_invalid"):
        return _nproc_invalid(facts, hits)
    if facts.get("launcher_error"):
        launcher, error = facts["launcher_prog"].strip(), facts["launcher_error"].strip()
        launcher = "accelerate launch" if launcher.lower().startswith("accelerate") else launcher
        return (
            f"the launcher refused its own command line: {launcher}: error: {error[:200]}" + on_ranks(hits),
            f"{launcher}'s own options go before the script, the script's after it, spelled as "
            f"`{launcher} --help` lists them (torchrun: --nproc_per_node / --nproc-per-node, "
            "--nnodes, --node_rank, --master_addr, --master_port, --rdzv-endpoint), and the script's path must "
            "be there:\ntorchrun --nproc_per_node=2 train.py --your-args"
            + (
                f"\nAn option spelled as documented and still unrecognized is one the installed {launcher} does not "
                "have yet (a newer release's, which a tutorial or a GUI's script passes): update the package, or "
                "drop the option."
                if error.startswith("unrecognized arguments")
                else ""
            ),
        )
    if facts.get("script_args"):
        return _script_args(facts, hits)
    prog = facts.get("prog", "train.py")
    summary = f"{prog} received the launcher's own options ({facts.get('options', '').strip()[:120]})"
    fix = (
        "The launcher and its options come before the script, the script's arguments after it:\n"
        f"python -m torch.distributed.launch {prog}  ->  python -m torch.distributed.launch --nproc_per_node=2 "
        f"{prog} <script args>\nor, on torch 1.10+: torchrun --nproc_per_node=2 {prog} <script args>"
    )
    return summary + on_ranks(hits), fix


LAUNCH_COMMAND = Recogniser(
    kind="launch_command",
    title="malformed launch command",
    anchors=(
        "unrecognized arguments: ",
        "not used by the HfArgumentParser: ",
        "Hostfile is empty or not formatted correctly",
        "Bad hostfile text",
        "no extra nodes available via hostfile",
        "Hostfile contains a bad entry",
        "not found in hostfile",
        "was not reachable via ssh",
        "Hostfile contains multiple entries for",
        "' not installed.",
        "Launching training without ssh, but --node_rank is not set correctly",
        "Unable to detect suitable master address via",
        "' specified on host '",
        "is listening yet, will retry",
        "Cannot specify num_nodes/gpus with include/exclude",
        "is absent in RendezvousParameters",
        "Port is absent in endpoint",
        "must be a dot-separated list of labels, an IPv4 address, or an IPv6 address",
        "must be an integer between 0 and 65536",
        'is not in "MIN:MAX" format',
        "Unsupported nproc_per_node value",
        # CPython argparse on torch.distributed.launch's --nproc_per_node (type=int up to torch 1.9)
        "argument --nproc_per_node: invalid int value",
        # torch/distributed/elastic/rendezvous/api.py, utils.py: --rdzv-backend, --nnodes, --rdzv-conf as parsed
        "number of rendezvous nodes (",
        "is not registered. Did you forget to call",
        "The rendezvous configuration string must be in format",
        "The rendezvous configuration option '",
        # elastic/rendezvous/dynamic_rendezvous.py (--nnodes MIN:MAX read into the c10d/etcd-v2 handler),
        # etcd_rendezvous*.py and c10d_rendezvous_backend.py (--rdzv-conf protocol=, store_type=)
        "must be greater than or equal to the minimum number of nodes",
        "The minimum number of nodes (",
        "protocol must be HTTP or HTTPS",
        "Invalid store type given. Currently only supports file and tcp",
        "is not compatible with an interactive environment",
        "To use Fabric with more than one device, you must call `.launch()`",
        "`--use_deepspeed`, `--use_fsdp` at a time",
        "You need to use at least 2 processes to use `--multi_gpu`",
        "in Lightning, but the product (",
        "but process forking is not supported on this platform",
        "Less than two GPU ids were configured and tried to run on multiple GPUs",
        "You need to manually pass in `--num_processes` using this config yaml",
        "torchrun: error: ",
        "deepspeed: error: ",
        "launch: error: ",
        # accelerate's own parsers by name: accelerate_cli.py's top-level one ("Accelerate CLI tool", which reports
        # the options no subcommand took) and launch.py's when run as accelerate-launch or python -m
        "Accelerate CLI tool: error: ",
        "Accelerate launch command: error: ",
        # torch/distributed/run.py and elastic's launch config: torchrun's own checks of its options
        "--local_ranks_filter must be a comma-separated list of integers",
        "Don't use both the '--no-python' flag and the '--module' flag",
        "min_nodes must be > 0 and <= max_nodes",
        "max_restarts must be >= 0",
        # accelerate/commands/launch.py; deepspeed/launcher/runner.py
        "--module and --no_python cannot be used together",
        "--no_local_rank argument is not supported in Elastic training",
        "requires same number of devices per node",
        "mvapich is not installed properly",
        "Expected MVAPICH2-GDR as return for mpiname",
        # torch/distributed/run.py: a static rendezvous endpoint without host or port; --no-python without
        # --use-env (torch.distributed.launch)
        "is missing in endpoint",
        "flag, you must also set the '--use-env' flag",
        # deepspeed/launcher/runner.py, launch.py: elastic and include/exclude options it refuses
        "Master Addr is required when elastic training is enabled",
        "include_str and exclude_str are mutually exclusive",
        "MIN:MAX format is only supported in elastic training",
        "is not in MIN:MAX format",
        "Max and Min nodes should be positive",
        "Don't use both the '--no_python' flag and the '--module' flag",
        "backend does not support worker include/exclusion",
        "backend does not support limiting num nodes/gpus",
        "backend does not support remapping visible devices",
        "should not be a file, it should be a directory.",
        # accelerate/commands/launch.py: several machines without the main process's address
        "When using multiple machines, you need to specify the main process",
        "Your training script should be a python script and not",
        # Open MPI's mpirun (orte/prte help texts, orterun.c): more ranks than slots, root, daemons not started
        "There are not enough slots available in the system",
        "has detected an attempt to run as root",
        "was unable to reliably start one or more daemons",
        # pdsh (the deepspeed launcher's default) and ssh itself: 255 is ssh's own failure, not the command's
        "ssh exited with exit code ",
        "Host key verification failed",
        "Permission denied (",  # the match asks for the publickey method ssh lists
        # accelerate/commands/config/config_args.py (0.17+): a --config_file that does not exist; before 0.17
        # it fell back to the default config file, and CPython's open() named that one when it was missing too
        "The passed configuration file `",
        "default_config.yaml'",
        # torch/distributed/elastic/multiprocessing/api.py, run.py, launcher/api.py: torchrun's log and filter
        # options, LaunchConfig's shutdown timeout; rendezvous/dynamic_rendezvous.py, c10d_rendezvous_backend.py,
        # etcd_rendezvous_backend.py: --rdzv-conf's timeouts
        "log_dir: ",
        "Could not find entrypoint under 'torchrun.logs_specs[",
        "ranks set cannot be empty",
        "shutdown_timeout must be non-negative",
        ") must be positive.",
        "The read timeout must be a positive integer.",
        # accelerate/commands/launch.py: the TPU and SageMaker launchers' refusals
        "Your training script should have a function named",
        # fire/core.py (python-fire): an option the fired function has no parameter for (not the launcher's
        # --local_rank, local_rank_argument's); yacs/config.py _load_cfg_py_source: a .py config without cfg
        "Could not consume arg: ",
        "must have 'cfg' attr",
        "--no_python cannot be used with TPU launcher",
        "Docker containers are not supported for TPU pod launcher",
        "SageMaker requires a python training script file",
        "support argparse actions for `store_true` or `store_false`",
        "You need to provide an aws_access_key_id and aws_secret_access_key",
        # accelerate/commands/config/config_args.py: the config file it reads
        "A `distributed_type` must be specified in the config file",
    ),
    templates=(
        "system:argparse-unrecognized-arguments",
        "transformers:arguments-not-used-by-hfargumentparser",
        # deepspeed/launcher/runner.py: the hostfile the multi-node launcher reads
        "deepspeed:hostfile-is-empty-or-not-formatted",
        "deepspeed:bad-hostfile-text",
        "deepspeed:num-nodes-is-but-no-extra",
        "deepspeed:hostfile-contains-bad-entry-unable-to",
        "deepspeed:hostname-not-found-in-hostfile",
        "deepspeed:using-hostfile-at-but-host-was",
        "deepspeed:hostfile-contains-multiple-entries-for-unable",
        # deepspeed/launcher/runner.py: its multi-node backend, --no_ssh, the master's address, include/exclude
        "deepspeed:launcher-not-installed",
        "deepspeed:launching-training-without-ssh-but-node",
        # torch/csrc/distributed/c10d/socket.cpp: the client's retry while the store is not up, here on port 0
        "torch_cpp:no-socket-on-is-listening-yet",
        "deepspeed:unable-to-detect-suitable-master-address",
        "deepspeed:no-slot-specified-on-host",
        "deepspeed:cannot-specify-num-nodes-gpus-with",
        # torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py, rendezvous/utils.py, run.py
        "torch:rank-is-absent-in-rendezvousparameters-try",
        "torch:endpoint-is-absent-in-rendezvousparameterstry-add",
        "torch:port-is-absent-in-endpoint-try",
        "torch:the-hostname-of-the-rendezvous-endpoint",
        "torch:the-port-number-of-the-rendezvous",
        "torch:nnodes-is-not-in-min-max",
        "torch:unsupported-nproc-per-node-value",
        "system:argparse-nproc-per-node-invalid-int",
        "torch:the-minimum-number-of-rendezvous-nodes",
        "torch:the-maximum-number-of-rendezvous-nodes",
        "torch:the-rendezvous-backend-is-not-registered",
        "torch:the-rendezvous-configuration-string-must-be",
        "torch:the-rendezvous-configuration-option-does-not",
        "torch:the-rendezvous-configuration-option-does-not-2",
        "torch:the-rendezvous-configuration-option-must-have",
        "torch:the-maximum-number-of-nodes-must",
        "torch:the-minimum-number-of-nodes-must",
        "torch:the-etcd-protocol-must-be-http",
        "torch:the-protocol-must-be-http-or",
        "torch:invalid-store-type-given-currently-only",
        # lightning/pytorch/trainer/connectors/accelerator_connector.py: DDP in a notebook
        "lightning:trainer-strategy-is-not-compatible-with",
        # accelerate/commands/launch.py: its own checks of the launch options
        "accelerate:you-can-only-use-one-of",
        "accelerate:you-need-to-use-at-least",
        "accelerate:less-than-two-gpu-ids-were",
        "accelerate:you-need-to-manually-pass-in",
        # lightning: devices x num_nodes against torchrun's world size; a fork strategy off Linux
        "lightning:you-set-devices-and-num-nodes",
        "lightning:you-selected-trainer-strategy-but-process",
        "lightning:to-use-fabric-with-more",  # lightning/fabric/fabric.py: setup before fabric.launch()
        # torch/distributed/run.py, launcher/api.py: torchrun's option checks (round seven)
        "torch:local-ranks-filter-must-be-comma",
        "torch:don-use-both-the-no-python",
        "torch:min-nodes-must-be-and-max",
        "torch:max-restarts-must-be",
        "accelerate:module-and-no-python-cannot-be",
        # deepspeed/launcher/runner.py, multinode_runner.py: elastic without --no_local_rank, the MPI backends
        "deepspeed:no-local-rank-argument-is-not",
        "deepspeed:mpich-requires-same-number-of-devices",
        "deepspeed:intel-mpi-requires-same-number-of",
        "deepspeed:mvapich-requires-same-number-of-devices",
        "deepspeed:mpiname-does-not-exist-mvapich-is",
        "deepspeed:expected-mvapich2-gdr-as-return-for",
        # torch/distributed/run.py, launch.py
        "torch:endpoint-is-missing-in-endpoint-try",
        "torch:port-is-missing-in-endpoint-try",
        "torch:when-using-the-no-python-flag",
        # deepspeed/launcher/runner.py, launch.py, multinode_runner.py
        "deepspeed:master-addr-is-required-when-elastic",
        "deepspeed:include-str-and-exclude-str-are",
        "deepspeed:min-max-format-is-only-supported",
        "deepspeed:num-nodes-is-not-in-min",
        "deepspeed:max-and-min-nodes-should-be",
        "deepspeed:don-use-both-the-no-python",
        "deepspeed:backend-does-not-support-worker-include",
        "deepspeed:backend-does-not-support-limiting-num",
        "deepspeed:slurm-backend-does-not-support-remapping",  # deepspeed/launcher/multinode_runner.py
        "deepspeed:should-not-be-file-it-should",  # deepspeed/launcher/launch.py: --enable_each_rank_log
        # accelerate/commands/launch.py
        "accelerate:when-using-multiple-machines-you-need",
        "accelerate:when-using-multiple-machines-you-need-2",
        "accelerate:your-training-script-should-be-python",
        # Open MPI mpirun, pdsh and ssh: the multi-node launch itself (system.tsv)
        "system:openmpi-not-enough-slots",
        "system:openmpi-run-as-root",
        "system:openmpi-daemons-not-started",
        "schedulers:prte-failed-daemon-launch",  # PRRTE (Open MPI 5.x): the same text with its tool's name
        "schedulers:prte-not-enough-cpus",
        "system:pdsh-ssh-exit-code",
        "system:ssh-host-key-verification-failed",
        "system:ssh-permission-denied",
        "accelerate:the-passed-configuration-file-does-not",
        "system:accelerate-default-config-not-found",
        "torch:log-dir-is-file",
        "torch:could-not-find-entrypoint-under-torchrun",
        "torch:ranks-set-cannot-be-empty",
        "torch:shutdown-timeout-must-be-non-negative",
        "torch:the-timeout-must-be-positive",
        "torch:the-read-timeout-must-be-positive",
        "accelerate:your-training-script-should-have-function",
        "accelerate:no-python-cannot-be-used-with",
        "accelerate:docker-containers-are-not-supported-for",
        "accelerate:sagemaker-requires-python-training-script-file",
        "accelerate:sagemaker-doesn-support-argparse-actions-for",
        "accelerate:you-need-to-provide-an-aws",
        "accelerate:distributed-type-must-be-specified-in",
        "third_party:fire-could-not-consume-arg",
        "third_party:yacs-python-module-must-have-cfg",
    ),
    match=R(
        rf"unrecognized arguments: (?P<options>[^\n]{{0,300}}?(?:{LAUNCHER_OPTIONS})[^\n]{{0,200}})|"
        r"(?P<hostfile>Hostfile is empty or not formatted correctly|Bad hostfile text[^\n]{0,200}|"
        r"Num nodes is >1 but no extra nodes available via hostfile|Hostfile contains a bad entry[^\n]{0,200}|"
        r"Hostname '[^'\n]{0,100}' not found in hostfile|Hostfile contains multiple entries for[^\n]{0,100}|"
        r"host=[^\n]{0,100} was not reachable via ssh[^\n]{0,200})|"
        r"(?P<ds_launcher>launcher '\w{1,20}' not installed|mpiname does not exist, mvapich is not installed "
        r"properly)|"
        r"(?P<ds_mvapich_gdr>Expected MVAPICH2-GDR as return for mpiname but received [^\n]{0,100})|"
        r"(?P<launcher_options>--local_ranks_filter must be a comma-separated list of integers[^\n]{0,80}|"
        r"Don't use both the '--no-python' flag and the '--module' flag[^\n]{0,40}|min_nodes must be > 0 and "
        r"<= max_nodes[^\n]{0,80}|max_restarts must be >= 0|--module and --no_python cannot be used together|"
        r"--no_local_rank argument is not supported in Elastic training|When using the '--no-python' flag, you "
        r"must also set the '--use-env' flag|MIN:MAX format is only supported in elastic training|num_nodes "
        r"[^\n]{0,20} is not in MIN:MAX format|Max and Min nodes should be positive|Don't use both the '--no_python' "
        r"flag and the '--module' flag[^\n]{0,40}|Master Addr is required when elastic training is enabled|"
        r"Your training script should be a python script and not[^\n]{0,100})|"
        r"(?P<mpi_slots>There are not enough slots available in the system[^\n]{0,80})|"
        r"(?P<mpi_root>[\w.-]{1,20} has detected an attempt to run as root)|"
        r"(?P<mpi_daemons>\w{1,10} was unable to reliably start one or more daemons)|"
        r"(?P<ssh_failed>[^\s:]{1,100}: ssh exited with exit code 255)|"
        # not git's own "git@github.com: Permission denied (publickey)." (a pip install from a git+ssh URL); ssh's
        # own words are git's too over ssh: likely
        r"(?<!\S)(?!git@)(?P<ssh_denied>[^\s:]{1,255}: Permission denied \(publickey[^\n)]{0,60}\)|"
        r"Host key verification failed)|"
        r"(?P<accelerate_multinode>When using multiple machines, you need to specify the main process (?:IP|port))|"
        r"(?P<ds_mpi_devices>(?:MPICH|Intel MPI|mvapich) requires same number of devices per node)|"
        r"(?P<ds_slurm_remap>slurm backend does not support remapping visible devices)|"
        r"(?P<ds_rank_log>[^\s:]{1,300} should not be a file, it should be a directory\.)|"
        r"(?P<ds_no_ssh>Launching training without ssh, but --node_rank is not set correctly)|"
        r"(?P<ds_master_addr>Unable to detect suitable master address via[^\n]{0,100})|"
        r"No socket on \((?P<rdzv_port0>[^,()\s]{1,255}), 0\) is listening yet|"
        r"(?P<ds_include>No slot '[^'\n]{0,40}' specified on host '[^'\n]{0,100}'|"
        r"Cannot specify num_nodes/gpus with include/exclude|include_str and exclude_str are mutually exclusive|"
        r"\w{1,20} backend does not support (?:worker include/exclusion|limiting num nodes/gpus))|"
        r"(?P<static_rdzv>(?:rank|endpoint) is absent in RendezvousParameters[^\n]{0,120}|"
        r"Port is absent in endpoint[^\n]{0,120}|(?:Endpoint|port) is missing in endpoint[^\n]{0,120})|"
        r"(?P<rdzv_format>The hostname of the rendezvous endpoint [^\n]{0,200}|The port number of the rendezvous "
        r"endpoint [^\n]{0,120}|nnodes=[^\n]{0,40} is not in \"MIN:MAX\" format|Unsupported nproc_per_node value: "
        r"[^\n]{0,40}|The (?:minimum|maximum) number of rendezvous nodes \([^\n]{0,200}|The rendezvous backend "
        r"'[^'\n]{0,60}' is not registered[^\n]{0,100}|The rendezvous configuration (?:string must be in format|"
        r"option '[^'\n]{0,60}' (?:does not represent a valid|must have a value))[^\n]{0,80}|The maximum number "
        r"of nodes \(\d+\) must be greater than or equal to the minimum number of nodes \(\d+\)|The minimum number "
        r"of nodes \(-?\d+\) must be greater than zero|The (?:etcd )?protocol must be HTTP or HTTPS|Invalid store "
        r"type given\. Currently only supports file and tcp)|"
        r"(?P<accelerate_mode>You can only use one of `--cpu`[^\n]{0,120}|You need to use at least 2 processes to "
        r"use `--multi_gpu`|Less than two GPU ids were configured[^\n]{0,80}|You need to manually pass in "
        r"`--num_processes` using this config yaml)|"
        r"(?P<lightning_world>You set `devices=\d+` and `num_nodes=\d+` in Lightning, but the product [^\n]{0,80})|"
        r"(?P<lightning_fork>You selected `Trainer\(strategy=[^\n]{0,40}\)` but process forking is not supported "
        r"on this platform)|"
        r"(?P<interactive>`?(?:Trainer|Fabric)\(strategy=[^\n]{0,60}\)`? is not compatible with an interactive environment)|"
        r"(?P<fabric_launch>To use Fabric with more than one device, you must call `\.launch\(\)`[^\n]{0,60})|"
        # the launcher's own argparse (torchrun, deepspeed, accelerate launch); not "launch.py" / "run.py", the
        # progs of python -m torch.distributed.launch/run, which a training script is often named too
        r"(?:^|\s)(?P<launcher_prog>torchrun|deepspeed|accelerate <command> \[<args>\] launch|Accelerate CLI tool|"
        r"Accelerate launch command): "
        r"error: (?P<launcher_error>[^\n]{1,300})|"
        r"argument --nproc_per_node: invalid int value: (?P<nproc_invalid>'[^'\n]{0,40}')|"
        r"(?P<acc_config_file>The passed configuration file `[^`\n]{1,300}` does not exist)|"
        r"(?P<torchrun_logs>log_dir: [^\s{][^\n]{0,300} is a file|Could not find entrypoint under 'torchrun\.logs_specs\["
        r"[^\n]{0,100}|ranks set cannot be empty)|"
        r"(?P<launch_shutdown_timeout>shutdown_timeout must be non-negative, got [^\n]{1,40})|"
        r"(?P<rdzv_timeout>The \w{1,20} timeout \([^)\n]{0,40}\) must be positive\.|The read timeout must be a "
        r"positive integer\.)|"
        r"(?P<accelerate_platform>Your training script should have a function named [^\n]{0,200}|--no_python cannot "
        r"be used with TPU launcher|Docker containers are not supported for TPU pod launcher[^\n]{0,100}|SageMaker "
        r"requires a python training script file[^\n]{0,100}|SageMaker doesn.t support argparse actions for "
        r"`store_true` or `store_false`[^\n]{0,60}|You need to provide an aws_access_key_id and "
        r"aws_secret_access_key when not using aws_profile)|"
        r"(?P<fire_arg>Could not consume arg: (?![^\n]{0,300}?(?:--|–|—)local[_-]rank)[^\n]{1,200})|"
        # CPython argparse (Lib/argparse.py parse_args) refusing the script's own command line, and transformers'
        # HfArgumentParser (hf_argparser.py parse_args_into_dataclasses) the arguments no dataclass field takes: an
        # option its parser does not define (not the launcher's --local_rank, local_rank_argument's; not a launcher's own options;
        # not a notebook kernel's -f <connection file> (jupyter/runtime/kernel-*.json), argparse_in_notebook's)
        r"(?P<script_args>(?:unrecognized arguments|not used by the HfArgumentParser): (?![^\n]{0,300}?(?:(?:--|–|—)local[_-]rank|"
        + LAUNCHER_OPTIONS
        + r"|[/\\]kernel-[\w.-]{1,80}\.json))[^\n]{1,300})|"
        r"(?P<yacs_py>Python module from file [^\n{}]{1,300} must have 'cfg' attr)|"
        r"(?P<accelerate_config_keys>A `distributed_type` must be specified in the config file\.)|"
        r"No such file or directory: '(?P<acc_default_config>[^'\n]{0,300}[/\\]accelerate[/\\]default_config\.(?:yaml|json))'"
    ),
    facts=(
        R(r"(?P<prog>[\w./-]{1,100}): error:"),
        # the launcher writes --include=localhost:<CUDA_VISIBLE_DEVICES> itself, on a single node only
        R(r"(?P<ds_no_slot>No slot '[^'\n]{0,40}' specified on host 'localhost')"),
        # runner.py's ssh check of the hostfile's first host: this machine (a hostfile left on one node), or another
        R(
            r"host=(?:(?P<ds_ssh_local>localhost|127\.0\.0\.1|::1)|(?P<ds_ssh_remote>[^\s]{1,100})) was not reachable via ssh"
        ),
    ),
    absorbs=("local_rank_argument",),
    # argparse naming the option's type as a typing construct: the program's own parser refuses every value
    # (versions.py's library_version_bug), not the command as typed
    reject=R(r"invalid typing\."),
    # deepspeed's "No slot 'N' specified on host" is an --include naming a slot the host lacks, which the
    # launcher itself writes from CUDA_VISIBLE_DEVICES (runner.py: "setting --include=localhost:0,2") and,
    # before deepspeedai/DeepSpeed#6530 (2024), checked against 0..count-1: only likely
    # ssh's "Permission denied (publickey)" is also git's over ssh (a pip install from git@...): likely alone
    # CPython's "No such file or directory" naming accelerate's default config: a --config_file that does not
    # exist, or accelerate never configured on this machine: likely
    # deepspeed's "host=<h> was not reachable via ssh" (runner.py main: `ssh -o PasswordAuthentication=no <h>
    # hostname` failed for any hostfile) is a hostfile left on a single node or a multi-node launch whose ssh is
    # not set up: certain for this machine's own name only. Open MPI's "unable to reliably start one or more
    # daemons" (PRRTE help-errmgr-base.txt, Open MPI's help-plm-base.txt) lists its causes: host names that do
    # not resolve, PATH/LD_LIBRARY_PATH, authority, /tmp, no route back to mpirun: certain beside ssh's refusal
    confirm=lambda hits, ctx: (
        not all(
            h.facts.get("ds_no_slot")
            or h.facts.get("ssh_denied")
            or h.facts.get("acc_default_config")
            or h.facts.get("ds_ssh_remote")
            or h.facts.get("mpi_daemons")
            or h.facts.get("script_args")
            for h in hits
        )
        or (any(h.facts.get("mpi_daemons") for h in hits) and any(h.facts.get("ssh_denied") for h in hits))
    ),
    also=(
        Alternative(
            "ssh_connect",
            "a multi-node launch whose passwordless ssh to that host is not set up",
            "From this node, `ssh -o PasswordAuthentication=no <host> hostname` must print the host's name: "
            "ssh-keygen, ssh-copy-id <host>, accept its key once; or, on a single node, remove the hostfile.",
            when=("ds_ssh_remote",),
        ),
        Alternative(
            "mpi_network",
            "a daemon that started but could not connect back to mpirun (no common network, a firewall)",
            "Open the TCP ports between the hosts and name the interface they share: mpirun --mca "
            "oob_tcp_if_include <iface> --mca btl_tcp_if_include <iface> (ip -br addr on each host).",
            when=("mpi_daemons",),
        ),
        Alternative(
            "library_version_bug",
            "the deepspeed launcher's own handling of CUDA_VISIBLE_DEVICES (fixed in DeepSpeed in 2024)",
            "With CUDA_VISIBLE_DEVICES=0,2 the launcher passes --include localhost:0,2 itself, and releases "
            "before deepspeedai/DeepSpeed#6530 refuse GPU ids that are not 0..n-1: upgrade DeepSpeed (pip "
            "install -U deepspeed), or unset CUDA_VISIBLE_DEVICES and pass deepspeed --include localhost:0,2.",
            when=("ds_no_slot",),
        ),
    ),
    describe=_launch_command,
)


def _mpi_discovery(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    """deepspeed/comm/comm.py mpi_discovery: DeepSpeed asked MPI for the ranks, and its process group has others."""
    summary = (
        f"DeepSpeed found no launcher's rank environment (RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) and asked MPI: "
        f"MPI gave this process {facts['mpi_what']} {facts['mpi_rank']}, the process group already formed says "
        f"{facts['torch_rank']}: the script (or its framework) formed it from its own ranks"
        + (
            ", in a process MPI did not start (a world of 1)"
            if facts["mpi_rank"] == "1" and facts["mpi_what"] == "world size"
            else ""
        )
        + on_ranks(hits)
    )
    fix = (
        "DeepSpeed's init_distributed reads the ranks a launcher sets; only when RANK, WORLD_SIZE, LOCAL_RANK, "
        "MASTER_ADDR and MASTER_PORT are not all in the environment does it ask MPI (mpi4py), and then the "
        "process group the script or its framework formed before (deepspeed.init_distributed or "
        "init_process_group with ranks of its own, a framework's own process spawning) must agree with MPI's. "
        "Start the script with the deepspeed launcher or torchrun (which set all five), or, under mpirun, "
        "set them from Open MPI's before anything initialises: RANK=$OMPI_COMM_WORLD_RANK "
        "WORLD_SIZE=$OMPI_COMM_WORLD_SIZE LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK plus MASTER_ADDR / MASTER_PORT, "
        "and let the script take its rank and world size from them (not from its own arguments); a framework "
        "that starts the processes itself (Lightning's DeepSpeed strategy) runs without mpirun, or with mpi4py "
        "uninstalled in an environment where nothing uses MPI."
    )
    return summary, fix


def _rank_env(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("mpi_what"):
        return _mpi_discovery(facts, hits)
    if facts.get("ds_mpich_helper"):
        return (
            "deepspeed --launcher mpich's helper found no rank in the environment the mpirun gave it (it reads "
            "PMIX_RANK or PMI_RANK, and PALS_LOCAL_RANKID or MPI_LOCALRANKID for the local rank)"
            + on_ranks(hits),
            "deepspeed's mpich launcher runs launcher_helper.py under the mpirun first on PATH and takes the ranks "
            "from the variables MPICH's Hydra, Intel MPI or Cray PALS set; another MPI's mpirun (Open MPI sets "
            "OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_LOCAL_RANK instead) leaves them unset. Launch with the "
            "launcher of the MPI that is installed: deepspeed --launcher openmpi --hostfile hostfile train.py for "
            "Open MPI, or put MPICH's (or Intel MPI's) bin folder first on PATH (check `mpirun --version`).",
        )
    var = facts.get("missing_var", "RANK")
    what = (
        "the MPI launcher's environment variables are" if var == "MPI" else f"environment variable {var} is"
    )
    summary = f"{what} not set: the processes were started without the launcher that sets them" + on_ranks(
        hits
    )
    fix = (
        "env:// reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (and LOCAL_RANK for the GPU), which "
        "torchrun sets. Start the script with torchrun --nproc_per_node=N (one torchrun per node under "
        "srun/mpirun), or set them from the scheduler before init_process_group:\n"
        "mpirun: RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE "
        "LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK\n"
        "srun: RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID, and "
        "MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1) MASTER_PORT=29500\n"
        "LSF (Lightning's LSFEnvironment): start the script with jsrun, which sets JSM_NAMESPACE_*; DeepSpeed's "
        "MPI discovery: start it with mpirun (or use the deepspeed launcher / torchrun instead)."
    )
    return summary, fix


RANK_ENV_MISSING = Recogniser(
    kind="rank_env_missing",
    title="rank environment not set",
    anchors=(
        "expected, but not set",
        "DeepSpeed requires the LOCAL_RANK environment variable",
        "LOCAL_RANK is not in the environment",
        "Make sure you run your executable with `jsrun`",
        "Ensure you are running the script with an MPI-compatible launcher",
        "raise _env_error(",
        # deepspeed/launcher/launcher_helper.py env_mapping (v0.14.5+): the mpich launcher's helper
        "rank number is not in current env!",
        # deepspeed/comm/comm.py mpi_discovery, reached only when a launcher's rank variables are not all set
        "does not match torch rank",
        "does not match torch world size",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "MPI environment variables are not set",
    ),
    templates=(
        "torch:environment-variable-expected-but-not-set",
        "torch:local-rank-is-not-in-the",  # distributed_c10d.py get_node_local_rank()
        "deepspeed:deepspeed-requires-the-local-rank-environment",  # deepspeed/comm/comm.py init_distributed
        # lightning/fabric/plugins/environments/lsf.py: an LSF job started without jsrun
        "lightning:cannot-determine-world-size-environment-variable",
        "lightning:cannot-determine-global-rank-environment-variable",
        "lightning:cannot-determine-local-rank-environment-variable",
        # deepspeed/launcher/multinode_runner.py: an MPI launch whose processes lack the MPI environment
        "deepspeed:mpi-environment-variables-are-not-set",
        "deepspeed:mpi-rank-does-not-match-torch",  # deepspeed/comm/comm.py mpi_discovery
        "deepspeed:mpi-world-size-does-not-match",
        "deepspeed:rank-number-is-not-in-current",
    ),
    # the rank's identity; a missing MASTER_ADDR / MASTER_PORT is the rendezvous' (rendezvous_or_port)
    match=R(
        r"environment variable (?:RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE) expected|"
        r'raise _env_error\("(?:RANK|WORLD_SIZE)"\)|'
        r"DeepSpeed requires the LOCAL_RANK environment variable|LOCAL_RANK is not in the environment|"
        r"Make sure you run your executable with `jsrun`|MPI environment variables are not set|"
        r"(?P<ds_mpich_helper>rank number is not in current env!)|"
        # the MPI discovery's words only with MPI's and torch's numbers, as comm.py formats them
        r"MPI (?:rank|world size) -?\d+ does not match torch (?:rank|world size) -?\d+"
    ),
    facts=(
        R(r"environment variable (?P<missing_var>\w+) expected, but not set"),
        ENV_ERROR_RAISED,
        R(r"DeepSpeed requires the (?P<missing_var>LOCAL_RANK) environment variable"),
        R(r"(?P<missing_var>LOCAL_RANK) is not in the environment"),
        R(r"Environment variable `(?P<missing_var>JSM_NAMESPACE_\w{1,20})` not found"),
        R(r"(?P<missing_var>MPI) environment variables are not set"),
        R(
            r"MPI (?P<mpi_what>rank|world size) (?P<mpi_rank>-?\d+) does not match torch (?:rank|world size) "
            r"(?P<torch_rank>-?\d+)"
        ),
    ),
    absorbs=("rendezvous_or_port",),
    # torch's env:// rendezvous says a variable is missing, not why: a scheduler (mpirun, srun) that started the
    # processes without a torch launcher, or a plain `python train.py` of a script written for one. DeepSpeed's,
    # LSF's and MPI discovery's own words name the launcher that was expected: those stay certain.
    # DeepSpeed's and torch's own words about LOCAL_RANK say the same: nothing set it, which a plain `python
    # train.py` and a scheduler without a torch launcher (srun, mpirun) both leave. Certain only when the log
    # shows a scheduler started the processes; LSF's jsrun and MPI discovery name the launcher they expected.
    generic=(
        "expected, but not set",
        "raise _env_error(",
        "DeepSpeed requires the LOCAL_RANK environment variable",
        "LOCAL_RANK is not in the environment",
        # DeepSpeed's MPI discovery (comm.py) runs only when a launcher's rank variables are not all set, and
        # refuses a process group formed before it with other ranks: a script's own ranks under mpirun, a framework
        # that spawned the processes itself (Lightning's DeepSpeed strategy, MPI's world of 1), one launcher inside
        # another; the message does not say which, so never certain (a scheduler in the log does not decide it)
        "does not match torch rank",
        "does not match torch world size",
    ),
    confirm=lambda hits, ctx: (
        any(h.specific for h in hits)
        or ("saw_scheduler" in ctx.facts and not all("mpi_what" in h.facts for h in hits))
    ),
    also=(
        Alternative(
            "not_launched_distributed",
            "a script written for a distributed launch run as a plain process",
            "Start it the way its README does (torchrun --nproc_per_node=N train.py, or the repository's "
            "launch script); to run one process without a launcher, skip init_process_group when WORLD_SIZE is "
            "not in os.environ (or pass its single-GPU option).",
            unless=("mpi_what", "ds_mpich_helper"),
        ),
        Alternative(
            "conflicting_rank_env",
            "one launcher inside another: mpirun around a per-node launcher or a framework that spawns the "
            "processes itself, each giving its own ranks",
            "Let one launcher start one process per GPU: mpirun -np <GPUs in all> python train.py, or the deepspeed "
            "launcher / torchrun without an mpirun around it.",
            when=("mpi_what",),
        ),
    ),
    describe=_rank_env,
)


def _slurm(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("slurm_refused"):
        return (
            f"SLURM refused to start the job step: {facts['slurm_refused'].strip()}" + on_ranks(hits),
            "srun inside a job can only use what the job was given: its -n/--ntasks, --cpus-per-task, --gres=gpu:N "
            "and --mem must fit the allocation (#SBATCH --nodes, --ntasks-per-node, --cpus-per-task, "
            "--gres=gpu:N, --mem), and the allocation must fit the partition's nodes (sinfo -o '%P %c %m %G'). "
            "Ask sbatch/salloc for what the step needs (one task per GPU: --ntasks-per-node=<GPUs> "
            "--gres=gpu:<GPUs>), or start the step with fewer (srun -n <tasks in the allocation>); "
            "scontrol show job $SLURM_JOB_ID shows what the job got.",
        )
    if facts.get("slurm_nodes"):
        return (
            f"Lightning and SLURM disagree on the nodes: num_nodes={facts['num_nodes']}, --nodes={facts['slurm_nodes']}"
            + on_ranks(hits),
            "Trainer(num_nodes=N) must equal the job's #SBATCH --nodes=N (and devices= its --ntasks-per-node, "
            "with --gres=gpu:devices); start the script with srun python train.py inside the sbatch script.",
        )
    summary = "Lightning and SLURM disagree on the tasks per node" + (
        f": devices={facts['devices']}, --ntasks-per-node={facts['ntasks']}" if facts.get("devices") else ""
    )
    fix = (
        "Under SLURM, Lightning starts one process per task: --ntasks-per-node must equal Trainer(devices=N) "
        "(and --nodes equal num_nodes), with --gres=gpu:N; use --ntasks-per-node, not --ntasks, and start "
        "the script with srun python train.py inside the sbatch script. A SLURM_* variable left from an "
        "interactive allocation (salloc) is read as a job: unset SLURM_NTASKS SLURM_JOB_NAME, or run with "
        "Lightning's plugins=[LightningEnvironment()]."
    )
    return summary + on_ranks(hits), fix


SLURM_ENV = Recogniser(
    kind="slurm_env",
    title="SLURM tasks and Lightning devices disagree",
    anchors=(
        "but the number of tasks per node configured in SLURM",
        "in your SLURM bash script, but this variable",
        "but the number of nodes configured in SLURM",
        # srun's refusal of a step the allocation cannot hold (slurm_errno.c's reasons)
        "More processors requested than permitted",
        "Requested node configuration is not available",
        "Memory required by task is not available",
        "Invalid generic resource (gres) specification",
    ),
    templates=(
        "lightning:you-set-devices-in-lightning-but",
        "lightning:you-set-ntasks-in-your-slurm",
        "lightning:you-set-num-nodes-in-lightning",  # lightning/fabric/plugins/environments/slurm.py
        "system:slurm-more-processors-than-permitted",
        "system:slurm-node-configuration-not-available",
        "system:slurm-memory-required-not-available",
        "system:slurm-invalid-gres",
    ),
    facts=(
        R(
            r"(?P<slurm_refused>(?:Unable to create (?:job )?step[^\n:]{0,40}: |error: )?(?:More processors "
            r"requested than permitted|Requested node configuration is not available|Memory required by task is "
            r"not available|Invalid generic resource \(gres\) specification))"
        ),
        R(r"(?P<slurm_step>Unable to create (?:job )?step for job)"),
        R(
            r"num_nodes=(?P<num_nodes>\d+)` in Lightning, but the number of nodes configured in SLURM "
            r"`--nodes=(?P<slurm_nodes>\d+)`"
        ),
        R(
            r"devices=(?P<devices>\d+)` in Lightning, but the number of tasks per node configured in SLURM "
            r"`--ntasks-per-node=(?P<ntasks>\d+)`"
        ),
    ),
    # slurm_errno.c's reasons are printed for a job step srun cannot fit in its allocation (srun/launch.c "Unable
    # to create step for job N: ...") and for a job request sbatch, salloc or a bare srun cannot place (sbatch.c
    # "Batch job submission failed: ...", salloc.c "Job submit/allocate failed: ..."): certain on the step's words
    confirm=lambda hits, ctx: (
        any("slurm_step" in h.facts or "slurm_nodes" in h.facts or "devices" in h.facts for h in hits)
        or not any("slurm_refused" in h.facts for h in hits)
    ),
    also=(
        Alternative(
            "slurm_request",
            "a job request no node of the partition can hold (sbatch, salloc or srun asking for the allocation)",
            "Ask for what one node has: sinfo -p <partition> -o '%n %c %m %G' lists each node's CPUs, memory and "
            "GPUs; lower --gres=gpu:N, --mem, --cpus-per-task or --ntasks-per-node to fit, or choose a partition "
            "whose nodes have them.",
            unless=("slurm_step",),
        ),
    ),
    describe=_slurm,
)


# accelerate's words for fp8 mixed precision without the package it runs through (older releases name
# transformer_engine alone; a function of utils/transformer_engine.py names itself)
_FP8_PACKAGE = R(
    r"(?:requires `?(?P<fp8_package>transformer_engine)`?(?: or `MS-AMP`)? to be installed|"
    r"`(?P<fp8_missing>transformer_engine)` was not found on your system|(?P<msamp_missing>MS-AMP) was not found on "
    r"your system)"
)


def _fp8_package(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    package = "MS-AMP" if "msamp_missing" in facts else "transformer_engine"
    summary = (
        f"fp8 mixed precision was chosen, and {package}, the package accelerate runs it through, is not "
        "installed in the environment the job ran in" + on_ranks(hits)
    )
    fix = (
        "accelerate trains in fp8 through NVIDIA Transformer Engine (or MS-AMP, or torchao), and finds none "
        "installed (it checks for the package and its pip metadata). Install it in the job's environment:\n"
        "pip install --no-build-isolation 'transformer_engine[pytorch]'\n"
        "fp8 needs a GPU of compute capability 8.9 or higher (Ada, Hopper and later). Or train in another "
        "precision: mixed_precision: bf16 (or fp16) in the accelerate config, accelerate launch "
        "--mixed_precision bf16, or Accelerator(mixed_precision='bf16')."
    )
    return summary, fix


# modules whose PyPI distribution is named otherwise than the module's top package (the names each project's
# setup.py / pyproject.toml declares): flash-attn's setup.py PACKAGE_NAME "flash_attn" publishes "flash-attn";
# NVIDIA's modulus-launch publishes modulus.launch as "nvidia-modulus.launch"
PIP_DISTRIBUTION = {
    "flash_attn": "flash-attn",
    "modulus.launch": "nvidia-modulus.launch (the modulus-launch package)",
    # the compiled packages beside torch whose pip name, index or build differs from the module (extension_packages.py)
    **extension_packages.PIP_INSTALL,
}


def pip_distribution(module: str) -> str:
    """The name to pip install for an import of ``module``: its table entry, else its top package."""
    for name, distribution in PIP_DISTRIBUTION.items():
        if module == name or module.startswith(name + "."):
            return distribution
    return module.split(".")[0]


def _install_line(module: str) -> str:
    """What to install for a missing ``module``: the table's name, else its top package's with the caveat that a
    module's name is not always the name it has on PyPI (a name there may be another project's)."""
    distribution = pip_distribution(module)
    if distribution != module.split(".")[0]:
        return f"pip install {distribution}"
    return (
        f"install the package that provides it (pip install {distribution} where that is its name on PyPI: a "
        "module's name is not always its package's, cv2 is opencv-python, and a submodule of another package "
        "comes only with that package's install)"
    )


def _missing_launcher(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("cuda_init_unknown"):
        return cuda_init.explain(hits)
    if facts.get("cublas_unsupported") or facts.get("cublas_unsupported_thc"):
        return cublas_build.explain(hits)
    if facts.get("backend"):
        summary, fix = missing_packages.explain_backend(facts)
        return summary + on_ranks(hits), fix
    if {"fp8_package", "fp8_missing", "msamp_missing"} & facts.keys():
        return _fp8_package(facts, hits)
    said = simulators.explain_map(facts)
    if said:
        return said[0] + on_ranks(hits), said[1]
    said = installers.explain_scm(facts)
    if said:
        return said
    if "command" not in facts and "module" in facts:
        module = facts["module"]
        importer = facts.get("raised_in_package")
        top = module.split(".")[0]
        if importer and importer == top and "." in module and facts.get("raised_in_relative_import"):
            # the installed package's relative import of its own module (not a namespace package's, google.*,
            # whose parts are other distributions): its files and its code disagree
            return (
                f"the installed {importer} imports its own module '{module}', which its installed files do not "
                f"have: a release (or a checkout) of {importer} whose code imports a module it does not ship, or "
                "an install or upgrade left half done" + on_ranks(hits),
                f"Reinstall it whole: pip install --force-reinstall --no-deps {top} (pip show {top} names the "
                f"release installed). If that release itself lacks the module, install the one that fixed it: "
                f"pip install -U {top}, or, installed from a git checkout, pull the latest commit and reinstall "
                "(pip install -e .); else pin the release before the one that broke.",
            )
        if importer and importer not in (top, "importlib"):
            # raised inside an installed package's own import: a dependency of that package is missing
            return (
                f"{importer} imports '{module}', which is not installed in the environment the job ran in: a "
                f"dependency of {importer} (an optional one this feature needs, or one this {importer} release "
                "requires)" + on_ranks(hits),
                f"Install it in the same environment: pip install {top} (the version {importer} asks for: pip show "
                f"{importer} lists its requirements; its docs name the extras, e.g. pip install '{importer}[...]'). "
                f"If {importer} should not need it here, the installed {importer} release may import it by "
                f"mistake or expect another version of it: upgrade or pin {importer} to the release your project "
                "uses.",
            )
        return (
            f"the Python that ran the script cannot import '{module}': the package is not installed in the "
            "environment the job ran in" + on_ranks(hits),
            f"Under torchrun, deepspeed or accelerate the workers run the launcher's own Python: a launcher from "
            "another environment (a system install, `module load`, another conda env or virtual env) does not "
            f"see this environment's packages. Compare `which torchrun` with `which python`, activate the virtual "
            "env / conda env in the job script before launching, or launch through the Python that has the "
            "package: python -m torch.distributed.run ... (what torchrun runs). If it is the same environment, "
            f"the package is missing there: {_install_line(module)}.",
        )
    if facts.get("remote_python"):
        host, python = facts["remote_host"], facts["remote_python"]
        return (
            f"{host} has no {python}: the command pdsh ran there (the deepspeed launcher's multi-node launch "
            "names this node's own Python) names an interpreter that host does not have" + on_ranks(hits),
            f"deepspeed's multi-node launch (pdsh) runs the same command on every host of the hostfile: cd to "
            f"this folder, then {python} -u -m deepspeed.launcher.launch. Each host needs that Python at the same "
            "path with the same packages: the same conda env / virtual env on a shared filesystem, or created at "
            f"the same path on every node (ssh {host} ls {python} to check); the project folder must be at the "
            "same path there too.",
        )
    command = facts.get("command", "torchrun")
    if command.startswith("mpirun"):
        return (
            "accelerate launch was asked for an MPI launch but finds no mpirun or mpiexec" + on_ranks(hits),
            "accelerate's multi-CPU launch starts the processes with mpirun: install an MPI (Open MPI: apt "
            "install openmpi-bin; or Intel MPI, MVAPICH) and put its bin folder on PATH in the job's environment "
            "(module load openmpi), or launch without MPI (accelerate launch --num_processes N, or torchrun).",
        )
    return (
        f"{command} is not installed in the environment the job runs in" + on_ranks(hits),
        f"The job's environment has no {command} on PATH (another conda env / module than the one torch is in, "
        "or srun starting it before the environment is activated). Activate the environment (or module load "
        "the one with torch) inside the job script before srun, or start the launcher through the Python that "
        "has torch: python -m torch.distributed.run ... (what torchrun runs)."
        + (
            " torch before 1.10 installs no torchrun command at all (python -m torch.distributed.launch there)."
            if command == "torchrun"
            else ""
        ),
    )


def _torch_before_torchrun(ctx: Context) -> bool:
    """Whether the log states a torch release older than 1.10, which installs no ``torchrun`` command (setup.py's
    console script came with 1.10; 1.9 has torch.distributed.run as a module only)."""
    version = re.match(
        r"(\d+)\.(\d+)\.",
        printed_versions.shown(ctx.facts, "torch") or str(ctx.facts.get("torch_version", "")),
    )
    return version is not None and (int(version[1]), int(version[2])) < (1, 10)


def _not_an_old_torch(hits: list[Hit], ctx: Context) -> bool:
    """Certain as the anchors decide, unless the missing command is torchrun and the log states a torch before
    1.10, which has none: then likely, the release named."""
    if any(h.facts.get("command") == "torchrun" for h in hits) and _torch_before_torchrun(ctx):
        return False
    return any(h.specific for h in hits)


_not_an_old_torch.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


_LAUNCHER = r"(?:torchrun|deepspeed|accelerate)"
# a research repository's CUDA operators built in its own folder are no package to install (compiled_ops.py)
# and neither are the modules only a package's own build provides: mmcv._ext, apex's amp_C (extension_packages.py)
_COMPILED_OP = (
    rf"(?:MultiScaleDeformableAttention|{compiled_ops.IN_REPO_NAME}|{extension_packages.BUILT_MODULE})'"
)
_NOT_FOUND = (
    # bash "torchrun: command not found", dash "sh: 1: /env/bin/torchrun: not found", slurmstepd's execve,
    # zsh "zsh: command not found: torchrun", Ubuntu's command-not-found "Command 'torchrun' not found"
    rf"(?:execve\(\): |^|[\s/]){_LAUNCHER}(?:: No such file| ?: command not found|: not found)|"
    rf"command not found: {_LAUNCHER}\b|[Cc]ommand '?{_LAUNCHER}'? not found"
)

# the remote shell (bash "bash: line 1: /env/bin/python: No such file or directory", dash "sh: 1: ...: not found")
# refusing the launching node's own interpreter path on another host
_PDSH_REMOTE_PYTHON = (
    r"pdsh@[^\s:]{1,255}: (?P<remote_host>[^\s:]{1,255}): (?:ba|z|da)?sh(?:: (?:line )?\d+)?: "
    r"(?P<remote_python>/[^\s:]{0,300}/python[\d.]{0,5})(?:: No such file or directory|: not found)"
)

MISSING_LAUNCHER = Recogniser(
    kind="broken_install",
    title="launcher or package missing from the environment the job runs in",
    anchors=(
        "error: execve(): ",
        ": command not found",
        ": not found",
        "command not found: ",
        "ommand torchrun not found",
        "ommand 'torchrun' not found",
        "ommand deepspeed not found",
        "ommand 'deepspeed' not found",
        "ommand accelerate not found",
        "ommand 'accelerate' not found",
        "' not found, but can be installed with",
        "mpirun or mpiexec were not found",
        "No module named '",
        # deepspeed/launcher/multinode_runner.py PDSHRunner: each host runs `cd <this folder>; <this Python> -u -m
        # deepspeed.launcher.launch ...` through pdsh, which prefixes the remote shell's words with
        # "pdsh@<this host>: <host>: "
        "pdsh@",
        # accelerate (commands/launch.py, state.py): its DeepSpeed launch in a Python without deepspeed
        "DeepSpeed is not installed => run",
        "DeepSpeed is not available => install it",
        # accelerate: fp8 mixed precision (state.py, accelerator.py, utils/transformer_engine.py) without the
        # package it runs through; utils/imports.py checks for it with find_spec and its pip metadata
        "requires `transformer_engine` or `MS-AMP` to be installed",
        "requires `transformer_engine` to be installed",
        "requires transformer_engine to be installed",
        "`transformer_engine` was not found on your system",
        "MS-AMP was not found on your system",
        # transformers' requires_backends (utils/import_utils.py): a class's optional library not installed
        missing_packages.BACKEND_ANCHOR,
        # pysc2's run config: a StarCraft II map not copied into the game's Maps folder (simulators.py)
        *simulators.MAP_ANCHORS,
        # setuptools-scm: a project versioned from git, installed from a tree without git (installers.py)
        *installers.SCM_ANCHORS,
        # CUDA's "unknown error" at torch's first call to the driver: the host's driver state (cuda_init.py)
        *cuda_init.ANCHORS,
        # cuBLAS refusing a plain matrix multiply as not supported on this GPU: a torch build that does not fit it
        # (cublas_build.py)
        *cublas_build.ANCHORS,
    ),
    # a submodule of a library whose modules move between releases is a version, not a missing package
    # (kinds/versions.py reads it): "No module named 'torch._six'"
    match=R(
        rf"{_NOT_FOUND}|{_PDSH_REMOTE_PYTHON}|execve\(\): bad interpreter\(|mpirun or mpiexec were not found|No module named '(?!torch')(?!{SUBMODULE})(?!{_COMPILED_OP})[\w.]+'|"
        r"DeepSpeed is not (?:installed|available) =>|"
        + _FP8_PACKAGE.pattern
        + "|"
        + missing_packages.BACKEND.pattern
        + "|"
        + simulators.MAP.pattern
        + "|"
        + installers.SCM.pattern
        + "|"
        + cuda_init.FACT.pattern
        + "|"
        + cublas_build.FACT.pattern
    ),
    templates=(
        "system:slurm-execve-no-such-file",
        "schedulers:slurmstepd-execve-bad-interpreter",
        "system:shell-command-not-found",
        "system:dash-command-not-found",
        "system:zsh-command-not-found",
        "system:ubuntu-command-not-found",
        "system:python-no-module-named",
        "schedulers:pdsh-remote-python-not-found",
        "accelerate:mpirun-or-mpiexec-were-not-found",  # accelerate/utils/launch.py: its MPI launch
        "accelerate:deepspeed-is-not-installed-run-pip3",
        "accelerate:deepspeed-is-not-available-install-it",
        "accelerate:using-fp8-precision-requires-transformer-engine",
        "accelerate:transformer-engine-was-not-found-on",
        "accelerate:ms-amp-was-not-found-on",
        "accelerate:using-has-transformer-engine-layers-requires",
        "accelerate:using-convert-model-requires-transformer-engine",
        "accelerate:using-contextual-fp8-autocast-requires-transformer",
        "accelerate:using-apply-fp8-autowrap-requires-transformer",
        *missing_packages.BACKEND_TEMPLATES,
        *simulators.MAP_TEMPLATES,
        *installers.SCM_TEMPLATES,
        *cuda_init.TEMPLATES,
        *cublas_build.TEMPLATES,
    ),
    # a module the run cannot import is as often a package never installed as a launcher from another
    # environment (its workers run its own Python): only likely, and the fix says how to tell them apart
    # a map not found may also be an SC2PATH set to another installation or a map renamed between releases
    # setuptools-scm's line does not say whether the tree lacks .git or the machine lacks git
    # CUDA's unknown error names no cause of its own; the message itself guesses another (cuda_init.py)
    # cuBLAS's status names what the GPU lacks, not why (a build, a dtype, a cuBLAS bug: cublas_build.py)
    generic=(
        "No module named '",
        *simulators.MAP_ANCHORS,
        *installers.SCM_ANCHORS,
        *cuda_init.ANCHORS,
        *cublas_build.ANCHORS,
    ),
    # a bfloat16 call cuBLAS refused as unsupported: bf16_unsupported's line (cuda.BF16_UNSUPPORTED reads it)
    reject=cublas_build.BF16,
    # a module torch.load's unpickler imports is the checkpoint's pickled class's (checkpoint.CHECKPOINT_CLASS_MISSING)
    holds=lambda facts: not facts.get("raised_by_unpickler"),
    confirm=_not_an_old_torch,
    also=(
        Alternative(
            "dependency_version",
            "a torch older than 1.10, which installs no torchrun command",
            "Start it as python -m torch.distributed.run (torch 1.9) or python -m torch.distributed.launch "
            "--use_env (older), or upgrade torch to 1.10 or later.",
            when=("torchrun_missing",),
        ),
        *cuda_init.ALSO,
        *cublas_build.ALSO,
    ),
    facts=(
        R(
            rf"(?:execve\(\): |^|[\s/])(?P<command>{_LAUNCHER})(?:: No such file| ?: command not found|: not found)"
        ),
        R(r"(?:^|[\s/])(?P<torchrun_missing>torchrun)(?:: No such file| ?: command not found|: not found)"),
        R(r"command not found: (?P<torchrun_missing>torchrun)\b"),
        R(r"[Cc]ommand '?(?P<torchrun_missing>torchrun)'? not found"),
        R(rf"command not found: (?P<command>{_LAUNCHER})\b"),
        R(rf"[Cc]ommand '?(?P<command>{_LAUNCHER})'? not found"),
        R(r"(?P<command>mpirun or mpiexec) were not found"),
        # slurmstepd: the #! line of the script srun runs names an interpreter the node does not have
        R(r"execve\(\): bad interpreter\((?P<command>[^)\n]{1,200})\)"),
        R(rf"No module named '(?P<module>(?!torch')(?!{SUBMODULE})[\w.]+)'"),
        R(r"(?P<module>DeepSpeed) is not (?:installed|available) =>"),
        _FP8_PACKAGE,
        missing_packages.BACKEND,
        simulators.MAP,
        installers.SCM,
        cuda_init.FACT,
        *cublas_build.FACTS,
    ),
    describe=_missing_launcher,
)


def _hangup(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    signal = merged(hits).get("signal")
    if signal in ("SIGHUP", "1"):
        summary = "torchrun got SIGHUP and stopped the workers: the terminal or SSH session that started it was closed"
    else:
        summary = (
            "the launcher (torchrun) was stopped by a signal from outside and stopped the workers; the "
            "signal is not in the log, and most often it is SIGHUP from a closed terminal or SSH session"
        )
    fix = (
        "A run started from a terminal gets SIGHUP when the terminal or the SSH connection closes (nohup alone "
        "does not always keep torchrun's workers alive). Run it inside tmux or screen (tmux new -s train, start "
        "it there, detach with Ctrl-b d), or detach it fully: setsid nohup torchrun ... > train.log 2>&1 &, or "
        "submit it as a batch job. If the signal was SIGTERM or SIGINT instead, a scheduler's time limit or "
        "preemption, a kill, or Ctrl-C stopped it: check the job's time limit and resume from a checkpoint."
    )
    return summary + on_ranks(hits), fix


TERMINAL_HANGUP = Recogniser(
    # torch/distributed/elastic/multiprocessing/api.py (_terminate_process_handler: SignalException "Process
    # {pid} got signal: {sigval}") and elastic/agent/server/api.py ("Received %s death signal, shutting down
    # workers"; _exit_barrier's "Got termination signal: %s", the signal arriving while the agent waits for the
    # other nodes' agents after its own workers ended): torchrun itself received SIGTERM, SIGINT, SIGHUP or SIGQUIT
    kind="terminal_hangup",
    title="the launcher got a hang-up signal (its terminal closed)",
    anchors=(
        "SignalException",
        "death signal, shutting down workers",
        "got signal: ",
        "Got termination signal: ",
    ),
    templates=(
        "torch:process-got-signal",
        "torch:received-death-signal-shutting-down-workers",
        "torch_native:elastic-signal-exception",
        "torch:got-termination-signal",
    ),
    span=2,
    facts=(
        R(r"(?:got signal|Got termination signal): (?:Signals\.)?(?P<signal>SIG[A-Z]+|\d+)"),
        R(r"Received (?:Signals\.)?(?P<signal>SIG[A-Z]+|\d+) death signal"),
    ),
    # a signal named that is not the hang-up is a scheduler, a kill or Ctrl-C: not this kind
    reject=R(
        r"(?:got signal: |Got termination signal: |Received )(?:Signals\.)?(?:SIGTERM|SIGINT|SIGQUIT|SIGKILL|15|2|3|9)\b"
    ),
    # certain only when the signal named is SIGHUP; the bare exception could be any of the four
    confirm=lambda hits, ctx: any(h.facts.get("signal") in ("SIGHUP", "1") for h in hits),
    describe=_hangup,
)


def _stopped(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    launcher = "deepspeed" if "ds_signal" in facts else "torchrun"
    signal = str(facts.get("signal") or facts.get("ds_signal") or "SIGTERM")
    signal = {"15": "SIGTERM", "2": "SIGINT"}.get(signal, signal)
    return (
        f"the launcher ({launcher}) was stopped by {signal} from outside, and it stopped its workers"
        + on_ranks(hits),
        "SIGINT is Ctrl-C; SIGTERM comes from a scheduler (Slurm's time limit or scancel, preemption, Kubernetes "
        "evicting the pod), a `timeout` wrapper or a kill. If the run had stopped making progress before it was "
        "stopped (no new lines for a long time), it was hung: each rank's last line says where it stopped, and "
        "on the next run torchdoctor launch --watchdog SECONDS ... prints every rank's Python stack when they "
        "stall. If it was a time limit: ask for more time, or save checkpoints often and resume from the last.",
    )


LAUNCHER_STOPPED = Recogniser(
    # torch/distributed/elastic/multiprocessing/api.py _terminate_process_handler ("Process {pid} got signal:
    # {sigval}"), elastic/agent/server/api.py ("Received %s death signal, shutting down workers"): torchrun
    # itself got SIGTERM or SIGINT (terminal_hangup reads SIGHUP), or got it while waiting at the exit barrier
    # ("Got termination signal: %s", agent/server/api.py _exit_barrier); deepspeed/launcher/launch.py's sigkill_handler
    # ("Main process received {SIGINT|SIGTERM}, exiting"), printed only when no worker had failed first (a failed
    # worker's return code makes it print "exits with return code = N" and exit instead): the deepspeed launcher
    # itself got the signal
    kind="launcher_stopped",
    title="the launcher stopped by a signal from outside",
    anchors=(
        "got signal: ",
        "death signal, shutting down workers",
        "Main process received ",
        "Got termination signal: ",
    ),
    templates=(
        "torch:process-got-signal",
        "torch:received-death-signal-shutting-down-workers",
        "torch_native:elastic-signal-exception",
        "deepspeed:main-process-received-exiting",
        "torch:got-termination-signal",
    ),
    match=R(
        r"(?:got signal: |Got termination signal: |Received )(?:Signals\.)?(?P<signal>SIGTERM|SIGINT|15|2)\b|"
        r"Main process received (?P<ds_signal>SIGTERM|SIGINT), exiting"
    ),
    # the signal says the launcher was stopped, not why (a time limit, a hang someone ended, Ctrl-C)
    confirm=lambda hits, ctx: False,
    describe=_stopped,
)


RECOGNISERS = (
    LAUNCH_COMMAND,
    LOCAL_RANK_ARGUMENT,
    RANK_ENV_MISSING,
    SLURM_ENV,
    MISSING_LAUNCHER,
    TERMINAL_HANGUP,
    LAUNCHER_STOPPED,
)
