"""Certainty, tenth round (task CERT10): a message template whose real logs showed one filler for its cause, read
with certainty for every filler.

Made likely where the filler is not the one seen, kept certain where it is:

- torch's default_collate "batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class X>":
  the labelled logs show X a PIL image (a dataset built without ToTensor()); the threads posting other types
  establish other causes (a Dataset object returned by __getitem__, hands-segmentation-pytorch#2; mmdet's own
  DetDataSample, which wants mmengine's collate, mmdetection#10952). Likely for those.

- transformers' Trainer "The model did not return a loss from the inputs ... the inputs it received are ...": the
  labelled log's inputs hold no 'labels' (the batch had none: certain). With 'labels' among them the labels reached
  the model and no loss came back (a class without a task head, a release whose forward drops them, as in
  unslothai/unsloth#1899 and artidoro/qlora#179 after an upgrade): likely, `library_version_bug` named.

- ATen's Half refusal by a CPU kernel whose dispatch name does not say "cpu" (LayerNormKernelImpl, GroupNormKernelImpl,
  GeluKernelImpl, the softmax kernels, baddbmm_with_gemm): CERT9 made "addmm_impl_cpu_" likely (a torch that sees no
  GPU named); these are the same CPU kernels (their CUDA counterparts take Half or carry another name), and the
  threads posting them are the same two causes (hiyouga/ChatGLM-Efficient-Tuning#37: the model not on the GPU
  because of the CUDA setup; facebookresearch/flores#30: run on the CPU). BFloat16 keeps its reading.

- torch.stack's "stack expects each tensor to be equal size" in the DataLoader's collate: certain for samples of
  different sizes (the labelled log); where the two shapes differ only in an image's channel count (1, 3 or 4;
  CHW or HWC) the threads find a grayscale or RGBA file among RGB ones (MECLabTUDA/Super_Selfish#2,
  xrli-U/MuSc#45, caoyunkang/CDO#14), which padding does not fix: likely, `bad_training_data` named, the fix
  converting each image to RGB.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with, read

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/home/u/miniconda3/envs/t/lib/python3.10/site-packages"

_LOADER = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 39, in <module>\n'
    "    for (data, mask, label, name) in dataloader:\n"
    f'  File "{SITE}/torch/utils/data/dataloader.py", line 633, in __next__\n'
    "    data = self._next_data()\n"
    f'  File "{SITE}/torch/utils/data/_utils/fetch.py", line 54, in fetch\n'
    "    return self.collate_fn(data)\n"
    f'  File "{SITE}/torch/utils/data/_utils/collate.py", line 265, in default_collate\n'
    "    return collate(batch, collate_fn_map=default_collate_fn_map)\n"
)


def _collate_error(message: str) -> str:
    return _LOADER + message + "\n"


def test_default_collate_given_pil_images_stays_certain():
    # train 839 (tristandeleu/pytorch-meta#35): the dataset built with transform=None
    read("839.txt", "dataloader_options")
    found = certain(
        _collate_error(
            "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
            "found <class 'PIL.Image.Image'>"
        ),
        "dataloader_options",
    )
    assert "ToTensor" in found.fix, found.fix


@pytest.mark.parametrize(
    "found_type",
    [
        "<class 'dataloader.GTEADataset'>",  # guglielmocamporese/hands-segmentation-pytorch#2
        "<class 'mmdet.structures.det_data_sample.DetDataSample'>",  # open-mmlab/mmdetection#10952
    ],
    ids=["a-dataset-object", "a-librarys-sample-class"],
)
def test_default_collate_given_another_type_is_only_likely(found_type):
    found = explained(
        _collate_error(
            "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
            f"found {found_type}"
        )
    )
    assert (found.id, found.details["confidence"]) == ("log.dataloader_options", "likely"), found.summary


def test_a_trainer_batch_without_labels_stays_certain():
    # train 1019 (huggingface/transformers#34392): the inputs it lists hold no labels
    found = read("1019.txt", "trainer_arguments")
    assert "labels" in found.fix, found.fix


def test_a_model_given_labels_that_returned_no_loss_is_only_likely_its_release_named():
    # unslothai/unsloth#1899: the labels reached the model, no loss came back
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    trainer.train()\n"
        f'  File "{SITE}/transformers/trainer.py", line 3734, in compute_loss\n'
        "    raise ValueError(\n"
        "ValueError: The model did not return a loss from the inputs, only the following keys: logits. For "
        "reference, the inputs it received are input_ids,attention_mask,labels.\n"
    )
    found = likely_with(text, "trainer_arguments", "log.library_version_bug")
    assert "task head" in found.fix or "AutoModelFor" in found.fix, found.fix


def test_samples_of_different_sizes_in_the_collate_stay_certain():
    # HRNet/HRNet-Semantic-Segmentation#236: the images were not resized to one size
    found = certain(
        _collate_error(
            "RuntimeError: stack expects each tensor to be equal size, but got [3, 400, 400] at entry 0 and "
            "[3, 256, 256] at entry 1"
        ),
        "collate_unequal_sizes",
    )
    assert "convert('RGB')" not in found.fix, found.fix


@pytest.mark.parametrize(
    "shapes",
    [
        "[1, 512, 512] at entry 0 and [3, 512, 512] at entry 1",  # xrli-U/MuSc#45 (a mask saved as RGB)
        "[1, 256, 256] at entry 0 and [3, 256, 256] at entry 7",  # caoyunkang/CDO#14
        "[256, 256, 3] at entry 0 and [256, 256, 4] at entry 2",  # an RGBA PNG among RGB ones, HWC arrays
    ],
    ids=["chw-grey", "chw-grey-later", "hwc-rgba"],
)
def test_images_differing_only_in_channels_are_likely_a_file_of_another_mode(shapes):
    found = likely_with(
        _collate_error(f"RuntimeError: stack expects each tensor to be equal size, but got {shapes}"),
        "collate_unequal_sizes",
        "log.bad_training_data",
    )
    assert "channel count" in found.summary and "convert('RGB')" in found.fix, (found.summary, found.fix)


def test_a_first_dimension_beyond_image_channels_stays_a_size_difference():
    # sequences of 261 and 137 rows (train 344's shapes, with a channel-like last dimension of 4 on both)
    found = certain(
        _collate_error(
            "RuntimeError: stack expects each tensor to be equal size, but got [261, 4] at entry 0 and [137, 4] "
            "at entry 1"
        ),
        "collate_unequal_sizes",
    )
    assert "channel" not in found.summary, found.summary


@pytest.mark.parametrize(
    "kernel",
    ["LayerNormKernelImpl", "softmax_lastdim_kernel_impl", "baddbmm_with_gemm", "GroupNormKernelImpl"],
)
def test_a_cpu_kernel_named_without_cpu_refusing_half_is_only_likely_a_torch_without_gpu_named(kernel):
    # hiyouga/ChatGLM-Efficient-Tuning#37, facebookresearch/flores#30 (LayerNorm); the others are ATen's CPU kernels
    found = likely_with(
        f"RuntimeError: \"{kernel}\" not implemented for 'Half'\n",
        "half_unsupported_op",
        "log.cuda_unavailable",
    )
    assert "on the CPU" in found.summary and "model.float()" in found.fix, (found.summary, found.fix)


def test_a_gpu_or_unnamed_kernel_refusing_a_reduced_dtype_stays_certain():
    # train 1074: torch 1.12's nearest upsampling without a bfloat16 kernel
    read("1074.txt", "half_unsupported_op")
    certain("RuntimeError: \"deform_conv_forward_cuda\" not implemented for 'Half'\n", "half_unsupported_op")
    # the same CPU name refusing BFloat16: not the CPU's alone in older releases, kept as it was
    found = certain(
        "RuntimeError: \"LayerNormKernelImpl\" not implemented for 'BFloat16'\n", "half_unsupported_op"
    )
    assert "on the CPU" not in found.summary, found.summary
