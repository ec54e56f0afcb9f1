"""A training script's own mistakes as torch's operators, autograd, nn and conversions print them (catalog/aten.tsv):
each message, filled in as a traceback ends with it, is read as its kind at the confidence its source allows, the
fix naming the values; a line that looks like it and is another message is not read as that kind.
"""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

LINEAR_FRAME = (
    'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    out = model(x)\n'
    '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 114, in forward\n'
    "    return F.linear(input, self.weight, self.bias)\n"
)
FRAME = (
    'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss = step(batch)\n'
)

# an optimizer's foreach step as torch 2.x prints its traceback (torch/optim/adamw.py's _multi_tensor_adamw grouping
# the parameters, gradients and states through torch/utils/_foreach_utils.py)
OPTIMIZER_STEP = (
    'Traceback (most recent call last):\n  File "train.py", line 61, in <module>\n    optimizer.step()\n'
    '  File "/usr/lib/python3.10/site-packages/torch/optim/adamw.py", line 509, in _multi_tensor_adamw\n'
    "    grouped_tensors = Optimizer._group_tensors_by_device_and_dtype([\n"
    '  File "/usr/lib/python3.10/site-packages/torch/utils/_foreach_utils.py", line 42, in '
    "_group_tensors_by_device_and_dtype\n"
    "    torch._C._group_tensors_by_device_and_dtype(tensorlistlist, with_indices).items()\n"
)
# the same step taken by transformers' Trainer (its own loop resuming from a checkpoint)
TRAINER_STEP = (
    'Traceback (most recent call last):\n  File "train.py", line 90, in <module>\n    trainer.train()\n'
    '  File "/usr/lib/python3.10/site-packages/transformers/trainer.py", line 2315, in _inner_training_loop\n'
    "    self.optimizer.step()\n"
    '  File "/usr/lib/python3.10/site-packages/torch/optim/adamw.py", line 509, in _multi_tensor_adamw\n'
    "    grouped_tensors = Optimizer._group_tensors_by_device_and_dtype([\n"
)

