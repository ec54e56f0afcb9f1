"""Catalog templates of the paths a distributed run goes through, mapped to kinds from the code that prints them
(issue 19): torch.distributed's own argument and state checks, DeviceMesh, pipelining's schedules, torch.cuda's
memory fraction, the rest of DDP's "marked ready twice" message, and NCCL's root check. Each case is the line as its
source prints it, its placeholders filled with the values that source puts there, raised as it raises it; the near
misses share their words and are not the failure.
"""

from __future__ import annotations

import pytest
from explaining import explained, filled

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

# (template id, values for its placeholders, how the line starts, kind, words of the fix)
CASES = [
    # torch/distributed/distributed_c10d.py: new_subgroups, split_group, shrink_group, destroy_process_group
    ("torch:the-arg-group-size-must-be", ("0",), "ValueError: ", "c10d_call_refused", ["LOCAL_WORLD_SIZE"]),
    (
        "torch:the-split-group-cannot-be-empty",
        (),
        "ValueError: ",
        "c10d_call_refused",
        ["split_ranks=[[0, 1]"],
    ),
    (
        "torch:rank-at-index-is-out-of",
        ("4", "0", "4", "3"),
        "ValueError: ",
        "c10d_call_refused",
        ["ranks_to_exclude"],
    ),
    (
        "torch:process-group-cannot-be-none",
        (),
        "AssertionError: ",
        "c10d_call_refused",
        ["if dist.is_initialized()", "twice"],
    ),
    # torch/csrc/distributed/c10d/ProcessGroup.cpp splitGroup, Backend.hpp, Functional.cpp get_process_group
    (
        "torch_cpp:split-ranks-cannot-be-empty-please",
        (),
        "RuntimeError: ",
        "c10d_call_refused",
        ["non-empty"],
    ),
    (
        "torch_cpp:split-ranks-should-not-have-duplicates",
        (),
        "RuntimeError: ",
        "c10d_call_refused",
        ["naming a rank once"],
    ),
    (
        "torch_cpp:requested-device-type-for-splitgroup-is",
        (),
        "RuntimeError: ",
        "c10d_call_refused",
        ["cpu:gloo,cuda:nccl"],
    ),
    (
        "torch_cpp:backend-does-not-support-shrink",
        ("gloo",),
        "RuntimeError: ",
        "c10d_call_refused",
        ["NCCL 2.27"],
    ),
    (
        "torch_cpp:argument-group-name-must-be-either",
        (),
        "RuntimeError: all_reduce",
        "c10d_call_refused",
        ["group.group_name"],
    ),
    # torch/distributed/device_mesh.py _MeshEnv.get_current_mesh, under distribute_tensor(device_mesh=None)
    (
        "torch:no-device-mesh-is-currently-active",
        (),
        "RuntimeError: ",
        "device_mesh_usage",
        ["distribute_tensor(t, mesh, [Shard(0)])"],
    ),
    # torch/distributed/tensor/_api.py _dtensor_init_helper, under the DTensor factories (zeros, ones, rand...)
    (
        "torch:mesh-dimension-does-not-match-the",
        (),
        "AssertionError: ",
        "device_mesh_config",
        ["one placement per mesh dimension", "zeros"],
    ),
    # torch/cuda/memory.py set_per_process_memory_fraction
    (
        "torch:invalid-type-for-fraction-argument-must",
        (),
        "TypeError: ",
        "cuda_queries",
        ["Python float from 0 to 1"],
    ),
    (
        "torch:invalid-fraction-value-allowed-range",
        ("50",),
        "ValueError: ",
        "cuda_queries",
        ["0.5, not 1 or 50"],
    ),
    # c10/cuda/CUDAEvent.h: torch.cuda.Event's elapsed_time and record
    (
        "torch_cpp:both-events-must-be-created-with",
        (),
        "ValueError: ",
        "cuda_queries",
        ["torch.cuda.Event(enable_timing=True)"],
    ),
    ("torch_cpp:both-events-must-be-recorded-before", (), "ValueError: ", "cuda_queries", ["end.record()"]),
    (
        "torch_cpp:both-events-must-be-completed-before",
        (),
        "RuntimeError: ",
        "cuda_queries",
        ["end.synchronize()"],
    ),
    (
        "torch_cpp:event-device-does-not-match-recording",
        ("0", "1"),
        "RuntimeError: ",
        "cuda_queries",
        ["torch.cuda.device(i)"],
    ),
    # torch/distributed/pipelining/schedules.py _check_inputs, _Action.from_str; stage.py's metadata inference
    (
        "torch:losses-must-be-list-but-got",
        ("<class 'torch.Tensor'>",),
        "TypeError: ",
        "pipeline_schedules",
        ["losses = []"],
    ),
    (
        "torch:invalid-action-string-should-be-formatted",
        ("2f0",),
        "RuntimeError: ",
        "pipeline_schedules",
        ["'2F0'"],
    ),
    (
        "torch:stage-first-stage-requires-real-tensors",
        ("0", "NoneType"),
        "torch.distributed.pipelining._utils.PipeliningMetadataError: ",
        "pipeline_schedules",
        ["schedule.step(x)"],
    ),
    (
        "torch:stage-loss-fn-and-target-required",
        ("3",),
        "torch.distributed.pipelining._utils.PipeliningMetadataError: ",
        "pipeline_schedules",
        ["loss_fn=", "target="],
    ),
    # torch/distributed/rpc/__init__.py init_rpc; backend_registry.py's TensorPipe device maps; options.py (the maps:
    # rpc_device_map since session 42)
    (
        "torch:argument-backend-must-be-member-of",
        (),
        "TypeError: ",
        "rpc_call_refused",
        ["backend=rpc.BackendType.TENSORPIPE"],
    ),
    (
        "torch:node-has-devices-with-invalid-indices",
        ("worker1", "[device(type='cuda', index=4)]", "4"),
        "ValueError: ",
        "rpc_device_map",
        ["set_device_map('worker1', {0: 1})"],
    ),
    (
        "torch:set-device-map-only-supports-to",
        ("cuda:0", "cuda:1", "cuda:1"),
        "ValueError: ",
        "rpc_device_map",
        ["1-to-1"],
    ),
    # NCCL src/misc/argcheck.cc ArgsCheck, as a WARN line (NCCL_DEBUG=WARN) names the collective
    (
        "nccl:invalid-root-root-should-be-in",
        ("Broadcast", "4", "3"),
        "node1:1234:1290 [0] NCCL WARN ",
        "collective_arguments",
        ["0 to world_size - 1"],
    ),
]

