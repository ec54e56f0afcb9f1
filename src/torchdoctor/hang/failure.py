"""A verdict for a job that failed rather than hung: which rank failed first, where, and which failed after it.

When one rank dies, the others fail as its consequence ("Connection closed by peer" in their collective),
and torchrun's "first observed failure" is often one of those victims: it cannot tell them apart. The
watchdog's folder can: a rank whose script raised left ``rank<N>.done`` with its error, where and when; a
rank that was killed (SIGKILL: the out-of-memory killer) or left through ``os._exit`` left no ``.done`` at
all, only where it was last seen moving (``rank<N>.where``) and its collectives' call sites (``.calls``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from torchdoctor.explain.flight_recorder.compare import disagreements
from torchdoctor.explain.flight_recorder.records import from_calls
from torchdoctor.hang.calls import read_calls
from torchdoctor.hang.files import RankFiles, ranks_with_files, written_at
from torchdoctor.hang.joined_verdict import mismatch_verdict
from torchdoctor.hang.places import collective_of
from torchdoctor.hang.source import Frame, condition_on_chain, enclosing_loop, is_user_code
from torchdoctor.hang.stacks import dumps_in, forked_helper
from torchdoctor.hang.verdict import ON_EVERY_RANK, UNEVEN_ITERATIONS, Verdict
from torchdoctor.rank_list import who

# A collective that failed because a peer went away: the consequence, never the cause.
_PEER_GONE = re.compile(
    r"Connection (closed|reset) by peer|Broken pipe|Connection refused|ECONNRESET|EPIPE|"
    r"NCCL communicator was aborted|ProcessGroup.*(abort|shut ?down)|Timed out|timeout",
    re.IGNORECASE,
)
# torchrun's failure summary: ``rank      : 1 (local_rank: 1)`` then, on the next line, ``exitcode  : -9 (pid:
# 123)``. Line by line: the agent's log line "failed (exitcode: 3) local_rank: 1" must not pair rank 1 with the
# exit code of the summary's next entry (another rank's).
_SUMMARY = re.compile(r"^\s*rank\s*:\s*(\d+)[^\n]*\n\s*exitcode\s*:\s*(-?\d+)", re.M)


def finished_with(files: RankFiles) -> dict | None:
    """What ``rank<N>.done`` says: ``{"error": ..., "frames": [...], "time": ...}`` (no ``error`` when the
    script returned), or None when the rank never finished its script."""
    try:
        text = files.done.read_text()
    except OSError:
        return None
    try:
        said = json.loads(text) if text.strip() else {}
    except ValueError:
        said = {}
    return said if isinstance(said, dict) else {}


def exit_codes(torchrun_output: str) -> dict[int, int]:
    """Rank -> exit code, from torchrun's failure summary (negative: the signal that ended it)."""
    return {int(rank): int(code) for rank, code in _SUMMARY.findall(torchrun_output)}


# gloo's enforce on a peer's message longer than this rank's buffer (pair.cc), which aborts the rank (SIGABRT)
_SIZE_MISMATCH = re.compile(
    r"Received data size doesn't match expected size|op\.preamble\.length <= op\.nbytes"
)
_GLOO_ABORT = (
    "gloo aborted it: a peer sent more data than this call expected, from another collective call or size"
)

EXITS_FILE = "torchrun.exits"  # torchrun's summary of the workers' exits, kept in the folder for `explain`


def keep_exit_codes(directory: Path, torchrun_output: str) -> None:
    """Write the exit codes of torchrun's summary into the folder, in the summary's own form: its error files
    say nothing of the ranks it stopped (``error_file: <N/A>``), and without their SIGTERM a rank stopped
    before it could raise reads as one that died on its own."""
    codes = exit_codes(torchrun_output)
    if codes:
        text = "".join(f"rank : {rank}\nexitcode : {code}\n" for rank, code in sorted(codes.items()))
        try:
            (directory / EXITS_FILE).write_text(text)
        except OSError:  # the folder is gone or full: the verdict printed now still stands
            pass


