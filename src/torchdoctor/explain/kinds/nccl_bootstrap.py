"""NCCL's bootstrap refusing the processes that join one communicator: their counts of ranks disagree.

Every rank of an NCCL communicator connects to one bootstrap root (``src/bootstrap.cc``), whose address comes from
the unique id torch exchanges through its store, or from NCCL_COMM_ID. The root WARNs "Bootstrap Root : mismatch in
rank count" (2.4-2.21; "mismatch in info from procs, nranks ..." from 2.23) when two processes announce different
sizes, then stops serving: the other ranks wait until their timeout. Processes of one job that built the group
differently (new_group given other ranks on some of them, WORLD_SIZE differing between nodes) and the processes of
another job reaching the same fixed NCCL_COMM_ID print it alike: likely, its fix naming both. NCCL 2.30's refusal to
grow a communicator while NCCL_COMM_ID is set names its one cause.
"""

from __future__ import annotations

import dataclasses
import re

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "NCCL and collectives"

_SIZES_DIFFER = (
    "The processes that joined one NCCL communicator disagree on its size (the numbers the WARN prints). In one "
    "job: every rank must create each group with the same list of ranks, in the same order of new_group calls "
    "(new_group is collective: call it on every rank, with the same ranks, even on those outside it), and every "
    "node must be started with the same world size (torchrun --nnodes / --nproc_per_node, WORLD_SIZE, the "
    "scheduler's task count). Across jobs: NCCL_COMM_ID fixes the bootstrap address, so two jobs (or a stale "
    "process of an earlier one) meet at it: unset NCCL_COMM_ID (torch never needs it) and kill leftover processes."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("Bootstrap Root : mismatch in rank count from procs", _SIZES_DIFFER),
    ("Bootstrap Root : mismatch in info from procs", _SIZES_DIFFER),
    (
        "ncclCommGetUniqueId should not be called when NCCL_COMM_ID is set",
        "A communicator being grown (ncclCommGrow) takes its unique id from its parent, which NCCL_COMM_ID would "
        "override: unset NCCL_COMM_ID (look in the job script, the container's ENV, /etc/nccl.conf and ~/.nccl.conf) "
        "before growing communicators.",
    ),
)

NCCL_BOOTSTRAP = refusal_recogniser(
    kind="nccl_bootstrap_mismatch",
    title="NCCL's bootstrap refusing ranks that disagree on the communicator",
    refusals=REFUSALS,
    templates=(
        "nccl:bootstrap-root-mismatch-in-rank-count",  # src/bootstrap.cc
        "nccl:bootstrap-root-mismatch-in-info-from",
        "nccl:bootstrap-root-mismatch-in-info-from-2",
        "nccl:ncclcommgetuniqueid-should-not-be-called-when",
    ),
    several=("Bootstrap Root : mismatch in",),
)

# the WARN's own words on (not the "file.cc:line NCCL WARN" before them), never a traceback's quoted source line;
# the timeout or "unhandled system error" the waiting ranks report is this one's consequence
NCCL_BOOTSTRAP = dataclasses.replace(
    NCCL_BOOTSTRAP,
    facts=(re.compile(r"(?P<refusal>(?:" + "|".join(re.escape(t) for t, _ in REFUSALS) + r")[^\n]{0,260})"),),
    absorbs=("nccl_system_error", "nccl_error", "collective_timeout"),
    reject=None,
)

RECOGNISERS = (NCCL_BOOTSTRAP,)
