"""A custom detection dataset's label files refused by the library's own checks before training.

- YOLOv5's ``train.py`` (and the YOLOv7, yolov5_obb and YOLOv3 forks of it) asserts, before the first epoch, that
  the largest class id of the label files is below the data yaml's ``nc``: "Label class 15 exceeds nc=2 in
  data/ships.yaml. Possible class labels are 0-1" (older releases end "Correct your labels or your model."). The
  run stops. Certain: it compares only those two numbers.
- ultralytics 8 (``ultralytics/data/utils.py`` verify_image_label) checks every label file while it builds the
  dataset cache and leaves out each image whose labels fail, printing "<image>: ignoring corrupt image/label:
  <reason>": "Label class 78 exceeds dataset class count 15. Possible class labels are 0-14" (the class count is
  the number of ``names`` in the data yaml; ``nc`` is not read), "labels require 56 columns each" (a pose label row
  is class, box and kpt_shape[0] x kpt_shape[1] keypoint values), "labels require 5 columns, 6 columns detected",
  "non-normalized or out of bounds coordinates [1.0371]" (coordinates are fractions of the image, up to 1.01),
  "negative class labels or coordinate". Training goes on without those images; what they say of the labels is
  certain.
- detectron2's ``load_coco_json`` (``detectron2/data/datasets/coco.py``) drops the instances whose segmentation is
  not a valid polygon list or RLE and warns "Filtered out 3677 instances without valid segmentation. There might be
  issues in your dataset generation process."

The recognisers of the two kinds read these (``index_ranges.LABEL_OUT_OF_RANGE`` the class ids,
``datasets.BAD_TRAINING_DATA`` the rows), as ``detection_boxes`` is read there: one recogniser per kind.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Hit, Pattern, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the class ids (label_out_of_range): YOLOv5's assertion and ultralytics 8's per-image check
CLASS_TEMPLATES = (
    "third_party:yolov5-label-class-exceeds-nc",
    "third_party:ultralytics-label-class-exceeds-count",
)
CLASS_ANCHORS = (" exceeds nc=", " exceeds dataset class count ")
CLASS_MATCH = (
    r"Label class (?P<yolo_label>\d+(?:\.\d+)?) exceeds (?:nc=(?P<yolo_nc>\d+)(?: in (?P<yolo_data>\S+?))?\.?(?=\s|$)|"
    r"dataset class count (?P<yolo_count>\d+)\.)"
)


def explain_class(hits: list[Hit]) -> tuple[str, str]:
    """The summary and fix for a label file's class id at or above the dataset's class count."""
    label = first(hits, "yolo_label", "?").removesuffix(".0")
    count = first(hits, "yolo_nc") or first(hits, "yolo_count") or "N"
    data = first(hits, "yolo_data")
    where = f" ({data})" if data else ""
    top = int(count) - 1 if count.isdigit() else "N-1"
    summary = f"a label file holds class {label}, but the dataset yaml{where} declares {count} classes (ids 0-{top})"
    if not any("yolo_count" not in h.facts for h in hits):
        summary += GOES_ON
    fix = (
        "YOLO label files hold one object per row, its class id first, counted from 0. Make the ids and the data "
        "yaml agree: list every class the labels use in names (YOLOv8 and later count the names; nc is not read "
        "there) with nc equal to it, or renumber the label files' ids into 0..nc-1 (labels copied from another "
        "dataset keep its ids, COCO's up to 79; a converter that numbers from 1 needs id - 1). Find the rows with "
        "awk '$1 >= N' labels/*/*.txt (N the class count); one corrupted annotation file is enough. Delete the "
        "labels *.cache files next to the label folders afterwards so the check reads the fixed files."
    )
    return summary + on_ranks(hits), fix


def not_only_warnings(hits: list[Hit], ctx: object) -> bool:
    """Certain as the anchors decide, unless every hit is ultralytics 8's per-image warning ("ignoring corrupt
    image/label: Label class 78 exceeds dataset class count 15"): the image is left out and training goes on, so
    what it says of the labels holds but not that it stopped the run (YOLOv5's assertion does stop it)."""
    return any(h.specific and "yolo_count" not in h.facts for h in hits)


not_only_warnings.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


# the rows (bad_training_data): ultralytics 8's per-image checks and detectron2's COCO loader
ROW_TEMPLATES = (
    "third_party:ultralytics-labels-require-columns-each",
    "third_party:ultralytics-labels-require-5-columns",
    "third_party:ultralytics-non-normalized-coordinates",
    "third_party:ultralytics-negative-class-labels",
    "third_party:detectron2-filtered-out-instances",
)
ROW_ANCHORS = (
    "labels require ",
    "non-normalized or out of bounds coordinates",
    "negative class labels or coordinate",
    "negative label values",
    "instances without valid segmentation",
)
ROW_FACT = R(
    r"labels require (?P<label_columns>\d+) columns(?: each|, (?P<label_columns_found>\d+) columns detected)|"
    r"(?P<label_coordinates>non-normalized or out of bounds coordinates)|"
    r"(?P<label_negative>negative class labels or coordinate|negative label values)|"
    r"Filtered out (?P<no_segmentation>\d+) instances without valid segmentation"
)
# the facts of the checks above that warn and go on (an image or instance left out), not stop the run
ROW_WARNINGS = (
    "no_segmentation",
    "label_columns",
    "label_negative",
    "label_coordinates",
    "ultralytics_ignored",
)
# ultralytics' prefix for any image its check leaves out (a truncated JPEG too): "<image>: ignoring corrupt
# image/label: <reason>"
IGNORED_FACT = R(r"(?P<ultralytics_ignored>ignoring corrupt image/label: )")
# the words of an anchor without the check's count: prose, not the check (the recogniser has no match of its own)
ROW_REJECT = r"labels require (?!\d{1,4} columns)"


# what a likely reading of those warnings says of the run (they leave images out; training goes on)
GOES_ON = (
    " (a warning: training goes on without them, so a run that stopped failed on another line, or on too few "
    "images left)"
)


def explain_rows(hits: list[Hit]) -> tuple[str, str] | None:
    """The summary and fix for label rows a dataset check refused, or None when no hit holds one."""
    found = _explain_rows(hits)
    if found is not None and not any(not any(k in h.facts for k in ROW_WARNINGS) for h in hits):
        return found[0] + GOES_ON, found[1]
    return found


def _explain_rows(hits: list[Hit]) -> tuple[str, str] | None:
    if first(hits, "no_segmentation"):
        count = first(hits, "no_segmentation")
        return (
            f"detectron2 dropped {count} annotated instances whose segmentation is not valid COCO"
            + on_ranks(hits),
            "A COCO instance's segmentation is a list of polygons, each a flat list [x1, y1, x2, y2, ...] of at "
            "least 3 points (6 numbers, an even count), or an RLE dict; empty lists, single points or lines and "
            "boxes written as segmentation are dropped. Check the converter or export that wrote the json against "
            "COCO's format (pycocotools' annToMask on an instance shows it), or train boxes only "
            "(cfg.MODEL.MASK_ON = False) if the dataset has no masks.",
        )
    columns, found = first(hits, "label_columns"), first(hits, "label_columns_found")
    cache = " Delete the labels *.cache files afterwards so the check reads the fixed files."
    if columns:
        pose = found is None
        return (
            f"label rows do not have the {columns} values each the task expects"
            + (f" ({found} found)" if found else "")
            + ": YOLO leaves those images out of training"
            + on_ranks(hits),
            (
                "A pose label row is class, x, y, w, h and then kpt_shape[0] keypoints of kpt_shape[1] values "
                f"each (x, y[, visibility]): {columns} values for the kpt_shape the data yaml gives. Set kpt_shape "
                "in the data yaml to the keypoints the label files hold (17 x 3 is COCO's 56 columns; a "
                "commented-out kpt_shape falls back to it), or regenerate the labels for it."
                if pose
                else "A detection label row is class x y w h (5 values); rows of polygons (segmentation) or of "
                "another format belong to another task: train the task the labels were made for, or export the "
                "labels in YOLO detection format."
            )
            + cache,
        )
    if first(hits, "label_negative"):
        return (
            "label rows hold negative class ids or coordinates: YOLO leaves those images out of training"
            + on_ranks(hits),
            "Class ids count from 0 and coordinates are fractions of the image in 0..1: fix the converter that "
            "wrote the label files." + cache,
        )
    if first(hits, "label_coordinates"):
        return (
            "label coordinates above 1: YOLO leaves those images out of training" + on_ranks(hits),
            "YOLO label coordinates are normalized: x and w divided by the image's width, y and h by its height, "
            "all within 0..1 (a box past the edge is clipped to it). Pixel coordinates, a converter given the "
            "wrong image size, or polygons of an oriented box (DOTA) past the image need converting again "
            "(ultralytics' convert_dota_to_yolo_obb for DOTA)." + cache,
        )
    return None
