"""A checkpoint that does not load into the model, and the folders ranks write checkpoints to.

Kinds of failure loading a checkpoint: state-dict keys that do not match, a checkpoint without its state; and
the folders ranks write to: one several ranks create at once (CPython's FileExistsError).

The message texts are torch's (``nn/modules/module.py``: ``load_state_dict``; ``serialization.py``) and
transformers' (``integrations/deepspeed.py``: ``deepspeed_load_checkpoint``), as the catalog holds them;
``torch.load``'s weights-only unpickler (``serialization.py``, the default since PyTorch 2.6).
"""

from __future__ import annotations

import posixpath
import re

from torchdoctor.explain.kinds import placement
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    has_fact,
    merged,
    on_ranks,
)

FAMILY = "checkpoints and pretrained models"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the wrappers whose attribute name ends up in front of every key of a state dict saved through them
PREFIXES = (
    ("module.", "DistributedDataParallel / DataParallel"),
    ("_orig_mod.", "torch.compile"),
    ("_fsdp_wrapped_module.", "FSDP"),
    ("_checkpoint_wrapped_module.", "activation checkpointing"),
    # peft/peft_model.py: PeftModel keeps the tuner as base_model, the tuner (tuners_utils.BaseTuner) the model as
    # model
    ("base_model.model.", "PEFT (get_peft_model)"),
)

# the top-level entries a training checkpoint keeps the model's weights under, the likelier first: training
# scripts' own dicts ('model', 'model_state_dict', 'net'), Lightning's and timm's ('state_dict'), DeepSpeed's
# model-states file ('module')
WEIGHT_ENTRIES = ("model", "model_state_dict", "state_dict", "model_state", "module", "net", "network")
# the rest of a training loop's state saved beside them: optimizer, schedulers, counters, arguments, best metric,
# Lightning's own entries
LOOP_STATE = re.compile(
    r"optim|epoch|step|iter|sched|scaler|^amp$|^args$|config|^cfg$|best|hyper_parameters|lightning_version|"
    r"^loops$|^callbacks$"
)

_KEY = re.compile(r'"([^"\n]{1,300})"')

# the entries a training checkpoint is read by, whose KeyError says the file is not that checkpoint (checkpoint_incomplete)
CHECKPOINT_ENTRIES = (
    "state_dict",
    "model_state_dict",
    "model",
    "optimizer",
    "optimizer_state_dict",
    "net",
    "epoch",
    "state_dict_ema",
)


def _listed(hits: list[Hit], key: str) -> list[str]:
    """The keys torch's load_state_dict listed under ``key`` (``missing``: the model's keys the state dict lacks;
    ``unexpected``: the state dict's keys the model lacks), in every hit."""
    return [k for h in hits for k in _KEY.findall(str(h.facts.get(key, "")))]


# the wrappers whose attribute name sits inside a key, where the wrapped submodule is (torch.compile on a
# submodule: "encoder._orig_mod.layer.weight"; FSDP1's units: "layers.0._fsdp_wrapped_module.mlp.weight";
# apply_activation_checkpointing: "layers.0._checkpoint_wrapped_module.mlp.weight"); "module." is read only in
# front, as a model's own submodule may be named "module"
INNER_WRAPPERS = (
    *PREFIXES[1:4],
    # peft/tuners/tuners_utils.py BaseTunerLayer: a LoRA layer keeps the Linear it wraps as base_layer
    ("base_layer.", "PEFT's LoRA layer"),
)
LEADING = ("module.", "base_model.model.")
WRAPPER_NAMES = dict(PREFIXES) | dict(INNER_WRAPPERS)
_INNER = re.compile(r"(?:^|(?<=\.))(" + "|".join(re.escape(p) for p, _ in INNER_WRAPPERS) + ")")


def _leading(key: str) -> tuple[list[str], str]:
    """(the leading wrappers' names in front of ``key``, in order, and the key without them)."""
    found = []
    while True:
        prefix = next((p for p in LEADING if key.startswith(p)), None)
        if prefix is None:
            return found, key
        found.append(prefix)
        key = key.removeprefix(prefix)


def _unwrapped(key: str) -> str:
    """``key`` without the wrappers' names: DDP's leading "module." and the others wherever they sit."""
    return _leading(_INNER.sub("", key))[1]


def _wrappers_of(key: str) -> list[str]:
    """The wrappers' names ``key`` holds (``WRAPPER_NAMES`` order)."""
    found = set(_INNER.findall(key)) | set(_leading(_INNER.sub("", key))[0])
    return [p for p in WRAPPER_NAMES if p in found]


def _wrapper_pair(hits: list[Hit]) -> tuple[str, str, list[str], list[str]] | None:
    """(an unexpected key, the missing key it is, the wrappers only the checkpoint's key holds, those only the
    model's key holds) for the first key of the state dict that is a key the model misses once the wrappers' names
    are taken out of both: one side saved or loaded through a wrapper the other lacks."""
    missing = {_unwrapped(k): k for k in _listed(hits, "missing")}
    for key in _listed(hits, "unexpected"):
        model_key = missing.get(_unwrapped(key))
        if model_key is None or model_key == key:
            continue
        saved, model = _wrappers_of(key), _wrappers_of(model_key)
        return key, model_key, [w for w in saved if w not in model], [w for w in model if w not in saved]
    return None


def _prefixed(hits: list[Hit]) -> tuple[str, str, str] | None:
    """(prefix, wrapper, side) when one side's keys are the other's with a wrapper's prefix: ``checkpoint`` when
    the state dict's (unexpected) keys carry it and, taken off, name a key the model misses (saved through the
    wrapper, loaded into the bare model); ``model`` when the model's (missing) keys carry it and, taken off, name
    a key of the state dict (a bare model's checkpoint loaded into the wrapped model). torch lists the missing keys
    first, the unexpected ones after (nn/modules/module.py load_state_dict), so a prefix seen on either list alone
    does not say which side was wrapped."""
    missing, unexpected = _listed(hits, "missing"), _listed(hits, "unexpected")
    for prefix, wrapper in PREFIXES:
        if {k.removeprefix(prefix) for k in unexpected if k.startswith(prefix)} & set(missing):
            return prefix, wrapper, "checkpoint"
        if {k.removeprefix(prefix) for k in missing if k.startswith(prefix)} & set(unexpected):
            return prefix, wrapper, "model"
    return None


def _training_checkpoint(hits: list[Hit]) -> tuple[str, list[str]] | None:
    """(the entry holding the weights, the top-level keys) when the state dict's unexpected keys are a training
    checkpoint's own: an entry of ``WEIGHT_ENTRIES`` beside the loop's state (``LOOP_STATE``), none a parameter's
    dotted name, or that entry alone (a dict holding only the weights, {'model': ...}). The whole dict was passed
    to load_state_dict, not the weights it holds."""
    unexpected = list(dict.fromkeys(_listed(hits, "unexpected")))
    top = [k for k in unexpected if "." not in k]
    holder = next((entry for entry in WEIGHT_ENTRIES if entry in top), None)
    if holder is None:
        return None
    if unexpected == [holder] or any(LOOP_STATE.search(k) for k in top if k != holder):
        return holder, top
    return None


def _first_entry(hits: list[Hit]) -> str:
    """The key torch 0.x's load_state_dict named when it stopped (``unexpected key "{}" in state_dict``: it
    raised at the first key of the dict the model lacks, so its message names one), when that key is a training
    checkpoint's own entry (a weights entry or the loop's state, no dotted parameter name); "" otherwise."""
    first = next((str(h.facts["first_unexpected"]) for h in hits if h.facts.get("first_unexpected")), "")
    if first and "." not in first and (first in WEIGHT_ENTRIES or LOOP_STATE.search(first)):
        return first
    return ""


def _from_first_entry(summary: str, first: str, hits: list[Hit]) -> tuple[str, str]:
    """torch 0.x stopped at the checkpoint's first entry: the weights are that entry when it is one of
    ``WEIGHT_ENTRIES``, else an entry the message did not reach."""
    if first in WEIGHT_ENTRIES:
        summary += (
            f": the file is likely a whole training checkpoint (torch stopped at its first key, {first!r}, an "
            f"entry checkpoints keep the model's weights under), the weights its {first!r} entry"
        )
        load = f"model.load_state_dict(checkpoint[{first!r}])"
    else:
        summary += (
            f": the file is likely a whole training checkpoint (torch stopped at its first key, {first!r}, the "
            "training loop's state, not a parameter's name)"
        )
        load = "print(list(checkpoint))   # then model.load_state_dict(checkpoint['<the weights' entry>'])"
    fix = (
        "load_state_dict was likely given the training checkpoint itself, a dict of the model's weights beside "
        "the optimizer's and the loop's state; this torch names only the first key it did not expect. Load the "
        "entry that holds the weights (most often 'state_dict' or 'model'):\n"
        "checkpoint = torch.load(path, map_location='cpu')\n" + load
    )
    return summary + on_ranks(hits), fix


def _from_training_checkpoint(summary: str, holder: str, top: list[str], hits: list[Hit]) -> tuple[str, str]:
    shown = ", ".join(repr(k) for k in top[:6]) + (", ..." if len(top) > 6 else "")
    if top == [holder]:
        summary += (
            f": the file is a dict that keeps the model's weights under its one key, {holder!r} (the unexpected "
            "key)"
        )
    else:
        summary += (
            f": the file is a whole training checkpoint (its top-level keys {shown} are the unexpected ones), "
            f"the model's weights are its {holder!r} entry"
        )
    held = "under that key" if top == [holder] else "beside the optimizer's and the loop's state"
    fix = (
        f"load_state_dict was given the dict the weights were saved in, the model's weights {held}, not the "
        f"weights. Load its {holder!r} entry:\n"
        "checkpoint = torch.load(path, map_location='cpu')\n"
        f"model.load_state_dict(checkpoint[{holder!r}])"
    )
    if holder == "state_dict" and any(k in top for k in ("pytorch-lightning_version", "optimizer_states")):
        fix += (
            "\nLightning saved it: its 'state_dict' is the LightningModule's, so a network the LightningModule "
            "holds as an attribute (self.model) has that name in front of each key. Load it with "
            "<YourLightningModule>.load_from_checkpoint(path), or take that name off first (for self.model: "
            "{k.removeprefix('model.'): v for k, v in checkpoint['state_dict'].items()})."
        )
    if holder == "module" and any(k in top for k in ("ds_version", "param_shapes", "buffer_names")):
        fix += (
            "\nDeepSpeed saved it (its model-states file): under ZeRO-3 'module' holds the partitioned "
            "placeholders, not the weights; rebuild them with the zero_to_fp32.py script saved beside the "
            "checkpoint (or deepspeed.utils.zero_to_fp32.get_fp32_state_dict_from_zero_checkpoint(folder))."
        )
    return summary + on_ranks(hits), fix


