"""Samplers and datasets the DataLoader reads (kinds/sampler_datasets.py) and pipeline-parallel schedules
(kinds/pipeline_schedules.py) refusing what they were given, produced for real (a DataLoader with worker processes,
a DistributedSampler, a one-stage pipeline on a one-rank gloo group); and near-misses that are other kinds."""

from __future__ import annotations

import warnings

import pytest
import torch
from explaining import explained, traceback_of
from torch import nn
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe
from torch.distributed.pipelining.schedules import get_schedule_class
from torch.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    StackDataset,
)

pytestmark = pytest.mark.usefixtures("every_message_seen")


class Numbers(Dataset):
    """A map-style dataset whose length can change after a sampler was built on it."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> int:
        return index


class EveryWorkerYieldsAll(IterableDataset):
    """An IterableDataset that does not split its items among the DataLoader's workers."""

    def __iter__(self):
        return iter(range(4))

    def __len__(self) -> int:
        return 4


def test_a_dataset_that_grew_after_its_distributed_sampler_is_likely():
    numbers = Numbers(4)
    sampler = DistributedSampler(numbers, num_replicas=1, rank=0)
    numbers.count = 10
    found = explained(traceback_of(lambda: list(iter(sampler))))
    assert found.id == "log.sampler_datasets" and found.details["confidence"] == "likely", found.summary
    assert "Number of indices (14)" in found.summary and "total_size (4)" in found.summary
    assert "build the sampler after the dataset is final" in found.fix


def test_every_worker_yielding_the_whole_iterable_dataset():
    loader = DataLoader(EveryWorkerYieldsAll(), num_workers=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(loader) == 4
        assert len(list(loader)) == 8  # each of the 2 workers yields all 4
    said = next(str(w.message) for w in caught if "was reported to be" in str(w.message))
    found = explained(
        f"/opt/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py:731: UserWarning: {said}\n"
    )
    assert found.id == "log.sampler_datasets" and found.details["confidence"] == "certain", found.summary
    assert "get_worker_info()" in found.fix and "info.num_workers" in found.fix


def test_a_negative_index_past_a_concatenation():
    found = explained(traceback_of(lambda: ConcatDataset([Numbers(2), Numbers(2)])[-10]))
    assert found.id == "log.sampler_datasets", found.summary
    assert "-len..len-1" in found.fix


def test_a_stack_of_datasets_given_both_ways():
    found = explained(traceback_of(lambda: StackDataset(Numbers(2), label=Numbers(2))))
    assert found.id == "log.sampler_datasets" and found.details["confidence"] == "certain", found.summary
    assert "StackDataset(image=images, label=labels)" in found.fix


def test_a_misspelt_schedule_name_lists_the_valid_ones():
    found = explained(traceback_of(lambda: get_schedule_class("OneFOneB")))
    assert found.id == "log.pipeline_schedules" and found.details["confidence"] == "certain", found.summary
    assert "'OneFOneB'" in found.summary and "'1F1B'" in found.summary


def test_fewer_microbatches_than_stages_from_its_text():
    # schedules.py _PipelineSchedule (a multi-stage pipeline: two ranks or more)
    found = explained(
        "ValueError: Number of microbatches (2) must be greater than or equal to the number of stages (4).\n"
    )
    assert found.id == "log.pipeline_schedules", found.summary
    assert "(2)" in found.summary and "n_microbatches" in found.fix


def test_a_training_step_under_no_grad(one_rank):
    stage = PipelineStage(nn.Linear(4, 4), 0, 1, torch.device("cpu"))
    schedule = ScheduleGPipe(stage, n_microbatches=2, loss_fn=lambda out, target: out.sum())

    def step():
        with torch.no_grad():
            schedule.step(torch.randn(2, 4), target=torch.randn(2, 4))

    found = explained(traceback_of(step))
    assert found.id == "log.pipeline_schedules", (found.id, found.summary)
    assert "schedule.eval(" in found.fix


# near misses
def test_an_iterable_dataset_given_a_sampler_is_dataloader_options():
    found = explained(
        "ValueError: DataLoader with IterableDataset: expected unspecified sampler option, but got "
        "sampler=<torch.utils.data.sampler.RandomSampler object at 0x7f>\n"
    )
    assert found.id == "log.dataloader_options", found.id


def test_an_index_out_of_range_in_a_dataset_is_not_a_sampler_refusal():
    found = explained("IndexError: index 12 is out of bounds for dimension 0 with size 10\n")
    assert found.id != "log.sampler_datasets", found.id