def failure_verdict(directory: Path, torchrun_output: str = "") -> Verdict | None:
    """Which rank failed first and where, from the watchdog's folder of a failed job; None when no worker
    left anything (the job failed before any script started: torchrun said why)."""
    ranks = ranks_with_files(directory)
    if not ranks:
        return None
    codes = exit_codes(torchrun_output)
    died, raised, returned = [], [], []
    for rank in ranks:
        files = RankFiles(directory, rank)
        said = finished_with(files)
        if said is None:
            died.append(rank)
        elif said.get("error"):
            raised.append((rank, said))
        else:
            returned.append(rank)
    mismatch = _mismatch_in_calls(directory, ranks)
    if mismatch is not None:  # the ranks called one collective with different tensors: that came first
        after = [r for r in ranks if r not in mismatch.culprits]
        text = mismatch.text + (
            f"\nThe job failed on it; {_who(after)} failed as its consequence."
            if mismatch.culprits
            else "\nThe job failed on it (gloo aborts a rank that receives a size it did not expect)."
        )
        return Verdict(text, "mismatch", mismatch.culprits, mismatch.where, mismatch.condition)
    # a rank torchrun stopped (SIGTERM, -15) after another failed is a victim; one that died otherwise is not
    died_alone = [r for r in died if codes.get(r) != -15]
    causes = [(r, s) for r, s in raised if not _PEER_GONE.search(s["error"])]
    causes.sort(key=lambda item: item[1].get("time", 0))
    in_call = False  # the culprit died inside its newest collective call
    told: set[int] = set()  # ranks whose own error the verdict tells: never called a consequence
    if died_alone:
        culprits = died_alone
        files = RankFiles(directory, culprits[0])
        frames = _last_seen(directory, culprits[0])
        how = _how_it_died(codes.get(culprits[0]))
        where = _user_frame(frames)
        call, call_frames = _last_call(directory, culprits[0])
        # the newer of the two: a collective call noted after the rank was last seen moving is where it died (a
        # stale "last seen in configure_optimizers" said before it, of a rank gloo aborted in its all_reduce)
        in_call = bool(call) and (written_at(files.calls) > written_at(files.where) or where is None)
        text = f"{_who(culprits)} died without a Python error ({how})"
        fatal = _where_it_died(files)
        if fatal and _user_frame(fatal):
            # faulthandler wrote where the fatal signal found it: exactly, not where it was last seen moving;
            # inside a collective (gloo's abort of its call), that call is the one the others did not make
            frames, where, in_call = fatal, _user_frame(fatal), collective_of(fatal) is not None
            text += f" at {where}"
            if _SIZE_MISMATCH.search(torchrun_output):
                text += f" ({_GLOO_ABORT})"
            # where the others were, by the error each raised (a place they were last seen is no evidence here)
            elsewhere = in_call and _others_elsewhere(
                directory, [r for r in ranks if r not in culprits], fatal, float("inf")
            )
            if elsewhere:
                text += f"; {elsewhere}"
        elif in_call:
            frames, where = call_frames, _user_frame(call_frames)
            text += f", in its last collective call, {call}"
            if _SIZE_MISMATCH.search(torchrun_output):
                text += f" ({_GLOO_ABORT})"
            elsewhere = _others_elsewhere(
                directory, [r for r in ranks if r not in culprits], call_frames, written_at(files.calls)
            )
            if elsewhere:
                text += f"; {elsewhere}"
        else:
            text += f", last seen at {where}" if where else ", and was never seen in the script's code"
            if call:
                text += f"; its last collective call was {call}"
        ended = _ended_itself(files)
        if ended:  # it ended itself: that line, exactly, and no collective call of its own was cut off
            how, frames = ended
            in_call = False
            where = _user_frame(frames) or where
            # worded as every rank that died without a Python error is, which `explain` reads back from the
            # report alone (a --log-dir without the ranks' logs: "ended itself with" was "no known failure")
            text = f"{_who(culprits)} died without a Python error (it ended itself with {how}) at {where}"
    elif not causes:  # every error was a lost peer: did a rank end while the others still trained?
        return ended_early(directory, ranks, codes)
    else:
        first, said = causes[0]
        culprits = [first]
        frames = [Frame(*f) for f in said.get("frames", [])]
        where = _user_frame(frames)
        # "...{device(type='cpu')} at train.py:213", not "...{device(type='cpu')}. at train.py:213"
        error = said["error"].rstrip(".") if where else said["error"]
        text = f"rank {first} failed first: {error}" + (f" at {where}" if where else "")
        # the other ranks that raised an error of their own: the same one (at the same line, or with the same
        # words: debug mode's, raised on every rank) is the script's on every rank (a DDP(device_ids=...) on CPU,
        # a divergence debug mode caught), not a consequence of the first; another error is told as its own
        alike = {r: _place(s) for r, s in causes[1:] if _same_failure(said, s, where)}
        culprits = sorted([first, *alike])
        there = [r for r, place in alike.items() if place == where]
        if there:
            own_words = "its own" if len(there) == 1 else "their own"
            text += f". {_who(there).capitalize()} raised the same error there, on {own_words}"
        for rank, place in alike.items():
            if place != where:
                text += f". Rank {rank} raised the same error" + (f" at {place}" if place else "")
        told = {r for r, _ in causes}
        for rank, other in causes[1:]:
            if rank not in alike:
                elsewhere = _place(other)
                text += f". Rank {rank} failed on its own too: {other['error']}" + (
                    f" at {elsewhere}" if elsewhere else ""
                )
    victims = [r for r, _ in raised if r not in culprits and r not in told]
    if victims:
        text += f". {_who(victims).capitalize()} failed after it, as its consequence (their collective lost its peer)"
    stopped = [r for r in died if r not in culprits]
    if stopped:
        text += f"; torchrun stopped {_who(stopped)}"
    condition = condition_on_chain(frames) if frames else None
    if condition:
        text += (
            f". {condition[0].file}:{condition[0].line} sits under a condition on the rank, {condition[1]}"
        )
        if (
            died_alone and in_call
        ):  # it died in a collective the condition let it make: the others never made it
            return Verdict(f"{text}. {ON_EVERY_RANK}", "failed", culprits, where, str(condition[1]))
    return Verdict(text + ".", "failed", culprits, where, str(condition[1]) if condition else "")


