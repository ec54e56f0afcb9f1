"""torchtitan's ParallelDims refusing the parallelism degrees of a job config, or a mesh of a degree left at 1.

``torchtitan/distributed/parallel_dims.py`` (pytorch/torchtitan) checks the ``[parallelism]`` degrees before it
builds the DeviceMesh (``_validate``, 0.1 on): "Parallelism degree should be >= 1, except for dp_shard", "dp_shard
must -1 or >=1.", "Invalid parallel dims: dp_replicate(a) * dp_shard(b) * cp(c) * tp(d) * pp(e) !=
WORLD_SIZE(n)", and from 2026 "expert_parallel_degree (e) must divide dp_shard * cp * tp (n)". Since the mesh was
rebuilt on DeviceMesh's unflatten (#1660, in 0.2.2) a mesh is asked for by name: ``get_mesh`` raises "Mesh 'tp' is
not available. Ensure the corresponding parallelism dimension is enabled (size > 1)." for a degree of 1, where
``get_optional_mesh`` returns None, and both refuse "Invalid mesh dim: 'x'. Valid dimensions are: [...]". The first
four are the config against the processes started; the mesh refusal is code asking for a parallelism the config
left off: the job's own parallelize code, or torchtitan's where it fails to check (a release's bug: read as
library_version_bug beside it). Read by placement.py's device_mesh_config.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Pattern

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "third_party:torchtitan-invalid-parallel-dims",
    "third_party:torchtitan-parallelism-degree-at-least-one",
    "third_party:torchtitan-dp-shard-minus-one-or-positive",
    "third_party:torchtitan-expert-parallel-degree-must-divide",
    "third_party:torchtitan-mesh-not-available",
    "third_party:torchtitan-invalid-mesh-dim",
)
ANCHORS = (
    "Invalid parallel dims: dp_replicate(",
    "Parallelism degree should be >= 1, except for dp_shard",
    "dp_shard must -1 or >=1",
    ") must divide dp_shard * cp * tp (",
    "' is not available. Ensure the corresponding parallelism dimension is",
    "Invalid mesh dim: '",
)
MESH_OFF = ANCHORS[4]  # the config's choice or the code's bug: only likely
FACTS = (
    R(
        r"Invalid parallel dims: (?P<titan_dims>dp_replicate\(\d+\) \* dp_shard\(-?\d+\) \* cp\(\d+\) \* tp\(\d+\) "
        r"\* pp\(\d+\)) != WORLD_SIZE\((?P<titan_world>\d+)\)"
    ),
    R(r"(?P<titan_degree>Parallelism degree should be >= 1, except for dp_shard|dp_shard must -1 or >=1)"),
    R(
        r"expert_parallel_degree \((?P<titan_ep>\d+)\) must divide dp_shard \* cp \* tp \((?P<titan_region>\d+)\)"
    ),
    R(
        r"Mesh '(?P<titan_mesh_off>[^'\n]{1,80})' is not available\. Ensure the corresponding parallelism dimension"
    ),
    R(r"Invalid mesh dim: '(?P<titan_bad_dim>[^'\n]{1,60})'"),
)

_DEGREES = (
    "torchtitan's [parallelism] degrees must multiply to the processes started: data_parallel_replicate_degree x "
    "data_parallel_shard_degree x context_parallel_degree x tensor_parallel_degree x pipeline_parallel_degree == "
    "WORLD_SIZE (NGPU x nodes, torchrun's --nproc_per_node x --nnodes). Leave data_parallel_shard_degree at -1 to "
    "let it take what the others leave, set every other degree to 1 or more, and keep expert_parallel_degree a "
    "divisor of data_parallel_shard_degree x context_parallel_degree x tensor_parallel_degree. A config written "
    "for another number of GPUs (the 8-GPU train_configs on 4) prints it: override the degrees on the command line "
    "(--parallelism.tensor_parallel_degree=...)."
)
ALTERNATIVE = Alternative(
    "library_version_bug",
    "torchtitan's own parallelize code asking for a mesh without checking it is on (a release's bug)",
    "Where the get_mesh call is in torchtitan's code (torchtitan/models/.../parallelize.py), its later code asks "
    "with parallel_dims.get_optional_mesh and skips the parallelism that is off: upgrade torchtitan (git pull, or "
    "the next release), or enable the degree it asks for meanwhile.",
    when=("titan_mesh_off",),
)


def explain(facts: dict) -> tuple[str, str] | None:
    """The summary and fix for torchtitan's ParallelDims refusal, or None when the hits hold none."""
    if facts.get("titan_mesh_off"):
        dim = facts["titan_mesh_off"]
        return (
            f"torchtitan's code asked ParallelDims for the '{dim}' mesh, whose parallelism degree is 1 (off) in this "
            "job config",
            f"Either turn that parallelism on (its degree above 1 in [parallelism], e.g. --parallelism."
            f"tensor_parallel_degree=2 for 'tp'), or make the code that asks for it ask with parallel_dims."
            f"get_optional_mesh('{dim}') (None when off) or check the degree first (parallel_dims.tp_enabled).",
        )
    if facts.get("titan_bad_dim"):
        return (
            f"torchtitan's ParallelDims has no mesh dimension '{facts['titan_bad_dim']}'",
            "Ask for one of the names the message lists: code written for another torchtitan may use an older name "
            "(0.1's world mesh had dp, dp_shard_cp, dp_cp); use the release it was written for, or the new name.",
        )
    if facts.get("titan_dims"):
        summary = (
            f"torchtitan's parallelism degrees do not make the world size: {facts['titan_dims']} != "
            f"{facts['titan_world']} processes"
        )
    elif facts.get("titan_ep"):
        summary = (
            f"torchtitan's expert_parallel_degree {facts['titan_ep']} does not divide dp_shard x cp x tp "
            f"({facts['titan_region']})"
        )
    elif facts.get("titan_degree"):
        summary = f"torchtitan refused a parallelism degree of the job config: {facts['titan_degree']}"
    else:
        return None
    return summary, _DEGREES
