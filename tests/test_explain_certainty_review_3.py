"""The certainty review's third part (helper V11, issue 19): recognisers of the data-loading, launcher, DeepSpeed
and numerics families that spoke with certainty on a line their source prints for more than one cause, read
against that source. Each test gives the line as its source prints it, alone (likely, the other reading named),
and beside the fact that rules the other reading out (certain); a near miss keeps the certainty the line has.

- deepspeed/launcher/runner.py ``main``: "Using hostfile at X but host=H was not reachable via ssh" follows a
  failed ``ssh -o PasswordAuthentication=no H hostname`` for any hostfile: a hostfile left on a single node, or
  a multi-node launch whose passwordless ssh is not set up. Certain where H is this machine (localhost).
- Open MPI's and PRRTE's "unable to reliably start one or more daemons" (help-plm-base.txt,
  help-errmgr-base.txt ``failed-daemon-launch``) lists its causes: names that do not resolve, PATH and
  LD_LIBRARY_PATH, authority, /tmp, no route back to mpirun. Certain beside ssh's own refusal.
- aten's cross_entropy (LossNLL.cpp) reads any target of the input's shape as class probabilities: an integer
  one is one-hot labels or class ids beside logits squeezed to (N,). Certain where the log shows one_hot.
- DeepSpeed's engine.py ``backward``/``scale`` print "loss must be a scalar tensor" when utils.py
  ``maybe_loss_for_backward`` fails, which also asks for a grad_fn: a loss under torch.no_grad() prints it too.
  No fact beside the line tells the two apart: likely.
- torch's elastic teardown (multiprocessing/api.py ``_close``): "Process N did not exit after SIGKILL within Ns;
  abandoning and continuing teardown. Worker may be in uninterruptible kernel sleep" says a worker outlived the
  join's timeout while the agent stopped the group after another failure: likely, that reading named. The
  agent's own "stuck in uninterruptible sleep (D-state)" reads /proc (local_elastic_agent.py): certain.
- torch's DataLoader (csrc/DataLoader.cpp's SIGBUS handler, the parent's "killed by signal: Bus error") says a
  worker's bus error "might be" / "is possible" shared memory: any SIGBUS prints it, a memory-mapped dataset
  file truncated under the workers too. Certain beside shared memory's own refusal (</torch_...>).
- DeepSpeed's engine.py ``_do_sanity_check`` raises "Type fp16 is not supported on your device" when
  ``get_accelerator().is_fp16_supported()`` is False: a CUDA GPU below 7.0, or the CPU accelerator that
  real_accelerator.py falls back to when it detects no GPU; accelerate's "fp16 mixed precision requires a ...
  (not 'cpu')" is its device resolved to the CPU. Certain where DeepSpeed logs a GPU accelerator.
- transformers' training_args.py (5.x) adds "You need Ampere+ GPU with cuda>=11.0." to "Your setup doesn't support
  bf16/gpu" only where is_torch_cuda_available(): without it torch saw no CUDA GPU (likely, that reading first).
- Slurm's slurm_errno.c reasons ("Requested node configuration is not available", "More processors requested than
  permitted", ...) follow a step srun cannot fit in its allocation (srun/launch.c "Unable to create step for job")
  and a job request sbatch/salloc/srun cannot place (sbatch.c "Batch job submission failed"): certain on the
  step's words, likely otherwise with the job request named.
- torch's collate.py raises "default_collate: batch must contain ..." for a type it has no rule for and for a
  numpy array of text or object dtype: None is a sample the dataset returned as None, ``object`` ragged samples.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

HOSTFILE = (
    "RuntimeError: Using hostfile at /job/hostfile but host={} was not reachable via ssh. If you are running with "
    "a single node please remove /job/hostfile or setup passwordless ssh.\n"
)


def test_deepspeeds_ssh_check_names_a_multi_node_launch_without_passwordless_ssh():
    found = likely_with(HOSTFILE.format("worker-1"), "launch_command", "log.ssh_connect")
    assert "ssh-copy-id" in found.fix
    # the hostfile's first host is this machine: a hostfile left on one node
    certain(HOSTFILE.format("localhost"), "launch_command")


DAEMONS = "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n"


def test_open_mpis_daemon_launch_names_a_daemon_that_cannot_connect_back():
    found = likely_with(DAEMONS, "launch_command", "log.mpi_network")
    assert all(w in found.fix for w in ("oob_tcp_if_include", "--prefix", "ssh-copy-id"))
    prrte = DAEMONS.replace("ORTE", "prterun") + "\n* not finding the required libraries and/or binaries on\n"
    assert "passwordless ssh" in likely_with(prrte, "launch_command", "log.mpi_network").fix
    # ssh refused the daemon's start: the launch itself
    certain("node2: Permission denied (publickey,password).\n" + DAEMONS, "launch_command")


def test_open_mpis_other_refusals_stay_certain():
    # the near miss: more ranks than slots has one cause
    certain(
        "There are not enough slots available in the system to satisfy the 8 slots\n"
        "that were requested by the application:\n",
        "launch_command",
    )


PROBABILITIES = "RuntimeError: Expected floating point type for target with class probabilities, got Long\n"


def test_an_integer_target_of_the_outputs_shape_names_squeezed_logits():
    found = likely_with(PROBABILITIES, "loss_target_dtype", "log.target_shape_mismatch")
    assert "BCEWithLogitsLoss" in found.fix
    one_hot = (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 40, in <module>\n'
        "    loss = criterion(logits, F.one_hot(labels, num_classes=10))\n" + PROBABILITIES
    )
    found = certain(one_hot, "loss_target_dtype")
    assert "argmax(dim=1)" in found.fix


def test_a_target_of_the_wrong_integer_width_stays_certain():
    certain(
        "RuntimeError: \"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Int'\n",
        "loss_target_dtype",
    )


COLLATE = "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}\n"


def test_default_collate_given_none_names_a_sample_the_dataset_returned_as_none():
    found = likely_with(COLLATE.format("<class 'NoneType'>"), "dataloader_options", "log.bad_training_data")
    assert "is None" in found.fix


def test_default_collate_given_an_object_array_names_ragged_samples():
    found = likely_with(COLLATE.format("object"), "dataloader_options", "log.collate_unequal_sizes")
    assert "pad_sequence" in found.fix


def test_default_collate_given_pil_images_stays_certain_another_type_likely():
    certain(COLLATE.format("<class 'PIL.Image.Image'>"), "dataloader_options")
    # a type no labelled log showed for it (NumPy text here) is only likely (CERT10: test_explain_certainty_cert10)
    found = explained(COLLATE.format("<U5"))
    assert (found.id, found.details["confidence"]) == ("log.dataloader_options", "likely"), found.summary


def test_deepspeeds_scalar_loss_check_names_a_loss_without_a_graph():
    for message in (
        "loss must be a scalar tensor. If you need to pass output gradients, backward() of output tensors",
        "loss must be a scalar tensor with grad_fn. For non-scalar tensors, use tensor.backward(grad)",
    ):
        found = likely_with(
            f"AssertionError: {message}\n", "deepspeed_config_mismatch", "log.no_grad_in_loss"
        )
        assert "loss.mean()" in found.fix and "no_grad" in found.fix
    # the near miss: the engine's other refusals name one setting
    certain("AssertionError: engine.scale() is not compatible with AMP\n", "deepspeed_config_mismatch")


TEARDOWN = (
    "E1129 12:00:00.000 1234 torch/distributed/elastic/multiprocessing/api.py:910] Process 4242 did not exit after "
    "SIGKILL within 30s; abandoning and continuing teardown. Worker may be in uninterruptible kernel sleep (e.g. "
    "wedged on GPU/NIC); host may need to be recycled.\n"
)
D_STATE = (
    "W1129 11:59:00.000 1234 torch/distributed/elastic/agent/server/local_elastic_agent.py:555] [default] Worker "
    "pid=4242 stuck in uninterruptible sleep (D-state) for 300.0s (>= 300.0s); marking worker group UNHEALTHY and "
    "disabling restarts.\n"
)


def test_a_worker_that_outlived_the_teardown_names_the_failure_that_started_it():
    found = likely_with(TEARDOWN, "worker_stuck_in_kernel", "log.child_failed")
    assert "core dump" in found.fix
    # the agent saw the worker in D-state in /proc before the teardown
    found = certain(D_STATE + TEARDOWN, "worker_stuck_in_kernel")
    assert "/proc/<pid>/stack" in found.fix


BUS = (
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that dataloader's "
    "workers are out of shared memory. Please try to raise your shared memory limit.\n"
)


def test_a_workers_bus_error_names_a_memory_mapped_file():
    found = likely_with(BUS, "dataloader_shm", "log.worker_crash")
    assert "--shm-size" in found.fix and "memory-mapped" in found.fix
    full = "RuntimeError: unable to write to file </torch_287_2714559211_8>: No space left on device (28)\n"
    certain(BUS + full, "dataloader_shm")
    # the near miss: torch's descriptor passing has one cause
    certain(
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase "
        "the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
        "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n",
        "dataloader_shm",
    )


FP16 = "ValueError: Type fp16 is not supported on your device.\n"
PICKED = "[INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to {} (auto detect)\n"


def test_deepspeeds_fp16_refusal_names_a_run_that_saw_no_gpu():
    found = likely_with(FP16, "fp16_unsupported", "log.cuda_unavailable")
    assert "torch.cuda.is_available()" in found.fix
    likely_with(PICKED.format("cpu") + FP16, "fp16_unsupported", "log.cuda_unavailable")
    likely_with(
        "ValueError: fp16 mixed precision requires a GPU (not 'cpu').\n",
        "fp16_unsupported",
        "log.cuda_unavailable",
    )
    # DeepSpeed runs on the GPU: one too old for fp16
    found = certain(PICKED.format("cuda") + FP16, "fp16_unsupported")
    assert "DS_ALLOW_DEPRECATED_FP16" in found.fix


def test_accelerates_fp16_refusal_on_another_device_stays_certain():
    certain(
        "ValueError: fp16 mixed precision requires a device in ('cuda', 'mps', 'xpu', 'npu') (not 'xla').\n",
        "fp16_unsupported",
    )


BF16 = "ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the model on CPU."


def test_transformers_bf16_refusal_without_its_ampere_sentence_names_a_run_that_saw_no_gpu():
    found = likely_with(BF16 + "\n", "bf16_unsupported", "log.cuda_unavailable")
    assert found.details["alternatives"][0] == "log.cuda_unavailable"
    assert "log.dependency_version" not in found.details["alternatives"]
    certain(BF16 + " You need Ampere+ GPU with cuda>=11.0.\n", "bf16_unsupported")


def test_slurms_reason_names_a_job_request_no_node_can_hold():
    found = likely_with(
        "sbatch: error: Batch job submission failed: Requested node configuration is not available\n",
        "slurm_env",
        "log.slurm_request",
    )
    assert "sinfo -p" in found.fix
    certain(
        "srun: error: Unable to create step for job 123456: More processors requested than permitted\n",
        "slurm_env",
    )
