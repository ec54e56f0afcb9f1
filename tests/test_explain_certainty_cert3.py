"""Certainty, third round (task CERT3): certain readings checked against every caller of their anchor.

- torch/nn/functional.py ``_verify_batch_size`` ("Expected more than 1 value per channel when training, got input
  size S") has two callers: ``batch_norm`` in training mode, passing ``input.size()`` (S is ``torch.Size([...])``),
  and ``group_norm`` in any mode, passing the list ``[N * C // num_groups, num_groups, *spatial]`` (S is a plain
  list: a GroupNorm with one channel per group on a 1x1 input of batch one, which eval mode does not cure). The C++
  frontend's BatchNorm prints a list too. Certain on ``torch.Size`` only; a list or no size is likely, the GroupNorm
  reading (``input_too_small``) named.

Checked and left certain (each message has one cause in every caller):
torchvision's "Couldn't find any class folder in <root>." (``datasets/folder.py`` find_classes, the one raise,
reached from DatasetFolder/ImageFolder and make_dataset: a root that exists and holds no subfolder; the images
themselves or nothing, both named in the fix; copies of find_classes in user code raise it for the same layout);
Pillow's "image file is truncated" (``PIL/ImageFile.py`` ImageFile.load, both raises: the bytes end before the
decoder is done, unless LOAD_TRUNCATED_IMAGES; a file still being written or a short read is the same file cut
short, the fix names a partly written file); SageMaker model parallel's "cannot be larger than the device count"
(more node-local processes than GPUs); EXDEV "Invalid cross-device link" (rename(2) and link(2) across mounted
filesystems only); "Cannot re-initialize CUDA in forked subprocess" (torch/cuda/__init__.py _lazy_init and the C++
device_lazy_init, raised only in a child forked after CUDA was initialised; the runtime's "initialization error"
was likely already); the launcher family's python-fire "Could not consume arg" (any argument the fired function
has no parameter for; the launcher's --local_rank is local_rank_argument's), argparse's "--nproc_per_node: invalid
int value" and yacs's "must have 'cfg' attr" (a command line or config file as typed).
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, lead, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

SINGLE = "ValueError: Expected more than 1 value per channel when training, got input size {}\n"


def test_batch_norms_size_stays_certain():
    found = certain(SINGLE.format("torch.Size([1, 256, 1, 1])"), "batchnorm_single_sample")
    assert "log.input_too_small" not in found.details.get("alternatives", [])


def test_group_norms_list_is_likely_with_groupnorm_named():
    likely_with(SINGLE.format("[1, 32, 1, 1]"), "batchnorm_single_sample", "log.input_too_small")


def test_the_message_without_its_size_is_likely():
    text = "ValueError: Expected more than 1 value per channel when training\n"
    likely_with(text, "batchnorm_single_sample", "log.input_too_small")


@pytest.mark.parametrize("name", ["528.txt", "530.txt"])
def test_the_train_logs_of_batchnorm_stay_certain(name):
    # 528.txt (LiheYoung/UniMatch#8) and 530.txt (VinAIResearch/ISBNet#12): torch.Size([1, 256, 1, 1]), ([1, 224])
    found = lead(name)
    assert (found.id, found.details["confidence"]) == ("log.batchnorm_single_sample", "certain"), (
        found.summary
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("FileNotFoundError: Couldn't find any class folder in /data/train.\n", "data_path_missing"),
        ("OSError: image file is truncated (3 bytes not processed)\n", "bad_training_data"),
        ("OSError: image file is truncated\n", "bad_training_data"),
        (
            "OSError: [Errno 18] Invalid cross-device link: '/tmp/tmpab12' -> '/mnt/out/model.pt'\n",
            "cross_device_rename",
        ),
        (
            "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
            "must use the 'spawn' start method\n",
            "cuda_fork",
        ),
        ("ERROR: Could not consume arg: --lr_rate\n", "launch_command"),
        ("Python module from file configs/base.py must have 'cfg' attr\n", "launch_command"),
    ],
)
def test_one_cause_anchors_stay_certain(text, kind):
    certain(text, kind)


def test_fires_local_rank_is_not_the_command_lines():
    found = explained("ERROR: Could not consume arg: --local_rank=0\n")
    assert found.id == "log.local_rank_argument", found.summary
