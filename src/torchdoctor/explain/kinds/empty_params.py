"""A layer's parameter with no elements, met by the layer's own op: a sharded parameter used where it was not gathered.

wrapper_usage.py's ``fsdp_params_outside_forward`` reads the messages of an embedding or a resize that meets a
parameter FSDP freed; this module gives it the same for a normalisation layer, whose own check names the empty
shape:

- ``aten/src/ATen/native/layer_norm.h`` (``_check_layer_norm_inputs``): "Expected weight to be of same shape as
  normalized_shape, but got weight of shape [0] and normalized_shape = [1152]" (and the bias's twin). A LayerNorm's
  weight has the normalized shape unless something replaced its storage: FSDP's flat parameter, resharded after
  the forward that gathered it, leaves each original parameter an empty view (ZeRO-3's placeholders are empty
  too). The linear layers of the same block meet their weights as the flat shard's 1-D piece ("mat2 must be a
  matrix, got 1-D tensor", aten/src/ATen/native/LinearAlgebra.cpp), which alone says nothing.

The usual place is the recomputation of activation checkpointing's reentrant variant: it runs the layers again in
the backward, outside FSDP's gathering, so a vision or language model tuned on several GPUs with FSDP and
gradient_checkpointing fails there until ``use_reentrant=False`` (foundation-model-stack/fms-hf-tuning#451, Llava
and Granite vision models); generate(), a submodule called directly and evaluation code do it too. A log that shows
no FSDP still names this reading, likely, with ZeRO-3's beside it.

``CONTEXT`` lets the finding count without FSDP in the log (wrapper_usage.py requires one of its facts);
`describe` says it when a hit is this line.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, first

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ANCHORS = ("to be of same shape as normalized_shape, but got",)
TEMPLATES = ("aten:layer-norm-weight-shape", "aten:layer-norm-bias-shape")
# the alternative for wrapper_usage.py's match: only the empty shape, not a LayerNorm built for another width
MATCH = (
    r"(?P<empty_norm>Expected (?:weight|bias) to be of same shape as normalized_shape, but got (?:weight|bias) of "
    r"shape \[0\] and normalized_shape ?= ?\[[\d, ]{1,40}\])"
)
CONTEXT = (
    (
        ANCHORS[0],
        R(r"(?P<empty_norm_param>but got (?:weight|bias) of shape \[0\] and normalized_shape)"),
    ),
)
FACTS = ("empty_norm_param",)

ZERO3 = Alternative(
    "zero3_partitioned_weights",
    "DeepSpeed ZeRO-3's partitioned placeholders used outside the engine",
    "Under ZeRO-3 a parameter outside the engine's forward has shape [0]: gather it with "
    "deepspeed.zero.GatheredParameters, or build and call the model through the engine.",
    when=("empty_norm",),
)


def describe(hits: list[Hit]) -> tuple[str, str] | None:
    """(summary, fix) when a hit is a normalisation layer's empty weight or bias; else None."""
    said = first(hits, "empty_norm")
    if not said:
        return None
    return (
        f"a LayerNorm's parameter had no elements ({said}): a sharded model's parameter (FSDP's flat parameter "
        "after resharding, or a ZeRO-3 partition) was used where the wrapper had not gathered it, most often in "
        "the recomputation of reentrant activation checkpointing, which runs the layers again in the backward "
        "outside FSDP's forward",
        "With gradient checkpointing under FSDP use the non-reentrant variant: "
        "model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={'use_reentrant': False}) (TrainingArguments' "
        'gradient_checkpointing_kwargs={"use_reentrant": false}; torch.utils.checkpoint.checkpoint(..., '
        "use_reentrant=False)), or FSDP's own activation checkpointing (accelerate's fsdp_activation_checkpointing: "
        "true, apply_activation_checkpointing) instead of the model's. Outside the backward (generate(), a "
        "submodule called directly, evaluation code) call the model through its FSDP root or gather first: with "
        "FSDP.summon_full_params(model, writeback=False). Under DeepSpeed ZeRO-3 the same empty shape is a "
        "partition: gather it with deepspeed.zero.GatheredParameters.",
    )
