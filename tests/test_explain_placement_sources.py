"""The device checks read from the code that prints them (session 37, PLACE2): every wording torch's releases give
"Expected all tensors to be on the same device" (ATen's dispatcher in adaption.cpp, first "found at least two
devices, A and B! (when checking ar[gu|ug]ment for argument X in method M)", later "but got X is on B, different
from other tensors on A (when checking argument in method M)"), torch.compile's two (FakeTensor's "Unhandled
FakeTensor Device Propagation", _prims_common's check_same_device), a pair with the meta device in it (a weight
never loaded, not one left on the CPU), and a traceback through an installed package, which names that package as
the one that may have placed the tensor."""

from __future__ import annotations

import torch
from explaining import explained, filled, likely_with, traceback_of


def test_the_later_dispatcher_wording_names_both_devices_and_the_argument():
    found = likely_with(
        "RuntimeError: "
        + filled(
            "torch_native:expected-all-tensors-same-device-got", "mat2", "cpu", "cuda:0", "wrapper_CUDA_mm"
        ),
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "cuda:0 and cpu" in found.summary and "argument mat2 of wrapper_CUDA_mm" in found.summary
    # a CPU tensor beside a GPU one: no reading that needs two GPUs (device_map, GPU selection) is offered
    assert "log.gpu_selection" not in found.details["alternatives"], found.details["alternatives"]


def test_the_first_releases_misspelt_argument_still_names_the_argument():
    found = likely_with(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cpu! (when checking arugment for argument index in method wrapper__index_select)",
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "argument index of wrapper__index_select" in found.summary


def test_torch_compiles_fake_tensor_wording_is_a_device_mismatch():
    found = likely_with(
        "torch._dynamo.exc.TorchRuntimeError: Failed running call_function <built-in function add>(*(FakeTensor(..., "
        "device='cuda:0', size=(23, 57)), FakeTensor(..., size=(57,))), **{}):\n"
        + filled("torch_native:fake-tensor-device-propagation", "aten.add.Tensor", "cuda:0", "cpu")
        + "\n",
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "cuda:0 and cpu" in found.summary


def test_a_meta_tensor_beside_a_real_one_is_a_weight_never_loaded():
    # torch's own check_same_device (torch/_prims_common/__init__.py), raised here by torch itself
    text = traceback_of(lambda: torch.zeros(2, device="meta") + torch.zeros(2))
    assert "is not on the expected device meta" in text
    found = likely_with(text, "meta_weights_not_loaded", "log.library_version_bug")
    assert "to_empty" in found.fix


def test_the_dispatchers_pair_with_meta_is_not_read_as_a_tensor_left_on_the_cpu():
    found = likely_with(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, meta and "
        "cuda:0! (when checking argument for argument mat2 in method wrapper_CUDA_mm)",
        "meta_weights_not_loaded",
        "log.library_version_bug",
    )
    assert "meta device" in found.summary


def test_a_traceback_through_an_installed_package_names_it_as_the_likely_placer():
    # sbi 0.14's SNRE_A._loss made its labels on the CPU while training on the GPU (train 1821's thread,
    # mackelab/sbi: the maintainer's fix moved them to the device); the traceback as Python prints it
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        "    density_estimator = inference.train()\n"
        '  File "/opt/conda/lib/python3.8/site-packages/sbi/inference/snre/snre_a.py", line 110, in _loss\n'
        "    return self._classifier_loss(logits, labels)\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/functional.py", line 3029, in '
        "binary_cross_entropy\n"
        "    return torch._C._nn.binary_cross_entropy(input, target, weight, reduction_enum)\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cpu!\n"
    )
    found = likely_with(text, "device_mismatch", "log.library_version_bug")
    assert "sbi" in found.summary and "pip install -U sbi" in found.fix


def test_the_scripts_own_traceback_keeps_it_certain():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        "    loss = criterion(out, labels)\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/functional.py", line 3029, in cross_entropy\n'
        "    return torch._C._nn.cross_entropy_loss(input, target, weight, reduction_enum)\n"
        "RuntimeError: All input tensors must be on the same device. Received cuda:0 and cpu\n"
    )
    found = explained(text)
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "certain", found.summary
    assert "pip install -U" not in found.fix


# DataParallel's device_ids[0] check, as torch/nn/parallel/data_parallel.py and Lightning 1.0-1.2's
# pytorch_lightning/overrides/data_parallel.py both print it (message_history.tsv holds Lightning's)
DP_CHECK = (
    "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of "
    "them on device: cpu\n"
)


def test_dataparallels_check_from_the_scripts_own_call_stays_certain():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 88, in <module>\n'
        "    out = model(x)\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/parallel/data_parallel.py", line 155, in forward\n'
        '    raise RuntimeError("module must have its parameters and buffers "\n' + DP_CHECK
    )
    found = explained(text)
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "certain", found.summary


def test_dataparallels_check_raised_by_a_trainer_that_wrapped_the_model_is_only_likely():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 88, in <module>\n'
        "    trainer.fit(model)\n"
        '  File "/opt/conda/lib/python3.8/site-packages/pytorch_lightning/overrides/data_parallel.py", line 64, in '
        "forward\n"
        '    raise RuntimeError("module must have its parameters and buffers "\n' + DP_CHECK
    )
    found = likely_with(text, "device_mismatch", "log.library_version_bug")
    assert "pytorch_lightning" in found.summary


