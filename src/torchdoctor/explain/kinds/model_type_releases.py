"""A checkpoint's model type the installed transformers does not know: AutoConfig's refusal.

``transformers/models/auto/configuration_auto.py`` ``AutoConfig.from_pretrained`` looks the ``model_type`` of the
checkpoint's config.json up in ``CONFIG_MAPPING``; a type the release does not have raises "The checkpoint you are
trying to load has model type `{}` but Transformers does not recognize this architecture. This could be because of
an issue with the checkpoint, or because your version of Transformers is out of date." (4.37 and later; 4.48 adds
how to update). Up to 4.36 the same lookup raised a bare ``KeyError: '<model type>'`` from ``_LazyConfigMapping.
__getitem__``: read only where the log shows that lookup (the traceback's frame in configuration_auto.py's
``__getitem__``, or its source line ``CONFIG_MAPPING[config_dict["model_type"]]``), since any KeyError prints so.

Issue threads show three causes behind the one line (docs/explain.md, "the messages users post most"): a model
newer than the installed transformers (qwen2, gemma2, qwen3, ...), the most common; a model whose code lives in its
repository or in its project's own package (trust_remote_code, a package that registers the type on import); and
a config.json that names a wrong type (a cache of a broken download, a hand-edited config). The line alone cannot
tell them apart: likely, never certain.

Read by versions.py's ``dependency_version`` beside stack_releases.py, with the same interface.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ANCHORS = ("but Transformers does not recognize this architecture", "KeyError: '")
# a custom model's type (code in its repository, or a package that registers it) prints the same words
GENERIC = ANCHORS
TEMPLATES = ("transformers:model-type-not-recognised", "transformers:model-type-keyerror")
CHANGE = R(
    r"has model type [`'](?P<unknown_model_type>[^`'\n]{1,100})[`'] but Transformers does not recognize this "
    r"architecture|"
    r"^(?:\[rank\d+\]: ?)?KeyError: '(?P<keyerror_model_type>[A-Za-z][\w-]{0,60})'\s*$"
)
# the lookup that raised the bare KeyError (transformers 4.x before 4.37): its frame, or its source line
_LOOKUP = R(
    r"(?P<config_mapping_lookup>configuration_auto\.py\"?, line \d+, in __getitem__|"
    r"CONFIG_MAPPING\[config_dict\[[\"']model_type[\"']\]\])"
)
CONTEXT: tuple = (("configuration_auto.py", _LOOKUP), ("CONFIG_MAPPING[config_dict[", _LOOKUP))
# the bare KeyError counts only beside that lookup
REQUIRES_BESIDE = (("keyerror_model_type", ("config_mapping_lookup",)),)


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Never: a type newer than the release and a custom one print the same line."""
    return False


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for AutoConfig's unknown model type among ``facts`` (`CHANGE`'s groups), else None."""
    model_type = facts.get("unknown_model_type") or facts.get("keyerror_model_type")
    if not model_type:
        return None
    raised = (
        ""
        if facts.get("unknown_model_type")
        else " (AutoConfig's KeyError, as transformers before 4.37 raised it)"
    )
    return (
        f"the installed transformers does not know the checkpoint's model type {model_type}{raised}: most often the "
        "model is newer than this transformers release; or its code is not part of transformers at all (it "
        "comes with the checkpoint or with its project's own package)",
        f'Compare the checkpoint\'s config.json (its "transformers_version" and "model_type": {model_type}) with '
        "python -c 'import transformers; print(transformers.__version__)', and install a release that has the "
        "model: pip install -U transformers (a model newer than the latest release: pip install "
        "git+https://github.com/huggingface/transformers.git, or the version its model card names). Upgrade "
        "every rank's environment, and keep the torch, accelerate and peft the new release asks for. If the "
        "model's code is its own (a modeling_*.py in the checkpoint's repository, or a project that registers "
        "the type), load it with trust_remote_code=True or import that project's package before "
        "from_pretrained; if the type is misspelt in config.json or the download was cut short, fix the file or "
        "download it again (huggingface-cli download <repo> --force-download).",
    )
