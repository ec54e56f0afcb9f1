"""Catalog templates chosen by how many issue threads post them (docs/explain.md, "Templates by how often users post
them"), each read from the code that prints it: the line as its source prints it with real values, a second release's
or a second call's wording where there is one, and a near miss that must not be named with that kind.

The sources: torch/autograd/__init__.py (_make_grads), torch/nn/modules/module.py (load_state_dict),
torch/csrc/distributed/c10d (ProcessGroupNCCL's reduce_scatter_tensor and all_gather_into_tensor size checks),
lightning/pytorch/utilities/data.py (has_len_all_ranks).
"""

from __future__ import annotations

import io

import pytest
from explaining import names_its_kind, template

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def findings(text: str):
    """Every finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))


# (line as printed, kind, confidence, words the summary or fix must hold)
NAMED = [
    # _make_grads: torch.ones(1) handed as the gradient of a 0-dim loss (a WGAN's backward(one), code from 0.3)
    (
        "RuntimeError: "
        + template("torch:mismatch-in-shape-grad-output-has", "0", "torch.Size([1])", "0", "torch.Size([])")
        + "\n",
        "backward_gradient_shape",
        "certain",
        ["0-dimensional", "torch.ones_like(loss)", "0.4"],
    ),
    # the same check, gradients for outputs gathered by DataParallel (one per GPU)
    (
        '  File "/usr/lib/python3/site-packages/torch/autograd/__init__.py", line 50, in _make_grads\n'
        '    raise RuntimeError("Mismatch in shape: grad_output["\n'
        "RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([4]) and output[0] has a shape "
        "of torch.Size([1]).\n",
        "backward_gradient_shape",
        "certain",
        ["torch.Size([4])", "ones_like(output)", "DataParallel"],
    ),
    # torch.autograd.grad(..., is_grads_batched=True): the same check's other wording
    (
        "RuntimeError: "
        + template(
            "torch:if-is-grads-batched-true-we", "0", "torch.Size([8, 3])", "0", "torch.Size([5])"
        ).replace("{}", "0")
        + "\n",
        "backward_gradient_shape",
        "certain",
        ["is_grads_batched", "batch"],
    ),
    # load_state_dict(path): the checkpoint's path, never loaded
    (
        "TypeError: " + template("torch:expected-state-dict-to-be-dict", "<class 'str'>") + "\n",
        "state_dict_not_a_mapping",
        "certain",
        ["torch.load(path", "path"],
    ),
    # a helper that returned nothing (lassonet's model.load(save) without return_state_dicts)
    (
        '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/module.py", line 2140, in load_state_dict\n'
        '    raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")\n'
        "TypeError: Expected state_dict to be dict-like, got <class 'NoneType'>.\n",
        "state_dict_not_a_mapping",
        "certain",
        ["None", "returned nothing"],
    ),
    # torch 1.12's wording by str.format, a TorchScript model loaded where its state dict was meant
    (
        "TypeError: Expected state_dict to be dict-like, got <class 'torch.jit._script.RecursiveScriptModule'>.\n",
        "state_dict_not_a_mapping",
        "certain",
        ["whole model", "torch.jit.load", "state_dict()"],
    ),
    # a library's lazy loader that is not a Mapping
    (
        "TypeError: Expected state_dict to be dict-like, got <class 'bmtrain.store.DistributedStateDictWrapper'>.\n",
        "state_dict_not_a_mapping",
        "certain",
        ["not a mapping", "1.12"],
    ),
    # ProcessGroupNCCL::_reduce_scatter_base: the flat input is not world_size times the output
    (
        "ValueError: " + template("torch_cpp:input-tensor-must-be-the-same") + "\n",
        "collective_arguments",
        "certain",
        ["world_size", "reduce_scatter_tensor"],
    ),
    # all_gather_into_tensor's output checked the other way round (an all-gather under sequence parallelism)
    (
        "[rank5]: ValueError: output tensor size must be equal to world_size times input tensor size\n",
        "collective_arguments",
        "certain",
        ["all_gather_into_tensor", "pad"],
    ),
    # Lightning 2.x: the warning, then fit stopping before its loop
    (
        "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/utilities/data.py:105: "
        + template("lightning:total-length-of-across-ranks-is", "DataLoader")
        + "\n`Trainer.fit` stopped: No training batches.\n",
        "dataloader_empty",
        "certain",
        ["no batch", "drop_last", "stopped without training"],
    ),
    # Lightning 1.5 raised it, worded "returns at least 1 batch"
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: Total length of `Dataloader` across "
        "ranks is zero. Please make sure that it returns at least 1 batch.\n",
        "dataloader_empty",
        "certain",
        ["batch_size", "len(dataset)"],
    ),
    # one rank's share is empty: an uneven split
    (
        "UserWarning: " + template("lightning:total-length-of-across-ranks-is-2", "DataLoader") + "\n",
        "dataloader_empty",
        "likely",
        ["this rank only", "world_size"],
    ),
    # the warning alone: Lightning 2.0.0 printed it for an unused validation loader too
    (
        "UserWarning: Total length of `CombinedLoader` across ranks is zero. Please make sure this was your "
        "intention.\n",
        "dataloader_empty",
        "likely",
        ["num_sanity_val_steps", "2.0.1"],
    ),
]


@pytest.mark.parametrize(("text", "kind", "confidence", "words"), NAMED)
def test_source_line_names_its_kind(text, kind, confidence, words):
    names_its_kind(text, kind, confidence, words)


# (a line that shares an anchor's words but is another message, the kind it must not be named)
NEAR_MISSES = [
    # the C++ engine's check of a custom Function's returned gradient: another mistake (its backward's shapes)
    (
        "RuntimeError: Function MyFnBackward returned an invalid gradient at index 0 - got [1] but expected shape "
        "compatible with [3, 4]\n",
        "backward_gradient_shape",
    ),
    # the complex-dtype check just after the shape check
    (
        "RuntimeError: For complex Tensors, both grad_output and output are required to have the same dtype. "
        "Mismatch in dtype: grad_output[0] has a dtype of torch.float32 and output[0] has a dtype of "
        "torch.complex64.\n",
        "backward_gradient_shape",
    ),
    # an optimizer's own check words it differently
    (
        "ValueError: loaded state dict has a different number of parameter groups\n",
        "state_dict_not_a_mapping",
    ),
    ("Expected state_dict keys to match the model's\n", "state_dict_not_a_mapping"),
    # a size check of another collective library
    (
        "AssertionError: output size must be a multiple of world size in my_allgather\n",
        "collective_arguments",
    ),
    # a loader with batches on every rank, the count logged
    ("Total length of `DataLoader` across ranks is 128.\n", "dataloader_empty"),
]


@pytest.mark.parametrize(("text", "kind"), NEAR_MISSES)
def test_near_miss_is_not_that_kind(text, kind):
    assert f"log.{kind}" not in [f.id for f in findings(text)]
