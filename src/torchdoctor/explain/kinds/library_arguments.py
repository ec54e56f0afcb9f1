"""The libraries a training script calls on torch refusing the arguments, config or inputs it gave them.

Each message below is raised by the library before any work is done, names what it refuses, and only that call of
the script prints it:

- transformers' tokenizers (``tokenization_utils_base.py``): padding asked of a tokenizer that has no pad token
  (GPT-2's, Llama's and most decoder-only checkpoints' have none), and the sequence-classification heads of those
  models that find the last token from ``config.pad_token_id`` (``tokenizer_pad_token``, its own kind: one cause,
  one fix), as the collators (``data/data_collator.py``) do too; tensors asked of rows of unequal length
  (``BatchEncoding.convert_to_tensors``); a collator given examples without ``input_ids`` or asked to mask tokens
  with a tokenizer that has no mask token; an Auto class without a class for the checkpoint's architecture;
- transformers' models' ``forward()`` input checks (neither or both of ``input_ids`` and ``inputs_embeds``) and
  ``generate()``'s argument validation (``generation/utils.py``, ``generation/configuration_utils.py``);
- PEFT: a module ``target_modules`` matched that LoRA cannot wrap (a model-parallel layer, ColumnParallelLinear or
  RowParallelLinear, named as such: peft has LoRA only for Megatron-core's, from 0.7.0), no ``target_modules`` for a
  model type PEFT has no default for (the names matching no layer at all are ``peft_target_modules``), merging an
  adapter into quantized weights (8-bit before peft 0.6, GPTQ);
- transformers' ``pipeline()`` given a task name it does not list;
- timm's ``create_model``: an architecture without weights; a model name or a weights tag the installed timm does
  not register;
- torchtune's dataset builders asked to pack (``packed=True``) with a tokenizer that has no ``max_seq_len``;
- TRL's SFTTrainer refusing to guess the text column (its GRPO checks, a Trainer's own, are ``trainer_arguments``);
- diffusers' pipelines (``check_inputs``) and training examples' ``parse_args`` / ``main`` checks (dataset columns,
  prior preservation's class images, trained weights loaded in half precision);
- ultralytics' check of the keys given to ``YOLO(...).train()`` / ``predict()`` (``cfg/__init__.py``) and of the
  dataset YAML (``data/utils.py`` check_det_dataset: the keys it needs, names and nc that disagree);
- pytorch-ignite's checkpoint handlers (``ignite/handlers/checkpoint.py``): ``DiskSaver(dirname, ...,
  require_empty=True)`` refusing a folder that holds checkpoints already ("Files {} with extension '.pt' are already
  present in the directory {}. If you want to use this directory anyway, pass `require_empty=False`."; '.pth' or
  '.pth.tar' in 0.3), and ``require_empty`` given to ``Checkpoint``, which never took it (it is ``DiskSaver``'s and
  ``ModelCheckpoint``'s): CPython's "Checkpoint.__init__() got an unexpected keyword argument 'require_empty'",
  likely (a class of the code's own named Checkpoint prints it too).

ultralytics' "is not a valid YOLO argument" is as often a key of another release: likely, ``dependency_version`` named; so is PEFT's "Target module <a Linear-like layer> is not supported"
(Linear4bit, a quantized Linear: a layer the installed peft does not know), while a container named stays certain.
The models' input checks and generate()'s unused keyword arguments do not say whose call they refuse (the script's
or a library's calling on its behalf): likely. Five of them read differently by release, so they are only likely, with ``dependency_version`` named beside:
timm's "Unknown model" and "Invalid pretrained tag" are a typo or a name newer than the installed timm; an Auto class's "Unrecognized
configuration class" is the wrong class or a transformers older than the mapping; ``pipeline()``'s "Unknown task"
a typo or a task added later; TRL's SFTTrainer refusal of ``packing=False``
without ``dataset_text_field`` is a script written for another trl (the field moved from ``SFTTrainer(...)`` to
``SFTConfig`` in 0.9 and defaults to ``'text'`` from 0.12).
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.refusal_table import describe_refusal, refusal_pattern
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_INPUT_IDS = (
    "The model's forward() was not given input_ids (or inputs_embeds): call it with the tokenizer's output unpacked, "
    "model(**batch) and not model(batch), and keep the column named input_ids in the dataset (a map() that renamed or "
    "dropped it, Trainer's remove_unused_columns dropping a column the forward() signature does not name, or a "
    "custom collator returning other keys). Give exactly one of input_ids= and inputs_embeds=."
)
_TARGET_TYPE = (
    "LoRA wraps single layers (nn.Linear, nn.Embedding, nn.Conv1d/2d/3d, GPT-2's Conv1D; nn.MultiheadAttention in "
    "recent peft), not whole blocks: the name in target_modules matched a container (an attention block, an MLP, a "
    "decoder layer). Name the linear layers inside it (print the model's named_modules()), e.g. target_modules="
    "['q_proj', 'v_proj'], or target_modules='all-linear' (peft >= 0.8)."
)
_REQUIRE_EMPTY = (
    "require_empty belongs to ignite's DiskSaver (and ModelCheckpoint), not to Checkpoint: pass it to the saver, "
    "Checkpoint(to_save, DiskSaver('./checkpoints', create_dir=True, require_empty=False), n_saved=2), or use "
    "ModelCheckpoint('./checkpoints', 'model', require_empty=False). require_empty=False lets it write into a folder "
    "that holds an earlier run's checkpoints (it may overwrite or rotate them); or point it at a new folder."
)
_TEXT_FIELD = (
    "Tell SFTTrainer which column holds the text: SFTConfig(dataset_text_field='text') (an SFTConfig field from trl "
    "0.9, an SFTTrainer(...) argument before), or pass formatting_func=. trl 0.9.x skipped this check (it raised only "
    "with skip_prepare_dataset), 0.10 checks again, and from 0.12 the field defaults to 'text': a script that ran on "
    "0.9.x without the field needs it, or pip install 'trl>=0.9.3,<=0.9.6'."
)
REFUSALS = (
    (
        "Unable to create tensor, you should probably activate truncation and/or padding",
        "The rows asked for as one tensor (return_tensors='pt') have different lengths: tokenize with "
        "padding='max_length' (or padding=True per batch) and truncation=True, max_length=N, or leave padding to a "
        "DataCollatorWithPadding / DataCollatorForSeq2Seq (which pads labels with -100 too). A feature nested one "
        "level too deep (a list of lists where a list of ints is expected: text given as a list per example) prints "
        "it too: flatten that column.",
    ),
    ("You have to specify either input_ids or inputs_embeds", _INPUT_IDS),
    ("You must specify exactly one of input_ids or inputs_embeds", _INPUT_IDS),
    ("You cannot specify both input_ids and inputs_embeds at the same time", _INPUT_IDS),
    (
        "model_kwargs` are not used by the model",
        "generate() was given keyword arguments that neither the GenerationConfig nor the model's forward() takes: "
        "remove them or fix their spelling (max_new_tokens, num_beams, do_sample, ...). A tokenizer output passed as "
        "**inputs carries token_type_ids, which decoder-only models do not take: tokenize with "
        "return_token_type_ids=False or drop the key before generate(**inputs).",
    ),
    (
        "has to be smaller or equal to `num_beams`",
        "Beam search returns at most num_beams sequences: set num_return_sequences <= num_beams, or sample "
        "(do_sample=True) for more.",
    ),
    ("is not supported. Currently, only the following modules are supported", _TARGET_TYPE),
    ("Currently, only `torch.nn.Linear` and `Conv1D` are supported", _TARGET_TYPE),
    (
        "Please specify `target_modules` in `peft_config`",
        "PEFT has no default target_modules for this model's type (config.model_type is not in its mapping): pass "
        "them to the config yourself, the model's linear layers' names (print the model's named_modules()), e.g. "
        "LoraConfig(target_modules=['q_proj', 'v_proj']), or target_modules='all-linear' (peft >= 0.8).",
    ),
    (
        "Use `pretrained=False` for random init",
        "timm has no pretrained weights for this architecture or tag: list those that have them with "
        "timm.list_models('<name>*', pretrained=True) and choose one (a tag after the dot: "
        "'vit_base_patch16_224.augreg_in21k', timm >= 0.9), or create it with pretrained=False.",
    ),
    (
        "Invalid pretrained tag (",
        "The installed timm has no weights under this tag for the architecture: list the tags it has with "
        "timm.list_models('<architecture>*', pretrained=True) and fix the name after the dot, or drop the tag for "
        "the default weights; tags published after the installed release need pip install -U timm.",
    ),
    (
        "Unknown model (",
        "The installed timm registers no model by this name: list the names it has with timm.list_models('<part of "
        "the name>*') and fix the spelling; a model added in a later timm needs pip install -U timm (timm 0.9 "
        "renamed some: tf_efficientnet_* and the weights' tags after a dot).",
    ),
    ("but you didn't pass a `dataset_text_field` or `formatting_func` argument", _TEXT_FIELD),
    ("Checkpoint.__init__() got an unexpected keyword argument 'require_empty'", _REQUIRE_EMPTY),
    ("If you want to use this directory anyway, pass", _REQUIRE_EMPTY),
    (
        "layers when the model is loaded in",
        "peft before 0.6 cannot merge an adapter into bitsandbytes' 8-bit (or, for IA3, 4-bit) weights: load the "
        "base model unquantized (torch_dtype=torch.float16 / bfloat16, no load_in_8bit / quantization_config), load "
        "the adapter onto it with PeftModel.from_pretrained and merge_and_unload() there; peft >= 0.6 merges LoRA "
        "into quantized layers too, with rounding error.",
    ),
    (
        "layers when the model is gptq quantized",
        "GPTQ's packed weights cannot take the adapter: load the unquantized base model (fp16 / bf16), load the "
        "adapter onto it and merge_and_unload() there (quantize the merged model afterwards), or keep the adapter "
        "unmerged for inference.",
    ),
    (
        "`max_new_tokens` must be greater than 0",
        "Give generate() max_new_tokens >= 1 (a length computed as max_length minus the prompt's length goes to 0 "
        "or below when the prompt is as long as max_length: shorten or truncate the prompt).",
    ),
    (
        ", available tasks are",
        "pipeline(task) takes a task name this transformers lists (the message names them): fix the spelling "
        "('text-generation', 'text-classification', 'automatic-speech-recognition', ...); a task added later "
        "('image-text-to-text', ...) needs pip install -U transformers.",
    ),
    (
        "does not have a mask token which is necessary for masked language modeling",
        "DataCollatorForLanguageModeling masks tokens for BERT-style training by default (mlm=True); a causal "
        "model's tokenizer (GPT-2, Llama, ...) has no mask token: pass DataCollatorForLanguageModeling(tokenizer, "
        "mlm=False) to train next-token prediction.",
    ),
    (
        "You should supply an encoding or a list of encodings to this method that includes",
        "The examples that reached the collator (tokenizer.pad, DataCollatorWithPadding) hold no input_ids: "
        "tokenize the dataset first (dataset.map(lambda b: tokenizer(b['text'], truncation=True), batched=True)) "
        "and keep its columns (Trainer's remove_unused_columns=False when the model's forward() names them "
        "differently), or give a collator that tokenizes the raw text itself.",
    ),
    (
        "for this kind of AutoModel",
        "This Auto class has no class for the checkpoint's architecture: load it with the class for its task that the "
        "message lists (an encoder-decoder such as T5 with AutoModelForSeq2SeqLM, not AutoModelForCausalLM; a vision-"
        "language model with its own class or AutoModelForImageTextToText), or a transformers release that maps it "
        "(pip install -U transformers; the model card names the release).",
    ),
    (
        "_column' value '",
        "The dataset has no column by that name: pass --image_column / --caption_column the names the message lists "
        "(the dataset's own columns), or rename the dataset's columns to image and text.",
    ),
    (
        "Need either a dataset name or a training folder",
        "Give the training data: --dataset_name <a Hub dataset> or --train_data_dir <a folder of images with a "
        "metadata.jsonl of captions>.",
    ),
    (
        "You must specify a data directory for class images",
        "--with_prior_preservation generates and trains on class images: pass --class_data_dir <a folder> and "
        "--class_prompt '<a photo of a dog>', or drop --with_prior_preservation.",
    ),
    (
        "You must specify prompt for class images",
        "--with_prior_preservation generates and trains on class images: pass --class_prompt '<a photo of a dog>' "
        "and --class_data_dir <a folder>, or drop --with_prior_preservation.",
    ),
    (
        "have all model weights in full float32 precision when starting training",
        "The model being trained was loaded in half precision (--variant fp16, --revision fp16, or a torch_dtype): "
        "load the trained model in float32 and let --mixed_precision fp16/bf16 (accelerate's autocast) do the rest; "
        "only the frozen models may be loaded in half precision.",
    ),
    (
        "Gradient accumulation is not supported when training the text encoder in distributed training",
        "With --train_text_encoder on several processes, set --gradient_accumulation_steps 1 (raise the batch size "
        "instead), or train on one process.",
    ),
    (
        "`height` and `width` have to be divisible by 8",
        "The VAE works on 8x8 latents: pass height= and width= that are multiples of 8 (e.g. 512, 768, 1024), or "
        "resize the input image to them.",
    ),
    (
        "are required in all data YAMLs",
        "The dataset YAML given as data= lacks a key ultralytics needs: train: and val: (image folders or list files, "
        "relative to path:) and names: (the class names, a list or {0: 'cat', ...}; nc: alone is accepted too). "
        "Check the file the message names is the dataset's YAML (not a model's .yaml) and that its keys are at the "
        "top level.",
    ),
    (
        "'names' length",
        "The data YAML's names: and nc: disagree: give names: only (ultralytics takes the class count from it), or "
        "make nc: the number of names.",
    ),
    (
        "is not a valid YOLO argument",
        "ultralytics takes only the keys of its default.yaml (the message lists similar ones): rename or drop the "
        "argument (YOLOv5's train.py options such as image_weights or multi_scale spelled its way, renamed keys such "
        "as smoothing -> label_smoothing); yolo cfg prints the valid ones.",
    ),
    # torchtune's dataset builders (torchtune/datasets/_alpaca.py, _chat.py, _instruct.py, _text_completion.py, ...,
    # from 0.3) with packed=True: PackedDataset packs to the tokenizer's max_seq_len, which the config left unset
    (
        "PackedDataset requires a max_seq_len to be set on the tokenizer",
        "dataset.packed=True packs the samples into PackedDataset rows of tokenizer.max_seq_len tokens, and the "
        "tokenizer was built without max_seq_len (null in the recipe's config): set it, tokenizer.max_seq_len=2048 "
        "in the config or on the command line (tune run ... tokenizer.max_seq_len=2048; the length you train at, at "
        "most the model's context), or set dataset.packed=False.",
    ),
    # the first line of PEFT's refusal where the message is wrapped after "is not supported. " (its module named
    # there, the list of supported layers on the next line: microsoft/LMOps#105)
    ("Target module ", _TARGET_TYPE),
)

# the same refusals pasted as text, without their backticks (an issue's prose, a rendered Markdown block)
REFUSALS = REFUSALS + tuple(
    (row[0].replace("`", ""), row[-1])
    for row in REFUSALS
    if "`" in row[0] and row[0].replace("`", "") not in {other[0] for other in REFUSALS}
)

# read differently by release: a name or a default that changed between releases of the library
_BY_RELEASE = {
    "timm_release": "Unknown model (",
    "timm_tag_release": "Invalid pretrained tag (",
    "auto_release": "for this kind of AutoModel",
    "task_release": ", available tasks are",
    "trl_release": "dataset_text_field` or `formatting_func` argument",
    "trl_release_pasted": "dataset_text_field or formatting_func argument",
    # ultralytics' check_dict_alignment: a key of another release's default.yaml (save_period, copy_paste_mode on
    # an ultralytics older than them: ultralytics/ultralytics#8322, #18302, the fix an upgrade)
    "yolo_release": "is not a valid YOLO argument",
}
# CPython's words for a class the message names only by its name: ignite's Checkpoint, or a class of the code's own
_CLASS_UNNAMED = {
    "ignite_checkpoint_kw": "Checkpoint.__init__() got an unexpected keyword argument 'require_empty'"
}
# the caller the message does not name: a model's forward() and generate() are called by the script or by a library
# on its behalf (a trainer, a pipeline, an evaluation loop of another release), so the script is only the likelier
_CALLER_UNNAMED = {
    "inputs_unnamed": "input_ids or inputs_embeds",
    "inputs_both": "both input_ids and inputs_embeds",
    "kwargs_unnamed": "are not used by the model",
}

TEMPLATES = (
    "third_party:transformers-unable-to-create-tensor-pad-truncate",
    "third_party:transformers-specify-either-input-ids-or-inputs-embeds",
    "third_party:transformers-specify-exactly-one-of-input-ids",
    "third_party:transformers-both-input-ids-and-inputs-embeds",
    "third_party:transformers-generate-model-kwargs-not-used",
    "third_party:transformers-num-return-sequences-over-num-beams",
    "third_party:peft-target-module-type-not-supported",
    "third_party:peft-target-module-type-not-supported-old",
    "third_party:peft-specify-target-modules",
    "third_party:timm-no-pretrained-weights",
    "third_party:timm-unknown-model",
    "third_party:timm-invalid-pretrained-tag",
    "third_party:trl-sft-packing-false-without-text-field",
    "third_party:transformers-collator-mlm-without-mask-token",
    "third_party:transformers-pad-without-input-ids",
    "third_party:transformers-unrecognized-configuration-class",
    "third_party:diffusers-example-column-not-in-dataset",
    "third_party:diffusers-example-no-dataset",
    "third_party:diffusers-example-class-data-dir",
    "third_party:diffusers-example-weights-not-float32",
    "third_party:diffusers-example-text-encoder-grad-accumulation",
    "third_party:diffusers-height-width-divisible-by-8",
    "third_party:ultralytics-not-a-valid-yolo-argument",
    "third_party:ultralytics-data-yaml-key-missing",
    "third_party:ultralytics-data-yaml-names-nc-differ",
    "third_party:peft-cannot-merge-8bit",
    "third_party:peft-cannot-merge-gptq",
    "third_party:transformers-max-new-tokens-not-positive",
    "third_party:transformers-pipeline-unknown-task",
    "third_party:ignite-checkpoint-require-empty-keyword",
    "third_party:ignite-disksaver-files-already-present",
    "third_party:torchtune-packed-dataset-requires-max-seq-len",
)


# PEFT's refusal of a module type names the module: a container (an attention block, a decoder layer) is the
# script's target_modules; a layer of a linear kind (bitsandbytes' Linear4bit / Linear8bitLt, a quantized or
# custom Linear, a Conv1d before peft supported it) is one the installed peft does not know, fixed by a peft (or
# transformers / bitsandbytes) that does (huggingface/peft#1991: "Linear4bit not supported", packages not updated)
_LAYER_RELEASE = R(r"Target module (?P<peft_layer_release>\w{0,60}(?:Linear|Conv|Embedding|Quant)\w{0,40})\(")
# a tensor- (model-) parallel layer named (Megatron's ColumnParallelLinear / RowParallelLinear, a framework's own
# copy of them): peft's LoRA wraps whole layers, and only Megatron-core's parallel ones from peft#1092
# (src/peft/tuners/lora/tp_layer.py, LoraConfig(megatron_config=..., megatron_core=...)) (microsoft/LMOps#105)
_PARALLEL_LAYER = R(r"Target module (?P<peft_parallel_layer>\w{0,40}(?:Column|Row|Vocab)Parallel\w{0,40})\(")
_PARALLEL_FIX = (
    "peft's LoRA wraps plain layers (nn.Linear and its kin), not a model-parallel (tensor-parallel) layer whose "
    "weight is split over the GPUs: train the adapter without model parallelism (each GPU holding whole layers; "
    "merge the model-parallel checkpoint first), or use a LoRA written for the parallel layers: peft's for "
    "Megatron-core's ColumnParallelLinear / RowParallelLinear (LoraConfig(megatron_config=..., "
    "megatron_core='megatron.core'), peft >= 0.7), or the training framework's own."
)


# AutoAWQ's quantized layers (awq/modules/linear/gemm.py WQLinear_GEMM, and WQLinear_GEMV, _Marlin, _Exllama...):
# AutoAWQ 0.1.x had no backward for them, so peft could not train through them (huggingface/transformers#28193:
# "AutoAWQ is not compatible with training yet"); AutoAWQ#324 gave WQLinear_GEMM a backward and huggingface/peft#1399
# taught peft to wrap it. Without the parenthesis the refusal is pasted as a title (no "WQLinear_GEMM(" to read)
_AWQ_LAYER = R(r"Target module (?P<peft_awq_layer>WQLinear\w{0,30})")
_AWQ_FIX = (
    "LoRA on an AWQ-quantized model trains through AutoAWQ's WQLinear layers only with releases that support it: an "
    "AutoAWQ whose layers have a backward (casper-hansen/AutoAWQ#324) and a peft that wraps them "
    "(huggingface/peft#1399): pip install -U autoawq peft transformers (AutoAWQ 0.1.x was not compatible with "
    "training). Or fine-tune the unquantized model (4-bit bitsandbytes, QLoRA) and quantize it with AWQ afterwards."
)


def _stated_by_the_call(hits: list[Hit], ctx: Context) -> bool:
    """Certain unless every hit is one of the refusals a release of the library explains as well as the script, or
    one that does not say whose call it refuses; PEFT's refusal of a Linear-like layer counts wherever one of its
    lines was read (wrapped over two lines, only its first names the layer)."""
    if any("peft_layer_release" in h.facts for h in hits):
        return False
    return not all(
        any(key in h.facts for key in (*_BY_RELEASE, *_CALLER_UNNAMED, *_CLASS_UNNAMED)) for h in hits
    )


_stated_by_the_call.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide

_REFUSED = describe_refusal(
    REFUSALS, "the library refused the arguments it was called with", message="refusal"
)


def _awq_layer(hits: list[Hit]) -> tuple[str, str] | None:
    """peft refusing one of AutoAWQ's quantized layers as a LoRA target, or None."""
    layer = first(hits, "peft_awq_layer", "")
    if not layer:
        return None
    return (
        f"peft's LoRA was asked to wrap {layer}, AutoAWQ's quantized linear layer, which the installed peft (or "
        "AutoAWQ) cannot train through" + on_ranks(hits),
        _AWQ_FIX,
    )


