"""DeepSpeed's config models against the pydantic installed (kinds/deepspeed_pydantic.py): pydantic 2 refusing the
pydantic 1 models of DeepSpeed up to 0.11.1 at `import deepspeed`, and pydantic 1 under DeepSpeed 0.15's pydantic 2
models, read as the release pairing (`dependency_version`) with the releases that fit.

The tracebacks are the frames users posted (OptimalScale/LMFlow#544, deepspeedai/DeepSpeed#5641, Obsidian#16), with
pydantic's message as its source prints it (the catalog's template).
"""

from __future__ import annotations

import pytest
from explaining import explained, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

ENV = "/home/u/anaconda3/envs/lmflow/lib/python3.9/site-packages"
# pydantic 2's warnings at the same import (pydantic/_internal/_config.py), then the traceback of `deepspeed`'s
# launcher importing the package
IMPORT_DEEPSPEED = (
    f"{ENV}/pydantic/_internal/_config.py:269: UserWarning: Valid config keys have changed in V2:\n"
    "* 'validate_all' has been renamed to 'validate_default'\n"
    "  warnings.warn(message, UserWarning)\n"
    "Traceback (most recent call last):\n"
    '  File "/home/u/anaconda3/envs/lmflow/bin/deepspeed", line 3, in <module>\n'
    "    from deepspeed.launcher.runner import main\n"
    f'  File "{ENV}/deepspeed/__init__.py", line 15, in <module>\n'
    "    from . import module_inject\n"
    f'  File "{ENV}/deepspeed/runtime/config_utils.py", line 20, in <module>\n'
    "    class DeepSpeedConfigModel(BaseModel):\n"
)
ROOT_VALIDATOR = template("third_party:pydantic-root-validator-skip-on-failure")
PYDANTIC_FRAMES = (
    f'  File "{ENV}/pydantic/deprecated/class_validators.py", line 231, in root_validator\n'
    "    return root_validator()(*__args)  # type: ignore\n"
    f'  File "{ENV}/pydantic/deprecated/class_validators.py", line 237, in root_validator\n'
    "    raise PydanticUserError(\n"
)


def test_pydantic_2_refusing_deepspeeds_models_names_the_releases_that_fit():
    text = IMPORT_DEEPSPEED + PYDANTIC_FRAMES + f"pydantic.errors.PydanticUserError: {ROOT_VALIDATOR}\n"
    found = explained(text)
    assert found.id == "log.dependency_version", (found.id, found.summary)
    assert found.details["confidence"] == "certain"
    assert "pydantic 2 is installed under code written for pydantic 1" in found.summary
    assert "deepspeed>=0.11.2" in found.fix and "pydantic<2" in found.fix and "#4407" in found.fix


def test_the_refusal_pasted_without_its_backticks_is_read_the_same():
    bare = ROOT_VALIDATOR.replace("`", "")
    found = explained(IMPORT_DEEPSPEED + PYDANTIC_FRAMES + f"pydantic.errors.PydanticUserError: {bare}\n")
    assert found.id == "log.dependency_version", (found.id, found.summary)
    assert "deepspeed>=0.11.2" in found.fix


def test_another_packages_pydantic_1_model_is_not_said_to_be_deepspeeds():
    # DeepSpeed-MII's own config (mii/config.py), its package named "mii" only: no DeepSpeed release to name
    text = (
        "Traceback (most recent call last):\n"
        '  File "/data/share/MII/mii/config.py", line 97, in MIIConfig\n'
        "    def auto_enable_load_balancing(cls, values):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/pydantic/deprecated/class_validators.py", line 237, in '
        "root_validator\n"
        "    raise PydanticUserError(\n"
        f"pydantic.errors.PydanticUserError: {ROOT_VALIDATOR}\n"
    )
    found = explained(text)
    assert found.id == "log.dependency_version", (found.id, found.summary)
    assert "DeepSpeed" not in found.summary and "deepspeed>=" not in found.fix
    assert "pydantic<2" in found.fix


def test_a_pydantic_1_field_attribute_read_by_deepspeed_is_likely_the_same_pairing():
    # deepspeed 0.9.5 runtime/config_utils.py get_config_default under pydantic 2 (NousResearch/Obsidian#16)
    text = (
        f'  File "{ENV}/deepspeed/runtime/config_utils.py", line 116, in get_config_default\n'
        "    field_name).required, f\"'{field_name}' is a required field and does not have a default value\"\n"
        "AttributeError: 'FieldInfo' object has no attribute 'required'\n"
    )
    found = explained(text)
    assert found.id == "log.dependency_version", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "'required'" in found.summary and "deepspeed>=0.11.2" in found.fix


def test_pydantic_1_under_deepspeed_0_15_names_pydantic_2():
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 5, in <module>\n'
        "    import deepspeed\n"
        f'  File "{ENV}/deepspeed/runtime/config_utils.py", line 12, in <module>\n'
        "    from pydantic import BaseModel, ConfigDict, field_serializer\n"
        f"ImportError: cannot import name 'ConfigDict' from 'pydantic' ({ENV}/pydantic/__init__.py)\n"
    )
    found = explained(text)
    assert found.id == "log.dependency_version", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "pydantic 2 added" in found.summary
    assert "pydantic>=2" in found.fix and "#5167" in found.fix and "pydantic.py" in found.fix


