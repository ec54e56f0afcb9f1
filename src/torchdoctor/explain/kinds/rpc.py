"""torch.distributed.rpc: a remote call or an RRef that timed out, and RPC used before (or after) init_rpc.

The message texts are torch's: ``torch/csrc/distributed/rpc/rpc_agent.h`` / ``tensorpipe_agent.cpp`` ("RPC ran for
more than set timeout ({} ms) and will now be marked with an error": an rpc_sync / rpc_async / remote call whose
answer did not come within its timeout, 60 s by default), ``rref_impl.cpp`` UserRRef::toHere and
``rref_context.cpp`` prepareChildFork ("RRef creation via rpc.remote() timed out, and it is possible that the RRef on
the owner node does not exist.": the rpc.remote that made the RRef timed out, and to_here() or passing the RRef on
says so), ``rref_context.cpp`` delAllUsersAndUnforkedOwners ("Timed out waiting for pending UserRRefs to be
confirmed by owner and parent.", rpc.shutdown's wait), and ``torch/distributed/rpc/api.py`` (``_all_gather``'s
"Followers ... timed out in _all_gather after ... seconds", the leader's wait in init_rpc's and shutdown's
all-gather; "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.") and init_rpc's checks of
its backend and its options (``__init__.py``, ``backend_registry.py``, ``options.py``), each certain once a real
log shows it; CUDA tensors sent without a device map (``tensorpipe_agent.cpp``) and device maps init_rpc refuses
are ``rpc_device_map``.

A timeout names no cause: the callee was slow (a long function, a big tensor), blocked (its RPC threads all waiting
on nested blocking calls: ``num_worker_threads``, 16 by default), or gone (it failed or exited first). So the kind is
always likely, its fix naming each.
"""

from __future__ import annotations

from dataclasses import replace

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "rendezvous and network"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_TIMEOUT_FIX = (
    "A remote call's answer did not come within its timeout (60 s unless set). The callee was either slow, "
    "blocked or gone:\n"
    "- gone: the worker the call went to failed or exited first: its own log has the cause (pass every worker's "
    "log to explain);\n"
    "- blocked: every RPC thread of the callee waits on a blocking call of its own (rpc_sync or to_here() inside "
    "a function run over RPC): make the inner calls rpc_async and return the future, or give it more threads: "
    "TensorPipeRpcBackendOptions(num_worker_threads=64);\n"
    "- slow: the function or the transfer takes longer than the timeout: raise it for the call, "
    "rpc.rpc_sync(to, fn, args, timeout=300) / rpc.remote(..., timeout=300), or for every call, "
    "TensorPipeRpcBackendOptions(rpc_timeout=300) in init_rpc (0 waits forever)."
)
_SHUTDOWN_FIX = (
    "rpc.shutdown() waits for every worker to reach it and for the RRefs they share to be confirmed: a worker "
    "that failed, exited without calling rpc.shutdown(), or is still busy keeps the others waiting. Read that "
    "worker's own log for its error; call rpc.shutdown() on every worker (graceful, the default), after the "
    "work each does, and let no RRef outlive it (set them to None before shutdown)."
)


