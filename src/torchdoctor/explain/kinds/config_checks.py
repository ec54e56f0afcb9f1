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
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised, cut

FAMILY = "a library refusing its settings"

# pydantic (v1 and v2): "1 validation error for DeepSpeedZeroConfig"
_PYDANTIC = re.compile(r"\d+ validation errors? for (?P<model>DeepSpeed\w{0,60})")
_CHECKS = frozenset(
    {"_do_sanity_check", "_do_error_check", "_batch_assertion", "_set_batch_related_parameters"}
)
_CONFIG_FILES = ("/deepspeed/runtime/config.py", "/deepspeed/runtime/config_utils.py")
_CONFIG_FOLDER = re.compile(r"/deepspeed/(?:runtime/)?(?:[\w/]+/)?config\.py$")


def deepspeed_refusal(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) when ``raised`` is DeepSpeed refusing its config (by its type, or by the frame of
    DeepSpeed's config checks it was raised in); None otherwise.

    >>> deepspeed_refusal(Raised("ValidationError", "1 validation error for DeepSpeedZeroConfig"))[0][:40]
    "DeepSpeed's config schema refused a val"
    """
    model = _PYDANTIC.search(raised.message)
    path = raised.raised_in.file.replace("\\", "/") if raised.raised_in is not None else ""
    by_frame = raised.type in ("AssertionError", "ValueError", "DeepSpeedConfigError") and (
        path.endswith(_CONFIG_FILES)
        or bool(_CONFIG_FOLDER.search(path))
        or (raised.raised_in is not None and "/deepspeed/" in path and raised.raised_in.function in _CHECKS)
    )
    if model is None and not by_frame and raised.type != "DeepSpeedConfigError":
        return None
    detail = f" ({cut(raised.detail[0], 120)})" if raised.detail else ""
    if model is not None:
        summary = (
            f"DeepSpeed's config schema refused a value of its {model['model']} section{detail}: a key this "
            "DeepSpeed does not know or a value of the wrong type"
        )
    else:
        summary = f"DeepSpeed's config check refused the config: {raised.text()}"
    fix = (
        "DeepSpeed checks the config (the JSON file or dict given to deepspeed.initialize, or the one "
        "accelerate / the HF Trainer builds from it) when the engine starts; the message names the key. Either "
        "the config disagrees with the script or launcher (batch sizes against the number of GPUs, fp16/bf16 "
        'against the Trainer\'s arguments: let the Trainer fill them with "auto"), or it was written for '
        "another DeepSpeed release, whose keys were renamed or removed (a deprecated key's warning names its "
        "new name): compare it with the config documentation of the installed version (pip show deepspeed), "
        "or install the DeepSpeed the project pins."
    )
    return summary, fix
