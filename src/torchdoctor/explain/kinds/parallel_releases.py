"""Parallelism libraries whose own release fails a run, read by versions.py as a release's bug.

DeepSpeed's pipeline engine (``deepspeed/runtime/pipe/engine.py`` ``_exec_reduce_tied_grads``) all-reduced the
gradient of every tied weight (a ``TiedLayerSpec``'s, such as an embedding the first and the last stage share)
without looking at it: a tied weight that does not train (a PEFT LoRA model whose target modules leave the
embedding out freezes it) has no gradient, and torch refuses None ("Invalid function argument. Expected parameter
`tensor` to be of type torch.Tensor.", ``distributed_c10d.py`` ``_check_single_tensor``). DeepSpeed 0.15.4 skips a
tied weight without a gradient (deepspeedai/DeepSpeed#5477). Read where a traceback ends at that call with no line
after it (a log cut there): likely, since any error of that all_reduce passes the same frame, and an error line
after it is read from its own message.

A vocabulary-parallel embedding built on its shard with the model's global ``padding_idx``: torch's
``nn.Embedding`` (``torch/nn/modules/sparse.py``) and ``F.embedding`` refuse a padding_idx outside the table
("Padding_idx must be within num_embeddings"), and a shard has the vocabulary's rows divided by the
tensor-parallel degree. torchtitan's Hugging Face backend did so until #4637 (2026-09), which maps padding_idx to
the shard that holds it. Read where the line that prints the refusal also names the vocabulary-parallel shard
or the tensor-parallel degree; the same refusal with no shard on its line is a padding_idx past the vocabulary
(``vocab_size_mismatch``, index_ranges.py).

A process-group backend written in Python (a ``torch.distributed.ProcessGroup`` subclass registered with
``dist.Backend.register_backend``) is called by torch's c10d with the collective's options object as its last
argument (``group.allgather(outputs, inputs, opts)``, ``allreduce(tensors, opts)``, ...): a backend release written
for an older torch whose method does not take it fails with CPython's "allgather() takes 3 positional arguments
but 4 were given" (``Python/ceval.c``). torch_xla's ``ProcessGroupXla`` (``torch_xla/distributed/xla_backend.py``)
defined ``allgather(self, output_tensors_list, input_tensors)`` until pytorch/xla#3952 (2022-08) added ``opts``,
so DistributedDataParallel's initialisation on the xla backend failed. Read for the collective method names of
c10d's ProcessGroup (which a script's own functions rarely carry), with more arguments given than taken.

DTensor's own methods (``to_local``, ``full_tensor``, ``redistribute``; ``torch/distributed/tensor/_api.py``) called
on a plain tensor: CPython's "'Tensor' object has no attribute 'to_local'" (``Objects/object.c``). Code that calls
them expects the parameters and their optimizer state to be DTensors (an FSDP2 / tensor-parallel model), and a
library release made them plain on the way: TransformerEngine's FusedAdam kept its optimizer state as plain tensors
beside DTensor parameters from #2698 until #2795 (2026-03), so Megatron-FSDP's DCP checkpointing, which calls
to_local() on that state, failed at save. Likely: the same words come from a script's own model that was never
sharded (fully_shard or parallelize_module not applied to that module), which the line does not tell apart.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Hit, Pattern, first, on_ranks

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TIED_GRADS_FRAME = ", in _exec_reduce_tied_grads"
# torch prints "Padding_idx" (sparse.py, functional.py, the C++ API); copies of nn.Embedding in parallel
# libraries (vocabulary-parallel embeddings) print it in lower case
PADDING_IDX = "adding_idx must be within num_embedding"
# the collectives of c10d's ProcessGroup that torch calls with an options object (torch/distributed/
# distributed_c10d.py); broadcast, barrier, gather, scatter, send and recv are left out, names a script's own
# functions carry too
PG_COLLECTIVES = (
    "allgather",
    "allreduce",
    "allgather_coalesced",
    "allreduce_coalesced",
    "_allgather_base",
    "_reduce_scatter_base",
    "reduce_scatter",
    "alltoall_base",
    "allgather_into_tensor_coalesced",
    "reduce_scatter_tensor_coalesced",
)
# DTensor's methods a plain tensor lacks (a script's own typo rarely carries these names)
DTENSOR_METHODS = ("to_local", "full_tensor", "redistribute")
ANCHORS = (
    TIED_GRADS_FRAME,
    PADDING_IDX,
    *(f"{name}() takes " for name in PG_COLLECTIVES),
    *(f"Tensor' object has no attribute '{name}'" for name in DTENSOR_METHODS),
    *(f"Parameter' object has no attribute '{name}'" for name in DTENSOR_METHODS),
)
TEMPLATES = (
    "third_party:deepspeed-pipe-reduce-tied-grads-frame",
    "torch:padding-idx-must-be-within-num-embeddings",
    "third_party:torch-xla-process-group-allgather-without-opts",
    "system:tensor-lacks-dtensor-method",
)
# words on the refusal's own line that say the embedding is a shard of the vocabulary
SHARD_WORDS = r"VocabParallel|[Vv]ocab(?:ulary)?[-_ ][Pp]arallel|\bshards?\b|[Tt]ensor[-_ ][Pp]arallel|\bTP\s?=\s?\d|\btp_size\b"
_PADDING = r"[Pp]adding_idx must be within num_embeddings?"
REFUSED = R(
    # the frame and its code line with nothing after them: the traceback cut at that call (versions.py reads
    # LIBRARY_RELEASE_BUG's anchored line with the next two)
    r'deepspeed/runtime/pipe/engine\.py", line \d+, in (?P<ds_tied_grads>_exec_reduce_tied_grads)\n'
    r"[ \t]*dist\.all_reduce\(grad, group=group\)\s*\Z|"
    rf"(?:{SHARD_WORDS})[^\n]{{0,400}}?(?P<sharded_padding>{_PADDING})|"
    rf"(?P<sharded_padding_before>{_PADDING})[^\n]{{0,400}}?(?:{SHARD_WORDS})|"
    # a Python process-group backend's collective without the options argument torch passes
    rf"(?<![\w.])(?P<pg_method>{'|'.join(PG_COLLECTIVES)})\(\) takes (?:from \d to )?(?P<pg_takes>\d) positional "
    r"arguments? but (?P<pg_given>\d) were given|"
    rf"'(?:Tensor|Parameter)' object has no attribute '(?P<plain_not_dtensor>{'|'.join(DTENSOR_METHODS)})'"
)
FACTS = ("ds_tied_grads", "sharded_padding", "sharded_padding_before", "pg_method", "plain_not_dtensor")


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for the release bug among ``hits`` (the named groups of `REFUSED`)."""
    dtensor_method = first(hits, "plain_not_dtensor")
    if dtensor_method:
        return (
            f"{dtensor_method}() was called on a plain tensor: the code expected a DTensor (a parameter of an FSDP2 "
            "or tensor-parallel model, or its optimizer state) and got an ordinary torch.Tensor: a library release "
            "that turns that state into plain tensors, or a module that was never sharded" + on_ranks(hits),
            f"DTensor has {dtensor_method}(), a plain tensor does not. Where the frames are a library's (a "
            "checkpoint or optimizer helper), the library that made the tensor plain is a release that does not keep "
            "DTensor state: upgrade it (pip install -U <package>; TransformerEngine's FusedAdam kept its state as "
            "plain tensors beside DTensor parameters until NVIDIA/TransformerEngine#2795), or use torch's own "
            "optimizer for the sharded parameters. Where the call is your code's, print type(t) there: the module "
            "the tensor belongs to was not sharded (apply fully_shard / parallelize_module to it before building "
            "the optimizer), or guard the call: t.to_local() if isinstance(t, DTensor) else t.",
        )
    method = first(hits, "pg_method")
    if method:  # CPython prints this TypeError only for more arguments than the parameters take
        takes, given = first(hits, "pg_takes"), first(hits, "pg_given")
        return (
            f"a process-group backend's {method}() takes {takes} positional arguments (self included) but torch "
            f"called it with {given}: the backend was written for an older torch, whose c10d did not pass "
            "the collective's options object" + on_ranks(hits),
            f"torch's c10d calls a backend's collectives with an options object last (group.{method}(..., opts)); "
            f"this backend's {method}() does not take it, so it is a release made for an older torch. Upgrade the "
            "backend to the release built for the torch installed: torch_xla's version follows torch's (pip show torch "
            "torch_xla; pip install torch_xla==<torch's version>), and torch_xla's ProcessGroupXla.allgather takes "
            "opts since pytorch/xla#3952 (torch_xla 1.13); another backend (a vendor's ProcessGroup plugin, "
            "oneCCL's bindings) the same way. In a ProcessGroup subclass of your own, take opts=None in every "
            "collective.",
        )
    if first(hits, "ds_tied_grads"):
        return (
            "the pipeline step failed in DeepSpeed's all_reduce of the tied layers' gradients "
            "(PipelineEngine._exec_reduce_tied_grads): the traceback ends there and its error is not in the log"
            + on_ranks(hits),
            "Before 0.15.4 DeepSpeed's pipeline engine all-reduces the gradient of every tied weight without "
            "checking it, and a tied weight that does not train has none: a frozen embedding shared by the first "
            "and last stage (TiedLayerSpec), as in a PEFT LoRA model whose target_modules leave it out, gives "
            'None, which torch refuses ("Invalid function argument. Expected parameter `tensor` to be of type '
            "torch.Tensor.\"). Upgrade DeepSpeed (pip install -U 'deepspeed>=0.15.4', which skips a tied weight "
            "without a gradient: deepspeedai/DeepSpeed#5477), or tie only weights that train. If the error line "
            "after the traceback is an NCCL error or a timeout instead, that collective failed and the line says "
            "why.",
        )
    return (
        "an embedding built on one rank's shard of the vocabulary was given the model's global padding_idx, which "
        "the shard's smaller table does not hold (torch's nn.Embedding / F.embedding refuse it)"
        + on_ranks(hits),
        "A vocabulary-parallel embedding holds vocab_size / TP rows per rank, so the pad token's id is a row of one "
        "shard only, at padding_idx minus that shard's first row: the library that built the shard must pass that "
        "local index on its owner and None on the others. Upgrade the library whose vocabulary-parallel embedding "
        "does this (torchtitan's Hugging Face backend maps padding_idx to the owning shard since pytorch/torchtitan"
        "#4637); until then build the model's embedding without padding_idx, or train without tensor parallelism "
        "on the embedding.",
    )
