"""pytorch/examples' DDP tutorial (distributed/ddp-tutorial-series/multigpu_torchrun.py) half converted to CPU
ranks, as users do: a SyncBatchNorm or DDP's device_ids left from the GPU version. explain named the cause and,
beside it, readings that need GPUs (a run no launcher started, device_map, GPU selection): those are left out
where the message itself names a CPU module."""

from __future__ import annotations

from explaining import explained


# pytorch/examples' DDP tutorial with its model given a BatchNorm1d and convert_sync_batchnorm, 2 CPU ranks:
# DDP's own check (torch/nn/parallel/distributed.py) names SyncBatchNorm; no other distributed call is in question
def test_syncbn_on_cpu_ranks_names_no_unlaunched_run_beside_it():
    found = explained("[rank0]: ValueError: SyncBatchNorm layers only work with GPU modules\n")
    assert found.id == "log.syncbn_misuse"
    assert "log.not_launched_distributed" not in found.details.get("alternatives", []), found.summary


def test_syncbn_beside_the_missing_default_group_still_names_the_other_call():
    found = explained(
        "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
        "ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n"
    )
    assert found.id == "log.syncbn_misuse"
    assert "log.not_launched_distributed" in found.details.get("alternatives", []), found.summary


# the same tutorial with DDP(model, device_ids=[local_rank]) left from its GPU version, the model on the CPU
DDP_CPU = (
    "ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
    "single-device/multiple-device GPU modules or CPU modules, but got device_ids [1], output_device None, and "
    "module parameters {device(type='cpu')}.\n"
)


def test_ddp_device_ids_for_a_cpu_model_names_no_gpu_mapping_beside_it():
    found = explained(DDP_CPU)
    assert found.id == "log.device_mismatch" and "wrap a CPU model without device_ids" in found.fix
    assert not {"log.device_map_distributed", "log.gpu_selection"} & set(
        found.details.get("alternatives", [])
    )


def test_tensors_on_two_gpus_still_name_the_gpu_mappings():
    found = explained("RuntimeError: Expected all tensors to be on the same device, but found at least two "
                      "devices, cuda:0 and cuda:3!\n")  # fmt: skip
    assert "log.device_map_distributed" in found.details.get("alternatives", [])
