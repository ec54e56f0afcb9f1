"""Hugging Face datasets refusing a load, a Dataset method or a feature (kinds/datasets_calls.py). datasets is not
installed here: each message is the catalog template's text (datasets' sources, as its raise prints it) with values
a run would put in, under the traceback frames datasets prints; and near-misses that are other kinds."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def traceback(frame: str, error: str) -> str:
    """A traceback from the user's train.py into datasets' ``frame`` ending in ``error``."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 41, in <module>\n'
        "    ds = load_data(args)\n"
        f'  File "/opt/conda/lib/python3.11/site-packages/datasets/{frame}", line 1203, in call\n'
        "    raise ValueError(message)\n"
        f"{error}\n"
    )


def refused(text: str, confidence: str = "certain"):
    found = explained(text)
    assert found.id == "log.datasets_call_refused", (found.id, found.summary)
    assert found.details["confidence"] == confidence, found.summary
    return found


def test_a_split_the_dataset_does_not_have():
    found = refused(
        traceback("builder.py", "ValueError: Bad split: valid. Available splits: ['train', 'test']")
    )
    assert "valid" in found.summary and "['train', 'test']" in found.summary
    assert "split='train[:10%]'" in found.fix


def test_a_dataset_with_several_configs_loaded_without_one():
    found = refused(
        traceback(
            "builder.py",
            "ValueError: Config name is missing.\nPlease pick one among the available configs: ['en', 'de']\n"
            "Example of usage:\n\t`load_dataset('wmt/x', 'en')`",
        )
    )
    assert "get_dataset_config_names" in found.fix


def test_a_gated_dataset_without_the_token():
    found = refused(
        traceback(
            "load.py",
            "datasets.exceptions.DatasetNotFoundError: Dataset 'meta-llama/private-eval' is a gated dataset on the "
            "Hub. You must be authenticated to access it.",
        )
    )
    assert "meta-llama/private-eval" in found.summary and "HF_TOKEN" in found.fix and "accept" in found.fix


def test_a_test_size_larger_than_the_dataset():
    found = refused(
        traceback(
            "arrow_dataset.py",
            "ValueError: test_size=2000 should be either positive and smaller than the number of samples 500 or a "
            "float in the (0, 1) range",
        )
    )
    assert "test_size=2000" in found.summary and "len(dataset)" in found.fix


def test_more_shards_than_rows():
    found = refused(
        traceback(
            "arrow_dataset.py",
            "ValueError: Unable to shard a dataset of size 3 into 8 shards (the number of shards exceeds the number "
            "of samples).",
        )
    )
    assert "size 3 into 8 shards" in found.summary and "num_shards <= len(dataset)" in found.fix


def test_a_label_past_the_class_label_names():
    found = refused(
        traceback("features/features.py", "ValueError: Class label 7 greater than configured num_classes 5")
    )
    assert "7" in found.summary and "ClassLabel(names=[...])" in found.fix and "subtract 1" in found.fix


def test_a_dataset_saved_by_a_newer_datasets():
    found = refused(
        traceback(
            "features/features.py",
            "ValueError: Feature type 'List' not found. Available feature types: ['Value', 'ClassLabel', "
            "'Translation', 'Sequence', 'Array2D', 'Audio', 'Image']",
        )
    )
    assert "'List'" in found.summary and "pip install -U datasets" in found.fix


def test_an_index_attached_while_filtering():
    found = refused(
        traceback(
            "arrow_dataset.py",
            "ValueError: Using `.filter` on a dataset with attached indexes is not allowed. You can first run "
            "`.drop_index() to remove your index and then re-add it.",
        )
    )
    assert "drop_index('<name>')" in found.fix


def test_streaming_with_num_proc():
    found = refused(
        traceback(
            "load.py",
            "NotImplementedError: Loading a streaming dataset in parallel with `num_proc` is not implemented. To "
            "parallelize streaming, you can wrap the dataset with a PyTorch DataLoader using `num_workers` > 1 "
            "instead.",
        )
    )
    assert "drop num_proc" in found.fix


def test_not_enough_disk_for_the_cache():
    found = refused(
        traceback(
            "builder.py",
            "OSError: Not enough disk space. Needed: 1.35 TiB (download: 780.00 GiB, generated: 600.00 GiB, "
            "post-processed: Unknown size)",
        )
    )
    assert "1.35 TiB" in found.summary and "HF_DATASETS_CACHE" in found.fix


def test_an_out_of_range_index_is_likely():
    found = refused(
        traceback("arrow_dataset.py", "IndexError: Index 1200 out of range for dataset of size 1000."),
        confidence="likely",
    )
    assert "1200" in found.summary and "len(dataset)" in found.fix


def test_near_misses_are_other_kinds():
    # a column the dataset does not have: its own kind, which names the columns there
    column = explained(
        traceback(
            "arrow_dataset.py",
            "ValueError: Column name ['label'] not in the dataset. Current columns in the dataset: ['text', 'labels']",
        )
    )
    assert column.id == "log.dataset_column_missing", column.summary
    # the filesystem itself full: the OS's words, not datasets' estimate
    full = explained(traceback("arrow_writer.py", "OSError: [Errno 28] No space left on device"))
    assert full.id == "log.disk_full", full.summary


def test_a_map_worker_that_died_is_likely_and_names_each_cause():
    found = refused(
        traceback(
            "arrow_dataset.py",
            "ValueError: Failed to retrieve results from map: result list [None, <datasets.arrow_dataset.Dataset "
            "object at 0x7f>] still contains None - at least one worker failed to return its results",
        ),
        confidence="likely",
    )
    assert "num_proc=1" in found.fix and "OOM" in found.fix


def test_a_decoded_audio_value_read_as_the_old_dict():
    found = refused(
        traceback(
            "features/_torchcodec.py",
            "TypeError: 'torchcodec.decoders.AudioDecoder' object is not subscriptable",
        )
    )
    assert "['sampling_rate']" in found.fix and "Audio(decode=False)" in found.fix


def test_a_column_too_large_for_one_arrow_batch():
    found = refused(
        traceback(
            "arrow_writer.py",
            "OverflowError: There was an overflow with type <class 'list'>. Try to reduce writer_batch_size to have "
            "batches smaller than 2GB.\n(offset overflow while concatenating arrays)",
        ),
        confidence="likely",
    )
    assert "writer_batch_size=100" in found.fix


def test_a_value_that_does_not_fit_its_declared_type_is_likely():
    found = refused(
        traceback("table.py", "TypeError: Couldn't cast array of type string to int64"),
        confidence="likely",
    )
    assert "string to int64" in found.summary and "features=Features" in found.fix
