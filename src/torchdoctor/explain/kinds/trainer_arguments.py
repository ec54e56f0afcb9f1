"""The HF Trainer, accelerate or Lightning refusing the arguments they were started with.

A training framework refusing the arguments it was started with: the HF Trainer and its TrainingArguments
(``transformers/trainer.py``, ``training_args.py``), accelerate's Accelerator and its helpers (``accelerator.py``,
``utils/dataclasses.py``, ``utils/memory.py``, ``utils/modeling.py``), Lightning's Trainer and Fabric
(``trainer/connectors/accelerator_connector.py``, ``checkpoint_connector.py``, ``data_connector.py``,
``loops/``, ``strategies/``), and the Trainer's subclasses checking their own configs (TRL's GRPOTrainer,
sentence-transformers' trainers, TRL's SFTTrainer and DPOTrainer, and where TRL's preference trainers take their
reference model from: one given, a PEFT adapter's base, or log-probabilities computed before training).

Each message names the argument it refuses and what it needs instead, and only that argument prints it: certain
(but for --tf32 and Lightning's FSDP on a CPU accelerator, which a machine whose torch sees no CUDA GPU prints too,
and transformers 4.27-4.37's refusal of a quantized model not marked trainable, which an old bitsandbytes, a model
without adapters and an untrainable quantization method all print: likely, both halves of the fix given).
(The DeepSpeed and FSDP settings these frameworks refuse are ``deepspeed_config_mismatch`` and
``fsdp_config_mismatch``; a missing package is ``dependency_version``.)
"""

from __future__ import annotations

import re

from torchdoctor.explain import printed_versions
from torchdoctor.explain.kinds.refusal_table import describe_refusal, refusal_pattern
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_EVAL_STEPS = (
    "With eval_strategy / save_strategy / logging_strategy 'steps', give the matching --eval_steps / --save_steps / "
    "--logging_steps a positive value (an integer, or a ratio below 1 of the total steps)."
)
_BEST_MODEL = (
    "--load_best_model_at_end saves at every evaluation: use the same --save_strategy and --eval_strategy "
    "(--evaluation_strategy before transformers 4.41), and with "
    "'steps' make --save_steps a multiple of --eval_steps (e.g. both 500), both as absolute steps or both as ratios."
)
_LENGTHLESS = (
    "A dataset without __len__ (an IterableDataset, a streaming dataset) gives no number of steps: pass --max_steps N "
    "(Lightning: Trainer(max_steps=N), limit_*_batches as an int)."
)
_MODEL_OR_INIT = (
    "Give Trainer(...) exactly one of model= (a built model) and model_init= (a function that builds one)."
)
_EVAL_STRATEGY = (
    "This needs evaluations: set --eval_strategy steps (or epoch) and pass eval_dataset= to the Trainer, or choose "
    "another lr_scheduler_type / save_strategy."
)
_TWO_SOURCES = (
    "Lightning takes each of these once: pass it in the strategy object (DDPStrategy(accelerator=..., precision_plugin="
    "..., cluster_environment=..., checkpoint_io=...)) or as the Trainer's own argument / plugins=[...], not both."
)
_CKPT_BEST = (
    "ckpt_path='best' loads the best checkpoint a ModelCheckpoint(monitor=..., save_top_k>=1) saved during fit(): add "
    "one to callbacks, or pass the exact path: trainer.test(model, ckpt_path='checkpoints/epoch=3.ckpt')."
)
_FABRIC_STATE = (
    "Fabric's save/load take the state as a dict that holds the model set up by fabric.setup(): "
    "fabric.save(path, {'model': model, 'optimizer': optimizer}) and fabric.load(path, state) with the same keys; under "
    "DeepSpeed one model per checkpoint."
)
_QUANTIZED_NOT_TRAINABLE = (
    "transformers 4.27-4.37 refuse any quantized model they did not mark trainable when it was loaded. Both are "
    "needed: (1) a bitsandbytes that trains, 0.37.0 or later for 8-bit (0.39.0 for 4-bit): pip install -U "
    "bitsandbytes, then load the model again (from_pretrained sets the mark); (2) trainable adapters on the "
    "frozen quantized weights: model = peft.get_peft_model(peft.prepare_model_for_kbit_training(model), "
    "LoraConfig(...)) before Trainer(...). An AWQ or AQLM model (and a GPTQ one before its training support) is never marked trainable there: "
    "train on a bitsandbytes one, or with transformers 4.38 or later, which check the quantization method itself."
)
_STORAGE_OPTIONS = (
    "This strategy writes its checkpoints itself, without a CheckpointIO plugin: drop storage_options= (and filter=) "
    "from save_checkpoint(), or save with a strategy that uses CheckpointIO (DDP, single device)."
)
_PREPARE_TOGETHER = (
    "Pass the trained model and its optimizer in one call: model, optimizer = accelerator.prepare(model, optimizer), "
    "one model and one optimizer with Transformer Engine / MS-AMP (keep other models out of prepare())."
)
_PARALLELISM = (
    "Give the Accelerator the parallelism it is asked to use: Accelerator(parallelism_config=ParallelismConfig(tp_size="
    "..., dp_shard_size=...)) (or the accelerate config's parallelism section), or drop the call that needs it."
)

