"""The sixty-first sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2867-2878)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# aten/src/ATen/native/cuda/linalg/BatchLinearAlgebra.cpp, in a CUDA build made without MAGMA:
#     TORCH_CHECK(false, "cholesky_inverse: MAGMA library not found in compilation. Please rebuild with MAGMA.");
def test_a_cuda_build_without_magma_names_the_op_and_the_rebuild():
    found = reads(
        "RuntimeError: cholesky_inverse: MAGMA library not found in compilation. Please rebuild with MAGMA.\n",
        "backend_unavailable",
        "certain",
    )
    assert "cholesky_inverse" in found.summary and "MAGMA" in found.summary
    assert "magma-cuda" in found.fix and "rebuild" in found.fix


# the same file's lu: "Calling torch.lu on a CUDA tensor requires compiling PyTorch with MAGMA. Please rebuild ..."
def test_lu_on_a_cuda_build_without_magma_reads_the_same():
    found = reads(
        "RuntimeError: Calling torch.lu on a CUDA tensor requires compiling PyTorch with MAGMA. "
        "Please rebuild with MAGMA.\n",
        "backend_unavailable",
        "certain",
    )
    assert "torch.lu" in found.summary


# aten/src/ATen/native/BatchLinearAlgebra.cpp, a build without LAPACK: AT_ERROR("gesv: LAPACK library not found
# in compilation")
def test_a_build_without_lapack_says_lapack_on_the_cpu():
    found = reads(
        "RuntimeError: gesv: LAPACK library not found in compilation\n", "backend_unavailable", "certain"
    )
    assert "LAPACK" in found.summary and "MAGMA" not in found.summary
    assert "RuntimeError" not in found.summary


def test_magma_missing_at_run_time_is_not_a_build_without_it():
    found = explained("OSError: libmagma.so.2: cannot open shared object file: No such file or directory\n")
    assert found.id != "log.backend_unavailable"


def test_magma_not_initialised_is_not_a_build_without_it():
    found = explained(
        "Error in magma_getdevice_arch: MAGMA not initialized (call magma_init() first) or bad device\n"
    )
    assert found.id != "log.backend_unavailable"


# setuptools-scm src/setuptools_scm/_get_version_impl.py _version_missing (8.x), a LookupError:
#     f"setuptools-scm was unable to detect version for {config.absolute_root}.\n\n" + "Make sure you're ..."
def test_setuptools_scm_without_git_metadata_says_to_install_from_a_clone():
    found = reads(
        "LookupError: setuptools-scm was unable to detect version for /workspace/speech-recipes.\n"
        "\n"
        "Make sure you're either building from a fully intact git repository or PyPI tarballs. Most other "
        "sources (such as GitHub's tarballs, a git checkout without the .git folder) don't contain the necessary "
        "metadata and will not work.\n",
        "broken_install",
        "likely",
    )
    assert "/workspace/speech-recipes" in found.summary
    assert "git clone" in found.fix and "SETUPTOOLS_SCM_PRETEND_VERSION" in found.fix


# setuptools_scm/__init__.py before 8.0 quoted the root: "setuptools-scm was unable to detect version for %r."
def test_setuptools_scm_quoted_root_reads_the_same():
    found = reads(
        "LookupError: setuptools-scm was unable to detect version for '/home/ana/ssl-toolkit-main'.\n",
        "broken_install",
        "likely",
    )
    assert (
        "'/home/ana/ssl-toolkit-main'" not in found.summary and "/home/ana/ssl-toolkit-main" in found.summary
    )


def test_setuptools_scm_shallow_clone_warning_is_not_a_missing_version():
    found = explained(
        '/opt/venv/lib/python3.11/site-packages/setuptools_scm/git.py:163: UserWarning: "/src" is shallow and '
        "may cause errors\n"
    )
    assert found.id != "log.broken_install"
