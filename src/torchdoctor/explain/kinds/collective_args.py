"""A collective called with arguments torch refuses on the calling rank, before anything is sent.

The checks are torch's own: ``torch/distributed/distributed_c10d.py`` (``_check_single_tensor``,
``_check_tensor_list``, ``_validate_output_list_for_rank``, scatter's and gather_object's checks) and the C++ of
``torch/csrc/distributed/c10d/Utils.hpp`` (``all_to_all_single``'s split sizes) and ``ProcessGroupGloo.cpp`` (the
tensor lists of all_gather / scatter / gather). Each names what was wrong with the call on this rank, so the
finding is certain; the fix is the call's right form. (Ranks that call *different* collectives are
``rank_divergence``; a CPU tensor handed to NCCL ``cpu_tensor_nccl``.) An object collective (all_gather_object,
broadcast_object_list, ...) pickles what it is given: CPython's "Can't pickle" under its frames is that call's,
not what mp.spawn hands its processes.
"""

from __future__ import annotations

from torchdoctor.explain.kinds import post_training_releases
from torchdoctor.explain.kinds.refusal_table import describe_refusal, refused
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# (fact, what was wrong, the call's right form)
_CLASSES = (
    (
        "not_a_tensor",
        "a collective was given something that is not a tensor",
        "Collectives take tensors (on the rank's GPU for NCCL), not Python numbers or lists: wrap the value and "
        "read it back, e.g.\n"
        "    t = torch.tensor(value, device=device); dist.all_reduce(t); value = t.item()\n"
        "and give list arguments (all_gather's tensor_list) as a list of tensors, one per rank: "
        "[torch.empty_like(t) for _ in range(dist.get_world_size())]. For Python objects use all_gather_object "
        "/ broadcast_object_list.",
    ),
    (
        "root_list",
        "a gather / scatter was given its root-only argument on the wrong ranks",
        "Only the root rank passes the list: dist.gather(t, gather_list=[torch.empty_like(t) for _ in "
        "range(world_size)] if rank == dst else None, dst=dst); dist.scatter(t, scatter_list=chunks if rank == "
        "src else None, src=src); gather_object's object_gather_list likewise ([None] * world_size on dst), and "
        "a ShardedTensor's gather its out tensor (sharded.gather(dst, out=full if rank == dst else None)).",
    ),
    (
        "split_sizes",
        "all_to_all_single's split sizes do not fit the tensor",
        "Without split sizes, dim 0 of the input and output must divide by the group's size; with them, "
        "input_split_sizes must sum to input.size(0), output_split_sizes to output.size(0), one entry per rank "
        "(exchange the counts first, e.g. with an all_to_all_single of a tensor of counts).",
    ),
    (
        "list_size",
        "a collective's tensors do not fit the group (one tensor per rank, each of the input's shape)",
        "all_gather / scatter / gather lists hold exactly world_size tensors of the input's shape (the group's "
        "size for a sub-group): [torch.empty_like(t) for _ in range(dist.get_world_size(group))]; the flat forms "
        "take dim 0 times world_size: all_gather_into_tensor's output, reduce_scatter_tensor's input. Tensors "
        "whose size differs between ranks cannot be gathered as they are: pad them to one size (gather the sizes "
        "first) or use all_gather_object.",
    ),
    (
        "backend_lacks_op",
        "the group's backend does not implement this collective",
        "Run it on a backend that has it: the tensor collectives FSDP and DTensor use (all_gather_into_tensor, "
        "reduce_scatter_tensor and their coalesced forms) on CUDA tensors over NCCL (a CPU-only run over gloo "
        "lacks some of them in a given torch release: a newer torch, or the list forms all_gather / reduce via "
        "all_reduce); monitored_barrier on a gloo group only: dist.monitored_barrier(group=dist.new_group("
        "backend='gloo')); gather and scatter over NCCL came with torch 1.11 (before it, pass a gloo group: "
        "dist.gather(t, gather_list, dst=0, group=dist.new_group(backend='gloo')) on CPU tensors, or gather with "
        "all_gather); a recv from any source (recv without src) on gloo only. "
        "init_process_group(backend='cpu:gloo,cuda:nccl') gives each device its backend.",
    ),
    (
        "reduce_op",
        "the reduction op does not apply to these tensors on this backend",
        "Bitwise ops (ReduceOp.BAND / BOR / BXOR) reduce integer and bool tensors only; MAX, MIN and PRODUCT "
        "have no order or product over complex tensors (reduce torch.view_as_real(t) instead); gloo has no "
        "PREMUL_SUM or AVG (all_reduce with ReduceOp.SUM, then divide by the world size) and sums sparse "
        "tensors only (ReduceOp.SUM); NCCL reduces fp8 tensors only on sm90 (Hopper) GPUs and newer, has no "
        "bitwise ops at all (a flag every rank must agree on: all_reduce an int tensor with ReduceOp.MIN for "
        "'all', ReduceOp.MAX for 'any'; or run that collective on a gloo group) and AVG only from NCCL 2.10 "
        "(torch wheels from 1.11 carry it; or SUM, then divide by the world size). Use ReduceOp.SUM, or cast "
        "the tensor to a type the op takes (fp8 to bf16 before the collective).",
    ),
    (
        "tensor_mismatch",
        "the tensors of one collective differ in dtype, size or device",
        "Every tensor of one collective call has the input's dtype, shape and device: build outputs with "
        "torch.empty_like(input) (or .to(input.dtype) / .to(input.device) before the call); a mixed-precision "
        "model gives tensors of different dtypes (gather the fp32 and bf16 ones in separate calls). On gloo, "
        "gather / scatter take their list only on the root (None or [] on every other rank).",
    ),
    (
        "output_dtype",
        "an all-gather was given an output tensor of another dtype than its input",
        "all_gather_into_tensor (_allgather_base) writes the gathered input into the output as it is: build the "
        "output in the input's dtype (torch.empty(world_size * n, dtype=input.dtype, device=input.device)), or "
        "cast the input first. A library that gathers several parameters into buffers of one dtype meets "
        "parameters of two: under DeepSpeed ZeRO-3 from 0.19.2, PEFT's LoRA adapters kept in fp32 beside bf16 "
        "weights (get_peft_model(..., autocast_adapter_dtype=False), or deepspeed<0.19.2).",
    ),
    (
        "not_in_group",
        "a rank outside a sub-group was looked up in it (most often a collective's src / dst on that group)",
        "src / dst of a collective on a sub-group are global ranks: pass one of the group's ranks, e.g. "
        "dist.get_global_rank(group, 0) (or dist.get_process_group_ranks(group)[0]) for its first, not 0; "
        "torch 2.5+ also takes group_src= / group_dst=, a rank counted within the group. Where the caller is not a "
        "collective (get_group_rank, a framework's parallel layout), the same rule holds for the rank it passed.",
    ),
    (
        "root_rank",
        "a collective's src / dst names a rank the group does not have",
        "broadcast, reduce, gather and scatter take as src / dst a rank of the group: 0 to world_size - 1 "
        "(dist.get_world_size()), not the number of processes or of GPUs on a machine; on a sub-group a global "
        "rank that is in it (dist.get_global_rank(group, 0) for its first; torch 2.5+ also takes group_src= / "
        "group_dst=). Most often it is src=0 meant for the main process, or a rank computed from the node count.",
    ),
    (
        "self_peer",
        "a rank sends to or receives from itself",
        "send/recv (isend/irecv) take another rank as dst/src: check how the peer is computed (e.g. (rank + 1) "
        "% world_size), and skip the exchange when the group has one rank; NCCL takes a send to itself only "
        "with the matching recv in the same batch_isend_irecv group.",
    ),
)


