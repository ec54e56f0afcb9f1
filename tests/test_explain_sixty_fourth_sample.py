"""The sixty-fourth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3017-3066)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# trl/trainer/sft_trainer.py SFTTrainer.__init__ on TRL's main between #1530 and #1678 (April-May 2024):
#     model_init_kwargs = args.model_init_kwargs   (args still None)
def test_sfttrainer_without_args_on_trls_main_of_may_2024_reads_as_that_bug():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "sft.py", line 20, in <module>\n'
        "    trainer = SFTTrainer(model, train_dataset=dataset)\n"
        '  File "/usr/lib/python3.10/site-packages/trl/trainer/sft_trainer.py", line 159, in __init__\n'
        "    model_init_kwargs = args.model_init_kwargs\n"
        "AttributeError: 'NoneType' object has no attribute 'model_init_kwargs'\n",
        "library_version_bug",
        "likely",
    )
    assert "#1678" in found.summary and "pip install -U trl" in found.fix


def test_another_objects_model_init_kwargs_is_not_that_bug():
    found = explained("AttributeError: 'dict' object has no attribute 'model_init_kwargs'\n")
    assert found.id != "log.library_version_bug"


# ignite/handlers/__init__.py: Checkpoint and DiskSaver from 0.3.0; CPython 3.6 prints the name only, the
# statement typed at the interpreter's prompt names the module
def test_ignite_checkpoint_missing_at_the_prompt_reads_as_an_ignite_before_0_3():
    found = reads(
        ">>> from ignite.handlers import ModelCheckpoint, Checkpoint\n"
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        "ImportError: cannot import name 'Checkpoint'\n",
        "dependency_version",
        "likely",
    )
    assert "0.3.0" in found.summary and "pip install -U pytorch-ignite" in found.fix


# CPython 3.7+ names the module on the line itself
def test_ignite_disksaver_missing_from_ignite_handlers_reads_the_same():
    found = reads(
        "ImportError: cannot import name 'DiskSaver' from 'ignite.handlers' "
        "(/usr/lib/python3.8/site-packages/ignite/handlers/__init__.py)\n",
        "dependency_version",
        "likely",
    )
    assert "DiskSaver" in found.summary and "0.3.0" in found.summary


def test_a_checkpoint_of_another_module_is_not_ignites():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    from utils.handlers import Checkpoint\n"
        "ImportError: cannot import name 'Checkpoint'\n"
    )
    assert "ignite" not in found.summary


# ignite 0.3.0's engine.py: class Events(CallableEvents, Enum); before it class Events(Enum), not callable
def test_an_event_called_with_every_reads_as_an_ignite_before_0_3():
    found = reads(
        '  File "mnist.py", line 68, in run\n'
        "    @trainer.on(Events.EPOCH_COMPLETED(every=2))\n"
        "TypeError: 'Events' object is not callable\n",
        "dependency_version",
        "likely",
    )
    assert "0.3.0" in found.summary and "--pre pytorch-ignite" in found.fix


def test_another_events_class_not_callable_is_not_ignites():
    found = explained(
        '  File "game.py", line 12, in loop\n'
        "    handler = Events.KEYDOWN\n"
        "TypeError: 'Events' object is not callable\n"
    )
    assert "ignite" not in found.summary


# ignite/handlers/checkpoint.py Checkpoint.__init__ never took require_empty; DiskSaver.__init__ raises
#     ValueError(f"Files {matched} with extension '.pt' are already present in the directory {dirname}. If you
#     want to use this directory anyway, pass `require_empty=False`.")
def test_require_empty_given_to_checkpoint_names_disksaver():
    found = reads(
        "TypeError: Checkpoint.__init__() got an unexpected keyword argument 'require_empty'\n",
        "library_arguments",
        "likely",
    )
    assert "DiskSaver(" in found.fix and "require_empty=False" in found.fix


def test_disksaver_refusing_a_folder_with_checkpoints_is_certain():
    found = reads(
        "ValueError: Files ['model_checkpoint_10.pt'] with extension '.pt' are already present in the directory "
        "/tmp/models. If you want to use this directory anyway, pass `require_empty=False`.\n",
        "library_arguments",
        "certain",
    )
    assert "require_empty=False" in found.fix


def test_another_keyword_refused_by_checkpoint_is_not_read_so():
    found = explained("TypeError: Checkpoint.__init__() got an unexpected keyword argument 'save_dir'\n")
    assert "DiskSaver" not in found.fix


# fastai/callback/schedule.py: @patch def fit_one_cycle(self:Learner, ...), added when the module is imported
def test_a_tabular_learner_without_fit_one_cycle_says_to_import_fastai_tabular_all():
    found = reads(
        "AttributeError: 'TabularLearner' object has no attribute 'fit_one_cycle'\n",
        "patched_method_not_imported",
        "likely",
    )
    assert "fastai.callback.schedule" in found.summary and "from fastai.tabular.all import *" in found.fix


def test_fine_tune_missing_names_fastai_1_beside():
    found = reads(
        "AttributeError: 'Learner' object has no attribute 'fine_tune'\n",
        "patched_method_not_imported",
        "likely",
    )
    assert "log.dependency_version" in found.details["alternatives"]


def test_another_class_without_fit_one_cycle_is_not_fastais():
    found = explained("AttributeError: 'Trainer' object has no attribute 'fit_one_cycle'\n")
    assert found.id != "log.patched_method_not_imported"
