"""Lightning refusing what a Trainer or Fabric run handed it: DataLoaders it must rebuild, batches, devices, strategies.

Lightning's own checks, as its sources raise them (``lightning/fabric/utilities/data.py`` and
``lightning/pytorch/utilities/data.py``: re-creating a DataLoader with a distributed sampler, reading a batch's
size, a loader empty on one rank; ``lightning/fabric/utilities/distributed.py``: the sampler wrapper;
``lightning/fabric/utilities/device_parser.py``: ``devices=``; ``lightning/fabric/strategies/*.py``:
``no_backward_sync``, ``all_gather``, saving a full checkpoint, ``ModelParallelStrategy``'s ``parallelize_fn``,
the registries; ``lightning/pytorch/trainer/configuration_validator.py``: the hooks fit, validate, test and predict need,
manual optimization beside the Trainer's clipping or accumulation; ``lightning/pytorch/callbacks``: gradient
accumulation's scheduler, the batch size finder and SWA under a distributed or sharded strategy), Lightning 2.x
(pytorch_lightning 1.x raised most of them as ``MisconfigurationException``). Each
names what it refuses and so its fix. Trainer flags other kinds read (``trainer_arguments``, FSDP's and DeepSpeed's
settings, custom batch samplers) are theirs.

LightningCLI's SaveConfigCallback (``lightning/pytorch/cli.py``, ``setup``) writes the parsed config to
``config.yaml`` in the trainer's log directory when fit starts and, unless told to overwrite, refuses a file already
there: "SaveConfigCallback expected <path> to NOT exist. Aborting to avoid overwriting results of a previous run."
A previous run's file (a logger whose directory is the working directory, WandbLogger's, writes every run's config
to the same ./config.yaml, torchgeo/torchgeo#1621), or, as a user of pytorch_lightning's utilities.cli reported under
DDP, one the same run wrote (Lightning-AI/pytorch-lightning#11158): the message names the way out either way.
"""

from __future__ import annotations

from dataclasses import replace

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_NO_BACKWARD_SYNC = (
    "fabric.no_backward_sync(model) takes the model fabric.setup() returned (wrapped by the strategy): call "
    "model = fabric.setup(model) first and pass that model, not the bare nn.Module; on one device or a strategy "
    "without gradient sync, leave enabled=False or drop the context manager."
)

_REGISTRY = (
    "A strategy or accelerator is registered under a name once: register yours under a new name, or pass "
    "override=True to register(...); the name is a string."
)

# core/hooks.py: the *_dataloader hooks a LightningModule or LightningDataModule leaves undefined raise this (a
# MisconfigurationException; logs of older pytorch_lightning releases show it as a NotImplementedError). Lightning 2.x's
# Trainer calls only the hooks a class overrides (trainer/connectors/data_connector.py, _DataLoaderSource.is_defined),
# so what asked for it is code calling the hook itself: the script's, or a package built on Lightning written for
# another release of it. The log does not say which: likely, both in the fix.
_UNDEFINED_DATALOADER = "_dataloader` must be implemented to be used with the Lightning Trainer"

# trainer/configuration_validator.py: before fit the Trainer checks the LightningModule overrides training_step and
# configure_optimizers (pytorch_lightning 0.x-1.x printed train_dataloader() the same way). The class the message
# means is the one passed to fit; a project written for another release of Lightning may define its loop otherwise:
# the log does not say which, so likely, both in the fix.
_MINIMUM_HOOKS = "method defined. Lightning `Trainer` expects as minimum a"