# torch/csrc/distributed/c10d/reducer.cpp Reducer::mark_variable_ready: REDUCER_CHECK joins the pieces of its
# "marked ready twice" message on one line; a log that cut or wrapped it before its first words still shows these
READY_TWICE = [
    "torch_cpp:ddp-does-not-support-such-use",
    "torch_cpp:wrapper-to-figure-out-if-any",
    "torch_cpp:unused-for-unused-parameters-ddp-would",
    "torch_cpp:graph-at-later-point-in-time",
    "torch_cpp:parameters-in-the-model-participate-in",
    "torch_cpp:in-the-model-do-not-change",
]

# the same message's third reason as the reducer prints it, from its "3)" on (a log wrapped at 80 columns)
THIRD_REASON = (
    "3) Incorrect unused parameter detection. The return value of the `forward` function is inspected by the "
    "distributed data parallel wrapper to figure out if any of the module's parameters went unused. For unused "
    "parameters, DDP would not expect gradients from then. However, if an unused parameter becomes part of the "
    "autograd graph at a later point in time (e.g., in a reentrant backward when using `checkpoint`), the gradient "
    "will show up unexpectedly. If all parameters in the model participate in the backward pass, you can disable "
    "unused parameter detection by passing the keyword argument `find_unused_parameters=False` to "
    "`torch.nn.parallel.DistributedDataParallel`. If unused parameters in the model do not change over iterations, "
    "You can try to use _set_static_graph() as a workaround if this module graph does not change during training "
    "loop."
)


@pytest.mark.parametrize(("ident", "values", "start", "kind", "words"), CASES)
def test_the_line_as_its_source_prints_it(ident, values, start, kind, words):
    text = filled(ident, *values)
    assert "{}" not in text and "%s" not in text and "%d" not in text, f"{ident}: a placeholder left unfilled"
    found = explained(f"{start}{text}\n")
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", "certain"), (ident, found.summary)
    assert by_id()[ident].kind == kind
    for word in words:
        assert word in found.fix, (word, found.fix)


@pytest.mark.parametrize("ident", READY_TWICE)
def test_ddps_ready_twice_message_is_read_from_any_of_its_pieces(ident):
    assert by_id()[ident].kind == "ddp_ready_twice"
    found = explained(f"RuntimeError: {by_id()[ident].text} ...\n")
    assert found.id == "log.ddp_ready_twice", found.summary


def test_the_third_reason_alone_is_the_ready_twice_message():
    found = explained(THIRD_REASON + "\n")
    assert found.id == "log.ddp_ready_twice", found.summary
    assert "use_reentrant=False" in found.fix


NEAR_MISSES = [
    # NCCL's own root checks of other releases and torch's (Utils.hpp) are read as they were
    "RuntimeError: ProcessGroupGloo::broadcast: invalid root rank: 4\n",
    # a fraction in a user's own message, and a mesh that is active
    "ValueError: the dropout fraction 1.5 is out of range\n",
    "INFO: device mesh is currently active: DeviceMesh('cuda', [0, 1])\n",
    # a list of losses logged, not refused
    "step 10: losses = [0.52, 0.49]\n",
]


@pytest.mark.parametrize("text", NEAR_MISSES[1:])
def test_near_misses_are_not_read_as_the_refusals(text):
    found = explained(text)
    assert found.id not in {
        "log.c10d_call_refused",
        "log.device_mesh_usage",
        "log.cuda_queries",
        "log.pipeline_schedules",
        "log.collective_arguments",
    }, (text, found.id)


def test_torchs_own_root_check_still_reads_as_before():
    found = explained(NEAR_MISSES[0])
    assert found.id == "log.collective_arguments" and "invalid root rank: 4" in found.summary, found.summary
