"""A message printed for several causes, read by what the log's other lines say (`Alternative.first_when`).

The log's other lines (a setting it shows, the frame a message was raised under) make one of a message's
readings the likelier one: that reading leads, likely, and the recogniser's own is named after it. Without those
lines the recogniser's order stands. Each text is the messages' own wording: torch's cudaErrorNoDevice
("No CUDA GPUs are available", c10/cuda/CUDAFunctions.cpp) under torch.cuda's frames as train 876 shows them,
the variable set as train 572's train.py sets it; accelerate's find_batch_size TypeError under its dispatcher's
frame as train 6470 shows it (pytest's form) and as CPython prints the same frames; Triton's ptxas refusing
sm_110 under torch.compile as train 1571 shows it (a CUDA Triton under a ROCm torch: gfx1100 read as 11.0).
"""

from __future__ import annotations

import io

import pytest
from explaining import CORPUS, explained, lead

from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.recognisers import Alternative, Context, Hit
from torchdoctor.explain.verdict import _chosen_by_the_log

NO_GPU = """Traceback (most recent call last):
  File "train.py", line 469, in <module>
    safe_state(args.quiet)
  File "./utils/general_utils.py", line 139, in safe_state
    torch.cuda.set_device(torch.device("cuda:0"))
  File "./.local/lib/python3.8/site-packages/torch/cuda/__init__.py", line 399, in set_device
    torch._C._cuda_setDevice(device)
  File "./.local/lib/python3.8/site-packages/torch/cuda/__init__.py", line 293, in _lazy_init
    torch._C._cuda_init()
RuntimeError: No CUDA GPUs are available
"""


def test_no_gpu_beside_the_variable_set_in_the_script_leads_with_the_list_that_hid_them():
    found = explained("train.py sets os.environ[\"CUDA_VISIBLE_DEVICES\"]='1' at its top\n" + NO_GPU)
    assert found.id == "log.gpu_selection" and found.details["confidence"] == "likely", found.summary
    assert (
        found.details["alternatives"][0] == "log.cuda_unavailable"
        and found.details["kind"] == "gpu_selection"
    )
    assert "CUDA_VISIBLE_DEVICES=1" in found.summary and "no usable CUDA" in found.summary
    # the chosen reading's fix first, the other's after it; no "Which it is": the log already said
    assert "nvidia-smi -L" in found.fix.splitlines()[0] and "Which it is" not in found.fix


def test_no_gpu_beside_the_variable_on_the_command_line():
    found = explained("$ CUDA_VISIBLE_DEVICES=2,3 python train.py\n" + NO_GPU)
    assert found.id == "log.gpu_selection", found.summary
    assert "CUDA_VISIBLE_DEVICES=2,3" in found.summary


def test_no_gpu_alone_keeps_its_order_and_names_the_variable_second():
    found = lead("876.txt")  # no CUDA_VISIBLE_DEVICES in the log: nothing says which
    assert found.id == "log.cuda_unavailable" and found.details["confidence"] == "likely", found.summary
    assert found.details["alternatives"] == ["log.gpu_selection"]
    assert "Which it is: print CUDA_VISIBLE_DEVICES" in found.fix  # the lines that would tell them apart


@pytest.mark.parametrize("value", ["0", "'0'", '"0,1"', " 0"])
def test_a_list_that_starts_with_gpu_0_hid_no_gpu(value):
    # GPU 0 stays visible wherever the machine has a GPU: no device at all is not the list's doing
    found = explained(f"CUDA_VISIBLE_DEVICES={value} python train.py\n" + NO_GPU)
    assert found.id == "log.cuda_unavailable", found.summary


@pytest.mark.parametrize(("value", "said"), [('""', "CUDA_VISIBLE_DEVICES="), ("-1", "=-1"), ("1,0", "=1,0")])
def test_an_empty_list_or_one_without_gpu_0_first_still_leads(value, said):
    found = explained(f"CUDA_VISIBLE_DEVICES={value} python train.py\n" + NO_GPU)
    assert found.id == "log.gpu_selection" and said in found.summary, found.summary


