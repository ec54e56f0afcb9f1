"""FSDP1's own invariants failing inside torch (kinds/fsdp_releases.py, read by versions.py): the state machine of
torch/distributed/fsdp/_common_utils.py and the flat parameter's _p_assert checks, filled as torch fills them."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

_HOOK_FRAMES = (
    '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/fsdp/_runtime_utils.py", line 715, '
    "in _pre_backward_hook\n"
    "[rank0]:     _assert_in_training_states(state, [TrainingState.FORWARD_BACKWARD])\n"
    '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/fsdp/_common_utils.py", line 621, '
    "in _assert_in_training_states\n"
    "[rank0]:     raise ValueError(msg)\n"
)


# _assert_in_training_states(state, [TrainingState.FORWARD_BACKWARD]) in the pre-backward hook of an idle unit
# (pytorch/pytorch#148756; EasyR1#37 with videos)
def test_a_backward_hook_on_an_idle_unit_is_a_likely_release_bug_naming_the_unit_outside_the_loss():
    found = explained(
        _HOOK_FRAMES
        + "[rank0]: ValueError: expected to be in states [<TrainingState.FORWARD_BACKWARD: 2>] but current state is "
        "TrainingState.IDLE\n"
    )
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely", found.summary
    assert "TrainingState.IDLE" in found.summary and "pytorch/pytorch#148756" in found.summary
    assert "reach the loss" in found.fix and "use_reentrant=False" in found.fix and "upgrade" in found.fix
    # the script's own use of a unit outside its root's forward is named beside it
    assert "a unit whose output takes no part in the loss" in found.summary


# the same check expecting IDLE: FSDP entered again while a forward and backward were under way
def test_fsdp_entered_again_mid_step_names_the_calls_that_do_it():
    found = explained(
        "ValueError: expected to be in states [<TrainingState.IDLE: 1>] but current state is "
        "TrainingState.FORWARD_BACKWARD\n"
    )
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely", found.summary
    assert "entered again" in found.summary and "TrainingState.FORWARD_BACKWARD" in found.summary
    assert "summon_full_params()" in found.fix and "between steps" in found.fix


# _flat_param.py's _p_assert on the flat parameter's storage, printed and then raised as AssertionError
@pytest.mark.parametrize(
    "message",
    [
        "Expects storage to be allocated",
        "Expects storage to be freed but got storage with size > 0",
        "Expects the handle training to be IDLE but got HandleTrainingState.FORWARD",
    ],
)
def test_a_flat_parameter_invariant_is_a_likely_release_bug(message):
    found = explained(f"AssertionError: {message}\n")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely", found.summary
    assert message in found.summary and "FSDP1" in found.summary
    assert "upgrade" in found.fix and "root" in found.fix


# DeepSpeed's and other libraries' states are not FSDP's: a message about another state machine is not read
def test_another_state_message_is_not_read_as_fsdp():
    found = explained("ValueError: expected to be in state RUNNING but current state is STOPPED\n")
    assert "FSDP1" not in found.summary


# _flat_param.py _check_sharded_strategy under NO_SHARD (one process: FSDP switches FULL_SHARD to NO_SHARD), as a
# framework's offload path reached it on one GPU (rllm-org/rllm#53)
def test_a_sharded_only_path_under_no_shard_names_one_process():
    found = explained(
        '  File "/usr/lib/python3/dist-packages/torch/distributed/fsdp/_flat_param.py", line 1807, in '
        "_free_unsharded_flat_param\n"
        "    self._check_sharded_strategy()\n"
        '  File "/usr/lib/python3/dist-packages/torch/distributed/fsdp/_flat_param.py", line 2625, in '
        "_check_sharded_strategy\n"
        '    _p_assert(self.uses_sharded_strategy, "Expects sharded strategy")\n'
        "AssertionError: Expects sharded strategy\n"
    )
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely", found.summary
    assert "NO_SHARD" in found.summary and "2 or more GPUs" in found.fix
