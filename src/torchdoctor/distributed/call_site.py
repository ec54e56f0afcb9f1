"""Where a collective is called: the innermost line of the user's own code (`hang.source.is_user_code`, as
the hang report decides), kept as a cheap key on the hot path and written as ``file:line in function``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from torchdoctor.hang.source import is_user_code_object, known_code

_site_names: dict[str, str] = {}  # code filename -> how errors show it

# Collectives that torch's uneven-inputs support (`torch.distributed.algorithms.Join`, DDP's `model.join()`)
# pairs across ranks from different lines by design: a rank still training calls them from its forward, one
# that ran out of batches from the end of its `with model.join():` (torch/distributed/algorithms/join.py,
# torch/nn/parallel/distributed.py). Their site is the same on every rank: `TORCH_PAIRED`.
_PAIRED_BY_TORCH = frozenset(
    {
        "notify_join_context",
        "_get_num_nonjoined_procs",
        "_notify_procs_to_terminate",
        "_check_global_requires_backward_grad_sync",
        "_find_common_rank",
    }
)
TORCH_PAIRED = (0, 0)


def call_site() -> str:
    """``file:line in function`` of the innermost caller in the user's own code (`hang.source.is_user_code`,
    as the hang report decides): the user's line, not an installed library's or torchdoctor's."""
    return site_text(site_key(sys._getframe(1)))


def site_key(frame: Any) -> tuple[int, int] | None:
    """(id of the code object, line) of the innermost frame from ``frame`` out that is the user's code: cheap to
    repeat (`hang.source.is_user_code_object` remembers its verdict per code object, by id). `TORCH_PAIRED`
    for a collective that torch's Join machinery calls itself (``frame`` is its caller)."""
    if frame is not None and frame.f_code.co_name in _PAIRED_BY_TORCH and _is_torchs(frame.f_code):
        return TORCH_PAIRED
    while frame is not None:
        code = frame.f_code
        if is_user_code_object(code):
            return id(code), frame.f_lineno
        frame = frame.f_back
    return None


def site_text(site: tuple[int, int] | None) -> str:
    """``file:line in function`` for a key of `site_key`; ``<unknown>`` for none."""
    if site is None:
        return "<unknown>"
    if site == TORCH_PAIRED:
        return "torch's Join (DDP's model.join(): it pairs these calls across ranks itself)"
    code, line = known_code(site[0]), site[1]
    if code is None:
        return "<unknown>"
    name = _site_names.get(code.co_filename)
    if name is None:
        name = _site_names[code.co_filename] = _short_path(code.co_filename)
    return f"{name}:{line} in {code.co_name}"


def _is_torchs(code: Any) -> bool:
    path = code.co_filename.replace(os.sep, "/")
    return path.endswith(("torch/distributed/algorithms/join.py", "torch/nn/parallel/distributed.py"))


def _short_path(filename: str) -> str:
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