NEAR_MISSES = [
    # a name both majors have: a shadowing file or a circular import, not the major
    "ImportError: cannot import name 'BaseModel' from 'pydantic' (/home/u/project/pydantic.py)\n",
    # another attribute of a FieldInfo, not one of pydantic 1's field attributes
    "AttributeError: 'FieldInfo' object has no attribute 'json_schema_extra_fn'\n",
    # pydantic 2's own root_validator words, the other refusal (pre=True needs no skip_on_failure)
    "pydantic.errors.PydanticUserError: `@root_validator` is deprecated and should be replaced with "
    "`@model_validator`.\n",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_read_as_the_pydantic_major(text):
    found = explained(text)
    assert "pydantic 2 is installed" not in found.summary and "pydantic 2 added" not in found.summary, (
        found.id,
        found.summary,
    )


def test_deepspeeds_own_schema_refusal_stays_the_config():
    text = (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
        "stage3_prefetch_bucket\n"
        "  Extra inputs are not permitted [type=extra_forbidden, input_value=1000, input_type=int]\n"
    )
    assert explained(text).id == "log.deepspeed_config_mismatch"


def test_the_catalog_maps_pydantics_refusal_to_the_pairing():
    assert by_id()["third_party:pydantic-root-validator-skip-on-failure"].kind == "dependency_version"


# DeepSpeed 0.15+ building its monitor section (deepspeed/monitor/config.py WandbConfig, a DeepSpeedConfigModel):
# pydantic raises inside its own main.py, the traceback passing through DeepSpeed's config code
MONITOR_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 88, in <module>\n'
    '    engine, optimizer, _, _ = deepspeed.initialize(model=model, config="ds_config.json")\n'
    f'  File "{ENV}/deepspeed/runtime/config.py", line 790, in _initialize_params\n'
    "    self.monitor_config = get_monitor_config(param_dict)\n"
    f'  File "{ENV}/deepspeed/monitor/config.py", line 12, in get_monitor_config\n'
    "    return DeepSpeedMonitorConfig(**monitor_dict)\n"
    f'  File "{ENV}/deepspeed/runtime/config_utils.py", line 57, in __init__\n'
    "    super().__init__(**data)\n"
    f'  File "{ENV}/pydantic/main.py", line 212, in __init__\n'
    "    validated_self = self.__pydantic_validator__.validate_python(data, self_instance=self)\n"
)
WANDB_REFUSED = (
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for WandbConfig\n"
    "project\n"
    "  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]\n"
)


def test_a_deepspeed_model_without_its_name_is_read_through_deepspeeds_config_frames():
    found = explained(MONITOR_TRACEBACK + WANDB_REFUSED)
    assert found.id == "log.deepspeed_config_mismatch", (found.id, found.summary)
    assert "WandbConfig section: project: Input should be a valid string" in found.summary


def test_the_same_model_name_outside_deepspeeds_config_code_is_not_deepspeeds():
    # a script's own pydantic model of the same name, built in the script's own config.py
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/project/config.py", line 30, in load\n'
        "    return WandbConfig(**raw)\n"
        f'  File "{ENV}/pydantic/main.py", line 212, in __init__\n'
        "    validated_self = self.__pydantic_validator__.validate_python(data, self_instance=self)\n"
    ) + WANDB_REFUSED
    assert explained(text).id != "log.deepspeed_config_mismatch"


# train/5621.txt (huggingface/transformers#36081): from_pretrained under ZeRO-3 building zero.Init's config, the
# paste cut before the error line (DeepSpeed 0.16.3 refused stage3_prefetch_bucket_size's float)
CUT_IN_ZERO_INIT = (
    "[rank0]: Traceback (most recent call last):\n"
    '[rank0]:   File "/home/sdp/fanli/doc_to_fix.py", line 112, in <module>\n'
    "[rank0]:     model = AutoModelForSeq2SeqLM.from_pretrained(model_name)\n"
    '[rank0]:   File "/home/sdp/fanli/transformers/src/transformers/modeling_utils.py", line 4144, in '
    "from_pretrained\n"
    "[rank0]:     deepspeed.zero.Init(config_dict_or_path=deepspeed_config()),\n"
    '[rank0]:   File "/home/sdp/miniforge3/envs/ipex-ww04/lib/python3.10/site-packages/deepspeed-0.16.3+66d3d3e94-py3.10.'
    'egg/deepspeed/runtime/zero/partition_parameters.py", line 949, in __init__\n'
    "[rank0]:     _ds_config = deepspeed.runtime.config.DeepSpeedConfig(config_dict_or_path,\n"
    "[...]\n"
)


def test_a_traceback_cut_inside_deepspeed_building_its_config_is_likely_the_config():
    found = explained(CUT_IN_ZERO_INIT)
    assert found.id == "log.deepspeed_config_mismatch", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "partition_parameters.py:949" in found.summary
    assert "DeepSpeed 0.16 refuses a float" in found.fix and "stage3_prefetch_bucket_size" in found.fix


def test_a_release_before_0_15_is_not_given_the_float_refusal():
    text = CUT_IN_ZERO_INIT.replace("deepspeed-0.16.3+66d3d3e94", "deepspeed-0.14.4")
    found = explained(text)
    assert found.id == "log.deepspeed_config_mismatch", (found.id, found.summary)
    assert "stage3_prefetch_bucket_size" not in found.fix


def test_a_traceback_cut_elsewhere_in_deepspeed_stays_unread():
    # train/109.txt's frames: cut inside the engine's ZeRO checkpoint save, not its config
    text = (
        "Traceback (most recent call last):\n"
        '  File "/src/transformers/trainer.py", line 1212, in _save_checkpoint\n'
        "    self.deepspeed.save_checkpoint(output_dir)\n"
        '  File "/code/DeepSpeed/deepspeed/runtime/engine.py", line 1667, in _save_zero_checkpoint\n'
        "    zero_sd = {'optimizer_state_dict': self.optimizer.state_dict()}\n"
        "[...]\n"
    )
    assert explained(text).id == "log.unrecognised"