COLLECTIVE_ARGUMENTS = Recogniser(
    # torch/distributed/distributed_c10d.py; torch/csrc/distributed/c10d/Utils.hpp, ProcessGroupGloo.cpp
    kind="collective_arguments",
    title="a collective torch refuses as it was called",
    templates=(
        "torch:invalid-function-argument-expected-parameter-of",
        "torch:invalid-function-argument-expected-parameter-of-2",
        "torch:invalid-function-argument-expected-parameter-of-3",
        "torch:invalid-function-argument-output-tensor-lists",
        "torch:argument-gather-list-must-be-specified",
        "torch:argument-gather-list-must-not-be",
        "torch:argument-scatter-list-must-be-specified",
        "torch:argument-scatter-list-must-not-be",
        "torch:must-provide-object-gather-list-on",
        # torch/distributed/_shard/sharded_tensor/utils.py: ShardedTensor.gather's out tensor, the same rule
        "torch:argument-dst-tensor-must-be-specified",
        "torch:argument-dst-tensor-must-not-be",
        "torch_cpp:tensor-dim-does-not-divide-equally",
        "torch_cpp:split-sizes-doesn-match-total-dim",
        "torch_cpp:number-of-tensor-splits-not-equal",
        "torch_cpp:invalid-input-tensor-list-size-must",
        "torch_cpp:output-lists-should-be-equal-to",
        # ProcessGroupGloo.cpp allgather / allgather_coalesced / _reduce_scatter_base: output shapes against input
        "torch_cpp:invalid-output-tensor-list-at-index",
        "torch_cpp:invalid-output-size-expected-length",
        "torch_cpp:invalid-size-of-output-tensor-at",
        "torch_cpp:check-failed-outputshape-worldsize-inputshape",
        "torch:invalid-rank-rank-should-not-be",
        # Backend.hpp: the default of every collective a backend does not override
        "torch_cpp:backend-does-not-support-allgather-base",
        "torch_cpp:backend-does-not-support-reduce-scatter-2",
        "torch_cpp:backend-does-not-support-allgather-into",
        "torch_cpp:backend-does-not-support-reduce-scatter-3",
        "torch_cpp:backend-does-not-support-allgather-coalesced",
        "torch_cpp:backend-does-not-support-allreduce-coalesced",
        "torch_cpp:backend-does-not-support-reduce-scatter",
        "torch_cpp:backend-does-not-support-alltoall-base",
        "torch_cpp:backend-does-not-support-alltoall",
        "torch_cpp:backend-does-not-support-monitoredbarrier-only",
        "torch_cpp:backend-does-not-support-broadcast",
        "torch_cpp:backend-does-not-support-allreduce",
        "torch_cpp:backend-does-not-support-allreduce-sparse",
        "torch_cpp:backend-does-not-support-reduce",
        "torch_cpp:backend-does-not-support-allgather",
        "torch_cpp:backend-does-not-support-gather",
        "torch_cpp:backend-does-not-support-scatter",
        "torch_cpp:backend-does-not-support-send",
        "torch_cpp:backend-does-not-support-recv",
        "torch_cpp:backend-does-not-support-recvanysource",
        "torch_cpp:backend-does-not-support-barrier",
        # before Backend.hpp (torch 2.0) each ProcessGroup refused in its own name: ProcessGroupNCCL.cpp had no
        # gather or scatter until 1.11, no alltoall before NCCL p2p, and still lacks recvAnysource and
        # allgather_coalesced; ProcessGroupMPI.cpp lacks allgather_coalesced
        "torch_native:processgroupnccl-does-not-support-gather",
        "torch_native:processgroupnccl-does-not-support-scatter",
        "torch_native:processgroupnccl-does-not-support-alltoall",
        "torch_native:processgroupnccl-does-not-support-recvanysource",
        "torch_native:processgroupnccl-does-not-support-allgather-coalesced",
        "torch_native:processgroupmpi-does-not-support-allgather-coalesced",
        # ProcessGroupGlooDetail.hpp toFunction, ProcessGroupGloo.cpp allreduce of sparse tensors;
        # distributed_c10d.py all_reduce / all_reduce_coalesced (supports_complex)
        "torch_cpp:cannot-use-reduceop-band-with-non",
        "torch_cpp:cannot-use-reduceop-bor-with-non",
        "torch_cpp:cannot-use-reduceop-bxor-with-non",
        "torch_cpp:cannot-use-reduceop-premul-sum-with",
        "torch_cpp:unsupported-reduction-operation-allreduce-of-sparse",
        "torch_cpp:all-reduce-does-not-support-on",
        # ProcessGroupNCCL.cpp getNcclReduceOp: the ops NCCL lacks (bitwise; AVG before NCCL 2.10)
        "torch_native:cannot-use-reduceop-band-with-nccl",
        "torch_native:cannot-use-reduceop-bor-with-nccl",
        "torch_native:cannot-use-reduceop-bxor-with-nccl",
        "torch_native:avg-requires-nccl-2-10",
        "torch:all-reduce-does-not-support-on",
        # ProcessGroupGloo.cpp: each collective's invalidArgument ("ProcessGroupGloo::<op>: " + the check's
        # words, Utils.hpp's assert* helpers among them); distributed_c10d.py _ensure_all_tensors_same_dtype
        "torch_cpp:tensors-must-all-have-the-same",
        "torch_cpp:tensors-must-all-be-on-the",
        "torch_cpp:input-and-output-tensors-must-have",
        "torch_cpp:input-and-output-tensors-must-have-2",
        "torch_cpp:input-and-output-tensors-must-be",
        "torch_cpp:output-tensor-and-input-tensor-must",
        "torch_cpp:requires-input-output-tensor-lists-to",
        "torch_cpp:requires-empty-output-on-non-root",
        "torch_cpp:requires-empty-input-on-non-root",
        "torch_cpp:reduce-scatter-only-supports-output",
        "torch_cpp:tensors-in-the-nested-tensor-vectors",
        "torch:invalid-usage-of-tensors-with-different",
        "torch_native:output-tensor-must-have-the-same-type",
        # NCCL src/enqueue.cc: a send to (recv from) the rank itself without its pair in the same group;
        # an fp8 reduction on a GPU older than sm90
        "nccl:trying-to-send-to-self-without",
        "nccl:trying-to-recv-to-self-without",
        "nccl:fp8-reduction-support-begins-with-sm90",
        "torch:monitored-barrier-is-only-implemented-for",  # distributed_c10d.py, before the backend is asked
        # get_group_rank / get_global_rank, through which a collective on a sub-group translates src / dst
        "torch:global-rank-is-not-part-of",
        "torch:group-rank-is-not-part-of",
        # torch/csrc/distributed/c10d/Utils.hpp assertRootRank, which ProcessGroupGloo (and NCCL's gather /
        # scatter) run on a broadcast / reduce / gather / scatter's root
        "torch_native:invalid-root-rank",
        # NCCL src/misc/argcheck.cc ArgsCheck: a broadcast / reduce whose root is not a rank of the communicator
        "nccl:invalid-root-root-should-be-in",
        # ProcessGroupNCCL's _reduce_scatter_base (the same words in FakeProcessGroup.hpp, where the catalog
        # read them); all_gather_into_tensor's output checked against world_size * input (libtorch_python)
        "torch_cpp:input-tensor-must-be-the-same",
        # c10d/Utils.hpp's checks of each tensor of a list against the input (ProcessGroupGloo's ops)
        "torch_native:invalid-tensor-size-at-index",
        "torch_native:invalid-tensor-type-at-index",
        "torch_native:invalid-tensor-layout-at-index",
    ),
    anchors=(
        "Invalid function argument. Expected parameter `",
        "Invalid function argument: output_tensor_lists should be a list",
        "must be specified on destination rank",
        "must NOT be specified on non-destination ranks",
        "must be specified on source rank",
        "must NOT be specified on non-source ranks",
        "Must provide object_gather_list on dst rank",
        "Tensor's dim 0 does not divide equally across group size",
        "Split sizes doesn't match total dim 0 size",
        "Number of tensor splits not equal to group size",
        "invalid input tensor list size, must be world size",
        "output lists should be equal to world size",
        "invalid output tensor list at index",
        "invalid output size: (expected length",
        "invalid size of output tensor at index",
        # c10d/Utils.hpp assertSizesMatch / assertTypeMatch / assertLayoutMatch, as ProcessGroupGloo's ops prefix them
        # ("ProcessGroupGloo::allgather: invalid tensor size at index 1 (expected (2), got (4))")
        "invalid tensor size at index",
        "invalid tensor type at index",
        "invalid tensor layout at index",
        "Check failed: outputShape[0] * worldSize == inputShape[0]",
        "input tensor must be the same size as output size times world size",
        "output tensor size must be equal to world_size times input tensor size",
        "rank should not be the same as the rank of the current process",
        " is not part of group ",
        " does not support _allgather_base",
        " does not support _reduce_scatter_base",
        " does not support allgather_into_tensor_coalesced",
        " does not support reduce_scatter",
        " does not support allgather_coalesced",
        " does not support allreduce_coalesced",
        " does not support alltoall_base",
        # Backend.hpp's default alltoall, which gloo does not override (dist.all_to_all over gloo); not the bare
        # words, which DTensor's warning on a CPU mesh shares ("CPU process group does not support alltoall yet,
        # falling back with allgather + chunk!", _collective_utils.py: it carries on)
        "Backend gloo does not support alltoall",
        "ProcessGroupMPI does not support alltoall",
        " does not support monitoredBarrier",
        "monitored_barrier is only implemented for GLOO backend",
        " does not support broadcast",
        " does not support allreduce",
        " does not support reduce",
        " does not support allgather",
        " does not support gather",
        " does not support scatter",
        " does not support send",
        " does not support recv",
        " does not support barrier",
        "ProcessGroupNCCL does not support ",
        "with non-integral dtype",
        "Cannot use ReduceOp.PREMUL_SUM with Gloo",
        "ReduceOp.BAND with NCCL",
        "ReduceOp.BOR with NCCL",
        "ReduceOp.BXOR with NCCL",
        "AVG requires NCCL 2.10+",
        "allreduce of sparse tensors only works with ReduceOp.SUM",
        "on complex tensors",
        "tensors must all have the same type",
        "tensors must all be on the same device",
        "input and output tensors must ",
        "output tensor and input tensor must be on the same type of device",
        "requires input/output tensor lists to have the same length",
        "requires empty output on non-root",
        "requires empty input on non-root",
        "reduce_scatter only supports 1 output",
        "tensors in the nested tensor vectors need to",
        "Invalid usage of tensors with different dtypes",
        "output tensor must have the same type as input tensor",
        "to self without a matching ",
        "FP8 reduction support begins with sm90 capable devices",
        "invalid root rank: ",
        "(root should be in the 0..",
    ),
    # "Invalid function argument" only as _check_single_tensor / _check_tensor_list word it (torch 1.x: "to be
    # of type torch.Tensor."), with the type it got on its second line
    match=R(
        r"(?P<not_a_tensor>Invalid function argument\. Expected parameter `\w{1,60}` (?:to be )?of type "
        r"(?:torch\.Tensor|List\[torch\.Tensor\])[^\n]{0,20}(?:\n\s{0,40}but got [^\n]{1,120})?|Invalid function "
        r"argument: output_tensor_lists should be a list)|"
        r"(?P<root_list>Argument ``?(?:gather_list|scatter_list|dst_tensor)``? must (?:NOT )?be specified on (?:non-)?"
        r"(?:destination|source) ranks?|Must provide object_gather_list on dst rank)|"
        r"(?P<split_sizes>Tensor's dim 0 does not divide equally across group size|Split sizes doesn't match "
        r"total dim 0 size|Number of tensor splits not equal to group size)|"
        r"(?P<list_size>invalid input tensor list size, must be world size|output lists should be equal to world "
        r"size|invalid output tensor list at index \d+[^\n]{0,120}|invalid output size: \(expected length \d+, got "
        r"\d+\)|invalid size of output tensor at index \d+[^\n]{0,120}|invalid tensor size at index \d+ \(expected "
        r"[^\n]{1,160}|Check failed: outputShape\[0\] \* worldSize "
        r"== inputShape\[0\][^\n]{0,80}|input tensor must be the same size as output size times world size|output "
        r"tensor size must be equal to world_size times input tensor size)|"
        r"(?P<backend_lacks_op>(?:Backend \w{1,20}|ProcessGroup(?:NCCL|MPI)) does not support (?:_allgather_base|_reduce_scatter_base|"
        r"allgather_into_tensor_coalesced|reduce_scatter_tensor_coalesced|reduce_scatter|allgather_coalesced|"
        r"allreduce_coalesced|alltoall_base|monitoredBarrier|broadcast|allreduce(?: sparse)?|reduce|allgather|gather|"
        r"scatter|alltoall|send|recv(?:Anysource)?|barrier)\b[^\n]{0,60}|monitored_barrier is only implemented for "
        r"GLOO backend|ProcessGroupNCCL does not support (?:gather|scatter|allgather_coalesced|recvAnysource)\b)|"
        r"(?P<reduce_op>Cannot use ReduceOp\.(?:BAND|BOR|BXOR) with (?:non-integral dtype|NCCL)|AVG requires "
        r"NCCL 2\.10\+\. The current version is \d+\.\d+|Cannot use "
        r"ReduceOp\.(?:PREMUL_SUM|AVG) with Gloo|unsupported reduction operation \(allreduce of sparse tensors only "
        r"works with ReduceOp\.SUM\)|all_reduce does not support ?[\w.]{1,40} ?on complex tensors|FP8 reduction "
        r"support begins with sm90 capable devices)|"
        r"(?P<tensor_mismatch>ProcessGroupGloo::\w{1,40}: (?:tensors must all (?:have the same type|be on the same "
        r"device)|input and output tensors must (?:have the same (?:type|size)|be on the same device)|output "
        r"tensor and input tensor must be on the same type of device|requires input/output tensor lists to have "
        r"the same length|requires empty (?:output|input) on non-root|reduce_scatter only supports 1 output)"
        r"[^\n]{0,80}|invalid tensor (?:type|layout) at index \d+ \(expected [^\n]{1,200}|"
        r"tensors in the nested tensor vectors need to be on the same device|Invalid usage of tensors "
        r"with different dtypes ?Found [^\n]{1,80})|"
        # ProcessGroupNCCL::_allgather_base (XCCL's and Ascend's HCCL's too); on a line that names DeepSpeed or ZeRO
        # it is ZeRO-3's own gather of mixed dtypes (kinds/post_training_releases.py)
        r"(?P<output_dtype>(?<![^\n])(?![^\n]*(?:"
        + post_training_releases.ZERO_WORDS
        + r"))[^\n]{0,200}?output "
        r"tensor must have the same type as input tensor)|"
        r"(?P<root_rank>(?:ProcessGroup\w{1,10}::\w{1,40}: )?invalid root rank: -?\d{1,9}|"
        r"(?:\w{1,40} : )?invalid root -?\d{1,9} \(root should be in the 0\.\.\d{1,9} range\))|"
        r"(?P<not_in_group>(?:Global|Group) rank \d+ is not part of group [^\n]{1,160})|"
        r"(?P<self_peer>Invalid (?:destination|source) rank: (?:destination|source) rank should not be the "
        r"same as the rank of the current process|Trying to (?:send|recv) to self without a matching (?:recv|send))"
    ),
    span=1,
    # torch/distributed/tensor/_collective_utils.py shard_dim_alltoall: a DTensor redistribute on a CPU mesh warns
    # once that gloo has no alltoall and does an allgather + chunk instead, and carries on: no call was refused
    reject=R(r"CPU process group does not support alltoall yet, falling back"),
    # every message names its own cause ("Invalid usage" of dtypes is the check's word, not NCCL's invalid usage):
    # certain whenever the match read which check refused the call
    confirm=refused(_CLASSES),
    # the messages are short (the match bounds them): never cut
    describe=describe_refusal(_CLASSES, "a collective was called with arguments torch refuses", limit=400),
)


