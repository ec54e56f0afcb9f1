"""Compiled packages built for one torch release and loaded under another (helper T54, issue 19).

Each reading is tested on the train log that showed it, on the text its source prints (the catalog's template
filled as the source fills it), and on a near miss:

- torchao's refusal of its C++ kernels (torchao/__init__.py, 0.13.0-0.16.x and 0.17.0 on), and the process aborting
  where a text names the package, the torch it was built with and the torch it ran under (train 5418.txt,
  pytorch/ao#2908); a bare "Aborted (core dumped)" is no evidence;
- the loader's undefined torch symbol without a library path: the package named from the installed frame that
  raised, or the one compiled package the line names (train 5424.txt, flash-attention#954), never two; an
  extension module built in a source tree is rebuilt there (train 2386.txt, maskrcnn-benchmark's _C);
- CPython's "cannot import name" is never a subpackage not imported (``from pkg import sub`` imports it), and a
  triton name missing is read as the triton torch pins (train 5422.txt, coreweave/ml-containers#64).
"""

from __future__ import annotations

from explaining import explained, filled, read


def test_a_build_for_torch_2_8_aborting_under_2_9():
    # train 5418.txt: "if we build torchao with torch 2.8, and then import it in an environment with torch 2.9+,
    # the Python process will crash with Aborted (core dumped)."
    found = read("5418.txt", "dependency_version", "likely")
    assert "torchao built with torch 2.8" in found.summary and "2.9+" in found.summary, found.summary
    assert "torchao 0.14.1 for torch 2.9.0" in found.fix, found.fix


def test_another_package_built_for_another_torch_aborting():
    found = explained(
        "We compiled flash-attn against torch 2.4.0 in the image; after upgrading to torch 2.5.1 the trainer "
        "dies with Aborted (core dumped)\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "likely"), found.summary
    assert "flash-attn built with torch 2.4.0" in found.summary and "2.5.1" in found.summary, found.summary
    assert "pip install --force-reinstall --no-cache-dir --no-build-isolation flash-attn" in found.fix, (
        found.fix
    )


def test_a_bare_abort_is_no_evidence():
    found = explained("import torchao\nAborted (core dumped)\n")
    assert found.id != "log.dependency_version", found.summary


def test_torchaos_refusal_before_0_17_names_both_releases():
    text = filled("third_party:torchao-skipping-cpp-extensions-for-torchao", "2.9.1+cu128", "0.13.0")
    found = explained(text + "\nRuntimeError: Float8Tensor dispatch failed\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "torchao 0.13.0 was not built for torch 2.9.1+cu128" in found.summary, found.summary


def test_torchaos_refusal_from_0_17_names_the_minimum():
    text = filled("third_party:torchao-skipping-cpp-extensions-upgrade-torch", "2.11.0", "2.9.1+cu128")
    found = explained(text + "\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "needs torch >= 2.11.0, found 2.9.1+cu128" in found.summary, found.summary
    assert "pip install 'torchao==<that release>'" in found.fix, found.fix


def test_a_torch_symbol_missing_names_the_package_the_line_names():
    # train 5424.txt: "... incompatiable with flash attn now——will cause error undefined symbol:
    # _ZN3c104cuda9SetDeviceEi"
    found = read("5424.txt", "extension_import", "likely")
    assert "--no-cache-dir flash-attn" in found.fix and "<that package>" not in found.fix, found.fix
    assert "flash-attn: its setup.py downloads the release wheel" in found.fix, found.fix


def test_a_torch_symbol_missing_names_the_frame_that_raised():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/train.py", line 3, in <module>\n'
        "    import mamba_ssm\n"
        '  File "/opt/conda/lib/python3.10/site-packages/mamba_ssm/__init__.py", line 3, in <module>\n'
        "    from mamba_ssm.ops.selective_scan_interface import selective_scan_fn\n"
        "ImportError: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    )
    assert found.id == "log.extension_import", found.summary
    assert "--no-cache-dir mamba_ssm" in found.fix and "<that package>" not in found.fix, found.fix


def test_two_packages_named_on_the_line_name_neither():
    found = explained(
        "after installing xformers, flash_attn fails: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    )
    assert found.id == "log.extension_import", found.summary
    assert "<that package>" in found.fix, found.fix


def test_a_triton_name_torch_imports_is_the_triton_torch_pins():
    # train 5422.txt: inductor's `from triton.compiler.compiler import triton_key` under a pip-bumped triton
    found = read("5422.txt", "dependency_version", "likely")
    assert "not the release the installed torch pins" in found.summary, found.summary
    assert "subpackage" not in found.summary and "requires('torch')" in found.fix, found.fix


def test_attribute_access_may_still_be_a_subpackage_not_imported():
    # train 1689.txt: "module 'segmentation_models_pytorch' has no attribute 'utils'" keeps that reading
    found = read("1689.txt", "dependency_version", "likely")
    assert "from segmentation_models_pytorch import utils" in found.fix, found.fix


def test_cannot_import_name_is_never_a_subpackage_not_imported():
    found = explained(
        "ImportError: cannot import name 'losses' from 'mylib.models' (/usr/lib/python3/site-packages/mylib/"
        "models/__init__.py)\n"
    )
    assert "subpackage" not in found.summary and "Import the subpackage" not in (found.fix or ""), (
        found.summary
    )


def test_an_extension_built_in_a_source_tree_is_rebuilt_there():
    # train 2386.txt: "ImportError: ../maskrcnn_benchmark/_C.cpython-35m-x86_64-linux-gnu.so: undefined symbol:
    # _ZN2at4cuda20getCurrentCUDAStreamEl"
    found = read("2386.txt", "extension_import", "likely")
    assert "maskrcnn_benchmark is loaded from a source tree" in found.fix, found.fix
    assert "python setup.py build develop" in found.fix and "<that package>" not in found.fix, found.fix


def test_a_shared_library_outside_a_package_is_no_source_tree():
    found = explained("ImportError: /opt/conda/lib/libmyops.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    assert found.id == "log.extension_import", found.summary
    assert "source tree" not in found.fix and "<that package>" in found.fix, found.fix
