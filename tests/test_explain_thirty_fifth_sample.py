"""The thirty-fifth sample's train misses: each kind on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1567-1599)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


def kind_of(text: str) -> str:
    return lead(text).id.removeprefix("log.")


def named(finding) -> list[str]:
    return [kind.removeprefix("log.") for kind in finding.details.get("alternatives", [])]


TRITON_PTX = (
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "RuntimeError: Internal Triton PTX codegen error: \n"
    "ptxas fatal   : Value 'sm_110' is not defined for option 'gpu-name'\n"
)


def test_triton_ptxas_refusing_the_gpu_is_likely_and_names_a_cuda_triton_on_rocm():
    # ROCm/legacy-rocm-build#3060: a CUDA Triton beside a ROCm torch on an RX 7900 XTX (gfx1100 read as sm_110)
    found = lead(TRITON_PTX)
    assert found.id == "log.cuda_build" and found.details["confidence"] == "likely"
    assert "broken_install" in named(found)
    assert "TRITON_PTXAS_PATH" in found.fix and "pytorch-triton-rocm" in found.fix


def test_nvcc_refusing_an_architecture_stays_a_certain_build_failure():
    found = lead("nvcc fatal   : Value 'sm_90' is not defined for option 'gpu-name'\n")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "certain"
    assert "broken_install" not in named(found)


def test_stft_without_return_complex_is_code_for_an_older_torch():
    # zhenye234/CoMoSpeech#5: aten/src/ATen/native/SpectralOps.cpp, torch 2.0
    found = lead(
        "RuntimeError: stft requires the return_complex parameter be given for real inputs, and will further "
        "require that return_complex=True in a future PyTorch release.\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "return_complex=True" in found.fix and "view_as_real" in found.fix


def test_stft_with_return_complex_false_deprecated_is_not_this():
    assert kind_of("UserWarning: stft with return_complex=False is deprecated.\nRuntimeError: oops\n") != (
        "dependency_version"
    )


def test_integer_division_of_torch_1_6_is_code_for_an_older_torch():
    # ma-compbio/Hyper-SAGNN#3
    found = lead(
        "RuntimeError: Integer division of tensors using div or / is no longer supported, and in a future release "
        "div will perform true division as in Python 3. Use true_divide or floor_divide (// in Python) instead.\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "floor_divide" in found.fix and "1.6" in found.summary


def test_python_integer_division_by_zero_is_not_this():
    assert kind_of("ZeroDivisionError: integer division or modulo by zero\n") != "dependency_version"


def test_bool_subtraction_is_likely_code_for_torch_1_1():
    # eth-sri/diffai#12, yhenon/pytorch-retinanet#106
    found = lead(
        "RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
        "invert a mask, use the `~` or `logical_not()` operator instead.\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "~mask" in found.fix


def test_bool_negation_is_not_the_subtraction_refusal():
    assert (
        kind_of(
            "RuntimeError: Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
            "a mask, use the `~` or `logical_not()` operator instead.\n"
        )
        != "dependency_version"
    )


def test_reduce_on_plateau_without_a_monitor_in_lightning():
    # LearnedVector/A-Hackers-AI-Voice-Assistant#54: lightning/pytorch/core/optimizer.py
    found = lead(
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: `configure_optimizers` must include a "
        'monitor when a `ReduceLROnPlateau` scheduler is used. For example: {"optimizer": optimizer, '
        '"lr_scheduler": scheduler, "monitor": "metric_to_track"}\n'
    )
    # the line alone does not say whose configure_optimizers it was (a library's model prints it too: the
    # fortieth sample, darts 0.17.0): likely, the library's release named
    assert found.id == "log.scheduler_monitor_missing" and found.details["confidence"] == "likely"
    assert '"monitor"' in found.fix


def test_the_scheduler_dict_wording_is_the_same_kind():
    assert (
        kind_of(
            "lightning.fabric.utilities.exceptions.MisconfigurationException: The lr scheduler dict must include a "
            "monitor when a `ReduceLROnPlateau` scheduler is used. For example: {}\n"
        )
        == "scheduler_monitor_missing"
    )


def test_a_monitored_metric_missing_is_not_a_missing_monitor():
    assert (
        kind_of(
            "pytorch_lightning.utilities.exceptions.MisconfigurationException: ReduceLROnPlateau conditioned on metric "
            "val_loss which is not available. Available metrics are: loss\n"
        )
        != "scheduler_monitor_missing"
    )


def test_to_on_a_list_in_the_batch():
    # huggingface/lerobot#713: batch['task'] is a list of strings
    found = lead(
        '  File "./lerobot/examples/3_train_policy.py", line 102, in <dictcomp>\n'
        "    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}\n"
        "AttributeError: 'list' object has no attribute 'to'\n"
    )
    assert found.id == "log.batch_not_tensor" and found.details["confidence"] == "certain"
    assert "is_tensor" in found.fix and "list" in found.summary


def test_to_on_none_is_not_a_container_batch():
    assert kind_of("AttributeError: 'NoneType' object has no attribute 'to'\n") != "batch_not_tensor"


def test_another_missing_attribute_of_a_tuple_is_not_this():
    assert kind_of("AttributeError: 'tuple' object has no attribute 'shape'\n") != "batch_not_tensor"


def test_load_best_model_strategies_name_the_old_argument():
    # zjunlp/DeepKE#394 (trainer_arguments: transformers/training_args.py)
    found = lead(
        "ValueError: --load_best_model_at_end requires the save and eval strategy to match, but found - Evaluation "
        "strategy: no - Save strategy: epoch\n"
    )
    assert found.id == "log.trainer_arguments" and "evaluation_strategy" in found.fix


def test_datasets_refusing_its_local_cache_is_an_old_datasets_beside_a_new_fsspec():
    # shibing624/MedicalGPT#285: datasets/builder.py as_dataset, fsspec 2023.10's LocalFileSystem.protocol
    found = lead("NotImplementedError: Loading a dataset cached in a LocalFileSystem is not supported.\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "fsspec<2023.10.0" in found.fix and "datasets" in found.fix


def test_a_remote_cache_refused_is_not_the_fsspec_change():
    assert kind_of("NotImplementedError: Loading a dataset cached in a S3FileSystem is not supported.\n") != (
        "dependency_version"
    )
