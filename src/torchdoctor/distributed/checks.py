"""``dist.*`` checks: debug mode and the timeouts in effect, and accelerate's config against this machine.

Each check reads the environment a run would start with (``environ``, default ``os.environ``) and says
whether a hang will be caught and reported, or will sit there until someone kills the job.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import yaml

from torchdoctor import environment
from torchdoctor.checks import verdict_of
from torchdoctor.findings import Finding

AREA = "dist"

_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off", "")

# torch >= 2.2 reads the TORCH_-prefixed names; the bare NCCL_ ones still work, with a deprecation warning.
_RENAMED = {
    "NCCL_ASYNC_ERROR_HANDLING": "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_BLOCKING_WAIT": "TORCH_NCCL_BLOCKING_WAIT",
    "NCCL_DESYNC_DEBUG": "TORCH_NCCL_DESYNC_DEBUG",
}
# TORCH_NCCL_ASYNC_ERROR_HANDLING: 0 no handling, 1 tear down, 2 clean up only, 3 skip clean-up (default)
_ASYNC_MODES = {"0": "no handling", "1": "tear down", "2": "clean up only", "3": "skip clean-up"}
# Variables people set believing they bound a collective's wait; neither torch nor NCCL reads them.
_NOT_READ = ("NCCL_TIMEOUT", "TORCH_NCCL_TIMEOUT", "TORCH_DISTRIBUTED_TIMEOUT")
_TORCH_DEBUG_LEVELS = ("OFF", "INFO", "DETAIL")
_NCCL_DEBUG_LEVELS = ("VERSION", "WARN", "INFO", "TRACE")


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def check_environment(environ: Mapping[str, str] | None = None) -> Finding:
    """Every variable a run reads (the rendezvous, the launchers' rank set-up, torchrun's ``PET_*``, the log
    level), each with a value its reader accepts; the run refuses the same values in the same words."""
    verdict = verdict_of(check_environment)
    environ = _environ(environ)
    checked = [name for name in environment.BY_NAME if name not in environment.DEBUG_MODE]
    wrong = environment.problems(environ, checked)
    if wrong:
        return _environment_finding(verdict, wrong, {p.variable.name: p.value for p in wrong})
    seen = {name: environ[name] for name in checked if environment.given(name, environ) is not None}
    left = _left_from_a_run(environ)
    if left:
        lacking = [name for name in _RANK_SET_UP if name not in left]
        said = ", ".join(f"{name}={value}" for name, value in left.items())
        return verdict(
            "warn",
            f"{said} set in this shell without {', '.join(lacking)} and outside any launcher: left from an "
            f"earlier run? A script started here with plain `python` reads {'it' if len(left) == 1 else 'them'} "
            "(init_process_group's env:// then stops: 'environment variable ... expected, but not set')",
            seen,
            f"unset {' '.join(left)}   # torchrun, srun and mpirun set their own",
        )
    return verdict(
        "ok",
        f"{len(seen)} of the {len(checked)} variables a run reads are set, each to a value it accepts"
        if seen
        else "none of the variables a run reads (MASTER_PORT, RANK, PET_*, ...) is set",
        seen,
    )


# What a launcher sets for each process; set by hand, all of them or none.
_RANK_SET_UP = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
# A variable each launcher sets in its processes: where one is set, the rank set-up is the launcher's.
_LAUNCHED = ("TORCHELASTIC_RUN_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")


def _left_from_a_run(environ: Mapping[str, str]) -> dict[str, str]:
    """The rank set-up variables set where some are missing and no launcher is around (``WORLD_SIZE=2``
    left in the shell from an earlier run); empty when none or all are set, or under a launcher."""
    given = {name: environ[name] for name in (*_RANK_SET_UP, "LOCAL_RANK") if environ.get(name, "").strip()}
    if not given or all(name in given for name in _RANK_SET_UP) or any(name in environ for name in _LAUNCHED):
        return {}
    if set(given) <= {"MASTER_ADDR", "MASTER_PORT"}:  # where to meet, set once for every later run: fine
        return {}
    return given


def _environment_finding(verdict, wrong: list, details: dict) -> Finding:
    """A failure naming each variable with a value its reader refuses, and who reads it."""
    said = "; ".join(f"{p} (read by {p.variable.read_by})" for p in wrong)
    return verdict("fail", said, details, "\n".join(p.fix for p in wrong))


# the variable alone reaches torchdoctor's collectives; a script that never calls one (a Hugging Face Trainer
# under plain torchrun) keeps its torch.distributed calls unchecked, and a mismatch there still hangs or aborts
_SCRIPT_CALLS = (
    "a script's own torch.distributed calls (a Trainer's, accelerate's gather) are checked under "
    "`torchdoctor launch --debug`, or once it calls torchdoctor.distributed.debug.enable() or a torchdoctor "
    "collective; under plain torchrun the variable alone leaves them unchecked"
)


def check_debug_mode(environ: Mapping[str, str] | None = None) -> Finding:
    """Whether torchdoctor's debug-mode collectives are on, which variable turned them on, and whether the
    timeout setting is valid. ``ACCELERATE_DEBUG_MODE`` (``accelerate launch --debug``) counts too."""
    verdict = verdict_of(check_debug_mode)
    from torchdoctor.distributed.debug_settings import ACCELERATE_TRUE_VALUES, debug_mode_source

    environ = _environ(environ)
    mode = environ.get("TORCHDOCTOR_DEBUG_MODE")
    theirs = environ.get("ACCELERATE_DEBUG_MODE")
    timeout = environ.get("TORCHDOCTOR_DEBUG_TIMEOUT")
    details = {
        "TORCHDOCTOR_DEBUG_MODE": mode,
        "ACCELERATE_DEBUG_MODE": theirs,
        "TORCHDOCTOR_DEBUG_TIMEOUT": timeout,
    }
    wrong = environment.problems(environ, environment.DEBUG_MODE)
    if wrong:  # the run refuses these values with the same words (BadEnvironment)
        return _environment_finding(verdict, wrong, details)
    source = debug_mode_source(environ)
    details["enabled"] = source is not None
    details["enabled_by"] = source
    if source is not None:
        limit = f", timeout {timeout}s" if timeout is not None else ""
        return verdict(
            "ok",
            f"debug mode on ({source}={environ[source]}): collectives compare shapes across ranks first{limit} "
            f"(slower; for debugging); {_SCRIPT_CALLS}",
            details,
        )
    if theirs is not None and theirs.strip().lower() in ACCELERATE_TRUE_VALUES:
        return verdict(
            "ok",
            f"debug mode off: TORCHDOCTOR_DEBUG_MODE={mode} overrides ACCELERATE_DEBUG_MODE={theirs}",
            details,
        )
    return verdict(
        "ok",
        "debug mode off (a shape mismatch in a collective hangs; `torchdoctor launch --debug` turns it on)",
        details,
    )


def check_nccl_error_handling(environ: Mapping[str, str] | None = None) -> Finding:
    """Whether a NCCL collective that times out is aborted (the run fails) or left to hang forever."""
    verdict = verdict_of(check_nccl_error_handling)
    environ = _environ(environ)
    details = {name: environ.get(name) for name in (*_RENAMED, *_RENAMED.values())}
    details["TORCH_NCCL_ENABLE_MONITORING"] = environ.get("TORCH_NCCL_ENABLE_MONITORING")
    old = [name for name in _RENAMED if name in environ and _RENAMED[name] not in environ]
    if old:
        renames = "\n".join(f"export {_RENAMED[n]}={environ[n]} && unset {n}" for n in old)
        return verdict(
            "warn",
            f"{', '.join(old)}: deprecated name(s); torch reads {', '.join(_RENAMED[n] for n in old)}",
            details,
            renames,
        )
    mode = environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "3").strip()
    if mode not in _ASYNC_MODES:
        return verdict(
            "warn",
            f"TORCH_NCCL_ASYNC_ERROR_HANDLING={mode!r} is not one of 0, 1, 2, 3",
            details,
            "unset TORCH_NCCL_ASYNC_ERROR_HANDLING   # the default, 3, aborts a timed-out collective",
        )
    blocking = environ.get("TORCH_NCCL_BLOCKING_WAIT", "0").strip().lower() in _ON
    if blocking and mode != "0" and "TORCH_NCCL_ASYNC_ERROR_HANDLING" in environ:
        # torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: the asynchronous handling is the watchdog thread's; with
        # the blocking wait on, torch 2.x starts none ("TORCH_NCCL_BLOCKING_WAIT is enabled, NO watchdog thread is
        # created"; before that it set the handling to 0: "... should not both be enabled. Only
        # TORCH_NCCL_BLOCKING_WAIT is being used in this process")
        return verdict(
            "warn",
            f"TORCH_NCCL_BLOCKING_WAIT={environ['TORCH_NCCL_BLOCKING_WAIT']} beside "
            f"TORCH_NCCL_ASYNC_ERROR_HANDLING={mode}: torch uses only the blocking wait (no NCCL watchdog thread, so "
            f"the {_ASYNC_MODES[mode]!r} handling, its timeout dumps and desync report never happen; the caller's "
            "wait() raises after the timeout)",
            details,
            "unset TORCH_NCCL_BLOCKING_WAIT   # keep the watchdog: it aborts a timed-out collective; or unset "
            "TORCH_NCCL_ASYNC_ERROR_HANDLING to say the blocking wait is meant",
        )
    if mode == "0" and not blocking:
        return verdict(
            "warn",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING=0: a NCCL collective that times out is never aborted, "
            "the run hangs instead of failing",
            details,
            "unset TORCH_NCCL_ASYNC_ERROR_HANDLING   # or: export TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
        )
    if environ.get("TORCH_NCCL_ENABLE_MONITORING", "1").strip().lower() in _OFF:
        return verdict(
            "warn",
            "TORCH_NCCL_ENABLE_MONITORING=0: a NCCL watchdog that is itself stuck is never killed",
            details,
            "unset TORCH_NCCL_ENABLE_MONITORING",
        )
    how = "blocking wait (the caller raises after the timeout)" if blocking else _ASYNC_MODES[mode]
    return verdict(
        "ok",
        f"a timed-out NCCL collective is aborted ({how}; timeout = init_process_group(timeout=...))",
        details,
    )


def check_timeout(environ: Mapping[str, str] | None = None) -> Finding | None:
    """Variables that look like a collective timeout but that nothing reads, and a bad heartbeat timeout."""
    verdict = verdict_of(check_timeout)
    environ = _environ(environ)
    ignored = [name for name in _NOT_READ if name in environ]
    if ignored:
        return verdict(
            "warn",
            f"{', '.join(f'{n}={environ[n]}' for n in ignored)}: neither torch nor NCCL reads "
            f"{'this variable' if len(ignored) == 1 else 'these variables'}",
            {name: environ[name] for name in ignored},
            "Set the collective timeout in the script:\n"
            "    torch.distributed.init_process_group(backend, timeout=datetime.timedelta(minutes=30))",
        )
    heartbeat = environ.get("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC")
    if heartbeat is not None and not heartbeat.strip().isdigit():
        return verdict(
            "warn",
            f"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC={heartbeat!r} is not a whole number of seconds",
            {"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC": heartbeat},
            "export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=480   # torch's default",
        )
    return None


def check_torch_debug(environ: Mapping[str, str] | None = None) -> Finding:
    """``TORCH_DISTRIBUTED_DEBUG``: an invalid level makes ``init_process_group`` fail; DETAIL is slow."""
    verdict = verdict_of(check_torch_debug)
    environ = _environ(environ)
    level = environ.get("TORCH_DISTRIBUTED_DEBUG")
    details = {"TORCH_DISTRIBUTED_DEBUG": level}
    if level is None:
        return verdict(
            "ok",
            "TORCH_DISTRIBUTED_DEBUG unset (DETAIL checks collective consistency, at a cost)",
            details,
        )
    if level.upper() not in _TORCH_DEBUG_LEVELS:
        return verdict(
            "warn",
            f"TORCH_DISTRIBUTED_DEBUG={level!r} is not one of {', '.join(_TORCH_DEBUG_LEVELS)}: "
            "init_process_group will fail",
            details,
            "export TORCH_DISTRIBUTED_DEBUG=DETAIL   # or unset it",
        )
    if level.upper() == "DETAIL":
        return verdict(
            "ok",
            "TORCH_DISTRIBUTED_DEBUG=DETAIL: every collective is checked for consistency (slow; for debugging)",
            details,
        )
    return verdict("ok", f"TORCH_DISTRIBUTED_DEBUG={level}", details)


def check_nccl_debug(environ: Mapping[str, str] | None = None) -> Finding:
    """``NCCL_DEBUG``: an unknown level is ignored by NCCL; unset, a NCCL error says little."""
    verdict = verdict_of(check_nccl_debug)
    environ = _environ(environ)
    level = environ.get("NCCL_DEBUG")
    details = {"NCCL_DEBUG": level, "NCCL_DEBUG_SUBSYS": environ.get("NCCL_DEBUG_SUBSYS")}
    if level is None:
        return verdict(
            "ok",
            "NCCL_DEBUG unset (to see why NCCL fails or hangs: export NCCL_DEBUG=INFO)",
            details,
        )
    if level.upper() not in _NCCL_DEBUG_LEVELS:
        return verdict(
            "warn",
            f"NCCL_DEBUG={level!r} is not one of {', '.join(_NCCL_DEBUG_LEVELS)}: NCCL ignores it",
            details,
            "export NCCL_DEBUG=INFO",
        )
    return verdict("ok", f"NCCL_DEBUG={level.upper()}", details)


# accelerate's `distributed_type`s whose `accelerate launch` starts one process per GPU through torchrun
# (accelerate/commands/launch.py: multi_gpu_launcher); in each, accelerate's state looks for a GPU and,
# finding none, falls back to one process of its own: DistributedType.NO (accelerate/state.py).
_GPU_LAUNCHES = ("MULTI_GPU", "FSDP", "MEGATRON_LM")


def accelerate_config_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where ``accelerate config`` writes and ``accelerate launch`` reads its default config: accelerate's
    ``$HF_HOME/accelerate/default_config.yaml`` (``HF_HOME`` defaults to ``$XDG_CACHE_HOME/huggingface``,
    ``~/.cache/huggingface``)."""
    environ = _environ(environ)
    cache = environ.get("XDG_CACHE_HOME") or "~/.cache"
    home = environ.get("HF_HOME") or os.path.join(cache, "huggingface")
    return Path(os.path.expanduser(home)) / "accelerate" / "default_config.yaml"


