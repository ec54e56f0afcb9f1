"""A training script handing an operator a tensor of the wrong shape, layout, dtype or device.

The messages are PyTorch's own checks on its arguments, each naming what it refused, so each is certain (the
``.view()`` and the NumPy ones when the traceback shows the script's own code making the call: a library's code
reaches the same checks):

- ``.view()`` on a tensor whose strides cannot describe the new shape (``aten/src/ATen/native/TensorShape.cpp``
  view_impl: "view size is not compatible with input tensor's size and stride ... Use .reshape(...) instead.";
  ``TH/generic/THTensor.cpp`` newView before 1.5: "... Call .contiguous() before .view()."): a transposed,
  permuted or sliced tensor, e.g. the top-k indices of an accuracy function;
- an operand with another number of dimensions than the op expects (``ATen/native/Linear.cpp`` einsum: "the
  number of subscripts in the equation (N) does not match the number of dimensions (M) for operand K";
  ``ATen/native/Convolution.cpp`` check_input_shape_forward: "Expected 4-dimensional input for 4-dimensional
  weight ..., but got 3-dimensional input"): an unbatched image, a batch of one squeezed, a 4-D map where the
  code flattens to 3-D;
- a binary cross-entropy target of another shape than the logits (``torch/nn/functional.py``
  binary_cross_entropy_with_logits: "Target size (...) must be the same as input size (...)");
- class-index targets that are not int64 (``ATen/Utils.h`` checked_dense_tensor_unwrap, torch 0.4-1.5:
  "Expected object of scalar type Long but got scalar type Int for argument #2 'target'");
- a CUDA tensor handed to NumPy (``torch/csrc/utils/tensor_numpy.cpp``: "can't convert cuda:0 device type
  tensor to numpy. Use Tensor.cpu() ..."; "can't convert CUDA tensor to numpy" before 1.6);
- a DataLoader pinning batches that are already on the GPU (``ATen/native/Memory.cpp`` pin_memory: "cannot pin
  'torch.cuda.FloatTensor' only dense CPU tensors can be pinned"), certain where the script's own loop iterates it;
- a tensor that requires grad handed to NumPy (``torch/csrc/utils/tensor_numpy.cpp`` tensor_to_numpy without
  force=True: "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.").

Two are not certain, because their source prints the same words for more than one cause:

- class-index targets of a floating type (the same ``Utils.h`` check): float labels that hold class ids, or class
  probabilities given as the target, which ``cross_entropy`` takes only from torch 1.10; from 1.10 the NLL
  kernels' dispatch ("nll_loss_forward_reduce_cuda_kernel_2d_index" not implemented for 'Float') says the same of
  a floating target of shape (N,): class ids stored as floats, or a regression target or 0/1 labels of one output
  given to a classification loss, whose fix is the loss;
- a tensor of several elements converted to a Python number (``torch/csrc/autograd/python_variable_methods.cpp``
  dispatch_to_CDouble / dispatch_to_CLong, the ``.item()`` / ``float()`` of torch 0.4-1.x: "only one element
  tensors can be converted to Python scalars"; ``aten/src/ATen/native/Scalar.cpp`` item: "a Tensor with N
  elements cannot be converted to Scalar"): a metric never reduced, or the per-GPU losses DataParallel gathers.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    called_from_own_code,
    first,
    library_call,
    on_ranks,
)

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# Another reading of an operator's refusal of its inputs (shapes, dtypes): the message says what the operator was
# given, not whose code gave it. In a user's paste the values often come from a library's own model or pipeline,
# and the thread's cause is that library's release (the train half's 925.txt: float embedding ids a library built;
# the twenty-second sample's random_split fractions and floating targets: a torch release). So these readings are
# likely, this named after them.
OPERATOR_CALLER = Alternative(
    "library_version_bug",
    "values built by a library's own code, a bug of its release",
    "If the traceback's innermost frames are in an installed package (site-packages), not your script, the "
    "values came from that library: search its issues for the message, and update it or pin the release its "
    "examples use; else fix the shapes or dtypes in your code as above.",
)
# What a Recogniser of such a refusal takes (``**OPERATOR_REFUSAL``): never certain, `OPERATOR_CALLER` named.
OPERATOR_REFUSAL = {"confirm": lambda hits, ctx: False, "also": (OPERATOR_CALLER,)}


def _view(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        ".view() was called on a tensor whose memory layout cannot take the new shape (it is not contiguous: "
        "transposed, permuted, expanded or a slice)" + on_ranks(hits),
        "Replace the .view(...) on the line the traceback names with .reshape(...) (it copies only when it "
        "must), or call .contiguous() first: x.contiguous().view(x.size(0), -1). An accuracy function written "
        "for an older torch, correct[:k].view(-1), needs correct[:k].reshape(-1).",
    )


VIEW_NONCONTIGUOUS = Recogniser(
    kind="view_noncontiguous",
    templates=("torch_native:view-size-not-compatible", "torch_native:view-size-not-compatible-contiguous"),
    title=".view() on a non-contiguous tensor",
    anchors=("view size is not compatible with input tensor's",),
    # TensorShape.cpp view_impl refuses the strides whoever calls .view(): the script, or a library's model code
    # given a tensor laid out otherwise than it was written for (another torch's or another library's output)
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code calling .view() on a tensor laid out otherwise than it was written for",
            "search its issues for the message and update it (or pin the torch its release was tested with); "
            "a tensor your code hands it can be made contiguous first (x.contiguous()).",
        ),
    ),
    describe=_view,
)

_DIMS = R(
    r"einsum\(\): the number of subscripts in the equation \((?P<subscripts>\d+)\) does not match the number of "
    r"dimensions \((?P<dims>\d+)\) for operand (?P<operand>\d+)|"
    # the weight's shape as a list (1.2+) or as bare numbers ("weight 64 1 3") before
    r"Expected (?P<expected>\d+)-dimensional input for \d+-dimensional weight(?: \[[^\]\n]{0,60}\]|[\d ]{0,40}), but got "
    r"(?P<got>\d+)-dimensional input of size (?P<size>\[[^\]\n]{0,60}\])|"
    # 1.11+: convolutions take unbatched input too
    r"Expected (?P<unbatched>\d)D \(unbatched\) or (?P<batched>\d)D \(batched\) input to (?P<op>\w{1,20}), but got "
    r"input of size: (?P<conv_size>\[[^\]\n]{0,60}\])|"
    # torch/nn/modules/batchnorm.py _check_input_dim (SyncBatchNorm refusing (N, C) before torch 1.4 is a
    # release's check, read by version_refusals.py)
    r"expected (?P<norm_expected>(?!at least 3D input \(got 2D)(?:at least )?\dD(?: or \dD)?) input \(got "
    r"(?P<norm_got>\d)D input\)|"
    # c10/core/WrapDimMinimal.cpp: a dim argument the tensor does not have
    r"Dimension out of range \(expected to be in range of \[(?P<dim_low>-?\d+), (?P<dim_high>-?\d+)\], but got "
    r"(?P<dim_range>-?\d+)\)"
)


def _dims(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "op"):
        what = (
            f"{first(hits, 'op')} expects {first(hits, 'unbatched')}-D (one sample) or {first(hits, 'batched')}-D "
            f"(a batch) input and got input of size {first(hits, 'conv_size')}"
        )
    elif first(hits, "norm_expected"):
        what = (
            f"a BatchNorm layer expects {first(hits, 'norm_expected')} input and got {first(hits, 'norm_got')}-D "
            "(BatchNorm1d takes (N, C) or (N, C, L), BatchNorm2d (N, C, H, W))"
        )
    elif first(hits, "dim_range"):
        what = (
            f"an op was asked for dimension {first(hits, 'dim_range')} of a tensor that has only dimensions "
            f"{first(hits, 'dim_low')}..{first(hits, 'dim_high')} (a batch dimension squeezed away, or dim= "
            "written for a batched tensor)"
        )
    elif first(hits, "operand"):
        what = (
            f"einsum's operand {first(hits, 'operand')} has {first(hits, 'dims')} dimensions where the "
            f"equation gives it {first(hits, 'subscripts')} subscripts"
        )
    else:
        what = (
            f"a convolution expects {first(hits, 'expected')}-dimensional input (batch, channels, ...) and got "
            f"{first(hits, 'got')}-dimensional input of size {first(hits, 'size')}"
        )
    return (
        what + on_ranks(hits),
        "The tensor reaching that op has the wrong number of dimensions: print its shape just before the line "
        "the traceback names. Reshape it to what the op takes (flatten the spatial dimensions with "
        "x.view(bsz, C, -1), add a missing batch or channel axis with x.unsqueeze(0) / unsqueeze(1)), and look "
        "for a .squeeze() that drops the batch dimension when the batch holds one sample (batch_size=1, or a "
        "last batch of one: use squeeze(dim) on the axis meant, or drop_last=True).",
    )


INPUT_SHAPE_MISMATCH = Recogniser(
    kind="input_shape_mismatch",
    templates=(
        "torch_native:einsum-subscripts-dimensions",
        "torch_native:conv-input-dimensions",
        "aten:conv-unbatched-or-batched-input",
        "torch:expected-input-got-input",
        "torch:expected-or-input-got-input",
        "torch:expected-input-got-input-2",
        "torch:expected-at-least-input-got-input",
        "aten:dimension-out-of-range",
    ),
    title="a tensor with the wrong number of dimensions for its op",
    anchors=(
        "does not match the number of dimensions",
        "-dimensional input for ",
        "D (batched) input to ",
        "D input (got ",
        "Dimension out of range (expected to be in range of [",
    ),
    match=_DIMS,
    describe=_dims,
    **OPERATOR_REFUSAL,
)


def _target_shape(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "batch_out"):
        return (
            f"the loss got {first(hits, 'batch_out')} rows of output for {first(hits, 'batch_target')} targets"
            + on_ranks(hits),
            "CrossEntropyLoss/NLLLoss take an (N, C) output and an (N,) target of class indices. Print both "
            "shapes before the loss: an output flattened with view(-1, C) while the target keeps its sequence "
            "or spatial dimensions (flatten both: logits.view(-1, C), labels.view(-1)); a flatten after the "
            "convolutions written as x.view(-1, F) with F too small, which folds features into the batch (use "
            "x.view(x.size(0), -1) and fix the Linear's in_features); labels that are not one per sample.",
        )
    if first(hits, "multi_target") or first(hits, "target_size"):
        told = (
            f" (expected {first(hits, 'target_size')}, got {first(hits, 'target_got')})"
            if first(hits, "target_size")
            else ""
        )
        return (
            f"the class-index loss got a target with an extra dimension{told}: one-hot or multi-label targets"
            + on_ranks(hits),
            "CrossEntropyLoss/NLLLoss want one class index per sample ((N,) long, or (N, d1, ...) for "
            "segmentation): turn one-hot labels into indices with target.argmax(dim=1), squeeze a (N, 1) "
            "target with target.squeeze(1), and load segmentation masks as one channel of class ids. Labels "
            "with several classes per sample are multi-label: use BCEWithLogitsLoss with float targets.",
        )
    return (
        f"the binary cross-entropy target has shape {first(hits, 'target', '?')} but the model's output has "
        f"{first(hits, 'output', '?')}" + on_ranks(hits),
        "Make the labels and the model's output agree: the number of output channels / classes the model is "
        "built with (num_classes, n_classes) must be the dataset's, and a segmentation mask must be loaded as "
        "one channel (grayscale, Image.open(p).convert('L'), class ids rather than RGB colours) when the model "
        "predicts one; a (N,) target for an (N, 1) output needs target.unsqueeze(1) (or output.squeeze(1)).",
    )


TARGET_SHAPE_MISMATCH = Recogniser(
    kind="target_shape_mismatch",
    templates=(
        "torch_native:bce-target-size-must-match-input",
        "aten:expected-input-batch-size-match-target",
        "aten:nll-multi-target-not-supported",
        "aten:thnn-multi-target-not-supported",
        "aten:nll-expected-target-size",
    ),
    title="a loss target of another shape than the output",
    anchors=(
        ") must be the same as input size (",
        ") to match target batch_size (",
        "D target tensor expected, multi-target not supported",
        "Expected target size ",
    ),
    match=R(
        r"Target size \((?P<target>torch\.Size\(\[[^\]\n]{0,60}\]\))\) must be the same as input size "
        r"\((?P<output>torch\.Size\(\[[^\]\n]{0,60}\]\))\)|"
        r"Expected input batch_size \((?P<batch_out>\d+)\) to match target batch_size \((?P<batch_target>\d+)\)|"
        r"(?P<multi_target>1D target tensor expected, multi-target not supported)|"
        r"Expected target size (?P<target_size>\[[\d, ]{1,40}\]|\(\d[\d, ]{0,40}\)), got "
        r"(?P<target_got>\[[\d, ]{1,40}\]|torch\.Size\(\[[\d, ]{1,40}\]\))"
    ),
    describe=_target_shape,
    **OPERATOR_REFUSAL,
)


def _target_dtype(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "probabilities"):
        return (
            f"the loss got a target of the output's shape as {first(hits, 'probabilities')}: integer one-hot "
            "labels, read as class probabilities" + on_ranks(hits),
            "CrossEntropyLoss reads a target of the output's shape as class probabilities, which must be "
            "floating. Pass class indices instead, target.argmax(dim=1) (int64, shape (N,)), or, for soft "
            "labels, target.float().",
        )
    return (
        f"the loss got its class-index target as {first(hits, 'got') or first(hits, 'dispatch', 'Int')} where it "
        "needs Long "
        "(int64)" + on_ranks(hits),
        "Cast the labels to int64 where the batch is built or before the loss: loss = criterion(output, "
        "target.long()) (or torch.as_tensor(label, dtype=torch.long) in the dataset). NumPy's default integer "
        "is int32 on Windows, and some data pipelines load label maps as int32 or uint8.",
    )


_FLOAT_TYPES = ("Float", "Double", "Half", "BFloat16")

# a floating target may be class probabilities, which cross_entropy takes only from torch 1.10
_SOFT_TARGETS = Alternative(
    "dependency_version",
    "class probabilities as the target, which this torch's cross_entropy does not take",
    "If the target holds class probabilities (soft or one-hot labels, mixup), cross_entropy takes them only "
    "from torch 1.10: upgrade torch, or give class ids (target.argmax(dim=1)) to this version.",
    when=("float_target",),
)

# aten/src/ATen/native/LossNLL.cpp cross_entropy: any target of the input's shape is read as class probabilities,
# so an integer one refuses there both as one-hot labels and as class ids beside logits squeezed to (N,) (a head
# with one output, .squeeze()/.view(-1) on the logits): the one-hot reading is certain where the log shows one_hot
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (("one_hot(", R(r"(?P<one_hot_labels>\bone_hot\()")),)

# a floating target of shape (N,) is refused by the class-index kernels (nll_loss's dispatch names its dtype): class
# ids stored as floats (cast them), or values a classification loss was never meant for (a regression target, a
# 0/1 label for one output), whose fix is the loss, not the cast
_NOT_CLASS_IDS = Alternative(
    "classification_loss_misused",
    "a target of real values or 0/1 labels (regression, one output per sample) given to a classification loss",
    "If the targets are values to predict or 0/1 labels for a single output, a cast to long is wrong: use "
    "MSELoss / L1Loss (regression) or BCEWithLogitsLoss with one output and float targets; CrossEntropyLoss / "
    "NLLLoss take class ids 0..C-1 beside C logits.",
    when=("float_dispatch",),
)

_LOGITS_OF_TARGET_SHAPE = Alternative(
    "target_shape_mismatch",
    "logits of the target's shape (N,): a head with one output, or logits squeezed to one value per sample",
    "CrossEntropyLoss wants logits of shape (N, C), one per class, and class ids of shape (N,): give the last "
    "layer C outputs (nn.Linear(hidden, C)) and drop the .squeeze()/.view(-1) on the logits; for one output "
    "per sample (two classes) use BCEWithLogitsLoss with target.float().",
    when=("probabilities",),
)

LOSS_TARGET_DTYPE = Recogniser(
    kind="loss_target_dtype",
    templates=(
        "torch_native:expected-scalar-type-for-argument",
        "aten:nll-cuda-kernel-not-implemented-for",
        "aten:nll-out-frame-not-implemented-for",
        "aten:cross-entropy-floating-target-class-probabilities",
    ),
    title="class-index targets that are not int64",
    anchors=(
        "Expected object of scalar type Long but got scalar type",
        "nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for '",
        "nll_loss_out_frame\" not implemented for '",
        "Expected floating point type for target with class probabilities, got ",
    ),
    match=R(
        r"Expected object of scalar type Long but got scalar type (?P<got>\w{1,20}) for argument #\d+ "
        r"'(?P<argument>target|label\w{0,10})'|"
        r"\"nll_loss(?:_forward_reduce_cuda_kernel_2d_index|_out_frame)\" not implemented for '(?P<dispatch>\w{1,20})'|"
        r"Expected floating point type for target with class probabilities, got (?P<probabilities>\w{1,20})"
    ),
    facts=(
        R(
            r"Expected object of scalar type Long but got scalar type (?P<float_target>"
            + "|".join(_FLOAT_TYPES)
            + r") "
        ),
        R(
            r"\"nll_loss(?:_forward_reduce_cuda_kernel_2d_index|_out_frame)\" not implemented for '(?P<float_dispatch>"
            + "|".join(_FLOAT_TYPES)
            + r")'"
        ),
    ),
    # an integer target of the wrong width has one cause; a floating one may be soft labels or values meant for
    # another loss; an integer one of the output's shape one-hot labels or squeezed logits
    confirm=lambda hits, ctx: (
        not any("float_target" in h.facts or "float_dispatch" in h.facts for h in hits)
        and (not any("probabilities" in h.facts for h in hits) or "one_hot_labels" in ctx.facts)
    ),
    also=(_SOFT_TARGETS, _NOT_CLASS_IDS, _LOGITS_OF_TARGET_SHAPE),
    describe=_target_dtype,
)


# the other reading of NumPy's refusals: a library converted the tensor (one handed to it where it takes arrays,
# or a bug of its release that converts its own GPU tensors)
_NUMPY_CALLER = library_call(
    "a library's code converting a tensor to NumPy (a tensor handed to it where it takes arrays, or its own "
    "release's bug)",
    "hand it x.detach().cpu() (scikit-learn, matplotlib and pandas take arrays, not tensors), or update the "
    "library if it converts its own tensors.",
)


def _to_numpy(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a tensor still on the GPU was handed to NumPy (.numpy(), np.asarray, a NumPy function or a library "
        "such as scikit-learn that converts it)" + on_ranks(hits),
        "Copy it to host memory first on the line the traceback names: x.detach().cpu().numpy(), or x.item() "
        "for a single value (a loss or metric to log); compute the metric with torch instead (torchmetrics) to "
        "keep it on the GPU.",
    )


CUDA_TENSOR_TO_NUMPY = Recogniser(
    kind="cuda_tensor_to_numpy",
    templates=("torch_native:cuda-tensor-to-numpy", "torch_native:cuda-tensor-to-numpy-before-1-6"),
    title="a CUDA tensor handed to NumPy",
    anchors=(
        "to numpy. Use Tensor.cpu() to copy the tensor to host memory first",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "device type tensor to numpy",
        "can't convert CUDA tensor to numpy",
    ),
    # tensor_numpy.cpp tensor_to_numpy, reached from Tensor.numpy() and from Tensor.__array__ (torch/_tensor.py),
    # which NumPy calls for whatever code converts the tensor: the script's own, or a library's
    confirm=called_from_own_code("torch", "numpy"),
    also=(_NUMPY_CALLER,),
    describe=_to_numpy,
)


def _pin_cuda(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        f"the DataLoader was asked to pin batches that are already on the GPU ({first(hits, 'pinned', '?')}): "
        "pinning applies to CPU tensors only" + on_ranks(hits),
        "Either keep the dataset and collate_fn on the CPU and move each batch in the training loop "
        "(batch.to(device, non_blocking=True)), which is what pin_memory=True speeds up, or, if the data must "
        "live on the GPU, build the DataLoader with pin_memory=False (and num_workers=0: worker processes "
        "cannot create CUDA tensors either).",
    )


PIN_MEMORY_CUDA_TENSOR = Recogniser(
    kind="pin_memory_cuda_tensor",
    templates=("torch_native:pin-memory-only-dense-cpu",),
    title="pin_memory with batches already on the GPU",
    anchors=("' only dense CPU tensors can be pinned",),
    match=R(r"cannot pin '(?P<pinned>torch\.cuda\.\w{1,30}|[^'\n]{0,40}cuda[^'\n]{0,40})'"),
    # the DataLoader pins what its dataset and collate made: the script's own where its loop iterates the loader
    # through torch's frames alone; a library's trainer iterating its own DataLoader over tensors it (or a default
    # device the application set) put on the GPU prints the same (darts, scvi-tools: fixed in their releases)
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's DataLoader (built with pin_memory=True) over tensors the library, or a default device the "
            "application set (torch.set_default_device('cuda')), put on the GPU",
            "turn pinning off in its data options (pin_memory=False) or update it to a release that keeps its "
            "datasets on the CPU.",
        ),
    ),
    describe=_pin_cuda,
)


def _numpy_grad(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a tensor that still requires grad was handed to NumPy (.numpy(), np.sum / np.array over it, or a "
        "plotting or metrics library that converts it)" + on_ranks(hits),
        "Detach it on the line the traceback names: x.detach().cpu().numpy(), or loss.item() for a single value "
        "kept for logging (keep the losses you collect as numbers, not tensors); compute values only for "
        "reporting under torch.no_grad().",
    )


NUMPY_REQUIRES_GRAD = Recogniser(
    kind="numpy_requires_grad",
    templates=("torch_native:numpy-requires-grad", "aten:numpy-on-variable-that-requires-grad"),
    title="a tensor that requires grad handed to NumPy",
    # torch before 0.4 said Variable
    anchors=(
        "Can't call numpy() on Tensor that requires grad",
        "Can't call numpy() on Variable that requires grad",
    ),
    # the same tensor_to_numpy check, reached the same ways
    confirm=called_from_own_code("torch", "numpy"),
    also=(_NUMPY_CALLER,),
    describe=_numpy_grad,
)


def _many(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    count = first(hits, "elements")
    return (
        f"a tensor of {count + ' elements' if count else 'more than one element'} was converted to a Python "
        "number (.item(), float(), a format string)" + on_ranks(hits),
        "Reduce it before converting: an accuracy from an element-wise comparison needs .sum() (or .mean()) "
        "before .item(), e.g. torch.eq(y_true, y_pred).sum().item(); a loss built with reduction='none' needs "
        ".mean(); log a per-class tensor with .tolist() instead.",
    )


_PER_GPU_LOSS = Alternative(
    "dp_nonscalar_loss",
    "the per-GPU losses nn.DataParallel gathers into a vector",
    "If the model runs under nn.DataParallel, its forward returns one loss per GPU: reduce it, loss = "
    "loss.mean(), before .item() and backward(), or train on one GPU (CUDA_VISIBLE_DEVICES=0).",
)

ITEM_NON_SCALAR = Recogniser(
    kind="item_non_scalar",
    templates=("torch_native:only-one-element-to-python-scalar", "torch_native:tensor-elements-to-scalar"),
    title="a tensor of several elements used as a number",
    anchors=(
        "only one element tensors can be converted to Python scalars",
        "elements cannot be converted to Scalar",
    ),
    facts=(R(r"a Tensor with (?P<elements>\d+) elements cannot be converted to Scalar"),),
    # the same words for a metric never reduced and for DataParallel's per-GPU losses
    confirm=lambda hits, ctx: False,
    also=(_PER_GPU_LOSS,),
    describe=_many,
)


RECOGNISERS = (
    VIEW_NONCONTIGUOUS,
    INPUT_SHAPE_MISMATCH,
    TARGET_SHAPE_MISMATCH,
    LOSS_TARGET_DTYPE,
    CUDA_TENSOR_TO_NUMPY,
    PIN_MEMORY_CUDA_TENSOR,
    NUMPY_REQUIRES_GRAD,
    ITEM_NON_SCALAR,
)
