"""A tensor-parallel plan torch refuses: parallelize_module's plan, the ParallelStyles' layouts, loss_parallel.

``torch/distributed/tensor/parallel/api.py`` (``parallelize_module``), ``style.py`` (``ColwiseParallel``,
``RowwiseParallel``, ``PrepareModuleInput`` / ``PrepareModuleOutput``), ``loss.py`` (``loss_parallel``), ``fsdp.py``
(FSDP1 over tensor parallelism) and ``_api.py``'s ``distribute_module``, torch 2.2-2.13 (and two wordings of 2.0-2.8 kept in torch_native.tsv). Each message names its own
mistake: certain once a real log shows it. A plan key that matches no submodule is a warning torch prints and goes
on: the module it meant stays unsharded.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_LINEAR_ONLY = (
    "ColwiseParallel and RowwiseParallel shard nn.Linear and nn.Embedding only: name those submodules in the plan "
    "('layers.*.attention.wq': ColwiseParallel()), not the block that holds them, a Conv or a fused / quantized "
    "linear of another class; place other modules' inputs and outputs with PrepareModuleInput / "
    "PrepareModuleOutput or SequenceParallel, or distribute_module."
)

_LAYOUTS = (
    "PrepareModuleInput / PrepareModuleOutput take one layout per positional input (output): input_layouts and "
    "desired_input_layouts of the same length as the module's positional inputs, None for an input that is not a "
    "tensor (e.g. PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None))); "
    "keyword inputs go in input_kwarg_layouts / desired_input_kwarg_layouts, one entry per keyword in both."
)

_LOSS_PARALLEL = (
    "loss_parallel() computes cross-entropy on logits sharded along the class dimension by one mesh dimension: make "
    "the output layer ColwiseParallel(output_layouts=Shard(-1), use_local_output=False) so the logits stay a DTensor "
    "sharded on the last dimension, and on a mesh of more dimensions keep the others Shard or Replicate, with "
    "reduction='sum' or 'none' (divide by the token count yourself)."
)

_FN_ARGS = (
    "distribute_module's input_fn and output_fn take (module, inputs, device_mesh) and (module, outputs, "
    "device_mesh): add the module as the first argument."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    (
        "for parallelize_plan,",  # "Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for parallelize_plan, {} found!"
        "parallelize_module(module, mesh, plan) takes a ParallelStyle instance or a dict of submodule paths to "
        "instances: {'attention.wq': ColwiseParallel(), 'attention.wo': RowwiseParallel()} (instances, not the "
        "classes; paths as model.named_modules() spells them, * for any one name).",
    ),
    (
        "could not be resolved: no submodule matching token",
        "A key of the parallelize_plan matches no submodule, so that part of the model was left unsharded: write "
        "the paths as model.named_modules() prints them, relative to the module handed to parallelize_module "
        "('layers.*.feed_forward.w1'; a wrapper such as torch.compile's _orig_mod or a PEFT model adds a prefix), "
        "and print the named modules to compare.",
    ),
    ("ColwiseParallel currently only support nn.Linear and nn.Embedding!", _LINEAR_ONLY),
    ("RowwiseParallel currently only support nn.Linear and nn.Embedding!", _LINEAR_ONLY),
    ("module inputs and input_layouts should have same length!", _LAYOUTS),
    ("input_layouts and desired_input_layouts should have same length!", _LAYOUTS),
    ("input_kwarg_layouts and desired_input_kwarg_layouts should have same length!", _LAYOUTS),
    ("module outputs and output_layouts should have same length!", _LAYOUTS),
    ("output_layouts and desired_output_layouts should have same length!", _LAYOUTS),
    ("to be a torch.Tensor or DTensor, but got", _LAYOUTS),
    ("loss_parallel() requires exactly one mesh dim to shard tensor dimension", _LOSS_PARALLEL),
    ("loss_parallel() with reduction='mean' is only supported on one-dimensional DeviceMesh", _LOSS_PARALLEL),
    ("loss_parallel() expects non-TP mesh dims to be Shard or Replicate", _LOSS_PARALLEL),
    ("loss_parallel() requires a DTensor (not a plain torch.Tensor)", _LOSS_PARALLEL),
    (
        "No parent device_mesh is found for FSDP device_mesh.",
        "FSDP over tensor parallelism takes the data-parallel slice of one 2-D mesh: mesh = init_device_mesh('cuda', "
        "(dp, tp), mesh_dim_names=('dp', 'tp')); parallelize_module(model, mesh['tp'], plan); then "
        "FSDP(model, device_mesh=mesh['dp'], use_orig_params=True) (or FSDP2's fully_shard(model, mesh=mesh['dp'])).",
    ),
    (
        "Only 1D DeviceMeshes currently handled",
        "FSDP over tensor parallelism takes the 1-D data-parallel slice, device_mesh=mesh['dp'], not the 2-D mesh.",
    ),
    (
        # torch 2.3-2.8's parallel/_utils.py; 2.9+ slices the mesh itself
        "Tensor Parallel only accepts a 1D DeviceMesh",
        "parallelize_module takes the 1-D tensor-parallel slice of the mesh: mesh = init_device_mesh('cuda', (dp, "
        "tp), mesh_dim_names=('dp', 'tp')); parallelize_module(model, mesh['tp'], plan), and the 'dp' slice for "
        "FSDP or DDP.",
    ),
    ("Expect a torch.nn.Linear module but received", _LINEAR_ONLY),  # torch 2.0-2.1's parallelize_module
    ("input_fn should take in 3 arguments, but got", _FN_ARGS),
    ("output_fn should take in 3 arguments, but got", _FN_ARGS),
)

TENSOR_PARALLEL_PLAN = refusal_recogniser(
    kind="tensor_parallel_plan",
    title="a tensor-parallel plan torch refuses",
    refusals=REFUSALS,
    templates=(
        "torch:expect-union-parallelstyle-dict-str-parallelstyle",
        "torch:parallelize-plan-key-could-not-be",
        "torch:colwiseparallel-currently-only-support-nn-linear",
        "torch:rowwiseparallel-currently-only-support-nn-linear",
        "torch:module-inputs-and-input-layouts-should",
        "torch:input-layouts-and-desired-input-layouts",
        "torch:input-kwarg-layouts-and-desired-input",
        "torch:module-outputs-and-output-layouts-should",
        "torch:output-layouts-and-desired-output-layouts",
        "torch:expecting-input-of-to-be-torch",
        "torch:loss-parallel-requires-exactly-one-mesh",
        "torch:loss-parallel-with-reduction-mean-is",
        "torch:loss-parallel-expects-non-tp-mesh",
        "torch:loss-parallel-requires-dtensor-not-plain",
        "torch:no-parent-device-mesh-is-found",
        "torch:only-devicemeshes-currently-handled",
        "torch_native:tp-only-accepts-1d-device-mesh",
        "torch_native:tp-expect-nn-linear-module",
        "torch:input-fn-should-take-in-arguments",
        "torch:output-fn-should-take-in-arguments",
    ),
)

RECOGNISERS = (TENSOR_PARALLEL_PLAN,)
