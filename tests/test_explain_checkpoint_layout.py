"""A checkpoint laid out otherwise than its loader expects (kinds/torch_load_calls.py): CPython's AttributeError,
TypeError and KeyError on what torch.load returns for a file saved with torch.save(model.state_dict()), as the
threads post them."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


# AlexMeinke/certified-certain-uncertainty#1's traceback, the shape of samsledje/D-SCRIPT#49's (.cuda())
def test_a_loaded_state_dict_moved_like_a_model_names_load_state_dict():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "gen_eval.py", line 35, in <module>\n'
        "    model_list = [torch.load(file).to(device) for file in model_path.file_dict.values()]\n"
        "AttributeError: 'collections.OrderedDict' object has no attribute 'to'\n"
    )
    assert found.id == "log.checkpoint_layout_mismatch", found.summary
    assert "its .to" in found.summary and "torch.save(model.state_dict())" in found.summary
    assert "model.load_state_dict(torch.load(path" in found.fix


@pytest.mark.parametrize(
    "line",
    [
        "AttributeError: 'collections.OrderedDict' object has no attribute 'eval'",
        "AttributeError: 'collections.OrderedDict' object has no attribute 'module'",
        "TypeError: 'collections.OrderedDict' object is not callable",
    ],
)
def test_the_other_module_uses_of_a_state_dict_are_read(line):
    found = explained(line + "\n")
    assert found.id == "log.checkpoint_layout_mismatch", found.summary


# an attribute no nn.Module has is some other OrderedDict's: not read as a state dict
def test_an_ordered_dict_without_a_module_member_is_not_read():
    found = explained("AttributeError: 'collections.OrderedDict' object has no attribute 'foo_bar'\n")
    assert found.id != "log.checkpoint_layout_mismatch", found.summary


# a bare state dict read as a training checkpoint: the code indexes what torch.load returned with its key
# (mit-han-lab/temporal-shift-module#81's lines, assigned first; Lightning's load_from_checkpoint passing strict=,
# Lightning-AI/pytorch-lightning#13288; torch.load's result indexed in place, Ma-Lab-Berkeley/CRATE#5): checkpoint.py's
# checkpoint_incomplete
@pytest.mark.parametrize(
    ("log", "key"),
    [
        (
            '  File "test_models.py", line 142, in <module>\n'
            "    checkpoint = checkpoint['state_dict']\n"
            "KeyError: 'state_dict'\n",
            "state_dict",
        ),
        (
            '  File "/usr/lib/python3/site-packages/pytorch_lightning/core/saving.py", line 205, in _load_model_state\n'
            "    model.load_state_dict(checkpoint['state_dict'], strict=strict)\n"
            "KeyError: 'state_dict'\n",
            "state_dict",
        ),
        (
            '  File "finetune.py", line 99, in <module>\n'
            "    net.load_state_dict(torch.load(args.ckpt_dir)['model'])\n"
            "KeyError: 'model'\n",
            "model",
        ),
    ],
)
def test_a_missing_checkpoint_entry_where_a_checkpoint_is_indexed_names_a_weights_only_file(log, key):
    found = explained(log)
    assert found.id == "log.checkpoint_incomplete" and found.details["confidence"] == "likely", found.summary
    assert f"no '{key}' entry" in found.summary and "model.load_state_dict(torch.load(path))" in found.fix


# an optimizer's load_state_dict handed another dict (bl0/moco#8: the scheduler's state under the optimizer's name),
# and FSDP1's _optim_utils.py reading another tool's layout (mosaicml/llm-foundry#1231)
@pytest.mark.parametrize(
    ("log", "key"),
    [
        (
            '  File "/opt/conda/lib/python3.7/site-packages/torch/optim/optimizer.py", line 108, in load_state_dict\n'
            "    saved_groups = state_dict['param_groups']\n"
            "KeyError: 'param_groups'\n",
            "param_groups",
        ),
        ("[rank24]:     unflat_osd_state = unflat_osd[\"state\"]\n[rank24]: KeyError: 'state'\n", "state"),
    ],
)
def test_an_optimizer_state_dict_without_its_entries_names_what_was_passed(log, key):
    found = explained(log)
    assert found.id == "log.checkpoint_layout_mismatch" and found.details["confidence"] == "likely", (
        found.summary
    )
    assert f"no '{key}' entry" in found.summary and "optim_state_dict_to_load" in found.fix


# the same KeyErrors on a config's or a cache's lookup are some other dict's: not read as a checkpoint's
@pytest.mark.parametrize(
    "log",
    [
        "    cfg = config['model']\nKeyError: 'model'\n",
        "    x = self.cache['state']\nKeyError: 'state'\n",
        "KeyError: 'state_dict'\n",
    ],
)
def test_a_key_error_without_a_checkpoint_lookup_is_not_read(log):
    found = explained(log)
    assert found.id not in ("log.checkpoint_layout_mismatch", "log.checkpoint_incomplete"), found.summary
