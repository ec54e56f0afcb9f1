"""What the ranks did to each other: a collective that timed out or diverged, a peer that went away.

Kinds of failure about what the ranks did relative to each other: a collective that timed out while one
rank was elsewhere, ranks running different collectives, a peer that went away, torchrun's summary of a worker
that failed.

The message texts are torch's (``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp`` watchdog,
``ProcessGroupWrapper``, DDP's model check, ``distributed/elastic/multiprocessing/errors``), NCCL's and gloo's.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import deepspeed_saves, exits
from torchdoctor.explain.kinds.comm import (
    ETCD_SERVER_TIMEOUT,
    GLOO_TIMEOUT,
    LAST_WORK,
    PEER_CLOSED,
    WATCHDOG_HINT,
)
from torchdoctor.explain.quote import quote
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks
from torchdoctor.rank_list import who

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _seconds(ms) -> str:
    return f"{int(ms) / 1000:g} s"


# -- collective timeouts --------------------------------------------------------------------------------


# Lightning's own calls that are collectives, which a condition on the rank keeps from the other ranks
LIGHTNING_COLLECTIVES = (
    "\nIn Lightning, self.log(..., sync_dist=True), self.all_gather, self.trainer.strategy.barrier() and "
    "reduce are collectives: call them on every rank, never under `if self.global_rank == 0:` or "
    "@rank_zero_only; to log a value of rank 0 alone, self.log(..., rank_zero_only=True) (no sync)."
)


def _watchdog(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    from torchdoctor.explain.ranks import timeout_story

    story = timeout_story(hits, ctx)
    op, seq = story["op"], story["seq"]
    what = f"{op} (SeqNum {seq})" if seq is not None else (op or "a collective")
    parts = [f"collective timed out: {what}"]
    if story["numel"]:
        parts.append(story["numel"])
    if story["timeout_ms"]:
        parts.append(f"timeout {_seconds(story['timeout_ms'])} (Timeout(ms)={story['timeout_ms']})")
    if len(story["groups"]) > 1:
        parts.append(
            "ranks wait in different collectives: "
            + ", ".join(
                f"{who(r)} in {o or '?'} #{q or '?'}"
                for (o, q), r in sorted(story["groups"].items(), key=lambda item: int(item[0][1] or 0))
            )
        )
    elif story["timed_out"]:
        parts.append(f"timed out on {who(story['timed_out'])}")
    if story["last_completed"] is not None:
        parts.append(f"last completed work {story['last_completed']}")
    if story["pg"]:
        parts.append(f"process group {story['pg']}")
    called = first(hits, "collective_at")
    if (
        called
    ):  # torch's "Stack trace of the failed collective" (2.6 and later), its innermost frame of the user's
        parts.append(f"called at {called} in {first(hits, 'collective_function')}")
    summary = "; ".join(parts)
    late = story["late"]
    if late:
        summary += (
            f". {who(late).capitalize()} never got there "
            f"({story['late_why']}): the ranks that waited are victims"
        )
    heard = first(hits, "first_timeout_rank")
    if heard and not late and not story.get("stuck_s"):
        summary += (
            f". Rank {heard} timed out first and told the others through the TCPStore: the rank that did not "
            f"arrive is one rank {heard} waited for"
        )
    if story.get("stuck_s"):
        summary = f"the NCCL watchdog got stuck for {story['stuck_s']} s (a CUDA or NCCL call hangs)"
    elif first(hits, "watchdog_hang"):
        # the heartbeat monitor's exit line alone: the watchdog made no progress for TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC
        story["stuck_s"] = "heartbeat"
        summary = (
            "the NCCL watchdog got stuck (no progress for the heartbeat timeout, TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC, "
            "480 s by default: a CUDA or NCCL call hangs)"
        )
    alone = (
        story["timed_out"] if len(story["timed_out"]) == 1 and not ctx.ranks - set(story["timed_out"]) else []
    )
    if not late and not story.get("stuck_s") and alone:
        # one rank's log: "every rank in this log" is that one, and a job of one rank has no other to be late
        # (found with the H200's one-rank timeout, an all_reduce queued behind a spinning kernel)
        summary += (
            f". Only {who(alone)} is in this log, waiting in it: the rank that did not arrive is in another rank's "
            "log (pass every rank's log, or the --log-dir folder)"
        ) + (
            "; in a job of one rank no rank can be late, and the collective itself never finished on the GPU"
            if alone == [0]
            else ""
        )
    elif not late and not story.get("stuck_s") and story.get("all_waited"):
        summary += (
            f". Every rank torchrun's summary names ({', '.join(map(str, story['timed_out']))}) timed out, none "
            "was elsewhere without an error: the ranks made different collective calls, or the same one with a "
            "tensor of another size or dtype on one rank (gloo then completes it on one side only, or on none), or "
            "the network between them stalled"
        )
    elif not late and not story.get("stuck_s") and len(story["timed_out"]) > 1:
        summary += (
            f". Every rank in this log waited in it ({who(story['timed_out'])}): if they are all "
            "the job's ranks, none was elsewhere without an error: the ranks made different collective calls, or "
            "the same one with a tensor of another size or dtype on one rank, or the network stalled; if not, the one that did not arrive is in a log "
            "not given here (pass every rank's log, or the --log-dir folder)"
        )
    elif not late and not story.get("stuck_s"):  # the late one is elsewhere
        summary += (
            ". Every rank in this log waited in it: the one that did not arrive is not in this log "
            "(pass every rank's log, or the --log-dir folder)"
        )
    late_ranks = who(late) if late else "the rank that did not arrive"
    fix = (
        f"One rank did not reach {what} while the others waited in it. Find out what {late_ranks} was doing at "
        "that moment: its own log just before the timeout, or, on the next hang,\n"
        f"{WATCHDOG_HINT}\n"
        "The usual reasons: one rank busy saving a checkpoint, running evaluation / validation on rank 0 only, "
        "skipping a collective under a condition on the rank (`if rank == 0:`), or stuck loading data. If every "
        "rank is in the collective, what they pass to it differs (`torchdoctor launch --debug` names the "
        "collective whose shapes differ across the ranks), or the network stalled: rerun with NCCL_DEBUG=INFO.\n"
        "Make every rank take part (or wait in a dist.barrier() after the lone work), or, when the lone work "
        "is legitimately long (a big checkpoint save), raise the timeout:\n"
        "init_process_group(..., timeout=timedelta(minutes=60))   # transformers: ddp_timeout; "
        "accelerate: InitProcessGroupKwargs(timeout=...)"
    )
    if story.get("all_waited") and not late and not story.get("stuck_s"):
        fix = (
            "Every rank was in a collective: compare the line each rank waited at (its traceback's, named below) "
            "and what each passes there (the tensor's shape and dtype, the same op and group). `torchdoctor launch "
            "--debug` (or "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL) checks every collective's operation and shapes across the ranks and "
            "names the one that differs, with the line. If they agree, the network stalled: rerun with "
            "NCCL_DEBUG=INFO (NCCL) or check the interface gloo uses (GLOO_SOCKET_IFNAME)."
        )
    if alone == [0] and not late and not story.get("stuck_s"):
        fix += (
            "\nIf the job has this one rank only (world size 1), nobody was late: the collective was queued on the "
            "GPU's stream behind work that had not finished (a long or hung kernel before it, a GPU fault): "
            "nvidia-smi for the GPU's use and dmesg for Xid errors, and torchdoctor launch --watchdog for the "
            "line the rank waits at."
        )
    if late and ctx.facts.get("framework") == "lightning":
        # a rank that never got there under Lightning: its own collectives under a rank condition (found with its
        # autoencoder example all_gathering a metric on rank 0 alone in on_validation_epoch_end)
        fix += LIGHTNING_COLLECTIVES
    if story.get("stuck_s"):
        fix = (
            "The watchdog thread itself hung in a CUDA/NCCL call: check `nvidia-smi` and `dmesg` for Xid "
            "errors on that GPU; TORCH_NCCL_ENABLE_MONITORING=0 stops the heartbeat monitor from killing the "
            "job while you look.\n" + fix
        )
    return summary, fix


WATCHDOG_TIMEOUT = Recogniser(
    # torch c10d ProcessGroupNCCL.cpp (checkTimeout / watchdogHandler), 1.8 .. 2.x; gloo unbound_buffer.cc
    kind="nccl_watchdog_timeout",
    title="collective timeout",
    role="consequence",
    anchors=(
        "Watchdog caught collective operation timeout",
        "Caught collective operation timeout",
        "Some NCCL operations have failed or timed out",
        "last completed NCCL work",
        "watchdog got stuck for",
        "Heartbeat monitor timed out",
        # the heartbeat monitor of torch 2.4+ (2.9: ProcessGroupInterface's HeartbeatMonitor): the rank whose
        # collective timed out ("from this local rank") and every rank it told through the TCPStore ("from rank
        # N", "Observed flight recorder dump signal ..."), then the process ended "due to collective timeout or
        # exception" or "due to ProcessGroupNCCL watchdog hang" (the watchdog stuck)
        "Received a dump signal due to a collective timeout from",
        "Observed flight recorder dump signal from another rank via TCPStore",
        "Terminating the process after attempting to dump debug info, due to",
        # WorkNCCL::synchronize under (TORCH_)NCCL_BLOCKING_WAIT=1: "[Rank 0] Work WorkNCCL(SeqNum=5, OpType=...,
        # Timeout(ms)=60000) timed out in blocking wait (NCCL_BLOCKING_WAIT=1)." (1.x; TORCH_NCCL_BLOCKING_WAIT=1 in 2.x,
        # no variable named in later 2.x)
        "timed out in blocking wait",
    ),
    match=R(
        r"ollective operation timeout|Some NCCL operations have failed or timed out|"
        r"[Ll]ast enqueued (?:NCCL )?work: -?\d+, last completed|"
        r"watchdog got stuck for \d+ seconds|Heartbeat monitor timed out|"
        r"Received a dump signal due to a collective timeout from|Observed flight recorder dump signal from another|"
        r"Terminating the process after attempting to dump debug info, due to|timed out in blocking wait"
    ),
    templates=(
        "torch_native:watchdog-caught-collective-timeout",
        "torch_native:some-nccl-operations-failed",
        "torch_native:heartbeat-monitor-timed-out",
        "torch_native:timeout-dump-signal",
        "torch_native:flight-recorder-dump-signal-observed",
        "torch_native:terminating-after-dump",
        "torch_native:work-timed-out-in-blocking-wait",
        "torch_native:work-timed-out-in-blocking-wait-torch",
        "torch_native:work-timed-out-in-blocking-wait-plain",
        # ProcessGroupNCCL.cpp's HeartbeatMonitor (libtorch_cuda): the watchdog thread itself stuck, and the
        # dump signal's message with the last enqueued and completed work
        "torch_cuda:pg-nccl-watchdog-got-stuck",
        "torch_cuda:pg-nccl-dump-signal-collective-timeout",
    ),
    # "failed or timed out" is printed after an NCCL error too: the watchdog's timeout line makes it certain
    confirm=lambda hits, ctx: any(
        "op" in h.facts or "timeout_ms" in h.facts or "ran_ms" in h.facts for h in hits
    ),
    # the line alone does not say which collective, nor whether a rank was late: every rank may be in it and
    # the network between the hosts be what never delivers (InfiniBand that does not work there, an interface
    # the hosts do not reach each other on); not after ten collectives went through (SeqNum >= 10)
    also=(
        Alternative(
            "network_interface",
            "a network path between the hosts that NCCL cannot use",
            "Rerun with NCCL_DEBUG=INFO and read which transport each rank chose (NET/IB or NET/Socket, and "
            "the interface); if the hosts' InfiniBand is not usable between them, NCCL_IB_DISABLE=1 runs over "
            "TCP, and NCCL_SOCKET_IFNAME=<the interface the hosts reach each other on> picks the right one.",
            unless=("carried",),
        ),
    ),
    facts=(
        R(r"\[Rank (?P<msg_rank>\d+)\]"),
        R(r"\bRank (?P<msg_rank>\d+)\]"),
        R(r"SeqNum=(?P<seq>\d+)"),
        R(r"SeqNum=(?P<carried>[1-9]\d+)"),  # ten collectives or more went through the network
        R(r"OpType=(?P<op>\w+)"),
        R(r"NumelIn=(?P<numel_in>\d+)"),
        R(r"NumelOut=(?P<numel_out>\d+)"),
        R(r"TensorShape=\[(?P<shape>[^\]]{0,200})\]"),
        R(r"Timeout\(ms\)=(?P<timeout_ms>\d+)"),
        R(r"ran for (?P<ran_ms>\d+) milliseconds"),
        LAST_WORK,
        R(r"\[PG (?:ID )?(?P<pg>\d+)"),
        R(r"\((?P<pg_name>\w+)\) Rank \d+\]"),
        R(r"watchdog got stuck for (?P<stuck_s>\d+) seconds"),
        # the heartbeat monitor ending the process because the watchdog itself hung (the same as "got stuck")
        R(r"dump debug info, due to (?P<watchdog_hang>ProcessGroupNCCL watchdog hang)"),
        # the rank whose own collective timed out first, as the others heard it through the TCPStore
        R(r"dump signal due to a collective timeout from\s+rank (?P<first_timeout_rank>\d+)"),
        # the frames torch 2.6+ logs under "Stack trace of the failed collective:", innermost first ("#2 <module>
        # from train.py:31"): the first outside torch and the installed packages is the user's call
        R(
            r"#\d+ (?P<collective_function>\S{1,200}) from "
            r"(?P<collective_at>(?:(?!site-packages|dist-packages|/torch/distributed/)\S){1,400}\.py:\d+)"
        ),
    ),
    span=6,  # the watchdog's line, its status line, then that stack trace (three frames or more)
    describe=_watchdog,
)


def _store_barrier(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    arrived, world = first(hits, "arrived"), first(hits, "world_size")
    count = f" ({arrived} of {world} processes arrived)" if arrived and world else ""
    waited = first(hits, "barrier_timeout")
    summary = (
        "the ranks waited in init_process_group's store-based barrier for every process to join and timed "
        f"out{' after ' + waited if waited else ''}{count}: the store was reachable (the waiting ranks were in it), "
        "a rank came too late or not at all" + on_ranks(hits)
    )
    fix = (
        "init_process_group (and new_group) waits until all WORLD_SIZE processes have called it. Most often one "
        "rank was busy alone before it for longer than the timeout (tokenising or preprocessing a big dataset, "
        "downloading or loading a model on rank 0 only): do that work before the others wait, or raise the "
        "timeout: init_process_group(..., timeout=timedelta(hours=2)) (transformers: "
        "TrainingArguments(ddp_timeout=7200); DeepSpeed: deepspeed.init_distributed(timeout=...); accelerate: "
        "InitProcessGroupKwargs(timeout=...)). Otherwise a rank failed before it (read the missing rank's own "
        "log), or WORLD_SIZE counts more processes than were started (--nproc_per_node, --nnodes)."
    )
    return summary, fix


def _monitored_barrier(hits: list[Hit]) -> tuple[str, str]:
    """gloo's monitored barrier (ProcessGroupGloo.cpp monitoredBarrier: dist.monitored_barrier, and every collective
    under TORCH_DISTRIBUTED_DEBUG=DETAIL): rank 0 names the ranks that never reached it, another rank names rank 0
    when its own exchange with it failed."""
    late, faulty = first(hits, "monitored_late"), first(hits, "monitored_faulty")
    waited = first(hits, "monitored_ms")
    after = f" in {int(waited) / 1000:g} s" if waited else ""
    if late:
        late = ("ranks " if "," in late else "rank ") + late
        summary = (
            f"{late} never reached the monitored barrier{after} (busy, hung or in another collective, or failed "
            "first); the ranks that reached it are victims"
        )
        named = late
    elif faulty:
        summary = f"the monitored barrier's exchange with rank {faulty} failed: rank {faulty} failed or timed out first"
        named = f"rank {faulty}"
    else:
        summary = (
            f"this rank timed out in the monitored barrier{after}: rank 0 (which checks it) never answered"
        )
        named = "rank 0"
    return summary + on_ranks(hits), (
        f"Read the log of {named} at that moment: its error, or the line it waited at (on the next hang, "
        f"{WATCHDOG_HINT.split('#')[0].strip()} prints every rank's Python stack). A rank that was legitimately "
        "busy alone (a checkpoint save, evaluation on rank 0) needs the others to wait longer: "
        "dist.monitored_barrier(timeout=timedelta(minutes=30)) or init_process_group(timeout=...)."
    )


def _gloo_pair_timeout(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    """gloo's own timeouts without its "Timed out waiting <N>ms" line: a pair's read or write that waited past the
    timeout (pair.cc, buffer.cc: "Read timeout [10.0.0.2]:44321"), or the exception gloo hands every other pair of
    a process one of whose operations timed out (unbound_buffer.cc: "Application timeout caused pair closure")."""
    io, peer = first(hits, "gloo_io"), first(hits, "gloo_peer")
    if io:
        where = "from" if io == "Read" else "to"
        what = f"gloo's {io.lower()} {where} {peer}:{first(hits, 'gloo_peer_port')} timed out"
        why = "the peer sent nothing" if io == "Read" else "the peer took nothing"
        summary = f"{what}: {why} within the process group's timeout"
    else:
        summary = (
            "a gloo operation of this process timed out, and gloo closed its other connections with it "
            "(Application timeout caused pair closure)"
        )
    summary += on_ranks(hits) + ": a rank did not reach the same collective in time, or the network stalled"
    _, fix = _watchdog(hits, ctx)
    return summary, fix


def _timeout(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "store_barrier"):
        return _store_barrier(hits, ctx)
    if any(k in h.facts for h in hits for k in ("monitored_late", "monitored_faulty", "monitored_self")):
        return _monitored_barrier(hits)
    if not first(hits, "unique_id") and not first(hits, "timeout_ms"):
        if first(hits, "gloo_io") or first(hits, "gloo_pair_closure"):
            return _gloo_pair_timeout(hits, ctx)
    if not first(hits, "unique_id"):
        return _watchdog(hits, ctx)
    ranks = on_ranks(hits)
    return (
        "waited for rank 0 to hand out NCCL's communicator id and timed out: rank 0 did not reach the "
        f"process group's NCCL set-up in time{ranks}",
        "Rank 0 creates NCCL's id when it reaches its first collective (or init with device_id) and the "
        "others wait for it in the store. Rank 0 either failed first (its own error is the cause: read rank "
        "0's log), or was busy elsewhere longer than the store's timeout: waiting for input (wandb login: run "
        "`wandb login` or WANDB_MODE=offline), downloading or preprocessing alone before the first collective "
        "(do it before init_process_group, or raise init_process_group(timeout=timedelta(minutes=60))), or on "
        "a host the others cannot reach (MASTER_ADDR, firewall).",
    )


COLLECTIVE_TIMEOUT = Recogniser(
    # gloo transport/tcp/unbound_buffer.cc: "Timed out waiting <N>ms for <send|recv> operation to complete";
    # torch elastic utils/store.py: "Timed out waiting on barrier on rank ..." — a collective or a store
    # barrier that is not NCCL's, where the log tells it apart from the NCCL watchdog's timeout;
    # ProcessGroupNCCL.cpp broadcastUniqueNCCLID: the other ranks' store get of rank 0's ncclUniqueId timed out
    kind="collective_timeout",
    title="collective timeout",
    role="consequence",
    # torch distributed_c10d.py _store_based_barrier (init_process_group / new_group before torch 2.3, and with
    # TORCH_DIST_INIT_BARRIER=1): "Timed out initializing process group in store based barrier on rank {}, for
    # key: {} (world_size={}, worker_count={} | num_workers_joined={}, timeout={})"; the ranks that wait were
    # in the store, so it is one rank late or missing, not an endpoint they cannot reach (a pasted line is
    # often retyped in lower case: the anchor leaves out the first letter)
    # gloo's two wordings and elastic's barrier, not the bare "Timed out waiting": etcd_server.py's own etcd server
    # that never came up ("Timed out waiting for etcd server to be ready!") is rendezvous_or_port's, and RPC's
    # "Timed out waiting for pending UserRRefs/OwnerRRefs" at shutdown is no collective
    anchors=(
        "ms for recv operation to complete",
        "ms for send operation to complete",
        "Timed out waiting on barrier on rank",
        "retrieving ncclUniqueId from [0]",
        "imed out initializing process group in store based barrier",
        # ProcessGroupGloo.cpp monitoredBarrier: rank 0's "[Rank 0]: Rank(s) {} failed to pass monitoredBarrier in {}
        # ms", the other ranks' "timed out in monitoredBarrier after {}" and "successfully reached monitoredBarrier,
        # but received errors while waiting for send/recv from rank {}"
        "failed to pass monitoredBarrier in",
        "timed out in monitoredBarrier after",
        "received errors while waiting for send/recv from rank",
        # gloo transport/tcp: the exception every other pair of a process gets once one of its operations timed
        # out (unbound_buffer.cc), and a pair's own read or write that waited past the timeout (pair.cc, buffer.cc)
        "Application timeout caused pair closure",
        "Read timeout [",
        "Write timeout [",
    ),
    match=R(
        r"Application timeout caused pair closure|\] (?:Read|Write) timeout \[[^\s\]]{1,255}\]:\d+|"
        r"failed to pass monitoredBarrier in|timed out in monitoredBarrier after|"
        r"received errors while waiting for send/recv from rank|"
        r"Timed out waiting \d+ms for \w+ operation|Timed out waiting on barrier on rank|"
        r"retrieving ncclUniqueId from \[0\][^\n]{0,300}(?:Socket Timeout|wait timeout|[Tt]imed out|timeout after)|"
        r"[Tt]imed out initializing process group in store based barrier"
    ),
    # elastic/rendezvous/etcd_server.py's "Timed out waiting for etcd server to be ready!" is its own etcd server
    # that never started: no collective waited (rendezvous_or_port reads it)
    reject=R(re.escape(ETCD_SERVER_TIMEOUT)),
    templates=(
        "torch:timed-out-waiting-on-barrier-on",
        "torch_native:retrieving-ncclUniqueId-from-rank-0",
        "torch:timed-out-initializing-process-group-in",
        "torch_native:monitored-barrier-rank-failed",
        "torch_native:monitored-barrier-rank-timed-out",
        "torch_native:monitored-barrier-send-recv-errors",
        "torch_native:gloo-application-timeout-pair-closure",
        "torch_native:gloo-timed-out-waiting-for-recv",
        "torch_native:gloo-timed-out-waiting-for-send",
        "torch_native:gloo-read-timeout",
        "torch_native:gloo-write-timeout",
    ),
    facts=(
        R(r"(?P<gloo_pair_closure>Application timeout caused pair closure)"),
        R(r"\] (?P<gloo_io>Read|Write) timeout \[(?P<gloo_peer>[^\s\]]{1,255})\]:(?P<gloo_peer_port>\d+)"),
        R(r"(?P<store_barrier>[Tt]imed out initializing process group in store based barrier)"),
        R(
            r"Ranks? (?P<monitored_late>\d+(?:, \d+)*) failed to pass monitoredBarrier in (?P<monitored_ms>\d+) ms"
        ),
        R(r"waiting for send/recv from rank (?P<monitored_faulty>\d+)"),
        R(r"(?P<monitored_self>timed out in monitoredBarrier after) (?P<monitored_ms>\d+)"),
        R(r"world_size=(?P<world_size>\d+), (?:worker_count|num_workers_joined)=(?P<arrived>\d+)"),
        R(r"timeout=(?P<barrier_timeout>\d+:\d\d:\d\d)"),
        R(r"(?P<unique_id>retrieving ncclUniqueId from \[0\])"),
        GLOO_TIMEOUT,
        R(r"missing_ranks=\[?(?P<missing>[\d, ]{1,200})"),
        R(r"timeout=(?P<timeout_s>[\d.]+)"),
    ),
    describe=_timeout,
)


def _model_mismatch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = {k: v for h in hits for k, v in h.facts.items()}
    if "params_a" in facts:
        summary = (
            f"DDP: the model differs between ranks: rank {facts['rank_a']} has {facts['params_a']} parameters, "
            f"rank {facts['rank_b']} has {facts['params_b']}"
        )
    elif facts.get("strides_mismatch"):
        summary = (
            f"DDP: parameter {facts.get('param_index', '?')} ({facts.get('param_with', 'sizes')} "
            f"{facts.get('param_values', '?')}) has the same "
            "shape on every rank but another layout in memory (strides) on this one"
        )
        fix = (
            "DDP compares each parameter's strides as well as its shape with rank 0's. The same shape laid out "
            "otherwise is a memory format applied on some ranks only (model.to(memory_format=torch.channels_last) "
            "under `if rank == 0:` or after wrapping), a parameter replaced on one rank by a tensor of another layout "
            "(load_state_dict(..., assign=True) of a checkpoint read on rank 0 only, a transposed or sliced view), "
            "or ranks that run different torch/cuDNN builds. Give every rank the same layout before wrapping: "
            "for p in model.parameters(): p.data = p.data.to(memory_format=torch.contiguous_format) (or apply "
            "channels_last on every rank), then DistributedDataParallel(model, ...); check that every node runs the "
            "same environment (python -c 'import torch; print(torch.__version__, torch.backends.cudnn.version())')."
        )
        return summary + on_ranks(hits), fix
    else:
        summary = (
            "DDP: a parameter's shape differs between ranks (DDP checks every rank builds the same model)"
        )
    fix = (
        "DistributedDataParallel requires the same parameters, in the same order and shapes, on every rank. "
        "Build the model identically everywhere: no layer created only on some ranks (`if rank == 0:`), no "
        "per-rank config, vocabulary or random architecture choice; load the checkpoint on every rank before "
        "wrapping; wrap the model in DDP once (not a DDP inside a DDP)."
    )
    if "saw_hpo" in facts or "saw_hpo" in ctx.facts:
        summary += ": a hyperparameter search is running, and each process likely drew its own trial"
        fix = (
            "A hyperparameter search under a multi-process launch runs the search in every process: each one "
            "samples its own trial and builds a model from other hyperparameters, which DDP refuses. One process "
            "must draw the trial and the others take it: transformers' Trainer.hyperparameter_search does this "
            "since its 2022 fix (huggingface/transformers#19168: pip install -U transformers); with optuna yourself, run the study on rank 0 and wrap "
            "the trial on every rank in optuna.integration.TorchDistributedTrial (or broadcast the chosen values "
            "with dist.broadcast_object_list); Lightning under optuna: strategy='ddp_spawn', as optuna's example "
            "does.\n" + fix
        )
    return summary + on_ranks(hits), fix


def _no_search(hits: list[Hit], ctx: Context) -> bool:
    """Certain unless a hyperparameter search is in the log (the model then differs by the trial each process
    drew, which a library may do for the user: its bug, not the user's model code), or the check found only a
    parameter's strides to differ (a layout applied on some ranks, or ranks on different torch/cuDNN builds: the
    message does not say which)."""
    if any("strides_mismatch" in h.facts for h in hits):
        return False
    return "saw_hpo" not in ctx.facts and not any("saw_hpo" in h.facts for h in hits)


_no_search.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide

# a hyperparameter search in the log (optuna's study and trials, transformers' Trainer.hyperparameter_search, Ray
# Tune): read anywhere, since the search's frames and the DDP refusal are often far apart
HPO = (
    "optuna",
    R(r"(?P<saw_hpo>\b[Oo]ptuna\b|\bhyperparameter_search\b|\bray[/\\.]tune\b|\bTorchDistributedTrial\b)"),
)


DDP_MODEL_MISMATCH = Recogniser(
    # torch c10d reducer.cpp / comm.cpp: DDP's _verify_param_shape_across_processes at construction
    # ("DDP expects same model across all ranks, but Rank N has M params, while rank K has inconsistent L
    # params"; torch <= 1.x: "... appears not to match sizes of the same param in process 0")
    kind="ddp_model_mismatch",
    templates=(
        "torch_cpp:ddp-expects-same-model-across-all",
        "torch_native:ddp-param-sizes-mismatch",
        "torch_native:ddp-param-strides-mismatch",
    ),
    title="model that differs between ranks",
    anchors=(
        "DDP expects same model across all ranks",
        "appears not to match sizes of the same param in process",
        # the same check's second loop: the shape agrees, the layout in memory (its strides) does not
        "appears not to match strides of the same param in process",
    ),
    facts=(
        R(
            r"(?:params|replicas\[0\])\[(?P<param_index>\d+)\] in this process with (?P<param_with>sizes|strides) "
            r"(?P<param_values>\[[\d, ]{0,80}\]) appears not to match (?:sizes|(?P<strides_mismatch>strides))"
        ),
        R(
            r"Rank (?P<rank_a>\d+) has (?P<params_a>\d+) params, while rank (?P<rank_b>\d+) has inconsistent (?P<params_b>\d+)"
        ),
        HPO[1],
    ),
    confirm=_no_search,
    also=(
        Alternative(
            "dependency_version",
            "ranks that run different torch or cuDNN builds, whose kernels leave a parameter in another layout",
            "Run every rank in one environment: the same torch, CUDA and cuDNN on every node (python -c 'import "
            "torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())' on each), the "
            "versions the project's requirements name.",
            when=("strides_mismatch",),
        ),
        Alternative(
            "library_version_bug",
            "a hyperparameter-search integration that draws a trial in every process (transformers' "
            "Trainer.hyperparameter_search before its 2022 fix)",
            "Upgrade the library that runs the search (pip install -U transformers: since "
            "huggingface/transformers#19168 rank 0 draws the trial and sends it to the others), or draw it on one "
            "rank and broadcast it yourself.",
            when=("saw_hpo",),
        ),
    ),
    describe=_model_mismatch,
)


def _zero3_paths(hits: list[Hit]) -> tuple[str, str]:
    """ZeRO-3's check that every rank gathers the same parameters in the same order (its first step's trace)."""
    rank = hits[0].facts["zero3_rank"]
    # before 0.17.6 get_lst_from_rank0 broadcast rank 0's list into one of this rank's length without comparing the
    # lengths first: a shorter or longer list on this rank (another number of modules ran) leaves numbers no id has
    garbled = first(hits, "zero3_garbled")
    lengths = (
        f" (rank 0's list holds {garbled}, no module id: DeepSpeed before 0.17.6 broadcast rank 0's list into one of "
        f"another length, so rank {rank} ran another number of modules)"
        if garbled
        else ""
    )
    return (
        f"ZeRO-3's ranks gathered different parameters: rank {rank}'s modules ran in another order (or others "
        "ran) than rank 0's" + lengths + on_ranks(hits),
        "DeepSpeed ZeRO-3 gathers each module's parameters with a collective as the module runs, and checks that "
        "every rank runs the same modules in the same order (deepspeed/runtime/zero/utils.py). A forward that "
        "takes another path on some ranks breaks it: a batch without an image skips the vision tower (LLaVA-style "
        "models: send a dummy image through it on every rank, or train with ZeRO-2), a mixture-of-experts block "
        "routes no token to an expert on one rank (mark the block a leaf: deepspeed.utils.set_z3_leaf_modules("
        "model, [MoEBlockClass])), generation stops at "
        "another length (generate(..., synced_gpus=True)), or an `if rank == 0:` branch calls the model. Make "
        "every rank run the same modules each step, or use ZeRO-2, which gathers no parameters.",
    )


def _divergence(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "ds_save_wait") or first(hits, "ds_save_wait_spy"):
        return deepspeed_saves.waiting(hits)
    facts = hits[0].facts
    parts = []
    if "nccl_suspected" in facts:
        parts.append(
            f"NCCL suspects it around rank {facts.get('rank_a', '?')} (its kernel waited long in a collective)"
        )
    elif "rank_a" in facts:
        one = f"rank {facts['rank_a']} ran {facts.get('op', 'a collective')}"
        if facts.get("seq"):
            one += f" #{facts['seq']}"
        if facts.get("shape") is not None:
            one += f" of shape [{facts['shape']}]"
        if facts.get("dtype"):
            one += f" {facts['dtype']}"
        parts.append(one)
    if "rank_b" in facts:
        other = f"rank {facts['rank_b']} ran {facts.get('op_b', 'another collective')}"
        if facts.get("shape_b") is not None:
            other += f" of shape [{facts['shape_b']}]"
        parts.append(other)
    if "size_a" in facts:
        parts.append(f"sizes differ: {facts['size_a']} bytes here, {facts['size_b']} on the peer")
    if "fsdp_a" in facts:  # FSDP's check of its all-gathers across ranks
        parts.append(
            f"FSDP on rank {facts['fsdp_rank_a']} all-gathers {facts['fsdp_a']}, on rank {facts['fsdp_rank_b']} "
            f"{facts['fsdp_b']}"
        )
    if not parts and facts.get("aspects"):  # only the diff's line: what it says differs
        parts.append(" ".join(facts["aspects"].split()))
    zero3 = [
        h for h in hits if "zero3_rank" in h.facts
    ]  # not the traceback's `raise RuntimeError(f"...` line
    if zero3:
        return _zero3_paths(zero3)
    summary = "ranks disagree on the collective they run" + (": " + ", ".join(parts) if parts else "")
    fix = (
        "The ranks called different collectives (or the same one with different sizes, dtypes or devices): a "
        "collective inside a branch that not every rank takes. Look for `if rank == 0:` around a collective or "
        "a barrier, a "
        "decision that differs per rank (a checkpoint every N minutes by each rank's own clock, a random or "
        "data-dependent early stop, an uneven last batch).\n"
        "Decide on one rank and broadcast the decision (dist.broadcast_object_list) so every rank takes the "
        "same branch, e.g. whether to save a checkpoint now.\n"
        "torchdoctor launch --debug ...   # checks each collective's op and shapes on every rank and names "
        "the file:line\n"
        "(TORCH_DISTRIBUTED_DEBUG=DETAIL makes torch itself check every collective, at a cost.)"
    )
    if "died_condition" in ctx.facts:
        # `launch --watchdog`'s verdict in the same log: the rank gloo aborted died inside its own call, made under
        # a condition on the rank (u41: an all_reduce in nanoGPT's evaluation, run on rank 0 only)
        call = ctx.facts[
            "died_call"
        ]  # "all_reduce #4 at train.py:10", or only the place where no call was noted
        call = call if " #" in call else f"collective call at {call}"
        summary += (
            f"; {ctx.facts['died_rank']} died in its {call}, a call made under a condition on the "
            f"rank, {ctx.facts['died_condition']}"
        )
        fix = (
            "The ranks that skip that branch never make the collective inside it (an all_reduce of an evaluation's "
            "loss, a barrier, a metric synchronised across ranks) and go on to their next one: make the call on "
            "every rank and keep only the write or the print under the condition.\n" + fix
        )
    elif "size_a" in facts and ctx.facts.get("saw_accelerate_gather"):
        # every rank joined accelerate's gather: the same call, with tensors of different shapes; no branch to
        # decide on one rank (found with gather_for_metrics over batches split by hand under plain torchrun: the
        # last batch held 2 samples on rank 0, 1 on rank 1)
        # ... or one rank never made that gather: gloo's check aborts the same way when the other rank is in
        # another collective (found with accelerate's nlp_example.py evaluating on the main process alone, the
        # other rank gone on to DDP's all_reduce in its next backward: tests/fixtures/planted_runs/rank0_metric);
        # the aborted rank prints no traceback, so the log cannot tell which
        summary += (
            "; in accelerate's gather: the ranks' tensors differ in shape, or a rank never made that gather (it "
            "ran another collective)"
        )
        fix = (
            "accelerator.gather and gather_for_metrics take a tensor of one shape on every rank, and every rank "
            "must make the call. The usual causes:\n"
            "- the evaluation (or the gather) under `if accelerator.is_main_process:` or another rank condition: "
            "the other ranks go on to their next collective (the next backward's all_reduce), whose sizes differ. "
            "Run the evaluation loop and gather_for_metrics on every rank; keep only the print or the save under "
            "the condition (accelerator.print prints once).\n"
            "- an uneven last batch (the data split by hand, a DataLoader not passed to accelerator.prepare, "
            "even_batches=False): prepare the DataLoader (model, loader = accelerator.prepare(model, loader)); "
            "every rank then gets batches of the same size, and gather_for_metrics drops the samples repeated to "
            "even them. Or pad first and drop the padding after: t = accelerator.pad_across_processes(t, dim=0)\n"
            "- sequences padded per batch (input ids, generated tokens, logits) differ in length between ranks. "
            "Pad them to one length first:\n"
            "    t = accelerator.pad_across_processes(t, dim=1, pad_index=tokenizer.pad_token_id)\n"
            "    t = accelerator.gather_for_metrics(t)\n"
            "Or gather Python objects: accelerator.gather_for_metrics(t, use_gather_object=True) (accelerate 0.30+), "
            "accelerate.utils.gather_object. With ACCELERATE_DEBUG_MODE=1 (or torchdoctor launch --debug) the shapes "
            "are checked before the gather and named, each rank's with its line."
        )
    elif "size_a" in facts and ctx.facts.get("saw_lightning_gather"):
        summary += "; in Lightning's all_gather: the ranks' tensors differ in shape"
        fix = (
            "self.all_gather (Fabric.all_gather) takes a tensor of one shape on every rank. Gather each rank's size "
            "of the dimension d that differs first (self.all_gather(torch.tensor(x.shape[d], device=self.device))), "
            "pad x along d to the largest (torch.nn.functional.pad), gather, then cut each rank's part back to its "
            "own size; or gather Python objects with torch.distributed.all_gather_object. torchdoctor launch "
            "--debug checks the shapes before the gather and names each rank's with its line."
        )
    elif ctx.facts.get("framework") == "lightning":
        # Lightning's own collectives that a rank condition hides: found with self.log(..., sync_dist=True)
        # under `if self.global_rank == 0:` in its bug_report_model.py on 2 CPU ranks
        fix += LIGHTNING_COLLECTIVES
    return summary, fix


# deepspeed/runtime/zero/utils.py assert_ints_same_as_other_ranks, before 0.17.6 and from it
ZERO3_CHECK = (
    "disagreement between rank0 and rank",
    "Detected a disagreement on list length between rank0 and rank",
    "Detected a disagreement on list contents between rank0 and rank",
)


def _not_zero3_check(hits: list[Hit], ctx: Context) -> bool:
    """Certain on a specific anchor other than ZeRO-3's own check (only lowers the anchors' certainty)."""
    return any(h.specific and h.anchor not in ZERO3_CHECK for h in hits)


_not_zero3_check.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


RANK_DIVERGENCE = Recogniser(
    # torch c10d ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL), DDP's model verification,
    # NCCL init.cc / net_ib.cc / enqueue mismatch warnings, gloo pair.cc (accelerate's shape check is
    # gather_shapes: its ranks all joined the same exchange)
    kind="rank_divergence",
    templates=(
        "torch_cpp:detected-mismatch-between-collectives-on-ranks",
        # ProcessGroupWrapper.cpp's CollectiveFingerPrint::compute_collective_diff: the same check's second part,
        # appended to the message above (on a line of its own where a log wraps it)
        "torch_cpp:collectives-differ-in-the-following-aspects",
        "nccl:mismatched-collective-detected-please-check-your",
        # init.cc ncclCommGetAsyncError (2.4.2-2.7.6): the device's suspected mismatch, a kernel that waited long
        "nccl:your-program-may-be-hanging-this",
        "nccl:net-ib-req-tag-peer-collective",
        "nccl:message-truncated-received-bytes-instead-of",
        "nccl:net-socket-peer-message-truncated-receiving",
        # gloo transport/tcp/pair.cc: a peer sent more bytes than this rank's buffer holds
        "torch_native:gloo-collective-size-mismatch",
        # torch/distributed/fsdp/_exec_order_utils.py (TORCH_DISTRIBUTED_DEBUG=INFO/DETAIL): FSDP's all-gathers
        # checked across ranks on the first iteration
        "torch:forward-order-differs-across-ranks",
        "torch:rank-is-all-gathering-parameters-while",
        "torch:rank-is-all-gathering-parameters-for",
        # deepspeed/runtime/zero/utils.py assert_ints_same_as_other_ranks: ZeRO-3's ranks compare the ids of the
        # modules and parameters they fetched (before 0.17.6 one message; from it the list's length, then contents)
        "deepspeed:disagreement-between-rank0-and-rank-rank0",
        "deepspeed:detected-disagreement-on-list-length-between",
        "deepspeed:detected-disagreement-on-list-contents-between",
        # a dump of a rank standing in a DeepSpeed save the other ranks never called (kinds/deepspeed_saves.py)
        *deepspeed_saves.TEMPLATES,
    ),
    title="ranks ran different collectives",
    anchors=(
        "Detected mismatch between collectives on ranks",
        "Collectives differ in the following aspects",
        "is running inconsistent collective",
        "Mismatched collective detected",
        "may be caused by a collective mismatch around rank",
        "collective mismatch error",
        "op.preamble.length <= op.nbytes",
        "Message truncated : received",
        "message truncated : receiving",
        "Forward order differs across ranks",
        "is all-gathering ",
        *ZERO3_CHECK,
        *deepspeed_saves.ANCHORS,
    ),
    # NCCL's socket transport says it itself: a truncated message is different collective sizes on the ranks,
    # or settings (NCCL_PROTO, NCCL_ALGO) that differ between them, or an unhealthy network.
    # bootstrap.cc's "Message truncated : received N bytes instead of M" (socketRecv, socketSendRecv) is not the
    # user's data: it is the size of a message NCCL's own bootstrap exchanges while it sets a communicator or a
    # peer connection up (transport.cc's connect info): ranks at different steps of that set-up (a collective or
    # send/recv one rank skipped), NCCL releases that differ between the hosts (their messages differ in size)
    # or settings that differ all print it — only likely any of them.
    # NCCL 2.4-2.7's "Your program may be hanging, this may be caused by a collective mismatch around rank N" is its
    # device's suspicion (ncclDevSuspectedMismatch: a kernel that waited long), which a slow or dead rank raises
    # as well: only likely
    generic=(
        "message truncated : receiving",
        "Message truncated : received",
        "may be caused by a collective mismatch around rank",
        *deepspeed_saves.ANCHORS,
    ),
    # ZeRO-3's own check (zero/utils.py assert_ints_same_as_other_ranks) is posted as a DeepSpeed bug as often as a
    # forward that differs per rank (DeepSpeed#1960, #5799: the ranks' lists hold numbers no id has, or the same
    # model runs clean on another release): the message alone does not tell them apart, so it is only likely
    confirm=_not_zero3_check,
    also=(
        Alternative(
            "library_version_bug",
            "a DeepSpeed or trainer-library release whose ZeRO-3 trace of the modules goes wrong on a forward that is "
            "the same on every rank",
            "If every rank runs the same modules each step (no branch on the data, no MoE routing, no generate), "
            "upgrade DeepSpeed (pip install -U deepspeed) and the trainer library that drives it, or train with "
            "ZeRO-2; report the versions to DeepSpeed if it persists.",
            when=("zero3_rank",),
        ),
        Alternative(
            "nccl_env_value",
            "NCCL settings that differ between the ranks",
            "Set the NCCL_* variables the same on every host, or unset them (NCCL_PROTO, NCCL_ALGO above all): "
            "env | grep NCCL_ on each host, and the job script's exports.",
            # gloo's own check, ZeRO-3's, a DeepSpeed save some ranks never called: not NCCL's exchange
            unless=("gloo_sizes", "zero3_rank", "ds_save_wait", "ds_save_wait_spy", "nccl_suspected"),
        ),
        Alternative(
            "collective_timeout",
            "a rank slow or stuck elsewhere (in its data loading, an evaluation or a save on one rank) while the "
            "others waited in the collective",
            "Find what the rank NCCL names was doing at that moment (its own log, py-spy dump --pid <pid>); "
            "where the ranks do call the same collectives, let the slow work run on every rank or wait for it "
            "in a dist.barrier().",
            when=("nccl_suspected",),
        ),
        Alternative(
            "nccl_version_mismatch",
            "NCCL releases that differ between the hosts (NCCL's own set-up messages differ in size)",
            "Compare the NCCL each host loads: python -c 'import torch; print(torch.cuda.nccl.version())' on every "
            'host (and NCCL_DEBUG=INFO\'s "NCCL version" line of each rank); install the same torch (and the same '
            "nvidia-nccl-cu* wheel, or LD_LIBRARY_PATH's libnccl) everywhere.",
            when=("bootstrap_truncated",),
        ),
    ),
    facts=(
        R(
            r"Rank (?P<rank_a>\d+) is running (?:inconsistent )?collective: CollectiveFingerPrint\("
            r"(?:SequenceNumber=(?P<seq>\d+),?\s*)?OpType=(?P<op>\w+)"
            r"(?:,\s*TensorShape=\[(?P<shape>[^\]]{0,200})\])?(?:,\s*TensorDtypes=(?P<dtype>\w+))?"
        ),
        R(
            r"but Rank (?P<rank_b>\d+) is running (?:inconsistent )?collective: CollectiveFingerPrint\("
            r"(?:SequenceNumber=\d+,?\s*)?OpType=(?P<op_b>\w+)(?:,\s*TensorShape=\[(?P<shape_b>[^\]]{0,200})\])?"
        ),
        R(r"local size (?P<size_a>\d+) remote size (?P<size_b>\d+)"),
        # "Collectives differ in the following aspects: \t Sequence number: 1649vs 0  Op type: BARRIERvs GATHER"
        R(r"Collectives differ in the following aspects:\s*(?P<aspects>[^\n]{1,200})"),
        R(r"(?P<gloo_sizes>op\.preamble\.length <= op\.nbytes)\. (?P<size_a>\d+) vs (?P<size_b>\d+)"),
        R(r"receiv(?:ed|ing) (?P<size_a>\d+) bytes instead of (?P<size_b>\d+)"),
        R(r"(?P<bootstrap_truncated>Message truncated : received)"),
        R(r"around rank (?P<rank_a>\d+)"),
        R(r"(?P<nccl_suspected>Your program may be hanging, this may be caused by a collective mismatch)"),
        R(r"disagreement (?:on list (?:length|contents) )?between rank0 and rank(?P<zero3_rank>\d+)"),
        # rank 0's list holding numbers of 13 digits or more: no module or parameter id is that large
        R(r"between rank0 and rank\d+:\s*rank0:\s*\[(?:-?\d{1,12}, )*(?P<zero3_garbled>-?\d{13,})"),
        R(
            r"rank (?P<fsdp_rank_a>\d+) is all-gathering (?P<fsdp_a>[^\n]{1,120}?) while rank (?P<fsdp_rank_b>\d+) is "
            r"all-gathering (?P<fsdp_b>[^\n]{1,120}?)\s*$"
        ),
        deepspeed_saves.WAITING,
    ),
    reject=deepspeed_saves.NOT_WAITING,
    describe=_divergence,
)


def _peer_gone(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if not any("host" in h.facts or "peer_line" in h.facts for h in hits) and any(
        "aborted_rank" in h.facts for h in hits
    ):
        reason = first(hits, "abort_reason")
        summary = f"the NCCL communicator was aborted on rank {first(hits, 'aborted_rank')}" + (
            f" (original reason: {quote(reason)})" if reason else ""
        )
        return summary, (
            "ProcessGroupNCCL aborts a communicator after a failure and every later use of it raises this: "
            "its watchdog's timeout or NCCL error (the original reason, when named), or another rank's failure "
            "it was told of. It is what a failure led to, not a cause of its own: the first failure in the "
            "logs (the rank that failed or hung first) is. Pass every rank's log to explain."
        )
    if not any("host" in h.facts or "peer_line" in h.facts for h in hits) and first(hits, "store_gone"):
        return (
            "the TCPStore went away while ProcessGroupNCCL's heartbeat monitor still read it "
            f"({first(hits, 'store_error')})" + on_ranks(hits),
            "The store lives in rank 0's process (torchrun's agent with --rdzv-backend=c10d): that process ended "
            "before this one. Either it failed first (its own log, or torchrun's summary, has the cause: pass "
            "every rank's log to explain), or it finished while the others still trained (the ranks ran "
            "different numbers of steps or batches): end every rank the same way, with "
            "dist.barrier() and destroy_process_group() before exit.",
        )
    host = first(hits, "host")
    loader = [h for h in hits if "host" not in h.facts] if ctx.facts.get("loader_handoff") else []
    if loader:
        return _worker_gone(loader, [h for h in hits if "host" in h.facts])
    summary = (
        "a peer closed the connection" + (f" ({host}:{first(hits, 'port')})" if host else "") + on_ranks(hits)
    )
    reason = first(hits, "socket_reason")
    if reason and not any("peer_line" in h.facts for h in hits):
        # NCCL's own socket to a peer failed (its ncclRemoteError): a reset is the peer's process gone, a timed-out
        # connection its host or the network between them
        where = f" {first(hits, 'socket_op')} {host}:{first(hits, 'port')}" if host else ""
        summary = (
            f"NCCL's connection to a peer failed ({where.strip() + ': ' if where else ''}{reason.strip()})"
        )
        summary += on_ranks(hits)
        return summary, (
            "NCCL reports this as a remote error: the peer's process ended (it failed or was killed first: its "
            "own log has the cause), or its host dropped off the network (a reset or a timed-out connection "
            "with no error on the peer: the link, a switch, the host rebooting). Pass every rank's log to "
            "explain; if the peer shows no error, test the link between the hosts (ping, ib_write_bw) and "
            "read the peer host's dmesg."
        )
    if no_other_rank_failed(ctx) and any("peer_line" in h.facts for h in hits):
        # torchrun says this was the only rank that failed: the peer exited without an error, mid-collective
        # (peer_ended_quietly below says the same for verdict.py)
        return (
            summary + ", and torchrun names no other rank that failed: the peer finished without an error",
            (
                "A rank exited normally while this one still waited in a collective with it: the ranks did not make "
                "the same collective calls. One made fewer (a rank-dependent condition, an early return or break, "
                "a different number of batches per rank), or a collective's tensor differs in size between ranks "
                "(gloo then completes on one side only). `torchdoctor launch --debug` (or "
                "TORCH_DISTRIBUTED_DEBUG=DETAIL) checks every collective's operation and shapes across the ranks and "
                "names the one that differs, with the line."
            ),
        )
    quiet = sorted(ctx.ranks - {h.rank for h in hits} - {None} - ctx.erring_ranks)
    if quiet and not ctx.cause_ranks and any("peer_line" in h.facts for h in hits):
        # every other rank's log is in the input and none of them shows an error: the peer ended without one
        named = ", ".join(map(str, quiet))
        return (
            summary + f"; the log of rank {named} is here and shows no error: it ended without raising one",
            (
                f"Rank {named} stopped without an error while this one still waited in a collective with it. Either "
                "it made fewer collective calls and exited normally (a rank-dependent condition, an early return or "
                "break, a different number of batches per rank, or a collective whose tensor differs in size "
                "between ranks: gloo then completes on one side only), or it was killed without a traceback (the "
                "OOM killer: dmesg | grep -i killed; torchrun's summary in the console says exitcode -9). "
                "`torchdoctor launch --debug` checks every collective's operation and shapes across the ranks and "
                "names the one that differs, with the line."
            ),
        )
    return summary, (
        "The rank on the other side died or was killed first: its own error is the cause, this is the "
        "consequence. Look at that rank's log (pass the folder of every rank's log to explain)."
    )


# a batch a DataLoader worker hands over by file descriptor (torch/multiprocessing/reductions.py rebuild_storage_fd,
# through CPython's multiprocessing/resource_sharer.py): the peer that reset that connection is the worker
LOADER_HANDOFF = R(r"(?P<loader_handoff>in rebuild_storage_fd\b)")
CONTEXT = (("rebuild_storage_fd", LOADER_HANDOFF),)


def _worker_gone(hits: list[Hit], peers: list[Hit]) -> tuple[str, str]:
    """A connection reset while the main process took a batch's tensors from a DataLoader worker: the worker died.
    ``peers``: the other ranks' connections to that rank that closed when it ended (gloo's "Connection closed by
    peer [host]:port"), a consequence of it, not another rank's failure to look for."""
    summary = (
        "a DataLoader worker went away while the main process was taking a batch from it (the connection "
        "reset is the worker's end of the file descriptor it passes a batch's tensors through)"
        + on_ranks(hits)
    )
    ranks = sorted({h.rank for h in peers} - {h.rank for h in hits} - {None})
    ended = sorted({h.rank for h in hits} - {None})
    if ranks and ended:
        summary += (
            f"; {who(ranks)}'s connection ({first(peers, 'host')}:{first(peers, 'port')}) closed when {who(ended)} "
            "ended on it"
        )
    return (
        summary,
        "The worker process died or was killed while it handed the batch over, so its own error is not here: "
        "most often the kernel's OOM killer (dmesg -T | grep -i -E 'killed process|oom'; each worker holds its "
        "own copy of what the dataset reads), or a crash in the dataset's native code. Run with num_workers=0 to "
        "see an error the dataset raises; give the DataLoader fewer workers for memory. When many batches are in "
        "flight, the descriptors can run out too: torch.multiprocessing.set_sharing_strategy('file_system') "
        "passes tensors by file name instead.",
    )


