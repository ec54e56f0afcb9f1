"""pytorch/examples' FSDP2 example on a machine without GPUs: it picks torch.device('cpu') where torch.accelerator
has none and passes it as init_process_group's device_id, which torch refuses for any CPU device. Read from a
real process on this torch."""

import io
import textwrap

from rank_runner import run_script

from torchdoctor.explain.diagnose import explain


def _run(script: str) -> str:
    done = run_script(["-c", script], timeout=60)
    assert done.returncode != 0, done.stdout + done.stderr
    return done.stdout + done.stderr


DEVICE_ID_CPU = textwrap.dedent(
    """
    import socket, torch, torch.distributed as dist

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    device = torch.device("cpu")  # what pytorch/examples' FSDP2 example picks where torch.accelerator has none
    dist.init_process_group(
        backend="gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=1, rank=0, device_id=device
    )
    """
)


def test_device_id_of_a_cpu_device_says_to_leave_it_out_on_a_machine_without_gpus():
    log = _run(DEVICE_ID_CPU)
    found = explain(["-"], stdin=io.BytesIO(log.encode()))[0]
    assert found.id == "log.process_group_args", (found.summary, log[-2000:])
    assert "a CPU device" in found.summary, found.summary
    assert "leave device_id out" in found.fix and "device.type != 'cpu'" in found.fix, found.fix
