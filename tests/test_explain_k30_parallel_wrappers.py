"""FSDP2's fully_shard, FSDP1, DDP / DataParallel and ZeroRedundancyOptimizer refusing how they were applied or
called (kinds/fully_shard_usage.py, fsdp1_usage.py, ddp_calls.py, zero_redundancy.py), produced for real on a
one-rank gloo group where torch prints them on CPU (FSDP1 needs a GPU past its argument checks: the catalog's text
there); and near-misses that are other kinds."""

from __future__ import annotations

import pytest
import torch
from explaining import certain_saying as lead
from explaining import explained, traceback_of
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook import PowerSGDState
from torch.distributed.algorithms.join import Join
from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
from torch.distributed.fsdp import FullyShardedDataParallel, fully_shard
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_fully_shard_on_a_module_list(one_rank):
    lead(
        traceback_of(lambda: fully_shard(nn.ModuleList([nn.Linear(2, 2)]))),
        "fully_shard_usage",
        ["does not support containers that do not implement forward"],
        ["for block in model.layers: fully_shard(block)"],
    )


def test_prefetching_a_module_fully_shard_was_not_applied_to(one_rank):
    model = nn.Linear(2, 2)
    fully_shard(model)
    lead(
        traceback_of(lambda: model.set_modules_to_forward_prefetch([nn.Linear(2, 2)])),
        "fully_shard_usage",
        ["Expects FSDPModule but got", "Linear(in_features=2"],
        ["modules fully_shard was applied to"],
    )


def test_forward_through_a_submodule_first_from_its_text():
    # _fsdp_state.py _lazy_init on a GPU run: an evaluation called a block before the root
    lead(
        "RuntimeError: FSDP state has already been lazily initialized for layers.0\n"
        "FSDP requires running forward through the root module first\n",
        "fully_shard_usage",
        ["requires running forward through the root module first"],
        ["run forward through it (model(batch))"],
    )


def test_fsdp1_ignored_modules_given_names(one_rank):
    lead(
        traceback_of(lambda: FullyShardedDataParallel(nn.Linear(2, 2), ignored_modules=["lm_head"])),
        "fsdp1_usage",
        ["[<class 'str'>]"],
        ["ignored_modules=[model.lm_head]"],
    )


def test_fsdp1_frozen_and_trainable_in_one_unit_from_its_text():
    # _wrap_utils.py _validate_frozen_params with use_orig_params=False (FSDP1 needs a GPU to get there)
    lead(
        "ValueError:  has both parameters with requires_grad=True and False. FSDP does not support wrapping such "
        "modules when use_orig_params=False. If possible, wrap the frozen parameters with FSDP separately.\n",
        "fsdp1_usage",
        ["use_orig_params=False"],
        ["use_orig_params=True", "fsdp_auto_wrap_policy"],
    )


def test_fsdp1_optimizer_state_missing_on_some_ranks_is_likely():
    found = explained(
        "RuntimeError: FSDP currently requires each rank to have at least the optimizer states needed by rank 0's "
        "optimizer but some ranks are missing some of those states\n"
    )
    assert found.id == "log.fsdp1_usage" and found.details["confidence"] == "likely", found.summary
    assert "first step" in found.fix and "get_state_dict" in found.fix


def test_a_comm_hook_that_is_not_callable(one_rank):
    model = DistributedDataParallel(nn.Linear(2, 2))
    lead(
        traceback_of(lambda: model.register_comm_hook(None, 5)),
        "ddp_call_refused",
        ["Communication hook must be callable"],
        ["register_comm_hook(None, default_hooks.fp16_compress_hook)"],
    )


def test_a_comm_hook_annotated_with_another_bucket_type(one_rank):
    model = DistributedDataParallel(nn.Linear(2, 2))

    def hook(state, bucket: int):
        return bucket

    lead(
        traceback_of(lambda: model.register_comm_hook(None, hook)),
        "ddp_call_refused",
        ["bucket annotation should be dist.GradBucket"],
        ["bucket: dist.GradBucket"],
    )


def test_dataparallel_gathering_cpu_outputs_from_its_text():
    # torch/nn/parallel/_functions.py Gather.forward: a replica's forward returned CPU tensors (GPUs only)
    lead(
        "RuntimeError: Gather function not implemented for CPU tensors\n",
        "ddp_call_refused",
        ["Gather function not implemented for CPU tensors"],
        ["keep the forward's outputs on the GPU"],
    )


def test_join_over_nothing(one_rank):
    lead(
        traceback_of(lambda: Join([]).__enter__()),
        "ddp_call_refused",
        ["requires at least one joinable"],
        ["with Join([ddp_model])"],
    )


def test_powersgd_with_error_feedback_from_the_first_iteration(one_rank):
    lead(
        traceback_of(lambda: PowerSGDState(None, start_powerSGD_iter=1, use_error_feedback=True)),
        "ddp_call_refused",
        ["start_powerSGD_iter"],
        ["start_powerSGD_iter of 2 or more"],
    )


def test_a_model_averager_of_period_zero(one_rank):
    lead(
        traceback_of(lambda: PeriodicModelAverager(period=0)),
        "ddp_call_refused",
        ["``period`` must be a positive value"],
        ["PeriodicModelAverager(period=4, warmup_steps=100)"],
    )


def test_a_rank_that_ran_out_of_batches_under_join_from_its_text():
    # algorithms/join.py with throw_on_early_termination=True: two ranks with different numbers of batches
    lead(
        "RuntimeError: Detected at least one rank that exhausted inputs. Throwing across all ranks.\n",
        "ddp_call_refused",
        ["exhausted inputs"],
        ["same number of batches", "throw_on_early_termination"],
    )


def test_zero_on_no_parameters(one_rank):
    lead(
        traceback_of(lambda: ZeroRedundancyOptimizer([], torch.optim.SGD, lr=0.1)),
        "zero_redundancy_optimizer",
        ["empty parameter list"],
        ["list(model.parameters())"],
    )


def test_zero_on_the_model_itself(one_rank):
    lead(
        traceback_of(lambda: ZeroRedundancyOptimizer(nn.Linear(2, 2), torch.optim.SGD, lr=0.1)),
        "zero_redundancy_optimizer",
        ["but got torch.nn.modules.linear.Linear"],
        ["not the model"],
    )


# near misses
def test_fsdp2_non_contiguous_parameters_stay_fsdp2_params():
    found = explained(
        "NotImplementedError: FSDP does not support non-contiguous parameters yet: "
        "param.shape=torch.Size([4, 4]) param.stride()=(1, 4)\n"
    )
    assert found.id == "log.fsdp2_noncontiguous_param", found.id


def test_ddp_unused_parameters_are_not_a_refused_call():
    found = explained(
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
        "This error indicates that your module has parameters that were not used in producing loss.\n"
    )
    assert found.id != "log.ddp_call_refused", found.id


def test_an_optimizer_on_no_parameters_is_not_zero():
    found = explained("ValueError: optimizer got an empty parameter list\n")
    assert found.id != "log.zero_redundancy_optimizer", found.id
