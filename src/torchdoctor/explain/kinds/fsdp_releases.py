"""FSDP1's own invariants failing inside torch, read by versions.py as a release's bug with the misuse named beside it.

FSDP1 (``FullyShardedDataParallel``) keeps a state machine per unit and checks it in its hooks:
``torch/distributed/fsdp/_common_utils.py`` ``_assert_in_training_states`` (and ``FullyShardedDataParallel.
_assert_state``, fairscale's FSDP the same words) raise "expected to be in states [<TrainingState.FORWARD_BACKWARD:
2>] but current state is TrainingState.IDLE"; ``_flat_param.py`` and ``_runtime_utils.py`` check the flat
parameter's storage and hooks with ``_p_assert`` ("Expects storage to be allocated", "Expects storage to be freed
but got storage with size > 0", "Invalid: ``_post_backward_hook_state``: ...", "Expects the handle training to be
IDLE but got ..."). None of them names a setting of the user's: each says FSDP's hooks ran in an order FSDP does
not expect. The threads that post them are fixed in the code that drives FSDP (EasyR1's video path, a framework's
generate or save path) or stay open as torch's (pytorch/pytorch#148756: parameters of a unit used in the forward
that take no part in the loss, "many reports online ... but no minimal reproduction"). So the reading is a
release's bug, likely, with what a script does to reach the same state named beside it.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, first, on_ranks

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ANCHORS = (
    "expected to be in states ",
    "Expects storage to be allocated",
    "Expects storage to be freed but got storage with size",
    "Invalid: ``_post_backward_hook_state``",
    "Expects the handle training to be IDLE but got",
    "Expects to be in `BACKWARD_PRE` or `IDLE` (if prefetching)",
    "Expects sharded strategy",
)
TEMPLATES = (
    "torch:expected-to-be-in-states-but",
    "torch:expects-storage-to-be-allocated",
    "torch:expects-storage-to-be-freed-but",
    "torch:invalid-post-backward-hook-state",
    "torch:expects-the-handle-training-to-be",
    "torch:expects-to-be-in-backward-pre",
    "torch:expects-sharded-strategy",
)
REFUSED = R(
    r"expected to be in states \[(?P<fsdp_expected>[^\]\n]{1,160})\] but current state (?:is )?"
    r"(?P<fsdp_current>[\w.]{1,60})|"
    r"(?P<fsdp_invariant>Expects storage to be allocated|Expects storage to be freed but got storage with size"
    r"[^\n]{0,30}|Invalid: ``_post_backward_hook_state``:[^\n]{0,120}|Expects the handle training to be IDLE but "
    r"got [\w.]{1,60}|Expects to be in `BACKWARD_PRE` or `IDLE` \(if prefetching\))|"
    r"(?P<fsdp_unsharded>Expects sharded strategy)"
)
FACTS = ("fsdp_expected", "fsdp_invariant", "fsdp_unsharded")

MISUSE = Alternative(
    "fsdp_params_outside_forward",
    "the script (or its framework) running an FSDP unit outside the forward and backward its root began: a "
    "submodule or generate() called directly, a second forward before the first one's backward, a unit whose "
    "output takes no part in the loss",
    "Call the model through its FSDP root, once per backward; make every wrapped module's output reach the loss "
    "on every step (loss = loss + 0.0 * skipped_branch_output.sum() for a branch some batches skip); call "
    "state_dict(), summon_full_params() and clip_grad_norm_() between steps, not inside forward or a hook.",
    when=FACTS,
)

_UPGRADE = (
    "Search the torch issues and those of the framework that drives FSDP (verl, EasyR1, trl, accelerate, "
    "Lightning) for the message, and upgrade both; a project pinned to a torch release usually runs on that one."
)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for FSDP1's failed invariant among ``hits`` (the named groups of `REFUSED`)."""
    expected, current = first(hits, "fsdp_expected"), first(hits, "fsdp_current")
    if expected and current.endswith("IDLE"):
        return (
            f"FSDP1's backward hooks found a unit idle (expected {expected}, was {current}), a state FSDP's own "
            "code does not expect: torch's bug for units whose parameters take part in the forward but not in the "
            "loss (pytorch/pytorch#148756), and the framework's where a branch runs on some batches and not others "
            "(a vision tower in a batch without images or videos)" + on_ranks(hits),
            "Make every FSDP-wrapped module's output reach the loss on every step (for a branch a batch skips, "
            "run it on a dummy input and add 0.0 * its output's sum to the loss); with gradient checkpointing "
            "use use_reentrant=False; call the model only through its root. " + _UPGRADE,
        )
    if expected:
        return (
            f"FSDP1 was entered again while it was in another state (expected {expected}, was {current}): a "
            "forward, state_dict(), summon_full_params() or clip_grad_norm_() ran while a forward and backward "
            "of the same root were still under way, or a previous step's backward never finished on this rank"
            + on_ranks(hits),
            "Finish each backward before the next forward through the same FSDP root (two models: wrap each "
            "as its own root); call state_dict(), summon_full_params() and clip_grad_norm_() between steps, not "
            "inside forward or a hook; do not catch an exception in the step and go on training. " + _UPGRADE,
        )
    if first(hits, "fsdp_unsharded"):
        # _flat_param.py _check_sharded_strategy: freeing, allocating or offloading (to_cpu) the unsharded flat
        # parameter, which only a sharded strategy keeps apart from the shard (rllm-org/rllm#53, verl on one GPU)
        return (
            "FSDP1 ran unsharded (NO_SHARD: one process, or sharding_strategy=NO_SHARD) and was asked to free, "
            "allocate or offload a full parameter apart from its shard, which only a sharded strategy does: a "
            "framework's reshard or offload path, or summon_full_params(offload_to_cpu=True)"
            + on_ranks(hits),
            "Run FSDP on 2 or more GPUs (torchrun --nproc_per_node=2 or more), or with one GPU turn the framework's "
            "parameter or optimizer offload off and its FSDP off where it offers plain training; with torch's own "
            "FSDP use a sharded strategy (FULL_SHARD, SHARD_GRAD_OP) or summon_full_params(offload_to_cpu=False). "
            + _UPGRADE,
        )
    said = first(hits, "fsdp_invariant") or "an internal check"
    return (
        f"an internal check of FSDP1's flat parameter failed ({said}): FSDP's hooks ran in an order its own "
        "code does not expect, a bug of the torch release or of the framework that drives FSDP (its generate, "
        "save or offload path), or a unit run outside its root's forward" + on_ranks(hits),
        _UPGRADE + " Until then: call the model only through its FSDP root, keep summon_full_params() and "
        "state_dict() outside forward and backward, and try use_orig_params=True or FSDP2 (fully_shard).",
    )
