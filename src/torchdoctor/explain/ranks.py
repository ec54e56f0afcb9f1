"""Which rank a log belongs to, and which rank the others waited for.

When a collective times out, the ranks that print the timeout are the ones that *waited*; the cause is the
rank that never got there: the one with no timeout line of its own, the one that failed first, or the one
whose last completed collective is the lowest.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from torchdoctor.explain.recognisers import Context, Hit

_RANK_IN_NAME = re.compile(r"(?i)(?:^|[^a-z])(?:rank|worker|proc|task)[_\-.]?(\d{1,6})(?!\d)")
# SLURM's %t (``job_%j.%t.out``): a number after a separator, just before the extension (or at the end); a
# number the name starts with (``010_oom.txt``, a list of unrelated logs) or a date's day says nothing of a rank
_TASK_NUMBER = re.compile(r"(?<=.[._\-])(?<!\d{4}-\d\d-)(\d{1,6})(?=(?:\.[A-Za-z]\w{0,9})?$)")
# torchrun --log-dir: <dir>/<run id>/attempt_<n>/<local rank>/{stdout,stderr}.log (error.json beside them)
_ATTEMPT = re.compile(r"attempt_\d{1,4}")
_TORCHRUN_FILES = {"stdout.log", "stderr.log", "error.json"}


def _torchrun_rank(path: Path) -> int | None:
    """The local rank of a file in torchrun's --log-dir layout, else None."""
    folder = path.parent.name
    if not (folder.isdigit() and len(folder) <= 6):
        return None
    if _ATTEMPT.fullmatch(path.parent.parent.name) or path.name in _TORCHRUN_FILES:
        return int(folder)
    return None


def ranks_from_paths(files: list[Path]) -> dict[Path, int]:
    """The rank each per-rank log file belongs to, where its path says so.

    torchrun ``--log-dir``: ``.../attempt_0/3/stderr.log``; a name that says rank (``rank3``, ``rank-3``,
    ``worker_3.log``, ``node0_rank3.log``); SLURM's ``%t``: files that differ only in their last number, put
    after a separator just before the extension (``job.0.out``, ``job.1.out``). A number the name starts
    with (``010_oom.txt``, ``011_oom.txt``) is a file's place in a list, not a rank.

    >>> ranks_from_paths([Path("run/attempt_0/0/stderr.log"), Path("run/attempt_0/1/stderr.log")])
    {PosixPath('run/attempt_0/0/stderr.log'): 0, PosixPath('run/attempt_0/1/stderr.log'): 1}
    >>> ranks_from_paths([Path("logs/010_oom.txt"), Path("logs/011_oom.txt")])
    {}
    """
    found: dict[Path, int] = {}
    groups: dict[tuple[Path, str], list[tuple[Path, int]]] = {}
    for path in files:
        local = _torchrun_rank(path)
        if local is not None:
            found[path] = local
            continue
        named = _RANK_IN_NAME.search(path.name)
        if named:
            found[path] = int(named.group(1))
            continue
        last = _TASK_NUMBER.search(path.name)
        if last:
            shape = path.name[: last.start()] + "#" + path.name[last.end() :]
            groups.setdefault((path.parent, shape), []).append((path, int(last.group(1))))
    for members in groups.values():
        numbers = {n for _, n in members}
        if len(members) >= 2 and len(numbers) == len(members):
            found.update(dict(members))
    return found


def hit_rank(hit: Hit) -> int | None:
    """The rank of a hit: from its file or line prefix, else from the message's own ``[Rank N]``."""
    if hit.rank is not None:
        return hit.rank
    named = hit.facts.get("msg_rank")
    return int(named) if named is not None else None


