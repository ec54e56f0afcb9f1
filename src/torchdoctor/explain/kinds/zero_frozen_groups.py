"""DeepSpeed ZeRO's optimizer handed a parameter group with nothing to train: its flat buffers built from nothing.

ZeRO keeps only the parameters that train. Stages 1 and 2 (``deepspeed/runtime/zero/stage_1_and_2.py``
``DeepSpeedZeroOptimizer.__init__``) put each optimizer group's ``requires_grad`` parameters in a list and flatten it
into the group's buffer (``flatten_dense_tensors_aligned``, a ``torch.cat``): a group whose parameters are all frozen
flattens an empty list, and torch refuses it ("torch.cat(): expected a non-empty list of Tensors"). DeepSpeed's engine
drops a group with no parameters at all (``engine.py``: "Removing param_group that has no 'params'"), not one whose
parameters are all frozen. Stage 3 (``stage3.py`` ``_get_trainable_parameter_groups``) skips frozen groups, and with no
trainable parameter left its sizes are the maximum of an empty list: ``largest_partitioned_param_numel = max(...)``
over ``self.fp16_partitioned_groups`` (``_create_fp16_partitions_with_defragmentation``) or ``largest_numel =
max([sum([p.ds_numel for p in psg]) for psg in self.fp16_partitioned_groups])`` (``initialize_optimizer_states``),
CPython's "max() arg is an empty sequence".

So a model handed to ``deepspeed.initialize`` (or ``accelerator.prepare``) with an optimizer and ZeRO 1-3 but no
parameter to train in a group: a frozen reference or teacher model prepared with the training config, parameters
frozen after the optimizer was built, a weight-decay group a name filter left with frozen parameters only. Read where
the traceback's frame or source line is ZeRO's and nothing else names the error; likely (the same frames fail on
another empty list a release's bug builds), read by autograd_usage.py's ``optimizer_no_params``.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "a library refusing its settings"

ANCHORS = (
    "in flatten_dense_tensors_aligned",
    "largest_partitioned_param_numel = max(",
    "for psg in self.fp16_partitioned_groups])",
)
TEMPLATES = (
    "third_party:deepspeed-zero12-flatten-frozen-group",
    "third_party:deepspeed-zero3-largest-partitioned-param-numel",
    "third_party:deepspeed-zero3-largest-numel-partitioned-groups",
)
# lines after the frame or source line the empty-list error may stand on (torch's frames between, a rich box)
SPAN = 12
_AFTER = r"(?=(?:\n[^\n]*){0,%d}?\n[^\n]*(?:%s))"
_CAT = _AFTER % (SPAN, r"expected a non-empty list of Tensors")
_MAX = _AFTER % (SPAN, r"max\(\) arg is an empty sequence|max\(\) iterable argument is empty")
REFUSED = re.compile(
    rf"(?P<zero12_flatten>stage_1_and_2\.py\"?,? line \d+,? in flatten_dense_tensors_aligned){_CAT}|"
    rf"(?P<zero3_no_trainable>largest_partitioned_param_numel = max\(|largest_numel = max\(\[sum\(\[p\.ds_numel "
    rf"for p in psg\]\) for psg in self\.fp16_partitioned_groups\]\)){_MAX}"
)
FACTS = ("zero12_flatten", "zero3_no_trainable")


def no_trainable(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for ZeRO's optimizer meeting a group with no parameter to train."""
    stage = "ZeRO-3" if first(hits, "zero3_no_trainable") else "ZeRO stage 1/2"
    return (
        f"DeepSpeed {stage} built its optimizer's flat buffers from a parameter group with no parameter to train "
        "(every parameter in it has requires_grad=False), so it joined an empty list" + on_ranks(hits),
        "ZeRO flattens only the parameters that train, group by group, and fails on a group (or, under ZeRO-3, a "
        "whole optimizer) with none. Build the optimizer after freezing, from the trainable parameters only: "
        "[p for p in model.parameters() if p.requires_grad], leaving out a group that ends empty (a weight-decay "
        "split by name can leave one of frozen parameters only). A model that does not train (a reference, "
        "teacher or reward model) needs no optimizer: give deepspeed.initialize no optimizer and a config "
        "without one (stage 0, or stage 3 for its partitioned weights), as TRL's prepare_deepspeed does for its "
        "reference model. print(sum(p.numel() for p in model.parameters() if p.requires_grad)) should not be 0.",
    )