def _raised_below(frames: list[tuple[str, str]], line: str) -> str:
    """A traceback from the script's own frame down through ``frames`` ((path, code)), ending in ``line``."""
    text = 'Traceback (most recent call last):\n  File "/home/u/train.py", line 30, in <module>\n    main()\n'
    for path, code in frames:
        text += f'  File "{path}", line 100, in f\n    {code}\n'
    return text + line + "\n"


SITE = "/opt/conda/lib/python3.10/site-packages"
OFFLOADED = "RuntimeError: " + filled("third_party:accelerate-move-offloaded-model")


# A message mapped from its source alone stays likely until a labelled real log shows it (seen_on.tsv): the
# script's own call leads with the same reading and fix as a library's, and is not read as anything else.


def test_moving_a_partly_offloaded_model_from_the_script_says_to_leave_it_where_it_was_put():
    text = _raised_below(
        [(f"{SITE}/accelerate/big_modeling.py", 'raise RuntimeError("You can\'t move a model ...")')],
        OFFLOADED,
    )
    found = explained(text)
    assert found.id == "log.offloaded_model_moved", found.summary
    assert "drop the .to(device)" in found.fix and "device_map={'': 0}" in found.fix


def test_moving_a_partly_offloaded_model_from_deepspeeds_engine_is_only_likely():
    # deepspeed.initialize's engine moving the module it was given (_configure_distributed_model: module.to)
    text = _raised_below(
        [
            (f"{SITE}/deepspeed/runtime/engine.py", "self.module.to(self.device)"),
            (f"{SITE}/accelerate/big_modeling.py", 'raise RuntimeError("You can\'t move a model ...")'),
        ],
        OFFLOADED,
    )
    found = likely_with(text, "offloaded_model_moved", "log.library_version_bug")
    assert "without a device_map" in found.fix


BNB_TO = "ValueError: " + filled("third_party:transformers-to-not-supported-bitsandbytes")


def test_the_scripts_to_on_a_bitsandbytes_model_says_to_choose_the_device_when_loading():
    text = _raised_below([(f"{SITE}/transformers/modeling_utils.py", "raise ValueError(")], BNB_TO)
    found = explained(text)
    assert found.id == "log.quantized_model_cast", found.summary
    assert "device_map={'': LOCAL_RANK}" in found.fix


def test_from_pretrained_moving_a_bitsandbytes_model_itself_is_only_likely():
    # from_pretrained -> accelerate's dispatch_model -> PreTrainedModel.to: the installed releases disagree
    text = _raised_below(
        [
            (f"{SITE}/transformers/modeling_utils.py", "dispatch_model(model, **device_map_kwargs)"),
            (f"{SITE}/accelerate/big_modeling.py", "model.to(device)"),
            (f"{SITE}/transformers/modeling_utils.py", "raise ValueError("),
        ],
        BNB_TO,
    )
    found = likely_with(text, "quantized_model_cast", "log.library_version_bug")
    assert "pip install -U transformers accelerate bitsandbytes" in found.fix


# torch 0.4's checked_cast_tensor (aten/src/ATen/Utils.h), filled as it printed the two tensor types
def test_torch_0_4s_type_check_with_a_cpu_argument_is_a_device_mismatch():
    line = filled(
        "torch_native:expected-object-of-type-found-type",
        "torch.cuda.FloatTensor",
        "torch.FloatTensor",
        "3",
        "other",
    )
    found = likely_with(f"RuntimeError: {line}\n", "device_mismatch", "log.library_version_bug")
    assert "argument #3 'other' is on the CPU" in found.summary