def ended_early(directory: Path, ranks: list[int], codes: dict[int, int] | None = None) -> Verdict | None:
    """The rank(s) whose script ended without an error of its own (returned, or ``sys.exit``) while the
    others were still in a collective, which then failed for want of them (gloo: "Connection closed by
    peer"; or at the timeout): the ranks ran different numbers of iterations. From each rank's
    ``rank<N>.done``; ``codes`` are torchrun's exit codes (a rank it stopped, -15, is no cause), None where
    they are not known. None when it is not that, or when a rank left nothing to tell (it died: another
    story)."""
    ended, waiting = [], []
    for rank in ranks:
        said = finished_with(RankFiles(directory, rank))
        if said is None:
            if codes is not None and codes.get(rank) == -15:
                continue  # torchrun stopped it after the failure
            return None
        if not said.get("error"):
            ended.append((rank, said))
        elif _PEER_GONE.search(said["error"]):
            waiting.append((rank, said))
        else:
            return None
    if not ended or not waiting:
        return None
    how = "; ".join(_how_it_ended(rank, said) for rank, said in ended)
    rank, said = waiting[0]
    frames = [Frame(*f) for f in said.get("frames", [])]
    where = _user_frame(frames)
    inside = collective_of(frames)
    count = said.get("collectives")
    at = f"in collective #{count} of the default group" if count else "in a collective"
    if inside:
        at += f", {inside}"
    if where:
        at += f"{',' if inside else ''} at {where}"
    # the waiting rank's call chain passed a condition taken by few ranks (`if rank == 0: save(...)`): the
    # others skipped the collective inside it, not a loop's iteration (found with pytorch/examples' FSDP2 example,
    # its checkpointer.save, whose full_tensor() gathers from every rank, moved under `if get_rank() == 0:`)
    branch = condition_on_chain(frames)
    if branch is not None and branch[1].few is not False:
        frame, condition = branch
        at += f", a call made under a condition on the rank at {frame.file}:{condition.line} (`{condition.code}`)"
        advice, place = ON_EVERY_RANK, Frame(frame.file, condition.line, frame.function)
    else:
        loop = _loop_around(frames)
        if loop is not None:
            at += f", inside the loop at {loop[0].file}:{loop[1]}-{loop[2]}"
        # the culprit's place is the loop it left early, which it ran too; never the survivor's own line alone
        advice, place = UNEVEN_ITERATIONS, Frame(loop[0].file, loop[1], loop[0].function) if loop else None
    others = f" ({_who([r for r, _ in waiting[1:]])} too)" if len(waiting) > 1 else ""
    error = _PEER_GONE.search(said["error"])[0]
    text = (
        f"{_who([r for r, _ in ended])} ended while {_who([r for r, _ in waiting])} still trained: {how}; "
        f"rank {rank} was {at}{others}, and failed as its consequence ({error}). {advice}"
    )
    return Verdict(text, "ended_early", [r for r, _ in ended], place)