def check_accelerate_config(
    environ: Mapping[str, str] | None = None, gpus: int | None = None
) -> Finding | None:
    """accelerate's default config against this machine: several processes asked for where `accelerate launch`
    would start them each alone (a GPU launch without GPUs) or start one (CPU without mpirun)."""
    verdict = verdict_of(check_accelerate_config)
    path = accelerate_config_file(environ)
    try:
        config = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        return None  # no `accelerate config` here: nothing to compare
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        problem = str(error).splitlines()[0] if str(error) else type(error).__name__
        return verdict("warn", f"accelerate's config {path} cannot be read: {problem}", {"path": str(path)},
                       f"accelerate config   # writes {path} again")  # fmt: skip
    if not isinstance(config, dict):
        return None
    kind = str(config.get("distributed_type", "NO"))
    processes = config.get("num_processes", 1)
    gpus = _gpus_torch_sees() if gpus is None else gpus
    details = {"path": str(path), "distributed_type": kind, "num_processes": processes, "gpus": gpus}
    if not isinstance(processes, int) or processes < 2 or config.get("num_machines", 1) not in (1, None):
        return verdict("ok", f"accelerate's config {path}: {kind}, num_processes {processes}", details)
    on_cpu = (
        f"on CPU: ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes {processes} train.py "
        "(each process then joins one gloo group as MULTI_CPU; Accelerator(cpu=True) in the script does the same)"
    )
    if kind in _GPU_LAUNCHES and gpus == 0:
        return verdict(
            "fail",
            f"accelerate's config {path} says distributed_type: {kind} with num_processes: {processes}, and torch "
            f"sees no GPU here: `accelerate launch` starts {processes} processes that each train alone "
            "(accelerate falls back to DistributedType.NO, 1 process: no data split, no gradient sync) and exits 0",
            details,
            f"{on_cpu}; or run on the GPUs the config expects",
        )
    if kind in _GPU_LAUNCHES and 0 < gpus < processes:
        return verdict(
            "fail",
            f"accelerate's config {path} says distributed_type: {kind} with num_processes: {processes}, and torch "
            f"sees {gpus} GPU(s) here: accelerate puts process i on GPU i % {gpus}, so processes share a GPU and "
            'NCCL refuses the job at its first collective ("Duplicate GPU detected")',
            details,
            f"accelerate launch --num_processes {gpus} train.py   # one process per GPU; or set num_processes: "
            f"{gpus} in {path} (accelerate config)",
        )
    if kind == "MULTI_CPU" and not (config.get("mpirun_config") or {}).get("mpirun_hostfile"):
        return verdict(
            "fail",
            f"accelerate's config {path} says distributed_type: MULTI_CPU with num_processes: {processes} and "
            "no mpirun hostfile: `accelerate launch` starts one process (as with --cpu --num_processes "
            f"{processes}); it starts several CPU processes only through mpirun",
            details,
            f"{on_cpu}; or give accelerate an mpirun hostfile (`accelerate config`: mpirun_config)",
        )
    return verdict("ok", f"accelerate's config {path}: {kind}, num_processes {processes}", details)


