"""Context parallelism refusing an attention call or the buffers it shards.

``torch/distributed/tensor/experimental/_context_parallel/_attention.py`` (``context_parallel``, its SDPA and
FlexAttention dispatch, the load balancer), torch 2.5-2.13: ring attention shards the sequence dimension of the
buffers it is given and runs scaled_dot_product_attention with the flash or memory-efficient kernels only, without
an attention mask. Each message names its own cause: certain once a real log shows it.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_BUFFERS = (
    "context_parallel(mesh, buffers=[input_ids, labels, position_ids], buffer_seq_dims=[1, 1, 1], "
    "no_restore_buffers={input_ids, labels}) takes one sequence dimension per buffer, every buffer on the same "
    "device, and no_restore_buffers drawn from buffers."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    (
        "CP only supports flash attention and memory efficient attention now.",
        "Under context_parallel, scaled_dot_product_attention must run the flash or memory-efficient kernel: wrap "
        "the step in `with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):`, with "
        "bf16/fp16 inputs and no attn_mask, and make the model call F.scaled_dot_product_attention "
        "(attn_implementation='sdpa' for a Hugging Face model), not eager attention.",
    ),
    (
        "attn_bias is not supported yet",
        "Ring attention takes no attention mask or bias: pass is_causal=True instead of a causal attn_mask (and keep "
        "padding out of the batch, e.g. by packing sequences), or train without context parallelism.",
    ),
    (
        "is_causal requires the same query and context sequence lengths",
        "With is_causal=True the query and the keys/values must have the same sequence length under context "
        "parallelism: shard them alike (the same buffers, the same seq dim), without a KV cache of another length.",
    ),
    (
        "Load balancing requires `is_causal=True`.",
        "The load balancer of context parallelism reorders the sequence for causal attention only: call SDPA with "
        "is_causal=True, or turn load balancing off before the step "
        "(from torch.distributed.tensor.experimental._attention import _cp_options; "
        "_cp_options.enable_load_balance = False).",
    ),
    (
        "is not divisible by CP mesh world size",
        "FlexAttention under context parallelism needs the query length divisible by the CP size times the block "
        "size (128): pad the sequence to a multiple of cp_size * 128.",
    ),
    ("`seq_dims` must have the same number of elements as `buffers`.", _BUFFERS),
    ("`seq_dims` must have the pytree structure as `buffers`.", _BUFFERS),
    ("`no_restore_buffers` must be a subset of `buffers`.", _BUFFERS),
    ("All buffers must be on the same device", _BUFFERS),
    (
        "process group must be single dimension",
        "context_parallel takes a 1-D mesh for the sequence dimension: pass the CP slice of the mesh "
        "(world_mesh['cp']), not the whole multi-dimensional mesh.",
    ),
)

CONTEXT_PARALLEL_ATTENTION = refusal_recogniser(
    kind="context_parallel_attention",
    title="context parallelism refused an attention call or its buffers",
    refusals=REFUSALS,
    templates=(
        "torch:cp-only-supports-flash-attention-and",
        "torch:attn-bias-is-not-supported-yet",
        "torch:is-causal-requires-the-same-query",
        "torch:load-balancing-requires-is-causal-true",
        "torch:len-is-not-divisible-by-cp",
        "torch:seq-dims-must-have-the-same",
        "torch:seq-dims-must-have-the-pytree",
        "torch:no-restore-buffers-must-be-subset",
        "torch:all-buffers-must-be-on-the",
        "torch:process-group-must-be-single-dimension",
    ),
)

RECOGNISERS = (CONTEXT_PARALLEL_ATTENTION,)