def test_the_variable_read_or_compared_is_not_set():
    text = 'if os.environ.get("CUDA_VISIBLE_DEVICES") == "":\n' + NO_GPU
    assert explained(text).id == "log.cuda_unavailable"


def test_no_driver_is_no_driver_whatever_the_variable():
    # torch says "Found no NVIDIA driver" where cudaGetDeviceCount finds no driver: the variable changes nothing
    found = explained(
        "CUDA_VISIBLE_DEVICES=0 python train.py\n"
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver from http://www.nvidia.com/Download/index.aspx\n"
    )
    assert found.id == "log.cuda_unavailable", found.summary


NONE_BATCH = "TypeError: Can only find the batch size of tensors but got <class 'NoneType'>."


def test_a_batch_of_none_in_the_dispatcher_leads_with_the_data_running_out_pytest_frames():
    found = lead("6470.txt")
    assert found.id == "log.dataloader_exhausted" and found.details["confidence"] == "likely", found.summary
    assert found.details["alternatives"] == ["log.accelerate_call_refused"]
    assert "DataLoaderDispatcher.__iter__" in found.summary


def test_a_batch_of_none_in_the_dispatcher_cpython_frames():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/env/lib/python3.10/site-packages/transformers/trainer.py", line 1860, in _inner_training_loop\n'
        "    for step, inputs in enumerate(epoch_iterator):\n"
        '  File "/env/lib/python3.10/site-packages/accelerate/data_loader.py", line 564, in __iter__\n'
        "    observed_batch_size = find_batch_size(batch)\n"
        '  File "/env/lib/python3.10/site-packages/accelerate/utils/operations.py", line 223, in find_batch_size\n'
        '    raise TypeError(f"Can only find the batch size of tensors but got {type(data)}.")\n'
        + NONE_BATCH
        + "\n"
    )
    assert found.id == "log.dataloader_exhausted", found.summary


def test_a_batch_of_none_elsewhere_names_the_data_running_out_second():
    found = explained(NONE_BATCH + "\n")  # no frame says which caller read it
    assert found.id == "log.accelerate_call_refused" and found.details["confidence"] == "likely", (
        found.summary
    )
    assert found.details["alternatives"] == ["log.dataloader_exhausted"]


def test_a_batch_of_strings_is_the_collate_fn_not_the_data_running_out():
    found = explained(
        '  File "/env/lib/python3.10/site-packages/accelerate/data_loader.py", line 564, in __iter__\n'
        "TypeError: Can only find the batch size of tensors but got <class 'str'>.\n"
    )
    assert found.id == "log.accelerate_call_refused", found.summary
    assert "log.dataloader_exhausted" not in found.details.get("alternatives", [])


def test_every_fact_of_first_when_must_be_there():
    reading = Alternative("b", "b's title", "b's fix", first_when=("on_the_line", "in_the_log"))
    hit = Hit("a", {"on_the_line": "x"}, "-", 1)
    assert _chosen_by_the_log([reading], [hit], Context()) is None
    assert _chosen_by_the_log([reading], [hit], Context(facts={"in_the_log": "y"})) is reading
    assert _chosen_by_the_log([Alternative("c", "c", "c")], [hit], Context(facts={"in_the_log": "y"})) is None


PTXAS = (CORPUS / "1571.txt").read_text()


def test_ptxas_refusing_the_target_beside_a_rocm_torch_leads_with_the_cuda_triton():
    found = explained("torch 2.5.1+rocm6.2 on gfx1100\n" + PTXAS)
    assert found.id == "log.broken_install" and found.details["confidence"] == "likely", found.summary
    assert found.details["alternatives"][0] == "log.cuda_build"
    assert "+rocm6.2" in found.summary


def test_ptxas_refusing_the_target_alone_keeps_the_newer_gpu_first():
    found = lead("1571.txt")  # no ROCm in the log: a GPU newer than ptxas reads the same
    assert found.id == "log.cuda_build" and found.details["alternatives"][0] == "log.broken_install", (
        found.summary
    )


