"""The certainty review of helper V6 (issue 19): recognisers that spoke with certainty on a line their source prints
for more than one cause, read against that source. Each test gives the line as its source prints it, alone (only
likely now, the other reading named), and beside the fact that rules the other reading out (certain):

- torch's checks on what a call was handed (``Module.__getattr__`` for a DDP / DataParallel wrapper,
  ``tensor_numpy.cpp`` tensor_to_numpy, ``TensorShape.cpp`` view_impl, ``optimizer.py`` add_param_group,
  ``VariableTypeUtils.h`` check_inplace, ``TensorCompare.cpp`` is_nonzero, ``optimizer.py``'s empty list,
  ``PackedSequence.cpp``'s lengths, ``ProcessGroupNCCL.cpp`` / ``ProcessGroupGloo.cpp``'s CUDA and contiguity
  checks) and CPython's AttributeError / TypeError for ``.to``, ``.backward`` on a tuple and a module called
  refuse whoever made the call: the script's own code, or a library's. A traceback whose frames below the script are torch's (and NumPy's, for the
  conversion ``Tensor.__array__`` serves) confirms the script's; a library's frames, or the line alone, leave it
  likely, the library's reading named;
- the NaN checks (anomaly mode's "returned nan values", DeepSpeed's loss scale at its minimum, a loss printed as
  nan or inf, LAPACK's "non-finite values") look for a non-finite value, not for where it came from: an op at the
  edge of its domain or NaN in the data print them in fp32 as well. A model trained in float16 as a whole, which
  the log states, confirms the overflow;
- conda's UnsatisfiableError (conda/exceptions.py) prints a section per cause in one error, and resolve.py's
  "Found conflicts!" comes before any: a section on the Python or on the system (__cuda) beside the conflict makes
  it likely, no build for this Python or the driver's CUDA named.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/opt/conda/lib/python3.10/site-packages"


def traceback(*frames: tuple[str, str], error: str) -> str:
    """A traceback from the project's train.py through ``frames`` ((file, code), outermost first) to ``error``."""
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/ana/project/train.py", line 88, in <module>',
    ]
    lines.append("    main()")
    for number, (path, code) in enumerate(frames, start=1):
        lines += [f'  File "{path}", line {40 + number}, in f{number}', f"    {code}"]
    return "\n".join([*lines, error]) + "\n"


TORCH = f"{SITE}/torch"
SCRIPT = "/home/ana/project/train.py"
REDUCE = (f"{TORCH}/distributed/distributed_c10d.py", "work = group.allreduce([tensor], opts)")
GETATTR = (f"{TORCH}/nn/modules/module.py", "raise AttributeError(name)")
ADD_GROUP = (f"{TORCH}/optim/optimizer.py", 'raise ValueError("can\'t optimize a non-leaf Tensor")')
PACK = (f"{TORCH}/nn/utils/rnn.py", "_VF._pack_padded_sequence(input, lengths, batch_first)")
ARRAY = (f"{TORCH}/_tensor.py", "return self.numpy()")

