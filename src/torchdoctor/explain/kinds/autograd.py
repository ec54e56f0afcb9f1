"""Autograd's in-place check failing on a BatchNorm's statistics under DDP.

Autograd refuses to differentiate through a tensor that changed after the forward saved it
(``torch/csrc/autograd/saved_variable.cpp``: "one of the variables needed for gradient computation has been
modified by an inplace operation: [<type> [<shape>]] is at version N; expected version M instead"). Under
DistributedDataParallel a one-dimensional tensor there is, most often, a BatchNorm buffer: DDP copies rank 0's
buffers into every rank's model in place at the start of each forward (``broadcast_buffers=True``,
``torch/nn/parallel/distributed.py``), and cuDNN's batch norm saves the running statistics for its backward,
so a second forward before the backward (an adversarial or consistency loss, two views of a batch) changes what
the first one saved. The same message comes from an in-place operation in the model's own code, so this is
only ever likely, and needs DDP or a BatchNorm backward in the log to be said at all.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the message wraps in some consoles: the shape is read from the line and the ones after it
_SAVED = R(
    r"modified by\s+an\s+inplace\s+operation:\s+\[(?P<tensor>[\w.]{1,60})\s+\[(?P<shape>\d{1,9})\]\]"
    r"(?:\s*,\s*which is output \d+ of (?P<producer>\w{1,60}),)?\s+is\s+at\s+version\s+(?P<version>\d{1,9})"
)
# where the buffers come from: DDP in the traceback or the log, a batch norm in the backward that failed
_UNDER_DDP = R(r"(?P<ddp>DistributedDataParallel|torch[/\\]nn[/\\]parallel[/\\]distributed\.py)")
_BATCH_NORM = R(r"Error detected in (?P<bn_backward>\w{0,40}BatchNorm\w{0,40}Backward\w{0,8})")

INPLACE_ALTERNATIVE = Alternative(
    "inplace_modification",
    "an in-place operation in the model's own code",
    "Turn on torch.autograd.set_detect_anomaly(True): the warning before the error names the forward line whose "
    "saved tensor changed; replace the in-place operation there (x += y -> x = x + y, relu(inplace=True) -> "
    "relu(), an indexed assignment -> torch.where / a clone).",
)


def _bn_buffers(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    shape, version = first(hits, "shape", "?"), first(hits, "version", "?")
    backward = ctx.facts.get("bn_backward")
    saw = f", in {backward}" if backward else ""
    summary = (
        f"autograd: a 1-D tensor of {shape} values saved by the forward was changed in place before the "
        f"backward (now at version {version}{saw}): under DDP, a BatchNorm's statistics broadcast again by a "
        "second forward" + on_ranks(hits)
    )
    fix = (
        "DistributedDataParallel copies rank 0's buffers (BatchNorm's running mean and variance) into every "
        "rank's model at the start of each forward, in place; a second forward before the backward changes what "
        "the first one saved. Either DistributedDataParallel(model, ..., broadcast_buffers=False), or convert the "
        "BatchNorm layers (model = nn.SyncBatchNorm.convert_sync_batchnorm(model) before wrapping it), or run the "
        "forwards of one step as one batch (torch.cat) before a single backward."
    )
    return summary, fix


DDP_BUFFER_INPLACE = Recogniser(
    kind="ddp_buffer_inplace",
    templates=("torch_native:saved-variable-modified-by-inplace",),
    title="DDP's buffer broadcast changing a saved BatchNorm statistic",
    anchors=("one of the variables needed for gradient computation has been modified by",),
    match=_SAVED,
    span=3,
    # never certain: the in-place operation may be the model's own; said only with DDP or a batch norm seen
    confirm=lambda hits, ctx: False,
    requires=("ddp", "bn_backward"),
    also=(INPLACE_ALTERNATIVE,),
    absorbs=("inplace_modification",),  # with DDP in the log, this reading leads and names the other
    describe=_bn_buffers,
)

RECOGNISERS = (DDP_BUFFER_INPLACE,)
# the log's facts `requires` looks for, wherever they are (the traceback, anomaly mode's warning)
CONTEXT = (
    ("DistributedDataParallel", _UNDER_DDP),
    ("distributed.py", _UNDER_DDP),
    ("Error detected in", _BATCH_NORM),
)
