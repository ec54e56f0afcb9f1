"""A torch.distributed call refused on what it was handed.

Point-to-point batches, object scatters, ranks given two ways, sub-groups split or cut, functional collectives'
groups and sizes.

The checks are torch's own, as ``torch/distributed/distributed_c10d.py`` (``batch_isend_irecv``'s
``_check_op`` / ``_check_p2p_op_list``, ``scatter_object_list``, ``_canonicalize_group_rank`` under every collective
that takes ``src``/``group_src`` or ``dst``/``group_dst``, ``_coalescing_manager``, ``split_group``,
``new_subgroups*``, ``shrink_group``, ``_new_group_with_tag``, ``_get_pg_default_device`` /
``_get_object_coll_device``, ``destroy_process_group``), ``torch/distributed/_functional_collectives.py`` (tensor
parallelism's and DTensor's collectives: ``_resolve_group``, ``reduce_scatter_tensor``, ``all_to_all_single``, the
autograd variants) and the C++ under them (``torch/csrc/distributed/c10d/ProcessGroup.cpp``'s ``splitGroup``,
``Backend.hpp``'s shrink, ``Functional.cpp``'s group argument) raise them in torch 2.4-2.13. Each names the argument it refuses and the call, so each is certain once a
real log shows it; a group handle torch does not know (a group destroyed, made by hand, or unpickled) is printed for
several causes and stays likely, its fix naming each.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "NCCL and collectives"

_GROUP_OBJECT = (
    "A collective's group= takes a ProcessGroup, made by torch.distributed.new_group(ranks) (or "
    "mesh.get_group('tp') for one dimension of a DeviceMesh): not the DeviceMesh itself, a list of ranks, a rank "
    "number or a group's name. Pass the object new_group returned (group=tp_group), or None for the default group."
)

_SPLIT_DEVICE = (
    "split_group (and new_group under TORCH_DISTRIBUTED_USE_TORCHCOMMS) splits a communicator bound to one GPU: "
    "bind the default group at creation, init_process_group('nccl', device_id=torch.device('cuda', local_rank)) "
    "with local_rank = int(os.environ['LOCAL_RANK']); on a run without GPUs (gloo) use new_group(ranks) or "
    "new_subgroups_by_enumeration([...]) instead, which every backend supports."
)

_SPLIT_RANKS = (
    "split_group(split_ranks=[[0, 1], [2, 3]]) takes one list of ranks per new group, each non-empty and naming "
    "a rank once (compute the lists from range(world_size), e.g. [list(range(i, i + n)) for i in range(0, world, n)])."
)

_CPU_BUILD_DEVICE = (
    "init_process_group was given a device_id of an accelerator this torch was not built for: a CPU-only wheel "
    "(the message says the compiled support is None; torch.version.cuda is None), or a build for another "
    "accelerator than the device named. Install the build that matches the machine (pip install torch "
    "--index-url https://download.pytorch.org/whl/cu128 for CUDA, the wheel for the driver's CUDA), pass a device "
    "of the type torch.accelerator.current_accelerator() names, or on a CPU-only run leave device_id out "
    "(init_process_group(backend='gloo'))."
)

_SHRINK = (
    "torch.distributed.shrink_group(ranks_to_exclude) removes failed ranks from a group: pass a non-empty list of "
    "the group's own ranks (integers in 0..group size-1, each once, e.g. [failed_rank]), keep at least one rank, "
    "and call it only on the ranks that stay (the excluded ones exit instead); the group needs at least 2 ranks and "
    "a backend that can shrink (NCCL 2.27+ through torch's ProcessGroupNCCL)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    # batch_isend_irecv's checks of its list (distributed_c10d.py _check_op, _check_p2p_op_list)
    (
        "Invalid ``op``. Expected ``op`` to be of type",
        "P2POp's first argument is the function itself, dist.isend or dist.irecv: P2POp(dist.isend, tensor, peer) "
        "(not dist.send / dist.recv, a string such as 'isend', or the Work that calling dist.isend returned).",
    ),
    (
        "Invalid ``p2p_op_list``. Each op is expected to",
        "batch_isend_irecv takes a list of dist.P2POp objects: ops = [dist.P2POp(dist.isend, send_buf, next_rank), "
        "dist.P2POp(dist.irecv, recv_buf, prev_rank)]; reqs = dist.batch_isend_irecv(ops); then req.wait() for each. "
        "Pass a list (not a tuple or generator), and P2POps, not the Work handles isend / irecv return.",
    ),
    (
        "All ops need to use the same group.",
        "Every P2POp of one batch_isend_irecv call must name the same group (P2POp(..., group=pp_group)): give the "
        "ops the same group=, or send those of another group in a batch_isend_irecv call of their own.",
    ),
    # scatter_object_list
    (
        "Expected argument scatter_object_output_list to be a list of size at least 1.",
        "scatter_object_list writes its result into its first argument, which every rank passes as a list with one "
        "slot: out = [None]; dist.scatter_object_list(out, objects if rank == src else None, src=src); value = out[0].",
    ),
    (
        "source rank must provide non-None scatter_object_input_list",
        "The rank named as src (a global rank; group_src= counts within the group) must pass the list of objects to "
        "send, one per rank of the group; only the other ranks pass None. Check that the rank that builds the list "
        "is the one given as src (src=0 with the list made under `if rank == 0`).",
    ),
    # _canonicalize_group_rank: src= and group_src= (dst= and group_dst=) of broadcast, send, recv, reduce, gather,
    # scatter and their object variants
    (
        "Can't specify both group_rank and global_rank",
        "A collective was given both src= and group_src= (or dst= and group_dst=): pass one of them, src / dst as the "
        "rank in the whole job, or group_src / group_dst as the rank inside group=.",
    ),
    (
        "Must specify global_rank or group_rank",
        "The collective needs to know its root: pass src= (broadcast, scatter, recv from one peer) or dst= (reduce, "
        "gather, send) as a global rank, or group_src= / group_dst= as a rank inside group=; None for both is refused.",
    ),
    # _coalescing_manager
    (
        "Coalescing manager requires all collectives to be the same type",
        "Inside one `with dist._coalescing_manager(group, device):` block every collective must be the same op (all "
        "all_reduce, or all all_gather_into_tensor, or all reduce_scatter_tensor): move the others to a block of "
        "their own.",
    ),
    (
        "on IllegalWork object",
        "A collective issued inside `with dist._coalescing_manager(...) as cm:` returns a placeholder, not a Work: "
        "call cm.wait() after the block (with async_ops=True) instead of waiting on each collective's handle.",
    ),
    # split_group
    (
        "split_ranks cannot be None or empty",
        "split_group(split_ranks=[[0, 1], [2, 3]]): one list of ranks per new "
        "group, the lists covering the ranks that take part. " + _SPLIT_DEVICE,
    ),
    (
        "the split group cannot be empty",
        "split_group(split_ranks=[[0, 1], [2, 3]]) takes one non-empty list of ranks per new group: one of the "
        "lists was empty (built from a size of 0, or filtered down to nothing). " + _SPLIT_DEVICE,
    ),
    # ProcessGroup.cpp splitGroup, under split_group / new_group: the C++ side's checks of the same lists
    ("Split ranks cannot be empty. Please provide a non-empty list of ranks", _SPLIT_RANKS),
    ("Split ranks should not have duplicates.", _SPLIT_RANKS),
    (
        "Requested device type for splitGroup is not present in the parent process group",
        "split_group can only give the new group devices whose backends its parent has: make the parent with a "
        "backend for that device (init_process_group(backend='cpu:gloo,cuda:nccl')), or split for the parent's "
        "devices only.",
    ),
    (
        "splitGroup deviceTypes filter must include the parent process group's default backend device type.",
        "split_group(..., device types) must keep the parent group's default device (the GPU of an NCCL default "
        "group): include it in the devices asked for, or leave them out to inherit the parent's.",
    ),
    ("No device associated with the default pg, not safe to split any process groups", _SPLIT_DEVICE),
    ("No backend for the parent process group or its backend does not support splitting", _SPLIT_DEVICE),
    (
        "is not part of the parent group",
        "split_group ran on a rank outside parent_pg: call it on every rank of the parent group and only on them "
        "(if rank in parent_ranks: ...), or split the default group (parent_pg=None).",
    ),
    (
        "is not present in the parent process group (parent backends:",
        "split_group can only give the new group backends its parent has: request one of the parent backends the "
        "message lists, or leave the backend out to inherit them.",
    ),
    (
        "Backend names must match exactly when filtering split_group backends.",
        "split_group's backend for a device must be the parent's for that device, spelt the same (the message "
        "names both): request the parent's, or make the parent group with the one wanted.",
    ),
    (
        "does not match the default process group's bound_device_id",
        "split_group uses the default group's GPU: pass the same device_id as init_process_group did, or none.",
    ),
    # new_group / new_subgroups
    (
        "Mismatched bound device between new pg and the default pg.",
        "new_group(device_id=...) named another GPU than init_process_group(device_id=...): pass the same "
        "torch.device('cuda', local_rank) to both, or leave it out of new_group to inherit it.",
    ),
    (
        "MPI backend doesn't support use_local_synchronization=True",
        "new_group(ranks, use_local_synchronization=True) needs a store-based backend: drop the flag with "
        "backend='mpi' (every rank of the job then calls new_group), or use nccl / gloo.",
    ),
    (
        "new_group cannot delegate to split_group with",
        "Under TORCH_DISTRIBUTED_USE_TORCHCOMMS new_group is made by split_group, which needs every rank of the parent "
        "to call it and sorts each group's ranks: call new_group on every rank with use_local_synchronization=False "
        "and sort_ranks=True (the defaults), or unset the variable.",
    ),
    (
        "Default group size only takes effect when CUDA is available.",
        "new_subgroups() sizes its groups by the GPUs per machine when no group_size is given, and this process sees "
        "no CUDA device: pass group_size= (e.g. new_subgroups(group_size=int(os.environ['LOCAL_WORLD_SIZE']))).",
    ),
    (
        "The arg 'group_size' (",
        "new_subgroups(group_size=N) splits the job into groups of N ranks each: N must be at least 1 and divide "
        "the world size (e.g. group_size=int(os.environ['LOCAL_WORLD_SIZE']) for one group per machine); a size "
        "computed from torch.cuda.device_count() is 0 on a process that sees no GPU.",
    ),
    (
        "The arg 'ranks_per_subgroup_list' cannot be empty",
        "new_subgroups_by_enumeration takes one list of ranks per sub-group, e.g. [[0, 1], [2, 3]]: the list built "
        "was empty (computed from a size of 0, or from ranks of another world size).",
    ),
    # shrink_group (torch 2.10+)
    ("ranks_to_exclude must be a list, but got", _SHRINK),
    ("ranks_to_exclude cannot be empty. To shrink a group", _SHRINK),
    ("must be integers. Element at index", _SHRINK),
    ("found in ranks_to_exclude at index", _SHRINK),
    ("is out of bounds for group size", _SHRINK),
    ("ranks from process group. At least one rank must remain.", _SHRINK),
    ("Group must have at least 2 ranks to support shrinking.", _SHRINK),
    (" does not support shrink", _SHRINK),  # Backend.hpp: a backend without shrink (gloo, MPI)
    ("does not support shrinking operations.", _SHRINK),
    ("is in the exclusion list and should not call shrink_group()", _SHRINK),
    ("Invalid shrink_flags value:", _SHRINK + " shrink_flags is SHRINK_DEFAULT or SHRINK_ABORT."),
    # init_process_group's device_id on a build without an accelerator
    (
        "device_id is an int, but no accelerator support is found from the current compilation.",
        _CPU_BUILD_DEVICE,
    ),
    ("does not match the current compilation's accelerator support:", _CPU_BUILD_DEVICE),
    (
        "Expected backend_options argument to be of type ProcessGroupNCCL.Options",
        "pg_options= for an NCCL group must be a ProcessGroupNCCL.Options: opts = "
        "dist.ProcessGroupNCCL.Options(); opts.is_high_priority_stream = True; init_process_group('nccl', "
        "pg_options=opts) (a dict, or gloo's options, is refused).",
    ),
    # TORCH_DISTRIBUTED_DEBUG=DETAIL wraps every group in a gloo-backed ProcessGroupWrapper
    (
        "ProcessGroupWrapper unsupported without GLOO backend.",
        "TORCH_DISTRIBUTED_DEBUG=DETAIL checks every collective through a gloo group, and this torch has no gloo: "
        "set TORCH_DISTRIBUTED_DEBUG=INFO (or unset it), or use a torch build with gloo (the official wheels).",
    ),
    (
        "TORCH_DISTRIBUTED_DEBUG was set to DETAIL, but",
        "TORCH_DISTRIBUTED_DEBUG=DETAIL checks every collective through a gloo group, and this torch has no gloo: "
        "set TORCH_DISTRIBUTED_DEBUG=INFO (or unset it), or use a torch build with gloo (the official wheels).",
    ),
    # destroy_process_group() (and its abort) with no default group left to destroy
    (
        "Process group cannot be None",
        "destroy_process_group() ran when this process has no default group: init_process_group was never called "
        "in it (a script run without its launcher, or a code path that skips the set-up), or the group was "
        "destroyed already (destroy_process_group called twice, e.g. by a library and again by the script). Call "
        "it once, at the end, guarded: if dist.is_initialized(): dist.destroy_process_group().",
    ),
    # group handles torch does not know
    ("Expecting a ProcessGroup, but got a", _GROUP_OBJECT),
    ("Expected ProcessGroup, got", _GROUP_OBJECT),
    (
        "is not initialized in the world group map. Please initialize the group first.",
        "torch.distributed does not know this group: it was destroyed (destroy_process_group) and used again, made "
        "by constructing a ProcessGroup / backend by hand, or arrived pickled from another process. Create groups "
        "with init_process_group / new_group in the process that uses them, and use none after destroying it.",
    ),
    # _functional_collectives.py: tensor parallelism's and DTensor's collectives
    (
        "(): argument 'group_name' must be either a string (group name) or a ProcessGroup object",
        "The _c10d_functional ops (torch.ops._c10d_functional.all_reduce, all_gather_into_tensor, ...) take their "
        "group as the group's name (group.group_name) or the ProcessGroup itself: not a rank list, a DeviceMesh or "
        "None. The Python wrappers in torch.distributed._functional_collectives take those and resolve them.",
    ),
    (
        "Invalid type for group, must be one of List, Processgroup, DeviceMesh or (DeviceMesh, int).",
        "A functional collective (torch.distributed._functional_collectives, what tensor parallelism and DTensor "
        "call) takes group= as a ProcessGroup, a 1-D DeviceMesh, (mesh, dim) or a list of ranks: pass mesh['tp'] or "
        "(mesh, 1), not a group name or a rank.",
    ),
    (
        "Invalid tuple for group must be (DeviceMesh, int)",
        "A functional collective's tuple group is (DeviceMesh, dimension index): (mesh, 0), not (mesh, 'tp') or "
        "(group, rank).",
    ),
    (
        "Only 1D mesh is supported, pass in (DeviceMesh, int) together if mesh > 1D",
        "A functional collective on a multi-dimensional DeviceMesh needs the dimension: group=(mesh, 1), or the "
        "1-D slice group=mesh['tp'].",
    ),
    (
        "rankset doesn't include the current node",
        "A functional collective was given a list of ranks that leaves this rank out: every rank in the list calls "
        "it and only they do; pass the list that holds this rank (or a ProcessGroup from new_group).",
    ),
    (
        " must be a multiple of group_size ",
        "reduce_scatter_tensor splits dim 0 (scatter_dim) of its input into one equal piece per rank: pad that "
        "dimension to a multiple of the group's size (or shard another dimension that divides evenly).",
    ),
    (
        "backward only supports 'sum' reduction, got",
        "The autograd-aware functional collectives (all_reduce / reduce_scatter_tensor with gradients) differentiate "
        "sums only: reduce with 'sum' and divide by the group's size for a mean; max/min/avg have no backward here.",
    ),
    (
        "must either be specified together or both set to None",
        "all_to_all_single takes output_split_sizes and input_split_sizes together (one size per rank each) or "
        "neither (equal splits).",
    ),
    (
        "_split_sizes must be int or SymInt, got",
        "all_to_all_single's split sizes are Python ints, one per rank: pass sizes.tolist(), not a tensor or a "
        "list of tensors.",
    ),
    (
        "args as per eager impl",
        "A functional collective was given both src= and group_src= (or dst= and group_dst=): pass one of them, "
        "src / dst as the rank in the whole job, or group_src / group_dst as the rank inside the group.",
    ),
)

C10D_CALL_REFUSED = refusal_recogniser(
    kind="c10d_call_refused",
    title="a torch.distributed call refused what it was handed",
    refusals=REFUSALS,
    templates=(
        "torch:invalid-op-expected-op-to-be",
        "torch:invalid-p2p-op-list-each-op",
        "torch:all-ops-need-to-use-the",
        "torch:expected-argument-scatter-object-output-list",
        "torch:source-rank-must-provide-non-none",
        "torch:can-specify-both-group-rank-and",
        "torch:must-specify-global-rank-or-group",
        "torch:coalescing-manager-requires-all-collectives-to",
        "torch:illegal-to-call-on-illegalwork-object",
        "torch:split-ranks-cannot-be-none-or",
        "torch:the-split-group-cannot-be-empty",
        "torch_cpp:split-ranks-cannot-be-empty-please",
        "torch_cpp:split-ranks-should-not-have-duplicates",
        "torch_cpp:requested-device-type-for-splitgroup-is",
        "torch_cpp:splitgroup-devicetypes-filter-must-include-the",
        "torch:no-device-associated-with-the-default",
        "torch:no-backend-for-the-parent-process",
        "torch:global-rank-is-not-part-of-2",
        "torch:requested-backend-for-device-is-not",
        "torch:backend-mismatch-for-device-parent-has",
        "torch:device-id-does-not-match-the-2",
        "torch:mismatched-bound-device-between-new-pg",
        "torch:mpi-backend-doesn-support-use-local",
        "torch:new-group-cannot-delegate-to-split",
        "torch:new-group-cannot-delegate-to-split-2",
        "torch:default-group-size-only-takes-effect",
        "torch:the-arg-group-size-must-be",
        "torch:the-arg-ranks-per-subgroup-list",
        "torch:ranks-to-exclude-must-be-list",
        "torch:ranks-to-exclude-cannot-be-empty",
        "torch:all-elements-in-ranks-to-exclude",
        "torch:duplicate-rank-found-in-ranks-to",
        "torch:rank-at-index-is-out-of",
        "torch:cannot-exclude-all-ranks-from-process",
        "torch:cannot-shrink-process-group-with-size",
        "torch:process-group-backend-for-does-not",
        "torch:current-rank-is-in-the-exclusion",
        "torch_cpp:backend-does-not-support-shrink",
        "torch:invalid-shrink-flags-value-must-be",
        "torch:device-id-is-an-int-but",
        "torch:device-id-does-not-match-the",
        "torch:expected-backend-options-argument-to-be",
        "torch:processgroupwrapper-unsupported-without-gloo-backend",
        "torch:torch-distributed-debug-was-set-to",
        "torch:process-group-cannot-be-none",
        "torch:expecting-processgroup-but-got",
        "torch:expected-processgroup-got",
        "torch:process-group-is-not-initialized-in",
        "torch_cpp:argument-group-name-must-be-either",
        "torch:invalid-type-for-group-must-be",
        "torch:invalid-tuple-for-group-must-be",
        "torch:invalid-tuple-for-group-must-be-2",
        "torch:only-mesh-is-supported-pass-in",
        "torch:rankset-doesn-include-the-current-node",
        "torch:input-dimension-must-be-multiple-of",
        "torch:input-dimension-must-be-multiple-of-2",
        "torch:all-reduce-backward-only-supports-sum",
        "torch:reduce-scatter-tensor-backward-only-supports",
        "torch:all-reduce-coalesced-backward-only-supports",
        "torch:reduce-scatter-tensor-coalesced-backward-only",
        "torch:output-split-sizes-and-input-split",
        "torch:all-output-split-sizes-must-be",
        "torch:all-input-split-sizes-must-be",
        "torch:cannot-specify-both-dst-and-group",
        "torch:cannot-specify-both-src-and-group",
    ),
    several=("is not initialized in the world group map. Please initialize the group first.",),
)

RECOGNISERS = (C10D_CALL_REFUSED,)