def every_rank_waited(hits: list[Hit], ctx: Context) -> bool:
    """True when the hits are a collective's timeout that every rank torchrun's summary names waited in, none
    late: the collective itself did not complete (what _watchdog says in words)."""
    if not any(h.kind in ("collective_timeout", "nccl_watchdog_timeout") for h in hits):
        return False
    from torchdoctor.explain.ranks import timeout_story

    story = timeout_story(hits, ctx)
    return bool(story["all_waited"]) and not story["late"] and not story.get("stuck_s")


def closed_by_a_timeout(by_kind: dict[str, list[Hit]], ctx: Context) -> str | None:
    """The timeout kind whose ranks, giving up on their collective, closed the connections that the peer's
    "Connection closed by peer" on the other ranks reports (None: no such pair). A rank that times out aborts and
    its peers see their connections closed; a rank that died first prints no timeout of its own. Only where
    every rank the log shows (its lines, torchrun's summary) either timed out or saw its connection closed: a
    third rank, silent or killed, may have closed it by dying first (3 ranks: rank 2 killed, rank 1's connection
    to it closed, rank 0 timed out waiting for both); one torchrun stopped (-15) was still running."""
    from torchdoctor.explain.ranks import hit_rank

    closed = {hit_rank(h) for h in by_kind.get("peer_closed", ())}
    if not closed or None in closed:
        return None
    exits = ctx.facts.get("launcher_exits", {})
    # (a rank torchrun stopped with SIGTERM was still running when the first failure ended the job: no closer)
    known = (set(ctx.ranks) | set(exits)) - {r for r, code in exits.items() if code == -15}
    for kind in ("collective_timeout", "nccl_watchdog_timeout"):
        timed = {hit_rank(h) for h in by_kind.get(kind, ())}
        if timed and None not in timed and not timed & closed and known <= timed | closed:
            return kind
    return None


