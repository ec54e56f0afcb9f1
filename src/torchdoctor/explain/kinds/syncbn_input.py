"""SyncBatchNorm's own input check before torch 1.4, refusing the (N, C) input of a converted BatchNorm1d.

``SyncBatchNorm._check_input_dim`` (``torch/nn/modules/batchnorm.py``) raised "expected at least 3D input (got
{}D input)" for any input of two dimensions or fewer from torch 1.1, where SyncBatchNorm came in, to 1.3.1.
``SyncBatchNorm.convert_sync_batchnorm`` turns every BatchNorm layer into SyncBatchNorm, BatchNorm1d included,
whose usual input is (N, C) (a projection head, an MLP after pooling): the converted model then fails at its first
forward (pytorch/pytorch#20204). pytorch/pytorch#29626 relaxed the check to fewer than two dimensions ("expected at
least 2D input", torch 1.4 and later), so the fix is a newer torch, not a reshape. The same words with "2D" come
from one other place in torch: ``torch/distributed/pipeline/sync/batchnorm.py``'s DeferredBatchNorm (torch 1.8 to
2.3, Pipe's ``deferred_batch_norm``), which keeps the 3-D check. A line that names SyncBatchNorm is certain; the
message alone stays likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _syncbn_2d(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "SyncBatchNorm refused a 2-D (N, C) input: torch before 1.4 checked for at least 3 dimensions, so the "
        "BatchNorm1d layers convert_sync_batchnorm converts fail on their usual input" + on_ranks(hits),
        "Use torch 1.4 or later, whose SyncBatchNorm takes (N, C) input like BatchNorm1d (pytorch/pytorch#29626): "
        "pip install -U torch (python -c 'import torch; print(torch.__version__)' shows the one installed). On an "
        "older torch, keep those layers out of the conversion (convert only the BatchNorm2d / 3d modules) or give "
        "them (N, C, 1): x.unsqueeze(-1), then squeeze(-1) after the layer.",
    )


SYNCBN_2D_INPUT = Recogniser(
    kind="dependency_version",
    title="SyncBatchNorm before torch 1.4 refusing 2-D input",
    templates=("aten:syncbn-expected-at-least-3d-input",),
    anchors=("expected at least 3D input (got 2D input)",),
    match=R(r"expected at least 3D input \(got 2D input\)"),
    facts=(R(r"(?P<syncbn>SyncBatchNorm|convert_sync_batchnorm|sync_batchnorm)"),),
    # the generic shape reading ("D input (got ") says reshape; for this message the release is the cause
    absorbs=("input_shape_mismatch",),
    confirm=lambda hits, ctx: any("syncbn" in h.facts for h in hits),
    also=(
        Alternative(
            "input_shape_mismatch",
            "Pipe's DeferredBatchNorm (torch.distributed.pipeline.sync, torch 1.8 to 2.3), which keeps the "
            "3-D check, or a copy of the old check in another package",
            "Give the layer (N, C, L) input (x.unsqueeze(-1)) or leave it out of deferred_batch_norm; the "
            "traceback's last frame names the file that refused it.",
            unless=("syncbn",),
        ),
    ),
    describe=_syncbn_2d,
)

RECOGNISERS = (SYNCBN_2D_INPUT,)
