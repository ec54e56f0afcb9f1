"""An attribute of a library's object read under a near name of one it has: a misspelled attribute.

CPython's AttributeError for an attribute an object lacks is ``'{}' object has no attribute '{}'``
(``Objects/object.c`` PyObject_GenericGetAttr; the catalog's system:object-has-no-attribute). From Python 3.10 on
the traceback adds the nearest name the object has, ``. Did you mean: '{}'?`` (``Python/pythonrun.c``
print_exception_suggestions in 3.10; ``Lib/traceback.py`` TracebackException in 3.11+, both from the object's
``dir()`` by edit distance): the object has a name one or two letters from the one the code reads. On an object of
a library's class (one `api_members.tsv` reads, or `FIELDS` below), whose member the tables do not show any
release to have (that is a release, not a typo: api_members.py reads it), the code misspelled the member.

Older Pythons print the first line only; for the records a training loop reads fields of (transformers'
``EvalPrediction`` handed to compute_metrics, the Trainer's ``PredictionOutput`` and ``TrainOutput``; torch's
``torch.return_types`` pairs of max, min, sort, topk...), `FIELDS` names their fields, and a read name close to
one of them (``prediction`` for ``predictions``, ``value`` for ``values``) is the same mistake. Never certain: a
name another release of a library has, which no table here knows, prints the same line; the other reading is named.
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from functools import cache

from torchdoctor.explain.kinds import api_members
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

# the fields of library records a training script reads, with where they are defined
_PAIR = ("values", "indices")
FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    # transformers/trainer_utils.py: what compute_metrics is handed, what predict() and train() return
    "EvalPrediction": ("transformers", ("predictions", "label_ids", "inputs", "losses")),
    "PredictionOutput": ("transformers", ("predictions", "label_ids", "metrics")),
    "EvalLoopOutput": ("transformers", ("predictions", "label_ids", "metrics", "num_samples")),
    "TrainOutput": ("transformers", ("global_step", "training_loss", "metrics")),
    # torch/return_types.py: the named pairs of the reductions that return values and indices
    **{
        f"torch.return_types.{op}": ("torch", _PAIR)
        for op in (
            "max",
            "min",
            "sort",
            "topk",
            "kthvalue",
            "mode",
            "median",
            "nanmedian",
            "cummax",
            "cummin",
        )
    },
}
# how close a read name must be to a field (difflib's ratio): one or two letters in a word
NEAR = 0.75
# the class as CPython prints it; quotes as pasted (typographic ones too); the suggestion of 3.10+
_MISSING = re.compile(
    r"['‘](?P<attr_class>[A-Za-z_][\w.]{0,100})['’] object has no attribute ['‘](?P<attr_read>\w{1,100})['’]"
    r"(?:\. Did you mean: ['‘](?P<attr_suggested>\w{1,100})['’]\?)?"
)
SUGGESTION = ". Did you mean: '"
ANCHORS = (
    SUGGESTION,
    *(f"{cls}{q} object has no attribute" for cls in FIELDS for q in ("'", "’")),
)


@cache
def _library_classes() -> dict[str, str]:
    """{class: its package} of the classes the release table reads (the first package for a namesake)."""
    classes = {cls: package for cls, (package, _) in FIELDS.items()}
    for package, (_, rows) in api_members.load().packages.items():
        for row in rows:
            classes.setdefault(row.module, package)
    return classes


def _in_a_release(cls: str, *names: str) -> bool:
    """Whether the release table shows some release of a package's ``cls`` with one of ``names``."""
    return any(api_members.packages_with(cls, name) for name in names)


def _near(read: str, fields: tuple[str, ...]) -> str | None:
    found = get_close_matches(read, [f for f in fields if f != read], n=1, cutoff=NEAR)
    return found[0] if found else None


class _MisspelledRead:
    """The ``match`` of the kind: CPython's line on a library's class, with a near name the object has (CPython's
    suggestion, or a field of `FIELDS`) and no release of the class having the name read."""

    pattern = _MISSING.pattern

    def search(self, window: str) -> re.Match | None:
        for found in _MISSING.finditer(window):
            cls, read, suggested = found["attr_class"], found["attr_read"], found["attr_suggested"]
            if cls not in _library_classes() or (suggested or "").startswith("_"):
                continue
            if suggested is None:
                suggested = _near(read, FIELDS.get(cls, ("", ()))[1])
            if suggested and not _in_a_release(cls, read, suggested):
                return found
        return None


def meant(facts: dict) -> str:
    """The name the object has that the read one is near: CPython's suggestion, else the nearest field."""
    if facts.get("attr_suggested"):
        return facts["attr_suggested"]
    return _near(facts["attr_read"], FIELDS.get(facts["attr_class"], ("", ()))[1]) or ""


def _describe(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    cls, read = first(hits, "attr_class"), first(hits, "attr_read")
    right = meant(hits[0].facts)
    package = _library_classes().get(cls, "the library")
    return (
        f"the code reads {cls}.{read}, which {cls} ({package}) does not have; it has {right}: a misspelled "
        "attribute" + on_ranks(hits),
        f"Read .{right} instead of .{read} on the line the traceback names (the object is a {cls} of {package}; "
        f"dir() of it lists its names). If the code was written for another release of {package} that had "
        f".{read}, install that release instead.",
    )


MISSPELLED_ATTRIBUTE = Recogniser(
    kind="misspelled_attribute",
    templates=("system:object-has-no-attribute", "system:attribute-error-did-you-mean"),
    title="a misspelled attribute of a library's object",
    anchors=ANCHORS,
    match=_MisspelledRead(),
    # a name another release of the library has, which no table here knows, prints the same line
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "dependency_version",
            "a name another release of the library has (the code written for that release)",
            "Compare the installed release (pip show <package>) with the one the code was written for (its "
            "requirements), and install that one if it had the name.",
        ),
    ),
    describe=_describe,
)

RECOGNISERS = (MISSPELLED_ATTRIBUTE,)
