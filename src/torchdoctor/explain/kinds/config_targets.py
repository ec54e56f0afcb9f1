"""A Hydra config whose ``_target_`` builds a class without the arguments that class takes.

Hydra's ``instantiate`` calls a config node's ``_target_`` with the node's other keys as its arguments, and wraps
what the call raises in its own words, which changed between releases:

- 1.0.x (``hydra/utils.py`` ``call``): ``HydraException: Error calling '{target}' : {error}``;
- 1.1.0-1.1.1 (``hydra/_internal/instantiate/_instantiate2.py`` ``_call_target``): the error's own type re-raised
  as ``TypeError: Error instantiating '{target}' : {error}``;
- 1.1.2 to 1.3 (the same function): ``InstantiationException: Error in call to target '{target}':`` with
  ``repr(error)`` on the next line and ``full_key: {key}``, the config node, on the one after.

Where the error is CPython's TypeError for the arguments (``__init__() missing 1 required positional argument:
'x'``, ``MoiraiModule.__init__() missing 7 required positional arguments: ...`` from 3.10 on, ``got an
unexpected keyword argument 'x'``, ``takes 2 positional arguments but 3 were given``), the config node and the
class disagree: most often the config chosen is the wrong one for the task (a config that loads a pretrained
model, ``from_pretrained`` calling the class bare, given to fine-tuning, uni2ts#91; an inference class named
where training needs its training subclass). The same words come from a config written for another release of
the class's package, or a key misspelt in an override, and the message says none of that: likely. A keyword a
known release removed (Lightning 2.0's ``Trainer(gpus=...)``) is api_changes.py's, which names the release.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import api_changes
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    merged,
    on_ranks,
)

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_NAMES = r"'\w{1,100}'(?:(?:,| and|, and) '\w{1,100}'){0,40}"
# Hydra's three wordings, then CPython's TypeError for a call's arguments (inline, or repr()'d on the next line)
TARGET_CALL = R(
    r"(?:Error in call to target|Error instantiating|Error calling) "
    r"'(?P<hydra_target>(?:[\w<>]{1,100}\.){0,20}(?P<hydra_target_name>\w{1,100}))' ?:"
    r"(?: |\n\s*TypeError\([\"'])"
    # a constructor, or the target itself (a function or classmethod): not a call deeper inside the target
    r"(?P<hydra_call>(?:\w{1,100}\.)?(?:__init__|__new__|(?P=hydra_target_name)))\(\) (?:"
    rf"missing (?P<hydra_missing>\d{{1,3}}) required (?:positional|keyword-only) arguments?: (?P<hydra_names>{_NAMES})|"
    r"got an unexpected keyword argument '(?P<hydra_unexpected>\w{1,100})'|"
    r"(?P<hydra_positional>takes (?:from \d{1,3} to )?\d{1,3} positional arguments? but \d{1,3} (?:were|was) given))"
)
FULL_KEY = R(r"^full_key: (?P<hydra_full_key>[\w.\[\]-]{1,200})\s*$", re.MULTILINE)
# hydra/_internal/utils.py run_and_report: the overrides the job was started with (which config of each group)
OVERRIDES = R(r"Error executing job with overrides: (?P<hydra_overrides>\[[^\n]{0,400}\])")
CONTEXT = (("Error executing job with overrides: ", OVERRIDES),)


def _built_without(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    target, call = facts["hydra_target"], facts["hydra_call"]
    node = first(hits, "hydra_full_key", "")
    at = f" at {node}" if node else ""
    if facts.get("hydra_missing"):
        count = int(facts["hydra_missing"])
        refused = f"without {count} argument{'s' if count != 1 else ''} it requires ({facts['hydra_names']})"
        change = f"give the node the keys {call} requires ({facts['hydra_names']})"
    elif facts.get("hydra_unexpected"):
        refused = f"with the keyword '{facts['hydra_unexpected']}', which it does not take"
        change = f"remove (or rename) the key {facts['hydra_unexpected']} that {call} does not take"
    else:
        refused = f"with more positional arguments than it takes ({facts['hydra_positional']})"
        change = f"give the node only the arguments {call} takes"
    overrides = ctx.facts.get("hydra_overrides")
    chosen = f" (this job's: {overrides})" if overrides else ""
    return (
        f"Hydra built the config node{at} by calling {target}, and {call} was called {refused}: the config "
        "chosen is not the one for this class or task (a config that loads a pretrained model given to "
        "training or fine-tuning, an inference class where the training one is needed)" + on_ranks(hits),
        f"Hydra passes the node's keys as the arguments of its _target_ ({target}). Check which config the "
        f"command selected, the overrides Hydra printed{chosen}, against the configs the project provides for "
        "this task (a fine-tuning run often has its own model config, a training run its own model class), and "
        "select that one (group=name on the command line); or, if this config is meant for it, "
        f"{change}: key=value overrides, +key=value for a key the config lacks, ~key to drop one.",
    )


CONFIG_MODEL_CLASS = Recogniser(
    kind="config_model_class",
    title="a config whose _target_ builds a class without the arguments it takes",
    templates=(
        "third_party:hydra-error-in-call-to-target",
        "third_party:hydra-error-instantiating",
        "third_party:hydra-error-calling",
    ),
    anchors=("Error in call to target '", "Error instantiating '", "Error calling '"),
    # the message says neither which config was meant nor whether the class's release changed
    generic=("Error in call to target '", "Error instantiating '", "Error calling '"),
    span=2,  # 1.1.2+: repr(error) on the next line, full_key on the one after
    match=TARGET_CALL,
    facts=(TARGET_CALL, FULL_KEY),
    # a keyword a known release removed (Trainer's gpus in Lightning 2.0, TrainingArguments' evaluation_strategy)
    # or torchmetrics 0.11's task: api_changes.py names the release, dependency_version
    reject=api_changes.CHANGE,
    also=(
        Alternative(
            "dependency_version",
            "a config written for another release of the package that defines the class",
            "Compare the installed release (pip show <package>) with the one the project pins, and install that "
            "one, or update the config to the installed release's arguments.",
        ),
    ),
    describe=_built_without,
)

RECOGNISERS = (CONFIG_MODEL_CLASS,)