def peer_finished(hits: list[Hit], ctx: Context) -> bool:
    """True when torchrun's summary names no other failed rank beside the one whose peer closed the connection:
    the peer exited 0 (a signal or an error would be listed), so the cause is the call this rank made and the
    peer did not, at the line this rank waited at, not another rank's error to be found elsewhere."""
    return no_other_rank_failed(ctx) and any("peer_line" in h.facts for h in hits)


def no_other_rank_failed(ctx: Context) -> bool:
    """torchrun's summary says <NO_OTHER_FAILURES> and lists the job's ranks: not a node of a multi-node job
    other than the first (a global rank that is not its local rank), whose torchrun names its own workers only,
    so a peer on another node may have failed unlisted."""
    return bool(ctx.facts.get("no_other_failures")) and not ctx.facts.get("launcher_other_nodes")


def peer_ended_quietly(hits: list[Hit], ctx: Context) -> bool:
    """True when the peer that closed the connection ended without an error: torchrun names no other failed
    rank, or every other rank's log is in the input and none shows one (what _peer_gone says in words)."""
    if not any("peer_line" in h.facts for h in hits):
        return False
    quiet = ctx.ranks - {h.rank for h in hits} - {None} - ctx.erring_ranks
    return no_other_rank_failed(ctx) or bool(quiet and not ctx.cause_ranks)