def _gpus_torch_sees() -> int:
    """GPUs (or other accelerators) torch sees in this process."""
    import torch

    counter = getattr(getattr(torch, "accelerator", None), "device_count", None)
    return int(counter()) if counter is not None else torch.cuda.device_count()


def check_nccl_settings(
    environ: Mapping[str, str] | None = None,
    present: list[str] | None = None,
    addressed: list[str] | None = None,
    nccl_here: bool | None = None,
) -> Finding | None:
    """NCCL's settings NCCL cannot use: ``NCCL_SOCKET_IFNAME``/``GLOO_SOCKET_IFNAME`` naming no interface of this
    host (start-up fails), a word where NCCL reads a number (``NCCL_P2P_DISABLE=yes`` is read as 0)."""
    verdict = verdict_of(check_nccl_settings)
    from torchdoctor.distributed import nccl_variables

    environ = _environ(environ)
    words = nccl_variables.not_a_number(environ)
    wanted = {
        name: environ[name] for name in nccl_variables.INTERFACE_VARIABLES if environ.get(name, "").strip()
    }
    numbers = {name: environ[name] for name in nccl_variables.NUMBER_VARIABLES if name in environ}
    if not numbers and not wanted:
        return None  # nothing set: nothing to say
    here = present is None
    present = nccl_variables.interfaces() if here else present
    missing = nccl_variables.missing_interfaces(environ, present)
    if addressed is None:  # another host's interfaces given without their addresses: take them as addressed
        addressed = nccl_variables.addressed_interfaces() if here else list(present)
    no_address = {
        name: value
        for name, value in nccl_variables.missing_interfaces(environ, addressed).items()
        if name not in missing
    }
    details = {**numbers, **wanted, "interfaces": present, "with_address": addressed}
    words_said = ", ".join(f"{name}={value!r}" for name, value in words.items())
    words_fix = [f"export {name}=1   # or 0; NCCL takes numbers only" for name in words]
    if (
        (missing or no_address)
        and set(missing) | set(no_address) == {"NCCL_SOCKET_IFNAME"}
        and not (_torch_has_nccl() if nccl_here is None else nccl_here)
    ):  # this torch runs gloo, which reads GLOO_SOCKET_IFNAME only: nothing stops here
        value = environ["NCCL_SOCKET_IFNAME"]
        why = "no such interface here" if missing else "here, but with no IP address"
        return verdict(
            "warn",
            f"NCCL_SOCKET_IFNAME={value}: {why} (this host has {', '.join(present)}); this torch has no NCCL, so "
            "runs here (gloo) do not read it, but a GPU run with it set stops at start-up ('no socket interface "
            "found')",
            details,
            f"export NCCL_SOCKET_IFNAME={_likely_interface(addressed)}   # or: unset NCCL_SOCKET_IFNAME",
        )
    if missing:
        said = "; ".join(f"{name}={value}: no such interface here" for name, value in missing.items())
        also = f"; and {words_said}: a word where NCCL reads a number" if words else ""
        return verdict(
            "fail",
            f"{said} (this host has {', '.join(present)}); the run stops at start-up "
            f"('no socket interface found'){also}",
            details,
            "\n".join(
                [f"export {name}={_likely_interface(present)}   # or: unset {name}" for name in missing]
                + words_fix
            ),
        )
    if no_address:
        said = "; ".join(
            f"{name}={value}: here, but with no IP address" for name, value in no_address.items()
        )
        usable = ", ".join(addressed) or "none"
        return verdict(
            "fail",
            f"{said} (interfaces with one: {usable}); "
            + (
                f"gloo stops at init ('Unable to find address for: {no_address['GLOO_SOCKET_IFNAME'].split(',')[0]}')"
                if "GLOO_SOCKET_IFNAME" in no_address
                else "NCCL stops at start-up ('no socket interface found')"
            ),
            details,
            "\n".join(
                [
                    f"ip addr add <address>/<prefix> dev {value.split(',')[0]} && ip link set {value.split(',')[0]} up"
                    "   # give it its address back"
                    for value in dict.fromkeys(no_address.values())
                ]
                + [
                    f"export {name}={_likely_interface(addressed)}   # or: name the interface that has it"
                    for name in no_address
                ]
                + words_fix
            ),
        )
    if words:
        return verdict(
            "warn",
            f"{words_said}: NCCL reads a number here; a word is read as 0 or ignored, so the setting has no effect",
            details,
            "\n".join(words_fix),
        )
    said = [f"{name}={value} (found here)" for name, value in wanted.items()]
    said += [f"{name}={value}" for name, value in numbers.items()]
    return verdict("ok", ", ".join(said) + ": values NCCL can use", details)


def _torch_has_nccl() -> bool:
    """Whether this torch can run NCCL (a CUDA build with it); a torch that cannot be imported counts as one."""
    from torchdoctor.torch_import import import_torch

    if import_torch() is not None:
        return True
    import torch.distributed

    return torch.distributed.is_available() and torch.distributed.is_nccl_available()


def _likely_interface(present: list[str]) -> str:
    """The interface of the default route when it is here, else the first that is not loopback, else ``lo``."""
    from torchdoctor.distributed.nccl_variables import routed_interface

    routed = routed_interface()
    return routed if routed in present else next((name for name in present if name != "lo"), "lo")
