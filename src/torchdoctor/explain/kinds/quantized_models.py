"""A quantized transformers model cast to another dtype or moved after loading, which transformers refuses.

The checks are transformers' (``modeling_utils.py``: ``PreTrainedModel.cuda``, ``to``, ``half`` and ``float``): a
model loaded with a ``quantization_config`` (bitsandbytes 4/8-bit, GPTQ, Quark) already has its dtype and devices,
and ``.half()`` / ``.float()`` / ``.to(dtype)`` / an 8-bit model's ``.cuda()`` are refused. Whose call it was decides
the fix: certain when the traceback goes from the script's frame into transformers' only; a library's frames (a
training framework casting or moving the model), or a traceback cut short, leave it likely.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import describe_refusal, refusal_pattern
from torchdoctor.explain.recognisers import Context, Hit, Recogniser, library_call

FAMILY = "a library refusing its settings"

_LOAD_AS_WANTED = (
    "A quantized model keeps the dtype and devices from_pretrained gave it: drop the .half() / .float() / "
    ".to(dtype) / .cuda() call, and choose them when loading instead: from_pretrained(..., quantization_config="
    "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16), dtype=torch.bfloat16, "
    "device_map={'': LOCAL_RANK}); for mixed precision train with the Trainer's --bf16 (autocast), not a cast."
)

_MOVE_AS_LOADED = (
    "A bitsandbytes model stays on the devices from_pretrained put it on: drop the .to(device) / .cuda() after "
    "loading and choose the device when loading instead, from_pretrained(..., quantization_config=..., "
    "device_map={'': LOCAL_RANK}) (or {'': 0} on one GPU). Where the traceback shows from_pretrained itself "
    "moving the model (accelerate's dispatch_model calling model.to), the installed transformers, accelerate and "
    "bitsandbytes do not fit together: upgrade them together (pip install -U transformers accelerate "
    "bitsandbytes); transformers 5.x moves a 4-bit model, and an 8-bit one with bitsandbytes >= 0.48.0."
)

# (the text the source prints, the fix)
REFUSALS: tuple[tuple[str, str], ...] = (
    ("`.half()` is not supported for quantized model", _LOAD_AS_WANTED),
    ("`.float()` is not supported for quantized model", _LOAD_AS_WANTED),
    ("Calling `cuda()` is not supported for `8-bit` quantized models", _LOAD_AS_WANTED),
    ("You cannot cast a bitsandbytes model in a new `dtype`", _LOAD_AS_WANTED),
    ("You cannot cast a GPTQ model in a new `dtype`", _LOAD_AS_WANTED),
    ("Casting a Quark quantized model to a new `dtype` is not supported", _LOAD_AS_WANTED),
    # transformers 4.x's PreTrainedModel.to on any bitsandbytes model (its first wording, mid-2023: "... `8-bit`
    # models.", without "bitsandbytes") (5.23 moves a 4-bit one, and an 8-bit one
    # with bitsandbytes >= 0.48.0); accelerate's dispatch_model calls it too, inside from_pretrained
    ("`.to` is not supported for `4-bit` or `8-bit`", _MOVE_AS_LOADED),
)


def _script_call(hits: list[Hit], ctx: Context) -> bool:
    """Certain when a hit's traceback goes from the script's own frame into transformers (and torch) only."""
    return any(
        h.facts.get("frame_packages") and set(h.facts["frame_packages"]) <= {"transformers", "torch"}
        for h in hits
    )


QUANTIZED_MODEL_CAST = Recogniser(
    kind="quantized_model_cast",
    title="a quantized model cast or moved after loading",
    anchors=tuple(anchor for anchor, _ in REFUSALS),
    templates=(
        # transformers/modeling_utils.py PreTrainedModel.half / float / cuda / to
        "transformers:half-is-not-supported-for-quantized",
        "transformers:float-is-not-supported-for-quantized",
        "transformers:calling-cuda-is-not-supported-for",
        "transformers:you-cannot-cast-bitsandbytes-model-in",
        "transformers:you-cannot-cast-gptq-model-in",
        "transformers:casting-quark-quantized-model-to-new",
        "third_party:transformers-to-not-supported-bitsandbytes",  # transformers 4.x's PreTrainedModel.to
    ),
    facts=(refusal_pattern(REFUSALS, after=200),),
    confirm=_script_call,
    also=(
        library_call(
            "a training framework's code casting or moving the quantized model (its release older than the "
            "quantization support of transformers)",
            "update that framework (accelerate, peft, trl, Lightning) to a release that leaves quantized models as "
            "loaded, or pin the transformers release it was written for.",
        ),
    ),
    describe=describe_refusal(
        REFUSALS, "a quantized model was cast or moved after loading", message="refusal"
    ),
)

RECOGNISERS = (QUANTIZED_MODEL_CAST,)
