"""The knowledge the twenty-ninth sample by symptom (corpus files 1267-1293, train half) asked for, each anchored on
the message its source prints: Lightning 1.2-1.7's training-type plugins (pytorch_lightning/plugins/__init__.py),
the strategies Lightning 2.0 no longer registers (strategy_registry.register in strategies/*.py, refused by the
accelerator connector), CPython argparse naming an option's type by its repr (a typing construct: the program's
own parser), and cudart's "invalid device ordinal" where an installed package's frame chose the index.
Beside each, a line that must stay silent, or be another kind, or only likely."""

from __future__ import annotations

import pytest
from explaining import explained, lead, leads_with, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def read(name: str, kind: str, confidence: str):
    """The lead finding on the train log ``name``, asserted to be ``kind`` at ``confidence``."""
    found = lead(name)
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", confidence), (name, found.summary)
    return found


def test_a_lightning_training_type_plugin_is_code_for_lightning_1_2_to_1_7():
    # 1276.txt (ray-project/ray_lightning#35): Python 3.6's line, without the module, under the import
    found = read("1276.txt", "dependency_version", "certain")
    assert "1.2 to 1.7" in found.summary and "DDPSpawnStrategy" in found.fix
    leads_with(
        "ImportError: cannot import name 'DDPPlugin' from 'pytorch_lightning.plugins' "
        "(/opt/conda/lib/python3.10/site-packages/pytorch_lightning/plugins/__init__.py)",
        "dependency_version",
        "certain",
        ["DDPStrategy", "pytorch-lightning>=1.2,<1.8"],
    )
    # accelerate's DeepSpeedPlugin and another package's own plugin are not Lightning's
    for line in (
        "ImportError: cannot import name 'DeepSpeedPlugin' from 'accelerate' (/x/site-packages/accelerate/__init__.py)",
        "ImportError: cannot import name 'RayPlugin' from 'ray_lightning' (/x/site-packages/ray_lightning/__init__.py)",
    ):
        found = explained(line + "\n")
        assert "training-type plugin" not in found.summary, (line, found.summary)


def test_a_strategy_lightning_2_0_dropped_is_code_for_lightning_1_x():
    # 1287.txt (DCASE-REPO/DESED_task#71): strategy='dp' quoted in the filer's prose; trainer_arguments also reads
    # the line, so it is likely, naming that reading
    found = read("1287.txt", "dependency_version", "likely")
    assert "strategy='ddp'" in found.fix and "1.9.5" in found.fix
    text = template("lightning:you-selected-an-invalid-strategy-name", "'ddp_sharded'")
    found = explained(f"ValueError: {text}\n")
    assert found.id == "log.dependency_version" and "strategy='fsdp'" in found.fix, found.summary
    # a misspelt strategy is the arguments' own mistake, not a release
    text = template("lightning:you-selected-an-invalid-strategy-name", "'ddpp'")
    assert explained(f"ValueError: {text}\n").id == "log.trainer_arguments"


def test_an_option_typed_with_a_typing_hint_is_the_program_s_own_parser():
    # 1292.txt (huggingface/accelerate#18): accelerate's first launch command, type=Optional[str]
    found = read("1292.txt", "library_version_bug", "likely")
    assert "--main_process_ip" in found.summary and "703c702" in found.fix
    text = template(
        "system:argparse-invalid-typing-type-value",
        "deepspeed",
        "--master_port",
        "Union[int, NoneType]",
        "'29500'",
    )
    # the recogniser of a release's bugs is only ever likely (versions.py: LIBRARY_RELEASE_BUG)
    leads_with(text, "library_version_bug", "likely", ["--master_port", "Upgrade the program"])
    # an int option given a word is the command's mistake (launch_command), not the parser's
    found = explained(
        "accelerate <command> [<args>] launch: error: argument --num_processes: invalid int value: 'four'\n"
    )
    assert found.id != "log.library_version_bug", found.summary


def test_an_invalid_device_ordinal_chosen_through_an_installed_package_is_only_likely():
    # 1271.txt (ray-project/ray#26493): Ray Train's prepare_model picked the index under Ray Tune
    found = read("1271.txt", "invalid_device_ordinal", "likely")
    assert found.details["alternatives"] == ["log.library_version_bug"]
    # the script's own set_device: certain, no package named
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 12, in main\n'
        "    torch.cuda.set_device(local_rank)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py", line 404, in set_device\n'
        "    torch._C._cuda_setDevice(device)\n"
        "RuntimeError: CUDA error: invalid device ordinal\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.invalid_device_ordinal", "certain"), found.summary
    assert "alternatives" not in found.details


def test_apex_without_amp_is_an_apex_newer_than_the_code():
    # 1284.txt (NVIDIA/apex#1912): apex's master removed amp, parallel and RNN (NVIDIA/apex#1896); only likely,
    # another package named apex prints the same
    found = read("1284.txt", "dependency_version", "likely")
    assert "NVIDIA/apex#1896" in found.summary and "torch.amp.GradScaler" in found.fix
    # a name apex still has, missing, is not that removal
    found = explained(
        "ImportError: cannot import name 'FusedAdam' from 'apex.optimizers' (/x/apex/__init__.py)\n"
    )
    assert "May 2025" not in found.summary, found.summary


def test_torch_six_names_deepspeed_before_0_8_2():
    # 1288.txt (huggingface/peft#917): DeepSpeed 0.8.0 importing torch._six under torch 2
    found = read("1288.txt", "dependency_version", "certain")
    assert "deepspeed>=0.8.2" in found.fix and "torch 2.0 removed it" in found.summary


def test_torch_distributed_without_init_process_group_is_a_build_without_it():
    # 1290.txt (pytorch/examples#467): the macOS binary of torch 1.0 had no torch.distributed
    found = read("1290.txt", "backend_unavailable", "certain")
    assert "built without torch.distributed" in found.summary and "is_available()" in found.fix
    # a torch with torch.distributed but no NCCL says so
    found = explained("RuntimeError: Distributed package doesn't have NCCL built in\n")
    assert found.id == "log.backend_unavailable" and "no NCCL backend" in found.summary, found.summary


def test_a_lightning_2_0_flag_names_the_last_1_x():
    # 1280.txt (Mathux/TEMOS#29): auto_select_gpus, which Lightning 2.0 removed
    found = read("1280.txt", "dependency_version", "likely")
    assert "devices='auto'" in found.fix and "1.9.5 is the last 1.x" in found.fix
