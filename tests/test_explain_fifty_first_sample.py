"""The fifty-first sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2367-2389)."""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

# models/ops/functions/ms_deform_attn_func.py of Deformable DETR (and the repositories that copy models/ops)
# imports the extension models/ops/setup.py builds; CPython's ModuleNotFoundError when it was not built
DEFORMABLE_DETR = (
    "Traceback (most recent call last):\n"
    '  File "main.py", line 21, in <module>\n'
    "    from models import build_model\n"
    '  File "/home/ana/detr/models/ops/functions/ms_deform_attn_func.py", line 18, in <module>\n'
    "    import MultiScaleDeformableAttention as MSDA\n"
    "ModuleNotFoundError: No module named 'MultiScaleDeformableAttention'\n"
)


def test_deformable_attention_not_built_names_its_ops_folder():
    found = certain(DEFORMABLE_DETR, "extension_import")
    assert "cd models/ops && sh make.sh" in found.fix
    # a locally compiled op is no package to pip install (launchers.py's reading of a missing module)
    assert "pip install MultiScaleDeformableAttention" not in found.fix
    assert "log.broken_install" not in found.details.get("alternatives", "")


# mask2former/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py: its own ModuleNotFoundError
def test_mask2formers_own_message_is_read_too():
    found = certain(
        "ModuleNotFoundError: \n\nPlease compile MultiScaleDeformableAttention CUDA op with the following "
        "commands:\n\t`cd mask2former/modeling/pixel_decoder/ops`\n\t`sh make.sh`\n",
        "extension_import",
    )
    assert "the ops folder the message names" in found.fix


def test_the_compiled_module_built_against_another_torch_stays_a_rebuild():
    found = explained(
        "ImportError: /home/ana/detr/models/ops/MultiScaleDeformableAttention.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c1021throwNullDataPtrErrorEv\n"
    )
    assert found.id == "log.extension_import" and "built against another torch" in found.summary


def test_another_missing_module_is_not_the_deformable_attention_op():
    found = explained("ModuleNotFoundError: No module named 'MultiScaleDeformableAttn'\n")
    assert "MultiScaleDeformableAttention CUDA operators" not in found.summary


def test_mmcvs_deprecation_warning_naming_the_class_is_not_a_missing_build():
    found = explained(
        "UserWarning: The arguments `residual` in MultiScaleDeformableAttention has been deprecated, now you "
        "should use `identity`\n"
    )
    assert found.id != "log.extension_import"


# vision/datasets/voc_dataset.py of pytorch-ssd: the image-set list of a VOC folder missing
def test_a_voc_folder_without_its_image_set_list_names_the_lists():
    found = certain(
        "OSError: missing ImageSet file data/fruit/ImageSets/Main/trainval.txt\n",
        "data_path_missing",
    )
    assert "ImageSets/Main/trainval.txt" in found.fix and "default.txt" in found.fix


def test_the_raise_its_older_format_failed_on_is_likely_the_same():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train_ssd.py", line 230, in <module>\n'
        "    target_transform=target_transform)\n"
        '  File "/home/ana/ssd/vision/datasets/voc_dataset.py", line 33, in __init__\n'
        '    raise IOError("missing ImageSet file {:s}".format(image_sets_file))\n'
        "TypeError: unsupported format string passed to PosixPath.__format__\n"
    )
    assert found.id == "log.data_path_missing" and found.details["confidence"] == "likely"
    assert "ImageSets/Main" in found.fix and "checkpoint" not in found.summary


def test_a_skipped_image_warning_of_the_same_loader_is_not_a_missing_list():
    found = explained("warning - could not find image 2021-01-06 9.58.14 - ignoring from dataset\n")
    assert found.id != "log.data_path_missing"


def test_a_plain_missing_dataset_path_keeps_its_other_reading():
    likely_with(
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/train/labels.csv'\n",
        "data_path_missing",
        "log.checkpoint_path",
    )
