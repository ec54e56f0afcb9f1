"""The certainty review's fourth part (helper V14, issue 19): the knowledge added on the day of the fiftieth and
fifty-first samples (DeepSpeed's mappings, conflicting_rank_env, the sample kinds), read against the sources that
print each message. Each test gives the line as its source prints it; a line a second cause prints too is likely,
the other reading named; a near miss must not read as the kind.

- deepspeed/comm/comm.py ``init_distributed`` calls ``mpi_discovery`` only when RANK, WORLD_SIZE, LOCAL_RANK,
  MASTER_ADDR and MASTER_PORT are not all set: its "MPI rank/world size N does not match torch rank/world size M"
  is a process group the script or a framework formed with its own ranks where no torch launcher set them
  (Lightning's DeepSpeed strategy without mpirun prints "MPI world size 1 ...", Lightning-AI/pytorch-lightning#6461),
  not two launchers each setting ranks: a likely ``rank_env_missing``, ``conflicting_rank_env`` named second, never
  certain (mpirun in the log does not decide it). engine.py's LOCAL_RANK != OMPI_COMM_WORLD_LOCAL_RANK stays certain.
- Deformable DETR's "No module named 'MultiScaleDeformableAttention'" after its own ``sh make.sh`` failed in the same
  log: the build's error is the cause and leads; the missing module is only likely, and says so.
- DeepSpeed's AutoTP check (engine.py) "Data inconsistency within the TP group" is the script's sampler, or a trainer
  library's: accelerate before 1.6.0 sharded by the global rank under AutoTP (axolotl-ai-cloud/axolotl#2491):
  likely, ``library_version_bug`` named.
- deepspeed/__init__.py ``initialize`` refuses a config in args beside config= / config_params= from DeepSpeed 0.9.0
  on (#3186; the source's tags: v0.8.x has no such check): code written for the releases before, which took both
  (gpt-neox's megatron/training.py passes args=neox_args and config_params=neox_args.deepspeed_config), prints it
  as well as a script of the user's: likely, ``dependency_version`` named.
- runtime/torch_autocast.py's "Cannot enable both torch autocast and fp16 / bfloat16" is DeepSpeed 0.17.x-0.18.2's
  only: 0.18.3 (#7700, the source's tags) accepts torch_autocast beside fp16 / bf16: likely, ``dependency_version``
  named; "... and zero quantized weights", still refused today, stays certain.
- (after main's merge, branch v13) torch's rendezvous.py registers tcp, env and file in every build that has
  torch.distributed (Windows builds before 1.7 lacked tcp and env): "No rendezvous handler for X://" is an
  init_method whose scheme is no rendezvous at all (a bare HOST:PORT, a misspelt scheme) for every X but env and
  tcp, so the catalog maps the template to ``process_group_args``, the reading of all but those two (still
  ``backend_unavailable``, certain); the audit's one (a) row.
- (v13) NCCL's misc/socket.cc "Net : No valid ... pair found" / "Net : error encountered when getting address info"
  come from ncclSocketGetAddrFromString, which NCCL 2.24+'s RAS client socket (ras/client_support.cc, NCCL_RAS_ADDR
  or localhost:28028) calls too and whose failure it ignores: NCCL_COMM_ID certain only where the log names it,
  and the WARN alone is no NCCL failure (tests/test_explain_sources_launch_comm.py).
- (v13) Lightning's "'X' not found in registry. Available names: ..." is the accelerator registry's as well as the
  strategy registry's: the fix names both.
- torch's DTensor (tensor/_collective_utils.py) warns "CPU process group does not support alltoall yet, falling back
  with allgather + chunk!" on healthy CPU runs: not a backend refusing a collective.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from explaining import certain, explained, likely_with, template

from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import catalog_coverage  # noqa: E402


def test_deepspeeds_mpi_discovery_is_a_launcher_environment_missing_not_two_launchers():
    world = template("deepspeed:mpi-world-size-does-not-match", "1", "2")
    found = likely_with(f"AssertionError: {world}\n", "rank_env_missing", "log.conflicting_rank_env")
    assert "world size 1" in found.summary and "MASTER_PORT" in found.fix
    rank = template("deepspeed:mpi-rank-does-not-match-torch", "0", "3")
    found = likely_with(f"AssertionError: {rank}\n", "rank_env_missing", "log.conflicting_rank_env")
    assert "rank 0" in found.summary
    # an mpirun in the log (a scheduler) does not make it certain: the script's own ranks under it print it too
    found = explained(f"$ mpirun -np 16 --hostfile hosts python pretrain.py\nAssertionError: {world}\n")
    assert (found.id, found.details["confidence"]) == ("log.rank_env_missing", "likely"), found.summary
    for ident in ("deepspeed:mpi-world-size-does-not-match", "deepspeed:mpi-rank-does-not-match-torch"):
        assert by_id()[ident].kind == "rank_env_missing"
        assert catalog_coverage.kind_of(by_id()[ident].text) == "rank_env_missing"


def test_two_local_ranks_from_two_launchers_stay_certain():
    text = template("deepspeed:local-rank-ompi-comm-world-local", "2", "0")
    found = certain(f"AssertionError: {text}\n", "conflicting_rank_env")
    assert "LOCAL_RANK=2" in found.summary


DEFORMABLE_IMPORT = (
    "Traceback (most recent call last):\n"
    '  File "main.py", line 21, in <module>\n'
    "    from models import build_model\n"
    '  File "/home/ana/Deformable-DETR/models/ops/functions/ms_deform_attn_func.py", line 16, in <module>\n'
    "    import MultiScaleDeformableAttention as MSDA\n"
    "ModuleNotFoundError: No module named 'MultiScaleDeformableAttention'\n"
)


def test_the_deformable_operators_missing_after_their_build_failed_do_not_lead_the_build_error():
    build = (
        "$ cd models/ops && sh make.sh\n"
        "/usr/local/cuda/bin/nvcc -c src/cuda/ms_deform_attn_cuda.cu -o build/ms_deform_attn_cuda.o\n"
        'src/cuda/ms_deform_im2col_cuda.cuh(258): error: identifier "THCudaCheck" is undefined\n'
        '1 error detected in the compilation of "src/cuda/ms_deform_attn_cuda.cu".\n'
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n"
        "$ cd ../.. && python main.py --output_dir exps/r50\n"
    )
    found = explained(build + DEFORMABLE_IMPORT)
    # the build error leads, read as the source and the torch installed being of different releases (THCudaCheck:
    # torch's THC, gone in 1.11; test_explain_legacy_torch_api.py), the build failure named after it
    assert found.id == "log.dependency_version", (found.id, found.summary)
    assert "log.cuda_build" in found.details["alternatives"]
    assert found.details["confidence"] == "likely"
    # the operators' own reading, only likely, says the build in the log failed
    (_, second, *_) = explain(["-"], stdin=io.BytesIO((build + DEFORMABLE_IMPORT).encode()))
    assert second.id == "log.extension_import" and second.details["confidence"] == "likely"
    assert "a build in this log failed" in second.summary
    # alone, the module is nothing but that build: certain
    certain(DEFORMABLE_IMPORT, "extension_import")


def test_autotp_data_inconsistency_names_an_older_accelerate():
    text = template("deepspeed:data-inconsistency-within-the-tp-group")
    found = likely_with(f"AssertionError: {text}\n", "deepspeed_config_mismatch", "log.library_version_bug")
    assert "get_data_parallel_rank()" in found.fix and "accelerate>=1.6.0" in found.fix


def test_dtensors_cpu_alltoall_fallback_warning_is_not_a_backend_refusal():
    warning = (
        "[rank0]:W1130 00:12:01.123000 4242 torch/distributed/tensor/_collective_utils.py:85] CPU process group "
        "does not support alltoall yet, falling back with allgather + chunk!\n"
    )
    assert explained(warning).id != "log.collective_arguments"
    # the backend's own refusal of the collective stays certain
    refusal = template("torch_cpp:backend-does-not-support-alltoall", "gloo")
    certain(f"RuntimeError: {refusal}\n", "collective_arguments")


def test_a_config_in_args_and_in_config_params_names_code_written_for_deepspeed_before_0_9():
    text = template("deepspeed:not-sure-how-to-proceed-we")
    found = likely_with(f"AssertionError: {text}\n", "deepspeed_config_mismatch", "log.dependency_version")
    assert (
        "deepspeed<0.9" in found.fix and "config_params=" in found.fix and "--deepspeed_config" in found.fix
    )
    # the deprecated --deepscale_config beside --deepspeed_config stays certain: one script's two flags
    both = template("deepspeed:not-sure-how-to-proceed-we-2")
    certain(f"AssertionError: {both}\n", "deepspeed_config_mismatch")


def test_torch_autocast_beside_bf16_names_the_release_that_accepts_both():
    for ident in (
        "deepspeed:cannot-enable-both-torch-autocast-and-2",
        "deepspeed:cannot-enable-both-torch-autocast-and-3",
    ):
        found = likely_with(
            f"AssertionError: {template(ident)}\n", "deepspeed_config_mismatch", "log.dependency_version"
        )
        assert "deepspeed>=0.18.3" in found.fix
    quantized = template("deepspeed:cannot-enable-both-torch-autocast-and")
    certain(f"AssertionError: {quantized}\n", "deepspeed_config_mismatch")


def test_a_rendezvous_scheme_that_is_no_rendezvous_is_the_init_method_and_the_catalog_says_so():
    assert by_id()["torch:no-rendezvous-handler-for"].kind == "process_group_args"
    found = certain("RuntimeError: No rendezvous handler for model://\n", "process_group_args")
    assert "tcp://" in found.fix
    # the two schemes a build may lack stay the build's
    for scheme in ("env", "tcp"):
        certain(f"RuntimeError: No rendezvous handler for {scheme}://\n", "backend_unavailable")


def test_lightnings_registry_refusal_names_accelerators_too():
    found = certain(
        "lightning.fabric.utilities.exceptions.MisconfigurationException: 'tpu' not found in registry. Available "
        "names: cpu, cuda, mps\n",
        "trainer_arguments",
    )
    assert "accelerator=" in found.fix
