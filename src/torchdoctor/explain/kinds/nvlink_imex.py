"""Multi-node NVLink (MNNVL) that NCCL finds but cannot use: the IMEX service or its channel is not set up.

On a multi-node NVLink system (GB200 NVL72 and the like) NCCL 2.27+ shares GPU memory between the nodes of one
NVLink domain through FABRIC handles, which the IMEX service (nvidia-imex) exports and imports. ``src/mnnvl.cc``
checks both once a communicator finds an NVLink clique spanning nodes, and stops with ncclSystemError naming the
IMEX channel (a FABRIC allocation refused: no /dev/nvidia-caps-imex-channels in the process's reach) or the IMEX
configuration (export or import refused: the daemon down, or nodes not in one domain).
"""

from __future__ import annotations

import dataclasses
import re

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "drivers and GPUs"

_IMEX = (
    "Multi-node NVLink needs the IMEX service on every node of the NVLink domain: nvidia-imex running with the same "
    "nodes_config.cfg everywhere (nvidia-imex-ctl -N shows each node's state), and an IMEX channel the process can "
    "open (/dev/nvidia-caps-imex-channels/channel0: create it, and pass it into the container, e.g. "
    "NVIDIA_IMEX_CHANNELS=0 with the NVIDIA container toolkit, or a ComputeDomain of NVIDIA's DRA driver on "
    "Kubernetes). Or run without MNNVL: NCCL_MNNVL_ENABLE=0 (traffic between trays then goes over the network)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("is available but not working on this system. Check the IMEX", _IMEX),
)

MNNVL_IMEX = refusal_recogniser(
    kind="mnnvl_imex",
    title="multi-node NVLink without a working IMEX service",
    refusals=REFUSALS,
    templates=(
        "nccl:mnnvl-cliquesize-is-available-but-not",  # src/mnnvl.cc (2.27+)
        "nccl:mnnvl-cliquesize-is-available-but-not-2",
        "nccl:mnnvl-cliquesize-is-available-but-not-3",
        "nccl:mnnvl-cliquesize-is-available-but-not-4",
    ),
)

# the WARN from "MNNVL (cliqueSize N)" on, never a traceback's quoted source line; torch's "unhandled system error"
# for it is its consequence
MNNVL_IMEX = dataclasses.replace(
    MNNVL_IMEX,
    facts=(
        re.compile(
            r"(?P<refusal>MNNVL \(cliqueSize \d+\) is available but not working on this system[^\n]{0,200})"
        ),
    ),
    absorbs=("nccl_system_error", "nccl_error"),
    reject=None,
)

RECOGNISERS = (MNNVL_IMEX,)
