"""An experiment tracker (wandb) the run logs to that has no API key, or cannot reach its server.

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
    error = merged(hits).get("wandb_network_error")
    return (
        "the run logs to wandb and wandb cannot reach its server"
        + (f" ({error})" if error else "")
        + ", so it keeps retrying (the run stalls at wandb.init or while syncing)"
        + on_ranks(hits),
        "Where the run has no route to api.wandb.ai (a cluster's compute nodes, a firewall, a proxy), log "
        "locally: WANDB_MODE=offline in the job's environment (wandb sync the run folder later from a machine "
        "online), or turn wandb off with WANDB_MODE=disabled or the script's own switch (report_to='none', no "
        "WandbLogger, or mode='disabled' where the repository calls wandb.init: a mode passed there can "
        "override the environment's). Behind a proxy set HTTPS_PROXY; with SSL errors update the "
        "CA certificates (update-ca-certificates).",
    )


WANDB_SERVER_UNREACHABLE = Recogniser(
    kind="wandb_server_unreachable",
    title="wandb unable to reach its server",
    templates=("third_party:wandb-network-error-retry-loop",),
    anchors=("entering retry loop",),
    match=R(r"Network error \((?P<wandb_network_error>\w{1,40})\), entering retry loop"),
    confirm=lambda hits, ctx: False,
    describe=_unreachable,
)

RECOGNISERS = (WANDB_API_KEY_MISSING, WANDB_SERVER_UNREACHABLE)
