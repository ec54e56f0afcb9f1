"""Warnings of a training loop that runs but not as meant (a schedule, a log, a metric).

The learning rate's first value skipped, no training step logged, a metric computed from no update.

Users bring these after a run that "works but is wrong" (a schedule off by one step, an empty loss curve, one
rank's metric unlike the others'), the warning being the only line of the log that says why. None stops a run,
so each is a finding only where the log shows no error (``fallback``: beside an exception or a failed exit the
error is the finding), and only likely: the warning says a condition, not the symptom the user saw.

- torch's ``LRScheduler.step`` (``torch/optim/lr_scheduler.py``, 1.1+, a ``UserWarning``): "Detected call of
  `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the
  opposite order ..." where the optimizer has not stepped yet when the scheduler does; and "Seems like
  `optimizer.step()` has been overridden after learning rate scheduler initialization ..." where the counter it
  reads was replaced. Under fp16 a GradScaler (or apex / DeepSpeed's loss scaler) skips ``optimizer.step()`` on the
  first steps whose gradients overflow while it searches its scale, and a loop that steps the scheduler anyway
  prints it (huggingface/transformers#11106, fixed in #11144): harmless there; in a loop written in the pre-1.1
  order, the schedule runs one step ahead.
- Lightning's fit loop (``trainer/data_loading.py`` in 1.x: "The number of training samples ..."; 1.6+
  ``loops/fit_loop.py``, a ``PossibleUserWarning``: "The number of training batches (4) is smaller than the
  logging interval Trainer(log_every_n_steps=50). Set a lower value for log_every_n_steps if you want to see logs
  for the training epoch."): an epoch shorter than the logging interval writes no training-step log within it
  (rhasspy/piper#664, MUST-Deep-Learning/KnowIt#228); more GPUs shorten each rank's epoch and bring it on.
- torchmetrics' ``Metric.compute`` (``torchmetrics/metric.py`` ``_wrap_compute``, 0.x-1.x): "The ``compute`` method
  of metric <Class> was called before the ``update`` method which may lead to errors, as metric states have not
  yet been updated.": the object computed saw no ``update`` on this rank — another copy was updated (one metric
  object shared or re-created per phase, Lightning-AI/pytorch-lightning#8350), a rank got no batch, or
  torchmetrics 1.2.x's false warning for ``RunningMean`` / ``RunningSum`` through their inner metric
  (Lightning-AI/torchmetrics#2264, fixed in 1.3).
- Lightning's configuration validator (``trainer/configuration_validator.py``, ``__verify_eval_loop_configuration``,
  1.x-2.x): "You defined a `validation_step` but have no `val_dataloader`. Skipping val loop." and "You passed in a
  `val_dataloader` but have no `validation_step`. Skipping val loop.": no validation runs at all, so no val metric is
  logged, and a ModelCheckpoint or EarlyStopping watching one never acts on it.
- transformers' ``Trainer._inner_training_loop`` (``trainer.py``, a ``logger.warning``): "There seems to be not a
  single sample in your epoch_iterator, stopping training at step N! This is expected if you're using an
  IterableDataset and set num_steps (M) higher than the number of available samples." (later releases: "There
  seems not to be a single sample ..."): an epoch yielded no batch, so training ends at step N of max_steps M with no
  error. Under several processes each rank reads only its share of a streamed dataset, so the data runs out sooner
  than on one GPU.
- torch's ``torch/utils/checkpoint.py`` (``check_backward_validity``, a ``UserWarning``, 1.x-2.x): "None of the
  inputs have requires_grad=True. Gradients will be None": a reentrant activation checkpoint (``use_reentrant=True``,
  the default before 2.4 and still transformers' for years) whose inputs need no gradient returns an output that
  needs none, so no parameter inside the checkpointed layers gets a gradient. With a frozen embedding (LoRA/PEFT,
  a frozen backbone) the adapters in those layers never train: a loss that stays flat, no error. Healthy runs print
  it too: a validation loop under ``torch.no_grad`` through reentrant checkpoints (pytorch/pytorch#85066), a frozen
  vision tower checkpointed in a LLaVA-style run (maintainers: "no effect on the training"); the finding names both.
- torch's regression losses (``torch/nn/functional.py``: ``mse_loss``, ``l1_loss``, ``smooth_l1_loss``,
  ``huber_loss``, a ``UserWarning``, 0.4 on): "Using a target size (torch.Size([32])) that is different to the input
  size (torch.Size([32, 1])). This will likely lead to incorrect results due to broadcasting. Please ensure they
  have the same size.": an output of [N, 1] against a target of [N] broadcasts to [N, N], every output compared with
  every target, so the model learns the targets' mean: a loss that stops falling, no error.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _scheduler_first(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    overridden = any("step_overridden" in h.facts for h in hits)
    what = (
        "torch warned that optimizer.step() was replaced after the learning rate scheduler was made, so it cannot "
        "tell whether the optimizer stepped before the scheduler"
        if overridden
        else "torch warned that lr_scheduler.step() ran before any optimizer.step()"
    )
    return (
        what + ": the schedule's first value is skipped (a warning, the run went on)" + on_ranks(hits),
        "Two causes print it. Under fp16 (torch.cuda.amp's GradScaler, apex or DeepSpeed's loss scaler) the "
        "scaler skips optimizer.step() on the first steps whose gradients hold inf/NaN while it searches its loss "
        "scale, and the loop steps the scheduler anyway: harmless for one or two steps; to keep the schedule "
        "exact, step the scheduler only when the scaler did not skip (compare scaler.get_scale() before and "
        "after scaler.update(); the Trainers do this since transformers 4.6). Otherwise the loop calls "
        "scheduler.step() before optimizer.step() (the order of torch before 1.1): call optimizer.step() first, "
        "then scheduler.step(), or the whole schedule runs one step early — a learning rate off from the one "
        "planned explains a loss curve unlike the reference run's.",
    )


SCHEDULER_BEFORE_OPTIMIZER = Recogniser(
    kind="scheduler_before_optimizer_step",
    title="the learning rate scheduler stepped before the optimizer",
    anchors=(
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`",
        "has been overridden after learning rate scheduler initialization",
    ),
    templates=(
        "torch_native:lr-scheduler-step-before-optimizer-step",
        "torch_native:lr-scheduler-optimizer-step-overridden",
    ),
    facts=(R(r"(?P<step_overridden>has been overridden after learning rate scheduler initialization)"),),
    confirm=lambda hits, ctx: False,  # a warning: it says the order, not what the run did wrong
    fallback=True,
    describe=_scheduler_first,
)


def _log_interval(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    batches, every = facts.get("epoch_batches"), facts.get("log_every")
    numbers = f" ({batches} batches per epoch, log_every_n_steps={every})" if batches and every else ""
    return (
        "Lightning warned that an epoch has fewer training batches than its logging interval"
        + numbers
        + ": no "
        "training step is logged within an epoch (a warning, the run went on)",
        "Lower the interval to fit the epoch: Trainer(log_every_n_steps=N) with N at most the batches per epoch "
        "(1 logs every step). The batches per epoch shrink with more GPUs (each rank gets len(dataset) / "
        "(world_size x batch_size)), a larger batch_size or limit_train_batches: that is why losses that were "
        "logged on one GPU disappear on several. Metrics logged with on_epoch=True are still written at each "
        "epoch's end.",
    )


LOG_INTERVAL_ABOVE_BATCHES = Recogniser(
    kind="log_interval_above_batches",
    title="Lightning's logging interval longer than an epoch",
    anchors=("is smaller than the logging interval Trainer(log_every_n_steps=",),
    templates=(
        "third_party:lightning-training-batches-below-log-interval",
        "third_party:lightning-training-samples-below-log-interval",
    ),
    facts=(
        R(
            r"The number of training (?:batches|samples) \((?P<epoch_batches>\d{1,9})\) is smaller than the logging "
            r"interval Trainer\(log_every_n_steps=(?P<log_every>\d{1,9})\)"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: what the user missed is not in the log
    fallback=True,
    describe=_log_interval,
)


def _metric_not_updated(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    metric = merged(hits).get("metric_class")
    which = f" {metric}" if metric else ""
    return (
        f"torchmetrics warned that the metric{which} was computed before any update() reached it"
        + on_ranks(hits)
        + ": its value is the default of an empty state, not one of the data (a warning, the run went on)",
        "Make the object you compute the one you update: keep one metric object per phase as a module "
        "attribute (self.train_acc, self.val_acc; an nn.ModuleDict for many), update it in each step and compute "
        "or log it at the epoch's end; a metric re-created or deep-copied between update and compute starts empty. "
        "In distributed runs every rank must update it at least once (a rank with no batch of a small validation "
        "set computes from nothing). If update() is called and the metric is torchmetrics' RunningMean or "
        "RunningSum, it is torchmetrics 1.2.x's false warning: pip install -U torchmetrics (1.3+).",
    )


METRIC_COMPUTE_BEFORE_UPDATE = Recogniser(
    kind="metric_compute_before_update",
    title="a torchmetrics metric computed before it was updated",
    anchors=("was called before the ``update`` method",),
    templates=("third_party:torchmetrics-compute-before-update",),
    facts=(R(r"The ``compute`` method of metric (?P<metric_class>\w{1,80}) was called before"),),
    confirm=lambda hits, ctx: False,  # a warning: what the run did wrong, if anything, is not in the log
    fallback=True,
    also=(
        Alternative(
            "library_version_bug",
            "torchmetrics 1.2.x warning falsely for RunningMean / RunningSum, whose inner metric it checks",
            "pip install -U torchmetrics (1.3+ no longer warns for the running wrappers).",
        ),
    ),
    describe=_metric_not_updated,
)


def _no_validation(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    no_step = any("no_validation_step" in h.facts for h in hits)
    what = (
        "a val_dataloader was given but the LightningModule has no validation_step"
        if no_step
        else "the LightningModule has a validation_step but no val_dataloader reached the Trainer"
    )
    return (
        f"Lightning skipped the validation loop: {what} (a warning, the run went on without validating)",
        "Where the run was meant to validate, give the Trainer both halves: a validation_step(self, batch, batch_idx) method on the LightningModule, "
        "and a val_dataloader (trainer.fit(model, train_dataloaders=..., val_dataloaders=...), a "
        "val_dataloader() method, or a LightningDataModule that defines one). A method misnamed (validation_steps, "
        "val_step) or defined outside the class counts as missing. Without the loop no val metric is logged, and a "
        "ModelCheckpoint(monitor='val_loss') or EarlyStopping on it never acts on one; limit_val_batches=0 or "
        "num_sanity_val_steps do not cause this warning. A run meant to train without validation can ignore it.",
    )


VALIDATION_LOOP_SKIPPED = Recogniser(
    kind="validation_loop_skipped",
    title="Lightning's validation loop skipped",
    anchors=(
        "but have no `val_dataloader`. Skipping val loop.",
        "but have no `validation_step`. Skipping val loop.",
    ),
    templates=(
        "lightning:you-defined-validation-step-but-have",
        "lightning:you-passed-in-val-dataloader-but",
    ),
    facts=(R(r"(?P<no_validation_step>but have no `validation_step`)"),),
    confirm=lambda hits, ctx: False,  # a warning: whether validation was wanted is not in the log
    fallback=True,
    describe=_no_validation,
)


def _ran_out(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    at, planned = facts.get("stopped_at_step"), facts.get("planned_steps")
    numbers = f" at step {at} of max_steps={planned}" if at and planned else ""
    return (
        "transformers' Trainer found no batch left in an epoch and stopped training"
        + numbers
        + " (a warning, "
        "the run ended without an error)" + on_ranks(hits),
        "The data ran out before max_steps: with a streamed or IterableDataset the Trainer cannot know its length, "
        "so max_steps decides, and an epoch that yields nothing ends the run. Each process reads only its share "
        "(split_dataset_by_node, or accelerate's dispatch), so the steps the data lasts are samples / "
        "(per_device_train_batch_size x gradient_accumulation_steps x processes): more GPUs, fewer steps. Set "
        "max_steps to at most that, or repeat the stream for more epochs; check that every rank's shard holds samples "
        "(a file-sharded dataset needs at least as many files as ranks x dataloader workers).",
    )


DATA_RAN_OUT = Recogniser(
    kind="data_ran_out_before_max_steps",
    title="training stopped because the data ran out before max_steps",
    anchors=("a single sample in your epoch_iterator, stopping training at step",),
    templates=(
        "transformers:there-seems-not-to-be-single",
        "third_party:transformers-not-a-single-sample-epoch-iterator-old",
    ),
    facts=(
        R(r"stopping training at step (?P<stopped_at_step>\d{1,12})"),
        R(r"set num_steps \((?P<planned_steps>\d{1,12})\)"),
    ),
    confirm=lambda hits, ctx: False,  # a warning: whether the run was meant to go on is not in the log
    fallback=True,
    describe=_ran_out,
)


def _checkpoint_no_grad(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "torch's activation checkpoint warned that none of its inputs requires a gradient: printed while training, "
        "the layers inside a reentrant checkpoint get no gradient at all, so their trainable parameters never "
        "change; printed in a validation loop (torch.no_grad) or over layers meant to stay frozen (a frozen vision "
        "tower), it is harmless (a warning, the run went on)" + on_ranks(hits),
        "Where the layers inside should train, it is usually gradient checkpointing over a frozen embedding (LoRA/PEFT adapters, a frozen backbone): the hidden "
        "states entering the first checkpointed layer need no gradient. Make them need one: "
        "model.enable_input_require_grads() before training (peft's prepare_model_for_kbit_training does it), or "
        "checkpoint without reentrancy: model.gradient_checkpointing_enable(gradient_checkpointing_kwargs="
        "{'use_reentrant': False}), or torch.utils.checkpoint.checkpoint(fn, x, use_reentrant=False). A loss that "
        "stays flat while the run works is what this looks like; under DDP, parameters left without a gradient "
        "also make the next step's reduction wait or fail. If the warning comes only from validation under "
        "torch.no_grad (pytorch/pytorch#85066), or every layer inside the checkpoint is meant to be frozen, it is "
        "harmless.",
    )


CHECKPOINT_INPUTS_NO_GRAD = Recogniser(
    kind="checkpoint_inputs_no_grad",
    title="an activation checkpoint whose inputs need no gradient",
    anchors=("None of the inputs have requires_grad=True. Gradients will be None",),
    templates=("torch_native:checkpoint-none-of-the-inputs-require-grad",),
    confirm=lambda hits, ctx: (
        False
    ),  # a warning: whether the checkpointed layers are meant to train is not in it
    fallback=True,
    describe=_checkpoint_no_grad,
)


def _broadcast_target(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    target, output = facts.get("target_size"), facts.get("output_size")
    sizes = f" (target {target}, output {output})" if target and output else ""
    return (
        "torch warned that a regression loss got a target of another shape than the output"
        + sizes
        + ": the two "
        "are broadcast against each other, so the loss compares every output with every target (a warning, the "
        "run went on, learning the targets' mean)" + on_ranks(hits),
        "Make the shapes equal before the loss: an output of [N, 1] against a target of [N] is the usual case, "
        "fixed by loss_fn(output.squeeze(-1), target) or loss_fn(output, target.view_as(output)) (or "
        "target.unsqueeze(1)); a target read as [N] from a dataset of single values needs the same. A loss that "
        "stops falling early, or predictions that all come out near the mean, is what this looks like.",
    )


LOSS_TARGET_BROADCAST = Recogniser(
    kind="loss_target_broadcast",
    title="a regression loss whose target is broadcast against the output",
    anchors=("This will likely lead to incorrect results due to broadcasting",),
    templates=("torch_native:loss-target-size-broadcast",),
    facts=(
        R(
            r"Using a target size \((?P<target_size>torch\.Size\(\[[\d, ]{0,60}\]\))\) that is different to the "
            r"input size \((?P<output_size>torch\.Size\(\[[\d, ]{0,60}\]\))\)"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: whether the broadcast was meant is not in the log
    fallback=True,
    describe=_broadcast_target,
)


RECOGNISERS = (
    SCHEDULER_BEFORE_OPTIMIZER,
    LOG_INTERVAL_ABOVE_BATCHES,
    METRIC_COMPUTE_BEFORE_UPDATE,
    VALIDATION_LOOP_SKIPPED,
    DATA_RAN_OUT,
    CHECKPOINT_INPUTS_NO_GRAD,
    LOSS_TARGET_BROADCAST,
)
