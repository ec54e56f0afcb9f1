"""DeepSpeed's saves every rank must call, seen waiting in their collective (issue 19, DeepSpeed;
kinds/deepspeed_saves.py, read by ranks.py's ``rank_divergence``).

``deepspeed/runtime/engine.py``'s ``save_checkpoint`` all-reduces the tag's hash (``_checkpoint_tag_validation``) and,
under ZeRO-3, ``save_16bit_model`` gathers the weights (``_zero3_consolidated_16bit_state_dict``): a dump of a hung
rank standing there is a save the other ranks never called. Cases: the train half's log (a faulthandler dump) and
the catalog's frame templates filled as faulthandler and py-spy print them; near-misses: an exception's traceback
through the same frames, whose own error line is the reading, and the source line that calls the check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from explaining import explained, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

TRAIN = Path(__file__).parent / "fixtures" / "corpus" / "train"
SITE = "/opt/conda/lib/python3.10/site-packages"


def test_the_train_logs_hang_in_the_tag_check_is_save_checkpoint_called_on_rank_0_only():
    found = explained((TRAIN / "2323.txt").read_text())
    assert found.id == "log.rank_divergence" and found.details["confidence"] == "likely", found.summary
    assert "save_checkpoint" in found.summary
    assert "all processes" in found.fix and "if rank == 0" in found.fix
    assert "NCCL settings" not in found.summary  # NCCL's own exchange is not the other reading here


@pytest.mark.parametrize(
    ("dump", "save"),
    [
        (
            "Thread 0x00007f1d2c1ff740 (most recent call first):\n"
            + template("third_party:deepspeed-save-16bit-model-consolidated-frame", SITE, "3550")
            + f'\n  File "{SITE}/deepspeed/runtime/engine.py", line 3610 in save_16bit_model\n'
            '  File "train.py", line 200 in main\n',
            "save_16bit_model",
        ),
        (
            'Thread 4242 (idle): "MainThread"\n'
            "    _checkpoint_tag_validation (deepspeed/runtime/engine.py:3050)\n"
            "    save_checkpoint (deepspeed/runtime/engine.py:3100)\n"
            "    main (train.py:120)\n",
            "save_checkpoint",
        ),
    ],
)
def test_a_dump_standing_in_a_collective_save_names_the_save(dump, save):
    found = explained(dump)
    assert found.id == "log.rank_divergence" and found.details["confidence"] == "likely", found.summary
    assert f"DeepSpeed's {save}" in found.summary
    assert f"engine.{save}(...)" in found.fix


def test_an_exceptions_traceback_through_the_save_is_read_from_its_error_line():
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 120, in <module>\n'
        "    engine.save_checkpoint(args.output_dir)\n"
        f'  File "{SITE}/deepspeed/runtime/engine.py", line 3100, in save_checkpoint\n'
        "    self._checkpoint_tag_validation(tag)\n"
        f'  File "{SITE}/deepspeed/runtime/engine.py", line 3050, in _checkpoint_tag_validation\n'
        "    dist.all_reduce(max_bhash, op=dist.ReduceOp.MAX)\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        "Last error:\n"
        "socketStartConnect: Connect to 10.0.0.2<45678> failed : Software caused connection abort\n"
    )
    found = explained(text)
    assert "waits inside DeepSpeed" not in found.summary, (found.id, found.summary)
    assert found.id != "log.rank_divergence", (found.id, found.summary)


def test_prose_and_the_calling_source_line_are_not_a_waiting_rank():
    for text in (
        "    self._checkpoint_tag_validation(tag)\n",
        "I set checkpoint tag_validation to Ignore so _checkpoint_tag_validation is skipped\n",
    ):
        assert "waits inside DeepSpeed" not in explained(text).summary, text
