"""DeviceMesh, DTensor placements, views across shards, tensor-parallel plans and context parallelism refused by
torch (kinds/device_mesh_usage.py, dtensor_placements.py, dtensor_views.py, tensor_parallel_plan.py,
context_parallel.py), produced for real on a one-rank gloo group and a 1-device CPU mesh; and near-misses that are
other kinds."""

from __future__ import annotations

import warnings

import pytest
import torch
from explaining import certain_saying as reads
from explaining import explained, traceback_of
from torch import nn
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import Partial, Replicate, Shard, distribute_module, distribute_tensor
from torch.distributed.tensor.experimental import context_parallel
from torch.distributed.tensor.parallel import ColwiseParallel, PrepareModuleInput, parallelize_module

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_a_mesh_on_a_device_with_an_index(one_rank):
    reads(
        traceback_of(lambda: init_device_mesh("cpu:0", (1,))),
        "device_mesh_usage",
        ["cpu:0"],
        ["'cuda', not 'cuda:0'", "set_device"],
    )


def test_a_flattened_name_the_mesh_already_has(one_rank):
    mesh = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    reads(
        traceback_of(lambda: mesh["dp", "tp"]._flatten("dp")),
        "device_mesh_usage",
        ["dp already exists for submesh"],
        ["_flatten('dp_cp')"],
    )


def test_a_mesh_from_no_groups(one_rank):
    reads(
        traceback_of(lambda: DeviceMesh.from_group([], "cpu")),
        "device_mesh_usage",
        ["Expects at least one ProcessGroup"],
        ["from_group", "mesh_dim_names"],
    )


