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


# Lightning 2.x's precision plugin calls configure_gradient_clipping without the index (B-cos/B-cos-v2#5)
LIGHTNING = (
    "TypeError: ClassificationLitModel.configure_gradient_clipping() missing 1 required positional argument: "
    "'optimizer_idx'\n"
)


# (the line, the confidence, texts the fix must hold), each a release that changed what the code calls
@pytest.mark.parametrize(
    ("log", "confidence", "fix_holds"),
    [
        pytest.param(
            "      " + SKLEARN, "certain", ("scikit-learn", "requirements"), id="sklearn placeholder"
        ),
        pytest.param(TV_WEIGHTS, "certain", ("0.13", "1.12.0", "pretrained=True"), id="torchvision builder"),
        pytest.param(
            "TypeError: __init__() got an unexpected keyword argument 'weights_backbone'\n",
            "likely",
            ("0.13",),
            id="weights refused, no torchvision frame",
        ),
        pytest.param(
            LIGHTNING, "certain", ("pytorch-lightning<2.0.0", "optimizer_idx"), id="Lightning 2.0 hook"
        ),
        pytest.param(MMPOSE, "likely", ("mmpose",), id="mmpose submodule"),
    ],
)
def test_a_release_change_is_read_from_its_own_message(log, confidence, fix_holds):
    found = lead(log)
    assert found.id == "log.dependency_version" and found.details["confidence"] == confidence
    assert all(text in found.fix for text in fix_holds)


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
