"""What ``torchdoctor launch`` was asked for: torchrun's command line read by torch's own parser, our flags,
the config file's values merged in, and every value checked (`BadInput` naming the flag, or the file and line).

The accepted flags are derived from ``torch.distributed.run.get_args_parser()`` (read from torch's files by
`torchrun_parser`, without importing torch), so they cannot drift from torchrun's: both spellings (``--nproc-per-node``/``--nproc_per_node``), ``-m``, ``--standalone``, the
rendezvous flags, ``-r``/``-t``, … Only what the user said is kept, to be passed on as said.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torchdoctor.errors import (
    BadInput,
    no_such_option,
    require_count,
    require_readable_file,
    require_seconds,
    require_writable_folder,
)
from torchdoctor.launch import torchrun
from torchdoctor.launch.torchrun import MAX_NPROC_PER_NODE, flag
from torchdoctor.launch.torchrun_parser import torchrun_parser_parts

MAX_NNODES = 100_000
MAX_RESTARTS = 1_000_000
# The ports torchrun uses when none is given: static (--master-port) and c10d (--rdzv-endpoint HOST).
STATIC_PORT, C10D_PORT = 29500, 29400
# `nproc_per_node` words torch knows besides a number (torch.distributed.run.determine_local_world_size).
NPROC_WORDS = ("auto", "cpu", "gpu", "xpu")
# accelerate's config key -> torchrun's flag (its argparse name)
CONFIG_FLAGS = {
    "num_machines": "nnodes",
    "machine_rank": "node_rank",
    "main_process_ip": "master_addr",
    "main_process_port": "master_port",
    "rdzv_backend": "rdzv_backend",
}


@dataclass
class LaunchOptions:
    """Everything ``torchdoctor launch`` was asked for.

    ``flags`` are torchrun's flags that were said, keyed by their argparse name (``nproc_per_node``,
    ``rdzv_endpoint``, ``module``, …) with the values torch's parser gives them. ``program`` is the script
    (or module, with ``module``) and its arguments."""

    flags: dict[str, Any] = field(default_factory=dict)
    program: list[str] = field(default_factory=list)
    gpu_ids: str | None = None
    debug: bool = False
    watchdog: float | None = None
    stragglers: bool | None = None  # None: not said (on with --watchdog where a core is spare: `run`)
    stragglers_dir: str | None = None
    config: str | None = None
    verbose: bool = False
    # flag -> where its value came from when not from the command line: "config.yaml line 3: num_machines:"
    sources: dict[str, str] = field(default_factory=dict)

    def said(self, name: str) -> str:
        """How the user gave flag ``name``: its config file line, else the flag."""
        return self.sources.get(name, flag(name))


# ---------------------------------------------------------------------------------------------------------
# The command line


def command_line_parser() -> argparse.ArgumentParser:
    """torch's own torchrun parser with ``torchdoctor launch``'s flags added; an option left out is absent
    from the result (not torch's default), so that only what the user said is passed on."""
    get_args_parser, _, _ = torchrun_parser_parts()  # torch's own, without importing torch
    parser = get_args_parser()
    parser.prog = "torchdoctor launch"
    parser.description = (
        "Run a training script as torchrun does (every torchrun flag, as torchrun spells it), with "
        "debug-mode collectives, a hang watchdog, a config file and checks before the start. Options "
        "after the script go to the script. Exit status: the run's; 2 for bad input; 1 when a check "
        "before the start failed; 130 after Ctrl-C."
    )
    for action in parser._actions:  # argparse keeps no public list of them
        if action.option_strings and action.dest != "help":
            action.default = argparse.SUPPRESS
    ours = parser.add_argument_group("torchdoctor")
    ours.add_argument(
        "--debug", action="store_true", help="Check every collective's shapes across ranks first."
    )
    ours.add_argument(
        "--watchdog",
        metavar="SECONDS",
        help="After SECONDS without progress: report where every rank waits, stop the run. On several "
        "nodes, also the longest wait for the other nodes to join (else torch's 600).",
    )
    ours.add_argument(
        "--stragglers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Name the rank that holds the others back, and why (input, host, device, communication); a "
        "summary per rank at the end. On with --watchdog where rank 0's machine has a core beyond one per "
        "rank (its judge runs there); --no-stragglers keeps it off.",
    )
    ours.add_argument(
        "--stragglers-dir",
        metavar="DIR",
        help="Where --stragglers writes stragglers.json, stragglers.png and the raw windows (default: --log-dir, if given).",
    )
    ours.add_argument("--config", metavar="FILE", help="YAML settings (accelerate's config keys).")
    ours.add_argument("--verbose", "-v", action="store_true", help="Print the torchrun command line first.")
    ours.add_argument("--no-color", action="store_true", help="Print without colours (as every command).")

    _script_optional(parser)

    def refuse(message: str):
        raise BadInput(_usage_message(message, parser))

    parser.error = refuse
    return parser


def _script_optional(parser: argparse.ArgumentParser) -> None:
    """Make the script optional to argparse, so that, finding none, it still names an unknown option before
    it (`launch --bogus` is "no such option: --bogus", not "no script given"); `parse_command_line` says when
    none was given. The usage line keeps saying the script is needed."""
    parser.usage = parser.format_usage().removeprefix("usage: ").rstrip("\n")
    for action in parser._actions:
        if action.dest == "training_script":
            action.nargs, action.required, action.default = "?", False, None
        elif action.dest == "training_script_args":
            action.required, action.default = False, []


NO_SCRIPT = "no script given: torchdoctor launch [OPTIONS] SCRIPT [ARGS] (see `torchdoctor launch --help`)"


def _usage_message(message: str, parser: argparse.ArgumentParser) -> str:
    if message.startswith("unrecognized arguments:"):
        unknown = message.split(":", 1)[1].split()[0].split("=", 1)[0]  # --bogus=3 is option --bogus
        known = (name for action in parser._actions for name in action.option_strings)
        return (
            f"{no_such_option(unknown, known)} (see `torchdoctor launch --help`; options after the script go "
            "to the script)"
        )
    return message


def parse_command_line(argv: list[str]) -> LaunchOptions:
    """The options of ``torchdoctor launch ARGV``; raises `BadInput` for anything torch's parser or ours
    refuses. ``--help`` prints the help and raises `SystemExit` (0)."""
    parsed = vars(command_line_parser().parse_args(argv))
    names = ("debug", "watchdog", "stragglers", "stragglers_dir", "config", "verbose", "no_color")
    ours = {name: parsed.pop(name, None) for name in names}
    if ours["no_color"]:
        os.environ["NO_COLOR"] = "1"  # as the other commands' --no-color: https://no-color.org
    script = parsed.pop("training_script")
    if script is None:
        raise BadInput(NO_SCRIPT)
    program = [script, *parsed.pop("training_script_args")]
    return LaunchOptions(
        flags=parsed,
        program=program,
        debug=bool(ours["debug"]),
        watchdog=_seconds("--watchdog", ours["watchdog"]),
        stragglers=_stragglers(ours["stragglers"], None, ours["stragglers_dir"]),
        stragglers_dir=ours["stragglers_dir"],
        config=ours["config"],
        verbose=bool(ours["verbose"]),
    )


def _seconds(name: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"{name} {text!r}: not a number of seconds") from None
    require_seconds(name, value)
    return value


# ---------------------------------------------------------------------------------------------------------
# The config file


def merge(cli: LaunchOptions, config: Mapping, environ: Mapping[str, str] | None = None) -> LaunchOptions:
    """The options in effect: the command line where it said something, else the config file, else
    torchrun's ``PET_*`` variables in ``environ`` (default ``os.environ``; torchrun reads them too).

    The file counts ``num_processes`` over every machine, as accelerate does; torchrun wants it per node.
    A value taken from the file keeps its file and line (from `load_config`'s ``where``) in ``sources``,
    one taken from the environment its variable (``PET_MASTER_PORT``).
    """
    where = getattr(config, "where", {})
    flags, sources = dict(cli.flags), dict(cli.sources)
    for key, name in CONFIG_FLAGS.items():
        if name not in flags and config.get(key) is not None:
            flags[name] = str(config[key]) if name == "nnodes" else config[key]
            sources[name] = where.get(key, f"{key}:")
    total = config.get("num_processes", -1)
    for name, (value, variable) in torchrun_environment(environ).items():
        if name not in flags and not (name == "nproc_per_node" and total > 0):  # the file's count wins
            flags[name], sources[name] = value, variable
    if "nproc_per_node" not in flags and total > 0:  # accelerate writes -1 for "not said"
        machines = nnodes_range(flags.get("nnodes"), sources)[1]
        said = where.get("num_processes", "num_processes:")
        counted = "num_machines" if "nnodes" in sources else "--nnodes"
        if total % machines:
            raise BadInput(
                f"{said} {total} processes cannot be shared evenly by {machines} machines "
                f"({counted}); make it a multiple"
            )
        if total // machines > MAX_NPROC_PER_NODE:
            raise BadInput(
                f"{said} {total} processes over {machines} machines ({counted}) is {total // machines} per "
                f"machine; at most {MAX_NPROC_PER_NODE}"
            )
        flags["nproc_per_node"] = str(total // machines)
        sources["nproc_per_node"] = said
    gpu_ids = cli.gpu_ids if cli.gpu_ids is not None else config.get("gpu_ids")
    for key, given in (
        ("gpu_ids", cli.gpu_ids),
        ("watchdog", cli.watchdog),
        ("stragglers_dir", cli.stragglers_dir),
        ("stragglers", cli.stragglers),
    ):
        if given is None and key in where:
            sources[key] = where[key]
    stragglers_dir = cli.stragglers_dir if cli.stragglers_dir is not None else config.get("stragglers_dir")
    return LaunchOptions(
        flags=flags,
        program=list(cli.program),
        gpu_ids=None if gpu_ids is None else str(gpu_ids),
        debug=cli.debug or bool(config.get("debug", False)),
        watchdog=cli.watchdog if cli.watchdog is not None else config.get("watchdog"),
        stragglers=_stragglers(cli.stragglers, config.get("stragglers"), stragglers_dir),
        stragglers_dir=stragglers_dir,
        config=cli.config,
        verbose=cli.verbose,
        sources=sources,
    )


def _stragglers(said: bool | None, configured: bool | None, folder: str | None) -> bool | None:
    """The straggler watch: on or off as the command line, else the config file, said it; on where a folder
    for it was given and neither said; else None (not said: on with --watchdog where a core is spare)."""
    if said is not None:
        return said
    if configured is not None:
        return configured
    return True if folder is not None else None


def torchrun_environment(environ: Mapping[str, str] | None = None) -> dict[str, tuple[Any, str]]:
    """The flags torchrun takes from ``PET_<FLAG>`` variables when its command line leaves them out
    (``PET_NPROC_PER_NODE=4``, ``PET_MASTER_PORT=29600``): ``{name: (value, variable)}``, values read as
    torch's parser reads them. Raises `BadInput` naming a variable torch could not read."""
    get_args_parser, env, check_env = torchrun_parser_parts()  # torch's own, without importing torch
    environ = os.environ if environ is None else environ
    found: dict[str, tuple[Any, str]] = {}
    for action in get_args_parser()._actions:  # argparse keeps no public list of them
        variable = f"PET_{action.dest.upper()}"
        if not isinstance(action, (env, check_env)) or variable not in environ:
            continue
        text = environ[variable]
        try:
            if isinstance(action, check_env):  # torch: bool(int(value))
                if int(text):
                    found[action.dest] = (True, variable)
            else:
                found[action.dest] = (action.type(text) if action.type else text, variable)
        except (ValueError, TypeError):
            wanted = "0 or 1" if isinstance(action, check_env) else f"a value for {flag(action.dest)}"
            if action.type in (int, float):
                wanted = "a whole number" if action.type is int else "a number"
            raise BadInput(
                f"{variable}={text!r} (torchrun reads it as {flag(action.dest)}): give {wanted}"
            ) from None
    return found


# ---------------------------------------------------------------------------------------------------------
# Checking the values


def nnodes_range(text: str | None, sources: Mapping[str, str] | None = None) -> tuple[int, int]:
    """``"2"`` -> (2, 2), ``"1:4"`` -> (1, 4), as torchrun reads ``--nnodes``; None -> (1, 1).
    Raises `BadInput` naming the value."""
    if text is None:
        return 1, 1
    said = (sources or {}).get("nnodes", "--nnodes")
    parts = str(text).split(":")
    if len(parts) > 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise BadInput(f"{said} {text}: give a number of nodes, or MIN:MAX (e.g. 1:4)")
    low, high = int(parts[0]), int(parts[-1])
    if not 1 <= low <= high <= MAX_NNODES:
        if len(parts) == 1:
            raise BadInput(f"{said} {text}: must be between 1 and {MAX_NNODES}")
        raise BadInput(f"{said} {text}: need 1 <= MIN <= MAX <= {MAX_NNODES}")
    return low, high


def validate(options: LaunchOptions) -> None:
    """Raise `BadInput` naming the first value that cannot work: its flag, or its config file and line."""
    flags, said = options.flags, options.said
    nproc = flags.get("nproc_per_node")
    if nproc is not None and str(nproc) not in NPROC_WORDS:
        if not (str(nproc).isascii() and str(nproc).strip().isdigit()):
            raise BadInput(
                f"{said('nproc_per_node')} {str(nproc) or repr('')}: give a number, or one of {', '.join(NPROC_WORDS)}"
            )
        require_count(said("nproc_per_node"), int(nproc), 1, MAX_NPROC_PER_NODE)
    _, most = nnodes_range(flags.get("nnodes"), options.sources)
    rank = flags.get("node_rank")
    if rank is not None and not 0 <= rank < most:
        counted = f"{'num_machines' if 'nnodes' in options.sources else '--nnodes'} is {flags.get('nnodes')}"
        raise BadInput(
            f"{said('node_rank')} {rank}: must be between 0 and {most - 1}, as "
            + (counted if "nnodes" in flags else "there is 1 node (--nnodes not given)")
        )
    require_count(said("master_port"), flags.get("master_port"), 1, 65535)
    for name in ("master_addr", "local_addr"):
        value = flags.get(name)
        if value is not None and (not value.strip() or any(c.isspace() for c in value)):
            raise BadInput(f"{said(name)} {value!r}: give a host name or an IP address")
    if flags.get("rdzv_endpoint"):
        try:
            torchrun.parse_endpoint(flags["rdzv_endpoint"], default_port=C10D_PORT)
        except ValueError as error:
            raise BadInput(f"{said('rdzv_endpoint')}: {error}") from None
    backend = flags.get("rdzv_backend")
    if backend is not None and "rdzv_backend" in options.sources and backend not in ("static", "c10d"):
        raise BadInput(f"{said('rdzv_backend')} {backend!r}: choose static or c10d")
    if backend is not None and not str(backend).strip():
        raise BadInput(f"{said('rdzv_backend')} '': choose static or c10d (or another backend torch has)")
    conf = flags.get("rdzv_conf")
    if conf:
        for item in conf.split(","):
            key, equals, value = item.partition("=")
            if not (equals and key.strip() and value.strip()):
                raise BadInput(f"--rdzv-conf {conf!r}: {item!r} is not KEY=VALUE (e.g. join_timeout=600)")
    require_count("--max-restarts", flags.get("max_restarts"), 0, MAX_RESTARTS)
    if flags.get("monitor_interval") is not None:
        require_seconds("--monitor-interval", flags["monitor_interval"], maximum=3600)
    if flags.get("shutdown_timeout") is not None:
        require_count("--shutdown-timeout", flags["shutdown_timeout"], 0, 7 * 24 * 3600)
    for name in ("redirects", "tee"):
        if flags.get(name) is not None:
            _check_std(name, flags[name])
    ranks = flags.get("local_ranks_filter")
    if ranks and not all(r.strip().isascii() and r.strip().isdigit() for r in ranks.split(",")):
        raise BadInput(f"--local-ranks-filter {ranks!r}: give local ranks separated by commas, e.g. 0,1")
    for name in ("signals_to_handle",):
        for sig in str(flags.get(name) or "").split(","):
            if sig.strip() and not hasattr(signal, sig.strip()):
                raise BadInput(
                    f"--signals-to-handle {flags[name]!r}: no signal {sig.strip()!r} (e.g. SIGTERM,SIGINT)"
                )
    if flags.get("log_dir") is not None:  # torchrun would fail 3 s in, with its traceback
        require_writable_folder("--log-dir", flags["log_dir"], keep=False)
    if flags.get("standalone") and nnodes_range(flags.get("nnodes"), options.sources)[1] > 1:
        raise BadInput(
            f"--standalone runs one node alone, and {said('nnodes')} is {flags['nnodes']}: drop --standalone "
            "and give every node --rdzv-endpoint HOST:PORT (or --master-addr/--master-port)"
        )
    if options.gpu_ids is not None:
        _check_gpu_ids(options)
    if options.watchdog is not None:
        require_seconds(said("watchdog"), options.watchdog)
    if options.stragglers_dir is not None:  # a folder we write, as every --log-dir
        if options.stragglers is False:
            raise BadInput(
                f"{said('stragglers_dir')} {options.stragglers_dir} is where the straggler watch writes, and "
                f"{said('stragglers') + ' false' if 'stragglers' in options.sources else '--no-stragglers'} turns it off: drop one of them"
            )
        require_writable_folder(said("stragglers_dir"), options.stragglers_dir, keep=False)
    if flags.get("no_python") and (options.debug or options.watchdog is not None or options.stragglers):
        asked = (
            "--debug" if options.debug else "--watchdog" if options.watchdog is not None else "--stragglers"
        )
        raise BadInput(
            f"{asked} needs a Python script, and --no-python runs {options.program[0]!r} as a program"
        )
    if flags.get("no_python") and flags.get("module"):
        raise BadInput("--no-python and -m/--module together: -m runs a Python module, --no-python a program")


def _check_std(name: str, value: str) -> None:
    """torch's own reading of ``--redirects``/``--tee``: ``0``-``3``, or ``LOCAL_RANK:N,...``."""
    from torch.distributed.elastic.multiprocessing.api import Std

    try:
        Std.from_str(str(value))
    except (ValueError, KeyError, TypeError):
        raise BadInput(
            f"{flag(name)} {value!r}: give 0 (none), 1 (stdout), 2 (stderr) or 3 (both), or per local rank "
            "such as 0:3,1:1"
        ) from None


def _check_gpu_ids(options: LaunchOptions) -> None:
    ids = options.gpu_ids
    if ids == "all":
        return
    said = options.sources.get("gpu_ids", "gpu_ids:")
    parts = [p.strip() for p in str(ids).split(",")]
    for part in parts:
        if not (part.isascii() and part.isdigit()) and not part.startswith(("GPU-", "MIG-")):
            raise BadInput(f"{said} {ids!r}: {part!r} is not a GPU index (give e.g. 0,1 or all)")


def check_script(options: LaunchOptions) -> None:
    """Raise `BadInput` unless the program can be started: a readable script file (a module is found
    by the workers themselves; with ``--no-python`` an executable)."""
    target = options.program[0]
    if options.flags.get("module"):
        if not target.strip() or any(c.isspace() or c in "/\\" for c in target):
            raise BadInput(f"-m {target!r}: give a module name such as pkg.train")
        _require_module(target)
        return
    if options.flags.get("no_python"):
        if shutil.which(target) is None:
            raise BadInput(f"program {target!r} (--no-python): not found, or not executable")
        return
    require_readable_file("script", target)


def _require_module(name: str) -> None:
    """Raise `BadInput` unless ``python -m name`` would find the module from here, as the workers do (they
    start in this folder, first on ``sys.path``). Only looked for, part by part: nothing of it is imported."""
    import importlib.machinery
    import sys

    places = [os.getcwd(), *sys.path]
    for depth, part in enumerate(name.split(".")):
        if not part.isidentifier():
            raise BadInput(f"-m {name}: {part!r} is not a module name (letters, digits, _)")
        spec = importlib.machinery.PathFinder.find_spec(part, places)
        if spec is None and depth == 0 and part in sys.builtin_module_names:
            return
        if spec is None:
            where = (
                os.getcwd() + " or the installed packages"
                if depth == 0
                else ".".join(name.split(".")[:depth])
            )
            raise BadInput(f"-m {name}: no module {part!r} in {where}")
        places = list(spec.submodule_search_locations or [])
