"""The newest samples' train misses that a message's own source explains in general (SAMPLING.md, the
hundred-and-thirtieth to thirty-third samples): a fast tokenizer's OverflowError on a negative id
(kinds/decode_ids.py), wandb's refusal to change a config key (kinds/experiment_trackers.py), Kaldi finding no free
GPU (kinds/gpus.py). The real logs of the corpus's train half, and lines from the same sources that are not those
failures."""

from pathlib import Path

import pytest

from torchdoctor.explain.diagnose import explain

CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


@pytest.mark.parametrize(
    ("name", "kind", "said", "confidence"),
    [
        # the OverflowError and Kaldi's warning name no single cause: never certain
        ("6370.txt", "log.decode_ignore_index", "-100", "likely"),  # neulab/knn-transformers#10
        ("6418.txt", "log.gpu_selection", "Kaldi found no free GPU", "likely"),  # idiap/pkwrap#10
        # wandb's refusal names the key and what allows the change (huggingface/accelerate#1796)
        (
            "6376.txt",
            "log.tracker_config_changed",
            "'checkpoint_path' from None to test_ckpt_path",
            "certain",
        ),
    ],
)
def test_a_real_log_is_read_by_its_messages_source(name, kind, said, confidence):
    lead = explain([str(CORPUS / name)])[0]
    assert lead.id == kind, lead.summary
    assert said in lead.summary
    assert lead.details["confidence"] == confidence


@pytest.mark.parametrize(
    "text",
    [
        # Rust's own error, printed by a Rust program (a proto decoder's test): no Python OverflowError
        "Error: node_levels.depth: out of range integral type conversion attempted",
        # Kaldi with --use-gpu=optional on a machine without GPUs: it runs on the CPU, nothing failed
        "WARNING ([5.5.888~1-d619]:SelectGpuId():cu-device.cc:197) No CUDA GPU detected; running on CPU since "
        "--use-gpu=optional specified.",
        # wandb's own advice when a run is resumed, not its refusal
        "wandb: WARNING Config item 'lr' was locked by 'sweep' (ignored update).",
    ],
)
def test_the_same_sources_other_lines_are_not_read_so(tmp_path, text):
    log = tmp_path / "console.log"
    log.write_text(text + "\n", encoding="utf-8")
    found = {f.id for f in explain([str(log)])}
    assert not found & {"log.decode_ignore_index", "log.tracker_config_changed", "log.gpu_selection"}, found
