"""accelerate refusing a call of its API on what the script handed it.

accelerate's own checks, as its sources raise them (``accelerate/accelerator.py``: ``prepare``, ``save_model``,
``get_tracker``, ``save_state`` / ``load_state`` with custom objects, the process decorators, LOMO's backward;
``accelerate/utils/modeling.py``: ``convert_file_size_to_int``, ``infer_auto_device_map`` / ``dispatch_model``'s
device names and tied weights; ``accelerate/utils/operations.py``: ``find_batch_size``, ``concatenate``;
``accelerate/utils/memory.py``: ``find_executable_batch_size``; ``accelerate/utils/random.py``,
``accelerate/utils/tqdm.py``, ``accelerate/utils/dataclasses.py``' quantization and FP8 settings), accelerate
0.2x-1.x. Each names the argument it refuses and so its fix; the ones several causes print (a batch size search
that reached zero) stay likely, their fix naming each cause. DeepSpeed's and FSDP's settings are other kinds.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser
from torchdoctor.explain.recognisers import Alternative, Pattern

FAMILY = "a library refusing its settings"

_BNB = (
    "accelerate's BnbQuantizationConfig (and transformers' BitsAndBytesConfig) takes load_in_8bit=True or "
    "load_in_4bit=True (exactly one), llm_int8_threshold as a float for 8-bit only, bnb_4bit_quant_type 'nf4' or "
    "'fp4', bnb_4bit_compute_dtype / torch_dtype as 'fp32', 'fp16', 'bf16' or a torch.dtype, skip_modules and "
    "keep_in_fp32_modules as lists of module names: correct the field the message names."
)

_SEEDS = (
    "accelerate was asked to synchronise the random state of a device this machine has not: leave "
    "rng_types out of Accelerator(...) / prepare_data_loader (accelerate picks the ones the machine has), or list "
    "only 'torch', 'cuda' (or the machine's accelerator) and 'generator'; for 'generator', pass the DataLoader a "
    "torch.Generator (DataLoader(..., generator=torch.Generator()))."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    # accelerator.py
    (
        "You can't save the model since some parameters are on the meta device.",
        "accelerator.save_model found weights that were never loaded (still on the meta device: a model built "
        "under init_empty_weights(), or loaded with device_map / low_cpu_mem_usage and parts never materialised): "
        "load the real weights first (load_checkpoint_and_dispatch, from_pretrained without meta), or save from "
        "the process that holds them; with FSDP use accelerator.get_state_dict(model) and save that.",
    ),
    (
        "is not an available tracker stored inside the `Accelerator`.",
        "accelerator.get_tracker(name) names a tracker that was not started: pass the same name as "
        "Accelerator(log_with=...) ('wandb', 'tensorboard', 'mlflow', ...) and call accelerator.init_trackers(project) "
        "before get_tracker; trackers exist only on the main process unless the tracker says otherwise.",
    ),
    (
        "was passed but no supported trackers are currently installed.",
        "Accelerator(log_with=...) names a tracker whose package is not installed in this environment: pip install "
        "the tracker the message names (wandb, tensorboard, mlflow, comet_ml, aim, clearml, dvclive), or drop log_with.",
    ),
    (
        "Number of custom checkpoints in folder",
        "accelerator.load_state(folder) found a different number of custom_checkpoint_*.pkl files than the objects "
        "registered with accelerator.register_for_checkpointing(...): register the same objects, in the same order, "
        "before load_state as before save_state, or load from a folder saved with that set.",
    ),
    (
        "All `objects` must include a `state_dict` and `load_state_dict` function to be stored.",
        "accelerator.register_for_checkpointing(obj) takes objects with state_dict() and load_state_dict() methods "
        "(a model, optimizer, scheduler, or a class of yours defining both): wrap a plain value (an int, a dict) in "
        "such a class, or save it yourself beside the state folder.",
    ),
    (
        "decorator must be called with a function on an instantiated `Accelerator` object.",
        "Use the decorator from an Accelerator instance on a function: accelerator = Accelerator(); "
        "@accelerator.on_main_process above def f(...) (not @Accelerator.on_main_process on the class, and not with "
        "arguments).",
    ),
    (
        "Overriding even_batches is only supported for map-style datasets",
        "accelerator.join_uneven_inputs(..., even_batches=False) can only change a DataLoader over a map-style "
        "dataset; an IterableDataset has no sampler to change: drop even_batches for those loaders, or make the "
        "dataset map-style (with __len__ and __getitem__).",
    ),
    (
        "Joining uneven inputs is only supported for multi-GPU training",
        "join_uneven_inputs only acts on a DDP run with several processes: launch with accelerate launch "
        "--num_processes N (N > 1), or remove the context manager on one process.",
    ),
    (
        "A learning rate must be passed in order to call backward pass with LOMO optimizers.",
        "With a LOMO / AdaLomo optimizer, call accelerator.backward(loss, learning_rate=lr) (the optimizer steps "
        "inside backward): pass the current learning rate (scheduler.get_last_lr()[0]).",
    ),
    (
        "Backward pass not properly called on LOMO optimizers.",
        "The LOMO optimizer was not given to accelerator.prepare(): prepare it with the model, "
        "model, optimizer = accelerator.prepare(model, optimizer), and call accelerator.backward(loss, "
        "learning_rate=lr).",
    ),
    (
        "Model should undergo tensor parallel before passing it to accelerate.",
        "With tensor parallelism in accelerate, load the model already split: from_pretrained(..., tp_plan='auto') "
        "(or the parallelism config's tp_size) before accelerator.prepare(model).",
    ),
    (
        "should be same as model's tp size",
        "The tensor-parallel size given to accelerate differs from the one the model was loaded with: give "
        "TorchTensorParallelPlugin / ParallelismConfig(tp_size=...) the same tp_size as from_pretrained(..., "
        "tp_size=...), both dividing the number of processes.",
    ),
    (
        "Pipeline parallelism is currently not supported in Accelerate.",
        "accelerate does not run pipeline parallelism itself: set pp_size=1 (or leave it out) in the parallelism "
        "config, and use DeepSpeed's or Megatron-LM's pipeline through their plugins instead.",
    ),
    (
        "Context parallelism is currently not supported in Accelerate.",
        "This accelerate release has no context parallelism: set cp_size=1, or upgrade accelerate (pip install -U "
        "accelerate) to a release whose ParallelismConfig takes cp_size with FSDP2.",
    ),
    (
        "You can't use an Offload Optimizer with HPU in Lazy Mode.",
        "On Gaudi (HPU) an offloaded optimizer needs eager mode: export PT_HPU_LAZY_MODE=0 before launching.",
    ),
    (
        "You must specify a training or evaluation dataloader in `accelerate.prepare()` when using Megatron-LM.",
        "With the Megatron-LM plugin pass the DataLoaders to the same accelerator.prepare(...) call as the model "
        "and optimizer: model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(model, optimizer, "
        "train_dl, eval_dl, scheduler).",
    ),
    (
        "You can't use a custom scheduler with Megatron-LM.",
        "Megatron-LM builds its own scheduler: pass accelerate.utils.MegatronLMDummyScheduler(optimizer, "
        "total_num_steps=..., warmup_num_steps=...) to prepare, and set the schedule in the plugin's config.",
    ),
    (
        "You can't use same `Accelerator()` instance with multiple models when using Megatron-LM",
        "With the Megatron-LM plugin one Accelerator prepares one model: create another Accelerator for the second "
        "model, or prepare only the model you train.",
    ),
    (
        "To set CPU affinity on ROCm GPUs the `amdsmi` package must be available.",
        "accelerate launch --enable_cpu_affinity on AMD GPUs reads the topology with amdsmi: install ROCm's Python "
        "bindings (pip install amdsmi matching the ROCm release, or add /opt/rocm/share/amd_smi to PYTHONPATH), "
        "or drop --enable_cpu_affinity.",
    ),
    # utils/modeling.py: sizes, devices and tied weights of a device map
    (
        "is not in a valid format. Use an integer for bytes, or a string with an unit",
        "A size (max_memory per device, max_shard_size) must be an integer of bytes or a string with a unit: "
        "max_memory={0: '20GiB', 'cpu': '60GiB'}, max_shard_size='5GB' (no space-separated words, a number then "
        "KB/MB/GB/KiB/MiB/GiB).",
    ),
    (
        "is not recognized, available devices are integers(for GPU/XPU), 'mps', 'cpu' and 'disk'",
        "A device_map or max_memory key names a device accelerate does not know: use GPU indexes as integers (0, "
        "1 ... not 'cuda:0' in older releases), 'cpu', 'disk' or 'mps'.",
    ),
    (
        "is not available, available devices are",
        "max_memory / device_map names a GPU index this process cannot see: use the indexes in the list the "
        "message prints (CUDA_VISIBLE_DEVICES renumbers them from 0), or build the map with device_map='auto'.",
    ),
    (
        "Tied parameters are on different devices:",
        "Weights the model ties (input embeddings and lm_head) were put on different devices by a hand-made "
        "device_map: put the tied modules on the same device in the map, or use device_map='auto', which keeps "
        "them together.",
    ),
    (
        "The model weights are not tied. Please use the `tie_weights` method",
        "Call model.tie_weights() before infer_auto_device_map(model, ...) so the map keeps tied weights together.",
    ),
    (
        "The following device_map keys do not match any submodules in the model:",
        "The device_map names modules this model does not have (a map written for another architecture or for a "
        "wrapped model): print([n for n, _ in model.named_modules()]) and use those names, or device_map='auto'.",
    ),
    (
        "The `device_map` does not contain the module",
        "A hand-made device_map must place every module of the model: add the module the message names (or its "
        "parent) to the map, or use device_map='auto' / infer_auto_device_map.",
    ),
    (
        "does not have a parameter or a buffer named",
        "A checkpoint or device map names a weight the model does not have: the checkpoint was saved from another "
        "architecture or with a prefix (module. from DDP, model. from a wrapper): load the checkpoint that matches "
        "the model, or strip the prefix from its keys.",
    ),
    (
        "Offloaded module must fit in CPU memory to call save_model!",
        "save_model gathers offloaded weights in CPU memory: free CPU memory (or use a machine with more), or save "
        "with the model fully on devices that can hold it.",
    ),
    (
        "Need either a `state_dict`, a `save_folder` or an `index` containing offloaded weights.",
        "OffloadedWeightsLoader needs where the weights are: pass state_dict=, save_folder= (the offload folder) or "
        "index=; with dispatch_model / from_pretrained give offload_folder='offload' when the map holds 'disk'.",
    ),
    # utils/operations.py
    (
        "Cannot find the batch size from empty",
        "accelerate read the batch size from an empty batch (an empty list, tuple or dict): the DataLoader yielded "
        "an empty batch (a collate_fn that drops every sample, a dataset filtered to nothing): make collate_fn "
        "return tensors, and check len(dataset) on every rank.",
    ),
    (
        "Can only find the batch size of tensors but got",
        "accelerate reads the batch size from the first tensor of a batch; this batch held no tensor there (a "
        "string, a list of ints): make collate_fn return tensors (torch.tensor(...)), or put the tensors first. "
        "A batch of None (\"got <class 'NoneType'>\") is no batch at all: an iterable dataset that ran out while "
        "accelerate's dispatcher (dispatch_batches, the Trainer on several processes) still built one past its end "
        '(releases after huggingface/accelerate#1531, mid-2023, say so: "Batch does not contain any data"); give '
        "every process as many batches as the steps need, or a collate_fn that never returns None.",
    ),
    (
        "Can only concatenate tensors but got",
        "accelerator.gather / gather_for_metrics and pad_across_processes take tensors (or lists and dicts of "
        "them): convert what is gathered to a tensor first (torch.tensor(values, device=accelerator.device)), or "
        "use gather_object for Python objects.",
    ),
    (
        "gather objects in TPU is not supported",
        "gather_object cannot run on TPU: gather tensors instead (encode the objects as tensors), or gather on the "
        "host after the run.",
    ),
    # utils/memory.py
    (
        "No executable batch size found, reached zero.",
        "find_executable_batch_size halved the batch size on every out-of-memory error down to zero: the step does "
        "not fit even at batch size 1 (a model too large for the GPU: use bf16, gradient checkpointing, a sharded "
        "strategy), or memory is held between tries (references to the model, optimizer or a previous batch kept "
        "outside the decorated function: create them inside it), or another error was read as out of memory.",
    ),
    # utils/random.py
    ("Can't synchronize XLA seeds as torch_xla is unavailable.", _SEEDS),
    ("seeds on an environment without", _SEEDS),
    ("Need a generator to synchronize its seed.", _SEEDS),
    # utils/tqdm.py
    (
        "Passing `True` or `False` as the first argument to Accelerate's `tqdm` wrapper is unsupported.",
        "accelerate.utils.tqdm takes the iterable first: tqdm(loader, main_process_only=True), not "
        "tqdm(True, loader).",
    ),
    # utils/dataclasses.py: quantization and FP8 settings
    ("load_in_8bit and load_in_4bit can't be both", _BNB),
    ("load_in_4bit and load_in_8bit can't be both", _BNB),
    ("llm_int8_threshold must be a float or an int", _BNB),
    ("llm_int8_threshold can only be used for model loaded in 8bit", _BNB),
    ("bnb_4bit_quant_type must be", _BNB),
    ("bnb_4bit_compute_dtype must be", _BNB),
    ("bnb_4bit_use_double_quant must be a boolean", _BNB),
    ("skip_modules must be a list of strings", _BNB),
    ("keep_in_fp_32_modules must be a list of strings", _BNB),
    ("torch_dtype must be in ['fp32','fp16','bf16'] but found", _BNB),
    ("torch_dtype must be a torch.dtype", _BNB),
    ("load_in_8bit must be a boolean", _BNB),
    ("load_in_4bit must be a boolean", _BNB),
    (
        "`opt_level` must be one of",
        "MS-AMP's opt_level is 'O1' or 'O2' (letter O, not zero): set MSAMPRecipeKwargs(opt_level='O2').",
    ),
    (
        "`backend` must be 'MSAMP' or 'TE' (TransformerEngine) to use `FP8RecipeKwargs`.",
        "FP8RecipeKwargs(backend=...) takes 'TE' (TransformerEngine) or 'MSAMP', upper case; newer accelerate "
        "takes TERecipeKwargs / MSAMPRecipeKwargs / AORecipeKwargs instead.",
    ),
    (
        "Invalid profiler activity:",
        "ProfileKwargs(activities=[...]) takes 'cpu', 'cuda' (or 'xpu', 'mtia', 'hpu' where present): list those "
        "the machine has.",
    ),
    (
        "Invalid cp_comm_strategy:",
        "The context-parallel config's cp_comm_strategy is 'allgather' or 'alltoall'.",
    ),
    (
        "FSDP2 mapping failed (missing:",
        "The optimizer's parameters could not be found again after FSDP2 sharded the model: tied embeddings (the "
        "config ties lm_head to the input embeddings while the checkpoint holds both): set "
        "model.config.tie_word_embeddings = False after loading (or load a checkpoint that ties them), and build "
        "the optimizer after accelerator.prepare(model) or pass both to one prepare call.",
    ),
    (
        "`fp8_format` must be one of",
        "FP8 recipe's fp8_format is 'HYBRID' (E4M3 forward, E5M2 backward) or 'E4M3' (or 'E5M2' in recent "
        "releases): spell it as the message lists, upper case, in TERecipeKwargs / the config's fp8_config.",
    ),
    (
        "`amax_compute_algo` must be one of",
        "FP8 recipe's amax_compute_algo is 'max' or 'most_recent': set one of them in TERecipeKwargs / fp8_config.",
    ),
    (
        "Invalid optimization level for MS-AMP.",
        "MS-AMP's opt_level is 'O1' or 'O2' (letter O, not zero): set MSAMPRecipeKwargs(opt_level='O2').",
    ),
    # utils/bnb.py
    (
        "`weights_location` needs to be the folder path containing the weights of the model",
        "load_and_quantize_model(weights_location=...) takes the folder that holds the checkpoint (with its index "
        "file), not a single file's path or a Hub name: download the model (snapshot_download) and pass its folder.",
    ),
)

# More than one cause prints these: their fixes name each, and a hit stays likely.
SEVERAL = (
    "No executable batch size found, reached zero.",
    "does not have a parameter or a buffer named",
    # a batch holding no tensor first (the script's collate_fn), or no batch at all (None: the data ran out)
    "Can only find the batch size of tensors but got",
)

# data_loader.py's DataLoaderDispatcher.__iter__ (the one caller in that file of find_batch_size, from 0.x to 1.x)
# reads the size of the batch process 0 fetched and broadcast: None where the iterable data ran out before the
# steps it was asked for (huggingface/accelerate#1531 made that its own ValueError, "Batch does not contain any
# data"). Its frame, CPython's ('data_loader.py", line N, in __iter__') or pytest's ('data_loader.py:N: in
# __iter__'), says which caller read a batch of None
DISPATCHER_FRAME = (
    "data_loader.py",
    Pattern(
        r"(?P<accelerate_dispatcher_frame>accelerate[\\/]data_loader\.py(?:\", line |:)\d+:?,? in __iter__)"
    ),
)
_NONE_BATCH = Pattern(r"Can only find the batch size of tensors but got <class '(?P<none_batch>NoneType)'>")
# a batch that holds something (a str, a list of ints) is the collate_fn's: the data did not run out
_SOME_BATCH = Pattern(
    r"Can only find the batch size of tensors but got <class '(?!NoneType')(?P<some_batch>[\w.]{1,80})'>"
)
_RAN_OUT = Alternative(
    "dataloader_exhausted",
    "the iterable dataset ran out while accelerate's dispatcher (dispatch_batches: the Trainer on several "
    "processes) still fetched a batch for the next step",
    "Give every process as many batches as the steps ask for: set max_steps (or the epochs) from the batches the "
    "iterable dataset really yields per process, or make it repeat (an infinite stream with max_steps); with "
    "accelerate, dispatch_batches=False lets each process read its own shard instead of process 0's batches.",
    when=("none_batch",),
    first_when=("none_batch", "accelerate_dispatcher_frame"),
    because="a batch of None, read in accelerate's DataLoaderDispatcher.__iter__",
    told_by="the traceback's frames: a batch of None read in accelerate's data_loader.py __iter__ is the data "
    "running out; read in the script's or the Trainer's own code it is a collate_fn that returned None.",
)

ACCELERATE_CALL_REFUSED = refusal_recogniser(
    "accelerate_call_refused",
    "accelerate refused a call on what the script handed it",
    REFUSALS,
    templates=(
        "accelerate:you-can-save-the-model-since",
        "accelerate:is-not-an-available-tracker-stored",
        "accelerate:log-with-was-passed-but-no",
        "accelerate:number-of-custom-checkpoints-in-folder",
        "accelerate:all-objects-must-include-state-dict",
        "accelerate:the-on-main-process-decorator-must",
        "accelerate:the-on-local-main-process-decorator",
        "accelerate:the-on-last-process-decorator-must",
        "accelerate:overriding-even-batches-is-only-supported",
        "accelerate:joining-uneven-inputs-is-only-supported",
        "accelerate:learning-rate-must-be-passed-in",
        "accelerate:backward-pass-not-properly-called-on",
        "accelerate:model-should-undergo-tensor-parallel-before",
        "accelerate:tp-size-in-the-plugin-should",
        "accelerate:pipeline-parallelism-is-currently-not-supported",
        "accelerate:context-parallelism-is-currently-not-supported",
        "accelerate:you-can-use-an-offload-optimizer",
        "accelerate:you-must-specify-training-or-evaluation",
        "accelerate:you-can-use-custom-scheduler-with",
        "accelerate:you-can-use-same-accelerator-instance-2",
        "accelerate:to-set-cpu-affinity-on-rocm",
        "accelerate:size-is-not-in-valid-format",
        "accelerate:device-is-not-recognized-available-devices",
        "accelerate:device-is-not-available-available-devices",
        "accelerate:tied-parameters-are-on-different-devices",
        "accelerate:the-model-weights-are-not-tied",
        "accelerate:the-following-device-map-keys-do",
        "accelerate:the-device-map-does-not-contain",
        "accelerate:does-not-have-parameter-or-buffer",
        "accelerate:offloaded-module-must-fit-in-cpu",
        "accelerate:need-either-state-dict-save-folder",
        "accelerate:cannot-find-the-batch-size-from",
        "accelerate:can-only-find-the-batch-size",
        "accelerate:can-only-concatenate-tensors-but-got",
        "accelerate:gather-objects-in-tpu-is-not",
        "accelerate:no-executable-batch-size-found-reached",
        "accelerate:can-synchronize-xla-seeds-as-torch",
        "accelerate:can-synchronize-npu-seeds-on-an",
        "accelerate:can-synchronize-mlu-seeds-on-an",
        "accelerate:can-synchronize-sdaa-seeds-on-an",
        "accelerate:can-synchronize-musa-seeds-on-an",
        "accelerate:can-synchronize-xpu-seeds-on-an",
        "accelerate:can-synchronize-hpu-seeds-on-an",
        "accelerate:can-synchronize-neuron-seeds-on-an",
        "accelerate:need-generator-to-synchronize-its-seed",
        "accelerate:passing-true-or-false-as-the",
        "accelerate:load-in-bit-and-load-in",
        "accelerate:load-in-bit-and-load-in-2",
        "accelerate:load-in-bit-and-load-in-3",
        "accelerate:llm-int8-threshold-must-be-float",
        "accelerate:llm-int8-threshold-can-only-be",
        "accelerate:bnb-bit-quant-type-must-be",
        "accelerate:bnb-bit-quant-type-must-be-2",
        "accelerate:bnb-bit-compute-dtype-must-be",
        "accelerate:bnb-bit-compute-dtype-must-be-2",
        "accelerate:bnb-bit-use-double-quant-must",
        "accelerate:skip-modules-must-be-list-of",
        "accelerate:keep-in-fp-modules-must-be",
        "accelerate:torch-dtype-must-be-in-fp32",
        "accelerate:torch-dtype-must-be-torch-dtype",
        "accelerate:load-in-bit-must-be-boolean",
        "accelerate:load-in-bit-must-be-boolean-2",
        "accelerate:opt-level-must-be-one-of",
        "accelerate:backend-must-be-msamp-or-te",
        "accelerate:invalid-profiler-activity-must-be-one",
        "accelerate:invalid-cp-comm-strategy-must-be",
        "accelerate:fsdp2-mapping-failed-missing-this-is",
        "accelerate:fp8-format-must-be-one-of",
        "accelerate:amax-compute-algo-must-be-one",
        "accelerate:invalid-optimization-level-for-ms-amp",
        "accelerate:weights-location-needs-to-be-the",
    ),
    several=SEVERAL,
    facts=(_NONE_BATCH, _SOME_BATCH),
    also=(_RAN_OUT,),
    rules_out=(("some_batch", ("dataloader_exhausted",)),),
)

RECOGNISERS = (ACCELERATE_CALL_REFUSED,)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (DISPATCHER_FRAME,)
