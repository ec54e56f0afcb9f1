"""The DataLoader's datasets and samplers refusing what they were given, or warning of data loaded twice or lost.

``torch/utils/data/dataloader.py`` (``len()`` of an IterableDataset against what its workers yield),
``distributed.py`` (DistributedSampler), ``dataset.py`` (``random_split``, ``ConcatDataset``),
``graph_settings.py`` (DataPipes' sharding) and ``torch/distributed/elastic/utils/data/
elastic_distributed_sampler.py``, torch 1.x-2.13. The DataLoader's own options are kinds/dataloader_options.py's.
Each message names its own mistake: certain once a real log shows it; the DistributedSampler's assertion has more
than one cause and stays likely.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "data loading"

_ITERABLE_REPLICAS = (
    "Each DataLoader worker runs its own copy of the IterableDataset, so every worker yields the whole dataset "
    "(num_workers copies of each sample) unless __iter__ splits it: inside __iter__, info = "
    "torch.utils.data.get_worker_info(), and yield only the items i with i % info.num_workers == info.id (and, "
    "under DDP, split by rank first, or use split_dataset_by_node for Hugging Face datasets); make __len__ agree."
)

_SAMPLER_SIZE = (
    "DistributedSampler computed its sizes from len(dataset) when it was built, and the dataset's length changed "
    "since (samples added or filtered after the sampler was made, a dataset whose __len__ varies), or __len__ "
    "disagrees with what indexing gives: build the sampler after the dataset is final (again when it changes), "
    "and make __len__ return a fixed count."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("(when accessing len(dataloader)), but ", _ITERABLE_REPLICAS),
    (
        "this could be caused by not properly configuring the IterableDataset replica at each worker.",
        _ITERABLE_REPLICAS,
    ),
    (") does not match total_size (", _SAMPLER_SIZE),
    (") does not match num_samples (", _SAMPLER_SIZE),
    (
        "Requires distributed package to be available",
        "DistributedSampler asks torch.distributed for the world size and rank when they are not given, and this "
        "torch has no distributed package: pass num_replicas= and rank= explicitly (or install a torch build with "
        "distributed support).",
    ),
    (
        "This might result in an empty dataset.",
        "random_split was given fractions that round one split down to 0 samples for this dataset's size: give "
        "lengths as counts, or fractions that leave each split at least one sample.",
    ),
    (
        "absolute value of index should not exceed dataset length",
        "A negative index reached ConcatDataset beyond its length (-i with i > len(dataset)): the sampler or the "
        "code indexing it computes indices from another dataset's length; index within -len..len-1.",
    ),
    (
        "should be less than dataset size",
        "ElasticDistributedSampler(dataset, start_index=...) resumes from an index past the dataset's end: pass the "
        "number of samples already consumed in this epoch (less than len(dataset)), and reset it to 0 at each new "
        "epoch.",
    ),
    (
        "Sharding twice on a single pipeline is likely unintended and will cause data loss.",
        "The DataPipe graph is sharded twice (a sharding_filter in it and another one, or apply_sharding called "
        "after the DataLoader already shards it): keep one sharding_filter, placed before the expensive steps.",
    ),
    (
        "like input/output, but both types are given.",
        "StackDataset takes its datasets either positionally, StackDataset(images, labels) (samples come out as "
        "tuples), or by keyword, StackDataset(image=images, label=labels) (samples come out as dicts), not both.",
    ),
)

SAMPLER_DATASETS = refusal_recogniser(
    kind="sampler_datasets",
    title="a dataset or sampler the DataLoader reads refused its arguments or duplicates data",
    refusals=REFUSALS,
    templates=(
        "torch:length-of-iterabledataset-was-reported-to",
        "torch:for-multiprocessing-data-loading-this-could",
        "torch:number-of-indices-does-not-match",
        "torch:number-of-subsampled-indices-does-not",
        "torch:requires-distributed-package-to-be-available",
        "torch:length-of-split-at-index-is",
        "torch:absolute-value-of-index-should-not",
        "torch:start-index-should-be-less-than",
        "torch:sharding-twice-on-single-pipeline-is",
        "torch:supported-either-tuple-via-args-or",
    ),
    several=(") does not match total_size (", ") does not match num_samples ("),
)

RECOGNISERS = (SAMPLER_DATASETS,)
