"""The environment variables a run reads, each checked once, here, with one verdict for `check` and the run.

`check` turns what `problems` finds into a finding with its fix; the commands (`net`, `launch`) and the
library (`get_logger`, debug mode, the rank set-up) call `require_valid` on the variables they are about to
read, which raises `BadEnvironment` (one line and exit status 2 in the CLI, a ``ValueError`` in a script)
with the same words. A variable that is set but empty counts as unset, as every reader treats it; one of only
spaces counts as unset for torchdoctor's own readers, which trim a value, but torch and torchrun take a value
as it is (``MASTER_ADDR=' '`` is a host named ``' '``), so there it is judged as a value (`given`).

>>> [str(p) for p in problems({"MASTER_PORT": "99999"})]
["MASTER_PORT='99999': must be a port number from 1 to 65535"]
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from torchdoctor.errors import BadInput

ON_VALUES = ("1", "true", "yes", "on")
OFF_VALUES = ("0", "false", "no", "off")
ACCELERATE_ON_VALUES = ("1", "true", "yes", "on", "y", "t")  # accelerate's str_to_bool
ACCELERATE_OFF_VALUES = ("0", "false", "no", "off", "n", "f")


class BadEnvironment(BadInput, ValueError):
    """An environment variable the run reads holds a value it cannot use; the message names both.

    A `BadInput` (the CLI says it in one line, exit status 2) and a ``ValueError`` (what a script sees).
    """


@dataclass(frozen=True)
class Variable:
    """One variable: who reads it, what its value must be (in words and as a test), and a value that works."""

    name: str
    read_by: str
    expected: str
    valid: Callable[[str], bool]
    example: str
    trimmed: bool = (
        False  # the reader strips spaces around the value (torchdoctor's); torch's takes it as it is
    )


@dataclass(frozen=True)
class Problem:
    """A variable whose value its reader cannot use."""

    variable: Variable
    value: str
    why: str = ""  # set when the value is fine alone but not beside another variable

    def __str__(self) -> str:
        return f"{self.variable.name}={self.value!r}: {self.why or 'must be ' + self.variable.expected}"

    @property
    def fix(self) -> str:
        """The command that sets a value that works (or unsets the variable)."""
        name = self.variable.name
        return f"export {name}={self.variable.example}   # or: unset {name}"


def _whole(minimum: int, maximum: int | None = None) -> Callable[[str], bool]:
    def valid(value: str) -> bool:
        text = value.strip()
        return text.isdigit() and minimum <= int(text) and (maximum is None or int(text) <= maximum)

    return valid


_port = _whole(1, 65535)
_HOST = re.compile(r"[A-Za-z0-9_.\-]+|\[?[0-9A-Fa-f:.]+(%[A-Za-z0-9_.\-]+)?\]?")


_AS_IS = ", no spaces around it (it is used as it is)"


def _host(value: str) -> bool:
    return bool(_HOST.fullmatch(value))  # as it is: torch connects to ' node01' as typed, and fails


def _endpoint(value: str) -> bool:
    text = value.strip()  # torchrun strips the endpoint (parse_rendezvous_endpoint)
    if text.startswith("["):  # [IPv6]:PORT or [IPv6]
        host, _, port = text.partition("]")
        return _host(host + "]") and (not port or (port.startswith(":") and _port(port[1:])))
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return _host(host) and _port(port)
    return _host(text)  # HOST, or a bare IPv6 address


def _seconds(value: str) -> bool:
    try:
        seconds = float(value)
    except ValueError:
        return False
    return math.isfinite(seconds) and seconds > 0


def _one_of(*values: str) -> Callable[[str], bool]:
    return lambda value: value.strip().lower() in values


def _log_level(value: str) -> bool:
    text = value.strip()
    return text.isdigit() or isinstance(logging.getLevelName(text.upper()), int)


_TASKS_PER_NODE = re.compile(r"^\d+(\(x\d+\))?(,\d+(\(x\d+\))?)*$")  # SLURM: 4, 2(x3), 2(x3),1


def _tasks_per_node(value: str) -> bool:
    return bool(_TASKS_PER_NODE.match(value.strip()))


def _nnodes(value: str) -> bool:
    low, _, high = value.strip().partition(":")
    return _whole(1)(low) and (not high or (_whole(1)(high) and int(low) <= int(high)))


def _nproc(value: str) -> bool:
    return _whole(1)(value) or value.strip() in ("auto", "cpu", "gpu", "xpu")


def _rank_variables(launcher: str, rank: str, world: str, local: str, local_world: str) -> list[Variable]:
    return [
        Variable(rank, launcher, "a whole number from 0 (the rank)", _whole(0), "0"),
        Variable(world, launcher, "a whole number from 1 (the number of ranks)", _whole(1), "1"),
        Variable(local, launcher, "a whole number from 0 (the rank on this host)", _whole(0), "0"),
        Variable(
            local_world,
            launcher,
            "a whole number from 1 (the ranks on this host)"
            + (", or SLURM's 2(x3)" if launcher == "SLURM" else ""),
            _tasks_per_node if launcher == "SLURM" else _whole(1),
            "1",
        ),
    ]


VARIABLES: tuple[Variable, ...] = (
    Variable("MASTER_ADDR", "torch.distributed", f"a host name or an IP address{_AS_IS}", _host, "127.0.0.1"),
    Variable("MASTER_PORT", "torch.distributed", "a port number from 1 to 65535", _port, "29500"),
    *_rank_variables("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    Variable("GROUP_RANK", "torchrun", "a whole number from 0 (the rank of this host)", _whole(0), "0"),
    Variable("TORCHELASTIC_RESTART_COUNT", "torchrun", "a whole number from 0", _whole(0), "0"),
    Variable("PET_NNODES", "torchrun", "a number of hosts from 1, or MIN:MAX", _nnodes, "1"),
    Variable("PET_NPROC_PER_NODE", "torchrun", "a whole number from 1, or auto, cpu, gpu, xpu", _nproc, "2"),
    Variable("PET_NODE_RANK", "torchrun", "a whole number from 0", _whole(0), "0"),
    Variable("PET_MAX_RESTARTS", "torchrun", "a whole number from 0", _whole(0), "0"),
    Variable("PET_MASTER_ADDR", "torchrun", f"a host name or an IP address{_AS_IS}", _host, "127.0.0.1"),
    Variable("PET_MASTER_PORT", "torchrun", "a port number from 1 to 65535", _port, "29500"),
    Variable(
        "PET_RDZV_ENDPOINT",
        "torchrun",
        "HOST or HOST:PORT, the port from 1 to 65535",
        _endpoint,
        "node01:29500",
    ),
    Variable("PET_MONITOR_INTERVAL", "torchrun", "a number of seconds above 0", _seconds, "0.1"),
    *_rank_variables("SLURM", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
    Variable("SLURM_JOB_ID", "SLURM", "a whole number (the job id)", _whole(0), "12345"),
    Variable("SLURM_NNODES", "SLURM", "a whole number from 1", _whole(1), "1"),
    *_rank_variables(
        "Open MPI",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    ),
    *_rank_variables("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    Variable(
        "TORCHDOCTOR_LOG_LEVEL",
        "torchdoctor.get_logger",
        "a log level: DEBUG, INFO, WARNING, ERROR or CRITICAL",
        _log_level,
        "INFO",
        trimmed=True,
    ),
    Variable(
        "ACCELERATE_LOG_LEVEL",
        "accelerate and torchdoctor.get_logger",
        "a log level: DEBUG, INFO, WARNING, ERROR or CRITICAL",
        _log_level,
        "INFO",
        trimmed=True,
    ),
    Variable(
        "TORCHDOCTOR_DEBUG_MODE",
        "torchdoctor's debug mode",
        "on (1, true, yes, on) or off (0, false, no, off)",
        _one_of(*ON_VALUES, *OFF_VALUES),
        "1",
        trimmed=True,
    ),
    Variable(
        "ACCELERATE_DEBUG_MODE",
        "accelerate's and torchdoctor's debug mode",
        "on (1, true, yes, on, y, t) or off (0, false, no, off, n, f)",
        _one_of(*ACCELERATE_ON_VALUES, *ACCELERATE_OFF_VALUES),
        "1",
        trimmed=True,
    ),
    Variable(
        "TORCHDOCTOR_DEBUG_TIMEOUT",
        "torchdoctor's debug mode",
        "a number of seconds above 0",
        _seconds,
        "60",
        trimmed=True,
    ),
)
BY_NAME = {v.name: v for v in VARIABLES}

# (rank, world size) pairs that must agree: a rank is below the number of ranks
_PAIRS = (
    ("RANK", "WORLD_SIZE"),
    ("LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
    ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
)

# What each reader reads, for `require_valid`
RANKS = tuple(v.name for v in VARIABLES if v.read_by in ("torchrun", "SLURM", "Open MPI", "MPICH"))
# `net` reads torchrun's PET_MASTER_* before MASTER_* (as a torchrun launch would use them)
RENDEZVOUS = ("MASTER_ADDR", "MASTER_PORT", "PET_MASTER_ADDR", "PET_MASTER_PORT", "SLURM_JOB_ID", *RANKS)
TORCHRUN = tuple(v.name for v in VARIABLES if v.name.startswith("PET_"))
DEBUG_MODE = ("TORCHDOCTOR_DEBUG_MODE", "ACCELERATE_DEBUG_MODE", "TORCHDOCTOR_DEBUG_TIMEOUT")
LOG_LEVEL = ("TORCHDOCTOR_LOG_LEVEL", "ACCELERATE_LOG_LEVEL")


def given(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of variable ``name`` in ``environ`` (default ``os.environ``) as its reader takes it; None when
    its reader counts it as unset: absent or empty, or only spaces for a reader that trims.

    >>> given("MASTER_ADDR", {"MASTER_ADDR": ""}), given("MASTER_ADDR", {"MASTER_ADDR": " "})
    (None, ' ')
    """
    environ = os.environ if environ is None else environ
    value = environ.get(name, "")
    if BY_NAME[name].trimmed:
        value = value.strip()
    return value or None


