"""What every worker of ``torchdoctor launch`` runs first: ``python -m torchdoctor.launch.bootstrap
script.py ARGS`` (or ``--module pkg.train ARGS``), started by torchrun.

It turns on debug mode when ``TORCHDOCTOR_DEBUG_MODE`` asks for it, the straggler watch when
``TORCHDOCTOR_STRAGGLERS`` does, lets the hang watchdog see the worker's
progress and ask for its stack, then runs the script as ``python script.py ARGS`` would (``python -m
pkg.train ARGS`` for a module): ``__name__`` is ``"__main__"``, ``sys.argv[1:]`` is ``ARGS`` and the script's
folder (the current one for a module) is first on ``sys.path``. An exception the script does not catch is
printed as Python prints it, starting at the script's own frame: nothing of ours or of runpy's in it.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import traceback

# Set by `torchdoctor launch`: a folder where each worker leaves a mark as it starts, so that the launcher
# can tell a run that never got past the rendezvous from one whose workers failed.
STARTED_VARIABLE = "TORCHDOCTOR_STARTED_DIR"
# Stopped by Ctrl-C (or torchrun passing on the launcher's SIGINT): the launcher says so in one line.
INTERRUPTED_EXIT = 130


def mark_started(environ=None) -> None:
    """Leave this worker's mark in the launcher's folder, when it gave one."""
    environ = os.environ if environ is None else environ
    directory = environ.get(STARTED_VARIABLE)
    if not directory:
        return
    try:
        open(os.path.join(directory, f"started.{environ.get('RANK', '0')}.{os.getpid()}"), "w").close()
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def main(argv: list[str] | None = None) -> None:
    """Prepare this worker, then run ``argv[0]`` (or the module after ``--module``) with the rest."""
    argv = sys.argv[1:] if argv is None else argv
    module = bool(argv) and argv[0] == "--module"
    argv = argv[1:] if module else argv
    if not argv:
        sys.exit("usage: python -m torchdoctor.launch.bootstrap [--module] script.py [args...]")
    target = argv[0]
    _end_with_the_agent()
    mark_started()
    from torchdoctor.launch.stopped_places import note_where_stopped, said_itself

    # a rank blocked in C++ when Ctrl-C comes never raises KeyboardInterrupt: the launcher says where it was
    note_where_stopped(os.environ.get(STARTED_VARIABLE), os.environ.get("RANK", "0"))
    from torchdoctor.distributed.debug_settings import debug_mode_enabled

    if debug_mode_enabled():
        from torchdoctor.distributed.debug import enable

        enable()
    from torchdoctor.hang.worker import note_the_end, prepare_worker, worker_finished

    # the watchdog's call log first, the straggler watch's timing around it: a watch that stands down (no core to
    # spare for its judge) puts back the functions it wrapped, and had it wrapped torch's own first, the call log
    # went with them (every collective after the first window unnoted, a failed job's verdict without its sizes)
    prepare_worker(_module_file(target) if module else target)
    # without the watchdog: how the script ended, for the verdict of a failed run
    note_the_end(os.environ.get(STARTED_VARIABLE))
    from torchdoctor.stragglers.watch import only_with_a_spare_core, stragglers_enabled

    if stragglers_enabled():
        from torchdoctor.stragglers.watch import watch_for_stragglers

        watch_for_stragglers(spare_core_only=only_with_a_spare_core())
    failed, exit_status = None, 0
    try:
        if module:
            sys.argv = ["-m", *argv[1:]]  # runpy puts the module's file name in argv[0], as `python -m` does
            sys.path[0] = os.getcwd()
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(target))  # `python -m` put the cwd there
            runpy.run_path(target, run_name="__main__")
    except SystemExit as leaving:
        exit_status = _status_of(leaving)
        raise
    except KeyboardInterrupt as stopped:
        exit_status = INTERRUPTED_EXIT
        place = _say_where_stopped(stopped)
        said_itself(os.environ.get(STARTED_VARIABLE), os.environ.get("RANK", "0"), place)
        sys.exit(INTERRUPTED_EXIT)  # the launcher was stopped; it says so once, for every worker
    except BaseException as error:  # noqa: BLE001 - printed as Python would, then the same exit status
        failed = error
        _print_from_users_frame(error)
        sys.exit(1)
    finally:
        worker_finished(failed, exit_status)
        if stragglers_enabled():
            from torchdoctor.stragglers.watch import finish

            finish()


def _status_of(leaving: SystemExit) -> int:
    """The exit status ``sys.exit(code)`` gives: 0 for None, the number, 1 for a message."""
    code = leaving.code
    return 0 if code is None else code if isinstance(code, int) else 1


def _end_with_the_agent(environ=None) -> None:
    """Have the kernel end this worker when torch's agent that started it ends, even by SIGKILL (the agent
    stops its workers itself on a signal it can catch); leave at once if it has ended already."""
    from torchdoctor.launch.orphans import die_with_parent, is_orphaned
    from torchdoctor.launch.torchrun import AGENT_VARIABLE

    environ = os.environ if environ is None else environ
    agent = environ.get(AGENT_VARIABLE, "")
    if not agent.isdigit():  # not started by our torchrun
        return
    if not die_with_parent(int(agent), signal.SIGKILL) and is_orphaned(int(agent)):
        sys.exit(1)  # nobody is left to read why


def _module_file(name: str) -> str:
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    return (spec.origin if spec is not None and spec.origin else name) or name


def _real(filename: str) -> str:
    return filename if filename.startswith("<") else os.path.realpath(filename)


def _say_where_stopped(stopped: KeyboardInterrupt) -> str:
    """One line: where this rank's script was when Ctrl-C stopped it (the innermost line of the user's code in
    its traceback), so that a hang stopped by hand says where each rank waited; nothing when no frame is the
    user's. (Found with a rank stuck in its dataset's __getitem__: the launch said only "interrupted".) Returns
    the place said ("" for none)."""
    from torchdoctor.hang.source import is_user_code

    ours = {os.path.realpath(__file__), os.path.realpath(runpy.__file__), "<frozen runpy>"}
    frames = [
        frame
        for frame in traceback.extract_tb(stopped.__traceback__)
        if _real(frame.filename) not in ours and is_user_code(frame.filename)
    ]
    if not frames or _stopped_by_the_watchdog():
        return ""
    where = frames[-1]
    code = f": {where.line.strip()}" if where.line else ""
    place = f"{where.filename}:{where.lineno} in {where.name}{code}"
    if any(
        _real(f.filename).endswith("torch/utils/data/dataloader.py")
        for f in traceback.extract_tb(stopped.__traceback__)
    ):
        from torchdoctor.launch.stopped_places import loader_worker_line

        own = {(f.filename, f.lineno) for f in frames}
        worker = loader_worker_line(os.environ.get(STARTED_VARIABLE), os.environ.get("RANK", "0"), own)
        # the rank waited for its DataLoader worker: the worker's line is the one that did not return
        if worker:
            place += f" (waiting for its DataLoader worker, at {worker})"
    sys.stderr.write(f"torchdoctor: rank {os.environ.get('RANK', '0')} was interrupted at {place}\n")
    sys.stderr.flush()
    return place


def _stopped_by_the_watchdog(environ=None) -> bool:
    """Whether the launch's watchdog stopped the run, its verdict written: its report says where every rank
    was, so a line of the rank's own would only repeat it before the report, in other words (found with a
    DataLoader worker stuck: the rank's line named its ``for`` loop, the report the worker's line)."""
    from torchdoctor.hang.supervise import VERDICT_FILE
    from torchdoctor.hang.worker import DIR_VARIABLE

    directory = (os.environ if environ is None else environ).get(DIR_VARIABLE)
    return bool(directory) and os.path.exists(os.path.join(directory, VERDICT_FILE))


def _print_from_users_frame(error: BaseException) -> None:
    """Print ``error`` through ``sys.excepthook``, its traceback starting at the first frame that is
    neither ours nor runpy's, so the user reads what ``python script.py`` would have shown."""
    ours = {os.path.realpath(__file__), os.path.realpath(runpy.__file__), "<frozen runpy>"}
    tb = error.__traceback__
    while tb is not None and _real(tb.tb_frame.f_code.co_filename) in ours:
        tb = tb.tb_next
    if tb is None:  # runpy's own error (no such module): what `python -m` says
        sys.stderr.write(f"{sys.executable}: {error}\n")
        sys.stderr.flush()
        return
    error.__traceback__ = tb
    try:
        sys.excepthook(type(error), error, error.__traceback__)
    except Exception:  # noqa: BLE001 - a broken user hook must not hide the error
        traceback.print_exception(type(error), error, error.__traceback__)
    sys.stderr.flush()


if __name__ == "__main__":
    main()
