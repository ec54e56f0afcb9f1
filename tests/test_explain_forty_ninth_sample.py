"""The forty-ninth sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2267-2297)."""

from __future__ import annotations

import pytest
from explaining import explained, likely_with

FRAME = (
    'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss = step(batch)\n'
)

# torch/csrc/autograd/saved_variable.cpp, as snowflakedb/ArcticTraining#265 posted it (a held-out file's thread: the
# train file 2275 is its title's prose line)
INFERENCE = (
    "E           [rank0]: RuntimeError: Inference tensors cannot be saved for backward. To work around you can make "
    "a clone to get a normal tensor and use it in autograd.\n"
)


def test_an_inference_tensor_saved_for_backward_names_no_grad_for_inference_mode():
    found = likely_with(INFERENCE, "inference_tensor_backward", "log.library_version_bug")
    assert "torch.no_grad()" in found.fix and "@torch.inference_mode()" in found.fix


def test_the_title_quoting_it_is_read_too():
    line = (
        "Official notebook model cannot do training,foward then raise RuntimeError: Inference tensors cannot be "
        "saved for backward.\n"
    )
    likely_with(line, "inference_tensor_backward", "log.library_version_bug")


# torch/csrc/autograd/variable.h set_requires_grad, 0.4's wording (jiasenlu/NeuralBabyTalk#26) and 1.6+'s
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: Only Tensors of floating point dtype can require gradients\n",
        "RuntimeError: only Tensors of floating point and complex dtype can require gradients\n",
    ],
)
def test_an_integer_tensor_made_to_require_gradients_is_kept_out_of_them(line):
    found = likely_with(
        FRAME + "    self.fg_mask = Parameter(opt.fg_mask)\n" + line,
        "integer_requires_grad",
        "log.library_version_bug",
    )
    assert "requires_grad=False" in found.fix


# aten/src/ATen/native/LossNLL.cpp, as imranulashrafi/banner#2 posted it
def test_class_weights_of_another_count_name_both_counts():
    found = likely_with(
        "RuntimeError: weight tensor should be defined either for all 6 classes or no classes but got weight "
        "tensor of shape: [10]\n",
        "class_weight_count",
        "log.library_version_bug",
    )
    assert "[10]" in found.summary and "6 classes" in found.summary


# aten/src/ATen/native/ReduceOps.cpp, as pyg-team/pytorch_geometric#7735 posted it
def test_the_mean_of_a_long_tensor_is_cast_first():
    found = likely_with(
        FRAME
        + "RuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point "
        "or complex dtype. Got: Long\n",
        "mean_integer_tensor",
        "log.library_version_bug",
    )
    assert "Long" in found.summary and "dtype=torch.float32" in found.fix


# torch/optim/lr_scheduler.py, as mozilla/TTS#57 posted it, and the newer wording
@pytest.mark.parametrize(
    "line",
    [
        "KeyError: \"param 'initial_lr' is not specified in param_groups[0] when resuming an optimizer\"\n",
        "KeyError: \"param 'initial_lr' is not specified in param_groups[0] when resuming scheduler with "
        'last_epoch >= 0.\\nThis typically happens when:"\n',
    ],
)
def test_a_scheduler_built_as_resumed_without_initial_lr_names_last_epoch(line):
    found = likely_with(
        FRAME
        + "    scheduler = AnnealLR(optimizer, warmup_steps=c.warmup_steps, last_epoch=args.restore_step)\n"
        + line,
        "scheduler_resume_initial_lr",
        "log.library_version_bug",
    )
    assert "last_epoch=-1" in found.fix and "state_dict" in found.fix


# aten/src/ATen/native/layer_norm.h, as open-mmlab/mmsegmentation#3809 posted it: 256 is dimension 1, not the last
def test_a_layernorm_on_a_channel_first_map_names_a_norm_over_channels():
    found = explained(
        "RuntimeError: Given normalized_shape=[256], expected input with shape [*, 256], but got input of "
        "size[32, 256, 128, 128]\n"
    )
    assert found.id == "log.layer_input_size"
    assert "channel-first" in found.summary and "SyncBN" in found.fix


