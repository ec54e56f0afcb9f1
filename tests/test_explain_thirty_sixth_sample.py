"""The thirty-sixth sample's train misses: each kind on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1617-1650)."""

from __future__ import annotations

import pytest
from explaining import explained as lead


def kind_of(text: str) -> str:
    return lead(text).id.removeprefix("log.")


def named(finding) -> list[str]:
    """The other readings a likely finding names, without their ``log.`` prefix."""
    return [kind.removeprefix("log.") for kind in finding.details.get("alternatives", [])]


OWN_FRAME = '  File "/home/me/train.py", line 88, in train\n    loss.backward()\n'


def test_backward_on_a_tuple_or_a_number_is_a_loss_that_is_not_a_tensor():
    # 1628 (Nonhomogeneous_Image_Dehazing#2), 1630 (DFF#10): CPython's PyObject_GetAttr on the loss
    found = lead(OWN_FRAME + "AttributeError: 'tuple' object has no attribute 'backward'\n")
    assert found.id == "log.loss_not_tensor" and found.details["confidence"] == "certain"
    assert "tuple" in found.summary and "unpack" in found.fix
    assert kind_of("AttributeError: 'float' object has no attribute 'backward'\n") == "loss_not_tensor"
    # something that returned None is not a loss of the wrong type
    assert (
        kind_of(OWN_FRAME + "AttributeError: 'NoneType' object has no attribute 'backward'\n")
        != "loss_not_tensor"
    )


def test_a_tensor_attribute_read_from_a_tuple_is_likely_a_model_output_tuple():
    # 1635 (pytorch/ignite#2781): the model's outputs passed on whole to a metric
    found = lead("AttributeError: 'tuple' object has no attribute 'shape'\n")
    assert found.id == "log.model_output_tuple" and found.details["confidence"] == "likely"
    assert named(found) == ["batch_not_tensor"] and "logits, *rest = model(x)" in found.fix
    # .to on a tuple stays the batch's; an attribute no tensor has is not this
    assert kind_of("AttributeError: 'tuple' object has no attribute 'to'\n") == "batch_not_tensor"
    assert kind_of("AttributeError: 'tuple' object has no attribute 'keys'\n") != "model_output_tuple"


def test_a_module_called_as_its_class():
    # 1646 (timeseriesAI/tsai#517): a name imported as a module and called
    found = lead(
        "    learn = ts_learner(dls, InceptionTimePlus)\nTypeError: 'module' object is not callable\n"
    )
    # no frame says whose code made the call (tsai's ts_learner called it): likely, a library's call named
    assert found.id == "log.module_called_as_class" and found.details["confidence"] == "likely"
    assert "from " in found.fix
    # another object that is not callable is not this
    assert kind_of("TypeError: 'Tensor' object is not callable\n") != "module_called_as_class"


def test_a_colon_from_a_timestamp_in_a_windows_name():
    # 1622 (ZHUANGHP/Analytic-continual-learning#7): os.makedirs on Windows, ERROR_INVALID_NAME
    found = lead(
        "OSError: [WinError 123] The filename, directory name, or volume label syntax is incorrect: "
        "'saved_models\\\\resnet32\\\\ACIL\\\\2024-04-11T14:30:35'\n"
    )
    assert found.id == "log.windows_invalid_filename" and found.details["confidence"] == "certain"
    assert "%H-%M-%S" in found.fix
    # open() on Windows: the C runtime's EINVAL with the colon in the quoted name
    found = lead("OSError: [Errno 22] Invalid argument: 'checkpoints/squeezenet_0921_10:14:29.pth'\n")
    assert found.id == "log.windows_invalid_filename" and "squeezenet_0921_10:14:29.pth" in found.summary
    # Errno 22 on a name with no such character (a drive's colon only) has other causes
    assert (
        kind_of("OSError: [Errno 22] Invalid argument: 'C:\\\\data\\\\train.csv'\n")
        != "windows_invalid_filename"
    )


def test_a_module_or_signal_only_unix_has():
    # 1624 (analogdevicesinc/ai8x-training#248): train.py imports resource on Windows, not a broken install
    found = lead(
        '  File "train.py", line 63, in <module>\n    import resource\n'
        "ModuleNotFoundError: No module named 'resource'\n"
    )
    assert found.id == "log.unix_only_module" and found.details["confidence"] == "certain"
    assert "'resource'" in found.summary and "win32" in found.fix
    assert kind_of("AttributeError: module 'signal' has no attribute 'SIGALRM'\n") == "unix_only_module"
    # a third-party module missing is not this; a signal Windows has is not either
    assert kind_of("ModuleNotFoundError: No module named 'resources_pb2'\n") != "unix_only_module"
    assert kind_of("AttributeError: module 'signal' has no attribute 'SIGINTX'\n") != "unix_only_module"
    assert "the training code uses the module 'resource'" in found.summary


