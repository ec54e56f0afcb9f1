"""Input-pipeline messages mapped from the code that prints them (helper DATA3, issue 19): OpenCV's checks of an empty
image (imgproc's color.cpp and resize.cpp), fsspec 2023.12's glob under an older datasets (fsspec/utils.py), a row
asked of a datasets table with no column left (datasets/formatting/formatting.py, the Trainer's
remove_unused_columns), torch.tensor's ragged lists and strings (torch/csrc/utils/tensor_new.cpp, as transformers'
data collators reach them), Pillow's PNG text-chunk limit, and ultralytics' "WARNING ⚠️" lines read as warnings.
Each test gives the line as its source prints it (the catalog template, filled in as the source fills it) and a
near miss beside it.
"""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, likely_with, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

WORKER = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/proj/train.py", line 88, in <module>\n'
    "    for images, targets in loader:\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
    "    data = fetcher.fetch(index)\n"
    '  File "/home/u/proj/data/coco.py", line 41, in __getitem__\n'
)
TRAINER = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/proj/finetune.py", line 58, in main\n'
    "    trainer.train()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/transformers/trainer.py", line 1821, in _inner_training_loop\n'
    "    for step, inputs in enumerate(epoch_iterator):\n"
)
COLLATOR = (
    '  File "/usr/local/lib/python3.10/dist-packages/transformers/data/data_collator.py", line 105, in '
    "torch_default_data_collator\n"
    "    batch[k] = torch.tensor([f[k] for f in features])\n"
)


def test_the_new_templates_are_in_the_catalog_with_their_kinds():
    kinds = {ident: t.kind for ident, t in by_id().items()}
    assert kinds["third_party:opencv-cvtcolor-empty-image"] == "data_path_missing"
    assert kinds["third_party:opencv-resize-empty-image"] == "data_path_missing"
    assert kinds["third_party:fsspec-glob-double-star-component"] == "dependency_version"
    assert kinds["datasets:invalid-key-is-out-of-bounds"] == "dataset_column_missing"
    assert kinds["datasets:column-not-in-the-dataset-current"] == "dataset_column_missing"
    assert kinds["torch_native:tensor-expected-sequence-of-length"] == "collate_unequal_sizes"
    assert kinds["torch_native:tensor-new-invalid-data-type"] == "column_not_tensorizable"
    assert kinds["pillow:decompressed-data-too-large"] == "image_pixel_limit"
    assert kinds["pillow:decompressed-data-too-large-for-pngimageplugin"] == "image_pixel_limit"
    # the extractor now reads datasets' formatting.py: the same file's other refusals are there, unmapped
    assert kinds["datasets:wrong-key-type-of-type-expected"] == ""


def test_opencv_handed_the_empty_image_cv2_imread_returns():
    line = "cv2.error: " + template(
        "third_party:opencv-cvtcolor-empty-image",
        "4.7.0",
        "/io/opencv/modules/imgproc/src/color.cpp",
        "182",
        "cvtColor",
    )
    code = "    img = cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2RGB)\n"
    found = likely_with(WORKER + code + line + "\n", "data_path_missing", "log.bad_training_data")
    assert "cvtColor was handed an empty image" in found.summary
    assert "assert img is not None" in found.fix and "clip each box" in found.fix
    # the checkpoint-path reading of a missing file is not offered for an image read
    assert "log.checkpoint_path" not in found.details["alternatives"]
    # resize's check, as OpenCV 4.5 words it on Windows (the namespace in the function's name)
    line = "cv2.error: " + template(
        "third_party:opencv-resize-empty-image",
        "4.5.5",
        "D:\\a\\opencv-python\\opencv-python\\opencv\\modules\\imgproc\\src\\resize.cpp",
        "4052",
        "cv::resize",
    )
    found = likely_with(line + "\n", "data_path_missing", "log.bad_training_data")
    assert "cv::resize" in found.summary and "!ssize.empty()" in found.summary
    # OpenCV's other assertions are other failures
    other = "cv2.error: OpenCV(4.7.0) color.cpp:182: error: (-215:Assertion failed) scn == 3 in function 'cvtColor'\n"
    assert explained(other).id != "log.data_path_missing"


