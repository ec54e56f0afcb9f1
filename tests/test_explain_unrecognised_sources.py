"""Messages the train half's unrecognised logs end on, mapped from the code that prints them (issue 19): each
group's real line from a train log (attributed) and its siblings as the source writes them, read as their kind;
and near misses with the same words that must not be.

- DeepSpeed's ``runtime/config.py`` ``_batch_assertion``, pasted without the space after its colon
  (tests/fixtures/corpus/train/7418.txt, OpenRLHF/OpenRLHF#590);
- Lightning's ``callbacks/early_stopping.py`` monitor message cut after its first sentence
  (tests/fixtures/corpus/train/721.txt, Lightning-AI/pytorch-lightning#12095);
- gymnasium's ``envs/registration.py`` refusing an environment id (tests/fixtures/corpus/train/1731.txt,
  pytorch/rl#2996);
- TRL's ``trainer/dpo_trainer.py`` (and KTO's, BCO's) checks of where the reference model comes from
  (tests/fixtures/corpus/train/7672.txt, shibing624/MedicalGPT#334);
- torchtitan's ``distributed/parallel_dims.py`` refusing the job config's degrees or a mesh left off
  (tests/fixtures/corpus/train/6872.txt, pytorch/torchtitan#2184);
- ATen's ``MapAllocator.cpp`` refusing to map a shared tensor's </torch_...> file, beside its mapped siblings
  (tests/fixtures/corpus/train/3270.txt, facebookresearch/SlowFast#473).
"""

from __future__ import annotations

import pytest
from explaining import explained, filled

pytestmark = pytest.mark.usefixtures("every_message_seen")


def _lead(text: str, kind: str, confidence: str | None = None):
    found = explained(text)
    assert found.id == f"log.{kind}", found.summary
    if confidence:
        assert found.details.get("confidence", "certain") == confidence, found.summary
    return found


# -- DeepSpeed's batch assertion ------------------------------------------------------------------------------


def test_deepspeed_batch_assertion_pasted_without_its_space():
    # tests/fixtures/corpus/train/7418.txt (OpenRLHF/OpenRLHF#590)
    found = _lead(
        "AssertionError: Gradient accumulation steps:0 has to be greater than 0\n",
        "deepspeed_config_mismatch",
    )
    assert "Gradient accumulation steps:0" in found.summary
    assert "accumulation steps = train_batch_size // (world size x micro batch)" in found.fix


def test_deepspeed_batch_assertion_as_printed():
    text = "AssertionError: " + filled("deepspeed:micro-batch-size-per-gpu-has", "0") + "\n"
    found = _lead(text, "deepspeed_config_mismatch")
    assert "global batch size" in found.fix


def test_another_greater_than_zero_is_not_deepspeeds_batch():
    text = "RuntimeError: " + filled("torch_cuda:pinned-reserve-segment-size-positive") + "\n"
    assert explained(text).id != "log.deepspeed_config_mismatch"


# -- Lightning's EarlyStopping monitor ------------------------------------------------------------------------


def test_early_stopping_monitor_cut_after_its_first_sentence():
    # tests/fixtures/corpus/train/721.txt (Lightning-AI/pytorch-lightning#12095)
    found = _lead(
        "Early stopping conditioned on metric `val_loss` which is not available\n",
        "checkpoint_monitor_missing",
    )
    assert "EarlyStopping watched the metric 'val_loss'" in found.summary
    assert "self.log('val_loss', value)" in found.fix


def test_early_stopping_monitor_whole_still_lists_the_logged_names():
    text = (
        "RuntimeError: "
        + filled("lightning:early-stopping-conditioned-on-metric-which", "val/acc", "'acc', 'train_loss'")
        + "\n"
    )
    found = _lead(text, "checkpoint_monitor_missing")
    assert "('acc' was logged" in found.summary


# -- gymnasium's environment registry -------------------------------------------------------------------------


def test_gymnasium_atari_id_without_ale_py():
    # tests/fixtures/corpus/train/1731.txt (pytorch/rl#2996)
    found = _lead(
        "Getting Environment PongNoFrameskip doesn't exist. error while running the a2c_atari implementation\n",
        "dependency_version",
        "likely",
    )
    assert "'PongNoFrameskip'" in found.summary
    assert "import ale_py" in found.fix and "gymnasium 1.0" in found.fix


@pytest.mark.parametrize(
    ("ident", "values", "words"),
    [
        (
            "third_party:gymnasium-environment-doesn-exist",
            ("MiniGrid-Empty-5x5", "", ""),
            "'module:EnvName-v0'",
        ),
        ("third_party:gymnasium-namespace-not-found", ("ALE", "ALE"), "import ale_py"),
        (
            "third_party:gymnasium-environment-version-doesn-exist",
            ("9", "ALE/Pong", " It provides versioned environments: [ `v5` ]."),
            "import ale_py",
        ),
        (
            "third_party:gymnasium-environment-version-deprecated",
            ("2", "Hopper", "Hopper-v5"),
            "the version it names",
        ),
    ],
)
def test_gymnasium_registry_refusals_as_raised(ident, values, words):
    text = "gymnasium.error.Error: " + filled(ident, *values) + "\n"
    found = _lead(text, "dependency_version", "likely")
    assert words in found.fix


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Column 'label' doesn't exist.",  # datasets' arrow_dataset.py
        "FileNotFoundError: Directory doesn't exist: /data/train",  # datasets' file_utils.py
        "KeyError: Environment variable LOCAL_RANK doesn't exist",
    ],
)
def test_other_doesnt_exist_is_not_an_environment_id(line):
    assert explained(line + "\n").id != "log.dependency_version"


