"""DDP's unused-parameter error without TORCH_DISTRIBUTED_DEBUG gives positions, not names (session 34: a
transformers Trainer with ddp_find_unused_parameters=False and an auxiliary head used every other step, 2 gloo
ranks): the summary ended in a bare ": 25 26", which reads like counts or ranks. The lines are those the run's
rank 0 printed (torch 2.13's reducer.cpp)."""

from __future__ import annotations

from explaining import explained

RANK_0 = (
    "[rank0]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing loss. You can enable "
    "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \n"
    "[rank0]: making sure all `forward` function outputs participate in calculating loss. \n"
    "[rank0]: Parameter indices which did not receive grad for rank 0: 25 26\n"
)


def test_unused_parameter_indices_are_named_as_indices_of_the_parameters_that_require_grad():
    found = explained(RANK_0)
    assert found.id == "log.ddp_unused_parameters", found.summary
    assert found.summary.endswith(
        "on rank 0: parameter indices 25 26 (of those that require grad, in model.parameters() order)"
    ), found.summary
