"""A traceback rich printed in its box, or IPython in a notebook, reads as Python's own: the frames, the user's line
and its code (explain/traceback_styles.py). For IPython: real notebook logs of the corpus's train half. Recordings at 60 columns with locals and at 80 without (tests/fixtures/rich_traceback/
SOURCES.md), and a real torchrun job whose rank 1 fails
under accelerate's rich traceback, its console recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it
again)."""

import contextlib
from pathlib import Path

import pytest
from helpers import torchrun_two_ranks
from recorded import recorded

from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.traceback_styles import as_python, unboxed, whole_message
from torchdoctor.hang.source import is_library

HERE = Path(__file__).parent / "fixtures" / "rich_traceback"
CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


def frames(lines: list[str]) -> list[str]:
    return [line.strip() for line in unboxed(lines) if line.startswith("  File ")]


def test_a_narrow_boxed_traceback_with_locals_gives_every_frame_as_python_prints_it():
    lines = (HERE / "locals-60-columns.txt").read_text(encoding="utf-8").splitlines()
    read = frames(lines)
    assert [f.rsplit(", in ", 1)[1] for f in read] == [
        "<module>", "main", "training_step", "_wrapped_call_impl", "_call_impl", "forward",
    ]  # fmt: skip
    assert read[2].startswith('File "') and read[2].split('"')[1].endswith(
        "/very/long/directory/name/for/the/project/source/code/training/trainer_module_with_long_name.py"
    )
    assert "line 1778, in _wrapped_call_impl" in read[3] and "line 134, in forward" in read[5]
    assert len(unboxed(lines)) == len(lines)  # one line for one: line numbers still point into the log


def test_the_users_line_is_named_from_the_boxed_traceback():
    # (with its locals a traceback is longer than the 120 lines read above an exception: the plain one)
    lead = explain([str(HERE / "plain-80-columns.txt")])[0]
    assert lead.id == "log.layer_input_size", lead.summary
    assert lead.details["frame"].endswith("trainer_module_with_long_name.py:6 in training_step"), lead.details
    assert lead.details["code"] == "return model(batch).sum()"


def test_a_box_whose_top_was_cut_is_read_from_its_first_frame():
    lines = (HERE / "locals-60-columns.txt").read_text(encoding="utf-8").splitlines()
    cut = lines[lines.index(next(x for x in lines if "train_locals.py:13 in main" in x)) :]
    assert [f.rsplit(", in ", 1)[1] for f in frames(cut)][:2] == ["main", "training_step"]


def test_lines_without_a_box_are_left_as_they_are():
    lines = ['  File "train.py", line 3, in main', "    boom()", "│ not a traceback │"]
    assert unboxed(lines) == lines


RICH_JOB = """
import json, os
os.environ["ACCELERATE_ENABLE_RICH"] = "1"  # as a user exports it: accelerate then installs rich's traceback
import accelerate  # noqa: F401
import torch.distributed as dist


def load_config(rank):
    with open(f"rank{rank}.json") as f:  # only rank 0's file exists
        return json.load(f)


def main():
    config = load_config(int(os.environ["RANK"]))
    dist.init_process_group("gloo")
    print(config)


main()
"""


def run(folder: Path) -> str:
    (folder / "rank0.json").write_text('{"lr": 0.1}')
    with contextlib.chdir(folder):  # the ranks open their config from the folder they start in
        done = torchrun_two_ranks(folder, RICH_JOB)
    assert done.returncode != 0, (done.stdout + done.stderr)[-2000:]
    return done.stdout + done.stderr


RECORDED_RUNS = {"rich_traceback_under_accelerate": run}


