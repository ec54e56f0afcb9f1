"""The certainty review's eighth part (helper V22, issue 19): the readings mapped from their sources on one day
(data loading, FSDP / DTensor / checkpoints, compiled packages beside torch, a script's mistakes with libraries
built on torch), each read again for whether the message alone establishes its cause and fix, and whether a real
public log shows the message with that cause. Each test gives the line as its source prints it, where the reading
holds (certain) and where another cause prints the same words (likely, another kind, or nothing).

- CPython's Unpickler.find_class "Can't get attribute 'X' on <module 'M' ...>" through torch.load is a class the
  loading program lacks. For ``__main__`` that is a model saved whole from a script that defined it: certain. For
  a named module it is as often a class the installed release of that module's package lacks: yolov5's
  checkpoints pickle torch.nn.SiLU, which torch 1.7 added, and on torch 1.6 print "Can't get attribute 'SiLU' on
  <module 'torch.nn.modules.activation'" (ultralytics/yolov5#1849, #4121: upgrade torch): likely there,
  ``dependency_version`` named.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

TORCH_LOAD = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 69, in train\n'
    "    ckpt = torch.load(weights, map_location=device)  # load checkpoint\n"
    '  File "/home/ana/miniconda3/envs/yolo/lib/python3.8/site-packages/torch/serialization.py", line 584, in load\n'
    "    return _load(opened_zipfile, map_location, pickle_module, **pickle_load_args)\n"
    '  File "/home/ana/miniconda3/envs/yolo/lib/python3.8/site-packages/torch/serialization.py", line 842, in _load\n'
    "    result = unpickler.load()\n"
)


def test_a_torch_class_missing_from_an_older_torch_is_likely_a_version_not_a_class_to_define():
    line = (
        "AttributeError: Can't get attribute 'SiLU' on <module 'torch.nn.modules.activation' from "
        "'/home/ana/miniconda3/envs/yolo/lib/python3.8/site-packages/torch/nn/modules/activation.py'>\n"
    )
    found = likely_with(TORCH_LOAD + line, "checkpoint_class_missing", "log.dependency_version")
    assert "torch 1.7" in found.fix


def test_a_project_module_class_missing_is_likely_too():
    line = "AttributeError: Can't get attribute 'DetectionModel' on <module 'models.yolo' from '/home/ana/models/yolo.py'>\n"
    likely_with(TORCH_LOAD + line, "checkpoint_class_missing", "log.dependency_version")


def test_a_class_of_the_saving_script_stays_certain():
    line = "AttributeError: Can't get attribute 'UNet' on <module '__main__' from 'eval.py'>\n"
    certain(TORCH_LOAD + line, "checkpoint_class_missing")


# ultralytics/cfg/__init__.py check_dict_alignment, for a key of a later release's default.yaml
YOLO_KEY = (
    "SyntaxError: 'copy_paste_mode' is not a valid YOLO argument. Similar arguments are i.e. "
    "['copy_paste=0.0'].\n"
)


def test_a_yolo_argument_of_another_release_is_likely_with_the_release_named():
    likely_with(YOLO_KEY, "library_arguments", "log.dependency_version")


def test_the_other_refusals_stay_certain():
    # the near miss: a refusal that names its own cause (beam search's count) keeps its certainty
    certain(
        "ValueError: `num_return_sequences` (4) has to be smaller or equal to `num_beams` (1).\n",
        "library_arguments",
    )


# datasets/load.py dataset_module_factory (1.18-3.x): a Hub-like name, not a local folder, not found on the Hub
# either; the local path is where it looked first, not what the script meant
NOT_ON_THE_HUB_EITHER = (
    "FileNotFoundError: Couldn't find a dataset script at /home/ana/run/acme/instructions/instructions.py or any "
    "data file in the same directory. Couldn't find 'acme/instructions' on the Hugging Face Hub either: "
    "FileNotFoundError: Dataset 'acme/instructions' doesn't exist on the Hub. If the repo is private or gated, "
    "make sure to log in with `huggingface-cli login`.\n"
)


def test_a_name_not_on_the_hub_either_is_likely_a_gated_or_misspelt_dataset_not_a_local_path():
    found = likely_with(NOT_ON_THE_HUB_EITHER, "data_path_missing", "log.download_refused")
    assert "'acme/instructions'" in found.summary and "huggingface-cli login" in found.fix


def test_a_local_path_without_the_hub_stays_certain():
    # the bare form (a path that cannot be a Hub name) is the local path missing
    certain(
        "FileNotFoundError: Couldn't find a dataset script at /data/corpus/train/train.py or any data file in the "
        "same directory.\n",
        "data_path_missing",
    )


def test_a_module_named_syncbn_is_likely_apex_not_certain():
    # apex's own imports of syncbn are guarded (apex/parallel/__init__.py warns and goes on); repositories name
    # their own synchronized BatchNorm module syncbn as well
    found = explained("ModuleNotFoundError: No module named 'syncbn'\n")
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "likely"), found.summary


def test_apex_amp_c_missing_stays_certain():
    # the near miss: amp_C, which Megatron-LM and NeMo import unguarded, is apex's build without --cuda_ext
    certain("ModuleNotFoundError: No module named 'amp_C'\n", "extension_import")


# safetensors' reader (safe_open, load_file) on a file whose header it cannot parse
HEADER = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/venv/lib/python3.10/site-packages/peft/utils/save_and_load.py", line 487, in '
    "load_peft_weights\n"
    "    adapters_weights = safe_load_file(filename, device=device)\n"
    '  File "/home/ana/venv/lib/python3.10/site-packages/safetensors/torch.py", line 313, in load_file\n'
    "    with safe_open(filename, framework='pt', device=device) as f:\n"
)


def test_an_invalid_safetensors_header_is_likely_a_file_saved_without_tensors_too():
    # a header of metadata only (safetensors#466), as an adapter saved under ZeRO-3 writes (transformers#28742)
    found = likely_with(
        HEADER
        + "safetensors_rust.SafetensorError: Error while deserializing header: InvalidHeaderDeserialization\n",
        "checkpoint_file_invalid",
        "log.zero3_partitioned_weights",
    )
    assert "ZeRO-3" in found.fix


def test_a_cut_short_safetensors_header_stays_certain():
    # the near miss: MetadataIncompleteBuffer is the file ending inside its header, HeaderTooLarge an LFS pointer
    certain(
        HEADER
        + "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer\n",
        "checkpoint_file_invalid",
    )
    certain(
        HEADER + "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge\n",
        "checkpoint_file_invalid",
    )


def test_peft_refusing_a_quantized_linear_is_likely_a_release_that_does_not_know_it():
    line = (
        "ValueError: Target module Linear4bit(in_features=4096, out_features=4096, bias=False) is not supported. "
        "Currently, only the following modules are supported: `torch.nn.Linear`, `torch.nn.Embedding`, "
        "`torch.nn.Conv2d`, `transformers.pytorch_utils.Conv1D`.\n"
    )
    likely_with(line, "library_arguments", "log.dependency_version")


def test_peft_refusing_a_container_stays_certain():
    # the near miss: an attention block matched by target_modules is the script's own naming
    line = (
        "ValueError: Target module LlamaAttention(\n  (q_proj): Linear(in_features=4096, out_features=4096, "
        "bias=False)\n) is not supported. Currently, only the following modules are supported: `torch.nn.Linear`, "
        "`torch.nn.Embedding`, `torch.nn.Conv2d`, `transformers.pytorch_utils.Conv1D`.\n"
    )
    certain(line, "library_arguments")


# a Dataset whose __getitem__ reads its samples with torch.load, re-raised from a DataLoader worker
WORKER_LOAD = (
    "EOFError: Caught EOFError in DataLoader worker process 3.\n"
    "Original Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/_utils/worker.py", line 302, in _worker_loop\n'
    "    data = fetcher.fetch(index)\n"
    '  File "/home/ana/project/data/dataset.py", line 41, in __getitem__\n'
    "    sample = torch.load(self.files[idx])\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 795, in load\n'
    "    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 1002, in _legacy_load\n'
    "    magic_number = pickle_module.load(f, **pickle_load_args)\n"
    "EOFError: Ran out of input\n"
)


def test_ran_out_of_input_in_a_dataloader_worker_is_likely_a_data_file_not_a_checkpoint():
    likely_with(WORKER_LOAD, "checkpoint_truncated", "log.bad_training_data")
