"""Misses of the train half read as classes, second round (helper T39): each class with its train log, a line
of a sibling template or another release's wording, and a near-miss that must not read as it.

- CPython before 3.8 shows the last line of a call written over several lines, so the class a refused keyword
  belongs to is not on the line shown (train 1576: ``period=0,`` under ModelCheckpoint's call): the one class of
  api_keywords.tsv whose releases differ on the keyword is named, only likely.
- A SyntaxError's location line (``File "train.py", line 40``, no function: CPython's print_exception) is its
  frame, so the source line under it is read; CPython's bare "invalid syntax" on a line of a newer Python's syntax
  (an f-string on 3.5, train 3779; ``:=`` before 3.8, ``match`` before 3.10) is the interpreter, only likely.
- torchvision 0.2.2 renamed its datasets' ``train_labels``/``train_data`` to ``targets``/``data``; CIFAR lost the
  old names, MNIST kept them behind a warning (torchvision/datasets/mnist.py): train 1933's
  "'CIFAR10' object has no attribute 'train_labels'", and the other way, ``targets`` on an older torchvision.
"""

from __future__ import annotations

import pytest
from explaining import explained, lead

pytestmark = pytest.mark.usefixtures("every_message_seen")


def _traceback(code: str, message: str, python: str = "3.7") -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 52, in <module>\n'
        "    main()\n"
        '  File "train.py", line 31, in main\n'
        f"    {code}\n"
        f"TypeError: {message}\n"
        f"(python{python})\n"
    )


# -- a keyword refused on the last line of a call ---------------------------------------------------------------


