"""Hugging Face datasets' ``map(num_proc=N)`` losing one of its worker processes without a word from it.

``datasets/utils/py_utils.py`` (``iflatmap_unordered``, datasets 2.14-5.x) watches the pool's process ids while
``Dataset.map`` / ``filter`` run with ``num_proc`` > 1, and when one changes raises "One of the subprocesses has
abruptly died during map operation.To debug the error, disable multiprocessing.": a worker ended without raising
(an error it raised would be re-raised instead). The message does not say why; datasets discards the exit status.
Most often the kernel's out-of-memory killer took it (every worker holds its own shard of rows, the map function's
model or tokenizer, and what it builds: the trainers' ``dataset_num_proc`` / ``preprocessing_num_workers``, one per
CPU, on a large dataset); else a crash in native code inside the map function (a tokenizer, an image or audio
decoder) or, on Windows and macOS, a worker that could not start (spawn re-imports the script). Always likely: the
out-of-memory reading first, the crash named beside it.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, on_ranks

FAMILY = "data loading"


def _died(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a worker process of datasets' map(num_proc=...) died without raising an error: most often the "
        "out-of-memory killer (host RAM) ended it" + on_ranks(hits),
        "Each map worker holds its shard of rows, its copy of the map function's tokenizer or model, and the rows "
        "it builds until it writes them. Use fewer processes (num_proc=4, or the trainer's dataset_num_proc / "
        "preprocessing_num_workers), smaller writes (map(..., writer_batch_size=100), a smaller batch_size for a "
        "batched map), and check the kernel's log for the kill: dmesg -T | grep -i -E 'killed process|oom'. Run "
        "the map once with num_proc=None to see an error the function raises.",
    )


MAP_PROCESS_DIED = Recogniser(
    kind="map_process_died",
    title="a worker of datasets' map(num_proc=...) killed or crashed",
    templates=("datasets:one-of-the-subprocesses-has-abruptly",),
    anchors=("One of the subprocesses has abruptly died during map operation",),
    # the message says a worker died, not why: likely, with the other readings named
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "worker_crash",
            "a crash in native code the map function runs (a tokenizer, an image or audio decoder) in a worker",
            "Run the map with num_proc=None (one process): a crash there shows its stack; with "
            "PYTHONFAULTHANDLER=1 a segmentation fault prints the Python line it happened on.",
        ),
        Alternative(
            "spawn_main_guard",
            "on Windows or macOS, workers started by spawn that re-import the script and fail before mapping",
            "Put the script's top-level code under if __name__ == '__main__': and keep the map function at module "
            "level (not a lambda or a nested function), or use num_proc=None there.",
        ),
    ),
    describe=_died,
)

RECOGNISERS = (MAP_PROCESS_DIED,)
