"""Finding and running the checks behind `torchdoctor check`.

Like `brew doctor`, a check is any function named ``check_*`` defined (not imported) in one of the area modules
below; it returns ``None``, a `Finding` or a list of them. Adding a check means writing one function; nothing
to register.
Its id is its area and its name (``check_kernel`` in ``sys``: ``sys.kernel``; the area is the module's
``AREA`` constant, so a new area's module sets ``AREA`` and is added to `AREAS`), and it makes its findings with
`verdict_of`, which fills that id in: no id is typed by hand, so a finding, a crash and the status line all
name the check by the same id, the one ``torchdoctor check --list`` shows and ``--only`` takes.

An area whose checks read the same picture of the machine (``env``: toolkits, torch's build, GPUs) defines
``scan(root=...)``; its checks take what ``scan`` returns as their one argument, scanned once, when the
first of them runs.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path

from torchdoctor.errors import BadInput
from torchdoctor.findings import Finding
from torchdoctor.torch_import import import_failure, import_torch

# The module of each area, in the order a run fails in practice.
AREAS = {
    "sys": "torchdoctor.system",  # Python, torch build, accelerators, kernel, /dev/shm
    "env": "torchdoctor.env.checks",  # CUDA toolkits, host compiler, GPU arch, DeepSpeed, driver
    "dist": "torchdoctor.distributed.checks",  # debug mode and timeouts in effect
    "net": "torchdoctor.net.checks",  # communication smoke test over local processes
    "gpu": "torchdoctor.gpu_balance",  # mixed GPUs
}
CHECK_MODULES = tuple(AREAS.values())

REPORT_ISSUE = "Please report this at the torchdoctor issue tracker with `torchdoctor report` attached."


def select_areas(skip: Iterable[str] = ()) -> tuple[list[str], list[Finding]]:
    """The check modules to run, all areas but ``skip``, and a warning per module that cannot be imported
    (a broken install is exactly when people run `check` or ask for help). Raises `BadInput` for an
    unknown area in ``skip``.

    >>> modules, broken = select_areas(["net", "gpu"])
    >>> [m.rsplit(".", 1)[-1] for m in modules]
    ['system', 'checks', 'checks']
    """
    unknown = sorted(set(skip) - set(AREAS))
    if unknown:  # refused before torch is imported: a typo costs no import (seconds of CPU)
        raise BadInput(f"--skip {', '.join(unknown)}: unknown area; choose from {', '.join(AREAS)}")
    import_torch()  # before any area, and once: a second import after a failed one aborts the process
    modules, broken = [], []
    for area, module in AREAS.items():
        if area in skip:
            continue
        try:
            importlib.import_module(module)
        except Exception as error:  # noqa: BLE001 - reported as a finding, not raised
            broken.append(
                Finding(
                    f"{area}.import",
                    "warn",
                    f"{module} cannot be imported: {type(error).__name__}: {error}",
                    {"traceback": traceback.format_exc()},
                    REPORT_ISSUE,
                )
            )
        else:
            modules.append(module)
    return modules, broken


def discover(
    modules: Iterable[str] = CHECK_MODULES, root: str | Path = "/", timeout: float | None = None
) -> list[Callable[[], object]]:
    """Every ``check_*`` function defined in ``modules``, in source order, ready to call with no argument.

    The checks of an area that defines ``scan`` get its one look at the machine (under ``root``); a check
    that waits on something (it takes ``timeout``) gets ``timeout`` when one is given.
    """
    found = []
    for name in modules:
        module = importlib.import_module(name)
        functions = [
            fn
            for attr, fn in vars(module).items()
            if attr.startswith("check_") and inspect.isfunction(fn) and fn.__module__ == module.__name__
        ]
        functions.sort(key=lambda fn: fn.__code__.co_firstlineno)
        if timeout is not None:
            functions = [
                functools.wraps(fn)(functools.partial(fn, timeout=timeout))
                if "timeout" in inspect.signature(fn).parameters
                else fn
                for fn in functions
            ]
        scan = getattr(module, "scan", None)
        if scan is not None:
            look = functools.cache(functools.partial(scan, root=root))
            functions = [_given(fn, look) for fn in functions]
        found += functions
    return found


def _given(check: Callable, look: Callable[[], object]) -> Callable[[], object]:
    @functools.wraps(check)
    def with_the_scan():
        return check(look())

    return with_the_scan


def check_id(check: Callable) -> str:
    """The finding id a check's crash is filed under, and its name while it runs: ``env.toolkits``."""
    area = getattr(inspect.getmodule(check), "AREA", "internal")
    return f"{area}.{check.__name__.removeprefix('check_')}"