# -- TRL's reference-model checks ------------------------------------------------------------------------------


def test_dpo_ref_model_beside_peft_config():
    # tests/fixtures/corpus/train/7672.txt (shibing624/MedicalGPT#334)
    found = _lead(
        "ValueError: You passed both a ref_model and a peft_config. For training PEFT adapters with DPO there is no "
        "need to pass a reference model. Please pass `ref_model=None` in case you want to train PEFT adapters.\n",
        "trainer_arguments",
    )
    assert "pass ref_model=None" in found.fix and "force_use_ref_model=True" in found.fix


@pytest.mark.parametrize(
    ("ident", "words"),
    [
        ("third_party:trl-dpo-ref-model-and-peft-config", "force_use_ref_model=True"),
        ("third_party:trl-precompute-ref-log-probs-zero3", "ZeRO stage 2"),
        ("third_party:trl-no-reference-model-not-peft", "precompute_ref_log_probs=True"),
        ("third_party:trl-tr-dpo-ref-model-none", "sync_ref_model=False"),
        ("third_party:trl-tr-dpo-precompute-ref-log-probs", "precompute_ref_log_probs=False"),
    ],
)
def test_trl_reference_model_checks_as_raised(ident, words):
    found = _lead("ValueError: " + filled(ident) + "\n", "trainer_arguments")
    assert words in found.fix


def test_a_ref_model_warning_is_not_the_refusal():
    # dpo_trainer.py 0.23's warning: the kwargs are ignored, nothing refused
    text = (
        "UserWarning: You passed ref_model_init_kwargs to the `DPOConfig`, but your ref_model is already "
        "instantiated. The `ref_model_init_kwargs` will be ignored.\n"
    )
    assert explained(text).id != "log.trainer_arguments"


# -- torchtitan's ParallelDims --------------------------------------------------------------------------------


def test_torchtitan_mesh_of_a_degree_left_at_one():
    # tests/fixtures/corpus/train/6872.txt (pytorch/torchtitan#2184): llama4's parallelize asked for 'tp' at degree 1
    text = (
        '    File "/home/danvm/torchtitan/torchtitan/models/llama4/infra/parallelize.py", line 138, in '
        "parallelize_llama\n"
        '      tp_mesh = parallel_dims.get_mesh("tp")\n'
        '    File "/home/danvm/torchtitan/torchtitan/distributed/parallel_dims.py", line 273, in get_mesh\n'
        "      raise ValueError(\n"
        "  ValueError: Mesh 'tp' is not available. Ensure the corresponding parallelism dimension is enabled "
        "(size > 1).\n"
    )
    found = _lead(text, "device_mesh_config", "likely")
    assert "log.library_version_bug" in found.details["alternatives"]
    assert "get_optional_mesh('tp')" in found.fix and "upgrade torchtitan" in found.fix


@pytest.mark.parametrize(
    ("ident", "values", "words"),
    [
        ("third_party:torchtitan-invalid-parallel-dims", ("1", "8", "1", "2", "1", "8"), "== WORLD_SIZE"),
        ("third_party:torchtitan-parallelism-degree-at-least-one", (), "data_parallel_shard_degree at -1"),
        ("third_party:torchtitan-dp-shard-minus-one-or-positive", (), "data_parallel_shard_degree at -1"),
        (
            "third_party:torchtitan-expert-parallel-degree-must-divide",
            ("3", "8"),
            "expert_parallel_degree a divisor",
        ),
        ("third_party:torchtitan-invalid-mesh-dim", ("dp_shard_cp", "['pp', 'batch', 'tp']"), "older name"),
    ],
)
def test_torchtitan_parallel_dims_refusals_as_raised(ident, values, words):
    found = _lead("AssertionError: " + filled(ident, *values) + "\n", "device_mesh_config")
    assert words in found.fix
    assert "log.library_version_bug" not in found.details.get("alternatives", [])


def test_another_mesh_not_available_is_not_torchtitans():
    assert explained("RuntimeError: Mesh 'tp' is not available on this host\n").id != "log.device_mesh_config"


# -- ATen's MapAllocator: a shared tensor's file not mapped ----------------------------------------------------


def test_shared_tensor_file_not_mapped():
    # tests/fixtures/corpus/train/3270.txt (facebookresearch/SlowFast#473)
    text = "RuntimeError: unable to mmap 280 bytes from file </torch_59534_1208885928>: Cannot allocate memory (12)\n"
    found = _lead(text, "dataloader_shm", "likely")
    assert "vm.max_map_count" in found.fix and "num_workers" in found.fix


def test_a_checkpoint_not_mapped_is_not_shared_memory():
    # torch.load(mmap=True) maps through the same allocator: a file of the user's, not a worker's tensor
    text = "RuntimeError: unable to mmap 4096 bytes from file <model.pt>: Cannot allocate memory (12)\n"
    assert explained(text).id != "log.dataloader_shm"
