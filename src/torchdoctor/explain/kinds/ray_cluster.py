"""Ray's autoscaler finding no node that can hold a task's or actor's resource request.

The text is Ray's ``python/ray/autoscaler/_private/autoscaler.py`` (StandardAutoscaler: a pending request that
``ResourceDemandScheduler.is_feasible`` finds no node type for, "Error: No available node types can fulfill resource
request {...}") as ``catalog/schedulers.tsv`` holds it. The v2 autoscaler prints "... resource requests {...}*N" for
every request it cannot place even at the cluster's largest size, which includes more tasks than the cluster holds at
once (they wait their turn): that form is only likely a request no node can ever fill.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _resources(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    request = facts.get("ray_request", "").strip()
    summary = (
        f"Ray cannot place a task or actor: no node of its cluster offers {request or 'what it asks for'}"
    )
    if facts.get("ray_v2"):
        summary += " (or more of them than the cluster holds at once, which then wait their turn)"
    fix = (
        "Ray schedules by the resources each node declared when it started, not by what the machine has. Compare "
        "the request with `ray status` (or ray.cluster_resources()): a GPU that torch sees but Ray's node lacks was "
        "not detected or declared, so start Ray with it, ray.init(num_cpus=..., num_gpus=...) or `ray start "
        "--num-gpus=N` (CUDA_VISIBLE_DEVICES must not be empty when Ray starts); a request larger than any one node "
        "(num_gpus, memory, a custom resource) must shrink to fit a node, or the cluster needs a node type that has "
        "it (available_node_types in the cluster config)."
    )
    if "GPU" in request:
        fix += " Here the request asks for a GPU: check that `ray status` lists GPUs at all."
    return summary + on_ranks(hits), fix


RAY_RESOURCES = Recogniser(
    kind="ray_resources",
    title="Ray request no node can hold",
    templates=("schedulers:ray-no-node-type-fulfills-request",),
    anchors=("No available node types can fulfill resource request",),
    match=R(
        r"No available node types can fulfill resource request(?P<ray_v2>s)? (?P<ray_request>\{[^\n]{0,300}?\}|[^\s.]{1,100})"
    ),
    # v1's "request {..}" comes from is_feasible, no node type fits it; v2's "requests {..}*N" also counts a
    # demand larger than the cluster's maximum size, which can wait
    confirm=lambda hits, ctx: any("ray_v2" not in h.facts for h in hits),
    describe=_resources,
)

RECOGNISERS = (RAY_RESOURCES,)
