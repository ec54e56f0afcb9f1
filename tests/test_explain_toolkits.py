"""The table of which CUDA toolkit takes which host compiler and knows which GPU (catalog/cuda_toolkits.tsv,
written by benchmarks/wheel_tags.py from NVIDIA's nvcc wheels and torch's cpp_extension.py), and what `explain`
says with it on nvcc's and torch's build lines: the CUDA releases a gcc limit belongs to, the first CUDA that takes
the build's gcc, the first that knows a GPU, the torch wheels built for a CUDA. Nothing is downloaded here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from explaining import explained, leads_with

from torchdoctor.explain.kinds import toolkits

pytestmark = pytest.mark.usefixtures("every_message_seen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import wheel_tags as generator  # noqa: E402

HOST_CONFIG = (
    "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions "
    "later than {} are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this "
    "version check; however, using an unsupported host compiler may cause compilation failure or incorrect run "
    "time execution. Use at your own risk."
)


def test_gcc_limit_names_its_cuda_and_the_cuda_that_takes_the_builds_gcc():
    found = leads_with(
        "-- The CXX compiler identification is GNU 13.2.0\n" + HOST_CONFIG.format("12"),
        "cuda_build",
        "certain",
        ["the limit of CUDA 12.0-12.3", "the build's gcc is 13", "CUDA 12.4 or later", "g++-12"],
    )
    assert "CUDA 12.4 and later accept" in found.summary


def test_gcc_limit_without_the_builds_gcc_names_no_newer_cuda():
    # near miss: the gcc the log shows is within the limit (another compiler ran the failing step)
    found = leads_with(
        "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\n" + HOST_CONFIG.format("11"),
        "cuda_build",
        "certain",
        ["the limit of CUDA 11.4-11.8", "g++-11"],
    )
    assert "later accept" not in found.summary


def test_unknown_gpu_architecture_names_the_first_cuda_that_knows_it():
    leads_with(
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'",
        "cuda_build",
        "certain",
        ["CUDA 11.8 is the first toolkit that knows it", "CUDA 11.8 or later"],
    )
    leads_with(
        "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
        "cuda_build",
        "certain",
        ["CUDA 12.8 is the first toolkit that knows it"],
    )


def test_an_architecture_no_toolkit_knows_is_not_called_too_new():
    found = explained("nvcc fatal   : Unsupported gpu architecture 'compute_77'\n")
    assert "is the first toolkit" not in found.summary
    assert "not a GPU's" in found.summary


def test_a_dropped_architecture_keeps_the_release_notes_reading():
    found = explained("nvcc fatal   : Unsupported gpu architecture 'compute_35'\n")
    assert "CUDA 12.0 and later dropped it" in found.summary


def test_cuda_mismatch_names_the_torch_wheels_built_for_the_toolkit():
    leads_with(
        "RuntimeError: \nThe detected CUDA version (12.1) mismatches the version that was used to compile\n"
        "PyTorch (11.7). Please make sure to use the same CUDA versions.",
        "cuda_build",
        "certain",
        ["on PyPI itself torch 2.1.0 to 2.4.1 are built with CUDA 12.1"],
    )


def test_table_bounds_as_the_headers_say():
    assert toolkits.releases_with_gcc_limit("12") == ["12.0", "12.1", "12.2", "12.3"]
    assert toolkits.first_taking_gcc(13) == "12.4"
    assert toolkits.first_knowing("sm_90") == "11.8"
    assert toolkits.first_knowing("compute_86") == toolkits.oldest_with_archs()


def test_the_generator_reads_host_config_bounds():
    header = (
        "#if defined(__GNUC__)\n#if __GNUC__ > 13\n#error -- unsupported GNU version! gcc versions later than 13\n"
        "#if (__clang_major__ >= 18) || (__clang_major__ < 3)\n#if _MSC_VER < 1910 || _MSC_VER >= 1950\n"
    )
    assert generator.host_bounds(header) == ("13", "18", "1950")


def test_torch_2s_own_compiler_check_names_the_cuda_that_takes_the_gcc():
    # torch/utils/cpp_extension.py (2.x): the bound is exclusive and at the end of the message
    found = leads_with(
        "RuntimeError: The current installed version of g++ (12.2.0) is greater than the maximum required version "
        "by CUDA 11.7. Please make sure to use an adequate version of g++ (>=6.0.0, <12.0).",
        "cuda_build",
        "certain",
        ["(at most 11)", "CUDA 12.0 or later", "g++-11"],
    )
    assert "gcc 12 takes CUDA 12.0 or later" in found.summary


def test_torch_2s_compiler_check_for_clang_names_no_gcc_release():
    # near miss: a clang is not looked up in the gcc column
    found = explained(
        "RuntimeError: The current installed version of clang++ (15.0.7) is greater than the maximum required "
        "version by CUDA 11.6. Please make sure to use an adequate version of clang++ (>=3.3.0, <14.0).\n"
    )
    assert "takes CUDA" not in found.summary


def test_clang_limit_names_its_cuda_and_the_first_that_takes_that_clang():
    leads_with(
        "/usr/local/cuda/include/crt/host_config.h:157:2: error: #error -- unsupported clang version! clang "
        "version must be less than 16 and greater than 3.2 . The nvcc flag '-allow-unsupported-compiler' can be "
        "used to override this version check",
        "cuda_build",
        "certain",
        ["the limit of CUDA 12.1", "clang 16 takes CUDA 12.2 or later"],
    )


def test_torch_builder_arch_names_the_first_torch_that_knows_it():
    # torch/utils/cpp_extension.py _get_cuda_arch_flags, with TORCH_CUDA_ARCH_LIST naming a Blackwell GPU
    found = leads_with(
        "ValueError: Unknown CUDA arch (12.0) or GPU not supported",
        "cuda_build",
        "certain",
        ["TORCH_CUDA_ARCH_LIST"],
    )
    assert "torch 2.7 is the first release whose extension builder knows it" in found.summary


def test_torch_builder_arch_that_no_release_knows_is_not_a_capability():
    # near miss: 8.5 is no GPU's compute capability (a typo for 8.6): no torch release is named
    found = explained("ValueError: Unknown CUDA arch (8.5) or GPU not supported\n")
    assert "is the first release" not in found.summary
    assert "not a compute capability" in found.summary
    assert toolkits.first_torch_knowing("9.0a") == "2.2"