# The lines a peer's failure is read from: gloo's / NCCL's / the store's socket closed by the other side, and a
# communicator ProcessGroupNCCL aborted after a failure, used again
_PEER_LINES = (
    "Connection closed by",
    "Connection reset by peer",
    "remote process exited or there was a network error",
    # NCCLUtils.cpp getNcclErrorDetailStr: torch's own words for the same ncclRemoteError, often the line kept
    "A call failed possibly due to a network error or a remote process exiting prematurely",
    "Connection was likely closed. Did the remote server shutdown or crash?",
    "NCCL communicator was aborted on rank",
    # Utils.hpp recvBytes / sendBytes (torch 2.x, the store's address between the sentences)
    "Failed to recv, got 0 bytes",
    "Failed to send, sent 0 bytes",
    # NCCL's socket to a peer failing mid-transfer, which NCCL returns as ncclRemoteError ("remote process exited
    # or there was a network error"): misc/socket.cc's "Net : Call to recv from <peer> failed : <errno>"
    # (2.10-2.14), socketProgressOpt's (2.16-2.28; "recv from" or "send to" since 2.25, which reads a reset as the
    # peer closing and so prints this for the rest: a timed-out or unreachable peer), os/linux.cc's
    # ncclOsSocketProgressOpt (2.30); 2.7's include/socket.h "Call to recv failed : <errno>" names no peer
    "Call to recv from",
    "ProgressOpt: Call to ",
    "Call to recv failed",
    # NCCL 2.3's include/socket.h socketSend (SYSCHECKVAL): "Call to write failed : Connection reset by peer"
    "Call to write failed : ",
    # ProcessGroupNCCL's heartbeat monitor (torch 2.4+) polling the TCPStore whose host (rank 0, or torchrun's
    # agent) has gone: 'Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too
    # early), with error: ...'
    'Failed to check the "should dump" flag on TCPStore',
    # torch.distributed.rpc's TensorPipe agent (tensorpipe_agent.cpp) when its pipe to another worker broke: "RPC
    # agent for worker1 encountered error when reading incoming request from worker0: EOF: end of file (this error
    # originated at tensorpipe/transport/shm/connection_impl.cc:259)"
    "encountered error when reading incoming request from",
    "encountered error when reading incoming response from",
    "encountered error when sending outgoing request #",
    # gloo's transport/tcp/pair.cc: IO on a pair whose socket the peer closed before ("Socket closed
    # [10.0.0.2]:44321"), the peer closing it while the pair switched to sync mode, a write the peer's gone socket
    # refused ("writev [10.0.0.2]:44321: Broken pipe")
    "Socket closed [",
    "Socket unexpectedly closed [",
    "writev [",
    # its recv failing on the pair ("Read error [10.0.0.2]:44321: Connection reset by peer")
    "Read error [",
)


