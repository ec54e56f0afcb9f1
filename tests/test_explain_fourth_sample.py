"""The knowledge the fourth sample by symptom (corpus files 238-278, train half) asked for, each anchored on a
message its source prints: MSBuild's failed CUDA build step, the first PyTorch release with a GPU architecture,
torch.load's weights-only unpickler, accelerate's two-cause bf16 check, `.module` read on a model that is not
wrapped, a busy GPU that a checkpoint restore switched to, a name missing from torch, the DataLoader workers
under spawn, an accelerate release that refused 8-bit models spread over GPUs, a launcher's variable read from
the environment of a plain process, and torchrun stopped by a hang-up signal.

Each input is a real log from the train half of the corpus (tests/fixtures/corpus/train, its SOURCES.md names the
thread and what it established), or a message template quoted from the catalog (the id is named beside it).
"""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_a_cuda_build_step_failed_inside_visual_studio():
    # 239.txt (pytorch/pytorch#9200): CUDA 8 expected the VS2015 toolchain, VS2017 was installed
    found = lead("239.txt")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "likely"
    assert "Visual Studio" in found.fix and "CUDA" in found.fix
    text = template(
        "system:msbuild-cuda-command-exited", '"C:\\CUDA\\v10.0\\bin\\nvcc.exe" -gencode=arch', "1"
    )
    found = explained(f"  CUDA 10.0.targets(712,9): {text} [C:\\build\\ext.vcxproj]\n")
    assert found.id == "log.cuda_build" and "ext.vcxproj" in found.summary
    # a build that went through prints no MSBuild error
    healthy = "Build succeeded.\n    0 Warning(s)\n    0 Error(s)\n"
    assert explained(healthy).id == "log.unrecognised"


def test_no_kernel_image_names_the_first_release_with_the_architecture():
    # 241.txt (guoqincode/Open-AnimateAnyone#114): an H100, the warning wrapped after "capability"
    found = lead("241.txt")
    assert found.id == "log.no_kernel_image" and "sm_90" in found.summary
    assert "PyTorch 2.0 or newer" in found.fix and "CUDA 11.8" in found.fix
    found = explained(
        "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch "
        "installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.\n"
    )
    assert "PyTorch 1.8 or newer" in found.fix and "RTX 3090" in found.summary


def test_torch_load_refuses_a_checkpoint_with_other_objects():
    # 245.txt (gpoesia/minimo#21): PyTorch 2.6 made weights_only=True the default
    found = lead("245.txt")
    assert found.id == "log.weights_only_load" and found.details["confidence"] == "certain"
    assert "weights_only=False" in found.fix and "2.6" in found.summary
    blocked = template(
        "torch:weights-only-load-failed-this-file",
        "In PyTorch 2.6, we changed the default value of the `weights_only` argument.",
        "WeightsUnpickler error: Unsupported global: GLOBAL argparse.Namespace was not an allowed global by default.",
    )
    found = explained("_pickle.UnpicklingError: " + blocked + "\n")
    assert "argparse.Namespace" in found.summary and "add_safe_globals([Namespace])" in found.fix
    # an unknown pickle operand is also a file that is not a torch checkpoint: only likely
    operand = template("torch:weights-only-load-failed-2", "WeightsUnpickler error: Unsupported operand 118")
    assert explained("_pickle.UnpicklingError: " + operand + "\n").details["confidence"] == "likely"
    # torch's warning about loading with weights_only=False is no failure
    warning = (
        "FutureWarning: You are using `torch.load` with `weights_only=False` (the current default value)\n"
    )
    assert explained(warning).id == "log.unrecognised"


def test_accelerate_bf16_check_names_the_gpu_first():
    # 247.txt (Linaqruf/kohya-trainer#246): bf16 on a T4/V100
    found = lead("247.txt")
    assert found.id == "log.bf16_unsupported" and found.details["confidence"] == "likely"
    assert "fp16" in found.fix and found.details["alternatives"] == ["log.dependency_version"]
    # beside a torch of 1.10 or newer only the device is left
    text = template("accelerate:bf16-mixed-precision-requires-pytorch-and")
    found = explained("[pip3] torch==2.1.0\nValueError: " + text + "\n")
    assert found.id == "log.bf16_unsupported" and found.details["confidence"] == "certain"
    # a version check that names only a package is still the version's
    assert explained("ValueError: FSDP requires PyTorch >= 2.1.0\n").id == "log.dependency_version"


