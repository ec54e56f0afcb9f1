"""A DataLoader, sampler or dataset built with options torch refuses, before a sample is loaded.

The checks are torch's own (``torch/utils/data/dataloader.py``: ``DataLoader.__init__`` and ``__setattr__``;
``sampler.py``: ``RandomSampler``, ``WeightedRandomSampler``, ``BatchSampler``; ``distributed.py``:
``DistributedSampler``; ``dataset.py``: ``TensorDataset``, ``StackDataset``, ``ConcatDataset``, ``ChainDataset``,
``random_split``; ``_utils/collate.py``: ``default_collate``), worded the same from torch 1.x to 2.13. Each names
its own cause, so the finding is certain, but for one: ``random_split``'s "Sum of input lengths does not equal
the length of the input dataset" is also what a torch before 1.13 prints for fractions (``[0.8, 0.2]``), which
it reads as lengths (fractions came in 1.13), so that reading is likely and names the version. (A sampler beside shuffle=True is ``dataloader_sampler_shuffle``;
persistent workers without workers ``dataloader_persistent_workers``; samples of different sizes
``collate_unequal_sizes``.)
"""

from __future__ import annotations

import re
from dataclasses import replace

from torchdoctor.explain.kinds.refusal_table import describe_refusal, refused
from torchdoctor.explain.recognisers import (
    Alternative,
    Hit,
    Pattern,
    Recogniser,
    called_from_own_code,
    library_call,
)

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# (fact, what went wrong, how to build it instead)
_CLASSES = (
    (
        "iterable_order",
        "a DataLoader over an IterableDataset was given a sampler, shuffle or batch_sampler",
        "An IterableDataset yields its samples in its own order, so DataLoader refuses sampler=, shuffle= and "
        "batch_sampler= beside it (a DistributedSampler included). Split the stream per rank inside the "
        "dataset's __iter__ instead: skip to every world_size-th sample from rank "
        "(itertools.islice(stream, rank, None, world_size)), and per worker likewise with "
        "torch.utils.data.get_worker_info(); shuffle with a buffer in the dataset (Hugging Face datasets: "
        "split_dataset_by_node(ds, rank, world_size) and ds.shuffle(buffer_size=...)). Or load a map-style "
        "Dataset (__getitem__ / __len__), which takes a DistributedSampler.",
    ),
    (
        "batch_options",
        "a DataLoader, sampler or batch sampler was given a batch size or sample count it refuses",
        "batch_size and num_samples must be positive integers and drop_last / replacement booleans. A batch "
        "size computed per GPU (global batch // world_size, // gradient accumulation steps) is 0 once the "
        "divisor exceeds the global batch: raise the global batch or lower the divisor. batch_sampler= takes "
        "the place of batch_size, shuffle, sampler and drop_last (pass only it), and batch_size=None (no "
        "automatic batching) takes no drop_last.",
    ),
    (
        "worker_options",
        "a DataLoader's worker options are out of range or need workers",
        "num_workers, timeout and prefetch_factor must be >= 0; prefetch_factor and multiprocessing_context "
        "apply only with num_workers > 0 (leave them unset, prefetch_factor=None, with num_workers=0); "
        "multiprocessing_context is 'spawn', 'fork' or 'forkserver' (or a multiprocessing context object).",
    ),
    (
        "late_attribute",
        "an option of a DataLoader was changed after it was built",
        "batch_size, batch_sampler, sampler, drop_last, dataset and persistent_workers are fixed once the "
        "DataLoader exists: build a new one with the new value, DataLoader(loader.dataset, batch_size=new, ...), "
        "instead of assigning to the attribute.",
    ),
    (
        "sampler_rank",
        "a DistributedSampler was given a rank outside its number of replicas",
        "DistributedSampler's rank must lie in 0..num_replicas-1: pass the global rank with the world size, "
        "DistributedSampler(ds, num_replicas=dist.get_world_size(), rank=dist.get_rank()) (or neither, to read "
        "both from the process group), not LOCAL_RANK with the number of nodes or the global rank with the GPUs "
        "of one node.",
    ),
    (
        "dataset_args",
        "a dataset was built from parts that do not fit together",
        "TensorDataset and StackDataset take tensors / datasets of one length (dim 0); ConcatDataset takes at "
        "least one map-style dataset and ChainDataset only IterableDatasets; random_split's lengths must sum "
        "to len(dataset), or be fractions in [0, 1] that sum to 1 (random_split(ds, [0.9, 0.1])).",
    ),
    (
        "collate_graph",
        "torch's DataLoader was given graph samples (PyTorch Geometric Data, DGL graphs) its default collate_fn "
        "cannot batch",
        "Batch graph datasets with the graph library's DataLoader, which collates graphs into one batch graph: "
        "from torch_geometric.loader import DataLoader (torch_geometric.data.DataLoader before PyG 2.0) for PyG "
        "Data objects; dgl.dataloading.GraphDataLoader (or collate_fn=lambda graphs: dgl.batch(graphs)) for DGL "
        "graphs. A wrapper that builds torch's DataLoader itself (a Lightning DataModule, a library's data "
        "module) needs that collate_fn passed: collate_fn=torch_geometric.data.Batch.from_data_list.",
    ),
    (
        "collate_type",
        "the default collate_fn was given samples of a type it cannot batch",
        "default_collate batches tensors, NumPy arrays, numbers, strings and dicts / lists / tuples of them. "
        "Make __getitem__ return those (an image through torchvision's transforms.ToTensor() / "
        "PILToTensor(), not a PIL image; no None: skip bad samples in the dataset), or pass a collate_fn of "
        "your own that builds the batch (nested and sparse tensors always need one).",
    ),
)


