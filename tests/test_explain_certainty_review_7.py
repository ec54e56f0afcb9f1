"""The certainty review's seventh part (helper V19, issue 19): recognisers that can speak with certainty on a
generic Python exception line (an AttributeError, an ``Error(s) in loading state_dict``) or on words many
libraries print, read against the sources that print them. Each test gives the line as its source prints it, where
the reading holds (certain) and where another cause prints the same words (likely, another kind, or nothing).

- CPython's AttributeError names the object that lacks the attribute. torch/distributed/__init__.py binds
  ``init_process_group`` only ``if is_available()``, so ``module 'torch.distributed' has no attribute
  'init_process_group'`` is a build without torch.distributed (``backend_unavailable``); the same words for
  another module or object (``deepspeed``, ``horovod.torch``, an ``Accelerator``) are a script calling a function
  that object never had, and a "partially initialized module" is a circular import: not the build.
- torch's nn/modules/module.py ``_load_from_state_dict`` prints "size mismatch for {}: copying a param with shape
  {} from checkpoint, the shape in current model is {}" for any two shapes. A checkpoint's tensor of shape [0] is
  no architecture: it is the placeholder DeepSpeed's ZeRO-3 (partition_parameters.py, ``param.data =
  torch.empty(0)``) or FSDP leaves outside a gather, saved by a ``state_dict()`` taken while partitioned
  (huggingface/peft#1443, an adapter saved so under ZeRO-3): ``zero3_partitioned_weights``, likely (certain
  beside ZeRO-3 in the log), its fix to save the gathered weights again, not to build another model.
- The same "size mismatch for" between a weight of [a, b] and one of [a * b / 2, 1] is no other architecture: it is
  bitsandbytes' ``Params4bit`` packed storage on one side (a full-precision state dict loaded into a model already
  quantized to 4 bits, Lightning-AI/pytorch-lightning#19732): the kind stays (the state dict does not fit the
  model), its fix is to load before quantizing or in the same form, not to build the model from another config.
- CPython's "No module named 'X.Y'" reads certain where the release table (catalog/api_history.tsv, read from the
  wheels' .py files) has a release that added the module. NumPy 1.16-1.26 ship numpy/core/_multiarray_umath as a
  compiled extension, which that reading does not see, and 2.0 made it a .py shim: "came in numpy 2.0, upgrade"
  is the table's blind spot. Missing under 1.x it is NumPy's C extension that failed to import, or an extension
  compiled against NumPy >= 1.16 run with an older one: likely, not NumPy 2's module.
- CPython's OSError for Windows' ERROR_FILENAME_EXCED_RANGE ("[WinError 206] The filename or extension is too
  long") is a path past 260 characters where it quotes the path, and a command line past 32,767 characters where
  subprocess's ``_winapi.CreateProcess`` raised it (no path; pypa/distutils#226, a link.exe command), which long
  paths do not lift: certain with either fact, likely on the bare line, both fixes named.
- torch/cuda/__init__.py ``_lazy_init``'s "Torch not compiled with CUDA enabled" (an AssertionError) is any CPU
  build: one installed by mistake beside an NVIDIA GPU, or the only build there is (macOS has no CUDA wheels; a
  machine without an NVIDIA GPU). The kind holds; the fix names the second reading (the script's device option,
  mps / cpu) beside the reinstall.
- CPython's "[Errno 28] No space left on device" names a full filesystem, not which: raised through
  multiprocessing's semaphores (synchronize.py's SemLock, python/cpython#93253) or heap, or torch's storage sharing
  (torch/multiprocessing/reductions.py), it is /dev/shm (a container's 64 MB default; NVIDIA/Megatron-LM#878 was
  fixed by --shm-size): likely there, shared memory named; certain elsewhere, as before.
- A shell's "torchrun: command not found" is a launcher missing from the job's PATH (another environment), and
  also any torch before 1.10, whose setup.py installs no torchrun console script (1.9 has torch.distributed.run as
  a module only): likely where the log states such a torch, ``dependency_version`` named; certain otherwise, the
  fix naming the old releases' launcher too.
- ultralytics 8's per-image checks (ultralytics/data/utils.py verify_image_label: "ignoring corrupt image/label:
  labels require 56 columns each", "non-normalized or out of bounds coordinates", "Label class 78 exceeds dataset
  class count 15") and detectron2's "Filtered out N instances without valid segmentation" are warnings: the image
  or instance is left out and training goes on. What they say of the labels holds, not that they stopped the run:
  likely (still the lead where nothing else is found), and a failure found beside them leads. YOLOv5's own
  "Label class 15 exceeds nc=2" assertion stops the run and stays certain.
- xformers' _cpp_lib.py "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
  PyTorch X ... (you have Y)" is printed at import and the run goes on without its compiled ops: even with X and
  Y disagreeing it is likely, and a failure found beside it (a CUDA out of memory) leads; its consequence, "No
  operator found for memory_efficient_attention_forward ... xFormers wasn't build with CUDA support", stays certain.
- "Address already in use" is certain as a port the run's rendezvous store could not bind, except in CPython
  asyncio's wording (base_events.py ``create_server``: "error while attempting to bind on address ('0.0.0.0',
  8000): address already in use"), which uvicorn / aiohttp servers print for their own port (vLLM's OpenAI
  server, vllm-project/vllm#7514) and torch's TCPStore never does: likely, the server's port named, not 29500.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

NO_ATTRIBUTE = "AttributeError: module 'torch.distributed' has no attribute 'init_process_group'\n"


def test_torch_distributed_without_init_process_group_is_still_a_build_without_it():
    found = certain(NO_ATTRIBUTE, "backend_unavailable")
    assert "without torch.distributed" in found.summary and "is_available()" in found.fix


@pytest.mark.parametrize(
    "line",
    [
        # the script calling a function another package never had (deepspeed.init_distributed is DeepSpeed's)
        "AttributeError: module 'deepspeed' has no attribute 'init_process_group'",
        "AttributeError: module 'horovod.torch' has no attribute 'init_process_group'",
        "AttributeError: 'Accelerator' object has no attribute 'init_process_group'",
        # CPython's circular-import wording: torch.distributed imported while it was being imported
        "AttributeError: partially initialized module 'torch.distributed' has no attribute 'init_process_group' "
        "(most likely due to a circular import)",
    ],
)
def test_another_object_without_init_process_group_is_not_a_build_without_distributed(line):
    found = explained(line + "\n")
    assert found.id != "log.backend_unavailable", found.summary


SAVED_EMPTY = (
    "RuntimeError: Error(s) in loading state_dict for PeftModelForCausalLM:\n"
    "\tsize mismatch for base_model.model.model.layers.0.mlp.gate_proj.lora_B.default.weight: copying a param "
    "with shape torch.Size([0]) from checkpoint, the shape in current model is torch.Size([14336, 16]).\n"
)


def test_a_checkpoint_of_empty_tensors_was_saved_from_partitions_not_from_another_model():
    found = explained(SAVED_EMPTY)
    assert (found.id, found.details["confidence"]) == ("log.zero3_partitioned_weights", "likely"), (
        found.summary
    )
    assert "lora_B.default.weight" in found.summary and "[0]" in found.summary
    assert "stage3_gather_16bit_weights_on_model_save" in found.fix and "FULL_STATE_DICT" in found.fix
    # ZeRO-3 in the same log makes it certain
    zero3 = (
        "[2026-11-28 10:00:00,000] [INFO] [stage3.py:118:__init__] Reduce bucket size 500000000\n"
        + SAVED_EMPTY
    )
    certain(zero3, "zero3_partitioned_weights")
    # the catalog row says so as well
    line = template(
        "torch_native:size-mismatch-for-saved-partition", "lm_head.weight", "torch.Size([32000, 4096])"
    )
    assert explained(line + "\n").id == "log.zero3_partitioned_weights"


def test_a_checkpoint_of_another_shape_stays_a_model_of_another_shape():
    # the near miss: two real shapes are another architecture, certain as before
    other = (
        "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
        "\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 512]) from checkpoint, the "
        "shape in current model is torch.Size([10, 512]).\n"
    )
    certain(other, "model_checkpoint_mismatch")
    # and an empty parameter in the model (not in the checkpoint) keeps its own reading
    into_empty = (
        "\tsize mismatch for lm_head.weight: copying a param with shape torch.Size([32000, 4096]) from checkpoint, "
        "the shape in current model is torch.Size([0]).\n"
    )
    found = explained(into_empty)
    assert found.id == "log.zero3_partitioned_weights" and "whose shape in the model is [0]" in found.summary


ASYNCIO_BIND = "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n"


@pytest.mark.parametrize(
    "line",
    [
        ASYNCIO_BIND,
        # the IPv6 form of the same sockaddr
        "OSError: [Errno 98] error while attempting to bind on address ('::', 8000, 0, 0): address already in use\n",
    ],
)
def test_an_asyncio_servers_port_in_use_is_not_the_rendezvous_port(line):
    found = explained(line)
    assert (found.id, found.details["confidence"]) == ("log.rendezvous_or_port", "likely"), found.summary
    assert "port 8000" in found.summary and "29500" not in found.summary + found.fix
    assert "ss -ltnp | grep :8000" in found.fix


def test_the_stores_port_in_use_stays_certain():
    # the near misses: torch's TCPStore and a bare EADDRINUSE keep the rendezvous port's reading
    store = (
        "RuntimeError: The server socket has failed to listen on any local network address. useIpv6: 0, code: -98, "
        "name: EADDRINUSE, message: address already in use\n"
    )
    assert "29500" in certain(store, "rendezvous_or_port").fix
    certain("RuntimeError: Address already in use\n", "rendezvous_or_port")  # Python's OSError: review 9
    # beside the store's own failure in the same log, the server's line does not lower it
    certain(ASYNCIO_BIND + store, "rendezvous_or_port")


def test_a_weight_packed_in_4_bits_on_one_side_is_the_same_model_quantized_not_another_architecture():
    packed = (
        "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n"
        "\tsize mismatch for model.layers.6.self_attn.q_proj.weight: copying a param with shape "
        "torch.Size([2048, 2048]) from checkpoint, the shape in current model is torch.Size([2097152, 1]).\n"
    )
    found = certain(packed, "model_checkpoint_mismatch")
    assert "bitsandbytes 4-bit" in found.summary and "this model holds it" in found.summary
    assert "quantization_config" in found.fix and "checkpoint's own config" not in found.fix
    # the other way round: a quantized state dict loaded into the plain model
    back = packed.replace("torch.Size([2048, 2048]) from", "torch.Size([2097152, 1]) from").replace(
        "current model is torch.Size([2097152, 1])", "current model is torch.Size([2048, 2048])"
    )
    assert "the checkpoint holds it as bitsandbytes" in certain(back, "model_checkpoint_mismatch").summary


def test_a_column_of_another_length_is_still_another_architecture():
    # the near misses: [n, 1] against a 1-D tensor or against another [m, 1] is no packed weight
    for saved, model in (
        ("torch.Size([10, 1])", "torch.Size([20])"),
        ("torch.Size([5, 1])", "torch.Size([10, 1])"),
    ):
        line = (
            f"\tsize mismatch for fc.weight: copying a param with shape {saved} from checkpoint, the shape in "
            f"current model is {model}.\n"
        )
        found = certain(line, "model_checkpoint_mismatch")
        assert "another shape" in found.summary and "bitsandbytes" not in found.summary


def test_numpys_compiled_core_module_is_not_a_module_numpy_2_added():
    found = explained("ModuleNotFoundError: No module named 'numpy.core._multiarray_umath'\n")
    assert found.details["confidence"] == "likely", found.summary
    assert "numpy>=2.0" not in found.fix and "came in numpy 2.0" not in found.summary
    # the near miss: numpy._core is NumPy 2's own module, a file written under NumPy 2 read by 1.x: certain
    found = certain("ModuleNotFoundError: No module named 'numpy._core'\n", "dependency_version")
    assert "numpy>=2" in found.fix


WIN206 = "FileNotFoundError: [WinError 206] The filename or extension is too long\n"
CREATE_PROCESS = (
    '  File "C:\\Python312\\Lib\\subprocess.py", line 1538, in _execute_child\n'
    "    hp, ht, pid, tid = _winapi.CreateProcess(executable, args,\n"
)


def test_winerror_206_from_a_process_start_is_a_command_line_too_long_not_a_path():
    found = certain(CREATE_PROCESS + WIN206, "windows_path_too_long")
    assert "command line" in found.summary and "32,767" in found.fix and "LongPathsEnabled" not in found.fix
    # the bare line: both readings, only likely
    found = explained(WIN206)
    assert (found.id, found.details["confidence"]) == ("log.windows_path_too_long", "likely"), found.summary
    assert "LongPathsEnabled" in found.fix and "32,767" in found.fix


def test_winerror_206_that_quotes_a_path_stays_the_path_limit():
    line = (
        "FileNotFoundError: [WinError 206] The filename or extension is too long: "
        "'C:\\Users\\me\\project\\runs\\lr-0.001,batch-32,epochs-100,optimizer-adamw,scheduler-cosine'\n"
    )
    found = certain(line, "windows_path_too_long")
    assert "260-character" in found.summary and "LongPathsEnabled" in found.fix


def test_a_cpu_build_of_torch_names_a_machine_that_has_no_cuda_build_too():
    found = certain("AssertionError: Torch not compiled with CUDA enabled\n", "cuda_unavailable")
    assert "download.pytorch.org/whl/cu" in found.fix and "macOS" in found.fix and "'mps'" in found.fix


def test_no_space_left_raised_through_multiprocessings_semaphores_names_shared_memory():
    semaphore = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.8/multiprocessing/synchronize.py", line 57, in __init__\n'
        "    sl = self._semlock = _multiprocessing.SemLock(\n"
        "OSError: [Errno 28] No space left on device\n"
    )
    # the frames choose the reading (session 41, T61: Alternative.first_when): shared memory first, the disk named
    found = likely_with(semaphore, "dataloader_shm", "log.disk_full")
    assert "--shm-size" in found.fix
    sharing = semaphore.replace(
        "/usr/local/lib/python3.8/multiprocessing/synchronize.py",
        "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/reductions.py",
    )
    likely_with(sharing, "dataloader_shm", "log.disk_full")


def test_no_space_left_on_a_save_stays_a_full_disk():
    save = (
        '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 850, in save\n'
        "RuntimeError: [enforce fail at inline_container.cc:588] . PytorchStreamWriter failed writing file data/2: "
        "file write failed\nOSError: [Errno 28] No space left on device\n"
    )
    certain(save, "disk_full")
    certain("OSError: [Errno 28] No space left on device\n", "disk_full")


def test_torchrun_missing_beside_a_torch_before_1_10_names_the_release():
    found = likely_with(
        "[pip3] torch==1.9.0\nbash: torchrun: command not found\n", "broken_install", "log.dependency_version"
    )
    assert "torch.distributed.launch" in found.fix
    likely_with(
        "PyTorch version: 1.8.1+cu111\nCommand 'torchrun' not found, did you mean:\n",
        "broken_install",
        "log.dependency_version",
    )


def test_torchrun_missing_beside_a_newer_torch_stays_a_launcher_off_the_path():
    for text in ("bash: torchrun: command not found\n", "torch==2.1.0\nbash: torchrun: command not found\n"):
        found = certain(text, "broken_install")
        assert "on PATH" in found.fix and "before 1.10" in found.fix
    # another launcher missing beside an old torch keeps its certainty
    certain("[pip3] torch==1.9.0\nzsh: command not found: accelerate\n", "broken_install")


WARNINGS = (
    # ultralytics leaves a truncated JPEG out the same way (PIL's OSError caught by verify_image_label)
    "train: WARNING ⚠️ /data/images/train/x.jpg: ignoring corrupt image/label: image file is truncated (5 bytes "
    "not processed)\n",
    "train: WARNING ⚠️ /data/pose/images/train/pull_up_1.jpg: ignoring corrupt image/label: labels require 56 "
    "columns each\n",
    "WARNING [06/03 10:02:11 d2.data.datasets.coco]: Filtered out 3677 instances without valid segmentation. There "
    "might be issues in your dataset generation process.\n",
    "train: WARNING ⚠️ /data/images/train/000012.jpg: ignoring corrupt image/label: Label class 78 exceeds dataset "
    "class count 15. Possible class labels are 0-14\n",
)


@pytest.mark.parametrize("warning", WARNINGS)
def test_a_dataset_checks_warning_is_likely_and_does_not_lead_a_failure_beside_it(warning):
    alone = explained(warning)
    assert (
        alone.id in ("log.bad_training_data", "log.label_out_of_range")
        and alone.details["confidence"] == "likely"
    )
    # a failure of its own later in the log leads
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.65 GiB of which 1.10 GiB is free.\n"
    )
    certain(warning + oom, "cuda_oom")


def test_yolov5s_class_assertion_still_stops_the_run_for_certain():
    found = certain(
        "AssertionError: Label class 15 exceeds nc=2 in data/ships.yaml. Possible class labels are 0-1\n",
        "label_out_of_range",
    )
    assert "names" in found.fix


def test_pils_own_truncated_image_error_stays_certain():
    certain("OSError: image file is truncated (5 bytes not processed)\n", "bad_training_data")


XFORMERS_WARNING = (
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)\n"
    "    Python  3.10.13 (you have 3.10.13)\n"
    "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)\n"
    "  Memory-efficient attention, SwiGLU, sparse and more won't be available.\n"
)


def test_xformers_import_warning_does_not_lead_the_failure_after_it():
    alone = explained(XFORMERS_WARNING)
    assert (alone.id, alone.details["confidence"]) == ("log.extension_import", "likely"), alone.summary
    assert "built for torch 2.1.0+cu121, this is 2.2.0+cu121" in alone.summary
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.65 GiB of which 1.10 GiB is free.\n"
    )
    certain(XFORMERS_WARNING + oom, "cuda_oom")


def test_xformers_missing_operator_stays_certain():
    line = (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs: query : "
        "shape=(1, 4096, 8, 40) (torch.float16) `cutlassF` is not supported because: xFormers wasn't build with "
        "CUDA support\n"
    )
    certain(XFORMERS_WARNING + line, "extension_import")
