"""A launcher's own option left unset, read where the launcher's code failed on it.

accelerate launch fills each option from its command line, else from the config file (``accelerate config``);
one that neither gives stays ``None``, and ``accelerate/utils/launch.py`` fails on it with CPython's TypeError
(catalog ``system:python-int-argument-nonetype``): ``int(args.machine_rank)`` when several machines are asked
for (``--num_machines`` > 1) and this one's rank is not said.
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised

FAMILY = "launchers and schedulers"

# an option given to int(): CPython's TypeError for int(None) names NoneType
_OPTION = re.compile(r"\bint\(args\.(?P<option>\w{1,60})\)")
_LAUNCH_CODE = ("accelerate/utils/launch.py", "accelerate/commands/launch.py")


def unset_option(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) when ``raised`` is accelerate launch failing on one of its options that nothing set
    (a TypeError about ``NoneType`` on a line of its launch code that reads ``int(args.<option>)``); else None."""
    if raised.type != "TypeError" or raised.raised_in is None or "NoneType" not in raised.message:
        return None
    if not raised.raised_in.file.replace("\\", "/").endswith(_LAUNCH_CODE):
        return None
    found = _OPTION.search(raised.raised_code)
    if found is None:
        return None
    option = found["option"]
    if option == "machine_rank":
        return (
            "accelerate launch was asked for several machines (--num_machines > 1) without this machine's "
            "--machine_rank: neither its command line nor a config file gave one",
            "Every machine runs the same accelerate launch with --num_machines N and its own --machine_rank: 0 on "
            "the main machine (the one at --main_process_ip), 1 to N-1 on the others. Under SLURM, with one task "
            "per node: accelerate launch --num_machines $SLURM_NNODES --machine_rank $SLURM_NODEID ... (escape "
            "the $ when the command is a string that srun runs on each node, so each node reads its own). Or "
            "write machine_rank into each machine's accelerate config file.",
        )
    return (
        f"accelerate launch found its option --{option} unset: neither the command line nor a config file gave it",
        f"Pass --{option} to accelerate launch, or set {option} in the config file it reads (accelerate config; "
        "accelerate launch --config_file <file>).",
    )