PEER_GONE = Recogniser(
    # gloo pair.cc / NCCL socket.cc: "Connection closed by peer", "Connection reset by peer"
    kind="peer_closed",
    templates=(
        "nccl:socketprogress-connection-closed-by-remote-peer",
        "system:connection-reset-by-peer",
        "nccl:remote-process-exited-or-there-was",
        "torch_native:ncclremoteerror-detail",
        # torch/csrc/distributed/c10d/Utils.hpp (recvBytes/sendBytes): the TCPStore's host went away
        "torch_cpp:failed-to-recv-got-bytes-connection-2",
        "torch_cpp:failed-to-send-sent-bytes-connection-2",
        "torch_cpp:failed-to-recv-got-bytes-connection",
        "torch_cpp:failed-to-send-sent-bytes-connection",
        # ProcessGroupNCCL / NCCLUtils.cpp getNcclComm: a communicator the process group aborted (after its
        # watchdog's timeout or an NCCL error, here or reported by another rank) used again
        "torch_native:nccl-communicator-aborted",
        # NCCL's socket to a peer that failed mid-transfer (a reset, a timed-out TCP connection): its ncclRemoteError
        "nccl:net-call-to-recv-from-failed",
        "nccl:socketprogressopt-call-to-recv-from-failed",
        "nccl:socketprogressopt-call-to-failed",
        "nccl:ncclossocketprogressopt-call-to-failed",
        "nccl:ncclossocketprogressopt-call-to-failed-2",
        "nccl:call-to-recv-failed",
        "nccl:call-to-write-failed-socket-h",
        # ProcessGroupNCCL's heartbeat monitor reading the TCPStore after its host (rank 0, the agent) has gone
        "torch_native:should-dump-flag-check-failed",
        # gloo's transport/tcp/pair.cc (its last two sentences since gloo's 2026-02 commit)
        "torch_native:gloo-connection-closed-by-peer",
        "torch_native:gloo-connection-closed-by-peer-remote-crashing",
        "torch_native:gloo-read-error",
        "torch_native:gloo-read-error-remote-hanging",
        "torch_native:gloo-socket-closed",
        "torch_native:gloo-socket-unexpectedly-closed",
        "torch_native:gloo-writev-failed",
    ),
    title="a peer went away",
    role="consequence",
    # what a process prints when another failed first: never a cause, every anchor generic (one list for both)
    anchors=_PEER_LINES,
    generic=_PEER_LINES,
    facts=(
        PEER_CLOSED,
        R(
            r"(?:Socket (?:unexpectedly )?closed|writev|Read error) \[(?P<host>[^\s\]]{1,255})\]:(?P<port>\d+)"
        ),
        R(
            r"(?P<peer_line>Connection (?:closed|reset) by|remote process exited|remote process exiting prematurely|"
            r"Connection was likely closed|"
            r"Failed to (?:recv, got|send, sent) 0 bytes|"
            r"encountered error when (?:reading incoming (?:request|response) from|sending outgoing request #))"
        ),
        # "socketProgressOpt: Call to recv from 10.0.0.2<41230> failed : Connection timed out"
        R(
            r"Call to (?P<socket_op>recv from|send to) (?P<host>[^\s<]{1,255})<(?P<port>\d+)> failed : "
            r"(?P<socket_reason>[^\n]{1,100})"
        ),
        R(r"Call to (?P<socket_op>recv|write) failed ?: (?P<socket_reason>[^\n]{1,100})"),
        R(
            r'(?P<store_gone>Failed to check the "should dump" flag on TCPStore)[^\n]{0,80}?with error: (?P<store_error>[^\n]{1,120})'
        ),
        R(
            r"NCCL communicator was aborted on rank (?P<aborted_rank>\d+)\.\s*(?:Original reason for failure was:\s*"
            r"(?P<abort_reason>[^\n]{1,200}))?"
        ),
    ),
    describe=_peer_gone,
)


