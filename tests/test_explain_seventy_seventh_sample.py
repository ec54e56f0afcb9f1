"""The seventy-seventh sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3667-3716)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# ray python/ray/train/_internal/storage.py StorageContext._check_validation_file (2.7-2.8): f"Unable to set up cluster
# storage at storage_path={self.storage_path}" "\nCheck that all nodes in the cluster have read/write access to the
# configured storage path."
def test_ray_trains_storage_check_is_a_local_path_the_worker_nodes_do_not_share():
    found = reads(
        "RuntimeError: Unable to set up cluster storage at storage_path=/home/ubuntu/ray_results\n"
        "Check that all nodes in the cluster have read/write access to the configured storage path.\n",
        "storage_path_not_shared",
        "likely",
    )
    assert "/home/ubuntu/ray_results" in found.summary and "each node's own disk" in found.summary
    assert "RunConfig(storage_path=" in found.fix and "shared filesystem" in found.fix


# the same check from 2.9 on: f"Unable to set up cluster storage with the following settings:\n{self}\nCheck that all
# nodes ... A local path on the head node is not accessible by worker nodes. See: ..."
def test_ray_trains_reworded_storage_check_reads_the_same():
    reads(
        "RuntimeError: Unable to set up cluster storage with the following settings:\n"
        "StorageContext<storage_path=/tmp/results>\n"
        "Check that all nodes in the cluster have read/write access to the configured storage path. "
        "`RunConfig(storage_path)` should be set to a cloud storage URI or a shared filesystem path accessible by all "
        "nodes in your cluster ('s3://bucket' or '/mnt/nfs'). A local path on the head node is not accessible by "
        "worker nodes. See: https://docs.ray.io/en/latest/train/user-guides/persistent-storage.html\n",
        "storage_path_not_shared",
        "likely",
    )


# a bucket as storage_path: the nodes reach the same storage, so its credentials or permissions
def test_a_bucket_storage_path_is_read_as_the_nodes_access_not_a_local_disk():
    found = reads(
        "RuntimeError: Unable to set up cluster storage at storage_path=s3://team-bucket/runs\n",
        "storage_path_not_shared",
        "likely",
    )
    assert "credentials" in found.summary and "own disk" not in found.summary


# CPython's PermissionError under the results folder: the process's own access, not the nodes' shared storage
def test_a_permission_error_under_ray_results_is_not_the_unshared_storage():
    found = explained(
        "PermissionError: [Errno 13] Permission denied: '/home/ubuntu/ray_results/TorchTrainer_1'\n"
    )
    assert found.id != "log.storage_path_not_shared", found.summary


# ray python/ray/ml/train/data_parallel_trainer.py (early 2022) reading scaling_config.num_gpus_per_worker on the dict
# given; CPython's AttributeError "'dict' object has no attribute 'num_gpus_per_worker'"
def test_a_ray_ml_trainer_reading_a_dict_scaling_config_is_that_releases_bug():
    found = reads(
        "AttributeError: 'dict' object has no attribute 'num_gpus_per_worker'\n",
        "library_version_bug",
        "likely",
    )
    assert "scaling_config" in found.summary and "ScalingConfig(num_workers=" in found.fix


# the same AttributeError on another key of a dict: no release's scaling_config, no such reading
def test_another_attribute_of_a_dict_is_not_the_scaling_config_reading():
    found = explained("AttributeError: 'dict' object has no attribute 'num_workers'\n")
    assert "ScalingConfig" not in found.fix, found.summary


# pytorch_lightning 1.x log.info(f"initializing ddp: GLOBAL_RANK: {global_rank}, MEMBER: {global_rank + 1}/{world_size}")
# (lightning_fabric's "Initializing distributed: ..." later) under a Tune trial's worker prefix, nothing after it
def test_lightnings_ddp_inside_a_tune_trial_waits_for_ranks_that_never_join():
    found = reads(
        "(ImplicitFunc pid=4122, ip=10.0.0.5) Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n",
        "multi_gpu_unsupported",
        "likely",
    )
    assert (
        "Ray Tune trial" in found.summary and "RayDDPStrategy" in found.fix and "ray_lightning" in found.fix
    )


# the same line under torchrun (no Ray worker prefix), under Ray Train's own workers, and with the ranks registered
@pytest.mark.parametrize(
    "text",
    [
        "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4\n",
        "(RayTrainWorker pid=4122, ip=10.0.0.5) Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n",
        "(pid=4122, ip=10.0.0.5) initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "(pid=4122, ip=10.0.0.5) ----------------------------------------------------------------------\n"
        "(pid=4122, ip=10.0.0.5) All DDP processes registered. Starting ddp with 2 processes\n",
    ],
)
def test_lightnings_ddp_start_line_elsewhere_is_not_the_tune_trial_reading(text):
    found = explained(text)
    assert found.id != "log.multi_gpu_unsupported", found.summary
