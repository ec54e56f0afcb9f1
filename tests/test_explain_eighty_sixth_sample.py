"""The eighty-sixth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4117-4166)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# webdataset 0.1's webdataset/multi.py: _parallel_job, MultiDataset's worker, reading the dataset's own
# sample_urls through a ResizedDataset that wraps it (CPython's AttributeError in webdataset's own frame)
WDS_WORKER = (
    "Process Process-1:\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.8/multiprocessing/process.py", line 315, in _bootstrap\n'
    "    self.run()\n"
    '  File "/usr/lib/python3.8/multiprocessing/process.py", line 108, in run\n'
    "    self._target(*self._args, **self._kwargs)\n"
    '  File "/opt/venv/lib/python3.8/site-packages/webdataset/multi.py", line 64, in _parallel_job\n'
    '    D("job", i, "done", dataset.sample_urls)\n'
    "AttributeError: 'ResizedDataset' object has no attribute 'sample_urls'\n"
)


def test_webdataset_reading_its_own_class_wrongly_is_its_release():
    found = reads(WDS_WORKER, "library_version_bug", "likely")
    assert "webdataset/multi.py" in found.summary and "'sample_urls'" in found.summary
    assert "ResizedDataset" in found.summary and "pip install -U webdataset" in found.fix


# the same class missing a method the script calls (webdataset 0.2's WebLoader without 0.1's ddp_equalize) is
# raised in the script's own frame: code written for another release, not webdataset reading itself
def test_a_webdataset_method_the_script_calls_is_not_webdatasets_own_bug():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/user/train.py", line 88, in <module>\n'
        "    loader = loader.ddp_equalize(dataset_size // batch_size)\n"
        "AttributeError: 'WebLoader' object has no attribute 'ddp_equalize'\n"
    )
    assert "webdataset's own code" not in found.summary, found.summary


# a user's class in webdataset's frame (a sample handler of the script's) is the script's object, not webdataset's
def test_a_scripts_object_in_webdatasets_frame_is_not_webdatasets_own_bug():
    found = explained(WDS_WORKER.replace("'ResizedDataset'", "'MyShardReader'"))
    assert "webdataset's own code" not in found.summary, found.summary


# ProcessGroupNCCL's refusal of the CPU tensor torch's DataLoader broadcast for the DataPipes' shared seed (the
# nightly between pytorch#78765 and #79829), as the DataLoader's maintainer quoted it
DATAPIPE_SEED = (
    "when running training script in multi-GPUs environment with DataLoader + DataPipe, there will an Error raised "
    "RuntimeError: Tensors must be CUDA and dense\n"
)


def test_ncclls_refusal_of_the_dataloaders_datapipe_seed_is_torchs_release():
    found = reads(DATAPIPE_SEED, "library_version_bug", "likely")
    assert "DataPipes' shared random seed" in found.summary and "1.12.0" in found.fix


# the same refusal with no DataPipe on its line is a CPU tensor the script or a library handed NCCL
def test_the_refusal_without_datapipes_is_a_cpu_tensor_in_a_collective():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 120, in <module>\n'
        "    dist.all_reduce(loss_sum)\n"
        "RuntimeError: Tensors must be CUDA and dense\n"
    )
    assert found.id == "log.cpu_tensor_nccl", found.summary


# torch/distributed/launch.py (before torchrun) re-raising a worker it ended as CPython's CalledProcessError, whose
# command is a YOLOv5-style train.py with --cache (ram, its default): the RAM cache once per DDP process (a SIGKILL
# reads as the OOM killer's worker_killed first, which says the same about host memory)
LAUNCH = (
    '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/launch.py", line 301, in sigkill_handler\n'
    "    raise subprocess.CalledProcessError(returncode=last_return_code, cmd=cmd)\n"
    "subprocess.CalledProcessError: Command '['/opt/conda/bin/python', '-u', 'train.py', '--local_rank=1', "
    "'--data', 'coco.yaml', '--device', '0,1', {cache}]' died with <Signals.SIGTERM: 15>.\n"
)


def test_a_yolo_worker_killed_with_its_ram_cache_is_host_memory():
    found = reads(LAUNCH.format(cache="'--cache'"), "cpu_oom", "likely")
    assert "--cache" in found.summary and "SIGTERM" in found.summary
    assert "--cache disk" in found.fix and "#10383" in found.fix


# the same worker killed with its cache on disk (or none) is no RAM cache: the launcher's consequence only
@pytest.mark.parametrize("cache", ["'--cache', 'disk'", "'--batch', '16'"])
def test_a_killed_worker_without_a_ram_cache_is_not_host_memory(cache: str):
    found = explained(LAUNCH.format(cache=cache))
    assert found.id != "log.cpu_oom", found.summary
