"""Data-loading libraries whose own release fails a run, read by versions.py as a release's bug.

webdataset 0.1 (2020) ran its ``MultiDataset`` workers through ``webdataset/multi.py``'s ``_parallel_job``, which
set ``dataset.shard_selection`` on the dataset it was handed and, once done, read ``dataset.sample_urls``: names
only webdataset's own ``Dataset`` carried. Handed a ``ResizedDataset`` (the wrapper 0.1 offered to give an
IterableDataset a length), every worker died on "AttributeError: 'ResizedDataset' object has no attribute
'sample_urls'" (webdataset/webdataset#9, fixed by its maintainer in September 2020; 0.2 replaced both classes
with ``WebLoader`` and ``with_epoch``). Read as the class it is: an AttributeError raised in a frame of
webdataset's own files about one of webdataset's own classes is webdataset reading itself wrongly, a release's
bug. A webdataset class missing a method the script calls (``WebLoader.ddp_equalize``, which 0.2 dropped) is
raised in the script's own frame instead, and is the script written for another release (dependency_version).

torch's DataLoader shared one random seed across ranks for DataPipes from pytorch/pytorch#78765 (June 2022,
``torch/utils/data/dataloader.py`` ``_get_shared_seed``): rank 0 drew a seed into a CPU tensor and
``dist.broadcast`` sent it. With an NCCL default group the broadcast refused the CPU tensor, "Tensors must be
CUDA and dense" (``ProcessGroupNCCL.cpp``), in a training run that never handed NCCL a tensor itself
(pytorch/pytorch#79828, filed by the DataLoader's maintainer); #79829 (#79890 on the 1.12 branch, before 1.12.0)
shares the seed through the distributed store instead. Read where the refusal's line names DataPipes or the
DataLoader's shared seed; the same refusal otherwise is the script's or a library's CPU tensor (cpu_tensor_nccl).

PyTorch Lightning re-creates a training DataLoader under DDP to put its DistributedSampler in: 1.5's
``trainer/data_loading.py`` (``_update_dataloader``: ``dl_cls(**dl_kwargs)``, the keywords read back from the
loader's attributes of the same names as its ``__init__``'s parameters, plus ``dataset``, ``sampler`` and the
collate function, which ``_add_sampler_metadata_collate`` wraps in ``utilities/auto_restart.py``'s
``_capture_metadata_collate``), 1.6 on ``utilities/data.py`` (``_update_dataloader``, 2.x's
``_reinstantiate_wrapped_cls``). PyG's loaders of 2.0.0-2.0.2 did not survive being built again from their own
attributes: ``torch_geometric/loader/neighbor_loader.py`` (and ``NeighborSampler``) got ``dataset`` twice, "__init__()
got multiple values for argument 'dataset'" (pyg-team/pytorch_geometric#3234, fixed in master by the maintainer,
c52028d: the loader drops the ``dataset`` and ``collate_fn`` Lightning passes back), and a NeighborLoader over a
HeteroData converted its ``num_neighbors`` edge types to strings a second time, so ``hetero_sample`` looked up keys
the sampler's C++ map lacks, "IndexError: _Map_base::at" (#3601, fixed by #3602: ``edge_type_to_str`` leaves a
string as it is); PyG 2.0.3 (December 2021) has both. Read as the class: an exception of a bug's type raised in
PyG's loader code (``torch_geometric/loader/``, ``torch_geometric/data/sampler.py``) in a traceback that passes
through Lightning (versions.py's ``library_bug`` adds this to its reading); PyG's model code raising under
Lightning's training loop (a conv layer, a bad ``edge_index``) is not read so.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Hit, Pattern, first, on_ranks

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# a frame in one of webdataset's own files (an installed package's path, or the filer's ".../webdataset/")
WEBDATASET_FRAME = "/webdataset/"
# the classes webdataset defines (0.1's and 0.2's), whose attributes only webdataset's own code reads there
WEBDATASET_CLASSES = (
    "Dataset",
    "ResizedDataset",
    "ChoppedDataset",
    "MultiDataset",
    "MultiDatasetIterator",
    "WebDataset",
    "WebLoader",
    "ShardList",
    "SimpleShardList",
    "ResampledShards",
    "Processor",
    "DataPipeline",
    "FluidWrapper",
    "FluidInterface",
    "Composable",
    "Shorthands",
)
NCCL_CPU_REFUSAL = "Tensors must be CUDA and dense"
# words on the refusal's own line that say the DataLoader's seed sharing for DataPipes made the broadcast
DATAPIPE_WORDS = r"\w*DataPipe\b|_get_shared_seed|_share_dist_seed|shared seed"
ANCHORS = (WEBDATASET_FRAME, NCCL_CPU_REFUSAL)
TEMPLATES = (
    "third_party:webdataset-multi-parallel-job-sample-urls",
    "third_party:torch-dataloader-shared-seed-nccl-broadcast",
)
_CLASSES = "|".join(WEBDATASET_CLASSES)
REFUSED = R(
    # the frame of webdataset's own file, its code line, then the AttributeError about its own class
    r'File "[^"\n]{0,300}/webdataset/(?P<wds_file>\w+)\.py", line \d+, in (?P<wds_func>\w+)\n[^\n]{0,300}\n'
    rf"[ \t]*AttributeError: '(?P<wds_class>{_CLASSES})' object has no attribute '(?P<wds_attr>\w+)'|"
    # NCCL's refusal of a CPU tensor on a line that names the DataLoader's seed sharing for DataPipes
    rf"(?:{DATAPIPE_WORDS})[^\n]{{0,400}}?(?P<datapipe_seed>{NCCL_CPU_REFUSAL})|"
    rf"(?P<datapipe_seed_before>{NCCL_CPU_REFUSAL})[^\n]{{0,400}}?(?:{DATAPIPE_WORDS})"
)
FACTS = ("wds_class", "datapipe_seed", "datapipe_seed_before")


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for the release bug among ``hits`` (the named groups of `REFUSED`)."""
    name = first(hits, "wds_class")
    if name:
        attribute, where = first(hits, "wds_attr"), f"webdataset/{first(hits, 'wds_file')}.py"
        return (
            f"webdataset's own code ({where}, {first(hits, 'wds_func')}) read '{attribute}' from its own "
            f"{name}, which does not have it: a bug of the webdataset release installed, not of the script"
            + on_ranks(hits),
            "Upgrade webdataset (pip install -U webdataset), and use the classes of the release you install as "
            "its own docs show them. webdataset 0.1's MultiDataset read sample_urls from the dataset it was handed, "
            "so a ResizedDataset in between failed (fixed in September 2020, webdataset#9); 0.2 replaced both with "
            "WebLoader and with_epoch(n). On the old release, hand MultiDataset the Dataset itself, or use torch's "
            "DataLoader with num_workers.",
        )
    return (
        "NCCL refused a CPU tensor that torch's own DataLoader broadcast: the DataPipes' shared random seed, which "
        "the nightly builds of June 2022 sent from rank 0 with dist.broadcast of a CPU tensor (pytorch#78765)"
        + on_ranks(hits),
        "A bug of that torch build, not of the script: upgrade torch to 1.12.0 or later (pytorch#79829 shares the "
        "seed through the distributed store). On that build, keep DataPipes out of a DataLoader under an NCCL "
        "group, or initialise the process group with a gloo backend for CPU tensors "
        "(init_process_group(backend='cpu:gloo,cuda:nccl') on a torch that takes it).",
    )