def test_fsspec_2023_12_refusing_an_older_datasets_glob():
    line = "ValueError: " + template("third_party:fsspec-glob-double-star-component")
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/content/train.py", line 5, in <module>\n'
        '    dataset = load_dataset("databricks/databricks-dolly-15k", split="train")\n'
        '  File "/usr/local/lib/python3.10/dist-packages/datasets/load.py", line 1773, in load_dataset\n'
        "    builder_instance = load_dataset_builder(\n"
        '  File "/usr/local/lib/python3.10/dist-packages/fsspec/utils.py", line 734, in glob_translate\n'
        "    raise ValueError(\n"
    )
    found = leads_with(
        traceback + line + "\n", "dependency_version", "certain", ["datasets>=2.18", "fsspec<2023.9.0"]
    )
    assert "fsspec 2023.12" in found.summary
    # pathlib prints the same words for a pattern of the code's own: without fsspec or datasets, only likely
    pathlib = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/tools/collect.py", line 9, in <module>\n'
        '    files = list(Path("runs").glob("ckpt**.pt"))\n' + line + "\n"
    )
    found = leads_with(pathlib, "dependency_version", "likely", ["whole component"])


def test_a_trainer_whose_dataset_has_no_column_left():
    line = "IndexError: " + template("datasets:invalid-key-is-out-of-bounds", "25030", "0")
    formatting = (
        '  File "/usr/local/lib/python3.10/dist-packages/datasets/formatting/formatting.py", line 526, in '
        "_check_valid_index_key\n"
        '    raise IndexError(f"Invalid key: {key} is out of bounds for size {size}")\n'
    )
    found = leads_with(
        TRAINER + formatting + line + "\n",
        "dataset_column_missing",
        "certain",
        ["remove_unused_columns=False", "forward()"],
    )
    assert "row 25030" in found.summary and "no column left" in found.summary
    # without the Trainer it may be an empty dataset indexed anyway: likely, that reading named
    found = likely_with(line + "\n", "dataset_column_missing", "log.dataset_too_small")
    assert "len(dataset)" in found.fix
    # a row past the end of a table that has rows is another mistake (an index of another dataset's length)
    beyond = "IndexError: " + template("datasets:invalid-key-is-out-of-bounds", "1000", "1000")
    assert explained(beyond + "\n").id != "log.dataset_column_missing"


def test_a_column_indexed_that_the_dataset_does_not_have():
    line = "KeyError: " + repr(
        template("datasets:column-not-in-the-dataset-current", "input_ids", "['text', 'label']")
    )
    found = leads_with(line, "dataset_column_missing", "certain", ["column_names"])
    assert "(input_ids)" in found.summary and "['text', 'label']" in found.summary


def test_a_data_collator_given_token_lists_of_different_lengths():
    line = "ValueError: " + template("torch_native:tensor-expected-sequence-of-length", "512", "1", "400")
    found = leads_with(
        TRAINER + COLLATOR + line + "\n",
        "collate_unequal_sizes",
        "certain",
        ["padding='max_length'", "DataCollatorForSeq2Seq", "-100"],
    )
    assert "length 512 expected at dim 1, 400 found" in found.summary
    # torch.tensor of ragged lists anywhere prints it: without a collator or a worker, likely
    found = likely_with(line + "\n", "collate_unequal_sizes", "log.shape_mismatch")
    assert "nested lists" in found.summary and "torch.stack / resize_" not in found.summary