def test_a_unix_only_signal_read_in_torchs_own_frame_is_not_the_training_codes():
    # pytorch/pytorch#85427: torch 1.13.0's torchrun import reaches its file-based timer, whose default argument
    # is signal.SIGKILL; the raising frame is torch's, so the user has nothing to guard (a release or WSL)
    from test_explain_fixed_bugs import SIGKILL

    found = lead(SIGKILL)
    assert found.id == "log.unix_only_module"
    assert "torch's own code" in found.summary and "not your code" in found.summary, found.summary
    assert "the training code" not in found.summary and "win32" not in found.fix, found.fix
    assert "pip install -U torch" in found.fix and "WSL" in found.fix


def test_a_unix_only_module_in_a_package_with_no_windows_release_is_not_promised_one():
    # a package written for Unix alone may have no release that runs on Windows (the frames are written for this
    # test, in a package's install folder): the fix does not promise one, and WSL stays
    found = lead(
        "Traceback (most recent call last):\n"
        '  File "C:\\work\\serve.py", line 2, in <module>\n'
        "    import uvloop\n"
        '  File "C:\\Python311\\Lib\\site-packages\\uvloop\\__init__.py", line 7, in <module>\n'
        "    import resource\n"
        "ModuleNotFoundError: No module named 'resource'\n"
    )
    assert found.id == "log.unix_only_module" and "uvloop's own code" in found.summary, found.summary
    assert "if there is one" in found.fix and "WSL" in found.fix, found.fix


def test_a_command_line_script_run_inside_a_notebook():
    # 1626 (junyanz/pytorch-CycleGAN-and-pix2pix#392): IPython's line for SystemExit, argparse's status 2
    found = lead(
        "When train.py is executed in jupyter notebook it shows :An exception has occurred, use %tb to see the "
        "full traceback.\n\nSystemExit: 2\n"
    )
    assert found.id == "log.argparse_in_notebook" and found.details["confidence"] == "certain"
    assert "!python train.py" in found.fix and "parse_known_args" in found.fix
    assert (
        kind_of(
            "ipykernel_launcher.py: error: unrecognized arguments: -f /root/.local/share/jupyter/kernel-1.json\n"
        )
        == "argparse_in_notebook"
    )
    # a script's own sys.exit(0) in a notebook is not argparse refusing the kernel's arguments
    assert (
        kind_of("An exception has occurred, use %tb to see the full traceback.\n\nSystemExit: 0\n")
        != "argparse_in_notebook"
    )


def test_mmdetections_class_count_check():
    # 1620 (open-mmlab/mmdetection#9606): the classes given where RepeatDataset does not pass them on
    found = lead(
        "AssertionError: The `num_classes` (1) in SSDHead of MMDataParallel does not matches the length of "
        "`CLASSES` 80) in RepeatDataset\n"
    )
    assert found.id == "log.dataset_classes_mismatch" and found.details["confidence"] == "certain"
    assert (
        "SSDHead predicts 1 classes but RepeatDataset has 80" in found.summary
        and "dataset=dict(" in found.fix
    )
    # another assertion on num_classes is not mmdetection's check
    assert kind_of("AssertionError: num_classes must be positive\n") != "dataset_classes_mismatch"


DISPATCHER = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"


@pytest.mark.usefixtures("every_message_seen")  # a reading of the line as printed
def test_a_cpu_tensor_raised_inside_an_installed_library_is_likely_its_bug():
    # 1641 (LoganBooker/prodigy-plus-schedule-free#11): an optimizer's step after resuming, its state on the CPU
    library = '  File "C:\\\\Python310\\\\lib\\\\site-packages\\\\prodigyplus\\\\core_optimiser.py", line 570, in step\n'
    found = lead(OWN_FRAME + library + DISPATCHER)
    # raised in the optimizer's own step, no module's forward above it: the package's bug leads (session 43)
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert found.details["alternatives"][0] == "log.device_mismatch"
    # 1633 (ostris/ai-toolkit#742): the message alone does not say whose code left a tensor on the CPU
    assert lead(DISPATCHER).details["confidence"] == "likely"
    # the script's own traceback with torch's frames only: its code, certain
    torch_frame = (
        '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1, in _call_impl\n'
    )
    assert lead(OWN_FRAME + torch_frame + DISPATCHER).details["confidence"] == "certain"
