"""The knowledge the seventh sample by symptom (corpus files 329-353, train half) asked for, each anchored on the
message its source prints: the DataLoader's default collate refusing samples of different sizes (ATen's stack,
collate.py's own check, a worker's shared-memory batch that cannot grow), persistent DataLoader workers asked for
without workers (a trainer's default named as the other reading), HDF5 structures a forked DataLoader worker could
not decode (only likely: a damaged file prints the same), a torch module lacking a name the code uses, TorchScript
finding no Tensor method an installed package calls, and torch 1.x's env:// rendezvous raising for a variable when
the paste stops before the message. Beside each, a line that must stay silent or only likely."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

WORKER = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
    "    data = fetcher.fetch(index)\n"
)


def test_the_seventh_samples_batch_of_unequal_samples_is_the_collate():
    # 344.txt (ykdai/BasicPBC#26): samples with different numbers of segments, batch size above 1 per card
    found = lead("344.txt")
    assert found.id == "log.collate_unequal_sizes" and found.details["confidence"] == "certain"
    assert "[261, 4]" in found.summary and "[137, 4]" in found.summary
    assert "batch size" in found.fix and "collate_fn" in found.fix and "pad" in found.fix


def test_stacks_own_text_is_the_collate_in_a_worker_and_only_likely_without_one():
    text = "RuntimeError: " + template(
        "torch_native:stack-expects-each-tensor-equal-size", "[3, 224, 224]", "[3, 200, 224]", "5"
    )
    found = explained(WORKER + text + "\n")
    assert found.id == "log.collate_unequal_sizes" and found.details["confidence"] == "certain"
    assert "sample 5 [3, 200, 224]" in found.summary
    # torch.stack in the model's own code prints the same: likely, naming that reading
    found = explained(text + "\n")
    assert found.id == "log.collate_unequal_sizes" and found.details["confidence"] == "likely"
    assert "log.shape_mismatch" in found.details["alternatives"]


def test_collates_own_check_is_certain_and_a_refused_resize_alone_only_likely():
    found = explained("RuntimeError: " + template("torch:each-element-in-list-of-batch") + "\n")
    assert found.id == "log.collate_unequal_sizes" and found.details["confidence"] == "certain"
    resize = "RuntimeError: " + template("torch_native:resize-storage-not-resizable") + "\n"
    assert explained(resize).details["confidence"] == "likely"
    assert (
        explained("RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n" + resize).details[
            "confidence"
        ]
        == "certain"
    )


def test_persistent_workers_without_workers_and_a_trainers_default_as_the_other_reading():
    text = "ValueError: " + template("torch:persistent-workers-option-needs-num-workers") + "\n"
    found = explained(text)
    assert found.id == "log.dataloader_persistent_workers" and found.details["confidence"] == "certain"
    assert "num_workers > 0" in found.fix and "persistent_workers=False" in found.fix
    # 346.txt (modelscope/ms-swift#10123): the trainer turned persistence on by default, also for zero workers
    found = lead("346.txt")
    assert found.id == "log.dataloader_persistent_workers" and found.details["confidence"] == "likely"
    # the other reading's fix goes on the sentence that names it (verdict.if_not_that)
    assert "log.library_version_bug" in found.details["alternatives"] and ": upgrade the trainer" in found.fix


def test_a_dataloader_config_line_naming_persistent_workers_is_not_a_finding():
    line = "INFO: DataLoader(batch_size=8, num_workers=4, persistent_workers=True, pin_memory=True)\n"
    assert explained(line).id == "log.unrecognised" or explained(line).status != "fail"


def test_an_hdf5_read_a_forked_worker_could_not_decode_is_a_shared_handle_only_likely():
    # 348.txt (pytorch/pytorch#11887): an h5py file opened in __init__, read by several DataLoader workers
    found = lead("348.txt")
    assert found.id == "log.dataset_handle_fork" and found.details["confidence"] == "likely"
    assert "bad object header version number" in found.summary
    assert "__getitem__" in found.fix and "log.corrupt_file" in found.details["alternatives"]
    text = "OSError: Can't read data (" + template("third_party:hdf5-wrong-b-tree-signature") + ")\n"
    assert explained(WORKER + text).id == "log.dataset_handle_fork"


def test_the_same_hdf5_message_outside_a_dataloader_worker_is_not_a_shared_handle():
    text = (
        "KeyError: 'Unable to open object (" + template("third_party:hdf5-bad-object-header-version") + ")'\n"
    )
    assert explained(text).id != "log.dataset_handle_fork"


def test_a_torch_module_without_a_name_the_code_uses_is_an_older_torch_only_likely():
    # 353.txt (alibaba/Megatron-LLaMA#23): NGC 22.08's torch 1.13 pre-release lacks reduce_scatter_tensor
    found = lead("353.txt")
    # the release that added it from the table, still only likely: a torch without distributed lacks it too
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "reduce_scatter_tensor" in found.summary and "torch>=1.13" in found.fix
    assert "log.backend_unavailable" in found.details["alternatives"]
    text = template("system:module-has-no-attribute", "torch.distributed", "all_gather_into_tensor")
    found = explained(text + "\n")
    assert found.id == "log.dependency_version" and "PyTorch" in found.summary


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # a torch built without distributed support: backend_unavailable, as before
        (
            "AttributeError: module 'torch.distributed' has no attribute 'init_process_group'",
            "backend_unavailable",
        ),
        # torch._C without its CUDA functions is a CPU-only build, not a version of the calling code
        ("AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'", "cuda_unavailable"),
    ],
)
def test_torch_names_another_kind_reads_are_not_an_older_torch(line, kind):
    found = explained(line + "\n")
    assert found.id != "log.dependency_version"
    if kind:
        assert found.id == f"log.{kind}"


SCRIPTED_FILE = '  File ".../site-packages/torch_scatter/scatter.py", line 41\n'


def test_torchscript_finding_no_tensor_method_an_installed_package_calls_is_the_package_too_new():
    # 334.txt (fratajcz/speos#1): torch_sparse 0.6.16 calls Tensor.crow_indices, which the pinned torch lacks
    found = lead("334.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "torch_sparse calls Tensor.crow_indices" in found.summary and "older release" in found.fix
    text = template("torch_native:jit-nonexistent-attribute-or-method", "broadcast_to", "Tensor")
    found = explained(text + ":\n" + SCRIPTED_FILE)
    assert found.id == "log.dependency_version" and "torch_scatter calls Tensor.broadcast_to" in found.summary
    text = template("torch_native:jit-object-has-no-attribute-or-method", "Tensor", "broadcast_to")
    assert explained(text + ".:\n" + SCRIPTED_FILE).id == "log.dependency_version"


def test_torchscript_on_the_users_own_code_or_class_is_not_a_version():
    text = template("torch_native:jit-nonexistent-attribute-or-method", "name", "__torch__.MyClass")
    assert explained(text + ":\n" + SCRIPTED_FILE).id != "log.dependency_version"
    text = template("torch_native:jit-nonexistent-attribute-or-method", "crow_indices", "Tensor")
    assert explained(text + ':\n  File "test.py", line 11\n').id != "log.dependency_version"


def test_torch_1x_env_rendezvous_raising_for_master_addr_names_the_launch_readings():
    # 336.txt (hzwer/ECCV2022-RIFE#52): a plain python run of a script that initialises from env://
    found = lead("336.txt")
    assert found.id == "log.rendezvous_or_port" and found.details["confidence"] == "likely"
    assert "MASTER_ADDR is not set" in found.summary
    assert {"log.not_launched_distributed", "log.rank_env_missing"} <= set(found.details["alternatives"])
    found = explained('    raise _env_error("RANK")\n')
    assert found.id == "log.rank_env_missing" and found.details["confidence"] == "likely"
    assert "RANK is not set" in found.summary


def test_torch_2x_helper_raise_line_leaves_the_variable_to_the_message():
    text = template("torch:environment-variable-expected-but-not-set-2", "WORLD_SIZE")
    log = (
        '  File "/usr/lib/python3/site-packages/torch/distributed/rendezvous.py", line 253, in _get_env_or_raise\n'
        "    raise _env_error(env_var)\n"
        f"ValueError: Error initializing torch.distributed using env:// rendezvous: {text}\n"
    )
    found = explained(log)
    assert found.id == "log.rank_env_missing" and "WORLD_SIZE is not set" in found.summary


def test_a_private_function_called_with_a_keyword_it_does_not_take_is_a_release_bug_only_likely():
    # 342.txt (Lightning-AI/torchmetrics#454): compositional metrics' _sync_dist had another signature
    found = lead("342.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "_sync_dist() got an unexpected keyword argument 'process_group'" in found.summary
    assert "Upgrade" in found.fix and "log.dependency_version" in found.details["alternatives"]
    text = template("system:python-unexpected-keyword-argument", "_get_module_class_from_name", "recurse")
    assert explained(text + "\n").id == "log.library_version_bug"


@pytest.mark.parametrize(
    "line",
    [
        # a script's own call of a public function or a class with a wrong keyword: the script's mistake
        "TypeError: forward() got an unexpected keyword argument 'labels'",
        "TypeError: Linear.__init__() got an unexpected keyword argument 'bias_init'",
        "TypeError: __init__() got an unexpected keyword argument 'use_fast'",
    ],
)
def test_a_public_call_with_an_unexpected_keyword_is_not_read_as_a_release_bug(line):
    assert explained(line + "\n").id != "log.library_version_bug"


def test_an_accelerate_plugin_lacking_a_field_accelerate_reads_is_its_release_bug_only_likely():
    # 196.txt (huggingface/accelerate, train): accelerate's state read deepspeed_plugin.fp16, which it never had
    found = lead("196.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert (
        "DeepSpeedPlugin has no attribute 'fp16'" in found.summary
        and "pip install -U accelerate" in found.fix
    )
    text = template(
        "system:object-has-no-attribute", "FullyShardedDataParallelPlugin", "activation_checkpointing"
    )
    assert explained(text + "\n").id == "log.library_version_bug"
    # a model or the script's own object lacking an attribute is not accelerate's
    assert (
        explained("AttributeError: 'GCN' object has no attribute 'device2'\n").id != "log.library_version_bug"
    )


def test_deepspeed_0316s_zero3_fp16_check_is_a_parameter_made_in_float32_only_likely():
    # 338.txt (huggingface/transformers#11572): a resized embedding made in float32 under ZeRO-3 and fp16
    found = lead("338.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "not fp16" in found.summary and "pip install -U transformers" in found.fix
    assert "log.zero3_param_dtype" in found.details["alternatives"]
    text = template("third_party:deepspeed-zero3-model-must-be-fp16")
    assert explained(f"AssertionError: {text}\n").id == "log.library_version_bug"
    # the sibling check of the same release (fp16 off, a half parameter) is not this reading
    other = "AssertionError: fp16 is not enabled but one or several model parameters have dtype of fp16\n"
    assert explained(other).id != "log.library_version_bug"
