"""What accelerate's ``PartialState``/``Accelerator`` set up for its tests, done with plain ``torch.distributed``.

accelerate's tests reach the features through its state objects (``state.num_processes``,
``accelerator.pad_across_processes(...)``, ``state.debug = True``). torchdoctor has no state object: its
functions work on whatever process group the launcher set up. So the harness (``tests/accelerate_harness.py``)
imports these classes in place of accelerate's: they start a gloo process group from the launcher's
``RANK``/``WORLD_SIZE`` (none without them, as accelerate in one process), answer the questions the tests ask
from ``torch.distributed``, and hand every feature call to torchdoctor's function of the same name.
"""

from __future__ import annotations

import os
from datetime import timedelta

import torch
import torch.distributed as dist
from accelerate.utils.dataclasses import DistributedType  # the tests compare against accelerate's enum

import torchdoctor
import torchdoctor.distributed as td


class PartialState:
    """Rank, world size and device from ``torch.distributed``; debug mode from ``TORCHDOCTOR_DEBUG_MODE``."""

    def __init__(self, *args, **kwargs) -> None:
        if "WORLD_SIZE" in os.environ and not dist.is_initialized():
            dist.init_process_group("gloo", timeout=timedelta(seconds=120))

    @property
    def num_processes(self) -> int:
        return dist.get_world_size() if dist.is_initialized() else 1

    @property
    def process_index(self) -> int:
        return dist.get_rank() if dist.is_initialized() else 0

    local_process_index = process_index

    @property
    def is_main_process(self) -> bool:
        return self.process_index == 0

    is_local_main_process = is_main_process

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    @property
    def distributed_type(self) -> DistributedType:
        return DistributedType.MULTI_CPU if self.num_processes > 1 else DistributedType.NO

    @property
    def state(self) -> PartialState:
        return self

    @property
    def debug(self) -> bool:
        return td.debug_mode_enabled()

    @debug.setter
    def debug(self, value: bool) -> None:
        # torchdoctor's switch for debug mode is the environment, read at each collective; ours overrides
        # ACCELERATE_DEBUG_MODE, so "0" turns it off whatever the launcher set
        os.environ["TORCHDOCTOR_DEBUG_MODE"] = "1" if value else "0"

    def print(self, *args, **kwargs) -> None:
        if self.is_main_process:
            print(*args, **kwargs)

    def wait_for_everyone(self) -> None:
        if dist.is_initialized():
            dist.barrier()

    def destroy_process_group(self) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()

    @classmethod
    def _reset_state(cls, reset_partial_state: bool = False) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()

    def __repr__(self) -> str:
        return f"rank {self.process_index} of {self.num_processes} on gloo ({self.distributed_type})"


class Accelerator(PartialState):
    """``Accelerator``'s methods that the tests call, each one torchdoctor's function of that name."""

    def pad_across_processes(self, tensor, dim=0, pad_index=0, pad_first=False):
        return td.pad_across_processes(tensor, dim=dim, pad_index=pad_index, pad_first=pad_first)

    def gather(self, tensor):
        return td.gather(tensor)

    def set_trigger(self) -> None:
        torchdoctor.set_trigger()

    def check_trigger(self) -> bool:
        return torchdoctor.check_trigger()


AcceleratorState = PartialState


def copy_tensor_to_devices(tensor=None):
    """accelerate copies a tensor from rank 0 to every GPU/TPU; torchdoctor has no counterpart."""
    raise NotImplementedError("torchdoctor has no copy_tensor_to_devices (several GPUs or TPUs only)")
