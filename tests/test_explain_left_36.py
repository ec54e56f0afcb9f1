"""What earlier sessions noticed and left, each read for its class: torch's one-key wordings of a state dict
that is a whole checkpoint; a torch minimum refused beside a torch new enough; Lightning's refusals quoting the
values they list; EXDEV from a container's overlay; a member a base from another package gives, which the
releases' table (benchmarks/api_members.py) must not call added or removed. Each on the wording its source prints
and on a second wording or release, with a near miss that must read otherwise."""

from __future__ import annotations

import sys
from pathlib import Path

from explaining import explained, made_wheel

from torchdoctor.explain.kinds import api_members

# --- a training checkpoint handed to load_state_dict, named by one key ---

# torch 0.1-0.3 nn/modules/module.py load_state_dict: KeyError at the first key of the dict the model lacks
OLD_LOAD = (
    "Traceback (most recent call last):\n"
    '  File "test.py", line 40, in <module>\n'
    "    model.load_state_dict(torch.load(args.resume))\n"
    '  File "/usr/local/lib/python3.6/site-packages/torch/nn/modules/module.py", line 490, in load_state_dict\n'
    "    .format(name))\n"
    "KeyError: 'unexpected key \"{}\" in state_dict'\n"
)


def test_torch_0x_naming_a_weights_entry_loads_that_entry():
    found = explained(OLD_LOAD.format("model"))
    assert (found.id, found.details["confidence"]) == ("log.state_dict_keys", "likely")
    assert "model.load_state_dict(checkpoint['model'])" in found.fix
    assert "first key, 'model'" in found.summary and "likely" in found.summary


def test_torch_0x_naming_the_loops_state_asks_for_the_weights_entry():
    # pytorch/examples imagenet's checkpoint: {'epoch', 'arch', 'state_dict', 'best_prec1', 'optimizer'}, the
    # epoch first
    found = explained(OLD_LOAD.format("epoch"))
    assert found.id == "log.state_dict_keys"
    assert "first key, 'epoch'" in found.summary
    assert "print(list(checkpoint))" in found.fix and "checkpoint['model']" not in found.fix


def test_torch_0x_naming_a_parameter_is_not_read_as_a_training_checkpoint():
    # a DataParallel checkpoint's first key: a parameter's name, not a checkpoint's entry
    found = explained(OLD_LOAD.format("module.conv1.weight"))
    assert found.id == "log.state_dict_keys"
    assert "training checkpoint" not in found.summary and "checkpoint[" not in found.fix


