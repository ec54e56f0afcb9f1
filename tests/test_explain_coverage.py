"""Round seven of the catalog's coverage: templates of the paths a failing multi-GPU run goes through (torch's
distributed_c10d / run.py / elastic / DDP / cpp_extension / torch.cuda / distributed checkpoint, NCCL's WARN
lines, DeepSpeed's engine / ZeRO / launcher, accelerate's launch and operations) mapped to the kinds they
belong to. Each case is the catalog template itself (its id beside it) with its placeholders filled with
plausible values, prefixed as the source raises or logs it.
"""

from __future__ import annotations

import re

import pytest
from explaining import explained, leads_with

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

PLACEHOLDER = re.compile(r"\{\}|%(?:ld|lu|lx|zu|d|s|u|p|x)")


def template(ident: str, *values: str) -> str:
    """A catalog template with its placeholders (``{}``, ``%s``, ``%d``, ``%p``, ...) filled in the order they
    appear, as the source's format call fills them."""
    text = by_id()[ident].text
    for value in values:
        text = PLACEHOLDER.sub(value.replace("\\", "\\\\"), text, count=1)
    return text


NCCL_WARN = "node03:41872:41990 [2] NCCL WARN "

# (template id, values, prefix, kind, confidence, words in the summary or the fix)
CASES = [
    # torch/distributed/run.py, elastic launch config: torchrun refusing its own options
    ("torch:local-ranks-filter-must-be-comma", (), "ValueError: ", "launch_command", "certain", ["torchrun"]),
    ("torch:don-use-both-the-no-python", (), "ValueError: ", "launch_command", "certain", ["--no-python"]),
    ("torch:min-nodes-must-be-and-max", ("0", "2"), "ValueError: ", "launch_command", "certain", ["MIN:MAX"]),
    ("torch:max-restarts-must-be", (), "ValueError: ", "launch_command", "certain", ["--max-restarts"]),
    # torch/distributed/elastic/rendezvous/api.py, utils.py: torchrun's rendezvous options as it parses them
    (
        "torch:the-minimum-number-of-rendezvous-nodes",
        ("0",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["MIN:MAX"],
    ),
    (
        "torch:the-maximum-number-of-rendezvous-nodes",
        ("1", "2"),
        "ValueError: ",
        "launch_command",
        "certain",
        ["MIN:MAX"],
    ),
    (
        "torch:the-rendezvous-backend-is-not-registered",
        ("c10", "register_rendezvous_handler"),
        "ValueError: ",
        "launch_command",
        "certain",
        ["'c10'", "--rdzv-backend is c10d"],
    ),
    (
        "torch:the-rendezvous-configuration-string-must-be",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["rendezvous"],
    ),
    (
        "torch:the-rendezvous-configuration-option-does-not",
        ("is_host",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["is_host"],
    ),
    (
        "torch:the-rendezvous-configuration-option-does-not-2",
        ("timeout",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["timeout"],
    ),
    (
        "torch:the-rendezvous-configuration-option-must-have",
        ("join_timeout",),
        "ValueError: ",
        "launch_command",
        "certain",
        ["join_timeout"],
    ),
    # torch/utils/cpp_extension.py on Windows
    ("torch:msvc-is-required-to-load-extensions", (), "RuntimeError: ", "cuda_build", "certain", ["cl.exe"]),
    # accelerate/commands/launch.py
    (
        "accelerate:module-and-no-python-cannot-be",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--module"],
    ),
    # deepspeed/launcher/runner.py, multinode_runner.py
    (
        "deepspeed:no-local-rank-argument-is-not",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["--no_local_rank"],
    ),
    (
        "deepspeed:mpich-requires-same-number-of-devices",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["slots"],
    ),
    (
        "deepspeed:intel-mpi-requires-same-number-of",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["slots"],
    ),
    (
        "deepspeed:mvapich-requires-same-number-of-devices",
        (),
        "ValueError: ",
        "launch_command",
        "certain",
        ["slots"],
    ),
    (
        "deepspeed:mpiname-does-not-exist-mvapich-is",
        (),
        "RuntimeError: ",
        "launch_command",
        "certain",
        ["multi-node backend is not installed"],
    ),
    # torch/distributed/distributed_c10d.py get_node_local_rank(): not started by a launcher — a plain python
    # run or a scheduler without torch's launcher; likely unless the log shows the scheduler (round twelve)
    (
        "torch:local-rank-is-not-in-the",
        (),
        "RuntimeError: ",
        "rank_env_missing",
        "likely",
        ["LOCAL_RANK", "torchrun"],
    ),
    # accelerate/utils/launch.py: an MPI launch with no MPI
    (
        "accelerate:mpirun-or-mpiexec-were-not-found",
        (),
        "FileNotFoundError: ",
        "broken_install",
        "certain",
        ["mpirun", "openmpi"],
    ),
    # torch/cuda/__init__.py
    (
        "torch:device-is-not-visible-cuda-visible",
        ("3", "0,1"),
        "RuntimeError: ",
        "invalid_device_ordinal",
        "certain",
        ["CUDA_VISIBLE_DEVICES"],
    ),
    (
        "torch:pytorch-was-compiled-without-cuda-support",
        (),
        "RuntimeError: ",
        "cuda_unavailable",
        "certain",
        ["CPU-only build"],
    ),
    # accelerate/utils/environment.py: no accelerator at all (or one CUDA_VISIBLE_DEVICES hides): likely
    (
        "accelerate:there-are-currently-no-available-devices",
        (),
        "ValueError: ",
        "cuda_unavailable",
        "likely",
        ["nvidia-smi"],
    ),
    # deepspeed/runtime/engine.py: bf16 on a GPU without it
    ("deepspeed:type-bf16-is-not-supported-on", (), "ValueError: ", "bf16_unsupported", "certain", ["fp16"]),
    # torch/nn/parallel/distributed.py: a module with CPU and GPU parameters
    (
        "torch:distributeddataparallel-input-module-must-be-on",
        ("{'cpu', 'cuda'}",),
        "ValueError: ",
        "device_mismatch",
        "certain",
        ["CPU", "Move the model"],
    ),
    # accelerate/utils/operations.py verify_operation: a CPU tensor given to a collective
    (
        "accelerate:one-or-more-of-the-tensors",
        ("accelerate.utils.gather", "GPU", "MULTI_GPU", "GPU", "accelerate.utils.gather"),
        "TypeError: ",
        "cpu_tensor_nccl",
        "likely",  # the line alone: a library's code calling gather reaches it too
        ["accelerate.utils.gather", "LOCAL_RANK"],
    ),
    # torch/utils/cpp_extension.py _get_cuda_arch_flags
    (
        "torch:unknown-cuda-arch-or-gpu-not",
        ("12.0a",),
        "ValueError: ",
        "cuda_build",
        "certain",
        ["12.0a", "TORCH_CUDA_ARCH_LIST"],
    ),
    # torch/distributed/checkpoint/default_planner.py: a distributed checkpoint of another model's shape
    (
        "torch:size-mismatch-between-saved-and-current",
        ("torch.Size([32000, 4096])", "torch.Size([32001, 4096])", "model.embed_tokens.weight"),
        "ValueError: ",
        "model_checkpoint_mismatch",
        "certain",
        ["model.embed_tokens.weight", "32001"],
    ),
    # NCCL os/linux.cc, misc/shmutils.cc, os/windows.cc: the /dev/shm segment; without its errno the line is
    # likely (NCCL 2.12+ reach it from a failed cudaHostRegister of the segment too: test_explain_certainty_cert4)
    (
        "nccl:error-while-shared-memory-segment-size",
        ("creating", "/dev/shm/nccl-Xb4zQ1", "9637888", "No space left on device", "28"),
        NCCL_WARN,
        "nccl_system_error",
        "certain",
        ["/dev/shm"],
    ),
    (
        "nccl:error-while-shared-memory-segment-size-2",
        ("attaching to", "nccl-shm-recv-b7948f4", "4460544"),
        NCCL_WARN,
        "nccl_system_error",
        "likely",
        ["/dev/shm"],
    ),
    (
        "nccl:error-while-shared-memory-segment-size-3",
        ("creating", "nccl-shm-send-0c1d2e3", "4460544"),
        NCCL_WARN,
        "nccl_system_error",
        "likely",
        ["/dev/shm"],
    ),
    # torch/distributed/device_mesh.py, fsdp/_fully_shard/_fsdp_init.py: a DeviceMesh that does not fit the run
    (
        "torch:mesh-should-not-be-bigger-than",
        ("4", "8"),
        "RuntimeError: ",
        "device_mesh_config",
        "certain",
        ["asks for 8 ranks", "4 processes", "WORLD_SIZE"],
    ),
    (
        "torch:devicemesh-only-support-homogeneous-hardware-but",
        ("12", "8", "cuda"),
        "RuntimeError: ",
        "device_mesh_config",
        "certain",
        ["12 ranks", "8 GPUs"],
    ),
    (
        "torch:please-init-the-mesh-for-hsdp",
        (),
        "AssertionError: ",
        "device_mesh_config",
        "certain",
        ["mesh_dim_names", "('replicate', 'shard')"],
    ),
    # torch/distributed/fsdp/_exec_order_utils.py: FSDP's all-gathers differ between the ranks
    (
        "torch:forward-order-differs-across-ranks",
        (),
        "RuntimeError: ",
        "rank_divergence",
        "certain",
        ["ranks disagree"],
    ),
    (
        "torch:rank-is-all-gathering-parameters-while",
        ("Forward order differs across ranks:", "0", "3", "1", "4"),
        "RuntimeError: ",
        "rank_divergence",
        "certain",
        ["rank 0 all-gathers 3 parameters", "rank 1 4 parameters"],
    ),
    (
        "torch:rank-is-all-gathering-parameters-for",
        (
            "Forward order differs across ranks:",
            "0",
            "['layers.3.mlp.weight']",
            "1",
            "['layers.4.mlp.weight']",
        ),
        "RuntimeError: ",
        "rank_divergence",
        "certain",
        ["layers.3.mlp.weight"],
    ),
    # torch.distributed.checkpoint: keys of the model and of the checkpoint that differ (a prefix or another
    # model: likely, as torch's own "Error(s) in loading state_dict" is without a known prefix)
    (
        "torch:missing-key-in-checkpoint-state-dict",
        ("model.layers.0.self_attn.q_proj.weight",),
        "RuntimeError: ",
        "state_dict_keys",
        "likely",
        ["state dict"],
    ),
    (
        "torch:checkpoint-at-is-missing-keys",
        ("/ckpt/step_100", "['optimizer']"),
        "RuntimeError: ",
        "state_dict_keys",
        "likely",
        ["state dict"],
    ),
    (
        "torch:an-unexpected-key-exists-fqn-is",
        ("lm_head.weight", "lm_head.weight"),
        "RuntimeError: ",
        "state_dict_keys",
        "likely",
        ["state dict"],
    ),
    # NCCL transport/net_ib.cc: the adapter's fatal events (a faulty link or port), NICs of two link types
    (
        "nccl:net-ib-async-fatal-event",
        ("mlx5_0", "1", "local catastrophic error"),
        NCCL_WARN,
        "network_fault",
        "certain",
        ["local catastrophic error", "ibstat"],
    ),
    (
        "nccl:net-ib-async-fatal-event-on",
        ("mlx5_1", "1", "0x55d0c2a1", "3", "-1", "CQ error"),
        NCCL_WARN,
        "network_fault",
        "certain",
        ["CQ error"],
    ),
    (
        "nccl:net-ib-async-fatal-event-on-2",
        ("mlx5_2", "1", "0x55d0c2b0", "4711", "3", "1", "2", "6", "99"),
        NCCL_WARN,
        "network_fault",
        "certain",
        ["async fatal event on QP"],
    ),
    (
        "nccl:net-ib-async-fatal-event-on-3",
        ("mlx5_0", "1", "0x55d0c2c8", "SRQ limit reached"),
        NCCL_WARN,
        "network_fault",
        "certain",
        ["SRQ limit reached"],
    ),
    (
        "nccl:net-ib-async-fatal-event-on-4",
        ("mlx5_0", "1", "0x55d0c2a1", "CQ error"),
        NCCL_WARN,
        "network_fault",
        "certain",
        ["CQ error"],
    ),
    (
        "nccl:net-ib-async-fatal-event-on-5",
        ("mlx5_3", "1", "0x55d0c2b0", "QP fatal error"),
        NCCL_WARN,
        "network_fault",
        "certain",
        ["QP fatal error"],
    ),
    (
        "nccl:net-ib-attempted-to-connect-incompatible",
        ("0", "mlx5_0", "1", "IB", "1", "mlx5_4", "1", "RoCE"),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["NCCL_IB_HCA", "link_layer"],
    ),
    (
        "nccl:net-ib-attempted-to-connect-incompatible-2",
        ("0", "mlx5_0", "1", "IB", "1", "mlx5_4", "1", "RoCE"),
        NCCL_WARN,
        "network_interface",
        "certain",
        ["mlx5_4"],
    ),
    # deepspeed/runtime/engine.py, zero/partition_parameters.py, zero/mics.py
    (
        "deepspeed:train-batch-size-must-be-divisible",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["train_micro_batch_size_per_gpu"],
    ),
    (
        "deepspeed:bfloat16-and-fp16-cannot-be-enabled",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["bf16"],
    ),
    (
        "deepspeed:deepspeed-optimizer-requires-dynamic-loss-scaling",
        ("OneBitAdam",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ['"loss_scale": 0'],
    ),
    (
        "deepspeed:native-deepspeed-moe-is-not-supported",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["stage 1 or 2"],
    ),
    (
        "deepspeed:moe-not-supported-with-stage",
        (),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["stage"],
    ),
    (
        "deepspeed:offload-param-must-be-defined-in",
        ("cpu",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["offload_param"],
    ),
    (
        "deepspeed:nvme-path-in-deepspeed-config-cannot",
        ("nvme",),
        "AssertionError: ",
        "deepspeed_config_mismatch",
        "certain",
        ["nvme_path"],
    ),
    (
        "deepspeed:parameters-cannot-be-scattered-without-initializing",
        (),
        "AssertionError: ",
        "deepspeed_init_order",
        "certain",
        ["deepspeed.init_distributed()"],
    ),
]


@pytest.mark.parametrize(
    ("ident", "values", "prefix", "kind", "confidence", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_a_mapped_template_is_read_as_its_kind(ident, values, prefix, kind, confidence, words):
    read_as_its_kind(ident, values, prefix, kind, confidence, words)


def read_as_its_kind(ident, values, prefix, kind, confidence, words):
    """Template ``ident`` filled with ``values`` after ``prefix``: its catalog kind is ``kind``, and explain
    leads with that kind at ``confidence``, every one of ``words`` in its summary or fix."""
    assert by_id()[ident].kind == kind, f"{ident} is mapped to {by_id()[ident].kind!r} in the catalog"
    text = prefix + template(ident, *values)
    assert not PLACEHOLDER.search(text), text
    leads_with(text, kind, confidence, words)


def test_every_mapped_template_of_this_round_has_its_case():
    # the templates this round mapped are each read from their own text above (none mapped without a test)
    covered = {case[0] for case in CASES}
    recognised = {ident for ident, t in by_id().items() if t.kind}
    assert covered <= recognised


@pytest.mark.parametrize(
    "line",
    [
        # torchelastic retrying its store on another random port, and accelerate moving to a free port: both go on
        "[W1125 09:12:03.112] torch.distributed.elastic.utils.distributed: port: 41233 already in use, attempt: [1/3]",
        "Port `29500` is already in use. Accelerate will attempt to launch in a standalone-like mode by finding an "
        "open port automatically for this session.",
        # NCCL's INFO lines about its shared memory on a healthy run
        "node03:41872:41990 [2] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
        # torchrun's banner and DeepSpeed's config dump name the same options without refusing them
        "INFO:torch.distributed.run:Using nproc_per_node=8.",
        "[INFO] [config.py:1000:print]   bfloat16_enabled ............. True",
        "[INFO] [config.py:1000:print]   train_batch_size ............. 64",
    ],
)
def test_healthy_lines_beside_the_new_anchors_are_not_findings(line):
    found = explained(line + "\n")
    assert found.id == "log.unrecognised" or found.status != "fail", (line, found.id, found.summary)