# (the text the source prints, the fix)
REFUSALS: tuple[tuple[str, str], ...] = (
    # transformers/trainer.py: what Trainer(...) and train() / evaluate() need
    (
        "Trainer: training requires a train_dataset",
        "Pass train_dataset= to Trainer(...) before trainer.train().",
    ),
    (
        "Trainer: evaluation requires an eval_dataset",
        "Pass eval_dataset= to Trainer(...) (or to trainer.evaluate(eval_dataset=...)), or set --eval_strategy no.",
    ),
    (
        "but you didn't pass an `eval_dataset` to `Trainer`",
        "Pass eval_dataset= to Trainer(...), or set --eval_strategy no.",
    ),
    ("requires either a `model` or `model_init` argument", _MODEL_OR_INIT),
    (
        "Passing both `optimizers` and `optimizer_cls_and_kwargs` arguments is incompatible",
        "Give Trainer(...) one of optimizers=(optimizer, scheduler) and optimizer_cls_and_kwargs=(cls, kwargs).",
    ),
    (
        "Passing a `model_init` is incompatible with providing the `optimizers` argument",
        "model_init rebuilds the model for each trial, so a prebuilt optimizer cannot follow it: drop optimizers= and "
        "choose the optimizer with --optim, or subclass Trainer and override create_optimizer_and_scheduler.",
    ),
    # transformers/examples/pytorch/*/run_*.py (and the scripts copied from them): output_dir holds files but no
    # checkpoint-N folder get_last_checkpoint could resume from
    (
        "already exists and is not empty. Use --overwrite_output_dir to overcome",
        "--output_dir already holds files and no checkpoint-N folder to resume from: choose a new --output_dir (or "
        "empty it), or pass --overwrite_output_dir to write over it; to continue an earlier run, point "
        "--resume_from_checkpoint at its checkpoint-N folder.",
    ),
    ("max_steps has to be specified", _LENGTHLESS),
    ("args.max_steps must be set to a positive value if dataloader does not have a length", _LENGTHLESS),
    (
        "can't be used with `save_only_model` along with `load_best_model_at_end`",
        "Loading the best model at the end from a sharded (DeepSpeed / FSDP) checkpoint needs its full state: drop "
        "--save_only_model, or drop --load_best_model_at_end.",
    ),
    (
        "No columns in the dataset match the model's forward method signature",
        "The Trainer drops dataset columns the model's forward() does not take, and none was left: name the columns "
        "as forward() does (input_ids, attention_mask, labels), tokenize the dataset before the Trainer, or pass "
        "--remove_unused_columns False when a collator builds the inputs.",
    ),
    (
        "Trainer cannot instantiate unsupported optimizer",
        "--optim names an optimizer this transformers does not know: use one of OptimizerNames (adamw_torch, "
        "adamw_torch_fused, adafactor, sgd, ...; check the spelling), or install the package it needs "
        "(bitsandbytes for the 8-bit ones).",
    ),
    (
        "To use hyperparameter search, you need to pass your model through a model_init function",
        "Build the model in a function and pass it as Trainer(model_init=lambda trial: "
        "AutoModelForSequenceClassification.from_pretrained(...)), not model=.",
    ),
    (
        "your `compute_metrics` function must take a `compute_result` boolean argument",
        "With --batch_eval_metrics, define compute_metrics(eval_pred, compute_result: bool) and return the metrics when "
        "compute_result is True (accumulate until then), or drop --batch_eval_metrics.",
    ),
    (
        "`args.metric_for_best_model` must be provided when using 'best' save_strategy",
        "Set --metric_for_best_model (e.g. eval_loss, or a key compute_metrics returns) with --save_strategy best or "
        "--load_best_model_at_end.",
    ),
    (
        "which is not found in the evaluation metrics",
        "--metric_for_best_model must name a metric evaluate() returns: eval_loss, or a key of what compute_metrics "
        "returns, with or without the eval_ prefix (the message lists the available ones).",
    ),
    (
        "The model did not return a loss from the inputs",
        "The batch holds no labels, so the model computed no loss: have the dataset or collator return a 'labels' "
        "column (DataCollatorForLanguageModeling(mlm=False) for causal LM), name it in --label_names if it is "
        "called otherwise, and keep it from being dropped (--remove_unused_columns False for custom names).",
    ),
    (
        "Currently --debug underflow_overflow is not supported under DP",
        "Run one process per GPU (torchrun --nproc_per_node N train.py ...) instead of one process over every GPU "
        "(DataParallel), or drop --debug underflow_overflow.",
    ),
    (
        "Context parallelism is supported only with SDPA attention",
        "Load the model with attn_implementation='sdpa' for context parallelism, or set cp_size to 1.",
    ),
    (
        "Context parallelism only supports causal attention masks",
        "Context parallelism splits causal sequences only: pass no attention_mask (or a causal one), or set cp_size 1.",
    ),
    # transformers/training_args.py: TrainingArguments that do not fit together
    ("requires non-zero --logging_steps", _EVAL_STEPS),
    ("requires either non-zero --eval_steps or --logging_steps", _EVAL_STEPS),
    ("Setting `strategy` as 'steps' requires a positive value for `steps`", _EVAL_STEPS),
    ("--load_best_model_at_end requires the sav", _BEST_MODEL),
    ("requires an eval strategy", _EVAL_STRATEGY),
    (
        "At most one of fp16 and bf16 can be True",
        "Pass one of --fp16 and --bf16 (--bf16 on Ampere or newer GPUs), and one of --fp16_full_eval and "
        "--bf16_full_eval.",
    ),
    (
        "Expected value warmup_steps >= 0",
        "Set --warmup_steps to 0 or more (or use --warmup_ratio for a share of the steps).",
    ),
    (
        "--dataloader_prefetch_factor can only be set when data is loaded in a different process",
        "Set --dataloader_num_workers to 1 or more with --dataloader_prefetch_factor, or drop the prefetch factor.",
    ),
    (
        "must be an integer if bigger than 1",
        "--logging_steps / --eval_steps / --save_steps are a number of steps (an integer) or a ratio below 1 of the "
        "total: write 500, not 500.5.",
    ),
    (
        "--tf32 requires Ampere or a newer GPU arch",
        "TF32 exists on Ampere and newer GPUs (A100, RTX 30xx, H100): drop --tf32 on an older GPU or the CPU.",
    ),
    (
        "Tried passing in a callable to `accelerator_config`",
        "Pass accelerator_config as a dict, a JSON file path or an AcceleratorConfig(...) object, not a function.",
    ),
    # accelerate/accelerator.py: the Accelerator's own arguments and prepare()
    (
        "You can only pass one of `gradient_accumulation_steps` and `gradient_accumulation_plugin`",
        "Give Accelerator(...) one of them: gradient_accumulation_steps=N, or gradient_accumulation_plugin="
        "GradientAccumulationPlugin(num_steps=N, ...).",
    ),
    (
        "You cannot pass in both `dynamo_plugin` and `dynamo_backend`",
        "Give Accelerator(...) one of dynamo_plugin=TorchDynamoPlugin(...) and dynamo_backend='inductor'.",
    ),
    (
        "Unknown mixed_precision mode:",
        "--mixed_precision (or Accelerator(mixed_precision=...), ACCELERATE_MIXED_PRECISION) takes no, fp16, bf16 or "
        "fp8: check the value the message names (a typo, or 'fp32' for no).",
    ),
    (
        "Passing in an FP8 configuration requires setting `mixed_precision='fp8'`",
        "Pass mixed_precision='fp8' (accelerate launch --mixed_precision fp8) with an FP8 recipe kwargs handler, or "
        "drop the FP8 recipe.",
    ),
    (
        "Can only use `downcast_bf16` when using `mixed_precision='bf16'` and on a TPU",
        "Drop downcast_bf16 (it is for TPUs with bf16), or run bf16 on a TPU.",
    ),
    (
        # accelerator.py prints two spaces after "FSDP": the anchor starts after them
        "do not support `clip_grad_value_`. Use `clip_grad_norm_` instead",
        "Clip by norm: accelerator.clip_grad_norm_(model.parameters(), max_norm) (HF Trainer: --max_grad_norm).",
    ),
    (
        "`fsdp_plugin` must be a FullyShardedDataParallelPlugin object",
        "Pass Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin(...)), not a dict or another plugin.",
    ),
    (
        "`deepspeed_plugin` must be a DeepSpeedPlugin object",
        "Pass Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config='ds.json', ...)), not a dict or a path.",
    ),
    (
        "Unknown dynamo backend:",
        "--dynamo_backend takes one of the names the message lists (inductor for torch.compile's default), or no.",
    ),
    (
        "in `kwargs_handlers`",
        "Pass each kind of kwargs handler once in Accelerator(kwargs_handlers=[...]) (one DistributedDataParallelKwargs, "
        "one InitProcessGroupKwargs, ...), each an accelerate.utils KwargsHandler.",
    ),
    (
        "Unsupported kwargs handler passed",
        "Pass accelerate.utils KwargsHandler objects in kwargs_handlers=[...].",
    ),
    (
        "You must pass a model and an optimizer together to `accelerate.prepare()` when using",
        _PREPARE_TOGETHER,
    ),
    ("You can't use multiple models (", _PREPARE_TOGETHER),
    (
        "You can't train a model that has been loaded in 8-bit or 4-bit precision with CPU or disk offload",
        "A quantized model trains only where every layer is on the GPU: load it with device_map={'': LOCAL_RANK} (the "
        "whole model on the rank's GPU) and enough GPU memory, or train a smaller model / use QLoRA on a bigger GPU.",
    ),
    (
        "`device_placement` should be a list with",
        "Give accelerator.prepare(..., device_placement=[...]) one True/False per object passed, in the same order.",
    ),
    ("is not configured. Set `parallelism_config` first", _PARALLELISM),
    (
        "Batch size was passed into `",
        "find_executable_batch_size passes the batch size itself: call the decorated function without it "
        "(inner_training_loop(), not inner_training_loop(32)).",
    ),
    (
        "please pass along an `offload_folder`",
        "The device_map sends part of the model to disk: pass offload_folder='offload' to from_pretrained / "
        "load_checkpoint_and_dispatch, or give it more GPU/CPU memory (max_memory) so nothing goes to disk.",
    ),
    # transformers 4.x modeling_utils.py from_pretrained: the same need, in its own words
    (
        "had weights offloaded to the disk. Please provide an `offload_folder` for them",
        "The device_map sends part of the model to disk: pass offload_folder='offload' to from_pretrained (and "
        "use_safetensors / the model's .safetensors weights, which can be read from disk in place), or give it more "
        "GPU/CPU memory (max_memory) so nothing goes to disk.",
    ),
    # accelerate/utils/modeling.py: a device_map written by hand that leaves parameters without a device (its
    # "Tied parameters are on different devices" is a warning, not mapped)
    (
        "The device_map provided does not give any device for the following parameters",
        "A hand-written device_map must cover every module: add the modules the message lists (or a parent of them) "
        "with a device, or let accelerate compute it (device_map='auto' with max_memory=...).",
    ),
    (
        "If passing a string for `device_map`, please choose 'auto', 'balanced', 'balanced_low_0' or 'sequential'",
        "device_map takes 'auto', 'balanced', 'balanced_low_0', 'sequential' or a dict {module: device}: check the "
        "spelling (a device such as 'cuda:0' goes in a dict: {'': 'cuda:0'}).",
    ),
    # accelerate/launchers.py notebook_launcher: num_processes left None outside a Colab/Kaggle TPU and a Colab
    # machine with fewer than two GPUs (worded "number of GPUs" until 1.x, "number of devices" in 1.15)
    (
        "you would like to use, add `num_processes=...` to your call",
        "notebook_launcher starts one process per device only when told how many: pass the count, "
        "notebook_launcher(training_function, args, num_processes=2) (torch.cuda.device_count() for every GPU of "
        "the machine; 1 to run in the notebook's process). On a Colab or Kaggle TPU it is not needed: there "
        "notebook_launcher spawns one process per TPU core itself.",
    ),
    # lightning: the Trainer's / Fabric's accelerator, strategy, devices and plugins
    (
        "You selected an invalid strategy name",
        "Trainer(strategy=...) takes a registered name (auto, ddp, ddp_spawn, fsdp, deepspeed_stage_2, ...; check the "
        "spelling) or a Strategy object.",
    ),
    (
        # lightning/fabric/strategies/registry.py StrategyRegistry.get and accelerators/registry.py
        # AcceleratorRegistry.get (the same words): a strategy or accelerator name the registry has not registered
        "not found in registry. Available names",
        "Fabric(strategy=...) / Trainer(strategy=...) and accelerator=... take one of the names the error lists "
        "(strategies: ddp, ddp_spawn, fsdp, deepspeed_stage_2, ...; accelerators: cpu, cuda, mps, ...): check the "
        "spelling, and that the package the name needs is installed (deepspeed for deepspeed_*, torch_xla for xla "
        "and tpu), or pass a Strategy / Accelerator object.",
    ),
    (
        "You selected an invalid accelerator name",
        "Trainer(accelerator=...) takes auto, cpu, cuda (gpu), mps or tpu, or an Accelerator object.",
    ),
    (
        "but strategies from the DDP family are not supported on the MPS accelerator",
        "Apple's MPS runs one device: drop strategy='ddp' (strategy='auto'), or set accelerator='cpu' for DDP on CPU.",
    ),
    (
        "`num_nodes` must be a positive integer",
        "Set Trainer(num_nodes=N) to the number of machines, 1 or more.",
    ),
    (
        "value is not a valid input using",
        "Trainer(devices=...) takes a count (devices=2), a list of indices ([0, 1]), 'auto' or -1 (all) of the "
        "accelerator's devices; the machine must have them (CUDA_VISIBLE_DEVICES can hide some).",
    ),
    (
        "requires a GPU accelerator, but received",
        "This strategy runs on CUDA GPUs: Trainer(accelerator='cuda', devices=N, strategy=...), or choose a strategy "
        "for the accelerator you have.",
    ),
    (
        "flags in `plugins`. Expected one value for each type at most",
        "Pass at most one plugin of each type in plugins=[...] (one precision, one checkpoint IO, one cluster "
        "environment).",
    ),
    (
        "Received both `precision=",
        "Give the precision once: Trainer(precision='bf16-mixed') or a precision plugin in plugins=[...], not both.",
    ),
    ("set through both strategy class and", _TWO_SOURCES),
    (
        "parallel_devices set through",
        "The strategy's parallel_devices and the Trainer's accelerator disagree: give the devices through "
        "Trainer(accelerator=..., devices=...) and leave parallel_devices out of the strategy.",
    ),
    (
        "Found invalid type for plugin",
        "plugins=[...] takes Precision, CheckpointIO, ClusterEnvironment or LayerSync objects (strategies go in "
        "strategy=, callbacks in callbacks=).",
    ),
    (
        "You set `Trainer(sync_batchnorm=True)` and provided a",
        "Give batch-norm synchronisation once: Trainer(sync_batchnorm=True) or a LayerSync plugin, not both.",
    ),
    (
        "you are required to override the `configure_model()` hook",
        "ModelParallelStrategy parallelises the model in LightningModule.configure_model(): apply fully_shard / "
        "parallelize_module there (on self.device_mesh).",
    ),
    (
        "To use DeepSpeed you must pass in a DeepSpeed config dict, or a path to a JSON config",
        "Pass DeepSpeedStrategy(config='ds.json') or a dict, or use a named strategy such as "
        "strategy='deepspeed_stage_2' that builds the config.",
    ),
    (
        "does not support `Fabric(..., precision=",
        "Choose one of the precisions the message lists for ModelParallelStrategy (e.g. 'bf16-true', '32-true').",
    ),
    (
        "Bitsandbytes is only supported on CUDA GPUs",
        "Run the bitsandbytes precision plugin on CUDA GPUs, or drop it.",
    ),
    # lightning: checkpoints named by ckpt_path=
    ("found no path for the best weights", _CKPT_BEST),
    ('(ckpt_path="best")` is set but `ModelCheckpoint` is not configured', _CKPT_BEST),
    (
        '(ckpt_path="best")` with `fast_dev_run=True`',
        "fast_dev_run saves no checkpoint: pass the exact path (ckpt_path='...ckpt'), or run without fast_dev_run.",
    ),
    (
        '(ckpt_path="hpc")` is set but no HPC checkpoint was found',
        "No hpc_ckpt_*.ckpt is in the default root dir (SLURM requeue saves them): pass the exact checkpoint path.",
    ),
    # lightning: the loops' arguments
    (
        "`check_val_every_n_epoch` should be an integer",
        "Set Trainer(check_val_every_n_epoch=N) to an int (or None).",
    ),
    (
        "`val_check_interval` should be an integer or a time-based duration",
        "With check_val_every_n_epoch=None give val_check_interval as a number of steps (an int) or a duration.",
    ),
    (
        "`reload_dataloaders_every_n_epochs` should be an int >= 0",
        "Set Trainer(reload_dataloaders_every_n_epochs=N) to 0 (never) or a positive int.",
    ),
    (
        "< 1. Please increase the `limit_",
        "limit_train_batches / limit_val_batches as a fraction leaves no batch of this small dataloader: raise it, or "
        "give an int number of batches (limit_val_batches=1).",
    ),
    ("When using an `IterableDataset`, `Trainer(limit_", _LENGTHLESS),
    (
        "An invalid dataloader was",
        "Return a torch DataLoader (or a list / dict of them, or a CombinedLoader) from the *_dataloader() hook or pass "
        "one to trainer.fit(train_dataloaders=...), not a Dataset or None.",
    ),
    # lightning: Fabric's and the strategies' checkpoint calls
    ("Could not find a DeepSpeed model in the provided checkpoint state", _FABRIC_STATE),
    ("Found multiple DeepSpeed engine modules in the given state", _FABRIC_STATE),
    # Lightning prints "a state with at least  a model instance" (two spaces): the anchor starts after them
    ("a model instance to reload is required", _FABRIC_STATE),
    ("storage_options=...)`", _STORAGE_OPTIONS),
    ("save_checkpoint(..., filter=...)` is not supported", _STORAGE_OPTIONS),
    # transformers/trainer.py: a model without a task head, what model_init returns, the collator, an empty batch
    (
        "cannot be used as is for training: it only computes hidden states",
        "The Trainer needs a model that computes a loss from labels: load the task's class (AutoModelForCausalLM, "
        "AutoModelForSequenceClassification, ...) instead of AutoModel / the bare *Model class.",
    ),
    (
        "model_init should not return None",
        "model_init must build and return the model: end it with return model (a function that only assigns it "
        "returns None).",
    ),
    (
        "model_init should have 0 or 1 argument",
        "Give model_init no argument, or one (the hyperparameter-search trial): def model_init(trial=None): ...",
    ),
    (
        "The `data_collator` should be a simple callable",
        "Pass the collator itself (DataCollatorWithPadding(tokenizer), a function, or an object with __call__), "
        "not an old-style object with collate_batch(): wrap it as data_collator=old.collate_batch.",
    ),
    (
        "The batch received was empty, your model won't be able to train on it",
        "The Trainer dropped every column the model's forward() does not name (remove_unused_columns=True), and "
        "none was left: name the dataset's columns as forward() takes them (input_ids, attention_mask, labels; "
        "dataset.rename_column(...)), tokenize before training, or pass remove_unused_columns=False with a "
        "collator that builds those inputs.",
    ),
    # transformers/trainer_utils.py validate_quantization_for_training: a quantized model trained as it is
    (
        "You cannot perform fine-tuning on purely quantized models",
        "Train adapters on top of the quantized model: model = peft.get_peft_model(prepare_model_for_kbit_training("
        "model), LoraConfig(...)) before passing it to the Trainer (or load the model without quantization_config "
        "to train all of it).",
    ),
    # transformers 4.27-4.37 trainer.py Trainer.__init__: a quantized model transformers did not mark trainable
    # (_is_quantized_training_enabled: bitsandbytes >= 0.37.0 when it was loaded; from 4.37 its quantizer's
    # is_trainable, False for AWQ and AQLM); 4.34-4.37 ask first for PEFT adapters (the message above). Its fix
    # is _quantized_not_trainable's, which names the releases the log prints
    ("The model you want to train is loaded in 8-bit precision", _QUANTIZED_NOT_TRAINABLE),
    (
        "You cannot fine-tune quantized model with `torch.compile()`",
        "Pass the quantized PEFT model to the Trainer uncompiled: drop torch.compile(model) (and --torch_compile).",
    ),
    (
        "but that quantization method do not support training",
        "This quantization method is for inference: fine-tune with a trainable one (bitsandbytes 4-bit/8-bit with "
        "PEFT adapters, or load the model unquantized), and quantize the result afterwards.",
    ),
    # accelerate/accelerator.py save_state with automatic checkpoint naming: the folder of this iteration exists
    (
        "already exists. Please manually override `self.save_iteration`",
        "With ProjectConfiguration(automatic_checkpoint_naming=True) a run that did not resume counts from 0 and "
        "meets the folders of an earlier one: resume first with accelerator.load_state() (it sets the iteration), "
        "or start at the next one (ProjectConfiguration(..., iteration=N+1) / accelerator.project_configuration."
        "iteration = N+1), or use a fresh project_dir.",
    ),
    # lightning/pytorch/strategies/ddp.py: post-localSGD model averaging (DDPStrategy(ddp_comm_state=...))
    (
        "Post-localSGD algorithm is used, but model averaging period is not provided to DDP strategy",
        "With the post-localSGD communication hook, give the strategy its averaging period: DDPStrategy(ddp_comm_state="
        "post_localSGD.PostLocalSGDState(...), ddp_comm_hook=post_localSGD.post_localSGD_hook, "
        "model_averaging_period=4).",
    ),
    (
        "Currently model averaging cannot work with a distributed optimizer of type",
        "Lightning's post-localSGD averaging wraps the optimizer itself: return a plain optimizer (torch.optim.SGD, "
        "AdamW) from configure_optimizers, not a ZeroRedundancyOptimizer, PostLocalSGDOptimizer or "
        "DistributedOptimizer, or drop model_averaging_period.",
    ),
    # lightning/pytorch/trainer/connectors/accelerator_connector.py: Gaudi support moved out of Lightning
    (
        "HPU is currently not supported. Please contact developer@lightning.ai",
        "Lightning no longer ships the Gaudi (HPU) accelerator: pip install lightning-habana and pass its "
        "HPUAccelerator() / HPUParallelStrategy() objects, not accelerator='hpu'.",
    ),
    # lightning/{fabric,pytorch}/strategies/xla.py, single_xla.py, xla_fsdp.py
    (
        "The XLA strategy can only work with the `XLACheckpointIO` plugin",
        "On TPUs leave checkpoint_io / plugins= without a CheckpointIO of your own (the XLA strategies use "
        "XLACheckpointIO), or pass XLACheckpointIO().",
    ),
    (
        "Found a XLAFSDP model in the provided checkpoint state",
        "Pass fabric.load(path, {'model': model}) the model as built, before fabric.setup() wrapped it in XLAFSDP.",
    ),
    (
        "XLAFSDP only supports a single model instance with 'model' as the key",
        "Load one model under the key 'model': fabric.load(path, {'model': model, 'optimizer': optimizer}).",
    ),
    # transformers/trainer.py: SageMaker model parallelism
    (
        "SageMaker Model Parallelism does not support BF16 yet",
        "Under SageMaker model parallelism pass --fp16, not --bf16.",
    ),
    # lightning/fabric/utilities/device_parser.py, fabric/strategies/fsdp.py, model_parallel.py
    (
        "Device ID's (GPU) must be unique",
        "Name each GPU once in devices= (devices=[0, 1], not [0, 0]); for a number of GPUs pass an int (devices=2).",
    ),
    ("Could not find a FSDP model in the provided checkpoint state", _FABRIC_STATE),
    ("Found multiple FSDP models in the given state", _FABRIC_STATE),
    ("Could not find a distributed model in the provided checkpoint state", _FABRIC_STATE),
    ("Found multiple distributed models in the given state", _FABRIC_STATE),
    (
        "Loading a single optimizer object from a checkpoint is not supported yet with",
        "Load the model and its optimizer together: fabric.load(path, {'model': model, 'optimizer': optimizer}) "
        "(the same keys they were saved under), not an optimizer on its own.",
    ),
    # transformers/modeling_utils.py gradient_checkpointing_enable (the Trainer's --gradient_checkpointing calls it)
    (
        "does not support activation checkpointing",
        "This model class has no gradient checkpointing: drop --gradient_checkpointing (TrainingArguments("
        "gradient_checkpointing=False)) and the model.gradient_checkpointing_enable() call; a custom model declares "
        "it with supports_gradient_checkpointing = True and layers that check self.gradient_checkpointing.",
    ),
    (
        "is not compatible with gradient checkpointing",
        "No layer of this model has a gradient_checkpointing attribute to switch: drop --gradient_checkpointing "
        "(and model.gradient_checkpointing_enable()), or give the custom model's layers the attribute (self."
        "gradient_checkpointing = False) and the checkpointed call they make when it is on.",
    ),
    # the Trainer's subclasses checking their own configs: TRL's GRPOTrainer / GRPOConfig (0.15-0.17 in the trainer,
    # the config's __post_init__ since 0.20) and sentence-transformers' trainers (3.x+)
    (
        "must be evenly divisible by the number of generations per prompt",
        "GRPO groups num_generations completions per prompt in each global batch: make num_processes x "
        "per_device_train_batch_size a multiple of num_generations (one of the valid values the message lists), "
        "or change the batch size or the number of processes.",
    ),
    (
        "must be divisible by num_generations",
        "GRPO's generation batch (per_device_train_batch_size x processes x steps_per_generation, or "
        "generation_batch_size) must hold whole groups of num_generations completions: choose num_generations that "
        "divides it, or change the batch size / steps_per_generation (gradient_accumulation_steps by default).",
    ),
    (
        "but you didn't provide an `eval_dataset` or an `evaluator`",
        "Evaluation was asked for with nothing to evaluate: pass eval_dataset= or evaluator= to the "
        "SentenceTransformerTrainer, or set eval_strategy='no' in its training arguments.",
    ),
    (
        "Avoid using these column names, as they are reserved for internal use",
        "sentence-transformers reserves the columns return_loss and dataset_name: rename or drop them "
        "(dataset.rename_column / remove_columns) before training.",
    ),
    # TRL's SFTTrainer / DPOTrainer refusing their configs (trl/trainer/sft_trainer.py, dpo_trainer.py)
    (
        "your model is already instantiated",
        "model_init_kwargs (and quantization_config) only apply when the trainer loads the model from a name: pass "
        "the model id string (model='meta-llama/...') with them, or load the model yourself with those settings "
        "(from_pretrained(..., torch_dtype=..., quantization_config=...)) and drop them from the config.",
    ),
    (
        "This is not compatible with the `packing` argument",
        "DataCollatorForCompletionOnlyLM masks each example's prompt, which packed sequences do not keep apart: set "
        "packing=False (SFTConfig) with it, or keep packing and drop the collator.",
    ),
    (
        "is not found in the vocabulary of the given",
        "SFTConfig's pad_token / eos_token must be a token of this tokenizer: set it to one the tokenizer has "
        "(its chat template's end-of-turn token, e.g. '<|im_end|>', '<|eot_id|>'), leave it unset to use the "
        "tokenizer's own, or add the token (tokenizer.add_special_tokens) and resize the model's embeddings.",
    ),
    (
        "Packing is not supported for vision-language models",
        "Set packing=False in the SFTConfig for a vision-language model (padding_free too).",
    ),
    (
        "Passing a custom data collator is not supported when using padding-free",
        "padding_free=True builds its own collator: drop data_collator= or set padding_free=False.",
    ),
    (
        "but the dataset is not conversational",
        "assistant_only_loss=True needs conversational data (a 'messages' column of role/content turns) and a chat "
        "template that marks the assistant's turns ({% generation %}): convert the dataset, or set "
        "assistant_only_loss=False (completion_only_loss for prompt/completion data).",
    ),
    (
        "must contain either 'messages' for conversational data or 'text' for standard",
        "SFTTrainer reads a 'text' column (or 'messages' for chat data, 'prompt'/'completion' pairs): rename the "
        "dataset's column (dataset.rename_column('content', 'text')) or name it with SFTConfig(dataset_text_field=...); "
        "keep the columns the collator needs (remove_unused_columns=False with a custom one).",
    ),
    (
        "and `ref_model` cannot be the same object",
        "Pass ref_model=None: the trainer builds the frozen reference copy itself (or uses the base model under a "
        "PEFT adapter); a reference of your own must be a separate instance (copy.deepcopy(model) or another "
        "from_pretrained).",
    ),
    # TRL's preference trainers (dpo_trainer.py, kto_trainer.py, bco_trainer.py, ppo_trainer.py) checking where the
    # reference model comes from: one given, a PEFT adapter's base, or log-probabilities computed before training
    (
        "You passed both a ref_model and a peft_config",
        "With a PEFT adapter the reference is the same model with its adapter switched off, so DPOTrainer wants no "
        "second copy: pass ref_model=None and keep peft_config=. To compare against another reference model on "
        "purpose, keep ref_model= and set force_use_ref_model=True (DPOConfig; a DPOTrainer argument in trl 0.8). "
        "A script written for a trl that took both needs this change.",
    ),
    (
        "with Deepspeed ZeRO-3. Please set `precompute_ref_log_probs=False`",
        "Under DeepSpeed ZeRO-3 the reference model's log-probabilities are not computed ahead of training: set "
        "precompute_ref_log_probs=False in the trainer's config (DPOConfig, KTOConfig, BCOConfig), or train with "
        "ZeRO stage 2.",
    ),
    (
        "No reference model and model is not a Peft model",
        "The trainer compares the policy with a reference model and has none: pass ref_model= (a separate copy, "
        "another from_pretrained of the same checkpoint), or train a PEFT adapter (peft_config=: the base model with "
        "the adapter off is the reference), or set precompute_ref_log_probs=True so the reference log-probabilities "
        "are computed once before training.",
    ),
    (
        "cannot use `ref_model=None` with TR-DPO method",
        "TR-DPO (sync_ref_model=True) updates a reference model of its own as it trains: pass ref_model= (a separate "
        "copy of the model), or set sync_ref_model=False.",
    ),
    (
        "with TR-DPO method. Please set `precompute_ref_log_probs=False`",
        "TR-DPO (sync_ref_model=True) changes the reference model as it trains, so its log-probabilities cannot be "
        "computed ahead: set precompute_ref_log_probs=False, or sync_ref_model=False.",
    ),
)

