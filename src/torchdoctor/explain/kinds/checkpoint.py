"""Kinds of failure loading a checkpoint: state-dict keys that do not match, a checkpoint without its state.

The message texts are torch's (``nn/modules/module.py``: ``load_state_dict``; ``serialization.py``) and
transformers' (``integrations/deepspeed.py``: ``deepspeed_load_checkpoint``), as the catalog holds them.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, merged, on_ranks

R = re.compile

# the wrappers whose attribute name ends up in front of every key of a state dict saved through them
PREFIXES = (
    ("module.", "DistributedDataParallel / DataParallel"),
    ("_orig_mod.", "torch.compile"),
    ("_fsdp_wrapped_module.", "FSDP"),
    ("_checkpoint_wrapped_module.", "activation checkpointing"),
)


def _state_dict(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    keys = " ".join(str(h.facts.get("keys", "")) for h in hits)
    summary = "the checkpoint's state dict does not match the model" + (
        f" ({facts['model']})" if facts.get("model") else ""
    )
    for prefix, wrapper in PREFIXES:
        if f'"{prefix}' in keys or f"'{prefix}" in keys:
            summary += f": its keys start with {prefix!r} (saved through {wrapper})"
            fix = (
                f"The state dict was saved from the {wrapper} wrapper, so every key starts with {prefix!r}. "
                "Save the inner model next time (model.module.state_dict() under DDP), and load this one with "
                "the prefix taken off:\n"
                f"state = {{k.removeprefix({prefix!r}): v for k, v in state.items()}}   # then load_state_dict"
                "(state)\n(or torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, "
                f"{prefix!r}))"
            )
            return summary + on_ranks(hits), fix
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


STATE_DICT_KEYS = Recogniser(
    kind="state_dict_keys",
    title="state dict does not match the model",
    anchors=(
        "Error(s) in loading state_dict",
        "Missing key(s) in state_dict",
        "Unexpected key(s) in state_dict",
        "in state_dict",
    ),
    match=R(
        r"[Kk]ey\(s\) in state_dict|loading state_dict|(?:unexpected|missing) key ['\"][^'\"\n]{1,300}['\"] in state_dict"
    ),
    templates=(
        "torch:error-in-loading-state-dict-for",
        "torch_native:missing-keys-in-state-dict",
        "torch_native:unexpected-keys-in-state-dict",
        "torch_native:unexpected-key-in-state-dict-old",
    ),
    span=4,
    facts=(
        R(r"Error\(s\) in loading state_dict for (?P<model>\w{1,100})"),
        R(r"(?P<keys>(?:Missing|Unexpected) key\(s\) in state_dict: [^\n]{0,2000})"),
        R(r"(?P<keys>(?:unexpected|missing) key ['\"][^'\"\n]{1,300}['\"] in state_dict)"),
        R(r"size mismatch for (?P<size_param>[\w.]{1,200}):"),
    ),
    describe=_state_dict,
)


def _incomplete(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    path = facts.get("path", "").strip()
    summary = "DeepSpeed could not resume from the checkpoint" + (f" {path}" if path else "")
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
    anchors=("[deepspeed] failed to resume from checkpoint",),
    templates=("transformers:deepspeed-failed-to-resume-from-checkpoint",),
    facts=(R(r"failed to resume from checkpoint (?P<path>\S{1,500})"),),
    describe=_incomplete,
)


RECOGNISERS = (STATE_DICT_KEYS, CHECKPOINT_INCOMPLETE)