def test_distributing_a_dtensor_again(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    sharded = distribute_tensor(torch.randn(4, 4), mesh, [Shard(0)])
    reads(
        traceback_of(lambda: distribute_tensor(sharded, mesh, [Replicate()])),
        "dtensor_placements",
        ["(Shard(dim=0),)", "[Replicate()]"],
        ["redistribute(mesh, placements)", "parallelize_module first"],
    )


def test_distributing_a_computed_tensor(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    computed = torch.randn(4, requires_grad=True) * 2
    reads(
        traceback_of(lambda: distribute_tensor(computed, mesh, [Replicate()])),
        "dtensor_placements",
        ["leaf tensors"],
        ["DTensor.from_local"],
    )


def test_redistributing_to_partial(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    sharded = distribute_tensor(torch.randn(4), mesh, [Shard(0)])
    reads(
        traceback_of(lambda: sharded.redistribute(mesh, [Partial()])),
        "dtensor_placements",
        ["S(0) to P(sum)"],
        ["Replicate() or Shard(d)"],
    )


def test_sharding_a_dimension_the_tensor_lacks(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    reads(
        traceback_of(lambda: distribute_tensor(torch.randn(4), mesh, [Shard(2)])),
        "dtensor_placements",
        ["Sharding dim 2 greater than tensor ndim 1"],
        ["Shard(0) for a 1-D bias"],
    )


def test_distributing_a_module_twice(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    module = nn.Linear(2, 2)
    distribute_module(module, mesh)
    reads(
        traceback_of(lambda: distribute_module(module, mesh)),
        "dtensor_placements",
        ["only be called once"],
        ["apply it once per module"],
    )


def test_colwise_parallel_on_a_convolution(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    reads(
        traceback_of(lambda: parallelize_module(nn.Conv1d(2, 2, 1), mesh, ColwiseParallel())),
        "tensor_parallel_plan",
        ["ColwiseParallel currently only support nn.Linear"],
        ["PrepareModuleInput", "nn.Linear and nn.Embedding only"],
    )


def test_a_plan_given_as_a_list(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    reads(
        traceback_of(lambda: parallelize_module(nn.Linear(2, 2), mesh, [ColwiseParallel()])),
        "tensor_parallel_plan",
        ["<class 'list'> found"],
        ["{'attention.wq': ColwiseParallel()"],
    )


def test_a_plan_key_that_matches_no_submodule(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallelize_module(nn.Sequential(nn.Linear(2, 2)), mesh, {"lin": ColwiseParallel()})
    said = next(str(w.message) for w in caught if "could not be resolved" in str(w.message))
    reads(
        f"/usr/lib/python3/site-packages/torch/distributed/tensor/parallel/api.py:120: UserWarning: {said}\n",
        "tensor_parallel_plan",
        ["Parallelize plan key 'lin'"],
        ["named_modules()", "left unsharded"],
    )


def test_input_layouts_of_another_length_than_the_inputs(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    module = nn.Linear(2, 2)
    parallelize_module(
        module,
        mesh,
        PrepareModuleInput(
            input_layouts=(Shard(0), Shard(0)), desired_input_layouts=(Replicate(), Replicate())
        ),
    )
    reads(
        traceback_of(lambda: module(torch.randn(2, 2))),
        "tensor_parallel_plan",
        ["module inputs and input_layouts"],
        ["one layout per positional input", "None for an input"],
    )


def test_loss_parallel_on_a_two_dimensional_mesh_from_its_text():
    # torch/distributed/tensor/parallel/loss.py: needs a 2-D mesh of two processes or more
    reads(
        "ValueError: loss_parallel() with reduction='mean' is only supported on one-dimensional DeviceMesh; got "
        "mesh with ndim=2. Use reduction='sum' or 'none' instead.\n",
        "tensor_parallel_plan",
        ["ndim=2"],
        ["Shard(-1)", "reduction='sum'"],
    )


def test_unbinding_along_the_sharded_dimension(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    sharded = distribute_tensor(torch.randn(4, 6), mesh, [Shard(1)])
    reads(
        traceback_of(lambda: sharded.unbind(1)),
        "dtensor_sharded_view",
        ["unbind along the sharded dimension 1"],
        ["redistribute that dimension to Replicate()"],
    )


def test_a_reshape_across_an_uneven_shard_from_its_text():
    # _ops/_view_ops.py: needs a mesh of two processes or more to be uneven
    reads(
        "RuntimeError: Cannot flatten unevenly sharded tensor: dimension 1 (size 5) is not evenly divisible by mesh "
        "dimension 0 (size 2). Please redistribute the tensor before this operation.\n",
        "dtensor_sharded_view",
        ["dimension 1 (size 5)", "(size 2)"],
        ["n_heads // tp_size", "redistribute"],
    )


def test_context_parallel_buffers_and_their_sequence_dims(one_rank):
    mesh = init_device_mesh("cpu", (1,))
    query = torch.randn(1, 2, 8, 4)

    def shard_two_dims_for_one_buffer():
        with context_parallel(mesh, buffers=[query], buffer_seq_dims=[2, 1]):
            pass

    reads(
        traceback_of(shard_two_dims_for_one_buffer),
        "context_parallel_attention",
        ["`seq_dims` must have the same number of elements as `buffers`"],
        ["buffer_seq_dims=[1, 1, 1]"],
    )


def test_context_parallel_on_the_math_kernel_from_its_text():
    # _context_parallel/_attention.py on a GPU whose SDPA picked another kernel
    reads(
        "NotImplementedError: CP only supports flash attention and memory efficient attention now.\n",
        "context_parallel_attention",
        ["flash attention"],
        ["SDPBackend.FLASH_ATTENTION", "attn_implementation='sdpa'"],
    )


# near misses
def test_a_mesh_bigger_than_the_world_is_device_mesh_config():
    found = explained(
        "RuntimeError: Mesh should not be bigger than default world size 4, but found 8 ranks!\n",
    )
    assert found.id == "log.device_mesh_config", found.id


def test_mixed_tensor_and_dtensor_is_dtensor_mixed_operands():
    found = explained(
        "RuntimeError: aten.add.Tensor: got mixed torch.Tensor and DTensor, need to convert all\n"
    )
    assert found.id == "log.dtensor_mixed_operands", found.id


def test_an_op_without_a_sharding_rule_is_dtensor_unsupported_op():
    found = explained(
        "NotImplementedError: Operator aten.nonzero.default does not have a sharding strategy registered.\n"
    )
    assert found.id == "log.dtensor_unsupported_op", found.id


# torch 2.0's torch/distributed/_tensor/sharding_prop.py words the same refusal "DistributedTensor rule"
def test_torch_2_0s_wording_of_an_op_without_a_rule_is_dtensor_unsupported_op():
    found = explained(
        "NotImplementedError: Operator aten.native_layer_norm.default does not have a DistributedTensor rule "
        "registered.\n"
    )
    assert found.id == "log.dtensor_unsupported_op", found.id
    assert "aten.native_layer_norm.default" in found.summary


# torch 2.3-2.8's refusal of the whole N-D mesh, and 2.0-2.1's of a module that is not nn.Linear
@pytest.mark.parametrize(
    ("line", "words"),
    [
        (
            "ValueError: Tensor Parallel only accepts a 1D DeviceMesh, but found 2D!If you have a 2-D or N-D "
            'device_mesh, consider passing in device_mesh["tp"]',
            "mesh['tp']",
        ),
        (
            "AssertionError: Expect a torch.nn.Linear module but received <class 'torch.nn.modules.conv.Conv2d'>!",
            "nn.Linear and nn.Embedding only",
        ),
    ],
)
def test_older_tensor_parallel_refusals_are_tensor_parallel_plan(line, words):
    found = explained(line + "\n")
    assert found.id == "log.tensor_parallel_plan", found.summary
    assert words in found.fix