# torchrun prints a worker's traceback in its summary only where the entry point is decorated
RECORD_ADVICE = (
    "\nDecorate the entry point with @torch.distributed.elastic.multiprocessing.errors.record so "
    "that torchrun prints the worker's traceback here."
)


def _child_failed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = next((h.facts for h in hits if "exitcode" in h.facts or "signal" in h.facts), hits[0].facts)
    rank, code = facts.get("failed_rank"), facts.get("exitcode")
    host = facts.get("host")
    by = exits.launcher(facts)
    summary = f"{by}: a worker failed"
    if rank is not None:
        summary += f": rank {rank}"
    elif facts.get("local_rank") is not None:
        summary += f": local rank {facts['local_rank']}"
    if host:
        summary += f" on {host}"
    if code is not None:
        named = rank is not None or facts.get("local_rank") is not None
        summary += f" exited with {code}" if named else f", exit code {code}"
        if exits.signal_of(code):
            summary += f" ({exits.signal_of(code)})"
    elif facts.get("signal"):
        summary += f", ended by {facts['signal']}"
    elif any("forced_signal" in h.facts for h in hits):
        summary = (
            f"{by} stopped its workers and killed one that outlived {first(hits, 'closing_signal')} with "
            f"{first(hits, 'forced_signal')}"
        )
    error_file = facts.get("error_file")
    fix = (
        f"This is {by}'s summary; the cause is in that rank's own output above it (its traceback). "
        "Pass every rank's log (the --log-dir folder, or --tee 3 output) to torchdoctor explain."
    )
    ended = exits.how_it_ended(code, facts.get("signal"))
    if ended:
        fix += f"\nHow it ended: {ended}."
    if any("forced_signal" in h.facts for h in hits):
        fix += (
            "\ntorchrun itself killed a worker that was still running when it stopped the others (no OOM killer, "
            "nobody outside): it had not ended on SIGTERM within torchrun's wait, most often stuck in a collective "
            "that waited for the rank that failed first, or in I/O. The first failure in the logs is the cause."
        )
    if error_file and error_file != "<N/A>":
        fix += f"\nIts error file: {error_file}"
    elif code == "1" and by == "torchrun":
        fix += RECORD_ADVICE
    return summary, fix