def _how_it_ended(rank: int, said: dict) -> str:
    status = said.get("exit_status", 0)
    how = "returned" if not status else f"called sys.exit({status})"
    count = said.get("collectives")
    after = f", after {count} collectives of the default group" if count is not None else ""
    return f"rank {rank}'s script {how} (exit status {status}){after}"


def _loop_around(frames: list[Frame]) -> tuple[Frame, int, int] | None:
    """The innermost loop of the user's code around the frames (the training loop a rank was in)."""
    for frame in reversed(frames):
        if is_user_code(frame.file):
            loop = enclosing_loop(frame.file, frame.line)
            if loop is not None:
                return frame, loop[0], loop[1]
    return None


def _mismatch_in_calls(directory: Path, ranks: list[int]) -> Verdict | None:
    """The first collective the ranks called with different operations, sizes or dtypes, by their noted
    calls (gloo aborts a rank on a size mismatch, which then leaves no dump)."""
    records = {}
    for rank in ranks:
        try:
            records[rank] = from_calls(rank, read_calls(RankFiles(directory, rank).calls))
        except (OSError, ValueError, TypeError):  # no calls noted by this rank: the others still compare
            continue
    for d in disagreements(records, ranks):
        if d.kind in ("op", "sizes", "dtypes"):
            found = mismatch_verdict(d, {})
            if found.culprits or found.where:  # a culprit, or one call every rank made with its own sizes
                return found
    return None


def _others_elsewhere(directory: Path, ranks: list[int], call_frames: list[Frame], since: float) -> str:
    """``"rank 1 was last seen in backward() (...) at train.py:300"``: where the other ranks were, by the error
    they raised (their collective lost its peer) or where they were last seen moving (torchrun stopped them) at or
    after ``since`` (the culprit's call: a place seen before it is stale, u41's third rank "last seen" in DDP's
    construction), for those at another line than the culprit's collective call; "" when none was."""
    call_at = _user_frame(call_frames)
    said = []
    for rank in ranks:
        ended = finished_with(RankFiles(directory, rank)) or {}
        frames = [Frame(*f) for f in ended.get("frames", [])]
        if not frames and written_at(RankFiles(directory, rank).where) >= since:
            frames = _last_seen(directory, rank)
        where = _user_frame(frames)
        if where is None or (
            call_at is not None and (where.file, where.line) == (call_at.file, call_at.line)
        ):
            continue
        inside = collective_of(frames)
        said.append(f"rank {rank} was last seen " + (f"in {inside} " if inside else "") + f"at {where}")
    return "; ".join(said)


