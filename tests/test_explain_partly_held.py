"""`explain` on a catalog message present only in part: cut short, behind a paste's or a wrapper's words, or without
its final full stop (benchmarks/notemplate_sources.py --partly sorts the train misses holding one so).

Where the anchor is the message's stable part and survives the cut, the message is read; where the part a log
keeps is worded alike by another library, it is not: TensorFlow's Keras prints the same first sentence as
Lightning's EarlyStopping, so that sentence alone is no evidence of Lightning's callback.
"""

from __future__ import annotations

from pathlib import Path

from torchdoctor.explain.diagnose import explain


def _lead(tmp_path: Path, text: str) -> str:
    log = tmp_path / "pasted.log"
    log.write_text(text, encoding="utf-8")
    return explain([str(log)])[0].id


def test_a_message_cut_after_its_anchor_or_behind_a_paste_s_words_is_read(tmp_path):
    # train 179.txt: accelerate's wrapper words before DDP's refusal, cut before ", but got device_ids ..."
    cut = (
        "accelerator.prepare() error: DistributedDataParallel device_ids and output_device arguments only work "
        "with single-device/multiple-device GPU modules or CPU modules\n"
    )
    assert _lead(tmp_path, cut) == "log.device_map_distributed"
    # train 3579.txt: the operator's name before DTensor's message, cut before its link
    prefixed = (
        "RuntimeError: aten._foreach_mul_.Scalar: got mixed torch.Tensor and DTensor, need to convert all "
        "torch.Tensor to DTensor before calling distributed operators!\n"
    )
    assert _lead(tmp_path, prefixed) == "log.dtensor_mixed_operands"
    # train 2970.txt: the DataLoader worker's message pasted without its final full stop
    assert (
        _lead(tmp_path, "ERROR: Unexpected segmentation fault encountered in worker\n") == "log.worker_crash"
    )


def test_early_stopping_s_first_sentence_alone_is_not_lightning_s_callback(tmp_path):
    # Keras' EarlyStopping warning (ReDASers/PhishBench#158) opens with Lightning's first sentence word for word
    keras = (
        "WARNING:tensorflow:Early stopping conditioned on metric `val_loss` which is not available. Available "
        "metrics are: loss,accuracy\n"
    )
    assert _lead(tmp_path, keras) == "log.unrecognised"
    # Lightning's message cut at that sentence's end (train 721.txt, an issue's title) is read, likely, since
    # session 45 (tests/test_explain_unrecognised_sources.py): Keras' own second sentence keeps its line out
    # and whole, with Lightning's own second sentence, it is
    whole = (
        "RuntimeError: Early stopping conditioned on metric `val_loss` which is not available. Pass in or modify "
        "your `EarlyStopping` callback to use any of the following: `train_loss`\n"
    )
    assert _lead(tmp_path, whole) == "log.checkpoint_monitor_missing"


def test_pip_s_build_header_without_the_compiler_s_error_below_it_is_not_a_build_diagnosis(tmp_path):
    # train 2471.txt: pip's header, its command line, and no compiler error: what failed in the build is not there
    header = (
        "ERROR: Command errored out with exit status 1:\n"
        "     command: 'python' -c 'import sys, setuptools' egg_info --egg-base 'pip-egg-info'\n"
    )
    assert _lead(tmp_path, header) == "log.unrecognised"
