"""The operands of one op in different floating dtypes (Half or Double meeting a Float model).

torch does not promote between a layer's weight and its input: the checks name both dtypes.

- ``aten/src/ATen/core/TensorMethods.cpp`` data_ptr<T>: "expected scalar type Float but found Double" (the kernel
  took its type from one operand); ``native/LinearAlgebra.cpp`` addmm: "mat1 and mat2 must have the same dtype,
  but got Double and Float" (2.1+), "expected m1 and m2 to have the same dtype, but got: double != float"
  (1.9-2.0); ``native/Convolution.cpp``: "Input type (torch.cuda.HalfTensor) and weight type
  (torch.cuda.FloatTensor) should be the same" (read here when both are on one device; a CPU and a CUDA type
  there is ``device_mismatch``) and "Input type (...) and bias type (...)"; torch 0.2-0.3's
  ``torch/csrc/autograd/functions/convolution.cpp`` printed the same check with bare type names, "Input type (Byte)
  and weight type (Float) should be the same" (a uint8 image batch given to a float model);
- ``aten/src/ATen/Utils.h`` checked_dense_tensor_unwrap (0.4-1.5): "Expected object of scalar type Float but got
  scalar type Double for argument #2 'mat2'";
- ``torch/csrc/autograd/engine.cpp`` validate_outputs: "Found dtype Double but expected Float", a gradient of
  another dtype than its tensor: most often a loss computed against a Double target.

Only floating dtypes are read: "expected scalar type Long but found Float" is an index or a class-index target
(``loss_target_dtype``), not this. An embedding given float ids (``aten/src/ATen/TensorUtils.cpp``
checkScalarTypes: "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long,
Int; but got torch.FloatTensor instead (while checking arguments for embedding)") is its own kind.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, first, on_ranks

R = re.compile

_FLOAT = r"(?:Float|Half|Double|BFloat16|float|half|double|c10::Half|c10::BFloat16|bfloat16)"
_MIXED = R(
    rf"expected scalar type (?P<expected>{_FLOAT}) but found (?P<found>{_FLOAT})\b|"
    rf"mat1 and mat2 must have the same dtype, but got (?P<mat1>{_FLOAT}) and (?P<mat2>{_FLOAT})\b|"
    rf"expected m1 and m2 to have the same dtype, but got: (?P<m1>{_FLOAT}) != (?P<m2>{_FLOAT})\b|"
    rf"Found dtype (?P<grad>{_FLOAT}) but expected (?P<tensor>{_FLOAT})\b|"
    # aten/src/ATen/Utils.h checked_dense_tensor_unwrap (0.4-1.5): "... for argument #2 'mat2'"
    rf"Expected object of scalar type (?P<object>{_FLOAT}) but got scalar type (?P<object_got>{_FLOAT}) for argument|"
    # one device on both sides: the dtypes differ, not the devices
    rf"Input type \((?P<input>torch\.\w{{1,12}}Tensor)\) and (?:weight|bias) type \((?P<weight>torch\.\w{{1,12}}Tensor)\)|"
    rf"Input type \((?P<input_gpu>torch\.cuda\.\w{{1,12}}Tensor)\) and (?:weight|bias) type "
    rf"\((?P<weight_gpu>torch\.cuda\.\w{{1,12}}Tensor)\)|"
    # torch 0.2-0.3: the type's bare name, no device in it
    r"Input type \((?P<input_bare>Byte|Char|Short|Int|Long|Half|Float|Double)\) and weight type "
    r"\((?P<weight_bare>Byte|Char|Short|Int|Long|Half|Float|Double)\)"
)


def _dtypes(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    pairs = (
        ("expected", "found"),
        ("mat1", "mat2"),
        ("m1", "m2"),
        ("grad", "tensor"),
        ("input", "weight"),
        ("input_gpu", "weight_gpu"),
        ("input_bare", "weight_bare"),
        ("object", "object_got"),
    )
    a, b = next(((first(hits, x), first(hits, y)) for x, y in pairs if first(hits, x)), ("?", "?"))
    if first(hits, "grad"):
        return (
            f"backward met a gradient in {a} for a tensor in {b}: the loss mixes dtypes" + on_ranks(hits),
            "The loss's target is most often Double (a NumPy array or a Python float list turned into a "
            "tensor): cast it to the output's dtype where the batch is built, target = target.float() (or "
            "torch.as_tensor(y, dtype=torch.float32)), and keep the model and data in one dtype.",
        )
    if a in ("Byte", "Char", "Short", "Int", "Long"):
        return (
            f"a layer got its input as {a} (integers) while its weights are {b}" + on_ranks(hits),
            "A layer computes in the weights' floating dtype: convert the batch before the model, x = x.float() "
            "(images read as uint8: x.float() / 255, or torchvision's ToTensor in the dataset), and keep ids "
            "for embeddings only as integers.",
        )
    return (
        f"an op got operands in two floating dtypes ({a} and {b})" + on_ranks(hits),
        "Give the op one dtype. Double comes from NumPy (np.float64 arrays, torch.from_numpy): convert the "
        "inputs with x.float() or torch.as_tensor(x, dtype=torch.float32) in the dataset. Half or BFloat16 "
        "against Float: a model loaded in half precision (torch_dtype=torch.float16) run on float inputs, or "
        "one part cast by hand; run the forward under torch.autocast(device_type='cuda', dtype=torch.float16) "
        "with the model in float32, or cast the inputs with x.to(model.dtype).",
    )


DTYPE_MISMATCH = Recogniser(
    kind="dtype_mismatch",
    templates=(
        "aten:expected-scalar-type-but-found",
        "aten:mat1-and-mat2-must-have-same-dtype",
        "aten:m1-and-m2-same-dtype",
        "aten:found-dtype-but-expected",
        "aten:input-type-and-bias-type",
        "torch_native:input-type-and-weight-type",
        "torch_native:expected-scalar-type-for-argument",
    ),
    title="operands in two floating dtypes",
    anchors=(
        "expected scalar type ",
        "mat1 and mat2 must have the same dtype, but got ",
        "expected m1 and m2 to have the same dtype",
        "Found dtype ",
        ") and bias type (",
        ") and weight type (",
        "Expected object of scalar type ",
    ),
    match=_MIXED,
    describe=_dtypes,
    **OPERATOR_REFUSAL,
)


def _index_dtype(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        f"an embedding was given its ids as {first(hits, 'ids', 'floats')} where it needs Long (or Int)"
        + on_ranks(hits),
        "Token or category ids must be integers: build them with torch.tensor(ids, dtype=torch.long) (or "
        "x.long()) in the dataset or collate_fn. Float ids come from a NumPy float array, the torch.Tensor(...) "
        "constructor (always float), or a padding value written as 0.0.",
    )


EMBEDDING_INDEX_DTYPE = Recogniser(
    kind="embedding_index_dtype",
    templates=("aten:embedding-indices-scalar-types", "aten:embedding-indices-scalar-type-long"),
    title="an embedding given float ids",
    anchors=("Expected tensor for argument #1 'indices' to have ",),
    match=R(
        r"'indices' to have (?:one of the following scalar types: Long, Int|scalar type Long); but got "
        r"(?P<ids>[\w.]{1,40}) instead"
    ),
    # the ids are floats, but whose code made them is not in the message: the script's data, or a library that
    # builds them (a model's generate, a tokenizer's extension) with a bug of its release: likely, both named
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "library_version_bug",
            "a library that builds the ids itself passing them as floats",
            "If the ids are made inside a library (a model's generate(), a multimodal or tokenizer wrapper) and "
            "not by your dataset, it is a bug of that release: search its issues for the message, and update it "
            "or pin the version its examples use.",
        ),
    ),
    describe=_index_dtype,
)

RECOGNISERS = (DTYPE_MISMATCH, EMBEDDING_INDEX_DTYPE)
