"""torch's own CMake messages, building torch from source or an extension against it (helper T58, session 39;
kinds/torch_cmake.py, catalog/build_tools.tsv).

Train 6077.txt (pytorch/pytorch#133293): cmake/public/cuda.cmake's "Failed to find nvToolsExt" building PyTorch
against CUDA 12.6, which torch 2.5 fixed by using nvtx3. The other messages are as real builds printed them in
public threads (the lines quoted in each test, CMake's wrapping and indentation kept), each read as the build
family's `cuda_build` with the fix its source names; CMake's notes that the configure goes on after are not read.
"""

from __future__ import annotations

from explaining import explained, lead

from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.kinds import build, torch_cmake


def test_train_6077_the_missing_nvtoolsext_names_nvtx3_and_the_release_that_uses_it():
    found = lead("6077.txt")
    assert found.id == "log.cuda_build", found.summary
    assert "nvtx3" in found.fix and "torch 2.5" in found.fix, found.fix
    assert "2.0 to 2.4" in found.summary, found.summary


def test_cuda_12_9s_link_interface_error_names_torch_2_8():
    # conda-forge/pytorch-cpu-feedstock#375, building an extension against torch's installed CMake files
    found = explained(
        "  CMake Error at /home/conda/feedstock_root/build_artifacts/momentum/_h_env/share/cmake/Caffe2/public/"
        "cuda.cmake:162 (set_property):\n"
        '    The link interface of target "torch::nvtoolsext" contains:\n'
        "\n"
        "      CUDA::nvToolsExt\n"
        "\n"
        "    but the target was not found.  Possible reasons include:\n"
    )
    assert found.id == "log.cuda_build", found.summary
    assert "torch 2.8" in found.fix and "nvtx3" in found.fix, found.fix
    assert "2.5 to 2.7" in found.summary, found.summary


def test_a_cuda_torchs_cmake_package_without_a_toolkit_or_cudnn():
    # a libtorch build's configure, as posted: the warning, then Caffe2Config's error
    found = explained(
        "CMake Warning at /home/include/libtorch/share/cmake/Caffe2/public/cuda.cmake:31 (message):\n"
        "  Caffe2: CUDA cannot be found.  Depending on whether you are building Caffe2\n"
        "  or a Caffe2 dependent library, the next warning / error will give you more\n"
        "  info.\n"
        "Call Stack (most recent call first):\n"
        "  /home/include/libtorch/share/cmake/Caffe2/Caffe2Config.cmake:87 (include)\n"
        "\n"
        "CMake Error at /home/include/libtorch/share/cmake/Caffe2/Caffe2Config.cmake:91 (message):\n"
        "  Your installed Caffe2 version uses CUDA but I cannot find the CUDA\n"
        "  libraries.  Please set the proper CUDA prefixes and / or install CUDA.\n"
    )
    assert found.id == "log.cuda_build" and "no CUDA toolkit" in found.summary, found.summary
    assert "CUDA_HOME" in found.fix and "whl/cpu" in found.fix, found.fix
    found = explained(
        "  Your installed Caffe2 version uses cuDNN but I cannot find the cuDNN\n"
        "  libraries.  Please set the proper cuDNN prefixes and / or install cuDNN.\n"
    )
    assert found.id == "log.cuda_build" and "cuDNN" in found.summary and "CUDNN_ROOT" in found.fix


def test_two_conflicting_toolkits_in_both_wordings():
    # pytorch/pytorch#108931 (torch 2.1.0-rc3 from source: one toolkit through a symlink)
    for text in (
        "CMake Error at cmake/public/cuda.cmake:65 (message):\n"
        "  Found two conflicting CUDA installs:\n"
        "\n"
        "  V12.0.76 in '/usr/tce/packages/cuda/cuda-12.0.0/include' and\n",
        "CMake Error at cmake/public/cuda.cmake:47 (message):\n  Found two conflicting CUDA versions:\n",
    ):
        found = explained(text)
        assert found.id == "log.cuda_build" and "headers of another" in found.summary, found.summary
        assert "CUDA_HOME" in found.fix and "CMakeCache.txt" in found.fix, found.fix


def test_cmakes_notes_on_nvtx3_are_not_a_failure():
    # pytorch/pytorch#139108: libtorch 2.5.0 configuring, the notes before its real error
    found = explained(
        "1> [CMake] -- Could NOT find nvtx3 (missing: nvtx3_dir) \n"
        "1> [CMake]   The package name passed to `find_package_handle_standard_args` (nvtx3) does\n"
        "1> [CMake]   not match the name of the calling package (Caffe2).  This can lead to\n"
    )
    assert found.id == "log.unrecognised", found.summary


def test_every_anchor_is_in_its_catalog_template_and_cited():
    for ident in torch_cmake.TEMPLATES:
        template = by_id()[ident]
        assert template.kind == "cuda_build" and template.versions, ident
        assert ident in build.CUDA_BUILD.templates
    texts = [by_id()[ident].text for ident in torch_cmake.TEMPLATES]
    for anchor in torch_cmake.ANCHORS:
        assert any(anchor in text for text in texts), anchor
        assert anchor in build.CUDA_BUILD.anchors