TEMPLATES: tuple[str, ...] = (
    "transformers:trainer-training-requires-train-dataset",
    "transformers:output-directory-exists-not-empty",
    "transformers:trainer-evaluation-requires-an-eval-dataset",
    "transformers:you-have-set-args-eval-strategy",
    "transformers:trainer-requires-either-model-or-model",
    "transformers:trainer-requires-either-model-or-model-2",
    "transformers:passing-both-optimizers-and-optimizer-cls",
    "transformers:passing-model-init-is-incompatible-with",
    "transformers:the-train-dataset-does-not-implement",
    "transformers:args-max-steps-must-be-set",
    "transformers:can-be-used-with-save-only",
    "transformers:no-columns-in-the-dataset-match",
    "transformers:trainer-cannot-instantiate-unsupported-optimizer",
    "transformers:to-use-hyperparameter-search-you-need",
    "transformers:when-using-batch-eval-metrics-your",
    "transformers:args-metric-for-best-model-must",
    "transformers:the-metric-for-best-model-training",
    "transformers:the-metric-for-best-model-training-2",
    "transformers:the-model-did-not-return-loss",
    "transformers:currently-debug-underflow-overflow-is-not",
    "transformers:context-parallelism-is-supported-only-with",
    "transformers:context-parallelism-only-supports-causal-attention",
    "transformers:logging-strategy-requires-non-zero-logging",
    "transformers:evaluation-strategy-requires-either-non-zero",
    "transformers:setting-strategy-as-steps-requires-positive",
    "transformers:load-best-model-at-end-requires",
    "transformers:load-best-model-at-end-requires-2",
    "transformers:load-best-model-at-end-requires-3",
    "transformers:load-best-model-at-end-requires-4",
    "transformers:lr-scheduler-type-reduce-lr-on",
    "transformers:lr-scheduler-type-greedy-requires-an",
    "transformers:at-most-one-of-fp16-and",
    "transformers:at-most-one-of-fp16-and-2",
    "transformers:got-warmup-steps-expected-value-warmup",
    "transformers:dataloader-prefetch-factor-can-only-be",
    "transformers:logging-steps-must-be-an-integer",
    "transformers:eval-steps-must-be-an-integer",
    "transformers:save-steps-must-be-an-integer",
    "transformers:tf32-requires-ampere-or-newer-gpu",
    "transformers:tried-passing-in-callable-to-accelerator",
    "accelerate:you-can-only-pass-one-of",
    "third_party:accelerate-notebook-launcher-num-processes",
    "third_party:accelerate-notebook-launcher-num-processes-devices",
    "accelerate:you-cannot-pass-in-both-dynamo",
    "accelerate:unknown-mixed-precision-mode-choose-between",
    "accelerate:unknown-mixed-precision-mode-choose-between-2",
    "accelerate:passing-in-an-fp8-configuration-requires",
    "accelerate:can-only-use-downcast-bf16-when",
    "accelerate:deepspeed-and-fsdp-do-not-support",
    "accelerate:fsdp-plugin-must-be-fullyshardeddataparallelplugin-object",
    "accelerate:deepspeed-plugin-must-be-deepspeedplugin-object",
    "accelerate:unknown-dynamo-backend-choose-between",
    "accelerate:you-can-only-pass-one-in",
    "accelerate:unsupported-kwargs-handler-passed-must-be",
    "accelerate:you-must-pass-model-and-an",
    "accelerate:you-must-pass-model-and-an-2",
    "accelerate:you-can-use-multiple-models-or",
    "accelerate:you-can-use-multiple-models-or-2",
    "accelerate:you-can-train-model-that-has-3",
    "accelerate:device-placement-should-be-list-with",
    "accelerate:tensor-parallelism-is-not-configured-set",
    "accelerate:data-parallelism-is-not-configured-set",
    "accelerate:shard-based-data-parallelism-is-not",
    "accelerate:batch-size-was-passed-into-as",
    "accelerate:at-least-one-of-the-model",
    "accelerate:if-passing-string-for-device-map",
    "lightning:you-selected-an-invalid-strategy-name",
    "lightning:you-selected-an-invalid-accelerator-name",
    "lightning:not-found-in-registry-available-names",
    "lightning:you-set-strategy-but-strategies-from",
    "lightning:num-nodes-must-be-positive-integer",
    "lightning:trainer-devices-value-is-not-valid",
    "lightning:the-strategy-requires-gpu-accelerator-but",
    "lightning:received-multiple-values-for-flags-in",
    "lightning:received-both-precision-and-plugins-choose",
    "lightning:accelerator-set-through-both-strategy-class",
    "lightning:precision-set-through-both-strategy-class",
    "lightning:checkpoint-io-set-through-both-strategy",
    "lightning:cluster-environment-set-through-both-strategy",
    "lightning:cpu-parallel-devices-set-through-class",
    "lightning:gpu-parallel-devices-set-through-class",
    "lightning:found-invalid-type-for-plugin-expected",
    "lightning:you-set-trainer-sync-batchnorm-true",
    "lightning:when-using-the-you-are-required",
    "lightning:to-use-deepspeed-you-must-pass",
    "lightning:the-modelparallelstrategy-does-not-support-fabric",
    "lightning:bitsandbytes-is-only-supported-on-cuda",
    "lightning:found-no-path-for-the-best",
    "lightning:ckpt-path-best-is-set-but",
    "lightning:ckpt-path-best-is-set-but-2",
    "lightning:you-cannot-execute-ckpt-path-best",
    "lightning:ckpt-path-hpc-is-set-but",
    "lightning:check-val-every-epoch-should-be",
    "lightning:val-check-interval-should-be-an",
    "lightning:reload-dataloaders-every-epochs-should-be",
    "lightning:you-requested-to-check-of-the",
    "lightning:when-using-an-iterabledataset-trainer-limit",
    "lightning:an-invalid-dataloader-was-returned-from",
    "lightning:an-invalid-dataloader-was-passed-to",
    "lightning:an-invalid-dataloader-was-passed-to-2",
    "lightning:could-not-find-deepspeed-model-in",
    "lightning:could-not-find-deepspeed-model-in-2",
    "lightning:found-multiple-deepspeed-engine-modules-in",
    "lightning:found-multiple-deepspeed-engine-modules-in-2",
    "lightning:got-deepspeedstrategy-load-checkpoint-state-but",
    "lightning:got-fsdpstrategy-load-checkpoint-state-but",
    "lightning:got-load-checkpoint-state-but-state",
    "lightning:got-xlafsdpstrategy-load-checkpoint-state-but",
    "lightning:trainer-save-checkpoint-storage-options-with",
    "lightning:fsdpstrategy-save-checkpoint-storage-options-is",
    "lightning:save-checkpoint-storage-options-is-not",
    "lightning:deepspeedstrategy-save-checkpoint-storage-options-is",
    "lightning:deepspeedstrategy-save-checkpoint-filter-is-not",
    "transformers:the-model-you-have-picked-cannot",
    "transformers:model-init-should-not-return-none",
    "transformers:model-init-should-have-or-argument",
    "transformers:the-data-collator-should-be-simple",
    "transformers:the-batch-received-was-empty-your",
    "transformers:you-cannot-perform-fine-tuning-on",
    "third_party:transformers-8bit-model-not-trainable",
    "transformers:you-cannot-fine-tune-quantized-model",
    "transformers:the-model-you-are-trying-to",
    "accelerate:checkpoint-directory-already-exists-please-manually",
    "lightning:device-id-gpu-must-be-unique",
    "lightning:could-not-find-fsdp-model-in",
    "lightning:could-not-find-fsdp-model-in-2",
    "lightning:found-multiple-fsdp-models-in-the",
    "lightning:found-multiple-fsdp-models-in-the-2",
    "lightning:could-not-find-distributed-model-in",
    "lightning:could-not-find-distributed-model-in-2",
    "lightning:found-multiple-distributed-models-in-the",
    "lightning:found-multiple-distributed-models-in-the-2",
    "lightning:loading-single-optimizer-object-from-checkpoint",
    "lightning:loading-single-optimizer-object-from-checkpoint-2",
    "transformers:does-not-support-activation-checkpointing",
    "transformers:is-not-compatible-with-gradient-checkpointing",
    # transformers 4.x modeling_utils.py (offload_folder); accelerate/utils/modeling.py (a hand-written device_map)
    "third_party:transformers-device-map-offload-folder",
    "accelerate:the-device-map-provided-does-not",
    "third_party:trl-grpo-batch-not-divisible-by-generations",
    "third_party:trl-grpo-generation-batch-not-divisible",
    "third_party:sentence-transformers-eval-strategy-without-eval-dataset",
    "third_party:sentence-transformers-reserved-column-names",
    "third_party:trl-model-init-kwargs-model-instantiated",
    "third_party:trl-model-kwargs-model-instantiated-old",
    "third_party:trl-completion-collator-with-packing",
    "third_party:trl-token-not-in-vocabulary",
    "third_party:trl-vlm-packing",
    "third_party:trl-padding-free-custom-collator",
    "third_party:trl-assistant-only-loss-not-conversational",
    "third_party:trl-sft-examples-messages-or-text",
    "third_party:trl-ref-model-same-object",
    "third_party:trl-dpo-ref-model-and-peft-config",
    "third_party:trl-dpo-ref-model-and-peft-config-old",
    "third_party:trl-precompute-ref-log-probs-zero3",
    "third_party:trl-no-reference-model-not-peft",
    "third_party:trl-tr-dpo-ref-model-none",
    "third_party:trl-tr-dpo-precompute-ref-log-probs",
)