def test_a_rank_that_failed_under_accelerates_rich_traceback_is_named_with_its_line(tmp_path):
    console = tmp_path / "console.txt"
    console.write_text(recorded("rich_traceback_under_accelerate"), encoding="utf-8")
    # rich's box, not Python's traceback
    assert "Traceback (most recent call last) ─" in console.read_text(encoding="utf-8")
    lead = explain([str(console)])[0]
    assert lead.id == "log.data_path_missing", lead.summary
    assert lead.details["ranks"] == "1"
    assert lead.details["frame"].endswith("train.py:9 in load_config"), lead.details


@pytest.mark.parametrize(
    ("log", "kind", "frame", "code"),
    [
        # IPython 8 in a notebook, accelerate's notebook_launcher refusing its call
        ("4024.txt", "log.trainer_arguments", "Cell In[27]:3 in <module>", "notebook_launcher(training_function, (model,))"),
        # IPython 7: the cell as <ipython-input-...>, the line number only on the marked code line
        ("573.txt", "log.half_unsupported_op", "<ipython-input-19-b4a82a9b573a>:3 in <module>", "torch.fft.rfft2(a, norm='backward')"),
        # (unrecognised before: its traceback unread, the release tables did not know where it was raised)
        ("1582.txt", "log.dependency_version", "<ipython-input-17-1a6f3e108a33>:6 in <module>", None),
    ],
)  # fmt: skip
def test_a_notebooks_traceback_names_the_cell_and_its_line(log, kind, frame, code):
    lead = explain([str(CORPUS / log)])[0]
    assert lead.id == kind, lead.summary
    assert (lead.details.get("frame"), lead.details.get("code")) == (frame, code), lead.details


def test_a_notebooks_traceback_cut_above_its_first_frame_names_no_line_of_the_users():
    # corpus train/273: the paste starts at the cell's marked line, its header cut; the one frame left is os.py's
    lead = explain([str(CORPUS / "273.txt")])[0]
    assert lead.id == "log.not_launched_distributed"
    assert "frame" not in lead.details
    lines = (CORPUS / "273.txt").read_text(encoding="utf-8").splitlines()
    assert [line for line in as_python(lines) if line.startswith("  File ")] == [
        '  File "~\\anaconda3\\envs\\pytorch-fast\\lib\\os.py", line 680, in _Environ.__getitem__'
    ]


def test_a_notebook_cell_is_the_users_code_and_frozen_modules_are_not():
    assert not is_library("<ipython-input-3-831f7004cefb>")
    assert is_library("<frozen importlib._bootstrap>") and is_library("<string>")
    # Windows: the standard library in a conda environment's (or the installation's) Lib folder; a project's own
    # lib folder stays the user's
    assert is_library("~\\anaconda3\\envs\\pytorch-fast\\lib\\os.py")
    assert is_library("C:\\Python311\\Lib\\multiprocessing\\pool.py")
    assert not is_library("C:\\Users\\me\\project\\lib\\utils.py")


def test_a_message_rich_wrapped_at_the_consoles_width_is_read_whole():
    # at 60 columns rich prints "RuntimeError: mat1 and mat2 shapes cannot be multiplied" and "(4x16 and 12x8)"
    lead = explain([str(HERE / "locals-60-columns.txt")])[0]
    assert lead.id == "log.layer_input_size", lead.summary
    assert "4x16 and 12x8" in lead.summary


def test_a_line_that_would_have_fitted_beside_the_message_is_not_joined_to_it():
    box = ["╭──── Traceback (most recent call last) ────╮", "│ train.py:3 in main │", "╰" + "─" * 42 + "╯"]
    # "Epoch" fits after the short message within 44 columns: rich would have put it there, so it is not the
    # message's continuation; "(4x16 and 12x8)" does not fit after the full line
    assert whole_message("ValueError: boom", box, ["Epoch 3 done"]) == ("ValueError: boom", 0)
    line = "RuntimeError: mat1 and mat2 shapes cannot be "  # 44 columns and a space, as rich leaves it
    assert whole_message(line, box, ["multiplied", "", "next"]) == (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied",
        1,
    )
    assert whole_message(line, ["no box above"], ["multiplied"]) == (line, 0)