_FRACTIONS = Alternative(
    "dependency_version",
    "fractions given to random_split, which torch reads as fractions only from 1.13",
    "If the lengths are fractions (random_split(ds, [0.8, 0.2])), this torch is older than 1.13 and reads them as "
    "lengths: upgrade torch, or pass counts, n_train = int(0.8 * len(ds)) and len(ds) - n_train.",
    when=("split_sum",),
)

# torch's DataLoader for graph samples is built by the script or by a library's data module (a Lightning
# DataModule, a training framework's loader factory): certain only where the traceback shows the script's own loop
# reaching default_collate through torch's frames alone
_GRAPH_LOADER_IN_LIBRARY = replace(
    library_call(
        "a library's data module that built torch's DataLoader for graph samples without the graph collate_fn",
        "pass the graph library's collate_fn through that library's loader arguments, or upgrade it to a release "
        "that sets it.",
    ),
    when=("collate_graph",),
)

# torch/utils/data/_utils/collate.py raises the same TypeError for any type it has no rule for (collate: found
# <class ...>) and for a numpy array whose dtype is text or object (collate_numpy_array_fn: found <dtype>). None is
# a sample the dataset returned as None; an object array is ragged samples np.array() could not stack (or a
# mixed-type column): likely, those readings named
_SAMPLE_RETURNED_NONE = Alternative(
    "bad_training_data",
    "a sample the dataset returned as None (a file it could not read and skipped, or a __getitem__ path without "
    "a return)",
    "Find the index: [i for i in range(len(dataset)) if dataset[i] is None]; fix that sample (or the path in "
    "__getitem__ that returns nothing), drop unreadable files when the dataset is built, or skip them in a "
    "collate_fn: batch = [b for b in batch if b is not None] before default_collate(batch).",
    when=("collate_none",),
)
# sampler.py RandomSampler.__init__ checks num_samples, which is len(dataset) unless the script passed its own: 0 is
# an empty dataset far more often than an option, read by data_paths.py's data_path_missing (this match leaves it)
_RAGGED_SAMPLES = Alternative(
    "collate_unequal_sizes",
    "samples of different lengths that np.array() kept as an object array",
    "Pad or crop each sample to one length in the dataset (or pad the batch in a collate_fn with "
    "torch.nn.utils.rnn.pad_sequence), and give numeric columns a numeric dtype (df[cols].to_numpy(np.float32)).",
    when=("collate_object",),
)


