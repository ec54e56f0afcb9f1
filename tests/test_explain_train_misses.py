"""Misses of the train half that the sources decide: each anchored on the message its source prints (the catalog
template cited), read on its train log, on a line as the source prints it, and beside a near-miss that must stay
silent, be another kind, or be only likely."""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, read, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_indexing_a_0_dim_tensor_is_likely_code_written_for_torch_0_3():
    # 920.txt (DagnyT/hardnet#40): the bare message, no source line quoted: likely, the other reading named
    found = read("920.txt", "dependency_version", "likely")
    assert ".item()" in found.fix and "own scalar" in found.summary
    # torch 0.4's warning quoting the 0.3 idiom on its source line: certain
    leads_with(
        "main.py:48: UserWarning: "
        + template("torch_native:invalid-index-zero-dim-tensor-warning")
        + "\n  100. * batch_idx / len(train_loader), loss.data[0]))",
        "dependency_version",
        "certain",
        ["loss.item()", "0.3"],
    )
    # the error as 0.5+ raises it, on the script's own scalar (no .data[0]): likely only
    leads_with(
        '  File "train.py", line 88, in evaluate\n    if test_loss[i] < best["loss"]:\n'
        "IndexError: " + template("torch_native:invalid-index-zero-dim-tensor"),
        "dependency_version",
        "likely",
        ["drop the [0]"],
    )
    # an index past a real dimension is not this
    found = explained("IndexError: index 3 is out of bounds for dimension 0 with size 3\n")
    assert "0-dim" not in found.summary


def test_a_pil_transform_given_a_tensor_is_the_transforms_out_of_order():
    # 948.txt (Sara-Ahmed/SiT#10): PIL's Image.transpose(method) called on a tensor; a one-dim transpose of the
    # script's own prints the same, so likely
    found = read("948.txt", "transform_order", "likely")
    assert "ToTensor" in found.fix and "rotation" in found.summary
    assert "one dimension" in found.summary  # the other reading, named
    # Pillow 9.1+'s enum reads as its type name
    leads_with(
        "TypeError: transpose() received an invalid combination of arguments - got (Transpose), but expected one of:"
        "\n * (int dim0, int dim1)\n * (name dim0, name dim1)",
        "transform_order",
        "likely",
        ["ToTensor"],
    )
    # torchvision's own type checks: certain
    leads_with(
        "TypeError: "
        + template("third_party:torchvision-pic-should-be-pil-or-ndarray", "<class 'torch.Tensor'>"),
        "transform_order",
        "certain",
        ["read_image", "ToTensor"],
    )
    leads_with(
        "TypeError: " + template("third_party:torchvision-img-should-be-pil", "<class 'numpy.ndarray'>"),
        "transform_order",
        "certain",
        ["Image.fromarray"],
    )
    # a transpose given a tensor and two ints, or a tuple, is some other call: not this
    for got in ("(Tensor, int)", "(tuple)"):
        line = f"TypeError: transpose() received an invalid combination of arguments - got {got}, but expected one of:"
        assert explained(line + "\n").id != "log.transform_order", got


def test_a_reshape_to_sizes_written_into_the_code_is_likely_a_hardcoded_shape():
    # 946.txt (neuraloperator/neuraloperator#6): the sizes name both readings, the resolution one with its factor
    found = read("946.txt", "hardcoded_shape", "likely")
    assert "8 times the resolution" in found.summary and "subsample" in found.fix
    # a batch size baked in, met by the last, smaller batch: only the batch reading fits the numbers
    found = leads_with(
        '  File "model.py", line 40, in forward\n    x = x.view(64, 512, 7, 7)\n'
        "RuntimeError: " + template("aten:shape-invalid-for-input-of-size", "[64, 512, 7, 7]", "200704"),
        "hardcoded_shape",
        "likely",
        ["drop_last=True", "x.size(0)"],
    )
    assert "8 rows of 25088" in found.summary and "times the resolution" not in found.summary
    # a -1 that cannot be inferred: the count is not a multiple of the rest
    found = leads_with(
        "RuntimeError: shape '[-1, 400]' is invalid for input of size 1000",
        "hardcoded_shape",
        "likely",
        ["x.view(x.size(0), -1)"],
    )
    assert "not a multiple of 400" in found.summary
    # torch's other view refusal is the layout, not the sizes
    assert (
        explained("RuntimeError: view size is not compatible with input tensor's size and stride\n").id
        != "log.hardcoded_shape"
    )


def test_an_in_place_op_torch_refuses_to_cast_back_is_likely_code_for_an_older_torch():
    # 923.txt (alanli1997/slim-neck-by-gsconv#28): the message retyped in prose, no source line: likely
    found = read("923.txt", "dependency_version", "likely")
    assert "1.12" in found.summary and "mixes dtypes" in found.summary and ".long()" in found.fix
    # YOLOv5's build_targets line quoted in the traceback: the clamp_ of 1.12, certain
    leads_with(
        '  File "utils/loss.py", line 239, in build_targets\n'
        "    indices.append((b, a, gj.clamp_(0, gain[3] - 1), gi.clamp_(0, gain[2] - 1)))\n"
        "RuntimeError: " + template("torch_native:result-type-cannot-be-cast-to-output", "Float", "long int"),
        "dependency_version",
        "certain",
        ["git pull"],
    )
    # a script's own in-place add: likely only
    leads_with(
        '  File "train.py", line 12, in <module>\n    counts += weights\n'
        "RuntimeError: result type Float can't be cast to the desired output type Long",
        "dependency_version",
        "likely",
        ["y.to(x.dtype)"],
    )
    # another conversion refusal (a number past int64's range) is not this
    found = explained("RuntimeError: value cannot be converted to type int64_t without overflow\n")
    assert "in-place op" not in found.summary
