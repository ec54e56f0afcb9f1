"""Lightning refusing what a Trainer or Fabric run handed it (kinds/lightning_calls.py), produced for real by
Lightning's own code on CPU (re-creating a DataLoader with a sampler, wrapping a sampler, reading a batch's size, the
strategy registry), and near-misses that are other kinds."""

from __future__ import annotations

import lightning.pytorch as pl
import pytest
from explaining import explained, traceback_of
from lightning.fabric.strategies import STRATEGY_REGISTRY, DDPStrategy
from lightning.fabric.utilities.data import _update_dataloader
from lightning.fabric.utilities.distributed import DistributedSamplerWrapper
from lightning.pytorch.utilities.data import extract_batch_size
from torch.utils.data import DataLoader, SequentialSampler

pytestmark = pytest.mark.usefixtures("every_message_seen")


class LoaderWithOwnArguments(DataLoader):
    """A DataLoader subclass that does not keep its __init__ arguments as attributes."""

    def __init__(self, data, size):
        super().__init__(data, batch_size=size)


def refused(text: str, confidence: str = "certain"):
    found = explained(text)
    assert found.id == "log.lightning_call_refused", (found.id, found.summary)
    assert found.details["confidence"] == confidence, found.summary
    return found


def test_a_dataloader_subclass_lightning_cannot_rebuild_with_a_sampler():
    data = list(range(10))
    found = refused(
        traceback_of(lambda: _update_dataloader(LoaderWithOwnArguments(data, 2), SequentialSampler(data)))
    )
    assert "LoaderWithOwnArguments" in found.summary and "['data', 'size']" in found.summary
    assert "self.<name> = <name>" in found.fix and "use_distributed_sampler=False" in found.fix


def test_a_sampler_without_a_length_under_a_distributed_strategy():
    found = refused(traceback_of(lambda: DistributedSamplerWrapper(iter([1, 2]), num_replicas=1, rank=0)))
    assert "__len__" in found.fix and "use_distributed_sampler=False" in found.fix


def test_a_batch_whose_size_cannot_be_read():
    found = refused(traceback_of(lambda: extract_batch_size("abc")))
    assert "batch_size=len(batch['input_ids'])" in found.fix


def test_a_strategy_registered_twice():
    found = refused(traceback_of(lambda: STRATEGY_REGISTRY.register("ddp", DDPStrategy)))
    assert "'ddp'" in found.summary and "override=True" in found.fix


def test_a_loader_empty_on_one_rank():
    # pytorch/utilities/data.py's has_len_all_ranks, which needs several ranks to print it: the template's text
    found = refused(
        "RuntimeError: `DataLoader` within local rank has zero length. Please make sure that it returns at least "
        "1 batch.\n"
    )
    assert "allow_zero_length_dataloader_with_multiple_devices=True" in found.fix and "drop_last" in found.fix


def test_near_misses_are_not_lightning_refusals():
    # devices= the CPU accelerator refuses: Trainer's own arguments, another kind
    devices = explained(traceback_of(lambda: pl.Trainer(accelerator="cpu", devices=1.5)))
    assert devices.id != "log.lightning_call_refused", devices.summary
    # a custom batch sampler Lightning cannot rebuild is custom_batch_sampler, not this table's DataLoader rows
    sampler = explained(
        "TypeError: Lightning can't inject a (distributed) sampler into your batch sampler, because it doesn't "
        "subclass PyTorch's `BatchSampler`. To mitigate this, either follow the API of `BatchSampler` or set "
        "`.setup_dataloaders(..., use_distributed_sampler=False)`.\n"
    )
    assert sampler.id == "log.custom_batch_sampler", sampler.summary


def test_checkpointing_turned_off_beside_a_model_checkpoint():
    from lightning.pytorch.callbacks import ModelCheckpoint

    found = refused(
        traceback_of(
            lambda: pl.Trainer(
                accelerator="cpu", logger=False, enable_checkpointing=False, callbacks=[ModelCheckpoint()]
            )
        )
    )
    assert "enable_checkpointing=False" in found.summary and "drop enable_checkpointing=False" in found.fix


def test_two_model_checkpoints_watching_the_same_metric():
    from lightning.pytorch.callbacks import ModelCheckpoint

    found = refused(
        traceback_of(
            lambda: pl.Trainer(
                accelerator="cpu",
                logger=False,
                callbacks=[ModelCheckpoint(monitor="val_loss"), ModelCheckpoint(monitor="val_loss")],
            )
        )
    )
    assert "`ModelCheckpoint`" in found.summary and "state_key" in found.fix


def test_a_checkpoint_plugin_given_to_fabrics_fsdp():
    from lightning.fabric.plugins import TorchCheckpointIO
    from lightning.fabric.strategies import FSDPStrategy

    strategy = FSDPStrategy()

    def give_plugin():
        strategy.checkpoint_io = TorchCheckpointIO()

    found = refused(traceback_of(give_plugin))
    assert "FSDPStrategy" in found.summary and "remove the CheckpointIO plugin" in found.fix
