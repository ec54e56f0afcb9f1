"""A view, reshape, flatten, unbind or cat of DTensors that would cut across how they are sharded.

``torch/distributed/tensor/_ops/_view_ops.py`` (view / reshape / flatten / unflatten of a sharded DTensor) and
``_ops/_tensor_ops.py`` (unbind, cat), torch 2.5-2.13: DTensor keeps a view local to each shard only when the
sharded dimension survives it whole and divides evenly; otherwise it asks for the tensor to be redistributed first.
Under tensor parallelism the usual writer is attention code that reshapes activations to (batch, seq, heads,
head_dim) with the model's full head count while the projections are sharded. Each message names its own cause:
certain once a real log shows it. An op without a sharding rule is kinds/dtensor_ops.py's.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_RESHAPE = (
    "A view / reshape / flatten would split or merge the dimension this DTensor is sharded on, or that dimension "
    "does not divide evenly over the mesh (the message names the dimension, its size and the mesh size). Either "
    "redistribute first (x = x.redistribute(mesh, [Replicate()]) or shard another dimension), or reshape the local "
    "shard: under tensor parallelism compute with the local head count (n_heads // tp_size, what "
    "ColwiseParallel(use_local_output=True) hands the attention code) instead of the model's full n_heads, and keep "
    "sizes divisible by the mesh."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("which requires redistribution. Please redistribute the input first.", _RESHAPE),
    ("Cannot shard unevenly distributed tensor: dimension", _RESHAPE),
    ("Cannot flatten unevenly sharded tensor: dimension", _RESHAPE),
    ("Cannot unflatten unevenly sharded tensor: output dimension", _RESHAPE),
    (
        "Attempted to unbind along the sharded dimension",
        "unbind (and indexing that unbinds, as q, k, v = qkv.unbind(0)) cannot run along the sharded dimension: "
        "redistribute that dimension to Replicate() first, or shard the tensor along another dimension (shard the "
        "fused qkv projection so each part is sharded within itself).",
    ),
    (
        "cat op doesn't support cross mesh concatenation",
        "torch.cat of DTensors needs them on one DeviceMesh: redistribute / rebuild the odd one on the same mesh "
        "(or the same slice of it), or concatenate the local tensors.",
    ),
    (
        "The intermediate results of nll_loss cannot be evenly sharded,",
        "Under loss_parallel the loss's mean is taken over shards of unequal token counts, so it is biased: make the "
        "number of tokens (batch x sequence) divisible by the tensor-parallel size, or use reduction='sum' and "
        "divide by the token count yourself.",
    ),
)

DTENSOR_SHARDED_VIEW = refusal_recogniser(
    kind="dtensor_sharded_view",
    title="a view, reshape or unbind across a DTensor's sharded dimension",
    refusals=REFUSALS,
    templates=(
        "torch:this-operation-would-remove-or-reshape",
        "torch:cannot-shard-unevenly-distributed-tensor-dimension",
        "torch:cannot-flatten-unevenly-sharded-tensor-dimension",
        "torch:cannot-unflatten-unevenly-sharded-tensor-output",
        "torch:attempted-to-unbind-along-the-sharded",
        "torch:cat-op-doesn-support-cross-mesh",
        "torch:the-intermediate-results-of-nll-loss",
    ),
)

RECOGNISERS = (DTENSOR_SHARDED_VIEW,)
