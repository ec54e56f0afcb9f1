"""CUDA tensors a GPU worker sent back to a process without CUDA, refused when that process unpickles them.

torch pickles a tensor's storage by saving it into bytes (``torch/storage.py``: ``__reduce__`` calls ``torch.save``,
``_load_from_bytes`` calls ``torch.load``), so the process that receives a pickled CUDA tensor restores it on the
device it was saved from; where that process has no CUDA, ``torch/serialization.py``'s ``validate_cuda_device``
raises "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running
on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') ...". The message names
torch.load, and ``checkpoint.py`` reads it as a checkpoint loaded without ``map_location``. When the log shows the
object came back from another process instead, the fix is the sender's: a Ray actor's return value unpickled by
Ray Train's ``BackendExecutor`` (its line prefixed ``(BackendExecutor pid=...)``, a CPU-only head node's driver:
ludwig-ai/ludwig#1691), Ray's own deserializer (``ray/_private/serialization.py``, ``ray/serialization.py`` in early releases), a ``ray.get(`` call in the
traceback, or CPython's ``multiprocessing`` queue or pipe unpickling what it received (``multiprocessing/queues.py``
``get``, ``multiprocessing/connection.py`` ``recv``). Likely: the message is the same for a receiver meant to have a
GPU where torch sees none, which is named beside it.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# where the log shows the object was unpickled as another process's result: (literal, pattern) of the whole log
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("(BackendExecutor pid=", re.compile(r"(?P<remote_return>\(BackendExecutor pid=[\w]{1,20}\))")),
    # ray/serialization.py in older releases, ray/_private/serialization.py since
    ("/serialization.py", re.compile(r"(?P<remote_return>\bray/(?:_private/)?serialization\.py)")),
    (
        "ray.get(",
        re.compile(r"^\s{1,40}(?:[\w.\[\]]{1,80}\s*=\s*)?(?P<remote_return>ray\.get\()", re.MULTILINE),
    ),
    (
        "multiprocessing/",
        re.compile(
            r"(?P<remote_return>multiprocessing/(?:queues\.py\", line \d+, in get|connection\.py\", line \d+, in "
            r"recv)\b)"
        ),
    ),
)


def _sent_back(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    where = str(ctx.facts.get("remote_return", ""))
    if "BackendExecutor" in where:
        receiver = "Ray Train's BackendExecutor (the driver side, on the head node)"
    elif where.startswith("ray"):
        receiver = "the process that called ray.get"
    elif where.startswith("multiprocessing"):
        receiver = "the process that read the multiprocessing queue or pipe"
    else:
        receiver = "the receiving process"
    return (
        f"CUDA tensors came back from a GPU worker to {receiver}, which has no CUDA: unpickling a tensor restores "
        "it on the device it was saved from, so the torch.load in the message is the unpickling of the result, "
        "not a checkpoint" + on_ranks(hits),
        "Move what the worker returns to the CPU before it returns it (or puts it on a queue): tensor.cpu(), a "
        "state_dict as {k: v.cpu() for k, v in model.state_dict().items()}, a model as model.cpu(), and every "
        "tensor inside dicts or lists of metrics or predictions; map_location cannot be passed to ray.get or a "
        "queue. Or give the receiving process a GPU (a driver or head node with CUDA).",
    )


CUDA_TENSOR_TO_CPU_PROCESS = Recogniser(
    kind="cuda_tensor_to_cpu_process",
    title="CUDA tensors returned to a process without CUDA",
    anchors=("Attempting to deserialize object on",),
    templates=("torch:attempting-to-deserialize-object-on-device",),
    match=R(r"deserialize object on (?:a )?CUDA device but torch\.cuda\.is_available\(\) is False"),
    # only where the log shows the object was another process's result, not a file torch.load read
    requires=("remote_return",),
    absorbs=("checkpoint_device_map",),
    # the receiver may be one meant to run on its GPU where torch sees none: the same words
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "cuda_unavailable",
            "a receiving process meant to have a GPU where this torch sees none (a CPU-only torch, a container "
            "without its GPUs, no driver loaded)",
            "Check python -c 'import torch; print(torch.__version__, torch.version.cuda, "
            "torch.cuda.is_available())' where the result is received: a version without +cuXXX is a CPU-only "
            "build; `nvidia-smi` must list the GPUs there.",
        ),
    ),
    describe=_sent_back,
)

RECOGNISERS = (CUDA_TENSOR_TO_CPU_PROCESS,)
