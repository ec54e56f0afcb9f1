"""The forty-fifth sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2067-2076)."""

from __future__ import annotations

import pytest
from explaining import explained as lead
from explaining import leads_with, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

INPLACE = (
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.cuda.FloatTensor [64, 1]], which is output 0 of AsStridedBackward0, is at version 3; "
    "expected version 2 instead.\n"
)


# shenweichen/DeepCTR-Torch#131: deepctr-torch 0.2.1's own models under torch 1.6, fixed in 0.2.2; the same check
# reached through the library's training loop
THROUGH_A_LIBRARY = (
    "Traceback (most recent call last):\n"
    '  File "run_classification_criteo.py", line 52, in <module>\n'
    "    model.fit(train_model_input, train[target].values, batch_size=256, epochs=10)\n"
    '  File "/usr/lib/python3.8/site-packages/deepctr_torch/models/basemodel.py", line 244, in fit\n'
    "    total_loss.backward()\n"
    '  File "/usr/lib/python3.8/site-packages/torch/tensor.py", line 185, in backward\n'
    "    torch.autograd.backward(self, gradient, retain_graph, create_graph)\n" + INPLACE
)


@pytest.mark.parametrize("log", [INPLACE, THROUGH_A_LIBRARY], ids=["bare", "library_loop"])
def test_the_in_place_check_not_from_the_scripts_own_backward_names_a_librarys_release(log):
    likely_with(log, "inplace_modification", "log.library_version_bug")


def test_the_in_place_check_from_the_scripts_own_backward_stays_certain():
    found = lead(
        "Traceback (most recent call last):\n"
        '  File "train_gan.py", line 88, in <module>\n'
        "    loss_g.backward()\n"
        '  File "/usr/lib/python3.8/site-packages/torch/_tensor.py", line 487, in backward\n'
        "    torch.autograd.backward(\n" + INPLACE
    )
    assert (found.id, found.details["confidence"]) == ("log.inplace_modification", "certain")


# Lightning's _validate_scheduler_api as 1.8's lightning_lite and 1.x's pytorch_lightning print it
# (LinWeizheDragon/Retrieval-Augmented-Visual-Question-Answering#14's title, cut by GitHub's title length)
LITE_LAMBDA = (
    "[ERROR] - __main__ : Uncaught exception: <class 'lightning_lite.utilities.exceptions."
    "MisconfigurationException'> --> The provided lr scheduler `LambdaLR` doesn't follow PyTorch's LRScheduler "
    "API. You\n"
)
PL_STEP = (
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: The provided lr scheduler `StepLR` doesn't "
    "follow PyTorch's LRScheduler API. You should override the `LightningModule.lr_scheduler_step` hook with "
    "your own logic if you are using a custom LR scheduler.\n"
)


@pytest.mark.parametrize("log", [LITE_LAMBDA, PL_STEP], ids=["lightning_lite", "pytorch_lightning"])
def test_lightning_refusing_torchs_own_scheduler_is_a_lightning_older_than_torch_2(log):
    leads_with(log, "dependency_version", "certain", ["1.8.4", "torch<2.0", "lr_scheduler_step"])


def test_a_custom_scheduler_lightning_refuses_is_not_a_release_mismatch():
    # timm's scheduler is no torch LRScheduler under any release: the custom scheduler the message means
    found = lead(PL_STEP.replace("`StepLR`", "`CosineLRScheduler`"))
    assert found.id != "log.dependency_version"


LOOKAHEAD = "AttributeError: 'Lookahead' object has no attribute '_optimizer_step_pre_hooks'\n"


def test_an_optimizer_without_torch_2s_step_hooks_is_a_class_written_for_older_torch():
    # kozistr/pytorch_optimizer#122: Lookahead subclassed Optimizer without its __init__, fixed in v2.5.2
    hooks_traceback = (
        "Traceback (most recent call last):\n"
        '  File "main.py", line 97, in train\n'
        "    optimizer.step()\n"
        '  File "/usr/lib/python3.10/site-packages/torch/optim/optimizer.py", line 363, in wrapper\n'
        "    for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):\n"
        + LOOKAHEAD
    )
    found = likely_with(hooks_traceback, "library_version_bug", "log.dependency_version")
    assert "Lookahead" in found.summary and "torch 2.0" in found.summary
    assert "2.5.2" in found.fix and "super().__init__(params, defaults)" in found.fix


def test_the_post_step_hooks_read_the_same():
    found = lead(LOOKAHEAD.replace("'Lookahead'", "'Ranger'").replace("_pre_hooks", "_post_hooks"))
    assert found.id == "log.library_version_bug" and "Ranger" in found.summary


def test_another_missing_private_attribute_of_an_optimizer_is_not_it():
    found = lead("AttributeError: 'Lookahead' object has no attribute '_step_supports_amp_scaling'\n")
    assert "step hooks" not in found.summary
