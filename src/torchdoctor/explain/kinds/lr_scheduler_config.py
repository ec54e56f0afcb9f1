"""Lightning given a ``ReduceLROnPlateau`` scheduler without the metric it should step on.

``ReduceLROnPlateau.step(metrics)`` needs a value; Lightning steps the scheduler itself and takes that value from
the logged metric the optimizer configuration names. ``lightning/pytorch/core/optimizer.py``
(``_configure_schedulers_automatic_opt``; ``pytorch_lightning/trainer/optimizers.py`` in 1.x) refuses a
``ReduceLROnPlateau`` returned from ``configure_optimizers`` without ``"monitor"``, in two wordings: the scheduler
returned bare, or inside a scheduler dict. Nothing else prints them: certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks


def _monitor(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "Lightning was given a ReduceLROnPlateau scheduler without the name of the logged metric it should step "
        'on (configure_optimizers returned no "monitor")' + on_ranks(hits),
        "Return the scheduler with the metric to watch, a name the LightningModule logs with self.log (from "
        "validation_step for a validation metric):\n"
        'return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "val_loss", '
        '"interval": "epoch"}}\n'
        "Code written for an old Lightning that monitored val_loss by default needs the key added. Without "
        "Lightning, call scheduler.step(val_loss) yourself.",
    )


SCHEDULER_MONITOR_MISSING = Recogniser(
    kind="scheduler_monitor_missing",
    title="a ReduceLROnPlateau scheduler without a monitored metric",
    templates=(
        "third_party:lightning-reduce-on-plateau-needs-monitor",
        "third_party:lightning-scheduler-dict-needs-monitor",
    ),
    anchors=("must include a monitor when a `ReduceLROnPlateau` scheduler is used",),
    describe=_monitor,
)

RECOGNISERS = (SCHEDULER_MONITOR_MISSING,)
