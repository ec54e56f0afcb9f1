"""The knowledge the twentieth sample by symptom (corpus files 817-859, train half) asked for, each anchored on the
message its source prints: ATen's view, einsum, convolution, pin_memory and argument-type checks, the NumPy bridge
(tensor_numpy.cpp), binary cross-entropy's target check (nn/functional.py), autograd's ERR_BACKWARD_TWICE, cuDNN's
RNN backward in eval mode, the optimizer's empty parameter list, and CPython's FileNotFoundError for a dataset
path. Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_view_on_a_non_contiguous_tensor():
    # 827.txt (sergeywong/cp-vton#30, the title), 829.txt (lukemelas/EfficientNet-PyTorch#259, accuracy())
    # certain where the traceback shows the script's own .view(); the line alone is only likely (a library's
    # code reaches the same check: tests/test_explain_certainty_review.py)
    for name, confidence in (("827.txt", "likely"), ("829.txt", "certain")):
        found = lead(name)
        assert found.id == "log.view_noncontiguous" and found.details["confidence"] == confidence
        assert "reshape" in found.fix
    old = template("torch_native:view-size-not-compatible-contiguous")
    assert explained(f"RuntimeError: {old}\n").id == "log.view_noncontiguous"
    # reshape's own shape error is another mistake
    found = explained("RuntimeError: shape '[8, -1]' is invalid for input of size 30\n")
    assert found.id != "log.view_noncontiguous"


def test_an_operand_with_the_wrong_number_of_dimensions():
    # 822.txt (locuslab/deq#17): einsum's subscripts against a 4-D operand
    found = lead("822.txt")
    assert found.id == "log.input_shape_mismatch" and "operand 0 has 4 dimensions" in found.summary
    line = template("torch_native:conv-input-dimensions", "4", "4", "[64, 1, 3, 3]", "3", "[15, 224, 224]")
    found = explained(f"RuntimeError: {line}\n")
    assert found.id == "log.input_shape_mismatch" and "[15, 224, 224]" in found.summary
    assert "squeeze" in found.fix
    # a weight of another channel count is not a dimension count
    found = explained(
        "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 1, 224, 224] to have "
        "3 channels, but got 1 channels instead\n"
    )
    assert found.id != "log.input_shape_mismatch"


def test_a_binary_cross_entropy_target_of_another_shape():
    # 831.txt (milesial/Pytorch-UNet#244): RGB masks for a one-channel output
    found = lead("831.txt")
    assert found.id == "log.target_shape_mismatch" and "grayscale" in found.fix
    assert "torch.Size([1, 3, 256, 256])" in found.summary
    # the deprecation warning of BCELoss about sizes is not the refusal
    found = explained(
        "UserWarning: Using a target size (torch.Size([16])) that is different to the input size "
        "(torch.Size([16, 1])) is deprecated. Please ensure they have the same size.\n"
    )
    assert found.id != "log.target_shape_mismatch"


def test_class_index_targets_that_are_not_long():
    # 824.txt (dumitrescustefan/Romanian-Transformers#6): int32 labels on Windows
    found = lead("824.txt")
    assert found.id == "log.loss_target_dtype" and ".long()" in found.fix
    # the same check on another argument says nothing about the target
    line = template("torch_native:expected-scalar-type-for-argument", "Float", "Double", "2", "mat2")
    assert explained(f"RuntimeError: {line}\n").id != "log.loss_target_dtype"


def test_a_cuda_tensor_handed_to_numpy():
    # 825.txt (jokermask/SANet#4): the message of torch before 1.6
    found = lead("825.txt")
    assert found.id == "log.cuda_tensor_to_numpy" and ".cpu()" in found.fix
    line = template("torch_native:cuda-tensor-to-numpy", "cuda:0")
    assert explained(f"TypeError: {line}\n").id == "log.cuda_tensor_to_numpy"
    # NumPy refusing a tensor that needs grad is another conversion error
    found = explained(
        "RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.\n"
    )
    assert found.id != "log.cuda_tensor_to_numpy"


def test_pinning_batches_already_on_the_gpu():
    # 859.txt (DavidWBressler/GCNN#2): a collate_fn that puts the batch on the GPU
    found = lead("859.txt")
    assert found.id == "log.pin_memory_cuda_tensor" and "pin_memory=False" in found.fix
    assert "torch.cuda.LongTensor" in found.summary
    # a sparse CPU tensor is refused by the same check, but it is not on the GPU
    line = template("torch_native:pin-memory-only-dense-cpu", "torch.sparse.FloatTensor")
    assert explained(f"RuntimeError: {line}\n").id != "log.pin_memory_cuda_tensor"


def test_backward_through_a_freed_graph():
    # 818.txt (dropreg/R-Drop#8): a second backward of one loss
    found = lead("818.txt")
    assert found.id == "log.backward_graph_freed" and "detach" in found.fix and "retain_graph" in found.fix
    for ident in (
        "torch_native:backward-graph-second-time",
        "torch_native:backward-graph-second-time-buffers",
    ):
        assert explained(f"RuntimeError: {template(ident)}\n").id == "log.backward_graph_freed"
    # autograd's in-place check is another refusal of a saved tensor
    found = explained(
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3, 4]], which is output 0 of TBackward, is at version 2; expected "
        "version 1 instead.\n"
    )
    assert found.id != "log.backward_graph_freed"


def test_cudnn_rnn_backward_in_eval_mode():
    # 854.txt (pytorch/pytorch#5878, torch 0.4's wording), 856.txt (wiseodd/controlled-text-generation#24)
    for name in ("854.txt", "856.txt"):
        found = lead(name)
        assert found.id == "log.rnn_backward_eval_mode" and "model.train()" in found.fix
    line = template("torch_native:cudnn-rnn-backward-training-mode")
    assert explained(f"RuntimeError: {line}\n").id == "log.rnn_backward_eval_mode"
    # a custom LSTM kernel's own refusal (haste-style autograd.Function) is not cuDNN's
    found = explained("RuntimeError: LSTM backward can only be called in training mode\n")
    assert found.id != "log.rnn_backward_eval_mode"


def test_an_optimizer_without_parameters():
    # 834.txt (YanaiEliyahu/AdasOptimizer#2): a filter() generator read twice
    found = lead("834.txt")
    assert found.id == "log.optimizer_no_params" and "list(" in found.fix
    # ZeroRedundancyOptimizer's own message is torch.distributed's and not matched here
    found = explained("ValueError: ZeroRedundancyOptimizer got an empty parameter list\n")
    assert found.id != "log.optimizer_no_params"


def test_a_dataset_path_that_does_not_exist():
    # 845.txt (nka77/DAHiTra#7), 847.txt (fcdl94/MiBv2#3), 849.txt (stonezwr/TSSL-BP#9, a full-width colon)
    for name in ("845.txt", "847.txt", "849.txt"):
        found = lead(name)
        assert found.id == "log.data_path_missing" and found.details["confidence"] == "likely"
    found = lead("845.txt")
    assert "'../data/xbd/train/images'" in found.summary and "root_dir" in found.fix
    # a missing shared library has its own kind, never a dataset path
    found = explained(
        "FileNotFoundError: [Errno 2] No such file or directory: '/usr/lib/x86_64-linux-gnu/libcuda.so.1'\n"
    )
    assert found.id != "log.data_path_missing"
