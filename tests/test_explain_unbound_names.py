"""CPython's NameError and UnboundLocalError raised in a frame the traceback shows, where no kind covers them
(kinds/versions.unbound_name, read by uncovered.py): a defect of the code that raised it, a bug of that code's
release or commit, likely; a bare message (no frame) stays named as it is (session 43)."""

from __future__ import annotations

from explaining import explained, lead


def test_an_unassigned_local_in_a_source_checkout_is_that_codes_bug():
    # train/6519.txt (Lightning-AI/lightning-thunder: fsdp_transform_module read `p` on a path that never assigned it)
    found = lead("6519.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "thunder/distributed/__init__.py:434" in found.summary
    assert "local variable 'p'" in found.summary
    assert found.details["alternatives"] == ["log.dataset_folder_layout"]
    assert "pip install --upgrade" in found.fix


def test_an_undefined_name_in_the_projects_script_is_that_codes_bug():
    # train/6118.txt (a TTS repository's train.py on master used model_dict without defining it; the dev branch
    # had working restore code)
    found = lead("6118.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "'model_dict'" in found.summary and "git pull" in found.fix


def test_python_311s_wording_of_an_unassigned_local_is_read_too():
    # Python/ceval.c's 3.11+ UNBOUNDLOCAL_ERROR_MSG, raised in an editable install's module
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/run.py", line 9, in <module>\n'
        "    trainer.fit()\n"
        '  File "/home/u/src/mylib/mylib/engine.py", line 120, in fit\n'
        "    self.log(last_loss)\n"
        "UnboundLocalError: cannot access local variable 'last_loss' where it is not associated with a value\n"
    )
    found = explained(text)
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "mylib/engine.py:120" in found.summary
    assert "branch or loop that never ran" in found.fix


def test_a_bare_undefined_name_without_its_frame_is_not_read_as_a_bug():
    # no frame: as often a notebook cell that was not run as a bug of anyone's release
    assert explained("NameError: name 'model' is not defined\n").id == "log.unrecognised"


def test_an_undefined_name_in_a_script_that_may_be_the_users_own_says_so_first():
    # a typo in the user's own train.py: a log cannot tell it from a project's checkout, so the summary names the
    # user's own script before a release or commit to update, and the fix says what to do with one's own code
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/proj/train.py", line 31, in train_one_epoch\n'
        "    loss = criterion(ouput, target)\n"
        "NameError: name 'ouput' is not defined\n"
    )
    found = explained(text)
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "your own script's, or, where it is a project's" in found.summary, found.summary
    assert "If it is your own code, define or import the name" in found.fix
