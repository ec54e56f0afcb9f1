"""Misses of the train half that the sources decide: each anchored on the message its source prints (the catalog
template cited), read on its train log, on a line as the source prints it, and beside a near-miss that must stay
silent, be another kind, or be only likely."""

from __future__ import annotations

from explaining import explained, leads_with, read, template


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