def test_a_text_column_handed_to_torch_tensor():
    line = "TypeError: " + template("torch_native:tensor-new-invalid-data-type", "str")
    found = leads_with(
        COLLATOR + line + "\n", "column_not_tensorizable", "likely", ["tokenize", "ClassLabel"]
    )
    assert "str values" in found.summary
    # another type's refusal of the same function is not a text column
    assert (
        explained("TypeError: new(): data must be a sequence (got float)\n").id
        != "log.column_not_tensorizable"
    )


def test_pillow_refusing_a_png_whose_metadata_is_over_its_limit():
    for ident in (
        "pillow:decompressed-data-too-large",
        "pillow:decompressed-data-too-large-for-pngimageplugin",
    ):
        line = "ValueError: " + template(ident)
        found = leads_with(
            WORKER + "    image = Image.open(path).convert('RGB')\n" + line + "\n",
            "image_pixel_limit",
            "certain",
            ["PngImagePlugin.MAX_TEXT_CHUNK"],
        )
        assert "not broken" in found.fix and "MAX_IMAGE_PIXELS" not in found.fix
    # the pixel limit keeps its own words
    bomb = "PIL.Image.DecompressionBombError: " + template(
        "pillow:image-size-pixels-exceeds-limit-of", "200000000", "178956970"
    )
    assert "MAX_IMAGE_PIXELS" in leads_with(bomb, "image_pixel_limit", "certain", []).fix


def test_an_ultralytics_warning_does_not_lead_over_the_error_that_stopped_the_run():
    log = (
        "train: Scanning /data/labels/train... 100 images, 2 backgrounds, 1 corrupt: 100%|██████████| 100/100\n"
        "train: WARNING ⚠️ /data/images/train/img1.jpg: ignoring corrupt image/label: labels require 5 columns, "
        "6 columns detected\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        '    model.train(data="data.yaml", device=[0, 1])\n'
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIPv6: 0, code: -98, name: EADDRINUSE, message: address already in use\n"
    )
    assert explained(log).id == "log.rendezvous_or_port"
    # the warning alone is still read
    assert explained(log.split("Traceback")[0]).id == "log.bad_training_data"


def test_webdataset_shards_whose_names_give_one_key_two_files():
    line = "ValueError: " + template(
        "webdataset:duplicate-file-name-in-tar-file",
        "img.0002.jpg",
        "jpg",
        "dict_keys(['__key__', '__url__', 'jpg', 'json'])",
    )
    found = leads_with(line, "bad_training_data", "certain", ["tar --sort=name", "img_0001.jpg"])
    assert "img.0002.jpg: a second .jpg" in found.summary
    # a tar command's own complaint about a file is not webdataset's grouping
    assert explained("tar: img.jpg: file changed as we read it\n").id != "log.bad_training_data"


def test_a_webdataset_stage_declared_non_empty_that_got_nothing():
    line = "ValueError: " + template("webdataset:pipeline-stage-received-no-data-at")
    found = likely_with(line + "\n", "webdataset_shard_split", "log.bad_training_data")
    assert "world_size x num_workers" in found.fix


def test_a_base_models_tokenizer_asked_for_its_chat_template():
    sft = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/usr/local/lib/python3.12/site-packages/trl/trainer/sft_trainer.py", line 588, in '
        "_prepare_non_packed_dataloader\n"
        "[rank0]:     tokenized_dataset = dataset.map(tokenize, **map_kwargs)\n"
    )
    line = "[rank0]: ValueError: " + template("third_party:transformers-chat-template-not-set")
    found = leads_with(
        sft + line, "chat_template_missing", "certain", ["tokenizer.chat_template =", "Instruct"]
    )
    assert found.summary.startswith("the tokenizer has no chat template") and "rank 0" in found.summary
    # a processor's own wording
    line = "ValueError: " + template("third_party:transformers-processor-no-chat-template")
    found = leads_with(line, "chat_template_missing", "certain", ["processor.chat_template"])
    assert found.summary.startswith("the processor")
    # a template that is set but fails to render is another error
    other = "jinja2.exceptions.TemplateError: Conversation roles must alternate user/assistant/user/assistant/...\n"
    assert explained(other).id != "log.chat_template_missing"


