"""The knowledge the thirty-first sample by symptom (corpus files 1367-1393, train half) asked for, each anchored on
the message its source prints: OpenMMLab's registries (mmcv/utils/registry.py, mmengine/registry/
build_functions.py), webdataset's end-of-shard marker read by OpenCLIP's group_by_keys_nothrow, trl's trainers given
transformers' TrainingArguments, pandas 2's removed DataFrame.append, and py-faster-rcnn's assertion on mirrored
boxes, and hydra taking over ClassyVision's classy_train.py (hydra/_internal/utils.py's options). Beside each, a line that must stay silent, or be another kind, or only likely."""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, read, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_a_config_type_its_registry_does_not_hold_is_likely_a_module_never_imported():
    # 1368.txt (open-mmlab/mmdetection#7796): MMCV 1.x's message, the builder's class name in front, in prose
    found = read("1368.txt", "config_type_not_registered", "likely")
    assert "DWHead" in found.summary and "custom_imports" in found.fix
    assert "misspelt" in found.summary  # the other reading, named
    # MMEngine's own text names both causes: likely only, the scope read back
    text = template("third_party:mmengine-type-not-in-scope-registry", "CoDETR", "mmdet", "model", "CoDETR")
    found = leads_with(f"KeyError: '{text}'", "config_type_not_registered", "likely", ["default_scope"])
    assert "mmdet::model registry" in found.summary
    # other things "not in the" something are not a registry
    for line in ("ValueError: 3 is not in list", "KeyError: 'cuda:1 is not in the list of devices'"):
        assert explained(line + "\n").id != "log.config_type_not_registered", line


def test_webdatasets_end_of_shard_marker_in_openclips_grouping():
    # 1370.txt (webdataset/webdataset#384): the grouping's source line and the KeyError beside it
    found = read("1370.txt")
    assert "eof_value=None" in found.fix and "0.2.90" in found.summary
    # the source line without its KeyError (a cut paste): only likely
    leads_with(
        '  File "./src/training/data.py", line 281, in group_by_keys_nothrow\n'
        '    fname, value = filesample["fname"], filesample["data"]',
        "dependency_version",
        "likely",
        ["webdataset==0.2.86"],
    )
    # a KeyError 'fname' alone is some dict of the code's own, not webdataset's marker
    found = explained("KeyError: 'fname'\n")
    assert "webdataset" not in found.summary + found.fix


def test_a_trl_trainer_given_transformers_training_arguments():
    # 1372.txt (huggingface/trl#2291)
    found = read("1372.txt")
    assert "DPOConfig" in found.fix and "model_init_kwargs" in found.summary
    leads_with(
        "AttributeError: "
        + template("third_party:trl-trainer-given-training-arguments").replace(
            "'model_init_kwargs'", "'ref_model_init_kwargs'"
        ),
        "dependency_version",
        "certain",
        ["KTOConfig"],
    )
    # another attribute TrainingArguments lacks is no trl config field
    found = explained("AttributeError: 'TrainingArguments' object has no attribute 'sortish_sampler'\n")
    assert "trl" not in found.summary + found.fix


def test_pandas_2_removed_dataframe_append():
    # 1374.txt (mlcommons/GaNDLF#627): the bare line, only likely (Spark's and polars' DataFrames lack it too)
    found = read("1374.txt", "dependency_version", "likely")
    assert "pandas<2" in found.fix and "concat" in found.fix
    # pandas in the traceback makes it certain; Series.iteritems is the same release
    leads_with(
        '  File "/opt/conda/lib/python3.10/site-packages/pandas/core/generic.py", line 5989, in __getattr__\n'
        "    return object.__getattribute__(self, name)\n"
        "AttributeError: 'Series' object has no attribute 'iteritems'",
        "dependency_version",
        "certain",
        ["items()"],
    )
    # a list-like object of another kind without append is not pandas'
    found = explained("AttributeError: 'Tensor' object has no attribute 'append'\n")
    assert "pandas" not in found.summary + found.fix


def test_an_inverted_box_in_py_faster_rcnns_mirrored_roidb():
    # 1379.txt (jwyang/faster-rcnn.pytorch#132): the assertion in append_flipped_images
    found = read("1379.txt", "bad_training_data", "certain")
    assert "coordinates" in found.fix and "65535" in found.fix
    # the same assertion without the flip guards other boxes (proposals, predictions): only likely
    leads_with(
        '  File "utils/box_utils.py", line 41, in xyxy2xywh\n'
        "    " + template("third_party:rcnn-flipped-boxes-inverted") + "\nAssertionError",
        "bad_training_data",
        "likely",
        ["xmin < xmax"],
    )
    # the y check beside it is not anchored
    found = explained("    assert (boxes[:, 3] >= boxes[:, 1]).all()\nAssertionError\n")
    assert found.id != "log.bad_training_data"


def test_hydra_installed_takes_over_a_script_that_uses_it_when_it_can():
    # 1380.txt (facebookresearch/ClassyVision#731): classy_train.py switches to hydra when it is importable
    found = read("1380.txt", "package_conflict", "certain")
    assert "pip uninstall hydra-core" in found.fix
    # another script: as likely a hydra app given an argparse-style option, that reading named
    found = leads_with(
        "train.py: error: " + template("third_party:hydra-ambiguous-config-option"),
        "package_conflict",
        "likely",
        ["--config-name"],
    )
    assert "hydra application" in found.summary
    # argparse's ambiguity between a script's own options is not hydra's
    found = explained("train.py: error: ambiguous option: --lr could match --lr-scheduler, --lr-warmup\n")
    assert found.id != "log.package_conflict"
