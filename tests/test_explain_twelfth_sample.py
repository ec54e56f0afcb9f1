"""The knowledge the twelfth sample by symptom (corpus files 451-466, train half) asked for, each anchored on the
message its source prints: torch.compile refusing the Python it runs on (torch/_dynamo/eval_frame.py,
torch/__init__.py), DeepSpeed ZeRO-3's forward hook meeting torch's plain parameter dict
(deepspeed/runtime/zero/parameter_offload.py under torch >= 2.5), torch's own internal assert
(c10/util/Exception.h), and a PyTorch Geometric batch that reached the model as a tuple (nn.DataParallel's
scatter). Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_torch_compile_refusing_the_python_version_is_a_version_that_disagrees_certain():
    # 453.txt (pytorch/pytorch#104918): torch 2.0.1 on Python 3.11
    found = lead("453.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "Python 3.11" in found.summary
    assert "pip install -U torch" in found.fix and "nightly" in found.fix
    # torch 2.13's wordings, as eval_frame.py and torch.compile raise them
    line = "RuntimeError: " + template("torch_native:dynamo-python-not-yet-supported", "3.15")
    found = explained(line + "\n")
    assert found.id == "log.dependency_version" and "Python 3.15" in found.summary
    line = "RuntimeError: " + template("torch_native:compile-not-supported-on-python", "3.12+")
    found = explained(line + "\n")
    assert found.id == "log.dependency_version" and "Python 3.12" in found.summary
    gil = "RuntimeError: torch.compile is not supported on Python < 3.13.3 built with GIL disabled. Please use Python 3.13.3+.\n"
    found = explained(gil)
    assert found.id == "log.dependency_version" and "free-threaded" in found.summary


def test_torch_compile_refusing_windows_is_not_read_as_the_python_version():
    # torch 2.0's other refusal in check_if_dynamo_supported names the platform, not a Python version
    found = explained("RuntimeError: Windows not yet supported for torch.compile\n")
    assert "refuses Python" not in found.summary


def test_zero3_meeting_a_plain_parameter_dict_is_deepspeeds_release_bug_only_likely():
    # 456.txt (deepspeedai/DeepSpeed#8009): a module attached after deepspeed.initialize, torch >= 2.5
    found = lead("456.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "ZeROOrderedDict" in found.summary and "torch >= 2.5" in found.summary
    assert "pip install -U deepspeed" in found.fix and "deepspeed.zero.Init()" in found.fix
    assert found.details["alternatives"] == ["log.dependency_version"]
    # the traceback's last line as CPython prints it inside a rank's hook
    line = "[rank0]: AttributeError: " + template("third_party:deepspeed-zero3-plain-dict-in-forward")
    assert explained(line + "\n").id == "log.library_version_bug"


def test_another_dict_attribute_error_is_not_zero3():
    found = explained("AttributeError: 'dict' object has no attribute 'in_forward'\n")
    assert found.id != "log.library_version_bug"


def test_torchs_internal_assert_is_a_bug_of_the_release_only_likely():
    # 462.txt (salesforce/GeDi#10): torch 1.7's autograd view assert, fixed by the release the project pins (1.6)
    found = lead("462.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "variable.cpp" in found.summary
    assert "pip install -U torch" in found.fix and "pins" in found.fix
    assert found.details["alternatives"] == ["log.dependency_version"]
    line = template("torch_native:internal-assert-failed", "false", "../c10/core/TensorImpl.h", "1600", "")
    found = explained("RuntimeError: " + line + "\n")
    assert found.id == "log.library_version_bug" and "TensorImpl.h" in found.summary


def test_an_assertion_that_is_not_torchs_internal_one_is_not_a_torch_bug():
    found = explained("AssertionError: INTERNAL ASSERT in my_metric(): counts differ\n")
    assert found.id != "log.library_version_bug"


def test_a_graph_batch_as_a_tuple_is_dataparallel_splitting_it_only_likely():
    # 459.txt (lightaime/deep_gcns_torch#9): torch.nn.DataParallel over a PyTorch Geometric model
    found = lead("459.txt")
    assert found.id == "log.dataparallel_custom_batch" and found.details["confidence"] == "likely"
    assert "'num_nodes'" in found.summary and "tuple" in found.summary
    assert "torch_geometric.nn.DataParallel" in found.fix and "DistributedDataParallel" in found.fix
    # 461.txt (JiaruiFeng/KP-GNN#1): the same line, a project's own broken multi-GPU path named beside it
    found = lead("461.txt")
    assert found.id == "log.dataparallel_custom_batch"
    assert found.details["alternatives"] == ["log.library_version_bug"]
    line = "AttributeError: " + template("third_party:pyg-batch-attribute-on-tuple", "list")
    assert explained(line + "\n").id == "log.dataparallel_custom_batch"


def test_a_graph_attribute_missing_from_another_object_is_not_dataparallel():
    # a None graph or the model's own class: not a batch DataParallel split
    assert explained("AttributeError: 'NoneType' object has no attribute 'num_nodes'\n").id != (
        "log.dataparallel_custom_batch"
    )
    assert explained("AttributeError: 'GCN' object has no attribute 'edge_index'\n").id != (
        "log.dataparallel_custom_batch"
    )
