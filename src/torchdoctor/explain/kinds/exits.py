"""What a launcher's failure summary says: which worker failed first, and how it ended.

Every launcher reports a worker that failed in its own words — torchrun's ``failed (exitcode: 1) local_rank: 3``
and its Root Cause block, the deepspeed launcher's ``exits with return code = 1``, accelerate's
``CalledProcessError: Command '[...]' returned non-zero exit status 1.`` (CPython's subprocess), mp.spawn's
``process 1 terminated with exit code 1`` / ``with signal SIGABRT``, srun's ``task 3: Exited with exit code 1``,
Open MPI's mpirun's ``The first process to do so was: Process name: [[8472,1],2] Exit code: 1`` (the last number
of the process name is its MPI_COMM_WORLD rank).
None of them says why: the worker's own output above says that. What the summary does say is how the worker
ended, and that has a few classes (the exit status of a Python process, a shell's 128+N for signal N, the
negative signal number Python's ``subprocess`` and torchrun report):

- 1: an uncaught Python exception (the worker's traceback is the cause);
- 2: argparse refusing the command line (Lib/argparse.py ``ArgumentParser.error``), most often the
  ``--local_rank`` a launcher adds;
- 126 / 127: the shell could not run the command (not executable / not found);
- SIGABRT (-6, 134): native code aborted — a C++ exception or check in torch, NCCL or an extension (the NCCL
  watchdog takes its process down so after a collective timed out);
- SIGTERM (-15, 143) / SIGINT / SIGHUP: stopped from outside — the launcher stopping the others once one failed,
  the scheduler (a time limit, preemption), a closed terminal;
- SIGKILL (-9, 137) and SIGSEGV / SIGBUS (-11, 139, -7, 135) have kinds of their own (``worker_killed``,
  ``worker_crash`` in kinds/train.py), read from the same lines — except torchrun's own SIGKILL ("Unable to
  shutdown process ... forcefully exiting via Signals.SIGKILL"): the agent killing a worker that outlived its
  SIGTERM once another had failed, a consequence read here.

`kinds/ranks.py`'s ``child_failed`` reads these facts; what leads is still "the cause is not in this log".
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Pattern

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ANCHORS = (
    "exits with return code = ",  # deepspeed/launcher/launch.py sigkill_handler
    "returned non-zero exit status",  # CPython subprocess.CalledProcessError (accelerate launch)
    "' died with <Signals.",  # the same, a worker ended by a signal
    "terminated with exit code",  # torch/multiprocessing/spawn.py ProcessExitedException
    "terminated with signal",
    "Exited with exit code",  # slurm srun
    "The first process to do so was",  # Open MPI mpirun (help-orterun.txt: orterun:non-zero-exit)
    # Open MPI's errmgr (help-errmgr-base.txt: normal-termination-but), printed before the block above or alone:
    # "Primary job  terminated normally, but 1 process returned\na non-zero exit code."
    "terminated normally, but ",
    # torch/distributed/elastic/multiprocessing/api.py _close: torchrun stopping the workers still running, once
    # one has failed (or when torchrun itself is stopped): "Sending process 4711 closing signal SIGTERM"
    " closing signal ",
    # the same _close, 30 s later: a worker still running after that signal is killed with SIGKILL ("Unable to
    # shutdown process 4711 via Signals.SIGTERM, forcefully exiting via Signals.SIGKILL"). torchrun killing its own
    # workers once another had failed (or it was stopped), not the OOM killer: the worker that failed first is the
    # cause, the killed one was still waiting (in a collective on the failed rank, in I/O)
    "forcefully exiting via ",
    # elastic/agent/server/api.py _invoke_run: the worker group failed and torchrun restarts it (--max-restarts)
    "attempts left; will restart worker group",
)
TEMPLATES = (
    "deepspeed:exits-with-return-code",
    "system:subprocess-non-zero-exit",
    "system:subprocess-died-with-signal",
    "torch_native:spawn-terminated-with-exit-code",
    "torch_native:spawn-terminated-with-signal",
    "system:srun-task-exited",
    "system:openmpi-nonzero-exit",
    "schedulers:ompi-normal-termination-but",
    "torch:sending-process-closing-signal",
    "torch:unable-to-shutdown-process-via-forcefully",
    "torch:worker-group-attempts-left-will-restart",
)
FACTS = (
    R(r"exits with return code = (?P<exitcode>-?\d+)"),
    R(r"returned non-zero exit status (?P<exitcode>-?\d+)"),
    R(r"died with <Signals\.(?P<signal>SIG[A-Z]+): \d+>"),
    R(
        r"process (?P<failed_rank>\d+) terminated with (?:exit code (?P<exitcode>-?\d+)|signal (?P<signal>SIG[A-Z]+))"
    ),
    R(r"task (?P<failed_rank>\d+): Exited with exit code (?P<exitcode>\d+)"),
    R(r"Process name:\s*\[\[\d+,\d+\],(?P<failed_rank>\d+)\]"),
    R(r"Exit code:\s+(?P<exitcode>-?\d+)"),
    R(r"Signal \d+ \((?P<signal>SIG[A-Z]+)\)"),
    # the signal torchrun sends the others is not how the failed worker ended: a fact of its own
    R(r"Sending process \d+ closing signal (?P<closing_signal>SIG[A-Z]+)"),
    R(
        r"Unable to shutdown process \d+ via (?:Signals\.)?(?P<closing_signal>SIG[A-Z]+), forcefully exiting via "
        r"(?:Signals\.)?(?P<forced_signal>SIG[A-Z]+)"
    ),
    R(
        r"Worker group (?P<group_state>FAILED|UNHEALTHY)\. (?P<restarts_left>\d+)/(?P<max_restarts>\d+) attempts left"
    ),
    # argparse exits with status 2 when it refuses a command line (Lib/argparse.py ArgumentParser.error)
    R(r"(?:exitcode\s*:\s*|return code = |exit status |exit code |Exit code:\s+)(?P<argparse_exit>2)\b"),
    R(
        r"(?:exitcode\s*:\s*|return code = |exit status |exit code |Exit code:\s+)(?P<not_found_exit>12[67])\b"
    ),
    R(
        r"(?P<launcher>sigkill_handler|CalledProcessError|terminated with (?:exit code|signal)|srun: error|"
        r"The first process to do so was|job {1,2}(?:\d+ )?terminated normally, but \d+ process)"
    ),
)
# a command that is a build step, not a worker: the compiler's error above it is the failure (kinds/build.py);
# and torchrun's words about stopping its workers where they are not torchrun's line
NOT_A_WORKER = R(
    r"Command '\['(?:ninja|which|nvcc|gcc|g\+\+|c\+\+|cmake|make|git|pip)['\]]|"
    r"Command '\[[^\]\n]{0,300}(?:setup\.py|bdist_wheel|build_ext|egg_info)|"
    # torchrun names the signal it sends (Signals.name): the same words about anything else are not its
    r"closing signal (?!SIG[A-Z]{2,8}\b)|forcefully exiting via (?!(?:Signals\.)?SIG[A-Z]{2,8}\b)"
)

_LAUNCHERS = {
    "sigkill_handler": "the deepspeed launcher",
    "CalledProcessError": "the launcher (a subprocess it started)",
    "terminated with exit code": "mp.spawn",
    "terminated with signal": "mp.spawn",
    "srun: error": "srun",
    "The first process to do so was": "mpirun",
}
# Open MPI's errmgr line names no rank: its words, matched above as the launcher fact, are mpirun's too
_OPEN_MPI_ERRMGR = re.compile(r"job {1,2}(?:\d+ )?terminated normally, but \d+ process")
_SIGNALS = {
    "-6": "SIGABRT",
    "134": "SIGABRT",
    "-8": "SIGFPE",
    "136": "SIGFPE",
    "-4": "SIGILL",
    "132": "SIGILL",
    "-25": "SIGXFSZ",
    "153": "SIGXFSZ",
    "-15": "SIGTERM",
    "143": "SIGTERM",
    "-2": "SIGINT",
    "-1": "SIGHUP",
}


# where nothing but the signal is in the log: no cause is guessed, and these show one
UNSAID = (
    "Where the worker's own output is not in the log, the log does not say why: get it with "
    "PYTHONFAULTHANDLER=1 (the Python stack at the crash), `ulimit -c unlimited` before the run (a core to read "
    "with gdb: gdb python core, then bt), and `dmesg -T | tail` on that host (the kernel's view of the death)"
)


def launcher(facts: dict) -> str:
    """Which launcher wrote the summary, in the user's words (torchrun when none of the others)."""
    said = facts.get("launcher", "")
    if _OPEN_MPI_ERRMGR.fullmatch(said):
        return "mpirun"
    return _LAUNCHERS.get(said, "torchrun")


