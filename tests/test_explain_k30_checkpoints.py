"""torch.distributed.checkpoint and torch.save / torch.load refusing what they were handed
(kinds/distributed_checkpoint.py, serialization_calls.py), produced for real on a one-rank gloo group and in
process; and near-misses that are other kinds."""

from __future__ import annotations

import pytest
import torch
import torch.distributed.checkpoint as dcp
from explaining import explained, traceback_of
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)

pytestmark = pytest.mark.usefixtures("every_message_seen")


def lead(text: str, kind: str, confidence: str = "certain"):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, (found.id, found.summary)
    return found


def test_dcp_save_without_a_checkpoint_id(one_rank):
    found = lead(traceback_of(lambda: dcp.save({"w": torch.zeros(2)})), "distributed_checkpoint")
    assert "`checkpoint_id` must be specified" in found.summary
    assert "checkpoint_id=path" in found.fix and "FileSystemWriter" in found.fix


def test_an_empty_model_state_is_likely_and_names_the_key_read(one_rank):
    found = lead(
        traceback_of(lambda: set_model_state_dict(nn.Linear(2, 2), {})), "distributed_checkpoint", "likely"
    )
    assert "model state_dict is empty" in found.summary and "dist.get_rank()=0" in found.summary
    assert "another key" in found.fix and "strict=False" in found.fix


def test_an_empty_optimizer_state_is_likely(one_rank):
    model = nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    found = lead(
        traceback_of(lambda: set_optimizer_state_dict(model, optimizer, {})),
        "distributed_checkpoint",
        "likely",
    )
    assert "optim state_dict is empty" in found.summary and "get_optimizer_state_dict" in found.fix


def test_an_optimizer_state_asked_without_an_optimizer(one_rank):
    found = lead(
        traceback_of(lambda: get_optimizer_state_dict(nn.Linear(2, 2), [])), "distributed_checkpoint"
    )
    assert "get_optimizer_state_dict(model, optimizer)" in found.fix


def test_a_plan_that_does_not_tile_a_tensor_is_likely_from_its_text():
    # default_planner.py _validate_global_plan: two ranks' chunks of one key overlap (two processes or more)
    found = lead(
        "ValueError: Failed to validate global plan: key:model.embed.weight has overlapping chunks: "
        "ChunkStorageMetadata(offsets=torch.Size([0, 0]), sizes=torch.Size([512, 64])) "
        "ChunkStorageMetadata(offsets=torch.Size([256, 0]), sizes=torch.Size([512, 64]))\n",
        "distributed_checkpoint",
        "likely",
    )
    assert "model.embed.weight" in found.summary and "shape=" in found.fix


def test_torch_save_with_its_arguments_swapped():
    found = lead(
        traceback_of(lambda: torch.save("model.pt", {"w": torch.zeros(1)})), "torch_serialization_call"
    )
    assert "torch.save(path, state)" in found.fix


def test_a_checkpoint_of_a_device_type_not_loaded_from_its_text():
    # serialization.py _get_restore_location on a CPU machine reading an Ascend checkpoint
    found = lead(
        "RuntimeError: The npu device module is not registered. If you are running on a CPU-only machine, please "
        "use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.\n",
        "torch_serialization_call",
    )
    assert "npu" in found.summary and "map_location='cpu'" in found.fix and "torch_npu" in found.fix


# near misses
def test_a_torchscript_archive_under_weights_only_is_weights_only_load(tmp_path):
    path = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(nn.Linear(2, 2)), str(path))
    found = explained(traceback_of(lambda: torch.load(path, weights_only=True)))
    assert found.id == "log.weights_only_load", (found.id, found.summary)


def test_a_checkpoint_saved_on_a_gpu_is_checkpoint_device_map():
    found = explained(
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
        "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
        "to map your storages to the CPU.\n"
    )
    assert found.id == "log.checkpoint_device_map", found.id


def test_a_missing_key_in_a_dcp_checkpoint_is_not_a_refused_call():
    found = explained("RuntimeError: Missing key in checkpoint state_dict: model.lm_head.weight.\n")
    assert found.id != "log.distributed_checkpoint", found.id
