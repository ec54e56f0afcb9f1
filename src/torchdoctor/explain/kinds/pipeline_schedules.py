"""torch.distributed.pipelining refusing a schedule's sizes or a stage's inputs.

Microbatches against stages and ranks, the batch split into microbatches, what a stage may be handed.

``torch/distributed/pipelining/schedules.py`` (ScheduleGPipe, Schedule1F1B, ScheduleInterleaved1F1B,
ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble, ScheduleDualPipeV, ``get_schedule_class``), ``stage.py``
(PipelineStage), ``microbatch.py`` (``split_args_kwargs_into_chunks``) and ``_IR.py``, torch 2.4-2.13. Each message
names its own mistake: certain once a real log shows it.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_MICROBATCHES = (
    "The schedule's n_microbatches must fit its stages: at least as many microbatches as stages, and for the "
    "interleaved schedules (Interleaved1F1B, InterleavedZeroBubble) a multiple of the pipeline size (the 'rounds' "
    "the message names). Raise n_microbatches (e.g. to a multiple of pp_size, >= the number of stages) and keep the "
    "batch size a multiple of it; the schedule, the stage count and the launch must agree (stages = pp_size x "
    "stages per rank)."
)

_V_STAGES = (
    "V-shaped schedules (ScheduleZBVZeroBubble, ScheduleDualPipeV) place exactly 2 stages on each rank, folded "
    "(rank r holds stages r and 2*pp_size-1-r): split the model into 2 x pp_size stages and build both of each rank's "
    "stages before the schedule."
)

_STAGE_ARGS = (
    "schedule.step(*args, **kwargs) splits positional arguments into microbatches and passes them between stages as "
    "tensors: give step() tensors (or tuples / lists of tensors) positionally, and non-tensor or optional inputs "
    "(None, flags, masks built per call) as keyword arguments."
)

_CHUNKS = (
    "schedule.step splits each input along dim 0 into n_microbatches pieces: the batch size (and the batch of every "
    "other input, a BlockMask's included) must be at least n_microbatches, ideally a multiple of it, and all "
    "inputs must split into the same number of chunks."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("must be greater than or equal to the number of stages (", _MICROBATCHES),
    (
        "Interleaved 1F1B requires the number of microbatches to be a multiple of the number of rounds",
        _MICROBATCHES,
    ),
    (
        "Zero bubble requires the number of microbatches to be a multiple of the number of rounds",
        _MICROBATCHES,
    ),
    ("DualPipeV requires at least as many microbatches as stages", _MICROBATCHES),
    ("must be evenly divisible by pp_size", _V_STAGES),
    ("ZBV requires exactly 2 stages per rank, but got", _V_STAGES),
    (
        "cannot be larger than number of stages",
        "The pipeline has fewer stages than ranks in its group: give every rank of the pipeline group at least one "
        "stage (num_stages >= pp_size), or launch fewer pipeline ranks.",
    ),
    (
        "Unknown schedule name '",
        "get_schedule_class / the framework's pipeline_parallel_schedule takes one of the names the message lists "
        "(e.g. '1F1B', 'GPipe', 'Interleaved1F1B', 'InterleavedZeroBubble', 'ZBVZeroBubble'), spelt as listed.",
    ),
    (
        "step() requires gradients to be enabled for backward computation",
        "A training schedule's step() runs backward and was called under torch.no_grad(): for evaluation call "
        "schedule.eval(...) (or a forward-only schedule), and for training leave gradients enabled.",
    ),
    (
        "Forward-only schedule does not support loss computation",
        "A forward-only schedule (or eval()) computes no loss: build the schedule without loss_fn / target for "
        "inference, or use a training schedule (Schedule1F1B, ScheduleGPipe with loss_fn) to get losses.",
    ),
    ("Stage args must be a tensor, tuple, or list of tensors, got", _STAGE_ARGS),
    ("All stage args must be tensors. Use kwargs for non-tensor inputs.", _STAGE_ARGS),
    ("Stage args must be tensors. Use kwargs for optional values.", _STAGE_ARGS),
    ("is smaller than num_chunks", _CHUNKS),
    ("args and kwargs are split into different number of chunks:", _CHUNKS),
    ("Block mask has fewer batch size than the number of chunks.", _CHUNKS),
    (
        "schedule is not supported with stage modules that have used torch.compile.",
        "This schedule drives the stage modules' backward pieces itself and cannot run torch.compile'd stage "
        "modules (OptimizedModule): compile the submodules inside each stage (model.layers[i].compile()) rather "
        "than the stage module, or use Schedule1F1B / ScheduleGPipe.",
    ),
    (
        "PipelineScheduleMulti only supports adjacent-stage communication",
        "Stages send only to the stage before and after them: assign stage indices so that consecutive stages "
        "exchange activations (stage i feeds i + 1), with each rank's stages in the order the schedule expects "
        "(looped: r, r + pp, ...; V-shaped: r and 2*pp-1-r).",
    ),
    (
        "Schedule has incorrect number of ranks - expected",
        "A custom (CSV or action-list) schedule must list actions for every rank of the pipeline group: one row per "
        "rank, as many as pp_size.",
    ),
    # schedules.py _check_inputs, _parse_actions (a custom schedule read from CSV)
    (
        "losses must be a list but got a",
        "schedule.step(..., losses=losses) fills the list it is given with each microbatch's loss on the last "
        "stage: pass an empty list (losses = []; schedule.step(x, target=y, losses=losses)), not a tensor or None "
        "to be replaced.",
    ),
    (
        "should be formatted as [stage][action type][(microbatch)]",
        "A custom schedule (_load_csv, a CSV or action list) writes each action as stage, action type, microbatch: "
        "'2F0' (stage 2, forward, microbatch 0), '1B3', '0W1'; an empty cell for no action. Fix the cell the message "
        "quotes (spaces, a lower-case type or a missing index).",
    ),
    # stage.py's metadata inference of torch 2.13 (the first step of a schedule)
    (
        "First stage requires real tensors, got",
        "The rank that holds the first stage passes the batch to the schedule, the others pass nothing: "
        "schedule.step(x) on the first stage's rank (with target=y on the last stage's), schedule.step() elsewhere; "
        "a step() without inputs on the first stage's rank has nothing to split into microbatches.",
    ),
    (
        "loss_fn and target required for last stage",
        "A training schedule's last stage computes the loss: build the schedule with loss_fn= "
        "(Schedule1F1B(stage, n_microbatches, loss_fn=loss_fn)) and pass target= to step() on the last stage's rank "
        "(schedule.step(target=y, losses=losses)); for inference without a loss use schedule.eval(...) instead.",
    ),
    (
        "Number of submodules in pipe graph",
        "pipeline(model, ..., split_spec=...) made another number of pieces than stages requested: give one split "
        "point fewer than stages (SplitPoint.BEGINNING at each stage's first module), with module names as "
        "model.named_modules() spells them.",
    ),
)

PIPELINE_SCHEDULES = refusal_recogniser(
    kind="pipeline_schedules",
    title="a pipeline-parallel schedule or stage refused its sizes or inputs",
    refusals=REFUSALS,
    templates=(
        "torch:number-of-microbatches-must-be-greater",
        "torch:interleaved-f1b-requires-the-number-of",
        "torch:zero-bubble-requires-the-number-of",
        "torch:dualpipev-requires-at-least-as-many",
        "torch:num-stages-must-be-evenly-divisible",
        "torch:zbv-requires-exactly-stages-per-rank",
        "torch:pipeline-group-size-cannot-be-larger",
        "torch:unknown-schedule-name-the-valid-options",
        "torch:step-requires-gradients-to-be-enabled",
        "torch:forward-only-schedule-does-not-support",
        "torch:stage-args-must-be-tensor-tuple",
        "torch:stage-arg-has-type-all-stage",
        "torch:stage-arg-is-none-stage-args",
        "torch:tensor-size-is-smaller-than-num",
        "torch:args-and-kwargs-are-split-into",
        "torch:block-mask-has-fewer-batch-size",
        "torch:the-schedule-is-not-supported-with",
        "torch:pipelineschedulemulti-only-supports-adjacent-stage-communication",
        "torch:schedule-has-incorrect-number-of-ranks",
        "torch:number-of-submodules-in-pipe-graph",
        "torch:losses-must-be-list-but-got",
        "torch:invalid-action-string-should-be-formatted",
        "torch:stage-first-stage-requires-real-tensors",
        "torch:stage-loss-fn-and-target-required",
    ),
)

RECOGNISERS = (PIPELINE_SCHEDULES,)
