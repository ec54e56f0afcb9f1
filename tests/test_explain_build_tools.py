"""The build and install tools' own messages (catalog/build_tools.tsv): nvcc and CUDA's host_config.h, gcc's driver,
CMake, setuptools, pip, uv, conda, glibc's loader and the extension packages' own checks. Each as its source prints
it, values filled in, with the kind and certainty it must give and a word its summary or fix must hold; beside them,
lines that look alike and must not give that reading."""

from __future__ import annotations

import pytest
from explaining import explained, template

from torchdoctor.explain.catalog import load

pytestmark = pytest.mark.usefixtures("every_message_seen")

HOST_CONFIG = "/usr/local/cuda/include/crt/host_config.h:151:2: error: "

# (template id, values, text around it, kind, confidence, a word the summary or fix holds)
PRINTED = [
    # crt/host_config.h: the host compiler newer than the toolkit accepts
    (
        "error-unsupported-gnu-version-gcc-versions",
        ("12",),
        HOST_CONFIG + "{}",
        "cuda_build",
        "certain",
        "g++-12",
    ),
    (
        "error-unsupported-gnu-version-gcc-versions-2",
        ("8",),
        HOST_CONFIG + "{}",
        "cuda_build",
        "certain",
        "gcc-8",
    ),
    (
        "error-unsupported-clang-version-clang-version",
        ("16",),
        HOST_CONFIG + "{}",
        "cuda_build",
        "certain",
        "clang 15",
    ),
    # nvcc's driver
    ("nvcc-fatal-value-is-not-defined", ("sm_35",), "{}", "cuda_build", "certain", "CUDA 12.0"),
    ("nvcc-fatal-value-is-not-defined", ("sm_120",), "{}", "cuda_build", "certain", "12.8"),
    ("nvcc-fatal-the-version-of-the", ("80100", "Apple clang"), "{}", "cuda_build", "certain", "-ccbin"),
    ("nvcc-fatal-host-compiler-targets-unsupported", (), "{}", "cuda_build", "certain", "Visual Studio"),
    ("nvcc-error-died-due-to-signal", ("cicc", "9"), "{}", "cuda_build", "certain", "MAX_JOBS"),
    ("nvcc-error-died-due-to-signal-2", ("ptxas", "11"), "{}", "cuda_build", "certain", "bug"),
    # gcc's driver: the out-of-memory killer took cc1plus
    (
        "fatal-error-killed-signal-terminated-program",
        ("g++", "cc1plus"),
        "{}\ncompilation terminated.",
        "cuda_build",
        "certain",
        "MAX_JOBS",
    ),
    # CMake, distutils, setuptools on Windows
    ("cmake-error-cmake-was-unable-to", (), "{}", "cuda_build", "certain", "pip install ninja"),
    ("unable-to-execute-no-such-file", ("gcc",), "{}", "cuda_build", "likely", "build-essential"),
    ("error-unable-to-find-vcvarsall-bat", (), "{}", "cuda_build", "certain", "Build Tools"),
    ("error-microsoft-visual-is-required-get", (), "{}", "cuda_build", "certain", "Build Tools"),
    # NVIDIA apex's setup.py (a RuntimeError there, flash-attn's a warning): no CUDA toolkit found
    (
        "was-requested-but-nvcc-was-not",
        ("--cuda_ext",),
        "RuntimeError: {}",
        "cuda_build",
        "likely",
        "CUDA_HOME",
    ),
    ("error-failed-to-build-installable-wheels", ("flash-attn",), "{}", "cuda_build", "likely", "flash-attn"),
    # torch's ninja call failing (any compile error: likely), and the CUDA floor of setup.py's built on flash-attn's
    (
        "subprocess-calledprocesserror-command-ninja-returned-non",
        ("1",),
        "{}",
        "cuda_build",
        "likely",
        "CUDA_HOME",
    ),
    (
        "is-only-supported-on-cuda-and",
        ("mamba_ssm", "11.6"),
        "RuntimeError: {}",
        "cuda_build",
        "certain",
        "mamba_ssm",
    ),
    # pip running out of disk while it installs (pip 21+, and the words before)
    ("error-could-not-install-packages-due", (), "{}", "disk_full", "certain", "full"),
    ("error-could-not-install-packages-due-3", (), "{}", "disk_full", "certain", "full"),
    # pip's resolver
    (
        "error-cannot-install-because-these-package",
        ("torch==2.1.0 and torchvision==0.17.0",),
        "{}\n\nThe conflict is caused by:\n    The user requested torch==2.1.0\n    torchvision 0.17.0 depends on "
        "torch==2.2.0\n",
        "dependency_version",
        "certain",
        "torchvision 0.19.1",
    ),
    ("error-resolutionimpossible-for-help-visit-https", (), "{}", "dependency_version", "certain", "Loosen"),
    (
        "error-package-requires-different-python-not",
        ("flash-attn", "3.8.10", ">=3.9"),
        "{}",
        "no_matching_wheel",
        "certain",
        "Python 3.8",
    ),
    (
        "error-packages-require-different-python-not",
        ("3.8.10",),
        "{}\n'>=3.9' (required by flash-attn)",
        "no_matching_wheel",
        "certain",
        "3.8",
    ),
    (
        "error-is-not-supported-wheel-on",
        ("flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",),
        "{}",
        "no_matching_wheel",
        "certain",
        "cp310",
    ),
    # pip building a Rust package because no wheel fits (likely: an old pip prints it too); Python 3.12's setuptools
    (
        "error-can-find-rust-compiler",
        (),
        "      running build_rust\n      {}",
        "no_matching_wheel",
        "likely",
        "rustup",
    ),
    (
        "attributeerror-module-pkgutil-has-no-attribute",
        (),
        "{}",
        "dependency_version",
        "certain",
        "numpy>=1.26",
    ),
    # NumPy's C API against a module compiled for another NumPy (both directions), and torch's warning about it
    (
        "module-that-was-compiled-using-numpy",
        ("2.0.2",),
        "{}\nSome module may need to rebuild instead e.g. with 'pybind11>=2.12'.",
        "dependency_version",
        "certain",
        "numpy<2",
    ),
    ("attributeerror-array-api-not-found", (), "{}", "dependency_version", "certain", "2.3 or later"),
    (
        "failed-to-initialize-numpy",
        ("_ARRAY_API not found (Triggered internally at ../torch/csrc/utils/tensor_numpy.cpp:84.)",),
        "UserWarning: {}",
        "dependency_version",
        "certain",
        "numpy<2",
    ),
    (
        "runtimeerror-module-compiled-against-api-version",
        ("0x10", "0xe"),
        "{}\nImportError: numpy.core.multiarray failed to import",
        "dependency_version",
        "certain",
        "pip install -U numpy",
    ),
    # uv's resolver: the headline and the chain alone are likely (printed for a missing package as well)
    ("no-solution-found-when-resolving-dependencies", (), "  {}\n", "dependency_version", "likely", "pins"),
    (
        "because-depends-on-and-you-require",
        ("xformers==0.0.28", "torch==2.5.0", "torch==2.4.1"),
        "  ╰─▶ {}",
        "dependency_version",
        "likely",
        "torchvision",
    ),
    (
        "has-no-wheels-with-matching-python",
        ("faiss-cpu==1.7.4", "cp313"),
        "  ╰─▶ Because {} and you require faiss-cpu==1.7.4",
        "no_matching_wheel",
        "certain",
        "faiss-cpu",
    ),
    (
        "has-no-wheels-with-matching-platform",
        ("onnxruntime==1.20.1", "macosx_12_0_x86_64"),
        "  ╰─▶ Because {} and you require onnxruntime",
        "no_matching_wheel",
        "certain",
        "platform",
    ),
    (
        "the-current-python-version-does-not",
        ("3.11.14", ">=3.12"),
        "  ╰─▶ Because {} and demo==1.0 depends on Python>=3.12",
        "no_matching_wheel",
        "certain",
        "3.11",
    ),
    (
        "this-error-likely-indicates-that-depends",
        ("flash-attn==2.6.1", "torch", "flash-attn", "torch", "torch"),
        "  × Failed to build `flash-attn==2.6.1`\n  ╰─▶ ModuleNotFoundError: No module named 'torch'\n  hint: {}",
        "build_isolation",
        "certain",
        "--no-build-isolation",
    ),
    (
        "this-error-likely-indicates-that-depends",
        (
            "openai-whisper@20240930",
            "pkg_resources",
            "openai-whisper",
            "pkg_resources",
            "pkg_resources",
        ),
        "  × Failed to build `openai-whisper==20240930`\n  hint: {}",
        "build_isolation",
        "certain",
        "extra-build-dependencies",
    ),
    # conda and its libmamba solver
    (
        "unsatisfiableerror-the-following-specifications-were-found",
        (),
        "{}\n\nOutput in format: Requested package -> Available versions",
        "dependency_version",
        "certain",
        "channel_priority",
    ),
    (
        "found-conflicts-looking-for-incompatible-packages",
        (),
        "{}\nThis can take several minutes.  Press CTRL-C to abort.\nfailed",
        "dependency_version",
        "likely",  # printed before any of conda's sections: a Python or a system one too
        "conda",
    ),
    (
        "libmambaunsatisfiableerror-encountered-problems-while-solving",
        (),
        "{}\n  - nothing provides cuda-version >=12 needed by pytorch-cuda-12.1",
        "dependency_version",
        "likely",
        "conda",
    ),
    (
        "packagesnotfounderror-the-following-packages-are-not",
        (),
        "{}\n\n  - pytorch-cuda=10.0\n",
        "no_matching_wheel",
        "certain",
        "conda-forge",
    ),
    (
        "resolvepackagenotfound",
        (),
        "{}\n  - libgcc-ng=11.2.0\n",
        "no_matching_wheel",
        "certain",
        "--no-builds",
    ),
    # Windows: CPython's loader words and torch's own DLL loading (a broken install prints them too: likely)
    (
        "importerror-dll-load-failed-while-importing",
        ("flash_attn_2_cuda", "The specified module could not be found."),
        "{}",
        "extension_import",
        "likely",
        "flash_attn_2_cuda",
    ),
    (
        "importerror-dll-load-failed",
        ("The specified module could not be found.",),
        "{}",
        "extension_import",
        "likely",
        "import torch first",
    ),
    (
        "oserror-winerror-error-loading-or-one",
        (
            "126",
            "The specified module could not be found.",
            "C:\\venv\\Lib\\site-packages\\torch\\lib\\c10.dll",
        ),
        "{}",
        "extension_import",
        "likely",
        "vc_redist",
    ),
    (
        "microsoft-visual-redistributable-is-not-installed",
        (),
        "UserWarning: {}",
        "extension_import",
        "likely",
        "vc_redist",
    ),
    # torchvision against torch: another CUDA (its own check), another release (torch refusing its operators)
    (
        "detected-that-pytorch-and-torchvision-were",
        ("13", "0", "12", "8"),
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "--no-deps",
    ),
    (
        "runtimeerror-operator-torchvision-does-not-exist",
        ("nms",),
        "{}",
        "extension_import",
        "likely",
        "torchvision==0.19.1",
    ),
    # glibc's loader, bitsandbytes' and xformers' load checks
    (
        "importerror-version-glibc-not-found-required",
        ("/lib64/libc.so.6", "2.28", "/opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so"),
        "{}",
        "extension_import",
        "certain",
        "glibc 2.28",
    ),
    (
        "the-installed-version-of-bitsandbytes-was",
        (),
        "UserWarning: {}",
        "extension_import",
        "likely",
        "python -m bitsandbytes",
    ),
    ("the-installed-version-of-bitsandbytes-was-2", (), "{}", "extension_import", "likely", "CUDA"),
    (
        "cuda-setup-failed-despite-gpu-being",
        (),
        "RuntimeError:\n        {}\n\n        python -m bitsandbytes",
        "extension_import",
        "likely",
        "LD_LIBRARY_PATH",
    ),
    (
        "warning-xformers-xformers-can-load-cuda",
        ("2.2.1+cu118", "1108", "2.2.2+cu121", "3.10.11", "3.10.11"),
        "{}",
        "extension_import",
        "likely",  # a warning the run goes on from, whatever versions it prints (test_explain_certainty_review_7)
        "2.2.2+cu121",
    ),
]


