"""A DataLoader whose workers did not deliver a batch within the ``timeout=`` the script gave it.

torch/utils/data/dataloader.py (``_MultiProcessingDataLoaderIter._get_data``) raises "DataLoader timed out after N
seconds" only with ``timeout > 0``, when no worker put a batch on the queue in that time: the message says what
happened, not why a worker was that slow (a dataset reading from a slow or hung filesystem, a worker deadlocked in
a library's threads, a timeout shorter than one batch takes). The finding is certain; the fix says how to tell
which.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, has_fact, on_ranks

FAMILY = "data loading"


def _timed_out(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    seconds = first(hits, "timeout_seconds", "")
    return (
        "no DataLoader worker delivered a batch within the DataLoader's timeout"
        + (f" ({seconds} s)" if seconds else "")
        + on_ranks(hits),
        "The workers are slower than timeout= allows, or stuck. Time one batch without workers (num_workers=0, "
        "then next(iter(loader))): if it takes longer than the timeout, raise timeout= (or drop it: 0 waits "
        "forever) and move the data off a slow network filesystem; if it never returns, the dataset blocks "
        "(a lock, a download, OpenCV's threads in forked workers: cv2.setNumThreads(0) in worker_init_fn). A "
        "py-spy dump of a worker's PID shows where it waits.",
    )


DATALOADER_TIMEOUT = Recogniser(
    kind="dataloader_timeout",
    title="DataLoader workers slower than its timeout",
    anchors=("DataLoader timed out after ",),
    templates=("torch:dataloader-timed-out-after-seconds",),  # torch/utils/data/dataloader.py _get_data
    facts=(re.compile(r"DataLoader timed out after (?P<timeout_seconds>\d+(?:\.\d+)?) seconds"),),
    # "timed out" alone is any timeout's word: torch's whole message, with its seconds, is what makes it this one
    confirm=has_fact("timeout_seconds"),
    describe=_timed_out,
)

RECOGNISERS = (DATALOADER_TIMEOUT,)
