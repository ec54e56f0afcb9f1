"""torch.compile giving up on a function it recompiled too often: the run goes on uncompiled, slower.

torch._dynamo compiles a function once per set of guards (tensor sizes, dtypes, Python values the code read);
each new set recompiles it. Past ``torch._dynamo.config.cache_size_limit`` compiled versions of one function (64
in torch 2.0, 8 in later releases; renamed ``recompile_limit``, with ``accumulated_recompile_limit`` for the whole
process) ``convert_frame.py`` logs a warning and runs that function eagerly from then on:

    torch._dynamo hit config.recompile_limit (8)
       function: 'forward' (/path/modeling_llama.py:637)
       last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9
    To log all recompilation reasons, use TORCH_LOGS="recompiles".

(torch 2.0's wording: "torch._dynamo hit config.cache_size_limit (64)" and "reasons:"; the limit's name is the
``%s`` of the first line.) Users bring it as "torch.compile makes training slower", "no speed-up with compile",
"slower with more GPUs" (each rank recompiles for its own shapes). With ``fullgraph=True`` or
``fail_on_recompile_limit_hit`` the same limit raises instead; this kind reads only the warning, so it is a finding
only where the log shows no error (``fallback``), and only likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _gave_up(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    limit, count = facts.get("limit_name", "recompile_limit"), facts.get("limit_value")
    function = facts.get("compiled_function")
    which = f" the function '{function}'" + (f" ({facts['function_at']})" if facts.get("function_at") else "")
    reason = f"; the last recompilation's reason: {facts['last_reason']}" if facts.get("last_reason") else ""
    return (
        f"torch.compile stopped compiling{which if function else ' a function'} after {count or 'the most'} "
        f"recompilations (torch._dynamo's config.{limit}): it runs uncompiled from then on{reason} (a warning, the "
        "run went on, slower)" + on_ranks(hits),
        "Each recompilation follows a change the compiled code was specialised on; the reason line names it. A "
        "tensor size that varies (batch or sequence length): pad to a few fixed lengths or bucket them, drop the "
        "last short batch (drop_last=True), or mark the dimension dynamic (torch.compile(model, dynamic=True) or "
        "torch._dynamo.mark_dynamic(x, 0)). A Python int read in forward (a per-layer index such as layer_idx, a "
        "step counter): turn it into a tensor or keep it out of the compiled region. Switching train/eval or grad "
        "mode recompiles too: compile the training step alone. TORCH_LOGS=recompiles prints every reason. Raising "
        f"torch._dynamo.config.{limit} keeps more versions compiled, at the cost of compile time and memory; it "
        "is the fix only where the variants are few and expected.",
    )


RECOMPILE_LIMIT = Recogniser(
    kind="compile_recompile_limit",
    title="torch.compile's recompile limit reached",
    anchors=("torch._dynamo hit config.",),
    templates=("torch_native:dynamo-hit-recompile-limit",),
    span=3,
    facts=(
        R(r"torch\._dynamo hit config\.(?P<limit_name>\w{1,60}) \((?P<limit_value>\d{1,9})\)"),
        R(r"function: '(?P<compiled_function>[^'\n]{1,200})' \((?P<function_at>[^)\n]{1,300})\)"),
        R(r"last reason: (?P<last_reason>[^\n]{1,300})"),
    ),
    confirm=lambda hits, ctx: False,  # a warning: how much slower the run was is not in the log
    fallback=True,
    describe=_gave_up,
)


RECOGNISERS = (RECOMPILE_LIMIT,)
