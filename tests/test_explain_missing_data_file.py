"""A plain FileNotFoundError of a data-loading open named four readings of other logs: the same CPython message
("[Errno 2] No such file or directory: '<path>'") was on train logs whose threads established a checkpoint renamed
under a concurrent save, a shared metrics cache, a library's weights file and mmcv's class name taken for a file
(seen_on.tsv), and data_path_missing's own alternative offered a checkpoint or config file at that path. The path
itself rules them out: an image's, a sound's or a video's file is a sample's, a folder is no file torn or shared."""

from __future__ import annotations

from explaining import explained, filled, lead

# a DataLoader worker's traceback as torch re-raises it, ending in Pillow's Image.open (PIL/Image.py: fp =
# builtins.open(filename, "rb")) and CPython's message filled with the sample's path
IMAGE_OPEN = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/proj/train.py", line 120, in <module>\n'
    "    for images, labels in train_loader:\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/_utils.py", line 694, in reraise\n'
    "    raise exception\n"
    "FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 0.\n"
    "Original Traceback (most recent call last):\n"
    '  File "/home/ana/proj/dataset.py", line 41, in __getitem__\n'
    '    image = Image.open(path).convert("RGB")\n'
    '  File "/opt/conda/lib/python3.10/site-packages/PIL/Image.py", line 3243, in open\n'
    '    fp = builtins.open(filename, "rb")\n'
    + filled("system:python-file-not-found", "/data/coco/train2017/000000391895.jpg")
    + "\n"
)


def test_a_missing_image_leads_with_the_file_and_names_no_reading_of_other_files():
    found = explained(IMAGE_OPEN)
    assert found.id == "log.data_path_missing", found.summary
    assert (
        "a data file the dataset reads does not exist: '/data/coco/train2017/000000391895.jpg'"
        in found.summary
    )
    assert not found.details.get("alternatives"), found.details
    assert "; or " not in found.summary, found.summary
    # the two ways a sample's file goes missing: the root (its folder) or the list naming files not there
    assert "'/data/coco/train2017'" in found.fix and "annotation file" in found.fix
    assert "dataset.py:41" in found.fix


def test_the_train_logs_missing_image_reads_the_same():
    # train 2125: a Windows-built path ('images\\xxx.jpg') on the machine that ran it
    found = lead("2125.txt")
    assert found.id == "log.data_path_missing" and not found.details.get("alternatives"), found.summary


def test_a_missing_folder_keeps_one_other_reading():
    # train 845: the data root's folder; a checkpoint's folder is still a reading, a torn file is not
    found = lead("845.txt")
    assert found.id == "log.data_path_missing", found.summary
    assert found.details.get("alternatives") == ["log.checkpoint_path"], found.details


def test_a_weights_file_keeps_the_readings_other_logs_showed_for_it():
    # train 2473: a .pth path, the file those other causes were about
    found = lead("2473.txt")
    assert "log.concurrent_checkpoint_write" in found.details.get("alternatives", []), found.details