# Two refusals that a machine where torch sees no CUDA GPU prints as well as the argument they name: transformers'
# training_args.py raises "--tf32 requires Ampere ..." whenever is_torch_tf32_available() is False, which it is for
# torch.cuda.is_available() False or torch.version.cuda None (a CPU or ROCm build) before it looks at the GPU's
# arch; Lightning's accelerator_connector.py resolves accelerator="auto" to "cpu" (or "mps") when no CUDA GPU is
# visible, and only then _check_strategy_and_fallback refuses FSDP on it. A pre-Ampere GPU the log names confirms
# the tf32 reading; the Lightning one stays likely (the message prints the resolved flag, not the one passed).
_NO_GPU_READINGS = ("tf32_refused", "fsdp_on_cpu")


def _stated_by_the_argument(hits: list[Hit], ctx: Context) -> bool:
    """Certain unless every hit is one of the refusals a machine without a visible CUDA GPU prints too."""
    return not all(
        any(key in h.facts for key in _NO_GPU_READINGS)
        and not ("tf32_refused" in h.facts and "pre_ampere_gpu" in ctx.facts)
        for h in hits
    )


_stated_by_the_argument.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


def _stated_and_not_a_loss_given_labels(hits: list[Hit], ctx: Context) -> bool:
    """`_stated_by_the_argument`, and not only trainer.py's "did not return a loss" where the inputs it lists hold
    'labels': the Trainer's arguments are then not what failed (the labels reached the model and no loss came back:
    a class without a task head, a custom forward(), or a release of the model's or adapter's library whose
    forward drops them, as in the threads that post it after an upgrade), so that reading is only likely; without
    'labels' among the inputs (the dataset or collator gave none, the case real logs showed) it stays certain."""
    return _stated_by_the_argument(hits, ctx) and not all(
        "loss_given_labels" in h.facts or "quantized_not_trainable" in h.facts for h in hits
    )


