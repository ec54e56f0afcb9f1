"""The knowledge the twenty-fourth sample by symptom (corpus files 1017-1057, train half) asked for, each anchored on
the message its source prints: one_hot's class values (ATen's Onehot.cpp), float64 on the MPS device (ATen's
mps/EmptyTensor.cpp), BatchNorm's feature count (Normalization.cpp; likely, a size baked into the model named), a
CPU tensor met by torch 1.x's GPU check (TensorUtils.cpp) and by an MPS kernel (OperationUtils.mm; likely, a
library's bug named), old-style autograd Functions and torch's removed THC headers (code written for an older
torch), text given to torch.tensor() (tensor_new.cpp; likely), a resume reading a key the loaded file lacks
(CPython's KeyError under load_state_dict; likely) and torch 1.10's tensorboard import with setuptools 59.6.
Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template


def test_one_hot_given_a_class_value_past_num_classes():
    # 1045.txt (milesial/Pytorch-UNet#322): masks with two classes, the model set up for one
    found = lead("1045.txt")
    assert found.id == "log.label_out_of_range" and found.details["confidence"] == "certain"
    assert "num_classes" in found.fix and "255" in found.fix
    found = explained(f"RuntimeError: {template('torch_native:one-hot-class-values-non-negative')}\n")
    assert found.id == "log.label_out_of_range" and "below 0" in found.summary
    # num_classes itself refused is another message
    assert explained("RuntimeError: num_classes should be positive\n").id != "log.label_out_of_range"


def test_float64_on_the_mps_device():
    # 1042.txt (thu-ml/tianshou#1237): a float64 tensor moved to mps
    found = lead("1042.txt")
    assert found.id == "log.mps_float64" and found.details["confidence"] == "certain"
    assert "float32" in found.fix
    # the MPS backend missing an operator is another failure
    found = explained(
        "NotImplementedError: The operator 'aten::x' is not currently implemented for the MPS device.\n"
    )
    assert found.id != "log.mps_float64"


def test_batchnorm_features_are_likely_and_name_a_size_baked_into_the_model():
    # 1028.txt (es-ude/elastic-ai.creator#304): the input's layout, not the layer's size
    found = lead("1028.txt")
    assert found.id == "log.layer_input_size" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.hardcoded_shape"]
    assert "num_features=32" in found.summary and "19193" in found.summary
    # 1030.txt (XPFly1989/FCRN#3): the validation loader's batch size, named as the other reading
    found = lead("1030.txt")
    assert found.details["alternatives"] == ["log.hardcoded_shape"] and "batch_size" in found.fix
    # a matrix product keeps its own other reading first; after it come the causes labelled logs printed the
    # line for (train 7969, alpaca-lora#144: two GPUs under plain python, so DataParallel split the batch)
    found = explained("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x1568 and 6272x10)\n")
    assert found.details["alternatives"][0] == "log.matmul_operands"
    assert "log.hardcoded_shape" not in found.details["alternatives"]


def test_a_cpu_tensor_met_by_a_gpu_or_mps_check_is_likely_and_names_a_library():
    # 1048.txt (zenml-io/zenml#90): the library's trainer left the inputs on the CPU
    found = lead("1048.txt")
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "likely"
    # the library first (the reading's own alternative), then the causes labelled logs printed the message for
    assert (
        found.details["alternatives"][0] == "log.library_version_bug"
        and "argument #2 'mat1'" in found.summary
    )
    # 1032.txt (lucidrains/self-rewarding-lm-pytorch#15): an MPS kernel given a CPU tensor
    found = lead("1032.txt")
    assert found.id == "log.device_mismatch" and found.details["alternatives"][0] == "log.library_version_bug"
    assert "mps" in found.fix


@pytest.mark.usefixtures("every_message_seen")  # a reading of the line as printed
def test_the_dispatchers_message_is_certain_only_under_the_scripts_own_traceback():
    # the dispatcher's message with a CPU device names no code: alone it is likely, a library's own code named
    # (the thirty-sixth sample's ai-toolkit#742); under the script's own traceback it is certain
    line = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
    found = explained(line)
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.library_version_bug"]
    found = explained('  File "/home/me/train.py", line 40, in <module>\n    out = model(x)\n' + line)
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "certain"
    found = explained(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cuda:1!\n"
    )
    assert found.details["alternatives"] == ["log.device_map_distributed", "log.gpu_selection"]


def test_code_written_for_an_older_torch():
    # 1027.txt (josipd/torch-two-sample#6): an autograd Function with a non-static forward, refused from 1.5
    found = lead("1027.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "staticmethod" in found.fix and ".apply(" in found.fix
    # 1022.txt (CoinCheung/pytorch-loss#36): THC/THC.h, removed in torch 1.11
    found = lead("1022.txt")
    assert found.id == "log.dependency_version" and "another torch" in found.summary and "1.11" in found.fix
    # torch 1.3-1.4 only warned: no failure
    warned = (
        "UserWarning: Legacy autograd function with non-static forward method is deprecated and will be removed "
        "in 1.3. Please use new-style autograd function with static forward method.\n"
    )
    assert explained(warned).id != "log.dependency_version"


def test_text_given_to_torch_tensor_is_likely_bad_data():
    # 1040.txt (ThilinaRajapakse/simpletransformers#229): a header row inside the concatenated CSV
    found = lead("1040.txt")
    assert found.id == "log.bad_training_data" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.text_column_as_tensor"] and "header" in found.fix
    # a truncated image stays certain
    found = explained("OSError: image file is truncated (3 bytes not processed)\n")
    assert found.id == "log.bad_training_data" and found.details["confidence"] == "certain"


def test_a_resume_reading_a_key_the_loaded_file_lacks():
    # 1053.txt (KaiyangZhou/deep-person-reid#4): torchvision's weights given as the training checkpoint
    found = lead("1053.txt")
    assert found.id == "log.checkpoint_incomplete" and found.details["confidence"] == "likely"
    assert (
        found.details["alternatives"] == ["log.model_checkpoint_mismatch"] and "'state_dict'" in found.summary
    )
    # a KeyError on another line is not this reading
    found = explained(
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
        "    model.load_state_dict(sd)\nKeyError: 'x'\n"
    )
    assert found.id != "log.checkpoint_incomplete"


def test_torch_1_10_tensorboard_with_setuptools_59_6():
    # 1038.txt (JCZ404/Semi-DETR#27): the prose line of the thread
    found = lead("1038.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "setuptools" in found.fix and found.details["alternatives"] == ["log.dependency_version"]
    # another module's missing attribute keeps its reading
    found = explained("AttributeError: module 'numpy' has no attribute 'float'\n")
    assert found.id == "log.dependency_version"


def test_ddp_around_a_module_without_trainable_parameters_names_the_config():
    # 1036.txt (guoqincode/Open-AnimateAnyone#32): the stage's config left the UNet without trainable parameters
    found = lead("1036.txt")
    assert found.id == "log.ddp_no_grad_params" and "config" in found.fix