# (kind, the error as its source prints it, the script's line that made the call, the frames of torch's (and
# NumPy's) own code between that line and the raise)
CALLED = [
    (
        "ddp_module_attribute",
        "AttributeError: 'DistributedDataParallel' object has no attribute 'config'",
        "print(model.config)",
        [GETATTR],
    ),
    (
        "cuda_tensor_to_numpy",
        "TypeError: " + template("torch_native:cuda-tensor-to-numpy", "cuda:0"),
        "score = np.mean(preds)",
        [(f"{SITE}/numpy/core/fromnumeric.py", "return _methods._mean(a)"), ARRAY],
    ),
    (
        "numpy_requires_grad",
        "RuntimeError: " + template("torch_native:numpy-requires-grad"),
        "out = pred.numpy()",
        [],
    ),
    (
        "view_noncontiguous",
        "RuntimeError: " + template("torch_native:view-size-not-compatible"),
        "x = x.view(b, -1)",
        [],
    ),
    (
        "optimizer_non_leaf",
        "ValueError: " + template("torch_native:optimizer-non-leaf"),
        "opt = torch.optim.Adam([w], lr=0.1)",
        [ADD_GROUP],
    ),
    (
        "optimizer_no_params",
        "ValueError: " + template("torch:optimizer-got-an-empty-parameter-list"),
        "opt = torch.optim.SGD(params, lr=0.1)",
        [(f"{TORCH}/optim/optimizer.py", "raise ValueError(msg)")],
    ),
    (
        "leaf_inplace",
        "RuntimeError: " + template("aten:leaf-variable-requires-grad-in-place"),
        "w -= lr * w.grad",
        [],
    ),
    (
        "tensor_in_python_condition",
        "RuntimeError: " + template("aten:boolean-value-of-tensor-more-than-one-value"),
        "if pred == target:",
        [],
    ),
    # torch's own check on an argument the script passed (dropout's p given as a tensor) is still the script's
    (
        "tensor_in_python_condition",
        "RuntimeError: " + template("aten:boolean-value-of-tensor-more-than-one-value"),
        "x = F.dropout(x, p=drop)",
        [(f"{TORCH}/nn/functional.py", "if p < 0.0 or p > 1.0:")],
    ),
    (
        "pack_lengths_on_gpu",
        "RuntimeError: " + template("torch_native:pack-lengths-1d-cpu-int64", "1D cuda:0 Long tensor"),
        "x = pack_padded_sequence(x, lengths)",
        [PACK],
    ),
    (
        "cpu_tensor_nccl",
        "RuntimeError: " + template("torch_native:tensors-must-be-cuda-and-dense"),
        "dist.all_reduce(correct)",
        [REDUCE],
    ),
    (
        "noncontiguous_tensor",
        "RuntimeError: " + template("torch_native:tensors-must-be-contiguous"),
        "dist.all_reduce(x.t())",
        [REDUCE],
    ),
    ("batch_not_tensor", "AttributeError: 'list' object has no attribute 'to'", "y = y.to(device)", []),
    ("loss_not_tensor", "AttributeError: 'tuple' object has no attribute 'backward'", "loss.backward()", []),
    ("module_called_as_class", "TypeError: 'module' object is not callable", "net = Model(cfg)", []),
]


@pytest.mark.parametrize(("kind", "error", "code", "below"), CALLED, ids=[c[0] for c in CALLED])
def test_a_refusal_of_a_call_is_certain_only_on_the_scripts_own_call(kind, error, code, below):
    likely_with(error + "\n", kind, "log.library_version_bug")
    certain(traceback((SCRIPT, code), *below, error=error), kind)


# (kind, the error, a library's frame that made the call, torch's frames below it)
LIBRARY_CALLED = [
    (
        "ddp_module_attribute",
        CALLED[0][1],
        (f"{SITE}/transformers/trainer.py", "self.model.config.x = 1"),
        [GETATTR],
    ),
    (
        "cuda_tensor_to_numpy",
        CALLED[1][1],
        (f"{SITE}/sklearn/metrics/_classification.py", "check_array(y)"),
        [ARRAY],
    ),
    (
        "view_noncontiguous",
        CALLED[3][1],
        (f"{SITE}/timm/models/vision_transformer.py", "x = x.view(B, N, C)"),
        [],
    ),
    (
        "optimizer_non_leaf",
        CALLED[4][1],
        (f"{SITE}/lightning/pytorch/core/optimizer.py", "model.configure()"),
        [ADD_GROUP],
    ),
    (
        "pack_lengths_on_gpu",
        CALLED[9][1],
        (f"{SITE}/allennlp/nn/util.py", "pack_padded_sequence(x, n)"),
        [PACK],
    ),
    (
        "cpu_tensor_nccl",
        CALLED[10][1],
        (f"{SITE}/torchmetrics/utilities/distributed.py", "all_gather(g, r)"),
        [REDUCE],
    ),
    ("loss_not_tensor", CALLED[13][1], (f"{SITE}/lightning/pytorch/core/module.py", "loss.backward()"), []),
]


