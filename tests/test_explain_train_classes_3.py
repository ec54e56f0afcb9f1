"""Classes of the train half's misses, third round (helper T47, issue 19).

Each class is tested on the train log that showed it (the corpus file, cited) or, where no train log shows the
wording, on the line its source prints, and on another wording or release of it, and on a near miss:

- a library class's attribute that another release has under another name, read from the release table
  (api_members.tsv: transformers' TrainingArguments.evaluation_strategy, eval_strategy from 4.41), with and
  without CPython 3.10+'s "Did you mean";
- autograd's "the derivative for '...' is not implemented" (train 1138.txt, thuml/Koopa#4: linalg_lstsq);
- CPython's "module 'pkg' has no attribute 'sub'" where sub is a subpackage the package's __init__ does not
  import (train 1689.txt, segmentation_models_pytorch's utils).
"""

from __future__ import annotations

from explaining import explained, leads_with, read


def test_a_renamed_training_argument_read_with_python_3_11s_suggestion():
    # transformers/training_args.py: evaluation_strategy went after 4.50 (api_members.tsv), eval_strategy came in
    # 4.41; CPython 3.11 adds the suggestion from dir() of the object
    found = explained(
        "AttributeError: 'TrainingArguments' object has no attribute 'evaluation_strategy'. "
        "Did you mean: 'eval_strategy'?\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "likely"), found.summary
    assert "TrainingArguments.eval_strategy" in found.summary and "4.41" in found.summary, found.summary
    assert "use .eval_strategy instead" in found.fix and "transformers<4.51" in found.fix, found.fix


def test_the_same_rename_without_the_suggestion_on_another_class():
    # Python 3.9 prints the first line only: the table's near member that came as this one went names it
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/asr/finetune.py", line 70, in <module>\n'
        "    if args.evaluation_strategy == 'steps':\n"
        "AttributeError: 'Seq2SeqTrainingArguments' object has no attribute 'evaluation_strategy'\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "likely"), found.summary
    assert "Seq2SeqTrainingArguments.eval_strategy" in found.summary, found.summary


def test_a_member_no_release_has_is_not_read_as_a_rename():
    # near miss: a name the table shows in no release of the class (the script's own): not a release change
    found = explained("AttributeError: 'TrainingArguments' object has no attribute 'evaluation_strategi'\n")
    assert found.id != "log.dependency_version", found.summary


def test_a_derivative_the_installed_torch_lacks():
    # train 1138.txt: "RuntimeError: the derivative for 'linalg_lstsq' is not implemented." quoted in a sentence
    found = read("1138.txt", "dependency_version", "likely")
    assert "linalg_lstsq" in found.summary and "newer torch" in found.fix, found.fix


def test_the_fallbacks_wording_of_a_missing_derivative():
    # torch/csrc/autograd/autograd_not_implemented_fallback.cpp names the operator without quotes
    leads_with(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/fit.py", line 12, in <module>\n'
        "    loss.backward()\n"
        "RuntimeError: derivative for aten::_cdist_backward is not implemented",
        "dependency_version",
        "likely",
        ["aten::_cdist_backward", "pip install -U torch"],
    )


def test_a_subpackage_the_packages_init_does_not_import():
    # train 1689.txt: "AttributeError: module 'segmentation_models_pytorch' has no attribute 'utils'"
    found = read("1689.txt", "dependency_version", "likely")
    assert "from segmentation_models_pytorch import utils" in found.fix, found.fix


def test_a_name_the_release_table_knows_keeps_its_release_reading():
    # losses is a name of the package from 0.2.0 (api_history.tsv): that reading, certain, not the subpackage one
    leads_with(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/seg/train.py", line 5, in <module>\n'
        "    loss = smp.losses.DiceLoss('binary')\n"
        "AttributeError: module 'segmentation_models_pytorch' has no attribute 'losses'",
        "dependency_version",
        "certain",
        ["segmentation_models_pytorch.losses", "0.2.0"],
    )
    # a class name (capitalised) is not read as a subpackage
    found = explained("AttributeError: module 'segmentation_models_pytorch' has no attribute 'Unett'\n")
    assert "from segmentation_models_pytorch import" not in (found.fix or ""), found.fix
