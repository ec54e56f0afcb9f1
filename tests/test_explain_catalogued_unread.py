"""Catalogued messages explain did not read as their own kind (issue 19, session 44): the certainty audit
(benchmarks/certainty_audit.py --list-missed) renders every template as a log line; most of those it listed were
its own fill ("model" where the real line has a pid, a shape, a dtype), checked here on the real lines, and a few
were real gaps: argparse refusing a script's own option is the command line to change (launch_command, likely)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from explaining import explained, filled

from torchdoctor.explain.diagnose import explain

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import certainty_audit  # noqa: E402


def test_argparse_refusing_a_scripts_own_option_is_the_launch_command_likely():
    # Lib/argparse.py: parse_args prints the usage, then "<prog>: error: unrecognized arguments: ..."
    found = explained(
        "usage: train.py [-h] [--lr LR] [--epochs EPOCHS]\n"
        + filled("system:argparse-unrecognized-arguments", "train.py", "--batch_size 32")
        + "\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.launch_command", "likely"), found.summary
    assert "--batch_size 32" in found.summary and "--help" in found.fix


def test_hfargumentparser_refusing_a_scripts_own_option_is_the_launch_command_likely():
    # transformers/hf_argparser.py parse_args_into_dataclasses: the arguments no dataclass field takes
    found = explained(
        "ValueError: "
        + filled("transformers:arguments-not-used-by-hfargumentparser", "['--lora_rank', '8']")
        + "\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.launch_command", "likely"), found.summary
    assert "HfArgumentParser" in found.fix


def test_argparse_refusing_the_launchers_local_rank_stays_local_rank_argument():
    found = explained(filled("system:argparse-unrecognized-arguments", "train.py", "--local-rank=0") + "\n")
    assert found.id == "log.local_rank_argument", found.summary


def test_argparse_refusing_a_notebook_kernels_arguments_stays_argparse_in_notebook():
    found = explained(
        filled(
            "system:argparse-unrecognized-arguments",
            "ipykernel_launcher.py",
            "-f /root/.local/share/jupyter/runtime/kernel-8f3c.json",
        )
        + "\n"
    )
    assert found.id == "log.argparse_in_notebook", found.summary


def test_a_notebook_kernels_arguments_are_not_also_read_as_the_scripts_command_line():
    # ipykernel (and VS Code's --f=) hand the kernel's connection file to the script's parse_args: not an option
    # of the script's command line to fix, no second finding saying so (its fix named torchrun and the kernel)
    for args in (
        "-f /root/.local/share/jupyter/runtime/kernel-8f3c.json",
        "--f=/home/u/.local/share/jupyter/runtime/kernel-v2-3081a9.json",
    ):
        text = filled("system:argparse-unrecognized-arguments", "ipykernel_launcher.py", args) + "\n"
        found = explain(["-"], stdin=io.BytesIO(text.encode()))
        assert "log.launch_command" not in [f.id for f in found], [f.summary for f in found]


def test_hfargumentparser_refusing_a_training_arguments_field_of_another_release_names_the_release():
    # TrainingArguments' fields are the installed transformers' (api_keywords.tsv): evaluation_strategy was
    # dropped for eval_strategy, accelerator_config came later
    found = explained(
        "ValueError: "
        + filled("transformers:arguments-not-used-by-hfargumentparser", "['--evaluation_strategy', 'steps']")
        + "\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.launch_command", "likely"), found.summary
    assert "TrainingArguments field only up to transformers" in found.summary, found.summary
    assert "--eval_strategy" in found.fix and "pip show transformers" in found.fix, found.fix
    later = explained(
        "ValueError: "
        + filled("transformers:arguments-not-used-by-hfargumentparser", "['--accelerator_config', 'a.json']")
        + "\n"
    )
    assert "first in transformers" in later.summary and "transformers>=" in later.fix, later.fix
    # a script's own field, and a dashed spelling (not the field bf16 it starts with)
    for args in ("['--lora_rank', '8']", "['--bf16-full-eval']"):
        own = explained(
            "ValueError: " + filled("transformers:arguments-not-used-by-hfargumentparser", args) + "\n"
        )
        assert "TrainingArguments field" not in own.summary and "pip show transformers" not in own.fix, (
            own.fix
        )


def test_an_arrow_formatted_map_returning_a_dict_is_the_map_function_output():
    # datasets/iterable_dataset.py (2.14.7-3.0.2): a map over an IterableDataset formatted as arrow
    found = explained(
        "TypeError: " + filled("datasets:provided-function-which-is-applied-to-4", "<class 'dict'>") + "\n"
    )
    assert found.id == "log.map_function_output", found.summary
    assert "pyarrow.Table" in found.summary and "with_format" in found.fix


def test_a_storage_bucket_the_hub_does_not_have_is_a_missing_data_path_likely():
    # datasets/load.py: an hf://buckets/ path whose bucket is not there (or not readable with this token)
    found = explained(filled("datasets:bucket-doesn-exist-on-the-hub", "acme/raw-audio") + "\n")
    assert (found.id, found.details["confidence"]) == ("log.data_path_missing", "likely"), found.summary
    assert "storage bucket 'acme/raw-audio'" in found.summary and "HF_TOKEN" in found.fix


def test_the_audit_fills_a_pid_a_shape_and_a_dtype_as_real_lines_hold_them():
    assert certainty_audit.render("Out of memory: Killed process {} ({}) total-vm:{}kB").startswith(
        "Out of memory: Killed process 3 (3) total-vm:3kB"
    )
    assert certainty_audit.render("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})") == (
        "mat1 and mat2 shapes cannot be multiplied (3x3 and 3x3)"
    )
    assert (
        certainty_audit.render("expected scalar type {} but found {}")
        == "expected scalar type Float but found Half"
    )


def test_the_real_lines_the_audit_now_fills_are_read_as_their_kind():
    # the kernel's OOM killer (mm/oom_kill.c), srun's task state, ATen's addmm shape check
    for line, kind in (
        (
            "Out of memory: Killed process 12345 (python) total-vm:98765432kB, anon-rss:45678912kB, file-rss:0kB",
            "worker_killed",
        ),
        ("srun: error: node001: task 3: Out Of Memory", "worker_killed"),
        ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)", "layer_input_size"),
    ):
        assert explained(line + "\n").id == f"log.{kind}", line