_stated_and_not_a_loss_given_labels.lowers_only = True  # type: ignore[attr-defined]

# a GPU older than Ampere (compute capability below 8), named by nvidia-smi, torch or the user
PRE_AMPERE = R(
    r"(?P<pre_ampere_gpu>\b(?:Tesla |NVIDIA )?(?:V100|T4|P100|P40|K80|K40|M60|M40)\b|GeForce (?:GTX \d{3,4}|RTX 20\d0)"
    r"|compute capability [3-7]\.\d|capability:? \(?[3-7], ?\d\)?)"
)
CONTEXT = tuple((literal, PRE_AMPERE) for literal in ("V100", "T4", "P100", "K80", "GeForce", "capability"))


_REFUSAL = describe_refusal(REFUSALS, "the training framework refused its arguments", message="refusal")


def _named_dataset_metrics(hits: list[Hit]) -> str:
    """The fix for _determine_best_metric's "not found in the evaluation metrics" when the metric asked for is among
    the available ones under a dataset's name: with eval_dataset a dict, trainer.py evaluates each dataset with
    metric_key_prefix=f"eval_{eval_dataset_name}", so eval_loss is printed as eval_<name>_loss; "" otherwise."""
    asked, available = first(hits, "best_metric", ""), first(hits, "best_metric_available", "")
    suffix = asked.removeprefix("eval_")
    named = [
        key
        for key in re.findall(r"'([^'\n]{1,120})'", available)
        if key.startswith("eval_") and key.endswith(f"_{suffix}") and key != f"eval_{suffix}"
    ]
    if not suffix or not named:
        return ""
    return (
        f"The evaluation metrics carry their dataset's name: with a dict of evaluation datasets the Trainer prefixes "
        f"each one's metrics with eval_<name>, so eval_{suffix} is printed as {named[0]}. Set "
        f"--metric_for_best_model {named[0]}"
        + (f" (one per dataset: {', '.join(named)})" if len(named) > 1 else "")
        + ", or pass a single evaluation dataset."
    )


