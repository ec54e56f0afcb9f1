"""Every kind of failure `explain` knows, and the facts it reads from anywhere in a log.

The order of `RECOGNISERS` is the order in which a line is tried; a line can be several kinds (an NCCL
"invalid usage" that is a duplicate GPU), and `Recogniser.absorbs` settles which one is reported.
"""

from __future__ import annotations

import re

from torchdoctor.explain import cut_traceback, printed_versions
from torchdoctor.explain.kinds import (
    accelerate_calls,
    accelerate_state,
    activation_checkpointing,
    amp_scaler,
    api_members,
    arch_wheels,
    arrow_tables,
    attention_implementation,
    attribute_names,
    autograd,
    autograd_usage,
    barrier_device,
    batch_containers,
    build,
    c10d_calls,
    cache_dirs,
    cache_locks,
    chat_templates,
    checkpoint,
    checkpoint_paths,
    class_counts,
    collective_args,
    comm,
    compile_backends,
    compile_recompiles,
    compiled_ops,
    config_checks,
    config_registry,
    config_targets,
    context_parallel,
    cuda,
    cuda_ipc,
    cuda_queries,
    custom_autograd,
    daemon_children,
    data_containers,
    data_paths,
    dataloader_options,
    dataloader_timeout,
    dataloader_workers,
    dataset_catalog,
    dataset_classes,
    dataset_verification,
    datasets,
    datasets_calls,
    ddp_calls,
    decode_ids,
    deepspeed,
    deepspeed_checkpoint_files,
    deepspeed_launch,
    deepspeed_op_requirements,
    deepspeed_slow_collectives,
    detection_boxes,
    determinism,
    device_mesh_usage,
    device_strings,
    distributed_checkpoint,
    distributions,
    downloads,
    dtensor_ops,
    dtensor_placements,
    dtensor_views,
    dtypes,
    empty_batches,
    empty_params,
    environment,
    experiment_trackers,
    extension_packages,
    flash_attention_limits,
    fork_unsafe,
    fsdp1_usage,
    fsdp2_params,
    fsdp_config,
    fsdp_writeback,
    fully_shard_usage,
    gather_shapes,
    gdrcopy,
    gpu_faults,
    gpus,
    grad_tensors,
    group_teardown,
    hub_datasets,
    hub_network,
    image_channels,
    image_dtypes,
    image_files,
    image_transforms,
    index_ranges,
    installers,
    kernel,
    launchers,
    layer_shapes,
    layer_windows,
    learner_methods,
    libraries,
    library_arguments,
    lightning_calls,
    linear_algebra,
    loop_warnings,
    loss_values,
    lost_stderr,
    lr_scheduler_config,
    map_processes,
    masked_gradients,
    matlab_files,
    metric_caches,
    metric_reports,
    missing_packages,
    model_type_releases,
    module_definition,
    monitored_metrics,
    mps,
    nccl,
    nccl_bootstrap,
    nccl_driver_library,
    notebook_scripts,
    numpy_dtypes,
    nvlink_imex,
    op_size_limits,
    open_files,
    operand_dtypes,
    optimizer_groups,
    optimizer_state,
    option_conflicts,
    package_conflicts,
    peft_targets,
    pickle_size,
    pipeline_schedules,
    placement,
    platform_limits,
    prebuilt,
    process_group_args,
    python_startup,
    python_values,
    quantized_models,
    rank_sources,
    ranks,
    ray_cluster,
    relative_imports,
    release_changes,
    remote_code,
    remote_results,
    reshape_sizes,
    rpc,
    sampler_datasets,
    sampler_generators,
    sampler_lengths,
    scheduler_resume,
    schedulers,
    script_objects,
    serialization_calls,
    settings_ignored,
    shadowed_modules,
    simulators,
    spawned_workers,
    streaming_cache,
    syncbn_precision,
    system_libraries,
    task_gpus,
    tensor_handoff,
    tensor_misuse,
    tensor_parallel_plan,
    tokenizer_threads,
    toolkits,
    torch_load_calls,
    torchdoctor_refusals,
    torchvision_renames,
    train,
    trained_on_cpu,
    trainer_arguments,
    trainer_data_releases,
    trainer_resume,
    transformers_calls,
    versions,
    vision_language,
    warnings_alone,
    watchdog_report,
    webdataset_shards,
    wheel_tags,
    windows_shared_memory,
    world_size_divisors,
    wrapper_usage,
    xla_lowering,
    xla_spawn,
    zero_redundancy,
)
from torchdoctor.explain.recognisers import Recogniser

