"""The sixty-second sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2917-2966)."""

from __future__ import annotations

from explaining import explained


def likely(text: str, kind: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    return found


# yizt/crnn.pytorch generator.py Generator.gen_image, before 493fb1f (fontutils.get_all_font_chars kept every
# visible character of a font, not only the dictionary's):
#     indices = np.array([self.alpha.index(c) for c in text])
# and CPython's str.index: ValueError: substring not found
def test_crnn_generator_character_outside_the_alphabet_says_to_update_crnn():
    found = likely(
        "Traceback (most recent call last):\n"
        '  File "/data/crnn.pytorch/generator.py", line 171, in gen_image\n'
        "    indices = np.array([self.alpha.index(c) for c in text])\n"
        "ValueError: substring not found\n",
        "library_version_bug",
    )
    assert "493fb1f" in found.summary and "git pull" in found.fix


def test_another_alphabet_lookup_is_not_crnns_generator():
    found = explained(
        '  File "dataset.py", line 40, in encode\n'
        "    idx = [alphabet.index(ch) for ch in label]\n"
        "ValueError: substring not found\n"
    )
    assert "crnn.pytorch" not in found.summary


# jwyang/faster-rcnn.pytorch lib/model/rpn/proposal_target_layer_cascade.py _sample_rois_pytorch:
#     raise ValueError("bg_num_rois = 0 and fg_num_rois = 0, this should not happen!")
def test_faster_rcnn_pytorch_no_foreground_no_background_rois_names_the_loader_fix_and_the_boxes():
    found = likely(
        "ValueError: bg_num_rois = 0 and fg_num_rois = 0, this should not happen!\n", "library_version_bug"
    )
    assert "roibatchLoader" in found.summary and "git pull" in found.fix
    assert found.details["alternatives"][:2] == ["log.bad_training_data", "log.nan_overflow"]


def test_another_rpn_sampling_message_is_not_that_one():
    found = explained("ValueError: num_fg = 0 and num_bg = 0 in the sampler\n")
    assert "faster-rcnn.pytorch" not in found.summary


# OpenCV's cv2.imread returns None for a file it cannot read; the next line's img.shape raises CPython's
# AttributeError: 'NoneType' object has no attribute 'shape'
def test_none_image_shape_reads_as_the_data_path():
    found = likely(
        "Traceback (most recent call last):\n"
        '  File "lib/dataset/siamrpn.py", line 212, in __getitem__\n'
        "    h, w, _ = img.shape\n"
        "AttributeError: 'NoneType' object has no attribute 'shape'\n",
        "data_path_missing",
    )
    assert "cv2.imread" in found.summary and "path" in found.fix
    assert "log.bad_training_data" in found.details["alternatives"]


def test_none_with_another_attribute_is_not_an_unread_image():
    found = explained("AttributeError: 'NoneType' object has no attribute 'size'\n")
    assert found.id != "log.data_path_missing"


# PyTorch 0.3's loss.data.cpu().numpy()[0] under 0.4 and later: NumPy's prepare_index refuses [0] on the
# 0-dimensional array ("too many indices for array: array is 0-dimensional, but 1 were indexed")
def test_numpy_index_of_a_zero_dim_loss_reads_as_code_for_pytorch_0_3():
    found = likely(
        '  File "train.py", line 375, in main\n'
        "    loss_value += loss.data.cpu().numpy()[0] / args.iter_size\n"
        "IndexError: too many indices for array: array is 0-dimensional, but 1 were indexed\n",
        "dependency_version",
    )
    assert ".item()" in found.fix and "[0]" in found.fix


def test_too_many_indices_on_a_scripts_own_array_is_not_that_idiom():
    found = explained(
        '  File "train.py", line 88, in collate\n'
        "    y = labels[:, 1]\n"
        "IndexError: too many indices for array: array is 1-dimensional, but 2 were indexed\n"
    )
    assert "PyTorch 0.3" not in found.summary
