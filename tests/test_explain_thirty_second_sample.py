"""The knowledge the thirty-second sample by symptom (corpus files 1417-1433, train half) asked for, each anchored
on the message its source prints: torch/cuda/__init__.py's _lazy_init ("Torch not compiled with CUDA enabled",
raised by any call into torch.cuda on a CPU build of torch, the build another vendor's extension (torch_npu,
intel_extension_for_pytorch, habana_frameworks) runs on), and flash-attn's csrc/flash_attn/flash_api.cpp ("FlashAttention
only support fp16 and bf16 data type", its check of the query's dtype). Beside each, a line that must stay as it
was."""

from __future__ import annotations

import pytest
from explaining import explained, lead, leads_with


@pytest.mark.usefixtures("every_message_seen")  # a reading of the line as printed
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


def test_flash_attention_given_float32_is_likely_the_model_dtype_or_a_library_cast():
    # 1422.txt (princeton-nlp/AutoCompressors#15): flash-attn's mha_fwd checks the query's dtype; the float32 came
    # from the library's rotary embedding, not the model: so likely, the library's cast named beside the model's dtype
    found = lead("1422.txt")
    assert (found.id, found.details["confidence"]) == ("log.dtype_mismatch", "likely"), found.summary
    assert "library's own code" in found.summary and "torch_dtype=torch.bfloat16" in found.fix
    assert "316d800" in found.fix
    leads_with(
        '  File "/usr/local/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 52, in '
        "_flash_attn_forward\n"
        "    out, q, k, v, out_padded, softmax_lse, S_dmask, rng_state = flash_attn_cuda.fwd(\n"
        "RuntimeError: FlashAttention only support fp16 and bf16 data type",
        "dtype_mismatch",
        "likely",
        ["FlashAttention", "autocast", "attn_implementation='sdpa'"],
    )
    # transformers' own check of two precision flags is not the kernel's dtype
    found = explained("ValueError: At most one of fp16 and bf16 can be True, but not both\n")
    assert "half precision only" not in found.summary and "query" not in found.summary, found.summary


def test_label_smoothing_is_a_keyword_torch_1_10_added_to_cross_entropy_loss():
    # the table read from the released wheels (benchmarks/api_keywords.py, now with torch/nn/modules/loss.py):
    # 1428.txt (kekmodel/MPL-pytorch#28) on torch 1.9.0 prints the bare __init__ with the call line after it in
    # prose, which names no callable; CPython 3.10+ names the class, and a traceback's call line does too
    leads_with(
        "TypeError: CrossEntropyLoss.__init__() got an unexpected keyword argument 'label_smoothing'",
        "dependency_version",
        "likely",  # no release stated, and sentence_transformers has a CrossEntropyLoss too
        ["torch 1.10", "torch>=1.10"],
    )
    leads_with(
        '  File "train.py", line 32, in create_loss_fn\n'
        "    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)\n"
        "TypeError: __init__() got an unexpected keyword argument 'label_smoothing'",
        "dependency_version",
        "likely",
        ["torch>=1.10", "of the project's own"],
    )
    # a keyword no release of it takes (a misspelling) is not a release's
    found = explained(
        "TypeError: CrossEntropyLoss.__init__() got an unexpected keyword argument 'ignore_idx'\n"
    )
    assert found.id != "log.dependency_version", found.summary