@pytest.mark.parametrize(
    "ident, values, around, kind, confidence, word",
    PRINTED,
    ids=[f"{p[0]}-{'-'.join(p[1])[:20]}" for p in PRINTED],
)
def test_a_build_tool_message_gives_its_kind(ident, values, around, kind, confidence, word):
    line = template(f"build_tools:{ident}", *values)
    found = explained(around.replace("{}", line) + "\n")
    assert found.id == f"log.{kind}", found.summary
    assert found.details["confidence"] == confidence
    assert word in found.summary + found.fix


# lines that hold part of an anchor's words, or sit beside the same failure, and must not give the reading
NEAR_MISSES = [
    # a shell script's own compiler check (EDK2's build scripts), not CUDA's host_config.h
    ('echo "Unsupported CLANG version!"\nUnsupported CLANG version!', "cuda_build"),
    # the shell reporting a killed training process: not a compiler killed during a build
    ("bash: line 1: 4242 Killed                  python train.py --batch 64", "cuda_build"),
    # pip backtracking: slow, not failed
    (
        "INFO: pip is looking at multiple versions of torch to determine which version is compatible with other "
        "requirements. This could take a while.",
        "dependency_version",
    ),
    # pip's note on the versions it skipped, lower-case python: printed before a failure, not the refusal itself
    (
        "ERROR: Ignored the following versions that require a different python version: 1.26.0 Requires-Python >=3.9",
        "no_matching_wheel",
    ),
    # a wheel pip installs
    (
        "Processing ./flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
        "no_matching_wheel",
    ),
    # conda retrying, which often succeeds
    (
        "Solving environment: failed with initial frozen solve. Retrying with flexible solve.",
        "dependency_version",
    ),
    # uv resolving fine
    ("Resolved 42 packages in 1.21s", "dependency_version"),
    # bitsandbytes loading its CUDA library
    (
        "CUDA SETUP: Loading binary /opt/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda118.so...",
        "extension_import",
    ),
    # Windows loading a DLL fine
    ("Successfully loaded DLL C:\\venv\\Lib\\site-packages\\torch\\lib\\c10.dll", "extension_import"),
    # another package's operator missing: not torchvision's pairing with torch
    ("RuntimeError: operator mmcv::nms does not exist", "extension_import"),
    # torch's NumPy warning when NumPy is not installed at all: a missing package, not its C API
    ("UserWarning: Failed to initialize NumPy: No module named 'numpy'", "dependency_version"),
    # CMake failing to find make, not ninja
    (
        'CMake Error: CMake was unable to find a build program corresponding to "Unix Makefiles".',
        "cuda_build",
    ),
]


