"""An elementwise size check failing inside the optimizer's update (kinds/layer_shapes.py's OPTIMIZER_STATE): a
state tensor whose size is not its parameter's, loaded for another model or another parameter order — read as
optimizer_group_mismatch (likely), broadcast_size_mismatch named after it; the same check elsewhere is not."""

from __future__ import annotations

import traceback

import pytest
import torch
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def _resumed_in_another_order() -> str:
    """The traceback torch prints when an Adam state saved for a model's parameters is loaded into an optimizer
    over the same parameters in reverse order (as many, so load_state_dict takes it) and the next step runs."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2))
    saved = torch.optim.Adam(model.parameters())
    model(torch.randn(3, 4)).sum().backward()
    saved.step()
    resumed = torch.optim.Adam(list(model.parameters())[::-1])
    resumed.load_state_dict(saved.state_dict())
    try:
        resumed.step()
    except RuntimeError:
        return traceback.format_exc()
    raise AssertionError("torch took a state of other sizes")


def test_a_state_loaded_for_another_parameter_order_fails_in_the_update():
    log = _resumed_in_another_order()
    assert "must match the size of tensor b" in log, log
    found = explained(log)
    assert found.id == "log.optimizer_group_mismatch", found.summary
    assert found.details["confidence"] == "likely"
    assert "optimizer's update" in found.summary and "tensors whose sizes do not broadcast" in found.summary
    assert "load_state_dict" in found.fix and "optimizer fresh" in found.fix


# X-LANCE/text2sql-lgesql#18 (tests/fixtures/corpus/train/7268.txt): a project's own AdamW, resumed with
# --load_optimizer; the maintainer: the saved self.state's entries do not match the rebuilt optimizer's parameters
def test_a_projects_own_optimizer_updating_exp_avg_reads_the_same():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "lgesql/text2sql.py", line 105, in <module>\n'
        "    optimizer.step()\n"
        '  File "lib/python3.6/site-packages/torch/optim/lr_scheduler.py", line 65, in wrapper\n'
        "    return wrapped(*args, **kwargs)\n"
        '  File "lib/python3.6/site-packages/torch/optim/optimizer.py", line 88, in wrapper\n'
        "    return func(*args, **kwargs)\n"
        '  File "lgesql/utils/optimization.py", line 220, in step\n'
        "    exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)\n"
        "RuntimeError: The size of tensor a (768) must match the size of tensor b (2) at non-singleton dimension 0\n"
    )
    assert found.id == "log.optimizer_group_mismatch", found.summary
    assert "lgesql/utils/optimization.py:220" in found.fix


def test_the_same_check_in_a_models_forward_stays_a_shape_mismatch():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    loss = criterion(model(x), y)\n"
        '  File "train.py", line 22, in forward\n'
        "    return x + self.skip(x)\n"
        "RuntimeError: The size of tensor a (64) must match the size of tensor b (32) at non-singleton dimension 1\n"
    )
    assert found.id == "log.broadcast_size_mismatch", found.summary
    assert "optimizer state loaded" not in found.summary


def test_a_closures_loss_inside_step_is_not_the_optimizers_state():
    # every optimizer's step() calls the closure; only its update functions and state tensors count
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "fit.py", line 31, in <module>\n'
        "    optimizer.step(closure)\n"
        '  File "/opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py", line 487, in wrapper\n'
        "    out = func(*args, **kwargs)\n"
        '  File "/opt/venv/lib/python3.11/site-packages/torch/optim/lbfgs.py", line 319, in step\n'
        "    orig_loss = closure()\n"
        '  File "fit.py", line 27, in closure\n'
        "    loss = ((model(x) - y) ** 2).mean()\n"
        "RuntimeError: The size of tensor a (10) must match the size of tensor b (5) at non-singleton dimension 0\n"
    )
    assert found.id == "log.broadcast_size_mismatch", found.summary


# the update is read on the frame that raised, not on any line: Adam's state keys printed above a model's own shape
# error, and a model's own running average named exp_avg, leave the model's error the finding
def test_adams_state_keys_printed_above_a_models_shape_error_do_not_choose_the_optimizer():
    forward = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    loss = criterion(model(x), y)\n"
        '  File "train.py", line 22, in forward\n'
        "    return x + self.skip(x)\n"
        "RuntimeError: The size of tensor a (64) must match the size of tensor b (32) at non-singleton dimension 1\n"
    )
    listing = "resumed optimizer: {'state': {0: {'step': tensor(10.), 'exp_avg': ..., 'exp_avg_sq': ...}}}\n"
    found = explained(listing + forward)
    assert found.id == "log.broadcast_size_mismatch", found.summary


def test_a_models_own_running_average_named_exp_avg_is_not_the_optimizers_state():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    out = model(x)\n"
        '  File "model.py", line 30, in forward\n'
        "    self.exp_avg.mul_(0.9).add_(x.mean(0), alpha=0.1)\n"
        "RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 0\n"
    )
    assert found.id == "log.broadcast_size_mismatch", found.summary


# read on the frame that raised, the frames as Jupyter's IPython prints them too ("File ...:414, in _single_tensor_adam")
def test_a_notebooks_traceback_through_adams_update_reads_the_same():
    found = explained(
        "RuntimeError                              Traceback (most recent call last)\n"
        "Cell In[12], line 9\n"
        "----> 9 optimizer.step()\n"
        "\n"
        "File ~/miniconda3/lib/python3.10/site-packages/torch/optim/optimizer.py:280, in "
        "Optimizer.profile_hook_step.<locals>.wrapper(*args, **kwargs)\n"
        "--> 280 out = func(*args, **kwargs)\n"
        "\n"
        "File ~/miniconda3/lib/python3.10/site-packages/torch/optim/adam.py:414, in _single_tensor_adam(params, "
        "grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps)\n"
        "--> 413 exp_avg.lerp_(grad, 1 - beta1)\n"
        "\n"
        "RuntimeError: The size of tensor a (768) must match the size of tensor b (2) at non-singleton dimension 0\n"
    )
    assert found.id == "log.optimizer_group_mismatch" and found.details["confidence"] == "likely", (
        found.summary
    )