def test_a_layernorm_of_another_hidden_size_stays_the_size_reading():
    found = explained(
        FRAME
        + "RuntimeError: Given normalized_shape=[768], expected input with shape [*, 768], but got input of "
        "size[8, 128, 512]\n"
    )
    assert found.id == "log.layer_input_size" and "channel-first" not in found.summary


# aten/src/ATen/native/Pool.h and ReflectionPad.cpp, as pytorch/pytorch#18413 posted the padding
def test_a_reflect_padding_wider_than_the_image_is_an_input_too_small():
    found = likely_with(
        "RuntimeError: Argument #4: Padding size should be less than the corresponding input dimension, but got: "
        "padding (46, 46) at dimension 3 of input [1, 3, 128, 36]\n",
        "input_too_small",
        "log.library_version_bug",
    )
    assert "[1, 3, 128, 36]" in found.summary and "padding" in found.fix


def test_a_pooling_left_without_output_names_the_sizes():
    found = likely_with(
        FRAME
        + "RuntimeError: Given input size: (2432x4x3). Calculated output size: (2432x1x0). Output size is "
        "too small\n",
        "input_too_small",
        "log.library_version_bug",
    )
    assert "2432x4x3" in found.summary


# torch/nn/modules/conv.py, as jaxony/ShuffleNet#5 quoted it in prose
def test_channels_the_groups_do_not_divide_name_the_groups():
    found = likely_with(
        "Hi, when I run your code when group = 8, the error occurs that ValueError: in_channels must be divisible "
        "by groups.\n",
        "groups_not_divisible",
        "log.library_version_bug",
    )
    assert "groups" in found.fix


# aten/src/ATen/native/LossCTC.cpp, as Holmeyoung/crnn-pytorch#62 posted it (its "8for" as printed)
def test_ctc_targets_narrower_than_their_lengths_name_the_encoding():
    found = likely_with(
        FRAME
        + "RuntimeError: Expected tensor to have size at least 12 at dimension 1, but got size 8for argument "
        "#2 'targets' (while checking arguments for ctc_loss_gpu)\n",
        "ctc_lengths_mismatch",
        "log.library_version_bug",
    )
    assert "12 labels" in found.summary and "encode" in found.fix


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # inference mode's other refusal: an in-place update, not a tensor saved for backward
        (
            "RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed.",
            "inference_tensor_backward",
        ),
        # a loss with nothing requiring grad is not an integer tensor asked to
        (
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
            "integer_requires_grad",
        ),
        # a batch-size mismatch of the loss is not its class weights
        ("ValueError: Expected input batch_size (16) to match target batch_size (8).", "class_weight_count"),
        # mean() given the wrong arguments is not an integer tensor
        (
            "TypeError: mean() received an invalid combination of arguments - got (Tensor, keepdim=bool)",
            "mean_integer_tensor",
        ),
        # a conv's channels against its input are conv_input_channels, not the groups
        (
            "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 1, 224, 224] to have 3 "
            "channels, but got 1 channels instead",
            "groups_not_divisible",
        ),
        # bmm's size check prints the same head for another op
        (
            "RuntimeError: Expected tensor to have size 64 at dimension 1, but got size 32 for argument #2 'batch2' "
            "(while checking arguments for bmm)",
            "ctc_lengths_mismatch",
        ),
        # F.pad's own check of the pad tuple is not an input too small
        ("RuntimeError: Padding length must be divisible by 2", "input_too_small"),
        # a custom scheduler's own check of another key
        (
            "KeyError: \"param 'lr' is not specified in param_groups[0] when resuming an optimizer\"",
            "scheduler_resume_initial_lr",
        ),
    ],
)
def test_a_near_miss_is_not_read_as_the_kind(line, kind):
    assert explained(FRAME + line + "\n").id != f"log.{kind}"
