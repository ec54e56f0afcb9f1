"""The knowledge the twenty-first sample by symptom (corpus files 867-882, train half) asked for, each anchored on
the message its source prints: GradScaler's unscale_ refusals (torch/amp/grad_scaler.py) with the transformers
Trainer's release bug beside the training loop's own order, torch.distributions' support check
(distribution.py _validate_sample) and the optimizers' refusal of sparse gradients (torch/optim/adam.py, adamw.py,
rmsprop.py). Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

UNSCALED_TWICE = (
    "RuntimeError: unscale_() has already been called on this optimizer since the last update().\n"
)


def test_unscale_twice_from_the_trainer_is_a_release_bug_and_likely():
    # 869.txt (hiyouga/ChatGLM-Efficient-Tuning#175, a prose line), 871.txt (hiyouga/LlamaFactory#77, the title)
    for name in ("869.txt", "871.txt"):
        found = lead(name)
        assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
        assert "upgrade" in found.fix and "log.grad_scaler_call_order" in found.details["alternatives"]
    assert template("torch:unscale-has-already-been-called-on") in UNSCALED_TWICE
    trainer = (
        '  File "/usr/lib/python3.10/site-packages/accelerate/accelerator.py", line 1893, in clip_grad_norm_\n'
        "    self.unscale_gradients()\n"
        '  File "/usr/lib/python3.10/site-packages/accelerate/accelerator.py", line 1856, in unscale_gradients\n'
        "    self.scaler.unscale_(opt)\n" + UNSCALED_TWICE
    )
    assert explained(trainer).id == "log.library_version_bug"


def test_unscale_twice_from_the_scripts_own_loop_is_the_call_order():
    own = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/home/u/proj/train.py", line 190, in main\n'
        "[rank0]:     scaler.unscale_(optimizer) \n"
        '[rank0]:   File "/opt/env/lib/python3.11/site-packages/torch/amp/grad_scaler.py", line 327, in unscale_\n'
        "[rank0]:     raise RuntimeError(\n[rank0]: " + UNSCALED_TWICE
    )
    found = explained(own)
    assert found.id == "log.grad_scaler_call_order" and found.details["confidence"] == "likely"
    assert "scaler.update()" in found.fix
    after = "RuntimeError: " + template("torch:unscale-is-being-called-after-step") + "\n"
    found = explained(after)
    assert found.id == "log.grad_scaler_call_order" and found.details["confidence"] == "certain"
    # GradScaler's other refusals are not the order of unscale_
    assert explained("RuntimeError: step() has already been called since the last update().\n").id not in (
        "log.grad_scaler_call_order",
        "log.library_version_bug",
    )


def test_a_log_prob_value_outside_the_support():
    # 877.txt (pytorch/pytorch#59228): a negative value for a log-normal, 1.7's wording in a prose line
    found = lead("877.txt")
    assert found.id == "log.distribution_value_outside_support" and found.details["confidence"] == "likely"
    assert "log.nan_overflow" in found.details["alternatives"] and "support" in found.fix
    line = template(
        "torch_native:distribution-value-outside-support",
        "Tensor",
        "(100,)",
        "GreaterThan(lower_bound=0.0)",
        "Weibull(scale: torch.Size([100]), concentration: torch.Size([100]))",
    )
    found = explained(f"ValueError: {line}\ntensor([-0.1200, 0.3400])\n")
    assert found.id == "log.distribution_value_outside_support"
    assert "GreaterThan(lower_bound=0.0)" in found.summary and "Weibull" in found.summary
    # a parameter failing its constraint is the distribution's construction, not log_prob's value
    found = explained(
        "ValueError: Expected parameter loc (Tensor of shape (4, 2)) of distribution Normal(loc: torch.Size([4, 2]), "
        "scale: torch.Size([4, 2])) to satisfy the constraint Real(), but found invalid values:\n"
    )
    assert found.id != "log.distribution_value_outside_support"


def test_sparse_gradients_in_adam():
    # 881.txt (pminervini/KGReasoning#2): an embedding built with sparse=True under Adam
    found = lead("881.txt")
    assert found.id == "log.optimizer_sparse_gradients" and found.details["confidence"] == "certain"
    assert "sparse=False" in found.fix and "SparseAdam" in found.fix
    line = template("torch_cpp:adamw-does-not-support-sparse-gradients")
    assert explained(f"RuntimeError: {line}, please consider SparseAdam instead\n").id == (
        "log.optimizer_sparse_gradients"
    )
    # DeepSpeed's 1-bit Adam words its own config refusal alike
    found = explained("ValueError: 1-bit Adam does not support sparse gradients\n")
    assert found.id != "log.optimizer_sparse_gradients"
