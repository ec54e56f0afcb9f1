"""The four families `explain` knew least from its sources (launchers, communication, builds, DeepSpeed): their
templates read as the kinds they belong to, the healthy lines beside them left alone, and the anchors another
cause prints too leading only as "likely", with the other reading named.

Each case is the catalog template itself (its id beside it) with its placeholders filled with plausible values,
prefixed as the source raises or logs it (built as tests/test_explain_coverage.py builds its cases).
"""

from __future__ import annotations

import pytest
from explaining import explained
from test_explain_coverage import read_as_its_kind, template

from torchdoctor.explain.kinds import BY_KIND
from torchdoctor.explain.verdict import if_not_that

pytestmark = pytest.mark.usefixtures("every_message_seen")

NCCL_WARN = "node07:20931:21044 [3] NCCL WARN "
IPC = "7f3a1c000000"

# (template id, values, prefix, kind, confidence, words in the summary or the fix)
CASES = [
    # -- communication: NCCL's socket and InfiniBand WARNs (misc/socket.cc, transport/net_socket.cc, net_ib.cc)
    (
        "nccl:net-socket-no-interface-found",
        (),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["NCCL_SOCKET_IFNAME"],
    ),
    (
        "nccl:net-no-interface-found-in-the",
        ("10.1.4.17<45123>",),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["same subnet", "NCCL_SOCKET_IFNAME"],
    ),
    (
        "nccl:net-ib-remote-device-is-incompatible-3",
        ("mlx5_2", "0", "mlx5_0", "1", "IB"),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["NCCL_IB_HCA", "link layer"],
    ),
    (
        "nccl:net-ib-attempted-to-merge-incompatible-2",
        ("0", "mlx5_0", "1", "IB", "1", "mlx5_1", "1", "RoCE"),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["NCCL_IB_HCA"],
    ),
    (
        "nccl:net-ib-can-connect-net-devices",
        ("0", "2", "1", "2"),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["NCCL_IB_HCA"],
    ),
    (
        "nccl:net-ib-trying-to-merge-multiple-2",
        ("mlx5_0", "1", "mlx5_3", "2"),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["NCCL_IB_HCA"],
    ),
    (
        "nccl:net-ib-got-async-error-event",
        ("mlx5_1", "1", "port error"),
        NCCL_WARN,
        "network_fault",
        "certain",
        ["port error", "ibstat"],
    ),
    # -- communication: torch elastic's store backends and the store's server socket (all likely: see below)
    (
        "torch:the-connection-to-the-c10d-store",
        (),
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: ",
        "rendezvous_or_port",
        "likely",
        ["rdzv-endpoint"],
    ),
    (
        "torch:the-connection-to-etcd-has-failed",
        (),
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: ",
        "rendezvous_or_port",
        "likely",
        ["reachable"],
    ),
    (
        "torch:rendezvous-timeout-occurred-in-etcdrendezvoushandler",
        (),
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError: ",
        "rendezvous_or_port",
        "likely",
        ["--nnodes"],
    ),
    (
        "torch_cpp:the-server-socket-has-failed-to-6",
        (),
        "[W1125 10:02:11.402] [c10d] ",
        "rendezvous_or_port",
        "likely",
        ["rdzv-endpoint"],
    ),
    # -- launchers: torchrun / torch.distributed.launch (launcher/api.py, launch.py)
    (
        "torch:endpoint-is-missing-in-endpoint-try",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--master_addr", "--node_rank"],
    ),
    (
        "torch:port-is-missing-in-endpoint-try",
        ("10.1.4.17",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--master_port"],
    ),
    ("torch:when-using-the-no-python-flag", (), "ValueError: ", "launch_command", "certain", ["--no-python"]),
    # -- launchers: the deepspeed launcher (launcher/runner.py, launch.py, multinode_runner.py)
    (
        "deepspeed:master-addr-is-required-when-elastic",
        (),
        "AssertionError: ",
        "launch_command",
        "certain",
        ["--help"],
    ),
    (
        "deepspeed:include-str-and-exclude-str-are",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--include/--exclude"],
    ),
    (
        "deepspeed:min-max-format-is-only-supported",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["MIN:MAX"],
    ),
    (
        "deepspeed:num-nodes-is-not-in-min",
        ("1:2:4",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["MIN:MAX"],
    ),
    ("deepspeed:max-and-min-nodes-should-be", (), "ValueError: ", "launch_command", "certain", ["--nnodes"]),
    (
        "deepspeed:don-use-both-the-no-python",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--no-python"],
    ),
    (
        "deepspeed:backend-does-not-support-worker-include",
        ("slurm",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--include/--exclude"],
    ),
    (
        "deepspeed:backend-does-not-support-limiting-num",
        ("mvapich",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--num_nodes"],
    ),
    # -- launchers: accelerate launch (utils/launch.py)
    (
        "accelerate:when-using-multiple-machines-you-need",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--main_process_ip", "--machine_rank"],
    ),
    (
        "accelerate:when-using-multiple-machines-you-need-2",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--main_process_port"],
    ),
    (
        "accelerate:your-training-script-should-be-python",
        ("train.sh",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["train.sh"],
    ),
    # -- launchers: schedulers whose environment the processes lack (Lightning's LSF, DeepSpeed's MPI)
    (
        "lightning:cannot-determine-world-size-environment-variable",
        (),
        "ValueError: ",
        "rank_env_missing",
        "certain",
        ["JSM_NAMESPACE_SIZE", "jsrun"],
    ),
    (
        "deepspeed:mpi-environment-variables-are-not-set",
        (),
        "RuntimeError: ",
        "rank_env_missing",
        "certain",
        ["MPI", "mpirun"],
    ),
    # -- DeepSpeed: the engine and its config (runtime/engine.py, config.py)
    (
        "deepspeed:must-provide-optimizer-during-init-in-2",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["optimizer="],
    ),
    (
        "deepspeed:is-not-supported-deepspeed-optimizer",
        ("adamw_torch",),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["adamw_torch", "AdamW"],
    ),
    (
        "deepspeed:deepspeed-does-not-recognize-lr-scheduler",
        ("CosineAnnealing",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["WarmupCosineLR"],
    ),
    (
        "deepspeed:expected-string-path-to-an-existing",
        ("configs/ds_zero2.json",),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["configs/ds_zero2.json", "working directory"],
    ),
    (
        "deepspeed:num-stages-must-divide-distributed-world",
        ("3", "8"),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["num_stages"],
    ),
    (
        "deepspeed:bf16optimizer-requires-bfloat16-to-be-enabled",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"bf16": {"enabled": true}'],
    ),
    (
        "deepspeed:partial-offloading-only-supported-for-zero",
        (),
        "ValueError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"stage": 3'],
    ),
    # DeepSpeed's checkpoint loading (runtime/state_dict_factory.py): mp_rank_* files for another MP size
    (
        "deepspeed:invalid-checkpoints-and-world-size-for",
        (),
        "AssertionError: ",
        "checkpoint_world_size",
        "certain",
        ["merged", "tensor/model-parallel size"],
    ),
    (
        "deepspeed:invalid-checkpoints-and-world-size-for-2",
        (),
        "AssertionError: ",
        "checkpoint_world_size",
        "certain",
        ["split", "ds_to_universal"],
    ),
    # setuptools running a compiler that is not there (setuptools/_distutils/spawn.py)
    (
        "system:distutils-command-not-found",
        ("x86_64-linux-gnu-gcc",),
        "",
        "cuda_build",
        "certain",
        ["x86_64-linux-gnu-gcc", "build-essential"],
    ),
    (
        "deepspeed:unable-to-jit-load-the-op-2",
        ("fused_adam",),
        "RuntimeError: ",
        "cuda_build",
        "certain",
        ["pip install ninja"],
    ),
]


@pytest.mark.parametrize(
    ("ident", "values", "prefix", "kind", "confidence", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_a_weak_family_template_is_read_as_its_kind(ident, values, prefix, kind, confidence, words):
    assert ident in BY_KIND[kind].templates, f"{kind} does not cite {ident}"
    read_as_its_kind(ident, values, prefix, kind, confidence, words)


# (text, kind that leads as "likely", the other reading it must name): anchors a different cause prints too
LIKELY = [
    # the script's own required arguments are missing: the launcher's deprecation warning beside it is no evidence
    # that its --local_rank caused it (argparse reports a missing required argument before an unknown one)
    (
        "/opt/conda/lib/python3.10/site-packages/torch/distributed/launch.py:181: FutureWarning: The module "
        "torch.distributed.launch is deprecated\nand will be removed in future. Use torchrun.\n"
        "usage: train.py [-h] --config CONFIG\ntrain.py: error: the following arguments are required: --config",
        "local_rank_argument",
        "log.launch_command",
    ),
    # env:// without RANK: a scheduler without a torch launcher, or a plain `python train.py`
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK "
        "expected, but not set",
        "rank_env_missing",
        "log.not_launched_distributed",
    ),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
        "MASTER_ADDR expected, but not set",
        "rendezvous_or_port",
        "log.not_launched_distributed",
    ),
    # the rendezvous closed, or the others never joined: what a node that failed first leaves the rest with
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousClosedError",
        "rendezvous_or_port",
        "log.peer_closed",
    ),
    (
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        "rendezvous_or_port",
        "log.peer_closed",
    ),
    # NCCL giving up a connect: the wrong interface, a firewall, or a peer that died
    (
        NCCL_WARN + template("nccl:socketstartconnect-exceeded-retries", "34"),
        "network_interface",
        "log.rendezvous_or_port",
    ),
    (
        NCCL_WARN + template("nccl:socketpollconnect-exceeded-timeouts", "2"),
        "network_interface",
        "log.rendezvous_or_port",
    ),
    (
        NCCL_WARN
        + template(
            "nccl:connect-returned-exceeded-error-retry-count",
            "socketStartConnect",
            "Connection timed out",
            "34",
        ),
        "network_interface",
        "log.rendezvous_or_port",
    ),
    # gloo's full mesh failed: the interface a host name resolves to, or a firewall
    (
        "RuntimeError: "
        + template("torch_cpp:gloo-connectfullmesh-failed-with")
        + " [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        "network_interface",
        "log.rendezvous_or_port",
    ),
    # NCCL's proxy (proxy.cc): a local rank's proxy thread failed, or the rank went away
    (
        NCCL_WARN + template("nccl:proxy-call-to-rank-failed", "2", "Connect"),
        "nccl_error",
        "log.nccl_system_error",
    ),
    (
        NCCL_WARN + template("nccl:proxy-service-failed-to-execute-operation", "1", "Connect", "2", "3"),
        "nccl_error",
        "log.nccl_system_error",
    ),
    # a CUDA IPC handle refused: P2P, or a container without the host's IPC namespace
    (
        NCCL_WARN + template("nccl:rank-failed-to-get-cuda-ipc", "1", "0", IPC, "1", "invalid argument"),
        "gpu_p2p",
        "log.nccl_system_error",
    ),
    # a compile or link error: a broken toolkit, or an extension written for another torch
    (
        template(
            "system:nvcc-identifier-undefined", "csrc/ops.cu", "42", "AT_DISPATCH_FLOATING_TYPES_AND_HALF"
        ),
        "cuda_build",
        "log.dependency_version",
    ),
    (
        template("system:gcc-no-matching-function", "csrc/ops.cpp", "88", "17", "at::Tensor::type()"),
        "cuda_build",
        "log.dependency_version",
    ),
    (
        template("system:ld-undefined-reference", "ops.o", "c10::detail::torchCheckFail")
        + "\n"
        + template("system:collect2-ld-returned"),
        "cuda_build",
        "log.dependency_version",
    ),
    # pip's summary of a failed source build, alone: a build failed, why is not in these lines
    (
        template("system:pip-could-not-build-wheels", "flash-attn"),
        "cuda_build",
        "log.dependency_version",
    ),
    # DeepSpeed's op "not compatible due to hardware/software issue": a build, or a machine the op cannot use
    (
        "RuntimeError: "
        + template("deepspeed:unable-to-jit-load-the-op", "fused_adam", "FusedAdam requires CUDA extensions"),
        "cuda_build",
        "log.cuda_unavailable",
    ),
]


@pytest.mark.parametrize(("text", "kind", "other"), LIKELY, ids=[c[1] + ":" + c[0][-40:] for c in LIKELY])
def test_an_anchor_another_cause_prints_leads_only_as_likely_and_names_it(text, kind, other):
    found = explained(text + "\n")
    assert found.id == f"log.{kind}", (text, found.id, found.summary)
    assert found.details["confidence"] == "likely", (text, found.summary)
    assert found.summary.startswith("likely: "), found.summary
    assert other in found.details.get("alternatives", []), (found.summary, found.details)
    (named,) = [a for a in BY_KIND[kind].also if a.kind == other.removeprefix("log.")]
    # the fix as it goes on the sentence that names the reading (verdict.if_not_that)
    assert named.title in found.summary and if_not_that(named.title, named.fix) in found.fix, (
        found.summary,
        found.fix,
    )


def test_a_certain_cause_beside_a_demoted_anchor_leads():
    # a rank that really failed (out of memory) and the closed rendezvous the other node saw afterwards: the
    # certain cause leads, the closed rendezvous does not take its place
    text = (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
        "capacity of 79.15 GiB of which 1.02 GiB is free.\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousClosedError\n"
    )
    found = explained(text)
    assert found.id == "log.cuda_oom", (found.id, found.summary)


@pytest.mark.parametrize(
    "line",
    [
        # NCCL's INFO lines on a healthy run, beside the WARNs above
        "node07:20931:21044 [3] NCCL INFO NET/Socket : Using [0]eth0:10.1.4.17<0>",
        "node07:20931:21044 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB eth0:10.1.4.17<0>",
        "node07:20931:21044 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
        "node07:20931:21044 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[0] [send] via NET/IB/0/GDRDMA",
        "node07:20931:21044 [3] NCCL INFO Connected all rings",
        # elastic's own progress lines on a healthy start
        "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:",
        "[I1125 10:02:11.402] [c10d] The server socket has started to listen on [::]:29500.",
        "[I1125 10:02:11.402] [c10d] The client socket has connected to [node07]:29500 on [node08]:51234.",
        "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:",
        # the deepspeed launcher and accelerate on a healthy multi-node start
        "[2026-11-25 10:02:11,402] [INFO] [runner.py:568:main] cmd = /usr/bin/python -u -m deepspeed.launcher.launch "
        "--world_info=eyJub2RlMSI6IFswXX0= --master_addr=10.1.4.17 --master_port=29500 train.py",
        "[2026-11-25 10:02:11,402] [INFO] [launch.py:146:main] nnodes=2, num_local_procs=8, node_rank=0",
        "[2026-11-25 10:02:11,402] [INFO] [multinode_runner.py:80:get_cmd] Running on the following workers: "
        "node1,node2",
        "Using RTX 4000 series which doesn't support faster communication speedups. Ensuring P2P and IB "
        "communications are disabled.",
        # a build that goes on: torch's and ninja's progress, DeepSpeed's op loaded
        "Emitting ninja build file /root/.cache/torch_extensions/py310_cu121/fused_adam/build.ninja...",
        "Building extension module fused_adam...",
        "Loading extension module fused_adam...",
        "Time to load fused_adam op: 0.61 seconds",
        # DeepSpeed's engine on a healthy start
        "[2026-11-25 10:02:11,402] [INFO] [config.py:1000:print]   optimizer_name ............... adamw",
        "[2026-11-25 10:02:11,402] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed Basic Optimizer = AdamW",
    ],
)
def test_healthy_lines_beside_the_weak_family_anchors_are_not_findings(line):
    found = explained(line + "\n")
    assert found.id == "log.unrecognised" or found.status != "fail", (line, found.id, found.summary)


PIP_BUILD = """Collecting flash-attn
  Downloading flash_attn-2.5.8.tar.gz (2.5 MB)
  Installing build dependencies: started
  Installing build dependencies: finished with status 'done'
  Getting requirements to build wheel: started
  Getting requirements to build wheel: finished with status 'error'
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [17 lines of output]
      Traceback (most recent call last):
        File "<string>", line 9, in <module>
      ModuleNotFoundError: No module named 'torch'
      [end of output]
"""


def test_a_pip_build_without_torch_is_build_isolation_and_names_a_missing_torch():
    # pip's isolated build environment (pip/_internal/build_env.py) holds only the declared build requirements
    found = explained(PIP_BUILD)
    assert found.id == "log.build_isolation", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "--no-build-isolation" in found.fix
    assert "log.broken_install" in found.details.get("alternatives", [])


def test_no_module_named_torch_outside_a_pip_build_is_not_build_isolation():
    found = explained(
        'Traceback (most recent call last):\n  File "train.py", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'torch'\n"
    )
    assert found.id != "log.build_isolation", (found.id, found.summary)
