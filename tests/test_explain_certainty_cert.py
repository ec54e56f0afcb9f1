"""Certainty where the held-out half is most often confidently wrong (task CERT): certain readings whose anchor
is a message its source prints for more than one cause, made likely with the other readings named, and certain
again only with the evidence that tells the causes apart.

- DeepSpeed's ``AssertionError: DeepSpeed backend not set, please initialize it using init_process_group()``
  (``deepspeed/comm/comm.py``: get_rank, get_world_size, new_group, barrier, ... all assert
  ``cdb is not None and cdb.is_initialized()``) was a certain ``deepspeed_init_order``. ``cdb.is_initialized()``
  is torch.distributed's own, so the same assertion is raised after ``destroy_process_group`` at the end of a
  run (a logger, a callback or a library asking the rank) as before ``init_distributed``. Alone it is likely,
  ``process_group_destroyed`` named; certain where the traceback shows a model being built before the backend
  was set (zero.Init's ``partition_parameters.py``, ``from_pretrained``, DeepSpeed's MoE layers) and no process
  group was destroyed. DeepSpeed's other wordings of the order (``Distributed backend is not initialized``,
  zero.Init's world of one) are that order's only and keep no second reading.
"""

from __future__ import annotations

import pytest
from explaining import explained, lead

pytestmark = pytest.mark.usefixtures("every_message_seen")

BACKEND_NOT_SET = (
    "AssertionError: DeepSpeed backend not set, please initialize it using init_process_group()\n"
)
_COMM = (
    '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/comm/comm.py", line 536, in get_rank\n'
    "    assert cdb is not None and cdb.is_initialized(\n"
)
# transformers' from_pretrained under ZeRO-3 enters zero.Init, whose __init__ asks the rank (DeepSpeed 0.9-0.14)
WHILE_BUILDING = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 40, in <module>\n'
    "    model = AutoModelForCausalLM.from_pretrained(args.model)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py", line 3550, in from_pretrained\n'
    "    init_contexts = [deepspeed.zero.Init(config_dict_or_path=deepspeed_config())] + init_contexts\n"
    '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/partition_parameters.py", line 870, '
    "in __init__\n"
    "    self.rank = dist.get_rank(group=self.ds_process_group)\n" + _COMM + BACKEND_NOT_SET
)
# the user's end of training: the group destroyed, then a rank check through deepspeed.comm
AFTER_DESTROY = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 92, in <module>\n'
    "    main()\n"
    '  File "/home/u/train.py", line 88, in main\n'
    "    finish(engine)\n"
    '  File "/home/u/train.py", line 61, in finish\n'
    "    torch.distributed.destroy_process_group(); log_done(deepspeed.comm.get_rank())\n"
    + _COMM
    + BACKEND_NOT_SET
)


def test_deepspeeds_bare_backend_assertion_is_likely_with_a_destroyed_group_named():
    found = explained(BACKEND_NOT_SET)
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_init_order", "likely"), found.summary
    assert "log.process_group_destroyed" in found.details["alternatives"]
    assert "deepspeed.init_distributed()" in found.fix and "is_initialized()" in found.fix


def test_the_assertion_while_a_model_is_built_under_zero_init_is_the_init_order():
    found = explained(WHILE_BUILDING)
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_init_order", "certain"), found.summary
    assert "log.process_group_destroyed" not in found.details.get("alternatives", [])


def test_the_assertion_after_destroy_process_group_stays_likely():
    found = explained(AFTER_DESTROY)
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_init_order", "likely"), found.summary
    assert "log.process_group_destroyed" in found.details["alternatives"]


def test_deepspeeds_other_wording_of_the_order_names_no_destroyed_group():
    found = explained(
        "RuntimeError: Distributed backend is not initialized. Please set dist_init_required to True or "
        "initialize before calling deepspeed.initialize()\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_init_order", "certain"), found.summary


def test_the_train_log_of_the_assertion_alone_is_read_likely_and_right():
    # 168.txt (bigscience-workshop/Megatron-DeepSpeed#285): the bare line; its thread established the order
    found = lead("168.txt")
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_init_order", "likely"), found.summary
    assert "log.process_group_destroyed" in found.details["alternatives"]
