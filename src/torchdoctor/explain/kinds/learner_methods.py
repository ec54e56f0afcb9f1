"""The fastai Learner methods that exist only once the fastai module adding them has been imported.

fastai 2 defines its training schedules outside the Learner class: ``fastai/callback/schedule.py`` adds
``fit_one_cycle``, ``fit_flat_cos``, ``fit_sgdr``, ``fine_tune`` and ``lr_find`` to ``Learner`` with fastcore's
``@patch`` when it is imported, which ``from fastai.vision.all import *`` (``tabular.all``, ``text.all``,
``callback.all``) does and importing ``fastai.learner`` or ``fastai.tabular.learner`` alone does not. So
CPython's "'TabularLearner' object has no attribute 'fit_one_cycle'" (``Objects/object.c`` PyObject_GenericGetAttr)
on a fastai Learner is a script that imported fastai's modules one by one (fastai/fastai#2869). fastai 1.x had no
``fine_tune`` (fastai 2's), and a class of the code's own named like fastai's prints the same words: likely.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, merged, on_ranks

FAMILY = "a script's own mistakes"

# the methods fastai/callback/schedule.py patches onto Learner
SCHEDULE_METHODS = ("fit_one_cycle", "fit_flat_cos", "fit_sgdr", "fine_tune", "lr_find")
# fastai's Learner and the subclasses its applications build (tabular_learner, text_classifier_learner, ...)
LEARNERS = ("Learner", "TabularLearner", "TextLearner", "LMLearner")
NOT_PATCHED = re.compile(
    rf"'(?P<learner_class>{'|'.join(LEARNERS)})' object has no attribute '(?P<patched_method>"
    rf"{'|'.join(SCHEDULE_METHODS)})'"
)
# fastai 1.x's Learner had fit_one_cycle and lr_find (fastai/train.py) but no fine_tune
NO_FINE_TUNE = re.compile(r"object has no attribute '(?P<fastai1_fine_tune>fine_tune)'")


def _not_imported(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    learner, method = facts.get("learner_class", "Learner"), facts.get("patched_method", "fit_one_cycle")
    return (
        f"the {learner} has no {method}: fastai adds {method} to Learner in fastai.callback.schedule, a module the "
        "script never imported (it imported fastai's modules one by one, not an application's .all)"
        + on_ranks(hits),
        "Import fastai the way its docs do, which imports the callbacks that add the training methods: from "
        "fastai.tabular.all import * (or fastai.vision.all, fastai.text.all); or add from fastai.callback.all import "
        f"* (from fastai.callback.schedule import * for {method} alone) to the imports you have.",
    )


PATCHED_METHOD_NOT_IMPORTED = Recogniser(
    kind="patched_method_not_imported",
    title="a fastai Learner method whose module was not imported",
    templates=("third_party:fastai-learner-patched-method-missing",),
    anchors=tuple(f"object has no attribute '{method}'" for method in SCHEDULE_METHODS),
    match=NOT_PATCHED,
    facts=(NOT_PATCHED, NO_FINE_TUNE),
    confirm=lambda hits, ctx: False,  # a class of the code's own named Learner, or fastai 1.x's fine_tune
    also=(
        Alternative(
            "dependency_version",
            "fastai 1.x, whose Learner has no fine_tune (fastai 2 added it)",
            "pip install -U fastai (2.x), and import from fastai.<application>.all.",
            when=("fastai1_fine_tune",),
        ),
    ),
    describe=_not_imported,
)

RECOGNISERS = (PATCHED_METHOD_NOT_IMPORTED,)
