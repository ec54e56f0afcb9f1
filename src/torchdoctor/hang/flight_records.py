"""The ranks' flight-recorder records in the watchdog: a rank dumps its own when asked (or says why it has
none), the launcher reads every worker's back from the watchdog's folder, joined with the call sites the
workers noted (`torchdoctor.hang.calls`); in library mode a rank sends a digest of its newest entries.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path

from torchdoctor.hang import calls

# The launcher creates this file in its folder to ask every worker for its flight-recorder dump.
FLIGHT_RECORDER_REQUEST = "flight-recorder.request"
# torch's names for the recorder's ring buffer size, new and old; a user's own setting is left alone.
FLIGHT_RECORDER_VARIABLES = ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
FLIGHT_RECORDER_ENTRIES = 2000


def write_flight_record(base: Path | str, stack_wait: float = 2.0) -> None:
    """Write this process's flight-recorder dump to ``<base>.fr`` (whole, or not at all), or ``<base>.fr-none``
    when it has none (torch.distributed never loaded, or the dump failed: the reason is in the file)."""
    data, why = own_flight_record(stack_wait)
    try:
        if data:
            Path(f"{base}.fr.tmp").write_bytes(data)
            os.replace(f"{base}.fr.tmp", f"{base}.fr")
        else:
            Path(f"{base}.fr-none").write_text(why)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def has_flight_recorder(c10d) -> bool:
    """Whether this torch (its ``torch._C._distributed_c10d``) can dump its flight recorder for every backend:
    torch 2.4 has only ``_dump_nccl_trace``, and no recorder for gloo."""
    return hasattr(c10d, "_dump_fr_trace")


# torch keeps two recorders: NCCL's process groups write to their own (``_dump_nccl_trace``), the others (gloo)
# to the one ``_dump_fr_trace`` dumps. On an H200 (torch 2.11) a one-rank NCCL hang's ``_dump_fr_trace`` was empty
# and its ``_dump_nccl_trace`` held the collective that never completed: both are asked, and joined.
RECORDERS = ("_dump_nccl_trace", "_dump_fr_trace")


def own_flight_record(stack_wait: float = 2.0) -> tuple[bytes, str]:
    """This process's flight-recorder dump (torch's pickle: NCCL's recorder and the other backends' joined), or
    ``b""`` and why there is none."""
    c10d = sys.modules.get("torch._C._distributed_c10d")
    if c10d is None:
        return b"", "torch.distributed was never used"
    if not has_flight_recorder(c10d):
        import torch

        return b"", f"torch {torch.__version__} has no flight recorder to dump (no _dump_fr_trace)"
    dumps, why = [], ""
    for name in RECORDERS:
        dump = getattr(c10d, name, None)
        if dump is None:
            continue
        try:
            dumps.append(_dump_with_stacks(dump, stack_wait))
        except Exception as error:  # noqa: BLE001 - an old torch, a backend without a recorder: the stacks still speak
            why = why or f"{type(error).__name__}: {error}"
    if not dumps:
        return b"", why
    return _joined(dumps), ""


def _dump_with_stacks(dump, stack_wait: float) -> bytes:
    """One recorder's dump. With a gloo collective in flight, writing out the recorded Python stacks can wait
    for that collective to end (torch 2.13), which at a hang is never: give it ``stack_wait`` seconds, then dump
    without them."""
    whole: list = []
    asking = threading.Thread(target=lambda: whole.append(dump()), daemon=True)
    asking.start()
    asking.join(stack_wait)
    return whole[0] if whole else dump(includeStackTraces=False)


def _joined(dumps: list[bytes]) -> bytes:
    """One dump of several recorders' (this process's own, so unpickled as they are): their entries, process
    groups and statuses together; a recorder with no entries adds nothing."""
    if len(dumps) == 1:
        return dumps[0]
    import pickle

    loaded = [pickle.loads(d) for d in dumps]  # noqa: S301 - this process's own recorder, not a stranger's file
    kept = [d for d in loaded if isinstance(d, dict) and d.get("entries")]
    if len(kept) <= 1:
        return dumps[loaded.index(kept[0])] if kept else dumps[0]
    joined = dict(kept[0])
    joined["entries"] = [entry for d in kept for entry in d["entries"]]
    for key in ("pg_config", "pg_status"):
        joined[key] = {k: v for d in kept for k, v in (d.get(key) or {}).items()}
    return pickle.dumps(joined)


def own_digest(rank: int) -> dict:
    """This rank's newest flight-recorder entries for a library-mode report (``{"record": digest}``), when the
    user turned the recorder on (``TORCH_FR_BUFFER_SIZE``); else ``{"record": None}``, with why there is
    none (``"no_record"``) when the user turned it on and this torch cannot dump it."""
    if not any(os.environ.get(name, "0") not in ("", "0") for name in FLIGHT_RECORDER_VARIABLES):
        return {"record": None}
    data, why = own_flight_record()
    if not data:
        return {"record": None, "no_record": why}
    from torchdoctor.explain import safe_pickle
    from torchdoctor.explain.flight_recorder.digest import digest
    from torchdoctor.explain.flight_recorder.records import parse

    try:
        return {"record": digest(parse(safe_pickle.loads(data).data, rank))}
    except (ValueError, TypeError) as error:
        return {"record": None, "no_record": f"its dump did not read: {error}"}


def answered(base: Path) -> bool:
    """Whether the worker whose files start with ``base`` answered the request for its dump."""
    return Path(f"{base}.fr").exists() or Path(f"{base}.fr-none").exists()


def began_answering(base: Path, asked_ns: int) -> bool:
    """Whether the worker whose files start with ``base`` began to answer the request made at ``asked_ns``
    (its ``st_mtime_ns``): a Python thread of it ran since, writing its counts (``<base>.counts``, the first
    thing its answer writes, before the dump that may take seconds)."""
    try:
        return Path(f"{base}.counts").stat().st_mtime_ns >= asked_ns
    except OSError:
        return False


def read_flight_records(directory: Path, notes: dict[int, list[str]] | None = None) -> dict:
    """Rank -> `RankRecord` for every ``rank<N>.fr`` in ``directory`` that reads (the workers wrote them,
    but they are still read as plain data only), with the call sites of ``rank<N>.calls`` filled in where
    the dump has no stacks. Why a rank has no record goes into ``notes`` (rank -> reasons)."""
    from torchdoctor.explain import safe_pickle
    from torchdoctor.explain.flight_recorder.records import fill_call_sites, from_calls, read_dump

    notes = {} if notes is None else notes
    records = {}
    for path in sorted(directory.glob("rank*.fr")):
        try:
            record = read_dump(path)
        except (OSError, ValueError, safe_pickle.UnsafePickle) as error:
            rank = _rank_of(path)
            notes.setdefault(rank, []).append(f"its dump {path.name} was not read: {error}")
            continue
        if record.truncated:
            notes.setdefault(record.rank, []).append(
                f"its dump {path.name} is cut off; read what is before the cut"
            )
        records[record.rank] = record
    for path in sorted(directory.glob("rank*.fr-none")):
        rank = _rank_of(path)
        if rank not in records:
            try:
                why = path.read_text(errors="replace").strip()
            except OSError as error:
                why = error.strerror or str(error)
            notes.setdefault(rank, []).append(f"it wrote no dump: {why}")
    for path in sorted(directory.glob("rank*.calls")):
        rank = _rank_of(path)
        try:
            noted = calls.read_calls(path)
        except (OSError, ValueError, TypeError) as error:
            notes.setdefault(rank, []).append(f"its call sites {path.name} were not read: {error}")
            continue
        if rank in records and any(records[rank].collectives.values()):
            fill_call_sites(records[rank], noted)
        elif noted:  # no dump (killed, stopped, cut away), or an empty one (TORCH_FR_BUFFER_SIZE=0): what it
            # called still compares
            records[rank] = from_calls(rank, noted, str(path))
            # where each group's newest noted call is the rank's newest collective there, a later one it
            # lacks was never entered (not a call made in C++, which the log does not see: DDP's, a backward's)
            counts = calls.read_counts(path.with_suffix(".counts"))
            records[rank].truncated = not counts or any(
                counts.get(pg) != max(call.last for call in called) for pg, called in noted.items()
            )
    return records


def _rank_of(path: Path) -> int:
    match = re.match(r"rank(\d+)\.", path.name)
    return int(match[1]) if match else -1


def why_no_dumps(directory: Path) -> str:
    """Why there are no flight-recorder dumps, as the workers said (``rank<N>.fr-none``), when one can tell."""
    for path in sorted(directory.glob("rank*.fr-none")):
        try:
            why = path.read_text().strip()
        except OSError:  # the launcher removed its folder: the run is over anyway
            return ""
        if "no flight recorder" in why:
            return f"; no flight-recorder dumps ({why}): the verdict rests on the stacks"
    return ""
