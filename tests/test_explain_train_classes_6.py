"""Classes of the train half's newest samples (helper T51, issue 19).

- Hydra's instantiate wrapping CPython's TypeError for a target's arguments, in its three releases' wordings
  (1.0's "Error calling", 1.1.0's "Error instantiating", 1.1.2+'s "Error in call to target" with repr(error) and
  full_key after it): the config node and the class disagree, most often the config is the wrong one for the
  task; likely, a config for another release named beside it. A keyword a known release removed stays
  dependency_version's, and a TypeError from deeper inside the target is not read;
- torchtext's old data API imported by an installed package's own code (pytorch-lightning 1.2.3-1.5.9's
  utilities/apply_func.py, and before 1.2.3 its torchtext.data import): the fix names that package and the
  release that stopped importing it; without a frame the fix names Lightning's releases as the importer to look
  for;
- mmcv's DataContainer reaching a torch op (torch's argument parser, for one tensor and for a list of them):
  dependency_version, likely, the MMCV wrappers and the mmcv/mmdet pairing both in the fix.
"""

from __future__ import annotations

from explaining import explained, leads_with, likely_with, read

# hydra/_internal/instantiate/_instantiate2.py (1.1.2-1.3): the exception's text, as run_and_report prints it
HYDRA_13 = (
    "Error executing job with overrides: ['model=classifier_pretrained', 'data=cifar10']\n"
    "Error in call to target 'project.models.Classifier.load_pretrained':\n"
    "TypeError(\"Classifier.__init__() missing 2 required positional arguments: 'num_classes' and 'width'\")\n"
    "full_key: model\n"
)
# 1.1.0-1.1.1: the TypeError re-raised with Hydra's words before CPython's (Python 3.8: no class name)
HYDRA_110 = (
    "TypeError: Error instantiating 'project.models.unet.UNet' : __init__() got an unexpected keyword argument "
    "'num_blocks'\n"
)
# 1.0.x: hydra/utils.py call's HydraException
HYDRA_10 = (
    "hydra.errors.HydraException: Error calling 'project.data.build_loader' : build_loader() missing 1 required "
    "keyword-only argument: 'batch_size'\n"
)


def test_hydra_targets_called_without_their_arguments_in_three_releases():
    read("5120.txt", "config_model_class", "likely")
    found = likely_with(HYDRA_13, "config_model_class", "log.dependency_version")
    assert "node at model" in found.summary and "'num_classes' and 'width'" in found.summary, found.summary
    # the overrides Hydra printed name the config the job chose
    assert "model=classifier_pretrained" in found.fix and "config" in found.fix, found.fix
    found = likely_with(HYDRA_110, "config_model_class", "log.dependency_version")
    assert "keyword 'num_blocks'" in found.summary and "remove (or rename) the key num_blocks" in found.fix
    found = likely_with(HYDRA_10, "config_model_class", "log.dependency_version")
    assert "build_loader was called without 1 argument" in found.summary, found.summary


def test_a_keyword_a_known_release_removed_stays_the_release():
    # Lightning 2.0 removed Trainer(gpus=...): api_changes.py names that release, whoever built the Trainer
    text = (
        "Error in call to target 'lightning.pytorch.trainer.trainer.Trainer':\n"
        "TypeError(\"Trainer.__init__() got an unexpected keyword argument 'gpus'\")\n"
        "full_key: trainer\n"
    )
    leads_with(text, "dependency_version", "likely", ["Lightning 2.0", "devices="])


def test_near_misses_hydra_errors_that_are_not_the_targets_arguments():
    # a TypeError from a call deeper inside the target (a layer's forward), and another error wrapped by Hydra
    for text in (
        "Error in call to target 'project.models.Net':\n"
        "TypeError(\"_conv_forward() missing 1 required positional argument: 'bias'\")\n"
        "full_key: model\n",
        "Error in call to target 'project.data.Images':\n"
        "FileNotFoundError(2, 'No such file or directory')\n"
        "full_key: data\n",
    ):
        assert explained(text).id != "log.config_model_class", text


