"""Misses of the train half's build, data and launcher families read as classes (helper T38): a message the
sources print beside one already anchored, in every compiler's or release's words.

- DDP's parameter check (torch/csrc/distributed/c10d/reducer.cpp ``verify_params_across_processes``; torch 1.x's
  comm.cpp as ``replicas[0][N]``) runs two loops: a parameter whose sizes differ from rank 0's ("appears not to
  match sizes of the same param in process 0", anchored before), and one of the same shape whose strides differ
  ("appears not to match strides ..."), which nothing read (train 3091). The second is a layout, not another
  model: channels_last on some ranks, a tensor assigned from a checkpoint on one rank, or ranks on different
  torch/cuDNN builds; the message does not say which, so it is only likely, the environment named as the other
  reading.
- A compiler's refusal of a call that several overloads fit (gcc/cp/call.cc "call of overloaded '%s(%A)' is
  ambiguous", clang's err_ovl_ambiguous_call "call to %0 is ambiguous", nvcc's EDG front end "more than one
  instance of overloaded function", MSVC's C2668 "ambiguous call to overloaded function") is the sibling of the
  undeclared names compiler.py read: an extension's source against headers of another release (train 1830:
  inplace_abn's ``x.mean({0, 2})`` against torch 1.3's overloads). Likely, as the other source errors.
"""

from __future__ import annotations

import pytest
from explaining import explained, lead

pytestmark = pytest.mark.usefixtures("every_message_seen")

# reducer.cpp since torch 1.10, with the rank prefix torch 2.x's REDUCER_CHECK adds
STRIDES_2X = (
    "RuntimeError: [Rank 1]: params[3] in this process with sizes [64, 3, 1, 1] appears not to match strides of "
    "the same param in process 0.\n"
)
# torch 1.x's comm.cpp (replicas[0]), the strides loop, as DDP's construction raised it
STRIDES_1X = (
    '  File "/opt/conda/lib/python3.7/site-packages/torch/nn/parallel/distributed.py", line 333, in __init__\n'
    "    self.broadcast_bucket_size)\n"
    "RuntimeError: replicas[0][0] in this process with strides [60, 1, 15, 3] appears not to match strides of "
    "the same param in process 0.\n"
)
SIZES_1X = (
    "RuntimeError: replicas[0][12] in this process with sizes [512, 256] appears not to match sizes of the same "
    "param in process 0.\n"
)


def test_the_train_log_of_a_strides_mismatch_is_read_with_its_environment_as_the_other_reading():
    found = lead("3091.txt")
    assert found.id == "log.ddp_model_mismatch" and found.details["confidence"] == "likely", found.summary
    assert "strides" in found.summary and "[256, 256, 1, 1]" in found.summary
    assert "log.dependency_version" in found.details["alternatives"]
    assert "contiguous_format" in found.fix


@pytest.mark.parametrize("text", [STRIDES_2X, STRIDES_1X], ids=["reducer-2x", "comm-1x"])
def test_each_releases_strides_wording_is_a_layout_and_never_certain(text):
    found = explained(text)
    assert found.id == "log.ddp_model_mismatch" and found.details["confidence"] == "likely", found.summary
    assert "layout in memory" in found.summary
    assert "channels_last" in found.fix


def test_a_sizes_mismatch_is_still_another_model_near_miss():
    found = explained(SIZES_1X)
    assert found.id == "log.ddp_model_mismatch" and found.details["confidence"] == "certain", found.summary
    assert "strides" not in found.summary and "log.dependency_version" not in found.details.get(
        "alternatives", []
    )


def test_the_train_log_of_an_ambiguous_overload_is_a_source_of_another_release():
    found = lead("1830.txt")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "likely", found.summary
    assert "call of overloaded 'mean(<brace-enclosed initializer list>)' is ambiguous" in found.summary
    assert {"log.library_version_bug", "log.dependency_version"} <= set(found.details["alternatives"])
    assert "overloads" in found.fix


@pytest.mark.parametrize(
    "line",
    [
        # gcc in a UTF-8 locale: curly quotes
        "csrc/ops.cpp:41:22: error: call of overloaded \u2018sum(<brace-enclosed initializer list>)\u2019 is "
        "ambiguous",
        # clang (err_ovl_ambiguous_call)
        "csrc/ops.cpp:41:22: error: call to 'sum' is ambiguous",
        # nvcc's EDG front end (error 308)
        'csrc/ops_cuda.cu(88): error: more than one instance of overloaded function "sum" matches the argument '
        "list:",
        # MSVC cl.exe
        "csrc\\ops.cpp(41): error C2668: 'at::Tensor::sum': ambiguous call to overloaded function",
    ],
    ids=["gcc", "clang", "nvcc", "msvc"],
)
def test_every_compilers_ambiguous_call_is_read_as_a_source_error(line):
    found = explained(line + "\nerror: command '/usr/bin/gcc' failed with exit status 1\n")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "likely", found.summary
    assert "the source does not compile against the headers installed" in found.summary


def test_a_tensors_ambiguous_truth_value_is_no_compiler_error_near_miss():
    found = explained(
        "I get this error: RuntimeError: Boolean value of Tensor with more than one value is ambiguous\n"
    )
    assert found.id != "log.cuda_build", found.summary
