"""CCCL 3.0 (the CUB/Thrust/libcu++ CUDA 13 ships) removed what CCCL 2.8 deprecated: a source still naming
cub::Sum, cub::Max, thrust::unary_function or CUB_MAX stops in nvcc's front end ("namespace "cub" has no member
"Sum""). Read on nvcc 13.0's own output (recorded on the project's VM: tests/fixtures/cuda/SOURCES.md), on a
user's post of the same line without the toolkit's release (train 5921), and on the catalog's templates of the
compilers' other forms; beside them, the same nvcc message on a name CCCL never had, and on torch's own API."""

from __future__ import annotations

from pathlib import Path

from explaining import explained, leads_with, template

CUDA = Path(__file__).parent / "fixtures" / "cuda"
CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


def test_nvcc_13_on_a_removed_cub_functor_is_certain_and_names_its_replacement():
    found = leads_with(
        (CUDA / "cccl3-removed-cub-sum-nvcc-13.0.txt").read_text(),
        "cuda_build",
        "certain",
        ["cub::Sum", "CCCL 3.0", "the log shows CUDA 13", "cuda::std::plus<>", "CUDA 12.x"],
    )
    # the reading is the cause: no other reading of a generic compile error beside it
    assert found.details.get("alternatives", []) == []


def test_the_same_line_posted_without_the_toolkit_release_is_only_likely():
    # CuMesh#12: the error line alone; CCCL can be installed apart from the toolkit, so the release is not known
    leads_with(
        (CORPUS / "5921.txt").read_text(),
        "cuda_build",
        "likely",
        ["cub::Sum", "CCCL", "nvcc --version", "cuda::std::plus<>"],
    )


def test_a_cub_name_no_cccl_release_declared_is_not_read_as_a_removal():
    found = leads_with(
        (CUDA / "cub-name-never-declared-nvcc-13.0.txt").read_text(),
        "cuda_build",
        "likely",
        ["cub::Maximum", "do not declare"],
    )
    assert "which CCCL 3.0 removed" not in found.summary and "replaces cub::Maximum" not in found.fix
    assert "still has cub::Maximum" not in found.fix


def test_a_toolkit_path_and_cmake_identification_show_cuda_13():
    line = template("system:nvcc-has-no-member", "kernel.cu", "12", "namespace", "thrust", "unary_function")
    for beside in (
        "/usr/local/cuda-13.0/bin/nvcc -c kernel.cu -o kernel.o",
        "-- The CUDA compiler identification is NVIDIA 13.0.88",
    ):
        leads_with(
            f"{beside}\n{line}", "cuda_build", "certain", ["thrust::unary_function", "drop it as a base"]
        )
    # CUDA 12's path is no evidence of CCCL 3
    leads_with(f"/usr/local/cuda-12.4/bin/nvcc -c kernel.cu\n{line}", "cuda_build", "likely", ["CCCL 3.0"])


def test_gcc_and_clang_on_host_code_and_a_removed_macro_read_the_same():
    gcc = template("system:gcc-is-not-a-member-of", "src/reduce.cpp", "8", "40", "Max", "cub")
    leads_with(gcc, "cuda_build", "likely", ["cub::Max", "cuda::maximum<>"])
    clang = "src/reduce.cpp:8:40: error: no member named 'Sum' in namespace 'cub'"
    leads_with(clang, "cuda_build", "likely", ["cub::Sum", "cuda::std::plus<>"])
    macro = template("system:nvcc-identifier-undefined", "scan.cu", "77", "CUB_MAX")
    leads_with(macro, "cuda_build", "likely", ["CUB_MAX", "cuda::std::max"])


def test_nvcc_has_no_member_on_torch_api_is_the_torch_release_not_cccl():
    line = template("system:nvcc-has-no-member", "ops.cu", "30", "class", "at::Tensor", "data")
    found = explained(line + "\n")
    assert found.id == "log.cuda_build" and "at::Tensor" in found.summary
    assert "CCCL" not in found.summary + found.fix
