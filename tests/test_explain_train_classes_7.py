"""Classes of the train half's misses read the general way (helper T52, issue 19).

- ATen's elementwise check (``ExpandUtils.cpp`` infer_size_impl) with its two sizes one apart in a dimension from 2
  on: a side odd at some down-sampling, floored when halved, meets its skip connection one short. It leads as
  input_size_not_divisible, likely, the plain broadcast reading beside it; sizes further apart, or one apart in
  dimension 0 or 1 (a batch, channels), stay broadcast_size_mismatch;
- CPython's bare ``__init__() got an unexpected keyword argument`` quoted in prose, with the call that passed the
  keyword on a line near it (not in a traceback): the call names the class, and the release tables say which
  release of its package takes the keyword;
- torch.utils.checkpoint's CheckpointError: the fix names scaled_dot_product_attention taking another backend on
  recomputation (its cuDNN backend), and how to pin the backends;
- Lightning's ``*_dataloader`` hooks left undefined (``core/hooks.py``): asked for by code that calls the hook
  itself, the script's or a package's written for another Lightning release (the Trainer asks only for overridden
  hooks), both in the fix, likely.
"""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, read, template

ELEMENTWISE = "aten:size-of-tensor-a-must-match-tensor-b"


def test_a_skip_connection_one_short_is_an_input_size_not_divisible():
    found = read("2295.txt", "input_size_not_divisible", "likely")
    assert "log.broadcast_size_mismatch" in found.details["alternatives"], found.details
    # the two sides named, and the size the input would have had at the first down-sampling
    assert "193 against 192" in found.summary and "384 rather than 386" in found.fix, (
        found.summary,
        found.fix,
    )
    assert "one_apart" not in str(found.details["facts"]), found.details["facts"]


@pytest.mark.parametrize(
    "a, b, dim",
    [
        ("20", "19", "2"),  # a carry: the nine turns into a zero
        ("64", "65", "3"),  # the larger second: the skip is the odd one
        ("200", "199", "2"),
        ("57", "56", "4"),  # a volume's (N, C, D, H, W) last side
    ],
)
def test_sizes_one_apart_as_torch_prints_them(a, b, dim):
    text = "RuntimeError: " + template(ELEMENTWISE, a, b, dim)
    leads_with(text, "input_size_not_divisible", "likely", [f"{a} against {b}", "F.interpolate"])


@pytest.mark.parametrize(
    "a, b, dim",
    [
        ("64", "63", "1"),  # channels (or a sequence of an (N, L) batch): no down-sampling reading
        ("64", "65", "0"),  # the batch
        ("13", "2", "2"),  # shares the digit 3 and 2 are one apart, not the sizes
        ("1000", "999", "2"),  # three nines carried: not spelled out, so the plain reading
        ("192", "96", "3"),
    ],
)
def test_other_sizes_stay_a_broadcast_mismatch(a, b, dim):
    text = "RuntimeError: " + template(ELEMENTWISE, a, b, dim)
    found = explained(text + "\n")
    assert found.id == "log.broadcast_size_mismatch", (text, found.id, found.summary)


def test_a_keyword_refusal_quoted_in_prose_finds_its_class_on_the_call_near_it():
    found = read("1428.txt", "dependency_version", "likely")
    assert "CrossEntropyLoss(label_smoothing=...)" in found.summary and "torch 1.10" in found.summary, (
        found.summary
    )
    assert "torch>=1.10" in found.fix, found.fix


def test_the_call_above_the_quote_counts_too_and_a_call_without_the_keyword_does_not():
    # CPython before 3.10 names no class ("__init__() got ..."): the class is the call that passed the keyword
    above = (
        "I build the loss like this:\n"
        "optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)\n"
        "criterion = torch.nn.CrossEntropyLoss(label_smoothing=0.1)\n"
        "and it fails with TypeError: __init__() got an unexpected keyword argument 'label_smoothing'\n"
    )
    leads_with(
        above, "dependency_version", "likely", ["CrossEntropyLoss(label_smoothing=...)", "torch>=1.10"]
    )
    elsewhere = (
        "and it fails with TypeError: __init__() got an unexpected keyword argument 'label_smoothing'\n"
        "criterion = nn.CrossEntropyLoss(weight=class_weights)\n"
    )
    assert explained(elsewhere).id == "log.unrecognised"


def test_checkpoint_recomputation_names_the_attention_backend():
    found = leads_with(
        "torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following "
        "tensors have different metadata than during the forward pass.\n"
        "tensor at position 28:\n"
        "saved metadata: {'shape': torch.Size([]), 'dtype': torch.int64, 'device': device(type='cuda', index=0)}\n"
        "recomputed metadata: {'shape': torch.Size([]), 'dtype': torch.uint64, 'device': device(type='cuda', "
        "index=0)}",
        # since session 43 (T63) a library's option leads, as both labelled threads established; the part of the
        # model that recomputes differently stays named as the other reading
        "library_option_conflict",
        "likely",
        ["cuDNN", "sdpa_kernel"],
    )
    assert "scaled_dot_product_attention" in found.fix, found.fix
    assert "log.activation_checkpoint_recompute" in found.details["alternatives"], found.details


@pytest.mark.parametrize("stage", ["train", "val", "test", "predict"])
def test_a_dataloader_hook_the_module_leaves_undefined(stage):
    # lightning/pytorch/core/hooks.py raises it; the Trainer asks only for hooks a class overrides, so the caller
    # is the script's code or a package's written for another release: likely, both named
    text = "lightning.fabric.utilities.exceptions.MisconfigurationException: " + template(
        f"lightning:{stage}-dataloader-must-be-implemented-to"
    )
    leads_with(
        text,
        "lightning_call_refused",
        "likely",
        [f"`{stage}_dataloader`", "define the hook", "pytorch-lightning"],
    )


def test_the_train_log_of_an_undefined_val_dataloader():
    found = read("1384.txt", "lightning_call_refused", "likely")
    assert "pytorch-lightning release" in found.fix, found.fix
