"""DeepSpeed falling back to slower collectives on a torch that lacks the fused ones: ZeRO runs, slower.

``deepspeed/comm/torch.py`` (``TorchBackend``) and ``deepspeed/comm/comm.py`` look for torch's tensor-in,
tensor-out collectives (``all_gather_into_tensor`` and ``reduce_scatter_tensor``, torch 1.13; the older private
``_all_gather_base`` / ``_reduce_scatter_base``) and, where torch has none, warn "unable to find
torch.distributed.all_gather_into_tensor. will fall back to torch.distributed.all_gather which will result in
suboptimal performance. please consider upgrading your pytorch installation." (one line per missing function).
ZeRO's gathers and reduce-scatters then go through the list-based collectives, with extra copies on every step:
"DeepSpeed slower than DDP", "ZeRO-3 very slow". A warning: a finding only where the log shows no error
(``fallback``), and only likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _fallback(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    missing = sorted({h.facts["missing_collective"] for h in hits if h.facts.get("missing_collective")})
    named = f" ({', '.join(missing)} missing)" if missing else ""
    return (
        "DeepSpeed found no fused all-gather / reduce-scatter in this torch" + named + " and uses the slower "
        "list-based collectives for ZeRO (a warning, the run went on, slower)" + on_ranks(hits),
        "Upgrade torch to 1.13 or newer (all_gather_into_tensor and reduce_scatter_tensor arrived there), in a "
        "build matching the CUDA of the driver, and keep DeepSpeed at a release that supports it: ZeRO stage 2 and "
        "3 gather and reduce every parameter shard each step, so the extra copies of the fallback cost on every "
        "step. python -c 'import torch, torch.distributed as d; print(torch.__version__, "
        'hasattr(d, "all_gather_into_tensor"))\' shows which torch the job imports.',
    )


COLLECTIVE_FALLBACK = Recogniser(
    kind="deepspeed_slow_collectives",
    title="DeepSpeed's slower collectives on an old torch",
    anchors=("will result in suboptimal performance. please consider upgrading your pytorch installation",),
    templates=(
        "deepspeed:unable-to-find-torch-distributed-reduce",
        "deepspeed:unable-to-find-torch-distributed-all",
        "deepspeed:unable-to-find-torch-distributed-all-2",
        "deepspeed:unable-to-find-torch-distributed-all-3",
        "deepspeed:unable-to-find-torch-distributed-reduce-2",
        "deepspeed:unable-to-find-torch-distributed-reduce-3",
    ),
    facts=(R(r"unable to find torch\.distributed\.(?P<missing_collective>\w{1,60})\. will fall back"),),
    confirm=lambda hits, ctx: False,  # a warning: how much slower the run was is not in the log
    fallback=True,
    describe=_fallback,
)


RECOGNISERS = (COLLECTIVE_FALLBACK,)
