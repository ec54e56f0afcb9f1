"""What earlier sessions noticed and left, each read for its class: torch's one-key wordings of a state dict
that is a whole checkpoint. Each on the wording its source prints and on a second wording or release, with a near
miss that must read otherwise."""

from __future__ import annotations

from explaining import explained

# --- a training checkpoint handed to load_state_dict, named by one key ---

# torch 0.1-0.3 nn/modules/module.py load_state_dict: KeyError at the first key of the dict the model lacks
OLD_LOAD = (
    "Traceback (most recent call last):\n"
    '  File "test.py", line 40, in <module>\n'
    "    model.load_state_dict(torch.load(args.resume))\n"
    '  File "/usr/local/lib/python3.6/site-packages/torch/nn/modules/module.py", line 490, in load_state_dict\n'
    "    .format(name))\n"
    "KeyError: 'unexpected key \"{}\" in state_dict'\n"
)


def test_torch_0x_naming_a_weights_entry_loads_that_entry():
    found = explained(OLD_LOAD.format("model"))
    assert (found.id, found.details["confidence"]) == ("log.state_dict_keys", "likely")
    assert "model.load_state_dict(checkpoint['model'])" in found.fix
    assert "first key, 'model'" in found.summary and "likely" in found.summary


def test_torch_0x_naming_the_loops_state_asks_for_the_weights_entry():
    # pytorch/examples imagenet's checkpoint: {'epoch', 'arch', 'state_dict', 'best_prec1', 'optimizer'}, the
    # epoch first
    found = explained(OLD_LOAD.format("epoch"))
    assert found.id == "log.state_dict_keys"
    assert "first key, 'epoch'" in found.summary
    assert "print(list(checkpoint))" in found.fix and "checkpoint['model']" not in found.fix


def test_torch_0x_naming_a_parameter_is_not_read_as_a_training_checkpoint():
    # a DataParallel checkpoint's first key: a parameter's name, not a checkpoint's entry
    found = explained(OLD_LOAD.format("module.conv1.weight"))
    assert found.id == "log.state_dict_keys"
    assert "training checkpoint" not in found.summary and "checkpoint[" not in found.fix


def test_torch_1x_listing_one_weights_entry_loads_that_entry():
    # torch 0.4+: every key listed; a dict saved as {'model': model.state_dict()} lists that key alone
    found = explained(
        "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
        '\tMissing key(s) in state_dict: "conv1.weight", "bn1.weight", "bn1.bias", "fc.weight", "fc.bias".\n'
        '\tUnexpected key(s) in state_dict: "model".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "model.load_state_dict(checkpoint['model'])" in found.fix
    assert "its one key, 'model'" in found.summary and "optimizer" not in found.fix


def test_torch_1x_listing_one_top_level_parameter_is_not_a_checkpoint():
    found = explained(
        "RuntimeError: Error(s) in loading state_dict for VisionTransformer:\n"
        '\tMissing key(s) in state_dict: "cls_token".\n'
        '\tUnexpected key(s) in state_dict: "pos_embed".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "checkpoint[" not in found.fix
