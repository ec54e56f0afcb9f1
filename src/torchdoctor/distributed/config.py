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

Every other key accelerate defines (``mixed_precision``, ``distributed_type``, ``fsdp_config``, …) is accepted
and has no effect, since the run goes through ``torch.distributed.run`` rather than accelerate's launcher.
Any other key is a mistake, reported with its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from torchdoctor.errors import BadInput

# key -> (type the value must have, what the error says it should be)
USED_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "num_processes": ((int,), "a whole number"),
    "num_machines": ((int,), "a whole number"),
    "machine_rank": ((int,), "a whole number"),
    "main_process_ip": ((str,), "a host name or IP address"),
    "main_process_port": ((int,), "a port number"),
    "rdzv_backend": ((str,), "static or c10d"),
    "gpu_ids": ((str, int), 'a list of GPU indices such as "0,1", or all'),
    "debug": ((bool,), "true or false"),
    "watchdog": ((int, float), "a number of seconds"),
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


def load_config(path: str | Path) -> dict[str, Any]:
    """The settings in the YAML file at ``path`` that the launcher uses, checked.

    Raises `BadInput` naming the file and line for malformed YAML, an unknown key or a value of the
    wrong type. Keys set to ``null`` count as not set.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise BadInput(f"--config {path}: cannot read it: {error.strerror or error}") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f"{path} line {mark.line + 1}" if mark is not None else str(path)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        context, start = getattr(error, "context", None), getattr(error, "context_mark", None)
        if context and start is not None and mark is not None and start.line != mark.line:
            problem += f" ({context} started on line {start.line + 1})"
        raise BadInput(f"{where}: malformed YAML: {problem}") from None
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise BadInput(f"{path} line {root.start_mark.line + 1}: expected `key: value` lines, got {root.tag}")
    loader = yaml.SafeLoader("")
    settings: dict[str, Any] = {}
    for key_node, value_node in root.value:
        key, line = key_node.value, key_node.start_mark.line + 1
        if key in ACCELERATE_ONLY_KEYS:
            continue
        if key not in USED_KEYS:
            known = ", ".join(sorted(USED_KEYS))
            raise BadInput(f"{path} line {line}: unknown key {key!r} (torchdoctor reads {known})")
        value = loader.construct_object(value_node, deep=True)
        if value is None:
            continue
        types, expected = USED_KEYS[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            raise BadInput(f"{path} line {line}: {key}: {value!r} should be {expected}")
        settings[key] = value
    return settings
