"""An exception that is a library refusing its configuration, told from where it was raised and its type.

DeepSpeed checks the config it is given in two places, whatever the message: ``deepspeed/runtime/config.py``
(``DeepSpeedConfig._do_sanity_check`` / ``_do_error_check`` / ``_batch_assertion``, asserts and
``DeepSpeedConfigError``) and its pydantic models (``deepspeed/runtime/config_utils.py``
``DeepSpeedConfigModel``, ``extra="forbid"``: a key it does not know, or a value of the wrong type, is
pydantic's ``N validation error(s) for DeepSpeedZeroConfig``). An exception raised there is the config that
was refused — not a bug of DeepSpeed, which `versions.library_bug` would otherwise read an AssertionError
inside an installed package as. Which value and why is in its message; the two usual reasons are a config
that disagrees with the script or launcher (``deepspeed_config_mismatch``) and a config written for another
DeepSpeed release, whose keys moved (``dependency_version``) — both are named, never certain.

pydantic prints each refused field on the lines below its header (the field's name, then the reason indented:
v2's "Input should be a valid integer, got a number with a fractional part [type=int_from_float,
input_value=15099494.4, ...]", "Extra inputs are not permitted"; v1's "value is not a valid integer", "extra fields
not permitted"): the field and the reason are named. DeepSpeed 0.15.0 moved its config models to pydantic 2, which
refuses a float for an integer field; transformers' "auto" fill (``integrations/deepspeed.py``
``trainer_config_process``) set ``stage3_prefetch_bucket_size`` to 0.9 · hidden_size², a float, until #33402
(transformers 4.45) made it an integer, and accelerate's until #2814 (accelerate 0.31): posted many times from both
(deepspeedai/DeepSpeed#6525, hiyouga/LlamaFactory#5252), said so with the integer to write.
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised, cut
from torchdoctor.explain.kinds import deepspeed_config_fields

FAMILY = "a library refusing its settings"

# pydantic (v1 and v2): "1 validation error for DeepSpeedZeroConfig"
_PYDANTIC = re.compile(r"\d+ validation errors? for (?P<model>DeepSpeed\w{0,60})")
_CHECKS = frozenset(
    {"_do_sanity_check", "_do_error_check", "_batch_assertion", "_set_batch_related_parameters"}
)
# a refused field and its reason as pydantic prints them below its header (Raised.detail)
_FIELD_NAME = re.compile(r"[\w.\[\]-]{1,120}$")
_FLOAT_FOR_INT = re.compile(r"valid integer, got a number with a fractional part|type=int_from_float")
_INPUT_VALUE = re.compile(r"input_value=(?P<value>[^,\]]{1,40})")
_CONFIG_FILES = ("/deepspeed/runtime/config.py", "/deepspeed/runtime/config_utils.py")
_CONFIG_FOLDER = re.compile(r"/deepspeed/(?:runtime/)?(?:[\w/]+/)?config\.py$")
# DeepSpeed's models that do not carry its name (monitor/config.py's TensorBoardConfig, WandbConfig, CSVConfig,
# CSVMonitorConfig in older releases): read where the traceback passes through DeepSpeed's config code
_ANY_MODEL = re.compile(r"\d+ validation errors? for (?P<model>[A-Z]\w{0,60})")


def _through_deepspeed_config(raised: Raised) -> bool:
    """True where a frame of ``raised``'s traceback is DeepSpeed's config code (a config.py under deepspeed/, or
    runtime/config_utils.py)."""
    for frame in raised.frames:
        path = frame.file.replace("\\", "/")
        if path.endswith(_CONFIG_FILES) or _CONFIG_FOLDER.search(path):
            return True
    return False


def deepspeed_refusal(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) when ``raised`` is DeepSpeed refusing its config (by its type, or by the frame of
    DeepSpeed's config checks it was raised in); None otherwise.

    >>> deepspeed_refusal(Raised("ValidationError", "1 validation error for DeepSpeedZeroConfig"))[0][:39]
    "DeepSpeed's config schema refused a val"
    """
    model = _PYDANTIC.search(raised.message) or (
        _ANY_MODEL.search(raised.message) if _through_deepspeed_config(raised) else None
    )
    path = raised.raised_in.file.replace("\\", "/") if raised.raised_in is not None else ""
    in_checks = (
        path.endswith(_CONFIG_FILES)
        or bool(_CONFIG_FOLDER.search(path))
        or (raised.raised_in is not None and "/deepspeed/" in path and raised.raised_in.function in _CHECKS)
    )
    by_frame = raised.type in ("AssertionError", "ValueError", "DeepSpeedConfigError") and in_checks
    if model is None and string_for_number(raised):
        return _string_for_number(raised)
    if model is None and not by_frame and raised.type != "DeepSpeedConfigError":
        return None
    detail = f" ({cut(raised.detail[0], 120)})" if raised.detail else ""
    fields = _fields(raised.detail) if model is not None else []
    if fields:
        said = "; ".join(f"{name}: {cut(reason, 160)}" for name, reason in fields)
        summary = f"DeepSpeed's config schema refused its {model['model']} section: {said}"
    elif model is not None:
        summary = (
            f"DeepSpeed's config schema refused a value of its {model['model']} section{detail}: a key this "
            "DeepSpeed does not know or a value of the wrong type"
        )
    else:
        summary = f"DeepSpeed's config check refused the config: {raised.text()}"
    floated = next((name for name, reason in fields if _FLOAT_FOR_INT.search(reason)), None)
    if floated is not None:
        value = next((v["value"] for _, r in fields if (v := _INPUT_VALUE.search(r))), "")
        whole = f" ({value.split('.')[0]})" if re.fullmatch(r"\d+\.\d+", value) else ""
        return summary, (
            f"{floated} must be an integer and the config gives it a number with a fraction: DeepSpeed 0.15.0 and "
            f"later check the config's types strictly. Write an integer for it in the config{whole}. A value the "
            'config leaves to "auto" was computed by transformers\' Trainer (0.9 × hidden_size², a float, until '
            "#33402 in transformers 4.45: pip install -U 'transformers>=4.45'), by accelerate (until #2814 in 0.31: "
            "pip install -U accelerate) or by the training framework's own fill (upgrade it); or install "
            "deepspeed<0.15 (0.14.4), which accepted it."
        )
    said_fields = [line for name, reason in fields if (line := _field_fix(model["model"], name, reason))]
    fix = "\n".join(said_fields) + "\n" if said_fields else ""
    fix += (
        "DeepSpeed checks the config (the JSON file or dict given to deepspeed.initialize, or the one "
        "accelerate / the HF Trainer builds from it) when the engine starts; the message names the key. Either "
        "the config disagrees with the script or launcher (batch sizes against the number of GPUs, fp16/bf16 "
        'against the Trainer\'s arguments: let the Trainer fill them with "auto"), or it was written for '
        "another DeepSpeed release, whose keys were renamed or removed (a deprecated key's warning names its "
        "new name): compare it with the config documentation of the installed version (pip show deepspeed), "
        "or install the DeepSpeed the project pins."
    )
    return summary, fix


