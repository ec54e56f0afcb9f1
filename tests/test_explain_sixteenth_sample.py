"""The knowledge the sixteenth sample by symptom (corpus files 617-639, train half) asked for, each anchored on the
message its source prints: ATen refusing pack_padded_sequence lengths that are not on the CPU
(aten/src/ATen/native/PackedSequence.cpp), and CPython's OSError for ESTALE ('Stale file handle') read beside the
cache it hit: Triton's / Inductor's kernel cache, or the Hugging Face datasets cache, on a shared file system.
Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_pack_padded_sequence_lengths_on_the_gpu_certain():
    # 621.txt (facebookresearch/ParlAI#2910): the lengths followed the input onto CUDA after a torch update; a
    # library's code (ParlAI's) made the call, and the line alone cannot say whose: likely, the library named
    found = lead("621.txt")
    assert found.id == "log.pack_lengths_on_gpu" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert "lengths.cpu()" in found.fix and "list" in found.fix
    # as ATen prints it, under rnn.py's frame
    line = "RuntimeError: " + template("torch_native:pack-lengths-1d-cpu-int64", "1D cuda:0 Long tensor")
    found = explained(
        '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/utils/rnn.py", line 244, in '
        "pack_padded_sequence\n    _VF._pack_padded_sequence(input, lengths, batch_first)\n" + line + "\n"
    )
    assert found.id == "log.pack_lengths_on_gpu" and "1D cuda:0 Long tensor" in found.summary


def test_another_packed_sequence_check_is_not_lengths_on_the_gpu():
    # PackedSequence.cpp's other check: lengths in the wrong order, not on the wrong device
    found = explained(
        "RuntimeError: `lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
        "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
        "if you do not need ONNX exportability.\n"
    )
    assert found.id != "log.pack_lengths_on_gpu"


def test_a_stale_triton_cache_is_a_compile_cache_on_a_shared_file_system():
    # 569.txt (opendatahub-io/distributed-workloads#844; drawn by this sample too, as 633, removed at the merge):
    # pods on two nodes compiling Triton kernels into one NFS volume
    found = lead("569.txt")
    assert found.id == "log.compile_cache_shared" and found.details["confidence"] == "certain"
    assert "TRITON_CACHE_DIR" in found.fix
    # as CPython prints it for a file of Triton's cache folder
    line = (
        "OSError: "
        + template("system:estale-stale-file-handle")
        + ": '/home/u/.triton/cache/ab12/kernel.json'"
    )
    found = explained(line + "\n")
    assert found.id == "log.compile_cache_shared" and "/home/u/.triton/cache" in found.summary


def test_a_stale_datasets_cache_is_a_datasets_cache_on_a_shared_file_system():
    # 634.txt (hiyouga/LlamaFactory#3388): the title, a file of the Hugging Face datasets cache; likely, as a
    # labelled log of a compile cache on a shared file system printed the same ESTALE (catalog/seen_on.tsv)
    found = lead("634.txt")
    assert found.id == "log.dataset_cache_shared" and found.details["confidence"] == "likely"
    assert "compile_cache_shared" in found.details["evidence"]
    assert "HF_DATASETS_CACHE" in found.fix and "local" in found.fix


def test_a_stale_file_handle_on_another_file_is_neither_cache():
    # ESTALE on a file no cache holds (a checkpoint, the dataset itself): the cause is not the cache
    found = explained("OSError: [Errno 116] Stale file handle: '/nfs/project/ckpt/step_1000.pt'\n")
    assert found.id not in ("log.compile_cache_shared", "log.dataset_cache_shared")
    # nor is a cache path without the stale handle a failure of either kind
    found = explained("Using cache found in /home/u/.cache/huggingface/datasets/text/default\n")
    assert found.id not in ("log.compile_cache_shared", "log.dataset_cache_shared")


def test_nvcc_refusing_a_conversion_is_a_source_written_for_another_torch():
    # 618.txt (xinntao/EDVR#105): DCNv2 passing a c10::ScalarType where the installed torch's API wants at::Type
    # at::Type (gone in torch 1.3) in the error: the version reading leads, likely (test_explain_legacy_torch_api.py)
    found = lead("618.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "log.cuda_build" in found.details["alternatives"]
    assert "c10::ScalarType" in found.summary and "torch API of another release" in found.summary
    # nvcc's other wording for the same refusal, as printed
    line = template(
        "system:nvcc-no-suitable-conversion-function", "src/ops.cu", "42", "at::Tensor", "const at::Type &"
    )
    found = explained(line + "\n")
    assert found.id == "log.dependency_version" and "log.cuda_build" in found.details["alternatives"]


def test_the_same_words_outside_a_compiler_error_are_not_a_build_failure():
    # not a diagnostic (no `error:`): a note or a sentence about the conversion does not make a build fail
    found = explained('note: no suitable constructor exists to convert from "int" to "at::Type"\n')
    assert found.id != "log.cuda_build"
