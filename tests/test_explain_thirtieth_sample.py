"""The knowledge the thirtieth sample by symptom (corpus files 1317-1357, train half) asked for, each anchored on
the message its source prints: OpenMMLab's MMCV range assertion (mmdet/__init__.py), Pillow 10's removed font
metrics, librosa 0.10's keyword-only arguments, torch.onnx's newest opset, PyG 2.0's loader package, Lightning 1.5's
removed metrics, Arrow's 32-bit offsets (concatenate.cc), the tokenizers' refusal of anything but str
(tokenizer.rs), and the replacement and last release api_history's fix now names.
Beside each, a line that must stay silent, or be another kind, or only likely."""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, read, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_mmcv_outside_the_range_mmdet_asserts_is_a_version_pair_that_disagrees():
    # 1326.txt (open-mmlab/mmdetection#5803): digit_version's lists in the bounds
    found = read("1326.txt")
    assert "mmcv>=1.1.4,<=1.2.0" in found.summary and "mmdet" in found.fix
    # 1328.txt (open-mmlab/mmcv#2236): its tuples, an upper bound with '<'
    found = read("1328.txt")
    assert "<1.7.0" in found.summary and "mim install -U mmcv-full" in found.fix
    text = template("third_party:mmdet-mmcv-version-incompatible", "2.2.0", "2.0.0rc4", "2.2.0")
    found = leads_with(f"AssertionError: {text}", "dependency_version", "certain", ["mmcv>=2.0.0rc4,<=2.2.0"])
    assert "mmcv-full" not in found.fix.split("Or install")[0]
    # mmseg 1.x's lower bound alone
    leads_with(
        "AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4.",
        "dependency_version",
        "certain",
        ["mmcv>=2.0.0rc4"],
    )
    # the same words about MMEngine are not MMCV's
    found = explained(
        "AssertionError: MMEngine==0.6.0 is used but incompatible. Please install mmengine>=0.7.1.\n"
    )
    assert "MMCV" not in found.summary


def test_pillow_10_removed_getsize_and_textsize():
    # 1341.txt, 1343.txt (ultralytics/yolov5#11838, #13498)
    for name in ("1341.txt", "1343.txt"):
        found = read(name)
        assert "Pillow==9.5.0" in found.fix and "getbbox" in found.fix
    leads_with(
        "AttributeError: 'ImageDraw' object has no attribute 'textsize'",
        "dependency_version",
        "certain",
        ["Pillow 10", "textbbox"],
    )
    # a getsize some other object lacks is not Pillow's
    found = explained("AttributeError: 'Tensor' object has no attribute 'getsize'\n")
    assert "Pillow" not in found.summary + found.fix


def test_librosa_0_10_takes_keyword_arguments_only():
    # 1330.txt (ictnlp/ComSpeech#2): the bare line, only likely (a function of the code's own may be keyword-only)
    found = read("1330.txt", "dependency_version", "likely")
    assert "librosa==0.9.1" in found.fix and "code's own" in found.summary
    # with librosa in the traceback it is certain
    leads_with(
        '  File "/opt/venv/lib/python3.10/site-packages/librosa/feature/spectral.py", line 2143, in melspectrogram\n'
        "    mel_basis = filters.mel(sr, n_fft)\n"
        "TypeError: mel() takes 0 positional arguments but 2 positional arguments (and 3 keyword-only arguments) "
        "were given",
        "dependency_version",
        "certain",
        ["sr=sr"],
    )
    # another function's positional call is no librosa release
    found = explained("TypeError: forward() takes 0 positional arguments but 1 was given\n")
    assert "librosa" not in found.summary + found.fix


def test_an_onnx_opset_newer_than_the_torch_exporting():
    # 1332.txt (rhasspy/piper#19): torch 1.11 and opset 16, beside torch/onnx's frames
    found = read("1332.txt")
    assert "1.12" in found.summary and "opset_version" in found.fix
    # the bare line: another converter prints the same words
    found = leads_with(
        "ValueError: " + template("third_party:onnx-unsupported-opset-version", "18"),
        "dependency_version",
        "likely",
        ["2.0"],
    )
    assert "another converter" in found.summary


def test_pyg_loader_and_lightning_metrics_are_modules_of_other_releases():
    # 1354.txt (pyg-team/pytorch_geometric#3868)
    found = read("1354.txt", "dependency_version", "likely")
    assert "torch_geometric.data.DataLoader" in found.fix and "2.0" in found.fix
    # 1335.txt (OATML/non-parametric-transformers#3)
    # (the released wheels' table has it: a name of the installed package, certain)
    found = read("1335.txt", "dependency_version")
    assert "torchmetrics" in found.fix and "1.5" in found.summary
    # another PyG module missing is the generic reading, without the loader's story
    found = explained("ModuleNotFoundError: No module named 'torch_geometric.nn.conv.foo'\n")
    assert "loader" not in found.summary


def test_an_arrow_column_past_its_32_bit_offsets():
    # 1352.txt (hiyouga/LlamaFactory#7526)
    # likely: a datasets or pyarrow release concatenating the chunks itself prints it too (certainty review 5)
    found = read("1352.txt", "arrow_offset_overflow", "likely")
    assert "smaller files" in found.fix and "large_string" in found.fix
    leads_with(
        "pyarrow.lib.ArrowInvalid: offset overflow while concatenating arrays, consider casting input from "
        "`list<item: list<item: float>>` to `list<item: large_list<item: float>>` first.",
        "arrow_offset_overflow",
        "likely",
        ["writer_batch_size", "pip install -U datasets pyarrow"],
    )
    # Arrow's other invalid statuses are not this
    found = explained("pyarrow.lib.ArrowInvalid: Column 2 named label expected length 16 but got length 15\n")
    assert found.id != "log.arrow_offset_overflow"


def test_the_tokenizer_refusing_anything_but_str_is_likely_a_missing_text():
    # 1346.txt (Lightning-AI/litgpt#1759)
    found = read("1346.txt", "bad_training_data", "likely")
    assert "dropna" in found.fix
    assert found.details["alternatives"] == ["log.tokenizer_input_type"]
    leads_with(
        "    encodings = self._tokenizer.encode_batch(\n"
        "TypeError: " + template("third_party:tokenizers-text-encode-input-must-be-union"),
        "bad_training_data",
        "likely",
        ["None", "is_split_into_words"],
    )
    # a sequence of another name that must be str is not the tokenizers'
    found = explained("TypeError: LabelSequence must be str\n")
    assert found.id != "log.bad_training_data"


def test_a_removed_name_names_its_replacement_and_last_release():
    # 1320.txt (huggingface/peft#1583): peft's own deprecation text names the replacement
    found = read("1320.txt")
    assert (
        "prepare_model_for_kbit_training" in found.fix and "the last release with it: 0.9.0" in found.summary
    )
    # 1324.txt (Gmgge/TrOCR-Seal-Recognition#51): the last datasets with load_metric
    found = read("1324.txt")
    assert "the last release with it: 2.21.0" in found.summary and "evaluate.load" in found.fix
