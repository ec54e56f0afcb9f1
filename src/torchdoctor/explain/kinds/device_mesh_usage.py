"""A DeviceMesh built, sliced or flattened in a way torch refuses, whatever the size of the run.

``torch/distributed/device_mesh.py`` (torch 2.4-2.13: ``init_device_mesh``, ``DeviceMesh.__getitem__``,
``_flatten`` / ``_unflatten``, ``from_group``, ``get_group``, ``backend_override``): a device type with an index,
dimension names sliced out of order or overlapping, a flattened name reused, a mesh rebuilt from process groups
without its shape or names, the GPU of the process never chosen. Each message names its own mistake (certain once
a real log shows it). A mesh whose size does not fit the run, or names it lacks, is ``device_mesh_config``
(kinds/placement.py).
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_FROM_GROUP = (
    "DeviceMesh.from_group(groups, device_type, mesh=..., mesh_dim_names=...) takes one ProcessGroup per "
    "dimension, and for more than one the mesh tensor of global ranks (its shape the groups' sizes, e.g. "
    "torch.arange(world_size).view(dp, tp)) and one name per dimension; the ranks of each group must be a row of "
    "that mesh. Building it with init_device_mesh('cuda', (dp, tp), mesh_dim_names=('dp', 'tp')) does all of this."
)

_BACKEND_OVERRIDE = (
    "init_device_mesh(..., backend_override=...) takes, per mesh dimension, a backend name or (backend, options): "
    "a tuple with one entry per dimension, or a dict keyed by each dimension's index (0..ndim-1) or name once "
    "(not both for the same dimension)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    (
        "Device type with index is not supported but got",
        "init_device_mesh takes the device type alone ('cuda', not 'cuda:0' or f'cuda:{local_rank}'): each process "
        "picks its own GPU with torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before init_device_mesh.",
    ),
    (
        "DeviceMesh requires numpy >= 1.21 to be installed for type checking",
        "DeviceMesh needs numpy installed in the training environment: pip install 'numpy>=1.21'.",
    ),
    (
        "Mesh dim indices should be in ascending order.",
        "Slice a DeviceMesh with its dimension names in the order the mesh declares them: for mesh_dim_names=('dp', "
        "'tp') write mesh['dp', 'tp'], not mesh['tp', 'dp'] (or transpose what you pass it afterwards).",
    ),
    (
        "Slicing overlapping dim_names ",
        "A slice of a DeviceMesh may name each underlying dimension once: a flattened dimension (mesh['dp', "
        "'cp']._flatten('dp_cp')) overlaps the ones it was made from, so slice either 'dp_cp' or 'dp' / 'cp', not "
        "both in one mesh[...].",
    ),
    (
        "already exists for submesh of the",
        "_flatten(name) needs a name the mesh does not already have as a dimension: mesh['dp', 'cp']._flatten("
        "'dp_cp'), not _flatten('dp').",
    ),
    (
        "has been created before, Please specify another valid mesh_dim_name.",
        "This flattened name is already taken by a flatten of other dimensions: give each _flatten of different "
        "dimensions its own name (mesh['dp', 'cp']._flatten('dp_cp'), mesh['dp', 'tp']._flatten('dp_tp')); "
        "flattening the same dimensions again under the same name is allowed.",
    ),
    ("Expects at least one ProcessGroup to be passed", _FROM_GROUP),
    ("Must pass mesh if passing multiple ProcessGroups", _FROM_GROUP),
    ("Must pass mesh_dim_names if passing multiple ProcessGroups", _FROM_GROUP),
    ("for ProcessGroup with ranks", _FROM_GROUP),  # "Invalid mesh {} for ProcessGroup with ranks {}"
    (
        "These must be equal for unflatten to work correctly.",
        "DeviceMesh._unflatten(dim, mesh_sizes, mesh_dim_names) splits one dimension into several: the sizes must "
        "multiply to that dimension's size (8 -> (2, 4)), with one name per size.",
    ),
    (
        "mesh_dim_names must have same length as mesh_sizes in _unflatten!",
        "DeviceMesh._unflatten(dim, mesh_sizes, mesh_dim_names) takes one name per new size: (2, 4) with "
        "('dp', 'cp').",
    ),
    ("backend_override should have the same length as the number of mesh dimensions", _BACKEND_OVERRIDE),
    ("Found invalid keys in backend_override", _BACKEND_OVERRIDE),
    (
        "in backend_override",
        _BACKEND_OVERRIDE,
    ),  # "Found redundant dim index {} and name {} in backend_override"
    (
        "was not found while torch.compile tracing",
        "A DeviceMesh was unpickled (a compiled artifact, a checkpoint, a dataloader worker) before its process "
        "groups existed in this process: call init_process_group and init_device_mesh first, then load what holds "
        "the mesh.",
    ),
    (
        "pickling/unpickling of the DeviceMesh occurred before the PGs were created.",
        "A DeviceMesh was unpickled (a compiled artifact, a checkpoint, a dataloader worker) before its process "
        "groups existed in this process: call init_process_group and init_device_mesh first, then load what holds "
        "the mesh.",
    ),
    # tensor/_api.py distribute_tensor / distribute_module / DTensor.from_local / zeros..., tensor/parallel/api.py
    # parallelize_module: device_mesh=None reads the mesh of an enclosing `with mesh:` block
    (
        "No device mesh is currently active!",
        "distribute_tensor, distribute_module, DTensor.from_local, the DTensor factories (zeros, ones, rand...) and "
        "parallelize_module take the mesh from device_mesh=, or from an enclosing `with mesh:` block when it is "
        "None: pass it, e.g. mesh = init_device_mesh('cuda', (world_size,)); distribute_tensor(t, mesh, [Shard(0)]) "
        "(parallelize_module(model, mesh['tp'], plan)).",
    ),
)

DEVICE_MESH_USAGE = refusal_recogniser(
    kind="device_mesh_usage",
    title="a DeviceMesh built, sliced or flattened in a way torch refuses",
    refusals=REFUSALS,
    templates=(
        "torch:device-type-with-index-is-not",
        "torch:devicemesh-requires-numpy-to-be-installed",
        "torch:invalid-mesh-dim-names-specified-mesh",
        "torch:slicing-overlapping-dim-names-is-not",
        "torch:already-exists-for-submesh-of-the",
        "torch:flatten-mesh-with-mesh-dim-name",
        "torch:expects-at-least-one-processgroup-to",
        "torch:must-pass-mesh-if-passing-multiple",
        "torch:must-pass-mesh-dim-names-if",
        "torch:invalid-mesh-for-processgroup-with-ranks",
        "torch:the-product-of-mesh-sizes-is",
        "torch:mesh-dim-names-must-have-same",
        "torch:backend-override-should-have-the-same",
        "torch:found-invalid-keys-in-backend-override",
        "torch:found-redundant-dim-index-and-name",
        "torch:pg-was-not-found-while-torch",
        "torch:it-seems-like-pickling-unpickling-of",
        "torch:no-device-mesh-is-currently-active",
    ),
)

RECOGNISERS = (DEVICE_MESH_USAGE,)
