"""The knowledge the twenty-third sample by symptom (corpus files 967-984, train half) asked for, each anchored on
the message its source prints, and each only likely because the source says the line has more than one cause:
cuDNN's allocation failure as torch raises it (aten/src/ATen/cudnn/Exceptions.h; cuDNN: "usually" its own
cudaMalloc), and THC's check of a CUDA runtime call refusing an argument in torch's own THC code
(aten/src/THC/THCGeneral.cpp __THCudaCheck, torch <= 1.x). Beside each, a line that must stay another kind."""

from __future__ import annotations

from explaining import explained, filled, lead, template


def test_cudnn_could_not_allocate_its_memory():
    # 984.txt (amdegroot/ssd.pytorch#33): torch 0.x's cuDNN wrapper raised the status alone; fixed by a smaller
    # batch and cudnn.benchmark = False
    found = lead("984.txt")
    assert found.id == "log.cuda_oom" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.cpu_oom"]
    assert "cudnn.benchmark = False" in found.fix and "smaller batch" in found.fix
    # ATen's wording of the same status
    found = explained(f"RuntimeError: {template('torch_native:cudnn-status-alloc-failed')}\n")
    assert found.id == "log.cuda_oom" and found.details["confidence"] == "likely"
    assert "CUDNN_STATUS_ALLOC_FAILED" in found.summary


def test_another_cudnn_status_and_a_measured_oom_stay_as_they_were():
    # NOT_INITIALIZED is printed for a full GPU and for a cuDNN that does not fit the build alike (session 37's
    # count of the threads that post it): never a certain out-of-memory, and the other cause is named
    other = explained("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n")
    assert other.details["confidence"] == "likely"
    assert "log.cudnn_version_mismatch" in other.details["alternatives"] + [other.id]
    oom = explained(
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; "
        "2.81 GiB already allocated; 25.38 MiB free; 3.06 GiB reserved in total by PyTorch)\n"
    )
    assert oom.id == "log.cuda_oom" and oom.details["confidence"] == "certain"
    assert "cudnn.benchmark" not in oom.fix


def test_a_cuda_call_in_torchs_own_thc_code_refusing_its_argument():
    # 983.txt (daa233/generative-inpainting-pytorch#9): torch 1.1.0, gone with torch 1.0.0
    found = lead("983.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.dependency_version"]
    assert "THCGeneral.cpp:383" in found.summary and "torch.version.cuda" in found.fix
    line = filled("torch_native:thc-cuda-runtime-invalid-argument", "/pytorch/aten/src", "405")
    found = explained(f"RuntimeError: {line}\n")
    assert found.id == "log.library_version_bug" and "THCGeneral.cpp:405" in found.summary


def test_the_same_string_outside_thc_or_another_thc_string_is_not_a_torch_release():
    # an extension's own file: its arguments are the extension's, not torch's
    ext = explained(
        "RuntimeError: cuda runtime error (11) : invalid argument at /home/me/ext/src/kernel.cu:40\n"
    )
    assert ext.id != "log.library_version_bug"
    # THC's out of memory is another string of the same check
    oom = explained(
        "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCGeneral.cpp:50\n"
    )
    assert oom.id != "log.library_version_bug"
