"""A dataset name registered twice in detectron2's (or VISSL's) dataset catalog in one process.

``detectron2/data/catalog.py`` (``_DatasetCatalog.register``, detectron2 0.1 on) keeps a process-wide dict from a
dataset's name to the function that loads it and asserts ``name not in self`` with "Dataset '<name>' is already
registered!"; ``register_coco_instances`` and ``register_pascal_voc`` go through it, and VISSL's
``VisslDatasetCatalog.register_dict`` (``vissl/data/dataset_catalog.py``) asserts the same words. The catalog lives
as long as the Python process, so the line means one thing: this name was registered before in the same process —
a notebook cell run again, a script that registers in a function called twice, or a custom name that is one of
the builtin datasets the library registers on import (``coco_2017_train``, ``voc_2007_trainval``). Certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _twice(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = first(hits, "dataset_name")
    which = f"'{name}'" if name else "this name"
    summary = (
        f"the dataset {which} was registered a second time in the same process; the dataset catalog refuses to "
        "replace a name" + on_ranks(hits)
    )
    fix = (
        f"Register each name once per process: guard it (if {which} not in DatasetCatalog.list(): "
        "register_coco_instances(...)), or remove the name registered earlier first (DatasetCatalog.remove(name) "
        "and MetadataCatalog.remove(name) in detectron2; restart the kernel in a notebook whose cell ran "
        "before). A name the library registers itself on import (coco_2017_train, voc_2007_trainval and the "
        "other builtins) needs a name of your own for your data."
    )
    return summary, fix


DATASET_REGISTERED_TWICE = Recogniser(
    kind="dataset_registered_twice",
    title="a dataset name registered twice in the dataset catalog",
    templates=(
        "third_party:detectron2-dataset-already-registered",
        "third_party:vissl-dataset-already-registered",
    ),
    anchors=("' is already registered!",),
    # the assert's own source line in a traceback shows the format string, not a name
    match=R(r"Dataset '(?P<dataset_name>(?!\{\}')[^'\n]{1,200})' is already registered!"),
    describe=_twice,
)

RECOGNISERS = (DATASET_REGISTERED_TWICE,)
