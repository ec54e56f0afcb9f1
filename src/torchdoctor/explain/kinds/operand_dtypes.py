"""The operands of one op in different floating dtypes (Half or Double meeting a Float model).

torch does not promote between a layer's weight and its input: the checks name both dtypes.

- ``aten/src/ATen/core/TensorMethods.cpp`` data_ptr<T>: "expected scalar type Float but found Double" (the kernel
  took its type from one operand); ``native/LinearAlgebra.cpp`` addmm: "mat1 and mat2 must have the same dtype,
  but got Double and Float" (2.1+), "mat1 and mat2 must have the same dtype" (2.0, no dtypes named), "expected
  m1 and m2 to have the same dtype, but got: double != float" (1.9-2.0), ``native/cuda/Blas.cpp`` addmm on the GPU:
  "expected mat1 and mat2 to have the same dtype, but got: float != c10::Half" (2.1+); ``native/Convolution.cpp``: "Input type (torch.cuda.HalfTensor) and weight type
  (torch.cuda.FloatTensor) should be the same" (read here when both are on one device, as layer_types.py tells; a CPU
  and a CUDA type there is ``device_mismatch``) and "Input type (...) and bias type (...)"; torch 0.2-0.3's
  ``torch/csrc/autograd/functions/convolution.cpp`` printed the same check with bare type names, "Input type (Byte)
  and weight type (Float) should be the same" (a uint8 image batch given to a float model);
- ``aten/src/ATen/Utils.h`` checked_dense_tensor_unwrap (0.4-1.5): "Expected object of scalar type Float but got
  scalar type Double for argument #2 'mat2'";
- ``torch/csrc/autograd/engine.cpp`` validate_outputs: "Found dtype Double but expected Float", a gradient of
  another dtype than its tensor: most often a loss computed against a Double target;
- ``aten/src/ATen/native/Lerp.cpp`` lerp: "expected dtype float for `end` but got dtype c10::BFloat16", torch.lerp's
  start and end in two dtypes: most often an EMA copy kept in float32 updated from a bf16 or fp16 model.

Only floating dtypes are read: "expected scalar type Long but found Float" is an index or a class-index target
(``loss_target_dtype``), not this. An embedding given float ids (``aten/src/ATen/TensorUtils.cpp``
checkScalarTypes: "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long,
Int; but got torch.FloatTensor instead (while checking arguments for embedding)") is its own kind, and so is a
tensor used as an index (``aten/src/ATen/native/IndexingUtils.h`` checkIndexTensorTypes: "tensors used as indices
must be long, byte or bool tensors", every release before int indices; "... must be long, int, byte or bool
tensors" where advanced indexing takes int32 too, so there the index is a float).
"""

from __future__ import annotations

from torchdoctor.explain.kinds import layer_types
from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_FLOAT = r"(?:Float|Half|Double|BFloat16|float|half|double|c10::Half|c10::BFloat16|bfloat16)"
_MIXED = R(
    rf"expected scalar type (?P<expected>{_FLOAT}) but found (?P<found>{_FLOAT})\b|"
    rf"mat1 and mat2 must have the same dtype, but got (?P<mat1>{_FLOAT}) and (?P<mat2>{_FLOAT})\b|"
    # the same check as 1.9-2.0 printed it, and as the CUDA addmm (cuda/Blas.cpp) words it from 2.1 (MSVC builds
    # name the type "struct c10::Half")
    rf"expected m(?:at)?1 and m(?:at)?2 to have the same dtype, but got: (?:struct )?(?P<m1>{_FLOAT}) != "
    rf"(?:struct )?(?P<m2>{_FLOAT})\b|"
    # torch 2.0's addmm meta check, which named no dtype
    r"(?P<unnamed_dtypes>mat1 and mat2 must have the same dtype)(?!, but got)|"
    rf"Found dtype (?P<grad>{_FLOAT}) but expected (?P<tensor>{_FLOAT})\b|"
    # aten/src/ATen/Utils.h checked_dense_tensor_unwrap (0.4-1.5): "... for argument #2 'mat2'"
    rf"Expected object of scalar type (?P<object>{_FLOAT}) but got scalar type (?P<object_got>{_FLOAT}) for argument|"
    # native/Lerp.cpp (lerp_Tensor, lerp_Scalar): torch.lerp's start (self) against its end or weight, dtypes printed
    # as caffe2's names (float, double, c10::Half, c10::BFloat16)
    rf"expected dtype (?P<lerp_self>{_FLOAT}) for `(?P<lerp_arg>end|weights?)` but got dtype (?P<lerp_other>{_FLOAT})\b|"
    # flash-attn's csrc/flash_attn/flash_api.cpp (mha_fwd, mha_varlen_fwd): the query's dtype against the only two
    # its kernels take (a float32 model without autocast, or a library's own cast before the call)
    r"(?P<kernel>[A-Za-z]\w{0,40}) only support fp16 and bf16 data type|" + layer_types.ON_ONE_DEVICE
    # a convolution's input and weight on one device (or dtypes' names alone): the dtypes differ, not the devices
)
_INTEGERS = ("Byte", "Char", "Short", "Int", "Long", "Bool")


