"""The certainty review's eighth part (helper V22, issue 19): the readings mapped from their sources on one day
(data loading, FSDP / DTensor / checkpoints, compiled packages beside torch, a script's mistakes with libraries
built on torch), each read again for whether the message alone establishes its cause and fix, and whether a real
public log shows the message with that cause. Each test gives the line as its source prints it, where the reading
holds (certain) and where another cause prints the same words (likely, another kind, or nothing).

- CPython's Unpickler.find_class "Can't get attribute 'X' on <module 'M' ...>" through torch.load is a class the
  loading program lacks. For ``__main__`` that is a model saved whole from a script that defined it: certain. For
  a named module it is as often a class the installed release of that module's package lacks: yolov5's
  checkpoints pickle torch.nn.SiLU, which torch 1.7 added, and on torch 1.6 print "Can't get attribute 'SiLU' on
  <module 'torch.nn.modules.activation'" (ultralytics/yolov5#1849, #4121: upgrade torch): likely there,
  ``dependency_version`` named.
"""

from __future__ import annotations

from explaining import certain, likely_with

TORCH_LOAD = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 69, in train\n'
    "    ckpt = torch.load(weights, map_location=device)  # load checkpoint\n"
    '  File "/home/ana/miniconda3/envs/yolo/lib/python3.8/site-packages/torch/serialization.py", line 584, in load\n'
    "    return _load(opened_zipfile, map_location, pickle_module, **pickle_load_args)\n"
    '  File "/home/ana/miniconda3/envs/yolo/lib/python3.8/site-packages/torch/serialization.py", line 842, in _load\n'
    "    result = unpickler.load()\n"
)


def test_a_torch_class_missing_from_an_older_torch_is_likely_a_version_not_a_class_to_define():
    line = (
        "AttributeError: Can't get attribute 'SiLU' on <module 'torch.nn.modules.activation' from "
        "'/home/ana/miniconda3/envs/yolo/lib/python3.8/site-packages/torch/nn/modules/activation.py'>\n"
    )
    likely_with(TORCH_LOAD + line, "checkpoint_class_missing", "log.dependency_version")


def test_a_project_module_class_missing_is_likely_too():
    line = "AttributeError: Can't get attribute 'DetectionModel' on <module 'models.yolo' from '/home/ana/models/yolo.py'>\n"
    likely_with(TORCH_LOAD + line, "checkpoint_class_missing", "log.dependency_version")


def test_a_class_of_the_saving_script_stays_certain():
    line = "AttributeError: Can't get attribute 'UNet' on <module '__main__' from 'eval.py'>\n"
    certain(TORCH_LOAD + line, "checkpoint_class_missing")
