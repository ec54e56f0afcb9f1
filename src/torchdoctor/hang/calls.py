"""The call sites of a worker's collectives, kept where a dead or stuck rank cannot take them away.

torch's flight recorder knows each collective's Python stack, but it cannot always give it back: with a gloo
collective in flight, torch 2.13 holds the recorded stacks back (`watchdog.own_flight_record` then dumps
without them), and a rank that was killed or called ``os._exit`` leaves no dump at all. So under
``torchdoctor launch --watchdog`` each worker also notes, for the newest collectives it called through
``torch.distributed``: the process group, the sequence numbers the call used (torch's own count, the flight
recorder's ``collective_seq_id``), the operation and the caller's frames. The watchdog's sampler thread writes
them to ``rank<N>.calls`` at most once a second, so a rank that dies leaves its calls up to a second before.
"""

from __future__ import annotations

import collections
import inspect
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torchdoctor.hang.source import Frame

# The collectives a script calls by name; the ones built on others (``*_object``) count every call they make.
RECORDED = (
    "all_reduce all_gather all_gather_into_tensor all_gather_object all_to_all all_to_all_single barrier "
    "broadcast broadcast_object_list gather gather_object reduce reduce_scatter reduce_scatter_tensor "
    "scatter scatter_object_list monitored_barrier"
).split()
KEEP = 64  # calls kept: a hang or a failure is decided by the newest few
FRAMES = 12  # caller frames kept per call, innermost first

_calls: collections.deque = collections.deque(maxlen=KEEP)
_originals: dict[str, Callable] = {}
_changes = [0, 0]  # calls noted or returned so far, and that count when the file was last written


def record_calls(dist: Any) -> None:
    """Wrap ``dist``'s (``torch.distributed``'s) collectives so that each call notes its call site. Idempotent."""
    if _originals:
        return
    for name in RECORDED:
        original = getattr(dist, name, None)
        if original is None:
            continue
        try:
            group_at = list(inspect.signature(original).parameters).index("group")
        except ValueError:  # this torch's function takes no group: the default group is the one
            group_at = -1
        _originals[name] = original
        setattr(dist, name, _noting(dist, name, original, group_at))


def _noting(dist: Any, name: str, original: Callable, group_at: int) -> Callable:
    def wrapper(*args, **kwargs):
        group = kwargs.get("group", args[group_at] if 0 <= group_at < len(args) else None)
        try:
            pg = group if group is not None else dist.distributed_c10d._get_default_group()
            before = pg._get_sequence_number_for_group()
            call = [pg.group_name, before, before, name, _caller_frames()]
        except Exception:  # noqa: BLE001 - no group yet, or a torch without these: the call itself says why
            return original(*args, **kwargs)
        _calls.append(call)
        _changes[0] += 1
        try:
            return original(*args, **kwargs)
        finally:
            try:
                call[2] = pg._get_sequence_number_for_group()
                _changes[0] += 1
            except Exception:  # noqa: BLE001 - the group was destroyed meanwhile; the count stays open
                pass

    wrapper.__wrapped__ = original
    wrapper.__name__ = name
    return wrapper


def _caller_frames() -> list:
    frame, frames = sys._getframe(2), []
    while frame is not None and len(frames) < FRAMES:
        frames.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return frames


def write_calls(path: Path | str) -> None:
    """Write the calls noted so far to ``path`` (whole, or not at all), when there are new ones."""
    count = _changes[0]
    if count == _changes[1]:
        return
    rows = [list(call) for call in list(_calls)]
    try:
        Path(f"{path}.tmp").write_text(json.dumps(rows))
        os.replace(f"{path}.tmp", path)
    except OSError:  # the launcher removed its folder: the run is over anyway
        return
    _changes[1] = count


def read_calls(path: Path) -> dict[str, list[tuple[int, int, str, list[Frame]]]]:
    """Process group -> its calls, oldest first: ``(first_seq, last_seq, operation, frames outermost first)``;
    ``last_seq`` equals ``first_seq`` while the call has not returned. Raises ``OSError`` or ``ValueError``
    with what is wrong with the file."""
    rows = json.loads(path.read_text())
    if not isinstance(rows, list):
        raise ValueError("not a list of calls")
    groups: dict[str, list] = {}
    for row in rows:
        if not (
            isinstance(row, list) and len(row) == 5 and isinstance(row[1], int) and isinstance(row[2], int)
        ):
            raise ValueError(f"a call that does not read: {str(row)[:80]}")
        pg, before, after, op, frames = row
        groups.setdefault(str(pg), []).append(
            (
                before + 1,
                max(after, before + 1),
                str(op),
                [Frame(str(f), int(n), str(c)) for f, n, c in frames][::-1],
            )
        )
    return groups
