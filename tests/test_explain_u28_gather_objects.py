"""accelerate's gather handed what is not a tensor: a metric's label names gathered as they are. Found with
accelerate's nlp_example evaluation loop on 2 gloo ranks (a tiny classifier on synthetic data), predictions turned
into names before the gather: accelerator.gather(names) raised accelerate's "Unsupported types (<class 'str'>) passed
to `_gpu_gather_one`", which explain called a bug of the installed accelerate; gather_for_metrics((names, labels))
fell back to gather_object and its flat list of both ranks' items failed to unpack ("too many values to unpack
(expected 2)"), which explain did not know. Rank 0's lines as torch's excepthook printed them (paths shortened)."""

import pytest
from explaining import explained

GATHER = """\
[default0]:[rank0]: Traceback (most recent call last):
[default0]:[rank0]:   File "/home/me/eval_gather2.py", line 27, in <module>
[default0]:[rank0]:     main()
[default0]:[rank0]:   File "/home/me/eval_gather2.py", line 22, in main
[default0]:[rank0]:     predictions = accelerator.gather(predictions)
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/accelerator.py", line 3107, in gather
[default0]:[rank0]:     return gather(tensor)
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 378, in wrapper
[default0]:[rank0]:     return function(*args, **kwargs)
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 439, in gather
[default0]:[rank0]:     return _gpu_gather(tensor)
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 358, in _gpu_gather
[default0]:[rank0]:     return recursively_apply(_gpu_gather_one, tensor, error_on_other_type=True)
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 108, in recursively_apply
[default0]:[rank0]:     return honor_type(
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 82, in honor_type
[default0]:[rank0]:     return type(obj)(generator)
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 111, in <genexpr>
[default0]:[rank0]:     recursively_apply(
[default0]:[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 129, in recursively_apply
[default0]:[rank0]:     raise TypeError(
[default0]:[rank0]: TypeError: Unsupported types (<class 'str'>) passed to `_gpu_gather_one`. Only nested list/tuple/dicts of objects that are valid for `is_torch_tensor` should be passed.
"""

GATHER_FOR_METRICS = """\
[default0]:[rank0]: Traceback (most recent call last):
[default0]:[rank0]:   File "/home/me/eval_gather.py", line 27, in <module>
[default0]:[rank0]:     main()
[default0]:[rank0]:   File "/home/me/eval_gather.py", line 22, in main
[default0]:[rank0]:     predictions, references = accelerator.gather_for_metrics((predictions, labels))
[default0]:[rank0]: ValueError: too many values to unpack (expected 2)
"""


@pytest.mark.usefixtures("every_message_seen")
def test_gather_of_strings_is_the_values_gathered_not_a_bug_of_accelerate():
    found = explained(GATHER)
    assert found.id == "log.gather_not_tensors", found.summary
    assert "accelerate's gather was handed <class 'str'>, not a tensor" in found.summary
    assert "gather_object" in found.fix and "library_version_bug" not in found.details.get("alternatives", [])


def test_until_a_real_thread_shows_it_the_reading_is_likely():
    assert explained(GATHER).details["confidence"] == "likely"


def test_gather_for_metrics_of_a_tuple_with_names_unpacked_says_it_gathered_objects():
    found = explained(GATHER_FOR_METRICS)
    assert found.id == "log.gather_not_tensors", found.summary
    assert "could not be unpacked into 2 names" in found.summary and found.details["confidence"] == "likely"
    assert "preds = accelerator.gather_for_metrics(preds)" in found.fix and "eval_gather.py:22" in found.fix


@pytest.mark.parametrize(
    "text",
    [
        # the same unpacking of a batch, no gather in the line
        'Traceback (most recent call last):\n  File "/home/me/train.py", line 9, in <module>\n'
        "    inputs, labels = batch\nValueError: too many values to unpack (expected 2)\n",
        # another library's refusal of a type, not accelerate's
        "TypeError: Unsupported types (<class 'str'>) for this operation\n",
    ],
)
def test_other_unpacking_and_type_errors_are_not_a_gather_of_objects(text):
    assert explained(text).id != "log.gather_not_tensors"
