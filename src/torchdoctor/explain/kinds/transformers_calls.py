"""transformers refusing a model load or a Trainer call on what the script handed it.

transformers' own checks, as its sources raise them (``transformers/modeling_utils.py``: ``from_pretrained``'s
dtype, state_dict, tensor-parallel and attention arguments, embedding resizing; ``transformers/trainer.py``: the
training loop's loss device, resuming a model sharded at load, hyperparameter sweeps;
``transformers/training_args.py``: ``TrainingArguments``' values), transformers 4.3x-5.x. Each names the argument
it refuses and so its fix; a loss on another device (a model split over GPUs, or the 4.46 release's own bug) is
printed for several causes and stays likely. Settings other kinds read (``trainer_arguments``, DeepSpeed's, FSDP's,
attention implementations) are theirs.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "a library refusing its settings"

_DTYPE = (
    "from_pretrained(..., dtype=...) (torch_dtype= before transformers 4.56) takes a floating-point torch.dtype "
    "(torch.bfloat16, torch.float16, torch.float32), the string 'auto' or such a dtype's name ('bfloat16'), or a "
    "dict of them per sub-config: not an integer dtype (load quantized weights with quantization_config instead), "
    "not a misspelt name."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    # modeling_utils.py: dtypes
    ("cannot be instantiated under `dtype=", _DTYPE),
    ("as torch's default as it's not a floating-point dtype", _DTYPE),
    ("provided as a `str` can only be `'auto'`, or a string representation of a valid `torch.dtype`", _DTYPE),
    ("can be one of: `torch.dtype`, `'auto'`, a string of a valid `torch.dtype`", _DTYPE),
    (
        "Cannot load safetensors of unknown dtype",
        "The checkpoint's safetensors file holds a dtype this transformers does not know (float8 variants, or a "
        "newer format): upgrade transformers and safetensors (pip install -U transformers safetensors), or load a "
        "checkpoint saved in bf16 / fp16.",
    ),
    # modeling_utils.py: what from_pretrained loads from
    (
        "`state_dict` cannot be passed together with a model name or a `gguf_file`.",
        "from_pretrained(name, state_dict=sd) loads the weights from one place: pass "
        "from_pretrained(None, config=config, state_dict=sd) to use your state dict, or drop state_dict= to load the "
        "checkpoint named.",
    ),
    (
        "Neither a state dict nor checkpoint files were found.",
        "from_pretrained found no weights: the folder holds only config.json (a checkpoint saved without "
        "save_pretrained's weights, or a download cut short): point at the folder with model.safetensors / "
        "pytorch_model.bin (or its sharded index), or re-download it.",
    ),
    (
        "`transformers_weights` must reference a file inside the model directory",
        "config.json's transformers_weights names a file outside the model folder: make it a path relative to "
        "the folder (model.safetensors or model.safetensors.index.json).",
    ),
    (
        "it is neither a safetensors file (*.safetensors) nor a safetensors index file",
        "config.json's transformers_weights must name a .safetensors file or a .safetensors.index.json: correct "
        "it, or remove the entry to let from_pretrained find the weights.",
    ),
    (
        "Pass either `distributed_config` or the standalone `tp_plan`/`tp_size` arguments, not both.",
        "Give the tensor-parallel settings once: from_pretrained(..., distributed_config=DistributedConfig(tp_plan="
        "'auto', tp_size=N)), without tp_plan= / tp_size= beside it.",
    ),
    (
        "does not define `config_class`; pass an explicit config to `from_pretrained`.",
        "A custom PreTrainedModel subclass without config_class cannot build its config: set config_class = "
        "YourConfig on the class, or call from_pretrained(path, config=YourConfig.from_pretrained(path)).",
    ),
    (
        "should be an instance of class `PreTrainedConfig`.",
        "A model class was called with something else than a config (a model name): use "
        "Model.from_pretrained('name') to load a pretrained model, or Model(AutoConfig.from_pretrained('name')) "
        "for a fresh one.",
    ),
    (
        "is not a valid auto class.",
        "register_for_auto_class takes the name of an Auto class (e.g. 'AutoModelForCausalLM'), spelt as "
        "transformers spells it.",
    ),
    (
        "Expected `kernel_config` to be of type `KernelConfig` but got",
        "from_pretrained(..., kernel_config=KernelConfig(...)): build it with transformers' KernelConfig, not a "
        "dict.",
    ),
    # modeling_utils.py: attention and experts
    (
        "Requested Flash Attention",
        "attn_implementation names a FlashAttention generation transformers does not have: use "
        "'flash_attention_2' (pip install flash-attn), 'flash_attention_3' on Hopper, or 'sdpa'.",
    ),
    (
        "only supports torch.float16 and torch.bfloat16 dtypes, but the current dype in",
        "FlashAttention runs in fp16 / bf16 only: load the model with dtype=torch.bfloat16 (or float16), or train "
        "under autocast (TrainingArguments(bf16=True)); keep fp32 models on attn_implementation='sdpa'.",
    ),
    (
        "with a model not initialized on GPU.",
        "FlashAttention kernels run on the GPU: move the model there after loading (model.to('cuda')) or load it "
        "with device_map={'': local_rank}; on CPU use attn_implementation='sdpa'.",
    ),
    (
        "Specified `experts_implementation=",
        "experts_implementation takes one of the values the message lists: choose one of them, or leave it unset.",
    ),
    (
        "Cannot switch experts implementation from",
        "This experts implementation is chosen at load time: reload with from_pretrained(..., "
        "experts_implementation=...) instead of switching on the loaded model.",
    ),
    (
        "does not support setting its attention implementation dynamically",
        "This model class cannot change attention after loading: pass attn_implementation= to from_pretrained "
        "instead of calling set_attn_implementation on the loaded model.",
    ),
    # modeling_utils.py: embeddings, saving
    (
        "Asking to pad the embedding matrix to a multiple of",
        "resize_token_embeddings(n, pad_to_multiple_of=64): pad_to_multiple_of is an integer.",
    ),
    (
        "Old embeddings are of type",
        "resize_token_embeddings only resizes nn.Embedding input embeddings: for a model whose embeddings are "
        "another module (a quantized or custom layer), resize before quantizing, or resize that module yourself.",
    ),
    (
        "Old language model head is of type",
        "resize_token_embeddings only resizes an nn.Linear lm_head: resize before quantizing or wrapping the model, "
        "or resize that head yourself.",
    ),
    (
        "You need to first quantize your model in order to dequantize it",
        "model.dequantize() is for a model loaded with a quantization_config: the model is not quantized; drop the "
        "call.",
    ),
    (
        "is not serializable - check out the warnings from the logger",
        "The quantized model cannot be saved with this quantization method or release: save the adapters only "
        "(peft's save_pretrained), save the base model before quantizing, or upgrade transformers, bitsandbytes / "
        "the quantization library to releases that serialize it.",
    ),
    (
        "Multiple active adapters detected, saving multiple active adapters is not supported yet.",
        "Save the adapters one by one: model.set_adapter(name); model.save_pretrained(folder / name) for each.",
    ),
    (
        "If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory "
        "with the same name.",
        "from_pretrained failed on an error transformers did not expect (the exception chained above this line is "
        "the cause): a local folder of the same name as the Hub model (without its weights, or made by a save that "
        "was cut short) taken instead of the Hub's, a path that is not the model folder, or a download that failed "
        "(no network, HF_HUB_OFFLINE=1 without the model in the cache). Rename or remove the folder, give the "
        "folder holding config.json and the weights, or download the model first.",
    ),
    # trainer.py
    (
        "Resuming is not supported for models sharded at load time (`DistributedConfig`)",
        "A model sharded at load (from_pretrained(..., distributed_config=...)) cannot checkpoint its optimizer: "
        "pass TrainingArguments(save_only_model=True) (or save_strategy='no'), and resume from the weights only.",
    ),
    (
        "Calculated loss must be on the original device:",
        "The step's loss came back on another device than the first step's: a model split over several GPUs "
        "(device_map='auto' on a multi-GPU machine puts the loss on the last GPU) while the Trainer also runs data "
        "parallel; give each process one GPU (device_map={'': int(os.environ.get('LOCAL_RANK', 0))}), or, with "
        "transformers 4.46.0-4.46.2 (a bug in gradient accumulation's loss), upgrade: pip install -U transformers.",
    ),
    (
        "For sweeps with deepspeed, `args.deepspeed` must be set",
        "trainer.hyperparameter_search with DeepSpeed reads the config from TrainingArguments(deepspeed='ds.json'): "
        "pass the config there, not only through accelerate's config.",
    ),
    (
        "in the hyperparameter search but there is no corresponding field in `TrainingArguments`.",
        "The search space names a field TrainingArguments does not have: use TrainingArguments' field names "
        "(learning_rate, per_device_train_batch_size, ...) in hp_space.",
    ),
    (
        "Evaluation hit an out-of-memory error.",
        "auto_find_batch_size only shrinks the training batch: lower per_device_eval_batch_size (and set "
        "eval_accumulation_steps to move predictions to the CPU).",
    ),
    # training_args.py
    (
        "`torch_empty_cache_steps` must be an integer bigger than 0",
        "TrainingArguments(torch_empty_cache_steps=N) takes a positive integer (or None to never empty the cache).",
    ),
    (
        "`--xla_fsdp_grad_ckpt` is useful only when `--xla` is set to true.",
        "Set fsdp_config={'xla': True, 'xla_fsdp_grad_ckpt': True} together, or drop xla_fsdp_grad_ckpt.",
    ),
    (
        "Sequence parallelism is enabled but no SP process group is available.",
        "Sequence parallelism needs its group: initialise the device mesh with an 'sp' dimension before the "
        "Trainer (or ParallelismConfig(sp_size=N) through accelerate), or use sp_backend='deepspeed' with sp_size > 1.",
    ),
)

# More than one cause prints these: their fixes name each, and a hit stays likely.
SEVERAL = (
    "Calculated loss must be on the original device:",
    "If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory "
    "with the same name.",
)

TRANSFORMERS_CALL_REFUSED = refusal_recogniser(
    "transformers_call_refused",
    "transformers refused a model load or a Trainer call on what the script handed it",
    REFUSALS,
    templates=(
        "transformers:cannot-be-instantiated-under-dtype-as",
        "transformers:cannot-set-as-torch-default-as",
        "transformers:dtype-provided-as-str-can-only",
        "transformers:dtype-can-be-one-of-torch",
        "transformers:cannot-load-safetensors-of-unknown-dtype",
        "transformers:state-dict-cannot-be-passed-together",
        "transformers:neither-state-dict-nor-checkpoint-files",
        "transformers:transformers-weights-must-reference-file-inside",
        "transformers:the-transformers-file-in-the-config",
        "transformers:pass-either-distributed-config-or-the",
        "transformers:does-not-define-config-class-pass",
        "transformers:parameter-config-in-config-should-be",
        "transformers:is-not-valid-auto-class",
        "transformers:expected-kernel-config-to-be-of",
        "transformers:requested-flash-attention-which-is-not",
        "transformers:flash-attention-only-supports-torch-float16",
        "transformers:you-are-attempting-to-use-flash-4",
        "transformers:specified-experts-implementation-is-not-supported",
        "transformers:cannot-switch-experts-implementation-from-to",
        "transformers:does-not-support-setting-its-attention",
        "transformers:asking-to-pad-the-embedding-matrix",
        "transformers:old-embeddings-are-of-type-which",
        "transformers:old-language-model-head-is-of",
        "transformers:you-need-to-first-quantize-your",
        "transformers:the-model-is-quantized-with-and",
        "transformers:multiple-active-adapters-detected-saving-multiple",
        "transformers:can-load-the-model-for-if",
        "transformers:resuming-is-not-supported-for-models",
        "transformers:calculated-loss-must-be-on-the",
        "transformers:for-sweeps-with-deepspeed-args-deepspeed",
        "transformers:trying-to-set-in-the-hyperparameter",
        "transformers:evaluation-hit-an-out-of-memory",
        "transformers:torch-empty-cache-steps-must-be",
        "transformers:xla-fsdp-grad-ckpt-is-useful",
        "transformers:sequence-parallelism-is-enabled-but-no",
    ),
    several=SEVERAL,
)

RECOGNISERS = (TRANSFORMERS_CALL_REFUSED,)
