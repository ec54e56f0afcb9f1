"""Train misses whose log holds a message the catalog knows (session 44, T65): each class fixed from the code that
prints the message, tested on the real line."""

from __future__ import annotations

import io

from explaining import explained, filled

from torchdoctor.explain.diagnose import explain

# corpus/train/5876.txt (pytorch/examples#343): the MNIST example under DataParallel over unequal GPUs; Thrust's
# bulk launcher (CUDA 7-8) raising cudaErrorMemoryAllocation from a kernel launch, torch passing it on
THRUST_OOM = "RuntimeError: after cudaLaunch in triple_chevron_launcher::launch(): out of memory\n"
IMBALANCE = "UserWarning: " + filled("torch_native:dataparallel-imbalance-between-gpus", "0", "1").replace(
    "\\n", "\n"
)


def test_thrusts_launch_out_of_memory_is_an_out_of_memory_with_no_gpu_named():
    found = explained(THRUST_OOM)
    assert found.id == "log.cuda_oom" and found.details["confidence"] == "likely", found.summary
    # no warning above it chose the weak GPU (seen_on.tsv may still name it: 5876 printed the same line)
    assert "chosen_by" not in found.details and found.details["kind"] == "cuda_oom"


def test_an_out_of_memory_outside_the_allocator_after_the_imbalance_warning_is_the_weak_gpu():
    for error in (THRUST_OOM, "RuntimeError: CUDA error: out of memory\n"):
        found = explained(IMBALANCE + "\n[...]\n" + error)
        assert found.id == "log.mismatched_gpus" and found.details["confidence"] == "likely", found.summary
        assert (
            "GPU 0 has under 75% of GPU 1's" in found.summary
            and "log.cuda_oom" in found.details["alternatives"]
        )
        assert "CUDA_VISIBLE_DEVICES" in found.fix and "smaller batch" in found.fix


def test_the_allocators_own_out_of_memory_after_the_warning_stays_the_finding():
    allocator = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.69 GiB of which 1.12 GiB is free.\n"
    )
    assert explained(IMBALANCE + "\n" + allocator).id == "log.cuda_oom"


# corpus/train/1348.txt (ultralytics/yolov5#68): yolov5's train.py loading weights saved whole; torch.load's unpickler
# imports the module the pickled model's class lives in (models.yolo), which does not import from where it ran
UNPICKLED_1_X = """Traceback (most recent call last):
  File "C:/projects/YOLOV5/yolov5/train.py", line 88, in train
    model.load_state_dict(torch.load(new_weights))
  File "C:\\Python36\\lib\\site-packages\\torch\\serialization.py", line 368, in load
    return _load(f, map_location, pickle_module)
  File "C:\\Python36\\lib\\site-packages\\torch\\serialization.py", line 542, in _load
    result = unpickler.load()
ModuleNotFoundError: No module named 'models.yolo'
"""
# the same import as torch 1.13+ makes it: serialization.py's UnpicklerWrapper.find_class
UNPICKLED_2_X = """Traceback (most recent call last):
  File "/home/u/detect.py", line 12, in <module>
    ckpt = torch.load("best.pt", map_location="cpu", weights_only=False)
  File "/opt/venv/lib/python3.11/site-packages/torch/serialization.py", line 1471, in load
    return _load(
  File "/opt/venv/lib/python3.11/site-packages/torch/serialization.py", line 1964, in _load
    result = unpickler.load()
  File "/opt/venv/lib/python3.11/site-packages/torch/serialization.py", line 1953, in find_class
    return super().find_class(mod_name, name)
ModuleNotFoundError: No module named 'models'
"""


def test_a_module_torch_loads_unpickler_cannot_import_is_the_checkpoints_pickled_class():
    for log, module in ((UNPICKLED_1_X, "models.yolo"), (UNPICKLED_2_X, "models")):
        found = explained(log)
        assert found.id == "log.checkpoint_class_missing" and found.details["confidence"] == "likely", (
            found.summary
        )
        assert f"class lives in module {module}" in found.summary and "torch imports" not in found.summary
        assert (
            "__init__.py" in found.fix and "state_dict" in found.fix and "pip install models" not in found.fix
        )


def test_a_module_missing_elsewhere_is_still_a_package_not_installed():
    imported_by_torch = """Traceback (most recent call last):
  File "/home/u/train.py", line 3, in <module>
    from torch.utils.tensorboard import SummaryWriter
  File "/opt/venv/lib/python3.11/site-packages/torch/utils/tensorboard/__init__.py", line 1, in <module>
    import tensorboard
ModuleNotFoundError: No module named 'tensorboard'
"""
    imported_by_the_script = """Traceback (most recent call last):
  File "/home/u/train.py", line 5, in <module>
    import models
ModuleNotFoundError: No module named 'models'
"""
    for log in (imported_by_torch, imported_by_the_script + "state = torch.load(path)\n"):
        assert explained(log).id == "log.broken_install", log


def test_the_unpicklers_missing_module_is_not_also_read_as_a_dependency_of_torch():
    # launchers.MISSING_LAUNCHER's holds: no second finding telling the user to install 'models' for torch
    for log in (UNPICKLED_1_X, UNPICKLED_2_X):
        findings = explain(["-"], stdin=io.BytesIO(log.encode()))
        assert [f.id for f in findings if f.id == "log.broken_install"] == [], [f.summary for f in findings]


# torch.load(..., pickle_module=dill): dill's own find_class imports the class's module, below torch.load's frames
def test_a_pickle_modules_own_find_class_below_torch_load_is_the_checkpoints_class_too():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 30, in <module>\n'
        '    ckpt = torch.load("last.pt", pickle_module=dill)\n'
        '  File "/opt/venv/lib/python3.10/site-packages/torch/serialization.py", line 1438, in _load\n'
        "    result = unpickler.load()\n"
        '  File "/opt/venv/lib/python3.10/site-packages/dill/_dill.py", line 452, in find_class\n'
        "    return StockUnpickler.find_class(self, module, name)\n"
        "ModuleNotFoundError: No module named 'sklearn'\n"
    )
    assert found.id == "log.checkpoint_class_missing" and found.details["confidence"] == "likely", (
        found.summary
    )
    assert "class lives in module sklearn" in found.summary and "dependency of dill" not in found.summary
