"""Whether debug mode is on and how long a rank waits for the others: ``TORCHDOCTOR_DEBUG_MODE`` (else
accelerate's ``ACCELERATE_DEBUG_MODE``) and ``TORCHDOCTOR_DEBUG_TIMEOUT`` (else ``enable(timeout)``'s, else 300 s).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from torchdoctor import environment

DEFAULT_TIMEOUT = 300.0
TRUE_VALUES = environment.ON_VALUES
ACCELERATE_TRUE_VALUES = environment.ACCELERATE_ON_VALUES  # accelerate's str_to_bool
_timeout_override: float | None = None  # enable(timeout) sets it, disable() forgets it


def set_timeout(seconds: float | None) -> None:
    """Make ``seconds`` the debug-mode timeout instead of ``TORCHDOCTOR_DEBUG_TIMEOUT``'s (None: read it again)."""
    global _timeout_override
    _timeout_override = seconds


def debug_mode_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``TORCHDOCTOR_DEBUG_MODE`` (else ``ACCELERATE_DEBUG_MODE``) asks for debug mode (``1``, ``true``,
    ``yes``, ``on``)."""
    return debug_mode_source(environ) is not None


def debug_mode_source(environ: Mapping[str, str] | None = None) -> str | None:
    """The variable that turns debug mode on, or None when it is off.

    ``TORCHDOCTOR_DEBUG_MODE`` decides when it is set (``0`` turns debug mode off even under
    ``ACCELERATE_DEBUG_MODE=1``); else ``ACCELERATE_DEBUG_MODE``, read as accelerate reads it.

    >>> debug_mode_source({"ACCELERATE_DEBUG_MODE": "yes"})
    'ACCELERATE_DEBUG_MODE'
    """
    environ = os.environ if environ is None else environ
    ours = environment.is_on("TORCHDOCTOR_DEBUG_MODE", environ)  # BadEnvironment for a value such as 'banana'
    if ours is not None:
        return "TORCHDOCTOR_DEBUG_MODE" if ours else None
    if environment.is_on("ACCELERATE_DEBUG_MODE", environ):
        return "ACCELERATE_DEBUG_MODE"
    return None


def debug_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a rank waits for the others at a checked collective: ``enable(timeout)``, else
    ``TORCHDOCTOR_DEBUG_TIMEOUT``, else 300.

    >>> debug_timeout({"TORCHDOCTOR_DEBUG_TIMEOUT": "30"})
    30.0
    """
    if _timeout_override is not None and environ is None:
        return _timeout_override
    environ = os.environ if environ is None else environ
    value = environ.get("TORCHDOCTOR_DEBUG_TIMEOUT", "").strip()
    if not value:
        return DEFAULT_TIMEOUT
    environment.require_valid(["TORCHDOCTOR_DEBUG_TIMEOUT"], environ)
    return float(value)
