"""DeepSpeed ZeRO-3's parameter coordinator losing track of its parameters: its own invariants, a release's bug.

ZeRO-3 gathers each submodule's parameters before it runs (``deepspeed/runtime/zero/partitioned_param_coordinator.py``
``fetch_sub_module``) and, once it has recorded the order the first step ran the submodules in (its trace), prefetches
the next ones by that order. The coordinator checks its own state and raises on what should not happen:

- ``reset_step`` "still have inflight params [...]" (v0.6.7-v0.15.2): parameters it prefetched that the step never
  used, because the submodules run differed from the trace. DeepSpeed 0.15.3 waits for them and clears the registry
  instead (deepspeedai/DeepSpeed#6557, "Clean up prefetched parameters");
- ``fetch_sub_module`` ``assert param.ds_status == ZeroParamStatus.AVAILABLE, param.ds_summary()`` (every release
  read): a parameter the submodule needs is still INFLIGHT (or NOT_AVAILABLE) after the wait, CPython printing
  the parameter's ``ds_summary()`` dict ("{'id': 918, 'status': 'INFLIGHT', 'numel': 0, 'ds_numel': 5120, ...");
- the registry's and the trace's own checks ("{...} already in registry", "attempted to add non-inflight parameter
  to registry", "attempted to record trace when status = ...", "expected trace to be complete", "param {...} still
  in flight", "tracing error at step ...") and ``partition_parameters.py``'s "expected param {...} to be available",
  "{...} Cannot partition a param in flight" (and ``mics.py``'s "expected param {...} to be inflight");
- ``parameter_offload.py``'s backward hooks ``assert sub_module.training, "backward pass is invalid for module in
  evaluation mode"`` (v0.9.5-v0.15.3; a comment from 0.15.4, deepspeedai/DeepSpeed#6662 "Use one param coordinator
  for both train/inference scenarios").

Threads that post them end with a DeepSpeed release that fixed the case (#1901, #2647, #6557, #6662) or a trainer
release that stopped leaving the model in eval mode (Lightning 2.2, OpenRLHF); what set them off is a forward that
runs other submodules than the trace (branches chosen by the data, ``generate()`` or evaluation between training
steps, a model run only on some steps). No message says which release or which forward: likely, read by versions.py's
``library_version_bug``.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

EVAL_BACKWARD = "backward pass is invalid for module in evaluation mode"
ANCHORS = (
    "still have inflight params",
    "ds_status == ZeroParamStatus.AVAILABLE, param.ds_summary()",
    "AssertionError: {'id': ",
    "Cannot partition a param in flight",
    " still in flight",
    "expected param ",
    "already in registry",
    "attempted to add non-inflight parameter to registry",
    "attempted to record trace when status",
    "expected trace to be complete",
    "attempted to invalidate already invalid trace",
    "tracing error at step",
    EVAL_BACKWARD,
)
TEMPLATES = (
    "deepspeed:still-have-inflight-params",
    "third_party:deepspeed-zero3-fetch-assert-available",
    "third_party:deepspeed-zero3-param-ds-summary-assertion",
    "deepspeed:cannot-partition-param-in-flight",
    "deepspeed:param-still-in-flight",
    "deepspeed:expected-param-to-be-available",
    "deepspeed:already-in-registry",
    "deepspeed:attempted-to-add-non-inflight-parameter",
    "deepspeed:attempted-to-record-trace-when-status",
    "deepspeed:expected-trace-to-be-complete",
    "deepspeed:attempted-to-invalidate-already-invalid-trace",
    "deepspeed:tracing-error-at-step-module-id",
    "deepspeed:backward-pass-is-invalid-for-module",
)
# ds_summary()'s dict as CPython prints it: "{'id': 918, 'status': 'INFLIGHT', 'numel': 0, ..."
_SUMMARY = r"\{'id': [^\n]{1,300}?, 'status': '(?:INFLIGHT|NOT_AVAILABLE|AVAILABLE)', 'numel': "
REFUSED = re.compile(
    r"(?P<z3_inflight>still have inflight params)|"
    r"(?P<z3_fetch_assert>ds_status == ZeroParamStatus\.AVAILABLE, param\.ds_summary\(\))|"
    rf"AssertionError: (?P<z3_summary>{_SUMMARY})|"
    rf"(?P<z3_registry>{_SUMMARY}[^\n]{{0,2000}}?\}} (?:already in registry|Cannot partition a param in flight))|"
    rf"(?P<z3_still>param {_SUMMARY}[^\n]{{0,2000}}?\}} still in flight)|"
    rf"(?P<z3_expected>expected param {_SUMMARY}[^\n]{{0,2000}}?\}} to (?:not )?be (?:available|inflight))|"
    r"(?P<z3_trace>attempted to add non-inflight parameter to registry|attempted to record trace when status = "
    r"|expected trace to be complete|attempted to invalidate already invalid trace|tracing error at step \d+)|"
    rf"(?P<z3_eval_backward>{EVAL_BACKWARD})"
)
FACTS = (
    "z3_inflight",
    "z3_fetch_assert",
    "z3_summary",
    "z3_registry",
    "z3_still",
    "z3_expected",
    "z3_trace",
    "z3_eval_backward",
)


def eval_backward(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for ZeRO-3's backward hook refusing a submodule in eval mode."""
    return (
        "ZeRO-3's backward hook refused a submodule in evaluation mode: backward ran while the model was in eval "
        "mode, which DeepSpeed releases before 0.15.4 refuse; a trainer that leaves the model in eval mode after "
        "evaluation, or a loop that calls backward after model.eval(), sets it off" + on_ranks(hits),
        "Put the model back in training mode before the training step's forward (model.train(), or the engine's "
        "engine.train()), after every evaluation or generation in between. Upgrade DeepSpeed (pip install -U "
        "'deepspeed>=0.15.4': one parameter coordinator for training and evaluation, deepspeedai/DeepSpeed#6662, "
        "no longer refuses it); and update the trainer that called backward (Lightning 2.2's and OpenRLHF's "
        "releases of late 2023 left the model in eval mode after validation, fixed in later ones).",
    )