def _timeout(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    waited = first(hits, "rpc_timeout_ms")
    if first(hits, "rref_timeout"):
        summary = "an rpc.remote() call timed out, so the RRef it returned may not exist on its owner"
    elif first(hits, "shutdown_wait") or first(hits, "followers"):
        late = first(hits, "followers")
        summary = "RPC's shutdown (or init_rpc's sync) timed out waiting for the other workers" + (
            f" ({late} did not answer)" if late else ""
        )
        return summary + on_ranks(hits), _SHUTDOWN_FIX
    else:
        summary = "a remote call (rpc_sync / rpc_async / remote) timed out" + (
            f" after {int(waited) / 1000:g} s" if waited else ""
        )
    return summary + on_ranks(hits), _TIMEOUT_FIX


RPC_TIMEOUT = Recogniser(
    kind="rpc_timeout",
    title="a remote call that timed out",
    anchors=(
        "RPC ran for more than set timeout",
        "RRef creation via rpc.remote() timed out",
        "Timed out waiting for pending UserRRefs to be confirmed by owner and parent",
        "timed out in _all_gather after",
    ),
    templates=(
        "torch_cpp:rpc-ran-for-more-than-set",  # tensorpipe_agent.cpp (rpc_agent.h's kRpcTimeoutErrorStr)
        "torch_native:rref-creation-timed-out",  # rref_impl.cpp, rref_context.cpp
        "torch_cpp:timed-out-waiting-for-pending-userrrefs",  # rref_context.cpp
        "torch:followers-timed-out-in-all-gather",  # torch/distributed/rpc/api.py
    ),
    facts=(
        R(r"RPC ran for more than set timeout \((?P<rpc_timeout_ms>\d+) ms\)"),
        R(r"(?P<rref_timeout>RRef creation via rpc\.remote\(\) timed out)"),
        R(r"(?P<shutdown_wait>Timed out waiting for pending UserRRefs)"),
        R(
            r"Followers (?P<followers>\[[^\]\n]{1,200}\]|\{[^}\n]{1,200}\}|\S{1,200}) timed out in _all_gather"
        ),
    ),
    describe=_timeout,
    # the kind is what stopped the run, but its line never says which of the three reasons (slow, blocked, gone)
    confirm=lambda hits, ctx: False,
)

_DEVICE_MAP = (
    "TensorPipe's device map sends a tensor on a local GPU to one GPU of the named worker: "
    "options = rpc.TensorPipeRpcBackendOptions(); options.set_device_map('worker1', {0: 1}) maps local cuda:0 to "
    "worker1's cuda:1. Name workers as they were given to init_rpc, use indices below each node's "
    "torch.cuda.device_count() (after CUDA_VISIBLE_DEVICES), map each device once (1-to-1, both ways), and list in "
    "set_devices / devices= the CUDA devices the maps use."
)

_INIT_ARGS = (
    "init_rpc(name, backend=rpc.BackendType.TENSORPIPE, rank=rank, world_size=world_size, "
    "rpc_backend_options=rpc.TensorPipeRpcBackendOptions(init_method='tcp://host:port', num_worker_threads=16)): "
    "the backend is a BackendType member (not a string), its options a TensorPipeRpcBackendOptions (the process "
    "group backend and its options are gone since torch 1.11)."
)

RPC_REFUSED = refusal_recogniser(
    kind="rpc_call_refused",
    title="torch.distributed.rpc used outside init_rpc, or init_rpc given options it refuses",
    refusals=(
        (
            "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.",
            "This process called rpc_sync / rpc_async / remote (or an RRef's method) before init_rpc, or after "
            "rpc.shutdown(): call rpc.init_rpc(name, rank=rank, world_size=world_size) in every process that makes "
            "or serves remote calls (in the worker function itself under mp.spawn, not in the parent), before the "
            "first call, and shut it down after the last.",
        ),
        (
            "RPC is already initialized",
            "init_rpc was called twice in one process: call it once per process (rpc.shutdown() before another).",
        ),
        # torch/distributed/rpc/__init__.py init_rpc, backend_registry.py's TensorPipe handler, options.py
        ("Argument backend must be a member of BackendType", _INIT_ARGS),
        ("Argument rpc_backend_options must be an instance of RpcBackendOptions", _INIT_ARGS),
        ("`rpc_backend_options` must be a `TensorPipeRpcBackendOptions`.", _INIT_ARGS),
    ),
    templates=(
        "torch:rpc-has-not-been-initialized-call",  # torch/distributed/rpc/api.py
        "torch:rpc-is-already-initialized",  # torch/distributed/rpc/__init__.py
        "torch:argument-backend-must-be-member-of",
        "torch:argument-rpc-backend-options-must-be",
        "torch:rpc-backend-options-must-be-tensorpiperpcbackendoptions",
    ),
)

_NO_MAP = (
    "TensorPipe sends CUDA tensors over RPC only along a device map, and none was set for the worker the tensor "
    "was going to (the destination the message names: for a call's arguments the callee, for a returned value the "
    "caller). Set it in each process's options before init_rpc, keyed by the *peer's* name as given to init_rpc, "
    "not this worker's own: options.set_device_map('worker1', {0: 1}) sends local cuda:0 to worker1's cuda:1 "
    "(and a map back from the peer for the values it returns); or move the tensors to the CPU (.cpu()) before "
    "they are sent and returned."
)

_DESTINATION = R(r"device mapping is not available for destination (?P<rpc_destination>[\w.:-]{1,80})")


def _naming_the_destination(describe):
    """``describe``, with the worker the message says has no map named first, and in the fix's call."""

    def described(hits: list[Hit], ctx: Context) -> tuple[str, str]:
        summary, fix = describe(hits, ctx)
        destination = first(hits, "rpc_destination")
        if not destination:
            return summary, fix
        return (
            f"CUDA tensors sent over RPC to {destination}, with no TensorPipe device map for it{on_ranks(hits)}",
            fix.replace(
                "set_device_map('worker1', {0: 1}) sends local cuda:0 to worker1's cuda:1",
                (f"set_device_map('{destination}', {{0: 1}}) sends local cuda:0 to {destination}'s cuda:1"),
            ),
        )

    return described


_RPC_DEVICE_MAP = refusal_recogniser(
    kind="rpc_device_map",
    title="CUDA tensors sent over RPC without a device map, or a device map TensorPipe refuses",
    refusals=(
        # tensorpipe_agent.cpp getDevicesForTensors: "Request device mapping is not available for destination"
        # since torch 1.9, "Response device mapping ..." on the callee's answer in 1.8
        ("TensorPipe RPC backend only supports CPU tensors by default", _NO_MAP),
        ("device mapping is not available for destination", _NO_MAP),
        # torch/distributed/rpc/options.py and backend_registry.py: init_rpc's checks of the maps
        ("has duplicated devices", _DEVICE_MAP),
        ("has devices with invalid indices", _DEVICE_MAP),
        ("has invalid target node names in its device maps", _DEVICE_MAP),
        ("has duplicated target devices in its device map for", _DEVICE_MAP),
        ("has unexpected source devices in its device map for", _DEVICE_MAP),
        ("has source devices with invalid indices in its device map for", _DEVICE_MAP),
        ("has unexpected target devices in its device map for", _DEVICE_MAP),
        ("has target devices with invalid indices in its device map for", _DEVICE_MAP),
        ("`set_devices` expect a list of CUDA devices, but got device type", _DEVICE_MAP),
        ("only supports 1-to-1 mapping, trying to map", _DEVICE_MAP),
    ),
    templates=(
        "torch_cpp:tensorpipe-rpc-backend-only-supports-cpu",  # tensorpipe_agent.cpp
        "torch_cpp:request-device-mapping-is-not-available",  # tensorpipe_agent.cpp
        "torch:node-has-duplicated-devices-devices",
        "torch:node-has-devices-with-invalid-indices",
        "torch:node-has-invalid-target-node-names",
        "torch:node-has-duplicated-target-devices-in",
        "torch:node-has-unexpected-source-devices-in",
        "torch:node-has-source-devices-with-invalid",
        "torch:node-has-unexpected-target-devices-in",
        "torch:node-has-target-devices-with-invalid",
        "torch:set-devices-expect-list-of-cuda",
        "torch:device-map-only-supports-to-mapping",
        "torch:set-device-map-only-supports-to",
    ),
    facts=(_DESTINATION,),
)
RPC_DEVICE_MAP = replace(_RPC_DEVICE_MAP, describe=_naming_the_destination(_RPC_DEVICE_MAP.describe))

RECOGNISERS = (RPC_TIMEOUT, RPC_REFUSED, RPC_DEVICE_MAP)
