"""FSDP2's fully_shard refusing how it was applied or run.

Containers without forward, parameters on another device, shard placements, the meshes of FSDP with tensor
parallelism, forward not started at the root.

``torch/distributed/fsdp/_fully_shard/`` (``_fully_shard.py``, ``_fsdp_init.py``, ``_fsdp_param.py``,
``_fsdp_param_group.py``, ``_fsdp_state.py``, ``_fsdp_common.py``, ``_fsdp_collectives.py``), torch 2.4-2.13. Each
message names its own mistake: certain once a real log shows it. A non-contiguous parameter and mixed gradient dtypes
in one reduce-scatter are kinds/fsdp2_params.py's; FSDP settings refused by accelerate or the Trainer,
kinds/fsdp_config.py's.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_CONTAINER = (
    "fully_shard was applied to a container without a forward (nn.ModuleList, nn.ModuleDict): FSDP2 gathers a "
    "module's parameters in its forward, so apply it to each block inside (for block in model.layers: "
    "fully_shard(block)), then to the root model."
)

_DEVICE = (
    "fully_shard moves plain parameters to its mesh's device itself, but not parameters that are already DTensors "
    "(sharded by parallelize_module) or a tensor subclass on another device: move the model to the GPU before "
    "tensor parallelism (torch.cuda.set_device(local_rank); model.to('cuda'); then parallelize_module on a mesh "
    "built with 'cuda', then fully_shard on a slice of the same mesh), or build it under torch.device('meta') and "
    "call model.to_empty(device='cuda') and your weight initialisation after fully_shard."
)

_EVEN = (
    "A shard_placement_fn that shards a parameter on a dimension other than 0 needs that dimension divisible by the "
    "data-parallel size (the message names the size and the world size): shard it on dim 0 (the default, which "
    "pads uneven sizes), return None for such parameters, or pad the dimension."
)

_MESHES = (
    "FSDP2 over tensor / expert parallelism takes meshes cut from one root mesh: mesh = init_device_mesh('cuda', "
    "(dp, tp), mesh_dim_names=('dp', 'tp')); parallelize_module(model, mesh['tp'], plan); fully_shard(model, "
    "mesh=mesh['dp']). Parameters already sharded by TP must be DTensors on mesh['tp'] of that same root, on the "
    "same device type, with at most 2-D TP/EP."
)

_ROOT_FORWARD = (
    "FSDP2 decides which fully_shard module is the root when forward first runs, and that must be the outermost one: "
    "call fully_shard on the whole model last (after its blocks) and run forward through it (model(batch)), not "
    "through a submodule first (an evaluation or a warm-up that calls model.layers[0] directly)."
)

_PREFETCH = (
    "set_modules_to_forward_prefetch / set_modules_to_backward_prefetch and the other FSDPModule calls take modules "
    "fully_shard was applied to: pass those blocks (model.layers[i + 1]), after fully_shard ran on them."
)

_SPMD = (
    "fully_shard(..., dp_mesh_dims=...) over an SPMD mesh needs the mesh built with mesh_dim_names, a shard and/or "
    "replicate dimension named in dp_mesh_dims, and every parameter already a DTensor on that full mesh "
    "(distribute_module / parallelize_module first)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    (" does not support containers that do not implement forward:", _CONTAINER),
    ("Expects the parameter to already be moved to device", _DEVICE),
    ("Expects DTensor to be moved to", _DEVICE),
    ("FSDP does not support uneven sharding on dim", _EVEN),
    ("requires even sharding: unsharded_grad.size()=", _EVEN),
    ("requires even sharding: local_tensor.size()=", _EVEN),
    (
        "Invalid shard_placement_fn result:",
        "shard_placement_fn(param) returns Shard(dim) with 0 <= dim < param.ndim, or None for the default Shard(0).",
    ),
    ("Requires DTensor to have mesh of the same type as the FSDP mesh", _MESHES),
    ("Expected param's DTensor mesh to be the same mesh passed to fully_shard", _MESHES),
    ("FSDP requires the DP and model parallel TP/EP mesh to be not None", _MESHES),
    ("FSDP only supports 1D TP/EP or 2D EP+TP, not", _MESHES),
    ("_spmd_mesh.ndim can only be 2 (FSDP+TP/EP), 3 (FSDP+EP+TP, HSDP+TP/EP), or 4 (HSDP+EP+TP)", _MESHES),
    (
        "Some parameters are not in the module tree of",
        "fully_shard(module) shards the parameters registered in that module's tree: a parameter shared with a "
        "module outside it (tied embeddings where only one side is inside), or tensors assigned as plain attributes, "
        "are not. Apply fully_shard to a module that holds both users of a shared weight, and register parameters "
        "as nn.Parameter attributes of submodules.",
    ),
    (
        "FSDP expects uniform reduce dtype but got",
        "The parameters of one fully_shard group have different dtypes, so their gradients would be reduced in "
        "different dtypes: cast the model to one dtype before fully_shard (model.to(torch.float32)), or set "
        "MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32), or give the odd parameters "
        "a fully_shard of their own.",
    ),
    (" requires a single root module but got", _ROOT_FORWARD),
    ("requires running forward through the root module first", _ROOT_FORWARD),
    ("No FSDP state found on", _PREFETCH),
    ("Expects FSDPModule but got", _PREFETCH),
    ("Expects list of FSDPModules but got", _PREFETCH),
    (
        "returned a view tensor. An in-place op on this view",
        "A fully_shard module returned a view of a tensor, and an in-place op on it (x += y) would skip FSDP2's "
        "pre-backward hook, so gradients of that module would be wrong: write the op out of place (x = x + y) on "
        "the module's output, or return a non-view (out.clone()) from its forward.",
    ),
    (
        "means resharding parameters to world size 1, instead of reshard_after_forward=True (bool)",
        "reshard_after_forward=1 is an int: the size to reshard to, here 1 (keep whole parameters after forward, "
        "more memory). For FULL_SHARD behaviour pass True (bool); False keeps them unsharded until backward.",
    ),
    (
        "Both fsdp_pre_all_gather and fsdp_post_all_gather should be defined if using all-gather extensions",
        "A tensor subclass used as an FSDP2 parameter (float8, a quantized weight) defines one of the all-gather "
        "extension hooks without the other: define both fsdp_pre_all_gather and fsdp_post_all_gather, or update "
        "the library that provides the subclass (torchao) to the release that matches this torch.",
    ),
    ("mesh must have mesh_dim_names when dp_mesh_dims is provided", _SPMD),
    ("At least one of shard or replicate must be set in dp_mesh_dims", _SPMD),
    ("all parameters must be DTensors on the full SPMD mesh", _SPMD),
)

FULLY_SHARD_USAGE = refusal_recogniser(
    kind="fully_shard_usage",
    title="FSDP2's fully_shard refused how it was applied or run",
    refusals=REFUSALS,
    templates=(
        "torch:does-not-support-containers-that-do",
        "torch:expects-the-parameter-to-already-be",
        "torch:expects-dtensor-to-be-moved-to",
        "torch:fsdp-does-not-support-uneven-sharding",
        "torch:shard-requires-even-sharding-unsharded-grad",
        "torch:shard-requires-even-sharding-local-tensor",
        "torch:invalid-shard-placement-fn-result",
        "torch:requires-dtensor-to-have-mesh-of",
        "torch:expected-param-dtensor-mesh-to-be",
        "torch:fsdp-requires-the-dp-and-model",
        "torch:fsdp-only-supports-tp-ep-or",
        "torch:spmd-mesh-ndim-can-only-be",
        "torch:some-parameters-are-not-in-the",
        "torch:fsdp-expects-uniform-reduce-dtype-but",
        "torch:requires-single-root-module-but-got",
        "torch:state-has-already-been-lazily-initialized",
        "torch:no-fsdp-state-found-on",
        "torch:expects-fsdpmodule-but-got",
        "torch:expects-list-of-fsdpmodules-but-got",
        "torch:fsdp2-wrapped-module-returned-view-tensor",
        "torch:reshard-after-forward-int-means-resharding",
        "torch:both-fsdp-pre-all-gather-and",
        "torch:mesh-must-have-mesh-dim-names",
        "torch:at-least-one-of-shard-or-2",
        "torch:when-dp-mesh-dims-is-provided",
    ),
)

RECOGNISERS = (FULLY_SHARD_USAGE,)
