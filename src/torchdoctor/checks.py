"""Finding and running the checks behind `torchdoctor check`.

Like `brew doctor`, a check is any function named ``check_*`` in one of the area modules below; it returns
``None``, a `Finding` or a list of them. Adding a check means writing one function; nothing to register.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable

from torchdoctor.findings import Finding

# One module per area, in the order a run fails in practice.
CHECK_MODULES = (
    "torchdoctor.system",  # sys.*: Python, torch build, accelerators, kernel, /dev/shm
    "torchdoctor.env.checks",  # env.*: CUDA toolkits, host compiler, GPU arch, DeepSpeed, driver
    "torchdoctor.distributed.checks",  # dist.*: debug mode and timeouts in effect
    "torchdoctor.net.checks",  # net.*: communication smoke test over local processes
    "torchdoctor.gpu_balance",  # gpu.*: mixed GPUs
)


def area_of(module_name: str) -> str:
    """The finding-id area a check module owns (its ``AREA`` constant)."""
    return importlib.import_module(module_name).AREA


def discover(modules: Iterable[str] = CHECK_MODULES) -> list[Callable[[], object]]:
    """Every ``check_*`` function defined in ``modules``, in source order."""
    found = []
    for name in modules:
        module = importlib.import_module(name)
        functions = [
            fn
            for attr, fn in vars(module).items()
            if attr.startswith("check_") and inspect.isfunction(fn) and fn.__module__ == module.__name__
        ]
        found += sorted(functions, key=lambda fn: fn.__code__.co_firstlineno)
    return found


def run_one(check: Callable[[], object]) -> list[Finding]:
    """Call one check with its defaults; a check that crashes becomes a warning naming the error."""
    try:
        result = check()
    except Exception as error:  # a broken check must not hide the others' verdicts
        area = getattr(inspect.getmodule(check), "AREA", "internal")
        name = check.__name__.removeprefix("check_")
        return [
            Finding(
                f"{area}.{name}",
                "warn",
                f"the {name} check itself crashed: {type(error).__name__}: {error}",
                {"check": f"{check.__module__}.{check.__name__}"},
                "Please report this at the torchdoctor issue tracker with `torchdoctor report` attached.",
            )
        ]
    if result is None:
        return []
    return [result] if isinstance(result, Finding) else list(result)


def run_checks(checks: Iterable[Callable[[], object]] | None = None) -> list[Finding]:
    """Run ``checks`` (default: all discovered ones) and return their findings in order."""
    findings: list[Finding] = []
    for check in discover() if checks is None else checks:
        findings += run_one(check)
    return findings