# a comparison of a str with a number raised in DeepSpeed's config checks ("'>' not supported between instances of
# 'str' and 'int'"): a value of the config that is a string where a number belongs
_STRING_NUMBER = re.compile(r"'str' and '(?:int|float)'|'(?:int|float)' and 'str'")
_EXTRA = re.compile(r"Extra inputs are not permitted|extra fields not permitted|type=extra_forbidden")
# pydantic 2's refusal of a value outside an enum: "Input should be 'none', 'cpu' or 'nvme' [type=enum, ..."
_ALLOWED = re.compile(r"Input should be (?P<allowed>.{1,200}?) \[type=(?:enum|literal_error)")


def string_for_number(raised: Raised) -> bool:
    """True where ``raised`` is a TypeError of DeepSpeed's config checks comparing a string with a number (a
    config value written as a string: no other DeepSpeed release reads it as a number either)."""
    if raised.type != "TypeError" or raised.raised_in is None or not _STRING_NUMBER.search(raised.message):
        return False
    path = raised.raised_in.file.replace("\\", "/")
    return (
        path.endswith(_CONFIG_FILES)
        or bool(_CONFIG_FOLDER.search(path))
        or ("/deepspeed/" in path and raised.raised_in.function in _CHECKS)
    )


def _string_for_number(raised: Raised) -> tuple[str, str]:
    """(summary, fix) for a TypeError of DeepSpeed's config checks comparing a string with a number: a config value
    written as a string ("auto", or a number in quotes) where DeepSpeed computes with a number."""
    where = f" ({raised.raised_in.function})" if raised.raised_in is not None else ""
    summary = (
        f"DeepSpeed's config check{where} met a string where it needs a number ({cut(raised.message, 120)}): a "
        'value of the config written as "auto" or as a number in quotes'
    )
    fix = (
        '"auto" is not a value DeepSpeed itself fills in: only the HF Trainer (TrainingArguments(deepspeed=...)) '
        "and accelerate replace it, from their own arguments, before DeepSpeed sees the config. Called directly "
        "(deepspeed.initialize(config=...), the deepspeed launcher), DeepSpeed takes the config as it is: write "
        "integers for train_batch_size, train_micro_batch_size_per_gpu and gradient_accumulation_steps (without "
        "quotes), or leave out the one DeepSpeed can compute from the other two and the world size. (Inside a "
        'section, such as zero_optimization or fp16, DeepSpeed\'s config models (0.19.8 checked) drop "auto" and use '
        "their defaults: the batch sizes at the top level, which DeepSpeed computes with, are the ones that fail.)"
    )
    fillers = sorted(
        {m["package"] for f in raised.frames if (m := _FILLER.search(f.file.replace("\\", "/")))}
    )
    if fillers:
        fix += (
            f" The traceback runs through {' and '.join(fillers)}, yet the value reached DeepSpeed unfilled: they "
            "fill only the config they were given (TrainingArguments(deepspeed=...), accelerate's "
            "deepspeed_config_file or DeepSpeedPlugin), and only from arguments they hold; a config dict handed to "
            "deepspeed.initialize by other code (a second engine, a reference or reward model's) is not filled: "
            "give that one integers."
        )
    return summary, fix


