"""A training loop using autograd or the optimizer in a way they refuse.

- Backward through a graph a previous backward already freed: autograd frees the tensors a graph saved once
  its backward ran, and unpacking one afterwards throws ``ERR_BACKWARD_TWICE``
  (``torch/csrc/autograd/saved_variable.cpp``: "Trying to backward through the graph a second time ...", worded
  three ways from 0.4 to 2.x). Either the loop calls backward twice on one loss, or it reuses a tensor
  computed once before the loop (a feature, a hidden state kept across steps) whose graph the first step
  freed; ``retain_graph=True`` silences the first and only hides the second, so the finding names both.
- cuDNN's RNN backward in eval mode (``aten/src/ATen/native/cudnn/RNN.cpp``: "cudnn RNN backward can only be
  called in training mode"; 0.4's "backward_input can only be called in training mode"): the forward of an
  LSTM/GRU in eval mode keeps no workspace for a backward.
- An optimizer built over no parameters (``torch/optim/optimizer.py`` Optimizer.__init__, and the functional
  optimizers of ``torch/distributed/optim``: "optimizer got an empty parameter list").
- Sparse gradients handed to an optimizer without sparse support: ``torch/optim/adam.py``, ``adamw.py`` and
  ``rmsprop.py`` raise "Adam does not support sparse gradients, please consider SparseAdam instead" (AdamW,
  RMSprop alike) for a ``grad.is_sparse``, which only ``nn.Embedding``/``nn.EmbeddingBag`` built with
  ``sparse=True`` (or a sparse parameter) produce. DeepSpeed's 1-bit and 0/1 Adam print the same words about
  their own config (kinds/deepspeed_engine_refusals.py) and are left to it.
- An optimizer given a tensor that is not a leaf (``torch/optim/optimizer.py`` Optimizer.add_param_group, and
  libtorch's ``torch/csrc/api/src/optim/optimizer.cpp``: "can't optimize a non-leaf Tensor"): a tensor made with
  requires_grad=True and then moved or computed on is a new node of the graph, not the leaf the optimizer updates.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks


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
    templates=("torch:optimizer-got-an-empty-parameter-list",),
    title="an optimizer without parameters",
    anchors=("optimizer got an empty parameter list",),
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
        "Create the tensor where it will live and make it require grad last: torch.zeros(shape, "
        "device=device, requires_grad=True), or x = x.to(device).requires_grad_() (scale it before that, "
        "under torch.no_grad()); for a learnable value of a module, register it as an nn.Parameter so that "
        "model.to(device) moves it in place.",
    )


OPTIMIZER_NON_LEAF = Recogniser(
    kind="optimizer_non_leaf",
    templates=("torch_native:optimizer-non-leaf",),
    title="an optimizer given a non-leaf tensor",
    anchors=("can't optimize a non-leaf Tensor",),
    describe=_non_leaf,
)

RECOGNISERS = (
    BACKWARD_GRAPH_FREED,
    RNN_BACKWARD_EVAL_MODE,
    OPTIMIZER_NO_PARAMS,
    OPTIMIZER_SPARSE_GRADIENTS,
    OPTIMIZER_NON_LEAF,
)
