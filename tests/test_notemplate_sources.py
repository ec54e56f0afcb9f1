"""benchmarks/notemplate_sources.py: where a missed log holding no catalog template has its decisive line from;
and the torch files its sort named that the catalog now reads (torch/multiprocessing, torch/cuda), their
templates filled as the source fills them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from torchdoctor.explain.catalog import load
from torchdoctor.explain.diagnose import explain

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import catalog_coverage  # noqa: E402
import notemplate_sources  # noqa: E402


def _sorted(text: str) -> tuple[str, str]:
    return notemplate_sources.sort_line(*notemplate_sources.decisive(text))


def test_a_package_the_catalog_does_not_read_is_named_from_the_innermost_frame():
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        '  File "/env/lib/python3.10/site-packages/bitsandbytes/cextension.py", line 20, in <module>\n'
        "RuntimeError: CUDA Setup failed despite GPU being available.\n"
    )
    assert _sorted(log) == ("package", "bitsandbytes")


def test_a_read_source_s_file_is_an_unread_part_and_an_egg_s_folder_is_seen_through():
    log = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/env/site-packages/deepspeed-0.16.3-py3.10.egg/deepspeed/moe/sharded_moe.py", line 9, in f\n'
        "[rank0]: ValueError: bad gate\n"
    )
    assert _sorted(log) == ("unread part", "deepspeed/moe/sharded_moe.py")


def test_cpython_s_own_wording_from_the_script_s_frame_is_python_s_and_a_bare_builtin_error_is_unknown():
    own = "Traceback (most recent call last):\n  File \"train.py\", line 3, in f\nTypeError: 'int' object is not iterable\n"
    assert _sorted(own) == ("python/os", "")
    assert _sorted("RuntimeError: something went wrong in a kernel\n") == ("unknown", "bare exception")
    mine = 'Traceback (most recent call last):\n  File "train.py", line 3, in f\nValueError: bad config\n'
    assert _sorted(mine) == ("user code", "")


def test_a_launcher_s_wrapper_is_passed_over_and_a_cut_traceback_names_the_package_it_stopped_in():
    wrapped = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\nKilled\n"
    assert _sorted(wrapped) == ("python/os", "")
    cut = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/accelerate/data_loader.py", line 451, in __iter__\n'
        "    current_batch = next(dataloader_iter)\n"
    )
    assert _sorted(cut) == ("no error", "cut below accelerate")
    assert _sorted("I get RuntimeError: oops when I train\n") == ("no error", "prose")


def test_totals_name_no_file_and_a_folder_without_its_table_is_one_line(tmp_path, capsys):
    rows = [("123.txt", "cuda_oom", "package", "vllm", "RuntimeError: x")]
    totals = notemplate_sources.report(rows, totals=True)
    assert "123.txt" not in totals and "vllm" in totals and "package         1" in totals
    assert "123.txt" in notemplate_sources.report(rows, totals=False)
    assert notemplate_sources.main([str(tmp_path)]) == 2
    assert "has no SOURCES.md" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("ident", "printed", "lead", "confidence"),
    [
        (
            "torch:process-terminated-with-exit-code",
            "process 1 terminated with exit code 1",
            "child_failed",
            "likely",
        ),
        # a rank killed by a signal: that it was killed is the message itself
        (
            "torch:process-terminated-with-signal",
            "process 3 terminated with signal SIGKILL",
            "worker_killed",
            "certain",
        ),
    ],
)
def test_mp_spawn_s_summaries_read_from_spawn_py_map_to_a_failed_child(ident, printed, lead, confidence):
    row = next(t for t in load()["torch"] if t.id == ident)
    assert row.file == "torch/multiprocessing/spawn.py" and row.kind == "child_failed"
    assert catalog_coverage.kind_of(row.text) == "child_failed"
    log = f"torch.multiprocessing.spawn.ProcessExitedException: {printed}\n"
    found = explain(["-"], stdin=io.BytesIO(log.encode()))[0]
    assert found.id == f"log.{lead}" and found.details["confidence"] == confidence


def test_spawn_s_header_above_a_rank_s_own_traceback_is_read_but_names_no_kind():
    row = next(t for t in load()["torch"] if t.id == "torch:process-terminated-with-the-following-error")
    assert row.file == "torch/multiprocessing/spawn.py" and row.kind == ""


# lightning/pytorch/trainer/configuration_validator.py and lightning/pytorch/callbacks, as Lightning 2.6 prints them
LIGHTNING = [
    (
        "lightning:no-training-step-method-defined-lightning",
        "lightning.fabric.utilities.exceptions.MisconfigurationException: No `training_step()` method defined. "
        "Lightning `Trainer` expects as minimum a `training_step()`, `train_dataloader()` and "
        "`configure_optimizers()` to be defined.",
        "requirements",
    ),
    (
        "lightning:no-method-defined-to-run-trainer",
        "lightning.fabric.utilities.exceptions.MisconfigurationException: No `test_step()` method defined to run "
        "`Trainer.test`.",
        "trainer.test(...)",
    ),
    (
        "lightning:automatic-gradient-accumulation-is-not-supported",
        "lightning.fabric.utilities.exceptions.MisconfigurationException: Automatic gradient accumulation is not "
        "supported for manual optimization. Remove `Trainer(accumulate_grad_batches=4)` or switch to automatic "
        "optimization.",
        "self.clip_gradients",
    ),
    (
        "lightning:the-batch-size-finder-is-not",
        "lightning.fabric.utilities.exceptions.MisconfigurationException: The Batch size finder is not supported "
        "with distributed strategies.",
        "devices=1",
    ),
    (
        "lightning:swa-does-not-currently-support-sharded",
        "lightning.fabric.utilities.exceptions.MisconfigurationException: SWA does not currently support sharded "
        "models.",
        "strategy='ddp'",
    ),
]


@pytest.mark.parametrize(("ident", "printed", "fix"), LIGHTNING)
def test_lightning_s_loop_checks_and_callbacks_read_from_their_files_name_the_refusal_and_its_fix(
    ident, printed, fix
):
    row = next(t for t in load()["lightning"] if t.id == ident)
    assert row.file.startswith(
        ("lightning/pytorch/trainer/configuration_validator.py", "lightning/pytorch/callbacks/")
    )
    assert row.kind == "lightning_call_refused" == catalog_coverage.kind_of(row.text)
    found = explain(["-"], stdin=io.BytesIO(f"{printed}\n".encode()))[0]
    assert found.id == "log.lightning_call_refused"
    assert fix in found.fix
    # mapped from the source alone (no real log of this kind shows it yet): likely
    assert found.details["confidence"] == "likely"


def test_a_missing_training_step_stays_likely_as_it_names_another_release_too():
    # pytorch_lightning 1.x printed the same words; the project may be written for another release
    printed = LIGHTNING[0][1].replace("lightning.fabric", "pytorch_lightning")
    found = explain(["-"], stdin=io.BytesIO(f"{printed}\n".encode()))[0]
    assert found.id == "log.lightning_call_refused" and found.details["confidence"] == "likely"
    assert "another Lightning release" in found.fix


def test_lightning_s_removed_epoch_end_hooks_read_from_the_validator_map_to_a_release_change():
    row = next(t for t in load()["lightning"] if t.id == "lightning:support-for-training-epoch-end-has")
    assert row.file == "lightning/pytorch/trainer/configuration_validator.py"
    assert row.kind == "dependency_version"


def test_the_standard_library_s_exception_is_python_s_and_totals_print_packages_not_files():
    assert _sorted("sqlite3.DatabaseError: database disk image is malformed\n") == ("python/os", "sqlite3")
    rows = [
        ("1.txt", "x", "unread part", "torch/cuda/__init__.py", "RuntimeError: y"),
        ("2.txt", "x", "partly held", "torch_native:some-template", "RuntimeError: z"),
    ]
    totals = notemplate_sources.report(rows, totals=True)
    assert "__init__" not in totals and "some-template" not in totals
    assert "  torch " in totals and "  torch_native " in totals


def test_a_module_s_dotted_path_is_no_partly_held_piece_of_its_messages():
    # train 007.txt ends in torchrun's ChildFailedError class path, which begins like SignalException's message
    # ("torch.distributed.elastic.multiprocessing.api.SignalException: Process {} got signal: {}")
    pieces = notemplate_sources.literal_pieces()
    assert not notemplate_sources.partly(
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError\n", pieces
    )
    # a message's own words still are: train 721.txt, Lightning's EarlyStopping message cut at its first full stop
    cut = "Early stopping conditioned on metric `val_loss` which is not available\n"
    assert notemplate_sources.partly(cut, pieces).id == "lightning:early-stopping-conditioned-on-metric-which"


def test_a_partly_held_message_is_sorted_by_how_explain_took_it():
    found = load()["lightning"]
    early = next(t for t in found if t.id == "lightning:early-stopping-conditioned-on-metric-which")
    assert notemplate_sources.partly_sort(early, [], read=False) == "no anchor"
    assert notemplate_sources.partly_sort(early, ["which is not available"], read=False) == "anchor, not read"
    assert notemplate_sources.partly_sort(early, [], read=True) == "read"
    unkinded = early._replace(kind="")
    assert notemplate_sources.partly_sort(unkinded, [], read=False) == "no recogniser"
    assert notemplate_sources.partly_totals([("1.txt", "k", early, "", "", [], [], "read")]) == (
        "partly held, as explain took them: read 1, anchor, not read 0, no anchor 0, no recogniser 0"
    )