def test_a_radeon_beside_an_nvidia_gpu_is_no_rocm_torch():
    assert explained("GPU 1: AMD Radeon(TM) Graphics (integrated)\n" + PTXAS).id == "log.cuda_build"


# CPython's multiprocessing.synchronize.SemLock (sem_open in /dev/shm) raising ENOSPC, as python/cpython#93253 shows
SEMLOCK = """Traceback (most recent call last):
  File "train.py", line 40, in <module>
    for batch in loader:
  File "/usr/lib/python3.10/multiprocessing/context.py", line 68, in Lock
    return Lock(ctx=self.get_context())
  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 162, in __init__
    SemLock.__init__(self, SEMAPHORE, 1, 1, ctx=ctx)
  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 57, in __init__
    sl = self._semlock = _multiprocessing.SemLock(
OSError: [Errno 28] No space left on device
"""


def test_no_space_under_multiprocessing_frames_leads_with_shared_memory():
    found = explained(SEMLOCK)
    assert found.id == "log.dataloader_shm" and found.details["confidence"] == "likely", found.summary
    assert found.details["alternatives"][0] == "log.disk_full"
    assert "multiprocessing/synchronize.py in the traceback" in found.summary


def test_no_space_under_the_save_stays_the_disk():
    found = explained(
        'Traceback (most recent call last):\n  File "train.py", line 90, in <module>\n'
        "    torch.save(model.state_dict(), path)\n"
        "OSError: [Errno 28] No space left on device\n"
    )
    assert found.id == "log.disk_full", found.summary


# torch.load's restore path (serialization.py's default_restore_location -> _cuda_deserialize, torch 1.0's frames)
# putting a storage back on the GPU it was saved from
RESTORE = """Traceback (most recent call last):
  File "test.py", line 21, in <module>
    checkpoint = torch.load(args.resume)
  File "/opt/conda/lib/python3.6/site-packages/torch/serialization.py", line 387, in load
    return _load(f, map_location, pickle_module, **pickle_load_args)
  File "/opt/conda/lib/python3.6/site-packages/torch/serialization.py", line 537, in persistent_load
    deserialized_objects[root_key] = restore_location(obj, location)
  File "/opt/conda/lib/python3.6/site-packages/torch/serialization.py", line 119, in default_restore_location
    result = fn(storage, location)
  File "/opt/conda/lib/python3.6/site-packages/torch/serialization.py", line 99, in _cuda_deserialize
    return storage_type(obj.size())
RuntimeError: CUDA error: invalid device ordinal
"""


def test_invalid_ordinal_under_torch_loads_restore_frames_leads_with_the_saved_device():
    found = explained(RESTORE)
    assert found.id == "log.checkpoint_device_map" and found.details["confidence"] == "likely", found.summary
    assert found.details["alternatives"][0] == "log.invalid_device_ordinal"


def test_invalid_ordinal_beside_a_torch_load_call_only_names_the_checkpoint_second():
    found = explained(
        "model.load_state_dict(torch.load(path))\nRuntimeError: CUDA error: invalid device ordinal\n"
    )
    assert found.id == "log.invalid_device_ordinal", found.summary
    assert "log.checkpoint_device_map" in found.details["alternatives"]


def test_what_follows_names_the_reading_the_log_chose():
    # torchrun's summary of the failed worker (its wording, elastic/multiprocessing/errors) after the error
    summary = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\ntrain.py FAILED\n"
        "------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
        "------------------------------------------------------------\nRoot Cause (first observed failure):\n"
        "[0]:\n  time      : 2024-01-01_10:00:01\n  host      : node1\n  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : 1 (pid: 4242)\n  error_file: <N/A>\n"
        "============================================================\n"
    )
    lead_finding, *rest = explain(
        ["-"], stdin=io.BytesIO(("CUDA_VISIBLE_DEVICES=1 torchrun train.py\n" + NO_GPU + summary).encode())
    )
    assert lead_finding.id == "log.gpu_selection"
    assert [f.details.get("consequence_of") for f in rest] == ["log.gpu_selection"]
