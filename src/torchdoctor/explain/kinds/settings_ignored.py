"""Settings a library overrode with another one's value, and said so in a warning: the run went on as not asked.

- ``pytorch_lightning/trainer/connectors/accelerator_connector.py`` (``_check_device_config_and_set_final_flags``,
  1.6-1.9, a ``rank_zero_warn``): where a device-specific flag (``gpus``, ``num_processes``, ``tpu_cores``,
  ``ipus``) is set beside ``devices``, "The flag `devices=4` will be ignored, instead the device specific number 1
  will be used" — the older flag wins, so a Trainer(gpus=1, devices=4) trains on one GPU. Users bring it as "only
  one GPU is used".
- accelerate's ``Accelerator._prepare_deepspeed`` (``accelerate/accelerator.py``, a ``logger.warning``): "Gradient
  accumulation steps mismatch: GradientAccumulationPlugin has 8, DeepSpeed config has 1. Using DeepSpeed's value."
  — ``Accelerator(gradient_accumulation_steps=8)`` (or the Trainer's ``--gradient_accumulation_steps``) meets a
  DeepSpeed config with its own number (``accelerate config`` writes ``gradient_accumulation_steps: 1`` into the
  DeepSpeed section), and the config wins: a global batch other than the one planned, so a loss curve, a step
  count and a learning-rate schedule unlike the single-GPU run's.

Each a warning: a finding only where the log shows no error (``fallback``), and only likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _ignored(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    asked, used = facts.get("devices_asked"), facts.get("devices_used")
    numbers = f": devices={asked} ignored, {used} used" if asked and used else ""
    return (
        "Lightning ignored the Trainer's devices= for an older device flag set beside it" + numbers + " (a "
        "warning, the run went on with the older flag's devices)",
        "Pass one of the two: Trainer(accelerator='gpu', devices=N) and drop gpus= (or num_processes= / "
        "tpu_cores=), which Lightning 1.6-1.9 lets win over devices= and 2.0 removed. A gpus= from a config file "
        "or an argparse default (add_argparse_args gave every Trainer flag a command-line option) counts too: "
        "that is how a run meant for N GPUs trains on one.",
    )


DEVICES_FLAG_IGNORED = Recogniser(
    kind="devices_flag_ignored",
    title="Lightning's devices= ignored for gpus=",
    anchors=("will be ignored, instead the device specific number",),
    templates=("third_party:lightning-devices-flag-ignored",),
    facts=(
        R(
            r"The flag `devices=(?P<devices_asked>[^`\n]{1,40})` will be ignored, instead the device specific "
            r"number (?P<devices_used>[^\s]{1,40}) will be used"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: how many GPUs the user meant is not in the log
    fallback=True,
    describe=_ignored,
)


def _accumulation(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    asked, used = facts.get("accumulation_asked"), facts.get("accumulation_used")
    numbers = f" ({asked} asked, the DeepSpeed config's {used} used)" if asked and used else ""
    return (
        "accelerate replaced the gradient accumulation steps asked of it with the DeepSpeed config's"
        + numbers
        + ": each optimizer step sums another number of batches than planned (a warning, the run went on)",
        'Give the number in one place: write gradient_accumulation_steps: "auto" in the DeepSpeed config (the '
        "Accelerator's or Trainer's value then fills it), or the same number in both; `accelerate config` with "
        "DeepSpeed writes its own gradient_accumulation_steps (1 by default) into the config it saves. The global "
        "batch is micro batch x accumulation steps x processes, so a different number changes the steps per epoch, "
        "the learning-rate schedule and the loss curve, which is how it shows when a run is compared with another.",
    )


GRAD_ACCUMULATION_OVERRIDDEN = Recogniser(
    kind="grad_accumulation_overridden",
    title="the gradient accumulation steps overridden by the DeepSpeed config",
    anchors=("Gradient accumulation steps mismatch: GradientAccumulationPlugin has",),
    templates=("accelerate:gradient-accumulation-steps-mismatch-gradientaccumulationplugin-has",),
    facts=(
        R(
            r"GradientAccumulationPlugin has (?P<accumulation_asked>\d{1,9}), DeepSpeed config has "
            r"(?P<accumulation_used>\d{1,9})"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: which number the user meant is not in the log
    fallback=True,
    describe=_accumulation,
)


RECOGNISERS = (DEVICES_FLAG_IGNORED, GRAD_ACCUMULATION_OVERRIDDEN)