def _unpicklable_object(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    what = (first(hits, "what") or "an object cannot be pickled").strip()
    return (
        f"an object collective (all_gather_object, broadcast_object_list, ...) was given an object that cannot "
        f"be pickled: {what[:160]}" + on_ranks(hits),
        "The *_object collectives pickle each rank's object to send it: give them plain data (numbers, strings, "
        "lists and dicts of them, tensors), not a lambda, a function or class defined inside another function, "
        "an open file, a lock, a logger or writer (wandb, TensorBoard), or a model. Gather the values you need, "
        "e.g. dist.all_gather_object(out, {'loss': loss.item(), 'n': n}); move a function it must carry to "
        "module level. Tensors of one shape are gathered faster with dist.all_gather.",
    )


OBJECT_COLLECTIVE_PICKLING = Recogniser(
    # CPython's pickler ("Can't pickle local object '...'", Modules/_pickle.c; "cannot pickle '_thread.lock'
    # object", Objects/typeobject.c) raised in torch/distributed/distributed_c10d.py _object_to_tensor, which
    # all_gather_object, gather_object, broadcast_object_list, scatter_object_list and send_object_list call
    kind="object_collective_pickling",
    title="an object collective given an object that cannot be pickled",
    anchors=("Can't pickle", "can't pickle", "cannot pickle '", "cannot be pickled"),
    templates=(
        "system:pickle-cannot-pickle",
        "system:object-cannot-pickle",
        "system:ctypes-cannot-be-pickled",
    ),
    facts=(
        R(
            r"(?P<what>(?:[Cc]an't pickle [^\n]{1,160}|cannot pickle '[^\n]{1,120}|[\w ]{0,60}cannot be pickled))"
        ),
    ),
    # a pickling error is the object collective's only where its frames are in the log; the spawn reading
    # (what mp.spawn or a DataLoader worker is handed) is the same message printed elsewhere
    requires=("saw_object_collective",),
    absorbs=("spawn_pickling",),
    describe=_unpicklable_object,
)

# a collective called in the log, wherever it says so: a traceback's frame or a line naming the call
CONTEXT: tuple[tuple[str, Pattern], ...] = tuple(
    (
        literal,
        R(
            r"(?P<saw_collective_call>\b(?:all_reduce|allreduce|all_gather|broadcast|reduce_scatter|all_to_all)\b|ProcessGroupMPI)"
        ),
    )
    for literal in (
        "all_reduce",
        "allreduce",
        "all_gather",
        "broadcast",
        "reduce_scatter",
        "all_to_all",
        "ProcessGroupMPI",
    )
)


def _mpi_dtype(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    dtype = first(hits, "mpi_dtype")
    return (
        "a collective over the MPI backend was given a tensor whose dtype the backend has no MPI datatype for "
        "(IndexError: map::at, from ProcessGroupMPI's table of dtypes)"
        + (f": {dtype}" if dtype else "")
        + on_ranks(hits),
        "torch's MPI backend maps only uint8, int8, int16, int32, int64, float32 and float64 to MPI datatypes, so "
        "bfloat16, float16 and bool tensors stop it: cast around the collective (t32 = t.float(); "
        "dist.all_reduce(t32); t.copy_(t32)), keep the model and its gradients in float32 when they go through "
        "MPI, or run those collectives on the NCCL backend (a cpu:gloo,cuda:nccl group for mixed devices).",
    )


COLLECTIVE_DTYPE_UNSUPPORTED = Recogniser(
    # torch/csrc/distributed/c10d/ProcessGroupMPI.cpp: mpiDatatype.at(tensor.scalar_type()) over a std::map of
    # kByte, kChar, kShort, kInt, kLong, kFloat and kDouble; another dtype throws std::out_of_range("map::at"),
    # which pybind11 raises as IndexError. map::at is any C++ map's lookup, so only beside a collective in the
    # log, and only likely
    kind="collective_dtype_unsupported",
    title="a collective given a dtype its backend does not carry",
    anchors=("map::at",),
    templates=("torch_native:processgroupmpi-datatype-map-at",),
    generic=("map::at",),
    match=R(r"(?:IndexError: )?map::at"),
    facts=(R(r"(?P<mpi_dtype>\b(?:bfloat16|float16|half|bool|complex(?:64|128)?)\b)"),),
    span=1,
    requires=("saw_collective_call",),
    describe=_mpi_dtype,
)

RECOGNISERS = (COLLECTIVE_ARGUMENTS, OBJECT_COLLECTIVE_PICKLING, COLLECTIVE_DTYPE_UNSUPPORTED)
