"""A state dict used where a model was meant (kinds/torch_load_calls.py): CPython's AttributeError and TypeError on
the OrderedDict torch.load returns for a file saved with torch.save(model.state_dict()), as the threads post them."""

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
    assert found.id == "log.state_dict_loaded_as_model", found.summary
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
    assert found.id == "log.state_dict_loaded_as_model", found.summary


# an attribute no nn.Module has is some other OrderedDict's: not read as a state dict
def test_an_ordered_dict_without_a_module_member_is_not_read():
    found = explained("AttributeError: 'collections.OrderedDict' object has no attribute 'foo_bar'\n")
    assert found.id != "log.state_dict_loaded_as_model", found.summary