def test_module_read_on_a_model_that_is_not_wrapped():
    # 249.txt (huawei-noah/VanillaNet#40): main.py reads model.module without torch.distributed
    found = lead("249.txt")
    assert found.id == "log.module_on_unwrapped_model" and found.details["confidence"] == "certain"
    assert "hasattr(model, 'module')" in found.fix and "'VanillaNet'" in found.summary
    # the line alone does not show that the object is a torch module: likely
    alone = explained("AttributeError: 'UNet' object has no attribute 'module'\n")
    assert alone.id == "log.module_on_unwrapped_model" and alone.details["confidence"] == "likely"
    # a wrapper's missing attribute, a builtin's, and another attribute are other failures
    wrapped = explained("AttributeError: 'DistributedDataParallel' object has no attribute 'encoder'\n")
    assert wrapped.id == "log.ddp_module_attribute"
    for line in (
        "'dict' object has no attribute 'module'",
        "'UNet' object has no attribute 'modules_to_save'",
    ):
        assert explained(f"AttributeError: {line}\n").id != "log.module_on_unwrapped_model"


def test_a_busy_gpu_names_the_checkpoint_restore():
    # 250.txt (ecmwf/anemoi-core#430): every rank loaded a graph saved on GPU 0 without map_location
    found = lead("250.txt")
    assert found.id == "log.gpu_selection" and found.details["confidence"] == "likely"
    assert "log.checkpoint_device_map" in found.details["alternatives"] and "map_location" in found.fix
    # NCCL's invalid usage is not a checkpoint's
    text = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, invalid usage, NCCL version 2.14.3\n"
    assert "log.checkpoint_device_map" not in explained(text).details.get("alternatives", [])


def test_a_name_missing_from_torch_points_at_its_releases():
    # 253.txt (pytorch/torchtitan#1423): a name added to torch after the installed release
    found = lead("253.txt")
    assert found.id == "log.dependency_version" and "PrepareModuleInputOutput" in found.summary
    # the release that added it, from the table of released names (api_history.tsv)
    assert "nightly" in found.fix and "torch>=2.8" in found.fix
    # another package's missing name keeps the package's own advice
    other = explained("ImportError: cannot import name 'Foo' from 'transformers.trainer' (x.py)\n")
    assert "pip install 'transformers==" in other.fix and "nightly" not in other.fix


def test_spawned_dataloader_workers_can_be_avoided():
    # 255.txt (pkuxmq/Invertible-Image-Rescaling#3): Windows, workers re-import the main script
    found = lead("255.txt")
    assert found.id == "log.spawn_main_guard"
    assert "if __name__ == '__main__':" in found.fix and "num_workers=0" in found.fix


def test_an_accelerate_release_refusing_8bit_models_spread_over_gpus():
    # 257.txt (huggingface/accelerate#1515): accelerate 0.17-0.19; #1523 (v0.20.0) allows it in one process
    found = lead("257.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "0.20.0" in found.fix and "log.device_map_distributed" in found.details["alternatives"]
    # the releases from 0.20.0 refuse it in distributed mode only: that message is the multi-process one
    current = template("accelerate:you-can-train-model-that-has-2")
    assert explained("ValueError: " + current + "\n").id == "log.device_map_distributed"


def test_a_launcher_variable_read_in_a_plain_process():
    # 273.txt (OpenLMLab/LOMO#31): LOCAL_RANK read outside a distributed launch
    found = lead("273.txt")
    assert found.id == "log.not_launched_distributed" and found.details["confidence"] == "likely"
    assert "torchrun" in found.fix and "os.environ.get('LOCAL_RANK', 0)" in found.fix
    assert found.details["alternatives"] == ["log.rank_env_missing"]
    for key in ("RANK", "WORLD_SIZE"):
        assert explained(f"KeyError: '{key}'\n").id == "log.not_launched_distributed"
    # a key of the user's own dictionaries is not the launcher's
    assert explained("KeyError: 'rank'\n").id == "log.unrecognised"
    assert explained("KeyError: 'LOCAL_RANK_OFFSET'\n").id == "log.unrecognised"


def test_torchrun_stopped_by_a_hangup_signal():
    # 277.txt (keyu-tian/SparK#19): the terminal closed although the run was under nohup
    found = lead("277.txt")
    assert found.id == "log.terminal_hangup" and found.details["confidence"] == "likely"
    assert "tmux" in found.fix
    for line in (
        template("torch:received-death-signal-shutting-down-workers").replace("%s", "1"),
        template("torch_native:elastic-signal-exception", "17871", "1"),
        template("torch:process-got-signal", "2919", "Signals.SIGHUP"),
    ):
        found = explained(line + "\n")
        assert found.id == "log.terminal_hangup" and found.details["confidence"] == "certain", line
    # a scheduler's SIGTERM or Ctrl-C is not a closed terminal; the agent stopping failed workers is no signal
    for line in (
        template("torch:received-death-signal-shutting-down-workers").replace("%s", "Signals.SIGTERM"),
        template("torch:process-got-signal", "2919", "15"),
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 59460 closing signal SIGTERM",
    ):
        assert explained(line + "\n").id != "log.terminal_hangup", line
