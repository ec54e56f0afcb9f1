"""CUDA tensors sent over torch.distributed.rpc without a TensorPipe device map (tensorpipe_agent.cpp's
getDevicesForTensors), and the device maps init_rpc refuses: `log.rpc_device_map`, with the map keyed by the peer's
name as the fix. The remote error comes back retyped as its repr on the line under RPC's "On WorkerInfo(...):"
header, at the start of a line: the message itself, not a source line (kinds/refusal_table._RAISE_LINE)."""

from __future__ import annotations

from explaining import explained, read


def test_the_real_log_a_device_map_keyed_by_the_own_worker_name():
    # pytorch/pytorch#54560 (train 7070): the map was set with the worker's own name, not the destination's
    found = read("7070.txt", "rpc_device_map", "certain")
    assert "set_device_map" in found.fix and "peer's" in found.fix, found.fix


def test_the_current_wording_request_device_mapping_as_an_exception_line():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in run\n'
        "    fut = rpc.rpc_async('worker1', step, args=(x.cuda(),))\n"
        "RuntimeError: TensorPipe RPC backend only supports CPU tensors by default, please move your tensors to CPU "
        "before sending them over RPC, or call `set_device_map` on `TensorPipeRpcBackendOptions` to explicitly "
        "configure device mapping. Request device mapping is not available for destination worker1\n"
    )
    assert found.id == "log.rpc_device_map", found.summary
    assert "sent over RPC to worker1" in found.summary, found.summary
    assert "set_device_map('worker1', {0: 1})" in found.fix, found.fix


def test_a_source_line_quoting_the_message_is_still_not_the_message():
    found = explained(
        '  File "agent.py", line 9, in send\n'
        '    raise RuntimeError("TensorPipe RPC backend only supports CPU tensors by default")\n'
        "KeyError: 'worker1'\n"
    )
    assert found.id != "log.rpc_device_map", found.summary


def test_an_unknown_remote_error_is_named_not_rpcs_header():
    """Nothing known: the unrecognised finding names the remote worker's error under RPC's header line, not the
    header alone (first_failure._REMOTE_REPR)."""
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "t.py", line 5, in <module>\n'
        '    rpc.rpc_sync("worker1", f)\n'
        "RuntimeError: On WorkerInfo(id=1, name=worker1):\n"
        "ValueError('the frobnicator is empty')\n"
        "Traceback (most recent call last):\n"
        '  File "/x/torch/distributed/rpc/internal.py", line 204, in _run_function\n'
        "    result = python_udf.func(*python_udf.args, **python_udf.kwargs)\n"
        "ValueError: the frobnicator is empty\n"
    )
    assert found.id == "log.unrecognised", found.summary
    assert "On WorkerInfo(id=1, name=worker1): ValueError('the frobnicator is empty')" in found.summary, (
        found.summary
    )
