"""The thirty-seventh sample's train misses: each kind on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1667-1697)."""

from __future__ import annotations

import io

from torchdoctor.explain.diagnose import explain


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


def kind_of(text: str) -> str:
    return lead(text).id.removeprefix("log.")


def test_yaml_load_without_a_loader_is_code_for_pyyaml_5():
    # Bobo-y/flexible-yolov5#52: lib/yaml/__init__.py of PyYAML 6.0, def load(stream, Loader)
    found = lead(
        '  File ".\\od\\models\\model.py", line 22, in __init__\n'
        "    model_config = yaml.load(open(model_config, 'r'))\n"
        "TypeError: load() missing 1 required positional argument: 'Loader'\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "SafeLoader" in found.fix and "pyyaml<6" in found.fix


def test_another_missing_argument_is_not_the_pyyaml_change():
    assert (
        kind_of("TypeError: load() missing 1 required positional argument: 'path'\n") != "dependency_version"
    )


def test_tensorboard_refused_by_torch_is_likely_an_old_or_shadowed_tensorboard():
    # yenchenlin/nerf-pytorch#32: torch/utils/tensorboard/__init__.py
    found = lead("ImportError: TensorBoard logging requires TensorBoard version 1.15 or above\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "shadows" in found.summary and "pip install -U tensorboard" in found.fix


def test_the_summary_writer_wording_of_torch_1_1_is_the_same_reading():
    found = lead(
        "ImportError: TensorBoard logging requires TensorBoard with Python summary writer installed. This "
        "should be available in 1.14 or above.\n"
    )
    assert found.id == "log.dependency_version"


def test_torch_utils_ffi_is_code_for_torch_0_4():
    # speedinghzl/pytorch-segmentation-toolbox#29: torch/utils/ffi/__init__.py, torch 1.0
    found = lead("ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "another torch" in found.summary and "0.4.1" in found.fix


def test_a_spacy_shortcut_is_code_for_spacy_2():
    # TimDettmers/spodernet#7: spacy/errors.py E941
    found = lead(
        "OSError: [E941] Can't find model 'en'. It looks like you're trying to load a model from a shortcut, "
        "which is obsolete as of spaCy v3.0. To load the model, use its full name instead:\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "en_core_web_sm" in found.fix


def test_a_spacy_model_not_installed_is_not_the_shortcut():
    found = lead(
        "OSError: [E050] Can't find model 'en_core_web_sm'. It doesn't seem to be a Python package.\n"
    )
    assert "shortcut" not in found.summary


def test_tostring_rgb_is_code_for_matplotlib_before_3_10():
    # open-edge-platform/anomalib#2469: matplotlib backends/backend_agg.py, removed in 3.10
    found = lead("AttributeError: 'FigureCanvasAgg' object has no attribute 'tostring_rgb'\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "buffer_rgba" in found.fix and "matplotlib<3.10" in found.fix


def test_another_missing_canvas_method_is_not_the_matplotlib_change():
    found = lead("AttributeError: 'FigureCanvasAgg' object has no attribute 'tostring_bgr'\n")
    assert "3.10" not in found.summary


def test_masked_lm_labels_is_code_for_transformers_3():
    # heyunh2015/diseaseBERT#1: transformers 3.x popped masked_lm_labels from **kwargs, 4.0 removed it
    found = lead("TypeError: forward() got an unexpected keyword argument 'masked_lm_labels'\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "labels=" in found.fix and "transformers<4" in found.fix


def test_labels_refused_is_not_the_removed_argument():
    found = lead("TypeError: forward() got an unexpected keyword argument 'labels'\n")
    assert "transformers 3 deprecated" not in found.summary


MHA = (
    '  File "./IRRA-main/model/build.py", line 27, in __init__\n'
    "    self.cross_attn = nn.MultiheadAttention(self.embed_dim,\n"
    "TypeError: __init__() got an unexpected keyword argument 'batch_first'\n"
)


def test_batch_first_on_multihead_attention_is_code_for_torch_1_9():
    # anosorae/IRRA#4: torch/nn/modules/activation.py took batch_first from 1.9
    found = lead(MHA)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "1.9.0" in found.fix and "transpose(0, 1)" in found.fix


def test_batch_first_refused_by_a_class_not_shown_is_only_likely():
    found = lead("TypeError: __init__() got an unexpected keyword argument 'batch_first'\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"


def test_upsample_from_an_old_pickle_under_torch_1_11():
    # ultralytics/yolov5#5499: torch/nn/modules/upsampling.py forward reads self.recompute_scale_factor
    found = lead(
        '  File "/home/u/.local/lib/python3.8/site-packages/torch/nn/modules/upsampling.py", line 154, in forward\n'
        "    recompute_scale_factor=self.recompute_scale_factor)\n"
        "AttributeError: 'Upsample' object has no attribute 'recompute_scale_factor'\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "m.recompute_scale_factor = None" in found.fix


def test_another_upsample_attribute_is_not_the_pickle_change():
    found = lead("AttributeError: 'Upsample' object has no attribute 'scale'\n")
    assert "recompute_scale_factor" not in found.fix


def test_conv_padding_mode_from_a_torch_1_0_pickle_is_torch_1_1_s_bug():
    # pytorch/pytorch#20756: torch 1.1.0's conv.py forward read self.padding_mode; fixed by pytorch#21687
    found = lead(
        '  File "/usr/lib/python3.7/site-packages/torch/nn/modules/conv.py", line 331, in forward\n'
        "    if self.padding_mode == 'circular':\n"
        "AttributeError: 'Conv2d' object has no attribute 'padding_mode'\n"
    )
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "padding_mode = 'zeros'" in found.fix


def test_another_missing_conv_attribute_is_not_the_old_pickle():
    found = lead("AttributeError: 'Conv2d' object has no attribute 'padding_size'\n")
    assert "padding_mode" not in found.fix
