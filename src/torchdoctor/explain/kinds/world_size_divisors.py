"""A count that must divide evenly by the number of processes and does not.

Scripts and frameworks split a count across the ranks (a batch into per-GPU batches, accumulation steps, tokens,
attention heads) and check first that the world size divides it:

- nanoGPT's ``train.py`` (and the many scripts copied from it, dlrover's example among them):
  ``assert gradient_accumulation_steps % ddp_world_size == 0`` before ``//= ddp_world_size``; the traceback shows
  the assert line and a bare ``AssertionError``. Read on any such assert whose left side names a count (batch,
  accumulation, steps, tokens, samples, heads) and whose right side the number of processes (world size, GPUs,
  processes, devices, data-parallel size): a script's own check, so only likely.
- Megatron-LM (``megatron/microbatches.py``, later ``megatron/core/num_microbatches_calculator.py``):
  "global batch size ({}) is not divisible by micro batch size ({}) times data parallel size ({})".
- accelerate (``accelerate/data_loader.py``: ``prepare_data_loader``, ``BatchSamplerShard``,
  ``IterableDatasetShard``) under ``split_batches=True``: "... the batch size ({}) needs to be a round multiple of
  the number of processes ({})."
- the same check in a script's or a framework's own words ("The batch size must be divisible by the world size!",
  "the kv heads must be divisible by the world size"): a count word, then "must be / is not divisible by" the
  world size or the number of GPUs / processes / devices. Likely: the sentence is the script's.

DeepSpeed's batch check ("train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size")
is read as DeepSpeed refusing its config (config_checks, deepspeed_config_mismatch), as its labelled logs are.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the number of processes as scripts name it (ddp_world_size, self.world_size, args.num_gpus, dp_size ...)
_DIVISOR = (
    r"(?:world_size|num_gpus|n_gpus?|ngpus|gpu_count|num_processes|nprocs|nproc_per_node|num_devices|"
    r"data_parallel_size|dp_size|dp_world_size)"
)
# a count a script splits across the ranks
_COUNT = r"(?:batch|bs|accum|acc_steps|grad_acc|steps|token|sample|head|seq)"

_ASSERT = (
    rf"assert\s+\(?(?P<count>[\w.]{{0,60}}{_COUNT}[\w.]{{0,60}})\s*%\s*\(?(?P<divisor>[\w.]{{0,40}}{_DIVISOR}"
    r"[\w.]{0,20})\)?\s*==\s*0\)?[^\n]{0,200}\n(?:[^\n]{0,60}\^+[ \t]*\n)?[^\n]{0,40}?\bAssertionError\b"
)
# the same check said in words, by a script or a framework: "The batch size must be divisible by the world size!",
# "the kv heads must be divisible by the world size", "batch_size (10) is not divisible by the number of GPUs (4)"
_PROSE = (
    r"(?P<prose>(?P<prose_count>[Bb]atch[ _]size|[Gg]radient[ _]accumulation[ _]steps|[Aa]ccumulation steps|"
    r"(?:kv |attention |num_|number of )?heads|tokens|samples)\b[^\n]{0,80}?"
    r"(?:(?:must|should|has to|needs to) be|is not|isn't) (?:evenly |exactly )?divisible by (?:the )?"
    r"(?P<prose_divisor>world[ _]size|number of (?:GPUs|gpus|processes|devices|ranks)|num_gpus|n_gpus?|"
    r"num_processes|GPU count)(?:[^\n]{0,40}?\((?P<prose_world>\d+)\))?)"
)
_MEGATRON = (
    r"global batch size \((?P<global_batch>\d+)\) is not divisible by micro batch size \((?P<micro_batch>\d+)\) "
    r"times data parallel size \((?P<data_parallel>\d+)\)"
)
_ACCELERATE = (
    r"the batch size \((?P<split_batch>\d+)\) needs to be a round multiple of the number of processes "
    r"\((?P<processes>\d+)\)"
)


def _multiple(value: int, step: int) -> str:
    """The multiples of ``step`` either side of ``value`` (``96 or 128`` for 100 and 32)."""
    below = value // step * step
    return f"{below} or {below + step}" if below else str(step)


def _not_divisible(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    gb = first(hits, "global_batch")
    if gb is not None:
        mb, dp = int(first(hits, "micro_batch")), int(first(hits, "data_parallel"))
        step = mb * dp
        return (
            f"Megatron's global batch size {gb} is not a multiple of micro batch size {mb} x data parallel size "
            f"{dp} = {step}" + on_ranks(hits),
            f"Set --global-batch-size to a multiple of {step} (e.g. {_multiple(int(gb), step)}), or change "
            "--micro-batch-size, or the data parallel size: the number of GPUs divided by tensor x pipeline (x "
            "context) parallel size, which changes with the GPUs the job is launched on.",
        )
    batch = first(hits, "split_batch")
    if batch is not None:
        procs = int(first(hits, "processes"))
        return (
            f"accelerate splits each batch of {batch} across {procs} processes (split_batches=True), and {procs} "
            f"does not divide {batch}" + on_ranks(hits),
            f"Use a batch size that is a multiple of {procs} (e.g. {_multiple(int(batch), procs)}), or launch a "
            "number of processes that divides it, or leave split_batches off (Accelerator(dataloader_config="
            "DataLoaderConfiguration(split_batches=False))), so that each process loads a batch of its own.",
        )
    said = first(hits, "prose")
    if said is not None:
        count, world = first(hits, "prose_count"), first(hits, "prose_world")
        processes = f" ({world})" if world else ""
        return (
            f'the run stopped on "{said}": the {first(hits, "prose_divisor")}{processes} does not divide the '
            f"{count.lower()}" + on_ranks(hits),
            f"Set the {count.lower()} to a multiple of the number of processes{processes} (the world size: nodes x "
            "GPUs per node), or launch a number of processes that divides it (torchrun --nproc_per_node, "
            "--nnodes).",
        )
    count, divisor = first(hits, "count"), first(hits, "divisor")
    return (
        f"the script asserts that {count} is a multiple of {divisor} (assert {count} % {divisor} == 0) and it is "
        f"not: {count} does not divide evenly by the number of processes this job started" + on_ranks(hits),
        f"The script shares {count} out among the processes, so {divisor} (the number of processes: nodes x GPUs per node) "
        "must divide it. Set it to a multiple of the number of processes you launch (with 4 "
        f"GPUs: 4, 8, 12 ...; nanoGPT-style scripts: --{count.rsplit('.', 1)[-1]}=<a multiple of the world size>), "
        "or launch a number of processes that divides it (torchrun --nproc_per_node).",
    )


BATCH_NOT_DIVISIBLE = Recogniser(
    kind="batch_not_divisible",
    title="a count not divisible by the number of processes",
    templates=(
        "third_party:nanogpt-assert-gradient-accumulation-world-size",
        "third_party:megatron-global-batch-not-divisible",
        "accelerate:split-batches-dataloader-round-multiple",
        "accelerate:split-batches-batch-sampler-shard-round-multiple",
        "accelerate:split-batches-iterable-dataset-shard-round-multiple",
    ),
    anchors=(
        "world_size == 0",
        "world_size==0",
        "num_gpus == 0",
        "n_gpu == 0",
        "num_processes == 0",
        "data_parallel_size == 0",
        "dp_size == 0",
        "is not divisible by micro batch size",
        "needs to be a round multiple of the number of processes",
        "divisible by the world size",
        "divisible by world size",
        "divisible by the number of GPUs",
        "divisible by the number of processes",
        "divisible by the number of devices",
        "divisible by num_gpus",
    ),
    # the assert line, Python 3.11+'s carets, then the AssertionError (bare, or with the assert's message)
    span=3,
    match=R(f"{_ASSERT}|{_MEGATRON}|{_ACCELERATE}|{_PROSE}"),
    # a framework's message says which values; a script's assert is its own check, whose names may mean other
    # things: likely
    confirm=lambda hits, ctx: any("global_batch" in h.facts or "split_batch" in h.facts for h in hits),
    describe=_not_divisible,
)


RECOGNISERS = (BATCH_NOT_DIVISIBLE,)
