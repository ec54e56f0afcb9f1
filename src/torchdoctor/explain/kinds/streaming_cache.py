"""MosaicML StreamingDataset refusing a local cache directory another dataset, or a killed run, already holds.

``streaming/base/shared/prefix.py`` registers each StreamingDataset's ``local`` directories in shared memory so the
ranks of a node share one download, and refuses a directory registered twice: "Reused local directory: [...].
Provide a different one." (two streams of one dataset; streaming 0.4 on) and "Reused local directory: [...] vs
[...]. Provide a different one. If using a unique local directory, try deleting the local directory and call
`streaming.base.util.clean_stale_shared_memory()` ..." (another StreamingDataset of the job, train and eval given the
same ``local``, or the shared memory a killed run left behind; 0.5.1 on). ``streaming/base/stream.py`` (0.5.2 on),
given no ``local``, makes a temporary folder named after the remote and refuses one that exists: "Could not create
a temporary local directory {} because it already exists." Each says its cause and fix: certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _reused(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    local = first(hits, "streaming_local", "") or first(hits, "streaming_temp", "")
    named = f" ({local[:200]})" if local else ""
    if first(hits, "streaming_temp"):
        return (
            f"StreamingDataset found its temporary local folder already there{named}: another dataset with the "
            "same remote, or an earlier run, made it" + on_ranks(hits),
            "Pass each StreamingDataset its own local= folder (a different one for train and eval, and per job on "
            "a shared machine), or delete the folder the message names before starting.",
        )
    return (
        f"StreamingDataset refused a local cache folder another StreamingDataset already registered{named}: the "
        "same local= given twice, or shared memory a killed run left behind" + on_ranks(hits),
        "Give every StreamingDataset, and every Stream of one, its own local= folder (train and eval must differ). "
        "If they already differ, a previous run that was killed left its registration in shared memory: call "
        "streaming.base.util.clean_stale_shared_memory() once at the start of the script, before any "
        "StreamingDataset is made (or delete the local folder and the stale /dev/shm entries), then start again.",
    )


STREAMING_LOCAL_REUSED = Recogniser(
    kind="streaming_local_reused",
    templates=(
        "mosaicml_streaming:reused-local-directory-provide-different-one",
        "mosaicml_streaming:reused-local-directory-vs-provide-different",
        "mosaicml_streaming:could-not-create-temporary-local-directory",
    ),
    title="a StreamingDataset local folder already in use",
    anchors=("Reused local directory: ", "Could not create a temporary local directory "),
    match=R(
        r"Reused local directory: (?P<streaming_local>[^\n]{1,300}?)\. Provide a different one|"
        r"Could not create a temporary local directory (?P<streaming_temp>\S{1,300})"
    ),
    describe=_reused,
)

RECOGNISERS = (STREAMING_LOCAL_REUSED,)
