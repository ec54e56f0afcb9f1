"""Library versions that disagree with the code, known from the released packages: the messages a library's older
releases raise and its newest does not (catalog/message_history.tsv, written by benchmarks/message_history.py
from the released wheels), and what `explain` says on an exception raised with one of them in that library's
frame: the release that stopped printing it, likely; and what it does not say (a version stated past that
release, a package the table does not read, a message raised by the project's own code). Nothing is downloaded
here: the generator is tried on wheels made in the test."""

from __future__ import annotations

import sys
from pathlib import Path

from explaining import explained, leads_with, made_wheel

from torchdoctor.explain.kinds import message_history

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import message_history as generator  # noqa: E402

SITE = "/usr/local/lib/python3.10/dist-packages"


def raised_in(path: str, code: str, line: str, above: str = "") -> str:
    """A run whose train.py calls into ``path``, which runs ``code`` and raises ``line``."""
    return (
        above + "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 58, in main\n'
        "    trainer.train()\n"
        f'  File "{path}", line 412, in __init__\n'
        f"    {code}\n"
        f"{line}"
    )


# --- the generator, on wheels made here -----------------------------------------------------------------------


def test_a_release_reads_its_own_raise_and_assert_messages_not_its_tests(tmp_path):
    wheel = made_wheel(
        tmp_path,
        "pkg-1.0-py3-none-any.whl",
        {
            "pkg/trainer.py": (
                "def train(steps, plan):\n"
                "    assert steps > 0, f'The number of training steps must be positive, got {steps}'\n"
                "    if plan is None:\n"
                "        raise ValueError('You passed no sharding plan to the trainer, pass one of ' + str(PLANS))\n"
                "    raise KeyError(plan)\n"
            ),
            "pkg/tests/test_trainer.py": "raise ValueError('this test message is never read by the table')\n",
        },
    )
    generator.FOLDERS["pkg"] = ("pkg/",)
    try:
        messages = generator.read_release("pkg", wheel)
    finally:
        del generator.FOLDERS["pkg"]
    assert messages == {
        "The number of training steps must be positive, got {}": "pkg/trainer.py",
        "You passed no sharding plan to the trainer, pass one of {}": "pkg/trainer.py",
    }


def test_a_message_the_newest_release_dropped_is_a_row_with_its_first_last_and_gone():
    dropped = "Gradient accumulation is not supported with pipeline parallel engines"
    kept = "The model must be prepared before the optimizer is created here"
    releases = [
        ("1.0.3", {kept: "pkg/a.py"}),
        ("1.1.2", {kept: "pkg/a.py", dropped: "pkg/engine.py"}),
        ("1.2.0", {kept: "pkg/a.py", dropped: "pkg/engine.py"}),
        ("1.3.1", {kept: "pkg/a.py"}),
    ]
    assert generator.changes(releases) == [("1.1.2", "1.2.0", "1.3.1", "pkg/engine.py", dropped)]


def test_a_reworded_message_and_one_gone_for_a_while_are_no_rows():
    old = "Checkpoint sharding is only supported with the torch backend, got {}"
    reopened = "Checkpoint sharding is only supported with torch or gloo backends ({})"
    reworded = "You passed packing=False but no dataset text field or formatting function"
    rewritten = "Either a dataset text field or a formatting function must be passed"
    back = "Mixed precision needs a GPU with compute capability of at least seven"
    releases = [
        ("0.1.0", {old: "pkg/c.py", reworded: "pkg/t.py", back: "pkg/m.py"}),
        ("0.2.0", {reopened: "pkg/c.py", rewritten: "pkg/t.py"}),
        ("0.3.0", {reopened: "pkg/c.py", rewritten: "pkg/t.py", back: "pkg/m.py"}),
        ("0.4.0", {reopened: "pkg/c.py", rewritten: "pkg/t.py"}),
    ]
    assert generator.changes(releases) == []


# --- the committed table --------------------------------------------------------------------------------------


def test_the_table_holds_only_messages_the_newest_release_read_no_longer_raises():
    table = message_history.load()
    assert {"transformers", "accelerate", "deepspeed", "trl", "pytorch_lightning", "peft"} <= set(table)
    for package, (releases, rows) in table.items():
        assert rows, package
        for row in rows:
            assert row.gone in releases and row.gone != releases[0], row
            assert releases.index(row.first) <= releases.index(row.last) < releases.index(row.gone), row


# --- what explain says ----------------------------------------------------------------------------------------

FSDP_MIXED = "Mixed precision is currently not supported for FSDP. Please set `mixed_precision` to `no`."
ACCELERATE_STATE = f"{SITE}/accelerate/state.py"


