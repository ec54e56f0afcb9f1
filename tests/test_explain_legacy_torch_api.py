"""A C++/CUDA extension's compile error that names torch's old C++ API leads with the version reading.

torch removed its TH/THC C library in 1.11 (THTensor, THCState, THC/THC.h), AT_CHECK in 1.5 (TORCH_CHECK since
1.2) and at::Type in 1.3 (DeprecatedTypeProperties). versions.py already reads two wordings of that cause as
dependency_version ("'AT_CHECK' was not declared in this scope", "THC/THC.h: No such file or directory": train
1119, 1121, 1123, 1022); the compiler's other wordings of it (train 223: gcc's "dereferencing pointer to
incomplete type 'THTensor'" from a torch.utils.ffi extension written for torch 0.4.0; train 618: nvcc's "no
suitable constructor exists to convert from "c10::ScalarType" to "at::Type"" from DCNv2 built against a torch
older than it) fell to cuda_build, the build failing for any reason. The version reading now leads them, likely
(`Alternative.first_when` on the ``legacy_torch_api`` fact), with the build failure named after it. A name of
CUDA's own (train 2475's __hfma2, train 6718's CUDA_R_16BF) is the toolkit's or the architecture's: cuda_build.
"""

from __future__ import annotations

from explaining import explained, lead

from torchdoctor.explain.kinds.compiler import LEGACY_TORCH_API


def test_an_incomplete_thtensor_reads_as_a_source_of_another_torch_release():
    found = lead("223.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "THTensor" in found.summary and "torch C++ API only older releases have" in found.summary
    # the build failure and the release's own port stay named after it
    assert {"log.cuda_build", "log.library_version_bug"} <= set(found.details["alternatives"])


def test_headers_asking_for_at_type_read_as_a_torch_older_than_the_source():
    found = lead("618.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "at::Type" in found.summary and "log.cuda_build" in found.details["alternatives"]


def test_the_same_line_alone_on_standard_input():
    # train 618's first line, as nvcc prints it
    found = explained(
        'src/deform_conv_cuda_kernel.cu(258): error: no suitable constructor exists to convert from "c10::ScalarType" '
        'to "at::Type"\n'
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary


def test_at_check_undeclared_stays_the_certain_version_reading():
    # the old rule was right here and stays: versions.py reads it certain, before any build reading
    found = lead("1119.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain", found.summary


def test_cuda_names_stay_build_failures():
    # __hfma2: an architecture older than half arithmetic in the build's list (train 2475, NATTEN)
    assert lead("2475.txt").id == "log.cuda_build"
    # CUDA_R_16BF: cuBLAS's bfloat16 type, which the CUDA 10.2 toolkit does not define (train 6718, apex)
    assert lead("6718.txt").id == "log.cuda_build"


def test_the_fact_is_read_on_an_error_line_only():
    assert LEGACY_TORCH_API.search('foo.cu(58): error: identifier "THCudaCheck" is undefined')[
        "legacy_torch_api"
    ] == ("THCudaCheck")
    assert (
        LEGACY_TORCH_API.search("error: 'AT_CHECK' was not declared in this scope")["legacy_torch_api"]
        == "AT_CHECK"
    )
    # train 2475's instantiation note names torch's current accessors, on a line that is not an error
    assert not LEGACY_TORCH_API.search(
        '          detected during instantiation of "void kernel(at::PackedTensorAccessor32<scalar_t, 4UL>)"'
    )
    # current API whose name starts like the old ones: not theirs
    assert not LEGACY_TORCH_API.search("error: no member named 'TypeMeta' in namespace 'at::TypeMeta'")
    assert not LEGACY_TORCH_API.search('error: identifier "at::TypeError" is undefined')