def test_the_train_log_of_a_call_shown_by_its_last_line_names_the_one_class_with_that_keyword():
    found = lead("1576.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "ModelCheckpoint(filepath=...)" in found.summary and "Python before 3.8" in found.summary
    assert "dirpath=" in found.fix


def test_another_class_and_keyword_on_a_closing_line_is_read_the_same_way():
    # Lightning's Trainer lost progress_bar_refresh_rate (api_keywords.tsv); Python 3.7 shows the call's last line
    found = explained(
        _traceback(
            "progress_bar_refresh_rate=20)",
            "__init__() got an unexpected keyword argument 'progress_bar_refresh_rate'",
        )
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "Trainer(progress_bar_refresh_rate=...)" in found.summary


@pytest.mark.parametrize(
    "code",
    [
        # the call is on the line shown, of a class no table has: the project's own
        "cb = SaveBest(filepath=out, period=0)",
        # an argument line, but a keyword several classes' releases differ on: no one class to name
        "evaluation_strategy='steps',",
    ],
    ids=["own-class-on-the-line", "keyword-of-several-classes"],
)
def test_a_call_line_that_does_not_point_to_one_class_is_not_given_one_near_miss(code):
    keyword = code.split("=")[0].split("(")[-1].strip()
    found = explained(_traceback(code, f"__init__() got an unexpected keyword argument '{keyword}'"))
    assert "ModelCheckpoint" not in found.summary and "TrainingArguments(" not in found.summary, found.summary


# -- a newer Python's syntax under CPython's bare "invalid syntax" ----------------------------------------------


def test_the_train_log_of_an_f_string_on_an_old_python_is_the_interpreter():
    found = lead("3779.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "Python 3.6 or newer" in found.summary and "an f-string" in found.summary
    assert "python3 --version" in found.fix


@pytest.mark.parametrize(
    ("source", "release"),
    [
        ("    if (n := len(batch)) > 4:", "3.8"),  # PEP 572 under Python 3.7
        ("    match cfg.optimizer:", "3.10"),  # PEP 634 under Python 3.9
        ("type Batch = dict[str, Tensor]", "3.12"),  # PEP 695 under Python 3.11
    ],
    ids=["walrus", "match", "type-alias"],
)
def test_each_newer_syntax_names_the_python_it_needs(source, release):
    text = f'  File "/home/ana/proj/train.py", line 12\n{source}\n        ^\nSyntaxError: invalid syntax\n'
    found = explained(text)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert f"Python {release} or newer" in found.summary and "train.py:12" in found.summary


@pytest.mark.parametrize(
    "text",
    [
        # a typo on a line of old syntax: the code's own mistake
        '  File "train.py", line 7\n    for x in range(10)\n                     ^\nSyntaxError: invalid syntax\n',
        # a Python that has f-strings says what is wrong inside one
        "  File \"train.py\", line 7\n    print(f'{x['a']}')\nSyntaxError: f-string: unmatched '['\n",
    ],
    ids=["typo", "f-string-error-of-a-new-python"],
)
def test_a_syntax_error_of_the_code_itself_is_not_the_interpreter_near_miss(text):
    found = explained(text)
    assert found.id != "log.dependency_version", found.summary


def test_a_syntax_errors_location_is_its_frame():
    found = explained(
        '  File "/srv/job/model.py", line 3\n    x = = 1\n      ^\nSyntaxError: invalid syntax\n'
    )
    assert "/srv/job/model.py:3" in found.summary and "x = = 1" in found.summary, found.summary


# -- torchvision datasets' attributes by another release's names ------------------------------------------------


def test_the_train_log_of_cifars_old_label_attribute_is_torchvisions_rename():
    found = lead("1933.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "renamed it targets" in found.summary and ".targets" in found.fix


def test_the_rename_is_certain_beside_torchvisions_own_warning():
    text = (
        "/usr/lib/python3.7/site-packages/torchvision/datasets/mnist.py:43: UserWarning: train_labels has been "
        "renamed targets\n"
        '  warnings.warn("train_labels has been renamed targets")\n'
        "Traceback (most recent call last):\n"
        '  File "semi.py", line 90, in <module>\n'
        "    x = unlabelled.test_data\n"
        "AttributeError: 'CIFAR100' object has no attribute 'test_data'\n"
    )
    found = explained(text)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain", found.summary
    assert "renamed it data" in found.summary


def test_the_new_names_on_an_older_torchvision_say_it_is_older():
    found = explained("AttributeError: 'FashionMNIST' object has no attribute 'targets'\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "older" in found.summary and "train_labels / test_labels" in found.summary


def test_a_subset_without_targets_is_not_torchvisions_rename_near_miss():
    # random_split's Subset never had targets: the dataset wrapped, not a release
    found = explained("AttributeError: 'Subset' object has no attribute 'targets'\n")
    assert "torchvision 0.2.2" not in found.summary, found.summary


# -- CPython 3.6's bare "cannot import name" quoted in a sentence ------------------------------------------------


def test_the_train_log_of_a_bare_import_error_in_a_sentence_names_the_package_it_names():
    found = lead("1729.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "transformers" in found.summary and "get_linear_schedule_with_warmup" in found.summary
    assert "pip install -U transformers" in found.fix


def test_another_package_named_in_the_sentence_is_the_one_read():
    found = explained(
        "After pip install peft==0.2.0 the script stops with ImportError: cannot import name 'LoraConfig' "
        "when it starts\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "peft" in found.summary and "LoraConfig" in found.summary


@pytest.mark.parametrize(
    "sentence",
    [
        # two packages named: the sentence does not say which one the name was imported from
        "With transformers 4.1 and accelerate 0.20 I get ImportError: cannot import name 'init_empty_weights' here",
        # none named: the project's own module, or a circular import
        "Running my script gives ImportError: cannot import name 'build_model' and I do not know why",
    ],
    ids=["two-packages", "no-package"],
)
def test_a_sentence_that_names_no_one_package_is_not_given_one_near_miss(sentence):
    found = explained(sentence + "\n")
    assert found.id != "log.dependency_version", found.summary


# -- a pin the index never offered -------------------------------------------------------------------------------


def test_the_train_log_of_a_pin_the_index_never_had_is_the_requirement():
    found = lead("1832.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "clip==1.0" in found.summary and "pip index versions clip" in found.fix
    assert found.details["alternatives"] == ["log.no_matching_wheel"]
    assert "git+https://" in found.fix


def test_the_releases_pip_lists_are_named():
    found = explained(
        "ERROR: Could not find a version that satisfies the requirement clip==1.0 (from versions: 0.0.1, 0.1.0, "
        "0.2.0)\nERROR: No matching distribution found for clip==1.0\n"
    )
    assert found.id == "log.dependency_version" and "it offers 0.0.1, 0.1.0, 0.2.0" in found.summary


def test_pip_1s_wording_of_the_same_is_read_the_same_way():
    # pip/index.py (pip 1.x): "No distributions matching the version for %s" under "Could not find a version"
    found = explained(
        "  Could not find a version that satisfies the requirement detectron==0.1.3 (from versions: 0.1.1)\n"
        "Cleaning up...\n"
        "No distributions matching the version for detectron==0.1.3\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert "detectron==0.1.3" in found.summary


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # a release the wheel table knows exists: a missing build for this Python, not the pin
        ("ERROR: No matching distribution found for numpy==1.26.4\n", "log.no_matching_wheel"),
        # torch's own packages are no_matching_wheel's
        ("ERROR: No matching distribution found for torch==2.3.1\n", "log.no_matching_wheel"),
    ],
    ids=["released-numpy", "torch"],
)
def test_a_pin_that_exists_is_a_missing_build_near_miss(text, kind):
    assert explained(text).id == kind


def test_a_package_the_index_has_no_release_of_leads_as_a_missing_name():
    found = explained(
        "ERROR: Could not find a version that satisfies the requirement imagenetv2-pytorch==0.1 (from versions: "
        "none)\nERROR: No matching distribution found for imagenetv2-pytorch==0.1\n"
    )
    assert found.id == "log.no_matching_wheel", found.summary


# -- Polars in DataLoader workers started with fork() ------------------------------------------------------------

_DATALOADER_FRAME = (
    '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1120, in __init__\n'
    "    w.start()\n"
)


def test_the_train_log_of_a_worker_stuck_inside_polars_is_the_fork():
    found = lead("4768.txt")
    assert found.id == "log.fork_unsafe_library" and found.details["confidence"] == "likely", found.summary
    assert "multiprocessing_context='spawn'" in found.fix


def test_polars_1_14s_own_warning_beside_a_dataloader_is_read():
    # py-polars/polars/__init__.py __install_postfork_hook (1.14-1.17), as multiprocessing's fork prints it
    found = explained(
        "/usr/lib/python3.11/multiprocessing/popen_fork.py:66: RuntimeWarning: Using fork() can cause Polars to "
        "deadlock in the child process.\n"
        "In addition, using fork() with Python in general is a recipe for mysterious\n"
        "deadlocks and crashes.\n"
        "  self.pid = os.fork()\n" + _DATALOADER_FRAME
    )
    assert found.id == "log.fork_unsafe_library" and found.details["confidence"] == "likely", found.summary
    assert "Polars warned" in found.summary


def test_polars_1_32s_categories_refusal_is_the_same_fork():
    # crates/polars-dtype/src/categorical/mod.rs ensure_same_categories (1.32+), raised in a worker
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 351, in '
        "_worker_loop\n"
        "    data = fetcher.fetch(index)\n"
        "polars.exceptions.SchemaError: Categories which should be equal have different backing objects.\n"
        "\n"
        "This is a known problem when combining Polars with multiprocessing using fork().\n"
    )
    assert found.id == "log.fork_unsafe_library", found.summary
    assert "categoricals" in found.summary


def test_polars_warning_without_a_dataloader_is_another_programs_near_miss():
    found = explained(
        "/usr/lib/python3.11/multiprocessing/popen_fork.py:66: RuntimeWarning: Using fork() can cause Polars to "
        "deadlock in the child process.\n  self.pid = os.fork()\n"
    )
    assert found.id != "log.fork_unsafe_library", found.summary


def test_polars_warning_beside_another_failure_is_not_the_lead_near_miss():
    found = explained(
        "/usr/lib/python3.11/multiprocessing/popen_fork.py:66: RuntimeWarning: Using fork() can cause Polars to "
        "deadlock in the child process.\n"
        + _DATALOADER_FRAME
        + "torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free.\n"
    )
    assert found.id == "log.cuda_oom", found.summary


# -- an assignment into an indexed region of another shape -------------------------------------------------------


def test_the_train_log_of_a_transposed_value_says_transpose():
    found = lead("2288.txt")
    assert found.id == "log.index_assign_shape" and found.details["confidence"] == "likely", found.summary
    assert "[128, 31564]" in found.summary and "transposed" in found.summary
    assert "value.t()" in found.fix


def test_a_masked_assignment_of_another_length_names_the_region():
    # the same check (make_index_put_iterator) for x[mask] = v
    found = explained(
        '  File "train.py", line 40, in step\n    labels[keep] = new_labels\n'
        "RuntimeError: shape mismatch: value tensor of shape [10] cannot be broadcast to indexing result of "
        "shape [7]\n"
    )
    assert found.id == "log.index_assign_shape", found.summary
    assert "[7]" in found.summary and "transposed" not in found.summary


def test_an_elementwise_size_mismatch_is_not_an_assignment_near_miss():
    found = explained(
        "RuntimeError: The size of tensor a (193) must match the size of tensor b (192) at non-singleton "
        "dimension 3\n"
    )
    assert found.id != "log.index_assign_shape", found.summary


# -- NCCL's unhandled system error from an old NCCL --------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        # torch 1.7-1.9's ProcessGroupNCCL.cpp (train 3778's words)
        "NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8",
        # torch 1.12's path and NCCL
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system "
        "error, NCCL version 2.10.3",
    ],
    ids=["2.7.8", "2.10.3"],
)
def test_an_old_nccls_system_error_names_a_bug_of_that_release(line):
    found = explained(line + "\n")
    assert found.id == "log.nccl_system_error" and found.details["confidence"] == "likely", found.summary
    assert "log.nccl_bug_upgrade" in found.details["alternatives"]


@pytest.mark.parametrize(
    "text",
    [
        # an NCCL torch 2.5 ships
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error, NCCL version 2.21.5\n",
        # the shm line decides it: the old release is beside the point
        "NCCL WARN Call to posix_fallocate failed : No space left on device\n"
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\n",
    ],
    ids=["current-nccl", "shm-line"],
)
def test_a_recent_nccl_or_the_shm_line_names_no_release_bug_near_miss(text):
    found = explained(text)
    assert found.id == "log.nccl_system_error", found.summary
    assert "log.nccl_bug_upgrade" not in found.details.get("alternatives", []), found.summary
