"""A pass over the data that gave no batch: its results joined from nothing, or Lightning handed a loader of none.

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

Lightning counts the batches before its loop starts (``lightning/pytorch/utilities/data.py`` ``has_len_all_ranks``,
summing ``len(dataloader)`` over the ranks): "Total length of `DataLoader` across ranks is zero. Please make sure this
was your intention." (a warning from 1.6; 1.5 raised it as a MisconfigurationException ending "Please make sure that it
returns at least 1 batch.") and "... across ranks is zero, but local rank has zero length. Please be cautious of
uneven batch length." (a rank with none where others have some; when empty ranks are not allowed Lightning raises
"... within local rank has zero length", which ``lightning_calls`` reads). For the training loader ``Trainer.fit`` then stops with "`Trainer.fit` stopped: No training batches." and
the run exits 0 having trained nothing; that line, or 1.5's exception, makes the reading certain. The warning alone is
likely: Lightning 2.0.0 printed it for a validation loader left unused with ``num_sanity_val_steps=0``
(Lightning-AI/pytorch-lightning#17193, fixed in 2.0.1).
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


def _loader_empty(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    loader = (first(hits, "empty_loader") or "DataLoader").strip("`")
    where = (
        "on this rank only (the others have batches)" if first(hits, "local_rank_empty") else "on every rank"
    )
    stopped = " and Trainer.fit stopped without training" if "no_training_batches" in ctx.facts else ""
    return (
        f"Lightning's {loader} yields no batch {where}{stopped}" + on_ranks(hits),
        "Print len(dataset) and len(dataloader) where the loader is built: a dataset with fewer samples than "
        "batch_size gives no batch when drop_last=True (under DDP each rank gets len(dataset) / world_size "
        "samples); an empty dataset comes from a wrong data path, split name or filter. Lower batch_size or set "
        "drop_last=False, fix the path, and check limit_train_batches / limit_val_batches (0 disables the loop). "
        "On Lightning 2.0.0 with num_sanity_val_steps=0 the warning about a validation loader is the release's "
        "own (2.0.1 fixed it).",
    )


DATALOADER_EMPTY = Recogniser(
    # lightning/pytorch/utilities/data.py has_len_all_ranks (1.5's MisconfigurationException, 1.6+ warnings)
    kind="dataloader_empty",
    title="a Lightning loader that yields no batch",
    templates=(
        "lightning:total-length-of-across-ranks-is",
        "lightning:total-length-of-across-ranks-is-2",
    ),
    anchors=("across ranks is zero",),
    facts=(
        R(r"Total length of (?P<empty_loader>`?\w{1,40}`?) across ranks is zero"),
        R(r"(?P<local_rank_empty>but local rank has zero length)"),
        R(r"(?P<misconfigured>MisconfigurationException: Total length of [^\n]{1,60} across ranks is zero)"),
    ),
    # the warning alone is printed for a loader meant to be empty too (and by 2.0.0 for an unused one); fit's
    # "No training batches" (a fact of the whole log: kinds/__init__.py) or 1.5's exception confirms it
    confirm=lambda hits, ctx: bool(first(hits, "misconfigured")) or "no_training_batches" in ctx.facts,
    describe=_loader_empty,
)

RECOGNISERS = (DATASET_TOO_SMALL, DATALOADER_EMPTY)
