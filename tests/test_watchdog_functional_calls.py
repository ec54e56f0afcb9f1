"""The watchdog's call log (`torchdoctor.hang.calls`) notes torch's functional collectives too: tensor
parallelism's and DTensor's, which never pass through ``torch.distributed``'s functions. Before, a TP MLP with
rank 1 asleep before its forward was named right only from the flight recorder; with the recorder off
(``TORCH_FR_BUFFER_SIZE=0``) the report said only "never reached a functional collective of tensor parallelism
or DTensor (wait_tensor)", without the collective or its line. Now the call log says the same as the recorder:
the collective, its size, and the user's line in the model's forward."""

import textwrap

import pytest
import torch
import torch.distributed._functional_collectives as funcol
from test_watchdog import kept_folder, line_with

from torchdoctor.distributed import functional
from torchdoctor.hang import calls, functional_calls

# pytorch/examples' distributed/tensor_parallelism MLP (ColwiseParallel then RowwiseParallel), smaller; rank 1
# asleep before its forward at step 3, so rank 0 waits for RowwiseParallel's all-reduce of step 3's output
TP_HANG = textwrap.dedent(
    """
    import time

    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


    class ToyModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.in_proj = torch.nn.Linear(16, 32)
            self.relu = torch.nn.ReLU()
            self.out_proj = torch.nn.Linear(32, 16)

        def forward(self, x):
            return self.out_proj(self.relu(self.in_proj(x)))


    dist.init_process_group("gloo")
    rank = dist.get_rank()
    mesh = init_device_mesh("cpu", (dist.get_world_size(),), mesh_dim_names=("tp",))
    model = parallelize_module(ToyModel(), mesh, {"in_proj": ColwiseParallel(), "out_proj": RowwiseParallel()})
    for step in range(10):
        torch.manual_seed(step)
        x = torch.rand(4, 16)
        if rank == 1 and step == 3:
            time.sleep(60)  # rank 1 stuck before its forward
        model(x).sum().backward()
    """
)


@pytest.fixture
def ring(tmp_path):
    """A call log in ``tmp_path`` with the functional collectives wrapped, on a one-rank gloo group; the
    module's own functions put back afterwards."""
    originals = {name: getattr(funcol, name) for name in functional.collectives(funcol)}
    calls.open_ring(tmp_path / "rank0.calls")
    functional_calls.record_functional_calls(funcol)
    try:
        yield tmp_path / "rank0.calls"
    finally:
        calls._ring.clear()
        for name, original in originals.items():
            setattr(funcol, name, original)
        functional_calls._wrapped.clear()


@pytest.mark.usefixtures("one_rank")
def test_a_functional_all_reduce_on_a_mesh_dimension_is_noted_with_its_group_size_and_the_users_line(ring):
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))

    def forward(x):
        return funcol.all_reduce(x, "sum", (mesh, 0)).wait()  # as DTensor calls it: (mesh, dimension)

    forward(torch.ones(4, 2))
    forward(torch.ones(4, 2))
    group = mesh.get_group(0).group_name
    first, second = calls.read_calls(ring)[group]
    assert (second.op, second.shape, second.dtype) == ("all_reduce", [4, 2], "float32")
    assert second.first == second.last == first.first + 1
    assert (second.frames[-1].file, second.frames[-1].function) == (__file__, "forward")
    assert second.frames[-1].line == forward.__code__.co_firstlineno + 1
    # the group's count as the hang finds it: the newest call noted is the rank's newest collective
    calls.write_counts(ring.with_suffix(".counts"))
    assert calls.read_counts(ring.with_suffix(".counts")) == {group: second.last}


def test_a_tp_hang_with_the_flight_recorder_off_names_the_collective_and_line_from_the_call_log(
    cli, tmp_path
):
    script = tmp_path / "tp_hang.py"
    script.write_text(TP_HANG)
    result = cli(
        "launch", "--nproc-per-node", "2", "--watchdog", "3", str(script),
        env={"TORCH_FR_BUFFER_SIZE": "0"}, timeout=100,
    )  # fmt: skip
    with kept_folder(result):
        report = result.stderr[result.stderr.index("torchdoctor: hang: no progress") :]
    forward, sleep = line_with(script, "return self.out_proj("), line_with(script, "time.sleep(60)")
    assert (
        f"rank 1 never entered all_reduce #8 [4, 16] Float ({script}:{forward} in forward), which rank 0 "
        f"entered: rank 1 is in <module> ({script}:{sleep})." in report
    ), report
    assert f"Culprit: rank(s) 1 at {script}:{sleep}; rank(s) 0 wait because of it." in report, report
