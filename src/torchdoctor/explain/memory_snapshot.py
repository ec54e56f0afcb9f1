"""A CUDA memory snapshot (``torch.cuda.memory._snapshot()``, ``_dump_snapshot()``'s pickle) read as a finding:
per GPU what the allocator holds and what of it is in use, the largest free block, the lines that hold the most,
and the out-of-memory events its history kept, with the line that asked. Read without unpickling anything but
plain data (`torchdoctor.explain.safe_pickle`): a snapshot is a stranger's file like any other.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from torchdoctor.findings import Finding
from torchdoctor.hang.source import is_user_code

GIB = 2**30
TOP = 3  # the lines holding the most memory that are named


def is_snapshot(data: Any) -> bool:
    """Whether unpickled ``data`` is a memory snapshot: torch's dict of ``segments`` and ``device_traces``."""
    return isinstance(data, dict) and isinstance(data.get("segments"), list) and "device_traces" in data


def snapshot_findings(path: Path, data: dict) -> list[Finding]:
    """One ``log.memory_snapshot`` finding per GPU the snapshot covers."""
    devices = sorted({s.get("device", 0) for s in _dicts(data["segments"])})
    traces = data.get("device_traces") or []
    settings = data.get("allocator_settings") if isinstance(data.get("allocator_settings"), dict) else {}
    for device, trace in enumerate(traces):
        if trace and device not in devices:
            devices.append(device)
    return [_device_finding(path, data, device, settings) for device in devices]


def _device_finding(path: Path, data: dict, device: int, settings: dict) -> Finding:
    segments = [s for s in _dicts(data["segments"]) if s.get("device", 0) == device]
    blocks = [b for s in segments for b in _dicts(s.get("blocks"))]
    reserved = sum(_size(s.get("total_size")) for s in segments)
    allocated = sum(_size(b.get("size")) for b in blocks if str(b.get("state", "")).startswith("active"))
    free_blocks = [_size(b.get("size")) for b in blocks if b.get("state") == "inactive"]
    largest_free = max(free_blocks, default=0)
    holders: dict[str, int] = defaultdict(int)
    for block in blocks:
        if str(block.get("state", "")).startswith("active"):
            holders[_user_line(block.get("frames")) or "unknown (no Python frame recorded)"] += _size(
                block.get("size")
            )
    traces = data.get("device_traces") or []
    trace = _dicts(traces[device]) if device < len(traces) and isinstance(traces[device], list) else []
    ooms = [entry for entry in trace if entry.get("action") == "oom"]
    summary = (
        f"memory snapshot of GPU {device}: {_gib(allocated)} in use in {len(segments)} segment(s) holding "
        f"{_gib(reserved)} ({_gib(reserved - allocated)} held but free, the largest free block {_gib(largest_free)})"
    )
    top = sorted(holders.items(), key=lambda item: -item[1])[:TOP]
    if top:
        summary += "; most held by " + ", ".join(f"{line} ({_gib(size)})" for line, size in top)
    details: dict[str, Any] = {
        "file": str(path),
        "device": device,
        "reserved_bytes": reserved,
        "allocated_bytes": allocated,
        "largest_free_block_bytes": largest_free,
        "holders": dict(top),
        "out_of_memory_events": len(ooms),
        "expandable_segments": settings.get("expandable_segments"),
    }
    fix = []
    if ooms:
        last = ooms[-1]
        asked, free = _size(last.get("size")), _size(last.get("device_free"))
        where = _user_line(last.get("frames"))
        summary += (
            f"; {len(ooms)} out-of-memory event(s) in its history, the last asking {_gib(asked)} with "
            f"{_gib(free)} free on the GPU" + (f" at {where}" if where else "")
        )
        details |= {"last_request_bytes": asked, "last_device_free_bytes": free, "last_request_at": where}
        if reserved - allocated >= asked and largest_free < asked and not settings.get("expandable_segments"):
            fix.append(
                f"The allocator held {_gib(reserved - allocated)} free, enough for the request, but in pieces "
                "(fragmentation): export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
            )
    if top:
        fix.append(
            f"What holds the most is {top[0][0]}: free what it keeps when no longer needed, or make it smaller "
            "(a smaller batch, fp16/bf16, gradient checkpointing, sharding)."
        )
    return Finding("log.memory_snapshot", "warn" if ooms else "ok", summary, details, "\n".join(fix))


def _dicts(items: Any) -> list[dict]:
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _size(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _gib(size: int) -> str:
    return f"{size / GIB:.2f} GiB"


def _user_line(frames: Any) -> str:
    """``file:line in function`` of the innermost user frame (the snapshot lists frames innermost first, C++
    and Python mixed); empty when none was recorded."""
    for frame in _dicts(frames):
        name = str(frame.get("filename", ""))
        line = frame.get("line")
        if name.endswith(".py") and isinstance(line, int) and line > 0 and is_user_code(name):
            return f"{name}:{line} in {frame.get('name', '?')}"
    return ""
