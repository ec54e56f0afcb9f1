"""torchdoctor: finds out why a PyTorch training run is broken, and says how to fix it.

The public API is re-exported here and imported lazily, so ``import torchdoctor`` stays cheap and never
imports optional integrations.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "Finding": "torchdoctor.findings",
    # numerics
    "DebugUnderflowOverflow": "torchdoctor.numerics.detector",
    "detect_overflow": "torchdoctor.numerics.detector",
    "keep_in_fp32": "torchdoctor.numerics.fp32",
    # distributed
    "get_logger": "torchdoctor.distributed.logging",
    "set_trigger": "torchdoctor.distributed.trigger",
    "check_trigger": "torchdoctor.distributed.trigger",
    "set_breakpoint": "torchdoctor.distributed.trigger",
    "check_breakpoint": "torchdoctor.distributed.trigger",
    "watch_for_hangs": "torchdoctor.hang.watch",
    "heartbeat": "torchdoctor.hang.progress",
    "watch_for_stragglers": "torchdoctor.stragglers.watch",
    # memory and reproducibility
    "find_executable_batch_size": "torchdoctor.memory",
    "seed_everything": "torchdoctor.reproducibility",
    "scale_setup": "torchdoctor.reproducibility",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'torchdoctor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