RECOGNISERS: tuple[Recogniser, ...] = (
    *cuda.RECOGNISERS,
    *gpu_faults.RECOGNISERS,
    *deepspeed.RECOGNISERS,
    *rank_sources.RECOGNISERS,
    *libraries.RECOGNISERS,
    *build.RECOGNISERS,
    # before versions: the training loop's own GradScaler order leads the Trainer's release bug where the
    # script's own scaler.unscale_ call is in the traceback
    *amp_scaler.RECOGNISERS,
    *data_containers.RECOGNISERS,
    *metric_reports.RECOGNISERS,
    *shadowed_modules.RECOGNISERS,  # before versions: a local copy is no older release
    *versions.RECOGNISERS,
    *group_teardown.RECOGNISERS,
    *device_strings.RECOGNISERS,
    *placement.RECOGNISERS,
    *remote_results.RECOGNISERS,  # before checkpoint.py's reading of the same torch.load message
    *checkpoint.RECOGNISERS,
    *checkpoint_paths.RECOGNISERS,
    *torch_load_calls.RECOGNISERS,
    *fsdp2_params.RECOGNISERS,
    *fsdp_config.RECOGNISERS,
    *fsdp_writeback.RECOGNISERS,
    *wrapper_usage.RECOGNISERS,
    *trainer_arguments.RECOGNISERS,
    *world_size_divisors.RECOGNISERS,
    *trainer_resume.RECOGNISERS,
    *lr_scheduler_config.RECOGNISERS,
    *batch_containers.RECOGNISERS,
    *script_objects.RECOGNISERS,
    *optimizer_groups.RECOGNISERS,
    *learner_methods.RECOGNISERS,
    *module_definition.RECOGNISERS,
    *attention_implementation.RECOGNISERS,
    *quantized_models.RECOGNISERS,
    *peft_targets.RECOGNISERS,
    *library_arguments.RECOGNISERS,
    *platform_limits.RECOGNISERS,
    *notebook_scripts.RECOGNISERS,
    *class_counts.RECOGNISERS,
    *accelerate_state.RECOGNISERS,
    *kernel.RECOGNISERS,
    *deepspeed_launch.RECOGNISERS,
    *launchers.RECOGNISERS,
    *relative_imports.RECOGNISERS,
    *schedulers.RECOGNISERS,
    *ray_cluster.RECOGNISERS,
    *process_group_args.RECOGNISERS,
    *collective_args.RECOGNISERS,
    *gather_shapes.RECOGNISERS,
    *train.RECOGNISERS,
    *datasets.RECOGNISERS,
    *fork_unsafe.RECOGNISERS,
    *image_files.RECOGNISERS,
    *dataset_verification.RECOGNISERS,
    *hub_datasets.RECOGNISERS,
    *hub_network.RECOGNISERS,
    *webdataset_shards.RECOGNISERS,
    *dataset_classes.RECOGNISERS,
    *image_dtypes.RECOGNISERS,
    *streaming_cache.RECOGNISERS,
    *arrow_tables.RECOGNISERS,
    *matlab_files.RECOGNISERS,
    *dataset_catalog.RECOGNISERS,
    *vision_language.RECOGNISERS,
    *config_registry.RECOGNISERS,
    *config_targets.RECOGNISERS,
    *option_conflicts.RECOGNISERS,
    *activation_checkpointing.RECOGNISERS,
    *package_conflicts.RECOGNISERS,
    *system_libraries.RECOGNISERS,
    *dataloader_options.RECOGNISERS,
    *sampler_lengths.RECOGNISERS,
    *dataloader_timeout.RECOGNISERS,
    *tensor_misuse.RECOGNISERS,
    *image_transforms.RECOGNISERS,
    *layer_shapes.RECOGNISERS,
    *layer_windows.RECOGNISERS,
    *empty_batches.RECOGNISERS,
    *reshape_sizes.RECOGNISERS,
    *index_ranges.RECOGNISERS,
    *python_values.RECOGNISERS,
    *attribute_names.RECOGNISERS,
    *operand_dtypes.RECOGNISERS,
    *loss_values.RECOGNISERS,
    *grad_tensors.RECOGNISERS,
    *scheduler_resume.RECOGNISERS,
    *dtensor_ops.RECOGNISERS,
    *autograd_usage.RECOGNISERS,
    *optimizer_state.RECOGNISERS,
    *custom_autograd.RECOGNISERS,
    *syncbn_precision.RECOGNISERS,
    *dtypes.RECOGNISERS,
    *mps.RECOGNISERS,
    *xla_lowering.RECOGNISERS,
    *xla_spawn.RECOGNISERS,
    *flash_attention_limits.RECOGNISERS,
    *cuda_ipc.RECOGNISERS,
    *compile_backends.RECOGNISERS,
    *tokenizer_threads.RECOGNISERS,
    *chat_templates.RECOGNISERS,
    *decode_ids.RECOGNISERS,
    *pickle_size.RECOGNISERS,
    *image_channels.RECOGNISERS,
    *remote_code.RECOGNISERS,
    *numpy_dtypes.RECOGNISERS,
    *environment.RECOGNISERS,
    *python_startup.RECOGNISERS,
    *downloads.RECOGNISERS,
    *experiment_trackers.RECOGNISERS,
    *cache_dirs.RECOGNISERS,
    *autograd.RECOGNISERS,
    *linear_algebra.RECOGNISERS,
    *determinism.RECOGNISERS,
    *metric_caches.RECOGNISERS,
    *open_files.RECOGNISERS,
    *daemon_children.RECOGNISERS,
    *tensor_handoff.RECOGNISERS,
    *lost_stderr.RECOGNISERS,
    *monitored_metrics.RECOGNISERS,
    *torchdoctor_refusals.RECOGNISERS,
    *watchdog_report.RECOGNISERS,
    *warnings_alone.RECOGNISERS,
    *loop_warnings.RECOGNISERS,  # a loop that runs but not as meant (warnings: only where nothing failed)
    *trained_on_cpu.RECOGNISERS,  # a run on the CPU, not the GPU (warnings: only where nothing failed)
    *compile_recompiles.RECOGNISERS,  # torch.compile gone eager (a warning: only where nothing failed)
    *settings_ignored.RECOGNISERS,  # a setting overridden by another (warnings: only where nothing failed)
    *deepspeed_slow_collectives.RECOGNISERS,  # DeepSpeed's fallback collectives (a warning: only where nothing failed)
    *dataloader_workers.RECOGNISERS,
    *distributions.RECOGNISERS,
    *op_size_limits.RECOGNISERS,
    *masked_gradients.RECOGNISERS,
    # torch's own refusals of its distributed calls, mapped from the source (a message's own cause)
    *c10d_calls.RECOGNISERS,
    *device_mesh_usage.RECOGNISERS,
    *dtensor_placements.RECOGNISERS,
    *dtensor_views.RECOGNISERS,
    *context_parallel.RECOGNISERS,
    *tensor_parallel_plan.RECOGNISERS,
    *distributed_checkpoint.RECOGNISERS,
    *fully_shard_usage.RECOGNISERS,
    *fsdp1_usage.RECOGNISERS,
    *ddp_calls.RECOGNISERS,
    *zero_redundancy.RECOGNISERS,
    *serialization_calls.RECOGNISERS,
    *sampler_datasets.RECOGNISERS,
    *sampler_generators.RECOGNISERS,
    *map_processes.RECOGNISERS,
    *windows_shared_memory.RECOGNISERS,
    *cache_locks.RECOGNISERS,
    *spawned_workers.RECOGNISERS,
    *pipeline_schedules.RECOGNISERS,
    *cuda_queries.RECOGNISERS,
    # DeepSpeed's and NCCL's own refusals, mapped from their sources (k32)
    *deepspeed_checkpoint_files.RECOGNISERS,
    *deepspeed_op_requirements.RECOGNISERS,
    *gdrcopy.RECOGNISERS,
    *nccl_driver_library.RECOGNISERS,
    *nccl_bootstrap.RECOGNISERS,
    *nvlink_imex.RECOGNISERS,
    *rpc.RECOGNISERS,  # torch.distributed.rpc's timeouts and its calls outside init_rpc
    *barrier_device.RECOGNISERS,  # ProcessGroupNCCL guessing a rank's GPU (a warning: only where nothing failed)
    # the Hugging Face stack's and Lightning's refusals of their calls, mapped from their sources
    *accelerate_calls.RECOGNISERS,
    *transformers_calls.RECOGNISERS,
    *lightning_calls.RECOGNISERS,
    *datasets_calls.RECOGNISERS,
    # communication: which line is tried first matters among these (a duplicate GPU is also an NCCL error)
    nccl.NCCL_ENV_VALUE,
    comm.LIBUV_UNAVAILABLE,
    comm.HOSTNAME_RESOLUTION,
    nccl.NCCL_VERSION_MISMATCH,
    gpus.DUPLICATE_GPU,
    gpus.GPU_SELECTION,
    gpus.MISMATCHED_GPUS,  # DataParallel's imbalance warning alone (GPU_SELECTION: with an NCCL failure)
    gpus.GPUS_REQUESTED_NOT_VISIBLE,
    gpus.GPU_P2P,
    comm.NETWORK_FAULT,
    comm.NETWORK_INTERFACE,
    nccl.NCCL_SYSTEM_ERROR,
    comm.BACKEND_UNAVAILABLE,
    comm.DUPLICATE_NODE_RANK,
    comm.RENDEZVOUS_OR_PORT,
    nccl.NCCL_CUDA_FAILURE,
    nccl.NCCL_ERROR_OTHER,
    *ranks.RECOGNISERS,
    # last: a missing file is a finding only where nothing above read the log
    *data_paths.RECOGNISERS,
)
BY_KIND = {r.kind: r for r in RECOGNISERS}

