"""The knowledge the twenty-sixth sample by symptom (corpus files 1117-1145, train half) asked for, each anchored on
the message its source prints: AT_CHECK undefined in an extension's source (torch 1.5 dropped the macro from
c10/util/Exception.h), a uint8 input against float weights in torch 0.2's convolution check, indices on another
device than the tensor they index (TensorAdvancedIndexing.cpp; likely, a library's bug named), a repository's own
modelling code loaded without trust_remote_code (transformers' configuration_auto.py / dynamic_module_utils.py),
a NumPy 2 pickle read under NumPy 1.x (numpy._core), transformers importing the SAVE_STATE_WARNING torch 1.8
removed, the include path of a CUDA header, and the word "leaf" in an optimizer's fix.
Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_at_check_undefined_is_code_written_for_a_torch_before_1_5():
    # 1121.txt (mrlooi/rotated_maskrcnn#31): nvcc's form; 1119.txt and 1123.txt: gcc's, typographic quotes
    for name in ("1121.txt", "1119.txt", "1123.txt"):
        found = lead(name)
        assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
        assert "TORCH_CHECK" in found.fix and "1.4" in found.fix
    found = explained(
        template("system:gcc-not-declared-in-scope", "src/nms.cpp", "23", "18", "AT_CHECK") + "\n"
    )
    assert found.id == "log.dependency_version"
    # another macro the headers lack is a build failure of its own, not this release change
    found = explained("src/nms.cpp:4:23: error: 'MY_CHECK' was not declared in this scope\n")
    assert "AT_CHECK" not in found.fix and found.details["confidence"] == "likely"


def test_a_uint8_input_against_float_weights_is_a_dtype_mismatch():
    # 1145.txt (pytorch/pytorch#2458): torch 0.2's convolution check with bare type names
    found = lead("1145.txt")
    assert found.id == "log.dtype_mismatch" and found.details["confidence"] == "likely"
    assert "Byte" in found.summary and ".float()" in found.fix
    # a CPU tensor against CUDA weights stays a placement failure
    found = explained(
        "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same "
        "or input should be a MKLDNN tensor and weight is a dense tensor\n"
    )
    assert found.id == "log.device_mismatch"


def test_indices_on_another_device_than_the_indexed_tensor_are_likely_and_name_a_library():
    # 1129.txt (Chasel-Tsui/mmrotate-dcfl#25): indices on the GPU, the indexed tensor on the CPU
    found = lead("1129.txt")
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert "idx.to(x.device)" in found.fix and "(cpu)" in found.summary
    text = template("torch_native:indices-on-cpu-or-indexed-device", "cpu", "cuda:0")
    assert explained(f"RuntimeError: {text}\n").id == "log.device_mismatch"
    # indices out of range are another failure
    assert (
        explained("IndexError: index 5 is out of bounds for dimension 0 with size 3\n").id
        != "log.device_mismatch"
    )


def test_a_repository_with_its_own_code_loaded_without_trust_remote_code():
    # 1142.txt (hiyouga/LlamaFactory#6647): MiniCPM-o 2.6 fine-tuned without trust_remote_code
    found = lead("1142.txt")
    assert found.id == "log.remote_code_not_trusted" and found.details["confidence"] == "certain"
    assert "trust_remote_code" in found.fix
    text = template("third_party:transformers-execute-custom-code")
    assert explained(f"ValueError: {text}\n").id == "log.remote_code_not_trusted"
    # the prompt itself, answered, is no failure
    assert (
        explained(
            "You can avoid this prompt in future by passing the argument `trust_remote_code=True`.\n"
        ).id
        != "log.remote_code_not_trusted"
    )


def test_a_numpy_2_pickle_read_under_numpy_1():
    # 1139.txt (4DVLab/DexGrasp-Anything#7): the dataset's pickle written under NumPy 2
    found = lead("1139.txt")
    assert found.id == "log.dependency_version" and "numpy>=2" in found.fix
    found = explained("ModuleNotFoundError: No module named 'numpy._core.multiarray'\n")
    assert found.id == "log.dependency_version" and "numpy._core.multiarray" in found.summary
    # another missing module is not this
    assert explained("ModuleNotFoundError: No module named 'numpyro'\n").id != "log.dependency_version"


def test_save_state_warning_names_transformers():
    # 1143.txt (ai-forever/ru-gpts#53): transformers 3.x on torch 1.8
    found = lead("1143.txt")
    assert found.id == "log.dependency_version" and "transformers" in found.fix and "1.8" in found.fix
    # another name torch lacks keeps the general reading
    found = explained("ImportError: cannot import name 'NOT_A_NAME' from 'torch.optim.lr_scheduler'\n")
    assert found.id == "log.dependency_version" and "transformers" not in found.summary


def test_a_cuda_header_the_build_misses_names_the_include_path():
    # 1126.txt (CharlesShang/DCNv2#20): setup.py left /usr/local/cuda/include off the include path
    found = lead("1126.txt")
    assert found.id == "log.cuda_build" and "include_dirs" in found.fix
    # a header of torch's own is another reading
    assert "include_dirs" not in explained("fatal error: THC/THC.h: No such file or directory\n").fix


def test_a_non_leaf_given_to_the_optimizer_names_the_leaf():
    # 1132.txt (pytorch/pytorch#140469): randn(..., requires_grad=True) * 0.01 given to SGD
    found = lead("1132.txt")
    assert found.id == "log.optimizer_non_leaf" and "leaf" in found.fix
    assert explained("ValueError: optimizer got an empty parameter list\n").id != "log.optimizer_non_leaf"