CHILD_FAILED = Recogniser(
    # torch distributed/elastic/multiprocessing/errors/__init__.py (ChildFailedError format), elastic agent
    kind="child_failed",
    title="a worker failed",
    role="consequence",
    # and every other launcher's summary of a worker that failed (kinds/exits.py)
    anchors=(
        "Root Cause (first observed failure)",
        "ChildFailedError",
        "failed (exitcode:",
        *exits.ANCHORS,
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "mpirun detected that one or more processes exited with non-zero status",
    ),
    templates=(
        "torch:failed-exitcode-local-rank-pid-of",
        "torch:failed-exitcode-local-rank-pid-of-2",
        *exits.TEMPLATES,
    ),
    reject=exits.NOT_A_WORKER,
    # torchrun's summary names the rank that failed, never why: alone it is only a lead to that rank's log
    confirm=lambda hits, ctx: False,
    span=8,
    facts=(
        R(r"host\s*:\s*(?P<host>\S{1,255})"),
        R(r"\brank\s*:\s*(?P<failed_rank>\d+)"),
        R(r"exitcode\s*:\s*(?P<exitcode>-?\d+)"),
        R(r"error_file\s*:\s*(?P<error_file>\S{1,500})"),
        R(r"local_rank:\s*(?P<local_rank>\d+)"),
        *exits.FACTS,
    ),
    also=(
        Alternative(
            "local_rank_argument",
            "the script's argument parser refusing its command line (argparse exits with code 2), most often "
            "the --local_rank / --local-rank a launcher adds",
            "Run one worker's command by hand to see argparse's message; torch.distributed.launch and the "
            "deepspeed launcher pass --local_rank=N (torch 2.x: --local-rank=N): accept both spellings "
            "(parser.add_argument('--local-rank', '--local_rank', type=int, default=0)) or use torchrun, which "
            "passes nothing and sets LOCAL_RANK.",
            when=("argparse_exit",),
        ),
        Alternative(
            "broken_install",
            "a command the job runs that is not installed where it runs (the shell's exit status 127)",
            "Run the worker's command by hand on that node, in the job's environment (which torchrun python; "
            "module load / conda activate in the job script), and install or put on PATH what it cannot find.",
            when=("not_found_exit",),
        ),
    ),
    describe=_child_failed,
)


