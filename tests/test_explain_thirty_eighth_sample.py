"""The thirty-eighth sample's train misses: each kind on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1717-1734)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


# sklearn-pypi-package's setup.py: the placeholder sklearn refuses to install (IDEA-Research/OSX#3's title)
SKLEARN = "The 'sklearn' PyPI package is deprecated, use 'scikit-learn'\n"

# torchvision 0.12's fasterrcnn_resnet50_fpn passes weights= on to FasterRCNN (sovit-123/fasterrcnn-pytorch-
# training-pipeline#119, its paths shortened)
TV_WEIGHTS = (
    'Traceback (most recent call last):\n  File "train.py", line 306, in main\n'
    "    model = build_model(num_classes=NUM_CLASSES, pretrained=True)\n"
    '  File "/env/lib/python3.8/site-packages/torchvision/models/detection/faster_rcnn.py", line 368, in '
    "fasterrcnn_resnet50_fpn\n"
    "    model = FasterRCNN(backbone, num_classes, **kwargs)\n"
    "TypeError: __init__() got an unexpected keyword argument 'weights'\n"
)

# Lite-HRNet's training imports mmpose 0.x's mmpose/models/registry.py (open-mmlab/mmpose#724)
MMPOSE = (
    '  File "/home/sa/workspace/zap/Lite-HRNet/models/backbones/litehrnet.py", line 12, in <module>\n'
    "    from mmpose.models.registry import BACKBONES\n"
    "ModuleNotFoundError: No module named 'mmpose.models.registry'\n"
)


def test_the_deprecated_sklearn_package_is_a_requirement_naming_it_certain():
    found = lead("      " + SKLEARN)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "scikit-learn" in found.fix and "requirements" in found.fix


def test_a_torchvision_builder_refusing_weights_is_a_torchvision_older_than_0_13():
    found = lead(TV_WEIGHTS)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "0.13" in found.fix and "1.12.0" in found.fix and "pretrained=True" in found.fix


def test_weights_refused_with_no_torchvision_frame_is_only_likely():
    found = lead("TypeError: __init__() got an unexpected keyword argument 'weights_backbone'\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"


def test_a_lightning_hook_still_taking_optimizer_idx_is_code_for_lightning_1_certain():
    # B-cos/B-cos-v2#5: lightning 2.x's precision plugin calls configure_gradient_clipping without the index
    found = lead(
        "TypeError: ClassificationLitModel.configure_gradient_clipping() missing 1 required positional argument: "
        "'optimizer_idx'\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "pytorch-lightning<2.0.0" in found.fix and "optimizer_idx" in found.fix


def test_a_missing_module_of_mmpose_is_its_release_and_likely():
    found = lead(MMPOSE)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "mmpose.models.registry" in found.summary and "mmpose" in found.fix


# near-misses: the same words about something else, which must not be read as those releases
@pytest.mark.parametrize(
    ("log", "not_said"),
    [
        ("ERROR: Could not find a version that satisfies the requirement sklearn2\n", "scikit-learn"),
        ("TypeError: __init__() got an unexpected keyword argument 'weight'\n", "torchvision"),
        ("TypeError: load_state_dict() got an unexpected keyword argument 'weights'\n", "0.13"),
        ("ModuleNotFoundError: No module named 'mmcv._ext'\n", "another mmcv release"),
        ("ModuleNotFoundError: No module named 'mmposes.models'\n", "another mmposes release"),
        (
            "TypeError: my_training_step() missing 1 required positional argument: 'optimizer_idx'\n",
            "Lightning 2.0",
        ),
        ("TypeError: optimizer_step() missing 1 required positional argument: 'closure'\n", "Lightning 2.0"),
    ],
)
def test_a_near_miss_is_not_read_as_the_release_change(log, not_said):
    found = lead(log)
    assert not_said not in found.summary and not_said not in found.fix