REFUSALS: tuple[tuple[str, str], ...] = (
    (
        _MINIMUM_HOOKS,
        "The LightningModule passed to trainer.fit does not define the method the message names (training_step, "
        "configure_optimizers; train_dataloader in old pytorch_lightning): the Trainer checks that the class "
        "overrides each before it fits. Define it as a method of that class (its name spelled as Lightning's, "
        "indented inside the class, not a function beside it). Where the project was written for another "
        "Lightning release: pip show pytorch-lightning lightning, and install the release its requirements name.",
    ),
    # configuration_validator.py: trainer.validate / test / predict run on a module without that stage's step
    (
        "()` method defined to run `Trainer.",
        "The script ran a stage (trainer.validate / test / predict) whose step the LightningModule does not define: "
        "define that method (validation_step, test_step, predict_step) in the LightningModule, or remove the "
        "trainer.test(...) / validate(...) call the script makes (often after fit).",
    ),
    (
        "`predict_step` cannot be None to run `Trainer.predict`",
        "Trainer.predict runs the LightningModule's predict_step (which calls forward by default): define "
        "predict_step(self, batch, batch_idx) or forward, and do not set predict_step to None.",
    ),
    (
        "`Trainer.predict` requires `forward` method to run",
        "Trainer.predict runs the LightningModule's predict_step, which calls forward by default: define forward, "
        "or predict_step(self, batch, batch_idx).",
    ),
    # configuration_validator.py (and callbacks/gradient_accumulation_scheduler.py): with automatic_optimization off
    # the Trainer neither clips nor accumulates gradients
    (
        "is not supported for manual optimization. Remove `Trainer(",
        "Under manual optimization (self.automatic_optimization = False) the Trainer does not clip or accumulate "
        "gradients: remove the Trainer flag the message names (gradient_clip_val, accumulate_grad_batches) and do "
        "it in training_step (self.clip_gradients(opt, gradient_clip_val=...) before opt.step(); step the optimizer "
        "every N batches yourself), or return the loss and let Lightning optimize (automatic optimization).",
    ),
    (
        "and the `GradientAccumulationScheduler` is not supported for",
        "Under manual optimization (self.automatic_optimization = False) the Trainer does not accumulate gradients: "
        "remove the GradientAccumulationScheduler callback and step the optimizer every N batches in training_step, "
        "or use automatic optimization.",
    ),
    (
        "and are using the `GradientAccumulationScheduler` callback",
        "Set gradient accumulation in one place: Trainer(accumulate_grad_batches=N) or the "
        "GradientAccumulationScheduler callback, not both.",
    ),
    (
        "configure_sharded_model` are overridden",
        "configure_sharded_model is the deprecated name of configure_model: keep configure_model and delete "
        "configure_sharded_model from the LightningModule.",
    ),
    # callbacks/batch_size_finder.py and stochastic_weight_avg.py: callbacks a distributed run cannot take
    (
        "The Batch size finder is not supported with distributed strategies",
        "The batch size finder (BatchSizeFinder, Tuner.scale_batch_size) runs in one process: find the batch size "
        "in a run on one device (Trainer(devices=1)), then set it for the distributed run and drop the callback "
        "there.",
    ),
    (
        "SWA does not currently support sharded models",
        "StochasticWeightAveraging cannot run under FSDP or DeepSpeed (a sharded model): remove the callback, or "
        "train with strategy='ddp'.",
    ),
    (
        _UNDEFINED_DATALOADER,
        "Something asked the LightningModule or LightningDataModule for a data loader of the stage the message "
        "names, and the class does not define that hook. The Trainer (Lightning 2.x) asks only for the hooks a "
        "class overrides, so the caller is code that calls it itself: the script's (model.val_dataloader(), "
        "datamodule.test_dataloader()): define the hook (return a DataLoader) or pass the loader to the Trainer "
        "call (trainer.validate(model, dataloaders=...)); or a package built on Lightning (its frame in the "
        "traceback) written for another pytorch-lightning release: pip show <package> pytorch-lightning, and "
        "install the pair its requirements name.",
    ),
    # data.py: re-creating a DataLoader with a DistributedSampler (and the batch size, the loader's length)
    (
        "Trying to inject custom `Sampler` into the",
        "Under a distributed strategy Lightning re-creates each DataLoader with a DistributedSampler, calling the "
        "DataLoader subclass with its __init__ arguments read back from the instance: store each __init__ argument "
        "the message lists as an attribute of the same name (self.<name> = <name>) in your subclass, or create the "
        "DataLoader inside a *_dataloader hook of the LightningModule / LightningDataModule, or set "
        "Trainer(use_distributed_sampler=False) and give it a DistributedSampler yourself.",
    ),
    (
        "Trying to inject parameters into the",
        "Lightning re-creates the DataLoader subclass with the arguments DataLoader takes (sampler, batch_sampler, "
        "shuffle ...): add the missing arguments the message lists to the subclass's __init__ (or accept **kwargs "
        "and pass them to super().__init__), or set Trainer(use_distributed_sampler=False).",
    ),
    (
        "needs to subclass `torch.utils.data.DataLoader`",
        "Lightning can only add a distributed sampler to a torch.utils.data.DataLoader: return one from the "
        "*_dataloader hook (wrap your iterable in DataLoader(dataset, batch_size=...)), or set "
        "Trainer(use_distributed_sampler=False) when the loader already splits the data by rank.",
    ),
    (
        "You seem to have configured a sampler in your DataLoader which does not provide",
        "Under a distributed strategy Lightning wraps the DataLoader's sampler so each rank reads its own part, "
        "which needs the sampler's __len__: give your sampler a finite __len__, remove it from the DataLoader, or "
        "set Trainer(use_distributed_sampler=False) and split the data by rank yourself (a DistributedSampler, or "
        "rank-aware iteration).",
    ),
    (
        "within local rank has zero length.",
        "One rank's DataLoader has no batch (its share of a small dataset, or drop_last=True with fewer samples than "
        "batch_size x world size): use a dataset of at least devices x num_nodes x batch_size samples (or "
        "drop_last=False), check that every rank sees the data files, or set "
        "Trainer(allow_zero_length_dataloader_with_multiple_devices=True) when empty ranks are expected.",
    ),
    (
        "We could not infer the batch_size from the batch.",
        "self.log(...) needs the batch size to average over the epoch and could not find a tensor in the batch: pass "
        "it, self.log(name, value, batch_size=len(batch['input_ids'])), or make the batch a tensor, a tuple or a "
        "dict of tensors.",
    ),
    (
        "is not a shared hook within `LightningModule` and `LightningDataModule`.",
        "The hook name is not one Lightning shares between a LightningModule and a LightningDataModule: use one of "
        "the valid hooks the message lists (train_dataloader, val_dataloader, test_dataloader, predict_dataloader, "
        "transfer_batch_to_device, ...), spelt as listed.",
    ),
    # trainer/connectors/callback_connector.py
    (
        "Trainer was configured with `enable_checkpointing=False` but found `ModelCheckpoint` in callbacks list.",
        "Trainer(enable_checkpointing=False) turns checkpointing off while callbacks= holds a ModelCheckpoint: keep "
        "the callback and drop enable_checkpointing=False, or remove the ModelCheckpoint to train without saving.",
    ),
    (
        "Trainer was configured with `enable_progress_bar=False` but found",
        "Trainer(enable_progress_bar=False) turns the bar off while callbacks= holds a progress bar (TQDMProgressBar, "
        "RichProgressBar): remove one of the two.",
    ),
    (
        "You added multiple progress bar callbacks to the Trainer, but currently only one progress bar is supported.",
        "Keep one progress bar callback in Trainer(callbacks=[...]) (TQDMProgressBar or RichProgressBar).",
    ),
    (
        "Found more than one stateful callback of type",
        "Two callbacks of one type keep their state under the same key in the checkpoint (two ModelCheckpoint or "
        "EarlyStopping with the same monitor and mode): make them differ (another monitor=, mode=, every_n_epochs= "
        "or filename= gives another state_key), or keep one.",
    ),
    # device_parser.py
    (
        "Device IDs (GPU/TPU) must be an int, a string, a sequence of ints, but you passed",
        "Trainer / Fabric devices= takes an int (how many: devices=2), a string ('2', '0,1', 'auto', '-1') or a list "
        "of ints ([0, 1]): not a torch.device, a float or a list of strings.",
    ),
    (
        "GPUs should be a non-empty list",
        "devices= as a list names at least one GPU index: devices=[0] (or devices=1).",
    ),
    (
        "GPUs should be a list",
        "devices= given as GPU indexes is a list of ints: devices=[0, 1], or an int for how many GPUs.",
    ),
    # distributed.py
    (
        "`num_processes` should be >= 1, got",
        "The number of processes Lightning computed from devices= x num_nodes is below 1: give devices= and "
        "num_nodes= positive values (devices='auto' on a machine the accelerator finds).",
    ),
    (
        "`local_world_size` should be >= 1, got",
        "The number of processes per machine is below 1: set devices= (or LOCAL_WORLD_SIZE under a launcher) to a "
        "positive value.",
    ),
    # strategies
    ("Blocking backward sync is only possible if the module passed to", _NO_BACKWARD_SYNC),
    (
        "all_gather` is only implemented for tensors.",
        "The XLA strategies gather tensors only: convert the value to a tensor before self.all_gather / "
        "fabric.all_gather (torch.tensor(value, device=self.device)).",
    ),
    (
        "The checkpoint path exists and is a directory:",
        "A full (single-file) checkpoint is written to a file path, and this path is a folder (an earlier sharded "
        "save, or a folder of that name): save to a file name (e.g. 'last.ckpt') or remove the folder; or save "
        "sharded (state_dict_type='sharded') into the folder.",
    ),
    (
        "The checkpoint directory already exists and is not empty:",
        "The XLA FSDP strategy writes its shards into a new folder: save to a path that does not exist yet, or "
        "remove the old folder first.",
    ),
    (
        "Unknown state_dict_type:",
        "FSDPStrategy(state_dict_type=...) takes 'full' (one file) or 'sharded' (a folder of shards): spell one "
        "of them.",
    ),
    (
        "The `parallelize_fn` must return a `nn.Module` instance, but got:",
        "ModelParallelStrategy(parallelize_fn=...) calls your function with the model and the device mesh: end it "
        "with return model (after parallelize_module / fully_shard), not None.",
    ),
    (
        "You cannot set both `auto_wrapper_callable` and `activation_checkpointing_policy`.",
        "XLAFSDPStrategy takes one way to checkpoint activations: activation_checkpointing_policy={Block} or your "
        "own auto_wrapper_callable, not both.",
    ),
    (
        "`activation_checkpointing_policy` must be a set, found",
        "activation_checkpointing_policy takes a set of layer classes: activation_checkpointing_policy={Block}.",
    ),
    (
        "does not support setting a `CheckpointIO` plugin.",
        "Fabric's FSDP and ModelParallel strategies write their checkpoints themselves: remove the CheckpointIO "
        "plugin from plugins=[...] with these strategies (or use the DDP strategy to keep it).",
    ),
    (
        "The `device_mesh` argument is only supported in torch >= 2.2.",
        "FSDPStrategy(device_mesh=...) needs torch 2.2 or newer: upgrade torch (pip install -U torch), or drop "
        "device_mesh= (sharding_strategy='HYBRID_SHARD' without a mesh).",
    ),
    (
        "only supports `sum`, `mean`, `avg` for the reduce operation, got:",
        "The XLA strategies reduce with 'sum', 'mean' or 'avg' only: pass one of them as reduce_op (or "
        "ReduceOp.SUM), and compute a max / min another way (all_gather then max).",
    ),
    (
        "Could not find a XLAFSDP model in the provided checkpoint state.",
        "Put the model set up by fabric in the state: fabric.save(path, {'model': model, 'optimizer': optimizer}) "
        "(and the same dict to fabric.load).",
    ),
    (
        "Found multiple XLAFSDP modules in the given state.",
        "The XLA FSDP strategy saves one model per checkpoint: save each model in a checkpoint of its own.",
    ),
    ("is already present in the registry. HINT: Use `override=True`.", _REGISTRY),
    ("`name` must be a str, found", _REGISTRY),
    (
        "self.model must be set before self.model.to()",
        "A strategy moved the model before it was connected: call trainer.fit(model) (or fabric.setup(model)) "
        "instead of calling the strategy's model_to_device yourself.",
    ),
    (
        "Accessing the device mesh before processes have initialized is not allowed.",
        "ModelParallelStrategy's device_mesh exists once the processes started: read self.device_mesh inside "
        "configure_model or the training hooks, not in the LightningModule's __init__.",
    ),
    (
        "Accessing the XLA device before processes have spawned is not allowed.",
        "The XLA strategy's root device exists once its processes spawned: read it inside the training hooks (or "
        "after fabric.launch()), not before fit / launch.",
    ),
    (
        "does not support running on a single device with the PjRT runtime.",
        "On a TPU with PjRT use all its devices (devices='auto') or SingleDeviceXLAStrategy for one.",
    ),
    (
        "The optimizer does not seem to reference any XLAFSDP parameters.",
        "With the XLA FSDP strategy create the optimizer after the model is set up (in configure_optimizers, or "
        "fabric.setup_module(model) before building the optimizer from model.parameters()).",
    ),
    (
        "XLA's FSDP strategy does not support to clip gradients by value.",
        "Clip by norm with the XLA FSDP strategy: Trainer(gradient_clip_algorithm='norm').",
    ),
    # lightning/pytorch/core/module.py: what LightningModule.log / log_dict, manual_backward and clip_gradients
    # refuse
    (
        "but the loop's result collection is not registered yet",
        "self.log() works in the fit / validate / test hooks, not in predict_step or the on_predict_* hooks: return "
        "the values from predict_step (or write them in a callback), and drop self.log there.",
    ),
    (
        "You are trying to `self.log()` but it is not managed by the `Trainer` control flow",
        "self.log() was called outside a hook the Trainer runs (from __init__, setup, configure_optimizers, a "
        "method called by hand, or a module used without trainer.fit): log from training_step / validation_step / "
        "on_*_epoch_end, or write to the logger itself (self.logger.log_metrics({...})) elsewhere.",
    ),
    (
        "Could not find the `LightningModule` attribute for the `torchmetrics.Metric` logged",
        "self.log(name, metric) with a torchmetrics Metric needs the metric as an attribute of the LightningModule: "
        "create it in __init__ (self.val_acc = Accuracy(...)); for metrics kept in a dict or list use nn.ModuleDict "
        "/ MetricCollection and pass self.log(name, metric, metric_attribute='attribute_name'), or log the value "
        "with self.log(name, metric.compute()).",
    ),
    (
        "was called, but the tensor must have a single element",
        "self.log() takes one number: reduce the tensor (value.mean(), value.sum()) or log each element under its "
        "own name with self.log_dict({f'name_{i}': v for i, v in enumerate(value)}).",
    ),
    (
        "` values cannot be logged",
        "self.log() / log_dict() take a number, a one-element tensor or a torchmetrics Metric: convert the value "
        "(float(x), torch.tensor(x)); a dict of them goes to self.log_dict(...), a None comes from a step or metric "
        "that returned nothing, and text, lists or images go to the logger itself (self.logger.experiment).",
    ),
    (
        "was called, but nested dictionaries cannot be logged",
        "Flatten the dictionary to one level of keys: self.log_dict({'val/acc': acc, 'val/loss': loss}).",
    ),
    (
        "but it should not contain information about `dataloader_idx` when `add_dataloader_idx=True`",
        "Drop dataloader_idx from the logged name (Lightning appends /dataloader_idx_N itself), or pass "
        "self.log(..., add_dataloader_idx=False) and name each loader's value yourself.",
    ),
    (
        "`self.log(..., batch_size=...)` should be provided",
        "With training_step(self, dataloader_iter) Lightning sees no batch: pass self.log(name, value, "
        "batch_size=N).",
    ),
    # lightning/pytorch/trainer/connectors/logger_connector: where self.log may be called (fx_validator.py, each
    # hook's allowed on_step / on_epoch) and with what (result.py)
    (
        "You can't `self.log()` inside `",
        "The hook the message names does not take self.log() (configure_optimizers, setup, on_fit_start, "
        "on_train_start, the *_dataloader hooks, ...: no step or epoch to file the value under): log it from "
        "training_step / validation_step / test_step or an on_*_epoch_end hook, or write it to the logger itself "
        "there: self.logger.log_metrics({'name': value}) (or self.logger.experiment).",
    ),
    (
        "You can't `self.log(",
        "That hook takes only the on_step / on_epoch values the message lists: an on_*_epoch_end or "
        "on_*_epoch_start hook runs once per epoch, so on_step=True has no step there; leave on_step / on_epoch out "
        "(each hook has its default), or log the per-step value from training_step instead.",
    ),
    (
        "` with different arguments. This is not allowed",
        "One hook logged the same name twice with different arguments (on_step, on_epoch, prog_bar, reduce_fx, "
        "sync_dist, ...): Lightning keeps one running value per name and hook, so give both calls the same "
        "arguments, or log the second value under a name of its own.",
    ),
    (
        "`self.log(on_step=False, on_epoch=False)` is not useful.",
        "With on_step=False and on_epoch=False the value is never written: set one of them to True (on_epoch=True "
        "for an epoch average, on_step=True for each step's value), or leave both out for the hook's default.",
    ),
    (
        "Only `self.log(..., reduce_fx={min,max,mean,sum})` are supported.",
        "self.log(..., reduce_fx=...) takes 'mean' (the default), 'sum', 'min' or 'max' (or torch.mean, torch.sum, "
        "torch.min, torch.max): for another reduction (a median, a weighted mean), log a torchmetrics Metric that "
        "computes it, or reduce the values yourself in on_*_epoch_end and log the result.",
    ),
    (
        "The `.compute()` return of the metric logged as",
        "A torchmetrics Metric given to self.log must compute one tensor; this one computes something else (a dict, "
        "a tuple, a list: a MetricCollection, a metric with several outputs): log it with self.log_dict(metric) "
        "(a MetricCollection), or self.log_dict(metric.compute()) at the epoch's end, or log each output under its "
        "own name.",
    ),
    (
        "please disable automatic optimization: set model property `automatic_optimization` as False",
        "manual_backward() is for manual optimization: set self.automatic_optimization = False in __init__ and step "
        "the optimizers yourself (opt = self.optimizers(); opt.zero_grad(); self.manual_backward(loss); opt.step()), "
        "or return the loss from training_step and let Lightning call backward.",
    ),
    (
        "and have passed `clip_gradients(gradient_clip_",
        "Set gradient clipping in one place: Trainer(gradient_clip_val=..., gradient_clip_algorithm=...), or the "
        "values passed to self.clip_gradients(...) in configure_gradient_clipping, not both.",
    ),
    (
        "but this attribute is not available when using Fabric with a LightningModule",
        "Under Fabric a LightningModule has no Trainer: read what the hook needs from self.fabric or pass it in, "
        "not self.trainer.<attribute> (or run the module with the Trainer instead).",
    ),
    (
        "`gradient_clip_val` should be an int or a float",
        "Pass self.clip_gradients(optimizer, gradient_clip_val=1.0) a number (None to skip clipping), not a "
        "tensor or a string.",
    ),
    (
        "is not attached to a `Trainer`.",
        "The LightningModule reaches its Trainer (self.trainer, self.log, self.current_epoch) only while trainer.fit "
        "/ validate / test / predict runs it: call that code from a hook, or pass the module to the Trainer first "
        "(inference outside a Trainer: call model(x) / forward, not the *_step methods).",
    ),
)

