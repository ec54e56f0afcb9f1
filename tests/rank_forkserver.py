"""The process `run_ranks` forks its ranks from (tests/rank_runner.py): torch imported once, each rank a fork.

Every rank of `run_ranks` is a Python process that imports torch and torch.distributed first (2.5-3.5 s of CPU
on this VM: nearly all of what a short 2-rank job costs). Here that import is done once per pytest worker; each
rank is then a fork of this process that runs its script as ``python script.py ARGS`` (or ``python -c CODE``)
would: its own process, its own gloo connections, ``__name__ == "__main__"``, ``sys.argv``, the script's folder
first on ``sys.path``, the rank's environment, stdout and stderr in the files given (where both name one file,
one open file for both, as ``stderr=subprocess.STDOUT`` gives), an uncaught exception printed from the script's
own frame and exit status 1. Nothing of torchdoctor is imported here: each script imports it, as it would.

Requests come one JSON line each on stdin (``{"id", "argv", "env", "cwd", "stdout", "stderr"}``); the answers go
to stdout, a line each: ``started ID PID`` once forked, ``ended PID CODE`` when the rank is reaped (CODE as
`subprocess.Popen.returncode`: negative for a signal). It exits when its stdin closes.
"""

from __future__ import annotations

import builtins
import json
import os
import select
import signal
import sys
import types
from importlib.machinery import SourceFileLoader

import torch  # noqa: F401  # the import every rank would make: once here
import torch.distributed  # noqa: F401


def become_rank(request: dict, wakeup: tuple[int, int]) -> None:
    """In the forked child: become ``python ARGV`` with the request's environment and files. Never returns:
    ends with SystemExit, so that the interpreter ends as a script's does (threads joined, atexit, flushes)."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])  # Ctrl-C as at a terminal
    for fd in wakeup:
        os.close(fd)
    os.chdir(request["cwd"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        if fd == 2 and path == request["stdout"]:  # one file for both, as ``stderr=subprocess.STDOUT``
            os.dup2(1, 2)
            continue
        opened = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    os.environ.clear()  # unsetenv/putenv too: C code (gloo, c10d) reads the rank's variables
    os.environ.update(request["env"])
    if "numpy" in sys.modules:  # its global generator is not reseeded at a fork (Python's `random` is)
        sys.modules["numpy"].random.seed()
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    if request["argv"][0] == "-c":  # python -c CODE ARGS
        code = compile(request["argv"][1], "<string>", "exec")
        sys.argv = ["-c", *request["argv"][2:]]
        sys.path[0] = ""
    else:  # python script.py ARGS
        script = request["argv"][0]
        sys.argv = list(request["argv"])
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        main.__file__ = script
        main.__loader__ = SourceFileLoader("__main__", script)
        with open(script, "rb") as source:
            code = compile(source.read(), script, "exec")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as error:  # noqa: BLE001 - as Python prints it: from the script's own frame, this one left out
        error.__traceback__ = error.__traceback__.tb_next  # a hook may read it there (torch's `[rankN]:` one)
        sys.excepthook(type(error), error, error.__traceback__)
        if isinstance(error, KeyboardInterrupt):  # Python ends by its own SIGINT then
            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        raise SystemExit(1) from None
    raise SystemExit(0)


def serve() -> None:
    wakeup = os.pipe()
    os.set_blocking(wakeup[1], False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wakeup[1])
    pending = b""
    while True:
        ready, _, _ = select.select([0, wakeup[0]], [], [])
        if wakeup[0] in ready:
            os.read(wakeup[0], 4096)
        while True:  # every rank that ended, reaped and said
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            os.write(1, f"ended {pid} {os.waitstatus_to_exitcode(status)}\n".encode())
        if 0 in ready:
            chunk = os.read(0, 65536)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    become_rank(request, wakeup)
                os.write(1, f"started {request['id']} {pid}\n".encode())


if __name__ == "__main__":
    serve()