# the libraries that fill "auto" before DeepSpeed reads the config (transformers' integrations/deepspeed.py,
# accelerate's utils/deepspeed.py) and those that build engines from their config (trl)
_FILLER = re.compile(r"/(?P<package>transformers|accelerate|trl)/")


def _field_fix(model: str, name: str, reason: str) -> str:
    """What to write instead, for a field pydantic refused whose reason says it: a key the section does not
    take (the key it most likely misspells), a value outside the ones it lists. Empty otherwise."""
    key = name.split(".")[-1]
    if _EXTRA.search(reason):
        section = deepspeed_config_fields.section_of(model, name)
        if section is None:
            return ""
        where, keys = section
        release = deepspeed_config_fields.RELEASE
        if (
            key in keys
        ):  # spelt right: a key of this section in RELEASE that the installed release does not take
            return (
                f'"{key}" is a key of "{where}" in DeepSpeed {release} but not in the release installed: the '
                "config was written for another DeepSpeed release (pip show deepspeed): install the one it was "
                "written for, or remove the key."
            )
        elsewhere = deepspeed_config_fields.sections_with(key)
        if elsewhere:  # spelt right, in the wrong section
            return (
                f'"{key}" is not a key of "{where}" but of {" / ".join(repr(e) for e in elsewhere)} (DeepSpeed '
                f"{release}): move it there, or remove it."
            )
        close = deepspeed_config_fields.meant(key, keys)
        if close is None:
            return (
                f'"{key}" is not a key of "{where}" (DeepSpeed {release} takes '
                f"{', '.join(keys[:12])}{', ...' if len(keys) > 12 else ''}): remove it, or find its name in the "
                "config documentation of the installed release."
            )
        return (
            f'"{key}" is not a key of "{where}": did you mean "{close}"? (the nearest key DeepSpeed {release} '
            "takes there; a key DeepSpeed does not know is refused, not ignored, inside this section. A config "
            "written for another release may name a key this one does not have: pip show deepspeed.)"
        )
    allowed = _ALLOWED.search(reason)
    if allowed is None:
        return ""
    value = _INPUT_VALUE.search(reason)
    given = f" and the config gives {value['value']}" if value else ""
    fix = f"{name} takes only {allowed['allowed']}{given}: write one of those."
    if key == "device" and value and value["value"].strip("'\"").lower() in ("gpu", "cuda", "xpu", "npu"):
        fix += (
            ' Offloading moves the values off the accelerator: "cpu" (or "nvme" with nvme_path) offloads them, '
            '"none" (or leaving the offload section out) keeps them on the accelerator.'
        )
    return fix