LIGHTNING_CALL_REFUSED = refusal_recogniser(
    "lightning_call_refused",
    "Lightning refused what the Trainer or Fabric run handed it",
    REFUSALS,
    templates=(
        # lightning/pytorch/trainer/configuration_validator.py: the hooks a stage needs, manual optimization
        "lightning:no-training-step-method-defined-lightning",
        "lightning:no-configure-optimizers-method-defined-lightning",
        "lightning:no-method-defined-to-run-trainer",
        "lightning:predict-step-cannot-be-none-to",
        "lightning:trainer-predict-requires-forward-method-to",
        "lightning:automatic-gradient-clipping-is-not-supported",
        "lightning:automatic-gradient-accumulation-is-not-supported",
        "lightning:both-configure-model-and-configure-sharded",
        # lightning/pytorch/callbacks: gradient accumulation's scheduler, the batch size finder, SWA
        "lightning:automatic-gradient-accumulation-and-the-gradientaccumulationscheduler",
        "lightning:you-have-set-accumulate-grad-batches",
        "lightning:the-batch-size-finder-is-not",
        "lightning:swa-does-not-currently-support-sharded",
        # lightning/pytorch/core/module.py: self.log / log_dict, manual_backward, clip_gradients, self.trainer
        "lightning:could-not-find-the-lightningmodule-attribute",
        "lightning:could-not-find-the-lightningmodule-attribute-2",
        "lightning:is-not-attached-to-trainer",
        "lightning:self-log-dict-was-called-but",
        "lightning:self-log-was-called-but-nested",
        "lightning:self-log-was-called-but-the",
        "lightning:self-log-was-called-but-values",
        "lightning:to-use-please-disable-automatic-optimization",
        # lightning/pytorch/trainer/connectors/logger_connector: self.log in a hook that does not take it, with what
        # that hook does not take, or with what no hook does
        "lightning:you-can-self-log-inside-hint",
        "lightning:you-can-self-log-inside-must-be",
        "lightning:you-called-self-log-twice-in",
        "lightning:self-log-on-step-false-on",
        "lightning:only-self-log-reduce-fx-are",
        "lightning:the-compute-return-of-the-metric",
        "lightning:with-def-training-step-self-dataloader",
        "lightning:you-are-trying-to-self-log-3",
        "lightning:you-are-trying-to-self-log-4",
        "lightning:you-called-self-log-with-the",
        "lightning:you-have-set-trainer-gradient-clip",
        "lightning:you-have-set-trainer-gradient-clip-2",
        "lightning:gradient-clip-val-should-be-an",
        "lightning:your-lightningmodule-code-tried-to-access",
        "lightning:train-dataloader-must-be-implemented-to",
        "lightning:test-dataloader-must-be-implemented-to",
        "lightning:val-dataloader-must-be-implemented-to",
        "lightning:predict-dataloader-must-be-implemented-to",
        "lightning:trying-to-inject-custom-sampler-into",
        "lightning:trying-to-inject-parameters-into-the",
        "lightning:the-dataloader-needs-to-subclass-torch",
        "lightning:you-seem-to-have-configured-sampler",
        "lightning:you-seem-to-have-configured-sampler-2",
        "lightning:within-local-rank-has-zero-length",
        "lightning:we-could-not-infer-the-batch",
        "lightning:is-not-shared-hook-within-lightningmodule",
        "lightning:trainer-was-configured-with-enable-checkpointing",
        "lightning:trainer-was-configured-with-enable-progress",
        "lightning:you-added-multiple-progress-bar-callbacks",
        "lightning:found-more-than-one-stateful-callback",
        "lightning:device-ids-gpu-tpu-must-be",
        "lightning:gpus-should-be-non-empty-list",
        "lightning:gpus-should-be-list",
        "lightning:num-processes-should-be-got",
        "lightning:local-world-size-should-be-got",
        "lightning:blocking-backward-sync-is-only-possible",
        "lightning:blocking-backward-sync-is-only-possible-2",
        "lightning:blocking-backward-sync-is-only-possible-3",
        "lightning:all-gather-is-only-implemented-for",
        "lightning:the-checkpoint-path-exists-and-is",
        "lightning:the-checkpoint-directory-already-exists-and",
        "lightning:unknown-state-dict-type",
        "lightning:the-parallelize-fn-must-return-nn",
        "lightning:you-cannot-set-both-auto-wrapper",
        "lightning:activation-checkpointing-policy-must-be-set",
        "lightning:the-does-not-support-setting-checkpointio",
        "lightning:the-device-mesh-argument-is-only",
        "lightning:currently-the-xlastrategy-only-supports-sum",
        "lightning:currently-the-xlafsdpstrategy-only-supports-sum",
        "lightning:could-not-find-xlafsdp-model-in",
        "lightning:could-not-find-xlafsdp-model-in-2",
        "lightning:found-multiple-xlafsdp-modules-in-the",
        "lightning:found-multiple-xlafsdp-modules-in-the-2",
        "lightning:is-already-present-in-the-registry",
        "lightning:name-must-be-str-found",
        "lightning:self-model-must-be-set-before",
        "lightning:accessing-the-device-mesh-before-processes",
        "lightning:accessing-the-xla-device-before-processes",
        "lightning:the-xlastrategy-does-not-support-running",
        "lightning:the-does-not-support-running-on",
        "lightning:the-optimizer-does-not-seem-to-3",
        "lightning:xla-fsdp-strategy-does-not-support",
    ),
    several=(_UNDEFINED_DATALOADER, _MINIMUM_HOOKS),
)
# lightning/pytorch/core/module.py __to_tensor: "`self.log({name}, {value})` was called, but the tensor must have a
# single element. You can try doing `self.log({name}, {value}.mean())`": the value is the tensor's repr, which
# wraps over lines (the anchored line may be the repr's last), so the name is read from the suggestion's half
_LOGGED_NAME = Pattern(
    r"must have a single element\. You can try doing `self\.log\((?P<logged_name>[^,`\n]{1,100}), "
)
_REFUSED = LIGHTNING_CALL_REFUSED.describe


