"""Ground-truth boxes of a detection dataset whose corners are in the wrong order.

datasets.py's ``bad_training_data`` reads them with this module's anchor and words.

py-faster-rcnn's ``lib/datasets/imdb.py`` (and its ports: jwyang/faster-rcnn.pytorch, Detectron's ``roidb.py``
``extend_with_flipped_entries``) doubles the training set with mirrored images: ``append_flipped_images`` maps each
box to ``x1' = width - x2 - 1``, ``x2' = width - x1 - 1`` and asserts ``(boxes[:, 2] >= boxes[:, 0]).all()``. A
mirrored box comes out inverted only when the annotation was: ``xmax < xmin``, a 0-based ``xmin`` of 0 that
``pascal_voc.py``'s ``- 1`` turns into 65535 in its uint16 array, or a box reaching past the image's width. The
same assertion guards other box code (a proposals file, a format conversion of predicted boxes), so it is certain
only beside the flip.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ANCHOR = "assert (boxes[:, 2] >= boxes[:, 0]).all()"
TEMPLATE = "third_party:rcnn-flipped-boxes-inverted"
FACT = R(r"(?P<boxes_inverted>assert \(boxes\[:, 2\] >= boxes\[:, 0\]\)\.all\(\))")
# the mirroring that makes the assertion about the annotations (a frame, or the flip's own log line)
CONTEXT = (
    (
        "flipped",
        R(
            r"(?P<saw_box_flip>\bin append_flipped_images\b|\bextend_with_flipped_entries\b|"
            r"Appending horizontally-flipped training examples)"
        ),
    ),
)


def flipped(ctx_facts: dict) -> bool:
    """Whether the log shows the training set being mirrored (the assertion then checks the annotations)."""
    return "saw_box_flip" in ctx_facts


def explain_inverted(flip_seen: bool) -> tuple[str, str]:
    """(summary, fix) for a box whose right edge lies left of its left edge."""
    where = (
        "while the training set was mirrored (append_flipped_images)"
        if flip_seen
        else "(likely the annotations; the same assertion guards proposals and converted predictions)"
    )
    return (
        f"a ground-truth box of the detection data has its right edge left of its left edge {where}: an "
        "annotation is inverted or outside the image",
        "Check the box coordinates of the annotations: every box needs xmin < xmax (and ymin < ymax) inside the "
        "image (0 <= xmin, xmax < width). Print the boxes with boxes[:, 2] < boxes[:, 0] and their image while "
        "loading the roidb. With py-faster-rcnn's pascal_voc.py, a 0-based annotation (xmin = 0) becomes 65535 "
        "after its '- 1' in the uint16 box array: drop the '- 1' for 0-based data or clamp it at 0. Delete the "
        "cached roidb (data/cache/*_gt_roidb.pkl) after fixing the data, or the old boxes are read again.",
    )
