"""Lightning 1.6-1.9 ignoring ``devices=`` for the older device flag: fewer GPUs used than asked for.

``pytorch_lightning/trainer/connectors/accelerator_connector.py`` (``_check_device_config_and_set_final_flags``,
1.6-1.9, a ``rank_zero_warn``): where a device-specific flag (``gpus``, ``num_processes``, ``tpu_cores``, ``ipus``)
is set beside ``devices``, "The flag `devices=4` will be ignored, instead the device specific number 1 will be
used" — the older flag wins, so a Trainer(gpus=1, devices=4) trains on one GPU. Users bring it as "only one GPU is
used". A warning: a finding only where the log shows no error (``fallback``), and only likely.
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


RECOGNISERS = (DEVICES_FLAG_IGNORED,)
