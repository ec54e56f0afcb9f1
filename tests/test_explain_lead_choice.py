"""Which finding leads when a log holds more than one known kind: the one read on the exception that stopped the run
leads a message printed beside it (a warning above the traceback), whatever their order in the log and however sure
each is of its own message."""

from __future__ import annotations

import io

from explaining import CORPUS, lead, template

from torchdoctor.explain.diagnose import explain


def _findings(text: str) -> list:
    return explain(["-"], stdin=io.BytesIO(text.encode()))


def test_the_exception_that_stopped_the_run_leads_a_warning_printed_above_its_traceback():
    # 3224.txt (huggingface/diffusers#4817): xformers' warning that its extensions do not fit the torch installed
    # (line 2), then the traceback that stopped the script: the conversion script passing a keyword the function
    # no longer takes (line 11)
    found = lead("3224.txt")
    assert found.id == "log.library_version_bug"
    assert "checkpoint_path_or_dict" in found.summary + found.fix
    ids = [f.id for f in _findings((CORPUS / "3224.txt").read_text(encoding="utf-8"))]
    assert ids[:2] == ["log.library_version_bug", "log.extension_import"]  # the warning is still said, second


def test_a_warning_of_another_package_above_another_known_error_does_not_lead_either():
    # the same class, worded otherwise: bitsandbytes' import warning (its cextension.py) above a traceback whose
    # exception is transformers refusing a keyword it removed (CPython 3.10+'s message)
    text = (
        "/usr/local/lib/python3.10/dist-packages/bitsandbytes/cextension.py:34: UserWarning: "
        + template("build_tools:the-installed-version-of-bitsandbytes-was")
        + '\n  warn("The installed version of bitsandbytes was compiled without GPU support. "\n'
        "Traceback (most recent call last):\n"
        '  File "/content/train.py", line 40, in <module>\n'
        '    args = TrainingArguments(output_dir="out", evaluation_strategy="epoch")\n'
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'\n"
    )
    found = _findings(text)
    assert [f.id for f in found[:2]] == ["log.dependency_version", "log.extension_import"]
    assert "evaluation_strategy" in found[0].summary
    assert "the run stopped on" not in found[0].summary  # it is that error: nothing else to name beside it


def test_a_kind_read_above_the_exception_still_leads_where_it_explains_that_exception():
    # near-miss: CUDA's bounds assertion printed above "device-side assert triggered" is that error's cause (the
    # kind absorbs the vaguer one), not a message beside it: it keeps the lead
    text = (
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [5,0,0], thread: "
        "[64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 88, in <module>\n'
        "    out = model(input_ids)\n"
        '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/sparse.py", line 162, in forward\n'
        "    return F.embedding(\n"
        "RuntimeError: CUDA error: device-side assert triggered\n"
    )
    assert _findings(text)[0].id == "log.embedding_index_range"