@pytest.mark.parametrize("text, kind", NEAR_MISSES, ids=[k + str(i) for i, (_, k) in enumerate(NEAR_MISSES)])
def test_a_look_alike_does_not_give_that_kind(text, kind):
    assert explained(text + "\n").id != f"log.{kind}"


def test_another_module_without_an_attribute_is_not_the_python_312_reading():
    found = explained("AttributeError: module 'pkgutil' has no attribute 'walk_modules'\n")
    assert "ImpImporter" not in found.summary


def test_flash_attn_s_own_cuda_floor_keeps_its_own_reading():
    found = explained(
        "RuntimeError: "
        + template("build_tools:is-only-supported-on-cuda-and", "FlashAttention", "11.6")
        + "\n"
    )
    assert found.id == "log.cuda_build" and found.summary.startswith("flash-attn needs CUDA 11.6")


def test_the_torch_libstdcxx_reading_is_not_the_glibc_one():
    # GLIBCXX (libstdc++) against GLIBC (the C library): two fixes
    found = explained(
        "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
        "/opt/venv/lib/python3.10/site-packages/gymtorch.so)\n"
    )
    assert (
        found.id == "log.extension_import" and "libstdc++" in found.summary and "glibc" not in found.summary
    )


def test_xformers_built_for_the_torch_installed_is_only_likely():
    # the same warning when the versions agree: another cause (a CPU-only build, a missing CUDA library)
    line = template(
        "build_tools:warning-xformers-xformers-can-load-cuda",
        "2.2.1+cu118",
        "1108",
        "2.2.1+cu118",
        "3.10.11",
        "3.10.11",
    )
    found = explained(line + "\n")
    assert found.id == "log.extension_import" and found.details["confidence"] == "likely"


def test_pip_conflict_with_a_package_without_any_build_is_likely_and_names_it():
    found = explained(
        template(
            "build_tools:error-cannot-install-because-these-package", "torch-npu==2.7.1 and torch==2.7.1"
        )
        + "\n\nThe conflict is caused by:\n    The user requested torch==2.7.1\n    torch-npu 2.7.1 depends on "
        "torch==2.7.1+cpu\n\n"
        + template("build_tools:additionally-some-packages-in-these-conflicts")
        + "\n    torch\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "no_matching_wheel" in str(found.details.get("alternatives"))


def test_every_row_names_its_source_and_most_are_mapped():
    rows = load()["build_tools"]
    assert len(rows) >= 60 and all(t.file for t in rows)
    assert sum(1 for t in rows if t.kind) >= 40
