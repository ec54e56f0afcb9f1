"""Lightning callbacks watching a metric that no ``self.log`` call logged under their monitor name.

``lightning/pytorch/callbacks/model_checkpoint.py`` (``ModelCheckpoint._save_topk_checkpoint``, 1.6 to 2.x) checks
its ``monitor`` against the metrics logged so far: "`ModelCheckpoint(monitor='{monitor}')` could not find the
monitored key in the returned metrics: [{names}]. HINT: Did you call `log('{monitor}', value)` in the
`LightningModule`?", raised as MisconfigurationException once the validation loop has run, a warning before it
(1.2 to 1.5 worded it "ModelCheckpoint(monitor='{monitor}') not found in the returned metrics: ..."). Its
``early_stopping.py`` (``EarlyStopping._validate_condition_metric``) says the same for its own monitor: "Early stopping
conditioned on metric `{monitor}` which is not available. Pass in or modify your `EarlyStopping` callback to use any
of the following: `{names}`" (a RuntimeError when strict), read too where a paste keeps only its first sentence (not Keras' warning, which opens with that sentence word for word and goes on "Available metrics are"). The message names the watched key and the ones that were
logged, so it says the cause itself: the key was never logged under that name when the callback looked (another
name or prefix, validation that had not run yet, a metric logged on some ranks only), certain where seen.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_MONITOR = R(
    r"ModelCheckpoint\(monitor=(?P<q>['\"])(?P<monitor>[^'\"\n]{1,200})(?P=q)\)`? (?:could not find the monitored key "
    r"in|not found in) the returned metrics: \[(?P<logged>[^\]\n]{0,3000})\]"
    r"|Early stopping conditioned on metric `(?P<es_monitor>[^`\n]{1,200})` which is not available(?!\. Available metrics are)(?:\. Pass in or "
    r"modify your `EarlyStopping` callback to use any of the following: (?P<es_logged>[^\n]{0,3000}))?"
)
_NAME = R(r"['\"`]([^'\"`]{1,200})['\"`]")


def logged_names(hits: list[Hit]) -> list[str]:
    """The metric names the message lists as logged."""
    return _NAME.findall(first(hits, "logged") or first(hits, "es_logged") or "")


def near_names(monitor: str, logged: list[str]) -> list[str]:
    """Logged names that are the monitored metric under another name: another prefix ('usdr' for 'val/usdr'), or
    Lightning's ``_epoch``/``_step`` suffix of a metric logged with on_step and on_epoch."""
    last = monitor.rsplit("/", 1)[-1]
    near = [
        name
        for name in logged
        if name != monitor
        and (name.rsplit("/", 1)[-1] == last or name in (f"{monitor}_epoch", f"{monitor}_step"))
    ]
    return sorted(near, key=lambda name: name != f"{monitor}_epoch")


def _monitored(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    early_stopping = bool(first(hits, "es_monitor"))
    monitor = first(hits, "monitor") or first(hits, "es_monitor")
    callback = "EarlyStopping" if early_stopping else "ModelCheckpoint"
    logged = logged_names(hits)
    near = near_names(monitor, logged)
    summary = (
        f"{callback} watched the metric '{monitor}', which nothing had logged under that name when it looked"
    )
    if near:
        summary += f" ('{near[0]}' was logged: the same metric under another name)"
    elif logged and not any(name.startswith(("val", "valid")) for name in logged):
        summary += " (no validation metric was logged at all: validation had not run or logged nothing)"
    fix = (
        f"Log the metric under exactly the name the callback watches, self.log('{monitor}', value) (in "
        "validation_step or on_validation_epoch_end for a validation metric, on_epoch=True), or set "
        f"{callback}(monitor=...) to one of the names the message lists. A metric logged only by validation must "
        "have been logged when the callback looks: make validation run first (val_check_interval or "
        "check_val_every_n_epoch within max_epochs, limit_val_batches > 0, a val_dataloader), and a ModelCheckpoint "
        "with every_n_train_steps or save_on_train_epoch_end=True checks before validation. Under DDP log it on "
        "every rank (sync_dist=True), not only on rank zero."
    )
    return summary + on_ranks(hits), fix


CHECKPOINT_MONITOR_MISSING = Recogniser(
    kind="checkpoint_monitor_missing",
    title="a callback watching a metric never logged under its name",
    templates=(
        "third_party:lightning-model-checkpoint-monitor-not-found",
        "third_party:lightning-model-checkpoint-monitor-not-found-old",
        "third_party:lightning-early-stopping-monitor-not-available",
    ),
    anchors=(
        "could not find the monitored key in the returned metrics",
        "not found in the returned metrics",
        "which is not available. Pass in or modify your `EarlyStopping` callback",
        # its first sentence, read where a paste cuts the message after it (the list of logged names left out)
        "Early stopping conditioned on metric",
    ),
    match=_MONITOR,
    describe=_monitored,
)

RECOGNISERS = (CHECKPOINT_MONITOR_MISSING,)
