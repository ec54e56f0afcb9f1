"""Hugging Face datasets refusing a load or a Dataset method on what the script handed it, and the features it cannot encode.

datasets' own checks, as its sources raise them (``datasets/load.py``: ``load_dataset``'s ``data_files``,
``data_dir``, ``num_proc`` with streaming, gated datasets and revisions, ``load_from_disk``;
``datasets/builder.py``: configs, splits, disk space; ``datasets/data_files.py``: patterns that match nothing; ``datasets/arrow_reader.py``: a split the dataset lacks or
that holds no data;
``datasets/arrow_dataset.py``: ``train_test_split``, ``shard``, ``class_encode_column``, indexes, ``save_to_disk``,
``push_to_hub``, ``rename_column`` / ``add_column``; ``datasets/combine.py``: ``concatenate_datasets`` /
``interleave_datasets``; ``datasets/iterable_dataset.py``: ``map`` on a streamed dataset;
``datasets/features/*.py``: ``ClassLabel``, feature types, ``Image`` / ``Audio`` / ``Video`` samples), datasets
2.x-4.x. Each names what it refuses and so its fix; the ones several causes print stay likely. Columns that are
not there, map functions' outputs, data files whose columns differ and folders saved with ``save_to_disk`` are
other kinds (``hub_datasets``).
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "data loading"

_SPLIT_SIZES = (
    "train_test_split(test_size=..., train_size=...) takes each as a fraction in (0, 1) or a number of rows below "
    "len(dataset), the two together at most the whole: test_size=0.1 (or test_size=1000 on a dataset of more "
    "than 1000 rows); check len(dataset) first when the dataset was filtered or is a small debug slice."
)

_INDEXES = (
    "A dataset with a FAISS / Elasticsearch index attached cannot be filtered, selected, sorted, shuffled, split or "
    "saved: drop it first, dataset.drop_index('<name>') (dataset.list_indexes() names them), run the operation, "
    "then add_faiss_index(...) again on the result."
)

_INTERLEAVE = (
    "concatenate_datasets / interleave_datasets take a list of Dataset (or of IterableDataset) objects, all of one "
    "kind and none empty: pass one split of each DatasetDict (ds['train']), not the DatasetDict itself, and convert "
    "so that all are map-style or all streamed (ds.to_iterable_dataset())."
)

_CLASS_LABEL = (
    "A ClassLabel column holds integers 0..num_classes-1 (or -1 for no label), or the label names it was made with: "
    "build it with ClassLabel(names=[...]) listing every label the data has (dataset.unique(column) shows them), "
    "map the raw labels to those ids before cast_column, and fix labels outside the range (1-based labels: "
    "subtract 1)."
)

_MEDIA = (
    "An Image / Audio / Video / Pdf / Nifti / Mesh column holds, per row, a dict with 'path' (a file that exists on "
    "the machine that decodes it) or 'bytes' (the encoded file), or a path string: fill the rows whose path and "
    "bytes are both None (drop them with dataset.filter(lambda x: x['<col>'] is not None)), and keep the files next "
    "to the data when the dataset is moved."
)

_MEDIA_PACKAGE = (
    "datasets decodes that column with a package this environment lacks: pip install the one the message names "
    "(Pillow for images, torchcodec (and FFmpeg) for audio and video since datasets 4.0, soundfile / librosa "
    "before it, pdfplumber, nibabel, trimesh), or cast the column with decode=False and read the bytes yourself."
)

_DECODE = (
    "The column was cast with decode=False, so its rows are the raw dict of path and bytes: cast it back with "
    "dataset.cast_column('<col>', Image(decode=True)) (Audio / Video / ...), or read row['<col>']['bytes'] yourself."
)

_FEATURE_TYPES = (
    "The dataset's features name a type this datasets release does not have: a dataset saved or pushed with a "
    "newer datasets (4.0 wrote 'List' where 3.x wrote 'Sequence', and added 'Json', 'Video', 'Pdf', 'Nifti') read "
    "by an older one: upgrade datasets where the run loads it (pip install -U datasets), the same release on "
    "every node; or save it again with the release the readers use."
)

_NO_FILES = (
    "The data_files pattern (or the dataset folder) matched no file of a format datasets reads: check the path on "
    "the machine that runs the job (ls the glob), give the files' own extension (*.jsonl, *.parquet, *.csv) or "
    "the builder that reads them (load_dataset('json', data_files=...)), and for a folder, put the data files in "
    "it (not only a saved dataset: that one is load_from_disk's)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    # load.py
    (
        "It should be either non-empty or None (default).",
        "load_dataset(..., data_files=...) was given an empty list, dict or string (a glob that globbed nothing "
        "earlier in the script, an unset argument): pass the files (data_files={'train': 'data/train.jsonl'}), or "
        "leave data_files=None to take the dataset's own.",
    ),
    (
        "`data_dir` must be relative to a dataset directory's root:",
        "load_dataset(path, data_dir=...) takes a folder inside the dataset (data_dir='en'); an absolute folder "
        "of data files is the path itself: load_dataset('/abs/folder') or load_dataset('json', "
        "data_files='/abs/folder/*.jsonl').",
    ),
    (
        "Loading a streaming dataset in parallel with `num_proc` is not implemented.",
        "load_dataset(..., streaming=True) reads lazily and takes no num_proc: drop num_proc (parallelise the reading "
        "with a DataLoader's num_workers over the streamed dataset), or load without streaming.",
    ),
    (
        "is a gated dataset on the Hub.",
        "The dataset is gated: accept its terms on its page on huggingface.co with the account the run uses, then "
        "give the run that account's token (huggingface-cli login, or HF_TOKEN=hf_... in the job's environment on "
        "every node).",
    ),
    (
        "doesn't exist for dataset",
        "load_dataset(..., revision=...) names a branch, tag or commit the dataset repository does not have: use one "
        "listed on the dataset's 'Files and versions' page (revision='main', or a full commit hash), spelt as there.",
    ),
    (
        "is neither a `Dataset` directory nor a `DatasetDict` directory.",
        "load_from_disk reads a folder written by save_to_disk (with dataset_info.json / state.json, or "
        "dataset_dict.json): point it at that folder itself, not its parent or a folder of raw data files (those "
        "load with load_dataset('json' / 'csv' / 'parquet', data_files=...)), and check the copy is whole on this "
        "machine.",
    ),
    (
        "`trust_remote_code` is not supported anymore.",
        "datasets 4.0 dropped loading scripts: a Hub dataset made of a Python script no longer loads. Load its "
        "Parquet export (load_dataset(name, revision='refs/convert/parquet')) or another copy in a standard format, "
        "or pin the older library where the script is needed: pip install 'datasets<4.0', with trust_remote_code=True.",
    ),
    # builder.py
    (
        "Config name is missing.",
        "This dataset has several configurations: name one, load_dataset(path, '<config>'), among those the "
        "message lists (datasets.get_dataset_config_names(path) prints them).",
    ),
    (
        "not found. Available:",
        "The configuration named is not one of the dataset's: use one of those listed "
        "(datasets.get_dataset_config_names(path)), spelt as there.",
    ),
    (
        "Bad split:",
        "load_dataset(..., split=...) names a split the dataset does not have: use one of the available splits the "
        "message lists ('train', 'validation', 'test' differ between datasets), with slices as split='train[:10%]' "
        "or 'train[:1000]'.",
    ),
    # arrow_writer.py: a table written with no row and no features
    (
        "Please pass `features` or at least one example when writing data",
        "datasets was asked to write a table with no row and no declared features: a filter or map that left no "
        "example (every row filtered out, a batched map returning empty lists), a shard of map(num_proc=N) over "
        "fewer rows than processes in older releases, or data files that hold none. Print len(dataset) before and "
        "after each filter and map to find the step that empties it, pass features= to map when an empty result is "
        "expected, and lower num_proc below the number of rows.",
    ),
    # arrow_dataset.py load_from_disk: a folder save_to_disk did not write
    (
        "Expected to load a `Dataset` object but provided path is not a `Dataset`.",
        "load_from_disk reads only a folder that save_to_disk wrote (its dataset_info.json and state.json): give it "
        "that folder, as saved, on the machine that runs the job (a DatasetDict's folder holds dataset_dict.json and "
        "one folder per split: load the parent, or the split's folder); data files (json, csv, parquet) are "
        "load_dataset's: load_dataset('json', data_files=...). If the preprocessing step writes it, run that step "
        "first (on a shared path every node reads).",
    ),
    # arrow_reader.py: the split asked for, read from the dataset prepared in the cache
    (
        'Unknown split "',
        "The split asked for (load_dataset(..., split=...), a trainer's eval split, dataset['validation']) is not "
        "one the dataset has: use one of the splits the message lists, or make the missing one from another, "
        "dataset['train'].train_test_split(test_size=0.1) (its 'test' as the validation split).",
    ),
    (
        "corresponds to no data!",
        "The split asked for is in the dataset's info but holds no file and no row: the data_files (or data_dir) "
        "pattern of that split matched nothing where it was built, or a cache built from an empty folder is reused. "
        "Check the pattern against the files (data_files={'train': 'data/train-*.jsonl'}), then rebuild: "
        "load_dataset(..., download_mode='force_redownload').",
    ),
    (
        "Not enough disk space. Needed:",
        "The dataset does not fit where datasets caches it: point the cache at a filesystem with room "
        "(HF_DATASETS_CACHE=/big/disk/hf_datasets, or load_dataset(..., cache_dir=...)), free space there, or stream it "
        "(load_dataset(..., streaming=True)).",
    ),
    (
        "Unable to download and prepare the dataset at the root",
        "datasets writes a dataset into <folder>.incomplete beside its output folder, so the output (cache_dir=, "
        "download_and_prepare(output_dir=...)) cannot be the root of a filesystem or bucket ('/', 's3://bucket'): "
        "give a folder inside it, as the message suggests (cache_dir='/data/hf_datasets', "
        "output_dir='s3://bucket/datasets/name').",
    ),
    (
        "is not supported. Please enter a valid stopping_strategy.",
        "interleave_datasets(..., stopping_strategy=...) takes 'first_exhausted' or 'all_exhausted' (and "
        "'all_exhausted_without_replacement' in recent releases), spelt as here.",
    ),
    # data_files.py
    ("doesn't contain any data files", _NO_FILES),
    ("doesn't contain data files matching the patterns for config", _NO_FILES),
    ("Couldn't infer the same data file format for all splits.", _NO_FILES),
    (
        "Some splits are duplicated in data_files:",
        "Each split is named once in data_files: merge the files of one split into one list, "
        "data_files={'train': ['a.jsonl', 'b.jsonl'], 'test': 'c.jsonl'}.",
    ),
    (
        "Split name should match",
        "A split's name is word characters (letters, digits, underscores), parts joined by dots at most: train, "
        "validation, test, my_split_2. Rename the split (no '-', '/', spaces or a slice such as 'train[:10%]' in a "
        "data_files key, a file name's split part or push_to_hub's split=).",
    ),
    # combine.py
    ("Unable to interleave an empty list of datasets.", _INTERLEAVE),
    ("Unable to concatenate an empty list of datasets.", _INTERLEAVE),
    ("Expected a list of Dataset objects or a list of IterableDataset objects", _INTERLEAVE),
    ("has at least one split:", _INTERLEAVE),
    ("Unable to interleave a", _INTERLEAVE),
    (
        "Datasets should be identically split_by_node before interleaving",
        "Split every dataset by node the same way, or interleave first and split the result once: "
        "split_dataset_by_node(interleave_datasets([a, b]), rank=rank, world_size=world_size).",
    ),
    # arrow_dataset.py: splitting, sharding, indexes, columns, saving
    ("should be either positive and smaller than the number of samples", _SPLIT_SIZES),
    ("Invalid value for train_size:", _SPLIT_SIZES),
    ("Invalid value for test_size:", _SPLIT_SIZES),
    ("Reduce test_size and/or train_size.", _SPLIT_SIZES),
    ("the resulting train set will be empty.", _SPLIT_SIZES),
    (
        "which is too few. The minimum number of groups for any class cannot",
        "train_test_split(stratify_by_column=...) needs at least 2 rows of every class: drop or merge the classes "
        "with one example (dataset.filter on the label), or split without stratify_by_column.",
    ),
    (
        "Stratifying by column is only supported for",
        "stratify_by_column takes a ClassLabel column: convert it first, dataset = "
        "dataset.class_encode_column('<label>'), then train_test_split(..., stratify_by_column='<label>').",
    ),
    (
        "Stratified train/test split is not implemented for `shuffle=False`",
        "A stratified split shuffles: drop shuffle=False, or drop stratify_by_column.",
    ),
    (
        "Class encoding is only supported for",
        "class_encode_column turns a column of plain values (strings) into a ClassLabel: the column is already "
        "another feature type (a ClassLabel, a list): use it as it is, or encode a plain column.",
    ),
    (
        "Unable to shard a dataset of size",
        "dataset.shard(num_shards=N, index=i) needs at least N rows: shard a larger dataset, or take fewer shards "
        "(num_shards <= len(dataset)); for a small debug run, skip the sharding.",
    ),
    (
        "index should be in [0, num_shards-1]",
        "dataset.shard(num_shards, index): index counts from 0 to num_shards-1 (index=rank, num_shards=world_size).",
    ),
    ("Using `.filter` on a dataset with attached indexes is not allowed.", _INDEXES),
    ("Using `.select` on a dataset with attached indexes is not allowed.", _INDEXES),
    ("Using `.sort` on a dataset with attached indexes is not allowed.", _INDEXES),
    ("Using `.shuffle` on a dataset with attached indexes is not allowed.", _INDEXES),
    ("Using `.train_test_split` on a dataset with attached indexes is not allowed.", _INDEXES),
    ("please remove all the indexes using `dataset.drop_index` before saving a dataset", _INDEXES),
    (
        "out of range for dataset of size",
        "An index past the end of the dataset: dataset[i] and select(indices) take 0..len(dataset)-1; check "
        "len(dataset) after filtering, and indices computed for a larger dataset (a sampler or a saved list of "
        "indices from another version of the data).",
    ),
    (
        "Please choose a column name which is not already in the dataset.",
        "rename_column / add_column name a column the dataset already has: pick another name, or remove the old "
        "column first (dataset.remove_columns('<name>')).",
    ),
    (
        " is already in the dataset.",
        "The column name is taken: remove the old column first (remove_columns) or add under another name.",
    ),
    (
        "New column names must all be different",
        "rename_columns({...}) maps two columns to one name: give each a different new name.",
    ),
    (
        "but a dataset can't overwrite itself.",
        "save_to_disk cannot write into the folder the dataset is read from (a dataset loaded with load_from_disk "
        "and saved back to the same path): save to a new folder, then replace the old one.",
    ),
    (
        "Failed to push_to_hub: please specify either max_shard_size or num_shards, but not both.",
        "push_to_hub / save_to_disk take max_shard_size='500MB' or num_shards=N, one of them.",
    ),
    (
        "Please use either `keep_in_memory` or",
        "keep_in_memory=True writes no cache file: drop cache_file_name (or indices_cache_file_name), or drop "
        "keep_in_memory.",
    ),
    (
        "Both `seed` and `generator` were provided.",
        "shuffle / train_test_split take seed=42 or generator=np.random.default_rng(42), one of them.",
    ),
    (
        "The provided generator must be an instance of numpy.random.Generator",
        "datasets' generator= is numpy's: generator=np.random.default_rng(seed), not a torch.Generator.",
    ),
    (
        "Map style datasets do not support indefinite repetition.",
        "dataset.repeat(None) repeats forever only a streamed dataset: give a count (dataset.repeat(3)) or convert "
        "it with to_iterable_dataset() first.",
    ),
    (
        "`batch_size` must be specified when using multiple workers",
        "to_tf_dataset(..., num_workers=N) loads batches in worker processes and needs batch_size=: pass it, or "
        "num_workers=0.",
    ),
    (
        "Cannot specify label_cols without specifying columns!",
        "to_tf_dataset(columns=[...], label_cols=[...]): name the input columns too.",
    ),
    (
        "Please specify the data files or data directory to load for the",
        "A packaged builder ('json', 'csv', 'parquet', 'text', 'imagefolder') reads the files it is given: "
        "load_dataset('json', data_files={'train': 'data/train.jsonl'}) or load_dataset('imagefolder', "
        "data_dir='images/').",
    ),
    ("No (supported) data files found", _NO_FILES),
    (
        "Streaming is not possible for this dataset because data host server doesn't support HTTP range requests.",
        "The server the data comes from cannot be read in pieces: load without streaming (streaming=False), which "
        "downloads the files first.",
    ),
    (
        "is not implemented in streaming mode. Please use `dl_manager.iter_archive` instead.",
        "This dataset's loading script extracts TAR archives, which streaming cannot: load without streaming "
        "(streaming=False), or use a copy of the dataset in Parquet.",
    ),
    (
        "Number of rows must match for all datasets",
        "concatenate_datasets([...], axis=1) puts columns side by side, so every dataset needs the same number of "
        "rows: select the same rows of each (ds.select(range(n))), or concatenate along rows (axis=0).",
    ),
    (
        "Failed to concatenate on axis=1 because tables don't have the same number of rows",
        "concatenate_datasets([...], axis=1) needs the same number of rows in each: select the same rows of each, or "
        "concatenate along rows (axis=0).",
    ),
    (
        "The features can't be aligned because the key",
        "The datasets concatenated or interleaved have a column of different types (a column all empty or None in "
        "one dataset is typed null, lists of strings in the other): give every dataset the same columns with the "
        "same types before concatenating, cast one to the other's features (b = b.cast(a.features), or cast_column "
        "for the one column), or remove the columns training does not use (remove_columns). Where a fine-tuning "
        "framework concatenates the datasets itself (LLaMA-Factory, ms-swift, trl), upgrade it (pip install -U) or "
        "fill the empty column in your data.",
    ),
    (
        "must be identical as the columns in the dataset:",
        "dataset.cast(features) takes features for exactly the dataset's columns: build them from the dataset's own "
        "(features = dataset.features.copy(); features['label'] = ClassLabel(names=[...])) and cast with those.",
    ),
    (
        "Features of the new split don't match the features of the existing splits on the hub:",
        "A split pushed to a Hub dataset must have the features of the splits already there: cast it to them "
        "(ds.cast(load_dataset(repo, split='train').features)), or push to a new config (config_name=...).",
    ),
    (
        "Please provide a column selected in:",
        "The column named is not in this dataset: use one of the columns the message lists (dataset.column_names), "
        "spelt as there; a column removed or renamed by an earlier map / rename_column is gone.",
    ),
    (
        "not found in dataset!",
        "to_tf_dataset(columns=..., label_cols=...) names a column this dataset has not: use the names in "
        "dataset.column_names (after tokenisation: input_ids, attention_mask, labels).",
    ),
    (
        "dataset index must be int, str, slice or collection of int, not bool",
        "A Dataset is indexed by a row number, a slice, a list of rows or a column name: for a boolean mask use "
        "dataset.filter(...) or dataset.select(np.flatnonzero(mask)).",
    ),
    (
        "Expected cache_file_name to have an extension, but got:",
        "map / filter / sort(cache_file_name=...) takes a file name with its extension: cache_file_name="
        "'cache/tokenized.arrow'.",
    ),
    (
        "num_proc must be an integer > 0.",
        "num_proc= takes a positive integer (os.cpu_count() at most), or None.",
    ),
    (
        "num_proc must be >= 0 or None.",
        "num_proc= takes a positive integer (os.cpu_count() at most), or None.",
    ),
    (
        "num_workers must be >= 0",
        "num_workers= takes 0 (the main process) or a positive number of processes.",
    ),
    (
        "still contains None - at least one worker failed to return its results",
        "A worker process of map / filter(num_proc=N) (or of load_dataset's num_proc) died without a result: killed "
        "for memory (the kernel's OOM killer: dmesg), or an error in the function that the pool lost. Run it with "
        "num_proc=1 to see the function's own error, then lower num_proc or writer_batch_size to fit in memory.",
    ),
    (
        "Try to reduce writer_batch_size to have batches smaller than 2GB.",
        "A batch of rows written to Arrow passed 2 GB in one column (long texts, images as bytes, large lists): lower "
        "writer_batch_size in map / filter / from_generator (writer_batch_size=100, or 10 for large media), or "
        "store large media as file paths.",
    ),
    (
        "doesn't have a fixed random seed across nodes to shuffle and split the list of dataset shards by node.",
        "A shuffled IterableDataset split by node (split_dataset_by_node) needs the same shuffle on every node: "
        "shuffle with a fixed seed on every rank, ds = ds.shuffle(seed=42, buffer_size=10_000), before splitting.",
    ),
    # iterable_dataset.py
    (
        "Column lengths mismatch: columns",
        "A batched map on a streamed dataset returned columns of unequal lengths: return the same number of rows in "
        "every column, and drop the input columns whose row count you change (map(..., batched=True, "
        "remove_columns=dataset.column_names)).",
    ),
    (
        "Couldn't cast array of type",
        "A column's values do not fit the type its features declare (a string where the features say int64, a "
        "struct with other fields, a list where a single value is expected): pass features that match the data "
        "(load_dataset(..., features=Features({...}))), fix the rows that differ (a JSON field that changes type "
        "between rows, a number written as a string, an empty list typed null), or cast to a type every value "
        "converts to.",
    ),
    (
        "requires huggingface_hub>=1.6.0",
        "This datasets release reads and writes Hub buckets through a newer huggingface_hub: pip install -U "
        "'huggingface_hub>=1.6.0'.",
    ),
    (
        "Polars needs to be installed to be able to return Polars dataframes.",
        "pip install polars, or ask for another format (with_format('numpy' / 'torch' / 'pandas')).",
    ),
    (
        "Called a Tensorflow-specific function but Tensorflow is not installed.",
        "to_tf_dataset and the TensorFlow formats need TensorFlow: pip install tensorflow, or use the torch path "
        "(with_format('torch') and a DataLoader).",
    ),
    (
        "you need to install the following",
        "The loading script imports packages this environment lacks: pip install the ones the message names, in the "
        "environment the job runs in (every node).",
    ),
    # features
    ("greater than configured num_classes", _CLASS_LABEL),
    ("Invalid string class label", _CLASS_LABEL),
    ("Invalid integer class label", _CLASS_LABEL),
    ("Trying to use ClassLabel feature with undefined number of class.", _CLASS_LABEL),
    ("ClassLabel number of names do not match the defined num_classes.", _CLASS_LABEL),
    ("Some label names are duplicated. Each label name should be unique.", _CLASS_LABEL),
    ("Please provide either num_classes, names or names_file.", _CLASS_LABEL),
    ("Please provide either names or names_file but not both.", _CLASS_LABEL),
    ("not found. Available feature types:", _FEATURE_TYPES),
    (
        "The 'source' features come from dataset_info.json",
        "The cached dataset's dataset_info.json and its Arrow files disagree (a cache written by another version of "
        "the dataset or of datasets, or edited by hand): delete that dataset's cache folder (under "
        "~/.cache/huggingface/datasets, or HF_DATASETS_CACHE) and load again, or load_dataset(..., "
        "download_mode='force_redownload'); for a folder written by save_to_disk, save it again rather than edit its "
        "dataset_info.json.",
    ),
    (
        "Column mismatch between batch",
        "Features.encode_batch takes a batch with exactly the features' columns: build the batch with every column "
        "of the features (and no other), or add the missing columns to the features.",
    ),
    ("should have one of 'path' or 'bytes' but", _MEDIA),
    ("sample should have one of 'path' or 'bytes' but they are missing or None", _MEDIA),
    ("To support decoding audio files, please install", _MEDIA_PACKAGE),
    (
        "files requires system library 'libsndfile'",
        "Decoding MP3 / Opus needs a newer libsndfile than soundfile found: pip install -U soundfile (its wheels ship "
        "libsndfile 1.1+), or upgrade the system libsndfile.",
    ),
    (
        "'torchcodec.decoders.AudioDecoder' object is not subscriptable",
        "Since datasets 4.0 a decoded Audio value is a torchcodec AudioDecoder that answers only ['array'] and "
        "['sampling_rate']: read those two, and for the file's path cast the column with Audio(decode=False) and "
        "read ['path']; or pin datasets<4.0 for code written for the old dict.",
    ),
    ("To support decoding images, please install 'Pillow'.", _MEDIA_PACKAGE),
    ("To support encoding images, please install 'Pillow'.", _MEDIA_PACKAGE),
    ("To support decoding audio data, please install", _MEDIA_PACKAGE),
    ("To support encoding audio data, please install", _MEDIA_PACKAGE),
    ("To support decoding videos, please install", _MEDIA_PACKAGE),
    ("To support decoding pdfs, please install", _MEDIA_PACKAGE),
    ("To support decoding NIfTI files, please install", _MEDIA_PACKAGE),
    ("To support decoding meshes, please install", _MEDIA_PACKAGE),
    ("Decoding is disabled for this feature.", _DECODE),
    (
        "To use PCM files, please specify a 'sampling_rate' in Audio object",
        "Raw PCM carries no header: cast the column with Audio(sampling_rate=16000) (the rate the files were "
        "recorded at).",
    ),
    (
        "Cannot downcast dtype",
        "An image array of this dtype has no Pillow mode: convert it first (np.uint8 for 0-255 images: "
        "(arr * 255).clip(0, 255).astype(np.uint8) for floats in [0, 1]).",
    ),
    (
        "for image encoding. Only",
        "A multi-channel image array must be uint8 to encode: convert it with .astype(np.uint8) (scaled to 0-255).",
    ),
)

# More than one cause prints these (a label past the classes: labels from another list, 1-based labels, a class
# missing from names=; a cache out of step with its info file): their fixes name each, and a hit stays likely.
SEVERAL = (
    "out of range for dataset of size",
    "still contains None - at least one worker failed to return its results",
    # Arrow's overflow under it may also be a release's own concatenation (arrow_tables.py)
    "Try to reduce writer_batch_size to have batches smaller than 2GB.",
    # the data, or features written by hand, or a release's own inference
    "Couldn't cast array of type",
    # the user's own concatenation, or a framework's over the user's data files
    "The features can't be aligned because the key",
)

DATASETS_CALL_REFUSED = refusal_recogniser(
    "datasets_call_refused",
    "Hugging Face datasets refused a load, a Dataset method or a feature on what the script handed it",
    REFUSALS,
    templates=(
        "datasets:empty-data-files-it-should-be",
        "datasets:data-dir-must-be-relative-to",
        "datasets:loading-streaming-dataset-in-parallel-with",
        "datasets:dataset-is-gated-dataset-on-the",
        "datasets:revision-doesn-exist-for-dataset-on",
        "datasets:directory-is-neither-dataset-directory-nor",
        "datasets:trust-remote-code-is-not-supported",
        "datasets:config-name-is-missing-please-pick",
        "datasets:unknown-split-should-be-one-of",
        "datasets:please-pass-features-or-at-least",
        "datasets:no-such-file-expected-to-load",
        "datasets:no-such-files-nor-found-expected",
        "datasets:instruction-corresponds-to-no-data",
        "datasets:builderconfig-not-found-available",
        "datasets:builderconfig-not-found-available-2",
        "datasets:bad-split-available-splits",
        "datasets:not-enough-disk-space-needed-download",
        "datasets:not-enough-disk-space-needed-download-2",
        "datasets:unable-to-download-and-prepare-the",
        "datasets:is-not-supported-please-enter-valid",
        "datasets:the-directory-at-doesn-contain-any",
        "datasets:the-dataset-repository-at-doesn-contain",
        "datasets:dataset-at-doesn-contain-data-files",
        "datasets:couldn-infer-the-same-data-file",
        "datasets:some-splits-are-duplicated-in-data",
        "datasets:split-name-should-match-but-got",
        "datasets:split-name-should-match-but-got-2",
        "datasets:unable-to-interleave-an-empty-list",
        "datasets:unable-to-concatenate-an-empty-list",
        "datasets:expected-list-of-dataset-objects-or",
        "datasets:unable-to-interleave-at-position-with",
        "datasets:expected-list-of-dataset-objects-or-2",
        "datasets:expected-list-of-dataset-objects-or-3",
        "datasets:unable-to-interleave-with-expected-list",
        "datasets:unable-to-concatenate-with-expected-list",
        "datasets:dataset-at-position-has-at-least",
        "datasets:datasets-should-be-identically-split-by",
        "datasets:test-size-should-be-either-positive",
        "datasets:train-size-should-be-either-positive",
        "datasets:invalid-value-for-train-size-of",
        "datasets:invalid-value-for-test-size-of",
        "datasets:the-sum-of-test-size-and",
        "datasets:the-sum-of-train-size-and",
        "datasets:with-samples-test-size-and-train",
        "datasets:the-least-populated-class-in-column",
        "datasets:stratifying-by-column-is-only-supported",
        "datasets:stratified-train-test-split-is-not",
        "datasets:class-encoding-is-only-supported-for",
        "datasets:unable-to-shard-dataset-of-size",
        "datasets:index-should-be-in-num-shards",
        "datasets:using-filter-on-dataset-with-attached",
        "datasets:using-select-on-dataset-with-attached",
        "datasets:using-sort-on-dataset-with-attached",
        "datasets:using-shuffle-on-dataset-with-attached",
        "datasets:using-train-test-split-on-dataset",
        "datasets:please-remove-all-the-indexes-using",
        "datasets:index-out-of-range-for-dataset",
        "datasets:new-column-name-already-in-the",
        "datasets:error-when-adding-column-is-already",
        "datasets:error-when-renaming-to-column-is-2",
        "datasets:new-column-names-must-all-be",
        "datasets:tried-to-overwrite-but-dataset-can",
        "datasets:failed-to-push-to-hub-please",
        "datasets:please-use-either-keep-in-memory",
        "datasets:please-use-either-keep-in-memory-2",
        "datasets:both-seed-and-generator-were-provided",
        "datasets:the-provided-generator-must-be-an",
        "datasets:map-style-datasets-do-not-support",
        "datasets:batch-size-must-be-specified-when",
        "datasets:cannot-specify-label-cols-without-specifying",
        "datasets:please-specify-the-data-files-or",
        "datasets:no-supported-data-files-found",
        "datasets:streaming-is-not-possible-for-this",
        "datasets:extraction-protocol-for-tar-archives-like",
        "datasets:extraction-protocol-for-tar-archives-like-2",
        "datasets:number-of-rows-must-match-for",
        "datasets:failed-to-concatenate-on-axis-because",
        "datasets:the-features-can-be-aligned-because",
        "datasets:the-columns-in-features-must-be",
        "datasets:features-of-the-new-split-don",
        "datasets:column-not-found-in-the-dataset",
        "datasets:column-not-found-in-dataset",
        "datasets:label-column-not-found-in-dataset",
        "datasets:dataset-index-must-be-int-str",
        "datasets:expected-cache-file-name-to-have",
        "datasets:num-proc-must-be-an-integer",
        "datasets:num-proc-must-be-or-none",
        "datasets:num-workers-must-be",
        "datasets:failed-to-retrieve-results-from-map",
        "datasets:failed-to-retrieve-results-from-prepare-2",
        "datasets:there-was-an-overflow-with-type",
        "datasets:the-dataset-doesn-have-fixed-random",
        "datasets:column-lengths-mismatch-columns-have-length",
        "datasets:column-lengths-mismatch-columns-have-length-2",
        "datasets:couldn-cast-array-of-type-to",
        "datasets:couldn-cast-array-of-type-to-2",
        "datasets:couldn-cast-array-of-type-to-3",
        "datasets:couldn-cast-array-of-type-to-4",
        "datasets:couldn-cast-array-of-type-to-5",
        "datasets:pushing-datasets-to-buckets-requires-huggingface",
        "datasets:loading-datasets-from-buckets-requires-huggingface",
        "datasets:polars-needs-to-be-installed-to",
        "datasets:called-tensorflow-specific-function-but-tensorflow",
        "datasets:to-be-able-to-use-you",
        "datasets:class-label-greater-than-configured-num",
        "datasets:invalid-string-class-label",
        "datasets:invalid-integer-class-label",
        "datasets:trying-to-use-classlabel-feature-with",
        "datasets:classlabel-number-of-names-do-not",
        "datasets:some-label-names-are-duplicated-each",
        "datasets:please-provide-either-num-classes-names",
        "datasets:please-provide-either-names-or-names",
        "datasets:feature-type-not-found-available-feature",
        "datasets:the-source-features-come-from-dataset",
        "datasets:column-mismatch-between-batch-and-features",
        "datasets:an-audio-sample-should-have-one",
        "datasets:an-audio-sample-should-have-one-2",
        "datasets:an-image-should-have-one-of",
        "datasets:an-image-sample-should-have-one",
        "datasets:mesh-should-have-one-of-path",
        "datasets:mesh-sample-should-have-one-of",
        "datasets:nifti-should-have-one-of-path",
        "datasets:nifti-sample-should-have-one-of",
        "datasets:pdf-should-have-one-of-path",
        "datasets:pdf-sample-should-have-one-of",
        "datasets:video-should-have-one-of-path",
        "datasets:video-sample-should-have-one-of",
        "datasets:to-support-decoding-audio-files-please",
        "datasets:to-support-decoding-audio-files-please-2",
        "datasets:decoding-opus-files-requires-system-library",
        "datasets:decoding-mp3-files-requires-system-library",
        "datasets:torchcodec-decoders-audiodecoder-object-is-not",
        "datasets:to-support-decoding-images-please-install",
        "datasets:to-support-encoding-images-please-install",
        "datasets:to-support-decoding-audio-data-please",
        "datasets:to-support-encoding-audio-data-please",
        "datasets:to-support-encoding-audio-data-please-2",
        "datasets:to-support-decoding-videos-please-install",
        "datasets:to-support-decoding-videos-please-install-2",
        "datasets:to-support-decoding-pdfs-please-install",
        "datasets:to-support-decoding-nifti-files-please",
        "datasets:to-support-decoding-meshes-please-install",
        "datasets:decoding-is-disabled-for-this-feature",
        "datasets:decoding-is-disabled-for-this-feature-2",
        "datasets:decoding-is-disabled-for-this-feature-3",
        "datasets:decoding-is-disabled-for-this-feature-4",
        "datasets:decoding-is-disabled-for-this-feature-5",
        "datasets:decoding-is-disabled-for-this-feature-6",
        "datasets:to-use-pcm-files-please-specify",
        "datasets:cannot-downcast-dtype-to-valid-image",
        "datasets:unsupported-array-dtype-for-image-encoding",
    ),
    several=SEVERAL,
)

RECOGNISERS = (DATASETS_CALL_REFUSED,)
