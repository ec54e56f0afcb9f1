"""Lightning 2.0's Trainer and Fabric refusing None, the default of their strategy and accelerator before 2.0.

Read by versions.py's ``dependency_version`` beside api_changes.py (the strategies 2.0 removed), from what the
sources print:

- Lightning 1.x declared ``Trainer(accelerator=None, strategy=None)`` (``pytorch_lightning/trainer/trainer.py``
  up to 1.9.5; ``LightningLite`` and the ``AcceleratorConnector`` the same), None meaning "choose for me";
- Lightning 2.0 made both default to ``"auto"``, and its connectors refuse anything that is neither "auto" nor a
  registered name nor an object: ``lightning/pytorch/trainer/connectors/accelerator_connector.py`` and
  ``lightning/fabric/connector.py`` (``_check_config_and_set_final_flags``) raise ValueError "You selected an
  invalid strategy name: `strategy={strategy!r}`. ..." and "You selected an invalid accelerator name:
  `accelerator={accelerator!r}`. Available names are: auto, ...".

With None in it (``!r`` of None, unquoted: a misspelt name prints in quotes, trainer_arguments.py's reading), the
message says the code handed the connector the 1.x default: a script or a framework written for Lightning 1.x, or
its option left unset and forwarded as None. The log does not say which: a framework written for Lightning 2 whose
own script forwards an unset option as None prints it too, a bug of that release (Stability-AI/stable-audio-tools#7:
``--strategy`` not given, fixed in its later code). So likely, with that reading named beside it.

`change(facts)` says which of them a line is; `decisive(facts, ctx)` whether the log makes it certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# api_changes.py's anchor reads the strategy's refusal; the pattern below takes only None (backticks or not: they
# are often lost when a log is pasted as Markdown)
ANCHORS = ("You selected an invalid accelerator name",)
# who passed None is not in the log (see above): only likely. The strategy's refusal, api_changes.py's anchor for
# the strategies 2.0 removed, is on a None line too, so its words decide nothing by themselves: `decisive` does
STRATEGY_REFUSED = "You selected an invalid strategy name"
GENERIC = (*ANCHORS, STRATEGY_REFUSED)
TEMPLATES = (
    "lightning:you-selected-an-invalid-strategy-name",
    "lightning:you-selected-an-invalid-accelerator-name",
    "third_party:lightning-fabric-invalid-strategy-name",
    "third_party:lightning-fabric-invalid-accelerator-name",
)
CHANGE = R(r"invalid (?P<pl_none_flag>strategy|accelerator) name: `?(?:strategy|accelerator)=None\b")
CONTEXT: tuple = ()

# the None handed over by a framework's own script (its option left unset), a bug of that release
FRAMEWORK_DEFAULT = (
    "library_version_bug",
    "a training framework's own script forwarding its option left unset as None, a bug of its release",
    "Give the option explicitly where the framework takes it (--strategy auto, --accelerator auto), or update the "
    "framework (pip install -U <framework>, or pull its latest code): its later release passes 'auto'.",
)


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Certain on a strategy Lightning 2.0 removed (api_changes.py's, printed for nothing else); never on None: the
    log does not say whose code passed it (code written for Lightning 1.x, or a framework's bug)."""
    return bool(facts.get("pl_strategy"))


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for a strategy or accelerator None among ``facts`` (the named groups of `CHANGE`), else None."""
    flag = facts.get("pl_none_flag")
    if not flag:
        return None
    return (
        f"the code passes {flag}=None, the default of Lightning 1.x's Trainer, which Lightning 2.0 replaced by "
        f"{flag}='auto' and refuses: code written for Lightning 1.x, the installed Lightning newer than it",
        f"Pass {flag}='auto' where the Trainer (or Fabric) is built, or leave the argument out ('auto' is the "
        f"default since 2.0); a command-line option left unset and forwarded as None does this, so give it a "
        f"value (--{flag} auto). Or update the script or framework that builds the Trainer to its release for "
        "Lightning 2, or install the Lightning it was written for: pip install 'pytorch-lightning<2.0' (1.9.5 is "
        "the last 1.x).",
    )
