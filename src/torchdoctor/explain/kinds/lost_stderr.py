"""A process that raised while its ``sys.stderr`` was closed or replaced: its traceback was never printed.

CPython prints an uncaught exception through ``sys.excepthook`` to ``sys.stderr``. When that object is closed
(``sys.stderr.close()``, a ``with open(...) as sys.stderr`` block that ended, a redirect into a file closed
since) the hook itself fails, and the interpreter says so straight to the file descriptor
(``Python/pythonrun.c``, ``_PyErr_PrintEx``: "Error in sys.excepthook:" ... "Original exception was:", catalog
``system:cpython-error-in-sys-excepthook``), dumping each exception
as an object (``object repr     : RuntimeError('...')``) followed by "lost sys.stderr" (``_PyErr_Display``,
``system:cpython-lost-sys-stderr``); when ``sys.stderr`` is ``None`` the two headers come with nothing under
them. Under torchrun the other ranks then fail on the connection that rank's exit closed ("Connection closed by
peer"), and the rank itself often ends in SIGABRT ("terminate called without an active exception", a
communication thread torn down at exit): both are consequences of an error whose traceback is missing. Found by
closing ``sys.stderr`` on one of two gloo ranks before it raised: explain led with the peer that closed the
connection and said the cause was not in the log.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# a line may carry torchrun's "[default1]:" or torch's "[rank1]:" prefix
_PREFIX = r"(?:\[[^\]\n]{1,40}\]:)?"


def _lost(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    raised = first(hits, "lost_exception")
    summary = (
        f"a process raised {raised} but its traceback was never printed: its sys.stderr was closed"
        if raised
        else "a process raised an exception but its traceback was never printed: its sys.stderr was closed or "
        "replaced (set to None)"
    ) + on_ranks(hits)
    fix = (
        "Python prints an uncaught exception to sys.stderr; here that object was closed or replaced before the "
        "error, so neither the exception's line nor its traceback reached the log, and the other ranks' errors "
        "(a peer that closed the connection, torchrun's exit -6 of this rank) follow from this one. Look for what "
        "closed or replaced sys.stderr before it: sys.stderr.close(), a `with open(...) as sys.stderr:` block or "
        "contextlib.redirect_stderr into a file closed since, `sys.stderr = None`, a library's own wrapper. Leave "
        "sys.stderr open (redirect it with contextlib.redirect_stderr inside a `with` that the error leaves "
        "through), or put it back (sys.stderr = sys.__stderr__) before the training starts; then run again to "
        "see the traceback and the line it was raised at."
    )
    if raised:
        fix += f"\nThe exception itself is in the interpreter's dump of it: {raised}."
    return summary, fix


LOST_STDERR = Recogniser(
    kind="lost_stderr",
    title="an exception raised while sys.stderr was closed or replaced",
    anchors=("lost sys.stderr", "Error in sys.excepthook:"),
    templates=(
        "system:cpython-lost-sys-stderr",
        "system:cpython-error-in-sys-excepthook",
    ),
    # the hook's own error as an object dump, or nothing at all (sys.stderr None), then the original exception: a
    # hook that raised while stderr worked prints its own traceback under the header instead
    match=R(
        rf"^{_PREFIX}lost sys\.stderr\s*$|^{_PREFIX}Error in sys\.excepthook:[ \t]*\n"
        rf"(?!{_PREFIX}\s*Traceback \(most recent call last\))(?:[^\n]*\n){{0,8}}?{_PREFIX}Original exception was:",
        re.M,
    ),
    span=12,
    facts=(
        R(
            rf"Original exception was:\s*\n(?:{_PREFIX}object [^\n]*\n){{0,4}}{_PREFIX}object repr\s*: "
            r"(?P<lost_exception>[\w.]{1,100}\([^\n]{0,300}\))"
        ),
    ),
    describe=_lost,
)

RECOGNISERS = (LOST_STDERR,)