def _layer_dtypes(hits: list[Hit]) -> tuple[str, str]:
    """ATen's convolution check on one device: the layer's input and its weight (or bias) in two dtypes."""
    given, held = first(hits, "layer_input"), first(hits, "layer_weight")
    param = first(hits, "layer_param", "weight")
    summary = f"a layer's input is {given} and its {param} {held}: one dtype each" + on_ranks(hits)
    if layer_types.dtype_of(given) in _INTEGERS:
        return summary, (
            "The batch is integer data (uint8 images as read from disk or NumPy) fed to a float model: convert it "
            "where the batch is built, x = x.float() / 255 (torchvision: transforms.ToTensor(), or "
            "v2.ToDtype(torch.float32, scale=True), does both)."
        )
    return summary, (
        "One side is in half precision and the other is not: run the forward under "
        "torch.autocast(device_type='cuda', dtype=torch.float16) with the model in float32 (autocast casts a "
        "layer's input and weight to one dtype), or give the input the model's dtype, "
        "x = x.to(next(model.parameters()).dtype) (x.half() for a model turned .half()); a layer made or loaded "
        "after model.half() keeps float32 weights: cast the whole model again."
    )


def _half_only_kernel(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    kernel = first(hits, "kernel") or "FlashAttention"
    return (
        f"{kernel} got a query in neither fp16 nor bf16 (float32, most often): it computes in those only"
        + on_ranks(hits),
        "Load the model in half precision (from_pretrained(..., torch_dtype=torch.bfloat16)) or run its forward "
        "under torch.autocast(device_type='cuda', dtype=torch.bfloat16) (Trainer: bf16=True; accelerate: "
        "mixed_precision='bf16'), the forwards outside the training step too (evaluation, generation, logging); "
        "where float32 is wanted, use another attention (attn_implementation='sdpa'). If the model already runs in "
        "bf16/fp16, a layer casts q, k, v back to float32 before the call (princeton-nlp/AutoCompressors#15: a rotary "
        "embedding computed in float32, fixed in commit 316d800): cast them to the model's dtype there.",
    )


def _lerp(hits: list[Hit]) -> tuple[str, str]:
    start, arg, other = first(hits, "lerp_self"), first(hits, "lerp_arg"), first(hits, "lerp_other")
    return (
        f"torch.lerp got its start in {start} and its {arg} in {other}: one dtype each" + on_ranks(hits),
        "lerp/lerp_ takes start, end (and a tensor weight) in one dtype. Most often it is an EMA of the weights, "
        "ema_param.lerp_(param, 1 - decay), with the EMA copy in float32 and the model in bf16 or fp16 (DeepSpeed "
        "or FSDP in bf16, a model turned .half()), or the other way round: cast the source to the EMA's dtype, "
        "ema_param.lerp_(param.to(ema_param.dtype), weight), or keep both in one dtype; ema-pytorch: "
        "EMA(model, coerce_dtype=True).",
    )


def _dtypes(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "lerp_self"):
        return _lerp(hits)
    if first(hits, "kernel"):
        return _half_only_kernel(hits, ctx)
    if first(hits, "layer_input"):
        return _layer_dtypes(hits)
    pairs = (
        ("expected", "found"),
        ("mat1", "mat2"),
        ("m1", "m2"),
        ("grad", "tensor"),
        ("object", "object_got"),
    )
    a, b = next(((first(hits, x), first(hits, y)) for x, y in pairs if first(hits, x)), ("?", "?"))
    if a == "?" and first(hits, "unnamed_dtypes"):
        return (
            "a matrix product (a Linear layer) got its input and its weight in two floating dtypes (torch 2.0's "
            "message does not name them)" + on_ranks(hits),
            "One side is in half precision (float16 / bfloat16) and the other in float32, or a float64 input from "
            "NumPy met a float32 layer. Run the forward under torch.autocast(device_type='cuda', "
            "dtype=torch.bfloat16) (or float16) with the model in float32, or give the input the layer's dtype, "
            "x = x.to(next(model.parameters()).dtype); a layer added or loaded after model.half() keeps float32 "
            "weights: cast the whole model again. print(x.dtype, layer.weight.dtype) on the line the traceback "
            "names shows which.",
        )
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
        "aten:mat1-and-mat2-same-dtype-unnamed",
        "aten:expected-mat1-and-mat2-same-dtype",
        "aten:found-dtype-but-expected",
        "aten:input-type-and-bias-type",
        "aten:input-type-and-weight-type-same",
        "torch_native:input-type-and-weight-type",
        "torch_native:expected-scalar-type-for-argument",
        "third_party:flash-attn-only-fp16-and-bf16",
        "aten:expected-dtype-for-end-but-got",
        "aten:expected-dtype-for-weight-but-got",
    ),
    title="operands in two floating dtypes",
    anchors=(
        "expected scalar type ",
        "mat1 and mat2 must have the same dtype",
        "expected m1 and m2 to have the same dtype",
        "expected mat1 and mat2 to have the same dtype",
        "Found dtype ",
        ") and bias type (",
        ") and weight type (",
        "Expected object of scalar type ",
        "only support fp16 and bf16 data type",
        " for `end` but got dtype ",
        " for `weight` but got dtype ",
        " for `weights` but got dtype ",
    ),
    match=_MIXED,
    facts=(layer_types.TYPES,),
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