def problems(environ: Mapping[str, str] | None = None, names: Iterable[str] | None = None) -> list[Problem]:
    """Every variable of ``names`` (default: all we read) set in ``environ`` to a value its reader refuses."""
    environ = os.environ if environ is None else environ
    wanted = BY_NAME if names is None else {n: BY_NAME[n] for n in names}
    found = [
        Problem(variable, environ[name])
        for name, variable in wanted.items()
        if given(name, environ) is not None and not variable.valid(environ[name])
    ]
    bad = {p.variable.name for p in found}
    for rank, world in _PAIRS:
        if rank not in wanted or world not in wanted or {rank, world} & bad:
            continue
        if given(rank, environ) is not None and environ.get(world, "").strip().isdigit():
            if int(environ[rank]) >= int(environ[world]):
                found.append(
                    Problem(
                        BY_NAME[rank],
                        environ[rank],
                        f"must be below {world}={environ[world]} (ranks count from 0)",
                    )
                )
    return found


def require_valid(names: Iterable[str] | None = None, environ: Mapping[str, str] | None = None) -> None:
    """Raise `BadEnvironment` for the first of ``names`` (default: all) set to a value its reader refuses.

    >>> require_valid(["TORCHDOCTOR_LOG_LEVEL"], {"TORCHDOCTOR_LOG_LEVEL": "LOUD"})
    Traceback (most recent call last):
    torchdoctor.environment.BadEnvironment: TORCHDOCTOR_LOG_LEVEL='LOUD': must be a log level: DEBUG, INFO, WARNING, ERROR or CRITICAL (e.g. export TORCHDOCTOR_LOG_LEVEL=INFO, or unset it)
    """
    found = problems(environ, names)
    if found:
        name = found[0].variable.name
        raise BadEnvironment(f"{found[0]} (e.g. export {name}={found[0].variable.example}, or unset it)")


def is_on(name: str, environ: Mapping[str, str] | None = None) -> bool | None:
    """``TORCHDOCTOR_DEBUG_MODE``-like switches: True, False, or None when unset; `BadEnvironment` otherwise."""
    environ = os.environ if environ is None else environ
    value = environ.get(name, "").strip().lower()
    if not value:
        return None
    require_valid([name], environ)
    return value in (ACCELERATE_ON_VALUES if name.startswith("ACCELERATE_") else ON_VALUES)
