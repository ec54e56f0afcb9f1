"""The model's number of classes and the dataset's class names disagree.

mmdetection's NumClassCheckHook (``mmdet/datasets/utils.py``, ``_check_head``, before every training and
validation epoch) asserts "The `num_classes` (N) in <head> of <model> does not matches the length of `CLASSES` M)
in <dataset>": the head was set to the custom dataset's classes, but the dataset still has its default class names
(COCO's 80) because ``classes`` was not given to it, or was given to a wrapper (RepeatDataset, ConcatDataset) that
does not pass it on. Certain.

A single class written as ``classes = ('ship')`` is the string 'ship', not a tuple (Python needs the trailing comma
of ``('ship', )``). The same hook (mmdetection 2.12 on) refuses it: "`CLASSES` in CocoDatasetshould be a tuple of
str.Add comma if number of classes is 1 as CLASSES = (ship,)" (certain); before it, the head's count was checked
against the string's length. The datasets' ``get_classes`` (mmdet/datasets/custom.py, and the mmseg, mmcls and
mmrotate copies) takes a string as the path of a file listing the classes and reads it with mmcv.list_from_file,
which mmcv's ``build_from_cfg`` re-raises as "DOTADataset: [Errno 2] No such file or directory: 'ship'": likely
(a class-list file that is missing prints the same).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, first, on_ranks

FAMILY = "data loading"

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

_SINGLE_CLASS = re.compile(
    r"`CLASSES` in (?P<str_dataset>\w+?) ?should be a tuple of str\.(?: ?Add comma if number of classes is 1 as "
    r"CLASSES = \((?P<single_class>[^,()\n]{1,80}),\))?|"
    r"(?P<read_dataset>\w+Dataset): \[Errno 2\] No such file or directory: '(?P<class_file>[^'/\\.\n]{1,80})'"
)


def _single_class(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = first(hits, "single_class") or first(hits, "class_file") or "name"
    dataset = first(hits, "str_dataset") or first(hits, "read_dataset") or "the dataset"
    read = first(hits, "class_file")
    summary = (
        f"{dataset} was given its one class as the string '{name}', not a tuple"
        + (": it read the string as the path of a file of class names" if read else "")
        + on_ranks(hits)
    )
    fix = (
        f"Write a single class as a one-element tuple, with the trailing comma: classes = ('{name}', ) (or a list, "
        f"['{name}']); ('{name}') is only the string. Give it to the dataset in the config (classes=classes in "
        "train, val and test; mmdet 3.x: metainfo=dict(classes=classes)) and to CLASSES of a dataset class you "
        "wrote, with num_classes = 1 in the head."
    )
    return summary, fix


SINGLE_CLASS_STRING = Recogniser(
    kind="single_class_string",
    title="a single class written as a string, not a tuple",
    templates=("third_party:mmdet-classes-should-be-tuple-of-str", "third_party:mmcv-classes-file-not-found"),
    anchors=("should be a tuple of str.", "Dataset: [Errno 2] No such file or directory: '"),
    match=_SINGLE_CLASS,
    # the file reading: a class-list file that is missing prints the same
    confirm=lambda hits, ctx: any("str_dataset" in h.facts for h in hits),
    also=(
        Alternative(
            "data_path_missing",
            "a file of class names (or an annotation file) that is not at that path",
            "If classes names a file of class names, give its full path (one class name a line).",
        ),
    ),
    absorbs=("data_path_missing",),
    describe=_single_class,
)

RECOGNISERS = (DATASET_CLASSES_MISMATCH, SINGLE_CLASS_STRING)