def test_torch_0_4s_type_check_with_a_gpu_argument_says_the_operation_is_on_the_cpu():
    found = likely_with(
        "RuntimeError: Expected object of type Variable[torch.FloatTensor] but found type "
        "Variable[torch.cuda.FloatTensor] for argument #2 'weight'\n",
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "argument #2 'weight' is on the GPU, the operation on the CPU" in found.summary
    assert "log.gpu_selection" not in found.details["alternatives"]


def test_torch_0_4s_type_check_between_two_cpu_types_is_no_device_mismatch():
    text = (
        "RuntimeError: Expected object of type torch.DoubleTensor but found type torch.FloatTensor for argument "
        "#2 'weight'\n"
    )
    assert explained(text).id != "log.device_mismatch"


def test_the_first_wording_of_the_bitsandbytes_to_refusal_is_read_too():
    # transformers mid-2023 (bitsandbytes-foundation/bitsandbytes#547's traceback): no "bitsandbytes" in it
    found = explained(
        "ValueError: `.to` is not supported for `4-bit` or `8-bit` models. Please use the model as it is\n"
    )
    assert found.id == "log.quantized_model_cast", found.summary


def test_thcs_arguments_on_different_gpus_is_a_device_mismatch_with_dataparallels_fix():
    # THC's check (torch 0.1-1.x), printed with the .cu file and line that raised it
    line = filled("torch_native:arguments-located-on-different-gpus")
    found = likely_with(
        f"RuntimeError: {line} at /opt/conda/conda-bld/pytorch_1532581333611/work/aten/src/THC/generated/../generic/"
        "THCTensorMathPointwise.cu:314\n",
        "device_mismatch",
        "log.gpu_selection",
    )
    assert "DataParallel" in found.fix and "CUDA_VISIBLE_DEVICES=0" in found.fix
    # releases from before device_map: that reading is not offered
    assert "log.device_map_distributed" not in found.details["alternatives"]


def test_an_rnns_hidden_state_on_the_cpu_says_to_make_it_on_the_inputs_device():
    # RNN.h check_attributes, as torch fills it for an LSTM given torch.zeros(...) as its hidden state
    line = filled("torch_native:rnn-input-and-tensors-not-same-device", "hidden", "cuda:0", "hidden", "cpu")
    found = likely_with(f"RuntimeError: {line}\n", "device_mismatch", "log.library_version_bug")
    assert "hidden state" in found.summary and "cuda:0" in found.summary
    assert "device=x.device" in found.fix
    assert "log.gpu_selection" not in found.details["alternatives"]


def test_an_rnns_weights_on_another_gpu_is_read_too():
    line = filled(
        "torch_native:rnn-input-and-tensors-not-same-device", "parameter", "cuda:1", "parameter", "cuda:0"
    )
    found = likely_with(f"RuntimeError: {line}\n", "device_mismatch", "log.gpu_selection")
    assert "its weights on cuda:0" in found.summary


def _through_accelerate_then_peft() -> list[str]:
    """A traceback through accelerate's launcher (outer) and peft's model code (inner, the frame that raised)."""
    return [
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 40, in <module>',
        "    accelerator.backward(model(**batch).loss)",
        '  File "/opt/conda/lib/python3.10/site-packages/accelerate/utils/operations.py", line 820, in forward',
        "    return model_forward(*args, **kwargs)",
        '  File "/opt/conda/lib/python3.10/site-packages/peft/tuners/lora/layer.py", line 497, in forward',
        "    result = result + lora_B(lora_A(dropout(x))) * scaling",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2210, in linear',
        "    return torch._C._nn.linear(input, weight, bias)",
    ]


_TWO_DEVICES = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def test_a_traceback_pasted_below_its_error_names_the_innermost_installed_package():
    """Pasted below the error line, the traceback's frames are read as context: the package named is the one
    whose frame is nearest the raise (peft's), not the outermost installed one (accelerate's launcher)."""
    found = likely_with(
        "\n".join([_TWO_DEVICES, "", *_through_accelerate_then_peft()]) + "\n",
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "through peft's code" in found.summary and "pip install -U peft" in found.fix, found.summary


def test_a_traceback_above_its_error_names_the_innermost_installed_package_too():
    found = likely_with(
        "\n".join([*_through_accelerate_then_peft(), _TWO_DEVICES]) + "\n",
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "through peft's code" in found.summary and "pip install -U peft" in found.fix, found.summary


def _through_deepspeed() -> list[str]:
    """Another error's traceback, through deepspeed's engine (an installed package) and not peft's."""
    return [
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 12, in <module>',
        "    engine, *_ = deepspeed.initialize(model=model, config=cfg)",
        '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 301, in __init__',
        "    self._configure_distributed_model(model)",
        "ValueError: the first attempt's own error",
    ]


def _own_code_only() -> list[str]:
    """The device error's traceback through the script's code and torch's only."""
    return [
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 40, in <module>',
        "    out = model(x)",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2210, in linear',
        "    return torch._C._nn.linear(input, weight, bias)",
    ]


def test_another_errors_traceback_through_a_package_is_not_named_for_the_device_error():
    """Two tracebacks in one paste: the frames of the one that holds the device error decide, not the last
    installed frame in the file (deepspeed's, in the first attempt's traceback)."""
    found = explained("\n".join([*_through_deepspeed(), "", *_own_code_only(), _TWO_DEVICES]) + "\n")
    assert found.id == "log.device_mismatch"
    assert "deepspeed" not in found.summary and "deepspeed" not in found.fix, found.summary


def test_the_device_errors_own_traceback_is_named_when_a_later_one_runs_through_another_package():
    found = likely_with(
        "\n".join([*_through_accelerate_then_peft(), _TWO_DEVICES, "", *_through_deepspeed()]) + "\n",
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "through peft's code" in found.summary and "deepspeed" not in found.summary, found.summary


def test_a_traceback_pasted_below_its_error_is_its_own_not_the_next_errors():
    """The error line first, its traceback pasted under it, then another error's traceback: peft's frame (the
    device error's own traceback) is named, not deepspeed's (the next one's, the last in the file)."""
    found = likely_with(
        "\n".join([_TWO_DEVICES, "", *_through_accelerate_then_peft(), "", *_through_deepspeed()]) + "\n",
        "device_mismatch",
        "log.library_version_bug",
    )
    assert "through peft's code" in found.summary and "deepspeed" not in found.summary, found.summary
