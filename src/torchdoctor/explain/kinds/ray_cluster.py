"""Ray's autoscaler, Ray Train's storage and trainers, and Tune trials refusing or never starting a run.

The text is Ray's ``python/ray/autoscaler/_private/autoscaler.py`` (StandardAutoscaler: a pending request that
``ResourceDemandScheduler.is_feasible`` finds no node type for, "Error: No available node types can fulfill resource
request {...}") as ``catalog/schedulers.tsv`` holds it. The v2 autoscaler prints "... resource requests {...}*N" for
every request it cannot place even at the cluster's largest size, which includes more tasks than the cluster holds at
once (they wait their turn): that form is only likely a request no node can ever fill.

Ray Train v2's controller (``python/ray/train/v2/_internal/execution/worker_group/worker_group.py``) asks for a
placement group of ``num_workers`` bundles of ``resources_per_worker`` ("Attempting to start training worker group of
size N with the following resources: [{'GPU': 1}] * N") and waits for it with
``ray.get(pg.ready(), timeout=RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S)``; when that runs out it raises
``WorkerGroupStartupTimeoutError`` (``exceptions.py``, ``catalog/ray.tsv``): "The worker group startup timed out after
30.0 seconds waiting for 8 workers", and retries. Likely: resources not free yet (an autoscaler adding nodes, other
jobs) or a request no set of nodes holds; named beside it, the default timeout (30 s until ray-project/ray#60376 made
it 60 s) shorter than the job's runtime_env install, which that wait covers too.

verl's trainer (``verl/trainer/ppo/ray_trainer.py``, ResourcePoolManager._check_resource_available, as
``catalog/third_party.tsv`` holds it) adds up the GPUs of the Ray cluster its driver is attached to and refuses to
start when they are fewer than its resource pools ask for (trainer.nnodes x trainer.n_gpus_per_node): "Total available
GPUs 16.0 is less than total desired GPUs 32". On several nodes that is a driver whose Ray is not the cluster the
other nodes joined (ray.init without address='auto' starts a Ray of its own on one node: verl-project/verl#3358) or
a node that never joined; on one node, settings asking for more GPUs than it has.

Ray Train's ``python/ray/train/_internal/storage.py`` (StorageContext._check_validation_file): a worker that
checkpoints looks for the marker file the driver wrote under ``RunConfig(storage_path)``, "Unable to set up cluster
storage at storage_path=..." (2.7-2.8) or "... with the following settings: ... A local path on the head node is not
accessible by worker nodes." (2.9 on). From 2.7 Ray no longer syncs results to the head node, so a local path
(the default ~/ray_results) is each node's own disk: likely that, or a shared path the node cannot write.

Ray's ray.ml trainers of early 2022 (``python/ray/ml/train/data_parallel_trainer.py``) read
``scaling_config.num_gpus_per_worker`` on the scaling_config as given, a dict until ray-project/ray#23293 converted
it: CPython's "'dict' object has no attribute 'num_gpus_per_worker'", read by versions.py as that release's bug.

A PyTorch Lightning Trainer with several devices and its ``ddp`` strategy inside a Ray Tune trial (a Ray worker
process, its lines prefixed "(pid=..., ip=...)") logs "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/N"
(pytorch_lightning 1.x; "Initializing distributed: ..." from 1.6) and waits there: Lightning starts the other ranks
as new copies of the script, which from Ray's worker never join (ray-project/ray#13483). Likely: a rank-0 line
alone, no "processes registered" after it; Ray Train's own workers (RayTrainWorker) and ray_lightning's
(RayExecutor) start their ranks themselves and are not read so. The same kind's other readings, Unsloth's and
LLaMA-Factory's refusals of several GPUs, are one_gpu_trainers.py's.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import one_gpu_trainers
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    merged,
    on_ranks,
)

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _verl_gpus(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    available = first(hits, "verl_available", "fewer")
    desired = first(hits, "verl_desired", "the GPUs it asks for")
    return (
        f"verl's trainer asks its Ray cluster for {desired} GPUs (trainer.nnodes x trainer.n_gpus_per_node) and the "
        f"Ray instance its driver is attached to offers {available}" + on_ranks(hits),
        "Run `ray status` where the trainer starts: it shows the nodes and GPUs the driver sees. On several nodes, "
        "start Ray on every node (ray start --head on one, ray start --address=<head ip>:6379 on the others) and "
        "let the trainer join that cluster instead of starting a Ray of its own: ray.init(address='auto') (or "
        "RAY_ADDRESS, or submit with ray job submit to the head); a node missing from `ray status` did not join "
        "(its ray start failed, another Ray version, a firewall). Otherwise set trainer.nnodes and "
        "trainer.n_gpus_per_node to what the cluster has (and CUDA_VISIBLE_DEVICES must show them when Ray starts).",
    )


def _worker_group(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    waited = first(hits, "ray_start_timeout", "its timeout")
    workers = first(hits, "ray_start_workers", "its")
    each = ctx.facts.get("ray_worker_resources")
    asked = f" ({workers} bundles of {each})" if each else ""
    return (
        f"Ray Train's controller waited {waited} seconds for the placement group of its {workers} workers{asked} "
        "and gave up: the cluster did not have those resources free in time (nodes still being added by the "
        "autoscaler, GPUs held by other jobs, or a ScalingConfig no set of nodes can hold); it retries the start"
        + on_ranks(hits),
        "Run `ray status` while it retries: if the GPUs (or CPUs, memory) the workers ask for are not free, wait "
        "for the autoscaler, free them, or lower ScalingConfig(num_workers=..., resources_per_worker=...) to what "
        "the cluster holds (use_gpu=True asks one GPU per worker). If they are free and the run has a runtime_env "
        "(pip or conda packages, a large working_dir) or the autoscaler needs minutes for a node, give the start "
        "more time: RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S=600 in the environment the Ray Train controller starts "
        "in (exported before the driver, or the job's runtime_env env_vars); its default was 30 s before "
        "ray-project/ray#60376 raised it to 60 s.",
    )


def _resources(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "verl_desired"):
        return _verl_gpus(hits, ctx)
    if first(hits, "ray_start_timeout"):
        return _worker_group(hits, ctx)
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
    templates=(
        "schedulers:ray-no-node-type-fulfills-request",
        "third_party:verl-total-available-gpus-less-than-desired",
        "ray:worker-group-startup-timed-out-potential-causes",
        "ray:worker-group-startup-timed-out-possible-causes",
    ),
    anchors=(
        "No available node types can fulfill resource request",
        "is less than total desired GPUs",
        "The worker group startup timed out after",
    ),
    match=R(
        r"No available node types can fulfill resource request(?P<ray_v2>s)? (?P<ray_request>\{[^\n]{0,300}?\}|[^\s.]{1,100})|"
        # verl/trainer/ppo/ray_trainer.py ResourcePoolManager._check_resource_available: raise ValueError(f"Total
        # available GPUs {total_available_gpus} is less than total desired GPUs {total_required_gpus}")
        r"Total available GPUs (?P<verl_available>\d+(?:\.\d+)?) is less than total desired GPUs "
        r"(?P<verl_desired>\d+(?:\.\d+)?)|"
        # ray/train/v2/_internal/exceptions.py WorkerGroupStartupTimeoutError: worker_group.py's
        # ray.get(pg.ready(), timeout=RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S) ran out
        r"The worker group startup timed out after (?P<ray_start_timeout>\d+(?:\.\d+)?) seconds waiting for "
        r"(?P<ray_start_workers>\d+) workers"
    ),
    # v1's "request {..}" comes from is_feasible, no node type fits it; v2's "requests {..}*N" also counts a
    # demand larger than the cluster's maximum size, which can wait; verl's count of the cluster's GPUs is certain;
    # Ray Train's start timeout is resources not free yet as much as a request no node holds, or a slow runtime_env
    confirm=lambda hits, ctx: any(
        "ray_v2" not in h.facts and "ray_start_timeout" not in h.facts for h in hits
    ),
    also=(
        Alternative(
            "library_version_bug",
            "Ray Train's default start timeout (30 s until ray-project/ray#60376 raised it to 60 s) shorter than "
            "its workers take to start: the wait covers installing the job's runtime_env on the nodes too",
            "Set RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S (600, say) where the Ray Train controller starts (exported "
            "before the driver, or the job's runtime_env env_vars), or upgrade Ray (pip install -U 'ray[train]').",
            when=("ray_start_timeout",),
        ),
    ),
    describe=_resources,
)


def _storage(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = first(hits, "ray_storage_path", "")
    remote = path.startswith(("s3://", "gs://", "gcs://", "abfs://", "az://", "hdfs://"))
    if remote:
        summary = (
            f"Ray Train's workers could not find the run's files under storage_path={path}: a node cannot read or "
            "write that bucket (its credentials or permissions)"
        )
    else:
        summary = (
            "Ray Train's workers could not reach the run's storage_path"
            + (f" ({path})" if path else "")
            + ": a local path is each node's own disk, so the files the driver wrote on the head node are not on "
            "the worker nodes (Ray 2.7 stopped syncing results to the head node), or the nodes cannot write a "
            "shared one"
        )
    fix = (
        "On more than one node, give the run storage every node reaches: RunConfig(storage_path='s3://bucket/path' "
        "or 'gs://...') or a shared filesystem mounted at the same path on all nodes (NFS, e.g. "
        "RunConfig(storage_path='/mnt/cluster_storage')), passed to the TorchTrainer (and to a TorchTrainer built "
        "inside a Tuner too). Check that every node can create files there; on one node the default local path works."
    )
    return summary + on_ranks(hits), fix


STORAGE_PATH_NOT_SHARED = Recogniser(
    kind="storage_path_not_shared",
    title="Ray Train storage the worker nodes do not share",
    templates=(
        "schedulers:ray-train-storage-unreachable",
        "schedulers:ray-train-storage-unreachable-settings",
    ),
    anchors=("Unable to set up cluster storage",),
    match=R(
        r"Unable to set up cluster storage (?:at storage_path=(?P<ray_storage_path>\S{1,300})|with the following "
        r"settings:)"
    ),
    facts=(R(r"storage_fs_path='(?P<ray_storage_path>[^'\n]{1,300})'"),),
    span=2,
    # the check only says a worker did not find the driver's marker file: an unshared path or unwritable storage
    confirm=lambda hits, ctx: False,
    describe=_storage,
)

# Ray's ray.ml trainers of early 2022 reading a dict scaling_config as an object (versions.py reads it)
SCALING_ANCHORS = ("'dict' object has no attribute 'num_gpus_per_worker'",)
SCALING_REFUSED = R(r"'dict' object has no attribute '(?P<ray_scaling_dict>num_gpus_per_worker)'")
SCALING_TEMPLATES = ("schedulers:ray-ml-scaling-config-dict",)


def scaling_config_dict(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for a Ray trainer reading num_gpus_per_worker on a scaling_config given as a dict."""
    return (
        "Ray's trainer read num_gpus_per_worker on a scaling_config that is a plain dict: the ray.ml TorchTrainer "
        "of early 2022 (Ray 1.12) used the scaling_config as given, and converting a dict was added only later "
        "(ray-project/ray#23293)" + on_ranks(hits),
        "Pass a ScalingConfig object, not a dict: scaling_config=ScalingConfig(num_workers=..., use_gpu=True) "
        "(from ray.air import ScalingConfig, or from ray.train in Ray 2.7 and later), or upgrade Ray "
        "(pip install -U 'ray[train]') and use its TorchTrainer from ray.train.torch.",
    )


