"""A data loader asked for its length when its batch sampler has none to give.

torch's ``BatchSampler.__len__`` (``torch/utils/data/sampler.py``, every release) reads ``self.drop_last`` to count
the batches, and ``DataLoader.__len__`` asks its batch sampler for that count. A batch sampler that subclasses
``BatchSampler`` without running its ``__init__`` (detectron2's and torchvision's references' GroupedBatchSampler,
which group images by aspect ratio) has no ``drop_last``, so ``len(loader)`` (a progress bar, an epoch length, a
scheduler's total steps) ends in CPython's AttributeError "'GroupedBatchSampler' object has no attribute
'drop_last'". Such a sampler has no length by design: how many batches an epoch yields depends on how the samples
fall into groups, and detectron2's training loader is endless (facebookresearch/detectron2#186). Likely: a
sampler of one's own that forgot the attribute prints the same.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _no_len(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    sampler = first(hits, "nolen_sampler", "the batch sampler")
    return (
        f"len() was asked of a data loader whose batch sampler ({sampler}) subclasses torch's BatchSampler without "
        "its drop_last, so BatchSampler.__len__ cannot count the batches" + on_ranks(hits),
        f"A grouped or endless training sampler like {sampler} has no length: the number of batches depends on "
        "how the samples fall into groups. Do not call len() on the training loader: count training in "
        "iterations (detectron2's SOLVER.MAX_ITER, a scheduler's total steps given as a number, max_steps), or "
        "give the sampler its own __len__ (an estimate: len(sampler) // batch_size) if a progress bar needs one. "
        "For a sampler of your own, call BatchSampler.__init__ or set self.drop_last in its __init__.",
    )


DATALOADER_HAS_NO_LEN = Recogniser(
    kind="dataloader_has_no_len",
    title="len() of a data loader whose batch sampler has no length",
    templates=("torch_native:batch-sampler-len-without-drop-last",),
    anchors=("object has no attribute 'drop_last'",),
    match=R(r"'(?P<nolen_sampler>\w{0,100}Sampler)' object has no attribute 'drop_last'"),
    # a sampler of the user's own that forgot the attribute prints the same line
    confirm=lambda hits, ctx: False,
    describe=_no_len,
)

RECOGNISERS = (DATALOADER_HAS_NO_LEN,)