# Lightning's connectors and registries list what they accept at the end of the refusal: the strategy's examples
# (accelerator_connector.py, fabric/connector.py: "Example choices: auto, ddp, ..." then "Find a complete list ..."),
# the registries' names (strategies/registry.py, accelerators/registry.py: "Available names: ...", the accelerator's
# "Available names are: ..."), the plugin types ("Expected one of: ...") and ModelParallelStrategy's precisions
# ("Choose a different precision among: ..."). The list is quoted whole, wherever the message's quote is cut
ACCEPTED = R(
    r"(?P<accepted_how>Example choices|Available names(?: are)?|Expected one of|Choose a different precision among): "
    r"(?P<accepted>[^\n]{1,2000})"
)
_ACCEPTED_AFTER = re.compile(r" Find a complete list[^\n]*$")  # the examples' pointer to the documentation
_ACCEPTED_LIMIT = 600


def accepted_values(hits: list[Hit]) -> tuple[str, str] | None:
    """(how the message lists them, the values) where a Lightning refusal lists what it accepts; the values
    whole, or cut after the last value that fits (never inside one) when a registry lists more than
    ``_ACCEPTED_LIMIT`` characters of them.

    >>> facts = {"accepted_how": "Available names are", "accepted": "auto, cpu, cuda, gpu, mps, tpu."}
    >>> accepted_values([Hit("trainer_arguments", facts, "", 0)])
    ('Available names are', 'auto, cpu, cuda, gpu, mps, tpu')
    """
    hit = next((h for h in hits if h.facts.get("accepted")), None)
    if hit is None:
        return None
    values = _ACCEPTED_AFTER.sub("", str(hit.facts["accepted"])).rstrip(" \"'`")
    values = values if values.endswith("...") else values.rstrip(".")  # "deepspeed, ...": more than these
    if len(values) > _ACCEPTED_LIMIT:
        values = values[:_ACCEPTED_LIMIT].rsplit(", ", 1)[0] + ", …"
    return (str(hit.facts["accepted_how"]), values) if values else None


