"""DeepSpeed's config models against the pydantic installed: a release pairing, read from pydantic's own refusals.

DeepSpeed declares its config sections as pydantic models (``deepspeed/runtime/config_utils.py``
``DeepSpeedConfigModel``, and every ``*Config`` built on it), defined when ``import deepspeed`` runs. Its releases were
written for one pydantic major each:

- up to 0.11.1 for pydantic 1 only: under pydantic 2 the class definitions fail at import, with pydantic 2's refusal
  of a v1 ``@root_validator`` ("If you use `@root_validator` with pre=False (the default) you MUST specify
  `skip_on_failure=True`", ``pydantic/deprecated/class_validators.py``, PydanticUserError) or, where the models
  load, with CPython's "'FieldInfo' object has no attribute 'required'" when ``get_config_default`` reads a v1
  field attribute (``ModelField.required``; v2's ``model_fields`` hold FieldInfo). DeepSpeed 0.11.2 imports
  pydantic's v1 API through ``deepspeed/pydantic_v1.py`` under either major (deepspeedai/DeepSpeed#4407);
- from 0.15.0 for pydantic 2 only (``requirements.txt`` ``pydantic>=2.0.0``, deepspeedai/DeepSpeed#5167): under
  pydantic 1 the import stops at a name only pydantic 2 has ("cannot import name 'ConfigDict' from 'pydantic'").

A log shows the pairing through pydantic's words and DeepSpeed's frames (or DeepSpeed named anywhere); it rarely
prints either release, so the fix names both ways out. The root_validator refusal is printed for nothing but v1
code under pydantic 2: certain (`dependency_version`). The FieldInfo attribute and a pydantic 2 name refused are
likely: a file named ``pydantic.py`` shadowing the package, or another class called FieldInfo, print the same words.
Other packages meet the same majors (DeepSpeed-MII before 0.0.9, langchain): the fix names DeepSpeed only where the
log does.

Read by versions.py's ``dependency_version``.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ROOT_VALIDATOR = "skip_on_failure=True"  # the anchor: a paste's markdown may drop the backticks around it
# attributes of pydantic 1's ModelField that code reads off a field, and that pydantic 2's FieldInfo lacks
_V1_FIELD_ATTRIBUTES = "required|outer_type_|type_|allow_none|sub_fields|shape|validate_always"
# names pydantic 2 added at its top level (pydantic/__init__.py of 2.0), which pydantic 1 lacks
_V2_NAMES = (
    "ConfigDict|field_validator|model_validator|field_serializer|model_serializer|computed_field|RootModel|"
    "TypeAdapter|ValidationInfo|SerializationInfo|AliasChoices|AliasPath|validate_call|with_config"
)
ANCHORS = (ROOT_VALIDATOR, "'FieldInfo' object has no attribute '", "from 'pydantic'")
# a shadowing file or another FieldInfo class prints the same words as the two likely forms
GENERIC = ("'FieldInfo' object has no attribute '", "from 'pydantic'")
TEMPLATES = ("third_party:pydantic-root-validator-skip-on-failure",)
CHANGE = R(
    r"(?P<pydantic_v1_validator>you MUST specify `?skip_on_failure=True)|"
    rf"'FieldInfo' object has no attribute '(?P<pydantic_v1_field>{_V1_FIELD_ATTRIBUTES})'|"
    rf"cannot import name '(?P<pydantic_v2_name>{_V2_NAMES})' from 'pydantic'"
)
FACTS = ("pydantic_v1_validator", "pydantic_v1_field", "pydantic_v2_name")


def decisive(facts: dict) -> bool:
    """Certain on pydantic 2's refusal of a v1 root_validator, which nothing but v1 code under v2 prints."""
    return bool(facts.get("pydantic_v1_validator"))


def explain(facts: dict, ctx_facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for a pydantic major the code was not written for, from ``facts`` (`CHANGE`'s groups);
    DeepSpeed's releases named where the log names DeepSpeed (``ctx_facts``' ``mentions_deepspeed``)."""
    deepspeed = bool(ctx_facts.get("mentions_deepspeed"))
    if facts.get("pydantic_v2_name"):
        name = facts["pydantic_v2_name"]
        summary = (
            f"pydantic has no {name}, a name pydantic 2 added: pydantic 1 is installed under code written for "
            "pydantic 2"
            + (" (DeepSpeed 0.15 and later declare their config models with it)" if deepspeed else "")
        )
        fix = "Install pydantic 2 (pip install -U 'pydantic>=2')"
        fix += (
            ", which DeepSpeed 0.15.0 and later require (deepspeedai/DeepSpeed#5167); or, where another package "
            "pins pydantic 1, a DeepSpeed before 0.15 (pip install 'deepspeed<0.15', which reads either major)."
            if deepspeed
            else "; or, where another package pins pydantic 1, a release of the importing package written for it."
        )
        return summary, fix + " If a file of yours is named pydantic.py, rename it: it shadows the package."
    if facts.get("pydantic_v1_validator"):
        what = "pydantic 2 refused a pydantic 1 @root_validator while a model class was defined"
    elif facts.get("pydantic_v1_field"):
        what = (
            f"the code read a field's {facts['pydantic_v1_field']!r}, an attribute of pydantic 1's fields that "
            "pydantic 2's FieldInfo lacks"
        )
    else:
        return None
    summary = f"{what}: pydantic 2 is installed under code written for pydantic 1" + (
        " (DeepSpeed's config models, in releases up to 0.11.1)" if deepspeed else ""
    )
    if deepspeed:
        fix = (
            "DeepSpeed releases up to 0.11.1 declare their config models with pydantic 1's API, which pydantic 2 "
            "refuses when `import deepspeed` defines them. Upgrade DeepSpeed (pip install -U 'deepspeed>=0.11.2': "
            "it reads pydantic's v1 API under either major, deepspeedai/DeepSpeed#4407), or, where the project pins "
            "that DeepSpeed, install pydantic 1 beside it (pip install 'pydantic<2'); pip check names the package "
            "that pulled pydantic 2 in."
        )
    else:
        fix = (
            "The package whose frame defines or reads the model (the frame above pydantic's in the traceback) was "
            "written for pydantic 1: upgrade it to a release that supports pydantic 2 (pip install -U <package>), "
            "or install pydantic 1 beside it (pip install 'pydantic<2'); pip check names the package that pulled "
            "pydantic 2 in."
        )
    return summary, fix
