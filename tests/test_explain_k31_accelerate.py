"""accelerate refusing a call on what the script handed it (kinds/accelerate_calls.py), produced for real by
accelerate's own functions on CPU (an Accelerator on the CPU, its utilities), and near-misses that are other kinds."""

from __future__ import annotations

import pytest
import torch
from accelerate import Accelerator
from accelerate.utils import (
    BnbQuantizationConfig,
    concatenate,
    convert_file_size_to_int,
    find_batch_size,
    find_executable_batch_size,
)
from accelerate.utils import tqdm as accelerate_tqdm
from accelerate.utils.modeling import infer_auto_device_map
from explaining import explained, traceback_of
from torch import nn

pytestmark = pytest.mark.usefixtures("every_message_seen")


def refused(text: str, confidence: str = "certain"):
    found = explained(text)
    assert found.id == "log.accelerate_call_refused", (found.id, found.summary)
    assert found.details["confidence"] == confidence, found.summary
    return found


def test_a_size_written_in_words():
    found = refused(traceback_of(lambda: convert_file_size_to_int("5 gigs")))
    assert "5 gigs" in found.summary and "'20GiB'" in found.fix and "max_shard_size" in found.fix


def test_a_device_map_key_accelerate_does_not_know():
    found = refused(
        traceback_of(lambda: infer_auto_device_map(nn.Linear(2, 2), max_memory={"gpu0": "1GB", "cpu": "1GB"}))
    )
    assert "gpu0" in found.summary and "integers" in found.fix and "'cpu'" in found.fix
    # accelerate#2383 fixed this message for an XPU only: with no release printed, the certain reading stays
    # certain and names no fixed bug (catalog/fixed_bugs.tsv, fixed_upstream.second_reading)
    assert "fixed_in" not in found.details, found.summary


def test_an_empty_batch_and_a_batch_of_strings_gathered():
    empty = refused(traceback_of(lambda: find_batch_size([])))
    assert "empty <class 'list'>" in empty.summary and "collate_fn" in empty.fix
    strings = refused(traceback_of(lambda: concatenate(["a", "b"])))
    assert "<class 'str'>" in strings.summary and "gather_object" in strings.fix


def test_a_batch_size_search_that_reached_zero_is_likely_and_names_each_cause():
    @find_executable_batch_size(starting_batch_size=4)
    def step(batch_size):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    found = refused(traceback_of(step), confidence="likely")
    assert "reached zero" in found.summary
    assert "batch size 1" in found.fix and "inside it" in found.fix and "gradient checkpointing" in found.fix


def test_tqdm_given_main_process_only_as_its_first_argument():
    found = refused(traceback_of(lambda: accelerate_tqdm(True, range(3))))
    assert "main_process_only=True" in found.fix


def test_a_quantization_config_asking_for_8_and_4_bits():
    found = refused(traceback_of(lambda: BnbQuantizationConfig(load_in_8bit=True, load_in_4bit=True)))
    assert "can't be both True" in found.summary and "exactly one" in found.fix


def test_an_object_registered_for_checkpointing_without_a_state_dict():
    accelerator = Accelerator(cpu=True)
    found = refused(traceback_of(lambda: accelerator.register_for_checkpointing(5)))
    assert "state_dict" in found.summary and "load_state_dict()" in found.fix


def test_a_model_saved_with_weights_on_the_meta_device(tmp_path):
    accelerator = Accelerator(cpu=True)
    with torch.device("meta"):
        model = nn.Linear(2, 2)
    found = refused(traceback_of(lambda: accelerator.save_model(model, tmp_path)))
    assert "meta device" in found.summary and "init_empty_weights" in found.fix


def test_near_misses_are_not_accelerate_refusals():
    # Python's own concatenation error and torch's device mismatch share words with the refusals above
    python = explained(traceback_of(lambda: "a" + 1))
    assert python.id != "log.accelerate_call_refused", python.summary
    devices = explained(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)\n"
    )
    assert devices.id == "log.device_mismatch", devices.summary
    # a size torch refuses is not a size accelerate refuses
    sizes = explained(traceback_of(lambda: torch.zeros(2, 3).view(4)))
    assert sizes.id != "log.accelerate_call_refused", sizes.summary


def test_a_profiler_activity_torch_does_not_name():
    from accelerate.utils import ProfileKwargs

    found = refused(traceback_of(lambda: ProfileKwargs(activities=["gpu"]).build()))
    assert "gpu" in found.summary and "'cuda'" in found.fix


def test_fsdp2_losing_tied_embeddings_names_the_config_switch():
    # accelerator.py's FSDP2 preparation, which needs a sharded run on GPUs: the template's text
    found = refused(
        "ValueError: FSDP2 mapping failed (missing: ['lm_head.weight']). This is likely due to tied embeddings "
        "(config has tie_word_embeddings=True but checkpoint has separate weights).\n"
    )
    assert "lm_head.weight" in found.summary and "tie_word_embeddings = False" in found.fix
