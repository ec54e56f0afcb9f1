"""A pass over the data that gave no batch, met where its results are joined: a dataset smaller than one batch.

Code that walks a DataLoader and joins what each batch gave (predictions for a metric, statistics of the training
set, features to cache) hands ``torch.cat`` or ``torch.stack`` a list that stays empty when the loader yields
nothing, and torch refuses the empty list:

- ``aten/src/ATen/native/TensorShape.cpp`` (cat's meta function): "torch.cat(): expected a non-empty list of
  Tensors" (a ValueError in recent releases, a RuntimeError before);
- the same file's ``stack``: "stack expects a non-empty TensorList".

A loader yields nothing when the dataset holds fewer samples than one batch and the incomplete last batch is
dropped (``drop_last=True``, a trainer's default for training; Megatron's samplers; a DistributedSampler's share of
a rank), or when the dataset (a split, a filter, a rank's shard) is empty. MACE's training script met it so on a
training set smaller than its default batch of 10 (ACEsuit/mace#1648). The same words are printed by any list that
ended empty (a filter that kept nothing, a model's queue not filled yet): likely, never certain, with that reading
named after it.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_JOINED = {"cat": "torch.cat", "stack": "torch.stack"}


def _no_batch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    joined = _JOINED["cat" if first(hits, "cat") else "stack"]
    return (
        f"{joined} was handed an empty list: the loop that should have filled it ran zero times, most often a "
        "DataLoader that yielded no batch (a dataset, or one rank's share of it, smaller than one batch whose "
        "incomplete last batch is dropped)" + on_ranks(hits),
        "Find the list on the line the traceback names and the loop that fills it. If it loops over a DataLoader, "
        "print len(dataset) and len(loader) on every rank: with drop_last=True a dataset smaller than batch_size "
        "gives no batch at all (under a DistributedSampler each rank gets len(dataset) / world_size samples). "
        "Lower batch_size (per device, times the GPUs) below the number of samples, or set drop_last=False for "
        "that loader, or add data; check that the split or filter did not leave the dataset empty. Guard the join "
        "(if not outputs: ...) where an empty pass is legitimate.",
    )


DATASET_TOO_SMALL = Recogniser(
    kind="dataset_too_small",
    title="a pass over the data that gave no batch",
    templates=("aten:cat-expected-non-empty-list", "aten:stack-expects-non-empty-tensorlist"),
    anchors=("expected a non-empty list of Tensors", "stack expects a non-empty TensorList"),
    match=R(r"(?P<cat>expected a non-empty list of Tensors)|(?P<stack>stack expects a non-empty TensorList)"),
    describe=_no_batch,
    # any list that ended empty prints the same words
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "bad_training_data",
            "a filter or selection that kept nothing (no sample, box or token passed it)",
            "Check what the loop keeps: a condition no item met (an empty mask, no valid boxes, every sample "
            "filtered out) leaves the list empty; skip the join when it is empty or fix the condition.",
        ),
    ),
)

RECOGNISERS = (DATASET_TOO_SMALL,)