def _parallel_layer(hits: list[Hit]) -> tuple[str, str] | None:
    """peft refusing a model-parallel layer as a LoRA target, or None."""
    layer = first(hits, "peft_parallel_layer", "")
    if not layer:
        return None
    return (
        f"peft's LoRA was asked to wrap {layer}, a model-parallel (tensor-parallel) layer the installed peft has "
        "no LoRA for" + on_ranks(hits),
        _PARALLEL_FIX,
    )


LIBRARY_ARGUMENTS = Recogniser(
    kind="library_arguments",
    title="a library refusing the arguments the script called it with",
    anchors=tuple(row[0] for row in REFUSALS),
    templates=TEMPLATES,
    facts=(
        refusal_pattern(REFUSALS),
        *(R(rf"(?P<{key}>{re.escape(text)})") for key, text in _BY_RELEASE.items()),
        *(R(rf"(?P<{key}>{re.escape(text)})") for key, text in _CALLER_UNNAMED.items()),
        *(R(rf"(?P<{key}>{re.escape(text)})") for key, text in _CLASS_UNNAMED.items()),
        _LAYER_RELEASE,
        _PARALLEL_LAYER,
        _AWQ_LAYER,
    ),
    confirm=_stated_by_the_call,
    also=(
        Alternative(
            "dependency_version",
            "a model or weights tag added in a later timm than the one installed",
            "pip install -U timm (or the release the script's requirements name); timm.list_models() lists what the "
            "installed one has.",
            when=("timm_release", "timm_tag_release"),
        ),
        Alternative(
            "dependency_version",
            "a pipeline task added in a later transformers",
            "pip install -U transformers; python -c 'from transformers.pipelines import SUPPORTED_TASKS; "
            "print(sorted(SUPPORTED_TASKS))' lists what the installed one has.",
            when=("task_release",),
        ),
        Alternative(
            "dependency_version",
            "a transformers release older than the architecture's mapping into this Auto class",
            "pip install -U transformers (the model card names the release that added the model); "
            "python -c 'import transformers; print(transformers.__version__)' shows the installed one.",
            when=("auto_release",),
        ),
        Alternative(
            "dependency_version",
            "a script written for another trl release (dataset_text_field moved to SFTConfig in 0.9)",
            "Install the trl release the script was written for (one that ran it on 0.9.x, which skipped this check: "
            "pip install 'trl>=0.9.3,<=0.9.6'), or move dataset_text_field into SFTConfig (trl >= 0.9; 'text' by "
            "default from 0.12).",
            when=("trl_release", "trl_release_pasted"),
        ),
        Alternative(
            "dependency_version",
            "a layer type the installed peft does not wrap yet (a quantized or custom Linear, a Conv1d) that a "
            "later peft (with the transformers and bitsandbytes of its time) does",
            "pip install -U peft transformers bitsandbytes (a 4-/8-bit model's Linear4bit / Linear8bitLt need a peft "
            "that imports the installed bitsandbytes: python -c 'import bitsandbytes' must work); a repository's own "
            "quantized layer needs the peft its install guide names.",
            when=("peft_layer_release",),
        ),
        Alternative(
            "dependency_version",
            "an argument of a later (or earlier) ultralytics release than the one installed",
            "pip install -U ultralytics (yolo checks lists the installed release; yolo cfg prints the keys it takes).",
            when=("yolo_release",),
        ),
    ),
    describe=lambda hits, ctx: _awq_layer(hits) or _parallel_layer(hits) or _REFUSED(hits, ctx),
)


