"""The certainty review of helper V6 (issue 19): recognisers that spoke with certainty on a line their source prints
for more than one cause, read against that source. Each test gives the line as its source prints it, alone (only
likely now, the other reading named), and beside the fact that rules the other reading out (certain):

- torch's checks on what a call was handed (``Module.__getattr__`` for a DDP / DataParallel wrapper,
  ``tensor_numpy.cpp`` tensor_to_numpy, ``TensorShape.cpp`` view_impl, ``optimizer.py`` add_param_group,
  ``VariableTypeUtils.h`` check_inplace, ``TensorCompare.cpp`` is_nonzero) refuse whoever made the call: the
  script's own code, or a library's. A traceback whose frames below the script are torch's (and NumPy's, for the
  conversion ``Tensor.__array__`` serves) confirms the script's; a library's frames, or the line alone, leave it
  likely, the library's reading named;
- the NaN checks (anomaly mode's "returned nan values", DeepSpeed's loss scale at its minimum, a loss printed as
  nan or inf, LAPACK's "non-finite values") look for a non-finite value, not for where it came from: an op at the
  edge of its domain or NaN in the data print them in fp32 as well. A model trained in float16 as a whole, which
  the log states, confirms the overflow.
"""

from __future__ import annotations

from explaining import explained, template

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