def test_a_message_only_older_accelerate_raises_names_the_release_that_dropped_it_likely():
    row = message_history.find("accelerate", FSDP_MIXED)
    assert (row.last, row.gone, row.file) == ("0.10.0", "0.11.0", "accelerate/state.py")
    found = leads_with(
        raised_in(
            ACCELERATE_STATE,
            "raise ValueError(",
            f"ValueError: {FSDP_MIXED}",
            above="[pip3] accelerate==0.10.0\n",
        ),
        "library_version_bug",
        "likely",
        [
            "accelerate 0.10.0 in this log",
            "older than 0.11",
            "pip install -U 'accelerate>=0.11'",
            "accelerate/state.py",
        ],
    )
    assert found.details["package"] == "accelerate"
    assert "log.dependency_version" in found.details["alternatives"]


def test_the_same_message_quoted_alone_is_read_too_likely():
    leads_with(f"ValueError: {FSDP_MIXED}", "library_version_bug", "likely", ["accelerate>=0.11"])


def test_a_version_stated_past_the_release_that_dropped_it_rules_the_reading_out():
    text = raised_in(
        ACCELERATE_STATE,
        "raise ValueError(",
        f"ValueError: {FSDP_MIXED}",
        above="[pip3] accelerate==0.11.0\n",
    )
    found = explained(text + "\n")
    assert found.id != "log.library_version_bug", found.summary
    assert "0.11" not in found.fix


def test_the_message_raised_by_a_package_the_table_does_not_read_or_by_the_project_is_not_read():
    for path in (f"{SITE}/fsdp_helpers/state.py", "/home/ana/project/fsdp_setup.py"):
        found = explained(raised_in(path, "raise ValueError(", f"ValueError: {FSDP_MIXED}") + "\n")
        assert found.id != "log.library_version_bug", (path, found.summary)


def test_a_message_the_newest_release_still_raises_is_not_read():
    # accelerate/state.py, every release from 0.10 to the newest read
    still = "All values in the dictionary must have the same length"
    assert message_history.find("accelerate", still) is None
    found = explained(raised_in(ACCELERATE_STATE, "raise ValueError(", f"ValueError: {still}") + "\n")
    assert found.id != "log.library_version_bug", found.summary


# --- api_history.tsv widened: the BERT package before transformers, segmentation_models_pytorch -----------------


def test_pytorch_pretrained_bert_names_its_0_6_2_optimisers():
    leads_with(
        "ImportError: cannot import name 'WarmupLinearSchedule' from 'pytorch_pretrained_bert.optimization' "
        f"({SITE}/pytorch_pretrained_bert/optimization.py)",
        "dependency_version",
        "certain",
        ["pytorch_pretrained_bert>=0.6.2"],
    )


def test_a_name_every_pytorch_pretrained_bert_release_has_is_not_read_as_a_release():
    found = explained(
        "ImportError: cannot import name 'BertAdam' from 'pytorch_pretrained_bert.optimization' "
        f"({SITE}/pytorch_pretrained_bert/optimization.py)\n"
    )
    assert "came" not in found.summary and "was removed" not in found.summary, found.summary


def test_segmentation_models_pytorch_0_3_dropped_its_decoder_modules_from_the_package():
    leads_with(
        "AttributeError: module 'segmentation_models_pytorch' has no attribute 'unet'",
        "dependency_version",
        "certain",
        ["by segmentation_models_pytorch 0.3.0", "segmentation_models_pytorch==0.2.1"],
    )


def test_a_name_the_table_does_not_know_of_a_package_outside_its_libraries_is_named_not_questioned():
    # the generic reading of CPython's line for numpy, segmentation_models_pytorch (api_history.IN_TABLE)
    for line, words in (
        ("AttributeError: module 'segmentation_models_pytorch' has no attribute 'utils'", "has no utils"),
        ("ModuleNotFoundError: No module named 'numpy.foobar'", "has no module numpy.foobar"),
    ):
        found = leads_with(line, "dependency_version", "likely", [words])
        assert "?" not in found.summary, found.summary


def test_torchvision_0_12_removed_scale_and_its_own_warning_named_resize():
    leads_with(
        "AttributeError: module 'torchvision.transforms' has no attribute 'Scale'",
        "dependency_version",
        "certain",
        ["removed in torchvision 0.12", "use torchvision.transforms.Resize instead", "torchvision<0.12"],
    )


def test_a_transform_every_torchvision_release_has_is_not_given_a_replacement():
    found = explained("AttributeError: module 'torchvision.transforms' has no attribute 'Resized'\n")
    assert "Resize instead" not in found.fix, found.fix
