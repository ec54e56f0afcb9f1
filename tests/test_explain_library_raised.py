"""A device check raised in an installed package's own code (traceback_frames.frame_facts: ``library_raised``): the
tensor on the other device is the package's (an optimizer's restored state, a trainer's batches), a bug of its
release that leads, the script's placement named after it; a package's forward running on the script's batch, or
torch's own frames under the script, keep the device mismatch leading (session 43)."""

from __future__ import annotations

from explaining import explained, lead

_ERROR = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
_TOP = 'Traceback (most recent call last):\n  File "/home/u/train.py", line 41, in <module>\n    main()\n'


def test_an_optimizers_step_that_raised_is_the_installed_optimizers_bug():
    # train/1641.txt (LoganBooker/prodigy-plus-schedule-free#11: ProdigySF before 1.9.0 restored part of its state
    # on the CPU when training resumed); the traceback stops in prodigyplus/core_optimiser.py's step
    found = lead("1641.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "prodigyplus's own code, in step()" in found.summary
    assert "log.device_mismatch" in found.details["alternatives"]
    assert "pip install --upgrade" in found.fix


def test_a_trainers_own_method_that_raised_leads_with_the_library():
    # torch's dispatcher message (aten/src/ATen/native/TensorFactories / common_device check), raised by a trainer
    # package's own loss computation that the script reached only through trainer.train()
    text = (
        _TOP + '  File "/home/u/train.py", line 37, in main\n'
        "    trainer.train()\n"
        '  File "/opt/conda/lib/python3.10/site-packages/trl/trainer/dpo_trainer.py", line 1210, in '
        "concatenated_forward\n"
        "    concatenated_batch = self.concatenated_inputs(batch)\n" + _ERROR
    )
    found = explained(text)
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "trl's own code, in concatenated_forward()" in found.summary
    assert "log.device_mismatch" in found.details["alternatives"]


def test_a_packages_forward_on_the_scripts_batch_keeps_the_device_mismatch():
    # the near miss: the script called the model with a batch left on the CPU; the package's forward raised
    text = (
        _TOP + '  File "/home/u/train.py", line 37, in main\n'
        "    out = model(x)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1532, in '
        "_wrapped_call_impl\n"
        "    return self._call_impl(*args, **kwargs)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/timm/models/vision_transformer.py", line 640, in forward\n'
        "    x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)\n" + _ERROR
    )
    found = explained(text)
    assert found.id == "log.device_mismatch"
    assert "log.library_version_bug" in found.details["alternatives"]


def test_torchs_own_frames_under_the_script_keep_the_device_mismatch():
    text = (
        _TOP + '  File "/home/u/train.py", line 37, in main\n'
        "    out = model(x)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 116, in forward\n'
        "    return F.linear(input, self.weight, self.bias)\n" + _ERROR
    )
    assert explained(text).id == "log.device_mismatch"


def test_a_packages_helper_under_a_models_forward_keeps_the_device_mismatch():
    # the package's own helper raised, but inside the forward the script called: the tensors are the script's batch
    text = (
        _TOP + '  File "/home/u/train.py", line 37, in main\n'
        "    out = model(input_ids=ids, position_ids=pos)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1541, in _call_impl\n'
        "    return forward_call(*args, **kwargs)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py", line 310, in '
        "forward\n"
        "    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py", line 206, in '
        "apply_rotary_pos_emb\n"
        "    q_embed = (q * cos) + (rotate_half(q) * sin)\n" + _ERROR
    )
    found = explained(text)
    assert found.id == "log.device_mismatch"
    assert "log.library_version_bug" in found.details["alternatives"]


def test_a_packages_helper_the_script_called_with_its_tensors_keeps_the_device_mismatch():
    # the script handed timm's accuracy() its output and a target still on the CPU: the helper checked what it was
    # given, the script's placement leads; the package's own bug stays named among the alternatives
    text = (
        _TOP + '  File "/home/u/train.py", line 88, in main\n'
        "    acc1, acc5 = accuracy(output, target, topk=(1, 5))\n"
        '  File "/usr/lib/python3.10/site-packages/timm/utils/metrics.py", line 30, in accuracy\n'
        "    correct = pred.eq(target.reshape(1, -1).expand_as(pred))\n" + _ERROR
    )
    found = explained(text)
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "likely", found.summary
    assert "log.library_version_bug" in found.details["alternatives"], found.details["alternatives"]
    # near miss: the same helper reached by a call that hands it nothing of the script's (a package's own loop)
    bare = text.replace("accuracy(output, target, topk=(1, 5))", "evaluate()")
    assert explained(bare).id == "log.library_version_bug"


# CPython 3.12's output on an H200 (torch 2.11): the script calls an installed package's accuracy(output, target) with
# a target left on the CPU; the package's own _count() calls its _stack(), decorated with @torch.no_grad() (torch's
# decorate_context between the package's frames), and torch.cat refuses. The package's frames and torch's lead up to
# the script's call, which handed it the tensors
HANDED_THROUGH = """Traceback (most recent call last):
  File "/tmp/dev/helper.py", line 15, in <module>
    main()
  File "/tmp/dev/helper.py", line 12, in main
    print(accuracy(output, target))
          ^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/dev/env/lib/python3.12/site-packages/scoring/metrics.py", line 15, in accuracy
    return _count(output, target)
           ^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/dev/env/lib/python3.12/site-packages/scoring/metrics.py", line 10, in _count
    both = _stack(output, target)
           ^^^^^^^^^^^^^^^^^^^^^^
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/utils/_contextlib.py", line 124, in decorate_context
    return func(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/dev/env/lib/python3.12/site-packages/scoring/metrics.py", line 6, in _stack
    return torch.cat([output.argmax(1).float(), target.float()])
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: Expected all tensors to be on the same device, but got tensors is on cpu, different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_cat)
"""
# the same package's evaluate(), which makes both tensors itself, reached by print(evaluate()): nothing handed
BARE_THROUGH = """Traceback (most recent call last):
  File "/tmp/dev/helper_bare.py", line 15, in <module>
    main()
  File "/tmp/dev/helper_bare.py", line 12, in main
    print(evaluate())
          ^^^^^^^^^^
  File "/tmp/dev/env/lib/python3.12/site-packages/scoring/metrics.py", line 21, in evaluate
    return _count(output, target)
           ^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/dev/env/lib/python3.12/site-packages/scoring/metrics.py", line 10, in _count
    both = _stack(output, target)
           ^^^^^^^^^^^^^^^^^^^^^^
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/utils/_contextlib.py", line 124, in decorate_context
    return func(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/dev/env/lib/python3.12/site-packages/scoring/metrics.py", line 6, in _stack
    return torch.cat([output.argmax(1).float(), target.float()])
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: Expected all tensors to be on the same device, but got tensors is on cpu, different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_cat)
"""


def test_a_helper_reached_through_the_packages_and_torchs_frames_from_the_scripts_call_keeps_the_device_mismatch():
    found = explained(HANDED_THROUGH)
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "likely", found.summary
    assert "log.library_version_bug" in found.details["alternatives"]


def test_the_same_frames_from_a_call_that_hands_the_package_nothing_lead_with_its_release():
    # the near miss: print(evaluate()) passes evaluate()'s result to print, not anything to evaluate
    found = explained(BARE_THROUGH)
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely", found.summary
    assert "scoring's own code, in _stack()" in found.summary


def test_another_installed_package_between_the_script_and_the_one_that_raised_is_not_the_scripts_call():
    # the script handed a trainer package its model; the trainer's own code called the scoring package, which raised
    text = (
        _TOP + '  File "/home/u/train.py", line 37, in main\n'
        "    trainer.fit(model, datamodule)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/trainer/trainer.py", line 538, in fit\n'
        "    self._evaluate()\n"
        '  File "/opt/conda/lib/python3.10/site-packages/scoring/metrics.py", line 10, in _count\n'
        "    both = _stack(output, target)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/scoring/metrics.py", line 6, in _stack\n'
        "    return torch.cat([output.argmax(1).float(), target.float()])\n" + _ERROR
    )
    assert explained(text).id == "log.library_version_bug"
