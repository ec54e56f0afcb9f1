"""Helpers around a training loop whose release has a bug the log shows: warm-up, wandb.watch, EMA, conversion.

Each reading is versions.py's library_version_bug (its release-bug recogniser reads the lines with `REFUSED`),
always likely: the same words come from a copy of the helper in the project, or from the script itself.

- ildoonet/pytorch-gradual-warmup-lr (``warmup_scheduler/scheduler.py``): ``GradualWarmupScheduler.get_lr``
  returned ``self.after_scheduler.get_lr()`` once the warm-up ended, and torch's ``ReduceLROnPlateau`` had no
  ``get_lr`` (it takes the metric in ``step``; from torch 2.2 it inherits LRScheduler's, which raises
  NotImplementedError), so CPython's "'ReduceLROnPlateau' object has no attribute 'get_lr'" stopped the run at
  the end of the warm-up (ildoonet/pytorch-gradual-warmup-lr#1). cc7d9b7 (#2, merged 2019-05-16) steps a
  ReduceLROnPlateau with the metric instead (``scheduler.step(epoch, metrics=...)``); the many copies of the
  class in projects predate it as often. Newer torch does not help: the warm-up code must step it.
- wandb (``wandb/wandb_torch.py``, ``TorchGraph.hook_torch_modules``): hooking a model's graph marks it
  ``_wandb_watch_called`` and refuses a model already marked: "You can only call `wandb.watch` once per model.
  Pass a new instance of the model if you need to call wandb.watch again in your code." ``wandb.unwatch`` leaves
  the mark. Code that watches at every fit (opensoundscape's training with ``log_graph`` until
  kitzeslab/opensoundscape#808, Lightning's WandbLogger.watch in a loop of folds) fails on the second run.
- luxonis-train (``luxonis_train/callbacks/ema.py``, ``ModelEma.update``): ``zip(self.state_dict_ema.values(),
  model.state_dict().values(), strict=True)`` from 867ade3 (#198, v0.3.4-beta) to v0.4.4-beta; after
  ``resume_training`` the restored EMA state lacks the duplicate ``_node`` entries the live model's state dict
  has, so CPython's "zip() argument 2 is longer than argument 1" stops the first step. 6548c2d (#372, v0.4.5-beta)
  matches entries by key.
- diffusers (``src/diffusers/pipelines/stable_diffusion/convert_from_ckpt.py``): cb432c4 (#4653, 2023-08-26)
  renamed ``download_from_original_stable_diffusion_ckpt``'s ``checkpoint_path`` to ``checkpoint_path_or_dict``,
  and ``scripts/convert_original_stable_diffusion_to_diffusers.py`` passed ``checkpoint_path=`` until 3eeaf4e
  (#4817, 2023-08-29); both are in v0.21.0. The script of main between them, or a script up to v0.20.x run with
  diffusers 0.21 or newer, prints "got an unexpected keyword argument 'checkpoint_path'".
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = (
    "'ReduceLROnPlateau' object has no attribute 'get_lr'",
    "once per model",
    "self.state_dict_ema.values()",
    "download_from_original_stable_diffusion_ckpt() got an unexpected keyword argument 'checkpoint_path'",
)
REFUSED = re.compile(
    r"(?P<warmup_plateau>'ReduceLROnPlateau' object has no attribute 'get_lr')|"
    r"(?P<watch_twice>You can only call `?wandb\.watch`? once per model)|"
    r"(?P<ema_zip_strict>self\.state_dict_ema\.values\(\),)|"
    r"(?P<sd_convert_keyword>download_from_original_stable_diffusion_ckpt)\(\) got an unexpected keyword argument "
    r"'checkpoint_path'"
)
TEMPLATES = (
    "third_party:warmup-scheduler-plateau-get-lr",
    "third_party:wandb-watch-once-per-model",
    "third_party:luxonis-train-ema-update-zip-strict",
    "third_party:diffusers-convert-ckpt-checkpoint-path",
)


def _warmup_plateau(hits: list[Hit]) -> tuple[str, str]:
    package = first(hits, "raised_in_package")
    who = f"{package}'s GradualWarmupScheduler" if package else "a warm-up scheduler (GradualWarmupScheduler)"
    return (
        f"{who} asked the ReduceLROnPlateau it hands over to for get_lr() when the warm-up ended, which "
        "ReduceLROnPlateau does not have (it is stepped with the metric): ildoonet/pytorch-gradual-warmup-lr's "
        "scheduler before #2 (May 2019), and the copies of it in projects" + on_ranks(hits),
        "Step the plateau scheduler with the validation metric through the warm-up: install warmup_scheduler from "
        "its repository (pip install -U git+https://github.com/ildoonet/pytorch-gradual-warmup-lr.git) and call "
        "scheduler.step(epoch, metrics=val_loss), or port #2 (step_ReduceLROnPlateau) into the project's copy. "
        "A newer torch does not help: from 2.2 ReduceLROnPlateau's get_lr is LRScheduler's, which raises.",
    )


def _watch_twice(hits: list[Hit]) -> tuple[str, str]:
    return (
        "wandb.watch was called on a model it already watches: hooking the graph marks the model "
        "(_wandb_watch_called) and wandb refuses a second hook, which wandb.unwatch does not clear; code that "
        "watches at every fit (a training library such as opensoundscape before #808, a loop of folds or a "
        "second trainer.fit on the same model) fails on the second" + on_ranks(hits),
        "Watch each model once, not in every fit; or watch without the graph (log_graph=False), or after "
        "wandb.unwatch(model) delete the _wandb_watch_called attribute of the model and its modules; upgrade the "
        "library that calls it (opensoundscape turned log_graph off in #808).",
    )


def _ema_zip_strict(hits: list[Hit]) -> tuple[str, str]:
    return (
        "luxonis-train's EMA callback zips the EMA state dict with the model's (strict=True) and they no longer "
        "hold the same entries: after resume_training the restored EMA state lacks the duplicate _node entries "
        "the live model has, a bug of luxonis-train 0.3.4-beta to 0.4.4-beta" + on_ranks(hits),
        "pip install -U luxonis-train (0.4.5-beta or newer matches the EMA entries by key, #372), or resume "
        "without the EMACallback until then.",
    )


def _sd_convert_keyword(hits: list[Hit]) -> tuple[str, str]:
    return (
        "the Stable Diffusion conversion script passes checkpoint_path= to "
        "download_from_original_stable_diffusion_ckpt, which diffusers 0.21.0 renamed checkpoint_path_or_dict "
        "(#4653), a bug of the script on diffusers' main from 2023-08-26 until #4817 (2023-08-29)"
        + on_ranks(hits),
        "Run scripts/convert_original_stable_diffusion_to_diffusers.py from the tag of the diffusers installed "
        "(pip show diffusers; git checkout v<version>), or change the call to checkpoint_path_or_dict= "
        "(fixed in #4817).",
    )


def reading(hits: list[Hit]) -> tuple[str, str] | None:
    """(summary, fix) for the helper whose bug the hits show, None when they show none."""
    if first(hits, "warmup_plateau"):
        return _warmup_plateau(hits)
    if first(hits, "watch_twice"):
        return _watch_twice(hits)
    if first(hits, "ema_zip_strict"):
        return _ema_zip_strict(hits)
    if first(hits, "sd_convert_keyword"):
        return _sd_convert_keyword(hits)
    return None