# (template id, values, what the traceback ends with before it, kind, confidence, words in the summary or fix)
CASES = [
    (  # the NLL loss's CUDA kernel asserting on a class target (device_assert, kinds/cuda.py)
        "aten:nll-loss-cuda-target-assert",
        (),
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
        "thread: [3,0,0] ",
        "device_assert",
        "certain",
        ["-100", "ignore_index"],
    ),
    (  # its reduction='none' kernel spells the target cur_target: the same check, read on the same anchor
        "aten:nll-loss-cuda-no-reduce-target-assert",
        (),
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:171: nll_loss_forward_no_reduce_cuda_kernel: block: [0,0,0], "
        "thread: [3,0,0] ",
        "device_assert",
        "certain",
        ["-100", "ignore_index"],
    ),
    (
        "aten:mat1-and-mat2-shapes-cannot-be-multiplied",
        ("64", "1568", "6272", "10"),
        LINEAR_FRAME + "RuntimeError: ",
        "layer_input_size",
        "certain",
        ["nn.Linear(1568, 10)", "6272"],
    ),
    (
        "aten:mat1-and-mat2-shapes-cannot-be-multiplied",
        ("3", "2", "3", "2"),
        FRAME + "RuntimeError: ",
        "layer_input_size",
        "likely",
        ["in_features", "matrix product of the script's own"],
    ),
    (
        "aten:mat1-dim-must-match-mat2-dim",
        (),
        LINEAR_FRAME + "RuntimeError: ",
        "layer_input_size",
        "certain",
        ["in_features"],
    ),
    (
        "aten:size-mismatch-m1-m2",
        ("64", "1568", "6272", "10", "/pytorch/aten/src/THC/generic/THCTensorMathBlas.cu:283"),
        LINEAR_FRAME + "RuntimeError: ",
        "layer_input_size",
        "certain",
        ["1568"],
    ),
    (
        "aten:layer-norm-normalized-shape-expected-input",
        ("[768]", "768", "[8, 128, 512]"),
        FRAME + "RuntimeError: ",
        "layer_input_size",
        "certain",
        ["LayerNorm", "[8, 128, 512]"],
    ),
    (
        "torch_cpp:input-size-must-be-equal-to",
        (),
        FRAME + "RuntimeError: ",
        "layer_input_size",
        "certain",
        ["input_size=100"],
    ),
    (
        "aten:size-of-tensor-a-must-match-tensor-b",
        ("64", "32", "1"),
        FRAME + "RuntimeError: ",
        "broadcast_size_mismatch",
        "likely",
        ["64 against 32", "dimension 1"],
    ),
    (
        "aten:expanded-size-must-match-existing-size",
        ("5", "8", "0", "[5]", "[8]"),
        FRAME + "RuntimeError: ",
        "broadcast_size_mismatch",
        "likely",
        ["x[a:b] = y"],
    ),
    (
        "aten:conv-groups-expected-input-channels",
        ("1", "[64, 3, 7, 7]", "[8, 1, 224, 224]", "3", "1"),
        FRAME + "RuntimeError: ",
        "conv_input_channels",
        "likely",
        ["convert('RGB')", "in_channels=1"],
    ),
    (
        "aten:conv-groups-expected-input-channels",
        ("1", "[32, 3, 3, 3]", "[16, 224, 224, 3]", "3", "224"),
        FRAME + "RuntimeError: ",
        "conv_input_channels",
        "likely",
        ["permute(0, 3, 1, 2)"],
    ),
    (
        "aten:conv-transposed-expected-input-channels",
        ("1", "[256, 128, 4, 4]", "[4, 128, 16, 16]", "256", "128"),
        FRAME + "RuntimeError: ",
        "conv_input_channels",
        "likely",
        ["in_channels=128"],
    ),
    (
        "aten:conv-unbatched-or-batched-input",
        ("3", "4", "conv2d", "[64, 784]"),
        FRAME + "RuntimeError: ",
        "input_shape_mismatch",
        "likely",
        ["[64, 784]"],
    ),
    (
        "torch:expected-input-got-input",
        ("2",),
        FRAME + "ValueError: ",
        "input_shape_mismatch",
        "likely",
        ["BatchNorm"],
    ),
    (
        "aten:expected-input-batch-size-match-target",
        ("4096", "8"),
        FRAME + "ValueError: ",
        "target_shape_mismatch",
        "likely",
        ["4096 rows", "view(-1, C)"],
    ),
    (
        "aten:nll-multi-target-not-supported",
        (),
        FRAME + "RuntimeError: ",
        "target_shape_mismatch",
        "likely",
        ["argmax(dim=1)"],
    ),
    (
        "aten:thnn-multi-target-not-supported",
        (),
        FRAME + "RuntimeError: ",
        "target_shape_mismatch",
        "likely",
        ["one-hot"],
    ),
    (
        "aten:nll-expected-target-size",
        ("[4, 256]", "[4, 3, 256]"),
        FRAME + "RuntimeError: ",
        "target_shape_mismatch",
        "likely",
        ["[4, 3, 256]", "squeeze(1)"],
    ),
    (
        "aten:nll-target-is-out-of-bounds",
        ("10",),
        FRAME + "IndexError: ",
        "label_out_of_range",
        "certain",
        ["(10)", "num_classes"],
    ),
    (
        "aten:nll-target-is-out-of-bounds",
        ("255",),
        FRAME + "IndexError: ",
        "label_out_of_range",
        "certain",
        ["ignore_index=255"],
    ),
    (
        "aten:index-out-of-range-in-self",
        (),
        FRAME + "IndexError: ",
        "embedding_index_range",
        "likely",
        ["resize_token_embeddings", "max_position_embeddings"],
    ),
    (
        "aten:index-out-of-range-tried-to-access",
        ("30522", "30521", "../aten/src/TH/generic/THTensorEvenMoreMath.cpp:418"),
        FRAME + "RuntimeError: ",
        "embedding_index_range",
        "likely",
        ["id 30522 in a table of 30521 rows"],
    ),
    (
        # the same lookup on the GPU: index_select's kernel asserts the bound (cuda/Indexing.cu)
        "aten:index-select-cuda-assert",
        ("../aten/src/ATen/native/cuda/Indexing.cu:1284", "Large", "193,0,0", "66,0,0"),
        "",
        "embedding_index_range",
        "likely",
        ["index_select's bounds assertion", "resize_token_embeddings"],
    ),
    (
        "aten:element-of-tensors-does-not-require-grad",
        ("0",),
        FRAME + "RuntimeError: ",
        "no_grad_in_loss",
        "certain",
        ["torch.no_grad()", "enable_input_require_grads"],
    ),
    (
        "aten:saved-variable-modified-bare",
        (),
        FRAME + "RuntimeError: ",
        "inplace_modification",
        "certain",
        ["set_detect_anomaly(True)", "optimizer.step()"],
    ),
    (
        "aten:leaf-variable-requires-grad-in-place",
        (),
        FRAME + "RuntimeError: ",
        "leaf_inplace",
        "certain",
        ["torch.no_grad()"],
    ),
    (
        "aten:leaf-variable-requires-grad-has-been-used",
        (),
        FRAME + "RuntimeError: ",
        "leaf_inplace",
        "certain",
        ["w.data"],
    ),
    (
        "aten:view-of-leaf-variable-in-place",
        (),
        FRAME + "RuntimeError: ",
        "leaf_inplace",
        "certain",
        ["no_grad"],
    ),
    (
        "aten:numpy-on-variable-that-requires-grad",
        (),
        FRAME + "RuntimeError: ",
        "numpy_requires_grad",
        "certain",
        ["detach()"],
    ),
    (
        "aten:boolean-value-of-tensor-more-than-one-value",
        (),
        FRAME + "RuntimeError: ",
        "tensor_in_python_condition",
        "certain",
        [".any()", "torch.where"],
    ),
    (
        "aten:expected-scalar-type-but-found",
        ("Float", "Double"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["Float and Double", "torch.float32"],
    ),
    (
        "aten:expected-scalar-type-but-found",
        ("Half", "Float"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["torch.autocast"],
    ),
    (
        "aten:mat1-and-mat2-must-have-same-dtype",
        ("Double", "Float"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["Double and Float"],
    ),
    (
        "aten:m1-and-m2-same-dtype",
        ("double", "float"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["double and float"],
    ),
    (  # torch 2.0's addmm check named no dtype
        "aten:mat1-and-mat2-same-dtype-unnamed",
        (),
        LINEAR_FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["does not name them", "autocast"],
    ),
    (  # the CUDA addmm (cuda/Blas.cpp) names the dtypes as caffe2 does
        "aten:expected-mat1-and-mat2-same-dtype",
        ("float", "c10::Half"),
        LINEAR_FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["float and c10::Half"],
    ),
    (  # a CUDA generator handed to a DataLoader whose sampler draws on the CPU (ATen's check_generator)
        "aten:expected-device-type-for-generator",
        ("cpu", "cuda"),
        "RuntimeError: ",
        "sampler_generator_device",
        "certain",
        ["takes a CPU generator"],
    ),
    (  # torch.multinomial given NaN probabilities: a model's generate() sampling from logits that overflowed
        "aten:multinomial-probability-tensor-invalid",
        (),
        FRAME + "RuntimeError: ",
        "nan_overflow",
        "likely",
        ["logits", "bfloat16"],
    ),
    (  # a constant past float16's range written into a Half tensor
        "aten:value-cannot-be-converted-without-overflow",
        (),
        FRAME + "RuntimeError: ",
        "nan_overflow",
        "likely",
        ["65504", "finfo"],
    ),
    (  # torch.lerp's start and end in two dtypes: an EMA copy in float32 updated from a bf16 model
        "aten:expected-dtype-for-end-but-got",
        ("float", "c10::BFloat16"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["float", "c10::BFloat16", "coerce_dtype"],
    ),
    (
        "aten:expected-dtype-for-weight-but-got",
        ("c10::Half", "float"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["weight", "lerp"],
    ),
    (
        "aten:found-dtype-but-expected",
        ("Double", "Float"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["target.float()"],
    ),
    (
        "aten:input-type-and-bias-type",
        ("torch.cuda.HalfTensor", "torch.cuda.FloatTensor"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["torch.cuda.HalfTensor"],
    ),
    (
        "aten:input-type-and-weight-type-same",
        ("torch.FloatTensor", "torch.cuda.FloatTensor"),
        FRAME + "RuntimeError: ",
        "device_mismatch",
        "certain",
        ["input is still on the CPU"],
    ),
    (
        "aten:input-type-and-bias-type-mkldnn",
        ("torch.FloatTensor", "torch.cuda.FloatTensor"),
        FRAME + "RuntimeError: ",
        "device_mismatch",
        "certain",
        ["its bias are on different devices"],
    ),
    (
        "aten:nll-cuda-kernel-not-implemented-for",
        ("Int",),
        FRAME + "RuntimeError: ",
        "loss_target_dtype",
        "certain",
        ["as Int", "target.long()"],
    ),
    (
        "aten:nll-out-frame-not-implemented-for",
        ("Float",),
        FRAME + "RuntimeError: ",
        "loss_target_dtype",
        "likely",  # or a target meant for another loss (regression, 0/1 labels): certainty_review_5
        ["as Float", "BCEWithLogitsLoss"],
    ),
    (
        "aten:cross-entropy-floating-target-class-probabilities",
        ("Long",),
        FRAME + "RuntimeError: ",
        "loss_target_dtype",
        "likely",  # or logits squeezed to the target's shape: certain beside one_hot (certainty_review_3)
        ["argmax(dim=1)", "BCEWithLogitsLoss"],
    ),
    (
        "aten:dimension-out-of-range",
        ("-1", "0", "1"),
        FRAME + "IndexError: ",
        "input_shape_mismatch",
        "likely",
        ["dimension 1", "squeezed"],
    ),
    (
        "aten:embedding-indices-scalar-types",
        ("torch.cuda.FloatTensor",),
        FRAME + "RuntimeError: ",
        "embedding_index_dtype",
        "likely",  # float ids: the script's data, or a library's bug (925.txt, multimodalhugs#14)
        ["torch.cuda.FloatTensor", "dtype=torch.long"],
    ),
    (
        "aten:embedding-indices-scalar-type-long",
        ("torch.FloatTensor",),
        FRAME + "RuntimeError: ",
        "embedding_index_dtype",
        "likely",  # float ids: the script's data, or a library's bug (925.txt, multimodalhugs#14)
        ["torch.FloatTensor"],
    ),
    (
        "torch_native:expected-scalar-type-for-argument",
        ("Float", "Double", "2", "mat2"),
        FRAME + "RuntimeError: ",
        "dtype_mismatch",
        "likely",
        ["Float and Double"],
    ),
    (
        "torch_native:expected-scalar-type-for-argument",
        ("Long", "Int", "2", "target"),
        FRAME + "RuntimeError: ",
        "loss_target_dtype",
        "certain",
        ["as Int"],
    ),
    (
        "aten:cat-sizes-must-match-except-dimension",
        ("1", "64", "63", "1"),
        FRAME + "RuntimeError: ",
        "input_size_not_divisible",
        "likely",
        ["64 against 63", "2**depth"],
    ),
    (
        "aten:cat-sizes-must-match-offending-index",
        ("1", "38", "37", "2", "1"),
        FRAME + "RuntimeError: ",
        "input_size_not_divisible",
        "likely",
        ["38 against 37"],
    ),
    (
        "aten:th-cat-sizes-must-match",
        ("1", "38", "37", "2", "/pytorch/aten/src/THC/generic/THCTensorMath.cu:71"),
        FRAME + "RuntimeError: ",
        "input_size_not_divisible",
        "likely",
        ["38 against 37"],
    ),
    (
        "aten:numpy-dtype-not-supported",
        ("numpy.uint16", "float64, float32, float16, int64, int32, int16, int8, uint8, and bool"),
        FRAME + "TypeError: ",
        "numpy_dtype_unsupported",
        "certain",
        ["numpy.uint16", "astype(np.int32)"],
    ),
    (
        "aten:shape-invalid-for-input-of-size",
        ("[32, 3, 224, 224]", "1204224"),
        FRAME + "RuntimeError: ",
        "hardcoded_shape",
        "likely",
        ["8 rows of 150528", "drop_last=True"],
    ),
    (
        "aten:index-tensors-long-byte-bool",
        (),
        FRAME + "IndexError: ",
        "index_tensor_dtype",
        "likely",  # the script's index, or one a library builds (taichi-nerfs#15 on Windows)
        [".long()", "int32"],
    ),
    (
        "aten:index-tensors-long-int-byte-bool",
        (),
        FRAME + "IndexError: ",
        "index_tensor_dtype",
        "likely",
        ["floating", ".long()"],
    ),
    (
        "aten:inference-tensors-cannot-be-saved-for-backward",
        (),
        FRAME + "RuntimeError: ",
        "inference_tensor_backward",
        "likely",
        ["torch.no_grad()", "inference_mode"],
    ),
    (
        "aten:only-floating-tensors-can-require-gradients",
        (),
        FRAME + "RuntimeError: ",
        "integer_requires_grad",
        "likely",
        ["requires_grad=False", "register_buffer"],
    ),
    (
        "aten:only-floating-complex-tensors-can-require-gradients",
        (),
        FRAME + "RuntimeError: ",
        "integer_requires_grad",
        "likely",
        ["integer"],
    ),
    (
        "aten:mean-could-not-infer-output-dtype",
        ("Long",),
        FRAME + "RuntimeError: ",
        "mean_integer_tensor",
        "likely",
        ["Long", "x.float().mean()"],
    ),
    (
        "aten:mean-input-dtype-floating-or-complex",
        ("Long",),
        FRAME + "RuntimeError: ",
        "mean_integer_tensor",
        "likely",
        ["Long"],
    ),
    (
        "aten:mean-of-floating-types-only",
        ("Int",),
        FRAME + "RuntimeError: ",
        "mean_integer_tensor",
        "likely",
        ["Int"],
    ),
    (
        "aten:nll-loss-weight-for-all-classes",
        ("4", "[3]"),
        FRAME + "RuntimeError: ",
        "class_weight_count",
        "likely",
        ["shape [3]", "4 classes", "classes=np.arange(C)"],
    ),
    (
        "aten:nll-loss2d-weight-for-all-classes",
        (),
        FRAME + "RuntimeError: ",
        "class_weight_count",
        "likely",
        ["one entry per class"],
    ),
    (
        "aten:lr-scheduler-initial-lr-when-resuming-optimizer",
        ("0",),
        FRAME + 'KeyError: "',
        "scheduler_resume_initial_lr",
        "likely",
        ["param_groups[0]", "last_epoch=-1"],
    ),
    (
        "aten:lr-scheduler-initial-lr-last-epoch",
        ("1",),
        FRAME + 'KeyError: "',
        "scheduler_resume_initial_lr",
        "likely",
        ["param_groups[1]", "load the optimizer's state_dict"],
    ),
    (
        "aten:pool-output-size-too-small",
        ("512", "4", "1", "512", "2", "0"),
        FRAME + "RuntimeError: ",
        "input_too_small",
        "likely",
        ["512x4x1", "AdaptiveAvgPool2d"],
    ),
    (
        "aten:reflection-pad-size-less-than-input",
        ("46", "46", "3", "[1, 3, 128, 36]"),
        FRAME + "RuntimeError: ",
        "input_too_small",
        "likely",
        ["(46, 46)", "padding_mode='zeros'"],
    ),
    (
        "aten:conv-in-channels-divisible-by-groups",
        (),
        FRAME + "ValueError: ",
        "groups_not_divisible",
        "likely",
        ["in_channels", "groups=g"],
    ),
    (
        "aten:conv-out-channels-divisible-by-groups",
        (),
        FRAME + "ValueError: ",
        "groups_not_divisible",
        "likely",
        ["out_channels"],
    ),
    (
        "aten:group-norm-num-channels-divisible",
        (),
        FRAME + "ValueError: ",
        "groups_not_divisible",
        "likely",
        ["num_channels", "math.gcd"],
    ),
    (
        "aten:group-norm-input-channels-divisible",
        ("[1, 6, 4, 4]", "5"),
        FRAME + "RuntimeError: ",
        "groups_not_divisible",
        "likely",
        ["GroupNorm(g, C)"],
    ),
    (
        "aten:ctc-targets-size-at-least",
        ("12", "8", "argument #2 'targets'", "ctc_loss_gpu"),
        FRAME + "RuntimeError: ",
        "ctc_lengths_mismatch",
        "likely",
        ["12 labels", "8 wide", "target_lengths"],
    ),
    (
        "aten:ctc-input-lengths-at-most",
        ("50", "60", "ctc_loss_gpu"),
        FRAME + "RuntimeError: ",
        "ctc_lengths_mismatch",
        "likely",
        ["60", "50 time steps"],
    ),
    (  # torch._scaled_mm's FP8 shape checks (kinds/fp8_shapes.py through layer_shapes.py)
        "aten:scaled-mm-mat1-trailing-dimension-divisible-by-16",
        ("4096", "712"),
        FRAME + "RuntimeError: ",
        "input_size_not_divisible",
        "certain",
        ["4096x712", "pad_inner_dim"],
    ),
    (
        "aten:scaled-mm-mat2-shape-divisible-by-16",
        ("712", "4096"),
        FRAME + "RuntimeError: ",
        "input_size_not_divisible",
        "certain",
        ["712x4096", "module_filter_fn"],
    ),
    (  # a device string formatted from the None of torch.accelerator.current_accelerator() (kinds/device_strings.py)
        "aten:device-type-at-start-of-device-string",
        (
            "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta",
            "None:0",
        ),
        FRAME + "RuntimeError: ",
        "device_string",
        "certain",
        ["current_accelerator()", "torch.device('cpu')"],
    ),
    (  # SyncBatchNorm's gather before torch 2.1 in a model converted to half (kinds/syncbn_precision.py)
        "aten:expected-counts-to-have-type",
        ("Half", "Float"),
        FRAME + "RuntimeError: ",
        "syncbn_half_precision",
        "certain",
        ["torch 2.1", "m.float()"],
    ),
    (  # SyncBatchNorm's own input check before torch 1.4 (kinds/version_refusals.py): also Pipe's DeferredBatchNorm
        "aten:syncbn-expected-at-least-3d-input",
        ("2",),
        FRAME + "ValueError: ",
        "dependency_version",
        "likely",
        ["1.4", "convert_sync_batchnorm"],
    ),
    (  # a LayerNorm's parameter FSDP resharded, met by reentrant checkpointing's recomputation (kinds/empty_params.py)
        "aten:layer-norm-weight-shape",
        ("[0]", "[1152]"),
        FRAME + "RuntimeError: ",
        "fsdp_params_outside_forward",
        "likely",
        ["use_reentrant", "summon_full_params"],
    ),
    (
        "aten:layer-norm-bias-shape",
        ("[0]", "[4096]"),
        FRAME + "RuntimeError: ",
        "fsdp_params_outside_forward",
        "likely",
        ["use_reentrant"],
    ),
    (  # joining what a loader that gave no batch collected (kinds/empty_batches.py)
        "aten:cat-expected-non-empty-list",
        (),
        FRAME + "ValueError: ",
        "dataset_too_small",
        "likely",
        ["drop_last=False", "len(loader)"],
    ),
    (  # x[index] = value whose sizes are the region's in another order (reshape_sizes.py)
        "aten:index-put-value-cannot-be-broadcast",
        ("[4096, 6]", "[6, 4096]"),
        FRAME + "RuntimeError: ",
        "index_assign_shape",
        "likely",
        ["transposed", "value.t()"],
    ),
    (
        "aten:stack-expects-non-empty-tensorlist",
        (),
        FRAME + "RuntimeError: ",
        "dataset_too_small",
        "likely",
        ["batch_size"],
    ),
    (  # an optimizer's state or gradient apart from its parameter (kinds/optimizer_state.py)
        "aten:foreach-same-index-same-device-dtype-float32",
        (),
        OPTIMIZER_STEP + "RuntimeError: ",
        "optimizer_state_mismatch",
        "certain",
        ["exp_avg", "load_state_dict", "model.to(device)"],
    ),
    (
        "aten:foreach-same-index-same-device-dtype-float32-64",
        (),
        TRAINER_STEP + "RuntimeError: ",
        "optimizer_state_mismatch",
        "likely",
        ["a library's code that moved, cast or restored", "foreach=False"],
    ),
    (
        "aten:foreach-same-index-same-device-dtype-bfloat16-states",
        (),
        OPTIMIZER_STEP + "RuntimeError: ",
        "optimizer_state_mismatch",
        "certain",
        ["already allows bfloat16 states", "map_location='cpu'"],
    ),
]


@pytest.mark.parametrize(
    ("ident", "values", "prefix", "kind", "confidence", "words"),
    CASES,
    ids=[f"{c[0]}-{c[4]}-{i}" for i, c in enumerate(CASES)],
)
def test_a_scripts_mistake_is_read_as_its_kind(ident, values, prefix, kind, confidence, words):
    # the catalog holds the head of torch_cpp's row only (a string of the .so): its values follow it
    tail = " 300, got 100" if ident == "torch_cpp:input-size-must-be-equal-to" else ""
    leads_with(prefix + template(ident, *values) + tail, kind, confidence, words)


def test_every_template_of_aten_is_mapped_and_has_its_case():
    aten = {ident for ident in by_id() if ident.startswith("aten:")}
    assert all(by_id()[ident].kind for ident in aten)
    assert aten <= {case[0] for case in CASES}


def test_a_tokenizer_warning_makes_the_index_error_a_sequence_too_long_for_certain():
    log = (
        "Token indices sequence length is longer than the specified maximum sequence length for this model "
        "(600 > 512). Running this sequence through the model will result in indexing errors\n"
        + FRAME
        + '  File "modeling_bert.py", line 237, in forward\n'
        "    position_embeddings = self.position_embeddings(position_ids)\n"
        "IndexError: index out of range in self\n"
    )
    found = explained(log)
    assert found.id == "log.sequence_too_long"
    assert found.details["confidence"] == "certain"
    assert "max_length=512" in found.fix


def test_a_table_of_a_position_tables_size_is_likely_a_sequence_too_long():
    found = explained(
        "RuntimeError: index out of range: Tried to access index 512 out of table with 511 rows. at "
        "/pytorch/aten/src/TH/generic/THTensorEvenMoreMath.cpp:418\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.sequence_too_long", "likely")
    assert "log.embedding_index_range" in found.details["alternatives"]


def test_the_positions_lookup_alone_is_only_likely_a_sequence_too_long():
    log = (
        FRAME
        + "    position_embeddings = self.position_embeddings(position_ids)\nIndexError: index out of range in self\n"
    )
    found = explained(log)
    assert (found.id, found.details["confidence"]) == ("log.sequence_too_long", "likely")


def test_an_inplace_change_under_ddp_stays_the_buffer_reading_and_names_the_models_own():
    log = (
        FRAME
        + '  File "/usr/lib/python3/site-packages/torch/nn/parallel/distributed.py", line 1008, in forward\n'
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.cuda.FloatTensor [256]] is at version 4; expected version 3 instead.\n"
    )
    found = explained(log)
    assert (found.id, found.details["confidence"]) == ("log.ddp_buffer_inplace", "likely")
    assert "log.inplace_modification" in found.details["alternatives"]


def test_cat_in_the_dataloaders_collate_names_the_collate_reading():
    log = (
        '  File "/usr/lib/python3/site-packages/torch/utils/data/_utils/collate.py", line 56, in default_collate\n'
        "    return torch.stack(batch, 0, out=out)\nRuntimeError: invalid argument 0: Sizes of tensors must match "
        "except in dimension 0. Got 375 and 500 in dimension 2 at /pytorch/aten/src/TH/generic/THTensor.cpp:689\n"
    )
    found = explained(log)
    assert found.details["confidence"] == "likely"
    assert "log.collate_unequal_sizes" in found.details["alternatives"]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # torch.distributed's own range checks: not a class label
        (
            "ValueError: Rank 4 at index 1 is out of bounds for group size 4. Valid ranks are in range [0, 3].",
            "label_out_of_range",
        ),
        ("IndexError: index 12 is out of bounds for dimension 0 with size 8", "label_out_of_range"),
        # a Long expected is an index or a class-index target, not two floating dtypes
        ("RuntimeError: expected scalar type Long but found Float", "dtype_mismatch"),
        # a CPU input against CUDA weights is a device, not a dtype
        (
            "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same",
            "dtype_mismatch",
        ),
        # a checkpoint of another shape is a state dict's message, not a Linear's
        (
            "RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with "
            "shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([100, 512]).",
            "layer_input_size",
        ),
        # index_select's dtype check, and a gather out of its dimension: no embedding table named
        ("RuntimeError: index_select(): Expected dtype int32 or int64 for index", "embedding_index_range"),
        # multi_margin_loss's own target check is not nll_loss's
        ("RuntimeError: The size of tensor a must match", "broadcast_size_mismatch"),
        ("RuntimeError: Sizes of tensors must match", "input_size_not_divisible"),
        ("UserWarning: Boolean value of Tensor with no values is ambiguous", "tensor_in_python_condition"),
        # ForeachUtils.h's other checks: a list's length, not tensors apart
        (
            "RuntimeError: Tensor lists must have the same number of tensors, got 3 and 2",
            "optimizer_state_mismatch",
        ),
    ],
)
def test_a_near_miss_is_not_read_as_the_kind(line, kind):
    found = explained(FRAME + line + "\n")
    assert found.id != f"log.{kind}", (line, found.summary)
