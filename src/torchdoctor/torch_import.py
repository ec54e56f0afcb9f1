"""Importing torch once, safely: an environment that breaks ``import torch`` is a finding, not a crash.

When ``import torch`` raises (``TORCH_DISTRIBUTED_DEBUG=ALL``, ``TORCH_LOGS=bogus``), torch has already
registered parts of itself in C++; a second ``import torch`` in the same process then aborts it (SIGABRT).
So the commands that diagnose a machine import torch here first: a failure is kept, and every later
``import torch`` in the process gets a plain ``ImportError`` that the checks report as "needs torch".
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Mapping

# Variables torch reads while it is imported, what it accepts, and a word that names them in its error.
KNOWN_VARIABLES = {
    "TORCH_DISTRIBUTED_DEBUG": ("OFF, INFO or DETAIL", "export TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    "TORCH_LOGS": (
        "a comma-separated list of log names, e.g. +dynamo,recompiles (the list: "
        "https://pytorch.org/docs/stable/logging.html)",
        "export TORCH_LOGS=recompiles",
    ),
}
_RECOGNISED_BY = {"Invalid log settings": "TORCH_LOGS"}

_tried = False
_failure: str | None = None
_traceback = ""


def import_torch() -> str | None:
    """Import torch in this process, once; return ``None`` when it worked, else what went wrong
    (``"ValueError: The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL."``)."""
    global _tried, _failure, _traceback
    if _tried or sys.modules.get("torch") is not None:
        return _failure
    _tried = True
    try:
        import torch  # noqa: F401
    except Exception as error:  # noqa: BLE001 - whatever breaks `import torch` becomes a finding, not a crash
        said = _first_sentence(str(error))
        _failure = f"{type(error).__name__}: {said}" if said else type(error).__name__
        _traceback = traceback.format_exc()
        sys.modules["torch"] = None  # later imports raise ImportError instead of aborting the process
        return _failure
    torch = sys.modules["torch"]
    if not hasattr(torch, "__version__"):  # a torch.py or torch/ of the user's, found first on the path
        _failure = f"ImportError: import torch took {getattr(torch, '__file__', None) or 'a module'}, not the installed torch"
        sys.modules["torch"] = None
    return _failure


def _first_sentence(message: str, limit: int = 240) -> str:
    """The first sentence of a (possibly many-line) error message, on one line."""
    text = " ".join(message.split())
    end = re.search(r"[.!?](\s|$)", text)
    text = text[: end.end()].strip() if end else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def import_failure() -> str | None:
    """What went wrong when this process imported torch through `import_torch` (``None``: nothing)."""
    return _failure


def import_traceback() -> str:
    """The traceback of the failed import (empty when it did not fail)."""
    return _traceback


def blamed_variables(failure: str, trace: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """The ``TORCH_*``/``PYTORCH_*`` variables set in ``environ`` that the failed import names."""
    environ = os.environ if environ is None else environ
    text = f"{failure}\n{trace}"
    named = [name for word, name in _RECOGNISED_BY.items() if word in text]
    named += re.findall(r"\b((?:PY)?TORCH_[A-Z0-9_]+)\b", text)
    return [name for name in dict.fromkeys(named) if name in environ]


def fix_for(variables: list[str], environ: Mapping[str, str] | None = None) -> str:
    """The shell lines that correct (or drop) ``variables``; without any, how to find the culprit."""
    environ = os.environ if environ is None else environ
    if not variables:
        suspects = sorted(n for n in environ if n.startswith(("TORCH_", "PYTORCH_")))
        lines = ['python -c "import torch"  # shows the whole error']
        if suspects:
            lines.append(
                f"# set now: {', '.join(suspects)}; unset them one at a time to find the one torch refuses"
            )
        return "\n".join(lines + ["pip install --force-reinstall torch  # if no variable is to blame"])
    lines = []
    for name in variables:
        accepted, example = KNOWN_VARIABLES.get(name, ("", ""))
        if accepted:
            lines += [
                f"# {name} is {environ[name]!r}; torch takes {accepted}",
                f"{example}  # or: unset {name}",
            ]
        else:
            lines.append(f"unset {name}")
    return "\n".join(lines)
