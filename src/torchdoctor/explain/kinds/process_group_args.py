"""A process group created with arguments torch refuses, before any rank is contacted.

The checks are torch's own (``torch/distributed/distributed_c10d.py``: ``init_process_group``,
``_check_valid_timeout``, ``new_group``, ``new_subgroups``, ``new_subgroups_by_enumeration``, ``split_group``;
``torch/distributed/rendezvous.py``, the handlers of the ``tcp://`` and ``file://`` init methods and
``_create_c10d_store``), worded the same from torch 1.x to 2.13 but where noted. Each message names its own
cause, so the finding is certain: the default group was already made in this process (the script and a framework
both call init_process_group), an init method URL without the rank and world size it needs, a port out of range, a
store passed beside an init method, a timeout that is not a ``timedelta``, a ``device_id`` without an index, or a
sub-group whose ranks the run does not have (a parallel layout larger than the processes launched).
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import describe_refusal, refused
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TWICE_FIX = (
    "init_process_group ran a second time in this process: the script and a framework that already made the "
    "process group both call it (accelerate's Accelerator / PartialState, Lightning's Trainer, "
    "deepspeed.initialize / deepspeed.init_distributed, transformers' Trainer and TrainingArguments, Ray Train's "
    "TorchTrainer, whose TorchConfig backend makes it in every worker before train_loop_per_worker runs), or a "
    "function that calls it runs twice. Make it once:\n"
    "    if not torch.distributed.is_initialized():\n"
    "        torch.distributed.init_process_group(backend='nccl')\n"
    "or leave it to the framework and drop the script's own call."
)

# (fact, what went wrong, how to call it instead)
_CLASSES = (
    ("twice", "init_process_group was called twice in one process", TWICE_FIX),
    (
        "url_missing",
        "the init method URL lacks what torch needs to build the process group",
        "init_method='tcp://HOST:PORT' and 'file:///path' carry no rank or world size of their own: pass them, "
        "init_process_group(backend, init_method='tcp://10.0.0.1:23456', rank=RANK, world_size=WORLD_SIZE), "
        "with the port in the URL. Under torchrun (or any launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and "
        "MASTER_PORT) use init_method='env://', the default, and pass neither.",
    ),
    (
        "ipv6_port",
        "an IPv6 address went into a URL without brackets, so its colons were read as the one before the port",
        "Put an IPv6 address in brackets wherever it goes into a URL with a port: init_method=f'tcp://[{addr}]:"
        "{port}', e.g. tcp://[fd00::1]:29500 (Python's urllib, which torch's tcp:// rendezvous parses the URL "
        "with, reads the text after the last colon as the port). An IPv4 address or a host name needs none; "
        "MASTER_ADDR for env:// takes the address alone, without brackets.",
    ),
    (
        "bad_type",
        "init_process_group was given a rank, world size or init method of the wrong type",
        "rank and world_size are integers and init_method a string: values read from the environment are "
        "strings, convert them, init_process_group('nccl', init_method='tcp://10.0.0.1:23456', "
        "rank=int(os.environ['RANK']), world_size=int(os.environ['WORLD_SIZE'])); under torchrun pass neither "
        "(init_method='env://' reads them itself).",
    ),
    (
        "url_and_args",
        "the init method URL already names the rank and world size, and they were passed again",
        "Give them once: either in the URL (init_method='tcp://HOST:PORT?rank=R&world_size=N') or as arguments "
        "(init_method='tcp://HOST:PORT', rank=R, world_size=N), not both.",
    ),
    (
        "bad_port",
        "the store's port is out of range",
        "The port (MASTER_PORT, --master_port, the init_method URL's, or one a script computed from a job id) "
        "must be 0-65535: pick a free one such as 29500 (0 lets torch pick on the host that serves the store).",
    ),
    (
        "store_and_url",
        "init_process_group was given both a store and an init method",
        "Pass one of them: store=TCPStore(...) with rank= and world_size=, or init_method= (env:// by default), "
        "not both.",
    ),
    (
        "store_ranks",
        "init_process_group was given a store without its rank and world size",
        "With store=..., pass rank= and world_size= as well: init_process_group(backend, store=store, "
        "rank=int(os.environ['RANK']), world_size=int(os.environ['WORLD_SIZE'])).",
    ),
    (
        "bad_timeout",
        "the timeout given is not a datetime.timedelta",
        "Pass the timeout as a timedelta: init_process_group(..., timeout=datetime.timedelta(minutes=30)) (and "
        "new_group(timeout=...) the same); a number of seconds is refused.",
    ),
    (
        "unknown_backend",
        "init_process_group was given a backend name or 'device:backend' string torch does not accept",
        "Name one torch has: backend='nccl' (CUDA), 'gloo' (CPU), 'mpi', or both as 'cpu:gloo,cuda:nccl' "
        "(device:backend pairs, comma-separated, each device once). Another accelerator's backend exists only "
        "once its package is imported before init_process_group (Ascend's 'hccl': import torch_npu; Intel's "
        "'ccl': import oneccl_bindings_for_pytorch).",
    ),
    (
        "group_ranks",
        "a sub-group names ranks or a size the run does not have",
        "The ranks of a sub-group (new_group, new_subgroups, split_group, the dimensions of a DeviceMesh or of a "
        "framework's tensor / pipeline / data parallel layout) must lie in 0..world_size-1, and sub-groups of "
        "one size must divide the world: launch as many processes as the layout needs (tensor x pipeline x data "
        "parallel sizes = torchrun --nnodes x --nproc_per_node), or shrink the layout to the processes launched; "
        "ranks written down for another job size are the other usual cause.",
    ),
    (
        "group_duplicates",
        "a sub-group lists a rank twice",
        "Name each rank once in a group's ranks, and, with new_subgroups_by_enumeration / split_group, each rank "
        "in one sub-group only: build the lists from range(world_size) (e.g. [list(range(i, i + k)) for i in "
        "range(0, world_size, k)]).",
    ),
    (
        "unknown_keyword",
        "init_process_group was called with a keyword torch's does not take",
        "torch.distributed.init_process_group takes backend, init_method, timeout, world_size, rank, store, "
        "group_name, pg_options and device_id, nothing else. The address and port go in the init method, "
        "init_method='tcp://HOST:PORT', or in MASTER_ADDR / MASTER_PORT for env:// (the default; torchrun "
        "--master_port sets it), never as keywords. A config whose dist_params are passed on as keywords "
        "(OpenMMLab's dist_params = dict(backend='nccl', port=29501)) hands them to torch unchanged: drop port "
        "from it and set MASTER_PORT instead.",
    ),
    (
        "url_scheme",
        "the init method is not a URL torch has a rendezvous for",
        "init_method takes env:// (the default: MASTER_ADDR / MASTER_PORT from the environment), "
        "tcp://HOST:PORT or file:///shared/path, scheme included: a bare HOST:PORT ('localhost:29500', "
        "'10.0.0.1:23456') is read as a scheme named after the host. Write init_method='tcp://localhost:29500', "
        "or leave init_method out under torchrun.",
    ),
    (
        "group_name_taken",
        "a process group was created with a group_name another group already has",
        "group_name names a group once per process: give each new_group / init_process_group its own name "
        "(or none: torch numbers them), and create a named group once (not on every call of the function that "
        "builds it: keep the group it returns and reuse it).",
    ),
    (
        "group_gone",
        "a process group handle that is not a live group of this rank: destroyed already, or a group this rank "
        "is not a member of",
        "destroy_process_group(group) ends a group once: call it once at the end (a framework that destroys the "
        "group itself, then the script again, is the usual double), and use no collective, get_rank / "
        "get_backend or new_group on a group after it. new_group returns a placeholder to ranks not in its "
        "ranks: call collectives and get_backend on a group only from its members (if rank in ranks: ...).",
    ),
    (
        "bad_device_id",
        "device_id is not one accelerator with an index: a CPU device, or a device type without an index",
        "device_id binds the group to one GPU: init_process_group(..., device_id=torch.device('cuda', LOCAL_RANK)) "
        "with LOCAL_RANK = int(os.environ['LOCAL_RANK']), not torch.device('cuda'). torch refuses any CPU device "
        "there: on a machine without GPUs (where torch.accelerator gives none and the script picks "
        "torch.device('cpu')), leave device_id out: init_process_group(backend='gloo'), or pass "
        "device_id=device only when device.type != 'cpu'.",
    ),
)


def _refused_here(hits: list[Hit], ctx: Context) -> bool:
    return refused(_CLASSES)(
        [h for h in hits if "ipv6_port" not in h.facts or "torch" in h.facts.get("frame_packages", ())], ctx
    )


INIT_CALL = Recogniser(
    # torch/distributed/distributed_c10d.py init_process_group, _check_valid_timeout, new_group, new_subgroups,
    # split_group; rendezvous.py
    kind="process_group_args",
    title="a process group created with arguments torch refuses",
    templates=(
        "torch:trying-to-initialize-the-default-process",
        "torch:rank-parameter-missing",
        "torch:world-size-parameter-missing",
        "torch:port-number-missing",
        "torch:port-must-have-value-from-to",
        "torch:cannot-specify-both-init-method-and",
        "torch:world-size-must-be-positive-if",
        "torch:rank-must-be-non-negative-if",
        "torch:expected-timeout-argument-to-be-of",
        "torch:init-process-group-device-id-parameter",
        "torch:please-use-device-id-with-index",  # torch 2.8+: the same check, reworded
        "torch:the-custom-backend-string-argument-is",  # a 'device:backend' string torch cannot parse
        # new_group / split_group / new_subgroups* (torch 2.13; torch 1.x-2.x new_group: "The new group's rank
        # should be within the the world_size set by init_process_group")
        "torch:the-new-group-world-size-should",
        "torch:rank-is-out-of-range-valid",
        "torch:the-split-group-size-should-be",
        # rendezvous.py: rendezvous()'s argument types, a URL that carries rank/world_size beside the arguments,
        # a tcp:// URL without a host
        "torch:url-must-be-string",
        "torch:rank-must-be-an-integer",
        "torch:world-size-must-be-an-integer",
        "torch:the-url-has-node-specific-arguments",
        "torch:hostname-cannot-be-none",
        "torch_cpp:the-split-group-size-should-be",
        "torch:the-arg-group-size-must-not",
        "torch:the-world-size-must-be-divisible",
        "torch:ranks-list-must-not-contain-duplicate",
        "torch:the-split-group-cannot-have-duplicate",
        "torch:rank-has-appeared-in-both-subgroup",
        # the backend name and 'device:backend' strings (distributed_c10d.py Backend, BackendConfig, the parser of
        # backend strings; _new_process_group_helper's AssertionError for a name no plugin registered)
        "torch:unknown-c10d-backend-type",
        "torch:unknown-backend-specify-device-backend-string",
        "torch:invalid-device-backend-pairing-in-expected",
        "torch:invalid-device-backend-pairing",
        "torch:duplicate-device-type-in-backend-string",
        "torch:duplicate-device-type-in-backend-string-2",
        # CPython's TypeError (Objects/call.c) for a keyword init_process_group does not take (torch 2.13:
        # backend, init_method, timeout, world_size, rank, store, group_name, pg_options, device_id), e.g. a
        # framework config's dist_params passed on as keywords; device_id and pg_options, keywords of newer
        # releases only, are the versions disagreeing and are not read here
        "system:python-unexpected-keyword-argument",
        # distributed_c10d.py: new_group's name taken; a destroyed (or non-member's) group handle used again
        # rendezvous.py: an init_method whose scheme has no handler (a bare HOST:PORT, a misspelt scheme); the
        # schemes a build may lack (env, tcp) are backend_unavailable's
        "torch:no-rendezvous-handler-for",
        "torch:the-specified-group-name-has-already",
        "torch:invalid-process-group-specified",
        "torch:invalid-process-group-specified-or-has",
        "torch:group-is-not-registered-please-create",
        # CPython's urllib (SplitResult.port), which rendezvous.py's tcp:// handler reads the URL's port with: a
        # port text holding colons is the rest of an IPv6 address written without brackets (tcp://fd00::1:29500)
        "system:urllib-port-not-integer",
    ),
    anchors=(
        "trying to initialize the default process group twice",
        "rank parameter missing",
        "world size parameter missing",
        "port number missing",
        "`url` must be a string. ",
        "`rank` must be an integer. ",
        "`world_size` must be an integer. ",
        "has node-specific arguments(rank, world_size) already",
        "hostname cannot be None",
        "port must have value from 0 to 65535",
        "Cannot specify both init_method and store",
        "must be positive if using store",
        "must be non-negative if using store",
        "Expected timeout argument to be of type datetime.timedelta",
        "init_process_group device_id parameter must be an accelerator with an index",
        "Please use a device_id with index.",
        "The custom backend string argument is invalid:",
        "new group's world size should be less or equal to the world size set by init_process_group",
        "new group's rank should be within the",
        "is out of range. Valid ranks are 0 to",
        "split group's size should be",
        "must not exceed the world size",
        "must be divisible by 'group_size=",
        "ranks list must not contain duplicate entries",
        "the split group cannot have duplicate ranks",
        "has appeared in both subgroup",
        "Unknown c10d backend type",
        "Specify a 'device:backend' string",
        "Invalid device:backend pairing",
        "Duplicate device type ",
        "init_process_group() got an unexpected keyword argument",
        "No rendezvous handler for ",
        "The specified group name has already been created",
        "Invalid process group specified",
        "is not registered, please create group with torch.distributed.new_group API",
        "Port could not be cast to integer value as",
    ),
    # the URL checks only as rendezvous.py words them, after the init method's scheme
    match=R(
        r"(?P<twice>trying to initialize the default process group twice!?)|"
        r"(?P<url_missing>(?:tcp|file)://\s?rendezvous: (?:rank parameter|world size parameter|port number) missing|"
        r"AssertionError: hostname cannot be None)|"
        r"(?P<bad_port>port must have value from 0 to 65535 but was -?\d+)|"
        # Python 3.12's urllib printed its f-string's placeholder unfilled ("as {port!r}: 'f3:03::d:52001'")
        r"(?P<ipv6_port>Port could not be cast to integer value as (?:\{port!r\}: )?'[0-9A-Fa-f]*:[0-9A-Fa-f:]*')|"
        r"(?P<bad_type>`(?:url|rank|world_size)` must be (?:a string|an integer)\. [^\n]{0,80})|"
        r"(?P<url_and_args>The url: \S{1,200} has node-specific arguments\(rank, world_size\) already)|"
        r"(?P<store_and_url>Cannot specify both init_method and store)|"
        r"(?P<store_ranks>(?:world_size must be positive|rank must be non-negative) if using store)|"
        r"(?P<bad_timeout>Expected timeout argument to be of type datetime\.timedelta, got [^\n]{1,60})|"
        r"(?P<bad_device_id>init_process_group device_id parameter must be an accelerator with an index|Please use a "
        r"device_id with index\.)|"
        r"(?P<group_ranks>[Tt]he new group's world size should be less or equal to the world size set by "
        r"init_process_group|[Tt]he new group's rank should be within the (?:the )?world_size set by "
        r"init_process_group|Rank -?\d+ is out of range\. Valid ranks are 0 to \d+ \(world_size=\d+\)|the split "
        r"group's size should be (?:less or equal to|no larger than) the world_size set by init_process_group|The "
        r"arg 'group_size' \(\d+\) must not exceed the world size \(\d+\)|The world size \(\d+\) must be divisible "
        r"by 'group_size=\d+')|"
        r"(?P<unknown_backend>Unknown c10d backend type \w{1,40}|The custom backend string argument is invalid: "
        r"[^\n]{0,80}|Unknown backend '[^'\n]{0,40}'\. Specify a "
        r"'device:backend' string|Invalid device:backend pairing[: ][^\n]{0,100}|Duplicate device type '?\w{1,20}'?"
        r"\s{0,40}in backend string[^\n]{0,80})|"
        r"(?P<unknown_keyword>init_process_group\(\) got an unexpected keyword argument ['\u2018\u2019]"
        r"(?!(?:device_id|pg_options)['\u2018\u2019])\w{1,60}['\u2018\u2019])|"
        r"(?P<url_scheme>No rendezvous handler for (?!(?:env|tcp|file)://)[^\s/]{1,60}://)|"
        r"(?P<group_name_taken>The specified group name has already been created, please use a different group "
        r"name)|"
        r"(?P<group_gone>(?<![\w.\x22'])Invalid process group specified(?: or has been destroyed\.)?|Group [^\n]{1,120} is "
        r"not registered, please create group with torch\.distributed\.new_group API)|"
        r"(?P<group_duplicates>ranks list must not contain duplicate entries, got [^\n]{1,120}|the split group "
        r"cannot have duplicate ranks|Rank \d+ has appeared in both subgroup [^\n]{1,160})"
    ),
    # every message names its own cause ("timeout" in the timedelta check is the argument's name, not a timeout
    # that happened): certain whenever the match read which check refused the call
    # (an unbracketed IPv6 address is certain only under torch's frames: another library's URL fails the same way)
    confirm=_refused_here,
    # the first row's fix (TWICE_FIX) when no row was read; the messages are short: never cut
    describe=describe_refusal(_CLASSES, "init_process_group was called wrongly", limit=400),
)


RECOGNISERS = (INIT_CALL,)