# (the package raising, a part of the raising file's path, the package whose frames the traceback also passes
# through, what to do): a library's loader that another library re-creates or wraps, read by versions.library_bug
LOADERS_REBUILT: tuple[tuple[str, str, str, str], ...] = tuple(
    (
        "torch_geometric",
        where,
        lightning,
        "PyTorch Lightning re-creates a training DataLoader under DDP to give it a DistributedSampler (from the "
        "loader's own attributes), and wraps its collate function: PyG's loaders of 2.0.0-2.0.2 did not survive "
        "being built again (NeighborSampler and NeighborLoader got 'dataset' twice, pyg#3234; a NeighborLoader "
        "over a HeteroData converted num_neighbors' edge types twice and sampled keys that do not exist, "
        "pyg#3602). Upgrade torch_geometric to 2.0.3 or later (pip install -U torch_geometric). On the old "
        "release, keep Lightning from re-creating the loader, Trainer(replace_sampler_ddp=False) "
        "(use_distributed_sampler=False in Lightning 2.x), and give it a DistributedSampler yourself: "
        "NeighborLoader(..., input_nodes=..., sampler=DistributedSampler(...)).",
    )
    for where in ("/torch_geometric/loader/", "/torch_geometric/data/sampler.py")
    for lightning in ("pytorch_lightning", "lightning")
)