# The families of failure, in the order a run meets them: every kinds module names its own (``FAMILY = ...``,
# one of these), and docs/catalog.md lists the modules under them (benchmarks/catalog_coverage.py --write-doc)
FAMILIES: tuple[str, ...] = (
    "builds and installs",
    "drivers and GPUs",
    "the machine and its operating system",
    "launchers and schedulers",
    "rendezvous and network",
    "NCCL and collectives",
    "DDP, FSDP and where tensors are",
    "a library refusing its settings",
    "checkpoints and pretrained models",
    "data loading",
    "numerics and precision",
    "a script's own mistakes",
    "library releases that disagree with the code",
)

# Facts a fix depends on that a log states anywhere, not only next to the failure: (literal, pattern)
CONTEXT_FACTS: tuple[tuple[str, re.Pattern], ...] = (
    *watchdog_report.CONTEXT,
    # the DataLoader's warning that it starts more workers than the CPUs suggest, printed long before a worker
    # is killed (kinds/train.py's worker_killed names it; dataloader_workers.py reads it alone)
    (
        "worker processes in total.",
        re.compile(
            r"DataLoader will create (?P<loader_workers>\d{1,6}) worker processes in total\. Our suggested max "
            r"number of worker in current system is (?P<loader_workers_suggested>\d{1,6})"
        ),
    ),
    deepspeed_launch.MPI4PY,
    # a traceback's paths name the Python that ran it (missing_packages.py: builtin generics before 3.9)
    ("/python3.", missing_packages.OLD_PYTHON),
    (
        "SOCKET_IFNAME",
        re.compile(r"NCCL_SOCKET_IFNAME set (?:by environment )?to (?P<socket_ifname>\S{1,64})"),
    ),
    # not torch's own advice "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    (
        "ALLOC_CONF",
        re.compile(
            r"(?<!setting )PYTORCH_CUDA_ALLOC_CONF['\"]?\s*[=:]\s*['\"]?(?P<alloc_conf>[\w:.,]{1,200})"
        ),
    ),
    ("NCCL version", re.compile(r"NCCL version (?P<nccl_version>\d[\w.+]*)")),
    # logging's stack_info=True prints "Stack (most recent call last):" over the frames a running program logged
    # from: frames with no exception, not a traceback cut short (cut_traceback.py reads headerless frames so)
    ("Stack (most recent call last)", re.compile(r"(?P<logged_stack>Stack \(most recent call last\):)")),
    # the port NCCL's bootstrap root binds where one is chosen (comm.py's reading of NCCL's own bind failing)
    (
        "NCCL_COMM_ID",
        re.compile(r"NCCL_COMM_ID(?: set by environment to |=['\"]?)(?P<nccl_comm_id>[\w.:\[\]-]{1,200})"),
    ),
    # a wandb sweep agent started the run: on Windows it stops a run with Ctrl-C's signal (interrupted.py)
    ("Agent Starting Run", re.compile(r"(?P<wandb_sweep_agent>Agent Starting Run: )")),
    # evidence a recogniser's confidence depends on, wherever the log states it
    ("SyncB", re.compile(r"(?P<saw_syncbn>SyncBatchNorm|SyncBN)")),
    # SyncBatchNorm in a traceback: its forward's code line (torch 1.x, apex ask for the world size without a
    # group), or a frame of a function named so (mmcv's norm.py)
    (
        "get_world_size(process_group)",
        re.compile(r"(?P<syncbn_forward>world_size = torch\.distributed\.get_world_size\(process_group\))"),
    ),
    (", in SyncBatchNorm", re.compile(r"(?P<syncbn_forward>, in SyncBatchNorm\b)")),
    # another vendor's accelerator: its extension runs on torch's CPU build (cuda.py's cuda_unavailable)
    *((name, re.compile(rf"(?P<other_accelerator>\b{name}\b)")) for name in cuda.OTHER_ACCELERATORS),
    *autograd.CONTEXT,
    *deepspeed.CONTEXT,  # where DeepSpeed's bare "backend not set" was raised: building a model, or after the end
    *config_checks.CONTEXT,  # a traceback cut inside DeepSpeed building its config (cut_traceback.py)
    *layer_shapes.CONTEXT,
    *empty_params.CONTEXT,
    *torch_load_calls.CONTEXT,
    *index_ranges.CONTEXT,
    *datasets.CONTEXT,
    data_containers.STR_DIMS,
    *dtypes.CONTEXT,
    *collective_args.CONTEXT,
    *environment.CONTEXT,
    *masked_gradients.CONTEXT,
    *downloads.CONTEXT,
    *release_changes.CONTEXT,
    *config_targets.CONTEXT,  # the overrides Hydra printed: the configs the job chose
    *build.CONTEXT,
    *trainer_data_releases.CONTEXT,
    *model_type_releases.CONTEXT,  # the lookup behind transformers' bare KeyError of an unknown model type
    *hub_datasets.CONTEXT,
    *warnings_alone.CONTEXT,  # transformers' Trainer ran, and a release of 4.3 or later: find_unused_parameters_unneeded
    *detection_boxes.CONTEXT,
    *compile_backends.CONTEXT,
    *tokenizer_threads.CONTEXT,
    *daemon_children.CONTEXT,
    *tensor_handoff.CONTEXT,
    *remote_results.CONTEXT,  # a tensor unpickled as another process's result (Ray, multiprocessing)
    *ray_cluster.CONTEXT,  # the resources Ray Train's worker group asked for, logged before it waits
    *option_conflicts.CONTEXT,  # Lightning re-creating a DataLoader for its DistributedSampler
    *task_gpus.CONTEXT,
    *gpus.CONTEXT,  # NCCL_HOSTID named: duplicate_gpu's other reading
    *arch_wheels.CONTEXT,  # a build's kernels as torch.cuda.get_arch_list() prints them: no_kernel_image's wheels
    *ranks.CONTEXT,
    *tensor_misuse.CONTEXT,
    *image_channels.CONTEXT,
    *schedulers.CONTEXT,
    *train.CONTEXT,
    *trainer_arguments.CONTEXT,
    *torchvision_renames.CONTEXT,
    *fork_unsafe.CONTEXT,
    *api_members.CONTEXT,  # the packages a log names (a frame's path, an import)
    *printed_versions.CONTEXT,  # the release of each package a log prints as installed (pip freeze, collect_env)
    ("--local_rank=", re.compile(r"'(?P<injected_local_rank>--local_rank=\d+)'")),
    (
        "torch.distributed.launch is deprecated",
        re.compile(r"(?P<deprecated_launch>torch\.distributed\.launch is deprecated)"),
    ),
    cuda.DS_ACCELERATOR,  # the accelerator DeepSpeed picked: fp16_unsupported on a GPU, not the CPU fallback
    *accelerate_calls.CONTEXT,  # accelerate's dispatcher reading a batch's size: a batch of None ran out of data
    cuda.RESTORE_FRAME,  # torch.load restoring a tensor onto its saved GPU: invalid_device_ordinal's checkpoint
    cuda.VISIBLE_DEVICES_SET,  # CUDA_VISIBLE_DEVICES given a value: no device found is then the list it gave
    placement.REPLICA,
    *placement.FORK_LAUNCHER,  # a notebook's launcher that forks it: cuda_fork's fix names it
    *remote_code.CONTEXT,  # the refusal's ValueError line: a model's repository or a dataset's
    *nccl.CONTEXT,  # an NCCL WARN line naming the call that failed: nccl_system_error's fix speaks of it
    *placement.VLLM_SEEN,  # vLLM's workers, forked by vLLM: cuda_fork's fix names its variable
    *cut_traceback.CONTEXT,  # a traceback that stops before its error line: where its frames end
    ranks.HPO,  # a hyperparameter search: each process may draw its own trial (a model that differs by rank)
    ("zero", re.compile(r"(?P<saw_zero3>zero_stage[\"'=: ]{1,4}3|ZeRO[- ]?(?:Stage )?3|zero3|stage3\.py)")),
    ("ZeRO", re.compile(r"(?P<saw_zero3>ZeRO[- ]?(?:Stage )?3)")),
    ("stage3.py", re.compile(r"(?P<saw_zero3>zero/stage3\.py|\[stage3\.py:)")),
    # a 4-bit bitsandbytes model (QLoRA): named in words, Qwen's --q_lora, load_in_4bit set, or its classes' frames
    *(
        (
            literal,
            re.compile(
                r"(?P<saw_4bit>(?i:\bq_?lora\b)(?![\"'=: ]{1,4}False)|load_in_4bit[\"'=: ]{1,4}[Tt]rue|\b(?:Params|Linear)4bit\b)"
            ),
        )
        for literal in ("lora", "LoRA", "LORA", "4bit")
    ),
    ("deepspeed", re.compile(r"(?P<saw_deepspeed>\bdeepspeed[\\/.]|\bdeepspeed\b)")),
    ("DeepSpeed", re.compile(r"(?P<saw_deepspeed>DeepSpeed)")),
    ("DataParallel", re.compile(r"(?P<saw_dataparallel>(?<!Distributed)DataParallel)")),
    # DataParallel's warning that its GPUs are unequal, printed once as it is built, long before the GPU that is
    # too small runs out (cuda.py's CUDA_OOM names it); printed over four lines
    (
        "There is an imbalance between your GPUs",
        re.compile(
            r"There is an imbalance between your GPUs\. You may want to exclude GPU (?P<imbalance_weak_gpu>\d+) "
            r"which\s+has less than 75% of the memory or cores of GPU (?P<imbalance_strong_gpu>\d+)"
        ),
    ),
    # Lightning's fit stopping before its loop: a training loader of no batch (empty_batches.DATALOADER_EMPTY)
    (
        "No training batches",
        re.compile(r"(?P<no_training_batches>`?Trainer\.fit`? stopped: No training batches)"),
    ),
    # FSDP in the run: its class, its package's frames, accelerate's / the Trainer's options, FSDP2's call
    ("FullyShardedDataParallel", re.compile(r"(?P<saw_fsdp>FullyShardedDataParallel)")),
    # (not fsdp_config / fsdp=[] of the Trainer's arguments, which every run of it prints)
    (
        "fsdp",
        re.compile(r"(?P<saw_fsdp>[\\/]fsdp[\\/]|--fsdp[= ]['\"]?(?:full_shard|shard_grad_op|hybrid_shard))"),
    ),
    ("FSDP", re.compile(r"(?P<saw_fsdp>\bFSDP\b)")),
    ("fully_shard", re.compile(r"(?P<saw_fsdp>\bfully_shard\()")),
    ("data_parallel.py", re.compile(r"(?P<saw_dataparallel>data_parallel\.py)")),
    # scatter_gather.py's gather_map: DataParallel gathering its replicas' outputs
    ("gather_map", re.compile(r"(?P<saw_dataparallel>\bgather_map\b)")),
    # pip building a package from source (pip/_internal: the PEP 517 steps it names, the legacy setup.py ones)
    *(
        (
            literal,
            re.compile(
                r"(?P<pip_build>Getting requirements to build (?:wheel|editable)|setup\.py egg_info|"
                r"Preparing metadata \(pyproject\.toml\)|Building wheel for [\w.-]{1,100} \((?:setup\.py|pyproject\.toml)\))"
            ),
        )
        for literal in (
            "Getting requirements to build",
            "egg_info",
            "Preparing metadata",
            "Building wheel for",
        )
    ),
    # uv building a package from source (crates/uv-build-frontend, crates/uv/src/commands/diagnostics.rs)
    *(
        (literal, installers.UV_BUILD)
        for literal in (
            "Failed to build `",
            "The build backend returned an error",
            "Failed to download and build `",
        )
    ),
    *installers.CONTEXT,
    *checkpoint.CONTEXT,  # a container, whose overlay refuses to rename an image's directories (EXDEV)
    ("declare it as a build dependency", installers.UV_BUILD),
    *prebuilt.CONTEXT,
    *compiled_ops.CONTEXT,
    *extension_packages.CONTEXT,
    *simulators.CONTEXT,
    ("ncclSystemError", re.compile(r"(?P<saw_nccl_failure>ncclSystemError)")),
    # each under its own literal: torch's "NCCL error in: ..." line holds no lower-case "nccl"
    *(
        (
            literal,
            re.compile(
                r"(?P<saw_nccl_failure>unhandled system error|ncclInternalError|ncclInvalidUsage|NCCL error in:)"
            ),
        )
        for literal in ("unhandled system error", "ncclInternalError", "ncclInvalidUsage", "NCCL error in:")
    ),
    # NCCL's own refusals of a setting (kinds/nccl.py NCCL_ENV_VALUE): each WARN returns the error that stops
    # the communicator's creation, so the WARN is the failure even where the paste stops before torch's line
    *(
        (literal, re.compile(r"(?P<saw_nccl_failure>" + re.escape(literal) + ")"))
        for literal in (
            "Invalid NCCL_COMM_ID",
            "XML Topology has wrong version",
            "XML Graph has wrong version",
            "Could not open XML graph file",
            "XML Parse error",
            "XML Parse : Unexpected",
            "XML Parse : Expected",
            "XML Parse : expected",
            "XML Parse : unterminated",
            "NCCL_NET_FORCE_MERGE string",
            "TOPO/NET : Only matched",
            "Specified fused NIC",
            "Failed to initialize any NET plugin",
        )
    ),
    ("Error: network ", re.compile(r"(?P<saw_nccl_failure>Error: network [^\n]{0,60} not found\.)")),
    # misc/socket.cc's address WARN is NCCL_COMM_ID's only where the log names it (kinds/nccl.py); NCCL 2.24+'s RAS
    # socket prints it too and goes on, so it is no NCCL failure alone
    ("NCCL_COMM_ID", re.compile(r"(?P<saw_comm_id>NCCL_COMM_ID(?: set by environment to |=)\S)")),
    (
        "spawn",
        re.compile(r"(?P<saw_spawn>ddp_spawn|mp\.spawn|start_processes|multiprocessing[/\\]spawn\.py)"),
    ),
    # a multiprocessing Process started by spawn (CPython's popen_spawn_*: the child gets its target and arguments
    # pickled): with no mp.spawn or DataLoader in the log, the script's own Process (train.py's _spawn)
    ("popen_spawn_", re.compile(r"(?P<process_spawned>popen_spawn_(?:posix|win32)\.py)")),
    # the object multiprocessing pickled for a new process (reduction.py's dump, under popen_spawn_* or
    # forkserver): the pickling error is the start of a process's, not torch.save's
    (
        "reduction.py",
        re.compile(r"(?P<pickled_for_process>multiprocessing[/\\]reduction\.py\S*, line \d+, in dump)"),
    ),
    # torch's release in a sentence or a report ("torch 2.1.0", "PyTorch version: 2.1.0"), the fallback where no
    # form printed_versions reads is there; never a pin ("torch==2.1.0", conda's "torch=2.1.0"): what was asked
    *(
        (literal, re.compile(r"\b(?:torch|PyTorch version:?) (?P<torch_version>\d+\.\d+\.\d+[\w.+]*)"))
        for literal in ("torch", "PyTorch version")  # collect_env's line has no lower-case "torch"
    ),
    # the host compiler a build ran: gcc -v, gcc --version, CMake's compiler identification (kinds/toolkits.py)
    *(
        (literal, toolkits.GCC_VERSION)
        for literal in ("gcc version ", "gcc (", "g++ (", "identification is GNU")
    ),
    # pip's note on the releases whose Requires-Python excludes this interpreter (kinds/wheel_tags.py)
    ("Ignored the following versions", wheel_tags.PIP_IGNORED),
    # the Python a run or an install used: "python 3.13", pip's "(python 3.10)", a site-packages path
    ("ython", re.compile(r"\b(?i:python) ?(?P<python_version>3\.\d{1,2})\b")),
    # a scheduler that started the processes itself (no torch launcher between it and the script)
    *(
        (
            literal,
            re.compile(r"(?P<saw_scheduler>\b(?:srun|mpirun|mpiexec|jsrun)\b|SLURM_PROCID|OMPI_COMM_WORLD)"),
        )
        for literal in ("srun", "mpirun", "mpiexec", "jsrun", "SLURM_PROCID", "OMPI_COMM_WORLD")
    ),
    # torch.multiprocessing.spawn started the processes (a worker's error re-raised in the parent): it starts
    # nprocs of them, whatever world_size init_process_group is told (comm.py's store counting fewer)
    (
        "ProcessRaisedException",
        re.compile(r"(?P<spawned>torch\.multiprocessing\.spawn\.ProcessRaisedException)"),
    ),
    # init_process_group's rendezvous hosting the store in the script's own process (rank 0 without torchrun's
    # agent store: started by hand or by mp.spawn; comm.py's store counting fewer processes)
    (
        "_create_c10d_store",
        re.compile(r"(?P<store_by_script>rendezvous\.py\S{0,10}, line \d+, in _create_c10d_store)"),
    ),
    # Lightning's launcher set up this process's rank (fabric/utilities/distributed.py _init_dist_connection; 1.x:
    # "initializing ddp"): its world is Trainer's num_nodes x devices (comm.py's store counting fewer)
    (
        "GLOBAL_RANK: ",
        re.compile(
            r"(?:initializing ddp|Initializing distributed): GLOBAL_RANK: \d+, MEMBER: \d+/(?P<lightning_world>\d+)"
        ),
    ),
    # torchrun's summary of a job where the root-cause rank was the only one that failed: every other rank
    # exited without an error (ranks it stopped are listed as failures, with SIGTERM)
    ("<NO_OTHER_FAILURES>", re.compile(r"(?P<no_other_failures><NO_OTHER_FAILURES>)")),
    # a rank picking its GPU: torch.cuda.set_device in a frame (torch 1.x: csrc/cuda/Module.cpp's setDevice)
    (
        "set_device",
        re.compile(r"(?P<set_device_frame>\bin set_device\b|torch\.cuda\.set_device\(|_cuda_setDevice)"),
    ),
    ("Module.cpp", re.compile(r"(?P<set_device_frame>csrc/cuda/Module\.cpp\S{0,20} (?:line=)?\d+)")),
    # a traceback frame in an installed package other than torch (and its CUDA wheels): code of that package's
    # release, not the script, on the way to the failure (cuda.py: which code chose a GPU index)
    *(
        (
            folder,
            re.compile(
                rf"{folder}[/\\](?!torch[/\\]|nvidia[/\\])(?P<frame_package>[A-Za-z_]\w{{0,60}})[/\\]"
                r"[^\"\n]{0,300}\", line \d+, in "
            ),
        )
        for folder in ("site-packages", "dist-packages")
    ),
    # torch.load restoring tensors (serialization.py's restore_location / _cuda_deserialize)
    (
        "serialization.py",
        re.compile(
            r"(?P<saw_torch_load>serialization\.py\S{0,10}, line \d+, in (?:load|_load|_legacy_load|restore_location|"
            r"default_restore_location|_cuda_deserialize|_deserialize|persistent_load))"
        ),
    ),
    ("torch.load(", re.compile(r"(?P<saw_torch_load>\btorch\.load\()")),
    # torch.save pickling what it was given (serialization.py's save / _save / _with_file_like frames)
    (
        "serialization.py",
        re.compile(
            r"(?P<saw_torch_save>serialization\.py\S{0,10}, line \d+, in (?:save|_save|_with_file_like)\b)"
        ),
    ),
    ("torch.save(", re.compile(r"(?P<saw_torch_save>\btorch\.save\()")),
    # an object collective pickling what it was given (distributed_c10d.py's _object_to_tensor, under
    # all_gather_object / gather_object / broadcast_object_list / scatter_object_list / send_object_list)
    (
        "distributed_c10d.py",
        re.compile(
            r"(?P<saw_object_collective>distributed_c10d\.py\S{0,10}, line \d+, in (?:_object_to_tensor|"
            r"all_gather_object|gather_object|broadcast_object_list|scatter_object_list|send_object_list)\b)"
        ),
    ),
    # or the user's line that called one, where the traceback shows only the user's frames (cut, or pasted short)
    *(
        (
            literal,
            re.compile(
                r"(?P<saw_object_collective>^[ \t]+[^\n#]{0,200}?\b(?:all_gather_object|gather_object|"
                r"broadcast_object_list|scatter_object_list|send_object_list)\()",
                re.MULTILINE,
            ),
        )
        for literal in ("gather_object(", "_object_list(")
    ),
    # accelerate's gather of tensors (utils/operations.py: gather -> _gpu_gather -> _gpu_gather_one's all_gather)
    (
        "operations.py",
        re.compile(
            r"(?P<saw_accelerate_gather>accelerate[/\\]utils[/\\]operations\.py\S{0,10}, line \d+, in "
            r"(?:gather|_gpu_gather|_gpu_gather_one)\b)"
        ),
    ),
    # Lightning's all_gather (LightningModule.all_gather, Fabric.all_gather: fabric/utilities/distributed.py)
    (
        "_all_gather_ddp_if_available",
        re.compile(
            r"(?P<saw_lightning_gather>distributed\.py\S{0,10}, line \d+, in _all_gather_ddp_if_available\b)"
        ),
    ),
    # the same gather where no traceback names it (gloo aborts the process on a size mismatch): the FutureWarning
    # that torch's deprecated torch.distributed.nn.functional.all_gather gives (torch 2.13 does), placed at
    # Lightning's _all_gather_ddp_if_available the first time it runs (Lightning's warning format drops the category)
    (
        "all_gather is deprecated",
        re.compile(
            r"(?P<saw_lightning_gather>lightning[/\\]fabric[/\\]utilities[/\\]distributed\.py:\d+: "
            r"(?:\w+Warning: )?torch\.distributed\.nn\.functional\.all_gather is deprecated)"
        ),
    ),
    # who built the DDP wrapper: transformers' Trainer (its training step), else accelerate (the Accelerator's
    # backward, or accelerate launch's frames), read by the fixes that name the wrapper's option
    (
        "trainer.py",
        re.compile(
            r"(?P<saw_hf_trainer>transformers[/\\]trainer\.py\S{0,10}, line \d+, in (?:train|_inner_training_loop|"
            r"training_step)\b)"
        ),
    ),
    (
        "accelerator.py",
        re.compile(r"(?P<saw_accelerate>accelerate[/\\]accelerator\.py\S{0,10}, line \d+, in backward\b)"),
    ),
    # accelerate launch's own frames (commands/launch.py raising the worker's exit as CalledProcessError)
    (
        "launch.py",
        # (saw_accelerate_launch: the launcher the job was started with, which the fixes name in torchrun's place)
        re.compile(
            r"(?P<saw_accelerate>accelerate[/\\]commands[/\\](?P<saw_accelerate_launch>launch)\.py\S{0,10}, line \d+, "
            r"in )"
        ),
    ),
    # the script's own GradScaler call in a traceback (accelerate's is self.scaler.unscale_), and unscale_'s
    # refusal after step(): the training loop's order, kinds/amp_scaler.py
    ("scaler.unscale_(", re.compile(r"(?P<own_unscale_call>^(?:\[rank\d+\]:)?\s*scaler\.unscale_\()")),
    (
        "is being called after step()",
        re.compile(r"(?P<unscale_after_step>unscale_\(\) is being called after step\(\))"),
    ),
    # a traceback frame in Megatron's code or a framework's Megatron backend (slime's megatron_utils, Relax's
    # backends/megatron): its optimizer's step() returns update_successful, kinds/amp_scaler.py
    ("megatron", re.compile(r"(?P<megatron_frame>File \"[^\"\n]*megatron[^\"\n]*\", line \d+)")),
    # nn.Module.__getattr__ raising an AttributeError: the object that lacks the attribute is a torch module
    (
        "in __getattr__",
        re.compile(r"(?P<nn_getattr>torch[/\\]nn[/\\]modules[/\\]module\.py\S*, line \d+, in __getattr__)"),
    ),
)
