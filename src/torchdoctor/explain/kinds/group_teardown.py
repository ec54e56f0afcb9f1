"""A distributed call made after this process destroyed its process group.

torch's "Default process group has not been initialized" (``torch/distributed/distributed_c10d.py``
``_get_default_group``) says no default group exists now, not that none ever did. ``init_process_group`` installs
an excepthook that prefixes every line of an uncaught traceback with ``[rank<N>]:`` (torch 2.x; it stays after
``destroy_process_group``): the message under that prefix was raised in a process that had made its group, so
it was destroyed before the call (``destroy_process_group`` on one rank only, in a branch, or before the last
barrier or evaluation), not a script started without a launcher (``not_launched_distributed``). A spawned
DataLoader worker's call is re-raised in the main process under the same prefix: named beside it.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _destroyed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a distributed call ran after this process had destroyed its process group: the traceback carries the "
        "[rank N]: prefix init_process_group installs, so the group was made, then gone (destroy_process_group "
        "called before this call)" + on_ranks(hits),
        "Call destroy_process_group() once, on every rank, after the last collective: not inside an "
        "`if rank == 0:` branch, not in a function that runs before evaluation, a final barrier or a save that "
        "still calls dist.* (a train() called per fold or per stage that ends with it). For example:\n"
        "    train(); evaluate(); dist.barrier()\n"
        "    dist.destroy_process_group()   # the last line of main(), on every rank\n"
        "If a later stage needs the group again, call init_process_group() again before it.",
    )


GROUP_DESTROYED = Recogniser(
    # torch/distributed/distributed_c10d.py _get_default_group's ValueError, under the excepthook's prefix
    # (distributed_c10d.py init_process_group: excepthook_prefix = f"[rank{get_rank()}]")
    kind="process_group_destroyed",
    title="a distributed call after destroy_process_group",
    anchors=("Default process group has not been initialized", "Default process group is not initialized"),
    templates=("torch:default-process-group-has-not-been",),
    # the prefix on the message's own line: a traceback printed by the hook of a process that had its group
    prefixed=True,
    absorbs=("not_launched_distributed",),
    # the prefix shows a group was made in this process; a DataLoader worker started by spawn has none of its own
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "not_launched_distributed",
            "a DataLoader worker (started by spawn) calling torch.distributed: the worker has no process group",
            "Keep dist.* calls out of the Dataset's __getitem__ and collate_fn (read the rank once in the main "
            "process and pass it to the Dataset), or start the workers by fork: "
            "DataLoader(..., multiprocessing_context='fork').",
            when=("saw_dataloader_worker",),
        ),
    ),
    describe=_destroyed,
)

RECOGNISERS = (GROUP_DESTROYED,)