def _fields(detail: list[str]) -> list[tuple[str, str]]:
    """(field, reason) pairs of pydantic's lines below its header: a field's name, then its reason.

    >>> _fields(["stage3_prefetch_bucket_size", "Input should be a valid integer [type=int_from_float]"])
    [('stage3_prefetch_bucket_size', 'Input should be a valid integer [type=int_from_float]')]
    """
    pairs: list[tuple[str, str]] = []
    name = ""
    for text in detail:
        if _FIELD_NAME.match(text) and not name:
            name = text
        elif name:
            pairs.append((name, text))
            name = ""
    return pairs


# a traceback cut inside DeepSpeed building its config (kinds.CONTEXT_FACTS): the call that builds it, as a frame's
# source line prints it (deepspeed/__init__.py's initialize, zero.Init in runtime/zero/partition_parameters.py)
CONTEXT = (("DeepSpeedConfig(", re.compile(r"(?P<ds_config_call>\bDeepSpeedConfig\()")),)
_RELEASE_IN_PATH = re.compile(r"deepspeed-(?P<release>\d+\.\d+)")


def cut_in_config(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for a traceback that stops before its error line inside DeepSpeed building its config: its
    innermost frame DeepSpeed's (cut_traceback.py's ``last_frame_*`` facts) and either DeepSpeed's config code or
    below a frame calling ``DeepSpeedConfig(``; None otherwise. The key refused is on the missing error line."""
    path = facts.get("last_frame_file", "").replace("\\", "/")
    if "/deepspeed/" not in path:
        return None
    if not (path.endswith(_CONFIG_FILES) or _CONFIG_FOLDER.search(path) or facts.get("ds_config_call")):
        return None
    where = f"{path[path.rindex('/deepspeed/') + 1 :]}:{facts.get('last_frame_line', '?')}"
    release = facts.get("installed_deepspeed") or (
        m["release"] if (m := _RELEASE_IN_PATH.search(path)) else ""
    )
    summary = (
        f"the traceback stops inside DeepSpeed building its config ({where}), before the error line that names the "
        "value it refused: DeepSpeed's config check, a key or a type it does not take"
    )
    fix = (
        "Give explain the lines after the traceback's last frame: DeepSpeed's error there names the refused key "
        "(an AssertionError of its checks, or pydantic's ValidationError with the field below its header). The "
        "config is the JSON file or dict given to deepspeed.initialize or zero.Init, or the one the HF Trainer or "
        'accelerate fills from it ("auto" values): compare it with the config documentation of the installed '
        "DeepSpeed (pip show deepspeed)."
    )
    newer = not release or tuple(int(p) for p in release.split(".")[:2]) >= (0, 15)
    if newer:
        fix += (
            f"\n{'DeepSpeed ' + release if release else 'If DeepSpeed is 0.15 or later, it'} refuses a float for an "
            'integer key: the one most posted is stage3_prefetch_bucket_size, which transformers\' "auto" fill '
            "computed as 0.9 × hidden_size², a float, until 4.45 (#33402; accelerate until 0.31, #2814): write an "
            "integer for it in the config, or pip install -U 'transformers>=4.45'."
        )
    return summary, fix