def test_torch_1x_listing_one_weights_entry_loads_that_entry():
    # torch 0.4+: every key listed; a dict saved as {'model': model.state_dict()} lists that key alone
    found = explained(
        "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
        '\tMissing key(s) in state_dict: "conv1.weight", "bn1.weight", "bn1.bias", "fc.weight", "fc.bias".\n'
        '\tUnexpected key(s) in state_dict: "model".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "model.load_state_dict(checkpoint['model'])" in found.fix
    assert "its one key, 'model'" in found.summary and "optimizer" not in found.fix


def test_torch_1x_listing_one_top_level_parameter_is_not_a_checkpoint():
    found = explained(
        "RuntimeError: Error(s) in loading state_dict for VisionTransformer:\n"
        '\tMissing key(s) in state_dict: "cls_token".\n'
        '\tUnexpected key(s) in state_dict: "pos_embed".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "checkpoint[" not in found.fix


# --- a torch minimum refused while the log shows a torch that meets it: the check ran in another environment ---

COLLECT_ENV = "PyTorch version: {}\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"


def test_accelerate_refusing_a_torch_the_log_shows_new_enough_says_another_environment():
    # accelerate/accelerator.py: "FSDP requires PyTorch >= {}" beside collect_env's report of the torch installed
    found = explained(
        COLLECT_ENV.format("2.3.1+cu121") + "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    accelerator = Accelerator()\n"
        "ValueError: FSDP requires PyTorch >= 2.1.0\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "likely")
    assert (
        "torch 2.3.1+cu121 installed" in found.summary
        and "likely ran in another environment" in found.summary
    )
    assert "sys.executable, torch.__version__" in found.fix and "pip install -U 'torch" not in found.fix


def test_transformers_import_check_beside_pip_list_says_another_environment():
    # transformers/utils/versions.py require_version, with pip list's row of the torch installed
    found = explained(
        "Package                  Version\n"
        "------------------------ ----------\n"
        "torch                    2.0.1\n"
        "transformers             4.40.0\n"
        "ImportError: torch>=1.13 is required for a normal functioning of this module, but found torch==1.12.1.\n"
    )
    assert found.id == "log.dependency_version"
    assert "it found torch==1.12.1" in found.summary and "torch 2.0.1 installed" in found.summary


def test_transformers_disabling_pytorch_beside_collect_env_pip_row_says_another_environment():
    # transformers/utils/import_utils.py is_torch_available, and collect_env's "[pip3] torch==" row
    found = explained(
        "Versions of relevant libraries:\n[pip3] numpy==1.26.4\n[pip3] torch==2.4.0\n"
        "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1\n"
        "ImportError: AutoModelForCausalLM requires the PyTorch library but it was not found in your environment.\n"
    )
    assert found.id == "log.dependency_version"
    assert "transformers requires torch >= 2.1 (it found 2.0.1)" in found.summary
    assert "torch 2.4.0 installed" in found.summary


def test_a_torch_older_than_the_minimum_is_still_read_as_too_old():
    found = explained(COLLECT_ENV.format("2.0.1+cu118") + "ValueError: FSDP requires PyTorch >= 2.1.0\n")
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "certain")
    assert "another environment" not in found.summary
    assert "pip install -U 'torch>=2.1.0'" in found.fix


def test_a_version_the_code_compares_with_is_not_the_torch_installed():
    # the script's own comparison names a version; it says nothing of the torch installed
    found = explained("    if torch.__version__ >= '2.2.0':\nValueError: FSDP requires PyTorch >= 2.1.0\n")
    assert found.id == "log.dependency_version"
    assert "another environment" not in found.summary


def test_a_pre_release_of_the_minimum_is_not_read_as_new_enough():
    found = explained(
        COLLECT_ENV.format("2.6.0a0+ecf3bae40a.nv25.01") + "ValueError: FSDP2 requires PyTorch >= 2.6.0\n"
    )
    assert found.id == "log.dependency_version"
    assert "another environment" not in found.summary and "pre-release of 2.6.0" in found.fix


# --- Lightning refusing a strategy or accelerator: the values its message lists, quoted whole ---

# lightning 2.x's strategy names (fabric/strategies/registry.py lists them sorted)
NAMES = (
    "auto, ddp, ddp_find_unused_parameters_false, ddp_find_unused_parameters_true, ddp_fork, ddp_notebook, "
    "ddp_spawn, deepspeed, deepspeed_stage_1, deepspeed_stage_2, deepspeed_stage_2_offload, deepspeed_stage_3, "
    "deepspeed_stage_3_offload, deepspeed_stage_3_offload_nvme, dp, fsdp, fsdp_cpu_offload, single_device, "
    "single_xla, xla, xla_fsdp"
)


def test_a_registry_refusal_quotes_every_name_it_lists():
    # lightning/fabric/strategies/registry.py StrategyRegistry.get: the quote of the message is cut, the list is not
    found = explained(f"KeyError: \"'ddp_shard' not found in registry. Available names: {NAMES}\"\n")
    assert found.id == "log.trainer_arguments"
    assert f"The message lists what this release accepts: {NAMES}.\n" in found.fix


def test_the_strategy_examples_of_lightning_1x_are_its_own():
    # pytorch_lightning 1.x accelerator_connector.py: its examples hold dp (2.0 removed it), not auto
    found = explained(
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You selected an invalid strategy name: "
        "`strategy='ddpp'`. Example choices: ddp, ddp_spawn, deepspeed, dp, ... Find a complete list of options in "
        "our documentation at https://lightning.ai\n"
    )
    assert found.id == "log.trainer_arguments"
    assert found.fix.startswith("The message gives these examples: ddp, ddp_spawn, deepspeed, dp, ...\n")


def test_the_accelerator_refusal_quotes_its_names():
    found = explained(
        "ValueError: You selected an invalid accelerator name: `accelerator='gpus'`. Available names are: auto, "
        "cpu, cuda, gpu, mps, tpu.\n"
    )
    assert "accepts: auto, cpu, cuda, gpu, mps, tpu.\n" in found.fix


def test_a_list_past_the_limit_is_cut_between_names():
    names = ", ".join(f"custom_strategy_{n:03d}" for n in range(60))
    found = explained(f"KeyError: \"'ddp_shard' not found in registry. Available names: {names}\"\n")
    quoted = found.fix.split("accepts: ", 1)[1].split("\n", 1)[0]
    assert quoted.endswith(", …")
    assert all(name in names.split(", ") for name in quoted.removesuffix(", …").split(", "))


def test_a_refusal_without_a_list_quotes_none():
    found = explained("ValueError: `num_nodes` must be a positive integer, but got 0.\n")
    assert found.id == "log.trainer_arguments" and not found.fix.startswith("The message")


# --- EXDEV in a container: an overlay refuses to rename a directory of the image's layers ---

EXDEV = "OSError: [Errno 18] Invalid cross-device link: '{}' -> '{}'\n"


def test_a_rename_across_folders_in_a_container_names_the_overlay_beside_the_temporary_folder():
    found = explained(
        "$ docker run --gpus all -v /data:/data trainer:latest python train.py\n"
        + EXDEV.format("/tmp/tmpk2j3/checkpoint-500", "/workspace/output/checkpoint-500")
    )
    assert found.id == "log.cross_device_rename"
    assert "tempfile.mkstemp(dir=" in found.fix and "redirect_dir" in found.fix
    assert "overlay layers" in found.summary


def test_df_showing_an_overlay_root_names_it_too():
    found = explained(
        "Filesystem      Size  Used Avail Use% Mounted on\n"
        "overlay         1.8T  1.2T  540G  69% /\n"
        + EXDEV.format("/root/.cache/huggingface/tmpx", "/mnt/shared/hf/models--gpt2")
    )
    assert "redirect_dir" in found.fix


def test_a_rename_within_one_folder_is_likely_the_overlay():
    # a directory renamed beside itself crosses no mount: without the log naming a container, still the overlay
    found = explained(EXDEV.format("/app/data/cache", "/app/data/cache.old"))
    assert found.id == "log.cross_device_rename"
    assert "likely an overlay filesystem" in found.summary and "redirect_dir" in found.fix


def test_a_rename_across_folders_outside_a_container_does_not_name_the_overlay():
    found = explained(EXDEV.format("/tmp/tmpk2j3/model.safetensors", "/mnt/nfs/out/model.safetensors"))
    assert found.id == "log.cross_device_rename"
    assert "overlay" not in found.summary + found.fix


# --- a member a base from another package gives is no release's change (benchmarks/api_members.py) ---

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import api_members as generator  # noqa: E402


def _release(tmp_path: Path, version: str, layer: str, lora: str) -> generator.Release:
    """A release of "pkg" whose Linear subclasses torch's nn.Linear as peft 0.2-0.6 did (``layer``: the rest of
    its module), read as the table's build reads a wheel."""
    wheel = made_wheel(
        tmp_path,
        f"pkg-{version}-py3-none-any.whl",
        {
            "pkg/__init__.py": "",
            "pkg/layer.py": "import torch.nn as nn\nimport bitsandbytes as bnb\n" + layer,
            "pkg/lora.py": lora,
        },
    )
    return (version, *generator.public(generator.read_release("pkg", wheel)))


LORA_LAYER = "class LoraLayer:\n    def __init__(self, r):\n        self.r = r\n{}"
LINEAR = (
    "from pkg.lora import LoraLayer\n"
    "class Linear(nn.Linear, LoraLayer):\n    def train(self, mode=True):\n        pass\n{}"
    "class Linear8bitLt(bnb.nn.Linear8bitLt, LoraLayer):\n    pass\n"
    "class Adapter(nn.Module, LoraLayer):\n    pass\n"
)


def test_members_a_layer_base_gives_are_not_rows_when_the_package_starts_naming_them(tmp_path):
    # peft 0.2 -> 0.3: LoraLayer began to assign in_features (torch's nn.Linear and bitsandbytes' layer had it
    # all along) and Linear stopped overriding train (nn.Module's train stayed); merge is new in every sense
    old = _release(tmp_path, "0.2.0", LINEAR.format(""), LORA_LAYER.format(""))
    new = _release(
        tmp_path,
        "0.3.0",
        LINEAR.replace("    def train(self, mode=True):\n        pass\n", "    pass\n").format(
            "    def merge(self):\n        pass\n"
        ),
        LORA_LAYER.format(
            "    def update_layer(self, in_features):\n        self.in_features = in_features\n"
        ),
    )
    rows = generator.changes("pkg", [old, new])
    assert ("pkg", "Linear", "merge", "0.3.0", "", "") in rows  # nn.Linear's members are known: no merge
    named = {(cls, member) for _, cls, member, *_ in rows}
    assert ("Linear", "in_features") not in named and ("Linear", "train") not in named
    # bitsandbytes' layer, its package not read here: nothing it may give is said to be missing
    assert not any(cls == "Linear8bitLt" for cls, _ in named)
    # under nn.Module alone, in_features did come with the release that assigns it
    assert ("pkg", "Adapter", "in_features", "0.3.0", "", "") in rows


def test_the_table_no_longer_says_peft_0_2_lacked_in_features():
    # peft 0.2.0's Linear8bitLt(bnb.nn.Linear8bitLt, LoraLayer) had in_features from nn.Linear; peft's own code
    # assigned it from 0.3.0 on: the table read that as "came in 0.3" and the reading blamed 0.2.0, certain
    found = explained(
        "peft==0.2.0\nTraceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n    model = get_peft_model(model, config)\n'
        '  File "/usr/lib/python3.10/site-packages/peft/tuners/lora.py", line 300, in _find_and_replace\n'
        "    x = target.in_features\n"
        "AttributeError: 'Linear8bitLt' object has no attribute 'in_features'\n"
    )
    assert "came in peft" not in found.summary
    assert (found.id, found.details.get("confidence")) != ("log.dependency_version", "certain")
    # a member no base gives is still read from the table: Linear.merge came in peft 0.3
    assert api_members.rows("peft", "Linear", "merge")[0].added == "0.3.0"
    assert api_members.rows("peft", "Linear", "in_features") == []