def _tune_ddp(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    said = one_gpu_trainers.explain(hits)
    if said:
        return said[0] + on_ranks(hits), said[1]
    world = first(hits, "tune_ddp_world", "N")
    return (
        f"A PyTorch Lightning Trainer with {world} devices and the ddp strategy was started inside a Ray Tune "
        "trial (a Ray worker process) and waits at DDP initialisation: Lightning starts the other ranks as new "
        "copies of the script, which from Ray's worker never join, so rank 0 waits for them",
        "Let Ray start the ranks: in Ray 2.7 and later run the Lightning Trainer in a TorchTrainer's "
        "train_loop_per_worker with ray.train.lightning's RayDDPStrategy, RayLightningEnvironment and "
        "prepare_trainer (and pass the TorchTrainer to the Tuner); for older Ray, ray_lightning's RayStrategy "
        "(RayPlugin) with resources_per_trial from its get_tune_resources. Or keep each trial on one device "
        "(devices=1 with resources_per_trial={'gpu': 1}) and let Tune run trials side by side.",
    )


TUNE_DDP = Recogniser(
    kind="multi_gpu_unsupported",
    title="several GPUs for a run that trains on one",
    templates=(
        "lightning:initializing-ddp-global-rank-member",
        "lightning:initializing-distributed-global-rank-member",
        *one_gpu_trainers.TEMPLATES,  # Unsloth's own check and LLaMA-Factory's refusal of it under ZeRO-3
    ),
    anchors=(
        "initializing ddp: GLOBAL_RANK: ",
        "Initializing distributed: GLOBAL_RANK: ",
        *one_gpu_trainers.ANCHORS,
    ),
    # a Tune trial's worker prefix, not Ray Train's or ray_lightning's actors, which start every rank themselves
    match=R(
        r"^\((?!RayTrainWorker|RayExecutor|BaseWorkerMixin)(?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\) "
        r"(?:initializing ddp|Initializing distributed): GLOBAL_RANK: 0, MEMBER: 1/(?P<tune_ddp_world>[2-9]|\d{2,})\b|"
        + one_gpu_trainers.MATCH,
        re.MULTILINE,
    ),
    facts=one_gpu_trainers.FACTS,
    span=4,
    reject=R(r"processes registered|Starting ddp with"),
    # a rank-0 line with nothing after it: the others may still be starting; Unsloth's check also counts memory
    # another process used on a second GPU, and LLaMA-Factory's refusal is as much its own option check
    confirm=lambda hits, ctx: False,
    # Unsloth's warning that keeps the first GPU: the run goes on
    fallback_facts=one_gpu_trainers.WARNED,
    describe=_tune_ddp,
)

RECOGNISERS = (RAY_RESOURCES, STORAGE_PATH_NOT_SHARED, TUNE_DDP)

# what Ray Train's worker group asked each worker for, logged before it waits (worker_group.py _start_impl)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    (
        "Attempting to start training worker group of size",
        re.compile(
            r"Attempting to start training worker group of size \d+ with the following resources: "
            r"\[(?P<ray_worker_resources>\{[^\n\]]{0,200}\})\]"
        ),
    ),
)
