"""Where a rank waited for a peer that left: the user's call its collective was made from, read from its traceback.

A rank whose peer ended without an error (gloo's "Connection closed by peer" with no other rank failing) was
inside a collective the peer never joined. Its traceback names the user's line that made the collective, which
is where to look: what runs that line on some ranks only. Two calls hide their collective often enough to name:
gathering a full state dict (DTensor.full_tensor(), get_model_state_dict, FSDP's state_dict under
FullStateDictConfig), which a save under ``if rank == 0:`` makes on one rank only, and backward under DDP or
FSDP, which all-reduces the gradients (``no_sync()`` on some ranks only, a batch skipped on one rank).
"""

from __future__ import annotations

import re

from torchdoctor.explain import first_failure
from torchdoctor.explain.first_failure import Raised

FAMILY = "NCCL and collectives"

# the findings that are a rank waiting for its peer, where the waiting rank's own line says which collective
KINDS = ("peer_closed",)

# a call that gathers a full state dict across the ranks (every rank must make it)
_STATE_DICT = re.compile(
    r"\.full_tensor\(|\bget_(?:model|optimizer)_state_dict\(|\bget_state_dict\(|\bfull_optim_state_dict\(|"
    r"\boptim_state_dict\(|\.state_dict\(|\bsummon_full_params\(|"
    # Lightning's saves: written on rank 0 by themselves, then a barrier every rank must reach
    r"\bfabric\.save\(|\.save_checkpoint\("
)
# what to do where a rank waited in a state dict's gather or a checkpoint save its peer never made
STATE_DICT_ON_EVERY_RANK = (
    "Gathering a full state dict is a collective: every rank must make the call, and only the write goes under "
    "`if rank == 0:`. FSDP2: sharded_param.full_tensor() (or get_model_state_dict(model, "
    "options=StateDictOptions(full_state_dict=True, cpu_offload=True))) on every rank, then torch.save on rank 0; "
    "FSDP1: model.state_dict() under FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, "
    "FullStateDictConfig(offload_to_cpu=True, rank0_only=True)) on every rank. torch.distributed.checkpoint "
    "(dcp.save) is called on every rank too, and so are Lightning's fabric.save(...) and "
    "trainer.save_checkpoint(...): they write on rank 0 themselves and wait for every rank in a barrier."
)
# Lightning's own saves, where the FSDP recipes above are beside the point: the call itself goes on every rank
_LIGHTNING_SAVE = re.compile(r"\bfabric\.save\(|\.save_checkpoint\(")
LIGHTNING_SAVE_ON_EVERY_RANK = (
    "fabric.save(...) and trainer.save_checkpoint(...) are called on every rank: Lightning gathers what it must, "
    "writes the file on rank 0 itself and waits for every rank in a barrier, so under `if trainer.is_global_zero:` "
    "(or @rank_zero_only) rank 0 waits there alone. Take the call out of that condition."
)


def on_every_rank(code: str) -> str:
    """What to do where a rank waited in ``code``, a state dict's gather or a save its peer never made: Lightning's
    own saves are called on every rank; a state dict is gathered on every rank and only written on one."""
    return LIGHTNING_SAVE_ON_EVERY_RANK if _LIGHTNING_SAVE.search(code) else STATE_DICT_ON_EVERY_RANK


# a backward pass (loss.backward(), accelerator.backward(loss), self.manual_backward(loss), fabric.backward)
_BACKWARD = re.compile(r"\.backward\(|\b(?:manual_)?backward\(")
# DDP's own module: its forward's collectives (bucket rebuild, buffer broadcast) raise there
_DDP = "nn/parallel/distributed.py"


def waited_at(raised: Raised) -> tuple[str, str] | None:
    """(a phrase for the summary, the fix's paragraph) naming the user's line where ``raised``'s rank waited in
    a collective its peer left; None when its traceback names no line."""
    if raised.frame is None:
        return None
    where = first_failure.where(raised)
    rank = f"rank {raised.rank}" if raised.rank is not None else "this rank"
    summary = f"{rank} was waiting in the collective made at {where}"
    fix = (
        f"{rank[0].upper()}{rank[1:]} was waiting in the collective made at {where}: the peer that left never "
        "made that call, or made it fewer times. Look for what runs it on some ranks only (an `if rank == 0:` "
        "around it or around a function that calls it, an early return or break, a loop over a different "
        "number of batches)."
    )
    if _STATE_DICT.search(raised.code):
        fix += f"\n{on_every_rank(raised.code)}"
    elif _BACKWARD.search(raised.code) or (
        raised.raised_in is not None and raised.raised_in.file.replace("\\", "/").endswith(_DDP)
    ):
        fix += (
            "\nUnder DDP (and FSDP) backward all-reduces the gradients and DDP's forward synchronises too (its "
            "buckets, its buffers): every rank must run the same number of forward and synchronised backward passes. Gradient accumulation's no_sync() on every rank or on none (the same "
            "accumulation count everywhere), no loss skipped on one rank (a NaN check, an empty batch), and the "
            "same number of batches per rank (DistributedSampler, or DDP's join() context for uneven inputs)."
        )
    return summary, fix


def state_dict_waited_in(raised: list[Raised]) -> Raised | None:
    """The error of a rank whose own line, where it waited for a peer that ended, gathers a state dict or saves a
    distributed checkpoint (``dcp.save(model.state_dict(), ...)``, ``full_tensor()``): a call that a condition on
    the rank kept from the peer, not a loop the ranks ran a different number of times; None when there is none."""
    return next((r for r in raised if r.frame is not None and _STATE_DICT.search(r.code)), None)