@pytest.mark.parametrize(
    ("kind", "error", "library", "below"), LIBRARY_CALLED, ids=[c[0] for c in LIBRARY_CALLED]
)
def test_a_refusal_of_a_librarys_call_is_likely_the_library_named(kind, error, library, below):
    found = likely_with(traceback(library, *below, error=error), kind, "log.library_version_bug")
    assert "library made the call" in found.fix


def test_the_near_misses_of_the_call_refusals_stay_other_kinds():
    # something that returned None is not a container; another object that is not callable is not a module
    assert explained("AttributeError: 'NoneType' object has no attribute 'to'\n").id != "log.batch_not_tensor"
    assert explained("TypeError: 'Tensor' object is not callable\n").id != "log.module_called_as_class"


def test_a_nan_is_an_overflow_only_beside_a_model_trained_in_float16():
    for line in (
        # a node whose op has no edge of its domain (a sqrt's is nan_at_zero's: test_explain_train_classes_5.py)
        "RuntimeError: " + template("torch_native:anomaly-returned-nan", "AddmmBackward0", "0"),
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
        + template("deepspeed:current-loss-scale-already-at-minimum"),
        "epoch 3 step 200 loss=nan",
    ):
        found = likely_with(line + "\n", "nan_overflow", "log.nan_at_zero")
        assert found.details["alternatives"] == ["log.nan_at_zero", "log.bad_training_data"]
        assert "clamp(min=eps)" in found.fix
        certain("python train.py --precision half\n" + line + "\n", "nan_overflow")


def test_a_best_loss_started_at_infinity_is_still_no_nan_at_all():
    # the near miss: the readings added beside nan_overflow do not make it fire where it did not
    assert explained("best_loss: inf\n").id != "log.nan_overflow"
    assert explained("Epoch 0 | best val loss: inf | saving checkpoint\n").id != "log.nan_overflow"


CONDA_PYTHON = """UnsatisfiableError: The following specifications were found
to be incompatible with the existing python installation in your environment:

Specifications:

  - torchvision==0.5.0 -> python[version='>=3.5,<3.6.0a0|>=3.6,<3.7.0a0|>=3.7,<3.8.0a0']

Your python: python=3.9
"""
CONDA_CUDA = """The following specifications were found to be incompatible with your system:

  - feature:/linux-64::__cuda==10.1=0

Your installed CUDA driver is: 10.1
"""
CONDA_EACH_OTHER = """The following specifications were found to be incompatible with each other:

Output in format: Requested package -> Available versions

Package cudatoolkit conflicts for:
torchvision==0.5.0 -> cudatoolkit[version='>=10.0,<10.1|>=9.2,<9.3']
"""


def test_condas_conflict_is_certain_only_without_a_python_or_a_system_section():
    # conda/exceptions.py UnsatisfiableError: one error, a section per cause; resolve.py's "Found conflicts!"
    # comes before any of them
    solving = (
        "Found conflicts! Looking for incompatible packages.\nThis can take several minutes.\nfailed\n\n"
    )
    likely_with(solving, "dependency_version", "log.no_matching_wheel")
    certain("UnsatisfiableError: " + CONDA_EACH_OTHER, "dependency_version")
    certain(solving + "UnsatisfiableError: " + CONDA_EACH_OTHER, "dependency_version")
    found = likely_with(
        solving + CONDA_PYTHON + "\n" + CONDA_EACH_OTHER, "dependency_version", "log.no_matching_wheel"
    )
    assert "log.driver_too_old" not in found.details["alternatives"]
    found = likely_with(
        solving + CONDA_PYTHON + "\n" + CONDA_CUDA, "dependency_version", "log.driver_too_old"
    )
    assert "nvidia-smi" in found.fix