def lost_parameter(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for ZeRO-3's parameter coordinator finding a parameter in a state it does not expect."""
    if first(hits, "z3_inflight"):
        what = (
            "parameters it prefetched were still in flight when the step ended (still have inflight params)"
        )
    elif first(hits, "z3_trace"):
        what = f"its trace of the submodules' order did not hold ({first(hits, 'z3_trace')})"
    else:
        what = "a parameter a submodule needs was not gathered when it ran (its status is not AVAILABLE)"
    return (
        f"DeepSpeed ZeRO-3's parameter coordinator lost track of its parameters: {what}; the step ran other "
        "submodules than the order ZeRO-3 recorded and prefetches by, a case DeepSpeed releases get wrong "
        "(several fixed since)" + on_ranks(hits),
        "ZeRO-3 records the order the first step runs the submodules in and prefetches parameters by it. A forward "
        "that runs other submodules from step to step (branches chosen by the data, generate() or evaluation "
        "between training steps, a second model run only on some steps) leaves prefetched parameters in flight. "
        "Upgrade DeepSpeed first (pip install -U deepspeed: 0.15.3 waits for and clears prefetched parameters "
        "the step did not use, deepspeedai/DeepSpeed#6557, and 0.15.4 uses one coordinator for training and "
        "evaluation, #6662). On a release that still fails, turn prefetching off with "
        '"stage3_prefetch_bucket_size": 0 under zero_optimization, and run the same submodules on every step '
        "and rank (call every branch, multiplying an unused one's output by 0, rather than skipping it).",
    )


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for the coordinator's refusal among ``hits`` (the named groups of `REFUSED`)."""
    if first(hits, "z3_eval_backward"):
        return eval_backward(hits)
    return lost_parameter(hits)