def _refused(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = first(hits, "logged_name", "")
    if not name:
        return _REFUSED(hits, ctx)
    return (
        f"self.log('{name}', value) was given a tensor of several elements: Lightning logs one number per name"
        + on_ranks(hits),
        f"Reduce the tensor to one number before logging it: self.log('{name}', value.mean()) (or .sum(), keeping "
        "sync_dist=True if it was there: the ranks' numbers are then averaged), or log each element under its own "
        f"name: self.log_dict({{f'{name}_{{i}}': v for i, v in enumerate(value)}}).",
    )


LIGHTNING_CALL_REFUSED = replace(
    LIGHTNING_CALL_REFUSED, facts=(*LIGHTNING_CALL_REFUSED.facts, _LOGGED_NAME), describe=_refused
)


def _saved_config(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = first(hits, "saved_config_path", "config.yaml")
    return (
        f"LightningCLI's SaveConfigCallback refused to overwrite {path}: a config saved there before (by a previous "
        "run, or by another process of this one) is kept rather than replaced" + on_ranks(hits),
        "LightningCLI saves the run's config to config.yaml in the trainer's log directory and will not overwrite "
        "one: delete the old file or give the run its own log directory (a new version, experiment name or "
        "default_root_dir), or let it replace the file with LightningCLI(save_config_kwargs={'overwrite': True}) "
        "(save_config_overwrite=True before Lightning 1.9), or save none with "
        "LightningCLI(save_config_callback=None). A logger whose save_dir is the working directory (WandbLogger's "
        "default) makes every run write the same ./config.yaml; under DDP with pytorch_lightning's old "
        "utilities.cli, save_config_overwrite=True let the run start.",
    )


SAVED_CONFIG_EXISTS = Recogniser(
    # lightning/pytorch/cli.py SaveConfigCallback.setup: raise RuntimeError(f"{self.__class__.__name__} expected
    # {config_path} to NOT exist. Aborting to avoid overwriting results of a previous run. ...")
    kind="saved_config_exists",
    title="LightningCLI refusing to overwrite its saved config",
    templates=("lightning:expected-to-not-exist-aborting-to",),
    anchors=("to NOT exist. Aborting to avoid overwriting results of a previous run",),
    match=R(r"expected (?P<saved_config_path>\S{1,300}) to NOT exist\. Aborting"),
    describe=_saved_config,
)

RECOGNISERS = (LIGHTNING_CALL_REFUSED, SAVED_CONFIG_EXISTS)
