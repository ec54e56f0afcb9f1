"""Classes of the train half's misses, second round: Python's own errors about library APIs (helper T43, issue 19).

Each class is tested on the train log that showed it (the corpus file, cited) and on another wording or release of
the same message as its source prints it, and on a near miss that must not read as it:

- a library object's attribute read under a near name of one it has (train 1637.txt, transformers' EvalPrediction
  read as ``.prediction``): CPython 3.10+'s "Did you mean" and the older line alone;
- RDKit's None for a molecule it could not read (train 2118.txt, snap-stanford/ogb#133);
- omegaconf 2.1's ``ConfigAttributeError: Missing key`` (train 2579.txt);
- a plain Ctrl-C's confidence, now stated (benchmarks/explain_corpus.py counted it as certain without one).
"""

from __future__ import annotations

from explaining import explained, likely_with, read

from torchdoctor.explain import interrupted
from torchdoctor.explain.first_failure import Raised


def test_evaluation_prediction_read_as_prediction_is_a_misspelled_attribute():
    # train 1637.txt: the title, with typographic quotes, as the thread pasted it
    found = read("1637.txt", "misspelled_attribute", "likely")
    assert ".predictions" in found.fix and "EvalPrediction" in found.summary, found.fix
    assert found.details["alternatives"] == ["log.dependency_version"]


def test_python_3_10s_suggestion_on_a_library_object():
    # CPython 3.11 as it prints on transformers' EvalPrediction, and on torch's max() pair
    found = likely_with(
        "Traceback (most recent call last):\n"
        '  File "/home/li/cls/train.py", line 41, in compute_metrics\n'
        "    preds = p.prediction.argmax(-1)\n"
        "AttributeError: 'EvalPrediction' object has no attribute 'prediction'. Did you mean: 'predictions'?\n",
        "misspelled_attribute",
        "log.dependency_version",
    )
    assert "Read .predictions instead of .prediction" in found.fix, found.fix
    found = explained(
        "AttributeError: 'torch.return_types.max' object has no attribute 'value'. Did you mean: 'values'?\n"
    )
    assert found.id == "log.misspelled_attribute" and ".values" in found.fix, found.summary
    # the older line alone on a field of torch's pair
    found = explained("AttributeError: 'torch.return_types.topk' object has no attribute 'indice'\n")
    assert found.id == "log.misspelled_attribute" and ".indices" in found.fix, found.summary


def test_a_name_a_release_has_or_a_builtin_is_not_read_as_a_misspelling():
    # transformers 4.46 renamed evaluation_strategy (api_members.tsv has it): a release, never a typo
    for text in (
        "AttributeError: 'TrainingArguments' object has no attribute 'evaluation_strategy'. "
        "Did you mean: 'eval_strategy'?\n",
        # h5py 3's str where bytes were: a builtin, not a library's class
        "AttributeError: 'str' object has no attribute 'decode'. Did you mean: 'encode'?\n",
        # a field read that is no near name of one the record has
        "AttributeError: 'EvalPrediction' object has no attribute 'argmax'\n",
    ):
        assert explained(text).id != "log.misspelled_attribute", text


def test_rdkits_none_for_a_molecule_it_could_not_read():
    # train 2118.txt: the title (the dataset's name, then the error line)
    found = read("2118.txt", "dependency_version", "likely")
    assert "RDKit" in found.summary and "rdkit" in found.fix, found.fix
    # a featurizer's traceback with RDKit's own log line first, another Mol method
    found = likely_with(
        "[12:01:44] SMILES Parse Error: syntax error while parsing: C1=CC=CN1(C)(C)C\n"
        "Traceback (most recent call last):\n"
        '  File "/data/gnn/featurize.py", line 22, in mol_to_graph\n'
        "    n = mol.GetNumAtoms()\n"
        "AttributeError: 'NoneType' object has no attribute 'GetNumAtoms'\n",
        "dependency_version",
        "log.bad_training_data",
    )
    assert "GetNumAtoms" in found.summary
    # None read for another attribute is not RDKit's
    assert "RDKit" not in explained("AttributeError: 'NoneType' object has no attribute 'shape'\n").summary


def test_omegaconf_2_1s_missing_key():
    # train 2579.txt: the title is the error line, without the key
    found = read("2579.txt", "dependency_version", "likely")
    assert "omegaconf==2.0.6" in found.fix, found.fix
    # omegaconf 2.1+'s line with the key and its full_key, as dictconfig.py raises it
    found = explained(
        '  File "/usr/lib/python3.10/site-packages/omegaconf/dictconfig.py", line 480, in _get_node\n'
        '    raise ConfigKeyError(f"Missing key {key!s}")\n'
        "omegaconf.errors.ConfigAttributeError: Missing key seed\n"
        "    full_key: base.seed\n"
        "    object_type=dict\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "likely"), found.summary
    assert "'seed'" in found.summary and "seed: null" in found.fix, found.fix
    # omegaconf's other refusal, a mandatory value left '???', is not this
    text = "omegaconf.errors.MissingMandatoryValue: Missing mandatory value: model.name\n"
    assert "omegaconf 2.0" not in explained(text).summary


def test_a_plain_ctrl_c_states_it_is_certain():
    found = interrupted.stopped(Raised("KeyboardInterrupt", ""))
    assert (found.id, found.details["confidence"]) == ("log.interrupted", "certain")