def _index_tensor(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    takes_int = bool(first(hits, "int_indices"))
    windows = "on_windows" in ctx.facts
    if takes_int:
        what = "a floating tensor (division, torch.Tensor(...), a float NumPy array) where it takes integers"
    elif windows:
        what = "not int64: on Windows NumPy's default integer is int32, which this torch refuses as an index"
    else:
        what = (
            "neither int64 nor bool: int32 (NumPy's default integer on Windows, an explicit int32) or a float"
        )
    return (
        f"a tensor used as an index is {what}" + on_ranks(hits),
        "Cast the index to int64 where it is built: idx = idx.long() (from NumPy: torch.from_numpy(a.astype("
        "np.int64)), or np.arange(..., dtype=np.int64)); a mask stays bool. NumPy before 2.0 makes int32 by default "
        'on Windows, so code that runs on Linux refuses there; a torch whose message also names int ("long, int, '
        'byte or bool") takes int32 indices, and there the index is a float (a division: use //, or .long()).',
    )


INDEX_TENSOR_DTYPE = Recogniser(
    kind="index_tensor_dtype",
    templates=("aten:index-tensors-long-byte-bool", "aten:index-tensors-long-int-byte-bool"),
    title="a tensor used as an index that is not int64",
    anchors=("tensors used as indices must be long, ",),
    match=R(r"tensors used as indices must be long, (?P<int_indices>int, )?byte or bool tensors"),
    # the message names no tensor and no code: the script's own index, or one a library builds (its release's
    # bug on Windows: taichi-dev/taichi-nerfs#15 cast its indices), both named
    describe=_index_tensor,
    **OPERATOR_REFUSAL,
)


RECOGNISERS = (DTYPE_MISMATCH, EMBEDDING_INDEX_DTYPE, INDEX_TENSOR_DTYPE)