def timeout_story(hits: list[Hit], ctx: Context) -> dict:
    """What the timeout lines of every rank say together: the collective, who waited, who never came."""
    per_rank: dict[int, dict] = {}
    loose: dict = {}
    for hit in hits:
        rank = hit_rank(hit)
        target = per_rank.setdefault(rank, {}) if rank is not None else loose
        for key, value in hit.facts.items():
            target.setdefault(key, value)
    everyone = [*per_rank.values(), loose]
    works = Counter((f.get("op"), f.get("seq")) for f in everyone if f.get("op") or f.get("seq"))
    (op, seq), _ = works.most_common(1)[0] if works else ((None, None), 0)
    same = next((f for f in everyone if f.get("op") == op and f.get("seq") == seq), loose)
    numel = ", ".join(f"{k}={same[k]}" for k in ("numel_in", "numel_out") if same.get(k))
    numel = numel.replace("numel_in", "NumelIn").replace("numel_out", "NumelOut")
    if same.get("shape"):
        numel = (numel + ", " if numel else "") + f"TensorShape=[{same['shape']}]"
    groups: dict[tuple, list[int]] = {}
    for rank, facts in sorted(per_rank.items()):
        if facts.get("op") or facts.get("seq"):
            groups.setdefault((facts.get("op"), facts.get("seq")), []).append(rank)
    timeouts = [f.get("timeout_ms") for f in everyone if f.get("timeout_ms")]
    timed_out = sorted(per_rank)
    completed = {r: int(f["last_completed"]) for r, f in per_rank.items() if f.get("last_completed")}
    story = {
        "op": op,
        "seq": seq,
        "numel": numel,
        "timeout_ms": timeouts[0] if timeouts else None,
        "timed_out": timed_out,
        "last_completed": min(completed.values()) if completed else _int(loose.get("last_completed")),
        "pg": next(
            (f.get("pg_name") or f.get("pg") for f in everyone if f.get("pg") or f.get("pg_name")), None
        ),
        "stuck_s": next((f["stuck_s"] for f in everyone if f.get("stuck_s")), None),
        "groups": groups,
        "late": [],
        "late_why": "",
    }
    failed = sorted(r for r in ctx.cause_ranks if r not in timed_out)
    silent = sorted(r for r in ctx.ranks if r not in per_rank and r not in failed)
    # the ranks torchrun's summary names (console: the ranks' own lines may carry no rank) and how each ended:
    # one it stopped with SIGTERM (-15) that printed no timeout was still running, elsewhere, with no error
    exits = ctx.facts.get("launcher_exits", {})
    stopped = sorted(r for r, code in exits.items() if code == -15 and r not in per_rank and r not in failed)
    # every rank the summary names waited in it: none was elsewhere (the collective itself never completed)
    story["all_waited"] = len(timed_out) > 1 and bool(exits) and set(exits) <= set(timed_out)
    if failed:
        # the exit warning leads where the watchdog timed out after it (kinds/ranks.exit_hang): that rank did not
        # fail, it had ended its script and was exiting
        late_why = (
            "it had left the training and was exiting" if ctx.facts.get("exit_hang") else "it failed first"
        )
        story["late"], story["late_why"] = failed, late_why
    elif silent and timed_out:
        story["late"], story["late_why"] = silent, "no timeout line in its log"
    elif stopped and timed_out:
        story["late"] = stopped
        story["late_why"] = (
            "still running, without an error of its own, when torchrun stopped the job: SIGTERM"
        )
    elif len(completed) > 1 and len(set(completed.values())) > 1:
        lowest = min(completed.values())
        story["late"] = sorted(r for r, c in completed.items() if c == lowest)
        others = max(completed.values())
        story["late_why"] = f"its last completed work is {lowest}, the others' {others}"
    else:
        seqs = {r: int(f["seq"]) for r, f in per_rank.items() if f.get("seq")}
        if len(set(seqs.values())) > 1:
            lowest = min(seqs.values())
            story["late"] = sorted(r for r, s in seqs.items() if s == lowest)
            story["late_why"] = f"it waits in work {lowest}, the others further on"
    return story


def _int(value) -> int | None:
    return int(value) if value is not None else None