def _how_it_died(code: int | None) -> str:
    if code is None:
        return "killed by a signal or os._exit; torchrun's summary says which"
    if code == -9:
        return "killed by SIGKILL: the kernel's out-of-memory killer (see `dmesg`), or a `kill -9`"
    if code == -6:
        return "killed by signal 6, SIGABRT"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code} with no Python error: os._exit() or a C library's exit()"


def _where_it_died(files: RankFiles) -> list[Frame]:
    """The main thread's frames (outermost first) where a fatal signal ended the rank, as ``faulthandler`` wrote
    them (``rank<N>.fatal``); [] where none was written. A forked DataLoader worker inherits the handler and the
    file: its own dump (a worker that crashed while the rank lived on) is not the rank's."""
    try:
        text = files.fatal.read_text(errors="replace")
        main = json.loads(files.meta.read_text()).get("main_thread")
    except (OSError, ValueError, AttributeError):
        return []
    mains = [dump.get(main) or list(dump.values())[-1] for dump in dumps_in(text)]
    return next((frames for frames in mains if frames and not forked_helper(frames)), [])


def _last_seen(directory: Path, rank: int) -> list[Frame]:
    try:
        return [Frame(*f) for f in json.loads(RankFiles(directory, rank).where.read_text())]
    except (OSError, ValueError, TypeError):  # never written: the rank never moved
        return []


def _last_call(directory: Path, rank: int) -> tuple[str, list[Frame]]:
    """``"all_reduce #3 at train.py:17 in main"`` and its frames: the rank's newest collective call noted."""
    try:
        groups = read_calls(RankFiles(directory, rank).calls)
    except (OSError, ValueError, TypeError):  # no calls noted: nothing to add
        return "", []
    last = max(
        (call for calls in groups.values() for call in calls[-1:]), key=lambda c: c.first, default=None
    )
    if last is None:
        return "", []
    where = _user_frame(last.frames)
    return f"{last.op} #{last.first}" + (f" at {where}" if where else ""), last.frames


def _ended_itself(files: RankFiles) -> tuple[str, list[Frame]] | None:
    """``("os._exit(3)", frames)`` from ``rank<N>.exit``, or None."""
    try:
        said = json.loads(files.exit.read_text())
        return str(said["how"]), [Frame(*f) for f in said["frames"]]
    except (OSError, ValueError, TypeError, KeyError):  # not there: it did not end itself through Python
        return None


def _place(said: dict) -> Frame | None:
    """The script's line a rank's ``rank<N>.done`` says it raised at."""
    return _user_frame([Frame(*f) for f in said.get("frames", [])])


def _same_failure(first: dict, other: dict, where: Frame | None) -> bool:
    """Whether another rank raised the first one's error: its type, and the same line of the script (the values
    in the message may differ by rank: ``device_ids [0]`` and ``device_ids [1]``) or the same words (debug mode
    raises its exception on every rank, each at its own call)."""
    if first["error"].partition(":")[0] != other["error"].partition(":")[0]:
        return False
    elsewhere = _place(other)
    same_line = (
        where is not None
        and elsewhere is not None
        and (where.file, where.line) == (elsewhere.file, elsewhere.line)
    )
    return same_line or first["error"].partition("\n")[0] == other["error"].partition("\n")[0]


def _user_frame(frames: list[Frame]) -> Frame | None:
    return next((f for f in reversed(frames) if is_user_code(f.file)), None)


def _who(ranks: list[int]) -> str:
    return who(ranks)