def signal_of(code: str | None) -> str:
    """The signal an exit status names (-6 and 134 alike: SIGABRT), or "" where it names none we know."""
    return _SIGNALS.get(code or "", "")


def how_it_ended(code: str | None, signal: str | None) -> str:
    """What an exit status or signal says about how the worker ended (empty when it says nothing more).

    >>> how_it_ended("-6", None)[:30]
    'it aborted in native code (SIG'
    """
    signal = signal or _SIGNALS.get(code or "")
    if signal == "SIGABRT":
        return (
            "it aborted in native code (SIGABRT): a C++ exception or check in torch, NCCL or an extension — the "
            "NCCL watchdog ends its process this way after a collective timed out; that worker's last lines "
            "(terminate called after ..., a watchdog timeout, an NCCL WARN, glibc's double free or corruption) "
            "say which. " + UNSAID
        )
    if signal == "SIGFPE":
        return f"it died in native code (SIGFPE: an integer division by zero in torch, an extension or a library). {UNSAID}"
    if signal == "SIGILL":
        return (
            "it died in native code (SIGILL: an instruction this CPU does not have, from a wheel or extension "
            f"built for a newer CPU, AVX2 or AVX-512). {UNSAID}"
        )
    if signal == "SIGXFSZ":
        return (
            "it wrote past the file-size limit (SIGXFSZ): check `ulimit -f` in the job's shell and raise it"
        )
    if signal in ("SIGTERM", "SIGINT", "SIGHUP"):
        return (
            f"it was stopped from outside ({signal}): by the launcher once another worker had failed (then that "
            "one is the cause), by the scheduler (a time limit, preemption), or by a closed terminal"
        )
    if code == "1":
        return "it raised a Python exception: its traceback, in that worker's own output, is the cause"
    if code == "2":
        return "exit status 2 is argparse refusing the command line (its usage message is in the worker's output)"
    if code in ("126", "127"):
        return "the shell could not run the command (127: not found, 126: not executable)"
    if code is not None and code.isdigit() and 3 <= int(code) <= 125:
        # an uncaught exception exits with 1: any other status is a call that chose it (found with a rank that
        # left by os._exit(3) mid-epoch: the fix sent the user to a traceback that does not exist)
        return (
            f"it exited with status {code} by a call of its own, not an uncaught exception (that exits with 1, "
            f"with a traceback): a sys.exit({code}), exit({code}) or os._exit({code}) in the script or a library "
            "it calls, which prints nothing unless it says so itself"
        )
    return ""
