"""What every worker of ``torchdoctor launch`` runs first: ``python -m torchdoctor.distributed.bootstrap
script.py ARGS``, started by ``torch.distributed.run -m``.

It turns on debug mode when ``TORCHDOCTOR_DEBUG_MODE`` asks for it, lets the hang watchdog see the worker's
progress and ask for its stack, then runs the script as ``python script.py ARGS`` would: ``__name__`` is
``"__main__"``, ``sys.argv`` is ``[script.py, ARGS...]`` and the script's folder is first on ``sys.path``.
"""

from __future__ import annotations

import os
import runpy
import sys

# Set by `torchdoctor launch`: a folder where each worker leaves a mark as it starts, so that the launcher
# can tell a run that never got past the rendezvous from one whose workers failed.
STARTED_VARIABLE = "TORCHDOCTOR_STARTED_DIR"


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
    """Prepare this worker, then run ``argv[0]`` with the arguments ``argv[1:]``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.exit("usage: python -m torchdoctor.distributed.bootstrap script.py [args...]")
    script = argv[0]
    mark_started()
    from torchdoctor.distributed.debug import debug_mode_enabled

    if debug_mode_enabled():
        from torchdoctor.distributed.debug import enable

        enable()
    from torchdoctor.distributed.watchdog import prepare_worker, worker_finished

    prepare_worker(script)
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # `python -m` put the cwd there
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        worker_finished()


if __name__ == "__main__":
    main()
