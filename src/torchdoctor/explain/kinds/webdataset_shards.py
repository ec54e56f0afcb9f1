"""webdataset shards not split to fit the nodes and DataLoader workers that read them, or at URLs it cannot open.

- ``webdataset/shardlists.py`` ``single_node_only`` (0.2.x to 0.3; the default ``nodesplitter`` of
  ``WebDataset``/``ShardList`` in the releases that print it) raises ValueError "you need to add an explicit
  nodesplitter to your input pipeline for multi-node training" when torch.distributed reports a world size above 1:
  every rank would read every shard. Certain: the message is printed for that alone. 0.2.5's wording of the same
  refusal, "input pipeline needs to be reconfigured for multinode training", is read the same way.
- ``webdataset/compat.py`` (``WebDataset.__iter__`` with ``empty_check=True``, 0.2.100 on) raises ValueError "No
  samples found in dataset; perhaps you have fewer shards than workers." when an iteration yields nothing: the
  shards split over ranks x workers left this worker none, or every sample was dropped on the way (a handler such
  as ``warn_and_continue`` skipping samples that fail to decode). Likely, the second reading named. The stage a
  pipeline adds to say the same, ``wds.non_empty`` (``shardlists.py``, 0.1.103 on: "pipeline stage received no data
  at all and this was declared as an error"), placed after the node and worker splitters, is read alike.
- ``webdataset/gopen.py`` ``gopen_error`` (0.1.103 to HEAD, the ``__default__`` of ``gopen_schemes``) raises
  ValueError "{url}: no gopen handler defined" for a URL whose scheme has no handler: ``pipe:``, ``http(s)``,
  ``gs``, ``ais``, ``hf``, ``sftp``/``ftps``/``scp`` and ``htgs`` have one, a plain path or ``file:`` is opened
  directly; ``s3://``, ``az://`` and the others have none. Certain: the message is printed for that alone. A
  Windows path is one too: urlparse reads its drive letter as the scheme ("C:\\data\\x.tar": "c"), named so.
- ``webdataset/tariterators.py`` ``group_by_keys`` (0.1.103 to HEAD) makes a sample of consecutive tar members
  with one key, the base name up to its first dot, and raises ValueError "{fname}: duplicate file name in tar
  file {suffix} {keys}" when a member's extension is already in the sample: names with more dots than the
  extension (img.0001.jpg and img.0002.jpg both have the key img), one sample's files not adjacent in the tar, or
  the same key ending one shard and starting the next (webdataset#157, #286). The shards' layout, not the code:
  ``datasets.py``'s ``bad_training_data`` reads it with this module's anchor and words. Certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


DUPLICATE = ": duplicate file name in tar file "
DUPLICATE_TEMPLATE = "webdataset:duplicate-file-name-in-tar-file"
DUPLICATE_FACT = R(
    r"(?P<wds_duplicate>[^\s:'\"]{1,200}): duplicate file name in tar file (?P<wds_suffix>[^\s{}]{1,40})"
)


def explain_duplicate(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for webdataset's "duplicate file name in tar file": one key holding two files of one
    extension."""
    name, suffix = first(hits, "wds_duplicate", ""), first(hits, "wds_suffix", "")
    said = f" ({name}: a second .{suffix} for its key)" if name and suffix else ""
    return (
        f"a webdataset shard gives one sample two files of the same extension{said}: webdataset groups "
        "consecutive tar members by their key, the base name up to its first dot" + on_ranks(hits),
        "List the shard (tar tf shard.tar | head -20) and make every sample's key unique and its files adjacent: "
        "rename files whose base name holds a dot before the extension (img.0001.jpg and img.0002.jpg share the "
        "key img: img_0001.jpg), write the tar sorted so one sample's files follow each other (tar --sort=name "
        "-cf ...), and give samples keys unique across shards (the same key at the end of one shard and the start "
        "of the next is read as one sample). wds.ShardWriter / wds.TarWriter with {'__key__': ..., 'jpg': ..., "
        "'json': ...} writes the layout webdataset reads.",
    )


def _split(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "wds_nodesplitter"):
        return (
            "webdataset refused to run on several ranks without a node splitter: every rank would read every shard"
            + on_ranks(hits),
            "Split the shards over the ranks: wds.WebDataset(urls, nodesplitter=wds.split_by_node, "
            "shardshuffle=...) (workersplitter=wds.split_by_worker is the default for DataLoader workers), or in a "
            "wds.DataPipeline add wds.split_by_node and wds.split_by_worker after wds.SimpleShardList(urls). For "
            "training that samples shards with replacement, wds.WebDataset(urls, resampled=True) with "
            ".with_epoch(n) needs no splitter. Give each rank at least num_workers shards.",
        )
    return (
        "a webdataset iteration yielded no sample: the shards split over the ranks and DataLoader workers left "
        "this one none, or every sample was dropped" + on_ranks(hits),
        "Count the shards against world_size x num_workers: each worker needs at least one (make more, smaller "
        "shards; lower num_workers; or use resampled=True with .with_epoch(n), which draws shards for every "
        "worker). Check the URL pattern expands to the shards you mean (braceexpand the string and list them). "
        "If a handler skips samples (handler=wds.warn_and_continue), look for the warnings it printed: samples "
        "that fail to decode are dropped. empty_check=False only hides the empty iteration.",
    )