def _state_dict(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("fsdp_keys"):
        return _fsdp_state_dict(hits, facts["fsdp_keys"])
    if facts.get("adapter_warned") and not facts.get("keys"):
        return _adapter_keys(facts, ctx, hits)
    summary = "the checkpoint's state dict does not match the model" + (
        f" ({facts['model']})" if facts.get("model") else ""
    )
    flat = [k for k in _listed(hits, "unexpected") if re.search(r"(?:^|\.)_?flat_param(?:_\d+)?$", k)]
    if flat:
        return _flat_params(summary, flat, hits)
    checkpoint = _training_checkpoint(hits)
    if checkpoint is not None:
        return _from_training_checkpoint(summary, *checkpoint, hits)
    first = _first_entry(hits)
    if first:
        return _from_first_entry(summary, first, hits)
    found = _prefixed(hits)
    if found is not None and found[2] == "checkpoint":
        prefix, wrapper, _ = found
        summary += f": its keys start with {prefix!r} (saved through {wrapper})"
        # accelerate's prepare() made the wrapper (its launcher or its frames in the log): its own unwrapping
        # (found with accelerate's nlp_example.py saving the prepared model: planted_runs/module_prefix)
        inner = (
            "accelerator.unwrap_model(model).state_dict(), or accelerator.save_model(model, folder)"
            if prefix == "module." and ctx.facts.get("saw_accelerate")
            else "model.module.state_dict() under DDP"
        )
        fix = (
            f"The state dict was saved from the {wrapper} wrapper, so every key starts with {prefix!r}. "
            f"Save the inner model next time ({inner}), and load this one with "
            "the prefix taken off:\n"
            f"state = {{k.removeprefix({prefix!r}): v for k, v in state.items()}}   # then load_state_dict"
            "(state)\n(or torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, "
            f"{prefix!r}))"
        )
        return summary + on_ranks(hits), fix
    if found is not None:
        prefix, wrapper, _ = found
        inner = {
            "module.": "model.module",
            "_orig_mod.": "model._orig_mod",
            "base_model.model.": "model.get_base_model()",
        }.get(prefix, "the wrapped module")
        summary += (
            f": the model's keys start with {prefix!r} (it is wrapped in {wrapper}), the checkpoint's do not "
            "(saved from the bare model)"
        )
        fix = (
            f"The model is wrapped in {wrapper} now, so its keys start with {prefix!r}, and the checkpoint was "
            f"saved from the bare model. Load it into the inner model ({inner}.load_state_dict(state)), or "
            f"before wrapping; or add the prefix: state = {{{prefix!r} + k: v for k, v in state.items()}}."
        )
        return summary + on_ranks(hits), fix
    paired = _wrapper_pair(hits)
    if paired is not None:
        return _wrapped_keys(summary, *paired, hits)
    lora = _lora_side(hits)
    if lora:
        return _lora_keys(summary, lora, hits)
    if facts.get("dcp_missing"):
        return _dcp_missing(summary, str(facts["dcp_missing"]), hits)
    if facts.get("size_param"):
        summary += f": size mismatch for {facts['size_param']}"
        fix = (
            "The checkpoint was saved from a model of another shape (another config: vocabulary, hidden size, "
            "number of classes). Build the model with the checkpoint's own config, or load with "
            "strict=False and leave the mismatched layers (e.g. a new head) to be trained; "
            "transformers: ignore_mismatched_sizes=True."
        )
        return summary + on_ranks(hits), fix
    fix = (
        "Missing / unexpected keys: the checkpoint is from another model or another wrapping. Compare "
        "a few keys of both (list(state)[:5] and list(model.state_dict())[:5]): a 'module.' (DDP), "
        "'_orig_mod.' (torch.compile) or '_fsdp_wrapped_module.' (FSDP) prefix is taken off with "
        "k.removeprefix(...); under FSDP/DCP load with torch.distributed.checkpoint and the same "
        "state_dict_type it was saved with; strict=False only when the missing keys are meant to be new."
    )
    return summary + on_ranks(hits), fix


# the wrappers whose name PEFT's warning or the saved keys a log shows may carry (LEADING's "module." only in front)
_ADAPTER_WRAPPER = re.compile(
    r"(?:^|(?<=[\s.'\"\[(]))(_orig_mod|_fsdp_wrapped_module|_checkpoint_wrapped_module)\.\w"
)


def _adapter_keys(facts: dict, ctx: Context, hits: list[Hit]) -> tuple[str, str]:
    """PEFT's warning that from_pretrained filled none of some of the adapter's keys (peft/peft_model.py): the
    keys are the model's (the warning's list); a wrapper's name on the keys the log shows elsewhere is on the saved
    ones (``key_wrapper``, CONTEXT), one in the warning's list on the model loaded into."""
    listed = str(facts.get("adapter_missing", ""))
    named = re.findall(r"'([^'\n]{1,300})'", listed)
    summary = (
        "PEFT loaded the adapter without its saved weights for some of its layers (Found missing adapter keys"
        + (
            f", {len(named)} of them, e.g. {named[0]!r})"
            if len(named) > 1
            else f": {named[0]!r})"
            if named
            else ")"
        )
    )
    summary += ": they keep their initial values (LoRA's lora_B is zero, so those layers change nothing)"
    on_model = _ADAPTER_WRAPPER.search(listed)
    saved = ctx.facts.get("key_wrapper", "")
    check = (
        "Compare the saved keys (from safetensors import safe_open; print(list(safe_open('adapter_model.safetensors', "
        "'pt').keys())[:5])) with the names the warning lists"
    )
    if on_model:
        wrapper = on_model[1] + "."
        return (
            summary
            + f": the model's keys hold {wrapper!r} ({WRAPPER_NAMES[wrapper]}), so it was wrapped when the "
            "adapter was loaded into it" + on_ranks(hits),
            f"Load the adapter into the unwrapped model (PeftModel.from_pretrained(base_model, adapter_dir) before "
            f"{WRAPPER_NAMES[wrapper]} wraps it), then wrap it. {check}.",
        )
    if saved:
        wrapper = saved + "."
        bare = "k.removeprefix('module.')" if saved == "module" else f"k.replace({wrapper!r}, '')"
        return (
            summary
            + f": the keys this log shows carry {wrapper!r}, the name {WRAPPER_NAMES[wrapper]} puts in them, "
            "so the adapter was saved from the wrapped model and from_pretrained matches none of them"
            + on_ranks(hits),
            f"Save the adapter from the unwrapped model next time (for torch.compile the module from before it, "
            f"model._orig_mod.save_pretrained(dir); under DDP model.module; under FSDP the full state dict, "
            f"accelerator.unwrap_model(model)), and repair this one by taking {wrapper!r} off its keys:\n"
            "from safetensors.torch import load_file, save_file\n"
            "sd = load_file('adapter_model.safetensors')\n"
            f"save_file({{{bare}: v for k, v in sd.items()}}, 'adapter_model.safetensors')\n{check}.",
        )
    if facts.get("adapter_in_prefix"):
        prefix = facts["tuner_prefix"]
        return (
            summary
            + f": the adapter's name {facts['adapter_in_prefix']!r} holds the tuner's prefix {prefix!r}, "
            "which PEFT's own warning names as a reason it may miss them" + on_ranks(hits),
            f"Load (and save) the adapter under a name without {prefix!r} (adapter_name='default', the default, or "
            f"any name not holding {prefix!r}): PEFT finds an adapter's weights by the prefix in their keys. {check}.",
        )
    return (
        summary + on_ranks(hits),
        f"PeftModel.from_pretrained fills the adapter's layers by the names of the saved keys. {check}: a wrapper's "
        "name in them ('_orig_mod.' torch.compile, 'module.' DDP, '_fsdp_wrapped_module.' / "
        "'_checkpoint_wrapped_module.' FSDP and activation checkpointing) means the adapter was saved from the "
        "wrapped model: save from the unwrapped one, or take the name off; other layer names mean another base "
        "model or target_modules than the adapter was trained with (its adapter_config.json); another "
        "adapter name or peft release than the save's: load it under the name it was saved with, with the same "
        "peft release.",
    )


# peft/tuners/lora/layer.py: a LoRA layer's own parameters (lora_A / lora_B, lora_embedding_A / _B, DoRA's
# lora_magnitude_vector), named under the adapter ("q_proj.lora_A.default.weight")
_LORA_KEY = re.compile(r"(?:^|\.)lora_(?:A|B|embedding_A|embedding_B|magnitude_vector)(?:\.|$)")


def _lora_side(hits: list[Hit]) -> str:
    """ "checkpoint" when every key the model did not expect is a LoRA layer's and the model misses none of them
    (an adapter's weights loaded into a model without LoRA layers); "model" when every key the checkpoint lacks is
    a LoRA layer's (a base model's weights loaded after get_peft_model); "" otherwise."""
    missing, unexpected = _listed(hits, "missing"), _listed(hits, "unexpected")
    if (
        unexpected
        and all(_LORA_KEY.search(k) for k in unexpected)
        and not any(_LORA_KEY.search(k) for k in missing)
    ):
        return "checkpoint"
    if missing and all(_LORA_KEY.search(k) for k in missing) and not unexpected:
        return "model"
    return ""


def _lora_keys(summary: str, side: str, hits: list[Hit]) -> tuple[str, str]:
    if side == "checkpoint":
        return (
            summary + ": the keys it did not expect are all LoRA layers' (lora_A / lora_B): a PEFT adapter's "
            "weights loaded into a model without its LoRA layers" + on_ranks(hits),
            "Load an adapter into the PEFT model it was trained with: PeftModel.from_pretrained(base_model, "
            "adapter_dir) (or get_peft_model(base_model, the same LoraConfig), then load_state_dict / "
            "set_peft_model_state_dict); for a plain model, merge first and save the merged weights "
            "(model.merge_and_unload().state_dict()).",
        )
    return (
        summary
        + ": the keys it misses are all LoRA layers' (lora_A / lora_B): a checkpoint of the base model "
        "loaded into the model after get_peft_model added them" + on_ranks(hits),
        "The LoRA weights are meant to start fresh: load the base checkpoint into the model before get_peft_model "
        "(or into model.get_base_model()), or load with strict=False and check that only lora_ keys are missing; to "
        "resume an adapter, load the adapter's own saved weights (PeftModel.from_pretrained(base_model, "
        "adapter_dir, is_trainable=True)).",
    )


def _wrapped_keys(
    summary: str, key: str, model_key: str, saved: list[str], model: list[str], hits: list[Hit]
) -> tuple[str, str]:
    """The state dict's keys are the model's with other wrappers' names in them (``_wrapper_pair``): a wrapper
    inside the keys (a compiled, FSDP-wrapped or checkpoint-wrapped submodule), or one on each side."""
    names = WRAPPER_NAMES

    def said(wrappers: list[str]) -> str:
        return " and ".join(f"{w!r} ({names[w]})" for w in wrappers)

    sides = []
    if saved:
        sides.append(f"the checkpoint's hold {said(saved)}")
    if model:
        sides.append(f"the model's hold {said(model)}")
    summary += (
        f": the keys are the same names with wrappers' names in them ({key!r} in the checkpoint, {model_key!r} in "
        f"the model): {', '.join(sides)}"
    )
    inner = [w for w in saved + model if w not in LEADING]
    pattern = "|".join(re.escape(w.rstrip(".")) for w in inner)
    bare = f"re.sub(r'(^|\\.)(?:{pattern})\\.', r'\\1', k)" if inner else "k"
    for prefix in LEADING:
        if prefix in saved + model:
            bare += f".removeprefix({prefix!r})"
    fix = (
        "One side was saved or loaded through a wrapper the other was not (torch.compile on a submodule puts "
        "'_orig_mod.' where that submodule sits, FSDP1 '_fsdp_wrapped_module.' in each wrapped unit, "
        "apply_activation_checkpointing '_checkpoint_wrapped_module.', PEFT 'base_model.model.' in front and "
        "'base_layer.' in each LoRA layer, DDP 'module.' in front). Save from the "
        "unwrapped model next time (the module before torch.compile / DDP, or get_model_state_dict(model), which "
        "leaves the wrappers' names out), and load this one by matching the names without them:\n"
        f"import re; bare = lambda k: {bare}\n"
        "own = {bare(k): k for k in model.state_dict()}\n"
        "model.load_state_dict({own[bare(k)]: v for k, v in state.items() if bare(k) in own})"
    )
    if {"base_model.model.", "base_layer."} & set(saved):
        fix += (
            "\nThe checkpoint is a PEFT model's: its lora_A / lora_B weights have no place in the bare model and "
            "the renaming above drops them. To keep them, load it into the PEFT model (get_peft_model(model, "
            "the same LoraConfig), then load_state_dict; PeftModel.from_pretrained for a saved adapter), or save "
            "the merged weights (model.merge_and_unload().state_dict())."
        )
    return summary + on_ranks(hits), fix


_LIST_KEYS = (
    "list the checkpoint's keys with torch.distributed.checkpoint.FileSystemReader(path).read_metadata()"
    ".state_dict_metadata.keys() and compare them with the dict's"
)


def _dcp_missing(summary: str, key: str, hits: list[Hit]) -> tuple[str, str]:
    """torch.distributed.checkpoint's load planner found no entry in the checkpoint for ``key``, a key of the dict
    given to dcp.load (flattened: "optimizer.state.0.step" is state_dict["optimizer"]["state"][0]["step"])."""
    summary += f": the dict given to dcp.load asks for {key!r}, which the checkpoint does not hold"
    if re.search(r"(?:^|\.)state\.\d+\.", key):
        return (
            summary
            + ": an optimizer state keyed by parameter index (optimizer.state_dict()), where distributed "
            "checkpoints keep optimizer state keyed by parameter name (get_optimizer_state_dict, "
            "FSDP.optim_state_dict)" + on_ranks(hits),
            "Load the optimizer state in the form it was saved: build the dict with the function that saved it, "
            "state = {'optimizer': get_optimizer_state_dict(model, optimizer)}; dcp.load(state, checkpoint_id=path); "
            "set_optimizer_state_dict(model, optimizer, state['optimizer']) (FSDP1: FSDP.optim_state_dict(model, "
            "optimizer), then FSDP.optim_state_dict_to_load). accelerate's load_fsdp_optimizer loads a "
            "SHARDED_STATE_DICT optimizer into optimizer.state_dict() this way (huggingface/accelerate#3971, FSDP2): "
            "upgrade accelerate, or save with fsdp_state_dict_type: FULL_STATE_DICT; to check, "
            + _LIST_KEYS
            + ".",
        )
    wrappers = _wrappers_of(key)
    if wrappers:
        names = WRAPPER_NAMES
        return (
            summary
            + f": the key holds {', '.join(f'{w!r} ({names[w]})' for w in wrappers)}, a wrapper's name "
            "the saved keys likely lack" + on_ranks(hits),
            "The dict given to dcp.load was taken from the wrapped model (model.state_dict() of a compiled, DDP- or "
            "checkpoint-wrapped model) and the checkpoint from the unwrapped one, or the other way. Build both the "
            "saved and the loaded dict with get_model_state_dict(model) / get_state_dict(model, optimizer), which "
            "leave the wrappers' names out, or take both from the same module (the one before torch.compile); "
            "to check, " + _LIST_KEYS + ".",
        )
    return (
        summary + on_ranks(hits),
        "dcp.load fills in exactly the keys of the dict it is given: " + _LIST_KEYS + ". Another nesting (a "
        "{'model': ..., 'optimizer': ...} dict on one side, the bare model state dict on the other), another "
        "model or another wrapping leaves keys without an entry: build the dict the way the save did "
        "(get_state_dict(model, optimizer) on both sides); if the missing entries are meant to be new (a head added "
        "since), load the rest with planner=DefaultLoadPlanner(allow_partial_load=True).",
    )


def _flat_params(summary: str, flat: list[str], hits: list[Hit]) -> tuple[str, str]:
    """The checkpoint holds FSDP1's flat parameters: one "<unit>._flat_param" (``flat_param_0`` in fairscale and
    torch 1.11-1.12) per wrapped unit, as FSDP's LOCAL_STATE_DICT (or an FSDP model's own state_dict() before
    torch 1.12 made the full one its default) saves them."""
    shown = ", ".join(repr(k) for k in flat[:2]) + (", ..." if len(flat) > 2 else "")
    return (
        summary
        + f": the checkpoint holds FSDP's flattened parameters ({shown}), one flat shard per wrapped unit "
        "saved as a local state dict, not the model's own parameter names" + on_ranks(hits),
        "A local FSDP state dict loads only into the same FSDP wrapping (same auto-wrap policy, world size and "
        "use_orig_params) under StateDictType.LOCAL_STATE_DICT. To get a state dict a bare model loads, wrap the "
        "model as it was saved, load it that way, and save again as a full state dict: with "
        "FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=True, "
        "rank0_only=True)): state = model.state_dict() (or get_model_state_dict(model, "
        "options=StateDictOptions(full_state_dict=True))); accelerate: fsdp_state_dict_type: FULL_STATE_DICT, or "
        "`accelerate merge-weights` for a sharded checkpoint folder.",
    )


def _fsdp_state_dict(hits: list[Hit], said: str) -> tuple[str, str]:
    """FSDP's (or accelerate's FSDP loader's) own check that the state dict holds what this wrapping keeps."""
    return (
        "the state dict loaded into the FSDP model does not hold the keys this wrapping expects: "
        + " ".join(said.split())[:200]
        + on_ranks(hits),
        "FSDP reads a state dict in the form of the state_dict_type it was saved with: a LOCAL_STATE_DICT holds each "
        "unit's flat_param, a SHARDED_STATE_DICT the original names as shards, a FULL_STATE_DICT the whole model. "
        "Load with the type (and the auto-wrap policy and use_orig_params) the checkpoint was saved with "
        "(FSDP.set_state_dict_type(model, StateDictType.<as saved>), accelerate's fsdp_state_dict_type), or load "
        "a full state dict into the model before wrapping; torch.distributed.checkpoint (dcp.load with "
        "get_state_dict / set_state_dict) takes sharded checkpoints across wrappings. A checkpoint of another model "
        "(another config, a PEFT adapter beside the base weights) misses keys the same way.",
    )


STATE_DICT_KEYS = Recogniser(
    kind="state_dict_keys",
    title="state dict does not match the model",
    anchors=(
        "Error(s) in loading state_dict",
        "Missing key(s) in state_dict",
        "Unexpected key(s) in state_dict",
        "in state_dict",
        # torch.distributed.checkpoint: a key of the model the checkpoint lacks, a key the model lacks
        "Missing key in checkpoint state_dict",
        " is missing keys: ",
        "An unexpected key, ",
        # lightning/fabric/strategies/strategy.py, model_parallel.py: fabric.load(strict=True), a key it lacks
        "that does not exist in the loaded checkpoint",
        # torch/distributed/fsdp/_state_dict_utils.py: the keys a local or sharded FSDP state dict must hold
        "is in the state_dict but the state_dict only has",
        "No `FlatParameter` in `state_dict` for this FSDP instance",
        # accelerate/utils/fsdp_utils.py: a full state dict without a key of the sharded model
        "found in sharded model state dict but missing from full state dict",
        # peft/peft_model.py PeftModel.from_pretrained: the adapter's own keys the saved state dict did not fill
        "Found missing adapter keys",
    ),
    match=R(
        r"[Kk]ey\(s\) in state_dict|loading state_dict|(?:unexpected|missing) key ['\"][^'\"\n]{1,300}['\"] in state_dict|"
        r"Missing key in checkpoint state_dict: |Checkpoint at [^\n]{1,300} is missing keys: |"
        r"An unexpected key, [^\n]{1,300}, exists\. FQN is |"
        r"contains a key '[^'\n]{1,300}' that does not exist in the loaded checkpoint|"
        r"FSDP assumes [^\n]{1,300} is in the state_dict but the state_dict only has|"
        r"No `FlatParameter` in `state_dict` for this FSDP instance but it has parameters|"
        r"Parameter '[^'\n]{1,300}' found in sharded model state dict but missing from full state dict|"
        r"Found missing adapter keys"
    ),
    templates=(
        "torch:error-in-loading-state-dict-for",
        "torch_native:missing-keys-in-state-dict",
        "torch_native:unexpected-keys-in-state-dict",
        "torch_native:unexpected-key-in-state-dict-old",
        "torch:missing-key-in-checkpoint-state-dict",  # distributed/checkpoint/default_planner.py
        "torch:checkpoint-at-is-missing-keys",  # distributed/checkpoint/_experimental/checkpointer.py
        "torch:an-unexpected-key-exists-fqn-is",  # distributed/checkpoint/state_dict.py set_state_dict
        "lightning:the-model-contains-key-that-does",
        "lightning:the-requested-state-contains-key-that",
        "torch:fsdp-assumes-is-in-the-state",  # distributed/fsdp/_state_dict_utils.py
        "torch:no-flatparameter-in-state-dict-for",
        "accelerate:parameter-found-in-sharded-model-state",  # accelerate/utils/fsdp_utils.py
        "third_party:peft-found-missing-adapter-keys",  # peft/peft_model.py
    ),
    span=4,
    facts=(
        R(r"Error\(s\) in loading state_dict for (?P<model>\w{1,100})"),
        R(r"(?P<keys>(?:Missing|Unexpected) key\(s\) in state_dict: [^\n]{0,2000})"),
        R(r"Missing key\(s\) in state_dict: (?P<missing>[^\n]{0,4000})"),
        R(r"Unexpected key\(s\) in state_dict: (?P<unexpected>[^\n]{0,4000})"),
        R(r"(?P<keys>(?:unexpected|missing) key ['\"][^'\"\n]{1,300}['\"] in state_dict)"),
        # torch 0.x: the first key of the dict the model lacks, named alone
        R(r'unexpected key "(?P<first_unexpected>[^"\n]{1,300})" in state_dict'),
        R(
            r"(?P<keys>Missing key in checkpoint state_dict: [^\n]{1,300}|is missing keys: [^\n]{1,2000}|"
            r"An unexpected key, [^\n]{1,300}, exists)"
        ),
        R(r"size mismatch for (?P<size_param>[\w.]{1,200}):"),
        # torch/distributed/checkpoint/default_planner.py create_local_plan: the fqn of the dict given to dcp.load
        R(r"Missing key in checkpoint state_dict: (?P<dcp_missing>[^\s]{1,300}?)\.?(?:\s|$)"),
        R(r"(?P<keys>contains a key '[^'\n]{1,300}' that does not exist in the loaded checkpoint)"),
        R(
            r"(?P<fsdp_keys>FSDP assumes [^\n]{1,300} is in the state_dict but the state_dict only has[^\n]{0,300}|"
            r"No `FlatParameter` in `state_dict` for this FSDP instance but it has parameters|"
            r"Parameter '[^'\n]{1,300}' found in sharded model state dict but missing from full state dict[^\n]{0,200})"
        ),
        R(r"(?P<adapter_warned>Found missing adapter keys)"),
        R(r"Found missing adapter keys while loading the checkpoint: (?P<adapter_missing>[^\n]{0,4000})"),
        R(
            r"Adapter name '(?P<adapter_in_prefix>[^'\n]{1,100})' should not be contained in the prefix "
            r"'(?P<tuner_prefix>[^'\n]{1,40})'"
        ),
    ),
    # PEFT's missing adapter keys are a warning: the run goes on, and an error the log shows leads
    fallback_facts=("adapter_warned",),
    # "Error(s) in loading state_dict" is printed for a wrapper's key prefix and for a checkpoint of another
    # model alike: certain only when one list's keys are the other's with a known prefix (which side carries it
    # says whether the checkpoint or the model was wrapped; a prefix on one list alone, or on a key the other
    # list does not pair, is likely)
    confirm=lambda hits, ctx: _prefixed(hits) is not None or _wrapper_pair(hits) is not None,
    # load_state_dict's list holding only a copy that raised (torch_native:while-copying-the-parameter-named): the
    # keys matched and the copy failed, the exception it quotes is the cause (a DTensor parameter given a plain
    # tensor: dtensor_mixed_operands; a meta tensor: meta_weights_not_loaded), not a state dict of other keys
    reject=R(
        r"\A(?![\s\S]*(?:[Kk]ey\(s\) in state_dict|size mismatch for|(?:unexpected|missing) key ['\"]))"
        r"[\s\S]*While (?:copying|swapping) the parameter named "
    ),
    describe=_state_dict,
)


def _packed_4bit(saved: str, model: str) -> str:
    """Which side holds bitsandbytes 4-bit storage: ``Params4bit`` packs a weight of n elements into a uint8
    tensor of shape [ceil(n / 2), 1], and only a Linear's 2-D weight; "model", "checkpoint" or "" (neither)."""
    for side, packed, full in (("model", model, saved), ("checkpoint", saved, model)):
        dims = re.fullmatch(r"torch\.Size\(\[(\d+), 1\]\)", packed.strip())
        weight = re.fullmatch(r"torch\.Size\(\[(\d+), (\d+)\]\)", full.strip())
        if dims and weight and min(int(weight[1]), int(weight[2])) > 1:
            if int(dims[1]) == (int(weight[1]) * int(weight[2]) + 1) // 2:
                return side
    return ""


def _empty_shard(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    """The checkpoint's tensor is [0, <rest>] where the model's is [M, <rest>]: a rank's local shard of a tensor
    split on dim 0 over more ranks than it has rows (DTensor's Shard(0), FSDP2's sharding, uneven), kept as the shard
    where the full tensor was meant."""
    return (
        f"the checkpoint's {facts.get('param', '?')} is an empty shard ({facts.get('saved_shape', '?')} against "
        f"the model's {facts.get('model_shape', '?')}): a rank's part of a tensor split on its first dimension "
        "over more ranks than it has rows (FSDP2's fully_shard, DTensor Shard(0)), where the full tensor was meant"
        + on_ranks(hits),
        "A parameter with fewer rows than the ranks that shard it leaves some ranks an empty shard, and a state dict "
        "taken per rank (a DTensor's to_local(), an FSDP2 model's state_dict() saved with torch.save) keeps it. Save "
        "the full tensors (get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, "
        "cpu_offload=True)), or v.full_tensor()), and load a full state dict into the sharded model with "
        "set_model_state_dict(model, full_sd, options=StateDictOptions(full_state_dict=True, "
        "broadcast_from_rank0=True)); torch's own full-state-dict load into FSDP2 with tensor parallelism failed "
        "this way on such parameters (pytorch/pytorch#136228): update torch.",
    )


def _model_mismatch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("empty_shard"):
        return _empty_shard(facts, hits)
    packed = _packed_4bit(facts.get("saved_shape", ""), facts.get("model_shape", ""))
    if packed:
        quantized, plain = (
            ("this model", "the checkpoint") if packed == "model" else ("the checkpoint", "this model")
        )
        summary = (
            f"size mismatch for {facts.get('param', '?')}: {quantized} holds it as bitsandbytes 4-bit storage "
            f"({facts.get('model_shape' if packed == 'model' else 'saved_shape')}, half its "
            f"{facts.get('saved_shape' if packed == 'model' else 'model_shape')} elements packed in bytes), "
            f"{plain} as the unquantized weight: the same model, one side quantized"
        )
        fix = (
            "A model quantized with bitsandbytes (load_in_4bit / BitsAndBytesConfig, Lightning's "
            "BitsandbytesPrecision) stores each Linear weight packed as [n/2, 1] bytes, so a state dict of the "
            "full-precision weights cannot be copied into it, nor a quantized one into a plain model. Load the "
            "weights before quantizing (from_pretrained(path, quantization_config=...) quantizes as it loads; "
            "Lightning: load the checkpoint into the model before the precision plugin converts it), or save "
            "and load both sides in the same form (dequantize, or merge a LoRA adapter into the unquantized base "
            "model)."
        )
        return summary + on_ranks(hits), fix
    summary = (
        f"the checkpoint is from a model of another shape: size mismatch for {facts.get('param', '?')} "
        f"(checkpoint {facts.get('saved_shape', '?')}, this model {facts.get('model_shape', '?')})"
    )
    fix = (
        "The weights were saved from another model (another version, config or architecture: vocabulary, "
        "hidden size, number of classes). Build the model with the checkpoint's own config, or take the "
        "checkpoint that matches this code; to keep the rest and train the mismatched layers anew (a new "
        "head), load with strict=False after dropping them (transformers: ignore_mismatched_sizes=True)."
    )
    return summary + on_ranks(hits), fix


MODEL_CHECKPOINT_MISMATCH = Recogniser(
    # torch nn/modules/module.py _load_from_state_dict: "size mismatch for {}: copying a param with shape {}
    # from checkpoint, the shape in current model is {}."
    kind="model_checkpoint_mismatch",
    title="checkpoint of a model of another shape",
    anchors=("size mismatch for", "Size mismatch between saved ", "Trying to set a tensor of shape"),
    templates=(
        "torch_native:size-mismatch-for",
        # torch/distributed/checkpoint/default_planner.py: a distributed checkpoint loaded into another shape
        "torch:size-mismatch-between-saved-and-current",
        # accelerate/utils/modeling.py set_module_tensor_to_device: a checkpoint's tensor into a parameter of
        # another shape (from_pretrained with device_map / low_cpu_mem_usage, load_checkpoint_and_dispatch)
        "accelerate:trying-to-set-tensor-of-shape",
    ),
    match=R(
        r"size mismatch for (?P<param>[\w.]{1,200}): copying a param with shape (?P<saved_shape>[^\n]{1,100}?) "
        r"from checkpoint, the shape in current model is (?P<model_shape>[^\n]{1,100}?)\.?$|"
        r"Size mismatch between saved [^\n]{1,100} and current: [^\n]{1,100} for [\w.]{1,200}|"
        r"Trying to set a tensor of shape [^\n]{1,100} in \"[^\"\n]{1,200}\" \(which has shape"
    ),
    facts=(
        # an empty first dimension in the checkpoint, the rest the model's: one rank's empty shard
        R(
            r"(?P<empty_shard>copying a param with shape torch\.Size\(\[0, (?P<shard_rest>\d[\d, ]{0,60})\]\) from "
            r"checkpoint, the shape in current model is torch\.Size\(\[[1-9]\d{0,9}, (?P=shard_rest)\]\))"
        ),
        R(
            r"Size mismatch between saved (?P<saved_shape>[^\n]{1,100}?) and current: (?P<model_shape>[^\n]{1,100}?) "
            r"for (?P<param>[\w.]{1,200})"
        ),
        R(
            r"(?P<accelerate_set>Trying to set a tensor of shape) (?P<saved_shape>torch\.Size\(\[[^\]\n]{0,100}\]\)) in "
            r"\"(?P<param>[^\"\n]{1,200})\" \(which has shape (?P<model_shape>torch\.Size\(\[[^\]\n]{0,100}\]\))\)"
        ),
    ),
    # a parameter of shape [0] in the model is a ZeRO-3 partition, not another architecture (kinds/deepspeed.py)
    reject=R(r"the shape in current model is torch\.Size\(\[0\]\)|\(which has shape torch\.Size\(\[0\]\)\)"),
    absorbs=("state_dict_keys",),
    # accelerate's check is also what a quantized model's packed weights (bitsandbytes' [N, 1] uint8 storage)
    # print when the releases of transformers, accelerate and bitsandbytes do not fit together: likely
    # an empty shard in the checkpoint is a sharding's (or torch's own FSDP2 + TP load's) doing: likely
    confirm=lambda hits, ctx: any(
        "accelerate_set" not in h.facts and "empty_shard" not in h.facts for h in hits
    ),
    also=(
        Alternative(
            "library_version_bug",
            "a quantized model (bitsandbytes packs 4-/8-bit weights into other shapes) loaded by releases of "
            "transformers, accelerate and bitsandbytes that do not fit together",
            "Update transformers, accelerate and bitsandbytes together (pip install -U transformers accelerate "
            "bitsandbytes), or load the model unquantized to check the checkpoint itself.",
            when=("accelerate_set",),
        ),
        Alternative(
            "library_version_bug",
            "torch's own full-state-dict load into FSDP2 with tensor parallelism, on parameters with fewer rows "
            "than ranks (pytorch/pytorch#136228)",
            "Update torch; until then pad such parameters to a multiple of the data-parallel size, or keep them "
            "out of the sharding.",
            when=("empty_shard",),
        ),
    ),
    describe=_model_mismatch,
)


def _incomplete(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("ckpt_entry"):
        facts["ckpt_key"], facts["ckpt_dict"] = facts["ckpt_entry"], facts["ckpt_named"]
    if facts.get("ckpt_key"):
        key = facts["ckpt_key"]
        return (
            f"the file loaded as a checkpoint has no '{key}' entry ({facts['ckpt_dict']}['{key}']): likely a "
            "weights-only file where the code resumes from a training checkpoint" + on_ranks(hits),
            f"The code reads {facts['ckpt_dict']}['{key}'] from what torch.load returned, so it expects a dict of "
            "states (model, optimizer, epoch) that its own save wrote; the file given holds something else, most "
            "often the bare weights (a state_dict saved alone, a pretrained file such as torchvision's, the 'best "
            "model' beside the training state). Resume from the file the training loop saved (its latest_state / "
            f"checkpoint file, the one with '{key}'), or load plain weights with "
            "model.load_state_dict(torch.load(path)) and start the optimizer afresh.",
        )
    path = facts.get("path", "").strip()
    summary = "DeepSpeed could not resume from the checkpoint" + (f" {path}" if path else "")
    if facts.get("weights_only_ckpt"):
        return (
            f"Lightning's checkpoint holds only the model, no {facts['weights_only_ckpt']} state to resume"
            + on_ranks(hits),
            "The checkpoint has the weights but not the optimizer, scheduler and loop state that "
            "Trainer.fit(ckpt_path=...) restores: ModelCheckpoint(save_weights_only=True) writes such files (so does "
            "other code saving only a state_dict, or a converted checkpoint). To resume, save full "
            "checkpoints (save_weights_only=False); to start from these weights, load them into the model "
            "(LightningModule.load_from_checkpoint(path) or model.load_state_dict(torch.load(path)['state_dict'])) "
            "and call fit() without ckpt_path.",
        )
    if facts.get("path"):
        # transformers' deepspeed_load_checkpoint raises it only where the folder HAS global_step* folders and
        # DeepSpeed's engine.load_checkpoint returned None: no 'latest' file (written last, after every rank's
        # states, by save_checkpoint) or no state it could read
        return (
            summary
            + ": it has global_step* folders but DeepSpeed found no 'latest' file or no states to read in "
            "them: saved without the training state (save_only_model), or a save that did not finish"
            + on_ranks(hits),
            "transformers raises this only for a folder that has global_step*/ folders, when DeepSpeed's "
            "load_checkpoint finds no 'latest' file there (DeepSpeed's warning 'Unable to find latest file at' just "
            "above) or no states it can read. Two causes print it: a checkpoint saved with save_only_model=True "
            "(--save_only_model), which keeps the weights and not the optimizer states: save full checkpoints "
            "(save_only_model=False) to resume, or start from these weights (from_pretrained) without "
            "resume_from_checkpoint; or a save that did not finish (the job killed, or the disk full, while the "
            "Trainer wrote it: DeepSpeed writes 'latest' last, and resume_from_checkpoint=True picks the newest "
            "checkpoint-N folder whatever its state): ls the folder, and resume from the checkpoint before it "
            "(resume_from_checkpoint=<output_dir>/checkpoint-M) or delete the partial one.",
        )
    if facts.get("missing_state"):
        summary = f"DeepSpeed's checkpoint lacks {facts['missing_state'].strip()}"
    elif facts.get("no_latest"):
        summary = (
            f"DeepSpeed found no 'latest' file in the checkpoint folder: {facts['no_latest'].strip()[:200]}"
        )
    fix = (
        "The checkpoint folder has no DeepSpeed state (no global_step*/ folder with the optimizer and model "
        "states, no 'latest' file): it was saved with save_only_model=True (--save_only_model), or only the "
        "weights were kept. Save full checkpoints (save_only_model=False) to resume; to start from these "
        "weights alone, load them as the model (from_pretrained) and do not pass resume_from_checkpoint."
    )
    return summary + on_ranks(hits), fix


CHECKPOINT_INCOMPLETE = Recogniser(
    kind="checkpoint_incomplete",
    title="checkpoint without its training state",
    anchors=(
        "[deepspeed] failed to resume from checkpoint",
        "Unable to find latest file at",
        "_optim_states.pt",
        "_model_states.pt",
        "state but checkpoint contains only the model",
        # a script's own resume: CPython's KeyError (Objects/dictobject.c) on the key it reads from what
        # torch.load returned, the line above it in the traceback: a weights-only file where a training
        # checkpoint (a dict of state dicts) was expected
        "load_state_dict(",
        # the same lookup assigned first (checkpoint = checkpoint['state_dict']: mit-han-lab/temporal-shift-module#81)
        *(f"{q}{key}{q}]" for key in CHECKPOINT_ENTRIES for q in "'\""),
    ),
    templates=(
        "transformers:deepspeed-failed-to-resume-from-checkpoint",
        "deepspeed:unable-to-find-latest-file-at",  # deepspeed/runtime/engine.py load_checkpoint without a tag
        # the per-rank files of a DeepSpeed checkpoint (engine.py _get_ckpt_name / _get_zero_ckpt_name;
        # utils/zero_to_fp32.py counts them)
        "deepspeed:expected-of-optim-states-pt-under",
        "third_party:deepspeed-model-states-file",
        # lightning/pytorch/trainer/connectors/checkpoint_connector.py restore_optimizers_and_schedulers: a
        # checkpoint with only the model (ModelCheckpoint(save_weights_only=True) writes them) given to fit(ckpt_path=)
        "lightning:trying-to-restore-optimizer-state-but",
        "lightning:trying-to-restore-learning-rate-scheduler",
    ),
    # a state file named in an error that says it is not there (the traceback's own lines name them too)
    match=R(
        r"failed to resume|Unable to find latest file|state but checkpoint contains only the model|"
        r"(?:No such file or directory|not found|does not exist|Expected \d+ of)[^\n]{0,300}_(?:optim|model)_states\.pt|"
        r"_(?:optim|model)_states\.pt[^\n]{0,60}(?:No such file|not found|does not exist)|"
        # load_state_dict(ckpt['key']) (Lightning's saving.py: load_state_dict(checkpoint['state_dict'], strict=...))
        r"load_state_dict\((?P<ckpt_dict>[\w.]{1,60}|torch\.load\([^\n]{0,200}?\))\[['\"](?P<ckpt_key>\w{1,60})['\"]\](?:\)|, ?[\w=]{1,40}\))\s*\n"
        r"\s*KeyError: ['\"](?P=ckpt_key)['\"]|"
        # or assigned first, from a checkpoint-like name
        r"=\s*(?P<ckpt_named>\w{0,40}(?:checkpoint|ckpt|state|sd|weights?|loaded|pretrained)\w{0,40})\[['\"]"
        rf"(?P<ckpt_entry>{'|'.join(CHECKPOINT_ENTRIES)})['\"]\]\s*\n\s*KeyError: ['\"](?P=ckpt_entry)['\"]"
    ),
    span=1,
    facts=(
        R(r"failed to resume from checkpoint (?P<path>\S{1,500})"),
        R(r"(?P<missing_state>[\w.\-]{0,80}_(?:optim|model)_states\.pt)"),
        R(r"Unable to find latest file at (?P<no_latest>[^\n,]{1,300})"),
        R(
            r"Trying to restore (?P<weights_only_ckpt>optimizer|learning rate scheduler) state but checkpoint "
            r"contains only the model"
        ),
    ),
    # a missing per-rank file is also what a world size other than the saved one asks for, and a wrong path
    # what a missing 'latest' says; the Trainer's own "failed to resume" is a checkpoint without its training state
    # or a save cut short before DeepSpeed wrote 'latest' (its fix says both): certain only with Lightning's line
    # that says the checkpoint holds only the model
    confirm=lambda hits, ctx: any("weights_only_ckpt" in h.facts for h in hits),
    also=(
        Alternative(
            "checkpoint_world_size",
            "a resume with another number of GPUs than the checkpoint was saved with (ZeRO's per-rank files)",
            "Resume with the number of GPUs the checkpoint was saved with (count its zero_pp_rank_*_optim_states.pt "
            "files), or convert it to a universal checkpoint (python -m deepspeed.checkpoint.ds_to_universal) "
            'and load it with "checkpoint": {"load_universal": true}.',
            when=("missing_state",),
        ),
        Alternative(
            "model_checkpoint_mismatch",
            "a checkpoint of another version of the code, which stored its states under other names",
            "Print the checkpoint's keys (print(torch.load(path, map_location='cpu').keys())): if they are "
            "another version's names for the same states, read those names, or use the code's release that "
            "saved it.",
            when=("ckpt_key", "ckpt_entry"),
        ),
    ),
    describe=_incomplete,
)


def _device_map(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    device = facts.get("saved_device", "a CUDA device").strip()
    summary = f"the checkpoint was saved on {device}, which this machine does not have" + (
        f" (it sees {facts['count']} GPU(s))" if facts.get("count") else " (no CUDA here)"
    )
    fix = (
        "torch.load puts every tensor back on the device it was saved from unless told otherwise: load it "
        "onto the CPU and move the model after, torch.load(path, map_location='cpu'), or straight onto this "
        "rank's GPU: torch.load(path, map_location=f'cuda:{LOCAL_RANK}'). Save from model.cpu() (or rank 0's "
        "state_dict moved to CPU) to make checkpoints portable."
    )
    return summary + on_ranks(hits), fix


CHECKPOINT_DEVICE_MAP = Recogniser(
    kind="checkpoint_device_map",
    title="checkpoint saved on a device this machine lacks",
    anchors=("Attempting to deserialize object on",),
    templates=(
        "torch:attempting-to-deserialize-object-on-device",
        "torch:attempting-to-deserialize-object-on-device-2",
    ),
    # both of torch.load's variants: no CUDA here, or a device index past this machine's last GPU
    match=R(r"is_available\(\) is False|device_count\(\) is \d+"),
    facts=(
        R(r"deserialize object on (?:a )?(?P<saved_device>(?:CUDA|cuda) device(?: \d+)?)"),
        R(r"device_count\(\) is (?P<count>\d+)"),
    ),
    absorbs=("cuda_unavailable",),
    # torch.load's first variant ("... but torch.cuda.is_available() is False") is printed on a machine that
    # has no GPU and on one whose GPU this torch cannot use (a CPU-only wheel, a container started without its
    # GPUs, a driver that is not loaded): the message cannot tell them apart, so only the second variant (an
    # index past device_count()) is certain
    confirm=lambda hits, ctx: any("count" in h.facts for h in hits),
    also=(
        Alternative(
            "cuda_unavailable",
            "a machine meant to run on its GPU where this torch sees none (a CPU-only torch, a container "
            "without its GPUs, no driver loaded)",
            "Check python -c 'import torch; print(torch.__version__, torch.version.cuda, "
            "torch.cuda.is_available())': a version without +cuXXX (or torch.version.cuda None) is a CPU-only "
            "build (pip install torch --index-url https://download.pytorch.org/whl/cu128); in a container "
            "start it with --gpus all; `nvidia-smi` must list the GPUs.",
            unless=("count",),
        ),
    ),
    describe=_device_map,
)


_WEIGHTS_ONLY_ARGS = {
    "pickle_module": (
        "torch.load was given a pickle_module (dill, a custom unpickler) while weights_only=True, the default since "
        "PyTorch 2.6",
        "weights_only=True uses torch's own restricted unpickler, so a pickle_module cannot be honoured: pass "
        "torch.load(path, pickle_module=dill, weights_only=False) for a file you trust (or drop pickle_module when "
        "the file holds only tensors and plain containers). Where a library calls torch.load with its own "
        "pickle_module, update it to a release written for PyTorch 2.6 or pin torch < 2.6.",
    ),
    "legacy_tar": (
        "torch.load refused a checkpoint in the legacy .tar format under weights_only=True, the default since "
        "PyTorch 2.6",
        "Files saved by PyTorch before 0.4 (the .tar format) cannot be read by the weights-only unpickler: load it "
        "once with torch.load(path, weights_only=False) (only for a file you trust) and save it again with "
        "torch.save(state_dict, new_path), which writes today's format.",
    ),
    "torchscript": (
        "torch.load was given a TorchScript archive (saved with torch.jit.save) under weights_only=True, the "
        "default since PyTorch 2.6",
        "Load a TorchScript file with torch.jit.load(path, map_location=...), not torch.load; or pass "
        "weights_only=False to let torch.load hand it to torch.jit.load (only for a file you trust).",
    ),
}


def _weights_only(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    refused = next((key for key in _WEIGHTS_ONLY_ARGS if facts.get(key)), None)
    if refused:
        summary, fix = _WEIGHTS_ONLY_ARGS[refused]
        return summary + on_ranks(hits), fix
    blocked = facts.get("unsupported_global")
    summary = "torch.load refused the checkpoint: its weights-only unpickler found " + (
        f"a class it does not allow ({blocked})" if blocked else "an object it does not allow"
    )
    if facts.get("default_changed"):
        summary += "; PyTorch 2.6 made weights_only=True torch.load's default"
    if facts.get("operand"):
        summary += (
            f" (unsupported pickle operand {facts['operand']}: possibly not a torch checkpoint, or damaged)"
        )
    allow = (
        f"torch.serialization.add_safe_globals([{blocked.rsplit('.', 1)[-1]}])   # import it from "
        f"{blocked.rsplit('.', 1)[0]} first"
        if blocked and "." in blocked
        else "torch.serialization.add_safe_globals([<the class the message names>])"
    )
    fix = (
        "Since PyTorch 2.6 torch.load(path) loads with weights_only=True, which only unpickles tensors and plain "
        "containers; a checkpoint that also holds other objects (a config object, numpy scalars, a whole "
        "pickled model or optimizer) is refused. If you trust the file, load it as before:\n"
        "torch.load(path, weights_only=False)\n"
        f"or keep weights_only=True and allow the class: {allow}\n"
        "Where a library calls torch.load for you (a load_from_checkpoint, a resume), pass its weights_only "
        "option or update it to a release written for PyTorch 2.6; save plain state_dicts to avoid this."
    )
    return summary + on_ranks(hits), fix


WEIGHTS_ONLY_LOAD = Recogniser(
    # torch/serialization.py (torch.load): _get_wo_message around the weights-only unpickler's error
    kind="weights_only_load",
    title="torch.load's weights-only unpickler refused the checkpoint",
    anchors=(
        "Weights only load failed",
        # torch/serialization.py torch.load: what the weights-only unpickler cannot take at all (its
        # "pickle_load_args only works if `weights_only=False`" is a warning, not mapped)
        "Can not safely load weights when explicit pickle_module is specified",
        "with files saved in the legacy .tar format",
        "with TorchScript archives passed to ``torch.load``",
    ),
    templates=(
        "torch:weights-only-load-failed-this-file",
        "torch:weights-only-load-failed",
        "torch:weights-only-load-failed-2",
        "torch:can-not-safely-load-weights-when",
        "torch:cannot-use-weights-only-true-with",
        "torch:cannot-use-weights-only-true-with-2",
    ),
    span=6,
    facts=(
        R(r"Unsupported global: GLOBAL (?P<unsupported_global>[\w.]{1,200})"),
        R(r"(?P<default_changed>In PyTorch 2\.6, we changed the default value)"),
        R(r"Unsupported operand (?P<operand>\d+)"),
        R(r"(?P<pickle_module>Can not safely load weights when explicit pickle_module is specified)"),
        R(r"(?P<legacy_tar>Cannot use ``weights_only=True`` with files saved in the legacy \.tar format)"),
        R(r"(?P<torchscript>Cannot use ``weights_only=True`` with TorchScript archives)"),
    ),
    # an unsupported pickle operand is also a file that is not a torch checkpoint, or a damaged one
    confirm=lambda hits, ctx: not any("operand" in h.facts for h in hits),
    describe=_weights_only,
)


def _fsdp_wrap(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("integer_flat"):
        return (
            "FSDP was asked to flatten a unit holding integer tensors (a quantized model's packed weights: "
            "bitsandbytes stores 4-bit weights as uint8 by default)" + on_ranks(hits),
            "FSDP1 flattens and shards floating-point parameters only. For a 4-bit (QLoRA) model set "
            "bnb_4bit_quant_storage to the model's dtype (BitsAndBytesConfig(load_in_4bit=True, "
            "bnb_4bit_quant_storage=torch.bfloat16), bitsandbytes 0.43 or newer), then cast the float32 parameters "
            "left (LoRA adapters, norms) to that dtype too, since one unit takes one dtype; or keep the quantized "
            "modules out of FSDP (ignored_modules), or train on one GPU.",
        )
    if facts.get("mixed_grad"):
        return (
            "FSDP flattens one unit whose parameters mix requires_grad=True and False (a frozen model with "
            "trainable adapters, e.g. LoRA)" + on_ranks(hits),
            "FSDP1 flattens each wrapped unit into one FlatParameter, which is frozen or not as a whole. Use "
            "use_orig_params=True (accelerate's fsdp_use_orig_params: true, TrainingArguments' fsdp_config "
            '{"use_orig_params": true}), or wrap the trainable layers in units of their own (PEFT\'s '
            "fsdp_auto_wrap_policy(model), a lambda_auto_wrap_policy around them).",
        )
    if facts.get("dtype_set"):
        return (
            f"FSDP2's fully_shard got one group whose parameters have different dtypes ({facts['dtype_set']})"
            + on_ranks(hits),
            "fully_shard all-gathers a group's parameters as one buffer, so they must share a dtype: cast the model "
            "(or the module sharded) to one dtype before fully_shard (model.to(torch.bfloat16), including adapters "
            "or heads created in float32), and choose the compute dtype with "
            "fully_shard(..., mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)) "
            "rather than mixing dtypes in the model; or shard the modules of the other dtype in groups of their own.",
        )
    if "torch.uint8" in (facts.get("dtype_a"), facts.get("dtype_b")):
        return _packed_4bit_flattened(facts, hits)
    if facts.get("dtype_a") or facts.get("dtype_unnamed"):
        named = f" ({facts['dtype_a']} and {facts['dtype_b']})" if facts.get("dtype_a") else ""
        return (
            f"FSDP flattens one unit whose parameters have different dtypes{named}" + on_ranks(hits),
            "Every parameter of a wrapped unit must have one dtype: cast the model before wrapping "
            "(model.to(torch.bfloat16), including adapters created in float32 on a half-precision base) and let "
            "FSDP's MixedPrecision policy (accelerate: mixed_precision) choose the compute dtype, or keep the "
            "model in float32 and use that policy.",
        )
    if facts.get("cpu_module"):
        return (
            "FSDP got a module still on the CPU with sync_module_states=True (or parameters on both CPU and GPU)"
            + on_ranks(hits),
            "Pass device_id=torch.cuda.current_device() (after torch.cuda.set_device(LOCAL_RANK)) to FSDP so it "
            "moves the module to the rank's GPU, or move it there before wrapping; accelerate and the Trainer do "
            "this when fsdp_sync_module_states and cpu_ram_efficient_loading are set together.",
        )
    layer = facts.get("layer", "").strip()
    summary = "FSDP's auto-wrap names a transformer layer class the model does not have" + (
        f" ({layer})" if layer else ""
    )
    fix = (
        "fsdp_transformer_layer_cls_to_wrap (accelerate's fsdp_config, or TrainingArguments' fsdp_config) must "
        "name this model's block class (LlamaDecoderLayer, GPT2Block, ...: print(model) shows it). A leftover "
        "accelerate config from another project is the usual source: check ~/.cache/huggingface/accelerate/"
        "default_config.yaml (accelerate env prints the one in use), rerun `accelerate config`, or pass "
        "--config_file explicitly; with FSDP not wanted, set distributed_type to MULTI_GPU there."
    )
    return summary + on_ranks(hits), fix


def _packed_4bit_flattened(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    """FSDP1's flat parameter refusing a unit of a float dtype and torch.uint8: bitsandbytes' Params4bit keeps a
    4-bit weight packed in uint8 unless ``quant_storage`` (transformers' ``bnb_4bit_quant_storage``, bitsandbytes
    0.43, transformers 4.39, accelerate 0.28's FSDP + QLoRA) names a float dtype, which no cast of the model
    reaches."""
    return (
        f"FSDP flattens one unit whose parameters have different dtypes ({facts['dtype_a']} and "
        f"{facts['dtype_b']}): uint8 is how bitsandbytes stores a 4-bit (QLoRA) model's packed weights by default"
        + on_ranks(hits),
        "FSDP flattens one dtype a unit, and a cast of the model (model.to(torch.bfloat16)) leaves bitsandbytes' "
        "packed weights in uint8. Store them in the compute dtype instead: set bnb_4bit_quant_storage to it "
        "(transformers: BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16, "
        "bnb_4bit_quant_storage=torch.bfloat16), with torch_dtype=torch.bfloat16 in from_pretrained), so FSDP can "
        "flatten them with the rest; it needs bitsandbytes 0.43, transformers 4.39 and accelerate 0.28 or newer "
        "(upgrade them: pip install -U bitsandbytes transformers accelerate peft); axolotl: upgrade it and start "
        "from its FSDP + QLoRA example config. Then cast the float32 parameters left (LoRA adapters, norms) to that "
        "dtype too. Without a 4-bit model: cast the model before wrapping and let FSDP's MixedPrecision policy "
        "choose the compute dtype.",
    )


FSDP_WRAP_CONFIG = Recogniser(
    kind="fsdp_wrap_config",
    title="FSDP wrapped wrongly",
    anchors=(
        "Could not find the transformer layer class",
        "Must flatten tensors with uniform `requires_grad`",
        "requires uniform `requires_grad`",
        "uniform requires_grad",  # the same, pasted without its backticks
        "Must flatten tensors with uniform dtype",
        "requires uniform dtype but got",
        "Cannot flatten integer dtype tensors",
        "has CPU parameters or buffers when",
        "To support a module with both CPU and GPU params, please pass in device_id",
        "FSDP expects uniform original parameter dtype but got",
        # torch 1.11-1.13's wordings of the same checks (flatten_params_wrapper.py, flat_param.py,
        # fully_sharded_data_parallel.py)
        "expects all parameters to have same dtype",
        "expects all parameters to have same requires_grad",
        "Integer parameters are unsupported",
        "Module has CPU parameters, but sync_module_states=True is specified",
    ),
    templates=(
        "accelerate:could-not-find-the-transformer-layer",
        # torch/distributed/fsdp/_flat_param.py: one FlatParameter per wrapped unit (torch 2.1+ wording, and
        # flat_param.py's of torch 1.13-2.0)
        "torch:must-flatten-tensors-with-uniform-requires",
        "torch_native:flatparameter-requires-uniform-requires-grad",
        "torch:must-flatten-tensors-with-uniform-dtype",
        "torch_native:flatparameter-requires-uniform-dtype",
        # the same file's FlatParamHandle: a unit holding integer tensors (a quantized model's packed weights)
        "torch:cannot-flatten-integer-dtype-tensors",
        # torch/distributed/fsdp/_init_utils.py: a CPU module with sync_module_states, or one split CPU/GPU
        "torch:the-module-has-cpu-parameters-or",
        "torch:to-support-module-with-both-cpu",
        # fsdp/_fully_shard/_fsdp_param_group.py: FSDP2's group of parameters of several dtypes
        "torch:fsdp-expects-uniform-original-parameter-dtype",
        "torch_native:flatten-params-wrapper-same-dtype",
        "torch_native:flatten-params-wrapper-same-requires-grad",
        "torch_native:flat-param-integer-parameters-unsupported",
        "torch_native:fsdp-cpu-parameters-sync-module-states",
    ),
    facts=(
        R(r"transformer layer class (?P<layer>\w{1,100}) in the model"),
        R(r"(?P<mixed_grad>uniform `?requires_grad`?|expects all parameters to have same requires_grad)"),
        R(r"(?P<dtype_unnamed>expects all parameters to have same dtype)"),
        R(r"uniform dtype but got (?P<dtype_a>[\w.]{1,40}) and (?P<dtype_b>[\w.]{1,40})"),
        R(r"(?P<integer_flat>Cannot flatten integer dtype tensors|Integer parameters are unsupported)"),
        R(
            r"(?P<cpu_module>has CPU parameters or buffers when|both CPU and GPU params|has CPU parameters, but sync_)"
        ),
        R(r"uniform original parameter dtype but got (?P<dtype_set>\{[^}\n]{1,100}\})"),
    ),
    describe=_fsdp_wrap,
)


def _world_size(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("rng_states") and not (
        facts.get("saved") or facts.get("torch_shards") or facts.get("mp_files")
    ):
        return (
            "the HF Trainer failed restoring the checkpoint's per-GPU CUDA RNG states: a resume on another number "
            "of GPUs than the checkpoint was saved with" + on_ranks(hits),
            "The Trainer saves one CUDA RNG state per visible GPU (rng_state*.pth in the checkpoint folder) and, "
            "before transformers 4.16, restored them with torch.cuda.random.set_rng_state_all, which fails when "
            "fewer GPUs are visible now. Update transformers (4.16+ warns and goes on, huggingface/transformers#14994), "
            "or resume with the same number of GPUs, or delete the checkpoint's rng_state*.pth files (the run then "
            "resumes without restoring the random state).",
        )
    if facts.get("llama_shards"):
        shards = facts["llama_shards"]
        return (
            f"the llama checkpoint has {shards} model-parallel shard(s) (MP={shards}) but {facts['llama_world']} "
            "process(es) were started: the reference loader gives each process one shard" + on_ranks(hits),
            f"Start as many processes as the checkpoint has consolidated.*.pth shards: torchrun --nproc_per_node "
            f"{shards} (Llama 2 7B has 1, 13B 2, 70B 8; one GPU each). With fewer GPUs, reshard the checkpoint to "
            "that many, or load the Hugging Face weights with transformers (device_map='auto' spreads one process "
            "over the GPUs).",
        )
    if facts.get("torch_shards"):
        return (
            "the sharded checkpoint was saved by another number of processes: "
            + " ".join(facts["torch_shards"].split())[:160]
            + on_ranks(hits),
            "FSDP's LOCAL_STATE_DICT and a pickled ShardedTensor keep each rank's shard as it was cut for the world "
            "size they were saved with, and load only into the same one: resume with that number of GPUs (nnodes x "
            "nproc_per_node); or save with StateDictType.SHARDED_STATE_DICT through torch.distributed.checkpoint "
            "(dcp.save / dcp.load reshard to any world size) or FULL_STATE_DICT (one file, loaded before wrapping).",
        )
    if facts.get("mp_files"):
        return (
            "the checkpoint was saved with another model-parallel size: its mp_rank_* files cannot be "
            f"{facts['mp_files'].replace('merge', 'merged').replace('split', 'split')} into this run's tensor-parallel ranks"
            + on_ranks(hits),
            "DeepSpeed merges or splits a model-parallel checkpoint only between sizes that divide each other "
            "(2 files into 1 or 4 ranks, not 3): load it with the tensor/model-parallel size it was saved with "
            "(mp_size, tp_size, --tensor-model-parallel-size), or convert it first (Megatron-DeepSpeed's "
            "tools/checkpoint_util.py, or DeepSpeed's universal checkpoint: python -m "
            "deepspeed.checkpoint.ds_to_universal).",
        )
    summary = "the checkpoint was saved by a different number of processes" + (
        f" (data-parallel world size {facts['saved']}, now {facts['now']})" if facts.get("saved") else ""
    )
    fix = (
        "ZeRO's optimizer state (and the per-GPU RNG states a Trainer saves) is split per rank: resume with the "
        "same number of GPUs it was saved with, or convert it: DeepSpeed's universal checkpoint "
        "(python -m deepspeed.checkpoint.ds_to_universal --input_folder <ckpt>/global_stepN --output_folder "
        '<ckpt>/global_stepN_universal, then "checkpoint": {"load_universal": true}), or keep only the weights '
        "(zero_to_fp32.py in the checkpoint folder) and start the optimizer afresh."
    )
    return summary + on_ranks(hits), fix


CHECKPOINT_WORLD_SIZE = Recogniser(
    kind="checkpoint_world_size",
    title="checkpoint from another number of processes",
    anchors=(
        "The checkpoint being loaded used a DP world size of",
        "Invalid checkpoints and world size for sd",
        # torch/distributed/fsdp/_state_dict_utils.py (LOCAL_STATE_DICT) and _shard/sharded_tensor/api.py
        # (ShardedTensor.__setstate__): shards cut for another world size
        "and the tensor in the state_dict is",
        "world size at save time was",
        "rank at save time was",
        # transformers/trainer.py _load_rng_state (before 4.16): the saved per-GPU CUDA RNG states restored one per
        # GPU, in a traceback that failed there (a code line, no message of its own)
        "set_rng_state_all(checkpoint_rng_state",
        # meta-llama's reference loaders (llama/generation.py Llama.build, LLaMA 1's example.py load): the *.pth
        # shards in ckpt_dir against the model-parallel world size; MP=0 (no shard found) is checkpoint_path's
        "Loading a checkpoint for MP=",
    ),
    templates=(
        "deepspeed:the-checkpoint-being-loaded-used-dp",
        # runtime/state_dict_factory.py: mp_rank_* files that do not merge or split into this model-parallel size
        "deepspeed:invalid-checkpoints-and-world-size-for",
        "deepspeed:invalid-checkpoints-and-world-size-for-2",
        "torch:local-shard-size-and-the-tensor",
        "torch:global-world-size-at-save-time",
        "torch:local-world-size-at-save-time",
        "torch:global-rank-at-save-time-was",
        "torch:local-rank-at-save-time-was",
        "third_party:llama-checkpoint-mp-world-size",
    ),
    facts=(
        R(r"DP world size of (?P<saved>\d+) but the current world size is (?P<now>\d+)"),
        R(
            r"Loading a checkpoint for MP=(?P<llama_shards>[1-9]\d{0,3}) but world size is (?P<llama_world>\d+)"
        ),
        R(r"Invalid checkpoints and world size for sd (?P<mp_files>merge|split)"),
        R(
            r"(?P<torch_shards>Local shard size = [^\n]{1,80} and the tensor in the state_dict is [^\n]{1,80}|"
            r"(?:Global|Local) (?:world size|rank) at save time was \d+, but at load time was \d+)"
        ),
        R(r"(?P<local_shard>Local shard size = )"),
        R(r"(?P<rng_states>set_rng_state_all\(checkpoint_rng_state)"),
    ),
    # FSDP's local shard of another size is also a LOCAL_STATE_DICT of another model (another config): likely; a
    # traceback through the Trainer's RNG restore says where it failed, not why: likely
    confirm=lambda hits, ctx: any("local_shard" not in h.facts and "rng_states" not in h.facts for h in hits),
    # llama's MP=0: no shard found in ckpt_dir at all, a checkpoint path (checkpoint_paths.py), not a world size
    reject=R(r"Loading a checkpoint for MP=0 but"),
    also=(
        Alternative(
            "model_checkpoint_mismatch",
            "a local state dict saved from a model of another shape (another config)",
            "Build the model with the config the checkpoint was saved with; compare the parameter counts of both.",
            when=("local_shard",),
        ),
    ),
    describe=_world_size,
)


def _torn_checkpoint(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("renamed_from"):
        return _renamed_away(facts, hits)
    what = (facts.get("zip_error") or facts.get("missing_record") or "").strip()
    return (
        "the checkpoint file is not a whole archive (torch.load" + (f": {what[:120]}" if what else "") + "): "
        "it was written by several processes at once, or its save or copy did not finish" + on_ranks(hits),
        "torch.save writes a zip archive whose directory comes last: a file two ranks wrote at the same time, or "
        "one cut short (a job killed while saving, a full disk, an interrupted download), fails to load. Save on "
        "one process only, the main process (rank 0):\n"
        "if torch.distributed.get_rank() == 0: torch.save(state, path)\n"
        "torch.distributed.barrier()   # the others wait before loading it\n"
        "(Lightning, accelerate and the HF Trainer already do; a script's own save in the training loop often "
        "does not). Write to a temporary name and rename it when done, so a cut save never replaces a good "
        "file; this file is lost: load an earlier checkpoint or download it again.",
    )


def _renamed_away(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    return (
        f"a checkpoint file was gone when it was renamed into place ('{facts['renamed_from'][:200]}' -> "
        f"'{facts.get('renamed_to', '?')[:200]}'): most often more than one process saving the same checkpoint, "
        "one renaming the temporary file before another does (the local rank 0 of every node writing into one "
        "output directory on a filesystem the nodes share)" + on_ranks(hits),
        "Save checkpoints on the global rank 0 only (if torch.distributed.get_rank() == 0, trainer.is_global_zero, "
        "accelerator.is_main_process), not on each node's local rank 0, when the output directory is on a shared "
        "filesystem (NFS, Lustre, a mounted bucket); or give each node its own output directory. A training "
        "script that saves on local rank 0 assumes every node writes to its own disk.",
    )


CONCURRENT_CHECKPOINT_WRITE = Recogniser(
    # caffe2/serialize/inline_container.cc (PyTorchStreamReader): the zip's central directory or a record is
    # missing. Several ranks writing one file and a save cut short leave the same torn archive: only likely,
    # certain when the log shows more than one rank. Also CPython's OSError with two file names (os.rename,
    # os.replace, shutil.move: "[Errno 2] No such file or directory: 'src' -> 'dst'") for a checkpoint file whose
    # source is gone: another process saving the same checkpoint renamed it first (timm's CheckpointSaver on the
    # local rank 0 of several nodes sharing one output directory, pytorch-image-models#693); the source may also
    # never have been written, so likely
    kind="concurrent_checkpoint_write",
    title="a checkpoint file torn by concurrent or interrupted writes",
    anchors=(
        "PytorchStreamReader failed reading zip archive",
        "PytorchStreamReader failed locating file",
        "PytorchStreamReader failed reading file ",
        "] . file not found: ",
        # the zip's records are archive/data/<n>, archive/data.pkl: the same message, however the line was typed
        "file not found: archive/",
        # CPython's rename form, its two file names (not every missing file: the match below reads only a
        # checkpoint file's)
        "' -> '",
    ),
    templates=(
        "torch_native:pytorchstreamreader-failed-reading-zip-archive",
        "torch_native:pytorchstreamreader-failed-locating-file",
        "torch_native:pytorchstreamreader-failed-reading-file",  # a record that does not read
        "torch_native:inline-container-file-not-found",
        "system:python-rename-source-missing",
    ),
    match=R(
        r"PytorchStreamReader failed (?:reading|locating)|inline_container\.cc:\d+\] ?\. file not found: |"
        r"No such file or directory: '(?P<renamed_from>[^'\n]{0,300}\.(?:pth\.tar|pth|pt|ckpt|bin|safetensors|tar))' "
        r"-> '(?P<renamed_to>[^'\n]{1,300})'"
    ),
    # the rename of a checkpoint file is this, not a dataset path that does not exist
    absorbs=("data_path_missing",),
    facts=(
        R(r"failed reading zip archive: (?P<zip_error>[^\n]{1,120})"),
        R(r"failed reading file (?P<zip_error>[\w./-]{1,120}: [^\n]{1,80})"),
        R(r"(?P<missing_record>(?:file not found: |failed locating file )[\w./-]{0,119}[\w/-])"),
    ),
    confirm=lambda hits, ctx: len(ctx.ranks) > 1,
    also=(
        Alternative(
            "checkpoint_truncated",
            "a save, copy or download cut short (a job killed while saving, a full disk)",
            "Load an earlier checkpoint or download the file again (compare its size with the source's); save to "
            "a temporary name and rename it when done.",
            unless=("renamed_from",),
        ),
    ),
    describe=_torn_checkpoint,
)


# datasets writing its Arrow cache (datasets/builder.py, arrow_writer.py, arrow_dataset.py's map; datasets/config.py:
# HF_DATASETS_CACHE, else $HF_HOME/datasets, else $XDG_CACHE_HOME/huggingface/datasets, ~/.cache/huggingface/datasets)
# or huggingface_hub downloading into its cache (huggingface_hub/file_download.py; constants.py: HF_HUB_CACHE, else
# $HF_HOME/hub; transformers' TRANSFORMERS_CACHE in its older releases): the full disk is the cache's, not a save's
_DATASETS_CACHE_FULL = (
    "datasets writes its Arrow cache (every load_dataset's prepared data, every map's result) under "
    "~/.cache/huggingface/datasets unless told otherwise, often a small system disk: point it at a disk with room "
    "(export HF_DATASETS_CACHE=/data/hf_datasets, or HF_HOME for all Hugging Face caches; load_dataset(..., "
    "cache_dir=...) for one dataset) and clear the old caches (delete the dataset folders under "
    "~/.cache/huggingface/datasets, or dataset.cleanup_cache_files(); the downloaded repositories under "
    "~/.cache/huggingface/hub: hf cache ls / hf cache rm, huggingface-cli scan-cache / delete-cache before "
    "huggingface_hub 1.0). df -h <dir> shows the room left; under several nodes each writes its own cache."
)
_HUB_CACHE_FULL = (
    "huggingface_hub downloads models and datasets into ~/.cache/huggingface/hub unless told otherwise, often a "
    "small system disk: point it at a disk with room (export HF_HUB_CACHE=/data/hf_hub, or HF_HOME for all Hugging "
    "Face caches; TRANSFORMERS_CACHE in older transformers; from_pretrained(..., cache_dir=...) for one model) and "
    "clear old downloads (hf cache ls / hf cache rm; huggingface-cli scan-cache / delete-cache before "
    "huggingface_hub 1.0). df -h <dir> shows the room left; an interrupted download leaves *.incomplete files "
    "under the cache's blobs/ folders."
)
# a frame of the traceback (File "..."), not any mention: "Found cached dataset ... (~/.cache/huggingface/datasets/
# ...)" and "loading weights file ~/.cache/huggingface/hub/..." open most Hugging Face logs whose checkpoint save
# may fill the disk later; a path printed with the OSError itself is read from the error line (enospc_path)
DATASETS_CACHE = R(
    r'File "?[^"\s]{0,300}(?P<saw_datasets_cache>datasets[/\\](?:builder|arrow_writer|arrow_dataset|fingerprint)'
    r'\.py)(?:"|:\d)'
)
# (IPython's frames: File ~/env/.../file_download.py:1457, in ...)
HUB_CACHE = R(r'File "?[^"\s]{0,300}(?P<saw_hub_cache>huggingface_hub[/\\]file_download\.py)(?:"|:\d)')
_IN_DATASETS_CACHE = R(r"huggingface[/\\]datasets[/\\]|\.arrow$")
_IN_HUB_CACHE = R(r"huggingface[/\\]hub[/\\]|\.incomplete$")


def _disk_full(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("enospc"):
        summary = (
            f"writing failed: {facts['enospc']} (the filesystem the run writes to is full or over quota)"
        )
    elif facts.get("unopened"):
        summary = f"torch.save could not create {facts['unopened'][:200]}: most often a full disk"
    else:
        what = f"writing {facts['entry']} failed" if facts.get("entry") else facts.get("pos", "a short write")
        summary = f"torch.save's archive writer stopped part-way ({what}): most often a full disk or quota"
    if facts.get("enospc") and facts.get("pip_install"):
        return (
            f"pip's install failed: {facts['enospc']} (the filesystem it builds and unpacks on is full or over quota)"
            + on_ranks(hits),
            "pip unpacks and builds in the temporary folder (TMPDIR) and keeps wheels in its cache (~/.cache/pip): "
            "check their free space (df -h /tmp ~/.cache/pip), then `pip cache purge`, install with "
            "--no-cache-dir, or point TMPDIR (and PIP_CACHE_DIR) at a disk with room: TMPDIR=/big/tmp pip install "
            "... A container's small writable layer or /tmp on tmpfs is the usual culprit for torch's and CUDA's "
            "large wheels.",
        )
    path = facts.get("enospc_path") or ""
    # the file the OSError names says where the disk is full; without one, the traceback's frames
    datasets_cache = _IN_DATASETS_CACHE.search(path) if path else "saw_datasets_cache" in ctx.facts
    hub_cache = _IN_HUB_CACHE.search(path) if path else "saw_hub_cache" in ctx.facts
    if facts.get("enospc") and datasets_cache:
        summary = f"writing datasets' cache failed: {facts['enospc']} (the filesystem it is on is full or over quota)"
        return summary + on_ranks(hits), _DATASETS_CACHE_FULL
    if facts.get("enospc") and hub_cache:
        summary = (
            f"a Hugging Face download failed: {facts['enospc']} (the filesystem its cache is on is full)"
        )
        return summary + on_ranks(hits), _HUB_CACHE_FULL
    fix = (
        "The save ran out of space: check the free space (and the quota) where it writes, on every node (df -h "
        "<dir>; quota -s; a shared Lustre/NFS filesystem can refuse writes on one full storage target while its "
        "total still shows free space, lfs df -h). Free space (keep fewer checkpoints: save_total_limit, "
        "ModelCheckpoint(save_top_k=...), delete old global_step*/ folders) or write to a filesystem with room, "
        "and save on one rank when the state is not sharded. A save cut short leaves a broken file: resume from "
        "the last whole checkpoint."
    )
    return summary + on_ranks(hits), fix


DISK_FULL = Recogniser(
    # the OS's ENOSPC / EDQUOT as CPython's OSError prints them, and what torch.save's zip writer
    # (caffe2/serialize/inline_container.cc, PyTorchStreamWriter) says when its file cannot be created or a write
    # comes back short. ENOSPC / EDQUOT name the cause; the writer's own words are printed for a full disk most
    # often, but also for a folder that does not exist or cannot be written, or a network filesystem that failed
    kind="disk_full",
    title="the filesystem the run writes to is full",
    anchors=(
        "No space left on device",
        "Disk quota exceeded",
        "PytorchStreamWriter failed writing file",
        "unexpected pos ",
        " cannot be opened.",
    ),
    templates=(
        "system:python-no-space-left",
        "system:python-disk-quota-exceeded",
        "torch_native:pytorchstreamwriter-failed-writing-file",
        "torch_native:pytorchstreamwriter-unexpected-pos",
        "torch_native:pytorchstreamwriter-cannot-be-opened",
        # pip's own words around the same OSError (its install failing on a full disk: the same fix, room)
        "build_tools:error-could-not-install-packages-due",
        "build_tools:error-could-not-install-packages-due-3",
    ),
    match=R(
        r"(?P<pip_install>Could not install packages due to an (?:OSError|EnvironmentError): )?"
        r"(?P<enospc>\[Errno (?:28|122)\] (?:No space left on device|Disk quota exceeded)|"
        r"No space left on device|Disk quota exceeded)(?::\s*'(?P<enospc_path>[^'\n]{1,300})')?|"
        r"PytorchStreamWriter failed writing file (?P<entry>[\w./-]{1,200}): file write failed|"
        r"(?P<pos>unexpected pos \d{1,20} vs \d{1,20})|"
        r"\bFile (?P<unopened>[^\s'\"]{1,300}) cannot be opened\."
    ),
    # ENOSPC names a full filesystem, but which one: a traceback through multiprocessing's semaphores or heap, or
    # torch's storage sharing, raised it for /dev/shm (environment.py's saw_shm_frame): likely there, shm named
    confirm=lambda hits, ctx: has_fact("enospc")(hits, ctx) and "saw_shm_frame" not in ctx.facts,
    # ENOSPC from shared memory (/dev/shm: a DataLoader's tensors, NCCL's segments) is another kind
    reject=R(r"shared memory|/dev/shm|posix_fallocate|\bshm\b|</torch_\d"),
    also=(
        Alternative(
            "dataloader_shm",
            "shared memory (/dev/shm) full: the traceback runs through multiprocessing's semaphores or heap, or "
            "torch's tensor sharing, which write there",
            "A container's /dev/shm is 64 MB unless it is given more: docker run --shm-size=16g (or --ipc=host; "
            "Kubernetes: an emptyDir with medium: Memory mounted at /dev/shm); or share less through it: fewer "
            "DataLoader workers (num_workers), smaller batches per worker, or "
            "torch.multiprocessing.set_sharing_strategy('file_system'). df -h /dev/shm shows its size.",
            when=("saw_shm_frame",),
            # ENOSPC raised under those frames is their file's (sem_open's, the heap's arena, a shared tensor's),
            # and each lives in /dev/shm: the likelier reading than the disk the run saves to
            first_when=("enospc", "saw_shm_frame"),
            because="{saw_shm_frame} in the traceback",
        ),
        Alternative(
            "checkpoint_path",
            "a save path whose folder does not exist or cannot be written",
            "Create the folder first (os.makedirs(dir, exist_ok=True) on one rank, then a barrier) and check "
            "that the job's user can write there (a relative path is relative to the job's working directory).",
            when=("unopened",),
        ),
        Alternative(
            "concurrent_checkpoint_write",
            "several ranks writing the same file, or a network filesystem failing the write",
            "Save on one rank only (if rank == 0: torch.save(...)) and retry a save that a shared filesystem "
            "failed once.",
            unless=("unopened",),
        ),
    ),
    describe=_disk_full,
)


# a container whose root filesystem is an overlay (Docker's overlay2, podman, an NGC image's banner), or the overlay
# itself (its mount line, df's row, a path under Docker's storage)
CONTAINER = R(
    r"(?m)(?P<saw_container>\bdocker(?: container)? (?:run|exec|compose)\b|docker-compose|\bpodman (?:run|exec)\b|"
    r"/\.dockerenv|NVIDIA Release \d{2}\.\d{2}|/var/lib/docker/|/overlay2/|\boverlay on / type overlay|"
    r"^overlay +\d[\d.]*[KMGTP]?\b)"
)
# torch.load opening its file (serialization.py: load -> _open_file_like -> _open_file.__init__, the frames a
# traceback prints; before 1.6 load's own open(f, 'rb')), or the script's call to it
TORCH_LOAD = R(
    r"(?P<saw_torch_load>serialization\.py\"?, line \d+, in (?:load|_open_file_like|__init__)\b|\btorch\.load\()"
)
# a key with a wrapper's name in it, anywhere the log shows one (an adapter's saved keys beside PEFT's warning)
KEY_WRAPPER = R(
    r"(?:^|(?<=[\s.'\"\[(]))(?P<key_wrapper>_orig_mod|_fsdp_wrapped_module|_checkpoint_wrapped_module)\.\w"
)
LEADING_MODULE = R(r"(?:^|(?<=[\s'\"\[(]))(?P<key_wrapper>module)\.base_model\.model\.")
CONTEXT = (
    *((literal, CONTAINER) for literal in ("docker", "podman", "/.dockerenv", "NVIDIA Release", "overlay")),
    *(
        (literal, KEY_WRAPPER)
        for literal in ("_orig_mod.", "_fsdp_wrapped_module.", "_checkpoint_wrapped_module.")
    ),
    ("module.base_model.model.", LEADING_MODULE),
    ("serialization.py", TORCH_LOAD),
    *(
        (literal, DATASETS_CACHE)
        for literal in ("builder.py", "arrow_writer.py", "arrow_dataset.py", "fingerprint.py")
    ),
    ("file_download.py", HUB_CACHE),
    ("torch.load(", TORCH_LOAD),
)
# the kernel's overlayfs (Documentation/filesystems/overlayfs.rst, "Renaming directories"): a directory of a lower
# layer (one an image brought, not one the container made) is not moved by rename(2) unless the redirect_dir feature
# is on: EXDEV, which mv(1) and shutil.move answer by copying; a file is copied up first and renames fine
_OVERLAY = (
    "In a container the root filesystem is an overlay (Docker's overlay2): a directory that came with the image "
    "(a lower layer), not one the container created, cannot be renamed there, and the kernel answers EXDEV as for "
    "another filesystem, unless overlayfs' redirect_dir feature is on (off by default: the overlay module's "
    "redirect_dir=on parameter, or a kernel built with CONFIG_OVERLAY_FS_REDIRECT_DIR); files are copied up and "
    "rename fine. Keep directories the job renames out of the image: create them at run time, or in a mounted "
    "volume (docker run -v <host dir>:<path>); or copy instead of renaming (shutil.move does, as mv does)."
)


def _in_one_folder(facts: dict) -> bool:
    """Whether the rename stays in one folder: it crosses no mount there, so an overlay's lower-layer directory is
    what refuses it (or another union filesystem doing the same)."""
    source, target = facts.get("exdev_from", ""), facts.get("exdev_to", "")
    return bool(source and target) and posixpath.dirname(source.rstrip("/")) == posixpath.dirname(
        target.rstrip("/")
    )


def _cross_device(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    moved = f": {facts['exdev_from']} -> {facts['exdev_to']}" if facts.get("exdev_to") else ""
    if _in_one_folder(facts):
        summary = (
            "a rename within one folder was refused as crossing filesystems (EXDEV, Invalid cross-device "
            f"link){moved[:400]}, though one folder crosses no mount: likely an overlay filesystem (a "
            "container's) refusing to move a directory of its image's layers" + on_ranks(hits)
        )
        return summary, _OVERLAY
    summary = (
        "a file could not be renamed into place: the rename crossed filesystems (EXDEV, Invalid cross-device "
        f"link){moved[:400]}; most often a checkpoint written to a temporary directory on another filesystem and "
        "moved into the output directory"
        + (
            "; in a container, also a directory of the image's overlay layers"
            if "saw_container" in ctx.facts
            else ""
        )
        + on_ranks(hits)
    )
    fix = (
        "os.rename / os.replace only move a file within one filesystem: the temporary file (tempfile's directory, "
        "usually /tmp) and the destination (a mounted volume, NFS, a second disk, a container's bind mount) are "
        "on different devices. Write the temporary file in the destination's own directory (tempfile.mkstemp("
        "dir=<destination dir>) or TMPDIR pointing at the same filesystem), or move with shutil.move, which "
        "copies across filesystems; a library that renames its own temporary file is fixed by a release that "
        "copies instead, or by keeping its output directory on the same filesystem as TMPDIR."
    )
    if "saw_container" in ctx.facts:
        fix += "\n" + _OVERLAY
    return summary, fix


CROSS_DEVICE_RENAME = Recogniser(
    # the OS's EXDEV as CPython's OSError prints it (Objects/exceptions.c, glibc's strerror): rename(2) and
    # link(2) refuse a source and destination on different mounted filesystems; shutil.move copies instead
    kind="cross_device_rename",
    title="a file renamed across filesystems",
    anchors=("Invalid cross-device link",),
    templates=("system:python-cross-device-link",),
    match=R(
        r"\[Errno 18\] Invalid cross-device link(?:: '(?P<exdev_from>[^'\n]{1,300})' -> "
        r"'(?P<exdev_to>[^'\n]{1,300})')?|Invalid cross-device link"
    ),
    describe=_cross_device,
)


def _optimizer_groups(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("no_optim_state"):
        return (
            f"the optimizer checkpoint has no state for {facts['no_optim_state']}, a parameter trained now: the run "
            "resumes with other parameters trainable than the checkpoint was saved with" + on_ranks(hits),
            "torch.distributed.checkpoint's set_state_dict / set_optimizer_state_dict found a parameter that "
            "requires grad without saved optimizer state: it was frozen (or did not exist: a new head, an adapter "
            "added) when the checkpoint was saved. Resume with the same trainable parameters (the same freezing, "
            "LoRA targets, layers unfrozen at this step), or load with "
            "StateDictOptions(strict=False) to start that parameter's state afresh.",
        )
    what = (
        "a different number of optimizers"
        if facts.get("optimizer_count")
        else "a different number of parameter groups"
        if facts.get("group_count")
        else "a group of another size"
    )
    summary = (
        f"the optimizer state being loaded has {what} than the optimizer built now: the run resumes with other "
        "options (what is trained, which groups) or another model than the checkpoint was saved with"
    )
    fix = (
        "optimizer.load_state_dict matches the saved state to the parameters by position, group by group, so the "
        "optimizer must be built exactly as when the checkpoint was saved: the same model (architecture, --arch / "
        "config, the same layers frozen or trained, e.g. a backbone that joins training only at a later epoch) "
        "and the same options (a fine-tune flag, parameter groups, weight-decay split). Resume with the same "
        "options, or start from the weights alone: load the model's state dict as a pretrained start and leave "
        "the optimizer fresh (do not load checkpoint['optimizer'])."
    )
    return summary + on_ranks(hits), fix


OPTIMIZER_GROUP_MISMATCH = Recogniser(
    # torch/optim/optimizer.py (Optimizer.load_state_dict): the saved param_groups do not line up with this
    # optimizer's. Resuming with other training options and a checkpoint of another model both print it
    kind="optimizer_group_mismatch",
    title="optimizer state saved for other parameter groups",
    anchors=(
        "loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
        "loaded state dict has a different number of parameter groups",
        "optimizers but the checkpoint contains",
        "The parameter requires gradients but has no saved optimizer state",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "Missing optimizer state for parameter",
    ),
    templates=(
        "torch_native:optimizer-load-state-dict-group-size",
        "torch_native:optimizer-load-state-dict-group-count",
        # lightning/pytorch/strategies/strategy.py _load_optimizer_state: configure_optimizers returns another count
        "lightning:you-have-configured-optimizers-but-the",
        # torch/distributed/checkpoint/state_dict.py _load_optim_state_dict: a trainable parameter without state
        "torch:missing-optimizer-state-for-parameter-in",
    ),
    facts=(
        R(r"(?P<group_count>loaded state dict has a different number of parameter groups)"),
        R(r"(?P<optimizer_count>optimizers but the checkpoint contains)"),
        R(r"Missing optimizer state for parameter '(?P<no_optim_state>[^'\n]{1,200})' in checkpoint"),
    ),
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "model_checkpoint_mismatch",
            "a checkpoint saved from another model (another architecture or code version)",
            "Build the model the checkpoint was saved from (the same --arch / config and code version), or load "
            "only its weights that fit and start the optimizer fresh.",
        ),
    ),
    describe=_optimizer_groups,
)


def _makedirs_race(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = (merged(hits).get("existing_path") or "").strip()
    return (
        "creating a folder failed because it already exists"
        + (f" ({path[:200]})" if path else "")
        + ": most often several processes (the ranks, or their DataLoader workers) creating the same folder at "
        "once, or a folder left by an earlier run" + on_ranks(hits),
        "os.makedirs checks whether the directory exists and then creates it; when every rank creates the same "
        "directory (a log folder, a checkpoint folder, a cache), another rank creates it in between and this one "
        "gets FileExistsError. Create it once, before the others need it:\n"
        "if rank == 0: os.makedirs(path, exist_ok=True)\n"
        "torch.distributed.barrier()   # the others wait until it is there\n"
        "or tolerate it everywhere: os.makedirs(path, exist_ok=True). On a shared or distributed filesystem "
        "(NFS, virtiofs, Lustre) even exist_ok=True can raise when ranks race: catch FileExistsError around the "
        "call. If the directory was left by an earlier run (the code refuses to reuse an output directory), "
        "remove it or give the run a new one; exist_ok=True also raises when the path is a file, not a "
        "directory.",
    )


MAKEDIRS_RACE = Recogniser(
    # CPython's OSError for EEXIST (os.mkdir, os.makedirs): printed for any directory that exists, so likely
    # alone; in a distributed run most often ranks creating the same directory at once
    kind="makedirs_race",
    title="a directory several processes create at once",
    anchors=("FileExistsError: [Errno 17] File exists",),
    templates=("system:python-file-exists",),
    generic=("FileExistsError: [Errno 17] File exists",),
    facts=(R(r"FileExistsError: \[Errno 17\] File exists: '(?P<existing_path>[^'\n]{1,300})'"),),
    describe=_makedirs_race,
)


def _unpicklable(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    what = next((str(h.facts["what"]) for h in hits if h.facts.get("what")), "an object cannot be pickled")
    summary = f"torch.save could not pickle what it was given: {what[:160]}" + on_ranks(hits)
    if "not the same object as" in what:
        # CPython's pickle save_global: the class (or function) found under the object's name is another object
        # than the one the object was made from: it was defined again after the object was created
        return (
            summary + ": its class was defined again after the object was made",
            "pickle saves a class by its module and name and checks that importing that name gives the same "
            "class; here it gives another one, so the class was defined again after the object was created: a "
            "module reloaded (importlib.reload, IPython's autoreload), a notebook cell that defines it run again, "
            "or one file imported under two names (model and src.model, through two sys.path entries). Save the "
            "weights instead (torch.save(model.state_dict(), path)), which does not pickle classes; or build the "
            "object again after the last reload and import the module one way only.",
        )
    fix = (
        "torch.save pickles the whole object: saving a model (or a checkpoint dict holding hyperparameters, "
        "callbacks or an argparse namespace) pickles every attribute, and a lambda, a closure, a function or "
        "class defined inside another function, or a hook registered with a lambda cannot be pickled. Save the "
        "weights instead (torch.save(model.state_dict(), path); with DDP model.module.state_dict()) and keep "
        "plain values in the checkpoint; or replace the lambda / local function by one defined at module level "
        "(functools.partial of it also pickles); or pass pickle_module=dill to torch.save (and to torch.load)."
    )
    return summary, fix


UNPICKLABLE_CHECKPOINT_OBJECT = Recogniser(
    # CPython's pickler (_pickle.c: "Can't pickle <obj>: attribute lookup ... failed", "Can't pickle local
    # object '...'") raised inside torch/serialization.py's save/_save (pickler.dump of the object saved)
    kind="unpicklable_checkpoint_object",
    title="an object torch.save cannot pickle",
    anchors=("Can't pickle", "can't pickle"),
    templates=("system:pickle-cannot-pickle",),
    facts=(R(r"(?P<what>[Cc]an't pickle [^\n]{1,160})"),),
    # a pickling error is torch.save's only when the log shows torch.save (its frame or its call)
    requires=("saw_torch_save",),
    describe=_unpicklable,
)


def _meta_weights(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    name = (facts.get("meta_param") or "").strip()
    return (
        "a weight still on the meta device (never loaded) was moved or used"
        + (f": {name}" if name else "")
        + ": the model was built without values (init_empty_weights, low_cpu_mem_usage / device_map loading, "
        "FSDP's ram-efficient loading) and this weight got none" + on_ranks(hits),
        "Tensors on the meta device have a shape and no data, so .to() / copying them fails. Find why this weight "
        "was not filled: a key the checkpoint lacks (a model of another version or config, a head or "
        "adapter added after loading, tied weights untied: look for the 'newly initialized' / missing keys "
        "warning above), a model split with device_map='auto' and then moved with model.to(device) (leave a "
        "device_map'd model where accelerate put it, or load with device_map={'': device} / without device_map "
        "and then .to()), or FSDP's cpu_ram_efficient_loading, which loads on rank 0 only (set "
        "fsdp_sync_module_states: true with it). A model built on meta on purpose is materialized with "
        "model.to_empty(device=...) and then initialized or loaded.",
    )


META_WEIGHTS_NOT_LOADED = Recogniser(
    # aten/src/ATen/native/Copy.cpp (copy_ out of a meta tensor; nn/modules/module.py _apply adds the to_empty()
    # advice) and accelerate/utils/modeling.py set_module_tensor_to_device (a meta parameter given no value)
    kind="meta_weights_not_loaded",
    title="a weight left on the meta device, never loaded",
    anchors=(
        "Cannot copy out of meta tensor; no data!",
        "is on the meta device, we need a `value` to put in on",
        # the device checks naming the meta device beside a real one (placement.META_PAIR): an op given a weight
        # that has a shape and no data
        "tensors to be on the same device",
        "Unhandled FakeTensor Device Propagation for ",
        " is not on the expected device ",
    ),
    templates=(
        "torch_native:cannot-copy-out-of-meta-tensor",
        "accelerate:is-on-the-meta-device-we",
        "torch_native:expected-all-tensors-same-device",
        "torch_native:expected-all-tensors-same-device-got",
        "torch_native:fake-tensor-device-propagation",
        "torch_native:prims-tensor-not-on-expected-device",
    ),
    match=R(
        r"Cannot copy out of meta tensor|is on the meta device, we need a `value`|(?P<meta_device_pair>"
        + placement.META_PAIR
        + ")"
    ),
    facts=(R(r"(?P<meta_param>[\w.]{1,200}) is on the meta device, we need a `value`"),),
    # the message says a weight has no data, not why (a key the checkpoint lacks, a device_map'd model moved, a
    # library's loading that left it unfilled): likely
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "library_version_bug",
            "a library's loading code that leaves some weights unfilled (tied weights, a remote-code model, "
            "quantization state) in the installed release",
            "When the model loads through from_pretrained without your own .to() or edits, search the library's "
            "issues for the message and update (or pin) transformers / accelerate / bitsandbytes together.",
        ),
    ),
    describe=_meta_weights,
)


def _through_torch(hits: list[Hit], ctx: Context) -> bool:
    """Whether the unpickler's error came up through torch's frames (torch.load's), not only beside a torch.load
    quoted elsewhere in the log."""
    return any(
        h.facts.get("raised_in_package") == "torch" or "torch" in h.facts.get("frame_packages", ())
        for h in hits
    )


def _truncated(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    said = first(hits, "cut_short") or "the file ended early"
    return (
        f"torch.load read a checkpoint file that is empty or cut short ({said}): its save, copy or download did not "
        "finish, or another process was still writing it" + on_ranks(hits),
        "Check the file's size (ls -l; a 0-byte file is a save that never wrote, or a placeholder): load the "
        "checkpoint before it, or download / copy it again. If one rank loads what another is saving (a resume right "
        "after a save, every rank reading rank 0's file), save on rank 0 and call torch.distributed.barrier() before "
        "the others load; write to a temporary name and os.replace() it when done, so a cut save never takes the "
        "checkpoint's name; a full disk cuts saves short too (df -h).",
    )


CHECKPOINT_TRUNCATED = Recogniser(
    # CPython's unpickler (Modules/_pickle.c) on a stream that ends: EOFError "Ran out of input" for an empty one,
    # UnpicklingError "pickle data was truncated" inside an opcode; torch.load's only beside torch.load in the log
    # (a spawned worker whose parent died prints "Ran out of input" too, a data file read with pickle as well)
    kind="checkpoint_truncated",
    title="a checkpoint file that is empty or cut short",
    anchors=("Ran out of input", "pickle data was truncated"),
    templates=("system:pickle-ran-out-of-input", "system:pickle-data-was-truncated"),
    match=R(r"(?P<cut_short>EOFError: Ran out of input|pickle data was truncated)"),
    requires=("saw_torch_load",),
    # certain when the error came up through torch.load's frames; a torch.load elsewhere in the log leaves it likely,
    # and so does one in a DataLoader worker: there it is as well a data file the Dataset reads with torch.load or
    # pickle ("Caught EOFError in DataLoader worker process" while a dataset is read: bharat-b7/LoopReg#13,
    # mindslab-ai/univnet#6, neither thread naming the file), which no public log shows to be a checkpoint
    confirm=lambda hits, ctx: _through_torch(hits, ctx) and "saw_dataloader_worker" not in ctx.facts,
    also=(
        Alternative(
            "bad_training_data",
            "a data file the Dataset reads with torch.load or pickle in a DataLoader worker, empty or cut short",
            "Find the sample file: catch the error in __getitem__ and print the path, or list the data files of 0 "
            "bytes (find <data dir> -size 0); regenerate or remove them (a preprocessing run that was killed, a "
            "full disk while they were written).",
        ),
        Alternative(
            "spawn_pickling",
            "a process started by multiprocessing's spawn (DataLoader workers on Windows or macOS) that got nothing "
            "from its parent, because the parent failed to pickle what it sends (its error is above)",
            "Read the parent's error above it (Can't pickle ...): keep the dataset and collate_fn picklable (no "
            "lambdas, open files or local classes), and put the training code under if __name__ == '__main__':.",
        ),
    ),
    describe=_truncated,
)


def _class_of_main(hits: list[Hit], ctx: Context) -> bool:
    """Whether the missing class was looked up in __main__ (the saving script's own) through torch.load's frames."""
    return first(hits, "class_module") == "__main__" and _through_torch(hits, ctx)


def _module_missing(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    module = first(hits, "module_missing")
    top = module.split(".")[0]
    return (
        f"the checkpoint holds a pickled object whose class lives in module {module}, which the loading program "
        f"cannot import: the model (or another object) was saved whole, not as a state dict, by code that had "
        f"{module}" + on_ranks(hits),
        "torch.save(model) pickles the object by reference to its class (module and name), so torch.load imports "
        f"{module} as the saving program did. Run from the folder of the project that saved it, where {top} "
        f"imports ({top}/ with its __init__.py, as the project's own scripts run), or put that folder on "
        f"PYTHONPATH; if {top} is an installed package, install the release the checkpoint was saved with. "
        "Better: save model.state_dict() and load it into a model you build (model.load_state_dict(...)).",
    )


def _class_missing(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "module_missing"):
        return _module_missing(hits, ctx)
    name = first(hits, "missing_class") or "a class"
    module = first(hits, "class_module") or "its module"
    return (
        f"the checkpoint holds a pickled object of class {name} from {module}, which the loading program does not "
        "have: the model (or another object) was saved whole, not as a state dict" + on_ranks(hits),
        "torch.save(model) pickles the object by reference to its class (module and name), so torch.load needs "
        f"that class importable under the same name: a class defined in the saving script is looked up in "
        f"__main__ of the loading one. Import or define {name} before torch.load (for __main__: define it in the "
        f"loading script, or `import __main__; __main__.{name} = {name}` after importing it from its file), run "
        "from the folder where the project's modules import, or use the code release the checkpoint was saved "
        "with. Better: save model.state_dict() and load it into a model you build (model.load_state_dict(...))."
        + (
            f" {module} is a module of a package or of the project's code: a class it lacks is most often one "
            "another release of it has (torch.nn.SiLU came in torch 1.7): install the versions the checkpoint was "
            "saved with (the project's requirements) or the code release that matches the weights."
            if module != "__main__" and module != "its module"
            else ""
        ),
    )


CHECKPOINT_CLASS_MISSING = Recogniser(
    # CPython's Unpickler.find_class (Modules/_pickle.c): "Can't get attribute 'Net' on <module '__main__' ...>",
    # a pickled object whose class the named module lacks; torch.load's only beside torch.load in the log
    kind="checkpoint_class_missing",
    title="a checkpoint that pickles a class the loading program lacks",
    # and find_class's import of the class's module first: "No module named 'models.yolo'" (a yolov5 checkpoint
    # loaded where the repository's models package does not import), read only where torch.load's unpickler raised it
    # (collect.py: raised_by_unpickler); elsewhere it is a package not installed (launchers.MISSING_LAUNCHER)
    anchors=("Can't get attribute ", "No module named '"),
    templates=("system:pickle-cannot-get-attribute", "system:python-no-module-named"),
    match=R(
        r"Can't get attribute '(?P<missing_class>[\w.]{1,120})' on <module '(?P<class_module>[\w.]{1,120})'|"
        r"No module named '(?P<module_missing>(?!torch[.'])[\w.]{1,120})'"
    ),
    holds=lambda facts: "module_missing" not in facts or bool(facts.get("raised_by_unpickler")),
    generic=("No module named '",),
    requires=("saw_torch_load",),
    # certain only for a class the saving script defined (__main__) and through torch.load's frames (pytorch#2762,
    # zengqunzhao/MA-Net#5: the maintainers' fix is to define or import the class before torch.load); a class of a
    # named module is as often one that the installed release of that library (or of the project's code) lacks
    # (yolov5's checkpoints on torch 1.6: "Can't get attribute 'SiLU' on <module 'torch.nn.modules.activation'",
    # torch.nn.SiLU being 1.7's; ultralytics/yolov5#1849, #4121: upgrade torch)
    confirm=_class_of_main,
    also=(
        Alternative(
            "dependency_version",
            "a class the installed release of that module's package lacks (added later, renamed or moved): the "
            "checkpoint was saved with another version of torch, the library or the project's code",
            "Install the versions the checkpoint was saved with (the project's requirements: a class of torch.nn "
            "added in a later torch, such as SiLU in 1.7, needs that torch), or the project's code release that "
            "matches the weights.",
        ),
    ),
    describe=_class_missing,
)


def _platform_path(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    cls = first(hits, "path_class") or "a Path"
    other = {"WindowsPath": "Windows", "PosixPath": "Linux or macOS"}.get(cls, "another system")
    here = {"WindowsPath": "Linux or macOS", "PosixPath": "Windows"}.get(cls, "this system")
    swap = (
        "pathlib.WindowsPath = pathlib.PosixPath"
        if cls == "WindowsPath"
        else "pathlib.PosixPath = pathlib.WindowsPath"
        if cls == "PosixPath"
        else "pathlib.<the class named> = type(pathlib.Path())"
    )
    return (
        f"a pathlib {cls} was unpickled on {here}: the file (a checkpoint, a model or data saved whole with "
        f"torch.save, pickle or a library's save) holds a path made on {other}, and pathlib cannot make that "
        "system's paths here" + on_ranks(hits),
        f"Where the file was saved, save plain strings instead of Path objects (str(path) in the hyperparameters, "
        "the data's or the learner's path attributes; a library's export meant for other machines, such as "
        f"fastai's learn.export / load_learner, where it has one), or load it here with the class mapped for the "
        f"load only: `import pathlib; {swap}` before torch.load / pickle.load (undo it afterwards), then re-save "
        "it without the paths.",
    )


# where the path class was made, read on the exception's own traceback: torch.load's unpickling (its serialization.py
# frames, or the user's line loading a file), or the user's own line calling the other system's class (a
# WindowsPath(...) on Linux: not a saved file at all, and no finding of this kind)
_SERIALIZATION = R(r"torch[/\\]serialization\.py$")
_LOADING = R(r"\b(?:torch|pickle|joblib|dill|cloudpickle)\.loads?\(|\bload_learner\(|\bunpickler\.load\(\)")
_PATH_CLASS_CALL = R(r"\b(?:Pure)?(?:Windows|Posix)Path\(")


def _path_made(raised) -> dict:
    """``path_unpickled`` where ``raised`` (first_failure.Raised) went through a load of a saved file,
    ``path_made_by_code`` (the line) where the user's own line made the other system's path class."""
    if any(_SERIALIZATION.search(frame.file) for frame in raised.frames) or _LOADING.search(raised.code):
        return {"path_unpickled": True}
    if _PATH_CLASS_CALL.search(raised.code):
        return {"path_made_by_code": raised.code.strip()}
    return {}


PICKLED_PLATFORM_PATH = Recogniser(
    # CPython's Lib/pathlib.py (PosixPath / WindowsPath __new__ on the other system): NotImplementedError before
    # 3.12, pathlib.UnsupportedOperation in 3.12-3.13. In a training log it is a file unpickled on another system
    # than the one that saved it (ultralytics/yolov5's Windows-trained weights on Linux, fastai's data on Windows)
    kind="pickled_platform_path",
    title="a path of another operating system pickled into a saved file",
    anchors=("cannot instantiate '",),
    templates=("system:pathlib-cannot-instantiate",),
    match=R(r"cannot instantiate '(?P<path_class>\w{1,40})' on your system"),
    # certain where the error's own traceback shows the unpickling (torch.load's frames, or the user's line loading
    # the file): a torch.load elsewhere in the log is not it. Where the user's own line made the class, it is no
    # saved file at all (holds)
    raised_facts=_path_made,
    holds=lambda facts: "path_made_by_code" not in facts,
    confirm=has_fact("path_unpickled"),
    describe=_platform_path,
)


def _safetensors_save(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if all(h.anchor == SAFETENSORS_FRAME for h in hits):
        return _safetensors_cut(hits, ctx)
    if first(hits, "shared"):
        return (
            f"safetensors refused to save tensors that share memory ({first(hits, 'shared')}): tied weights, such as "
            "the input embedding and the output head" + on_ranks(hits),
            "safetensors stores each tensor once and will not save two names of one storage. Where a Trainer or "
            "save_pretrained saves it, the model's tied weights are not declared to transformers (a custom or wrapped "
            "model: declare _tied_weights_keys in the PreTrainedModel subclass, or save the inner model, "
            "accelerator.unwrap_model(model).save_pretrained(dir)), or save without safetensors "
            "(TrainingArguments(save_safetensors=False), save_pretrained(dir, safe_serialization=False)); calling "
            "safetensors yourself, use safetensors.torch.save_model(model, path), which drops the duplicates, or "
            "save clones ({k: v.clone() for k, v in state.items()}) when they are meant to differ.",
        )
    return (
        f"safetensors refused to save a tensor that is not contiguous ({first(hits, 'noncontiguous') or 'a tensor'}): "
        "a view or transpose of another tensor" + on_ranks(hits),
        "safetensors writes each tensor's memory as it is laid out and needs it contiguous: make the state dict's "
        "tensors contiguous before saving ({k: v.contiguous() for k, v in state.items()}), or the parameter in "
        "the model (p.data = p.data.contiguous(), for weights made by a transpose or converted from another "
        "layout) before save_pretrained / the Trainer's save; or save without safetensors "
        "(TrainingArguments(save_safetensors=False), safe_serialization=False).",
    )


# a traceback whose last frame is safetensors' save_file / save (or the _flatten and _tobytes they call), with no
# error line after it (a log cut there): where the save failed, not why
SAFETENSORS_FRAME = 'safetensors/torch.py", line'

SAFETENSORS_SAVE_REFUSED = Recogniser(
    # safetensors/torch.py (_flatten, _tobytes; save_file and save, which save_pretrained and the Trainer call)
    kind="safetensors_save_refused",
    title="safetensors refusing shared or non-contiguous tensors",
    anchors=(
        "Some tensors share memory, this will lead to duplicate",
        "You are trying to save a non contiguous tensor",
        # transformers/modeling_utils.py (5.x) save_pretrained: tied weights the model does not declare
        "which are not properly defined. We found all the potential target tied weights keys",
        SAFETENSORS_FRAME,
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "The weights trying to be saved contained shared tensors",
    ),
    generic=(SAFETENSORS_FRAME,),
    span=4,
    # the frame of a function that does not save (load_file, safe_open's callers), or a traceback that goes on
    # below the frame (another frame, an error line: the error is read from its own line)
    reject=R(
        r'\A[^\n]*safetensors/torch\.py", line \d+, in (?!(?:save_file|save|_flatten|_tobytes)\b)'
        r'|\A[^\n]*safetensors/torch\.py", line[^\n]*\n(?:[^\n]*\n)*?[^\n]*(?:File "|Error\b|Exception\b)'
    ),
    templates=(
        "third_party:safetensors-tensors-share-memory",
        "third_party:safetensors-non-contiguous-tensor",
        "transformers:the-weights-trying-to-be-saved",
    ),
    facts=(
        # the message is long: a log (or a post quoting it) that wraps it puts "again: [...]" on the next line
        R(
            r"Some tensors share memory, this will lead to duplicate[^:]{0,80}?: (?P<shared>[^\n]{1,300}?)\.?(?=\n|\Z)"
        ),
        R(r'safetensors/torch\.py", line \d+, in (?P<safetensors_frame>save_file|save|_flatten|_tobytes)\b'),
        R(r"You are trying to save a non contiguous tensor: `(?P<noncontiguous>[^`\n]{1,200})`"),
        R(r"contained shared tensors (?P<shared>[^\n]{1,300}?) which are not properly defined"),
    ),
    describe=_safetensors_save,
)


def _safetensors_cut(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    frame = first(hits, "safetensors_frame") or "save_file"
    return (
        f"the save failed inside safetensors' {frame}: the traceback ends there and its error is not in the log"
        + on_ranks(hits),
        "safetensors refuses two things there: a tensor that is not contiguous (a view or transpose; make the state "
        "dict's tensors contiguous before saving, {k: v.contiguous() for k, v in state.items()}, or the parameter "
        "in the model, p.data = p.data.contiguous()) and tensors that share memory (tied weights: declare them to "
        "transformers, or save with safetensors.torch.save_model, which drops the duplicates). The error line after "
        "the traceback says which (a full disk or a refused write is raised there too); or save without safetensors "
        "(safe_serialization=False, TrainingArguments(save_safetensors=False)).",
    )


def _sharded_unconsolidated(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a checkpoint holding ShardedTensors (each rank's shard of a sharded state dict) was loaded in a process "
        "with no process group" + on_ranks(hits),
        "A sharded checkpoint is one file per rank holding only that rank's shard, and torch.load rebuilds its "
        "ShardedTensors only inside the process group it was cut for. To use the weights outside the training job "
        "(inference, a conversion to Hugging Face, one GPU), save them consolidated: a full state dict from the job "
        "(FSDP's StateDictType.FULL_STATE_DICT, or the framework's monolithic checkpoint, such as Composer's "
        "MonolithicCheckpointSaver callback), or convert a torch.distributed.checkpoint folder with "
        "torch.distributed.checkpoint.format_utils.dcp_to_torch_save. To load the shards as they are, start as many "
        "processes as saved them and call init_process_group before torch.load.",
    )


SHARDED_CHECKPOINT_NOT_CONSOLIDATED = Recogniser(
    # torch/distributed/_shard/sharded_tensor/api.py (ShardedTensor.__setstate__): a pickled ShardedTensor (FSDP's
    # LOCAL_STATE_DICT, an older SHARDED_STATE_DICT saved with torch.save) unpickled where no default process group
    # exists
    kind="sharded_checkpoint_not_consolidated",
    title="a sharded checkpoint loaded outside its process group",
    anchors=("before loading ShardedTensor",),
    templates=("torch:need-to-initialize-default-process-group",),
    # likely only: a distributed script that loads its shards before init_process_group prints it too
    generic=("before loading ShardedTensor",),
    describe=_sharded_unconsolidated,
)


RECOGNISERS = (
    SAFETENSORS_SAVE_REFUSED,
    SHARDED_CHECKPOINT_NOT_CONSOLIDATED,
    CHECKPOINT_TRUNCATED,
    CHECKPOINT_CLASS_MISSING,
    PICKLED_PLATFORM_PATH,
    META_WEIGHTS_NOT_LOADED,
    CONCURRENT_CHECKPOINT_WRITE,
    DISK_FULL,
    CROSS_DEVICE_RENAME,
    OPTIMIZER_GROUP_MISMATCH,
    UNPICKLABLE_CHECKPOINT_OBJECT,
    MAKEDIRS_RACE,
    CHECKPOINT_WORLD_SIZE,
    CHECKPOINT_DEVICE_MAP,
    WEIGHTS_ONLY_LOAD,
    FSDP_WRAP_CONFIG,
    MODEL_CHECKPOINT_MISMATCH,
    STATE_DICT_KEYS,
    CHECKPOINT_INCOMPLETE,
)