def likely_with(text: str, kind: str, other: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    assert other in found.details["alternatives"], found.details["alternatives"]
    return found


def certain(text: str, kind: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "certain", found.summary
    return found


GETATTR = (
    f"{SITE}/torch/nn/modules/module.py",
    "raise AttributeError(f\"'{type(self).__name__}' object has no\")",
)


def test_an_attribute_asked_of_the_ddp_wrapper_is_the_scripts_only_when_its_traceback_says_so():
    error = "AttributeError: 'DistributedDataParallel' object has no attribute 'config'"
    likely_with(error + "\n", "ddp_module_attribute", "log.library_version_bug")
    certain(
        traceback(("/home/ana/project/train.py", "print(model.config)"), GETATTR, error=error),
        "ddp_module_attribute",
    )
    # a library's Trainer reading the attribute on the wrapper it was handed: likely, the library named
    found = likely_with(
        traceback(
            (f"{SITE}/transformers/trainer.py", "self.model.config.use_cache = False"), GETATTR, error=error
        ),
        "ddp_module_attribute",
        "log.library_version_bug",
    )
    assert "library made the call" in found.fix


def test_numpy_refusing_a_cuda_tensor_is_the_scripts_only_when_its_traceback_says_so():
    error = "TypeError: " + template("torch_native:cuda-tensor-to-numpy", "cuda:0")
    likely_with(error + "\n", "cuda_tensor_to_numpy", "log.library_version_bug")
    array = (f"{SITE}/torch/_tensor.py", "return self.numpy()")
    # np.mean over the tensor in the script: NumPy's own frames and torch's __array__ below it
    certain(
        traceback(
            ("/home/ana/project/train.py", "score = np.mean(preds)"),
            (f"{SITE}/numpy/core/fromnumeric.py", "return _methods._mean(a, axis=axis)"),
            array,
            error=error,
        ),
        "cuda_tensor_to_numpy",
    )
    likely_with(
        traceback(
            (f"{SITE}/sklearn/metrics/_classification.py", "y_true = check_array(y_true)"), array, error=error
        ),
        "cuda_tensor_to_numpy",
        "log.library_version_bug",
    )


def test_numpy_refusing_a_tensor_that_requires_grad_is_the_scripts_only_when_its_traceback_says_so():
    error = "RuntimeError: " + template("torch_native:numpy-requires-grad")
    likely_with(error + "\n", "numpy_requires_grad", "log.library_version_bug")
    certain(
        traceback(("/home/ana/project/train.py", "out = pred.numpy()"), error=error), "numpy_requires_grad"
    )


def test_view_on_a_non_contiguous_tensor_is_the_scripts_only_when_its_traceback_says_so():
    error = "RuntimeError: " + template("torch_native:view-size-not-compatible")
    likely_with(error + "\n", "view_noncontiguous", "log.library_version_bug")
    certain(traceback(("/home/ana/project/model.py", "x = x.view(b, -1)"), error=error), "view_noncontiguous")
    likely_with(
        traceback((f"{SITE}/timm/models/vision_transformer.py", "x = x.view(B, N, C)"), error=error),
        "view_noncontiguous",
        "log.library_version_bug",
    )


def test_an_optimizer_given_a_non_leaf_is_the_scripts_only_when_its_traceback_says_so():
    error = "ValueError: " + template("torch_native:optimizer-non-leaf")
    likely_with(error + "\n", "optimizer_non_leaf", "log.library_version_bug")
    add_group = (f"{SITE}/torch/optim/optimizer.py", 'raise ValueError("can\'t optimize a non-leaf Tensor")')
    certain(
        traceback(
            ("/home/ana/project/train.py", "opt = torch.optim.Adam([w], lr=0.1)"), add_group, error=error
        ),
        "optimizer_non_leaf",
    )
    likely_with(
        traceback(
            (f"{SITE}/lightning/pytorch/core/optimizer.py", "optim_conf = model.configure_optimizers()"),
            add_group,
            error=error,
        ),
        "optimizer_non_leaf",
        "log.library_version_bug",
    )


def test_a_leaf_changed_in_place_is_the_scripts_only_when_its_traceback_says_so():
    error = "RuntimeError: " + template("aten:leaf-variable-requires-grad-in-place")
    likely_with(error + "\n", "leaf_inplace", "log.library_version_bug")
    certain(traceback(("/home/ana/project/train.py", "w -= lr * w.grad"), error=error), "leaf_inplace")


def test_a_tensor_in_a_condition_is_the_scripts_only_when_its_traceback_says_so():
    error = "RuntimeError: " + template("aten:boolean-value-of-tensor-more-than-one-value")
    likely_with(error + "\n", "tensor_in_python_condition", "log.library_version_bug")
    certain(
        traceback(("/home/ana/project/train.py", "if pred == target:"), error=error),
        "tensor_in_python_condition",
    )
    # torch's own check on an argument the script passed (dropout's p given as a tensor) is still the script's
    certain(
        traceback(
            ("/home/ana/project/train.py", "x = F.dropout(x, p=drop)"),
            (f"{SITE}/torch/nn/functional.py", "if p < 0.0 or p > 1.0:"),
            error=error,
        ),
        "tensor_in_python_condition",
    )


def test_a_nan_is_an_overflow_only_beside_a_model_trained_in_float16():
    for line in (
        "RuntimeError: " + template("torch_native:anomaly-returned-nan", "SqrtBackward0", "0"),
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


def test_an_empty_parameter_list_is_the_scripts_only_when_its_traceback_says_so():
    error = "ValueError: " + template("torch:optimizer-got-an-empty-parameter-list")
    likely_with(error + "\n", "optimizer_no_params", "log.library_version_bug")
    init = (f"{SITE}/torch/optim/optimizer.py", 'raise ValueError("optimizer got an empty parameter list")')
    certain(
        traceback(("/home/ana/project/train.py", "opt = torch.optim.SGD(params, lr=0.1)"), init, error=error),
        "optimizer_no_params",
    )


def test_pack_padded_lengths_on_the_gpu_are_the_scripts_only_when_its_traceback_says_so():
    error = "RuntimeError: " + template("torch_native:pack-lengths-1d-cpu-int64", "1D cuda:0 Long tensor")
    likely_with(error + "\n", "pack_lengths_on_gpu", "log.library_version_bug")
    pack = (f"{SITE}/torch/nn/utils/rnn.py", "_VF._pack_padded_sequence(input, lengths, batch_first)")
    certain(
        traceback(("/home/ana/project/model.py", "x = pack_padded_sequence(x, lengths)"), pack, error=error),
        "pack_lengths_on_gpu",
    )
    likely_with(
        traceback(
            (f"{SITE}/allennlp/nn/util.py", "packed = pack_padded_sequence(x, lengths)"), pack, error=error
        ),
        "pack_lengths_on_gpu",
        "log.library_version_bug",
    )


def test_a_cpu_tensor_in_an_nccl_collective_is_the_scripts_only_when_its_traceback_says_so():
    error = "RuntimeError: " + template("torch_native:tensors-must-be-cuda-and-dense")
    likely_with(error + "\n", "cpu_tensor_nccl", "log.library_version_bug")
    reduce = (f"{SITE}/torch/distributed/distributed_c10d.py", "work = group.allreduce([tensor], opts)")
    certain(
        traceback(("/home/ana/project/train.py", "dist.all_reduce(correct)"), reduce, error=error),
        "cpu_tensor_nccl",
    )
    likely_with(
        traceback(
            (
                f"{SITE}/torchmetrics/utilities/distributed.py",
                "torch.distributed.all_gather(gathered, result)",
            ),
            reduce,
            error=error,
        ),
        "cpu_tensor_nccl",
        "log.library_version_bug",
    )


def test_to_on_a_tuple_is_the_scripts_only_when_its_traceback_says_so():
    error = "AttributeError: 'tuple' object has no attribute 'to'"
    likely_with(error + "\n", "batch_not_tensor", "log.library_version_bug")
    certain(traceback(("/home/ana/project/train.py", "y = y.to(device)"), error=error), "batch_not_tensor")
    # the near miss: something that returned None is not a container
    assert explained("AttributeError: 'NoneType' object has no attribute 'to'\n").id != "log.batch_not_tensor"


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


def test_backward_on_a_tuple_is_the_scripts_only_when_its_traceback_says_so():
    error = "AttributeError: 'tuple' object has no attribute 'backward'"
    likely_with(error + "\n", "loss_not_tensor", "log.library_version_bug")
    certain(traceback(("/home/ana/project/train.py", "loss.backward()"), error=error), "loss_not_tensor")
    likely_with(
        traceback(
            (f"{SITE}/lightning/pytorch/core/module.py", "loss.backward(*args, **kwargs)"), error=error
        ),
        "loss_not_tensor",
        "log.library_version_bug",
    )


def test_a_module_called_is_the_scripts_only_when_its_traceback_says_so():
    error = "TypeError: 'module' object is not callable"
    likely_with(error + "\n", "module_called_as_class", "log.library_version_bug")
    certain(
        traceback(("/home/ana/project/train.py", "net = Model(cfg)"), error=error), "module_called_as_class"
    )
    # the near miss: another object that is not callable is not a module called
    assert explained("TypeError: 'Tensor' object is not callable\n").id != "log.module_called_as_class"


def test_a_non_contiguous_tensor_in_a_collective_is_the_scripts_only_when_its_traceback_says_so():
    error = "RuntimeError: " + template("torch_native:tensors-must-be-contiguous")
    likely_with(error + "\n", "noncontiguous_tensor", "log.library_version_bug")
    reduce = (f"{SITE}/torch/distributed/distributed_c10d.py", "work = group.allreduce([tensor], opts)")
    certain(
        traceback(("/home/ana/project/train.py", "dist.all_reduce(x.t())"), reduce, error=error),
        "noncontiguous_tensor",
    )
