"""A traceback through the straggler watch's hooks (`torchdoctor launch --stragglers` wraps
torch.autograd.backward and DDP's forward) names the script's line, not torchdoctor's frame, on a log from another
machine whose torchdoctor is a source checkout (USER2 found it naming stragglers/hooks.py:277)."""

from explaining import explained

from torchdoctor.explain import first_failure

THROUGH_HOOKS = """[rank1]: Traceback (most recent call last):
[rank1]:   File "/home/u/proj/train.py", line 36, in <module>
[rank1]:     loss.backward()
[rank1]:   File "/home/u/proj/.venv/lib/python3.11/site-packages/torch/_tensor.py", line 581, in backward
[rank1]:     torch.autograd.backward(
[rank1]:   File "/home/u/torchdoctor/src/torchdoctor/stragglers/hooks.py", line 277, in backward
[rank1]:     result = original_backward(*args, **kwargs)
[rank1]:   File "/home/u/proj/.venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 347, in backward
[rank1]:     _engine_run_backward(
[rank1]: RuntimeError: planted crash on rank 1
"""


def test_the_watchs_frame_in_a_checkout_elsewhere_is_not_the_users_line():
    found = explained(THROUGH_HOOKS)
    assert "/home/u/proj/train.py:36" in found.summary and "hooks.py" not in found.summary, found.summary


def test_only_this_packages_modules_count_as_ours():
    assert first_failure.is_library("/home/u/torchdoctor/src/torchdoctor/stragglers/hooks.py")
    assert first_failure.is_library("C:\\work\\torchdoctor\\src\\torchdoctor\\launch\\bootstrap.py")
    # a user's own project that happens to be called torchdoctor, with a module this package has not
    assert not first_failure.is_library("/home/u/torchdoctor/experiments/train_model.py")
    assert not first_failure.is_library("/home/u/proj/torchdoctor/my_train.py")