WEBDATASET_SHARD_SPLIT = Recogniser(
    kind="webdataset_shard_split",
    templates=(
        "webdataset:you-need-to-add-an-explicit",
        "webdataset:input-pipeline-needs-to-be-reconfigured",
        "webdataset:no-samples-found-in-dataset-perhaps",
        "webdataset:pipeline-stage-received-no-data-at",
    ),
    title="webdataset shards not split to fit the ranks and workers",
    anchors=(
        "you need to add an explicit nodesplitter to your input pipeline",
        "input pipeline needs to be reconfigured for multinode training",
        "No samples found in dataset; perhaps you have fewer shards than workers",
        "pipeline stage received no data at all and this was declared as an error",
    ),
    match=R(
        r"(?P<wds_nodesplitter>you need to add an explicit nodesplitter|input pipeline needs to be reconfigured for "
        r"multinode training)|"
        r"(?P<wds_no_samples>No samples found in dataset; perhaps you have fewer shards than workers|"
        r"pipeline stage received no data at all and this was declared as an error)"
    ),
    # the node splitter's refusal says its cause; an empty iteration has two
    confirm=lambda hits, ctx: any("wds_nodesplitter" in h.facts for h in hits),
    also=(
        Alternative(
            "bad_training_data",
            "every sample dropped on the way: a handler (warn_and_continue) skipping samples that fail to decode",
            "Run the pipeline once with handler=wds.reraise_exception to see the first sample that fails, and fix "
            "or drop the shards holding such samples.",
            when=("wds_no_samples",),
        ),
    ),
    describe=_split,
)


WINDOWS_DRIVE = R(r"[A-Za-z]:[\\/]")


def _no_handler(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    url = first(hits, "wds_url", "").strip()
    scheme = first(hits, "wds_scheme", "")
    said = f" ({url[:200]})" if url else ""
    if WINDOWS_DRIVE.match(url):
        # urlparse reads a drive letter as a scheme ("C:\\data\\x.tar": scheme "c"), and gopen has no handler for it
        return (
            f"webdataset read the Windows path{said} as a URL whose scheme is its drive letter "
            f"({url[0].lower()}:), which its gopen has no handler for" + on_ranks(hits),
            "webdataset parses a shard's name as a URL, and a drive letter looks like a scheme to it: give the "
            f"shards as file: URLs (file:{url[:2]}/{url[3:].replace(chr(92), '/')[:120]}) or as paths relative to "
            "the working directory on that drive (shards/train-{000000..000099}.tar).",
        )
    summary = (
        f"webdataset has no way to open the shard URL{said}: its gopen has no handler for "
        + (f"{scheme}://" if scheme else "that scheme")
        + on_ranks(hits)
    )
    example = url if scheme and url.startswith(scheme + "://") else "s3://bucket/shards/train-000000.tar"
    fix = (
        "webdataset opens shards through its own gopen, which knows pipe:, http(s)://, gs://, ais://, hf:// and a "
        "local path, not "
        + (f"{scheme}://" if scheme else "this scheme")
        + ". Hand it a command that writes the shard to stdout: "
        f"'pipe:aws s3 cp {example} -' (or 'pipe:s5cmd cat ...', 'pipe:curl -s -L <https URL>' for a presigned "
        "URL); or register a reader for the scheme, wds.gopen_schemes['"
        + (scheme or "s3")
        + "'] = a function (url, mode, bufsize, **kw) returning a stream (for example one opening the URL with "
        "fsspec/s3fs); or read the tars through fsspec (torchdata's FSSpecFileOpener(...).load_from_tar()). A "
        "mounted bucket (a FUSE mount) can be given as a plain path."
    )
    return summary, fix


WEBDATASET_URL_SCHEME = Recogniser(
    kind="url_scheme_unsupported",
    templates=("webdataset:no-gopen-handler-defined",),
    title="a shard URL webdataset cannot open",
    anchors=(": no gopen handler defined",),
    match=R(
        r"(?P<wds_url>(?:(?P<wds_scheme>[a-z][a-z0-9+.-]{0,20})://)?[^\s'\"(]{0,300}): no gopen handler defined"
    ),
    describe=_no_handler,
)

RECOGNISERS = (WEBDATASET_SHARD_SPLIT, WEBDATASET_URL_SCHEME)
