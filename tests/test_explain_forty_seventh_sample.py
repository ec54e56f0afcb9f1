"""The forty-seventh sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2167-2176)."""

from __future__ import annotations

import pytest
from explaining import explained as lead
from explaining import likely_with

# aten/src/ATen/native/IndexingUtils.h checkIndexTensorTypes, as taichi-dev/taichi-nerfs#15 posted it
OLD_TORCH_INDEX = "IndexError: tensors used as indices must be long, byte or bool tensors\n"
INT_INDEX = "IndexError: tensors used as indices must be long, int, byte or bool tensors\n"


def test_an_index_refused_on_windows_names_numpys_int32():
    found = likely_with(
        "Running on Windows, I got error \n" + OLD_TORCH_INDEX,
        "index_tensor_dtype",
        "log.library_version_bug",
    )
    assert "int32" in found.summary and "Windows" in found.summary
    assert ".long()" in found.fix


def test_an_index_refused_by_a_torch_that_takes_int32_is_a_float():
    found = likely_with(INT_INDEX, "index_tensor_dtype", "log.library_version_bug")
    assert "floating" in found.summary


@pytest.mark.parametrize(
    "log",
    [
        # the masked index_put decomposition's own check: a mask, not an index of the wrong type
        "RuntimeError: tensors used as masks must be bool tensors\n",
        # an embedding's ids are embedding_index_dtype's
        "RuntimeError: Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
        "Int; but got torch.cuda.FloatTensor instead (while checking arguments for embedding)\n",
    ],
    ids=["mask", "embedding"],
)
def test_other_index_checks_are_not_an_index_of_the_wrong_type(log):
    assert lead(log).id != "log.index_tensor_dtype"


# bitsandbytes' CUDA_CHECK_RETURN in csrc/pythonInterface.c, as axolotl-ai-cloud/axolotl#864 posted it: line 393 is
# cprefetch's cudaMemPrefetchAsync in bitsandbytes 0.41.0-0.42.0
PAGED_RESUME = (
    "Error invalid argument at line 393 in file /mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/"
    "pythonInterface.c\n"
)


def test_a_paged_optimizers_refused_prefetch_is_its_state_restored_from_a_checkpoint():
    found = lead(
        "when using bitsandbytes (qlora) training, the paged_adamw_32bit results in this error:\n"
        + PAGED_RESUME
    )
    assert (found.id, found.details["confidence"]) == ("log.library_version_bug", "likely")
    assert (
        "0.41.0-0.42.0" in found.summary and "paged_adamw_32bit" in found.fix and "adamw_torch" in found.fix
    )


def test_a_later_releases_prefetch_line_is_read_from_its_own_file():
    # 0.45.x's csrc/pythonInterface.cpp: cudaMemPrefetchAsync on line 400; another line of the file is only the check
    found = lead("Error invalid argument at line 400 in file /src/csrc/pythonInterface.cpp\n")
    assert found.id == "log.library_version_bug" and "0.45.x" in found.summary
    other = lead("Error invalid argument at line 401 in file /src/csrc/pythonInterface.cpp\n")
    assert other.id == "log.library_version_bug" and "most often the prefetch" in other.summary


@pytest.mark.parametrize(
    "log",
    [
        # the same check on a managed allocation that found no memory: not a refused prefetch
        "Error out of memory at line 387 in file /src/csrc/pythonInterface.cpp\n",
        # the same check in bitsandbytes' kernels' file: an invalid argument of a kernel's own
        "Error invalid argument at line 120 in file /src/csrc/ops.cu\n",
    ],
    ids=["out_of_memory", "kernels_file"],
)
def test_other_errors_of_bitsandbytes_check_are_not_a_refused_prefetch(log):
    found = lead(log)
    assert "prefetch" not in found.summary
