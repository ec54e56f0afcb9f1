"""The data-loading sources mapped from the code that prints them (helper V17, issue 19): Hugging Face datasets
(datasets.tsv, extracted from huggingface/datasets), Pillow (pillow.tsv, from python-pillow/Pillow) and torchvision
(torchvision.tsv, kept by hand). Each test gives the line as its source prints it, filled in with plausible
values, and a near miss beside it: a warning of the same words, a deprecation note naming the same class, a table
Arrow refuses outside datasets' map, which must not read as the kind or not with certainty.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, leads_with, likely_with, template

from torchdoctor.explain.catalog import load

pytestmark = pytest.mark.usefixtures("every_message_seen")

WORKER = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
    "    data = fetcher.fetch(index)\n"
)


def test_the_new_sources_are_in_the_catalog_with_kinds():
    catalog = load()
    for source in ("datasets", "pillow", "torchvision"):
        assert catalog[source], source
        assert any(t.kind for t in catalog[source]), source
    kinds = {t.id: t.kind for t in catalog["pillow"]}
    assert kinds["pillow:cannot-identify-image-file"] == "bad_training_data"
    assert kinds["pillow:image-size-pixels-exceeds-limit-of"] == "image_pixel_limit"
    # datasets 2.20-2.21's deprecation notes name the verification classes: not the failure
    kinds = {t.id: t.kind for t in catalog["datasets"]}
    assert kinds["datasets:use-expectedmoresplitserror-instead"] == ""
    assert kinds["datasets:checksums-didn-match"] == "dataset_verification_failed"


def test_pillow_not_identifying_a_file_of_the_data():
    found = leads_with(
        WORKER + "PIL.UnidentifiedImageError: cannot identify image file '/data/train/cats/cat_0412.jpg'",
        "bad_training_data",
        "certain",
        ["/data/train/cats/cat_0412.jpg", "in a DataLoader worker", "pillow-heif", "re-download"],
    )
    assert "truncated" not in found.summary
    # a file object: the code's own stream may be the cause (read to its end, an error page): likely, named
    found = likely_with(
        "PIL.UnidentifiedImageError: cannot identify image file <_io.BytesIO object at 0x7f3b2c1a9e50>\n",
        "bad_training_data",
        "log.image_stream_misuse",
    )
    assert "seek(0)" in found.fix


def test_a_loader_that_skips_an_unidentified_image_is_not_a_failure():
    for line in (
        "WARNING: skipping sample 1234: cannot identify image file '/data/x/1.jpg'\n",
        "cannot identify image file '/data/x/1.jpg', skipping\n",
    ):
        assert explained(line + "Epoch 1: 100%| 500/500 [01:02<00:00, loss=0.41]\n").id == "log.unrecognised"


def test_an_image_above_the_decompression_bomb_limit():
    line = "PIL.Image.DecompressionBombError: " + template(
        "pillow:image-size-pixels-exceeds-limit-of", "324000000", "178956970"
    )
    found = leads_with(line, "image_pixel_limit", "certain", ["MAX_IMAGE_PIXELS = None", "324000000"])
    assert "178956970" in found.summary
    # the warning of the same words, printed between the limit and twice it: the run goes on
    warning = (
        "/usr/lib/python3/dist-packages/PIL/Image.py:3167: DecompressionBombWarning: "
        + template("pillow:image-size-pixels-exceeds-limit-of", "100000000", "89478485")
        + "\n  warnings.warn(\n"
    )
    assert explained(warning).id == "log.unrecognised"


def test_a_dataset_whose_splits_or_checksums_differ_from_its_recorded_info():
    leads_with(
        "datasets.utils.info_utils.NonMatchingSplitsSizesError: [{'expected': SplitInfo(name='train', "
        "num_bytes=1212345, num_examples=5000, shard_lengths=None, dataset_name=None), 'recorded': "
        "SplitInfo(name='train', num_bytes=1100000, num_examples=4512, shard_lengths=None, "
        "dataset_name='alpaca')}]",
        "dataset_verification_failed",
        "certain",
        ["force_redownload", "verification_mode='no_checks'", "another number of examples"],
    )
    leads_with(
        "datasets.exceptions.NonMatchingChecksumError: "
        + template(
            "datasets:checksums-didn-match-set-verification-mode",
            " for https://huggingface.co/datasets/acme/corpus/resolve/main/train.jsonl",
            "Recorded: 1f2e Expected: 9a8b",
        ),
        "dataset_verification_failed",
        "certain",
        ["checksum", "force_redownload"],
    )
    certain("datasets.utils.info_utils.ExpectedMoreSplits: {'validation'}", "dataset_verification_failed")
    # the deprecation note naming the class, and a traceback's source line naming it, are not the failure
    for line in (
        "FutureWarning: " + template("datasets:use-expectedmoresplitserror-instead"),
        "    raise NonMatchingSplitsSizesError(str(bad_splits))",
    ):
        assert explained(line + "\n").id != "log.dataset_verification_failed", line


def test_datasets_4_refusing_a_loading_script():
    leads_with(
        '  File "/opt/conda/lib/python3.11/site-packages/datasets/load.py", line 1031, in dataset_module_factory\n'
        "RuntimeError: " + template("datasets:dataset-scripts-are-no-longer-supported", "wikitext.py"),
        "dependency_version",
        "certain",
        ["datasets<4.0.0", "wikitext.py", "refs/convert/parquet"],
    )
    # a script's name written in prose is not the refusal
    assert explained("Loading the dataset script wikitext.py\n").id == "log.unrecognised"


def test_torchvision_and_datasets_paths_without_data():
    leads_with(
        "FileNotFoundError: "
        + template(
            "torchvision:found-no-valid-file-for-the-classes",
            "train, val",
            ".jpg, .jpeg, .png, .ppm, .bmp, .pgm, .tif, .tiff, .webp",
        ),
        "data_path_missing",
        "certain",
        ["train, val", "root/<class>/<image>", "allow_empty=True"],
    )
    leads_with(
        "RuntimeError: " + template("torchvision:dataset-not-found-or-corrupted"),
        "data_path_missing",
        "certain",
        ["download=True", "cifar-10-batches-py"],
    )
    leads_with(
        "FileNotFoundError: "
        + template("datasets:couldn-find-dataset-script-at-or", "/home/u/proj/data/my_corpus/my_corpus.py"),
        "data_path_missing",
        "certain",
        ["/home/u/proj/data/my_corpus/my_corpus.py", "data_files="],
    )
    # a name the Hub does not give this run: a typo, or a private or gated dataset: likely, both named
    found = likely_with(
        "datasets.exceptions.DatasetNotFoundError: "
        + template("datasets:dataset-doesn-exist-on-the-hub", "tatsu-lab/alpaca_cleaned")
        + "\n",
        "data_path_missing",
        "log.download_refused",
    )
    assert "HF_TOKEN" in found.fix and "tatsu-lab/alpaca_cleaned" in found.summary
    # torchvision's log line that a file is there and verified is not a missing one
    assert explained("Using downloaded and verified file: ./data/cifar-10-python.tar.gz\n").id == (
        "log.unrecognised"
    )


def test_a_column_the_dataset_does_not_have():
    leads_with(
        '  File "/usr/local/lib/python3.10/dist-packages/datasets/arrow_dataset.py", line 2134, in '
        "remove_columns\nValueError: "
        + template("datasets:column-name-not-in-the-dataset", "['text']", "['sentence', 'label', 'idx']"),
        "dataset_column_missing",
        "certain",
        ["['text']", "['sentence', 'label', 'idx']", "rename_column", "column_names"],
    )
    # the Trainer's note on the columns it drops is not a refusal
    note = (
        "The following columns in the training set don't have a corresponding argument in "
        "`BertForSequenceClassification.forward` and have been ignored: sentence, idx.\n"
    )
    assert explained(note).id == "log.unrecognised"


def test_a_batched_map_that_changes_the_number_of_rows():
    arrow = "pyarrow.lib.ArrowInvalid: " + template(
        "third_party:arrow-column-expected-length", "1", "input_ids", "1000", "1328"
    )
    leads_with(
        "Map:  40%|####      | 2000/5000 [00:01<00:02, 1500.12 examples/s]\n"
        '  File "/usr/local/lib/python3.10/dist-packages/datasets/arrow_dataset.py", line 3353, in _map_single\n'
        "    writer.write_batch(batch)\n" + arrow,
        "map_batch_rows",
        "certain",
        ["remove_columns=dataset.column_names", "1328", "return_overflowing_tokens"],
    )
    # Arrow's refusal without datasets' map in the log: a table the code builds itself may be it: likely
    likely_with(arrow + "\n", "map_batch_rows", "log.arrow_table_columns")


def test_a_save_to_disk_folder_opened_with_the_wrong_loader():
    leads_with(
        "FileNotFoundError: "
        + template("datasets:no-such-file-found-expected-to", "/data/tok/dataset_info.json"),
        "dataset_saved_to_disk",
        "certain",
        ["load_from_disk(path)['train']"],
    )
    # the older words start with CPython's for a missing path: still the loader, not a missing folder
    leads_with(
        "FileNotFoundError: "
        + template("datasets:no-such-file-or-directory-expected", "/data/tok/dataset_info.json"),
        "dataset_saved_to_disk",
        "certain",
        ["DatasetDict"],
    )
    leads_with(
        "FileNotFoundError: " + template("datasets:you-are-trying-to-load-dataset"),
        "dataset_saved_to_disk",
        "certain",
        ["datasets.load_from_disk(path)"],
    )
    # a missing dataset_info.json alone is a missing path
    found = explained(
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/tok/dataset_info.json'\n"
    )
    assert found.id == "log.data_path_missing"


def test_webdataset_shards_not_split_over_the_ranks():
    leads_with(
        '  File "/opt/conda/lib/python3.10/site-packages/webdataset/shardlists.py", line 95, in single_node_only\n'
        "ValueError: " + template("webdataset:you-need-to-add-an-explicit"),
        "webdataset_shard_split",
        "certain",
        ["nodesplitter=wds.split_by_node", "resampled=True"],
    )
    # an empty iteration: too few shards for the ranks' workers, or every sample skipped by a handler: likely
    found = likely_with(
        "ValueError: No samples found in dataset; perhaps you have fewer shards than workers.\n"
        "Turn off using empty_check=False in the WebDataset constructor.\n",
        "webdataset_shard_split",
        "log.bad_training_data",
    )
    assert "world_size x num_workers" in found.fix
    # webdataset's own note on shardshuffle is not a refusal
    note = "UserWarning: " + template("webdataset:webdataset-shardshuffle-is-none-set-explicitly") + "\n"
    assert explained(note).id == "log.unrecognised"


def test_a_cmyk_jpeg_through_torchvisions_decoder():
    leads_with(
        "RuntimeError: " + template("torchvision:unsupported-color-conversion-request"),
        "library_version_bug",
        "likely",
        ["0.16", "PIL", "CMYK", "vision#7741"],
    )
    # libjpeg's other refusals (a lossless JPEG it does not decode) are not the colour conversion
    other = explained("RuntimeError: Unsupported JPEG process: SOF type 0xc3\n")
    assert "CMYK" not in other.summary


def test_the_hub_not_reached_for_a_dataset():
    leads_with(
        "ConnectionError: "
        + template("datasets:couldn-reach-on-the-hub", "tatsu-lab/alpaca", "ConnectionError"),
        "hub_unreachable",
        "certain",
        ["HF_DATASETS_OFFLINE=1", "HTTPS_PROXY", "'tatsu-lab/alpaca'"],
    )
    leads_with(
        "ConnectionError: "
        + template(
            "datasets:couldn-reach-the-hugging-face-hub", "tatsu-lab/alpaca", "Offline mode is enabled."
        ),
        "hub_unreachable",
        "certain",
        ["offline mode", "HF_HOME"],
    )
    # a URL that answered an HTTP error is not the Hub out of reach
    found = explained("ConnectionError: Couldn't reach https://example.org/data/train.json (error 404)\n")
    assert found.id != "log.hub_unreachable"


def test_data_files_whose_columns_differ():
    leads_with(
        "datasets.exceptions.DatasetGenerationCastError: An error occurred while generating the dataset\n\n"
        + template(
            "datasets:all-the-data-files-must-have",
            "there are 1 new columns ({'prediction'}) and 2 missing columns ({'prompt', 'response'}).",
        ),
        "data_files_columns_differ",
        "certain",
        ["{'prediction'}", "data_files=", "concatenate_datasets"],
    )
    leads_with(
        "datasets.table.CastError: Couldn't cast\ntext: string\nlabel: int64\nto\n"
        "{'sentence': Value(dtype='string', id=None), 'label': Value(dtype='int64', id=None)}\n"
        "because column names don't match",
        "data_files_columns_differ",
        # the exception's own line is "CastError: Couldn't cast", the schema's lines above the words read
        "certain",
        ["features="],
    )
    # Arrow's cast of one column's type is another refusal
    found = explained("ValueError: Couldn't cast array of type string to int64\n")
    assert found.id != "log.data_files_columns_differ"


def test_a_dataset_class_without_the_method_the_loader_calls():
    leads_with(
        '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataset.py", line 59, in __getitem__\n'
        '    raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")\n'
        "NotImplementedError: " + template("torch:subclasses-of-dataset-should-implement-getitem"),
        "dataset_methods_missing",
        "certain",
        ["def __getitem__(self, index)", "IterableDataset", "__get_item__"],
    )
    leads_with(
        "NotImplementedError: AugmentedSubset overrides __getitem__ but not __getitems__. When subclassing Subset "
        "and overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
        "with your custom logic.",
        "dataset_methods_missing",
        "certain",
        ["AugmentedSubset", "def __getitems__(self, indices)"],
    )
    # IterableDataset's own refusal (no __iter__) is another class's, and a bare NotImplementedError names none
    assert explained("NotImplementedError\n").id != "log.dataset_methods_missing"


def test_an_integer_image_given_to_normalize():
    leads_with(
        "TypeError: " + template("torchvision:input-tensor-should-be-a-float", "torch.uint8"),
        "image_not_float",
        "certain",
        ["torch.uint8", "ConvertImageDtype", "ToDtype(torch.float32, scale=True)"],
    )
    # Normalize's check of the tensor's dimensions is another refusal
    found = explained(
        "ValueError: Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = (224, 224).\n"
    )
    assert found.id != "log.image_not_float"


def test_a_streaming_dataset_local_folder_already_in_use():
    leads_with(
        '  File "/usr/lib/python3/dist-packages/streaming/base/shared/prefix.py", line 153, in _check_and_find\n'
        "ValueError: "
        + template(
            "mosaicml_streaming:reused-local-directory-vs-provide-different",
            "['/tmp/mds-cache/train']",
            "['/tmp/mds-cache/train']",
        ),
        "streaming_local_reused",
        "certain",
        ["clean_stale_shared_memory()", "local=", "/tmp/mds-cache/train"],
    )
    leads_with(
        "FileExistsError: "
        + template("mosaicml_streaming:could-not-create-temporary-local-directory", "/tmp/2a1b3c/train"),
        "streaming_local_reused",
        "certain",
        ["/tmp/2a1b3c/train", "local="],
    )
    # streaming's note that a writer empties an existing directory is not a refusal
    note = "Directory /data/mds/train exists and is not empty; exist_ok is set to True so will remove contents.\n"
    assert explained(note).id == "log.unrecognised"


def test_a_map_function_that_does_not_return_the_examples_columns():
    leads_with(
        "TypeError: " + template("datasets:provided-function-which-is-applied-to", "<class 'list'>"),
        "map_function_output",
        "certain",
        ["<class 'list'>", "return example"],
    )
    leads_with(
        "TypeError: "
        + template(
            "datasets:provided-function-which-is-applied-to-2",
            "{'input_ids': <class 'int'>}",
            "{'input_ids': <class 'list'>}",
        ),
        "map_function_output",
        "certain",
        ["batched=True", "{column: list}"],
    )
    # datasets' note on reducing num_proc is not a refusal
    note = template("datasets:num-proc-must-be-reducing-num", "16", "4", "4") + "\n"
    assert explained(note).id == "log.unrecognised"


def test_a_damaged_png_of_the_data():
    found = leads_with(
        WORKER
        + '  File "/usr/lib/python3/dist-packages/PIL/PngImagePlugin.py", line 213, in crc\n'
        + "SyntaxError: "
        + template("pillow:broken-png-file-bad-header-checksum", "b'IDAT'"),
        "bad_training_data",
        "certain",
        ["broken PNG file (bad header checksum in b'IDAT')", "re-download", "LOAD_TRUNCATED_IMAGES"],
    )
    assert "truncated (its file ends" not in found.summary


def test_an_image_saved_in_a_format_without_its_mode():
    leads_with(
        "OSError: " + template("pillow:cannot-write-mode-as-jpeg", "RGBA"),
        "image_mode_unsupported",
        "certain",
        ["RGBA", "convert('RGB')"],
    )
    leads_with(
        "OSError: " + template("pillow:cannot-write-mode-as-png", "F"),
        "image_mode_unsupported",
        "certain",
        ["mode F as PNG", "uint8"],
    )
    # Pillow's refusal of an empty image is not the mode's
    assert explained("ValueError: cannot write empty image as JPEG\n").id != "log.image_mode_unsupported"


def test_a_json_column_whose_type_changes_between_rows():
    leads_with(
        '  File "/usr/local/lib/python3.10/dist-packages/datasets/packaged_modules/json/json.py", line 122, in '
        "_generate_tables\n    pa_table = paj.read_json(\n"
        "pyarrow.lib.ArrowInvalid: "
        + template("third_party:arrow-json-column-changed-type", "/answer", "number", "string", "12"),
        "data_column_types_mixed",
        "certain",
        ["column /answer: number until row 12, then string", "str(value)"],
    )
    # Arrow's other JSON refusals (a malformed line) are not a column's type
    found = explained(
        "pyarrow.lib.ArrowInvalid: JSON parse error: Missing a comma or '}' after an object member.\n"
    )
    assert found.id != "log.data_column_types_mixed"
