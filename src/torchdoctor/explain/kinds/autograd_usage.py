"""A training loop using autograd or the optimizer in a way they refuse.

- Backward through a graph a previous backward already freed: autograd frees the tensors a graph saved once
  its backward ran, and unpacking one afterwards throws ``ERR_BACKWARD_TWICE``
  (``torch/csrc/autograd/saved_variable.cpp``: "Trying to backward through the graph a second time ...", worded
  three ways from 0.4 to 2.x). Either the loop calls backward twice on one loss, or it reuses a tensor
  computed once before the loop (a feature, a hidden state kept across steps) whose graph the first step
  freed; ``retain_graph=True`` silences the first and only hides the second, so the finding names both. Certain
  where the traceback shows the script's own code calling backward through torch's frames alone; a trainer's or
  another library's frames (a loop that calls backward itself, its checkpointing or caching) leave it likely,
  that library's release named.
- cuDNN's RNN backward in eval mode (``aten/src/ATen/native/cudnn/RNN.cpp``: "cudnn RNN backward can only be
  called in training mode"; 0.4's "backward_input can only be called in training mode"): the forward of an
  LSTM/GRU in eval mode keeps no workspace for a backward.
- A loss autograd recorded nothing for (``torch/csrc/autograd/python_engine.cpp`` run_backward: "element 0 of
  tensors does not require grad and does not have a grad_fn"): computed under no_grad, from frozen parameters,
  or rebuilt from Python numbers. Certain only where the script's own code called backward through torch's
  frames alone: under a trainer the forward is the library's too, and its settings print it for a model that is
  right (transformers' gradient checkpointing over a frozen model with LoRA adapters, whose inputs need
  enable_input_require_grads; DeepSpeed's activation checkpointing; an optimizer or loop that turns grad mode off,
  Lightning-AI/pytorch-lightning#18222): likely, that reading named.
- A tensor the forward saved, changed in place before the backward (``saved_variable.cpp``: "one of the
  variables needed for gradient computation has been modified by an inplace operation"): certain in a log
  without DDP; with DDP in it, ``ddp_buffer_inplace`` (autograd.py) takes the line and names this reading.
- A parameter or another leaf that requires grad changed in place while autograd records
  (``VariableTypeUtils.h`` check_inplace: "a leaf Variable that requires grad is being used in an in-place
  operation."): a hand-written update step or an initialisation outside ``torch.no_grad()``.
- An optimizer built over no parameters (``torch/optim/optimizer.py`` Optimizer.__init__, and the functional
  optimizers of ``torch/distributed/optim``: "optimizer got an empty parameter list").
- Sparse gradients handed to an optimizer without sparse support: ``torch/optim/adam.py``, ``adamw.py`` and
  ``rmsprop.py`` raise "Adam does not support sparse gradients, please consider SparseAdam instead" (AdamW,
  RMSprop alike) for a ``grad.is_sparse``, which only ``nn.Embedding``/``nn.EmbeddingBag`` built with
  ``sparse=True`` (or a sparse parameter) produce. DeepSpeed's 1-bit and 0/1 Adam print the same words about
  their own config (kinds/deepspeed_engine_refusals.py) and are left to it; DeepSpeed's FusedAdam (the optimizer its
  config's "Adam" builds on a GPU) refuses sparse gradients in torch's words and is read here.
- An optimizer given a tensor that is not a leaf (``torch/optim/optimizer.py`` Optimizer.add_param_group, and
  libtorch's ``torch/csrc/api/src/optim/optimizer.cpp``: "can't optimize a non-leaf Tensor"): a tensor made with
  requires_grad=True and then moved or computed on is a new node of the graph, not the leaf the optimizer updates.
- An explicit gradient of the wrong shape (``torch/autograd/__init__.py`` ``_make_grads``, every release since
  0.4): "Mismatch in shape: grad_output[i] has a shape of A and output[i] has a shape of B." ``backward(gradient)``,
  ``torch.autograd.backward(tensors, grad_tensors)`` and ``torch.autograd.grad(..., grad_outputs=...)`` take one
  gradient per output, shaped as that output; with ``is_grads_batched=True`` the same check words it "... The sizes
  of the remaining dimensions are expected to match the shape of corresponding output, but a mismatch was detected:
  grad_output[i] ...". Since torch 0.4 a reduced loss is 0-dimensional (``torch.Size([])``), so the
  ``torch.ones(1)`` / ``torch.FloatTensor([1])`` that older code passes as its gradient is ``torch.Size([1])``: the
  message names both shapes, and the finding names that case when those are the shapes. The check is the caller's
  own argument against its own output, so the reading is certain.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import zero_frozen_groups
from torchdoctor.explain.recognisers import (
    Context,
    Hit,
    Pattern,
    Recogniser,
    called_from_own_code,
    first,
    library_call,
    merged,
    on_ranks,
)

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)
# "[torch.cuda.FloatTensor [64, 128]], which is output 0 of ReluBackward0, is at version 2" (1.5+; wraps in
# some consoles)
SAVED_TENSOR = R(
    r"inplace\s+operation:\s+\[(?P<tensor>[\w.]{1,60})\s+\[(?P<shape>[\d, ]{1,40})\]\].{0,120}?is\s+at\s+version\s+"
    r"(?P<version>\d{1,9})",
    re.S,
)


def _backward_twice(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "backward ran through a part of the autograd graph that an earlier backward had already freed"
        + on_ranks(hits),
        "Look for a tensor computed once and reused in every step: a feature or embedding computed before the "
        "loop, a hidden state carried from the previous batch (detach it: h = h.detach()), a cached tensor "
        "built from parameters; compute it inside the training loop, or .detach() what should not be trained "
        "through. Or the same loss goes through backward twice (a loss function that calls backward itself and "
        "a trainer that calls it again): remove the second call. retain_graph=True on the first backward is "
        "right only where two backward passes through one graph are meant (two losses sharing a forward).",
    )


BACKWARD_GRAPH_FREED = Recogniser(
    kind="backward_graph_freed",
    templates=(
        "torch_native:backward-graph-second-time",
        "torch_native:backward-graph-second-time-buffers",
        "torch_native:backward-graph-second-time-saved-results",
    ),
    title="backward through an already freed graph",
    anchors=("Trying to backward through the graph a second time",),
    # the backward is the script's where its own code called it through torch alone; a trainer's loop, or a
    # library's model that caches a tensor across steps, prints the same
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's training loop or model (a trainer that calls backward itself, a model that keeps a "
            "tensor across steps, checkpointing) going through a freed graph",
            "remove your own backward call where the trainer makes one, and otherwise search that library's "
            "issues for the message and update it.",
        ),
    ),
    describe=_backward_twice,
)


def _rnn_eval(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "backward ran through a cuDNN RNN (LSTM/GRU) whose module was in eval mode: cuDNN keeps what its "
        "backward needs only in training mode" + on_ranks(hits),
        "Put the model back in training mode before the training step: call model.train() after evaluation or "
        "sampling (a validation function or a generate/sample helper that calls model.eval() leaves it so). "
        "Where gradients through an RNN in eval mode are meant (dynamic evaluation, attribution), run that "
        "forward with torch.backends.cudnn.flags(enabled=False), or keep the RNN in train() with dropout=0.",
    )


RNN_BACKWARD_EVAL_MODE = Recogniser(
    kind="rnn_backward_eval_mode",
    templates=(
        "torch_native:cudnn-rnn-backward-training-mode",
        "torch_native:cudnn-rnn-backward-input-training-mode",
    ),
    title="cuDNN RNN backward in eval mode",
    anchors=(
        "RNN backward can only be called in training mode",
        "backward_input can only be called in training mode",
    ),
    describe=_rnn_eval,
)


def _no_params(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if any(first(hits, key) for key in zero_frozen_groups.FACTS):
        return zero_frozen_groups.no_trainable(hits)
    return (
        "the optimizer was built over an empty list of parameters" + on_ranks(hits),
        "Pass it the parameters of the model being trained, as a list: torch.optim.Adam(list(params), ...). "
        "The list is empty when every parameter has requires_grad=False (a freezing loop that froze all "
        "layers; unfreeze the ones to train), when the parameters come from another object than the model (a "
        "misspelt variable, a wrapper without parameters), or when a filter()/generator was already consumed "
        "once (filter(lambda p: p.requires_grad, model.parameters()) read twice): materialise it with list().",
    )


OPTIMIZER_NO_PARAMS = Recogniser(
    kind="optimizer_no_params",
    templates=("torch:optimizer-got-an-empty-parameter-list", *zero_frozen_groups.TEMPLATES),
    title="an optimizer without parameters",
    # and DeepSpeed ZeRO's optimizer flattening a group with no trainable parameter (kinds/zero_frozen_groups.py):
    # its frame or source line with the empty-list error within the lines after it
    anchors=("optimizer got an empty parameter list", *zero_frozen_groups.ANCHORS),
    match=R(r"optimizer got an empty parameter list|" + zero_frozen_groups.REFUSED.pattern),
    span=zero_frozen_groups.SPAN,
    # torch/optim/optimizer.py Optimizer.__init__ checks the list whoever built the optimizer passed: the script
    # (certain when its traceback shows so), or a library building it from what it was configured with
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code building the optimizer from parameters it selected (none matched its filter, or "
            "its release expects another model layout)",
            "check which parameters its options select for training (a freezing or a name filter), then search "
            "its issues for the message and update it.",
        ),
    ),
    describe=_no_params,
)


def _sparse(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the optimizer was handed sparse gradients, which it does not support" + on_ranks(hits),
        "A layer built with sparse=True (nn.Embedding or nn.EmbeddingBag) gives sparse gradients: set "
        "sparse=False on it to keep Adam/AdamW/RMSprop, or optimise those parameters with torch.optim.SparseAdam "
        "(or SGD / Adagrad, which take sparse gradients) in a second optimizer and the rest with Adam.",
    )


OPTIMIZER_SPARSE_GRADIENTS = Recogniser(
    kind="optimizer_sparse_gradients",
    templates=(
        "torch_cpp:adam-does-not-support-sparse-gradients",
        "torch_cpp:adamw-does-not-support-sparse-gradients",
        "torch_cpp:rmsprop-does-not-support-sparse-gradients",
        # DeepSpeed's FusedAdam (ops/adam/fused_adam.py) words torch's Adam refusal alike
        "deepspeed:fusedadam-does-not-support-sparse-gradients",
    ),
    title="sparse gradients in an optimizer without sparse support",
    anchors=(
        "Adam does not support sparse gradients",
        "AdamW does not support sparse gradients",
        "RMSprop does not support sparse gradients",
    ),
    # DeepSpeed's compressed optimizers word their own refusal alike
    reject=re.compile(r"(?:1-bit|0/1) (?:Adam|Lamb) does not support"),
    describe=_sparse,
)


def _non_leaf(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the optimizer was given a tensor that is not a leaf of the graph: one made with requires_grad=True and "
        "then moved (.cuda(), .to(device)) or computed on (x * 0.01), which returns a new, non-leaf tensor"
        + on_ranks(hits),
        "Give the optimizer the leaf itself, a tensor no operation produced: create it where it will live and "
        "make it require grad last: torch.zeros(shape, "
        "device=device, requires_grad=True), or x = x.to(device).requires_grad_() (scale it before that, "
        "under torch.no_grad()); for a learnable value of a module, register it as an nn.Parameter so that "
        "model.to(device) moves it in place.",
    )


OPTIMIZER_NON_LEAF = Recogniser(
    kind="optimizer_non_leaf",
    templates=("torch_native:optimizer-non-leaf",),
    title="an optimizer given a non-leaf tensor",
    anchors=("can't optimize a non-leaf Tensor",),
    # torch/optim/optimizer.py add_param_group checks the tensors whoever built the optimizer passed: the script
    # (certain when its traceback shows so), or a library building it from a model's parameters
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code building the optimizer from parameters that are not leaves (a parametrised or "
            "moved weight in its model)",
            "search its issues for the message and update it, or pin the torch its release was tested with.",
        ),
    ),
    describe=_non_leaf,
)


def _no_grad(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "backward() was called on a loss that autograd recorded nothing for (no parameter that requires grad "
        "led to it)" + on_ranks(hits),
        "Find where the loss lost its graph: the forward ran under torch.no_grad() or torch.inference_mode() "
        "(an evaluation helper reused in training), every parameter is frozen (print sum(p.requires_grad for p "
        "in model.parameters()); unfreeze the layers to train), or the loss was rebuilt from Python numbers "
        "(torch.tensor(loss.item()), .detach(), .numpy(), argmax/round in the loss: keep the tensors). With "
        "gradient checkpointing on a frozen model with adapters (LoRA/PEFT), call "
        "model.enable_input_require_grads() or checkpoint with use_reentrant=False.",
    )


NO_GRAD_IN_LOSS = Recogniser(
    kind="no_grad_in_loss",
    templates=("aten:element-of-tensors-does-not-require-grad",),
    title="backward on a loss without a graph",
    anchors=(" of tensors does not require grad and does not have a grad_fn",),
    # the forward that recorded nothing is the script's where its own code called backward through torch alone;
    # a trainer's (transformers, Lightning, DeepSpeed) runs its own forward, checkpointing and grad mode
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a trainer's or library's settings that ran the forward without recording (gradient checkpointing "
            "over a frozen model with adapters, DeepSpeed's activation checkpointing, an optimizer or loop that "
            "turns grad mode off)",
            "with gradient checkpointing and LoRA/PEFT call model.enable_input_require_grads() (or "
            'gradient_checkpointing_kwargs={"use_reentrant": False}); otherwise search that library\'s issues '
            "for the message and update it.",
        ),
    ),
    describe=_no_grad,
)


def _inplace(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    tensor = first(hits, "tensor")
    told = f" ({tensor} [{first(hits, 'shape')}], now at version {first(hits, 'version')})" if tensor else ""
    return (
        f"a tensor the forward saved for the backward was changed in place before the backward ran{told}"
        + on_ranks(hits),
        "Turn on torch.autograd.set_detect_anomaly(True) and rerun: the traceback it adds names the forward "
        "line whose result was changed. Replace the in-place operation there (x += y -> x = x + y, "
        "nn.ReLU(inplace=True) -> nn.ReLU(), x[idx] = v -> torch.where or a clone first). In a GAN or any loop "
        "with two losses, call optimizer.step() only after every backward through those parameters (it "
        "changes them in place): compute both losses, then step, or recompute the forward after the step.",
    )


INPLACE_MODIFICATION = Recogniser(
    kind="inplace_modification",
    templates=("torch_native:saved-variable-modified-by-inplace", "aten:saved-variable-modified-bare"),
    title="a saved tensor changed in place before backward",
    anchors=("one of the variables needed for gradient computation has been modified by",),
    match=R(r"modified by\s+an\s+inplace\s+operation"),
    facts=(SAVED_TENSOR,),
    span=3,
    # saved_variable.cpp's version check fires at backward whoever changed the tensor: the script (certain when
    # its traceback reaches backward through torch's frames only), or a library's code, its forward or its own
    # training loop (deepctr-torch 0.2.1's models under torch >= 1.5, fixed in 0.2.2), the bare line likely
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code changing a tensor autograd saved (its forward, or its training loop stepping before "
            "the backward), a bug of its release that newer torch releases refuse",
            "search its issues for the message and upgrade it to the release that fixed it, or pin the torch "
            "that release was written for.",
        ),
    ),
    describe=_inplace,
)


def _leaf(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a parameter (or another tensor made with requires_grad=True) was changed in place while autograd was "
        "recording" + on_ranks(hits),
        "Do updates and initialisations of parameters outside autograd: wrap them in torch.no_grad() (with "
        "torch.no_grad(): w -= lr * w.grad), or change w.data / use nn.init functions, which do so; inside the "
        "forward, compute a new tensor (w = w * mask) instead of changing the parameter in place.",
    )


LEAF_INPLACE = Recogniser(
    kind="leaf_inplace",
    templates=(
        "aten:leaf-variable-requires-grad-in-place",
        "aten:leaf-variable-requires-grad-has-been-used",
        "aten:view-of-leaf-variable-in-place",
    ),
    title="a parameter changed in place under autograd",
    anchors=(
        "leaf Variable that requires grad is being used in an in-place",
        "leaf Variable that requires grad has been used in an in-place",
    ),
    # VariableTypeUtils.h check_inplace refuses the in-place op whoever runs it: the script (certain when its
    # traceback shows so), or a library's code changing a tensor it was handed, or its own weights, in place
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code changing a tensor that requires grad in place (one handed to it, or its own "
            "weights outside torch.no_grad())",
            "hand it x.detach() (or call it under torch.no_grad()) where it should not record gradients, or "
            "update the library if it changes its own weights in place.",
        ),
    ),
    describe=_leaf,
)


def _gradient_shape(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    grad, out = (facts.get("grad_shape") or "").strip(), (facts.get("output_shape") or "").strip()
    shapes = f" (gradient {grad}, output {out})" if grad and out else ""
    if re.fullmatch(r"torch\.Size\(\[1\]\)", grad) and re.fullmatch(r"torch\.Size\(\[\]\)", out):
        return (
            "backward was given a one-element gradient (torch.Size([1])) for a 0-dimensional loss "
            "(torch.Size([])): code written for torch before 0.4, whose losses had one element"
            + on_ranks(hits),
            "A reduced loss is 0-dimensional since torch 0.4: call loss.backward() with no gradient, or pass one of "
            "the loss's own shape, torch.ones_like(loss) (torch.tensor(1.0) rather than torch.ones(1) / "
            "torch.FloatTensor([1])); in torch.autograd.backward([l1, l2], grad_tensors) and a WGAN's "
            "d_loss.backward(one) / backward(mone) the same holds for each tensor.",
        )
    return (
        "backward (or autograd.grad) was given a gradient whose shape differs from its output's"
        + shapes
        + on_ranks(hits),
        "Each gradient passed to tensor.backward(gradient), torch.autograd.backward(tensors, grad_tensors) or "
        "torch.autograd.grad(outputs, inputs, grad_outputs) must have its output's shape: build it as "
        "torch.ones_like(output) (or from output.shape), in the same order as the outputs. A shape that differs "
        "by the number of GPUs is nn.DataParallel gathering one output per replica: reduce the output (mean / "
        "sum) before backward, or build the gradient from the gathered output. With is_grads_batched=True the "
        "first dimension of each gradient is the batch, and the rest must match the output.",
    )


BACKWARD_GRADIENT_SHAPE = Recogniser(
    # torch/autograd/__init__.py _make_grads (both wordings)
    kind="backward_gradient_shape",
    templates=("torch:mismatch-in-shape-grad-output-has", "torch:if-is-grads-batched-true-we"),
    title="a gradient passed to backward of another shape than its output",
    anchors=(
        "Mismatch in shape: grad_output[",
        "The sizes of the remaining dimensions are expected to match the shape of corresponding output",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "If `is_grads_batched=True`, we interpret the first dimension",
    ),
    facts=(
        R(
            r"grad_output\[\d{1,4}\] has a shape of (?P<grad_shape>torch\.Size\(\[[\d, ]{0,80}\]\)) and "
            r"output\[\d{1,4}\] has a shape of (?P<output_shape>torch\.Size\(\[[\d, ]{0,80}\]\))"
        ),
    ),
    describe=_gradient_shape,
)

RECOGNISERS = (
    BACKWARD_GRAPH_FREED,
    RNN_BACKWARD_EVAL_MODE,
    OPTIMIZER_NO_PARAMS,
    OPTIMIZER_SPARSE_GRADIENTS,
    OPTIMIZER_NON_LEAF,
    NO_GRAD_IN_LOSS,
    INPLACE_MODIFICATION,
    LEAF_INPLACE,
    BACKWARD_GRADIENT_SHAPE,
)
