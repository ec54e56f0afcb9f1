"""The eighty-second sample's train miss: its reading on lines as the source prints them, filled in as a run would
print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3917-3966)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# smdistributed/modelparallel/backend/core.py ModelParallelCore.initialize: smp_init's LOW_DEVICE_COUNT status raised
# as WorkerSizeError, under SageMaker's mpirun (its "[1,N]<stderr>:" prefix on every line of a rank)
def test_more_node_local_processes_than_gpus_under_sagemaker_model_parallel_is_an_invalid_device_ordinal():
    found = reads(
        "[1,3]<stderr>:Traceback (most recent call last):\n"
        '[1,3]<stderr>:  File "train.py", line 88, in <module>\n'
        "[1,3]<stderr>:    smp.init()\n"
        '[1,3]<stderr>:  File "/opt/conda/lib/python3.8/site-packages/smdistributed/modelparallel/backend/core.py", '
        "line 231, in initialize\n"
        "[1,3]<stderr>:    raise WorkerSizeError(\n"
        "[1,3]<stderr>:smdistributed.modelparallel.backend.exceptions.WorkerSizeError: The number of node-local MPI "
        "processes 16 cannot be larger than the device count 8\n",
        "invalid_device_ordinal",
        "certain",
    )
    assert "16 processes" in found.summary and "8 GPUs" in found.summary
    assert "processes_per_host" in found.fix


# the library's other WorkerSizeError (core.py _validate_worker_size) is about the parallel degrees, not the GPUs
def test_too_few_processes_for_the_parallel_degrees_is_not_a_gpu_index():
    found = explained(
        "[1,0]<stderr>:smdistributed.modelparallel.backend.exceptions.WorkerSizeError: The number of processes must "
        "be at least the product of the specified pipeline parallelism and tensor parallelism degrees (8).\n"
    )
    assert found.id != "log.invalid_device_ordinal", found.summary