LIGHTNING_159 = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 5, in <module>\n'
    "    import pytorch_lightning as pl\n"
    '  File "/opt/conda/lib/python3.8/site-packages/pytorch_lightning/__init__.py", line 20, in <module>\n'
    "    from pytorch_lightning.callbacks import Callback  # noqa: E402\n"
    '  File "/opt/conda/lib/python3.8/site-packages/pytorch_lightning/utilities/apply_func.py", line 30, in '
    "<module>\n"
    "    from torchtext.legacy.data import Batch\n"
    "ModuleNotFoundError: No module named 'torchtext.legacy'\n"
)
# Lightning 1.2.2 and older under torchtext 0.9: the other side of the same move
LIGHTNING_122 = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 3, in <module>\n'
    "    import pytorch_lightning as pl\n"
    '  File "/home/u/py38/lib/python3.8/site-packages/pytorch_lightning/utilities/apply_func.py", line 28, in '
    "<module>\n"
    "    from torchtext.data import Batch\n"
    "ImportError: cannot import name 'Batch' from 'torchtext.data' "
    "(/home/u/py38/lib/python3.8/site-packages/torchtext/data/__init__.py)\n"
)


def test_torchtexts_old_api_imported_by_an_installed_lightning_names_lightning():
    for text in (LIGHTNING_159, LIGHTNING_122):
        found = explained(text)
        assert found.id == "log.dependency_version", found.summary
        assert "installed pytorch_lightning imports" in found.summary, found.summary
        assert "pip install 'pytorch-lightning>=1.5.10'" in found.fix, found.fix


def test_torchtexts_old_api_from_another_installed_package_names_that_package():
    text = LIGHTNING_159.replace("pytorch_lightning/utilities/apply_func.py", "allennlp/data/fields.py")
    found = explained(text)
    assert "installed allennlp imports" in found.summary and "pip install -U allennlp" in found.fix, found.fix
    assert "pytorch-lightning" not in found.fix, found.fix


def test_torchtexts_old_api_in_the_users_code_or_without_a_frame():
    # the user's own import: the code is older than torchtext; Lightning's releases only as the importer to check
    own = LIGHTNING_159.replace(
        "/opt/conda/lib/python3.8/site-packages/pytorch_lightning/utilities/apply_func.py", "/home/u/data.py"
    )
    for text in (own, "ModuleNotFoundError: No module named 'torchtext.legacy'\n"):
        found = explained(text)
        assert found.id == "log.dependency_version" and found.summary.startswith("the code uses"), (
            found.summary
        )
        assert (
            "torchtext 0.10.0 with torch 1.9.0" in found.fix
            and "pytorch-lightning 1.2.3 to 1.5.9" in found.fix
        )


def test_mmcvs_data_container_reaching_a_torch_op():
    read("5023.txt", "dependency_version", "likely")
    # a second op, inside a traceback, and torch's list-of-tensors wording
    for text, op in (
        (
            '  File "/opt/conda/lib/python3.7/site-packages/torch/nn/modules/linear.py", line 94, in forward\n'
            "    return F.linear(input, self.weight, self.bias)\n"
            "TypeError: linear(): argument 'input' (position 1) must be Tensor, not DataContainer",
            "linear()",
        ),
        (
            "TypeError: batch_norm(): argument 'input' (position 1) must be Tensor, not DataContainer",
            "batch_norm()",
        ),
        (
            "TypeError: expected Tensor as element 0 in argument 0, but got DataContainer",
            "a list of tensors",
        ),
    ):
        leads_with(
            text, "dependency_version", "likely", [op, "MMDistributedDataParallel", "mmcv_minimum_version"]
        )


def test_near_miss_another_type_where_a_tensor_is_taken():
    found = explained("TypeError: conv2d(): argument 'input' (position 1) must be Tensor, not list\n")
    assert "DataContainer" not in found.summary + found.fix, found.summary
