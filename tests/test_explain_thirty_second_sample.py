"""The knowledge the thirty-second sample by symptom (corpus files 1417-1433, train half) asked for, each anchored
on the message its source prints: torch/cuda/__init__.py's _lazy_init ("Torch not compiled with CUDA enabled",
raised by any call into torch.cuda on a CPU build of torch, the build another vendor's extension (torch_npu,
intel_extension_for_pytorch, habana_frameworks) runs on). Beside each, a line that must stay as it was."""

from __future__ import annotations

from explaining import explained, lead, leads_with


def test_torch_without_cuda_beside_another_vendors_accelerator_is_only_likely():
    # 1433.txt (hiyouga/LlamaFactory#7986): torch and torch-npu 2.2.0 on an Ascend NPU; transformers > 4.49 reached
    # CUDA's lazy init through torch's to() of an int (fixed in torch 2.5.1): a library's release, not a wrong wheel
    found = lead("1433.txt")
    assert (found.id, found.details["confidence"]) == ("log.cuda_unavailable", "likely"), found.summary
    assert "library's release" in found.summary and "torch-npu 2.5.1" in found.fix
    assert "Install a CUDA build" not in found.fix
    leads_with(
        '  File "/usr/local/python3.10/site-packages/torch_npu/utils/_module.py", line 20, in to\n'
        "AssertionError: Torch not compiled with CUDA enabled",
        "cuda_unavailable",
        "likely",
        ["device='npu'"],
    )
    # without another vendor's extension in sight it stays a CPU-only wheel, certain, with its fix
    found = explained(
        '  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py", line 289, in _lazy_init\n'
        '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.cuda_unavailable", "certain"), found.summary
    assert "Install a CUDA build" in found.fix and "library's release" not in found.summary
