"""A tokenizer class a checkpoint names that the installed transformers cannot find.

transformers 4.x ``models/auto/tokenization_auto.py`` (``AutoTokenizer.from_pretrained``): when the checkpoint's
tokenizer_config.json (or its config) names a ``tokenizer_class`` and none of the repository's own code is run for
it, the name is looked up among transformers' own classes (``tokenizer_class_from_name``, its ``Fast`` twin first),
and when neither is there: ``ValueError: Tokenizer class {} does not exist or is not currently imported.``. The name
says which of three it is:

- a class some releases of transformers have and the installed one lacks (the releases' table, api_history.tsv):
  the installed transformers is older (or newer) than the tokenizer the checkpoint was saved with, for certain;
- a name no release spells so, but one does apart from its case (LLaMA checkpoints converted before 4.28 name
  ``LLaMATokenizer``, the class that shipped is ``LlamaTokenizer``): the checkpoint's config misspells it, likely;
- any other name is the model repository's own tokenizer (its ``auto_map``), which transformers runs only when the
  caller passes ``trust_remote_code=True``: likely, with the other reading named, a release of the training library
  that loads the model without passing it (LMFlow after v0.0.3 for ChatGLM, OptimalScale/LMFlow#690).

    >>> reading(Raised("ValueError", "Tokenizer class ChatGLMTokenizer does not exist or is not currently imported."))[0]
    'remote_code_not_trusted'
"""

from __future__ import annotations

import re
from functools import cache

from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.kinds import api_history

FAMILY = "library releases that disagree with the code"

TEMPLATE = "third_party:transformers-tokenizer-class-not-imported"
MESSAGE = re.compile(
    r"Tokenizer class (?P<tokenizer_class>\w{1,100}) does not exist or is not currently imported"
)


@cache
def _by_lower_name() -> dict[str, str]:
    """transformers' names in the releases' table, by their lower-case spelling."""
    _, rows = api_history.load().get("transformers", ([], []))
    return {row.name.lower(): row.name for row in rows if row.name and row.module == "transformers"}


def _row(name: str) -> api_history.Change | None:
    """The table's row for ``name`` or its ``Fast`` twin (AutoTokenizer tries the twin first)."""
    return api_history.lookup("transformers", name) or api_history.lookup("transformers", f"{name}Fast")


def reading(raised: Raised) -> tuple[str, str, str, bool, tuple[str, ...]] | None:
    """(kind, summary, fix, certain, other kinds named) when ``raised`` is AutoTokenizer's refusal of the class a
    checkpoint names; None otherwise."""
    found = MESSAGE.search(raised.message)
    if found is None:
        return None
    name = found.group("tokenizer_class")
    row = _row(name)
    if row is not None:
        summary, fix = api_history.explain(row)
        return (
            "dependency_version",
            f"the checkpoint's tokenizer is transformers' {name}; {summary}",
            fix,
            True,
            (),
        )
    spelled = _by_lower_name().get(name.lower()) or _by_lower_name().get(f"{name}Fast".lower())
    if spelled is not None:
        return (
            "dependency_version",
            f"the checkpoint's tokenizer_config.json names {name}, which no transformers release spells so "
            f"(transformers has {spelled}); or a tokenizer of the model repository's own code",
            f'Set "tokenizer_class": "{spelled}" in the checkpoint\'s tokenizer_config.json (it was converted '
            f"before transformers named the class), or load it with transformers.{spelled}.from_pretrained(...).",
            False,
            ("remote_code_not_trusted",),
        )
    return (
        "remote_code_not_trusted",
        f"the checkpoint's tokenizer, {name}, is not a class of transformers: it is the model repository's own "
        "code, which transformers runs only with trust_remote_code=True; or the training library's release loads "
        "this model without passing it (a release made for another transformers or another model)",
        "Pass trust_remote_code=True to AutoTokenizer.from_pretrained (and to AutoConfig / AutoModel of the same "
        "repository; a training framework's option: trust_remote_code: true, --trust_remote_code) after reading "
        "the repository's tokenization .py file. If the training library makes the call, use the release of it "
        "that supports this model (its README's supported models; pip install '<library>==<that release>').",
        False,
        ("dependency_version",),
    )