def _pad_token(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    model_side = first(hits, "pad_in_model", "")
    return (
        (
            "the model's classification head has no config.pad_token_id, so it cannot find each row's last token in "
            "a batch of more than one"
            if model_side
            else "padding was asked of a tokenizer that has no pad token (GPT-2's, Llama's and most decoder-only "
            "checkpoints' define none)"
        )
        + on_ranks(hits),
        "Give the tokenizer a pad token before tokenizing or collating: tokenizer.pad_token = tokenizer.eos_token "
        "(or tokenizer.add_special_tokens({'pad_token': '[PAD]'}) followed by model.resize_token_embeddings("
        "len(tokenizer))), and tell the model: model.config.pad_token_id = tokenizer.pad_token_id.",
    )


TOKENIZER_PAD_TOKEN = Recogniser(
    kind="tokenizer_pad_token",
    title="a tokenizer without a pad token asked to pad",
    anchors=(
        "Asking to pad but the tokenizer does not have a padding token",
        "Cannot handle batch sizes > 1 if no padding token is defined",
        "You are attempting to pad samples but the tokenizer you are using",
        "and `pad_token_id` is missing in the",
    ),
    templates=(
        "third_party:transformers-asking-to-pad-without-pad-token",
        "third_party:transformers-batch-sizes-without-padding-token",
        "third_party:transformers-collator-pad-without-pad-token",
        "third_party:trl-dpo-padding-value-without-pad-token",
    ),
    facts=(R(r"(?P<pad_in_model>Cannot handle batch sizes > 1 if no padding token is defined)"),),
    describe=_pad_token,
)

RECOGNISERS = (TOKENIZER_PAD_TOKEN, LIBRARY_ARGUMENTS)
