"""A library whose threads do not survive fork(), used in DataLoader workers that Linux starts by forking.

A DataLoader's workers are forked from the training process (multiprocessing's default start method on Linux
before Python 3.14). Polars runs its queries on a Rust thread pool; the forked child inherits the pool's locks but
not its threads, so the worker's first query waits forever (a rank that never reaches the next collective). Polars
says so itself, in the words of its release:

- 1.14 to 1.17: a RuntimeWarning from the hook it registers with ``os.register_at_fork``
  (py-polars/polars/__init__.py ``__install_postfork_hook``, pola-rs/polars#19197, removed by #20309): "Using
  fork() can cause Polars to deadlock in the child process." (the catalog's
  third_party:polars-fork-can-deadlock-child);
- 1.32 on: a SchemaMismatch where categoricals made before the fork meet those made after it
  (crates/polars-dtype/src/categorical/mod.rs ``ensure_same_categories``, #23510): "Categories which should be
  equal have different backing objects. This is a known problem when combining Polars with multiprocessing using
  fork()." (third_party:polars-categories-different-backing-objects).

Without either line a stack dump (py-spy's ``collect (polars/lazyframe/frame.py:2407)``) of a run waiting on its
DataLoader shows a worker inside Polars. The warning is printed at every fork once Polars is imported, whether or
not a worker uses it, so none of this is certain: beside another failure the warning is only a likely second.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

WARNING = "Using fork() can cause Polars to deadlock in the child process"
# the SchemaMismatch's first line, which the exception line carries; its second names fork()
CATEGORIES = "Categories which should be equal have different backing objects"
# a frame of py-spy's dump (``function (path:line)``, the path below site-packages) inside Polars
STACK_FRAME = "(polars/"
# a DataLoader in the log: its workers, or the training process waiting for their batches
DATALOADER = re.compile(
    r"(?P<saw_torch_dataloader>torch[/\\]utils[/\\]data[/\\](?:dataloader|_utils[/\\]worker)\.py|"
    r"in DataLoader worker process|_worker_loop\b)"
)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("dataloader", DATALOADER),
    ("DataLoader worker", DATALOADER),
    ("_worker_loop", DATALOADER),
)


def _fork_unsafe(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    how = (
        "Polars warned that a fork can deadlock it"
        if first(hits, "polars_warning")
        else "Polars refused categoricals made on both sides of a fork"
        if first(hits, "polars_categories")
        else "a stack dump shows the DataLoader's worker inside a Polars query"
    )
    return (
        f"{how}: Polars used in DataLoader workers started with fork(), whose thread pool does not survive the "
        "fork (a worker that hangs in its first query, a rank that never reaches the next collective)"
        + on_ranks(hits),
        "Start the workers with spawn instead of fork: DataLoader(..., multiprocessing_context='spawn') (or "
        "'forkserver'; litdata's StreamingDataLoader takes the same argument), or "
        "torch.multiprocessing.set_start_method('spawn') before the loaders are made; the dataset must then be "
        "picklable. Or keep Polars out of the workers: read the Parquet files with pyarrow there, or load them in "
        "the main process before the workers start (num_workers=0 to confirm).",
    )


FORK_UNSAFE_LIBRARY = Recogniser(
    kind="fork_unsafe_library",
    title="Polars in DataLoader workers started with fork()",
    templates=(
        "third_party:polars-fork-can-deadlock-child",
        "third_party:polars-categories-different-backing-objects",
    ),
    anchors=(WARNING, CATEGORIES, STACK_FRAME),
    match=R(
        r"(?P<polars_warning>Using fork\(\) can cause Polars to deadlock)|"
        r"(?P<polars_categories>Categories which should be equal have different backing objects)|"
        r"^\s*\w{1,100} \(polars/[\w/]{1,200}\.py:\d{1,6}\)"
    ),
    facts=(
        R(r"(?P<polars_warning>Using fork\(\) can cause Polars to deadlock)"),
        R(r"(?P<polars_categories>Categories which should be equal have different backing objects)"),
    ),
    # a run that forks DataLoader workers: the warning in a run with no DataLoader is another program's
    requires=("saw_torch_dataloader",),
    confirm=lambda hits, ctx: False,  # printed at every fork once Polars is imported, used or not
    describe=_fork_unsafe,
)

RECOGNISERS = (FORK_UNSAFE_LIBRARY,)
