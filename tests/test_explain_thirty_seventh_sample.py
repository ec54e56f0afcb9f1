"""The thirty-seventh sample's train misses: each kind on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1667-1697)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


# (the thread, the lines as it printed them, texts the fix must hold): each a release that changed what the
# code calls, certain from its own message
CERTAIN = [
    pytest.param(
        # lib/yaml/__init__.py of PyYAML 6.0: def load(stream, Loader)
        '  File ".\\od\\models\\model.py", line 22, in __init__\n'
        "    model_config = yaml.load(open(model_config, 'r'))\n"
        "TypeError: load() missing 1 required positional argument: 'Loader'\n",
        ("SafeLoader", "pyyaml<6"),
        id="Bobo-y/flexible-yolov5#52 PyYAML 6",
    ),
    pytest.param(
        # torch/utils/ffi/__init__.py, torch 1.0
        "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead\n",
        ("0.4.1", "CUDAExtension"),
        id="speedinghzl/pytorch-segmentation-toolbox#29 torch.utils.ffi",
    ),
    pytest.param(
        # spacy/errors.py E941, spaCy 3.0
        "OSError: [E941] Can't find model 'en'. It looks like you're trying to load a model from a shortcut, "
        "which is obsolete as of spaCy v3.0. To load the model, use its full name instead:\n",
        ("en_core_web_sm", "spacy<3"),
        id="TimDettmers/spodernet#7 spaCy 3",
    ),
    pytest.param(
        # matplotlib backends/backend_agg.py: deprecated in 3.8, removed in 3.10
        "AttributeError: 'FigureCanvasAgg' object has no attribute 'tostring_rgb'\n",
        ("buffer_rgba", "matplotlib<3.10"),
        id="open-edge-platform/anomalib#2469 Matplotlib 3.10",
    ),
    pytest.param(
        # transformers 3.x popped masked_lm_labels from **kwargs with a FutureWarning; 4.0 removed it
        "TypeError: forward() got an unexpected keyword argument 'masked_lm_labels'\n",
        ("labels=", "transformers<4"),
        id="heyunh2015/diseaseBERT#1 transformers 4",
    ),
    pytest.param(
        # torch/nn/modules/activation.py: MultiheadAttention took batch_first from 1.9
        '  File "./IRRA-main/model/build.py", line 27, in __init__\n'
        "    self.cross_attn = nn.MultiheadAttention(self.embed_dim,\n"
        "TypeError: __init__() got an unexpected keyword argument 'batch_first'\n",
        ("1.9.0", "transpose(0, 1)"),
        id="anosorae/IRRA#4 torch 1.9 batch_first",
    ),
    pytest.param(
        # torch/nn/modules/upsampling.py 1.11: forward reads self.recompute_scale_factor
        '  File "/home/u/.local/lib/python3.8/site-packages/torch/nn/modules/upsampling.py", line 154, in forward\n'
        "    recompute_scale_factor=self.recompute_scale_factor)\n"
        "AttributeError: 'Upsample' object has no attribute 'recompute_scale_factor'\n",
        ("m.recompute_scale_factor = None",),
        id="ultralytics/yolov5#5499 torch 1.11 Upsample",
    ),
]


@pytest.mark.parametrize(("log", "fix_holds"), CERTAIN)
def test_a_release_change_read_from_its_own_message_is_certain(log, fix_holds):
    found = lead(log)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert all(text in found.fix for text in fix_holds)


# near-misses: the same words about something else, which must not be read as those releases
@pytest.mark.parametrize(
    ("log", "not_said"),
    [
        ("TypeError: load() missing 1 required positional argument: 'path'\n", "PyYAML"),
        (
            "OSError: [E050] Can't find model 'en_core_web_sm'. It doesn't seem to be a Python package.\n",
            "shortcut",
        ),
        ("AttributeError: 'FigureCanvasAgg' object has no attribute 'tostring_bgr'\n", "3.10"),
        ("TypeError: forward() got an unexpected keyword argument 'labels'\n", "transformers 3 deprecated"),
        ("AttributeError: 'Upsample' object has no attribute 'scale'\n", "recompute_scale_factor"),
        ("AttributeError: 'Conv2d' object has no attribute 'padding_size'\n", "padding_mode"),
    ],
)
def test_a_near_miss_is_not_read_as_the_release_change(log, not_said):
    found = lead(log)
    assert not_said not in found.summary and not_said not in found.fix


def test_tensorboard_refused_by_torch_is_likely_an_old_or_shadowed_tensorboard():
    # yenchenlin/nerf-pytorch#32: torch/utils/tensorboard/__init__.py; the older wording of torch 1.1-1.4 too
    for line in (
        "ImportError: TensorBoard logging requires TensorBoard version 1.15 or above\n",
        "ImportError: TensorBoard logging requires TensorBoard with Python summary writer installed. This "
        "should be available in 1.14 or above.\n",
    ):
        found = lead(line)
        assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
        assert "shadows" in found.summary and "pip install -U tensorboard" in found.fix


def test_batch_first_refused_by_a_class_not_shown_is_only_likely():
    found = lead("TypeError: __init__() got an unexpected keyword argument 'batch_first'\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"


def test_conv_padding_mode_from_a_torch_1_0_pickle_is_torch_1_1_s_bug():
    # pytorch/pytorch#20756: torch 1.1.0's conv.py forward read self.padding_mode; fixed by pytorch#21687
    found = lead(
        '  File "/usr/lib/python3.7/site-packages/torch/nn/modules/conv.py", line 331, in forward\n'
        "    if self.padding_mode == 'circular':\n"
        "AttributeError: 'Conv2d' object has no attribute 'padding_mode'\n"
    )
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "padding_mode = 'zeros'" in found.fix