def verdict_of(check: Callable) -> Callable[..., Finding]:
    """How a check makes its findings: `Finding` with the check's id already in, so that no id is typed by
    hand and none can differ from the one the check runs under.

    >>> from torchdoctor.system import check_kernel
    >>> verdict_of(check_kernel)("ok", "Linux kernel 6.1").id
    'sys.kernel'
    """
    return functools.partial(Finding, check_id(check))


def looks_at(check: Callable) -> str:
    """What a check looks at, in one line: the first sentence of its docstring (for ``check --list``)."""
    paragraph = " ".join((inspect.getdoc(check) or "").split("\n\n")[0].split())
    return re.split(r"(?<=\.)\s", paragraph)[0].replace("``", "`")


def only_names(only: Iterable[str]) -> list[str]:
    """What ``--only`` was given, one name each: ``--only sys.shm,net.smoke`` as ``--skip`` takes a comma list."""
    return [name.strip() for value in only for name in value.split(",")]


def pick(checks: Iterable[Callable], only: Iterable[str], skip: Iterable[str] = ()) -> list[Callable]:
    """The ``checks`` whose id is in ``only``, or whose area is (``net``: every net.* check), in their order
    (all of them when ``only`` is empty); a comma list counts as several. Raises `BadInput`, naming the known
    ids, for a name no check or area has.

    >>> from torchdoctor.system import check_kernel, check_shm
    >>> [check_id(c) for c in pick([check_kernel, check_shm], ["sys.shm"])]
    ['sys.shm']
    >>> [check_id(c) for c in pick([check_kernel, check_shm], ["sys"])]
    ['sys.kernel', 'sys.shm']
    """
    checks, wanted = list(checks), list(dict.fromkeys(only_names(only)))
    known = [check_id(c) for c in checks]
    areas = {name.split(".")[0] for name in known}
    for name in wanted:
        if name in known or name in areas:
            continue
        if name.split(".")[0] in set(skip):
            raise BadInput(f"--only {name}: its area is left out by --skip {name.split('.')[0]}")
        raise BadInput(f"--only {name or repr('')}: no such check; choose from {', '.join(known)}")
    return [
        c
        for c, name in zip(checks, known, strict=True)
        if not wanted or name in wanted or name.split(".")[0] in wanted
    ]


def run_one(check: Callable[[], object]) -> list[Finding]:
    """Call one check with its defaults; a check that crashes becomes a warning naming the error, with the
    traceback in its details (shown with ``-v``)."""
    try:
        result = check()
    except Exception as error:  # noqa: BLE001 - a broken check must not hide the others' verdicts
        name = check.__name__.removeprefix("check_")
        where = {"check": f"{check.__module__}.{check.__name__}", "traceback": traceback.format_exc()}
        failure = import_failure()
        if failure is not None and isinstance(error, ImportError):
            return [
                Finding(
                    check_id(check),
                    "skip",
                    f"needs torch, which cannot be imported here (see sys.torch): {failure}",
                    where,
                )
            ]
        return [
            Finding(
                check_id(check),
                "warn",
                f"the {name} check itself crashed: {type(error).__name__}: {error}",
                where,
                REPORT_ISSUE,
            )
        ]
    if result is None:
        return []
    return [result] if isinstance(result, Finding) else list(result)


def run_checks(
    checks: Iterable[Callable[[], object]] | None = None, starting: Callable[[str], None] | None = None
) -> list[Finding]:
    """Run ``checks`` (default: all discovered ones) and return their findings in order; ``starting`` is
    told the id of each check before it runs (for a status line)."""
    findings: list[Finding] = []
    for check in discover() if checks is None else checks:
        if starting is not None:
            starting(check_id(check))
        findings += run_one(check)
    return findings
