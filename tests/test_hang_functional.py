"""A rank of a tensor-parallel run waiting for its peers is in a collective: the hang report's words for it.

Found with a TP MLP (pytorch/examples' tensor_parallel_example.py shape, 2 gloo ranks) under `launch --watchdog`,
rank 1 asleep before its forward: the culprit was named (the flight recorder's all-reduce), but rank 0, waiting in
the all-reduce's `wait_tensor`, was "not in a collective; in __call__ (torch/_ops.py)". The frames are those
rank 0's stack showed (torch 2.13), innermost last.
"""

from torchdoctor.hang.places import collective_of, where_it_is
from torchdoctor.hang.source import Frame
from torchdoctor.hang.stacks import RankStack
from torchdoctor.stragglers import functional

SITE = "/venv/lib/python3.11/site-packages/torch"
FUNCOL = f"{SITE}/distributed/_functional_collectives.py"
WAITING = [
    Frame("tp_hang.py", 39, "<module>"),
    Frame("tp_hang.py", 32, "main"),
    Frame(FUNCOL, 1155, "__torch_dispatch__"),
    Frame(f"{SITE}/utils/_pytree.py", 1754, "tree_map_only"),
    Frame(FUNCOL, 1143, "unwrap"),
    Frame(FUNCOL, 1115, "trigger_wait"),
    # the straggler watch's timing wrapper, where the watch is on: no call of torchdoctor's own
    Frame(functional.__file__, 116, "wait_tensor"),
    Frame(FUNCOL, 142, "wait_tensor"),
    Frame(f"{SITE}/_ops.py", 1279, "__call__"),
]


def test_a_rank_in_a_functional_collectives_wait_is_waiting_in_a_collective():
    said, shown = where_it_is(RankStack(0, frames=WAITING))
    assert said == "waiting in a functional collective of tensor parallelism or DTensor (wait_tensor)", said
    assert shown[0] == Frame("tp_hang.py", 32, "main")


def test_the_functional_all_reduce_itself_is_named_so_not_as_torch_distributed_all_reduce():
    calling = [*WAITING[:2], Frame(f"{SITE}/distributed/tensor/parallel/style.py", 300, "_prepare_output_fn"),
               Frame(FUNCOL, 200, "all_reduce")]  # fmt: skip
    assert collective_of(calling) == "a functional collective of tensor parallelism or DTensor (all_reduce)"
    # near miss: torch.distributed's own all_reduce keeps its name
    plain = [*WAITING[:2], Frame(f"{SITE}/distributed/distributed_c10d.py", 2800, "all_reduce")]
    assert collective_of(plain) == "torch.distributed.all_reduce"
