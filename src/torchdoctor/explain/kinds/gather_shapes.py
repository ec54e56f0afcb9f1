"""Tensors whose shapes differ between the ranks, handed to one gather, reduce or broadcast in debug mode.

accelerate's ``verify_operation`` (``accelerate/utils/operations.py``, 0.22+, only with ``ACCELERATE_DEBUG_MODE``)
wraps ``gather``, ``broadcast`` and ``reduce``: every rank first sends its tensor's shape through one
``gather_object`` and raises "Cannot apply desired operation due to shape mismatches" when the shapes differ.
Every rank has joined that same exchange, so this is not a rank that skipped a collective: each rank's tensor
differs (sequences of different lengths, generated outputs, a last batch split unevenly). The exchange carries
shapes only, not the operation: a rank in ``gather`` and another in ``reduce`` print the same line, so the line
alone stays likely, ranks that ran different collectives named. Two ranks naming the same operation, or
torchdoctor's own debug mode (``torchdoctor/distributed/messages.py`` compares the operation first and adds the
call sites, "Called from:"), rule that reading out.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _same_operation_twice(hits: list[Hit], ctx: Context) -> bool:
    if any("call_sites" in h.facts for h in hits):
        return True
    operations = [h.facts["gather_operation"] for h in hits if "gather_operation" in h.facts]
    return len(operations) > len(set(operations))


def _describe(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    operation = first(hits, "gather_operation", "a gather")
    shapes = first(hits, "gather_shapes")
    summary = f"the ranks handed tensors of different shapes to {operation}" + on_ranks(hits)
    if shapes:
        summary += " (" + ", ".join(line.strip(" -") for line in shapes.splitlines()) + ")"
    return summary, (
        "Each rank's tensor has its own shape (sequences padded to each batch's own longest, generated outputs "
        "of different lengths, a last batch split unevenly), and a gather concatenates them only when they "
        "match. Before gathering, pad them to one size across the ranks: "
        "accelerator.pad_across_processes(t, dim=1, pad_index=tokenizer.pad_token_id) for token ids (dim 0 for "
        "a batch of a different size), then accelerator.gather_for_metrics(t) (it also drops the samples the "
        "last batch repeated); or gather them as Python objects without padding: "
        "accelerator.gather_for_metrics(t, use_gather_object=True) (accelerate 0.30+). A reduce or broadcast "
        "needs the same shape on every rank: build the tensor from sizes that do not depend on the rank's data."
    )


GATHERED_SHAPES_DIFFER = Recogniser(
    # accelerate/utils/operations.py verify_operation; torchdoctor/distributed/messages.py mismatch_message
    kind="gathered_shapes_differ",
    templates=("accelerate:cannot-apply-desired-operation-due-to",),
    title="tensors of different shapes on the ranks, gathered",
    anchors=("Cannot apply desired operation due to shape mismatches",),
    span=12,
    facts=(
        R(r"Operation: `(?P<gather_operation>[\w.]{1,120})`"),
        R(
            r"Input shapes:\s*(?P<gather_shapes>- Process \d+: [^\n]{1,80}(?:\s*- Process \d+: [^\n]{1,80}){0,3})"
        ),
        R(r"\n(?P<call_sites>Called from:)\n"),
    ),
    confirm=_same_operation_twice,
    also=(
        Alternative(
            "rank_divergence",
            "ranks that reached different collectives (accelerate compares only the shapes, not the operation)",
            "Check that every rank calls the same gather / reduce / broadcast in the same order: a branch on the "
            "rank or on each rank's data (an early stop, a metric on the main process only) makes one rank's "
            "gather meet another's reduce; torchdoctor launch --debug names each rank's operation and line.",
        ),
    ),
    describe=_describe,
)

RECOGNISERS = (GATHERED_SHAPES_DIFFER,)
