"""The attention implementation a transformers model was asked for, refused.

An architecture without it, FlashAttention on a device it does not run on, a name transformers does not know.

The checks are transformers' (``modeling_utils.py``: ``_flash_attn_can_dispatch``, ``_check_and_adjust_attn_impl``,
``_sdpa_can_dispatch``, ``_flex_attn_can_dispatch``, ``get_correct_attn_implementation``, and
``AttentionInterface.get``), raised while ``from_pretrained`` (or ``set_attn_implementation``) builds the model,
and flash-attn's own refusal of a GPU before Ampere (``csrc/flash_attn/flash_api.cpp``), raised at the first
forward, and its backward's refusal of a head dimension above 192 on GPUs other than A100/H100 (2.0-2.5.4; from
2.5.5 only head dim 256 with dropout, or 224). Each names the implementation and why it cannot be used: certain. (flash-attn's float32 refusal is
``dtype_mismatch``'s, kinds/operand_dtypes.py; the flash-attn package missing or too old ``dependency_version``'s.)
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.refusal_table import describe_refusal, refusal_pattern
from torchdoctor.explain.recognisers import Recogniser

FAMILY = "a library refusing its settings"

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
    # flash-attn's own kernels (csrc/flash_attn/flash_api.cpp): a GPU before Ampere
    (
        "FlashAttention only supports Ampere GPUs or newer",
        "flash-attn 2 runs on Ampere (compute capability 8.0) or newer GPUs only: on a V100, T4 or an RTX 20xx use "
        "attn_implementation='sdpa' (or 'eager') in from_pretrained, or turn the model's flash-attention option off.",
    ),
    # flash-attn's backward (csrc/flash_attn/flash_api.cpp mha_bwd): head dims above 192 on a GPU other than sm80/sm90;
    # 2.5.5 took head dim 256 without dropout to the other Ampere/Ada GPUs and narrowed the message
    (
        "FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
        "flash-attn before 2.5.5 trains a head dimension above 192 only on A100/H100 (sm80/sm90): upgrade flash-attn "
        "(pip install -U flash-attn --no-build-isolation; from 2.5.5 head dim 256 without dropout trains on RTX "
        "30xx/40xx and A6000 too, with attention dropout 0; head dim 224 still needs A100/H100), or use attn_implementation='sdpa' (or 'eager') for "
        "this model on this GPU.",
    ),
    (
        "FlashAttention backward for head dim 256 with dropout, or head dim 224 with/without dropout requires",
        "On GPUs other than A100/H100 (sm80/sm90) flash-attn's backward takes head dim 256 only without dropout: set "
        "the attention dropout to 0 (the model config's attention_dropout / attn_pdrop), or use "
        "attn_implementation='sdpa' (or 'eager') on this GPU.",
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
        # flash-attn's csrc/flash_attn/flash_api.cpp mha_fwd / mha_varlen_fwd, kept by hand in third_party.tsv
        "third_party:flash-attn-ampere-or-newer",
        "third_party:flash-attn-backward-head-dim-192",
        "third_party:flash-attn-backward-head-dim-256-dropout",
    ),
    facts=(refusal_pattern(REFUSALS, after=200),),
    # "requires compute capability" is FlashAttention's only beside its name (other kernels print the words too)
    reject=re.compile(r"^(?![^\n]*FlashAttention)[^\n]*requires compute capability >= "),
    describe=describe_refusal(
        REFUSALS, "the model's attention implementation cannot be used", message="refusal", limit=200
    ),
)

RECOGNISERS = (ATTENTION_IMPLEMENTATION,)
