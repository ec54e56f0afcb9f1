"""Lightning given a ``ReduceLROnPlateau`` scheduler without the metric it should step on.

``ReduceLROnPlateau.step(metrics)`` needs a value; Lightning steps the scheduler itself and takes that value from
the logged metric the optimizer configuration names. ``lightning/pytorch/core/optimizer.py``
(``_configure_schedulers_automatic_opt``; ``pytorch_lightning/trainer/optimizers.py`` in 1.x) refuses a
``ReduceLROnPlateau`` returned from ``configure_optimizers`` without ``"monitor"``, in two wordings: the scheduler
returned bare, or inside a scheduler dict. Nothing else prints them, but the ``configure_optimizers`` is not always
the user's: libraries that build the LightningModule for their users return it, and darts 0.17.0's
``PLForecastingModule.configure_optimizers`` returned ``[optimizer], [lr_scheduler]`` for any scheduler class its
users chose (darts#806, released in 0.17.1, passes ``"monitor"``, ``"val_loss"`` unless ``lr_scheduler_kwargs``
names one). The frames of a traceback say whose it was: certain when they go through Lightning's (and torch's) code
only, likely otherwise (a library's frames, or no traceback at all), the library's release named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Recogniser,
    called_from_own_code,
    first,
    on_ranks,
)

FAMILY = "a library refusing its settings"

# packages whose frames stand between the user's fit() and the refusal when the LightningModule is the user's own
_LIGHTNING_STACK = frozenset({"lightning", "pytorch_lightning", "lightning_fabric", "torch"})


def _library(hits: list[Hit]) -> str:
    """The installed package other than Lightning's whose frames called fit(), "" when none (or no traceback)."""
    packages = first(hits, "frame_packages", ())
    return next((p for p in packages if p not in _LIGHTNING_STACK), "")


def _monitor(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    library = _library(hits)
    whose = f"the model {library} built" if library else "configure_optimizers"
    return (
        f"Lightning was given a ReduceLROnPlateau scheduler without the name of the logged metric it should step "
        f'on ({whose} returned no "monitor")' + on_ranks(hits),
        "Return the ReduceLROnPlateau scheduler with the metric to watch, a name the LightningModule logs with self.log (from "
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
    confirm=called_from_own_code(*_LIGHTNING_STACK),
    also=(
        Alternative(
            "library_version_bug",
            "a library's own LightningModule returning the scheduler without a monitor (darts 0.17.0)",
            "The configure_optimizers that returned it is the library's that built the model for you, not yours: "
            "upgrade the library (darts 0.17.1 and later pass monitor='val_loss', or the one lr_scheduler_kwargs "
            "names: darts#806), or give it another lr_scheduler_cls until then.",
        ),
    ),
    describe=_monitor,
)

RECOGNISERS = (SCHEDULER_MONITOR_MISSING,)
