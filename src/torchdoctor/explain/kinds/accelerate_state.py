"""accelerate's process state used out of order.

accelerate's process state used out of order: before an ``Accelerator`` created it, after it was reset, or
changed once it exists (a notebook cell run again with other options, a second ``Accelerator`` with another plugin).

The texts are accelerate's ``state.py`` (``PartialState.on_main_process`` and its siblings, ``AcceleratorState``
built outside ``Accelerator``, ``_check_initialized``, ``__getattr__`` after ``_reset_state``) and ``accelerator.py``
(a second ``Accelerator`` given a DeepSpeed plugin), as the catalog holds them. Each names its own cause: certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _accelerate_order(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("flag"):
        return (
            f"accelerate's state was already created with other options; this Accelerator asks for {facts['flag']}"
            + on_ranks(hits),
            "accelerate keeps one state per process, set by the first Accelerator / PartialState (or the "
            "TrainingArguments of an HF Trainer) and never changed after. In a notebook, restart the kernel and "
            f"create the Accelerator with {facts['flag']} first, before anything else touches accelerate; in a "
            "script, create one Accelerator with all its options and reuse it.",
        )
    if facts.get("second_plugin"):
        return (
            "a second Accelerator was given a DeepSpeed plugin; the first one already fixed the state"
            + on_ranks(hits),
            "Give the first Accelerator every DeepSpeed plugin the script uses (Accelerator(deepspeed_plugins={"
            '"student": plugin1, "teacher": plugin2})) and switch between them with '
            "AcceleratorState().select_deepspeed_plugin(name); create later Accelerators without deepspeed_plugin=.",
        )
    if facts.get("configured_state"):
        return (
            "the TrainingArguments were told to reuse accelerate's state (use_configured_state), but none was created "
            "before them" + on_ranks(hits),
            "With accelerator_config={'use_configured_state': True} the Trainer takes the state an Accelerator or "
            "PartialState already set up: create it first (accelerator = Accelerator(...) or PartialState()), then "
            "the TrainingArguments; or drop use_configured_state and let the TrainingArguments create it.",
        )
    if facts.get("reset"):
        return (
            f"accelerate's state was reset and not created again (no attribute {facts['reset']})"
            + on_ranks(hits),
            "AcceleratorState._reset_state() / PartialState._reset_state() (tests and notebooks call it) wipes the "
            "state: create an Accelerator() (or PartialState()) again after it, before using accelerate.",
        )
    return (
        "accelerate was used before an Accelerator was created" + on_ranks(hits),
        "Create the Accelerator first, at the top of the script and in every process: accelerator = Accelerator(...), "
        "then use accelerator.on_main_process / is_main_process / print and the other helpers; do not build "
        "AcceleratorState() yourself. Start the script with `accelerate launch` (or torchrun) so each process "
        "creates its own.",
    )


ACCELERATE_INIT_ORDER = Recogniser(
    kind="accelerate_init_order",
    title="accelerate's state used before an Accelerator created it, or changed after",
    anchors=(
        "AcceleratorState has already been initialized and cannot be changed",
        "The `PartialState` or `Accelerator` must be initialized before calling this function",
        "Please make sure to properly initialize your accelerator via `accelerator = Accelerator()`",
        "_reset_state()` was called and",
        "You cannot pass in a `deepspeed_plugin` when creating a second `Accelerator`",
        "requires a pre-configured `AcceleratorState` or `PartialState` to be defined before calling",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "PartialState` object has no attribute",
        "AcceleratorState` object has no attribute",
    ),
    templates=(
        "accelerate:acceleratorstate-has-already-been-initialized-and",  # state.py _check_initialized
        "accelerate:the-partialstate-or-accelerator-must-be",  # state.py on_main_process & co.
        "accelerate:please-make-sure-to-properly-initialize",  # state.py AcceleratorState(_from_accelerator=False)
        "accelerate:partialstate-object-has-no-attribute-this",  # state.py __getattr__ after _reset_state
        "accelerate:acceleratorstate-object-has-no-attribute-this",
        "accelerate:you-cannot-pass-in-deepspeed-plugin",  # accelerator.py: a second Accelerator
        # transformers/training_args.py _setup_devices: use_configured_state with no state created yet
        "transformers:passing-use-configured-state-true-to",
    ),
    facts=(
        R(r"pass `(?P<flag>[^`\n]{1,60})` to `Accelerator\(\)`"),
        R(r"object has no attribute `(?P<reset>\w{1,100})`\. This happens if"),
        R(r"(?P<second_plugin>deepspeed_plugin` when creating a second)"),
        R(r"(?P<configured_state>use_configured_state'?:True)"),
    ),
    describe=_accelerate_order,
)

RECOGNISERS = (ACCELERATE_INIT_ORDER,)
