"""The attention implementation a transformers model was asked for, refused: an architecture without it, FlashAttention
on a device it does not run on, a name transformers does not know.

The checks are transformers' (``modeling_utils.py``: ``_flash_attn_can_dispatch``, ``_check_and_adjust_attn_impl``,
``_sdpa_can_dispatch``, ``_flex_attn_can_dispatch``, ``get_correct_attn_implementation``, and
``AttentionInterface.get``), raised while ``from_pretrained`` (or ``set_attn_implementation``) builds the model,
and flash-attn's own (``csrc/flash_attn/flash_api.cpp``: a GPU before Ampere, float32 inputs), raised at the first
forward. Each names the implementation and why it cannot be used: certain, but for flash-attn's float32 refusal,
which a library's code upcasting the inputs prints too (likely, ``library_version_bug`` named). (The flash-attn package missing or too old is
``dependency_version``'s.)
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.refusal_table import describe_refusal, refusal_pattern
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser

_OTHER_ATTENTION = (
    "Load the model with an attention implementation the architecture has: from_pretrained(..., "
    "attn_implementation='sdpa') (PyTorch's own fused attention, no extra package) or 'eager'; a newer transformers "
    "release may add the one asked for (its model page lists what each architecture supports)."
)
_FLASH_NEEDS_GPU = (
    "FlashAttention runs on a CUDA GPU only: load the model with attn_implementation='sdpa' on a machine without one. "
    "If this machine has a GPU, torch does not see it (python -c 'import torch; print(torch.cuda.is_available())'; "
    "CUDA_VISIBLE_DEVICES, a CPU-only torch build); load the model onto it (device_map='cuda' or {'': LOCAL_RANK})."
)

# (the text the source prints, the fix)
REFUSALS: tuple[tuple[str, str], ...] = (
    ("does not support Flash Attention", _OTHER_ATTENTION),
    (
        "does not support an attention implementation through torch.nn.functional.scaled_dot_product_attention",
        (
            "This architecture has no SDPA path in this transformers release: load it with attn_implementation='eager' "
            "(or 'flash_attention_2' on a GPU that has it), or upgrade transformers to a release that adds SDPA for it."
        ),
    ),
    ("does not support an attention implementation through torch's flex_attention", _OTHER_ATTENTION),
    ("is not available on CPU. Please make sure you are on any of the supported devices", _FLASH_NEEDS_GPU),
    ("with a model not initialized on GPU and with no GPU available", _FLASH_NEEDS_GPU),
    (
        "requires compute capability >= ",
        "This FlashAttention needs a newer GPU than this one (FlashAttention 2: Ampere, compute capability 8.0, or "
        "newer; FlashAttention 3: Hopper): on a V100, T4 or older card load the model with attn_implementation='sdpa' "
        "(or 'eager'), which run on any GPU.",
    ),
    # flash-attn's own kernels (csrc/flash_attn/flash_api.cpp): a GPU before Ampere, float32 inputs
    (
        "FlashAttention only supports Ampere GPUs or newer",
        "flash-attn 2 runs on Ampere (compute capability 8.0) or newer GPUs only: on a V100, T4 or an RTX 20xx use "
        "attn_implementation='sdpa' (or 'eager') in from_pretrained, or turn the model's flash-attention option off.",
    ),
    (
        "FlashAttention only support fp16 and bf16 data type",
        "flash-attn computes in fp16/bf16 only, and the attention got float32 tensors: load the model with "
        "dtype=torch.bfloat16 (torch_dtype= in older transformers), or train under autocast (the Trainer's --bf16, "
        "accelerate's --mixed_precision bf16); or use attn_implementation='sdpa', which takes float32.",
    ),
    (
        "Specified `attn_implementation=",
        "Spell the attention implementation as transformers names it: attn_implementation='eager', 'sdpa', "
        "'flash_attention_2', 'flash_attention_3' or 'flex_attention' (a kernels hub name needs the kernels package), "
        "in from_pretrained(...) or the config's _attn_implementation.",
    ),
    (
        "is not a valid attention implementation registered in the `AttentionInterface`",
        "Use a name registered in transformers' AttentionInterface ('sdpa', 'flash_attention_2', 'flex_attention', "
        "...), or register your own first: AttentionInterface.register('my_attention', fn).",
    ),
)


def _not_float32_alone(hits: list[Hit], ctx: Context) -> bool:
    """Certain unless every hit is flash-attn's float32 refusal: a model loaded in float32 prints it, and so does a
    library's code that upcasts the query to float32 (a rotary embedding computed in fp32) before calling it."""
    return not all("flash_fp32" in h.facts for h in hits)


_not_float32_alone.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


ATTENTION_IMPLEMENTATION = Recogniser(
    kind="attention_implementation",
    title="a transformers attention implementation that cannot be used here",
    anchors=tuple(anchor for anchor, _ in REFUSALS),
    templates=(
        # transformers/modeling_utils.py
        "transformers:does-not-support-flash-attention-yet",
        "transformers:does-not-support-an-attention-implementation",
        "transformers:does-not-support-an-attention-implementation-2",
        "transformers:flashattention-is-not-available-on-cpu",
        "transformers:you-are-attempting-to-use-flash-3",
        "transformers:flashattention-requires-compute-capability-but-found",
        "transformers:specified-attn-implementation-is-not-supported",
        "transformers:specified-attn-implementation-is-not-supported-2",
        "transformers:is-not-valid-attention-implementation-registered",
        # flash-attn's csrc/flash_attn/flash_api.cpp, kept by hand in third_party.tsv
        "third_party:flash-attn-ampere-or-newer",
        "third_party:flash-attn-fp16-bf16-only",
    ),
    facts=(
        refusal_pattern(REFUSALS, after=200),
        re.compile(r"(?P<flash_fp32>FlashAttention only support fp16 and bf16 data type)"),
    ),
    confirm=_not_float32_alone,
    also=(
        Alternative(
            "library_version_bug",
            "a library's model code that casts the attention's inputs to float32 before flash-attn (its release's bug)",
            "When the model was loaded in bf16/fp16 and the traceback's frames below your script are a package's, that "
            "code upcast the query or keys (a rotary embedding computed in fp32): update the package, or pin the "
            "release that casts them back to the input dtype.",
            when=("flash_fp32",),
        ),
    ),
    # "requires compute capability" is FlashAttention's only beside its name (other kernels print the words too)
    reject=re.compile(r"^(?![^\n]*FlashAttention)[^\n]*requires compute capability >= "),
    describe=describe_refusal(
        REFUSALS, "the model's attention implementation cannot be used", message="refusal", limit=200
    ),
)

RECOGNISERS = (ATTENTION_IMPLEMENTATION,)
