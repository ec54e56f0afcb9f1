"""An experiment tracker without an API key or a route to its server, called before init, or a value changed.

wandb's login (``wandb/sdk/wandb_login.py``, ``_WandbLogin.prompt_api_key``) raises ``UsageError("api_key not
configured (no-tty). call " + directive)``, the directive ``wandb.login(key=[your_api_key])`` (``wandb login
[your_api_key]`` from the command line); releases before 0.10 said "api_key not configured (no-tty).  Run wandb
login". It is raised when the run initialises wandb (the script's own ``wandb.init``, the Trainer's
``report_to="wandb"``, Lightning's WandbLogger, YOLOv5 with wandb installed) in online mode, with no key in
WANDB_API_KEY or ~/.netrc and no terminal to prompt on: a batch job, a container, a launcher's worker, a
notebook's subprocess. The message says so (certain).

wandb's retrying HTTP calls (``wandb/sdk/lib/retry.py``, ``Retry.__call__``) print ``wandb: Network error ({the
exception's class}), entering retry loop.`` (ConnectionError, ConnectTimeout, ReadTimeout, SSLError) when a call to
the W&B server fails, and go on retrying: a compute node or network without access to api.wandb.ai (a cluster's
nodes, a campus or company firewall, a proxy), an expired certificate, or the server's own trouble. A run in
online mode then stalls at wandb.init or at a later sync. The line names the network error, not why the server is
out of reach, and a transient one recovers: likely.

wandb's functions before a run exists (``wandb/sdk/lib/preinit.py``: ``PreInitCallable`` stands in for
wandb.log, wandb.save, wandb.watch ... and raises ``wandb.Error(f"You must call wandb.init() before {name}()")``;
``PreInitObject``, for wandb.config and wandb.summary, "before {name}.{key}" and "before {name}[{key!r}]"; wandb's
callbacks for other libraries check ``wandb.run`` the same way) say this process called wandb without
wandb.init. In a job of several processes that is most often a rank the tracker was never started on: the
logger, the Trainer or the script initialise wandb on rank 0 only, and code that runs on every rank (a
validation_step, a callback, a reward function) logs from all of them. Or the run was finished before a last
log, or the logger is off (report_to, mode) while the code logs to wandb directly. The message says the call
came before wandb.init in that process (certain); which of these applies is the code's.

wandb.init waits for its service to create the run on the server (``wandb/sdk/wandb_init.py``, ``_WandbInit.init``)
and, when no answer comes within ``init_timeout`` (90 s by default in the releases read; logs show 60 s too),
raises ``CommError(f"Run initialization has timed out after {timeout} sec. ...")``: some releases add a link to the
docs, later ones the advice to raise ``init_timeout``. The threads that post it show a node without a route to
api.wandb.ai (a cluster's compute nodes, a proxy, a sandbox), most with wandb's network retries above it; a slow
server or many processes starting runs at once print it too: likely, as ``wandb_server_unreachable``.

MLflow's tracking stores (``mlflow/store/tracking/file_store.py``, ``_validate_new_param_value``; the SQL store's
``_log_params``) refuse to give a run's param a new value: ``MlflowException("Changing param values is not allowed.
Param with key='{key}' was already logged with value='{old}' for run ID='{run}'. Attempted logging new value
'{new}'.")`` (the SQL and REST stores: "Params were already logged='...' for run ID='...'"). A param is written
once per run: the run was resumed or reused (MLFLOW_RUN_ID in the environment, mlflow.start_run(run_id=...), a
Trainer's MLflowCallback re-logging its arguments into an active run, a hyperparameter search's trials in one run),
or the code logs one key twice with values that differ (a path, a value changed after the first log). The message
names the key and both values, and only this prints it (certain).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _no_key(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the run logs to wandb, and wandb has no API key and no terminal to ask for one (api_key not "
        "configured, no-tty), so it refused to start" + on_ranks(hits),
        "Give wandb the key where the job runs, before it starts: wandb login (once, on that machine and user; "
        "it writes ~/.netrc), or export WANDB_API_KEY=<your key from wandb.ai/authorize> in the job script or "
        "the container's environment (every node). Without an account, or to train without logging to it, turn "
        "wandb off: wandb offline (or WANDB_MODE=offline: logs stay local, wandb sync later) or "
        "WANDB_MODE=disabled, or the script's own switch (report_to='none' for the Trainer, no WandbLogger).",
    )


WANDB_API_KEY_MISSING = Recogniser(
    kind="wandb_api_key_missing",
    title="wandb without an API key in a run that cannot prompt",
    templates=("third_party:wandb-api-key-not-configured-no-tty",),
    anchors=("api_key not configured (no-tty)",),
    match=R(r"api_key not configured \(no-tty\)"),
    describe=_no_key,
)


def _unreachable(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    error = facts.get("wandb_network_error")
    timeout = facts.get("wandb_init_timeout")
    if timeout and not error:
        said = f"wandb.init gave up after {timeout} s without the W&B server creating the run"
    else:
        said = (
            "the run logs to wandb and wandb cannot reach its server"
            + (f" ({error})" if error else "")
            + ", so it keeps retrying (the run stalls at wandb.init or while syncing)"
        )
    return (
        said + on_ranks(hits),
        "Where the run has no route to api.wandb.ai (a cluster's compute nodes, a firewall, a proxy), log "
        "locally: WANDB_MODE=offline in the job's environment (wandb sync the run folder later from a machine "
        "online), or turn wandb off with WANDB_MODE=disabled or the script's own switch (report_to='none', no "
        "WandbLogger, or mode='disabled' where the repository calls wandb.init: a mode passed there can "
        "override the environment's). Behind a proxy set HTTPS_PROXY; with SSL errors update the "
        "CA certificates (update-ca-certificates). Where the server is reachable but slow, or many processes "
        "start runs at once, wait longer: wandb.init(settings=wandb.Settings(init_timeout=300)) or "
        "WANDB_INIT_TIMEOUT=300, and start wandb on rank 0 only.",
    )


WANDB_SERVER_UNREACHABLE = Recogniser(
    kind="wandb_server_unreachable",
    title="wandb unable to reach its server",
    templates=(
        "third_party:wandb-network-error-retry-loop",
        "third_party:wandb-run-initialization-timed-out",
    ),
    anchors=("entering retry loop", "Run initialization has timed out after"),
    match=R(
        r"Network error \((?P<wandb_network_error>\w{1,40})\), entering retry loop"
        r"|Run initialization has timed out after (?P<wandb_init_timeout>[\w.]{1,12}) sec"
    ),
    confirm=lambda hits, ctx: False,
    describe=_unreachable,
)


def _before_init(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    called = merged(hits).get("wandb_called")
    return (
        f"{called or 'wandb'} was called in a process where wandb.init() never ran (no wandb run there)"
        + on_ranks(hits),
        "Call wandb where the run was started: in a multi-GPU job the logger (WandbLogger, the Trainer's "
        "report_to='wandb', the script's wandb.init) starts wandb on rank 0 only, so guard the direct wandb "
        "calls that run on every rank (a validation_step, a callback, a reward function) with the rank: if "
        "trainer.is_global_zero / accelerator.is_main_process / int(os.environ.get('RANK', 0)) == 0, or log "
        "through the logger (self.log, trainer.log). Outside that case call wandb.init() before the first "
        "wandb.log / wandb.config (and not after wandb.finish()), or drop the direct wandb calls when the run "
        "turns wandb off (report_to='none', WANDB_MODE=disabled).",
    )


WANDB_BEFORE_INIT = Recogniser(
    kind="tracker_log_before_init",
    title="wandb called in a process that never ran wandb.init",
    templates=(
        "third_party:wandb-must-call-init-before-callable",
        "third_party:wandb-must-call-init-before-attribute",
    ),
    anchors=("You must call wandb.init() before",),
    match=R(r"You must call wandb\.init\(\) before (?P<wandb_called>[\w.]{1,60}(?:\(\)|\[[^\]\n]{1,60}\])?)"),
    describe=_before_init,
)


def _param_changed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    key, old, new = facts.get("mlflow_param"), facts.get("mlflow_old"), facts.get("mlflow_new")
    values = f" from {old!r} to {new!r}" if old is not None and new is not None else ""
    return (
        f"MLflow refused to change the logged param {key!r}{values}: a run keeps each param's first value"
        if key
        else "MLflow refused to change a param already logged in this run: a run keeps each param's first value",
        "Log it once per run: start a new run instead of reusing one (unset MLFLOW_RUN_ID, call mlflow.end_run() "
        "before mlflow.start_run(), no run_id= when the values differ; the Trainer's MLflowCallback logs its "
        "arguments into the active run, so end the run between hyperparameter trials or set "
        "MLFLOW_NESTED_RUN=1), log params from rank 0 only, and log a value that changes during training as a "
        "metric (mlflow.log_metric) or a tag (mlflow.set_tag), not a param.",
    )


MLFLOW_PARAM_CHANGED = Recogniser(
    kind="tracker_param_changed",
    title="an MLflow param logged again with another value",
    templates=("third_party:mlflow-changing-param-values-not-allowed",),
    anchors=("Changing param values is not allowed",),
    match=R(
        r"Changing param values is not allowed\.(?: Param with key='(?P<mlflow_param>[^'\n]{1,200})' was already"
        r" logged with value='(?P<mlflow_old>[^'\n]{0,200})'(?: for run ID='[^'\n]{0,80}')?\. Attempted logging"
        r" new value '(?P<mlflow_new>[^'\n]{0,200})')?"
    ),
    describe=_param_changed,
)


def _config_changed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    key, old, new = facts.get("wandb_key"), facts.get("wandb_old"), facts.get("wandb_new")
    values = f" from {old} to {new}" if old is not None and new is not None else ""
    return (
        f"wandb refused to change the config key {key!r}{values}: a run's config keeps each key's value unless the "
        "update allows a change"
        if key
        else "wandb refused to change a config key already set in this run: a run's config keeps each key's value "
        "unless the update allows a change",
        "wandb.config.update(...) and wandb.config[key] = ... refuse a new value for a key the run already has "
        "(a resumed run's config, or the script setting it twice) unless told: pass allow_val_change=True to "
        "config.update (wandb.config.update(d, allow_val_change=True)); wandb.init(allow_val_change=True) or "
        "init_kwargs reach only wandb.init's own config, not a later update by a library (accelerate's "
        "init_trackers stored its config without it before huggingface/accelerate#1796: upgrade it). Or start a "
        "new run (no resume/id) when the settings really changed.",
    )


WANDB_CONFIG_CHANGED = Recogniser(
    # wandb/sdk/wandb_config.py (Config._sanitize, and update_locked): config_util.ConfigError('Attempted to change
    # value of key "{key}" from {old} to {new}\nIf you really want to do this, pass allow_val_change=True to
    # config.update()'); wandb 0.x (the old wandb_config.py said the same with %s)
    kind="tracker_config_changed",
    title="a wandb config key set again with another value",
    templates=("third_party:wandb-attempted-to-change-value-of-key",),
    anchors=("Attempted to change value of key",),
    match=R(
        r"Attempted to change value of key \\?\"?(?P<wandb_key>[^\"\n]{1,200}?)\\?\"? from (?P<wandb_old>[^\n]{0,200}?) "
        r"to (?P<wandb_new>[^\n]{0,200}?)(?:\s*(?:\\n)?\s*If you really want|\s*$)"
    ),
    span=1,
    describe=_config_changed,
)

RECOGNISERS = (
    WANDB_API_KEY_MISSING,
    WANDB_SERVER_UNREACHABLE,
    WANDB_BEFORE_INIT,
    MLFLOW_PARAM_CHANGED,
    WANDB_CONFIG_CHANGED,
)
