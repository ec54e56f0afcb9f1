"""The ninety-sixth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4617-4666)."""

from __future__ import annotations

import pytest
from explaining import explained, filled

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# lightning/pytorch/cli.py SaveConfigCallback.setup, a LightningCLI run whose log directory already holds the
# config.yaml of an earlier run (torchgeo's trainer with WandbLogger writes it to the working directory)
def test_lightningclis_refusal_to_overwrite_its_saved_config():
    line = filled("lightning:expected-to-not-exist-aborting-to", "SaveConfigCallback", "./config.yaml")
    found = reads("RuntimeError: " + line + "\n", "saved_config_exists", "certain")
    assert "./config.yaml" in found.summary
    assert "save_config_kwargs={'overwrite': True}" in found.fix and "save_config_callback=None" in found.fix


def test_the_older_wording_with_save_config_overwrite_reads_the_same_way():
    found = reads(
        "RuntimeError: SaveConfigCallback expected lightning_logs/version_5/config.yaml to NOT exist. Aborting to "
        "avoid overwriting results of a previous run. You can delete the previous config file, set "
        "`LightningCLI(save_config_callback=None)` to disable config saving, or set "
        "`LightningCLI(save_config_overwrite=True)` to overwrite the config file.\n",
        "saved_config_exists",
        "certain",
    )
    assert "lightning_logs/version_5/config.yaml" in found.summary


# another of cli.py's messages about saving the config is a subclass's setting, not a file left behind
def test_save_to_log_dir_false_is_not_a_saved_config_left_behind():
    found = explained("ValueError: " + filled("lightning:save-to-log-dir-false-only") + "\n")
    assert found.id != "log.saved_config_exists", found.summary


# verl/trainer/ppo/ray_trainer.py ResourcePoolManager._check_resource_available on the head node of two, whose
# driver started a Ray of its own instead of joining the cluster
VERL = (
    '  File "/home/verl/verl/trainer/ppo/ray_trainer.py", line 134, in _check_resource_available\n'
    "    raise ValueError(\n"
    "ValueError: "
)


def test_verls_cluster_offering_fewer_gpus_than_its_trainer_asks_for():
    line = filled("third_party:verl-total-available-gpus-less-than-desired", "16.0", "32")
    found = reads(VERL + line + "\n", "ray_resources", "certain")
    assert "32 GPUs" in found.summary and "offers 16.0" in found.summary
    assert "ray.init(address='auto')" in found.fix and "ray status" in found.fix


def test_the_later_wording_with_a_full_stop_reads_the_same_way():
    found = reads(
        VERL + "Total available GPUs 8.0 is less than total desired GPUs 16.\n", "ray_resources", "certain"
    )
    assert "16 GPUs" in found.summary and "offers 8.0" in found.summary


# a healthy run's own count of its GPUs is no refusal
def test_a_count_of_available_gpus_is_not_verls_refusal():
    found = explained("INFO: Total available GPUs: 16, total desired GPUs: 16, starting the workers\n")
    assert found.id != "log.ray_resources", found.summary