def test_an_hdf5_file_of_the_data_cut_short_or_not_hdf5():
    line = "OSError: " + template("third_party:hdf5-truncated-file", "1048576", "0", "7340032")
    found = likely_with(line + "\n", "bad_training_data", "log.checkpoint_file_invalid")
    assert "1048576 bytes on disk where its header says 7340032" in found.summary
    # h5py 3.8's wording with HDF5 1.14
    newer = line.replace("Unable to open file", "Unable to synchronously open file")
    assert (
        "cut short" in likely_with(newer + "\n", "bad_training_data", "log.checkpoint_file_invalid").summary
    )
    line = "OSError: " + template("third_party:hdf5-file-signature-not-found")
    found = likely_with(line + "\n", "bad_training_data", "log.checkpoint_file_invalid")
    assert "not HDF5" in found.summary and "git lfs pull" in found.fix
    # HDF5's other refusals of an open file are other failures
    other = "OSError: Unable to open file (unable to lock file, errno = 11, error message = 'Resource temporarily unavailable')\n"
    assert explained(other).id != "log.bad_training_data"


def test_yolos_image_not_found_and_windows_missing_paths():
    line = "AssertionError: " + template(
        "third_party:yolo-image-not-found", "/data/coco/images/train/0001.jpg"
    )
    found = likely_with(line + "\n", "data_path_missing", "log.bad_training_data")
    assert "'/data/coco/images/train/0001.jpg'" in found.summary and "*.cache" in found.fix
    # ultralytics 8 raises it as a FileNotFoundError: the same reading
    newer = "FileNotFoundError: " + template("third_party:yolo-image-not-found", "datasets/x/images/a.png")
    assert "datasets/x/images/a.png" in explained(newer + "\n").summary
    for ident in ("system:winerror-3-path-not-found", "system:winerror-2-file-not-found"):
        line = "FileNotFoundError: " + template(ident, "D:\\\\data\\\\train\\\\labels")
        found = leads_with(line, "data_path_missing", "likely", ["absolute"])
        assert "D:\\\\data\\\\train\\\\labels" in found.summary
    # a program or a DLL Windows did not find is no dataset path, nor subprocess's WinError 2 without one
    tool = "FileNotFoundError: " + template("system:winerror-2-file-not-found", "C:\\\\tools\\\\ninja.exe")
    assert explained(tool + "\n").id != "log.data_path_missing"
    bare = "FileNotFoundError: [WinError 2] The system cannot find the file specified\n"
    assert explained(bare).id != "log.data_path_missing"


def test_soundfile_refused_by_the_file_system():
    line = "soundfile.LibsndfileError: " + template(
        "third_party:soundfile-error-opening-system-error", "'data/wav/tammy_1_07.wav'"
    )
    found = leads_with(line, "data_path_missing", "likely", ["manifest", "absolute"])
    assert "'data/wav/tammy_1_07.wav'" in found.summary
    # an audio file is no checkpoint: that reading of a missing path is not offered
    assert "log.checkpoint_path" not in found.details.get("alternatives", [])
    # libsndfile's other reasons are the file's content, not its path
    other = "soundfile.LibsndfileError: Error opening 'a.wav': File contains data in an unknown format.\n"
    assert explained(other).id != "log.data_path_missing"


def test_decord_opening_a_video_that_is_not_there():
    line = (
        "decord._ffi.base.DECORDError: [16:04:08] /github/workspace/src/video/video_reader.cc:83: "
        + template("third_party:decord-error-opening", "/data/videos/abc.mp4", "No such file or directory")
    )
    found = leads_with(line, "data_path_missing", "likely", ["absolute"])
    assert "'/data/videos/abc.mp4'" in found.summary
    # FFmpeg's other reasons are the file's content, not its path
    other = line.replace("No such file or directory", "Invalid data found when processing input")
    assert explained(other + "\n").id != "log.data_path_missing"