def _with_accepted(hits: list[Hit], fix: str) -> str:
    """``fix`` after the values the refusal lists as accepted, quoted whole (`accepted_values`)."""
    found = accepted_values(hits)
    if found is None:
        return fix
    how, values = found
    said = "gives these examples" if how == "Example choices" else "lists what this release accepts"
    return f"The message {said}: {values}{'' if values.endswith(('...', '…')) else '.'}\n{fix}"


def _below(version: str, least: tuple[int, int]) -> bool:
    """Whether the printed release ``version`` is older than ``least`` (major, minor); False when unread."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return found is not None and (int(found[1]), int(found[2])) < least


def _quantized_not_trainable(ctx: Context) -> str:
    """The fix for transformers 4.27-4.37's "The model you want to train is loaded in 8-bit precision": both
    halves (adapters to train, a bitsandbytes that trains), with the releases the log prints and the half they
    point to."""
    shown = {p: printed_versions.shown(ctx.facts, p) for p in ("transformers", "bitsandbytes", "peft")}
    printed = ", ".join(f"{p} {v}" for p, v in shown.items() if v)
    said = f"The log prints {printed}. " if printed else ""
    if _below(shown["bitsandbytes"], (0, 37)):
        said += f"bitsandbytes {shown['bitsandbytes']} predates 8-bit training (0.37.0): upgrade it first. "
    return said + _QUANTIZED_NOT_TRAINABLE


def _refusal_or_model_without_loss(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    """The refusal's row; for trainer.py's compute_loss "did not return a loss", which lists the inputs the model
    received, the model's own reading where a 'labels' input was among them (the labels reached it, no loss came
    back: a class without a task head, or a forward() that does not compute one); for _determine_best_metric's
    metric not found, the metric under a dataset's name where the list holds one."""
    summary, fix = _REFUSAL(hits, ctx)
    if all("quantized_not_trainable" in h.facts for h in hits):
        return (
            "transformers' Trainer refused a quantized model it did not mark trainable (\"The model you want to "
            'train is loaded in 8-bit precision", transformers 4.27-4.37): a bitsandbytes too old to train it, '
            "no adapters to train, or a quantization method these releases do not train" + on_ranks(hits),
            _quantized_not_trainable(ctx),
        )
    fix = _with_accepted(hits, _named_dataset_metrics(hits) or fix)
    inputs = first(hits, "loss_inputs", "")
    if "labels" in inputs.split(","):
        fix = (
            "The model was given labels and still returned no loss: the class has no task head (AutoModel / "
            "a *Model base class) or its forward() does not compute one. Load the task's class "
            "(AutoModelForCausalLM, AutoModelForSequenceClassification, ...), or have a custom forward() return "
            "{'loss': ..., 'logits': ...} (or pass compute_loss_func= / override Trainer.compute_loss)."
        )
    return summary, fix


