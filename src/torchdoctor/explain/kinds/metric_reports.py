"""A classification report asked to name more classes, or fewer, than the labels it was given hold.

scikit-learn's ``classification_report`` (``sklearn/metrics/_classification.py``, since 0.20: scikit-learn#9867)
takes the classes from ``labels`` when it is given, else from the values found in ``y_true`` and ``y_pred``
together; ``target_names`` names them in order, and when no ``labels`` were given and the counts differ it raises
"Number of classes, N, does not match size of target_names, M. Try specifying the labels parameter" (with
``labels`` given it only warns). An evaluation set that lacks some classes (a small validation split, a
rare class never predicted) gives fewer classes than the names: pass ``labels=range(len(target_names))``. The
call may be a library's (fastai2's ``ClassificationInterpretation.print_classification_report`` passed the names
without the ids until fastai/fastai2#412), so likely, that reading named.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

MISMATCH = re.compile(
    r"Number of classes, (?P<report_classes>\d+), does not match size of target_names, (?P<report_names>\d+)"
)


def _classes_missing(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    classes, names = first(hits, "report_classes", "N"), first(hits, "report_names", "M")
    fewer = classes.isdigit() and names.isdigit() and int(classes) < int(names)
    why = (
        f"the labels and predictions evaluated hold {classes} classes, the names given are {names}: some classes "
        "are in neither (a validation set without them, a class never predicted)"
        if fewer
        else f"the labels and predictions evaluated hold {classes} classes, more than the {names} names given"
    )
    return (
        f"sklearn's classification_report was given target_names but no labels, so it took the classes from the "
        f"values found: {why}" + on_ranks(hits),
        "Pass the class ids with the names: classification_report(y_true, y_pred, "
        "labels=list(range(len(target_names))), target_names=target_names) (the ids the names stand for); or "
        "check that target_names lists the classes the model was trained with.",
    )


REPORT_CLASSES_MISSING = Recogniser(
    kind="report_classes_missing",
    title="a classification report naming classes the evaluated labels do not hold",
    templates=("third_party:sklearn-classification-report-target-names",),
    anchors=("does not match size of target_names",),
    match=MISMATCH,
    # the call that left labels out may be a library's report, not the script's
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "library_version_bug",
            "a library's report that passes the names without the labels (fastai2's "
            "ClassificationInterpretation.print_classification_report before fastai/fastai2#412)",
            "Upgrade the library whose report it is (fastai: pip install -U fastai), or call classification_report "
            "yourself with labels.",
        ),
    ),
    describe=_classes_missing,
)

RECOGNISERS = (REPORT_CLASSES_MISSING,)
