"""A Hugging Face dataset whose downloaded files or built splits differ from what its card or script recorded.

``datasets`` checks what ``load_dataset`` downloaded and built against the ``dataset_info`` the dataset's card
(README.md YAML) or loading script records (``datasets/utils/info_utils.py``, ``verify_checksums`` and
``verify_splits``, called from ``DatasetBuilder.download_and_prepare`` in ``builder.py``; every release from 1.x):

- "Checksums didn't match for dataset source files:" (``NonMatchingChecksumError``; from 2.10 "Checksums didn't
  match for <url>: ... Set `verification_mode='no_checks'` to skip checksums verification and ignore this error"):
  a downloaded file is not the file recorded;
- ``NonMatchingSplitsSizesError`` (its message is the list of ``{'expected': SplitInfo(...), 'recorded':
  SplitInfo(...)}``): a split built with another number of examples or bytes than recorded;
- ``ExpectedMoreSplits`` / ``ExpectedMoreDownloadedFiles`` (``...Error`` from 2.21, ``datasets/exceptions.py``):
  splits or files recorded that the build did not produce.

The causes: the files on the Hub or at the source URL changed after the info was recorded (a dataset updated
without its card), a download cut short or replaced by an error page and kept in the cache, or a cache built by
another release or revision of the dataset. Each message says the mismatch and stops the build; the fix is the
same for all (rebuild from fresh downloads, or skip the checks when the new files are the ones wanted): certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_WHAT = {
    "checksums": "a downloaded file's checksum is not the one recorded",
    "split_sizes": "a split was built with another number of examples than recorded",
    "more_splits": "splits recorded for the dataset were not produced",
    "more_files": "files recorded for the dataset were not downloaded",
}


def _verification(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    which = next((k for k in _WHAT if first(hits, k)), "split_sizes")
    return (
        f"datasets refused the dataset it built: {_WHAT[which]} in the dataset's card or loading script"
        + on_ranks(hits),
        "The dataset's files changed after its info was recorded (an updated dataset), or the cache holds a "
        "download cut short or from another revision. Rebuild from fresh downloads: load_dataset(..., "
        "download_mode='force_redownload') (or delete the dataset's folder under ~/.cache/huggingface/datasets "
        "and hub/datasets--<name>). When the new files are the ones you want, skip the check: "
        "load_dataset(..., verification_mode='no_checks') (datasets 2.9 on; ignore_verifications=True before), "
        "or pin the revision= the info was recorded for. Build it once on one process before a multi-GPU run "
        "so the ranks do not download into the same cache at once.",
    )


DATASET_VERIFICATION_FAILED = Recogniser(
    kind="dataset_verification_failed",
    templates=(
        "datasets:checksums-didn-match",
        "datasets:checksums-didn-match-set-verification-mode",
        "third_party:datasets-non-matching-splits-sizes",
        "third_party:datasets-expected-more-splits",
        "third_party:datasets-expected-more-downloaded-files",
    ),
    title="a Hugging Face dataset that does not match its recorded info",
    anchors=(
        "Checksums didn't match",
        # the exception's line (its class and a colon), not the deprecation notes of 2.20 naming the classes
        "NonMatchingSplitsSizesError: ",
        "ExpectedMoreSplits: ",
        "ExpectedMoreSplitsError: ",
        "ExpectedMoreDownloadedFiles: ",
        "ExpectedMoreDownloadedFilesError: ",
    ),
    # the exception's line, not a mention of the class in a traceback's source line or an import
    match=R(
        r"(?P<checksums>Checksums didn't match)|"
        r"(?P<split_sizes>NonMatchingSplitsSizesError: \[?\{)|"
        r"(?P<more_splits>ExpectedMoreSplits(?:Error)?: )|"
        r"(?P<more_files>ExpectedMoreDownloadedFiles(?:Error)?: )"
    ),
    describe=_verification,
)

RECOGNISERS = (DATASET_VERIFICATION_FAILED,)
