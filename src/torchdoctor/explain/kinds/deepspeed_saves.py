"""DeepSpeed's saves that every rank must call, seen waiting inside the collective only some ranks reached.

``deepspeed/runtime/engine.py``: ``save_checkpoint`` first checks that every rank saves under the same tag
(``_checkpoint_tag_validation``: two ``dist.all_reduce`` of the tag's hash, unless ``checkpoint.tag_validation`` is
"Ignore"), and under ZeRO-3 ``save_16bit_model`` gathers the partitioned weights
(``_zero3_consolidated_16bit_state_dict``, a gather per parameter). Both docstrings say so: "Important: all processes
must call this method and not just the process with rank 0". A stack dump (faulthandler, py-spy) of a hung run
standing in either frame (not an exception's traceback through it, whose own error line says what failed) is a rank waiting for ranks that never called the save: a save guarded by ``if rank == 0``
(the transformers Trainer did it before deepspeedai/DeepSpeed#801 documented the rule, 2021-02), or ranks that
left the loop at different steps. Likely: a rank can stand there for a moment on a healthy save, and a collective
that fails there prints its own error (read from that line). Read by ranks.py's ``rank_divergence``.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Hit, Pattern, first, on_ranks

FAMILY = "a library refusing its settings"

# the frames as a dump names them (" in <function>", py-spy's "<function> (<file>:<line>)"), not the bare names
ANCHORS = (
    " in _checkpoint_tag_validation",
    " in _zero3_consolidated_16bit_state_dict",
    "_checkpoint_tag_validation (",
    "_zero3_consolidated_16bit_state_dict (",
)
TEMPLATES = (
    "third_party:deepspeed-save-checkpoint-tag-validation-frame",
    "third_party:deepspeed-save-16bit-model-consolidated-frame",
)
# the frame as a dump of a waiting thread prints it: faulthandler's 'File "...engine.py", line 1456 in ...' (no
# comma before "in") or py-spy's '_checkpoint_tag_validation (deepspeed/runtime/engine.py:1456)'
WAITING = Pattern(
    r"engine\.py\"?,? line \d+ in (?P<ds_save_wait>_checkpoint_tag_validation|_zero3_consolidated_16bit_state_dict)"
    r"|^\s*(?P<ds_save_wait_spy>_checkpoint_tag_validation|_zero3_consolidated_16bit_state_dict) \([^)\n]{0,300}"
    r"engine\.py:\d+\)"
)
_FRAMES = r"(?:_checkpoint_tag_validation|_zero3_consolidated_16bit_state_dict)"
# a line naming either function that is not such a dump's frame: an exception's traceback through it (", in", its
# source line "self._checkpoint_tag_validation(tag)"), whose own error line says what failed (an NCCL error, a
# timeout), or prose: not read as a rank waiting
NOT_WAITING = Pattern(
    rf"^(?![^\n]*line \d+ in {_FRAMES})(?!\s*{_FRAMES} \([^)\n]{{0,300}}engine\.py:\d+\))[^\n]*{_FRAMES}"
)


def waiting(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for a rank standing in a DeepSpeed save's collective."""
    frame = first(hits, "ds_save_wait") or first(hits, "ds_save_wait_spy")
    save = "save_16bit_model" if frame == "_zero3_consolidated_16bit_state_dict" else "save_checkpoint"
    return (
        f"a rank waits inside DeepSpeed's {save} ({frame}), a collective every rank must join: the other ranks "
        f"did not call {save} (a save guarded by rank 0, or ranks that left the loop at different steps)"
        + on_ranks(hits),
        f"DeepSpeed's {save} is collective: call it on all processes, not only on rank 0 (engine.{save}(...) "
        "outside any `if rank == 0` / is_main_process guard; DeepSpeed writes rank 0's files itself and, under "
        "ZeRO, each rank's own shard). The same holds for the trainer's save that calls it (the HF Trainer's "
        "save_model, accelerator.save_state, Lightning's save_checkpoint). If every rank does call it, check that "
        "they reach it at the same step (the same number of batches on every rank) and with the same tag.",
    )