def _shutdown(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    fix = (
        "End the script the same way on every rank, after everything that talks to the other ranks or runs in "
        "the background is done:\n"
        "    wandb.finish()          # and other loggers / DataLoader workers / threads\n"
        "    dist.barrier()          # every rank reaches the end (no rank-0-only work still running)\n"
        "    dist.destroy_process_group()   # the default group and, with it, every group made by new_group\n"
        "A rank that returns early (or a logger process still running) leaves the others waiting in their last "
        "collective, or keeps the job alive after training."
    )
    stuck = ctx.facts.get(EXIT_HANG)
    if stuck:
        # the watchdog timed out after the exit warning, in the same log: the process was exiting, not training
        return (
            "the run hung at exit: the process group was never destroyed" + on_ranks(hits) + ", and "
            f"ProcessGroupNCCL's watchdog {stuck} after that warning, while the process was tearing its groups down "
            "(training had ended): without destroy_process_group, Python's exit destroys the communicators of "
            "every process group (data, tensor, expert parallel) in no agreed order across the ranks",
            fix
            + "\nA framework that makes many groups (Megatron's model- and expert-parallel groups) needs them "
            "destroyed by the same call at the end of its run: update it to a release that does, or call "
            "dist.destroy_process_group() after its training returns.",
        )
    return (
        "the process group was never destroyed: the run ended without destroy_process_group"
        + on_ranks(hits)
        + " — torch prints this as the process exits: a run that hung or crashed after training finished did so "
        "at this exit; every process that crashes earlier prints it too on its way out, so alone it does not say "
        "why a run failed",
        "If the run stopped before training finished, this warning is a side effect of the crash: the cause is the "
        "first Traceback or error above it (on any rank's log; none that explain knows is in this one). If it "
        "finished and then hung or crashed at exit: " + fix[0].lower() + fix[1:],
    )


# a fact set on the log when the watchdog timed out after the exit warning (exit_hang): what the watchdog did
EXIT_HANG = "exit_hang"


def exit_hang(by_kind: dict[str, list[Hit]], ctx: Context) -> bool:
    """Whether ProcessGroupNCCL's watchdog timed out after the exit warning in the same log (a hang at exit).

    ~ProcessGroupNCCL prints the warning when the process is exiting, so a watchdog that times out (or gets
    stuck) later in the same file timed out during that exit, not in training. Notes on ``ctx.facts`` what the
    watchdog did, for the finding's words.
    """
    warned, timed = by_kind.get("shutdown_hang", []), by_kind.get("nccl_watchdog_timeout", [])
    after = [t for t in timed if any(w.source == t.source and w.order < t.order for w in warned)]
    if not after:
        return False
    stuck = first(after, "stuck_s")
    ctx.facts[EXIT_HANG] = f"got stuck for {stuck} s" if stuck else "timed out"
    return True


SHUTDOWN_HANG = Recogniser(
    # torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (torch 2.4+), printed from ~ProcessGroupNCCL at exit
    kind="shutdown_hang",
    title="exit without destroy_process_group",
    # the warning's wordings across releases (catalog torch_native.tsv): 2.4's nightlies, 2.4-2.5, 2.6+, and the
    # one a 2026 nightly prints
    anchors=(
        "has NOT been destroyed before we destruct",
        "has NOT been destroyed before it is being destructed",
        "destroy_process_group() was not called before program exit",
        "must call destroy_process_group() before process exit",
    ),
    templates=(
        "torch_native:process-group-has-not-been-destroyed",
        "torch_native:process-group-not-destroyed-before-destructed",
        "torch_native:destroy-process-group-not-called-before-exit",
        "torch_native:must-call-destroy-process-group-before-exit",
    ),
    # every run that exits without cleaning up prints it, healthy or not: a finding only when nothing else in
    # the log explains the failure (or the watchdog timed out after it: exit_hang), and then only likely
    fallback=True,
    confirm=lambda hits, ctx: False,
    describe=_shutdown,
)


RECOGNISERS = (
    DDP_MODEL_MISMATCH,
    RANK_DIVERGENCE,
    WATCHDOG_TIMEOUT,
    COLLECTIVE_TIMEOUT,
    PEER_GONE,
    CHILD_FAILED,
    SHUTDOWN_HANG,
)
