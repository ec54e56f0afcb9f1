"""torch.distributed calls refused on their arguments (kinds/c10d_calls.py, and process_group_args' torch 2.8+
wordings), produced for real on a one-rank gloo group where torch prints them on CPU, from the catalog's text where
only NCCL or a GPU build prints them; and near-misses that are other kinds."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from explaining import explained, traceback_of

pytestmark = pytest.mark.usefixtures("every_message_seen")


def refused(text: str, confidence: str = "certain"):
    found = explained(text)
    assert found.id == "log.c10d_call_refused", (found.id, found.summary)
    assert found.details["confidence"] == confidence, found.summary
    return found


def test_a_p2p_op_made_with_send_names_isend(one_rank):
    found = refused(traceback_of(lambda: dist.P2POp(dist.send, torch.zeros(2), 0)))
    assert "Invalid ``op``" in found.summary and "dist.isend" in found.fix and "dist.send" in found.fix


def test_a_batch_of_something_else_than_p2pops(one_rank):
    found = refused(traceback_of(lambda: dist.batch_isend_irecv([torch.zeros(2)])))
    assert "p2p_op_list" in found.summary and "P2POp(dist.isend" in found.fix


def test_scatter_object_list_without_an_output_slot_and_without_the_inputs(one_rank):
    no_slot = refused(traceback_of(lambda: dist.scatter_object_list([], [1], src=0)))
    assert "out = [None]" in no_slot.fix
    no_inputs = refused(traceback_of(lambda: dist.scatter_object_list([None], None, src=0)))
    assert "scatter_object_input_list" in no_inputs.summary and "src" in no_inputs.fix


def test_src_and_group_src_both_given(one_rank):
    found = refused(traceback_of(lambda: dist.broadcast(torch.zeros(2), src=0, group_src=0)))
    # the exception's line, not the source line the traceback quotes
    assert "raise" not in found.summary and "Can't specify both" in found.summary
    assert "group_src" in found.fix


def test_split_group_without_a_bound_device(one_rank):
    found = refused(traceback_of(lambda: dist.split_group(split_ranks=[[0]])))
    assert "No device associated with the default pg" in found.summary
    assert "device_id=torch.device('cuda', local_rank)" in found.fix and "new_group" in found.fix


def test_new_subgroups_without_a_size_on_a_machine_without_cuda(one_rank):
    found = refused(traceback_of(lambda: dist.new_subgroups()))
    assert "group_size=" in found.fix


def test_an_empty_enumeration_of_subgroups(one_rank):
    found = refused(traceback_of(lambda: dist.new_subgroups_by_enumeration([])))
    assert "ranks_per_subgroup_list" in found.summary and "[[0, 1], [2, 3]]" in found.fix


def test_a_group_torch_does_not_know_is_likely_and_names_its_causes(one_rank):
    # a function passed where the group belongs: the message is printed for any object torch has no group for
    found = refused(traceback_of(lambda: dist.get_backend(dist.new_group)), confidence="likely")
    assert "not initialized in the world group map" in found.summary
    assert "destroyed" in found.fix and "pickled" in found.fix


def test_split_sizes_given_as_tensors(one_rank):
    found = refused(
        traceback_of(lambda: funcol.all_to_all_single(torch.zeros(2), [torch.tensor(2)], [2], [0]))
    )
    assert "[tensor(2)]" in found.summary and "tolist()" in found.fix


def test_device_id_on_a_cpu_only_build():
    if torch.accelerator.current_accelerator() is not None:
        pytest.skip("this torch has an accelerator: the CPU-only build's refusal is not printed")
    found = refused(
        traceback_of(
            lambda: dist.init_process_group(
                "gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1, device_id=torch.device("cuda")
            )
        )
    )
    assert "accelerator support: None" in found.summary and "index-url" in found.fix


# NCCL-only paths: the catalog's text as torch 2.13 prints it
def test_the_detail_debug_mode_without_gloo_from_its_text():
    found = refused(
        "AssertionError: ProcessGroupWrapper unsupported without GLOO backend.\n",
    )
    assert "TORCH_DISTRIBUTED_DEBUG=INFO" in found.fix


def test_a_device_id_without_index_is_process_group_args():
    # distributed_c10d.py init_process_group on a CUDA build: device_id=torch.device('cuda')
    found = explained("ValueError: Please use a device_id with index.\n")
    assert found.id == "log.process_group_args" and found.details["confidence"] == "certain", found.summary
    assert "torch.device('cuda', LOCAL_RANK)" in found.fix


def test_the_invalid_custom_backend_string_is_process_group_args():
    found = explained(
        "ValueError: The custom backend string argument is invalid: cuda-nccl.\n"
        "                Custom backend string is an experimental feature where the backend string must be in "
        "the format:\n"
    )
    assert found.id == "log.process_group_args", (found.id, found.summary)
    assert "cpu:gloo,cuda:nccl" in found.fix


# near misses: messages close to these that are other kinds
def test_a_rank_outside_the_group_is_not_a_refused_call():
    found = explained("ValueError: Invalid process group specified\n")
    assert found.id == "log.process_group_args", found.id


def test_a_default_group_never_made_is_not_a_refused_call():
    found = explained(
        "ValueError: Default process group has not been initialized, please make sure to call "
        "init_process_group.\n"
    )
    assert found.id != "log.c10d_call_refused", found.id


def test_a_quoted_source_line_alone_is_not_read_as_the_message():
    found = explained('    raise ValueError("All ops need to use the same group.")\n')
    assert found.id != "log.c10d_call_refused", found.summary