TRAINER_ARGUMENTS = Recogniser(
    kind="trainer_arguments",
    title="Trainer / Accelerator / Fabric arguments refused",
    anchors=tuple(anchor for anchor, _ in REFUSALS),
    templates=TEMPLATES,
    facts=(
        refusal_pattern(REFUSALS),
        ACCEPTED,
        R(r"(?P<tf32_refused>--tf32 requires Ampere)"),
        R(
            r"did not return a loss from the inputs.{0,400}?the inputs it received are (?P<loss_inputs>[\w,]{1,400})"
        ),
        R(
            r"did not return a loss from the inputs.{0,400}?the inputs it received are (?P<loss_given_labels>(?:\w+,)*labels)\b"
        ),
        R(r"(?P<quantized_not_trainable>The model you want to train is loaded in 8-bit precision)"),
        R(r"(?P<fsdp_on_cpu>requires a GPU accelerator, but received `?accelerator=['\"]?(?:cpu|mps)\b)"),
        # trainer.py _determine_best_metric: the metric asked for and the list of those evaluate() returned
        R(
            r"`?metric_for_best_model`? training argument is set to '(?P<best_metric>[^'\n]{1,120})', which is not "
            r"found in the evaluation metrics\. The available evaluation metrics are: \[(?P<best_metric_available>"
            r"[^\]\n]{0,2000})\]"
        ),
    ),
    # None, the default of strategy and accelerator before Lightning 2.0, is lightning_defaults.py's reading
    reject=R(r"invalid (?:strategy|accelerator) name: `?(?:strategy|accelerator)=None\b"),
    confirm=_stated_and_not_a_loss_given_labels,
    also=(
        Alternative(
            "library_version_bug",
            "a model class, or a release of the library that builds it (transformers, PEFT, a fine-tuning wrapper), "
            "whose forward() was given the labels and returned no loss",
            "pip show transformers peft accelerate: a loss that stopped coming back after an upgrade is that "
            "release's (search its issues for the message; the release before it or the next one); with a custom "
            "model, have forward() compute the loss from the labels it is given.",
            when=("loss_given_labels",),
        ),
        Alternative(
            "dependency_version",
            "a bitsandbytes older than transformers needs to train a quantized model (0.37.0 for 8-bit, 0.39.0 "
            "for 4-bit)",
            "pip show bitsandbytes; pip install -U bitsandbytes, and load the model again.",
            when=("quantized_not_trainable",),
        ),
        Alternative(
            "cuda_unavailable",
            'no CUDA GPU that torch can see (transformers then refuses --tf32 whatever the GPU; accelerator="auto" '
            "picks the CPU)",
            "If the machine has an Ampere or newer GPU, torch does not see it: check nvidia-smi, "
            "CUDA_VISIBLE_DEVICES and python -c 'import torch; print(torch.cuda.is_available(), torch.version.cuda)' "
            "(None: a CPU-only or ROCm build, which has no TF32 switch; install a CUDA build of torch).",
            when=_NO_GPU_READINGS,
        ),
    ),
    describe=_refusal_or_model_without_loss,
)

RECOGNISERS = (TRAINER_ARGUMENTS,)
