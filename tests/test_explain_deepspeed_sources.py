"""DeepSpeed's messages read from the paths a training run goes through (issue 19, DeepSpeed): ``deepspeed/__init__.py``
(initialize), the accelerator it picks (``accelerator/real_accelerator.py``), the NVMe swappers
(``runtime/swap_tensor/``), MiCS, AutoTP's ``tp_model_init``, the sequence-parallel groups, the universal-checkpoint
tools (``deepspeed/checkpoint/``), and the launchers' ranks (``runtime/engine.py``, ``launcher/launcher_helper.py``:
``conflicting_rank_env``, kinds/rank_sources.py; ``comm/comm.py``'s MPI discovery: test_explain_certainty_review_4.py).

Each case is the line as its source prints it (a catalog template, its placeholders filled as the source fills them)
after the exception the source raises; each new anchor has a near-miss, a line of the same words that is not the
failure, which must not read as the kind.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")


def line(ident: str, *values: str) -> str:
    """The template ``ident`` with its ``{}`` placeholders filled in order (every one must be)."""
    text = template(ident, *values)
    assert "{}" not in text, f"{ident}: a placeholder left unfilled"
    return text


# (template id, values, the exception it is raised as, kind, words the summary or the fix must hold)
CASES = [
    # engine.py _configure_with_arguments: mpirun around torchrun / the deepspeed launcher
    (
        "deepspeed:local-rank-ompi-comm-world-local",
        ("3", "0"),
        "AssertionError",
        "conflicting_rank_env",
        ["LOCAL_RANK=3", "OMPI_COMM_WORLD_LOCAL_RANK=0", "mpirun -np"],
    ),
    # launcher_helper.py env_mapping (EnvironmentError is OSError)
    (
        "deepspeed:rank-number-doesn-match",
        (),
        "OSError",
        "conflicting_rank_env",
        ["env -u OMPI_COMM_WORLD_LOCAL_RANK"],
    ),
    ("deepspeed:local-rank-number-doesn-match", (), "OSError", "conflicting_rank_env", ["one launcher"]),
    # runtime/swap_tensor: ZeRO-3's NVMe offload buffers
    (
        "deepspeed:more-elements-than-buffer-size",
        ("131334144", "100000000"),
        "AssertionError",
        "deepspeed_config_mismatch",
        ['"buffer_size"', '"offload_param"'],
    ),
    (
        "deepspeed:pipelinedoptimizerswapper-ran-out-of-swap-buffers",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ['"buffer_count"', '"pipeline_read": false'],
    ),
    # deepspeed/__init__.py initialize (a config in args and in config=: likely, test_explain_certainty_review_4.py)
    (
        "deepspeed:deepspeed-requires-deepspeed-config-to-specify",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ["add_config_arguments"],
    ),
    (
        "deepspeed:mpu-must-be-none-with-pipeline",
        (),
        "AssertionError",
        "deepspeed_config_mismatch",
        ["without mpu="],
    ),
    # accelerator/real_accelerator.py: DS_ACCELERATOR naming an accelerator this environment lacks
    (
        "deepspeed:npu-accelerator-requires-torch-npu-which",
        (),
        "ValueError",
        "deepspeed_config_mismatch",
        ["unset DS_ACCELERATOR"],
    ),
    (
        "deepspeed:ds-accelerator-must-be-one-of",
        ("['cuda', 'cpu', 'xpu', 'npu', 'mps', 'hpu', 'mlu', 'sdaa', 'supa']", "CUDA"),
        "ValueError",
        "deepspeed_config_mismatch",
        ["DS_ACCELERATOR"],
    ),
    # utils/z3_leaf_module.py: the MoE block class given to set_z3_leaf_modules is not in the model
    (
        "deepspeed:no-modules-of-type-found-in",
        (
            "[<class 'transformers.models.mixtral.modeling_mixtral.MixtralSparseMoeBlock'>]",
            "Qwen2MoeForCausalLM(",
        ),
        "ValueError",
        "deepspeed_config_mismatch",
        ["set_z3_leaf_modules", "print(model)"],
    ),
    # engine.py: deepspeed.initialize(optimizer=<a list of parameters>)
    (
        "deepspeed:client-optimizer-is-of-unexpected-type",
        ("<class 'list'>",),
        "AssertionError",
        "deepspeed_config_mismatch",
        ["model_parameters="],
    ),
    # runtime/tensor_parallel/init_utils.py: AutoTP's sizes given twice
    (
        "deepspeed:conflicting-tensor-parallel-autotp-size-in",
        ("2", "4"),
        "ValueError",
        "deepspeed_config_mismatch",
        ["tp_model_init", '"tensor_parallel"'],
    ),
    # runtime/sequence_parallel/parallel_state_sp.py
    (
        "deepspeed:world-size-is-not-divisible-by",
        ("6", "4"),
        "RuntimeError",
        "deepspeed_config_mismatch",
        ["divides the number of processes"],
    ),
]


@pytest.mark.parametrize(("ident", "values", "raised", "kind", "words"), CASES, ids=[c[0] for c in CASES])
def test_the_line_as_its_source_prints_it(ident, values, raised, kind, words):
    found = certain(f"{raised}: {line(ident, *values)}\n", kind)
    for word in words:
        assert word in found.summary + found.fix, (word, found.summary)


@pytest.mark.parametrize(
    ("ident", "values"),
    [
        ("deepspeed:seems-bogus-deepspeed-checkpoint-folder-cannot", ("out/checkpoint-500", "mp_rank")),
        ("deepspeed:no-zero-files-found-in", ("out/checkpoint-500",)),
    ],
)
def test_the_checkpoint_tools_pointed_at_a_folder_without_a_saved_step(ident, values):
    # deepspeed/checkpoint/deepspeed_checkpoint.py, zero_checkpoint.py (ds_to_universal): a folder above the step and
    # a step saved without its ZeRO state (save_only_model) print the same words: likely, both named
    found = likely_with(
        f"AssertionError: {line(ident, *values)}\n", "checkpoint_path", "log.checkpoint_incomplete"
    )
    assert "out/checkpoint-500" in found.summary
    assert "--input_folder <ckpt>/global_stepN" in found.fix


def test_the_conflicting_ranks_lead_the_launchers_summary_of_the_ranks_that_failed():
    # every rank asserts; torchrun's summary below names a child that failed, the consequence
    text = (
        "[rank2]: Traceback (most recent call last):\n"
        '[rank2]:   File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1637, in '
        "_configure_with_arguments\n"
        '[rank2]:     assert ompi_local_rank == local_rank, f"LOCAL_RANK ({local_rank}) != '
        'OMPI_COMM_WORLD_LOCAL_RANK ({ompi_local_rank}), " \\\n'
        "[rank2]: AssertionError: LOCAL_RANK (2) != OMPI_COMM_WORLD_LOCAL_RANK (0), not sure how to proceed as we're "
        "seeing conflicting local rank info.\n"
        "E1130 00:10:12.123000 4242 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 2 (pid: 4245) of binary: /opt/conda/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )
    found = certain(text, "conflicting_rank_env")
    assert "LOCAL_RANK=2" in found.summary


def test_the_elastic_checkpoint_warning_at_start_up_stays_unmapped():
    # zero/config.py warns at start-up and the run goes on; only stage3.py's refusal at checkpoint time is a cause
    assert by_id()["deepspeed:zero-elastic-checkpointing-is-deprecated-and"].kind == ""
    assert (
        by_id()["deepspeed:zero-elastic-checkpointing-is-deprecated-and-2"].kind
        == "deepspeed_config_mismatch"
    )


NEAR_MISSES = [
    # DeepSpeed's MPI discovery reporting what it found, on a healthy start-up
    "[INFO] [comm.py:718:mpi_discovery] Discovered MPI settings of world_rank=1, local_rank=1, world_size=2, "
    "master_addr=10.0.0.1, master_port=29500\n",
    # a script's own check that agrees, and another tool's words about rank numbers
    "LOCAL_RANK (0) == OMPI_COMM_WORLD_LOCAL_RANK (0): ranks agree\n",
    "warning: the rank number doesn't match the one in the checkpoint name, using 3\n",
    "MPI rank 0 does not match torch rank yet (waiting for init)\n",
    # a socket's and a codec's words about a buffer, not DeepSpeed's NVMe swapper
    "RuntimeError: message of 70000 bytes is larger than buffer size 65536\n",
    "ValueError: Need more elements than buffer size allows for the ring\n",
    # DeepSpeed's healthy print of its offload config and the accelerator it picked
    "[INFO] [config.py:1003:print] offload_param ... DeepSpeedZeroOffloadParamConfig(device='nvme', "
    "nvme_path=PosixPath('/local_nvme'), buffer_count=5, buffer_size=100000000, max_in_cpu=1000000000)\n",
    "[INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to npu (override)\n",
    # the universal-checkpoint tools finding what they need
    "[INFO] Found 8 ZeRO files in out/checkpoint-500/global_step500\n",
    # op_builder's compatibility warnings, which healthy runs print when DeepSpeed scans its ops (ds_report, an
    # import through accelerate / transformers): the ops a run does not use
    "[WARNING]  async_io requires the dev libaio .so object and headers but these were not found.\n"
    "[WARNING]  async_io: please install the libaio-dev package with apt\n"
    "[WARNING]  If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS "
    "environment variables to where it can be found.\n",
    "[WARNING]  Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH\n",
    "[WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.4\n",
    "[WARNING]  using untested triton version (3.0.0), only 1.0.0 is known to be compatible\n",
    # another tool's words about modules it did not find
    "ValueError: No modules of type Linear to quantize; skipping\n",
    "No modules named 'apex' could be imported, using the native kernels\n",
    # DeepSpeed's INFO lines about the client optimizer and the pipeline's layers, from a healthy start-up
    "[INFO] [logging.py:96:log_dist] [Rank 0] Using client Optimizer as basic optimizer\n",
    "[INFO] [module.py:396:_partition_layers] Partitioning pipeline stages with method type:transformer\n",
    # a config print that names the config flag
    "[INFO] [config.py:1003:print] deepspeed_config ........ ds_config.json\n",
]

KINDS = {"log.conflicting_rank_env", "log.deepspeed_config_mismatch", "log.checkpoint_path"}


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_do_not_fire(text):
    found = explained(text)
    assert found.id not in KINDS, (text, found.id, found.summary)