def _collate_unseen_type(hit: Hit) -> bool:
    """Whether ``hit`` is default_collate's "found <class ...>" for a type other than a PIL image: the same
    TypeError names every type collate.py has no rule for, and the threads that post it establish other causes
    for the others (a Dataset object returned by __getitem__, a library's own sample class such as mmdet's
    DetDataSample that wants that library's collate, NumPy text arrays); only PIL's image, a dataset built without
    ToTensor(), was seen for this one, so the others stay likely."""
    text = hit.facts.get("collate_type", "")
    return text.startswith("default_collate") and "collate_image" not in hit.facts


DATALOADER_OPTIONS = Recogniser(
    kind="dataloader_options",
    title="a DataLoader, sampler or dataset built with options torch refuses",
    templates=(
        # dataloader.py DataLoader.__init__ / __setattr__
        "torch:dataloader-with-iterabledataset-expected-unspecified-sampler",
        "torch:dataloader-with-iterabledataset-expected-unspecified-shuffle",
        "torch:dataloader-with-iterabledataset-expected-unspecified-batch",
        "torch:batch-sampler-option-is-mutually-exclusive",
        "torch:batch-size-none-option-disables-auto",
        "torch:num-workers-option-should-be-non",
        "torch:timeout-option-should-be-non-negative",
        "torch:prefetch-factor-option-could-only-be",
        "torch:prefetch-factor-option-should-be-non",
        "torch:multiprocessing-context-can-only-be-used",
        "torch:multiprocessing-context-option-should-be-valid",
        "torch:multiprocessing-context-option-should-specify-valid",
        "torch:attribute-should-not-be-set-after",
        # sampler.py RandomSampler, WeightedRandomSampler, BatchSampler
        "torch:replacement-should-be-boolean-value-but",
        "torch:num-samples-should-be-positive-integer",
        "torch:weights-should-be-sequence-but-given",
        "torch:batch-size-should-be-positive-integer",
        "torch:drop-last-should-be-boolean-value",
        # distributed.py DistributedSampler
        "torch:invalid-rank-rank-should-be-in",
        # dataset.py TensorDataset, StackDataset, ConcatDataset, ChainDataset, random_split
        "torch:size-mismatch-between-tensors",
        "torch:size-mismatch-between-datasets",
        "torch:at-least-one-dataset-should-be",
        "torch:datasets-should-not-be-an-empty",
        "torch:concatdataset-does-not-support-iterabledataset",
        "torch:chaindataset-only-supports-iterabledataset",
        "torch:sum-of-input-lengths-does-not",
        "torch:fraction-at-index-is-not-between",
        # _utils/collate.py default_collate
        "torch:default-collate-batch-must-contain-tensors",
        "torch:batches-of-nested-tensors-are-not",
        "torch:batches-of-sparse-tensors-are-not",
    ),
    anchors=(
        "DataLoader with IterableDataset: expected unspecified",
        "batch_sampler option is mutually exclusive with batch_size",
        "batch_size=None option disables auto-batching",
        "num_workers option should be non-negative",
        "timeout option should be non-negative",
        "prefetch_factor option could only be specified in multiprocessing",
        "prefetch_factor option should be non-negative",
        "multiprocessing_context can only be used with multi-process loading",
        "multiprocessing_context option should",
        "attribute should not be set after",
        "replacement should be a boolean value",
        "num_samples should be a positive integer value",
        "weights should be a 1d sequence",
        "batch_size should be a positive integer value",
        "drop_last should be a boolean value",
        ", rank should be in the interval [0, ",
        "Size mismatch between tensors",
        "Size mismatch between datasets",
        "At least one dataset should be passed",
        "datasets should not be an empty iterable",
        "ConcatDataset does not support IterableDataset",
        "ChainDataset only supports IterableDataset",
        "Sum of input lengths does not equal the length of the input dataset",
        "Fraction at index ",
        "default_collate: batch must contain tensors",
        "are not currently supported by the default collate_fn",
    ),
    # the messages as the checks raise them, each after its exception's name where a bare phrase could be
    # another library's
    match=R(
        r"(?P<iterable_order>DataLoader with IterableDataset: expected unspecified (?:sampler|shuffle|batch_sampler) "
        r"option, but got [^\n]{1,120})|"
        r"(?P<batch_options>batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
        r"drop_last|batch_size=None option disables auto-batching and is mutually exclusive with drop_last|"
        r"(?:replacement|drop_last) should be a boolean value, but got [^\n]{1,60}|num_samples "
        r"should be a positive integer value, but got (?!num_samples=0\b)[^\n]{1,60}|batch_size should be a "
        r"positive integer value, but got [^\n]{1,60}|weights should be a 1d sequence but given "
        r"weights have shape [^\n]{1,60})|"
        r"(?P<worker_options>(?:num_workers|timeout|prefetch_factor) option should be non-negative[^\n]{0,60}|"
        r"prefetch_factor option could only be specified in multiprocessing[^\n]{0,120}|multiprocessing_context "
        r"(?:can only be used with multi-process loading|option should (?:be a valid context object|specify a "
        r"valid start method))[^\n]{0,160})|"
        r"(?P<late_attribute>\b(?:batch_size|batch_sampler|sampler|drop_last|dataset|persistent_workers) attribute "
        r"should not be set after \w{1,60} is initialized)|"
        r"(?P<sampler_rank>Invalid rank -?\d+, rank should be in the interval \[0, -?\d+\])|"
        r"(?P<dataset_args>(?:AssertionError|ValueError): (?:Size mismatch between (?:tensors|datasets)|At least "
        r"one dataset should be passed|datasets should not be an empty iterable|ConcatDataset does not support "
        r"IterableDataset|ChainDataset only supports IterableDataset|Sum of input lengths does not equal the "
        r"length of the input dataset!?|Fraction at index \d+ is not between 0 and 1))[ \t]*(?:\n|$)|"
        # a graph library's sample met torch's default_collate (torch_geometric/data/data.py, dgl/heterograph.py)
        r"(?P<collate_graph>default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        r"found <class '(?:torch_geometric\.data\.[\w.]{1,60}|dgl\.[\w.]{1,60})'>)|"
        r"(?P<collate_type>default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        r"found [^\n]{1,100}|Batches of (?:nested|sparse) tensors are not currently supported by the default "
        r"collate_fn)"
    ),
    facts=(
        R(r"(?P<split_sum>Sum of input lengths does not equal the length of the input dataset)"),
        R(
            r"dicts or lists; found (?:(?P<collate_none><class 'NoneType'>)|(?P<collate_object>object)$)",
            re.M,
        ),
        # the type real logs showed for this cause: a PIL image, a dataset built without ToTensor()
        R(r"dicts or lists; found (?P<collate_image><class 'PIL\.[\w.]{1,60}'>)"),
    ),
    # every message names its own cause ("timeout" in a check of the option's value is the option's name, not a
    # timeout that happened): certain whenever the match read which check refused the call, but for
    # random_split's sum, which a torch before 1.13 also prints for fractions, and the collate's None and object
    # samples
    confirm=lambda hits, ctx: (
        refused(_CLASSES)(hits, ctx)
        and not any(fact in h.facts for h in hits for fact in ("split_sum", "collate_none", "collate_object"))
        and not all(_collate_unseen_type(h) for h in hits)
        and (not any("collate_graph" in h.facts for h in hits) or called_from_own_code("torch")(hits, ctx))
    ),
    also=(_FRACTIONS, _GRAPH_LOADER_IN_LIBRARY, _SAMPLE_RETURNED_NONE, _RAGGED_SAMPLES),
    describe=describe_refusal(_CLASSES, "a DataLoader was built with options torch refuses", limit=200),
)

RECOGNISERS = (DATALOADER_OPTIONS,)
