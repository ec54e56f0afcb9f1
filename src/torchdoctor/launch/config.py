"""The launch config file: accelerate's YAML keys, read with the line of every problem named.

A config written by ``accelerate config`` works as it is. The keys torchdoctor acts on::

    num_processes: 4          # in all, over every machine (as accelerate counts them)
    num_machines: 1
    machine_rank: 0
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    rdzv_backend: static      # or c10d
    gpu_ids: all              # or "0,1": becomes CUDA_VISIBLE_DEVICES
    debug: true               # debug-mode collectives in every worker
    watchdog: 300             # torchdoctor's own: seconds without progress before the hang report
    stragglers: true          # torchdoctor's own: name the rank that holds the others back (false: not even with watchdog)
    stragglers_dir: runs/x    # where the straggler watch writes stragglers.json, stragglers.png, stragglers-windows.jsonl

Every other key accelerate defines (``mixed_precision``, ``distributed_type``, ``fsdp_config``, …) is accepted
and has no effect, since the run goes through ``torch.distributed.run`` rather than accelerate's launcher.
Any other key is a mistake, reported with its line, as is a value that cannot work (``num_processes: 0``,
``watchdog: .nan``): the message names the file, the line and the key, never a flag the user did not type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.reader import ReaderError

from torchdoctor.errors import BadInput, read_file, require_count, require_seconds
from torchdoctor.launch.options import MAX_NNODES
from torchdoctor.launch.torchrun import MAX_NPROC_PER_NODE

# key -> (type the value must have, what the error says it should be)
USED_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "num_processes": ((int,), "a whole number"),
    "num_machines": ((int,), "a whole number"),
    "machine_rank": ((int,), "a whole number"),
    "main_process_ip": ((str,), "a host name or IP address"),
    "main_process_port": ((int,), "a port number"),
    "rdzv_backend": ((str,), "static or c10d"),
    "gpu_ids": ((str, int, list), 'GPU indices such as "0,1" or [0, 1], or all'),
    "debug": ((bool,), "true or false"),
    "watchdog": ((int, float), "a number of seconds"),
    "stragglers": ((bool,), "true or false"),
    "stragglers_dir": ((str,), "a folder"),
}

# Keys accelerate's config classes define (accelerate/commands/config/config_args.py) that only
# accelerate's own launcher or Accelerator act on.
ACCELERATE_ONLY_KEYS = frozenset(
    {
        "compute_environment",
        "distributed_type",
        "mixed_precision",
        "use_cpu",
        "same_network",
        "main_training_function",
        "enable_cpu_affinity",
        "fp8_config",
        "deepspeed_config",
        "fsdp_config",
        "parallelism_config",
        "megatron_lm_config",
        "mpirun_config",
        "downcast_bf16",
        "tpu_name",
        "tpu_zone",
        "tpu_use_cluster",
        "tpu_use_sudo",
        "command_file",
        "commands",
        "tpu_vm",
        "tpu_env",
        "dynamo_config",
        "ipex_config",
    }
)


class Settings(dict):
    """The settings of a config file, key -> value, with ``where[key]``: ``"FILE line N: key:"``, so that a
    problem found later (with the command line's values) names the file and line rather than a flag."""

    def __init__(self) -> None:
        super().__init__()
        self.where: dict[str, str] = {}


def _shape_of(node: yaml.Node) -> str:
    """What a file that is not `key: value` lines holds, in the user's words (not YAML's tag)."""
    if isinstance(node, yaml.SequenceNode):
        return "a list (`- item` lines)"
    text = " ".join(str(node.value).split())
    return f"the text {text[:60] + '…' if len(text) > 60 else text!r}"


def load_config(path: str | Path) -> Settings:
    """The settings in the YAML file at ``path`` that the launcher uses, checked.

    Raises `BadInput` naming the file and line for unreadable or malformed YAML, an unknown or repeated key,
    or a value of the wrong type or out of range. Keys set to ``null`` count as not set.
    """
    # read before Path(): Path("") is ".", and an empty --config must be named as empty, not as a folder
    data = read_file("--config", path, limit=MAX_CONFIG_BYTES)  # a config is a few lines, not /dev/zero
    path = Path(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        byte = data[error.start]
        raise BadInput(f"{path} line {line}: not UTF-8 text (byte 0x{byte:02x}); save it as UTF-8") from None
    _refuse_deep_nesting(path, text)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise BadInput(_yaml_problem(path, text, error)) from None
    settings = Settings()
    if root is None:
        return settings
    _refuse_a_tag_on_the_whole_file(path, text)
    if not isinstance(root, yaml.MappingNode):
        raise BadInput(
            f"{path} line {root.start_mark.line + 1}: expected `key: value` lines, got {_shape_of(root)}"
        )
    loader = yaml.SafeLoader("")
    first_line: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode):
            kind = "a list" if isinstance(key_node, yaml.SequenceNode) else "a mapping"
            raise BadInput(f"{path} line {line}: a key must be a plain name, not {kind}")
        key = key_node.value
        if key in first_line:
            raise BadInput(f"{path} line {line}: {key!r} is set twice (first on line {first_line[key]})")
        first_line[key] = line
        if key in ACCELERATE_ONLY_KEYS:
            continue
        if key not in USED_KEYS:
            known = ", ".join(sorted(USED_KEYS))
            raise BadInput(f"{path} line {line}: unknown key {key!r} (torchdoctor reads {known})")
        where = f"{path} line {value_node.start_mark.line + 1}: {key}:"
        try:
            value = loader.construct_object(value_node, deep=True)
        except yaml.YAMLError as error:  # a tag SafeLoader refuses, such as !!python/object
            raise BadInput(f"{where} {getattr(error, 'problem', None) or error}") from None
        except (
            ValueError,
            TypeError,
            OverflowError,
        ):  # a tag it knows on a value that does not fit: !!int abc
            tag = value_node.tag.rsplit(":", 1)[-1]
            raise BadInput(f"{where} {value_node.value!r} is not a valid {tag}") from None
        if value is None:
            continue
        types, expected = USED_KEYS[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            raise BadInput(f"{where} {value!r} should be {expected}")
        _check_range(key, value, where)
        settings[key] = _gpu_ids(value, where) if key == "gpu_ids" else value
        settings.where[key] = where
    return settings


def _check_range(key: str, value: Any, where: str) -> None:
    """Raise `BadInput` for a value of the right type that cannot work, whatever the command line says."""
    if key == "num_processes" and value != -1:  # accelerate writes -1 for "not said"
        most = MAX_NPROC_PER_NODE * MAX_NNODES
        if not 1 <= value <= most:
            raise BadInput(f"{where} {value}: must be -1 (not said) or between 1 and {most}")
    elif key == "num_machines":
        require_count(where, value, 1, MAX_NNODES)
    elif key == "machine_rank":
        require_count(where, value, 0, MAX_NNODES - 1)
    elif key == "main_process_port":
        require_count(where, value, 1, 65535)
    elif key == "main_process_ip" and not value.strip():
        raise BadInput(f"{where} {value!r} should be a host name or IP address")
    elif key == "rdzv_backend" and value not in ("static", "c10d"):
        raise BadInput(f"{where} {value!r}: choose static or c10d")
    elif key == "watchdog":
        require_seconds(where, value)


def _gpu_ids(value: Any, where: str) -> str:
    """``gpu_ids`` as ``CUDA_VISIBLE_DEVICES`` wants it: ``all``, or indices (or GPU UUIDs) joined by commas.

    accelerate writes ``all`` or ``0,1``; YAML also gives ``0`` (a number) and ``[0, 1]`` (a list)."""
    if value == "all":
        return value
    parts = value if isinstance(value, list) else str(value).split(",")
    ids = []
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, (int, str)):
            raise BadInput(f"{where} {value!r}: {part!r} is not a GPU index (give e.g. 0,1 or all)")
        text = str(part).strip()
        if not (text.isascii() and text.isdigit()) and not text.startswith(("GPU-", "MIG-")):
            raise BadInput(f"{where} {value!r}: {text!r} is not a GPU index (give e.g. 0,1 or all)")
        if text in ids:
            raise BadInput(f"{where} {value!r}: GPU {text} is listed twice")
        ids.append(text)
    if not ids:
        raise BadInput(f"{where} {value!r}: no GPU named (give e.g. 0,1 or all)")
    return ",".join(ids)


# A launch config is flat `key: value` lines; PyYAML builds nested values recursively, and a few thousand
# levels exhaust Python's stack. Checked on PyYAML's event stream, which is read without recursion.
MAX_NESTING = 20
MAX_CONFIG_BYTES = 1 << 20  # accelerate's configs are under 1 KiB; a 50 MB one took 28 s to parse


def _refuse_a_tag_on_the_whole_file(path: Path, text: str) -> None:
    """A tag before the first key (``--- !!python/object:os.system``) is refused, as one on a value is."""
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.NodeEvent):
            if getattr(event, "tag", None) is not None:
                raise BadInput(
                    f"{path} line {event.start_mark.line + 1}: the tag {event.tag!r} on the whole file is not "
                    "allowed; write plain `key: value` lines"
                )
            return


def _refuse_deep_nesting(path: Path, text: str) -> None:
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_NESTING:
                    raise BadInput(
                        f"{path} line {event.start_mark.line + 1}: nested more than {MAX_NESTING} levels "
                        "deep; a launch config is `key: value` lines"
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # malformed: `load_config` names the line


def _yaml_problem(path: Path, text: str, error: yaml.YAMLError) -> str:
    """``"FILE line N: malformed YAML: what"`` for an error of PyYAML's reader, scanner, parser or composer."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if mark is not None:
        where = f"{path} line {mark.line + 1}"
    elif isinstance(error, ReaderError):  # a control character: it gives an offset only
        where = f"{path} line {text[: error.position].count(chr(10)) + 1}"
    else:
        where = str(path)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context, start = getattr(error, "context", None), getattr(error, "context_mark", None)
    if context and start is not None and mark is not None and start.line != mark.line:
        problem += f" ({context} started on line {start.line + 1})"
    return f"{where}: malformed YAML: {problem}"
