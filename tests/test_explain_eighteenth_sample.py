"""The knowledge the eighteenth sample by symptom (corpus files 717-758, train half) asked for, each anchored on the
message its source prints: CPython's messages for names a library added, renamed or removed in a known release
(Lightning 2.0's Trainer flags, transformers' evaluation_strategy, torchtext's legacy API, NumPy 1.24's aliases,
torch._six, torch names and the release that brought them; NumPy's own expired-alias text), Windows' path limit
(WinError 206, pip's long-path hint), CPython's UnicodeDecodeError under a platform codec, urllib's HTTPError for a
refused download, pickle's "invalid load key" from torch.load, and torch's refusal of data_ptr() on a storage
without data (StorageMethods.cpp). Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_a_removed_lightning_trainer_flag_is_the_lightning_version():
    # 722.txt (RelationRx/pyrelational#14), 724.txt (lcn-kul/madress-2023#1): Trainer(gpus=...) on Lightning 2
    for name in ("722.txt", "724.txt"):
        found = lead(name)
        assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
        assert "devices" in found.fix and "Lightning 2.0" in found.fix
    found = explained(
        "TypeError: "
        + template("system:python-unexpected-keyword-argument", "Trainer.__init__", "resume_from_checkpoint")
        + "\n"
    )
    assert found.id == "log.dependency_version" and "ckpt_path" in found.fix


def test_an_unexpected_keyword_no_release_removed_is_not_read_as_one():
    # the same TypeError for a keyword no known release removed: not this reading
    found = explained("TypeError: __init__() got an unexpected keyword argument 'num_gpus'\n")
    assert "Lightning 2.0" not in found.fix


def test_evaluation_strategy_names_both_sides_of_the_rename():
    # 757.txt (yeyupiaoling/Whisper-Finetune#112), the typographic quotes as posted
    found = lead("757.txt")
    assert found.id == "log.dependency_version" and "eval_strategy" in found.fix
    assert "4.41" in found.fix and "3.4" in found.fix
    found = explained("AttributeError: 'TrainingArguments' object has no attribute 'eval_strategy'\n")
    assert found.id == "log.dependency_version" and "4.41" in found.summary


def test_torchtext_legacy_names_are_the_torchtext_version():
    # 746.txt (pytorch/text#1274), 748.txt (PacktPublishing/Mastering-PyTorch#15)
    for name in ("746.txt", "748.txt"):
        found = lead(name)
        assert found.id == "log.dependency_version"
        assert "legacy" in found.fix and "0.10.0" in found.fix
    # a name torchtext.data still has is not the legacy API
    found = explained("AttributeError: module 'torchtext.data' has no attribute 'get_tokenizer'\n")
    assert "legacy" not in found.summary


def test_numpy_removed_aliases_are_the_numpy_version():
    # 752.txt (thuml/Transfer-Learning-Library#253): NumPy's own text follows CPython's AttributeError, certain
    found = lead("752.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "np.float" in found.fix and "numpy<1.24" in found.fix
    line = template("third_party:numpy-expired-alias", "bool", "bool", "bool")
    found = explained(line + "\n")
    assert found.id == "log.dependency_version" and "np.bool_" in found.fix
    # an attribute NumPy never had is not an expired alias
    found = explained("AttributeError: module 'numpy' has no attribute 'floatt'\n")
    assert "1.24" not in found.summary


def test_torch_six_and_torch_names_with_their_release():
    # 750.txt (152334H/DL-Art-School#58): torch._six, gone in torch 2.0
    found = lead("750.txt")
    assert found.id == "log.dependency_version" and "from torch import inf" in found.fix
    # 726.txt (ultralytics/yolov3#67): torch.argsort, from PyTorch 1.0.0
    found = lead("726.txt")
    assert found.id == "log.dependency_version" and "1.0.0" in found.fix
    found = explained("AttributeError: module 'torch.cuda' has no attribute 'amp'\n")
    assert "1.6.0" in found.summary
    # torch.amp (not torch.cuda.amp) is not the 1.6 namespace: no release named
    found = explained("AttributeError: module 'torch' has no attribute 'amp'\n")
    assert "1.6.0" not in found.summary


def test_windows_path_limit_certain():
    # 731.txt (pytorch/TensorRT#4288): WinError 206 installing a torch nightly
    found = lead("731.txt")
    assert found.id == "log.windows_path_too_long" and found.details["confidence"] == "certain"
    assert "LongPathsEnabled" in found.fix and "shorten" in found.fix
    found = explained(
        "ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
        "'C:\\\\Users\\\\me\\\\venv\\\\Lib\\\\site-packages\\\\x.py'\n"
        + template("third_party:pip-windows-long-path-hint")
        + "\n"
    )
    assert found.id == "log.windows_path_too_long"
    # another Windows error is not the path limit
    found = explained(
        "OSError: [WinError 126] The specified module could not be found. Error loading c10.dll\n"
    )
    assert found.id != "log.windows_path_too_long"


def test_a_platform_codec_is_a_text_file_opened_without_its_encoding():
    # 754.txt (IBM/Grapher#4): json.load of the dataset on Windows, 'charmap'
    found = lead("754.txt")
    assert found.id == "log.text_encoding" and found.details["confidence"] == "likely"
    assert "encoding='utf-8'" in found.fix and "platform's default codec" in found.summary
    # utf-8 itself failing: the file is not UTF-8 (or not text), not the platform's codec
    found = explained(
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x92 in position 7047: invalid start byte\n"
    )
    assert found.id == "log.text_encoding" and "platform" not in found.summary
    # encoding text, not decoding it, is another error
    found = explained("UnicodeEncodeError: 'charmap' codec can't encode character '\\u2713' in position 0\n")
    assert found.id != "log.text_encoding"


def test_a_refused_download_names_the_server_answer():
    # 738.txt (Cadene/pretrained-models.pytorch#9): the line alone, likely
    found = lead("738.txt")
    assert found.id == "log.download_refused" and found.details["confidence"] == "likely"
    assert "URL" in found.fix and "403" in found.summary
    # beside torch.hub's download line: certain
    found = explained(
        'Downloading: "https://download.pytorch.org/models/vgg19-dcbb9e9d.pth" to /root/.cache/torch/hub/'
        "checkpoints/vgg19-dcbb9e9d.pth\nurllib.error.HTTPError: "
        + template("system:urllib-http-error", "404", "Not Found")
        + "\n"
    )
    assert found.id == "log.download_refused" and found.details["confidence"] == "certain"
    # a server error is not a refusal of the URL
    found = explained("urllib.error.HTTPError: HTTP Error 503: Service Unavailable\n")
    assert found.id != "log.download_refused"


def test_invalid_load_key_is_a_file_that_is_not_a_checkpoint():
    # 741.txt (SvipRepetitionCounting/TransRAC#4): the prose line alone, likely
    found = lead("741.txt")
    assert found.id == "log.checkpoint_file_invalid" and found.details["confidence"] == "likely"
    assert "download" in found.fix
    # under torch.load's frames, an HTML page: certain, and the byte says what it is
    found = explained(
        '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1258, in _legacy_load\n'
        "    magic_number = pickle_module.load(f, **pickle_load_args)\n"
        "_pickle.UnpicklingError: " + template("system:pickle-invalid-load-key", "<") + "\n"
    )
    assert found.id == "log.checkpoint_file_invalid" and found.details["confidence"] == "certain"
    assert "HTML" in found.summary
    # pickle's other complaint, a stream cut short, is not this kind
    found = explained("_pickle.UnpicklingError: pickle data was truncated\n")
    assert found.id != "log.checkpoint_file_invalid"


def test_data_ptr_of_a_storage_without_data_is_the_saving_library():
    # 743.txt (huggingface/transformers#36436): saving after tensor-parallel training
    found = lead("743.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "transformers" in found.fix and "full_tensor" in found.fix
    found = explained(
        "RuntimeError: " + template("torch_native:storage-data-ptr-invalid-python-storage") + "\n"
    )
    assert found.id == "log.library_version_bug" and "4.37.3" in found.fix
    # another storage error (a resize of a storage that cannot be resized) is not this reading
    found = explained("RuntimeError: Trying to resize storage that is not resizable\n")
    assert "data pointer" not in found.summary
