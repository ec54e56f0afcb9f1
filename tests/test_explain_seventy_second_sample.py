"""The seventy-second sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3417-3466)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# evaluate/module.py EvaluationModule._create_cache_file: raise ValueError(f"Error in _create_cache_file: another
# evaluation module instance is already using the local cache file at {file_path}. Please specify an experiment_id
# (currently: {self.experiment_id}) to avoid collision between distributed evaluation module instances.")
def test_evaluates_refused_cache_file_is_a_shared_cache():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "run_glue.py", line 230, in evaluate\n'
        "    metric.add_batch(predictions=predictions, references=references)\n"
        "ValueError: Error in _create_cache_file: another evaluation module instance is already using the local "
        "cache file at /root/.cache/huggingface/metrics/glue/mrpc/default_experiment-2-1.arrow. Please specify an "
        "experiment_id (currently: default_experiment) to avoid collision between distributed evaluation module "
        "instances.\n",
        "concurrent_file_write",
        "certain",
    )
    assert "experiment_id" in found.fix and "keep_in_memory" in found.fix


# evaluate/module.py EvaluationModule._finalize, a cache file process 0 reads is gone
def test_evaluates_finalize_refusal_reads_the_same():
    reads(
        "ValueError: Error in finalize: another evaluation module instance is already using the local cache file. "
        "Please specify an experiment_id to avoid collision between distributed evaluation module instances.\n",
        "concurrent_file_write",
        "certain",
    )


# _check_rendez_vous: another process's lock is not on the file system this one sees (nodes without a shared one)
def test_a_missing_lock_of_another_process_is_only_likely():
    reads(
        "ValueError: Expected to find locked file /root/.cache/huggingface/metrics/wer/default/"
        "default_experiment-8-0.arrow.lock from process 3 but it doesn't exist.\n",
        "concurrent_file_write",
        "likely",
    )


# compute's os.remove(file_path) of a cache file another run with the same default experiment_id removed first
def test_a_removed_default_experiment_cache_file_is_not_a_dataset_path():
    found = reads(
        '  File "/usr/lib/python3.10/site-packages/evaluate/module.py", line 458, in compute\n'
        "    os.remove(file_path)\n"
        "FileNotFoundError: [Errno 2] No such file or directory: "
        "'/home/me/.cache/huggingface/metrics/accuracy/default/default_experiment-1-0.arrow'\n",
        "concurrent_file_write",
        "likely",
    )
    assert "default_experiment-1-0.arrow" in found.summary


def test_a_missing_arrow_file_of_a_dataset_stays_a_dataset_path():
    found = explained(
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/wiki/train/data-00000-of-00004.arrow'\n"
    )
    assert found.id == "log.data_path_missing", found.summary


# ultralytics/engine/trainer.py BaseTrainer._do_train: final_epoch set only under RANK in {-1, 0} (CPython's
# UnboundLocalError, before and since Python 3.11)
@pytest.mark.parametrize(
    "line",
    (
        "UnboundLocalError: local variable 'final_epoch' referenced before assignment",
        "UnboundLocalError: cannot access local variable 'final_epoch' where it is not associated with a value",
    ),
)
def test_ultralytics_rank_zero_final_epoch_is_its_fixed_bug(line):
    found = reads(
        '  File "/opt/conda/lib/python3.10/site-packages/ultralytics/engine/trainer.py", line 471, in _do_train\n'
        "    if self.args.val or final_epoch or self.stopper.possible_stop or self.stop:\n" + line + "\n",
        "library_version_bug",
        "likely",
    )
    assert "ultralytics" in found.fix and "22607" in found.fix


def test_another_unbound_local_is_not_ultralytics():
    found = explained("UnboundLocalError: local variable 'best_epoch' referenced before assignment\n")
    assert "ultralytics" not in found.summary


# torch 2.x's dispatcher for a collective on a CPU tensor in an NCCL-only group; a torchmetrics Metric created in a
# hook instead of the LightningModule's __init__ is one such tensor
def test_a_cpu_tensor_under_nccl_names_metrics_created_outside_init():
    found = reads(
        "RuntimeError: No backend type associated with device type cpu\n",
        "cpu_tensor_nccl",
        "likely",  # alone, the collective's caller is not shown (the script's or a library's)
    )
    assert "__init__" in found.fix
