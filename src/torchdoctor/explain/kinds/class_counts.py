"""The model's number of classes and the dataset's class names disagree.

mmdetection's NumClassCheckHook (``mmdet/datasets/utils.py``, ``_check_head``, before every training and
validation epoch) asserts "The `num_classes` (N) in <head> of <model> does not matches the length of `CLASSES` M)
in <dataset>": the head was set to the custom dataset's classes, but the dataset still has its default class names
(COCO's 80) because ``classes`` was not given to it, or was given to a wrapper (RepeatDataset, ConcatDataset) that
does not pass it on. Certain.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

CLASS_COUNT = re.compile(
    r"The `num_classes` \((?P<head_classes>\d+)\) in (?P<head>\w+) of \w+ does not matches the length of "
    r"`CLASSES` \(?(?P<dataset_classes>\d+)\) in (?P<dataset>\w+)"
)


def _classes(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    head, count = first(hits, "head") or "the head", first(hits, "head_classes") or "N"
    dataset, names = first(hits, "dataset") or "the dataset", first(hits, "dataset_classes") or "M"
    wrapped = dataset in ("RepeatDataset", "ConcatDataset", "ClassBalancedDataset", "MultiImageMixDataset")
    where = (
        f"the dataset inside {dataset} (data = dict(train=dict(dataset=dict(classes=classes, ...)))), which "
        f"{dataset} does not pass on"
        if wrapped
        else f"{dataset} (classes=... beside its ann_file, in train, val and test)"
    )
    return (
        f"{head} predicts {count} classes but {dataset} has {names} class names: the custom classes were not "
        "given to the dataset" + on_ranks(hits),
        f"Give the class names to {where}: classes = ('a', 'b', ...) with num_classes = len(classes) in the head "
        "(mmdet 3.x: metainfo=dict(classes=classes) in each dataloader's dataset).",
    )


DATASET_CLASSES_MISMATCH = Recogniser(
    kind="dataset_classes_mismatch",
    title="the head's class count and the dataset's class names disagree",
    templates=("third_party:mmdet-num-classes-does-not-match-classes",),
    anchors=("does not matches the length of `CLASSES`",),
    match=CLASS_COUNT,
    facts=(CLASS_COUNT,),
    describe=_classes,
)

RECOGNISERS = (DATASET_CLASSES_MISMATCH,)
