"""Distributed debugging: rank-aware logging, collectives checked across ranks, triggers, rank detection.

Importing this package does not import torch; the functions do when called.
"""

from torchdoctor.distributed.debug_settings import debug_mode_enabled
from torchdoctor.distributed.logging import get_logger
from torchdoctor.distributed.operations import (
    CannotPadNestedTensorWarning,
    all_reduce,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
    pad_across_processes,
    reduce,
)
from torchdoctor.distributed.raising import DistributedOperationException
from torchdoctor.distributed.trigger import check_breakpoint, check_trigger, set_breakpoint, set_trigger

__all__ = [
    "CannotPadNestedTensorWarning",
    "DistributedOperationException",
    "all_reduce",
    "broadcast",
    "broadcast_object_list",
    "check_breakpoint",
    "check_trigger",
    "debug_mode_enabled",
    "gather",
    "gather_object",
    "get_logger",
    "pad_across_processes",
    "reduce",
    "set_breakpoint",
    "set_trigger",
]
