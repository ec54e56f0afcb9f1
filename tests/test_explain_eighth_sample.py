"""The knowledge the eighth sample by symptom (corpus files 354-369, train half) asked for, each anchored on the
message its source prints: the dynamic loader's undefined symbol for the undefined tensor's singleton, which every
torch exports (torch's libraries not loaded: the extension imported first), an NVIDIA apex extension built for
another torch (apex named, and that PyTorch no longer needs it), torch/__init__.py's `from torch._C import *`
failing (a source tree shadowing the installed torch, or a broken install), a faulty sample as one more reading
of a DataLoader worker that exited unexpectedly, and CPython's TypeError for a keyword a library function called
by its module path does not take (the library at another release). Beside each, a line that must stay silent or
only likely."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

SO = "/opt/conda/lib/python3.10/site-packages/{}.cpython-310-x86_64-linux-gnu.so"


def test_the_undefined_tensor_singleton_missing_is_torch_not_loaded_only_likely():
    # c10::UndefinedTensorImpl::_singleton, which every torch since 1.1 exports, as the loader prints it
    singleton = template(
        "system:ld-undefined-symbol", SO.format("ops/_C"), "_ZN3c1019UndefinedTensorImpl10_singletonE"
    )
    found = explained(singleton + "\n")
    assert found.id == "log.import_torch_first" and found.details["confidence"] == "likely"
    assert "c10::UndefinedTensorImpl::_singleton" in found.summary and "import torch" in found.fix
    assert "log.broken_install" in found.details["alternatives"]


def test_the_old_singleton_is_a_build_for_torch_before_1_1_or_torch_not_loaded():
    # 358.txt (lufficc/SSD#125): at::UndefinedTensorImpl missing, pasted without its ImportError; importing torch
    # first fixed it, where a build for torch 1.0 on a newer torch misses the same name (192.txt): both named
    found = lead("358.txt")
    assert found.id == "log.extension_import" and found.details["confidence"] == "likely"
    assert "before 1.1" in found.summary and found.details["alternatives"][0] == "log.import_torch_first"
    assert "import torch" in found.fix


@pytest.mark.usefixtures("every_message_seen")  # a reading of the line as printed
def test_another_torch_symbol_missing_stays_an_extension_built_for_another_torch():
    line = template(
        "system:ld-undefined-symbol", SO.format("torch_scatter/_version_cuda"), "_ZN3c1010TensorImpl4sizeEv"
    )
    found = explained(line + "\n")
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "torch_scatter" in found.fix and "apex" not in found.fix


def test_an_apex_extension_built_for_another_torch_names_apex_and_that_torch_does_without_it():
    # 360.txt (ostris/ai-toolkit#242): a leftover apex for PyTorch 1.x under PyTorch 2.x; uninstalling apex fixed it
    found = lead("360.txt")
    assert found.id == "log.extension_import" and "NVIDIA apex" in found.summary
    assert "apex" in found.fix and "uninstall apex" in found.fix and "--cuda_ext" in found.fix
    # apex's extensions sit directly in site-packages; a module of that name inside a package folder is not apex's
    line = template("system:ld-undefined-symbol", SO.format("amp_C"), "_ZN2at4_ops4add_4callEv")
    assert "NVIDIA apex" in explained(line + "\n").summary
    line = template("system:ld-undefined-symbol", SO.format("mypkg/amp_C_extra"), "_ZN2at4_ops4add_4callEv")
    assert "apex" not in explained(line + "\n").summary


def test_torch_c_not_importable_is_a_source_tree_shadowing_torch_only_likely():
    # 362.txt (pytorch/pytorch#4622): Python 2, started in the root of the PyTorch git tree
    found = lead("362.txt")
    assert found.id == "log.torch_shadowed" and found.details["confidence"] == "likely"
    assert (
        "tree" in found.fix
        and "directory" in found.fix
        and "log.broken_install" in found.details["alternatives"]
    )
    found = explained(template("system:torch-c-not-importable") + "\n")
    assert found.id == "log.torch_shadowed" and found.summary.startswith(
        "likely: torch._C cannot be imported"
    )
    assert explained(template("system:python2-no-module-named-c") + "\n").id == "log.torch_shadowed"


def test_a_submodule_of_torch_c_or_another_module_named_like_it_is_not_the_shadowed_tree():
    # torch._C is there and lacks a part (a build without distributed): another kind, not a shadowing tree
    text = "ModuleNotFoundError: No module named 'torch._C._distributed_c10d'; 'torch._C' is not a package\n"
    assert explained(text).id != "log.torch_shadowed"
    assert explained("ImportError: No module named _Cython\n").id != "log.torch_shadowed"


def test_a_dataloader_worker_that_exited_unexpectedly_names_a_faulty_sample_as_one_reading():
    # 364.txt (cvlab-columbia/zero123#122): the workers died on training data the filer had generated
    found = lead("364.txt")
    assert found.id == "log.dataloader_shm" and found.details["confidence"] == "likely"
    assert "log.bad_training_data" in found.details["alternatives"] and "num_workers=0" in found.fix
    # a worker's bus error is shared memory or a memory-mapped file (certainty_review_3), not a faulty sample
    bus = "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error.\n"
    found = explained(bus)
    assert found.id == "log.dataloader_shm" and found.details["confidence"] == "likely"
    assert "log.bad_training_data" not in found.details.get("alternatives", [])


def test_a_keyword_a_library_function_does_not_take_is_the_library_release_only_likely():
    # 355.txt (deepspeedai/Megatron-DeepSpeed#316): an old DeepSpeed whose zero.Init lacks the keyword; the
    # keyword table (every public class since session 19) names the release that added it
    found = lead("355.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert (
        "Init(sequence_data_parallel_group=...)" in found.summary
        and "came in deepspeed 0.10" in found.summary
    )
    assert "deepspeed>=0.10" in found.fix and "pretrain_gpt.py:39" in found.fix
    frame = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    {}\n'
    error = "TypeError: " + template("system:python-unexpected-keyword-argument", "load", "weights_only")
    found = explained(frame.format("state = torch.load(path, weights_only=True)") + error + "\n")
    assert found.id == "log.dependency_version" and "torch.load()" in found.summary


def test_a_keyword_the_scripts_own_function_does_not_take_stays_unrecognised():
    frame = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    {}\n'
    error = "TypeError: " + template("system:python-unexpected-keyword-argument", "build", "foo") + "\n"
    assert explained(frame.format("model = build(foo=1)") + error).id == "log.unrecognised"
    # a library called on the same line, but not the function given the keyword
    assert explained(frame.format("model = build(torch.ones(2), foo=1)") + error).id == "log.unrecognised"


def test_the_renamed_label_is_the_sampler_and_shuffle_explain_already_knew():
    # 366.txt (NVIDIA/tacotron2#168): DataLoader given shuffle=True beside a DistributedSampler
    found = lead("366.txt")
    assert found.id == "log.dataloader_sampler_shuffle" and found.details["confidence"] == "certain"
    assert "shuffle" in found.fix
