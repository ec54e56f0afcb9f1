"""An op with no deterministic implementation, refused because the run asked for deterministic algorithms.

``aten/src/ATen/Context.cpp`` (``Context::alertNotDeterministic``) is called by every kernel that has no
deterministic implementation on its device (``scatter_add_cuda_kernel``, ``index_add_cuda_``, the backward of
``adaptive_avg_pool2d``, ``cumsum_cuda_kernel``, ...; the op's own name comes first). With deterministic algorithms
on it refuses the op: "{op} does not have a deterministic implementation, but you set
'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation, or you can use the
'warn_only=True' option, if that's acceptable for your application. ..." (torch 1.11+; 1.8-1.10 without the
warn_only option: "... just for this operation if that's acceptable for your application. ..."; 1.7 named the switch
``torch.set_deterministic(True)``). ``torch/_prims_common`` and ``torch/_refs`` repeat the text for decompositions.
The message is its own cause: determinism was switched on (by the script, a seed helper, Lightning's
``Trainer(deterministic=True)``, transformers' ``enable_full_determinism``) and this op cannot honour it.
With ``warn_only=True`` the same text is a UserWarning ("... 'torch.use_deterministic_algorithms(True,
warn_only=True)'. You can file an issue ...") and the run goes on: not read as a failure.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the op's name as the kernel passes it (an identifier, or "_histc_xpu with floating point input"), and the switch
_REFUSED = R(
    r"(?P<op>[A-Za-z_][\w.]{0,80}(?: with [A-Za-z ]{1,40}?)?) does not have a deterministic implementation, but you "
    r"set '(?P<switch>torch\.(?:use_deterministic_algorithms|set_deterministic)\(True\))'"
)


def _refused(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    op = first(hits, "op", "an op")
    switch = first(hits, "switch", "torch.use_deterministic_algorithms(True)")
    summary = (
        f"{op} has no deterministic implementation, and the run set {switch}: torch refuses the op rather than "
        "run it non-deterministically" + on_ranks(hits)
    )
    fix = (
        f"Something in the run switched deterministic algorithms on ({switch}: the script or its seed helper, "
        "Lightning's Trainer(deterministic=True), transformers' enable_full_determinism or accelerate's "
        f"set_seed(..., deterministic=True)), and {op} cannot honour it. Either keep determinism but let this op "
        "run as it is: torch.use_deterministic_algorithms(True, warn_only=True) (torch 1.11+; "
        'Trainer(deterministic="warn") in Lightning), or switch it off just around the op '
        "(torch.use_deterministic_algorithms(False) before it, True after); or drop the flag if bit-exact "
        "reruns are not needed. Newer torch releases give more ops a deterministic implementation (the list is in "
        "torch.use_deterministic_algorithms' documentation for your release), so upgrading can also remove it."
    )
    return summary, fix


NONDETERMINISTIC_OP = Recogniser(
    kind="nondeterministic_op",
    templates=(
        "torch_native:alert-not-deterministic",
        "torch_native:alert-not-deterministic-before-warn-only",
        "torch_native:alert-not-deterministic-set-deterministic",
    ),
    title="an op without a deterministic implementation under deterministic algorithms",
    anchors=(
        "does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'",
        "does not have a deterministic implementation, but you set 'torch.set_deterministic(True)'",
    ),
    facts=(_REFUSED,),
    describe=_refused,
)

RECOGNISERS = (NONDETERMINISTIC_OP,)
